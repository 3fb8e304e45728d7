//! Many chains of the AB-2 schedule on the chain runner of [`crate::run`], binary and ordinal
//! through one per-chain routine.

use super::Ab2Settings;
use super::schedule::{Ab2Chain, Ab2Kernel, tune_chain_until};
use crate::binary::{BinaryModel, BinaryRun, uniform_buffers};
use crate::labels::{LabelDomain, LabelRun, OrdinalModel};
use crate::run::{ChainResult, ChainVecs, DiscreteRun, Keep, Keeper, RunConfig, RunError};
use crate::run::{Progress, check_cancelled};
use crate::samplers::SamplerError;
use langevin_core::binary::{BinaryChain, StepError, StepReport};
use langevin_core::ordinal::{OrdinalChain, OrdinalTarget};
use langevin_core::random::index;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::fmt::Display;

/// Runs `config.chains` chains of the AB-2 schedule on `model`, like
/// [`crate::binary::run_chains`]: chain `c` starts uniformly at random from its own stream, runs
/// the tuning phases of [`tune_chain`](super::tune_chain) and then `config.burn_in` further
/// frozen steps (all counted in `burn_in_stats`), then `config.steps` kept steps. Each chain's
/// [`ChainResult::tuned`] holds its [`Ab2Report`](super::Ab2Report) as JSON. Output does not
/// depend on the thread count.
///
/// The kept draws go to `keep`: [`Keep::all`] holds every one in memory; a sink streams them
/// and a stride keeps every `stride`-th in memory.
///
/// # Errors
///
/// [`RunError`] for a start where the model is not finite, a failing step or a worker that
/// panicked.
///
/// [`RunError::Output`] when `keep`'s sink fails.
pub fn run_ab2_chains(
    model: &BinaryModel,
    settings: &Ab2Settings,
    config: &RunConfig,
    progress: Option<&Progress>,
    keep: Keep<'_, u8>,
) -> Result<BinaryRun, RunError> {
    settings.first.validate().map_err(RunError::Param)?;
    // The kernels move through the target: an RBM's read `Wᵀ`.
    let wt = model.rbm_transpose();
    let run = config.map_chains(|c, mut rng| {
        let mut cache = vec![0.0f64; model.cache_len()];
        let mut target = model
            .target_with_transpose(&mut cache, &wt)
            .map_err(|e| RunError::Model(e.into()))?;
        let mut buffers = uniform_buffers(model.dim(), &mut rng);
        let mut chain =
            BinaryChain::new(buffers.buffers(), &mut target).map_err(RunError::at_chain(c))?;
        let keeper = Keeper::new(keep, c, model.dim());
        run_chain(
            &mut chain,
            &mut target,
            rng,
            settings,
            config,
            progress,
            keeper,
        )
    })?;
    Ok(BinaryRun::new(model.dim(), run))
}

/// Runs `config.chains` chains of the AB-2 schedule on an ordinal model, like
/// [`run_ab2_chains`] on binary ones: chain `c` starts uniformly on `{0..S−1}^d` from its own
/// stream, runs the tuning phases of [`tune_ordinal_chain`](super::tune_ordinal_chain) and then
/// `config.burn_in` further frozen steps (all counted in `burn_in_stats`), then `config.steps`
/// kept steps. Each chain's [`ChainResult::tuned`] holds its [`Ab2Report`](super::Ab2Report)
/// as JSON; `jump` is the L1 distance moved in the kept phase. Output does not depend on the
/// thread count.
///
/// The kept draws go to `keep`: [`Keep::all`] holds every one in memory; a sink streams them
/// and a stride keeps every `stride`-th in memory.
///
/// # Errors
///
/// [`RunError`] for invalid settings (the DLP rules are for binary models), a start where the
/// model is not finite, a failing step or a worker that panicked.
///
/// [`RunError::Output`] when `keep`'s sink fails.
pub fn run_ab2_ordinal_chains(
    model: &OrdinalModel,
    settings: &Ab2Settings,
    config: &RunConfig,
    progress: Option<&Progress>,
    keep: Keep<'_, u16>,
) -> Result<LabelRun, RunError> {
    settings.first.validate().map_err(RunError::Param)?;
    if settings.diagonal.is_dlp() {
        return Err(RunError::Sampler(SamplerError::BinaryRule {
            rule: settings.diagonal.name(),
        }));
    }
    let (d, s) = (model.dim(), model.states());
    let run = config.map_chains(|c, mut rng| {
        let mut model = model.clone();
        let x: Vec<u16> = (0..d).map(|_| index(&mut rng, s) as u16).collect();
        let mut buffers = ChainVecs::labels(&x, s, d);
        let mut chain = OrdinalChain::new_ordinal(buffers.buffers(), &mut model)
            .map_err(RunError::at_chain(c))?;
        let keeper = Keeper::new(keep, c, d);
        run_chain(
            &mut chain, &mut model, rng, settings, config, progress, keeper,
        )
    })?;
    Ok(LabelRun::new(
        DiscreteRun::new(d, run),
        s,
        LabelDomain::Ordinal,
    ))
}

