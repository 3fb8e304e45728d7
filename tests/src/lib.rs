//! Shared helpers for the integration tests: exact enumeration of small models and the
//! statistical thresholds of the sampling-path protocol.
//!
//! * [`enumerate`] evaluates a binary target on all `2^d` states; state `k` has
//!   `x_i = (k >> i) & 1`.
//! * [`transition_matrix`] builds the exact transition matrix of a flip-proposal kernel from the
//!   kernel's own numbers ([`FlipProposal::log_q`] and the target's `U`), and
//!   [`check_metropolis_exactness`] checks detailed balance and `πP = π` against tolerances
//!   derived from the floating-point error of that construction.
//! * [`stationary`] solves `πP = π` for an unadjusted kernel.
//! * [`sample_exact_start`] runs the exact-start sampling protocol; [`chi_square_pooled`],
//!   [`tv_threshold`] and [`check_sample`] decide whether the draws follow a law.
//! * [`golden_hash`] is the value-stability hash shared with the firmware tests.
//! * [`harness`] builds a kernel's exact transition matrix from its own `step` on any discrete
//!   domain (binary, ordinal, categorical) and checks detailed balance and `πP = π`.
#![forbid(unsafe_code)]
#![deny(missing_docs, missing_debug_implementations)]

pub mod discrete;
pub mod harness;

use langevin_core::binary::{BinaryChain, ChainStorage, FlipProposal};
use langevin_core::math::FlipMath;
use langevin_core::models::{ConstDims, IsingGraph, IsingLattice};
use langevin_core::random::unit_f64;
use langevin_core::{Binary, Kernel};
use langevin_core::{BinaryTarget, TargetError};
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Unit roundoff of `f64`: `2^-53`.
pub const UNIT_ROUNDOFF_F64: f64 = f64::EPSILON / 2.0;
/// Unit roundoff of `f32`: `2^-24`.
pub const UNIT_ROUNDOFF_F32: f64 = f32::EPSILON as f64 / 2.0;

// ---------------------------------------------------------------------------------------------
// Enumeration
// ---------------------------------------------------------------------------------------------

/// The state with index `k`: `x_i = (k >> i) & 1`.
pub fn state(k: usize, d: usize) -> Vec<u8> {
    (0..d).map(|i| ((k >> i) & 1) as u8).collect()
}

/// The index of state `x` (inverse of [`state`]).
pub fn index_of(x: &[u8]) -> usize {
    x.iter()
        .enumerate()
        .map(|(i, &v)| usize::from(v) << i)
        .sum()
}

/// A target evaluated on every state of `{0,1}^d`.
#[derive(Clone, Debug)]
pub struct Enumeration {
    /// The dimension `d`.
    pub dim: usize,
    /// `U(x_k)` from a fresh evaluation.
    pub log_density: Vec<f64>,
    /// `∇U(x_k)` from the same evaluation.
    pub grad: Vec<Vec<f32>>,
    /// `ln Σ_k exp U(x_k)`.
    pub log_z: f64,
    /// `π(x_k) = exp(U(x_k) − log_z)`.
    pub pi: Vec<f64>,
}

impl Enumeration {
    /// Number of states `K = 2^d`.
    pub fn states(&self) -> usize {
        self.log_density.len()
    }
}

/// `ln Σ exp(v_i)`, stably.
pub fn log_sum_exp(v: &[f64]) -> f64 {
    let m = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    m + v.iter().map(|&u| (u - m).exp()).sum::<f64>().ln()
}

/// Evaluates `target` on all `2^d` states (`d ≤ 20`) with fresh, non-incremental evaluations.
///
/// # Panics
///
/// If the target fails or returns a non-finite value: the exact tests need a valid model.
pub fn enumerate<T: BinaryTarget + ?Sized>(target: &mut T) -> Enumeration {
    let d = target.dim();
    assert!((1..=20).contains(&d), "dimension {d} cannot be enumerated");
    let k = 1usize << d;
    let mut log_density = Vec::with_capacity(k);
    let mut grads = Vec::with_capacity(k);
    for s in 0..k {
        let x = state(s, d);
        let mut g = vec![0.0f32; d];
        let u = target
            .log_density_and_grad(&x, &mut g)
            .unwrap_or_else(|e| panic!("target failed at state {s}: {e}"));
        assert!(
            u.is_finite() && g.iter().all(|v| v.is_finite()),
            "non-finite at state {s}"
        );
        log_density.push(u);
        grads.push(g);
    }
    let log_z = log_sum_exp(&log_density);
    let pi = log_density.iter().map(|&u| (u - log_z).exp()).collect();
    Enumeration {
        dim: d,
        log_density,
        grad: grads,
        log_z,
        pi,
    }
}

/// Probabilities from log-weights: `p_i ∝ exp(w_i)`.
pub fn normalise_log(w: &[f64]) -> Vec<f64> {
    let l = log_sum_exp(w);
    w.iter().map(|&v| (v - l).exp()).collect()
}

/// Total variation distance `½ Σ |p_i − q_i|`.
pub fn tv(p: &[f64], q: &[f64]) -> f64 {
    assert_eq!(p.len(), q.len());
    0.5 * p.iter().zip(q).map(|(a, b)| (a - b).abs()).sum::<f64>()
}

// ---------------------------------------------------------------------------------------------
// Exact transition matrices
// ---------------------------------------------------------------------------------------------

/// Which kernel a matrix describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Correction {
    /// DULA: every proposal is accepted.
    Unadjusted,
    /// DMALA: a Metropolis–Hastings test on the kernel's own `U` and `log q`.
    Metropolis,
}

