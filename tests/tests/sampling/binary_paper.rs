//! Reproductions from Zhang, Liu & Liu (2022) (discrete Langevin proposal):
//!
//! * Sec. 7.1: the 5×5 periodic Ising model `U(s) = 0.1 sᵀAs + 0.2 Σ s` (A the 0/1 adjacency, each
//!   bond counted twice, i.e. coupling 0.2 per bond and field 0.2) under DMALA with step 0.6
//!   proposes about 6 flips per step and accepts about 54% of them (the paper reports 52%; an
//!   independent run of the reference code gave 6.04 and 0.540). Step 0.2 gives about 1.53 flips
//!   and 0.937. The stationary mean of the proposed flips, `E_π[Σ_i σ(l_i)]`, is computed exactly
//!   by enumerating all `2^25` states, so the simulated mean is tested against an exact value.
//! * Theorem 5.1 / Figure 1a: on the 2×2 Ising model, the bias `TV(π_a, π)` of DULA's stationary
//!   law shrinks as the step `a` does, and obeys the theorem's bound.

use langevin_core::binary::{BinaryChain, ChainStorage, Dmala, FlipProposal};
use langevin_core::models::{ConstDims, Dims, IsingLattice};
use langevin_core::stats::ChainStats;
use langevin_tests::{
    Correction, GraphData, enumerate, lattice_bonds, sigmoid, stationarity_residual, stationary,
    transition_matrix, tv,
};
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

const COUPLING: f64 = 0.2;
const FIELD: f64 = 0.2;

/// Two-sided 1e-6 quantile of the t distribution with ~1000 degrees of freedom, rounded up (the
/// normal's is 4.89; estimating the standard error from 1,000 batch means widens it slightly).
const Z: f64 = 5.0;

/// `E_π[number of proposed flips]` for DMALA with balance ½ and each step in `steps`, on the 5×5
/// torus, by enumerating all `2^25` states in Gray-code order.
///
/// The torus is vertex-transitive, so `E_π[Σ_i σ(l_i)] = 25·E_π[σ(l_0)]`, and `σ(l_0)` depends on
/// `(s_0, n_0)` only (`n_0` the neighbour spin sum), with `l_0 = −s_0 (J n_0 + h) − 1/(2a)`. The
/// enumeration therefore only counts states by (bond sum, spin sum, s_0, n_0): integer counts,
/// no rounding until the final weighted sums.
fn exact_mean_flips(steps: &[f64]) -> Vec<f64> {
    const D: usize = 25;
    let bonds = lattice_bonds(5, 5, true);
    let mut nbrs: Vec<Vec<usize>> = vec![Vec::new(); D];
    for &(i, j) in &bonds {
        nbrs[i].push(j);
        nbrs[j].push(i);
    }
    assert!(nbrs.iter().all(|n| n.len() == 4));
    let e = bonds.len() as i32;
    // All spins down.
    let mut s = [-1i32; D];
    let mut n = [-4i32; D];
    let (mut b, mut m) = (e, -(D as i32));
    // counts[(b + 50)][(m + 25)][s0 == 1][(n0 + 4) / 2]
    let mut counts = vec![[[0u32; 5]; 2]; 101 * 51];
    let mut record = |b: i32, m: i32, s0: i32, n0: i32| {
        let cell = (b + 50) as usize * 51 + (m + 25) as usize;
        counts[cell][usize::from(s0 == 1)][((n0 + 4) / 2) as usize] += 1;
    };
    record(b, m, s[0], n[0]);
    for k in 1u32..(1 << D) {
        let i = k.trailing_zeros() as usize;
        s[i] = -s[i];
        let delta = 2 * s[i];
        b += delta * n[i];
        m += delta;
        for &j in &nbrs[i] {
            n[j] += delta;
        }
        record(b, m, s[0], n[0]);
    }
    let w_max = COUPLING * e as f64 + FIELD * D as f64;
    steps
        .iter()
        .map(|&a| {
            let (mut z, mut f) = (0.0f64, 0.0f64);
            for (cell, table) in counts.iter().enumerate() {
                let bb = (cell / 51) as f64 - 50.0;
                let mm = (cell % 51) as f64 - 25.0;
                let w = (COUPLING * bb + FIELD * mm - w_max).exp();
                for (si, row) in table.iter().enumerate() {
                    let s0 = if si == 1 { 1.0 } else { -1.0 };
                    for (ni, &c) in row.iter().enumerate() {
                        let n0 = 2.0 * ni as f64 - 4.0;
                        let l = -s0 * (COUPLING * n0 + FIELD) - 0.5 / a;
                        z += w * f64::from(c);
                        f += w * f64::from(c) * sigmoid(l);
                    }
                }
            }
            D as f64 * f / z
        })
        .collect()
}

/// Means and batch-means standard errors of proposed flips and acceptance over `n` DMALA steps
/// after `burn_in`, in `batches` batches.
struct RunSummary {
    flips: f64,
    flips_se: f64,
    acceptance: f64,
    acceptance_se: f64,
}

fn run_5x5(step: f64, seed: u64, burn_in: usize, batches: usize, per_batch: usize) -> RunSummary {
    let mut model =
        IsingLattice::<ConstDims<5, 5>>::new(COUPLING as f32, FIELD as f32, true).unwrap();
    let mut storage = ChainStorage::<25>::new([0; 25]);
    let mut chain = BinaryChain::new(storage.buffers(), &mut model).unwrap();
    let kernel = Dmala::new(FlipProposal::new(step, 0.5).unwrap());
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    for _ in 0..burn_in {
        kernel.step(&mut model, &mut chain, &mut rng).unwrap();
    }
    let mut flips = Vec::with_capacity(batches);
    let mut acc = Vec::with_capacity(batches);
    for _ in 0..batches {
        let mut stats = ChainStats::default();
        for _ in 0..per_batch {
            stats.record(&kernel.step(&mut model, &mut chain, &mut rng).unwrap());
        }
        flips.push(stats.mean_proposed_flips());
        acc.push(stats.acceptance_rate());
    }
    let (flips, flips_se) = mean_se(&flips);
    let (acceptance, acceptance_se) = mean_se(&acc);
    RunSummary {
        flips,
        flips_se,
        acceptance,
        acceptance_se,
    }
}

