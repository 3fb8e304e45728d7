//! A sampler plan run on a model: the dispatch `langevin sample` makes between the chain
//! runners (single-chain kernels, lockstep groups, AB-2), in the library so that every front
//! end that samples a model (the command line, the Python package) runs the same code and gets
//! the same draws.

use super::Progress;
use super::{ChainResult, CheckpointError, Keep, RunConfig, RunError};
use crate::ab2::{run_ab2_chains, run_ab2_ordinal_chains};
use crate::binary::{BinaryModel, BinaryRun, run_chains, run_chains_batched};
use crate::labels::{LabelModel, LabelRun, LabelStart, run_label_chains, run_label_chains_batched};
use crate::samplers::{Domain, SamplerError, SamplerPlan};

/// A batched run's draws (all in memory) handed to `keep`'s sink, as a streamed run hands them.
///
/// # Errors
///
/// [`RunError::Output`] when the sink fails.
pub fn batched_to<T>(keep: Keep<'_, T>, chains: &[ChainResult<T>]) -> Result<(), RunError> {
    if let Some(sink) = keep.sink {
        for (c, chain) in chains.iter().enumerate() {
            sink.write(c, 0, &chain.draws).map_err(RunError::Output)?;
        }
    }
    Ok(())
}

/// [`CheckpointError::Unsupported`] for a checkpoint of a run that cannot save one: lockstep
/// groups (`batch`) and AB-2's schedule.
fn refuse_checkpoint(
    plan: &SamplerPlan,
    sampler: &str,
    batch: Option<usize>,
    checkpoint: bool,
) -> Result<(), RunError> {
    let what = match (checkpoint, plan, batch) {
        (false, _, _) => return Ok(()),
        (true, _, Some(_)) => "--batch (lockstep groups of chains)".to_string(),
        (true, SamplerPlan::Ab2(_), None) => format!("{sampler} (AB-2's schedule)"),
        (true, _, None) => return Ok(()),
    };
    Err(CheckpointError::Unsupported { what }.into())
}

/// Runs `plan` (of the sampler named `sampler`) on a binary model: AB-2's schedule, or the
/// kernel's chains, in lockstep groups of `batch` when given.
///
/// # Errors
///
/// The runners' [`RunError`]s; [`RunError::NoBatchedPath`] for `batch` with a model or
/// sampler without a batched path.
pub fn run_binary_plan(
    model: &BinaryModel,
    sampler: &'static str,
    plan: &SamplerPlan,
    config: &RunConfig,
    batch: Option<usize>,
    progress: Option<&Progress>,
    keep: Keep<'_, u8>,
) -> Result<BinaryRun, RunError> {
    refuse_checkpoint(plan, sampler, batch, keep.checkpoint.is_some())?;
    match plan {
        SamplerPlan::Ab2(_) if batch.is_some() => {
            Err(RunError::no_batched_path(model.kind(), sampler))
        }
        SamplerPlan::Ab2(settings) => run_ab2_chains(model, settings, config, progress, keep),
        SamplerPlan::Kernel(kernel) => match batch {
            Some(n) => {
                let run = run_chains_batched(model, kernel, config, n, progress)?;
                batched_to(keep, &run.chains)?;
                Ok(run)
            }
            None => run_chains(model, kernel, config, progress, keep),
        },
    }
}

/// Runs `plan` (of the sampler named `sampler`) on an ordinal or categorical model, its chains
/// started uniformly: AB-2's schedule (ordinal), or the kernel's chains, in lockstep groups of
/// `batch` when given.
///
/// # Errors
///
/// The runners' [`RunError`]s; [`RunError::NoBatchedPath`] for `batch` with a model or
/// sampler without a batched path; [`RunError::Sampler`] for AB-2 on a categorical model (the
/// registry never plans one).
pub fn run_label_plan(
    model: &LabelModel,
    sampler: &'static str,
    plan: &SamplerPlan,
    config: &RunConfig,
    batch: Option<usize>,
    progress: Option<&Progress>,
    keep: Keep<'_, u16>,
) -> Result<LabelRun, RunError> {
    refuse_checkpoint(plan, sampler, batch, keep.checkpoint.is_some())?;
    match (plan, model, batch) {
        (SamplerPlan::Ab2(_), _, Some(_)) => Err(RunError::no_batched_path(model.kind(), sampler)),
        (SamplerPlan::Ab2(settings), LabelModel::Ordinal(m), None) => {
            run_ab2_ordinal_chains(m, settings, config, progress, keep)
        }
        (SamplerPlan::Kernel(kernel), _, Some(n)) => {
            let run = run_label_chains_batched(model, kernel, config, n, progress)?;
            batched_to(keep, &run.chains)?;
            Ok(run)
        }
        (SamplerPlan::Kernel(kernel), _, None) => {
            let start = &LabelStart::Uniform;
            run_label_chains(model, kernel, config, start, progress, keep)
        }
        (SamplerPlan::Ab2(_), LabelModel::Categorical(_), None) => Err(SamplerError::Domain {
            sampler,
            domain: Domain::Categorical,
        }
        .into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ab2::Ab2Settings;
    use crate::labels::OrdinalModel;
    use crate::models::OrdinalQuadratic;
    use langevin_core::models::{Dims, IsingLattice};

    /// AB-2's schedule has no lockstep path: a batch is refused by the plan runners of both
    /// domains, never silently ignored.
    #[test]
    fn a_batch_is_refused_for_ab2_not_ignored() {
        let config = RunConfig {
            steps: 20,
            burn_in: 0,
            thin: 1,
            chains: 2,
            seed: 1,
            threads: 1,
            first_chain: 0,
        };
        let mut settings = Ab2Settings::default();
        settings.first.budget = 50;
        settings.second_budget = 50;
        let plan = SamplerPlan::Ab2(settings);
        let lattice = BinaryModel::Lattice(
            IsingLattice::with_dims(Dims { rows: 3, cols: 3 }, 0.3, 0.1, true).unwrap(),
        );
        let run =
            |batch| run_binary_plan(&lattice, "ab2", &plan, &config, batch, None, Keep::all());
        assert!(run(None).is_ok());
        let err = run(Some(2)).unwrap_err();
        assert!(matches!(err, RunError::NoBatchedPath { .. }), "{err}");
        let a = vec![-0.4, 0.1, 0.0, 0.1, -0.5, 0.2, 0.0, 0.2, -0.3];
        let ordinal = LabelModel::Ordinal(OrdinalModel::Quadratic(
            OrdinalQuadratic::new(5, a, vec![1.0, 2.0, 3.0], vec![0.1, -0.2, 0.0]).unwrap(),
        ));
        let run = |batch| run_label_plan(&ordinal, "ab2", &plan, &config, batch, None, Keep::all());
        assert!(run(None).is_ok());
        let err = run(Some(2)).unwrap_err();
        assert!(matches!(err, RunError::NoBatchedPath { .. }), "{err}");
    }
}
