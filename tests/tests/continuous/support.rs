//! Shared pieces of the continuous-integrator tests: a quadratic sum target, an exact
//! moment-propagation reference for linear (Gaussian-target) chains, and the across-chain
//! t-test with thresholds from the Student-t distribution.
//!
//! For `∇V_i(θ) = H_i θ − b_i` every integrator step, given its discrete randomness (which
//! minibatch, which permutation), is an affine map of the chain's full state plus Gaussian
//! noise: `z' = A z + c + ε`, `Cov ε = Q`. The discrete randomness is independent of the state,
//! so the first and second moments of `z` propagate exactly: `μ' = E[A μ + c]`,
//! `S' = E[A S Aᵀ + A μ cᵀ + c μᵀ Aᵀ + c cᵀ + Q]` with `S = E[z zᵀ]`. Averaging the `θ` block
//! of those moments over the kept steps gives the exact expectation of a chain's time averages,
//! transient included: no stationarity or burn-in assumption.
#![allow(
    clippy::needless_range_loop,
    reason = "dense matrix code reads best with indices"
)]
#![allow(dead_code)]

use langevin_core::continuous::{Access, GlmSumTarget, SnapshotUpdate, SumTarget};
use langevin_tests::{bisect_tail, chi_square_pooled, ln_gamma};
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::BTreeMap;
use std::convert::Infallible;

// ---------------------------------------------------------------------------------------------
// Targets

/// `V_i(θ) = ½ θᵀ (S_i + P/N) θ − b_iᵀ θ`: a per-term quadratic whose Hessian splits into a
/// per-term part `S_i` and a shared part `P/N`. As a GLM (`S_i = x_i x_iᵀ / λ`,
/// `b_i = x_i y_i / λ`) the scalar is `s_i = (x_iᵀθ − y_i)/λ` and `q(θ) = P θ / N`.
#[derive(Clone, Debug)]
pub struct QuadSum {
    pub d: usize,
    pub s: Vec<Vec<f64>>,
    pub b: Vec<Vec<f64>>,
    pub p: Vec<f64>,
    /// GLM form, if the per-term parts are rank one: `(x_i, y_i, λ)`.
    pub glm: Option<(Vec<Vec<f64>>, Vec<f64>, f64)>,
}

impl QuadSum {
    /// Gaussian sum `½|θ − c_i|²`: `S_i = I`, `b_i = c_i`, `P = 0`.
    pub fn gaussian_sum(centers: &[Vec<f64>]) -> Self {
        let d = centers[0].len();
        Self {
            d,
            s: centers.iter().map(|_| eye(d)).collect(),
            b: centers.to_vec(),
            p: vec![0.0; d * d],
            glm: None,
        }
    }

    /// Ridge-like GLM terms `(y_i − x_iᵀθ)²/(2λ)` plus the prior `|θ|²/(2v)` spread evenly.
    pub fn ridge(x: &[Vec<f64>], y: &[f64], lambda: f64, prior_var: f64) -> Self {
        let d = x[0].len();
        let s = x
            .iter()
            .map(|xi| {
                let mut m = vec![0.0; d * d];
                for r in 0..d {
                    for c in 0..d {
                        m[r * d + c] = xi[r] * xi[c] / lambda;
                    }
                }
                m
            })
            .collect();
        let b = x
            .iter()
            .zip(y)
            .map(|(xi, &yi)| xi.iter().map(|v| v * yi / lambda).collect())
            .collect();
        let mut p = eye(d);
        p.iter_mut().for_each(|v| *v /= prior_var);
        Self {
            d,
            s,
            b,
            p,
            glm: Some((x.to_vec(), y.to_vec(), lambda)),
        }
    }

    pub fn n(&self) -> usize {
        self.s.len()
    }

