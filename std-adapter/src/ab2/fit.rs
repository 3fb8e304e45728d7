//! Estimating the global quadratic term `W` of the AB second-order proposal from burn-in pairs,
//! and the factor `A` with `AᵀA = b (W + D)` that the Gaussian integral trick needs.
//!
//! # Sign convention
//!
//! `U` is a log-density and `U(y) − U(x) ≈ (y−x)ᵀ g + ½ (y−x)ᵀ W (y−x)`, so `W` estimates the
//! Hessian of `U`: a concave (Gaussian-like) target has a negative-definite `W`.
//!
//! # Least squares with symmetry, in closed form
//!
//! [`fit_symmetric`] minimises `Σ_n |W Δx_n − Δg_n|²` over symmetric `W`. With `M` the rows
//! `Δx_n`, `G` the rows `Δg_n` and `MᵀM = Q Λ Qᵀ`, the normal equations
//! `MᵀM W + W MᵀM = MᵀG + GᵀM` decouple in the eigenbasis:
//! `W̃_jk = C_jk / (λ_j + λ_k)` with `C = Qᵀ(MᵀG + GᵀM)Q` and `W = Q W̃ Qᵀ`. Directions the
//! chain never moved along (`λ_j` below a relative cutoff) carry no information; their rows of
//! `M Q` are zeroed and a small ridge keeps the denominators positive, so a pair of unexplored
//! directions gets `W̃_jk = 0` (never NaN), while an unexplored/explored pair keeps what the
//! gradients say about it.
//!
//! # Examples
//!
//! ```
//! use langevin_std::ab2::fit::{fit_symmetric, FitOptions};
//! // U(x) = ½ xᵀ W x with W = [[-2, 1], [1, -3]]: Δg = W Δx exactly.
//! let w = [-2.0, 1.0, 1.0, -3.0];
//! let dx = [1.0, 0.0, 0.0, 1.0, 1.0, 1.0];
//! let mut dg = [0.0; 6];
//! for (x, g) in dx.chunks(2).zip(dg.chunks_mut(2)) {
//!     g[0] = w[0] * x[0] + w[1] * x[1];
//!     g[1] = w[2] * x[0] + w[3] * x[1];
//! }
//! let fit = fit_symmetric(&dx, &dg, 2, &FitOptions::default())?;
//! assert!(fit.w.iter().zip(&w).all(|(a, b)| (a - b).abs() < 1e-9));
//! assert!(fit.residual < 1e-9);
//! # Ok::<(), langevin_std::ab2::fit::FitError>(())
//! ```

use nalgebra::DMatrix;

/// Settings of [`fit_symmetric`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct FitOptions {
    /// Directions with `λ_j ≤ cutoff · λ_max` count as unexplored (default `1e-10`).
    pub cutoff: f64,
    /// Ridge added to every `λ_j`, relative to `λ_max` (default `1e-12`): keeps the
    /// denominators of unexplored pairs positive at a negligible bias elsewhere.
    pub ridge: f64,
}

impl Default for FitOptions {
    fn default() -> Self {
        Self {
            cutoff: 1e-10,
            ridge: 1e-12,
        }
    }
}

/// The fitted symmetric `W`.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct QuadraticFit {
    /// The dimension `d`.
    pub dim: usize,
    /// `W`, `d × d` row-major, exactly symmetric.
    pub w: Vec<f64>,
    /// Relative residual `‖M W − G‖_F / ‖G‖_F` (the absolute one when `G = 0`).
    pub residual: f64,
    /// Number of explored directions (eigenvalues of `MᵀM` above the cutoff).
    pub explored: usize,
}

