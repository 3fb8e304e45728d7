//! The second-order (Gaussian integral trick) kernel on ordinal states.
//!
//! Deterministic part, as `second_order_exact.rs` does for binary states: the transition
//! matrix is an integral over the auxiliary `u`, but for a fixed `u` the `x`-update is an MH
//! kernel for the joint law `π(x) N(u; A x, I)`. By enumeration over all pairs `x, y` of
//! `{0,1,2}^4` we check (i) that each conditional `Q(· | x, u)` is normalised and matches an
//! independent softmax of the Gaussian-integral-trick proposal, and (ii) detailed balance
//! `π(x) N(u; Ax, I) Q(y|x,u) min(1, r) = π(y) N(u; Ay, I) Q(x|y,u) min(1, r')` to `1e-10`
//! relative (f64 sums over 81 values and `d = 4` terms: rounding is near `1e-14`, so `1e-10`
//! leaves room without hiding any wrong term, which shows up at order one). With the Gibbs
//! update of `u` this makes `π` invariant.
//!
//! Sampling-path part: `x₀ ~ π` exactly, `k ∈ {1, 10}` steps of the real kernel (drawn `u`,
//! drawn `y`, cached products), `n = 10⁵` repeats, pooled chi-square at `α = 1e-6` and the TV
//! threshold `½ Σ √(p_i(1−p_i)/n) + √(ln(1/α)/(2n))` (see `langevin_tests::discrete`).

use langevin_core::ordinal::{OrdinalChain, OrdinalProposal, OrdinalTarget};
use langevin_core::second_order::{OrdinalAbSecondOrder, TrickParams, ordinal_scratch_len};
use langevin_std::ab2::fit::trick_factor_f32;
use langevin_std::ab2::{shift_diagonal, trace_diagonal};
use langevin_std::models::OrdinalQuadratic;
use langevin_std::sdp::SdpOptions;
use langevin_tests::discrete::*;
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

const N: usize = 100_000;

/// A lattice Gaussian `U = −½(x−μ)ᵀA(x−μ) + bᵀx` with a random symmetric positive `A`, and its
/// Hessian `W = −A`.
fn lattice_gaussian(d: usize, s: usize, seed: u64) -> (OrdinalQuadratic, Vec<f64>) {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let g = normals(&mut rng, d * d, 0.5);
    // A = GᵀG/d + 0.3 I.
    let mut a = vec![0.0; d * d];
    for i in 0..d {
        for j in 0..d {
            a[i * d + j] = (0..d).map(|k| g[k * d + i] * g[k * d + j]).sum::<f64>() / d as f64;
        }
        a[i * d + i] += 0.3;
    }
    let mu: Vec<f64> = normals(&mut rng, d, 0.6)
        .iter()
        .map(|v| (s - 1) as f64 / 2.0 + v)
        .collect();
    let b = normals(&mut rng, d, 0.3);
    let w = a.iter().map(|v| -v).collect();
    (OrdinalQuadratic::new(s, a, mu, b).unwrap(), w)
}

/// `log Q(y | x, u)` straight from its definition: an f64 softmax over the `S` values.
#[allow(clippy::too_many_arguments)]
fn log_q_reference(
    w: &[f32],
    diag: &[f32],
    factor: &[f32],
    (a, b): (f64, f64),
    s: usize,
    x: &[u16],
    g: &[f32],
    u: &[f64],
    y: &[u16],
) -> f64 {
    let d = x.len();
    (0..d)
        .map(|i| {
            let wx: f64 = (0..d)
                .map(|j| f64::from(w[i * d + j]) * f64::from(x[j]))
                .sum();
            let atu: f64 = (0..d).map(|k| f64::from(factor[k * d + i]) * u[k]).sum();
            let c = b * f64::from(g[i]) - b * wx + f64::from(x[i]) / a + atu;
            let kappa = b * f64::from(diag[i]) / 2.0 + 1.0 / (2.0 * a);
            let logits: Vec<f64> = (0..s)
                .map(|v| v as f64 * c - kappa * (v * v) as f64)
                .collect();
            let m = logits.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let lse = m + logits.iter().map(|l| (l - m).exp()).sum::<f64>().ln();
            logits[usize::from(y[i])] - lse
        })
        .sum()
}

