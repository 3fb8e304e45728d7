//! Sampling-path tests: start exactly from the kernel's stationary law (π for DMALA, the
//! enumerated π_a for DULA), apply k ∈ {1, 10} steps, repeat n times, and test the n final states
//! against that law with a pooled chi-square test and the TV threshold
//! `τ = ½ Σ √(p_i(1−p_i)/n) + √(ln(1/α)/(2n))`.
//!
//! Each test function holds its false-positive rate at `ALPHA = 1e-6`: with m checks in it, each
//! check runs at `ALPHA / m`, split evenly between the chi-square and the TV test.

use langevin_core::binary::{BinaryChain, Dmala, Dula, FlipProposal, StepError, StepReport};
use langevin_core::models::{BinaryQuadratic, Dims, IsingLattice, Rbm};
use langevin_core::random::open_unit_f64;
use langevin_core::{Binary, Eval, Kernel};
use langevin_core::{BinaryTarget, TargetError};
use langevin_tests::{
    Correction, GraphData, QuadraticData, RbmData, check_sample, chi_square_surely_rejects,
    drop_proposal_ratio, enumerate, sample_exact_start, stationary, transition_matrix, tv,
};
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Per-test false-positive rate.
const ALPHA: f64 = 1e-6;
/// Draws per check.
const N: usize = 100_000;
/// Steps after the exact start.
const STEPS: [usize; 2] = [1, 10];

/// Runs the exact-start protocol and asserts that the draws follow `law` at level `alpha`.
fn assert_law<T, K>(
    label: &str,
    target: &mut T,
    kernel: &mut K,
    law: &[f64],
    steps: usize,
    seed: u64,
    alpha: f64,
) where
    T: BinaryTarget + ?Sized,
    T::Error: TargetError,
    K: Kernel<Binary>,
{
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let counts = sample_exact_start(target, kernel, law, steps, N, &mut rng);
    let c = check_sample(&counts, law, alpha);
    assert!(
        c.passed(),
        "{label}, k={steps}: chi-square {:.1} on {} df (p = {:.2e}, {} cells pooled), \
         TV {:.5} vs threshold {:.5}, each at level {:.1e}",
        c.chi.statistic,
        c.chi.df,
        c.chi.p_value,
        c.chi.pooled_cells,
        c.tv,
        c.tv_threshold,
        c.alpha
    );
}

/// DMALA from π for every `(a, b)` in `configs` and k ∈ {1, 10}.
fn dmala_cases<T>(label: &str, target: &mut T, configs: &[(f64, f64)], precond: Option<&[f32]>)
where
    T: BinaryTarget + ?Sized,
    T::Error: TargetError,
{
    let pi = enumerate(target).pi;
    let alpha = ALPHA / (configs.len() * STEPS.len()) as f64;
    for (c, &(a, b)) in configs.iter().enumerate() {
        let base = FlipProposal::new(a, b).unwrap();
        for (s, &k) in STEPS.iter().enumerate() {
            let seed = 1000 + 10 * c as u64 + s as u64;
            let label = format!("{label} DMALA a={a} b={b}");
            match precond {
                None => assert_law(&label, target, &mut Dmala::new(base), &pi, k, seed, alpha),
                Some(p) => {
                    let mut kernel = Dmala::new(base.preconditioned(p).unwrap());
                    assert_law(&label, target, &mut kernel, &pi, k, seed, alpha);
                }
            }
        }
    }
}

#[test]
fn dmala_exact_start_random_quadratic() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
    let data = QuadraticData::random(8, 0.35, 1.0, &mut rng);
    let mut cache = data.cache();
    let mut model = BinaryQuadratic::new(&data.w, &data.b, &mut cache).unwrap();
    dmala_cases("quadratic d=8", &mut model, &[(0.6, 0.5), (2.0, 1.0)], None);
}

#[test]
fn dmala_exact_start_random_graph_ising() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(12);
    let data = GraphData::random(9, 0.4, 0.6, 0.4, &mut rng);
    dmala_cases(
        "graph Ising d=9",
        &mut data.model(),
        &[(0.3, 0.5), (1e6, 0.5)],
        None,
    );
}

