//! The AB-2 schedule on ordinal models: the same phases as for binary models, with the ordinal
//! first-order tuner and [`OrdinalAbSecondOrder`].

use super::{Ab2Error, Ab2Fitted, Ab2Report, Ab2Settings, JumpTuner, Pairs, fit, param_error};
use crate::labels::{LabelDomain, LabelRun, OrdinalModel};
use crate::run::{ChainResult, RunConfig, RunError, map_chains};
use langevin_core::binary::StepError;
use langevin_core::ordinal::{LabelBuffers, OrdinalChain, OrdinalKernel, OrdinalTarget};
use langevin_core::random::index;
use langevin_core::second_order::{OrdinalAbSecondOrder, ordinal_scratch_len};
use langevin_core::stats::ChainStats;
use langevin_core::tuning::AbTuner;
use rand_core::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::sync::atomic::{AtomicU64, Ordering};

/// Runs the tuning phases of the AB-2 schedule on an ordinal `chain`, as
/// [`tune_chain`](super::tune_chain) does on binary ones: first-order burn-in with the ordinal
/// AB tuner (`W = D = 0`, window `settings.first.window`), the pairs `(Δx, Δ∇U)` of its
/// accepted moves, the fit of `W` and `D`, and the second-order `(a, b)` tuning by L1 jump
/// distance. Step totals are added to `stats`.
///
/// # Errors
///
/// [`StepError`] from a kernel step; a failed fit is not an error (see
/// [`Ab2Report::fallback`]).
pub fn tune_ordinal_chain<T, R>(
    target: &mut T,
    chain: &mut OrdinalChain<'_>,
    rng: &mut R,
    settings: &Ab2Settings,
    stats: &mut ChainStats,
) -> Result<(Ab2Fitted, Ab2Report), Ab2Error<T::Error>>
where
    T: OrdinalTarget + ?Sized,
    R: Rng + ?Sized,
{
    let (d, s) = (chain.dim(), chain.states());
    let mut report = Ab2Report::default();
    let mut tuner = AbTuner::new(settings.first).map_err(param_error)?;
    let mut pairs = Pairs {
        dim: d,
        cap: settings.max_pairs,
        next: 0,
        dx: Vec::new(),
        dg: Vec::new(),
    };
    let (mut x0, mut g0) = (vec![0u16; d], vec![0.0f32; d]);
    while !tuner.is_frozen() {
        x0.copy_from_slice(chain.state());
        g0.copy_from_slice(chain.grad());
        let r = OrdinalKernel::step(&mut tuner, target, chain, rng)?;
        stats.record(&r);
        report.tuning_steps += 1;
        if r.accepted && r.proposed_flips > 0 {
            pairs.push(&x0, &g0, chain.state(), chain.grad());
        }
    }
    let ab = tuner.report();
    report.first_order = (ab.step, ab.balance);
    (report.step, report.balance) = (ab.step, ab.balance);
    report.pairs = pairs.next.min(pairs.cap);
    let mut fitted = match fit(&pairs, d, settings, &mut report) {
        Ok(f) => f,
        Err(why) => {
            report.fallback = Some(why);
            return Ok((Ab2Fitted::zero(d), report));
        }
    };
    let mut jt = JumpTuner {
        step: ab.step,
        balance: ab.balance,
        rate: settings.rate,
        decay: settings.decay,
        tune_balance: false,
        fixed_balance: false,
        probe: 0,
        jumps: [0; 3],
        moved: false,
    };
    let mut scratch = vec![0.0f64; ordinal_scratch_len(d, s)];
    let mut cached = vec![0u16; d];
    let mut spent = 0u64;
    while spent + u64::from(settings.probe_steps) <= settings.second_budget {
        let (a, b) = jt.probe_params(jt.probe);
        let params = fitted.params(a, b).map_err(param_error)?;
        let mut kernel = OrdinalAbSecondOrder::new(params, s, &mut scratch, &mut cached)
            .map_err(StepError::Len)?;
        let mut jump = 0u64;
        for _ in 0..settings.probe_steps {
            let (r, j) = kernel.step_with_jump(target, chain, rng)?;
            stats.record(&r);
            jump += j;
        }
        spent += u64::from(settings.probe_steps);
        jt.finish_probe(jump);
    }
    report.tuning_steps += spent;
    (report.step, report.balance) = (jt.step, jt.balance);
    Ok((fitted, report))
}

