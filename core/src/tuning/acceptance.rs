//! DMALA with its step, expressed as an expected number of changes, tuned toward a target
//! acceptance rate during a burn-in and then frozen.

use crate::binary::FlipProposal;
use crate::categorical::CategoricalProposal;
use crate::chain::Chain;
use crate::domain::{Binary, Categorical, Domain, Ordinal};
use crate::error::{ParamError, StepError};
use crate::kernel::{Dmala, Kernel, Proposal, StepReport};
use crate::math::{FlipMath, Libm};
use crate::ordinal::OrdinalProposal;
use crate::target::Eval;
use rand_core::Rng;

/// The balance of the proposals: `φ(t) = √t`, the discrete Langevin proposal.
const BALANCE: f64 = 0.5;

/// `ln τ` is kept in `[−LOG_SCALE_BOUND, LOG_SCALE_BOUND]`, so that every proposal exists
/// whatever the gradient (a flip mass that overflows or vanishes only saturates the scale).
const LOG_SCALE_BOUND: f64 = 1e4;

/// The largest step an ordinal proposal is given (its scale form needs `τ < 1`).
const MAX_ORDINAL_STEP: f64 = 1e12;

/// A domain whose DMALA proposal has a scale form `τ`, and a flip mass `Z(x)` such that
/// `τ · Z(x)` is about the expected number of changes when `τ` is small.
///
/// With `φ(t) = √t`:
///
/// * **binary**: flip logits `ln τ + δ_i/2`, `δ_i = (1 − 2x_i) g_i`, and
///   `Z(x) = Σ_i e^{δ_i/2}`; DMALA's step is `a = −1/(2 ln τ)`;
/// * **categorical**: logits `ln τ + (g_{i,k} − g_{i,x_i})/2` for `k ≠ x_i` (0 for staying), and
///   `Z(x) = Σ_i Σ_{k≠x_i} e^{(g_{i,k} − g_{i,x_i})/2}`; `a = −1/ln τ`;
/// * **ordinal**: logits `(k − x_i)² ln τ + g_i (k − x_i)/2`, which for small `τ` move a
///   coordinate by one value with probability about `τ e^{±g_i/2}` and farther only with
///   probability `O(τ⁴)`; so `Z(x)` sums `e^{g_i (k − x_i)/2}` over the neighbours
///   `k = x_i ± 1` inside the proposal's support `0..S` (a window always contains them).
///   `a = −1/(2 ln τ)`. The ordinal proposal needs `τ < 1` (a concave logit); larger scales
///   are capped at step `10¹²`.
///
/// Implemented by [`Binary`], [`Ordinal`] and [`Categorical`].
pub trait ScaledDmala: Domain {
    /// `ln Z(x)` at the chain's state and gradient (`−∞` for an empty chain, NaN when the
    /// gradient is not finite).
    fn log_flip_mass(chain: &Chain<'_, Self>) -> f64;

    /// DMALA's step `a` for the scale `ln τ`, where one exists (`τ < 1`): `a = −1/(2 ln τ)`
    /// where the logit is `ln τ + δ/2` (binary and ordinal).
    fn equivalent_step(log_tau: f64) -> Option<f64> {
        (log_tau < 0.0).then(|| -0.5 / log_tau)
    }

    /// The DMALA proposal in scale form, `M` choosing its transcendental functions where it
    /// has any.
    type ScaledProposal<M: FlipMath>: Proposal<Self>;

    /// The proposal of scale `ln τ` (ordinal: with `window`, if any).
    ///
    /// # Errors
    ///
    /// [`ParamError`], not possible for scales the tuner produces.
    fn scaled_proposal<M: FlipMath>(
        log_tau: f64,
        window: Option<u16>,
    ) -> Result<Self::ScaledProposal<M>, ParamError>;

    /// One DMALA step with the proposal of scale `ln τ`; returns the report and the L1 jump.
    ///
    /// # Errors
    ///
    /// As [`Dmala::step`]; [`ParamError`] is not possible for scales the tuner produces.
    fn scaled_step<M, T, R>(
        log_tau: f64,
        window: Option<u16>,
        target: &mut T,
        chain: &mut Chain<'_, Self>,
        rng: &mut R,
    ) -> Result<(StepReport, u64), StepError<T::Error>>
    where
        M: FlipMath,
        T: Eval<Self> + ?Sized,
        R: Rng + ?Sized,
    {
        let proposal = Self::scaled_proposal::<M>(log_tau, window)?;
        Dmala::new(proposal).step_with_jump(target, chain, rng)
    }
}

/// `ln Σ e^{t}` over the terms `f` yields, in two passes (maximum, then the shifted sum) so
/// that no term overflows.
fn log_sum_exp<I: Iterator<Item = f64>>(terms: impl Fn() -> I) -> f64 {
    let mut max = f64::NEG_INFINITY;
    for t in terms() {
        if t.is_nan() {
            return f64::NAN;
        }
        max = if t > max { t } else { max };
    }
    if !max.is_finite() {
        return max;
    }
    let sum: f64 = terms().map(|t| libm::exp(t - max)).sum();
    max + libm::log(sum)
}

/// [`log_sum_exp`] over the terms `terms(x_i, g_i)` of every coordinate, in coordinate order,
/// `g_i` being coordinate `i`'s part of the gradient as `grads` yields it.
fn log_sum_exp_per_value<G, I>(x: &[u16], grads: G, terms: impl Fn(u16, G::Item) -> I) -> f64
where
    G: Iterator + Clone,
    I: IntoIterator<Item = f64>,
{
    log_sum_exp(|| {
        x.iter()
            .zip(grads.clone())
            .flat_map(|(&xi, g)| terms(xi, g))
    })
}

impl ScaledDmala for Binary {
    fn log_flip_mass(chain: &Chain<'_, Self>) -> f64 {
        log_sum_exp(|| {
            chain.x.iter().zip(chain.grad.iter()).map(|(&xi, &gi)| {
                let sign = 1.0 - 2.0 * f64::from(xi);
                BALANCE * sign * f64::from(gi)
            })
        })
    }

