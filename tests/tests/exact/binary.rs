//! Exactness of the binary kernels by enumeration: the full transition matrix of DMALA is built
//! from the kernel's own `log q` and `U` on models with `d ≤ 10`, and detailed balance and
//! `πP = π` are checked to tolerances derived from the floating-point error of the construction
//! (see `check_metropolis_exactness`). DULA's matrix is checked against its closed-form stationary
//! law on log-quadratic targets (Zhang, Liu & Liu 2022, Theorem 5.1).

use langevin_core::BinaryTarget;
use langevin_core::binary::FlipProposal;
use langevin_core::math::Libm;
use langevin_core::models::{Bf16, BinaryQuadratic, Dims, IsingLattice, Rbm};
use langevin_tests::{
    Correction, Enumeration, GraphData, QuadraticData, RbmData, Transition, UNIT_ROUNDOFF_F64,
    check_metropolis_exactness, drop_proposal_ratio, enumerate, log_q_reference, log_q_tolerance,
    proposal_mass_tolerance, sigmoid, softplus, state, stationarity_residual, stationary,
    transition_matrix,
};
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// `(step a, balance b)` pairs: tiny to astronomically large steps, balances across `(0, 1]`.
const CONFIGS: [(f64, f64); 8] = [
    (0.05, 0.5),
    (0.2, 0.5),
    (0.6, 0.5),
    (2.0, 0.5),
    (0.4, 0.25),
    (1.0, 1.0),
    (1e6, 0.5),
    (1e30, 0.75),
];

/// Builds the DMALA matrix and asserts detailed balance, `πP = π`, unit row sums, and that the
/// proposal rows are distributions matching the balanced proposal.
fn assert_dmala_exact(label: &str, e: &Enumeration, proposal: &FlipProposal<'_>) {
    let t = transition_matrix(e, proposal, Correction::Metropolis);
    let c = check_metropolis_exactness(e, &t);
    let (a, b) = (proposal.step(), proposal.balance());
    assert!(
        c.balance <= 1.0 && c.invariance <= 1.0 && c.rows <= 1.0,
        "{label} a={a} b={b}: detailed balance {:.3}, invariance {:.3}, rows {:.3} \
         (multiples of tolerance; max relative balance tolerance {:.2e})",
        c.balance,
        c.invariance,
        c.rows,
        c.max_balance_tol
    );
    assert_proposal_rows(label, e, &t, proposal);
}

/// Every row of the proposal sums to one within the `f32` bound, and `log q` matches the `f64`
/// closed-form proposal on every 31st row.
fn assert_proposal_rows(label: &str, e: &Enumeration, t: &Transition, proposal: &FlipProposal<'_>) {
    let (a, b, p) = (
        proposal.step(),
        proposal.balance(),
        proposal.preconditioner(),
    );
    let d = e.dim;
    for x in 0..e.states() {
        let tol = proposal_mass_tolerance(t, x, d);
        let err = (t.proposal_mass[x] - 1.0).abs();
        assert!(
            err <= tol,
            "{label} a={a} b={b} row {x}: mass error {err:.3e} > {tol:.3e}"
        );
    }
    for x in (0..e.states()).step_by(31) {
        let sx = state(x, d);
        for y in 0..e.states() {
            let sy = state(y, d);
            let lq = t.log_q_at(x, y);
            let r = log_q_reference(&sx, &e.grad[x], &sy, a, b, p);
            let tol = log_q_tolerance(&sx, &e.grad[x], a, b, p, lq);
            assert!(
                (lq - r).abs() <= tol,
                "{label} a={a} b={b}: log q({y}|{x}) = {lq} vs formula {r} (tol {tol:.2e})"
            );
        }
    }
}

#[test]
fn dmala_is_exact_on_random_binary_quadratic() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(101);
    let data = QuadraticData::random(10, 0.35, 1.0, &mut rng);
    let mut cache = data.cache();
    let mut model = BinaryQuadratic::new(&data.w, &data.b, &mut cache).unwrap();
    let e = enumerate(&mut model);
    for (a, b) in CONFIGS {
        assert_dmala_exact("quadratic d=10", &e, &FlipProposal::new(a, b).unwrap());
    }
}

#[test]
fn dmala_is_exact_on_random_graph_ising() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(202);
    let data = GraphData::random(9, 0.4, 0.7, 0.5, &mut rng);
    let e = enumerate(&mut data.model());
    for (a, b) in CONFIGS {
        assert_dmala_exact("graph Ising d=9", &e, &FlipProposal::new(a, b).unwrap());
    }
}

