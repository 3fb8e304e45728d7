//! Many chains of a label sampler, with results independent of the thread count.

use super::model::{LabelDomain, LabelModel, OrdinalModel};
use crate::binary::{BinaryDiagnostics, Depth, Statistic, diagnose_draws};
use crate::diagnostics::DiagError;
use crate::kernels::SweepReport;
use crate::models::Potts;
use crate::run::Progress;
use crate::run::{
    ChainDriver, ChainResult, ChainVecs, DiscreteRun, DriverState, Jump, Keep, Keeper,
    KernelDriver, ModelError, RawSweep, ReplicaPlan, RunConfig, RunError, Stepped, SweepDriver,
    drive, drive_replicas, hamming, manhattan, restore_sums,
};
use crate::samplers::Sampler;
use crate::samplers::{Domain, Driver, RunShape, SamplerError};
use langevin_core::Eval;
use langevin_core::baselines::Gibbs;
use langevin_core::categorical::CategoricalTarget;
use langevin_core::ordinal::OrdinalTarget;
use langevin_core::ordinal::{CategoricalDomain, LabelChain, OrdinalDomain};
use langevin_core::random::index;
use langevin_core::tuning::ScaledDmala;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::fmt::Display;

/// Where label chains start.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum LabelStart {
    /// Every coordinate uniform on `0..S`, from the chain's own stream.
    #[default]
    Uniform,
    /// Every chain at this state.
    Fixed(Vec<u16>),
}

/// The outcome of a label run: a [`DiscreteRun`] (which it dereferences to, for the chains,
/// the dimension and the totals) with the values per coordinate and the domain.
#[derive(Clone, Debug)]
pub struct LabelRun {
    /// The chains.
    pub run: DiscreteRun<u16>,
    /// Values per coordinate `S`.
    pub states: usize,
    /// Ordinal or categorical.
    pub domain: LabelDomain,
}

impl std::ops::Deref for LabelRun {
    type Target = DiscreteRun<u16>;
    fn deref(&self) -> &DiscreteRun<u16> {
        &self.run
    }
}

impl LabelRun {
    /// The run of `states` values per coordinate in `domain`.
    pub fn new(run: DiscreteRun<u16>, states: usize, domain: LabelDomain) -> Self {
        Self {
            run,
            states,
            domain,
        }
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
    pub fn diagnose(&self, seed: u64, depth: Depth<'_>) -> Result<BinaryDiagnostics, DiagError> {
        let chains: Vec<&[u16]> = self.chains.iter().map(|c| c.draws.as_slice()).collect();
        diagnose_draws(
            &chains,
            self.dim,
            self.states,
            self.statistic(),
            self.evaluations(),
            self.wall_time,
            seed,
            self.threads,
            depth,
        )
    }
}

/// Runs `config.chains` chains of `sampler` on `model` from `start`.
///
/// Chain `c` takes all its randomness (its uniform start included) from its own stream, so the
/// output is bit-identical for every thread count. Gibbs runs on the model's single-coordinate
/// conditional; the other samplers on a chain with cached `U` and `∇U`.
///
/// The kept draws go to `keep`: [`Keep::all`] holds every one in memory; a sink streams them
/// and a stride keeps every `stride`-th in memory.
///
/// # Errors
///
/// [`RunError::Param`] for invalid parameters; [`RunError::Sampler`] for a sampler that does not
/// apply to the model's domain; [`RunError::Model`] for a fixed start of the wrong length or out
/// of range; [`RunError::Chain`] for a start where the model is not finite.
///
/// [`RunError::Output`] when `keep`'s sink fails.
pub fn run_label_chains(
    model: &LabelModel,
    sampler: &Sampler,
    config: &RunConfig,
    start: &LabelStart,
    progress: Option<&Progress>,
    keep: Keep<'_, u16>,
) -> Result<LabelRun, RunError> {
    let (d, s) = (model.dim(), model.states());
    let shape = config.shape(d);
    sampler
        .check_domain(model.domain())
        .map_err(RunError::Sampler)?;
    sampler
        .validate(model.domain().into(), &shape)
        .map_err(RunError::Param)?;
    if let LabelStart::Fixed(x) = start {
        if x.len() != d {
            return Err(RunError::Model(ModelError::StartLength {
                start: x.len(),
                model: d,
            }));
        }
        if let Some(i) = x.iter().position(|&v| usize::from(v) >= s) {
            return Err(RunError::Model(ModelError::StartBeyond {
                index: i,
                value: x[i],
                last: (s - 1) as u16,
            }));
        }
    }
    let job = LabelJob {
        sampler,
        shape,
        config,
        progress,
    };
    let run = config.map_chains(|c, mut rng| {
        let x: Vec<u16> = match start {
            LabelStart::Uniform => (0..d).map(|_| index(&mut rng, s) as u16).collect(),
            LabelStart::Fixed(x) => x.clone(),
        };
        job.run_one(model, c, x, rng, Keeper::new(keep, c, d))
    })?;
    Ok(LabelRun::new(DiscreteRun::new(d, run), s, model.domain()))
}

/// What every chain of a label run shares.
struct LabelJob<'a> {
    sampler: &'a Sampler,
    shape: RunShape,
    config: &'a RunConfig,
    progress: Option<&'a Progress>,
}

