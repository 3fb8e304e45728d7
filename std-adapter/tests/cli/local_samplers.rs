//! The samplers of the benchmark suites (locally balanced) through `langevin sample`: every
//! model kind they apply to, their parameters in the summary, and the errors for models they
//! do not apply to.

use crate::common;

use common::{ISING, LATTICE, ORDINAL, POTTS, QUADRATIC, RBM, Scratch, fails, ok, summary, words};

const BINARY: [(&str, &str); 4] = [
    ("binary_quadratic", QUADRATIC),
    ("ising", ISING),
    ("ising_lattice", LATTICE),
    ("rbm", RBM),
];

/// Runs `langevin sample` with these sampler words; returns the summary.
fn run(scratch: &Scratch, model: &str, sampler: &[&str], tag: &str) -> serde_json::Value {
    let sum = format!("{tag}.summary.json");
    let line = format!(
        "sample --model {model} --steps 400 --burn-in 100 --chains 2 --seed 9 --summary {sum} --quiet --sampler"
    );
    let mut args = words(&line);
    args.extend(sampler);
    ok(&scratch.0, &args);
    summary(&scratch.path(&sum))
}

#[test]
fn lb_runs_on_binary_and_categorical_models() {
    let scratch = Scratch::new("local-lb");
    let mut models: Vec<(&str, &str)> = BINARY.to_vec();
    models.push(("potts", POTTS));
    for (kind, json) in models {
        let model = format!("{kind}.json");
        scratch.write(&model, json);
        for balancing in ["sqrt", "barker"] {
            let tag = format!("{kind}-{balancing}");
            let s = run(&scratch, &model, &["lb", "--balancing", balancing], &tag);
            assert_eq!(s["sampler"], "lb");
            assert_eq!(s["balancing"], balancing);
            let acc = s["acceptance_rate"].as_f64().unwrap();
            assert!(acc > 0.2 && acc <= 1.0, "{tag}: acceptance {acc}");
            // Every step prices the d (or d(S − 1)) moves at x and at the proposal.
            let evals = s["evals"].as_u64().unwrap();
            let steps = 2 * 500;
            assert!(evals > 2 * steps, "{tag}: {evals} evaluations");
        }
    }
    scratch.write("ordinal.json", ORDINAL);
    scratch.refuses(
        "sample --model ordinal.json --steps 10 --sampler lb",
        &["sampler lb does not apply to ordinal models"],
    );
}

#[test]
fn hamming_ball_runs_on_binary_models_and_refuses_unbounded_balls() {
    let scratch = Scratch::new("local-hb");
    for (kind, json) in BINARY {
        let model = format!("{kind}.json");
        scratch.write(&model, json);
        let s = run(
            &scratch,
            &model,
            &["hamming-ball", "--radius", "2", "--block", "4"],
            kind,
        );
        assert_eq!(s["sampler"], "hamming-ball");
        assert_eq!(
            (s["radius"].as_u64(), s["block"].as_u64()),
            (Some(2), Some(4))
        );
        // Gibbs on (x, u): nothing is rejected.
        assert_eq!(s["acceptance_rate"].as_f64(), Some(1.0), "{kind}");
        assert!(s["mean_jump"].as_f64().unwrap() > 0.0, "{kind}: stuck");
    }
    for bad in [["--radius", "4"], ["--block", "33"], ["--radius", "0"]] {
        let mut args = words("sample --model rbm.json --steps 10 --sampler hamming-ball");
        args.extend(bad);
        let err = fails(&scratch.0, &args);
        assert!(
            err.contains("hamming-ball: `Hamming-ball"),
            "{bad:?}: {err}"
        );
    }
    scratch.write("potts.json", POTTS);
    scratch.refuses(
        "sample --model potts.json --steps 10 --sampler hamming-ball",
        &["does not apply to categorical models"],
    );
}

#[test]
fn block_gibbs_runs_on_rbm_models_only() {
    let scratch = Scratch::new("local-block-gibbs");
    scratch.write("rbm.json", RBM);
    let s = run(&scratch, "rbm.json", &["block-gibbs"], "rbm");
    assert_eq!(s["sampler"], "block-gibbs");
    assert_eq!(s["acceptance_rate"].as_f64(), Some(1.0));
    assert!(s["mean_jump"].as_f64().unwrap() > 0.0);
    for (kind, json) in &BINARY[..3] {
        let model = format!("{kind}.json");
        scratch.write(&model, json);
        let err = scratch.fails(&format!(
            "sample --model {model} --steps 10 --sampler block-gibbs"
        ));
        assert!(err.contains("applies to RBM models only"), "{kind}: {err}");
    }
}
