//! The path auxiliary proposal (PAS) for binary and categorical states.
//!
//! One step draws a path of `L` single-coordinate moves, each independently from the
//! gradient-informed softmax at the current state, applies all of them, and accepts or rejects
//! the end point with the path as an auxiliary variable (Sun, Dai, Xia & Schuurmans 2022).
//!
//! # The moves
//!
//! * **Binary**: a move is an index `i`, drawn with probability `softmax(δ/2)_i`,
//!   `δ_i = (1 − 2x_i) g_i` (the first-order estimate of `U(x ⊕ e_i) − U(x)`); the moves are
//!   flips, so an index drawn twice flips back.
//! * **Categorical**: a move is a pair `(i, k)`, `k ∈ {1, …, S−1}`, that shifts label `x_i` to
//!   `(x_i + k) mod S`, drawn with probability proportional to
//!   `exp((g_{i,c} − g_{i,x_i}) / 2)`, `c = (x_i + k) mod S`: the first-order difference of
//!   moving coordinate `i` to label `c`, halved. A coordinate moved once lands on `c` with the
//!   same probability as a single Gibbs-with-gradients pick; moves of one coordinate compose
//!   (their shifts add modulo `S`), which is what makes the reverse path well defined. For
//!   `S = 2` this is the binary proposal.
//!
//! # The test
//!
//! The weights are computed once, at the start state `x`, with its gradient: the path's
//! moves are independent given `x`. The reverse path from the end point `y` is the same moves
//! with opposite shifts (binary: the same flips), priced by the softmax at `y` with `∇U(y)`,
//! and the end point is accepted with probability
//! `min(1, exp(U(y) − U(x)) · Π_k q_y(reverse move k) / Π_k q_x(move k))`. The map from a
//! path to its reverse is one to one, so the kernel is reversible with respect to `π` for every
//! `L`. A path whose moves cancel proposes `x` itself and counts as accepted.
//!
//! # Cost and randomness
//!
//! One target evaluation, `2·P` exponentials (`P = d` binary, `d·S` categorical) and `L`
//! binary searches per step. A step draws `L` words (one uniform per move, in path order), then
//! one word for the Metropolis uniform.
//!
//! # Buffers
//!
//! The caller owns the cumulative weights (`P` entries of `f64`) and the path (`L` entries of
//! `u32`): [`PathBuffers`]. [`PathAuxiliary`] holds the path length; [`PathKernel`] and
//! [`TunedPathKernel`] join it (or its burn-in adaptation) with borrowed buffers.

use crate::chain::Chain;
use crate::domain::{Binary, Categorical, Domain};
use crate::error::{LenError, ParamError, StepError};
use crate::kernel::{Kernel, StepReport, evaluate_proposal, settle};
use crate::random::{open_unit_f64, unit_f64};
use crate::target::Eval;
use rand_core::Rng;

/// The acceptance rate the path length is adapted toward during burn-in (the benchmark
/// suites' choice for gradient-informed discrete samplers).
pub const PATH_TARGET_ACCEPTANCE: f64 = 0.574;

/// A domain with path moves: [`Binary`] (flips) and [`Categorical`] (label shifts).
pub trait PathDomain: Domain {
    /// The number of moves `P` from a state of `d` coordinates over `s` values (`d` for
    /// binary, `d·s` for categorical states; `None` on overflow).
    fn moves(d: usize, s: usize) -> Option<usize>;
    /// The log-weight of move `m` from `x` with gradient `grad`: half the first-order
    /// difference; `−∞` for a move that changes nothing.
    fn log_weight(x: &[Self::Value], grad: &[f32], s: usize, m: usize) -> f64;
    /// Applies move `m` to `z`.
    fn apply(z: &mut [Self::Value], s: usize, m: usize);
    /// The move that undoes `m`.
    fn reverse(s: usize, m: usize) -> usize;
}