#[test]
fn dmala_is_exact_on_tiny_rbm() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(303);
    let data = RbmData::random(8, 4, 1.0, 0.5, 0.5, &mut rng);
    let mut cache = data.cache();
    let mut model = Rbm::new(&data.w, &data.b, &data.c, &mut cache).unwrap();
    let e = enumerate(&mut model);
    for (a, b) in CONFIGS {
        assert_dmala_exact("RBM 8x4", &e, &FlipProposal::new(a, b).unwrap());
    }
}

/// An RBM over `bf16` weights is the RBM whose weights are the rounded ones: its `U` is that
/// closed form (in `f64`, to the `f32` rounding of the hidden terms: `2⁻²³` relative per term
/// plus the `f64` sums), measurably not the unrounded model's, and DMALA on it is exact
/// (detailed balance and `πP = π` on the enumerated chain).
#[test]
fn dmala_is_exact_on_tiny_rbm_with_bf16_weights() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(304);
    let data = RbmData::random(8, 4, 1.0, 0.5, 0.5, &mut rng);
    let w16: Vec<Bf16> = data.w.iter().map(|&x| Bf16::from_f32(x)).collect();
    let rounded: Vec<f64> = w16.iter().map(|x| f64::from(x.to_f32())).collect();
    let unrounded: Vec<f64> = data.w.iter().map(|&x| f64::from(x)).collect();
    let mut cache = data.cache();
    let mut model = Rbm::<Libm, Bf16>::from_weights(&w16, &data.b, &data.c, &mut cache).unwrap();
    let e = enumerate(&mut model);
    let (v, h) = (data.b.len(), data.c.len());
    let closed_form = |w: &[f64], x: &[u8]| -> (f64, f64) {
        let mut u: f64 = x
            .iter()
            .zip(&data.b)
            .map(|(&xi, &bi)| f64::from(xi) * f64::from(bi))
            .sum();
        let mut scale = u.abs();
        for j in 0..h {
            let p: f64 =
                f64::from(data.c[j]) + (0..v).map(|i| w[j * v + i] * f64::from(x[i])).sum::<f64>();
            u += softplus(p);
            scale += softplus(p).abs();
        }
        (u, scale)
    };
    let mut farthest_from_unrounded = 0.0f64;
    for s in 0..e.states() {
        let x = state(s, v);
        let (u, scale) = closed_form(&rounded, &x);
        // Each hidden term is rounded to f32 (half an ulp, 2^-24 relative) after an f32
        // softplus within a few ulps: 8·2^-24 relative to the sum of the terms' sizes.
        let tol = 8.0 * scale * 2f64.powi(-24) + 64.0 * UNIT_ROUNDOFF_F64 * scale;
        assert!(
            (e.log_density[s] - u).abs() <= tol,
            "state {s}: U = {} vs the rounded model's {u} (tol {tol:.2e})",
            e.log_density[s]
        );
        let (u0, _) = closed_form(&unrounded, &x);
        farthest_from_unrounded = farthest_from_unrounded.max((e.log_density[s] - u0).abs() / tol);
    }
    // The rounding moves U by far more than the tolerance: the test sees which model it has.
    assert!(farthest_from_unrounded > 10.0, "{farthest_from_unrounded}");
    for (a, b) in CONFIGS {
        assert_dmala_exact("RBM 8x4 bf16", &e, &FlipProposal::new(a, b).unwrap());
    }
}

#[test]
fn dmala_is_exact_on_lattices() {
    for (rows, cols, periodic) in [(3, 3, true), (2, 4, true), (1, 3, true), (3, 3, false)] {
        let dims = Dims { rows, cols };
        let mut model = IsingLattice::with_dims(dims, 0.4, -0.15, periodic).unwrap();
        let e = enumerate(&mut model);
        for (a, b) in [(0.3, 0.5), (1e6, 0.5), (0.8, 0.9)] {
            let label = format!("lattice {rows}x{cols} periodic={periodic}");
            assert_dmala_exact(&label, &e, &FlipProposal::new(a, b).unwrap());
        }
    }
}

