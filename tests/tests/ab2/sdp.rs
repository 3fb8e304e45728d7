//! SDP-lite: the reference cases, the exact special cases, the typed errors, and a cross-check
//! against an independent log-barrier Newton solver on small problems.
//!
//! Every check here is deterministic (fixed seeds, no statistics). Feasibility is verified by
//! an independent plain Cholesky factorisation written in this file (and, for the nearly-PSD
//! inputs, by nalgebra's symmetric eigenvalues), never by the solver's own certificate.

use std::path::PathBuf;

use langevin_std::io::npy::read_matrix_f64;
use langevin_std::sdp::{SdpError, SdpOptions, SdpSolution, SymmetricMatrix, solve_diagonal_sdp};
use langevin_tests::solve_dense;
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// The feasibility tolerance of the solver's contract, relative to `max |W_ij|`.
const FEAS_TOL: f64 = 1e-9;

fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/sdp")
}

/// True when `a` (row-major, symmetric) admits a Cholesky factorisation: `a ≻ 0` up to the
/// rounding of the factorisation.
fn cholesky_ok(n: usize, a: &[f64]) -> bool {
    cholesky(n, a).is_some()
}

/// The lower Cholesky factor `L` of `a` (row-major, symmetric, `a = L Lᵀ`); `None` if `a` is
/// not positive definite up to the rounding of the factorisation.
fn cholesky(n: usize, a: &[f64]) -> Option<Vec<f64>> {
    let mut l = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..=i {
            let mut s = a[i * n + j];
            for k in 0..j {
                s -= l[i * n + k] * l[j * n + k];
            }
            if i == j {
                if s.is_nan() || s <= 0.0 {
                    return None;
                }
                l[i * n + i] = s.sqrt();
            } else {
                l[i * n + j] = s / l[j * n + j];
            }
        }
    }
    Some(l)
}

/// The solution's bounds bracket the barrier optimum `reference` (within 2nμ_final + rounding),
/// and its trace is within `gap` of it.
fn assert_brackets(trial: usize, sol: &SdpSolution, reference: f64, gap: f64) {
    let slack = 1e-9 * reference.abs().max(1.0);
    assert!(
        sol.lower_bound <= reference + slack,
        "trial {trial}: lower bound {} above the barrier optimum {reference}",
        sol.lower_bound
    );
    assert!(
        sol.trace >= reference - slack,
        "trial {trial}: feasible trace {} below the optimum {reference}",
        sol.trace
    );
    assert!(
        sol.trace - reference <= gap * sol.trace + slack,
        "trial {trial}: trace {} not within {gap} of {reference}",
        sol.trace
    );
}

/// Checks `d ≥ 0`, `trace = Σ d`, and `W + diag(d) + FEAS_TOL·max|W|·I ≻ 0`.
fn assert_feasible(n: usize, w: &[f64], sol: &SdpSolution) {
    assert_eq!(sol.d.len(), n);
    assert!(
        sol.d.iter().all(|&x| x >= 0.0 && x.is_finite()),
        "d must be ≥ 0"
    );
    let sum: f64 = sol.d.iter().sum();
    assert!((sum - sol.trace).abs() <= 1e-12 * sum.abs().max(1.0));
    let scale = w.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let mut a = w.to_vec();
    for i in 0..n {
        a[i * n + i] += sol.d[i] + FEAS_TOL * scale;
    }
    assert!(
        cholesky_ok(n, &a),
        "W + diag(d) is not PSD to the tolerance"
    );
}

struct Case {
    name: String,
    n: usize,
    w: Vec<f64>,
    optimal: f64,
    lower: f64,
}

/// The stored case called `name`.
fn case(name: &str) -> Case {
    cases().into_iter().find(|c| c.name == name).unwrap()
}

