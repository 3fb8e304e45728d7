//! Discrete samplers side by side.
//!
//! * `ordinal_step`: the ordinal balanced proposal (draw + reverse `log q`) and a full DMALA
//!   step on rotated lattice Gaussians with `S = 21`, `d ∈ {50, 100}`, with and without a
//!   window; and on a rotated lattice Gaussian with `S = 5`, `d = 256`, per chain-step, DMALA
//!   chain by chain (`dmala_step/…/S5`) against 100 chains stepped together by
//!   `OrdinalBatchDmala` over `OrdinalQuadraticBatch` (`batched_dmala/…/S5`, as
//!   `sample --batch 100`), at step 0.08 (about one change per step) and 0.5 (nearly all);
//! * `categorical_step`: the categorical proposal and a full DMALA, GWG, PAS (paths of 2 moves),
//!   DLMC (Euler, τ = 0.5) and Gibbs step on a
//!   10 × 10 Potts lattice, `S ∈ {4, 16, 64, 256}`;
//! * `ising_step`: Gibbs-1 (one site and one sweep), GWG-1, DMALA, tuned AB, PAS (paths of 3
//!   flips), DLMC (τ = 0.3, both solvers) and acceptance-targeting DMALA (`dmala_adapt_step`
//!   frozen after 2,000 tuning steps, `dmala_adapt_tuning_step` while tuning, with its flip mass
//!   `Z(x)`) per step, and replica exchange (`pt_dmala_sweep_r4`: one sweep of four replicas,
//!   frozen) on the
//!   20 × 20 critical Ising lattice (J = 0.4407, h = 0, periodic) and a 400-node
//!   Barabási–Albert Ising graph (4 edges per new node, J = 0.4407, h = 0);
//! * after the criterion groups, an **ESS per second** table for the same samplers and models
//!   (skipped when `LANGEVIN_BENCH_SKIP_ESS` is set).
//!
//! # ESS definition
//!
//! For each sampler, 4 chains start from independent uniform random states; the tuned samplers
//! first spend their tuning budget (DMALA: step tuned by the jump-distance rule at `b = ½`; AB:
//! step and balance by the same rule), then every sampler runs `T` kept steps (a Gibbs-1 step
//! is one systematic sweep of `d` single-site updates; the others one proposal). Two scalar
//! statistics are recorded after every kept step: the Hamming distance to one fixed uniform
//! random reference state (the DISCS convention) and the magnetisation `Σ s_i`. The ESS of a
//! series is Geyer's initial-monotone-sequence estimate (autocovariances with divisor `n`,
//! summed in positive, non-increasing pairs); the table reports the sum over the 4 chains, and
//! ESS/s divides it by the wall time of the kept steps of all 4 chains (tuning excluded). The
//! last columns give ESS per 10⁴ proposals with every Gibbs-1 *site update* counted as one
//! proposal, the unit of the papers' per-step comparisons. `LANGEVIN_BENCH_ESS_STEPS` sets `T`
//! (default 20 000).

mod common;

use common::{BinBuf, ChainVecs, ess};
use criterion::{BenchmarkId, Criterion, Throughput};
use langevin_core::BinaryTarget;
use langevin_core::Kernel;
use langevin_core::baselines::{
    Balancing, BlockGibbs, Gibbs, Gwg, HammingBall, LocallyBalanced, Scan, ball_size,
};
use langevin_core::binary::{BinaryChain, Dmala, FlipProposal};
use langevin_core::categorical::{CategoricalProposal, Dmala as CatDmala};
use langevin_core::dlmc::{CategoricalDlmcProposal, DlmcProposal, Solver};
use langevin_core::models::{Dims, IsingGraph, IsingLattice};
use langevin_core::ordinal::{CategoricalChain, Dmala as OrdDmala, OrdinalChain, OrdinalProposal};
use langevin_core::path_auxiliary::{PathAuxiliary, PathBuffers};
use langevin_core::random::unit_f64;
use langevin_core::tempering::{LadderSettings, ReplicaScratch, Replicas};
use langevin_core::tuning::{AbSettings, AbTuner, AcceptanceSettings, AcceptanceTuner};
use langevin_std::models::{OrdinalQuadratic, Potts};
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::hint::black_box;
use std::time::{Duration, Instant};

