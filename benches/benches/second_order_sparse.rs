//! Per-step cost of the second-order (Gaussian integral trick) kernel with a dense and a
//! sparse `W`.
//!
//! * `dense100`: AB-trace on the dense random binary quadratic model at `d = 100` (as in
//!   `second_order.rs`: `U = xᵀW₀x + bᵀx`, `W₀` i.i.d. normal over `√d`, `W` its Hessian);
//! * `ba400_dense` / `ba400_sparse`: AB-trace on the Ising model on the 400-node
//!   Barabási–Albert graph (4 edges per node, `J = 0.4407`, `h = 0`, graph seed 0) with its exact
//!   `W` (`4 J` per edge, 3168 of 160 000 entries) given dense and as compressed sparse rows.
//!   Both chains start from the same state with the same seed; `D` from the diagonal SDP,
//!   `A` the dense upper-triangular factor of `b(W + D)`, `(a, b) = (0.5, 0.5)`.
//!
//! After the criterion group, a table of the median per-step time over 31 batches of 2000
//! steps each (the three cases' batches interleaved), with the sparse/dense ratio (`LANGEVIN_BENCH_BATCHES` sets the batch count).

mod common;

use common::{BinBuf, DenseQuadratic, random_bits};
use criterion::{BenchmarkId, Criterion};
use langevin_core::binary::BinaryChain;
use langevin_core::models::BinaryQuadratic;
use langevin_core::second_order::{AbSecondOrder, TrickParams, scratch_len};
use langevin_core::target::BinaryTarget;
use langevin_std::ab2::exact_w::model_w;
use langevin_std::ab2::fit::trick_factor_f32;
use langevin_std::ab2::trace_diagonal;
use langevin_std::binary::BinaryModel;
use langevin_std::models::zoo::BarabasiAlbertSpec;
use langevin_std::sdp::SdpOptions;
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::time::Instant;

const STEP: f64 = 0.5;
const BALANCE: f64 = 0.5;
const BATCH: usize = 2000;

/// `D` (diagonal SDP) and `A` for a dense `W`.
fn trace_and_factor(h: &[f64], d: usize) -> (Vec<f32>, Vec<f32>) {
    let (trace, _) = trace_diagonal(h, d, &SdpOptions::default()).unwrap();
    let a32 = trick_factor_f32(h, &trace, d, BALANCE).unwrap();
    (trace.iter().map(|&v| v as f32).collect(), a32)
}

/// One benchmarked configuration: a kernel on its chain and target.
struct Case<'a, T: BinaryTarget> {
    name: &'static str,
    d: usize,
    kernel: AbSecondOrder<'a, 'a>,
    chain: BinaryChain<'a>,
    target: T,
    rng: Xoshiro256PlusPlus,
}

impl<T: BinaryTarget> Case<'_, T>
where
    T::Error: std::fmt::Debug,
{
    fn step(&mut self) {
        self.kernel
            .step(&mut self.target, &mut self.chain, &mut self.rng)
            .unwrap();
    }

    /// Seconds per step over one batch of [`BATCH`] steps.
    fn batch(&mut self) -> f64 {
        let start = Instant::now();
        for _ in 0..BATCH {
            self.step();
        }
        start.elapsed().as_secs_f64() / BATCH as f64
    }
}

