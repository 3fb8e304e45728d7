//! Link-time proof that no public entry point of the core can reach a panic.
//!
//! Every public step function of every domain (binary, tabulated lattice, ordinal, categorical,
//! second order, the tuners, the baselines, the continuous integrators under every data access
//! and snapshot store) and the constructors, models, proposals, math, random and statistics
//! functions around them are called with inputs the optimiser cannot see through
//! (`black_box`), so no panic path can be folded away by constant propagation. The panic handler
//! calls `panic_is_reachable`, a symbol defined nowhere: if any panic survives optimisation, the
//! link fails. With the `locate` feature the handler is an ordinary loop, so the image links and
//! the remaining panic call sites can be listed from its debug information.
//!
//! Built for `thumbv7em-none-eabihf`, `thumbv6m-none-eabi` and `riscv32imac-unknown-none-elf` in
//! the release profile (fat LTO); never run.
#![no_std]
#![no_main]

use core::convert::Infallible;
use core::fmt;
use core::hint::black_box;
#[cfg(not(target_arch = "riscv32"))]
use cortex_m_rt::entry;
use langevin_core::Kernel;
use langevin_core::binary::{BinaryChain, ChainBuffers, Dmala, Dula, FlipProposal};
use langevin_core::math::{FlipOdds, Libm, sigmoid, softplus};
use langevin_core::models::{
    BinaryLogistic, BinaryQuadratic, ConstDims, Dims, IsingGraph, IsingLattice, LatticeDims, Rbm,
};
use langevin_core::random::{fill_normal, index, normal_pair, open_unit_f64, shuffle, unit_f64};
use langevin_core::stats::{ChainStats, RunningMeans};
use langevin_core::{BinaryTarget, FlipMove, LenError, TargetError};
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
#[cfg(target_arch = "riscv32")]
use riscv_rt::entry;

mod labels;
mod more;
mod path;

/// Largest dimension the probe's buffers allow; the lengths actually passed are opaque.
const MAX: usize = 64;

/// Buffers of opaque lengths, each at most `MAX`.
pub(crate) struct Bufs {
    x: [u8; MAX],
    grad: [f32; MAX],
    x_proposal: [u8; MAX],
    grad_proposal: [f32; MAX],
    flipped: [u32; MAX],
}

impl Bufs {
    const fn new() -> Self {
        Self {
            x: [0; MAX],
            grad: [0.0; MAX],
            x_proposal: [0; MAX],
            grad_proposal: [0.0; MAX],
            flipped: [0; MAX],
        }
    }

    fn buffers(&mut self) -> ChainBuffers<'_> {
        ChainBuffers {
            x: black_box(&mut self.x[..]),
            grad: black_box(&mut self.grad[..]),
            x_proposal: black_box(&mut self.x_proposal[..]),
            grad_proposal: black_box(&mut self.grad_proposal[..]),
            flipped: black_box(&mut self.flipped[..]),
        }
    }
}

/// A target whose dimension, values and errors are all opaque.
pub(crate) struct Opaque;

#[derive(Debug)]
pub(crate) struct OpaqueError(pub(crate) bool);

impl fmt::Display for OpaqueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("opaque")
    }
}

impl TargetError for OpaqueError {
    fn is_recoverable(&self) -> bool {
        self.0
    }
}

impl BinaryTarget for Opaque {
    type Error = OpaqueError;
    fn dim(&self) -> usize {
        black_box(MAX)
    }
    fn log_density_and_grad(&mut self, x: &[u8], grad: &mut [f32]) -> Result<f64, OpaqueError> {
        black_box(x);
        for g in grad.iter_mut() {
            *g = black_box(0.0);
        }
        if black_box(false) {
            return Err(OpaqueError(black_box(true)));
        }
        Ok(black_box(0.0))
    }
    fn log_density_and_grad_after(
        &mut self,
        mv: &FlipMove<'_>,
        grad: &mut [f32],
    ) -> Result<f64, OpaqueError> {
        black_box(mv);
        self.log_density_and_grad(mv.to, grad)
    }
    fn commit(&mut self) {
        black_box(());
    }
}

