//! The quadratic term `W` of the second-order kernel, dense or sparse.

use super::linalg::{delta, mat_state, update_symmetric};
use crate::error::{LenError, ParamError};
use crate::slices::copy;

/// A symmetric `d × d` matrix in compressed sparse row form, borrowed from the caller: the
/// entries of row `i` are `columns[offsets[i]..offsets[i+1]]` with values
/// `values[offsets[i]..offsets[i+1]]`, columns strictly increasing within a row.
///
/// Construction validates everything once (`O(nnz log deg)`); products then cost `O(nnz)` and
/// the update after `k` changed coordinates `O(Σ deg)` over those coordinates.
///
/// # Examples
///
/// The path `0 — 1 — 2` with weight `−1` on each edge and `2` on the diagonal:
///
/// ```
/// use langevin_core::second_order::SparseW;
/// let offsets = [0u32, 2, 5, 7];
/// let columns = [0u32, 1, 0, 1, 2, 1, 2];
/// let values = [2.0f32, -1.0, -1.0, 2.0, -1.0, -1.0, 2.0];
/// let w = SparseW::new(&offsets, &columns, &values).unwrap();
/// assert_eq!((w.dim(), w.nnz()), (3, 7));
/// // Dropping the entry (2, 1) breaks the symmetry.
/// let columns = [0u32, 1, 0, 1, 2, 2];
/// let values = [2.0f32, -1.0, -1.0, 2.0, -1.0, 2.0];
/// assert!(SparseW::new(&[0, 2, 5, 6], &columns, &values).is_err());
/// ```
#[derive(Clone, Copy, Debug)]
pub struct SparseW<'m> {
    dim: usize,
    offsets: &'m [u32],
    columns: &'m [u32],
    values: &'m [f32],
}

impl<'m> SparseW<'m> {
    /// Validated CSR slices; the dimension is `offsets.len() − 1`.
    ///
    /// # Errors
    ///
    /// * [`ParamError::EmptyDimension`] for fewer than two offsets;
    /// * [`ParamError::Len`] unless `values` has as many entries as `columns` (buffer
    ///   `"W values"`) and the last offset is `columns.len()` (buffer `"W columns"`);
    /// * [`ParamError::OutOfRange`] named `"W offsets"` (value: the row) if the offsets do not
    ///   start at 0 or decrease; `"W columns"` (value: the column) for a column `≥ d`;
    ///   `"W column order"` (value: the row) for columns not strictly increasing in a row
    ///   (unsorted or repeated); `"W symmetry"` (value: the row) for an entry `(i, j, v)`
    ///   without the entry `(j, i, v)`;
    /// * [`ParamError::NonFinite`] (`"W"`) for a non-finite value.
    pub fn new(
        offsets: &'m [u32],
        columns: &'m [u32],
        values: &'m [f32],
    ) -> Result<Self, ParamError> {
        let dim = offsets.len().saturating_sub(1);
        if dim == 0 {
            return Err(ParamError::EmptyDimension);
        }
        LenError::check("W values", columns.len(), values.len())?;
        if offsets.first() != Some(&0) {
            return Err(ParamError::OutOfRange {
                name: "W offsets",
                value: 0.0,
            });
        }
        if let Some(row) = offsets.windows(2).position(|w| w.first() > w.get(1)) {
            return Err(ParamError::OutOfRange {
                name: "W offsets",
                value: row as f64,
            });
        }
        let end = offsets.last().map_or(0, |&v| v as usize);
        LenError::check("W columns", columns.len(), end)?;
        if let Some(&j) = columns.iter().find(|&&j| j as usize >= dim) {
            return Err(ParamError::OutOfRange {
                name: "W columns",
                value: f64::from(j),
            });
        }
        ParamError::check_finite("W", values)?;
        let w = Self {
            dim,
            offsets,
            columns,
            values,
        };
        for i in 0..dim {
            let (cols, _) = w.row(i);
            if cols.windows(2).any(|p| p.first() >= p.get(1)) {
                return Err(ParamError::OutOfRange {
                    name: "W column order",
                    value: i as f64,
                });
            }
        }
        for i in 0..dim {
            let (cols, vals) = w.row(i);
            for (&j, &v) in cols.iter().zip(vals) {
                if w.get(j as usize, i as u32) != Some(v) {
                    return Err(ParamError::OutOfRange {
                        name: "W symmetry",
                        value: i as f64,
                    });
                }
            }
        }
        Ok(w)
    }

    /// The dimension `d`.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The number of stored entries.
    pub fn nnz(&self) -> usize {
        self.columns.len()
    }

