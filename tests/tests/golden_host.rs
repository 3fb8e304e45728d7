//! Value stability on the host: the first 1,000 steps of seeded DULA and DMALA chains, pinned as
//! FNV-1a (64-bit) hashes of the state bytes after every step and, separately, of the
//! little-endian bytes of `f64::to_bits` of the log-density after every step.
//!
//! The firmware images check the very same numbers on Cortex-M3 (soft float) and Cortex-M4F
//! (hardware FPU): libm is pure Rust, Rust does not contract `a*b + c`, and the kernels sum in a
//! fixed order, so the bits agree. A change to any value here alters a random stream: it is
//! value-breaking and goes in the changelog, and the firmware table must be updated with it.

use langevin_core::BinaryTarget;
use langevin_core::binary::{BinaryChain, BinaryKernel, ChainStorage, Dmala, Dula, FlipProposal};
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

fn run<K: BinaryKernel, T: BinaryTarget, const D: usize>(
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
