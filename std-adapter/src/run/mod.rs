//! One chain runner for every domain: a [`Pool`] of `--threads` workers, chain `c` on the
//! stream of [`crate::seeding::chain_rngs`], results collected in chain order, and a worker that
//! panics turned into [`RunError::WorkerPanicked`] rather than into missing chains.
//!
//! * [`map_chains`]: one closure per chain with its stream, on a pool sized for the run;
//!   `sample` (binary and label domains), AB-2, `sample-continuous` and the diagnostics all
//!   go through it or through [`Pool::map`];
//! * the burn-in / tuning / kept-phase loop of one discrete chain, written once for every
//!   domain's kernels, and the [`ChainResult`] it fills; [`DiscreteRun`] collects them;
//! * [`run_binary_plan`], [`run_label_plan`]: a sampler plan on a model, as `langevin sample`
//!   runs it;
//! * [`RunConfig`], [`RunError`]: what to run and why it failed; [`Progress`]: the steps a run
//!   has taken, and the flag that cancels it.

mod checkpoint;
mod error;
mod identity;
mod lockstep;
mod plan;
mod pool;
mod replicas;
mod sweep;
mod vecs;

pub use checkpoint::{
    Checkpoint, CheckpointError, DEFAULT_EVERY, DecodeError, FORMAT_VERSION, Fingerprint, Saved,
};
pub(crate) use checkpoint::{DriverState, Position, Record};
pub use error::{ModelError, RunError};
pub(crate) use lockstep::{GroupJob, Lockstep, run_groups};
pub use plan::{batched_to, run_binary_plan, run_label_plan};
pub use pool::{Pool, PoolError, available_threads};
pub(crate) use replicas::{ReplicaPlan, drive_replicas, with_replicas};
pub(crate) use sweep::{RawSweep, SweepDriver};
pub use vecs::{BatchVecs, ChainVecs};

use crate::kernels::BoxedKernel;
use crate::samplers::RunShape;
use crate::seeding::chain_rngs_from;
use langevin_core::binary::StepReport;
use langevin_core::stats::ChainStats;
use langevin_core::{Binary, Categorical, Chain, Domain, Eval, Ordinal};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A run's progress, shared between its workers and whoever watches it (a progress bar, a
/// signal handler, the Python interpreter): the steps taken so far, and a flag that cancels
/// the run. The runners count steps and check the flag at the same places, every step, so a
/// cancelled run returns [`RunError::Cancelled`] within a step of each chain.
#[derive(Debug, Default)]
pub struct Progress {
    steps: AtomicU64,
    cancelled: AtomicBool,
}

impl Progress {
    /// No steps, not cancelled.
    pub fn new() -> Self {
        Self::default()
    }

    /// The steps counted so far.
    pub fn steps(&self) -> u64 {
        self.steps.load(Ordering::Relaxed)
    }

    /// The step counter itself (for code that counts something else, such as coordinates).
    pub fn counter(&self) -> &AtomicU64 {
        &self.steps
    }

    /// Counts `n` more steps.
    pub fn add(&self, n: u64) {
        self.steps.fetch_add(n, Ordering::Relaxed);
    }

    /// Asks the run to stop: every chain stops at its next step and the runner returns
    /// [`RunError::Cancelled`].
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
    }

    /// Whether [`Progress::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
    }

    /// [`RunError::Cancelled`] once cancelled.
    pub(crate) fn check(&self) -> Result<(), RunError> {
        if self.is_cancelled() {
            Err(RunError::Cancelled)
        } else {
            Ok(())
        }
    }
}

/// [`Progress::check`] of an optional progress.
pub(crate) fn check_cancelled(progress: Option<&Progress>) -> Result<(), RunError> {
    progress.map_or(Ok(()), Progress::check)
}

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
    /// Worker threads (`0`: one per core); results do not depend on it.
    pub threads: usize,
    /// Index of the first chain (a shard): the run holds chains `first_chain ..
    /// first_chain + chains`, each with the stream, start and draws it has in one run of
    /// `first_chain + chains` chains. Results are still indexed from 0.
    pub first_chain: usize,
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

    /// [`map_chains_from`] over this run's chains: `one(c, stream of chain c)` for its
    /// `chains` chains from `first_chain`, on `threads` workers, the streams from `seed`.
    pub(crate) fn map_chains<R, E, F>(&self, one: F) -> Result<Chains<R>, E>
    where
        R: Send,
        E: Send + From<PoolError>,
        F: Fn(usize, Xoshiro256PlusPlus) -> Result<R, E> + Sync,
    {
        map_chains_from(
            self.seed,
            self.first_chain,
            self.threads,
            vec![(); self.chains],
            |c, (), rng| one(c, rng),
        )
    }
}

/// What [`map_chains`] returns: one result per chain, in chain order.
#[derive(Clone, Debug)]
pub struct Chains<R> {
    /// Chain `c`'s result at index `c`.
    pub results: Vec<R>,
    /// Worker threads the run used.
    pub threads: usize,
    /// Wall time of the chains (no loading or writing).
    pub wall_time: Duration,
}