impl<'a> LabelJob<'a> {
    /// Chain `c` of `model` from `x`: the sampler's kernel on a chain with cached `U` and `∇U`
    /// where the domain has one, else Gibbs sweeps through the model's conditional.
    fn run_one(
        &self,
        model: &LabelModel,
        c: usize,
        x: Vec<u16>,
        rng: Xoshiro256PlusPlus,
        keeper: Keeper<'a, u16>,
    ) -> Result<ChainResult<u16>, RunError> {
        let (d, s, shape) = (model.dim(), model.states(), &self.shape);
        let cap = shape.burn_in + shape.steps;
        let start_error = RunError::at_chain(c);
        let driver = self
            .sampler
            .driver(model.domain().into(), shape.burn_in)
            .map_err(RunError::Param)?;
        if let Driver::Replicas(plan) = driver {
            return match model {
                LabelModel::Ordinal(m) => {
                    self.replicas::<OrdinalDomain, _>(m.clone(), &x, plan, (c, rng), keeper)
                }
                LabelModel::Categorical(m) => {
                    self.replicas::<CategoricalDomain, _>(m.clone(), &x, plan, (c, rng), keeper)
                }
            };
        }
        match model {
            LabelModel::Ordinal(m) => {
                let mut m = m.clone();
                let kernel = self
                    .sampler
                    .ordinal_kernel(shape)
                    .map_err(RunError::Param)?;
                let mut buffers = ChainVecs::labels(&x, s, d);
                let chain =
                    LabelChain::new_ordinal(buffers.buffers(), &mut m).map_err(&start_error)?;
                let x = chain.state().to_vec();
                match kernel {
                    Some(kernel) => {
                        let previous = Some(x);
                        let driver = KernelDriver::new(chain, m, kernel, rng, previous);
                        self.drive(driver, cap, keeper)
                    }
                    None => self.gibbs(
                        driver,
                        Domain::Ordinal,
                        x,
                        Conditional::Ordinal(&mut m),
                        rng,
                        keeper,
                    ),
                }
            }
            LabelModel::Categorical(m) => {
                let mut m = m.clone();
                let kernel = self
                    .sampler
                    .categorical_kernel(shape)
                    .map_err(RunError::Param)?;
                let mut buffers = ChainVecs::labels(&x, s, d * s);
                let chain =
                    LabelChain::new_categorical(buffers.buffers(), &mut m).map_err(&start_error)?;
                if let Some(kernel) = kernel {
                    return self.drive(KernelDriver::new(chain, m, kernel, rng, None), cap, keeper);
                }
                let x = chain.state().to_vec();
                self.gibbs(
                    driver,
                    Domain::Categorical,
                    x,
                    Conditional::Categorical(&mut m),
                    rng,
                    keeper,
                )
            }
        }
    }

    /// The replica ladder of chain `c` on `model`, every replica starting at `x`.
    fn replicas<D, T>(
        &self,
        mut model: T,
        x: &[u16],
        plan: ReplicaPlan,
        (c, rng): (usize, Xoshiro256PlusPlus),
        keeper: Keeper<'a, u16>,
    ) -> Result<ChainResult<u16>, RunError>
    where
        D: ScaledDmala<Value = u16> + Jump,
        T: Eval<D, Error: Display>,
    {
        let (config, progress) = (self.config, self.progress);
        drive_replicas::<D, _>(&mut model, x, plan, config, rng, progress, c, keeper)
    }

