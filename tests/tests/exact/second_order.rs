//! The second-order (Gaussian integral trick) kernel, checked deterministically by enumeration.
//!
//! The kernel has a continuous auxiliary `u`, so its transition matrix is an integral over `u`.
//! For a fixed `u` it is an MH kernel on `x` for the joint law `π(x) N(u; A x, I)`; we check by
//! enumeration over all pairs `x, y` that (i) each conditional `Q(· | x, u)` is normalised and
//! matches an independent evaluation of its definition, and (ii) detailed balance
//! `π(x) N(u; Ax, I) Q(y|x,u) min(1, r) = π(y) N(u; Ay, I) Q(x|y,u) min(1, r')` holds to `1e-10`
//! relative. Together with the Gibbs update of `u` this makes `π` invariant; the sampling-path
//! tests (`second_order_sampling.rs`) check the drawing itself.

use langevin_core::BinaryTarget;
use langevin_core::binary::{BinaryChain, FlipProposal};
use langevin_core::models::BinaryQuadratic;
use langevin_core::second_order::{AbSecondOrder, TrickParams, scratch_len};
use langevin_std::ab2::fit::trick_factor_f32;
use langevin_std::ab2::trace_diagonal;
use langevin_std::sdp::SdpOptions;
use langevin_tests::discrete::*;
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// A random quadratic model `U = xᵀW₀x + bᵀx` (`W₀` asymmetric) and its Hessian `W₀ + W₀ᵀ`.
fn quadratic(d: usize, scale: f64, seed: u64) -> (Vec<f32>, Vec<f32>, Vec<f64>) {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let w0: Vec<f32> = normals(&mut rng, d * d, scale)
        .iter()
        .map(|&v| v as f32)
        .collect();
    let bias: Vec<f32> = normals(&mut rng, d, 1.0)
        .iter()
        .map(|&v| v as f32)
        .collect();
    let mut h = vec![0.0; d * d];
    for i in 0..d {
        for j in 0..d {
            h[i * d + j] = f64::from(w0[i * d + j]) + f64::from(w0[j * d + i]);
        }
    }
    (w0, bias, h)
}

struct Case {
    name: &'static str,
    w: Vec<f64>,
    diag: Vec<f64>,
    step: f64,
    balance: f64,
}

fn cases(h: &[f64], d: usize) -> Vec<Case> {
    let [trace, shift, wrong, wrong_trace] = second_order_diagonals(h, d);
    let mut out = Vec::new();
    for (step, balance) in SECOND_ORDER_STEPS {
        out.push(Case {
            name: "trace",
            w: h.to_vec(),
            diag: trace.clone(),
            step,
            balance,
        });
    }
    out.push(Case {
        name: "shift",
        w: h.to_vec(),
        diag: shift.clone(),
        step: 1.0,
        balance: 0.7,
    });
    out.push(Case {
        name: "wrong W, trace",
        w: wrong,
        diag: wrong_trace,
        step: 2.0,
        balance: 0.9,
    });
    out
}

#[test]
fn fixed_u_detailed_balance_by_enumeration() {
    let d = 5;
    let (w0, bias, h) = quadratic(d, 0.6, 1);
    let mut cache = vec![0.0f64; 2 * d];
    let mut model = BinaryQuadratic::new(&w0, &bias, &mut cache).unwrap();
    let (states, log_pi, grads) = tabulate_binary(&mut model);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
    let mut worst = 0.0f64;
    for case in cases(&h, d) {
        let w32: Vec<f32> = case.w.iter().map(|&v| v as f32).collect();
        let d32: Vec<f32> = case.diag.iter().map(|&v| v as f32).collect();
        let upper = trick_factor_f32(&case.w, &case.diag, d, case.balance).unwrap();
        // Any A gives an exact kernel; the transposed (lower-triangular) factor exercises the
        // general, non-triangular products.
        let lower: Vec<f32> = (0..d * d).map(|k| upper[(k % d) * d + k / d]).collect();
        for a32 in [upper, lower] {
            let params = TrickParams::new(&w32, &d32, &a32, case.step, case.balance).unwrap();
            let (mut scratch, mut cached) = (vec![0.0; scratch_len(d)], vec![0u8; d]);
            let mut kernel = AbSecondOrder::new(params, &mut scratch, &mut cached).unwrap();
            for _ in 0..3 {
                let u = normals(&mut rng, d, 1.5);
                // f[x][y] = log of π(x) N(u; Ax) Q(y|x,u) min(1, r), unnormalised in π.
                let (f, _) = fixed_u_log_flows(
                    case.name,
                    (&states, &log_pi, &grads),
                    (&a32, &u),
                    |x, gx, y, gy| kernel.transition(x, gx, y, gy, &u).unwrap(),
                    |x, gx, y| {
                        second_order_log_q(
                            |r, c| f64::from(w32[r * d + c]),
                            &d32,
                            &a32,
                            (case.step, case.balance),
                            x,
                            gx,
                            &u,
                            y,
                        )
                    },
                );
                let k = states.len();
                worst = worst.max(log_detailed_balance(case.name, &f, k));
            }
        }
    }
    eprintln!("worst relative detailed-balance error {worst:e}");
}

