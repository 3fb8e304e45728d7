//! Chains of ordinal DULA/DMALA on an ordinal quadratic model stepped in lockstep groups
//! (`sample --batch N`), as [`run_chains_batched`](crate::binary::run_chains_batched) does for
//! binary models.
//!
//! Groups are formed and seeded as for binary models (see [`crate::run`]'s lockstep groups);
//! chain `c` starts (uniform over the values) and draws from its own stream exactly as in
//! [`run_label_chains`](super::run_label_chains). Every chain's `A (x−μ)` is updated over its
//! changed coordinates in `f64` as on the single-chain path, bit for bit
//! ([`OrdinalQuadraticBatch`]), so the draws are those of
//! [`run_label_chains`](super::run_label_chains), whatever `N`, the thread count or the number
//! of chains. Each step runs through [`crate::simd`]'s run-time dispatch, which does not change
//! its values.

use super::model::{LabelDomain, LabelModel, OrdinalModel};
use super::run::LabelRun;
use crate::models::OrdinalQuadratic;
use crate::run::Progress;
use crate::run::{
    BatchVecs, ChainResult, DiscreteRun, GroupJob, Lockstep, ModelError, RunConfig, RunError,
    run_groups,
};
use crate::samplers::{LangevinStep, Sampler};
use langevin_core::StepError;
use langevin_core::binary::StepReport;
use langevin_core::models::OrdinalQuadraticBatch;
use langevin_core::ordinal::{
    BatchTarget, OrdinalBatch, OrdinalBatchLangevin, OrdinalDomain, OrdinalProposal, OrdinalTarget,
};
use langevin_core::random::index;
use rand_xoshiro::Xoshiro256PlusPlus;

/// Whether `sampler` on `model` has a batched path: DULA or DMALA on an ordinal quadratic
/// model.
pub fn has_batched_path(model: &LabelModel, sampler: &Sampler) -> bool {
    matches!(model, LabelModel::Ordinal(OrdinalModel::Quadratic(_)))
        && sampler.langevin_step().is_some()
}

/// Runs `config.chains` chains of `sampler` on `model`, `batch` at a time, from uniform starts
/// (see the module documentation). `progress`, if given, is advanced by one per chain-step.
///
/// # Errors
///
/// [`RunError::NoBatchedPath`] for a model or sampler without a batched path;
/// [`RunError::Param`] for invalid parameters or `batch = 0`; [`RunError::Group`] for a start
/// where the model is not finite.
pub fn run_label_chains_batched(
    model: &LabelModel,
    sampler: &Sampler,
    config: &RunConfig,
    batch: usize,
    progress: Option<&Progress>,
) -> Result<LabelRun, RunError> {
    let LangevinStep {
        step,
        balance,
        window,
        adjusted,
    } = sampler.batched_step(model.kind(), has_batched_path(model, sampler))?;
    let LabelModel::Ordinal(OrdinalModel::Quadratic(m)) = model else {
        // `has_batched_path` holds only for this model.
        return Err(RunError::no_batched_path(model.kind(), sampler.name()));
    };
    let proposal = OrdinalProposal::new(step, balance)
        .and_then(|p| window.map_or(Ok(p), |w| p.windowed(w)))
        .map_err(RunError::Param)?;
    let (d, s) = (m.dim(), m.states());
    let chains = run_groups(config, batch, progress, |job| {
        if adjusted {
            run_group::<true>(m, proposal, &job)
        } else {
            run_group::<false>(m, proposal, &job)
        }
    })?;
    Ok(LabelRun::new(
        DiscreteRun::new(d, chains),
        s,
        LabelDomain::Ordinal,
    ))
}

/// Runs the group of `job` on `m` for the burn-in and kept phase of the run, and returns the
/// real chains' results in order.
fn run_group<const ADJUSTED: bool>(
    m: &OrdinalQuadratic,
    proposal: OrdinalProposal<'static>,
    job: &GroupJob<'_>,
) -> Result<Vec<ChainResult<u16>>, RunError> {
    let (d, s, rows) = (m.dim(), m.states(), job.rows.len());
    let mut cache = vec![0.0f64; 2 * rows * d];
    let (a, mu, b) = (m.matrix(), m.mean(), m.linear());
    let mut target =
        OrdinalQuadraticBatch::new(a, mu, b, s, rows, &mut cache).map_err(RunError::Param)?;
    let mut rngs = Vec::with_capacity(rows);
    let mut x = Vec::with_capacity(rows * d);
    for (_, mut rng) in job.rows.iter().cloned() {
        x.extend((0..d).map(|_| index(&mut rng, s) as u16));
        rngs.push(rng);
    }
    let mut vecs = BatchVecs::<OrdinalDomain>::new(x, d);
    let batch = OrdinalBatch::new(vecs.buffers(), &mut target).map_err(|e| job.model_err(e))?;
    job.drive(&mut Group {
        kernel: &OrdinalBatchLangevin::<ADJUSTED>::new(proposal),
        target: &mut target,
        batch,
        rngs,
    })
}

/// A group's kernel, target, chains and streams, stepped through [`crate::simd::dispatch`].
struct Group<'k, 'b, T: BatchTarget<OrdinalDomain>, const ADJUSTED: bool> {
    kernel: &'k OrdinalBatchLangevin<'static, ADJUSTED>,
    target: &'k mut T,
    batch: OrdinalBatch<'b>,
    rngs: Vec<Xoshiro256PlusPlus>,
}

impl<T: BatchTarget<OrdinalDomain>, const ADJUSTED: bool> Lockstep for Group<'_, '_, T, ADJUSTED> {
    type Value = u16;

    fn step(&mut self, reports: &mut [StepReport]) -> Result<(), ModelError> {
        crate::simd::dispatch(&mut Step {
            group: self,
            reports,
        })
        .map_err(ModelError::evaluation)
    }

    fn state(&self, c: usize) -> &[u16] {
        self.batch.state(c)
    }

    fn log_density(&self, c: usize) -> f64 {
        self.batch.log_density(c)
    }

    fn jump(&self, c: usize, _: &StepReport) -> u64 {
        self.batch.jump(c)
    }
}

/// One step of a group, for [`crate::simd::dispatch`]: everything the step inlines is compiled
/// for the dispatched instruction set.
struct Step<'g, 'k, 'b, T: BatchTarget<OrdinalDomain>, const ADJUSTED: bool> {
    group: &'g mut Group<'k, 'b, T, ADJUSTED>,
    reports: &'g mut [StepReport],
}

impl<T: BatchTarget<OrdinalDomain>, const ADJUSTED: bool> crate::simd::HotLoop
    for Step<'_, '_, '_, T, ADJUSTED>
{
    type Output = Result<(), StepError<T::Error>>;

    #[inline(always)]
    fn run(&mut self) -> Self::Output {
        let g = &mut *self.group;
        g.kernel
            .step(g.target, &mut g.batch, &mut g.rngs, self.reports)
    }
}
