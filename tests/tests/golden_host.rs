//! Value stability on the host: the first 1,000 steps of seeded DULA and DMALA chains, pinned as
//! FNV-1a (64-bit) hashes of the state bytes after every step and, separately, of the
//! little-endian bytes of `f64::to_bits` of the log-density after every step; and the same for
//! every other kernel of the core (ordinal, categorical, tabulated lattice, Gibbs, GWG, RWM, the
//! second-order kernel) and, for the continuous integrators (LMC, SGLD, underdamped, SGHMC,
//! EWSG, AGLD), hashes of the `f64` bits of `θ` and of the step reports.
//!
//! The firmware images check the very same numbers on Cortex-M3 (soft float) and Cortex-M4F
//! (hardware FPU): libm is pure Rust, Rust does not contract `a*b + c`, and the kernels sum in a
//! fixed order, so the bits agree. A change to any value here alters a random stream: it is
//! value-breaking and goes in the changelog, and the firmware table must be updated with it.

use langevin_core::BinaryTarget;
use langevin_core::{Binary, Kernel};

use langevin_core::binary::{BinaryChain, ChainStorage, Dmala, Dula, FlipProposal};
use langevin_core::models::{BinaryQuadratic, ConstDims, IsingGraph, IsingLattice, Rbm};
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

const STEPS: usize = 1000;
const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

fn fnv1a(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(FNV_PRIME);
    }
    h
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Dula,
    Dmala,
}

/// `(state hash, log-density hash)` of `STEPS` steps from the all-zero state, step 0.5,
/// balance 0.5.
fn hashes<T: BinaryTarget, const D: usize>(target: &mut T, kind: Kind, seed: u64) -> (u64, u64) {
    let proposal = FlipProposal::new(0.5, 0.5).unwrap();
    match kind {
        Kind::Dula => run::<_, _, D>(Dula::new(proposal), target, seed),
        Kind::Dmala => run::<_, _, D>(Dmala::new(proposal), target, seed),
    }
}

fn run<K: Kernel<Binary>, T: BinaryTarget, const D: usize>(
    mut kernel: K,
    target: &mut T,
    seed: u64,
) -> (u64, u64) {
    let mut storage = ChainStorage::<D>::new([0; D]);
    let mut chain = BinaryChain::new(storage.buffers(), target).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let (mut hs, mut hu) = (FNV_OFFSET, FNV_OFFSET);
    for _ in 0..STEPS {
        kernel.step(target, &mut chain, &mut rng).unwrap();
        hs = fnv1a(hs, chain.state());
        hu = fnv1a(hu, &chain.log_density().to_bits().to_le_bytes());
    }
    (hs, hu)
}

fn lattice(kind: Kind, seed: u64) -> (u64, u64) {
    let mut m = IsingLattice::<ConstDims<8, 8>>::new(0.3, 0.1, true).unwrap();
    hashes::<_, 64>(&mut m, kind, seed)
}

// The small models: parameters from integer formulas, so they are exact in f32.
const N: usize = 16;
const H: usize = 8;

fn quadratic(kind: Kind) -> (u64, u64) {
    let w: Vec<f32> = (0..N * N)
        .map(|k| (((k / N) * 7 + (k % N) * 13) % 11) as f32 * 0.0625 - 5.0 * 0.0625)
        .collect();
    let b: Vec<f32> = (0..N).map(|i| ((i * 5) % 7) as f32 * 0.25 - 0.75).collect();
    let mut cache = vec![0.0; 2 * N];
    let mut m = BinaryQuadratic::new(&w, &b, &mut cache).unwrap();
    hashes::<_, N>(&mut m, kind, 1)
}

fn rbm(kind: Kind) -> (u64, u64) {
    let w: Vec<f32> = (0..H * N)
        .map(|k| (((k % N) * 3 + (k / N) * 11) % 13) as f32 * 0.125 - 0.75)
        .collect();
    let b: Vec<f32> = (0..N).map(|i| (i % 5) as f32 * 0.25 - 0.5).collect();
    let c: Vec<f32> = (0..H).map(|j| (j % 3) as f32 * 0.5 - 0.5).collect();
    let mut cache = vec![0.0; 2 * H];
    let mut m = Rbm::new(&w, &b, &c, &mut cache).unwrap();
    hashes::<_, N>(&mut m, kind, 1)
}

