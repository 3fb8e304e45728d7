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
//! convexity). It is minimised over `d ≥ 0` through the smoothing
//!
//! `F_μ(d) = μ ln Σ_j e^{λ_j/μ} + μ ln(1 + Σ_j e^{−λ_j/μ})`  (`λ_j` the eigenvalues of `W + D`),
//!
//! which overestimates `f` by at most `2 μ ln(n + 1)` and whose gradient,
//! `diag X − diag Y` with `X = Σ_j softmax(λ/μ)_j v_j v_jᵀ` and
//! `Y = Σ_j e^{−λ_j/μ}/(1 + Σ_k e^{−λ_k/μ}) · v_j v_jᵀ`, is `2/μ`-Lipschitz (Nesterov's
//! smoothing of eigenvalue functions). The solver runs accelerated projected gradient
//! descent (FISTA, step `μ/2`, momentum restarted whenever `F_μ` increases) from the better of
//! the shift point `max(0, −λ_min(W))·1` and an optional start (AB-max starts from the
//! trace-optimal `d`), lowering `μ` to an eighth of the certified gap over `ln(n + 1)` as the
//! gap closes, and keeps the best feasible point seen.
//!
//! Up to `n = 64` ([`MaxEigOptions::dense_up_to`]) one iteration is one dense symmetric
//! eigendecomposition (nalgebra), `O(n³)`. Above it the smoothing is restricted to the 8
//! largest and the 4 smallest eigenvalues (`μ ln Σ_{j ≤ 8} e^{λ_[j]/μ}`, still convex, within
//! `μ ln 8` of `λ_max`), whose pairs come from block Lanczos (see `lanczos.rs`): a converged
//! cold start on `W`, then one warm-started step of Krylov depth 3 per iteration from the
//! previous iteration's Ritz vectors, `36` products with `W + D` (`O(n²)` each) instead of an
//! `O(n³)` decomposition. The largest Ritz value never exceeds `λ_max`; the shift uses the
//! smallest Ritz value less its residual; the final `λ_max` is the converged Ritz value plus
//! its residual.
//!
//! # Accuracy
//!
//! The reported gap is certified by weak duality. The dual of the problem is
//! `max ⟨X − Y, W⟩` over `X, Y ⪰ 0`, `tr X = 1`, `diag Y ≤ diag X`; every iteration offers
//! the smoothing's own `X` and `cY` with the largest `c` such that `c·diag Y ≤ diag X` (built
//! from eigenvectors or, above `dense_up_to`, orthonormal Ritz vectors), at the
//! cost of `O(n²)` (`⟨X, W⟩ = Σ_j w_j λ_j − Σ_i d_i X_ii`), next to the trivial bound
//! `λ_max(W)` (adding `D ⪰ 0` never lowers `λ_max`). The solver stops when
//! `λ_max − bound ≤ rel_gap · λ_max` or after `max_iter` iterations; the answer is then still
//! feasible and no worse than the start, only less certified. On random dense `W`
//! (`n = 6 … 30`) the certified gap reaches `1e-3` within about 1000–1500 iterations at
//! `n ≤ 10` and is 0.3–3 % after 2000 iterations at `n = 16 … 30`; eigenvalue multiplicity at
//! the optimum slows it further.
//!
//! The returned `d` includes a final shift of `max(0, −λ_min) + margin`, with the margin
//! `16 n ε · max(1, max_i |W_ii + d_i|, max|W_ij|)` raised tenfold until a Cholesky
//! factorisation of `W + diag d` succeeds, so `W + diag d` is positive definite up to the
//! rounding of that factorisation.
//!
//! # Examples
//!
//! ```
//! use langevin_std::ab2::diagonal::{MaxEigOptions, min_max_eigenvalue};
//! // W = [[0, 1], [1, 0]]: the optimum is d = (1, 1) with λ_max = 2.
//! let w = [0.0, 1.0, 1.0, 0.0];
//! let sol = min_max_eigenvalue(&w, 2, None, &MaxEigOptions::default()).unwrap();
//! assert!((sol.lambda_max - 2.0).abs() < 1e-6);
//! ```

