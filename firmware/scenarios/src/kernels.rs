//! Golden hashes of every other kernel of the core: the ordinal and categorical kernels, the
//! tabulated lattice kernels, the baselines, the second-order kernel and the continuous
//! integrators, each on a small fixed target of [`crate::targets`].
//!
//! Discrete runs hash the state after every step (labels as little-endian `u16`) and the
//! log-density bits, as [`crate::golden`] does. Continuous runs hash the little-endian bytes of
//! `f64::to_bits` of every coordinate of `θ` after every step and, in place of a log-density,
//! the step report (`grad_evals` and `index_moves` as little-endian `u32`, then `refreshed` as a
//! byte). Every step call is bracketed by a [`Meter`], so the boards report instructions per
//! step for each kernel.

use crate::Failure;
use crate::cost::Meter;
use crate::golden::{FNV_OFFSET, Hashes, Lattice8x8, fnv1a, lattice_8x8};
use crate::table::{KERNEL_PINS, STEPS, same_name};
use crate::targets::{
    GAUSS_STATES, LatticeGauss, POTTS_STATES, RIDGE_DIM, RIDGE_TERMS, Ridge, RingPotts,
    SECOND_BALANCE, SECOND_DIM, second_order_params,
};
use langevin_core::baselines::{
    Balancing, Gibbs, Gwg, HammingBall, LocallyBalanced, RandomWalk, Scan,
};
use langevin_core::binary::{
    BinaryChain, ChainStorage, LatticeClasses, LatticeDmala, LatticeDula, LatticeGibbs,
    LatticeProposal, PortablePasses, SmallLatticeChain, SmallLatticeDmala,
};
use langevin_core::categorical::{self, CategoricalChain, CategoricalProposal, CategoricalStorage};
use langevin_core::continuous::{
    Access, Agld, AgldSettings, DenseSnapshots, Ewsg, EwsgSettings, Langevin, LangevinSettings,
    PointSnapshot, ScalarSnapshots, SgChain, SgStep, SnapshotUpdate, Underdamped,
    UnderdampedSettings,
};
use langevin_core::dlmc::{CategoricalDlmcProposal, DlmcProposal, Solver};
use langevin_core::domain::LabelDomain;
use langevin_core::kernel::Dmala;
use langevin_core::models::BinaryQuadratic;
use langevin_core::ordinal::{self, OrdinalChain, OrdinalProposal, OrdinalStorage};
use langevin_core::path_auxiliary::{PathAuxiliary, PathBuffers, PathKernel};
use langevin_core::second_order::{AbSecondOrder, TrickParams, scratch_len};
use langevin_core::tempering::{LadderSettings, ReplicaScratch, Replicas};
use langevin_core::tuning::{AcceptanceSettings, AcceptanceTuner};
use langevin_core::{Binary, Chain, Eval, Kernel as CoreKernel};
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// Coordinates of the ordinal and categorical golden runs.
pub const LABEL_DIM: usize = 8;

