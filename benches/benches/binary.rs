//! Per-step time of the binary kernels: DULA and DMALA on the lattice Ising model and an RBM,
//! `Libm` against `Fast` math, the generic kernels against the specialised lattice kernels.
//!
//! Groups: `ising_{5x5,20x20,100x100}` (periodic, `J = 0.4407`, `h = 0`, step 0.2) with
//! `{dula,dmala}/generic-{libm,fast}` (the generic kernels), `{dula,dmala}/lattice` (the
//! tabulated lattice kernels, which evaluate no `exp` or `ln`, so have no math variant) and
//! `rng-only/lattice` (the `⌈d/4⌉` Xoshiro256++ words a lattice step draws, alone);
//! `rbm_784x500` (one chain) and `rbm_784x500_100chains` (100 independent chains stepped
//! round-robin) with `{dula,dmala}/{generic,generic+wt}-{libm,fast}`, `+wt` being the model
//! with its transposed weights attached, and `batched/{portable,gemm}-fast` (the 100 chains
//! stepped in lockstep by `BatchDmala` over `RbmBatch`: the core's portable product with the
//! cached pre-activations, and the SIMD product with recomputed ones, as `sample --batch 100`
//! runs them; one iteration is still one chain-step).
//!
//! Every benchmark times one chain-step per iteration and declares `d` elements of throughput,
//! so criterion's time is ns per step and its element rate gives ns per coordinate-step. Each
//! chain is burnt in first (in the setup, which runs only when the benchmark is selected) and
//! its mean proposed flips and acceptance over the burn-in are printed to stderr.
//!
//! `cargo bench --bench binary -- --warm-up-time 1 --measurement-time 3`

mod common;

use common::random_buffers;
use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main};
use langevin_core::BinaryTarget;
use langevin_core::binary::{
    BinaryChain, Dmala, Dula, FlipProposal, LatticeClasses, LatticeDmala, LatticeDula,
    LatticeProposal, PortablePasses, StepReport,
};
use langevin_core::math::{Fast, FlipMath, Libm};
use langevin_core::models::{ConstDims, IsingLattice, Rbm};
use langevin_core::{Binary, Kernel};
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Critical coupling of the square lattice, `ln(1 + √2) / 2`.
const J_CRITICAL: f32 = 0.4407;
/// One step for both lattice kernels: Zhang, Liu & Liu (2022) runs DULA at 0.2 on lattices; DMALA at 0.2
/// accepts about half its proposals on the 20×20 critical lattice.
const LATTICE_STEP: f64 = 0.2;
/// A wider step for the 20×20 lattice: about 71 proposed flips a step.
const LATTICE_STEP_WIDE: f64 = 0.4;
/// Step sizes of Zhang, Liu & Liu (2022)'s RBM experiments.
const RBM_STEP_DULA: f64 = 0.1;
const RBM_STEP_DMALA: f64 = 0.2;
const RBM_VISIBLE: usize = 784;
const RBM_HIDDEN: usize = 500;
const RBM_CHAINS: usize = 100;

type Group<'a> = BenchmarkGroup<'a, WallTime>;

/// A chain started at a random state with its model, both leaked (a bench process is short).
fn start<T: BinaryTarget>(
    model: T,
    seed: u64,
) -> (&'static mut T, BinaryChain<'static>, Xoshiro256PlusPlus) {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let model = Box::leak(Box::new(model));
    let bufs = Box::leak(Box::new(random_buffers(model.dim(), &mut rng)));
    let chain = BinaryChain::new(bufs.buffers(), model).expect("chain");
    (model, chain, rng)
}

/// Runs `burn` steps and prints the mean proposed flips and acceptance.
fn burn_in(id: &str, burn: usize, mut step: impl FnMut() -> StepReport) {
    let (mut flips, mut accepted) = (0u64, 0u64);
    for _ in 0..burn {
        let r = step();
        flips += u64::from(r.proposed_flips);
        accepted += u64::from(r.accepted);
    }
    eprintln!(
        "{id}: {:.2} flips/step proposed, acceptance {:.3} (over {burn} burn-in steps)",
        flips as f64 / burn as f64,
        accepted as f64 / burn as f64
    );
}

/// Times `step` after a setup that runs once, and only if the benchmark is selected.
fn bench_lazy<S>(
    group: &mut Group<'_>,
    id: &str,
    setup: impl FnOnce() -> S,
    mut step: impl FnMut(&mut S) -> StepReport,
) {
    let mut setup = Some(setup);
    let mut state = None;
    group.bench_function(id, |b| {
        let s = state.get_or_insert_with(|| (setup.take().expect("setup runs once"))());
        b.iter(|| black_box(step(s)))
    });
}

