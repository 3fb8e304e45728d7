//! Every class of bad input: exit status 2, one line on stderr that names the problem, and no
//! file written.

use crate::common;

use common::{ISING, QUADRATIC, RBM, Scratch, expect, fails, npy_variant, words};
use langevin_std::io::npy::NpyData;

/// Runs `sample` on `model` with `extra` flags and `--out`, `--summary`, `--csv` outputs, and
/// checks the failure contract; returns the message.
fn sample_fails(scratch: &Scratch, model: &str, extra: &[&str]) -> String {
    let before = scratch.files();
    let mut args = vec!["sample", "--model", model, "--steps", "50"];
    args.extend(extra);
    args.extend([
        "--out",
        "out.npy",
        "--summary",
        "summary.json",
        "--csv",
        "out.csv",
    ]);
    let line = fails(&scratch.0, &args);
    assert!(
        !scratch.path("out.npy").exists(),
        "{model} {extra:?}: --out written"
    );
    assert_eq!(scratch.files(), before, "{model} {extra:?}: files changed");
    line
}

/// Writes a model file that `sample` must refuse with a message naming `parts`.
fn file_fails(s: &Scratch, name: &str, text: &str, parts: &[&str]) {
    s.write(name, text);
    expect(&sample_fails(s, name, &[]), parts);
}

