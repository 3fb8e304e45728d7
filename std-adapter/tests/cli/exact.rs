//! `--exact` and `--plot` end to end.
//!
//! The exactness tests run many short chains and keep draws far apart, so the kept draws are
//! (for the test's purpose) independent draws from the target: on models of at most 125
//! states a Gibbs sweep, or tens of single-change steps, forget the state well within the
//! spacing used. Each marginal estimate `P̂(x_i = k)` from `n` independent draws has standard
//! deviation at most `½/√n`; with a per-suite false-positive rate of 1e-6 split over the `d·S`
//! entries (Bonferroni, two-sided), every error stays below `z·½/√n`, `z = 5.5`, and so does
//! their root mean square.

use crate::common;

use common::{ORDINAL, POTTS, QUADRATIC, RBM, Scratch, label_samples, ok, strings, summary};

/// `z` for a two-sided tail of 1e-6 / 30 (more than any table here has entries).
const Z: f64 = 5.5;

/// The exact marginals `P(x_i = k)`, `i·S + k`, of `exp(u(x))` over `{0..S−1}^d`.
fn exact_marginals(d: usize, s: usize, u: impl Fn(&[usize]) -> f64) -> Vec<f64> {
    let mut m = vec![0.0; d * s];
    for (x, p) in common::exact_law(d, s, u) {
        for (i, &v) in x.iter().enumerate() {
            m[i * s + v] += p;
        }
    }
    m
}

fn empirical(values: &[i64], d: usize, s: usize) -> Vec<f64> {
    let mut m = vec![0.0; d * s];
    for x in values.chunks_exact(d) {
        for (i, &v) in x.iter().enumerate() {
            m[i * s + v as usize] += 1.0;
        }
    }
    let n = (values.len() / d) as f64;
    m.iter().map(|c| c / n).collect()
}

fn rmse(a: &[f64], b: &[f64]) -> f64 {
    (a.iter().zip(b).map(|(x, y)| (x - y).powi(2)).sum::<f64>() / a.len() as f64).sqrt()
}

/// Runs `sampler` with `--exact` and checks the reported RMSE against the bound and against
/// the RMSE of the same draws to the marginals computed here from the model's formula (equal
/// up to rounding if the command's enumeration is right).
#[allow(clippy::too_many_arguments)]
fn check(
    scratch: &Scratch,
    json: &str,
    tag: &str,
    sampler: &[&str],
    thin: u64,
    d: usize,
    s: usize,
    exact: &[f64],
) {
    let model = scratch.write(&format!("{tag}.json"), json);
    let (chains, per_chain) = (200usize, 10u64);
    let steps = (per_chain * thin).to_string();
    let burn_in = (5 * thin).to_string();
    let (out, sum) = (format!("{tag}.npy"), format!("{tag}.summary.json"));
    let thin_text = thin.to_string();
    let mut args = vec![
        "sample",
        "--model",
        model.to_str().unwrap(),
        "--chains",
        "200",
        "--steps",
        &steps,
        "--burn-in",
        &burn_in,
        "--thin",
        &thin_text,
        "--exact",
        "--out",
        &out,
        "--summary",
        &sum,
        "--quiet",
        "--sampler",
    ];
    args.extend(sampler);
    ok(&scratch.0, &args);
    let (shape, _, values) = label_samples(&scratch.path(&out));
    assert_eq!(shape, vec![chains, per_chain as usize, d]);
    let n = (chains as u64 * per_chain) as f64;
    let bound = Z * 0.5 / n.sqrt();
    let reported = summary(&scratch.path(&sum))["marginal_rmse"]
        .as_f64()
        .unwrap();
    let ours = rmse(&empirical(&values, d, s), exact);
    assert!(reported < bound, "{tag}: RMSE {reported} ≥ {bound}");
    assert!(
        (reported - ours).abs() < 1e-9,
        "{tag}: the command's enumeration gives RMSE {reported}, the formula {ours}"
    );
}

