//! The extreme eigenpairs of `A = W + diag d` (`W` dense symmetric) by block Lanczos with full
//! reorthogonalisation, restarted from its own Ritz vectors.
//!
//! One [`BlockLanczos::step`] builds the block Krylov space
//! `span(B, A B, …, A^{p−1} B)` of the current block `B` (`k` orthonormal columns), with every
//! new column orthogonalised twice against all earlier ones (classical Gram–Schmidt, twice), takes
//! the Rayleigh–Ritz pairs of `A` on it and keeps the `top` largest and `bottom` smallest Ritz
//! vectors as the next block. Its cost is `p·k` products with `A` (`O(p k n²)`) plus
//! `O(n (p k)²)` for the orthogonalisation, against `O(n³)` for a dense eigendecomposition. When
//! `d` changes little between calls (the iterations of the AB-max solver) the previous block is
//! a warm start and one step of small depth keeps the extreme pairs accurate.
//!
//! Every Ritz value lies in `[λ_min(A), λ_max(A)]` (Cauchy interlacing), so the largest one is a
//! lower bound on `λ_max` and the smallest an upper bound on `λ_min`; a Ritz pair `(θ, v)` with
//! residual `r = A v − θ v` has an eigenvalue of `A` within `‖r‖` of `θ`.

use nalgebra::{DMatrix, DVector, SymmetricEigen};

/// Ritz pairs at both ends of the spectrum of `A`.
pub(crate) struct Extreme {
    /// The largest Ritz values, descending.
    pub top_values: Vec<f64>,
    /// Their Ritz vectors (column `j` belongs to `top_values[j]`).
    pub top_vectors: DMatrix<f64>,
    /// The smallest Ritz values, ascending.
    pub bottom_values: Vec<f64>,
    /// Their Ritz vectors.
    pub bottom_vectors: DMatrix<f64>,
    /// `‖A v − θ v‖` of the largest pair.
    pub top_residual: f64,
    /// `‖A v − θ v‖` of the smallest pair.
    pub bottom_residual: f64,
}

impl Extreme {
    /// The largest Ritz value (a lower bound on `λ_max(A)`).
    pub fn max(&self) -> f64 {
        self.top_values.first().copied().unwrap_or(0.0)
    }

    /// The smallest Ritz value (an upper bound on `λ_min(A)`).
    pub fn min(&self) -> f64 {
        self.bottom_values.first().copied().unwrap_or(0.0)
    }
}

/// The state of the solver: the current block of `top + bottom` orthonormal vectors.
pub(crate) struct BlockLanczos {
    top: usize,
    bottom: usize,
    basis: DMatrix<f64>,
    /// Counter of the deterministic pseudo-random vectors (start and deflation refills).
    seed: u64,
}

/// SplitMix64, for deterministic start vectors.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A vector of `n` pseudo-random entries in `[−1, 1)`.
fn random_vector(n: usize, seed: &mut u64) -> DVector<f64> {
    DVector::from_fn(n, |_, _| {
        (splitmix(seed) >> 11) as f64 * (2.0 / (1u64 << 53) as f64) - 1.0
    })
}

/// `(W + diag d) X`.
fn apply(w: &DMatrix<f64>, d: &[f64], x: &DMatrix<f64>) -> DMatrix<f64> {
    let mut out = w * x;
    for (mut col, xc) in out.column_iter_mut().zip(x.column_iter()) {
        for ((o, &di), &xi) in col.iter_mut().zip(d).zip(xc.iter()) {
            *o += di * xi;
        }
    }
    out
}

/// Orthogonalises `v` twice against the first `used` columns of `q` and, unless it is (nearly)
/// in their span, normalises it into column `used`; returns whether it was added.
fn push_orthonormal(q: &mut DMatrix<f64>, used: usize, mut v: DVector<f64>) -> bool {
    let start = v.norm();
    if !(start > 0.0 && start.is_finite()) || used >= q.ncols() {
        return false;
    }
    for _ in 0..2 {
        let basis = q.columns(0, used);
        let coef = basis.tr_mul(&v);
        v -= basis * coef;
    }
    let norm = v.norm();
    if norm.is_nan() || norm <= 1e-10 * start {
        return false;
    }
    q.set_column(used, &(v / norm));
    true
}

