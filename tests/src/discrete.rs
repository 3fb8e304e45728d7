//! Helpers of the discrete-sampler tests on every domain: enumeration of small label spaces
//! (through [`StateSpace`]), Metropolis–Hastings matrices from a `log q`, the sampling-path
//! comparison at level [`ALPHA`], a Geyer initial-monotone-sequence ESS, and small models.

use crate::harness::{LabelBox, StateSpace};
use crate::{ChainBox, chi_square_pooled, chi_square_sf, normalise_log, tv_counts, tv_threshold};
use langevin_core::batch::{BatchLangevin, BatchTarget, ChainBatch, RowProposal};
use langevin_core::ordinal::OrdinalTarget;
use langevin_core::random::unit_f64;
use langevin_core::second_order::Transition;
use langevin_core::{Chain, Domain, StepReport};
use langevin_std::models::Potts;
use langevin_std::run::BatchVecs;
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::convert::Infallible;

/// Per-test false-positive rate of every statistical assertion.
pub const ALPHA: f64 = 1e-6;

/// All states of `{0..s-1}^d`, coordinate 0 fastest.
pub fn enumerate(d: usize, s: usize) -> Vec<Vec<u16>> {
    StateSpace { dim: d, levels: s }.all()
}

/// The index of `x` in [`enumerate`]'s order.
pub fn index_of(x: &[u16], s: usize) -> usize {
    StateSpace {
        dim: x.len(),
        levels: s,
    }
    .index(x)
}

/// All binary states of dimension `d`, coordinate 0 fastest.
pub fn enumerate_binary(d: usize) -> Vec<Vec<u8>> {
    (0..1usize << d).map(|k| crate::state(k, d)).collect()
}

/// The index of a binary state.
pub fn index_of_binary(x: &[u8]) -> usize {
    crate::index_of(x)
}

/// Normalised probabilities from log-weights.
pub fn normalise(log_w: &[f64]) -> Vec<f64> {
    normalise_log(log_w)
}

/// The Metropolis–Hastings transition matrix (row-major `K × K`) for a proposal with
/// `log_q(i, j) = log q(state j | state i)`.
pub fn mh_matrix(log_pi: &[f64], log_q: impl Fn(usize, usize) -> f64) -> Vec<f64> {
    stochastic_matrix(log_pi.len(), |i, j| {
        let fwd = log_q(i, j);
        if fwd == f64::NEG_INFINITY {
            return 0.0;
        }
        let rev = log_q(j, i);
        let la = log_pi[j] - log_pi[i] + rev - fwd;
        fwd.exp() * la.exp().min(1.0)
    })
}

/// The row-major `k × k` transition matrix whose move from state `i` to `j ≠ i` has
/// probability `move_prob(i, j)` (asked row by row, `j` ascending) and whose rows keep the rest
/// of their mass on the diagonal.
pub fn stochastic_matrix(k: usize, mut move_prob: impl FnMut(usize, usize) -> f64) -> Vec<f64> {
    let mut p = vec![0.0; k * k];
    for i in 0..k {
        let mut off = 0.0;
        for j in (0..k).filter(|&j| j != i) {
            let v = move_prob(i, j);
            p[i * k + j] = v;
            off += v;
        }
        p[i * k + i] = 1.0 - off;
    }
    p
}

/// Checks that `p` is stochastic with non-negative entries, leaves `pi` invariant and, if
/// `reversible`, satisfies detailed balance, all to `tol`; returns the largest violation of
/// `πP = π`.
pub fn assert_invariant(pi: &[f64], p: &[f64], tol: f64, reversible: bool) -> f64 {
    let k = pi.len();
    for i in 0..k {
        let row = &p[i * k..(i + 1) * k];
        let s: f64 = row.iter().sum();
        assert!((s - 1.0).abs() < tol, "row {i} sums to {s}");
        assert!(row.iter().all(|&v| v >= -tol), "negative entry in row {i}");
    }
    let mut worst = 0.0f64;
    for j in 0..k {
        let v: f64 = (0..k).map(|i| pi[i] * p[i * k + j]).sum();
        worst = worst.max((v - pi[j]).abs());
    }
    assert!(worst < tol, "πP differs from π by {worst}");
    if reversible {
        for i in 0..k {
            for j in 0..k {
                let a = pi[i] * p[i * k + j];
                let b = pi[j] * p[j * k + i];
                assert!(
                    (a - b).abs() < tol,
                    "detailed balance fails at ({i}, {j}): {a} vs {b}"
                );
            }
        }
    }
    worst
}

