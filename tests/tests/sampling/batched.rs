//! Batched DMALA on an RBM, a binary quadratic model and a logistic regression
//! (`sample --batch`): the exact-start protocol against the enumerated law, the runner's
//! independence of the thread and chain counts, and (RBM) its agreement in law with the
//! single-chain path.
//!
//! Each exact-start test holds its false-positive rate at `1e-6` (its checks share it equally,
//! each split between chi-square and TV); the agreement test at `1e-6`.

use langevin_core::binary::{BatchDmala, BatchTarget, Binary, FlipProposal};
use langevin_core::math::Fast;
use langevin_core::models::{LogisticBatch, QuadraticBatch, Rbm, RbmBatch};
use langevin_std::binary::{
    BinaryModel, Gemm, RunConfig, RunError, run_chains, run_chains_batched,
};
use langevin_std::run::Keep;
use langevin_std::samplers::Sampler;
use langevin_tests::discrete::{chi2_sf, run_batch};
use langevin_tests::{RbmData, check_sample, cumulative, draw_index, enumerate, index_of, state};
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Per-test false-positive rate.
const ALPHA: f64 = 1e-6;

/// A tiny RBM whose products all go through the SIMD library (every dimension above 5).
fn tiny() -> RbmData {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(404);
    RbmData::random(8, 6, 1.0, 0.5, 0.5, &mut rng)
}

fn transpose(d: &RbmData) -> Vec<f32> {
    let (v, h) = (d.b.len(), d.c.len());
    (0..v * h).map(|k| d.w[(k % h) * v + k / h]).collect()
}

/// Exact start: 1,000 batches of 100 chains, each chain's start drawn from π, then `k` batched
/// DMALA steps (with the product and pre-activations the command line uses); the 100,000 final
/// states must follow π.
#[test]
fn batched_dmala_keeps_the_rbm_law_from_an_exact_start() {
    let data = tiny();
    let wt = transpose(&data);
    let (v, h, n, batches): (usize, usize, usize, usize) = (8, 6, 100, 1000);
    let mut one = data.cache();
    let rbm = Rbm::new(&data.w, &data.b, &data.c, &mut one)
        .unwrap()
        .with_transpose(&wt)
        .unwrap();
    let pi = {
        let mut c = data.cache();
        enumerate(&mut Rbm::new(&data.w, &data.b, &data.c, &mut c).unwrap()).pi
    };
    // 40 steps pass a recomputation of the cached pre-activations (every 32 evaluations).
    for (t, steps) in [1usize, 40].into_iter().enumerate() {
        let (cache_len, index_len) = RbmBatch::incremental_f32_lengths(v, h, n);
        let (mut cache, mut sigma) = (vec![0.0f32; cache_len], vec![0.0f32; n * h]);
        let mut index = vec![0u32; index_len];
        let mut target = RbmBatch::<Gemm, Fast>::incremental_f32(
            &rbm, n, &mut cache, &mut index, &mut sigma, Gemm,
        )
        .unwrap();
        let counts = exact_start_counts(&mut target, &pi, steps, batches, 7000 + t as u64);
        assert_law(&format!("k={steps}"), &counts, &pi, ALPHA / 2.0);
    }
}

fn model() -> BinaryModel {
    let d = tiny();
    BinaryModel::rbm(d.w, d.b, d.c)
}

fn config(chains: usize, threads: usize, seed: u64) -> RunConfig {
    RunConfig {
        steps: 40,
        burn_in: 10,
        thin: 3,
        chains,
        seed,
        threads,
        first_chain: 0,
    }
}

/// Draws and log-densities of every chain, as bits.
fn bits(run: &langevin_std::binary::BinaryRun) -> Vec<Vec<u64>> {
    run.chains
        .iter()
        .map(|c| {
            let draws = c.draws.iter().map(|&v| u64::from(v));
            draws
                .chain(c.log_density.iter().map(|u| u.to_bits()))
                .collect()
        })
        .collect()
}

/// DMALA at step 0.8.
fn dmala() -> Sampler {
    Sampler::named("dmala", |p| p.step = 0.8).unwrap()
}

#[test]
fn batched_draws_do_not_depend_on_threads_or_chains() {
    let m = model();
    let run = |chains, threads| {
        bits(&run_chains_batched(&m, &dmala(), &config(chains, threads, 5), 4, None).unwrap())
    };
    let base = run(11, 1);
    assert_eq!(base.len(), 11);
    assert_eq!(base, run(11, 3), "threads");
    // Chain 8 is in a padded group of 3 (11 chains) or of 1 (9 chains), or a full one (12).
    assert_eq!(run(9, 2), base[..9].to_vec(), "chains");
    assert_eq!(run(12, 2)[..11].to_vec(), base, "chains");
    // DULA too; and a different batch size is a different run.
    let dula = Sampler::named("dula", |p| p.step = 0.3).unwrap();
    let d1 = run_chains_batched(&m, &dula, &config(6, 1, 5), 4, None).unwrap();
    let d2 = run_chains_batched(&m, &dula, &config(6, 2, 5), 4, None).unwrap();
    assert_eq!(bits(&d1), bits(&d2));
}

