//! Statistical and exact checks of the diagnostics on series with known answers.
//!
//! Every threshold is derived below from the sample size with a per-test false-positive rate of
//! at most about 1e-6 (normal quantile z = 6 unless stated), never tuned to the observed values.

use langevin_core::random::{fill_normal, unit_f64};
use langevin_std::diagnostics::{
    DiagError, DrawArray, discs_ess, empirical_marginals, enumerate, ess, ess_bulk,
    ess_per_coordinate, log_mmd2_hamming, marginal_rmse, mmd2_hamming, random_reference, rhat,
    split_rhat,
};
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// A stationary Gaussian AR(1) series `x_t = ρ x_{t−1} + √(1−ρ²) ε_t`, started from N(0, 1).
/// Its integrated autocorrelation time is `(1 + ρ) / (1 − ρ)`.
fn ar1(rng: &mut Xoshiro256PlusPlus, n: usize, rho: f64) -> Vec<f64> {
    let mut z = vec![0.0; n];
    fill_normal(rng, &mut z);
    let s = (1.0 - rho * rho).sqrt();
    let mut x = Vec::with_capacity(n);
    let mut prev = z[0];
    x.push(prev);
    for &e in &z[1..] {
        prev = rho * prev + s * e;
        x.push(prev);
    }
    x
}

fn views(chains: &[Vec<f64>]) -> Vec<&[f64]> {
    chains.iter().map(Vec::as_slice).collect()
}

/// i.i.d. draws: ESS ≈ N.
///
/// Tolerance: for i.i.d. data the estimated autocorrelations ρ̂_t (t ≥ 1) are approximately
/// independent N(0, 1/N) (Bartlett). Geyer's sequence keeps a pair while its sum is positive,
/// which for i.i.d. data happens with probability 1/2 per pair, so more than K = 24 pairs occur
/// with probability 2^−24 ≈ 6e-8; hence at most L = 50 lags enter. Write τ̂ − 1 = 2ρ̂₁ + 2P + e
/// with P the sum of the kept (non-negative, monotone-corrected) pairs after the first,
/// 0 ≤ P ≤ max_j |S_j − S_1| (a partial sum of the ρ̂ walk) and 0 ≤ e ≤ |ρ̂_even|. With z = 6,
/// |ρ̂_t| ≤ z/√N and, by the reflection principle, max_j |S_j − S_1| ≤ z √(L/N), each failing
/// with probability ≤ 4e-9. So |τ̂ − 1| ≤ ε = z (3 + 2√L) / √N, and ESS/N ∈ [1/(1+ε), 1/(1−ε)].
#[test]
fn iid_normal_draws_have_ess_near_n() {
    let chains = 4;
    let n = 1 << 20;
    let total = (chains * n) as f64;
    let eps = 6.0 * (3.0 + 2.0 * 50f64.sqrt()) / total.sqrt();
    for seed in [1u64, 2] {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let draws: Vec<Vec<f64>> = (0..chains).map(|_| ar1(&mut rng, n, 0.0)).collect();
        let e = ess(&views(&draws)).unwrap();
        let ratio = e / total;
        println!(
            "iid seed {seed}: ESS/N = {ratio:.5} (allowed {:.4}..{:.4})",
            1.0 / (1.0 + eps),
            1.0 / (1.0 - eps)
        );
        assert!(
            ratio > 1.0 / (1.0 + eps) && ratio < 1.0 / (1.0 - eps),
            "ESS/N {ratio}"
        );
    }
}

/// Relative tolerance of τ̂ for a series with integrated time τ and N draws: Sokal's variance
/// `var(τ̂) ≈ 2(2M+1)/N · τ²` for a window of M lags. Geyer's truncation for AR(1) happens once
/// ρ^t drops below the noise of ρ̂_t, far earlier than `M = 40τ` (at N = 4·2^20, ρ^t falls
/// under 1e-3 by t = 3.5τ); with M = 40τ and z = 6 the relative error of τ̂, hence of ESS, is
/// below `z √(2(80τ+1)/N)` (truncation bias of order ρ^M/(1−ρ) is negligible).
fn ar1_tolerance(tau: f64, total: f64) -> f64 {
    6.0 * (2.0 * (80.0 * tau + 1.0) / total).sqrt()
}

