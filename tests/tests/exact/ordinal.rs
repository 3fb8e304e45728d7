//! Exact invariance of the ordinal Metropolis-adjusted kernel by enumeration.
//!
//! The transition matrix is built from the proposal's own `log_q` (the numbers the kernel draws
//! with) and the Metropolis rule; `πP = π` and detailed balance are checked to 1e-12, well
//! above the f64 rounding of sums over at most 1 296 states (about 1e-15) and far below any
//! acceptance-ratio bug (which shows up at 1e-3 or more).

use langevin_core::ordinal::{Dmala, OrdinalChain, OrdinalProposal, OrdinalStorage, OrdinalTarget};
use langevin_std::models::OrdinalQuadratic;
use langevin_tests::discrete::*;
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

const TOL: f64 = 1e-12;

fn check_model<T: OrdinalTarget>(name: &str, t: &mut T) {
    let s = t.states();
    let (states, log_pi, grads, pi) = ordinal_law(t);
    for (a, b) in [
        (0.05, 0.5),
        (0.5, 0.5),
        (2.0, 0.7),
        (10.0, 1.0),
        (1e4, 0.95),
    ] {
        for window in [None, Some(1u16), Some(2)] {
            let mut prop = OrdinalProposal::new(a, b).unwrap();
            if let Some(w) = window {
                prop = prop.windowed(w).unwrap();
            }
            let log_q =
                |i: usize, j: usize| prop.log_q(&states[i], &grads[i], s, &states[j]).unwrap();
            // The proposal is a distribution over all states.
            for i in (0..states.len()).step_by(7) {
                let total: f64 = (0..states.len()).map(|j| log_q(i, j).exp()).sum();
                assert!(
                    (total - 1.0).abs() < TOL,
                    "{name}: q(.|x_{i}) sums to {total}"
                );
            }
            let p = mh_matrix(&log_pi, log_q);
            assert_invariant(&pi, &p, TOL, true);
        }
    }
}

#[test]
fn ordinal_mh_is_exact_on_a_rotated_lattice_gaussian() {
    let mut m = OrdinalQuadratic::rotated_gaussian(3, 5, 4.0, 1.5, 11).unwrap();
    check_model("rotated", &mut m);
}

#[test]
fn ordinal_mh_is_exact_on_a_non_quadratic_model() {
    let mut m = Wavy::three(4);
    check_model("wavy", &mut m);
}

#[test]
fn ordinal_mh_is_exact_with_a_preconditioner() {
    let mut m = Wavy {
        theta: vec![0.3, -0.6],
        s: 6,
    };
    let (states, log_pi, grads, pi) = ordinal_law(&mut m);
    let pre = [0.5f32, 2.0];
    let prop = OrdinalProposal::new(1.5, 0.8)
        .unwrap()
        .windowed(3)
        .unwrap()
        .preconditioned(&pre)
        .unwrap();
    let p = mh_matrix(&log_pi, |i, j| {
        prop.log_q(&states[i], &grads[i], 6, &states[j]).unwrap()
    });
    assert_invariant(&pi, &p, TOL, true);
}

/// The kernel reports exactly the log acceptance ratio the enumeration uses.
#[test]
fn kernel_uses_the_enumerated_acceptance_ratio() {
    let mut m = Wavy::three(4);
    let prop = OrdinalProposal::new(2.0, 0.7).unwrap();
    let kernel = Dmala::new(prop);
    let mut storage = OrdinalStorage::<3, 4>::new([0, 1, 3]);
    let mut chain = OrdinalChain::new_ordinal(storage.buffers(), &mut m).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
    let mut oracle = m.clone();
    let mut checked = 0;
    for _ in 0..200 {
        let x = chain.state().to_vec();
        let mut gx = vec![0.0f32; 3];
        let ux = oracle.log_density_and_grad(&x, &mut gx).unwrap();
        let mut probe = rng.clone();
        let mut y = vec![0u16; 3];
        let mut ch = vec![0u32; 3];
        let drawn = prop
            .propose(&x, &gx, 4, &mut y, &mut ch, &mut probe)
            .unwrap();
        let report = kernel.step(&mut m, &mut chain, &mut rng).unwrap();
        if drawn.changed > 0 {
            let mut gy = vec![0.0f32; 3];
            let uy = oracle.log_density_and_grad(&y, &mut gy).unwrap();
            let want = uy - ux + prop.log_q(&y, &gy, 4, &x).unwrap() - drawn.log_q;
            assert!((report.log_accept_ratio - want).abs() < 1e-12);
            checked += 1;
        }
        let expect = if report.accepted { &y } else { &x };
        assert_eq!(chain.state(), &expect[..]);
    }
    assert!(checked > 50);
}

/// The unadjusted kernel is not exact: its own stationary law `π_a` (power iteration on the
/// enumerated matrix) differs from π, by less as the step shrinks on a lattice Gaussian; and
/// the sampler follows `π_a` (exact start from `π_a`, sampling-path protocol).
#[test]
fn ordinal_dula_has_its_own_stationary_law() {
    use langevin_core::ordinal::Dula;
    let mut m = OrdinalQuadratic::rotated_gaussian(2, 5, 2.0, 1.2, 3).unwrap();
    let (states, _, grads, pi) = ordinal_law(&mut m);
    let k = states.len();
    let stationary = |a: f64| {
        let prop = OrdinalProposal::new(a, 0.5).unwrap();
        let p: Vec<f64> = (0..k * k)
            .map(|ij| {
                prop.log_q(&states[ij / k], &grads[ij / k], 5, &states[ij % k])
                    .unwrap()
                    .exp()
            })
            .collect();
        let mut v = vec![1.0 / k as f64; k];
        for _ in 0..20_000 {
            v = (0..k)
                .map(|j| (0..k).map(|i| v[i] * p[i * k + j]).sum())
                .collect();
        }
        v
    };
    let tv = |v: &[f64]| 0.5 * v.iter().zip(&pi).map(|(a, b)| (a - b).abs()).sum::<f64>();
    let tvs: Vec<f64> = [2.0, 1.0, 0.5, 0.25]
        .iter()
        .map(|&a| tv(&stationary(a)))
        .collect();
    assert!(
        tvs.windows(2).all(|w| w[1] < w[0]) && tvs[0] > 1e-3,
        "TV(π_a, π) = {tvs:?}"
    );
    let pi_a = stationary(1.0);
    let kernel = Dula::new(OrdinalProposal::new(1.0, 0.5).unwrap());
    let mut buf = LabelBuf::labels(&states[0], 5, 2);
    let mut chain = OrdinalChain::new_ordinal(buf.buffers(), &mut m).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(8);
    for steps in [1usize, 10] {
        let counts = exact_start_counts(&pi_a, 100_000, &mut rng, |x0, rng| {
            chain.reset(&states[x0], &mut m).unwrap();
            for _ in 0..steps {
                kernel.step(&mut m, &mut chain, rng).unwrap();
            }
            index_of(chain.state(), 5)
        });
        assert_matches(&format!("DULA against π_a, k = {steps}"), &counts, &pi_a);
    }
}
