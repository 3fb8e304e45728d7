//! The AB-max and DLP-trace rules of the AB-2 schedule.
//!
//! * AB-max (`min λ_max(W + D)`, `D ≥ 0`, `W + D ⪰ 0`) on random `W`: the answer is feasible,
//!   its largest eigenvalue is no larger than those of the trace and shift choices (the solver
//!   starts from the shift point only, so beating the trace point has to be earned), and the
//!   certified lower bound lies below all three.
//! * DLP-trace: the preconditioner reproduces the anisotropic kernel's flip logits exactly, and
//!   the frozen kernels the schedule produces (DLP-trace, DMALA, AB-max) pass the exact-start
//!   sampling-path test (`n = 10⁵`, `k ∈ {1, 10}`, pooled chi-square and TV at `α = 1e-6`).

use langevin_core::binary::{BinaryChain, Dmala, FlipProposal};
use langevin_core::models::{BinaryQuadratic, ConstDims, IsingLattice};
use langevin_core::random::fill_normal;
use langevin_core::second_order::{AbSecondOrder, scratch_len};
use langevin_std::FlipMathImpl;
use langevin_std::ab2::diagonal::{MaxEigOptions, min_max_eigenvalue};
use langevin_std::ab2::{
    Ab2Settings, DiagonalRule, dlp_preconditioner, max_diagonal, shift_diagonal, trace_diagonal,
    tune_chain,
};
use langevin_std::run::Keep;
use langevin_std::sdp::SdpOptions;
use langevin_tests::discrete::*;
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

const N: usize = 100_000;

/// A random symmetric `n × n` matrix with entries of size `scale`, row-major.
fn random_symmetric(n: usize, scale: f64, seed: u64) -> Vec<f64> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut g = vec![0.0; n * n];
    fill_normal(&mut rng, &mut g);
    let mut w = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            w[i * n + j] = scale * (g[i * n + j] + g[j * n + i]) / 2f64.sqrt();
        }
    }
    w
}

/// `(λ_min, λ_max)` of `W + diag d`, by Jacobi rotations (independent of nalgebra's solver).
fn extremes(w: &[f64], d: &[f64], n: usize) -> (f64, f64) {
    let mut a: Vec<f64> = w.to_vec();
    for i in 0..n {
        a[i * n + i] += d[i];
    }
    for _sweep in 0..100 {
        let off: f64 = (0..n)
            .flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| (i, j)))
            .map(|(i, j)| a[i * n + j] * a[i * n + j])
            .sum();
        if off < 1e-26 {
            break;
        }
        for p in 0..n {
            for q in p + 1..n {
                let apq = a[p * n + q];
                if apq.abs() < 1e-300 {
                    continue;
                }
                let theta = (a[q * n + q] - a[p * n + p]) / (2.0 * apq);
                let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
                let t = if theta == 0.0 { 1.0 } else { t };
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                for k in 0..n {
                    let (akp, akq) = (a[k * n + p], a[k * n + q]);
                    a[k * n + p] = c * akp - s * akq;
                    a[k * n + q] = s * akp + c * akq;
                }
                for k in 0..n {
                    let (apk, aqk) = (a[p * n + k], a[q * n + k]);
                    a[p * n + k] = c * apk - s * aqk;
                    a[q * n + k] = s * apk + c * aqk;
                }
            }
        }
    }
    let diag: Vec<f64> = (0..n).map(|i| a[i * n + i]).collect();
    (
        diag.iter().copied().fold(f64::INFINITY, f64::min),
        diag.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    )
}

#[test]
fn max_rule_is_feasible_and_beats_trace_and_shift_on_random_w() {
    let mut strict_wins = 0;
    for (k, n) in [6usize, 10, 16, 24, 30].into_iter().enumerate() {
        let w = random_symmetric(n, 1.0 / (n as f64).sqrt(), 100 + k as u64);
        let (trace, _) = trace_diagonal(&w, n, &SdpOptions::with_rel_gap(1e-6)).unwrap();
        let shift = shift_diagonal(&w, n, 1e-3).unwrap();
        let mut opts = MaxEigOptions::default();
        opts.max_iter = 2000;
        let sol = min_max_eigenvalue(&w, n, None, &opts).unwrap();
        assert!(sol.d.iter().all(|&v| v >= 0.0), "n = {n}: negative d");
        let (lmin, lmax) = extremes(&w, &sol.d, n);
        // Jacobi's eigenvalues are accurate to ~1e-13 here.
        assert!(lmin >= -1e-10, "n = {n}: W + D has λ_min = {lmin}");
        assert!(
            (lmax - sol.lambda_max).abs() <= 1e-9 * lmax.max(1.0),
            "n = {n}: reported λ_max {} vs {lmax}",
            sol.lambda_max
        );
        let (_, l_trace) = extremes(&w, &trace, n);
        let (_, l_shift) = extremes(&w, &shift, n);
        eprintln!(
            "n = {n}: max {lmax:.5} (bound {:.5}, {} iterations), trace {l_trace:.5}, shift {l_shift:.5}",
            sol.lower_bound, sol.iterations
        );
        assert!(lmax <= l_shift + 1e-9, "n = {n}: {lmax} > shift {l_shift}");
        assert!(lmax <= l_trace + 1e-9, "n = {n}: {lmax} > trace {l_trace}");
        // The certificate bounds every feasible point from below.
        assert!(
            sol.lower_bound <= lmax.min(l_trace).min(l_shift) + 1e-9,
            "n = {n}: {sol:?}"
        );
        if lmax < l_trace.min(l_shift) - 1e-3 {
            strict_wins += 1;
        }
    }
    // Random W: neither the trace nor the shift point is λ_max-optimal in general.
    assert!(
        strict_wins >= 3,
        "AB-max improved on both only {strict_wins} times in 5"
    );
}

