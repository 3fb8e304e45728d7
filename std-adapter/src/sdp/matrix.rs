//! The validated symmetric input matrix of the diagonal SDP, stored dense or as CSR.

use super::SdpError;

/// A symmetric matrix checked for finite entries and symmetry, stored dense (row-major) or,
/// when at most a tenth of its off-diagonal entries are non-zero, as compressed sparse rows.
///
/// # Examples
///
/// ```
/// use langevin_std::sdp::SymmetricMatrix;
/// let w = SymmetricMatrix::from_row_major(2, 2, &[0.0, 1.0, 1.0, 0.0])?;
/// assert_eq!(w.dim(), 2);
/// assert_eq!(w.get(0, 1), 1.0);
/// # Ok::<(), langevin_std::sdp::SdpError>(())
/// ```
#[derive(Clone, Debug)]
pub struct SymmetricMatrix {
    n: usize,
    diag: Vec<f64>,
    max_abs: f64,
    repr: Repr,
}

#[derive(Clone, Debug)]
pub(crate) enum Repr {
    /// Full `n × n` row-major storage, exactly symmetric.
    Dense(Vec<f64>),
    /// Off-diagonal entries of both triangles; columns sorted within each row.
    Sparse {
        row_ptr: Vec<usize>,
        cols: Vec<usize>,
        vals: Vec<f64>,
    },
}

/// Off-diagonal density at or below which a dense input is stored sparse.
const SPARSE_DENSITY: f64 = 0.1;

impl SymmetricMatrix {
    /// Checks and stores a row-major `rows × cols` matrix. Entries `W_ij` and `W_ji` may differ
    /// by rounding (up to `1e-9` times the largest entry); their mean is stored.
    ///
    /// # Errors
    ///
    /// [`SdpError::Empty`], [`SdpError::NotSquare`], [`SdpError::Length`],
    /// [`SdpError::NonFinite`] (first position in row-major order) or [`SdpError::Asymmetric`]
    /// (first such pair `i < j`).
    pub fn from_row_major(rows: usize, cols: usize, data: &[f64]) -> Result<Self, SdpError> {
        if rows != cols {
            return Err(SdpError::NotSquare { rows, cols });
        }
        let n = rows;
        if n == 0 {
            return Err(SdpError::Empty);
        }
        let expected = n.checked_mul(n).ok_or(SdpError::Length {
            expected: usize::MAX,
            found: data.len(),
        })?;
        if data.len() != expected {
            return Err(SdpError::Length {
                expected,
                found: data.len(),
            });
        }
        if let Some(pos) = data.iter().position(|x| !x.is_finite()) {
            return Err(SdpError::NonFinite {
                row: pos / n,
                col: pos % n,
                value: data[pos],
            });
        }
        let max_abs = data.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        let tol = 1e-9 * max_abs;
        let mut sym = data.to_vec();
        let mut offdiag_nnz = 0usize;
        for i in 0..n {
            for j in (i + 1)..n {
                let (a, b) = (data[i * n + j], data[j * n + i]);
                if (a - b).abs() > tol {
                    return Err(SdpError::Asymmetric {
                        row: i,
                        col: j,
                        upper: a,
                        lower: b,
                    });
                }
                let mean = 0.5 * (a + b);
                sym[i * n + j] = mean;
                sym[j * n + i] = mean;
                if mean != 0.0 {
                    offdiag_nnz += 2;
                }
            }
        }
        let diag: Vec<f64> = (0..n).map(|i| sym[i * n + i]).collect();
        let repr = if (offdiag_nnz as f64) <= SPARSE_DENSITY * (n * n) as f64 {
            let mut row_ptr = Vec::with_capacity(n + 1);
            let mut cols = Vec::with_capacity(offdiag_nnz);
            let mut vals = Vec::with_capacity(offdiag_nnz);
            row_ptr.push(0);
            for (i, row) in sym.chunks_exact(n).enumerate() {
                for (j, &v) in row.iter().enumerate() {
                    if j != i && v != 0.0 {
                        cols.push(j);
                        vals.push(v);
                    }
                }
                row_ptr.push(cols.len());
            }
            Repr::Sparse {
                row_ptr,
                cols,
                vals,
            }
        } else {
            Repr::Dense(sym)
        };
        Ok(Self {
            n,
            diag,
            max_abs,
            repr,
        })
    }

