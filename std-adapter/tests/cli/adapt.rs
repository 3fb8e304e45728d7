//! `dmala --adapt acceptance` through `langevin sample` on a model of each domain: the step is
//! tuned over exactly the burn-in, frozen, and reported (expected changes, `ln τ`, the
//! equivalent step where `τ < 1`).

use crate::common;

use common::{ISING, ORDINAL, POTTS, Scratch, fails, ok, summary, words};

#[test]
fn adapted_dmala_tunes_over_the_burn_in_on_every_domain() {
    let scratch = Scratch::new("adapt");
    for (name, json, domain) in [
        ("ising", ISING, "binary"),
        ("ordinal", ORDINAL, "ordinal"),
        ("potts", POTTS, "categorical"),
    ] {
        let model = format!("{name}.json");
        scratch.write(&model, json);
        let line = format!(
            "sample --model {model} --sampler dmala --adapt acceptance --steps 600 --burn-in 300 --chains 2 --seed 4 --out {name}.npy --summary {name}.s.json --quiet"
        );
        ok(&scratch.0, &words(&line));
        let s = summary(&scratch.path(&format!("{name}.s.json")));
        assert_eq!(s["sampler"], "dmala");
        assert_eq!(s["domain"], domain);
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
    let out = ok(
        &scratch.0,
        &words(
            "sample --model m.json --sampler dmala --adapt acceptance --steps 500 --burn-in 200",
        ),
    );
    let line = out.lines().find(|l| l.starts_with("tuned")).unwrap();
    assert!(line.contains("expected changes"), "{line}");
    let err = fails(
        &scratch.0,
        &words("sample --model m.json --sampler dmala --adapt acceptance --target-acceptance 1.5"),
    );
    assert!(err.contains("target acceptance"), "{err}");
}
