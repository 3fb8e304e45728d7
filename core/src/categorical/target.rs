//! The traits a categorical model implements.

use crate::domain::Categorical;
use crate::target::label_target;

label_target! {
/// A log-density over categorical states `x ∈ {0, …, S−1}^d` (labels without order), with the
/// gradient of a differentiable extension of `U` to the one-hot encoding.
///
/// # Contract
///
/// * `x` has length [`dim`](Self::dim) `= d` and entries below [`states`](Self::states) `= S`
///   (`2 ≤ S ≤ 65 535`); `grad` has length `d·S`, row-major:
///   `grad[i·S + k] = ∂U/∂onehot_{i,k}` at the one-hot encoding of `x`.
/// * Otherwise as [`OrdinalTarget`](crate::ordinal::OrdinalTarget): `U` is the log-density, the
///   same evaluate / evaluate-after / commit protocol, non-finite outputs reject a proposal.
///
/// # Examples
///
/// Independent labels with `U(x) = Σ_i θ_{i, x_i}`, whose one-hot gradient is `θ` itself:
///
/// ```
/// use core::convert::Infallible;
/// use langevin_core::categorical::CategoricalTarget;
///
/// struct Table<'a>(&'a [f32], usize);
///
/// impl CategoricalTarget for Table<'_> {
///     type Error = Infallible;
///     fn dim(&self) -> usize {
///         self.0.len() / self.1
///     }
///     fn states(&self) -> usize {
///         self.1
///     }
///     fn log_density_and_grad(&mut self, x: &[u16], grad: &mut [f32]) -> Result<f64, Infallible> {
///         grad.copy_from_slice(self.0);
///         Ok(x.iter().enumerate().map(|(i, &k)| f64::from(self.0[i * self.1 + usize::from(k)])).sum())
///     }
/// }
///
/// let theta = [0.0, 1.0, 2.0, 0.5, 0.0, -1.0];
/// let mut t = Table(&theta, 3);
/// let mut g = [0.0; 6];
/// assert_eq!(t.log_density_and_grad(&[2, 0], &mut g).unwrap(), 2.5);
/// ```
    trait CategoricalTarget for Categorical, grad "the one-hot gradient, length `d·S`";
/// An optional capability for single-coordinate samplers (Gibbs): the full conditional of one
/// coordinate, cheaply. Same contract as
/// [`OrdinalConditional`](crate::ordinal::OrdinalConditional).
    conditional CategoricalConditional;
}