fn random_bits(d: usize, rng: &mut Xoshiro256PlusPlus) -> Vec<u8> {
    (0..d).map(|_| (rng.next_u32() & 1) as u8).collect()
}

fn random_labels(d: usize, s: usize, rng: &mut Xoshiro256PlusPlus) -> Vec<u16> {
    (0..d).map(|_| (unit_f64(rng) * s as f64) as u16).collect()
}

fn ordinal(c: &mut Criterion) {
    let mut group = c.benchmark_group("ordinal_step");
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
    for (d, s) in [(100usize, 21usize), (50, 21)] {
        let mut model = OrdinalQuadratic::rotated_gaussian(d, s, 10.0, 3.0, 7).unwrap();
        let x0 = random_labels(d, s, &mut rng);
        let mut buf = ChainVecs::labels(&x0, s, d);
        let mut chain = OrdinalChain::new_ordinal(buf.buffers(), &mut model).unwrap();
        let grad = chain.grad().to_vec();
        group.throughput(Throughput::Elements(d as u64));
        for (name, prop) in [
            ("full", OrdinalProposal::new(3.0, 0.7).unwrap()),
            (
                "window3",
                OrdinalProposal::new(3.0, 0.7).unwrap().windowed(3).unwrap(),
            ),
        ] {
            let mut y = vec![0u16; d];
            let mut changed = vec![0u32; d];
            group.bench_function(
                BenchmarkId::new(format!("propose+log_q/{name}/S{s}"), d),
                |b| {
                    b.iter(|| {
                        let drawn = prop
                            .propose(&x0, &grad, s, &mut y, &mut changed, &mut rng)
                            .unwrap();
                        black_box(prop.log_q(&y, &grad, s, &x0).unwrap() + drawn.log_q)
                    })
                },
            );
            let kernel = OrdDmala::new(prop);
            group.bench_function(
                BenchmarkId::new(format!("dmala_step/{name}/S{s}"), d),
                |b| b.iter(|| black_box(kernel.step(&mut model, &mut chain, &mut rng).unwrap())),
            );
        }
    }
    ordinal_batched(&mut group);
    group.finish();
}

/// Per chain-step: 100 chains of a rotated lattice Gaussian (`d = 256`, `S = 5`) stepped one by
/// one, and stepped together by batched DMALA.
fn ordinal_batched(group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>) {
    use langevin_core::models::OrdinalQuadraticBatch;
    use langevin_core::ordinal::{OrdinalBatch, OrdinalBatchDmala, OrdinalDomain};
    use langevin_std::run::BatchVecs;
    let (d, s, n) = (256usize, 5usize, 100usize);
    let model = OrdinalQuadratic::rotated_gaussian(d, s, 10.0, 3.0, 7).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(2);
    let x0: Vec<u16> = (0..n).flat_map(|_| random_labels(d, s, &mut rng)).collect();
    group.throughput(Throughput::Elements(d as u64));
    for step in [0.08, 0.5] {
        let prop = OrdinalProposal::new(step, 0.5).unwrap();
        let mut models = vec![model.clone(); n];
        let mut bufs: Vec<_> = x0.chunks(d).map(|x| ChainVecs::labels(x, s, d)).collect();
        let mut chains: Vec<_> = bufs
            .iter_mut()
            .zip(models.iter_mut())
            .map(|(b, m)| OrdinalChain::new_ordinal(b.buffers(), m).unwrap())
            .collect();
        let mut rngs: Vec<_> = (0..n as u64)
            .map(Xoshiro256PlusPlus::seed_from_u64)
            .collect();
        let kernel = OrdDmala::new(prop);
        group.bench_function(
            BenchmarkId::new(format!("dmala_step/a{step}/S{s}"), d),
            |b| {
                b.iter_custom(|iters| {
                    let start = std::time::Instant::now();
                    for t in 0..iters as usize {
                        let c = t % n;
                        black_box(
                            kernel
                                .step(&mut models[c], &mut chains[c], &mut rngs[c])
                                .unwrap(),
                        );
                    }
                    start.elapsed()
                })
            },
        );
        let (a, mu, bv) = (model.matrix(), model.mean(), model.linear());
        let mut cache = vec![0.0f64; 2 * n * d];
        let mut target = OrdinalQuadraticBatch::new(a, mu, bv, s, n, &mut cache).unwrap();
        let mut vecs = BatchVecs::<OrdinalDomain>::new(x0.clone(), d);
        let mut batch = OrdinalBatch::new(vecs.buffers(), &mut target).unwrap();
        let kernel = OrdinalBatchDmala::new(prop);
        let mut reports = vec![langevin_core::StepReport::default(); n];
        group.bench_function(
            BenchmarkId::new(format!("batched_dmala/a{step}/S{s}"), d),
            |b| {
                b.iter_custom(|iters| {
                    // Time per chain-step: the batched steps cover `batches · n` of them.
                    let batches = iters.div_ceil(n as u64);
                    let start = std::time::Instant::now();
                    for _ in 0..batches {
                        kernel
                            .step(&mut target, &mut batch, &mut rngs, &mut reports)
                            .unwrap();
                    }
                    start
                        .elapsed()
                        .mul_f64(iters as f64 / (batches * n as u64) as f64)
                })
            },
        );
    }
}

