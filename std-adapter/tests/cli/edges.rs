//! The edges of the command line: outputs that must not destroy anything, model files with
//! fields their kind does not have, runs that keep no draws or have not converged, summaries
//! that say how they were made, and the conventions of the argument parser.

use crate::common;

use common::{
    GAUSSIAN_SUM, MIXTURE, QUADRATIC, Scratch, expect, fails, langevin, ok, strings, summary, words,
};
use langevin_std::io::npy::NpyData;

/// A short `sample` run on the quadratic test model in `s` (written as `m.json`).
fn short_run<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut args =
        words("sample --model m.json --steps 40 --burn-in 10 --chains 2 --seed 3 --threads 1");
    args.extend_from_slice(extra);
    args
}

#[test]
fn an_output_naming_an_input_or_another_output_is_refused() {
    let s = Scratch::new("clash");
    s.write("m.json", QUADRATIC);
    let before = std::fs::read(s.path("m.json")).unwrap();
    // The model itself, directly or through another spelling of its path.
    for out in ["m.json", "./m.json", "sub/../m.json"] {
        std::fs::create_dir_all(s.path("sub")).unwrap();
        let line = fails(&s.0, &short_run(&["--out", out]));
        expect(&line, &["--out", "input --model"]);
    }
    let line = fails(&s.0, &short_run(&["--summary", "m.json"]));
    expect(&line, &["--summary", "input --model"]);
    // Two outputs on one file.
    let line = fails(&s.0, &short_run(&["--out", "x.npy", "--summary", "x.npy"]));
    expect(&line, &["--out", "--summary", "same file"]);
    let line = fails(&s.0, &short_run(&["--csv", "-", "--summary", "-"]));
    expect(&line, &["same file"]);
    // An array file the model names.
    s.npy("arr/w.npy", &[2, 2], NpyData::F64(vec![0.0, 0.5, 0.5, 0.0]));
    s.write(
        "arr/q.json",
        r#"{"kind": "binary_quadratic", "W": "w.npy", "b": [0, 0]}"#,
    );
    s.refuses(
        "sample --model arr/q.json --steps 20 --out arr/w.npy",
        &["--out", "the model's `W`"],
    );
    assert_eq!(std::fs::read(s.path("m.json")).unwrap(), before);
    assert!(!s.path("x.npy").exists());
}

#[cfg(unix)]
#[test]
fn a_link_to_an_input_is_the_input_and_links_stay_links() {
    let s = Scratch::new("links");
    s.write("m.json", QUADRATIC);
    std::os::unix::fs::symlink("m.json", s.path("alias.json")).unwrap();
    let line = fails(&s.0, &short_run(&["--out", "alias.json"]));
    expect(&line, &["--out alias.json", "input --model"]);
    // A hard link is the same file too.
    std::fs::hard_link(s.path("m.json"), s.path("hard.json")).unwrap();
    let line = fails(&s.0, &short_run(&["--summary", "hard.json"]));
    expect(&line, &["input --model"]);
    // An output path that is a link is written through; the link stays.
    std::fs::write(s.path("real.json"), "old").unwrap();
    std::os::unix::fs::symlink("real.json", s.path("link.json")).unwrap();
    ok(&s.0, &short_run(&["--summary", "link.json", "--quiet"]));
    let meta = std::fs::symlink_metadata(s.path("link.json")).unwrap();
    assert!(meta.file_type().is_symlink(), "the link was replaced");
    assert_eq!(summary(&s.path("real.json"))["sampler"], "dmala");
}

#[cfg(unix)]
#[test]
fn a_fifo_output_is_written_into_not_replaced() {
    let s = Scratch::new("fifo");
    let fifo = s.path("pipe");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|st| st.success()) {
        return; // no mkfifo on this system
    }
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    s.ok("model ising-lattice --rows 2 --cols 2 --out pipe");
    let text = reader.join().unwrap();
    assert!(text.contains("\"ising_lattice\""), "{text}");
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
}

