//! Many chains of a binary kernel, on all cores, with results independent of the thread count.

use super::model::{BinaryModel, ModelTarget};
use crate::kernels::{BoxedKernel, ForTarget, SweepReport};
use crate::run::{
    ChainDriver, ChainResult, ChainVecs, DiscreteRun, DriverState, Keep, Keeper, KernelDriver,
    ModelError, Progress, RawSweep, RunConfig, RunError, Stepped, SweepDriver, drive, hamming,
    restore_sums, with_replicas,
};
use crate::samplers::{Domain, Driver, RunShape, Sampler, SamplerError};
use core::fmt::Display;
use langevin_core::LenError;
use langevin_core::baselines::{BlockGibbs, FlipDelta, Gibbs, Scan};
use langevin_core::binary::{BinaryChain, LatticeGibbs, StepReport};
use langevin_core::math::FlipMath;
use langevin_core::models::{Dims, Rbm};
use langevin_core::{Binary, BinaryTarget};
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
/// The kept draws go to `keep`: [`Keep::all`] holds every one in memory; a sink streams them
/// and a stride keeps every `stride`-th in memory.
///
/// # Errors
///
/// [`RunError`] for invalid parameters or a start where the model is not finite.
///
/// [`RunError::Output`] when `keep`'s sink fails.
pub fn run_chains(
    model: &BinaryModel,
    sampler: &Sampler,
    config: &RunConfig,
    progress: Option<&Progress>,
    keep: Keep<'_, u8>,
) -> Result<BinaryRun, RunError> {
    let shape = config.shape(model.dim());
    if !sampler.runs_on_any_target() && !matches!(model, BinaryModel::Rbm { .. }) {
        return Err(SamplerError::RbmOnly.into());
    }
    sampler
        .validate(Domain::Binary, &shape)
        .map_err(RunError::Param)?;
    let wt = transpose_for(model, sampler);
    let run = config.map_chains(|c, rng| {
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
    })?;
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

/// Gibbs sweeps through the model's single-flip fast path.
struct FastGibbs<'m, T> {
    previous: Vec<u8>,
    target: &'m mut T,
    gibbs: Gibbs,
}

impl<T: FlipDelta> RawSweep<u8> for FastGibbs<'_, T> {
    #[inline(always)]
    fn sweep(&mut self, x: &mut [u8], rng: &mut Xoshiro256PlusPlus) -> Stepped {
        self.previous.copy_from_slice(x);
        let mut sweep = SweepReport::default();
        for _ in 0..x.len() {
            let changed = self
                .gibbs
                .update_binary(&mut *self.target, x, rng)
                .map_err(RunError::evaluation)?;
            sweep.add_update(changed, 1);
        }
        Ok((sweep.report(), hamming(&self.previous, x)))
    }
    fn sums(&self) -> &[f64] {
        self.target.running_sums()
    }
    fn restore_sums(&mut self, x: &[u8], saved: &DriverState) -> Result<(), RunError> {
        let mut grad = vec![0.0f32; x.len()];
        self.target
            .log_density_and_grad(x, &mut grad)
            .map_err(RunError::restoring)?;
        restore_sums(self.target.running_sums_mut(), saved)
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
        .map_err(RunError::at_chain(c))?;
    if !u.is_finite() {
        return Err(RunError::Chain {
            chain: c,
            error: ModelError::StartNotFinite,
        });
    }
    let gibbs = FastGibbs {
        previous: x.clone(),
        target,
        gibbs: Gibbs::new(scan),
    };
    f(
        "gibbs (single-flip fast path)",
        &mut SweepDriver::new(x, rng, gibbs),
    )
}

/// Systematic Gibbs sweeps of an Ising lattice in checkerboard order, with tabulated
/// conditionals ([`LatticeGibbs`]): tables of the model alone, so no running sums.
struct CheckerboardGibbs(LatticeGibbs<Dims>);

impl RawSweep<u8> for CheckerboardGibbs {
    #[inline(always)]
    fn sweep(&mut self, x: &mut [u8], rng: &mut Xoshiro256PlusPlus) -> Stepped {
        let changed = self.0.sweep(x, rng).map_err(RunError::evaluation)?;
        // A sweep is d updates, each always accepted and counted as one evaluation (as the
        // single-flip path counts them); every site is visited once, so the sites that changed
        // are the distance moved.
        let mut sweep = SweepReport::default();
        sweep.add_update(false, u32::try_from(x.len()).unwrap_or(u32::MAX));
        let mut report = sweep.report();
        report.proposed_flips = changed;
        Ok((report, u64::from(changed)))
    }
}

