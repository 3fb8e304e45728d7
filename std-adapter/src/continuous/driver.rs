//! Running many chains of a continuous sampler and summarising them.

use super::data::write_npy_f32;
use super::{
    ConfigError, ContinuousError, GaussianMixture, GaussianSum, LogisticRegression, Model,
    RidgeRegression,
};
use crate::io::DrawsFile;
use crate::run::{PoolError, map_chains_from};
use langevin_core::ParamError;
use langevin_core::continuous::{
    Access, Agld, AgldSettings, DenseSnapshots, Ewsg, EwsgSettings, GlmSumTarget, Langevin,
    LangevinSettings, PointSnapshot, ScalarSnapshots, SgChain, SnapshotStore, SnapshotUpdate,
    SumTarget, Underdamped, UnderdampedSettings,
};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};
use std::convert::Infallible;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Instant;

/// Which integrator to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SamplerKind {
    /// Overdamped Langevin with the full gradient.
    Lmc,
    /// Overdamped Langevin with minibatch gradients.
    Sgld,
    /// Underdamped Langevin (Euler–Maruyama) with uniform minibatch gradients.
    Sghmc,
    /// Underdamped Langevin with exponentially weighted minibatches.
    Ewsg,
    /// Aggregated-gradient Langevin (SVRG-LD, SAGA-LD, TMU).
    Agld,
}

impl SamplerKind {
    /// Every integrator, in the order the errors list them.
    pub const ALL: [SamplerKind; 5] = [
        SamplerKind::Lmc,
        SamplerKind::Sgld,
        SamplerKind::Sghmc,
        SamplerKind::Ewsg,
        SamplerKind::Agld,
    ];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            SamplerKind::Lmc => "lmc",
            SamplerKind::Sgld => "sgld",
            SamplerKind::Sghmc => "sghmc",
            SamplerKind::Ewsg => "ewsg",
            SamplerKind::Agld => "agld",
        }
    }
}

impl fmt::Display for SamplerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for SamplerKind {
    type Err = ContinuousError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_named(s, "sampler", &SamplerKind::ALL.map(|k| (k.name(), k)))
    }
}

/// The value named `s` among `values` (name, value), or [`ContinuousError::Config`] naming
/// the `what` and listing the names.
fn parse_named<T: Copy>(
    s: &str,
    what: &'static str,
    values: &[(&'static str, T)],
) -> Result<T, ContinuousError> {
    match values.iter().find(|(name, _)| *name == s) {
        Some(&(_, value)) => Ok(value),
        None => Err(ConfigError::UnknownName {
            what,
            text: s.to_owned(),
            names: values.iter().map(|(name, _)| *name).collect(),
        }
        .into()),
    }
}

/// AGLD's snapshot update (the period `D` is [`ContinuousConfig::period`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SnapshotKind {
    /// PTU: refresh everything every `D` steps (SVRG-LD).
    Total,
    /// PPU: replace the minibatch's entries every step (SAGA-LD).
    Partial,
    /// TMU: both.
    Mixed,
}

impl FromStr for SnapshotKind {
    type Err = ContinuousError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let names = [
            ("total", SnapshotKind::Total),
            ("partial", SnapshotKind::Partial),
            ("mixed", SnapshotKind::Mixed),
        ];
        parse_named(s, "snapshot update", &names)
    }
}

/// Where AGLD keeps its snapshot.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StorageKind {
    /// Total updates keep only the snapshot point; partial and mixed updates keep `N` scalars
    /// when the model is a GLM, else an `N × d` table.
    #[default]
    Auto,
    /// An `N × d` table (with total updates: `n` instead of `2n` gradients per step).
    Dense,
    /// `N` scalars (GLM models only; the prior's gradient is then always exact).
    Scalar,
}

/// Parses an access name: `random`, `reshuffle` or `cyclic`.
///
/// # Errors
///
/// [`ContinuousError::Config`] for another name.
pub fn parse_access(s: &str) -> Result<Access, ContinuousError> {
    let names = [
        ("random", Access::Random),
        ("reshuffle", Access::Reshuffle),
        ("cyclic", Access::Cyclic),
    ];
    parse_named(s, "access", &names)
}