/// Drives one target through every chain and kernel entry point.
#[inline(never)]
fn exercise<T: BinaryTarget>(target: &mut T, rng: &mut Xoshiro256PlusPlus) {
    let mut bufs = Bufs::new();
    let proposal = FlipProposal::new(black_box(0.5), black_box(0.5));
    let Ok(proposal) = proposal else { return };
    let pre = [1.0f32; MAX];
    let pre = black_box(&pre[..]);
    let preconditioned = proposal.preconditioned(pre);
    black_box((
        proposal.step(),
        proposal.balance(),
        proposal.preconditioner(),
    ));

    // The target's own entry points with opaque buffers.
    let mut scratch = Bufs::new();
    let b = scratch.buffers();
    black_box(target.dim());
    black_box(target.log_density_and_grad(b.x, b.grad).is_ok());
    let mv = FlipMove {
        from: black_box(&*b.x),
        to: black_box(&*b.x_proposal),
        flipped: black_box(&*b.flipped),
        from_log_density: black_box(0.0),
        from_grad: black_box(&*b.grad),
    };
    black_box(
        target
            .log_density_and_grad_after(&mv, b.grad_proposal)
            .is_ok(),
    );
    target.commit();

    // The proposal on opaque slices.
    let mut s2 = Bufs::new();
    let c = s2.buffers();
    black_box(
        proposal
            .propose(c.x, c.grad, c.x_proposal, c.flipped, rng)
            .is_ok(),
    );
    black_box(proposal.log_q(c.x, c.grad, c.x_proposal).is_ok());
    if let Ok(p) = preconditioned {
        black_box(p.propose(c.x, c.grad, c.x_proposal, c.flipped, rng).is_ok());
        black_box(p.log_q(c.x, c.grad, c.x_proposal).is_ok());
    }

    // Chains and kernels.
    let Ok(mut chain) = BinaryChain::new(bufs.buffers(), target) else {
        return;
    };
    let mut stats = ChainStats::default();
    let dula = Dula::new(proposal);
    let dmala = Dmala::new(proposal);
    black_box((dula.proposal().step(), dmala.proposal().step()));
    for _ in 0..black_box(4) {
        if let Ok(r) = dula.step(target, &mut chain, rng) {
            stats.record(&r);
        }
        if let Ok(r) = dmala.step(target, &mut chain, rng) {
            stats.record(&r);
        }
        if let Ok(r) = Kernel::step(&mut { dula }, target, &mut chain, rng) {
            stats.record(&r);
        }
        if let Ok(r) = Kernel::step(&mut { dmala }, target, &mut chain, rng) {
            black_box(r.accepted_flips());
            stats.record(&r);
        }
    }
    if let Ok(p) = preconditioned {
        black_box(Dmala::new(p).step(target, &mut chain, rng).is_ok());
        black_box(Dula::new(p).step(target, &mut chain, rng).is_ok());
    }
    let reset_to = [0u8; MAX];
    black_box(chain.reset(black_box(&reset_to[..]), target).is_ok());
    black_box((
        chain.dim(),
        chain.state(),
        chain.grad(),
        chain.log_density(),
    ));
    let other = stats;
    stats.merge(&other);
    black_box((
        stats.acceptance_rate(),
        stats.mean_proposed_flips(),
        stats.mean_accepted_flips(),
    ));
}

