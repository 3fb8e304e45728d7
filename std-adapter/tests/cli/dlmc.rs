//! `langevin sample --sampler dlmc`: both solvers on binary models, Euler on categorical ones,
//! the time fixed or adapted during burn-in, and its refusals.

use crate::common;

use common::{ISING, ORDINAL, POTTS, Scratch, sample_potts, sample_with, samples};

#[test]
fn dlmc_samples_binary_models_with_both_solvers_and_an_adapted_or_fixed_time() {
    let s = Scratch::new("dlmc-binary");
    s.write("ising.json", ISING);
    for (k, extra) in ["", "--solver euler", "--solver interpolate --time 0.3"]
        .iter()
        .enumerate()
    {
        let tag = format!("run{k}");
        let sum = sample_with(&s, "dlmc", "ising.json", extra, &tag);
        assert_eq!(sum["sampler"], "dlmc");
        let (shape, draws) = samples(&s.path(&format!("{tag}.npy")));
        assert_eq!(shape, vec![2, 600, 5]);
        assert!(
            draws.chunks_exact(5).any(|x| x != &draws[..5]),
            "{extra}: stuck"
        );
        let acceptance = sum["acceptance_rate"].as_f64().unwrap();
        assert!(acceptance > 0.0 && acceptance <= 1.0, "{extra}");
        let tuned = &sum["tuned"];
        if extra.contains("--time") {
            assert!(tuned.is_null() || tuned.as_array().unwrap().iter().all(|t| t.is_null()));
        } else {
            for t in tuned.as_array().unwrap() {
                let time = t["time"].as_f64().unwrap();
                assert!(time.is_finite() && time > 0.0, "{extra}: time {time}");
                assert_eq!(t["frozen"], true);
            }
        }
    }
}

#[test]
fn dlmc_samples_categorical_models_with_euler_and_refuses_the_rest() {
    let s = Scratch::new("dlmc-labels");
    s.write("potts.json", POTTS);
    s.write("ord.json", ORDINAL);
    sample_potts(&s, "dlmc", "", "adapted");
    sample_with(
        &s,
        "dlmc",
        "potts.json",
        "--solver euler --time 0.4",
        "fixed",
    );
    s.refuses(
        "sample --model potts.json --sampler dlmc --solver interpolate --steps 10",
        &["binary models only"],
    );
    s.refuses(
        "sample --model ord.json --sampler dlmc --steps 10",
        &["dlmc does not apply to ordinal models"],
    );
    for bad in ["0", "-1", "inf", "soon"] {
        let line = s.fails(&format!(
            "sample --model potts.json --sampler dlmc --time {bad} --steps 10"
        ));
        assert!(
            line.contains("time") || line.contains("auto"),
            "{bad}: {line}"
        );
    }
}
