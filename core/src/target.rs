//! The traits a model implements to be sampled.
//!
//! A discrete model over `x ∈ {0,1}^d` implements [`BinaryTarget`]. The kernels call it in a fixed
//! protocol (see [`BinaryTarget#contract`]) so that a model with caches (an RBM's hidden
//! pre-activations, a lattice's local fields) can update them incrementally after a move.

use core::convert::Infallible;
use core::fmt;

/// The error type of a target evaluation.
///
/// A *recoverable* error (say, a numerical failure at one particular proposed state) makes the
/// kernel reject the move that triggered it and carry on; the step report counts it. An
/// unrecoverable one (a broken data source) stops the step with an error and leaves the chain at
/// its last valid state.
pub trait TargetError: fmt::Debug + fmt::Display {
    /// Whether the chain may continue by rejecting the move that caused the error.
    fn is_recoverable(&self) -> bool;
}

impl TargetError for Infallible {
    fn is_recoverable(&self) -> bool {
        match *self {}
    }
}

/// A proposed move of a binary chain: `to` equals `from` with the coordinates in `flipped`
/// toggled, and the log-density and gradient at `from` are known.
#[derive(Clone, Copy, Debug)]
pub struct FlipMove<'a> {
    /// The current state.
    pub from: &'a [u8],
    /// The proposed state.
    pub to: &'a [u8],
    /// Indices where `to` differs from `from`, in increasing order, without repeats.
    pub flipped: &'a [u32],
    /// `U(from)`, as last returned by the target.
    pub from_log_density: f64,
    /// `∇U(from)`, as last written by the target.
    pub from_grad: &'a [f32],
}

/// A log-density over binary states `x ∈ {0,1}^d`, with the gradient of a differentiable
/// extension of `U` to `R^d`.
///
/// # Contract
///
/// * `x` and `grad` have length [`dim`](Self::dim); every entry of `x` is 0 or 1. Kernels check
///   the lengths once when a chain is built, not on every call.
/// * `U` is the **log-density** (higher is more likely). Models written over spins `s = 2x − 1`
///   convert inside: `∂U/∂x_i = 2 ∂U/∂s_i`.
/// * A kernel first calls [`log_density_and_grad`](Self::log_density_and_grad) to establish the
///   current state. For every move it then calls
///   [`log_density_and_grad_after`](Self::log_density_and_grad_after) once and, if and only if the
///   move is adopted, [`commit`](Self::commit). A model that caches anything about the current
///   state must keep that cache until `commit` tells it the proposal became current.
/// * Non-finite values are allowed as outputs: a kernel treats a non-finite proposed
///   log-density or gradient as a rejected move and a non-finite value at the initial state as
///   an error.
///
/// # Examples
///
/// A product of independent Bernoullis, `U(x) = Σ θ_i x_i`:
///
/// ```
/// use core::convert::Infallible;
/// use langevin_core::BinaryTarget;
///
/// struct Independent<'a>(&'a [f32]);
///
/// impl BinaryTarget for Independent<'_> {
///     type Error = Infallible;
///     fn dim(&self) -> usize {
///         self.0.len()
///     }
///     fn log_density_and_grad(&mut self, x: &[u8], grad: &mut [f32]) -> Result<f64, Infallible> {
///         grad.copy_from_slice(self.0);
///         Ok(x.iter().zip(self.0).map(|(&xi, &t)| f64::from(xi) * f64::from(t)).sum())
///     }
/// }
///
/// let mut t = Independent(&[1.0, -2.0]);
/// let mut g = [0.0; 2];
/// assert_eq!(t.log_density_and_grad(&[1, 1], &mut g).unwrap(), -1.0);
/// ```
pub trait BinaryTarget {
    /// Error returned by an evaluation.
    type Error: TargetError;

    /// The number of coordinates `d`.
    fn dim(&self) -> usize;

    /// Writes `∇U(x)` into `grad` and returns `U(x)`; makes `x` the model's current state.
    ///
    /// # Errors
    ///
    /// Whatever the model cannot evaluate; see [`TargetError`].
    fn log_density_and_grad(&mut self, x: &[u8], grad: &mut [f32]) -> Result<f64, Self::Error>;

    /// Like [`log_density_and_grad`](Self::log_density_and_grad) at `mv.to`, knowing the value
    /// and gradient at `mv.from`. Models override it to update incrementally; it must not change
    /// what the model regards as the current state until [`commit`](Self::commit).
    ///
    /// # Errors
    ///
    /// As for [`log_density_and_grad`](Self::log_density_and_grad).
    fn log_density_and_grad_after(
        &mut self,
        mv: &FlipMove<'_>,
        grad: &mut [f32],
    ) -> Result<f64, Self::Error> {
        self.log_density_and_grad(mv.to, grad)
    }

    /// The last state evaluated by
    /// [`log_density_and_grad_after`](Self::log_density_and_grad_after) became current.
    fn commit(&mut self) {}
}

impl<T: BinaryTarget + ?Sized> BinaryTarget for &mut T {
    type Error = T::Error;
    fn dim(&self) -> usize {
        (**self).dim()
    }
    fn log_density_and_grad(&mut self, x: &[u8], grad: &mut [f32]) -> Result<f64, Self::Error> {
        (**self).log_density_and_grad(x, grad)
    }
    fn log_density_and_grad_after(
        &mut self,
        mv: &FlipMove<'_>,
        grad: &mut [f32],
    ) -> Result<f64, Self::Error> {
        (**self).log_density_and_grad_after(mv, grad)
    }
    fn commit(&mut self) {
        (**self).commit()
    }
}
