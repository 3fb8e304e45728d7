//! Replica exchange (parallel tempering) around DMALA: `R` chains at inverse temperatures
//! `1 = β_1 > β_2 > … > β_R > 0`, each targeting `π^{β_r}`, with swaps between neighbours.
//!
//! * [`Tempered`]: a target with `U` and `∇U` scaled by `β`;
//! * [`Replicas`]: the replicas over caller buffers (chains, ladder, step tuners, swap
//!   counters), stepped one sweep at a time.

use crate::chain::{Chain, all_finite};
use crate::domain::Domain;
use crate::error::{InitError, LenError, ParamError, StepError};
use crate::kernel::{Kernel, StepReport};
use crate::math::{FlipMath, Libm};
use crate::random::open_unit_f64;
use crate::target::{Eval, Move, TargetError};
use crate::tuning::{ACCEPTANCE_TUNER_WORDS, AcceptanceSettings, AcceptanceTuner, ScaledDmala};
use rand_core::Rng;

/// A target tempered by `β`: `U_β = β·U` and `∇U_β = β·∇U`.
///
/// Every evaluation is a full one ([`Eval::eval`] of the inner target, also in place of
/// [`Eval::eval_after`]): the replicas share one inner target, and an incremental update would
/// start from another replica's state. The untempered `U` of the last evaluation is kept
/// ([`last_log_density`](Self::last_log_density)) for the swap test.
#[derive(Debug)]
pub struct Tempered<'t, T: ?Sized> {
    target: &'t mut T,
    beta: f64,
    last: f64,
}

impl<'t, T: ?Sized> Tempered<'t, T> {
    /// `target` at inverse temperature `β`.
    ///
    /// # Errors
    ///
    /// [`ParamError::OutOfRange`] unless `0 < β ≤ 1`.
    pub fn new(target: &'t mut T, beta: f64) -> Result<Self, ParamError> {
        if !(beta > 0.0 && beta <= 1.0) {
            return Err(ParamError::OutOfRange {
                name: "inverse temperature",
                value: beta,
            });
        }
        Ok(Self {
            target,
            beta,
            last: f64::NAN,
        })
    }

    /// The inverse temperature `β`.
    pub fn beta(&self) -> f64 {
        self.beta
    }

    /// The untempered `U` of the last evaluation (NaN before any).
    pub fn last_log_density(&self) -> f64 {
        self.last
    }
}

impl<D: Domain, T: Eval<D> + ?Sized> Eval<D> for Tempered<'_, T> {
    type Error = T::Error;
    fn dim(&self) -> usize {
        self.target.dim()
    }
    fn states(&self) -> usize {
        self.target.states()
    }
    fn eval(&mut self, x: &[D::Value], grad: &mut [f32]) -> Result<f64, T::Error> {
        let u = self.target.eval(x, grad)?;
        self.last = u;
        let b = self.beta as f32;
        for g in grad.iter_mut() {
            *g *= b;
        }
        Ok(self.beta * u)
    }
    fn eval_after(&mut self, mv: &Move<'_, D::Value>, grad: &mut [f32]) -> Result<f64, T::Error> {
        self.eval(mv.to, grad)
    }
    fn commit(&mut self) {}
}

/// Settings of [`Replicas`].
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct LadderSettings {
    /// The smallest inverse temperature of the initial, geometric ladder (default 0.05).
    pub min_beta: f64,
    /// Sweeps of adaptation (the burn-in): the ladder and every replica's step freeze when
    /// they are spent (default 1 000).
    pub budget: u64,
    /// The acceptance rate each replica's step is tuned toward (default 0.574).
    pub target_acceptance: f64,
    /// Window for ordinal proposals (default none).
    pub window: Option<u16>,
}

impl Default for LadderSettings {
    fn default() -> Self {
        Self {
            min_beta: 0.05,
            budget: 1_000,
            target_acceptance: 0.574,
            window: None,
        }
    }
}

impl LadderSettings {
    /// Checks every field.
    ///
    /// # Errors
    ///
    /// [`ParamError::OutOfRange`] for `min_beta ∉ (0, 1)` or a target acceptance or window the
    /// step tuner refuses ([`AcceptanceSettings::validate`]).
    pub fn validate(&self) -> Result<(), ParamError> {
        if !(self.min_beta > 0.0 && self.min_beta < 1.0) {
            return Err(ParamError::OutOfRange {
                name: "smallest inverse temperature",
                value: self.min_beta,
            });
        }
        self.tuner_settings().validate()
    }