#[test]
fn batched_runner_refuses_what_it_cannot_batch() {
    let m = model();
    let gibbs = Sampler::named("gibbs", |_| {}).unwrap();
    assert!(matches!(
        run_chains_batched(&m, &gibbs, &config(2, 1, 0), 2, None),
        Err(RunError::NoBatchedPath { .. })
    ));
    assert!(matches!(
        run_chains_batched(&m, &dmala(), &config(2, 1, 0), 0, None),
        Err(RunError::Param(_))
    ));
    let ising = BinaryModel::IsingGraph {
        offsets: vec![0, 1, 2],
        neighbours: vec![1, 0],
        couplings: vec![0.5, 0.5],
        field: vec![0.0; 2],
    };
    assert!(matches!(
        run_chains_batched(&ising, &dmala(), &config(2, 1, 0), 2, None),
        Err(RunError::NoBatchedPath { .. })
    ));
}

/// The last state of 4,000 chains (40 steps from a uniform start) of the batched runner and
/// of the single-chain runner, on independent seeds: a two-sample chi-square test of
/// homogeneity over the 256 states (cells with fewer than 10 draws in both samples together
/// pooled) at level `ALPHA`.
#[test]
fn batched_and_single_chain_runs_agree_in_law() {
    let m = model();
    let mut c = config(4000, 0, 21);
    c.burn_in = 39;
    c.steps = 1;
    c.thin = 1;
    let single = run_chains(&m, &dmala(), &c, None, Keep::all()).unwrap();
    c.seed = 22;
    let batched = run_chains_batched(&m, &dmala(), &c, 100, None).unwrap();
    let histogram = |run: &langevin_std::binary::BinaryRun| {
        let mut h = vec![0u64; 256];
        for chain in &run.chains {
            h[index_of(&chain.draws)] += 1;
        }
        h
    };
    let (a, b) = (histogram(&single), histogram(&batched));
    let (na, nb) = (a.iter().sum::<u64>() as f64, b.iter().sum::<u64>() as f64);
    let (mut stat, mut cells, mut pool) = (0.0, 0usize, (0u64, 0u64));
    let mut add = |x: u64, y: u64| {
        let (x, y) = (x as f64, y as f64);
        let e = (x + y) / (na + nb);
        stat += (x - na * e).powi(2) / (na * e) + (y - nb * e).powi(2) / (nb * e);
    };
    for (&x, &y) in a.iter().zip(&b) {
        if x + y >= 10 {
            add(x, y);
            cells += 1;
        } else {
            pool = (pool.0 + x, pool.1 + y);
        }
    }
    if pool.0 + pool.1 > 0 {
        add(pool.0, pool.1);
        cells += 1;
    }
    let p = chi2_sf(stat, (cells - 1) as f64);
    assert!(
        p > ALPHA,
        "chi-square {stat:.1} on {} df: p = {p:.2e}",
        cells - 1
    );
}

// ---------------------------------------------------------------------------------------------
// The binary quadratic and logistic models
// ---------------------------------------------------------------------------------------------

/// A binary quadratic model of dimension 8 (`W` not symmetric) and a logistic regression of
/// 8 coefficients on 12 observations, both with enough mass spread over `{0,1}^8` to test.
fn quadratic_and_logistic() -> (BinaryModel, BinaryModel) {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(405);
    let mut uniform = |a: f32| (rng.next_u32() >> 8) as f32 / (1u32 << 24) as f32 * 2.0 * a - a;
    let d = 8;
    let w: Vec<f32> = (0..d * d).map(|_| uniform(0.4)).collect();
    let b: Vec<f32> = (0..d).map(|_| uniform(0.5)).collect();
    let x: Vec<f32> = (0..12 * d).map(|_| uniform(1.0)).collect();
    let y: Vec<f32> = (0..12).map(|_| f32::from(uniform(1.0) > 0.0)).collect();
    (
        BinaryModel::Quadratic { w, b },
        BinaryModel::Logistic { x, y },
    )
}

/// The law of a model over `{0,1}^d`, enumerated with its single-chain target.
fn law(model: &BinaryModel) -> Vec<f64> {
    let mut cache = vec![0.0; model.cache_len()];
    let mut target = model.target(&mut cache).unwrap();
    enumerate(&mut target).pi
}

