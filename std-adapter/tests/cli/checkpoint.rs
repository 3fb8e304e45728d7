//! Checkpoints (`sample --checkpoint`, `--resume`): a run killed with `SIGKILL` and resumed,
//! any number of times, gives the uninterrupted run's `.npy` bytes and summary statistics; a
//! checkpoint of another command, or a damaged one, is refused with the reason; runs that
//! cannot save one are refused before they start.

use crate::common;

use common::{Scratch, summary, words};
use langevin_std::samplers::{Domain, SAMPLERS};
use serde_json::Value;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Summary fields that differ between two runs of one command without anything being wrong.
const NOT_COMPARED: [&str; 6] = [
    "command_line",
    "options",
    "out",
    "wall_time_s",
    "ns_per_step",
    "ess_per_second",
];

/// Starts `langevin {args}` and kills it (`SIGKILL`) as soon as `ready()` holds, polling
/// every few milliseconds. Returns whether it was killed (false: it finished first, and
/// successfully).
fn kill_when(scratch: &Scratch, args: &str, ready: impl Fn() -> bool) -> bool {
    let mut child = Command::new(env!("CARGO_BIN_EXE_langevin"))
        .args(words(args))
        .current_dir(&scratch.0)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !ready() {
        if let Some(status) = child.try_wait().unwrap() {
            let mut stderr = String::new();
            if let Some(mut e) = child.stderr.take() {
                std::io::Read::read_to_string(&mut e, &mut stderr).unwrap();
            }
            assert!(status.success(), "{args}: {status:?} {stderr}");
            return false;
        }
        assert!(
            start.elapsed() < Duration::from_secs(600),
            "{args}: no checkpoint"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    child.kill().unwrap();
    !child.wait().unwrap().success()
}

/// Starts `sample {args}` and kills it once it has written the checkpoint `ckpt` anew, with
/// more than `min_bytes` bytes (a record with kept draws, when `min_bytes` asks for them).
/// Returns false when the run finished before it could be killed.
fn kill_after_checkpoint(scratch: &Scratch, args: &str, ckpt: &str, min_bytes: u64) -> bool {
    let path = scratch.path(ckpt);
    let before = std::fs::read(&path).ok();
    kill_when(scratch, args, || {
        std::fs::read(&path)
            .is_ok_and(|now| now.len() as u64 > min_bytes && Some(&now) != before.as_ref())
    })
}

/// The two summaries agree on every field but the wall-clock ones.
fn same_statistics(a: &Value, b: &Value, name: &str) {
    let (Value::Object(a), Value::Object(b)) = (a, b) else {
        panic!("summaries are objects")
    };
    for (key, value) in a {
        if !NOT_COMPARED.contains(&key.as_str()) {
            assert_eq!(b.get(key), Some(value), "{name}: `{key}`");
        }
    }
    for key in ["mean", "totals", "acceptance_rate"] {
        assert!(a.contains_key(key), "{name}: no `{key}`");
    }
}

/// Runs `sample {args}` uninterrupted, then with checkpoints killed `kills` times and resumed
/// each time, and compares the draws and the summaries. `min_bytes` as for
/// [`kill_after_checkpoint`].
fn killed_and_resumed(scratch: &Scratch, name: &str, args: &str, kills: usize, min_bytes: u64) {
    let reference = format!("{name}-ref");
    // The reference saves only its final checkpoint: every chain's last state, stream, kernel
    // and target running sums, `U` and `∇U` bits, and `U` at every kept draw.
    scratch.ok(&format!(
        "sample {args} --out {reference}.npy --summary {reference}.json --quiet \
             --checkpoint {reference}.ckpt --checkpoint-every 100000"
    ));
    let ckpt = format!("{name}.ckpt");
    let run = format!(
        "sample {args} --out {name}.npy --summary {name}.json --quiet --checkpoint {ckpt} \
         --checkpoint-every 0.05"
    );
    let mut killed = 0;
    for k in 0..kills {
        let resume = if k == 0 {
            String::new()
        } else {
            format!(" --resume {ckpt}")
        };
        if kill_after_checkpoint(scratch, &format!("{run}{resume}"), &ckpt, min_bytes) {
            killed += 1;
        }
    }
    assert!(killed >= 1, "{name}: the run finished before it was killed");
    resumes_as(scratch, name, &run, &ckpt, &reference);
}

/// After a kill of `run` (writing `{name}.npy` and `{name}.json`): no draws are written yet;
/// `run` resumed from `ckpt` writes the draws' bytes, the summary statistics and the final
/// checkpoint of the uninterrupted run `{reference}` (`.npy`, `.json`, `.ckpt`).
fn resumes_as(scratch: &Scratch, name: &str, run: &str, ckpt: &str, reference: &str) {
    assert!(
        !scratch.path(&format!("{name}.npy")).exists(),
        "{name}: draws after a kill"
    );
    scratch.ok(&format!("{run} --resume {ckpt}"));
    let bytes = |f: &str| std::fs::read(scratch.path(f)).unwrap();
    assert!(
        bytes(&format!("{name}.npy")) == bytes(&format!("{reference}.npy")),
        "{name}: the resumed run's draws differ from the uninterrupted run's"
    );
    same_statistics(
        &summary(&scratch.path(&format!("{reference}.json"))),
        &summary(&scratch.path(&format!("{name}.json"))),
        name,
    );
    assert!(
        bytes(ckpt) == bytes(&format!("{reference}.ckpt")),
        "{name}: the final checkpoints (chain states, U bits, running sums) differ"
    );
}

#[test]
fn a_run_with_checkpoints_gives_the_bytes_of_one_without() {
    let scratch = Scratch::new("ckpt-same");
    scratch.write("lat.json", common::LATTICE);
    scratch.write("quad.json", common::QUADRATIC);
    scratch.write("ordinal.json", common::ORDINAL);
    scratch.write("potts.json", common::POTTS);
    for (name, args) in [
        ("dmala", "--model lat.json"),
        ("dula", "--model quad.json --sampler dula --step 0.3"),
        ("ab", "--model quad.json --sampler ab"),
        ("gwg", "--model potts.json --sampler gwg"),
        ("ordinal", "--model ordinal.json --sampler dmala --step 0.5"),
    ] {
        let args = format!("sample {args} --steps 3000 --burn-in 300 --chains 3 --seed 5 --quiet");
        scratch.ok(&format!("{args} --out {name}-a.npy"));
        scratch.ok(&format!(
            "{args} --out {name}-b.npy --checkpoint {name}.ckpt --checkpoint-every 0.01"
        ));
        assert!(scratch.path(&format!("{name}.ckpt")).exists(), "{name}");
        let bytes = |f: String| std::fs::read(scratch.path(&f)).unwrap();
        assert_eq!(
            bytes(format!("{name}-a.npy")),
            bytes(format!("{name}-b.npy")),
            "{name}"
        );
    }
}

#[test]
fn a_run_killed_and_resumed_twice_gives_the_uninterrupted_runs_bytes() {
    let scratch = Scratch::new("ckpt-kill");
    scratch.ok("model ising-lattice --rows 4 --cols 4 --coupling 0.4 --out lat.json");
    scratch.write("potts.json", common::POTTS);
    // dmala tunes its step during the burn-in (the acceptance tuner's state is saved);
    // the file's size passes 2 kB once the chains hold kept draws.
    killed_and_resumed(
        &scratch,
        "lattice",
        "--model lat.json --steps 60000 --thin 20 --burn-in 2000 --chains 3 --seed 9",
        3,
        2_000,
    );
    killed_and_resumed(
        &scratch,
        "categorical",
        "--model potts.json --sampler dmala --step 0.5 --steps 60000 --thin 20 --burn-in 500 \
         --chains 2 --seed 4 --threads 1",
        2,
        2_000,
    );
}

#[test]
fn models_that_keep_running_sums_resume_to_the_same_bytes() {
    // The ordinal quadratic model updates `A(x − μ)` by moves, the RBM its hidden
    // pre-activations and the logistic model its linear predictors: a fresh evaluation at a
    // saved state need not give their bits, so the checkpoint carries them.
    let scratch = Scratch::new("ckpt-sums");
    for (name, generator) in [
        ("ordinal", "lattice-gaussian --dim 5 --states 7 --seed 1"),
        ("rbm", "rbm --visible 16 --hidden 8 --seed 2"),
        ("logistic", "binary-logistic"),
    ] {
        scratch.ok(&format!("model {generator} --out m-{name}.json"));
        killed_and_resumed(
            &scratch,
            name,
            &format!(
                "--model m-{name}.json --steps 400000 --thin 200 --burn-in 500 --chains 2 --seed 8"
            ),
            2,
            1_000,
        );
    }
}

#[test]
fn a_tuned_sampler_killed_during_its_tuning_resumes_to_the_same_bytes() {
    let scratch = Scratch::new("ckpt-tuning");
    scratch.write("quad.json", common::QUADRATIC);
    // AB tunes for the whole burn-in (its budget); the first checkpoint falls in it, the
    // kept phase (300 draws) being a small part of the run.
    killed_and_resumed(
        &scratch,
        "ab",
        "--model quad.json --sampler ab --steps 300 --burn-in 80000 --chains 2 --seed 7",
        2,
        0,
    );
    // The tuned parameters (compared above) are there.
    assert!(summary(&scratch.path("ab-ref.json")).get("tuned").is_some());
}

#[test]
fn a_checkpoint_of_another_command_is_refused_naming_the_difference() {
    let scratch = Scratch::new("ckpt-other");
    scratch.write("lat.json", common::LATTICE);
    scratch.write("quad.json", common::QUADRATIC);
    let base = "sample --steps 200 --burn-in 20 --quiet";
    scratch.ok(&format!(
        "{base} --model lat.json --seed 1 --chains 2 --checkpoint c.ckpt --checkpoint-every 0.0001"
    ));
    assert!(scratch.path("c.ckpt").exists());
    for (args, field) in [
        (
            "--model lat.json --seed 2 --chains 2",
            "its seed: 1; this command's: 2",
        ),
        ("--model quad.json --seed 1 --chains 2", "its model file:"),
        (
            "--model lat.json --seed 1 --sampler dula --chains 2",
            "its sampler: dmala",
        ),
        ("--model lat.json --seed 1 --chains 3", "its chains: 2"),
        (
            "--model lat.json --seed 1 --step 0.3 --chains 2",
            "its sampler parameters:",
        ),
    ] {
        let err = scratch.fails(&format!("{base} {args} --resume c.ckpt"));
        assert!(err.contains("belongs to another command"), "{args}: {err}");
        assert!(err.contains(field), "{args}: {err}");
    }
    // The same command resumes (here: every chain had finished).
    scratch.ok(&format!(
        "{base} --model lat.json --seed 1 --chains 2 --resume c.ckpt --out d.npy"
    ));
}

#[test]
fn a_damaged_or_truncated_checkpoint_is_refused_never_a_panic() {
    let scratch = Scratch::new("ckpt-damaged");
    scratch.write("lat.json", common::LATTICE);
    let run = "sample --model lat.json --steps 200 --burn-in 20 --chains 2 --seed 1 --quiet";
    scratch.ok(&format!(
        "{run} --checkpoint c.ckpt --checkpoint-every 0.0001"
    ));
    let good = std::fs::read(scratch.path("c.ckpt")).unwrap();
    let mut flipped = good.clone();
    let middle = flipped.len() / 2;
    flipped[middle] ^= 1;
    let cases: [(&str, Vec<u8>); 4] = [
        ("empty", Vec::new()),
        ("truncated", good[..good.len() - 9].to_vec()),
        ("flipped", flipped),
        ("not a checkpoint", b"{\"kind\": \"ising\"}".to_vec()),
    ];
    for (name, bytes) in cases {
        std::fs::write(scratch.path("bad.ckpt"), bytes).unwrap();
        let err = scratch.fails(&format!("{run} --resume bad.ckpt"));
        assert!(err.contains("is not a usable checkpoint"), "{name}: {err}");
    }
    scratch.refuses(
        &format!("{run} --resume missing.ckpt"),
        &["reading the checkpoint"],
    );
}

#[test]
fn runs_that_cannot_save_a_checkpoint_are_refused_before_they_start() {
    let scratch = Scratch::new("ckpt-unsupported");
    scratch.write("lat.json", common::LATTICE);
    scratch.write("rbm.json", common::RBM);
    let run = "sample --steps 200 --burn-in 20 --chains 2 --quiet --checkpoint c.ckpt";
    for (args, what) in [
        ("--model rbm.json --step 0.5 --batch 2", "--batch"),
        ("--model lat.json --sampler ab2", "AB-2"),
        (
            "--model lat.json --checkpoint-every 0",
            "--checkpoint-every",
        ),
    ] {
        let err = scratch.fails(&format!("{run} {args}"));
        assert!(err.contains(what), "{args}: {err}");
        assert!(!scratch.path("c.ckpt").exists(), "{args}");
    }
}

/// Samplers whose runs still refuse `--checkpoint` (typed, before the first step): AB-2's
/// schedule keeps state no checkpoint saves yet.
const STILL_REFUSED: [&str; 1] = ["ab2"];

/// The small fixture models the registry test samples, with their domain: the binary ones
/// reach the tabulated lattice kernels, the generic kernels with a model cache (quadratic)
/// and the RBM's (block Gibbs, the single-flip Gibbs path with hidden pre-activations).
const FIXTURES: [(&str, &str, Domain); 5] = [
    ("lat", common::LATTICE, Domain::Binary),
    ("quad", common::QUADRATIC, Domain::Binary),
    ("rbm", common::RBM, Domain::Binary),
    ("ordinal", common::ORDINAL, Domain::Ordinal),
    ("potts", common::POTTS, Domain::Categorical),
];

/// Whether the checkpoint file holds a record of a chain that has not finished.
fn has_unfinished_chain(path: &std::path::Path) -> bool {
    let unfinished = b"\"finished\":false";
    std::fs::read(path).is_ok_and(|b| b.windows(unfinished.len()).any(|w| w == unfinished))
}

/// Starts `sample {args}` and kills it (`SIGKILL`) once the checkpoint `ckpt` holds a chain
/// that has not finished. Returns false when the run finished first, or when the file at
/// the kill holds only finished chains (a resume would then be no test).
fn kill_mid_run(scratch: &Scratch, args: &str, ckpt: &str) -> bool {
    let path = scratch.path(ckpt);
    kill_when(scratch, args, || has_unfinished_chain(&path)) && has_unfinished_chain(&path)
}

/// `sampler` on the fixture `model` (its text: `fixture`): run uninterrupted, then with
/// checkpoints, killed mid-run and resumed; the draws' bytes and the summaries must agree. The
/// run grows until the kill lands mid-run; returns the steps it took. Each case has a folder
/// of its own: a run sweeps its folder of the leftovers of killed runs, which must not race
/// with the runs of another case.
fn resumes_to_the_same_bytes(sampler: &str, model: &str, fixture: &str) -> u64 {
    let name = format!("{sampler}-{model}");
    let scratch = &Scratch::new(&format!("ckpt-{name}"));
    scratch.write(&format!("{model}.json"), fixture);
    let ckpt = format!("{name}.ckpt");
    for steps in [1_500u64, 6_000, 24_000, 96_000] {
        let _ = std::fs::remove_file(scratch.path(&ckpt));
        // The burn-in is a quarter of the run: tuned kernels adapt through it (ACS on a tenth
        // of the whole run), so kills land while tuning and after.
        let args = format!(
            "sample --model {model}.json --sampler {sampler} --steps {steps} --burn-in {} \
             --thin 10 --chains 2 --threads 2 --seed 11 --quiet",
            steps / 4
        );
        // The reference saves only its final checkpoint (last states, streams, kernel
        // states, running sums and `U` bits), which the resumed run's must equal.
        scratch.ok(&format!(
            "{args} --out {name}-ref.npy --summary {name}-ref.json \
                 --checkpoint {name}-ref.ckpt --checkpoint-every 100000"
        ));
        let run = format!(
            "{args} --out {name}.npy --summary {name}.json --checkpoint {ckpt} \
             --checkpoint-every 0.01"
        );
        if !kill_mid_run(scratch, &run, &ckpt) {
            let _ = std::fs::remove_file(scratch.path(&format!("{name}.npy")));
            continue;
        }
        resumes_as(scratch, &name, &run, &ckpt, &format!("{name}-ref"));
        return steps;
    }
    panic!("{name}: every run finished before it could be killed mid-run");
}

#[test]
fn every_sampler_of_the_registry_killed_mid_run_resumes_to_the_same_bytes() {
    let scratch = Scratch::new("ckpt-registry");
    for (name, text, _) in FIXTURES {
        scratch.write(&format!("{name}.json"), text);
    }
    let mut cases = Vec::new();
    for entry in SAMPLERS {
        for (model, fixture, domain) in FIXTURES {
            // Block Gibbs samples RBMs only (other models are refused with that reason).
            let rbm_only = entry.name == "block-gibbs" && model != "rbm";
            if entry.applies_to(domain) && !rbm_only {
                cases.push((entry.name, model, fixture));
            }
        }
    }
    let (refused, resumable): (Vec<_>, Vec<_>) = cases
        .into_iter()
        .partition(|(s, _, _)| STILL_REFUSED.contains(s));
    for (sampler, model, _) in &refused {
        let err = scratch.fails(&format!(
            "sample --model {model}.json --sampler {sampler} --steps 100 --burn-in 10 \
                 --quiet --checkpoint refused.ckpt"
        ));
        assert!(
            err.contains("--checkpoint does not support"),
            "{sampler} on {model}: {err}"
        );
        assert!(!scratch.path("refused.ckpt").exists(), "{sampler} {model}");
    }
    // Two cases at a time (each runs two chains on two threads).
    let next = std::sync::Mutex::new(resumable.iter());
    let work = || {
        let mut done = Vec::new();
        while let Some(&(sampler, model, fixture)) = {
            let mut it = next.lock().unwrap();
            it.next()
        } {
            let steps = resumes_to_the_same_bytes(sampler, model, fixture);
            done.push(format!("{sampler} on {model}: {steps} steps"));
        }
        done
    };
    let done: Vec<String> = std::thread::scope(|s| {
        let a = s.spawn(work);
        let b = s.spawn(work);
        let mut d = a.join().unwrap();
        d.extend(b.join().unwrap());
        d
    });
    assert_eq!(done.len(), resumable.len());
    for d in done {
        eprintln!("{d}");
    }
}