#[test]
fn ar1_ess_matches_theory() {
    let chains = 4;
    let n = 1 << 20;
    let total = (chains * n) as f64;
    for (seed, rho) in [(10u64, 0.5), (11, 0.9)] {
        let tau = (1.0 + rho) / (1.0 - rho);
        let theory = total / tau;
        let tol = ar1_tolerance(tau, total);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let draws: Vec<Vec<f64>> = (0..chains).map(|_| ar1(&mut rng, n, rho)).collect();
        let e = ess(&views(&draws)).unwrap();
        let bulk = ess_bulk(&views(&draws)).unwrap();
        let single = ess(&[draws[0].as_slice()]).unwrap();
        println!(
            "AR(1) rho {rho}: theory {theory:.0}, ESS {e:.0} ({:+.2}%), bulk {bulk:.0} ({:+.2}%), \
             one chain {single:.0} vs {:.0} ({:+.2}%); tolerance ±{:.1}% (one chain ±{:.1}%)",
            100.0 * (e / theory - 1.0),
            100.0 * (bulk / theory - 1.0),
            theory / chains as f64,
            100.0 * (single * chains as f64 / theory - 1.0),
            100.0 * tol,
            100.0 * ar1_tolerance(tau, n as f64),
        );
        assert!((e / theory - 1.0).abs() < tol, "ESS {e} vs {theory}");
        // Normal scores of Gaussian draws are nearly a linear map of them, so the bulk ESS has
        // the same target to first order.
        assert!(
            (bulk / theory - 1.0).abs() < tol,
            "bulk ESS {bulk} vs {theory}"
        );
        let single_theory = theory / chains as f64;
        assert!((single / single_theory - 1.0).abs() < ar1_tolerance(tau, n as f64));
    }
}

/// Per-coordinate ESS of a (chains × draws × dim) array whose coordinates are AR(1) series
/// with ρ = 0, 0.5, 0.9 and one constant coordinate.
#[test]
fn per_coordinate_ess() {
    let (chains, draws, dim) = (4, 1 << 17, 4);
    let rhos = [0.0, 0.5, 0.9];
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(20);
    let mut data = vec![0.0f32; chains * draws * dim];
    for c in 0..chains {
        for (i, &rho) in rhos.iter().enumerate() {
            for (t, v) in ar1(&mut rng, draws, rho).into_iter().enumerate() {
                data[(c * draws + t) * dim + i] = v as f32;
            }
        }
        // Coordinate 3 stays at 1.0 in every draw.
        for t in 0..draws {
            data[(c * draws + t) * dim + 3] = 1.0;
        }
    }
    let array = DrawArray::new(&data, chains, draws, dim).unwrap();
    let summary = ess_per_coordinate(&array).unwrap();
    let total = (chains * draws) as f64;
    for (i, &rho) in rhos.iter().enumerate() {
        let tau = (1.0 + rho) / (1.0 - rho);
        let got = summary.per_coordinate[i];
        println!("coordinate {i}: ESS {got:.0}, theory {:.0}", total / tau);
        assert!((got * tau / total - 1.0).abs() < ar1_tolerance(tau.max(1.0), total));
    }
    assert!(summary.per_coordinate[3].is_nan());
    assert_eq!(summary.undefined, 1);
    assert_eq!(summary.min, summary.per_coordinate[2]);
    assert_eq!(summary.median, summary.per_coordinate[1]);
    assert!(matches!(
        DrawArray::new(&data[1..], chains, draws, dim),
        Err(DiagError::Length { .. })
    ));
}