/// The exact transition matrix of a flip-proposal kernel on an enumerated model.
///
/// Off-diagonal entries are `P_xy = exp(log q(y|x)) · min(1, exp(r_xy))` with
/// `r_xy = (U_y − U_x) + (log q(x|y) − log q(y|x))` computed exactly as the kernel computes it
/// (for DULA the acceptance is 1). The diagonal is the rest of the row, `1 − Σ_{y≠x} P_xy`: the
/// probability of proposing no flip plus the rejected mass. Rows then sum to one up to `f64`
/// rounding, and [`proposal_mass`](Self::proposal_mass) records separately how far the `f32`
/// proposal probabilities are from summing to one.
///
/// The matrix uses the `log q` the Metropolis test uses. The draw itself uses `p_flip` of the same
/// `f32` logit, realised through a 32-bit threshold; the two differ by `f32` rounding (relative
/// `~2^-23` per coordinate) and by less than `2^-32` absolute, which no test here can resolve.
#[derive(Clone, Debug)]
pub struct Transition {
    /// Number of states `K`.
    pub states: usize,
    /// `P` row-major: `p[x·K + y] = P(x → y)`.
    pub p: Vec<f64>,
    /// `log q(y|x)` row-major, as returned by [`FlipProposal::log_q`].
    pub log_q: Vec<f64>,
    /// `Σ_y exp(log q(y|x))` per row `x` (1 up to `f32` rounding).
    pub proposal_mass: Vec<f64>,
}

impl Transition {
    /// `P(x → y)`.
    pub fn get(&self, x: usize, y: usize) -> f64 {
        self.p[x * self.states + y]
    }

    /// `log q(y|x)`.
    pub fn log_q_at(&self, x: usize, y: usize) -> f64 {
        self.log_q[x * self.states + y]
    }

    /// `v P` for a row vector `v`.
    pub fn left_mul(&self, v: &[f64]) -> Vec<f64> {
        let k = self.states;
        let mut out = vec![0.0; k];
        for (x, &vx) in v.iter().enumerate() {
            if vx == 0.0 {
                continue;
            }
            for (o, &pxy) in out.iter_mut().zip(&self.p[x * k..(x + 1) * k]) {
                *o += vx * pxy;
            }
        }
        out
    }
}

/// Builds the transition matrix of the kernel `correction` with `proposal` on `e` (see
/// [`Transition`]).
pub fn transition_matrix<M: FlipMath>(
    e: &Enumeration,
    proposal: &FlipProposal<'_, M>,
    correction: Correction,
) -> Transition {
    let k = e.states();
    let d = e.dim;
    let states: Vec<Vec<u8>> = (0..k).map(|s| state(s, d)).collect();
    let mut log_q = vec![0.0f64; k * k];
    for (x, (sx, gx)) in states.iter().zip(&e.grad).enumerate() {
        for (y, sy) in states.iter().enumerate() {
            log_q[x * k + y] = proposal.log_q(sx, gx, sy).expect("lengths agree");
        }
    }
    let mut p = vec![0.0f64; k * k];
    let mut proposal_mass = vec![0.0f64; k];
    for x in 0..k {
        let mut off = 0.0f64;
        let mut mass = 0.0f64;
        for y in 0..k {
            let lqf = log_q[x * k + y];
            let q = lqf.exp();
            mass += q;
            if y == x {
                continue;
            }
            let acc = match correction {
                Correction::Unadjusted => 1.0,
                Correction::Metropolis => {
                    let lqr = log_q[y * k + x];
                    let r = (e.log_density[y] - e.log_density[x]) + (lqr - lqf);
                    // The kernel accepts when ln u < r with ln u < 0: r ≥ 0 always accepts.
                    if r >= 0.0 { 1.0 } else { r.exp() }
                }
            };
            let v = q * acc;
            p[x * k + y] = v;
            off += v;
        }
        p[x * k + x] = 1.0 - off;
        proposal_mass[x] = mass;
    }
    Transition {
        states: k,
        p,
        log_q,
        proposal_mass,
    }
}

/// Rebuilds `t` as the kernel with a common bug: the proposal ratio dropped from the
/// acceptance (accepting with `min(1, π_y/π_x)`).
pub fn drop_proposal_ratio(e: &Enumeration, t: &mut Transition) {
    t.p = discrete::stochastic_matrix(t.states, |x, y| {
        let r = e.log_density[y] - e.log_density[x];
        t.log_q_at(x, y).exp() * r.exp().min(1.0)
    });
}

/// Result of [`check_metropolis_exactness`]: worst violations as multiples of their tolerance
/// (a check passes when its value is at most 1).
#[derive(Clone, Copy, Debug)]
pub struct ExactCheck {
    /// `max |π_x P_xy − π_y P_yx| / tol_xy`.
    pub balance: f64,
    /// `max_y |(πP)_y − π_y| / tol_y`.
    pub invariance: f64,
    /// `max_x |Σ_y P_xy − 1| / ((K + 2)·ε)`.
    pub rows: f64,
    /// Largest relative detailed-balance tolerance used.
    pub max_balance_tol: f64,
}

