//! EWSG's index chain picks its minibatch with exactly the law of `M` Metropolis moves
//! (Li et al. 2020, eq. 5): checked by a chi-square test against the law computed by enumeration.
#![allow(
    clippy::needless_range_loop,
    reason = "dense matrix code reads best with indices"
)]

use super::support::{ALPHA, chain_rng, chi_square};
use langevin_core::continuous::{Ewsg, EwsgSettings, SumTarget};
use langevin_std::continuous::GaussianSum;

const CENTERS: [[f64; 2]; 5] = [
    [-2.0, 0.4],
    [-0.5, -1.3],
    [0.3, 0.9],
    [1.1, -0.2],
    [2.4, 1.7],
];

/// The exact law of the chosen minibatch (as a multiset of term indices) after `M` moves,
/// with batches of `n` indices drawn uniformly with replacement.
fn exact_law(
    model: &mut GaussianSum,
    theta: &[f64],
    r: &[f64],
    h: f64,
    gamma: f64,
    n: usize,
    m: u32,
) -> Vec<(Vec<usize>, f64, Vec<f64>)> {
    let terms = model.num_terms();
    let sigma = (2.0 * gamma).sqrt();
    let (kx, kg) = (h.sqrt() * gamma / sigma, h.sqrt() / sigma);
    // States of the index chain: ordered n-tuples, uniform under the proposal.
    let tuples: Vec<Vec<usize>> = (0..terms.pow(n as u32))
        .map(|mut code| {
            (0..n)
                .map(|_| {
                    let i = code % terms;
                    code /= terms;
                    i
                })
                .collect()
        })
        .collect();
    let k = tuples.len();
    let grads: Vec<Vec<f64>> = tuples
        .iter()
        .map(|tu| {
            let mut g = vec![0.0; 2];
            for &i in tu {
                model
                    .add_term_grad(i, theta, terms as f64 / n as f64, &mut g)
                    .unwrap();
            }
            g
        })
        .collect();
    let energy: Vec<f64> = grads
        .iter()
        .map(|g| {
            0.5 * g
                .iter()
                .zip(r)
                .map(|(g, r)| (kx * r + kg * g).powi(2))
                .sum::<f64>()
        })
        .collect();
    let mut law = vec![1.0 / k as f64; k];
    for _ in 0..m {
        let mut next = vec![0.0; k];
        for i in 0..k {
            let mut stay = 1.0;
            for j in 0..k {
                if j == i {
                    continue;
                }
                let p = (1.0 / k as f64) * (energy[j] - energy[i]).exp().min(1.0);
                next[j] += law[i] * p;
                stay -= p;
            }
            next[i] += law[i] * stay;
        }
        law = next;
    }
    // Aggregate tuples into multisets (they give the same gradient).
    let mut out: Vec<(Vec<usize>, f64, Vec<f64>)> = Vec::new();
    for ((tu, p), g) in tuples.iter().zip(&law).zip(&grads) {
        let mut key = tu.clone();
        key.sort_unstable();
        match out.iter_mut().find(|(kk, _, _)| *kk == key) {
            Some(e) => e.1 += p,
            None => out.push((key, *p, g.clone())),
        }
    }
    out
}

fn check(n: usize, m: u32, seed: u64) {
    let (h, gamma) = (0.05, 10.0);
    let centers: Vec<Vec<f64>> = CENTERS.iter().map(|c| c.to_vec()).collect();
    let mut model = GaussianSum::from_rows(&centers).unwrap();
    let theta = [0.4, -0.3];
    let r = [0.7, -1.1];
    let law = exact_law(&mut model, &theta, &r, h, gamma, n, m);
    // Distinct multisets must have distinct gradients for the identification below.
    for (i, a) in law.iter().enumerate() {
        for b in &law[i + 1..] {
            let dist: f64 = a.2.iter().zip(&b.2).map(|(x, y)| (x - y).abs()).sum();
            assert!(dist > 1e-9);
        }
    }
    let settings = EwsgSettings::new(h, gamma)
        .unwrap()
        .with_batch(n)
        .unwrap()
        .with_index_chain(m);
    let mut work = vec![0.0; Ewsg::workspace_len(2)];
    let mut chain = Ewsg::new(settings, 2, 5, &theta, &mut work).unwrap();
    chain.state_mut().1.copy_from_slice(&r);
    let mut rng = chain_rng(seed, 0);
    let reps = 200_000u64;
    let mut counts = vec![0u64; law.len()];
    for _ in 0..reps {
        let rep = chain.select(&mut model, &mut rng).unwrap();
        assert_eq!(rep.grad_evals as usize, (m as usize + 1) * n);
        let g = chain.gradient();
        let (best, dist) = law
            .iter()
            .enumerate()
            .map(|(k, e)| {
                let d: f64 = e.2.iter().zip(g).map(|(x, y)| (x - y).abs()).sum();
                (k, d)
            })
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .unwrap();
        assert!(dist < 1e-9, "chosen gradient matches no minibatch");
        counts[best] += 1;
    }
    // `select` must not move the chain.
    assert_eq!(chain.theta(), &theta);
    let probs: Vec<f64> = law.iter().map(|e| e.1).collect();
    let (stat, df, p) = chi_square(&counts, &probs);
    assert!(
        p > ALPHA,
        "n = {n}, M = {m}: chi-square {stat:.1} on {df} df, p = {p:.2e}"
    );
    // Power: the law must differ from the uniform pick (SGHMC's) by a total-variation distance
    // the test can see (McDiarmid bound on the estimate; chi-square is stronger).
    if m > 0 {
        let base = exact_law(&mut model, &theta, &r, h, gamma, n, 0);
        let tv = probs
            .iter()
            .zip(&base)
            .map(|(a, b)| (a - b.1).abs())
            .sum::<f64>()
            / 2.0;
        let k = law.len() as f64;
        let detectable = 0.5 * ((k - 1.0) / reps as f64).sqrt()
            + ((1.0 / ALPHA).ln() / (2.0 * reps as f64)).sqrt();
        assert!(
            tv > 2.0 * detectable,
            "n = {n}, M = {m}: EWSG's law is only {tv:.4} from uniform (detectable {detectable:.4})"
        );
    }
}

#[test]
fn index_chain_law_single_terms() {
    for (m, seed) in [(1, 1), (2, 2), (5, 3)] {
        check(1, m, seed);
    }
}

#[test]
fn index_chain_law_minibatches() {
    for (m, seed) in [(1, 4), (3, 5)] {
        check(2, m, seed);
    }
}

#[test]
fn no_index_moves_is_uniform_sghmc() {
    check(1, 0, 6);
}
