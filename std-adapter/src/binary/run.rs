//! Many chains of a binary kernel, on all cores, with results independent of the thread count.

use super::model::{BinaryModel, ModelTarget};
use super::sampler::{AnyBinaryKernel, RunShape, SamplerSpec, SweepReport};
use crate::run::{
    ChainDriver, ChainResult, RunConfig, RunError, drive, map_chains, mean_jump, means,
    total_evaluations, total_stats, total_steps, tuned,
};
use langevin_core::baselines::{FlipDelta, Gibbs, Scan};
use langevin_core::binary::{BinaryChain, BinaryKernel, ChainBuffers, StepReport};
use langevin_core::stats::ChainStats;
use rand_core::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

/// The outcome of a run.
#[derive(Clone, Debug)]
pub struct BinaryRun {
    /// Per-chain results, in chain order.
    pub chains: Vec<ChainResult>,
    /// The dimension.
    pub dim: usize,
    /// Wall time of the sampling loops (no loading or writing).
    pub wall_time: Duration,
    /// Worker threads the run used (the diagnostics use as many).
    pub threads: usize,
}

impl BinaryRun {
    /// All kept draws, `(chains, kept, d)` row-major.
    pub fn samples(&self) -> Vec<u8> {
        self.chains
            .iter()
            .flat_map(|c| c.draws.iter().copied())
            .collect()
    }

    /// Totals over all chains' kept phases.
    pub fn stats(&self) -> ChainStats {
        total_stats(&self.chains)
    }

    /// Target evaluations over the whole run (initial ones, burn-in and kept phase).
    pub fn evaluations(&self) -> u64 {
        total_evaluations(&self.chains)
    }

    /// Steps taken over the whole run (burn-in, tuning and kept phase, all chains).
    pub fn steps_taken(&self) -> u64 {
        total_steps(&self.chains)
    }

    /// Per-coordinate mean of the kept draws over all chains.
    pub fn means(&self) -> Vec<f64> {
        means(&self.chains, self.dim)
    }

    /// Mean Hamming distance between consecutive states of the kept phase (the accepted flips
    /// per step, except that a Gibbs sweep flipping a site twice moves it not at all).
    pub fn mean_jump(&self) -> f64 {
        mean_jump(&self.chains)
    }

    /// The tuned parameters of every chain (`None` for fixed samplers).
    pub fn tuned(&self) -> Option<serde_json::Value> {
        tuned(&self.chains)
    }
}

/// Runs `config.chains` chains of `sampler` on `model`.
///
/// Chain `c` draws its start uniformly from `{0,1}^d` and all its randomness from its own stream
/// (see [`crate::seeding::chain_rng`]), so the output is bit-identical for every thread count.
/// Gibbs uses the model's single-flip fast path ([`FlipDelta`]) where it has one (every kind
/// but `binary_logistic`) and the kernel path otherwise; both consume the stream alike.
/// `progress`, if given, is advanced by one per step taken.
///
/// # Errors
///
/// [`RunError`] for invalid parameters or a start where the model is not finite.
pub fn run_chains(
    model: &BinaryModel,
    sampler: &SamplerSpec,
    config: &RunConfig,
    progress: Option<&AtomicU64>,
) -> Result<BinaryRun, RunError> {
    let shape = config.shape(model.dim());
    sampler.kernel_for(&shape).map_err(RunError::Param)?;
    let run = map_chains(
        config.seed,
        config.threads,
        vec![(); config.chains],
        |c, (), rng| run_one(model, sampler, &shape, config, c, rng, progress),
    )?;
    Ok(BinaryRun {
        chains: run.results,
        dim: model.dim(),
        wall_time: run.wall_time,
        threads: run.threads,
    })
}

/// Room for one binary chain, owned.
pub(crate) struct BinaryBuffers {
    pub(crate) x: Vec<u8>,
    grad: Vec<f32>,
    x_proposal: Vec<u8>,
    grad_proposal: Vec<f32>,
    flipped: Vec<u32>,
}

impl BinaryBuffers {
    /// Buffers for `d` coordinates, the state drawn uniformly from `{0,1}^d` (one `u32` of
    /// `rng` per coordinate, its top bit).
    pub(crate) fn uniform<R: Rng + ?Sized>(d: usize, rng: &mut R) -> Self {
        Self {
            x: (0..d)
                .map(|_| u8::from(rng.next_u32() >> 31 == 1))
                .collect(),
            grad: vec![0.0; d],
            x_proposal: vec![0; d],
            grad_proposal: vec![0.0; d],
            flipped: vec![0; d],
        }
    }

    /// The borrowed view a [`BinaryChain`] is built on.
    pub(crate) fn buffers(&mut self) -> ChainBuffers<'_> {
        ChainBuffers {
            x: &mut self.x,
            grad: &mut self.grad,
            x_proposal: &mut self.x_proposal,
            grad_proposal: &mut self.grad_proposal,
            flipped: &mut self.flipped,
        }
    }
}

/// A binary chain driven by any kernel through its cached `U` and `∇U`.
struct KernelDriver<'c, 't> {
    chain: BinaryChain<'c>,
    target: ModelTarget<'t>,
    kernel: AnyBinaryKernel,
    rng: Xoshiro256PlusPlus,
    /// The state before a Gibbs sweep (a sweep may flip a site twice).
    previous: Option<Vec<u8>>,
}