    /// The row offsets (`d + 1`).
    pub fn offsets(&self) -> &'m [u32] {
        self.offsets
    }

    /// The column indices, row by row.
    pub fn columns(&self) -> &'m [u32] {
        self.columns
    }

    /// The values, aligned with [`columns`](Self::columns).
    pub fn values(&self) -> &'m [f32] {
        self.values
    }

    /// The columns and values of row `i` (empty beyond the last row).
    #[inline(always)]
    pub fn row(&self, i: usize) -> (&'m [u32], &'m [f32]) {
        let lo = self.offsets.get(i).map_or(0, |&v| v as usize);
        let hi = self.offsets.get(i + 1).map_or(0, |&v| v as usize);
        (
            self.columns.get(lo..hi).unwrap_or(&[]),
            self.values.get(lo..hi).unwrap_or(&[]),
        )
    }

    /// The stored entry `(i, j)`, if any (binary search in row `i`).
    pub fn get(&self, i: usize, j: u32) -> Option<f32> {
        let (cols, vals) = self.row(i);
        cols.binary_search(&j)
            .ok()
            .and_then(|k| vals.get(k).copied())
    }

    /// `out = W x` in `f64`, summed in the same order as the dense product (four lanes by
    /// column index modulo 4, then the tail), so the dense and sparse forms of one matrix give
    /// the same numbers.
    fn mul_state<V: Copy + Into<f64>>(&self, x: &[V], out: &mut [f64]) {
        let lanes = self.dim - self.dim % 4;
        for (i, o) in out.iter_mut().enumerate() {
            let (cols, vals) = self.row(i);
            let mut acc = [0.0f64; 4];
            let mut tail = 0.0f64;
            for (&j, &v) in cols.iter().zip(vals) {
                let j = j as usize;
                let p = f64::from(v) * x.get(j).map_or(0.0, |&s| s.into());
                if j < lanes {
                    if let Some(a) = acc.get_mut(j % 4) {
                        *a += p;
                    }
                } else {
                    tail += p;
                }
            }
            let [a, b, c, e] = acc;
            *o = (a + b) + (c + e) + tail;
        }
    }

    /// `wy = wx + Σ_{j changed} (y_j − x_j) W[j, :]`, in the dense update's order.
    fn update<V: Copy + Into<f64>>(
        &self,
        wx: &[f64],
        (x, y): (&[V], &[V]),
        changed: &[u32],
        wy: &mut [f64],
    ) {
        copy(wy, wx);
        for &j in changed {
            let j = j as usize;
            let step = delta(x, y, j);
            let (cols, vals) = self.row(j);
            for (&i, &v) in cols.iter().zip(vals) {
                if let Some(o) = wy.get_mut(i as usize) {
                    *o += step * f64::from(v);
                }
            }
        }
    }
}

/// The quadratic term `W` of [`super::TrickParams`]: a dense row-major `d × d` slice or a
/// [`SparseW`].
#[derive(Clone, Copy, Debug)]
pub enum WMatrix<'m> {
    /// `d × d`, row-major.
    Dense(&'m [f32]),
    /// Compressed sparse rows.
    Sparse(SparseW<'m>),
}

impl<'m> WMatrix<'m> {
    /// The dense slice, if `W` is dense.
    pub fn dense(&self) -> Option<&'m [f32]> {
        match self {
            WMatrix::Dense(w) => Some(w),
            WMatrix::Sparse(_) => None,
        }
    }

    /// The sparse form, if `W` is sparse.
    pub fn sparse(&self) -> Option<&SparseW<'m>> {
        match self {
            WMatrix::Dense(_) => None,
            WMatrix::Sparse(w) => Some(w),
        }
    }

    /// Entry `(i, j)` (zero where a sparse `W` stores nothing or beyond the matrix).
    pub fn entry(&self, d: usize, i: usize, j: usize) -> f32 {
        match self {
            WMatrix::Dense(w) => {
                if j < d {
                    i.checked_mul(d)
                        .and_then(|r| w.get(r + j))
                        .copied()
                        .unwrap_or(0.0)
                } else {
                    0.0
                }
            }
            WMatrix::Sparse(w) => u32::try_from(j)
                .ok()
                .and_then(|j| w.get(i, j))
                .unwrap_or(0.0),
        }
    }

    /// `out = W x` for an integer state, in `f64`.
    #[inline]
    pub(super) fn mul_state<V: Copy + Into<f64>>(&self, d: usize, x: &[V], out: &mut [f64]) {
        match self {
            WMatrix::Dense(w) => mat_state(w, d, false, x, out),
            WMatrix::Sparse(w) => w.mul_state(x, out),
        }
    }

    /// `W y` from `W x` after the coordinates `changed` went from `x` to `y`.
    #[inline]
    pub(super) fn update<V: Copy + Into<f64>>(
        &self,
        d: usize,
        wx: &[f64],
        pair: (&[V], &[V]),
        changed: &[u32],
        wy: &mut [f64],
    ) {
        match self {
            WMatrix::Dense(w) => update_symmetric(w, d, wx, pair, changed, wy),
            WMatrix::Sparse(w) => w.update(wx, pair, changed, wy),
        }
    }
}
