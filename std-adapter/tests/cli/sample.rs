//! `langevin sample` end to end on every binary model kind, with arrays inline and in `.npy`
//! files, and every output form.

use crate::common;

use common::{ISING, LATTICE, QUADRATIC, RBM, Scratch, npy_variant, ok, samples, words};

const KINDS: [(&str, &str, usize); 4] = [
    ("binary_quadratic", QUADRATIC, 6),
    ("ising", ISING, 5),
    ("ising_lattice", LATTICE, 12),
    ("rbm", RBM, 6),
];

#[test]
fn every_kind_samples_and_npy_arrays_give_the_same_draws_as_json_arrays() {
    let scratch = Scratch::new("kinds");
    for (kind, inline, d) in KINDS {
        let json = scratch.write(&format!("{kind}.json"), inline);
        // Run from the scratch root: arrays resolve against the model file's folder.
        let npy = npy_variant(&scratch, "models", inline);
        let mut outputs = Vec::new();
        for (tag, model) in [("json", &json), ("npy", &npy)] {
            let out = scratch.path(&format!("{kind}-{tag}.npy"));
            let summary = scratch.path(&format!("{kind}-{tag}.summary.json"));
            let stdout = scratch.ok(&format!(
                    "sample --model {} --steps 300 --burn-in 50 --chains 3 --thin 2 --seed 11 --out {} --summary {}",
                    model.display(),
                    out.display(),
                    summary.display()
                ));
            assert!(stdout.contains("acceptance"), "{stdout}");
            let (shape, draws) = samples(&out);
            assert_eq!(shape, vec![3, 150, d], "{kind}");
            assert!(draws.iter().all(|&x| x <= 1));
            // Chains move: a sampler stuck at its start would be a broken pipeline.
            assert!(draws.chunks_exact(d).any(|x| x != &draws[..d]));
            let summary: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
            assert_eq!(summary["dim"], d);
            assert_eq!(summary["kept_per_chain"], 150);
            outputs.push(std::fs::read(&out).unwrap());
        }
        assert_eq!(
            outputs[0], outputs[1],
            "{kind}: .npy arrays changed the draws"
        );
    }
}

#[test]
fn relative_array_paths_resolve_against_the_model_file_not_the_working_folder() {
    let scratch = Scratch::new("relative");
    let model = npy_variant(&scratch, "deep/er", RBM);
    std::fs::create_dir_all(scratch.path("elsewhere")).unwrap();
    let model = model.canonicalize().unwrap();
    ok(
        &scratch.path("elsewhere"),
        &words(&format!(
            "sample --model {} --steps 20 --quiet",
            model.display()
        )),
    );
    // A relative model path works too, from the folder above.
    ok(
        &scratch.path("deep"),
        &words("sample --model er/rbm.json --steps 20 --quiet"),
    );
    // Moving the JSON away from its arrays breaks it, and the message names the file, the
    // field and the array file.
    std::fs::copy(&model, scratch.path("alone.json")).unwrap();
    let line = scratch.fails("sample --model alone.json --steps 20");
    assert!(line.starts_with("error: alone.json: field `"), "{line}");
    assert!(line.contains("arrays/rbm_"), "{line}");
}

#[test]
fn json_format_csv_and_quiet() {
    let scratch = Scratch::new("formats");
    scratch.write("m.json", QUADRATIC);
    let args = words("sample --model m.json --steps 40 --burn-in 5 --chains 2 --seed 3");
    let mut with = args.to_vec();
    with.extend(["--format", "json", "--csv", "s.csv", "--out", "s.npy"]);
    let stdout = ok(&scratch.0, &with);
    let summary: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(summary["sampler"], "dmala");
    assert_eq!(summary["chains"], 2);
    assert!(summary["acceptance_rate"].as_f64().unwrap() > 0.0);
    assert!(summary["ess_per_second"].as_f64().is_some());
    // The CSV holds exactly the draws of the .npy file.
    let (shape, draws) = samples(&scratch.path("s.npy"));
    let csv = std::fs::read_to_string(scratch.path("s.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(lines.next().unwrap(), "chain,draw,x_0,x_1,x_2,x_3,x_4,x_5");
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), shape[0] * shape[1]);
    for (k, (row, draw)) in rows.iter().zip(draws.chunks_exact(6)).enumerate() {
        let cells: Vec<&str> = row.split(',').collect();
        assert_eq!(cells[0], (k / shape[1]).to_string());
        assert_eq!(cells[1], (k % shape[1]).to_string());
        let values: Vec<u8> = cells[2..].iter().map(|c| c.parse().unwrap()).collect();
        assert_eq!(values, draw);
    }
    // Table is the default; --quiet prints nothing at all.
    assert!(ok(&scratch.0, &args).contains("R-hat"));
    let mut quiet = args.to_vec();
    quiet.push("--quiet");
    let out = common::langevin(&scratch.0, &quiet);
    assert!(out.status.success() && out.stdout.is_empty() && out.stderr.is_empty());
}

