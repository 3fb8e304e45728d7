//! The 2-D nearest-neighbour Ising model.

use crate::error::ParamError;
use crate::target::{BinaryTarget, FlipMove};
use core::convert::Infallible;

/// The size of a lattice.
pub trait LatticeDims: Copy + core::fmt::Debug {
    /// Number of rows.
    fn rows(&self) -> usize;
    /// Number of columns.
    fn cols(&self) -> usize;
}

/// A lattice size fixed at compile time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConstDims<const R: usize, const C: usize>;

impl<const R: usize, const C: usize> LatticeDims for ConstDims<R, C> {
    #[inline(always)]
    fn rows(&self) -> usize {
        R
    }
    #[inline(always)]
    fn cols(&self) -> usize {
        C
    }
}

/// A lattice size chosen at run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dims {
    /// Number of rows.
    pub rows: usize,
    /// Number of columns.
    pub cols: usize,
}

impl LatticeDims for Dims {
    #[inline(always)]
    fn rows(&self) -> usize {
        self.rows
    }
    #[inline(always)]
    fn cols(&self) -> usize {
        self.cols
    }
}

/// A 2-D nearest-neighbour Ising model over spins `s = 2x − 1`, sites in row-major order:
///
/// `U(s) = J Σ_{⟨i,j⟩} s_i s_j + h Σ_i s_i`,
///
/// each nearest-neighbour bond counted once. With `periodic`, rows and columns wrap around
/// along every axis of length 3 or more; an axis of length 1 or 2 stays open, since wrapping
/// would add a self-bond or a second copy of an existing bond.
///
/// The gradient is `∂U/∂x_i = 2 (J Σ_{j~i} s_j + h)`. After a move only the flipped sites and
/// their neighbours are touched.
///
/// # Examples
///
/// ```
/// use langevin_core::models::{IsingLattice, Dims};
/// use langevin_core::BinaryTarget;
/// let mut m = IsingLattice::<_>::with_dims(Dims { rows: 3, cols: 3 }, 1.0, 0.0, true).unwrap();
/// let mut g = [0.0; 9];
/// // All spins up on a 3×3 torus: 18 bonds, each +1.
/// assert_eq!(m.log_density_and_grad(&[1; 9], &mut g).unwrap(), 18.0);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct IsingLattice<D: LatticeDims = Dims> {
    dims: D,
    coupling: f32,
    field: f32,
    wrap_rows: bool,
    wrap_cols: bool,
}

impl<const R: usize, const C: usize> IsingLattice<ConstDims<R, C>> {
    /// An `R × C` lattice with coupling `J` and field `h`.
    ///
    /// # Errors
    ///
    /// [`ParamError::EmptyDimension`] if `R·C = 0`; [`ParamError::NonFinite`] for a non-finite
    /// coupling or field.
    pub fn new(coupling: f32, field: f32, periodic: bool) -> Result<Self, ParamError> {
        Self::with_dims(ConstDims, coupling, field, periodic)
    }
}

impl<D: LatticeDims> IsingLattice<D> {
    /// A lattice of size `dims` with coupling `J` and field `h`.
    ///
    /// # Errors
    ///
    /// As for [`IsingLattice::new`], plus [`ParamError::OutOfRange`] if `rows·cols` overflows
    /// or does not fit a `u32` index.
    pub fn with_dims(
        dims: D,
        coupling: f32,
        field: f32,
        periodic: bool,
    ) -> Result<Self, ParamError> {
        let (r, c) = (dims.rows(), dims.cols());
        let sites = r.checked_mul(c).ok_or(ParamError::OutOfRange {
            name: "rows * cols",
            value: r as f64 * c as f64,
        })?;
        if sites == 0 {
            return Err(ParamError::EmptyDimension);
        }
        if u32::try_from(sites).is_err() {
            return Err(ParamError::OutOfRange {
                name: "rows * cols",
                value: sites as f64,
            });
        }
        if !coupling.is_finite() {
            return Err(ParamError::NonFinite("coupling"));
        }
        if !field.is_finite() {
            return Err(ParamError::NonFinite("field"));
        }
        Ok(Self {
            dims,
            coupling,
            field,
            wrap_rows: periodic && r >= 3,
            wrap_cols: periodic && c >= 3,
        })
    }

    /// The coupling `J`.
    pub fn coupling(&self) -> f32 {
        self.coupling
    }

    /// The field `h`.
    pub fn field(&self) -> f32 {
        self.field
    }

    /// The lattice size.
    pub fn dims(&self) -> D {
        self.dims
    }

    /// Whether rows and columns wrap (as requested at construction and allowed by the size).
    pub fn wraps(&self) -> (bool, bool) {
        (self.wrap_rows, self.wrap_cols)
    }