    /// The full Hessian of term `i`: `S_i + P/N`.
    pub fn h(&self, i: usize) -> Vec<f64> {
        let n = self.n() as f64;
        self.s[i]
            .iter()
            .zip(&self.p)
            .map(|(a, p)| a + p / n)
            .collect()
    }

    /// The exact target: precision `H = Σ H_i`, mean `H⁻¹ Σ b_i`, covariance `H⁻¹`.
    pub fn target(&self) -> (Vec<f64>, Vec<f64>) {
        let d = self.d;
        let mut h = vec![0.0; d * d];
        let mut b = vec![0.0; d];
        for i in 0..self.n() {
            add_assign(&mut h, &self.h(i));
            add_assign(&mut b, &self.b[i]);
        }
        let inv = invert(&h, d);
        (matvec(&inv, &b, d), inv)
    }
}

impl SumTarget for QuadSum {
    type Error = Infallible;
    fn dim(&self) -> usize {
        self.d
    }
    fn num_terms(&self) -> usize {
        self.s.len()
    }
    fn add_term_grad(
        &mut self,
        i: usize,
        theta: &[f64],
        scale: f64,
        acc: &mut [f64],
    ) -> Result<(), Infallible> {
        let d = self.d;
        let n = self.n() as f64;
        for r in 0..d {
            let mut g = -self.b[i][r];
            for c in 0..d {
                g += (self.s[i][r * d + c] + self.p[r * d + c] / n) * theta[c];
            }
            acc[r] += scale * g;
        }
        Ok(())
    }
}