    fn tuner_settings(&self) -> AcceptanceSettings {
        AcceptanceSettings {
            target_acceptance: self.target_acceptance,
            budget: self.budget,
            window: self.window,
            ..AcceptanceSettings::default()
        }
    }
}

/// Swap statistics of one neighbouring pair `(r, r+1)`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SwapStats {
    /// Swaps proposed.
    pub attempts: u64,
    /// Swaps accepted.
    pub accepted: u64,
    /// Sum of the acceptance probabilities `min(1, α)` of the proposals.
    pub probability_sum: f64,
}

impl SwapStats {
    /// Mean acceptance probability (NaN before any attempt).
    pub fn rate(&self) -> f64 {
        self.probability_sum / self.attempts as f64
    }
}

/// The caller-owned memory of [`Replicas`] for `R` replicas: `chains`, `betas`,
/// `log_densities` and `tuners` of length `R`, `log_gaps` and `swaps` of length `R − 1`.
/// [`ReplicaScratch::buffers`] gives them for chains at hand, from fixed arrays.
#[derive(Debug)]
pub struct ReplicaBuffers<'r, 'c, D: Domain, M: FlipMath = Libm> {
    /// One chain per replica, all of the same dimension, in ladder order (the first is the
    /// cold chain). Their cached `U` and gradient are recomputed at construction.
    pub chains: &'r mut [Chain<'c, D>],
    /// Room for the inverse temperatures.
    pub betas: &'r mut [f64],
    /// Room for each replica's untempered `U`.
    pub log_densities: &'r mut [f64],
    /// Room for each replica's step tuner (overwritten at construction).
    pub tuners: &'r mut [AcceptanceTuner<M>],
    /// Room for the ladder's parameters `ρ_r = ln(ln β_r − ln β_{r+1})`.
    pub log_gaps: &'r mut [f64],
    /// Room for the swap statistics of each neighbouring pair.
    pub swaps: &'r mut [SwapStats],
}

/// Owned room for the ladder of up to `R` replicas: everything [`ReplicaBuffers`] asks for
/// besides the chains, as fixed arrays (no allocation), for callers that know a bound on the
/// number of replicas.
///
/// # Examples
///
/// ```
/// use langevin_core::binary::{BinaryChain, ChainStorage};
/// use langevin_core::models::{ConstDims, IsingLattice};
/// use langevin_core::tempering::{LadderSettings, Replicas, ReplicaScratch};
/// use rand_core::SeedableRng;
///
/// let mut model = IsingLattice::<ConstDims<4, 4>>::new(0.5, 0.0, true).unwrap();
/// let mut s = [ChainStorage::<16>::new([0; 16]), ChainStorage::<16>::new([0; 16])];
/// let [a, b] = &mut s;
/// let mut chains = [
///     BinaryChain::new(a.buffers(), &mut model).unwrap(),
///     BinaryChain::new(b.buffers(), &mut model).unwrap(),
/// ];
/// // Room for up to four replicas; two are used.
/// let mut scratch = ReplicaScratch::<4>::new();
/// let buffers = scratch.buffers(&mut chains);
/// assert_eq!((buffers.betas.len(), buffers.log_gaps.len()), (2, 1));
/// let mut replicas = Replicas::new(buffers, LadderSettings::default(), &mut model).unwrap();
/// let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
/// replicas.sweep(&mut model, &mut rng).unwrap();
/// assert_eq!(replicas.betas().len(), 2);
/// ```
#[derive(Clone, Debug)]
pub struct ReplicaScratch<const R: usize, M: FlipMath = Libm> {
    betas: [f64; R],
    log_densities: [f64; R],
    tuners: [AcceptanceTuner<M>; R],
    log_gaps: [f64; R],
    swaps: [SwapStats; R],
}

impl<const R: usize, M: FlipMath> ReplicaScratch<R, M> {
    /// Room for up to `R` replicas (its contents are overwritten by [`Replicas::new`]).
    pub fn new() -> Self {
        Self {
            betas: [0.0; R],
            log_densities: [0.0; R],
            tuners: [AcceptanceTuner::placeholder(); R],
            log_gaps: [0.0; R],
            swaps: [SwapStats::default(); R],
        }
    }