/// Checks detailed balance and `πP = π` for a Metropolis matrix built by [`transition_matrix`].
///
/// # Precision
///
/// With `u = 2^-53`, the computed `π_x P_xy` is `exp(U_x − L)·exp(lq_xy)·min(1, exp(r_xy))` and its
/// relative error is at most `u·(|U_x| + |L|) + 2u` (π), `2u` (q), `2u·S_xy + 2u` (the two
/// additions forming `r`, then `exp`) and `2u` (two products), where
/// `S_xy = |U_x| + |U_y| + |lq_xy| + |lq_yx|` and `L = log_z`. In exact arithmetic both sides equal
/// `exp(min(U_x + lq_xy, U_y + lq_yx) − L)`, so
/// `|π_x P_xy − π_y P_yx| ≤ tol_xy · max(π_x P_xy, π_y P_yx)` with
/// `tol_xy = 16u·(S_xy + |L| + 2)`, twice the sum of both sides' bounds.
///
/// For `πP = π`: the diagonal `1 − Σ_{x≠y} P_yx` carries an absolute error of at most `K·u`, the
/// off-diagonal terms `π_x P_xy = π_y P_yx (1 + θ)` with `|θ| ≤ tol_xy`, and summing `K` terms
/// adds `K·u` relative; so `|(πP)_y − π_y| ≤ π_y·(max tol + 4K·u)`.
pub fn check_metropolis_exactness(e: &Enumeration, t: &Transition) -> ExactCheck {
    let k = e.states();
    let l = e.log_z.abs();
    let mut balance = 0.0f64;
    let mut max_tol = 0.0f64;
    for x in 0..k {
        for y in (x + 1)..k {
            let a = e.pi[x] * t.get(x, y);
            let b = e.pi[y] * t.get(y, x);
            let s = e.log_density[x].abs()
                + e.log_density[y].abs()
                + t.log_q_at(x, y).abs()
                + t.log_q_at(y, x).abs();
            let tol = 16.0 * UNIT_ROUNDOFF_F64 * (s + l + 2.0);
            max_tol = max_tol.max(tol);
            let scale = a.max(b);
            if scale > 0.0 {
                balance = balance.max((a - b).abs() / (tol * scale));
            }
        }
    }
    let pp = t.left_mul(&e.pi);
    let rel = max_tol + 4.0 * k as f64 * UNIT_ROUNDOFF_F64;
    let invariance = pp
        .iter()
        .zip(&e.pi)
        .map(|(a, b)| (a - b).abs() / (rel * b))
        .fold(0.0, f64::max);
    let rows = (0..k)
        .map(|x| {
            let s: f64 = t.p[x * k..(x + 1) * k].iter().sum();
            (s - 1.0).abs() / ((k as f64 + 2.0) * f64::EPSILON)
        })
        .fold(0.0, f64::max);
    ExactCheck {
        balance,
        invariance,
        rows,
        max_balance_tol: max_tol,
    }
}

/// Bound on `|Σ_y exp(log q(y|x)) − 1|` from `f32` rounding in the per-coordinate logarithms.
///
/// # Precision
///
/// Each `ln σ(±l)` is `−(max(∓l, 0) + ln(1 + e^{−|l|}))` in `f32`: `exp` and `ln_1p` within one
/// ulp each and one addition, so its absolute error is at most `4·2^-24·(|l|·σ + 1)` where it
/// matters (a term's error is weighted by its own probability, and `σ(−|l|)·|l| < 1`). Summed over
/// the `d` factors of the product, and with the `f32` lane sums of `log q` adding
/// `2^-24·(d/8 + 2)·|log q|` weighted by `q`, the row mass is within
/// `2^-21·d + 2^-22·(d/8 + 2)·H` of one, `H = Σ_y q_y |log q_y|` (doubled for safety).
pub fn proposal_mass_tolerance(t: &Transition, x: usize, d: usize) -> f64 {
    let k = t.states;
    let h: f64 = (0..k)
        .map(|y| {
            let lq = t.log_q_at(x, y);
            lq.exp() * lq.abs()
        })
        .sum();
    8.0 * UNIT_ROUNDOFF_F32 * d as f64 + 4.0 * UNIT_ROUNDOFF_F32 * (d as f64 / 8.0 + 2.0) * h
}

/// `log q(y|x)` of the balanced proposal in `f64`: `Σ_i ln σ(±l_i)` with
/// `l_i = b·g_i·(1 − 2x_i) − 1/(2 a_i)`, `a_i = a·p_i²`.
pub fn log_q_reference(
    x: &[u8],
    g: &[f32],
    y: &[u8],
    step: f64,
    balance: f64,
    precond: Option<&[f32]>,
) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        let a = step * precond.map_or(1.0, |p| f64::from(p[i]) * f64::from(p[i]));
        let l = balance * f64::from(g[i]) * (1.0 - 2.0 * f64::from(x[i])) - 0.5 / a;
        s += if x[i] != y[i] {
            -softplus(-l)
        } else {
            -softplus(l)
        };
    }
    s
}

/// Tolerance for [`log_q_reference`] against the kernel's `f32` `log q`.
///
/// # Precision
///
/// The kernel rounds `b`, `1/(2a)` (and `p_i²` and the division when preconditioned), `g_i` (the
/// target's `f32` gradient), the product and the difference forming `l_i`: at most 6 roundings of
/// quantities bounded by `b|g_i| + 1/(2a_i)`, so `|Δl_i| ≤ 6·2^-24·(b|g_i| + 1/(2a_i))`. The
/// logarithm is 1-Lipschitz in `l` and adds `4·2^-24·(|l_i| + 1)`; the lane sums add
/// `2^-24·(d/8 + 2)·|log q|`. We allow twice the sum.
pub fn log_q_tolerance(
    x: &[u8],
    g: &[f32],
    step: f64,
    balance: f64,
    precond: Option<&[f32]>,
    log_q: f64,
) -> f64 {
    let d = x.len() as f64;
    let mut s = 0.0;
    for i in 0..x.len() {
        let a = step * precond.map_or(1.0, |p| f64::from(p[i]) * f64::from(p[i]));
        let m = balance * f64::from(g[i]).abs() + 0.5 / a;
        s += 6.0 * m + 4.0 * (m + 1.0);
    }
    2.0 * UNIT_ROUNDOFF_F32 * (s + (d / 8.0 + 2.0) * log_q.abs())
}