impl PathDomain for Binary {
    #[inline]
    fn moves(d: usize, _s: usize) -> Option<usize> {
        Some(d)
    }
    #[inline]
    fn log_weight(x: &[u8], grad: &[f32], _s: usize, m: usize) -> f64 {
        match (x.get(m), grad.get(m)) {
            (Some(&xi), Some(&gi)) => 0.5 * f64::from(gi) * (1.0 - 2.0 * f64::from(xi)),
            _ => f64::NEG_INFINITY,
        }
    }
    #[inline]
    fn apply(z: &mut [u8], _s: usize, m: usize) {
        if let Some(v) = z.get_mut(m) {
            *v ^= 1;
        }
    }
    #[inline]
    fn reverse(_s: usize, m: usize) -> usize {
        m
    }
}

impl PathDomain for Categorical {
    #[inline]
    fn moves(d: usize, s: usize) -> Option<usize> {
        d.checked_mul(s)
    }
    #[inline]
    fn log_weight(x: &[u16], grad: &[f32], s: usize, m: usize) -> f64 {
        let s = s.max(1);
        let (i, k) = (m / s, m % s);
        let Some(&xi) = x.get(i) else {
            return f64::NEG_INFINITY;
        };
        let from = usize::from(xi);
        let to = (from + k) % s;
        match (grad.get(i * s + to), grad.get(i * s + from)) {
            (Some(&gt), Some(&gf)) if k != 0 => 0.5 * (f64::from(gt) - f64::from(gf)),
            _ => f64::NEG_INFINITY,
        }
    }
    #[inline]
    fn apply(z: &mut [u16], s: usize, m: usize) {
        let s = s.max(1);
        if let Some(v) = z.get_mut(m / s) {
            *v = ((usize::from(*v) + m % s) % s) as u16;
        }
    }
    #[inline]
    fn reverse(s: usize, m: usize) -> usize {
        let s = s.max(1);
        m - m % s + (s - m % s) % s
    }
}

/// The caller-owned memory of a path step.
#[derive(Debug)]
pub struct PathBuffers<'b> {
    /// Room for the cumulative move weights: at least `P` entries (`d` for binary, `d·S` for
    /// categorical chains).
    pub weights: &'b mut [f64],
    /// Room for the path: at least `L` entries.
    pub path: &'b mut [u32],
}

/// The path auxiliary sampler with a fixed path length `L` (see the [module](self)).
///
/// # Examples
///
/// ```
/// use langevin_core::binary::{BinaryChain, ChainStorage, Kernel};
/// use langevin_core::models::{ConstDims, IsingLattice};
/// use langevin_core::path_auxiliary::{PathAuxiliary, PathBuffers};
/// use rand_core::SeedableRng;
///
/// let mut model = IsingLattice::<ConstDims<4, 4>>::new(0.3, 0.1, true).unwrap();
/// let mut storage = ChainStorage::<16>::new([0; 16]);
/// let mut chain = BinaryChain::new(storage.buffers(), &mut model).unwrap();
/// let (mut weights, mut path) = ([0.0f64; 16], [0u32; 4]);
/// let buffers = PathBuffers { weights: &mut weights, path: &mut path };
/// let mut kernel = PathAuxiliary::new(3).unwrap().with_buffers(buffers).unwrap();
/// let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(3);
/// for _ in 0..100 {
///     kernel.step(&mut model, &mut chain, &mut rng).unwrap();
/// }
/// assert!(PathAuxiliary::new(0).is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathAuxiliary {
    length: usize,
}

impl PathAuxiliary {
    /// Paths of `length` moves.
    ///
    /// # Errors
    ///
    /// [`ParamError::OutOfRange`] for a length of 0 or one that does not fit a `u32`.
    pub fn new(length: usize) -> Result<Self, ParamError> {
        if length == 0 || u32::try_from(length).is_err() {
            return Err(ParamError::OutOfRange {
                name: "path length",
                value: length as f64,
            });
        }
        Ok(Self { length })
    }

    /// The path length `L`.
    pub fn length(&self) -> usize {
        self.length
    }