/// A 16-node ring with chords to the opposite node: couplings 0.25 along the ring, −0.5 across.
fn graph(kind: Kind) -> (u64, u64) {
    let mut offsets = vec![0u32];
    let (mut nb, mut cp) = (Vec::new(), Vec::new());
    for i in 0..N {
        for (j, c) in [
            ((i + N - 1) % N, 0.25),
            ((i + 1) % N, 0.25),
            ((i + N / 2) % N, -0.5),
        ] {
            nb.push(j as u32);
            cp.push(c);
        }
        offsets.push(nb.len() as u32);
    }
    let h: Vec<f32> = (0..N).map(|i| (i % 3) as f32 * 0.05 - 0.05).collect();
    let mut m = IsingGraph::new(&offsets, &nb, &cp, &h).unwrap();
    hashes::<_, N>(&mut m, kind, 1)
}

/// `(name, kernel, seed, state hash, log-density hash)`, in the order of the firmware's table.
#[rustfmt::skip]
const GOLDEN: [(&str, Kind, u64, u64, u64); 12] = [
    ("ising8x8", Kind::Dula, 1, 0x5ae6_cde4_da3d_bcce, 0x4e1a_7d86_5f1b_30a3),
    ("ising8x8", Kind::Dmala, 1, 0x93b9_306c_5105_b2d9, 0xb5b9_9bb7_d5dd_1055),
    ("ising8x8", Kind::Dula, 2, 0x41f7_bd03_d5d1_733f, 0x519e_203d_6879_6052),
    ("ising8x8", Kind::Dmala, 2, 0xa1d1_91a7_a0a6_5c57, 0x91aa_12b8_60de_e16e),
    ("ising8x8", Kind::Dula, 3, 0xb2de_0334_39a4_d619, 0x0123_678a_5442_02bf),
    ("ising8x8", Kind::Dmala, 3, 0xedc6_a388_a8f6_a624, 0x2c0d_2831_a41d_dc56),
    ("quadratic16", Kind::Dula, 1, 0x8e9e_272e_b59a_1fb2, 0xd908_16c5_0192_9310),
    ("quadratic16", Kind::Dmala, 1, 0xc48b_ee3b_cf65_f501, 0x933a_b799_4222_a9e9),
    ("rbm16x8", Kind::Dula, 1, 0x0839_dc8a_f2c1_facf, 0x7546_01a1_d449_822f),
    ("rbm16x8", Kind::Dmala, 1, 0xdea4_3af6_cc81_7678, 0xc279_bc93_d247_a0f0),
    ("graph16", Kind::Dula, 1, 0x9c84_ed92_a447_fe18, 0x35ce_b63a_c705_71e8),
    ("graph16", Kind::Dmala, 1, 0x698f_c3e9_0199_acbf, 0x45f2_f2bc_75ed_9679),
];

fn compute(name: &str, kind: Kind, seed: u64) -> (u64, u64) {
    match name {
        "ising8x8" => lattice(kind, seed),
        "quadratic16" => quadratic(kind),
        "rbm16x8" => rbm(kind),
        "graph16" => graph(kind),
        other => panic!("unknown model {other}"),
    }
}

#[test]
fn golden_hashes_hold_on_the_host() {
    let mut bad = Vec::new();
    for (name, kind, seed, state, log_density) in GOLDEN {
        let got = compute(name, kind, seed);
        if got != (state, log_density) {
            bad.push(format!(
                "{name} {kind:?} seed {seed}: got ({:#018x}, {:#018x})",
                got.0, got.1
            ));
        }
    }
    assert!(bad.is_empty(), "value-breaking change:\n{}", bad.join("\n"));
}

#[test]
fn firmware_pins_the_same_values() {
    // The firmware's table lists the same runs in the same order; read its hex literals.
    let text = include_str!("../../firmware/scenarios/src/golden.rs");
    let table = text
        .split("pub const GOLDEN")
        .nth(1)
        .and_then(|t| t.split("];").next())
        .expect("firmware golden table");
    let pinned: Vec<u64> = table
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter_map(|w| w.strip_prefix("0x"))
        .map(|h| u64::from_str_radix(&h.replace('_', ""), 16).unwrap())
        .collect();
    let ours: Vec<u64> = GOLDEN.iter().flat_map(|g| [g.3, g.4]).collect();
    assert_eq!(pinned, ours);
}