fn categorical(c: &mut Criterion) {
    let mut group = c.benchmark_group("categorical_step");
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(2);
    let d = 100usize;
    for s in [4usize, 16, 64, 256] {
        let mut model = Potts::lattice(10, 10, s, 0.5).unwrap();
        let x0 = random_labels(d, s, &mut rng);
        let mut buf = ChainVecs::labels(&x0, s, d * s);
        let mut chain = CategoricalChain::new_categorical(buf.buffers(), &mut model).unwrap();
        let grad = chain.grad().to_vec();
        let prop = CategoricalProposal::new(1.0, 0.6).unwrap();
        let mut y = vec![0u16; d];
        let mut changed = vec![0u32; d];
        let mut scratch = vec![0.0f64; s];
        group.throughput(Throughput::Elements((d * s) as u64));
        group.bench_function(BenchmarkId::new("propose+log_q", s), |b| {
            b.iter(|| {
                let drawn = prop
                    .propose(&x0, &grad, s, &mut y, &mut changed, &mut scratch, &mut rng)
                    .unwrap();
                black_box(prop.log_q(&y, &grad, s, &x0).unwrap() + drawn.log_q)
            })
        });
        let kernel = CatDmala::new(prop);
        group.bench_function(BenchmarkId::new("dmala_step", s), |b| {
            b.iter(|| black_box(kernel.step(&mut model, &mut chain, &mut rng).unwrap()))
        });
        group.bench_function(BenchmarkId::new("gwg_step", s), |b| {
            b.iter(|| black_box(Kernel::step(&mut Gwg, &mut model, &mut chain, &mut rng).unwrap()))
        });
        let (mut weights, mut path) = (vec![0.0f64; d * s], [0u32; 2]);
        let buffers = PathBuffers {
            weights: &mut weights,
            path: &mut path,
        };
        let mut pas = PathAuxiliary::new(2)
            .unwrap()
            .with_buffers(buffers)
            .unwrap();
        group.bench_function(BenchmarkId::new("pas_step/L2", s), |b| {
            b.iter(|| black_box(Kernel::step(&mut pas, &mut model, &mut chain, &mut rng).unwrap()))
        });
        let dlmc = langevin_core::kernel::Dmala::new(CategoricalDlmcProposal::new(0.5).unwrap());
        group.bench_function(BenchmarkId::new("dlmc_step/euler", s), |b| {
            b.iter(|| black_box(dlmc.step(&mut model, &mut chain, &mut rng).unwrap()))
        });
        let mut x = x0.clone();
        langevin_core::categorical::CategoricalTarget::log_density_and_grad(
            &mut model,
            &x,
            &mut vec![0.0; d * s],
        )
        .unwrap();
        let mut gibbs = Gibbs::new(Scan::Systematic);
        group.bench_function(BenchmarkId::new("gibbs_sweep", s), |b| {
            b.iter(|| {
                black_box(
                    gibbs
                        .sweep_categorical(&mut model, &mut x, &mut scratch, &mut rng)
                        .unwrap(),
                )
            })
        });
    }
    group.finish();
}

