//! Low-rank coordinate ascent on the primal `max ⟨−W, X⟩, diag(X) ≤ 1, X ⪰ 0` with
//! `X = V Vᵀ` (the "mixing method" of Wang, Chang and Kolter, here on the unit ball).
//!
//! # The row update
//!
//! With the other rows fixed, the objective as a function of row `v = v_i` is
//! `h(v) = −W_ii |v|² − 2 v·g + const`, `g = Σ_{j≠i} W_ij v_j`, to maximise over `|v| ≤ 1`.
//! * `W_ii ≤ 0`: `h` is convex, its maximum on the ball lies on the sphere where `−2 v·g` is
//!   largest: `v = −g/|g|`.
//! * `W_ii > 0`: `h` is concave with unconstrained maximiser `−g/W_ii`; inside the ball when
//!   `|g| ≤ W_ii`, otherwise the maximum is on the sphere at `−g/|g|`.
//!
//! Both cases are `v = −g / max(|g|, W_ii)`. At a fixed point the KKT conditions
//! `(W + D) V = 0`, `d_i (1 − |v_i|²) = 0` give `d_i = max(0, |g_i| − W_ii)`.
//!
//! Over-relaxation moves to `v + ω (v* − v)` (then back onto the ball); on the sphere any
//! `ω ∈ [1, 2]` keeps the ascent monotone, since the step never ends farther from `v*`.

use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

use super::matrix::{Repr, SymmetricMatrix, gemm};

/// Rows per block of the dense sweep (one matrix product per block).
const SWEEP_BLOCK: usize = 64;

/// The low-rank factor `V` (`n × k`, rows padded to a multiple of 4) and sweep scratch.
#[derive(Clone, Debug)]
pub(crate) struct Mixing {
    n: usize,
    /// Row stride of `v` (the rank rounded up to a multiple of 4; padding stays zero).
    kp: usize,
    v: Vec<f64>,
    gbuf: Vec<f64>,
    old: Vec<f64>,
}

impl Mixing {
    /// Random unit rows of rank `k`, from `seed`.
    pub(crate) fn new(n: usize, k: usize, seed: u64) -> Self {
        let kp = k.div_ceil(4) * 4;
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut v = vec![0.0; n * kp];
        for row in v.chunks_exact_mut(kp) {
            let r = &mut row[..k];
            langevin_core::random::fill_normal(&mut rng, r);
            let norm = r.iter().map(|x| x * x).sum::<f64>().sqrt();
            if norm > 0.0 {
                r.iter_mut().for_each(|x| *x /= norm);
            }
        }
        Self {
            n,
            kp,
            v,
            gbuf: vec![0.0; SWEEP_BLOCK * kp],
            old: vec![0.0; SWEEP_BLOCK * kp],
        }
    }

    /// One Gauss–Seidel sweep over all rows with over-relaxation `omega`; returns the increase
    /// of the primal objective.
    pub(crate) fn sweep(&mut self, w: &SymmetricMatrix, omega: f64) -> f64 {
        let (n, kp) = (self.n, self.kp);
        let mut gain = 0.0;
        let diag = w.diagonal();
        match w.repr() {
            Repr::Sparse {
                row_ptr,
                cols,
                vals,
            } => {
                let g = &mut self.gbuf[..kp];
                for i in 0..n {
                    g.fill(0.0);
                    for k in row_ptr[i]..row_ptr[i + 1] {
                        let (wij, j) = (vals[k], cols[k]);
                        let vj = &self.v[j * kp..(j + 1) * kp];
                        g.iter_mut().zip(vj).for_each(|(gl, &x)| *gl += wij * x);
                    }
                    gain += update_row(&mut self.v[i * kp..(i + 1) * kp], g, diag[i], omega);
                }
            }
            Repr::Dense(a) => {
                let mut s = 0;
                while s < n {
                    let e = (s + SWEEP_BLOCK).min(n);
                    let rows = e - s;
                    // G_B = W[s..e, :] V with the rows before s already updated.
                    gemm(
                        1.0,
                        &a[s * n..e * n],
                        (n, 1),
                        &self.v,
                        (kp, 1),
                        0.0,
                        &mut self.gbuf[..rows * kp],
                        kp,
                        (rows, n, kp),
                    );
                    self.old[..rows * kp].copy_from_slice(&self.v[s * kp..e * kp]);
                    for r in 0..rows {
                        let i = s + r;
                        let g = &mut self.gbuf[r * kp..(r + 1) * kp];
                        let wrow = &a[i * n..(i + 1) * n];
                        // Remove the diagonal term and add the changes of rows s..i.
                        let old_i = &self.old[r * kp..(r + 1) * kp];
                        g.iter_mut()
                            .zip(old_i)
                            .for_each(|(gl, &x)| *gl -= diag[i] * x);
                        for q in 0..r {
                            let wiq = wrow[s + q];
                            if wiq != 0.0 {
                                let new_q = &self.v[(s + q) * kp..(s + q + 1) * kp];
                                let old_q = &self.old[q * kp..(q + 1) * kp];
                                for ((gl, &a1), &a0) in g.iter_mut().zip(new_q).zip(old_q) {
                                    *gl += wiq * (a1 - a0);
                                }
                            }
                        }
                        gain += update_row(&mut self.v[i * kp..(i + 1) * kp], g, diag[i], omega);
                    }
                    s = e;
                }
            }
        }
        gain
    }