/// The 16 × 8 RBM with weights that `bf16` cannot hold (multiples of 0.1), stored as `bf16`:
/// host only (the firmware table does not list it). Its stream is that of the `f32` RBM with the
/// rounded weights, bit for bit, and not that of the unrounded one.
#[test]
fn rbm_bf16_golden_stream_holds_on_the_host() {
    use langevin_core::math::Libm;
    use langevin_core::models::Bf16;
    let w: Vec<f32> = (0..H * N)
        .map(|k| (((k % N) * 3 + (k / N) * 11) % 13) as f32 * 0.1 - 0.6)
        .collect();
    let b: Vec<f32> = (0..N).map(|i| (i % 5) as f32 * 0.25 - 0.5).collect();
    let c: Vec<f32> = (0..H).map(|j| (j % 3) as f32 * 0.5 - 0.5).collect();
    let w16: Vec<Bf16> = w.iter().map(|&x| Bf16::from_f32(x)).collect();
    let rounded: Vec<f32> = w16.iter().map(|x| x.to_f32()).collect();
    let f32_stream = |w: &[f32], kind| {
        let mut cache = vec![0.0; 2 * H];
        hashes::<_, N>(&mut Rbm::new(w, &b, &c, &mut cache).unwrap(), kind, 1)
    };
    let mut got = Vec::new();
    for kind in [Kind::Dula, Kind::Dmala] {
        let mut cache = vec![0.0; 2 * H];
        let mut m = Rbm::<Libm, Bf16>::from_weights(&w16, &b, &c, &mut cache).unwrap();
        let hashes = hashes::<_, N>(&mut m, kind, 1);
        assert_eq!(hashes, f32_stream(&rounded, kind), "{kind:?}");
        assert_ne!(hashes, f32_stream(&w, kind), "{kind:?}");
        got.push(hashes);
    }
    #[rustfmt::skip]
    let pinned = [
        (0x7454_1de8_5a22_21d7, 0x2aa2_06f8_ebbd_9d79),
        (0x853c_9fbc_3d36_c5eb, 0xd4fb_8401_f306_5da0),
    ];
    assert_eq!(
        got, pinned,
        "value-breaking change (DULA, DMALA): got {got:#018x?}"
    );
}

// Every other kernel. The targets are the firmware's own file, compiled here, so both sides
// sample the same targets; the drivers below are written independently of the firmware's.
#[allow(dead_code, reason = "the firmware file also serves other runs")]
#[path = "../../firmware/scenarios/src/targets.rs"]
mod targets;

use langevin_core::baselines::{
    Balancing, Gibbs, Gwg, HammingBall, LocallyBalanced, RandomWalk, Scan,
};
use langevin_core::binary::{
    LatticeClasses, LatticeDmala, LatticeDula, LatticeProposal, PortablePasses,
};
use langevin_core::categorical::{self, CategoricalChain, CategoricalProposal, CategoricalStorage};
use langevin_core::continuous::{
    Access, Agld, AgldSettings, DenseSnapshots, Ewsg, EwsgSettings, Langevin, LangevinSettings,
    PointSnapshot, ScalarSnapshots, SgStep, SnapshotStore, SnapshotUpdate, Underdamped,
    UnderdampedSettings,
};
use langevin_core::dlmc::{CategoricalDlmcProposal, DlmcProposal, Solver};
use langevin_core::ordinal::{self, OrdinalChain, OrdinalProposal, OrdinalStorage};
use langevin_core::path_auxiliary::{PathAuxiliary, PathBuffers};
use langevin_core::second_order::{AbSecondOrder, TrickParams, scratch_len};
use langevin_core::tuning::{AcceptanceSettings, AcceptanceTuner};
use targets::{LatticeGauss, Ridge, RingPotts};

