//! Discrete Langevin Monte Carlo on binary and categorical chains with arbitrary (tabled)
//! energies, gradients and errors, the random stream from the input: both binary solvers and
//! the categorical Euler proposal, at a fixed time read from the input and with the time
//! adapted during burn-in. Checks that constructors accept exactly the valid times; the chain
//! invariants after every step and reset (the drivers); that a step draws `⌈d/2⌉ + 1` words;
//! that an accepted move's ratio is `ΔU + log q(x|y) − log q(y|x)` from the public `log_q`, bit
//! for bit; that the adapted time stays finite and positive and is frozen after the burn-in;
//! and that the same input gives the same output.
#![no_main]

use langevin_core::Kernel;
use langevin_core::binary::{StepError, StepReport};
use langevin_core::dlmc::{CategoricalDlmcProposal, DlmcProposal, Solver, TunedDlmc};
use langevin_core::kernel::Dmala;
use langevin_core::ordinal::CategoricalDomain;
use langevin_fuzz::drive::{self, BinarySetup};
use langevin_fuzz::labels::{self, LabelSetup};
use langevin_fuzz::{ByteRng, Input, TableError};

fn words_ok(before: u64, after: u64, d: usize, got: &Result<StepReport, StepError<TableError>>) {
    if got.is_ok() {
        assert_eq!(after - before, d.div_ceil(2) as u64 + 1, "random words");
    }
}

/// One step of a driven chain, by the tuned kernel (`adapt`) or by DMALA with `proposal`:
/// the adapted time stays finite and positive and freezes after `burn_in` steps taken; an
/// accepted move's ratio is `ΔU + log q(x|y) − log q(y|x)` bit for bit, with `log q(y|x)` the
/// last argument evaluated on `x`, its gradient and `y`; a step draws `⌈d/2⌉ + 1` words.
macro_rules! dlmc_step {
    (
        ($target:expr, $chain:expr, $rng:expr),
        ($tuned:expr, $adapt:expr, $burn_in:expr, $taken:expr, $d:expr),
        $proposal:expr,
        |$x:ident, $g:ident, $y:ident| $log_q:expr
    ) => {{
        let (target, chain, rng) = ($target, $chain, $rng);
        let (tuned, taken) = ($tuned, $taken);
        let before = (
            chain.state().to_vec(),
            chain.grad().to_vec(),
            chain.log_density(),
        );
        let words = rng.words;
        let got = if $adapt {
            let got = Kernel::step(tuned, target, chain, rng);
            if got.is_ok() {
                *taken += 1;
            }
            let t = tuned.proposal().time();
            assert!(t.is_finite() && t > 0.0, "time {t}");
            assert_eq!(tuned.is_frozen(), *taken >= $burn_in);
            got
        } else {
            let got = Dmala::new($proposal).step(target, chain, rng);
            if let Ok(r) = &got {
                if r.accepted && r.proposed_flips > 0 {
                    let fwd = {
                        let ($x, $g, $y) = (&before.0[..], &before.1[..], chain.state());
                        $log_q
                    };
                    let back = {
                        let ($x, $g, $y) = (chain.state(), chain.grad(), &before.0[..]);
                        $log_q
                    };
                    let ratio = (chain.log_density() - before.2) + (back - fwd);
                    assert_eq!(ratio.to_bits(), r.log_accept_ratio.to_bits(), "DLMC ratio");
                }
            }
            got
        };
        words_ok(words, rng.words, $d, &got);
        got
    }};
}

fn binary(data: &[u8]) -> Vec<u64> {
    let mut input = Input::new(data);
    let setup = BinarySetup::read(&mut input, 24, 24);
    let d = setup.d;
    let solver = input.either(Solver::Euler, Solver::Interpolate);
    let time = input.f64();
    let adapt = input.bool();
    let burn_in = u64::from(input.u8() % 16);
    let proposal = DlmcProposal::new(solver, time);
    assert_eq!(
        proposal.is_ok(),
        time.is_finite() && time > 0.0,
        "time {time}"
    );
    let proposal = proposal.unwrap_or(DlmcProposal::new(solver, 0.5).unwrap());
    let rng = ByteRng::new(input.rest());
    let mut tuned = TunedDlmc::new(proposal, adapt, burn_in, 0.574).unwrap();
    let mut taken = 0u64;
    drive::drive(setup, rng, &mut |_, target, chain, rng| {
        dlmc_step!(
            (target, chain, rng),
            (&mut tuned, adapt, burn_in, &mut taken, d),
            proposal,
            |x, g, y| proposal.log_q(x, g, y).unwrap()
        )
    })
}

fn categorical(data: &[u8]) -> Vec<u64> {
    let mut input = Input::new(data);
    let setup = LabelSetup::read(&mut input, true, 8, 8, 12);
    let (d, s) = (setup.d, setup.s);
    let time = input.f64();
    let adapt = input.bool();
    let burn_in = u64::from(input.u8() % 16);
    let proposal = CategoricalDlmcProposal::new(time);
    assert_eq!(
        proposal.is_ok(),
        time.is_finite() && time > 0.0,
        "time {time}"
    );
    let proposal = proposal.unwrap_or(CategoricalDlmcProposal::new(0.5).unwrap());
    let rng = ByteRng::new(input.rest());
    let mut tuned = TunedDlmc::new(proposal, adapt, burn_in, 0.574).unwrap();
    let mut taken = 0u64;
    let mut scratch = vec![0.0f64; s];
    labels::drive::<CategoricalDomain>(setup, rng, &mut |_, target, chain, rng| {
        dlmc_step!(
            (target, chain, rng),
            (&mut tuned, adapt, burn_in, &mut taken, d),
            proposal,
            |x, g, y| proposal.log_q(x, g, s, y, &mut scratch).unwrap()
        )
    })
}

fn run(data: &[u8]) -> Vec<u64> {
    langevin_fuzz::pick_case(data, &[binary, categorical])
}

langevin_fuzz::deterministic_fuzz_target!(run);
