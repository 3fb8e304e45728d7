//! Transition matrices built from the kernels' own `step` (see `langevin_tests::harness`): no
//! closed form of the acceptance rule is consulted, so a wrong Metropolis ratio inside a
//! kernel fails detailed balance here. Planted bugs in a kernel written against the same random
//! layout show that it does.

use langevin_core::binary::{Dmala, Dula, FlipProposal};
use langevin_core::categorical::{self, CategoricalProposal};
use langevin_core::models::{BinaryQuadratic, Dims, IsingLattice, Rbm};
use langevin_core::ordinal::{self, OrdinalProposal};
use langevin_core::random::open_unit_f64;
use langevin_core::{Binary, BinaryTarget, TargetError};
use langevin_tests::discrete::{Wavy, small_potts};
use langevin_tests::harness::{
    BinaryProbe, CategoricalProbe, KernelProbe, OrdinalProbe, Probe, ScriptedRng, StateSpace,
    assert_exact, check_step_matrix, distance_to_reference, domain_log_density, domain_space,
    step_transition_matrix,
};
use langevin_tests::{Correction, QuadraticData, RbmData, enumerate, transition_matrix};
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

#[test]
fn binary_dmala_from_its_steps_is_reversible() {
    let model = IsingLattice::with_dims(Dims { rows: 2, cols: 3 }, 0.35, 0.1, true).unwrap();
    for (a, b) in [(0.6, 0.5), (2.0, 0.9)] {
        let kernel = Dmala::new(FlipProposal::new(a, b).unwrap());
        let mut probe = BinaryProbe::new(model, kernel);
        let m = step_transition_matrix(&mut probe);
        assert_exact(&format!("Ising 2×3, a = {a}, b = {b}"), &m);
    }
}

#[test]
fn binary_dmala_on_quadratic_and_rbm_models_with_a_preconditioner() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(17);
    let q = QuadraticData::random(5, 0.6, 0.8, &mut rng);
    let mut cache = q.cache();
    let model = BinaryQuadratic::new(&q.w, &q.b, &mut cache).unwrap();
    let precond = [1.0f32, 0.7, 1.3, 0.9, 1.1];
    let proposal = FlipProposal::new(0.8, 0.6)
        .unwrap()
        .preconditioned(&precond)
        .unwrap();
    let mut probe = BinaryProbe::new(model, Dmala::new(proposal));
    assert_exact("quadratic d = 5", &step_transition_matrix(&mut probe));

    let r = RbmData::random(5, 3, 0.9, 0.5, 0.5, &mut rng);
    let mut cache = r.cache();
    let model = Rbm::new(&r.w, &r.b, &r.c, &mut cache).unwrap();
    let mut probe = BinaryProbe::new(model, Dmala::new(FlipProposal::new(1.0, 0.75).unwrap()));
    assert_exact("RBM 5×3", &step_transition_matrix(&mut probe));
}

#[test]
fn binary_dula_from_its_steps_is_its_closed_form() {
    let mut model = IsingLattice::with_dims(Dims { rows: 2, cols: 3 }, 0.35, 0.1, true).unwrap();
    let proposal = FlipProposal::new(0.6, 0.5).unwrap();
    let e = enumerate(&mut model);
    let reference = transition_matrix(&e, &proposal, Correction::Unadjusted);
    let mut probe = BinaryProbe::new(model, Dula::new(proposal));
    let m = step_transition_matrix(&mut probe);
    let dist = distance_to_reference(&m, &reference.p);
    assert!(dist <= 1.0, "DULA step vs closed form: {dist}");
    // And it is biased: πP ≠ π, which the harness reports.
    assert!(!check_step_matrix(&m).passed());
}

#[test]
fn ordinal_dmala_from_its_steps_is_reversible() {
    let wavy = Wavy::three(4);
    for (w, a) in [(None, 0.8), (Some(1u16), 1.5)] {
        let mut p = OrdinalProposal::new(a, 0.6).unwrap();
        if let Some(w) = w {
            p = p.windowed(w).unwrap();
        }
        let mut probe = OrdinalProbe::new(wavy.clone(), ordinal::Dmala::new(p));
        assert_exact(
            &format!("ordinal wavy, window {w:?}"),
            &step_transition_matrix(&mut probe),
        );
    }
}

#[test]
fn ordinal_dula_from_its_steps_is_its_closed_form() {
    let mut wavy = Wavy::three(4);
    let p = OrdinalProposal::new(0.8, 0.6).unwrap();
    let space = StateSpace { dim: 3, levels: 4 };
    let states = space.all();
    let k = space.len();
    let grads: Vec<Vec<f32>> = states
        .iter()
        .map(|x| {
            let mut g = vec![0.0f32; 3];
            langevin_core::ordinal::OrdinalTarget::log_density_and_grad(&mut wavy, x, &mut g)
                .unwrap();
            g
        })
        .collect();
    let mut reference = vec![0.0; k * k];
    for x in 0..k {
        for y in 0..k {
            reference[x * k + y] = p.log_q(&states[x], &grads[x], 4, &states[y]).unwrap().exp();
        }
    }
    let mut probe = OrdinalProbe::new(wavy, ordinal::Dula::new(p));
    let m = step_transition_matrix(&mut probe);
    let dist = distance_to_reference(&m, &reference);
    assert!(dist <= 1.0, "ordinal DULA step vs closed form: {dist}");
}