/// R-hat separates chains with different means (or scales) from chains of one distribution.
///
/// Same distribution: 4 AR(1) chains (ρ = 0.9, τ = 19) of n = 10^5 draws give 8 halves whose
/// means have variance τ/(n/2) = 3.8e-4; their sample variance B/n is below
/// 3.8e-4 · χ²₇(1 − 1e-6)/7 ≈ 3.8e-4 · 5.7 = 2.2e-3, so R̂² ≤ 1 + 2.2e-3 and R̂ ≤ 1.0011 < 1.01
/// (classic and rank-normalised alike, since normal scores of Gaussian draws are nearly linear).
///
/// Shifted mean: two chains whose means differ by δ = 2 standard deviations. The split halves
/// have means ±δ/2 (two each), so B/n ≈ δ²/3 and the classic R̂ ≈ √(1 + δ²/3) = 1.53; after rank
/// normalisation the mixture's normal scores still differ by about 1.6 between chains, giving
/// R̂ ≈ 1.35. Sampling noise in R̂ at n = 10^4 is of order 1e-2, far from the threshold 1.1.
///
/// Different scales (sd 1 and 3, same mean): the bulk part cannot see it but the folded part
/// can: P(|X| < |Y|) = (2/π) atan 3 = 0.80, a shift of about 1.2 in normal scores, folded R̂ ≈ 1.2.
#[test]
fn rhat_flags_unmixed_chains() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(30);
    let same: Vec<Vec<f64>> = (0..4).map(|_| ar1(&mut rng, 100_000, 0.9)).collect();
    let r = rhat(&views(&same)).unwrap();
    let classic = split_rhat(&views(&same)).unwrap();
    println!("same distribution: rank-normalised {r:?}, classic {classic:.5}");
    assert!(r.max() < 1.01 && classic < 1.01);

    let a = ar1(&mut rng, 10_000, 0.5);
    let b: Vec<f64> = ar1(&mut rng, 10_000, 0.5).iter().map(|v| v + 2.0).collect();
    let r = rhat(&[&a, &b]).unwrap();
    let classic = split_rhat(&[&a, &b]).unwrap();
    println!("shifted means: rank-normalised {r:?}, classic {classic:.4}");
    assert!(r.max() > 1.1 && classic > 1.1);

    let c = ar1(&mut rng, 10_000, 0.5);
    let d: Vec<f64> = ar1(&mut rng, 10_000, 0.5).iter().map(|v| 3.0 * v).collect();
    let r = rhat(&[&c, &d]).unwrap();
    println!("different scales: {r:?}");
    assert!(r.bulk < 1.1 && r.folded > 1.1);
}

/// Independent binary draws with P(x_i = 1) = p, `n` draws of `dim` bits, flat.
fn bernoulli_draws(rng: &mut Xoshiro256PlusPlus, n: usize, dim: usize, p: f64) -> Vec<u8> {
    (0..n * dim).map(|_| u8::from(unit_f64(rng) < p)).collect()
}

/// `E k(x, y)` for the kernel `exp(−H/d)` when each coordinate differs with probability r.
fn mean_kernel(r: f64, dim: usize) -> f64 {
    (1.0 - r * (1.0 - (-1.0 / dim as f64).exp())).powi(dim as i32)
}

/// MMD is 0 for a set against itself and tracks the population value for shifted sets.
///
/// Bound (Gretton et al. 2012, Theorem 7, kernel bounded by K = 1, m = n draws per set):
/// |MMD_b − MMD| ≤ 4/√n + ε with probability ≥ 1 − 2 exp(−ε² n / 4); for α = 1e-6,
/// ε = √(4 ln(2/α) / n). The population MMD² between Bernoulli(p)^d and Bernoulli(q)^d is
/// E k(r_pp) + E k(r_qq) − 2 E k(r_pq), r_pq = p(1−q) + q(1−p).
#[test]
fn mmd_of_shifted_binary_sets() {
    let (n, dim) = (5000, 32);
    let band = 4.0 / (n as f64).sqrt() + (4.0 * (2.0f64 / 1e-6).ln() / n as f64).sqrt();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(40);
    let xs = bernoulli_draws(&mut rng, n, dim, 0.5);
    assert_eq!(mmd2_hamming(&xs, &xs, dim).unwrap(), 0.0);
    assert_eq!(log_mmd2_hamming(&xs, &xs, dim).unwrap(), f64::NEG_INFINITY);
    // The same draws in another order.
    let mut reversed: Vec<u8> = xs.chunks_exact(dim).rev().flatten().copied().collect();
    assert_eq!(mmd2_hamming(&xs, &reversed, dim).unwrap(), 0.0);
    reversed.truncate(dim * (n - 1));
    assert!(mmd2_hamming(&xs, &reversed, dim).unwrap() > 0.0);

    let p = 0.5;
    let mut previous = 0.0;
    for q in [0.5, 0.7, 0.9] {
        let ys = bernoulli_draws(&mut rng, n, dim, q);
        let got = mmd2_hamming(&xs, &ys, dim).unwrap();
        let population: f64 = mean_kernel(2.0 * p * (1.0 - p), dim)
            + mean_kernel(2.0 * q * (1.0 - q), dim)
            - 2.0 * mean_kernel(p * (1.0 - q) + q * (1.0 - p), dim);
        let population = population.max(0.0);
        println!(
            "q {q}: MMD² {got:.5} (log {:.3}), population {population:.5}; |MMD_b − MMD| {:.4} ≤ {band:.4}",
            got.ln(),
            (got.sqrt() - population.sqrt()).abs()
        );
        assert!((got.sqrt() - population.sqrt()).abs() <= band);
        assert!((log_mmd2_hamming(&xs, &ys, dim).unwrap() - got.ln()).abs() < 1e-12);
        if q == 0.5 {
            previous = got;
        }
    }
    // Guaranteed by the band: population MMD 0.478 − band > band ≥ MMD_b(same distribution).
    let far = mmd2_hamming(&xs, &bernoulli_draws(&mut rng, n, dim, 0.9), dim).unwrap();
    assert!(far > previous);
}