    type ScaledProposal<M: FlipMath> = FlipProposal<'static, M>;

    fn scaled_proposal<M: FlipMath>(
        log_tau: f64,
        _window: Option<u16>,
    ) -> Result<FlipProposal<'static, M>, ParamError> {
        FlipProposal::<M>::with_log_scale(log_tau, BALANCE)
    }
}

impl ScaledDmala for Ordinal {
    fn log_flip_mass(chain: &Chain<'_, Self>) -> f64 {
        let last = chain.states.saturating_sub(1);
        log_sum_exp_per_value(chain.x, chain.grad.iter(), |xi, &gi| {
            let half = BALANCE * f64::from(gi);
            let down = (xi > 0).then_some(-half);
            let up = (usize::from(xi) < last).then_some(half);
            down.into_iter().chain(up)
        })
    }

    type ScaledProposal<M: FlipMath> = OrdinalProposal<'static>;

    fn scaled_proposal<M: FlipMath>(
        log_tau: f64,
        window: Option<u16>,
    ) -> Result<OrdinalProposal<'static>, ParamError> {
        let step = Self::equivalent_step(log_tau).map_or(MAX_ORDINAL_STEP, |a| {
            if a < MAX_ORDINAL_STEP {
                a
            } else {
                MAX_ORDINAL_STEP
            }
        });
        let p = OrdinalProposal::new(step, BALANCE)?;
        window.map_or(Ok(p), |w| p.windowed(w))
    }
}

impl ScaledDmala for Categorical {
    fn log_flip_mass(chain: &Chain<'_, Self>) -> f64 {
        let s = chain.states.max(1);
        log_sum_exp_per_value(chain.x, chain.grad.chunks(s), |xi, row| {
            let current = usize::from(xi);
            let gc = f64::from(row.get(current).copied().unwrap_or(0.0));
            row.iter()
                .enumerate()
                .filter(move |&(k, _)| k != current)
                .map(move |(_, &gk)| BALANCE * (f64::from(gk) - gc))
        })
    }

    fn equivalent_step(log_tau: f64) -> Option<f64> {
        (log_tau < 0.0).then(|| -1.0 / log_tau)
    }

    type ScaledProposal<M: FlipMath> = CategoricalProposal<'static>;

    fn scaled_proposal<M: FlipMath>(
        log_tau: f64,
        _window: Option<u16>,
    ) -> Result<CategoricalProposal<'static>, ParamError> {
        CategoricalProposal::with_log_scale(log_tau, BALANCE)
    }
}

