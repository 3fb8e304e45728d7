//! `langevin sample` on ordinal and categorical models.

use super::{
    SampleArgs, SamplerName, Summary, ab2_settings, csv_bytes, exact, finish, fixed_steps,
    ns_per_step, param_error, pictures, plot_names, progress_total, run_config,
};
use crate::CliError;
use crate::output::npy_bytes;
use crate::progress;
use langevin_std::ab2::run_ab2_ordinal_chains;
use langevin_std::labels::{
    LabelDomain, LabelModel, LabelRun, LabelSamplerSpec, LabelStart, run_label_chains,
};
use langevin_std::model_file::ModelDoc;
use langevin_std::npy::NpyData;
use std::path::PathBuf;

/// The label sampler the arguments describe.
///
/// # Errors
///
/// A one-line message for a sampler the label domains do not have.
fn label_spec(args: &SampleArgs, domain: LabelDomain) -> Result<LabelSamplerSpec, CliError> {
    let (step, balance, window) = (args.step, args.balance, args.window);
    Ok(match args.sampler {
        SamplerName::Dula => LabelSamplerSpec::Dula {
            step,
            balance,
            window,
        },
        SamplerName::Dmala => LabelSamplerSpec::Dmala {
            step,
            balance,
            window,
        },
        SamplerName::Gibbs => LabelSamplerSpec::Gibbs {
            scan: args.scan.scan(),
        },
        SamplerName::Gwg => LabelSamplerSpec::Gwg,
        // AB-2's first phase is the first-order tuner; its own runner takes over from there.
        SamplerName::Ab => LabelSamplerSpec::Ab {
            step,
            balance,
            tune_balance: true,
            window,
        },
        SamplerName::Ab2 if domain == LabelDomain::Ordinal => LabelSamplerSpec::Ab {
            step,
            balance,
            tune_balance: true,
            window,
        },
        SamplerName::Ab2 => {
            return Err(CliError(
                "sampler ab2 needs an ordinal or binary model; this one is categorical (use dula, dmala, gibbs, gwg, ab or acs)"
                    .into(),
            ));
        }
        SamplerName::Acs => LabelSamplerSpec::Acs {
            a_ceil: args.a_ceil,
            fixed_steps: fixed_steps(args),
            window,
        },
        SamplerName::Rwm => {
            return Err(CliError(format!(
                "sampler rwm does not apply to {} models (use {})",
                domain.name(),
                match domain {
                    LabelDomain::Ordinal => "dula, dmala, gibbs, ab or acs",
                    LabelDomain::Categorical => "dula, dmala, gibbs, gwg, ab or acs",
                }
            )));
        }
    })
}

pub fn run(args: &SampleArgs, doc: &ModelDoc, model: &LabelModel) -> Result<(), CliError> {
    let domain = model.domain();
    let spec = label_spec(args, domain)?;
    let config = run_config(args);
    let (d, s) = (model.dim(), model.states());
    spec.check_domain(domain).map_err(CliError)?;
    spec.validate(domain, &config.shape(d))
        .map_err(|e| param_error(spec.name(), &e))?;
    if args.mmd {
        return Err(CliError(
            "--mmd compares against block-Gibbs draws and needs an rbm model".into(),
        ));
    }
    if args.exact {
        exact::check_size(d, s)?;
    }
    let total = progress_total(args, &config);
    let ab2 = args.sampler == SamplerName::Ab2;
    let name = if ab2 { "ab2" } else { spec.name() };
    let run =
        progress::with_progress(name, total, progress::wanted(args.quiet), |p| match model {
            LabelModel::Ordinal(m) if ab2 => {
                let mut settings = ab2_settings(args);
                settings.first.window = args.window;
                run_ab2_ordinal_chains(m, &settings, &config, p)
            }
            _ => run_label_chains(model, &spec, &config, &LabelStart::Uniform, p),
        })?;
    let draws: Vec<&[u16]> = run.chains.iter().map(|c| c.draws.as_slice()).collect();
    let marginal_rmse = if args.exact {
        Some(exact::rmse(&exact::labels(model)?, &draws, d, s)?)
    } else {
        None
    };
    let mut files: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    if let Some(path) = &args.plot {
        files.extend(pictures::labels(path, args, model, &run)?);
    }
    let stats = run.stats();
    let (step, balance) = spec.step_balance();
    let summary = Summary {
        sampler: name,
        model: args.model.display().to_string(),
        kind: doc.kind.clone(),
        domain: domain.name(),
        states: s,
        step,
        balance,
        scan: (args.sampler == SamplerName::Gibbs).then(|| args.scan.name()),
        diagonal: None,
        window: spec.window(),
        dim: d,
        chains: config.chains,
        steps: config.steps,
        burn_in: config.burn_in,
        burn_in_taken: run
            .chains
            .iter()
            .map(|c| c.burn_in_stats.steps)
            .max()
            .unwrap_or(0),
        thin: config.thin,
        seed: config.seed,
        kept_per_chain: config.kept(),
        acceptance_rate: stats.acceptance_rate(),
        mean_proposed_flips: None,
        mean_accepted_flips: None,
        mean_proposed_changes: Some(stats.mean_proposed_flips()),
        mean_accepted_changes: Some(stats.mean_accepted_flips()),
        mean_jump: run.mean_jump(),
        invalid_proposals: stats.invalid,
        evals: run.evaluations(),
        wall_time_s: run.wall_time.as_secs_f64(),
        ns_per_step: ns_per_step(run.wall_time, run.steps_taken()),
        statistic: match domain {
            LabelDomain::Ordinal => "l1",
            LabelDomain::Categorical => "hamming",
        },
        diagnostics: run.diagnose(config.seed).ok(),
        marginal_rmse,
        mmd: None,
        tuned: run.tuned(),
        plots: plot_names(&files),
        mean: run.means(),
    };
    let mut outputs: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    if let Some(out) = &args.out {
        let shape = [config.chains, config.kept(), d];
        outputs.push((out.clone(), npy_bytes(&shape, &samples(&run))?));
    }
    if let Some(csv) = &args.csv {
        outputs.push((csv.clone(), csv_bytes(&draws, d)));
    }
    finish(args, &summary, outputs, files)
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
