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
    let sum = format!("{tag}.json");
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
    let err = fails(
        &scratch.0,
        &words("sample --model ordinal.json --steps 10 --sampler lb"),
    );
    assert!(
        err.contains("sampler lb does not apply to ordinal models"),
        "{err}"
    );
}
