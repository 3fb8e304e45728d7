//! SDP-lite: the diagonal SDP `min Σ d_i  s.t.  d ≥ 0,  W + diag(d) ⪰ 0` that chooses the
//! diagonal `D` of the AB-trace sampler.
//!
//! # Method
//!
//! The problem is the dual of `max ⟨−W, X⟩  s.t.  diag(X) ≤ 1, X ⪰ 0` (the multipliers of
//! `X_ii ≤ 1` are the `d_i ≥ 0`). The solver runs low-rank coordinate ascent on that primal
//! (`X = V Vᵀ`, rows of `V` in the unit ball, rank `⌈√(2n)⌉`, over-relaxed: the "mixing
//! method"), reads `d₀` off its fixed point (`d₀_i = max(0, |g_i| − W_ii)`), and at checkpoints
//! certifies a pair of bounds:
//!
//! * **lower bound**: `⟨−W, V Vᵀ⟩` for the current `V`, a feasible primal point, bounds the
//!   optimum from below (weak duality);
//! * **upper bound**: `d = d₀ + s·1 + ρ·1`, where the shift `s ≥ −λ_min(W + diag d₀)` comes
//!   from a Rayleigh–Ritz estimate on `span(V, (W + D₀) V)` plus a margin, is proved by a
//!   Cholesky factorisation of `W + diag(d₀ + s)` that runs to completion, and `ρ` is the
//!   factorisation's rounding-error bound (`≈ n² ε max_i (W_ii + d_i)`), so `W + diag(d)` is
//!   positive semidefinite; `Σ d` bounds the optimum from above.
//!
//! The reported `rel_gap = (trace − lower_bound) / trace` is therefore a certified bound on the
//! relative sub-optimality of the returned `d`, which is always feasible. Sparse matrices
//! keep every sweep at `O(nnz · k)` and are factorised in a reverse Cuthill–McKee order that
//! confines fill to an envelope.
//!
//! Special cases are exact: a diagonal `W` gives `d_i = max(0, −W_ii)`; a positive
//! semidefinite `W` (checked by a Cholesky factorisation of `W + 5e-10 · max|W_ij| · I` first)
//! gives `d = 0`.
//!
//! # Performance
//!
//! Single-threaded, to a certified gap of `1e-3`: a few milliseconds at `n = 400` (grid and
//! spin glass), tens of milliseconds for a dense `n = 784`, about a tenth of a second for a
//! sparse `n = 2000` (see the `sdp` benchmark). The cost per sweep is one pass over `W` times
//! the rank; a certificate costs one Cholesky factorisation.
//!
//! # Examples
//!
//! ```
//! use langevin_std::sdp::{solve_diagonal_sdp, SdpOptions, SymmetricMatrix};
//! // A 4-cycle Ising coupling matrix.
//! let mut w = vec![0.0; 16];
//! for i in 0..4 {
//!     let j = (i + 1) % 4;
//!     w[i * 4 + j] = 1.0;
//!     w[j * 4 + i] = 1.0;
//! }
//! let w = SymmetricMatrix::from_row_major(4, 4, &w)?;
//! let sol = solve_diagonal_sdp(&w, &SdpOptions::default())?;
//! // The optimum is d = (2, 2, 2, 2): λ_min of the cycle is −2.
//! assert!((sol.trace - 8.0).abs() <= 1e-3 * 8.0);
//! assert!(sol.rel_gap <= 1e-3);
//! # Ok::<(), langevin_std::sdp::SdpError>(())
//! ```
//!
//! # References
//!
//! * Sun et al., "Any-scale Balanced Samplers for Discrete Spaces", ICLR 2023, eq. (19).
//! * Wang, Chang, Kolter, "The mixing method: low-rank coordinate descent for semidefinite
//!   programming with diagonal constraints", 2017.

mod certify;
#[cfg(test)]
mod exact_psd;
mod matrix;
mod mixing;
mod subspace;

use std::time::{Duration, Instant};

pub use matrix::SymmetricMatrix;

use certify::{Ordering, factor};
use matrix::Repr;
use mixing::Mixing;

