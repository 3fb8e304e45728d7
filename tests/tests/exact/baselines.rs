//! Exact invariance of the baselines by enumeration (tolerance 1e-12, see `ordinal_exact.rs`),
//! and the single-flip capability of the core models against full evaluations.

#![allow(
    clippy::needless_range_loop,
    clippy::type_complexity,
    reason = "index-heavy enumeration code"
)]

use langevin_core::BinaryTarget;
use langevin_core::baselines::{FlipDelta, Gwg, RandomWalk};
use langevin_core::categorical::{CategoricalConditional, CategoricalTarget};
use langevin_core::models::{BinaryQuadratic, Dims, IsingGraph, IsingLattice, Rbm};
use langevin_core::ordinal::{OrdinalConditional, OrdinalTarget};
use langevin_std::models::OrdinalQuadratic;
use langevin_tests::discrete::*;
use langevin_tests::{QuadraticData, RbmData};

const TOL: f64 = 1e-12;

/// `U`, `∇U` and the single-flip deltas (from `FlipDelta`, after establishing each state) of a
/// binary model at every state; checks the deltas against differences of `U` and checks that
/// `commit_flip` leaves the model in the state a fresh evaluation would.
fn tabulate_with_deltas<T: FlipDelta>(
    name: &str,
    t: &mut T,
) -> (Vec<Vec<u8>>, Vec<f64>, Vec<Vec<f32>>, Vec<Vec<f64>>) {
    let d = t.dim();
    let (states, log_pi, grads) = tabulate_binary(t);
    let mut deltas = Vec::new();
    for (a, x) in states.iter().enumerate() {
        t.log_density_and_grad(x, &mut vec![0.0; d]).unwrap();
        let row: Vec<f64> = (0..d).map(|i| t.log_density_delta(x, i).unwrap()).collect();
        for (i, &delta) in row.iter().enumerate() {
            let b = a ^ (1 << i);
            let want = log_pi[b] - log_pi[a];
            assert!(
                (delta - want).abs() < 1e-4 * (1.0 + want.abs()),
                "{name}: ΔU at {a}, {i}: {delta} vs {want}"
            );
        }
        // Flip bit 0 through commit_flip, then the deltas must be those of the new state.
        let mut y = x.clone();
        y[0] ^= 1;
        t.commit_flip(&y, 0);
        let b = a ^ 1;
        for i in 0..d {
            let got = t.log_density_delta(&y, i).unwrap();
            let want = log_pi[b ^ (1 << i)] - log_pi[b];
            assert!(
                (got - want).abs() < 1e-4 * (1.0 + want.abs()),
                "{name}: after commit_flip at {a}, {i}"
            );
        }
        deltas.push(row);
    }
    (states, log_pi, grads, deltas)
}

/// Random-scan Gibbs: `P = (1/d) Σ_i P_i`, `P_i` flipping `i` with probability sigmoid(ΔU).
fn gibbs_matrix(deltas: &[Vec<f64>], d: usize) -> Vec<f64> {
    let k = deltas.len();
    let mut p = vec![0.0; k * k];
    for a in 0..k {
        for i in 0..d {
            let b = a ^ (1 << i);
            let q = 1.0 / (1.0 + (-deltas[a][i]).exp());
            p[a * k + b] += q / d as f64;
            p[a * k + a] += (1.0 - q) / d as f64;
        }
    }
    p
}

fn check_binary_baselines<T: FlipDelta>(name: &str, t: &mut T) {
    let d = t.dim();
    let (states, log_pi, grads, deltas) = tabulate_with_deltas(name, t);
    let pi = normalise(&log_pi);
    // Gibbs, from the same deltas the sampler uses. Its target is the potential those deltas
    // are differences of (for the RBM they are taken in f64 while U is summed from f32
    // softplus terms, a 1e-7 difference), rebuilt here along paths from state 0; the deltas
    // were checked against U above.
    let mut log_pi_gibbs = vec![0.0f64; states.len()];
    for a in 1..states.len() {
        let top = usize::BITS - 1 - a.leading_zeros();
        let base = a & !(1 << top);
        log_pi_gibbs[a] = log_pi_gibbs[base] + deltas[base][top as usize];
    }
    assert_invariant(
        &normalise(&log_pi_gibbs),
        &gibbs_matrix(&deltas, d),
        TOL,
        true,
    );
    // GWG-1.
    let hamming = |a: usize, b: usize| (a ^ b).count_ones();
    let p = mh_matrix(&log_pi, |a, b| {
        if hamming(a, b) == 1 {
            let i = (a ^ b).trailing_zeros() as usize;
            Gwg::log_pick(&states[a], &grads[a], i).unwrap()
        } else {
            f64::NEG_INFINITY
        }
    });
    assert_invariant(&pi, &p, TOL, true);
    // Random-walk Metropolis at the exact flip probability of its draw.
    for rate in [0.05, 0.3] {
        let q = RandomWalk::new(rate).unwrap().flip_probability();
        let p = mh_matrix(&log_pi, |a, b| {
            let h = f64::from(hamming(a, b));
            h * q.ln() + (d as f64 - h) * (1.0 - q).ln()
        });
        assert_invariant(&pi, &p, TOL, true);
    }
}

