//! Many chains of a label sampler, with results independent of the thread count.

use super::model::{LabelDomain, LabelModel, OrdinalModel};
use super::sampler::{AnyCategoricalKernel, AnyOrdinalKernel, LabelSamplerSpec, Tuning};
use crate::binary::{
    BinaryDiagnostics, ChainDriver, ChainResult, RunConfig, RunError, RunShape, Statistic,
    SweepReport, diagnose_draws, drive, in_parallel, mean_jump, means, total_evaluations,
    total_stats, total_steps, tuned,
};
use crate::diagnostics::DiagError;
use crate::discrete_models::Potts;
use langevin_core::baselines::Gibbs;
use langevin_core::binary::StepReport;
use langevin_core::categorical::CategoricalKernel;
use langevin_core::ordinal::{LabelBuffers, LabelChain, OrdinalKernel};
use langevin_core::random::index;
use langevin_core::stats::ChainStats;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

/// Where label chains start.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum LabelStart {
    /// Every coordinate uniform on `0..S`, from the chain's own stream.
    #[default]
    Uniform,
    /// Every chain at this state.
    Fixed(Vec<u16>),
}

/// The outcome of a label run.
#[derive(Clone, Debug)]
pub struct LabelRun {
    /// Per-chain results, in chain order.
    pub chains: Vec<ChainResult<u16>>,
    /// The dimension `d`.
    pub dim: usize,
    /// Values per coordinate `S`.
    pub states: usize,
    /// Ordinal or categorical.
    pub domain: LabelDomain,
    /// Wall time of the sampling loops.
    pub wall_time: Duration,
}

impl LabelRun {
    /// All kept draws, `(chains, kept, d)` row-major.
    pub fn samples(&self) -> Vec<u16> {
        self.chains
            .iter()
            .flat_map(|c| c.draws.iter().copied())
            .collect()
    }

    /// Totals over all chains' kept phases.
    pub fn stats(&self) -> ChainStats {
        total_stats(&self.chains)
    }

    /// Target evaluations over the whole run.
    pub fn evaluations(&self) -> u64 {
        total_evaluations(&self.chains)
    }

    /// Steps taken over the whole run (burn-in, tuning and kept phase, all chains).
    pub fn steps_taken(&self) -> u64 {
        total_steps(&self.chains)
    }

    /// Mean distance moved per kept step: L1 (ordinal) or changed labels (categorical).
    pub fn mean_jump(&self) -> f64 {
        mean_jump(&self.chains)
    }

    /// Per-coordinate mean of the kept draws.
    pub fn means(&self) -> Vec<f64> {
        means(&self.chains, self.dim)
    }

    /// The tuned parameters of every chain (`None` for fixed samplers).
    pub fn tuned(&self) -> Option<serde_json::Value> {
        tuned(&self.chains)
    }

    /// The statistic of the diagnostics: L1 distance (ordinal) or Hamming (categorical).
    pub fn statistic(&self) -> Statistic {
        match self.domain {
            LabelDomain::Ordinal => Statistic::Manhattan,
            LabelDomain::Categorical => Statistic::Hamming,
        }
    }

    /// ESS and R-hat as for binary runs, with [`statistic`](Self::statistic).
    ///
    /// # Errors
    ///
    /// [`DiagError`] with fewer than 8 kept draws per chain.
    pub fn diagnose(&self, seed: u64) -> Result<BinaryDiagnostics, DiagError> {
        let chains: Vec<&[u16]> = self.chains.iter().map(|c| c.draws.as_slice()).collect();
        diagnose_draws(
            &chains,
            self.dim,
            self.states,
            self.statistic(),
            self.evaluations(),
            self.wall_time,
            seed,
        )
    }
}

