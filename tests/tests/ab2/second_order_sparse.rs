//! The second-order kernel with a sparse `W` (compressed sparse rows).
//!
//! * The sparse and dense forms of one `W` give bit-identical chains (same seed: same reports,
//!   states and log-densities for 1000 steps), binary and ordinal, on paths that update `W y`
//!   from the cache and paths that recompute it.
//! * Every malformed CSR input gets its typed error.
//! * Fixed-`u` detailed balance by enumeration with a sparse `W` (as `second_order_exact.rs`).
//! * The exact `W` of a graph Ising model reproduces the model's energy differences.

use langevin_core::binary::{BinaryChain, StepReport};
use langevin_core::ordinal::OrdinalChain;
use langevin_core::random::fill_normal;
use langevin_core::second_order::{
    AbSecondOrder, OrdinalAbSecondOrder, SparseW, TrickParams, WMatrix, ordinal_scratch_len,
    scratch_len,
};
use langevin_core::{BinaryTarget, ParamError};
use langevin_std::ab2::exact_w::{CsrMatrix, ising_graph_w, model_w};
use langevin_std::ab2::fit::trick_factor_f32;
use langevin_std::ab2::shift_diagonal;
use langevin_std::binary::BinaryModel;
use langevin_std::models::OrdinalQuadratic;
use langevin_std::models::zoo::BarabasiAlbertSpec;
use langevin_tests::discrete::*;
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

const STEPS: usize = 1000;

fn ba_model(nodes: usize, m: usize, field: f64, seed: u64) -> BinaryModel {
    let spec = BarabasiAlbertSpec {
        nodes,
        edges_per_node: m,
        coupling: 0.4407,
        field,
        seed,
    };
    BinaryModel::from_doc(&spec.generate().unwrap().to_doc().unwrap())
        .unwrap()
        .unwrap()
}