    /// `G = W V` (`n × kp`, row-major) into `out`.
    pub(crate) fn product(&self, w: &SymmetricMatrix, out: &mut [f64]) {
        w.mul_block(&self.v, self.kp, out);
    }

    /// The factor `V` (`n × stride`, row-major).
    pub(crate) fn factor(&self) -> &[f64] {
        &self.v
    }

    /// The exact primal value `⟨−W, V Vᵀ⟩` and the dual read-off `d_i = max(0, |g_i| − W_ii)`,
    /// from `G = W V` (scratch `g`, `n × kp`).
    pub(crate) fn bound_and_dual(&self, w: &SymmetricMatrix, g: &mut [f64], d: &mut [f64]) -> f64 {
        let kp = self.kp;
        self.product(w, g);
        let diag = w.diagonal();
        let mut value = 0.0;
        for (i, (gi, di)) in g.chunks_exact(kp).zip(d.iter_mut()).enumerate() {
            let vi = &self.v[i * kp..(i + 1) * kp];
            let mut vg = 0.0;
            let mut off2 = 0.0;
            for (&gl, &x) in gi.iter().zip(vi) {
                vg += gl * x;
                let o = gl - diag[i] * x;
                off2 += o * o;
            }
            value -= vg;
            *di = (off2.sqrt() - diag[i]).max(0.0);
        }
        value
    }

    /// Drops the directions of the row space of `V` that have died out (Gram eigenvalue below
    /// `tol` times the largest). Coordinate ascent never enlarges the row space (each new row
    /// is a combination of the rows), and the objective depends only on `V Vᵀ`, so the
    /// rotated, narrower factor runs the same iteration at a lower cost per sweep.
    pub(crate) fn compress(&mut self, tol: f64) {
        let (n, kp) = (self.n, self.kp);
        let mut gram = vec![0.0; kp * kp];
        gemm(
            1.0,
            &self.v,
            (1, kp),
            &self.v,
            (kp, 1),
            0.0,
            &mut gram,
            kp,
            (kp, n, kp),
        );
        let eig = nalgebra::DMatrix::from_row_slice(kp, kp, &gram).symmetric_eigen();
        let top = eig.eigenvalues.iter().fold(0.0f64, |m, &x| m.max(x));
        let keep: Vec<usize> = (0..kp)
            .filter(|&j| eig.eigenvalues[j] > tol * top)
            .collect();
        let r = keep.len().max(1);
        let new_kp = r.div_ceil(4) * 4;
        if new_kp >= kp {
            return;
        }
        // V ← V U_keep, with U_keep as a row-major kp × new_kp block (zero padding columns).
        let mut u = vec![0.0; kp * new_kp];
        for (c, &j) in keep.iter().enumerate() {
            for i in 0..kp {
                u[i * new_kp + c] = eig.eigenvectors[(i, j)];
            }
        }
        let mut v = vec![0.0; n * new_kp];
        gemm(
            1.0,
            &self.v,
            (kp, 1),
            &u,
            (new_kp, 1),
            0.0,
            &mut v,
            new_kp,
            (n, kp, new_kp),
        );
        for row in v.chunks_exact_mut(new_kp) {
            let norm2: f64 = row.iter().map(|x| x * x).sum();
            if norm2 > 1.0 {
                let s = 1.0 / norm2.sqrt();
                row.iter_mut().for_each(|x| *x *= s);
            }
        }
        self.v = v;
        self.kp = new_kp;
        self.gbuf = vec![0.0; SWEEP_BLOCK * new_kp];
        self.old = vec![0.0; SWEEP_BLOCK * new_kp];
    }