/// `ln(1 + e^x)` in `f64`.
pub fn softplus(x: f64) -> f64 {
    x.max(0.0) + (-x.abs()).exp().ln_1p()
}

/// `1 / (1 + e^{−x})` in `f64`.
pub fn sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

/// Solves the dense `n × n` system `a x = b` (`a` row-major) by Gaussian elimination with
/// partial pivoting.
///
/// # Panics
///
/// If a pivot is zero: the system is singular.
pub fn solve_dense(n: usize, mut a: Vec<f64>, mut b: Vec<f64>) -> Vec<f64> {
    for col in 0..n {
        let piv = (col..n)
            .max_by(|&i, &j| a[i * n + col].abs().total_cmp(&a[j * n + col].abs()))
            .expect("nonempty");
        if piv != col {
            for c in 0..n {
                a.swap(piv * n + c, col * n + c);
            }
            b.swap(piv, col);
        }
        let d = a[col * n + col];
        assert!(d != 0.0, "singular system");
        for r in (col + 1)..n {
            let f = a[r * n + col] / d;
            if f != 0.0 {
                for c in col..n {
                    a[r * n + c] -= f * a[col * n + c];
                }
                b[r] -= f * b[col];
            }
        }
    }
    let mut x = vec![0.0f64; n];
    for r in (0..n).rev() {
        let s: f64 = ((r + 1)..n).map(|c| a[r * n + c] * x[c]).sum();
        x[r] = (b[r] - s) / a[r * n + r];
    }
    x
}

/// The stationary distribution of a row-stochastic `K × K` matrix: Gaussian elimination with
/// partial pivoting on `(P − I)ᵀ π = 0` with one equation replaced by `Σ π = 1`, then three
/// power-iteration sweeps to polish.
pub fn stationary(t: &Transition) -> Vec<f64> {
    let k = t.states;
    // a = (P − I)ᵀ, last row replaced by ones; augmented column b.
    let mut a = vec![0.0f64; k * k];
    for x in 0..k {
        for y in 0..k {
            a[y * k + x] = t.get(x, y) - if x == y { 1.0 } else { 0.0 };
        }
    }
    for v in &mut a[(k - 1) * k..] {
        *v = 1.0;
    }
    let mut b = vec![0.0f64; k];
    b[k - 1] = 1.0;
    // A singular system would mean the chain is not irreducible.
    let mut pi = solve_dense(k, a, b);
    for _ in 0..3 {
        let next = t.left_mul(&pi);
        let total: f64 = next.iter().sum();
        pi = next.into_iter().map(|v| v / total).collect();
    }
    pi
}

/// `max_y |(πP)_y − π_y|`.
pub fn stationarity_residual(t: &Transition, pi: &[f64]) -> f64 {
    t.left_mul(pi)
        .iter()
        .zip(pi)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max)
}

// ---------------------------------------------------------------------------------------------
// Sampling path
// ---------------------------------------------------------------------------------------------

/// Owned buffers for one binary chain (`ChainBox::new(&x0)`).
pub type ChainBox = langevin_std::run::ChainVecs<u8>;

/// Cumulative sums of `p`, for [`draw_index`].
pub fn cumulative(p: &[f64]) -> Vec<f64> {
    let mut c = 0.0;
    p.iter()
        .map(|&v| {
            c += v;
            c
        })
        .collect()
}

/// An index drawn from the law with cumulative sums `cdf` (inverse transform).
pub fn draw_index<R: Rng + ?Sized>(cdf: &[f64], rng: &mut R) -> usize {
    let total = *cdf.last().expect("nonempty law");
    let u = unit_f64(rng) * total;
    cdf.partition_point(|&c| c <= u).min(cdf.len() - 1)
}

/// The exact-start protocol: `n` times, draw `X_0` from `start` (probabilities over the state
/// indices), reset the chain there, apply `steps` kernel steps and count the final state.
///
/// One generator drives everything, so successive draws use disjoint stretches of its stream.
///
/// # Panics
///
/// On any step or reset error.
pub fn sample_exact_start<T, K, R>(
    target: &mut T,
    kernel: &mut K,
    start: &[f64],
    steps: usize,
    n: usize,
    rng: &mut R,
) -> Vec<u64>
where
    T: BinaryTarget + ?Sized,
    T::Error: TargetError,
    K: Kernel<Binary>,
    R: Rng + ?Sized,
{
    let d = target.dim();
    let cdf = cumulative(start);
    let mut counts = vec![0u64; start.len()];
    let x0 = state(draw_index(&cdf, rng), d);
    let mut bufs = ChainBox::new(&x0);
    let mut chain = BinaryChain::new(bufs.buffers(), target).expect("valid start");
    let mut first = true;
    for _ in 0..n {
        if !first {
            let x0 = state(draw_index(&cdf, rng), d);
            chain.reset(&x0, target).expect("valid start");
        }
        first = false;
        for _ in 0..steps {
            kernel.step(target, &mut chain, rng).expect("step");
        }
        counts[index_of(chain.state())] += 1;
    }
    counts
}

/// Outcome of a pooled chi-square goodness-of-fit test.
#[derive(Clone, Copy, Debug)]
pub struct ChiSquare {
    /// `Σ (O − E)² / E` over the bins.
    pub statistic: f64,
    /// Degrees of freedom: bins − 1.
    pub df: usize,
    /// `P(χ²_df ≥ statistic)`.
    pub p_value: f64,
    /// Cells merged into the pooled bin.
    pub pooled_cells: usize,
}