impl BlockLanczos {
    /// A solver for `n × n` matrices keeping `top` largest and `bottom` smallest pairs
    /// (`top + bottom ≤ n`, `top, bottom ≥ 1`), started from pseudo-random vectors.
    pub fn new(n: usize, top: usize, bottom: usize) -> Self {
        let top = top.clamp(1, n.max(1));
        let bottom = bottom.clamp(1, n.saturating_sub(top).max(1));
        let mut seed = 0x5EED_1A2C_0F0F_0001;
        let k = top + bottom;
        let mut basis = DMatrix::zeros(n, k);
        let mut used = 0;
        let mut tries = 0;
        while used < k.min(n) && tries < 4 * k + 8 {
            tries += 1;
            if push_orthonormal(&mut basis, used, random_vector(n, &mut seed)) {
                used += 1;
            }
        }
        Self {
            top,
            bottom,
            basis: basis.columns(0, used).into_owned(),
            seed,
        }
    }

    /// One restart: Rayleigh–Ritz on `span(B, A B, …, A^{depth−1} B)` of `A = W + diag d`;
    /// the kept Ritz vectors become the next block.
    pub fn step(&mut self, w: &DMatrix<f64>, d: &[f64], depth: usize) -> Extreme {
        let n = w.nrows();
        let k = self.basis.ncols();
        let cap = (depth.max(1) * k).min(n);
        let mut q = DMatrix::zeros(n, cap);
        let mut used = 0;
        for col in self.basis.column_iter() {
            if push_orthonormal(&mut q, used, col.into_owned()) {
                used += 1;
            }
        }
        // Keep the first block full rank (refill from pseudo-random vectors).
        let mut tries = 0;
        while used < k.min(cap) && tries < 4 * k + 8 {
            tries += 1;
            if push_orthonormal(&mut q, used, random_vector(n, &mut self.seed)) {
                used += 1;
            }
        }
        let mut aq = DMatrix::zeros(n, cap);
        let mut lo = 0;
        for level in 0..depth.max(1) {
            let hi = used;
            if lo == hi {
                break;
            }
            let block = apply(w, d, &q.columns(lo, hi - lo).into_owned());
            aq.columns_mut(lo, hi - lo).copy_from(&block);
            if level + 1 == depth.max(1) {
                break;
            }
            for col in block.column_iter() {
                if used < cap && push_orthonormal(&mut q, used, col.into_owned()) {
                    used += 1;
                }
            }
            lo = hi;
        }
        let qs = q.columns(0, used);
        let aqs = aq.columns(0, used);
        let h = qs.tr_mul(&aqs);
        let h = (&h + h.transpose()) * 0.5;
        let eig = SymmetricEigen::new(h);
        let mut order: Vec<usize> = (0..used).collect();
        order.sort_by(|&a, &b| eig.eigenvalues[a].total_cmp(&eig.eigenvalues[b]));
        let n_top = self.top.min(used);
        let n_bottom = self.bottom.min(used - n_top);
        let top_idx: Vec<usize> = order.iter().rev().take(n_top).copied().collect();
        let bottom_idx: Vec<usize> = order.iter().take(n_bottom).copied().collect();
        let ritz = |idx: &[usize]| {
            let s = DMatrix::from_fn(used, idx.len(), |r, c| eig.eigenvectors[(r, idx[c])]);
            let values: Vec<f64> = idx.iter().map(|&j| eig.eigenvalues[j]).collect();
            let vectors = qs * &s;
            let first_residual = if idx.is_empty() {
                0.0
            } else {
                (aqs * s.column(0) - vectors.column(0) * values[0]).norm()
            };
            (values, vectors, first_residual)
        };
        let (top_values, top_vectors, top_residual) = ritz(&top_idx);
        let (bottom_values, bottom_vectors, bottom_residual) = ritz(&bottom_idx);
        let mut next = DMatrix::zeros(n, n_top + n_bottom);
        next.columns_mut(0, n_top).copy_from(&top_vectors);
        next.columns_mut(n_top, n_bottom).copy_from(&bottom_vectors);
        self.basis = next;
        Extreme {
            top_values,
            top_vectors,
            bottom_values,
            bottom_vectors,
            top_residual,
            bottom_residual,
        }
    }