/// The runs of this module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Run {
    /// Ordinal DULA, step 1, balance 0.5, on [`LatticeGauss`] (`d = 8`, `S = 5`).
    OrdinalDula,
    /// Ordinal DMALA, step 1, balance 0.5, on the same.
    OrdinalDmala,
    /// Gibbs (random scan) as an ordinal kernel on the same.
    OrdinalGibbs,
    /// Categorical DULA, step 1, balance 0.5, on [`RingPotts`] (`d = 8`, `S = 3`).
    CategoricalDula,
    /// Categorical DMALA, step 1, balance 0.5, on the same.
    CategoricalDmala,
    /// Gibbs (random scan) as a categorical kernel on the same.
    CategoricalGibbs,
    /// Gibbs-with-gradients as a categorical kernel on the same.
    CategoricalGwg,
    /// The tabulated DULA on the 8×8 Ising lattice (coupling 0.3, field 0.1), step 0.5,
    /// balance 0.5.
    LatticeDula,
    /// The tabulated DMALA on the same.
    LatticeDmala,
    /// The same, with the current state's classes kept between steps ([`LatticeClasses`]):
    /// the same draws, so the same hashes.
    LatticeDmalaKept,
    /// Gibbs (random scan) as a binary kernel on the 8×8 lattice.
    Gibbs,
    /// Gibbs-with-gradients on the 8×8 lattice.
    Gwg,
    /// Random-walk Metropolis, flip rate 1/16, on the 8×8 lattice.
    RandomWalk,
    /// The any-scale second-order kernel on the binary quadratic of
    /// [`second_order_params`], step 0.5.
    SecondOrder,
    /// Full-gradient LMC, step 0.01, on [`Ridge`].
    Lmc,
    /// SGLD, step 0.01, minibatch 4, random access.
    Sgld,
    /// SGLD, step 0.01, minibatch 4, reshuffled access.
    SgldReshuffle,
    /// Full-gradient underdamped Langevin, step 0.05, friction 1.
    Underdamped,
    /// SGHMC, step 0.05, friction 1, minibatch 4, cyclic access.
    Sghmc,
    /// EWSG, step 0.05, friction 1, minibatch 2, one index move.
    Ewsg,
    /// AGLD with total updates every 16 steps (SVRG-LD), a point snapshot, random access,
    /// step 0.01, minibatch 4.
    AgldSvrg,
    /// AGLD with partial updates (SAGA-LD), a dense table, reshuffled access.
    AgldSaga,
    /// AGLD with mixed updates every 16 steps (TMU), scalar snapshots, cyclic access.
    AgldTmu,
    /// Acceptance-targeting DMALA on [`LatticeGauss`], tuning for 500 steps, then frozen.
    OrdinalDmalaAdapt,
    /// Acceptance-targeting DMALA on [`RingPotts`], tuning for 500 steps, then frozen.
    CategoricalDmalaAdapt,
    /// Replica exchange with three replicas on the 8×8 lattice, adapting for 500 sweeps: the
    /// cold chain.
    PtDmala,
    /// Acceptance-targeting DMALA on the 8×8 lattice, tuning for 500 steps, then frozen.
    DmalaAdapt,
    /// The locally balanced proposal (Barker) on the 8×8 lattice.
    Lb,
    /// The locally balanced proposal (Barker) as a categorical kernel on [`RingPotts`].
    CategoricalLb,
    /// The Hamming-ball sampler, radius 2, blocks of 5, on the 8×8 lattice.
    HammingBall,
    /// The path auxiliary sampler, paths of 3 flips, on the 8×8 lattice.
    Pas,
    /// The path auxiliary sampler, paths of 2 moves, on [`RingPotts`].
    CategoricalPas,
    /// DLMC, interpolating solver, time 0.3, on the 8×8 lattice.
    Dlmc,
    /// DLMC, Euler solver, time 0.5, on [`RingPotts`].
    CategoricalDlmc,
    /// Checkerboard Gibbs sweeps with tabulated conditionals ([`LatticeGibbs`]) on the 8×8
    /// lattice: the state and the number of sites changed per sweep are hashed.
    LatticeGibbs,
    /// The integer DMALA ([`SmallLatticeDmala`], [`SMALL_LATTICE`]) on the 8×8 lattice of
    /// [`Run::LatticeDmala`], with the same step and balance: the same moves, so the same state
    /// hash; the second hash is of the bond sum and the magnetisation (little-endian `i32`)
    /// after every step, in place of the log-density.
    SmallLatticeDmala,
}

impl Run {
    /// Every run, in a fixed order.
    pub const ALL: [Run; 36] = [
        Run::OrdinalDula,
        Run::OrdinalDmala,
        Run::OrdinalGibbs,
        Run::CategoricalDula,
        Run::CategoricalDmala,
        Run::CategoricalGibbs,
        Run::CategoricalGwg,
        Run::LatticeDula,
        Run::LatticeDmala,
        Run::LatticeDmalaKept,
        Run::Gibbs,
        Run::Gwg,
        Run::RandomWalk,
        Run::SecondOrder,
        Run::Lmc,
        Run::Sgld,
        Run::SgldReshuffle,
        Run::Underdamped,
        Run::Sghmc,
        Run::Ewsg,
        Run::AgldSvrg,
        Run::AgldSaga,
        Run::AgldTmu,
        Run::OrdinalDmalaAdapt,
        Run::CategoricalDmalaAdapt,
        Run::PtDmala,
        Run::DmalaAdapt,
        Run::Lb,
        Run::CategoricalLb,
        Run::HammingBall,
        Run::Pas,
        Run::CategoricalPas,
        Run::Dlmc,
        Run::CategoricalDlmc,
        Run::LatticeGibbs,
        Run::SmallLatticeDmala,
    ];

    /// The run of a short name ([`Run::name`]).
    pub const fn from_name(name: &str) -> Option<Run> {
        let mut rest: &[Run] = &Run::ALL;
        while let [r, tail @ ..] = rest {
            if same_name(r.name(), name) {
                return Some(*r);
            }
            rest = tail;
        }
        None
    }