/// Settings of [`AcceptanceTuner`]; the defaults are the benchmark suite's rule.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct AcceptanceSettings {
    /// The expected number of changes `n` tuning starts from (default 3).
    pub initial_changes: f64,
    /// The acceptance rate tuned toward (default 0.574).
    pub target_acceptance: f64,
    /// The gain `c` of `n ← max(n_min, n + c (acc − target))` (default 3).
    pub gain: f64,
    /// The floor `n_min` of `n` (default 1).
    pub min_changes: f64,
    /// Tuning steps (the burn-in); the scale freezes when they are spent (default 1 000).
    pub budget: u64,
    /// Window for ordinal proposals (default none).
    pub window: Option<u16>,
}

impl Default for AcceptanceSettings {
    fn default() -> Self {
        Self {
            initial_changes: 3.0,
            target_acceptance: 0.574,
            gain: 3.0,
            min_changes: 1.0,
            budget: 1_000,
            window: None,
        }
    }
}

impl AcceptanceSettings {
    /// Checks every field.
    ///
    /// # Errors
    ///
    /// [`ParamError::OutOfRange`] for a target acceptance outside `(0, 1)`, a gain or floor
    /// that is not finite and positive, an initial `n` below the floor or not finite, or a
    /// zero window.
    pub fn validate(&self) -> Result<(), ParamError> {
        let check = |name, value: f64, ok: bool| {
            if ok {
                Ok(())
            } else {
                Err(ParamError::OutOfRange { name, value })
            }
        };
        let t = self.target_acceptance;
        check("target acceptance", t, t > 0.0 && t < 1.0)?;
        check("gain", self.gain, self.gain.is_finite() && self.gain > 0.0)?;
        let floor = self.min_changes;
        check("minimum changes", floor, floor.is_finite() && floor > 0.0)?;
        let n = self.initial_changes;
        check("initial changes", n, n.is_finite() && n >= floor)?;
        check("window", 0.0, self.window != Some(0))
    }
}

/// What the tuner chose and what it spent.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AcceptanceReport {
    /// The expected number of changes `n` (final once frozen).
    pub changes: f64,
    /// `ln τ` in use (`None` before the first step).
    pub log_scale: Option<f64>,
    /// DMALA's step `a` equivalent to `τ`, where one exists (`τ < 1`).
    pub step: Option<f64>,
    /// Mean acceptance probability `min(1, α)` over the tuning steps (NaN before any).
    pub tuning_acceptance: f64,
    /// Steps spent tuning.
    pub tuning_steps: u64,
    /// Whether tuning is over.
    pub frozen: bool,
}

/// Words in [`AcceptanceTuner::save_words`].
pub const ACCEPTANCE_TUNER_WORDS: usize = 6;

/// DMALA with its step tuned toward a target acceptance rate, the rule of the DISCS benchmark
/// suite (Goshvadi et al. 2023): the step is written as the expected number of changes
/// `n = τ · Z(x)` (see [`ScaledDmala`] for `τ` and `Z` in each domain), started at `n = 3` and
/// moved after every tuning step by `n ← max(1, n + 3 (acc − 0.574))`, where
/// `acc = min(1, α)` is that step's acceptance probability; then `τ = n / Z(x)` at the new
/// state. When the budget (the burn-in) is spent, `τ` freezes.
///
/// # Exactness
///
/// Every step is an exact Metropolis–Hastings step for the `τ` in use; once frozen the chain
/// is a time-homogeneous exact DMALA chain (a fixed step `a` when `τ < 1`). Discard the
/// tuning steps.
///
/// `M` chooses the transcendental functions of the binary proposal (see [`FlipMath`]); the
/// other domains ignore it. Use one tuner per chain.
///
/// # Examples
///
/// ```
/// use langevin_core::binary::{BinaryChain, ChainStorage, Kernel};
/// use langevin_core::models::{ConstDims, IsingLattice};
/// use langevin_core::tuning::{AcceptanceSettings, AcceptanceTuner};
/// use rand_core::SeedableRng;
///
/// let mut model = IsingLattice::<ConstDims<5, 5>>::new(0.2, 0.0, true).unwrap();
/// let mut storage = ChainStorage::<25>::new([0; 25]);
/// let mut chain = BinaryChain::new(storage.buffers(), &mut model).unwrap();
/// let mut settings = AcceptanceSettings::default();
/// settings.budget = 500;
/// let mut tuner = AcceptanceTuner::new(settings).unwrap();
/// let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
/// while !tuner.is_frozen() {
///     tuner.step(&mut model, &mut chain, &mut rng).unwrap();
/// }
/// let r = tuner.report_for::<langevin_core::Binary>();
/// assert!(r.changes >= 1.0 && r.tuning_steps == 500);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct AcceptanceTuner<M: FlipMath = Libm> {
    settings: AcceptanceSettings,
    changes: f64,
    log_tau: Option<f64>,
    acceptance_sum: f64,
    tuning_steps: u64,
    math: core::marker::PhantomData<M>,
}