struct Case {
    name: &'static str,
    w: Vec<f32>,
    diag: Vec<f32>,
    factor: Vec<f32>,
    step: f64,
    balance: f64,
}

impl Case {
    /// The case with the factor `A` of the trick for `W = w`, `D = diag` at this balance.
    fn trick(
        name: &'static str,
        w: &[f64],
        diag: &[f64],
        d: usize,
        step: f64,
        balance: f64,
    ) -> Self {
        Self {
            name,
            w: f32s(w),
            diag: f32s(diag),
            factor: trick_factor_f32(w, diag, d, balance).unwrap(),
            step,
            balance,
        }
    }
}

fn f32s(v: &[f64]) -> Vec<f32> {
    v.iter().map(|&x| x as f32).collect()
}

/// AB-trace and AB-shift with the true `W`, a wrong `W` with its trace `D`, and an arbitrary
/// `D` with an arbitrary dense `A` (no relation to `W` at all: still exact).
fn cases(h: &[f64], d: usize) -> Vec<Case> {
    let [trace, shift, wrong, wrong_trace] = second_order_diagonals(h, d);
    let mut out = Vec::new();
    for (step, balance) in SECOND_ORDER_STEPS {
        let upper = trick_factor_f32(h, &trace, d, balance).unwrap();
        // Any A gives an exact kernel; the transposed (lower-triangular) factor exercises the
        // general, non-triangular products.
        let lower: Vec<f32> = (0..d * d).map(|k| upper[(k % d) * d + k / d]).collect();
        for (name, factor) in [("trace", upper), ("trace, lower A", lower)] {
            out.push(Case {
                name,
                w: f32s(h),
                diag: f32s(&trace),
                factor,
                step,
                balance,
            });
        }
    }
    out.push(Case::trick("shift", h, &shift, d, 1.0, 0.7));
    out.push(Case::trick(
        "wrong W, trace",
        &wrong,
        &wrong_trace,
        d,
        2.0,
        0.9,
    ));
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
    let arbitrary_d: Vec<f64> = normals(&mut rng, d, 1.0).iter().map(|v| v.abs()).collect();
    out.push(Case {
        name: "arbitrary D and A",
        w: f32s(h),
        diag: f32s(&arbitrary_d),
        factor: f32s(&normals(&mut rng, d * d, 0.6)),
        step: 1.5,
        balance: 0.6,
    });
    out
}

#[test]
fn fixed_u_detailed_balance_by_enumeration() {
    let (d, s) = (4, 3);
    let (mut model, h) = lattice_gaussian(d, s, 1);
    let states = enumerate(d, s);
    let (log_pi, grads) = tabulate_ordinal(&mut model, &states);
    let k = states.len();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
    let (mut worst, mut worst_q) = (0.0f64, 0.0f64);
    for case in cases(&h, d) {
        let params =
            TrickParams::new(&case.w, &case.diag, &case.factor, case.step, case.balance).unwrap();
        let (mut scratch, mut cached) = (vec![0.0; ordinal_scratch_len(d, s)], vec![0u16; d]);
        let mut kernel = OrdinalAbSecondOrder::new(params, s, &mut scratch, &mut cached).unwrap();
        for _ in 0..2 {
            let u = normals(&mut rng, d, 1.5);
            // f[x][y] = log of π(x) N(u; Ax) Q(y|x,u) min(1, r), unnormalised in π.
            let (f, q_err) = fixed_u_log_flows(
                case.name,
                (&states, &log_pi, &grads),
                (&case.factor, &u),
                |x, gx, y, gy| kernel.transition(x, gx, y, gy, &u).unwrap(),
                |x, gx, y| {
                    log_q_reference(
                        &case.w,
                        &case.diag,
                        &case.factor,
                        (case.step, case.balance),
                        s,
                        x,
                        gx,
                        &u,
                        y,
                    )
                },
            );
            worst_q = worst_q.max(q_err);
            worst = worst.max(log_detailed_balance(case.name, &f, k));
        }
    }
    eprintln!("worst relative log Q error {worst_q:e}, detailed-balance error {worst:e}");
}

