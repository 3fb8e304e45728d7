//! AB-max: the diagonal `D ≥ 0` that makes `W + D` positive semidefinite with the smallest
//! largest eigenvalue,
//!
//! `min_d λ_max(W + diag d)  s.t.  d ≥ 0,  W + diag d ⪰ 0`.
//!
//! # Method
//!
//! The semidefinite constraint is folded into the objective. For any `d ≥ 0` the point
//! `d + s(d)·1`, `s(d) = max(0, −λ_min(W + D))`, is feasible, and its largest eigenvalue is
//!
//! `f(d) = λ_max(W + D) + max(0, −λ_min(W + D))`.
//!
//! `f` equals the objective on the feasible set, so `min_{d ≥ 0} f` is the optimum, and `f` is
//! convex (`λ_max` and `−λ_min = λ_max(−·)` are convex in `d`; sums and `max(0, ·)` keep
//! convexity). A subgradient is `v∘v − [λ_min < 0] u∘u` with `v`, `u` unit eigenvectors of
//! `λ_max` and `λ_min`. The solver runs projected subgradient descent (`d ← max(0, d − h g)`)
//! from the better of the shift point `max(0, −λ_min(W))·1` and an optional start (AB-max
//! starts from the trace-optimal `d`), with Polyak steps `h = (f(d) − f_lev) / |g|²` towards the
//! level `f_lev = f_best − ½ (f_best − lower bound)`, and keeps the best feasible point. Each
//! iteration is one dense symmetric eigendecomposition (nalgebra), `O(n³)`.
//!
//! # Accuracy
//!
//! The reported gap is certified by weak duality. The dual of the problem is
//! `max ⟨X − Y, W⟩` over `X, Y ⪰ 0`, `tr X = 1`, `diag Y ≤ diag X`; the solver averages the
//! iterates' `v vᵀ` into `X̄` and `u uᵀ` into `Ȳ` (over blocks of iterations that double in
//! length), scales `Ȳ` by the largest `c` with `c·diag Ȳ ≤ diag X̄` and takes
//! `⟨X̄ − cȲ, W⟩` as a lower bound, next to the trivial bound `λ_max(W)` (adding `D ⪰ 0`
//! never lowers `λ_max`). It stops when `(λ_max − lower bound) ≤ rel_gap · λ_max` or after
//! `max_iter` iterations; the answer is then still feasible and at least as good as the
//! start, only its gap is larger. Eigenvalue multiplicity at the optimum (lattices, symmetric
//! graphs) makes the subgradient method slow, so expect gaps of a few percent there.
//!
//! The returned `d` includes a final shift of `max(0, −λ_min) + margin`, with the margin
//! `16 n ε · max(1, max_i |W_ii + d_i|, max|W_ij|)` raised tenfold until a Cholesky
//! factorisation of `W + diag d` succeeds, so `W + diag d` is positive definite up to the
//! rounding of that factorisation.
//!
//! # Examples
//!
//! ```
//! use langevin_std::diagonal_max::{MaxEigOptions, min_max_eigenvalue};
//! // W = [[0, 1], [1, 0]]: the optimum is d = (1, 1) with λ_max = 2.
//! let w = [0.0, 1.0, 1.0, 0.0];
//! let sol = min_max_eigenvalue(&w, 2, None, &MaxEigOptions::default()).unwrap();
//! assert!((sol.lambda_max - 2.0).abs() < 1e-6);
//! ```

use nalgebra::{DMatrix, SymmetricEigen};
use std::fmt;
use std::time::{Duration, Instant};

/// Settings of [`min_max_eigenvalue`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct MaxEigOptions {
    /// Stop when the certified relative gap is at most this (default `1e-3`).
    pub rel_gap: f64,
    /// Cap on subgradient iterations (default 200).
    pub max_iter: usize,
    /// Optional wall-clock cap (default none).
    pub time_limit: Option<Duration>,
}

impl Default for MaxEigOptions {
    fn default() -> Self {
        Self {
            rel_gap: 1e-3,
            max_iter: 200,
            time_limit: None,
        }
    }
}

