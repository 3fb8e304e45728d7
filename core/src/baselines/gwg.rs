//! Gibbs-with-gradients (GWG-1) for binary and categorical states.

use crate::binary::{BinaryChain, BinaryKernel, Rejection, StepError, StepReport};
use crate::categorical::{CategoricalKernel, CategoricalTarget};
use crate::error::LenError;
use crate::ordinal::{CategoricalChain, LabelMove, all_finite};
use crate::random::{open_unit_f64, unit_f64};
use crate::target::{BinaryTarget, FlipMove, TargetError};
use rand_core::Rng;

/// Gibbs-with-gradients with one change per step (Grathwohl et al. 2021).
///
/// * **Binary**: with `d_i = g_i (1 − 2x_i)` (the first-order estimate of `U(x ⊕ e_i) − U(x)`),
///   pick `i` with probability `softmax(d/2)_i`, flip it, and accept with the Metropolis
///   ratio using the pick probability of `i` at the new state.
/// * **Categorical**: the same over all pairs `(i, k)` with `k ≠ x_i`, with
///   `d_{i,k} = g_{i,k} − g_{i,x_i}`.
///
/// The pick weights are `exp(d/2 − max)` in `f32`, summed in `f64`; the draw and the `log q`
/// of the test come from the same numbers ([`log_pick`](Self::log_pick) repeats them). Per
/// step: one target evaluation, `2d` (binary) or `2dS` (categorical) exponentials, two words of
/// the random stream. The chain's proposal-gradient buffer holds the pick weights until the
/// evaluation overwrites it, so no further memory is needed.
///
/// # Examples
///
/// ```
/// use langevin_core::baselines::Gwg;
/// use langevin_core::binary::{BinaryChain, BinaryKernel, ChainStorage};
/// use langevin_core::models::{ConstDims, IsingLattice};
/// use rand_core::SeedableRng;
///
/// let mut model = IsingLattice::<ConstDims<4, 4>>::new(0.3, 0.1, true).unwrap();
/// let mut storage = ChainStorage::<16>::new([0; 16]);
/// let mut chain = BinaryChain::new(storage.buffers(), &mut model).unwrap();
/// let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(3);
/// for _ in 0..100 {
///     Gwg.step(&mut model, &mut chain, &mut rng).unwrap();
/// }
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Gwg;

#[inline(always)]
fn binary_logit(x: u8, g: f32) -> f64 {
    0.5 * f64::from(g) * (1.0 - 2.0 * f64::from(x))
}

#[inline(always)]
fn weight(l: f64, m: f64) -> f32 {
    libm::expf((l - m) as f32)
}

/// Largest of `f(j)` over `0..n` (at least `−∞`).
#[inline(always)]
fn max_of(n: usize, f: impl Fn(usize) -> f64) -> f64 {
    (0..n).fold(f64::NEG_INFINITY, |m, j| {
        let l = f(j);
        if l > m { l } else { m }
    })
}

impl Gwg {
    /// `log` of the probability that a binary step from `x` (gradient `grad`) picks `i`.
    ///
    /// # Errors
    ///
    /// [`LenError`] unless `grad` has the length of `x` and `i < d`.
    pub fn log_pick(x: &[u8], grad: &[f32], i: usize) -> Result<f64, LenError> {
        LenError::check("grad", x.len(), grad.len())?;
        if i >= x.len() {
            return Err(LenError {
                buffer: "index",
                expected: x.len(),
                found: i,
            });
        }
        let logit = |j: usize| match (x.get(j), grad.get(j)) {
            (Some(&xj), Some(&gj)) => binary_logit(xj, gj),
            _ => f64::NEG_INFINITY,
        };
        let m = max_of(x.len(), logit);
        let (mut total, mut wi) = (0.0f64, 0.0f64);
        for j in 0..x.len() {
            let w = f64::from(weight(logit(j), m));
            total += w;
            wi = if j == i { w } else { wi };
        }
        Ok(libm::log(wi / total))
    }