impl GlmSumTarget for QuadSum {
    fn term_scalar(&mut self, i: usize, theta: &[f64]) -> Result<f64, Infallible> {
        let (x, y, lambda) = self.glm.as_ref().expect("a GLM QuadSum");
        let dot: f64 = x[i].iter().zip(theta).map(|(a, b)| a * b).sum();
        Ok((dot - y[i]) / lambda)
    }
    fn add_term_data(&self, i: usize, scale: f64, acc: &mut [f64]) {
        let (x, _, _) = self.glm.as_ref().expect("a GLM QuadSum");
        for (a, v) in acc.iter_mut().zip(&x[i]) {
            *a += scale * v;
        }
    }
    fn add_shared_grad(
        &mut self,
        theta: &[f64],
        scale: f64,
        acc: &mut [f64],
    ) -> Result<(), Infallible> {
        let d = self.d;
        let n = self.n() as f64;
        for r in 0..d {
            for c in 0..d {
                acc[r] += scale * self.p[r * d + c] / n * theta[c];
            }
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Small dense linear algebra (row-major)

pub fn eye(d: usize) -> Vec<f64> {
    let mut m = vec![0.0; d * d];
    for i in 0..d {
        m[i * d + i] = 1.0;
    }
    m
}

pub fn add_assign(a: &mut [f64], b: &[f64]) {
    a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
}

pub fn matvec(a: &[f64], x: &[f64], m: usize) -> Vec<f64> {
    (0..m)
        .map(|r| (0..x.len()).map(|c| a[r * x.len() + c] * x[c]).sum())
        .collect()
}

/// `A B` for square `m × m`.
pub use langevin_tests::discrete::mat_mul as matmul;

/// `A B Aᵀ` for square `m × m`.
pub fn sandwich(a: &[f64], b: &[f64], m: usize) -> Vec<f64> {
    let ab = matmul(a, b, m);
    let mut out = vec![0.0; m * m];
    for r in 0..m {
        for c in 0..m {
            out[r * m + c] = (0..m).map(|k| ab[r * m + k] * a[c * m + k]).sum();
        }
    }
    out
}

/// Gauss–Jordan inverse of a small well-conditioned matrix.
pub fn invert(a: &[f64], d: usize) -> Vec<f64> {
    let mut m = a.to_vec();
    let mut inv = eye(d);
    for col in 0..d {
        let piv = (col..d)
            .max_by(|&i, &j| m[i * d + col].abs().total_cmp(&m[j * d + col].abs()))
            .unwrap();
        for k in 0..d {
            m.swap(col * d + k, piv * d + k);
            inv.swap(col * d + k, piv * d + k);
        }
        let p = m[col * d + col];
        for k in 0..d {
            m[col * d + k] /= p;
            inv[col * d + k] /= p;
        }
        for r in 0..d {
            if r != col {
                let f = m[r * d + col];
                for k in 0..d {
                    m[r * d + k] -= f * m[col * d + k];
                    inv[r * d + k] -= f * inv[col * d + k];
                }
            }
        }
    }
    inv
}

// ---------------------------------------------------------------------------------------------
// Exact moment propagation

/// `z' = A z + c + ε`, `Cov ε = Q` (Q diagonal, stored as its diagonal).
#[derive(Clone, Debug)]
pub struct Affine {
    pub a: Vec<f64>,
    pub c: Vec<f64>,
    pub q: Vec<f64>,
}

/// First and raw second moments of the full state.
#[derive(Clone, Debug)]
pub struct Moments {
    pub mu: Vec<f64>,
    pub s: Vec<f64>,
}

impl Moments {
    pub fn point(z: &[f64]) -> Self {
        let m = z.len();
        let mut s = vec![0.0; m * m];
        for r in 0..m {
            for c in 0..m {
                s[r * m + c] = z[r] * z[c];
            }
        }
        Self { mu: z.to_vec(), s }
    }

    pub fn apply(&self, f: &Affine) -> Self {
        let m = self.mu.len();
        let amu = matvec(&f.a, &self.mu, m);
        let mut s = sandwich(&f.a, &self.s, m);
        for r in 0..m {
            for c in 0..m {
                s[r * m + c] += amu[r] * f.c[c] + f.c[r] * amu[c] + f.c[r] * f.c[c];
            }
            s[r * m + r] += f.q[r];
        }
        let mu = amu.iter().zip(&f.c).map(|(a, c)| a + c).collect();
        Self { mu, s }
    }

    fn zero(m: usize) -> Self {
        Self {
            mu: vec![0.0; m],
            s: vec![0.0; m * m],
        }
    }

    fn add_scaled(&mut self, w: f64, o: &Moments) {
        self.mu.iter_mut().zip(&o.mu).for_each(|(a, b)| *a += w * b);
        self.s.iter_mut().zip(&o.s).for_each(|(a, b)| *a += w * b);
    }
}

/// A stretch of steps whose discrete randomness is one of several weighted scenarios, each a
/// sequence of affine steps of the same length; scenarios of different segments are independent.
pub type Segment = Vec<(f64, Vec<Affine>)>;

/// Expected time averages of `θ` (first `d` coordinates of the state) and of `θ θᵀ` over the
/// steps `burn+1 ..= burn+kept` (the state after each of those steps), from the point `z0`.
pub fn expected_averages(
    z0: &[f64],
    d: usize,
    burn: usize,
    kept: usize,
    mut segment: impl FnMut(usize) -> Segment,
) -> (Vec<f64>, Vec<f64>) {
    let m = z0.len();
    let total = burn + kept;
    let mut cur = Moments::point(z0);
    let mut sum_mu = vec![0.0; d];
    let mut sum_s = vec![0.0; d * d];
    let mut k = 0;
    while k < total {
        let seg = segment(k);
        let len = seg[0].1.len();
        let mut per_step: Vec<Moments> = (0..len).map(|_| Moments::zero(m)).collect();
        for (w, steps) in &seg {
            let mut x = cur.clone();
            for (t, f) in steps.iter().enumerate() {
                x = x.apply(f);
                per_step[t].add_scaled(*w, &x);
            }
        }
        for (t, mom) in per_step.iter().enumerate() {
            let step_index = k + t + 1;
            if step_index > burn && step_index <= total {
                for r in 0..d {
                    sum_mu[r] += mom.mu[r];
                    for c in 0..d {
                        sum_s[r * d + c] += mom.s[r * m + c];
                    }
                }
            }
        }
        cur = per_step.pop().unwrap();
        k += len;
    }
    let kf = kept as f64;
    (
        sum_mu.iter().map(|v| v / kf).collect(),
        sum_s.iter().map(|v| v / kf).collect(),
    )
}

/// All ordered minibatches of `n` indices from `0..terms`, grouped by multiplicities.
pub fn random_batches(terms: usize, n: usize) -> Vec<(f64, Vec<usize>)> {
    let mut map: BTreeMap<Vec<usize>, f64> = BTreeMap::new();
    let total = terms.pow(n as u32);
    for code in 0..total {
        let mut counts = vec![0usize; terms];
        let mut c = code;
        for _ in 0..n {
            counts[c % terms] += 1;
            c /= terms;
        }
        *map.entry(counts).or_default() += 1.0 / total as f64;
    }
    map.into_iter().map(|(c, w)| (w, c)).collect()
}

/// All permutations of `0..n`.
pub fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![vec![]];
    }
    let mut out = Vec::new();
    for p in permutations(n - 1) {
        for pos in 0..=p.len() {
            let mut q = p.clone();
            q.insert(pos, n - 1);
            out.push(q);
        }
    }
    out
}

fn counts_of(idx: &[usize], terms: usize) -> Vec<usize> {
    let mut c = vec![0; terms];
    for &i in idx {
        c[i] += 1;
    }
    c
}

/// The overdamped step with gradient `w Σ_j k_j ∇V_j` (state `θ`).
pub fn overdamped_affine(t: &QuadSum, counts: &[usize], w: f64, h: f64) -> Affine {
    let d = t.d;
    let mut a = eye(d);
    let mut c = vec![0.0; d];
    for (j, &k) in counts.iter().enumerate() {
        if k == 0 {
            continue;
        }
        let f = w * k as f64;
        let hj = t.h(j);
        for r in 0..d {
            c[r] += h * f * t.b[j][r];
            for cc in 0..d {
                a[r * d + cc] -= h * f * hj[r * d + cc];
            }
        }
    }
    Affine {
        a,
        c,
        q: vec![2.0 * h; d],
    }
}

/// The Euler–Maruyama underdamped step with gradient `w Σ_j k_j ∇V_j` (state `(θ, r)`).
pub fn underdamped_affine(t: &QuadSum, counts: &[usize], w: f64, h: f64, gamma: f64) -> Affine {
    let d = t.d;
    let m = 2 * d;
    let mut a = vec![0.0; m * m];
    let mut c = vec![0.0; m];
    for r in 0..d {
        a[r * m + r] = 1.0;
        a[r * m + d + r] = h;
        a[(d + r) * m + d + r] = 1.0 - h * gamma;
    }
    for (j, &k) in counts.iter().enumerate() {
        if k == 0 {
            continue;
        }
        let f = w * k as f64;
        let hj = t.h(j);
        for r in 0..d {
            c[d + r] += h * f * t.b[j][r];
            for cc in 0..d {
                a[(d + r) * m + cc] -= h * f * hj[r * d + cc];
            }
        }
    }
    let mut q = vec![0.0; m];
    q[d..].iter_mut().for_each(|v| *v = 2.0 * gamma * h);
    Affine { a, c, q }
}

/// Which part of each term the AGLD snapshot holds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SnapPart {
    /// The whole term gradient (dense table, or the point store).
    Full,
    /// The data part `S_i θ − b_i`; the shared `P θ` is exact (scalar store).
    Data,
}