/// Runs `config.chains` chains of `sampler` on `model` from `start`.
///
/// Chain `c` takes all its randomness (its uniform start included) from its own stream, so the
/// output is bit-identical for every thread count. Gibbs runs on the model's single-coordinate
/// conditional; the other samplers on a chain with cached `U` and `∇U`.
///
/// # Errors
///
/// [`RunError::Param`] for invalid parameters; [`RunError::Model`] for a sampler that does not
/// apply to the model's domain, a fixed start of the wrong length or out of range, or a start
/// where the model is not finite.
pub fn run_label_chains(
    model: &LabelModel,
    sampler: &LabelSamplerSpec,
    config: &RunConfig,
    start: &LabelStart,
    progress: Option<&AtomicU64>,
) -> Result<LabelRun, RunError> {
    let (d, s) = (model.dim(), model.states());
    let shape = config.shape(d);
    sampler
        .check_domain(model.domain())
        .map_err(|e| RunError::Model(e.to_string()))?;
    match model.domain() {
        LabelDomain::Ordinal => sampler.ordinal_kernel(&shape).map(|_| ()),
        LabelDomain::Categorical => sampler.categorical_kernel(&shape).map(|_| ()),
    }
    .map_err(RunError::Param)?;
    if let LabelStart::Fixed(x) = start {
        if x.len() != d {
            return Err(RunError::Model(format!(
                "the start has {} coordinates, the model {d}",
                x.len()
            )));
        }
        if let Some(i) = x.iter().position(|&v| usize::from(v) >= s) {
            return Err(RunError::Model(format!(
                "the start has x[{i}] = {}, beyond the last value {}",
                x[i],
                s - 1
            )));
        }
    }
    let (chains, wall_time) = in_parallel(config, |c, mut rng| {
        let x: Vec<u16> = match start {
            LabelStart::Uniform => (0..d).map(|_| index(&mut rng, s) as u16).collect(),
            LabelStart::Fixed(x) => x.clone(),
        };
        match model {
            LabelModel::Ordinal(m) => {
                run_ordinal(m.clone(), sampler, &shape, config, c, x, rng, progress)
            }
            LabelModel::Categorical(m) => {
                run_categorical(m.clone(), sampler, &shape, config, c, x, rng, progress)
            }
        }
    })?;
    Ok(LabelRun {
        chains,
        dim: d,
        states: s,
        domain: model.domain(),
        wall_time,
    })
}

/// Room for one label chain.
struct Buffers {
    x: Vec<u16>,
    grad: Vec<f32>,
    x_proposal: Vec<u16>,
    grad_proposal: Vec<f32>,
    changed: Vec<u32>,
    scratch: Vec<f64>,
}

impl Buffers {
    fn new(x: Vec<u16>, grad_len: usize, states: usize) -> Self {
        let d = x.len();
        Self {
            x,
            grad: vec![0.0; grad_len],
            x_proposal: vec![0; d],
            grad_proposal: vec![0.0; grad_len],
            changed: vec![0; d],
            scratch: vec![0.0; states],
        }
    }