/// Detailed balance of a matrix of log-fluxes `f[i·K + j] = ln(π_i P_ij)`: asserts
/// `|π_i P_ij − π_j P_ji| < 1e-10·max(π_i P_ij, π_j P_ji)` for every pair (fluxes rescaled by
/// their largest entry) and returns the largest relative difference.
pub fn log_detailed_balance(name: &str, f: &[f64], k: usize) -> f64 {
    let m = f.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut worst = 0.0f64;
    for i in 0..k {
        for j in 0..k {
            if i == j {
                continue;
            }
            // The reverse conditional of x → y is the forward one of y → x.
            let (lr, lf) = (f[i * k + j], f[j * k + i]);
            let diff = ((lr - m).exp() - (lf - m).exp()).abs();
            let scale = (lr - m).exp().max((lf - m).exp());
            let rel = if scale > 0.0 { diff / scale } else { 0.0 };
            worst = worst.max(rel);
            assert!(
                rel < 1e-10,
                "{name}: detailed balance off by {rel:e} at ({i}, {j})"
            );
        }
    }
    worst
}

/// `−½ |u − A x|²` for a row-major `d × d` factor `A`.
pub fn log_gauss<V: Copy + Into<f64>>(factor: &[f32], x: &[V], u: &[f64]) -> f64 {
    let d = x.len();
    -0.5 * (0..d)
        .map(|i| {
            let ax: f64 = (0..d)
                .map(|j| f64::from(factor[i * d + j]) * x[j].into())
                .sum();
            (u[i] - ax).powi(2)
        })
        .sum::<f64>()
}

/// One entry of the joint flow of a second-order kernel at a fixed auxiliary `u`, from its
/// transition `t` between `x` and `y` (log-densities `log_pi = (U(x), U(y))`): checks the
/// Gaussian ratio against [`log_gauss`] and returns `log π(x) N(u; A x) Q(y|x,u) min(1, r)`,
/// unnormalised in `π`.
pub fn joint_log_flow<V: Copy + Into<f64>>(
    factor: &[f32],
    (x, y): (&[V], &[V]),
    u: &[f64],
    log_pi: (f64, f64),
    t: &Transition,
) -> f64 {
    let gauss = log_gauss(factor, y, u) - log_gauss(factor, x, u);
    assert!((t.log_gauss_ratio - gauss).abs() <= 1e-10 * (1.0 + gauss.abs()));
    let log_r = log_pi.1 - log_pi.0 + t.log_gauss_ratio + t.log_q_reverse - t.log_q_forward;
    log_pi.0 + log_gauss(factor, x, u) + t.log_q_forward + log_r.min(0.0)
}

/// The joint log-flows `f[x][y]` ([`joint_log_flow`]) of a second-order kernel at a fixed `u`
/// over every ordered pair of the enumerated `states` (log-densities `log_pi`), row-major
/// `k × k` (gradients `grads`). The transition `x → y` comes from `transition(x, ∇x, y, ∇y)`;
/// its `log Q(y|x,u)` must match `reference(x, ∇x, y)` to a relative `1e-10`, and every row of
/// `Q` must sum to one within `1e-12`. Returns the flows and the worst relative `log Q` error.
pub fn fixed_u_log_flows<V: Copy + Into<f64>>(
    name: &str,
    (states, log_pi, grads): (&[Vec<V>], &[f64], &[Vec<f32>]),
    (factor, u): (&[f32], &[f64]),
    mut transition: impl FnMut(&[V], &[f32], &[V], &[f32]) -> Transition,
    mut reference: impl FnMut(&[V], &[f32], &[V]) -> f64,
) -> (Vec<f64>, f64) {
    let k = states.len();
    let mut f = vec![f64::NEG_INFINITY; k * k];
    let mut worst = 0.0f64;
    for (i, x) in states.iter().enumerate() {
        let mut total = 0.0;
        for (j, y) in states.iter().enumerate() {
            let t = transition(x, &grads[i], y, &grads[j]);
            let reference = reference(x, &grads[i], y);
            let err = (t.log_q_forward - reference).abs() / (1.0 + reference.abs());
            worst = worst.max(err);
            assert!(
                err <= 1e-10,
                "{name}: log Q {} vs reference {reference}",
                t.log_q_forward
            );
            total += t.log_q_forward.exp();
            f[i * k + j] = joint_log_flow(factor, (x, y), u, (log_pi[i], log_pi[j]), &t);
        }
        assert!((total - 1.0).abs() < 1e-12, "{name}: Σ_y Q = {total}");
    }
    (f, worst)
}