#[test]
fn categorical_dmala_from_its_steps_is_reversible() {
    let potts = small_potts(3, 3);
    for (a, b) in [(0.7, 0.5), (2.5, 0.8)] {
        let p = CategoricalProposal::new(a, b).unwrap();
        let mut probe = CategoricalProbe::new(potts.clone(), categorical::Dmala::new(p));
        assert_exact(
            &format!("Potts 3×3, a = {a}, b = {b}"),
            &step_transition_matrix(&mut probe),
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Planted bugs: a binary DMALA written against the same random layout, with its Metropolis
// ratio broken in the ways acceptance ratios go wrong.
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq)]
enum Ratio {
    /// `(U_y − U_x) + log q(x|y) − log q(y|x)`: correct.
    Correct,
    /// The proposal correction forgotten (a symmetric-proposal Metropolis test).
    NoCorrection,
    /// The reverse proposal built from the gradient at `x` instead of at `y`.
    StaleReverseGradient,
    /// Forward and reverse swapped.
    Swapped,
    /// The target ratio inverted.
    InvertedTarget,
}

struct PlantedDmala<T> {
    target: T,
    proposal: FlipProposal<'static>,
    ratio: Ratio,
}

impl<T: BinaryTarget> PlantedDmala<T>
where
    T::Error: TargetError,
{
    fn eval(&mut self, x: &[u8]) -> (f64, Vec<f32>) {
        let mut g = vec![0.0f32; x.len()];
        let u = self.target.log_density_and_grad(x, &mut g).unwrap();
        (u, g)
    }
}

impl<T: BinaryTarget> KernelProbe for PlantedDmala<T>
where
    T::Error: TargetError,
{
    fn space(&self) -> StateSpace {
        domain_space::<Binary, _>(&self.target)
    }
    fn log_density(&mut self, x: &[u16]) -> f64 {
        domain_log_density::<Binary, _>(&mut self.target, x)
    }
    fn step_from(&mut self, x16: &[u16], rng: &mut ScriptedRng) -> Probe {
        let x: Vec<u8> = x16.iter().map(|&v| v as u8).collect();
        let d = x.len();
        let (ux, gx) = self.eval(&x);
        let (mut y, mut flipped) = (vec![0u8; d], vec![0u32; d]);
        let (flips, lq_fwd) = self
            .proposal
            .propose(&x, &gx, &mut y, &mut flipped, rng)
            .unwrap();
        let log_u = open_unit_f64(rng).ln();
        let y16: Vec<u16> = y.iter().map(|&v| u16::from(v)).collect();
        let mut report = langevin_core::binary::StepReport {
            accepted: true,
            proposed_flips: flips as u32,
            log_accept_ratio: 0.0,
            rejection: None,
            evaluations: 0,
        };
        if flips == 0 {
            return Probe {
                proposed: x16.to_vec(),
                after: x16.to_vec(),
                report,
            };
        }
        let (uy, gy) = self.eval(&y);
        let lq_rev = self.proposal.log_q(&y, &gy, &x).unwrap();
        let r = match self.ratio {
            Ratio::Correct => (uy - ux) + (lq_rev - lq_fwd),
            Ratio::NoCorrection => uy - ux,
            Ratio::StaleReverseGradient => {
                (uy - ux) + (self.proposal.log_q(&y, &gx, &x).unwrap() - lq_fwd)
            }
            Ratio::Swapped => (uy - ux) + (lq_fwd - lq_rev),
            Ratio::InvertedTarget => (ux - uy) + (lq_rev - lq_fwd),
        };
        report.log_accept_ratio = r;
        report.accepted = log_u < r;
        Probe {
            proposed: y16.clone(),
            after: if report.accepted { y16 } else { x16.to_vec() },
            report,
        }
    }
}

/// The harness accepts the correct ratio and rejects every planted bug, by a wide margin.
#[test]
fn planted_acceptance_bugs_fail_the_step_built_matrix() {
    let model = IsingLattice::with_dims(Dims { rows: 2, cols: 2 }, 0.4, 0.2, false).unwrap();
    let proposal = FlipProposal::new(1.2, 0.7).unwrap();
    for ratio in [
        Ratio::Correct,
        Ratio::NoCorrection,
        Ratio::StaleReverseGradient,
        Ratio::Swapped,
        Ratio::InvertedTarget,
    ] {
        let mut probe = PlantedDmala {
            target: model,
            proposal,
            ratio,
        };
        let c = check_step_matrix(&step_transition_matrix(&mut probe));
        if ratio == Ratio::Correct {
            assert!(c.passed(), "{ratio:?}: {c:?}");
        } else {
            assert!(c.balance > 100.0, "{ratio:?} not caught: {c:?}");
        }
    }
}

/// The planted kernel with the correct ratio realises the same matrix as the core's DMALA.
#[test]
fn the_planted_kernel_with_the_correct_ratio_is_the_core_kernel() {
    let model = IsingLattice::with_dims(Dims { rows: 2, cols: 2 }, 0.4, 0.2, false).unwrap();
    let proposal = FlipProposal::new(1.2, 0.7).unwrap();
    let mut planted = PlantedDmala {
        target: model,
        proposal,
        ratio: Ratio::Correct,
    };
    let mut core = BinaryProbe::new(model, Dmala::new(proposal));
    let a = step_transition_matrix(&mut planted);
    let b = step_transition_matrix(&mut core);
    // The core model updates `U` incrementally, so the ratios can differ in their last bits.
    let dist = distance_to_reference(&a, &b.p);
    assert!(dist <= 1.0, "planted vs core: {dist}");
}