    /// Restarts (at `depth`) until both extreme residuals are at most `tol`, at most
    /// `max_steps` times; returns the last pairs.
    pub fn converge(
        &mut self,
        w: &DMatrix<f64>,
        d: &[f64],
        depth: usize,
        tol: f64,
        max_steps: usize,
    ) -> Extreme {
        let mut e = self.step(w, d, depth);
        for _ in 1..max_steps.max(1) {
            if e.top_residual <= tol && e.bottom_residual <= tol {
                break;
            }
            e = self.step(w, d, depth);
        }
        e
    }
}

/// `(λ_min, λ_max)` of a symmetric `n × n` matrix `w` (row-major, symmetrised as
/// `(W + Wᵀ)/2`) by block Lanczos, to a residual of about `1e-10 · max|W_ij|`.
///
/// The largest value is a Ritz value, so never above the true `λ_max`; on the matrices of the
/// tests it agrees with the dense eigensolver to about `1e-9` relative.
pub fn extreme_eigenvalues(w: &[f64], n: usize) -> Option<(f64, f64)> {
    if n == 0 || w.len() != n * n || w.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let m = DMatrix::from_row_slice(n, n, w);
    let m = (&m + m.transpose()) * 0.5;
    let scale = m.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    if n <= 16 {
        let eig = m.symmetric_eigenvalues();
        return Some((eig.min(), eig.max()));
    }
    let mut solver = BlockLanczos::new(n, 4, 4);
    let e = solver.converge(&m, &vec![0.0; n], COLD_DEPTH, 1e-10 * scale, COLD_STEPS);
    Some((e.min(), e.max()))
}

/// Krylov depth of a cold start.
pub(crate) const COLD_DEPTH: usize = 8;
/// Restarts allowed for a cold or converged evaluation.
pub(crate) const COLD_STEPS: usize = 30;

/// Test matrices shared with the AB-max tests.
#[cfg(test)]
pub(crate) mod testing {
    use super::splitmix;

    /// A symmetric matrix with entries uniform in `[−½, ½)`.
    pub(crate) fn random_symmetric(n: usize, seed: u64) -> Vec<f64> {
        let mut s = seed;
        let mut w = vec![0.0; n * n];
        for i in 0..n {
            for j in i..n {
                let v = (splitmix(&mut s) >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
                w[i * n + j] = v;
                w[j * n + i] = v;
            }
        }
        w
    }

    /// A Barabási–Albert graph's adjacency matrix (each new node joins `m` earlier nodes,
    /// chosen with probability proportional to degree).
    pub(crate) fn barabasi_albert(n: usize, m: usize, seed: u64) -> Vec<f64> {
        let mut s = seed;
        let mut w = vec![0.0; n * n];
        let mut ends: Vec<usize> = Vec::new();
        for i in 0..=m {
            for j in 0..i {
                w[i * n + j] = 1.0;
                w[j * n + i] = 1.0;
                ends.extend([i, j]);
            }
        }
        for i in m + 1..n {
            let mut chosen = Vec::new();
            while chosen.len() < m {
                let j = ends[(splitmix(&mut s) % ends.len() as u64) as usize];
                if !chosen.contains(&j) {
                    chosen.push(j);
                }
            }
            for j in chosen {
                w[i * n + j] = 1.0;
                w[j * n + i] = 1.0;
                ends.extend([i, j]);
            }
        }
        w
    }
}

#[cfg(test)]
mod tests {
    use super::testing::{barabasi_albert, random_symmetric};
    use super::*;