/// What [`run`] does.
///
/// Each chain runs `burn_in_passes + passes` data passes (counted in per-term gradient
/// evaluations, `N` per pass) and keeps `draws_per_pass` draws per pass after the burn-in:
/// draw `k` is the state after the first step at which the chain's evaluation count reaches
/// `burn-in + (k + 1) N / draws_per_pass` (a step that crosses several such marks, like a
/// full refresh, gives the same state to each of them).
#[derive(Clone, Debug)]
pub struct ContinuousConfig {
    /// The posterior.
    pub model: Model,
    /// The integrator.
    pub sampler: SamplerKind,
    /// Step `h`.
    pub step: f64,
    /// Friction `γ` of SGHMC and EWSG (default 1).
    pub friction: f64,
    /// Minibatch size `n` (default 1; ignored by LMC).
    pub batch: usize,
    /// EWSG's index-chain length `M` (default 1).
    pub index_chain: u32,
    /// Data access of SGLD, SGHMC and AGLD (default random).
    pub access: Access,
    /// AGLD's snapshot update (default mixed, i.e. TMU).
    pub snapshot: SnapshotKind,
    /// AGLD's period `D` (default `⌈N/n⌉`, one data pass of minibatch steps).
    pub period: Option<u64>,
    /// AGLD's snapshot storage.
    pub storage: StorageKind,
    /// Data passes per chain after the burn-in.
    pub passes: f64,
    /// Data passes per chain before the first kept draw (default 0).
    pub burn_in_passes: f64,
    /// Kept draws per data pass (default 1).
    pub draws_per_pass: u32,
    /// Number of chains `C`.
    pub chains: usize,
    /// Chain `c` uses `Xoshiro256PlusPlus::seed_from_u64(seed)` advanced by `c` jumps.
    pub seed: u64,
    /// Starting point of every chain (default zero).
    pub init: Option<Vec<f64>>,
    /// Worker threads (0: all cores). Results do not depend on it.
    pub threads: usize,
    /// Index of the first chain (a shard, default 0): the run holds chains `first_chain ..
    /// first_chain + chains`, each with the stream and draws it has in one run of
    /// `first_chain + chains` chains.
    pub first_chain: usize,
}

impl ContinuousConfig {
    /// A configuration with the defaults above: 10 passes, 4 chains, seed 0.
    pub fn new(model: Model, sampler: SamplerKind, step: f64) -> Self {
        Self {
            model,
            sampler,
            step,
            friction: 1.0,
            batch: 1,
            index_chain: 1,
            access: Access::Random,
            snapshot: SnapshotKind::Mixed,
            period: None,
            storage: StorageKind::Auto,
            passes: 10.0,
            burn_in_passes: 0.0,
            draws_per_pass: 1,
            chains: 4,
            seed: 0,
            init: None,
            threads: 0,
            first_chain: 0,
        }
    }

    /// Kept draws per chain: `passes · draws_per_pass`, rounded.
    pub fn draws_per_chain(&self) -> usize {
        (self.passes * f64::from(self.draws_per_pass)).round() as usize
    }

    /// The name of the configured method, as in the papers: `LMC`, `SGLD`, `SGHMC`, `EWSG`,
    /// or `SVRG-LD` / `SAGA-LD` / `TMU-RA` and the `PTU-`, `PPU-`, `TMU-` names with `RR`, `CA`.
    pub fn variant(&self) -> String {
        match self.sampler {
            SamplerKind::Lmc => "LMC".into(),
            SamplerKind::Sgld => "SGLD".into(),
            SamplerKind::Sghmc => "SGHMC".into(),
            SamplerKind::Ewsg => "EWSG".into(),
            SamplerKind::Agld => {
                let access = match self.access {
                    Access::Random => "RA",
                    Access::Reshuffle => "RR",
                    Access::Cyclic => "CA",
                };
                match (self.snapshot, self.access) {
                    (SnapshotKind::Total, Access::Random) => "SVRG-LD".into(),
                    (SnapshotKind::Partial, Access::Random) => "SAGA-LD".into(),
                    (SnapshotKind::Total, _) => format!("PTU-{access}"),
                    (SnapshotKind::Partial, _) => format!("PPU-{access}"),
                    (SnapshotKind::Mixed, _) => format!("TMU-{access}"),
                }
            }
        }
    }
}

