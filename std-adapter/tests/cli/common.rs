//! Helpers shared by the command-line tests: scratch folders and running the built binary.

use langevin_std::io::npy::{NpyData, write_npy};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Every state of `{0..S−1}^d` (coordinate 0 fastest) with its probability under `exp(u(x))`.
pub fn exact_law(d: usize, s: usize, u: impl Fn(&[usize]) -> f64) -> Vec<(Vec<usize>, f64)> {
    let total = s.pow(d as u32);
    let mut x = vec![0usize; d];
    let mut states = Vec::with_capacity(total);
    let mut weights = Vec::with_capacity(total);
    for mut k in 0..total {
        for xi in x.iter_mut() {
            *xi = k % s;
            k /= s;
        }
        weights.push(u(&x));
        states.push(x.clone());
    }
    let top = weights.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let z: f64 = weights.iter().map(|w| (w - top).exp()).sum();
    let probabilities = weights.iter().map(|w| (w - top).exp() / z);
    states.into_iter().zip(probabilities).collect()
}

/// `U(x) = −½(x−μ)ᵀA(x−μ) + bᵀx` over three coordinates (the `ordinal_quadratic` kind).
pub fn quadratic_u(x: &[usize], a: &[[f64; 3]; 3], mu: &[f64; 3], b: &[f64; 3]) -> f64 {
    let r: Vec<f64> = (0..3).map(|i| x[i] as f64 - mu[i]).collect();
    let mut q = 0.0;
    for i in 0..3 {
        for j in 0..3 {
            q += r[i] * a[i][j] * r[j];
        }
    }
    -0.5 * q + (0..3).map(|i| b[i] * x[i] as f64).sum::<f64>()
}

/// The words of a command line: `words("sample --model m.json")`.
pub fn words(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

/// A fresh folder under the system's temporary folder (its path, and the guard that removes it
/// when dropped).
pub struct Scratch(pub PathBuf, tempfile::TempDir);

impl Scratch {
    pub fn new(name: &str) -> Self {
        let dir = tempfile::Builder::new()
            .prefix(&format!("langevin-test-{name}-"))
            .tempdir()
            .unwrap();
        Self(dir.path().to_path_buf(), dir)
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    /// Writes a text file (creating folders) and returns its path.
    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.path(name);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(&path, text).unwrap();
        path
    }

    /// Writes an `.npy` file (creating folders) and returns its path.
    pub fn npy(&self, name: &str, shape: &[usize], data: NpyData) -> PathBuf {
        let path = self.path(name);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).unwrap();
        }
        write_npy(&path, shape, &data).unwrap();
        path
    }

    /// Runs `langevin` with the words of `line` in this folder and insists that it succeeds;
    /// returns stdout.
    pub fn ok(&self, line: &str) -> String {
        ok(&self.0, &words(line))
    }

    /// Runs `langevin` with the words of `line` in this folder and insists on the failure
    /// contract (see [`fails`]); returns the line on stderr.
    pub fn fails(&self, line: &str) -> String {
        fails(&self.0, &words(line))
    }

    /// Runs `langevin` with the words of `line` in this folder and insists that it fails (see
    /// [`fails`]) with an error line naming every one of `parts` (see [`expect`]).
    pub fn refuses(&self, line: &str, parts: &[&str]) {
        expect(&self.fails(line), parts);
    }

    /// Runs `langevin sample` with the words of `args`, writing `{tag}.npy` and `{tag}.json`
    /// quietly; returns the summary.
    pub fn sample(&self, args: &str, tag: &str) -> serde_json::Value {
        self.ok(&format!(
            "sample {args} --out {tag}.npy --summary {tag}.json --quiet"
        ));
        summary(&self.path(&format!("{tag}.json")))
    }

    /// Every file under the folder, relative, sorted.
    pub fn files(&self) -> Vec<String> {
        fn walk(dir: &Path, root: &Path, out: &mut Vec<String>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    walk(&path, root, out);
                } else {
                    out.push(path.strip_prefix(root).unwrap().display().to_string());
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.0, &self.0, &mut out);
        out.sort();
        out
    }
}

/// Runs `langevin` with `args` in folder `cwd`.
pub fn langevin(cwd: &Path, args: &[&str]) -> Output {
    langevin_env(cwd, args, &[])
}

