//! A driver for any kernel on a tabled target ([`Tabled`] for binary chains, [`LabelTabled`]
//! for label chains): it starts a chain at a state from the input (checking the start against
//! the table), calls the kernel for the steps the input asks for, resets the chain where the
//! input says so, and checks after every step what holds for every kernel: the entries are
//! below `S` and the cached `U` and `∇U` are finite and equal the table's; a failed step was unrecoverable and changed nothing; a rejected step changed
//! nothing; the coordinates that moved are the report's accepted flips; an invalid proposal is
//! reported as rejected with ratio `−∞`; the statistics stay finite.

use crate::labels::LabelTabled;
use crate::{ByteRng, Input, OwnedBuffers, TableError, Tabled};
use langevin_core::binary::{Rejection, StepError, StepReport};
use langevin_core::stats::ChainStats;
use langevin_core::target::Eval;
use langevin_core::{Binary, Categorical, Chain, Domain, InitError, Ordinal};

/// `ln 2^-54`, rounded down: no open uniform has a smaller logarithm, so a Metropolis test
/// never accepts a ratio below this.
pub const MIN_LOG_U: f64 = -38.0;

/// A domain with its tabled target: what the driver recomputes to check a chain's cache.
pub trait TabledDomain: Domain {
    /// The tabled target over this domain.
    type Target: Eval<Self, Error = TableError>;
    /// `(U(x), ∇U(x))` or the error at `x`.
    fn at(target: &Self::Target, x: &[Self::Value]) -> Result<(f64, Vec<f32>), TableError>;
    /// The gradient length of the target.
    fn target_grad_len(target: &Self::Target) -> usize;
}

impl TabledDomain for Binary {
    type Target = Tabled;
    fn at(target: &Tabled, x: &[u8]) -> Result<(f64, Vec<f32>), TableError> {
        target.at(x)
    }
    fn target_grad_len(target: &Tabled) -> usize {
        target.dim
    }
}

/// Both label domains read the same tabled target.
macro_rules! tabled_label_domain {
    ($($domain:ident),+) => {$(
        impl TabledDomain for $domain {
            type Target = LabelTabled;
            fn at(target: &LabelTabled, x: &[u16]) -> Result<(f64, Vec<f32>), TableError> {
                target.at(x)
            }
            fn target_grad_len(target: &LabelTabled) -> usize {
                target.grad_len
            }
        }
    )+};
}

tabled_label_domain!(Ordinal, Categorical);

/// The part of a case every kernel of a domain shares (`V` the state entry type).
#[derive(Clone, Debug)]
pub struct Setup<V, T> {
    /// Dimension.
    pub d: usize,
    /// Values per coordinate (2 for binary cases; label cases may hold an invalid count).
    pub s: usize,
    /// Initial state (may hold invalid entries).
    pub x0: Vec<V>,
    /// The target.
    pub target: T,
    /// Per step, the state to reset to afterwards, if any.
    pub resets: Vec<Option<Vec<V>>>,
}

/// The part of a case every binary kernel shares.
pub type BinarySetup = Setup<u8, Tabled>;

impl BinarySetup {
    /// Reads a case of dimension `1..=max_d` with `1..=max_steps` steps.
    pub fn read(input: &mut Input<'_>, max_d: usize, max_steps: usize) -> Self {
        let d = 1 + usize::from(input.u8()) % max_d;
        Self::read_sized(input, d, max_steps)
    }

    /// Reads a case of dimension `d` with `1..=max_steps` steps.
    pub fn read_sized(input: &mut Input<'_>, d: usize, max_steps: usize) -> Self {
        let x0: Vec<u8> = (0..d).map(|_| input.bit()).collect();
        let target = Tabled::read(d, input);
        let resets = read_resets(input, max_steps, |input| {
            (0..d).map(|_| input.bit()).collect()
        });
        Self {
            d,
            s: 2,
            x0,
            target,
            resets,
        }
    }
}