fn cases() -> Vec<Case> {
    let index = std::fs::read_to_string(data_dir().join("index.json")).expect("index.json");
    let index: serde_json::Value = serde_json::from_str(&index).expect("valid JSON");
    index
        .as_array()
        .expect("a list of cases")
        .iter()
        .map(|c| {
            let file = c["files"]["W"].as_str().expect("W file");
            let (rows, cols, w) = read_matrix_f64(data_dir().join(file)).expect("W.npy");
            assert_eq!(rows, cols);
            assert_eq!(rows as u64, c["dim"].as_u64().expect("dim"));
            Case {
                name: c["name"].as_str().expect("name").to_owned(),
                n: rows,
                w,
                optimal: c["optimal_trace"].as_f64().expect("optimal_trace"),
                lower: c["lower_bound"].as_f64().expect("lower_bound"),
            }
        })
        .collect()
}

fn check_case(case: &Case, rel_gap: f64) -> SdpSolution {
    let w = SymmetricMatrix::from_row_major(case.n, case.n, &case.w).expect("valid W");
    let sol = solve_diagonal_sdp(&w, &SdpOptions::with_rel_gap(rel_gap)).expect("solves");
    let name = &case.name;
    assert!(sol.converged, "{name}: not converged (gap {})", sol.rel_gap);
    assert!(
        sol.rel_gap <= rel_gap,
        "{name}: gap {} > {rel_gap}",
        sol.rel_gap
    );
    // The certificate is honest: our bounds bracket the reference optimum.
    assert!(
        sol.lower_bound <= case.optimal * (1.0 + 1e-9),
        "{name}: lower bound {} above the optimum {}",
        sol.lower_bound,
        case.optimal
    );
    assert!(
        sol.trace >= case.lower * (1.0 - 1e-9),
        "{name}: feasible trace {} below the reference lower bound {}",
        sol.trace,
        case.lower
    );
    // And the answer is as good as requested.
    assert!(
        sol.trace - case.optimal <= rel_gap * case.optimal,
        "{name}: trace {} is not within {rel_gap} of {}",
        sol.trace,
        case.optimal
    );
    assert!(
        ((sol.trace - sol.lower_bound) / sol.trace - sol.rel_gap).abs() <= 1e-12,
        "{name}: rel_gap does not match the bounds"
    );
    assert_feasible(case.n, &case.w, &sol);
    sol
}

#[test]
fn reference_cases_at_default_gap() {
    for case in cases() {
        check_case(&case, 1e-3);
    }
}

#[test]
fn reference_cases_at_tight_gap() {
    for case in cases().iter().filter(|c| c.n <= 400) {
        check_case(case, 1e-6);
    }
}

#[test]
fn zero_matrix_gives_zero() {
    let w = SymmetricMatrix::from_row_major(5, 5, &[0.0; 25]).unwrap();
    let sol = solve_diagonal_sdp(&w, &SdpOptions::default()).unwrap();
    assert_eq!(sol.d, vec![0.0; 5]);
    assert_eq!((sol.trace, sol.lower_bound, sol.rel_gap), (0.0, 0.0, 0.0));
}

fn random_matrix(rng: &mut Xoshiro256PlusPlus, rows: usize, cols: usize) -> Vec<f64> {
    let mut m = vec![0.0; rows * cols];
    langevin_core::random::fill_normal(rng, &mut m);
    m
}

#[test]
fn positive_semidefinite_gives_zero() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
    for (n, rank) in [(6, 6), (30, 5), (50, 50)] {
        // W = B Bᵀ, singular when rank < n.
        let b = random_matrix(&mut rng, n, rank);
        let mut w = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                w[i * n + j] = (0..rank).map(|k| b[i * rank + k] * b[j * rank + k]).sum();
            }
        }
        // Exact symmetry for the validator.
        for i in 0..n {
            for j in 0..i {
                w[i * n + j] = w[j * n + i];
            }
        }
        let m = SymmetricMatrix::from_row_major(n, n, &w).unwrap();
        let sol = solve_diagonal_sdp(&m, &SdpOptions::default()).unwrap();
        assert_eq!(sol.d, vec![0.0; n], "n = {n}, rank = {rank}");
        assert_eq!((sol.trace, sol.rel_gap), (0.0, 0.0));
    }
}