/// A random symmetric sparse matrix: each pair `i < j` present with probability `p`, a
/// diagonal entry on every third row, normal values times `scale`.
fn random_sparse(d: usize, p: f64, scale: f64, seed: u64) -> CsrMatrix {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut dense = vec![0.0f32; d * d];
    let mut z = [0.0f64; 1];
    for i in 0..d {
        for j in i..d {
            let keep = if i == j {
                i % 3 == 0
            } else {
                (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 <= p
            };
            if keep {
                fill_normal(&mut rng, &mut z);
                let v = (z[0] * scale) as f32;
                dense[i * d + j] = v;
                dense[j * d + i] = v;
            }
        }
    }
    sparse(d, |k| dense[k])
}

/// The nonzero entries of the row-major `d × d` matrix with entries `entry(i·d + j)`, as CSR.
fn sparse(d: usize, entry: impl Fn(usize) -> f32) -> CsrMatrix {
    let mut csr = CsrMatrix {
        offsets: vec![0],
        ..CsrMatrix::default()
    };
    for i in 0..d {
        for j in 0..d {
            let v = entry(i * d + j);
            if v != 0.0 {
                csr.columns.push(j as u32);
                csr.values.push(v);
            }
        }
        csr.offsets.push(csr.columns.len() as u32);
    }
    csr
}

/// `D` (shift rule) and the upper factor of `b (W + D)` for the dense `W`, as `f32`.
fn diag_and_factor(w: &[f64], d: usize, b: f64) -> (Vec<f32>, Vec<f32>) {
    let diag = shift_diagonal(w, d, 1e-3).unwrap();
    let factor = trick_factor_f32(w, &diag, d, b).unwrap();
    (diag.iter().map(|&v| v as f32).collect(), factor)
}

fn to_f32(w: &[f64]) -> Vec<f32> {
    w.iter().map(|&v| v as f32).collect()
}

/// Which update path a step took, for coverage: `(incremental, full)` counts of evaluated
/// proposals.
fn path(report: &StepReport, d: usize, counts: &mut (usize, usize)) {
    if report.evaluations > 0 && report.rejection.is_none() {
        if 2 * (report.proposed_flips as usize) < d {
            counts.0 += 1;
        } else {
            counts.1 += 1;
        }
    }
}

/// One chain's trace, its (incremental, full) proposal counts and its number of moves.
type Run<T> = (Vec<T>, (usize, usize), usize);

/// Asserts the sparse run (pushed last) equals the dense run step by step, and adds the dense
/// run's counts to `coverage`.
fn same_runs<T: PartialEq + std::fmt::Debug>(
    what: &str,
    mut runs: Vec<Run<T>>,
    coverage: &mut (usize, usize, usize),
) {
    let (sparse_run, dense_run) = (runs.pop().unwrap(), runs.pop().unwrap());
    for (k, (sp, dn)) in sparse_run.0.iter().zip(&dense_run.0).enumerate() {
        assert_eq!(sp, dn, "{what}: chains differ at step {k}");
    }
    eprintln!(
        "{what}: (incremental, full) proposals {:?}, moves {}",
        dense_run.1, dense_run.2
    );
    coverage.0 += dense_run.1.0;
    coverage.1 += dense_run.1.1;
    coverage.2 += dense_run.2;
}

/// Asserts both update paths ran and the chain moved.
fn assert_covered(name: &str, coverage: (usize, usize, usize)) {
    assert!(coverage.0 > 0, "{name}: no incremental update exercised");
    assert!(coverage.1 > 0, "{name}: no full recomputation exercised");
    assert!(coverage.2 > 0, "{name}: the chain never moved");
}

#[test]
fn binary_sparse_and_dense_chains_are_bit_identical() {
    let model = ba_model(63, 3, 0.1, 4);
    let d = model.dim();
    let exact = model_w(&model).unwrap();
    let random = random_sparse(d, 0.08, 0.5, 9);
    for (name, csr) in [("exact Ising W", exact), ("random sparse W", random)] {
        let w = csr.to_dense();
        let w32 = to_f32(&w);
        let mut coverage = (0, 0, 0);
        // Small moves (cache updates) and, with a small balance, about half the coordinates
        // proposed at once (recomputation).
        for (a, b) in [(0.5, 0.5), (1.0, 1.0), (30.0, 0.9), (30.0, 0.02)] {
            let (diag, factor) = diag_and_factor(&w, d, b);
            let dense = TrickParams::new(&w32, &diag, &factor, a, b).unwrap();
            let sparse =
                TrickParams::with_sparse_w(csr.view().unwrap(), &diag, &factor, a, b).unwrap();
            assert!(matches!(sparse.w(), WMatrix::Sparse(_)));
            let mut x0 = vec![0u8; d];
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(17);
            x0.iter_mut()
                .for_each(|v| *v = (rng.next_u32() >> 31) as u8);
            let mut runs = Vec::new();
            for params in [dense, sparse] {
                let mut cache = vec![0.0; model.cache_len()];
                let mut target = model.target(&mut cache).unwrap();
                let mut buf = BinBuf::new(&x0);
                let mut chain = BinaryChain::new(buf.buffers(), &mut target).unwrap();
                let (mut scratch, mut cached) = (vec![0.0; scratch_len(d)], vec![0u8; d]);
                let mut kernel = AbSecondOrder::new(params, &mut scratch, &mut cached).unwrap();
                let mut rng = Xoshiro256PlusPlus::seed_from_u64(99);
                let mut trace = Vec::with_capacity(STEPS);
                let (mut counts, mut accepted) = ((0, 0), 0);
                for _ in 0..STEPS {
                    let r = kernel.step(&mut target, &mut chain, &mut rng).unwrap();
                    path(&r, d, &mut counts);
                    accepted += usize::from(r.accepted && r.proposed_flips > 0);
                    trace.push((
                        r.accepted,
                        r.proposed_flips,
                        r.log_accept_ratio.to_bits(),
                        chain.state().to_vec(),
                        chain.log_density().to_bits(),
                    ));
                }
                runs.push((trace, counts, accepted));
            }
            same_runs(&format!("{name}, a = {a}, b = {b}"), runs, &mut coverage);
        }
        assert_covered(name, coverage);
    }
}

/// A lattice Gaussian on a ring: `Λ_ii = 1 + ½|z_i|`, `Λ_{i,i±1} = 0.3 z'`, so `W = −Λ` is
/// sparse (the ring and a few chords).
fn ring_gaussian(d: usize, s: usize, seed: u64) -> (OrdinalQuadratic, CsrMatrix) {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut z = vec![0.0f64; 3 * d];
    fill_normal(&mut rng, &mut z);
    let mut lambda = vec![0.0f64; d * d];
    for i in 0..d {
        lambda[i * d + i] = 1.0 + 0.5 * z[i].abs();
        let j = (i + 1) % d;
        let c = 0.3 * z[d + i].clamp(-1.0, 1.0);
        lambda[i * d + j] = c;
        lambda[j * d + i] = c;
        if i % 5 == 0 {
            let k = (i + d / 2) % d;
            let c = 0.2 * z[2 * d + i].clamp(-1.0, 1.0);
            lambda[i * d + k] = c;
            lambda[k * d + i] = c;
        }
    }
    // Rounded to f32 first, so the dense and sparse W are the same numbers.
    let lambda: Vec<f64> = lambda.iter().map(|&v| f64::from(v as f32)).collect();
    // Λ is already rounded to f32, so an entry is zero exactly when its f32 is.
    let csr = sparse(d, |k| -lambda[k] as f32);
    let mu = (0..d)
        .map(|i| (s - 1) as f64 * (0.3 + 0.4 * z[i].tanh().abs()))
        .collect();
    let b = (0..d).map(|i| 0.1 * z[2 * d + i]).collect();
    (OrdinalQuadratic::new(s, lambda, mu, b).unwrap(), csr)
}

#[test]
fn ordinal_sparse_and_dense_chains_are_bit_identical() {
    let (d, s) = (30, 6);
    let (mut model, exact) = ring_gaussian(d, s, 5);
    let random = random_sparse(d, 0.1, 0.4, 21);
    for (name, csr) in [("exact W", exact), ("random sparse W", random)] {
        let w = csr.to_dense();
        let w32 = to_f32(&w);
        let mut coverage = (0, 0, 0);
        for (a, b) in [(0.7, 0.5), (5.0, 1.0), (60.0, 0.9)] {
            let (diag, factor) = diag_and_factor(&w, d, b);
            let dense = TrickParams::new(&w32, &diag, &factor, a, b).unwrap();
            let sparse =
                TrickParams::with_sparse_w(csr.view().unwrap(), &diag, &factor, a, b).unwrap();
            let x0: Vec<u16> = (0..d).map(|i| (i % s) as u16).collect();
            let mut runs = Vec::new();
            for params in [dense, sparse] {
                let mut buf = LabelBuf::labels(&x0, s, d);
                let mut chain = OrdinalChain::new_ordinal(buf.buffers(), &mut model).unwrap();
                let mut scratch = vec![0.0; ordinal_scratch_len(d, s)];
                let mut cached = vec![0u16; d];
                let mut kernel =
                    OrdinalAbSecondOrder::new(params, s, &mut scratch, &mut cached).unwrap();
                let mut rng = Xoshiro256PlusPlus::seed_from_u64(31);
                let mut trace = Vec::with_capacity(STEPS);
                let (mut counts, mut moved) = ((0, 0), 0);
                for _ in 0..STEPS {
                    let (r, jump) = kernel
                        .step_with_jump(&mut model, &mut chain, &mut rng)
                        .unwrap();
                    path(&r, d, &mut counts);
                    moved += usize::from(jump > 0);
                    trace.push((
                        r.accepted,
                        r.proposed_flips,
                        r.log_accept_ratio.to_bits(),
                        jump,
                        chain.state().to_vec(),
                        chain.log_density().to_bits(),
                    ));
                }
                runs.push((trace, counts, moved));
            }
            same_runs(&format!("{name}, a = {a}, b = {b}"), runs, &mut coverage);
        }
        assert_covered(name, coverage);
    }
}

fn range_error(e: ParamError) -> &'static str {
    match e {
        ParamError::OutOfRange { name, .. } => name,
        ParamError::Len(l) => l.buffer,
        ParamError::NonFinite(n) => n,
        ParamError::EmptyDimension => "empty",
        other => panic!("unexpected error {other:?}"),
    }
}