    /// `log` of the probability that a categorical step from `x` (one-hot gradient `grad`, `S`
    /// labels) picks coordinate `i` and label `k` (`k ≠ x_i` and `k < S`; `−∞` otherwise).
    ///
    /// # Errors
    ///
    /// [`LenError`] unless `grad` has `d·S` entries and `i < d`.
    pub fn log_pick_categorical(
        x: &[u16],
        grad: &[f32],
        states: usize,
        i: usize,
        k: u16,
    ) -> Result<f64, LenError> {
        LenError::check("grad", x.len().saturating_mul(states), grad.len())?;
        if i >= x.len() {
            return Err(LenError {
                buffer: "index",
                expected: x.len(),
                found: i,
            });
        }
        if usize::from(k) >= states {
            // Not a label: `i·S + k` would name a pair of the next coordinate.
            return Ok(f64::NEG_INFINITY);
        }
        let target = i * states + usize::from(k);
        let (w, total) = categorical_weights(x, grad, states, None, Some(target));
        Ok(libm::log(w / total))
    }
}

/// The categorical pick weights over the `d·S` pairs (zero for `k = x_i`): writes them to `out`
/// if given, returns the weight of pair `capture` (0 if absent) and the total.
fn categorical_weights(
    x: &[u16],
    grad: &[f32],
    states: usize,
    mut out: Option<&mut [f32]>,
    capture: Option<usize>,
) -> (f64, f64) {
    let s = states.max(1);
    let logit = |p: usize| {
        let (i, k) = (p / s, p % s);
        let c = x.get(i).map_or(0, |&v| usize::from(v));
        match (grad.get(p), grad.get(i * s + c)) {
            (Some(&g), Some(&gc)) if k != c => 0.5 * (f64::from(g) - f64::from(gc)),
            _ => f64::NEG_INFINITY,
        }
    };
    let n = grad.len();
    let m = max_of(n, logit);
    let (mut total, mut captured) = (0.0f64, 0.0f64);
    for p in 0..n {
        let w = weight(logit(p), m);
        if let Some(slot) = out.as_deref_mut().and_then(|o| o.get_mut(p)) {
            *slot = w;
        }
        let w = f64::from(w);
        total += w;
        captured = if Some(p) == capture { w } else { captured };
    }
    (captured, total)
}

/// Inverts the running sum of `weights` at `threshold`; returns the index and its weight
/// (`(keep, NaN)` if nothing is drawn). Branch-free selects.
fn pick(weights: &[f32], threshold: f64) -> (usize, f64) {
    let (mut cum, mut found) = (0.0f64, false);
    let (mut index, mut weight) = (0usize, f64::NAN);
    for (p, &w) in weights.iter().enumerate() {
        let w = f64::from(w);
        cum += w;
        let take = (cum > threshold) & !found;
        index = if take { p } else { index };
        weight = if take { w } else { weight };
        found |= take;
    }
    (index, weight)
}

fn rejected(mut report: StepReport, why: Rejection) -> StepReport {
    report.accepted = false;
    report.log_accept_ratio = f64::NEG_INFINITY;
    report.rejection = Some(why);
    report
}