    /// A short lower-case name.
    pub const fn name(self) -> &'static str {
        match self {
            Run::OrdinalDula => "ordinal-dula",
            Run::OrdinalDmala => "ordinal-dmala",
            Run::OrdinalGibbs => "ordinal-gibbs",
            Run::CategoricalDula => "categorical-dula",
            Run::CategoricalDmala => "categorical-dmala",
            Run::CategoricalGibbs => "categorical-gibbs",
            Run::CategoricalGwg => "categorical-gwg",
            Run::LatticeDula => "lattice-dula",
            Run::LatticeDmala => "lattice-dmala",
            Run::LatticeDmalaKept => "lattice-dmala-kept",
            Run::Gibbs => "gibbs",
            Run::Gwg => "gwg",
            Run::RandomWalk => "rwm",
            Run::SecondOrder => "second-order",
            Run::Lmc => "lmc",
            Run::Sgld => "sgld",
            Run::SgldReshuffle => "sgld-reshuffle",
            Run::Underdamped => "underdamped",
            Run::Sghmc => "sghmc",
            Run::Ewsg => "ewsg",
            Run::AgldSvrg => "agld-svrg",
            Run::AgldSaga => "agld-saga",
            Run::AgldTmu => "agld-tmu",
            Run::OrdinalDmalaAdapt => "ordinal-dmala-adapt",
            Run::CategoricalDmalaAdapt => "categorical-dmala-adapt",
            Run::PtDmala => "pt-dmala",
            Run::DmalaAdapt => "dmala-adapt",
            Run::Lb => "lb",
            Run::CategoricalLb => "categorical-lb",
            Run::HammingBall => "hamming-ball",
            Run::Pas => "pas",
            Run::CategoricalPas => "categorical-pas",
            Run::Dlmc => "dlmc",
            Run::CategoricalDlmc => "categorical-dlmc",
            Run::LatticeGibbs => "lattice-gibbs",
            Run::SmallLatticeDmala => "lattice-dmala-small",
        }
    }
}

/// A pinned run of this module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelGolden {
    /// The kernel and target.
    pub run: Run,
    /// The seed of `Xoshiro256PlusPlus::seed_from_u64`.
    pub seed: u64,
    /// Steps hashed.
    pub steps: u32,
    /// The expected hashes.
    pub hashes: Hashes,
}

/// The pinned values of [`crate::table::KERNEL_PINS`], typed.
pub const KERNEL_GOLDEN: [KernelGolden; KERNEL_PINS.len()] = typed_table();

#[allow(
    clippy::indexing_slicing,
    clippy::panic,
    reason = "evaluated at compile time only: an unknown name is a compile error"
)]
const fn typed_table() -> [KernelGolden; KERNEL_PINS.len()] {
    let mut out = [KernelGolden {
        run: Run::OrdinalDula,
        seed: 0,
        steps: 0,
        hashes: Hashes {
            state: 0,
            log_density: 0,
        },
    }; KERNEL_PINS.len()];
    let mut i = 0;
    while i < KERNEL_PINS.len() {
        let p = KERNEL_PINS[i];
        let Some(run) = Run::from_name(p.run) else {
            panic!("a kernel pin of the golden table names no run");
        };
        out[i] = KernelGolden {
            run,
            seed: p.seed,
            steps: STEPS,
            hashes: Hashes {
                state: p.state,
                log_density: p.second,
            },
        };
        i += 1;
    }
    out
}

/// The kernel of [`Run::SmallLatticeDmala`]: the 8×8 periodic lattice, coupling 0.3, field
/// 0.1, step 0.5, balance 0.5, tabulated at compile time (the image holds only the table).
pub const SMALL_LATTICE: SmallLatticeDmala =
    match SmallLatticeDmala::new(8, 8, true, 0.3, 0.1, 0.5, 0.5) {
        Ok(k) => k,
        Err(_) => panic!("the small lattice kernel's parameters are valid"),
    };