#[test]
fn exact_samplers_match_enumerated_marginals() {
    let scratch = Scratch::new("exact-rmse");
    // U(x) = −½(x−μ)ᵀA(x−μ) + bᵀx on {0..4}³.
    let a = [
        [0.5, 0.125, 0.0],
        [0.125, 0.375, -0.125],
        [0.0, -0.125, 0.75],
    ];
    let (mu, b) = ([2.0, 1.5, 3.0], [0.25, 0.0, -0.125]);
    let ordinal = exact_marginals(3, 5, |x| common::quadratic_u(x, &a, &mu, &b));
    check(
        &scratch,
        ORDINAL,
        "ord-gibbs",
        &["gibbs"],
        3,
        3,
        5,
        &ordinal,
    );
    check(
        &scratch,
        ORDINAL,
        "ord-dmala",
        &["dmala", "--step", "1.5"],
        20,
        3,
        5,
        &ordinal,
    );
    let potts = potts_marginals();
    check(&scratch, POTTS, "potts-gwg", &["gwg"], 40, 4, 3, &potts);
    check(
        &scratch,
        POTTS,
        "potts-gibbs",
        &["gibbs", "--scan", "random"],
        5,
        4,
        3,
        &potts,
    );
    // The binary sampler path.
    let binary = quadratic_marginals();
    check(
        &scratch,
        QUADRATIC,
        "quad-gibbs",
        &["gibbs"],
        3,
        6,
        2,
        &binary,
    );
    check(&scratch, QUADRATIC, "quad-ab", &["ab"], 20, 6, 2, &binary);
    check(&scratch, QUADRATIC, "quad-ab2", &["ab2"], 20, 6, 2, &binary);
    check(
        &scratch,
        QUADRATIC,
        "quad-ab2-shift",
        &["ab2", "--diagonal", "shift"],
        20,
        6,
        2,
        &binary,
    );
    for (tag, rule) in [("quad-ab2-max", "max"), ("quad-ab2-dlp", "dlp-trace")] {
        check(
            &scratch,
            QUADRATIC,
            tag,
            &["ab2", "--diagonal", rule],
            20,
            6,
            2,
            &binary,
        );
    }
}

#[test]
fn exact_refuses_models_too_large_to_enumerate() {
    let scratch = Scratch::new("exact-big");
    scratch.write(
        "big.json",
        r#"{"kind": "ising_lattice", "rows": 5, "cols": 5, "coupling": 0.2}"#,
    );
    scratch.refuses(
        "sample --model big.json --exact --steps 10",
        &["--exact", "d = 25"],
    );
    // 9 values on 8 coordinates: 25.4 bits.
    scratch.write("wide.json", r#"{"kind": "potts", "states": 9, "n": 8}"#);
    scratch.refuses("sample --model wide.json --exact", &["S = 9"]);
    assert!(scratch.files() == vec!["big.json", "wide.json"]);
}

fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    let be = |k: usize| u32::from_be_bytes(bytes[k..k + 4].try_into().unwrap());
    (be(16), be(20))
}