/// Mean and standard error of the mean of batch means.
fn mean_se(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0);
    (mean, (var / n).sqrt())
}

/// The paper's headline numbers for step 0.6, and the step-0.2 reference values.
///
/// Run length: 1,000 batches of 1,000 steps after 10,000 burn-in steps. The test requires the
/// measured standard errors to make `Z·SE` at most a quarter of each tolerance, so that a miss
/// cannot be sampling noise; at this length the standard errors come out near 0.005 (flips) and
/// 0.0008 (acceptance) for step 0.6. Measured: exact stationary mean flips 6.0347 (step 0.6) and
/// 1.5256 (step 0.2).
#[test]
fn dmala_on_5x5_ising_matches_paper() {
    let exact = exact_mean_flips(&[0.6, 0.2]);
    // (step, reference flips, flips tolerance, reference acceptance, acceptance tolerance). The
    // step-0.2 tolerances keep the step-0.6 ones' relative size (±3.3% flips, ±0.02 acceptance).
    let cases = [(0.6, 6.0, 0.2, 0.54, 0.02), (0.2, 1.53, 0.05, 0.937, 0.02)];
    for (c, &(step, ref_flips, flips_tol, ref_acc, acc_tol)) in cases.iter().enumerate() {
        let exact = exact[c];
        assert!(
            (exact - ref_flips).abs() <= flips_tol,
            "step {step}: exact stationary mean flips {exact:.4} vs {ref_flips} ± {flips_tol}"
        );
        let r = run_5x5(step, 42 + c as u64, 10_000, 1_000, 1_000);
        assert!(
            Z * r.flips_se <= flips_tol / 4.0 && Z * r.acceptance_se <= acc_tol / 4.0,
            "step {step}: run too short (SE flips {:.4}, acceptance {:.4})",
            r.flips_se,
            r.acceptance_se
        );
        assert!(
            (r.flips - exact).abs() <= Z * r.flips_se,
            "step {step}: mean proposed flips {:.4} vs exact {exact:.4} (SE {:.4})",
            r.flips,
            r.flips_se
        );
        assert!(
            (r.acceptance - ref_acc).abs() <= acc_tol,
            "step {step}: acceptance {:.4} (SE {:.4}) vs {ref_acc} ± {acc_tol}",
            r.acceptance,
            r.acceptance_se
        );
    }
}

/// Theorem 5.1 / Figure 1a: DULA's stationary law approaches π as the step shrinks, on the 2×2
/// Ising model `U(s) = 0.1 sᵀAs + 0.2 Σ s` (appendix I.1), written once as a graph with explicit
/// bonds (a 4-cycle, J = 0.2 each) and once as a 2×2 lattice (which does not wrap, so it has the
/// same four bonds).
///
/// The theorem's bound `‖π_a − π‖₁ ≤ Z exp(−1/(2a) − λ_min/2)` is checked too. In `x`
/// coordinates `U(x) = xᵀWx + bᵀx + c` with `W_ij = 2J` on bonds (zero diagonal) and
/// `c = J·|E| − h·d = 0`, so `Z = Σ_x e^{U(x)}` and `λ_min(W) = 2J·λ_min(A) = −4J` (the 4-cycle's
/// adjacency has eigenvalues 2, 0, 0, −2).
#[test]
fn dula_bias_shrinks_with_step_on_2x2_ising() {
    let graph = GraphData::from_edges(
        &[(0, 1, 0.2), (1, 3, 0.2), (3, 2, 0.2), (2, 0, 0.2)],
        &[0.2; 4],
    );
    let mut lattice = IsingLattice::with_dims(Dims { rows: 2, cols: 2 }, 0.2, 0.2, true).unwrap();
    assert_eq!(lattice.wraps(), (false, false));
    let eg = enumerate(&mut graph.model());
    let el = enumerate(&mut lattice);
    for (u, v) in eg.log_density.iter().zip(&el.log_density) {
        assert!(
            (u - v).abs() < 1e-6,
            "graph and lattice disagree: {u} vs {v}"
        );
    }
    let z = eg.log_z.exp();
    let lambda_min = -4.0 * COUPLING;
    for (label, e) in [("graph", &eg), ("lattice", &el)] {
        let mut previous = f64::INFINITY;
        for a in [1.0, 0.5, 0.25, 0.1] {
            let t = transition_matrix(
                e,
                &FlipProposal::new(a, 0.5).unwrap(),
                Correction::Unadjusted,
            );
            let pi_a = stationary(&t);
            assert!(stationarity_residual(&t, &pi_a) < 1e-13);
            let bias = tv(&pi_a, &e.pi);
            assert!(
                bias < previous,
                "{label}: TV(π_a, π) = {bias:.3e} at a = {a} did not shrink from {previous:.3e}"
            );
            let bound = z * (-0.5 / a - 0.5 * lambda_min).exp();
            assert!(
                2.0 * bias <= bound,
                "{label} a={a}: ‖π_a − π‖₁ = {:.3e} exceeds the Theorem 5.1 bound {bound:.3e}",
                2.0 * bias
            );
            previous = bias;
        }
    }
}
