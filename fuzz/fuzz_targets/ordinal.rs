//! The ordinal proposal (windowed or not, preconditioned or not) and its DULA and DMALA kernels
//! on a target with arbitrary (tabled) energies, gradients and errors over `{0, …, S−1}^d`, the
//! random stream from the input. Checks that the constructors accept exactly the valid
//! parameters; that every draw stays in range and within the window, lists exactly the changed
//! coordinates, reports the L1 jump, and has a `log q` that is not positive and equals the
//! proposal's `log_q` bit for bit; that every step does exactly what an independent replay of
//! it from a clone of the random stream says (report bit for bit, next state, jump, `⌈d/2⌉ + 1`
//! words), whichever way it is called; the chain invariants of the label driver after every step
//! and reset; and that the same input gives the same output.
#![no_main]

use langevin_core::ordinal::{OrdinalDomain, OrdinalProposal};
use langevin_fuzz::labels::{self, LabelSetup};
use langevin_fuzz::{ByteRng, Input, valid_params};

fn run(data: &[u8]) -> Vec<u64> {
    let mut input = Input::new(data);
    let setup = LabelSetup::read(&mut input, false, 12, 12, 16);
    let d = setup.d;
    let s = setup.s;
    let step = input.f64();
    let balance = input.f64();
    let window = match input.u8() {
        0..=127 => None,
        b => Some(u16::from(b & 7) * if b >= 250 { 1000 } else { 1 }),
    };
    let pre: Option<Vec<f32>> = input
        .u8()
        .is_multiple_of(4)
        .then(|| (0..d).map(|_| input.f32()).collect());
    let metropolis = input.bool();
    let rng = ByteRng::new(input.rest());

    let p = OrdinalProposal::new(step, balance);
    assert_eq!(p.is_ok(), valid_params(step, balance), "{step} {balance}");
    let Ok(mut p) = p else { return Vec::new() };
    if let Some(w) = window {
        let q = p.windowed(w);
        assert_eq!(q.is_ok(), w != 0);
        let Ok(q) = q else { return Vec::new() };
        assert_eq!(q.window(), Some(w));
        p = q;
    }
    let Some(p) =
        labels::checked_preconditioned(p, step, pre.as_deref(), |p, pre| p.preconditioned(pre))
    else {
        return Vec::new();
    };
    assert_eq!(
        (p.step().to_bits(), p.balance().to_bits()),
        (step.to_bits(), balance.to_bits())
    );

    let propose = |x: &[u16], g: &[f32], y: &mut [u16], c: &mut [u32], r: &mut ByteRng<'_>| {
        let drawn = p.propose(x, g, s, y, c, r).expect("consistent lengths");
        if let Some(w) = p.window() {
            assert!(
                x.iter().zip(y.iter()).all(|(&a, &b)| a.abs_diff(b) <= w),
                "move beyond the window"
            );
        }
        // Mismatched lengths are refused.
        if d > 1 {
            assert!(p.log_q(x, &g[..d - 1], s, y).is_err());
        }
        (drawn.changed, drawn.jump, drawn.log_q)
    };
    let log_q = |x: &[u16], g: &[f32], y: &[u16]| p.log_q(x, g, s, y).expect("consistent lengths");
    labels::drive_balanced::<OrdinalDomain, _>(setup, rng, p, metropolis, &propose, &log_q)
}

langevin_fuzz::deterministic_fuzz_target!(run);
