//! The traits a categorical model implements.

use crate::ordinal::{Eval, LabelMove};
use crate::target::TargetError;

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
pub trait CategoricalTarget {
    /// Error returned by an evaluation.
    type Error: TargetError;

    /// The number of coordinates `d`.
    fn dim(&self) -> usize;

    /// The number of labels `S` per coordinate (`2 ≤ S ≤ 65 535`).
    fn states(&self) -> usize;

    /// Writes the one-hot gradient (length `d·S`) into `grad` and returns `U(x)`; makes `x` the
    /// model's current state.
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

impl<T: CategoricalTarget + ?Sized> CategoricalTarget for &mut T {
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
/// coordinate, cheaply. Same contract as
/// [`OrdinalConditional`](crate::ordinal::OrdinalConditional).
pub trait CategoricalConditional: CategoricalTarget {
    /// Writes `U(x with x_i = k) − c` for every label `k` into `out` (length `S`), for some `c`
    /// that does not depend on `k`.
    ///
    /// # Errors
    ///
    /// As for [`log_density_and_grad`](CategoricalTarget::log_density_and_grad).
    fn conditional(&mut self, x: &[u16], i: usize, out: &mut [f64]) -> Result<(), Self::Error>;

    /// Coordinate `i` of the current state changed from `old` to `x[i]`; `x` is now current.
    fn commit_change(&mut self, x: &[u16], i: usize, old: u16) {
        let _ = (x, i, old);
    }
}

impl<T: CategoricalConditional + ?Sized> CategoricalConditional for &mut T {
    fn conditional(&mut self, x: &[u16], i: usize, out: &mut [f64]) -> Result<(), Self::Error> {
        (**self).conditional(x, i, out)
    }
    fn commit_change(&mut self, x: &[u16], i: usize, old: u16) {
        (**self).commit_change(x, i, old)
    }
}

/// A [`CategoricalTarget`] seen through the domain-independent evaluation interface.
pub(crate) struct CategoricalEval<'t, T: ?Sized>(pub(crate) &'t mut T);

impl<T: CategoricalTarget + ?Sized> Eval for CategoricalEval<'_, T> {
    type Error = T::Error;
    fn dim(&self) -> usize {
        self.0.dim()
    }
    fn states(&self) -> usize {
        self.0.states()
    }
    fn eval(&mut self, x: &[u16], grad: &mut [f32]) -> Result<f64, T::Error> {
        self.0.log_density_and_grad(x, grad)
    }
    fn eval_after(&mut self, mv: &LabelMove<'_>, grad: &mut [f32]) -> Result<f64, T::Error> {
        self.0.log_density_and_grad_after(mv, grad)
    }
    fn commit(&mut self) {
        self.0.commit()
    }
}
