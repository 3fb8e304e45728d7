//! Batched ordinal DMALA on an ordinal quadratic model (`sample --batch` on a lattice
//! Gaussian): the exact-start protocol against the enumerated law (and its power against a
//! wrong `U`), the runner's equality with the per-chain runner whatever the thread and chain
//! counts, and its refusals.
//!
//! The exact-start test holds its false-positive rate at `1e-6` (its three checks share it
//! equally, each split between chi-square and TV).

use langevin_core::models::OrdinalQuadraticBatch;
use langevin_core::ordinal::{BatchTarget, OrdinalBatchDmala, OrdinalDomain, OrdinalProposal};
use langevin_std::labels::{
    LabelModel, LabelRun, LabelStart, OrdinalModel, run_label_chains, run_label_chains_batched,
};
use langevin_std::models::OrdinalQuadratic;
use langevin_std::run::Keep;
use langevin_std::run::{RunConfig, RunError};
use langevin_std::samplers::{Sampler, SamplerError};
use langevin_tests::discrete::{index_of, ordinal_law, run_batch, small_potts};
use langevin_tests::{SampleCheck, check_sample, cumulative, draw_index};
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// Per-test false-positive rate.
const ALPHA: f64 = 1e-6;

/// A rotated lattice Gaussian on `{0..4}³` (125 states), condition number 3.
fn small() -> OrdinalQuadratic {
    OrdinalQuadratic::rotated_gaussian(3, 5, 3.0, 1.2, 3).unwrap()
}

/// Exact start: `batches` batches of the target's chains, each chain's start drawn from `pi`
/// (over `{0..S−1}^d` in the order of `index_of`), then `steps` steps of `kernel`; the test of
/// the final states' counts against `pi` at level `alpha`.
fn exact_start<T: BatchTarget<OrdinalDomain>>(
    target: &mut T,
    kernel: &OrdinalBatchDmala<'_>,
    pi: &[f64],
    steps: usize,
    seed: u64,
    alpha: f64,
) -> SampleCheck {
    let (n, d, s) = (target.chains(), target.dim(), target.states());
    let cdf = cumulative(pi);
    let mut master = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut counts = vec![0u64; pi.len()];
    for _ in 0..1000 {
        let mut x: Vec<u16> = Vec::with_capacity(n * d);
        for _ in 0..n {
            let mut k = draw_index(&cdf, &mut master);
            for _ in 0..d {
                x.push((k % s) as u16);
                k /= s;
            }
        }
        run_batch::<OrdinalDomain, _, _, true>(kernel, target, (x, d), &mut master, steps, |x| {
            counts[index_of(x, s)] += 1;
        });
    }
    check_sample(&counts, pi, alpha)
}

/// Exact start on the lattice Gaussian: 1,000 batches of 100 chains, 1 and 10 steps of DMALA
/// (step 1), and 10 steps of windowed DMALA (step 4, window 1): three checks at `ALPHA / 3`.
/// The same protocol with a batched target of a wrong `U` (`b₀` off by 0.3) fails.
#[test]
fn batched_ordinal_dmala_keeps_the_law_from_an_exact_start() {
    let mut m = small();
    let (_, _, _, pi) = ordinal_law(&mut m);
    let (a, mu, b) = (m.matrix(), m.mean(), m.linear());
    let n = 100;
    let mut cache = vec![0.0; 2 * n * mu.len()];
    let mut target = OrdinalQuadraticBatch::new(a, mu, b, 5, n, &mut cache).unwrap();
    let plain = OrdinalBatchDmala::new(OrdinalProposal::new(1.0, 0.5).unwrap());
    let windowed =
        OrdinalBatchDmala::new(OrdinalProposal::new(4.0, 0.5).unwrap().windowed(1).unwrap());
    for (t, (name, kernel, steps)) in [
        ("k=1", &plain, 1),
        ("k=10", &plain, 10),
        ("window 1, k=10", &windowed, 10),
    ]
    .into_iter()
    .enumerate()
    {
        exact_start(
            &mut target,
            kernel,
            &pi,
            steps,
            8100 + t as u64,
            ALPHA / 3.0,
        )
        .assert_passed(name);
    }
    // The test can fail: a target whose U is off (b₀ shifted by 0.3) is caught.
    let mut wrong_b = b.to_vec();
    wrong_b[0] += 0.3;
    let mut cache = vec![0.0; 2 * n * mu.len()];
    let mut wrong = OrdinalQuadraticBatch::new(a, mu, &wrong_b, 5, n, &mut cache).unwrap();
    let check = exact_start(&mut wrong, &plain, &pi, 10, 8101, ALPHA / 3.0);
    assert!(!check.passed(), "a wrong U passed: {check:?}");
}

