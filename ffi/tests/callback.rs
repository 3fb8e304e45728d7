//! Targets given by log-density callbacks, through the C ABI as a C program uses it:
//!
//! * exactness against enumeration, for every exact sampler of each domain: a Rust
//!   `extern "C"` energy on small binary, ordinal and categorical models, tested by the
//!   exact-start protocol (draw `X0` from `π` by enumeration, take `K` steps, keep `X_K`;
//!   repeated `n` times these are i.i.d. draws from `π` exactly when the kernel leaves `π`
//!   invariant) with a total-variation threshold whose false-positive rate is at most `α`
//!   (McDiarmid; see `tv_threshold`); a biased kernel (DULA at a large step) is shown to fail it;
//! * every sampler name of the registry, with its parameters, on every domain it applies to;
//! * the statuses of a rejecting, aborting or non-finite callback, after which the chain (state,
//!   log-density, gradient, statistics and random stream) is exactly as before the failed step;
//! * misuse: NULL pointers, short or overlapping buffers, unknown names and parameters.
//!
//! The C energy of `examples/energy.c` runs the same enumeration test in C (on the host and on
//! the Cortex-M4F board, `scripts/firmware.sh ffi`).

#![allow(
    clippy::needless_range_loop,
    reason = "the models are written as their formulas"
)]

mod common;

use common::{Bufs, c, new_chain, stats, totals};
use langevin_ffi::*;
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::cell::Cell;
use std::ffi::c_void;
use std::ptr;

/// Per-test false-positive rate of each enumeration check (before the Bonferroni split over
/// the samplers a test checks).
const ALPHA: f64 = 1e-6;
/// Independent replicates per enumeration check.
const REPLICATES: usize = 40_000;
/// Kernel steps from the exact start.
const K: u32 = 3;

/// `½ Σ √(p_i(1−p_i)/n) + √(ln(1/α)/(2n))`: the expected-TV bound plus McDiarmid's deviation
/// (one draw moves TV by at most 1/n), so `P(TV > threshold) ≤ α` for i.i.d. draws from `p`.
fn tv_threshold(p: &[f64], n: usize, alpha: f64) -> f64 {
    let n = n as f64;
    let b: f64 = p.iter().map(|&q| (q * (1.0 - q) / n).sqrt()).sum::<f64>() / 2.0;
    b + ((1.0 / alpha).ln() / (2.0 * n)).sqrt()
}

fn tv(counts: &[u64], p: &[f64]) -> f64 {
    let n: u64 = counts.iter().sum();
    counts
        .iter()
        .zip(p)
        .map(|(&c, &q)| (c as f64 / n as f64 - q).abs())
        .sum::<f64>()
        / 2.0
}

fn softmax(u: &[f64]) -> Vec<f64> {
    let m = u.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let w: Vec<f64> = u.iter().map(|v| (v - m).exp()).collect();
    let z: f64 = w.iter().sum();
    w.iter().map(|v| v / z).collect()
}

fn draw(p: &[f64], rng: &mut Xoshiro256PlusPlus) -> usize {
    let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    let mut acc = 0.0;
    for (i, &q) in p.iter().enumerate() {
        acc += q;
        if u < acc {
            return i;
        }
    }
    p.len() - 1
}

// ---- The binary energy: U(x) = bᵀx + Σ_{i<j} W_ij x_i x_j ----

const D: usize = 6;

/// How the callback misbehaves, once armed.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Fault {
    None,
    /// Reject every state with `x[0] == 1 && x[1] == 1`.
    RejectPair,
    Abort(i32),
    NanValue,
    InfValue,
    NanGrad,
}

struct Energy {
    w: [[f64; D]; D],
    b: [f64; D],
    fault: Cell<Fault>,
    calls: Cell<u64>,
}

impl Energy {
    fn new() -> Self {
        let mut w = [[0.0; D]; D];
        for i in 0..D {
            for j in 0..D {
                if i != j {
                    w[i][j] = (((i + j) * 7 % 5) as f64 - 2.0) * 0.35;
                }
            }
        }
        let b = [0.3, -0.6, 0.2, 0.5, -0.4, 0.1];
        Self {
            w,
            b,
            fault: Cell::new(Fault::None),
            calls: Cell::new(0),
        }
    }

    fn value(&self, x: &[u8]) -> f64 {
        let mut u = 0.0;
        for i in 0..D {
            let xi = f64::from(x[i]);
            u += self.b[i] * xi;
            for j in i + 1..D {
                u += self.w[i][j] * xi * f64::from(x[j]);
            }
        }
        u
    }

    fn probabilities(&self) -> Vec<f64> {
        let u: Vec<f64> = (0..1usize << D).map(|s| self.value(&bits(s))).collect();
        softmax(&u)
    }
}

fn bits(s: usize) -> [u8; D] {
    let mut x = [0u8; D];
    for (i, v) in x.iter_mut().enumerate() {
        *v = ((s >> i) & 1) as u8;
    }
    x
}

fn index(x: &[u8]) -> usize {
    x.iter()
        .enumerate()
        .map(|(i, &v)| usize::from(v) << i)
        .sum()
}

/// The model behind `user` and the state at `x`, as a callback receives them.
///
/// # Safety
///
/// `user` must point to a live `M`, and `x` to `dim` readable values.
unsafe fn callback_args<'a, M, V>(user: *mut c_void, x: *const V, dim: usize) -> (&'a M, &'a [V]) {
    // SAFETY: the caller's contract.
    unsafe { (&*(user as *const M), std::slice::from_raw_parts(x, dim)) }
}

