//! `langevin sample --sampler pas`: binary and categorical models, the path length fixed or
//! adapted during burn-in, and its refusals.

use crate::common;

use common::{ISING, ORDINAL, POTTS, Scratch, sample_potts, sample_with, samples};

#[test]
fn pas_samples_binary_models_with_a_fixed_or_adapted_path_length() {
    let s = Scratch::new("pas-binary");
    s.write("ising.json", ISING);
    let auto = sample_with(&s, "pas", "ising.json", "", "auto");
    assert_eq!(auto["sampler"], "pas");
    let (shape, draws) = samples(&s.path("auto.npy"));
    assert_eq!(shape, vec![2, 600, 5]);
    assert!(draws.chunks_exact(5).any(|x| x != &draws[..5]), "stuck");
    for t in auto["tuned"].as_array().unwrap() {
        let l = t["path_length"].as_u64().unwrap();
        assert!((1..=5).contains(&l), "path length {l}");
        assert_eq!(t["frozen"], true);
    }
    let acceptance = auto["acceptance_rate"].as_f64().unwrap();
    assert!(acceptance > 0.0 && acceptance <= 1.0);

    let fixed = sample_with(&s, "pas", "ising.json", "--path-length 3", "fixed");
    let tuned = &fixed["tuned"];
    assert!(tuned.is_null() || tuned.as_array().unwrap().iter().all(|t| t.is_null()));
    // One evaluation per step at most (none when the path cancels), plus the start.
    let evals = fixed["evals"].as_u64().unwrap();
    assert!(evals <= 2 * (1 + 800), "{evals}");
}

#[test]
fn pas_samples_categorical_models_and_refuses_ordinal_ones_and_empty_paths() {
    let s = Scratch::new("pas-labels");
    s.write("potts.json", POTTS);
    s.write("ord.json", ORDINAL);
    sample_potts(&s, "pas", "--path-length 2", "labels");
    s.refuses(
        "sample --model ord.json --sampler pas --steps 10",
        &["pas does not apply to ordinal models"],
    );
    s.refuses(
        "sample --model potts.json --sampler pas --path-length 0 --steps 10",
        &["path length"],
    );
    s.refuses(
        "sample --model potts.json --sampler pas --path-length two --steps 10",
        &["auto"],
    );
}