#[test]
fn plots_for_each_kind_of_model() {
    let scratch = Scratch::new("plots");
    scratch.write("ord.json", ORDINAL);
    scratch.write(
        "mix.json",
        r#"{"kind": "lattice_mixture", "states": 60, "modes": [[15, 15], [45, 45]], "scale": 3}"#,
    );
    // An RBM over 3×3 images.
    scratch.write(
        "rbm9.json",
        r#"{"kind": "rbm", "W": [[1, -1, 1, -1, 1, -1, 1, -1, 1], [0.5, 0, -0.5, 0, 0.5, 0, -0.5, 0, 0.5]],
            "b": [0, 0, 0, 0, 0, 0, 0, 0, 0], "c": [0, 0]}"#,
    );
    scratch.write("rbm6.json", RBM);
    let cases: [(&str, &[&str]); 4] = [
        ("ord.json", &["o.png"]),
        ("mix.json", &["m.png", "m.heatmap.png"]),
        ("rbm9.json", &["r.png", "r.images.png"]),
        ("rbm6.json", &["s.png"]),
    ];
    for (model, files) in cases {
        let sum = format!("{model}.summary");
        ok(
            &scratch.0,
            &[
                "sample",
                "--model",
                model,
                "--sampler",
                "gibbs",
                "--steps",
                "400",
                "--plot",
                files[0],
                "--summary",
                &sum,
                "--quiet",
            ],
        );
        let s = summary(&scratch.path(&sum));
        let listed = strings(&s["plots"]);
        assert_eq!(listed, files, "{model}");
        for f in files {
            let (w, h) = png_size(&std::fs::read(scratch.path(f)).unwrap());
            assert!(w >= 100 && h >= 50, "{f}: {w} × {h}");
        }
    }
    // The trace is 1000 × 800; the 3×3 images are enlarged to 96 pixels a side, 8 a row.
    assert_eq!(
        png_size(&std::fs::read(scratch.path("o.png")).unwrap()),
        (1000, 800)
    );
    let (w, _) = png_size(&std::fs::read(scratch.path("r.images.png")).unwrap());
    assert_eq!(w, 8 * (3 * 32 + 8) + 8);
    // No partial files are left behind.
    assert!(
        scratch
            .files()
            .iter()
            .all(|f| !f.contains("render") && !f.contains("partial"))
    );
}

#[test]
fn a_plot_that_cannot_be_written_leaves_no_files() {
    let scratch = Scratch::new("plot-fail");
    scratch.write("m.json", ORDINAL);
    scratch.refuses(
        "sample --model m.json --out s.npy --plot gone/p.png",
        &["gone"],
    );
    assert_eq!(scratch.files(), vec!["m.json"]);
}

/// The marginals of the `POTTS` model: `U(x) = Σ_edges J [x_i = x_j] + Σ h_{i,x_i}`.
fn potts_marginals() -> Vec<f64> {
    let edges = [(0, 1, 0.5), (1, 2, -0.25), (2, 3, 0.75), (3, 0, 0.25)];
    let h = [
        [0.0, 0.25, -0.125],
        [0.125, 0.0, 0.0],
        [0.0, 0.0, 0.5],
        [-0.25, 0.125, 0.0],
    ];
    exact_marginals(4, 3, |x| {
        let pairs: f64 = edges
            .iter()
            .filter(|(i, j, _)| x[*i] == x[*j])
            .map(|e| e.2)
            .sum();
        pairs + (0..4).map(|i| h[i][x[i]]).sum::<f64>()
    })
}

/// The marginals of the `QUADRATIC` model: `U(x) = xᵀWx + bᵀx` on `{0,1}⁶`.
fn quadratic_marginals() -> Vec<f64> {
    let doc: serde_json::Value = serde_json::from_str(QUADRATIC).unwrap();
    let w: Vec<Vec<f64>> = serde_json::from_value(doc["W"].clone()).unwrap();
    let b: Vec<f64> = serde_json::from_value(doc["b"].clone()).unwrap();
    exact_marginals(6, 2, |x| {
        let mut u = 0.0;
        for i in 0..6 {
            u += b[i] * x[i] as f64;
            for j in 0..6 {
                u += x[i] as f64 * w[i][j] * x[j] as f64;
            }
        }
        u
    })
}

#[test]
fn locally_balanced_matches_enumerated_marginals() {
    let scratch = Scratch::new("exact-lb");
    let (potts, binary) = (potts_marginals(), quadratic_marginals());
    for balancing in ["sqrt", "barker"] {
        let lb = ["lb", "--balancing", balancing];
        check(
            &scratch,
            POTTS,
            &format!("potts-lb-{balancing}"),
            &lb,
            40,
            4,
            3,
            &potts,
        );
        check(
            &scratch,
            QUADRATIC,
            &format!("quad-lb-{balancing}"),
            &lb,
            20,
            6,
            2,
            &binary,
        );
    }
}
