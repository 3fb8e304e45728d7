//! Annealed importance sampling (AIS) of an RBM's log partition function, and its exact value
//! by enumeration when one layer is small.
//!
//! The recipe is Neal's (2001) with the RBM path of Salakhutdinov and Murray (2008): the base
//! `p_0` is the RBM with `W = 0`, `c = 0` and visible biases `b₀` (the data's base rates, see
//! [`base_rate_bias`]), whose `log Z₀ = Σ_k softplus(b₀_k) + H ln 2` is exact; the path is
//! `p_β(v, h) ∝ exp((1−β) b₀ᵀv + β (bᵀv + cᵀh + hᵀWv))` for `0 = β_0 < … < β_M = 1`. Each
//! chain draws `v ~ p_0` and, for `k = 1..M`, adds `log p*_{β_k}(v) − log p*_{β_{k−1}}(v)`
//! (hidden units summed out) to its log weight, then moves `v` by one block-Gibbs sweep
//! (`h | v`, then `v | h`) that leaves `p_{β_k}` invariant. Then
//! `log Z ≈ log Z₀ + log mean_i exp(w_i)`, with the delta-method standard error
//! `sd(e^{w}) / (√A · mean(e^{w}))` over the `A` chains.
//!
//! Chains run on the project's [pool](crate::run::map_chains), chain `i` on stream `i` of the
//! seed, so the estimate is the same for every thread count.
//!
//! # References
//!
//! R. M. Neal, "Annealed importance sampling", Statistics and Computing 11, 2001.
//! R. Salakhutdinov and I. Murray, "On the quantitative analysis of deep belief networks",
//! ICML 2008.

use super::LearnError;
use super::rbm::RbmParams;
use crate::run::{RunError, map_chains};
use langevin_core::math::{sigmoid, softplus};
use langevin_core::random::unit_f64;
use rand_core::Rng;

/// Enumeration is used when the smaller layer has at most this many units (`2^20` terms).
pub const EXACT_MAX_UNITS: usize = 20;

/// How the inverse temperatures `β_1 … β_M` are spaced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum BetaSchedule {
    /// `β_k = k / M`.
    #[default]
    Linear,
    /// `β_k = (1/M)^((M−k)/(M−1))`: geometric from `1/M` to 1, denser near 0 where the
    /// distributions change fastest in `β`.
    Geometric,
}

/// What an AIS run does.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AisSettings {
    /// Independent chains `A` (at least 2, for a standard error).
    pub chains: usize,
    /// Intermediate distributions `M` (at least 1).
    pub betas: usize,
    /// The spacing of the `β`s.
    pub schedule: BetaSchedule,
    /// Master seed; chain `i` uses stream `i` (see [`crate::seeding`]).
    pub seed: u64,
    /// Worker threads (`0`: one per core); the estimate does not depend on it.
    pub threads: usize,
}

impl Default for AisSettings {
    /// 100 chains, 1,000 linear steps, seed 0, every core.
    fn default() -> Self {
        Self {
            chains: 100,
            betas: 1_000,
            schedule: BetaSchedule::Linear,
            seed: 0,
            threads: 0,
        }
    }
}

/// An AIS estimate of `log Z`.
#[derive(Clone, Debug, PartialEq)]
pub struct AisEstimate {
    /// `log Ẑ = log Z₀ + log mean exp(w)`.
    pub log_z: f64,
    /// Delta-method standard error of `log Ẑ`.
    pub log_z_stderr: f64,
    /// The base distribution's exact `log Z₀`.
    pub log_z_base: f64,
    /// Each chain's log weight `w_i`, in chain order.
    pub log_weights: Vec<f64>,
}

impl AisEstimate {
    /// The effective sample size of the importance weights, `(Σ e^w)² / Σ e^{2w}`.
    pub fn weight_ess(&self) -> f64 {
        let m = max(&self.log_weights);
        let (s1, s2) = self.log_weights.iter().fold((0.0, 0.0), |(a, b), &w| {
            let r = (w - m).exp();
            (a + r, b + r * r)
        });
        s1 * s1 / s2
    }
}