    /// Builds a sparse matrix from `(i, j, w)` entries: each adds `w` to `W_ij` and, when
    /// `i ≠ j`, to `W_ji`, so each unordered pair is listed once (repeats add up).
    ///
    /// # Errors
    ///
    /// [`SdpError::Empty`] for `n = 0`, [`SdpError::IndexOutOfRange`], or
    /// [`SdpError::NonFinite`] (for an entry, or a sum that overflows).
    pub fn from_triplets(n: usize, entries: &[(usize, usize, f64)]) -> Result<Self, SdpError> {
        if n == 0 {
            return Err(SdpError::Empty);
        }
        let mut diag = vec![0.0; n];
        let mut coo: Vec<(usize, usize, f64)> = Vec::with_capacity(2 * entries.len());
        for &(i, j, w) in entries {
            if i >= n || j >= n {
                return Err(SdpError::IndexOutOfRange { row: i, col: j, n });
            }
            if !w.is_finite() {
                return Err(SdpError::NonFinite {
                    row: i,
                    col: j,
                    value: w,
                });
            }
            if i == j {
                diag[i] += w;
            } else {
                coo.push((i, j, w));
                coo.push((j, i, w));
            }
        }
        coo.sort_unstable_by_key(|&(i, j, _)| (i, j));
        let mut row_ptr = vec![0usize; n + 1];
        let mut cols = Vec::with_capacity(coo.len());
        let mut vals: Vec<f64> = Vec::with_capacity(coo.len());
        let mut last: Option<(usize, usize)> = None;
        for (i, j, w) in coo {
            if last == Some((i, j)) {
                if let Some(v) = vals.last_mut() {
                    *v += w;
                }
            } else {
                cols.push(j);
                vals.push(w);
                row_ptr[i + 1] += 1;
                last = Some((i, j));
            }
        }
        for i in 0..n {
            row_ptr[i + 1] += row_ptr[i];
        }
        let mut max_abs = 0.0f64;
        for (i, &d) in diag.iter().enumerate() {
            if !d.is_finite() {
                return Err(SdpError::NonFinite {
                    row: i,
                    col: i,
                    value: d,
                });
            }
            max_abs = max_abs.max(d.abs());
        }
        for i in 0..n {
            for k in row_ptr[i]..row_ptr[i + 1] {
                if !vals[k].is_finite() {
                    return Err(SdpError::NonFinite {
                        row: i,
                        col: cols[k],
                        value: vals[k],
                    });
                }
                max_abs = max_abs.max(vals[k].abs());
            }
        }
        Ok(Self {
            n,
            diag,
            max_abs,
            repr: Repr::Sparse {
                row_ptr,
                cols,
                vals,
            },
        })
    }

    /// Checks and stores an `nalgebra` matrix; as [`SymmetricMatrix::from_row_major`].
    ///
    /// # Errors
    ///
    /// As [`SymmetricMatrix::from_row_major`].
    pub fn from_nalgebra(w: &nalgebra::DMatrix<f64>) -> Result<Self, SdpError> {
        let (rows, cols) = w.shape();
        let row_major: Vec<f64> = w.transpose().as_slice().to_vec();
        Self::from_row_major(rows, cols, &row_major)
    }

    /// The dimension `n`.
    pub fn dim(&self) -> usize {
        self.n
    }

    /// True when stored as compressed sparse rows.
    pub fn is_sparse(&self) -> bool {
        matches!(self.repr, Repr::Sparse { .. })
    }

    /// The number of stored non-zero off-diagonal entries (both triangles; `n² − n` if dense).
    pub fn offdiag_nnz(&self) -> usize {
        match &self.repr {
            Repr::Dense(_) => self.n * (self.n - 1),
            Repr::Sparse { cols, .. } => cols.len(),
        }
    }

    /// The largest absolute entry, the scale of the feasibility tolerance.
    pub fn max_abs(&self) -> f64 {
        self.max_abs
    }

