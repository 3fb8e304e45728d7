//! `langevin sample --sampler ab2` on an ordinal model, end to end.
//!
//! The lattice Gaussian `U(x) = −½(x−μ)ᵀA(x−μ) + bᵀx` on `{0..4}³` is enumerated for its exact
//! marginal means and standard deviations `σ_i`. The run keeps draws 20 steps apart from 200
//! independent chains, each tuned for thousands of steps first, so (as in `exact.rs`) the
//! `n = 2000` kept draws are treated as independent draws from the target: each sample mean
//! has standard deviation `σ_i/√n`, and with a false-positive rate of 1e-6 split over the three
//! coordinates (Bonferroni, two-sided: `z = 5.2`; we use 5.5) every error stays below
//! `5.5 σ_i/√n`.
//!
//! For a quadratic target the burn-in pairs satisfy `Δ∇U = −A Δx` exactly up to the rounding
//! of the gradient to `f32`, so the fitted `W` reproduces them to a relative residual far
//! below `1e-4` (single precision gives about `1e-7`), once all three directions were explored.

use crate::common;

use common::{ORDINAL, Scratch, label_samples, numbers, summary};

const Z: f64 = 5.5;

/// Exact means and standard deviations of each coordinate of `exp(u(x))` over `{0..S−1}^d`.
fn exact_moments(d: usize, s: usize, u: impl Fn(&[usize]) -> f64) -> (Vec<f64>, Vec<f64>) {
    let (mut m1, mut m2) = (vec![0.0; d], vec![0.0; d]);
    for (x, p) in common::exact_law(d, s, u) {
        for (i, &v) in x.iter().enumerate() {
            m1[i] += p * v as f64;
            m2[i] += p * (v * v) as f64;
        }
    }
    let sd = m1
        .iter()
        .zip(&m2)
        .map(|(a, b)| (b - a * a).sqrt())
        .collect();
    (m1, sd)
}

#[test]
fn ab2_samples_an_ordinal_lattice_gaussian() {
    let scratch = Scratch::new("ab2-ordinal");
    scratch.write("ord.json", ORDINAL);
    let a = [
        [0.5, 0.125, 0.0],
        [0.125, 0.375, -0.125],
        [0.0, -0.125, 0.75],
    ];
    let (mu, b) = ([2.0, 1.5, 3.0], [0.25, 0.0, -0.125]);
    let (d, s) = (3usize, 5usize);
    let (mean, sd) = exact_moments(d, s, |x| common::quadratic_u(x, &a, &mu, &b));
    let (chains, per_chain, thin) = (200usize, 10usize, 20usize);
    let steps = (per_chain * thin).to_string();
    let (chains_text, thin_text) = (chains.to_string(), thin.to_string());
    for (tag, diagonal) in [("trace", "trace"), ("shift", "shift")] {
        let (out, sum) = (format!("{tag}.npy"), format!("{tag}.json"));
        scratch.ok(&format!(
                "sample --model ord.json --sampler ab2 --diagonal {diagonal} --chains {chains_text} --steps {steps} --burn-in 100 --thin {thin_text} --seed 3 --exact --out {out} --summary {sum} --quiet"
            ));
        let sm = summary(&scratch.path(&sum));
        assert_eq!(sm["sampler"], "ab2", "{tag}");
        assert_eq!(sm["domain"], "ordinal", "{tag}");
        assert_eq!(sm["kind"], "ordinal_quadratic", "{tag}");
        let tuned = sm["tuned"].as_array().expect("tuned per chain");
        assert_eq!(tuned.len(), chains);
        let mut residual_max = 0.0f64;
        for t in tuned {
            assert_eq!(t["sampler"], "ab2");
            assert!(t["fallback"].is_null(), "{tag}: fell back: {t}");
            assert_eq!(t["explored"], 3, "{tag}: {t}");
            let residual = t["fit_residual"].as_f64().expect("a fitted W");
            residual_max = residual_max.max(residual);
            let trace_d = t["trace_d"].as_f64().unwrap();
            assert!(
                trace_d.is_finite() && trace_d >= 0.0,
                "{tag}: trace D {trace_d}"
            );
            let (step, balance) = (t["step"].as_f64().unwrap(), t["balance"].as_f64().unwrap());
            assert!(step > 0.0 && step.is_finite(), "{tag}: a = {step}");
            assert!(balance > 0.0 && balance <= 1.0, "{tag}: b = {balance}");
        }
        assert!(
            residual_max < 1e-4,
            "{tag}: fitted-W residual {residual_max}"
        );
        let (shape, _, values) = label_samples(&scratch.path(&out));
        assert_eq!(shape, vec![chains, per_chain, d]);
        let n = (chains * per_chain) as f64;
        let reported = numbers(&sm["mean"]);
        for i in 0..d {
            let ours = values.iter().skip(i).step_by(d).sum::<i64>() as f64 / n;
            assert!((ours - reported[i]).abs() < 1e-12, "{tag}: mean[{i}]");
            let bound = Z * sd[i] / n.sqrt();
            eprintln!(
                "{tag}: mean[{i}] {ours:.4}, exact {:.4}, |error| {:.4} < {bound:.4}",
                mean[i],
                (ours - mean[i]).abs()
            );
            assert!(
                (ours - mean[i]).abs() < bound,
                "{tag}: mean[{i}] = {ours}, exact {}, bound {bound}",
                mean[i]
            );
        }
        // The marginal RMSE the command reports: each P̂(x_i = k) has sd ≤ ½/√n.
        let rmse = sm["marginal_rmse"].as_f64().unwrap();
        assert!(rmse < Z * 0.5 / n.sqrt(), "{tag}: marginal RMSE {rmse}");
        assert!(sm["mean_jump"].as_f64().unwrap() > 0.0, "{tag}: no L1 jump");
        let acceptance = sm["acceptance_rate"].as_f64().unwrap();
        eprintln!(
            "{tag}: fitted-W residual ≤ {residual_max:e}, acceptance {acceptance:.3}, RMSE {rmse:.4}"
        );
    }
}

#[test]
fn ab2_refuses_categorical_models() {
    let scratch = Scratch::new("ab2-potts");
    scratch.write("potts.json", common::POTTS);
    scratch.refuses(
        "sample --model potts.json --sampler ab2 --steps 10",
        &["sampler ab2 does not apply to categorical models"],
    );
}

/// Chains take all their randomness from their own streams: the draws and the tuned parameters
/// do not depend on the number of threads.
#[test]
fn ab2_ordinal_output_does_not_depend_on_threads() {
    let scratch = Scratch::new("ab2-ordinal-threads");
    scratch.write("ord.json", ORDINAL);
    let runs: Vec<(Vec<u8>, serde_json::Value)> = ["1", "3"]
        .iter()
        .map(|threads| {
            let (out, sum) = (format!("{threads}.npy"), format!("{threads}.json"));
            scratch.ok(&format!("sample --model ord.json --sampler ab2 --chains 4 --steps 300 --burn-in 50 --seed 5 --threads {threads} --out {out} --summary {sum} --quiet"));
            (
                std::fs::read(scratch.path(&out)).unwrap(),
                summary(&scratch.path(&sum)),
            )
        })
        .collect();
    assert_eq!(runs[0].0, runs[1].0, "draws differ");
    assert_eq!(
        runs[0].1["tuned"], runs[1].1["tuned"],
        "tuned parameters differ"
    );
    assert_eq!(runs[0].1["mean"], runs[1].1["mean"]);
}