/// Runs `langevin` with `args` in folder `cwd`, with the environment variables `env` set.
pub fn langevin_env(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_langevin"))
        .args(args)
        .current_dir(cwd)
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

/// Runs `langevin` and insists that it succeeds; returns stdout.
pub fn ok(cwd: &Path, args: &[&str]) -> String {
    let out = langevin(cwd, args);
    assert!(
        out.status.success(),
        "langevin {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Runs `langevin` and insists on the failure contract: exit status 2, exactly one line on
/// stderr, nothing on stdout. Returns the line.
pub fn fails(cwd: &Path, args: &[&str]) -> String {
    let out = langevin(cwd, args);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "langevin {args:?}: status {:?}, stderr {stderr:?}",
        out.status
    );
    assert_eq!(
        stderr.lines().count(),
        1,
        "langevin {args:?}: stderr is not one line: {stderr:?}"
    );
    assert!(stderr.ends_with('\n'));
    assert!(
        out.stdout.is_empty(),
        "langevin {args:?}: stdout {:?}",
        String::from_utf8_lossy(&out.stdout)
    );
    stderr.trim_end().to_string()
}

/// Asserts that `line` is an error line (`error: …`) naming every one of `parts`.
pub fn expect(line: &str, parts: &[&str]) {
    assert!(line.starts_with("error: "), "{line}");
    contains_all(line, parts);
}

/// Asserts that `text` (a table, a message, the README) names every one of `parts`.
pub fn contains_all(text: &str, parts: &[&str]) {
    for part in parts {
        assert!(text.contains(part), "{text:?} lacks {part:?}");
    }
}

/// The small test models of every binary kind, as JSON with inline arrays. Entries are
/// multiples of 1/8 so that every path to single precision gives the same values.
pub const QUADRATIC: &str = r#"{"kind": "binary_quadratic",
  "W": [[0, 0.5, -0.25, 0, 0.125, 0], [0.5, 0, 0.25, 0, 0, 0], [-0.25, 0.25, 0, 0.5, 0, 0],
        [0, 0, 0.5, 0, -0.5, 0.25], [0.125, 0, 0, -0.5, 0, 0.375], [0, 0, 0, 0.25, 0.375, 0]],
  "b": [0.25, -0.5, 0, 0.125, -0.25, 0.5]}"#;

pub const ISING: &str = r#"{"kind": "ising", "n": 5,
  "edges": [[0, 1, 0.5], [1, 2, -0.25], [2, 3, 0.375], [3, 4, 0.5], [4, 0, 0.125], [0, 2, 0.25]],
  "field": [0.125, 0, -0.25, 0, 0.5]}"#;

pub const LATTICE: &str = r#"{"kind": "ising_lattice", "rows": 3, "cols": 4, "coupling": 0.4375,
  "field": 0.125, "periodic": true}"#;

pub const RBM: &str = r#"{"kind": "rbm",
  "W": [[0.5, -0.25, 0, 0.125, 0.375, -0.5], [0, 0.25, -0.375, 0.5, 0, 0.125],
        [-0.125, 0, 0.25, 0, -0.25, 0.5]],
  "b": [0.125, -0.25, 0, 0.25, -0.125, 0],
  "c": [0.25, -0.5, 0]}"#;

/// A continuous `gaussian_sum` model in two dimensions, centres (0, 1) and (1, 0).
pub const GAUSSIAN_SUM: &str = r#"{"kind":"gaussian_sum","centers":[[0,1],[1,0]]}"#;

/// The same models with their arrays in `.npy` files under `arrays/` next to `name.json`,
/// written into folder `sub` of the scratch folder. Returns the JSON path.
pub fn npy_variant(scratch: &Scratch, sub: &str, inline: &str) -> PathBuf {
    let doc: serde_json::Value = serde_json::from_str(inline).unwrap();
    let mut doc = doc.as_object().unwrap().clone();
    let kind = doc["kind"].as_str().unwrap().to_string();
    let fields: Vec<String> = doc
        .iter()
        .filter(|(_, v)| v.is_array())
        .map(|(k, _)| k.clone())
        .collect();
    for (k, field) in fields.iter().enumerate() {
        let (shape, data) = flatten(&doc[field]);
        let file = format!("arrays/{kind}_{field}.npy");
        // Alternate dtypes: both kinds of float file must load the same values.
        let data = if k % 2 == 0 {
            NpyData::F64(data)
        } else {
            NpyData::F32(data.into_iter().map(|x| x as f32).collect())
        };
        scratch.npy(&format!("{sub}/{file}"), &shape, data);
        doc.insert(field.clone(), serde_json::Value::String(file));
    }
    scratch.write(
        &format!("{sub}/{kind}.json"),
        &serde_json::Value::Object(doc).to_string(),
    )
}