    /// Runs `driver` through burn-in (extended by up to `cap` tuning steps) and the kept phase.
    fn drive<D: ChainDriver<Value = u16>>(
        &self,
        mut driver: D,
        cap: u64,
        keeper: Keeper<'a, u16>,
    ) -> Result<ChainResult<u16>, RunError> {
        drive(&mut driver, self.config, cap, self.progress, keeper)
    }

    /// Gibbs sweeps from `x` (where the chain's start evaluation left the model), for a
    /// sampler without a kernel of the domain; any other such sampler is an error.
    fn gibbs(
        &self,
        driver: Driver,
        domain: Domain,
        x: Vec<u16>,
        target: Conditional<'_>,
        rng: Xoshiro256PlusPlus,
        keeper: Keeper<'a, u16>,
    ) -> Result<ChainResult<u16>, RunError> {
        let Driver::Gibbs(scan) = driver else {
            return Err(RunError::Sampler(SamplerError::Domain {
                sampler: self.sampler.name(),
                domain,
            }));
        };
        let states = target.states();
        let gibbs = LabelGibbs {
            previous: x.clone(),
            scratch: vec![0.0; states],
            target,
            gibbs: Gibbs::new(scan),
            states,
        };
        self.drive(SweepDriver::new(x, rng, gibbs), 0, keeper)
    }
}

/// The single-coordinate conditional of either domain's model.
enum Conditional<'m> {
    Ordinal(&'m mut OrdinalModel),
    Categorical(&'m mut Potts),
}

impl Conditional<'_> {
    /// Values per coordinate.
    fn states(&self) -> usize {
        match self {
            Conditional::Ordinal(m) => OrdinalTarget::states(&**m),
            Conditional::Categorical(m) => CategoricalTarget::states(&**m),
        }
    }
}

/// Gibbs sweeps through the model's single-coordinate conditional.
struct LabelGibbs<'m> {
    previous: Vec<u16>,
    scratch: Vec<f64>,
    target: Conditional<'m>,
    gibbs: Gibbs,
    states: usize,
}

impl RawSweep<u16> for LabelGibbs<'_> {
    // The conditional's loops gain nothing from wider instructions (measured: 2 % more
    // instructions per sweep through the dispatch).
    const DISPATCH: bool = false;

    /// A sweep; the distance moved is that between the states before and after it, as for
    /// the other samplers.
    #[inline(always)]
    fn sweep(&mut self, x: &mut [u16], rng: &mut Xoshiro256PlusPlus) -> Stepped {
        self.previous.copy_from_slice(x);
        let mut sweep = SweepReport::default();
        let cost = (self.states - 1) as u32;
        for _ in 0..x.len() {
            let changed = match &mut self.target {
                Conditional::Ordinal(m) => {
                    self.gibbs
                        .update_ordinal(&mut **m, x, &mut self.scratch, rng)
                }
                Conditional::Categorical(m) => {
                    self.gibbs
                        .update_categorical(&mut **m, x, &mut self.scratch, rng)
                }
            }
            .map_err(RunError::evaluation)?;
            sweep.add_update(changed, cost);
        }
        let jump = match self.target {
            Conditional::Ordinal(_) => manhattan(&self.previous, x),
            Conditional::Categorical(_) => hamming(&self.previous, x),
        };
        Ok((sweep.report(), jump))
    }
    // The model's running sums: an ordinal quadratic's `A(x − μ)`.
    fn sums(&self) -> &[f64] {
        match &self.target {
            Conditional::Ordinal(m) => OrdinalTarget::running_sums(&**m),
            Conditional::Categorical(m) => CategoricalTarget::running_sums(&**m),
        }
    }
    fn restore_sums(&mut self, x: &[u16], saved: &DriverState) -> Result<(), RunError> {
        match &mut self.target {
            Conditional::Ordinal(m) => {
                let mut grad = vec![0.0f32; x.len()];
                OrdinalTarget::log_density_and_grad(&mut **m, x, &mut grad)
                    .map_err(RunError::restoring)?;
                restore_sums(OrdinalTarget::running_sums_mut(&mut **m), saved)
            }
            Conditional::Categorical(m) => {
                let mut grad = vec![0.0f32; x.len() * self.states];
                CategoricalTarget::log_density_and_grad(&mut **m, x, &mut grad)
                    .map_err(RunError::restoring)?;
                restore_sums(CategoricalTarget::running_sums_mut(&mut **m), saved)
            }
        }
    }
}