    /// The buffers of [`Replicas::new`] for `chains`: the per-replica arrays cut to
    /// `chains.len()` and the per-pair ones to one less. More than `R` chains get the whole
    /// arrays, which [`Replicas::new`] then refuses for their length.
    pub fn buffers<'r, 'c, D: Domain>(
        &'r mut self,
        chains: &'r mut [Chain<'c, D>],
    ) -> ReplicaBuffers<'r, 'c, D, M> {
        let r = chains.len();
        let pairs = r.saturating_sub(1);
        ReplicaBuffers {
            chains,
            betas: prefix(&mut self.betas, r),
            log_densities: prefix(&mut self.log_densities, r),
            tuners: prefix(&mut self.tuners, r),
            log_gaps: prefix(&mut self.log_gaps, pairs),
            swaps: prefix(&mut self.swaps, pairs),
        }
    }
}

impl<const R: usize, M: FlipMath> Default for ReplicaScratch<R, M> {
    fn default() -> Self {
        Self::new()
    }
}

/// The first `n` entries of `s`, or all of them if it is shorter.
fn prefix<T>(s: &mut [T], n: usize) -> &mut [T] {
    let n = n.min(s.len());
    s.get_mut(..n).unwrap_or_default()
}

/// What one sweep did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SweepReport {
    /// The cold chain's DMALA step, with `evaluations` counting every evaluation of the sweep
    /// (all replicas, re-evaluations after swaps and ladder moves).
    pub cold: StepReport,
    /// Swaps accepted in this sweep.
    pub swaps: u32,
    /// Whether the cold chain took part in an accepted swap.
    pub cold_swapped: bool,
}

/// Bounds on `ρ_r`: the gaps in `ln β` stay positive and the whole ladder within
/// `ln β_R ≥ −LOG_BETA_SPAN`.
const LOG_BETA_SPAN: f64 = 30.0;
const MIN_LOG_GAP: f64 = -20.0;

/// Replica exchange around DMALA (Swendsen and Wang 1986; Geyer 1991): `R` chains at inverse
/// temperatures `1 = β_1 > … > β_R > 0`, chain `r` targeting `π^{β_r}` (the target's `U` and
/// `∇U` scaled by `β_r`, see [`Tempered`]) with its own acceptance-targeting DMALA step
/// ([`AcceptanceTuner`]).
///
/// # A sweep
///
/// 1. every replica takes one DMALA step;
/// 2. swaps are proposed between neighbours, the pairs `(1,2), (3,4), …` on even sweeps and
///    `(2,3), (4,5), …` on odd ones, each accepted with probability
///    `min(1, exp((β_r − β_{r+1}) (U(x_{r+1}) − U(x_r))))` (untempered `U`); an accepted swap
///    exchanges the two states, which are then re-evaluated at their new temperatures;
/// 3. during the adaptation budget (the burn-in): each replica's step is tuned toward the
///    target acceptance, and the ladder toward equal swap rates — for each pair just proposed,
///    `ρ_r ← ρ_r + γ_k (α_r − ᾱ)` with `ρ_r = ln(ln β_r − ln β_{r+1})`, `α_r` the pair's
///    acceptance probability, `ᾱ` the mean of the pairs' running rates and `γ_k = (1+k)^{−0.6}`
///    at sweep `k` (a pair swapping more often than the others gets a wider gap). The gaps are
///    kept in `ln β` so that every `β` stays in `(0, 1]`; `β_1 = 1` never moves. Replicas whose
///    `β` moved are re-evaluated.
///
/// # Exactness
///
/// Once frozen, each sweep is a composition of exact kernels for the product law
/// `Π_r π^{β_r}`: DMALA steps on each factor and Metropolis swaps, so the product is invariant
/// and the cold chain's states are draws from `π`. Only they are draws; discard the
/// adaptation sweeps. The swap statistics restart when adaptation ends.
///
/// # Cost
///
/// One full evaluation per replica per sweep, two per accepted swap, and during adaptation one
/// per replica whose `β` moved. Random words: each replica's DMALA step, then one per proposed
/// swap.
///
/// # Examples
///
/// ```
/// use langevin_core::binary::{BinaryChain, ChainStorage};
/// use langevin_core::models::{ConstDims, IsingLattice};
/// use langevin_core::tempering::{LadderSettings, ReplicaBuffers, Replicas, SwapStats, Tempered};
/// use langevin_core::tuning::AcceptanceTuner;
/// use rand_core::SeedableRng;
///
/// let mut model = IsingLattice::<ConstDims<4, 4>>::new(0.5, 0.0, true).unwrap();
/// let mut s = [ChainStorage::<16>::new([0; 16]), ChainStorage::<16>::new([0; 16]),
///              ChainStorage::<16>::new([0; 16])];
/// let [a, b, c] = &mut s;
/// let mut chains = [
///     BinaryChain::new(a.buffers(), &mut model).unwrap(),
///     BinaryChain::new(b.buffers(), &mut model).unwrap(),
///     BinaryChain::new(c.buffers(), &mut model).unwrap(),
/// ];
/// let mut settings = LadderSettings::default();
/// settings.budget = 200;
/// let tuner = AcceptanceTuner::new(Default::default()).unwrap();
/// let (mut betas, mut u, mut tuners) = ([0.0; 3], [0.0; 3], [tuner; 3]);
/// let (mut gaps, mut swaps) = ([0.0; 2], [SwapStats::default(); 2]);
/// let buffers = ReplicaBuffers {
///     chains: &mut chains, betas: &mut betas, log_densities: &mut u,
///     tuners: &mut tuners, log_gaps: &mut gaps, swaps: &mut swaps,
/// };
/// let mut replicas = Replicas::new(buffers, settings, &mut model).unwrap();
/// let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
/// for _ in 0..400 {
///     replicas.sweep(&mut model, &mut rng).unwrap();
/// }
/// assert!(replicas.is_frozen() && replicas.betas()[0] == 1.0);
/// assert!(replicas.betas().windows(2).all(|w| w[1] < w[0] && w[1] > 0.0));
/// ```
#[derive(Debug)]
pub struct Replicas<'r, 'c, D: Domain, M: FlipMath = Libm> {
    chains: &'r mut [Chain<'c, D>],
    betas: &'r mut [f64],
    log_densities: &'r mut [f64],
    tuners: &'r mut [AcceptanceTuner<M>],
    log_gaps: &'r mut [f64],
    swaps: &'r mut [SwapStats],
    settings: LadderSettings,
    sweeps: u64,
}

