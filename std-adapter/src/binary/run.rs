//! Many chains of a binary kernel, on all cores, with results independent of the thread count.

use super::model::{BinaryModel, ModelTarget};
use crate::kernels::{ForTarget, SweepReport};
use crate::run::{
    ChainDriver, ChainResult, ChainVecs, DiscreteRun, Keep, Keeper, KernelDriver, RunConfig,
    RunError, drive, hamming, map_chains_from, restore_raw, restore_sums, save_raw, with_replicas,
};
use crate::run::{CheckpointError, DriverState, Progress};
use crate::samplers::{BLOCK_GIBBS_NEEDS_RBM, RunShape, SamplerSpec, replica_plan};
use crate::simd::HotLoop;
use langevin_core::Binary;
use langevin_core::LenError;
use langevin_core::baselines::{BlockGibbs, FlipDelta, Gibbs, Scan};
use langevin_core::binary::{BinaryChain, LatticeGibbs, StepReport};
use langevin_core::math::FlipMath;
use langevin_core::models::{Dims, Rbm};
use rand_core::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// The outcome of a binary run.
pub type BinaryRun = DiscreteRun<u8>;

/// Runs `config.chains` chains of `sampler` on `model`.
///
/// Chain `c` draws its start uniformly from `{0,1}^d` and all its randomness from its own stream
/// (see [`crate::seeding::chain_rng`]), so the output is bit-identical for every thread count.
/// Gibbs uses the model's single-flip fast path ([`FlipDelta`]) where it has one (every kind
/// but `binary_logistic`) and the kernel path otherwise; both consume the stream alike. A
/// systematic scan of an Ising lattice is the checkerboard sweep of [`LatticeGibbs`] instead,
/// with its own random stream.
/// `progress`, if given, is advanced by one per step taken.
///
/// # Errors
///
/// [`RunError`] for invalid parameters or a start where the model is not finite.
pub fn run_chains(
    model: &BinaryModel,
    sampler: &SamplerSpec,
    config: &RunConfig,
    progress: Option<&Progress>,
) -> Result<BinaryRun, RunError> {
    run_chains_keeping(model, sampler, config, progress, Keep::all())
}

/// [`run_chains`] with the kept draws handled by `keep`: streamed to its sink, and only every
/// `stride`-th kept in memory. The draws are those of [`run_chains`].
///
/// # Errors
///
/// As [`run_chains`], and [`RunError::Output`] when the sink fails.
pub fn run_chains_keeping(
    model: &BinaryModel,
    sampler: &SamplerSpec,
    config: &RunConfig,
    progress: Option<&Progress>,
    keep: Keep<'_, u8>,
) -> Result<BinaryRun, RunError> {
    let shape = config.shape(model.dim());
    if *sampler == SamplerSpec::BlockGibbs {
        if !matches!(model, BinaryModel::Rbm { .. }) {
            return Err(RunError::Model(BLOCK_GIBBS_NEEDS_RBM.into()));
        }
    } else {
        sampler.check(&shape).map_err(RunError::Param)?;
    }
    let wt = transpose_for(model, sampler);
    let run = map_chains_from(
        config.seed,
        config.first_chain,
        config.threads,
        vec![(); config.chains],
        |c, (), rng| {
            let keeper = Keeper::new(keep, c, model.dim());
            let chain = (c, rng);
            run_one(
                (model, &wt),
                sampler,
                &shape,
                config,
                chain,
                progress,
                keeper,
            )
        },
    )?;
    Ok(BinaryRun::new(model.dim(), run))
}

/// Buffers for `d` coordinates, the state drawn uniformly from `{0,1}^d` (one `u32` of `rng`
/// per coordinate, its top bit).
pub(crate) fn uniform_buffers<R: Rng + ?Sized>(d: usize, rng: &mut R) -> ChainVecs<u8> {
    let x: Vec<u8> = (0..d)
        .map(|_| u8::from(rng.next_u32() >> 31 == 1))
        .collect();
    ChainVecs::new(&x)
}