impl BinaryKernel for Gwg {
    fn step<T, R>(
        &mut self,
        target: &mut T,
        chain: &mut BinaryChain<'_>,
        rng: &mut R,
    ) -> Result<StepReport, StepError<T::Error>>
    where
        T: BinaryTarget + ?Sized,
        R: Rng + ?Sized,
    {
        let d = chain.dim();
        LenError::check("target", d, target.dim())?;
        let u_pick = unit_f64(rng);
        let log_u = libm::log(open_unit_f64(rng));
        // Forward pick weights, kept in the proposal-gradient buffer.
        let (x, grad) = (&*chain.x, &*chain.grad);
        let logit = |j: usize| match (x.get(j), grad.get(j)) {
            (Some(&xj), Some(&gj)) => binary_logit(xj, gj),
            _ => f64::NEG_INFINITY,
        };
        let m = max_of(d, logit);
        let mut total = 0.0f64;
        for (j, w) in chain.grad_proposal.iter_mut().enumerate() {
            *w = weight(logit(j), m);
            total += f64::from(*w);
        }
        let (i, wi) = pick(chain.grad_proposal, u_pick * total);
        let log_q_forward = libm::log(wi / total);
        let mut report = StepReport {
            accepted: false,
            proposed_flips: 1,
            log_accept_ratio: 0.0,
            rejection: None,
            evaluations: 1,
        };
        if !log_q_forward.is_finite() {
            return Ok(rejected(report, Rejection::NonFinite));
        }
        crate::slices::copy(chain.x_proposal, chain.x);
        if let Some(v) = chain.x_proposal.get_mut(i) {
            *v ^= 1;
        }
        if let Some(f) = chain.flipped.first_mut() {
            *f = i as u32;
        }
        let mv = FlipMove {
            from: chain.x,
            to: chain.x_proposal,
            flipped: chain.flipped.get(..1).unwrap_or(&[]),
            from_log_density: chain.log_density,
            from_grad: chain.grad,
        };
        let u_new = match target.log_density_and_grad_after(&mv, chain.grad_proposal) {
            Ok(v) => v,
            Err(e) if e.is_recoverable() => return Ok(rejected(report, Rejection::TargetError)),
            Err(e) => return Err(StepError::Target(e)),
        };
        if !u_new.is_finite() || !all_finite(chain.grad_proposal) {
            return Ok(rejected(report, Rejection::NonFinite));
        }
        let log_q_reverse = Gwg::log_pick(chain.x_proposal, chain.grad_proposal, i)?;
        report.log_accept_ratio = (u_new - chain.log_density) + (log_q_reverse - log_q_forward);
        report.accepted = log_u < report.log_accept_ratio;
        if report.accepted {
            chain.adopt_proposal(u_new);
            target.commit();
        }
        Ok(report)
    }
}

impl CategoricalKernel for Gwg {
    fn step<T, R>(
        &mut self,
        target: &mut T,
        chain: &mut CategoricalChain<'_>,
        rng: &mut R,
    ) -> Result<StepReport, StepError<T::Error>>
    where
        T: CategoricalTarget + ?Sized,
        R: Rng + ?Sized,
    {
        let (d, s) = (chain.dim(), chain.states);
        LenError::check("target", d, target.dim())?;
        LenError::check("states", s, target.states())?;
        let u_pick = unit_f64(rng);
        let log_u = libm::log(open_unit_f64(rng));
        let (_, total) = categorical_weights(
            chain.x,
            chain.grad,
            s,
            Some(&mut *chain.grad_proposal),
            None,
        );
        let (p, wp) = pick(chain.grad_proposal, u_pick * total);
        let log_q_forward = libm::log(wp / total);
        let mut report = StepReport {
            accepted: false,
            proposed_flips: 1,
            log_accept_ratio: 0.0,
            rejection: None,
            evaluations: 1,
        };
        if !log_q_forward.is_finite() {
            return Ok(rejected(report, Rejection::NonFinite));
        }
        // `s ≥ 2` for a valid chain; `max(1)` keeps the division total.
        let (i, k) = (p / s.max(1), (p % s.max(1)) as u16);
        let old = chain.x.get(i).copied().unwrap_or(0);
        crate::slices::copy(chain.x_proposal, chain.x);
        if let Some(v) = chain.x_proposal.get_mut(i) {
            *v = k;
        }
        if let Some(c) = chain.changed.first_mut() {
            *c = i as u32;
        }
        let mv = LabelMove {
            from: chain.x,
            to: chain.x_proposal,
            changed: chain.changed.get(..1).unwrap_or(&[]),
            from_log_density: chain.log_density,
            from_grad: chain.grad,
        };
        let u_new = match target.log_density_and_grad_after(&mv, chain.grad_proposal) {
            Ok(v) => v,
            Err(e) if e.is_recoverable() => return Ok(rejected(report, Rejection::TargetError)),
            Err(e) => return Err(StepError::Target(e)),
        };
        if !u_new.is_finite() || !all_finite(chain.grad_proposal) {
            return Ok(rejected(report, Rejection::NonFinite));
        }
        let (w_back, total_back) = categorical_weights(
            chain.x_proposal,
            chain.grad_proposal,
            s,
            None,
            Some(i * s + usize::from(old)),
        );
        let log_q_reverse = libm::log(w_back / total_back);
        report.log_accept_ratio = (u_new - chain.log_density) + (log_q_reverse - log_q_forward);
        report.accepted = log_u < report.log_accept_ratio;
        if report.accepted {
            chain.adopt_proposal(u_new);
            target.commit();
        }
        Ok(report)
    }
}