#[test]
fn diagonal_matrix_is_exact() {
    let diag = [-3.0, 2.0, 0.0, -0.5, 7.0, -1e-3];
    let n = diag.len();
    let mut w = vec![0.0; n * n];
    for (i, &x) in diag.iter().enumerate() {
        w[i * n + i] = x;
    }
    let m = SymmetricMatrix::from_row_major(n, n, &w).unwrap();
    let sol = solve_diagonal_sdp(&m, &SdpOptions::default()).unwrap();
    let expected: Vec<f64> = diag.iter().map(|&x| (-x).max(0.0)).collect();
    assert_eq!(sol.d, expected);
    assert_eq!(sol.rel_gap, 0.0);
    assert_eq!(sol.lower_bound, sol.trace);
}

#[test]
fn typed_errors() {
    let e = |r: Result<SymmetricMatrix, SdpError>| r.unwrap_err();
    assert_eq!(
        e(SymmetricMatrix::from_row_major(0, 0, &[])),
        SdpError::Empty
    );
    assert_eq!(
        e(SymmetricMatrix::from_row_major(2, 3, &[0.0; 6])),
        SdpError::NotSquare { rows: 2, cols: 3 }
    );
    assert_eq!(
        e(SymmetricMatrix::from_row_major(2, 2, &[0.0; 3])),
        SdpError::Length {
            expected: 4,
            found: 3
        }
    );
    let mut w = vec![0.0; 9];
    w[5] = f64::NAN;
    assert!(matches!(
        e(SymmetricMatrix::from_row_major(3, 3, &w)),
        SdpError::NonFinite { row: 1, col: 2, .. }
    ));
    w[5] = f64::NEG_INFINITY;
    assert!(matches!(
        e(SymmetricMatrix::from_row_major(3, 3, &w)),
        SdpError::NonFinite { row: 1, col: 2, .. }
    ));
    let mut w = vec![0.0; 9];
    w[1] = 1.0;
    w[3] = 1.0 + 1e-12; // within 1e-9 of the largest entry: accepted
    w[5] = 0.5;
    w[7] = 0.5 + 1e-6; // beyond: rejected, with the position
    assert_eq!(
        e(SymmetricMatrix::from_row_major(3, 3, &w)),
        SdpError::Asymmetric {
            row: 1,
            col: 2,
            upper: 0.5,
            lower: 0.5 + 1e-6
        }
    );
    assert_eq!(e(SymmetricMatrix::from_triplets(0, &[])), SdpError::Empty);
    assert_eq!(
        e(SymmetricMatrix::from_triplets(3, &[(0, 3, 1.0)])),
        SdpError::IndexOutOfRange {
            row: 0,
            col: 3,
            n: 3
        }
    );
    assert!(matches!(
        e(SymmetricMatrix::from_triplets(3, &[(0, 1, f64::INFINITY)])),
        SdpError::NonFinite { row: 0, col: 1, .. }
    ));
    let w = SymmetricMatrix::from_row_major(2, 2, &[0.0, 1.0, 1.0, 0.0]).unwrap();
    let mut omega = SdpOptions::default();
    omega.over_relaxation = 2.5;
    let mut rank = SdpOptions::default();
    rank.rank = Some(0);
    for (opts, name) in [
        (SdpOptions::with_rel_gap(0.0), "rel_gap"),
        (SdpOptions::with_rel_gap(f64::NAN), "rel_gap"),
        (omega, "over_relaxation"),
        (rank, "rank"),
    ] {
        assert_eq!(
            solve_diagonal_sdp(&w, &opts).unwrap_err(),
            SdpError::InvalidOption(name)
        );
    }
}

/// A random sparse Ising-like coupling matrix with mixed-sign diagonal (so `d ≥ 0` binds on
/// some coordinates), as triplets and as a dense row-major matrix.
fn random_ising(
    rng: &mut Xoshiro256PlusPlus,
    n: usize,
    edges: usize,
) -> (Vec<(usize, usize, f64)>, Vec<f64>) {
    let mut trip = Vec::new();
    let mut dense = vec![0.0; n * n];
    for i in 0..n {
        let x = 4.0 * langevin_core::random::unit_f64(rng) - 1.0;
        trip.push((i, i, x));
        dense[i * n + i] = x;
    }
    for _ in 0..edges {
        let i = langevin_core::random::index(rng, n);
        let j = langevin_core::random::index(rng, n);
        if i == j {
            continue;
        }
        let x = if rng.next_u32() & 1 == 0 { 0.9 } else { -0.9 };
        trip.push((i, j, x));
        dense[i * n + j] += x;
        dense[j * n + i] += x;
    }
    (trip, dense)
}

