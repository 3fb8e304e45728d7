//! Shared code for the discrete-sampler tests: enumeration of small label spaces, exact transition
//! matrices, the pooled chi-square and TV thresholds of the sampling-path protocol, and a Geyer
//! initial-monotone-sequence ESS.
#![allow(dead_code)]

use langevin_core::Binary;
use langevin_core::ordinal::OrdinalTarget;
use langevin_core::random::unit_f64;
use langevin_std::discrete_models::Potts;
use rand_core::Rng;
use std::convert::Infallible;

/// Per-test false-positive rate of every statistical assertion.
pub const ALPHA: f64 = 1e-6;

/// All states of `{0..s-1}^d`, coordinate 0 fastest.
pub fn enumerate(d: usize, s: usize) -> Vec<Vec<u16>> {
    let k = s.pow(d as u32);
    (0..k)
        .map(|mut idx| {
            (0..d)
                .map(|_| {
                    let v = (idx % s) as u16;
                    idx /= s;
                    v
                })
                .collect()
        })
        .collect()
}

/// The index of `x` in [`enumerate`]'s order.
pub fn index_of(x: &[u16], s: usize) -> usize {
    x.iter().rev().fold(0, |acc, &v| acc * s + usize::from(v))
}

/// All binary states of dimension `d`, coordinate 0 fastest.
pub fn enumerate_binary(d: usize) -> Vec<Vec<u8>> {
    (0..1usize << d)
        .map(|idx| (0..d).map(|i| ((idx >> i) & 1) as u8).collect())
        .collect()
}

/// The index of a binary state.
pub fn index_of_binary(x: &[u8]) -> usize {
    x.iter()
        .enumerate()
        .map(|(i, &v)| usize::from(v) << i)
        .sum()
}

/// Normalised probabilities from log-weights.
pub fn normalise(log_w: &[f64]) -> Vec<f64> {
    let m = log_w.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let w: Vec<f64> = log_w.iter().map(|l| (l - m).exp()).collect();
    let z: f64 = w.iter().sum();
    w.iter().map(|v| v / z).collect()
}

