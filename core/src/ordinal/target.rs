//! The traits an ordinal model implements.

use crate::domain::Ordinal;
use crate::target::label_target;

pub use crate::target::LabelMove;

label_target! {
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
    trait OrdinalTarget for Ordinal, grad "length `d`";
/// An optional capability for single-coordinate samplers (Gibbs): the full conditional of one
/// coordinate, cheaply.
///
/// # Contract
///
/// `x` is the model's current state (established by
/// [`log_density_and_grad`](OrdinalTarget::log_density_and_grad), a committed move, or
/// [`commit_change`](Self::commit_change)). `out` has length `S`.
    conditional OrdinalConditional;
}
