//! AB and ACS on an Ising lattice model, as a run builds them: the tuners driving the tabulated
//! lattice kernels. Their steps are the tabulated kernels at the tuner's parameters, step for
//! step (retuned tables equal fresh ones); the tuned kernels are exactly invariant by
//! enumeration; and the kept phase samples π from an exact start.

use langevin_core::binary::{
    BinaryChain, LatticeDmala, LatticeDula, LatticeProposal, PortablePasses,
};
use langevin_core::models::{Dims, IsingLattice};
use langevin_core::tuning::{AbTuner, AcsTuner};
use langevin_core::{Binary, BinaryTarget, Chain, Kernel, StepReport};
use langevin_std::binary::BinaryModel;
use langevin_std::kernels::{BoxedKernel, ForTarget, LatticeAb, LatticeAcs};
use langevin_std::samplers::{RunShape, Sampler};
use langevin_tests::ChainBox;
use langevin_tests::discrete::{
    assert_invariant, check_exact_start, index_of_binary, mh_matrix, normalise, tabulate_binary_u,
};
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

fn lattice(rows: usize, cols: usize, coupling: f32, field: f32, periodic: bool) -> IsingLattice {
    IsingLattice::with_dims(Dims { rows, cols }, coupling, field, periodic).unwrap()
}

/// A run's kernel for `spec` on `model`, as `sample` builds it.
fn run_kernel(
    spec: Sampler,
    model: &IsingLattice,
    shape: &RunShape,
) -> BoxedKernel<Binary, IsingLattice> {
    spec.kernel_for_model::<ForTarget<IsingLattice>>(&BinaryModel::Lattice(*model), shape)
        .unwrap()
}

/// One step of the tabulated kernel at `(a, b)` built afresh (adjusted or not) on a copy of the
/// stream; the state and report it gives.
fn fresh_step(
    model: &mut IsingLattice,
    x: &[u8],
    (a, b): (f64, f64),
    adjusted: bool,
    rng: &mut Xoshiro256PlusPlus,
) -> (Vec<u8>, StepReport) {
    let p = LatticeProposal::new(model, a, b).unwrap();
    let mut bufs = ChainBox::new(x);
    let mut chain = BinaryChain::new(bufs.buffers(), model).unwrap();
    let report = if adjusted {
        LatticeDmala::new(p).step_with(&mut chain, rng, &PortablePasses)
    } else {
        LatticeDula::new(p).step_with(&mut chain, rng, &PortablePasses)
    }
    .unwrap();
    (chain.state().to_vec(), report)
}

/// The run's AB kernel on a lattice is the AB tuner's adaptation with each step the tabulated
/// DMALA at the tuner's current `(a, b)`, built afresh: a twin tuner fed the replayed steps'
/// jumps asks for the same parameters throughout, through tuning (where they change every
/// probe) and after; states and reports agree bit for bit.
#[test]
fn lattice_ab_is_the_tuner_driving_fresh_tabulated_steps() {
    let mut model = lattice(6, 6, 0.4407, 0.05, true);
    let shape = RunShape {
        dim: 36,
        burn_in: 1_500,
        steps: 1_000,
    };
    let mut settings = langevin_core::tuning::AbSettings::default();
    settings.budget = shape.burn_in;
    let mut twin = AbTuner::new(settings).unwrap();
    let mut kernel = LatticeAb::new(twin, &model).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
    let x0: Vec<u8> = (0..36).map(|_| (rng.next_u32() & 1) as u8).collect();
    let mut bufs = ChainBox::new(&x0);
    let mut target = model;
    let mut chain = BinaryChain::new(bufs.buffers(), &mut target).unwrap();
    let mut seen = std::collections::BTreeSet::new();
    for t in 0..shape.burn_in + shape.steps {
        let ab = twin.current();
        seen.insert((ab.0.to_bits(), ab.1.to_bits()));
        let mut replay = rng.clone();
        let (y, expect) = fresh_step(&mut model, chain.state(), ab, true, &mut replay);
        let report = kernel.step(&mut target, &mut chain, &mut rng).unwrap();
        assert_eq!(format!("{report:?}"), format!("{expect:?}"), "step {t}");
        assert_eq!(chain.state(), &y[..], "step {t}");
        assert_eq!(rng.next_u64(), replay.next_u64(), "step {t}: stream");
        twin.observe(u64::from(report.accepted_flips()));
        assert_eq!(kernel.tuner().report(), twin.report(), "step {t}");
    }
    assert!(twin.is_frozen());
    assert!(
        seen.len() > 5,
        "the tuning moved (a, b): {} values",
        seen.len()
    );
}

/// The run's ACS kernel on a lattice is the ACS tuner's adaptation with each step the
/// tabulated kernel at the tuner's action, built afresh (DULA for its unadjusted burn-in): a
/// twin tuner fed the replayed steps' acceptance probabilities asks for the same actions
/// throughout, and in the kept phase the cached kernels of the cycle are the schedule's,
/// position by position; states and reports agree bit for bit.
#[test]
fn lattice_acs_is_the_tuner_driving_fresh_tabulated_steps() {
    let mut model = lattice(6, 6, 0.4407, 0.05, true);
    let mut settings = langevin_core::tuning::AcsSettings::default();
    settings.total_steps = 12_000;
    let mut twin = AcsTuner::new(settings).unwrap();
    let mut kernel = LatticeAcs::new(twin, &model).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(6);
    let x0: Vec<u8> = (0..36).map(|_| (rng.next_u32() & 1) as u8).collect();
    let mut bufs = ChainBox::new(&x0);
    let mut target = model;
    let mut chain = BinaryChain::new(bufs.buffers(), &mut target).unwrap();
    let (mut unadjusted, mut frozen) = (0, 0);
    for t in 0..3_000 {
        let act = twin.action();
        unadjusted += u32::from(!act.adjusted);
        frozen += u32::from(twin.is_frozen());
        let mut replay = rng.clone();
        let (y, expect) = fresh_step(
            &mut model,
            chain.state(),
            (act.step, act.balance),
            act.adjusted,
            &mut replay,
        );
        let report = kernel.step(&mut target, &mut chain, &mut rng).unwrap();
        assert_eq!(format!("{report:?}"), format!("{expect:?}"), "step {t}");
        assert_eq!(chain.state(), &y[..], "step {t}");
        assert_eq!(rng.next_u64(), replay.next_u64(), "step {t}: stream");
        twin.observe(if act.adjusted {
            AcsTuner::acceptance_probability(&report)
        } else {
            1.0
        });
        assert_eq!(kernel.tuner().report(), twin.report(), "step {t}");
    }
    assert!(unadjusted > 0, "the unadjusted burn-in was exercised");
    assert!(
        frozen > 200,
        "the kept phase was exercised ({frozen} steps)"
    );
}