impl<'r, 'c, D: ScaledDmala, M: FlipMath> Replicas<'r, 'c, D, M> {
    /// The replicas over `buffers`, on a geometric ladder from 1 down to `min_beta`, every
    /// chain re-evaluated at its temperature.
    ///
    /// # Errors
    ///
    /// [`StepError::Param`] for invalid settings or a start that is not finite at its
    /// temperature; [`StepError::Len`] for no replicas, buffers of the wrong lengths or chains
    /// whose dimension or number of values differ from the target's; [`StepError::Target`]
    /// if the target fails.
    pub fn new<T: Eval<D> + ?Sized>(
        buffers: ReplicaBuffers<'r, 'c, D, M>,
        settings: LadderSettings,
        target: &mut T,
    ) -> Result<Self, StepError<T::Error>> {
        settings.validate().map_err(StepError::Param)?;
        let r = buffers.chains.len();
        if r == 0 {
            return Err(StepError::Len(LenError {
                buffer: "replicas",
                expected: 1,
                found: 0,
            }));
        }
        LenError::check("betas", r, buffers.betas.len())?;
        LenError::check("log densities", r, buffers.log_densities.len())?;
        LenError::check("tuners", r, buffers.tuners.len())?;
        LenError::check("log gaps", r - 1, buffers.log_gaps.len())?;
        LenError::check("swaps", r - 1, buffers.swaps.len())?;
        for c in buffers.chains.iter() {
            c.check_target(target)?;
        }
        let tuner =
            AcceptanceTuner::<M>::with_math(settings.tuner_settings()).map_err(StepError::Param)?;
        for t in buffers.tuners.iter_mut() {
            *t = tuner;
        }
        let gap = if r > 1 {
            libm::log(-libm::log(settings.min_beta) / (r - 1) as f64)
        } else {
            0.0
        };
        // Gaps below `e^MIN_LOG_GAP` would round neighbouring temperatures together.
        let gap = if gap > MIN_LOG_GAP { gap } else { MIN_LOG_GAP };
        for g in buffers.log_gaps.iter_mut() {
            *g = gap;
        }
        for s in buffers.swaps.iter_mut() {
            *s = SwapStats::default();
        }
        let mut replicas = Self {
            chains: buffers.chains,
            betas: buffers.betas,
            log_densities: buffers.log_densities,
            tuners: buffers.tuners,
            log_gaps: buffers.log_gaps,
            swaps: buffers.swaps,
            settings,
            sweeps: 0,
        };
        replicas.place_ladder();
        replicas.refresh_all(target, 0)?;
        Ok(replicas)
    }