/// The energy as a C callback.
unsafe extern "C" fn energy(
    user: *mut c_void,
    x: *const u8,
    dim: usize,
    log_density: *mut f64,
    grad: *mut f32,
) -> i32 {
    // SAFETY: `user` is the `Energy` the test passed; `x` has `dim` entries.
    let (e, x) = unsafe { callback_args::<Energy, _>(user, x, dim) };
    e.calls.set(e.calls.get() + 1);
    match e.fault.get() {
        Fault::RejectPair if x[0] == 1 && x[1] == 1 => return LGV_CALLBACK_REJECT,
        Fault::Abort(code) => return code,
        _ => {}
    }
    let mut u = e.value(x);
    match e.fault.get() {
        Fault::NanValue => u = f64::NAN,
        Fault::InfValue => u = f64::INFINITY,
        _ => {}
    }
    // SAFETY: `log_density` is writable.
    unsafe { *log_density = u };
    if !grad.is_null() {
        // SAFETY: `grad` has `dim` entries.
        let g = unsafe { std::slice::from_raw_parts_mut(grad, dim) };
        for i in 0..D {
            let mut gi = e.b[i];
            for j in 0..D {
                gi += e.w[i][j] * f64::from(x[j]);
            }
            g[i] = gi as f32;
        }
        if e.fault.get() == Fault::NanGrad {
            g[D - 1] = f32::NAN;
        }
    }
    LGV_CALLBACK_OK
}

/// A chain over caller memory: its buffers `b` and the kernel scratch it was last given.
struct Mem<B> {
    chain: Box<LgvChain>,
    b: B,
    scratch: Vec<f64>,
    indices: Vec<u32>,
}

impl<B> Mem<B> {
    fn with(b: B) -> Self {
        Self {
            chain: new_chain(),
            b,
            scratch: Vec::new(),
            indices: Vec::new(),
        }
    }

    /// Chooses `name` with `params` on the chain, sizing the scratch as it asks.
    fn use_kernel(&mut self, name: &str, params: &str, burn_in: u64) -> LgvStatus {
        let (n, p) = (c(name), c(params));
        let mut spec = LgvKernelSpec {
            name: n.as_ptr(),
            params: p.as_ptr(),
            burn_in,
            steps: 10_000,
            scratch: ptr::null_mut(),
            scratch_len: 0,
            indices: ptr::null_mut(),
            indices_len: 0,
        };
        let (mut ws, mut is) = (0usize, 0usize);
        // SAFETY: live chain, readable spec, writable outputs.
        let s = unsafe { lgv_chain_kernel_scratch(&*self.chain, &spec, &mut ws, &mut is) };
        if s != LGV_OK {
            return s;
        }
        self.scratch = vec![0.0; ws];
        self.indices = vec![0; is];
        spec.scratch = self.scratch.as_mut_ptr();
        spec.scratch_len = ws;
        spec.indices = self.indices.as_mut_ptr();
        spec.indices_len = is;
        // SAFETY: as above; the scratch lives as long as the chain's use of it.
        unsafe { lgv_chain_use_kernel(&mut *self.chain, &spec) }
    }
}

/// A binary chain over caller memory.
type BinaryMem = Mem<Bufs>;

impl BinaryMem {
    fn new(len: usize) -> Self {
        Self::with(Bufs::new(len))
    }

    fn buffers(&mut self) -> LgvBuffers {
        self.b.c()
    }

    fn init(&mut self, e: &Energy, seed: u64) -> LgvStatus {
        let b = self.buffers();
        let k = dmala(0.5);
        // SAFETY: every pointer addresses live memory of the stated length.
        unsafe {
            lgv_chain_init_callback(
                &mut *self.chain,
                D,
                Some(energy),
                e as *const Energy as *mut c_void,
                &b,
                &k,
                seed,
            )
        }
    }
}

fn dmala(step: f64) -> LgvKernel {
    LgvKernel {
        kind: LGV_KERNEL_DMALA,
        step,
        balance: 0.5,
        burn_in: 0,
    }
}

/// Counts of `X_K` over `REPLICATES` exact starts on the binary energy.
fn binary_counts(m: &mut BinaryMem, p: &[f64], seed: u64) -> Vec<u64> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut counts = vec![0u64; p.len()];
    let mut out = [0u8; D];
    for r in 0..REPLICATES {
        let x0 = bits(draw(p, &mut rng));
        // SAFETY: live chain; buffers of length `D`.
        unsafe {
            assert_eq!(lgv_chain_reset(&mut *m.chain, x0.as_ptr(), D), LGV_OK);
            assert_eq!(
                lgv_chain_reseed(&mut *m.chain, seed ^ (r as u64) << 20),
                LGV_OK
            );
            assert_eq!(lgv_chain_step(&mut *m.chain, K, ptr::null_mut()), LGV_OK);
            assert_eq!(lgv_chain_state(&*m.chain, out.as_mut_ptr(), D), LGV_OK);
        }
        counts[index(&out)] += 1;
    }
    counts
}

/// The exact binary samplers with fixed parameters (the tuned ones with a burn-in of 0 run
/// their starting values: `ab` is DMALA then).
const EXACT_BINARY: &[(&str, &str)] = &[
    ("dmala", "step=0.6"),
    ("dmala", "step=2 balance=0.3"),
    ("ab", "step=0.4"),
    ("gibbs", "scan=random"),
    ("gibbs", "scan=systematic"),
    ("gwg", ""),
    ("rwm", "rate=0.2"),
    ("lb", "balancing=barker"),
    ("lb", "balancing=sqrt"),
    ("hamming-ball", "radius=2 block=3"),
    ("pas", "path-length=2"),
    ("dlmc", "time=0.5 solver=interpolate"),
    ("dlmc", "time=0.3 solver=euler"),
];