/// The summary written next to the samples.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ContinuousSummary {
    /// The sampler's command-line name.
    pub sampler: String,
    /// The method's name as in the papers (e.g. `TMU-RA`).
    pub variant: String,
    /// `d`.
    pub dim: usize,
    /// `N`.
    pub terms: usize,
    /// `C`.
    pub chains: usize,
    /// Requested passes per chain after the burn-in.
    pub passes: f64,
    /// Kept draws per chain.
    pub draws_per_chain: usize,
    /// Steps over all chains.
    pub steps: u64,
    /// Per-term gradient evaluations over all chains.
    pub grad_evals: u64,
    /// `grad_evals` divided by the number of kept draws (burn-in included in the numerator).
    pub grad_evals_per_draw: f64,
    /// Data passes per chain actually spent (`grad_evals / (N C)`).
    pub data_passes: f64,
    /// Wall-clock time of the run.
    pub wall_time_s: f64,
    /// Time per step of one chain (summed over chains' own clocks, divided by steps).
    pub ns_per_step: f64,
    /// Mean of each coordinate over all kept draws.
    pub mean: Vec<f64>,
    /// Variance (divisor `n − 1`) of each coordinate over all kept draws.
    pub var: Vec<f64>,
}

/// The outcome of [`run`].
#[derive(Clone, Debug)]
pub struct ContinuousRun {
    /// Kept draws held in memory, `f32`, shape `(chains, draws, d)` row-major: all of them,
    /// or with [`run_keeping`] every `every`-th of each chain.
    pub samples: Vec<f32>,
    /// `[chains, draws, d]` of `samples`.
    pub shape: [usize; 3],
    /// One kept draw in `every` is in `samples` (1: all).
    pub every: usize,
    /// The summary.
    pub summary: ContinuousSummary,
}

impl ContinuousRun {
    /// Draw `k` of chain `c`.
    pub fn draw(&self, c: usize, k: usize) -> &[f32] {
        let [_, draws, d] = self.shape;
        let start = (c * draws + k) * d;
        &self.samples[start..start + d]
    }

    /// Writes the samples as a `.npy` of shape `(chains, draws, d)`.
    ///
    /// # Errors
    ///
    /// [`ContinuousError::Io`].
    pub fn write_samples(&self, path: &Path) -> Result<(), ContinuousError> {
        write_npy_f32(path, &self.shape, &self.samples)
    }

    /// Writes the summary as pretty JSON.
    ///
    /// # Errors
    ///
    /// [`ContinuousError::Io`].
    pub fn write_summary(&self, path: &Path) -> Result<(), ContinuousError> {
        let text =
            serde_json::to_string_pretty(&self.summary).map_err(ContinuousError::ModelFile)?;
        std::fs::write(path, text + "\n").map_err(|source| ContinuousError::Io {
            path: path.to_path_buf(),
            source,
        })
    }
}

impl From<PoolError> for ContinuousError {
    fn from(e: PoolError) -> Self {
        ContinuousError::Pool(e)
    }
}

impl From<ParamError> for ContinuousError {
    fn from(e: ParamError) -> Self {
        ContinuousError::Build(e.into())
    }
}

/// When draws are kept, in integer arithmetic: draw `k` once `evals · dpp ≥ burn · dpp + (k+1) N`.
#[derive(Clone, Copy, Debug)]
struct Plan {
    terms: u128,
    burn_evals: u128,
    per_pass: u128,
    draws: usize,
    dim: usize,
}

