//! `W + diag(d)` checked positive definite in exact arithmetic: the stored `f64` entries are
//! dyadic rationals, scaled to one common power of two they become integers, and the leading
//! principal minors of the integer matrix, all positive exactly when it is positive definite
//! (Sylvester's criterion), come out of fraction-free (Bareiss) elimination with no rounding.
//!
//! This is the check the solver's own certificate cannot give: its Cholesky factorisation
//! runs in `f64`, and the rounding margin `ρ` it adds to `d` is what turns "the factorisation
//! finished" into "positive semidefinite". The tests here drive the certificate where that
//! margin decides (a shift that leaves the matrix indefinite by less than `ρ`), and check
//! solutions of small and medium problems, dense and sparse, at several scales.

use super::*;
use num_bigint::{BigInt, Sign};
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// `x = m · 2^e` with an integer `m` (finite `x` only).
fn decode(x: f64) -> (i64, i32) {
    let bits = x.to_bits();
    let sign = if bits >> 63 == 0 { 1i64 } else { -1 };
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let frac = (bits & ((1u64 << 52) - 1)) as i64;
    if exp == 0 {
        (sign * frac, -1074)
    } else {
        (sign * (frac | (1i64 << 52)), exp - 1075)
    }
}

/// The first leading principal minor of the symmetric `n × n` matrix `a` (row-major, finite
/// `f64` entries, taken as exact rationals) that is not positive, or `None` when all are
/// positive, that is when `a` is positive definite.
fn first_non_positive_minor(n: usize, a: &[f64]) -> Option<usize> {
    assert_eq!(a.len(), n * n);
    assert!(a.iter().all(|x| x.is_finite()));
    let parts: Vec<(i64, i32)> = a.iter().map(|&x| decode(x)).collect();
    let low = parts
        .iter()
        .filter(|p| p.0 != 0)
        .map(|p| p.1)
        .min()
        .unwrap_or(0);
    let mut m: Vec<BigInt> = parts
        .iter()
        .map(|&(v, e)| BigInt::from(v) << ((e - low) as usize))
        .collect();
    let mut prev = BigInt::from(1);
    for k in 0..n {
        let p = m[k * n + k].clone();
        if p.sign() != Sign::Plus {
            return Some(k);
        }
        for i in k + 1..n {
            for j in i..n {
                let v = (&p * &m[i * n + j] - &m[k * n + i] * &m[k * n + j]) / &prev;
                m[j * n + i] = v.clone();
                m[i * n + j] = v;
            }
        }
        prev = p;
    }
    None
}

/// `W + diag(d)` as a dense row-major matrix, each diagonal sum rounded down, so that the
/// checked matrix is never more definite than the exact `W + diag(d)`.
fn with_diagonal(w: &SymmetricMatrix, d: &[f64]) -> Vec<f64> {
    let n = w.dim();
    let mut a = w.to_dense();
    for i in 0..n {
        let (x, y) = (a[i * n + i], d[i]);
        let s = x + y;
        // Two-sum: `err = (x + y) − s` exactly; a sum rounded up is replaced by the value
        // below it, which is below the exact sum.
        let err = (x - (s - (s - x))) + (y - (s - x));
        a[i * n + i] = if err < 0.0 { s.next_down() } else { s };
    }
    a
}

/// Asserts that `W + diag(d)` is positive definite in exact arithmetic.
fn assert_exactly_pd(name: &str, w: &SymmetricMatrix, d: &[f64]) {
    let n = w.dim();
    if let Some(k) = first_non_positive_minor(n, &with_diagonal(w, d)) {
        panic!("{name}: W + diag(d) is not positive definite (leading minor {k} of {n})");
    }
}

fn uniform(rng: &mut Xoshiro256PlusPlus) -> f64 {
    (rng.next_u64() >> 11) as f64 * 2f64.powi(-53)
}

/// A dense symmetric matrix with entries uniform in `[−1, 1]`.
fn dense(n: usize, seed: u64) -> SymmetricMatrix {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut a = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..=i {
            let x = 2.0 * uniform(&mut rng) - 1.0;
            a[i * n + j] = x;
            a[j * n + i] = x;
        }
    }
    SymmetricMatrix::from_row_major(n, n, &a).unwrap()
}

/// A sparse ±J spin glass on a `side × side` torus with couplings of random magnitude.
fn spin_glass(side: usize, seed: u64) -> SymmetricMatrix {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let n = side * side;
    let mut entries = Vec::new();
    for r in 0..side {
        for c in 0..side {
            let i = r * side + c;
            for j in [r * side + (c + 1) % side, ((r + 1) % side) * side + c] {
                let x =
                    (0.5 + uniform(&mut rng)) * if rng.next_u64() & 1 == 0 { 1.0 } else { -1.0 };
                entries.push((i, j, x));
            }
        }
    }
    SymmetricMatrix::from_triplets(n, &entries).unwrap()
}

