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
use langevin_fuzz::labels::{self, LabelSetup};
use langevin_fuzz::{ByteRng, Input, valid_params};

fn run(data: &[u8]) -> Vec<u64> {
    let mut input = Input::new(data);
    let setup = LabelSetup::read(&mut input, true, 10, 10, 16);
    let d = setup.d;
    let s = setup.s;
    let step = input.f64();
    let balance = input.f64();
    let pre: Option<Vec<f32>> = input
        .u8()
        .is_multiple_of(4)
        .then(|| (0..d).map(|_| input.f32()).collect());
    let metropolis = input.bool();
    let rng = ByteRng::new(input.rest());

    let p = CategoricalProposal::new(step, balance);
    assert_eq!(p.is_ok(), valid_params(step, balance), "{step} {balance}");
    let Ok(p) = p else { return Vec::new() };
    let Some(p) =
        labels::checked_preconditioned(p, step, pre.as_deref(), |p, pre| p.preconditioned(pre))
    else {
        return Vec::new();
    };
    assert_eq!(
        (p.step().to_bits(), p.balance().to_bits()),
        (step.to_bits(), balance.to_bits())
    );

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
    labels::drive_balanced::<CategoricalDomain, _>(setup, rng, p, metropolis, &propose, &log_q)
}

langevin_fuzz::deterministic_fuzz_target!(run);