/// The inverse temperatures `β_0 = 0, β_1, …, β_M = 1` of a schedule with `m ≥ 1` steps.
pub fn betas(schedule: BetaSchedule, m: usize) -> Vec<f64> {
    let m = m.max(1);
    let mut out = Vec::with_capacity(m + 1);
    out.push(0.0);
    for k in 1..=m {
        let beta = match schedule {
            BetaSchedule::Linear => k as f64 / m as f64,
            BetaSchedule::Geometric if m == 1 => 1.0,
            BetaSchedule::Geometric => (1.0 / m as f64).powf((m - k) as f64 / (m - 1) as f64),
        };
        out.push(beta);
    }
    out
}

/// The base distribution's visible biases from binary data rows (`V` values each): the logits
/// of the per-pixel means, smoothed as `(count + 1/2) / (n + 1)` so that a pixel never on or
/// never off keeps a finite bias. With no rows, `b₀ = 0`.
pub fn base_rate_bias(rows: &[u8], visible: usize) -> Vec<f64> {
    let n = rows.len().checked_div(visible).unwrap_or(0);
    (0..visible)
        .map(|k| {
            let on = rows
                .chunks_exact(visible)
                .filter(|r| r.get(k).is_some_and(|&x| x != 0))
                .count();
            let p = (on as f64 + 0.5) / (n as f64 + 1.0);
            (p / (1.0 - p)).ln()
        })
        .collect()
}

/// Estimates `log Z` of `rbm` by AIS from the base with visible biases `base` (`V` entries).
///
/// # Errors
///
/// [`LearnError::Settings`] for fewer than 2 chains, no steps or a `base` of the wrong
/// length; [`LearnError::Run`] if the worker threads fail.
pub fn ais_log_z(
    rbm: &RbmParams,
    base: &[f64],
    settings: &AisSettings,
) -> Result<AisEstimate, LearnError> {
    if settings.chains < 2 || settings.betas == 0 {
        return Err(super::SettingsError::AisSize {
            chains: settings.chains,
            betas: settings.betas,
        }
        .into());
    }
    if base.len() != rbm.visible() {
        return Err(super::SettingsError::BaseLength {
            base: base.len(),
            visible: rbm.visible(),
        }
        .into());
    }
    let schedule = betas(settings.schedule, settings.betas);
    let run = map_chains(
        settings.seed,
        settings.threads,
        vec![(); settings.chains],
        |_, (), mut rng| Ok::<_, RunError>(one_chain(rbm, base, &schedule, &mut rng)),
    )?;
    let log_weights = run.results;
    let log_z_base =
        base.iter().map(|&b| softplus(b)).sum::<f64>() + rbm.hidden() as f64 * 2f64.ln();
    let m = max(&log_weights);
    let ratios: Vec<f64> = log_weights.iter().map(|&w| (w - m).exp()).collect();
    let a = ratios.len() as f64;
    let mean = ratios.iter().sum::<f64>() / a;
    let var = ratios.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (a - 1.0);
    Ok(AisEstimate {
        log_z: log_z_base + m + mean.ln(),
        log_z_stderr: (var / a).sqrt() / mean,
        log_z_base,
        log_weights,
    })
}