/// The enumerated transition matrix of the tabulated DMALA at `(a, b)`: `π`-invariant and
/// reversible to 1e-12 (sums of at most 2^9 terms of size ≤ 1; see `lattice_kernel.rs`).
fn assert_exact(model: &IsingLattice, (a, b): (f64, f64)) {
    let mut m = *model;
    let (states, log_pi) = tabulate_binary_u(&mut m);
    let pi = normalise(&log_pi);
    let p = LatticeProposal::new(model, a, b).unwrap();
    let matrix = mh_matrix(&log_pi, |i, j| p.log_q(&states[i], &states[j]).unwrap());
    assert_invariant(&pi, &matrix, 1e-12, true);
}

/// A run's kernel tuned to the end of its burn-in on one chain of `model`; returns it with
/// the tuned parameters the run reports.
fn tuned(
    spec: Sampler,
    model: &IsingLattice,
    shape: &RunShape,
    seed: u64,
) -> (BoxedKernel<Binary, IsingLattice>, serde_json::Value) {
    let mut kernel = run_kernel(spec, model, shape);
    let d = model.dim();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let x0: Vec<u8> = (0..d).map(|_| (rng.next_u32() & 1) as u8).collect();
    let mut bufs = ChainBox::new(&x0);
    let mut target = *model;
    let mut chain: Chain<'_, Binary> = BinaryChain::new(bufs.buffers(), &mut target).unwrap();
    let mut steps = 0;
    while kernel.is_tuning() {
        kernel.step(&mut target, &mut chain, &mut rng).unwrap();
        steps += 1;
        assert!(steps <= shape.burn_in + shape.steps, "tuning ends");
    }
    kernel.stop_tuning();
    let report = kernel.tuned().unwrap();
    (kernel, report)
}

/// The kept phase of AB and ACS on small lattices (3×3 periodic with a field, 2×4 open): the
/// tuned kernels (AB's `(a, b)`, each of ACS's cycle) are exactly invariant by enumeration,
/// and the run's kernel samples π. Exact start: `x0 ~ π` by enumeration, then 1 and 10 steps of
/// the run's tuned kernel (ACS: continuing its cycle from wherever the previous replicate left
/// it, so every position is exercised), 200,000 replicates; the final states are compared
/// with π by a pooled chi-square test and a TV bound, each at false-positive rate 1e-6
/// (`langevin_tests::discrete::assert_matches`).
#[test]
fn tuned_lattice_ab_and_acs_sample_pi() {
    let models = [
        lattice(3, 3, 0.4407, 0.1, true),
        lattice(2, 4, -0.6, 0.3, false),
    ];
    let shape = RunShape {
        dim: 9,
        burn_in: 2_000,
        steps: 20_000,
    };
    for (case, model) in models.iter().enumerate() {
        let (log_pi, d) = {
            let mut m = *model;
            (tabulate_binary_u(&mut m).1, model.dim())
        };
        let pi = normalise(&log_pi);
        let specs = [
            Sampler::named("ab", |p| p.step = 0.1).unwrap(),
            Sampler::named("acs", |p| p.a_ceil = 5.0).unwrap(),
        ];
        for (k, spec) in specs.into_iter().enumerate() {
            let (mut kernel, report) = tuned(spec, model, &shape, 30 + case as u64);
            assert!(
                kernel.name().contains("tabulated lattice"),
                "{}",
                kernel.name()
            );
            if spec.name() == "ab" {
                let ab = (
                    report["step"].as_f64().unwrap(),
                    report["balance"].as_f64().unwrap(),
                );
                assert_exact(model, ab);
            } else {
                let steps = report["steps"].as_array().unwrap();
                let balances = report["balances"].as_array().unwrap();
                assert_eq!(steps.len(), 20);
                let cycle: std::collections::BTreeSet<(u64, u64)> = steps
                    .iter()
                    .zip(balances)
                    .map(|(a, b)| (a.as_f64().unwrap().to_bits(), b.as_f64().unwrap().to_bits()))
                    .collect();
                for (a, b) in cycle {
                    assert_exact(model, (f64::from_bits(a), f64::from_bits(b)));
                }
            }
            let mut target = *model;
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(50 + 2 * case as u64 + k as u64);
            check_exact_start(
                &format!("{} on case {case}", spec.name()),
                &pi,
                200_000,
                &mut rng,
                |x0, steps, rng| {
                    let mut bufs = ChainBox::new(&langevin_tests::state(x0, d));
                    let mut chain = BinaryChain::new(bufs.buffers(), &mut target).unwrap();
                    for _ in 0..steps {
                        kernel.step(&mut target, &mut chain, rng).unwrap();
                    }
                    index_of_binary(chain.state())
                },
            );
        }
    }
}
