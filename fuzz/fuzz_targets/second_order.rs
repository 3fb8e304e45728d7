//! The second-order any-scale balanced kernel (`TrickParams` + `AbSecondOrder`) with arbitrary
//! small `W`, `D`, `A`, step and balance, on a target with arbitrary (tabled) energies,
//! gradients and errors, the random stream from the input. Checks that `TrickParams::new`,
//! `with_step`, `with_balance` and `AbSecondOrder::new` accept exactly the valid arguments;
//! the chain invariants of the binary driver after every step and reset; `3⌈d/2⌉ + 1` random
//! words per step; that an accepted move's ratio is above the smallest `log u`; that
//! `transition` gives normalised (non-positive) conditionals; that when every entry of `W` and
//! `A` is a small multiple of 1/8 (so every cached product is exact) a kernel that keeps its
//! cached `W x`, `A x` gives bit for bit the transcript of one whose cache is dropped before
//! every step; and that the same input gives the same output.
#![no_main]

use langevin_core::Kernel;
use langevin_core::second_order::{AbSecondOrder, TrickParams, scratch_len};
use langevin_fuzz::drive::{self, BinarySetup, MIN_LOG_U};
use langevin_fuzz::{ByteRng, Input, valid_params};

fn exact(v: f32) -> bool {
    (v * 8.0).fract() == 0.0 && v.abs() <= 10.0
}

/// One run; `drop_cache` invalidates the kernel's cache before every step.
fn run(data: &[u8], drop_cache: bool) -> (Vec<u64>, bool) {
    let mut input = Input::new(data);
    let setup = BinarySetup::read(&mut input, 8, 16);
    let d = setup.d;
    let flags = input.u8();
    let mut w = vec![0.0f32; d * d];
    for i in 0..d {
        for j in i..d {
            let v = if flags & 1 == 0 { input.f32() } else { 0.0 };
            w[i * d + j] = v;
            w[j * d + i] = v;
        }
    }
    if flags & 2 != 0 && d > 1 {
        // Break the symmetry in one pair (by a bit pattern that may still compare equal).
        let (i, j) = (usize::from(input.u8()) % d, usize::from(input.u8()) % d);
        w[i * d + j] = input.f32();
    }
    let diag: Vec<f32> = (0..d).map(|_| input.f32()).collect();
    let upper = flags & 4 != 0;
    let factor: Vec<f32> = (0..d * d)
        .map(|k| {
            if (upper && k % d < k / d) || flags & 8 != 0 {
                0.0
            } else {
                input.f32()
            }
        })
        .collect();
    let step = input.f64();
    let balance = input.f64();
    let step2 = input.f64();
    let balance2 = input.f64();
    let transitions: Vec<bool> = (0..setup.resets.len()).map(|_| input.u8() >= 240).collect();
    let u_probe: Vec<f64> = (0..d).map(|_| input.f64()).collect();
    let rng = ByteRng::new(input.rest());

    let finite = |v: &[f32]| v.iter().all(|x| x.is_finite());
    let symmetric = (0..d).all(|i| (0..d).all(|j| w[i * d + j] == w[j * d + i]));
    let valid = valid_params(step, balance) && finite(&w) && finite(&diag) && finite(&factor);
    let params = TrickParams::new(&w, &diag, &factor, step, balance);
    assert_eq!(params.is_ok(), valid && symmetric, "TrickParams::new");
    let Ok(params) = params else {
        return (Vec::new(), false);
    };
    assert_eq!(params.dim(), d);
    assert!(TrickParams::new(&w[1..], &diag, &factor, step, balance).is_err());
    assert_eq!(
        params.with_step(step2).is_ok(),
        valid_params(step2, balance),
        "with_step({step2})"
    );
    let p2 = params.with_balance(balance2, &factor);
    assert_eq!(p2.is_ok(), valid_params(step, balance2), "with_balance");
    assert!(params.with_balance(balance, &factor[1..]).is_err());
    let all_exact = w.iter().all(|&v| exact(v)) && factor.iter().all(|&v| exact(v));

    let mut scratch = vec![0.0f64; scratch_len(d)];
    let mut state = vec![0u8; d];
    assert!(AbSecondOrder::new(params, &mut scratch[1..], &mut state).is_err());
    let mut kernel = AbSecondOrder::new(params, &mut scratch, &mut state).expect("lengths fit");
    let out = drive::drive(setup, rng, &mut |t, target, chain, rng| {
        if drop_cache {
            kernel.set_params(params).expect("same dimension");
        }
        if transitions[t] {
            let x = chain.state().to_vec();
            let y: Vec<u8> = x.iter().map(|&v| v ^ 1).collect();
            let tr = kernel
                .transition(&x, chain.grad(), &y, chain.grad(), &u_probe)
                .expect("lengths fit");
            assert!(
                [tr.log_q_forward, tr.log_q_reverse]
                    .iter()
                    .all(|q| q.is_nan() || *q <= 0.0),
                "{tr:?}"
            );
            assert!(
                kernel
                    .transition(&x[1..], chain.grad(), &y, chain.grad(), &u_probe)
                    .is_err()
            );
        }
        let words = rng.words;
        let r = if t % 2 == 0 {
            kernel.step(target, chain, rng)
        } else {
            Kernel::step(&mut kernel, target, chain, rng)
        };
        assert_eq!(
            rng.words - words,
            3 * d.div_ceil(2) as u64 + 1,
            "random words"
        );
        if let Ok(r) = &r {
            if r.accepted && r.proposed_flips > 0 {
                assert!(
                    r.log_accept_ratio > MIN_LOG_U,
                    "accepted at {}",
                    r.log_accept_ratio
                );
            }
            if r.proposed_flips == 0 {
                assert!(r.accepted && r.log_accept_ratio == 0.0 && r.evaluations == 0);
            } else {
                assert_eq!(r.evaluations, 1);
            }
        }
        r
    });
    (out, all_exact)
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let (a, exact) = run(data, false);
    let (b, _) = run(data, false);
    assert_eq!(a, b, "same input, different output");
    if exact {
        let (c, _) = run(data, true);
        assert_eq!(a, c, "the cached products changed the chain");
    }
});
