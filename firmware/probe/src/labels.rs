//! The label domains: ordinal and categorical chains, proposals and kernels, the label
//! baselines (Gibbs, GWG) and the tuners as label kernels, on a target whose dimension, number
//! of values, outputs and errors are all opaque.

use crate::OpaqueError;
use core::hint::black_box;
use langevin_core::baselines::{Balancing, Gibbs, Gwg, LocallyBalanced, Scan};
use langevin_core::binary::{StepError, StepReport};
use langevin_core::categorical::{
    CategoricalChain, CategoricalConditional, CategoricalProposal, CategoricalStorage,
    CategoricalTarget,
};
use langevin_core::domain::LabelDomain;
use langevin_core::kernel::{Balanced, Dmala, Dula, Proposal};
use langevin_core::ordinal::{
    LabelBuffers, LabelMove, OrdinalChain, OrdinalConditional, OrdinalProposal, OrdinalStorage,
    OrdinalTarget,
};
use langevin_core::second_order::{
    OrdinalAbSecondOrder, SparseW, TrickParams, ordinal_scratch_len,
};
use langevin_core::tuning::{
    AbSettings, AbTuner, AcceptanceSettings, AcceptanceTuner, Acs, AcsSchedule, AcsSettings,
    AcsTuner, ScaledDmala, cyclical_balance, cyclical_step,
};
use langevin_core::{Chain, Eval, Kernel};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Largest `d` and `S` the buffers allow; the lengths actually passed are opaque.
const D: usize = 16;
const S: usize = 8;

/// A label target whose every answer is opaque.
pub(crate) struct OpaqueLabels;

impl OpaqueLabels {
    fn eval(x: &[u16], grad: &mut [f32]) -> Result<f64, OpaqueError> {
        black_box(x);
        for g in grad.iter_mut() {
            *g = black_box(0.0);
        }
        if black_box(false) {
            return Err(OpaqueError(black_box(true)));
        }
        Ok(black_box(0.0))
    }

    fn cond(x: &[u16], i: usize, out: &mut [f64]) -> Result<(), OpaqueError> {
        black_box((x, i));
        for o in out.iter_mut() {
            *o = black_box(0.0);
        }
        if black_box(false) {
            return Err(OpaqueError(black_box(true)));
        }
        Ok(())
    }
}

/// The ordinal and categorical traits read the opaque target alike.
macro_rules! opaque_label_target {
    ($($target:ident + $conditional:ident),+) => {$(
        impl $target for OpaqueLabels {
            type Error = OpaqueError;
            fn dim(&self) -> usize {
                black_box(D)
            }
            fn states(&self) -> usize {
                black_box(S)
            }
            fn log_density_and_grad(
                &mut self,
                x: &[u16],
                grad: &mut [f32],
            ) -> Result<f64, OpaqueError> {
                Self::eval(x, grad)
            }
            fn log_density_and_grad_after(
                &mut self,
                mv: &LabelMove<'_>,
                grad: &mut [f32],
            ) -> Result<f64, OpaqueError> {
                black_box(mv);
                Self::eval(mv.to, grad)
            }
            fn commit(&mut self) {
                black_box(());
            }
        }

        impl $conditional for OpaqueLabels {
            fn conditional(
                &mut self,
                x: &[u16],
                i: usize,
                out: &mut [f64],
            ) -> Result<(), OpaqueError> {
                Self::cond(x, i, out)
            }
            fn commit_change(&mut self, x: &[u16], i: usize, old: u16) {
                black_box((x, i, old));
            }
        }
    )+};
}

opaque_label_target!(
    OrdinalTarget + OrdinalConditional,
    CategoricalTarget + CategoricalConditional
);

/// Label buffers of opaque lengths.
struct Bufs {
    x: [u16; D],
    grad: [f32; D * S],
    x_proposal: [u16; D],
    grad_proposal: [f32; D * S],
    changed: [u32; D],
    scratch: [f64; S],
}