/// Runs `steps` steps of [`SMALL_LATTICE`] from the all-zero state with `seed` and hashes them
/// (see [`Run::SmallLatticeDmala`]), bracketing every step call with `meter`. Its buffers are
/// 128 bytes on the stack, and it uses no floating-point arithmetic.
///
/// # Errors
///
/// A [`Failure`] if the chain or a step refuses; none is expected.
pub fn run_small_lattice<M: Meter>(
    seed: u64,
    steps: u32,
    meter: &mut M,
) -> Result<Hashes, Failure> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let (mut x, mut class) = ([0u8; 64], [0u8; 64]);
    let mut chain =
        SmallLatticeChain::new(&SMALL_LATTICE, &mut x, &mut class).map_err(|_| Failure::Init)?;
    let ctx = &mut (&mut chain, &mut rng);
    let step = |c: &mut (&mut SmallLatticeChain<'_>, &mut Xoshiro256PlusPlus)| {
        SMALL_LATTICE
            .step(c.0, c.1)
            .map(|_| ())
            .map_err(|_| Failure::Step)
    };
    let fold = |c: &(&mut SmallLatticeChain<'_>, &mut Xoshiro256PlusPlus), h: &mut Hashes| {
        h.state = fnv1a(h.state, c.0.state());
        h.log_density = fnv1a(h.log_density, &c.0.bonds().to_le_bytes());
        h.log_density = fnv1a(h.log_density, &c.0.magnetisation().to_le_bytes());
    };
    hash_loop(ctx, steps, meter, step, fold)
}

/// Initial position of the continuous runs.
pub const THETA0: [f64; RIDGE_DIM] = [1.0, -1.0, 0.5, 0.0];

