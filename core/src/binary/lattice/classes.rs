//! The class bytes of a state (neighbour sum and value of every site), computed from the
//! state or kept from one step to the next in [`LatticeClasses`].

use super::swar::{boundary_row, copy_classes, inner_classes, keep_classes};
use super::{ABSENT, LatticeProposal};
use crate::models::LatticeDims;

impl<D: LatticeDims> LatticeProposal<D> {
    /// Writes the class byte of every site of `x` into `class`, keeping the bits of `keep` (0 or
    /// [`FLIP_BIT`](super::FLIP_BIT)) of what `class` held: the inner rows in one flat SWAR pass
    /// (then their first and last columns corrected), then the first and last rows
    /// ([`boundary_row`]).
    #[inline(always)]
    pub(super) fn fill_classes(&self, x: &[u8], class: &mut [u8], keep: u8) {
        let dims = self.model.dims();
        let (rows, cols) = (dims.rows(), dims.cols());
        let d = rows * cols;
        let (wrap_rows, wrap_cols) = self.model.wraps();
        if rows >= 3 {
            let inner = (
                class.get_mut(cols..d - cols),
                x.get(cols..d - cols),
                x.get(..d - 2 * cols),
                x.get(2 * cols..),
                x.get(cols - 1..d - cols - 1),
                x.get(cols + 1..d - cols + 1),
            );
            if let (Some(out), Some(mid), Some(up), Some(down), Some(left), Some(right)) = inner {
                inner_classes(out, [mid, up, down, left, right], keep);
            }
            // The flat pass took the previous row's last site as the left neighbour of column
            // 0, and the next row's first as the right neighbour of the last column.
            #[cfg(target_pointer_width = "64")]
            {
                let (absent, wrap) = if wrap_cols { (0, 1) } else { (ABSENT, 0) };
                let out_rows = class.chunks_exact_mut(cols.max(1)).skip(1);
                let x_rows = x.chunks_exact(cols.max(1));
                let windows = x_rows
                    .clone()
                    .zip(x_rows.clone().skip(1))
                    .zip(x_rows.skip(2));
                for (out, ((prev, row), next)) in out_rows.zip(windows) {
                    let (Some(&p), Some(&n), Some(&first), Some(&last)) =
                        (prev.last(), next.first(), row.first(), row.last())
                    else {
                        continue;
                    };
                    if let Some(o) = out.first_mut() {
                        *o = o
                            .wrapping_sub(p << 1)
                            .wrapping_add(absent + wrap * (last << 1));
                    }
                    if let Some(o) = out.last_mut() {
                        *o = o
                            .wrapping_sub(n << 1)
                            .wrapping_add(absent + wrap * (first << 1));
                    }
                }
            }
            #[cfg(not(target_pointer_width = "64"))]
            {
                let first_col = class.get_mut(cols..d - cols).unwrap_or(&mut []);
                for (r, out) in first_col.chunks_exact_mut(cols.max(1)).enumerate() {
                    let start = (r + 1) * cols;
                    let at = |i: usize| x.get(i).map_or(0, |&v| v << 1);
                    let (left, right) = if wrap_cols {
                        (at(start + cols - 1), at(start))
                    } else {
                        (ABSENT, ABSENT)
                    };
                    if let Some(o) = out.first_mut() {
                        *o = o.wrapping_sub(at(start - 1)).wrapping_add(left);
                    }
                    if let Some(o) = out.last_mut() {
                        *o = o.wrapping_sub(at(start + cols)).wrapping_add(right);
                    }
                }
            }
        }
        let row_at = |r: usize| x.get(r * cols..(r + 1) * cols);
        for r in [0, rows - 1] {
            let (Some(row), Some(out)) = (row_at(r), class.get_mut(r * cols..(r + 1) * cols))
            else {
                continue;
            };
            let up = match r {
                0 if wrap_rows => row_at(rows - 1),
                0 => None,
                _ => row_at(r - 1),
            };
            let down = match r + 1 {
                n if n < rows => row_at(n),
                _ if wrap_rows => row_at(0),
                _ => None,
            };
            boundary_row(row, up, down, out, keep, wrap_cols);
        }
    }
}

/// The class bytes of a chain's current state, kept by
/// [`LatticeKernel::step_with_classes`](super::LatticeKernel::step_with_classes) from one step to
/// the next in `d` bytes of storage `S` that the caller owns (an array, a slice, a `Vec`).
///
/// A step trusts the bytes only while they describe its chain: they must have been computed
/// on the kernel's lattice (its shape and boundaries), and their value bits must equal the
/// chain's state, which one pass checks while copying them (a state changed by other code,
/// or another chain stepped with the same bytes, fails the check). Otherwise the step
/// computes them afresh, so stale bytes cost time, never a wrong draw.
#[derive(Clone, Debug)]
pub struct LatticeClasses<S> {
    pub(super) bytes: S,
    /// The lattice `(rows, cols, wraps)` the bytes were computed on; `None` until they are.
    lattice: Option<(usize, usize, (bool, bool))>,
}

impl<S: AsRef<[u8]> + AsMut<[u8]>> LatticeClasses<S> {
    /// Empty kept classes in `bytes` (which must hold `d` bytes; their content is ignored).
    pub const fn new(bytes: S) -> Self {
        Self {
            bytes,
            lattice: None,
        }
    }

    /// The storage back.
    pub fn into_inner(self) -> S {
        self.bytes
    }

    /// Writes the class bytes of `x` on `p`'s lattice into `class` (of `x`'s length): copied
    /// if the kept ones describe `x`, computed and kept otherwise.
    #[inline(always)]
    pub(super) fn load<D: LatticeDims>(
        &mut self,
        p: &LatticeProposal<D>,
        x: &[u8],
        class: &mut [u8],
    ) {
        let dims = p.model.dims();
        let lattice = Some((dims.rows(), dims.cols(), p.model.wraps()));
        let bytes = self.bytes.as_mut();
        if self.lattice != lattice || copy_classes(class, bytes, x) {
            p.fill_classes(x, class, 0);
            keep_classes(bytes, class);
            self.lattice = lattice;
        }
    }
}