impl Plan {
    fn reached(&self, evals: u64, k: usize) -> bool {
        u128::from(evals) * self.per_pass
            >= self.burn_evals * self.per_pass + (k as u128 + 1) * self.terms
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct ChainStats {
    evals: u64,
    steps: u64,
    nanos: u128,
}

/// Steps `chain` until all draws of `plan` are kept in `out`.
fn drive<M: SumTarget<Error = Infallible> + ?Sized, C: SgChain<M>>(
    chain: &mut C,
    model: &mut M,
    plan: &Plan,
    lane: &mut Lane<'_>,
) -> Result<ChainStats, ContinuousError> {
    let (rng, index) = (&mut lane.rng, lane.index);
    let start = Instant::now();
    let mut stats = ChainStats::default();
    let mut k = 0;
    let mut slots = lane.out.chunks_exact_mut(plan.dim);
    let every = lane.keep.every.max(1);
    let (mut batch, mut flushed) = (Vec::new(), 0usize);
    let write_error = |e: std::io::Error| ContinuousError::Io {
        path: PathBuf::from("the kept draws"),
        source: e,
    };
    while k < plan.draws {
        let rep = chain
            .step_with(model, rng)
            .map_err(|error| ContinuousError::Step {
                chain: index,
                step: stats.steps,
                error,
            })?;
        stats.evals += u64::from(rep.grad_evals);
        stats.steps += 1;
        while k < plan.draws && plan.reached(stats.evals, k) {
            if k % every == 0
                && let Some(slot) = slots.next()
            {
                for (o, &t) in slot.iter_mut().zip(chain.position()) {
                    *o = t as f32;
                }
            }
            if let Some(file) = lane.keep.file {
                batch.extend(chain.position().iter().map(|&t| t as f32));
                if batch.len() >= BATCH_VALUES {
                    file.write_f32(index, flushed, &batch)
                        .map_err(write_error)?;
                    flushed += batch.len() / plan.dim.max(1);
                    batch.clear();
                }
            }
            k += 1;
        }
    }
    if let (Some(file), false) = (lane.keep.file, batch.is_empty()) {
        file.write_f32(index, flushed, &batch)
            .map_err(write_error)?;
    }
    stats.nanos = start.elapsed().as_nanos();
    Ok(stats)
}

/// One chain's stream, its share of the samples in memory and its index, and where every
/// kept draw goes besides.
struct Lane<'o> {
    rng: Xoshiro256PlusPlus,
    out: &'o mut [f32],
    index: usize,
    keep: ContinuousKeep<'o>,
}

/// What a continuous run does with its kept draws: every one is written to `file` (when
/// given), every `every`-th of each chain (the first, then every `every`-th after it) stays
/// in memory ([`ContinuousRun::samples`]).
#[derive(Clone, Copy, Debug)]
pub struct ContinuousKeep<'a> {
    /// One draw in `every` stays in memory (at least 1).
    pub every: usize,
    /// The `(chains, draws, d)` `<f4` file every draw goes to.
    pub file: Option<&'a DrawsFile>,
}

impl ContinuousKeep<'_> {
    /// Every draw in memory, none elsewhere.
    pub fn all() -> Self {
        Self {
            every: 1,
            file: None,
        }
    }
}

/// Values a chain gathers before writing them to the file.
const BATCH_VALUES: usize = 1 << 18;

/// What one chain needs besides its model and stream.
struct ChainJob<'c> {
    cfg: &'c ContinuousConfig,
    plan: Plan,
    init: &'c [f64],
}

/// A model the driver can run: the scalar-snapshot path exists only for GLMs.
trait DriverModel: SumTarget<Error = Infallible> + Clone + Send + Sync {
    fn run_scalar_agld(
        &mut self,
        _job: &ChainJob<'_>,
        _settings: AgldSettings,
        _lane: &mut Lane<'_>,
    ) -> Option<Result<ChainStats, ContinuousError>> {
        None
    }
}

fn scalar_agld<M: GlmSumTarget<Error = Infallible>>(
    model: &mut M,
    job: &ChainJob<'_>,
    settings: AgldSettings,
    lane: &mut Lane<'_>,
) -> Result<ChainStats, ContinuousError> {
    let (d, n) = (model.dim(), model.num_terms());
    let mut snap = vec![0.0; ScalarSnapshots::len(d, n).ok_or_else(too_large)?];
    let store = ScalarSnapshots::new(d, n, &mut snap)?;
    agld(model, job, settings, store, lane)
}

/// AGLD with the snapshot `store`.
fn agld<M, S>(
    model: &mut M,
    job: &ChainJob<'_>,
    settings: AgldSettings,
    store: S,
    lane: &mut Lane<'_>,
) -> Result<ChainStats, ContinuousError>
where
    M: SumTarget<Error = Infallible> + ?Sized,
    S: SnapshotStore<M>,
{
    let (d, n) = (model.dim(), model.num_terms());
    let mut work = vec![0.0; Agld::<S>::workspace_len(d)];
    let mut idx = vec![0; Agld::<S>::index_len(&settings, n)];
    let mut chain = Agld::new(settings, d, n, job.init, store, &mut work, &mut idx)?;
    drive(&mut chain, model, &job.plan, lane)
}

fn too_large() -> ContinuousError {
    ConfigError::TooLarge.into()
}

impl DriverModel for GaussianSum {}

macro_rules! glm_driver_model {
    ($($t:ty),*) => {$(
        impl DriverModel for $t {
            fn run_scalar_agld(
                &mut self,
                job: &ChainJob<'_>,
                settings: AgldSettings,
                lane: &mut Lane<'_>,
            ) -> Option<Result<ChainStats, ContinuousError>> {
                Some(scalar_agld(self, job, settings, lane))
            }
        }
    )*};
}