    pub(crate) fn stride(&self) -> usize {
        self.kp
    }
}

/// The ball-constrained row maximiser with over-relaxation; `g` excludes the diagonal term.
/// Returns the increase of the objective `⟨−W, V Vᵀ⟩`, `−W_ii Δ|v|² − 2 Δv·g`.
///
/// Two passes with four-lane accumulators: rows are short (the rank, a multiple of 4), so
/// reduction latency, not arithmetic, would otherwise dominate sparse sweeps.
#[inline]
fn update_row(v: &mut [f64], g: &[f64], wii: f64, omega: f64) -> f64 {
    let (gg, vv, vg) = sums3(v, g);
    let before = -wii * vv - 2.0 * vg;
    let gn = gg.sqrt();
    let denom = gn.max(wii);
    if denom > 0.0 {
        let inv = 1.0 / denom;
        let (mut nv, mut ng) = ([0.0f64; 4], [0.0f64; 4]);
        let (vc, vr) = v.as_chunks_mut::<4>();
        let (gc, gr) = g.as_chunks::<4>();
        for (x, y) in vc.iter_mut().zip(gc) {
            for l in 0..4 {
                x[l] += omega * (-y[l] * inv - x[l]);
                nv[l] += x[l] * x[l];
                ng[l] += x[l] * y[l];
            }
        }
        for (x, &y) in vr.iter_mut().zip(gr) {
            *x += omega * (-y * inv - *x);
            nv[0] += *x * *x;
            ng[0] += *x * y;
        }
        let (mut norm2, mut vg_new) = (lanes(nv), lanes(ng));
        if norm2 > 1.0 {
            let s = 1.0 / norm2.sqrt();
            v.iter_mut().for_each(|x| *x *= s);
            norm2 = 1.0;
            vg_new *= s;
        }
        -wii * norm2 - 2.0 * vg_new - before
    } else {
        if wii < 0.0 {
            // g = 0: every unit vector is optimal; stay put but on the sphere.
            let norm = vv.sqrt();
            if norm > 0.0 {
                v.iter_mut().for_each(|x| *x /= norm);
            } else if let Some(first) = v.first_mut() {
                *first = 1.0;
            }
        }
        let (_, vv_new, vg_new) = sums3(v, g);
        -wii * vv_new - 2.0 * vg_new - before
    }
}

/// `(|g|², |v|², v·g)` with four-lane accumulators.
#[inline]
fn sums3(v: &[f64], g: &[f64]) -> (f64, f64, f64) {
    let (mut gg, mut vv, mut vg) = ([0.0f64; 4], [0.0f64; 4], [0.0f64; 4]);
    let (vc, vr) = v.as_chunks::<4>();
    let (gc, gr) = g.as_chunks::<4>();
    for (x, y) in vc.iter().zip(gc) {
        for l in 0..4 {
            gg[l] += y[l] * y[l];
            vv[l] += x[l] * x[l];
            vg[l] += x[l] * y[l];
        }
    }
    for (&x, &y) in vr.iter().zip(gr) {
        gg[0] += y * y;
        vv[0] += x * x;
        vg[0] += x * y;
    }
    (lanes(gg), lanes(vv), lanes(vg))
}

#[inline]
fn lanes(a: [f64; 4]) -> f64 {
    (a[0] + a[2]) + (a[1] + a[3])
}
