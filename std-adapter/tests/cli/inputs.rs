//! Inputs checked before any work: bounded reads of every input file (devices, streams and
//! files beyond the memory cap refused), estimates that count what a run really holds
//! (`--batch`, the parse of a model file, the diagnostics asked for, the threads that do work),
//! `sdp --max-memory`, `model_hash` over every file a model reads, and wrong input refused
//! (duplicate keys and edges, `--threads 0`, an unknown `LANGEVIN_SIMD`, options the sampler
//! does not use).

use crate::common;

use common::{
    GAUSSIAN_SUM, ISING, LATTICE, RBM, Scratch, expect, fails, langevin, langevin_env, npy_variant,
    ok, words,
};
use langevin_std::io::npy::NpyData;
use std::process::Command;
use std::time::{Duration, Instant};

/// Runs `langevin` and insists it fails by the contract within `seconds`: a refusal, not a
/// read of the whole input.
fn fails_fast(cwd: &std::path::Path, args: &[&str], seconds: u64) -> String {
    let start = Instant::now();
    let line = fails(cwd, args);
    assert!(
        start.elapsed() < Duration::from_secs(seconds),
        "{args:?} took {:?}",
        start.elapsed()
    );
    line
}

#[test]
fn devices_are_refused_as_inputs_before_reading() {
    let s = Scratch::new("inputs-devices");
    for args in [
        "sdp --matrix /dev/zero",
        "sample --model /dev/zero",
        "sample-continuous --model /dev/zero --step 0.1",
        "bench --model /dev/zero",
    ] {
        let line = fails_fast(&s.0, &words(args), 10);
        expect(&line, &["/dev/zero", "a character device", "not a file"]);
    }
    // A file a model names, `.npy` or CSV.
    s.write(
        "rbm.json",
        r#"{"kind":"rbm","W":"/dev/zero","b":[0,0],"c":[0]}"#,
    );
    expect(
        &fails_fast(&s.0, &words("sample --model rbm.json --steps 10"), 10),
        &["/dev/zero", "a character device"],
    );
    s.write(
        "ridge.json",
        r#"{"kind":"ridge_regression","X":"/dev/zero","y":[1,2],"noise_var":1,"prior_var":1}"#,
    );
    expect(
        &fails_fast(
            &s.0,
            &words("sample-continuous --model ridge.json --step 0.1"),
            10,
        ),
        &["/dev/zero", "a character device"],
    );
    // Training data and held-out data.
    s.ok("model rbm --visible 4 --hidden 2 --seed 1 --out m.json");
    expect(
        &fails_fast(&s.0, &words("ais --model m.json --data /dev/zero"), 10),
        &["/dev/zero", "a character device"],
    );
    expect(
        &fails_fast(
            &s.0,
            &words("train --data /dev/zero --model-kind rbm --hidden 2 --out t.json"),
            10,
        ),
        &["/dev/zero", "a character device"],
    );
}

#[cfg(unix)]
#[test]
fn an_endless_stream_is_read_with_a_bound() {
    let s = Scratch::new("inputs-fifo");
    for (name, args) in [
        ("m.json", "sample --model m.json --max-memory 1M"),
        ("w.npy", "sdp --matrix w.npy --max-memory 1M"),
    ] {
        let status = Command::new("mkfifo").arg(s.path(name)).status().unwrap();
        assert!(status.success());
        // A writer that never ends: the zeros of /dev/zero (after a `.npy` header for the
        // matrix, whose shape promises 80 GB).
        let header = langevin_std::io::npy::npy_header(&[100_000, 100_000], "<f8").unwrap();
        std::fs::write(s.path("header"), header).unwrap();
        let first = if name.ends_with(".npy") {
            "cat header; "
        } else {
            ""
        };
        let mut writer = Command::new("sh")
            .arg("-c")
            .arg(format!("({first}cat /dev/zero) > {name} 2>/dev/null"))
            .current_dir(&s.0)
            .spawn()
            .unwrap();
        let line = fails_fast(&s.0, &words(args), 20);
        let _ = writer.kill();
        let _ = writer.wait();
        assert!(
            line.contains("did not end within") || line.contains("above the limit"),
            "{line}"
        );
    }
}