/// Gibbs sweeps on a raw state through the model's single-flip fast path.
struct FastGibbs<'m, T> {
    x: Vec<u8>,
    previous: Vec<u8>,
    target: &'m mut T,
    gibbs: Gibbs,
    rng: Xoshiro256PlusPlus,
}

impl<T: FlipDelta> ChainDriver for FastGibbs<'_, T> {
    type Value = u8;
    fn step(&mut self) -> Result<(StepReport, u64), RunError> {
        crate::simd::dispatch(self)
    }
    fn state(&self) -> &[u8] {
        &self.x
    }
    fn log_density(&self) -> Option<f64> {
        None
    }
    fn save(&self) -> Result<DriverState, CheckpointError> {
        Ok(save_raw(&self.x, &self.rng, self.target.running_sums()))
    }
    // The model's running sums (an RBM's hidden pre-activations, a quadratic's gradient) are
    // established at the restored state, then given the bits the flips had kept.
    fn restore(&mut self, saved: &DriverState) -> Result<(), RunError> {
        restore_raw(&mut self.x, &mut self.rng, saved)?;
        let mut grad = vec![0.0f32; self.x.len()];
        self.target
            .log_density_and_grad(&self.x, &mut grad)
            .map_err(|e| RunError::Model(format!("restoring a checkpoint: {e}")))?;
        restore_sums(self.target.running_sums_mut(), saved)
    }
}

impl<T: FlipDelta> HotLoop for FastGibbs<'_, T> {
    type Output = Result<(StepReport, u64), RunError>;
    #[inline(always)]
    fn run(&mut self) -> Self::Output {
        self.previous.copy_from_slice(&self.x);
        let mut sweep = SweepReport::default();
        for _ in 0..self.x.len() {
            let changed = self
                .gibbs
                .update_binary(&mut *self.target, &mut self.x, &mut self.rng)
                .map_err(|e| RunError::Model(e.to_string()))?;
            sweep.add_update(changed, 1);
        }
        Ok((sweep.report(), hamming(&self.previous, &self.x)))
    }
}