#[test]
fn unknown_kind() {
    let s = Scratch::new("kind");
    s.write("clock.json", r#"{"kind": "clock", "q": 3}"#);
    expect(
        &sample_fails(&s, "clock.json", &[]),
        &[
            "clock.json",
            "`kind`",
            "unknown model kind `clock`",
            "potts",
        ],
    );
    // A known kind with its fields missing names the first missing field.
    s.write("potts.json", r#"{"kind": "potts", "n": 3}"#);
    expect(
        &sample_fails(&s, "potts.json", &[]),
        &["potts.json", "`states`", "missing"],
    );
    s.write("nokind.json", r#"{"W": [[0]]}"#);
    expect(
        &sample_fails(&s, "nokind.json", &[]),
        &["nokind.json", "`kind`", "missing"],
    );
    s.write("numkind.json", r#"{"kind": 3}"#);
    expect(
        &sample_fails(&s, "numkind.json", &[]),
        &["`kind`", "string"],
    );
}

#[test]
fn wrong_shapes() {
    let s = Scratch::new("shapes");
    let cases = r#"
{"kind": "binary_quadratic", "W": [[0, 1, 0], [1, 0, 0]], "b": [0, 0]} => `W`|square
{"kind": "binary_quadratic", "W": [[0, 1], [1, 0]], "b": [0, 0, 0]} => `b`|3 entries
{"kind": "binary_quadratic", "W": [[0, 1], [1]], "b": [0, 0]} => `W`|ragged
{"kind": "binary_quadratic", "W": [0, 1], "b": [0, 0]} => `W`|matrix
{"kind": "binary_quadratic", "W": [[0, "x"], [1, 0]], "b": [0, 0]} => `W`|numbers
{"kind": "rbm", "W": [[1, 2], [3, 4]], "b": [0, 0], "c": [0]} => `c`|1 entries
{"kind": "rbm", "W": [[1, 2], [3, 4]], "b": [0], "c": [0, 0]} => `b`
{"kind": "ising", "n": 3, "edges": [[0, 1]]} => `edges`|[i, j, J_ij]
{"kind": "ising", "n": 3, "edges": [[0, 3, 1]]} => `edges`|node 3
{"kind": "ising", "n": 3, "edges": [[1, 1, 1]]} => `edges`|itself
{"kind": "ising", "n": 3, "field": [0, 0]} => `field`|2 entries
{"kind": "ising", "n": -3} => `n`|non-negative integer
{"kind": "ising_lattice", "rows": 2.5, "cols": 3, "coupling": 0.1} => `rows`
{"kind": "ising_lattice", "rows": 2, "cols": 3} => `coupling`|missing
{"kind": "ising_lattice", "rows": 2, "cols": 3, "coupling": 0.1, "periodic": 1} => `periodic`|true or false
"#;
    // `model file => parts|of|the|message`
    for (k, case) in cases.trim().lines().enumerate() {
        let (text, parts) = case.split_once(" => ").unwrap();
        let parts: Vec<&str> = parts.split('|').collect();
        let name = format!("m{k}.json");
        s.write(&name, text);
        let line = sample_fails(&s, &name, &[]);
        expect(&line, &parts);
        assert!(line.contains(&name), "{line}");
    }
    // Shapes read from .npy files are checked the same way.
    s.write(
        "npy/m.json",
        r#"{"kind": "binary_quadratic", "W": "w.npy", "b": "b.npy"}"#,
    );
    s.npy("npy/w.npy", &[2, 2, 1], NpyData::F64(vec![0.0; 4]));
    s.npy("npy/b.npy", &[2], NpyData::F64(vec![0.0; 2]));
    expect(
        &sample_fails(&s, "npy/m.json", &[]),
        &["npy/m.json", "`W`", "matrix", "[2, 2, 1]"],
    );
}

#[test]
fn non_finite_values() {
    let s = Scratch::new("finite");
    // JSON has no NaN; it reaches a model through .npy files.
    let model = npy_variant(&s, "m", QUADRATIC);
    let mut b = vec![0.0; 6];
    b[4] = f64::NAN;
    s.npy("m/arrays/binary_quadratic_b.npy", &[6], NpyData::F64(b));
    let line = sample_fails(&s, model.to_str().unwrap(), &[]);
    expect(
        &line,
        &["binary_quadratic.json", "`b`", "entry 4", "not finite"],
    );
    let mut w = vec![0.0f32; 36];
    w[7] = f32::INFINITY;
    s.npy("m/arrays/binary_quadratic_W.npy", &[6, 6], NpyData::F32(w));
    expect(
        &sample_fails(&s, model.to_str().unwrap(), &[]),
        &["`W`", "entry (1, 1)", "not finite"],
    );
    // Finite in double precision but not in single.
    file_fails(
        &s,
        "big.json",
        r#"{"kind": "rbm", "W": [[1e39]], "b": [0], "c": [0]}"#,
        &["`W`", "single precision"],
    );
    file_fails(
        &s,
        "inf.json",
        r#"{"kind": "ising_lattice", "rows": 2, "cols": 2, "coupling": 1e999}"#,
        &["inf.json"],
    );
    s.write(
        "big_lattice.json",
        r#"{"kind": "ising_lattice", "rows": 2, "cols": 2, "coupling": 1e39}"#,
    );
    expect(
        &sample_fails(&s, "big_lattice.json", &[]),
        &["`coupling`", "single precision"],
    );
    file_fails(
        &s,
        "big_edge.json",
        r#"{"kind": "ising", "n": 2, "edges": [[0, 1, 1e300]], "field": [0, 1e40]}"#,
        &["`field`", "entry 1", "single precision"],
    );
    file_fails(
        &s,
        "big_edge.json",
        r#"{"kind": "ising", "n": 2, "edges": [[0, 1, 1e300]]}"#,
        &["`edges`", "edge 0", "single precision"],
    );
    s.write(
        "edge.json",
        r#"{"kind": "ising", "n": 2, "edges": "e.npy"}"#,
    );
    s.npy(
        "e.npy",
        &[1, 3],
        NpyData::F64(vec![0.0, 1.0, f64::NEG_INFINITY]),
    );
    expect(
        &sample_fails(&s, "edge.json", &[]),
        &["`edges`", "not finite"],
    );
}

#[test]
fn sampler_parameters_out_of_range() {
    let s = Scratch::new("params");
    s.write("m.json", QUADRATIC);
    for step in ["0", "-0.5", "inf", "NaN", "-0"] {
        let line = sample_fails(&s, "m.json", &["--step", step]);
        expect(&line, &["step"]);
    }
    for balance in ["0", "1.5", "-0.25", "NaN"] {
        let line = sample_fails(&s, "m.json", &["--balance", balance]);
        expect(&line, &["balance"]);
    }
    // The boundary b = 1 is allowed.
    s.ok("sample --model m.json --steps 5 --balance 1 --quiet");
}

#[test]
fn zero_dimension() {
    let s = Scratch::new("empty");
    let cases = [
        (r#"{"kind": "ising", "n": 0}"#, "dimension 0"),
        (
            r#"{"kind": "rbm", "W": [[], []], "b": [], "c": [0, 0]}"#,
            "no visible units",
        ),
        (
            r#"{"kind": "ising_lattice", "rows": 0, "cols": 5, "coupling": 0.1}"#,
            "`rows`",
        ),
        (r#"{"kind": "binary_quadratic", "W": [], "b": []}"#, "`W`"),
    ];
    for (k, (text, part)) in cases.iter().enumerate() {
        let name = format!("z{k}.json");
        s.write(&name, text);
        expect(&sample_fails(&s, &name, &[]), &[&name, part]);
    }
}

#[test]
fn unparsable_and_missing_files() {
    let s = Scratch::new("files");
    let cases = [
        ("broken.json", "{\"kind\": \"rbm\", ", "not valid JSON"),
        ("empty.json", "", "not valid JSON"),
        ("nan.json", r#"{"kind": "rbm", "W": NaN}"#, "not valid JSON"),
        ("list.json", "[1, 2, 3]", "JSON object"),
        ("binary.json", "\u{1}\u{2}garbage", "not valid JSON"),
    ];
    for (name, text, part) in cases {
        s.write(name, text);
        expect(&sample_fails(&s, name, &[]), &[name, part]);
    }
    expect(
        &sample_fails(&s, "nowhere.json", &[]),
        &["nowhere.json", "cannot read"],
    );
    expect(&sample_fails(&s, ".", &[]), &["cannot read"]);
    // A referenced array file that is missing or not an .npy file.
    let model = npy_variant(&s, "m", RBM);
    std::fs::remove_file(s.path("m/arrays/rbm_c.npy")).unwrap();
    expect(
        &sample_fails(&s, model.to_str().unwrap(), &[]),
        &["rbm.json", "`c`", "rbm_c.npy"],
    );
    s.write("m/arrays/rbm_c.npy", "not numpy");
    expect(
        &sample_fails(&s, model.to_str().unwrap(), &[]),
        &["rbm.json", "`c`", "rbm_c.npy"],
    );
}

#[test]
fn bad_flags() {
    let s = Scratch::new("flags");
    s.write("m.json", QUADRATIC);
    let cases: [(&[&str], &str); 9] = [
        (&["--bogus"], "--bogus"),
        (&["--steps", "abc"], "--steps"),
        (&["--steps", "-5"], "--steps"),
        (&["--chains", "0"], "--chains"),
        (&["--thin", "0"], "--thin"),
        (&["--sampler", "hmc"], "--sampler"),
        (&["--format", "xml"], "--format"),
        (&["--threads", "many"], "--threads"),
        (&["--seed"], "--seed"),
    ];
    for (extra, part) in cases {
        expect(&sample_fails(&s, "m.json", extra), &[part]);
    }
    // No model at all, an unknown subcommand, an output folder that does not exist.
    expect(&s.fails("sample --steps 5"), &["--model"]);
    expect(&s.fails("smaple"), &["smaple"]);
    s.refuses(
        "sample --model m.json --out no/such/dir/x.npy",
        &["no/such/dir"],
    );
    s.refuses("sample --model m.json --summary .", &["folder"]);
}

#[test]
fn model_and_bench_bad_inputs() {
    let s = Scratch::new("generators");
    let gen_fails = |args: &[&str], parts: &[&str]| {
        let mut all = vec!["model"];
        all.extend(args);
        all.extend(["--out", "gen.json"]);
        let line = fails(&s.0, &all);
        expect(&line, parts);
        assert!(s.files().is_empty(), "{args:?}: {:?}", s.files());
    };
    gen_fails(&["ising-ba", "--nodes", "4"], &["--nodes"]);
    gen_fails(
        &["ising-ba", "--edges-per-node", "0"],
        &["--edges-per-node"],
    );
    gen_fails(&["ising-lattice", "--cols", "0"], &["--cols"]);
    gen_fails(&["ising-lattice", "--coupling", "inf"], &["--coupling"]);
    gen_fails(&["ising-lattice", "--periodic", "maybe"], &["--periodic"]);
    gen_fails(&["rbm", "--hidden", "0"], &["--hidden"]);
    gen_fails(&["rbm", "--scale", "-1"], &["--scale"]);
    gen_fails(&["rbm", "--weights", "missing.npy"], &["missing.npy"]);
    gen_fails(
        &["rbm", "--weights", "w.npy", "--visible", "3"],
        &["--weights"],
    );
    gen_fails(&["binary-quadratic", "--dim", "0"], &["--dim"]);
    gen_fails(&["binary-logistic", "--active", "200"], &["--active"]);
    gen_fails(&["lattice-gaussian", "--states", "1"], &["--states"]);
    gen_fails(
        &["lattice-gaussian", "--condition", "0.5"],
        &["--condition"],
    );
    gen_fails(
        &["lattice-gaussian", "--sparse-cycle", "--coupling", "0.5"],
        &["--coupling"],
    );
    gen_fails(
        &["lattice-gaussian", "--rotated", "--sparse-cycle"],
        &["--sparse-cycle"],
    );
    gen_fails(&["lattice-mixture", "--states", "5"], &["--states"]);
    gen_fails(&["lattice-mixture", "--distance", "l1"], &["--distance"]);
    gen_fails(&["lattice-mixture", "--dim", "40"], &["--modes-per-axis"]);
    gen_fails(&["no-such-model"], &["no-such-model"]);
    expect(&s.fails("model"), &["generator", "--schema"]);
    expect(&s.fails("model rbm --npy"), &["--out"]);
    // Given RBM weights of the wrong rank or with mismatched biases.
    let w = s.npy("w/w.npy", &[6], NpyData::F64(vec![0.5; 6]));
    let line = s.fails(&format!(
        "model rbm --weights {} --out gen.json",
        w.display()
    ));
    expect(&line, &["--weights", "matrix"]);
    s.npy("w/w.npy", &[2, 3], NpyData::F64(vec![0.5; 6]));
    let b = s.npy("w/b.npy", &[2], NpyData::F64(vec![0.5; 2]));
    let line = s.fails(&format!(
        "model rbm --weights {} --visible-bias {}",
        w.display(),
        b.display()
    ));
    expect(&line, &["--visible-bias", "2 entries", "expected 3"]);
    // bench: the same loading and parameter checks as sample.
    s.write("potts.json", r#"{"kind": "potts"}"#);
    s.write("m.json", QUADRATIC);
    expect(&s.fails("bench --model potts.json"), &["potts"]);
    expect(&s.fails("bench --model gone.json"), &["gone.json"]);
    expect(&s.fails("bench --model m.json --step 0"), &["step"]);
    expect(&s.fails("bench --model m.json --repeats 0"), &["--repeats"]);
}

#[test]
fn label_models_and_samplers() {
    let s = Scratch::new("labels-bad");
    s.write("ord.json", common::ORDINAL);
    s.write("potts.json", common::POTTS);
    s.write("m.json", QUADRATIC);
    // `model: flags => parts|of|the|message`
    for case in [
        // A sampler the model's domain does not have.
        "potts.json: --sampler rwm => rwm|categorical|gwg",
        "ord.json: --sampler rwm => rwm|ordinal",
        "ord.json: --sampler gwg => gwg|ordinal",
        // Windows are for ordinal models, and at least 1.
        "m.json: --window 2 => --window|ordinal",
        "potts.json: --window 2 => --window|ordinal",
        "ord.json: --window 0 => --window",
        // Sampler parameters.
        "m.json: --sampler rwm --rate 0 => flip rate",
        "m.json: --sampler rwm --rate 1 => flip rate",
        "ord.json: --sampler dmala --step nan => step",
        "potts.json: --sampler ab --balance 1.5 => balance",
        "ord.json: --sampler acs --a-ceil -1 => step",
        "m.json: --sampler acs --a-max 0.5 --a-min 2 => a_min",
        "m.json: --sampler acs --a-max 2 => --a-min",
    ] {
        let (model, rest) = case.split_once(": ").unwrap();
        let (flags, parts) = rest.split_once(" => ").unwrap();
        let flags: Vec<&str> = flags.split(' ').collect();
        let parts: Vec<&str> = parts.split('|').collect();
        expect(&sample_fails(&s, model, &flags), &parts);
    }
    // ACS needs a run long enough for one round of every search within a tenth of it.
    expect(
        &sample_fails(&s, "potts.json", &["--sampler", "acs", "--burn-in", "10"]),
        &["acs", "too short to tune"],
    );
}

#[test]
fn label_model_files() {
    let s = Scratch::new("label-files");
    let cases = r#"
s0.json: {"kind": "ordinal_quadratic", "states": 0, "A": [[1]], "mu": [0]} => `states`|found 0
s1.json: {"kind": "potts", "states": 1, "n": 3} => `states`|found 1
sbig.json: {"kind": "lattice_mixture", "states": 70000, "modes": [[1, 1]], "scale": 1} => `states`|70000
sneg.json: {"kind": "potts", "states": -3, "n": 3} => `states`
mode.json: {"kind": "lattice_mixture", "states": 10, "modes": [[1, 1], [3, 10]], "scale": 1} => `modes`|mode 1|outside
edge.json: {"kind": "potts", "states": 3, "n": 3, "edges": [[0, 7, 1]]} => `edges`|node 7
loop.json: {"kind": "potts", "states": 3, "n": 3, "edges": [[1, 1, 1]]} => `edges`|itself
triple.json: {"kind": "potts", "states": 3, "n": 3, "edges": [[0, 1]]} => `edges`
field.json: {"kind": "potts", "states": 3, "n": 2, "field": [[0, 0], [0, 0]]} => `field`|2 × 3
a.json: {"kind": "ordinal_quadratic", "states": 4, "A": [[1, 0]], "mu": [0, 0]} => `A`
b.json: {"kind": "ordinal_quadratic", "states": 4, "A": [[1]], "mu": [0], "b": [1, 2]} => `b`
nan.json: {"kind": "ordinal_quadratic", "states": 4, "A": [[1e999]], "mu": [0]} => nan.json
dist.json: {"kind": "lattice_mixture", "states": 10, "modes": [[1, 1]], "scale": 1, "distance": "l1"} => `distance`
sigma.json: {"kind": "quartic_mixture", "dim": 2, "states": 5, "components": 1, "sigma": -1, "seed": 0} => `sigma`
n0.json: {"kind": "potts", "states": 3, "n": 0} => `n`|dimension 0
"#;
    // `file: model => parts|of|the|message`
    for case in cases.trim().lines() {
        let (name, rest) = case.split_once(": ").unwrap();
        let (json, parts) = rest.split_once(" => ").unwrap();
        let parts: Vec<&str> = parts.split('|').collect();
        s.write(name, json);
        let line = sample_fails(&s, name, &[]);
        expect(&line, &parts);
        assert!(line.contains(name), "{line}");
    }
}

#[test]
fn batch_without_a_batched_path() {
    let s = Scratch::new("batch");
    s.write("ising.json", ISING);
    s.write("rbm.json", RBM);
    s.write("ordinal.json", common::ORDINAL);
    s.write("mix.json", common::MIXTURE);
    // `model: extra words => parts|of|the|message`. A model without a batched path, a
    // sampler without one, and a batch of zero chains; on ordinal models only dula and dmala
    // on an ordinal quadratic model are batched; AB-2's schedule has no batched path on either
    // domain: refused, not ignored.
    let cases = r#"
ising.json: --batch 4 => --batch|ising model|no batched path
rbm.json: --sampler gibbs --batch 4 => --batch|gibbs|rbm|no batched path
rbm.json: --batch 0 => --batch must be at least 1
ordinal.json: --sampler gibbs --batch 4 => --batch|gibbs|ordinal_quadratic|no batched path
ordinal.json: --sampler ab --batch 4 => --batch|ab|ordinal_quadratic|no batched path
rbm.json: --sampler ab2 --batch 4 => --batch|ab2|rbm|no batched path
ordinal.json: --sampler ab2 --batch 4 => --batch|ab2|ordinal_quadratic|no batched path
mix.json: --batch 4 => --batch|lattice_mixture|no batched path
ordinal.json: --batch 0 => --batch must be at least 1
"#;
    for case in cases.trim().lines() {
        let (model, rest) = case.split_once(": ").unwrap();
        let (extra, parts) = rest.split_once(" => ").unwrap();
        let parts: Vec<&str> = parts.split('|').collect();
        expect(&sample_fails(&s, model, &words(extra)), &parts);
    }
}