/// `(name, state hash, log-density or step-report hash)`, seed 1, in the order of the
/// firmware's `KERNEL_GOLDEN`.
#[rustfmt::skip]
const KERNEL_GOLDEN: [(&str, u64, u64); 35] = [
    ("ordinal-dula", 0xb6b4_447a_b072_017e, 0x2e3d_6793_be45_b98f),
    ("ordinal-dmala", 0x72ba_9e91_19ac_ec9b, 0xf206_e81e_b2b1_7223),
    ("ordinal-gibbs", 0x7261_927a_b0ac_e6ee, 0x8b77_4b5b_7658_5633),
    ("categorical-dula", 0x2c0c_5b3b_588d_f215, 0xa314_9a1d_df90_08b9),
    ("categorical-dmala", 0xe534_b7c0_610b_05d6, 0xefdf_2791_897e_b3a8),
    ("categorical-gibbs", 0xd744_633f_e214_bb97, 0xedd0_1682_5e72_dce0),
    ("categorical-gwg", 0x6335_c07b_7ed5_104f, 0x9541_b958_f812_10bb),
    ("lattice-dula", 0xa303_98e6_dcf1_a291, 0x3963_4ab5_99c2_8471),
    ("lattice-dmala", 0xbc00_8775_fc40_49a0, 0xeb7b_39bc_ff01_b0eb),
    ("lattice-dmala-kept", 0xbc00_8775_fc40_49a0, 0xeb7b_39bc_ff01_b0eb),
    ("gibbs", 0x1767_8737_326d_449c, 0xc873_f381_4a68_9d09),
    ("gwg", 0xcf60_c382_a47f_d3fd, 0xa278_e5cc_55df_6a79),
    ("rwm", 0x0e8d_0dd0_0eac_ed27, 0x4c9e_c087_1545_ff3f),
    ("second-order", 0x8580_05ca_15e4_0316, 0x2355_d49b_ed48_9fdb),
    ("lmc", 0x4a47_7b9c_68e0_6f68, 0x84a3_26f5_8606_9045),
    ("sgld", 0x7da1_d79d_21a3_5c30, 0x539c_3c87_f2c9_7be5),
    ("sgld-reshuffle", 0x34de_1750_b72a_5088, 0x539c_3c87_f2c9_7be5),
    ("underdamped", 0x5b90_f442_93d3_8b3e, 0x84a3_26f5_8606_9045),
    ("sghmc", 0x5f6c_6224_a57f_4b20, 0x539c_3c87_f2c9_7be5),
    ("ewsg", 0x3d2a_f485_93cc_8d26, 0xa06f_f65c_55c1_5425),
    ("agld-svrg", 0x2912_4f21_e461_625e, 0x7c76_e40a_88dc_ed88),
    ("agld-saga", 0x2173_1dbd_6cc5_284e, 0xc543_de91_0408_b7b0),
    ("agld-tmu", 0xcaab_a39f_24af_0576, 0x5371_2b45_c830_c7f0),
    ("ordinal-dmala-adapt", 0x4552_eed4_10ad_781b, 0x24f4_45be_037e_b59a),
    ("categorical-dmala-adapt", 0x0f77_239d_8a65_285d, 0xef94_c842_64cd_694f),
    ("pt-dmala", 0x0694_f053_46d3_b756, 0x8d03_bcf3_6c37_b91d),
    ("dmala-adapt", 0x19ed_3fbc_a7e8_4e01, 0x0368_9355_6de4_50d6),
    ("lb", 0x8177_4168_821e_cd5c, 0xfc29_5fff_242c_30f7),
    ("categorical-lb", 0x059d_c07d_d0a9_02df, 0x42b9_914f_beb3_b768),
    ("hamming-ball", 0x7bad_4a34_ecf5_7fed, 0xd793_9598_0658_1b96),
    ("pas", 0x4fd4_251e_d8ba_819a, 0x52b6_6036_9e80_e7ed),
    ("categorical-pas", 0x0922_a429_a43d_9675, 0x45bf_449e_d415_5a82),
    ("dlmc", 0xfe62_d4aa_b77f_e35d, 0xffa2_2284_028e_f7c3),
    ("categorical-dlmc", 0x9df1_437b_cd01_04b6, 0xd3ef_c7a4_9a97_7c2f),
    ("lattice-gibbs", 0x0275_4f1b_a8b3_9223, 0x1ffb_7a00_1ec1_8f12),
];

const LABEL_DIM: usize = 8;
const THETA0: [f64; 4] = [1.0, -1.0, 0.5, 0.0];

fn rng() -> Xoshiro256PlusPlus {
    Xoshiro256PlusPlus::seed_from_u64(1)
}

/// Folds label states as little-endian `u16` and the log-density bits.
fn fold_labels(h: &mut (u64, u64), x: &[u16], u: f64) {
    let bytes: Vec<u8> = x.iter().flat_map(|v| v.to_le_bytes()).collect();
    h.0 = fnv1a(h.0, &bytes);
    h.1 = fnv1a(h.1, &u.to_bits().to_le_bytes());
}

