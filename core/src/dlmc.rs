//! Discrete Langevin Monte Carlo (DLMC): each coordinate follows its own continuous-time chain
//! with gradient-informed rates for a time `τ`, and the move is Metropolis-adjusted (Sun, Dai,
//! Dai, Zhou & Schuurmans 2023).
//!
//! # Binary states
//!
//! With `δ_i = (1 − 2x_i) g_i` (the first-order estimate of `U(x ⊕ e_i) − U(x)`), coordinate
//! `i` is a two-state chain that flips at rate `λ_i = e^{δ_i/2}` and flips back at rate
//! `λ'_i = e^{−δ_i/2}` (the balancing function `√t`), the gradient held at `x`. Run for time `τ`,
//! it has flipped with probability
//!
//! * [`Solver::Interpolate`] (the exact two-state solution):
//!   `p_i = λ_i/(λ_i + λ'_i) · (1 − e^{−τ(λ_i + λ'_i)}) = σ(δ_i) (1 − e^{−2τ cosh(δ_i/2)})`;
//! * [`Solver::Euler`] (one Euler step of the forward equation): `p_i = min(1, τ λ_i)`.
//!
//! # Categorical states
//!
//! [`CategoricalDlmcProposal`] (Euler only): coordinate `i` moves to label `c ≠ x_i` with
//! probability `τ λ_{i,c}`, `λ_{i,c} = e^{(g_{i,c} − g_{i,x_i})/2}`, the row scaled down to sum
//! to 1 when `τ Σ_c λ_{i,c} > 1`, and stays otherwise. The generator of the `S`-state chain with
//! these rates is not a rank-one update of a multiple of the identity, so there is no closed
//! form like the binary one: the interpolating solver is binary-only.
//!
//! # Drawing and `log q`
//!
//! Each coordinate reads one 32-bit lane of the random stream (two per word, low half first;
//! `⌈d/2⌉` words per draw, as the balanced proposals). The probabilities are quantised to
//! multiples of `2^-32` — a flip happens when the lane is below `⌊p·2^32⌋`; categorical labels
//! take consecutive intervals of the lane — and `log q` is the logarithm of those quantised
//! probabilities, so the Metropolis test is exact for the proposal actually drawn. A move whose
//! quantised probability is 0 is never proposed; one whose reverse has probability 0 is
//! rejected.
//!
//! # Time
//!
//! A fixed `τ` ([`DlmcProposal::new`]), or [`TunedDlmc`]: `log τ` follows a Robbins–Monro
//! recursion toward acceptance 0.574 during the burn-in, is frozen afterwards, and the kernel is
//! then the exact fixed-time one.

use crate::chain::Chain;
use crate::domain::{Binary, Categorical, Domain};
use crate::error::{LenError, ParamError, StepError};
use crate::kernel::{Drawn, Kernel, Proposal, StepReport, advance, push_changed};
use crate::target::Eval;
use rand_core::Rng;

/// `2^32` as an `f64`.
const TWO_POW_32: f64 = 4_294_967_296.0;

/// `ln 2^32`.
const LN_TWO_POW_32: f64 = 22.180_709_777_918_25;

/// The acceptance rate the time is adapted toward during burn-in.
pub const DLMC_TARGET_ACCEPTANCE: f64 = 0.574;

/// How the continuous-time chain of a coordinate is solved over the time `τ`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Solver {
    /// One Euler step of the forward equation: `p = min(1, τλ)`.
    Euler,
    /// The exact solution of the two-state chain (binary states only).
    Interpolate,
}

/// `⌊p·2^32⌋` clamped to `[0, 2^32]` (NaN gives 0).
#[inline(always)]
fn quantise(p: f64) -> u64 {
    let scaled = p * TWO_POW_32;
    if scaled >= TWO_POW_32 {
        1 << 32
    } else if scaled >= 1.0 {
        scaled as u64
    } else {
        0
    }
}

/// `ln(k / 2^32)` for `k ≤ 2^32` (`−∞` for 0).
#[inline(always)]
fn log_quantum(k: u64) -> f64 {
    if k == 0 {
        f64::NEG_INFINITY
    } else {
        libm::log(k as f64) - LN_TWO_POW_32
    }
}

/// The 32-bit lanes of the stream: two per word, low half first.
struct Lanes {
    word: u64,
    odd: bool,
}

impl Lanes {
    fn new() -> Self {
        Self {
            word: 0,
            odd: false,
        }
    }

    #[inline(always)]
    fn next<R: Rng + ?Sized>(&mut self, rng: &mut R) -> u64 {
        let lane = if self.odd {
            self.word >> 32
        } else {
            self.word = rng.next_u64();
            self.word & 0xffff_ffff
        };
        self.odd = !self.odd;
        lane
    }
}

