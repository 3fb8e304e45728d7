//! The output layer from the outside: outputs checked against every input and every other
//! output (derived pictures included) and their folders probed before any work; temporary files
//! removed on SIGINT, SIGTERM and SIGHUP and, after SIGKILL, by the next run; two runs on one
//! output never mixing; all-or-none renames; a full disk.

use crate::common;

use common::{RBM, Scratch, words};
use langevin_std::io::npy::NpyData;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A 10 × 10 Ising lattice: 100 binary coordinates.
const ISING: &str = r#"{"kind": "ising_lattice", "rows": 10, "cols": 10, "coupling": 0.3,
  "field": 0.0, "periodic": true}"#;

/// A run that, started, would take hours: each test that expects a refusal before the work
/// would time out (and fail) if the refusal came after it.
const ENDLESS: &str = "--steps 1000000000 --burn-in 0 --thin 1000000 --chains 2 --threads 1";

/// The binary, not yet waited for.
fn spawn(cwd: &Path, args: &[&str], env: &[(&str, &Path)]) -> Child {
    let mut command = Command::new(env!("CARGO_BIN_EXE_langevin"));
    command
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (k, v) in env {
        command.env(k, v);
    }
    command.spawn().unwrap()
}

/// Waits at most `limit` for `child`, killing it (and failing) past that.
fn finish_within(mut child: Child, limit: Duration, what: &str) -> Output {
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: still running after {limit:?}; it should have stopped at once");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs `line` and insists on a refusal within 60 s (exit 2); returns the message.
fn refused_at_once(cwd: &Path, line: &str) -> String {
    let out = finish_within(spawn(cwd, &words(line), &[]), Duration::from_secs(60), line);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{line}: {stderr}");
    stderr
}

/// The names in `dir` of this module's temporary and lock files.
fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with(".langevin-") || n.ends_with(".langevin-lock"))
        .collect()
}