#[test]
fn a_rust_callback_is_sampled_exactly_by_every_exact_binary_sampler() {
    let e = Energy::new();
    let p = e.probabilities();
    let alpha = ALPHA / EXACT_BINARY.len() as f64;
    let threshold = tv_threshold(&p, REPLICATES, alpha);
    for (k, &(name, params)) in EXACT_BINARY.iter().enumerate() {
        let mut m = BinaryMem::new(D);
        assert_eq!(m.init(&e, 1), LGV_OK);
        let s = m.use_kernel(name, params, 0);
        assert_eq!(s, LGV_OK, "{name} {params}");
        let counts = binary_counts(&mut m, &p, 100 + k as u64);
        let d = tv(&counts, &p);
        assert!(d < threshold, "{name} {params}: TV {d:.4} ≥ {threshold:.4}");
    }
}

#[test]
fn the_enumeration_check_catches_a_biased_kernel() {
    // DULA at a large step is biased: the same check must fail for it, or it proves nothing.
    let e = Energy::new();
    let p = e.probabilities();
    let threshold = tv_threshold(&p, REPLICATES, ALPHA);
    let mut m = BinaryMem::new(D);
    assert_eq!(m.init(&e, 1), LGV_OK);
    let s = m.use_kernel("dula", "step=2", 0);
    assert_eq!(s, LGV_OK);
    let d = tv(&binary_counts(&mut m, &p, 7), &p);
    assert!(d > threshold, "DULA at step 2: TV {d:.4} ≤ {threshold:.4}");
}

// ---- Labels: a categorical chain energy and an ordinal one ----

const LD: usize = 3;

struct Labels {
    states: usize,
    theta: Vec<f64>,
    coupling: f64,
    ordinal: bool,
}

impl Labels {
    /// Categorical: `U = Σ_i θ_{i,x_i} + J Σ_i [x_i = x_{i+1}]`; ordinal:
    /// `U = Σ_i θ_{i,0} x_i − 0.3 x_i² + J Σ_i x_i x_{i+1} / S`.
    fn value(&self, x: &[u16]) -> f64 {
        let s = self.states;
        let mut u = 0.0;
        for i in 0..LD {
            let v = usize::from(x[i]);
            if self.ordinal {
                let xi = v as f64;
                u += self.theta[i * s] * xi - 0.3 * xi * xi;
                if i + 1 < LD {
                    u += self.coupling * xi * f64::from(x[i + 1]) / s as f64;
                }
            } else {
                u += self.theta[i * s + v];
                if i + 1 < LD && x[i + 1] == x[i] {
                    u += self.coupling;
                }
            }
        }
        u
    }

    fn grad(&self, x: &[u16], g: &mut [f32]) {
        let s = self.states;
        for i in 0..LD {
            let left = if i > 0 { Some(x[i - 1]) } else { None };
            let right = if i + 1 < LD { Some(x[i + 1]) } else { None };
            if self.ordinal {
                let xi = f64::from(x[i]);
                let nb: f64 = left.iter().chain(right.iter()).map(|&v| f64::from(v)).sum();
                g[i] = (self.theta[i * s] - 0.6 * xi + self.coupling * nb / s as f64) as f32;
            } else {
                for k in 0..s {
                    let same = left
                        .iter()
                        .chain(right.iter())
                        .filter(|&&v| usize::from(v) == k);
                    g[i * s + k] =
                        (self.theta[i * s + k] + self.coupling * same.count() as f64) as f32;
                }
            }
        }
    }

    fn decode(&self, mut c: usize) -> [u16; LD] {
        let mut x = [0u16; LD];
        for v in x.iter_mut() {
            *v = (c % self.states) as u16;
            c /= self.states;
        }
        x
    }

    fn encode(&self, x: &[u16]) -> usize {
        x.iter()
            .rev()
            .fold(0, |acc, &v| acc * self.states + usize::from(v))
    }

    fn probabilities(&self) -> Vec<f64> {
        let n = self.states.pow(LD as u32);
        let u: Vec<f64> = (0..n).map(|c| self.value(&self.decode(c))).collect();
        softmax(&u)
    }

    fn grad_len(&self) -> usize {
        if self.ordinal { LD } else { LD * self.states }
    }
}

unsafe extern "C" fn label_energy(
    user: *mut c_void,
    x: *const u16,
    dim: usize,
    states: usize,
    log_density: *mut f64,
    grad: *mut f32,
) -> i32 {
    // SAFETY: `user` is the test's `Labels`; `x` has `dim` entries.
    let (m, x) = unsafe { callback_args::<Labels, _>(user, x, dim) };
    assert_eq!(states, m.states);
    // SAFETY: writable.
    unsafe { *log_density = m.value(x) };
    if !grad.is_null() {
        // SAFETY: the domain's gradient length.
        m.grad(x, unsafe {
            std::slice::from_raw_parts_mut(grad, m.grad_len())
        });
    }
    LGV_CALLBACK_OK
}

/// A label chain's buffers.
struct LabelBufs {
    x: Vec<u16>,
    grad: Vec<f32>,
    xp: Vec<u16>,
    gp: Vec<f32>,
    changed: Vec<u32>,
    work: Vec<f64>,
}

/// A label chain over caller memory.
type LabelMem = Mem<LabelBufs>;

impl LabelMem {
    fn new(m: &Labels) -> Self {
        Self::with(LabelBufs {
            x: vec![0; LD],
            grad: vec![0.0; m.grad_len()],
            xp: vec![0; LD],
            gp: vec![0.0; m.grad_len()],
            changed: vec![0; LD],
            work: vec![0.0; m.states],
        })
    }

