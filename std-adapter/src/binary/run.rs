//! Many chains of a binary kernel, on all cores, with results independent of the thread count.

use super::model::BinaryModel;
use super::sampler::SamplerSpec;
use crate::seeding::chain_rngs;
use langevin_core::binary::{BinaryChain, BinaryKernel, ChainBuffers};
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
}

/// One chain's outcome.
#[derive(Clone, Debug, Default)]
pub struct ChainResult {
    /// Step totals over the kept phase.
    pub stats: ChainStats,
    /// Step totals over burn-in.
    pub burn_in_stats: ChainStats,
    /// Kept draws, `kept × d`, row-major.
    pub draws: Vec<u8>,
    /// `U` at each kept draw.
    pub log_density: Vec<f64>,
    /// Parameters the kernel settled on (tuned samplers), as JSON.
    pub tuned: Option<serde_json::Value>,
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
        let mut total = ChainStats::default();
        for c in &self.chains {
            total.merge(&c.stats);
        }
        total
    }

    /// Target evaluations over the whole run (initial ones, burn-in and kept phase).
    pub fn evaluations(&self) -> u64 {
        self.chains
            .iter()
            .map(|c| 1 + c.stats.evaluations + c.burn_in_stats.evaluations)
            .sum()
    }

    /// Per-coordinate mean of the kept draws over all chains.
    pub fn means(&self) -> Vec<f64> {
        let mut sums = vec![0u64; self.dim];
        let mut n = 0u64;
        for c in &self.chains {
            for draw in c.draws.chunks_exact(self.dim.max(1)) {
                for (s, &x) in sums.iter_mut().zip(draw) {
                    *s += u64::from(x);
                }
                n += 1;
            }
        }
        sums.iter()
            .map(|&s| if n == 0 { 0.0 } else { s as f64 / n as f64 })
            .collect()
    }
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
    sampler.kernel().map_err(RunError::Param)?;
    let streams = chain_rngs(config.seed, config.chains);
    let next = AtomicUsize::new(0);
    let threads = config.threads.clamp(1, config.chains.max(1));
    let start = Instant::now();
    let mut results: Vec<(usize, Result<ChainResult, RunError>)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let c = next.fetch_add(1, Ordering::Relaxed);
                        if c >= config.chains {
                            break done;
                        }
                        let rng = streams.get(c).cloned();
                        done.push((c, run_one(model, sampler, config, c, rng, progress)));
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
    let chains = results
        .into_iter()
        .map(|(_, r)| r)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(BinaryRun {
        chains,
        dim: model.dim(),
        wall_time,
    })
}

fn run_one(
    model: &BinaryModel,
    sampler: &SamplerSpec,
    config: &RunConfig,
    c: usize,
    rng: Option<Xoshiro256PlusPlus>,
    progress: Option<&AtomicU64>,
) -> Result<ChainResult, RunError> {
    let d = model.dim();
    let mut rng = rng.ok_or_else(|| RunError::Model(format!("no random stream for chain {c}")))?;
    let mut cache = vec![0.0f64; model.cache_len()];
    let mut target = model.target(&mut cache).map_err(RunError::Model)?;
    let mut kernel = sampler.kernel().map_err(RunError::Param)?;
    let mut x: Vec<u8> = (0..d)
        .map(|_| u8::from(rng.next_u32() >> 31 == 1))
        .collect();
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
    let mut chain = BinaryChain::new(buffers, &mut target)
        .map_err(|e| RunError::Model(format!("chain {c}: {e}")))?;
    let mut result = ChainResult {
        draws: Vec::with_capacity(config.kept() * d),
        log_density: Vec::with_capacity(config.kept()),
        ..ChainResult::default()
    };
    let report_every = 1024u64;
    let mut pending = 0u64;
    let mut tick = |n: u64| {
        pending += n;
        if pending >= report_every {
            if let Some(p) = progress {
                p.fetch_add(pending, Ordering::Relaxed);
            }
            pending = 0;
        }
    };
    for _ in 0..config.burn_in {
        let report = kernel
            .step(&mut target, &mut chain, &mut rng)
            .map_err(|e| RunError::Model(e.to_string()))?;
        result.burn_in_stats.record(&report);
        tick(1);
    }
    let thin = config.thin.max(1);
    for t in 1..=config.steps {
        let report = kernel
            .step(&mut target, &mut chain, &mut rng)
            .map_err(|e| RunError::Model(e.to_string()))?;
        result.stats.record(&report);
        if t % thin == 0 {
            result.draws.extend_from_slice(chain.state());
            result.log_density.push(chain.log_density());
        }
        tick(1);
    }
    if let Some(p) = progress {
        p.fetch_add(pending, Ordering::Relaxed);
    }
    Ok(result)
}
