//! Underdamped (kinetic) Langevin by Euler–Maruyama, with the full gradient or a uniform
//! minibatch estimate (SGHMC).

use super::{
    Access, BuildError, Problem, SgCore, SgStep, StepError, SumTarget, check_batch_size, check_step,
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
    core: SgCore<'a>,
    momentum: &'a mut [f64],
}

impl<'a> Underdamped<'a> {
    /// The `f64` workspace length: `4d` (position, gradient, proposal, momentum).
    pub const fn workspace_len(dim: usize) -> usize {
        4 * dim
    }

    /// The `u32` workspace length: `N` for reshuffled minibatches, else 0.
    pub fn index_len(settings: &UnderdampedSettings, terms: usize) -> usize {
        settings
            .batch
            .map_or(0, |_| settings.access.index_len(terms))
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
        let problem = Problem::new(dim, terms, settings.batch, theta0);
        let (core, mut rest) = SgCore::new(
            problem,
            work,
            Self::workspace_len(dim),
            settings.access,
            index,
        )?;
        let momentum = rest.take(dim);
        momentum.fill(0.0);
        Ok(Self {
            settings,
            core,
            momentum,
        })
    }

    /// The settings.
    pub fn settings(&self) -> &UnderdampedSettings {
        &self.settings
    }

    /// The position `θ`.
    pub fn theta(&self) -> &[f64] {
        self.core.theta
    }

    /// The momentum `r`.
    pub fn momentum(&self) -> &[f64] {
        self.momentum
    }

    /// The position and momentum, to move the chain by hand.
    pub fn state_mut(&mut self) -> (&mut [f64], &mut [f64]) {
        (self.core.theta, self.momentum)
    }

    /// One step: the gradient estimate (RNG use: the minibatch indices, if any), then the
    /// Euler–Maruyama move (`d` normals).
    ///
    /// # Errors
    ///
    /// See [`StepError`]; `(θ, r)` is unchanged on error.
    pub fn step<T: SumTarget + ?Sized, R: Rng + ?Sized>(
        &mut self,
        target: &mut T,
        rng: &mut R,
    ) -> Result<SgStep, StepError<T::Error>> {
        let UnderdampedSettings {
            step,
            friction,
            batch,
            ..
        } = self.settings;
        self.core.check(target)?;
        let grad_evals = self.core.estimate(target, batch, rng)?;
        self.core.underdamped(self.momentum, step, friction, rng)?;
        Ok(SgStep {
            grad_evals,
            ..SgStep::default()
        })
    }
}