/// Why a fit or a factorisation failed.
#[derive(Clone, Debug, thiserror::Error, PartialEq)]
#[non_exhaustive]
pub enum FitError {
    /// No pairs, or dimension 0.
    #[error("no pairs or dimension 0")]
    Empty,
    /// A buffer whose length is not `pairs × dim` (or `dim × dim`).
    #[error("`{buffer}` has length {found}, expected {expected}")]
    Length {
        /// Which buffer.
        buffer: &'static str,
        /// The length needed.
        expected: usize,
        /// The length given.
        found: usize,
    },
    /// A NaN or infinite input.
    #[error("`{buffer}[{index}]` is not finite")]
    NonFinite {
        /// Which buffer.
        buffer: &'static str,
        /// Position in it.
        index: usize,
    },
    /// Every `Δx_n` is zero: nothing to fit.
    #[error("every Δx is zero: W is not identifiable")]
    NoMovement,
    /// A negative or non-finite variance at this coordinate.
    #[error("variance {0} is negative or not finite")]
    BadVariance(usize),
    /// An option out of range (its name).
    #[error("fit option `{0}` is out of range")]
    InvalidOption(&'static str),
    /// `b (W + D)` is not positive semidefinite: its Cholesky factorisation failed even with
    /// the jitter.
    #[error("b (W + D) is not positive semidefinite")]
    NotPositiveSemidefinite,
}

/// The number of rows of `dim` entries in `data`.
///
/// # Errors
///
/// [`FitError::Empty`] for no data or `dim = 0`, [`FitError::Length`] unless `dim` divides
/// the length.
fn rows(buffer: &'static str, data: &[f64], dim: usize) -> Result<usize, FitError> {
    if dim == 0 || data.is_empty() {
        return Err(FitError::Empty);
    }
    if !data.len().is_multiple_of(dim) {
        return Err(FitError::Length {
            buffer,
            expected: data.len().div_ceil(dim) * dim,
            found: data.len(),
        });
    }
    Ok(data.len() / dim)
}

fn check_finite(buffer: &'static str, x: &[f64]) -> Result<(), FitError> {
    match x.iter().position(|v| !v.is_finite()) {
        Some(index) => Err(FitError::NonFinite { buffer, index }),
        None => Ok(()),
    }
}

/// Fits the symmetric `W` minimising `Σ_n |W Δx_n − Δg_n|²`. `dx` and `dg` hold the pairs as
/// rows (`pairs × dim`, row-major).
///
/// Cost: `O(pairs · dim² + dim³)`.
///
/// # Errors
///
/// [`FitError::Empty`], [`FitError::Length`], [`FitError::NonFinite`],
/// [`FitError::NoMovement`] (all `Δx` zero), [`FitError::InvalidOption`].
pub fn fit_symmetric(
    dx: &[f64],
    dg: &[f64],
    dim: usize,
    opts: &FitOptions,
) -> Result<QuadraticFit, FitError> {
    if !(opts.cutoff >= 0.0 && opts.cutoff < 1.0) {
        return Err(FitError::InvalidOption("cutoff"));
    }
    if !(opts.ridge > 0.0 && opts.ridge.is_finite()) {
        return Err(FitError::InvalidOption("ridge"));
    }
    let pairs = rows("dx", dx, dim)?;
    if dg.len() != dx.len() {
        return Err(FitError::Length {
            buffer: "dg",
            expected: dx.len(),
            found: dg.len(),
        });
    }
    check_finite("dx", dx)?;
    check_finite("dg", dg)?;
    let m = DMatrix::from_row_slice(pairs, dim, dx);
    let g = DMatrix::from_row_slice(pairs, dim, dg);
    let gram = m.tr_mul(&m);
    let eig = gram.symmetric_eigen();
    let lambda_max = eig.eigenvalues.iter().fold(0.0f64, |a, &b| a.max(b));
    if lambda_max <= 0.0 {
        return Err(FitError::NoMovement);
    }
    let q = &eig.eigenvectors;
    let cut = opts.cutoff * lambda_max;
    let ridge = opts.ridge * lambda_max;
    let explored: Vec<bool> = eig.eigenvalues.iter().map(|&l| l > cut).collect();
    // P = M Q with unexplored columns zeroed (they are rounding noise); R = G Q.
    let mut p = &m * q;
    for (j, mut col) in p.column_iter_mut().enumerate() {
        if !explored[j] {
            col.fill(0.0);
        }
    }
    let r = &g * q;
    let c = p.tr_mul(&r);
    let lam: Vec<f64> = eig
        .eigenvalues
        .iter()
        .zip(&explored)
        .map(|(&l, &e)| if e { l } else { 0.0 })
        .collect();
    let wt = DMatrix::from_fn(dim, dim, |j, k| {
        (c[(j, k)] + c[(k, j)]) / (lam[j] + lam[k] + 2.0 * ridge)
    });
    let w = q * wt * q.transpose();
    let mut out = vec![0.0; dim * dim];
    for i in 0..dim {
        for j in 0..=i {
            let v = 0.5 * (w[(i, j)] + w[(j, i)]);
            out[i * dim + j] = v;
            out[j * dim + i] = v;
        }
    }
    let wm = DMatrix::from_row_slice(dim, dim, &out);
    let resid = (&m * &wm - &g).norm();
    let gnorm = g.norm();
    let residual = if gnorm > 0.0 { resid / gnorm } else { resid };
    Ok(QuadraticFit {
        dim,
        w: out,
        residual,
        explored: explored.iter().filter(|&&e| e).count(),
    })
}

/// Per-coordinate variances of samples given as rows (`count × dim`), with the unbiased
/// `1/(count − 1)` normalisation (0 for a single sample).
///
/// # Errors
///
/// [`FitError::Empty`], [`FitError::Length`], [`FitError::NonFinite`].
pub fn variances(samples: &[f64], dim: usize) -> Result<Vec<f64>, FitError> {
    let count = rows("samples", samples, dim)?;
    check_finite("samples", samples)?;
    let mut mean = vec![0.0; dim];
    let mut m2 = vec![0.0; dim];
    // Welford's update, stable for large means.
    for (t, row) in samples.chunks_exact(dim).enumerate() {
        let k = (t + 1) as f64;
        for ((mu, s), &x) in mean.iter_mut().zip(m2.iter_mut()).zip(row) {
            let delta = x - *mu;
            *mu += delta / k;
            *s += delta * (x - *mu);
        }
    }
    let denom = if count > 1 { (count - 1) as f64 } else { 1.0 };
    Ok(m2.into_iter().map(|s| s / denom).collect())
}

/// The diagonal `W` from data variances (Sun et al. 2023, Sec. 5.4): `W_ii = −1 / (1 + var_i)`.
///
/// The paper prints `W_ii = 1/(1 + var_i)`; under this crate's convention (`U` a log-density,
/// `W` its Hessian) the value consistent with a Gaussian of variance `1 + var_i` is negative,
/// which is what is returned. The `1 +` keeps near-constant coordinates from getting an
/// unbounded curvature. Negate the result for the paper's literal sign.
///
/// # Errors
///
/// [`FitError::BadVariance`] for a negative or non-finite variance.
pub fn diagonal_from_variances(variances: &[f64]) -> Result<Vec<f64>, FitError> {
    variances
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            if v >= 0.0 && v.is_finite() {
                Ok(-1.0 / (1.0 + v))
            } else {
                Err(FitError::BadVariance(i))
            }
        })
        .collect()
}

