//! The tabulated Ising-lattice kernels (`LatticeDula`, `LatticeDmala`) on lattices of up to
//! 5 × 5 sites, open or periodic, with arbitrary coupling, field, step and balance, the random
//! stream from the input. Checks that the model and proposal constructors accept exactly the
//! valid parameters (the proposal also needs every class's gradient `2 (J n + h)` finite);
//! that every flip probability is a multiple of 2^-16 in `[2^-16, 1 − 2^-16]`; that every step
//! draws exactly the flips an independent replay of the documented random stream gives (16
//! bits per site, four sites per word, then one word for the test) and consumes `⌈d/4⌉` (+1)
//! words; that the state stays binary, the cached gradient equals the model's bit for bit (up
//! to the sign of zero) and stays finite, and the cached `U` stays within rounding of the
//! model's; that DMALA's ratio matches `ΔU + log q(back) − log q(forward)` from the reference
//! `log_q` within rounding and its decision matches wherever `log u` is not within rounding of
//! it; that DULA always moves to the proposal; and that the same input gives the same output.
#![no_main]

use langevin_core::BinaryTarget;
use langevin_core::binary::{
    BinaryChain, InitError, LatticeClasses, LatticeDmala, LatticeDula, LatticeProposal,
    PortablePasses,
};
use langevin_core::models::{Dims, IsingLattice};
use langevin_core::random::open_unit_f64;
use langevin_fuzz::drive::MIN_LOG_U;
use langevin_fuzz::{ByteRng, Input, OwnedBuffers, valid_params};
use rand_core::Rng;