/// Runs `steps` steps of `run` with `seed` and hashes them, bracketing every step call with
/// `meter`.
///
/// # Errors
///
/// A [`Failure`] if a constructor or a step refuses; none is expected.
pub fn run_kernel<M: Meter>(
    run: Run,
    seed: u64,
    steps: u32,
    meter: &mut M,
) -> Result<Hashes, Failure> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let rng = &mut rng;
    match run {
        Run::OrdinalDula | Run::OrdinalDmala | Run::OrdinalGibbs | Run::OrdinalDmalaAdapt => {
            let mut target = LatticeGauss::<LABEL_DIM>;
            let mut storage = OrdinalStorage::<LABEL_DIM, GAUSS_STATES>::new([0; LABEL_DIM]);
            let mut chain = OrdinalChain::new_ordinal(storage.buffers(), &mut target)
                .map_err(|_| Failure::Init)?;
            let p = OrdinalProposal::new(1.0, 0.5).map_err(|_| Failure::Param)?;
            let ctx = &mut (&mut chain, &mut target, rng);
            match run {
                Run::OrdinalDula => label_loop(ordinal::Dula::new(p), ctx, steps, meter),
                Run::OrdinalDmala => label_loop(ordinal::Dmala::new(p), ctx, steps, meter),
                Run::OrdinalDmalaAdapt => label_loop(acceptance_tuner()?, ctx, steps, meter),
                _ => label_loop(Gibbs::new(Scan::Random), ctx, steps, meter),
            }
        }
        Run::CategoricalDula
        | Run::CategoricalDmala
        | Run::CategoricalGibbs
        | Run::CategoricalGwg
        | Run::CategoricalDmalaAdapt
        | Run::CategoricalLb => on_potts(rng, |ctx| {
            let p = CategoricalProposal::new(1.0, 0.5).map_err(|_| Failure::Param)?;
            match run {
                Run::CategoricalDula => label_loop(categorical::Dula::new(p), ctx, steps, meter),
                Run::CategoricalDmala => label_loop(categorical::Dmala::new(p), ctx, steps, meter),
                Run::CategoricalGibbs => label_loop(Gibbs::new(Scan::Random), ctx, steps, meter),
                Run::CategoricalDmalaAdapt => label_loop(acceptance_tuner()?, ctx, steps, meter),
                Run::CategoricalLb => {
                    let weights = [0.0f64; LABEL_DIM * POTTS_STATES];
                    label_loop(
                        LocallyBalanced::new(Balancing::Barker, weights),
                        ctx,
                        steps,
                        meter,
                    )
                }
                _ => label_loop(Gwg, ctx, steps, meter),
            }
        }),
        Run::LatticeDula
        | Run::LatticeDmala
        | Run::LatticeDmalaKept
        | Run::Gibbs
        | Run::Gwg
        | Run::RandomWalk
        | Run::DmalaAdapt
        | Run::Lb
        | Run::HammingBall => on_lattice(rng, |ctx| {
            let lattice = LatticeProposal::new(ctx.1, 0.5, 0.5).map_err(|_| Failure::Param)?;
            match run {
                Run::LatticeDula => {
                    let k = LatticeDula::new(lattice);
                    hash_loop(ctx, steps, meter, |c| ok(k.step(c.0, c.2)), fold_binary)
                }
                Run::LatticeDmala => {
                    let k = LatticeDmala::new(lattice);
                    hash_loop(ctx, steps, meter, |c| ok(k.step(c.0, c.2)), fold_binary)
                }
                Run::LatticeDmalaKept => {
                    let k = LatticeDmala::new(lattice);
                    let mut classes = LatticeClasses::new([0u8; 64]);
                    let step = |c: &mut (&mut BinaryChain<'_>, _, &mut _)| {
                        ok(k.step_with_classes(c.0, &mut classes, c.2, &PortablePasses))
                    };
                    hash_loop(ctx, steps, meter, step, fold_binary)
                }
                Run::Gibbs => binary_loop(Gibbs::new(Scan::Random), ctx, steps, meter),
                Run::Gwg => binary_loop(Gwg, ctx, steps, meter),
                Run::DmalaAdapt => binary_loop(acceptance_tuner()?, ctx, steps, meter),
                Run::Lb => binary_loop(
                    LocallyBalanced::new(Balancing::Barker, [0.0f64; 64]),
                    ctx,
                    steps,
                    meter,
                ),
                Run::HammingBall => {
                    let k = HammingBall::new(2, 5, [0.0f64; 16]).map_err(|_| Failure::Param)?;
                    binary_loop(k, ctx, steps, meter)
                }
                _ => {
                    let k = RandomWalk::new(1.0 / 16.0).map_err(|_| Failure::Param)?;
                    binary_loop(k, ctx, steps, meter)
                }
            }
        }),
        Run::Pas => on_lattice(rng, |ctx| {
            let (mut weights, mut path) = ([0.0f64; 64], [0u32; 3]);
            let kernel = path_kernel(3, &mut weights, &mut path)?;
            binary_loop(kernel, ctx, steps, meter)
        }),
        Run::CategoricalPas => on_potts(rng, |ctx| {
            let mut weights = [0.0f64; LABEL_DIM * POTTS_STATES];
            let mut path = [0u32; 2];
            let kernel = path_kernel(2, &mut weights, &mut path)?;
            label_loop(kernel, ctx, steps, meter)
        }),
        Run::Dlmc => on_lattice(rng, |ctx| {
            let p = DlmcProposal::new(Solver::Interpolate, 0.3).map_err(|_| Failure::Param)?;
            binary_loop(Dmala::new(p), ctx, steps, meter)
        }),
        Run::CategoricalDlmc => on_potts(rng, |ctx| {
            let p = CategoricalDlmcProposal::new(0.5).map_err(|_| Failure::Param)?;
            label_loop(Dmala::new(p), ctx, steps, meter)
        }),
        Run::PtDmala => pt_dmala(rng, steps, meter),
        Run::SmallLatticeDmala => run_small_lattice(seed, steps, meter),
        Run::LatticeGibbs => {
            let gibbs = LatticeGibbs::new(&lattice_8x8()?);
            let ctx = &mut ([0u8; 64], rng, 0u32);
            hash_loop(
                ctx,
                steps,
                meter,
                |c| {
                    c.2 = gibbs.sweep(&mut c.0, c.1).map_err(|_| Failure::Step)?;
                    Ok(())
                },
                |c, h| {
                    h.state = fnv1a(h.state, &c.0);
                    h.log_density = fnv1a(h.log_density, &c.2.to_le_bytes());
                },
            )
        }
        Run::SecondOrder => {
            let (w, diag, a, bias) = second_order_params();
            let mut cache = [0.0f64; 2 * SECOND_DIM];
            let mut target =
                BinaryQuadratic::new(&w, &bias, &mut cache).map_err(|_| Failure::Param)?;
            let mut storage = ChainStorage::<SECOND_DIM>::new([0; SECOND_DIM]);
            let mut chain =
                BinaryChain::new(storage.buffers(), &mut target).map_err(|_| Failure::Init)?;
            let params =
                TrickParams::new(&w, &diag, &a, 0.5, SECOND_BALANCE).map_err(|_| Failure::Param)?;
            let mut scratch = [0.0f64; scratch_len(SECOND_DIM)];
            let mut cached = [0u8; SECOND_DIM];
            let kernel = AbSecondOrder::new(params, &mut scratch, &mut cached)
                .map_err(|_| Failure::Param)?;
            binary_loop(kernel, &mut (&mut chain, &mut target, rng), steps, meter)
        }
        Run::Lmc | Run::Sgld | Run::SgldReshuffle => {
            let settings = match run {
                Run::Lmc => LangevinSettings::lmc(0.01),
                Run::Sgld => LangevinSettings::sgld(0.01, 4),
                _ => LangevinSettings::sgld(0.01, 4).map(|s| s.with_access(Access::Reshuffle)),
            }
            .map_err(|_| Failure::Param)?;
            let mut work = [0.0f64; Langevin::workspace_len(RIDGE_DIM)];
            let mut index = [0u32; RIDGE_TERMS];
            let index = index
                .get_mut(..Langevin::index_len(&settings, RIDGE_TERMS))
                .ok_or(Failure::Param)?;
            let mut chain =
                Langevin::new(settings, RIDGE_DIM, RIDGE_TERMS, &THETA0, &mut work, index)
                    .map_err(|_| Failure::Init)?;
            sg_loop(&mut chain, rng, steps, meter)
        }
        Run::Underdamped | Run::Sghmc => {
            let settings = match run {
                Run::Underdamped => UnderdampedSettings::full(0.05, 1.0),
                _ => {
                    UnderdampedSettings::sghmc(0.05, 1.0, 4).map(|s| s.with_access(Access::Cyclic))
                }
            }
            .map_err(|_| Failure::Param)?;
            let mut work = [0.0f64; Underdamped::workspace_len(RIDGE_DIM)];
            let mut index = [0u32; RIDGE_TERMS];
            let index = index
                .get_mut(..Underdamped::index_len(&settings, RIDGE_TERMS))
                .ok_or(Failure::Param)?;
            let mut chain =
                Underdamped::new(settings, RIDGE_DIM, RIDGE_TERMS, &THETA0, &mut work, index)
                    .map_err(|_| Failure::Init)?;
            sg_loop(&mut chain, rng, steps, meter)
        }
        Run::Ewsg => {
            let settings = EwsgSettings::new(0.05, 1.0)
                .and_then(|s| s.with_batch(2))
                .map_err(|_| Failure::Param)?
                .with_index_chain(1);
            let mut work = [0.0f64; Ewsg::workspace_len(RIDGE_DIM)];
            let mut chain = Ewsg::new(settings, RIDGE_DIM, RIDGE_TERMS, &THETA0, &mut work)
                .map_err(|_| Failure::Init)?;
            sg_loop(&mut chain, rng, steps, meter)
        }
        Run::AgldSvrg | Run::AgldSaga | Run::AgldTmu => {
            let (access, update) = match run {
                Run::AgldSvrg => (Access::Random, SnapshotUpdate::Total { period: 16 }),
                Run::AgldSaga => (Access::Reshuffle, SnapshotUpdate::Partial),
                _ => (Access::Cyclic, SnapshotUpdate::Mixed { period: 16 }),
            };
            let settings =
                AgldSettings::new(0.01, 4, access, update).map_err(|_| Failure::Param)?;
            let mut work = [0.0f64; 4 * RIDGE_DIM];
            let mut index = [0u32; 4 + RIDGE_TERMS];
            let n = Agld::<PointSnapshot<'_>>::index_len(&settings, RIDGE_TERMS);
            let index = index.get_mut(..n).ok_or(Failure::Param)?;
            let mut table = [0.0f64; (RIDGE_TERMS + 1) * RIDGE_DIM];
            match run {
                Run::AgldSvrg => {
                    let buf = table
                        .get_mut(..PointSnapshot::len(RIDGE_DIM))
                        .ok_or(Failure::Param)?;
                    let store = PointSnapshot::new(RIDGE_DIM, RIDGE_TERMS, buf)
                        .map_err(|_| Failure::Init)?;
                    agld_loop(settings, store, &mut work, index, rng, steps, meter)
                }
                Run::AgldSaga => {
                    let len = DenseSnapshots::len(RIDGE_DIM, RIDGE_TERMS).ok_or(Failure::Param)?;
                    let buf = table.get_mut(..len).ok_or(Failure::Param)?;
                    let store = DenseSnapshots::new(RIDGE_DIM, RIDGE_TERMS, buf)
                        .map_err(|_| Failure::Init)?;
                    agld_loop(settings, store, &mut work, index, rng, steps, meter)
                }
                _ => {
                    let len = ScalarSnapshots::len(RIDGE_DIM, RIDGE_TERMS).ok_or(Failure::Param)?;
                    let buf = table.get_mut(..len).ok_or(Failure::Param)?;
                    let store = ScalarSnapshots::new(RIDGE_DIM, RIDGE_TERMS, buf)
                        .map_err(|_| Failure::Init)?;
                    agld_loop(settings, store, &mut work, index, rng, steps, meter)
                }
            }
        }
    }
}