    /// The diagonal `W_ii`.
    pub fn diagonal(&self) -> &[f64] {
        &self.diag
    }

    /// The entry `W_ij` (0 for indices out of range).
    pub fn get(&self, i: usize, j: usize) -> f64 {
        if i >= self.n || j >= self.n {
            return 0.0;
        }
        if i == j {
            return self.diag[i];
        }
        match &self.repr {
            Repr::Dense(a) => a[i * self.n + j],
            Repr::Sparse {
                row_ptr,
                cols,
                vals,
            } => {
                let range = row_ptr[i]..row_ptr[i + 1];
                match cols[range.clone()].binary_search(&j) {
                    Ok(k) => vals[range.start + k],
                    Err(_) => 0.0,
                }
            }
        }
    }

    /// The dense row-major copy of the matrix.
    pub fn to_dense(&self) -> Vec<f64> {
        let n = self.n;
        match &self.repr {
            Repr::Dense(a) => a.clone(),
            Repr::Sparse {
                row_ptr,
                cols,
                vals,
            } => {
                let mut a = vec![0.0; n * n];
                for i in 0..n {
                    a[i * n + i] = self.diag[i];
                    for k in row_ptr[i]..row_ptr[i + 1] {
                        a[i * n + cols[k]] = vals[k];
                    }
                }
                a
            }
        }
    }

    /// True when no off-diagonal entry is non-zero.
    pub fn is_diagonal(&self) -> bool {
        match &self.repr {
            Repr::Dense(a) => a
                .chunks_exact(self.n)
                .enumerate()
                .all(|(i, row)| row.iter().enumerate().all(|(j, &v)| j == i || v == 0.0)),
            Repr::Sparse { vals, .. } => vals.iter().all(|&v| v == 0.0),
        }
    }

    pub(crate) fn repr(&self) -> &Repr {
        &self.repr
    }

    /// `Y = W X` for a row-major `n × cols` block `X` (`Y` likewise).
    pub(crate) fn mul_block(&self, x: &[f64], cols: usize, y: &mut [f64]) {
        let n = self.n;
        match &self.repr {
            Repr::Dense(a) => gemm(1.0, a, (n, 1), x, (cols, 1), 0.0, y, cols, (n, n, cols)),
            Repr::Sparse {
                row_ptr,
                cols: idx,
                vals,
            } => {
                for (i, yi) in y.chunks_exact_mut(cols).enumerate() {
                    let xi = &x[i * cols..(i + 1) * cols];
                    let wii = self.diag[i];
                    yi.iter_mut().zip(xi).for_each(|(o, &v)| *o = wii * v);
                    for k in row_ptr[i]..row_ptr[i + 1] {
                        let (wij, j) = (vals[k], idx[k]);
                        let xj = &x[j * cols..(j + 1) * cols];
                        yi.iter_mut().zip(xj).for_each(|(o, &v)| *o += wij * v);
                    }
                }
            }
        }
    }
}

/// A dot product with eight independent accumulators so that it vectorises.
pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    let len = a.len().min(b.len());
    let (a, b) = (&a[..len], &b[..len]);
    let (ca, ra) = a.as_chunks::<8>();
    let (cb, rb) = b.as_chunks::<8>();
    let mut acc = [0.0f64; 8];
    for (x, y) in ca.iter().zip(cb) {
        for l in 0..8 {
            acc[l] += x[l] * y[l];
        }
    }
    let mut s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
    for (x, y) in ra.iter().zip(rb) {
        s += x * y;
    }
    s
}