/// Invariance `πP = π` by enumeration for a fixed `u` shared by all moves, on the joint law:
/// the matrix `P_u(x, y) = Q(y|x,u) min(1, r)` (rejection mass on the diagonal) must leave the
/// weights `π(x) N(u; A x, I)` invariant.
#[test]
fn fixed_u_kernel_leaves_the_joint_invariant() {
    let (d, s) = (3, 3);
    let (mut model, h) = lattice_gaussian(d, s, 2);
    let states = enumerate(d, s);
    let (log_pi, grads) = tabulate_ordinal(&mut model, &states);
    let k = states.len();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(17);
    let mut worst = 0.0f64;
    for case in cases(&h, d) {
        let params =
            TrickParams::new(&case.w, &case.diag, &case.factor, case.step, case.balance).unwrap();
        let (mut scratch, mut cached) = (vec![0.0; ordinal_scratch_len(d, s)], vec![0u16; d]);
        let mut kernel = OrdinalAbSecondOrder::new(params, s, &mut scratch, &mut cached).unwrap();
        let u = normals(&mut rng, d, 1.0);
        let joint: Vec<f64> = states
            .iter()
            .zip(&log_pi)
            .map(|(x, lp)| lp + log_gauss(&case.factor, x, &u))
            .collect();
        let pi = normalise(&joint);
        let p = stochastic_matrix(k, |i, j| {
            let (x, y) = (&states[i], &states[j]);
            let t = kernel.transition(x, &grads[i], y, &grads[j], &u).unwrap();
            let log_r =
                log_pi[j] - log_pi[i] + t.log_gauss_ratio + t.log_q_reverse - t.log_q_forward;
            t.log_q_forward.exp() * log_r.exp().min(1.0)
        });
        worst = worst.max(assert_invariant(&pi, &p, 1e-12, true));
    }
    eprintln!("worst |πP − π| {worst:e}");
}

/// With `W = D = A = 0` the conditional is the first-order ordinal proposal.
#[test]
fn zero_quadratic_term_is_the_first_order_proposal() {
    let (d, s) = (3, 5);
    let (mut model, _) = lattice_gaussian(d, s, 3);
    let states = enumerate(d, s);
    let (_, grads) = tabulate_ordinal(&mut model, &states);
    let (zero, zd) = (vec![0.0f32; d * d], vec![0.0f32; d]);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
    let mut worst = 0.0f64;
    for (step, balance) in [(0.2, 0.5), (1.5, 0.9), (8.0, 0.3)] {
        let params = TrickParams::new(&zero, &zd, &zero, step, balance).unwrap();
        let (mut scratch, mut cached) = (vec![0.0; ordinal_scratch_len(d, s)], vec![0u16; d]);
        let mut kernel = OrdinalAbSecondOrder::new(params, s, &mut scratch, &mut cached).unwrap();
        let first = OrdinalProposal::new(step, balance).unwrap();
        let u = normals(&mut rng, d, 1.0);
        for (i, x) in states.iter().enumerate().step_by(7) {
            for (j, y) in states.iter().enumerate() {
                let t = kernel.transition(x, &grads[i], y, &grads[j], &u).unwrap();
                let f = first.log_q(x, &grads[i], s, y).unwrap();
                let r = first.log_q(y, &grads[j], s, x).unwrap();
                // Both in f64: the logits differ only by constants in v.
                let e = (t.log_q_forward - f).abs().max((t.log_q_reverse - r).abs());
                worst = worst.max(e / (1.0 + f.abs()));
                assert!(e < 1e-10 * (1.0 + f.abs()), "{} vs {f}", t.log_q_forward);
                assert_eq!(t.log_gauss_ratio, 0.0);
            }
        }
    }
    eprintln!("worst relative difference {worst:e}");
}

