//! Overdamped Langevin: LMC with the full gradient, SGLD with a minibatch estimate.

use super::{
    Access, BuildError, Problem, SgCore, SgStep, StepError, SumTarget, check_batch_size, check_step,
};
use crate::error::ParamError;
use rand_core::Rng;

/// Settings of [`Langevin`]: step `h`, and the full gradient (LMC) or a minibatch of `n` (SGLD).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LangevinSettings {
    step: f64,
    batch: Option<usize>,
    access: Access,
}

impl LangevinSettings {
    /// LMC: `θ ← θ − h ∇V(θ) + √(2h) ξ`.
    ///
    /// # Errors
    ///
    /// [`ParamError::Step`] unless `h` is finite and positive.
    pub fn lmc(step: f64) -> Result<Self, ParamError> {
        check_step(step)?;
        Ok(Self {
            step,
            batch: None,
            access: Access::Random,
        })
    }

    /// SGLD: the gradient replaced by `(N/n) Σ_{i∈S} ∇V_i(θ)` over `n` indices drawn with
    /// replacement (see [`with_access`](Self::with_access) for other orders).
    ///
    /// # Errors
    ///
    /// [`ParamError::Step`], or [`ParamError::OutOfRange`] for `n = 0`.
    pub fn sgld(step: f64, batch: usize) -> Result<Self, ParamError> {
        check_step(step)?;
        check_batch_size(batch)?;
        Ok(Self {
            step,
            batch: Some(batch),
            access: Access::Random,
        })
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

    /// The minibatch size, `None` for the full gradient.
    pub fn batch(&self) -> Option<usize> {
        self.batch
    }

    /// The data-access order of the minibatches.
    pub fn access(&self) -> Access {
        self.access
    }
}

/// An overdamped Langevin chain (LMC or SGLD) in caller memory.
///
/// # Examples
///
/// ```
/// use core::convert::Infallible;
/// use langevin_core::continuous::{Langevin, LangevinSettings, SumTarget};
/// use rand_core::SeedableRng;
///
/// // V_i(θ) = ½ θ², N = 4: the target is N(0, 1/4).
/// struct Quad;
/// impl SumTarget for Quad {
///     type Error = Infallible;
///     fn dim(&self) -> usize { 1 }
///     fn num_terms(&self) -> usize { 4 }
///     fn add_term_grad(&mut self, _: usize, t: &[f64], s: f64, acc: &mut [f64]) -> Result<(), Infallible> {
///         for (a, t) in acc.iter_mut().zip(t) { *a += s * t; }
///         Ok(())
///     }
/// }
///
/// let settings = LangevinSettings::sgld(0.01, 2).unwrap();
/// let mut work = vec![0.0; Langevin::workspace_len(1)];
/// let mut index = vec![0; Langevin::index_len(&settings, 4)];
/// let mut chain = Langevin::new(settings, 1, 4, &[3.0], &mut work, &mut index).unwrap();
/// let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
/// let report = chain.step(&mut Quad, &mut rng).unwrap();
/// assert_eq!(report.grad_evals, 2);
/// assert!(chain.theta()[0] < 3.0);
/// ```
#[derive(Debug)]
pub struct Langevin<'a> {
    settings: LangevinSettings,
    core: SgCore<'a>,
}

impl<'a> Langevin<'a> {
    /// The `f64` workspace length: `3d` (position, gradient, proposal).
    pub const fn workspace_len(dim: usize) -> usize {
        3 * dim
    }

    /// The `u32` workspace length: `N` for reshuffled minibatches, else 0.
    pub fn index_len(settings: &LangevinSettings, terms: usize) -> usize {
        match settings.batch {
            Some(_) => settings.access.index_len(terms),
            None => 0,
        }
    }

    /// A chain at `theta0` for a target with `dim` coordinates and `terms` terms.
    ///
    /// # Errors
    ///
    /// A [`BuildError`] for `d = 0`, `N = 0`, `n > N`, a non-finite `theta0`, or workspaces of
    /// the wrong length.
    pub fn new(
        settings: LangevinSettings,
        dim: usize,
        terms: usize,
        theta0: &[f64],
        work: &'a mut [f64],
        index: &'a mut [u32],
    ) -> Result<Self, BuildError> {
        let problem = Problem::new(dim, terms, settings.batch, theta0);
        let len = Self::workspace_len(dim);
        let (core, _) = SgCore::new(problem, work, len, settings.access, index)?;
        Ok(Self { settings, core })
    }

    /// The settings.
    pub fn settings(&self) -> &LangevinSettings {
        &self.settings
    }

    /// The position `θ`.
    pub fn theta(&self) -> &[f64] {
        self.core.theta
    }

    /// The position `θ`, to move the chain by hand.
    pub fn theta_mut(&mut self) -> &mut [f64] {
        self.core.theta
    }

    /// One step. RNG use: the minibatch indices (if any), then `d` normals.
    ///
    /// # Errors
    ///
    /// See [`StepError`]; `θ` is unchanged on error.
    pub fn step<T: SumTarget + ?Sized, R: Rng + ?Sized>(
        &mut self,
        target: &mut T,
        rng: &mut R,
    ) -> Result<SgStep, StepError<T::Error>> {
        let LangevinSettings { step, batch, .. } = self.settings;
        self.core.check(target)?;
        let grad_evals = self.core.estimate(target, batch, rng)?;
        self.core.overdamped(step, rng)?;
        Ok(SgStep {
            grad_evals,
            ..SgStep::default()
        })
    }
}