/// The answer of [`min_max_eigenvalue`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct MaxEigSolution {
    /// The diagonal `d ≥ 0`; `W + diag d` is positive semidefinite.
    pub d: Vec<f64>,
    /// `λ_max(W + diag d)` of the returned `d`.
    pub lambda_max: f64,
    /// A certified lower bound on the optimum.
    pub lower_bound: f64,
    /// `(lambda_max − lower_bound) / lambda_max` (0 when `lambda_max` is 0).
    pub rel_gap: f64,
    /// Subgradient iterations run.
    pub iterations: usize,
    /// Whether the gap target was met (or the absolute gap is at rounding level, `32 n ε max(1, max|W_ij|)`).
    pub converged: bool,
}

/// Why [`min_max_eigenvalue`] could not run.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum MaxEigError {
    /// `W` is not `n × n` with `n ≥ 1`.
    Shape {
        /// Entries expected.
        expected: usize,
        /// Entries given.
        found: usize,
    },
    /// A NaN or infinite entry of `W` or of the start.
    NonFinite,
    /// The start has the wrong length or a negative entry.
    Start,
    /// No margin made `W + diag d` factorable (only for wildly scaled input).
    NotCertified,
}

impl fmt::Display for MaxEigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Shape { expected, found } => {
                write!(f, "W has {found} entries, expected {expected} (n ≥ 1)")
            }
            Self::NonFinite => f.write_str("W or the start is not finite"),
            Self::Start => f.write_str("the start must have n entries, all ≥ 0"),
            Self::NotCertified => f.write_str("W + diag(d) could not be certified PSD"),
        }
    }
}

impl std::error::Error for MaxEigError {}

/// The extreme eigenpairs of `W + diag d`.
struct Extremes {
    max: f64,
    min: f64,
    v_max: Vec<f64>,
    v_min: Vec<f64>,
}

fn extremes(w: &DMatrix<f64>, d: &[f64]) -> Extremes {
    let mut m = w.clone();
    for (i, &di) in d.iter().enumerate() {
        m[(i, i)] += di;
    }
    let eig = SymmetricEigen::new(m);
    let (mut imax, mut imin) = (0, 0);
    for (k, &l) in eig.eigenvalues.iter().enumerate() {
        if l > eig.eigenvalues[imax] {
            imax = k;
        }
        if l < eig.eigenvalues[imin] {
            imin = k;
        }
    }
    Extremes {
        max: eig.eigenvalues[imax],
        min: eig.eigenvalues[imin],
        v_max: eig.eigenvectors.column(imax).iter().copied().collect(),
        v_min: eig.eigenvectors.column(imin).iter().copied().collect(),
    }
}

/// `f(d)`: the largest eigenvalue of the feasible point `d + max(0, −λ_min)·1`.
fn objective(e: &Extremes) -> f64 {
    e.max + (-e.min).max(0.0)
}

/// Running averages of `v vᵀ` and `u uᵀ` for the dual bound.
struct DualAverage {
    x: DMatrix<f64>,
    y: DMatrix<f64>,
    count: usize,
}

impl DualAverage {
    fn new(n: usize) -> Self {
        Self {
            x: DMatrix::zeros(n, n),
            y: DMatrix::zeros(n, n),
            count: 0,
        }
    }

    fn add(&mut self, e: &Extremes) {
        let v = nalgebra::DVector::from_column_slice(&e.v_max);
        self.x.ger(1.0, &v, &v, 1.0);
        if e.min < 0.0 {
            let u = nalgebra::DVector::from_column_slice(&e.v_min);
            self.y.ger(1.0, &u, &u, 1.0);
        }
        self.count += 1;
    }

    /// `⟨X̄ − cȲ, W⟩` with the largest admissible `c` (or `c = 0` if that is better).
    fn bound(&self, w: &DMatrix<f64>) -> f64 {
        if self.count == 0 {
            return f64::NEG_INFINITY;
        }
        let k = self.count as f64;
        let xw = self.x.dot(w) / k;
        let yw = self.y.dot(w) / k;
        if yw >= 0.0 {
            return xw;
        }
        let mut c = f64::INFINITY;
        for i in 0..w.nrows() {
            let yi = self.y[(i, i)];
            if yi > 0.0 {
                c = c.min(self.x[(i, i)] / yi);
            }
        }
        if c.is_finite() { xw - c * yw } else { xw }
    }
}