#[test]
fn triplets_match_dense_input() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
    let n = 300;
    let (trip, dense) = random_ising(&mut rng, n, 600);
    let a = SymmetricMatrix::from_triplets(n, &trip).unwrap();
    let b = SymmetricMatrix::from_row_major(n, n, &dense).unwrap();
    assert!(a.is_sparse() && b.is_sparse());
    assert_eq!(a.to_dense(), b.to_dense());
    let opts = SdpOptions::with_rel_gap(1e-4);
    let sa = solve_diagonal_sdp(&a, &opts).unwrap();
    let sb = solve_diagonal_sdp(&b, &opts).unwrap();
    assert_eq!(sa.d, sb.d, "same matrix, same seed, same answer");
    assert_feasible(n, &dense, &sa);
}

#[test]
fn early_stop_is_still_feasible_and_honest() {
    let case = case("goe784");
    let w = SymmetricMatrix::from_row_major(case.n, case.n, &case.w).unwrap();
    for max_sweeps in [0, 3] {
        let mut opts = SdpOptions::with_rel_gap(1e-9);
        opts.max_sweeps = max_sweeps;
        let sol = solve_diagonal_sdp(&w, &opts).unwrap();
        assert!(!sol.converged);
        assert_eq!(sol.iterations, max_sweeps);
        assert!(sol.lower_bound <= case.optimal * (1.0 + 1e-9));
        assert!(sol.trace >= case.lower * (1.0 - 1e-9));
        assert_feasible(case.n, &case.w, &sol);
    }
}

// ---------------------------------------------------------------------------------------
// Independent cross-check: a primal-dual-free log-barrier Newton method on d.
// ---------------------------------------------------------------------------------------

/// Inverse of a symmetric positive definite matrix by Cholesky; `None` if not PD.
fn spd_inverse(n: usize, a: &[f64]) -> Option<Vec<f64>> {
    let l = cholesky(n, a)?;
    // Solve L Lᵀ X = I column by column.
    let mut inv = vec![0.0; n * n];
    for c in 0..n {
        let mut y = vec![0.0; n];
        for i in 0..n {
            let mut s = if i == c { 1.0 } else { 0.0 };
            for k in 0..i {
                s -= l[i * n + k] * y[k];
            }
            y[i] = s / l[i * n + i];
        }
        for i in (0..n).rev() {
            let mut s = y[i];
            for k in (i + 1)..n {
                s -= l[k * n + i] * inv[k * n + c];
            }
            inv[i * n + c] = s / l[i * n + i];
        }
    }
    Some(inv)
}

/// `min Σd − μ (log det(W + D) + Σ log d)` by damped Newton steps for a decreasing μ. The
/// barrier has parameter `2n`, so at the end `Σd` is within `2nμ` (plus the Newton residual)
/// of the optimum. Returns the final trace.
fn barrier_optimum(n: usize, w: &[f64]) -> f64 {
    let scale = w.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    // Gershgorin: d = (row sum bound + 1) is strictly feasible.
    let start = (0..n)
        .map(|i| (0..n).map(|j| w[i * n + j].abs()).sum::<f64>())
        .fold(0.0f64, f64::max)
        + scale;
    let mut d = vec![start; n];
    let z = |d: &[f64]| {
        let mut a = w.to_vec();
        for i in 0..n {
            a[i * n + i] += d[i];
        }
        a
    };
    let mut mu = scale;
    while mu > 1e-12 * scale {
        for _ in 0..50 {
            let zi = spd_inverse(n, &z(&d)).expect("iterate stays interior");
            let grad: Vec<f64> = (0..n)
                .map(|i| 1.0 - mu * zi[i * n + i] - mu / d[i])
                .collect();
            let mut hess = vec![0.0; n * n];
            for i in 0..n {
                for j in 0..n {
                    hess[i * n + j] = mu * zi[i * n + j] * zi[i * n + j];
                }
                hess[i * n + i] += mu / (d[i] * d[i]);
            }
            let step = solve_dense(n, hess, grad.iter().map(|g| -g).collect());
            let decrement: f64 = step.iter().zip(&grad).map(|(s, g)| -s * g).sum();
            // Backtrack into the interior (d > 0, W + D ≻ 0).
            let mut t = 1.0;
            loop {
                let trial: Vec<f64> = d.iter().zip(&step).map(|(x, s)| x + t * s).collect();
                if trial.iter().all(|&x| x > 0.0) && spd_inverse(n, &z(&trial)).is_some() {
                    d = trial;
                    break;
                }
                t *= 0.5;
            }
            if decrement < 1e-14 * scale {
                break;
            }
        }
        mu *= 0.2;
    }
    d.iter().sum()
}