fn flatten(v: &serde_json::Value) -> (Vec<usize>, Vec<f64>) {
    match v {
        serde_json::Value::Array(items) => {
            let parts: Vec<_> = items.iter().map(flatten).collect();
            let mut shape = vec![items.len()];
            if let Some((inner, _)) = parts.first() {
                shape.extend(inner);
            }
            (shape, parts.into_iter().flat_map(|(_, d)| d).collect())
        }
        n => (Vec::new(), vec![n.as_f64().unwrap()]),
    }
}

/// Samples `model` with `sampler` and the words `extra` (600 steps, 200 of burn-in, 2 chains,
/// seed 3), writing `{tag}.npy`; returns the summary.
pub fn sample_with(
    scratch: &Scratch,
    sampler: &str,
    model: &str,
    extra: &str,
    tag: &str,
) -> serde_json::Value {
    let args = format!("--sampler {sampler} --steps 600 --burn-in 200 --chains 2 --seed 3");
    scratch.sample(&format!("--model {model} {args} {extra}"), tag)
}

/// Samples `potts.json` (the model [`POTTS`]) as [`sample_with`] does and checks that the run
/// is categorical: 2 chains of 600 draws of 4 sites, each value in `0..3`. Returns the summary.
pub fn sample_potts(scratch: &Scratch, sampler: &str, extra: &str, tag: &str) -> serde_json::Value {
    let sum = sample_with(scratch, sampler, "potts.json", extra, tag);
    assert_eq!(sum["domain"], "categorical");
    let (shape, _, values) = label_samples(&scratch.path(&format!("{tag}.npy")));
    assert_eq!(shape, vec![2, 600, 4]);
    assert!(values.iter().all(|&v| (0..3).contains(&v)));
    sum
}

/// Reads a `(chains, draws, d)` uint8 sample file.
pub fn samples(path: &Path) -> (Vec<usize>, Vec<u8>) {
    let array = langevin_std::io::npy::read_npy(path).unwrap();
    match array.data {
        NpyData::U8(v) => (array.shape, v),
        other => panic!("samples have dtype {}", other.descr()),
    }
}

/// Small label models: ordinal (S = 5, d = 3), Potts (S = 3, n = 4), a lattice mixture with
/// more than 256 values (S = 300, d = 2, 4 modes) and a quartic mixture (S = 7, d = 3).
pub const ORDINAL: &str = r#"{"kind": "ordinal_quadratic", "states": 5,
  "A": [[0.5, 0.125, 0], [0.125, 0.375, -0.125], [0, -0.125, 0.75]],
  "mu": [2, 1.5, 3], "b": [0.25, 0, -0.125]}"#;

pub const POTTS: &str = r#"{"kind": "potts", "states": 3, "n": 4,
  "edges": [[0, 1, 0.5], [1, 2, -0.25], [2, 3, 0.75], [3, 0, 0.25]],
  "field": [[0, 0.25, -0.125], [0.125, 0, 0], [0, 0, 0.5], [-0.25, 0.125, 0]]}"#;

pub const MIXTURE: &str = r#"{"kind": "lattice_mixture", "states": 300,
  "modes": [[100, 100], [100, 200], [200, 100], [200, 200]], "scale": 8}"#;

pub const QUARTIC: &str = r#"{"kind": "quartic_mixture", "dim": 3, "states": 7,
  "components": 2, "sigma": 1.5, "seed": 4}"#;

/// Reads a `(chains, draws, d)` label sample file: its shape, its dtype and its values.
pub fn label_samples(path: &Path) -> (Vec<usize>, &'static str, Vec<i64>) {
    let array = langevin_std::io::npy::read_npy(path).unwrap();
    let (dtype, values) = match array.data {
        NpyData::U8(v) => ("u8", v.into_iter().map(i64::from).collect()),
        NpyData::I32(v) => ("i32", v.into_iter().map(i64::from).collect()),
        other => panic!("samples have dtype {}", other.descr()),
    };
    (array.shape, dtype, values)
}

/// Parses a summary file.
pub fn summary(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The numbers of a JSON array of numbers (a summary's `mean`, a ladder's `betas`, …).
pub fn numbers(v: &serde_json::Value) -> Vec<f64> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|x| x.as_f64().unwrap_or_else(|| panic!("not a number: {x}")))
        .collect()
}

/// The strings of a JSON array of strings (a summary's `command_line`, `plots`, …).
pub fn strings(v: &serde_json::Value) -> Vec<&str> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect()
}