/// A chain of `model` driven by a generic kernel.
fn generic<T, K>(
    group: &mut Group<'_>,
    id: &str,
    model: impl FnOnce() -> T,
    mut kernel: K,
    burn: usize,
) where
    T: BinaryTarget + 'static,
    K: Kernel<Binary>,
{
    let setup = || {
        let (model, mut chain, mut rng) = start(model(), 7);
        burn_in(id, burn, || {
            kernel.step(model, &mut chain, &mut rng).expect("step")
        });
        (model, chain, rng, kernel)
    };
    bench_lazy(group, id, setup, |(model, chain, rng, kernel)| {
        kernel.step(*model, chain, rng).expect("step")
    });
}

fn lattice_case<const R: usize, const C: usize>(c: &mut Criterion, burn: usize) {
    let d = R * C;
    let mut group = c.benchmark_group(format!("ising_{R}x{C}"));
    group.throughput(Throughput::Elements(d as u64));
    let model = || IsingLattice::<ConstDims<R, C>>::new(J_CRITICAL, 0.0, true).expect("model");
    let a = LATTICE_STEP;
    generic_kernels::<Libm, _>(&mut group, "libm", &model, burn, a, a);
    generic_kernels::<Fast, _>(&mut group, "fast", &model, burn, a, a);

    lattice_kernels(&mut group, &model, burn, a, "");
    if R == 20 {
        // About 71 flips a step instead of about 20: the tabulated kernels' cost should not
        // grow with the number of flips.
        lattice_kernels(&mut group, &model, burn, LATTICE_STEP_WIDE, "-a0.4");
    }

    // The random words a lattice step consumes, alone: ⌈d/4⌉ outputs of Xoshiro256++.
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
    group.bench_function("rng-only/lattice", |b| {
        b.iter(|| {
            let mut acc = 0u64;
            for _ in 0..d.div_ceil(4) {
                acc ^= rng.next_u64();
            }
            black_box(acc)
        })
    });
    group.finish();
}

/// The tabulated lattice kernels at step `a`, named `{dula,dmala}/lattice{suffix}`.
fn lattice_kernels<const R: usize, const C: usize>(
    group: &mut Group<'_>,
    model: &dyn Fn() -> IsingLattice<ConstDims<R, C>>,
    burn: usize,
    a: f64,
    suffix: &str,
) {
    let proposal = LatticeProposal::new(&model(), a, 0.5).expect("proposal");
    let dula = LatticeDula::new(proposal);
    let id = format!("dula/lattice{suffix}");
    let setup = || {
        let (_, mut chain, mut rng) = start(model(), 7);
        burn_in(&id, burn, || dula.step(&mut chain, &mut rng).expect("step"));
        (chain, rng)
    };
    bench_lazy(group, &id, setup, |(chain, rng)| {
        dula.step(chain, rng).expect("step")
    });
    let dmala = LatticeDmala::new(proposal);
    let id = format!("dmala/lattice{suffix}");
    let setup = || {
        let (_, mut chain, mut rng) = start(model(), 7);
        burn_in(&id, burn, || {
            dmala.step(&mut chain, &mut rng).expect("step")
        });
        (chain, rng)
    };
    bench_lazy(group, &id, setup, |(chain, rng)| {
        dmala.step(chain, rng).expect("step")
    });
    // The same chain with the current state's classes kept between steps (what `sample` runs).
    let id = format!("dmala-kept/lattice{suffix}");
    let setup = || {
        let (_, mut chain, mut rng) = start(model(), 7);
        burn_in(&id, burn, || {
            dmala.step(&mut chain, &mut rng).expect("step")
        });
        (chain, rng, LatticeClasses::new(vec![0u8; R * C]))
    };
    bench_lazy(group, &id, setup, |(chain, rng, classes)| {
        let passes = &PortablePasses;
        dmala
            .step_with_classes(chain, classes, rng, passes)
            .expect("step")
    });
}

/// DULA and DMALA through the generic kernels with math `M`.
fn generic_kernels<M: FlipMath, T: BinaryTarget + 'static>(
    group: &mut Group<'_>,
    math: &str,
    model: &impl Fn() -> T,
    burn: usize,
    step_dula: f64,
    step_dmala: f64,
) {
    let dula = Dula::new(FlipProposal::<M>::with_math(step_dula, 0.5).expect("proposal"));
    let dmala = Dmala::new(FlipProposal::<M>::with_math(step_dmala, 0.5).expect("proposal"));
    generic(group, &format!("dula/generic-{math}"), model, dula, burn);
    generic(group, &format!("dmala/generic-{math}"), model, dmala, burn);
}