/// A proposal with a time `τ` that [`TunedDlmc`] adapts.
pub trait TimedProposal<D: Domain>: Proposal<D> + Sized + Copy {
    /// The time `τ`.
    fn time(&self) -> f64;
    /// The same proposal with time `τ`.
    ///
    /// # Errors
    ///
    /// [`ParamError::OutOfRange`] unless `τ` is finite and `> 0`.
    fn with_time(&self, time: f64) -> Result<Self, ParamError>;
    /// `Σ` of the rates out of the chain's state (the expected number of moves per unit time,
    /// to first order), where the adapted time starts.
    fn total_rate(chain: &Chain<'_, D>) -> f64;
}

fn check_time(time: f64) -> Result<(), ParamError> {
    if time.is_finite() && time > 0.0 {
        Ok(())
    } else {
        Err(ParamError::OutOfRange {
            name: "time",
            value: time,
        })
    }
}

/// The DLMC proposal on binary states (see the [module](self)).
///
/// # Examples
///
/// ```
/// use langevin_core::binary::{BinaryChain, ChainStorage};
/// use langevin_core::dlmc::{DlmcProposal, Solver};
/// use langevin_core::kernel::Dmala;
/// use langevin_core::models::{ConstDims, IsingLattice};
/// use rand_core::SeedableRng;
///
/// let mut model = IsingLattice::<ConstDims<4, 4>>::new(0.3, 0.1, true).unwrap();
/// let mut storage = ChainStorage::<16>::new([0; 16]);
/// let mut chain = BinaryChain::new(storage.buffers(), &mut model).unwrap();
/// let kernel = Dmala::new(DlmcProposal::new(Solver::Interpolate, 0.2).unwrap());
/// let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(4);
/// for _ in 0..100 {
///     kernel.step(&mut model, &mut chain, &mut rng).unwrap();
/// }
/// assert!(DlmcProposal::new(Solver::Euler, 0.0).is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DlmcProposal {
    solver: Solver,
    time: f64,
}

impl DlmcProposal {
    /// The proposal with this solver and time `τ`.
    ///
    /// # Errors
    ///
    /// [`ParamError::OutOfRange`] unless `τ` is finite and `> 0`.
    pub fn new(solver: Solver, time: f64) -> Result<Self, ParamError> {
        check_time(time)?;
        Ok(Self { solver, time })
    }

    /// The solver.
    pub fn solver(&self) -> Solver {
        self.solver
    }

    /// The time `τ`.
    pub fn time(&self) -> f64 {
        self.time
    }

    /// The flip probability of a coordinate with first-order difference `δ`, before
    /// quantisation.
    pub fn flip_probability(&self, delta: f64) -> f64 {
        let half = 0.5 * delta;
        match self.solver {
            Solver::Euler => {
                let p = libm::exp(libm::log(self.time) + half);
                if p < 1.0 { p } else { 1.0 }
            }
            Solver::Interpolate => {
                // λ + λ' = e^{δ/2} + e^{−δ/2}; an infinite sum gives e^{−∞} = 0.
                let total = libm::exp(half) + libm::exp(-half);
                crate::math::sigmoid(delta) * -libm::expm1(-self.time * total)
            }
        }
    }

    /// The quantised flip threshold of coordinate `i` (`k` with flip probability `k/2^32`).
    #[inline(always)]
    fn threshold(&self, x: u8, g: f32) -> u64 {
        let delta = f64::from(g) * (1.0 - 2.0 * f64::from(x));
        quantise(self.flip_probability(delta))
    }

    /// `log q(to | from)` with gradient `grad_from` at `from`: the logarithm of the quantised
    /// probabilities the draw uses.
    ///
    /// # Errors
    ///
    /// [`LenError`] unless the three slices have the same length.
    pub fn log_q(&self, from: &[u8], grad_from: &[f32], to: &[u8]) -> Result<f64, LenError> {
        LenError::check("grad", from.len(), grad_from.len())?;
        LenError::check("to", from.len(), to.len())?;
        let mut total = 0.0f64;
        for ((&x, &g), &y) in from.iter().zip(grad_from).zip(to) {
            let k = self.threshold(x, g);
            total += log_quantum(if x == y { (1 << 32) - k } else { k });
        }
        Ok(total)
    }
}