/// Pearson's chi-square test of `counts` against probabilities `p`, with every cell of expected
/// count `n·p_i < 5` merged into one pooled bin (itself merged into the smallest other bin if its
/// expected count is still below 5). An observation in a cell of probability 0 gives an infinite
/// statistic.
pub fn chi_square_pooled(counts: &[u64], p: &[f64]) -> ChiSquare {
    assert_eq!(counts.len(), p.len());
    let n: u64 = counts.iter().sum();
    let nf = n as f64;
    let mut bins: Vec<(f64, f64)> = Vec::new(); // (observed, expected)
    let (mut po, mut pe, mut pooled) = (0.0f64, 0.0f64, 0usize);
    for (&c, &pi) in counts.iter().zip(p) {
        let e = nf * pi;
        if e >= 5.0 {
            bins.push((c as f64, e));
        } else {
            po += c as f64;
            pe += e;
            pooled += 1;
        }
    }
    if pooled > 0 {
        if pe >= 5.0 || bins.is_empty() {
            bins.push((po, pe));
        } else {
            let smallest = (0..bins.len())
                .min_by(|&i, &j| bins[i].1.total_cmp(&bins[j].1))
                .expect("nonempty");
            bins[smallest].0 += po;
            bins[smallest].1 += pe;
        }
    }
    let statistic: f64 = bins
        .iter()
        .map(|&(o, e)| {
            if e > 0.0 {
                (o - e) * (o - e) / e
            } else if o > 0.0 {
                f64::INFINITY
            } else {
                0.0
            }
        })
        .sum();
    let df = bins.len().saturating_sub(1);
    let p_value = if statistic.is_infinite() {
        0.0
    } else if df == 0 {
        1.0
    } else {
        chi_square_sf(statistic, df as f64)
    };
    ChiSquare {
        statistic,
        df,
        p_value,
        pooled_cells: pooled,
    }
}

/// Total variation distance between the empirical law of `counts` and `p`.
pub fn tv_counts(counts: &[u64], p: &[f64]) -> f64 {
    let n: u64 = counts.iter().sum();
    let nf = n as f64;
    0.5 * counts
        .iter()
        .zip(p)
        .map(|(&c, &pi)| (c as f64 / nf - pi).abs())
        .sum::<f64>()
}

/// The TV threshold with false-positive rate at most `alpha` for `n` i.i.d. draws from `p`:
/// `τ = ½ Σ √(p_i(1−p_i)/n) + √(ln(1/α)/(2n))` (the first term bounds `E[TV]`, the second is
/// McDiarmid's deviation, one draw moving TV by at most `1/n`).
pub fn tv_threshold(p: &[f64], n: u64, alpha: f64) -> f64 {
    let nf = n as f64;
    0.5 * p.iter().map(|&v| (v * (1.0 - v) / nf).sqrt()).sum::<f64>()
        + ((1.0 / alpha).ln() / (2.0 * nf)).sqrt()
}

/// Outcome of [`check_sample`].
#[derive(Clone, Copy, Debug)]
pub struct SampleCheck {
    /// The pooled chi-square test.
    pub chi: ChiSquare,
    /// Empirical TV distance.
    pub tv: f64,
    /// The TV threshold.
    pub tv_threshold: f64,
    /// The level each of the two tests ran at.
    pub alpha: f64,
}

impl SampleCheck {
    /// Whether both tests passed.
    pub fn passed(&self) -> bool {
        self.chi.p_value >= self.alpha && self.tv <= self.tv_threshold
    }

    /// Asserts that both tests passed, stating the statistics of the check `name` if not.
    pub fn assert_passed(&self, name: &str) {
        assert!(
            self.passed(),
            "{name}: chi-square {:.1} on {} df (p = {:.2e}), TV {:.5} vs {:.5}",
            self.chi.statistic,
            self.chi.df,
            self.chi.p_value,
            self.tv,
            self.tv_threshold
        );
    }
}

/// Tests `counts` against `p` with the pooled chi-square test and the TV threshold, each at
/// level `alpha / 2`, so that the pair rejects a correct sampler with probability at most
/// `alpha`.
pub fn check_sample(counts: &[u64], p: &[f64], alpha: f64) -> SampleCheck {
    let n: u64 = counts.iter().sum();
    let half = alpha / 2.0;
    SampleCheck {
        chi: chi_square_pooled(counts, p),
        tv: tv_counts(counts, p),
        tv_threshold: tv_threshold(p, n, half),
        alpha: half,
    }
}

// ---------------------------------------------------------------------------------------------
// Chi-square distribution
// ---------------------------------------------------------------------------------------------

