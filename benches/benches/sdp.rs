//! SDP-lite: time to a certified relative gap of 1e-3 on the reference cases, on a sparse
//! d = 2000 Barabási–Albert Ising coupling matrix and on the quadratic `W` of a 784-visible,
//! 500-hidden RBM (dense, rank 500; both signs, and with its diagonal removed).
//!
//! Run with `cargo bench --bench sdp` from `benches/`. Single-threaded by construction.

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};
use langevin_std::io::npy::read_matrix_f64;
use langevin_std::sdp::{SdpOptions, SymmetricMatrix, solve_diagonal_sdp};

/// The reference cases shipped with the integration tests.
const CASES: [&str; 4] = [
    "rotated_gaussian100_k10",
    "grid20_open",
    "spin_glass400_mixed_diag",
    "goe784",
];

fn reference(name: &str) -> SymmetricMatrix {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/data/sdp")
        .join(format!("{name}_W.npy"));
    let (rows, cols, w) = read_matrix_f64(&path).expect("reference W");
    SymmetricMatrix::from_row_major(rows, cols, &w).expect("valid W")
}

/// SplitMix64: a fixed, dependency-free stream for the graph.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A Barabási–Albert graph (each new vertex attaches to `m` distinct earlier vertices chosen
/// proportionally to degree, starting from a clique on `m + 1`) as the Ising coupling
/// `W = 2 · 0.4407 · A` (ferromagnetic at the critical grid temperature, as in the BA-4 Ising
/// of the AB-sampler paper).
fn barabasi_albert(n: usize, m: usize, seed: u64) -> SymmetricMatrix {
    let mut state = seed;
    let mut ends: Vec<usize> = Vec::new();
    let mut entries = Vec::new();
    for i in 0..=m {
        for j in 0..i {
            entries.push((i, j, 2.0 * 0.4407));
            ends.extend([i, j]);
        }
    }
    for v in (m + 1)..n {
        let mut chosen: Vec<usize> = Vec::with_capacity(m);
        while chosen.len() < m {
            let t = ends[(splitmix(&mut state) % ends.len() as u64) as usize];
            if !chosen.contains(&t) {
                chosen.push(t);
            }
        }
        for t in chosen {
            entries.push((v, t, 2.0 * 0.4407));
            ends.extend([v, t]);
        }
    }
    SymmetricMatrix::from_triplets(n, &entries).expect("valid BA coupling")
}

/// A standard normal by Box–Muller from the SplitMix64 stream.
fn normal(state: &mut u64) -> f64 {
    let u = ((splitmix(state) >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
    let v = (splitmix(state) >> 11) as f64 / (1u64 << 53) as f64;
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// The Hessian at `x = 0` of an RBM's log-density with the hidden units summed out,
/// `U(x) = Σ_j softplus((W x + c)_j) + bᵀx`: `∇²U = Wᵀ diag(σ'(c)) W` (`d × d`, rank ≤ `h`),
/// weights and hidden biases `N(0, scale²)` as `langevin model rbm --scale` draws them. With
/// `negate` the matrix is `−∇²U` (negative semidefinite, the SDP's hard case: `d` must lift
/// the whole spectrum).
fn rbm_hessian(
    visible: usize,
    hidden: usize,
    scale: f64,
    seed: u64,
    negate: bool,
) -> SymmetricMatrix {
    let mut state = seed;
    let w: Vec<f64> = (0..hidden * visible)
        .map(|_| scale * normal(&mut state))
        .collect();
    let c: Vec<f64> = (0..hidden).map(|_| scale * normal(&mut state)).collect();
    let sign = if negate { -1.0 } else { 1.0 };
    let mut h = vec![0.0; visible * visible];
    for (row, &cj) in w.chunks_exact(visible).zip(&c) {
        let s = 1.0 / (1.0 + (-cj).exp());
        let weight = sign * s * (1.0 - s);
        for a in 0..visible {
            let wa = weight * row[a];
            for (o, &wb) in h[a * visible..(a + 1) * visible].iter_mut().zip(row) {
                *o += wa * wb;
            }
        }
    }
    SymmetricMatrix::from_row_major(visible, visible, &h).expect("valid RBM Hessian")
}

/// [`rbm_hessian`] (positive sign) with its diagonal set to zero: a dense matrix whose
/// off-diagonal part has rank at most `hidden`, no longer positive semidefinite.
fn rbm_hessian_zero_diagonal(
    visible: usize,
    hidden: usize,
    scale: f64,
    seed: u64,
) -> SymmetricMatrix {
    let mut h = rbm_hessian(visible, hidden, scale, seed, false).to_dense();
    for i in 0..visible {
        h[i * visible + i] = 0.0;
    }
    SymmetricMatrix::from_row_major(visible, visible, &h).expect("valid RBM Hessian")
}

fn bench_sdp(c: &mut Criterion) {
    let mut group = c.benchmark_group("sdp_gap_1e-3");
    group.sample_size(10);
    let opts = SdpOptions::with_rel_gap(1e-3);
    let mut cases: Vec<(String, SymmetricMatrix)> = CASES
        .iter()
        .map(|&n| (n.to_owned(), reference(n)))
        .collect();
    cases.push(("ba4_sparse2000".to_owned(), barabasi_albert(2000, 4, 42)));
    cases.push((
        "rbm784x500_hessian".to_owned(),
        rbm_hessian(784, 500, 0.01, 7, false),
    ));
    cases.push((
        "rbm784x500_neg_hessian".to_owned(),
        rbm_hessian(784, 500, 0.01, 7, true),
    ));
    cases.push((
        "rbm784x500_hessian_zero_diag".to_owned(),
        rbm_hessian_zero_diagonal(784, 500, 0.01, 7),
    ));
    for (name, w) in &cases {
        group.bench_function(name.as_str(), |b| {
            b.iter(|| {
                let sol = solve_diagonal_sdp(black_box(w), &opts).expect("solves");
                assert!(sol.converged);
                sol.trace
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_sdp);
criterion_main!(benches);