impl Proposal<Binary> for DlmcProposal {
    fn draw<R: Rng + ?Sized>(
        &self,
        c: &mut Chain<'_, Binary>,
        rng: &mut R,
        with_log_q: bool,
    ) -> Result<Drawn, LenError> {
        let d = c.x.len();
        LenError::check("grad", d, c.grad.len())?;
        let mut lanes = Lanes::new();
        let (mut count, mut log_q) = (0usize, 0.0f64);
        for (i, ((&x, &g), y)) in
            c.x.iter()
                .zip(c.grad.iter())
                .zip(c.x_proposal.iter_mut())
                .enumerate()
        {
            let k = self.threshold(x, g);
            let flip = lanes.next(rng) < k;
            *y = x ^ u8::from(flip);
            if with_log_q {
                log_q += log_quantum(if flip { k } else { (1 << 32) - k });
            }
            if flip {
                push_changed(c.changed, &mut count, i);
            }
        }
        Ok(Drawn::hamming(count, log_q))
    }

    fn reverse_log_q(&self, c: &mut Chain<'_, Binary>) -> Result<f64, LenError> {
        self.log_q(c.x_proposal, c.grad_proposal, c.x)
    }
}

impl TimedProposal<Binary> for DlmcProposal {
    fn time(&self) -> f64 {
        self.time
    }
    fn with_time(&self, time: f64) -> Result<Self, ParamError> {
        Self::new(self.solver, time)
    }
    fn total_rate(chain: &Chain<'_, Binary>) -> f64 {
        chain
            .x
            .iter()
            .zip(chain.grad.iter())
            .map(|(&x, &g)| libm::exp(0.5 * f64::from(g) * (1.0 - 2.0 * f64::from(x))))
            .sum()
    }
}

/// The DLMC proposal on categorical states, Euler solver (see the [module](self)). Uses the
/// chain's scratch row for one coordinate's rates.
///
/// # Examples
///
/// ```
/// use langevin_core::dlmc::CategoricalDlmcProposal;
/// assert!(CategoricalDlmcProposal::new(0.5).is_ok());
/// assert!(CategoricalDlmcProposal::new(f64::NAN).is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CategoricalDlmcProposal {
    time: f64,
    log_time: f64,
}

impl CategoricalDlmcProposal {
    /// The proposal with time `τ`.
    ///
    /// # Errors
    ///
    /// [`ParamError::OutOfRange`] unless `τ` is finite and `> 0`.
    pub fn new(time: f64) -> Result<Self, ParamError> {
        check_time(time)?;
        Ok(Self {
            time,
            log_time: libm::log(time),
        })
    }

    /// The time `τ`.
    pub fn time(&self) -> f64 {
        self.time
    }

    /// Fills `row` with coordinate `i`'s quantised cumulative thresholds: `row[c]` is the end
    /// of label `c`'s interval of the lane (label `x_i` has an empty interval; the stay
    /// interval is what is left above the largest end). Returns that largest end.
    #[inline(always)]
    fn thresholds(&self, x: u16, grad_row: &[f32], row: &mut [f64]) -> u64 {
        let here = usize::from(x);
        let gx = grad_row.get(here).map_or(0.0, |&g| f64::from(g));
        let mut top = f64::NEG_INFINITY;
        for (c, (r, &g)) in row.iter_mut().zip(grad_row).enumerate() {
            let l = if c == here {
                f64::NEG_INFINITY
            } else {
                0.5 * (f64::from(g) - gx)
            };
            *r = l;
            top = if l > top { l } else { top };
        }
        let mut sum = 0.0f64;
        for r in row.iter_mut() {
            *r = libm::exp(*r - top);
            sum += *r;
        }
        // τ Σ λ > 1: the row is scaled to sum to 1, and the coordinate always moves.
        let log_total = self.log_time + top + libm::log(sum);
        let (scale, offset) = if log_total > 0.0 {
            (1.0 / sum, 0.0)
        } else {
            (1.0, self.log_time + top)
        };
        let factor = libm::exp(offset);
        let mut cum = 0.0f64;
        let mut end = 0u64;
        for r in row.iter_mut() {
            cum += *r * scale * factor;
            end = quantise(cum);
            *r = end as f64;
        }
        end
    }

    /// `log` of the quantised probability of moving coordinate `i` from `x` to `y`, given its
    /// thresholds.
    #[inline(always)]
    fn log_move(row: &[f64], last: u64, x: u16, y: u16) -> f64 {
        if x == y {
            return log_quantum((1 << 32) - last);
        }
        let c = usize::from(y);
        let end = row.get(c).map_or(0, |&e| e as u64);
        let start = match c.checked_sub(1) {
            Some(b) => row.get(b).map_or(0, |&e| e as u64),
            None => 0,
        };
        log_quantum(end.saturating_sub(start))
    }