    /// The kernel with these buffers.
    ///
    /// # Errors
    ///
    /// [`ParamError::OutOfRange`] when the path buffer is shorter than `L`.
    pub fn with_buffers(self, buffers: PathBuffers<'_>) -> Result<PathKernel<'_>, ParamError> {
        check_path_buffer(self.length, buffers.path.len())?;
        Ok(PathKernel {
            settings: self,
            buffers,
        })
    }

    /// One step on `chain` with the caller's buffers (see the [module](self)).
    ///
    /// # Errors
    ///
    /// [`StepError::Len`] for a target of another dimension or number of values, a weight
    /// buffer shorter than `P`, a path buffer shorter than `L`, or `P` beyond `u32`;
    /// [`StepError::Target`] for an unrecoverable target error. The chain is unchanged then.
    pub fn step<D, T, R>(
        &self,
        target: &mut T,
        chain: &mut Chain<'_, D>,
        buffers: &mut PathBuffers<'_>,
        rng: &mut R,
    ) -> Result<StepReport, StepError<T::Error>>
    where
        D: PathDomain,
        T: Eval<D> + ?Sized,
        R: Rng + ?Sized,
    {
        let (d, s) = chain.check_target(target)?;
        let too_many = LenError {
            buffer: "moves",
            expected: u32::MAX as usize,
            found: usize::MAX,
        };
        let moves = D::moves(d, s).ok_or(too_many)?;
        if u32::try_from(moves).is_err() {
            return Err(LenError {
                found: moves,
                ..too_many
            }
            .into());
        }
        let len_error = |buffer, expected, found| LenError {
            buffer,
            expected,
            found,
        };
        let weights_len = buffers.weights.len();
        let weights =
            buffers
                .weights
                .get_mut(..moves)
                .ok_or(len_error("weights", moves, weights_len))?;
        let path_len = buffers.path.len();
        let path =
            buffers
                .path
                .get_mut(..self.length)
                .ok_or(len_error("path", self.length, path_len))?;

        // Forward: cumulative weights exp(log w − max) at x, then L independent draws.
        let (x, grad) = (&*chain.x, &*chain.grad);
        let top = max_log_weight::<D>(x, grad, s, moves);
        let mut total = 0.0f64;
        for (m, c) in weights.iter_mut().enumerate() {
            total += libm::exp(D::log_weight(x, grad, s, m) - top);
            *c = total;
        }
        let mut log_q_forward = 0.0f64;
        crate::slices::copy(chain.x_proposal, x);
        for slot in path.iter_mut() {
            let threshold = unit_f64(rng) * total;
            // The first move whose running sum exceeds the threshold.
            let m = weights
                .partition_point(|&c| c <= threshold)
                .min(moves.saturating_sub(1));
            log_q_forward += D::log_weight(x, grad, s, m) - top;
            D::apply(chain.x_proposal, s, m);
            *slot = m as u32;
        }
        log_q_forward -= self.length as f64 * libm::log(total);
        let log_u = libm::log(open_unit_f64(rng));

        let mut changed = 0usize;
        for (i, (a, b)) in x.iter().zip(chain.x_proposal.iter()).enumerate() {
            if a != b {
                if let Some(c) = chain.changed.get_mut(changed) {
                    *c = i as u32;
                }
                changed += 1;
            }
        }
        let mut report = StepReport::proposed(true, changed, 0);
        let Some(u_new) = evaluate_proposal(target, chain, &mut report)? else {
            return Ok(report);
        };

        // Reverse: the opposite moves from y, priced by the softmax at y.
        let (y, grad_y) = (&*chain.x_proposal, &*chain.grad_proposal);
        let top_y = max_log_weight::<D>(y, grad_y, s, moves);
        let mut total_y = 0.0f64;
        for m in 0..moves {
            total_y += libm::exp(D::log_weight(y, grad_y, s, m) - top_y);
        }
        let mut log_q_reverse = -(self.length as f64) * libm::log(total_y);
        for &m in path.iter() {
            log_q_reverse += D::log_weight(y, grad_y, s, D::reverse(s, m as usize)) - top_y;
        }
        let log_ratio = (u_new - chain.log_density) + (log_q_reverse - log_q_forward);
        settle(&mut report, true, log_u, log_ratio, u_new, target, chain);
        Ok(report)
    }
}

/// The largest log-weight of the `moves` moves from `x` (finite for a valid chain: every
/// coordinate has a move that changes it).
#[inline]
fn max_log_weight<D: PathDomain>(x: &[D::Value], grad: &[f32], s: usize, moves: usize) -> f64 {
    (0..moves).fold(f64::NEG_INFINITY, |m, k| {
        let l = D::log_weight(x, grad, s, k);
        if l > m { l } else { m }
    })
}

fn check_path_buffer(length: usize, found: usize) -> Result<(), ParamError> {
    if length > found {
        return Err(ParamError::OutOfRange {
            name: "path length (longer than the path buffer)",
            value: length as f64,
        });
    }
    Ok(())
}

/// [`PathAuxiliary`] with its buffers: a [`Kernel`] for binary and categorical chains.
#[derive(Debug)]
pub struct PathKernel<'b> {
    settings: PathAuxiliary,
    buffers: PathBuffers<'b>,
}