impl Bufs {
    const fn new() -> Self {
        Self {
            x: [0; D],
            grad: [0.0; D * S],
            x_proposal: [0; D],
            grad_proposal: [0.0; D * S],
            changed: [0; D],
            scratch: [0.0; S],
        }
    }

    fn buffers(&mut self) -> LabelBuffers<'_> {
        LabelBuffers {
            x: black_box(&mut self.x[..]),
            grad: black_box(&mut self.grad[..]),
            x_proposal: black_box(&mut self.x_proposal[..]),
            grad_proposal: black_box(&mut self.grad_proposal[..]),
            changed: black_box(&mut self.changed[..]),
            scratch: black_box(&mut self.scratch[..]),
        }
    }
}

fn seen(r: Result<StepReport, StepError<OpaqueError>>) {
    if let Ok(r) = r {
        black_box((r.accepted, r.accepted_flips(), r.log_accept_ratio));
    }
}

/// Every ordinal entry point.
#[inline(never)]
pub fn ordinal(rng: &mut Xoshiro256PlusPlus) {
    let t = &mut OpaqueLabels;
    let Ok(p) = OrdinalProposal::new(black_box(0.5), black_box(0.5)) else {
        return;
    };
    let windowed = p.windowed(black_box(2));
    let pre = [1.0f32; D];
    let preconditioned = p.preconditioned(black_box(&pre[..]));
    black_box((p.step(), p.balance(), p.window(), p.preconditioner()));

    let mut s = Bufs::new();
    let b = s.buffers();
    let states = black_box(S);
    if let Ok(dr) = p.propose(b.x, b.grad, states, b.x_proposal, b.changed, rng) {
        black_box(dr);
    }
    black_box(p.log_q(b.x, b.grad, states, b.x_proposal).is_ok());
    for q in [windowed, preconditioned].into_iter().flatten() {
        black_box(
            q.propose(b.x, b.grad, states, b.x_proposal, b.changed, rng)
                .is_ok(),
        );
        black_box(q.log_q(b.x, b.grad, states, b.x_proposal).is_ok());
    }

    let mut bufs = Bufs::new();
    let Ok(mut chain) = OrdinalChain::new_ordinal(bufs.buffers(), t) else {
        return;
    };
    let mut storage = OrdinalStorage::<4, 5>::new(black_box([0, 1, 2, 3]));
    black_box(OrdinalChain::new_ordinal(storage.buffers(), t).is_ok());
    label_kernels(p, OrdinalProposal::step, t, &mut chain, rng);
    for q in [windowed, preconditioned].into_iter().flatten() {
        label_kernels(q, OrdinalProposal::step, t, &mut chain, rng);
    }
    let mut gibbs = Gibbs::new(black_box(Scan::Random));
    let mut systematic = Gibbs::new(black_box(Scan::Systematic));
    black_box(gibbs.scan());
    for g in [&mut gibbs, &mut systematic] {
        seen(Kernel::step(g, t, &mut chain, rng));
    }
    let mut raw = Bufs::new();
    let r = raw.buffers();
    black_box(gibbs.update_ordinal(t, r.x, r.scratch, rng).is_ok());
    black_box(systematic.sweep_ordinal(t, r.x, r.scratch, rng).is_ok());
    label_tuners(t, &mut chain, rng);
    ordinal_second_order(t, &mut chain, rng);
    reset_and_read(t, &mut chain);
}

/// DULA and DMALA on proposal `p` of either label domain; `step` reads the proposal's step
/// (an inherent method of each domain's proposal).
fn label_kernels<L, P>(
    p: P,
    step: fn(&P) -> f64,
    t: &mut OpaqueLabels,
    chain: &mut Chain<'_, L>,
    rng: &mut Xoshiro256PlusPlus,
) where
    L: LabelDomain,
    P: Proposal<L> + Copy,
    OpaqueLabels: Eval<L, Error = OpaqueError>,
{
    let mut dula = Dula::new(p);
    let mut dmala = Dmala::new(p);
    black_box((step(dula.proposal()), step(dmala.proposal())));
    for _ in 0..black_box(2) {
        seen(dula.step(t, chain, rng));
        seen(dmala.step(t, chain, rng));
        if let Ok((r, jump)) = dmala.step_with_jump(t, chain, rng) {
            black_box((r.accepted, jump));
        }
        seen(Kernel::step(&mut dula, t, chain, rng));
        seen(Kernel::step(&mut dmala, t, chain, rng));
    }
}

