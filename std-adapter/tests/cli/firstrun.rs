//! The first run and figures that cannot mislead: the README's first screen and every example
//! in it, run as written; the option reference kept current with `--help`; default step
//! adaptation; the per-coordinate summary columns; the warnings beside figures of chains that
//! have not mixed; the demo's marks; `train --plot` as a learning curve.

use crate::common;

use common::{GAUSSIAN_SUM, Scratch, contains_all, langevin, ok, summary, words};
use std::path::Path;
use std::time::{Duration, Instant};

const README: &str = include_str!("../../../README.md");

/// The ```sh blocks of the README (also indented ones, inside list items), each a list of
/// logical lines: comments kept, `\` continuations joined.
fn sh_blocks(text: &str) -> Vec<Vec<String>> {
    sh_blocks_with_prose(text)
        .into_iter()
        .map(|(b, _)| b)
        .collect()
}

/// [`sh_blocks`], each with the prose that follows it up to the next code block.
fn sh_blocks_with_prose(text: &str) -> Vec<(Vec<String>, String)> {
    let mut blocks: Vec<(Vec<String>, String)> = Vec::new();
    let mut current: Option<Vec<String>> = None;
    let mut pending = String::new();
    let mut prose: Option<String> = None;
    for line in text.lines() {
        let t = line.trim();
        match &mut current {
            None if t == "```sh" || t == "```bash" => {
                if let (Some(p), Some(last)) = (prose.take(), blocks.last_mut()) {
                    last.1 = p;
                }
                current = Some(Vec::new());
            }
            None if t.starts_with("```") => {
                if let (Some(p), Some(last)) = (prose.take(), blocks.last_mut()) {
                    last.1 = p;
                }
            }
            None => {
                if let Some(p) = &mut prose {
                    p.push_str(line);
                    p.push('\n');
                }
            }
            Some(_) if t == "```" => {
                blocks.extend(current.take().map(|b| (b, String::new())));
                prose = Some(String::new());
            }
            Some(block) => {
                if let Some(head) = t.strip_suffix('\\') {
                    pending.push_str(head);
                    pending.push(' ');
                } else {
                    pending.push_str(t);
                    if !pending.trim().is_empty() {
                        block.push(pending.trim().to_string());
                    }
                    pending.clear();
                }
            }
        }
    }
    if let (Some(p), Some(last)) = (prose.take(), blocks.last_mut()) {
        last.1 = p;
    }
    blocks
}

/// A line's command without its trailing `# comment`.
fn command(line: &str) -> &str {
    line.split(" #").next().unwrap_or(line).trim()
}

#[test]
fn the_first_screen_installs_and_tests() {
    let blocks = sh_blocks(README);
    let first = &blocks[0];
    let commands: Vec<&str> = first.iter().map(|l| command(l)).collect();
    assert_eq!(
        commands,
        [
            "cargo install --path std-adapter && langevin",
            "cargo test --workspace"
        ],
        "the README's first block"
    );
    // On the first screen: within the first 25 lines.
    let at = README.find("cargo install --path std-adapter").unwrap();
    assert!(
        README[..at].lines().count() < 25,
        "install line too far down"
    );
    // The first model file comes before the wall of detail.
    let model = README.find("langevin model ising-lattice").unwrap();
    let detail = README.find("## Command line").unwrap();
    assert!(
        model < detail,
        "the first model comes after the command-line reference"
    );
    // The package the install line names builds the `langevin` binary.
    let manifest = include_str!("../../Cargo.toml");
    assert!(
        manifest.contains("name = \"langevin\""),
        "no langevin binary in std-adapter"
    );
    // Continuous kinds are all named.
    contains_all(
        README,
        &[
            "gaussian_sum",
            "logistic_regression",
            "ridge_regression",
            "gaussian_mixture",
        ],
    );
}

/// A README line that is marked long runs only with `LANGEVIN_README_LONG=1`.
fn is_long(line: &str) -> bool {
    line.contains("# (long)")
}