use super::lanczos::{BlockLanczos, COLD_DEPTH, COLD_STEPS};
use nalgebra::{DMatrix, SymmetricEigen};
use std::fmt;
use std::time::{Duration, Instant};

/// Settings of [`min_max_eigenvalue`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct MaxEigOptions {
    /// Stop when the certified relative gap is at most this (default `1e-3`).
    pub rel_gap: f64,
    /// Cap on iterations, one eigendecomposition each (default 200).
    pub max_iter: usize,
    /// Optional wall-clock cap (default none).
    pub time_limit: Option<Duration>,
    /// Largest `n` solved with dense eigendecompositions of the whole spectrum (default 64);
    /// above it every iteration uses block Lanczos on the extreme eigenpairs (see the module
    /// docs).
    pub dense_up_to: usize,
}

impl Default for MaxEigOptions {
    fn default() -> Self {
        Self {
            rel_gap: 1e-3,
            max_iter: 200,
            time_limit: None,
            dense_up_to: 64,
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

/// The extreme eigenvalues of `W + diag d`.
struct Extremes {
    /// `λ_max`, or a lower bound on it within the Lanczos residual.
    max: f64,
    /// `λ_min`, or (Lanczos) the smallest Ritz value less its residual.
    min: f64,
    /// `λ_max`, or (Lanczos) the largest Ritz value plus its residual.
    upper: f64,
}

fn extremes(w: &DMatrix<f64>, d: &[f64]) -> Extremes {
    let mut m = w.clone();
    for (i, &di) in d.iter().enumerate() {
        m[(i, i)] += di;
    }
    let eig = m.symmetric_eigenvalues();
    Extremes {
        max: eig.max(),
        min: eig.min(),
        upper: eig.max(),
    }
}

/// `f(d)`: the largest eigenvalue of the feasible point `d + max(0, −λ_min)·1`.
fn objective(e: &Extremes) -> f64 {
    e.max + (-e.min).max(0.0)
}

/// The smoothed objective at one point, its gradient, a dual bound and the exact objective.
struct Smoothed {
    /// `μ ln Σ_j e^{λ_j/μ} + μ ln(1 + Σ_j e^{−λ_j/μ})`.
    value: f64,
    grad: Vec<f64>,
    /// `⟨X − cY, W⟩` for the smoothing weights' `X`, `Y` and the largest admissible `c`.
    bound: f64,
    /// `f(d) = λ_max + max(0, −λ_min)`.
    exact: f64,
    /// `max(0, −λ_min)`.
    shift: f64,
}

/// One dense eigendecomposition of `W + diag d` and everything the solver needs from it.
///
/// With eigenpairs `(λ_j, v_j)`, the weights `w = softmax(λ/μ)` and
/// `s_j = e^{−λ_j/μ} / (1 + Σ_k e^{−λ_k/μ})` give `X = Σ w_j v_j v_jᵀ` (`tr X = 1`) and
/// `Y = Σ s_j v_j v_jᵀ`; the gradient is `diag X − diag Y`, and
/// `⟨X, W⟩ = Σ w_j λ_j − Σ_i d_i X_ii` (likewise for `Y`) costs `O(n²)`.
fn smoothed(w: &DMatrix<f64>, d: &[f64], mu: f64) -> Smoothed {
    let mut m = w.clone();
    for (i, &di) in d.iter().enumerate() {
        m[(i, i)] += di;
    }
    let eig = SymmetricEigen::new(m);
    let lam = &eig.eigenvalues;
    let pairs = (lam.as_slice(), &eig.eigenvectors);
    smoothed_from(pairs, pairs, lam.max(), lam.min(), d, mu)
}

/// The smoothing over the pairs `up` (the `X` side) and `down` (the `Y` side) at `d`, with
/// `λ_max = lmax` and `λ_min = lmin`.
///
/// The dense path passes the whole spectrum to both sides. The Lanczos path passes the
/// largest and the smallest Ritz pairs: the result is then the same smoothing restricted to
/// those eigenvalues, `μ ln Σ_{j ≤ k} e^{λ_[j]/μ}` (a maximum over index sets of convex
/// functions, so still convex, and within `μ ln k` of `λ_max`), and the bound stays certified
/// because `X` and `Y` built from orthonormal Ritz vectors are still dual feasible and
/// `v_jᵀ (W + D) v_j = θ_j` holds exactly for Ritz pairs.
fn smoothed_from(
    up: (&[f64], &DMatrix<f64>),
    down: (&[f64], &DMatrix<f64>),
    lmax: f64,
    lmin: f64,
    d: &[f64],
    mu: f64,
) -> Smoothed {
    let n = d.len();
    let shift = (-lmin).max(0.0);
    let up_w: Vec<f64> = up.0.iter().map(|&l| ((l - lmax) / mu).exp()).collect();
    let up_sum: f64 = up_w.iter().sum();
    // 1 + Σ e^{−λ/μ}, scaled by e^{−shift/μ} for stability.
    let down_w: Vec<f64> = down.0.iter().map(|&l| ((-l - shift) / mu).exp()).collect();
    let down_sum: f64 = (-shift / mu).exp() + down_w.iter().sum::<f64>();
    let value = lmax + mu * up_sum.ln() + shift + mu * down_sum.ln();
    let (mut xd, mut yd) = (vec![0.0; n], vec![0.0; n]);
    let (mut xl, mut yl) = (0.0, 0.0);
    for (j, v) in up.1.column_iter().enumerate() {
        let wj = up_w[j] / up_sum;
        xl += wj * up.0[j];
        for (i, &vi) in v.iter().enumerate() {
            xd[i] += wj * (vi * vi);
        }
    }
    for (j, v) in down.1.column_iter().enumerate() {
        let sj = down_w[j] / down_sum;
        yl += sj * down.0[j];
        for (i, &vi) in v.iter().enumerate() {
            yd[i] += sj * (vi * vi);
        }
    }
    let xw = xl - d.iter().zip(&xd).map(|(a, b)| a * b).sum::<f64>();
    let yw = yl - d.iter().zip(&yd).map(|(a, b)| a * b).sum::<f64>();
    let c = xd
        .iter()
        .zip(&yd)
        .filter(|&(_, &y)| y > 0.0)
        .map(|(&x, &y)| x / y)
        .fold(f64::INFINITY, f64::min);
    let bound = if yw < 0.0 && c.is_finite() {
        xw - c * yw
    } else {
        xw
    };
    Smoothed {
        value,
        grad: xd.iter().zip(&yd).map(|(x, y)| x - y).collect(),
        bound,
        exact: lmax + shift,
        shift,
    }
}

/// Largest Ritz pairs the Lanczos path keeps (the `X` side of the smoothing).
const TOP: usize = 8;
/// Smallest Ritz pairs the Lanczos path keeps (the `Y` side).
const BOTTOM: usize = 4;
/// Krylov depth of the warm-started step of each iteration.
const WARM_DEPTH: usize = 3;

/// Where the eigenpairs come from.
enum Eigen {
    /// Dense eigendecompositions of the whole spectrum.
    Dense,
    /// Block Lanczos on the extreme pairs, warm-started across calls.
    Lanczos(BlockLanczos),
}

impl Eigen {
    /// The extremes of `W + diag d`, to a residual of `1e-10` of the matrix's scale (Lanczos).
    fn extremes(&mut self, w: &DMatrix<f64>, d: &[f64], w_scale: f64) -> Extremes {
        match self {
            Self::Dense => extremes(w, d),
            Self::Lanczos(solver) => {
                let scale = w_scale + d.iter().fold(0.0f64, |a, v| a.max(v.abs()));
                let e = solver.converge(w, d, COLD_DEPTH, 1e-10 * scale, COLD_STEPS);
                Extremes {
                    max: e.max(),
                    min: e.min() - e.bottom_residual,
                    upper: e.max() + e.top_residual,
                }
            }
        }
    }

    /// The smoothing at `d`: dense over the whole spectrum, or over the Ritz pairs of one warm
    /// Lanczos step (with `λ_min` lowered by its residual, so the shift errs on the safe side).
    fn smoothed(&mut self, w: &DMatrix<f64>, d: &[f64], mu: f64) -> Smoothed {
        match self {
            Self::Dense => smoothed(w, d, mu),
            Self::Lanczos(solver) => {
                let e = solver.step(w, d, WARM_DEPTH);
                smoothed_from(
                    (&e.top_values, &e.top_vectors),
                    (&e.bottom_values, &e.bottom_vectors),
                    e.max(),
                    e.min() - e.bottom_residual,
                    d,
                    mu,
                )
            }
        }
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
    let w_scale = m.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    let (mut eigen, terms) = if n <= opts.dense_up_to || n < 2 * (TOP + BOTTOM) {
        (Eigen::Dense, n)
    } else {
        (Eigen::Lanczos(BlockLanczos::new(n, TOP, BOTTOM)), TOP)
    };
    let zero = vec![0.0; n];
    let at_zero = eigen.extremes(&m, &zero, w_scale);
    // λ_max(W) bounds the optimum from below: D ⪰ 0 never lowers the largest eigenvalue.
    let mut lower = at_zero.max;
    let shift = vec![(-at_zero.min).max(0.0); n];
    let mut d = shift;
    let mut e = eigen.extremes(&m, &d, w_scale);
    if let Some(s) = start {
        let es = eigen.extremes(&m, s, w_scale);
        if objective(&es) < objective(&e) {
            d = s.to_vec();
            e = es;
        }
    }
    let mut best_f = objective(&e);
    let mut best_d: Vec<f64> = d.iter().map(|&x| x + (-e.min).max(0.0)).collect();
    let mut iterations = 0usize;
    // Below this absolute gap the final margin dominates (an optimum at or near 0).
    let abs_tol = 32.0 * n as f64 * f64::EPSILON * m.iter().fold(1.0f64, |a, v| a.max(v.abs()));
    let gap_met = |f: f64, lb: f64| f - lb <= opts.rel_gap * f.abs() + abs_tol;
    // The smoothing's overestimate is at most 2 μ ln(terms + 1).
    let log_n = ((terms + 1) as f64).ln();
    let mut mu = (best_f - lower).max(0.0) / (4.0 * log_n);
    // Accelerated projected gradient (FISTA with adaptive restart) on the smoothed objective.
    let mut y = d.clone();
    let mut t = 1.0f64;
    let mut last = f64::INFINITY;
    while iterations < opts.max_iter && !gap_met(best_f, lower) && mu > 0.0 {
        if opts.time_limit.is_some_and(|tl| began.elapsed() >= tl) {
            break;
        }
        iterations += 1;
        let sm = eigen.smoothed(&m, &y, mu);
        lower = lower.max(sm.bound);
        if sm.exact < best_f {
            best_f = sm.exact;
            best_d = y.iter().map(|&x| x + sm.shift).collect();
        }
        // Continuation: the smoothing error is at most 2 μ ln(n + 1); keep it near a quarter
        // of the certified gap.
        let wanted = (best_f - lower).max(0.0) / (8.0 * log_n);
        let restart = sm.value > last || wanted < 0.5 * mu;
        if wanted < 0.5 * mu {
            mu = wanted;
        }
        let step = 0.5 * mu;
        let next: Vec<f64> = y
            .iter()
            .zip(&sm.grad)
            .map(|(&yi, &gi)| (yi - step * gi).max(0.0))
            .collect();
        if restart {
            t = 1.0;
            y = next.clone();
        } else {
            let t_next = 0.5 * (1.0 + (1.0 + 4.0 * t * t).sqrt());
            let beta = (t - 1.0) / t_next;
            y = next
                .iter()
                .zip(&d)
                .map(|(&a, &b)| (a + beta * (a - b)).max(0.0))
                .collect();
            t = t_next;
        }
        d = next;
        last = sm.value;
    }
    let d = certify(&m, best_d)?;
    let fin = eigen.extremes(&m, &d, w_scale);
    let lambda_max = fin.upper;
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

    /// `λ_min`, `λ_max` of `W + diag d` by the dense solver.
    fn dense_extremes(w: &[f64], d: &[f64], n: usize) -> (f64, f64) {
        let mut m = DMatrix::from_row_slice(n, n, w);
        for (i, &di) in d.iter().enumerate() {
            m[(i, i)] += di;
        }
        let e = m.symmetric_eigenvalues();
        (e.min(), e.max())
    }

    /// The Lanczos path keeps the rule's defining properties: `d ≥ 0`, `W + diag d ⪰ 0`, the
    /// reported `λ_max` is that of the returned `d`, the result is no worse than the shift
    /// point, and its lower bound is below every feasible point's `λ_max` (here the dense
    /// path's answer).
    #[test]
    fn lanczos_path_keeps_the_rule() {
        use super::super::lanczos::testing::{barabasi_albert, random_symmetric};
        let mut cases: Vec<(&str, usize, Vec<f64>)> = vec![
            ("random 90", 90, random_symmetric(90, 11)),
            ("random 150", 150, random_symmetric(150, 12)),
        ];
        // A ferromagnetic BA coupling with a random diagonal, as an AB-2 fit sees it.
        let n = 160;
        let mut g: Vec<f64> = barabasi_albert(n, 4, 13)
            .iter()
            .map(|v| -0.44 * v)
            .collect();
        let r = random_symmetric(n, 14);
        for i in 0..n {
            g[i * n + i] = r[i * n + i];
        }
        cases.push(("BA 160", n, g));
        for (name, n, w) in cases {
            let opts = MaxEigOptions {
                max_iter: 80,
                ..MaxEigOptions::default()
            };
            assert!(n > opts.dense_up_to);
            let sol = min_max_eigenvalue(&w, n, None, &opts).unwrap();
            let dense = min_max_eigenvalue(
                &w,
                n,
                None,
                &MaxEigOptions {
                    dense_up_to: n,
                    ..opts.clone()
                },
            )
            .unwrap();
            let (lmin, lmax) = dense_extremes(&w, &sol.d, n);
            let scale = lmax.abs().max(1.0);
            assert!(sol.d.iter().all(|&v| v >= 0.0 && v.is_finite()), "{name}");
            assert!(lmin >= -1e-9 * scale, "{name}: λ_min {lmin}");
            assert!(
                (sol.lambda_max - lmax).abs() <= 1e-8 * scale,
                "{name}: {} vs {lmax}",
                sol.lambda_max
            );
            let (w_min, w_max) = dense_extremes(&w, &vec![0.0; n], n);
            let shift_point = w_max + (-w_min).max(0.0);
            assert!(sol.lambda_max <= shift_point + 1e-8 * scale, "{name}");
            assert!(sol.lower_bound <= sol.lambda_max, "{name}");
            assert!(sol.lower_bound <= dense.lambda_max + 1e-9 * scale, "{name}");
            assert!(dense.lower_bound <= sol.lambda_max + 1e-9 * scale, "{name}");
            assert!(
                (sol.lambda_max - sol.lower_bound) / sol.lambda_max <= sol.rel_gap + 1e-12,
                "{name}"
            );
        }
    }
}