#[test]
fn inputs_beyond_the_cap_are_refused_by_their_length() {
    let s = Scratch::new("inputs-length");
    // A model file of 2 MB (its arrays padded with spaces) under a 1 MB cap.
    let padded = format!(
        r#"{{"kind":"ising_lattice","rows":2,"cols":2,"coupling":0.2{}}}"#,
        " ".repeat(2_000_000)
    );
    s.write("big.json", &padded);
    let line = fails_fast(
        &s.0,
        &words("sample --model big.json --max-memory 1M --steps 10"),
        10,
    );
    expect(&line, &["big.json", "the file 2000.1 kB", "--max-memory"]);
    // A `.npy` matrix whose header promises more than the cap: refused before its data.
    s.npy("w.npy", &[300, 300], NpyData::F64(vec![0.0; 90_000]));
    let line = fails_fast(&s.0, &words("sdp --matrix w.npy --max-memory 500k"), 10);
    expect(&line, &["w.npy", "above the limit", "--max-memory"]);
    // Training and held-out data (20 000 rows of 4 bytes, read into doubles: 880 kB).
    s.ok("model rbm --visible 4 --hidden 2 --seed 1 --out m.json");
    s.npy("rows.npy", &[20_000, 4], NpyData::U8(vec![1; 80_000]));
    for args in [
        "ais --model m.json --data rows.npy --max-memory 500k",
        "train --data rows.npy --model-kind rbm --hidden 2 --out t.json --max-memory 500k",
        "train --data m.npy --test rows.npy --model-kind rbm --hidden 2 --out t.json --max-memory 500k",
    ] {
        s.npy("m.npy", &[2, 4], NpyData::U8(vec![1; 8]));
        let line = fails_fast(&s.0, &words(args), 10);
        expect(&line, &["rows.npy", "its decoded values", "--max-memory"]);
    }
    // The same under the model's own array file.
    let m = npy_variant(&s, "rbm", RBM);
    let line = fails(
        &s.0,
        &[
            "sample",
            "--model",
            m.to_str().unwrap(),
            "--max-memory",
            "300",
        ],
    );
    expect(&line, &["above the limit", "--max-memory"]);
}

/// The parse of a model file is in the estimate: a file of 400 kB of small numbers holds about
/// 200 000 JSON values, far more memory than its text or the model's parameters.
#[test]
fn the_parse_of_a_model_file_is_counted() {
    let s = Scratch::new("inputs-parse");
    let zeros = |n: usize| format!("[{}]", vec!["0"; n].join(","));
    let (v, h) = (1000, 20);
    let w = format!("[{}]", vec![zeros(v); h].join(","));
    let text = format!(
        r#"{{"kind":"rbm","W":{w},"b":{},"c":{}}}"#,
        zeros(v),
        zeros(h)
    );
    s.write("wide.json", &text);
    s.refuses(
        "sample --model wide.json --max-memory 2M --steps 10 --chains 1",
        &["wide.json", "its parse", "above the limit"],
    );
    // Under a cap that holds the parse, it runs.
    s.ok(
        "sample --model wide.json --max-memory 50M --steps 10 --burn-in 0 --chains 1 \
             --diagnostics none --quiet",
    );
}

#[test]
fn batch_padding_is_in_the_estimate() {
    let s = Scratch::new("inputs-batch");
    s.write("rbm.json", RBM);
    // The reported case: a batch far beyond the chains aborted with exit 134.
    let line = fails_fast(
        &s.0,
        &words("sample --model rbm.json --batch 1000000000 --steps 10"),
        10,
    );
    expect(
        &line,
        &["--batch streams", "--batch groups", "above the limit"],
    );
    // Padding that would take hundreds of MB under a 100 MB cap.
    let line = fails_fast(
        &s.0,
        &words("sample --model rbm.json --batch 200000 --steps 1 --max-memory 100M"),
        10,
    );
    expect(&line, &["--batch groups stepped at once", "(--max-memory)"]);
    s.ok("sample --model rbm.json --batch 4 --steps 20 --max-memory 100M --quiet");
}