/// Replica exchange with three replicas on the 8×8 lattice; hashes the cold chain.
fn pt_dmala<M: Meter>(
    rng: &mut Xoshiro256PlusPlus,
    steps: u32,
    meter: &mut M,
) -> Result<Hashes, Failure> {
    let mut target = lattice_8x8()?;
    let mut s = [
        ChainStorage::<64>::new([0; 64]),
        ChainStorage::<64>::new([0; 64]),
        ChainStorage::<64>::new([0; 64]),
    ];
    let [a, b, c] = &mut s;
    let mut chains = [
        BinaryChain::new(a.buffers(), &mut target).map_err(|_| Failure::Init)?,
        BinaryChain::new(b.buffers(), &mut target).map_err(|_| Failure::Init)?,
        BinaryChain::new(c.buffers(), &mut target).map_err(|_| Failure::Init)?,
    ];
    let mut scratch = ReplicaScratch::<3>::new();
    let buffers = scratch.buffers(&mut chains);
    let mut settings = LadderSettings::default();
    settings.budget = 500;
    let mut replicas = Replicas::new(buffers, settings, &mut target).map_err(|_| Failure::Init)?;
    let mut h = Hashes {
        state: FNV_OFFSET,
        log_density: FNV_OFFSET,
    };
    for _ in 0..steps {
        meter.start();
        let r = replicas.sweep(&mut target, rng);
        meter.stop();
        ok(r)?;
        let cold = replicas.cold().ok_or(Failure::Step)?;
        h.state = fnv1a(h.state, cold.state());
        h.log_density = fnv1a(h.log_density, &cold.log_density().to_bits().to_le_bytes());
    }
    Ok(h)
}