/// Solves `min λ_max(W + diag d)` over `d ≥ 0` with `W + diag d ⪰ 0` (see the module docs).
/// `w` is `n × n` row-major (symmetrised as `(W + Wᵀ)/2`); `start`, if given, is a further
/// starting point (any `d ≥ 0`).
///
/// # Errors
///
/// [`MaxEigError`] for a wrong shape, non-finite input or a bad start.
pub fn min_max_eigenvalue(
    w: &[f64],
    n: usize,
    start: Option<&[f64]>,
    opts: &MaxEigOptions,
) -> Result<MaxEigSolution, MaxEigError> {
    if n == 0 || w.len() != n * n {
        return Err(MaxEigError::Shape {
            expected: n * n,
            found: w.len(),
        });
    }
    if w.iter().any(|v| !v.is_finite()) {
        return Err(MaxEigError::NonFinite);
    }
    if let Some(s) = start {
        if s.len() != n {
            return Err(MaxEigError::Start);
        }
        if s.iter().any(|v| !v.is_finite()) {
            return Err(MaxEigError::NonFinite);
        }
        if s.iter().any(|&v| v < 0.0) {
            return Err(MaxEigError::Start);
        }
    }
    let began = Instant::now();
    let m = DMatrix::from_row_slice(n, n, w);
    let m = (&m + m.transpose()) * 0.5;
    let zero = vec![0.0; n];
    let at_zero = extremes(&m, &zero);
    // λ_max(W) bounds the optimum from below: D ⪰ 0 never lowers the largest eigenvalue.
    let mut lower = at_zero.max;
    let shift = vec![(-at_zero.min).max(0.0); n];
    let mut d = shift;
    let mut e = extremes(&m, &d);
    if let Some(s) = start {
        let es = extremes(&m, s);
        if objective(&es) < objective(&e) {
            d = s.to_vec();
            e = es;
        }
    }
    let mut best_f = objective(&e);
    let mut best_d: Vec<f64> = d.iter().map(|&x| x + (-e.min).max(0.0)).collect();
    let mut avg = DualAverage::new(n);
    let mut block_end = 1usize;
    let mut iterations = 0usize;
    // Below this absolute gap the final margin dominates (an optimum at or near 0).
    let abs_tol = 32.0 * n as f64 * f64::EPSILON * m.iter().fold(1.0f64, |a, v| a.max(v.abs()));
    let gap_met = |f: f64, lb: f64| f - lb <= opts.rel_gap * f.abs() + abs_tol;
    while iterations < opts.max_iter && !gap_met(best_f, lower) {
        if opts.time_limit.is_some_and(|t| began.elapsed() >= t) {
            break;
        }
        avg.add(&e);
        iterations += 1;
        if iterations == block_end {
            lower = lower.max(avg.bound(&m));
            avg = DualAverage::new(n);
            block_end *= 2;
        }
        let f = objective(&e);
        let g: Vec<f64> = (0..n)
            .map(|i| {
                let up = e.v_max[i] * e.v_max[i];
                if e.min < 0.0 {
                    up - e.v_min[i] * e.v_min[i]
                } else {
                    up
                }
            })
            .collect();
        let g2: f64 = g.iter().map(|x| x * x).sum();
        if g2 <= 0.0 {
            break;
        }
        let level = best_f - 0.5 * (best_f - lower).max(0.0);
        let h = (f - level).max(1e-3 * (best_f - lower)).max(0.0) / g2;
        for (di, gi) in d.iter_mut().zip(&g) {
            *di = (*di - h * gi).max(0.0);
        }
        e = extremes(&m, &d);
        let f = objective(&e);
        if f < best_f {
            best_f = f;
            best_d = d.iter().map(|&x| x + (-e.min).max(0.0)).collect();
        }
    }
    let d = certify(&m, best_d)?;
    let fin = extremes(&m, &d);
    let lambda_max = fin.max;
    let lower_bound = lower.min(lambda_max);
    let rel_gap = if lambda_max > 0.0 {
        (lambda_max - lower_bound) / lambda_max
    } else {
        0.0
    };
    Ok(MaxEigSolution {
        d,
        lambda_max,
        lower_bound,
        rel_gap,
        iterations,
        converged: gap_met(lambda_max, lower_bound),
    })
}