    fn buffers(&mut self) -> LabelBuffers<'_> {
        LabelBuffers {
            x: &mut self.x,
            grad: &mut self.grad,
            x_proposal: &mut self.x_proposal,
            grad_proposal: &mut self.grad_proposal,
            changed: &mut self.changed,
            scratch: &mut self.scratch,
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn run_ordinal(
    mut model: OrdinalModel,
    sampler: &LabelSamplerSpec,
    shape: &RunShape,
    config: &RunConfig,
    c: usize,
    x: Vec<u16>,
    rng: Xoshiro256PlusPlus,
    progress: Option<&AtomicU64>,
) -> Result<ChainResult<u16>, RunError> {
    use langevin_core::ordinal::OrdinalTarget;
    let s = model.states();
    let kernel = sampler.ordinal_kernel(shape).map_err(RunError::Param)?;
    let mut buffers = Buffers::new(x, shape.dim, s);
    let chain = LabelChain::new_ordinal(buffers.buffers(), &mut model)
        .map_err(|e| RunError::Model(format!("chain {c}: {e}")))?;
    match (kernel, sampler) {
        (Some(kernel), _) => {
            let previous = chain.state().to_vec();
            let mut driver = OrdinalDriver {
                chain,
                target: &mut model,
                kernel,
                rng,
                previous,
            };
            drive(&mut driver, config, shape.burn_in + shape.steps, progress)
        }
        (None, LabelSamplerSpec::Gibbs { scan }) => {
            // The chain's start evaluation established the model's state at x.
            let x = chain.state().to_vec();
            let mut driver = GibbsDriver {
                previous: x.clone(),
                x,
                scratch: vec![0.0; s],
                target: Conditional::Ordinal(&mut model),
                gibbs: Gibbs::new(*scan),
                rng,
                states: s,
                ordinal: true,
            };
            drive(&mut driver, config, 0, progress)
        }
        (None, _) => Err(RunError::Model(format!(
            "sampler {} does not apply to ordinal models",
            sampler.name()
        ))),
    }
}

#[allow(clippy::too_many_arguments)]
fn run_categorical(
    mut model: Potts,
    sampler: &LabelSamplerSpec,
    shape: &RunShape,
    config: &RunConfig,
    c: usize,
    x: Vec<u16>,
    rng: Xoshiro256PlusPlus,
    progress: Option<&AtomicU64>,
) -> Result<ChainResult<u16>, RunError> {
    use langevin_core::categorical::CategoricalTarget;
    let s = model.states();
    let kernel = sampler.categorical_kernel(shape).map_err(RunError::Param)?;
    let mut buffers = Buffers::new(x, shape.dim * s, s);
    let chain = LabelChain::new_categorical(buffers.buffers(), &mut model)
        .map_err(|e| RunError::Model(format!("chain {c}: {e}")))?;
    match (kernel, sampler) {
        (Some(kernel), _) => {
            let mut driver = CategoricalDriver {
                chain,
                target: &mut model,
                kernel,
                rng,
            };
            drive(&mut driver, config, shape.burn_in + shape.steps, progress)
        }
        (None, LabelSamplerSpec::Gibbs { scan }) => {
            let x = chain.state().to_vec();
            let mut driver = GibbsDriver {
                previous: x.clone(),
                x,
                scratch: vec![0.0; s],
                target: Conditional::Categorical(&mut model),
                gibbs: Gibbs::new(*scan),
                rng,
                states: s,
                ordinal: false,
            };
            drive(&mut driver, config, 0, progress)
        }
        (None, _) => Err(RunError::Model(format!(
            "sampler {} does not apply to categorical models",
            sampler.name()
        ))),
    }
}

struct OrdinalDriver<'c, 'm> {
    chain: LabelChain<'c, langevin_core::ordinal::OrdinalDomain>,
    target: &'m mut OrdinalModel,
    kernel: AnyOrdinalKernel,
    rng: Xoshiro256PlusPlus,
    previous: Vec<u16>,
}

impl ChainDriver for OrdinalDriver<'_, '_> {
    type Value = u16;
    fn step(&mut self) -> Result<(StepReport, u64), RunError> {
        self.previous.copy_from_slice(self.chain.state());
        let r = OrdinalKernel::step(
            &mut self.kernel,
            &mut *self.target,
            &mut self.chain,
            &mut self.rng,
        )
        .map_err(|e| RunError::Model(e.to_string()))?;
        let jump = self
            .previous
            .iter()
            .zip(self.chain.state())
            .map(|(&a, &b)| u64::from(a.abs_diff(b)))
            .sum();
        Ok((r, jump))
    }
    fn state(&self) -> &[u16] {
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
}

struct CategoricalDriver<'c, 'm> {
    chain: LabelChain<'c, langevin_core::ordinal::CategoricalDomain>,
    target: &'m mut Potts,
    kernel: AnyCategoricalKernel,
    rng: Xoshiro256PlusPlus,
}

impl ChainDriver for CategoricalDriver<'_, '_> {
    type Value = u16;
    fn step(&mut self) -> Result<(StepReport, u64), RunError> {
        let r = CategoricalKernel::step(
            &mut self.kernel,
            &mut *self.target,
            &mut self.chain,
            &mut self.rng,
        )
        .map_err(|e| RunError::Model(e.to_string()))?;
        Ok((r, u64::from(r.accepted_flips())))
    }
    fn state(&self) -> &[u16] {
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
}

/// The single-coordinate conditional of either domain's model.
enum Conditional<'m> {
    Ordinal(&'m mut OrdinalModel),
    Categorical(&'m mut Potts),
}

/// Gibbs sweeps on a raw state through the model's conditional.
struct GibbsDriver<'m> {
    x: Vec<u16>,
    previous: Vec<u16>,
    scratch: Vec<f64>,
    target: Conditional<'m>,
    gibbs: Gibbs,
    rng: Xoshiro256PlusPlus,
    states: usize,
    ordinal: bool,
}

impl ChainDriver for GibbsDriver<'_> {
    type Value = u16;
    /// A sweep; the distance moved is that between the states before and after it, as for
    /// the other samplers.
    fn step(&mut self) -> Result<(StepReport, u64), RunError> {
        self.previous.copy_from_slice(&self.x);
        let mut sweep = SweepReport::default();
        let cost = (self.states - 1) as u32;
        for _ in 0..self.x.len() {
            let changed = match &mut self.target {
                Conditional::Ordinal(m) => self.gibbs.update_ordinal(
                    &mut **m,
                    &mut self.x,
                    &mut self.scratch,
                    &mut self.rng,
                ),
                Conditional::Categorical(m) => self.gibbs.update_categorical(
                    &mut **m,
                    &mut self.x,
                    &mut self.scratch,
                    &mut self.rng,
                ),
            }
            .map_err(|e| RunError::Model(e.to_string()))?;
            sweep.add_update(changed, cost);
        }
        let pairs = self.previous.iter().zip(&self.x);
        let jump = if self.ordinal {
            pairs.map(|(&a, &b)| u64::from(a.abs_diff(b))).sum()
        } else {
            pairs.filter(|(a, b)| a != b).count() as u64
        };
        Ok((sweep.report(), jump))
    }
    fn state(&self) -> &[u16] {
        &self.x
    }
    fn log_density(&self) -> Option<f64> {
        None
    }
    fn is_tuning(&self) -> bool {
        false
    }
    fn stop_tuning(&mut self) {}
    fn tuned(&self) -> Option<serde_json::Value> {
        None
    }
}