/// The AGLD state `(θ, α_1, …, α_N)`: the dimension.
pub fn agld_state_len(t: &QuadSum) -> usize {
    t.d * (t.n() + 1)
}

fn snap_hessian(t: &QuadSum, j: usize, part: SnapPart) -> Vec<f64> {
    match part {
        SnapPart::Full => t.h(j),
        SnapPart::Data => t.s[j].clone(),
    }
}

/// AGLD refresh step: `α_i ← (snapshotted part of ∇V_i)(θ)`, `θ ← θ − h ∇V(θ) + noise`.
pub fn agld_refresh_affine(t: &QuadSum, h: f64, part: SnapPart) -> Affine {
    let d = t.d;
    let n = t.n();
    let m = d * (n + 1);
    let mut a = vec![0.0; m * m];
    let mut c = vec![0.0; m];
    for r in 0..d {
        a[r * m + r] = 1.0;
    }
    for j in 0..n {
        let hj = t.h(j);
        let sj = snap_hessian(t, j, part);
        for r in 0..d {
            c[r] += h * t.b[j][r];
            c[(j + 1) * d + r] = -t.b[j][r];
            for cc in 0..d {
                a[r * m + cc] -= h * hj[r * d + cc];
                a[((j + 1) * d + r) * m + cc] = sj[r * d + cc];
            }
        }
    }
    let mut q = vec![0.0; m];
    q[..d].iter_mut().for_each(|v| *v = 2.0 * h);
    Affine { a, c, q }
}

