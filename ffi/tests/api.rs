//! The C ABI against the Rust API: the same seeded runs through both give the same states,
//! log-densities and statistics bit for bit; every refusal has its status code; and the
//! expected values the C test program checks (`c/expected.h`) are the Rust API's.
//! `LANGEVIN_BLESS=1 cargo test -p langevin-ffi --test api` rewrites `c/expected.h`.

mod common;

use common::{Bufs, new_chain, stats, totals};
use langevin_core::BinaryTarget;
use langevin_core::binary::{BinaryChain, ChainStorage, Dmala, Dula, FlipProposal};
use langevin_core::models::{BinaryQuadratic, ConstDims, IsingLattice, Rbm};
use langevin_core::stats::ChainStats;
use langevin_core::tuning::{AbSettings, AbTuner};
use langevin_core::{Binary, Kernel};
use langevin_ffi::*;
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::ptr;

const STEPS: usize = 1000;
const N: usize = 16;
const H: usize = 8;
/// Burn-in of the AB-1st cases: two rounds of 100-step probes, then 400 frozen steps.
const AB_BURN_IN: u64 = 600;

fn fnv1a(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}
const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

// The small models' parameters; the C test computes the same exact values.
fn quad_w() -> Vec<f32> {
    (0..N * N)
        .map(|k| (((k / N) * 7 + (k % N) * 13) % 11) as f32 * 0.0625 - 0.3125)
        .collect()
}
fn quad_b() -> Vec<f32> {
    (0..N).map(|i| ((i * 5) % 7) as f32 * 0.25 - 0.75).collect()
}
fn rbm_w() -> Vec<f32> {
    (0..H * N)
        .map(|k| (((k % N) * 3 + (k / N) * 11) % 13) as f32 * 0.125 - 0.75)
        .collect()
}
fn rbm_b() -> Vec<f32> {
    (0..N).map(|i| (i % 5) as f32 * 0.25 - 0.5).collect()
}
fn rbm_c() -> Vec<f32> {
    (0..H).map(|j| (j % 3) as f32 * 0.5 - 0.5).collect()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Model {
    Lattice,
    Quadratic,
    Rbm,
}

const CASES: [(Model, u32, u64); 14] = [
    (Model::Lattice, LGV_KERNEL_DULA, 1),
    (Model::Lattice, LGV_KERNEL_DMALA, 1),
    (Model::Lattice, LGV_KERNEL_DULA, 2),
    (Model::Lattice, LGV_KERNEL_DMALA, 2),
    (Model::Lattice, LGV_KERNEL_DULA, 3),
    (Model::Lattice, LGV_KERNEL_DMALA, 3),
    (Model::Quadratic, LGV_KERNEL_DULA, 1),
    (Model::Quadratic, LGV_KERNEL_DMALA, 1),
    (Model::Rbm, LGV_KERNEL_DULA, 1),
    (Model::Rbm, LGV_KERNEL_DMALA, 1),
    (Model::Lattice, LGV_KERNEL_AB, 1),
    (Model::Lattice, LGV_KERNEL_AB, 2),
    (Model::Quadratic, LGV_KERNEL_AB, 1),
    (Model::Rbm, LGV_KERNEL_AB, 1),
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Outcome {
    state_hash: u64,
    log_density_hash: u64,
    stats: [u64; 6],
    /// AB-1st only: the bits of the final step and balance (zero for DULA and DMALA).
    ab: [u64; 2],
}

// ---- The Rust API ----

fn rust_run<K: Kernel<Binary>, T: BinaryTarget, const D: usize>(
    kernel: &mut K,
    target: &mut T,
    seed: u64,
) -> Outcome {
    let mut storage = ChainStorage::<D>::new([0; D]);
    let mut chain = BinaryChain::new(storage.buffers(), target).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut stats = ChainStats::default();
    let (mut hs, mut hu) = (FNV_OFFSET, FNV_OFFSET);
    for _ in 0..STEPS {
        let r = kernel.step(target, &mut chain, &mut rng).unwrap();
        stats.record(&r);
        hs = fnv1a(hs, chain.state());
        hu = fnv1a(hu, &chain.log_density().to_bits().to_le_bytes());
    }
    Outcome {
        state_hash: hs,
        log_density_hash: hu,
        stats: totals!(stats),
        ab: [0; 2],
    }
}

fn ab_tuner(burn_in: u64) -> AbTuner {
    let mut settings = AbSettings::default();
    settings.step = 0.5;
    settings.balance = 0.5;
    settings.budget = burn_in;
    AbTuner::new(settings).unwrap()
}

fn rust_kernel<T: BinaryTarget, const D: usize>(target: &mut T, kernel: u32, seed: u64) -> Outcome {
    let p = FlipProposal::new(0.5, 0.5).unwrap();
    match kernel {
        LGV_KERNEL_DULA => rust_run::<_, _, D>(&mut Dula::new(p), target, seed),
        LGV_KERNEL_DMALA => rust_run::<_, _, D>(&mut Dmala::new(p), target, seed),
        _ => {
            let mut ab = ab_tuner(AB_BURN_IN);
            let mut o = rust_run::<_, _, D>(&mut ab, target, seed);
            let (a, b) = ab.current();
            o.ab = [a.to_bits(), b.to_bits()];
            o
        }
    }
}

fn rust_api(model: Model, kernel: u32, seed: u64) -> Outcome {
    match model {
        Model::Lattice => {
            let mut m = IsingLattice::<ConstDims<8, 8>>::new(0.3, 0.1, true).unwrap();
            rust_kernel::<_, 64>(&mut m, kernel, seed)
        }
        Model::Quadratic => {
            let (w, b) = (quad_w(), quad_b());
            let mut cache = vec![0.0; 2 * N];
            let mut m = BinaryQuadratic::new(&w, &b, &mut cache).unwrap();
            rust_kernel::<_, N>(&mut m, kernel, seed)
        }
        Model::Rbm => {
            let (w, b, c) = (rbm_w(), rbm_b(), rbm_c());
            let mut cache = vec![0.0; 2 * H];
            let mut m = Rbm::new(&w, &b, &c, &mut cache).unwrap();
            rust_kernel::<_, N>(&mut m, kernel, seed)
        }
    }
}

// ---- The C ABI, called from Rust ----

fn kernel(kind: u32) -> LgvKernel {
    LgvKernel {
        kind,
        step: 0.5,
        balance: 0.5,
        burn_in: AB_BURN_IN,
    }
}

fn ab_params(chain: &LgvChain) -> LgvAbParams {
    let mut p = LgvAbParams {
        step: f64::NAN,
        balance: f64::NAN,
        tuning_steps: u64::MAX,
        frozen: 9,
    };
    unsafe { assert_eq!(lgv_chain_ab_params(chain, &mut p), LGV_OK) };
    p
}

/// Runs a live chain of dimension `d` for `STEPS` single steps, hashing as the Rust side does.
fn ffi_hash(chain: &mut LgvChain, d: usize) -> Outcome {
    let (mut hs, mut hu) = (FNV_OFFSET, FNV_OFFSET);
    let mut state = vec![0u8; d];
    for _ in 0..STEPS {
        let mut r = LgvStepReport {
            accepted: 9,
            proposed_flips: 0,
            log_accept_ratio: 0.0,
            rejection: 9,
            evaluations: 9,
        };
        unsafe {
            assert_eq!(lgv_chain_step(chain, 1, &mut r), LGV_OK);
            assert_eq!(lgv_chain_state(chain, state.as_mut_ptr(), d), LGV_OK);
        }
        assert!(r.accepted <= 1 && r.rejection == LGV_REJECTION_NONE && r.evaluations <= 1);
        let mut u = f64::NAN;
        unsafe { assert_eq!(lgv_chain_log_density(chain, &mut u), LGV_OK) };
        hs = fnv1a(hs, &state);
        hu = fnv1a(hu, &u.to_bits().to_le_bytes());
    }
    let s = stats(chain);
    let mut p = LgvAbParams {
        step: 0.0,
        balance: 0.0,
        tuning_steps: 0,
        frozen: 0,
    };
    let ab = match unsafe { lgv_chain_ab_params(chain, &mut p) } {
        LGV_OK => [p.step.to_bits(), p.balance.to_bits()],
        status => {
            assert_eq!(status, LGV_ERR_WRONG_KERNEL);
            [0; 2]
        }
    };
    Outcome {
        ab,
        state_hash: hs,
        log_density_hash: hu,
        stats: totals!(s),
    }
}

/// A chain on the 8×8 periodic lattice (`J = 0.3`, `h = 0.1`) over `b`, started with `k`.
fn lattice_chain(b: &mut Bufs, k: &LgvKernel, seed: u64) -> Box<LgvChain> {
    let mut chain = new_chain();
    let cb = b.c();
    let s =
        unsafe { lgv_chain_init_ising_lattice(&mut *chain, 8, 8, 0.3, 0.1, true, &cb, k, seed) };
    assert_eq!(s, LGV_OK);
    chain
}

/// The state of a live chain of dimension `d` (every entry written: 0 or 1).
fn state(chain: &LgvChain, d: usize) -> Vec<u8> {
    let mut x = vec![2u8; d];
    unsafe { assert_eq!(lgv_chain_state(chain, x.as_mut_ptr(), d), LGV_OK) };
    assert!(x.iter().all(|&v| v <= 1), "{x:?}");
    x
}

fn via_ffi(model: Model, kind: u32, seed: u64) -> Outcome {
    let k = kernel(kind);
    match model {
        Model::Lattice => {
            let mut b = Bufs::new(64);
            ffi_hash(&mut lattice_chain(&mut b, &k, seed), 64)
        }
        Model::Quadratic => {
            let (w, bias) = (quad_w(), quad_b());
            let mut cache = vec![0.0; 2 * N];
            ffi_hash_started(|chain, cb| unsafe {
                lgv_chain_init_quadratic(
                    chain,
                    w.as_ptr(),
                    w.len(),
                    bias.as_ptr(),
                    N,
                    cache.as_mut_ptr(),
                    cache.len(),
                    cb,
                    &k,
                    seed,
                )
            })
        }
        Model::Rbm => {
            let (w, bias, c) = (rbm_w(), rbm_b(), rbm_c());
            let mut cache = vec![0.0; 2 * H];
            ffi_hash_started(|chain, cb| unsafe {
                lgv_chain_init_rbm(
                    chain,
                    w.as_ptr(),
                    w.len(),
                    bias.as_ptr(),
                    N,
                    c.as_ptr(),
                    H,
                    cache.as_mut_ptr(),
                    cache.len(),
                    cb,
                    &k,
                    seed,
                )
            })
        }
    }
}

/// Starts a chain of `N` coordinates with `init` (given the chain and its buffers) and hashes
/// its run as [`ffi_hash`] does.
fn ffi_hash_started(init: impl FnOnce(&mut LgvChain, &LgvBuffers) -> LgvStatus) -> Outcome {
    let mut chain = new_chain();
    let mut b = Bufs::new(N);
    let cb = b.c();
    assert_eq!(init(&mut chain, &cb), LGV_OK);
    ffi_hash(&mut chain, N)
}

#[test]
fn the_c_abi_reproduces_the_rust_api_bit_for_bit() {
    for (model, kind, seed) in CASES {
        assert_eq!(
            via_ffi(model, kind, seed),
            rust_api(model, kind, seed),
            "{model:?} {kind} {seed}"
        );
    }
}

/// AB-1st through the C ABI against `AbTuner` through the Rust API, compared after every step:
/// state, log-density bits, the `(a, b)` the next step uses, the tuning spent and the freeze.
#[test]
fn ab_1st_follows_the_rust_tuner_step_for_step() {
    for (seed, burn_in) in [(11, AB_BURN_IN), (12, 250), (13, 0)] {
        let mut model = IsingLattice::<ConstDims<8, 8>>::new(0.3, 0.1, true).unwrap();
        let mut storage = ChainStorage::<64>::new([0; 64]);
        let mut rust = BinaryChain::new(storage.buffers(), &mut model).unwrap();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut tuner = ab_tuner(burn_in);

        let mut chain = new_chain();
        let mut b = Bufs::new(64);
        let cb = b.c();
        let k = LgvKernel {
            burn_in,
            ..kernel(LGV_KERNEL_AB)
        };
        unsafe {
            assert_eq!(
                lgv_chain_init_ising_lattice(&mut *chain, 8, 8, 0.3, 0.1, true, &cb, &k, seed),
                LGV_OK
            );
        }
        let mut state = [0u8; 64];
        let mut moved = false;
        for t in 0..STEPS {
            let p = ab_params(&chain);
            let (a, bal) = tuner.current();
            assert_eq!(
                (p.step.to_bits(), p.balance.to_bits()),
                (a.to_bits(), bal.to_bits()),
                "seed {seed} step {t}"
            );
            let r = tuner.report();
            assert_eq!(
                (p.tuning_steps, p.frozen),
                (r.tuning_steps, u32::from(r.frozen))
            );
            moved |= (a, bal) != (0.5, 0.5);
            let rr = tuner.step(&mut model, &mut rust, &mut rng).unwrap();
            let mut rc = LgvStepReport {
                accepted: 9,
                proposed_flips: 0,
                log_accept_ratio: 0.0,
                rejection: 9,
                evaluations: 9,
            };
            let mut u = f64::NAN;
            unsafe {
                assert_eq!(lgv_chain_step(&mut *chain, 1, &mut rc), LGV_OK);
                assert_eq!(lgv_chain_state(&*chain, state.as_mut_ptr(), 64), LGV_OK);
                assert_eq!(lgv_chain_log_density(&*chain, &mut u), LGV_OK);
            }
            assert_eq!(state.as_slice(), rust.state(), "seed {seed} step {t}");
            assert_eq!(u.to_bits(), rust.log_density().to_bits());
            assert_eq!(
                (
                    rc.accepted,
                    rc.proposed_flips,
                    rc.log_accept_ratio.to_bits()
                ),
                (
                    u32::from(rr.accepted),
                    rr.proposed_flips,
                    rr.log_accept_ratio.to_bits()
                )
            );
        }
        let p = ab_params(&chain);
        assert_eq!(p.frozen, 1, "frozen after the burn-in");
        assert!(p.tuning_steps <= burn_in);
        assert!(p.step > 0.0 && p.balance > 0.0 && p.balance <= 1.0);
        if burn_in == 0 {
            assert!(
                !moved && p.tuning_steps == 0,
                "no burn-in: the given (a, b)"
            );
        }
    }
}

/// With no burn-in AB-1st is DMALA with the given step and balance, bit for bit.
#[test]
fn ab_1st_without_burn_in_is_dmala() {
    let run = |k: &LgvKernel| {
        let mut chain = new_chain();
        let mut b = Bufs::new(64);
        let cb = b.c();
        let mut st = [0u8; 64];
        unsafe {
            assert_eq!(
                lgv_chain_init_ising_lattice(&mut *chain, 8, 8, 0.3, 0.1, true, &cb, k, 7),
                LGV_OK
            );
            assert_eq!(lgv_chain_step(&mut *chain, 500, ptr::null_mut()), LGV_OK);
            assert_eq!(lgv_chain_state(&*chain, st.as_mut_ptr(), 64), LGV_OK);
        }
        st
    };
    let ab = LgvKernel {
        burn_in: 0,
        ..kernel(LGV_KERNEL_AB)
    };
    assert_eq!(run(&ab), run(&kernel(LGV_KERNEL_DMALA)));
}

#[test]
fn one_call_of_many_steps_equals_many_calls() {
    let (mut ba, mut bb) = (Bufs::new(64), Bufs::new(64));
    let k = kernel(LGV_KERNEL_DMALA);
    let (mut a, mut b) = (lattice_chain(&mut ba, &k, 5), lattice_chain(&mut bb, &k, 5));
    unsafe {
        assert_eq!(lgv_chain_step(&mut *a, 500, ptr::null_mut()), LGV_OK);
        for _ in 0..500 {
            assert_eq!(lgv_chain_step(&mut *b, 1, ptr::null_mut()), LGV_OK);
        }
        assert_eq!(state(&a, 64), state(&b, 64));
        let (mut ua, mut ub) = (0.0, 1.0);
        assert_eq!(lgv_chain_log_density(&*a, &mut ua), LGV_OK);
        assert_eq!(lgv_chain_log_density(&*b, &mut ub), LGV_OK);
        assert_eq!(ua.to_bits(), ub.to_bits());
    }
}

// ---- Status codes ----

fn lattice_status(
    rows: usize,
    cols: usize,
    coupling: f32,
    k: &LgvKernel,
    b: &mut Bufs,
) -> LgvStatus {
    let mut chain = new_chain();
    let cb = b.c();
    unsafe { lgv_chain_init_ising_lattice(&mut *chain, rows, cols, coupling, 0.0, true, &cb, k, 1) }
}

#[test]
fn every_refusal_has_its_status() {
    let ok = kernel(LGV_KERNEL_DMALA);
    let mut b = Bufs::new(9);
    assert_eq!(lattice_status(3, 3, 0.3, &ok, &mut b), LGV_OK);
    assert_eq!(
        lattice_status(0, 3, 0.3, &ok, &mut b),
        LGV_ERR_EMPTY_DIMENSION
    );
    assert_eq!(lattice_status(2, 3, 0.3, &ok, &mut b), LGV_ERR_LENGTH);
    assert_eq!(
        lattice_status(3, 3, f32::NAN, &ok, &mut b),
        LGV_ERR_NON_FINITE_PARAMETER
    );
    assert_eq!(
        lattice_status(3, 3, f32::INFINITY, &ok, &mut b),
        LGV_ERR_NON_FINITE_PARAMETER
    );
    assert_eq!(
        lattice_status(usize::MAX, 3, 0.3, &ok, &mut b),
        LGV_ERR_PARAMETER_OUT_OF_RANGE
    );
    for (step, balance, want) in [
        (0.0, 0.5, LGV_ERR_STEP),
        (-1.0, 0.5, LGV_ERR_STEP),
        (f64::NAN, 0.5, LGV_ERR_STEP),
        (f64::INFINITY, 0.5, LGV_ERR_STEP),
        (0.5, 0.0, LGV_ERR_BALANCE),
        (0.5, 1.5, LGV_ERR_BALANCE),
        (0.5, f64::NAN, LGV_ERR_BALANCE),
        (1e-30, 1.0, LGV_OK),
        (1e30, 1e-30, LGV_OK),
    ] {
        let k = LgvKernel {
            kind: LGV_KERNEL_DULA,
            step,
            balance,
            burn_in: 0,
        };
        assert_eq!(
            lattice_status(3, 3, 0.3, &k, &mut b),
            want,
            "step {step} balance {balance}"
        );
    }
    for (step, balance, burn_in, want) in [
        (0.0, 0.5, 100, LGV_ERR_STEP),
        (f64::NAN, 0.5, 100, LGV_ERR_STEP),
        (-f64::INFINITY, 0.5, 100, LGV_ERR_STEP),
        (0.5, 0.0, 100, LGV_ERR_BALANCE),
        (0.5, -0.0, 100, LGV_ERR_BALANCE),
        (0.5, 1.0 + f64::EPSILON, 100, LGV_ERR_BALANCE),
        (0.5, f64::NAN, 100, LGV_ERR_BALANCE),
        (0.5, 1.0, 0, LGV_OK),
        (1e-30, 1.0, u64::MAX, LGV_OK),
        (1e30, 1e-30, 1, LGV_OK),
    ] {
        let k = LgvKernel {
            kind: LGV_KERNEL_AB,
            step,
            balance,
            burn_in,
        };
        assert_eq!(
            lattice_status(3, 3, 0.3, &k, &mut b),
            want,
            "AB-1st step {step} balance {balance} burn-in {burn_in}"
        );
    }
    for kind in [0, 4, u32::MAX] {
        assert_eq!(
            lattice_status(3, 3, 0.3, &kernel(kind), &mut b),
            LGV_ERR_UNKNOWN_KERNEL
        );
    }
    b.x[4] = 2;
    assert_eq!(
        lattice_status(3, 3, 0.3, &ok, &mut b),
        LGV_ERR_STATE_OUT_OF_RANGE
    );
    b.x[4] = 0;

    // Null, misaligned and overlapping pointers.
    let mut chain = new_chain();
    let cb = b.c();
    unsafe {
        assert_eq!(
            lgv_chain_init_ising_lattice(ptr::null_mut(), 3, 3, 0.3, 0.0, true, &cb, &ok, 1),
            LGV_ERR_NULL
        );
        assert_eq!(
            lgv_chain_init_ising_lattice(&mut *chain, 3, 3, 0.3, 0.0, true, ptr::null(), &ok, 1),
            LGV_ERR_NULL
        );
        assert_eq!(
            lgv_chain_init_ising_lattice(&mut *chain, 3, 3, 0.3, 0.0, true, &cb, ptr::null(), 1),
            LGV_ERR_NULL
        );
    }
    let mut bad = b.c();
    bad.grad = ptr::null_mut();
    unsafe {
        assert_eq!(
            lgv_chain_init_ising_lattice(&mut *chain, 3, 3, 0.3, 0.0, true, &bad, &ok, 1),
            LGV_ERR_NULL
        );
    }
    let mut wide = vec![0.0f32; 10];
    let mut bad = b.c();
    bad.grad = unsafe { wide.as_mut_ptr().cast::<u8>().add(1).cast::<f32>() };
    unsafe {
        assert_eq!(
            lgv_chain_init_ising_lattice(&mut *chain, 3, 3, 0.3, 0.0, true, &bad, &ok, 1),
            LGV_ERR_ALIGNMENT
        );
    }
    let mut bad = b.c();
    bad.x_proposal = bad.x;
    unsafe {
        assert_eq!(
            lgv_chain_init_ising_lattice(&mut *chain, 3, 3, 0.3, 0.0, true, &bad, &ok, 1),
            LGV_ERR_OVERLAP
        );
    }
    let mut bad = b.c();
    bad.grad_proposal = unsafe { bad.grad.add(4) };
    unsafe {
        assert_eq!(
            lgv_chain_init_ising_lattice(&mut *chain, 3, 3, 0.3, 0.0, true, &bad, &ok, 1),
            LGV_ERR_OVERLAP
        );
    }
    let mut bad = b.c();
    bad.flipped = chain.opaque.as_mut_ptr().cast::<u32>();
    unsafe {
        assert_eq!(
            lgv_chain_init_ising_lattice(&mut *chain, 3, 3, 0.3, 0.0, true, &bad, &ok, 1),
            LGV_ERR_OVERLAP
        );
    }
    let mut bad = b.c();
    bad.len = usize::MAX / 2;
    unsafe {
        assert_eq!(
            lgv_chain_init_ising_lattice(&mut *chain, 3, 3, 0.3, 0.0, true, &bad, &ok, 1),
            LGV_ERR_SIZE_OVERFLOW
        );
    }

    // A chain that was never started, or was released.
    let mut fresh = new_chain();
    let mut u = 0.0;
    unsafe {
        assert_eq!(
            lgv_chain_step(&mut *fresh, 1, ptr::null_mut()),
            LGV_ERR_NOT_INITIALISED
        );
        assert_eq!(
            lgv_chain_log_density(&*fresh, &mut u),
            LGV_ERR_NOT_INITIALISED
        );
        assert_eq!(
            lgv_chain_step(ptr::null_mut(), 1, ptr::null_mut()),
            LGV_ERR_NULL
        );
    }

    // A live chain: reads with wrong lengths, resets with bad states, release.
    let mut b = Bufs::new(9);
    let cb = b.c();
    let mut chain = new_chain();
    unsafe {
        assert_eq!(
            lgv_chain_init_ising_lattice(&mut *chain, 3, 3, 0.3, 0.1, true, &cb, &ok, 1),
            LGV_OK
        );
        assert_eq!(lgv_chain_step(&mut *chain, 10, ptr::null_mut()), LGV_OK);
        let mut st = [0u8; 9];
        assert_eq!(lgv_chain_state(&*chain, st.as_mut_ptr(), 8), LGV_ERR_LENGTH);
        assert_eq!(lgv_chain_state(&*chain, ptr::null_mut(), 9), LGV_ERR_NULL);
        assert_eq!(
            lgv_chain_state(&*chain, b.xp.as_mut_ptr(), 9),
            LGV_ERR_OVERLAP
        );
        assert_eq!(lgv_chain_state(&*chain, st.as_mut_ptr(), 9), LGV_OK);
        let before = st;
        let two = [2u8; 9];
        assert_eq!(
            lgv_chain_reset(&mut *chain, two.as_ptr(), 9),
            LGV_ERR_STATE_OUT_OF_RANGE
        );
        assert_eq!(
            lgv_chain_reset(&mut *chain, two.as_ptr(), 8),
            LGV_ERR_LENGTH
        );
        assert_eq!(lgv_chain_state(&*chain, st.as_mut_ptr(), 9), LGV_OK);
        assert_eq!(st, before, "a refused reset leaves the chain as it was");
        let ones = [1u8; 9];
        assert_eq!(lgv_chain_reset(&mut *chain, ones.as_ptr(), 9), LGV_OK);
        assert_eq!(lgv_chain_state(&*chain, st.as_mut_ptr(), 9), LGV_OK);
        assert_eq!(st, ones);
        let mut d = 0usize;
        assert_eq!(lgv_chain_dim(&*chain, &mut d), LGV_OK);
        assert_eq!(d, 9);
        assert_eq!(
            lgv_chain_set_kernel(&mut *chain, &kernel(7)),
            LGV_ERR_UNKNOWN_KERNEL
        );
        assert_eq!(
            lgv_chain_set_kernel(&mut *chain, &kernel(LGV_KERNEL_DULA)),
            LGV_OK
        );
        let mut p = LgvAbParams {
            step: 0.0,
            balance: 0.0,
            tuning_steps: 0,
            frozen: 0,
        };
        assert_eq!(
            lgv_chain_ab_params(&*chain, &mut p),
            LGV_ERR_WRONG_KERNEL,
            "a DULA chain has no AB-1st parameters"
        );
        assert_eq!(
            lgv_chain_ab_params(&*fresh, &mut p),
            LGV_ERR_NOT_INITIALISED
        );
        let bad_ab = LgvKernel {
            balance: 2.0,
            ..kernel(LGV_KERNEL_AB)
        };
        assert_eq!(lgv_chain_set_kernel(&mut *chain, &bad_ab), LGV_ERR_BALANCE);
        assert_eq!(
            lgv_chain_ab_params(&*chain, &mut p),
            LGV_ERR_WRONG_KERNEL,
            "a refused kernel changes nothing"
        );
        let ab = LgvKernel {
            burn_in: 300,
            ..kernel(LGV_KERNEL_AB)
        };
        assert_eq!(lgv_chain_set_kernel(&mut *chain, &ab), LGV_OK);
        assert_eq!(lgv_chain_step(&mut *chain, 20, ptr::null_mut()), LGV_OK);
        assert_eq!(lgv_chain_ab_params(&*chain, ptr::null_mut()), LGV_ERR_NULL);
        let inside = b.grad.as_mut_ptr().cast::<LgvAbParams>();
        assert_eq!(lgv_chain_ab_params(&*chain, inside), LGV_ERR_OVERLAP);
        let mut words = [0u64; 8];
        let misaligned = words.as_mut_ptr().cast::<u8>().add(1).cast::<LgvAbParams>();
        assert_eq!(lgv_chain_ab_params(&*chain, misaligned), LGV_ERR_ALIGNMENT);
        assert_eq!(lgv_chain_ab_params(&*chain, &mut p), LGV_OK);
        assert_eq!((p.tuning_steps, p.frozen), (20, 0));
        assert_eq!(lgv_chain_step(&mut *chain, 400, ptr::null_mut()), LGV_OK);
        assert_eq!(lgv_chain_ab_params(&*chain, &mut p), LGV_OK);
        assert_eq!(p.frozen, 1);
        assert!(p.tuning_steps <= 300);
        assert_eq!(
            lgv_chain_set_kernel(&mut *chain, &kernel(LGV_KERNEL_DULA)),
            LGV_OK
        );
        assert_eq!(lgv_chain_reseed(&mut *chain, 3), LGV_OK);
        let mut g = [0f32; 9];
        assert_eq!(lgv_chain_grad(&*chain, g.as_mut_ptr(), 9), LGV_OK);
        assert!(g.iter().all(|v| v.is_finite()));
        assert_eq!(lgv_chain_release(&mut *chain), LGV_OK);
        assert_eq!(
            lgv_chain_step(&mut *chain, 1, ptr::null_mut()),
            LGV_ERR_NOT_INITIALISED
        );
        assert_eq!(lgv_chain_release(&mut *chain), LGV_ERR_NOT_INITIALISED);
    }

    // Model arrays.
    let (w, bias) = (quad_w(), quad_b());
    let mut cache = vec![0.0; 2 * N];
    let mut bq = Bufs::new(N);
    let cb = bq.c();
    let mut chain = new_chain();
    let quad = |chain: &mut LgvChain,
                w: &[f32],
                wl: usize,
                cache: &mut [f64],
                cl: usize,
                cb: &LgvBuffers| unsafe {
        lgv_chain_init_quadratic(
            chain,
            w.as_ptr(),
            wl,
            bias.as_ptr(),
            N,
            cache.as_mut_ptr(),
            cl,
            cb,
            &ok,
            1,
        )
    };
    assert_eq!(quad(&mut chain, &w, N * N, &mut cache, 2 * N, &cb), LGV_OK);
    assert_eq!(
        quad(&mut chain, &w, N * N - 1, &mut cache, 2 * N, &cb),
        LGV_ERR_LENGTH
    );
    assert_eq!(
        quad(&mut chain, &w, N * N, &mut cache, 2 * N - 1, &cb),
        LGV_ERR_LENGTH
    );
    let mut wn = w.clone();
    wn[17] = f32::NAN;
    assert_eq!(
        quad(&mut chain, &wn, N * N, &mut cache, 2 * N, &cb),
        LGV_ERR_NON_FINITE_PARAMETER
    );
    // The cache the model writes may not overlap W.
    let mut wc: Vec<f64> = vec![0.0; N * N];
    let wc_f32 = unsafe { std::slice::from_raw_parts(wc.as_ptr().cast::<f32>(), N * N) };
    let wc_cache = unsafe { std::slice::from_raw_parts_mut(wc.as_mut_ptr(), 2 * N) };
    assert_eq!(
        quad(&mut chain, wc_f32, N * N, wc_cache, 2 * N, &cb),
        LGV_ERR_OVERLAP
    );
    let mut big = vec![0.0f32; 4 * N];
    let huge = vec![1e30f32; N * N];
    unsafe {
        let cb = bq.c();
        assert_eq!(
            lgv_chain_init_quadratic(
                &mut *chain,
                huge.as_ptr(),
                N * N,
                bias.as_ptr(),
                N,
                cache.as_mut_ptr(),
                2 * N,
                &cb,
                &ok,
                1
            ),
            LGV_OK,
            "finite parameters start"
        );
        let rbm = |w: &[f32],
                   c: &[f32],
                   h: usize,
                   cache: &mut [f64],
                   cb: &LgvBuffers,
                   chain: &mut LgvChain| {
            lgv_chain_init_rbm(
                chain,
                w.as_ptr(),
                h * N,
                bias.as_ptr(),
                N,
                c.as_ptr(),
                h,
                cache.as_mut_ptr(),
                2 * h,
                cb,
                &ok,
                1,
            )
        };
        let c4 = [0.0f32; 4];
        assert_eq!(rbm(&big, &c4, 4, &mut cache, &cb, &mut chain), LGV_OK);
        assert_eq!(
            rbm(&big, &[], 0, &mut cache, &cb, &mut chain),
            LGV_OK,
            "no hidden units"
        );
        big[3] = f32::INFINITY;
        assert_eq!(
            rbm(&big, &c4, 4, &mut cache, &cb, &mut chain),
            LGV_ERR_NON_FINITE_PARAMETER
        );
    }
}

#[test]
fn status_names_exist() {
    for s in 0..=LGV_ERR_WRONG_KERNEL {
        let name = unsafe { std::ffi::CStr::from_ptr(lgv_status_name(s)) };
        assert!(!name.to_bytes().is_empty());
    }
    assert_eq!(lgv_chain_storage_size(), 8 * LGV_CHAIN_WORDS);
}

// ---- c/expected.h ----

fn expected_header() -> String {
    let mut s = String::from(
        "/* Expected results of the C test, computed with the Rust API of langevin-core.\n \
         * Generated by ffi/tests/api.rs; do not edit. Regenerate with\n \
         * LANGEVIN_BLESS=1 cargo test -p langevin-ffi --test api */\n\
         #ifndef LANGEVIN_EXPECTED_H\n#define LANGEVIN_EXPECTED_H\n\n#include <stdint.h>\n\n#include \"langevin.h\"\n\n\
         enum { MODEL_ISING_8X8 = 0, MODEL_QUADRATIC_16 = 1, MODEL_RBM_16X8 = 2 };\n\n\
         struct expected {\n    int model;\n    uint32_t kernel;\n    uint64_t seed;\n    \
         uint64_t state_hash;\n    uint64_t log_density_hash;\n    uint64_t stats[6];\n    \
         /* LGV_KERNEL_AB: the bits of the chosen step and balance (0 otherwise). */\n    \
         uint64_t ab_bits[2];\n};\n\n",
    );
    s += &format!(
        "#define EXPECTED_STEPS {STEPS}\n#define EXPECTED_AB_BURN_IN {AB_BURN_IN}u\n\nstatic const struct expected EXPECTED[] = {{\n"
    );
    for (model, kind, seed) in CASES {
        let o = rust_api(model, kind, seed);
        let m = match model {
            Model::Lattice => "MODEL_ISING_8X8",
            Model::Quadratic => "MODEL_QUADRATIC_16",
            Model::Rbm => "MODEL_RBM_16X8",
        };
        let k = match kind {
            LGV_KERNEL_DULA => "LGV_KERNEL_DULA",
            LGV_KERNEL_DMALA => "LGV_KERNEL_DMALA",
            _ => "LGV_KERNEL_AB",
        };
        let stats: Vec<String> = o.stats.iter().map(|v| format!("{v}u")).collect();
        s += &format!(
            "    {{{m}, {k}, {seed}u, 0x{:016x}ull, 0x{:016x}ull, {{{}}}, {{0x{:016x}ull, 0x{:016x}ull}}}},\n",
            o.state_hash,
            o.log_density_hash,
            stats.join(", "),
            o.ab[0],
            o.ab[1]
        );
    }
    s += "};\n\n#endif /* LANGEVIN_EXPECTED_H */\n";
    s
}

#[test]
fn expected_values_for_the_c_test_come_from_the_rust_api() {
    common::committed_or_bless("c/expected.h", expected_header().as_bytes(), "api");
}

/// Finite extremes through the C ABI: a coupling whose f32 gradient overflows cannot start;
/// huge, subnormal and signed-zero couplings and a 1 × 1 lattice run; zero steps do nothing.
#[test]
fn extreme_finite_values_through_the_c_abi() {
    for kind in [LGV_KERNEL_DULA, LGV_KERNEL_DMALA, LGV_KERNEL_AB] {
        let k = kernel(kind);
        let mut b = Bufs::new(9);
        assert_eq!(
            lattice_status(3, 3, f32::MAX, &k, &mut b),
            LGV_ERR_NON_FINITE_START
        );
        for j in [1e30f32, -1e30, 1e-40, -0.0] {
            let mut chain = new_chain();
            let cb = b.c();
            let mut u = f64::NAN;
            unsafe {
                assert_eq!(
                    lgv_chain_init_ising_lattice(&mut *chain, 3, 3, j, 0.0, true, &cb, &k, 1),
                    LGV_OK
                );
                assert_eq!(lgv_chain_step(&mut *chain, 200, ptr::null_mut()), LGV_OK);
                assert_eq!(lgv_chain_log_density(&*chain, &mut u), LGV_OK);
            }
            assert!(u.is_finite(), "{j}");
        }
        let mut one = Bufs::new(1);
        assert_eq!(lattice_status(1, 1, 0.3, &k, &mut one), LGV_OK, "d = 1");
    }
    let mut b = Bufs::new(9);
    let cb = b.c();
    let mut chain = new_chain();
    let mut r = LgvStepReport {
        accepted: 7,
        proposed_flips: 7,
        log_accept_ratio: 7.0,
        rejection: 7,
        evaluations: 7,
    };
    unsafe {
        let k = kernel(LGV_KERNEL_DMALA);
        assert_eq!(
            lgv_chain_init_ising_lattice(&mut *chain, 3, 3, 0.3, 0.0, true, &cb, &k, 1),
            LGV_OK
        );
        assert_eq!(lgv_chain_step(&mut *chain, 0, &mut r), LGV_OK);
    }
    assert_eq!(
        (r.accepted, r.evaluations),
        (7, 7),
        "zero steps write no report"
    );
}

// ---- Version and relocation ----

#[test]
fn the_version_macros_are_the_crate_version() {
    let v = |s: &str| s.parse::<u32>().unwrap();
    assert_eq!(LGV_VERSION_MAJOR, v(env!("CARGO_PKG_VERSION_MAJOR")));
    assert_eq!(LGV_VERSION_MINOR, v(env!("CARGO_PKG_VERSION_MINOR")));
    assert_eq!(LGV_VERSION_PATCH, v(env!("CARGO_PKG_VERSION_PATCH")));
    assert_eq!(
        LGV_VERSION,
        LGV_VERSION_MAJOR * 10_000 + LGV_VERSION_MINOR * 100 + LGV_VERSION_PATCH
    );
    assert_eq!(lgv_version(), LGV_VERSION);
}

/// A chain copied byte for byte to another address carries on as if it had not moved, and the
/// overlap checks guard it where it lives now.
#[test]
fn a_chain_moved_with_memcpy_carries_on() {
    let (mut bs, mut bm) = (Bufs::new(64), Bufs::new(64));
    let k = kernel(LGV_KERNEL_AB);
    let (mut staying, mut moving) = (lattice_chain(&mut bs, &k, 9), lattice_chain(&mut bm, &k, 9));
    unsafe {
        assert_eq!(lgv_chain_step(&mut *staying, 300, ptr::null_mut()), LGV_OK);
        assert_eq!(lgv_chain_step(&mut *moving, 300, ptr::null_mut()), LGV_OK);
        let mut moved = new_chain();
        ptr::copy_nonoverlapping(&*moving, &mut *moved, 1);
        // The old place is reused for something else: the moved chain must not care.
        moving.opaque.fill(0xA5A5_A5A5_A5A5_A5A5);
        assert_eq!(lgv_chain_step(&mut *staying, 700, ptr::null_mut()), LGV_OK);
        assert_eq!(lgv_chain_step(&mut *moved, 700, ptr::null_mut()), LGV_OK);
        assert_eq!(state(&staying, 64), state(&moved, 64));
        let (ps, pm) = (ab_params(&staying), ab_params(&moved));
        assert_eq!(
            (ps.step.to_bits(), ps.balance.to_bits(), ps.frozen),
            (pm.step.to_bits(), pm.balance.to_bits(), pm.frozen)
        );
        // An output inside the chain's new home is refused; one in its old home is fine.
        let inside = moved.opaque.as_mut_ptr().cast::<f64>();
        assert_eq!(lgv_chain_log_density(&*moved, inside), LGV_ERR_OVERLAP);
        let old_home = moving.opaque.as_mut_ptr().cast::<f64>();
        assert_eq!(lgv_chain_log_density(&*moved, old_home), LGV_OK);
        assert_eq!(lgv_chain_release(&mut *moved), LGV_OK);
        assert_eq!(lgv_chain_release(&mut *staying), LGV_OK);
    }
}