fn median(mut t: Vec<f64>) -> f64 {
    t.sort_by(f64::total_cmp);
    t[t.len() / 2]
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    let batches: usize = std::env::var("LANGEVIN_BENCH_BATCHES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(31);

    // d = 100, dense random quadratic.
    let d = 100;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(d as u64);
    let quadratic = DenseQuadratic::random(d, &mut rng);
    let h = &quadratic.hessian;
    let w32: Vec<f32> = h.iter().map(|&v| v as f32).collect();
    let (d32, a32) = trace_and_factor(h, d);
    let mut qcache = vec![0.0f64; 2 * d];
    let mut qmodel = BinaryQuadratic::new(&quadratic.w0, &quadratic.bias, &mut qcache).unwrap();
    let mut qbuf = BinBuf::new(&random_bits(d, &mut rng));
    let qchain = BinaryChain::new(qbuf.buffers(), &mut qmodel).unwrap();
    let params = TrickParams::new(&w32, &d32, &a32, STEP, BALANCE).unwrap();
    let (mut qscratch, mut qcached) = (vec![0.0; scratch_len(d)], vec![0u8; d]);
    let mut dense100 = Case {
        name: "dense100",
        d,
        kernel: AbSecondOrder::new(params, &mut qscratch, &mut qcached).unwrap(),
        chain: qchain,
        target: qmodel,
        rng: Xoshiro256PlusPlus::seed_from_u64(1),
    };

    // d = 400, the Barabási–Albert Ising model, W dense and sparse.
    let spec = BarabasiAlbertSpec::default();
    let model = BinaryModel::from_doc(&spec.generate().unwrap().to_doc().unwrap())
        .unwrap()
        .unwrap();
    let d = model.dim();
    let csr = model_w(&model).unwrap();
    let sparse_w = csr.view().unwrap();
    let h = csr.to_dense();
    let w32: Vec<f32> = h.iter().map(|&v| v as f32).collect();
    let (d32, a32) = trace_and_factor(&h, d);
    let x0 = random_bits(d, &mut Xoshiro256PlusPlus::seed_from_u64(400));
    let (mut cache_a, mut cache_b) = (vec![0.0; model.cache_len()], vec![0.0; model.cache_len()]);
    let mut target_a = model.target(&mut cache_a).unwrap();
    let mut target_b = model.target(&mut cache_b).unwrap();
    let (mut buf_a, mut buf_b) = (BinBuf::new(&x0), BinBuf::new(&x0));
    let chain_a = BinaryChain::new(buf_a.buffers(), &mut target_a).unwrap();
    let chain_b = BinaryChain::new(buf_b.buffers(), &mut target_b).unwrap();
    let dense_params = TrickParams::new(&w32, &d32, &a32, STEP, BALANCE).unwrap();
    let sparse_params = TrickParams::with_sparse_w(sparse_w, &d32, &a32, STEP, BALANCE).unwrap();
    let (mut scratch_a, mut cached_a) = (vec![0.0; scratch_len(d)], vec![0u8; d]);
    let (mut scratch_b, mut cached_b) = (vec![0.0; scratch_len(d)], vec![0u8; d]);
    let mut ba_dense = Case {
        name: "ba400_dense",
        d,
        kernel: AbSecondOrder::new(dense_params, &mut scratch_a, &mut cached_a).unwrap(),
        chain: chain_a,
        target: target_a,
        rng: Xoshiro256PlusPlus::seed_from_u64(2),
    };
    let mut ba_sparse = Case {
        name: "ba400_sparse",
        d,
        kernel: AbSecondOrder::new(sparse_params, &mut scratch_b, &mut cached_b).unwrap(),
        chain: chain_b,
        target: target_b,
        rng: Xoshiro256PlusPlus::seed_from_u64(2),
    };

    let mut group = c.benchmark_group("second_order_sparse_step");
    group.bench_function(BenchmarkId::new("dense100", 100), |b| {
        b.iter(|| dense100.step())
    });
    group.bench_function(BenchmarkId::new("ba400_dense", d), |b| {
        b.iter(|| ba_dense.step())
    });
    group.bench_function(BenchmarkId::new("ba400_sparse", d), |b| {
        b.iter(|| ba_sparse.step())
    });
    group.finish();
    c.final_summary();

    println!(
        "\nmedian per-step time, {batches} batches of {BATCH} steps (W: {} of {} entries stored)",
        sparse_w.nnz(),
        d * d
    );
    // Batches interleaved, so drifts of a shared machine hit every case alike.
    let mut times = [Vec::new(), Vec::new(), Vec::new()];
    for _ in 0..batches {
        times[0].push(dense100.batch());
        times[1].push(ba_dense.batch());
        times[2].push(ba_sparse.batch());
    }
    let [t0, t1, t2] = times.map(median);
    let rows = [
        (dense100.name, dense100.d, t0),
        (ba_dense.name, ba_dense.d, t1),
        (ba_sparse.name, ba_sparse.d, t2),
    ];
    for (name, d, t) in rows {
        println!("{name:<13} d = {d:>3}  {:>8.2} us/step", t * 1e6);
    }
    println!(
        "ba400 dense / sparse: {:.2}x",
        rows[1].2 / rows[2].2.max(f64::MIN_POSITIVE)
    );
}
