//! Runs a user can trust: every command's summary says how it was made, oversized requests are
//! refused with the sizes named, and error lines name files and print numbers compactly.

use crate::common;

use common::{
    GAUSSIAN_SUM, LATTICE, QUADRATIC, RBM, Scratch, contains_all, expect, fails, strings, summary,
    words,
};
use langevin_std::io::npy::NpyData;

/// 40 rows of 6 binary values (the RBM test model's visible layer).
fn data(s: &Scratch) -> &'static str {
    let values: Vec<u8> = (0..240)
        .map(|k| u8::from(k % 3 == 0 || k % 7 == 1))
        .collect();
    s.npy("x.npy", &[40, 6], NpyData::U8(values));
    "x.npy"
}

/// The provenance every summary starts with: tool, version, the command line as run, and every
/// option with the value it took (`defaults`: options the line did not give, with their
/// defaults).
fn check_provenance(j: &serde_json::Value, line: &str, defaults: &[(&str, &str)]) {
    assert_eq!(j["tool"], "langevin", "{j}");
    assert_eq!(j["version"], env!("CARGO_PKG_VERSION"));
    let command = strings(&j["command_line"]);
    assert_eq!(&command[1..], words(line).as_slice());
    let options = j["options"].as_object().expect("options");
    for (name, value) in defaults {
        assert_eq!(options[*name], *value, "option {name}: {j}");
    }
    // Every flag of the line is recorded.
    for flag in words(line).iter().filter(|w| w.starts_with("--")) {
        assert!(
            options.contains_key(&flag[2..]),
            "{flag} not in options: {j}"
        );
    }
}

#[test]
fn bench_compare_train_ais_and_sdp_record_how_they_ran() {
    let s = Scratch::new("trust-provenance");
    s.write("lat.json", LATTICE);
    s.write("rbm.json", RBM);
    let x = data(&s);

    let line = "bench --model lat.json --sampler dmala --steps 50 --repeats 2 --ess-steps 40 \
                --chains 2 --seed 4 --format json";
    let b: serde_json::Value = serde_json::from_str(&s.ok(line)).unwrap();
    check_provenance(&b, line, &[("step", "0.2"), ("warm-up", "")][..1]);
    assert!(b["model_hash"].as_str().unwrap().starts_with("fnv1a64:"));
    assert_eq!(b["seed"], 4);
    assert_eq!(b["ess_thin"], 1);
    assert_eq!(b["ess_burn_in"], 4);

    let line = "compare --models ising-grid --samplers dmala --chains 1 --steps 20 --tune 300 \
                --threads 1 --seed 6 --format json";
    let c: serde_json::Value = serde_json::from_str(&s.ok(line)).unwrap();
    check_provenance(&c, line, &[("max-iter", "40")]);
    assert_eq!(c["seed"], 6);
    assert_eq!(c["steps"], 20);
    assert_eq!(c["tune"], 300);
    assert_eq!(c["models"][0]["key"], "ising-grid");
    assert!(
        c["models"][0]["description"]
            .as_str()
            .unwrap()
            .contains("J = 0.4407")
    );
    assert_eq!(c["rows"].as_array().unwrap().len(), 1);

    let line = format!(
        "train --data {x} --test {x} --model-kind rbm --hidden 3 --pcd-steps 2 --chains 4 \
         --batch 10 --updates 4 --seed 2 --out m.json --summary t.json --quiet"
    );
    s.ok(&line);
    let t = summary(&s.path("t.json"));
    check_provenance(&t, &line, &[("lr", "0.001"), ("sampler", "gibbs")]);
    for input in ["data", "test"] {
        assert!(
            t["input_hashes"][input]
                .as_str()
                .unwrap()
                .starts_with("fnv1a64:"),
            "{t}"
        );
    }
    assert_eq!(t["seed"], 2);
    assert_eq!(t["updates"], 4);
    assert_eq!(t["model_kind"], "rbm");
    assert!(!t["evaluations"].as_array().unwrap().is_empty());

    let line = format!(
        "ais --model rbm.json --data {x} --chains 10 --betas 20 --seed 1 --summary a.json --quiet"
    );
    s.ok(&line);
    let a = summary(&s.path("a.json"));
    check_provenance(&a, &line, &[("schedule", "linear")]);
    assert!(a["model_hash"].as_str().unwrap().starts_with("fnv1a64:"));
    assert!(a["input_hashes"]["data"].as_str().is_some(), "{a}");

    s.npy("w.npy", &[2, 2], NpyData::F64(vec![0.0, 1.0, 1.0, 0.0]));
    let line = "sdp --matrix w.npy --summary d.json --quiet";
    s.ok(line);
    let d = summary(&s.path("d.json"));
    check_provenance(&d, line, &[("rel-gap", "0.001")]);
}