/// The path auxiliary sampler with paths of `length` moves on these buffers.
fn path_kernel<'b>(
    length: usize,
    weights: &'b mut [f64],
    path: &'b mut [u32],
) -> Result<PathKernel<'b>, Failure> {
    PathAuxiliary::new(length)
        .and_then(|p| p.with_buffers(PathBuffers { weights, path }))
        .map_err(|_| Failure::Param)
}

/// Acceptance-targeting DMALA tuning over the first 500 steps.
fn acceptance_tuner() -> Result<AcceptanceTuner, Failure> {
    let mut s = AcceptanceSettings::default();
    s.budget = 500;
    AcceptanceTuner::new(s).map_err(|_| Failure::Param)
}

fn ok<T, E>(r: Result<T, E>) -> Result<(), Failure> {
    r.map(|_| ()).map_err(|_| Failure::Step)
}

type Ctx<'c, C, T> = (&'c mut C, &'c mut T, &'c mut Xoshiro256PlusPlus);

/// Runs `f` on a chain of [`lattice_8x8`] from the all-zero state.
fn on_lattice(
    rng: &mut Xoshiro256PlusPlus,
    f: impl FnOnce(&mut Ctx<'_, BinaryChain<'_>, Lattice8x8>) -> Result<Hashes, Failure>,
) -> Result<Hashes, Failure> {
    let mut target = lattice_8x8()?;
    let mut storage = ChainStorage::<64>::new([0; 64]);
    let mut chain = BinaryChain::new(storage.buffers(), &mut target).map_err(|_| Failure::Init)?;
    f(&mut (&mut chain, &mut target, rng))
}

/// Runs `f` on a chain of [`RingPotts`] (`d = 8`) from the all-zero state.
fn on_potts(
    rng: &mut Xoshiro256PlusPlus,
    f: impl FnOnce(&mut Ctx<'_, CategoricalChain<'_>, RingPotts<LABEL_DIM>>) -> Result<Hashes, Failure>,
) -> Result<Hashes, Failure> {
    let mut target = RingPotts::<LABEL_DIM>;
    let mut storage = CategoricalStorage::<LABEL_DIM, POTTS_STATES>::new([0; LABEL_DIM]);
    let mut chain = CategoricalChain::new_categorical(storage.buffers(), &mut target)
        .map_err(|_| Failure::Init)?;
    f(&mut (&mut chain, &mut target, rng))
}

/// Steps an ordinal or categorical chain with `kernel`, hashing its states and log-densities.
fn label_loop<D: LabelDomain, K: CoreKernel<D>, T: Eval<D>, M: Meter>(
    mut kernel: K,
    ctx: &mut Ctx<'_, Chain<'_, D>, T>,
    steps: u32,
    meter: &mut M,
) -> Result<Hashes, Failure> {
    hash_loop(
        ctx,
        steps,
        meter,
        |c| ok(kernel.step(c.1, c.0, c.2)),
        |c, h| fold_labels(c.0.state(), c.0.log_density(), h),
    )
}