#[test]
fn a_dash_is_standard_output() {
    let s = Scratch::new("dash");
    s.write("m.json", QUADRATIC);
    let csv = ok(&s.0, &short_run(&["--csv", "-"]));
    assert!(csv.starts_with("chain,draw,x_0,"), "{csv}");
    assert_eq!(
        csv.lines().count(),
        1 + 2 * 40,
        "header and every draw, no table"
    );
    let json = ok(&s.0, &short_run(&["--summary", "-"]));
    let parsed: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(parsed["sampler"], "dmala");
    let model = s.ok("model binary-quadratic --dim 3 --out -");
    assert!(model.contains("\"binary_quadratic\""));
    assert_eq!(s.files(), ["m.json"], "no file named `-`");
    let line = fails(&s.0, &short_run(&["--plot", "-"]));
    expect(&line, &["--plot", "standard output"]);
}

#[test]
fn model_rbm_npy_never_overwrites_its_weights() {
    let s = Scratch::new("rbm-npy");
    s.npy("r_W.npy", &[2, 3], NpyData::F64(vec![0.5; 6]));
    let before = std::fs::read(s.path("r_W.npy")).unwrap();
    s.refuses(
        "model rbm --weights r_W.npy --out r.json --npy",
        &["r_W.npy", "input --weights"],
    );
    assert_eq!(std::fs::read(s.path("r_W.npy")).unwrap(), before);
    assert!(!s.path("r.json").exists());
    s.refuses(
        "model rbm --weights r_W.npy --out r_W.npy",
        &["input --weights"],
    );
    // Another stem is fine.
    s.ok("model rbm --weights r_W.npy --out copy.json --npy");
    assert!(s.path("copy_W.npy").exists());
}

#[test]
fn unknown_model_fields_are_named_with_the_kinds_fields() {
    let s = Scratch::new("strict");
    s.write(
        "m.json",
        r#"{"kind":"ising_lattice","rows":3,"cols":3,"coupling":0.2,"periodc":false,"feild":5}"#,
    );
    let line = fails(&s.0, &short_run(&[]));
    expect(
        &line,
        &[
            "m.json",
            "`feild`",
            "did you mean `field`",
            "`periodic`",
            "`coupling`",
        ],
    );
    s.write(
        "c.json",
        r#"{"kind":"gaussian_sum","centers":[[0,1]],"centres":[[0,1]]}"#,
    );
    s.refuses(
        "sample-continuous --model c.json --step 0.1",
        &["c.json", "`centres`", "did you mean `centers`"],
    );
}

