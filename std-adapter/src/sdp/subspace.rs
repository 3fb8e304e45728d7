//! The bottom of the spectrum of `A = W + diag(d)` by Rayleigh–Ritz on `span(V, A V)`.
//!
//! At the optimum `(W + D) V = 0`: the columns of the mixing-method factor `V` span the
//! eigenvectors that the read-off `d` can make negative, which is where a single-vector Lanczos
//! run converges slowest (a cluster of eigenvalues near zero). A Rayleigh–Ritz step on the
//! block Krylov space `span(V, A V)` resolves that cluster at the cost of one extra block
//! product, since `A V = G + D V` is already known from the checkpoint.

use super::matrix::{SymmetricMatrix, dot};

/// A Ritz estimate of `λ_min(A)`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Estimate {
    /// The smallest Ritz value (an upper bound on `λ_min`).
    pub(crate) value: f64,
    /// `‖A y − θ y‖` for its unit Ritz vector `y`.
    pub(crate) residual: f64,
}

/// Rayleigh–Ritz on `span(V, A V, A² V, …)` (`depth` blocks); `v` is `n × kp` row-major and
/// `av = (W + diag d) V` likewise.
pub(crate) fn bottom_eigenvalue(
    w: &SymmetricMatrix,
    d: &[f64],
    v: &[f64],
    av: &[f64],
    kp: usize,
    depth: usize,
) -> Estimate {
    let n = w.dim();
    // Candidate columns, column-major.
    let mut cols: Vec<Vec<f64>> = Vec::new();
    let col = |m: &[f64], j: usize| -> Vec<f64> { (0..n).map(|i| m[i * kp + j]).collect() };
    let mut block_prev: Vec<f64> = av.to_vec();
    for j in 0..kp {
        cols.push(col(v, j));
    }
    for j in 0..kp {
        cols.push(col(av, j));
    }
    let mut scratch = vec![0.0; n * kp];
    for _ in 2..depth.max(2) {
        apply(w, d, &block_prev, kp, &mut scratch);
        for j in 0..kp {
            cols.push(col(&scratch, j));
        }
        std::mem::swap(&mut block_prev, &mut scratch);
    }
    // Orthonormalise (modified Gram–Schmidt, twice), dropping dependent columns.
    let mut q: Vec<Vec<f64>> = Vec::new();
    for mut c in cols {
        let norm0 = dot(&c, &c).sqrt();
        if norm0 == 0.0 {
            continue;
        }
        for _ in 0..2 {
            for b in &q {
                let s = dot(b, &c);
                c.iter_mut().zip(b).for_each(|(x, &y)| *x -= s * y);
            }
        }
        let norm = dot(&c, &c).sqrt();
        if norm > 1e-8 * norm0 {
            c.iter_mut().for_each(|x| *x /= norm);
            q.push(c);
        }
    }
    let m = q.len();
    if m == 0 {
        return Estimate {
            value: f64::INFINITY,
            residual: f64::INFINITY,
        };
    }
    // A Q, through one row-major block product.
    let mut qrow = vec![0.0; n * m];
    for (j, c) in q.iter().enumerate() {
        for (i, &x) in c.iter().enumerate() {
            qrow[i * m + j] = x;
        }
    }
    let mut aq = vec![0.0; n * m];
    apply(w, d, &qrow, m, &mut aq);
    let mut h = nalgebra::DMatrix::<f64>::zeros(m, m);
    let aq_cols: Vec<Vec<f64>> = (0..m)
        .map(|j| (0..n).map(|i| aq[i * m + j]).collect())
        .collect();
    for a in 0..m {
        for b in 0..=a {
            let x = 0.5 * (dot(&q[a], &aq_cols[b]) + dot(&q[b], &aq_cols[a]));
            h[(a, b)] = x;
            h[(b, a)] = x;
        }
    }
    let eig = h.symmetric_eigen();
    let (k, &value) = eig
        .eigenvalues
        .iter()
        .enumerate()
        .min_by(|a, b| a.1.total_cmp(b.1))
        .unwrap_or((0, &f64::INFINITY));
    let s = eig.eigenvectors.column(k);
    let mut r = vec![0.0; n];
    for j in 0..m {
        let c = s[j];
        for i in 0..n {
            r[i] += c * (aq_cols[j][i] - value * q[j][i]);
        }
    }
    Estimate {
        value,
        residual: dot(&r, &r).sqrt(),
    }
}

/// `Y = (W + diag d) X` for a row-major block.
pub(crate) fn apply(w: &SymmetricMatrix, d: &[f64], x: &[f64], cols: usize, y: &mut [f64]) {
    w.mul_block(x, cols, y);
    for ((yi, xi), &di) in y.chunks_exact_mut(cols).zip(x.chunks_exact(cols)).zip(d) {
        yi.iter_mut().zip(xi).for_each(|(o, &v)| *o += di * v);
    }
}