impl AcceptanceTuner<Libm> {
    /// A tuner with these settings, its binary proposals evaluated through `libm`.
    ///
    /// # Errors
    ///
    /// As [`AcceptanceSettings::validate`].
    pub fn new(settings: AcceptanceSettings) -> Result<Self, ParamError> {
        Self::with_math(settings)
    }

    /// A tuner frozen at the scale `ln τ` from the start: a fixed DMALA kernel in scale form.
    ///
    /// # Errors
    ///
    /// As [`AcceptanceSettings::validate`]; [`ParamError::OutOfRange`] for a scale that is not
    /// finite.
    pub fn fixed(log_tau: f64, mut settings: AcceptanceSettings) -> Result<Self, ParamError> {
        if !log_tau.is_finite() {
            return Err(ParamError::OutOfRange {
                name: "log scale",
                value: log_tau,
            });
        }
        settings.budget = 0;
        let mut t = Self::new(settings)?;
        t.log_tau = Some(log_tau.clamp(-LOG_SCALE_BOUND, LOG_SCALE_BOUND));
        Ok(t)
    }
}

impl<M: FlipMath> AcceptanceTuner<M> {
    /// Like [`AcceptanceTuner::new`], choosing the transcendental functions `M` of the binary
    /// proposal.
    ///
    /// # Errors
    ///
    /// As [`AcceptanceSettings::validate`].
    pub fn with_math(settings: AcceptanceSettings) -> Result<Self, ParamError> {
        settings.validate()?;
        Ok(Self::unchecked(settings))
    }

    /// A tuner with the default settings: room in caller buffers that
    /// [`Replicas::new`](crate::tempering::Replicas::new) overwrites before any use.
    pub(crate) fn placeholder() -> Self {
        Self::unchecked(AcceptanceSettings::default())
    }

    fn unchecked(settings: AcceptanceSettings) -> Self {
        Self {
            settings,
            changes: settings.initial_changes,
            log_tau: None,
            acceptance_sum: 0.0,
            tuning_steps: 0,
            math: core::marker::PhantomData,
        }
    }

    /// Whether tuning is over.
    pub fn is_frozen(&self) -> bool {
        self.tuning_steps >= self.settings.budget
    }

    /// Ends tuning now, keeping the current scale.
    pub fn freeze(&mut self) {
        self.settings.budget = self.tuning_steps;
    }

    /// Everything the tuner changes as it steps, as words (the budget included, which
    /// [`AcceptanceTuner::freeze`] shortens): what a checkpoint saves so that
    /// [`AcceptanceTuner::restore_words`] on a tuner built from the same settings continues
    /// bit for bit.
    pub fn save_words(&self) -> [u64; ACCEPTANCE_TUNER_WORDS] {
        [
            self.changes.to_bits(),
            u64::from(self.log_tau.is_some()),
            self.log_tau.unwrap_or(0.0).to_bits(),
            self.acceptance_sum.to_bits(),
            self.tuning_steps,
            self.settings.budget,
        ]
    }

    /// Puts back a state [`AcceptanceTuner::save_words`] returned.
    ///
    /// # Errors
    ///
    /// [`ParamError::OutOfRange`] for words no tuner could have saved (the tuner is then
    /// unchanged).
    pub fn restore_words(
        &mut self,
        words: &[u64; ACCEPTANCE_TUNER_WORDS],
    ) -> Result<(), ParamError> {
        let [changes, has_tau, tau, sum, steps, budget] = *words;
        let (changes, tau, sum) = (
            f64::from_bits(changes),
            f64::from_bits(tau),
            f64::from_bits(sum),
        );
        let bad = |name: &'static str, value: f64| ParamError::OutOfRange { name, value };
        if !(changes.is_finite() && changes > 0.0) {
            return Err(bad("saved changes", changes));
        }
        let log_tau = match has_tau {
            0 => None,
            1 if tau.is_finite() => Some(tau),
            _ => return Err(bad("saved log scale", tau)),
        };
        if !sum.is_finite() {
            return Err(bad("saved acceptance sum", sum));
        }
        self.changes = changes;
        self.log_tau = log_tau;
        self.acceptance_sum = sum;
        self.tuning_steps = steps;
        self.settings.budget = budget;
        Ok(())
    }

