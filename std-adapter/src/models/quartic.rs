//! A mixture of quartic wells over an ordinal lattice.

use super::{ModelError, Problem, check_states};
use langevin_core::ParamError;
use langevin_core::ordinal::{OrdinalConditional, OrdinalTarget};
use nalgebra::DMatrix;
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::convert::Infallible;

/// A quartic mixture over `x ∈ {0, …, S−1}^d` in the spirit of the quartic benchmark of
/// Sun et al. (2023), Sec. 5.3 (after Rhodes & Gutmann). The formula there is not fully
/// specified, so this is the definition used here:
///
/// `U(x) = log Σ_{k=1}^{K} exp(−p_k(x))`, `p_k(x) = Σ_i (u_{k,i}⁴ / 4 + u_{k,i}² / 2)`,
/// `u_k = D⁻¹ Pᵀ (x − μ_k)`,
///
/// with centres `μ_k = (k−1)/(K−1) · (S−1) · 1` along the diagonal (one centre at the middle
/// for `K = 1`), a shared random rotation `P` (QR of a seeded Gaussian matrix) and scales
/// `D_ii = σ · exp(−½ + (i−1)/(d−1))` (a spread of `e` between the narrowest and the widest
/// direction, as in the paper's scale vector). The paper's setting is `S = 21`, `d = 50`,
/// `K = 50`; `σ` sets the well width in lattice units.
///
/// Evaluation costs `O(K·d²)` and allocates nothing (the model holds its scratch). The
/// conditional of one coordinate costs `O(S·K·d)`: it keeps the rotated coordinates
/// `Pᵀ(x − μ_k)` of the last state it saw and moves them by one row of `P` per coordinate that
/// changed since (recomputing them in full once `d` such updates have accumulated, so rounding
/// cannot drift).
///
/// # Examples
///
/// ```
/// use langevin_std::models::QuarticMixture;
/// use langevin_std::core_kernels::ordinal::OrdinalTarget;
/// let mut m = QuarticMixture::new(4, 21, 3, 2.0, 7).unwrap();
/// let mut g = [0.0f32; 4];
/// assert!(m.log_density_and_grad(&[10; 4], &mut g).unwrap().is_finite());
/// ```
#[derive(Clone, Debug)]
pub struct QuarticMixture {
    s: usize,
    d: usize,
    centres: Vec<f64>,
    /// `P`, row-major (row `i` is what coordinate `i` adds to the rotated coordinates).
    rotation: Vec<f64>,
    /// `Pᵀ`, row-major (row `j` is column `j` of `P`).
    rotation_t: Vec<f64>,
    inv_scale: Vec<f64>,
    /// Scratch: `x − μ_k`.
    shifted: Vec<f64>,
    /// `(Pᵀ(x − μ_k))_j` at `k·d + j`, for the state `at`.
    rotated: Vec<f64>,
    /// The state `rotated` belongs to (empty: none yet).
    at: Vec<u16>,
    /// Single-coordinate updates applied to `rotated` since it was last computed in full.
    updates: usize,
    /// Scratch: `−p_k` per component.
    weights: Vec<f64>,
    /// Scratch: the gradient in double precision.
    grad: Vec<f64>,
}

impl QuarticMixture {
    /// `K` components in dimension `d` over `S` values, well width `σ`, rotation from `seed`.
    ///
    /// # Errors
    ///
    /// A [`ModelError`] for `d = 0`, `K = 0`, `S` outside `2..=65535`, `σ` not finite
    /// and positive, or a model whose [`memory`](Self::memory) is beyond `isize::MAX` bytes.
    pub fn new(
        dim: usize,
        states: usize,
        components: usize,
        sigma: f64,
        seed: u64,
    ) -> Result<Self, ModelError> {
        check_states(states)?;
        if dim == 0 || components == 0 {
            return Err(ParamError::EmptyDimension.into());
        }
        if !(sigma.is_finite() && sigma > 0.0) {
            return Err(ParamError::OutOfRange {
                name: "sigma",
                value: sigma,
            }
            .into());
        }
        let square = match Self::memory(dim, components) {
            Some(bytes) if bytes <= isize::MAX as u64 => dim * dim,
            _ => {
                let problem = Problem::TooLarge { dim, components };
                return Err(ModelError::new("dim", problem));
            }
        };
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut z = vec![0.0; square];
        langevin_core::random::fill_normal(&mut rng, &mut z);
        let q = householder_q(DMatrix::from_row_slice(dim, dim, &z));
        // nalgebra stores column-major: Q's columns in turn are the rows of Pᵀ.
        let rotation_t: Vec<f64> = q.as_slice().to_vec();
        let rotation: Vec<f64> = q.transpose().as_slice().to_vec();
        let last = (states - 1) as f64;
        let centres = (0..components)
            .map(|k| {
                if components > 1 {
                    k as f64 / (components - 1) as f64 * last
                } else {
                    last / 2.0
                }
            })
            .collect();
        let inv_scale = (0..dim)
            .map(|i| {
                let t = if dim > 1 {
                    i as f64 / (dim - 1) as f64
                } else {
                    0.5
                };
                1.0 / (sigma * (-0.5 + t).exp())
            })
            .collect();
        Ok(Self {
            s: states,
            d: dim,
            centres,
            rotation,
            rotation_t,
            inv_scale,
            shifted: vec![0.0; dim],
            rotated: vec![0.0; components * dim],
            at: Vec::new(),
            updates: 0,
            weights: vec![0.0; components],
            grad: vec![0.0; dim],
        })
    }