/// Runs `one(c, input_c, stream of chain c)` for every input on a [`Pool`] of `threads`
/// workers (`0`: one per core; never more than there are chains) and returns the results in
/// chain order. Chain `c`'s stream is `chain_rngs(seed, n)[c]` whatever the thread count, so
/// the output is the same for every `threads`.
///
/// # Errors
///
/// The first error in chain order: a chain's own error, or the [`PoolError`] (converted into
/// `E`) of a chain that panicked or of a pool that could not start.
///
/// # Examples
///
/// ```
/// use langevin_std::run::{PoolError, map_chains};
/// use rand_core::Rng;
/// let draw = |threads| {
///     map_chains(7, threads, vec![(); 3], |_, (), mut rng| Ok::<_, PoolError>(rng.next_u64()))
///         .unwrap()
///         .results
/// };
/// assert_eq!(draw(1), draw(3));
/// ```
pub fn map_chains<T, R, E, F>(
    seed: u64,
    threads: usize,
    inputs: Vec<T>,
    one: F,
) -> Result<Chains<R>, E>
where
    T: Send,
    R: Send,
    E: Send + From<PoolError>,
    F: Fn(usize, T, Xoshiro256PlusPlus) -> Result<R, E> + Sync,
{
    map_chains_from(seed, 0, threads, inputs, one)
}

/// [`map_chains`] for the block of chains `first..first + inputs.len()` (a shard): input `i`
/// runs on the stream of chain `first + i`, so its result is the one chain `first + i` has in
/// one run of all the chains. `one` and the results are indexed from 0 within the block.
///
/// # Errors
///
/// As [`map_chains`].
///
/// # Examples
///
/// ```
/// use langevin_std::run::{PoolError, map_chains, map_chains_from};
/// use rand_core::Rng;
/// let draw = |mut rng: rand_xoshiro::Xoshiro256PlusPlus| Ok::<_, PoolError>(rng.next_u64());
/// let all = map_chains(7, 2, vec![(); 5], |_, (), rng| draw(rng)).unwrap().results;
/// let shard = map_chains_from(7, 3, 2, vec![(); 2], |_, (), rng| draw(rng)).unwrap().results;
/// assert_eq!(shard, all[3..]);
/// ```
pub fn map_chains_from<T, R, E, F>(
    seed: u64,
    first: usize,
    threads: usize,
    inputs: Vec<T>,
    one: F,
) -> Result<Chains<R>, E>
where
    T: Send,
    R: Send,
    E: Send + From<PoolError>,
    F: Fn(usize, T, Xoshiro256PlusPlus) -> Result<R, E> + Sync,
{
    let n = inputs.len();
    let pool = Pool::for_items(threads, n)?;
    let streams = chain_rngs_from(seed, first, n);
    let jobs: Vec<(T, Xoshiro256PlusPlus)> = inputs.into_iter().zip(streams).collect();
    let start = Instant::now();
    let results = pool.map(jobs, |c, (input, rng)| one(c, input, rng))?;
    Ok(Chains {
        results,
        threads: pool.threads(),
        wall_time: start.elapsed(),
    })
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
    /// Per coordinate, the sum of the values over every kept draw (also those only streamed
    /// through a [`Keep`]'s sink); empty when the chain was run without a keeper.
    pub sums: Vec<u64>,
    /// Kept draws, streamed ones included (`draws` holds every `stride`-th of them).
    pub kept: usize,
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
            sums: Vec::new(),
            kept: 0,
        }
    }
}

/// Where a run's kept draws go: draws of chain `chain`, numbered from 0 in the kept phase.
pub trait DrawSink<T>: Sync {
    /// Receives draws `first..` of `chain` (whole draws, flat, in order).
    ///
    /// # Errors
    ///
    /// The output's error; the run stops with [`RunError::Output`].
    fn write(&self, chain: usize, first: usize, draws: &[T]) -> std::io::Result<()>;
}

/// What a run does with each chain's kept draws: every one goes to `sink` (when given), and
/// every `stride`-th (the first, then every `stride`-th after it) stays in memory in
/// [`ChainResult::draws`] for the diagnostics. [`Keep::all`] keeps every draw in memory.
pub struct Keep<'a, T> {
    /// Keep one in `stride` draws in memory (at least 1).
    pub stride: u64,
    /// Where every kept draw goes besides.
    pub sink: Option<&'a dyn DrawSink<T>>,
    /// Where the chains save their snapshots, and the records they resume from (`None`: no
    /// checkpoints). Needs `stride` 1: a checkpoint holds every kept draw.
    pub checkpoint: Option<&'a Checkpoint>,
}

impl<T> Clone for Keep<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Keep<'_, T> {}

impl<T> fmt::Debug for Keep<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Keep")
            .field("stride", &self.stride)
            .field("sink", &self.sink.is_some())
            .field("checkpoint", &self.checkpoint.map(Checkpoint::path))
            .finish()
    }
}

impl<T> Keep<'_, T> {
    /// Every draw in memory, none elsewhere.
    pub fn all() -> Self {
        Keep {
            stride: 1,
            sink: None,
            checkpoint: None,
        }
    }

    /// Draws one chain keeps in memory out of `kept`: `⌈kept / stride⌉`.
    pub fn in_memory(&self, kept: usize) -> usize {
        kept.div_ceil(self.stride.max(1) as usize)
    }
}

/// Bytes of draws a chain gathers before handing them to the sink.
const SINK_BATCH_BYTES: usize = 1 << 20;

/// One chain's side of a [`Keep`]: sums every kept draw, keeps every `stride`-th in the
/// result and streams them all to the sink in batches.
pub(crate) struct Keeper<'a, T> {
    keep: Keep<'a, T>,
    chain: usize,
    /// Draws seen so far.
    seen: u64,
    /// Draws already handed to the sink.
    flushed: usize,
    batch: Vec<T>,
    dim: usize,
}