glm_driver_model!(LogisticRegression, RidgeRegression, GaussianMixture);

fn run_chain<M: DriverModel>(
    model: &mut M,
    job: &ChainJob<'_>,
    lane: &mut Lane<'_>,
) -> Result<ChainStats, ContinuousError> {
    let cfg = job.cfg;
    let (d, n) = (model.dim(), model.num_terms());
    let init = job.init;
    match cfg.sampler {
        SamplerKind::Lmc | SamplerKind::Sgld => {
            let settings = if cfg.sampler == SamplerKind::Lmc {
                LangevinSettings::lmc(cfg.step)?
            } else {
                LangevinSettings::sgld(cfg.step, cfg.batch)?.with_access(cfg.access)
            };
            let mut work = vec![0.0; Langevin::workspace_len(d)];
            let mut idx = vec![0; Langevin::index_len(&settings, n)];
            let mut chain = Langevin::new(settings, d, n, init, &mut work, &mut idx)?;
            drive(&mut chain, model, &job.plan, lane)
        }
        SamplerKind::Sghmc => {
            let settings = UnderdampedSettings::sghmc(cfg.step, cfg.friction, cfg.batch)?
                .with_access(cfg.access);
            let mut work = vec![0.0; Underdamped::workspace_len(d)];
            let mut idx = vec![0; Underdamped::index_len(&settings, n)];
            let mut chain = Underdamped::new(settings, d, n, init, &mut work, &mut idx)?;
            drive(&mut chain, model, &job.plan, lane)
        }
        SamplerKind::Ewsg => {
            let settings = EwsgSettings::new(cfg.step, cfg.friction)?
                .with_batch(cfg.batch)?
                .with_index_chain(cfg.index_chain);
            let mut work = vec![0.0; Ewsg::workspace_len(d)];
            let mut chain = Ewsg::new(settings, d, n, init, &mut work)?;
            drive(&mut chain, model, &job.plan, lane)
        }
        SamplerKind::Agld => {
            let period = match cfg.period {
                Some(p) => p,
                None => n.div_ceil(cfg.batch.max(1)) as u64,
            };
            let update = match cfg.snapshot {
                SnapshotKind::Total => SnapshotUpdate::Total { period },
                SnapshotKind::Partial => SnapshotUpdate::Partial,
                SnapshotKind::Mixed => SnapshotUpdate::Mixed { period },
            };
            let settings = AgldSettings::new(cfg.step, cfg.batch, cfg.access, update)?;
            let want_scalar = match cfg.storage {
                StorageKind::Scalar => true,
                StorageKind::Dense => false,
                StorageKind::Auto => cfg.snapshot != SnapshotKind::Total,
            };
            if want_scalar {
                if let Some(r) = model.run_scalar_agld(job, settings, lane) {
                    return r;
                }
                if cfg.storage == StorageKind::Scalar {
                    return Err(ConfigError::ScalarSnapshots.into());
                }
            } else if cfg.snapshot == SnapshotKind::Total && cfg.storage == StorageKind::Auto {
                let mut snap = vec![0.0; PointSnapshot::len(d)];
                let store = PointSnapshot::new(d, n, &mut snap)?;
                return agld(model, job, settings, store, lane);
            }
            let mut snap = vec![0.0; DenseSnapshots::len(d, n).ok_or_else(too_large)?];
            let store = DenseSnapshots::new(d, n, &mut snap)?;
            agld(model, job, settings, store, lane)
        }
    }
}

fn run_model<M: DriverModel>(
    model: &M,
    cfg: &ContinuousConfig,
    plan: Plan,
    init: &[f64],
    keep: ContinuousKeep<'_>,
) -> Result<(Vec<f32>, ChainStats), ContinuousError> {
    let chains = cfg.chains;
    let per_chain = plan.draws.div_ceil(keep.every.max(1)) * plan.dim;
    let mut samples = vec![0.0f32; chains * per_chain];
    let job = ChainJob { cfg, plan, init };
    let outs: Vec<&mut [f32]> = samples.chunks_mut(per_chain.max(1)).collect();
    let run = map_chains_from(
        cfg.seed,
        cfg.first_chain,
        cfg.threads,
        outs,
        |index, out, rng| {
            let mut model = model.clone();
            let mut lane = Lane {
                rng,
                out,
                index,
                keep,
            };
            run_chain(&mut model, &job, &mut lane)
        },
    )?;
    let mut total = ChainStats::default();
    for st in run.results {
        total.evals += st.evals;
        total.steps += st.steps;
        total.nanos += st.nanos;
    }
    Ok((samples, total))
}