/// One AIS chain's log weight.
fn one_chain<R: Rng + ?Sized>(rbm: &RbmParams, base: &[f64], betas: &[f64], rng: &mut R) -> f64 {
    let (nv, nh) = (rbm.visible(), rbm.hidden());
    let mut v: Vec<u8> = base
        .iter()
        .map(|&b| u8::from(unit_f64(rng) < sigmoid(b)))
        .collect();
    let mut a = vec![0.0; nh];
    let mut h = vec![0u8; nh];
    let mut pre = vec![0.0; nv];
    rbm.hidden_input(&v, &mut a);
    // log p*_β(v) = (1−β) b₀ᵀv + β bᵀv + Σ_j softplus(β a_j).
    let log_p = |beta: f64, v: &[u8], a: &[f64]| {
        let (lin0, lin) = v
            .iter()
            .zip(base.iter().zip(rbm.b()))
            .filter(|&(&x, _)| x != 0)
            .fold((0.0, 0.0), |(s0, s), (_, (&b0, &b))| (s0 + b0, s + b));
        (1.0 - beta) * lin0 + beta * lin + a.iter().map(|&x| softplus(beta * x)).sum::<f64>()
    };
    let mut log_w = 0.0;
    let last = betas.len() - 1;
    for k in 1..=last {
        let (previous, beta) = (betas[k - 1], betas[k]);
        log_w += log_p(beta, &v, &a) - log_p(previous, &v, &a);
        if k == last {
            break;
        }
        // One block-Gibbs sweep at β: h | v, then v | h.
        for (hj, &aj) in h.iter_mut().zip(&a) {
            *hj = u8::from(unit_f64(rng) < sigmoid(beta * aj));
        }
        for (k, p) in pre.iter_mut().enumerate() {
            *p = rbm.b()[k];
        }
        for (j, &hj) in h.iter().enumerate() {
            if hj != 0 {
                for (p, &w) in pre.iter_mut().zip(&rbm.w()[j * nv..(j + 1) * nv]) {
                    *p += w;
                }
            }
        }
        for ((x, &p), &b0) in v.iter_mut().zip(&pre).zip(base) {
            *x = u8::from(unit_f64(rng) < sigmoid((1.0 - beta) * b0 + beta * p));
        }
        rbm.hidden_input(&v, &mut a);
    }
    log_w
}

/// The exact `log Z` by summing over the `2^min(H, V)` states of the smaller layer, or `None`
/// when that layer has more than [`EXACT_MAX_UNITS`] units.
///
/// Over hidden states `log Z = logsumexp_h [cᵀh + Σ_k softplus(b_k + (Wᵀh)_k)]`; over visible
/// states `logsumexp_v [bᵀv + Σ_j softplus((Wv + c)_j)]`. States are visited in Gray-code order,
/// so each term updates the pre-activations by one row or column of `W` (in `f64`).
pub fn exact_log_z(rbm: &RbmParams) -> Option<f64> {
    let (nv, nh) = (rbm.visible(), rbm.hidden());
    let w = rbm.w();
    if nh <= nv && nh <= EXACT_MAX_UNITS {
        Some(gray_logsumexp(nh, rbm.c(), rbm.b(), |j, k| w[j * nv + k]))
    } else if nv <= EXACT_MAX_UNITS {
        Some(gray_logsumexp(nv, rbm.b(), rbm.c(), |k, j| w[j * nv + k]))
    } else {
        None
    }
}

/// `logsumexp over s ∈ {0,1}^n of [linᵀs + Σ_m softplus(other_m + Σ_i s_i col(i, m))]`.
fn gray_logsumexp(n: usize, lin: &[f64], other: &[f64], col: impl Fn(usize, usize) -> f64) -> f64 {
    let mut pre = other.to_vec();
    let mut s = vec![false; n];
    let mut linear = 0.0;
    let (mut top, mut sum) = (f64::NEG_INFINITY, 0.0);
    for g in 0u64..(1u64 << n) {
        if g > 0 {
            let i = g.trailing_zeros() as usize;
            let sign = if s[i] { -1.0 } else { 1.0 };
            s[i] = !s[i];
            linear += sign * lin[i];
            for (m, p) in pre.iter_mut().enumerate() {
                *p += sign * col(i, m);
            }
        }
        let t = linear + pre.iter().map(|&p| softplus(p)).sum::<f64>();
        if t > top {
            sum = sum * (top - t).exp() + 1.0;
            top = t;
        } else {
            sum += (t - top).exp();
        }
    }
    top + sum.ln()
}

/// `mean_i U(v_i) − log Z` over data rows of `V` values.
pub fn mean_log_likelihood(rbm: &RbmParams, rows: &[u8], log_z: f64) -> f64 {
    let nv = rbm.visible();
    let mut scratch = vec![0.0; rbm.hidden()];
    let n = rows.len() / nv.max(1);
    let total: f64 = rows
        .chunks_exact(nv.max(1))
        .map(|v| rbm.log_marginal(v, &mut scratch))
        .sum();
    total / n.max(1) as f64 - log_z
}