/// Settings of [`solve_diagonal_sdp`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct SdpOptions {
    /// Stop once the certified relative gap `(trace − lower_bound) / trace` is at most this
    /// (in `(0, 1)`; default `1e-3`).
    pub rel_gap: f64,
    /// Cap on the number of coordinate-ascent sweeps (default 20 000).
    pub max_sweeps: usize,
    /// Optional wall-clock cap; the best certified answer so far is returned when it passes.
    pub time_limit: Option<Duration>,
    /// Rank of the factor `V`; `None` for `⌈√(2n)⌉`, enough to hold an optimal `X` (one of
    /// rank `r` with `r(r+1)/2 ≤ n` always exists: Barvinok–Pataki). A smaller rank can stall
    /// above the optimum; the certificate stays honest and `converged` says so.
    pub rank: Option<usize>,
    /// Over-relaxation factor `ω` in `[1, 2)` (default 1.7).
    pub over_relaxation: f64,
    /// Seed of the random initial factor.
    pub seed: u64,
}

impl Default for SdpOptions {
    fn default() -> Self {
        Self {
            rel_gap: 1e-3,
            max_sweeps: 20_000,
            time_limit: None,
            rank: None,
            over_relaxation: 1.7,
            seed: 0x5d_1e_5d_1e,
        }
    }
}

impl SdpOptions {
    /// Options with the given relative-gap target and defaults otherwise.
    pub fn with_rel_gap(rel_gap: f64) -> Self {
        Self {
            rel_gap,
            ..Self::default()
        }
    }
}

/// One certification checkpoint of a solve.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SdpCheckpoint {
    /// Sweeps done when it was taken.
    pub sweeps: usize,
    /// Time since the solve started.
    pub elapsed: Duration,
    /// Best certified trace so far.
    pub trace: f64,
    /// Best lower bound so far.
    pub lower_bound: f64,
    /// Certified relative gap of the two.
    pub rel_gap: f64,
}

/// A certified solution of the diagonal SDP.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct SdpSolution {
    /// The diagonal `d ≥ 0`; `W + diag(d)` is certified positive semidefinite.
    pub d: Vec<f64>,
    /// `Σ d_i`.
    pub trace: f64,
    /// A certified lower bound on the optimal trace (a primal feasible value).
    pub lower_bound: f64,
    /// `(trace − lower_bound) / trace` (0 when both are 0): the certified relative gap.
    pub rel_gap: f64,
    /// A certified lower bound on `λ_min(W + diag d)`: 0 for a solve (the rounding bound is
    /// already in `d`), `min_i max(W_ii, 0)` exactly for a diagonal `W`, and
    /// `−(5e-10 · max|W_ij| + ρ)` for a positive semidefinite `W` answered with `d = 0`. Never
    /// below `−1e-9 · max|W_ij|` for `n` up to about 2000 (beyond, the rigorous rounding bound
    /// of the `d = 0` check grows past it, while its realistic size stays near `√n ε`).
    pub lambda_min: f64,
    /// Coordinate-ascent sweeps run.
    pub iterations: usize,
    /// Wall-clock time of the solve.
    pub wall_time: Duration,
    /// True when `rel_gap ≤` the requested gap, or when `trace − lower_bound` is below the
    /// feasibility tolerance `n · 1e-9 · max|W_ij|` (an optimum near 0).
    pub converged: bool,
    /// The certification checkpoints, in order.
    pub history: Vec<SdpCheckpoint>,
}