    /// `log q(to | from)` with one-hot gradient `grad_from` at `from` (`S` labels), using
    /// `scratch` (`S` entries).
    ///
    /// # Errors
    ///
    /// [`LenError`] for slices of the wrong lengths.
    pub fn log_q(
        &self,
        from: &[u16],
        grad_from: &[f32],
        states: usize,
        to: &[u16],
        scratch: &mut [f64],
    ) -> Result<f64, LenError> {
        let d = from.len();
        LenError::check("grad", d.saturating_mul(states), grad_from.len())?;
        LenError::check("to", d, to.len())?;
        LenError::check("scratch", states, scratch.len())?;
        let mut total = 0.0f64;
        for ((&x, &y), g) in from.iter().zip(to).zip(grad_from.chunks(states.max(1))) {
            let last = self.thresholds(x, g, scratch);
            total += Self::log_move(scratch, last, x, y);
        }
        Ok(total)
    }
}

impl Proposal<Categorical> for CategoricalDlmcProposal {
    fn draw<R: Rng + ?Sized>(
        &self,
        c: &mut Chain<'_, Categorical>,
        rng: &mut R,
        with_log_q: bool,
    ) -> Result<Drawn, LenError> {
        let (d, s) = (c.x.len(), c.states);
        LenError::check("grad", d.saturating_mul(s), c.grad.len())?;
        LenError::check("scratch", s, c.scratch.len())?;
        let mut lanes = Lanes::new();
        let (mut count, mut log_q) = (0usize, 0.0f64);
        for (i, ((&x, g), y)) in
            c.x.iter()
                .zip(c.grad.chunks(s.max(1)))
                .zip(c.x_proposal.iter_mut())
                .enumerate()
        {
            let last = self.thresholds(x, g, c.scratch);
            let r = lanes.next(rng);
            // The first label whose interval end lies above the lane; none: stay.
            let mut value = x;
            let mut found = false;
            for (label, &end) in c.scratch.iter().enumerate() {
                let take = !found && r < end as u64;
                value = if take { label as u16 } else { value };
                found |= take;
            }
            *y = value;
            if with_log_q {
                log_q += Self::log_move(c.scratch, last, x, value);
            }
            if value != x {
                push_changed(c.changed, &mut count, i);
            }
        }
        Ok(Drawn::hamming(count, log_q))
    }

    fn reverse_log_q(&self, c: &mut Chain<'_, Categorical>) -> Result<f64, LenError> {
        self.log_q(c.x_proposal, c.grad_proposal, c.states, c.x, c.scratch)
    }
}

impl TimedProposal<Categorical> for CategoricalDlmcProposal {
    fn time(&self) -> f64 {
        self.time
    }
    fn with_time(&self, time: f64) -> Result<Self, ParamError> {
        Self::new(time)
    }
    fn total_rate(chain: &Chain<'_, Categorical>) -> f64 {
        let s = chain.states.max(1);
        let mut total = 0.0f64;
        for (&x, g) in chain.x.iter().zip(chain.grad.chunks(s)) {
            let gx = g.get(usize::from(x)).map_or(0.0, |&v| f64::from(v));
            for (c, &gc) in g.iter().enumerate() {
                if c != usize::from(x) {
                    total += libm::exp(0.5 * (f64::from(gc) - gx));
                }
            }
        }
        total
    }
}

/// Words in [`TunedDlmc::save_words`].
pub const DLMC_TUNER_WORDS: usize = 3;

/// DLMC whose time is adapted during a burn-in, then frozen (a [`Kernel`]).
///
/// The time starts at `initial` or, if `None`, at `e / Σ λ` computed at the chain's state on
/// the first step (about `e` expected moves). After each of the first `burn_in` steps,
/// `log τ ← log τ + (α − ρ*) / (1 + t)^0.6`, `α = min(1, exp(log ratio))` that step's
/// acceptance probability (1 for an empty move, 0 for an invalid one), `ρ*` the target
/// acceptance, `log τ` kept in `[−40, 40]`. The adapted value is stored and used by every later
/// step; after the burn-in the kernel is the exact [`Dmala`](crate::kernel::Dmala) of the
/// fixed-time proposal.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TunedDlmc<P> {
    proposal: P,
    started: bool,
    target_acceptance: f64,
    burn_in: u64,
    steps: u64,
}