    /// The up to four neighbours of site `i`; absent ones are `None`.
    #[inline(always)]
    pub fn neighbours(&self, i: usize) -> [Option<usize>; 4] {
        let (rows, cols) = (self.dims.rows(), self.dims.cols());
        let (r, c) = (
            i.checked_div(cols).unwrap_or(0),
            i.checked_rem(cols).unwrap_or(0),
        );
        let (left, right) = axis_neighbours(i, c, cols, 1, self.wrap_cols);
        let (up, down) = axis_neighbours(i, r, rows, cols, self.wrap_rows);
        [left, right, up, down]
    }

    /// `Σ_{j~i} s_j` for the state `x`.
    #[inline(always)]
    fn neighbour_sum(&self, x: &[u8], i: usize) -> f32 {
        self.neighbours(i)
            .iter()
            .flatten()
            .map(|&j| x.get(j).map_or(0.0, |&v| 2.0 * f32::from(v) - 1.0))
            .sum()
    }
}

/// The neighbours before and after site `i` along one axis, where `i` is at position `pos` of
/// `len` and a step along the axis moves `stride` sites; across the edge only if `wrap`.
#[inline(always)]
fn axis_neighbours(
    i: usize,
    pos: usize,
    len: usize,
    stride: usize,
    wrap: bool,
) -> (Option<usize>, Option<usize>) {
    let before = if pos > 0 {
        Some(i - stride)
    } else if wrap {
        Some(i + (len - 1) * stride)
    } else {
        None
    };
    let after = if pos + 1 < len {
        Some(i + stride)
    } else if wrap {
        Some(i + stride - len * stride)
    } else {
        None
    };
    (before, after)
}

impl<D: LatticeDims> BinaryTarget for IsingLattice<D> {
    type Error = Infallible;

    fn dim(&self) -> usize {
        self.dims.rows() * self.dims.cols()
    }

    #[cfg_attr(target_arch = "x86_64", inline(always))]
    fn log_density_and_grad(&mut self, x: &[u8], grad: &mut [f32]) -> Result<f64, Infallible> {
        let mut pair_sum = 0.0f64;
        let mut spin_sum = 0.0f64;
        for (i, (&xi, g)) in x.iter().zip(grad.iter_mut()).enumerate() {
            let n = self.neighbour_sum(x, i);
            let s = 2.0 * f32::from(xi) - 1.0;
            *g = 2.0 * (self.coupling * n + self.field);
            pair_sum += f64::from(s * n);
            spin_sum += f64::from(s);
        }
        // Every bond appears twice in Σ_i s_i n_i.
        Ok(0.5 * f64::from(self.coupling) * pair_sum + f64::from(self.field) * spin_sum)
    }

    #[cfg_attr(target_arch = "x86_64", inline(always))]
    fn log_density_and_grad_after(
        &mut self,
        mv: &FlipMove<'_>,
        grad: &mut [f32],
    ) -> Result<f64, Infallible> {
        // ΔU = Σ_{i flipped} δ_i (J n_i + h) + J Σ_{bonds with both ends flipped} δ_i δ_j, with
        // n_i the neighbour sum before the move. Neighbour sums are small integers, so this and
        // the refreshed gradients are exact functions of the state: no drift over long runs.
        let after = super::local_update(mv, grad, self.dim(), |i, delta, grad| {
            let n_before = self.neighbour_sum(mv.from, i);
            let mut both_flipped = 0.0f32;
            for j in self.neighbours(i).into_iter().flatten() {
                let Some(delta_j) = super::spin_change(mv, j) else {
                    continue;
                };
                both_flipped += delta_j;
                let fresh = 2.0 * (self.coupling * self.neighbour_sum(mv.to, j) + self.field);
                if let Some(g) = grad.get_mut(j) {
                    *g = fresh;
                }
            }
            // Each bond with both ends flipped is met from both ends: count half each time.
            f64::from(delta)
                * (f64::from(self.coupling) * (f64::from(n_before) + 0.5 * f64::from(both_flipped))
                    + f64::from(self.field))
        });
        match after {
            Some(u) => Ok(u),
            None => self.log_density_and_grad(mv.to, grad),
        }
    }
}

impl<D: LatticeDims> crate::baselines::FlipDelta for IsingLattice<D> {
    #[cfg_attr(target_arch = "x86_64", inline(always))]
    fn log_density_delta(&mut self, x: &[u8], i: usize) -> Result<f64, Infallible> {
        // Flipping s_i changes U by −2 s_i (J n_i + h).
        let s = x.get(i).map_or(0.0, |&v| 2.0 * f64::from(v) - 1.0);
        let n = f64::from(self.neighbour_sum(x, i));
        Ok(-2.0 * s * (f64::from(self.coupling) * n + f64::from(self.field)))
    }
}
