//! Many chains of a binary kernel, on all cores, with results independent of the thread count.

use super::model::{BinaryModel, ModelTarget};
use super::sampler::{AnyBinaryKernel, RunShape, SamplerSpec, SweepReport};
use crate::seeding::chain_rngs;
use langevin_core::Kernel;
use langevin_core::baselines::{FlipDelta, Gibbs, Scan};
use langevin_core::binary::{BinaryChain, ChainBuffers, StepReport};
use langevin_core::stats::ChainStats;
use rand_core::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How long to run, how many chains, and how to seed them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunConfig {
    /// Steps kept after burn-in (before thinning).
    pub steps: u64,
    /// Steps discarded first.
    pub burn_in: u64,
    /// Keep one draw every `thin` steps (≥ 1).
    pub thin: u64,
    /// Number of chains.
    pub chains: usize,
    /// Master seed; chain `c` uses the stream after `c` jumps (see [`crate::seeding`]).
    pub seed: u64,
    /// Worker threads (≥ 1); results do not depend on it.
    pub threads: usize,
}

impl RunConfig {
    /// Draws kept per chain: `⌊steps / thin⌋`.
    pub fn kept(&self) -> usize {
        (self.steps / self.thin.max(1)) as usize
    }

    /// The shape tuned kernels size their tuning from.
    pub fn shape(&self, dim: usize) -> RunShape {
        RunShape {
            dim,
            burn_in: self.burn_in,
            steps: self.steps,
        }
    }
}

/// One chain's outcome; `T` is the state type (`u8` binary, `u16` labels).
#[derive(Clone, Debug)]
pub struct ChainResult<T = u8> {
    /// Step totals over the kept phase.
    pub stats: ChainStats,
    /// Step totals over burn-in (including tuning steps beyond the requested burn-in).
    pub burn_in_stats: ChainStats,
    /// Total distance moved over the kept phase: flips (binary), changed labels
    /// (categorical), `Σ|x'_i − x_i|` (ordinal).
    pub jump: u64,
    /// Kept draws, `kept × d`, row-major.
    pub draws: Vec<T>,
    /// `U` at each kept draw; empty for samplers that do not track it (Gibbs on a model's
    /// single-site fast path).
    pub log_density: Vec<f64>,
    /// Parameters the kernel settled on (tuned samplers), as JSON.
    pub tuned: Option<serde_json::Value>,
}

impl<T> Default for ChainResult<T> {
    fn default() -> Self {
        Self {
            stats: ChainStats::default(),
            burn_in_stats: ChainStats::default(),
            jump: 0,
            draws: Vec::new(),
            log_density: Vec::new(),
            tuned: None,
        }
    }
}

/// The outcome of a run.
#[derive(Clone, Debug)]
pub struct BinaryRun {
    /// Per-chain results, in chain order.
    pub chains: Vec<ChainResult>,
    /// The dimension.
    pub dim: usize,
    /// Wall time of the sampling loops (no loading or writing).
    pub wall_time: Duration,
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

pub(crate) fn total_stats<T>(chains: &[ChainResult<T>]) -> ChainStats {
    let mut total = ChainStats::default();
    for c in chains {
        total.merge(&c.stats);
    }
    total
}

pub(crate) fn total_evaluations<T>(chains: &[ChainResult<T>]) -> u64 {
    chains
        .iter()
        .map(|c| 1 + c.stats.evaluations + c.burn_in_stats.evaluations)
        .sum()
}

pub(crate) fn total_steps<T>(chains: &[ChainResult<T>]) -> u64 {
    chains
        .iter()
        .map(|c| c.stats.steps + c.burn_in_stats.steps)
        .sum()
}

pub(crate) fn means<T: Copy + Into<u64>>(chains: &[ChainResult<T>], dim: usize) -> Vec<f64> {
    let mut sums = vec![0u64; dim];
    let mut n = 0u64;
    for c in chains {
        for draw in c.draws.chunks_exact(dim.max(1)) {
            for (s, &x) in sums.iter_mut().zip(draw) {
                *s += x.into();
            }
            n += 1;
        }
    }
    sums.iter()
        .map(|&s| if n == 0 { 0.0 } else { s as f64 / n as f64 })
        .collect()
}

pub(crate) fn mean_jump<T>(chains: &[ChainResult<T>]) -> f64 {
    let steps = total_stats(chains).steps;
    if steps == 0 {
        return 0.0;
    }
    chains.iter().map(|c| c.jump).sum::<u64>() as f64 / steps as f64
}

/// The tuned parameters per chain as a JSON array, or `None` if no chain has any.
pub(crate) fn tuned<T>(chains: &[ChainResult<T>]) -> Option<serde_json::Value> {
    if chains.iter().all(|c| c.tuned.is_none()) {
        return None;
    }
    Some(serde_json::Value::Array(
        chains
            .iter()
            .map(|c| c.tuned.clone().unwrap_or(serde_json::Value::Null))
            .collect(),
    ))
}

/// Why a run failed.
#[derive(Debug)]
pub enum RunError {
    /// Invalid sampler parameters.
    Param(langevin_core::ParamError),
    /// The model could not be set up or evaluated at a chain's start.
    Model(String),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Param(e) => e.fmt(f),
            RunError::Model(e) => f.write_str(e),
        }
    }
}