#[test]
fn dmala_is_exact_with_preconditioner() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(404);
    let data = QuadraticData::random(8, 0.5, 1.0, &mut rng);
    let precond: Vec<f32> = [0.3, 0.5, 0.8, 1.0, 1.2, 1.7, 2.5, 4.0].to_vec();
    let mut cache = data.cache();
    let mut model = BinaryQuadratic::new(&data.w, &data.b, &mut cache).unwrap();
    let e = enumerate(&mut model);
    for (a, b) in [(0.2, 0.5), (1.0, 0.5), (0.5, 1.0), (1e6, 0.3)] {
        let p = FlipProposal::new(a, b)
            .unwrap()
            .preconditioned(&precond)
            .unwrap();
        assert_dmala_exact("preconditioned quadratic d=8", &e, &p);
    }
}

/// The exactness check has power: dropping the proposal ratio from the acceptance (accepting
/// with `min(1, π_y/π_x)`, a common bug) breaks detailed balance by orders of magnitude more
/// than the tolerance.
#[test]
fn exactness_check_rejects_a_missing_proposal_ratio() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(505);
    let data = GraphData::random(6, 0.5, 0.7, 0.5, &mut rng);
    let e = enumerate(&mut data.model());
    let proposal = FlipProposal::new(0.6, 0.5).unwrap();
    let mut t = transition_matrix(&e, &proposal, Correction::Metropolis);
    drop_proposal_ratio(&e, &mut t);
    let c = check_metropolis_exactness(&e, &t);
    assert!(
        c.balance > 1e6 && c.invariance > 1e6,
        "broken kernel not detected: {c:?}"
    );
}

/// An exact `f64` model: `x ↦ (U(x), ∇U(x))`.
type Reference<'a> = dyn Fn(&[u8]) -> (f64, Vec<f64>) + 'a;

/// `ln π̃_a(x)` up to a constant: `U(x) + Σ_i softplus(l_i(x))` with
/// `l_i = ½ g_i (1 − 2x_i) − 1/(2a)` from the exact `f64` gradient `reference` gives.
fn closed_form_log_weights(e: &Enumeration, reference: &Reference<'_>, a: f64) -> Vec<f64> {
    let d = e.dim;
    (0..e.states())
        .map(|k| {
            let x = state(k, d);
            let (u, g) = reference(&x);
            u + (0..d)
                .map(|i| {
                    let l = 0.5 * g[i] * (1.0 - 2.0 * f64::from(x[i])) - 0.5 / a;
                    softplus(l)
                })
                .sum::<f64>()
        })
        .collect()
}

/// Worst detailed-balance violation of the matrix `t` with respect to `exp(log_w)`, compared in
/// logs: `|(w_x + lq_xy) − (w_y + lq_yx)|`, both as an absolute value and as a multiple of the
/// tolerance `E_x + E_y + 8ε(|w_x| + |w_y| + |lhs| + |rhs|)`, `E_x` the `f32` error bound of the
/// row's `log q` ([`log_q_tolerance`]).
fn closed_form_violation(
    e: &Enumeration,
    t: &Transition,
    log_w: &[f64],
    a: f64,
    b: f64,
) -> (f64, f64) {
    let d = e.dim;
    let tols: Vec<f64> = (0..e.states())
        .map(|x| {
            let worst = (0..e.states())
                .map(|y| t.log_q_at(x, y).abs())
                .fold(0.0, f64::max);
            log_q_tolerance(&state(x, d), &e.grad[x], a, b, None, worst)
        })
        .collect();
    let (mut ratio, mut abs) = (0.0f64, 0.0f64);
    for x in 0..e.states() {
        for y in (x + 1)..e.states() {
            let lhs = log_w[x] + t.log_q_at(x, y);
            let rhs = log_w[y] + t.log_q_at(y, x);
            let tol = tols[x]
                + tols[y]
                + 8.0 * f64::EPSILON * (log_w[x].abs() + log_w[y].abs() + lhs.abs() + rhs.abs());
            abs = abs.max((lhs - rhs).abs());
            ratio = ratio.max((lhs - rhs).abs() / tol);
        }
    }
    (ratio, abs)
}

