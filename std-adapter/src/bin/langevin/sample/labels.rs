//! `langevin sample` on ordinal and categorical models.

use super::spec::RunSpec;
use super::{
    Summary, check_memory, diagnostics_of, draws_file, exact, finish, keep, measured, pictures,
    plot_names, progress_total,
};
use crate::CliError;
use crate::progress;
use langevin_std::io::DrawDtype;
use langevin_std::labels::LabelModel;
use langevin_std::models::ModelDoc;
use langevin_std::run::run_label_plan;
use langevin_std::samplers::Domain;
use std::path::PathBuf;

pub fn run(spec: &RunSpec, doc: &ModelDoc, model: &LabelModel) -> Result<(), CliError> {
    let config = &spec.config;
    let domain = Domain::from(model.domain());
    let (d, s) = (model.dim(), model.states());
    let parsed = [("the parsed model file", Some(doc.parse_bytes))];
    let stride = check_memory(spec, d, 2, if s <= 256 { 1 } else { 4 }, &parsed)?;
    let plan = spec.sampler.plan_for(domain, &config.shape(d))?;
    if spec.batch.is_some() && stride > 1 {
        return Err(CliError(
            "--batch keeps every kept draw in memory, and they exceed the memory limit: raise \
             --max-memory or drop --batch"
                .into(),
        ));
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
    // `uint8` when every value fits (`S ≤ 256`), else `int32`.
    let dtype = if s <= 256 {
        DrawDtype::U8
    } else {
        DrawDtype::I32
    };
    let file = draws_file(spec, d, dtype)?;
    let checkpoint = super::checkpoint::open(spec)?;
    let keep = keep(stride, file.as_ref(), checkpoint.as_ref());
    let name = spec.sampler.name();
    let run = progress::with_progress(name, total, show, |p| {
        run_label_plan(model, name, &plan, config, spec.batch, p, keep)
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
    super::coordinate_columns(&mut summary, &draws);
    summary.subset(stride);
    summary.plots = plot_names(&files);
    finish(spec, &summary, file, &draws, files)
}