/// Takes 2000 steps of `kernel` from `chain` (stream seeded with 13) and checks that it
/// accepts every proposal up to rounding: more than 1000 steps propose a move and every move's
/// `|log r|` stays below `1e-3`.
pub fn assert_accepts_every_move<D, K, T>(kernel: &mut K, target: &mut T, chain: &mut Chain<'_, D>)
where
    D: Domain,
    K: langevin_core::Kernel<D>,
    T: langevin_core::Eval<D>,
    T::Error: std::fmt::Debug,
{
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(13);
    let (mut moves, mut worst, mut accepted) = (0, 0.0f64, 0);
    for _ in 0..2000 {
        let r = kernel.step(target, chain, &mut rng).unwrap();
        if r.proposed_flips > 0 {
            moves += 1;
            worst = worst.max(r.log_accept_ratio.abs());
            accepted += usize::from(r.accepted);
        }
    }
    eprintln!("{moves} moves, {accepted} accepted, worst |log r| = {worst:e}");
    assert!(moves > 1000, "only {moves} moves");
    assert!(worst < 1e-3, "worst |log r| = {worst}");
}

/// `n` independent `N(0, scale²)` draws from `rng`.
pub fn normals(rng: &mut Xoshiro256PlusPlus, n: usize, scale: f64) -> Vec<f64> {
    let mut v = vec![0.0; n];
    langevin_core::random::fill_normal(rng, &mut v);
    v.iter().map(|x| x * scale).collect()
}

/// A random symmetric `d × d` matrix, row-major: `(G + Gᵀ)/2` for `G` with `N(0, scale²)`
/// entries from a stream seeded with `seed`.
pub fn random_symmetric(d: usize, scale: f64, seed: u64) -> Vec<f64> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let g = normals(&mut rng, d * d, scale);
    let mut w = vec![0.0; d * d];
    for i in 0..d {
        for j in 0..d {
            w[i * d + j] = 0.5 * (g[i * d + j] + g[j * d + i]);
        }
    }
    w
}

/// The `(step, balance)` pairs the second-order exactness tests run AB-trace with.
pub const SECOND_ORDER_STEPS: [(f64, f64); 4] = [(0.5, 0.5), (3.0, 1.0), (0.1, 0.3), (50.0, 0.8)];

/// The diagonals of the second-order exactness tests for a Hessian `h` (`d × d`), SDPs solved
/// to a relative gap of `1e-6`: `[trace, shift, wrong, wrong_trace]`, AB-trace's and AB-shift's
/// (margin `1e-3`) diagonals for `h`, a wrong `W` (random symmetric, entries of size 0.7, seed
/// 99) and AB-trace's diagonal for it.
pub fn second_order_diagonals(h: &[f64], d: usize) -> [Vec<f64>; 4] {
    use langevin_std::ab2::{shift_diagonal, trace_diagonal};
    let sdp = langevin_std::sdp::SdpOptions::with_rel_gap(1e-6);
    let wrong = random_symmetric(d, 0.7, 99);
    let (wrong_trace, _) = trace_diagonal(&wrong, d, &sdp).unwrap();
    [
        trace_diagonal(h, d, &sdp).unwrap().0,
        shift_diagonal(h, d, 1e-3).unwrap(),
        wrong,
        wrong_trace,
    ]
}