#[test]
fn the_schema_lists_every_kind_and_refuses_other_fields() {
    let s = Scratch::new("schema");
    let text = s.ok("model --schema");
    let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
    let kinds: Vec<&str> = schema["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["properties"]["kind"]["const"].as_str().unwrap())
        .collect();
    for kind in [
        "ising_lattice",
        "rbm",
        "potts",
        "quartic_mixture",
        "ridge_regression",
    ] {
        assert!(kinds.contains(&kind), "{kind} missing from {kinds:?}");
    }
    for k in schema["oneOf"].as_array().unwrap() {
        assert_eq!(k["additionalProperties"], false);
    }
    // Every file the generators write is valid under the schema's field lists.
    let lattice = s.ok("model lattice-gaussian --dim 3 --states 4");
    let lattice: serde_json::Value = serde_json::from_str(&lattice).unwrap();
    let ordinal = schema["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["title"] == "ordinal_quadratic")
        .unwrap();
    for field in lattice.as_object().unwrap().keys() {
        assert!(ordinal["properties"].get(field).is_some(), "{field}");
    }
    s.refuses("model --schema rbm", &["--schema"]);
}

#[test]
fn runs_without_draws_are_errors() {
    let s = Scratch::new("nodraws");
    s.write("m.json", QUADRATIC);
    s.refuses(
        "sample --model m.json --steps 0 --summary s.json",
        &["--steps 0", "no draws"],
    );
    s.refuses(
        "sample --model m.json --steps 3 --thin 5",
        &["--thin 5", "no draws"],
    );
    s.write("g.json", GAUSSIAN_SUM);
    s.refuses(
        "sample-continuous --model g.json --step 0.1 --passes 0.2 --summary s.json",
        &["passes", "zero draws"],
    );
    assert_eq!(s.files(), ["g.json", "m.json"]);
}

#[test]
fn unconverged_runs_warn_and_converged_ones_do_not() {
    let s = Scratch::new("warnings");
    s.write("m.json", QUADRATIC);
    // 40 draws per chain cannot reach an ESS of 100 over 2 chains.
    let table = ok(&s.0, &short_run(&["--summary", "short.json"]));
    assert!(table.contains("WARNING"), "{table}");
    let short = summary(&s.path("short.json"));
    let warnings = short["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().starts_with("ESS ")),
        "{warnings:?}"
    );
    // A 6-coordinate model with 4 × 4000 draws of DMALA: seeded, so the result is fixed; its
    // R-hat is 1.004 and its smallest ESS about 1050.
    let table = s.ok(
        "sample --model m.json --steps 4000 --burn-in 200 --chains 4 --seed 1 --summary long.json",
    );
    let long = summary(&s.path("long.json"));
    assert_eq!(long["warnings"], serde_json::json!([]), "{table}");
    assert!(!table.contains("WARNING"), "{table}");
    // Continuous runs report R-hat and ESS and warn the same way.
    s.write("g.json", GAUSSIAN_SUM);
    s.ok("sample-continuous --model g.json --step 0.1 --passes 5 --summary c.json");
    let c = summary(&s.path("c.json"));
    assert!(
        c["rhat_max"].as_f64().is_some() && c["ess_min"].as_f64().is_some(),
        "{c}"
    );
    assert!(!c["warnings"].as_array().unwrap().is_empty(), "{c}");
}

#[test]
fn summaries_say_how_they_were_made() {
    let s = Scratch::new("provenance");
    s.write("m.json", QUADRATIC);
    ok(&s.0, &short_run(&["--summary", "s.json", "--quiet"]));
    let j = summary(&s.path("s.json"));
    assert_eq!(j["tool"], "langevin");
    assert_eq!(j["version"], env!("CARGO_PKG_VERSION"));
    let line = strings(&j["command_line"]);
    assert_eq!(
        &line[1..],
        short_run(&["--summary", "s.json", "--quiet"]).as_slice()
    );
    assert!(j["model_hash"].as_str().unwrap().starts_with("fnv1a64:"));
    for field in [
        "seed", "chains", "steps", "burn_in", "thin", "step", "balance", "kind",
    ] {
        assert!(j.get(field).is_some(), "{field}");
    }
    s.write("g.json", GAUSSIAN_SUM);
    s.ok("sample-continuous --model g.json --step 0.1 --passes 3 --chains 2 --seed 5 --summary c.json --quiet");
    let c = summary(&s.path("c.json"));
    for field in [
        "version",
        "command_line",
        "model",
        "model_hash",
        "kind",
        "step",
        "seed",
        "batch",
        "access",
        "burn_in_passes",
        "steps_per_chain",
    ] {
        assert!(c.get(field).is_some(), "{field}: {c}");
    }
    assert_eq!(c["seed"], 5);
    assert_eq!(c["kind"], "gaussian_sum");
    assert_eq!(
        c["steps_per_chain"].as_u64().unwrap() * 2,
        c["steps"].as_u64().unwrap()
    );
}

#[test]
fn the_parser_suggests_and_passes_negative_numbers_on() {
    let s = Scratch::new("parser");
    expect(&s.fails("smaple"), &["smaple", "tip", "'sample'"]);
    expect(
        &s.fails("sample --model m.json --stpes 5"),
        &["--stpes", "tip", "--steps"],
    );
    s.write("g.json", GAUSSIAN_SUM);
    let line = s.fails("sample-continuous --model g.json --step 0.1 --passes -1");
    expect(&line, &["passes", "-1"]);
    assert!(!line.contains("unexpected argument"), "{line}");
    let help = s.ok("--help");
    assert!(
        help.contains("Gradient-informed MCMC") && help.contains("Example:"),
        "{help}"
    );
    assert!(
        !help.contains("langevin-core"),
        "the crate description: {help}"
    );
}

#[test]
fn sdp_takes_integer_matrices() {
    let s = Scratch::new("sdp-int");
    s.npy("w.npy", &[2, 2], NpyData::I64(vec![0, 3, 3, 0]));
    let line = s.ok("sdp --matrix w.npy --summary s.json --quiet");
    assert!(line.is_empty());
    let j = summary(&s.path("s.json"));
    // W = [[0, 3], [3, 0]] needs d = (3, 3): trace 6.
    assert!((j["trace"].as_f64().unwrap() - 6.0).abs() < 0.01, "{j}");
    s.refuses(
        "sdp --matrix w.npy --out w.npy",
        &["--out", "input --matrix"],
    );
}

/// The memory estimate counts the model's parameters, and an RBM's `Wᵀ` for the samplers that
/// build it (not for block Gibbs).
#[test]
fn memory_estimate_counts_the_model() {
    let s = Scratch::new("memory-model");
    s.ok("model rbm --visible 100 --hidden 50 --seed 3 --out rbm.json");
    // W is 50 × 100: 20.0 kB, its transpose as much, b and c 600 B; the parsed model file
    // 650 kB; the draws and their copy 200 kB (read under the cap first: 717 kB).
    let run = |sampler: &str, cap: &str| {
        capped(
            &format!(
                "sample --model rbm.json --sampler {sampler} --steps 1000 --burn-in 0 --chains 1 \
                 --threads 1 --diagnostics none --quiet"
            ),
            cap,
            "",
        )
    };
    let fails_with = |sampler, cap| s.fails(&run(sampler, cap));
    let line = fails_with("dmala", "880k");
    expect(
        &line,
        &[
            "the model's parameters 20.6 kB",
            "the transpose of its W 20.0 kB",
        ],
    );
    let line = fails_with("block-gibbs", "800k");
    expect(&line, &["the model's parameters 20.6 kB"]);
    assert!(!line.contains("transpose"), "{line}");
    s.ok(&run("block-gibbs", "880k"));
    s.ok(&run("dmala", "950k"));
}

/// `args`, then `--max-memory cap`, then `rest`: the command line of a run under a memory cap.
fn capped(args: &str, cap: &str, rest: &str) -> String {
    format!("{args} --max-memory {cap} {rest}")
}

#[test]
fn oversized_requests_are_refused_before_allocating() {
    let s = Scratch::new("memory");
    s.write("m.json", QUADRATIC);
    let sample = "sample --model m.json --burn-in 0 --out d.npy";
    // Beyond 2^64 bytes, whatever the machine: refused under the default cap.
    s.refuses(
        &format!("{sample} --steps 18446744073709551615"),
        &[
            "more than 2^64 bytes",
            "kept draws beyond 2^64",
            "--max-memory",
        ],
    );
    s.refuses(
        &format!("{sample} --chains 18446744073709551615 --steps 10"),
        &["more than 2^64 bytes"],
    );
    // 4 chains × 10¹⁰ draws × 6 coordinates: 240 GB of draws, all needed in memory for the
    // CSV (with `--out` alone they would stream to the file).
    s.refuses(
        &capped(sample, "100G", "--steps 10000000000 --csv d.csv"),
        &[
            "needs about",
            "kept draws 240.0 GB",
            "above the limit of 100.0 GB (--max-memory)",
        ],
    );
    // A small run under a tiny cap, then under a fair one.
    s.refuses(&capped(sample, "1k", "--steps 1000"), &["limit of 1000 B"]);
    s.ok(&capped(sample, "1G", "--steps 1000 --quiet"));
    s.refuses(
        &capped("sample --model m.json", "lots", ""),
        &["--max-memory", "lots"],
    );
    s.write("g.json", GAUSSIAN_SUM);
    s.refuses(
        &capped(
            "sample-continuous --model g.json --step 0.1 --passes 1000000000",
            "10G",
            "",
        ),
        &["kept draws 32.0 GB", "10.0 GB"],
    );
    // `model binary-quadratic --dim 100000`: 10¹⁰ entries.
    s.refuses(
        "model binary-quadratic --dim 100000 --out bq.json",
        &["arrays 120.0 GB", "JSON text 240.0 GB"],
    );
    s.refuses(
        &capped("model binary-quadratic --dim 50", "10k", ""),
        &["limit of 10.0 kB (--max-memory)"],
    );
    assert_eq!(s.files(), ["d.npy", "g.json", "m.json"]);
}

#[test]
fn continuous_draws_beyond_the_memory_cap_stream_to_the_file() {
    let s = Scratch::new("stream-continuous");
    s.write("g.json", GAUSSIAN_SUM);
    // 2 chains × 100 000 draws of 2 floats: 1.6 MB of draws, more with their diagnostics; under
    // 3 MB only a subset stays in memory.
    let run = |cap: &str, out: &str, summary: &str| {
        s.ok(&capped(
            "sample-continuous --model g.json --step 0.1 --passes 100000 --chains 2 --threads 1 \
             --seed 3",
            cap,
            &format!("--out {out} --summary {summary} --quiet"),
        ));
    };
    run("3M", "small.npy", "small.json");
    run("1G", "big.npy", "big.json");
    assert_eq!(
        std::fs::read(s.path("small.npy")).unwrap(),
        std::fs::read(s.path("big.npy")).unwrap()
    );
    let read = langevin_std::io::npy::read_npy(s.path("small.npy")).unwrap();
    assert_eq!(read.shape, [2, 100000, 2]);
    let (small, big) = (summary(&s.path("small.json")), summary(&s.path("big.json")));
    let on = &small["diagnostics_on"];
    let every = on["every"].as_u64().unwrap();
    assert!(every >= 2, "{on}");
    assert_eq!(on["draws_per_chain"], 100000u64.div_ceil(every), "{on}");
    assert!(big.get("diagnostics_on").is_none(), "{big}");
    // The means are over every kept draw either way.
    assert_eq!(small["mean"], big["mean"]);
}

#[test]
fn draws_beyond_the_memory_cap_stream_to_the_file_and_the_diagnostics_use_a_subset() {
    let s = Scratch::new("stream");
    // Binary (uint8) and a label model with more than 256 values (int32).
    for (name, model) in [("q.json", QUADRATIC), ("m.json", MIXTURE)] {
        s.write(name, model);
        // 2 chains × 100 000 draws: about 15 MB in memory with their diagnostics, 2 or 5 MB of
        // write buffers; under 12 MB one draw in 2 or 3 stays for the diagnostics.
        let line = |cap: &str, out: &str, summary: &str| {
            capped(
                &format!(
                    "sample --model {name} --steps 100000 --burn-in 10 --chains 2 --threads 1 \
                     --seed 3"
                ),
                cap,
                &format!("--out {out} --summary {summary} --quiet"),
            )
        };
        s.ok(&line("12M", "small.npy", "small.json"));
        s.ok(&line("1G", "big.npy", "big.json"));
        let (small, big) = (s.path("small.npy"), s.path("big.npy"));
        assert_eq!(
            std::fs::read(&small).unwrap(),
            std::fs::read(&big).unwrap(),
            "{name}"
        );
        let read = langevin_std::io::npy::read_npy(&small).unwrap();
        assert_eq!(
            read.shape,
            [2, 100000, if name == "q.json" { 6 } else { 2 }]
        );
        let (small, big) = (summary(&s.path("small.json")), summary(&s.path("big.json")));
        let on = &small["diagnostics_on"];
        let every = on["every"].as_u64().unwrap();
        assert!((2..=3).contains(&every), "{name}: {on}");
        assert_eq!(on["draws_per_chain"], 100000u64.div_ceil(every), "{on}");
        assert_eq!(on["of"], 100000, "{on}");
        assert!(big.get("diagnostics_on").is_none(), "{big}");
        assert!(small["rhat_max"].as_f64().is_some(), "{small}");
        // The means are over every kept draw either way.
        assert_eq!(small["mean"], big["mean"]);
        // Standard output streams the same bytes.
        let out = langevin(&s.0, &words(&line("12M", "-", "small.json")));
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.stdout, std::fs::read(s.path("big.npy")).unwrap());
        // Without --out the draws have nowhere to go: refused as before; --csv needs them all.
        let run = format!("sample --model {name} --steps 100000 --chains 2 --threads 1");
        s.refuses(
            &capped(&run, "12M", ""),
            &["kept draws", "limit of 12.0 MB"],
        );
        s.refuses(
            &capped(&run, "12M", "--out x.npy --csv x.csv"),
            &["CSV text", "limit of 12.0 MB"],
        );
        assert!(!s.path("x.npy").exists());
    }
}

#[test]
fn a_quartic_mixture_too_large_to_build_is_refused_before_building() {
    let s = Scratch::new("quartic-memory");
    let model = |dim: &str| {
        format!(
            r#"{{"kind":"quartic_mixture","dim":{dim},"states":4,"components":2,"sigma":1.0,"seed":6}}"#
        )
    };
    // 10⁵ coordinates: 400 GB of rotations (an allocation abort before), and beyond 2^64
    // bytes (a capacity-overflow panic before).
    s.write("q.json", &model("100000"));
    let line = s.fails("sample --model q.json --max-memory 100M");
    expect(
        &line,
        &["the model's rotation 400.0 GB", "limit of 100.0 MB"],
    );
    s.write("q.json", &model("5000000000"));
    s.refuses(
        "sample --model q.json",
        &["the model's rotation beyond 2^64 bytes"],
    );
    // A small one runs under the same cap.
    s.write("q.json", &model("20"));
    s.ok("sample --model q.json --steps 20 --burn-in 0 --max-memory 100M --quiet");
}

/// The command lines of the README's `## Command line` section: every line of its code blocks
/// that starts with `langevin`, continuation lines joined.
fn readme_synopses() -> Vec<String> {
    let readme = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md"),
    )
    .unwrap();
    let section = readme.split("\n## Command line").nth(1).unwrap();
    let section = section.split("\n## ").next().unwrap();
    section
        .split("```")
        .skip(1)
        .step_by(2)
        .flat_map(|block| {
            block
                .replace("\\\n", " ")
                .lines()
                .map(str::trim)
                .filter(|l| l.starts_with("langevin"))
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn the_readme_synopses_agree_with_help() {
    let s = Scratch::new("synopsis");
    let synopses = readme_synopses();
    let top = s.ok("--help");
    // Every command `--help` lists has a synopsis, and every synopsis names a command.
    let commands: Vec<&str> = top
        .split("Commands:")
        .nth(1)
        .unwrap()
        .split("Options:")
        .next()
        .unwrap()
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .collect();
    assert!(commands.len() >= 7, "{commands:?}");
    for command in &commands {
        assert!(
            synopses
                .iter()
                .any(|l| l.split_whitespace().nth(1) == Some(command)),
            "`langevin {command}` has no synopsis in the README"
        );
    }
    for line in &synopses {
        let Some(command) = line
            .split_whitespace()
            .nth(1)
            .filter(|w| !w.starts_with('#'))
        else {
            continue;
        };
        assert!(
            commands.contains(&command),
            "README names `langevin {command}`"
        );
        // A generator line (`langevin model rbm ...`): the generator's own help.
        let help = match line.split_whitespace().nth(2) {
            Some(sub)
                if command == "model"
                    && !sub.starts_with('-')
                    && sub.chars().all(|c| c.is_ascii_lowercase() || c == '-') =>
            {
                s.ok(&format!("{command} {sub} --help"))
            }
            _ => s.ok(&format!("{command} --help")),
        };
        // Every flag the synopsis shows is one `--help` lists.
        for flag in line
            .split(|c: char| c.is_whitespace() || "[]{}|=".contains(c))
            .filter(|w| w.starts_with("--") && w.len() > 2)
        {
            let flag = flag.trim_end_matches(|c: char| !c.is_alphanumeric());
            assert!(
                help.contains(&format!("{flag} ")) || help.contains(&format!("{flag}\n")),
                "README: `langevin {command} ... {flag}` is not in `langevin {command} --help`"
            );
        }
    }
}
