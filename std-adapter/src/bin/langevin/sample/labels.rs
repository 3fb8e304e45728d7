//! `langevin sample` on ordinal and categorical models.

use super::spec::RunSpec;
use super::{
    Summary, check_memory, diagnostics_of, exact, finish, measured, not_for, pictures, plot_names,
    progress_total,
};
use crate::CliError;
use crate::progress;
use langevin_std::ab2::run_ab2_ordinal_chains;
use langevin_std::io::npy::NpyData;
use langevin_std::labels::{LabelModel, LabelRun, LabelStart, run_label_chains};
use langevin_std::models::ModelDoc;
use langevin_std::samplers::{Domain, SamplerPlan};
use std::path::PathBuf;

pub fn run(spec: &RunSpec, doc: &ModelDoc, model: &LabelModel) -> Result<(), CliError> {
    let config = &spec.config;
    let domain = Domain::from(model.domain());
    let (d, s) = (model.dim(), model.states());
    check_memory(spec, d, 2, if s <= 256 { 1 } else { 4 })?;
    let plan = spec.sampler.plan_for(domain, &config.shape(d))?;
    if spec.batch.is_some() {
        return Err(langevin_std::run::RunError::NoBatchedPath {
            kind: doc.kind.clone(),
            sampler: spec.sampler.name().into(),
        }
        .into());
    }
    if spec.mmd {
        return Err(CliError(
            "--mmd compares against block-Gibbs draws and needs an rbm model".into(),
        ));
    }
    if spec.exact {
        exact::check_size(d, s)?;
    }
    let total = progress_total(&plan, spec);
    let show = progress::wanted(spec.quiet);
    let run = progress::with_progress(spec.sampler.name(), total, show, |p| {
        Ok::<_, CliError>(match (&plan, model) {
            (SamplerPlan::Ab2(settings), LabelModel::Ordinal(m)) => {
                run_ab2_ordinal_chains(m, settings, config, p)?
            }
            (SamplerPlan::Label(kernel), _) => {
                run_label_chains(model, kernel, config, &LabelStart::Uniform, p)?
            }
            _ => return Err(not_for(spec, domain)),
        })
    })?;
    let draws: Vec<&[u16]> = run.chains.iter().map(|c| c.draws.as_slice()).collect();
    let mut summary = Summary::new(spec, doc, &plan, domain, s, d);
    if spec.exact {
        summary.marginal_rmse = Some(exact::rmse(&exact::labels(model)?, &draws, d, s)?);
    }
    let mut files: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    if let Some(path) = &spec.outputs.plot {
        files.extend(pictures::labels(path, spec, model, &run)?);
    }
    let stats = run.stats();
    summary.mean_proposed_changes = Some(stats.mean_proposed_flips());
    summary.mean_accepted_changes = Some(stats.mean_accepted_flips());
    let diagnostics = diagnostics_of(spec, d, |depth| run.diagnose(config.seed, depth));
    measured!(summary, run, diagnostics);
    summary.plots = plot_names(&files);
    finish(spec, &summary, &samples(&run), &draws, files)
}

/// The kept draws as `uint8` when every value fits (`S ≤ 256`), else `int32`.
fn samples(run: &LabelRun) -> NpyData {
    let all = run.samples();
    if run.states <= 256 {
        NpyData::U8(all.into_iter().map(|v| v as u8).collect())
    } else {
        NpyData::I32(all.into_iter().map(i32::from).collect())
    }
}
