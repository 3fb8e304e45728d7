//! Gibbs-with-gradients (GWG-1) for binary and categorical states.

use crate::chain::Chain;
use crate::domain::{Binary, Categorical, Domain};
use crate::error::{LenError, StepError};
use crate::kernel::{Kernel, Rejection, StepReport, evaluate_proposal, propose_single, settle};
use crate::random::{Pick, open_unit_f64, unit_f64};
use crate::target::Eval;
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
/// use langevin_core::binary::{BinaryChain, ChainStorage, Kernel};
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
    let mut pick = Pick::new(threshold, 0usize);
    for (p, &w) in weights.iter().enumerate() {
        pick.offer(p, f64::from(w));
    }
    let (index, weight, _) = pick.result();
    (index, weight)
}

/// What Gibbs-with-gradients needs of a domain: the pick weights over its single changes, and
/// the probability of picking a change back. Implemented for [`Binary`] and [`Categorical`].
pub trait GwgDomain: Domain {
    /// Writes the forward pick weights of every single change of `x` into `out` (the length of
    /// `grad`) and returns their total.
    fn weights(x: &[Self::Value], grad: &[f32], states: usize, out: &mut [f32]) -> f64;
    /// The coordinate and new value of pick `p`.
    fn decode(p: usize, x: &[Self::Value], states: usize) -> (usize, Self::Value);
    /// `log` of the probability that a step from `y` picks coordinate `i` back to `old`.
    ///
    /// # Errors
    ///
    /// [`LenError`] for mismatched lengths.
    fn log_pick_back(
        y: &[Self::Value],
        grad: &[f32],
        states: usize,
        i: usize,
        old: Self::Value,
    ) -> Result<f64, LenError>;
}

impl GwgDomain for Binary {
    #[inline(always)]
    fn weights(x: &[u8], grad: &[f32], _states: usize, out: &mut [f32]) -> f64 {
        let logit = |j: usize| match (x.get(j), grad.get(j)) {
            (Some(&xj), Some(&gj)) => binary_logit(xj, gj),
            _ => f64::NEG_INFINITY,
        };
        let m = max_of(x.len(), logit);
        let mut total = 0.0f64;
        for (j, w) in out.iter_mut().enumerate() {
            *w = weight(logit(j), m);
            total += f64::from(*w);
        }
        total
    }
    #[inline(always)]
    fn decode(p: usize, x: &[u8], _states: usize) -> (usize, u8) {
        (p, x.get(p).map_or(1, |&v| v ^ 1))
    }
    #[inline(always)]
    fn log_pick_back(
        y: &[u8],
        grad: &[f32],
        _states: usize,
        i: usize,
        _old: u8,
    ) -> Result<f64, LenError> {
        Gwg::log_pick(y, grad, i)
    }
}

impl GwgDomain for Categorical {
    #[inline(always)]
    fn weights(x: &[u16], grad: &[f32], states: usize, out: &mut [f32]) -> f64 {
        categorical_weights(x, grad, states, Some(out), None).1
    }
    #[inline(always)]
    fn decode(p: usize, _x: &[u16], states: usize) -> (usize, u16) {
        // `s ≥ 2` for a valid chain; `max(1)` keeps the division total.
        (p / states.max(1), (p % states.max(1)) as u16)
    }
    #[inline(always)]
    fn log_pick_back(
        y: &[u16],
        grad: &[f32],
        states: usize,
        i: usize,
        old: u16,
    ) -> Result<f64, LenError> {
        let (w, total) =
            categorical_weights(y, grad, states, None, Some(i * states + usize::from(old)));
        Ok(libm::log(w / total))
    }
}

impl<D: GwgDomain> Kernel<D> for Gwg {
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
        let (_, s) = chain.check_target(target)?;
        let u_pick = unit_f64(rng);
        let log_u = libm::log(open_unit_f64(rng));
        // Forward pick weights, kept in the proposal-gradient buffer.
        let total = D::weights(chain.x, chain.grad, s, chain.grad_proposal);
        let (p, wp) = pick(chain.grad_proposal, u_pick * total);
        let log_q_forward = libm::log(wp / total);
        let mut report = StepReport::proposed(false, 1, 0);
        if !log_q_forward.is_finite() {
            report.evaluations = 1;
            return Ok(report.rejected(Rejection::NonFinite));
        }
        let (i, value) = D::decode(p, chain.x, s);
        let old = chain.x.get(i).copied().unwrap_or_default();
        propose_single(chain, i, value);
        let Some(u_new) = evaluate_proposal(target, chain, &mut report)? else {
            return Ok(report);
        };
        let log_q_reverse = D::log_pick_back(chain.x_proposal, chain.grad_proposal, s, i, old)?;
        let log_ratio = (u_new - chain.log_density) + (log_q_reverse - log_q_forward);
        settle(&mut report, true, log_u, log_ratio, u_new, target, chain);
        Ok(report)
    }
}
