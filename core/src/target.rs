//! The traits a model implements to be sampled.
//!
//! A discrete model implements the target trait of its domain: [`BinaryTarget`] over
//! `x ∈ {0,1}^d`, [`OrdinalTarget`](crate::ordinal::OrdinalTarget) or
//! [`CategoricalTarget`](crate::categorical::CategoricalTarget) over labels. The kernels see all
//! three through one generic view, [`Eval`], and call them in a fixed protocol (see
//! [`BinaryTarget#contract`]) so that a model with caches (an RBM's hidden pre-activations, a
//! lattice's local fields) can update them incrementally after a move.

use crate::domain::{Binary, Domain};
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

/// A buffer that does not fit (from a batched target): not recoverable.
impl TargetError for crate::error::LenError {
    fn is_recoverable(&self) -> bool {
        false
    }
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

    /// The running sums the model keeps about its current state (values a move updates
    /// rather than recomputes: a cached gradient, pre-activations, linear predictors), for a
    /// checkpoint. A fresh evaluation at a state need not reproduce them to the last bit;
    /// putting saved ones back ([`running_sums_mut`](Self::running_sums_mut)) after it makes
    /// the next moves those of the run that saved them. Empty (the default) for a model that
    /// keeps none.
    fn running_sums(&self) -> &[f64] {
        &[]
    }

    /// The running sums of [`running_sums`](Self::running_sums), to put saved ones back.
    fn running_sums_mut(&mut self) -> &mut [f64] {
        &mut []
    }
}

impl<T: BinaryTarget + ?Sized> BinaryTarget for &mut T {
    type Error = T::Error;
    #[cfg_attr(target_arch = "x86_64", inline(always))]
    fn dim(&self) -> usize {
        (**self).dim()
    }
    #[cfg_attr(target_arch = "x86_64", inline(always))]
    fn log_density_and_grad(&mut self, x: &[u8], grad: &mut [f32]) -> Result<f64, Self::Error> {
        (**self).log_density_and_grad(x, grad)
    }
    #[cfg_attr(target_arch = "x86_64", inline(always))]
    fn log_density_and_grad_after(
        &mut self,
        mv: &FlipMove<'_>,
        grad: &mut [f32],
    ) -> Result<f64, Self::Error> {
        (**self).log_density_and_grad_after(mv, grad)
    }
    #[cfg_attr(target_arch = "x86_64", inline(always))]
    fn commit(&mut self) {
        (**self).commit()
    }
    fn running_sums(&self) -> &[f64] {
        (**self).running_sums()
    }
    fn running_sums_mut(&mut self) -> &mut [f64] {
        (**self).running_sums_mut()
    }
}

/// A proposed move of a chain in any domain: `to` equals `from` except at the coordinates in
/// `changed`, and the log-density and gradient at `from` are known.
#[derive(Clone, Copy, Debug)]
pub struct Move<'a, V> {
    /// The current state.
    pub from: &'a [V],
    /// The proposed state.
    pub to: &'a [V],
    /// Indices where `to` differs from `from`, in increasing order, without repeats.
    pub changed: &'a [u32],
    /// `U(from)`, as last returned by the target.
    pub from_log_density: f64,
    /// `∇U(from)`, as last written by the target (length `d`, or `d·S` for categorical
    /// targets).
    pub from_grad: &'a [f32],
}

/// A proposed move of a chain over labels (ordinal or categorical).
pub type LabelMove<'a> = Move<'a, u16>;

