//! The dense products of the second-order kernel, accumulated in `f64`, and its scratch
//! layout.

use crate::error::LenError;

/// `f64` scratch entries per coordinate: `W x`, `A x`, `W y`, `A y`, `u` and `Aᵀu`.
pub const SCRATCH_PER_DIM: usize = 6;

/// Length of the `f64` scratch buffer [`AbSecondOrder::new`](super::AbSecondOrder::new) needs
/// for dimension `d`: `6 d` (`W x`, `A x`, `W y`, `A y`, `u`, `Aᵀu`). Saturates instead of
/// overflowing.
///
/// # Examples
///
/// ```
/// assert_eq!(langevin_core::second_order::scratch_len(10), 60);
/// ```
pub const fn scratch_len(d: usize) -> usize {
    d.saturating_mul(SCRATCH_PER_DIM)
}

/// The six scratch vectors of length `d`.
pub(super) fn split(scratch: &mut [f64], d: usize) -> Result<[&mut [f64]; 6], LenError> {
    let err = LenError {
        buffer: "scratch",
        expected: scratch_len(d),
        found: scratch.len(),
    };
    let mut parts = scratch.chunks_exact_mut(d.max(1));
    let mut next = || parts.next().ok_or(err);
    Ok([next()?, next()?, next()?, next()?, next()?, next()?])
}

/// `log N(u; A y, I) − log N(u; A x, I) = ½|u − A x|² − ½|u − A y|²`.
pub(super) fn gauss_ratio(u: &[f64], ax: &[f64], ay: &[f64]) -> f64 {
    u.iter()
        .zip(ax.iter().zip(ay))
        .map(|(&u, (&x, &y))| 0.5 * ((u - x) * (u - x) - (u - y) * (u - y)))
        .sum()
}

/// `out = M x` for an integer state `x` (rows of `M` dotted with `x`), in `f64`.
pub(super) fn mat_state<V: Copy + Into<f64>>(
    m: &[f32],
    d: usize,
    upper: bool,
    x: &[V],
    out: &mut [f64],
) {
    for (i, (row, o)) in m.chunks_exact(d.max(1)).zip(out.iter_mut()).enumerate() {
        let skip = if upper { i } else { 0 };
        let (row, x) = (row.get(skip..).unwrap_or(&[]), x.get(skip..).unwrap_or(&[]));
        let mut acc = [0.0f64; 4];
        let mut rc = row.chunks_exact(4);
        let mut xc = x.chunks_exact(4);
        for (r, xs) in (&mut rc).zip(&mut xc) {
            for ((a, &m), &x) in acc.iter_mut().zip(r).zip(xs) {
                *a += f64::from(m) * x.into();
            }
        }
        let tail: f64 = rc
            .remainder()
            .iter()
            .zip(xc.remainder())
            .map(|(&m, &x)| f64::from(m) * x.into())
            .sum();
        let [a, b, c, e] = acc;
        *o = (a + b) + (c + e) + tail;
    }
}

/// `out = Mᵀ v` (rows of `M` scaled by `v_i` and summed), in `f64`.
pub(super) fn mat_t_vec(m: &[f32], d: usize, upper: bool, v: &[f64], out: &mut [f64]) {
    out.fill(0.0);
    for (i, (row, &vi)) in m.chunks_exact(d.max(1)).zip(v).enumerate() {
        let skip = if upper { i } else { 0 };
        let (row, out) = (
            row.get(skip..).unwrap_or(&[]),
            out.get_mut(skip..).unwrap_or(&mut []),
        );
        for (o, &a) in out.iter_mut().zip(row) {
            *o += vi * f64::from(a);
        }
    }
}

/// `y_j − x_j` as an `f64` (0 for an index beyond either state).
#[inline(always)]
pub(super) fn delta<V: Copy + Into<f64>>(x: &[V], y: &[V], j: usize) -> f64 {
    match (x.get(j), y.get(j)) {
        (Some(&a), Some(&b)) => b.into() - a.into(),
        _ => 0.0,
    }
}

/// `wy = wx + Σ_{j changed} (y_j − x_j) W[j, :]` (`W` symmetric, so rows stand in for
/// columns). For binary states the factor is `±1`, exact.
pub(super) fn update_symmetric<V: Copy + Into<f64>>(
    w: &[f32],
    d: usize,
    wx: &[f64],
    (x, y): (&[V], &[V]),
    changed: &[u32],
    wy: &mut [f64],
) {
    crate::slices::copy(wy, wx);
    for &j in changed {
        let j = j as usize;
        let step = delta(x, y, j);
        let row = w.get(j * d..(j + 1) * d).unwrap_or(&[]);
        for (o, &a) in wy.iter_mut().zip(row) {
            *o += step * f64::from(a);
        }
    }
}

/// `ay_i = ax_i + Σ_{j changed} (y_j − x_j) A[i, j]`.
pub(super) fn update_columns<V: Copy + Into<f64>>(
    a: &[f32],
    d: usize,
    ax: &[f64],
    (x, y): (&[V], &[V]),
    changed: &[u32],
    ay: &mut [f64],
) {
    for (row, (o, &base)) in a.chunks_exact(d.max(1)).zip(ay.iter_mut().zip(ax)) {
        let mut acc = base;
        for &j in changed {
            let j = j as usize;
            let v = f64::from(row.get(j).copied().unwrap_or(0.0));
            acc += delta(x, y, j) * v;
        }
        *o = acc;
    }
}
