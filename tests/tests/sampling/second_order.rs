//! Sampling-path tests of the second-order kernel: `x₀ ~ π` exactly by enumeration, `k ∈ {1, 10}`
//! steps, `n = 10⁵` repeats, pooled chi-square at `α = 1e-6` and the TV threshold
//! `½ Σ √(p_i(1−p_i)/n) + √(ln(1/α)/(2n))` (see `langevin_tests::discrete`). These exercise the actual
//! drawing of `u` and `y` and the cached products, which the enumeration tests do not.

use langevin_core::binary::BinaryChain;
use langevin_core::models::{BinaryQuadratic, ConstDims, IsingLattice};
use langevin_core::random::fill_normal;
use langevin_core::second_order::{AbSecondOrder, TrickParams, scratch_len};
use langevin_std::ab2::fit::trick_factor_f32;
use langevin_std::ab2::{Ab2Settings, DiagonalRule, shift_diagonal, trace_diagonal, tune_chain};
use langevin_std::sdp::SdpOptions;
use langevin_tests::discrete::*;
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

const N: usize = 100_000;

fn quadratic(d: usize, scale: f64, seed: u64) -> (Vec<f32>, Vec<f32>, Vec<f64>) {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut g = vec![0.0; d * d + d];
    fill_normal(&mut rng, &mut g);
    let w0: Vec<f32> = g[..d * d].iter().map(|&v| (v * scale) as f32).collect();
    let bias: Vec<f32> = g[d * d..].iter().map(|&v| v as f32).collect();
    let mut h = vec![0.0; d * d];
    for i in 0..d {
        for j in 0..d {
            h[i * d + j] = f64::from(w0[i * d + j]) + f64::from(w0[j * d + i]);
        }
    }
    (w0, bias, h)
}

fn check(name: &str, w0: &[f32], bias: &[f32], w: &[f64], diag: &[f64], ab: (f64, f64), seed: u64) {
    let d = bias.len();
    let mut cache = vec![0.0f64; 2 * d];
    let mut model = BinaryQuadratic::new(w0, bias, &mut cache).unwrap();
    let w32: Vec<f32> = w.iter().map(|&v| v as f32).collect();
    let d32: Vec<f32> = diag.iter().map(|&v| v as f32).collect();
    let a32 = if w.iter().all(|&v| v == 0.0) && diag.iter().all(|&v| v == 0.0) {
        vec![0.0; d * d]
    } else {
        trick_factor_f32(w, diag, d, ab.1).unwrap()
    };
    let params = TrickParams::new(&w32, &d32, &a32, ab.0, ab.1).unwrap();
    let (mut scratch, mut cached) = (vec![0.0; scratch_len(d)], vec![0u8; d]);
    let mut kernel = AbSecondOrder::new(params, &mut scratch, &mut cached).unwrap();
    check_binary_kernel(name, &mut model, &mut kernel, N, seed);
}

#[test]
fn trace_diagonal_true_w() {
    let d = 6;
    let (w0, bias, h) = quadratic(d, 0.6, 21);
    let (trace, _) = trace_diagonal(&h, d, &SdpOptions::default()).unwrap();
    check("trace, true W", &w0, &bias, &h, &trace, (1.0, 0.7), 1);
    check(
        "trace, true W, large step",
        &w0,
        &bias,
        &h,
        &trace,
        (30.0, 1.0),
        2,
    );
}

#[test]
fn shift_diagonal_and_wrong_w() {
    let d = 6;
    let (w0, bias, h) = quadratic(d, 0.6, 22);
    let shift = shift_diagonal(&h, d, 1e-3).unwrap();
    check("shift, true W", &w0, &bias, &h, &shift, (0.3, 0.5), 3);
    // An unrelated W: still exact, only a worse proposal.
    let (_, _, wrong) = quadratic(d, 0.8, 23);
    let wrong_shift = shift_diagonal(&wrong, d, 0.5).unwrap();
    check(
        "shift, wrong W",
        &w0,
        &bias,
        &wrong,
        &wrong_shift,
        (2.0, 0.9),
        4,
    );
}

#[test]
fn zero_w_first_order() {
    let d = 6;
    let (w0, bias, _) = quadratic(d, 0.6, 24);
    let zero = vec![0.0; d * d];
    check("W = D = 0", &w0, &bias, &zero, &vec![0.0; d], (0.5, 0.5), 5);
}

/// The whole schedule on an exactly quadratic model: the fit recovers the Hessian (residual
/// near zero), and the frozen kernel it produces passes the sampling-path test.
#[test]
fn schedule_fits_quadratic_model_and_frozen_kernel_is_exact() {
    let d = 7;
    let (w0, bias, h) = quadratic(d, 0.5, 25);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(26);
    for rule in [DiagonalRule::Trace, DiagonalRule::Shift { eps: 1e-3 }] {
        // A fresh model per run: the sampling-path check below drives the model with its own
        // chain, which would leave the model's incremental caches at another state.
        let mut cache = vec![0.0f64; 2 * d];
        let mut model = BinaryQuadratic::new(&w0, &bias, &mut cache).unwrap();
        let mut buf = BinBuf::new(&[0u8; 7]);
        let mut chain = BinaryChain::new(buf.buffers(), &mut model).unwrap();
        let mut settings = Ab2Settings::default();
        settings.diagonal = rule;
        let mut stats = Default::default();
        let (mut fitted, report) =
            tune_chain(&mut model, &mut chain, &mut rng, &settings, &mut stats).unwrap();
        eprintln!("{rule:?}: {report:?}");
        assert!(report.fallback.is_none(), "{report:?}");
        assert!(report.fit_residual.unwrap() < 1e-5, "{report:?}");
        // Off-diagonal entries are identifiable; the diagonal of a binary model is not (x² = x).
        for i in 0..d {
            for j in 0..d {
                if i != j {
                    let e = (f64::from(fitted.w[i * d + j]) - h[i * d + j]).abs();
                    assert!(e < 1e-4, "W[{i}][{j}] off by {e}");
                }
            }
        }
        let params = fitted.params(report.step, report.balance).unwrap();
        let (mut scratch, mut cached) = (vec![0.0; scratch_len(d)], vec![0u8; d]);
        let mut kernel = AbSecondOrder::new(params, &mut scratch, &mut cached).unwrap();
        check_binary_kernel(
            &format!("frozen AB-2 {rule:?}"),
            &mut model,
            &mut kernel,
            N,
            27,
        );
    }
}

/// A 3×3 periodic Ising model (not quadratic in the fitted sense along the diagonal): the
/// schedule's frozen kernel is exact.
#[test]
fn schedule_on_small_ising() {
    let mut model = IsingLattice::<ConstDims<3, 3>>::new(0.35, 0.1, true).unwrap();
    let mut buf = BinBuf::new(&[0u8; 9]);
    let mut chain = BinaryChain::new(buf.buffers(), &mut model).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(31);
    let settings = Ab2Settings::default();
    let mut stats = Default::default();
    let (mut fitted, report) =
        tune_chain(&mut model, &mut chain, &mut rng, &settings, &mut stats).unwrap();
    eprintln!("{report:?}");
    let params = fitted.params(report.step, report.balance).unwrap();
    let (mut scratch, mut cached) = (vec![0.0; scratch_len(9)], vec![0u8; 9]);
    let mut kernel = AbSecondOrder::new(params, &mut scratch, &mut cached).unwrap();
    check_binary_kernel("frozen AB-2 on Ising 3×3", &mut model, &mut kernel, N, 32);
}