#[test]
fn malformed_csr_is_rejected_with_its_error() {
    // The path 0 — 1 — 2 with a diagonal: a valid matrix to break one way at a time.
    let offsets = [0u32, 2, 5, 7];
    let columns = [0u32, 1, 0, 1, 2, 1, 2];
    let values = [2.0f32, -1.0, -1.0, 2.0, -1.0, -1.0, 2.0];
    let ok = SparseW::new(&offsets, &columns, &values).unwrap();
    assert_eq!((ok.dim(), ok.nnz()), (3, 7));
    assert_eq!(ok.get(1, 2), Some(-1.0));
    assert_eq!(ok.get(0, 2), None);

    let err = |o: &[u32], c: &[u32], v: &[f32]| range_error(SparseW::new(o, c, v).unwrap_err());
    // No rows.
    assert_eq!(err(&[], &[], &[]), "empty");
    assert_eq!(err(&[0], &[], &[]), "empty");
    // Values and columns of different lengths.
    assert_eq!(err(&offsets, &columns, &values[..6]), "W values");
    // The last offset is not the number of entries.
    assert_eq!(err(&[0, 2, 5, 6], &columns, &values), "W columns");
    assert_eq!(err(&[0, 2, 5, 8], &columns, &values), "W columns");
    // Offsets not starting at 0, or decreasing.
    assert_eq!(err(&[1, 2, 5, 7], &columns, &values), "W offsets");
    assert_eq!(err(&[0, 5, 2, 7], &columns, &values), "W offsets");
    // A column out of range.
    assert_eq!(err(&offsets, &[0, 1, 0, 1, 3, 1, 2], &values), "W columns");
    // Columns unsorted, or repeated, within a row.
    assert_eq!(
        err(
            &offsets,
            &[1, 0, 0, 1, 2, 1, 2],
            &[-1.0, 2.0, -1.0, 2.0, -1.0, -1.0, 2.0]
        ),
        "W column order"
    );
    assert_eq!(
        err(&offsets, &[0, 0, 0, 1, 2, 1, 2], &values),
        "W column order"
    );
    // Non-finite values.
    for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        let mut v = values;
        v[3] = bad;
        assert_eq!(err(&offsets, &columns, &v), "W");
    }
    // A mirror entry with another value, or missing.
    let mut v = values;
    v[4] = -1.5;
    assert_eq!(err(&offsets, &columns, &v), "W symmetry");
    assert_eq!(
        err(
            &[0, 2, 5, 6],
            &[0, 1, 0, 1, 2, 2],
            &[2.0, -1.0, -1.0, 2.0, -1.0, 2.0]
        ),
        "W symmetry"
    );
    // -0.0 and 0.0 are the same value.
    assert!(SparseW::new(&[0, 1, 2], &[1, 0], &[0.0, -0.0]).is_ok());

    // The parameters around a valid W.
    let factor = [0.0f32; 9];
    let diag = [1.0f32; 3];
    assert!(TrickParams::with_sparse_w(ok, &diag, &factor, 0.5, 0.5).is_ok());
    let p = |diag: &[f32], factor: &[f32], a: f64, b: f64| {
        TrickParams::with_sparse_w(ok, diag, factor, a, b).unwrap_err()
    };
    assert_eq!(range_error(p(&diag[..2], &factor[..4], 0.5, 0.5)), "W");
    assert_eq!(range_error(p(&diag, &factor[..8], 0.5, 0.5)), "A");
    assert_eq!(range_error(p(&[], &[], 0.5, 0.5)), "empty");
    assert_eq!(
        range_error(p(&[1.0, f32::NAN, 1.0], &factor, 0.5, 0.5)),
        "D"
    );
    let mut bad_factor = factor;
    bad_factor[4] = f32::INFINITY;
    assert_eq!(range_error(p(&diag, &bad_factor, 0.5, 0.5)), "A");
    assert!(matches!(p(&diag, &factor, 0.0, 0.5), ParamError::Step(_)));
    assert!(matches!(
        p(&diag, &factor, 0.5, 1.5),
        ParamError::Balance(_)
    ));
}