#[test]
fn binary_baselines_are_exact_on_ising_lattice() {
    let mut m = IsingLattice::with_dims(Dims { rows: 3, cols: 3 }, 0.35, 0.1, true).unwrap();
    check_binary_baselines("lattice", &mut m);
}

#[test]
fn binary_baselines_are_exact_on_ising_graph() {
    // A triangle with a tail: 0-1, 1-2, 2-0, 2-3, 3-4.
    let offsets = [0u32, 2, 4, 7, 9, 10];
    let neighbours = [1u32, 2, 0, 2, 0, 1, 3, 2, 4, 3];
    let couplings = [0.5f32, -0.3, 0.5, 0.8, -0.3, 0.8, 0.4, 0.4, -0.6, -0.6];
    let field = [0.1f32, -0.2, 0.0, 0.3, 0.05];
    let mut m = IsingGraph::new(&offsets, &neighbours, &couplings, &field).unwrap();
    check_binary_baselines("graph", &mut m);
}

#[test]
fn binary_baselines_are_exact_on_quadratic_and_rbm() {
    let q = QuadraticData::patterned(6);
    let mut cache = q.cache();
    let mut m = BinaryQuadratic::new(&q.w, &q.b, &mut cache).unwrap();
    check_binary_baselines("quadratic", &mut m);
    let r = RbmData::patterned();
    let mut cache = r.cache();
    let mut m = Rbm::new(&r.w, &r.b, &r.c, &mut cache).unwrap();
    check_binary_baselines("rbm", &mut m);
}

/// Random-scan label Gibbs from a model's conditionals.
fn label_gibbs_matrix(
    states: &[Vec<u16>],
    s: usize,
    mut cond: impl FnMut(&[u16], usize, &mut [f64]),
) -> Vec<f64> {
    let k = states.len();
    let d = states[0].len();
    let mut p = vec![0.0; k * k];
    let mut out = vec![0.0; s];
    for (a, x) in states.iter().enumerate() {
        for i in 0..d {
            cond(x, i, &mut out);
            let probs = normalise(&out);
            for (v, &q) in probs.iter().enumerate() {
                let mut y = x.clone();
                y[i] = v as u16;
                p[a * k + index_of(&y, s)] += q / d as f64;
            }
        }
    }
    p
}

#[test]
fn label_gibbs_is_exact() {
    let mut m = OrdinalQuadratic::rotated_gaussian(3, 4, 3.0, 1.3, 2).unwrap();
    let (states, _, _, pi) = ordinal_law(&mut m);
    let p = label_gibbs_matrix(&states, 4, |x, i, out| {
        m.log_density_and_grad(x, &mut [0.0; 3]).unwrap();
        m.conditional(x, i, out).unwrap();
    });
    assert_invariant(&pi, &p, TOL, true);

    let mut m = small_potts(4, 3);
    let states = enumerate(4, 3);
    let (log_pi, _) = tabulate_categorical(&mut m, &states);
    let pi = normalise(&log_pi);
    let p = label_gibbs_matrix(&states, 3, |x, i, out| {
        m.log_density_and_grad(x, &mut [0.0; 12]).unwrap();
        m.conditional(x, i, out).unwrap();
    });
    assert_invariant(&pi, &p, TOL, true);
}

#[test]
fn categorical_gwg_is_exact() {
    for (n, s) in [(3usize, 3usize), (4, 3)] {
        let mut m = small_potts(n, s);
        let states = enumerate(n, s);
        let (log_pi, grads) = tabulate_categorical(&mut m, &states);
        let pi = normalise(&log_pi);
        let p = mh_matrix(&log_pi, |a, b| {
            let diff: Vec<usize> = (0..n).filter(|&i| states[a][i] != states[b][i]).collect();
            match diff[..] {
                [i] => {
                    Gwg::log_pick_categorical(&states[a], &grads[a], s, i, states[b][i]).unwrap()
                }
                _ => f64::NEG_INFINITY,
            }
        });
        assert_invariant(&pi, &p, TOL, true);
    }
}
