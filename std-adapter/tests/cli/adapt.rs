//! `dmala --adapt acceptance` through `langevin sample` on a model of each domain: the step is
//! tuned over exactly the burn-in, frozen, and reported (expected changes, `ln τ`, the
//! equivalent step where `τ < 1`).

use crate::common;

use common::{ISING, ORDINAL, POTTS, Scratch, numbers, summary};

/// A model of each domain: its name, its JSON and the domain its summary names.
const EVERY_DOMAIN: [(&str, &str, &str); 3] = [
    ("ising", ISING, "binary"),
    ("ordinal", ORDINAL, "ordinal"),
    ("potts", POTTS, "categorical"),
];

/// Samples a model of every domain (written as `{name}.json`) with `--sampler {sampler}` and
/// the words `args` (2 chains, seed 4); checks that each summary names the sampler and the
/// domain, and returns each model's name, domain and summary.
fn sample_every_domain(
    scratch: &Scratch,
    sampler: &str,
    args: &str,
) -> Vec<(&'static str, &'static str, serde_json::Value)> {
    let mut out = Vec::new();
    for (name, json, domain) in EVERY_DOMAIN {
        scratch.write(&format!("{name}.json"), json);
        scratch.ok(&format!(
            "sample --model {name}.json --sampler {sampler} {args} --chains 2 --seed 4 \
             --out {name}.npy --summary {name}.s.json --quiet"
        ));
        let s = summary(&scratch.path(&format!("{name}.s.json")));
        assert_eq!(s["sampler"], sampler, "{name}");
        assert_eq!(s["domain"], domain, "{name}");
        out.push((name, domain, s));
    }
    out
}

#[test]
fn adapted_dmala_tunes_over_the_burn_in_on_every_domain() {
    let scratch = Scratch::new("adapt");
    let args = "--adapt acceptance --steps 600 --burn-in 300";
    for (name, domain, s) in sample_every_domain(&scratch, "dmala", args) {
        assert!(s["step"].is_null(), "{name}: a fixed step is not reported");
        let tuned = s["tuned"].as_array().unwrap();
        assert_eq!(tuned.len(), 2, "{name}");
        for t in tuned {
            assert_eq!(t["frozen"], true, "{name}");
            assert_eq!(t["tuning_steps"], 300, "{name}");
            assert_eq!(t["target_acceptance"], 0.574, "{name}");
            assert!(t["expected_changes"].as_f64().unwrap() >= 1.0, "{name}");
            let log_tau = t["log_scale"].as_f64().unwrap();
            // The equivalent step exists exactly where τ < 1.
            assert_eq!(t["step"].is_null(), log_tau >= 0.0, "{name}: {t}");
            if let Some(a) = t["step"].as_f64() {
                let per_move = if domain == "categorical" { 1.0 } else { 0.5 };
                assert!((a + per_move / log_tau).abs() <= 1e-9 * a, "{name}: {t}");
            }
        }
    }
}

#[test]
fn adapted_dmala_prints_its_tuning_and_checks_its_target() {
    let scratch = Scratch::new("adapt-table");
    scratch.write("m.json", ISING);
    let out = scratch
        .ok("sample --model m.json --sampler dmala --adapt acceptance --steps 500 --burn-in 200");
    let line = out.lines().find(|l| l.starts_with("tuned")).unwrap();
    assert!(line.contains("expected changes"), "{line}");
    let err = scratch
        .fails("sample --model m.json --sampler dmala --adapt acceptance --target-acceptance 1.5");
    assert!(err.contains("target acceptance"), "{err}");
}

/// Replica exchange on a model of each domain: the draws are the cold chain's, the ladder
/// starts at β = 1 and decreases, and the swap rates of the kept phase are reported.
#[test]
fn pt_dmala_runs_on_every_domain_and_reports_its_ladder() {
    let scratch = Scratch::new("pt-dmala");
    let args = "--replicas 3 --steps 400 --burn-in 200";
    for (name, _, s) in sample_every_domain(&scratch, "pt-dmala", args) {
        assert_eq!(s["kept_per_chain"], 400);
        // Three replicas cost at least three evaluations per step.
        let steps = 2 * (400 + 200);
        assert!(
            s["evals"].as_u64().unwrap() >= 3 * steps,
            "{name}: {}",
            s["evals"]
        );
        for t in s["tuned"].as_array().unwrap() {
            assert_eq!(t["frozen"], true, "{name}");
            assert_eq!(t["sweeps"], 600, "{name}");
            let betas = numbers(&t["betas"]);
            assert_eq!(betas.len(), 3);
            assert_eq!(betas[0], 1.0);
            assert!(
                betas.windows(2).all(|w| w[1] < w[0] && w[1] > 0.0),
                "{betas:?}"
            );
            let proposed: u64 = t["swaps_proposed"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap())
                .sum();
            // One pair per sweep of the kept phase (pairs alternate with 3 replicas).
            assert_eq!(proposed, 400, "{name}");
        }
    }
    scratch.refuses(
        "sample --model ising.json --sampler pt-dmala --replicas 0",
        &["replicas"],
    );
}