/// AGLD minibatch step: `ĝ = w Σ_j k_j (g_j(θ) − α_j) + Σ_i α_i (+ P θ for `Data`)`, where
/// `g_j` is the snapshotted part; with `update`, `α_j ← g_j(θ)` for the batch's indices.
pub fn agld_batch_affine(
    t: &QuadSum,
    counts: &[usize],
    w: f64,
    h: f64,
    part: SnapPart,
    update: bool,
) -> Affine {
    let d = t.d;
    let n = t.n();
    let m = d * (n + 1);
    let mut a = eye(m);
    let mut c = vec![0.0; m];
    if part == SnapPart::Data {
        for r in 0..d {
            for cc in 0..d {
                a[r * m + cc] -= h * t.p[r * d + cc];
            }
        }
    }
    for j in 0..n {
        let k = counts[j] as f64;
        let coef = -h * (1.0 - w * k);
        for r in 0..d {
            a[r * m + (j + 1) * d + r] = coef;
        }
        if counts[j] == 0 {
            continue;
        }
        let sj = snap_hessian(t, j, part);
        for r in 0..d {
            c[r] += h * w * k * t.b[j][r];
            for cc in 0..d {
                a[r * m + cc] -= h * w * k * sj[r * d + cc];
            }
        }
        if update {
            for r in 0..d {
                for cc in 0..m {
                    a[((j + 1) * d + r) * m + cc] = 0.0;
                }
                c[(j + 1) * d + r] = -t.b[j][r];
                for cc in 0..d {
                    a[((j + 1) * d + r) * m + cc] = sj[r * d + cc];
                }
            }
        }
    }
    let mut q = vec![0.0; m];
    q[..d].iter_mut().for_each(|v| *v = 2.0 * h);
    Affine { a, c, q }
}

/// The discrete randomness of minibatch steps under an access order, tracked step by step.
#[derive(Clone, Debug)]
pub struct AccessSim {
    pub access: Access,
    pub terms: usize,
    pub batch: usize,
    cursor: usize,
    random: Option<Vec<(f64, Vec<usize>)>>,
    passes: Option<Vec<Vec<Vec<usize>>>>,
}

impl AccessSim {
    pub fn new(access: Access, terms: usize, batch: usize) -> Self {
        Self {
            access,
            terms,
            batch,
            cursor: 0,
            random: None,
            passes: None,
        }
    }