fn ordinal_run(mut kernel: impl Kernel<langevin_core::Ordinal>) -> (u64, u64) {
    let mut target = LatticeGauss::<LABEL_DIM>;
    let mut storage = OrdinalStorage::<LABEL_DIM, 5>::new([0; LABEL_DIM]);
    let mut chain = OrdinalChain::new_ordinal(storage.buffers(), &mut target).unwrap();
    let mut rng = rng();
    let mut h = (FNV_OFFSET, FNV_OFFSET);
    for _ in 0..STEPS {
        kernel.step(&mut target, &mut chain, &mut rng).unwrap();
        fold_labels(&mut h, chain.state(), chain.log_density());
    }
    h
}

fn categorical_run(mut kernel: impl Kernel<langevin_core::Categorical>) -> (u64, u64) {
    let mut target = RingPotts::<LABEL_DIM>;
    let mut storage = CategoricalStorage::<LABEL_DIM, 3>::new([0; LABEL_DIM]);
    let mut chain = CategoricalChain::new_categorical(storage.buffers(), &mut target).unwrap();
    let mut rng = rng();
    let mut h = (FNV_OFFSET, FNV_OFFSET);
    for _ in 0..STEPS {
        kernel.step(&mut target, &mut chain, &mut rng).unwrap();
        fold_labels(&mut h, chain.state(), chain.log_density());
    }
    h
}

/// A binary chain on the 8×8 lattice driven by `step`.
fn lattice_run(
    mut step: impl FnMut(
        &mut IsingLattice<ConstDims<8, 8>>,
        &mut BinaryChain<'_>,
        &mut Xoshiro256PlusPlus,
    ),
) -> (u64, u64) {
    let mut target = IsingLattice::<ConstDims<8, 8>>::new(0.3, 0.1, true).unwrap();
    let mut storage = ChainStorage::<64>::new([0; 64]);
    let mut chain = BinaryChain::new(storage.buffers(), &mut target).unwrap();
    let mut rng = rng();
    let (mut hs, mut hu) = (FNV_OFFSET, FNV_OFFSET);
    for _ in 0..STEPS {
        step(&mut target, &mut chain, &mut rng);
        hs = fnv1a(hs, chain.state());
        hu = fnv1a(hu, &chain.log_density().to_bits().to_le_bytes());
    }
    (hs, hu)
}

fn second_order_run() -> (u64, u64) {
    let (w, diag, a, bias) = targets::second_order_params();
    let d = diag.len();
    let mut cache = vec![0.0; 2 * d];
    let mut target = BinaryQuadratic::new(&w, &bias, &mut cache).unwrap();
    let params = TrickParams::new(&w, &diag, &a, 0.5, targets::SECOND_BALANCE).unwrap();
    let (mut scratch, mut cached) = (vec![0.0; scratch_len(d)], vec![0u8; d]);
    let kernel = AbSecondOrder::new(params, &mut scratch, &mut cached).unwrap();
    run::<_, _, { targets::SECOND_DIM }>(kernel, &mut target, 1)
}

/// Folds `θ` bits into the first hash and the step report into the second.
fn fold_sg(h: &mut (u64, u64), theta: &[f64], r: SgStep) {
    let bytes: Vec<u8> = theta
        .iter()
        .flat_map(|t| t.to_bits().to_le_bytes())
        .collect();
    h.0 = fnv1a(h.0, &bytes);
    let mut rep = Vec::new();
    rep.extend(r.grad_evals.to_le_bytes());
    rep.extend(r.index_moves.to_le_bytes());
    rep.push(u8::from(r.refreshed));
    h.1 = fnv1a(h.1, &rep);
}

fn langevin_run(settings: LangevinSettings) -> (u64, u64) {
    let (d, n) = (4, 16);
    let mut work = vec![0.0; Langevin::workspace_len(d)];
    let mut index = vec![0; Langevin::index_len(&settings, n)];
    let mut chain = Langevin::new(settings, d, n, &THETA0, &mut work, &mut index).unwrap();
    let (mut rng, mut h) = (rng(), (FNV_OFFSET, FNV_OFFSET));
    for _ in 0..STEPS {
        let r = chain.step(&mut Ridge, &mut rng).unwrap();
        fold_sg(&mut h, chain.theta(), r);
    }
    h
}

