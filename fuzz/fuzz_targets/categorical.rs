//! The categorical proposal (preconditioned or not) and its DULA and DMALA kernels on a target
//! with arbitrary (tabled) energies, one-hot gradients and errors over `{0, …, S−1}^d`, the
//! random stream from the input. Checks that the constructors accept exactly the valid
//! parameters; that every draw stays in range, lists exactly the changed coordinates, reports
//! the Hamming jump, and has a `log q` that is not positive and equals the proposal's `log_q`
//! bit for bit; that every step does exactly what an independent replay of it from a clone of
//! the random stream says (report bit for bit, next state, jump, `⌈d/2⌉ + 1` words), whichever
//! way it is called; the chain invariants of the label driver after every step and reset; and
//! that the same input gives the same output.
#![no_main]

use langevin_core::categorical::CategoricalProposal;
use langevin_core::ordinal::CategoricalDomain;
use langevin_fuzz::ByteRng;
use langevin_fuzz::labels::{self, BalancedCase};

fn run(data: &[u8]) -> Vec<u64> {
    let (case, ()) = BalancedCase::read(data, true, 10, 10, |_| ());
    let s = case.run.setup.s;
    let Some(p) = labels::checked_balanced::<CategoricalProposal<'_>>(
        case.step,
        case.balance,
        case.pre.as_deref(),
        Some,
    ) else {
        return Vec::new();
    };

    let scratch = core::cell::RefCell::new(vec![0.0f64; s.min(300)]);
    let propose = |x: &[u16], g: &[f32], y: &mut [u16], c: &mut [u32], r: &mut ByteRng<'_>| {
        let mut scratch = scratch.borrow_mut();
        if s > 1 {
            // A scratch row of the wrong length is refused before anything is drawn.
            let words = r.words;
            let short = s - 1;
            assert!(p.propose(x, g, s, y, c, &mut scratch[..short], r).is_err());
            assert_eq!(r.words, words);
        }
        let drawn = p
            .propose(x, g, s, y, c, &mut scratch, r)
            .expect("consistent lengths");
        (drawn.changed, drawn.jump, drawn.log_q)
    };
    let log_q = |x: &[u16], g: &[f32], y: &[u16]| p.log_q(x, g, s, y).expect("consistent lengths");
    labels::drive_balanced::<CategoricalDomain, _>(case.run, p, &propose, &log_q)
}

langevin_fuzz::deterministic_fuzz_target!(run);
