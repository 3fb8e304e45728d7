//! `exp`, `ln(1 + x)` and the flip odds over a block of 1024 logits, libm against the branch-free
//! polynomials. Throughput is in elements, so criterion reports the time per logit.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use langevin_core::math::{Fast, FlipMath, FlipOdds, Libm};
use langevin_core::random::unit_f64;
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

const N: usize = 1024;

/// Logits uniform on `[−12, 12]`, the range where flips are neither sure nor impossible.
fn logits() -> Vec<f32> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(0x6d61_7468);
    (0..N)
        .map(|_| (24.0 * unit_f64(&mut rng) - 12.0) as f32)
        .collect()
}

/// The odds of every logit, written out as three arrays (as the kernels keep them).
#[inline(never)]
fn odds<M: FlipMath>(l: &[f32], p: &mut [f32], lf: &mut [f32], ls: &mut [f32]) {
    for (((l, p), lf), ls) in l
        .iter()
        .zip(p.iter_mut())
        .zip(lf.iter_mut())
        .zip(ls.iter_mut())
    {
        let o = FlipOdds::new::<M>(*l);
        (*p, *lf, *ls) = (o.p_flip, o.ln_flip, o.ln_stay);
    }
}

#[inline(never)]
fn exp_all<M: FlipMath>(x: &[f32], out: &mut [f32]) {
    for (x, y) in x.iter().zip(out.iter_mut()) {
        *y = M::exp(*x);
    }
}

#[inline(never)]
fn ln1p_all<M: FlipMath>(x: &[f32], out: &mut [f32]) {
    for (x, y) in x.iter().zip(out.iter_mut()) {
        *y = M::ln_1p(*x);
    }
}

fn bench_odds<M: FlipMath>(c: &mut Criterion, name: &str) {
    let l = logits();
    let neg: Vec<f32> = l.iter().map(|l| -l.abs()).collect();
    let unit: Vec<f32> = neg.iter().map(|x| Libm::exp(*x)).collect();
    let (mut p, mut lf, mut ls) = (vec![0.0; N], vec![0.0; N], vec![0.0; N]);

    let mut g = c.benchmark_group("flip_odds");
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function(name, |b| {
        b.iter(|| odds::<M>(black_box(&l), &mut p, &mut lf, &mut ls));
        black_box((&p, &lf, &ls));
    });
    g.finish();

    let mut g = c.benchmark_group("exp");
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function(name, |b| {
        b.iter(|| exp_all::<M>(black_box(&neg), black_box(&mut p)))
    });
    g.finish();

    let mut g = c.benchmark_group("ln_1p");
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function(name, |b| {
        b.iter(|| ln1p_all::<M>(black_box(&unit), black_box(&mut p)))
    });
    g.finish();
}

fn benches(c: &mut Criterion) {
    bench_odds::<Libm>(c, "libm");
    bench_odds::<Fast>(c, "fast");
}

criterion_group!(math, benches);
criterion_main!(math);