impl<'a, T: Copy + Into<u64>> Keeper<'a, T> {
    /// Chain `chain` of a run keeping draws of `dim` values by `keep`.
    pub(crate) fn new(keep: Keep<'a, T>, chain: usize, dim: usize) -> Self {
        Self {
            keep,
            chain,
            seen: 0,
            flushed: 0,
            batch: Vec::new(),
            dim: dim.max(1),
        }
    }

    /// Room in `result` for the draws this chain keeps in memory out of `kept`.
    pub(crate) fn reserve(&self, result: &mut ChainResult<T>, kept: usize, log_density: bool) {
        let n = self.keep.in_memory(kept);
        result.draws.reserve_exact(n.saturating_mul(self.dim));
        if log_density {
            result.log_density.reserve_exact(n);
        }
        result.sums = vec![0; self.dim];
    }

    /// A kept draw (`u`: `U` there, where tracked).
    pub(crate) fn keep(
        &mut self,
        state: &[T],
        u: Option<f64>,
        result: &mut ChainResult<T>,
    ) -> Result<(), RunError> {
        if result.sums.len() != state.len() {
            result.sums = vec![0; state.len()];
        }
        for (s, &x) in result.sums.iter_mut().zip(state) {
            *s += x.into();
        }
        result.kept += 1;
        if self.seen.is_multiple_of(self.keep.stride.max(1)) {
            result.draws.extend_from_slice(state);
            if let Some(u) = u {
                result.log_density.push(u);
            }
        }
        self.seen += 1;
        if self.keep.sink.is_some() {
            self.batch.extend_from_slice(state);
            if self.batch.len() * std::mem::size_of::<T>() >= SINK_BATCH_BYTES {
                self.flush()?;
            }
        }
        Ok(())
    }

    /// Puts back the kept draws of a checkpoint's record (`stride` 1): into `result`, and
    /// to the sink.
    pub(crate) fn restore(
        &mut self,
        draws: Vec<T>,
        log_density: Vec<f64>,
        result: &mut ChainResult<T>,
    ) -> Result<(), RunError> {
        let kept = draws.len() / self.dim;
        result.sums = vec![0; self.dim];
        for draw in draws.chunks_exact(self.dim) {
            for (s, &x) in result.sums.iter_mut().zip(draw) {
                *s += x.into();
            }
        }
        result.kept = kept;
        self.seen = kept as u64;
        if let Some(sink) = self.keep.sink
            && kept > 0
        {
            sink.write(self.chain, 0, &draws)
                .map_err(RunError::Output)?;
        }
        self.flushed = kept;
        result.draws = draws;
        result.log_density = log_density;
        Ok(())
    }

    /// Hands the gathered draws to the sink.
    pub(crate) fn flush(&mut self) -> Result<(), RunError> {
        if let Some(sink) = self.keep.sink
            && !self.batch.is_empty()
        {
            sink.write(self.chain, self.flushed, &self.batch)
                .map_err(RunError::Output)?;
            self.flushed += self.batch.len() / self.dim;
            self.batch.clear();
        }
        Ok(())
    }
}

/// The outcome of a run of discrete chains; `T` is the state type (`u8` binary, `u16` labels).
#[derive(Clone, Debug)]
pub struct DiscreteRun<T = u8> {
    /// Per-chain results, in chain order.
    pub chains: Vec<ChainResult<T>>,
    /// The dimension.
    pub dim: usize,
    /// Wall time of the sampling loops (no loading or writing).
    pub wall_time: Duration,
    /// Worker threads the run used (the diagnostics use as many).
    pub threads: usize,
}

impl<T: Copy + Into<u64>> DiscreteRun<T> {
    /// The run of dimension `dim` that [`map_chains`] returned.
    pub fn new(dim: usize, run: Chains<ChainResult<T>>) -> Self {
        Self {
            chains: run.results,
            dim,
            wall_time: run.wall_time,
            threads: run.threads,
        }
    }

