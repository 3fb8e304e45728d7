//! The traits an ordinal model implements, and the move type shared with categorical models.

use crate::target::TargetError;

/// A proposed move of a chain over labels `x_i ∈ {0, …, S−1}` (ordinal or categorical): `to`
/// equals `from` except at the coordinates in `changed`, and the log-density and gradient at
/// `from` are known.
#[derive(Clone, Copy, Debug)]
pub struct LabelMove<'a> {
    /// The current state.
    pub from: &'a [u16],
    /// The proposed state.
    pub to: &'a [u16],
    /// Indices where `to` differs from `from`, in increasing order, without repeats.
    pub changed: &'a [u32],
    /// `U(from)`, as last returned by the target.
    pub from_log_density: f64,
    /// `∇U(from)`, as last written by the target (length `d` for ordinal targets, `d·S` for
    /// categorical ones).
    pub from_grad: &'a [f32],
}

/// A log-density over ordinal states `x ∈ {0, …, S−1}^d`, with the gradient of a
/// differentiable extension of `U` to `R^d` (integer distance between values matters).
///
/// # Contract
///
/// * `x` and `grad` have length [`dim`](Self::dim); every entry of `x` is below
///   [`states`](Self::states), which is at least 2 and at most 65 535. Kernels check lengths and
///   the initial state once when a chain is built.
/// * `U` is the **log-density** (higher is more likely).
/// * The call protocol is that of [`BinaryTarget`](crate::BinaryTarget): one
///   [`log_density_and_grad`](Self::log_density_and_grad) to establish the current state, then
///   for each move one [`log_density_and_grad_after`](Self::log_density_and_grad_after) and, if
///   and only if the move is adopted, [`commit`](Self::commit).
/// * Non-finite outputs are allowed: a kernel rejects such a proposal, and refuses such an
///   initial state.
///
/// # Examples
///
/// Independent coordinates with `U(x) = Σ θ_i x_i` over `{0, 1, 2}`:
///
/// ```
/// use core::convert::Infallible;
/// use langevin_core::ordinal::OrdinalTarget;
///
/// struct Tilted<'a>(&'a [f32]);
///
/// impl OrdinalTarget for Tilted<'_> {
///     type Error = Infallible;
///     fn dim(&self) -> usize {
///         self.0.len()
///     }
///     fn states(&self) -> usize {
///         3
///     }
///     fn log_density_and_grad(&mut self, x: &[u16], grad: &mut [f32]) -> Result<f64, Infallible> {
///         grad.copy_from_slice(self.0);
///         Ok(x.iter().zip(self.0).map(|(&v, &t)| f64::from(v) * f64::from(t)).sum())
///     }
/// }
///
/// let mut t = Tilted(&[0.5, -1.0]);
/// let mut g = [0.0; 2];
/// assert_eq!(t.log_density_and_grad(&[2, 1], &mut g).unwrap(), 0.0);
/// ```
pub trait OrdinalTarget {
    /// Error returned by an evaluation.
    type Error: TargetError;

    /// The number of coordinates `d`.
    fn dim(&self) -> usize;

    /// The number of values `S` each coordinate takes (`2 ≤ S ≤ 65 535`).
    fn states(&self) -> usize;

    /// Writes `∇U(x)` (length `d`) into `grad` and returns `U(x)`; makes `x` the model's current
    /// state.
    ///
    /// # Errors
    ///
    /// Whatever the model cannot evaluate; see [`TargetError`].
    fn log_density_and_grad(&mut self, x: &[u16], grad: &mut [f32]) -> Result<f64, Self::Error>;

    /// Like [`log_density_and_grad`](Self::log_density_and_grad) at `mv.to`, knowing the value
    /// and gradient at `mv.from`; must not change the model's current state until
    /// [`commit`](Self::commit).
    ///
    /// # Errors
    ///
    /// As for [`log_density_and_grad`](Self::log_density_and_grad).
    fn log_density_and_grad_after(
        &mut self,
        mv: &LabelMove<'_>,
        grad: &mut [f32],
    ) -> Result<f64, Self::Error> {
        self.log_density_and_grad(mv.to, grad)
    }

    /// The last state evaluated by
    /// [`log_density_and_grad_after`](Self::log_density_and_grad_after) became current.
    fn commit(&mut self) {}
}

impl<T: OrdinalTarget + ?Sized> OrdinalTarget for &mut T {
    type Error = T::Error;
    fn dim(&self) -> usize {
        (**self).dim()
    }
    fn states(&self) -> usize {
        (**self).states()
    }
    fn log_density_and_grad(&mut self, x: &[u16], grad: &mut [f32]) -> Result<f64, Self::Error> {
        (**self).log_density_and_grad(x, grad)
    }
    fn log_density_and_grad_after(
        &mut self,
        mv: &LabelMove<'_>,
        grad: &mut [f32],
    ) -> Result<f64, Self::Error> {
        (**self).log_density_and_grad_after(mv, grad)
    }
    fn commit(&mut self) {
        (**self).commit()
    }
}

/// An optional capability for single-coordinate samplers (Gibbs): the full conditional of one
/// coordinate, cheaply.
///
/// # Contract
///
/// `x` is the model's current state (established by
/// [`log_density_and_grad`](OrdinalTarget::log_density_and_grad), a committed move, or
/// [`commit_change`](Self::commit_change)). `out` has length `S`.
pub trait OrdinalConditional: OrdinalTarget {
    /// Writes `U(x with x_i = k) − c` for every value `k` into `out`, for some `c` that does not
    /// depend on `k` (typically `U(x)`).
    ///
    /// # Errors
    ///
    /// As for [`log_density_and_grad`](OrdinalTarget::log_density_and_grad).
    fn conditional(&mut self, x: &[u16], i: usize, out: &mut [f64]) -> Result<(), Self::Error>;

    /// Coordinate `i` of the current state changed from `old` to `x[i]`; `x` is now current.
    fn commit_change(&mut self, x: &[u16], i: usize, old: u16) {
        let _ = (x, i, old);
    }
}

impl<T: OrdinalConditional + ?Sized> OrdinalConditional for &mut T {
    fn conditional(&mut self, x: &[u16], i: usize, out: &mut [f64]) -> Result<(), Self::Error> {
        (**self).conditional(x, i, out)
    }
    fn commit_change(&mut self, x: &[u16], i: usize, old: u16) {
        (**self).commit_change(x, i, old)
    }
}