#[test]
fn zero_quadratic_term_is_the_first_order_proposal() {
    let d = 6;
    let (w0, bias, _) = quadratic(d, 0.5, 3);
    let mut cache = vec![0.0f64; 2 * d];
    let mut model = BinaryQuadratic::new(&w0, &bias, &mut cache).unwrap();
    let states = enumerate_binary(d);
    let zero = vec![0.0f32; d * d];
    let zd = vec![0.0f32; d];
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
    for (step, balance) in [(0.2, 0.5), (1.5, 0.9), (8.0, 0.3)] {
        let params = TrickParams::new(&zero, &zd, &zero, step, balance).unwrap();
        let (mut scratch, mut cached) = (vec![0.0; scratch_len(d)], vec![0u8; d]);
        let mut kernel = AbSecondOrder::new(params, &mut scratch, &mut cached).unwrap();
        let first = FlipProposal::new(step, balance).unwrap();
        let u = normals(&mut rng, d, 1.0);
        for x in &states {
            let mut gx = vec![0.0f32; d];
            model.log_density_and_grad(x, &mut gx).unwrap();
            for y in &states {
                let mut gy = vec![0.0f32; d];
                model.log_density_and_grad(y, &mut gy).unwrap();
                let t = kernel.transition(x, &gx, y, &gy, &u).unwrap();
                let f = first.log_q(x, &gx, y).unwrap();
                let r = first.log_q(y, &gy, x).unwrap();
                // FlipProposal works in f32: compare at single-precision tolerance.
                assert!(
                    (t.log_q_forward - f).abs() < 2e-5 * (1.0 + f.abs()),
                    "{} vs {f}",
                    t.log_q_forward
                );
                assert!((t.log_q_reverse - r).abs() < 2e-5 * (1.0 + r.abs()));
                assert_eq!(t.log_gauss_ratio, 0.0);
            }
        }
    }
}

/// With the exact `W` of a quadratic target, `b = 1` and `a → ∞`, the conditional
/// `Q(y | x, u)` is the exact conditional of `π(y) N(u; A y, I)`: `log r = 0` up to the rounding of
/// `A` to `f32` and the `1/(2a)` remainder, for every proposal.
#[test]
fn exact_quadratic_model_accepts_every_proposal() {
    let d = 8;
    let (w0, bias, h) = quadratic(d, 0.4, 5);
    let mut cache = vec![0.0f64; 2 * d];
    let mut model = BinaryQuadratic::new(&w0, &bias, &mut cache).unwrap();
    let (trace, _) = trace_diagonal(&h, d, &SdpOptions::with_rel_gap(1e-6)).unwrap();
    let w32: Vec<f32> = h.iter().map(|&v| v as f32).collect();
    let d32: Vec<f32> = trace.iter().map(|&v| v as f32).collect();
    let a32 = trick_factor_f32(&h, &trace, d, 1.0).unwrap();
    let params = TrickParams::new(&w32, &d32, &a32, 1e7, 1.0).unwrap();
    let (mut scratch, mut cached) = (vec![0.0; scratch_len(d)], vec![0u8; d]);
    let mut kernel = AbSecondOrder::new(params, &mut scratch, &mut cached).unwrap();
    let mut buf = BinBuf::new(&[0u8; 8]);
    let mut chain = BinaryChain::new(buf.buffers(), &mut model).unwrap();
    assert_accepts_every_move(&mut kernel, &mut model, &mut chain);
}

#[test]
fn bad_parameters_are_typed_errors() {
    let zero = [0.0f32; 4];
    let zd = [0.0f32; 2];
    assert!(TrickParams::new(&zero, &zd, &zero, 0.0, 0.5).is_err());
    assert!(TrickParams::new(&zero, &zd, &zero, 1.0, 1.5).is_err());
    assert!(TrickParams::new(&zero[..3], &zd, &zero, 1.0, 0.5).is_err());
    assert!(TrickParams::new(&zero, &zd, &[0.0, f32::NAN, 0.0, 0.0], 1.0, 0.5).is_err());
    assert!(TrickParams::new(&[0.0, 1.0, 2.0, 0.0], &zd, &zero, 1.0, 0.5).is_err());
    assert!(TrickParams::new(&[], &[], &[], 1.0, 0.5).is_err());
    let p = TrickParams::new(&zero, &zd, &zero, 1.0, 0.5).unwrap();
    let (mut s, mut c) = (vec![0.0; scratch_len(2) - 1], vec![0u8; 2]);
    assert!(AbSecondOrder::new(p, &mut s, &mut c).is_err());
}