fn max(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::NEG_INFINITY, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::SeedableRng;

    /// A random RBM with weights of scale `scale`.
    fn random_rbm(v: usize, h: usize, scale: f64, seed: u64) -> RbmParams {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut draw = |s: f64| (2.0 * unit_f64(&mut rng) - 1.0) * s;
        let w: Vec<f64> = (0..v * h).map(|_| draw(scale)).collect();
        let b: Vec<f64> = (0..v).map(|_| draw(0.5)).collect();
        let c: Vec<f64> = (0..h).map(|_| draw(0.5)).collect();
        RbmParams::new(&w, &b, &c).unwrap()
    }

    #[test]
    fn enumeration_over_either_layer_agrees_with_brute_force() {
        let rbm = random_rbm(7, 5, 1.0, 3);
        let mut scratch = vec![0.0; 5];
        let terms: Vec<f64> = (0u32..1 << 7)
            .map(|bits| {
                let v: Vec<u8> = (0..7).map(|k| ((bits >> k) & 1) as u8).collect();
                rbm.log_marginal(&v, &mut scratch)
            })
            .collect();
        let m = max(&terms);
        let brute = m + terms.iter().map(|t| (t - m).exp()).sum::<f64>().ln();
        let over_hidden = exact_log_z(&rbm).unwrap();
        let over_visible = gray_logsumexp(7, rbm.b(), rbm.c(), |k, j| rbm.w()[j * 7 + k]);
        assert!((brute - over_hidden).abs() < 1e-10, "{brute} {over_hidden}");
        assert!(
            (brute - over_visible).abs() < 1e-10,
            "{brute} {over_visible}"
        );
    }

    #[test]
    fn the_schedules_run_from_zero_to_one_increasing() {
        for s in [BetaSchedule::Linear, BetaSchedule::Geometric] {
            for m in [1, 2, 50] {
                let b = betas(s, m);
                assert_eq!((b.len(), b[0], b[m]), (m + 1, 0.0, 1.0), "{s:?} {m}");
                assert!(b.windows(2).all(|p| p[0] < p[1]), "{s:?} {m}");
            }
        }
    }

    #[test]
    fn ais_is_within_its_error_bars_of_the_exact_log_z() {
        // |log Ẑ − log Z| ≤ 4 SE: under the normal approximation of the estimate a false alarm
        // has probability 6·10⁻⁵ per case. The bias of log Ẑ, about −SE²/2, is negligible at
        // these SEs; SE itself must be small (< 0.1) so that the check has teeth.
        let cases = [
            (random_rbm(12, 6, 1.0, 1), BetaSchedule::Linear, 5u64),
            (random_rbm(9, 14, 0.8, 2), BetaSchedule::Geometric, 6),
            (random_rbm(16, 4, 1.5, 4), BetaSchedule::Linear, 7),
        ];
        for (k, (rbm, schedule, seed)) in cases.iter().enumerate() {
            let exact = exact_log_z(rbm).unwrap();
            let base = vec![0.0; rbm.visible()];
            let settings = AisSettings {
                chains: 200,
                betas: 300,
                schedule: *schedule,
                seed: *seed,
                threads: 2,
            };
            let est = ais_log_z(rbm, &base, &settings).unwrap();
            assert!(est.log_z_stderr < 0.1, "case {k}: SE {}", est.log_z_stderr);
            assert!(
                (est.log_z - exact).abs() <= 4.0 * est.log_z_stderr,
                "case {k}: AIS {} ± {}, exact {exact}",
                est.log_z,
                est.log_z_stderr
            );
        }
    }

    #[test]
    fn the_estimate_does_not_depend_on_the_thread_count() {
        let rbm = random_rbm(10, 8, 1.0, 9);
        let base = base_rate_bias(&[1, 0, 1, 0, 1, 1, 0, 0, 0, 1], 10);
        let run = |threads| {
            let s = AisSettings {
                chains: 7,
                betas: 20,
                threads,
                ..AisSettings::default()
            };
            ais_log_z(&rbm, &base, &s).unwrap()
        };
        let one = run(1);
        assert_eq!(one, run(2));
        assert_eq!(one, run(3));
    }
}