/// Reads `1..=max_steps` optional resets, each drawn by `state`.
pub fn read_resets<V>(
    input: &mut Input<'_>,
    max_steps: usize,
    mut state: impl FnMut(&mut Input<'_>) -> Vec<V>,
) -> Vec<Option<Vec<V>>> {
    let steps = 1 + usize::from(input.u8()) % max_steps;
    (0..steps)
        .map(|_| (input.u8().is_multiple_of(8)).then(|| state(input)))
        .collect()
}

/// A bitwise snapshot of a chain.
pub fn snapshot<D: Domain>(chain: &Chain<'_, D>) -> (Vec<D::Value>, u64, Vec<u32>) {
    (
        chain.state().to_vec(),
        chain.log_density().to_bits(),
        chain.grad().iter().map(|g| g.to_bits()).collect(),
    )
}

/// The chain caches exactly what the target gives at its state, finite, entries below `S`.
pub fn check_cache<D: TabledDomain>(chain: &Chain<'_, D>, target: &D::Target) {
    assert!(
        chain
            .state()
            .iter()
            .all(|&v| Into::<usize>::into(v) < chain.states()),
        "state out of range"
    );
    let (u, g) = D::at(target, chain.state()).expect("the current state evaluated without error");
    assert_eq!(chain.log_density().to_bits(), u.to_bits(), "cached U");
    let cached: Vec<u32> = chain.grad().iter().map(|v| v.to_bits()).collect();
    let fresh: Vec<u32> = g.iter().map(|v| v.to_bits()).collect();
    assert_eq!(cached, fresh, "cached gradient");
    assert!(chain.log_density().is_finite(), "cached U not finite");
    assert!(
        chain.grad().iter().all(|v| v.is_finite()),
        "cached gradient not finite"
    );
}

/// The observable bits of a report.
pub fn report_bits(r: &StepReport) -> [u64; 5] {
    [
        u64::from(r.accepted),
        u64::from(r.proposed_flips),
        r.log_accept_ratio.to_bits(),
        match r.rejection {
            None => 0,
            Some(Rejection::NonFinite) => 1,
            Some(Rejection::TargetError) => 2,
        },
        u64::from(r.evaluations),
    ]
}

/// A step function: step index, target, chain, random stream.
pub type StepFn<'k, D> = dyn FnMut(
        usize,
        &mut <D as TabledDomain>::Target,
        &mut Chain<'_, D>,
        &mut ByteRng<'_>,
    ) -> Result<StepReport, StepError<TableError>>
    + 'k;

/// Runs a binary `setup` with `step` and the random stream `rng`; returns a transcript. Besides
/// [`drive_chain`]'s checks, a step without proposed flips evaluates the target at most once.
pub fn drive(setup: BinarySetup, rng: ByteRng<'_>, step: &mut StepFn<'_, Binary>) -> Vec<u64> {
    drive_chain::<Binary>(setup, rng, &mut |t, target, chain, rng| {
        let result = step(t, target, chain, rng);
        if let Ok(r) = &result {
            assert!(r.evaluations <= 1 || r.proposed_flips > 0);
        }
        result
    })
}