/// `log Q(y | x, u)` of the binary second-order kernel straight from its definition, all in
/// `f64`, with `W_ij` read through `w(i, j)`.
#[allow(clippy::too_many_arguments)]
pub fn second_order_log_q(
    w: impl Fn(usize, usize) -> f64,
    diag: &[f32],
    factor: &[f32],
    (a, b): (f64, f64),
    x: &[u8],
    g: &[f32],
    u: &[f64],
    y: &[u8],
) -> f64 {
    let d = x.len();
    (0..d)
        .map(|i| {
            let wx: f64 = (0..d).map(|j| w(i, j) * f64::from(x[j])).sum();
            let atu: f64 = (0..d).map(|k| f64::from(factor[k * d + i]) * u[k]).sum();
            let c = b * f64::from(g[i]) - b * wx + f64::from(x[i]) / a + atu;
            let l = c - (b * f64::from(diag[i]) / 2.0 + 1.0 / (2.0 * a));
            f64::from(y[i]) * l - crate::softplus(l)
        })
        .sum()
}

/// `A·B` for square row-major matrices.
pub fn mat_mul(a: &[f64], b: &[f64], k: usize) -> Vec<f64> {
    let mut c = vec![0.0; k * k];
    for i in 0..k {
        for l in 0..k {
            let ail = a[i * k + l];
            if ail == 0.0 {
                continue;
            }
            for j in 0..k {
                c[i * k + j] += ail * b[l * k + j];
            }
        }
    }
    c
}

/// One exact draw from `p` (inverse CDF on a 53-bit uniform).
pub fn draw<R: Rng + ?Sized>(p: &[f64], rng: &mut R) -> usize {
    let u = unit_f64(rng);
    let mut c = 0.0;
    for (i, &pi) in p.iter().enumerate() {
        c += pi;
        if u < c {
            return i;
        }
    }
    p.len() - 1
}

/// The upper tail `P(χ²_k > x)`.
pub fn chi2_sf(x: f64, k: f64) -> f64 {
    chi_square_sf(x, k)
}

/// The result of comparing counts with probabilities.
#[derive(Debug)]
pub struct Comparison {
    /// Pooled chi-square statistic.
    pub chi2: f64,
    /// Its degrees of freedom.
    pub df: usize,
    /// Its p-value.
    pub p_value: f64,
    /// Total variation distance between the empirical and the expected law.
    pub tv: f64,
    /// The TV threshold with false-positive rate `ALPHA`.
    pub tv_threshold: f64,
}

/// The pooled chi-square test ([`chi_square_pooled`]) and the TV test with threshold
/// [`tv_threshold`], each at level [`ALPHA`].
pub fn compare(counts: &[u64], p: &[f64]) -> Comparison {
    let n: u64 = counts.iter().sum();
    let chi = chi_square_pooled(counts, p);
    Comparison {
        chi2: chi.statistic,
        df: chi.df,
        p_value: chi.p_value,
        tv: tv_counts(counts, p),
        tv_threshold: tv_threshold(p, n, ALPHA),
    }
}

/// Asserts both statistical tests pass, naming the case.
pub fn assert_matches(name: &str, counts: &[u64], p: &[f64]) {
    let c = compare(counts, p);
    assert!(
        c.p_value > ALPHA,
        "{name}: chi-square {:.2} on {} df, p = {:.3e}",
        c.chi2,
        c.df,
        c.p_value
    );
    assert!(
        c.tv < c.tv_threshold,
        "{name}: TV {:.5} above {:.5}",
        c.tv,
        c.tv_threshold
    );
}

/// Effective sample size of one series by Geyer's initial monotone sequence: autocovariances
/// `γ_t` (divisor `n`) are summed in pairs `Γ_m = γ_{2m} + γ_{2m+1}` while positive, each pair
/// capped by the previous one; `τ = −1 + 2 Σ Γ_m / γ_0`, `ESS = n / τ`.
pub fn ess(series: &[f64]) -> f64 {
    let n = series.len();
    if n < 4 {
        return n as f64;
    }
    let mean = series.iter().sum::<f64>() / n as f64;
    let c: Vec<f64> = series.iter().map(|v| v - mean).collect();
    let gamma = |t: usize| {
        c[..n - t]
            .iter()
            .zip(&c[t..])
            .map(|(a, b)| a * b)
            .sum::<f64>()
            / n as f64
    };
    let g0 = gamma(0);
    if g0 <= 0.0 {
        return n as f64;
    }
    let mut sum = 0.0;
    let mut prev = f64::INFINITY;
    let mut m = 0;
    while 2 * m + 1 < n {
        let pair = gamma(2 * m) + gamma(2 * m + 1);
        if pair <= 0.0 {
            break;
        }
        let pair = pair.min(prev);
        sum += pair;
        prev = pair;
        m += 1;
    }
    let tau = (-1.0 + 2.0 * sum / g0).max(1.0 / n as f64);
    n as f64 / tau
}