/// The ordinal second-order kernel, with dense and sparse `W`.
fn ordinal_second_order(
    t: &mut OpaqueLabels,
    chain: &mut OrdinalChain<'_>,
    rng: &mut Xoshiro256PlusPlus,
) {
    let w = [0.0f32; D * D];
    let diag = [1.0f32; D];
    let a = [0.0f32; D * D];
    let (offsets, columns, values) = ([0u32; D + 1], [0u32; D], [0.0f32; D]);
    let dense = TrickParams::new(
        black_box(&w[..]),
        black_box(&diag[..]),
        black_box(&a[..]),
        black_box(0.5),
        black_box(0.5),
    );
    let sparse = SparseW::new(
        black_box(&offsets[..]),
        black_box(&columns[..]),
        black_box(&values[..]),
    )
    .and_then(|w| {
        black_box((
            w.dim(),
            w.nnz(),
            w.row(black_box(1)),
            w.get(black_box(1), black_box(2)),
        ));
        TrickParams::with_sparse_w(
            w,
            black_box(&diag[..]),
            black_box(&a[..]),
            black_box(0.5),
            black_box(0.5),
        )
    });
    let mut scratch = [0.0f64; ordinal_scratch_len(D, S)];
    let mut state = [0u16; D];
    for params in [dense, sparse].into_iter().flatten() {
        let Ok(mut kernel) = OrdinalAbSecondOrder::new(
            params,
            black_box(S),
            black_box(&mut scratch[..]),
            black_box(&mut state[..]),
        ) else {
            continue;
        };
        black_box((kernel.params().dim(), kernel.states()));
        black_box(kernel.set_params(params).is_ok());
        for _ in 0..black_box(2) {
            seen(kernel.step(t, chain, rng));
            if let Ok((r, jump)) = kernel.step_with_jump(t, chain, rng) {
                black_box((r.accepted, jump));
            }
            seen(Kernel::step(&mut kernel, t, chain, rng));
        }
        let mut s = Bufs::new();
        let b = s.buffers();
        let u = [0.0f64; D];
        if let Ok(tr) = kernel.transition(b.x, b.grad, b.x_proposal, b.grad_proposal, &u[..]) {
            black_box(tr);
        }
    }
}