fn run(data: &[u8]) -> Vec<u64> {
    let mut input = Input::new(data);
    let rows = 1 + usize::from(input.u8() % 5);
    let cols = 1 + usize::from(input.u8() % 5);
    let d = rows * cols;
    let periodic = input.bool();
    let coupling = input.f32();
    let field = input.f32();
    let step = input.f64();
    let balance = input.f64();
    let metropolis = input.bool();
    let x0: Vec<u8> = (0..d).map(|_| input.u8() & 1).collect();
    let steps = 1 + usize::from(input.u8() % 24);
    let mut rng = ByteRng::new(input.rest());
    let mut out = Vec::new();

    let model = IsingLattice::with_dims(Dims { rows, cols }, coupling, field, periodic);
    assert_eq!(model.is_ok(), coupling.is_finite() && field.is_finite());
    let Ok(mut model) = model else { return out };
    let proposal = LatticeProposal::new(&model, step, balance);
    // Every class's gradient must be finite: the kernels adopt moves without evaluating.
    let grads_finite = (-4..=4).all(|n: i8| (2.0 * (coupling * f32::from(n) + field)).is_finite());
    assert_eq!(
        proposal.is_ok(),
        valid_params(step, balance) && grads_finite,
        "{step} {balance} {coupling} {field}"
    );
    let Ok(proposal) = proposal else { return out };
    let dula = LatticeDula::new(proposal);
    let dmala = LatticeDmala::new(proposal);

    let mut owned = OwnedBuffers::new(&x0);
    let buffers = owned.buffers();
    let mut fresh = vec![0.0f32; d];
    let u0 = model.log_density_and_grad(&x0, &mut fresh).unwrap();
    let mut chain = match BinaryChain::new(buffers, &mut model) {
        Ok(c) => c,
        Err(InitError::NonFinite) => {
            assert!(!u0.is_finite() || fresh.iter().any(|g| !g.is_finite()));
            return out;
        }
        Err(e) => panic!("unexpected start: {e:?}"),
    };
    let mut twin_owned = OwnedBuffers::new(&x0);
    let mut twin = BinaryChain::new(twin_owned.buffers(), &mut model).expect("as the chain");
    let mut classes = LatticeClasses::new(vec![0u8; d]);
    let scale =
        4.0 * d as f64 * f64::from(coupling).abs() + 2.0 * d as f64 * f64::from(field).abs();

    for t in 0..steps {
        let x = chain.state().to_vec();
        // Flip probabilities and the replayed draw.
        let mut r = rng.clone();
        let start = r.words;
        let mut y = x.clone();
        let mut word = 0u64;
        for (i, yi) in y.iter_mut().enumerate() {
            let p = proposal.flip_probability(&x, i).expect("site in range");
            let t16 = p * 65_536.0;
            assert!(
                t16.fract() == 0.0 && (1.0..=65_535.0).contains(&t16),
                "flip probability {p}"
            );
            if i % 4 == 0 {
                word = r.next_u64();
            }
            let bits = (word >> (16 * (i % 4))) as u16;
            *yi ^= u8::from(f64::from(bits) < t16);
        }
        assert!(proposal.flip_probability(&x, d).is_none());
        let log_u = if metropolis {
            libm::log(open_unit_f64(&mut r))
        } else {
            0.0
        };
        let words = r.words - start;
        let flips = x.iter().zip(&y).filter(|(a, b)| a != b).count() as u32;

        let before = rng.words;
        let mut twin_rng = rng.clone();
        let report = if metropolis {
            dmala.step(&mut chain, &mut rng)
        } else {
            dula.step(&mut chain, &mut rng)
        }
        .expect("chain fits the model");
        let twin_report = if metropolis {
            dmala.step_with_classes(&mut twin, &mut classes, &mut twin_rng, &PortablePasses)
        } else {
            dula.step_with_classes(&mut twin, &mut classes, &mut twin_rng, &PortablePasses)
        }
        .expect("twin fits the model");
        assert_eq!(
            format!("{twin_report:?}"),
            format!("{report:?}"),
            "twin report"
        );
        assert_eq!(twin.state(), chain.state(), "twin state");
        assert_eq!(twin.log_density().to_bits(), chain.log_density().to_bits());
        let bits = |c: &BinaryChain<'_>| c.grad().iter().map(|g| g.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&twin), bits(&chain), "twin gradient");
        assert_eq!(rng.words - before, words, "random words");
        assert_eq!(words, d.div_ceil(4) as u64 + u64::from(metropolis));
        assert_eq!(report.proposed_flips, flips, "flips drawn");
        assert_eq!(report.evaluations, u32::from(flips > 0));
        assert!(report.rejection.is_none());

        // The chain's cache against the model.
        assert!(chain.state().iter().all(|&v| v <= 1));
        let u = model
            .log_density_and_grad(chain.state(), &mut fresh)
            .unwrap();
        // Bit for bit up to the sign of zero: on a 1 × 1 lattice with field −0 the model's empty
        // neighbour sum is −0 (so its gradient is +0) where the table's `n` is +0.
        let cached: Vec<u32> = chain.grad().iter().map(|&g| (g + 0.0).to_bits()).collect();
        let want: Vec<u32> = fresh.iter().map(|&g| (g + 0.0).to_bits()).collect();
        assert_eq!(cached, want, "cached gradient");
        assert!(
            chain.grad().iter().all(|g| g.is_finite()),
            "gradient not finite"
        );
        let tol = (t + 2) as f64 * 8.0 * f64::EPSILON * scale;
        assert!(
            (chain.log_density() - u).abs() <= tol,
            "cached U {} vs {u}",
            chain.log_density()
        );

        if !metropolis || flips == 0 {
            assert!(report.accepted && report.log_accept_ratio == 0.0);
            assert_eq!(chain.state(), &y[..], "moved to the proposal");
        } else {
            let mut gy = vec![0.0f32; d];
            let mut gx = vec![0.0f32; d];
            let uy = model.log_density_and_grad(&y, &mut gy).unwrap();
            let ux = model.log_density_and_grad(&x, &mut gx).unwrap();
            let ratio =
                (uy - ux) + proposal.log_q(&y, &x).unwrap() - proposal.log_q(&x, &y).unwrap();
            // log q sums d terms of size up to ln 2^16 each.
            let tol = tol + 2.0 * d as f64 * 12.0 * f64::EPSILON * 16.0;
            let ratio_got = report.log_accept_ratio;
            assert!(
                (ratio - ratio_got).abs() <= tol,
                "ratio {ratio_got} vs {ratio}"
            );
            if (ratio - log_u).abs() > tol {
                assert_eq!(report.accepted, log_u < ratio, "decision");
            }
            if report.accepted {
                assert_eq!(chain.state(), &y[..]);
                assert!(ratio_got > MIN_LOG_U);
            } else {
                assert_eq!(chain.state(), &x[..]);
            }
        }
        out.push(chain.log_density().to_bits());
        out.extend(chain.state().iter().map(|&v| u64::from(v)));
    }
    out
}

langevin_fuzz::deterministic_fuzz_target!(run);