    fn dense(w: &[f64], n: usize) -> (f64, f64) {
        let e = DMatrix::from_row_slice(n, n, w).symmetric_eigenvalues();
        (e.min(), e.max())
    }

    #[test]
    fn extremes_match_the_dense_eigensolver() {
        let mut cases: Vec<(String, usize, Vec<f64>)> = Vec::new();
        for (n, seed) in [(20, 1), (100, 2), (400, 3)] {
            cases.push((format!("random {n}"), n, random_symmetric(n, seed)));
        }
        for (n, seed) in [(100, 4), (400, 5)] {
            cases.push((format!("BA {n}"), n, barabasi_albert(n, 4, seed)));
        }
        // A graph plus a varying diagonal, as the AB-max solver sees it.
        let mut g = barabasi_albert(200, 3, 6);
        for i in 0..200 {
            g[i * 200 + i] = (i % 7) as f64 * 0.3;
        }
        cases.push(("BA 200 + diag".into(), 200, g));
        for (name, n, w) in cases {
            let (lo, hi) = extreme_eigenvalues(&w, n).unwrap();
            let (dlo, dhi) = dense(&w, n);
            let scale = dhi.abs().max(dlo.abs());
            assert!(
                (hi - dhi).abs() <= 1e-8 * scale,
                "{name}: λ_max {hi} vs {dhi}"
            );
            assert!(
                (lo - dlo).abs() <= 1e-8 * scale,
                "{name}: λ_min {lo} vs {dlo}"
            );
            // Ritz values interlace: never outside the spectrum.
            assert!(
                hi <= dhi + 1e-12 * scale && lo >= dlo - 1e-12 * scale,
                "{name}"
            );
        }
    }

    #[test]
    fn a_warm_step_tracks_a_changing_diagonal() {
        let n = 300;
        let w = DMatrix::from_row_slice(n, n, &barabasi_albert(n, 4, 9));
        let mut solver = BlockLanczos::new(n, 8, 4);
        let mut d = vec![0.0; n];
        solver.converge(&w, &d, COLD_DEPTH, 1e-10, COLD_STEPS);
        for it in 0..20 {
            for (i, di) in d.iter_mut().enumerate() {
                *di += 0.01 * ((i * 7 + it) % 11) as f64;
            }
            let e = solver.step(&w, &d, 3);
            let mut m = w.clone();
            for (i, &di) in d.iter().enumerate() {
                m[(i, i)] += di;
            }
            let dense = m.symmetric_eigenvalues();
            // The largest Ritz value never exceeds λ_max and is within its residual of it.
            assert!(e.max() <= dense.max() + 1e-9);
            assert!(dense.max() - e.max() <= e.top_residual + 1e-9, "{it}");
            assert!(e.min() >= dense.min() - 1e-9);
        }
    }

    #[test]
    fn invariant_subspaces_and_bad_input() {
        // W = 0: A = diag d; every Krylov block after the first deflates.
        let n = 40;
        let w = DMatrix::zeros(n, n);
        let d: Vec<f64> = (0..n).map(|i| i as f64).collect();
        let mut solver = BlockLanczos::new(n, 3, 2);
        let e = solver.converge(&w, &d, COLD_DEPTH, 1e-12, 200);
        assert!((e.max() - (n - 1) as f64).abs() < 1e-9, "{}", e.max());
        assert!(e.min().abs() < 1e-9, "{}", e.min());
        assert!(extreme_eigenvalues(&[1.0; 3], 2).is_none());
        assert!(extreme_eigenvalues(&[], 0).is_none());
        assert!(extreme_eigenvalues(&[f64::NAN; 4], 2).is_none());
    }
}
