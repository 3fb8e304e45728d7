//! The same seed and chain count give the same `samples.npy` bytes on 1, 2 and 4 threads.

use crate::common;

use common::{Scratch, ok, words};

#[test]
fn thread_count_does_not_change_the_samples() {
    let scratch = Scratch::new("threads");
    // A model big enough that chains take turns on the workers in different orders.
    scratch.ok("model rbm --visible 40 --hidden 12 --seed 4 --out rbm.json");
    scratch.ok("model ising-ba --nodes 60 --edges-per-node 3 --seed 2 --out ba.json");
    for model in ["rbm.json", "ba.json"] {
        for sampler in ["dmala", "dula"] {
            let files: Vec<Vec<u8>> = ["1", "2", "4"]
                .iter()
                .map(|threads| {
                    let out = format!("{model}-{sampler}-{threads}.npy");
                    scratch.ok(&format!("sample --model {model} --sampler {sampler} --chains 5 --steps 2000 --burn-in 100 --seed 21 --threads {threads} --out {out} --quiet"));
                    std::fs::read(scratch.path(&out)).unwrap()
                })
                .collect();
            assert_eq!(files[0], files[1], "{model} {sampler}: 1 vs 2 threads");
            assert_eq!(files[0], files[2], "{model} {sampler}: 1 vs 4 threads");
        }
    }
}

#[test]
fn tuned_and_label_samplers_are_thread_count_invariant() {
    let scratch = Scratch::new("threads-tuned");
    scratch.write("potts.json", common::POTTS);
    scratch.write("mix.json", common::MIXTURE);
    scratch.ok("model ising-lattice --rows 6 --cols 6 --coupling 0.4 --out lat.json");
    let cases: [(&str, &[&str]); 8] = [
        ("lat.json", &["ab"]),
        ("lat.json", &["ab2"]),
        ("lat.json", &["acs"]),
        ("lat.json", &["rwm"]),
        ("lat.json", &["gibbs", "--scan", "random"]),
        ("potts.json", &["acs"]),
        ("potts.json", &["gwg"]),
        ("mix.json", &["ab", "--window", "20"]),
    ];
    for (k, (model, sampler)) in cases.iter().enumerate() {
        let runs: Vec<(Vec<u8>, serde_json::Value)> = ["1", "2", "3"]
            .iter()
            .map(|threads| {
                let (out, sum) = (format!("{k}-{threads}.npy"), format!("{k}-{threads}.json"));
                let args_line = format!("sample {model} --chains 5 --steps 1500 --burn-in 400 --seed 8 --threads {threads} --out {out} --summary {sum} --quiet --sampler");
                let mut args = words(&args_line);
                args.insert(1, "--model");
                args.extend(*sampler);
                ok(&scratch.0, &args);
                (
                    std::fs::read(scratch.path(&out)).unwrap(),
                    common::summary(&scratch.path(&sum)),
                )
            })
            .collect();
        for r in &runs[1..] {
            assert_eq!(runs[0].0, r.0, "{model} {sampler:?}: draws differ");
            assert_eq!(runs[0].1["tuned"], r.1["tuned"], "{model} {sampler:?}");
            assert_eq!(runs[0].1["evals"], r.1["evals"], "{model} {sampler:?}");
        }
    }
}

/// `--batch` on an ordinal quadratic model: the draws file and the summary's sampling
/// statistics are those of the per-chain run, on any thread count and batch size.
#[test]
fn batched_ordinal_runs_equal_the_per_chain_run() {
    let scratch = Scratch::new("threads-batched-ordinal");
    scratch.ok("model lattice-gaussian --dim 40 --states 6 --seed 3 --out lg.json");
    for sampler in ["dmala --step 0.1", "dula --step 0.2 --window 2"] {
        let runs: Vec<(Vec<u8>, serde_json::Value)> = ["", "--batch 2 --threads 1", "--batch 4 --threads 3"]
            .iter()
            .enumerate()
            .map(|(k, extra)| {
                let (out, sum) = (format!("{k}.npy"), format!("{k}.json"));
                scratch.ok(&format!("sample --model lg.json --sampler {sampler} --chains 5 --steps 300 --burn-in 50 --seed 8 {extra} --out {out} --summary {sum} --quiet"));
                (
                    std::fs::read(scratch.path(&out)).unwrap(),
                    common::summary(&scratch.path(&sum)),
                )
            })
            .collect();
        let moved = runs[0].1["mean_accepted_changes"].as_f64().unwrap();
        assert!(moved > 0.1, "{sampler}: the chains must move ({moved})");
        for r in &runs[1..] {
            assert_eq!(runs[0].0, r.0, "{sampler}: draws differ");
            for field in [
                "acceptance_rate",
                "evals",
                "mean_proposed_changes",
                "mean_accepted_changes",
                "mean_jump",
                "ess_median",
            ] {
                assert!(!r.1[field].is_null(), "{sampler}: {field}");
                assert_eq!(runs[0].1[field], r.1[field], "{sampler}: {field}");
            }
        }
    }
}