/// With the exact `W` of a quadratic target, `b = 1` and `a → ∞`, `Q(y | x, u)` is the exact
/// conditional of `π(y) N(u; A y, I)`: `log r = 0` up to the rounding of `W`, `A`, `g` to `f32`
/// and the `1/(2a)` remainder, for every proposal.
#[test]
fn exact_quadratic_model_accepts_every_proposal() {
    let (d, s) = (6, 8);
    let (mut model, h) = lattice_gaussian(d, s, 4);
    let (trace, _) = trace_diagonal(&h, d, &SdpOptions::with_rel_gap(1e-6)).unwrap();
    let (w32, d32) = (f32s(&h), f32s(&trace));
    let a32 = trick_factor_f32(&h, &trace, d, 1.0).unwrap();
    let params = TrickParams::new(&w32, &d32, &a32, 1e7, 1.0).unwrap();
    let (mut scratch, mut cached) = (vec![0.0; ordinal_scratch_len(d, s)], vec![0u16; d]);
    let mut kernel = OrdinalAbSecondOrder::new(params, s, &mut scratch, &mut cached).unwrap();
    let mut buf = LabelBuf::labels(&[0u16; 6], s, d);
    let mut chain = OrdinalChain::new_ordinal(buf.buffers(), &mut model).unwrap();
    assert_accepts_every_move(&mut kernel, &mut model, &mut chain);
}

fn check<T: OrdinalTarget>(name: &str, model: &mut T, case: &Case, seed: u64) {
    let (d, s) = (model.dim(), model.states());
    let (states, _, _, pi) = ordinal_law(model);
    let params =
        TrickParams::new(&case.w, &case.diag, &case.factor, case.step, case.balance).unwrap();
    let (mut scratch, mut cached) = (vec![0.0; ordinal_scratch_len(d, s)], vec![0u16; d]);
    let mut kernel = OrdinalAbSecondOrder::new(params, s, &mut scratch, &mut cached).unwrap();
    let mut buf = LabelBuf::labels(&states[0], s, d);
    let mut chain = OrdinalChain::new_ordinal(buf.buffers(), model).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    for k in [1usize, 10] {
        let counts = exact_start_counts(&pi, N, &mut rng, |x0, rng| {
            chain.reset(&states[x0], model).unwrap();
            for _ in 0..k {
                kernel.step(model, &mut chain, rng).unwrap();
            }
            index_of(chain.state(), s)
        });
        let c = compare(&counts, &pi);
        eprintln!(
            "{name}, k = {k}: chi2 {:.1} on {} df (p = {:.3}), TV {:.4} (threshold {:.4})",
            c.chi2, c.df, c.p_value, c.tv, c.tv_threshold
        );
        assert_matches(&format!("{name}, k = {k}"), &counts, &pi);
    }
}

#[test]
fn sampling_path_matches_a_lattice_gaussian() {
    let (d, s) = (3, 5);
    let (mut model, h) = lattice_gaussian(d, s, 21);
    let (trace, _) = trace_diagonal(&h, d, &SdpOptions::default()).unwrap();
    let trace_case = |step: f64, balance: f64| Case::trick("trace", &h, &trace, d, step, balance);
    check("trace, true W", &mut model, &trace_case(1.0, 0.7), 1);
    check(
        "trace, true W, large step",
        &mut model,
        &trace_case(30.0, 1.0),
        2,
    );
    // An unrelated W with an arbitrary D and A: still exact, only a worse proposal.
    let wrong = random_symmetric(d, 0.8, 23);
    let shift = shift_diagonal(&wrong, d, 0.5).unwrap();
    let wrong_case = Case::trick("wrong", &wrong, &shift, d, 0.4, 0.5);
    check("shift, wrong W", &mut model, &wrong_case, 3);
}

#[test]
fn sampling_path_matches_a_non_quadratic_model() {
    // W from nowhere: the curvature of the smooth part of `Wavy` (−κ I) plus a coupling.
    let mut model = Wavy::three(5);
    let d = 3;
    let w = vec![-0.4, 0.3, 0.0, 0.3, -0.4, 0.0, 0.0, 0.0, -0.4];
    let diag = shift_diagonal(&w, d, 1e-3).unwrap();
    let case = Case::trick("wavy", &w, &diag, d, 2.0, 0.8);
    check("wavy, shift", &mut model, &case, 4);
}