/// The Metropolis–Hastings transition matrix (row-major `K × K`) for a proposal with
/// `log_q(i, j) = log q(state j | state i)`.
pub fn mh_matrix(log_pi: &[f64], log_q: impl Fn(usize, usize) -> f64) -> Vec<f64> {
    let k = log_pi.len();
    let mut p = vec![0.0; k * k];
    for i in 0..k {
        let mut off = 0.0;
        for j in 0..k {
            if i == j {
                continue;
            }
            let fwd = log_q(i, j);
            if fwd == f64::NEG_INFINITY {
                continue;
            }
            let rev = log_q(j, i);
            let la = log_pi[j] - log_pi[i] + rev - fwd;
            let v = fwd.exp() * la.exp().min(1.0);
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

/// `ln Γ(x)` for `x > 0` (Lanczos, g = 7).
fn ln_gamma(x: f64) -> f64 {
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
    let t = x + 7.5;
    for (i, &c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The regularised upper incomplete gamma function `Q(a, x)`.
fn gamma_q(a: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 1.0;
    }
    let gln = ln_gamma(a);
    if x < a + 1.0 {
        // Series for P.
        let (mut sum, mut del, mut ap) = (1.0 / a, 1.0 / a, a);
        for _ in 0..10_000 {
            ap += 1.0;
            del *= x / ap;
            sum += del;
            if del.abs() < sum.abs() * 1e-16 {
                break;
            }
        }
        1.0 - sum * (-x + a * x.ln() - gln).exp()
    } else {
        // Continued fraction for Q (modified Lentz).
        let tiny = 1e-300;
        let mut b = x + 1.0 - a;
        let mut c = 1.0 / tiny;
        let mut d = 1.0 / b;
        let mut h = d;
        for i in 1..10_000 {
            let an = -(i as f64) * (i as f64 - a);
            b += 2.0;
            d = an * d + b;
            if d.abs() < tiny {
                d = tiny;
            }
            c = b + an / c;
            if c.abs() < tiny {
                c = tiny;
            }
            d = 1.0 / d;
            let del = d * c;
            h *= del;
            if (del - 1.0).abs() < 1e-16 {
                break;
            }
        }
        (-x + a * x.ln() - gln).exp() * h
    }
}

/// The upper tail `P(χ²_k > x)`.
pub fn chi2_sf(x: f64, k: f64) -> f64 {
    gamma_q(0.5 * k, 0.5 * x)
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

/// Pooled chi-square (cells with expected count below 5 merged into one) and the TV test with
/// threshold `½ Σ √(p_i(1−p_i)/n) + √(ln(1/α)/(2n))`.
pub fn compare(counts: &[u64], p: &[f64]) -> Comparison {
    let n: u64 = counts.iter().sum();
    let nf = n as f64;
    let mut cells: Vec<(f64, f64)> = Vec::new();
    let (mut pooled_obs, mut pooled_exp) = (0.0, 0.0);
    for (&c, &pi) in counts.iter().zip(p) {
        let e = nf * pi;
        if e < 5.0 {
            pooled_obs += c as f64;
            pooled_exp += e;
        } else {
            cells.push((c as f64, e));
        }
    }
    if pooled_exp >= 5.0 || (cells.is_empty() && pooled_exp > 0.0) {
        cells.push((pooled_obs, pooled_exp));
    } else if pooled_exp > 0.0 || pooled_obs > 0.0 {
        // Too little mass for a cell of its own: merge it into the smallest cell.
        if let Some(smallest) = cells.iter_mut().min_by(|a, b| a.1.total_cmp(&b.1)) {
            smallest.0 += pooled_obs;
            smallest.1 += pooled_exp;
        }
    }
    let chi2: f64 = cells.iter().map(|(o, e)| (o - e).powi(2) / e).sum();
    let cells = cells.len();
    let df = cells.saturating_sub(1).max(1);
    let tv = 0.5
        * counts
            .iter()
            .zip(p)
            .map(|(&c, &pi)| (c as f64 / nf - pi).abs())
            .sum::<f64>();
    let b: f64 = 0.5
        * p.iter()
            .map(|&pi| (pi * (1.0 - pi) / nf).sqrt())
            .sum::<f64>();
    let tv_threshold = b + ((1.0 / ALPHA).ln() / (2.0 * nf)).sqrt();
    Comparison {
        chi2,
        df,
        p_value: chi2_sf(chi2, df as f64),
        tv,
        tv_threshold,
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
#[derive(Clone)]
pub struct Wavy {
    pub theta: Vec<f64>,
    pub s: usize,
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

/// `U` and `∇U` of an ordinal target at every state.
pub fn tabulate_ordinal<T: OrdinalTarget>(
    t: &mut T,
    states: &[Vec<u16>],
) -> (Vec<f64>, Vec<Vec<f32>>) {
    let d = t.dim();
    states
        .iter()
        .map(|x| {
            let mut g = vec![0.0f32; d];
            let u = t.log_density_and_grad(x, &mut g).unwrap();
            (u, g)
        })
        .unzip()
}

/// `U` and the one-hot gradient of a categorical target at every state.
pub fn tabulate_categorical<T: langevin_core::categorical::CategoricalTarget>(
    t: &mut T,
    states: &[Vec<u16>],
) -> (Vec<f64>, Vec<Vec<f32>>) {
    let g = t.dim() * t.states();
    states
        .iter()
        .map(|x| {
            let mut grad = vec![0.0f32; g];
            let u = t.log_density_and_grad(x, &mut grad).unwrap();
            (u, grad)
        })
        .unzip()
}

/// Owned buffers for one label chain.
pub struct LabelBuf {
    pub x: Vec<u16>,
    pub grad: Vec<f32>,
    pub x_proposal: Vec<u16>,
    pub grad_proposal: Vec<f32>,
    pub changed: Vec<u32>,
    pub scratch: Vec<f64>,
}

impl LabelBuf {
    /// Buffers for `d` coordinates, `s` values and a gradient of `g` entries.
    pub fn new(x0: &[u16], s: usize, g: usize) -> Self {
        let d = x0.len();
        Self {
            x: x0.to_vec(),
            grad: vec![0.0; g],
            x_proposal: vec![0; d],
            grad_proposal: vec![0.0; g],
            changed: vec![0; d],
            scratch: vec![0.0; s],
        }
    }

    /// Borrows them.
    pub fn buffers(&mut self) -> langevin_core::ordinal::LabelBuffers<'_> {
        langevin_core::ordinal::LabelBuffers {
            x: &mut self.x,
            grad: &mut self.grad,
            x_proposal: &mut self.x_proposal,
            grad_proposal: &mut self.grad_proposal,
            changed: &mut self.changed,
            scratch: &mut self.scratch,
        }
    }
}

/// Owned buffers for one binary chain.
pub struct BinBuf {
    pub x: Vec<u8>,
    pub grad: Vec<f32>,
    pub x_proposal: Vec<u8>,
    pub grad_proposal: Vec<f32>,
    pub flipped: Vec<u32>,
}

impl BinBuf {
    /// Buffers starting at `x0`.
    pub fn new(x0: &[u8]) -> Self {
        let d = x0.len();
        Self {
            x: x0.to_vec(),
            grad: vec![0.0; d],
            x_proposal: vec![0; d],
            grad_proposal: vec![0.0; d],
            flipped: vec![0; d],
        }
    }

    /// Borrows them.
    pub fn buffers(&mut self) -> langevin_core::binary::ChainBuffers<'_> {
        langevin_core::binary::ChainBuffers {
            x: &mut self.x,
            grad: &mut self.grad,
            x_proposal: &mut self.x_proposal,
            grad_proposal: &mut self.grad_proposal,
            flipped: &mut self.flipped,
        }
    }
}

/// `U` of a binary target at every state of [`enumerate_binary`].
pub fn tabulate_binary_u<T: langevin_core::BinaryTarget>(t: &mut T) -> (Vec<Vec<u8>>, Vec<f64>) {
    let d = t.dim();
    let states = enumerate_binary(d);
    let log_pi = states
        .iter()
        .map(|x| t.log_density_and_grad(x, &mut vec![0.0; d]).unwrap())
        .collect();
    (states, log_pi)
}

/// Exact-start sampling-path test of a binary kernel (`k ∈ {1, 10}`, `n` repeats).
pub fn check_binary_kernel<T, K>(name: &str, model: &mut T, kernel: &mut K, n: usize, seed: u64)
where
    T: langevin_core::BinaryTarget,
    K: langevin_core::binary::Kernel<Binary>,
{
    use rand_core::SeedableRng;
    let (states, log_pi) = tabulate_binary_u(model);
    let pi = normalise(&log_pi);
    let mut buf = BinBuf::new(&states[0]);
    let mut chain = langevin_core::binary::BinaryChain::new(buf.buffers(), model).unwrap();
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
    for k in [1usize, 10] {
        let counts = exact_start_counts(&pi, n, &mut rng, |x0, rng| {
            chain.reset(&states[x0], model).unwrap();
            for _ in 0..k {
                kernel.step(model, &mut chain, rng).unwrap();
            }
            index_of_binary(chain.state())
        });
        assert_matches(&format!("{name}, k = {k}"), &counts, &pi);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chi2_tail_matches_known_values() {
        // P(χ²_1 > 3.841459) = 0.05, P(χ²_10 > 18.307) = 0.05, P(χ²_2 > x) = e^{-x/2}.
        assert!((chi2_sf(3.841_459, 1.0) - 0.05).abs() < 1e-6);
        assert!((chi2_sf(18.307_038, 10.0) - 0.05).abs() < 1e-6);
        assert!((chi2_sf(7.0, 2.0) - (-3.5f64).exp()).abs() < 1e-12);
    }
}
