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
use langevin_fuzz::ByteRng;
use langevin_fuzz::labels::{self, BalancedCase};

fn run(data: &[u8]) -> Vec<u64> {
    let (case, window) = BalancedCase::read(data, false, 12, 12, |input| match input.u8() {
        0..=127 => None,
        b => Some(u16::from(b & 7) * if b >= 250 { 1000 } else { 1 }),
    });
    let (d, s) = (case.run.setup.d, case.run.setup.s);
    let Some(p) = labels::checked_balanced::<OrdinalProposal<'_>>(
        case.step,
        case.balance,
        case.pre.as_deref(),
        |p| {
            let Some(w) = window else { return Some(p) };
            let q = p.windowed(w);
            assert_eq!(q.is_ok(), w != 0);
            let q = q.ok()?;
            assert_eq!(q.window(), Some(w));
            Some(q)
        },
    ) else {
        return Vec::new();
    };

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
    labels::drive_balanced::<OrdinalDomain, _>(case.run, p, &propose, &log_q)
}

langevin_fuzz::deterministic_fuzz_target!(run);
