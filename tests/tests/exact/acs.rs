//! Every `(a_k, b_k)` of a tuned ACS cycle is an exact MH kernel (enumeration, tolerance
//! 1e-12 as in `ordinal_exact.rs`), a whole cycle leaves π invariant (π propagated through the
//! `s` kernels in turn), and the fixed-schedule sampler passes the sampling-path tests on
//! small ordinal and categorical models.

use langevin_core::binary::{BinaryChain, FlipProposal};
use langevin_core::categorical::CategoricalProposal;
use langevin_core::models::{Dims, IsingLattice};
use langevin_core::ordinal::OrdinalProposal;
use langevin_core::tuning::{Acs, AcsSchedule, AcsSettings, AcsTuner};
use langevin_core::{Categorical, Chain, Domain, Eval, Kernel, Ordinal};
use langevin_tests::discrete::*;
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

const TOL: f64 = 1e-12;
const N: usize = 100_000;

/// Checks each kernel of the cycle and the cycle as a whole.
fn check_cycle(
    name: &str,
    schedule: &AcsSchedule,
    log_pi: &[f64],
    matrix: impl Fn(f64, f64) -> Vec<f64>,
) {
    let pi = normalise(log_pi);
    let k = pi.len();
    let mut v = pi.clone();
    for step in 0..u64::from(schedule.cycle()) {
        let (a, b) = schedule.at(step);
        let p = matrix(a, b);
        assert_invariant(&pi, &p, TOL, true);
        v = (0..k)
            .map(|j| (0..k).map(|i| v[i] * p[i * k + j]).sum())
            .collect();
    }
    let worst = v
        .iter()
        .zip(&pi)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(worst < TOL, "{name}: a cycle moves π by {worst}");
}

/// The report of an ACS tuner run to the end of its budget on a binary chain.
fn tuned_binary_schedule() -> AcsSchedule {
    let mut m = IsingLattice::with_dims(Dims { rows: 2, cols: 4 }, 0.35, 0.1, true).unwrap();
    let mut s = AcsSettings::default();
    s.total_steps = 20_000;
    let mut acs = AcsTuner::new(s).unwrap();
    let mut buf = BinBuf::new(&[0u8; 8]);
    let mut chain = BinaryChain::new(buf.buffers(), &mut m).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
    tune_until_frozen(&mut acs, AcsTuner::is_frozen, &mut m, &mut chain, &mut rng);
    acs.report().schedule
}

#[test]
fn every_kernel_of_a_tuned_binary_cycle_is_exact() {
    let schedule = tuned_binary_schedule();
    let mut m = IsingLattice::with_dims(Dims { rows: 2, cols: 4 }, 0.35, 0.1, true).unwrap();
    let (states, log_pi, grads) = tabulate_binary(&mut m);
    check_cycle("binary", &schedule, &log_pi, |a, b| {
        let prop = FlipProposal::new(a, b).unwrap();
        mh_matrix(&log_pi, |i, j| {
            prop.log_q(&states[i], &grads[i], &states[j]).unwrap()
        })
    });
}

#[test]
fn every_kernel_of_a_tuned_label_cycle_is_exact_and_samples() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(2);
    let mut s = AcsSettings::default();
    s.total_steps = 20_000;

    // Ordinal.
    let mut w = Wavy::three(4);
    check_tuned_label_cycle::<Ordinal, _>("ordinal", &mut w, s, &mut rng, |a, b, x, g, y| {
        OrdinalProposal::new(a, b)
            .unwrap()
            .log_q(x, g, 4, y)
            .unwrap()
    });
    // Categorical.
    let mut m = small_potts(4, 3);
    check_tuned_label_cycle::<Categorical, _>("potts", &mut m, s, &mut rng, |a, b, x, g, y| {
        CategoricalProposal::new(a, b)
            .unwrap()
            .log_q(x, g, 3, y)
            .unwrap()
    });
}

/// Enumerates `model`, tunes ACS with settings `s` on it from the first state until it freezes,
/// checks every kernel of the tuned cycle (`log_q(a, b, x, ∇U(x), y)`: `log q(y | x)` of the
/// proposal with step `a` and balance `b`), then runs the exact-start protocol with `Acs` on the
/// tuned schedule.
fn check_tuned_label_cycle<D, T>(
    name: &str,
    model: &mut T,
    s: AcsSettings,
    rng: &mut Xoshiro256PlusPlus,
    log_q: impl Fn(f64, f64, &[u16], &[f32], &[u16]) -> f64,
) where
    D: Domain<Value = u16>,
    T: Eval<D>,
    AcsTuner: Kernel<D>,
    Acs: Kernel<D>,
{
    let states = enumerate(model.dim(), model.states());
    let grad_len = D::grad_len(model.dim(), model.states()).unwrap();
    let (log_pi, grads) = tabulate(&states, grad_len, |x, g| model.eval(x, g).unwrap());
    let mut acs = AcsTuner::new(s).unwrap();
    let mut buf = LabelBuf::for_domain::<D>(&states[0], model.states()).unwrap();
    let mut chain = Chain::<D>::new(buf.buffers(), model).unwrap();
    tune_until_frozen(&mut acs, AcsTuner::is_frozen, model, &mut chain, rng);
    let schedule = acs.report().schedule;
    check_cycle(name, &schedule, &log_pi, |a, b| {
        mh_matrix(&log_pi, |i, j| {
            log_q(a, b, &states[i], &grads[i], &states[j])
        })
    });
    let pi = normalise(&log_pi);
    let mut sampler = Acs::new(schedule);
    let name = format!("ACS {name}");
    check_label_chain(
        &name,
        model,
        &mut sampler,
        &mut chain,
        (&states, &pi),
        N,
        rng,
    );
}