    fn buffers(&mut self, states: usize) -> LgvLabelBuffers {
        let b = &mut self.b;
        LgvLabelBuffers {
            x: b.x.as_mut_ptr(),
            grad: b.grad.as_mut_ptr(),
            x_proposal: b.xp.as_mut_ptr(),
            grad_proposal: b.gp.as_mut_ptr(),
            changed: b.changed.as_mut_ptr(),
            scratch: b.work.as_mut_ptr(),
            dim: LD,
            states,
        }
    }

    fn init(&mut self, m: &Labels) -> LgvStatus {
        let b = self.buffers(m.states);
        let domain = if m.ordinal {
            LGV_DOMAIN_ORDINAL
        } else {
            LGV_DOMAIN_CATEGORICAL
        };
        // SAFETY: every pointer addresses live memory of the stated length.
        unsafe {
            lgv_chain_init_label_callback(
                &mut *self.chain,
                domain,
                Some(label_energy),
                m as *const Labels as *mut c_void,
                &b,
                &dmala(0.5),
                3,
            )
        }
    }
}

fn categorical() -> Labels {
    let s = 3;
    Labels {
        states: s,
        theta: (0..LD * s)
            .map(|k| ((k * 5 % 7) as f64 - 3.0) * 0.3)
            .collect(),
        coupling: 0.8,
        ordinal: false,
    }
}

fn ordinal() -> Labels {
    let s = 4;
    Labels {
        states: s,
        theta: (0..LD * s).map(|k| ((k * 3 % 5) as f64) * 0.4).collect(),
        coupling: 0.6,
        ordinal: true,
    }
}

fn label_check(m: &Labels, cases: &[(&str, &str)]) {
    let p = m.probabilities();
    let threshold = tv_threshold(&p, REPLICATES, ALPHA / cases.len() as f64);
    for (k, &(name, params)) in cases.iter().enumerate() {
        let mut mem = LabelMem::new(m);
        assert_eq!(mem.init(m), LGV_OK);
        let s = mem.use_kernel(name, params, 0);
        assert_eq!(s, LGV_OK, "{name} {params}");
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(200 + k as u64);
        let mut counts = vec![0u64; p.len()];
        let mut out = [0u16; LD];
        for r in 0..REPLICATES {
            let x0 = m.decode(draw(&p, &mut rng));
            // SAFETY: live chain; buffers of length `LD`.
            unsafe {
                assert_eq!(
                    lgv_chain_reset_labels(&mut *mem.chain, x0.as_ptr(), LD),
                    LGV_OK
                );
                assert_eq!(lgv_chain_reseed(&mut *mem.chain, r as u64 * 31 + 5), LGV_OK);
                assert_eq!(lgv_chain_step(&mut *mem.chain, K, ptr::null_mut()), LGV_OK);
                assert_eq!(lgv_chain_labels(&*mem.chain, out.as_mut_ptr(), LD), LGV_OK);
            }
            counts[m.encode(&out)] += 1;
        }
        let d = tv(&counts, &p);
        assert!(d < threshold, "{name} {params}: TV {d:.4} ≥ {threshold:.4}");
    }
}

#[test]
fn a_categorical_callback_is_sampled_exactly() {
    label_check(
        &categorical(),
        &[
            ("dmala", "step=1"),
            ("gibbs", ""),
            ("gwg", ""),
            ("lb", ""),
            ("pas", "path-length=2"),
            ("dlmc", "time=0.5"),
        ],
    );
}

#[test]
fn an_ordinal_callback_is_sampled_exactly() {
    label_check(
        &ordinal(),
        &[
            ("dmala", "step=1"),
            ("dmala", "step=1 window=1"),
            ("gibbs", "scan=random"),
        ],
    );
}

// ---- Every sampler name ----

/// Every sampler of the registry with the domains it applies to (B, O, C) and parameters.
const EVERY: &[(&str, &str, [bool; 3])] = &[
    ("dula", "step=0.3 balance=0.6", [true, true, true]),
    ("dmala", "step=0.3", [true, true, true]),
    (
        "dmala",
        "adapt=acceptance target-acceptance=0.5",
        [true, true, true],
    ),
    ("gibbs", "scan=random", [true, true, true]),
    ("gwg", "", [true, false, true]),
    ("rwm", "", [true, false, false]),
    ("ab", "step=0.5 balance=0.5", [true, true, true]),
    ("acs", "a-ceil=3", [true, true, true]),
    ("acs", "a-max=2 a-min=0.1", [true, true, true]),
    ("lb", "balancing=sqrt", [true, false, true]),
    ("hamming-ball", "radius=1 block=4", [true, false, false]),
    ("pas", "path-length=auto", [true, false, true]),
    ("dlmc", "time=auto", [true, false, true]),
];