#[test]
fn small_problems_agree_with_a_barrier_method() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(2024);
    for trial in 0..12 {
        let n = 3 + trial % 18;
        let dense = if trial % 2 == 0 {
            random_ising(&mut rng, n, 2 * n).1
        } else {
            // A random symmetric Gaussian matrix, shifted so that some W_ii are positive.
            let g = random_matrix(&mut rng, n, n);
            let mut w = vec![0.0; n * n];
            for i in 0..n {
                for j in 0..n {
                    w[i * n + j] = (g[i * n + j] + g[j * n + i]) / 2.0;
                }
                w[i * n + i] += 0.5;
            }
            w
        };
        let reference = barrier_optimum(n, &dense);
        let w = SymmetricMatrix::from_row_major(n, n, &dense).unwrap();
        for rel_gap in [1e-3, 1e-7] {
            let sol = solve_diagonal_sdp(&w, &SdpOptions::with_rel_gap(rel_gap)).unwrap();
            assert_feasible(n, &dense, &sol);
            assert_brackets(trial, &sol, reference, rel_gap);
        }
    }
}

/// The Hessian `BᵀB/4` of a `hidden × visible` RBM-like factor with its diagonal removed: the
/// off-diagonal part is low rank and the matrix is indefinite (zero diagonal, non-zero
/// entries), unlike the positive semidefinite Hessian itself.
fn low_rank_without_diagonal(
    rng: &mut Xoshiro256PlusPlus,
    visible: usize,
    hidden: usize,
) -> Vec<f64> {
    let b = random_matrix(rng, hidden, visible);
    let mut w = vec![0.0; visible * visible];
    for row in b.chunks_exact(visible) {
        for i in 0..visible {
            for j in 0..visible {
                if i != j {
                    w[i * visible + j] += 0.25 * row[i] * row[j];
                }
            }
        }
    }
    w
}

#[test]
fn low_rank_hessian_without_its_diagonal_agrees_with_a_barrier_method() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(30);
    let (n, hidden) = (60, 40);
    for trial in 0..2 {
        let dense = low_rank_without_diagonal(&mut rng, n, hidden);
        let reference = barrier_optimum(n, &dense);
        // The diagonal of BᵀB/4 is feasible, and the optimum is not 0 (W is indefinite).
        assert!(reference > 0.0, "trial {trial}: optimum {reference}");
        let w = SymmetricMatrix::from_row_major(n, n, &dense).unwrap();
        for rel_gap in [1e-3, 1e-6] {
            let sol = solve_diagonal_sdp(&w, &SdpOptions::with_rel_gap(rel_gap)).unwrap();
            assert_feasible(n, &dense, &sol);
            assert!(
                sol.converged && sol.rel_gap <= rel_gap,
                "trial {trial}: {sol:?}"
            );
            assert_brackets(trial, &sol, reference, sol.rel_gap);
        }
    }
}