    /// The inverse temperatures, cold first.
    pub fn betas(&self) -> &[f64] {
        self.betas
    }

    /// The swap statistics of each neighbouring pair (since adaptation ended, once frozen).
    pub fn swaps(&self) -> &[SwapStats] {
        self.swaps
    }

    /// Each replica's step tuner.
    pub fn tuners(&self) -> &[AcceptanceTuner<M>] {
        self.tuners
    }

    /// The cold chain, whose states are the draws.
    pub fn cold(&self) -> Option<&Chain<'c, D>> {
        self.chains.first()
    }

    /// Every replica's chain, cold first.
    pub fn chains(&self) -> &[Chain<'c, D>] {
        self.chains
    }

    /// Sweeps taken.
    pub fn sweeps(&self) -> u64 {
        self.sweeps
    }

    /// Whether adaptation is over.
    pub fn is_frozen(&self) -> bool {
        self.sweeps >= self.settings.budget
    }

    /// The words [`save_words`](Self::save_words) writes for `replicas` replicas: the sweep
    /// count and the adaptation budget, each replica's inverse temperature and tuner, and each
    /// neighbouring pair's log gap and swap statistics.
    pub const fn words_len(replicas: usize) -> usize {
        2 + replicas * (1 + ACCEPTANCE_TUNER_WORDS) + replicas.saturating_sub(1) * 4
    }

    /// Writes the ladder's state besides the replicas' chains (see
    /// [`words_len`](Self::words_len)) into `out`, floats as their bits, for a checkpoint.
    ///
    /// # Errors
    ///
    /// [`LenError`] unless `out` holds exactly [`words_len`](Self::words_len) words.
    pub fn save_words(&self, out: &mut [u64]) -> Result<(), LenError> {
        LenError::check("words", Self::words_len(self.chains.len()), out.len())?;
        let mut words = out.iter_mut();
        let mut put = |w: u64| {
            if let Some(o) = words.next() {
                *o = w;
            }
        };
        put(self.sweeps);
        put(self.settings.budget);
        for (&beta, tuner) in self.betas.iter().zip(self.tuners.iter()) {
            put(beta.to_bits());
            tuner.save_words().into_iter().for_each(&mut put);
        }
        for (&gap, swap) in self.log_gaps.iter().zip(self.swaps.iter()) {
            put(gap.to_bits());
            put(swap.attempts);
            put(swap.accepted);
            put(swap.probability_sum.to_bits());
        }
        Ok(())
    }

    /// Puts back the state [`save_words`](Self::save_words) wrote; the caller then moves
    /// each replica to its saved state with [`restart`](Self::restart). Nothing changes on
    /// error.
    ///
    /// # Errors
    ///
    /// [`ParamError::Len`] for another number of words; [`ParamError::OutOfRange`] for an
    /// inverse temperature outside `(0, 1]`, a non-finite gap, swap statistics that cannot
    /// occur or a tuner state its own restore refuses.
    pub fn restore_words(&mut self, words: &[u64]) -> Result<(), ParamError> {
        let r = self.chains.len();
        LenError::check("words", Self::words_len(r), words.len())?;
        let bad = |name: &'static str, value: f64| ParamError::OutOfRange { name, value };
        let split = words.split_first_chunk::<2>().and_then(|(head, rest)| {
            Some((
                *head,
                rest.split_at_checked(r * (1 + ACCEPTANCE_TUNER_WORDS))?,
            ))
        });
        let Some(([sweeps, budget], (per_replica, per_pair))) = split else {
            return Err(ParamError::Len(LenError {
                buffer: "words",
                expected: Self::words_len(r),
                found: words.len(),
            }));
        };
        let replica = |chunk: &[u64]| {
            chunk
                .split_first()
                .map(|(&beta, tuner)| (f64::from_bits(beta), tuner_words(tuner)))
        };
        let pair = |chunk: &[u64]| match *chunk {
            [gap, attempts, accepted, sum] => Some((
                f64::from_bits(gap),
                SwapStats {
                    attempts,
                    accepted,
                    probability_sum: f64::from_bits(sum),
                },
            )),
            _ => None,
        };
        // Checked first, written after, so that an error leaves everything as it was.
        for (chunk, tuner) in per_replica
            .chunks_exact(1 + ACCEPTANCE_TUNER_WORDS)
            .zip(self.tuners.iter())
        {
            let (beta, words) = replica(chunk).unwrap_or((f64::NAN, [0; ACCEPTANCE_TUNER_WORDS]));
            if !(beta > 0.0 && beta <= 1.0) {
                return Err(bad("inverse temperature", beta));
            }
            let mut trial = *tuner;
            trial.restore_words(&words)?;
        }
        for chunk in per_pair.chunks_exact(4) {
            let Some((gap, swap)) = pair(chunk) else {
                continue;
            };
            if !gap.is_finite() {
                return Err(bad("log gap", gap));
            }
            let sum = swap.probability_sum;
            if swap.accepted > swap.attempts || !(sum >= 0.0 && sum <= swap.attempts as f64) {
                return Err(bad("swap probability sum", sum));
            }
        }
        self.sweeps = sweeps;
        self.settings.budget = budget;
        for ((chunk, tuner), b) in per_replica
            .chunks_exact(1 + ACCEPTANCE_TUNER_WORDS)
            .zip(self.tuners.iter_mut())
            .zip(self.betas.iter_mut())
        {
            if let Some((beta, words)) = replica(chunk) {
                *b = beta;
                tuner.restore_words(&words)?;
            }
        }
        for ((chunk, g), s) in per_pair
            .chunks_exact(4)
            .zip(self.log_gaps.iter_mut())
            .zip(self.swaps.iter_mut())
        {
            if let Some((gap, swap)) = pair(chunk) {
                *g = gap;
                *s = swap;
            }
        }
        Ok(())
    }

    /// Moves replica `r` to the state `x`, evaluated at its temperature. On error it keeps
    /// its state.
    ///
    /// # Errors
    ///
    /// As [`Chain::reset`]; [`InitError::Len`] for a replica that does not exist.
    pub fn restart<T: Eval<D> + ?Sized>(
        &mut self,
        r: usize,
        x: &[D::Value],
        target: &mut T,
    ) -> Result<(), InitError<T::Error>> {
        let n = self.chains.len();
        let (Some(chain), Some(&beta), Some(u)) = (
            self.chains.get_mut(r),
            self.betas.get(r),
            self.log_densities.get_mut(r),
        ) else {
            return Err(InitError::Len(LenError {
                buffer: "replicas",
                expected: r + 1,
                found: n,
            }));
        };
        let mut tempered = Tempered::new(target, beta).map_err(|_| InitError::NonFinite)?;
        chain.reset(x, &mut tempered)?;
        *u = tempered.last_log_density();
        Ok(())
    }

    /// Ends adaptation now: the ladder and the steps freeze, the swap statistics restart.
    pub fn freeze(&mut self) {
        if !self.is_frozen() {
            self.settings.budget = self.sweeps;
        }
        for t in self.tuners.iter_mut() {
            t.freeze();
        }
        for s in self.swaps.iter_mut() {
            *s = SwapStats::default();
        }
    }

    /// One sweep: a DMALA step of every replica, then swaps, then (while adapting) the
    /// ladder's update.
    ///
    /// # Errors
    ///
    /// As [`Kernel::step`] for any replica; [`StepError::Param`] with
    /// [`ParamError::NonFinite`] if, while adapting, a state cannot be evaluated at its new
    /// temperature (a swap that cannot be evaluated is refused instead).
    pub fn sweep<T, R>(
        &mut self,
        target: &mut T,
        rng: &mut R,
    ) -> Result<SweepReport, StepError<T::Error>>
    where
        T: Eval<D> + ?Sized,
        R: Rng + ?Sized,
    {
        let adapting = !self.is_frozen();
        let mut evaluations = 0u32;
        let mut cold = None;
        let parts = self
            .chains
            .iter_mut()
            .zip(self.tuners.iter_mut())
            .zip(self.betas.iter().zip(self.log_densities.iter_mut()));
        for ((chain, tuner), (&beta, u)) in parts {
            let mut tempered = Tempered::new(target, beta).map_err(StepError::Param)?;
            let report = Kernel::step(tuner, &mut tempered, chain, rng)?;
            if report.accepted && report.evaluations > 0 {
                *u = tempered.last_log_density();
            }
            evaluations = evaluations.saturating_add(report.evaluations);
            cold.get_or_insert(report);
        }
        let mut swaps = 0u32;
        let mut cold_swapped = false;
        let first = (self.sweeps % 2) as usize;
        let pairs = self.swaps.len();
        let mut mean_rate = 0.0;
        if adapting {
            let (sum, n) = self.swaps.iter().fold((0.0, 0u32), |(s, n), p| {
                if p.attempts > 0 {
                    (s + p.rate(), n + 1)
                } else {
                    (s, n)
                }
            });
            mean_rate = if n > 0 { sum / f64::from(n) } else { f64::NAN };
        }
        let gain = crate::math::adaptation_gain(self.sweeps);
        let mut i = first;
        while i < pairs {
            let (accepted, probability) = self.try_swap(i, target, rng, &mut evaluations)?;
            if accepted {
                swaps += 1;
                cold_swapped |= i == 0;
            }
            if adapting {
                let reference = if mean_rate.is_nan() {
                    probability
                } else {
                    mean_rate
                };
                if let Some(g) = self.log_gaps.get_mut(i) {
                    let hi = libm::log(LOG_BETA_SPAN / pairs as f64);
                    let moved = *g + gain * (probability - reference);
                    // Written out rather than `clamp`, which panics on crossed bounds.
                    if moved > hi {
                        *g = hi;
                    } else if moved > MIN_LOG_GAP {
                        *g = moved;
                    } else if moved <= MIN_LOG_GAP {
                        *g = MIN_LOG_GAP;
                    }
                }
            }
            i += 2;
        }
        if adapting {
            self.place_ladder();
            self.refresh_all(target, 1).map(|n| {
                evaluations = evaluations.saturating_add(n);
            })?;
            self.sweeps += 1;
            if self.is_frozen() {
                for s in self.swaps.iter_mut() {
                    *s = SwapStats::default();
                }
            }
        } else {
            self.sweeps += 1;
        }
        let mut cold = cold.unwrap_or_default();
        cold.evaluations = evaluations;
        Ok(SweepReport {
            cold,
            swaps,
            cold_swapped,
        })
    }

    /// Proposes the swap of pair `(i, i+1)`; returns whether it was accepted and its
    /// acceptance probability.
    fn try_swap<T, R>(
        &mut self,
        i: usize,
        target: &mut T,
        rng: &mut R,
        evaluations: &mut u32,
    ) -> Result<(bool, f64), StepError<T::Error>>
    where
        T: Eval<D> + ?Sized,
        R: Rng + ?Sized,
    {
        let get = |v: &[f64], k: usize| v.get(k).copied().unwrap_or(f64::NAN);
        let (b0, b1) = (get(self.betas, i), get(self.betas, i + 1));
        let (u0, u1) = (get(self.log_densities, i), get(self.log_densities, i + 1));
        let log_alpha = (b0 - b1) * (u1 - u0);
        let probability = crate::math::acceptance_probability(log_alpha);
        let log_u = libm::log(open_unit_f64(rng));
        // NaN compares false: refused.
        let accepted = log_u < log_alpha && self.exchange(i, target, evaluations)?;
        if let Some(s) = self.swaps.get_mut(i) {
            s.attempts += 1;
            s.accepted += u64::from(accepted);
            s.probability_sum += probability;
        }
        Ok((accepted, probability))
    }

    /// Exchanges the states of replicas `i` and `i+1` and re-evaluates both at their
    /// temperatures. Returns `false` (nothing changed) if either cannot be evaluated there.
    fn exchange<T: Eval<D> + ?Sized>(
        &mut self,
        i: usize,
        target: &mut T,
        evaluations: &mut u32,
    ) -> Result<bool, StepError<T::Error>> {
        let (b0, b1) = match (self.betas.get(i), self.betas.get(i + 1)) {
            (Some(&a), Some(&b)) => (a, b),
            _ => return Ok(false),
        };
        let Some((left, right)) = self
            .chains
            .get_mut(i..i + 2)
            .and_then(|p| p.split_first_mut())
        else {
            return Ok(false);
        };
        let Some(right) = right.first_mut() else {
            return Ok(false);
        };
        // Evaluate each state at the other temperature into the proposal buffers first, so
        // that a failure leaves both replicas as they were.
        *evaluations = evaluations.saturating_add(2);
        let u_left = evaluate_at(left.x, left.grad_proposal, b1, target)?;
        let u_right = evaluate_at(right.x, right.grad_proposal, b0, target)?;
        let (Some(u_left), Some(u_right)) = (u_left, u_right) else {
            return Ok(false);
        };
        for (p, q) in left.x.iter_mut().zip(right.x.iter_mut()) {
            core::mem::swap(p, q);
        }
        // `left` now holds the state that was on the right, evaluated at b0 (cold side).
        core::mem::swap(&mut left.grad_proposal, &mut right.grad_proposal);
        core::mem::swap(&mut left.grad, &mut left.grad_proposal);
        core::mem::swap(&mut right.grad, &mut right.grad_proposal);
        left.log_density = b0 * u_right;
        right.log_density = b1 * u_left;
        if let (Some(a), Some(b)) = (
            self.log_densities.get(i).copied(),
            self.log_densities.get(i + 1).copied(),
        ) {
            if let Some(v) = self.log_densities.get_mut(i) {
                *v = b;
            }
            if let Some(v) = self.log_densities.get_mut(i + 1) {
                *v = a;
            }
        }
        Ok(true)
    }

    /// `β_1 = 1`, `ln β_{r+1} = ln β_r − e^{ρ_r}`.
    fn place_ladder(&mut self) {
        let mut log_beta = 0.0f64;
        let mut gaps = self.log_gaps.iter();
        for b in self.betas.iter_mut() {
            *b = libm::exp(log_beta);
            if let Some(&g) = gaps.next() {
                log_beta -= libm::exp(g);
            }
        }
        if let Some(b) = self.betas.first_mut() {
            *b = 1.0;
        }
    }

    /// Re-evaluates replicas `from..` at their temperatures; returns the evaluations spent.
    fn refresh_all<T: Eval<D> + ?Sized>(
        &mut self,
        target: &mut T,
        from: usize,
    ) -> Result<u32, StepError<T::Error>> {
        let mut n = 0u32;
        let parts = self
            .chains
            .iter_mut()
            .zip(self.betas.iter().zip(self.log_densities.iter_mut()))
            .skip(from);
        for (chain, (&beta, u)) in parts {
            n = n.saturating_add(1);
            let Some(raw) = evaluate_at(chain.x, chain.grad_proposal, beta, target)? else {
                return Err(StepError::Param(ParamError::NonFinite(
                    "log-density at a new temperature",
                )));
            };
            core::mem::swap(&mut chain.grad, &mut chain.grad_proposal);
            chain.log_density = beta * raw;
            *u = raw;
        }
        Ok(n)
    }
}