/// Enumeration against a 3 × 3 table computed by hand: U(x) = ln w(x₀, x₁) with
/// w = [[1, 2, 3], [4, 5, 6], [7, 8, 9]] (row x₀, column x₁), so Z = 45,
/// P(x₀ = k) = (6, 15, 24)/45 and P(x₁ = k) = (12, 15, 18)/45.
#[test]
fn enumeration_matches_hand_computation() {
    let w = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]];
    let mut calls = 0;
    let exact = enumerate::<u16, _>(2, 3, |x| {
        calls += 1;
        f64::ln(w[usize::from(x[0])][usize::from(x[1])])
    })
    .unwrap();
    assert_eq!(calls, 9);
    assert!((exact.log_normalizer() - 45f64.ln()).abs() < 1e-14);
    for x1 in 0..3u16 {
        for x0 in 0..3u16 {
            let index = exact.index_of(&[x0, x1]).unwrap();
            assert_eq!(index, usize::from(x0) + 3 * usize::from(x1));
            let want = w[usize::from(x0)][usize::from(x1)] / 45.0;
            assert!((exact.probs()[index] - want).abs() < 1e-15);
        }
    }
    let want = [6.0, 15.0, 24.0, 12.0, 15.0, 18.0].map(|v| v / 45.0);
    for (got, want) in exact.marginals().iter().zip(want) {
        assert!((got - want).abs() < 1e-15, "{got} vs {want}");
    }
}

/// The odometer-order marginals equal a direct per-state accumulation on a random table, and
/// the largest allowed case (2^24 binary states) runs.
#[test]
fn enumeration_marginals_and_limit() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(50);
    let (dim, s) = (7usize, 4usize);
    let table: Vec<f64> = (0..s.pow(dim as u32))
        .map(|_| 3.0 * unit_f64(&mut rng))
        .collect();
    let mut index = 0;
    let exact = enumerate::<u8, _>(dim, s, |_| {
        index += 1;
        table[index - 1]
    })
    .unwrap();
    let z: f64 = table.iter().map(|u| u.exp()).sum();
    let mut direct = vec![0.0; dim * s];
    for (k, u) in table.iter().enumerate() {
        let state: Vec<u8> = exact.state(k).unwrap();
        for (i, &v) in state.iter().enumerate() {
            direct[i * s + usize::from(v)] += u.exp() / z;
        }
    }
    for (a, b) in exact.marginals().iter().zip(&direct) {
        assert!((a - b).abs() < 1e-13);
    }

    let start = std::time::Instant::now();
    let big =
        enumerate::<u8, _>(24, 2, |x| 0.3 * f64::from(x[0]) - 0.2 * f64::from(x[23])).unwrap();
    println!("2^24 states enumerated in {:.2?}", start.elapsed());
    let p = 0.3f64.exp() / (1.0 + 0.3f64.exp());
    assert!((big.marginal(0).unwrap()[1] - p).abs() < 1e-12);
    let q = (-0.2f64).exp() / (1.0 + (-0.2f64).exp());
    assert!((big.marginal(23).unwrap()[1] - q).abs() < 1e-12);
    assert!((big.marginal(11).unwrap()[1] - 0.5).abs() < 1e-12);
    assert!(matches!(
        enumerate::<u8, _>(12, 5, |_| 0.0),
        Err(DiagError::TooManyStates)
    ));
}

