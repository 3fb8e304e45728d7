//! Dense matrix products over caller buffers: `C += A · B` in `f32`, row-major.
//!
//! [`matmul_acc`] is a blocked loop with a fixed summation order: every entry of `C` receives
//! its products in increasing `k`, each as a multiplication followed by an addition (no fused
//! multiply–add). Its results are therefore those of the plain triple loop, bit for bit, on
//! every platform, whatever the block sizes. [`Product`] lets a batched evaluation use another
//! implementation (a SIMD library on a host) in its place.

use crate::error::LenError;

/// Rows of `C` computed together (chains, in a batched evaluation).
const MR: usize = 4;

/// Columns of `C` computed together: one register tile is `MR × NR`.
const NR: usize = 8;

/// A matrix product `C += A · B` on row-major `f32` buffers (`A` is `m × k`, `B` is `k × n`,
/// `C` is `m × n`).
pub trait Product {
    /// Adds `A · B` to `C`; by default the portable [`matmul_acc`].
    ///
    /// # Errors
    ///
    /// [`LenError`] if a buffer does not have the length its shape needs; `C` is unchanged then.
    fn matmul_acc(
        &mut self,
        shape: Shape,
        a: &[f32],
        b: &[f32],
        c: &mut [f32],
    ) -> Result<(), LenError> {
        matmul_acc(shape, a, b, c)
    }
}

/// The shape of a product: `A` is `m × k`, `B` is `k × n`, `C` is `m × n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Rows of `A` and `C`.
    pub m: usize,
    /// Columns of `A`, rows of `B`.
    pub k: usize,
    /// Columns of `B` and `C`.
    pub n: usize,
}

impl Shape {
    /// Checks the three buffer lengths against the shape.
    ///
    /// # Errors
    ///
    /// [`LenError`] naming the first buffer of the wrong length (`expected` is `usize::MAX`
    /// when the shape's size overflows).
    pub fn check(&self, a: usize, b: usize, c: usize) -> Result<(), LenError> {
        let size = |r: usize, s: usize| r.saturating_mul(s);
        LenError::check("A", size(self.m, self.k), a)?;
        LenError::check("B", size(self.k, self.n), b)?;
        LenError::check("C", size(self.m, self.n), c)
    }
}

/// The portable product: [`matmul_acc`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Blocked;

impl Product for Blocked {}

/// `C += A · B` (row-major), in register tiles of 4 rows by 8 columns: each tile streams the
/// `k` rows of its 8-column panel of `B` once for 4 rows of `A`. Every entry's products are
/// added in increasing `k` (multiply, then add), so `C` is bit-identical to the plain loop
/// `c[i][j] = c[i][j] + a[i][l] · b[l][j]` for `l = 0, 1, …`.
///
/// # Errors
///
/// [`LenError`] if a buffer does not have the length `shape` needs; `C` is unchanged then.
///
/// # Examples
///
/// ```
/// use langevin_core::dense::{Shape, matmul_acc};
/// let a = [1.0f32, 2.0, 3.0, 4.0]; // 2 × 2
/// let b = [1.0f32, 0.0, 1.0, 0.0, 1.0, 1.0]; // 2 × 3
/// let mut c = [10.0f32; 6];
/// matmul_acc(Shape { m: 2, k: 2, n: 3 }, &a, &b, &mut c).unwrap();
/// assert_eq!(c, [11.0, 12.0, 13.0, 13.0, 14.0, 17.0]);
/// ```
pub fn matmul_acc(shape: Shape, a: &[f32], b: &[f32], c: &mut [f32]) -> Result<(), LenError> {
    shape.check(a.len(), b.len(), c.len())?;
    let Shape { k, n, .. } = shape;
    if n == 0 || k == 0 {
        return Ok(());
    }
    for (c_rows, a_rows) in c.chunks_mut(MR * n).zip(a.chunks(MR * k)) {
        let full = c_rows.len() == MR * n;
        let mut j = 0;
        while j < n {
            if full && j + NR <= n {
                tile(a_rows, b, c_rows, k, n, j);
            } else {
                edge(a_rows, b, c_rows, k, n, j..(j + NR).min(n));
            }
            j += NR;
        }
    }
    Ok(())
}