/// DULA (balance ½) on a log-quadratic target is reversible with respect to
/// `π_a(x) ∝ exp(U(x)) Π_i (1 + e^{l_i(x)})` (Zhang, Liu & Liu 2022, Theorem 5.1; the proposal's normaliser
/// times `π`). Checked on the kernel's matrix to the `f32` tolerance of its `log q`; then the
/// numerically solved stationary vector is checked to satisfy `π_a P = π_a`.
#[test]
fn dula_is_reversible_with_respect_to_its_closed_form_law() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(606);
    let graph = GraphData::random(8, 0.45, 0.6, 0.4, &mut rng);
    let quad = QuadraticData::random(8, 0.4, 1.0, &mut rng);
    let mut cache = quad.cache();
    let mut qmodel = BinaryQuadratic::new(&quad.w, &quad.b, &mut cache).unwrap();
    let eg = enumerate(&mut graph.model());
    let eq = enumerate(&mut qmodel);
    let graph_ref = |x: &[u8]| graph.reference(x);
    let quad_ref = |x: &[u8]| quad.reference(x);
    let cases: [(&str, &Enumeration, &Reference<'_>); 2] = [
        ("graph Ising d=8", &eg, &graph_ref),
        ("quadratic d=8", &eq, &quad_ref),
    ];
    for (label, e, reference) in cases {
        for a in [0.1, 0.3, 1.0, 3.0] {
            let proposal = FlipProposal::new(a, 0.5).unwrap();
            let t = transition_matrix(e, &proposal, Correction::Unadjusted);
            let log_w = closed_form_log_weights(e, reference, a);
            let (worst, _) = closed_form_violation(e, &t, &log_w, a, 0.5);
            assert!(
                worst <= 1.0,
                "{label} a={a}: DULA detailed balance off by {worst:.3} tol"
            );
            let pi_a = stationary(&t);
            let res = stationarity_residual(&t, &pi_a);
            assert!(res < 1e-12, "{label} a={a}: stationary residual {res:.2e}");
        }
    }
}

/// The closed form above is not a tautology: DULA with balance ≠ ½ is not reversible with
/// respect to it, and the check sees that.
#[test]
fn dula_closed_form_check_has_power() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(707);
    let graph = GraphData::random(6, 0.6, 0.6, 0.4, &mut rng);
    let e = enumerate(&mut graph.model());
    let a = 0.5;
    let t = transition_matrix(
        &e,
        &FlipProposal::new(a, 0.9).unwrap(),
        Correction::Unadjusted,
    );
    let log_w = closed_form_log_weights(&e, &|x| graph.reference(x), a);
    let (ratio, abs) = closed_form_violation(&e, &t, &log_w, a, 0.9);
    assert!(
        ratio > 1e3 && abs > 0.1,
        "balance 0.9 looked reversible: {ratio}, {abs}"
    );
}

/// The realised flip probability of a coordinate is within `f32` rounding of `exp(log q)`
/// (checked through `log q` of single-coordinate moves against the logistic function).
#[test]
fn single_flip_probabilities_are_logistic() {
    let d = 3;
    let x = [0u8, 1, 0];
    let g = [1.5f32, -0.75, 0.0];
    for (a, b) in CONFIGS {
        let p = FlipProposal::new(a, b).unwrap();
        for i in 0..d {
            let mut y = x;
            y[i] ^= 1;
            let stay_others: f64 = (0..d)
                .filter(|&j| j != i)
                .map(|j| {
                    let l = b * f64::from(g[j]) * (1.0 - 2.0 * f64::from(x[j])) - 0.5 / a;
                    1.0 - sigmoid(l)
                })
                .product();
            let l = b * f64::from(g[i]) * (1.0 - 2.0 * f64::from(x[i])) - 0.5 / a;
            let want = sigmoid(l) * stay_others;
            let got = p.log_q(&x, &g, &y).unwrap().exp();
            // A log error of at most `tol` is a relative error of `e^tol − 1 < 1.01·tol` here.
            let tol = log_q_tolerance(&x, &g, a, b, None, got.ln()) * 1.01;
            assert!(
                (got - want).abs() <= tol * want.max(f64::MIN_POSITIVE),
                "a={a} b={b} i={i}: {got} vs {want}"
            );
        }
    }
}

/// Sanity of the enumeration itself: `π` sums to one and matches the model's `U`.
#[test]
fn enumeration_is_normalised() {
    let mut model = IsingLattice::with_dims(Dims { rows: 2, cols: 3 }, 0.2, 0.1, true).unwrap();
    let e = enumerate(&mut model);
    let total: f64 = e.pi.iter().sum();
    assert!((total - 1.0).abs() < 64.0 * UNIT_ROUNDOFF_F64);
    let mut g = vec![0.0; 6];
    for k in 0..e.states() {
        let u = model.log_density_and_grad(&state(k, 6), &mut g).unwrap();
        assert_eq!(u, e.log_density[k]);
    }
}
