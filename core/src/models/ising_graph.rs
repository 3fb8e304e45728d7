//! The Ising model on an arbitrary graph.

use crate::error::{LenError, ParamError};
use crate::target::{BinaryTarget, FlipMove};
use core::convert::Infallible;

/// An Ising model on a graph in compressed adjacency form, over spins `s = 2x − 1`:
///
/// `U(s) = Σ_{(i,j) ∈ E} J_ij s_i s_j + Σ_i h_i s_i`.
///
/// The neighbours of node `i` are `neighbours[offsets[i]..offsets[i+1]]` with couplings
/// `couplings[offsets[i]..offsets[i+1]]`; every edge must be listed from both ends with the same
/// coupling (so `Σ_i s_i Σ_{j~i} J_ij s_j` counts each edge twice). Self-loops are not allowed.
/// Gradients are accumulated in `f64` over each node's neighbours and refreshed exactly for the
/// neighbours of flipped nodes, so they stay exact functions of the state.
///
/// # Examples
///
/// ```
/// use langevin_core::models::IsingGraph;
/// use langevin_core::BinaryTarget;
/// // A single edge 0 — 1 with J = 0.5 and fields 0.1, −0.1.
/// let mut m = IsingGraph::new(&[0, 1, 2], &[1, 0], &[0.5, 0.5], &[0.1, -0.1]).unwrap();
/// let mut g = [0.0; 2];
/// let u = m.log_density_and_grad(&[1, 0], &mut g).unwrap(); // s = (+1, −1)
/// assert!((u - (-0.5 + 0.2)).abs() < 1e-6);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct IsingGraph<'a> {
    offsets: &'a [u32],
    neighbours: &'a [u32],
    couplings: &'a [f32],
    field: &'a [f32],
}

impl<'a> IsingGraph<'a> {
    /// Checks and wraps the graph.
    ///
    /// # Errors
    ///
    /// [`ParamError::EmptyDimension`] for no nodes; [`ParamError::Len`] when the lengths do not
    /// fit (`offsets` has `d + 1` entries, ending at `neighbours.len()`); [`ParamError::OutOfRange`]
    /// for decreasing offsets, neighbour indices `≥ d`, self-loops, or an edge not listed from both
    /// ends with the same coupling; [`ParamError::NonFinite`] for non-finite couplings or fields.
    pub fn new(
        offsets: &'a [u32],
        neighbours: &'a [u32],
        couplings: &'a [f32],
        field: &'a [f32],
    ) -> Result<Self, ParamError> {
        let d = field.len();
        if d == 0 {
            return Err(ParamError::EmptyDimension);
        }
        LenError::check("offsets", d + 1, offsets.len())?;
        LenError::check("couplings", neighbours.len(), couplings.len())?;
        let end = offsets.last().copied().unwrap_or(0) as usize;
        LenError::check("neighbours", end, neighbours.len())?;
        if offsets.first() != Some(&0) || offsets.windows(2).any(|w| w.first() > w.get(1)) {
            return Err(ParamError::OutOfRange {
                name: "offsets",
                value: f64::NAN,
            });
        }
        ParamError::check_finite("field", field)?;
        ParamError::check_finite("couplings", couplings)?;
        let graph = Self {
            offsets,
            neighbours,
            couplings,
            field,
        };
        for i in 0..d {
            for (j, c) in graph.edges(i) {
                let back = j < d && j != i && graph.edges(j).any(|(k, ck)| k == i && ck == c);
                if !back {
                    return Err(ParamError::OutOfRange {
                        name: "neighbours",
                        value: j as f64,
                    });
                }
            }
        }
        Ok(graph)
    }