/// Runs `C` chains of the configured sampler and keeps their draws.
///
/// # Errors
///
/// [`ContinuousError::Config`] for inconsistent options, [`ContinuousError::Build`] for
/// invalid parameters (step, friction, batch, period), [`ContinuousError::Step`] if a chain
/// fails.
///
/// # Examples
///
/// ```
/// use langevin_std::continuous::{ContinuousConfig, GaussianSum, Model, SamplerKind, run};
/// let model = Model::GaussianSum(GaussianSum::synthetic(20, 2, 1)?);
/// let mut cfg = ContinuousConfig::new(model, SamplerKind::Sgld, 0.005);
/// cfg.passes = 3.0;
/// let out = run(&cfg)?;
/// assert_eq!(out.shape, [4, 3, 2]);
/// assert_eq!(out.summary.grad_evals_per_draw, 20.0);
/// # Ok::<(), langevin_std::continuous::ContinuousError>(())
/// ```
pub fn run(cfg: &ContinuousConfig) -> Result<ContinuousRun, ContinuousError> {
    run_keeping(cfg, ContinuousKeep::all())
}

/// [`run`] with the kept draws handled by `keep`: all written to its file as they are
/// produced, one in `every` kept in memory. The summary's moments are over every kept draw
/// (read back from the file when not all are in memory), exactly as [`run`] computes them.
///
/// # Errors
///
/// As [`run`], and [`ContinuousError::Io`] when the file cannot be written or read back.
pub fn run_keeping(
    cfg: &ContinuousConfig,
    keep: ContinuousKeep<'_>,
) -> Result<ContinuousRun, ContinuousError> {
    let (d, n) = (cfg.model.dim(), cfg.model.num_terms());
    if !(cfg.passes.is_finite() && cfg.passes > 0.0) {
        return Err(ConfigError::Passes(cfg.passes).into());
    }
    if !(cfg.burn_in_passes.is_finite() && cfg.burn_in_passes >= 0.0) {
        return Err(ConfigError::BurnInPasses(cfg.burn_in_passes).into());
    }
    if cfg.chains == 0 {
        return Err(ConfigError::NoChains.into());
    }
    if cfg.draws_per_pass == 0 {
        return Err(ConfigError::NoDrawsPerPass.into());
    }
    let draws = cfg.draws_per_chain();
    if draws == 0 {
        return Err(ConfigError::NoDraws.into());
    }
    let zeros = vec![0.0; d];
    let init = match &cfg.init {
        Some(v) if v.len() != d => {
            return Err(ConfigError::InitLength {
                given: v.len(),
                dim: d,
            }
            .into());
        }
        Some(v) => v.as_slice(),
        None => zeros.as_slice(),
    };
    let plan = Plan {
        terms: n as u128,
        burn_evals: (cfg.burn_in_passes * n as f64).ceil() as u128,
        per_pass: u128::from(cfg.draws_per_pass),
        draws,
        dim: d,
    };
    let start = Instant::now();
    let (samples, stats) = match &cfg.model {
        Model::GaussianSum(m) => run_model(m, cfg, plan, init, keep)?,
        Model::Logistic(m) => run_model(m, cfg, plan, init, keep)?,
        Model::Ridge(m) => run_model(m, cfg, plan, init, keep)?,
        Model::Mixture(m) => run_model(m, cfg, plan, init, keep)?,
    };
    let wall = start.elapsed().as_secs_f64();
    let every = keep.every.max(1);
    let (mean, var) = match keep.file {
        Some(file) if every > 1 => {
            let rows = cfg.chains * draws;
            coordinate_moments_with(d, rows, |f| file_rows(file, d, rows, f)).map_err(|e| {
                ContinuousError::Io {
                    path: PathBuf::from("the kept draws"),
                    source: e,
                }
            })?
        }
        _ => coordinate_moments(&samples, d),
    };
    let kept = (cfg.chains * draws) as f64;
    let summary = ContinuousSummary {
        sampler: cfg.sampler.name().into(),
        variant: cfg.variant(),
        dim: d,
        terms: n,
        chains: cfg.chains,
        passes: cfg.passes,
        draws_per_chain: draws,
        steps: stats.steps,
        grad_evals: stats.evals,
        grad_evals_per_draw: stats.evals as f64 / kept,
        data_passes: stats.evals as f64 / (n as f64 * cfg.chains as f64),
        wall_time_s: wall,
        ns_per_step: stats.nanos as f64 / stats.steps.max(1) as f64,
        mean,
        var,
    };
    Ok(ContinuousRun {
        samples,
        shape: [cfg.chains, draws.div_ceil(every), d],
        every,
        summary,
    })
}

