//! Every binary sampler through `langevin sample` on every binary kind: shapes, honest
//! evaluation counts, tuned parameters in the summary.

use crate::common;

use common::{ISING, LATTICE, QUADRATIC, RBM, Scratch, ok, samples};

const LOGISTIC: &str = r#"{"kind": "binary_logistic",
  "X": [[1, 0.5, -0.25, 0], [0, 1, 0.5, -0.5], [0.25, -1, 0, 1], [-0.5, 0, 1, 0.25],
        [1, 1, 0, -1], [0, -0.5, -1, 0.5]],
  "y": [1, 0, 1, 0, 1, 0]}"#;

const KINDS: [(&str, &str, usize); 5] = [
    ("binary_quadratic", QUADRATIC, 6),
    ("ising", ISING, 5),
    ("ising_lattice", LATTICE, 12),
    ("rbm", RBM, 6),
    ("binary_logistic", LOGISTIC, 4),
];

/// Samples `model` with the sampler words `sampler` (1500 steps, 300 of burn-in, 2 chains,
/// thinned by 3), writing `{tag}.npy`; returns the summary.
fn run(scratch: &Scratch, model: &str, sampler: &[&str], tag: &str) -> serde_json::Value {
    let args = "--steps 1500 --burn-in 300 --chains 2 --thin 3 --seed 5";
    let sampler = sampler.join(" ");
    scratch.sample(&format!("--model {model} {args} --sampler {sampler}"), tag)
}

#[test]
fn every_sampler_runs_on_every_binary_kind() {
    let scratch = Scratch::new("samplers");
    let samplers: [&[&str]; 6] = [
        &["gibbs"],
        &["gibbs", "--scan", "random"],
        &["gwg"],
        &["rwm"],
        &["ab"],
        &["acs"],
    ];
    for (kind, json, d) in KINDS {
        let model = format!("{kind}.json");
        scratch.write(&model, json);
        for (k, sampler) in samplers.iter().enumerate() {
            let tag = format!("{kind}-{k}");
            let s = run(&scratch, &model, sampler, &tag);
            let name = sampler[0];
            let (shape, draws) = samples(&scratch.path(&format!("{tag}.npy")));
            assert_eq!(shape, vec![2, 500, d], "{kind} {name}");
            assert!(draws.iter().all(|&x| x <= 1));
            assert!(
                draws.chunks_exact(d).any(|x| x != &draws[..d]),
                "{kind} {name}: stuck"
            );
            assert_eq!(s["sampler"], name);
            assert_eq!(s["domain"], "binary");
            assert_eq!(s["kind"], kind);
            let acceptance = s["acceptance_rate"].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&acceptance), "{kind} {name}");
            let tuned = &s["tuned"];
            match name {
                "gibbs" => {
                    // A sweep prices one flip per site: d evaluations per step, plus the start.
                    let steps = 1500 + 300;
                    assert_eq!(s["evals"], 2 * (1 + d * steps), "{kind} {name}");
                    assert_eq!(s["acceptance_rate"], 1.0);
                    assert!(s["step"].is_null() && s["balance"].is_null());
                    assert_eq!(s["scan"], if k == 0 { "systematic" } else { "random" });
                    assert!(tuned.is_null());
                }
                "gwg" => assert!(tuned.is_null() && s.get("scan").is_none()),
                "rwm" => {
                    for t in tuned.as_array().unwrap() {
                        let rate = t["rate"].as_f64().unwrap();
                        assert!(rate > 0.0 && rate <= 0.5, "{kind}: rate {rate}");
                        assert_eq!(t["frozen"], true);
                    }
                }
                "ab" => {
                    for t in tuned.as_array().unwrap() {
                        assert_eq!(t["frozen"], true);
                        assert!(t["tuning_steps"].as_u64().unwrap() <= 300);
                        let b = t["balance"].as_f64().unwrap();
                        assert!(b > 0.0 && b <= 1.0 && t["step"].as_f64().unwrap() > 0.0);
                    }
                }
                "acs" => {
                    for t in tuned.as_array().unwrap() {
                        assert_eq!(t["frozen"], true);
                        // The budget is a tenth of the whole run.
                        assert_eq!(t["budget"], 180);
                        assert!(t["tuning_steps"].as_u64().unwrap() <= 180);
                        assert_eq!(t["steps"].as_array().unwrap().len(), 20);
                        assert_eq!(t["balances"].as_array().unwrap().len(), 20);
                        assert!(t["a_min"].as_f64().unwrap() <= t["a_max"].as_f64().unwrap());
                    }
                }
                _ => unreachable!(),
            }
            if matches!(name, "rwm" | "ab" | "acs") {
                assert_eq!(tuned.as_array().unwrap().len(), 2, "{kind} {name}");
            }
        }
    }
}

#[test]
fn acs_extends_a_short_burn_in_to_its_tuning() {
    // 300 burn-in steps but a budget of a tenth of 3300 = 330: the tuning runs to its end
    // before the first kept step, and the summary says so.
    let scratch = Scratch::new("acs-burn");
    scratch.write("m.json", QUADRATIC);
    let s = {
        let args = [
            "sample",
            "--model",
            "m.json",
            "--sampler",
            "acs",
            "--steps",
            "3000",
            "--burn-in",
            "300",
            "--chains",
            "1",
            "--format",
            "json",
        ];
        let out = ok(&scratch.0, &args);
        serde_json::from_str::<serde_json::Value>(&out).unwrap()
    };
    let t = &s["tuned"][0];
    assert_eq!(t["frozen"], true);
    let tuning = t["tuning_steps"].as_u64().unwrap();
    assert!(tuning > 300 && tuning <= 330, "{tuning}");
    assert_eq!(s["burn_in_taken"].as_u64().unwrap(), tuning);
    assert_eq!(s["kept_per_chain"], 3000);
}

#[test]
fn table_reports_tuned_parameters() {
    let scratch = Scratch::new("tuned-table");
    scratch.write("m.json", ISING);
    for (sampler, part) in [("ab", "a = "), ("acs", "a_max"), ("rwm", "flip rate")] {
        let out = scratch.ok(&format!(
            "sample --model m.json --sampler {sampler} --steps 2000"
        ));
        let line = out
            .lines()
            .find(|l| l.starts_with("tuned"))
            .unwrap_or_else(|| panic!("{sampler}: no tuned line in {out}"));
        assert!(line.contains(part), "{line}");
    }
}