#[test]
fn same_seed_same_bytes_other_seed_other_draws() {
    let scratch = Scratch::new("seeds");
    scratch.write("m.json", ISING);
    let run = |seed: &str, out: &str| {
        scratch.ok(&format!(
            "sample --model m.json --steps 200 --seed {seed} --out {out} --quiet"
        ));
        std::fs::read(scratch.path(out)).unwrap()
    };
    assert_eq!(run("5", "a.npy"), run("5", "b.npy"));
    assert_ne!(run("5", "a.npy"), run("6", "c.npy"));
}

/// Upper 1e-6 points of the chi-square distribution with 1..=7 degrees of freedom.
const CHI2_CRITICAL: [f64; 7] = [23.93, 27.63, 30.66, 33.38, 35.89, 38.26, 40.52];

#[test]
fn draws_follow_the_model_file() {
    // Draws 300 steps apart, after a 300-step burn-in, from 400 independent chains are
    // independent draws from the target for this test's purpose (DMALA is exact; on 8 states
    // the chain forgets its state within a few steps, so what 300 steps leave is far below
    // the test's resolution). A pooled chi-square test at α = 1e-6 against the exact
    // probabilities of U(x) = xᵀWx + bᵀx catches a sign error (U as an energy), a lost
    // field or a misread matrix. (Few chains: each chain's stream costs one jump per chain
    // before it.)
    let scratch = Scratch::new("exact");
    let w = [[0.0, 0.75, -0.5], [0.25, 0.0, 0.5], [0.0, -0.75, 0.0]];
    let b = [0.5, -1.0, 0.25];
    scratch.write(
        "m.json",
        &serde_json::json!({"kind": "binary_quadratic", "W": w, "b": b}).to_string(),
    );
    let (chains, per_chain) = (400usize, 10usize);
    ok(
        &scratch.0,
        &[
            "sample",
            "--model",
            "m.json",
            "--steps",
            "3000",
            "--thin",
            "300",
            "--burn-in",
            "300",
            "--chains",
            &chains.to_string(),
            "--step",
            "0.5",
            "--out",
            "s.npy",
            "--quiet",
        ],
    );
    let (shape, draws) = samples(&scratch.path("s.npy"));
    assert_eq!(shape, vec![chains, per_chain, 3]);
    let u = |x: [f64; 3]| {
        let mut s = 0.0;
        for i in 0..3 {
            s += b[i] * x[i];
            for j in 0..3 {
                s += x[i] * w[i][j] * x[j];
            }
        }
        s
    };
    let weights: Vec<f64> = (0..8)
        .map(|k| u([k & 1, (k >> 1) & 1, (k >> 2) & 1].map(|v| v as f64)).exp())
        .collect();
    let z: f64 = weights.iter().sum();
    let mut counts = [0usize; 8];
    for x in draws.chunks_exact(3) {
        counts[usize::from(x[0]) | usize::from(x[1]) << 1 | usize::from(x[2]) << 2] += 1;
    }
    // Pool cells with expected count below 5 (none here, but keep the rule).
    let n = (chains * per_chain) as f64;
    let (mut stat, mut cells, mut pooled_e, mut pooled_o) = (0.0, 0usize, 0.0, 0.0);
    for (k, &c) in counts.iter().enumerate() {
        let e = n * weights[k] / z;
        if e < 5.0 {
            pooled_e += e;
            pooled_o += c as f64;
        } else {
            stat += (c as f64 - e).powi(2) / e;
            cells += 1;
        }
    }
    if pooled_e > 0.0 {
        stat += (pooled_o - pooled_e).powi(2) / pooled_e;
        cells += 1;
    }
    let critical = CHI2_CRITICAL[cells - 2];
    assert!(
        stat < critical,
        "chi-square {stat} ≥ {critical}, counts {counts:?}"
    );
}

#[test]
fn diagnostics_depth_is_chosen_and_recorded() {
    let scratch = Scratch::new("diagnostics-depth");
    scratch.ok("model ising-lattice --rows 4 --cols 4 --out m.json");
    let summary = |depth: &str| {
        scratch.ok(&format!(
            "sample --model m.json --sampler dmala --steps 400 --burn-in 50 --chains 2 \
                 --seed 3 --out d.npy --summary s.json --diagnostics {depth}"
        ));
        let text = std::fs::read_to_string(scratch.0.join("s.json")).unwrap();
        serde_json::from_str::<serde_json::Value>(&text).unwrap()
    };
    let full = summary("full");
    assert_eq!(full["diagnostics"], "full");
    assert_eq!(full["per_coordinate"], true);
    assert!(full["ess_min"].as_f64().unwrap() > 0.0);
    let cheap = summary("summary");
    assert_eq!(cheap["diagnostics"], "summary");
    assert_eq!(cheap["per_coordinate"], false);
    assert!(cheap["ess_min"].is_null());
    // The statistic's figures do not depend on how much else is computed.
    assert_eq!(cheap["ess_statistic"], full["ess_statistic"]);
    assert!(full["rhat_max"].as_f64() >= cheap["rhat_max"].as_f64());
    let none = summary("none");
    assert_eq!(none["diagnostics"], "none");
    assert!(none.get("ess_statistic").is_none());
    assert_eq!(none["mean"], full["mean"]);
}
