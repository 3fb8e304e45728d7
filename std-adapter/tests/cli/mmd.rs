//! `--mmd` end to end: RBM draws against block-Gibbs reference draws.

use crate::common;

use common::{Scratch, expect, fails, ok, summary, words};

/// The exact DMALA chain lands closer to the block-Gibbs reference than DULA at a large step,
/// whose stationary law is biased (Zhang, Liu & Liu 2022, Theorem 5.1).
#[test]
fn mmd_ranks_an_exact_sampler_above_a_biased_one() {
    let scratch = Scratch::new("mmd");
    let dir = scratch.path("");
    ok(
        &dir,
        &words("model rbm --visible 36 --hidden 16 --seed 3 --out rbm.json"),
    );
    let mut mmd = Vec::new();
    for (name, sampler, step) in [("exact", "dmala", "0.3"), ("biased", "dula", "3")] {
        let out = format!("{name}.json");
        ok(
            &dir,
            &words(&format!(
                "sample --model rbm.json --sampler {sampler} --step {step} --steps 4000 --mmd --quiet --summary {out}"
            )),
        );
        let s = summary(&scratch.path(&out));
        let m = &s["mmd"];
        let value = m["mmd2"].as_f64().expect("mmd2 in the summary");
        assert!(value >= 0.0 && value.is_finite(), "{name}: {value}");
        assert!((m["log_mmd2"].as_f64().unwrap() - value.ln()).abs() < 1e-9);
        assert_eq!(m["draws"].as_u64(), Some(2000));
        mmd.push(value);
    }
    assert!(
        mmd[0] < mmd[1],
        "dmala {} should beat biased dula {}",
        mmd[0],
        mmd[1]
    );
}

#[test]
fn mmd_needs_an_rbm() {
    let scratch = Scratch::new("mmd-kind");
    let dir = scratch.path("");
    scratch.write(
        "lat.json",
        r#"{"kind": "ising_lattice", "rows": 3, "cols": 3, "coupling": 0.2}"#,
    );
    let message = fails(
        &dir,
        &["sample", "--model", "lat.json", "--mmd", "--out", "x.npy"],
    );
    expect(&message, &["--mmd"]);
    assert!(!scratch.path("x.npy").exists());
}