#[test]
fn every_readme_example_runs_as_written_in_under_a_minute() {
    let scratch = Scratch::new("readme");
    let long = std::env::var_os("LANGEVIN_README_LONG").is_some();
    let mut ran = 0;
    for (block, prose) in sh_blocks_with_prose(README).iter().skip(1) {
        for line in block {
            let cmd = command(line);
            let Some(args) = cmd.strip_prefix("langevin ") else {
                assert!(
                    cmd.is_empty() || cmd.starts_with('#'),
                    "a README example that is not a `langevin` command: {line}"
                );
                continue;
            };
            if is_long(line) && !long {
                eprintln!(
                    "README example marked long, skipped (LANGEVIN_README_LONG=1 runs it): {cmd}"
                );
                continue;
            }
            let start = Instant::now();
            let out = langevin(&scratch.0, &words(args));
            let took = start.elapsed();
            assert!(
                out.status.success(),
                "README example failed: {cmd}\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(took < Duration::from_secs(60), "{cmd} took {took:?}");
            // An example that ends in a convergence warning is followed by text saying why.
            let stdout = String::from_utf8_lossy(&out.stdout);
            if stdout.contains("WARNING") {
                assert!(
                    prose.to_lowercase().contains("warning"),
                    "README example warns and the README does not say why: {cmd}\n{stdout}"
                );
            }
            ran += 1;
        }
    }
    assert!(ran >= 15, "only {ran} README examples found");
}

#[test]
fn the_readmes_first_model_converges_and_says_so() {
    let scratch = Scratch::new("first-model");
    scratch.ok("model ising-lattice --rows 5 --cols 5 --coupling 0.2 --field 0.2 --out ising.json");
    let out = scratch.ok("sample --model ising.json --sampler dmala --summary s.json");
    assert!(!out.contains("WARNING"), "{out}");
    let s = summary(&scratch.path("s.json"));
    assert_eq!(s["warnings"].as_array().unwrap().len(), 0, "{s}");
}

/// Every `--option` the help of `path` shows.
fn options_of(path: &[&str]) -> Vec<String> {
    let mut args = path.to_vec();
    args.push("--help");
    let help = ok(std::env::temp_dir().as_path(), &args);
    let mut flags: Vec<String> = help
        .lines()
        .filter_map(|l| {
            let t = l.trim_start();
            let t = t.strip_prefix("-h, ").or(Some(t))?;
            let t = t.strip_prefix("-V, ").unwrap_or(t);
            t.strip_prefix("--").map(|rest| {
                rest.split([' ', '<', ',', '='])
                    .next()
                    .unwrap_or("")
                    .to_string()
            })
        })
        .filter(|f| !f.is_empty() && f != "help" && f != "version")
        .collect();
    flags.dedup();
    flags
}

/// The subcommands listed under `Commands:` in the help of `path`.
fn subcommands(path: &[&str]) -> Vec<String> {
    let mut args = path.to_vec();
    args.push("--help");
    let help = ok(std::env::temp_dir().as_path(), &args);
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .filter(|c| c != "help")
        .collect()
}

/// Every command path of the binary: the subcommands and the model generators.
fn command_paths() -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    for c in subcommands(&[]) {
        paths.push(vec![c.clone()]);
        for s in subcommands(&[c.as_str()]) {
            paths.push(vec![c.clone(), s]);
        }
    }
    paths
}

/// `docs/cli.md` as the binary's `--help` writes it.
fn cli_reference() -> String {
    let mut text = String::from(
        "# Command-line reference\n\nThe `--help` of every command, as the binary prints it. \
         Generated: `LANGEVIN_BLESS=1 cargo test -p langevin-std --test cli firstrun` rewrites \
         it, and the test fails while an option `--help` shows is missing here.\n",
    );
    let mut all = vec![Vec::new()];
    all.extend(command_paths());
    for path in all {
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        let title = if args.is_empty() {
            "langevin".to_string()
        } else {
            format!("langevin {}", args.join(" "))
        };
        args.push("--help");
        let help = ok(std::env::temp_dir().as_path(), &args);
        text.push_str(&format!("\n## `{title}`\n\n```text\n{}```\n", help));
    }
    text
}