    /// Bytes that building the model takes at its peak (`None`: beyond 2^64): five `d × d`
    /// matrices of doubles (the Gaussian draw, its factorisation, `Q`, `P` and `Pᵀ`) and the
    /// `K × d` rotated coordinates.
    pub fn memory(dim: usize, components: usize) -> Option<u64> {
        let d = dim as u64;
        let square = d.checked_mul(d)?.checked_mul(5 * 8)?;
        let rotated = d.checked_mul(components as u64)?.checked_mul(8)?;
        square.checked_add(rotated)
    }

    /// Computes `Pᵀ(x − μ_k)` for every component in full, for the state `x`.
    fn rotate(&mut self, x: &[u16]) {
        let d = self.d;
        for (&c, rotated) in self.centres.iter().zip(self.rotated.chunks_exact_mut(d)) {
            for (r, &v) in self.shifted.iter_mut().zip(x) {
                *r = f64::from(v) - c;
            }
            for (out, column) in rotated.iter_mut().zip(self.rotation_t.chunks_exact(d)) {
                // (Pᵀ r)_j = Σ_i P_ij r_i, summed in the order of i.
                let mut acc = 0.0;
                for (&p, &r) in column.iter().zip(&self.shifted) {
                    acc += p * r;
                }
                *out = acc;
            }
        }
        self.at.clear();
        self.at.extend_from_slice(x);
        self.updates = 0;
    }

    /// Brings the rotated coordinates to `x`: one row of `P` per coordinate that changed, or
    /// in full when there is no earlier state or `d` updates have accumulated.
    fn move_to(&mut self, x: &[u16]) {
        let d = self.d;
        if self.at.len() != d {
            return self.rotate(x);
        }
        let changed = self.at.iter().zip(x).filter(|(a, b)| a != b).count();
        if changed == 0 {
            return;
        }
        if self.updates + changed > d {
            return self.rotate(x);
        }
        for (i, (a, &v)) in self.at.iter_mut().zip(x).enumerate() {
            if *a == v {
                continue;
            }
            let delta = f64::from(v) - f64::from(*a);
            let row = &self.rotation[i * d..(i + 1) * d];
            for rotated in self.rotated.chunks_exact_mut(d) {
                for (t, &p) in rotated.iter_mut().zip(row) {
                    *t += p * delta;
                }
            }
            *a = v;
        }
        self.updates += changed;
    }

    /// `U(x)`.
    pub fn log_density(&mut self, x: &[u16]) -> f64 {
        self.rotate(x);
        let mut m = f64::NEG_INFINITY;
        for (w, rotated) in self
            .weights
            .iter_mut()
            .zip(self.rotated.chunks_exact(self.d))
        {
            let mut p = 0.0;
            for (&t, &inv) in rotated.iter().zip(&self.inv_scale) {
                let u = t * inv;
                let u2 = u * u;
                p += 0.25 * u2 * u2 + 0.5 * u2;
            }
            *w = -p;
            m = m.max(-p);
        }
        let z: f64 = self.weights.iter().map(|e| (e - m).exp()).sum();
        m + z.ln()
    }
}

impl OrdinalTarget for QuarticMixture {
    label_size!(d, s);

