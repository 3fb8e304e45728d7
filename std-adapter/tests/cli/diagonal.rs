//! `langevin sample --sampler ab2 --diagonal max|dlp-trace`: the rule reaches the schedule and
//! the summary reports it with what it chose. Exactness through the command line is in
//! `exact.rs`.

use crate::common;

use common::{QUADRATIC, Scratch, expect, summary};

fn run(scratch: &Scratch, rule: &str) -> serde_json::Value {
    let model = scratch.write("quad.json", QUADRATIC);
    let sum = format!("{rule}.json");
    scratch.ok(&format!(
            "sample --model {} --sampler ab2 --diagonal {rule} --steps 500 --burn-in 100 --chains 2 --seed 3 --summary {sum} --quiet",
            model.display()
        ));
    summary(&scratch.path(&sum))
}

#[test]
fn max_rule_reports_a_certified_largest_eigenvalue() {
    let scratch = Scratch::new("diag-max");
    let s = run(&scratch, "max");
    assert_eq!(s["sampler"], "ab2");
    assert_eq!(s["diagonal"], "max");
    for t in s["tuned"].as_array().unwrap() {
        assert_eq!(t["diagonal"], "max", "{t}");
        assert!(t["fallback"].is_null(), "{t}");
        let lambda = t["lambda_max"].as_f64().unwrap();
        let gap = t["max_gap"].as_f64().unwrap();
        assert!(lambda.is_finite() && lambda >= 0.0, "{t}");
        assert!((0.0..=1.0).contains(&gap), "{t}");
        assert!(t["trace_d"].as_f64().unwrap() >= 0.0, "{t}");
    }
}

#[test]
fn dlp_trace_rule_runs_first_order_at_balance_one_half() {
    let scratch = Scratch::new("diag-dlp");
    let s = run(&scratch, "dlp-trace");
    assert_eq!(s["diagonal"], "dlp-trace");
    for t in s["tuned"].as_array().unwrap() {
        assert_eq!(t["diagonal"], "dlp-trace", "{t}");
        assert_eq!(t["balance"].as_f64(), Some(0.5), "{t}");
        let range = t["precond_range"].as_array().unwrap();
        let (lo, hi) = (range[0].as_f64().unwrap(), range[1].as_f64().unwrap());
        // p_i = 1/√(2 D̃_i) with D̃ of mean ½ floored at 0.025: p ≤ 1/√0.05.
        assert!(
            0.0 < lo && lo <= hi && hi <= 1.0 / 0.05f64.sqrt() + 1e-6,
            "{t}"
        );
        assert!(t["lambda_max"].is_null(), "{t}");
    }
}

#[test]
fn the_table_names_the_rule_and_bad_rules_fail() {
    let scratch = Scratch::new("diag-table");
    let model = scratch.write("quad.json", QUADRATIC);
    let m = model.to_str().unwrap();
    let out = scratch.ok(&format!(
        "sample --model {m} --sampler ab2 --diagonal max --steps 200 --burn-in 10 --chains 1"
    ));
    assert!(
        out.lines()
            .any(|l| l.starts_with("diagonal") && l.trim_end().ends_with("max")),
        "{out}"
    );
    let line = scratch.fails(&format!(
        "sample --model {m} --sampler ab2 --diagonal maximal"
    ));
    expect(&line, &["maximal", "dlp-trace"]);
}
