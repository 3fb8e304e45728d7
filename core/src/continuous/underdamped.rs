//! Underdamped (kinetic) Langevin by Euler–Maruyama, with the full gradient or a uniform
//! minibatch estimate (SGHMC).

use super::{
    Access, BatchStream, BuildError, Carver, SgChain, SgStep, StepError, SumTarget,
    add_minibatch_grad, check_batch, check_batch_size, check_shape, check_start, check_step,
    check_target, target_err, underdamped_move,
};
use crate::error::ParamError;
use rand_core::Rng;

/// Checks that the friction is finite and `≥ 0`.
pub(crate) fn check_friction(friction: f64) -> Result<(), ParamError> {
    if friction.is_finite() && friction >= 0.0 {
        Ok(())
    } else {
        Err(ParamError::OutOfRange {
            name: "friction",
            value: friction,
        })
    }
}

/// Settings of [`Underdamped`]: step `h`, friction `γ ≥ 0` (noise `σ = √(2γ)`), and the full
/// gradient or a minibatch of `n`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UnderdampedSettings {
    step: f64,
    friction: f64,
    batch: Option<usize>,
    access: Access,
}

impl UnderdampedSettings {
    /// Euler–Maruyama with the full gradient (Li et al. 2020, eq. 3):
    /// `θ' = θ + h r`, `r' = r − h (∇V(θ) + γ r) + σ √h ξ`.
    ///
    /// # Errors
    ///
    /// [`ParamError::Step`], or [`ParamError::OutOfRange`] for a negative or non-finite friction.
    pub fn full(step: f64, friction: f64) -> Result<Self, ParamError> {
        check_step(step)?;
        check_friction(friction)?;
        Ok(Self {
            step,
            friction,
            batch: None,
            access: Access::Random,
        })
    }

    /// SGHMC: the same with `(N/n) Σ_{i∈S} ∇V_i(θ)`, `S` drawn uniformly with replacement.
    ///
    /// # Errors
    ///
    /// As for [`full`](Self::full), and [`ParamError::OutOfRange`] for `n = 0`.
    pub fn sghmc(step: f64, friction: f64, batch: usize) -> Result<Self, ParamError> {
        check_batch_size(batch)?;
        let mut s = Self::full(step, friction)?;
        s.batch = Some(batch);
        Ok(s)
    }

    /// The same settings with another data-access order for the minibatches.
    #[must_use]
    pub fn with_access(mut self, access: Access) -> Self {
        self.access = access;
        self
    }

    /// The step `h`.
    pub fn step(&self) -> f64 {
        self.step
    }

    /// The friction `γ`.
    pub fn friction(&self) -> f64 {
        self.friction
    }

    /// The minibatch size, `None` for the full gradient.
    pub fn batch(&self) -> Option<usize> {
        self.batch
    }

    /// The data-access order of the minibatches.
    pub fn access(&self) -> Access {
        self.access
    }
}

/// An underdamped Langevin chain `(θ, r)` in caller memory; the momentum starts at zero.
#[derive(Debug)]
pub struct Underdamped<'a> {
    settings: UnderdampedSettings,
    dim: usize,
    terms: usize,
    theta: &'a mut [f64],
    momentum: &'a mut [f64],
    grad: &'a mut [f64],
    next: &'a mut [f64],
    stream: BatchStream<'a>,
}

impl<'a> Underdamped<'a> {
    /// The `f64` workspace length: `4d` (position, momentum, gradient, proposal).
    pub const fn workspace_len(dim: usize) -> usize {
        4 * dim
    }

    /// The `u32` workspace length: `N` for reshuffled minibatches, else 0.
    pub fn index_len(settings: &UnderdampedSettings, terms: usize) -> usize {
        match settings.batch {
            Some(_) => settings.access.index_len(terms),
            None => 0,
        }
    }

    /// A chain at `(theta0, 0)`.
    ///
    /// # Errors
    ///
    /// A [`BuildError`] for `d = 0`, `N = 0`, `n > N`, a non-finite `theta0`, or workspaces of
    /// the wrong length.
    pub fn new(
        settings: UnderdampedSettings,
        dim: usize,
        terms: usize,
        theta0: &[f64],
        work: &'a mut [f64],
        index: &'a mut [u32],
    ) -> Result<Self, BuildError> {
        check_shape(dim, terms)?;
        if let Some(n) = settings.batch {
            check_batch(n, terms)?;
        }
        check_start(dim, theta0)?;
        let mut carve = Carver::new(work, "workspace", Self::workspace_len(dim))?;
        let theta = carve.take(dim);
        crate::slices::copy(theta, theta0);
        let momentum = carve.take(dim);
        momentum.fill(0.0);
        let grad = carve.take(dim);
        let next = carve.take(dim);
        let access = match settings.batch {
            Some(_) => settings.access,
            None => Access::Cyclic,
        };
        let stream = BatchStream::new(access, terms, index)?;
        Ok(Self {
            settings,
            dim,
            terms,
            theta,
            momentum,
            grad,
            next,
            stream,
        })
    }

    /// The settings.
    pub fn settings(&self) -> &UnderdampedSettings {
        &self.settings
    }

    /// The position `θ`.
    pub fn theta(&self) -> &[f64] {
        self.theta
    }

    /// The momentum `r`.
    pub fn momentum(&self) -> &[f64] {
        self.momentum
    }

    /// The position and momentum, to move the chain by hand.
    pub fn state_mut(&mut self) -> (&mut [f64], &mut [f64]) {
        (self.theta, self.momentum)
    }

    /// One step. RNG use: the minibatch indices (if any), then `d` normals.
    ///
    /// # Errors
    ///
    /// See [`StepError`]; `(θ, r)` is unchanged on error.
    pub fn step<T: SumTarget + ?Sized, R: Rng + ?Sized>(
        &mut self,
        target: &mut T,
        rng: &mut R,
    ) -> Result<SgStep, StepError<T::Error>> {
        check_target(target, self.dim, self.terms)?;
        self.grad.fill(0.0);
        let evals = match self.settings.batch {
            None => {
                target
                    .add_full_grad(self.theta, 1.0, self.grad)
                    .map_err(target_err)?;
                self.terms
            }
            Some(n) => {
                add_minibatch_grad(target, &mut self.stream, n, self.theta, self.grad, rng)
                    .map_err(target_err)?;
                n
            }
        };
        if !super::all_finite(self.grad) {
            return Err(StepError::NonFiniteGradient);
        }
        underdamped_move(
            self.theta,
            self.momentum,
            self.grad,
            self.next,
            self.settings.step,
            self.settings.friction,
            rng,
        )?;
        Ok(SgStep {
            grad_evals: evals as u32,
            ..SgStep::default()
        })
    }
}

impl<T: SumTarget + ?Sized> SgChain<T> for Underdamped<'_> {
    fn step_with<R: Rng + ?Sized>(
        &mut self,
        target: &mut T,
        rng: &mut R,
    ) -> Result<SgStep, StepError<T::Error>> {
        self.step(target, rng)
    }
    fn position(&self) -> &[f64] {
        self.theta
    }
}