#[test]
fn every_sampler_name_runs_on_every_domain_it_applies_to() {
    let e = Energy::new();
    let (cat, ord) = (categorical(), ordinal());
    for &(name, params, domains) in EVERY {
        // Binary.
        let mut m = BinaryMem::new(D);
        assert_eq!(m.init(&e, 1), LGV_OK);
        let s = m.use_kernel(name, params, 1000);
        let want = if domains[0] {
            LGV_OK
        } else {
            LGV_ERR_UNSUPPORTED_KERNEL
        };
        assert_eq!(s, want, "binary {name} {params}");
        if s == LGV_OK {
            // SAFETY: live chain.
            unsafe { assert_eq!(lgv_chain_step(&mut *m.chain, 3000, ptr::null_mut()), LGV_OK) };
            let st = stats(&m.chain);
            assert_eq!(st.steps, 3000, "{name}");
            assert!(st.accepted_flips > 0, "binary {name} {params} never moved");
        }
        // Labels.
        for (model, on) in [(&ord, domains[1]), (&cat, domains[2])] {
            let mut mem = LabelMem::new(model);
            assert_eq!(mem.init(model), LGV_OK);
            let s = mem.use_kernel(name, params, 1000);
            let want = if on {
                LGV_OK
            } else {
                LGV_ERR_UNSUPPORTED_KERNEL
            };
            assert_eq!(
                s, want,
                "labels (ordinal {}) {name} {params}",
                model.ordinal
            );
            if s == LGV_OK {
                // SAFETY: live chain.
                let s = unsafe { lgv_chain_step(&mut *mem.chain, 3000, ptr::null_mut()) };
                assert_eq!(s, LGV_OK, "{name} {params}");
            }
        }
    }
}

