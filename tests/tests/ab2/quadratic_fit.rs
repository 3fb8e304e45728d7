//! The symmetric least-squares fit of `W`, the variance-based diagonal, and the factor of the
//! Gaussian integral trick. All checks are exact up to stated floating-point tolerances.

use langevin_std::ab2::fit::{
    FitError, FitOptions, diagonal_from_variances, fit_symmetric, trick_factor, trick_factor_f32,
    variances,
};
use langevin_std::sdp::{SdpOptions, SymmetricMatrix, solve_diagonal_sdp};
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

fn normals(rng: &mut Xoshiro256PlusPlus, len: usize) -> Vec<f64> {
    let mut v = vec![0.0; len];
    langevin_core::random::fill_normal(rng, &mut v);
    v
}

fn random_symmetric(rng: &mut Xoshiro256PlusPlus, n: usize) -> Vec<f64> {
    let g = normals(rng, n * n);
    let mut w = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            w[i * n + j] = 0.5 * (g[i * n + j] + g[j * n + i]);
        }
    }
    w
}

/// `Δg_n = W Δx_n` for the gradient of `U(x) = ½ xᵀ W x + bᵀ x` (the linear term cancels).
fn gradient_differences(w: &[f64], dx: &[f64], n: usize) -> Vec<f64> {
    let mut dg = vec![0.0; dx.len()];
    for (x, g) in dx.chunks_exact(n).zip(dg.chunks_exact_mut(n)) {
        for i in 0..n {
            g[i] = (0..n).map(|j| w[i * n + j] * x[j]).sum();
        }
    }
    dg
}

fn max_abs_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).fold(0.0, |m, (x, y)| m.max((x - y).abs()))
}

#[test]
fn recovers_a_quadratic_exactly() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
    // The closed form goes through the eigenvalues of MᵀM, so its error grows with
    // cond(M)²: the designs are kept well conditioned (coordinate moves with a small random
    // tilt when pairs = n, twice or more as many random pairs as unknown columns otherwise).
    for (n, pairs) in [(1, 1), (5, 5), (10, 20), (30, 90)] {
        let w = random_symmetric(&mut rng, n);
        let mut dx = normals(&mut rng, pairs * n);
        if pairs == n {
            for (i, row) in dx.chunks_exact_mut(n).enumerate() {
                row.iter_mut().for_each(|x| *x *= 0.1);
                row[i] += 1.0;
            }
        }
        let dg = gradient_differences(&w, &dx, n);
        let fit = fit_symmetric(&dx, &dg, n, &FitOptions::default()).unwrap();
        assert_eq!(fit.explored, n);
        // Conditioning of random Gaussian designs keeps the error near rounding.
        let err = max_abs_diff(&fit.w, &w);
        assert!(err < 1e-9, "n = {n}: error {err}");
        assert!(fit.residual < 1e-10, "n = {n}: residual {}", fit.residual);
        for i in 0..n {
            for j in 0..n {
                assert_eq!(fit.w[i * n + j], fit.w[j * n + i], "exactly symmetric");
            }
        }
    }
}

#[test]
fn noisy_pairs_give_the_least_squares_solution() {
    // With noise the fit is no longer W, but it must beat W (and any perturbation of the fit)
    // on the objective, being its minimiser over symmetric matrices.
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(8);
    let (n, pairs) = (6, 40);
    let w = random_symmetric(&mut rng, n);
    let dx = normals(&mut rng, pairs * n);
    let mut dg = gradient_differences(&w, &dx, n);
    let noise = normals(&mut rng, dg.len());
    dg.iter_mut().zip(&noise).for_each(|(g, e)| *g += 0.1 * e);
    let fit = fit_symmetric(&dx, &dg, n, &FitOptions::default()).unwrap();
    let objective = |m: &[f64]| -> f64 {
        let pred = gradient_differences(m, &dx, n);
        pred.iter().zip(&dg).map(|(p, g)| (p - g) * (p - g)).sum()
    };
    let best = objective(&fit.w);
    assert!(best < objective(&w));
    let gnorm: f64 = dg.iter().map(|g| g * g).sum::<f64>().sqrt();
    assert!((fit.residual - best.sqrt() / gnorm).abs() < 1e-12);
    for trial in 0..20 {
        let mut e = random_symmetric(&mut rng, n);
        e.iter_mut().for_each(|x| *x *= 1e-3 * (1 + trial) as f64);
        let perturbed: Vec<f64> = fit.w.iter().zip(&e).map(|(a, b)| a + b).collect();
        assert!(objective(&perturbed) >= best * (1.0 - 1e-12));
    }
}