/// A non-quadratic ordinal model: `U(x) = Σ θ_i x_i − ½κ Σ (x_i − c)² + γ sin(x_0 + x_1)`.
#[derive(Clone, Debug)]
pub struct Wavy {
    /// The linear coefficients `θ`; their number is the dimension.
    pub theta: Vec<f64>,
    /// The number of values per coordinate.
    pub s: usize,
}

impl Wavy {
    /// The three-coordinate model `θ = (0.3, −0.2, 0.5)` over `s` values.
    pub fn three(s: usize) -> Self {
        Self {
            theta: vec![0.3, -0.2, 0.5],
            s,
        }
    }
}

impl OrdinalTarget for Wavy {
    type Error = Infallible;
    fn dim(&self) -> usize {
        self.theta.len()
    }
    fn states(&self) -> usize {
        self.s
    }
    fn log_density_and_grad(&mut self, x: &[u16], grad: &mut [f32]) -> Result<f64, Infallible> {
        let c = (self.s - 1) as f64 / 2.0;
        let (kappa, gamma) = (0.4, 1.3);
        let phase = f64::from(x[0]) + f64::from(x[1]);
        let mut u = gamma * phase.sin();
        for (i, (g, &v)) in grad.iter_mut().zip(x).enumerate() {
            let r = f64::from(v) - c;
            u += self.theta[i] * f64::from(v) - 0.5 * kappa * r * r;
            let mut gi = self.theta[i] - kappa * r;
            if i < 2 {
                gi += gamma * phase.cos();
            }
            *g = gi as f32;
        }
        Ok(u)
    }
}

/// Independent binary coordinates: `U(x) = Σ θ_i x_i` with `θ` the entries.
#[derive(Clone, Debug)]
pub struct Independent(pub Vec<f32>);

impl langevin_core::BinaryTarget for Independent {
    type Error = Infallible;
    fn dim(&self) -> usize {
        self.0.len()
    }
    fn log_density_and_grad(&mut self, x: &[u8], grad: &mut [f32]) -> Result<f64, Infallible> {
        grad.copy_from_slice(&self.0);
        Ok(x.iter()
            .zip(&self.0)
            .map(|(&xi, &t)| f64::from(xi) * f64::from(t))
            .sum())
    }
}

/// A small frustrated Potts model with an uneven field.
pub fn small_potts(n: usize, s: usize) -> Potts {
    let mut edges = Vec::new();
    for i in 0..n {
        edges.push((i, (i + 1) % n, if i % 2 == 0 { 0.9 } else { -0.6 }));
    }
    if n > 3 {
        edges.push((0, 2, 0.4));
    }
    let field = (0..n * s)
        .map(|v| ((v * 7) % 5) as f64 * 0.2 - 0.4)
        .collect();
    Potts::new(s, n, &edges, field).unwrap()
}

/// The exact-start protocol: `n` times, draw `x0 ~ π`, let `run` apply the kernel `k` times
/// from state index `x0` and return the final state's index; returns the counts.
pub fn exact_start_counts<R: Rng>(
    pi: &[f64],
    n: usize,
    rng: &mut R,
    mut run: impl FnMut(usize, &mut R) -> usize,
) -> Vec<u64> {
    let mut counts = vec![0u64; pi.len()];
    for _ in 0..n {
        let x0 = draw(pi, rng);
        counts[run(x0, rng)] += 1;
    }
    counts
}