/// A Barabási–Albert graph: a 5-clique, then every new node attaches to 4 distinct earlier
/// nodes drawn with probability proportional to their degree; in the compressed adjacency form
/// of `IsingGraph`, every edge listed from both ends.
struct BaGraph {
    offsets: Vec<u32>,
    neighbours: Vec<u32>,
    couplings: Vec<f32>,
    field: Vec<f32>,
}

impl BaGraph {
    fn new(n: usize, m: usize, coupling: f32, seed: u64) -> Self {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut edges: Vec<(usize, usize)> = Vec::new();
        let mut ends: Vec<usize> = Vec::new();
        for i in 0..=m {
            for j in 0..i {
                edges.push((i, j));
                ends.extend([i, j]);
            }
        }
        for v in (m + 1)..n {
            let mut targets: Vec<usize> = Vec::with_capacity(m);
            while targets.len() < m {
                let t = ends[langevin_core::random::index(&mut rng, ends.len())];
                if !targets.contains(&t) {
                    targets.push(t);
                }
            }
            for t in targets {
                edges.push((v, t));
                ends.extend([v, t]);
            }
        }
        let mut adjacency = vec![Vec::new(); n];
        for &(a, b) in &edges {
            adjacency[a].push(b as u32);
            adjacency[b].push(a as u32);
        }
        let mut offsets = vec![0u32];
        let mut neighbours = Vec::new();
        for list in &adjacency {
            neighbours.extend(list);
            offsets.push(neighbours.len() as u32);
        }
        let couplings = vec![coupling; neighbours.len()];
        Self {
            offsets,
            neighbours,
            couplings,
            field: vec![0.0; n],
        }
    }

    fn model(&self) -> IsingGraph<'_> {
        IsingGraph::new(
            &self.offsets,
            &self.neighbours,
            &self.couplings,
            &self.field,
        )
        .unwrap()
    }
}

const J_CRITICAL: f32 = 0.4407;

fn lattice() -> IsingLattice<Dims> {
    IsingLattice::with_dims(Dims { rows: 20, cols: 20 }, J_CRITICAL, 0.0, true).unwrap()
}

/// Tunes an AB sampler (or DMALA, `balance = false`) on `model` from `x0`; returns the frozen
/// tuner and the state reached.
fn tune<T: BinaryTarget>(
    model: &mut T,
    x0: Vec<u8>,
    balance: bool,
    seed: u64,
) -> (AbTuner, Vec<u8>) {
    let mut settings = AbSettings::default();
    settings.budget = 6_000;
    settings.tune_balance = balance;
    let mut ab = AbTuner::new(settings).unwrap();
    let mut buf = BinBuf::new(&x0);
    let mut chain = BinaryChain::new(buf.buffers(), model).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    while !ab.is_frozen() {
        Kernel::step(&mut ab, model, &mut chain, &mut rng).unwrap();
    }
    let x = chain.state().to_vec();
    (ab, x)
}