/// One chain of the schedule: the tuning phases, then `config.burn_in` frozen steps and
/// `config.steps` kept ones with the final kernel (the DLP kernel for the DLP rules and for a
/// binary chain that stayed first order, else the second-order kernel).
fn run_chain<C, T>(
    chain: &mut C,
    target: &mut T,
    mut rng: Xoshiro256PlusPlus,
    settings: &Ab2Settings,
    config: &RunConfig,
    progress: Option<&Progress>,
    mut keeper: Keeper<'_, C::Value>,
) -> Result<ChainResult<C::Value>, RunError>
where
    C: Ab2Chain<T>,
    C::Value: Into<u64>,
    C::Error: Display,
    T: ?Sized,
{
    let d = chain.values().len();
    let mut result = ChainResult::default();
    keeper.reserve(&mut result, config.kept(), true);
    let step_err = RunError::evaluation::<StepError<C::Error>>;
    let (mut fitted, report) = tune_chain_until(
        target,
        chain,
        &mut rng,
        settings,
        &mut result.burn_in_stats,
        &|| progress.is_some_and(Progress::is_cancelled),
    )
    .map_err(step_err)?;
    if let Some(p) = progress {
        p.add(report.tuning_steps);
        p.check()?;
    }
    let precond = fitted
        .dlp_preconditioner
        .take()
        .or_else(|| fitted.is_first_order().then(|| vec![1.0; d]))
        .filter(|_| C::DLP);
    let (burn_in, thin) = (config.burn_in, config.thin.max(1));
    let mut t = 0u64;
    let mut kept: Result<(), RunError> = Ok(());
    let visit = |r: &StepReport, jump: u64, chain: &C| {
        if t < burn_in {
            result.burn_in_stats.record(r);
        } else {
            result.stats.record(r);
            result.jump += jump;
            if (t - burn_in + 1).is_multiple_of(thin) && kept.is_ok() {
                let u = Some(chain.current_log_density());
                kept = keeper.keep(chain.values(), u, &mut result);
            }
        }
        t += 1;
        !progress.is_some_and(Progress::is_cancelled)
    };
    let total = burn_in + config.steps;
    let (mut scratch, mut cached);
    let kernel = match &precond {
        Some(p) => Ab2Kernel::Dlp {
            step: report.step,
            balance: report.balance,
            p,
        },
        None => {
            let params = fitted
                .params(report.step, report.balance)
                .map_err(RunError::Param)?;
            scratch = vec![0.0f64; chain.second_order_scratch_len()];
            cached = vec![C::Value::default(); d];
            Ab2Kernel::SecondOrder {
                params,
                scratch: &mut scratch,
                cached: &mut cached,
            }
        }
    };
    chain
        .kernel_steps(target, &mut rng, kernel, total, visit)
        .map_err(step_err)?;
    check_cancelled(progress)?;
    kept?;
    keeper.flush()?;
    if let Some(p) = progress {
        p.add(total);
    }
    result.tuned = Some(report.to_json());
    Ok(result)
}