/// From `n = 256` on, the solver rescales its shift estimate by what earlier certificates
/// needed: on a low-rank matrix without its diagonal (too large for the barrier method) the
/// answer at the default gap stays feasible and its bounds bracket those of a solve to 1e-6.
#[test]
fn large_low_rank_hessian_without_its_diagonal_is_certified() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(31);
    let (n, hidden) = (300, 190);
    let dense = low_rank_without_diagonal(&mut rng, n, hidden);
    let w = SymmetricMatrix::from_row_major(n, n, &dense).unwrap();
    let tight = solve_diagonal_sdp(&w, &SdpOptions::with_rel_gap(1e-6)).unwrap();
    assert_feasible(n, &dense, &tight);
    assert!(tight.converged && tight.rel_gap <= 1e-6, "{tight:?}");
    let sol = solve_diagonal_sdp(&w, &SdpOptions::default()).unwrap();
    assert_feasible(n, &dense, &sol);
    assert!(sol.converged && sol.rel_gap <= 1e-3, "gap {}", sol.rel_gap);
    let slack = 1e-9 * tight.trace;
    assert!(
        sol.lower_bound <= tight.trace + slack,
        "lower bound {} above a feasible trace {}",
        sol.lower_bound,
        tight.trace
    );
    assert!(
        sol.trace >= tight.lower_bound - slack,
        "feasible trace {} below a lower bound {}",
        sol.trace,
        tight.lower_bound
    );
    assert!(
        sol.trace - tight.lower_bound <= sol.rel_gap * sol.trace + 1e-6 * tight.trace,
        "trace {} not within the certified gap {} of the optimum (≥ {})",
        sol.trace,
        sol.rel_gap,
        tight.lower_bound
    );
}

#[test]
fn storage_follows_density_and_transpose_agrees() {
    let all = cases();
    let grid = all.iter().find(|c| c.name == "grid20_open").unwrap();
    let goe = all.iter().find(|c| c.name == "goe784").unwrap();
    assert!(
        SymmetricMatrix::from_row_major(grid.n, grid.n, &grid.w)
            .unwrap()
            .is_sparse()
    );
    assert!(
        !SymmetricMatrix::from_row_major(goe.n, goe.n, &goe.w)
            .unwrap()
            .is_sparse()
    );
    let small = all.iter().find(|c| c.n == 100).unwrap();
    let m = nalgebra_free_transpose(small.n, &small.w);
    let a = SymmetricMatrix::from_row_major(small.n, small.n, &small.w).unwrap();
    let b = SymmetricMatrix::from_row_major(small.n, small.n, &m).unwrap();
    assert_eq!(
        a.to_dense(),
        b.to_dense(),
        "a symmetric matrix equals its transpose"
    );
}

fn nalgebra_free_transpose(n: usize, w: &[f64]) -> Vec<f64> {
    let mut t = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            t[j * n + i] = w[i * n + j];
        }
    }
    t
}

#[test]
fn scaling_w_scales_d() {
    let case = case("spin_glass400_mixed_diag");
    for c in [1e-6, 1e6] {
        let scaled: Vec<f64> = case.w.iter().map(|x| c * x).collect();
        let w = SymmetricMatrix::from_row_major(case.n, case.n, &scaled).unwrap();
        let sol = solve_diagonal_sdp(&w, &SdpOptions::with_rel_gap(1e-4)).unwrap();
        let optimum = c * case.optimal;
        assert!(sol.lower_bound <= optimum * (1.0 + 1e-9));
        assert!(sol.trace - optimum <= 1e-4 * optimum, "scale {c}");
        assert_feasible(case.n, &scaled, &sol);
    }
}

#[test]
fn caps_and_small_ranks_stay_feasible_and_honest() {
    let case = case("rotated_gaussian100_k10");
    let w = SymmetricMatrix::from_row_major(case.n, case.n, &case.w).unwrap();
    let mut opts = SdpOptions::with_rel_gap(1e-8);
    opts.time_limit = Some(std::time::Duration::ZERO);
    let sol = solve_diagonal_sdp(&w, &opts).unwrap();
    assert_eq!(sol.iterations, 0);
    assert_feasible(case.n, &case.w, &sol);
    assert!(sol.lower_bound <= case.optimal && sol.trace >= case.lower);
    for rank in [1, 2] {
        let mut opts = SdpOptions::with_rel_gap(1e-8);
        opts.rank = Some(rank);
        opts.max_sweeps = 60;
        let sol = solve_diagonal_sdp(&w, &opts).unwrap();
        assert_feasible(case.n, &case.w, &sol);
        assert!(
            sol.lower_bound <= case.optimal * (1.0 + 1e-9),
            "rank {rank}"
        );
        assert!(sol.trace >= case.lower * (1.0 - 1e-9), "rank {rank}");
        assert!(sol.rel_gap >= (sol.trace - case.optimal) / sol.trace - 1e-12);
    }
}

