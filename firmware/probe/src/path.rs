//! The path auxiliary sampler, fixed and adapted, on a chain of any domain it supports.

use core::hint::black_box;
use langevin_core::binary::{StepError, StepReport};
use langevin_core::path_auxiliary::{PathAdaptation, PathAuxiliary, PathBuffers, PathDomain};
use langevin_core::{Chain, Eval, Kernel};
use rand_xoshiro::Xoshiro256PlusPlus;

fn seen<E>(r: Result<StepReport, StepError<E>>) {
    if let Ok(r) = r {
        black_box((r.accepted, r.accepted_flips(), r.log_accept_ratio));
    }
}

/// Every path entry point: buffers of opaque lengths, fixed and adapted lengths.
#[inline(never)]
pub fn path_kernels<D: PathDomain, T: Eval<D>>(
    t: &mut T,
    chain: &mut Chain<'_, D>,
    rng: &mut Xoshiro256PlusPlus,
) {
    let mut weights = [0.0f64; 256];
    let mut path = [0u32; 8];
    let mut buffers = PathBuffers {
        weights: black_box(&mut weights[..]),
        path: black_box(&mut path[..]),
    };
    if let Ok(p) = PathAuxiliary::new(black_box(3)) {
        black_box(p.length());
        seen(p.step(t, chain, &mut buffers, rng));
    }
    if let Ok(mut a) = PathAdaptation::new(black_box(1), black_box(6), black_box(4), black_box(0.5))
    {
        black_box((a.length(), a.radius(), a.is_frozen(), a.settings()));
        seen(a.step(t, chain, &mut buffers, rng));
        if let Ok(mut k) = a.with_buffers(buffers) {
            seen(Kernel::step(&mut k, t, chain, rng));
            black_box(k.adaptation().length());
        }
    }
    let mut weights = [0.0f64; 256];
    let mut path = [0u32; 8];
    let buffers = PathBuffers {
        weights: black_box(&mut weights[..]),
        path: black_box(&mut path[..]),
    };
    if let Ok(mut k) = PathAuxiliary::new(black_box(2)).and_then(|p| p.with_buffers(buffers)) {
        black_box(k.length());
        seen(Kernel::step(&mut k, t, chain, rng));
    }
}

/// The DLMC proposals and the adapted-time kernel on a chain of either domain.
#[inline(never)]
pub fn dlmc_kernels<D, P, T>(
    proposal: P,
    t: &mut T,
    chain: &mut Chain<'_, D>,
    rng: &mut Xoshiro256PlusPlus,
) where
    D: langevin_core::Domain,
    P: langevin_core::dlmc::TimedProposal<D> + core::fmt::Debug,
    T: Eval<D>,
{
    black_box((proposal.time(), proposal.with_time(black_box(0.7)).is_ok()));
    let kernel = langevin_core::kernel::Dmala::new(proposal);
    seen(kernel.step(t, chain, rng));
    if let Ok(mut tuned) = langevin_core::dlmc::TunedDlmc::new(
        proposal,
        black_box(true),
        black_box(3),
        black_box(0.574),
    ) {
        for _ in 0..black_box(2) {
            seen(Kernel::step(&mut tuned, t, chain, rng));
        }
        black_box((tuned.proposal().time(), tuned.is_frozen()));
    }
}