fn underdamped_run(settings: UnderdampedSettings) -> (u64, u64) {
    let (d, n) = (4, 16);
    let mut work = vec![0.0; Underdamped::workspace_len(d)];
    let mut index = vec![0; Underdamped::index_len(&settings, n)];
    let mut chain = Underdamped::new(settings, d, n, &THETA0, &mut work, &mut index).unwrap();
    let (mut rng, mut h) = (rng(), (FNV_OFFSET, FNV_OFFSET));
    for _ in 0..STEPS {
        let r = chain.step(&mut Ridge, &mut rng).unwrap();
        fold_sg(&mut h, chain.theta(), r);
    }
    h
}

fn ewsg_run() -> (u64, u64) {
    let settings = EwsgSettings::new(0.05, 1.0)
        .unwrap()
        .with_batch(2)
        .unwrap()
        .with_index_chain(1);
    let mut work = vec![0.0; Ewsg::workspace_len(4)];
    let mut chain = Ewsg::new(settings, 4, 16, &THETA0, &mut work).unwrap();
    let (mut rng, mut h) = (rng(), (FNV_OFFSET, FNV_OFFSET));
    for _ in 0..STEPS {
        let r = chain.step(&mut Ridge, &mut rng).unwrap();
        fold_sg(&mut h, chain.theta(), r);
    }
    h
}

fn agld_run<S: SnapshotStore<Ridge>>(
    access: Access,
    update: SnapshotUpdate,
    store: S,
) -> (u64, u64) {
    let settings = AgldSettings::new(0.01, 4, access, update).unwrap();
    let mut work = vec![0.0; Agld::<S>::workspace_len(4)];
    let mut index = vec![0; Agld::<S>::index_len(&settings, 16)];
    let mut chain = Agld::new(settings, 4, 16, &THETA0, store, &mut work, &mut index).unwrap();
    let (mut rng, mut h) = (rng(), (FNV_OFFSET, FNV_OFFSET));
    for _ in 0..STEPS {
        let r = chain.step(&mut Ridge, &mut rng).unwrap();
        fold_sg(&mut h, chain.theta(), r);
    }
    h
}

/// Acceptance-targeting DMALA tuning over the first half of the run, frozen for the second.
fn acceptance_tuner() -> AcceptanceTuner {
    let mut s = AcceptanceSettings::default();
    s.budget = 500;
    AcceptanceTuner::new(s).unwrap()
}

/// Replica exchange with three replicas on the 8×8 lattice, adapting for 500 sweeps: the cold
/// chain's states and log-densities.
fn pt_dmala_run() -> (u64, u64) {
    use langevin_core::tempering::{LadderSettings, ReplicaBuffers, Replicas, SwapStats};
    let mut target = IsingLattice::<ConstDims<8, 8>>::new(0.3, 0.1, true).unwrap();
    let mut s = [
        ChainStorage::<64>::new([0; 64]),
        ChainStorage::<64>::new([0; 64]),
        ChainStorage::<64>::new([0; 64]),
    ];
    let [a, b, c] = &mut s;
    let mut chains = [
        BinaryChain::new(a.buffers(), &mut target).unwrap(),
        BinaryChain::new(b.buffers(), &mut target).unwrap(),
        BinaryChain::new(c.buffers(), &mut target).unwrap(),
    ];
    let tuner = acceptance_tuner();
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
    let mut replicas = Replicas::new(buffers, settings, &mut target).unwrap();
    let mut rng = rng();
    let (mut hs, mut hu) = (FNV_OFFSET, FNV_OFFSET);
    for _ in 0..STEPS {
        replicas.sweep(&mut target, &mut rng).unwrap();
        let cold = replicas.cold().unwrap();
        hs = fnv1a(hs, cold.state());
        hu = fnv1a(hu, &cold.log_density().to_bits().to_le_bytes());
    }
    (hs, hu)
}