fn lattice() -> LabelModel {
    // d = 40: one block of 32 columns of the batched update, then 8 single columns.
    let m = OrdinalQuadratic::rotated_gaussian(40, 7, 4.0, 1.5, 9).unwrap();
    LabelModel::Ordinal(OrdinalModel::Quadratic(m))
}

fn config(chains: usize, threads: usize) -> RunConfig {
    RunConfig {
        steps: 40,
        burn_in: 10,
        thin: 3,
        chains,
        seed: 5,
        threads,
        first_chain: 0,
    }
}

/// Draws, log-densities and distance moved of every chain, as bits.
fn bits(run: &LabelRun) -> Vec<Vec<u64>> {
    run.chains
        .iter()
        .map(|c| {
            let draws = c.draws.iter().map(|&v| u64::from(v));
            let u = c.log_density.iter().map(|u| u.to_bits());
            draws.chain(u).chain([c.jump]).collect()
        })
        .collect()
}

/// The batched runner's draws are the per-chain runner's, bit for bit (its evaluation is the
/// single-chain one), for DMALA, windowed DMALA and DULA, whatever the thread count, the
/// number of chains and the batch size.
#[test]
fn batched_ordinal_draws_equal_the_per_chain_ones() {
    let m = lattice();
    for sampler in [
        Sampler::named("dmala", |p| p.step = 1.5).unwrap(),
        Sampler::named("dmala", |p| {
            (p.step, p.balance, p.window) = (3.0, 0.6, Some(2))
        })
        .unwrap(),
        Sampler::named("dula", |p| p.step = 0.5).unwrap(),
    ] {
        let name = sampler.name();
        let single = bits(
            &run_label_chains(
                &m,
                &sampler,
                &config(11, 2),
                &LabelStart::Uniform,
                None,
                Keep::all(),
            )
            .unwrap(),
        );
        assert_eq!(single.len(), 11);
        assert!(
            single
                .iter()
                .all(|c| c.last().is_some_and(|&jump| jump > 0)),
            "{name}: every chain must move"
        );
        let batched = |chains, threads, batch| {
            bits(
                &run_label_chains_batched(&m, &sampler, &config(chains, threads), batch, None)
                    .unwrap(),
            )
        };
        assert_eq!(batched(11, 1, 4), single, "{name}: batch 4");
        assert_eq!(batched(11, 3, 4), single, "{name}: threads");
        // Chain 8 is in a padded group of 3 (11 chains) or of 1 (9 chains), or a full one (12).
        assert_eq!(batched(9, 2, 4), single[..9].to_vec(), "{name}: chains");
        assert_eq!(batched(12, 2, 4)[..11].to_vec(), single, "{name}: chains");
        assert_eq!(batched(11, 2, 100), single, "{name}: batch 100");
    }
}

#[test]
fn batched_ordinal_runner_refuses_what_it_cannot_batch() {
    let m = lattice();
    let dmala = Sampler::named("dmala", |p| p.step = 1.0).unwrap();
    let gibbs = Sampler::named("gibbs", |_| {}).unwrap();
    let ab = Sampler::named("ab", |p| p.step = 1.0).unwrap();
    for sampler in [&gibbs, &ab] {
        assert!(matches!(
            run_label_chains_batched(&m, sampler, &config(2, 1), 2, None),
            Err(RunError::NoBatchedPath { .. })
        ));
    }
    assert!(matches!(
        run_label_chains_batched(&m, &dmala, &config(2, 1), 0, None),
        Err(RunError::Param(_))
    ));
    // A step the kernels refuse is refused before any run.
    assert!(matches!(
        Sampler::named("dmala", |p| p.step = f64::NAN),
        Err(SamplerError::Param { .. })
    ));
    let potts = LabelModel::Categorical(small_potts(3, 3));
    assert!(matches!(
        run_label_chains_batched(&potts, &dmala, &config(2, 1), 2, None),
        Err(RunError::NoBatchedPath { .. })
    ));
}