/// Runs `config.chains` chains of the AB-2 schedule on an ordinal model, like
/// [`run_ab2_chains`](super::run_ab2_chains) on binary ones: chain `c` starts uniformly on
/// `{0..S−1}^d` from its own stream, runs the tuning phases of [`tune_ordinal_chain`] and then
/// `config.burn_in` further frozen steps (all counted in `burn_in_stats`), then `config.steps`
/// kept steps. Each chain's [`ChainResult::tuned`] holds its [`Ab2Report`] as JSON; `jump` is
/// the L1 distance moved in the kept phase. Output does not depend on the thread count.
///
/// # Errors
///
/// [`RunError`] for invalid settings, a start where the model is not finite or a failing step.
pub fn run_ab2_ordinal_chains(
    model: &OrdinalModel,
    settings: &Ab2Settings,
    config: &RunConfig,
    progress: Option<&AtomicU64>,
) -> Result<LabelRun, RunError> {
    settings.first.validate().map_err(RunError::Param)?;
    if settings.diagonal.is_dlp() {
        return Err(RunError::Model(format!(
            "the {} rule is for binary models; use trace, shift or max on an ordinal model",
            settings.diagonal.name()
        )));
    }
    let (d, s) = (model.dim(), model.states());
    let run = map_chains(
        config.seed,
        config.threads,
        vec![(); config.chains],
        |c, (), rng| run_one(model.clone(), settings, config, c, rng, progress),
    )?;
    Ok(LabelRun {
        chains: run.results,
        dim: d,
        states: s,
        domain: LabelDomain::Ordinal,
        wall_time: run.wall_time,
        threads: run.threads,
    })
}

fn run_one(
    mut model: OrdinalModel,
    settings: &Ab2Settings,
    config: &RunConfig,
    c: usize,
    mut rng: Xoshiro256PlusPlus,
    progress: Option<&AtomicU64>,
) -> Result<ChainResult<u16>, RunError> {
    let (d, s) = (model.dim(), model.states());
    let mut x: Vec<u16> = (0..d).map(|_| index(&mut rng, s) as u16).collect();
    let (mut grad, mut x_proposal, mut grad_proposal, mut changed, mut row) = (
        vec![0.0f32; d],
        vec![0u16; d],
        vec![0.0f32; d],
        vec![0u32; d],
        vec![0.0f64; s],
    );
    let buffers = LabelBuffers {
        x: &mut x,
        grad: &mut grad,
        x_proposal: &mut x_proposal,
        grad_proposal: &mut grad_proposal,
        changed: &mut changed,
        scratch: &mut row,
    };
    let mut chain = OrdinalChain::new_ordinal(buffers, &mut model)
        .map_err(|e| RunError::Model(format!("chain {c}: {e}")))?;
    let mut result = ChainResult {
        draws: Vec::with_capacity(config.kept() * d),
        log_density: Vec::with_capacity(config.kept()),
        ..ChainResult::default()
    };
    let step_err = |e: StepError<_>| RunError::Model(e.to_string());
    let (mut fitted, report) = tune_ordinal_chain(
        &mut model,
        &mut chain,
        &mut rng,
        settings,
        &mut result.burn_in_stats,
    )
    .map_err(step_err)?;
    if let Some(p) = progress {
        p.fetch_add(report.tuning_steps, Ordering::Relaxed);
    }
    let params = fitted
        .params(report.step, report.balance)
        .map_err(RunError::Param)?;
    let mut scratch = vec![0.0f64; ordinal_scratch_len(d, s)];
    let mut cached = vec![0u16; d];
    let mut kernel = OrdinalAbSecondOrder::new(params, s, &mut scratch, &mut cached)
        .map_err(|e| RunError::Param(e.into()))?;
    for _ in 0..config.burn_in {
        let r = kernel
            .step(&mut model, &mut chain, &mut rng)
            .map_err(step_err)?;
        result.burn_in_stats.record(&r);
    }
    let thin = config.thin.max(1);
    for t in 1..=config.steps {
        let (r, jump) = kernel
            .step_with_jump(&mut model, &mut chain, &mut rng)
            .map_err(step_err)?;
        result.stats.record(&r);
        result.jump += jump;
        if t % thin == 0 {
            result.draws.extend_from_slice(chain.state());
            result.log_density.push(chain.log_density());
        }
    }
    if let Some(p) = progress {
        p.fetch_add(config.burn_in + config.steps, Ordering::Relaxed);
    }
    result.tuned = Some(report.to_json());
    Ok(result)
}