/// As `second_order_exact.rs`: for fixed `u`, every conditional is normalised and matches the
/// reference, and `π(x) N(u; Ax, I) Q(y|x,u) min(1, r)` is symmetric in `(x, y)` to `1e-10`
/// relative (f64 sums over 32 states and 5 terms round near `1e-14`; a wrong term is of order
/// one).
#[test]
fn fixed_u_detailed_balance_with_sparse_w() {
    // A 6-node graph Ising model (the BA graph with 2 edges per node), d = 6 states 64.
    let model = ba_model(6, 2, -0.2, 3);
    let d = model.dim();
    let csr = model_w(&model).unwrap();
    let sw = csr.view().unwrap();
    let mut cache = vec![0.0; model.cache_len()];
    let mut target = model.target(&mut cache).unwrap();
    let (states, log_pi, grads) = tabulate_binary(&mut target);
    let w = csr.to_dense();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(8);
    let mut worst = 0.0f64;
    for (a, b) in [(0.5, 0.5), (3.0, 1.0), (0.2, 0.3)] {
        let (diag, factor) = diag_and_factor(&w, d, b);
        let params = TrickParams::with_sparse_w(sw, &diag, &factor, a, b).unwrap();
        let (mut scratch, mut cached) = (vec![0.0; scratch_len(d)], vec![0u8; d]);
        let mut kernel = AbSecondOrder::new(params, &mut scratch, &mut cached).unwrap();
        for _ in 0..2 {
            let mut u = vec![0.0; d];
            fill_normal(&mut rng, &mut u);
            u.iter_mut().for_each(|v| *v *= 1.5);
            let k = states.len();
            let mut f = vec![f64::NEG_INFINITY; k * k];
            for (i, x) in states.iter().enumerate() {
                let mut total = 0.0;
                for (j, y) in states.iter().enumerate() {
                    let t = kernel.transition(x, &grads[i], y, &grads[j], &u).unwrap();
                    let reference = second_order_log_q(
                        |r, c| f64::from(sw.get(r, c as u32).unwrap_or(0.0)),
                        &diag,
                        &factor,
                        (a, b),
                        x,
                        &grads[i],
                        &u,
                        y,
                    );
                    assert!(
                        (t.log_q_forward - reference).abs() <= 1e-10 * (1.0 + reference.abs()),
                        "log Q {} vs reference {reference}",
                        t.log_q_forward
                    );
                    total += t.log_q_forward.exp();
                    let log_r = log_pi[j] - log_pi[i] + t.log_gauss_ratio + t.log_q_reverse
                        - t.log_q_forward;
                    f[i * k + j] =
                        log_pi[i] + log_gauss(&factor, x, &u) + t.log_q_forward + log_r.min(0.0);
                }
                assert!((total - 1.0).abs() < 1e-12, "Σ_y Q = {total}");
            }
            let m = f.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            for i in 0..k {
                for j in 0..i {
                    let (lr, lf) = ((f[i * k + j] - m).exp(), (f[j * k + i] - m).exp());
                    let scale = lr.max(lf);
                    let rel = if scale > 0.0 {
                        (lr - lf).abs() / scale
                    } else {
                        0.0
                    };
                    worst = worst.max(rel);
                    assert!(rel < 1e-10, "detailed balance off by {rel:e} at ({i}, {j})");
                }
            }
        }
    }
    eprintln!("worst relative detailed-balance error {worst:e}");
}