fn ising_group<T: BinaryTarget + langevin_core::baselines::FlipDelta>(
    c: &mut Criterion,
    name: &str,
    model: &mut T,
) {
    let mut group = c.benchmark_group(format!("ising_step/{name}"));
    let d = model.dim();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
    let x0 = random_bits(d, &mut rng);
    let (dmala_tuned, _) = tune(model, x0.clone(), false, 4);
    let (ab_tuned, _) = tune(model, x0.clone(), true, 5);
    let mut buf = BinBuf::new(&x0);
    let mut chain = BinaryChain::new(buf.buffers(), model).unwrap();
    let mut x = x0.clone();
    model.log_density_and_grad(&x, &mut vec![0.0; d]).unwrap();
    let mut gibbs = Gibbs::new(Scan::Systematic);
    group.bench_function("gibbs_site", |b| {
        b.iter(|| black_box(gibbs.update_binary(model, &mut x, &mut rng).unwrap()))
    });
    group.throughput(Throughput::Elements(d as u64));
    group.bench_function("gibbs_sweep", |b| {
        b.iter(|| black_box(gibbs.sweep_binary(model, &mut x, &mut rng).unwrap()))
    });
    group.bench_function("gwg_step", |b| {
        b.iter(|| black_box(Kernel::step(&mut Gwg, model, &mut chain, &mut rng).unwrap()))
    });
    let r = dmala_tuned.report();
    let dmala = Dmala::new(FlipProposal::new(r.step, r.balance).unwrap());
    group.bench_function("dmala_step", |b| {
        b.iter(|| black_box(dmala.step(model, &mut chain, &mut rng).unwrap()))
    });
    let mut ab = ab_tuned;
    group.bench_function("ab_step", |b| {
        b.iter(|| black_box(Kernel::step(&mut ab, model, &mut chain, &mut rng).unwrap()))
    });
    let mut settings = AcceptanceSettings::default();
    settings.budget = 2_000;
    let mut adapt = AcceptanceTuner::new(settings).unwrap();
    while !adapt.is_frozen() {
        Kernel::step(&mut adapt, model, &mut chain, &mut rng).unwrap();
    }
    group.bench_function("dmala_adapt_step", |b| {
        b.iter(|| black_box(Kernel::step(&mut adapt, model, &mut chain, &mut rng).unwrap()))
    });
    settings.budget = u64::MAX;
    let mut tuning = AcceptanceTuner::new(settings).unwrap();
    group.bench_function("dmala_adapt_tuning_step", |b| {
        b.iter(|| black_box(Kernel::step(&mut tuning, model, &mut chain, &mut rng).unwrap()))
    });
    // Replica exchange, four replicas, ladder and steps adapted for 500 sweeps: one sweep.
    const R: usize = 4;
    let mut bufs: Vec<BinBuf> = (0..R).map(|_| BinBuf::new(&x0)).collect();
    let mut chains: Vec<BinaryChain<'_>> = bufs
        .iter_mut()
        .map(|b| BinaryChain::new(b.buffers(), model).unwrap())
        .collect();
    let mut scratch = ReplicaScratch::<R>::new();
    let buffers = scratch.buffers(&mut chains);
    let mut ladder = LadderSettings::default();
    ladder.budget = 500;
    let mut replicas = Replicas::new(buffers, ladder, model).unwrap();
    while !replicas.is_frozen() {
        replicas.sweep(model, &mut rng).unwrap();
    }
    group.bench_function("pt_dmala_sweep_r4", |b| {
        b.iter(|| black_box(replicas.sweep(model, &mut rng).unwrap()))
    });
    let mut lb = LocallyBalanced::new(Balancing::Sqrt, vec![0.0; d]);
    group.bench_function("lb_step", |b| {
        b.iter(|| black_box(Kernel::step(&mut lb, model, &mut chain, &mut rng).unwrap()))
    });
    let mut hb = HammingBall::new(1, 10, vec![0.0; ball_size(10, 1)]).unwrap();
    group.bench_function("hamming_ball_step_r1_k10", |b| {
        b.iter(|| black_box(Kernel::step(&mut hb, model, &mut chain, &mut rng).unwrap()))
    });
    let (mut weights, mut path) = (vec![0.0f64; d], [0u32; 3]);
    let buffers = PathBuffers {
        weights: &mut weights,
        path: &mut path,
    };
    let mut pas = PathAuxiliary::new(3)
        .unwrap()
        .with_buffers(buffers)
        .unwrap();
    group.bench_function("pas_step/L3", |b| {
        b.iter(|| black_box(Kernel::step(&mut pas, model, &mut chain, &mut rng).unwrap()))
    });
    for (name, solver) in [
        ("interpolate", Solver::Interpolate),
        ("euler", Solver::Euler),
    ] {
        let dlmc = langevin_core::kernel::Dmala::new(DlmcProposal::new(solver, 0.3).unwrap());
        group.bench_function(format!("dlmc_step/{name}"), |b| {
            b.iter(|| black_box(dlmc.step(model, &mut chain, &mut rng).unwrap()))
        });
    }
    group.finish();
}

