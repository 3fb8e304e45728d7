//! The second-order (Gaussian integral trick) kernel.
//!
//! * `second_order_step`: one AB-trace step on a dense binary quadratic model
//!   (`U = xᵀW₀x + bᵀx`, `W₀` i.i.d. normal scaled by `1/√d`) at `d ∈ {100, 400}`, next to a
//!   DMALA step on the same model, both at fixed `(a, b)` with the true Hessian as `W`;
//! * after the criterion group, an **ESS per 10⁴ target evaluations** table on the 20 × 20
//!   critical Ising lattice (J = 0.4407, h = 0, periodic) for AB-trace, AB-shift and AB-1st
//!   (the AB-2 schedule of `langevin_std::ab2` with each diagonal rule) and DMALA
//!   (`b = ½`, step tuned by the jump-distance rule). One chain per sampler from a uniform random
//!   state; tuning excluded; `T` kept steps (`LANGEVIN_BENCH_ESS_STEPS`, default 20 000). The
//!   statistics are the Hamming distance to a fixed random reference state and the
//!   magnetisation; ESS by Geyer's initial monotone sequence. `LANGEVIN_BENCH_AB2_TUNE` sets the
//!   second-order tuning budget (default that of `Ab2Settings`). Skipped when
//!   `LANGEVIN_BENCH_SKIP_ESS` is set.

mod common;

use common::{BinBuf, DenseQuadratic, ess, random_bits};
use criterion::{BenchmarkId, Criterion};
use langevin_core::binary::{BinaryChain, Dmala, FlipProposal};
use langevin_core::models::{BinaryQuadratic, Dims, IsingLattice};
use langevin_core::second_order::{AbSecondOrder, TrickParams, scratch_len};
use langevin_core::stats::ChainStats;
use langevin_core::tuning::{AbSettings, AbTuner};
use langevin_core::{Binary, Kernel};
use langevin_std::ab2::fit::trick_factor_f32;
use langevin_std::ab2::{Ab2Settings, DiagonalRule, trace_diagonal, tune_chain};
use langevin_std::sdp::SdpOptions;
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::time::Instant;

fn step_group(c: &mut Criterion) {
    let mut group = c.benchmark_group("second_order_step");
    for d in [100usize, 400] {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(d as u64);
        let quadratic = DenseQuadratic::random(d, &mut rng);
        let h = &quadratic.hessian;
        let (trace, _) = trace_diagonal(h, d, &SdpOptions::default()).unwrap();
        let (a, b) = (0.5, 0.5);
        let w32: Vec<f32> = h.iter().map(|&v| v as f32).collect();
        let d32: Vec<f32> = trace.iter().map(|&v| v as f32).collect();
        let a32 = trick_factor_f32(h, &trace, d, b).unwrap();
        let mut cache = vec![0.0f64; 2 * d];
        let mut model = BinaryQuadratic::new(&quadratic.w0, &quadratic.bias, &mut cache).unwrap();
        let mut buf = BinBuf::new(&random_bits(d, &mut rng));
        let mut chain = BinaryChain::new(buf.buffers(), &mut model).unwrap();
        let params = TrickParams::new(&w32, &d32, &a32, a, b).unwrap();
        let (mut scratch, mut cached) = (vec![0.0; scratch_len(d)], vec![0u8; d]);
        let mut kernel = AbSecondOrder::new(params, &mut scratch, &mut cached).unwrap();
        group.bench_function(BenchmarkId::new("ab_trace", d), |bench| {
            bench.iter(|| kernel.step(&mut model, &mut chain, &mut rng).unwrap())
        });
        let dmala = Dmala::new(FlipProposal::new(a, b).unwrap());
        group.bench_function(BenchmarkId::new("dmala", d), |bench| {
            bench.iter(|| dmala.step(&mut model, &mut chain, &mut rng).unwrap())
        });
    }
    group.finish();
}

struct Row {
    name: &'static str,
    ess_hamming: f64,
    ess_magnet: f64,
    evaluations: u64,
    accept: f64,
    seconds: f64,
    tuned: String,
}

fn run_kept<K: Kernel<Binary>>(
    kernel: &mut K,
    model: &mut IsingLattice<Dims>,
    chain: &mut BinaryChain<'_>,
    rng: &mut Xoshiro256PlusPlus,
    reference: &[u8],
    steps: usize,
) -> (Vec<f64>, Vec<f64>, ChainStats, f64) {
    let (mut h, mut m) = (Vec::with_capacity(steps), Vec::with_capacity(steps));
    let mut stats = ChainStats::default();
    let start = Instant::now();
    for _ in 0..steps {
        let r = kernel.step(model, chain, rng).unwrap();
        stats.record(&r);
        let x = chain.state();
        h.push(x.iter().zip(reference).filter(|(a, b)| a != b).count() as f64);
        m.push(x.iter().map(|&v| 2.0 * f64::from(v) - 1.0).sum());
    }
    (h, m, stats, start.elapsed().as_secs_f64())
}