    /// Scenarios of the next minibatch step for RA / CA (advancing CA's cursor).
    pub fn next_simple(&mut self) -> Vec<(f64, Vec<usize>)> {
        match self.access {
            Access::Random => self
                .random
                .get_or_insert_with(|| random_batches(self.terms, self.batch))
                .clone(),
            Access::Cyclic => {
                let idx: Vec<usize> = (0..self.batch)
                    .map(|k| (self.cursor + k) % self.terms)
                    .collect();
                self.cursor = (self.cursor + self.batch) % self.terms;
                vec![(1.0, counts_of(&idx, self.terms))]
            }
            Access::Reshuffle => panic!("reshuffle needs whole passes"),
        }
    }

    /// For reshuffle: the minibatch multiplicities of each of the `N/n` steps of a pass, per
    /// permutation (needs `n | N`).
    pub fn pass_scenarios(&mut self) -> Vec<Vec<Vec<usize>>> {
        assert_eq!(self.terms % self.batch, 0, "reshuffle tests need n | N");
        let (terms, batch) = (self.terms, self.batch);
        self.passes
            .get_or_insert_with(|| {
                permutations(terms)
                    .into_iter()
                    .map(|p| p.chunks(batch).map(|ch| counts_of(ch, terms)).collect())
                    .collect()
            })
            .clone()
    }
}

/// The segment generator of an AGLD chain: refresh steps are single deterministic steps;
/// minibatch steps come one at a time (RA, CA) or a whole reshuffled pass at once, with any
/// refresh steps that fall inside it.
pub fn agld_segments(
    t: &QuadSum,
    h: f64,
    batch: usize,
    access: Access,
    update: SnapshotUpdate,
    part: SnapPart,
) -> impl FnMut(usize) -> Segment {
    let t = t.clone();
    let w = t.n() as f64 / batch as f64;
    let mut sim = AccessSim::new(access, t.n(), batch);
    let refresh = agld_refresh_affine(&t, h, part);
    let partial = update.is_partial();
    move |k| {
        if update.refreshes_at(k as u64) {
            return vec![(1.0, vec![refresh.clone()])];
        }
        if access != Access::Reshuffle {
            return sim
                .next_simple()
                .into_iter()
                .map(|(wt, counts)| {
                    (
                        wt,
                        vec![agld_batch_affine(&t, &counts, w, h, part, partial)],
                    )
                })
                .collect();
        }
        // A whole pass: which steps are refreshes is deterministic.
        let batches_per_pass = t.n() / batch;
        let mut kinds = Vec::new(); // None = refresh, Some(j) = j-th batch of the pass
        let mut step = k;
        let mut j = 0;
        while j < batches_per_pass {
            if update.refreshes_at(step as u64) {
                kinds.push(None);
            } else {
                kinds.push(Some(j));
                j += 1;
            }
            step += 1;
        }
        let scen = sim.pass_scenarios();
        let wt = 1.0 / scen.len() as f64;
        scen.into_iter()
            .map(|batches| {
                let steps = kinds
                    .iter()
                    .map(|kind| match kind {
                        None => refresh.clone(),
                        Some(j) => agld_batch_affine(&t, &batches[*j], w, h, part, partial),
                    })
                    .collect();
                (wt, steps)
            })
            .collect()
    }
}