/// The exact-start check at `k = 1` and `k = 10` steps (see [`exact_start_counts`]):
/// `run(x0, k, rng)` puts the chain at state index `x0`, applies the kernel `k` times and returns
/// the final state's index; both laws must match `pi` ([`assert_matches`]).
pub fn check_exact_start<R: Rng>(
    name: &str,
    pi: &[f64],
    n: usize,
    rng: &mut R,
    mut run: impl FnMut(usize, usize, &mut R) -> usize,
) {
    for k in [1usize, 10] {
        let counts = exact_start_counts(pi, n, rng, |x0, rng| run(x0, k, rng));
        assert_matches(&format!("{name}, k = {k}"), &counts, pi);
    }
}

/// One run of the batched exact-start protocol: a batch of `target`'s chains started at `x`
/// (chain after chain, `dim` values each), one stream per chain seeded in turn from `master`,
/// `steps` steps of `kernel`; `visit` sees each chain's final state.
pub fn run_batch<D, P, T, const ADJUSTED: bool>(
    kernel: &BatchLangevin<P, ADJUSTED>,
    target: &mut T,
    (x, dim): (Vec<D::Value>, usize),
    master: &mut Xoshiro256PlusPlus,
    steps: usize,
    mut visit: impl FnMut(&[D::Value]),
) where
    D: Domain,
    P: RowProposal<D>,
    T: BatchTarget<D>,
{
    let n = target.chains();
    let mut vecs = BatchVecs::<D>::new(x, dim);
    let mut batch = ChainBatch::new(vecs.buffers(), target).unwrap();
    let mut rngs: Vec<Xoshiro256PlusPlus> = (0..n)
        .map(|_| Xoshiro256PlusPlus::seed_from_u64(master.next_u64()))
        .collect();
    let mut reports = vec![StepReport::default(); n];
    for _ in 0..steps {
        kernel
            .step(target, &mut batch, &mut rngs, &mut reports)
            .unwrap();
    }
    for c in 0..n {
        visit(batch.state(c));
    }
}

/// `U` and the gradient (of `grad_len` entries) at every state, from `eval(x, grad)`.
pub fn tabulate(
    states: &[Vec<u16>],
    grad_len: usize,
    mut eval: impl FnMut(&[u16], &mut [f32]) -> f64,
) -> (Vec<f64>, Vec<Vec<f32>>) {
    states
        .iter()
        .map(|x| {
            let mut g = vec![0.0f32; grad_len];
            let u = eval(x, &mut g);
            (u, g)
        })
        .unzip()
}

/// `U` and `∇U` of an ordinal target at every state.
pub fn tabulate_ordinal<T: OrdinalTarget>(
    t: &mut T,
    states: &[Vec<u16>],
) -> (Vec<f64>, Vec<Vec<f32>>) {
    let d = t.dim();
    tabulate(states, d, |x, g| t.log_density_and_grad(x, g).unwrap())
}

/// An ordinal target enumerated: its states, `U` and `∇U` at each, and `π`.
#[allow(clippy::type_complexity)]
pub fn ordinal_law<T: OrdinalTarget>(
    t: &mut T,
) -> (Vec<Vec<u16>>, Vec<f64>, Vec<Vec<f32>>, Vec<f64>) {
    let states = enumerate(t.dim(), t.states());
    let (log_pi, grads) = tabulate_ordinal(t, &states);
    let pi = normalise(&log_pi);
    (states, log_pi, grads, pi)
}

/// `U` and the one-hot gradient of a categorical target at every state.
pub fn tabulate_categorical<T: langevin_core::categorical::CategoricalTarget>(
    t: &mut T,
    states: &[Vec<u16>],
) -> (Vec<f64>, Vec<Vec<f32>>) {
    let g = t.dim() * t.states();
    tabulate(states, g, |x, grad| {
        t.log_density_and_grad(x, grad).unwrap()
    })
}

/// Owned buffers for one label chain.
pub type LabelBuf = LabelBox;

/// Owned buffers for one binary chain.
pub type BinBuf = ChainBox;

/// `U` of a binary target at every state of [`enumerate_binary`].
pub fn tabulate_binary_u<T: langevin_core::BinaryTarget>(t: &mut T) -> (Vec<Vec<u8>>, Vec<f64>) {
    let (states, log_pi, _) = tabulate_binary(t);
    (states, log_pi)
}