    /// All kept draws, `(chains, kept, d)` row-major.
    pub fn samples(&self) -> Vec<T> {
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

    /// Steps taken over the whole run (burn-in, tuning and kept phase, all chains).
    pub fn steps_taken(&self) -> u64 {
        self.chains
            .iter()
            .map(|c| c.stats.steps + c.burn_in_stats.steps)
            .sum()
    }

    /// Per-coordinate mean of the kept draws over all chains.
    pub fn means(&self) -> Vec<f64> {
        let dim = self.dim;
        let mut sums = vec![0u64; dim];
        let mut n = 0u64;
        for c in &self.chains {
            if c.sums.len() == dim && dim > 0 {
                // Every kept draw, also those only streamed.
                for (s, &x) in sums.iter_mut().zip(&c.sums) {
                    *s += x;
                }
                n += c.kept as u64;
                continue;
            }
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

    /// Mean distance moved per kept step: Hamming distance between consecutive states
    /// (binary: the accepted flips per step, except that a Gibbs sweep flipping a site twice
    /// moves it not at all), L1 (ordinal) or changed labels (categorical).
    pub fn mean_jump(&self) -> f64 {
        let steps = self.stats().steps;
        if steps == 0 {
            return 0.0;
        }
        self.chains.iter().map(|c| c.jump).sum::<u64>() as f64 / steps as f64
    }

    /// The tuned parameters of every chain as a JSON array (`None` for fixed samplers).
    pub fn tuned(&self) -> Option<serde_json::Value> {
        if self.chains.iter().all(|c| c.tuned.is_none()) {
            return None;
        }
        Some(serde_json::Value::Array(
            self.chains
                .iter()
                .map(|c| c.tuned.clone().unwrap_or(serde_json::Value::Null))
                .collect(),
        ))
    }
}

/// A step's report and the distance it moved the chain.
pub(crate) type Stepped = Result<(StepReport, u64), RunError>;

/// One chain as the run loop sees it.
pub(crate) trait ChainDriver {
    /// The state type.
    type Value: Copy;
    /// One step: its report and the distance moved.
    fn step(&mut self) -> Stepped;
    /// The current state.
    fn state(&self) -> &[Self::Value];
    /// `U` at the current state, where tracked.
    fn log_density(&self) -> Option<f64>;
    /// Whether the kernel is still adapting.
    fn is_tuning(&self) -> bool {
        false
    }
    /// Ends adaptation where the kernel allows it.
    fn stop_tuning(&mut self) {}
    /// The tuned parameters.
    fn tuned(&self) -> Option<serde_json::Value> {
        None
    }
    /// What a checkpoint saves of the chain (state, stream, kernel state).
    ///
    /// # Errors
    ///
    /// [`CheckpointError::Unsupported`] for a chain whose state cannot be saved (the
    /// default).
    fn save(&self) -> Result<DriverState, CheckpointError> {
        Err(CheckpointError::Unsupported {
            what: "this sampler's chains (their kernel state cannot be saved)".into(),
        })
    }
    /// Puts back what [`ChainDriver::save`] returned.
    ///
    /// # Errors
    ///
    /// A [`RunError::Checkpoint`] when the saved state does not fit the chain.
    fn restore(&mut self, _saved: &DriverState) -> Result<(), RunError> {
        Err(CheckpointError::Unsupported {
            what: "this sampler's chains (their kernel state cannot be saved)".into(),
        }
        .into())
    }
}

/// What a checkpoint saves of a chain stepped on a raw state with no tracked `U` and a kernel
/// with nothing of its own to save (Gibbs sweeps: a sweep ends where it began): the state,
/// the stream, and the target's running sums (`sums`: see [`Eval::running_sums`]).
pub(crate) fn save_raw<V: Saved>(x: &[V], rng: &Xoshiro256PlusPlus, sums: &[f64]) -> DriverState {
    DriverState {
        state: x.iter().map(|&v| v.to_word()).collect(),
        rng: rng.clone(),
        kernel: serde_json::Value::Null,
        log_density: None,
        grad: Vec::new(),
        sums: sums.iter().map(|s| s.to_bits()).collect(),
    }
}

/// Puts back into `x` and `rng` what [`save_raw`] returned; the caller evaluates the target
/// at `x` and then puts its running sums back with [`restore_sums`].
///
/// # Errors
///
/// A [`RunError::Checkpoint`] when the record does not fit (another length, values out of
/// range, a kernel state or a tracked `U`).
pub(crate) fn restore_raw<V: Saved>(
    x: &mut [V],
    rng: &mut Xoshiro256PlusPlus,
    saved: &DriverState,
) -> Result<(), RunError> {
    let values: Option<Vec<V>> = saved.values();
    match values {
        Some(v) if v.len() == x.len() && saved.kernel.is_null() && saved.log_density.is_none() => {
            x.copy_from_slice(&v);
            *rng = saved.rng.clone();
            Ok(())
        }
        _ => Err(misfit("state")),
    }
}

/// Puts the saved running sums back into a target's, `sums` (its
/// [`Eval::running_sums_mut`]), once it has been evaluated at the restored state: a fresh
/// evaluation need not give their last bits, and the next steps depend on them.
///
/// # Errors
///
/// A [`RunError::Checkpoint`] when the record holds another number of sums.
pub(crate) fn restore_sums(sums: &mut [f64], saved: &DriverState) -> Result<(), RunError> {
    if sums.len() != saved.sums.len() {
        return Err(misfit("running sums"));
    }
    for (s, &w) in sums.iter_mut().zip(&saved.sums) {
        *s = f64::from_bits(w);
    }
    Ok(())
}

/// The error for a checkpoint record whose `what` does not fit the chain.
pub(crate) fn misfit(what: &str) -> RunError {
    RunError::Checkpoint(CheckpointError::Unsupported {
        what: format!("a record whose {what} does not fit this chain"),
    })
}

/// A chain of any domain stepped by a kernel of the registry through its cached `U` and `∇U`.
pub(crate) struct KernelDriver<'c, D: Domain, T: Eval<D>> {
    /// The chain.
    pub(crate) chain: Chain<'c, D>,
    /// The target.
    pub(crate) target: T,
    /// The kernel (a sampler of the registry).
    pub(crate) kernel: BoxedKernel<D, T>,
    /// The chain's stream.
    pub(crate) rng: Xoshiro256PlusPlus,
    /// Where the distance moved is measured (Gibbs sweeps, ordinal chains): room for the state
    /// before the step; else the distance is the step's accepted flips.
    pub(crate) previous: Option<Vec<D::Value>>,
}

impl<'c, D: Domain, T: Eval<D>> KernelDriver<'c, D, T> {
    /// The driver of `chain` on `target` with `kernel` and the chain's stream; `previous`
    /// as for the field.
    pub(crate) fn new(
        chain: Chain<'c, D>,
        target: T,
        kernel: BoxedKernel<D, T>,
        rng: Xoshiro256PlusPlus,
        previous: Option<Vec<D::Value>>,
    ) -> Self {
        Self {
            chain,
            target,
            kernel,
            rng,
            previous,
        }
    }
}

/// The distance a step moves a chain of the domain: Hamming (binary, categorical) or L1
/// (ordinal).
pub(crate) trait Jump: Domain<Value: Saved> {
    /// The distance between two states.
    fn jump(a: &[Self::Value], b: &[Self::Value]) -> u64;
}

impl Jump for Binary {
    fn jump(a: &[u8], b: &[u8]) -> u64 {
        hamming(a, b)
    }
}

impl Jump for Ordinal {
    fn jump(a: &[u16], b: &[u16]) -> u64 {
        manhattan(a, b)
    }
}

impl Jump for Categorical {
    fn jump(a: &[u16], b: &[u16]) -> u64 {
        hamming(a, b)
    }
}

impl<D: Jump, T: Eval<D>> ChainDriver for KernelDriver<'_, D, T> {
    type Value = D::Value;
    fn step(&mut self) -> Stepped {
        if let Some(p) = &mut self.previous {
            p.copy_from_slice(self.chain.state());
        }
        let r = self
            .kernel
            .step(&mut self.target, &mut self.chain, &mut self.rng)
            .map_err(RunError::evaluation)?;
        let jump = match &self.previous {
            Some(p) => D::jump(p, self.chain.state()),
            None => u64::from(r.accepted_flips()),
        };
        Ok((r, jump))
    }
    fn state(&self) -> &[D::Value] {
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
    fn save(&self) -> Result<DriverState, CheckpointError> {
        let kernel = self
            .kernel
            .save()
            .ok_or_else(|| CheckpointError::Unsupported {
                what: format!(
                    "{} (its kernel's state cannot be saved)",
                    self.kernel.name()
                ),
            })?;
        Ok(DriverState {
            state: self.chain.state().iter().map(|&v| v.to_word()).collect(),
            rng: self.rng.clone(),
            kernel,
            log_density: Some(self.chain.log_density().to_bits()),
            grad: self.chain.grad().iter().map(|g| g.to_bits()).collect(),
            sums: self
                .target
                .running_sums()
                .iter()
                .map(|s| s.to_bits())
                .collect(),
        })
    }
    fn restore(&mut self, saved: &DriverState) -> Result<(), RunError> {
        let x: Vec<D::Value> = saved.values().ok_or_else(|| misfit("state"))?;
        self.chain
            .reset(&x, &mut self.target)
            .map_err(RunError::restoring)?;
        // A fresh evaluation at the saved state gives the saved U up to the rounding of the
        // target's running sums; the saved sums, U and ∇U then replace the fresh ones, so that
        // the next steps are bit for bit those of the run that saved them.
        let fresh = self.chain.log_density();
        let u = saved.log_density.map(f64::from_bits).unwrap_or(f64::NAN);
        let close = (fresh - u).abs() <= 1e-9 * (1.0 + u.abs());
        if !close {
            return Err(CheckpointError::Restore(ModelError::NotTheSavedTarget {
                fresh,
                saved: u,
            })
            .into());
        }
        restore_sums(self.target.running_sums_mut(), saved)?;
        let grad: Vec<f32> = saved.grad.iter().map(|&w| f32::from_bits(w)).collect();
        self.chain
            .restore_cached::<T::Error>(u, &grad)
            .map_err(RunError::restoring)?;
        if !self.kernel.restore(&saved.kernel) {
            return Err(misfit("kernel state"));
        }
        self.rng = saved.rng.clone();
        Ok(())
    }
}

/// Coordinates where two states differ.
pub(crate) fn hamming<V: PartialEq>(a: &[V], b: &[V]) -> u64 {
    a.iter().zip(b).filter(|(x, y)| x != y).count() as u64
}

/// `Σ |a_i − b_i|`.
pub(crate) fn manhattan(a: &[u16], b: &[u16]) -> u64 {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| u64::from(x.abs_diff(y)))
        .sum()
}

/// Burn-in (extended while the kernel is still tuning, at most `tuning_cap` extra steps), then
/// the kept phase, its draws kept by `keeper`. `progress`, if given, is advanced by the steps
/// taken (in batches) and checked for cancellation every step.
///
/// With a checkpoint in the keeper's [`Keep`], the chain first continues from its record
/// there (if the checkpoint was resumed from a file that has one), then saves a snapshot of
/// itself between two steps whenever a checkpoint period has passed, and its final record
/// when it finishes.
pub(crate) fn drive<D: ChainDriver + ?Sized>(
    driver: &mut D,
    config: &RunConfig,
    tuning_cap: u64,
    progress: Option<&Progress>,
    mut keeper: Keeper<'_, D::Value>,
) -> Result<ChainResult<D::Value>, RunError>
where
    D::Value: Into<u64> + Saved,
{
    let mut result = ChainResult::default();
    keeper.reserve(&mut result, config.kept(), driver.log_density().is_some());
    let mut pos = Position::default();
    let mut saver = Saver::new(keeper.keep.checkpoint, keeper.chain);
    if let Some(ck) = saver.checkpoint {
        if keeper.keep.stride > 1 {
            return Err(CheckpointError::Unsupported {
                what: "a run whose kept draws exceed the memory limit (a checkpoint holds \
                       every kept draw: raise --max-memory)"
                    .into(),
            }
            .into());
        }
        driver.save()?;
        if let Some(record) = ck.begin(keeper.chain) {
            pos = restore(driver, &mut keeper, &mut result, &record)?;
            if let Some(p) = progress {
                p.add(result.stats.steps + result.burn_in_stats.steps);
            }
        }
    }
    let report_every = 1024u64;
    let mut pending = 0u64;
    let mut tick = || {
        pending += 1;
        if let Some(p) = progress {
            if pending >= report_every {
                p.add(pending);
                pending = 0;
            }
            p.check()?;
        }
        Ok::<(), RunError>(())
    };
    while pos.burn_in < config.burn_in {
        result.burn_in_stats.record(&driver.step()?.0);
        pos.burn_in += 1;
        tick()?;
        saver.maybe(driver, &result, &pos)?;
    }
    if !pos.tuned {
        while driver.is_tuning() && pos.extra < tuning_cap {
            result.burn_in_stats.record(&driver.step()?.0);
            pos.extra += 1;
            tick()?;
            saver.maybe(driver, &result, &pos)?;
        }
        driver.stop_tuning();
        pos.tuned = true;
    }
    let thin = config.thin.max(1);
    while pos.kept < config.steps && !pos.finished {
        let (report, jump) = driver.step()?;
        result.stats.record(&report);
        result.jump += jump;
        pos.kept += 1;
        if pos.kept % thin == 0 {
            keeper.keep(driver.state(), driver.log_density(), &mut result)?;
        }
        tick()?;
        saver.maybe(driver, &result, &pos)?;
    }
    keeper.flush()?;
    if let Some(p) = progress {
        p.add(pending);
    }
    pos.finished = true;
    saver.finish(driver, &result, &pos)?;
    result.tuned = driver.tuned();
    Ok(result)
}

/// A chain's side of a checkpoint: when it is due, and its snapshots.
struct Saver<'a> {
    checkpoint: Option<&'a Checkpoint>,
    chain: usize,
    /// The last period saved for.
    last: u64,
}