/// The untempered `U(x)`, writing `β ∇U(x)` into `grad`, exactly as [`Tempered`] computes them;
/// `None` if either is not finite.
fn evaluate_at<D: Domain, T: Eval<D> + ?Sized>(
    x: &[D::Value],
    grad: &mut [f32],
    beta: f64,
    target: &mut T,
) -> Result<Option<f64>, StepError<T::Error>> {
    let mut tempered = Tempered {
        target,
        beta,
        last: f64::NAN,
    };
    match tempered.eval(x, grad) {
        Ok(u) if u.is_finite() && all_finite(grad) => Ok(Some(tempered.last)),
        Ok(_) => Ok(None),
        Err(e) if e.is_recoverable() => Ok(None),
        Err(e) => Err(StepError::Target(e)),
    }
}

/// A tuner's words from a slice of [`ACCEPTANCE_TUNER_WORDS`] (zeros where it is shorter,
/// which the tuner's restore refuses).
fn tuner_words(slice: &[u64]) -> [u64; ACCEPTANCE_TUNER_WORDS] {
    let mut words = [0u64; ACCEPTANCE_TUNER_WORDS];
    for (w, &s) in words.iter_mut().zip(slice) {
        *w = s;
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Binary;

    #[test]
    fn scratch_buffers_fit_the_chains() {
        let mut scratch = ReplicaScratch::<3>::new();
        let b = scratch.buffers::<Binary>(&mut []);
        let lens = [b.betas.len(), b.log_densities.len(), b.tuners.len()];
        assert_eq!(lens, [0; 3]);
        assert_eq!([b.log_gaps.len(), b.swaps.len()], [0; 2]);
    }

    #[test]
    fn prefix_cuts_or_keeps_everything() {
        let mut a = [1, 2, 3];
        assert_eq!(prefix(&mut a, 2), &[1, 2]);
        assert_eq!(prefix(&mut a, 5), &[1, 2, 3]);
        assert!(prefix(&mut a, 0).is_empty());
    }
}