/// The factor `A` (`dim × dim`, row-major, upper triangular) with
/// `AᵀA = b (W + diag d) + j I`, where the jitter `j = 1e-12 · b · max_i |W_ii + d_i|` keeps a
/// merely semidefinite matrix factorable. `A = Lᵀ` for the Cholesky factor `L`.
///
/// # Errors
///
/// [`FitError::Length`], [`FitError::NonFinite`], [`FitError::InvalidOption`] (`b` not
/// positive and finite), [`FitError::NotPositiveSemidefinite`].
pub fn trick_factor(w: &[f64], d: &[f64], dim: usize, b: f64) -> Result<Vec<f64>, FitError> {
    if dim == 0 {
        return Err(FitError::Empty);
    }
    if w.len() != dim * dim {
        return Err(FitError::Length {
            buffer: "w",
            expected: dim * dim,
            found: w.len(),
        });
    }
    if d.len() != dim {
        return Err(FitError::Length {
            buffer: "d",
            expected: dim,
            found: d.len(),
        });
    }
    check_finite("w", w)?;
    check_finite("d", d)?;
    if !(b > 0.0 && b.is_finite()) {
        return Err(FitError::InvalidOption("b"));
    }
    let mut a = DMatrix::from_fn(dim, dim, |i, j| {
        b * (0.5 * (w[i * dim + j] + w[j * dim + i]) + if i == j { d[i] } else { 0.0 })
    });
    let scale = (0..dim).fold(0.0f64, |m, i| m.max(a[(i, i)].abs()));
    let jitter = 1e-12 * scale.max(f64::MIN_POSITIVE);
    for i in 0..dim {
        a[(i, i)] += jitter;
    }
    let l = a
        .cholesky()
        .ok_or(FitError::NotPositiveSemidefinite)?
        .unpack();
    // A = Lᵀ, row-major: row i holds L[j][i] for j ≥ i.
    let mut out = vec![0.0; dim * dim];
    for i in 0..dim {
        for j in i..dim {
            out[i * dim + j] = l[(j, i)];
        }
    }
    Ok(out)
}

/// [`trick_factor`] rounded to `f32` for single-precision kernels.
///
/// # Errors
///
/// As [`trick_factor`].
pub fn trick_factor_f32(w: &[f64], d: &[f64], dim: usize, b: f64) -> Result<Vec<f32>, FitError> {
    trick_factor(w, d, dim, b).map(|a| a.into_iter().map(|x| x as f32).collect())
}
