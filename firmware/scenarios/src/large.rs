//! DMALA on the large RBM of [`crate::models`] (784 visible units, 500 hidden, `W` in `f32` or
//! `bf16`, no `Wᵀ`): the board figure of a step on a model of real size, with its golden hashes.
//!
//! The chain starts at the all-zero state with step 0.5 and balance 0.5 and draws from
//! `Xoshiro256PlusPlus::seed_from_u64(LARGE_SEED)`; the hashes are those of [`crate::golden`]
//! (FNV-1a over the state bytes, and over the log-density bits, after every step). The `f32`
//! and `bf16` copies of `W` hold the same values, so both give the same hashes.

use crate::Failure;
use crate::cost::Meter;
use crate::golden::{FNV_OFFSET, Hashes, fnv1a};
use crate::models::{BIG_HIDDEN, BIG_RBM_B, BIG_RBM_C, BIG_VISIBLE};
use langevin_core::binary::{BinaryChain, ChainStorage, Dmala, FlipProposal};
use langevin_core::math::Libm;
use langevin_core::models::{Rbm, Weight};
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// Steps of the pinned run.
pub const LARGE_STEPS: u32 = 20;
/// Seed of the pinned run.
pub const LARGE_SEED: u64 = 1;
/// The pinned hashes of [`LARGE_STEPS`] DMALA steps with seed [`LARGE_SEED`].
pub const LARGE_PIN: Hashes = Hashes {
    state: 0xa3cd_4943_9624_3b8b,
    log_density: 0xc7dd_399f_f052_d728,
};

/// What a run of the large RBM gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LargeRun {
    /// The hashes after every step.
    pub hashes: Hashes,
    /// Coordinates that changed, summed over the steps (accepted moves only).
    pub flips: u64,
    /// Steps whose proposal was accepted.
    pub accepted: u32,
}

/// Runs `steps` DMALA steps on the large RBM with weights `w` (`500 × 784`, row-major): `init`
/// measures the chain's start (one evaluation of `U` and `∇U` from scratch), `step` every step.
///
/// # Errors
///
/// A [`Failure`] if the model, the chain or a step refuses; none is expected.
pub fn run_large_rbm<E: Weight>(
    w: &[E],
    seed: u64,
    steps: u32,
    init: &mut impl Meter,
    step: &mut impl Meter,
) -> Result<LargeRun, Failure> {
    let mut cache = [0.0f64; 2 * BIG_HIDDEN];
    let mut target = Rbm::<Libm, E>::from_weights(w, &BIG_RBM_B, &BIG_RBM_C, &mut cache)
        .map_err(|_| Failure::Param)?;
    let mut storage = ChainStorage::<BIG_VISIBLE>::new([0; BIG_VISIBLE]);
    init.start();
    let chain = BinaryChain::new(storage.buffers(), &mut target);
    init.stop();
    let mut chain = chain.map_err(|_| Failure::Init)?;
    let proposal = FlipProposal::new(0.5, 0.5).map_err(|_| Failure::Param)?;
    let kernel = Dmala::new(proposal);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut out = LargeRun {
        hashes: Hashes {
            state: FNV_OFFSET,
            log_density: FNV_OFFSET,
        },
        flips: 0,
        accepted: 0,
    };
    let mut before = [0u8; BIG_VISIBLE];
    for _ in 0..steps {
        before.copy_from_slice(chain.state());
        step.start();
        let r = kernel.step(&mut target, &mut chain, &mut rng);
        step.stop();
        r.map_err(|_| Failure::Step)?;
        let changed = before
            .iter()
            .zip(chain.state())
            .filter(|(a, b)| a != b)
            .count();
        out.flips += changed as u64;
        out.accepted += u32::from(changed > 0);
        out.hashes.state = fnv1a(out.hashes.state, chain.state());
        out.hashes.log_density = fnv1a(
            out.hashes.log_density,
            &chain.log_density().to_bits().to_le_bytes(),
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::NoMeter;
    use crate::models::{BIG_WEIGHTS, big_rbm_w_bf16, big_rbm_w_f32};
    use langevin_core::models::Bf16;

    #[allow(long_running_const_eval, reason = "392,000 entries, evaluated once")]
    static W32: [f32; BIG_WEIGHTS] = big_rbm_w_f32();
    #[allow(long_running_const_eval, reason = "392,000 entries, evaluated once")]
    static W16: [Bf16; BIG_WEIGHTS] = big_rbm_w_bf16();

    #[test]
    fn large_rbm_golden_hashes_hold_on_the_host() {
        let r32 = run_large_rbm(&W32, LARGE_SEED, LARGE_STEPS, &mut NoMeter, &mut NoMeter);
        let r16 = run_large_rbm(&W16, LARGE_SEED, LARGE_STEPS, &mut NoMeter, &mut NoMeter);
        assert_eq!(r32, r16);
        let r = r16.unwrap();
        assert_eq!(r.hashes, LARGE_PIN, "{:#018x?} {r:?}", r.hashes);
    }

    #[test]
    fn large_rbm_weights_are_exact_in_bf16() {
        assert!(W16.iter().zip(&W32).all(|(a, b)| a.to_f32() == *b));
    }
}