/// `C ← alpha · A B + beta · C`: `A` is `m × k` with strides `(rsa, csa)`, `B` is `k × n` with
/// strides `(rsb, csb)`, `C` is `m × n` row-major with row stride `ldc`.
///
/// Large products go to nalgebra's `gemm` (matrixmultiply, with run-time SIMD detection);
/// products with a side of at most 5 take a plain loop, because nalgebra's own small-size
/// fallback mishandles strided views.
#[allow(clippy::too_many_arguments)]
pub(crate) fn gemm<T: nalgebra::RealField + Copy>(
    alpha: T,
    a: &[T],
    (rsa, csa): (usize, usize),
    b: &[T],
    (rsb, csb): (usize, usize),
    beta: T,
    c: &mut [T],
    ldc: usize,
    (m, k, n): (usize, usize, usize),
) {
    if m == 0 || n == 0 {
        return;
    }
    if m > 5 && k > 5 && n > 5 {
        let av = nalgebra::DMatrixView::from_slice_with_strides(a, m, k, rsa, csa);
        let bv = nalgebra::DMatrixView::from_slice_with_strides(b, k, n, rsb, csb);
        let mut cv = nalgebra::DMatrixViewMut::from_slice_with_strides_mut(c, m, n, ldc, 1);
        cv.gemm(alpha, &av, &bv, beta);
        return;
    }
    for i in 0..m {
        for j in 0..n {
            let mut s = T::zero();
            for l in 0..k {
                s += a[i * rsa + l * csa] * b[l * rsb + j * csb];
            }
            let cij = &mut c[i * ldc + j];
            *cij = alpha * s
                + if beta == T::zero() {
                    T::zero()
                } else {
                    beta * *cij
                };
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A uniform value in `[−½, ½)` from a 64-bit LCG (the sdp tests' input generator).
    pub(crate) fn lcg(state: &mut u64) -> f64 {
        *state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (*state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    }

    /// A dense symmetric `n × n` matrix of [`lcg`] values, filled row by row below the
    /// diagonal.
    pub(crate) fn random_symmetric(n: usize, state: &mut u64) -> Vec<f64> {
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..=i {
                let x = lcg(state);
                a[i * n + j] = x;
                a[j * n + i] = x;
            }
        }
        a
    }

    #[test]
    fn nalgebra_input_matches_row_major() {
        let n = 7;
        let a = random_symmetric(n, &mut 3);
        let m = nalgebra::DMatrix::from_row_slice(n, n, &a);
        let x = SymmetricMatrix::from_nalgebra(&m).unwrap();
        assert_eq!(x.to_dense(), a);
        assert!(!x.is_sparse());
        assert_eq!(x.get(2, 5), a[2 * n + 5]);
        assert_eq!(x.get(9, 0), 0.0);
    }

    #[test]
    fn gemm_agrees_with_nalgebra_for_all_shapes() {
        let mut s = 11;
        for (m, k, n) in [(1, 1, 1), (3, 9, 2), (7, 4, 8), (9, 9, 9), (12, 6, 3)] {
            let a: Vec<f64> = (0..m * k).map(|_| lcg(&mut s)).collect();
            let b: Vec<f64> = (0..k * n).map(|_| lcg(&mut s)).collect();
            let mut c: Vec<f64> = (0..m * n).map(|_| lcg(&mut s)).collect();
            let expected = 2.0
                * nalgebra::DMatrix::from_row_slice(m, k, &a)
                * nalgebra::DMatrix::from_row_slice(k, n, &b)
                + 0.5 * nalgebra::DMatrix::from_row_slice(m, n, &c);
            gemm(2.0, &a, (k, 1), &b, (n, 1), 0.5, &mut c, n, (m, k, n));
            for i in 0..m {
                for j in 0..n {
                    assert!(
                        (c[i * n + j] - expected[(i, j)]).abs() < 1e-14,
                        "{m}x{k}x{n}"
                    );
                }
            }
        }
    }

    #[test]
    fn sparse_product_matches_dense() {
        let n = 40;
        let mut s = 5;
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            a[i * n + i] = lcg(&mut s);
            let j = (i * 7 + 3) % n;
            if j != i {
                let x = lcg(&mut s);
                a[i * n + j] = x;
                a[j * n + i] = x;
            }
        }
        let sparse = SymmetricMatrix::from_row_major(n, n, &a).unwrap();
        assert!(sparse.is_sparse());
        let x: Vec<f64> = (0..n * 3).map(|_| lcg(&mut s)).collect();
        let mut y = vec![0.0; n * 3];
        sparse.mul_block(&x, 3, &mut y);
        for i in 0..n {
            for c in 0..3 {
                let e: f64 = (0..n).map(|j| a[i * n + j] * x[j * 3 + c]).sum();
                assert!((y[i * 3 + c] - e).abs() < 1e-14);
            }
        }
    }
}
