//! The Potts model on a graph.

use super::{ModelError, check_states};
use langevin_core::ParamError;
use langevin_core::categorical::{CategoricalConditional, CategoricalTarget};
use std::convert::Infallible;

/// A Potts model over labels `x ∈ {0, …, S−1}^n` on a graph:
///
/// `U(x) = Σ_{(i,j) ∈ E} J_ij [x_i = x_j] + Σ_i h_{i, x_i}`.
///
/// Written on the one-hot encoding, `[x_i = x_j] = Σ_k onehot_{i,k} onehot_{j,k}`, so the
/// gradient is `∂U/∂onehot_{i,k} = h_{i,k} + Σ_{j~i} J_ij [x_j = k]`. An edge listed twice
/// counts twice. Evaluation costs `O(|E| + n·S)`; a single-coordinate conditional
/// `O(S + deg i)`.
///
/// # Examples
///
/// ```
/// use langevin_std::models::Potts;
/// use langevin_std::core_kernels::categorical::CategoricalTarget;
/// let field = vec![0.0, 0.1, 0.2, 0.0, 0.0, 0.0];
/// let mut m = Potts::new(3, 2, &[(0, 1, 0.8)], field).unwrap();
/// let mut g = [0.0f32; 6];
/// assert!((m.log_density_and_grad(&[2, 2], &mut g).unwrap() - 1.0).abs() < 1e-12);
/// ```
#[derive(Clone, Debug)]
pub struct Potts {
    n: usize,
    s: usize,
    offsets: Vec<usize>,
    neighbours: Vec<usize>,
    couplings: Vec<f64>,
    field: Vec<f64>,
}

impl Potts {
    /// Builds the model from `(i, j, J_ij)` edges and a field of `n·S` values (row-major,
    /// `field[i·S + k] = h_{i,k}`).
    ///
    /// # Errors
    ///
    /// A [`ModelError`] for `n = 0`, `S` outside `2..=65535`, an edge endpoint `≥ n`, a
    /// self-loop, a field of the wrong length or non-finite numbers.
    pub fn new(
        states: usize,
        n: usize,
        edges: &[(usize, usize, f64)],
        field: Vec<f64>,
    ) -> Result<Self, ModelError> {
        check_states(states)?;
        if n == 0 {
            return Err(ParamError::EmptyDimension.into());
        }
        langevin_core::LenError::check("field", n * states, field.len())
            .map_err(ParamError::from)?;
        if field.iter().any(|h| !h.is_finite()) {
            return Err(ParamError::NonFinite("field").into());
        }
        let mut degree = vec![0usize; n];
        for &(i, j, c) in edges {
            if i >= n || j >= n || i == j {
                return Err(ParamError::OutOfRange {
                    name: "edge endpoint",
                    value: if i == j { i as f64 } else { i.max(j) as f64 },
                }
                .into());
            }
            if !c.is_finite() {
                return Err(ParamError::NonFinite("coupling").into());
            }
            degree[i] += 1;
            degree[j] += 1;
        }
        let mut offsets = vec![0usize; n + 1];
        for i in 0..n {
            offsets[i + 1] = offsets[i] + degree[i];
        }
        let mut fill = offsets.clone();
        let mut neighbours = vec![0usize; offsets[n]];
        let mut couplings = vec![0.0; offsets[n]];
        for &(i, j, c) in edges {
            for (a, b) in [(i, j), (j, i)] {
                neighbours[fill[a]] = b;
                couplings[fill[a]] = c;
                fill[a] += 1;
            }
        }
        Ok(Self {
            n,
            s: states,
            offsets,
            neighbours,
            couplings,
            field,
        })
    }

    /// A periodic `rows × cols` lattice with uniform coupling `J` and no field.
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new).
    pub fn lattice(
        rows: usize,
        cols: usize,
        states: usize,
        coupling: f64,
    ) -> Result<Self, ModelError> {
        let mut edges = Vec::new();
        for r in 0..rows {
            for c in 0..cols {
                let i = r * cols + c;
                if cols > 2 || c + 1 < cols {
                    edges.push((i, r * cols + (c + 1) % cols, coupling));
                }
                if rows > 2 || r + 1 < rows {
                    edges.push((i, ((r + 1) % rows) * cols + c, coupling));
                }
            }
        }
        Self::new(states, rows * cols, &edges, vec![0.0; rows * cols * states])
    }

    /// `U(x)` without touching any cache.
    pub fn log_density(&self, x: &[u16]) -> f64 {
        let mut u = 0.0;
        for i in 0..self.n {
            u += self.field[i * self.s + usize::from(x[i])];
            for e in self.offsets[i]..self.offsets[i + 1] {
                let j = self.neighbours[e];
                if j > i && x[j] == x[i] {
                    u += self.couplings[e];
                }
            }
        }
        u
    }

    fn row(&self, x: &[u16], i: usize, out: &mut [f64]) {
        out.copy_from_slice(&self.field[i * self.s..(i + 1) * self.s]);
        for e in self.offsets[i]..self.offsets[i + 1] {
            out[usize::from(x[self.neighbours[e]])] += self.couplings[e];
        }
    }
}

impl CategoricalTarget for Potts {
    label_size!(n, s);

    #[inline(always)]
    fn log_density_and_grad(&mut self, x: &[u16], grad: &mut [f32]) -> Result<f64, Infallible> {
        for (i, row) in grad.chunks_exact_mut(self.s).enumerate() {
            for (g, &h) in row
                .iter_mut()
                .zip(&self.field[i * self.s..(i + 1) * self.s])
            {
                *g = h as f32;
            }
            for e in self.offsets[i]..self.offsets[i + 1] {
                row[usize::from(x[self.neighbours[e]])] += self.couplings[e] as f32;
            }
        }
        Ok(self.log_density(x))
    }
}

impl CategoricalConditional for Potts {
    fn conditional(&mut self, x: &[u16], i: usize, out: &mut [f64]) -> Result<(), Infallible> {
        self.row(x, i, out);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditional_is_a_difference_of_log_densities() {
        let m = Potts::new(
            3,
            4,
            &[(0, 1, 0.5), (1, 2, -0.7), (2, 3, 1.1), (3, 0, 0.2)],
            (0..12).map(|v| v as f64 * 0.1).collect(),
        )
        .unwrap();
        let mut m2 = m.clone();
        let x = [0u16, 2, 2, 1];
        let mut out = [0.0; 3];
        m2.conditional(&x, 2, &mut out).unwrap();
        let base = out[2] - m.log_density(&x);
        for k in 0..3u16 {
            let mut y = x;
            y[2] = k;
            assert!((out[usize::from(k)] - m.log_density(&y) - base).abs() < 1e-12);
        }
        assert!(Potts::new(3, 2, &[(0, 0, 1.0)], vec![0.0; 6]).is_err());
        assert!(Potts::new(1, 2, &[], vec![0.0; 2]).is_err());
        assert!(Potts::new(3, 2, &[(0, 5, 1.0)], vec![0.0; 6]).is_err());
    }
}