/// Waits until `dir` holds a `.langevin-<pid>-….partial` file of `child` (its streamed output
/// being written: the checks are behind it and the run is under way).
fn wait_for_partial(child: &mut Child, dir: &Path) -> PathBuf {
    let prefix = format!(".langevin-{}-", child.id());
    let start = Instant::now();
    loop {
        let found = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .find(|n| n.starts_with(&prefix) && n.ends_with(".partial"));
        if let Some(name) = found {
            return dir.join(name);
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the run ended ({status}) before its output was under way");
        }
        assert!(start.elapsed() < Duration::from_secs(60), "no partial file");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Sends `signal` (a name such as `INT`) to `child`.
fn signal(child: &Child, signal: &str) {
    let status = Command::new("kill")
        .args(["-s", signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill -s {signal}");
}

/// 40 rows of 6 binary values.
fn rows(s: &Scratch, name: &str) -> PathBuf {
    let values: Vec<u8> = (0..240).map(|k| u8::from(k % 3 == 0)).collect();
    s.npy(name, &[40, 6], NpyData::U8(values))
}

#[test]
fn train_and_ais_never_overwrite_an_input() {
    let s = Scratch::new("outputs-inputs");
    rows(&s, "x.npy");
    rows(&s, "t.npy");
    s.write("rbm.json", RBM);
    let train = "train --data x.npy --test t.npy --model-kind rbm --hidden 3 --updates \
                 1000000000 --quiet";
    let cases = [
        (format!("{train} --out x.npy"), "--out", "--data"),
        (
            format!("{train} --out m.json --log t.npy"),
            "--log",
            "--test",
        ),
        (
            format!("{train} --out m.json --summary ./x.npy"),
            "--summary",
            "--data",
        ),
        (
            format!("{train} --out m.json --plot t.npy"),
            "--plot",
            "--test",
        ),
        (
            "ais --model rbm.json --data x.npy --summary rbm.json --quiet".to_string(),
            "--summary",
            "--model",
        ),
        (
            "ais --model rbm.json --data x.npy --summary x.npy --quiet".to_string(),
            "--summary",
            "--data",
        ),
    ];
    let before: Vec<Vec<u8>> = ["x.npy", "t.npy", "rbm.json"]
        .iter()
        .map(|f| std::fs::read(s.path(f)).unwrap())
        .collect();
    for (line, output, input) in &cases {
        let message = refused_at_once(&s.0, line);
        assert!(
            message.contains(output) && message.contains(&format!("input {input}")),
            "{line}: {message}"
        );
        let after: Vec<Vec<u8>> = ["x.npy", "t.npy", "rbm.json"]
            .iter()
            .map(|f| std::fs::read(s.path(f)).unwrap())
            .collect();
        assert_eq!(before, after, "{line}: an input changed");
    }
    assert_eq!(s.files(), ["rbm.json", "t.npy", "x.npy"]);
}

#[test]
fn output_clashes_are_refused_before_any_work() {
    let s = Scratch::new("outputs-clash");
    rows(&s, "x.npy");
    s.write("m.json", ISING);
    let train = "train --data x.npy --model-kind rbm --hidden 3 --updates 1000000000 --quiet";
    for line in [
        format!("{train} --out a.json --summary a.json"),
        format!("{train} --out a.json --log sub/../a.json"),
        format!("{train} --out a.json --plot p.png --samples p.png"),
        format!("sample --model m.json {ENDLESS} --out d.npy --csv d.npy"),
        // A companion of --plot (the heat map or image grid it may write beside it).
        format!("sample --model m.json {ENDLESS} --plot p.png --summary p.heatmap.png"),
        format!("sample --model m.json {ENDLESS} --plot p.png --out p.images.png"),
    ] {
        std::fs::create_dir_all(s.path("sub")).unwrap();
        let message = refused_at_once(&s.0, &line);
        assert!(message.contains("same file"), "{line}: {message}");
    }
    // A derived picture name naming an input: the model file itself.
    s.write("pic.heatmap.png", ISING);
    let message = refused_at_once(
        &s.0,
        &format!("sample --model pic.heatmap.png {ENDLESS} --plot pic.png"),
    );
    assert!(message.contains("input --model"), "{message}");
    assert_eq!(
        std::fs::read_to_string(s.path("pic.heatmap.png")).unwrap(),
        ISING
    );
    assert_eq!(s.files(), ["m.json", "pic.heatmap.png", "x.npy"]);
}

#[test]
fn train_writes_its_pictures_with_its_other_outputs_or_refuses_them_before_the_run() {
    let s = Scratch::new("outputs-train-pictures");
    rows(&s, "x.npy");
    let train = "train --data x.npy --model-kind rbm --hidden 3 --quiet";
    // A picture that cannot be drawn would lose the model with it: refused before the run.
    let message = refused_at_once(
        &s.0,
        &format!("{train} --updates 1000000000 --out m.json --plot curve.png"),
    );
    assert!(
        message.contains("--plot") && message.contains("--test"),
        "{message}"
    );
    let message = refused_at_once(
        &s.0,
        &format!("{train} --updates 1000000000 --out m.json --samples grid.png"),
    );
    assert!(message.contains("not a square"), "{message}");
    assert_eq!(s.files(), ["x.npy"]);
    s.ok(&format!(
        "{train} --test x.npy --updates 20 --eval-every 10 --out m.json --plot curve.png \
             --log l.csv --summary t.json"
    ));
    assert_eq!(
        s.files(),
        ["curve.png", "l.csv", "m.json", "t.json", "x.npy"]
    );
    assert!(
        std::fs::read(s.path("curve.png"))
            .unwrap()
            .starts_with(b"\x89PNG")
    );
}

/// A folder in which no file can be created even by root: immutable (`chattr +i`), made
/// mutable again when dropped. `None` (with the reason printed) where the file system or the
/// user cannot do this.
struct Immutable(PathBuf);

impl Immutable {
    fn new(path: &Path) -> Option<Self> {
        let done = Command::new("chattr")
            .arg("+i")
            .arg(path)
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !done {
            eprintln!("skipped: chattr +i {} is not possible here", path.display());
            return None;
        }
        let guard = Self(path.to_path_buf());
        let probe = if path.is_dir() {
            std::fs::write(path.join("probe"), b"x").is_err()
        } else {
            std::fs::OpenOptions::new().append(true).open(path).is_err()
        };
        if !probe {
            eprintln!("skipped: {} stays writable after chattr +i", path.display());
            return None;
        }
        Some(guard)
    }
}

impl Drop for Immutable {
    fn drop(&mut self) {
        let _ = Command::new("chattr").arg("-i").arg(&self.0).status();
    }
}

#[test]
fn unwritable_folders_are_refused_before_the_run() {
    let s = Scratch::new("outputs-unwritable");
    rows(&s, "x.npy");
    s.write("m.json", ISING);
    std::fs::create_dir_all(s.path("locked")).unwrap();
    // A path whose folder is a file fails the probe on any system, as any user.
    s.write("plain", "not a folder");
    let message = refused_at_once(
        &s.0,
        &format!("sample --model m.json {ENDLESS} --summary plain/s.json"),
    );
    assert!(message.contains("plain/s.json"), "{message}");
    let Some(_immutable) = Immutable::new(&s.path("locked")) else {
        return;
    };
    let train = "train --data x.npy --model-kind rbm --hidden 3 --updates 1000000000 --quiet";
    for (line, flag) in [
        (
            format!("sample --model m.json {ENDLESS} --summary locked/s.json"),
            "--summary",
        ),
        (
            format!("sample --model m.json {ENDLESS} --plot locked/p.png"),
            "--plot",
        ),
        (
            format!("sample --model m.json {ENDLESS} --csv locked/d.csv"),
            "--csv",
        ),
        (format!("{train} --out locked/m.json"), "--out"),
        (format!("{train} --out m2.json --log locked/l.csv"), "--log"),
    ] {
        let message = refused_at_once(&s.0, &line);
        assert!(
            message.contains(flag) && message.contains("cannot write there"),
            "{line}: {message}"
        );
    }
    assert_eq!(s.files(), ["m.json", "plain", "x.npy"]);
}

/// A streamed run that takes a few seconds: 8 chains of 100 coordinates.
fn sample_line(seed: u64, steps: u64) -> String {
    format!(
        "sample --model m.json --sampler gibbs --steps {steps} --burn-in 0 --chains 8 --threads \
         1 --seed {seed} --out d.npy --summary s.json --quiet"
    )
}

/// The seed a summary names.
fn seed_of(path: &Path) -> u64 {
    common::summary(path)["seed"].as_u64().unwrap()
}

#[test]
fn two_runs_on_one_output_never_mix() {
    let s = Scratch::new("outputs-concurrent");
    s.write("m.json", ISING);
    // Each seed's draws on their own.
    let steps = 20_000;
    let mut reference = Vec::new();
    for seed in [1, 2] {
        let line = sample_line(seed, steps);
        s.ok(&line);
        reference.push(std::fs::read(s.path("d.npy")).unwrap());
        assert_eq!(seed_of(&s.path("s.json")), seed);
    }
    assert_ne!(reference[0], reference[1]);
    // A second run starting while the first is under way (one that would take hours) is
    // refused, naming the first; the first, stopped, leaves the outputs as they were.
    let endless =
        format!("sample --model m.json --seed 3 {ENDLESS} --out d.npy --summary s.json --quiet");
    let mut first = spawn(&s.0, &words(&endless), &[]);
    wait_for_partial(&mut first, &s.0);
    let (one, two) = (sample_line(1, steps), sample_line(2, steps));
    let second = finish_within(
        spawn(&s.0, &words(&one), &[]),
        Duration::from_secs(60),
        &one,
    );
    let message = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(2), "{message}");
    assert!(
        message.contains("another langevin run")
            && message.contains(&format!("process {}", first.id())),
        "{message}"
    );
    signal(&first, "TERM");
    finish_within(first, Duration::from_secs(30), &endless);
    assert_eq!(seed_of(&s.path("s.json")), 2);
    assert_eq!(std::fs::read(s.path("d.npy")).unwrap(), reference[1]);
    // Started together: whichever wins, the summary and the draws are one run's.
    for _ in 0..2 {
        let a = spawn(&s.0, &words(&one), &[]);
        let b = spawn(&s.0, &words(&two), &[]);
        let outs = [
            finish_within(a, Duration::from_secs(300), &one),
            finish_within(b, Duration::from_secs(300), &two),
        ];
        assert!(outs.iter().any(|o| o.status.success()));
        for o in outs.iter().filter(|o| !o.status.success()) {
            let message = String::from_utf8_lossy(&o.stderr);
            assert!(message.contains("another langevin run"), "{message}");
        }
        let seed = seed_of(&s.path("s.json"));
        let draws = std::fs::read(s.path("d.npy")).unwrap();
        assert_eq!(
            draws,
            reference[seed as usize - 1],
            "the .npy is not the draws of seed {seed}, which the summary names"
        );
        assert!(leftovers(&s.0).is_empty(), "{:?}", leftovers(&s.0));
    }
}

#[test]
fn sigint_sigterm_and_sighup_leave_no_file_behind() {
    for (name, number) in [("INT", 2), ("TERM", 15), ("HUP", 1)] {
        let s = Scratch::new("outputs-signal");
        s.write("m.json", ISING);
        s.write("d.npy", "the old draws");
        std::fs::create_dir_all(s.path("tmp")).unwrap();
        let line = format!("sample --model m.json {ENDLESS} --out d.npy --summary s.json --quiet");
        let mut child = spawn(&s.0, &words(&line), &[]);
        wait_for_partial(&mut child, &s.0);
        signal(&child, name);
        let out = finish_within(child, Duration::from_secs(30), &line);
        assert_eq!(out.status.code(), Some(128 + number), "SIG{name}");
        assert_eq!(s.files(), ["d.npy", "m.json"], "SIG{name}");
        assert!(
            leftovers(&s.0).is_empty(),
            "SIG{name}: {:?}",
            leftovers(&s.0)
        );
        assert_eq!(
            std::fs::read_to_string(s.path("d.npy")).unwrap(),
            "the old draws"
        );
        // Standard output: its temporary file waits in the system's temporary folder.
        let line = format!("sample --model m.json {ENDLESS} --out -");
        let tmp = s.path("tmp");
        let mut child = spawn(&s.0, &words(&line), &[("TMPDIR", &tmp)]);
        wait_for_partial(&mut child, &tmp);
        signal(&child, name);
        let out = finish_within(child, Duration::from_secs(30), &line);
        assert_eq!(out.status.code(), Some(128 + number), "SIG{name}");
        assert!(
            leftovers(&tmp).is_empty(),
            "SIG{name}: {:?}",
            leftovers(&tmp)
        );
    }
}

#[test]
fn the_leftovers_of_a_killed_run_are_removed_by_the_next() {
    let s = Scratch::new("outputs-sigkill");
    s.write("m.json", ISING);
    let tmp = s.path("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let line = format!("sample --model m.json {ENDLESS} --out d.npy --summary s.json --quiet");
    let mut child = spawn(&s.0, &words(&line), &[]);
    let partial = wait_for_partial(&mut child, &s.0);
    child.kill().unwrap();
    child.wait().unwrap();
    // Killed outright: its temporary file and locks stay, recognisable by name.
    assert!(partial.exists());
    let pid = child.id();
    let left = leftovers(&s.0);
    assert!(
        left.iter()
            .any(|n| n.starts_with(&format!(".langevin-{pid}-"))),
        "{left:?}"
    );
    assert!(
        left.contains(&".d.npy.langevin-lock".to_string()),
        "{left:?}"
    );
    // The same for standard output's temporary file.
    let line = format!("sample --model m.json {ENDLESS} --out -");
    let mut child = spawn(&s.0, &words(&line), &[("TMPDIR", &tmp)]);
    let spilled = wait_for_partial(&mut child, &tmp);
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(spilled.exists());
    // The next run writing into the folder (another output) removes them, and is not refused
    // by the dead run's lock when it writes the same output.
    let short = "sample --model m.json --steps 50 --chains 2 --quiet";
    s.ok(&format!("{short} --out e.npy"));
    assert!(leftovers(&s.0).is_empty(), "{:?}", leftovers(&s.0));
    let out = Command::new(env!("CARGO_BIN_EXE_langevin"))
        .args(words(&format!("{short} --out -")))
        .current_dir(&s.0)
        .env("TMPDIR", &tmp)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(leftovers(&tmp).is_empty(), "{:?}", leftovers(&tmp));
    // A lock left by a killed run on the same output does not refuse the next run.
    std::fs::write(s.path(".d.npy.langevin-lock"), "999999999\n").unwrap();
    s.ok(&format!("{short} --out d.npy"));
    assert_eq!(s.files(), ["d.npy", "e.npy", "m.json"]);
}

#[test]
fn a_failed_rename_puts_back_the_outputs_already_replaced() {
    let s = Scratch::new("outputs-rename");
    s.write("m.json", ISING);
    s.write("d.npy", "the old draws");
    s.write("s.json", "the old summary");
    // Replacing an immutable file fails even for root, after the checks and the run.
    let Some(_immutable) = Immutable::new(&s.path("s.json")) else {
        return;
    };
    s.refuses(
        "sample --model m.json --steps 200 --chains 2 --out d.npy --summary s.json",
        &["s.json", "put back"],
    );
    assert_eq!(
        std::fs::read_to_string(s.path("d.npy")).unwrap(),
        "the old draws"
    );
    assert_eq!(
        std::fs::read_to_string(s.path("s.json")).unwrap(),
        "the old summary"
    );
    assert!(leftovers(&s.0).is_empty(), "{:?}", leftovers(&s.0));
}

/// A 1 MiB tmpfs mounted at `path`, unmounted when dropped; `None` (with the reason printed)
/// where mounting is not permitted.
struct SmallDisk(PathBuf);

impl SmallDisk {
    fn new(path: &Path) -> Option<Self> {
        std::fs::create_dir_all(path).unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
            .arg(path)
            .output();
        match out {
            Ok(o) if o.status.success() => Some(Self(path.to_path_buf())),
            Ok(o) => {
                eprintln!(
                    "skipped: cannot mount a small tmpfs: {}",
                    String::from_utf8_lossy(&o.stderr).trim()
                );
                None
            }
            Err(e) => {
                eprintln!("skipped: cannot run mount: {e}");
                None
            }
        }
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_full_disk_leaves_no_partial_file_and_says_so() {
    let s = Scratch::new("outputs-full");
    s.write("m.json", ISING);
    let Some(disk) = SmallDisk::new(&s.path("small")) else {
        return;
    };
    // 2 chains × 10,000 draws × 100 bytes: 2 MB, refused before the run.
    s.refuses(
        "sample --model m.json --steps 10000 --chains 2 --out small/d.npy --quiet",
        &["small/d.npy", "free"],
    );
    assert!(std::fs::read_dir(&disk.0).unwrap().next().is_none());
    // A CSV of 2 MB, written at the end with the summary: neither is left.
    s.refuses(
        "sample --model m.json --steps 10000 --chains 1 --csv small/d.csv --summary \
             small/s.json --quiet",
        &["small/d.csv", "space"],
    );
    let left: Vec<_> = std::fs::read_dir(&disk.0).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}