fn lattices(c: &mut Criterion) {
    lattice_case::<5, 5>(c, 20_000);
    lattice_case::<20, 20>(c, 20_000);
    lattice_case::<100, 100>(c, 2_000);
}

/// RBM parameters from a fixed seed: weights uniform in `±0.1`, biases uniform in `±0.5`; `wt`
/// is the transpose of `w`, for [`Rbm::with_transpose`].
struct RbmParams {
    w: Vec<f32>,
    wt: Vec<f32>,
    b: Vec<f32>,
    c: Vec<f32>,
}

impl RbmParams {
    fn leaked() -> &'static Self {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(2024);
        let mut uniform = |scale: f32, n: usize| -> Vec<f32> {
            (0..n)
                .map(|_| scale * ((rng.next_u32() >> 8) as f32 / (1u32 << 23) as f32 - 1.0))
                .collect()
        };
        let w = uniform(0.1, RBM_VISIBLE * RBM_HIDDEN);
        let b = uniform(0.5, RBM_VISIBLE);
        let c = uniform(0.5, RBM_HIDDEN);
        let wt = langevin_std::models::rbm_transpose(&w, RBM_VISIBLE, RBM_HIDDEN);
        Box::leak(Box::new(Self { w, wt, b, c }))
    }

    fn model<M: FlipMath>(&'static self, transposed: bool) -> Rbm<'static, M> {
        let cache = Box::leak(vec![0.0f64; 2 * RBM_HIDDEN].into_boxed_slice());
        let rbm = Rbm::<M>::with_math(&self.w, &self.b, &self.c, cache).expect("rbm");
        if transposed {
            rbm.with_transpose(&self.wt).expect("transpose")
        } else {
            rbm
        }
    }
}

/// `RBM_CHAINS` independent chains sharing the weights, stepped round-robin: one iteration is
/// one chain-step.
fn rbm_many<M: FlipMath + 'static, K: Kernel<Binary>>(
    group: &mut Group<'_>,
    p: &'static RbmParams,
    transposed: bool,
    id: &str,
    mut kernel: K,
) {
    let mut state = None;
    group.bench_function(id, |b| {
        let (chains, rngs) = state.get_or_insert_with(|| {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
            let mut chains = Vec::new();
            let mut rngs = Vec::new();
            for n in 0..RBM_CHAINS {
                let (model, chain, _) = start(p.model::<M>(transposed), 100 + n as u64);
                chains.push((model, chain));
                rng.jump();
                rngs.push(rng.clone());
            }
            for _ in 0..200 {
                for ((model, chain), r) in chains.iter_mut().zip(rngs.iter_mut()) {
                    kernel.step(*model, chain, r).expect("step");
                }
            }
            (chains, rngs)
        });
        b.iter_custom(|iters| {
            let mut left = iters;
            let start = Instant::now();
            while left > 0 {
                let n = (left as usize).min(RBM_CHAINS);
                for ((model, chain), r) in chains.iter_mut().zip(rngs.iter_mut()).take(n) {
                    black_box(kernel.step(*model, chain, r).expect("step"));
                }
                left -= n as u64;
            }
            start.elapsed()
        })
    });
}

fn rbm_math<M: FlipMath + 'static>(c: &mut Criterion, p: &'static RbmParams, math: &str) {
    let kernels = || {
        let dula = Dula::new(FlipProposal::<M>::with_math(RBM_STEP_DULA, 0.5).expect("proposal"));
        let dmala =
            Dmala::new(FlipProposal::<M>::with_math(RBM_STEP_DMALA, 0.5).expect("proposal"));
        (dula, dmala)
    };
    let mut group = c.benchmark_group(format!("rbm_{RBM_VISIBLE}x{RBM_HIDDEN}"));
    group.throughput(Throughput::Elements(RBM_VISIBLE as u64));
    for (transposed, layout) in [(false, "generic"), (true, "generic+wt")] {
        let model = || p.model::<M>(transposed);
        let (dula, dmala) = kernels();
        generic(
            &mut group,
            &format!("dula/{layout}-{math}"),
            model,
            dula,
            2_000,
        );
        generic(
            &mut group,
            &format!("dmala/{layout}-{math}"),
            model,
            dmala,
            2_000,
        );
    }
    group.finish();

    let mut group = c.benchmark_group(format!("rbm_{RBM_VISIBLE}x{RBM_HIDDEN}_{RBM_CHAINS}chains"));
    group.throughput(Throughput::Elements(RBM_VISIBLE as u64));
    for (transposed, layout) in [(false, "generic"), (true, "generic+wt")] {
        let (dula, dmala) = kernels();
        rbm_many::<M, _>(
            &mut group,
            p,
            transposed,
            &format!("dula/{layout}-{math}"),
            dula,
        );
        rbm_many::<M, _>(
            &mut group,
            p,
            transposed,
            &format!("dmala/{layout}-{math}"),
            dmala,
        );
    }
    group.finish();
}

