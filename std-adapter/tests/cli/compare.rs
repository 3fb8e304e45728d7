//! `langevin compare`: a tiny run of the side-by-side comparison; names are checked.

use crate::common;

use common::{Scratch, ok};

/// Runs a tiny comparison (2 chains, 200 kept steps, 300 tuning steps, one thread) of these
/// models and samplers with `extra` flags; returns the JSON rows.
fn compare(name: &str, models: &str, samplers: &str, extra: &[&str]) -> Vec<serde_json::Value> {
    let scratch = Scratch::new(name);
    let mut args = vec!["compare", "--models", models, "--samplers", samplers];
    args.extend("--chains 2 --steps 200 --tune 300 --threads 1 --format json".split(' '));
    args.extend(extra);
    let out: serde_json::Value = serde_json::from_str(&ok(&scratch.0, &args)).unwrap();
    out["rows"].as_array().unwrap().clone()
}

fn names(rows: &[serde_json::Value]) -> Vec<&str> {
    rows.iter()
        .map(|r| r["sampler"].as_str().unwrap())
        .collect()
}

#[test]
fn compare_reports_one_row_per_model_and_sampler() {
    let rows = compare(
        "compare",
        "ising-grid",
        "dmala,ab-1st,ab-max",
        &["--max-iter", "3"],
    );
    let names = names(&rows);
    assert_eq!(names, ["ab-max", "ab-1st", "dmala"], "table order");
    for r in &rows {
        assert_eq!(r["model"], "ising-grid");
        assert_eq!(r["chains"], 2);
        assert_eq!(r["tuning_steps"], 600, "{r}");
        for k in ["ess_hamming_per_10k_evals", "ess_hamming_per_second"] {
            let v = r[k].as_f64().unwrap();
            assert!(v.is_finite() && v >= 0.0, "{k}: {r}");
        }
    }
    assert!(rows[0]["lambda_max"].is_f64(), "{}", rows[0]);
    assert_eq!(rows[2]["balance"].as_f64(), Some(0.5));
}

#[test]
fn compare_refuses_unknown_names() {
    let scratch = Scratch::new("compare-bad");
    scratch.refuses("compare --models ising-cube", &["ising-cube", "ising-ba"]);
    scratch.refuses("compare --samplers ab-min", &["ab-min", "dlp-trace"]);
    scratch.refuses("compare --chains 0", &["--chains"]);
}

#[test]
fn compare_runs_the_ordinal_gaussian_without_the_binary_only_rule() {
    let rows = compare(
        "compare-ordinal",
        "gaussian-rotated",
        "ab-trace,dlp-trace,dmala",
        &[],
    );
    let names = names(&rows);
    assert_eq!(names, ["ab-trace", "dmala"], "DLP-trace is binary only");
    for r in &rows {
        assert_eq!(r["model"], "gaussian-rotated");
        assert_eq!(r["tuning_steps"], 600, "{r}");
        let v = r["ess_hamming_per_10k_evals"].as_f64().unwrap();
        assert!(v.is_finite() && v > 0.0, "{r}");
    }
    assert!(rows[0]["lambda_max"].is_f64(), "{}", rows[0]);
    assert_eq!(rows[1]["balance"].as_f64(), Some(0.5));
}
