//! The diagonal rules of AB-2: how `D` is chosen once `W` is fitted.
//!
//! * trace (AB-trace): `min trace(D)` with `W + D ⪰ 0`, the diagonal SDP of [`crate::sdp`]
//!   ([`trace_diagonal`]);
//! * shift (AB-shift): `D = max(ε, −λ_min(W)) I` ([`shift_diagonal`]);
//! * max (AB-max): `min λ_max(W + D)` with `D ≥ 0`, `W + D ⪰ 0` ([`max_diagonal`],
//!   [`min_max_eigenvalue`]);
//! * dlp-trace: the trace-optimal `D` as the preconditioner of the first-order flip proposal
//!   ([`dlp_preconditioner`]).

mod lanczos;
mod max;

pub use lanczos::extreme_eigenvalues;
pub use max::*;

use crate::sdp::{SdpError, SdpOptions, SymmetricMatrix, solve_diagonal_sdp};
use nalgebra::DMatrix;
use std::fmt;

/// Why a diagonal rule could not choose `D`.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum DiagonalError {
    /// `W` has the wrong number of entries for its dimension (or the dimension is zero).
    Length {
        /// `d²`.
        expected: usize,
        /// Entries given.
        found: usize,
    },
    /// `W` has a NaN or infinite entry.
    NonFiniteW,
    /// The DLP floor is not in `(0, 1]`.
    Floor(f64),
    /// `D` has a negative, NaN or infinite entry.
    InvalidD,
    /// The diagonal SDP failed (AB-trace, DLP-trace, AB-max's start).
    Sdp(SdpError),
    /// The AB-max solver failed.
    MaxEig(MaxEigError),
}

impl fmt::Display for DiagonalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Sdp(e) => e.fmt(f),
            Self::MaxEig(e) => e.fmt(f),
            Self::Length { expected, found } => {
                write!(f, "W has {found} entries, expected {expected}")
            }
            Self::NonFiniteW => f.write_str("W is not finite"),
            Self::Floor(floor) => write!(f, "the DLP floor must be in (0, 1], got {floor}"),
            Self::InvalidD => f.write_str("D must be finite and ≥ 0"),
        }
    }
}

impl std::error::Error for DiagonalError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Sdp(e) => Some(e),
            Self::MaxEig(e) => Some(e),
            _ => None,
        }
    }
}

/// `D = max(ε, −λ_min(W)) I` for a symmetric `W` (`d × d`, row-major).
///
/// # Errors
///
/// [`DiagonalError::Length`] for a wrong length, [`DiagonalError::NonFiniteW`] for a
/// non-finite `W`.
pub fn shift_diagonal(w: &[f64], dim: usize, eps: f64) -> Result<Vec<f64>, DiagonalError> {
    if w.len() != dim * dim || dim == 0 {
        return Err(DiagonalError::Length {
            expected: dim * dim,
            found: w.len(),
        });
    }
    if w.iter().any(|v| !v.is_finite()) {
        return Err(DiagonalError::NonFiniteW);
    }
    let m = DMatrix::from_row_slice(dim, dim, w);
    let m = (&m + m.transpose()) * 0.5;
    let lambda_min = m.symmetric_eigenvalues().min();
    Ok(vec![eps.max(-lambda_min); dim])
}

/// `D` from the diagonal SDP (`min trace D`, `W + D ⪰ 0`); returns `D` and the certified gap.
///
/// # Errors
///
/// [`DiagonalError::Sdp`] with the solver's error.
pub fn trace_diagonal(
    w: &[f64],
    dim: usize,
    opts: &SdpOptions,
) -> Result<(Vec<f64>, f64), DiagonalError> {
    let m = SymmetricMatrix::from_row_major(dim, dim, w).map_err(DiagonalError::Sdp)?;
    let sol = solve_diagonal_sdp(&m, opts).map_err(DiagonalError::Sdp)?;
    Ok((sol.d, sol.rel_gap))
}

/// `D` for AB-max: [`min_max_eigenvalue`] started from the trace-optimal `D`; returns `D`,
/// `λ_max(W + D)`, the solver's certified relative gap and the SDP's gap.
///
/// # Errors
///
/// [`DiagonalError::Sdp`] or [`DiagonalError::MaxEig`] with the failing solver's error.
pub fn max_diagonal(
    w: &[f64],
    dim: usize,
    sdp: &SdpOptions,
    opts: &MaxEigOptions,
) -> Result<(Vec<f64>, f64, f64, f64), DiagonalError> {
    let (start, sdp_gap) = trace_diagonal(w, dim, sdp)?;
    let sol = min_max_eigenvalue(w, dim, Some(&start), opts).map_err(DiagonalError::MaxEig)?;
    Ok((sol.d, sol.lambda_max, sol.rel_gap, sdp_gap))
}

/// The preconditioner that turns the flip proposal into the anisotropic DLP kernel with
/// diagonal `D`.
///
/// The kernel `exp(b gᵀ(y−x) − (y−x)ᵀD(y−x)/a)` on `{0,1}^d` has `(y_i − x_i)² = [flip i]`,
/// so its flip logit is `b g_i (1 − 2x_i) − D_ii/a`; the flip proposal with preconditioner `p`
/// has `b g_i (1 − 2x_i) − 1/(2 a p_i²)`. They agree for `p_i = 1/√(2 D_ii)`. The overall scale
/// of `D` only rescales the step `a`, which is tuned, so `D` is first normalised to mean `½`
/// (then `a` means the same as DMALA's step on average). A coordinate with `D_ii = 0` would get
/// an infinite step (a flip probability independent of `a`); entries are therefore floored at
/// `floor · ½`, i.e. at `floor` times the mean, which caps `p_i` at `1/√floor`. When `D = 0`
/// (`W ⪰ 0`) the result is `p = 1`: plain DMALA.
///
/// # Errors
///
/// [`DiagonalError::Floor`] unless `floor` is finite and in `(0, 1]`;
/// [`DiagonalError::InvalidD`] unless `D` is finite and `≥ 0`.
pub fn dlp_preconditioner(diag: &[f64], floor: f64) -> Result<Vec<f32>, DiagonalError> {
    if !(floor > 0.0 && floor <= 1.0) {
        return Err(DiagonalError::Floor(floor));
    }
    if diag.iter().any(|v| !(v.is_finite() && *v >= 0.0)) {
        return Err(DiagonalError::InvalidD);
    }
    let mean = diag.iter().sum::<f64>() / diag.len().max(1) as f64;
    if mean <= 0.0 {
        return Ok(vec![1.0; diag.len()]);
    }
    Ok(diag
        .iter()
        .map(|&v| {
            let normalised = (0.5 * v / mean).max(0.5 * floor);
            (1.0 / (2.0 * normalised).sqrt()) as f32
        })
        .collect())
}

/// `λ_max` of a symmetric `W + D` (`d × d`, row-major).
pub(crate) fn lambda_max(w: &[f64], diag: &[f64], dim: usize) -> f64 {
    let mut m = DMatrix::from_row_slice(dim, dim, w);
    for (i, &v) in diag.iter().enumerate() {
        m[(i, i)] += v;
    }
    let m = (&m + m.transpose()) * 0.5;
    m.symmetric_eigenvalues().max()
}