/// The `RBM_CHAINS` chains stepped together by batched DMALA: one batched step is
/// `RBM_CHAINS` chain-steps.
fn rbm_batched(c: &mut Criterion) {
    use langevin_core::binary::{BatchDmala, Binary, ChainBatch};
    use langevin_core::dense::Blocked;
    use langevin_core::models::RbmBatch;
    use langevin_std::binary::Gemm;
    use langevin_std::run::BatchVecs;
    let p = RbmParams::leaked();
    let (n, v, h) = (RBM_CHAINS, RBM_VISIBLE, RBM_HIDDEN);
    let leak_f32 = |len| Box::leak(vec![0.0f32; len].into_boxed_slice());
    let leak_f64 = |len| Box::leak(vec![0.0f64; len].into_boxed_slice());
    let rbm = p.model::<Fast>(true);
    let mut group = c.benchmark_group(format!("rbm_{RBM_VISIBLE}x{RBM_HIDDEN}_{RBM_CHAINS}chains"));
    group.throughput(Throughput::Elements(RBM_VISIBLE as u64));
    let kernel = BatchDmala::new(FlipProposal::<Fast>::with_math(RBM_STEP_DMALA, 0.5).expect("p"));
    let run = |group: &mut Group<'_>, id: &str, target: &mut dyn FnMut() -> Box<dyn FnMut(u64)>| {
        let mut step = target();
        group.bench_function(id, |b| {
            b.iter_custom(|iters| {
                let batches = iters.div_ceil(n as u64);
                let start = Instant::now();
                step(batches);
                // Time per chain-step: the batched steps cover `batches · n` of them.
                start
                    .elapsed()
                    .mul_f64(iters as f64 / (batches * n as u64) as f64)
            })
        });
    };
    macro_rules! batch_of {
        ($target:expr) => {{
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
            let x: Vec<u8> = (0..n * v).map(|_| (rng.next_u32() >> 31) as u8).collect();
            let buffers = Box::leak(Box::new(BatchVecs::<Binary>::new(x, v))).buffers();
            let target = Box::leak(Box::new($target));
            let batch = ChainBatch::new(buffers, target).expect("batch");
            let mut rngs: Vec<Xoshiro256PlusPlus> = (0..n)
                .map(|_| {
                    rng.jump();
                    rng.clone()
                })
                .collect();
            let mut reports = vec![StepReport::default(); n];
            let mut batch = batch;
            for _ in 0..200 {
                kernel
                    .step(target, &mut batch, &mut rngs, &mut reports)
                    .expect("step");
            }
            Box::new(move |batches: u64| {
                for _ in 0..batches {
                    kernel
                        .step(target, &mut batch, &mut rngs, &mut reports)
                        .expect("step");
                    black_box(&reports);
                }
            }) as Box<dyn FnMut(u64)>
        }};
    }
    run(&mut group, "batched/portable-fast", &mut || {
        batch_of!(
            RbmBatch::<Blocked, Fast>::new(&rbm, n, leak_f64(2 * n * h), leak_f32(n * h), Blocked)
                .expect("rbm")
        )
    });
    run(&mut group, "batched/gemm-fast", &mut || {
        batch_of!(
            RbmBatch::<Gemm, Fast>::recomputed(
                &rbm,
                n,
                leak_f32(n * (v + h)),
                leak_f32(n * h),
                Gemm
            )
            .expect("rbm")
        )
    });
    group.finish();
}

fn rbm(c: &mut Criterion) {
    let p = RbmParams::leaked();
    rbm_math::<Libm>(c, p, "libm");
    rbm_math::<Fast>(c, p, "fast");
    rbm_batched(c);
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
}

criterion_group! {
    name = benches;
    config = config();
    targets = lattices, rbm
}
criterion_main!(benches);