#[inline(never)]
fn models(rng: &mut Xoshiro256PlusPlus) {
    if let Ok(mut m) =
        IsingLattice::<ConstDims<8, 8>>::new(black_box(0.3), black_box(0.1), black_box(true))
    {
        black_box((m.coupling(), m.field(), m.dims().rows(), m.wraps()));
        black_box(m.neighbours(black_box(3)));
        exercise(&mut m, rng);
        more::binary_baselines(&mut m, rng);
    }
    let dims = Dims {
        rows: black_box(8),
        cols: black_box(8),
    };
    if let Ok(mut m) =
        IsingLattice::with_dims(dims, black_box(0.3), black_box(0.1), black_box(true))
    {
        black_box(m.neighbours(black_box(3)));
        exercise(&mut m, rng);
        more::binary_baselines(&mut m, rng);
    }

    let offsets = black_box(&[0u32, 1, 2][..]);
    let neighbours = black_box(&[1u32, 0][..]);
    let couplings = black_box(&[0.5f32, 0.5][..]);
    let field = black_box(&[0.1f32, -0.1][..]);
    if let Ok(mut m) = IsingGraph::new(offsets, neighbours, couplings, field) {
        black_box(m.edges(black_box(1)).count());
        exercise(&mut m, rng);
        more::binary_baselines(&mut m, rng);
    }

    let w = [0.25f32; MAX * MAX];
    let b = [0.1f32; MAX];
    let mut cache = [0.0f64; 2 * MAX];
    if let Ok(mut m) = BinaryQuadratic::new(
        black_box(&w[..]),
        black_box(&b[..]),
        black_box(&mut cache[..]),
    ) {
        exercise(&mut m, rng);
        more::binary_baselines(&mut m, rng);
        more::second_order(&mut m, rng);
    }

    let c = [0.0f32; 16];
    let mut hidden = [0.0f64; 32];
    if let Ok(mut m) = Rbm::new(
        black_box(&w[..]),
        black_box(&b[..]),
        black_box(&c[..]),
        black_box(&mut hidden[..]),
    ) {
        black_box(m.hidden_units());
        exercise(&mut m, rng);
        more::binary_baselines(&mut m, rng);
        more::rbm_block_gibbs(&m, rng);
    }
    let mut hidden = [0.0f64; 32];
    if let Ok(mut m) = Rbm::<Libm>::with_math(
        black_box(&w[..]),
        black_box(&b[..]),
        black_box(&c[..]),
        black_box(&mut hidden[..]),
    ) {
        exercise(&mut m, rng);
    }

    let y = [1.0f32, 0.0, 1.0, 0.0];
    let mut linear = [0.0f64; 8];
    if let Ok(mut m) = BinaryLogistic::new(
        black_box(&w[..]),
        black_box(&y[..]),
        black_box(&mut linear[..]),
    ) {
        exercise(&mut m, rng);
    }

    exercise(&mut Opaque, rng);
    more::binary_baselines(&mut Opaque, rng);
    more::replica_exchange(&mut Opaque, rng);
    more::second_order(&mut Opaque, rng);
    let _: Option<Infallible> = None;
}

#[inline(never)]
fn helpers(rng: &mut Xoshiro256PlusPlus) {
    let l = black_box(0.3f32);
    black_box(FlipOdds::new::<Libm>(l));
    black_box(FlipOdds::logs::<Libm>(l));
    black_box((softplus(black_box(0.2)), sigmoid(black_box(-0.2))));
    black_box((unit_f64(rng), open_unit_f64(rng), index(rng, black_box(7))));
    black_box(normal_pair(rng));
    let mut z = [0.0f64; 9];
    fill_normal(rng, black_box(&mut z[..]));
    let mut items = [0u32; 9];
    shuffle(rng, black_box(&mut items[..]));
    black_box((z, items));
    let mut sums = [0u64; 8];
    let mut means = RunningMeans::new(black_box(&mut sums[..]));
    let x = [1u8; 8];
    black_box(means.record(black_box(&x[..])).is_ok());
    black_box((means.count(), means.mean(black_box(3))));
    black_box(LenError::check("x", black_box(3), black_box(4)).is_ok());
    black_box(rng.next_u32());
}

#[entry]
fn main() -> ! {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(black_box(1));
    models(&mut rng);
    more::lattices(&mut rng);
    labels::ordinal(&mut rng);
    labels::categorical(&mut rng);
    more::continuous(&mut rng);
    helpers(&mut rng);
    loop {
        black_box(());
    }
}

#[cfg(not(feature = "locate"))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    unsafe extern "C" {
        /// Defined nowhere: referencing it fails the link.
        fn panic_is_reachable() -> !;
    }
    // SAFETY: never executed; the link fails if this call survives optimisation.
    unsafe { panic_is_reachable() }
}

#[cfg(feature = "locate")]
#[panic_handler]
#[inline(never)]
fn panic(_: &core::panic::PanicInfo) -> ! {
    loop {
        black_box(());
    }
}