fn compute_kernel(name: &str) -> (u64, u64) {
    let op = OrdinalProposal::new(1.0, 0.5).unwrap();
    let cp = CategoricalProposal::new(1.0, 0.5).unwrap();
    let lattice_proposal = || {
        let m = IsingLattice::<ConstDims<8, 8>>::new(0.3, 0.1, true).unwrap();
        LatticeProposal::new(&m, 0.5, 0.5).unwrap()
    };
    let mut table = vec![0.0; DenseSnapshots::len(4, 16).unwrap()];
    match name {
        "ordinal-dula" => ordinal_run(ordinal::Dula::new(op)),
        "ordinal-dmala" => ordinal_run(ordinal::Dmala::new(op)),
        "ordinal-gibbs" => ordinal_run(Gibbs::new(Scan::Random)),
        "categorical-dula" => categorical_run(categorical::Dula::new(cp)),
        "categorical-dmala" => categorical_run(categorical::Dmala::new(cp)),
        "categorical-gibbs" => categorical_run(Gibbs::new(Scan::Random)),
        "categorical-gwg" => categorical_run(Gwg),
        "lattice-dula" => {
            let k = LatticeDula::new(lattice_proposal());
            lattice_run(|_, c, r| {
                k.step(c, r).unwrap();
            })
        }
        "lattice-dmala" => {
            let k = LatticeDmala::new(lattice_proposal());
            lattice_run(|_, c, r| {
                k.step(c, r).unwrap();
            })
        }
        "lattice-dmala-kept" => {
            let k = LatticeDmala::new(lattice_proposal());
            let mut classes = LatticeClasses::new([0u8; 64]);
            lattice_run(|_, c, r| {
                k.step_with_classes(c, &mut classes, r, &PortablePasses)
                    .unwrap();
            })
        }
        "gibbs" => {
            let mut k = Gibbs::new(Scan::Random);
            lattice_run(|t, c, r| {
                Kernel::step(&mut k, t, c, r).unwrap();
            })
        }
        "lattice-gibbs" => {
            let m = IsingLattice::<ConstDims<8, 8>>::new(0.3, 0.1, true).unwrap();
            let gibbs = langevin_core::binary::LatticeGibbs::new(&m);
            let (mut x, mut r) = ([0u8; 64], rng());
            let (mut hs, mut hc) = (FNV_OFFSET, FNV_OFFSET);
            for _ in 0..STEPS {
                let changed = gibbs.sweep(&mut x, &mut r).unwrap();
                hs = fnv1a(hs, &x);
                hc = fnv1a(hc, &changed.to_le_bytes());
            }
            (hs, hc)
        }
        "gwg" => lattice_run(|t, c, r| {
            Kernel::step(&mut Gwg, t, c, r).unwrap();
        }),
        "rwm" => {
            let mut k = RandomWalk::new(1.0 / 16.0).unwrap();
            lattice_run(|t, c, r| {
                Kernel::step(&mut k, t, c, r).unwrap();
            })
        }
        "second-order" => second_order_run(),
        "lmc" => langevin_run(LangevinSettings::lmc(0.01).unwrap()),
        "sgld" => langevin_run(LangevinSettings::sgld(0.01, 4).unwrap()),
        "sgld-reshuffle" => langevin_run(
            LangevinSettings::sgld(0.01, 4)
                .unwrap()
                .with_access(Access::Reshuffle),
        ),
        "underdamped" => underdamped_run(UnderdampedSettings::full(0.05, 1.0).unwrap()),
        "sghmc" => underdamped_run(
            UnderdampedSettings::sghmc(0.05, 1.0, 4)
                .unwrap()
                .with_access(Access::Cyclic),
        ),
        "ewsg" => ewsg_run(),
        "agld-svrg" => {
            let mut point = vec![0.0; PointSnapshot::len(4)];
            let store = PointSnapshot::new(4, 16, &mut point).unwrap();
            agld_run(Access::Random, SnapshotUpdate::Total { period: 16 }, store)
        }
        "agld-saga" => {
            let store = DenseSnapshots::new(4, 16, &mut table).unwrap();
            agld_run(Access::Reshuffle, SnapshotUpdate::Partial, store)
        }
        "agld-tmu" => {
            let mut scalars = vec![0.0; ScalarSnapshots::len(4, 16).unwrap()];
            let store = ScalarSnapshots::new(4, 16, &mut scalars).unwrap();
            agld_run(Access::Cyclic, SnapshotUpdate::Mixed { period: 16 }, store)
        }
        "ordinal-dmala-adapt" => ordinal_run(acceptance_tuner()),
        "categorical-dmala-adapt" => categorical_run(acceptance_tuner()),
        "pt-dmala" => pt_dmala_run(),
        "dmala-adapt" => {
            let mut k = acceptance_tuner();
            lattice_run(|t, c, r| {
                Kernel::step(&mut k, t, c, r).unwrap();
            })
        }
        "lb" => {
            // Barker: with √ the kernel equals GWG on this multilinear target, bit for bit.
            let mut k = LocallyBalanced::new(Balancing::Barker, [0.0f64; 64]);
            lattice_run(|t, c, r| {
                Kernel::step(&mut k, t, c, r).unwrap();
            })
        }
        "pas" => {
            let (mut weights, mut path) = ([0.0f64; 64], [0u32; 3]);
            let buffers = PathBuffers {
                weights: &mut weights,
                path: &mut path,
            };
            let mut k = PathAuxiliary::new(3)
                .unwrap()
                .with_buffers(buffers)
                .unwrap();
            lattice_run(|t, c, r| {
                Kernel::step(&mut k, t, c, r).unwrap();
            })
        }
        "categorical-lb" => categorical_run(LocallyBalanced::new(
            Balancing::Barker,
            [0.0f64; LABEL_DIM * 3],
        )),
        "hamming-ball" => {
            let mut k = HammingBall::new(2, 5, [0.0f64; 16]).unwrap();
            lattice_run(|t, c, r| {
                Kernel::step(&mut k, t, c, r).unwrap();
            })
        }
        "categorical-pas" => {
            let (mut weights, mut path) = ([0.0f64; LABEL_DIM * 3], [0u32; 2]);
            let buffers = PathBuffers {
                weights: &mut weights,
                path: &mut path,
            };
            categorical_run(
                PathAuxiliary::new(2)
                    .unwrap()
                    .with_buffers(buffers)
                    .unwrap(),
            )
        }
        "dlmc" => {
            let p = DlmcProposal::new(Solver::Interpolate, 0.3).unwrap();
            let mut k = langevin_core::kernel::Dmala::new(p);
            lattice_run(|t, c, r| {
                Kernel::step(&mut k, t, c, r).unwrap();
            })
        }
        "categorical-dlmc" => categorical_run(langevin_core::kernel::Dmala::new(
            CategoricalDlmcProposal::new(0.5).unwrap(),
        )),
        other => panic!("unknown run {other}"),
    }
}