/// `U(y) − U(x) = (y−x)ᵀ∇U(x) + ½(y−x)ᵀW(y−x)` for the exact `W` of a graph Ising model. The
/// model's `U` is an `f64` sum, its gradient is rounded to `f32`: the tolerance is
/// `2^-23 Σ|δ_i g_i|` (the gradient's rounding, doubled) plus `1e-12 (1 + Σ|terms|)` for the
/// `f64` sums.
#[test]
fn ising_graph_w_reproduces_energy_differences() {
    let model = ba_model(400, 4, 0.15, 0);
    let d = model.dim();
    let csr = model_w(&model).unwrap();
    let sw = csr.view().unwrap();
    // 4 J per edge listing, no diagonal: nnz = 2 |E| = 2 m (n − m).
    assert_eq!(sw.nnz(), 2 * 4 * (400 - 4));
    assert!(sw.values().iter().all(|&v| v == 4.0 * 0.4407f32));
    let mut cache = vec![0.0; model.cache_len()];
    let mut target = model.target(&mut cache).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(12);
    let (mut gx, mut gy) = (vec![0.0f32; d], vec![0.0f32; d]);
    let mut worst = 0.0f64;
    for trial in 0..200 {
        let x: Vec<u8> = (0..d).map(|_| (rng.next_u32() >> 31) as u8).collect();
        // Flip 1, 2, a handful, or about half of the coordinates.
        let flips = [1, 2, 7, d / 2][trial % 4];
        let mut y = x.clone();
        for _ in 0..flips {
            let i = (rng.next_u64() % d as u64) as usize;
            y[i] ^= 1;
        }
        let ux = target.log_density_and_grad(&x, &mut gx).unwrap();
        let uy = target.log_density_and_grad(&y, &mut gy).unwrap();
        let delta: Vec<f64> = (0..d).map(|i| f64::from(y[i]) - f64::from(x[i])).collect();
        let linear: f64 = (0..d).map(|i| delta[i] * f64::from(gx[i])).sum();
        let mut quad = 0.0;
        for i in 0..d {
            let (cols, vals) = sw.row(i);
            for (&j, &v) in cols.iter().zip(vals) {
                quad += delta[i] * f64::from(v) * delta[j as usize];
            }
        }
        let predicted = linear + 0.5 * quad;
        let mass: f64 = (0..d).map(|i| (delta[i] * f64::from(gx[i])).abs()).sum();
        let tol = mass * 2f64.powi(-23) + 1e-12 * (1.0 + mass + quad.abs() + ux.abs() + uy.abs());
        let err = ((uy - ux) - predicted).abs();
        worst = worst.max(err / tol);
        assert!(
            err <= tol,
            "trial {trial}: ΔU {} vs {predicted} (tol {tol:e})",
            uy - ux
        );
    }
    eprintln!("worst error / tolerance {worst:.3}");
    // Other kinds have no graph W; malformed adjacency is refused.
    let quad = BinaryModel::Quadratic {
        w: vec![0.0; 4],
        b: vec![0.0; 2],
    };
    assert!(model_w(&quad).is_err());
    assert!(ising_graph_w(&[0, 1, 2], &[1, 1], &[0.5, 0.5]).is_err());
    assert!(ising_graph_w(&[0, 1, 2], &[1, 2], &[0.5, 0.5]).is_err());
    assert!(ising_graph_w(&[0, 1, 3], &[1, 0], &[0.5, 0.5]).is_err());
    // Repeated edges add up.
    let w = ising_graph_w(&[0, 2, 4], &[1, 1, 0, 0], &[0.5, 0.25, 0.5, 0.25]).unwrap();
    assert_eq!(w.values, vec![3.0, 3.0]);
    assert_eq!(w.to_dense(), vec![0.0, 3.0, 3.0, 0.0]);
}
