//! Exact invariance of the categorical Metropolis-adjusted kernel by enumeration (tolerance
//! 1e-12, see `ordinal_exact.rs`), on Potts models.

use langevin_core::categorical::CategoricalProposal;
use langevin_tests::discrete::*;

const TOL: f64 = 1e-12;

#[test]
fn categorical_mh_is_exact_on_potts() {
    for (n, s) in [(3usize, 3usize), (4, 3), (3, 5)] {
        let mut m = small_potts(n, s);
        let states = enumerate(n, s);
        let (log_pi, grads) = tabulate_categorical(&mut m, &states);
        let pi = normalise(&log_pi);
        for (a, b) in [(0.1, 0.5), (1.0, 0.5), (3.0, 0.75), (50.0, 1.0)] {
            let prop = CategoricalProposal::new(a, b).unwrap();
            let log_q =
                |i: usize, j: usize| prop.log_q(&states[i], &grads[i], s, &states[j]).unwrap();
            for i in (0..states.len()).step_by(5) {
                let total: f64 = (0..states.len()).map(|j| log_q(i, j).exp()).sum();
                // Weights are f32 exponentials: the law sums to 1 up to f64 rounding of the
                // normaliser, whatever the f32 rounding of each weight.
                assert!((total - 1.0).abs() < TOL, "q(.|x_{i}) sums to {total}");
            }
            let p = mh_matrix(&log_pi, log_q);
            assert_invariant(&pi, &p, TOL, true);
        }
    }
}

#[test]
fn categorical_mh_is_exact_with_a_preconditioner() {
    let (n, s) = (3usize, 4usize);
    let mut m = small_potts(n, s);
    let states = enumerate(n, s);
    let (log_pi, grads) = tabulate_categorical(&mut m, &states);
    let pi = normalise(&log_pi);
    let pre = [0.7f32, 1.0, 1.6];
    let prop = CategoricalProposal::new(0.9, 0.6)
        .unwrap()
        .preconditioned(&pre)
        .unwrap();
    let p = mh_matrix(&log_pi, |i, j| {
        prop.log_q(&states[i], &grads[i], s, &states[j]).unwrap()
    });
    assert_invariant(&pi, &p, TOL, true);
}