    /// The edges `(neighbour, coupling)` of node `i`.
    #[inline(always)]
    pub fn edges(&self, i: usize) -> impl Iterator<Item = (usize, f32)> + '_ {
        let lo = self.offsets.get(i).copied().unwrap_or(0) as usize;
        let hi = self.offsets.get(i + 1).copied().unwrap_or(0) as usize;
        let nb = self.neighbours.get(lo..hi).unwrap_or(&[]);
        let cp = self.couplings.get(lo..hi).unwrap_or(&[]);
        nb.iter().zip(cp).map(|(&j, &c)| (j as usize, c))
    }

    /// `Σ_{j~i} J_ij s_j` in `f64`.
    #[inline(always)]
    fn local_field(&self, x: &[u8], i: usize) -> f64 {
        self.edges(i)
            .map(|(j, c)| f64::from(c) * x.get(j).map_or(0.0, |&v| 2.0 * f64::from(v) - 1.0))
            .sum()
    }

    #[inline(always)]
    fn grad_at(&self, x: &[u8], i: usize) -> f32 {
        let h = self.field.get(i).copied().unwrap_or(0.0);
        (2.0 * (self.local_field(x, i) + f64::from(h))) as f32
    }

    /// The share of `ΔU` of flipping site `i` (spin change `delta`) in the move `mv`, refreshing
    /// the gradient entries of its neighbours at the new state.
    #[inline(always)]
    fn flip_update(&self, mv: &FlipMove<'_>, i: usize, delta: f32, grad: &mut [f32]) -> f64 {
        let mut both = 0.0f64;
        for (j, c) in self.edges(i) {
            let Some(delta_j) = super::spin_change(mv, j) else {
                continue;
            };
            both += f64::from(c) * f64::from(delta_j);
            let fresh = self.grad_at(mv.to, j);
            if let Some(g) = grad.get_mut(j) {
                *g = fresh;
            }
        }
        let h = f64::from(self.field.get(i).copied().unwrap_or(0.0));
        f64::from(delta) * (self.local_field(mv.from, i) + 0.5 * both + h)
    }

    /// `U(x)`, writing `∇U(x)` into `grad`.
    fn evaluate(&self, x: &[u8], grad: &mut [f32]) -> f64 {
        let mut u = 0.0f64;
        for (i, ((&xi, g), &h)) in x.iter().zip(grad.iter_mut()).zip(self.field).enumerate() {
            let s = 2.0 * f64::from(xi) - 1.0;
            let local = self.local_field(x, i);
            *g = (2.0 * (local + f64::from(h))) as f32;
            u += s * (0.5 * local + f64::from(h));
        }
        u
    }
}

impl BinaryTarget for IsingGraph<'_> {
    type Error = Infallible;

    fn dim(&self) -> usize {
        self.field.len()
    }

    #[cfg_attr(target_arch = "x86_64", inline(always))]
    fn log_density_and_grad(&mut self, x: &[u8], grad: &mut [f32]) -> Result<f64, Infallible> {
        Ok(self.evaluate(x, grad))
    }

    #[cfg_attr(target_arch = "x86_64", inline(always))]
    fn log_density_and_grad_after(
        &mut self,
        mv: &FlipMove<'_>,
        grad: &mut [f32],
    ) -> Result<f64, Infallible> {
        let flip = |i, delta, grad: &mut [f32]| self.flip_update(mv, i, delta, grad);
        let after = super::local_update(mv, grad, self.dim(), flip);
        Ok(after.unwrap_or_else(|| self.evaluate(mv.to, grad)))
    }
}

impl crate::baselines::FlipDelta for IsingGraph<'_> {
    #[cfg_attr(target_arch = "x86_64", inline(always))]
    fn log_density_delta(&mut self, x: &[u8], i: usize) -> Result<f64, Infallible> {
        // Flipping s_i changes U by −2 s_i (Σ_j J_ij s_j + h_i).
        let s = x.get(i).map_or(0.0, |&v| 2.0 * f64::from(v) - 1.0);
        let h = f64::from(self.field.get(i).copied().unwrap_or(0.0));
        Ok(-2.0 * s * (self.local_field(x, i) + h))
    }
}