fn ess_report() {
    let steps: usize = std::env::var("LANGEVIN_BENCH_ESS_STEPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_000);
    let d = 400;
    let mut rows = Vec::new();
    let mut rng0 = Xoshiro256PlusPlus::seed_from_u64(2024);
    let reference = random_bits(d, &mut rng0);
    let x0 = random_bits(d, &mut rng0);
    let variants: [(&'static str, Option<DiagonalRule>); 4] = [
        ("AB-trace", Some(DiagonalRule::Trace)),
        ("AB-shift", Some(DiagonalRule::Shift { eps: 1e-3 })),
        ("AB-1st", Some(DiagonalRule::FirstOrder)),
        ("DMALA", None),
    ];
    for (name, rule) in variants {
        let mut model =
            IsingLattice::with_dims(Dims { rows: 20, cols: 20 }, 0.4407, 0.0, true).unwrap();
        let mut buf = BinBuf::new(&x0);
        let mut chain = BinaryChain::new(buf.buffers(), &mut model).unwrap();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let tune_start = Instant::now();
        let (h, m, stats, seconds, tuned) = match rule {
            Some(rule) => {
                let mut settings = Ab2Settings::default();
                settings.diagonal = rule;
                if let Some(n) = std::env::var("LANGEVIN_BENCH_AB2_TUNE")
                    .ok()
                    .and_then(|s| s.parse().ok())
                {
                    settings.second_budget = n;
                }
                let mut burn = ChainStats::default();
                let (mut fitted, report) =
                    tune_chain(&mut model, &mut chain, &mut rng, &settings, &mut burn).unwrap();
                let tuned = format!(
                    "a={:.3} b={:.3} residual={:.2e} trD={:.2} tune={:.1}s",
                    report.step,
                    report.balance,
                    report.fit_residual.unwrap_or(f64::NAN),
                    report.trace_d,
                    tune_start.elapsed().as_secs_f64()
                );
                let params = fitted.params(report.step, report.balance).unwrap();
                let (mut scratch, mut cached) = (vec![0.0; scratch_len(d)], vec![0u8; d]);
                let mut kernel = AbSecondOrder::new(params, &mut scratch, &mut cached).unwrap();
                let (h, m, s, t) = run_kept(
                    &mut kernel,
                    &mut model,
                    &mut chain,
                    &mut rng,
                    &reference,
                    steps,
                );
                (h, m, s, t, tuned)
            }
            None => {
                let mut settings = AbSettings::default();
                settings.budget = 4000;
                settings.tune_balance = false;
                let mut ab = AbTuner::new(settings).unwrap();
                while !ab.is_frozen() {
                    Kernel::step(&mut ab, &mut model, &mut chain, &mut rng).unwrap();
                }
                let rep = ab.report();
                let tuned = format!("a={:.3} b={:.3}", rep.step, rep.balance);
                let (h, m, s, t) =
                    run_kept(&mut ab, &mut model, &mut chain, &mut rng, &reference, steps);
                (h, m, s, t, tuned)
            }
        };
        rows.push(Row {
            name,
            ess_hamming: ess(&h),
            ess_magnet: ess(&m),
            evaluations: stats.evaluations,
            accept: stats.accepted as f64 / stats.steps.max(1) as f64,
            seconds,
            tuned,
        });
    }
    println!(
        "\nESS on the 20x20 critical Ising lattice, {steps} kept steps, one chain per sampler"
    );
    println!(
        "{:<9} {:>9} {:>9} {:>13} {:>13} {:>7} {:>9} {:>8}  tuned",
        "sampler",
        "ESS(ham)",
        "ESS(mag)",
        "ham/1e4 eval",
        "mag/1e4 eval",
        "accept",
        "us/step",
        "ESS/s"
    );
    for r in &rows {
        let per = |e: f64| e / r.evaluations.max(1) as f64 * 1e4;
        println!(
            "{:<9} {:>9.1} {:>9.1} {:>13.2} {:>13.2} {:>7.3} {:>9.1} {:>8.1}  {}",
            r.name,
            r.ess_hamming,
            r.ess_magnet,
            per(r.ess_hamming),
            per(r.ess_magnet),
            r.accept,
            r.seconds / steps as f64 * 1e6,
            r.ess_magnet.min(r.ess_hamming) / r.seconds,
            r.tuned
        );
    }
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    step_group(&mut c);
    c.final_summary();
    if std::env::var_os("LANGEVIN_BENCH_SKIP_ESS").is_none() {
        ess_report();
    }
}