#[test]
fn every_kernel_golden_hashes_hold_on_the_host() {
    let mut bad = Vec::new();
    for (name, state, second) in KERNEL_GOLDEN {
        let got = compute_kernel(name);
        if got != (state, second) {
            bad.push(format!("{name}: got ({:#018x}, {:#018x})", got.0, got.1));
        }
    }
    assert!(bad.is_empty(), "value-breaking change:\n{}", bad.join("\n"));
}

#[test]
fn firmware_pins_the_same_kernel_values() {
    let text = include_str!("../../firmware/scenarios/src/kernels.rs");
    let table = text
        .split("pub const KERNEL_GOLDEN")
        .nth(1)
        .and_then(|t| t.split("];").next())
        .expect("firmware kernel golden table");
    let pinned: Vec<u64> = table
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter_map(|w| w.strip_prefix("0x"))
        .map(|h| u64::from_str_radix(&h.replace('_', ""), 16).unwrap())
        .collect();
    let ours: Vec<u64> = KERNEL_GOLDEN.iter().flat_map(|g| [g.1, g.2]).collect();
    assert_eq!(pinned, ours);
}

/// The core's block Gibbs sweep draws the same bits as the std crate's reference sampler (which
/// the MMD diagnostics use), and its first sweeps are pinned.
#[test]
fn rbm_block_gibbs_matches_the_reference_sampler() {
    use langevin_core::baselines::BlockGibbs;
    let mut rng = rng();
    let r = langevin_tests::RbmData::random(12, 5, 0.8, 0.4, 0.4, &mut rng);
    let mut cache = r.cache();
    let rbm = Rbm::new(&r.w, &r.b, &r.c, &mut cache).unwrap();
    let mut reference =
        langevin_std::models::RbmBlockGibbs::new(r.w.clone(), r.b.clone(), r.c.clone()).unwrap();
    let (mut x, mut y, mut hidden) = (vec![0u8; 12], vec![0u8; 12], vec![0u8; 5]);
    let (mut ours, mut theirs) = (rng.clone(), rng.clone());
    let mut h = FNV_OFFSET;
    for _ in 0..STEPS {
        BlockGibbs::sweep(&rbm, &mut x, &mut hidden, &mut ours).unwrap();
        reference.sweep(&mut y, &mut theirs).unwrap();
        assert_eq!((&x, &hidden[..]), (&y, reference.hidden()));
        h = fnv1a(h, &x);
    }
    assert_eq!(h, 0x189e_b797_aca4_1e67, "block Gibbs: got {h:#018x}");
}