impl PathKernel<'_> {
    /// The path length `L`.
    pub fn length(&self) -> usize {
        self.settings.length
    }
}

impl<D: PathDomain> Kernel<D> for PathKernel<'_> {
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
        self.settings.step(target, chain, &mut self.buffers, rng)
    }
}

/// The path length adapted during a burn-in, then frozen.
///
/// A real-valued length `r` starts at `initial`; the path length of a step is `r` rounded,
/// at least 1 and at most `max_length`. After each of the first `burn_in` steps,
/// `r ← clamp(r + α − ρ*, 1, max_length)` with `α = min(1, exp(log ratio))` that step's
/// acceptance probability (0 for an invalid proposal, 1 for a path that cancels) and ρ* the
/// target acceptance ([`PATH_TARGET_ACCEPTANCE`] by default). Afterwards the length is fixed,
/// and the kernel is the exact [`PathAuxiliary`] with it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PathAdaptation {
    radius: f64,
    max_length: usize,
    target_acceptance: f64,
    burn_in: u64,
    steps: u64,
}

impl PathAdaptation {
    /// Starts at length `initial`, adapts for `burn_in` steps toward `target_acceptance`, never
    /// beyond `max_length`.
    ///
    /// # Errors
    ///
    /// [`ParamError::OutOfRange`] unless `1 ≤ initial ≤ max_length` (and `max_length` fits a
    /// `u32`) and `0 < target_acceptance < 1`.
    pub fn new(
        initial: usize,
        max_length: usize,
        burn_in: u64,
        target_acceptance: f64,
    ) -> Result<Self, ParamError> {
        PathAuxiliary::new(max_length)?;
        if initial == 0 || initial > max_length {
            return Err(ParamError::OutOfRange {
                name: "initial path length",
                value: initial as f64,
            });
        }
        if !(target_acceptance > 0.0 && target_acceptance < 1.0) {
            return Err(ParamError::OutOfRange {
                name: "target acceptance",
                value: target_acceptance,
            });
        }
        Ok(Self {
            radius: initial as f64,
            max_length,
            target_acceptance,
            burn_in,
            steps: 0,
        })
    }

    /// The path length in use now (after burn-in: the final one).
    pub fn length(&self) -> usize {
        // `radius` stays in [1, max_length]; the cast rounds half away from zero. `max`/`min`
        // rather than `clamp`, whose bounds assertion would be a reachable panic.
        (libm::round(self.radius) as usize)
            .max(1)
            .min(self.max_length)
    }

    /// The real-valued length the rule adapts.
    pub fn radius(&self) -> f64 {
        self.radius
    }

    /// Whether the burn-in is over and the length frozen.
    pub fn is_frozen(&self) -> bool {
        self.steps >= self.burn_in
    }

    /// Words in [`PathAdaptation::save_words`].
    pub const WORDS: usize = 2;

    /// Everything the rule changes as it steps (the real-valued length, the steps adapted), as
    /// words: what a checkpoint saves so that [`PathAdaptation::restore_words`] on a rule built
    /// from the same settings continues bit for bit.
    pub fn save_words(&self) -> [u64; Self::WORDS] {
        [self.radius.to_bits(), self.steps]
    }