/// The tuners as kernels of either label domain, and the AB and acceptance tuners' other
/// methods.
fn label_tuners<L>(t: &mut OpaqueLabels, chain: &mut Chain<'_, L>, rng: &mut Xoshiro256PlusPlus)
where
    L: Balanced + ScaledDmala + LabelDomain,
    OpaqueLabels: Eval<L, Error = OpaqueError>,
{
    if let Some(mut ab) = ab_tuner() {
        seen(Kernel::step(&mut ab, t, chain, rng));
        ab_methods(&mut ab);
    }
    if let Some(mut acs) = acs() {
        seen(Kernel::step(&mut acs, t, chain, rng));
    }
    if let Some(mut tuner) = acs_tuner() {
        seen(Kernel::step(&mut tuner, t, chain, rng));
    }
    if let Some(mut tuner) = acceptance_tuner() {
        seen(Kernel::step(&mut tuner, t, chain, rng));
        acceptance_methods::<L>(&mut tuner);
    }
}

/// A reset of a chain of either label domain, then its accessors.
fn reset_and_read<L>(t: &mut OpaqueLabels, chain: &mut Chain<'_, L>)
where
    L: LabelDomain,
    OpaqueLabels: Eval<L, Error = OpaqueError>,
{
    let reset_to = [0u16; D];
    black_box(chain.reset(black_box(&reset_to[..]), t).is_ok());
    black_box((
        chain.dim(),
        chain.states(),
        chain.state(),
        chain.grad(),
        chain.log_density(),
    ));
}

/// Every categorical entry point.
#[inline(never)]
pub fn categorical(rng: &mut Xoshiro256PlusPlus) {
    let t = &mut OpaqueLabels;
    let Ok(p) = CategoricalProposal::new(black_box(0.5), black_box(0.5)) else {
        return;
    };
    let pre = [1.0f32; D];
    let preconditioned = p.preconditioned(black_box(&pre[..]));
    black_box((p.step(), p.balance(), p.preconditioner()));

    let mut s = Bufs::new();
    let b = s.buffers();
    let states = black_box(S);
    black_box(
        p.propose(b.x, b.grad, states, b.x_proposal, b.changed, b.scratch, rng)
            .is_ok(),
    );
    black_box(p.log_q(b.x, b.grad, states, b.x_proposal).is_ok());
    if let Ok(q) = preconditioned {
        black_box(
            q.propose(b.x, b.grad, states, b.x_proposal, b.changed, b.scratch, rng)
                .is_ok(),
        );
        black_box(q.log_q(b.x, b.grad, states, b.x_proposal).is_ok());
    }
    black_box(Gwg::log_pick_categorical(b.x, b.grad, states, black_box(3), black_box(1)).is_ok());

    let mut bufs = Bufs::new();
    let Ok(mut chain) = CategoricalChain::new_categorical(bufs.buffers(), t) else {
        return;
    };
    let mut storage = CategoricalStorage::<4, 3>::new(black_box([0, 1, 2, 0]));
    black_box(CategoricalChain::new_categorical(storage.buffers(), t).is_ok());
    label_kernels(p, CategoricalProposal::step, t, &mut chain, rng);
    if let Ok(q) = preconditioned {
        label_kernels(q, CategoricalProposal::step, t, &mut chain, rng);
    }
    let mut gibbs = Gibbs::new(black_box(Scan::Random));
    let mut systematic = Gibbs::new(black_box(Scan::Systematic));
    for g in [&mut gibbs, &mut systematic] {
        seen(Kernel::step(g, t, &mut chain, rng));
    }
    seen(Kernel::step(&mut Gwg, t, &mut chain, rng));
    let mut weights = [0.0f64; 64];
    let mut lb = LocallyBalanced::new(black_box(Balancing::Barker), &mut weights[..]);
    seen(Kernel::step(&mut lb, t, &mut chain, rng));
    crate::path::path_kernels(t, &mut chain, rng);
    if let Ok(p) = langevin_core::dlmc::CategoricalDlmcProposal::new(black_box(0.4)) {
        let mut r = Bufs::new();
        let b = r.buffers();
        let mut scratch = [0.0f64; 8];
        black_box(
            p.log_q(
                b.x,
                b.grad,
                black_box(S),
                b.x_proposal,
                black_box(&mut scratch[..]),
            )
            .is_ok(),
        );
        crate::path::dlmc_kernels(p, t, &mut chain, rng);
    }
    let mut raw = Bufs::new();
    let r = raw.buffers();
    black_box(gibbs.update_categorical(t, r.x, r.scratch, rng).is_ok());
    black_box(systematic.sweep_categorical(t, r.x, r.scratch, rng).is_ok());
    label_tuners(t, &mut chain, rng);
    reset_and_read(t, &mut chain);
}

/// An acceptance-targeting DMALA tuner with opaque settings.
pub fn acceptance_tuner() -> Option<AcceptanceTuner> {
    let mut s = AcceptanceSettings::default();
    s.initial_changes = black_box(s.initial_changes);
    s.target_acceptance = black_box(s.target_acceptance);
    s.gain = black_box(s.gain);
    s.min_changes = black_box(s.min_changes);
    s.budget = black_box(s.budget);
    s.window = black_box(s.window);
    if black_box(false) {
        return AcceptanceTuner::fixed(black_box(0.5), s).ok();
    }
    AcceptanceTuner::new(s).ok()
}

/// The acceptance tuner's methods besides its steps.
pub fn acceptance_methods<D: ScaledDmala>(k: &mut AcceptanceTuner) {
    black_box((
        k.is_frozen(),
        k.report_for::<D>(),
        k.log_scale(),
        k.settings(),
    ));
    if black_box(false) {
        k.freeze();
    }
}

/// An AB tuner with opaque settings.
pub fn ab_tuner() -> Option<AbTuner> {
    let mut s = AbSettings::default();
    s.step = black_box(s.step);
    s.balance = black_box(s.balance);
    s.rate = black_box(s.rate);
    s.decay = black_box(s.decay);
    s.probe_steps = black_box(s.probe_steps);
    s.budget = black_box(s.budget);
    s.min_rate = black_box(s.min_rate);
    s.tune_step = black_box(s.tune_step);
    s.tune_balance = black_box(s.tune_balance);
    s.window = black_box(s.window);
    black_box(s.validate().is_ok());
    AbTuner::new(s).ok()
}

/// The AB tuner's methods besides its steps.
pub fn ab_methods(ab: &mut AbTuner) {
    black_box((ab.is_frozen(), ab.report(), ab.current()));
    if black_box(false) {
        ab.freeze();
    }
    black_box(ab.current());
}

/// An ACS kernel on an opaque schedule.
pub fn acs() -> Option<Acs> {
    let (k, len) = (black_box(5u64), black_box(7u32));
    black_box((
        cyclical_step(k, len, black_box(2.0), black_box(0.1)),
        cyclical_balance(k, len, black_box(0.9), black_box(0.5)),
    ));
    let balances = [0.9f64, 0.7, 0.5];
    let schedule = if black_box(true) {
        AcsSchedule::new(black_box(2.0), black_box(0.1), black_box(&balances[..]))
    } else {
        AcsSchedule::naive(
            black_box(2.0),
            black_box(0.1),
            black_box(0.9),
            black_box(0.5),
            black_box(7),
        )
    }
    .ok()?;
    black_box((
        schedule.at(black_box(5)),
        schedule.a_max(),
        schedule.a_min(),
        schedule.cycle(),
        schedule.balances(),
    ));
    let acs = Acs::new(schedule).with_window(black_box(3));
    black_box((acs.schedule().cycle(), acs.position()));
    Some(acs)
}

/// An ACS tuner with opaque settings, its methods exercised.
pub fn acs_tuner() -> Option<AcsTuner> {
    let mut s = AcsSettings::default();
    s.a_ceil = black_box(s.a_ceil);
    s.a_floor = black_box(s.a_floor);
    s.b_max = black_box(s.b_max);
    s.b_min = black_box(s.b_min);
    s.target = black_box(s.target);
    s.zeta = black_box(s.zeta);
    s.cycle = black_box(s.cycle);
    s.total_steps = black_box(s.total_steps);
    s.budget_fraction = black_box(s.budget_fraction);
    s.steps_per_estimate = black_box(s.steps_per_estimate);
    s.step_candidates = black_box(s.step_candidates);
    s.balance_candidates = black_box(s.balance_candidates);
    s.burn_in_unadjusted = black_box(s.burn_in_unadjusted);
    s.burn_in_adjusted = black_box(s.burn_in_adjusted);
    s.window = black_box(s.window);
    s.fixed_steps = black_box(s.fixed_steps);
    black_box((s.budget(), s.validate().is_ok()));
    let mut tuner = AcsTuner::new(s).ok()?;
    black_box((
        tuner.planned_steps(),
        tuner.is_frozen(),
        tuner.report(),
        tuner.settings().cycle,
        tuner.action(),
    ));
    let report = StepReport {
        accepted: black_box(true),
        proposed_flips: black_box(3),
        log_accept_ratio: black_box(-0.5),
        rejection: None,
        evaluations: black_box(1),
    };
    tuner.observe(AcsTuner::acceptance_probability(black_box(&report)));
    tuner.observe(black_box(0.4));
    Some(tuner)
}