#[test]
fn bench_compare_train_and_ais_refuse_oversized_requests() {
    let s = Scratch::new("trust-caps");
    s.write("lat.json", LATTICE);
    s.write("rbm.json", RBM);
    let x = data(&s);
    let huge = "18446744073709551615";
    let refused = |line: &str, parts: &[&str]| contains_all(&s.fails(line), parts);
    let bench = |steps: &str, repeats: &str, ess_steps: &str, chains: &str| {
        format!(
            "bench --model lat.json --steps {steps} --repeats {repeats} --ess-steps {ess_steps} \
             --chains {chains}"
        )
    };
    refused(
        &bench("10", "1", "20", "10000000000"),
        &["the run needs", "kept draws of the ESS run", "--max-memory"],
    );
    refused(
        &bench("10", "100000000000000", "20", "1"),
        &["timings", "--max-memory"],
    );
    refused(&bench("10", "1", huge, "1"), &["2^64"]);
    refused(&bench(huge, "1", "20", "1"), &["2^64"]);
    refused(
        &format!("{} --max-memory 1M", bench("10", "1", "100000", "1")),
        &["kept draws of the ESS run 1200.0 kB", "limit of 1000.0 kB"],
    );

    let compare = |steps: &str, tune: &str, chains: &str| {
        format!(
            "compare --models ising-grid --samplers dmala --steps {steps} --tune {tune} \
             --chains {chains}"
        )
    };
    refused(&compare(huge, "300", "1"), &["2^64"]);
    refused(
        &compare("20", "300", "10000000000"),
        &["kept draws", "--max-memory"],
    );
    refused(&compare("20", huge, "1"), &["2^64", "--tune"]);

    let train = format!("train --data {x} --model-kind rbm --out m.json --updates 1");
    refused(
        &format!("{train} --hidden 3 --chains 10000000000"),
        &["persistent chains", "--max-memory"],
    );
    refused(
        &format!("{train} --hidden 10000000000000"),
        &["parameters", "--max-memory"],
    );
    refused(
        &format!("{train} --hidden 3 --batch 10000000000000"),
        &["minibatch"],
    );
    // AIS runs at evaluations only when both layers have more than 20 units.
    s.npy("wide.npy", &[4, 25], NpyData::U8(vec![1; 100]));
    refused(
        "train --data wide.npy --test wide.npy --model-kind rbm --hidden 25 --out m.json \
         --ais-betas 10000000000000",
        &["AIS temperatures"],
    );
    s.ok(&format!(
        "{train} --hidden 3 --test {x} --ais-betas 10000000000000 --chains 2 --quiet"
    ));
    std::fs::remove_file(s.path("m.json")).unwrap();
    refused(
        &format!(
            "train --data {x} --model-kind ising --graph lattice:100000000:100000000 --out m.json"
        ),
        &["2^32"],
    );

    refused(
        "ais --model rbm.json --chains 10000000000",
        &["AIS chains' weights", "--max-memory"],
    );
    refused(
        "ais --model rbm.json --betas 10000000000000",
        &["inverse temperatures"],
    );
    assert!(s.files().iter().all(|f| f != "m.json"), "{:?}", s.files());
}

#[test]
fn error_lines_are_short_and_name_what_they_mean() {
    let s = Scratch::new("trust-messages");
    s.write("m.json", QUADRATIC);
    let sample = |extra: &str| format!("sample --model m.json {extra}");
    // A huge value is shown in scientific notation, not as three hundred digits.
    for (extra, shown) in [
        ("--balance 1e300", "1e300"),
        (&format!("--max-memory {}", "9".repeat(320)), "9.99999e319"),
        (&format!("--steps {}", "9".repeat(320)), "9.99999e319"),
    ] {
        let line = fails(&s.0, &words(&sample(extra)));
        expect(&line, &[shown]);
        assert!(line.len() < 300, "{line}");
    }
    // A matrix entry is named by its row and column.
    s.write(
        "big.json",
        r#"{"kind": "binary_quadratic", "W": [[0, 1e300], [1e300, 0]], "b": [0, 0]}"#,
    );
    s.refuses(
        "sample --model big.json --steps 10",
        &["entry (0, 1) = 1e300 overflows"],
    );
    // sample-continuous names the model file whatever goes wrong with it.
    s.write(
        "logit.json",
        r#"{"kind": "logistic_regression", "X": "missing.npy", "y": [0, 1], "prior_var": 1}"#,
    );
    let line = s.fails("sample-continuous --model logit.json --step 0.1");
    assert!(line.starts_with("error: logit.json: "), "{line}");
    assert!(line.contains("missing.npy"), "{line}");
}

#[test]
fn the_readme_explains_every_provenance_field() {
    let readme = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md"),
    )
    .unwrap();
    for field in [
        "tool",
        "version",
        "command_line",
        "model_hash",
        "options",
        "input_hashes",
        "simd",
        "seed",
        "chains",
        "burn_in",
        "thin",
    ] {
        assert!(
            readme.contains(&format!("| `{field}` |")),
            "the README's summary table lacks `{field}`"
        );
    }
}

#[test]
fn draws_larger_than_the_free_disk_space_are_refused_before_sampling() {
    let s = Scratch::new("trust-disk");
    s.write("m.json", QUADRATIC);
    s.write("g.json", GAUSSIAN_SUM);
    // About 12,000 TB of draws, streamed to the file (the cap keeps a subset in memory): no disk
    // here has the room, so the run stops before its first step, naming both sizes, and
    // leaves no file behind.
    for line in [
        "sample --model m.json --steps 2000000000000000 --chains 1 --max-memory 1G --out d.npy",
        "sample-continuous --model g.json --step 0.1 --passes 750000000000000 --chains 1 \
         --max-memory 1G --out d.npy",
    ] {
        s.refuses(line, &["d.npy: needs ", "TB, but its file system has "]);
        assert!(!s.path("d.npy").exists(), "{line}");
        let left: Vec<String> = s
            .files()
            .into_iter()
            .filter(|f| f.contains("partial"))
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }
}