    fn log_density_and_grad(&mut self, x: &[u16], grad: &mut [f32]) -> Result<f64, Infallible> {
        let u = self.log_density(x);
        let d = self.d;
        self.grad.fill(0.0);
        for (&weight, rotated) in self.weights.iter().zip(self.rotated.chunks_exact(d)) {
            let w = (weight - u).exp();
            // ∇p_k = P D⁻¹ (u³ + u); ∇U = −Σ_k w_k ∇p_k.
            for ((&t, &inv), column) in rotated
                .iter()
                .zip(&self.inv_scale)
                .zip(self.rotation_t.chunks_exact(d))
            {
                let uj = t * inv;
                let dj = (uj * uj * uj + uj) * inv;
                for (gi, &p) in self.grad.iter_mut().zip(column) {
                    *gi -= w * p * dj;
                }
            }
        }
        for (o, gi) in grad.iter_mut().zip(&self.grad) {
            *o = *gi as f32;
        }
        Ok(u)
    }
}

impl OrdinalConditional for QuarticMixture {
    fn conditional(&mut self, x: &[u16], i: usize, out: &mut [f64]) -> Result<(), Infallible> {
        let d = self.d;
        self.move_to(x);
        let (Some(&xi), Some(row)) = (x.get(i), self.rotation.get(i * d..(i + 1) * d)) else {
            return Ok(());
        };
        for (v, o) in out.iter_mut().enumerate() {
            let delta = v as f64 - f64::from(xi);
            *o = mixture(
                &self.rotated,
                &self.inv_scale,
                row,
                delta,
                &mut self.weights,
            );
        }
        Ok(())
    }
}

/// `log Σ_k exp(−p_k)` with `p_k` from the rotated coordinates of component `k` (row `k` of
/// `rotated`) moved by `delta` times `row`; `−p_k` is left in `weights`.
fn mixture(
    rotated: &[f64],
    inv_scale: &[f64],
    row: &[f64],
    delta: f64,
    weights: &mut [f64],
) -> f64 {
    let mut m = f64::NEG_INFINITY;
    for (w, rotated) in weights
        .iter_mut()
        .zip(rotated.chunks_exact(inv_scale.len()))
    {
        let mut p = 0.0;
        for ((&t, &q), &inv) in rotated.iter().zip(row).zip(inv_scale) {
            let u = (t + q * delta) * inv;
            let u2 = u * u;
            p += 0.25 * u2 * u2 + 0.5 * u2;
        }
        *w = -p;
        m = m.max(-p);
    }
    let z: f64 = weights.iter().map(|e| (e - m).exp()).sum();
    m + z.ln()
}

/// Columns per panel of [`householder_q`].
const PANEL: usize = 32;