/// Found by fuzzing: a tiny off-diagonal next to a subnormal diagonal once gave a NaN gap.
#[test]
fn subnormal_entries_give_a_certified_gap() {
    let w = [-10.0, 2.2e-308, 2.2e-308, 1.26e-321];
    let m = SymmetricMatrix::from_row_major(2, 2, &w).unwrap();
    let sol = solve_diagonal_sdp(&m, &SdpOptions::default()).unwrap();
    assert!(sol.rel_gap >= 0.0 && sol.rel_gap <= 1e-3, "{sol:?}");
    assert!(sol.d.iter().all(|x| x.is_finite() && *x >= 0.0), "{sol:?}");
}

/// Found by fuzzing: entries near 1e300 once sent the certification into an endless loop.
#[test]
fn huge_entries_are_solved_at_unit_scale() {
    let n = 4;
    let w: Vec<f64> = (0..n * n)
        .map(|k| {
            let (i, j) = (k / n, k % n);
            let (a, b) = (i.min(j), i.max(j));
            1e300 * ((a * 7 + b * 3) % 5) as f64 - 2e300
        })
        .collect();
    let m = SymmetricMatrix::from_row_major(n, n, &w).unwrap();
    let sol = solve_diagonal_sdp(&m, &SdpOptions::default()).unwrap();
    assert!(sol.d.iter().all(|x| x.is_finite() && *x >= 0.0), "{sol:?}");
    assert!(sol.rel_gap >= 0.0 && sol.rel_gap <= 1e-3, "{sol:?}");
}

/// Found by fuzzing: a matrix of subnormal entries needs a positive, subnormal d; scaling back
/// from the unit-scale solve must not round it down to zero.
#[test]
fn all_subnormal_matrix_stays_feasible() {
    let a = 5e-324;
    let w = [a, a, 0.0, a, a, a, 0.0, a, 1.136e-321];
    let m = SymmetricMatrix::from_row_major(3, 3, &w).unwrap();
    let sol = solve_diagonal_sdp(&m, &SdpOptions::default()).unwrap();
    // W/a + diag(d/a) must be PSD: check the scaled matrix exactly (entries are small integers
    // times a, and d/a is exact for subnormal d).
    let s: Vec<f64> = w.iter().map(|x| x / a).collect();
    let d: Vec<f64> = sol.d.iter().map(|x| x / a).collect();
    let m = [
        [s[0] + d[0], s[1], s[2]],
        [s[3], s[4] + d[1], s[5]],
        [s[6], s[7], s[8] + d[2]],
    ];
    let minor2 = m[0][0] * m[1][1] - m[0][1] * m[1][0];
    let det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
        - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
        + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
    assert!(m[0][0] >= 0.0 && minor2 >= 0.0 && det >= 0.0, "{sol:?}");
}

/// The smallest eigenvalue of a symmetric row-major matrix, by nalgebra's symmetric eigensolver
/// (independent of the solver and of the Cholesky check above).
fn lambda_min(n: usize, a: &[f64]) -> f64 {
    let m = nalgebra::DMatrix::from_row_slice(n, n, a);
    m.symmetric_eigen()
        .eigenvalues
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min)
}

/// `W = B Bᵀ − εI` with `B` (`n × r`, `r < n`, Gaussian entries, fixed seed): nearly, but not,
/// positive semidefinite, its smallest eigenvalue `−ε` up to rounding.
fn nearly_psd_cases() -> Vec<(String, usize, Vec<f64>, f64)> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(23);
    [
        (8, 7, 1e-6),
        (12, 3, 1e-9),
        (30, 29, 1e-3),
        (40, 8, 1e-12),
        (60, 20, 1e-5),
    ]
    .into_iter()
    .map(|(n, rank, eps)| {
        let b = random_matrix(&mut rng, n, rank);
        let mut w = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..=i {
                let v: f64 = (0..rank).map(|k| b[i * rank + k] * b[j * rank + k]).sum();
                w[i * n + j] = v;
                w[j * n + i] = v;
            }
            w[i * n + i] -= eps;
        }
        let name = format!("n = {n}, rank = {rank}, ε = {eps:e}");
        let lw = lambda_min(n, &w);
        assert!(lw < 0.0, "{name}: W must not be PSD (λ_min = {lw:e})");
        (name, n, w, eps)
    })
    .collect()
}