    /// The settings (the budget shortened to the steps taken if tuning was ended early).
    pub fn settings(&self) -> &AcceptanceSettings {
        &self.settings
    }

    /// `ln τ` in use (`None` before the first step).
    pub fn log_scale(&self) -> Option<f64> {
        self.log_tau
    }

    /// The choice so far and the tuning spent, with the equivalent step of domain `D`.
    pub fn report_for<D: ScaledDmala>(&self) -> AcceptanceReport {
        AcceptanceReport {
            changes: self.changes,
            log_scale: self.log_tau,
            step: self.log_tau.and_then(D::equivalent_step),
            tuning_acceptance: self.acceptance_sum / self.tuning_steps as f64,
            tuning_steps: self.tuning_steps,
            frozen: self.is_frozen(),
        }
    }

    /// `ln τ = ln n − ln Z(x)` at the chain's state; `fallback` when `Z` is not usable.
    fn scale_at<D: ScaledDmala>(&self, chain: &Chain<'_, D>, fallback: f64) -> f64 {
        let log_z = D::log_flip_mass(chain);
        let log_tau = libm::log(self.changes) - log_z;
        if log_tau.is_nan() {
            fallback
        } else {
            log_tau.clamp(-LOG_SCALE_BOUND, LOG_SCALE_BOUND)
        }
    }
}

impl<D: ScaledDmala, M: FlipMath> Kernel<D> for AcceptanceTuner<M> {
    #[cfg_attr(target_arch = "x86_64", inline(always))]
    fn step<T, R>(
        &mut self,
        target: &mut T,
        chain: &mut Chain<'_, D>,
        rng: &mut R,
    ) -> Result<StepReport, StepError<T::Error>>
    where
        T: Eval<D> + ?Sized,
        R: Rng + ?Sized,
    {
        let log_tau = match self.log_tau {
            Some(t) => t,
            // With no usable flip mass, start as if every term were 1.
            None => self.scale_at(chain, -libm::log(chain.dim().max(1) as f64)),
        };
        self.log_tau = Some(log_tau);
        let (report, _) =
            D::scaled_step::<M, T, R>(log_tau, self.settings.window, target, chain, rng)?;
        if !self.is_frozen() {
            // NaN (an invalid proposal) compares false: acceptance 0.
            let acc = if report.log_accept_ratio >= 0.0 {
                1.0
            } else if report.log_accept_ratio > f64::NEG_INFINITY {
                libm::exp(report.log_accept_ratio)
            } else {
                0.0
            };
            self.acceptance_sum += acc;
            let s = &self.settings;
            // A huge gain can overflow the update: the count stays finite (at most `f64::MAX`).
            let n = self.changes + s.gain * (acc - s.target_acceptance);
            self.changes = n.max(s.min_changes).min(f64::MAX);
            self.log_tau = Some(self.scale_at(chain, log_tau));
            self.tuning_steps += 1;
        }
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_out_of_range_are_refused() {
        let mut s = AcceptanceSettings::default();
        assert!(s.validate().is_ok());
        s.target_acceptance = 1.0;
        assert!(s.validate().is_err());
        s = AcceptanceSettings::default();
        s.initial_changes = 0.5;
        assert!(s.validate().is_err());
        s = AcceptanceSettings::default();
        s.gain = f64::NAN;
        assert!(s.validate().is_err());
        assert!(AcceptanceTuner::fixed(f64::INFINITY, AcceptanceSettings::default()).is_err());
    }

    #[test]
    fn the_equivalent_step_is_dlp_s_where_the_scale_is_below_one() {
        let a = 0.3;
        let log_tau = -0.5 / a;
        assert!((Binary::equivalent_step(log_tau).unwrap() - a).abs() < 1e-15);
        assert!((Categorical::equivalent_step(-1.0 / a).unwrap() - a).abs() < 1e-15);
        assert_eq!(Binary::equivalent_step(0.0), None);
        assert_eq!(Ordinal::equivalent_step(2.0), None);
    }

    #[test]
    fn log_sum_exp_survives_huge_terms() {
        let v = [1e6, 1e6, -3.0];
        let l = log_sum_exp(|| v.iter().copied());
        assert!((l - (1e6 + core::f64::consts::LN_2)).abs() < 1e-9);
        let nan = [0.0, f64::NAN];
        assert!(log_sum_exp(|| nan.iter().copied()).is_nan());
        assert_eq!(log_sum_exp(|| [].iter().copied()), f64::NEG_INFINITY);
    }
}
