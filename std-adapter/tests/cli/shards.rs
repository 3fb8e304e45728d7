//! Shards (`sample --first-chain`) and `langevin merge`: two shards merged give the single run's
//! `.npy` bytes and summary statistics; shards that do not belong together are refused.

use crate::common;

use common::{Scratch, expect, summary};
use serde_json::Value;

/// Summary fields that differ between a run and its shards merged without anything being
/// wrong: the command line, the files, and the wall-clock figures.
const NOT_COMPARED: [&str; 8] = [
    "command_line",
    "options",
    "out",
    "merged_from",
    "wall_time_s",
    "ns_per_step",
    "ess_per_second",
    "input_hashes",
];

/// Runs `sample {args}` once with 5 chains and as shards of 2 + 3 chains, merges the shards
/// (given in reverse order) and checks the merged files against the single run's.
fn single_equals_merged(scratch: &Scratch, name: &str, args: &str) {
    let single = format!("{name}-all");
    scratch.ok(&format!(
        "sample {args} --chains 5 --out {single}.npy --summary {single}.json --quiet"
    ));
    for (first, chains) in [(0, 2), (2, 3)] {
        let shard = format!("{name}-{first}");
        scratch.ok(&format!(
            "sample {args} --chains {chains} --first-chain {first} --threads 1 \
                 --out {shard}.npy --summary {shard}.json --csv {shard}.csv --quiet"
        ));
    }
    // The CSV of the second shard numbers its chains from 2.
    let csv = std::fs::read_to_string(scratch.path(&format!("{name}-2.csv"))).unwrap();
    assert!(csv.lines().nth(1).unwrap().starts_with("2,0,"), "{name}");
    let merged = format!("{name}-merged");
    scratch.ok(&format!(
        "merge {name}-2.json {name}-0.json --out {merged}.npy --summary {merged}.json --quiet"
    ));
    let bytes = |f: &str| std::fs::read(scratch.path(f)).unwrap();
    assert_eq!(
        bytes(&format!("{merged}.npy")),
        bytes(&format!("{single}.npy")),
        "{name}: the merged draws"
    );
    let (a, b) = (
        summary(&scratch.path(&format!("{single}.json"))),
        summary(&scratch.path(&format!("{merged}.json"))),
    );
    let (Value::Object(a), Value::Object(b)) = (a, b) else {
        panic!("summaries are objects")
    };
    for (key, value) in &a {
        if NOT_COMPARED.contains(&key.as_str()) {
            continue;
        }
        assert_eq!(b.get(key), Some(value), "{name}: `{key}`");
    }
    for key in b.keys() {
        assert!(
            a.contains_key(key) || NOT_COMPARED.contains(&key.as_str()),
            "{name}: `{key}` only in the merged summary"
        );
    }
    // The statistics the comparison covers are there.
    for key in ["ess_statistic", "rhat_max", "mean", "warnings", "totals"] {
        assert!(a.contains_key(key), "{name}: no `{key}`");
    }
    if a["diagnostics"] == "full" {
        for key in ["ess_min", "ess_bulk", "rhat", "sd", "q50"] {
            assert!(a.contains_key(key), "{name}: no `{key}`");
        }
    }
    assert_eq!(b["chain_range"], serde_json::json!([0, 5]));
}

#[test]
fn two_shards_merged_give_the_single_runs_npy_bytes_and_summary_statistics() {
    let scratch = Scratch::new("shards");
    scratch.write("potts.json", common::POTTS);
    scratch.write("ordinal.json", common::ORDINAL);
    scratch.ok("model ising-lattice --rows 5 --cols 5 --coupling 0.4 --out lat.json");
    scratch.ok("model rbm --visible 12 --hidden 5 --seed 3 --out rbm.json");
    let cases = [
        // DMALA tunes its step per chain (the summary's `tuned`).
        (
            "dmala",
            "--model lat.json --steps 300 --burn-in 100 --seed 9",
        ),
        (
            "ab2",
            "--model lat.json --sampler ab2 --steps 200 --burn-in 50 --seed 4",
        ),
        (
            "batch",
            "--model rbm.json --sampler dmala --step 0.5 --batch 2 --steps 200 --burn-in 20 --seed 5",
        ),
        (
            "gwg",
            "--model potts.json --sampler gwg --steps 300 --burn-in 50 --seed 2",
        ),
        (
            "ordinal",
            "--model ordinal.json --sampler dmala --steps 300 --burn-in 50 --seed 3 \
             --diagnostics summary",
        ),
    ];
    for (name, args) in cases {
        single_equals_merged(&scratch, name, args);
    }
}

#[test]
fn shards_that_do_not_belong_together_are_refused_by_merge() {
    let scratch = Scratch::new("shards-bad");
    scratch.ok("model ising-lattice --rows 4 --cols 4 --coupling 0.3 --out lat.json");
    let shard = |name: &str, extra: &str| {
        scratch.ok(&format!(
            "sample --model lat.json --sampler dula --steps 100 --burn-in 10 --chains 2 \
                 {extra} --out {name}.npy --summary {name}.json --quiet"
        ));
    };
    shard("a", "--seed 1");
    shard("b", "--seed 1 --first-chain 2");
    shard("overlap", "--seed 1 --first-chain 1");
    shard("gap", "--seed 1 --first-chain 3");
    shard("seed", "--first-chain 2 --seed 2");
    shard("step", "--seed 1 --first-chain 2 --step 0.3");
    let merge =
        |shards: &str| scratch.fails(&format!("merge {shards} --out m.npy --summary m.json"));
    for (shards, part) in [
        ("a.json overlap.json", "overlap"),
        ("a.json gap.json", "chains 2..3 are in no shard"),
        ("a.json seed.json", "differ in `seed`"),
        ("a.json step.json", "differ in `step`"),
        ("a.npy b.npy", "--summary needs the shards' summaries"),
        ("a.json lat.json", "not a summary of `langevin sample`"),
    ] {
        let e = merge(shards);
        assert!(e.contains(part), "{shards}: {e}");
    }
    assert!(!scratch.path("m.npy").exists() && !scratch.path("m.json").exists());
    // Bare `.npy` shards are joined in the order given, without a summary.
    scratch.ok("merge a.npy b.npy --out ab.npy --quiet");
    scratch.ok("merge b.json a.json --out ab2.npy --quiet");
    assert_eq!(
        std::fs::read(scratch.path("ab.npy")).unwrap(),
        std::fs::read(scratch.path("ab2.npy")).unwrap()
    );
}

#[test]
fn a_lockstep_shard_must_start_at_a_group() {
    let scratch = Scratch::new("shards-batch");
    scratch.ok("model rbm --visible 8 --hidden 4 --seed 3 --out rbm.json");
    let e = scratch.fails(
        "sample --model rbm.json --step 0.5 --batch 4 --first-chain 2 --chains 4 --steps 10",
    );
    expect(&e, &["--first-chain 2 with --batch 4"]);
}