#[test]
fn max_diagonal_starts_from_the_trace_choice() {
    let n = 12;
    let w = random_symmetric(n, 0.4, 7);
    let (trace, _) = trace_diagonal(&w, n, &SdpOptions::default()).unwrap();
    let (d, lambda, gap, sdp_gap) =
        max_diagonal(&w, n, &SdpOptions::default(), &MaxEigOptions::default()).unwrap();
    let (lmin, lmax) = extremes(&w, &d, n);
    let (_, l_trace) = extremes(&w, &trace, n);
    assert!(lmin >= -1e-10 && (lmax - lambda).abs() < 1e-9);
    assert!(lmax <= l_trace + 1e-9, "{lmax} > {l_trace}");
    assert!((0.0..=1.0).contains(&gap) && (0.0..=1.0).contains(&sdp_gap));
}

#[test]
fn dlp_preconditioner_reproduces_the_anisotropic_kernel() {
    let d = 9;
    let diag = [0.0, 0.3, 1.2, 0.05, 2.0, 0.0, 0.7, 0.001, 0.4];
    let floor = 0.05;
    let p = dlp_preconditioner(&diag, floor).unwrap();
    let mean = diag.iter().sum::<f64>() / d as f64;
    let (a, b) = (0.8, 0.5);
    let prop = FlipProposal::new(a, b).unwrap().preconditioned(&p).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(4);
    let mut g = vec![0.0; d];
    fill_normal(&mut rng, &mut g);
    let g: Vec<f32> = g.iter().map(|&v| v as f32).collect();
    for code in 0..1u32 << d {
        let x: Vec<u8> = (0..d).map(|i| ((code >> i) & 1) as u8).collect();
        let y: Vec<u8> = (0..d).map(|i| (((code * 7 + 3) >> i) & 1) as u8).collect();
        // exp(b gᵀ(y−x) − (y−x)ᵀ D̃ (y−x)/a) per coordinate, D̃ = max(D / (2 mean), floor / 2).
        let reference: f64 = (0..d)
            .map(|i| {
                let dn = (0.5 * diag[i] / mean).max(0.5 * floor);
                let sign = 1.0 - 2.0 * f64::from(x[i]);
                let l = b * f64::from(g[i]) * sign - dn / a;
                let flip = x[i] != y[i];
                let z = (l.exp() + 1.0).ln();
                if flip { l - z } else { -z }
            })
            .sum();
        let got = prop.log_q(&x, &g, &y).unwrap();
        assert!(
            (got - reference).abs() < 1e-5 * (1.0 + reference.abs()),
            "{code}: {got} vs {reference}"
        );
    }
    assert_eq!(dlp_preconditioner(&[0.0; 4], 0.05).unwrap(), vec![1.0; 4]);
    assert!(dlp_preconditioner(&[1.0], 0.0).is_err());
    assert!(dlp_preconditioner(&[-1.0], 0.5).is_err());
    assert!(dlp_preconditioner(&[f64::NAN], 0.5).is_err());
}

fn quadratic(d: usize, scale: f64, seed: u64) -> (Vec<f32>, Vec<f32>) {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut g = vec![0.0; d * d + d];
    fill_normal(&mut rng, &mut g);
    let w0: Vec<f32> = g[..d * d].iter().map(|&v| (v * scale) as f32).collect();
    let bias: Vec<f32> = g[d * d..].iter().map(|&v| v as f32).collect();
    (w0, bias)
}