#[test]
fn dmala_exact_start_tiny_rbm() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(13);
    let data = RbmData::random(8, 4, 1.0, 0.5, 0.5, &mut rng);
    let mut cache = data.cache();
    let mut model = Rbm::new(&data.w, &data.b, &data.c, &mut cache).unwrap();
    dmala_cases("RBM 8x4", &mut model, &[(0.5, 0.5), (1.5, 0.75)], None);
}

#[test]
fn dmala_exact_start_periodic_lattice() {
    let mut model = IsingLattice::with_dims(Dims { rows: 3, cols: 3 }, 0.3, 0.1, true).unwrap();
    dmala_cases("lattice 3x3", &mut model, &[(0.4, 0.5)], None);
}

#[test]
fn dmala_exact_start_preconditioned() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(14);
    let data = QuadraticData::random(8, 0.4, 1.0, &mut rng);
    let mut cache = data.cache();
    let mut model = BinaryQuadratic::new(&data.w, &data.b, &mut cache).unwrap();
    let p = [0.4f32, 0.6, 0.9, 1.0, 1.1, 1.5, 2.0, 3.0];
    dmala_cases(
        "preconditioned quadratic d=8",
        &mut model,
        &[(0.5, 0.5)],
        Some(&p),
    );
}

/// The 2×2 Ising of Zhang, Liu & Liu (2022) (Theorem 5.1 experiment) as an explicit 4-cycle:
/// `U(s) = 0.1 sᵀAs + 0.2 Σ s`, each bond `J = 0.2`.
fn paper_2x2() -> GraphData {
    GraphData::from_edges(
        &[(0, 1, 0.2), (1, 3, 0.2), (3, 2, 0.2), (2, 0, 0.2)],
        &[0.2; 4],
    )
}

/// DULA with each `(a, b)` of `configs`, from its own stationary law `π_a` (solved from the
/// enumerated matrix), for k ∈ {1, 10}; each check at level `alpha`.
fn dula_cases<T>(label: &str, target: &mut T, configs: &[(f64, f64)], alpha: f64, seed: u64)
where
    T: BinaryTarget + ?Sized,
    T::Error: TargetError,
{
    let e = enumerate(target);
    for (c, &(a, b)) in configs.iter().enumerate() {
        let proposal = FlipProposal::new(a, b).unwrap();
        let pi_a = stationary(&transition_matrix(&e, &proposal, Correction::Unadjusted));
        for (s, &k) in STEPS.iter().enumerate() {
            let label = format!("{label} DULA a={a} b={b}");
            let seed = seed + 10 * c as u64 + s as u64;
            assert_law(
                &label,
                target,
                &mut Dula::new(proposal),
                &pi_a,
                k,
                seed,
                alpha,
            );
        }
    }
}

/// DULA from its own stationary law `π_a` stays there.
#[test]
fn dula_exact_start_matches_its_stationary_law() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(15);
    let quad = QuadraticData::random(7, 0.4, 1.0, &mut rng);
    let rbm = RbmData::random(7, 3, 1.0, 0.5, 0.5, &mut rng);
    let (mut qc, mut rc) = (quad.cache(), rbm.cache());
    let mut qm = BinaryQuadratic::new(&quad.w, &quad.b, &mut qc).unwrap();
    let mut rm = Rbm::new(&rbm.w, &rbm.b, &rbm.c, &mut rc).unwrap();
    let graph_configs = [(1.0, 0.5), (0.25, 0.5)];
    let quad_configs = [(0.5, 0.5), (1.0, 0.8)];
    let rbm_configs = [(0.7, 0.5)];
    let checks = STEPS.len() * (graph_configs.len() + quad_configs.len() + rbm_configs.len());
    let alpha = ALPHA / checks as f64;
    let graph = paper_2x2();
    dula_cases(
        "2x2 Ising graph",
        &mut graph.model(),
        &graph_configs,
        alpha,
        2000,
    );
    dula_cases("quadratic d=7", &mut qm, &quad_configs, alpha, 2200);
    dula_cases("RBM 7x3", &mut rm, &rbm_configs, alpha, 2300);
}

