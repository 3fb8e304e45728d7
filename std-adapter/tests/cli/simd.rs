//! Every code path of the per-chain loops (the widest the processor has, AVX2/FMA with
//! `LANGEVIN_SIMD=avx2`, portable with `LANGEVIN_SIMD=portable`) gives the same draws, byte for
//! byte.

use crate::common;

use common::{Scratch, words};
use std::process::Command;

/// Runs `sample` with `args` (and `--out draws.npy --summary s.json`) on the path `cap` caps
/// (the value of `LANGEVIN_SIMD`, if any); returns the draws' bytes and the summary's `simd`
/// field.
fn sample(scratch: &Scratch, args: &str, cap: Option<&str>) -> (Vec<u8>, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_langevin"));
    command
        .args(words(&format!(
            "sample {args} --out draws.npy --summary s.json --diagnostics none --quiet"
        )))
        .current_dir(&scratch.0)
        .env_remove("LANGEVIN_SIMD");
    if let Some(cap) = cap {
        command.env("LANGEVIN_SIMD", cap);
    }
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "sample {args} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(scratch.path("s.json")).unwrap()).unwrap();
    let simd = summary["simd"].as_str().unwrap().to_string();
    (std::fs::read(scratch.path("draws.npy")).unwrap(), simd)
}

/// The paths this processor runs with `LANGEVIN_SIMD=avx2` and with nothing set.
fn expected_paths() -> (&'static str, &'static str) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::is_x86_feature_detected as has;
        let v3 = has!("avx2") && has!("fma") && has!("bmi1") && has!("bmi2") && has!("lzcnt");
        let v4 = v3
            && has!("avx512f")
            && has!("avx512bw")
            && has!("avx512cd")
            && has!("avx512dq")
            && has!("avx512vl");
        let capped = if v3 { "avx2+fma" } else { "portable" };
        (capped, if v4 { "avx512" } else { capped })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        ("portable", "portable")
    }
}

#[test]
fn both_code_paths_give_the_same_draws() {
    let s = Scratch::new("simd-paths");
    for line in [
        "model ising-lattice --rows 12 --cols 12 --coupling 0.44 --out lat.json",
        // Open boundaries (every bin reachable) and a partial last vector of sites.
        "model ising-lattice --rows 7 --cols 9 --coupling 0.3 --field 0.1 --periodic false --out open.json",
        "model rbm --visible 64 --hidden 24 --seed 3 --out rbm.json",
        "model binary-quadratic --dim 30 --seed 2 --out bq.json",
        "model ising-ba --nodes 40 --edges-per-node 3 --seed 1 --out ba.json",
        "model binary-logistic --seed 2 --out bl.json",
        "model lattice-gaussian --dim 40 --states 5 --seed 4 --out lg.json",
    ] {
        s.ok(line);
    }
    s.write("potts.json", common::POTTS);
    s.write("mix.json", common::MIXTURE);
    let run = "--steps 300 --burn-in 50 --chains 2 --seed 7";
    let cases = [
        format!("--model lat.json --sampler dmala --step 0.4 {run}"),
        format!("--model lat.json --sampler dula {run}"),
        format!("--model open.json --sampler dmala --step 0.3 {run}"),
        format!("--model lat.json --sampler gibbs {run}"),
        format!("--model rbm.json --sampler dmala --step 0.4 {run}"),
        format!("--model rbm.json --sampler dula {run}"),
        format!("--model rbm.json --sampler gibbs {run}"),
        format!("--model rbm.json --sampler block-gibbs {run}"),
        format!("--model rbm.json --sampler ab {run}"),
        format!("--model bq.json --sampler dmala {run}"),
        format!("--model bq.json --sampler gwg {run}"),
        format!("--model bq.json --sampler lb {run}"),
        format!("--model bq.json --sampler hamming-ball {run}"),
        format!("--model bq.json --sampler pas {run}"),
        format!("--model bq.json --sampler dlmc {run}"),
        format!("--model bq.json --sampler rwm {run}"),
        format!("--model ba.json --sampler dmala {run}"),
        format!("--model bl.json --sampler dmala {run}"),
        format!("--model potts.json --sampler dmala {run}"),
        format!("--model mix.json --sampler ab --window 20 {run}"),
        format!("--model mix.json --sampler dmala {run}"),
        format!("--model lg.json --sampler dmala --step 0.1 {run}"),
        format!("--model lg.json --sampler dmala --step 0.1 --batch 4 {run}"),
        format!("--model lg.json --sampler dula --step 0.2 --window 2 --batch 4 {run}"),
        format!("--model bq.json --sampler dmala --batch 4 {run}"),
        format!("--model rbm.json --sampler dmala --step 0.4 --batch 4 {run}"),
        format!("--model bl.json --sampler dula --batch 4 {run}"),
    ];
    let (capped, widest) = expected_paths();
    for case in &cases {
        let (portable, forced) = sample(&s, case, Some("portable"));
        assert_eq!(forced, "portable", "{case}");
        assert!(portable.len() > 128, "{case}: no draws");
        for (cap, expected) in [(Some("avx2"), capped), (None, widest)] {
            let (picked, path) = sample(&s, case, cap);
            assert_eq!(path, expected, "{case}");
            assert!(
                portable == picked,
                "{case}: {path} draws differ from portable ones"
            );
        }
    }
}
