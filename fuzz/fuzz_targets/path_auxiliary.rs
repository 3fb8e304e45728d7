//! The path auxiliary sampler on binary and categorical chains with arbitrary (tabled)
//! energies, gradients and errors, the random stream from the input, the path length fixed or
//! adapted. Checks that constructors accept exactly the valid lengths; the chain invariants
//! after every step and reset (the drivers); that a step draws exactly `L + 1` words, changes
//! at most `L` coordinates and evaluates at most once; that an adapted length stays in
//! `[1, max]` and freezes after the burn-in; and that the same input gives the same output.
#![no_main]

use langevin_core::Chain;
use langevin_core::binary::{StepError, StepReport};
use langevin_core::ordinal::CategoricalDomain;
use langevin_core::path_auxiliary::{PathAdaptation, PathAuxiliary, PathBuffers, PathDomain};
use langevin_fuzz::drive::{self, BinarySetup, TabledDomain};
use langevin_fuzz::labels::{self, LabelSetup};
use langevin_fuzz::{ByteRng, Input, TableError};

/// The path length, the adaptation (if any) and the burn-in, read from the input, and the
/// number of steps taken so far.
struct Plan {
    length: usize,
    adapt: Option<PathAdaptation>,
    burn_in: u64,
    taken: u64,
}

impl Plan {
    fn read(input: &mut Input<'_>, d: usize) -> Option<Self> {
        let raw = usize::from(input.u8() % 10);
        let fixed = PathAuxiliary::new(raw);
        assert_eq!(fixed.is_ok(), raw >= 1, "length {raw}");
        let adapt = input.bool();
        let burn_in = u64::from(input.u8() % 16);
        let target = input.f64();
        let max = d.clamp(1, 8);
        let adaptation = if adapt {
            let a = PathAdaptation::new(raw.max(1), max, burn_in, target);
            let valid = raw.max(1) <= max && target > 0.0 && target < 1.0;
            assert_eq!(
                a.is_ok(),
                valid,
                "initial {raw}, max {max}, target {target}"
            );
            Some(a.ok()?)
        } else {
            None
        };
        Some(Self {
            length: fixed.ok().map_or(1, |p| p.length()),
            adapt: adaptation,
            burn_in,
            taken: 0,
        })
    }
}

fn step<D: PathDomain + TabledDomain>(
    plan: &mut Plan,
    weights: &mut [f64],
    path: &mut [u32],
    target: &mut D::Target,
    chain: &mut Chain<'_, D>,
    rng: &mut ByteRng<'_>,
) -> Result<StepReport, StepError<TableError>> {
    let mut buffers = PathBuffers { weights, path };
    let words = rng.words;
    let (length, got) = match &mut plan.adapt {
        Some(a) => {
            let l = a.length();
            (l, a.step(target, chain, &mut buffers, rng))
        }
        None => {
            let p = PathAuxiliary::new(plan.length).unwrap();
            (plan.length, p.step(target, chain, &mut buffers, rng))
        }
    };
    if let Ok(r) = &got {
        assert_eq!(rng.words - words, length as u64 + 1, "random words");
        assert!(r.proposed_flips as usize <= length);
        assert!(r.evaluations <= 1);
        assert!(r.accepted || r.proposed_flips > 0);
    }
    if let Some(a) = &plan.adapt {
        if got.is_ok() {
            plan.taken += 1;
        }
        assert!((1..=chain.dim().clamp(1, 8)).contains(&a.length()));
        assert_eq!(a.is_frozen(), plan.taken >= plan.burn_in);
    }
    // A path buffer shorter than the length is refused, not overrun.
    let mut short = [0u32; 0];
    let mut none = [0.0f64; 0];
    let refused = PathAuxiliary::new(length)
        .unwrap()
        .with_buffers(PathBuffers {
            weights: &mut none,
            path: &mut short,
        });
    assert!(refused.is_err());
    got
}

fn binary(data: &[u8]) -> Vec<u64> {
    let mut input = Input::new(data);
    let setup = BinarySetup::read(&mut input, 24, 24);
    let d = setup.d;
    let Some(mut plan) = Plan::read(&mut input, d) else {
        return Vec::new();
    };
    let rng = ByteRng::new(input.rest());
    let (mut weights, mut path) = (vec![0.0f64; d], vec![0u32; 9]);
    drive::drive(setup, rng, &mut |_, target, chain, rng| {
        step(&mut plan, &mut weights, &mut path, target, chain, rng)
    })
}

fn categorical(data: &[u8]) -> Vec<u64> {
    let mut input = Input::new(data);
    let setup = LabelSetup::read(&mut input, true, 8, 8, 12);
    let (d, s) = (setup.d, setup.s);
    let Some(mut plan) = Plan::read(&mut input, d) else {
        return Vec::new();
    };
    let rng = ByteRng::new(input.rest());
    let (mut weights, mut path) = (
        vec![0.0f64; d.saturating_mul(s).min(1 << 16)],
        vec![0u32; 9],
    );
    labels::drive::<CategoricalDomain>(setup, rng, &mut |_, target, chain, rng| {
        step(&mut plan, &mut weights, &mut path, target, chain, rng)
    })
}

fn run(data: &[u8]) -> Vec<u64> {
    langevin_fuzz::pick_case(data, &[binary, categorical])
}

langevin_fuzz::deterministic_fuzz_target!(run);