/// Marginal RMSE of exact draws from an enumerated target is within the Hoeffding bound, and a
/// deliberately wrong target (U doubled) is far outside it.
///
/// Each of the K = d·S empirical marginals is a mean of n Bernoulli indicators, so
/// |p̂ − p| ≤ √(ln(2K/α) / (2n)) for all of them with probability ≥ 1 − α; the RMSE is at most
/// that.
#[test]
fn marginal_rmse_of_exact_draws() {
    let (dim, s, n) = (6, 3, 200_000);
    let u = |x: &[u8]| -> f64 {
        let v: Vec<f64> = x.iter().map(|&k| f64::from(k)).collect();
        0.4 * v.windows(2).map(|w| w[0] * w[1]).sum::<f64>() - 0.3 * v.iter().sum::<f64>()
    };
    let exact = enumerate::<u8, _>(dim, s, u).unwrap();
    let wrong = enumerate::<u8, _>(dim, s, |x| 2.0 * u(x)).unwrap();
    let mut cdf = Vec::with_capacity(exact.len());
    let mut acc = 0.0;
    for p in exact.probs() {
        acc += p;
        cdf.push(acc);
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(60);
    let mut draws = Vec::with_capacity(n * dim);
    for _ in 0..n {
        let v = unit_f64(&mut rng) * acc;
        let k = cdf.partition_point(|&c| c <= v).min(exact.len() - 1);
        draws.extend(exact.state::<u8>(k).unwrap());
    }
    let estimated = empirical_marginals(&[&draws], dim, s).unwrap();
    let bound = ((2.0 * (dim * s) as f64 / 1e-6).ln() / (2.0 * n as f64)).sqrt();
    let rmse = marginal_rmse(&estimated, exact.marginals()).unwrap();
    let off = marginal_rmse(&estimated, wrong.marginals()).unwrap();
    println!("RMSE {rmse:.5}, against the wrong target {off:.4}, bound {bound:.4}");
    assert!(rmse < bound);
    assert!(off > 2.0 * bound);
}

/// DISCS ESS of a lazy chain over {0, 1}^d: each step keeps the state with probability λ and
/// otherwise draws a fresh uniform state. Any statistic of it has autocorrelation λ^t, so the
/// Hamming series has τ = (1 + λ)/(1 − λ) and a chain's second half of n/2 draws has ESS
/// (n/2)/τ. Tolerance per chain as for AR(1) (Sokal, z = 6), and the mean over 4 chains
/// is within the same relative bound.
#[test]
fn discs_ess_of_lazy_chains() {
    let (chains, n, dim, lambda) = (4, 1 << 18, 20, 0.6);
    let tau = (1.0 + lambda) / (1.0 - lambda);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(70);
    let reference: Vec<u8> = random_reference(dim, 2, 71).unwrap();
    let runs: Vec<Vec<u8>> = (0..chains)
        .map(|_| {
            let mut state = bernoulli_draws(&mut rng, 1, dim, 0.5);
            let mut chain = Vec::with_capacity(n * dim);
            for _ in 0..n {
                if unit_f64(&mut rng) >= lambda {
                    state = bernoulli_draws(&mut rng, 1, dim, 0.5);
                }
                chain.extend_from_slice(&state);
            }
            chain
        })
        .collect();
    let run_views: Vec<&[u8]> = runs.iter().map(Vec::as_slice).collect();
    let report = discs_ess(&run_views, dim, &reference).unwrap();
    let theory = (n / 2) as f64 / tau;
    let tol = ar1_tolerance(tau, (n / 2) as f64);
    println!(
        "DISCS ESS per chain {:?}, mean {:.0}, theory {theory:.0} (±{:.1}%)",
        report
            .per_chain
            .iter()
            .map(|v| v.round())
            .collect::<Vec<_>>(),
        report.mean,
        100.0 * tol
    );
    for e in &report.per_chain {
        assert!((e / theory - 1.0).abs() < tol);
    }
    assert_eq!(report.undefined, 0);

    // A chain that never moves has no defined ESS and is left out of the mean.
    let stuck = runs[0][..dim].repeat(64);
    let report = discs_ess(&[&stuck, run_views[1]], dim, &reference).unwrap();
    assert!(report.per_chain[0].is_nan());
    assert_eq!(report.undefined, 1);
    assert_eq!(report.mean, report.per_chain[1]);
}