/// Why the SDP could not be set up.
#[derive(Clone, Debug, thiserror::Error, PartialEq)]
#[non_exhaustive]
pub enum SdpError {
    /// A zero-dimensional matrix.
    #[error("the matrix is empty")]
    Empty,
    /// A matrix with `rows ≠ cols`.
    #[error("the matrix is {rows} × {cols}, not square")]
    NotSquare {
        /// Rows given.
        rows: usize,
        /// Columns given.
        cols: usize,
    },
    /// The data length is not `rows × cols`.
    #[error("matrix data has {found} entries, expected {expected}")]
    Length {
        /// `rows × cols`.
        expected: usize,
        /// Length given.
        found: usize,
    },
    /// A NaN or infinite entry.
    #[error("entry ({row}, {col}) is {value}, not finite")]
    NonFinite {
        /// Its row.
        row: usize,
        /// Its column.
        col: usize,
        /// The value.
        value: f64,
    },
    /// `|W_ij − W_ji| > 1e-9 · max|W|`.
    #[error("the matrix is not symmetric: W[{row},{col}] = {upper} but W[{col},{row}] = {lower}")]
    Asymmetric {
        /// Row `i` (`i < j`).
        row: usize,
        /// Column `j`.
        col: usize,
        /// `W_ij`.
        upper: f64,
        /// `W_ji`.
        lower: f64,
    },
    /// A sparse entry outside `0..n`.
    #[error("entry ({row}, {col}) is outside a {n} × {n} matrix")]
    IndexOutOfRange {
        /// Row given.
        row: usize,
        /// Column given.
        col: usize,
        /// The dimension.
        n: usize,
    },
    /// An option out of range (the field's name).
    #[error("SDP option `{0}` is out of range")]
    InvalidOption(&'static str),
    /// Entries so large that the feasible diagonal overflows `f64`.
    #[error("the entries are too large for a diagonal representable in f64")]
    OutOfScale,
}

/// Row-space directions of `V` whose Gram eigenvalue is below this fraction of the largest
/// are dead (components below about `1e-7`) and are dropped.
const DEAD_DIRECTION: f64 = 1e-14;

/// The feasibility tolerance relative to `max|W_ij|`.
const FEAS_TOL: f64 = 1e-9;

/// Solves `min Σ d_i  s.t.  d ≥ 0,  W + diag(d) ⪰ 0` to the requested certified gap.
///
/// Always returns a feasible `d` with a certified gap; when the sweep or time cap stops the
/// solve early, `converged` is false and `rel_gap` says how far from optimal `d` may be.
///
/// # Errors
///
/// [`SdpError::InvalidOption`] for a `rel_gap` outside `(0, 1)`, an `over_relaxation`
/// outside `[1, 2)`, or a rank of 0.
pub fn solve_diagonal_sdp(w: &SymmetricMatrix, opts: &SdpOptions) -> Result<SdpSolution, SdpError> {
    // The problem is homogeneous, d(cW) = c·d(W): work at unit scale so that huge or subnormal
    // entries cannot overflow or underflow the certificate. A power of two makes both
    // rescalings exact.
    let m = w.max_abs();
    if !(m > 0.0 && m.is_finite()) {
        return solve_unit_scale(w, opts);
    }
    let e = if (0.25..=4.0).contains(&m) {
        0
    } else {
        m.log2().round() as i32
    };
    // Subnormal entries (after scaling) are flushed to zero: they change W by far less than
    // the rounding margin the certificate adds to d, and they would otherwise turn the
    // coordinate updates' divisions into infinities.
    let dense = w.to_dense();
    let flush = |x: f64| if x.abs() < f64::MIN_POSITIVE { 0.0 } else { x };
    if e == 0 && dense.iter().all(|&x| flush(x) == x) {
        return solve_unit_scale(w, opts);
    }
    let scaled: Vec<f64> = dense.iter().map(|&x| flush(times_pow2(x, -e))).collect();
    let n = w.dim();
    // Each row's flushed entries E perturb W by a matrix that `diag(Σ_j |E_ij|)` dominates, so
    // adding those sums to d keeps W + diag(d) positive semidefinite.
    let flushed: Vec<f64> = dense
        .chunks_exact(n.max(1))
        .zip(scaled.chunks_exact(n.max(1)))
        .map(|(row, kept)| {
            row.iter()
                .zip(kept)
                .filter(|(_, k)| **k == 0.0)
                .map(|(x, _)| x.abs())
                .sum()
        })
        .collect();
    let mut sol = solve_unit_scale(&SymmetricMatrix::from_row_major(n, n, &scaled)?, opts)?;
    for (x, extra) in sol.d.iter_mut().zip(&flushed) {
        // Round up: a scaled-back entry that lost bits to underflow must not shrink.
        let mut back = times_pow2(*x, e);
        while times_pow2(back, -e) < *x {
            back = back.next_up();
        }
        *x = back + extra;
    }
    sol.trace = sol.d.iter().sum();
    // Round the bound down, for the same reason d is rounded up: it must stay a certificate.
    let scaled_lower = sol.lower_bound;
    sol.lower_bound = times_pow2(scaled_lower, e);
    while sol.lower_bound.is_finite() && times_pow2(sol.lower_bound, -e) > scaled_lower {
        sol.lower_bound = sol.lower_bound.next_down();
    }
    sol.rel_gap = relative_gap(sol.trace, sol.lower_bound);
    sol.lambda_min = times_pow2(sol.lambda_min, e);
    for c in &mut sol.history {
        c.trace = times_pow2(c.trace, e);
        c.lower_bound = times_pow2(c.lower_bound, e);
    }
    if sol.d.iter().any(|x| !x.is_finite()) {
        return Err(SdpError::OutOfScale);
    }
    Ok(sol)
}

/// `x · 2^e`, exact unless the result over- or underflows, for any `e` (even where `2^e` alone
/// is not a double).
fn times_pow2(x: f64, e: i32) -> f64 {
    let (mut x, mut e) = (x, e);
    while e > 1000 {
        x *= 2f64.powi(1000);
        e -= 1000;
    }
    while e < -1000 {
        x *= 2f64.powi(-1000);
        e += 1000;
    }
    x * 2f64.powi(e)
}

/// [`solve_diagonal_sdp`] for a matrix whose largest entry is of order one.
fn solve_unit_scale(w: &SymmetricMatrix, opts: &SdpOptions) -> Result<SdpSolution, SdpError> {
    solve_counted(w, opts, w.dim() >= CALIBRATE_MIN_DIM).map(|(sol, _)| sol)
}

/// [`solve_unit_scale`] with the shift calibration (see [`MixingSolve::shift_scale`]) on or
/// off, also returning the number of Cholesky factorisations its certificates ran.
fn solve_counted(
    w: &SymmetricMatrix,
    opts: &SdpOptions,
    calibrate: bool,
) -> Result<(SdpSolution, usize), SdpError> {
    let start = Instant::now();
    check_options(opts)?;
    if let Some(solution) = diagonal_solution(w, start) {
        return Ok((solution, 0));
    }
    let ordering = Ordering::new(w);
    if let Some(solution) = definite_solution(w, &ordering, start) {
        return Ok((solution, 1));
    }
    let n = w.dim();
    let nf = n as f64;
    let tol = FEAS_TOL * w.max_abs();
    let rank = opts
        .rank
        .unwrap_or_else(|| ((2.0 * nf).sqrt().ceil() as usize).max(1))
        .min(n);
    let mut solve = MixingSolve::new(n, rank, opts.seed, calibrate);
    let mut schedule = Checkpoints::new();
    let mut sweeps = 0usize;
    // Checkpoints cost a block product, a Rayleigh–Ritz step and possibly a factorisation,
    // so they are placed where the gap should be met (see [`Checkpoints`]). Everything is
    // counted in sweeps, never in time, so a solve is reproducible.
    let mut objective = solve.mix.bound_and_dual(w, &mut solve.g, &mut solve.d0);
    let mut ratio = f64::INFINITY;
    loop {
        let out_of_time = opts.time_limit.is_some_and(|t| start.elapsed() >= t);
        let last = out_of_time || sweeps >= opts.max_sweeps;
        if schedule.due(sweeps, ratio, opts.rel_gap) || last {
            let (lower, predicted) = solve.checkpoint(w, &ordering, opts, tol, last);
            let gap = relative_gap(solve.best_upper, solve.best_lower);
            if solve.best.is_some() {
                solve.history.push(SdpCheckpoint {
                    sweeps,
                    elapsed: start.elapsed(),
                    trace: solve.best_upper,
                    lower_bound: solve.best_lower,
                    rel_gap: gap,
                });
            }
            // Below n·tol the trace is as settled as feasibility itself: done whatever the
            // relative gap (it matters only when the optimum is nearly 0).
            let met = gap <= opts.rel_gap || solve.best_upper - solve.best_lower <= nf * tol;
            if let Some(d) = solve.best.as_ref().filter(|_| met || last) {
                let solution = SdpSolution {
                    d: d.clone(),
                    trace: solve.best_upper,
                    lower_bound: solve.best_lower,
                    rel_gap: gap,
                    lambda_min: 0.0,
                    iterations: sweeps,
                    wall_time: start.elapsed(),
                    converged: met,
                    history: std::mem::take(&mut solve.history),
                };
                return Ok((solution, solve.factorisations));
            }
            schedule.plan(sweeps, ratio, predicted, opts.rel_gap);
            objective = lower;
        }
        let gain = solve.mix.sweep(w, opts.over_relaxation);
        objective += gain;
        ratio = gain.max(0.0) / objective.abs().max(f64::MIN_POSITIVE);
        sweeps += 1;
    }
}

/// Refuses options outside their ranges.
fn check_options(opts: &SdpOptions) -> Result<(), SdpError> {
    if !(opts.rel_gap > 0.0 && opts.rel_gap < 1.0) {
        return Err(SdpError::InvalidOption("rel_gap"));
    }
    if !(1.0..2.0).contains(&opts.over_relaxation) {
        return Err(SdpError::InvalidOption("over_relaxation"));
    }
    if opts.rank == Some(0) {
        return Err(SdpError::InvalidOption("rank"));
    }
    Ok(())
}

/// The exact solution of a diagonal `W`: `X = diag(1 where W_ii < 0)` attains
/// `Σ max(0, −W_ii)`, so the bound is exact.
fn diagonal_solution(w: &SymmetricMatrix, start: Instant) -> Option<SdpSolution> {
    if !w.is_diagonal() {
        return None;
    }
    let d: Vec<f64> = w.diagonal().iter().map(|&x| (-x).max(0.0)).collect();
    let lower = d.iter().sum();
    let lambda_min = w
        .diagonal()
        .iter()
        .fold(f64::INFINITY, |m, &x| m.min(x.max(0.0)));
    Some(exact_solution(d, lower, lambda_min, start))
}

/// The exact solution `d = 0` (attained by `X = 0`) when `W + (tol/2) I ≻ 0` up to rounding.
fn definite_solution(
    w: &SymmetricMatrix,
    ordering: &Ordering,
    start: Instant,
) -> Option<SdpSolution> {
    if !may_be_psd(w) {
        return None;
    }
    let n = w.dim();
    let tol = FEAS_TOL * w.max_abs();
    let f = factor(w, &vec![0.5 * tol; n], ordering);
    if f.failed_at.is_some() {
        return None;
    }
    let bound = -(0.5 * tol + rounding_bound(n, f.max_diag));
    Some(exact_solution(vec![0.0; n], 0.0, bound, start))
}

/// A solution found without iterating.
fn exact_solution(d: Vec<f64>, lower: f64, lambda_min: f64, start: Instant) -> SdpSolution {
    let trace: f64 = d.iter().sum();
    SdpSolution {
        d,
        trace,
        lower_bound: lower,
        rel_gap: relative_gap(trace, lower),
        lambda_min,
        iterations: 0,
        wall_time: start.elapsed(),
        converged: true,
        history: Vec::new(),
    }
}

/// When the next checkpoint is due. The gap tracks the square root of the primal gain per
/// sweep (the primal error is quadratic in the error of V, the dual read-off linear):
/// `gap ≈ c · √(gain / |f|)`, with `c` calibrated at each checkpoint; from the second
/// checkpoint on, a log-linear extrapolation of the gap bounds the wait.
struct Checkpoints {
    c_est: f64,
    last_check: usize,
    cap: usize,
    last_prediction: Option<(usize, f64)>,
}

impl Checkpoints {
    fn new() -> Self {
        Self {
            c_est: 0.15,
            last_check: 0,
            cap: 48,
            last_prediction: None,
        }
    }