/// `ln Γ(x)` for `x > 0` (Lanczos, `g = 7`, 9 terms; relative error near `1e-15`).
pub fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    for (i, &c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    let t = x + G + 0.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The regularised upper incomplete gamma function `Q(s, x) = Γ(s, x) / Γ(s)`: a power series
/// for `x < s + 1` (where `Q` is not small, so `1 − P` loses nothing) and Lentz's continued
/// fraction otherwise (accurate deep into the tail).
pub fn gamma_q(s: f64, x: f64) -> f64 {
    assert!(s > 0.0 && x >= 0.0);
    if x == 0.0 {
        return 1.0;
    }
    let prefactor = (-x + s * x.ln() - ln_gamma(s)).exp();
    if x < s + 1.0 {
        let (mut term, mut sum, mut ap) = (1.0 / s, 1.0 / s, s);
        for _ in 0..100_000 {
            ap += 1.0;
            term *= x / ap;
            sum += term;
            if term.abs() < sum.abs() * 1e-17 {
                break;
            }
        }
        (1.0 - sum * prefactor).max(0.0)
    } else {
        const TINY: f64 = 1e-300;
        let mut b = x + 1.0 - s;
        let mut c = 1.0 / TINY;
        let mut d = 1.0 / b;
        let mut h = d;
        for i in 1..100_000 {
            let an = -(i as f64) * (i as f64 - s);
            b += 2.0;
            d = an * d + b;
            if d.abs() < TINY {
                d = TINY;
            }
            c = b + an / c;
            if c.abs() < TINY {
                c = TINY;
            }
            d = 1.0 / d;
            let delta = d * c;
            h *= delta;
            if (delta - 1.0).abs() < 1e-16 {
                break;
            }
        }
        prefactor * h
    }
}

/// `P(χ²_k ≥ x)`.
pub fn chi_square_sf(x: f64, k: f64) -> f64 {
    gamma_q(0.5 * k, 0.5 * x.max(0.0))
}

/// Whether a chi-square test at level `alpha` on `df` degrees of freedom surely rejects a law
/// whose noncentrality is `lambda = n Σ (p'_i − p_i)² / p_i`: the noncentral statistic has mean
/// `df + λ` and variance `2(df + 2λ)`, and we ask for the mean to clear the rejection quantile by
/// five standard deviations (a miss probability near `3e-7` in the normal approximation).
pub fn chi_square_surely_rejects(lambda: f64, df: usize, alpha: f64) -> bool {
    let k = df as f64;
    k + lambda - 5.0 * (2.0 * (k + 2.0 * lambda)).sqrt() > chi_square_isf(alpha, k)
}

/// The upper `alpha` quantile of `χ²_k` (bisection on [`chi_square_sf`]).
pub fn chi_square_isf(alpha: f64, k: f64) -> f64 {
    let mut hi = k + 10.0;
    while chi_square_sf(hi, k) > alpha {
        hi *= 2.0;
    }
    let (lo, hi) = bisect_tail(|x| chi_square_sf(x, k), alpha, 0.0, hi);
    0.5 * (lo + hi)
}

/// The bracket `(lo, hi)` around the point where a decreasing tail probability `sf` crosses
/// `alpha`, after 200 halvings of `[lo, hi]` (`sf(lo) > alpha ≥ sf(hi)` throughout).
pub fn bisect_tail(sf: impl Fn(f64) -> f64, alpha: f64, mut lo: f64, mut hi: f64) -> (f64, f64) {
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if sf(mid) > alpha {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo, hi)
}

// ---------------------------------------------------------------------------------------------
// Models with owned parameters
// ---------------------------------------------------------------------------------------------

/// A uniform draw from `[lo, hi)`.
pub fn uniform<R: Rng + ?Sized>(rng: &mut R, lo: f64, hi: f64) -> f64 {
    lo + (hi - lo) * unit_f64(rng)
}

/// An Ising graph in compressed adjacency form, owning its arrays.
#[derive(Clone, Debug)]
pub struct GraphData {
    /// Row offsets, `d + 1` entries.
    pub offsets: Vec<u32>,
    /// Neighbour lists.
    pub neighbours: Vec<u32>,
    /// Couplings, parallel to `neighbours`.
    pub couplings: Vec<f32>,
    /// Fields `h_i`.
    pub field: Vec<f32>,
    /// The edges `(i, j, J_ij)` with `i < j`.
    pub edges: Vec<(usize, usize, f32)>,
}

impl GraphData {
    /// From an edge list (each edge once) and the fields.
    pub fn from_edges(edges: &[(usize, usize, f32)], field: &[f32]) -> Self {
        let d = field.len();
        let mut adj: Vec<Vec<(u32, f32)>> = vec![Vec::new(); d];
        let mut norm = Vec::new();
        for &(i, j, c) in edges {
            assert!(i != j && i < d && j < d);
            adj[i].push((j as u32, c));
            adj[j].push((i as u32, c));
            norm.push((i.min(j), i.max(j), c));
        }
        let mut offsets = vec![0u32];
        let (mut neighbours, mut couplings) = (Vec::new(), Vec::new());
        for list in &adj {
            for &(j, c) in list {
                neighbours.push(j);
                couplings.push(c);
            }
            offsets.push(neighbours.len() as u32);
        }
        Self {
            offsets,
            neighbours,
            couplings,
            field: field.to_vec(),
            edges: norm,
        }
    }

    /// An Erdős–Rényi graph: each pair an edge with probability `p_edge`, couplings uniform in
    /// `±coupling`, fields uniform in `±field`.
    pub fn random<R: Rng + ?Sized>(
        d: usize,
        p_edge: f64,
        coupling: f64,
        field: f64,
        rng: &mut R,
    ) -> Self {
        let mut edges = Vec::new();
        for i in 0..d {
            for j in (i + 1)..d {
                if unit_f64(rng) < p_edge {
                    edges.push((i, j, uniform(rng, -coupling, coupling) as f32));
                }
            }
        }
        let h: Vec<f32> = (0..d).map(|_| uniform(rng, -field, field) as f32).collect();
        Self::from_edges(&edges, &h)
    }

    /// The core model borrowing these arrays.
    pub fn model(&self) -> IsingGraph<'_> {
        IsingGraph::new(
            &self.offsets,
            &self.neighbours,
            &self.couplings,
            &self.field,
        )
        .expect("valid graph")
    }

    /// `U` and `∇U` in `f64` straight from the definition.
    pub fn reference(&self, x: &[u8]) -> (f64, Vec<f64>) {
        let edges: Vec<(usize, usize, f64)> = self
            .edges
            .iter()
            .map(|&(i, j, c)| (i, j, f64::from(c)))
            .collect();
        let h: Vec<f64> = self.field.iter().map(|&v| f64::from(v)).collect();
        ising_reference(&edges, &h, x)
    }
}