/// One full `MR × NR` tile at column `j`: the accumulators stay in registers over all `k`.
#[inline(always)]
fn tile(a_rows: &[f32], b: &[f32], c_rows: &mut [f32], k: usize, n: usize, j: usize) {
    let mut acc = [[0f32; NR]; MR];
    for (r, acc_r) in acc.iter_mut().enumerate() {
        if let Some(Ok(src)) = c_rows
            .get(r * n + j..r * n + j + NR)
            .map(<&[f32; NR]>::try_from)
        {
            *acc_r = *src;
        }
    }
    let mut rows = a_rows.chunks_exact(k);
    let (Some(a0), Some(a1), Some(a2), Some(a3)) =
        (rows.next(), rows.next(), rows.next(), rows.next())
    else {
        return;
    };
    let lanes = b.chunks_exact(n).zip(a0).zip(a1).zip(a2).zip(a3);
    for ((((b_row, &s0), &s1), &s2), &s3) in lanes {
        let Some(Ok(w)) = b_row.get(j..j + NR).map(<&[f32; NR]>::try_from) else {
            continue;
        };
        let [r0, r1, r2, r3] = &mut acc;
        for (q, &wq) in w.iter().enumerate() {
            if let (Some(x0), Some(x1), Some(x2), Some(x3)) =
                (r0.get_mut(q), r1.get_mut(q), r2.get_mut(q), r3.get_mut(q))
            {
                *x0 += s0 * wq;
                *x1 += s1 * wq;
                *x2 += s2 * wq;
                *x3 += s3 * wq;
            }
        }
    }
    for (r, acc_r) in acc.iter().enumerate() {
        if let Some(dst) = c_rows.get_mut(r * n + j..r * n + j + NR) {
            dst.copy_from_slice(acc_r);
        }
    }
}

/// The entries of columns `cols` of every row in `c_rows`, one at a time (short tiles at the
/// right or bottom edge), in the same order.
fn edge(
    a_rows: &[f32],
    b: &[f32],
    c_rows: &mut [f32],
    k: usize,
    n: usize,
    cols: core::ops::Range<usize>,
) {
    for (c_row, a_row) in c_rows.chunks_exact_mut(n).zip(a_rows.chunks_exact(k)) {
        for j in cols.clone() {
            let mut t = c_row.get(j).copied().unwrap_or(0.0);
            for (b_row, &s) in b.chunks_exact(n).zip(a_row) {
                t += s * b_row.get(j).copied().unwrap_or(0.0);
            }
            if let Some(cj) = c_row.get_mut(j) {
                *cj = t;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    /// The plain triple loop.
    fn naive(s: Shape, a: &[f32], b: &[f32], c: &mut [f32]) {
        for i in 0..s.m {
            for j in 0..s.n {
                let mut t = c[i * s.n + j];
                for l in 0..s.k {
                    t += a[i * s.k + l] * b[l * s.n + j];
                }
                c[i * s.n + j] = t;
            }
        }
    }

    fn values(len: usize, seed: u32) -> Vec<f32> {
        (0..len)
            .map(|i| {
                ((i as u32).wrapping_mul(2_654_435_761).wrapping_add(seed) % 2001) as f32 * 1e-3
                    - 1.0
            })
            .map(|v| v * 1.37)
            .collect()
    }

    #[test]
    fn equals_the_plain_loop_bit_for_bit() {
        for (m, k, n) in [
            (1, 1, 1),
            (4, 8, 8),
            (5, 13, 17),
            (9, 3, 24),
            (3, 40, 7),
            (8, 500, 33),
        ] {
            let s = Shape { m, k, n };
            let (a, b) = (values(m * k, 1), values(k * n, 2));
            let mut c = values(m * n, 3);
            let mut expected = c.clone();
            naive(s, &a, &b, &mut expected);
            matmul_acc(s, &a, &b, &mut c).unwrap();
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&c), bits(&expected), "{m}×{k}×{n}");
        }
    }

    #[test]
    fn wrong_lengths_are_errors() {
        let s = Shape { m: 2, k: 3, n: 4 };
        let mut c = [0f32; 8];
        assert!(matmul_acc(s, &[0.0; 5], &[0.0; 12], &mut c).is_err());
        assert!(matmul_acc(s, &[0.0; 6], &[0.0; 11], &mut c).is_err());
        assert!(matmul_acc(s, &[0.0; 6], &[0.0; 12], &mut c[..7]).is_err());
        let huge = Shape {
            m: usize::MAX,
            k: 2,
            n: 1,
        };
        assert!(matmul_acc(huge, &[], &[0.0; 2], &mut []).is_err());
        assert!(matmul_acc(Shape { m: 2, k: 0, n: 4 }, &[], &[], &mut c).is_ok());
    }
}