fn max_abs(w: &[f64]) -> f64 {
    w.iter().fold(0.0f64, |s, x| s.max(x.abs()))
}

/// On nearly-PSD inputs the answer keeps the solver's contract, checked independently of its
/// certificate: `d ≥ 0`, `λ_min(W + diag d) ≥ −1e-9·max|W|` by nalgebra's eigenvalues (and the
/// Cholesky check above), a lower bound no larger than the trace of the feasible `εI`, and a
/// reported gap that says whether it converged.
///
/// # Tolerances
///
/// `−1e-9·max|W|` is the solver's documented feasibility bound; the symmetric eigensolver's
/// backward error is a small multiple of `n·2^-52·‖W + diag d‖₂`, below `1e-12·max|W|` at these
/// sizes, so it does not blur the check. When `ε` is below that bound the solver may answer
/// `d = 0`, which the same check accepts.
#[test]
fn nearly_psd_inputs_get_a_feasible_d_checked_independently() {
    for (name, n, w, eps) in nearly_psd_cases() {
        let m = SymmetricMatrix::from_row_major(n, n, &w).unwrap();
        let sol = solve_diagonal_sdp(&m, &SdpOptions::default()).unwrap();
        assert!(
            sol.d.iter().all(|&x| x >= 0.0 && x.is_finite()),
            "{name}: d ≥ 0 fails"
        );
        let scale = max_abs(&w);
        let mut a = w.clone();
        for i in 0..n {
            a[i * n + i] += sol.d[i];
        }
        let l = lambda_min(n, &a);
        assert!(
            l >= -FEAS_TOL * scale,
            "{name}: λ_min(W + diag d) = {l:e} below −{:e}",
            FEAS_TOL * scale
        );
        assert_feasible(n, &w, &sol);
        let ceiling = n as f64 * eps;
        assert!(
            sol.lower_bound <= ceiling * (1.0 + 1e-12),
            "{name}: lower bound {:e} above a feasible trace {ceiling:e}",
            sol.lower_bound
        );
        assert_eq!(
            sol.converged,
            sol.rel_gap <= 1e-3 || sol.trace - sol.lower_bound <= n as f64 * FEAS_TOL * scale,
            "{name}: `converged` disagrees with the gap {:e}",
            sol.rel_gap
        );
    }
}

/// Open defect: on some nearly-PSD inputs the coordinate ascent stalls. With the default
/// options, `n = 60, rank = 20, ε = 1e-5` stops after 20 000 sweeps with a certified gap of 0.58
/// and a trace 2.2 times that of the feasible `εI`; `n = 8, rank = 7, ε = 1e-6` stops with a
/// gap of 0.89, 2% above it. Once fixed, every case converges and does no worse than `εI` (up to
/// the gap and the feasibility margin `n·1e-9·max|W|`).
#[test]
#[ignore = "open defect: SDP-lite stalls on nearly-PSD inputs (see the doc comment)"]
fn nearly_psd_inputs_converge_no_worse_than_eps_identity() {
    for (name, n, w, eps) in nearly_psd_cases() {
        let m = SymmetricMatrix::from_row_major(n, n, &w).unwrap();
        let sol = solve_diagonal_sdp(&m, &SdpOptions::default()).unwrap();
        assert!(
            sol.converged,
            "{name}: not converged (gap {:e})",
            sol.rel_gap
        );
        let ceiling = n as f64 * eps;
        assert!(
            sol.trace <= ceiling * (1.0 + 1e-3) + n as f64 * FEAS_TOL * max_abs(&w),
            "{name}: trace {:e} above that of εI, {ceiling:e}",
            sol.trace
        );
    }
}