/// The protocol has power: DULA at `a = 1` on the 2×2 Ising is biased (`π_a ≠ π`), and its
/// draws are rejected when tested against `π`. The chi-square noncentrality
/// `λ = n Σ (π_a − π)² / π` is checked first to put the rejection beyond doubt, so the rejection
/// is what the sample size predicts, not luck.
#[test]
fn dula_bias_is_detected_against_the_target() {
    let graph = paper_2x2();
    let mut model = graph.model();
    let e = enumerate(&mut model);
    let proposal = FlipProposal::new(1.0, 0.5).unwrap();
    let pi_a = stationary(&transition_matrix(&e, &proposal, Correction::Unadjusted));
    let lambda: f64 = pi_a
        .iter()
        .zip(&e.pi)
        .map(|(a, p)| N as f64 * (a - p) * (a - p) / p)
        .sum();
    let df = 15;
    assert!(
        chi_square_surely_rejects(lambda, df, ALPHA / 2.0),
        "too little power: λ = {lambda}"
    );
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(16);
    let counts = sample_exact_start(&mut model, &mut Dula::new(proposal), &pi_a, 10, N, &mut rng);
    let c = check_sample(&counts, &e.pi, ALPHA);
    assert!(
        c.chi.p_value < c.alpha && c.tv > c.tv_threshold,
        "DULA bias (TV(π_a, π) = {:.4}) went undetected: {c:?}",
        tv(&pi_a, &e.pi)
    );
}

/// A Metropolis kernel with a classic bug: it accepts with `min(1, π(y)/π(x))`, forgetting the
/// proposal ratio.
struct NoProposalRatio<'p> {
    proposal: FlipProposal<'p>,
    x_new: Vec<u8>,
    flipped: Vec<u32>,
    grad: Vec<f32>,
}

impl Kernel<Binary> for NoProposalRatio<'_> {
    fn step<T, R>(
        &mut self,
        target: &mut T,
        chain: &mut BinaryChain<'_>,
        rng: &mut R,
    ) -> Result<StepReport, StepError<T::Error>>
    where
        T: Eval<Binary> + ?Sized,
        R: Rng + ?Sized,
    {
        let (flips, _) = self.proposal.propose(
            chain.state(),
            chain.grad(),
            &mut self.x_new,
            &mut self.flipped,
            rng,
        )?;
        let log_u = open_unit_f64(rng).ln();
        let u_new = target
            .eval(&self.x_new, &mut self.grad)
            .map_err(StepError::Target)?;
        let r = u_new - chain.log_density();
        let accepted = log_u < r;
        let back = if accepted {
            self.x_new.clone()
        } else {
            chain.state().to_vec()
        };
        chain.reset(&back, target).expect("valid state");
        Ok(StepReport {
            accepted,
            proposed_flips: flips as u32,
            log_accept_ratio: r,
            rejection: None,
            evaluations: 1,
        })
    }
}

/// The protocol catches the missing proposal ratio after a single step from π.
#[test]
fn missing_proposal_ratio_is_detected() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(17);
    let data = GraphData::random(8, 0.4, 0.6, 0.4, &mut rng);
    let mut model = data.model();
    let e = enumerate(&mut model);
    let proposal = FlipProposal::new(1.0, 0.5).unwrap();
    // The law after one broken step from π.
    let mut t = transition_matrix(&e, &proposal, Correction::Metropolis);
    drop_proposal_ratio(&e, &mut t);
    let after = t.left_mul(&e.pi);
    let lambda: f64 = after
        .iter()
        .zip(&e.pi)
        .map(|(a, p)| N as f64 * (a - p) * (a - p) / p)
        .sum();
    let df = t.states - 1;
    assert!(
        chi_square_surely_rejects(lambda, df, ALPHA / 2.0),
        "too little power: λ = {lambda}"
    );
    let mut kernel = NoProposalRatio {
        proposal,
        x_new: vec![0; 8],
        flipped: vec![0; 8],
        grad: vec![0.0; 8],
    };
    let counts = sample_exact_start(&mut model, &mut kernel, &e.pi, 1, N, &mut rng);
    let c = check_sample(&counts, &e.pi, ALPHA);
    assert!(c.chi.p_value < c.alpha, "broken kernel passed: {c:?}");
}