/// Runs `setup` with `step` and the random stream `rng`; returns a transcript. Checks that the
/// chain starts exactly when it must, and after every step and reset the invariants every
/// kernel keeps.
pub fn drive_chain<D: TabledDomain>(
    mut setup: Setup<D::Value, D::Target>,
    mut rng: ByteRng<'_>,
    step: &mut StepFn<'_, D>,
) -> Vec<u64> {
    let (d, s) = (setup.d, setup.s);
    let target = &mut setup.target;
    let x0 = setup.x0.clone();
    let mut out = Vec::new();
    let scratch = if s <= 300 { D::scratch_len(s) } else { 0 };
    let mut owned = OwnedBuffers::with_lengths(&x0, D::target_grad_len(target), scratch);
    let started = Chain::<D>::new(owned.buffers(), &mut *target);
    let valid_s = (2..=65_535).contains(&s);
    let bad_entry = x0.iter().position(|&v| Into::<usize>::into(v) >= s);
    match (&started, valid_s, bad_entry, D::at(target, &x0)) {
        (Err(InitError::States(v)), false, _, _) => {
            assert_eq!(*v, s);
            return out;
        }
        (Err(InitError::Len(_)), true, _, _) if D::ONE_HOT && s > 256 => return out,
        (Err(InitError::StateOutOfRange { index, .. }), true, Some(i), _) => {
            assert_eq!(*index, i);
            return out;
        }
        (Err(InitError::Target(e)), true, None, Err(want)) => {
            assert_eq!(*e, want);
            return out;
        }
        (Err(InitError::NonFinite), true, None, Ok((u, g))) => {
            assert!(!u.is_finite() || g.iter().any(|v| !v.is_finite()));
            return out;
        }
        (Ok(_), true, None, Ok((u, g))) => {
            assert!(u.is_finite() && g.iter().all(|v| v.is_finite()));
        }
        (other, ..) => panic!("unexpected start: {other:?} (S = {s})"),
    }
    let Ok(mut chain) = started else { return out };
    check_cache(&chain, target);
    assert_eq!((chain.dim(), chain.states()), (d, s));

    let mut stats = ChainStats::default();
    for (t, reset) in setup.resets.iter().enumerate() {
        let before = snapshot(&chain);
        match step(t, target, &mut chain, &mut rng) {
            Err(StepError::Target(e)) => {
                assert!(!e.recoverable, "a recoverable error must not stop the step");
                assert_eq!(snapshot(&chain), before, "a failed step changed the chain");
                out.push(u64::MAX);
            }
            Err(StepError::Len(e)) => panic!("length error on a consistent chain: {e}"),
            Err(StepError::Param(e)) => panic!("parameter error from a valid kernel: {e}"),
            Ok(r) => {
                check_cache(&chain, target);
                let moved = before
                    .0
                    .iter()
                    .zip(chain.state())
                    .filter(|(a, b)| a != b)
                    .count();
                assert_eq!(moved as u32, r.accepted_flips(), "moves taken vs report");
                assert!(r.proposed_flips as usize <= d);
                if let Some(why) = r.rejection {
                    assert!(
                        !r.accepted && r.log_accept_ratio == f64::NEG_INFINITY,
                        "{why:?}: {r:?}"
                    );
                }
                if !r.accepted {
                    assert_eq!(
                        snapshot(&chain),
                        before,
                        "a rejected step changed the chain"
                    );
                }
                stats.record(&r);
                out.extend(report_bits(&r));
            }
        }
        if let Some(x_new) = reset {
            let before = snapshot(&chain);
            let result = chain.reset(x_new, &mut *target);
            let bad = x_new.iter().position(|&v| Into::<usize>::into(v) >= s);
            match (result, bad, D::at(target, x_new)) {
                (Err(InitError::StateOutOfRange { index, .. }), Some(i), _) => assert_eq!(index, i),
                (Err(InitError::Target(e)), None, Err(want)) => assert_eq!(e, want),
                (Err(InitError::NonFinite), None, Ok((u, g))) => {
                    assert!(!u.is_finite() || g.iter().any(|v| !v.is_finite()));
                }
                (Ok(()), None, Ok(_)) => assert_eq!(chain.state(), &x_new[..]),
                (other, _, _) => panic!("unexpected reset: {other:?}"),
            }
            if chain.state() != &x_new[..] {
                assert_eq!(
                    snapshot(&chain),
                    before,
                    "a refused reset changed the chain"
                );
            }
            check_cache(&chain, target);
        }
        let snap = snapshot(&chain);
        out.push(snap.1);
        out.extend(snap.0.iter().map(|&v| Into::<usize>::into(v) as u64));
    }
    assert!(stats.accepted <= stats.steps && stats.accepted_flips <= stats.proposed_flips);
    assert!(stats.invalid <= stats.steps);
    for m in [
        stats.acceptance_rate(),
        stats.mean_proposed_flips(),
        stats.mean_accepted_flips(),
    ] {
        assert!(m.is_finite() && m >= 0.0, "statistic {m}");
    }
    assert!(stats.acceptance_rate() <= 1.0);
    out
}

impl langevin_core::baselines::FlipDelta for Tabled {
    fn log_density_delta(&mut self, x: &[u8], i: usize) -> Result<f64, crate::TableError> {
        let (u0, _) = self.at(x)?;
        let mut y = x.to_vec();
        y[i] ^= 1;
        Ok(self.at(&y)?.0 - u0)
    }
}

/// The softmax draw of single-site Gibbs, restated: weights `exp(v − max)` (NaN ignored),
/// the first index whose running sum exceeds `u · total`, `keep` if none.
pub fn draw_softmax(w: &[f64], u: f64, keep: usize) -> usize {
    let m = w
        .iter()
        .fold(f64::NEG_INFINITY, |m, &v| if v > m { v } else { m });
    let e: Vec<f64> = w.iter().map(|&v| libm::exp(v - m)).collect();
    let total: f64 = e
        .iter()
        .fold(0.0, |t, &v| t + if v.is_nan() { 0.0 } else { v });
    let threshold = u * total;
    let mut cum = 0.0f64;
    for (k, &v) in e.iter().enumerate() {
        cum += if v.is_nan() { 0.0 } else { v };
        if cum > threshold {
            return k;
        }
    }
    keep
}