/// The solutions of small and medium problems (dense and sparse, unit scale and far from it)
/// are positive definite in exact arithmetic.
#[test]
fn solutions_are_positive_definite_exactly() {
    let mut cases: Vec<(String, SymmetricMatrix)> = vec![
        ("dense n = 6".into(), dense(6, 1)),
        ("dense n = 12".into(), dense(12, 2)),
        ("spin glass 3×3".into(), spin_glass(3, 3)),
        ("dense n = 40".into(), dense(40, 4)),
        ("dense n = 56 (two blocks)".into(), dense(56, 5)),
        ("spin glass 7×7".into(), spin_glass(7, 6)),
    ];
    // Far from unit scale: the solver rescales by a power of two and back.
    let tiny = dense(10, 7)
        .to_dense()
        .iter()
        .map(|x| x * 2f64.powi(-700))
        .collect::<Vec<_>>();
    cases.push((
        "dense n = 10 at 2^-700".into(),
        SymmetricMatrix::from_row_major(10, 10, &tiny).unwrap(),
    ));
    let huge = dense(10, 8)
        .to_dense()
        .iter()
        .map(|x| x * 1e250)
        .collect::<Vec<_>>();
    cases.push((
        "dense n = 10 at 1e250".into(),
        SymmetricMatrix::from_row_major(10, 10, &huge).unwrap(),
    ));
    for (name, w) in &cases {
        let sol = solve_diagonal_sdp(w, &SdpOptions::default()).unwrap();
        assert!(sol.converged, "{name}: not converged");
        assert_exactly_pd(name, w, &sol.d);
    }
}

/// The certificate where its rounding margin decides: `W = B Bᵀ` with an integer `B` of rank
/// `n − 1` has `λ_min = 0` exactly, and shifts `−t` with `t` from a small fraction of `ε·max W_ii`
/// to well past the margin `ρ ≈ n² ε max W_ii` make `W − t I` indefinite by exactly `t`. The
/// `f64` factorisation still finishes for some of them (its rounding hides a deficit of a few
/// `ε·max W_ii`), and the `d` returned must then be positive definite all the same: `ρ` must
/// cover what the factorisation's rounding can hide. A margin a thousand times smaller does
/// not: the test checks that the factorisation finished on some `W − t I` with `t > ρ/1000`,
/// and with the margin shrunk so, the `d` returned for the first such `t` is not positive
/// definite.
#[test]
fn the_certificate_covers_the_factorisations_rounding() {
    let mut finished_indefinite = 0usize;
    for (n, seed) in [(6usize, 11u64), (9, 12), (12, 13), (20, 14)] {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let b: Vec<f64> = (0..n * (n - 1))
            .map(|_| (rng.next_u64() % 7) as f64 - 3.0)
            .collect();
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                a[i * n + j] = (0..n - 1)
                    .map(|k| b[i * (n - 1) + k] * b[j * (n - 1) + k])
                    .sum();
            }
        }
        let w = SymmetricMatrix::from_row_major(n, n, &a).unwrap();
        // W itself is singular: its last leading minor (at least) is 0 in exact arithmetic.
        assert!(
            first_non_positive_minor(n, &a).is_some(),
            "n = {n}: B Bᵀ is not singular"
        );
        let ordering = Ordering::new(&w);
        let top = (0..n).map(|i| a[i * n + i]).fold(0.0, f64::max);
        let rho = rounding_bound(n, top);
        for j in 1..=400u32 {
            // t from 0.02 ε·top to 8 ε·top, then on to 4ρ.
            let t = if j <= 200 {
                f64::from(j) * 0.04 * f64::EPSILON * top
            } else {
                f64::from(j - 200) * 0.02 * rho
            };
            let zero = vec![0.0; n];
            let f = factor(&w, &vec![-t; n], &ordering);
            let (d, _, _) = certify_shift(&w, &ordering, &zero, -t, t);
            assert!(d.iter().all(|x| x.is_finite()));
            if f.failed_at.is_none() && t > 1e-3 * rho {
                finished_indefinite += 1;
            }
            assert_exactly_pd(&format!("n = {n}, shift −{t:e} (ρ = {rho:e})"), &w, &d);
        }
    }
    // The margin was exercised: the factorisation finished on matrices indefinite by more
    // than a thousandth of it.
    assert!(finished_indefinite > 0, "no shift reached the margin");
}