#[test]
fn unexplored_directions_get_zero_not_nan() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(4);
    let (n, moved, pairs) = (8, 3, 20);
    let w = random_symmetric(&mut rng, n);
    // Only the first `moved` coordinates ever change.
    let mut dx = normals(&mut rng, pairs * n);
    for row in dx.chunks_exact_mut(n) {
        row[moved..].iter_mut().for_each(|x| *x = 0.0);
    }
    let dg = gradient_differences(&w, &dx, n);
    let fit = fit_symmetric(&dx, &dg, n, &FitOptions::default()).unwrap();
    assert_eq!(fit.explored, moved);
    assert!(fit.w.iter().all(|x| x.is_finite()));
    for i in 0..n {
        for j in 0..n {
            let got = fit.w[i * n + j];
            if i < moved || j < moved {
                // The gradients reveal every column W e_j with j explored.
                assert!((got - w[i * n + j]).abs() < 1e-8, "({i}, {j})");
            } else {
                assert!(got.abs() < 1e-12, "unexplored pair ({i}, {j}) = {got}");
            }
        }
    }
    assert!(fit.residual < 1e-10);
}

#[test]
fn degenerate_inputs_give_typed_errors() {
    let o = FitOptions::default();
    assert_eq!(fit_symmetric(&[], &[], 3, &o), Err(FitError::Empty));
    assert_eq!(fit_symmetric(&[1.0], &[1.0], 0, &o), Err(FitError::Empty));
    assert!(matches!(
        fit_symmetric(&[1.0; 5], &[1.0; 5], 2, &o),
        Err(FitError::Length { buffer: "dx", .. })
    ));
    assert!(matches!(
        fit_symmetric(&[1.0; 4], &[1.0; 6], 2, &o),
        Err(FitError::Length {
            buffer: "dg",
            expected: 4,
            found: 6
        })
    ));
    assert_eq!(
        fit_symmetric(&[1.0, f64::NAN], &[1.0, 2.0], 2, &o),
        Err(FitError::NonFinite {
            buffer: "dx",
            index: 1
        })
    );
    assert_eq!(
        fit_symmetric(&[1.0, 2.0], &[f64::INFINITY, 2.0], 2, &o),
        Err(FitError::NonFinite {
            buffer: "dg",
            index: 0
        })
    );
    assert_eq!(
        fit_symmetric(&[0.0; 6], &[1.0; 6], 3, &o),
        Err(FitError::NoMovement)
    );
    let mut bad = FitOptions::default();
    bad.ridge = 0.0;
    assert_eq!(
        fit_symmetric(&[1.0], &[1.0], 1, &bad),
        Err(FitError::InvalidOption("ridge"))
    );
}

#[test]
fn variance_diagonal_is_concave() {
    // Two coordinates: constant, and alternating ±1 (unbiased variance 4/3 over 4 samples).
    let samples = [5.0, 1.0, 5.0, -1.0, 5.0, 1.0, 5.0, -1.0];
    let var = variances(&samples, 2).unwrap();
    assert_eq!(var[0], 0.0);
    assert!((var[1] - 4.0 / 3.0).abs() < 1e-15);
    let w = diagonal_from_variances(&var).unwrap();
    assert_eq!(w[0], -1.0);
    assert!((w[1] + 1.0 / (1.0 + 4.0 / 3.0)).abs() < 1e-15);
    assert_eq!(
        diagonal_from_variances(&[1.0, -0.5]),
        Err(FitError::BadVariance(1))
    );
    assert_eq!(
        diagonal_from_variances(&[f64::NAN]),
        Err(FitError::BadVariance(0))
    );
    assert!(matches!(
        variances(&[1.0; 5], 2),
        Err(FitError::Length { .. })
    ));
}

#[test]
fn trick_factor_of_the_sdp_diagonal() {
    // W from a fit, D from the SDP: A with AᵀA = b (W + D) (+ the documented jitter).
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(21);
    let n = 12;
    let w = random_symmetric(&mut rng, n);
    let sdp = solve_diagonal_sdp(
        &SymmetricMatrix::from_row_major(n, n, &w).unwrap(),
        &SdpOptions::with_rel_gap(1e-6),
    )
    .unwrap();
    let b = 0.7;
    let a = trick_factor(&w, &sdp.d, n, b).unwrap();
    let scale = (0..n).fold(0.0f64, |m, i| m.max(b * (w[i * n + i] + sdp.d[i]).abs()));
    for i in 0..n {
        for j in 0..n {
            if j < i {
                assert_eq!(a[i * n + j], 0.0, "upper triangular");
            }
            let ata: f64 = (0..n).map(|k| a[k * n + i] * a[k * n + j]).sum();
            let target = b * (w[i * n + j] + if i == j { sdp.d[i] } else { 0.0 });
            assert!(
                (ata - target).abs() <= 1e-10 * scale,
                "({i}, {j}): {ata} vs {target}"
            );
        }
    }
    let a32 = trick_factor_f32(&w, &sdp.d, n, b).unwrap();
    assert!(a.iter().zip(&a32).all(|(x, y)| (*x as f32) == *y));
    // Without D the matrix is indefinite.
    assert_eq!(
        trick_factor(&w, &vec![0.0; n], n, b),
        Err(FitError::NotPositiveSemidefinite)
    );
    assert!(matches!(
        trick_factor(&w, &sdp.d, n, 0.0),
        Err(FitError::InvalidOption("b"))
    ));
    assert!(matches!(
        trick_factor(&w[1..], &sdp.d, n, b),
        Err(FitError::Length { buffer: "w", .. })
    ));
}
