//! Per-step cost of the stochastic-gradient Langevin integrators, per evaluated per-term
//! gradient, on Bayesian ridge regression (N = 1000) at d = 10, 100, 1000; then the accuracy
//! versus data-passes tables of the two ranking reproductions (papers 003 and 004).
//!
//! Throughput is in per-term gradients: criterion's "elements/s" is gradients per second, and
//! its time per iteration is one step. Set `CONTINUOUS_BENCH_TABLES=0` to skip the tables.

use criterion::{BenchmarkId, Criterion, Throughput};
use langevin_core::continuous::{
    Access, Agld, AgldSettings, DenseSnapshots, Ewsg, EwsgSettings, Langevin, LangevinSettings,
    PointSnapshot, ScalarSnapshots, SgChain, SnapshotUpdate, SumTarget, Underdamped,
    UnderdampedSettings,
};
use langevin_std::continuous::RidgeRegression;
use langevin_std::continuous::repro::{GaussianSumSetup, RidgeSetup, agld_ridge, ewsg_vs_sghmc};
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::hint::black_box;
use std::time::Duration;

const TERMS: usize = 1000;
const BATCH: usize = 10;

/// Benchmarks one chain: warms it up, measures the mean gradients per step, then times steps.
fn bench_chain<C: SgChain<RidgeRegression>>(
    c: &mut Criterion,
    group: &str,
    d: usize,
    model: &RidgeRegression,
    chain: &mut C,
) {
    let mut m = model.clone();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
    let mut evals = 0u64;
    let probe = 2000;
    for _ in 0..probe {
        evals += u64::from(chain.step_with(&mut m, &mut rng).unwrap().grad_evals);
    }
    let per_step = (evals as f64 / probe as f64).round().max(1.0) as u64;
    let mut g = c.benchmark_group(group);
    g.throughput(Throughput::Elements(per_step));
    g.bench_function(BenchmarkId::from_parameter(d), |b| {
        b.iter(|| black_box(chain.step_with(&mut m, &mut rng).unwrap()))
    });
    g.finish();
}

fn per_step(c: &mut Criterion) {
    for d in [10usize, 100, 1000] {
        let (model, _) = RidgeRegression::synthetic(TERMS, d, 1.0, 1.0, 7).unwrap();
        // A step small enough for every chain to stay stable (a minibatch term's curvature is
        // about (N/n)|x_i|² ≈ N d / n); the cost of a step does not depend on it.
        let h = 0.02 / (TERMS * d) as f64;
        let theta0 = vec![0.0; d];

        let mut w = vec![0.0; Langevin::workspace_len(d)];
        let mut ch = Langevin::new(
            LangevinSettings::lmc(h).unwrap(),
            d,
            TERMS,
            &theta0,
            &mut w,
            &mut [],
        )
        .unwrap();
        bench_chain(c, "lmc", d, &model, &mut ch);

        let s = LangevinSettings::sgld(h, BATCH).unwrap();
        let mut ch = Langevin::new(s, d, TERMS, &theta0, &mut w, &mut []).unwrap();
        bench_chain(c, "sgld", d, &model, &mut ch);

        let mut w4 = vec![0.0; Underdamped::workspace_len(d)];
        let s = UnderdampedSettings::sghmc(h, 10.0, BATCH).unwrap();
        let mut ch = Underdamped::new(s, d, TERMS, &theta0, &mut w4, &mut []).unwrap();
        bench_chain(c, "sghmc", d, &model, &mut ch);

        let mut w5 = vec![0.0; Ewsg::workspace_len(d)];
        let s = EwsgSettings::new(h, 10.0)
            .unwrap()
            .with_batch(BATCH)
            .unwrap();
        let mut ch = Ewsg::new(s, d, TERMS, &theta0, &mut w5).unwrap();
        bench_chain(c, "ewsg", d, &model, &mut ch);

        let period = (TERMS / BATCH) as u64;
        let mut idx = vec![0u32; BATCH];
        let mut wa = vec![0.0; 4 * d];

        let s =
            AgldSettings::new(h, BATCH, Access::Random, SnapshotUpdate::Total { period }).unwrap();
        let mut snap = vec![0.0; PointSnapshot::len(d)];
        let store = PointSnapshot::new(d, TERMS, &mut snap).unwrap();
        let mut ch = Agld::new(s, d, TERMS, &theta0, store, &mut wa, &mut idx).unwrap();
        bench_chain(c, "svrg_ld_point", d, &model, &mut ch);

        for (name, update) in [
            ("saga_ld", SnapshotUpdate::Partial),
            ("tmu_ra", SnapshotUpdate::Mixed { period }),
        ] {
            let s = AgldSettings::new(h, BATCH, Access::Random, update).unwrap();
            let mut snap = vec![0.0; DenseSnapshots::len(d, TERMS).unwrap()];
            let store = DenseSnapshots::new(d, TERMS, &mut snap).unwrap();
            let mut ch = Agld::new(s, d, TERMS, &theta0, store, &mut wa, &mut idx).unwrap();
            bench_chain(c, &format!("{name}_dense"), d, &model, &mut ch);

            let mut snap = vec![0.0; ScalarSnapshots::len(d, TERMS).unwrap()];
            let store = ScalarSnapshots::new(d, TERMS, &mut snap).unwrap();
            let mut ch = Agld::new(s, d, TERMS, &theta0, store, &mut wa, &mut idx).unwrap();
            bench_chain(c, &format!("{name}_scalar"), d, &model, &mut ch);
        }

        // The model's own per-term gradient, for reference.
        let mut m = model.clone();
        let theta: Vec<f64> = (0..d).map(|k| 0.01 * k as f64).collect();
        let mut acc = vec![0.0; d];
        let mut g = c.benchmark_group("term_grad");
        g.throughput(Throughput::Elements(1));
        let mut i = 0usize;
        g.bench_function(BenchmarkId::from_parameter(d), |b| {
            b.iter(|| {
                i = (i + 1) % TERMS;
                m.add_term_grad(i, black_box(&theta), 1.0, &mut acc)
                    .unwrap();
            })
        });
        g.finish();
    }
}

fn tables() {
    let t = ewsg_vs_sghmc(&GaussianSumSetup::default()).expect("EWSG reproduction");
    println!(
        "\n{}",
        t.to_markdown(&[1.0, 2.0, 3.0, 5.0, 10.0, 15.0, 20.0, 25.0, 30.0])
    );
    let (t, _) = agld_ridge(&RidgeSetup {
        chains: 500,
        ..RidgeSetup::default()
    })
    .expect("AGLD reproduction");
    println!("\n{}", t.to_markdown(&[]));
}

fn main() {
    let mut c = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    per_step(&mut c);
    c.final_summary();
    if std::env::var("CONTINUOUS_BENCH_TABLES").as_deref() != Ok("0") {
        tables();
    }
}