    /// Whether a checkpoint is due after `sweeps` sweeps, the last of which gained `ratio`.
    fn due(&self, sweeps: usize, ratio: f64, rel_gap: f64) -> bool {
        sweeps > 0
            && (self.c_est * ratio.sqrt() <= 0.7 * rel_gap || sweeps - self.last_check >= self.cap)
    }

    /// Calibrates the schedule on a checkpoint after `sweeps` sweeps that predicted the gap
    /// `predicted`.
    fn plan(&mut self, sweeps: usize, ratio: f64, predicted: f64, rel_gap: f64) {
        if ratio > 0.0 && ratio.is_finite() && predicted > 0.0 {
            self.c_est = predicted / ratio.sqrt();
        }
        self.cap = sweeps.max(8);
        if let Some((s_prev, p_prev)) = self.last_prediction {
            let rate = (predicted / p_prev).ln() / (sweeps - s_prev) as f64;
            let needed = (0.7 * rel_gap / predicted).ln() / rate;
            if rate < 0.0 && needed.is_finite() && needed > 0.0 {
                self.cap = self.cap.min((needed.ceil() as usize).max(1));
            }
        }
        if predicted > 0.0 {
            self.last_prediction = Some((sweeps, predicted));
        }
        self.last_check = sweeps;
    }
}

/// The mixing iterate, its buffers, and the best certified bounds so far.
struct MixingSolve {
    mix: Mixing,
    /// Row stride of `mix`'s factor and of `g`.
    kp: usize,
    /// `W V` (then the Krylov block), `n × kp`.
    g: Vec<f64>,
    /// The dual read-off of the current iterate.
    d0: Vec<f64>,
    best: Option<Vec<f64>>,
    best_upper: f64,
    best_lower: f64,
    history: Vec<SdpCheckpoint>,
    /// Whether checkpoints calibrate [`Self::shift_scale`] (from [`CALIBRATE_MIN_DIM`] on).
    calibrate: bool,
    /// The factor by which the Ritz estimate of the shift fell short at the last
    /// certificate (in `[1, MAX_SHIFT_SCALE]`; always 1 without calibration).
    shift_scale: f64,
    /// Cholesky factorisations run by the certificates so far.
    factorisations: usize,
}

impl MixingSolve {
    fn new(n: usize, rank: usize, seed: u64, calibrate: bool) -> Self {
        let mix = Mixing::new(n, rank, seed);
        let kp = mix.stride();
        Self {
            mix,
            kp,
            g: vec![0.0; n * kp],
            d0: vec![0.0; n],
            best: None,
            best_upper: f64::INFINITY,
            best_lower: f64::NEG_INFINITY,
            history: Vec::new(),
            calibrate,
            shift_scale: 1.0,
            factorisations: 0,
        }
    }