/// The C sampler table against the command line's registry: the same names (but for the
/// samplers a single chain without the standard library cannot run), the same parameters per
/// sampler, and the same defaults: a kernel given every parameter at the registry's default
/// draws what the kernel given none draws.
#[test]
fn the_c_sampler_table_is_the_registrys() {
    use langevin_std::samplers::{Domain, Param, SAMPLERS, SamplerParams};
    let e = Energy::new();
    let names: Vec<String> = (0..)
        .map(|i| lgv_sampler_name(i))
        .take_while(|p| !p.is_null())
        // SAFETY: static NUL-terminated strings.
        .map(|p| {
            unsafe { std::ffi::CStr::from_ptr(p) }
                .to_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let registry: Vec<&str> = SAMPLERS
        .iter()
        .map(|e| e.name)
        .filter(|n| !["ab2", "block-gibbs", "pt-dmala"].contains(n))
        .collect();
    assert_eq!(names, registry);
    let defaults = SamplerParams::default();
    // The key of a parameter and its default as the command line spells it (unset ones have
    // none).
    let key = |p: Param| p.info().flag.trim_start_matches("--").to_string();
    let default = |p: Param| defaults.text(p).map(|v| format!("{}={v}", key(p)));
    let run = |name: &str, params: &str| {
        let mut m = BinaryMem::new(D);
        assert_eq!(m.init(&e, 7), LGV_OK);
        let s = m.use_kernel(name, params, 100);
        assert_eq!(s, LGV_OK, "{name} {params}");
        // SAFETY: live chain, writable state of `D` entries.
        let mut x = [0u8; D];
        unsafe {
            assert_eq!(lgv_chain_step(&mut *m.chain, 300, ptr::null_mut()), LGV_OK);
            assert_eq!(lgv_chain_state(&*m.chain, x.as_mut_ptr(), D), LGV_OK);
        }
        (x, stats(&m.chain).accepted_flips)
    };
    for entry in SAMPLERS
        .iter()
        .filter(|e| names.iter().any(|n| n == e.name))
    {
        let given: Vec<String> = entry
            .params
            .iter()
            .filter(|p| p.applies_to(Domain::Binary))
            .filter_map(|&p| default(p))
            .collect();
        assert_eq!(
            run(entry.name, ""),
            run(entry.name, &given.join(" ")),
            "{}: the C defaults differ from the registry's",
            entry.name
        );
        let mut m = BinaryMem::new(D);
        assert_eq!(m.init(&e, 7), LGV_OK);
        for p in Param::ALL.into_iter().filter(|p| !entry.params.contains(p)) {
            if let Some(pair) = default(p) {
                let s = m.use_kernel(entry.name, &pair, 100);
                assert_eq!(s, LGV_ERR_PARAMETER_NAME, "{} {pair}", entry.name);
            }
        }
    }
}

#[test]
fn samplers_that_need_the_standard_library_or_several_chains_are_refused_by_name() {
    let e = Energy::new();
    let mut m = BinaryMem::new(D);
    assert_eq!(m.init(&e, 1), LGV_OK);
    for name in ["ab2", "block-gibbs", "pt-dmala"] {
        let s = m.use_kernel(name, "", 0);
        assert_eq!(s, LGV_ERR_UNSUPPORTED_KERNEL, "{name}");
    }
    for (name, params, want) in [
        ("nuts", "", LGV_ERR_UNKNOWN_KERNEL),
        ("DMALA", "", LGV_ERR_UNKNOWN_KERNEL),
        ("dmala", "radius=2", LGV_ERR_PARAMETER_NAME),
        ("gibbs", "step=0.1", LGV_ERR_PARAMETER_NAME),
        ("dmala", "step", LGV_ERR_PARAMETER_VALUE),
        ("dmala", "step=fast", LGV_ERR_PARAMETER_VALUE),
        ("gibbs", "scan=diagonal", LGV_ERR_PARAMETER_VALUE),
        ("dmala", "step=-1", LGV_ERR_STEP),
        ("dmala", "step=nan", LGV_ERR_PARAMETER_VALUE),
        ("dmala", "step=0.1234567890123456", LGV_ERR_PARAMETER_VALUE),
        ("dmala", "step=1e-30", LGV_ERR_PARAMETER_VALUE),
        ("dmala", "step=0", LGV_ERR_STEP),
        ("dmala", "balance=1.5", LGV_ERR_BALANCE),
        ("dmala", "window=2", LGV_ERR_WINDOW),
        (
            "hamming-ball",
            "radius=4 block=10",
            LGV_ERR_PARAMETER_OUT_OF_RANGE,
        ),
        ("hamming-ball", "block=33", LGV_ERR_PARAMETER_OUT_OF_RANGE),
        ("rwm", "rate=1", LGV_ERR_PARAMETER_OUT_OF_RANGE),
        ("pas", "path-length=0", LGV_ERR_PARAMETER_OUT_OF_RANGE),
        ("acs", "a-max=2", LGV_ERR_PARAMETER),
        ("dlmc", "time=-1", LGV_ERR_PARAMETER_OUT_OF_RANGE),
    ] {
        let s = m.use_kernel(name, params, 0);
        assert_eq!(s, want, "{name} {params}: {s}");
    }
    // A refused kernel leaves the chain's kernel as it was: it still steps.
    // SAFETY: live chain.
    assert_eq!(
        unsafe { lgv_chain_step(&mut *m.chain, 10, ptr::null_mut()) },
        LGV_OK
    );
}

// ---- Rejections, aborts and non-finite values ----

/// Everything observable about a chain.
#[derive(Debug, PartialEq)]
struct Snapshot {
    state: Vec<u8>,
    grad: Vec<f32>,
    log_density_bits: u64,
    stats: [u64; 6],
}

fn snapshot(chain: &LgvChain) -> Snapshot {
    let (mut state, mut grad, mut u) = (vec![0u8; D], vec![0f32; D], 0.0);
    // SAFETY: live chain, writable outputs.
    unsafe {
        assert_eq!(lgv_chain_state(chain, state.as_mut_ptr(), D), LGV_OK);
        assert_eq!(lgv_chain_grad(chain, grad.as_mut_ptr(), D), LGV_OK);
        assert_eq!(lgv_chain_log_density(chain, &mut u), LGV_OK);
    }
    Snapshot {
        state,
        grad,
        log_density_bits: u.to_bits(),
        stats: totals!(stats(chain)),
    }
}

#[test]
fn a_rejecting_callback_keeps_the_chain_out_of_the_rejected_states_and_counts_them() {
    let e = Energy::new();
    let mut m = BinaryMem::new(D);
    assert_eq!(m.init(&e, 5), LGV_OK);
    e.fault.set(Fault::RejectPair);
    let mut state = [0u8; D];
    for _ in 0..2000 {
        // SAFETY: live chain.
        unsafe {
            assert_eq!(lgv_chain_step(&mut *m.chain, 1, ptr::null_mut()), LGV_OK);
            assert_eq!(lgv_chain_state(&*m.chain, state.as_mut_ptr(), D), LGV_OK);
        }
        assert!(
            !(state[0] == 1 && state[1] == 1),
            "entered a rejected state"
        );
    }
    let st = stats(&m.chain);
    assert!(st.invalid > 0 && st.invalid < st.steps, "{st:?}");
    // A rejected initial state is a status.
    let mut m2 = BinaryMem::new(D);
    m2.b.x = vec![1; D];
    assert_eq!(m2.init(&e, 5), LGV_ERR_START_REJECTED);
}

#[test]
fn an_aborted_or_non_finite_step_leaves_the_chain_exactly_as_it_was() {
    for fault in [
        Fault::Abort(7),
        Fault::Abort(-3),
        Fault::NanValue,
        Fault::InfValue,
        Fault::NanGrad,
    ] {
        let e = Energy::new();
        let mut m = BinaryMem::new(D);
        assert_eq!(m.init(&e, 9), LGV_OK);
        // SAFETY: live chain.
        assert_eq!(
            unsafe { lgv_chain_step(&mut *m.chain, 50, ptr::null_mut()) },
            LGV_OK
        );
        // The twin is a byte copy: it continues the same chain with the same random stream.
        let mut twin = new_chain();
        twin.opaque = m.chain.opaque;
        let before = snapshot(&m.chain);
        e.fault.set(fault);
        // SAFETY: live chain.
        let s = unsafe { lgv_chain_step(&mut *m.chain, 1, ptr::null_mut()) };
        let want = match fault {
            Fault::Abort(_) => LGV_ERR_CALLBACK,
            _ => LGV_ERR_CALLBACK_NON_FINITE,
        };
        assert_eq!(s, want, "{fault:?}");
        assert_eq!(snapshot(&m.chain), before, "{fault:?}");
        let mut code = 0;
        // SAFETY: live chain.
        unsafe { assert_eq!(lgv_chain_callback_code(&*m.chain, &mut code), LGV_OK) };
        let want_code = match fault {
            Fault::Abort(c) => c,
            _ => LGV_CALLBACK_OK,
        };
        assert_eq!(code, want_code);
        // Healed, the chain takes the step the failed one would have: the random stream was
        // restored too.
        e.fault.set(Fault::None);
        // SAFETY: both live; the twin shares the buffers, so step one, read, then the other.
        unsafe {
            assert_eq!(lgv_chain_step(&mut *m.chain, 20, ptr::null_mut()), LGV_OK);
        }
        let after = snapshot(&m.chain);
        // SAFETY: the twin is a valid copy of the chain before the failed step; its buffers
        // hold that chain's values again after a reset to its state.
        unsafe {
            assert_eq!(
                lgv_chain_reset(&mut *twin, before.state.as_ptr(), D),
                LGV_OK
            );
            assert_eq!(lgv_chain_step(&mut *twin, 20, ptr::null_mut()), LGV_OK);
        }
        let twin_after = snapshot(&twin);
        assert_eq!(after.state, twin_after.state, "{fault:?}");
        assert_eq!(
            after.log_density_bits, twin_after.log_density_bits,
            "{fault:?}"
        );
    }
}

#[test]
fn non_finite_or_failing_callbacks_at_the_start_are_statuses() {
    for (fault, want) in [
        (Fault::NanValue, LGV_ERR_NON_FINITE_START),
        (Fault::InfValue, LGV_ERR_NON_FINITE_START),
        (Fault::NanGrad, LGV_ERR_NON_FINITE_START),
        (Fault::Abort(2), LGV_ERR_CALLBACK),
    ] {
        let e = Energy::new();
        e.fault.set(fault);
        let mut m = BinaryMem::new(D);
        assert_eq!(m.init(&e, 1), want, "{fault:?}");
        // SAFETY: the object reads as not initialised.
        let s = unsafe { lgv_chain_step(&mut *m.chain, 1, ptr::null_mut()) };
        assert_eq!(s, LGV_ERR_NOT_INITIALISED);
    }
}

// ---- Misuse ----

#[test]
fn misuse_is_reported_by_status() {
    let e = Energy::new();
    let user = &e as *const Energy as *mut c_void;
    let k = dmala(0.5);
    let mut m = BinaryMem::new(D);
    let b = m.buffers();
    // SAFETY: each call passes one bad argument and otherwise valid memory.
    unsafe {
        let chain: *mut LgvChain = &mut *m.chain;
        assert_eq!(
            lgv_chain_init_callback(chain, D, None, user, &b, &k, 1),
            LGV_ERR_NULL
        );
        assert_eq!(
            lgv_chain_init_callback(ptr::null_mut(), D, Some(energy), user, &b, &k, 1),
            LGV_ERR_NULL
        );
        assert_eq!(
            lgv_chain_init_callback(chain, D, Some(energy), user, ptr::null(), &k, 1),
            LGV_ERR_NULL
        );
        assert_eq!(
            lgv_chain_init_callback(chain, D, Some(energy), user, &b, ptr::null(), 1),
            LGV_ERR_NULL
        );
        // Buffers shorter or longer than the dimension.
        assert_eq!(
            lgv_chain_init_callback(chain, D + 1, Some(energy), user, &b, &k, 1),
            LGV_ERR_LENGTH
        );
        let short = LgvBuffers {
            len: D - 1,
            ..m.buffers()
        };
        assert_eq!(
            lgv_chain_init_callback(chain, D, Some(energy), user, &short, &k, 1),
            LGV_ERR_LENGTH
        );
        let zero = LgvBuffers {
            len: 0,
            ..m.buffers()
        };
        assert_eq!(
            lgv_chain_init_callback(chain, 0, Some(energy), user, &zero, &k, 1),
            LGV_ERR_EMPTY_DIMENSION
        );
        let overlapping = LgvBuffers {
            grad_proposal: m.b.grad.as_mut_ptr(),
            ..m.buffers()
        };
        assert_eq!(
            lgv_chain_init_callback(chain, D, Some(energy), user, &overlapping, &k, 1),
            LGV_ERR_OVERLAP
        );
        assert_eq!(
            lgv_chain_init_callback(chain, D, Some(energy), user, &b, &k, 1),
            LGV_OK
        );
        // Binary calls on a binary chain work; label calls are for other domains.
        let mut labels = [0u16; D];
        assert_eq!(
            lgv_chain_labels(chain, labels.as_mut_ptr(), D),
            LGV_ERR_WRONG_DOMAIN
        );
        assert_eq!(
            lgv_chain_reset_labels(chain, labels.as_ptr(), D),
            LGV_ERR_WRONG_DOMAIN
        );
        let mut out = [0u8; D];
        assert_eq!(
            lgv_chain_state(chain, out.as_mut_ptr(), D - 1),
            LGV_ERR_LENGTH
        );
        assert_eq!(lgv_chain_state(chain, ptr::null_mut(), D), LGV_ERR_NULL);
        let mut dom = 9;
        assert_eq!(lgv_chain_domain(chain, &mut dom), LGV_OK);
        assert_eq!(dom, LGV_DOMAIN_BINARY);
        // Kernel specifications: NULL pointers, short or overlapping scratch.
        assert_eq!(lgv_chain_use_kernel(chain, ptr::null()), LGV_ERR_NULL);
        let lb = c("lb");
        let mut spec = LgvKernelSpec {
            name: ptr::null(),
            params: ptr::null(),
            burn_in: 0,
            steps: 0,
            scratch: ptr::null_mut(),
            scratch_len: 0,
            indices: ptr::null_mut(),
            indices_len: 0,
        };
        assert_eq!(lgv_chain_use_kernel(chain, &spec), LGV_ERR_NULL);
        spec.name = lb.as_ptr();
        let (mut ws, mut is) = (0, 0);
        assert_eq!(
            lgv_chain_kernel_scratch(chain, &spec, ptr::null_mut(), &mut is),
            LGV_ERR_NULL
        );
        assert_eq!(
            lgv_chain_kernel_scratch(chain, &spec, &mut ws, &mut is),
            LGV_OK
        );
        assert_eq!((ws, is), (D, 0));
        assert_eq!(lgv_chain_use_kernel(chain, &spec), LGV_ERR_SCRATCH);
        let mut scratch = vec![0.0f64; D];
        spec.scratch = scratch.as_mut_ptr();
        spec.scratch_len = D - 1;
        assert_eq!(lgv_chain_use_kernel(chain, &spec), LGV_ERR_SCRATCH);
        spec.scratch_len = D;
        spec.scratch = m.b.gp.as_mut_ptr().cast();
        spec.scratch_len = 1;
        assert_eq!(lgv_chain_use_kernel(chain, &spec), LGV_ERR_OVERLAP);
        spec.scratch = scratch.as_mut_ptr();
        spec.scratch_len = D;
        assert_eq!(lgv_chain_use_kernel(chain, &spec), LGV_OK);
        // The chain now writes the scratch: reading a result into it is refused.
        let mut dim = 0usize;
        assert_eq!(
            lgv_chain_state(chain, scratch.as_mut_ptr().cast(), D),
            LGV_ERR_OVERLAP
        );
        assert_eq!(lgv_chain_dim(chain, &mut dim), LGV_OK);
        assert_eq!(lgv_chain_step(chain, 100, ptr::null_mut()), LGV_OK);
        // Back to a kernel without scratch: the scratch is the caller's again.
        assert_eq!(lgv_chain_set_kernel(chain, &k), LGV_OK);
        assert_eq!(
            lgv_chain_state(chain, scratch.as_mut_ptr().cast(), D),
            LGV_OK
        );
        assert_eq!(lgv_chain_release(chain), LGV_OK);
    }
}

#[test]
fn label_chains_refuse_bad_domains_and_lengths() {
    let cat = categorical();
    let user = &cat as *const Labels as *mut c_void;
    let mut mem = LabelMem::new(&cat);
    let k = dmala(0.5);
    let b = mem.buffers(cat.states);
    // SAFETY: each call passes one bad argument and otherwise valid memory.
    unsafe {
        let chain: *mut LgvChain = &mut *mem.chain;
        let init = |domain, f: LgvLabelLogDensityFn, b: &LgvLabelBuffers| {
            lgv_chain_init_label_callback(chain, domain, f, user, b, &k, 1)
        };
        let cat_init = |b: &LgvLabelBuffers| init(LGV_DOMAIN_CATEGORICAL, Some(label_energy), b);
        assert_eq!(
            init(LGV_DOMAIN_BINARY, Some(label_energy), &b),
            LGV_ERR_WRONG_DOMAIN
        );
        assert_eq!(init(LGV_DOMAIN_CATEGORICAL, None, &b), LGV_ERR_NULL);
        let one = LgvLabelBuffers {
            states: 1,
            ..mem.buffers(cat.states)
        };
        assert_eq!(cat_init(&one), LGV_ERR_PARAMETER_OUT_OF_RANGE);
        let mut x = mem.b.x.clone();
        x[1] = 3;
        let bad = LgvLabelBuffers {
            x: x.as_mut_ptr(),
            ..mem.buffers(cat.states)
        };
        assert_eq!(cat_init(&bad), LGV_ERR_STATE_OUT_OF_RANGE);
        assert_eq!(cat_init(&b), LGV_OK);
        let mut g = vec![0f32; LD * cat.states];
        assert_eq!(lgv_chain_grad(chain, g.as_mut_ptr(), LD), LGV_ERR_LENGTH);
        assert_eq!(
            lgv_chain_grad(chain, g.as_mut_ptr(), LD * cat.states),
            LGV_OK
        );
        let mut bits = [0u8; LD];
        assert_eq!(
            lgv_chain_state(chain, bits.as_mut_ptr(), LD),
            LGV_ERR_WRONG_DOMAIN
        );
        let bad_state = [0u16, 5, 0];
        assert_eq!(
            lgv_chain_reset_labels(chain, bad_state.as_ptr(), LD),
            LGV_ERR_STATE_OUT_OF_RANGE
        );
        let mut states = 0;
        assert_eq!(lgv_chain_states(chain, &mut states), LGV_OK);
        assert_eq!(states, cat.states);
        let mut dom = 0;
        assert_eq!(lgv_chain_domain(chain, &mut dom), LGV_OK);
        assert_eq!(dom, LGV_DOMAIN_CATEGORICAL);
    }
}

#[test]
fn kernel_scratch_may_not_overlap_a_model_array() {
    // A dense quadratic model whose W lives in f64-aligned storage, so that a scratch pointer
    // into it is aligned and only the overlap check can refuse it.
    const N: usize = 4;
    let mut storage = vec![0.0f64; N * N / 2];
    let w = storage.as_mut_ptr().cast::<f32>();
    // SAFETY: `storage` holds N * N f32s.
    unsafe { std::slice::from_raw_parts_mut(w, N * N).fill(0.1) };
    let b = [0.0f32; N];
    let mut cache = [0.0f64; 2 * N];
    let mut m = BinaryMem::new(N);
    let buffers = m.buffers();
    let mut other = [0.0f64; N];
    let name = c("lb");
    // SAFETY: every pointer addresses the stated entries.
    unsafe {
        let chain: *mut LgvChain = &mut *m.chain;
        assert_eq!(
            lgv_chain_init_quadratic(
                chain,
                w,
                N * N,
                b.as_ptr(),
                N,
                cache.as_mut_ptr(),
                2 * N,
                &buffers,
                &dmala(0.5),
                1
            ),
            LGV_OK
        );
        let mut spec = LgvKernelSpec {
            name: name.as_ptr(),
            params: ptr::null(),
            burn_in: 0,
            steps: 0,
            scratch: storage.as_mut_ptr(),
            scratch_len: N,
            indices: ptr::null_mut(),
            indices_len: 0,
        };
        assert_eq!(lgv_chain_use_kernel(chain, &spec), LGV_ERR_OVERLAP);
        spec.scratch = cache.as_mut_ptr();
        assert_eq!(lgv_chain_use_kernel(chain, &spec), LGV_ERR_OVERLAP);
        spec.scratch = other.as_mut_ptr();
        assert_eq!(lgv_chain_use_kernel(chain, &spec), LGV_OK);
        assert_eq!(lgv_chain_step(chain, 100, ptr::null_mut()), LGV_OK);
    }
}