impl<P> TunedDlmc<P> {
    /// Adapts `proposal`'s time for `burn_in` steps toward `target_acceptance`; with
    /// `from_rates`, the first step first resets the time to `e / Σ λ` at the chain's state.
    ///
    /// # Errors
    ///
    /// [`ParamError::OutOfRange`] unless `0 < target_acceptance < 1`.
    pub fn new(
        proposal: P,
        from_rates: bool,
        burn_in: u64,
        target_acceptance: f64,
    ) -> Result<Self, ParamError> {
        if !(target_acceptance > 0.0 && target_acceptance < 1.0) {
            return Err(ParamError::OutOfRange {
                name: "target acceptance",
                value: target_acceptance,
            });
        }
        Ok(Self {
            proposal,
            started: !from_rates,
            target_acceptance,
            burn_in,
            steps: 0,
        })
    }

    /// The proposal in use now (after burn-in: the final one).
    pub fn proposal(&self) -> &P {
        &self.proposal
    }

    /// Whether the burn-in is over and the time frozen.
    pub fn is_frozen(&self) -> bool {
        self.steps >= self.burn_in
    }

    /// Everything the kernel changes as it steps (the time, whether it started from the
    /// rates, the steps adapted), as words: what a checkpoint saves so that
    /// [`TunedDlmc::restore_words`] on a kernel built from the same settings continues bit for
    /// bit.
    pub fn save_words<D: Domain>(&self) -> [u64; DLMC_TUNER_WORDS]
    where
        P: TimedProposal<D>,
    {
        [
            self.proposal.time().to_bits(),
            u64::from(self.started),
            self.steps,
        ]
    }

    /// Puts back a state [`TunedDlmc::save_words`] returned.
    ///
    /// # Errors
    ///
    /// [`ParamError::OutOfRange`] for words no kernel could have saved: a time that is not
    /// finite and positive, a flag other than 0 or 1, more steps than the burn-in, or steps
    /// taken before the start (the kernel is then unchanged).
    pub fn restore_words<D: Domain>(
        &mut self,
        words: &[u64; DLMC_TUNER_WORDS],
    ) -> Result<(), ParamError>
    where
        P: TimedProposal<D>,
    {
        let [time, started, steps] = *words;
        let time = f64::from_bits(time);
        let bad = |name: &'static str, value: f64| ParamError::OutOfRange { name, value };
        let proposal = self
            .proposal
            .with_time(time)
            .map_err(|_| bad("saved time", time))?;
        let started = match started {
            0 => false,
            1 => true,
            w => return Err(bad("saved start flag", w as f64)),
        };
        if steps > self.burn_in || (!started && steps > 0) {
            return Err(bad("saved steps", steps as f64));
        }
        self.proposal = proposal;
        self.started = started;
        self.steps = steps;
        Ok(())
    }
}

impl<D: Domain, P: TimedProposal<D>> Kernel<D> for TunedDlmc<P> {
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
        if !self.started {
            let rate = P::total_rate(chain);
            let start = core::f64::consts::E / rate;
            if let Ok(p) = self.proposal.with_time(start) {
                self.proposal = p;
            }
            self.started = true;
        }
        let (report, _) = advance(&self.proposal, true, target, chain, rng)?;
        if let Some(gain) = crate::math::burn_in_gain(&mut self.steps, self.burn_in) {
            let alpha = crate::math::acceptance_probability(report.log_accept_ratio);
            let log_time =
                libm::log(self.proposal.time()) + gain * (alpha - self.target_acceptance);
            if let Ok(p) = self
                .proposal
                .with_time(libm::exp(log_time.clamp(-40.0, 40.0)))
            {
                self.proposal = p;
            }
        }
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantisation_covers_the_ends() {
        assert_eq!(quantise(1.0), 1 << 32);
        assert_eq!(quantise(2.0), 1 << 32);
        assert_eq!(quantise(0.0), 0);
        assert_eq!(quantise(f64::NAN), 0);
        assert_eq!(quantise(0.5), 1 << 31);
        assert_eq!(log_quantum(1 << 32), 0.0);
    }

    #[test]
    fn interpolation_is_the_two_state_solution() {
        let p = DlmcProposal::new(Solver::Interpolate, 0.7).unwrap();
        for delta in [-3.0f64, -0.5, 0.0, 1.0, 4.0] {
            let (l, lb) = ((0.5 * delta).exp(), (-0.5 * delta).exp());
            let want = l / (l + lb) * (1.0 - (-0.7 * (l + lb)).exp());
            assert!((p.flip_probability(delta) - want).abs() < 1e-15);
        }
        let e = DlmcProposal::new(Solver::Euler, 0.7).unwrap();
        assert_eq!(e.flip_probability(100.0), 1.0);
        assert!((e.flip_probability(-1.0) - 0.7 * (-0.5f64).exp()).abs() < 1e-15);
    }
}