/// The bonds of a `rows × cols` lattice, each once, as documented for
/// [`IsingLattice`]: an axis wraps when `periodic` and its length is at least 3.
pub fn lattice_bonds(rows: usize, cols: usize, periodic: bool) -> Vec<(usize, usize)> {
    let mut bonds = Vec::new();
    for r in 0..rows {
        for c in 0..cols {
            let i = r * cols + c;
            if c + 1 < cols {
                bonds.push((i, i + 1));
            } else if periodic && cols >= 3 {
                bonds.push((r * cols, i));
            }
            if r + 1 < rows {
                bonds.push((i, i + cols));
            } else if periodic && rows >= 3 {
                bonds.push((c, i));
            }
        }
    }
    bonds
}

/// Ising `U(s) = Σ_edges J_ij s_i s_j + Σ h_i s_i` and `∂U/∂x_i = 2(Σ_j J_ij s_j + h_i)` in `f64`.
pub fn ising_reference(edges: &[(usize, usize, f64)], field: &[f64], x: &[u8]) -> (f64, Vec<f64>) {
    let s: Vec<f64> = x.iter().map(|&v| 2.0 * f64::from(v) - 1.0).collect();
    let mut u: f64 = s.iter().zip(field).map(|(a, b)| a * b).sum();
    let mut local = vec![0.0; x.len()];
    for &(i, j, c) in edges {
        u += c * s[i] * s[j];
        local[i] += c * s[j];
        local[j] += c * s[i];
    }
    let g = local
        .iter()
        .zip(field)
        .map(|(l, h)| 2.0 * (l + h))
        .collect();
    (u, g)
}

/// A dense binary quadratic model's parameters.
#[derive(Clone, Debug)]
pub struct QuadraticData {
    /// `W`, row-major `d × d`.
    pub w: Vec<f32>,
    /// `b`.
    pub b: Vec<f32>,
}

impl QuadraticData {
    /// Asymmetric `W` with entries (diagonal included) uniform in `±w`, `b` uniform in `±b`.
    pub fn random<R: Rng + ?Sized>(d: usize, w: f64, b: f64, rng: &mut R) -> Self {
        Self {
            w: (0..d * d).map(|_| uniform(rng, -w, w) as f32).collect(),
            b: (0..d).map(|_| uniform(rng, -b, b) as f32).collect(),
        }
    }

    /// A fixed `d`-dimensional model with patterned parameters: `W_k = ((13k mod 7) − 3)·0.15`
    /// (row-major index `k`), `b_i = (i − 2.5)·0.2`.
    pub fn patterned(d: usize) -> Self {
        Self {
            w: (0..d * d)
                .map(|v| ((v * 13 % 7) as f32 - 3.0) * 0.15)
                .collect(),
            b: (0..d).map(|v| (v as f32 - 2.5) * 0.2).collect(),
        }
    }

    /// The dimension.
    pub fn dim(&self) -> usize {
        self.b.len()
    }

    /// A cache of the size [`BinaryQuadratic`](langevin_core::models::BinaryQuadratic) needs.
    pub fn cache(&self) -> Vec<f64> {
        vec![0.0; 2 * self.dim()]
    }

    /// `U = xᵀWx + bᵀx` and `∇U = (W + Wᵀ)x + b` in `f64`.
    pub fn reference(&self, x: &[u8]) -> (f64, Vec<f64>) {
        let d = self.dim();
        let xf: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
        let mut u = 0.0;
        let mut g: Vec<f64> = self.b.iter().map(|&v| f64::from(v)).collect();
        for i in 0..d {
            u += f64::from(self.b[i]) * xf[i];
            for j in 0..d {
                let w = f64::from(self.w[i * d + j]);
                u += w * xf[i] * xf[j];
                g[i] += w * xf[j];
                g[j] += w * xf[i];
            }
        }
        (u, g)
    }
}

/// An RBM's parameters.
#[derive(Clone, Debug)]
pub struct RbmData {
    /// `W`, row-major `H × V`.
    pub w: Vec<f32>,
    /// Visible biases `b`.
    pub b: Vec<f32>,
    /// Hidden biases `c`.
    pub c: Vec<f32>,
}

impl RbmData {
    /// Entries uniform in `±w`, `±b`, `±c`.
    pub fn random<R: Rng + ?Sized>(
        v: usize,
        h: usize,
        w: f64,
        b: f64,
        c: f64,
        rng: &mut R,
    ) -> Self {
        Self {
            w: (0..v * h).map(|_| uniform(rng, -w, w) as f32).collect(),
            b: (0..v).map(|_| uniform(rng, -b, b) as f32).collect(),
            c: (0..h).map(|_| uniform(rng, -c, c) as f32).collect(),
        }
    }

    /// A fixed 6 × 3 RBM with patterned weights `((k·5 mod 9) − 4)·0.3`, biases
    /// `(k − 3)·0.1` and `c = (0.2, −0.4, 0.1)`.
    pub fn patterned() -> Self {
        let (v, h) = (6, 3);
        Self {
            w: (0..v * h)
                .map(|k| ((k * 5 % 9) as f32 - 4.0) * 0.3)
                .collect(),
            b: (0..v).map(|k| (k as f32 - 3.0) * 0.1).collect(),
            c: vec![0.2, -0.4, 0.1],
        }
    }

    /// A cache of the size [`Rbm`](langevin_core::models::Rbm) needs.
    pub fn cache(&self) -> Vec<f64> {
        vec![0.0; 2 * self.c.len()]
    }

    /// The hidden pre-activations `Wx + c` in `f64`.
    pub fn pre_activations(&self, x: &[u8]) -> Vec<f64> {
        let v = self.b.len();
        self.c
            .iter()
            .enumerate()
            .map(|(j, &cj)| {
                f64::from(cj)
                    + (0..v)
                        .map(|i| f64::from(self.w[j * v + i]) * f64::from(x[i]))
                        .sum::<f64>()
            })
            .collect()
    }

