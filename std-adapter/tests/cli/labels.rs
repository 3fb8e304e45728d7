//! `langevin sample` on ordinal and categorical model files: every kind with every sampler
//! that applies, sample dtypes, summaries.

use crate::common;

use common::{
    MIXTURE, ORDINAL, POTTS, QUARTIC, Scratch, contains_all, label_samples, npy_variant, ok,
    summary, words,
};

/// `(kind, json, d, S, domain)`.
const KINDS: [(&str, &str, usize, usize, &str); 4] = [
    ("ordinal_quadratic", ORDINAL, 3, 5, "ordinal"),
    ("potts", POTTS, 4, 3, "categorical"),
    ("lattice_mixture", MIXTURE, 2, 300, "ordinal"),
    ("quartic_mixture", QUARTIC, 3, 7, "ordinal"),
];

#[test]
fn every_label_kind_with_every_sampler_that_applies() {
    let scratch = Scratch::new("labels");
    for (kind, json, d, s, domain) in KINDS {
        let model = format!("{kind}.json");
        scratch.write(&model, json);
        let mut samplers: Vec<Vec<&str>> = vec![
            vec!["dula", "--step", "1.5"],
            vec!["dmala", "--step", "1.5"],
            vec!["gibbs"],
            vec!["gibbs", "--scan", "random"],
            vec!["ab"],
            vec!["acs"],
        ];
        if domain == "categorical" {
            samplers.push(vec!["gwg"]);
        } else {
            samplers.push(vec!["dmala", "--step", "4", "--window", "2"]);
        }
        for (k, sampler) in samplers.iter().enumerate() {
            let (out, sum) = (format!("{kind}-{k}.npy"), format!("{kind}-{k}.json"));
            let args_line = format!(
                "sample --model {model} --steps 1200 --burn-in 300 --chains 3 --thin 4 --seed 9 --out {out} --summary {sum} --quiet --sampler"
            );
            let mut args = words(&args_line);
            args.extend(sampler);
            ok(&scratch.0, &args);
            let name = sampler[0];
            let (shape, dtype, values) = label_samples(&scratch.path(&out));
            assert_eq!(shape, vec![3, 300, d], "{kind} {name}");
            assert_eq!(dtype, if s <= 256 { "u8" } else { "i32" }, "{kind}");
            assert!(values.iter().all(|&v| (0..s as i64).contains(&v)), "{kind}");
            assert!(
                values.chunks_exact(d).any(|x| x != &values[..d]),
                "{kind} {name}: stuck"
            );
            let sm = summary(&scratch.path(&sum));
            assert_eq!(sm["sampler"], name);
            assert_eq!(sm["kind"], kind);
            assert_eq!(sm["domain"], domain);
            assert_eq!(sm["states"], s);
            assert_eq!(sm["dim"], d);
            assert_eq!(
                sm["statistic"],
                if domain == "ordinal" { "l1" } else { "hamming" }
            );
            for field in [
                "acceptance_rate",
                "mean_jump",
                "ns_per_step",
                "ess_min",
                "rhat_max",
            ] {
                assert!(sm[field].as_f64().is_some(), "{kind} {name}: {field}");
            }
            assert_eq!(sm["mean"].as_array().unwrap().len(), d);
            let jump = sm["mean_jump"].as_f64().unwrap();
            let changes = sm["mean_accepted_changes"].as_f64().unwrap();
            if domain == "categorical" && name != "gibbs" {
                // One step changes labels: the Hamming jump is the accepted changes.
                assert!((jump - changes).abs() < 1e-12, "{kind} {name}");
            } else if name != "gibbs" {
                // An ordinal change moves at least one value.
                assert!(jump >= changes, "{kind} {name}");
            }
            match name {
                "ab" | "acs" => {
                    let tuned = sm["tuned"].as_array().unwrap();
                    assert_eq!(tuned.len(), 3);
                    assert!(tuned.iter().all(|t| t["frozen"] == true));
                }
                "gibbs" => {
                    // d site updates per step, each pricing S − 1 other values.
                    let per_chain = 1 + d * (s - 1) * 1500;
                    assert_eq!(sm["evals"], 3 * per_chain, "{kind}");
                    assert!(sm.get("tuned").is_none());
                }
                _ => assert!(sm.get("tuned").is_none()),
            }
            if sampler.contains(&"--window") {
                assert_eq!(sm["window"], 2);
            }
        }
    }
}

#[test]
fn npy_arrays_in_label_model_files_give_the_same_draws() {
    let scratch = Scratch::new("label-npy");
    for (kind, json) in [("ordinal_quadratic", ORDINAL), ("potts", POTTS)] {
        let inline = scratch.write(&format!("{kind}.json"), json);
        let npy = npy_variant(&scratch, "arrays", json);
        let draws: Vec<Vec<u8>> = [inline, npy]
            .iter()
            .enumerate()
            .map(|(k, model)| {
                let out = format!("{kind}-{k}.npy");
                scratch.ok(&format!(
                    "sample --model {} --steps 300 --out {out} --quiet",
                    model.display()
                ));
                std::fs::read(scratch.path(&out)).unwrap()
            })
            .collect();
        assert_eq!(draws[0], draws[1], "{kind}");
    }
}

#[test]
fn table_and_csv_for_labels() {
    let scratch = Scratch::new("label-table");
    scratch.write("m.json", MIXTURE);
    let out = scratch.ok("sample --model m.json --sampler acs --a-max 400 --a-min 2 --steps 2000 --chains 2 --csv s.csv");
    contains_all(
        &out,
        &[
            "ordinal lattice_mixture",
            "S = 300",
            "L1 jump per step",
            "a_max 400",
            "R-hat",
        ],
    );
    let csv = std::fs::read_to_string(scratch.path("s.csv")).unwrap();
    assert_eq!(csv.lines().next().unwrap(), "chain,draw,x_0,x_1");
    assert_eq!(csv.lines().count(), 1 + 2 * 2000);
}

#[test]
fn a_window_bounds_every_move() {
    let scratch = Scratch::new("window");
    scratch.write("m.json", MIXTURE);
    for sampler in ["dula", "dmala", "ab", "acs"] {
        let out = format!("{sampler}.npy");
        // A wide step for the samplers that take one (acs searches its own).
        let step = if sampler == "acs" { "" } else { "--step 50" };
        scratch.ok(&format!(
                "sample --model m.json --sampler {sampler} {step} --window 3 --steps 2000 --chains 2 --out {out} --quiet"
            ));
        let (shape, _, values) = label_samples(&scratch.path(&out));
        let per_chain = shape[1] * shape[2];
        let mut largest = 0;
        for chain in values.chunks_exact(per_chain) {
            for (a, b) in chain.chunks_exact(2).zip(chain.chunks_exact(2).skip(1)) {
                largest = largest.max((a[0] - b[0]).abs()).max((a[1] - b[1]).abs());
            }
        }
        // The window is reached (the step is wide) and never passed.
        assert_eq!(largest, 3, "{sampler}");
    }
}