/// The states of [`enumerate_binary`] of a binary target, with `U` and `∇U` at each.
#[allow(clippy::type_complexity)]
pub fn tabulate_binary<T: langevin_core::BinaryTarget>(
    t: &mut T,
) -> (Vec<Vec<u8>>, Vec<f64>, Vec<Vec<f32>>) {
    let d = t.dim();
    let states = enumerate_binary(d);
    let (log_pi, grads) = states
        .iter()
        .map(|x| {
            let mut g = vec![0.0f32; d];
            let u = t.log_density_and_grad(x, &mut g).unwrap();
            (u, g)
        })
        .unzip();
    (states, log_pi, grads)
}

/// Steps `tuner` on `chain` until `frozen(tuner)` holds: a tuner's burn-in, run to its end.
pub fn tune_until_frozen<D, K, T, R>(
    tuner: &mut K,
    frozen: impl Fn(&K) -> bool,
    target: &mut T,
    chain: &mut Chain<'_, D>,
    rng: &mut R,
) where
    D: Domain,
    K: langevin_core::Kernel<D>,
    T: langevin_core::Eval<D> + ?Sized,
    R: Rng + ?Sized,
{
    while !frozen(tuner) {
        langevin_core::Kernel::step(tuner, target, chain, rng).unwrap();
    }
}

/// Exact-start sampling-path test of a binary kernel (`k ∈ {1, 10}`, `n` repeats).
pub fn check_binary_kernel<T, K>(name: &str, model: &mut T, kernel: &mut K, n: usize, seed: u64)
where
    T: langevin_core::BinaryTarget,
    K: langevin_core::Kernel<langevin_core::Binary>,
{
    use rand_core::SeedableRng;
    let (states, log_pi) = tabulate_binary_u(model);
    let pi = normalise(&log_pi);
    let mut buf = BinBuf::new(&states[0]);
    let mut chain = langevin_core::binary::BinaryChain::new(buf.buffers(), model).unwrap();
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
    check_exact_start(name, &pi, n, &mut rng, |x0, k, rng| {
        chain.reset(&states[x0], model).unwrap();
        for _ in 0..k {
            kernel.step(model, &mut chain, rng).unwrap();
        }
        index_of_binary(chain.state())
    });
}

/// Exact-start sampling-path test of a label kernel of domain `D` (`k ∈ {1, 10}`, `n`
/// repeats): `pi` is the law over `states`, the chain starts at `states[0]`.
pub fn check_label_kernel<D, T, K>(
    name: &str,
    model: &mut T,
    kernel: &mut K,
    (states, pi): (&[Vec<u16>], &[f64]),
    n: usize,
    seed: u64,
) where
    D: langevin_core::Domain<Value = u16>,
    T: langevin_core::Eval<D>,
    K: langevin_core::Kernel<D>,
{
    use rand_core::SeedableRng;
    let mut buf = LabelBox::for_domain::<D>(&states[0], model.states()).expect("a small model");
    let mut chain = langevin_core::Chain::<D>::new(buf.buffers(), model).unwrap();
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
    check_label_chain(name, model, kernel, &mut chain, (states, pi), n, &mut rng);
}

/// [`check_exact_start`] of a label kernel of domain `D` on an existing `chain` of `model`, with
/// the stream `rng`: each run resets the chain to `states[x0]` and steps it `k` times; `pi` is the
/// law over `states`.
pub fn check_label_chain<D, T, K, R>(
    name: &str,
    model: &mut T,
    kernel: &mut K,
    chain: &mut langevin_core::Chain<'_, D>,
    (states, pi): (&[Vec<u16>], &[f64]),
    n: usize,
    rng: &mut R,
) where
    D: langevin_core::Domain<Value = u16>,
    T: langevin_core::Eval<D>,
    K: langevin_core::Kernel<D>,
    R: Rng,
{
    let s = model.states();
    check_exact_start(name, pi, n, rng, |x0, k, rng| {
        chain.reset(&states[x0], model).unwrap();
        for _ in 0..k {
            kernel.step(model, chain, rng).unwrap();
        }
        index_of(chain.state(), s)
    });
}