/// Exact start: `batches` batches of the target's chains, each chain's start drawn from `pi`,
/// then `steps` batched DMALA steps (step 0.8); the counts of the final states.
fn exact_start_counts<T: BatchTarget>(
    target: &mut T,
    pi: &[f64],
    steps: usize,
    batches: usize,
    seed: u64,
) -> Vec<u64> {
    let (n, v) = (target.chains(), target.dim());
    let cdf = cumulative(pi);
    let kernel = BatchDmala::new(FlipProposal::<Fast>::with_math(0.8, 0.5).unwrap());
    let mut master = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut counts = vec![0u64; pi.len()];
    for _ in 0..batches {
        let x: Vec<u8> = (0..n)
            .flat_map(|_| state(draw_index(&cdf, &mut master), v))
            .collect();
        run_batch::<Binary, _, _, true>(&kernel, target, (x, v), &mut master, steps, |x| {
            counts[index_of(x)] += 1;
        });
    }
    counts
}

/// Asserts that `counts` pass [`check_sample`] against `pi` at level `alpha`.
fn assert_law(name: &str, counts: &[u64], pi: &[f64], alpha: f64) {
    check_sample(counts, pi, alpha).assert_passed(name);
}

/// Exact start on the binary quadratic model: 1,000 batches of 100 chains, 1 and 10 steps,
/// with both evaluations of [`QuadraticBatch`] (the incremental one, which the command line
/// uses, and the product through [`Gemm`]): four checks at `ALPHA / 4` each.
#[test]
fn batched_dmala_keeps_the_quadratic_law_from_an_exact_start() {
    let (model, _) = quadratic_and_logistic();
    let BinaryModel::Quadratic { w, b } = &model else {
        unreachable!()
    };
    let pi = law(&model);
    let (d, n) = (b.len(), 100);
    for (t, steps) in [1usize, 10].into_iter().enumerate() {
        let (mut wt, mut cache) = (vec![0.0f64; d * d], vec![0.0; 2 * n * (d + 1)]);
        let mut target = QuadraticBatch::<Gemm>::new(w, b, n, &mut wt, &mut cache).unwrap();
        let counts = exact_start_counts(&mut target, &pi, steps, 1000, 7100 + t as u64);
        assert_law(
            &format!("incremental, k={steps}"),
            &counts,
            &pi,
            ALPHA / 4.0,
        );
        let (mut s, mut work) = (vec![0.0f32; d * d], vec![0.0f32; n * d]);
        let mut target = QuadraticBatch::product(w, b, n, &mut s, &mut work, Gemm).unwrap();
        let counts = exact_start_counts(&mut target, &pi, steps, 1000, 7200 + t as u64);
        assert_law(&format!("product, k={steps}"), &counts, &pi, ALPHA / 4.0);
    }
}

/// Exact start on the logistic regression: 1,000 batches of 100 chains, 1 and 10 steps, the
/// gradients through [`Gemm`] as on the command line: two checks at `ALPHA / 2` each.
#[test]
fn batched_dmala_keeps_the_logistic_law_from_an_exact_start() {
    let (_, model) = quadratic_and_logistic();
    let BinaryModel::Logistic { x, y } = &model else {
        unreachable!()
    };
    let pi = law(&model);
    let (m, n) = (y.len(), 100);
    for (t, steps) in [1usize, 10].into_iter().enumerate() {
        let mut xt = vec![0.0f64; x.len()];
        let (mut cache, mut r) = (vec![0.0; 2 * n * m], vec![0.0f32; n * m]);
        let mut target = LogisticBatch::new(x, y, n, &mut xt, &mut cache, &mut r, Gemm).unwrap();
        let counts = exact_start_counts(&mut target, &pi, steps, 1000, 7300 + t as u64);
        assert_law(&format!("k={steps}"), &counts, &pi, ALPHA / 2.0);
    }
}

/// A chain's draws on the quadratic and logistic models depend neither on the thread count
/// nor on the number of chains; on the quadratic model (whose batched evaluation is the
/// single-chain one) they are those of the per-chain runner.
#[test]
fn quadratic_and_logistic_batched_draws_do_not_depend_on_threads_or_chains() {
    let (quadratic, logistic) = quadratic_and_logistic();
    for m in [&quadratic, &logistic] {
        let run = |chains, threads| {
            bits(&run_chains_batched(m, &dmala(), &config(chains, threads, 5), 4, None).unwrap())
        };
        let base = run(11, 1);
        assert_eq!(base.len(), 11);
        assert_eq!(base, run(11, 3), "{}: threads", m.kind());
        assert_eq!(run(9, 2), base[..9].to_vec(), "{}: chains", m.kind());
        assert_eq!(run(12, 2)[..11].to_vec(), base, "{}: chains", m.kind());
    }
    let single = run_chains(&quadratic, &dmala(), &config(11, 2, 5), None, Keep::all()).unwrap();
    let batched = run_chains_batched(&quadratic, &dmala(), &config(11, 2, 5), 4, None).unwrap();
    assert_eq!(bits(&single), bits(&batched));
}