/// The locally balanced proposal on categorical chains, and block Gibbs on an RBM.
fn local_moves(c: &mut Criterion) {
    let mut group = c.benchmark_group("categorical_step");
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(6);
    let d = 100usize;
    for s in [4usize, 16] {
        let mut model = Potts::lattice(10, 10, s, 0.5).unwrap();
        let x0 = random_labels(d, s, &mut rng);
        let mut buf = ChainVecs::labels(&x0, s, d * s);
        let mut chain = CategoricalChain::new_categorical(buf.buffers(), &mut model).unwrap();
        let mut lb = LocallyBalanced::new(Balancing::Sqrt, vec![0.0; d * s]);
        group.bench_function(BenchmarkId::new("lb_step", s), |b| {
            b.iter(|| black_box(Kernel::step(&mut lb, &mut model, &mut chain, &mut rng).unwrap()))
        });
    }
    group.finish();
    let mut group = c.benchmark_group("rbm_block_gibbs");
    for (v, h) in [(100usize, 50usize), (784, 200)] {
        let w: Vec<f32> = (0..v * h)
            .map(|k| ((k * 7919 % 200) as f32 - 100.0) * 0.002)
            .collect();
        let (b, cb) = (vec![0.01f32; v], vec![-0.02f32; h]);
        let mut cache = vec![0.0f64; 2 * h];
        let rbm = langevin_core::models::Rbm::new(&w, &b, &cb, &mut cache).unwrap();
        let mut x = random_bits(v, &mut rng);
        let mut hidden = vec![0u8; h];
        group.throughput(Throughput::Elements((v * h) as u64));
        group.bench_function(BenchmarkId::new("sweep", format!("{v}x{h}")), |bench| {
            bench
                .iter(|| black_box(BlockGibbs::sweep(&rbm, &mut x, &mut hidden, &mut rng).unwrap()))
        });
    }
    group.finish();
}

fn ising(c: &mut Criterion) {
    let mut lat = lattice();
    ising_group(c, "lattice20x20", &mut lat);
    let graph = BaGraph::new(400, 4, J_CRITICAL, 11);
    let mut ba = graph.model();
    ising_group(c, "ba400", &mut ba);
}

#[derive(Default)]
struct Row {
    ess_hamming: f64,
    ess_magnet: f64,
    seconds: f64,
    steps: u64,
    accepted: u64,
}

fn record(x: &[u8], reference: &[u8], h: &mut Vec<f64>, m: &mut Vec<f64>) {
    h.push(x.iter().zip(reference).filter(|(a, b)| a != b).count() as f64);
    m.push(x.iter().map(|&v| 2.0 * f64::from(v) - 1.0).sum());
}