    /// Puts back a state [`PathAdaptation::save_words`] returned.
    ///
    /// # Errors
    ///
    /// [`ParamError::OutOfRange`] for a length outside `[1, max_length]` or more steps than
    /// the burn-in (the rule is then unchanged).
    pub fn restore_words(&mut self, words: &[u64; Self::WORDS]) -> Result<(), ParamError> {
        let [radius, steps] = *words;
        let radius = f64::from_bits(radius);
        if !(radius >= 1.0 && radius <= self.max_length as f64) {
            return Err(ParamError::OutOfRange {
                name: "saved path length",
                value: radius,
            });
        }
        if steps > self.burn_in {
            return Err(ParamError::OutOfRange {
                name: "saved steps",
                value: steps as f64,
            });
        }
        self.radius = radius;
        self.steps = steps;
        Ok(())
    }

    /// The fixed sampler in use now.
    pub fn settings(&self) -> PathAuxiliary {
        PathAuxiliary {
            length: self.length(),
        }
    }

    /// Records one step's report (during burn-in: adapts the length).
    pub fn record(&mut self, report: &StepReport) {
        if self.is_frozen() {
            return;
        }
        let alpha = crate::math::acceptance_probability(report.log_accept_ratio);
        let next = self.radius + alpha - self.target_acceptance;
        // `next` is never NaN (`alpha` is in [0, 1]), so this is `clamp` without its panic.
        self.radius = next.max(1.0).min(self.max_length as f64);
        self.steps += 1;
    }

    /// The kernel with these buffers.
    ///
    /// # Errors
    ///
    /// [`ParamError::OutOfRange`] when the path buffer is shorter than the largest length.
    pub fn with_buffers(self, buffers: PathBuffers<'_>) -> Result<TunedPathKernel<'_>, ParamError> {
        check_path_buffer(self.max_length, buffers.path.len())?;
        Ok(TunedPathKernel {
            adaptation: self,
            buffers,
        })
    }

    /// One step with the current length, then [`record`](Self::record).
    ///
    /// # Errors
    ///
    /// As for [`PathAuxiliary::step`].
    pub fn step<D, T, R>(
        &mut self,
        target: &mut T,
        chain: &mut Chain<'_, D>,
        buffers: &mut PathBuffers<'_>,
        rng: &mut R,
    ) -> Result<StepReport, StepError<T::Error>>
    where
        D: PathDomain,
        T: Eval<D> + ?Sized,
        R: Rng + ?Sized,
    {
        let report = self.settings().step(target, chain, buffers, rng)?;
        self.record(&report);
        Ok(report)
    }
}

/// [`PathAdaptation`] with its buffers: a [`Kernel`] whose path length is adapted during the
/// burn-in.
#[derive(Debug)]
pub struct TunedPathKernel<'b> {
    adaptation: PathAdaptation,
    buffers: PathBuffers<'b>,
}

impl TunedPathKernel<'_> {
    /// The adaptation's state.
    pub fn adaptation(&self) -> &PathAdaptation {
        &self.adaptation
    }
}

impl<D: PathDomain> Kernel<D> for TunedPathKernel<'_> {
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
        self.adaptation.step(target, chain, &mut self.buffers, rng)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn categorical_moves_reverse_to_their_start() {
        for s in 2..6usize {
            for m in 0..3 * s {
                let mut z = [0u16, 1, (s - 1) as u16];
                let before = z;
                Categorical::apply(&mut z, s, m);
                Categorical::apply(&mut z, s, Categorical::reverse(s, m));
                assert_eq!(z, before, "s = {s}, m = {m}");
                assert_eq!(Categorical::reverse(s, Categorical::reverse(s, m)), m);
            }
        }
    }

    #[test]
    fn lengths_beyond_the_buffer_are_refused() {
        let (mut w, mut p) = ([0.0f64; 4], [0u32; 2]);
        let b = PathBuffers {
            weights: &mut w,
            path: &mut p,
        };
        assert!(PathAuxiliary::new(3).unwrap().with_buffers(b).is_err());
        assert!(PathAdaptation::new(0, 4, 10, 0.5).is_err());
        assert!(PathAdaptation::new(2, 4, 10, 1.0).is_err());
    }
}