    /// A checkpoint: the lower bound of the current iterate, a Ritz estimate of the shift
    /// that makes its dual read-off feasible, and, when that promises the gap (or on the
    /// `last` checkpoint without a certificate yet), a certified upper bound. Returns the
    /// lower bound and the predicted gap.
    fn checkpoint(
        &mut self,
        w: &SymmetricMatrix,
        ordering: &Ordering,
        opts: &SdpOptions,
        tol: f64,
        last: bool,
    ) -> (f64, f64) {
        let n = w.dim();
        let nf = n as f64;
        self.mix.compress(DEAD_DIRECTION);
        if self.mix.stride() != self.kp {
            self.kp = self.mix.stride();
            self.g = vec![0.0; n * self.kp];
        }
        let kp = self.kp;
        let lower = self.mix.bound_and_dual(w, &mut self.g, &mut self.d0);
        self.best_lower = self.best_lower.max(lower);
        // (W + D0) V = G + D0 V: the Krylov block for the Ritz estimate.
        let v = self.mix.factor();
        let rows = self.g.chunks_exact_mut(kp).zip(v.chunks_exact(kp));
        for ((gi, vi), &di) in rows.zip(&self.d0) {
            gi.iter_mut().zip(vi).for_each(|(o, &x)| *o += di * x);
        }
        let theta = subspace::bottom_eigenvalue(w, &self.d0, v, &self.g, kp);
        // The uniform shift −θ makes W + D0 PSD if the Ritz value is exact; it errs on the
        // optimistic side (by a few per cent of |θ| on the reference cases), so a margin
        // taken from the slack that the requested gap leaves saves failed factorisations.
        // The Ritz value can miss the bottom of the spectrum by a factor of several (when V
        // spans the near-null space of W + D0 but not its negative directions, as for a
        // low-rank matrix with its diagonal removed), and then by a similar factor at every
        // checkpoint: scaled by the last certificate's ratio, the prediction stays honest
        // and the factorisations that an optimistic shift would fail are skipped.
        // The scale already holds the margin the last certificate needed; the Ritz margin is
        // taken on the unscaled estimate. (At scale 1 the last term is +0 and the slack is
        // bit for bit what it was before the scale existed.)
        let ritz = (-theta).max(0.0);
        let base = ritz * self.shift_scale;
        let sum0: f64 = self.d0.iter().sum();
        let max_trace = self.best_lower.max(0.0) / (1.0 - opts.rel_gap);
        let slack = (max_trace - sum0 - 1.02 * nf * base + 0.02 * nf * (base - ritz)).max(0.0) / nf;
        let shift = base + (0.02 * ritz).max((0.25 * ritz).min(0.5 * slack));
        let predicted = relative_gap(sum0 + nf * shift, self.best_lower);
        let close = sum0 + nf * shift - self.best_lower <= nf * tol;
        if predicted <= opts.rel_gap || close || (last && self.best.is_none()) {
            let step = (0.25 * slack).max(0.5 * base).max(tol);
            let (d, used, attempts) = certify_shift(w, ordering, &self.d0, shift, step);
            self.factorisations += attempts;
            if self.calibrate && shift > 0.0 {
                self.shift_scale = if used > shift {
                    // The shift that passed, over the one tried: an upper bound on how far
                    // the estimate fell short (the doubling may overshoot by up to 2×).
                    (self.shift_scale * used / shift).min(MAX_SHIFT_SCALE)
                } else {
                    // Passed at once: the scale may be stale, let it decay towards 1.
                    (0.8 * self.shift_scale).max(1.0)
                };
            }
            let upper: f64 = d.iter().sum();
            if upper < self.best_upper {
                self.best_upper = upper;
                self.best = Some(d);
            }
        }
        (lower, predicted)
    }
}

/// A necessary condition for `W ⪰ 0` that costs no factorisation: a non-negative diagonal
/// and `W_ij² ≤ W_ii W_jj` (up to the feasibility tolerance).
fn may_be_psd(w: &SymmetricMatrix) -> bool {
    let diag = w.diagonal();
    if diag.iter().any(|&x| x < 0.0) {
        return false;
    }
    let tol = FEAS_TOL * w.max_abs();
    let n = w.dim();
    match w.repr() {
        Repr::Dense(a) => (0..n).all(|i| {
            (0..i).all(|j| {
                let x = a[i * n + j];
                x * x <= (diag[i] + tol) * (diag[j] + tol)
            })
        }),
        Repr::Sparse {
            row_ptr,
            cols,
            vals,
        } => (0..n).all(|i| {
            (row_ptr[i]..row_ptr[i + 1])
                .all(|k| vals[k] * vals[k] <= (diag[i] + tol) * (diag[cols[k]] + tol))
        }),
    }
}

/// Finds `s ≥ shift` with `W + diag(d0) + s I` certified positive definite by a Cholesky
/// factorisation, growing `s` by at least `step` (and at least doubling it) after each
/// failure, and jumping to the Gershgorin bound after three; returns `d0 + s + ρ` with ρ the
/// rounding bound of the successful factorisation, which makes `W + diag(d)` positive
/// semidefinite despite rounding, with `s` and the number of factorisations run.
fn certify_shift(
    w: &SymmetricMatrix,
    ordering: &Ordering,
    d0: &[f64],
    shift: f64,
    step: f64,
) -> (Vec<f64>, f64, usize) {
    let mut s = shift;
    let mut d: Vec<f64> = d0.iter().map(|x| x + s).collect();
    for failures in 0..MAX_CERTIFY_ATTEMPTS {
        let f = factor(w, &d, ordering);
        if f.failed_at.is_none() {
            let rho = rounding_bound(w.dim(), f.max_diag);
            d.iter_mut().for_each(|x| *x += rho);
            return (d, s, failures + 1);
        }
        let mut next = (2.0 * s).max(s + step);
        if failures >= 2 {
            // Strict diagonal dominance: W + diag(d0) + s I ≻ 0 by Gershgorin.
            next = next.max(gershgorin_shift(w, d0) + step);
        }
        d.iter_mut().for_each(|x| *x += next - s);
        s = next;
    }
    // Unreachable for finite input at unit scale (the Gershgorin shift succeeds), but a bound
    // on the loop beats trusting that: diagonal dominance with a margin proves feasibility.
    let g = gershgorin_shift(w, d0) + step.max(0.0);
    let top = w.max_abs() + g + d0.iter().fold(0.0f64, |a, &b| a.max(b.abs()));
    let rho = rounding_bound(w.dim(), top);
    let d = d0.iter().map(|x| x + g + rho).collect();
    (d, g, MAX_CERTIFY_ATTEMPTS)
}

/// Dimension from which checkpoints scale the Ritz estimate of the shift by the ratio the
/// last certificate needed (see [`MixingSolve::shift_scale`]). Below it a failed
/// factorisation is cheap, and solves keep the shifts they had before the scaling existed.
const CALIBRATE_MIN_DIM: usize = 256;

/// Cap on [`MixingSolve::shift_scale`]: a certificate that needed far more than the estimate
/// (a Gershgorin fallback, or a shift near 0 grown by a whole step) must not make every later
/// prediction so pessimistic that no certificate is tried until the sweep cap.
const MAX_SHIFT_SCALE: f64 = 16.0;

/// Failed factorisations after which [`certify_shift`] falls back to the Gershgorin diagonal.
const MAX_CERTIFY_ATTEMPTS: usize = 64;

/// The smallest `s` with `W + diag(d0) + s I` diagonally dominant.
fn gershgorin_shift(w: &SymmetricMatrix, d0: &[f64]) -> f64 {
    let n = w.dim();
    let diag = w.diagonal();
    let offdiag: Vec<f64> = match w.repr() {
        Repr::Dense(a) => a
            .chunks_exact(n)
            .enumerate()
            .map(|(i, row)| row.iter().map(|x| x.abs()).sum::<f64>() - diag[i].abs())
            .collect(),
        Repr::Sparse { row_ptr, vals, .. } => (0..n)
            .map(|i| {
                vals[row_ptr[i]..row_ptr[i + 1]]
                    .iter()
                    .map(|x| x.abs())
                    .sum()
            })
            .collect(),
    };
    (0..n)
        .map(|i| offdiag[i] - diag[i] - d0[i])
        .fold(0.0f64, f64::max)
}

/// `(upper − lower) / upper`, 0 when both vanish.
fn relative_gap(upper: f64, lower: f64) -> f64 {
    let diff = (upper - lower).max(0.0);
    if diff == 0.0 {
        0.0
    } else {
        let gap = diff / upper.abs().max(lower.abs());
        // No finite bound yet (lower = −∞): the gap is unbounded, not undefined.
        if gap.is_nan() { f64::INFINITY } else { gap }
    }
}

/// A bound on `‖ΔA‖₂` for a Cholesky factorisation `A + ΔA = L Lᵀ` that ran to completion
/// on a matrix with diagonal at most `max_diag`: Demmel's componentwise bound
/// `|ΔA| ≤ γ_{n+1} |L| |Lᵀ|` with `(|L||Lᵀ|)_ij ≤ √(A_ii A_jj)`, so
/// `‖ΔA‖₂ ≤ n γ_{n+1} max_i A_ii`. Adding it to `d` makes `W + diag(d)` positive semidefinite
/// in exact arithmetic, at a cost of about `n³ ε max_i A_ii` in the trace.
fn rounding_bound(n: usize, max_diag: f64) -> f64 {
    let u = 0.5 * f64::EPSILON;
    let m = (n + 1) as f64 * u;
    1.01 * n as f64 * m / (1.0 - m) * max_diag
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `BᵀB/4` with its diagonal removed, `B` a `hidden × visible` matrix of uniform entries
    /// in `(−1, 1)` from a SplitMix64 stream: zero diagonal, indefinite, off-diagonal part of
    /// rank `hidden` (the RBM Hessian of the `sdp` benchmark, at a smaller size).
    fn low_rank_without_diagonal(visible: usize, hidden: usize, seed: u64) -> SymmetricMatrix {
        let mut state = seed;
        let mut uniform = || {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            2.0 * (z >> 11) as f64 / (1u64 << 53) as f64 - 1.0
        };
        let b: Vec<f64> = (0..hidden * visible).map(|_| uniform()).collect();
        let mut w = vec![0.0; visible * visible];
        for row in b.chunks_exact(visible) {
            for (i, &bi) in row.iter().enumerate() {
                for (j, &bj) in row.iter().enumerate() {
                    if i != j {
                        w[i * visible + j] += 0.25 * bi * bj;
                    }
                }
            }
        }
        SymmetricMatrix::from_row_major(visible, visible, &w).unwrap()
    }

    #[test]
    fn calibrated_shift_saves_factorisations_on_a_low_rank_zero_diagonal() {
        // The Ritz estimate of the shift is several times too optimistic here: uncalibrated,
        // every certificate fails twice (11 and 19 factorisations in all); calibrated, only
        // the first checkpoint's does (4).
        for (visible, hidden, seed) in [(300, 190, 7), (400, 255, 8)] {
            let w = low_rank_without_diagonal(visible, hidden, seed);
            let opts = SdpOptions::default();
            let (plain, plain_count) = solve_counted(&w, &opts, false).unwrap();
            let (calibrated, count) = solve_counted(&w, &opts, true).unwrap();
            assert!(
                plain.converged && plain.rel_gap <= opts.rel_gap,
                "{plain:?}"
            );
            assert!(
                calibrated.converged && calibrated.rel_gap <= opts.rel_gap,
                "{calibrated:?}"
            );
            assert!(
                count <= 5 && 2 * count <= plain_count,
                "{visible}: {count} factorisations calibrated, {plain_count} without"
            );
        }
    }
}