#[test]
fn every_option_help_shows_is_in_the_reference() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/cli.md");
    if std::env::var_os("LANGEVIN_BLESS").is_some() {
        std::fs::write(&path, cli_reference()).unwrap();
    }
    let reference = std::fs::read_to_string(&path).unwrap();
    let mut missing = Vec::new();
    for p in command_paths() {
        let args: Vec<&str> = p.iter().map(String::as_str).collect();
        for flag in options_of(&args) {
            let needle = format!("--{flag}");
            let present = reference.match_indices(&needle).any(|(i, _)| {
                !reference[i + needle.len()..]
                    .starts_with(|c: char| c.is_ascii_alphanumeric() || c == '-')
            });
            if !present {
                missing.push(format!("{} --{flag}", p.join(" ")));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "options missing from docs/cli.md (regenerate with LANGEVIN_BLESS=1): {missing:?}"
    );
    assert!(
        README.contains("docs/cli.md"),
        "the README does not link the reference"
    );
}

#[test]
fn dmala_tunes_its_step_unless_one_is_given() {
    let scratch = Scratch::new("adapt-default");
    scratch.ok("model ising-lattice --rows 4 --cols 4 --coupling 0.3 --out m.json");
    let run = |extra: &str, name: &str| {
        let line = format!(
            "sample --model m.json --sampler dmala --steps 400 --burn-in 200 --chains 2 --summary {name} {extra}"
        );
        scratch.ok(&line);
        summary(&scratch.path(name))
    };
    let tuned = run("", "a.json");
    let t = &tuned["tuned"][0];
    assert!(
        t["expected_changes"].as_f64().is_some(),
        "not tuned by default: {tuned}"
    );
    let fixed = run("--step 0.2", "b.json");
    assert!(
        fixed.get("tuned").is_none(),
        "a given --step was tuned: {fixed}"
    );
    assert_eq!(fixed["step"], 0.2);
    // A given balance asks for the fixed proposal too.
    let balanced = run("--balance 0.5", "e.json");
    assert!(balanced.get("tuned").is_none(), "{balanced}");
    assert_eq!(balanced["mean"], fixed["mean"]);
    // The same as --adapt acceptance, draw for draw.
    let explicit = run("--adapt acceptance", "c.json");
    assert_eq!(tuned["mean"], explicit["mean"]);
    assert_ne!(tuned["mean"], fixed["mean"]);
    // dula has no test to tune against: its step stays.
    let dula =
        scratch.ok("sample --model m.json --sampler dula --steps 100 --chains 2 --summary d.json");
    let d = summary(&scratch.path("d.json"));
    assert_eq!(d["step"], 0.2, "{dula}");
    assert!(d.get("tuned").is_none());
}

#[test]
fn the_summary_has_arviz_columns_per_coordinate() {
    let scratch = Scratch::new("arviz");
    scratch.ok("model ising-lattice --rows 3 --cols 3 --coupling 0.2 --field 0.3 --out m.json");
    let out = scratch
        .ok("sample --model m.json --sampler gibbs --steps 4000 --chains 4 --summary s.json");
    contains_all(
        &out,
        &[
            "mean",
            "sd",
            "q5",
            "q50",
            "q95",
            "mcse_mean",
            "ess_bulk",
            "ess_tail",
            "r_hat",
        ],
    );
    let s = summary(&scratch.path("s.json"));
    let col = |k: &str| column(&s, k);
    let (mean, sd, mcse, bulk) = (col("mean"), col("sd"), col("mcse_mean"), col("ess_bulk"));
    let (q5, q50, q95, tail, rhat) = (
        col("q5"),
        col("q50"),
        col("q95"),
        col("ess_tail"),
        col("rhat"),
    );
    assert_eq!(mean.len(), 9);
    for i in 0..9 {
        for v in [
            sd[i], mcse[i], bulk[i], tail[i], rhat[i], q5[i], q50[i], q95[i],
        ] {
            assert!(v.is_finite(), "coordinate {i}: {s}");
        }
        // A 0/1 coordinate: sd² = p(1 − p) · n/(n − 1).
        let p = mean[i];
        assert!(
            (sd[i] * sd[i] - p * (1.0 - p)).abs() < 1e-3,
            "sd {i}: {} {p}",
            sd[i]
        );
        assert!(q5[i] <= q50[i] && q50[i] <= q95[i]);
        // The MCSE of the mean is sd/√ESS with an ESS of the same order as the bulk ESS.
        let implied = (sd[i] / mcse[i]).powi(2);
        assert!(
            implied > 0.5 * bulk[i] && implied < 2.0 * bulk[i],
            "{i}: {implied} {}",
            bulk[i]
        );
        assert!(tail[i] > 100.0 && rhat[i] < 1.01, "{i}: {s}");
    }
    // Existing fields stay.
    for k in ["ess_min", "ess_median", "rhat_max", "mean"] {
        assert!(s.get(k).is_some(), "{k}");
    }
}

/// A 20×20 critical Ising model: local samplers cannot mix on it in a few hundred steps.
fn critical(scratch: &Scratch) {
    scratch.ok("model ising-lattice --rows 20 --cols 20 --coupling 0.4407 --out crit.json");
}

#[test]
fn figures_beside_a_failed_rhat_carry_a_warning() {
    let scratch = Scratch::new("figures-warn");
    critical(&scratch);
    // sample: every efficiency line marked.
    let out =
        scratch.ok("sample --model crit.json --sampler rwm --steps 200 --burn-in 0 --chains 4");
    for label in ["ESS per second", "ESS per 10k evals", "R-hat (max)"] {
        let line = out.lines().find(|l| l.starts_with(label)).unwrap();
        assert!(line.contains("WARNING: not converged"), "{line}");
    }
    // bench.
    let out = scratch.ok(
        "bench --model crit.json --sampler rwm --steps 100 --repeats 2 --ess-steps 200 --chains 4",
    );
    for label in ["ESS per second", "ESS per core-second", "ESS per 10k evals"] {
        let line = out.lines().find(|l| l.starts_with(label)).unwrap();
        assert!(line.contains("WARNING: not converged"), "{line}");
    }
    // compare: the R-hat column and the mark on the row.
    let out = scratch.ok(
        "compare --models ising-grid --samplers dmala --chains 2 --steps 40 --tune 300 --threads 1",
    );
    let row = out.lines().find(|l| l.starts_with("dmala")).unwrap();
    assert!(row.contains("WARNING: not converged"), "{out}");
    assert!(out.contains("R-hat"), "{out}");
    let json = scratch.ok("compare --models ising-grid --samplers dmala --chains 2 --steps 40 --tune 300 --threads 1 --format json");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(v["rows"][0]["rhat_hamming"].as_f64().unwrap() > 1.01, "{v}");
}

#[test]
fn converged_figures_carry_no_warning() {
    let scratch = Scratch::new("figures-ok");
    scratch.ok("model ising-lattice --rows 4 --cols 4 --coupling 0.2 --out m.json");
    let out = scratch.ok("bench --model m.json --sampler dmala --step 0.5 --steps 100 --repeats 2 --ess-steps 4000 --chains 4");
    assert!(!out.contains("WARNING"), "{out}");
}

#[test]
fn block_gibbs_has_no_figure_per_evaluation() {
    let scratch = Scratch::new("block-gibbs-evals");
    scratch.ok("model rbm --visible 9 --hidden 4 --seed 1 --out rbm.json");
    let out = scratch.ok(
        "sample --model rbm.json --sampler block-gibbs --steps 500 --chains 4 --summary s.json",
    );
    let line = out
        .lines()
        .find(|l| l.starts_with("ESS per 10k evals"))
        .unwrap();
    assert!(line.contains("n/a"), "{line}");
    let s = summary(&scratch.path("s.json"));
    assert!(s["ess_per_10k_evals"].is_null(), "{s}");
    // A sampler that evaluates the target keeps its figure.
    scratch.ok("sample --model rbm.json --sampler gibbs --steps 500 --chains 4 --summary g.json");
    let g = summary(&scratch.path("g.json"));
    assert!(g["ess_per_10k_evals"].as_f64().unwrap() > 0.0, "{g}");
}

/// Width and height of a PNG file (from its IHDR chunk).
fn png_size(path: &Path) -> (u32, u32) {
    let bytes = std::fs::read(path).unwrap();
    let be = |k: usize| u32::from_be_bytes(bytes[k..k + 4].try_into().unwrap());
    (be(16), be(20))
}

#[test]
fn the_demo_marks_bias_and_non_convergence_and_traces_an_exact_sampler() {
    let scratch = Scratch::new("demo-marks");
    let out = scratch.ok("demo --steps 1000 --mixture-steps 1000 --chains 2 --plot d.png");
    let dula = out.lines().find(|l| l.starts_with("dula")).unwrap();
    assert!(dula.contains("biased"), "{dula}");
    // At the critical coupling, 1000 steps converge nowhere: every row says so.
    let part1 = out.split("part 2").next().unwrap();
    let rows: Vec<&str> = part1
        .lines()
        .filter(|l| l.starts_with("dmala") || l.starts_with("rwm"))
        .collect();
    assert_eq!(rows.len(), 3, "{part1}");
    for l in rows {
        assert!(l.contains("not converged"), "{l}");
    }
    let traced = out.lines().find(|l| l.contains("d.trace.png")).unwrap();
    assert!(
        !traced.contains("dula"),
        "traces the biased sampler: {traced}"
    );
    assert!(traced.contains("exact sampler"), "{traced}");
    // The chart has room for its axis labels and note.
    let (w, h) = png_size(&scratch.path("d.png"));
    assert!(w > 0 && h >= 460 + 60, "{w}×{h}");
}

#[test]
fn train_plot_is_a_learning_curve() {
    let scratch = Scratch::new("train-curve");
    // Data: 200 rows of 9 binary units.
    let rows: Vec<u8> = (0..200 * 9)
        .map(|k| ((k * 7 + k / 9) % 3 == 0) as u8)
        .collect();
    scratch.npy("x.npy", &[200, 9], langevin_std::io::npy::NpyData::U8(rows));
    scratch.ok(
        "train --data x.npy --test x.npy --model-kind rbm --hidden 4 --sampler block-gibbs \
             --pcd-steps 1 --chains 20 --batch 20 --lr 0.05 --updates 60 --eval-every 20 --seed 1 \
             --out m.json --plot curve.png",
    );
    // One panel, 1000×560: not the 1000×800 trace-and-autocorrelation picture.
    assert_eq!(png_size(&scratch.path("curve.png")), (1000, 560));
}

#[test]
fn the_continuous_summary_has_arviz_columns_too() {
    let scratch = Scratch::new("arviz-continuous");
    scratch.write("g.json", GAUSSIAN_SUM);
    let out = scratch.ok(
        "sample-continuous --model g.json --sampler lmc --step 0.05 --passes 4000 --chains 4 \
             --seed 3 --summary s.json",
    );
    assert!(out.contains("ess_tail (first 2)"), "{out}");
    let s = summary(&scratch.path("s.json"));
    let col = |k: &str| column(&s, k);
    let (var, sd, q5, q50, q95) = (col("var"), col("sd"), col("q5"), col("q50"), col("q95"));
    let (mcse, bulk, tail, rhat) = (
        col("mcse_mean"),
        col("ess_bulk"),
        col("ess_tail"),
        col("rhat"),
    );
    for i in 0..2 {
        // The sample sd is the square root of the reported variance (up to n/(n − 1)).
        assert!((sd[i] * sd[i] / var[i] - 1.0).abs() < 1e-2, "{i}: {s}");
        // N(½, ½): the quantiles at ½ ∓ 1.645·√½, within the run's Monte Carlo error.
        let half = 0.5f64.sqrt();
        assert!((q50[i] - 0.5).abs() < 0.15, "{i}: {s}");
        assert!((q5[i] - (0.5 - 1.645 * half)).abs() < 0.2, "{i}: {s}");
        assert!((q95[i] - (0.5 + 1.645 * half)).abs() < 0.2, "{i}: {s}");
        assert!(
            mcse[i] > 0.0 && bulk[i] > 100.0 && tail[i] > 100.0 && rhat[i] < 1.05,
            "{i}: {s}"
        );
    }
}

/// The numbers of field `k` of a summary.
fn column(s: &serde_json::Value, k: &str) -> Vec<f64> {
    s[k].as_array()
        .unwrap_or_else(|| panic!("no {k}: {s}"))
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect()
}