/// The segment generator of an overdamped (`gamma = None`) or underdamped chain with full
/// gradient (`batch = None`) or minibatches under an access order.
pub fn langevin_segments(
    t: &QuadSum,
    h: f64,
    gamma: Option<f64>,
    batch: Option<usize>,
    access: Access,
) -> impl FnMut(usize) -> Segment {
    let t = t.clone();
    let n = t.n();
    let mk = move |t: &QuadSum, counts: &[usize], w: f64| match gamma {
        None => overdamped_affine(t, counts, w, h),
        Some(g) => underdamped_affine(t, counts, w, h, g),
    };
    let mut sim = batch.map(|b| AccessSim::new(access, n, b));
    move |_k| match (&mut sim, batch) {
        (None, _) | (_, None) => vec![(1.0, vec![mk(&t, &vec![1; n], 1.0)])],
        (Some(sim), Some(b)) => {
            let w = n as f64 / b as f64;
            if access == Access::Reshuffle {
                let scen = sim.pass_scenarios();
                let wt = 1.0 / scen.len() as f64;
                scen.into_iter()
                    .map(|batches| (wt, batches.iter().map(|c| mk(&t, c, w)).collect()))
                    .collect()
            } else {
                sim.next_simple()
                    .into_iter()
                    .map(|(wt, counts)| (wt, vec![mk(&t, &counts, w)]))
                    .collect()
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Statistics

/// Continued fraction of the regularised incomplete beta function (modified Lentz).
fn beta_cf(a: f64, b: f64, x: f64) -> f64 {
    let tiny = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < tiny {
        d = tiny;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..10_000 {
        let m = m as f64;
        let m2 = 2.0 * m;
        // One modified-Lentz update with coefficient `aa`: returns the factor of `h`.
        let mut lentz = |aa: f64| {
            d = 1.0 + aa * d;
            if d.abs() < tiny {
                d = tiny;
            }
            c = 1.0 + aa / c;
            if c.abs() < tiny {
                c = tiny;
            }
            d = 1.0 / d;
            d * c
        };
        h *= lentz(m * (b - m) * x / ((qam + m2) * (a + m2)));
        let del = lentz(-(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)));
        h *= del;
        if (del - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// Regularised incomplete beta `I_x(a, b)`.
fn inc_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let bt = (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        bt * beta_cf(a, b, x) / a
    } else {
        1.0 - bt * beta_cf(b, a, 1.0 - x) / b
    }
}

/// `P(|T| > t)` for Student's t with `nu` degrees of freedom.
pub fn t_two_sided_p(t: f64, nu: f64) -> f64 {
    inc_beta(nu / 2.0, 0.5, nu / (nu + t * t))
}

/// The two-sided critical value `t` with `P(|T| > t) = alpha`.
pub fn t_critical(alpha: f64, nu: f64) -> f64 {
    bisect_tail(|t| t_two_sided_p(t, nu), alpha, 0.0, 100.0).1
}

/// The per-test false-positive rate of the suite.
pub const ALPHA: f64 = 1e-6;

/// Chain `c`'s generator: `seed_from_u64(seed)` advanced by `c` jumps.
pub fn chain_rng(seed: u64, c: usize) -> Xoshiro256PlusPlus {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    for _ in 0..c {
        rng.jump();
    }
    rng
}

/// Time averages of `θ` and `θ θᵀ` over a chain's kept steps.
#[derive(Clone, Debug, Default)]
pub struct ChainAverages {
    pub mean: Vec<f64>,
    pub second: Vec<f64>,
}

/// Runs `chains` chains: `step(rng, c)` must return a closure-free stepper; here the caller
/// passes `run(c) -> ChainAverages`.
pub fn collect(chains: usize, mut run: impl FnMut(usize) -> ChainAverages) -> Vec<ChainAverages> {
    (0..chains).map(&mut run).collect()
}

/// Accumulates `θ` and `θθᵀ` of kept steps.
pub struct Accum {
    d: usize,
    n: usize,
    mean: Vec<f64>,
    second: Vec<f64>,
}

impl Accum {
    pub fn new(d: usize) -> Self {
        Self {
            d,
            n: 0,
            mean: vec![0.0; d],
            second: vec![0.0; d * d],
        }
    }
    pub fn push(&mut self, theta: &[f64]) {
        self.n += 1;
        for r in 0..self.d {
            self.mean[r] += theta[r];
            for c in 0..self.d {
                self.second[r * self.d + c] += theta[r] * theta[c];
            }
        }
    }
    pub fn finish(self) -> ChainAverages {
        let n = self.n as f64;
        ChainAverages {
            mean: self.mean.iter().map(|v| v / n).collect(),
            second: self.second.iter().map(|v| v / n).collect(),
        }
    }
}

/// The across-chain t-statistics of every time-averaged statistic (`θ_r` and `θ_r θ_c`,
/// `r ≤ c`) against exact expectations. The chains are independent, so the across-chain spread
/// measures each statistic's standard error whatever the autocorrelation within a chain (the
/// effective sample size at work). The threshold is Student's t with `C − 1` degrees of freedom
/// at `ALPHA` split evenly over the statistics (Bonferroni).
pub struct Check {
    pub names: Vec<String>,
    pub sample: Vec<f64>,
    pub se: Vec<f64>,
    pub crit: f64,
}

fn flatten(mean: &[f64], second: &[f64]) -> Vec<f64> {
    let d = mean.len();
    let mut v = mean.to_vec();
    for r in 0..d {
        for c in r..d {
            v.push(second[r * d + c]);
        }
    }
    v
}

impl Check {
    pub fn new(runs: &[ChainAverages]) -> Self {
        let d = runs[0].mean.len();
        let c = runs.len() as f64;
        let rows: Vec<Vec<f64>> = runs.iter().map(|x| flatten(&x.mean, &x.second)).collect();
        let k = rows[0].len();
        let mut names: Vec<String> = (0..d).map(|r| format!("E[θ{r}]")).collect();
        for r in 0..d {
            for cc in r..d {
                names.push(format!("E[θ{r}θ{cc}]"));
            }
        }
        let mut sample = vec![0.0; k];
        let mut se = vec![0.0; k];
        for j in 0..k {
            let m = rows.iter().map(|r| r[j]).sum::<f64>() / c;
            let var = rows.iter().map(|r| (r[j] - m) * (r[j] - m)).sum::<f64>() / (c - 1.0);
            sample[j] = m;
            se[j] = (var / c).sqrt();
        }
        let crit = t_critical(ALPHA / k as f64, c - 1.0);
        Self {
            names,
            sample,
            se,
            crit,
        }
    }

    /// Panics with a report unless every statistic is within `crit` standard errors of the
    /// exact value.
    pub fn assert_exact(&self, label: &str, mean: &[f64], second: &[f64]) {
        let exact = flatten(mean, second);
        let mut report = String::new();
        let mut failed = false;
        for j in 0..exact.len() {
            let t = (self.sample[j] - exact[j]) / self.se[j];
            report += &format!(
                "  {}: sample {:.6e}, exact {:.6e}, se {:.2e}, t {:.2}\n",
                self.names[j], self.sample[j], exact[j], self.se[j], t
            );
            failed |= t.is_nan() || t.abs() > self.crit;
        }
        assert!(
            !failed,
            "{label}: a moment is off (|t| > {:.2}):\n{report}",
            self.crit
        );
    }

    /// Panics unless some statistic of the `alternative` law differs from the exact one by
    /// more than `2 · crit` standard errors: the test would catch a chain with that law.
    pub fn assert_power(
        &self,
        label: &str,
        exact: (&[f64], &[f64]),
        alternative: (&[f64], &[f64]),
    ) {
        let e = flatten(exact.0, exact.1);
        let a = flatten(alternative.0, alternative.1);
        let best = (0..e.len())
            .map(|j| (a[j] - e[j]).abs() / self.se[j])
            .fold(0.0f64, f64::max);
        eprintln!(
            "{label}: alternative {best:.1} se away (threshold {:.1})",
            2.0 * self.crit
        );
        assert!(
            best > 2.0 * self.crit,
            "{label}: the alternative law is only {best:.1} standard errors away (need > {:.1})",
            2.0 * self.crit
        );
    }
}

/// Pearson's chi-square of observed counts against probabilities, cells with expected count
/// below 5 pooled; returns `(statistic, degrees of freedom, p-value)`.
pub fn chi_square(observed: &[u64], probs: &[f64]) -> (f64, usize, f64) {
    let c = chi_square_pooled(observed, probs);
    (c.statistic, c.df, c.p_value)
}