fn binary_loop<K: CoreKernel<Binary>, T: langevin_core::BinaryTarget, M: Meter>(
    mut kernel: K,
    ctx: &mut Ctx<'_, BinaryChain<'_>, T>,
    steps: u32,
    meter: &mut M,
) -> Result<Hashes, Failure> {
    hash_loop(
        ctx,
        steps,
        meter,
        |c| ok(kernel.step(c.1, c.0, c.2)),
        fold_binary,
    )
}

fn fold_binary<T>(c: &Ctx<'_, BinaryChain<'_>, T>, h: &mut Hashes) {
    h.state = fnv1a(h.state, c.0.state());
    h.log_density = fnv1a(h.log_density, &c.0.log_density().to_bits().to_le_bytes());
}

fn fold_labels(state: &[u16], log_density: f64, h: &mut Hashes) {
    for v in state {
        h.state = fnv1a(h.state, &v.to_le_bytes());
    }
    h.log_density = fnv1a(h.log_density, &log_density.to_bits().to_le_bytes());
}

#[allow(
    clippy::too_many_arguments,
    reason = "the chain's parts and the run's settings"
)]
fn agld_loop<S, M: Meter>(
    settings: AgldSettings,
    store: S,
    work: &mut [f64],
    index: &mut [u32],
    rng: &mut Xoshiro256PlusPlus,
    steps: u32,
    meter: &mut M,
) -> Result<Hashes, Failure>
where
    S: langevin_core::continuous::SnapshotStore<Ridge>,
{
    let mut chain = Agld::new(
        settings,
        RIDGE_DIM,
        RIDGE_TERMS,
        &THETA0,
        store,
        work,
        index,
    )
    .map_err(|_| Failure::Init)?;
    sg_loop(&mut chain, rng, steps, meter)
}

/// Steps an integrator on the ridge sum, hashing `θ` and each step's report.
fn sg_loop<C: SgChain<Ridge>, M: Meter>(
    chain: &mut C,
    rng: &mut Xoshiro256PlusPlus,
    steps: u32,
    meter: &mut M,
) -> Result<Hashes, Failure> {
    hash_loop(
        &mut (chain, Ridge, rng, SgStep::default()),
        steps,
        meter,
        |c| {
            c.3 = c.0.step_with(&mut c.1, c.2).map_err(|_| Failure::Step)?;
            Ok(())
        },
        |c, h| {
            for t in c.0.position() {
                h.state = fnv1a(h.state, &t.to_bits().to_le_bytes());
            }
            let r = c.3;
            h.log_density = fnv1a(h.log_density, &r.grad_evals.to_le_bytes());
            h.log_density = fnv1a(h.log_density, &r.index_moves.to_le_bytes());
            h.log_density = fnv1a(h.log_density, &[u8::from(r.refreshed)]);
        },
    )
}

fn hash_loop<C, M: Meter>(
    ctx: &mut C,
    steps: u32,
    meter: &mut M,
    mut step: impl FnMut(&mut C) -> Result<(), Failure>,
    fold: impl Fn(&C, &mut Hashes),
) -> Result<Hashes, Failure> {
    let mut h = Hashes {
        state: FNV_OFFSET,
        log_density: FNV_OFFSET,
    };
    for _ in 0..steps {
        meter.start();
        let r = metered_step_of(&mut step, ctx);
        meter.stop();
        r?;
        fold(ctx, &mut h);
    }
    Ok(h)
}

/// One step call, never inlined, so that a meter (or `callgrind --toggle-collect`) brackets
/// exactly the step.
#[inline(never)]
fn metered_step_of<C, F: FnMut(&mut C) -> Result<(), Failure>>(
    step: &mut F,
    ctx: &mut C,
) -> Result<(), Failure> {
    step(ctx)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::NoMeter;

    #[test]
    fn every_run_has_one_name_and_one_pin() {
        for (i, r) in Run::ALL.iter().enumerate() {
            assert_eq!(Run::from_name(r.name()), Some(*r));
            assert!(Run::ALL[..i].iter().all(|q| q.name() != r.name()));
            let pins = KERNEL_GOLDEN.iter().filter(|g| g.run == *r).count();
            assert_eq!(pins, 1, "{} is pinned {pins} times", r.name());
        }
        assert_eq!(Run::from_name("no-such-run"), None);
    }

    #[test]
    fn kernel_golden_values_hold_on_the_host() {
        for g in KERNEL_GOLDEN {
            let h = run_kernel(g.run, g.seed, g.steps, &mut NoMeter);
            assert_eq!(h, Ok(g.hashes), "{}", g.run.name());
        }
    }
}