/// `--diagnostics none` charges nothing for them, and threads beyond the diagnostics' blocks
/// of coordinates charge nothing either.
#[test]
fn the_diagnostics_estimate_counts_what_they_hold() {
    let s = Scratch::new("inputs-diagnostics");
    s.write("lat.json", LATTICE);
    let run =
        "sample --model lat.json --sampler gibbs --chains 4 --steps 20000 --burn-in 0 --quiet";
    // 80 000 draws of 12 sites: 1 MB kept, 1 MB copied.
    s.ok(&format!("{run} --diagnostics none --max-memory 4M"));
    s.ok(&format!(
        "{run} --diagnostics full --threads 64 --max-memory 20M"
    ));
    s.ok(&format!(
        "{run} --diagnostics full --threads 1 --max-memory 20M"
    ));
    // Continuous draws: one worker per coordinate at most (2 here, not 64): 40 000 draws hold
    // about 5 MB, not 88 MB.
    s.write("g.json", GAUSSIAN_SUM);
    s.ok(
        "sample-continuous --model g.json --step 0.1 --passes 10000 --threads 64 \
             --max-memory 10M --quiet",
    );
    // The cap still holds: full diagnostics need more than 4 MB.
    s.refuses(
        &format!("{run} --diagnostics full --max-memory 4M"),
        &["diagnostics", "above the limit"],
    );
}

#[test]
fn sdp_has_a_memory_cap() {
    let s = Scratch::new("inputs-sdp");
    let n = 200;
    let mut w = vec![0.0; n * n];
    for i in 0..n {
        w[i * n + (i + 1) % n] = 0.5;
        w[((i + 1) % n) * n + i] = 0.5;
    }
    s.npy("w.npy", &[n, n], NpyData::F64(w));
    // 320 kB of file, its decoded copy and the solver's dense copies: above 1 MB.
    let line = s.fails("sdp --matrix w.npy --max-memory 1M");
    expect(
        &line,
        &["w.npy", "above the limit of 1000.0 kB (--max-memory)"],
    );
    s.ok("sdp --matrix w.npy --max-memory 100M");
}

#[test]
fn model_hash_covers_the_files_a_model_reads() {
    let s = Scratch::new("inputs-hash");
    let model = npy_variant(&s, "q", ISING);
    let hash = || {
        ok(
            &s.0,
            &[
                "sample",
                "--model",
                model.to_str().unwrap(),
                "--steps",
                "10",
                "--burn-in",
                "0",
                "--chains",
                "1",
                "--diagnostics",
                "none",
                "--summary",
                "s.json",
                "--quiet",
            ],
        );
        let summary: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(s.path("s.json")).unwrap()).unwrap();
        summary["model_hash"].as_str().unwrap().to_string()
    };
    let before = hash();
    assert_eq!(hash(), before, "the hash is a function of the files");
    // Same JSON, same file names, other values in the field's `.npy` file.
    let field = s.path("q/arrays/ising_field.npy");
    assert!(field.exists(), "{:?}", s.files());
    s.npy(
        "q/arrays/ising_field.npy",
        &[5],
        NpyData::F32(vec![0.5, 0.0, -0.25, 0.0, 0.5]),
    );
    assert_ne!(
        hash(),
        before,
        "the field's values changed, the hash did not"
    );
}

#[test]
fn duplicate_keys_are_refused_naming_the_key() {
    let s = Scratch::new("inputs-keys");
    // The reported case: a coupling of 0.2, then 5, ran at 5.
    s.write(
        "lat.json",
        r#"{"kind": "ising_lattice", "rows": 3, "cols": 3, "coupling": 0.2, "coupling": 5}"#,
    );
    s.refuses(
        "sample --model lat.json --steps 10",
        &["lat.json", "duplicate key `coupling`"],
    );
    s.write(
        "c.json",
        r#"{"kind":"gaussian_sum","centers":[[0,1]],"centers":[[5,5]]}"#,
    );
    s.refuses(
        "sample-continuous --model c.json --step 0.1",
        &["c.json", "duplicate key `centers`"],
    );
    s.refuses("bench --model lat.json", &["duplicate key `coupling`"]);
}