/// Tunes a chain with `rule` on `model`, then checks the frozen kernel on `fresh` (the same
/// model: the check drives it with its own chain, which would leave incremental caches
/// elsewhere).
fn check_rule<T: langevin_core::BinaryTarget>(
    name: &str,
    rule: DiagonalRule,
    model: &mut T,
    fresh: &mut T,
    seed: u64,
) {
    let d = model.dim();
    let mut buf = BinBuf::new(&vec![0u8; d]);
    let mut chain = BinaryChain::new(buf.buffers(), model).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut settings = Ab2Settings::default();
    settings.diagonal = rule;
    let mut stats = Default::default();
    let (mut fitted, report) =
        tune_chain(model, &mut chain, &mut rng, &settings, &mut stats).unwrap();
    eprintln!("{name}: {report:?}");
    assert!(report.fallback.is_none(), "{name}: {report:?}");
    assert_eq!(report.diagonal, rule.name());
    match fitted.dlp_preconditioner.take() {
        Some(p) => {
            assert_eq!(report.balance, 0.5);
            let prop = FlipProposal::<FlipMathImpl>::with_math(report.step, 0.5)
                .unwrap()
                .preconditioned(&p)
                .unwrap();
            let mut kernel = Dmala::new(prop);
            check_binary_kernel(name, fresh, &mut kernel, N, seed + 1);
        }
        None => {
            let params = fitted.params(report.step, report.balance).unwrap();
            let (mut scratch, mut cached) = (vec![0.0; scratch_len(d)], vec![0u8; d]);
            let mut kernel = AbSecondOrder::new(params, &mut scratch, &mut cached).unwrap();
            check_binary_kernel(name, fresh, &mut kernel, N, seed + 1);
        }
    }
}

#[test]
fn dlp_trace_chains_are_exact() {
    let (w0, bias) = quadratic(7, 0.5, 41);
    let (mut c1, mut c2) = (vec![0.0f64; 14], vec![0.0f64; 14]);
    check_rule(
        "DLP-trace, quadratic d = 7",
        DiagonalRule::DlpTrace { floor: 0.05 },
        &mut BinaryQuadratic::new(&w0, &bias, &mut c1).unwrap(),
        &mut BinaryQuadratic::new(&w0, &bias, &mut c2).unwrap(),
        42,
    );
    let ising = || IsingLattice::<ConstDims<3, 3>>::new(0.35, 0.1, true).unwrap();
    check_rule(
        "DLP-trace, Ising 3×3",
        DiagonalRule::DlpTrace { floor: 0.05 },
        &mut ising(),
        &mut ising(),
        43,
    );
    check_rule(
        "DMALA rule, Ising 3×3",
        DiagonalRule::Dmala,
        &mut ising(),
        &mut ising(),
        44,
    );
}

#[test]
fn max_rule_chains_are_exact() {
    let (w0, bias) = quadratic(7, 0.5, 51);
    let (mut c1, mut c2) = (vec![0.0f64; 14], vec![0.0f64; 14]);
    check_rule(
        "AB-max, quadratic d = 7",
        DiagonalRule::Max,
        &mut BinaryQuadratic::new(&w0, &bias, &mut c1).unwrap(),
        &mut BinaryQuadratic::new(&w0, &bias, &mut c2).unwrap(),
        52,
    );
}

/// The first-order rule end to end: `run_ab2_chains` keeps `W = D = 0` and samples with the flip
/// kernel. Independent chains give independent per-coordinate means, so each marginal is
/// checked against enumeration with the between-chain standard error: `|mean − p_i| ≤ 6 se`
/// (with 64 chains, `P(|t₆₃| > 6) < 1e-7` per coordinate).
#[test]
fn first_order_rule_samples_the_exact_marginals() {
    use langevin_core::BinaryTarget;
    use langevin_std::ab2::run_ab2_chains;
    use langevin_std::binary::{BinaryModel, RunConfig};
    let d = 6;
    let (w, b) = quadratic(d, 0.4, 61);
    let mut cache = vec![0.0f64; 2 * d];
    let mut target = BinaryQuadratic::new(&w, &b, &mut cache).unwrap();
    let (mut p, mut z) = (vec![0.0f64; d], 0.0f64);
    let mut grad = vec![0.0f32; d];
    for s in 0..1u32 << d {
        let x: Vec<u8> = (0..d).map(|i| ((s >> i) & 1) as u8).collect();
        let e = target.log_density_and_grad(&x, &mut grad).unwrap().exp();
        z += e;
        for i in 0..d {
            p[i] += e * f64::from(x[i]);
        }
    }
    let p: Vec<f64> = p.iter().map(|v| v / z).collect();
    let model = BinaryModel::Quadratic { w, b };
    let mut settings = Ab2Settings::default();
    settings.diagonal = DiagonalRule::FirstOrder;
    let config = RunConfig {
        steps: 2000,
        burn_in: 100,
        thin: 1,
        chains: 64,
        seed: 7,
        threads: 2,
        first_chain: 0,
    };
    let run = run_ab2_chains(&model, &settings, &config, None, Keep::all()).unwrap();
    for (i, &exact) in p.iter().enumerate() {
        let means: Vec<f64> = run
            .chains
            .iter()
            .map(|c| {
                let n = c.draws.len() / d;
                (0..n).map(|k| f64::from(c.draws[k * d + i])).sum::<f64>() / n as f64
            })
            .collect();
        let c = means.len() as f64;
        let mean = means.iter().sum::<f64>() / c;
        let var = means.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / (c - 1.0);
        let se = (var / c).sqrt();
        assert!(
            (mean - exact).abs() <= 6.0 * se,
            "coordinate {i}: {mean} vs exact {exact} (se {se})"
        );
    }
}