/// The orthogonal factor `Q` of the QR decomposition of the square matrix `a`, by blocked
/// Householder reflections: each panel of [`PANEL`] columns is reduced column by column, and
/// its reflections, gathered as `I − V T Vᵀ` (the compact WY form of Schreiber & Van Loan,
/// "A storage-efficient WY representation for products of Householder transformations",
/// SIAM J. Sci. Stat. Comput., 1989), reach the rest of the matrix, and later `Q`, as matrix
/// products. The columns of `Q` are those of any other Householder QR of `a` up to sign and
/// rounding.
fn householder_q(mut a: DMatrix<f64>) -> DMatrix<f64> {
    let n = a.nrows().min(a.ncols());
    let rows = a.nrows();
    // Each panel's V (rows below its first column) and T.
    let mut panels: Vec<(usize, DMatrix<f64>, DMatrix<f64>)> = Vec::new();
    let mut k = 0;
    while k < n {
        let b = PANEL.min(n - k);
        let m = rows - k;
        let mut v = DMatrix::<f64>::zeros(m, b);
        let mut taus = vec![0.0; b];
        for j in 0..b {
            let col = k + j;
            // The reflection that maps a[col.., col] onto a multiple of e₁.
            let x = a.view((col, col), (rows - col, 1));
            let x0 = x[0];
            let norm = x.norm();
            let (tau, scale) = if norm == 0.0 {
                (0.0, 0.0)
            } else {
                let beta = if x0 >= 0.0 { -norm } else { norm };
                ((beta - x0) / beta, 1.0 / (x0 - beta))
            };
            taus[j] = tau;
            v[(j, j)] = 1.0;
            for r in 1..(rows - col) {
                v[(j + r, j)] = a[(col + r, col)] * scale;
            }
            if tau == 0.0 {
                continue;
            }
            // Apply I − τ v vᵀ to the rest of the panel.
            let vj = v.column(j);
            let vj = vj.rows(j, rows - col);
            for c in (col + 1)..(k + b) {
                let mut target = a.column_mut(c);
                let mut target = target.rows_mut(col, rows - col);
                let dot = vj.dot(&target);
                target.axpy(-tau * dot, &vj, 1.0);
            }
            a[(col, col)] = if x0 >= 0.0 { -norm } else { norm };
        }
        // T: upper triangular with I − V T Vᵀ = H_1 ⋯ H_b.
        let mut t = DMatrix::<f64>::zeros(b, b);
        for j in 0..b {
            t[(j, j)] = taus[j];
            if j > 0 {
                let w = v.columns(0, j).tr_mul(&v.column(j));
                let tw = t.view((0, 0), (j, j)) * w;
                for r in 0..j {
                    t[(r, j)] = -taus[j] * tw[r];
                }
            }
        }
        // The rest of the matrix: A ← (I − V T Vᵀ)ᵀ A = A − V Tᵀ (Vᵀ A).
        if k + b < a.ncols() {
            let cols = a.ncols() - k - b;
            // Vᵀ as a matrix of its own, so the product runs as a blocked matrix product.
            let w = t.transpose() * (v.transpose() * a.view((k, k + b), (m, cols)));
            let mut trailing = a.view_mut((k, k + b), (m, cols));
            trailing.gemm(-1.0, &v, &w, 1.0);
        }
        panels.push((k, v, t));
        k += b;
    }
    // Q = H_1 H_2 ⋯ applied to the identity, the last panel first.
    let mut q = DMatrix::<f64>::identity(rows, n);
    for (k, v, t) in panels.iter().rev() {
        let m = rows - k;
        let cols = n - k;
        let w = t * (v.transpose() * q.view((*k, *k), (m, cols)));
        let mut block = q.view_mut((*k, *k), (m, cols));
        block.gemm(-1.0, v, &w, 1.0);
    }
    q
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocked_q_is_orthogonal_and_matches_the_unblocked_one_up_to_signs() {
        for n in [1, 2, 5, 31, 32, 33, 70] {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(n as u64);
            let mut z = vec![0.0; n * n];
            langevin_core::random::fill_normal(&mut rng, &mut z);
            let a = DMatrix::from_row_slice(n, n, &z);
            let q = householder_q(a.clone());
            let reference = a.qr().q();
            let gram = q.tr_mul(&q) - DMatrix::<f64>::identity(n, n);
            assert!(gram.amax() < 1e-12, "n = {n}: QᵀQ − I = {}", gram.amax());
            for j in 0..n {
                let sign = q.column(j).dot(&reference.column(j)).signum();
                let gap = (q.column(j) - reference.column(j) * sign).amax();
                assert!(gap < 1e-10, "n = {n}, column {j}: {gap}");
            }
        }
    }

    #[test]
    fn a_rotation_beyond_memory_is_an_error_not_a_panic() {
        // 5·10⁹ coordinates: d² overflows 64 bits (a capacity-overflow panic before).
        let e = QuarticMixture::new(5_000_000_000, 4, 2, 1.0, 6).unwrap_err();
        assert!(e.to_string().contains("do not fit in memory"), "{e}");
        assert_eq!(QuarticMixture::memory(5_000_000_000, 2), None);
        assert_eq!(QuarticMixture::memory(10, 2), Some(40 * 100 + 160));
    }

    #[test]
    fn the_incremental_conditional_matches_the_density() {
        let mut m = QuarticMixture::new(7, 5, 3, 1.5, 2).unwrap();
        let mut fresh = m.clone();
        let mut x = vec![0u16, 4, 2, 1, 3, 3, 0];
        let mut out = [0.0; 5];
        // Sweeps that change one coordinate at a time, as Gibbs does, past a full refresh.
        for step in 0..40 {
            let i = step % 7;
            m.conditional(&x, i, &mut out).unwrap();
            for (v, &o) in out.iter().enumerate() {
                let mut y = x.clone();
                y[i] = v as u16;
                let u = fresh.log_density(&y);
                assert!((o - u).abs() <= 1e-9 * u.abs().max(1.0), "{o} vs {u}");
            }
            x[i] = ((step * 3 + 1) % 5) as u16;
        }
    }
}