/// Starts the single-flip Gibbs driver at `x` (checking `U` is finite there) and hands it to `f`.
fn with_fast_gibbs<T: FlipDelta, O>(
    target: &mut T,
    x: Vec<u8>,
    scan: Scan,
    rng: Xoshiro256PlusPlus,
    c: usize,
    f: impl FnOnce(&'static str, &mut dyn ChainDriver<Value = u8>) -> Result<O, RunError>,
) -> Result<O, RunError> {
    // Establish the model's current state (caches) at the start.
    let mut grad = vec![0.0f32; x.len()];
    let u = target
        .log_density_and_grad(&x, &mut grad)
        .map_err(|e| RunError::Model(format!("chain {c}: {e}")))?;
    if !u.is_finite() {
        return Err(RunError::Model(format!(
            "chain {c}: log-density at the initial state is not finite"
        )));
    }
    let mut driver = FastGibbs {
        previous: x.clone(),
        x,
        target,
        gibbs: Gibbs::new(scan),
        rng,
    };
    f("gibbs (single-flip fast path)", &mut driver)
}

/// Systematic Gibbs sweeps of an Ising lattice in checkerboard order, with tabulated
/// conditionals ([`LatticeGibbs`]).
struct CheckerboardGibbs {
    x: Vec<u8>,
    gibbs: LatticeGibbs<Dims>,
    rng: Xoshiro256PlusPlus,
}

impl ChainDriver for CheckerboardGibbs {
    type Value = u8;
    fn step(&mut self) -> Result<(StepReport, u64), RunError> {
        crate::simd::dispatch(self)
    }
    fn state(&self) -> &[u8] {
        &self.x
    }
    fn log_density(&self) -> Option<f64> {
        None
    }
    // The conditionals are tables of the model alone: the state and stream are everything.
    fn save(&self) -> Result<DriverState, CheckpointError> {
        Ok(save_raw(&self.x, &self.rng, &[]))
    }
    fn restore(&mut self, saved: &DriverState) -> Result<(), RunError> {
        restore_raw(&mut self.x, &mut self.rng, saved)
    }
}

impl HotLoop for CheckerboardGibbs {
    type Output = Result<(StepReport, u64), RunError>;
    #[inline(always)]
    fn run(&mut self) -> Self::Output {
        let changed = self
            .gibbs
            .sweep(&mut self.x, &mut self.rng)
            .map_err(|e| RunError::Model(e.to_string()))?;
        // A sweep is d updates, each always accepted and counted as one evaluation (as the
        // single-flip path counts them); every site is visited once, so the sites that changed
        // are the distance moved.
        let mut sweep = SweepReport::default();
        sweep.add_update(false, u32::try_from(self.x.len()).unwrap_or(u32::MAX));
        let mut report = sweep.report();
        report.proposed_flips = changed;
        Ok((report, u64::from(changed)))
    }
}

/// Block Gibbs sweeps of an RBM on a raw visible state, the hidden units in their own buffer.
struct RbmSweeps<'m, 'a> {
    x: Vec<u8>,
    previous: Vec<u8>,
    hidden: Vec<u8>,
    rbm: &'m Rbm<'a, crate::FlipMathImpl>,
    rng: Xoshiro256PlusPlus,
}

/// One block-Gibbs sweep of an RBM (`hidden` holds the hidden units) as a step report.
#[inline(always)]
pub(crate) fn block_gibbs_sweep<M: FlipMath>(
    rbm: &Rbm<'_, M>,
    x: &mut [u8],
    hidden: &mut [u8],
    rng: &mut Xoshiro256PlusPlus,
) -> Result<StepReport, LenError> {
    let changed = BlockGibbs::sweep(rbm, x, hidden, rng)?;
    // A sweep is one Gibbs move of the whole state: always accepted, no target evaluation.
    let mut sweep = SweepReport::default();
    sweep.add_update(changed > 0, 0);
    let mut report = sweep.report();
    report.proposed_flips = changed;
    Ok(report)
}

impl ChainDriver for RbmSweeps<'_, '_> {
    type Value = u8;
    fn step(&mut self) -> Result<(StepReport, u64), RunError> {
        crate::simd::dispatch(self)
    }
    fn state(&self) -> &[u8] {
        &self.x
    }
    fn log_density(&self) -> Option<f64> {
        None
    }
    // A sweep draws the hidden units afresh from the visible ones first: they are no state.
    fn save(&self) -> Result<DriverState, CheckpointError> {
        Ok(save_raw(&self.x, &self.rng, &[]))
    }
    fn restore(&mut self, saved: &DriverState) -> Result<(), RunError> {
        restore_raw(&mut self.x, &mut self.rng, saved)
    }
}

impl HotLoop for RbmSweeps<'_, '_> {
    type Output = Result<(StepReport, u64), RunError>;
    #[inline(always)]
    fn run(&mut self) -> Self::Output {
        self.previous.copy_from_slice(&self.x);
        let report = block_gibbs_sweep(self.rbm, &mut self.x, &mut self.hidden, &mut self.rng)
            .map_err(|e| RunError::Model(e.to_string()))?;
        Ok((report, u64::from(report.proposed_flips)))
    }
}

/// The `Wᵀ` the chains of `sampler` on `model` use: an RBM's, built, if the sampler reads it,
/// else none (empty).
pub(crate) fn transpose_for(model: &BinaryModel, sampler: &SamplerSpec) -> Vec<f32> {
    if sampler.reads_rbm_transpose() {
        model.rbm_transpose()
    } else {
        Vec::new()
    }
}

/// Builds chain `c` of a run exactly as [`run_chains`] does (start, kernel selection, fast
/// paths) on `model` with `wt` as an RBM's `Wᵀ` (from [`transpose_for`]) and hands its driver
/// to `f` with the name of the kernel that steps it; `bench` times this same driver.
pub(crate) fn with_chain<O>(
    (model, wt): (&BinaryModel, &[f32]),
    sampler: &SamplerSpec,
    shape: &RunShape,
    c: usize,
    mut rng: Xoshiro256PlusPlus,
    f: impl FnOnce(&'static str, &mut dyn ChainDriver<Value = u8>) -> Result<O, RunError>,
) -> Result<O, RunError> {
    let d = model.dim();
    let mut cache = vec![0.0f64; model.cache_len()];
    let target = if sampler.reads_rbm_transpose() {
        model.target_with_transpose(&mut cache, wt)
    } else {
        model.target(&mut cache)
    };
    let mut target = target.map_err(RunError::Model)?;
    let mut buffers = uniform_buffers(d, &mut rng);
    if *sampler == SamplerSpec::BlockGibbs {
        let ModelTarget::Rbm(rbm) = &target else {
            return Err(RunError::Model(BLOCK_GIBBS_NEEDS_RBM.into()));
        };
        let mut driver = RbmSweeps {
            previous: buffers.x.clone(),
            x: buffers.x,
            hidden: vec![0; rbm.hidden_units()],
            rbm,
            rng,
        };
        return f("block-gibbs (RBM sweeps)", &mut driver);
    }
    let kernel = sampler
        .kernel_for_model::<ForTarget<_>>(model, shape)
        .map_err(RunError::Param)?;
    if let SamplerSpec::PtDmala {
        replicas,
        target_acceptance,
        ..
    } = *sampler
    {
        let plan = replica_plan(replicas, target_acceptance, shape.burn_in, None)
            .map_err(RunError::Param)?;
        let x = buffers.x;
        return with_replicas::<Binary, _, _>(&mut target, &x, plan, rng, hamming, c, |d| {
            f("pt-dmala (replica exchange)", d)
        });
    }
    if let SamplerSpec::Gibbs { scan } = *sampler {
        let x = buffers.x;
        match &mut target {
            ModelTarget::Quadratic(t) => return with_fast_gibbs(t, x, scan, rng, c, f),
            ModelTarget::IsingGraph(t) => return with_fast_gibbs(t, x, scan, rng, c, f),
            ModelTarget::Lattice(t) if scan == Scan::Systematic => {
                let mut driver = CheckerboardGibbs {
                    x,
                    gibbs: LatticeGibbs::new(t),
                    rng,
                };
                return f("gibbs (tabulated checkerboard sweep)", &mut driver);
            }
            ModelTarget::Lattice(t) => return with_fast_gibbs(t, x, scan, rng, c, f),
            ModelTarget::Rbm(t) => return with_fast_gibbs(t, x, scan, rng, c, f),
            ModelTarget::RbmBf16(t) => return with_fast_gibbs(t, x, scan, rng, c, f),
            ModelTarget::Logistic(_) => buffers.x = x,
        }
    }
    let chain = BinaryChain::new(buffers.buffers(), &mut target)
        .map_err(|e| RunError::Model(format!("chain {c}: {e}")))?;
    let name = kernel.name();
    let previous = matches!(sampler, SamplerSpec::Gibbs { .. }).then(|| vec![0; d]);
    let mut driver = KernelDriver::new(chain, target, kernel, rng, previous);
    f(name, &mut driver)
}

fn run_one(
    model: (&BinaryModel, &[f32]),
    sampler: &SamplerSpec,
    shape: &RunShape,
    config: &RunConfig,
    (c, rng): (usize, Xoshiro256PlusPlus),
    progress: Option<&Progress>,
    keeper: Keeper<'_, u8>,
) -> Result<ChainResult, RunError> {
    // ACS may need more steps than the burn-in; its plan never exceeds its budget.
    let cap = shape.burn_in.saturating_add(shape.steps);
    with_chain(model, sampler, shape, c, rng, |_, driver| {
        drive(driver, config, cap, progress, keeper)
    })
}
