//! EWSG: exponentially weighted stochastic gradients for underdamped Langevin (Li et al. 2020).

use super::underdamped::check_friction;
use super::{
    Access, BuildError, Problem, SgCore, SgStep, StepError, SumTarget, check_batch_size,
    check_step, minibatch_estimate,
};
use crate::error::ParamError;
use crate::random;
use rand_core::Rng;

/// Settings of [`Ewsg`]: step `h`, friction `γ > 0` (noise `σ = √(2γ)`), minibatch size `n`
/// (default 1) and index-chain length `M` (default 1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EwsgSettings {
    step: f64,
    friction: f64,
    batch: usize,
    index_chain: u32,
}

impl EwsgSettings {
    /// Settings with `n = 1`, `M = 1` (the paper's default).
    ///
    /// # Errors
    ///
    /// [`ParamError::Step`], or [`ParamError::OutOfRange`] unless `γ` is finite and positive
    /// (the weights divide by `σ`).
    pub fn new(step: f64, friction: f64) -> Result<Self, ParamError> {
        check_step(step)?;
        check_friction(friction)?;
        if friction == 0.0 {
            return Err(ParamError::OutOfRange {
                name: "friction",
                value: friction,
            });
        }
        Ok(Self {
            step,
            friction,
            batch: 1,
            index_chain: 1,
        })
    }

    /// The same with minibatches of `n` drawn with replacement, each one an indexed term of
    /// the index chain.
    ///
    /// # Errors
    ///
    /// [`ParamError::OutOfRange`] for `n = 0`.
    pub fn with_batch(mut self, batch: usize) -> Result<Self, ParamError> {
        check_batch_size(batch)?;
        self.batch = batch;
        Ok(self)
    }

    /// The same with `M` Metropolis moves of the index chain per step (`M = 0` is SGHMC).
    #[must_use]
    pub fn with_index_chain(mut self, moves: u32) -> Self {
        self.index_chain = moves;
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

    /// The minibatch size `n`.
    pub fn batch(&self) -> usize {
        self.batch
    }

    /// The index-chain length `M`.
    pub fn index_chain(&self) -> u32 {
        self.index_chain
    }
}

/// An EWSG chain `(θ, r)` in caller memory; the momentum starts at zero.
///
/// Each step starts an index chain at a uniform minibatch `S₀` with estimate
/// `G₀ = (N/n) Σ_{i∈S₀} ∇V_i(θ)`, then `M` times proposes a fresh uniform minibatch `S'` and
/// moves to it with probability `min(1, exp(½|x + c G'|² − ½|x + c G|²))`, where
/// `x = √h γ r / σ` and `c = √h / σ` (Li et al. 2020, eq. 5 and Alg. 1). The estimate of the
/// final minibatch drives one Euler–Maruyama step. A step evaluates `(M + 1) n` per-term
/// gradients.
#[derive(Debug)]
pub struct Ewsg<'a> {
    settings: EwsgSettings,
    core: SgCore<'a>,
    momentum: &'a mut [f64],
    proposal: &'a mut [f64],
}

impl<'a> Ewsg<'a> {
    /// The `f64` workspace length: `5d`.
    pub const fn workspace_len(dim: usize) -> usize {
        5 * dim
    }

    /// A chain at `(theta0, 0)`.
    ///
    /// # Errors
    ///
    /// A [`BuildError`] for `(M + 1) n` beyond `u32`, `d = 0`, `N = 0`, `n > N`, a non-finite
    /// `theta0`, or a workspace of the wrong length.
    pub fn new(
        settings: EwsgSettings,
        dim: usize,
        terms: usize,
        theta0: &[f64],
        work: &'a mut [f64],
    ) -> Result<Self, BuildError> {
        let per_step = (u64::from(settings.index_chain) + 1).checked_mul(settings.batch as u64);
        if per_step.is_none_or(|e| e > u64::from(u32::MAX)) {
            return Err(BuildError::TooManyEvaluations);
        }
        let problem = Problem::new(dim, terms, Some(settings.batch), theta0);
        let len = Self::workspace_len(dim);
        let (core, mut rest) = SgCore::new(problem, work, len, Access::Random, &mut [])?;
        let momentum = rest.take(dim);
        momentum.fill(0.0);
        let proposal = rest.take(dim);
        Ok(Self {
            settings,
            core,
            momentum,
            proposal,
        })
    }

    /// The settings.
    pub fn settings(&self) -> &EwsgSettings {
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

    /// The gradient estimate chosen by the last [`select`](Self::select) or step.
    pub fn gradient(&self) -> &[f64] {
        self.core.grad
    }

    /// Half the squared weight argument, `½|x + c G|²`.
    fn energy(&self, g: &[f64]) -> f64 {
        let sigma = libm::sqrt(2.0 * self.settings.friction);
        let h = self.settings.step;
        let kx = libm::sqrt(h) * self.settings.friction / sigma;
        let kg = libm::sqrt(h) / sigma;
        0.5 * self
            .momentum
            .iter()
            .zip(g)
            .map(|(&r, &g)| {
                let v = kx * r + kg * g;
                v * v
            })
            .sum::<f64>()
    }

    /// Runs the index chain at the current state without moving: afterwards
    /// [`gradient`](Self::gradient) holds the chosen estimate. RNG use: `n` indices, then per
    /// index move `n` indices and one uniform.
    ///
    /// # Errors
    ///
    /// [`StepError::Target`], [`StepError::Shape`], or [`StepError::NonFiniteGradient`] if any
    /// evaluated estimate is not finite.
    pub fn select<T: SumTarget + ?Sized, R: Rng + ?Sized>(
        &mut self,
        target: &mut T,
        rng: &mut R,
    ) -> Result<SgStep, StepError<T::Error>> {
        self.core.check(target)?;
        let n = self.settings.batch;
        self.core.estimate(target, Some(n), rng)?;
        let mut e_cur = self.energy(self.core.grad);
        let mut moves = 0u32;
        for _ in 0..self.settings.index_chain {
            let stream = &mut self.core.stream;
            minibatch_estimate(target, stream, n, self.core.theta, self.proposal, rng)?;
            let e_prop = self.energy(self.proposal);
            let u = random::open_unit_f64(rng);
            if libm::log(u) < e_prop - e_cur {
                core::mem::swap(&mut self.core.grad, &mut self.proposal);
                e_cur = e_prop;
                moves += 1;
            }
        }
        Ok(SgStep {
            grad_evals: (self.settings.index_chain + 1) * n as u32,
            index_moves: moves,
            refreshed: false,
        })
    }

    /// One step: [`select`](Self::select), then `d` normals for the Euler–Maruyama move.
    ///
    /// # Errors
    ///
    /// See [`StepError`]; `(θ, r)` is unchanged on error.
    pub fn step<T: SumTarget + ?Sized, R: Rng + ?Sized>(
        &mut self,
        target: &mut T,
        rng: &mut R,
    ) -> Result<SgStep, StepError<T::Error>> {
        let report = self.select(target, rng)?;
        let EwsgSettings { step, friction, .. } = self.settings;
        self.core.underdamped(self.momentum, step, friction, rng)?;
        Ok(report)
    }
}