#[test]
fn bad_inputs_are_typed_errors() {
    let zero = [0.0f32; 4];
    let zd = [0.0f32; 2];
    let p = TrickParams::new(&zero, &zd, &zero, 1.0, 0.5).unwrap();
    let mut cached = vec![0u16; 2];
    let mut short = vec![0.0; ordinal_scratch_len(2, 3) - 1];
    assert!(OrdinalAbSecondOrder::new(p, 3, &mut short, &mut cached).is_err());
    let mut scratch = vec![0.0; ordinal_scratch_len(2, 1)];
    assert!(OrdinalAbSecondOrder::new(p, 1, &mut scratch, &mut cached).is_err());
    // A kernel for S = 3 refuses a chain over S = 5.
    let mut scratch = vec![0.0; ordinal_scratch_len(2, 3)];
    let mut kernel = OrdinalAbSecondOrder::new(p, 3, &mut scratch, &mut cached).unwrap();
    let mut model = Wavy {
        theta: vec![0.1, 0.2],
        s: 5,
    };
    let mut buf = LabelBuf::labels(&[4, 0], 5, 2);
    let mut chain = OrdinalChain::new_ordinal(buf.buffers(), &mut model).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
    assert!(kernel.step(&mut model, &mut chain, &mut rng).is_err());
    assert_eq!(chain.state(), &[4, 0]);
    // Out-of-range values have probability zero.
    let t = kernel
        .transition(&[0, 1], &[0.0; 2], &[3, 1], &[0.0; 2], &[0.0; 2])
        .unwrap();
    assert_eq!(t.log_q_forward, f64::NEG_INFINITY);
    assert!(
        kernel
            .transition(&[0], &[0.0; 2], &[0, 1], &[0.0; 2], &[0.0; 2])
            .is_err()
    );
}

/// `Wavy` whose log-density is NaN wherever `x_0` is at its last value.
struct Holed(Wavy);

impl OrdinalTarget for Holed {
    type Error = std::convert::Infallible;
    fn dim(&self) -> usize {
        self.0.dim()
    }
    fn states(&self) -> usize {
        self.0.states()
    }
    fn log_density_and_grad(
        &mut self,
        x: &[u16],
        grad: &mut [f32],
    ) -> Result<f64, std::convert::Infallible> {
        let u = self.0.log_density_and_grad(x, grad)?;
        Ok(if usize::from(x[0]) + 1 == self.0.s {
            f64::NAN
        } else {
            u
        })
    }
}

/// Proposals where the target is not finite are rejected and reported, the chain stays valid,
/// and every step consumes exactly `3⌈d/2⌉ + 1` words of the stream.
#[test]
fn non_finite_proposals_are_rejected_and_the_stream_is_fixed() {
    use langevin_core::binary::Rejection;
    use rand_core::Rng;
    let (d, s) = (3, 4);
    let mut model = Holed(Wavy {
        theta: vec![2.0, 0.1, -0.3],
        s,
    });
    let w = vec![-0.4, 0.3, 0.0, 0.3, -0.4, 0.0, 0.0, 0.0, -0.4];
    let diag = shift_diagonal(&w, d, 1e-3).unwrap();
    let (w32, d32) = (f32s(&w), f32s(&diag));
    let a32 = trick_factor_f32(&w, &diag, d, 1.0).unwrap();
    let params = TrickParams::new(&w32, &d32, &a32, 20.0, 1.0).unwrap();
    let (mut scratch, mut cached) = (vec![0.0; ordinal_scratch_len(d, s)], vec![0u16; d]);
    let mut kernel = OrdinalAbSecondOrder::new(params, s, &mut scratch, &mut cached).unwrap();
    let mut buf = LabelBuf::labels(&[0, 0, 0], s, d);
    let mut chain = OrdinalChain::new_ordinal(buf.buffers(), &mut model).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(31);
    let mut rejected = 0;
    for _ in 0..500 {
        let mut shadow = rng.clone();
        let r = kernel.step(&mut model, &mut chain, &mut rng).unwrap();
        for _ in 0..3 * d.div_ceil(2) + 1 {
            shadow.next_u64();
        }
        assert_eq!(
            shadow.next_u64(),
            rng.clone().next_u64(),
            "stream consumption"
        );
        if r.rejection == Some(Rejection::NonFinite) {
            rejected += 1;
            assert!(!r.accepted);
        }
        assert!(usize::from(chain.state()[0]) + 1 < s);
        assert!(chain.log_density().is_finite());
    }
    eprintln!("{rejected} non-finite proposals rejected");
    assert!(rejected > 0, "the hole was never proposed");
}