impl ChainDriver for KernelDriver<'_, '_> {
    type Value = u8;
    fn step(&mut self) -> Result<(StepReport, u64), RunError> {
        if let Some(p) = &mut self.previous {
            p.copy_from_slice(self.chain.state());
        }
        let r = BinaryKernel::step(
            &mut self.kernel,
            &mut self.target,
            &mut self.chain,
            &mut self.rng,
        )
        .map_err(|e| RunError::Model(e.to_string()))?;
        let jump = match &self.previous {
            Some(p) => hamming(p, self.chain.state()),
            None => u64::from(r.accepted_flips()),
        };
        Ok((r, jump))
    }
    fn state(&self) -> &[u8] {
        self.chain.state()
    }
    fn log_density(&self) -> Option<f64> {
        Some(self.chain.log_density())
    }
    fn is_tuning(&self) -> bool {
        self.kernel.is_tuning()
    }
    fn stop_tuning(&mut self) {
        self.kernel.stop_tuning();
    }
    fn tuned(&self) -> Option<serde_json::Value> {
        self.kernel.tuned()
    }
}

/// Coordinates where two states differ.
fn hamming(a: &[u8], b: &[u8]) -> u64 {
    a.iter().zip(b).filter(|(x, y)| x != y).count() as u64
}

/// Gibbs sweeps on a raw state through the model's single-flip fast path.
struct FastGibbs<'m, T> {
    x: Vec<u8>,
    previous: Vec<u8>,
    target: &'m mut T,
    gibbs: Gibbs,
    rng: Xoshiro256PlusPlus,
}

impl<T: FlipDelta> ChainDriver for FastGibbs<'_, T> {
    type Value = u8;
    fn step(&mut self) -> Result<(StepReport, u64), RunError> {
        self.previous.copy_from_slice(&self.x);
        let mut sweep = SweepReport::default();
        for _ in 0..self.x.len() {
            let changed = self
                .gibbs
                .update_binary(&mut *self.target, &mut self.x, &mut self.rng)
                .map_err(|e| RunError::Model(e.to_string()))?;
            sweep.add_update(changed, 1);
        }
        Ok((sweep.report(), hamming(&self.previous, &self.x)))
    }
    fn state(&self) -> &[u8] {
        &self.x
    }
    fn log_density(&self) -> Option<f64> {
        None
    }
}

fn fast_gibbs<T: FlipDelta>(
    target: &mut T,
    x: Vec<u8>,
    scan: Scan,
    rng: Xoshiro256PlusPlus,
    config: &RunConfig,
    c: usize,
    progress: Option<&AtomicU64>,
) -> Result<ChainResult, RunError> {
    // Establish the model's current state (caches) at the start.
    let mut grad = vec![0.0f32; x.len()];
    let u = target
        .log_density_and_grad(&x, &mut grad)
        .map_err(|e| RunError::Model(format!("chain {c}: {e}")))?;
    if !u.is_finite() {
        return Err(RunError::Model(format!(
            "chain {c}: log-density at the initial state is not finite"
        )));
    }
    let mut driver = FastGibbs {
        previous: x.clone(),
        x,
        target,
        gibbs: Gibbs::new(scan),
        rng,
    };
    drive(&mut driver, config, 0, progress)
}

fn run_one(
    model: &BinaryModel,
    sampler: &SamplerSpec,
    shape: &RunShape,
    config: &RunConfig,
    c: usize,
    mut rng: Xoshiro256PlusPlus,
    progress: Option<&AtomicU64>,
) -> Result<ChainResult, RunError> {
    let d = model.dim();
    let mut cache = vec![0.0f64; model.cache_len()];
    let mut target = model.target(&mut cache).map_err(RunError::Model)?;
    let kernel = sampler
        .kernel_for_model(model, shape)
        .map_err(RunError::Param)?;
    let mut buffers = BinaryBuffers::uniform(d, &mut rng);
    if let SamplerSpec::Gibbs { scan } = *sampler {
        let x = buffers.x;
        match &mut target {
            ModelTarget::Quadratic(t) => return fast_gibbs(t, x, scan, rng, config, c, progress),
            ModelTarget::IsingGraph(t) => {
                return fast_gibbs(t, x, scan, rng, config, c, progress);
            }
            ModelTarget::Lattice(t) => return fast_gibbs(t, x, scan, rng, config, c, progress),
            ModelTarget::Rbm(t) => return fast_gibbs(t, x, scan, rng, config, c, progress),
            ModelTarget::Logistic(_) => buffers.x = x,
        }
    }
    let chain = BinaryChain::new(buffers.buffers(), &mut target)
        .map_err(|e| RunError::Model(format!("chain {c}: {e}")))?;
    // ACS may need more steps than the burn-in; its plan never exceeds its budget.
    let cap = shape.burn_in.saturating_add(shape.steps);
    let previous = matches!(kernel, AnyBinaryKernel::Gibbs(_)).then(|| vec![0; d]);
    let mut driver = KernelDriver {
        chain,
        target,
        kernel,
        rng,
        previous,
    };
    drive(&mut driver, config, cap, progress)
}
