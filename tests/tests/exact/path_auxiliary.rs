//! The path auxiliary sampler by enumeration: its transition matrix built from its own `step`
//! (every path of move intervals replayed, the Metropolis word bisected; see
//! `langevin_tests::harness::path_transition_matrix`), checked for detailed balance and
//! `πP = π` at the step harness's tolerance.

use langevin_core::models::{BinaryQuadratic, Dims, IsingLattice};
use langevin_std::kernels::PathSampler;
use langevin_tests::QuadraticData;
use langevin_tests::discrete::small_potts;
use langevin_tests::harness::{
    BinaryProbe, CategoricalProbe, assert_exact, path_transition_matrix,
};
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

#[test]
fn binary_pas_from_its_steps_is_reversible() {
    let model = IsingLattice::with_dims(Dims { rows: 2, cols: 2 }, 0.45, 0.2, false).unwrap();
    for l in [1usize, 2, 3] {
        let kernel = PathSampler::new(Some(l), 4, 0).unwrap();
        let mut probe = BinaryProbe::new(model, kernel);
        assert_exact(
            &format!("Ising 2×2, L = {l}"),
            &path_transition_matrix(&mut probe, l),
        );
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(23);
    let q = QuadraticData::random(4, 0.9, 0.8, &mut rng);
    let mut cache = q.cache();
    let model = BinaryQuadratic::new(&q.w, &q.b, &mut cache).unwrap();
    let mut probe = BinaryProbe::new(model, PathSampler::new(Some(2), 4, 0).unwrap());
    assert_exact(
        "quadratic d = 4, L = 2",
        &path_transition_matrix(&mut probe, 2),
    );
}

#[test]
fn categorical_pas_from_its_steps_is_reversible() {
    for (n, s, l) in [(2usize, 3usize, 1usize), (2, 3, 2), (3, 3, 2), (2, 4, 2)] {
        let kernel = PathSampler::new(Some(l), n, 0).unwrap();
        let mut probe = CategoricalProbe::new(small_potts(n, s), kernel);
        assert_exact(
            &format!("Potts {n}×{s}, L = {l}"),
            &path_transition_matrix(&mut probe, l),
        );
    }
}