    /// `U = Σ_j softplus(p_j) + bᵀx` and `∇U = Wᵀσ(p) + b` in `f64`.
    pub fn reference(&self, x: &[u8]) -> (f64, Vec<f64>) {
        let v = self.b.len();
        let pre = self.pre_activations(x);
        let mut u: f64 = (0..v).map(|i| f64::from(self.b[i]) * f64::from(x[i])).sum();
        let mut g: Vec<f64> = self.b.iter().map(|&b| f64::from(b)).collect();
        for (j, &p) in pre.iter().enumerate() {
            u += softplus(p);
            let s = sigmoid(p);
            for (gi, &w) in g.iter_mut().zip(&self.w[j * v..(j + 1) * v]) {
                *gi += f64::from(w) * s;
            }
        }
        (u, g)
    }
}

// ---------------------------------------------------------------------------------------------
// Value stability
// ---------------------------------------------------------------------------------------------

/// FNV-1a 64-bit offset basis.
pub const FNV_OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
/// FNV-1a 64-bit prime.
pub const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// Continues an FNV-1a 64-bit hash over `bytes`.
pub fn fnv1a_64(mut hash: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(FNV_PRIME);
    }
    hash
}

/// The value-stability hash of a binary kernel: `steps` steps on the 8×8 periodic lattice Ising
/// model (coupling 0.3, field 0.1) from the all-zero state, with
/// `Xoshiro256PlusPlus::seed_from_u64(seed)`. Starting from [`FNV_OFFSET_BASIS`], after every step
/// the 64 state bytes (each 0 or 1, row-major) and then the 8 little-endian bytes of
/// `chain.log_density().to_bits()` are fed to FNV-1a 64.
///
/// # Panics
///
/// If a step fails (it cannot on this model).
pub fn golden_hash<K: Kernel<Binary>>(kernel: &mut K, seed: u64, steps: usize) -> u64 {
    let mut model =
        IsingLattice::<ConstDims<8, 8>>::new(0.3, 0.1, true).expect("valid lattice parameters");
    let mut storage = ChainStorage::<64>::new([0; 64]);
    let mut chain = BinaryChain::new(storage.buffers(), &mut model).expect("valid start");
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut hash = FNV_OFFSET_BASIS;
    for _ in 0..steps {
        kernel.step(&mut model, &mut chain, &mut rng).expect("step");
        hash = fnv1a_64(hash, chain.state());
        hash = fnv1a_64(hash, &chain.log_density().to_bits().to_le_bytes());
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gamma_q_matches_closed_form_for_even_degrees() {
        // For integer s, Q(s, y) = e^{−y} Σ_{k<s} y^k / k!.
        for s in 1..=200u32 {
            for &y in &[0.1, 1.0, 5.0, 30.0, 100.0, 250.0, 400.0] {
                let mut term = 1.0f64;
                let mut sum = 0.0f64;
                for k in 0..s {
                    if k > 0 {
                        term *= y / f64::from(k);
                    }
                    sum += term;
                }
                let exact = (-y).exp() * sum;
                let got = gamma_q(f64::from(s), y);
                assert!(
                    (got - exact).abs() <= 1e-12 * exact + 1e-300,
                    "s={s} y={y}: {got} vs {exact}"
                );
            }
        }
    }

    #[test]
    fn ln_gamma_matches_factorials() {
        let mut lf = 0.0f64;
        for n in 1..=170u32 {
            // lf = ln((n−1)!)
            let got = ln_gamma(f64::from(n));
            assert!((got - lf).abs() <= 1e-13 * lf.abs().max(1.0), "n={n}");
            lf += f64::from(n).ln();
        }
        let half = ln_gamma(0.5);
        assert!((half - std::f64::consts::PI.sqrt().ln()).abs() < 1e-14);
    }

    #[test]
    fn chi_square_quantiles_match_tables() {
        // Upper 1e-6 quantiles from 30-digit arithmetic (mpmath): df 1 → 23.928127, df 10 →
        // 46.863047.
        assert!((chi_square_isf(1e-6, 1.0) - 23.928_127).abs() < 1e-5);
        assert!((chi_square_isf(1e-6, 10.0) - 46.863_047).abs() < 1e-5);
        assert!((chi_square_isf(1e-6, 100.0) - 182.126_777).abs() < 1e-5);
        assert!((chi_square_isf(1e-6, 1023.0) - 1_252.581_285).abs() < 1e-5);
        // df = 2: Q = e^{−x/2} exactly.
        assert!((chi_square_isf(1e-6, 2.0) - 2.0 * 1e6f64.ln()).abs() < 1e-9);
    }

    #[test]
    fn lattice_bonds_follow_the_wrapping_rule() {
        assert_eq!(lattice_bonds(1, 1, true).len(), 0);
        assert_eq!(lattice_bonds(2, 2, true).len(), 4);
        assert_eq!(lattice_bonds(3, 3, true).len(), 18);
        assert_eq!(lattice_bonds(3, 3, false).len(), 12);
        assert_eq!(lattice_bonds(1, 3, true).len(), 3);
        assert_eq!(lattice_bonds(5, 5, true).len(), 50);
    }

    #[test]
    fn fnv_matches_reference_vectors() {
        // Published FNV-1a 64 test vectors.
        assert_eq!(fnv1a_64(FNV_OFFSET_BASIS, b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a_64(FNV_OFFSET_BASIS, b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a_64(FNV_OFFSET_BASIS, b"foobar"), 0x8594_4171_f739_67e8);
    }
}
