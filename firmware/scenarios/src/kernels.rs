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
use crate::golden::{FNV_OFFSET, Hashes, fnv1a};
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
    PointSnapshot, ScalarSnapshots, SgStep, SnapshotUpdate, Underdamped, UnderdampedSettings,
};
use langevin_core::dlmc::{CategoricalDlmcProposal, DlmcProposal, Solver};
use langevin_core::kernel::Dmala;
use langevin_core::models::{BinaryQuadratic, ConstDims, IsingLattice};
use langevin_core::ordinal::{self, OrdinalChain, OrdinalProposal, OrdinalStorage};
use langevin_core::path_auxiliary::{PathAuxiliary, PathBuffers};
use langevin_core::second_order::{AbSecondOrder, TrickParams, scratch_len};
use langevin_core::tempering::{LadderSettings, ReplicaBuffers, Replicas, SwapStats};
use langevin_core::tuning::{AcceptanceSettings, AcceptanceTuner};
use langevin_core::{Binary, Categorical, Kernel as CoreKernel, Ordinal};
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

const fn k(run: Run, state: u64, second: u64) -> KernelGolden {
    KernelGolden {
        run,
        seed: 1,
        steps: 1000,
        hashes: Hashes {
            state,
            log_density: second,
        },
    }
}

/// The pinned values (state hash, then log-density or step-report hash), seed 1, 1,000 steps.
/// The host test of the workspace computes the same runs and checks this table.
#[rustfmt::skip]
pub const KERNEL_GOLDEN: [KernelGolden; 36] = [
    k(Run::OrdinalDula, 0xb6b4_447a_b072_017e, 0x2e3d_6793_be45_b98f),
    k(Run::OrdinalDmala, 0x72ba_9e91_19ac_ec9b, 0xf206_e81e_b2b1_7223),
    k(Run::OrdinalGibbs, 0x7261_927a_b0ac_e6ee, 0x8b77_4b5b_7658_5633),
    k(Run::CategoricalDula, 0x2c0c_5b3b_588d_f215, 0xa314_9a1d_df90_08b9),
    k(Run::CategoricalDmala, 0xe534_b7c0_610b_05d6, 0xefdf_2791_897e_b3a8),
    k(Run::CategoricalGibbs, 0xd744_633f_e214_bb97, 0xedd0_1682_5e72_dce0),
    k(Run::CategoricalGwg, 0x6335_c07b_7ed5_104f, 0x9541_b958_f812_10bb),
    k(Run::LatticeDula, 0xa303_98e6_dcf1_a291, 0x3963_4ab5_99c2_8471),
    k(Run::LatticeDmala, 0xbc00_8775_fc40_49a0, 0xeb7b_39bc_ff01_b0eb),
    k(Run::LatticeDmalaKept, 0xbc00_8775_fc40_49a0, 0xeb7b_39bc_ff01_b0eb),
    k(Run::Gibbs, 0x1767_8737_326d_449c, 0xc873_f381_4a68_9d09),
    k(Run::Gwg, 0xcf60_c382_a47f_d3fd, 0xa278_e5cc_55df_6a79),
    k(Run::RandomWalk, 0x0e8d_0dd0_0eac_ed27, 0x4c9e_c087_1545_ff3f),
    k(Run::SecondOrder, 0x8580_05ca_15e4_0316, 0x2355_d49b_ed48_9fdb),
    k(Run::Lmc, 0x4a47_7b9c_68e0_6f68, 0x84a3_26f5_8606_9045),
    k(Run::Sgld, 0x7da1_d79d_21a3_5c30, 0x539c_3c87_f2c9_7be5),
    k(Run::SgldReshuffle, 0x34de_1750_b72a_5088, 0x539c_3c87_f2c9_7be5),
    k(Run::Underdamped, 0x5b90_f442_93d3_8b3e, 0x84a3_26f5_8606_9045),
    k(Run::Sghmc, 0x5f6c_6224_a57f_4b20, 0x539c_3c87_f2c9_7be5),
    k(Run::Ewsg, 0x3d2a_f485_93cc_8d26, 0xa06f_f65c_55c1_5425),
    k(Run::AgldSvrg, 0x2912_4f21_e461_625e, 0x7c76_e40a_88dc_ed88),
    k(Run::AgldSaga, 0x2173_1dbd_6cc5_284e, 0xc543_de91_0408_b7b0),
    k(Run::AgldTmu, 0xcaab_a39f_24af_0576, 0x5371_2b45_c830_c7f0),
    k(Run::OrdinalDmalaAdapt, 0x4552_eed4_10ad_781b, 0x24f4_45be_037e_b59a),
    k(Run::CategoricalDmalaAdapt, 0x0f77_239d_8a65_285d, 0xef94_c842_64cd_694f),
    k(Run::PtDmala, 0x0694_f053_46d3_b756, 0x8d03_bcf3_6c37_b91d),
    k(Run::DmalaAdapt, 0x19ed_3fbc_a7e8_4e01, 0x0368_9355_6de4_50d6),
    k(Run::Lb, 0x8177_4168_821e_cd5c, 0xfc29_5fff_242c_30f7),
    k(Run::CategoricalLb, 0x059d_c07d_d0a9_02df, 0x42b9_914f_beb3_b768),
    k(Run::HammingBall, 0x7bad_4a34_ecf5_7fed, 0xd793_9598_0658_1b96),
    k(Run::Pas, 0x4fd4_251e_d8ba_819a, 0x52b6_6036_9e80_e7ed),
    k(Run::CategoricalPas, 0x0922_a429_a43d_9675, 0x45bf_449e_d415_5a82),
    k(Run::Dlmc, 0xfe62_d4aa_b77f_e35d, 0xffa2_2284_028e_f7c3),
    k(Run::CategoricalDlmc, 0x9df1_437b_cd01_04b6, 0xd3ef_c7a4_9a97_7c2f),
    k(Run::LatticeGibbs, 0x0275_4f1b_a8b3_9223, 0x1ffb_7a00_1ec1_8f12),
    k(Run::SmallLatticeDmala, 0xbc00_8775_fc40_49a0, 0x5fad_9870_9730_b504),
];

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
                Run::OrdinalDula => ordinal_loop(ordinal::Dula::new(p), ctx, steps, meter),
                Run::OrdinalDmala => ordinal_loop(ordinal::Dmala::new(p), ctx, steps, meter),
                Run::OrdinalDmalaAdapt => ordinal_loop(acceptance_tuner()?, ctx, steps, meter),
                _ => ordinal_loop(Gibbs::new(Scan::Random), ctx, steps, meter),
            }
        }
        Run::CategoricalDula
        | Run::CategoricalDmala
        | Run::CategoricalGibbs
        | Run::CategoricalGwg
        | Run::CategoricalDmalaAdapt
        | Run::CategoricalLb => {
            let mut target = RingPotts::<LABEL_DIM>;
            let mut storage = CategoricalStorage::<LABEL_DIM, POTTS_STATES>::new([0; LABEL_DIM]);
            let mut chain = CategoricalChain::new_categorical(storage.buffers(), &mut target)
                .map_err(|_| Failure::Init)?;
            let p = CategoricalProposal::new(1.0, 0.5).map_err(|_| Failure::Param)?;
            let ctx = &mut (&mut chain, &mut target, rng);
            match run {
                Run::CategoricalDula => {
                    categorical_loop(categorical::Dula::new(p), ctx, steps, meter)
                }
                Run::CategoricalDmala => {
                    categorical_loop(categorical::Dmala::new(p), ctx, steps, meter)
                }
                Run::CategoricalGibbs => {
                    categorical_loop(Gibbs::new(Scan::Random), ctx, steps, meter)
                }
                Run::CategoricalDmalaAdapt => {
                    categorical_loop(acceptance_tuner()?, ctx, steps, meter)
                }
                Run::CategoricalLb => {
                    let weights = [0.0f64; LABEL_DIM * POTTS_STATES];
                    categorical_loop(
                        LocallyBalanced::new(Balancing::Barker, weights),
                        ctx,
                        steps,
                        meter,
                    )
                }
                _ => categorical_loop(Gwg, ctx, steps, meter),
            }
        }
        Run::LatticeDula
        | Run::LatticeDmala
        | Run::LatticeDmalaKept
        | Run::Gibbs
        | Run::Gwg
        | Run::RandomWalk
        | Run::DmalaAdapt
        | Run::Lb
        | Run::HammingBall => {
            let mut target =
                IsingLattice::<ConstDims<8, 8>>::new(0.3, 0.1, true).map_err(|_| Failure::Param)?;
            let mut storage = ChainStorage::<64>::new([0; 64]);
            let mut chain =
                BinaryChain::new(storage.buffers(), &mut target).map_err(|_| Failure::Init)?;
            let lattice = LatticeProposal::new(&target, 0.5, 0.5).map_err(|_| Failure::Param)?;
            let ctx = &mut (&mut chain, &mut target, rng);
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
        }
        Run::Pas => {
            let mut target =
                IsingLattice::<ConstDims<8, 8>>::new(0.3, 0.1, true).map_err(|_| Failure::Param)?;
            let mut storage = ChainStorage::<64>::new([0; 64]);
            let mut chain =
                BinaryChain::new(storage.buffers(), &mut target).map_err(|_| Failure::Init)?;
            let (mut weights, mut path) = ([0.0f64; 64], [0u32; 3]);
            let buffers = PathBuffers {
                weights: &mut weights,
                path: &mut path,
            };
            let kernel = PathAuxiliary::new(3)
                .and_then(|p| p.with_buffers(buffers))
                .map_err(|_| Failure::Param)?;
            binary_loop(kernel, &mut (&mut chain, &mut target, rng), steps, meter)
        }
        Run::CategoricalPas => {
            let mut target = RingPotts::<LABEL_DIM>;
            let mut storage = CategoricalStorage::<LABEL_DIM, POTTS_STATES>::new([0; LABEL_DIM]);
            let mut chain = CategoricalChain::new_categorical(storage.buffers(), &mut target)
                .map_err(|_| Failure::Init)?;
            let mut weights = [0.0f64; LABEL_DIM * POTTS_STATES];
            let mut path = [0u32; 2];
            let buffers = PathBuffers {
                weights: &mut weights,
                path: &mut path,
            };
            let kernel = PathAuxiliary::new(2)
                .and_then(|p| p.with_buffers(buffers))
                .map_err(|_| Failure::Param)?;
            categorical_loop(kernel, &mut (&mut chain, &mut target, rng), steps, meter)
        }
        Run::Dlmc => {
            let mut target =
                IsingLattice::<ConstDims<8, 8>>::new(0.3, 0.1, true).map_err(|_| Failure::Param)?;
            let mut storage = ChainStorage::<64>::new([0; 64]);
            let mut chain =
                BinaryChain::new(storage.buffers(), &mut target).map_err(|_| Failure::Init)?;
            let p = DlmcProposal::new(Solver::Interpolate, 0.3).map_err(|_| Failure::Param)?;
            let ctx = &mut (&mut chain, &mut target, rng);
            binary_loop(Dmala::new(p), ctx, steps, meter)
        }
        Run::CategoricalDlmc => {
            let mut target = RingPotts::<LABEL_DIM>;
            let mut storage = CategoricalStorage::<LABEL_DIM, POTTS_STATES>::new([0; LABEL_DIM]);
            let mut chain = CategoricalChain::new_categorical(storage.buffers(), &mut target)
                .map_err(|_| Failure::Init)?;
            let p = CategoricalDlmcProposal::new(0.5).map_err(|_| Failure::Param)?;
            let ctx = &mut (&mut chain, &mut target, rng);
            categorical_loop(Dmala::new(p), ctx, steps, meter)
        }
        Run::PtDmala => pt_dmala(rng, steps, meter),
        Run::SmallLatticeDmala => run_small_lattice(seed, steps, meter),
        Run::LatticeGibbs => {
            let target =
                IsingLattice::<ConstDims<8, 8>>::new(0.3, 0.1, true).map_err(|_| Failure::Param)?;
            let gibbs = LatticeGibbs::new(&target);
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
            sg_loop(
                &mut (&mut chain, Ridge, rng, SgStep::default()),
                steps,
                meter,
                |c| c.0.step(&mut c.1, c.2).map_err(|_| Failure::Step),
                |c| c.theta(),
            )
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
            sg_loop(
                &mut (&mut chain, Ridge, rng, SgStep::default()),
                steps,
                meter,
                |c| c.0.step(&mut c.1, c.2).map_err(|_| Failure::Step),
                |c| c.theta(),
            )
        }
        Run::Ewsg => {
            let settings = EwsgSettings::new(0.05, 1.0)
                .and_then(|s| s.with_batch(2))
                .map_err(|_| Failure::Param)?
                .with_index_chain(1);
            let mut work = [0.0f64; Ewsg::workspace_len(RIDGE_DIM)];
            let mut chain = Ewsg::new(settings, RIDGE_DIM, RIDGE_TERMS, &THETA0, &mut work)
                .map_err(|_| Failure::Init)?;
            sg_loop(
                &mut (&mut chain, Ridge, rng, SgStep::default()),
                steps,
                meter,
                |c| c.0.step(&mut c.1, c.2).map_err(|_| Failure::Step),
                |c| c.theta(),
            )
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
    let mut target =
        IsingLattice::<ConstDims<8, 8>>::new(0.3, 0.1, true).map_err(|_| Failure::Param)?;
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
    let tuner = acceptance_tuner()?;
    let (mut betas, mut u, mut tuners) = ([0.0; 3], [0.0; 3], [tuner; 3]);
    let (mut gaps, mut swaps) = ([0.0; 2], [SwapStats::default(); 2]);
    let buffers = ReplicaBuffers {
        chains: &mut chains,
        betas: &mut betas,
        log_densities: &mut u,
        tuners: &mut tuners,
        log_gaps: &mut gaps,
        swaps: &mut swaps,
    };
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

fn ordinal_loop<K: CoreKernel<Ordinal>, M: Meter>(
    mut kernel: K,
    ctx: &mut Ctx<'_, OrdinalChain<'_>, LatticeGauss<LABEL_DIM>>,
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

fn categorical_loop<K: CoreKernel<Categorical>, M: Meter>(
    mut kernel: K,
    ctx: &mut Ctx<'_, CategoricalChain<'_>, RingPotts<LABEL_DIM>>,
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
    sg_loop(
        &mut (&mut chain, Ridge, rng, SgStep::default()),
        steps,
        meter,
        |c| c.0.step(&mut c.1, c.2).map_err(|_| Failure::Step),
        |c| c.theta(),
    )
}

type SgCtx<'c, C> = (&'c mut C, Ridge, &'c mut Xoshiro256PlusPlus, SgStep);

fn sg_loop<C, M: Meter>(
    ctx: &mut SgCtx<'_, C>,
    steps: u32,
    meter: &mut M,
    step: impl FnMut(&mut SgCtx<'_, C>) -> Result<SgStep, Failure>,
    theta: fn(&C) -> &[f64],
) -> Result<Hashes, Failure> {
    let mut step = step;
    hash_loop(
        ctx,
        steps,
        meter,
        |c| {
            c.3 = step(c)?;
            Ok(())
        },
        |c, h| {
            for t in theta(c.0) {
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
    fn kernel_golden_values_hold_on_the_host() {
        for g in KERNEL_GOLDEN {
            let h = run_kernel(g.run, g.seed, g.steps, &mut NoMeter);
            assert_eq!(h, Ok(g.hashes), "{}", g.run.name());
        }
    }
}
