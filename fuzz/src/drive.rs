//! A driver for any binary kernel on the [`Tabled`] target: it starts a chain at a state from
//! the input (checking the start against the table), calls the kernel for the steps the input
//! asks for, resets the chain where the input says so, and checks after every step what holds
//! for every binary kernel: the state is binary and the cached `U` and `∇U` are finite and equal
//! the table's; a failed step was unrecoverable and changed nothing; a rejected step changed
//! nothing; the coordinates that moved are the report's accepted flips; an invalid proposal is
//! reported as rejected with ratio `−∞`; the statistics stay finite.

use crate::{ByteRng, Input, Tabled};
use langevin_core::binary::{
    BinaryChain, ChainBuffers, InitError, Rejection, StepError, StepReport,
};
use langevin_core::stats::ChainStats;

/// `ln 2^-54`, rounded down: no open uniform has a smaller logarithm, so a Metropolis test
/// never accepts a ratio below this.
pub const MIN_LOG_U: f64 = -38.0;

/// The part of a case every binary kernel shares.
#[derive(Clone, Debug)]
pub struct BinarySetup {
    /// Dimension.
    pub d: usize,
    /// Initial state (may hold invalid entries).
    pub x0: Vec<u8>,
    /// The target.
    pub target: Tabled,
    /// Per step, the state to reset to afterwards, if any.
    pub resets: Vec<Option<Vec<u8>>>,
}

impl BinarySetup {
    /// Reads a case of dimension `1..=max_d` with `1..=max_steps` steps.
    pub fn read(input: &mut Input<'_>, max_d: usize, max_steps: usize) -> Self {
        let d = 1 + usize::from(input.u8()) % max_d;
        let x0: Vec<u8> = (0..d).map(|_| input.bit()).collect();
        let target = Tabled::read(d, input);
        let steps = 1 + usize::from(input.u8()) % max_steps;
        let resets = (0..steps)
            .map(|_| (input.u8().is_multiple_of(8)).then(|| (0..d).map(|_| input.bit()).collect()))
            .collect();
        Self {
            d,
            x0,
            target,
            resets,
        }
    }
}

/// A bitwise snapshot of a binary chain.
pub fn snapshot(chain: &BinaryChain<'_>) -> (Vec<u8>, u64, Vec<u32>) {
    (
        chain.state().to_vec(),
        chain.log_density().to_bits(),
        chain.grad().iter().map(|g| g.to_bits()).collect(),
    )
}

/// The chain caches exactly what the target gives at its state, finite, and the state is binary.
pub fn check_cache(chain: &BinaryChain<'_>, target: &Tabled) {
    assert!(chain.state().iter().all(|&v| v <= 1), "state out of range");
    let (u, g) = target
        .at(chain.state())
        .expect("the current state evaluated without error");
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
pub type StepFn<'k> = dyn FnMut(
        usize,
        &mut Tabled,
        &mut BinaryChain<'_>,
        &mut ByteRng<'_>,
    ) -> Result<StepReport, StepError<crate::TableError>>
    + 'k;

/// Runs `setup` with `step` and the random stream `rng`; returns a transcript.
pub fn drive(mut setup: BinarySetup, mut rng: ByteRng<'_>, step: &mut StepFn<'_>) -> Vec<u64> {
    let d = setup.d;
    let target = &mut setup.target;
    let x0 = setup.x0.clone();
    let mut out = Vec::new();
    let (mut x, mut grad, mut xp, mut gp, mut fl) = (
        x0.clone(),
        vec![0.0f32; d],
        vec![0u8; d],
        vec![0.0f32; d],
        vec![0u32; d],
    );
    let buffers = ChainBuffers {
        x: &mut x,
        grad: &mut grad,
        x_proposal: &mut xp,
        grad_proposal: &mut gp,
        flipped: &mut fl,
    };
    let started = BinaryChain::new(buffers, &mut *target);
    let bad_entry = x0.iter().position(|&v| v > 1);
    match (&started, bad_entry, target.at(&x0)) {
        (Err(InitError::StateOutOfRange { index, .. }), Some(i), _) => {
            assert_eq!(*index, i);
            return out;
        }
        (Err(InitError::Target(e)), None, Err(want)) => {
            assert_eq!(*e, want);
            return out;
        }
        (Err(InitError::NonFinite), None, Ok((u, g))) => {
            assert!(!u.is_finite() || g.iter().any(|v| !v.is_finite()));
            return out;
        }
        (Ok(_), None, Ok((u, g))) => {
            assert!(u.is_finite() && g.iter().all(|v| v.is_finite()));
        }
        (other, _, _) => panic!("unexpected start: {other:?}"),
    }
    let Ok(mut chain) = started else { return out };
    check_cache(&chain, target);

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
                assert_eq!(moved as u32, r.accepted_flips(), "flips taken vs report");
                assert!(r.proposed_flips as usize <= d);
                assert!(r.evaluations <= 1 || r.proposed_flips > 0);
                if let Some(why) = r.rejection {
                    assert!(
                        !r.accepted && r.log_accept_ratio == f64::NEG_INFINITY,
                        "{why:?}"
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
            let bad = x_new.iter().position(|&v| v > 1);
            match (result, bad, target.at(x_new)) {
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
        let s = snapshot(&chain);
        out.push(s.1);
        out.extend(s.0.iter().map(|&v| u64::from(v)));
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