/// Runs one sampler's 4 chains for `t` kept steps each.
fn ess_row<T: BinaryTarget + langevin_core::baselines::FlipDelta>(
    model: &mut T,
    sampler: &str,
    t: usize,
) -> (Row, String) {
    let d = model.dim();
    let mut row = Row::default();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(99);
    let reference = random_bits(d, &mut rng);
    let mut params = String::new();
    for chain_id in 0..4u64 {
        let x0 = random_bits(d, &mut rng);
        let mut hs = Vec::with_capacity(t);
        let mut ms = Vec::with_capacity(t);
        let mut srng = Xoshiro256PlusPlus::seed_from_u64(1000 + chain_id);
        let elapsed: Duration;
        match sampler {
            "gibbs" => {
                let mut x = x0;
                model.log_density_and_grad(&x, &mut vec![0.0; d]).unwrap();
                let mut g = Gibbs::new(Scan::Systematic);
                // Burn-in of the same length as the others' tuning.
                for _ in 0..(6_000 / d).max(20) {
                    g.sweep_binary(model, &mut x, &mut srng).unwrap();
                }
                let start = Instant::now();
                for _ in 0..t {
                    row.accepted += u64::from(g.sweep_binary(model, &mut x, &mut srng).unwrap());
                    record(&x, &reference, &mut hs, &mut ms);
                }
                elapsed = start.elapsed();
                params = "systematic sweep".into();
            }
            "gwg" => {
                let mut buf = BinBuf::new(&x0);
                let mut chain = BinaryChain::new(buf.buffers(), model).unwrap();
                for _ in 0..6_000 {
                    Kernel::step(&mut Gwg, model, &mut chain, &mut srng).unwrap();
                }
                let start = Instant::now();
                for _ in 0..t {
                    let r = Kernel::step(&mut Gwg, model, &mut chain, &mut srng).unwrap();
                    row.accepted += u64::from(r.accepted);
                    record(chain.state(), &reference, &mut hs, &mut ms);
                }
                elapsed = start.elapsed();
                params = "-".into();
            }
            _ => {
                let (mut ab, x) = tune(model, x0, sampler == "ab", 2000 + chain_id);
                let mut buf = BinBuf::new(&x);
                let mut chain = BinaryChain::new(buf.buffers(), model).unwrap();
                let start = Instant::now();
                for _ in 0..t {
                    let r = Kernel::step(&mut ab, model, &mut chain, &mut srng).unwrap();
                    row.accepted += u64::from(r.accepted);
                    record(chain.state(), &reference, &mut hs, &mut ms);
                }
                elapsed = start.elapsed();
                let r = ab.report();
                params = format!("a={:.3} b={:.3}", r.step, r.balance);
            }
        }
        row.seconds += elapsed.as_secs_f64();
        row.steps += t as u64;
        row.ess_hamming += ess(&hs);
        row.ess_magnet += ess(&ms);
    }
    (row, params)
}

fn ess_report() {
    let t = std::env::var("LANGEVIN_BENCH_ESS_STEPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000usize);
    println!("\nESS per second ({t} kept steps x 4 chains; Gibbs-1 step = one sweep of d sites)");
    println!(
        "ESS/1e4: per 10^4 proposals, counting every Gibbs-1 site update as one (the papers' unit)"
    );
    println!(
        "{:<14} {:<6} {:>9} {:>8} {:>9} {:>9} {:>10} {:>10} {:>9} {:>9}  params",
        "model",
        "kernel",
        "steps/s",
        "accept",
        "ESS(ham)",
        "ESS(mag)",
        "ESS/s(ham)",
        "ESS/s(mag)",
        "/1e4(ham)",
        "/1e4(mag)"
    );
    let mut lat = lattice();
    let graph = BaGraph::new(400, 4, J_CRITICAL, 11);
    let mut ba = graph.model();
    for (name, which) in [("lattice20x20", 0), ("ba400", 1)] {
        let mut gibbs_rate = (0.0, 0.0);
        for sampler in ["gibbs", "gwg", "dmala", "ab"] {
            let (row, params) = if which == 0 {
                ess_row(&mut lat, sampler, t)
            } else {
                ess_row(&mut ba, sampler, t)
            };
            let rate = (row.ess_hamming / row.seconds, row.ess_magnet / row.seconds);
            if sampler == "gibbs" {
                gibbs_rate = rate;
            }
            let proposals = if sampler == "gibbs" {
                row.steps as f64 * 400.0
            } else {
                row.steps as f64
            };
            let accept = row.accepted as f64 / proposals;
            println!(
                "{:<14} {:<6} {:>9.0} {:>8.3} {:>9.0} {:>9.0} {:>10.0} {:>10.1} {:>9.1} {:>9.2}  {} (ESS/s x{:.2} / x{:.2} Gibbs)",
                name,
                sampler,
                row.steps as f64 / row.seconds,
                accept,
                row.ess_hamming,
                row.ess_magnet,
                rate.0,
                rate.1,
                1e4 * row.ess_hamming / proposals,
                1e4 * row.ess_magnet / proposals,
                params,
                rate.0 / gibbs_rate.0,
                rate.1 / gibbs_rate.1,
            );
        }
    }
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    ordinal(&mut c);
    categorical(&mut c);
    ising(&mut c);
    local_moves(&mut c);
    c.final_summary();
    if std::env::var_os("LANGEVIN_BENCH_SKIP_ESS").is_none() {
        ess_report();
    }
}