/// Adds the smallest tested margin that lets `W + diag d` factor.
fn certify(m: &DMatrix<f64>, d: Vec<f64>) -> Result<Vec<f64>, MaxEigError> {
    let n = m.nrows();
    let scale = (0..n)
        .map(|i| (m[(i, i)] + d[i]).abs())
        .chain(m.iter().map(|v| v.abs()))
        .fold(1.0f64, f64::max);
    let mut margin = 16.0 * n as f64 * f64::EPSILON * scale;
    for _ in 0..8 {
        let out: Vec<f64> = d.iter().map(|&x| x + margin).collect();
        let mut s = m.clone();
        for (i, &di) in out.iter().enumerate() {
            s[(i, i)] += di;
        }
        if s.cholesky().is_some() {
            return Ok(out);
        }
        margin *= 10.0;
    }
    Err(MaxEigError::NotCertified)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 2 × 2 case by brute force: for each `d₁` on a fine grid the best feasible `d₂` is
    /// found by a golden-section search of the convex `λ_max` on its feasible interval.
    fn brute_force_2x2(a: f64, b: f64, c: f64) -> f64 {
        let lmax = |d1: f64, d2: f64| {
            let (p, q) = (a + d1, b + d2);
            0.5 * (p + q) + (0.25 * (p - q) * (p - q) + c * c).sqrt()
        };
        let mut best = f64::INFINITY;
        for k in 0..=20_000 {
            let d1 = k as f64 * 1e-3;
            let p = a + d1;
            if p < 0.0 {
                continue;
            }
            // Feasible d₂: b + d₂ ≥ c²/p (p > 0) and d₂ ≥ 0.
            let lo = if p > 0.0 {
                (c * c / p - b).max(0.0)
            } else if c == 0.0 {
                (-b).max(0.0)
            } else {
                continue;
            };
            // λ_max is increasing in d₂, so the smallest feasible d₂ is best.
            best = best.min(lmax(d1, lo));
        }
        best
    }

    #[test]
    fn two_by_two_matches_brute_force() {
        for &(a, b, c) in &[(1.0, -3.0, 2.0), (-1.0, -0.5, 0.7), (0.3, 0.2, 1.5)] {
            let w = [a, c, c, b];
            let sol = min_max_eigenvalue(&w, 2, None, &MaxEigOptions::default()).unwrap();
            let reference = brute_force_2x2(a, b, c);
            // The grid step 1e-3 in d₁ moves λ_max by at most 1e-3.
            assert!(
                (sol.lambda_max - reference).abs() <= 2e-3 + 2e-3 * reference,
                "{a} {b} {c}: {} vs {reference} ({sol:?})",
                sol.lambda_max
            );
            assert!(sol.lower_bound <= reference + 1e-9, "{sol:?}");
        }
    }

    #[test]
    fn bad_input_is_refused() {
        let o = MaxEigOptions::default();
        assert!(min_max_eigenvalue(&[1.0; 3], 2, None, &o).is_err());
        assert!(min_max_eigenvalue(&[], 0, None, &o).is_err());
        assert!(min_max_eigenvalue(&[f64::NAN; 4], 2, None, &o).is_err());
        assert!(min_max_eigenvalue(&[0.0; 4], 2, Some(&[-1.0, 0.0]), &o).is_err());
        assert!(min_max_eigenvalue(&[0.0; 4], 2, Some(&[1.0]), &o).is_err());
        let zero = min_max_eigenvalue(&[0.0; 4], 2, None, &o).unwrap();
        assert!(zero.lambda_max.abs() < 1e-12 && zero.converged);
    }
}