impl<'a> Saver<'a> {
    fn new(checkpoint: Option<&'a Checkpoint>, chain: usize) -> Self {
        Self {
            checkpoint,
            chain,
            last: 0,
        }
    }

    /// Saves a snapshot when a period has passed since the last.
    #[inline]
    fn maybe<D: ChainDriver + ?Sized>(
        &mut self,
        driver: &D,
        result: &ChainResult<D::Value>,
        pos: &Position,
    ) -> Result<(), RunError>
    where
        D::Value: Saved,
    {
        let Some(ck) = self.checkpoint else {
            return Ok(());
        };
        if ck.due(&mut self.last).is_some() {
            ck.save(snapshot(self.chain, driver, result, pos)?)?;
        }
        Ok(())
    }

    /// Saves the finished chain's record.
    fn finish<D: ChainDriver + ?Sized>(
        &mut self,
        driver: &D,
        result: &ChainResult<D::Value>,
        pos: &Position,
    ) -> Result<(), RunError>
    where
        D::Value: Saved,
    {
        if let Some(ck) = self.checkpoint {
            ck.save(snapshot(self.chain, driver, result, pos)?)?;
        }
        Ok(())
    }
}

/// Step totals as a checkpoint saves them.
fn totals(s: &ChainStats) -> checkpoint::Totals {
    [
        s.steps,
        s.accepted,
        s.proposed_flips,
        s.accepted_flips,
        s.invalid,
        s.evaluations,
    ]
}