/// Hands `f` the `rows` rows of width `d` of a `<f4` draws file, in order, reading a batch at
/// a time.
fn file_rows(
    file: &DrawsFile,
    d: usize,
    rows: usize,
    f: &mut dyn FnMut(&[f32]),
) -> std::io::Result<()> {
    let d = d.max(1);
    let per_batch = (BATCH_VALUES / d).max(1);
    let mut buf = vec![0.0f32; per_batch * d];
    let mut row = 0;
    while row < rows {
        let n = per_batch.min(rows - row);
        let chunk = &mut buf[..n * d];
        file.read_f32(row * d, chunk)?;
        chunk.chunks_exact(d).for_each(&mut *f);
        row += n;
    }
    Ok(())
}

/// [`coordinate_moments`] of `rows` rows handed out by `each` (twice: once for the means,
/// once for the variances), with the same arithmetic in the same order.
fn coordinate_moments_with(
    d: usize,
    rows: usize,
    mut each: impl FnMut(&mut dyn FnMut(&[f32])) -> std::io::Result<()>,
) -> std::io::Result<(Vec<f64>, Vec<f64>)> {
    let mut mean = vec![0.0; d];
    each(&mut |row: &[f32]| {
        for (m, &x) in mean.iter_mut().zip(row) {
            *m += f64::from(x);
        }
    })?;
    mean.iter_mut().for_each(|m| *m /= rows.max(1) as f64);
    let mut var = vec![0.0; d];
    each(&mut |row: &[f32]| {
        for ((v, &m), &x) in var.iter_mut().zip(&mean).zip(row) {
            let e = f64::from(x) - m;
            *v += e * e;
        }
    })?;
    var.iter_mut()
        .for_each(|v| *v /= rows.saturating_sub(1).max(1) as f64);
    Ok((mean, var))
}

/// Per-coordinate mean and variance (divisor `n − 1`) of row-major draws of width `d`.
fn coordinate_moments(samples: &[f32], d: usize) -> (Vec<f64>, Vec<f64>) {
    let rows = samples.len() / d.max(1);
    let mut mean = vec![0.0; d];
    for row in samples.chunks_exact(d) {
        for (m, &x) in mean.iter_mut().zip(row) {
            *m += f64::from(x);
        }
    }
    mean.iter_mut().for_each(|m| *m /= rows.max(1) as f64);
    let mut var = vec![0.0; d];
    for row in samples.chunks_exact(d) {
        for ((v, &m), &x) in var.iter_mut().zip(&mean).zip(row) {
            let e = f64::from(x) - m;
            *v += e * e;
        }
    }
    var.iter_mut()
        .for_each(|v| *v /= rows.saturating_sub(1).max(1) as f64);
    (mean, var)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_and_unknown_ones_list_the_choices() {
        for kind in SamplerKind::ALL {
            assert_eq!(kind.name().parse::<SamplerKind>().unwrap(), kind);
        }
        assert_eq!(
            "partial".parse::<SnapshotKind>().unwrap(),
            SnapshotKind::Partial
        );
        assert_eq!(parse_access("cyclic").unwrap(), Access::Cyclic);
        for (error, expected) in [
            (
                "hmc".parse::<SamplerKind>().unwrap_err(),
                "unknown sampler `hmc` (lmc, sgld, sghmc, ewsg, agld)",
            ),
            (
                "none".parse::<SnapshotKind>().unwrap_err(),
                "unknown snapshot update `none` (total, partial, mixed)",
            ),
            (
                parse_access("sorted").unwrap_err(),
                "unknown access `sorted` (random, reshuffle, cyclic)",
            ),
        ] {
            assert_eq!(error.to_string(), format!("sampler options: {expected}"));
        }
        assert!(matches!(
            parse_access("sorted"),
            Err(ContinuousError::Config(ConfigError::UnknownName { what: "access", text, .. }))
                if text == "sorted"
        ));
    }
}