#[test]
fn duplicate_edges_are_refused() {
    let s = Scratch::new("inputs-edges");
    for (name, text) in [
        (
            "ising.json",
            r#"{"kind":"ising","n":3,"edges":[[0,1,0.5],[1,2,0.25],[1,0,0.5]]}"#,
        ),
        (
            "potts.json",
            r#"{"kind":"potts","states":3,"n":3,"edges":[[0,1,0.5],[0,1,0.25]]}"#,
        ),
    ] {
        s.write(name, text);
        let line = s.fails(&format!("sample --model {name} --steps 10"));
        expect(
            &line,
            &[
                name,
                "`edges`",
                "as edge 0 does",
                "duplicate edges are refused",
            ],
        );
    }
}

#[test]
fn zero_threads_are_refused() {
    let s = Scratch::new("inputs-threads");
    s.write("lat.json", LATTICE);
    s.ok("model rbm --visible 4 --hidden 2 --seed 1 --out m.json");
    for args in [
        "sample --model lat.json --threads 0",
        "bench --model lat.json --threads 0",
        "ais --model m.json --threads 0",
        "sample-continuous --model lat.json --threads 0",
    ] {
        s.refuses(args, &["--threads", "at least 1"]);
    }
}

#[test]
fn an_unknown_simd_value_is_refused() {
    let s = Scratch::new("inputs-simd");
    s.write("lat.json", LATTICE);
    let run = |value: &str| {
        let args = words("sample --model lat.json --steps 10 --quiet");
        langevin_env(&s.0, &args, &[("LANGEVIN_SIMD", value)])
    };
    for value in ["avx", "AVX2", "sse4"] {
        let out = run(value);
        assert_eq!(out.status.code(), Some(2), "{value}");
        let line = String::from_utf8(out.stderr).unwrap();
        expect(&line, &["LANGEVIN_SIMD", value, "portable, avx2, avx512"]);
        assert!(out.stdout.is_empty());
    }
    for value in ["portable", "avx2", "avx512", ""] {
        let out = run(value);
        assert!(out.status.success(), "{value}: {:?}", out.stderr);
    }
}

#[test]
fn options_the_sampler_does_not_use_are_refused_and_never_recorded() {
    let s = Scratch::new("inputs-unused");
    s.write("lat.json", LATTICE);
    for (args, sampler, option) in [
        ("--sampler gibbs --step 0.3", "gibbs", "--step"),
        ("--sampler dmala --rate 0.1", "dmala", "--rate"),
        ("--sampler rwm --balancing barker", "rwm", "--balancing"),
        (
            "--sampler gibbs --scan random --time 0.5",
            "gibbs",
            "--time",
        ),
    ] {
        for command in ["sample", "bench"] {
            let line = s.fails(&format!("{command} --model lat.json {args} --steps 10"));
            expect(
                &line,
                &[&format!("sampler {sampler}"), option, "does not use"],
            );
        }
    }
    // Given options the sampler reads run; the summary lists no option it does not read.
    s.ok(
        "sample --model lat.json --sampler gibbs --scan random --steps 10 --summary s.json \
             --quiet",
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(s.path("s.json")).unwrap()).unwrap();
    let options = summary["options"].as_object().unwrap();
    assert_eq!(options["scan"], "random");
    for unused in ["step", "balance", "rate", "time", "balancing", "replicas"] {
        assert!(!options.contains_key(unused), "{unused}: {options:?}");
    }
    // A run without the flag is unchanged (the default is not "given").
    let out = langevin(
        &s.0,
        &words("sample --model lat.json --sampler dmala --steps 10 --quiet"),
    );
    assert!(out.status.success());
}