/// Step totals from a checkpoint.
fn stats_of(t: &checkpoint::Totals) -> ChainStats {
    let [
        steps,
        accepted,
        proposed_flips,
        accepted_flips,
        invalid,
        evaluations,
    ] = *t;
    let mut s = ChainStats::default();
    (
        s.steps,
        s.accepted,
        s.proposed_flips,
        s.accepted_flips,
        s.invalid,
        s.evaluations,
    ) = (
        steps,
        accepted,
        proposed_flips,
        accepted_flips,
        invalid,
        evaluations,
    );
    s
}

/// Chain `chain`'s record now.
fn snapshot<D: ChainDriver + ?Sized>(
    chain: usize,
    driver: &D,
    result: &ChainResult<D::Value>,
    pos: &Position,
) -> Result<Record, RunError>
where
    D::Value: Saved,
{
    Ok(Record {
        meta: checkpoint::Meta {
            chain,
            position: *pos,
            stats: totals(&result.stats),
            burn_in_stats: totals(&result.burn_in_stats),
            jump: result.jump,
            kept: result.kept,
            driver: driver.save()?,
            width: D::Value::WIDTH,
        },
        draws: Record::encode(&result.draws),
        log_density: result.log_density.clone(),
    })
}

/// Puts a chain back where `record` left it; returns its position.
fn restore<D: ChainDriver + ?Sized>(
    driver: &mut D,
    keeper: &mut Keeper<'_, D::Value>,
    result: &mut ChainResult<D::Value>,
    record: &Record,
) -> Result<Position, RunError>
where
    D::Value: Into<u64> + Saved,
{
    let meta = &record.meta;
    let unfit = || {
        RunError::Checkpoint(CheckpointError::Unsupported {
            what: format!(
                "the record of chain {}: it does not fit the chain",
                meta.chain
            ),
        })
    };
    let draws: Vec<D::Value> = record.draws().ok_or_else(unfit)?;
    let dim = driver.state().len().max(1);
    if draws.len() != meta.kept * dim || draws.len() % dim != 0 {
        return Err(unfit());
    }
    driver.restore(&meta.driver)?;
    result.stats = stats_of(&meta.stats);
    result.burn_in_stats = stats_of(&meta.burn_in_stats);
    result.jump = meta.jump;
    keeper.restore(draws, record.log_density.clone(), result)?;
    Ok(meta.position)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::Rng;

    /// The draws and log-densities of a discrete run, as bits.
    fn bits<T: Copy + Into<u64>>(chains: &[ChainResult<T>]) -> Vec<u64> {
        chains
            .iter()
            .flat_map(|c| {
                let draws = c.draws.iter().map(|&v| v.into());
                draws.chain(c.log_density.iter().map(|u| u.to_bits()))
            })
            .collect()
    }

    /// Each chain's draws and log-densities, as bits.
    fn per_chain<T: Copy + Into<u64>>(chains: &[ChainResult<T>]) -> Vec<Vec<u64>> {
        chains
            .iter()
            .map(|c| bits(std::slice::from_ref(c)))
            .collect()
    }

    /// A run as a function of its settings: each chain's output.
    type Runner = Box<dyn Fn(&RunConfig) -> Vec<Vec<u64>>>;

    /// Every runner of a domain that has chains (single-chain kernels, lockstep groups, AB-2,
    /// the continuous driver) on a small model, as a function of the run's settings (its
    /// chains, the first chain's index and the threads): each chain's output.
    fn runners() -> Vec<(&'static str, Runner)> {
        use crate::ab2::{Ab2Settings, run_ab2_chains, run_ab2_ordinal_chains};
        use crate::binary::{BinaryModel, run_chains, run_chains_batched};
        use crate::continuous::{ContinuousConfig, GaussianSum, Model, SamplerKind};
        use crate::labels::{
            LabelModel, LabelStart, OrdinalModel, run_label_chains, run_label_chains_batched,
        };
        use crate::models::OrdinalQuadratic;
        use crate::samplers::Sampler;
        use langevin_core::models::{Dims, IsingLattice};
        let lattice = || {
            BinaryModel::Lattice(
                IsingLattice::with_dims(Dims { rows: 3, cols: 3 }, 0.3, 0.1, true).unwrap(),
            )
        };
        let rbm = || {
            let (v, h) = (6, 4);
            let w = (0..v * h)
                .map(|k| ((k * 7 % 11) as f32 - 5.0) / 8.0)
                .collect();
            BinaryModel::rbm(w, vec![0.1; v], vec![-0.2; h])
        };
        let ordinal = || {
            let a = vec![-0.4, 0.1, 0.0, 0.1, -0.5, 0.2, 0.0, 0.2, -0.3];
            OrdinalModel::Quadratic(
                OrdinalQuadratic::new(5, a, vec![1.0, 2.0, 3.0], vec![0.1, -0.2, 0.0]).unwrap(),
            )
        };
        let dmala = Sampler::named("dmala", |p| p.step = 0.3).unwrap();
        let label_dmala = Sampler::named("dmala", |p| p.step = 1.0).unwrap();
        let mut ab2 = Ab2Settings::default();
        ab2.first.budget = 100;
        ab2.second_budget = 100;
        let ab2_ordinal = ab2.clone();
        vec![
            (
                "dmala",
                Box::new(move |config: &RunConfig| {
                    per_chain(
                        &run_chains(&lattice(), &dmala, config, None, Keep::all())
                            .unwrap()
                            .chains,
                    )
                }),
            ),
            (
                "dmala --batch 2 (rbm)",
                Box::new(move |config: &RunConfig| {
                    let run = run_chains_batched(&rbm(), &dmala, config, 2, None);
                    per_chain(&run.unwrap().chains)
                }),
            ),
            (
                "ab-2",
                Box::new(move |config: &RunConfig| {
                    per_chain(
                        &run_ab2_chains(&lattice(), &ab2, config, None, Keep::all())
                            .unwrap()
                            .chains,
                    )
                }),
            ),
            (
                "ab-2 (ordinal)",
                Box::new(move |config: &RunConfig| {
                    let run =
                        run_ab2_ordinal_chains(&ordinal(), &ab2_ordinal, config, None, Keep::all());
                    per_chain(&run.unwrap().chains)
                }),
            ),
            (
                "dmala (labels)",
                Box::new(move |config: &RunConfig| {
                    let model = LabelModel::Ordinal(ordinal());
                    let start = &LabelStart::Uniform;
                    let run =
                        run_label_chains(&model, &label_dmala, config, start, None, Keep::all());
                    per_chain(&run.unwrap().chains)
                }),
            ),
            (
                "dmala --batch 2 (labels)",
                Box::new(move |config: &RunConfig| {
                    let model = LabelModel::Ordinal(ordinal());
                    let run = run_label_chains_batched(&model, &label_dmala, config, 2, None);
                    per_chain(&run.unwrap().chains)
                }),
            ),
            (
                "sgld (continuous)",
                Box::new(|config: &RunConfig| {
                    let model = Model::GaussianSum(GaussianSum::synthetic(20, 2, 1).unwrap());
                    let mut cfg = ContinuousConfig::new(model, SamplerKind::Sgld, 0.01);
                    (cfg.chains, cfg.first_chain) = (config.chains, config.first_chain);
                    (cfg.threads, cfg.batch) = (config.threads, 2);
                    let run = crate::continuous::run(&cfg).unwrap();
                    let bits: Vec<u64> =
                        run.samples.iter().map(|v| u64::from(v.to_bits())).collect();
                    bits.chunks(bits.len() / config.chains)
                        .map(<[u64]>::to_vec)
                        .collect()
                }),
            ),
        ]
    }

    /// The settings of the runs of [`runners`]: `chains` chains from `first_chain`, on 2
    /// threads.
    fn config(first_chain: usize, chains: usize) -> RunConfig {
        RunConfig {
            steps: 40,
            burn_in: 10,
            thin: 1,
            chains,
            seed: 23,
            threads: 2,
            first_chain,
        }
    }

    #[test]
    fn shards_of_every_runner_hold_the_chains_of_one_run_bit_for_bit() {
        for (name, runner) in runners() {
            let all = runner(&config(0, 5));
            assert_eq!(all.len(), 5, "{name}");
            assert!(all.iter().all(|c| !c.is_empty()), "{name}");
            assert_ne!(all[0], all[1], "{name}: chains 0 and 1 drew the same");
            // Shards of 2 + 3 and 4 + 1 chains, and one chain (its group padded); lockstep
            // groups (of 2) start at an even chain, others anywhere.
            let mut shards = vec![(0, 2), (2, 3), (0, 1), (4, 1), (2, 1)];
            if !name.contains("--batch") {
                shards.extend([(1, 4), (3, 2)]);
            }
            for (first, chains) in shards {
                let shard = runner(&config(first, chains));
                assert_eq!(
                    shard,
                    all[first..first + chains],
                    "{name}: chains {first}+{chains}"
                );
            }
        }
    }

    #[test]
    fn a_lockstep_shard_that_splits_a_group_is_refused() {
        use crate::binary::{BinaryModel, run_chains_batched};
        use crate::samplers::Sampler;
        let model = BinaryModel::rbm(vec![0.5; 6], vec![0.1; 3], vec![-0.2; 2]);
        let dmala = Sampler::named("dmala", |p| p.step = 0.3).unwrap();
        let config = |first_chain| RunConfig {
            steps: 10,
            burn_in: 0,
            thin: 1,
            chains: 3,
            seed: 1,
            threads: 1,
            first_chain,
        };
        assert!(run_chains_batched(&model, &dmala, &config(4), 2, None).is_ok());
        match run_chains_batched(&model, &dmala, &config(3), 2, None) {
            Err(RunError::ShardNotAligned {
                first_chain: 3,
                batch: 2,
            }) => {}
            other => panic!("expected ShardNotAligned, got {other:?}"),
        }
    }

    #[test]
    fn a_panicking_chain_is_an_error_never_fewer_chains() {
        for threads in 1..=3 {
            let out = map_chains(5, threads, vec![(); 4], |c, (), mut rng| {
                if c == 2 {
                    panic!("chain {c} failed on purpose");
                }
                Ok::<_, RunError>(rng.next_u64())
            });
            match out {
                Err(RunError::WorkerPanicked { chain, message }) => {
                    assert_eq!(chain, 2);
                    assert_eq!(message, "chain 2 failed on purpose");
                }
                Err(e) => panic!("threads {threads}: wrong error {e}"),
                Ok(run) => panic!(
                    "threads {threads}: {} chains and no error",
                    run.results.len()
                ),
            }
        }
    }

    #[test]
    fn chain_streams_do_not_depend_on_the_thread_count() {
        let draws = |threads| {
            let run = map_chains(9, threads, vec![(); 5], |c, (), mut rng| {
                Ok::<_, RunError>((c, rng.next_u64()))
            })
            .unwrap();
            assert_eq!(run.threads, threads);
            run.results
        };
        let one = draws(1);
        for (c, (i, v)) in one.iter().enumerate() {
            assert_eq!((c, *v), (*i, crate::seeding::chain_rng(9, c).next_u64()));
        }
        assert_eq!(draws(2), one);
        assert_eq!(draws(3), one);
    }

    #[test]
    fn a_cancelled_run_stops_and_a_watched_one_is_unchanged() {
        use crate::ab2::Ab2Settings;
        use crate::binary::BinaryModel;
        use crate::samplers::{Sampler, SamplerPlan};
        use langevin_core::models::{Dims, IsingLattice};
        let config = RunConfig {
            steps: 50,
            burn_in: 10,
            thin: 1,
            chains: 3,
            seed: 5,
            threads: 2,
            first_chain: 0,
        };
        let model = BinaryModel::Lattice(
            IsingLattice::with_dims(Dims { rows: 4, cols: 4 }, 0.3, 0.1, true).unwrap(),
        );
        let mut ab2 = Ab2Settings::default();
        ab2.first.budget = 100;
        ab2.second_budget = 100;
        let dmala = SamplerPlan::Kernel(Sampler::named("dmala", |p| p.step = 0.3).unwrap());
        for plan in [dmala, SamplerPlan::Ab2(ab2)] {
            let run = |p: Option<&Progress>| {
                run_binary_plan(&model, "test", &plan, &config, None, p, Keep::all())
            };
            let cancelled = Progress::new();
            cancelled.cancel();
            assert!(matches!(run(Some(&cancelled)), Err(RunError::Cancelled)));
            let watched = Progress::new();
            let (with, without) = (run(Some(&watched)).unwrap(), run(None).unwrap());
            assert_eq!(bits(&with.chains), bits(&without.chains));
            assert!(watched.steps() >= 3 * 60 && !watched.is_cancelled());
        }
    }

    #[test]
    fn every_runner_gives_the_same_output_on_1_2_and_3_threads() {
        for (name, runner) in runners() {
            let on = |threads| {
                runner(&RunConfig {
                    threads,
                    ..config(0, 5)
                })
            };
            let reference = on(1);
            assert!(reference.iter().all(|c| !c.is_empty()), "{name}");
            assert_eq!(on(2), reference, "{name}");
            assert_eq!(on(3), reference, "{name}");
        }
    }
}