impl std::error::Error for RunError {}

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
    let (chains, wall_time) = in_parallel(config, |c, rng| {
        run_one(model, sampler, &shape, config, c, rng, progress)
    })?;
    Ok(BinaryRun {
        chains,
        dim: model.dim(),
        wall_time,
    })
}

/// Runs `one(c, stream of chain c)` for every chain on `config.threads` workers; results in
/// chain order, and the wall time of the whole.
pub(crate) fn in_parallel<R, F>(config: &RunConfig, one: F) -> Result<(Vec<R>, Duration), RunError>
where
    R: Send,
    F: Fn(usize, Xoshiro256PlusPlus) -> Result<R, RunError> + Sync,
{
    let streams = chain_rngs(config.seed, config.chains);
    let next = AtomicUsize::new(0);
    let threads = config.threads.clamp(1, config.chains.max(1));
    let start = Instant::now();
    let mut results: Vec<(usize, Result<R, RunError>)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let c = next.fetch_add(1, Ordering::Relaxed);
                        if c >= config.chains {
                            break done;
                        }
                        let outcome = match streams.get(c).cloned() {
                            Some(rng) => one(c, rng),
                            None => Err(RunError::Model(format!("no random stream for chain {c}"))),
                        };
                        done.push((c, outcome));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_default())
            .collect()
    });
    let wall_time = start.elapsed();
    results.sort_by_key(|(c, _)| *c);
    let out = results
        .into_iter()
        .map(|(_, r)| r)
        .collect::<Result<Vec<_>, _>>()?;
    Ok((out, wall_time))
}

/// One chain as the run loop sees it.
pub(crate) trait ChainDriver {
    /// The state type.
    type Value: Copy;
    /// One step: its report and the distance moved.
    fn step(&mut self) -> Result<(StepReport, u64), RunError>;
    /// The current state.
    fn state(&self) -> &[Self::Value];
    /// `U` at the current state, where tracked.
    fn log_density(&self) -> Option<f64>;
    /// Whether the kernel is still adapting.
    fn is_tuning(&self) -> bool;
    /// Ends adaptation where the kernel allows it.
    fn stop_tuning(&mut self);
    /// The tuned parameters.
    fn tuned(&self) -> Option<serde_json::Value>;
}

/// Burn-in (extended while the kernel is still tuning, at most `tuning_cap` extra steps), then
/// the kept phase.
pub(crate) fn drive<D: ChainDriver>(
    driver: &mut D,
    config: &RunConfig,
    tuning_cap: u64,
    progress: Option<&AtomicU64>,
) -> Result<ChainResult<D::Value>, RunError> {
    let d = driver.state().len();
    let mut result = ChainResult {
        draws: Vec::with_capacity(config.kept() * d),
        ..ChainResult::default()
    };
    let report_every = 1024u64;
    let mut pending = 0u64;
    let mut tick = || {
        pending += 1;
        if pending >= report_every {
            if let Some(p) = progress {
                p.fetch_add(pending, Ordering::Relaxed);
            }
            pending = 0;
        }
    };
    for _ in 0..config.burn_in {
        result.burn_in_stats.record(&driver.step()?.0);
        tick();
    }
    let mut extra = 0;
    while driver.is_tuning() && extra < tuning_cap {
        result.burn_in_stats.record(&driver.step()?.0);
        extra += 1;
        tick();
    }
    driver.stop_tuning();
    let thin = config.thin.max(1);
    for t in 1..=config.steps {
        let (report, jump) = driver.step()?;
        result.stats.record(&report);
        result.jump += jump;
        if t % thin == 0 {
            result.draws.extend_from_slice(driver.state());
            if let Some(u) = driver.log_density() {
                result.log_density.push(u);
            }
        }
        tick();
    }
    if let Some(p) = progress {
        p.fetch_add(pending, Ordering::Relaxed);
    }
    result.tuned = driver.tuned();
    Ok(result)
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
        let r = Kernel::step(
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
    fn is_tuning(&self) -> bool {
        false
    }
    fn stop_tuning(&mut self) {}
    fn tuned(&self) -> Option<serde_json::Value> {
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
    let mut x: Vec<u8> = (0..d)
        .map(|_| u8::from(rng.next_u32() >> 31 == 1))
        .collect();
    if let SamplerSpec::Gibbs { scan } = *sampler {
        match &mut target {
            ModelTarget::Quadratic(t) => return fast_gibbs(t, x, scan, rng, config, c, progress),
            ModelTarget::IsingGraph(t) => {
                return fast_gibbs(t, x, scan, rng, config, c, progress);
            }
            ModelTarget::Lattice(t) => return fast_gibbs(t, x, scan, rng, config, c, progress),
            ModelTarget::Rbm(t) => return fast_gibbs(t, x, scan, rng, config, c, progress),
            ModelTarget::Logistic(_) => {}
        }
    }
    let (mut grad, mut x_proposal, mut grad_proposal, mut flipped) = (
        vec![0.0f32; d],
        vec![0u8; d],
        vec![0.0f32; d],
        vec![0u32; d],
    );
    let buffers = ChainBuffers {
        x: &mut x,
        grad: &mut grad,
        x_proposal: &mut x_proposal,
        grad_proposal: &mut grad_proposal,
        flipped: &mut flipped,
    };
    let chain = BinaryChain::new(buffers, &mut target)
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