/// Block Gibbs sweeps of an RBM, the hidden units in their own buffer. A sweep draws them
/// afresh from the visible ones first: they are no state.
struct RbmSweeps<'m, 'a> {
    hidden: Vec<u8>,
    rbm: &'m Rbm<'a, crate::FlipMathImpl>,
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

impl RawSweep<u8> for RbmSweeps<'_, '_> {
    #[inline(always)]
    fn sweep(&mut self, x: &mut [u8], rng: &mut Xoshiro256PlusPlus) -> Stepped {
        let report =
            block_gibbs_sweep(self.rbm, x, &mut self.hidden, rng).map_err(RunError::evaluation)?;
        Ok((report, u64::from(report.proposed_flips)))
    }
}

/// The `Wᵀ` the chains of `sampler` on `model` use: an RBM's, built, if the sampler reads it,
/// else none (empty).
pub(crate) fn transpose_for(model: &BinaryModel, sampler: &Sampler) -> Vec<f32> {
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
    sampler: &Sampler,
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
    let mut target = target.map_err(|e| RunError::Model(e.into()))?;
    let mut buffers = uniform_buffers(d, &mut rng);
    let driver = sampler
        .driver(Domain::Binary, shape.burn_in)
        .map_err(RunError::Param)?;
    if let Driver::RbmBlocks = driver {
        let ModelTarget::Rbm(rbm) = &target else {
            return Err(SamplerError::RbmOnly.into());
        };
        let sweeps = RbmSweeps {
            hidden: vec![0; rbm.hidden_units()],
            rbm,
        };
        let mut driver = SweepDriver::new(buffers.x, rng, sweeps);
        return f("block-gibbs (RBM sweeps)", &mut driver);
    }
    let kernel = sampler
        .kernel_for_model::<ForTarget<_>>(model, shape)
        .map_err(RunError::Param)?;
    if let Driver::Gibbs(scan) = driver {
        let x = buffers.x;
        match &mut target {
            ModelTarget::Quadratic(t) => return with_fast_gibbs(t, x, scan, rng, c, f),
            ModelTarget::IsingGraph(t) => return with_fast_gibbs(t, x, scan, rng, c, f),
            ModelTarget::Lattice(t) if scan == Scan::Systematic => {
                let sweeps = CheckerboardGibbs(LatticeGibbs::new(t));
                let mut driver = SweepDriver::new(x, rng, sweeps);
                return f("gibbs (tabulated checkerboard sweep)", &mut driver);
            }
            ModelTarget::Lattice(t) => return with_fast_gibbs(t, x, scan, rng, c, f),
            ModelTarget::Rbm(t) => return with_fast_gibbs(t, x, scan, rng, c, f),
            ModelTarget::RbmBf16(t) => return with_fast_gibbs(t, x, scan, rng, c, f),
            ModelTarget::Logistic(_) => buffers.x = x,
        }
    }
    kernel_chain(target, buffers, driver, kernel, (c, rng), f)
}

/// Chain `c` on `target` from `buffers` stepped by `kernel` (or by the replica ladder the
/// `driver` asks for), handed to `f` with the name of what steps it: what a model's chain and
/// a caller's target share once the models' fast paths are ruled out.
pub(crate) fn kernel_chain<T, O>(
    mut target: T,
    mut buffers: ChainVecs<u8>,
    driver: Driver,
    kernel: BoxedKernel<Binary, T>,
    (c, rng): (usize, Xoshiro256PlusPlus),
    f: impl FnOnce(&'static str, &mut dyn ChainDriver<Value = u8>) -> Result<O, RunError>,
) -> Result<O, RunError>
where
    T: BinaryTarget<Error: Display>,
{
    if let Driver::Replicas(plan) = driver {
        let x = buffers.x;
        return with_replicas::<Binary, _, _>(&mut target, &x, plan, rng, c, |d| {
            f("pt-dmala (replica exchange)", d)
        });
    }
    let d = buffers.x.len();
    let chain = BinaryChain::new(buffers.buffers(), &mut target).map_err(RunError::at_chain(c))?;
    let name = kernel.name();
    let previous = matches!(driver, Driver::Gibbs(_)).then(|| vec![0; d]);
    let mut driver = KernelDriver::new(chain, target, kernel, rng, previous);
    f(name, &mut driver)
}

fn run_one(
    model: (&BinaryModel, &[f32]),
    sampler: &Sampler,
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