/// What the kernels see of a target in domain `D`: the domain's target trait, uniformly.
///
/// Implemented for every [`BinaryTarget`], [`OrdinalTarget`](crate::ordinal::OrdinalTarget) and
/// [`CategoricalTarget`](crate::categorical::CategoricalTarget); a model implements its
/// domain's trait, not this one. The methods and their contract are those of the domain's
/// trait (`eval` is `log_density_and_grad`, `eval_after` is `log_density_and_grad_after`).
pub trait Eval<D: Domain> {
    /// Error returned by an evaluation.
    type Error: TargetError;
    /// The number of coordinates `d`.
    fn dim(&self) -> usize;
    /// The number of values `S` per coordinate (2 for binary targets).
    fn states(&self) -> usize;
    /// `U(x)`, writing `∇U(x)` into `grad`; makes `x` current.
    ///
    /// # Errors
    ///
    /// Whatever the model cannot evaluate.
    fn eval(&mut self, x: &[D::Value], grad: &mut [f32]) -> Result<f64, Self::Error>;
    /// `U(mv.to)`, writing its gradient, knowing the values at `mv.from`.
    ///
    /// # Errors
    ///
    /// As for [`eval`](Self::eval).
    fn eval_after(&mut self, mv: &Move<'_, D::Value>, grad: &mut [f32])
    -> Result<f64, Self::Error>;
    /// The last state evaluated by [`eval_after`](Self::eval_after) became current.
    fn commit(&mut self);
    /// The model's running sums (see [`BinaryTarget::running_sums`]); empty by default.
    fn running_sums(&self) -> &[f64] {
        &[]
    }
    /// The running sums, to put saved ones back; empty by default.
    fn running_sums_mut(&mut self) -> &mut [f64] {
        &mut []
    }
}

impl<T: BinaryTarget + ?Sized> Eval<Binary> for T {
    type Error = T::Error;
    #[inline(always)]
    fn dim(&self) -> usize {
        BinaryTarget::dim(self)
    }
    #[inline(always)]
    fn states(&self) -> usize {
        2
    }
    #[inline(always)]
    fn eval(&mut self, x: &[u8], grad: &mut [f32]) -> Result<f64, T::Error> {
        self.log_density_and_grad(x, grad)
    }
    #[inline(always)]
    fn eval_after(&mut self, mv: &Move<'_, u8>, grad: &mut [f32]) -> Result<f64, T::Error> {
        let flip = FlipMove {
            from: mv.from,
            to: mv.to,
            flipped: mv.changed,
            from_log_density: mv.from_log_density,
            from_grad: mv.from_grad,
        };
        self.log_density_and_grad_after(&flip, grad)
    }
    #[inline(always)]
    fn commit(&mut self) {
        BinaryTarget::commit(self)
    }
    fn running_sums(&self) -> &[f64] {
        BinaryTarget::running_sums(self)
    }
    fn running_sums_mut(&mut self) -> &mut [f64] {
        BinaryTarget::running_sums_mut(self)
    }
}

/// Defines a target trait over labels, its `&mut` forwarding impl, its [`Eval`] view, and its
/// optional single-coordinate conditional: the ordinal and categorical traits have the same
/// signatures and protocol and differ only in the layout of the gradient.
macro_rules! label_target {
    (
        $(#[$target_doc:meta])*
        trait $target:ident for $domain:ty, grad $grad_doc:literal;
        $(#[$cond_doc:meta])*
        conditional $cond:ident;
    ) => {
        $(#[$target_doc])*
        pub trait $target {
            /// Error returned by an evaluation.
            type Error: $crate::target::TargetError;

            /// The number of coordinates `d`.
            fn dim(&self) -> usize;

            /// The number of values `S` each coordinate takes (`2 ≤ S ≤ 65 535`).
            fn states(&self) -> usize;

            #[doc = concat!("Writes `∇U(x)` (", $grad_doc, ") into `grad` and returns `U(x)`; ")]
            /// makes `x` the model's current state.
            ///
            /// # Errors
            ///
            /// Whatever the model cannot evaluate; see [`TargetError`](crate::target::TargetError).
            fn log_density_and_grad(
                &mut self,
                x: &[u16],
                grad: &mut [f32],
            ) -> Result<f64, Self::Error>;

            /// Like [`log_density_and_grad`](Self::log_density_and_grad) at `mv.to`, knowing
            /// the value and gradient at `mv.from`; must not change the model's current state
            /// until [`commit`](Self::commit).
            ///
            /// # Errors
            ///
            /// As for [`log_density_and_grad`](Self::log_density_and_grad).
            fn log_density_and_grad_after(
                &mut self,
                mv: &$crate::target::LabelMove<'_>,
                grad: &mut [f32],
            ) -> Result<f64, Self::Error> {
                self.log_density_and_grad(mv.to, grad)
            }

            /// The last state evaluated by
            /// [`log_density_and_grad_after`](Self::log_density_and_grad_after) became current.
            fn commit(&mut self) {}

            /// The running sums the model keeps about its current state (values a move updates
            /// rather than recomputes: a cached gradient, pre-activations, linear predictors), for a
            /// checkpoint. A fresh evaluation at a state need not reproduce them to the last bit;
            /// putting saved ones back ([`running_sums_mut`](Self::running_sums_mut)) after it makes
            /// the next moves those of the run that saved them. Empty (the default) for a model that
            /// keeps none.
            fn running_sums(&self) -> &[f64] {
                &[]
            }

            /// The running sums of [`running_sums`](Self::running_sums), to put saved ones back.
            fn running_sums_mut(&mut self) -> &mut [f64] {
                &mut []
            }
        }

        impl<T: $target + ?Sized> $target for &mut T {
            type Error = T::Error;
            #[cfg_attr(target_arch = "x86_64", inline(always))]
            fn dim(&self) -> usize {
                (**self).dim()
            }
            #[cfg_attr(target_arch = "x86_64", inline(always))]
            fn states(&self) -> usize {
                (**self).states()
            }
            #[cfg_attr(target_arch = "x86_64", inline(always))]
            fn log_density_and_grad(
                &mut self,
                x: &[u16],
                grad: &mut [f32],
            ) -> Result<f64, Self::Error> {
                (**self).log_density_and_grad(x, grad)
            }
            #[cfg_attr(target_arch = "x86_64", inline(always))]
            fn log_density_and_grad_after(
                &mut self,
                mv: &$crate::target::LabelMove<'_>,
                grad: &mut [f32],
            ) -> Result<f64, Self::Error> {
                (**self).log_density_and_grad_after(mv, grad)
            }
            #[cfg_attr(target_arch = "x86_64", inline(always))]
            fn commit(&mut self) {
                (**self).commit()
            }
            fn running_sums(&self) -> &[f64] {
                (**self).running_sums()
            }
            fn running_sums_mut(&mut self) -> &mut [f64] {
                (**self).running_sums_mut()
            }
        }

        impl<T: $target + ?Sized> $crate::target::Eval<$domain> for T {
            type Error = T::Error;
            #[inline(always)]
            fn dim(&self) -> usize {
                $target::dim(self)
            }
            #[inline(always)]
            fn states(&self) -> usize {
                $target::states(self)
            }
            #[inline(always)]
            fn eval(&mut self, x: &[u16], grad: &mut [f32]) -> Result<f64, T::Error> {
                self.log_density_and_grad(x, grad)
            }
            #[inline(always)]
            fn eval_after(
                &mut self,
                mv: &$crate::target::LabelMove<'_>,
                grad: &mut [f32],
            ) -> Result<f64, T::Error> {
                self.log_density_and_grad_after(mv, grad)
            }
            #[inline(always)]
            fn commit(&mut self) {
                $target::commit(self)
            }
            fn running_sums(&self) -> &[f64] {
                $target::running_sums(self)
            }
            fn running_sums_mut(&mut self) -> &mut [f64] {
                $target::running_sums_mut(self)
            }
        }

        $(#[$cond_doc])*
        pub trait $cond: $target {
            /// Writes `U(x with x_i = k) − c` for every value `k` into `out` (length `S`), for
            /// some `c` that does not depend on `k` (typically `U(x)`).
            ///
            /// # Errors
            ///
            #[doc = concat!("As for [`log_density_and_grad`](", stringify!($target), "::log_density_and_grad).")]
            fn conditional(&mut self, x: &[u16], i: usize, out: &mut [f64])
            -> Result<(), Self::Error>;

            /// Coordinate `i` of the current state changed from `old` to `x[i]`; `x` is now
            /// current.
            fn commit_change(&mut self, x: &[u16], i: usize, old: u16) {
                let _ = (x, i, old);
            }
        }

        impl<T: $cond + ?Sized> $cond for &mut T {
            fn conditional(
                &mut self,
                x: &[u16],
                i: usize,
                out: &mut [f64],
            ) -> Result<(), Self::Error> {
                (**self).conditional(x, i, out)
            }
            fn commit_change(&mut self, x: &[u16], i: usize, old: u16) {
                (**self).commit_change(x, i, old)
            }
        }

        impl<T: $cond + ?Sized> $crate::target::Conditional<$domain> for T {
            #[inline(always)]
            fn conditional(
                &mut self,
                x: &[u16],
                i: usize,
                out: &mut [f64],
            ) -> Result<(), T::Error> {
                $cond::conditional(self, x, i, out)
            }
            #[inline(always)]
            fn commit_change(&mut self, x: &[u16], i: usize, old: u16) {
                $cond::commit_change(self, x, i, old)
            }
        }
    };
}
pub(crate) use label_target;

/// What single-coordinate samplers see of a label target's optional conditional capability
/// ([`OrdinalConditional`](crate::ordinal::OrdinalConditional),
/// [`CategoricalConditional`](crate::categorical::CategoricalConditional)).
pub trait Conditional<D: Domain>: Eval<D> {
    /// Writes `U(x with x_i = k) − c` for every value `k` into `out`.
    ///
    /// # Errors
    ///
    /// As for [`Eval::eval`].
    fn conditional(&mut self, x: &[u16], i: usize, out: &mut [f64]) -> Result<(), Self::Error>;
    /// Coordinate `i` of the current state changed from `old` to `x[i]`.
    fn commit_change(&mut self, x: &[u16], i: usize, old: u16);
}
