//! The rest of the binary domain (tabulated lattice kernels, baselines, the second-order kernel
//! with dense and sparse `W`,
//! the tuners as binary kernels) and the continuous integrators under every data access and
//! snapshot store.

use crate::labels::{ab_methods, ab_tuner, acceptance_methods, acceptance_tuner, acs, acs_tuner};
use crate::{Bufs, Opaque, OpaqueError};
use core::hint::black_box;
use langevin_core::BinaryTarget;
use langevin_core::Kernel;
use langevin_core::baselines::{
    Balancing, BlockGibbs, FlipDelta, Gibbs, Gwg, HammingBall, LocallyBalanced, RandomWalk, Scan,
    TunedRandomWalk,
};
use langevin_core::binary::{
    BinaryChain, LatticeClasses, LatticeDmala, LatticeDula, LatticeProposal, PortablePasses,
    SmallLatticeChain, SmallLatticeDmala, StepError, StepReport,
};
use langevin_core::continuous::{
    Access, Agld, AgldSettings, BatchStream, DenseSnapshots, Ewsg, EwsgSettings, GlmSumTarget,
    Langevin, LangevinSettings, PointSnapshot, ScalarSnapshots, SgChain, SgStep, SnapshotShape,
    SnapshotStore, SnapshotUpdate, StepError as SgError, SumPotential, SumTarget, Underdamped,
    UnderdampedSettings,
};
use langevin_core::dlmc::{DlmcProposal, Solver};
use langevin_core::models::{ConstDims, Dims, IsingLattice, LatticeDims};
use langevin_core::second_order::{AbSecondOrder, SparseW, TrickParams, scratch_len};
use rand_xoshiro::Xoshiro256PlusPlus;

fn seen<E>(r: Result<StepReport, StepError<E>>) {
    if let Ok(r) = r {
        black_box((r.accepted, r.accepted_flips(), r.log_accept_ratio));
    }
}

impl FlipDelta for Opaque {
    fn log_density_delta(&mut self, x: &[u8], i: usize) -> Result<f64, OpaqueError> {
        black_box((x, i));
        if black_box(false) {
            return Err(OpaqueError(black_box(true)));
        }
        Ok(black_box(0.0))
    }
    fn commit_flip(&mut self, x: &[u8], i: usize) {
        black_box((x, i));
    }
}

/// Baselines and tuners on one binary target.
#[inline(never)]
pub fn binary_baselines<T: FlipDelta>(target: &mut T, rng: &mut Xoshiro256PlusPlus) {
    let mut bufs = Bufs::new();
    let Ok(mut chain) = BinaryChain::new(bufs.buffers(), target) else {
        return;
    };
    let mut gibbs = Gibbs::new(black_box(Scan::Random));
    let mut systematic = Gibbs::new(black_box(Scan::Systematic));
    for g in [&mut gibbs, &mut systematic] {
        seen(Kernel::step(g, target, &mut chain, rng));
    }
    seen(Kernel::step(&mut Gwg, target, &mut chain, rng));
    for balancing in [Balancing::Sqrt, Balancing::Barker] {
        let mut weights = [0.0f64; 16];
        let mut lb = LocallyBalanced::new(black_box(balancing), black_box(&mut weights[..]));
        seen(Kernel::step(&mut lb, target, &mut chain, rng));
    }
    let mut ball = [0.0f64; 64];
    if let Ok(mut hb) = HammingBall::new(black_box(2), black_box(5), &mut ball[..]) {
        black_box((hb.weights_len(), hb.next_block()));
        for _ in 0..black_box(2) {
            seen(Kernel::step(&mut hb, target, &mut chain, rng));
        }
    }
    crate::path::path_kernels(target, &mut chain, rng);
    for solver in [Solver::Euler, Solver::Interpolate] {
        if let Ok(p) = DlmcProposal::new(black_box(solver), black_box(0.4)) {
            black_box((p.solver(), p.flip_probability(black_box(0.3))));
            let mut r = Bufs::new();
            let b = r.buffers();
            black_box(p.log_q(b.x, b.grad, b.x_proposal).is_ok());
            crate::path::dlmc_kernels(p, target, &mut chain, rng);
        }
    }
    if let Ok(mut rw) = RandomWalk::new(black_box(0.1)) {
        black_box((rw.rate(), rw.flip_probability()));
        seen(rw.step(target, &mut chain, rng));
        seen(Kernel::step(&mut rw, target, &mut chain, rng));
    }
    if let Ok(mut tuned) = TunedRandomWalk::new(black_box(0.1), black_box(10), black_box(0.3)) {
        black_box((tuned.rate(), tuned.is_frozen(), tuned.kernel().rate()));
        for _ in 0..black_box(2) {
            seen(Kernel::step(&mut tuned, target, &mut chain, rng));
        }
    }
    if let Some(mut ab) = ab_tuner() {
        seen(Kernel::step(&mut ab, target, &mut chain, rng));
        ab_methods(&mut ab);
    }
    if let Some(mut a) = acs() {
        seen(Kernel::step(&mut a, target, &mut chain, rng));
    }
    if let Some(mut tuner) = acs_tuner() {
        seen(Kernel::step(&mut tuner, target, &mut chain, rng));
    }
    if let Some(mut tuner) = acceptance_tuner() {
        seen(Kernel::step(&mut tuner, target, &mut chain, rng));
        acceptance_methods::<langevin_core::Binary>(&mut tuner);
    }
    let mut raw = Bufs::new();
    let r = raw.buffers();
    black_box(gibbs.update_binary(target, r.x, rng).is_ok());
    black_box(systematic.sweep_binary(target, r.x, rng).is_ok());
    black_box(Gwg::log_pick(r.x, r.grad, black_box(3)).is_ok());
    black_box(target.dim());
    black_box(target.log_density_delta(r.x, black_box(2)).is_ok());
    target.commit_flip(r.x, black_box(2));
}

/// Block Gibbs on an RBM.
#[inline(never)]
pub fn rbm_block_gibbs<M: langevin_core::math::FlipMath>(
    rbm: &langevin_core::models::Rbm<'_, M>,
    rng: &mut Xoshiro256PlusPlus,
) {
    let mut raw = Bufs::new();
    let r = raw.buffers();
    let mut hidden = [0u8; 16];
    black_box(BlockGibbs::sweep(rbm, r.x, black_box(&mut hidden[..]), rng).is_ok());
}

/// The tabulated lattice kernels on a lattice of either kind of size.
#[inline(never)]
pub fn lattice<D: LatticeDims>(model: &IsingLattice<D>, rng: &mut Xoshiro256PlusPlus) {
    let Ok(p) = LatticeProposal::new(model, black_box(0.5), black_box(0.5)) else {
        return;
    };
    black_box((p.model().coupling(), p.step(), p.balance()));
    let mut s = Bufs::new();
    let b = s.buffers();
    black_box(p.flip_probability(b.x, black_box(5)));
    black_box(p.log_q(b.x, b.x_proposal).is_ok());
    let mut m = *model;
    let mut bufs = Bufs::new();
    let Ok(mut chain) = BinaryChain::new(bufs.buffers(), &mut m) else {
        return;
    };
    let dula = LatticeDula::new(p);
    let dmala = LatticeDmala::new(p);
    black_box((dula.proposal().step(), dmala.proposal().step()));
    for _ in 0..black_box(2) {
        if let Ok(r) = dula.step(&mut chain, rng) {
            black_box(r.accepted_flips());
        }
        if let Ok(r) = dmala.step(&mut chain, rng) {
            black_box(r.accepted_flips());
        }
        let mut classes = LatticeClasses::new(black_box([0u8; 64]));
        let step = dmala.step_with_classes(&mut chain, &mut classes, rng, &PortablePasses);
        if let Ok(r) = step {
            black_box((r.accepted_flips(), classes.into_inner()));
        }
    }
}

/// Both tabulated lattice kernels, on a compile-time and a run-time size.
#[inline(never)]
pub fn lattices(rng: &mut Xoshiro256PlusPlus) {
    if let Ok(m) =
        IsingLattice::<ConstDims<8, 8>>::new(black_box(0.3), black_box(0.1), black_box(true))
    {
        lattice(&m, rng);
    }
    let dims = Dims {
        rows: black_box(8),
        cols: black_box(8),
    };
    if let Ok(m) = IsingLattice::with_dims(dims, black_box(0.3), black_box(0.1), black_box(true)) {
        lattice(&m, rng);
    }
    small_lattice(rng);
}

/// The integer lattice DMALA with opaque parameters (its table built at run time) and buffers.
#[inline(never)]
fn small_lattice(rng: &mut Xoshiro256PlusPlus) {
    let (rows, cols) = (black_box(8), black_box(8));
    let Ok(k) = SmallLatticeDmala::new(
        rows,
        cols,
        black_box(true),
        black_box(0.3),
        black_box(0.1),
        black_box(0.5),
        black_box(0.5),
    ) else {
        return;
    };
    let (mut x, mut class) = (black_box([0u8; 64]), [0u8; 64]);
    let (x, class) = (black_box(&mut x[..]), black_box(&mut class[..]));
    let Ok(mut chain) = SmallLatticeChain::new(&k, x, class) else {
        return;
    };
    for _ in 0..black_box(2) {
        if let Ok(r) = k.step(&mut chain, rng) {
            black_box((r.accepted, r.proposed_flips, r.log_accept_ratio_fixed));
        }
    }
    black_box((
        k.flip_probability(chain.state(), black_box(3)),
        k.log_density(&chain),
    ));
    black_box((chain.bonds(), chain.magnetisation()));
}

/// Coordinates of the second-order kernel's parameters and buffers.
const SECOND_ORDER_DIM: usize = 64;

/// The second-order kernel with opaque parameters and buffers.
#[inline(never)]
pub fn second_order<T: BinaryTarget>(target: &mut T, rng: &mut Xoshiro256PlusPlus) {
    const D: usize = SECOND_ORDER_DIM;
    let w = [0.0f32; D * D];
    let diag = [1.0f32; D];
    let a = [0.0f32; D * D];
    let Ok(params) = TrickParams::new(
        black_box(&w[..]),
        black_box(&diag[..]),
        black_box(&a[..]),
        black_box(0.5),
        black_box(0.5),
    ) else {
        return;
    };
    black_box((
        params.dim(),
        params.step(),
        params.balance(),
        params.w(),
        params.diag(),
        params.factor(),
    ));
    let stepped = params.with_step(black_box(0.25));
    let a2 = [0.0f32; D * D];
    let rebalanced = params.with_balance(black_box(0.75), black_box(&a2[..]));
    let more = [stepped, rebalanced].into_iter().flatten();
    step_second_order(params, more, target, rng);
    black_box(scratch_len(black_box(9)));
    sparse_second_order(target, rng);
}

/// The binary second-order kernel over opaque buffers of [`SECOND_ORDER_DIM`] coordinates:
/// steps with `params`, then with each of `more` in turn (through `set_params`), and one
/// transition.
fn step_second_order<'p, T: BinaryTarget>(
    params: TrickParams<'p>,
    more: impl IntoIterator<Item = TrickParams<'p>>,
    target: &mut T,
    rng: &mut Xoshiro256PlusPlus,
) {
    const D: usize = SECOND_ORDER_DIM;
    let mut scratch = [0.0f64; scratch_len(D)];
    let mut state = [0u8; D];
    let Ok(mut kernel) = AbSecondOrder::new(
        params,
        black_box(&mut scratch[..]),
        black_box(&mut state[..]),
    ) else {
        return;
    };
    black_box(kernel.params().dim());
    let mut bufs = Bufs::new();
    let Ok(mut chain) = BinaryChain::new(bufs.buffers(), target) else {
        return;
    };
    for p in core::iter::once(params).chain(more) {
        black_box(kernel.set_params(p).is_ok());
        for _ in 0..black_box(2) {
            seen(kernel.step(target, &mut chain, rng));
            seen(Kernel::step(&mut kernel, target, &mut chain, rng));
        }
    }
    let mut s = Bufs::new();
    let b = s.buffers();
    let u = [0.0f64; D];
    if let Ok(t) = kernel.transition(b.x, b.grad, b.x_proposal, b.grad_proposal, &u[..]) {
        black_box(t);
    }
}

/// The binary second-order kernel with a sparse `W` of opaque structure.
#[inline(never)]
fn sparse_second_order<T: BinaryTarget>(target: &mut T, rng: &mut Xoshiro256PlusPlus) {
    const D: usize = SECOND_ORDER_DIM;
    let (offsets, columns, values) = ([0u32; D + 1], [0u32; 4 * D], [0.0f32; 4 * D]);
    let diag = [1.0f32; D];
    let a = [0.0f32; D * D];
    let Ok(params) = SparseW::new(
        black_box(&offsets[..]),
        black_box(&columns[..]),
        black_box(&values[..]),
    )
    .and_then(|w| {
        TrickParams::with_sparse_w(
            w,
            black_box(&diag[..]),
            black_box(&a[..]),
            black_box(0.5),
            black_box(0.5),
        )
    }) else {
        return;
    };
    step_second_order(params, core::iter::empty(), target, rng);
}

/// A sum target whose dimension, number of terms, outputs and errors are opaque.
struct OpaqueSum;

impl SumTarget for OpaqueSum {
    type Error = OpaqueError;
    fn dim(&self) -> usize {
        black_box(DIM)
    }
    fn num_terms(&self) -> usize {
        black_box(TERMS)
    }
    fn add_term_grad(
        &mut self,
        i: usize,
        theta: &[f64],
        scale: f64,
        acc: &mut [f64],
    ) -> Result<(), OpaqueError> {
        black_box((i, theta, scale));
        for a in acc.iter_mut() {
            *a += black_box(0.0);
        }
        if black_box(false) {
            return Err(OpaqueError(black_box(true)));
        }
        Ok(())
    }
}

impl GlmSumTarget for OpaqueSum {
    fn term_scalar(&mut self, i: usize, theta: &[f64]) -> Result<f64, OpaqueError> {
        black_box((i, theta));
        if black_box(false) {
            return Err(OpaqueError(black_box(true)));
        }
        Ok(black_box(0.0))
    }
    fn add_term_data(&self, i: usize, scale: f64, acc: &mut [f64]) {
        black_box((i, scale));
        for a in acc.iter_mut() {
            *a += black_box(0.0);
        }
    }
    fn add_shared_grad(
        &mut self,
        theta: &[f64],
        scale: f64,
        acc: &mut [f64],
    ) -> Result<(), OpaqueError> {
        self.add_term_grad(0, theta, scale, acc)
    }
}

impl SumPotential for OpaqueSum {
    fn term_potential(&mut self, i: usize, theta: &[f64]) -> Result<f64, OpaqueError> {
        self.term_scalar(i, theta)
    }
}

const DIM: usize = 8;
const TERMS: usize = 32;
const ACCESS: [Access; 3] = [Access::Random, Access::Reshuffle, Access::Cyclic];

fn sg_seen<E>(r: Result<SgStep, SgError<E>>) {
    if let Ok(r) = r {
        black_box((r.grad_evals, r.index_moves, r.refreshed));
    }
}

/// Steps a chain through its inherent step and the [`SgChain`] trait.
fn drive<C: SgChain<OpaqueSum>>(chain: &mut C, rng: &mut Xoshiro256PlusPlus) {
    for _ in 0..black_box(2) {
        sg_seen(chain.step_with(&mut OpaqueSum, rng));
    }
    black_box(chain.position());
}

/// Every integrator under every access order, and AGLD with every snapshot store and update.
#[inline(never)]
pub fn continuous(rng: &mut Xoshiro256PlusPlus) {
    let t = &mut OpaqueSum;
    let theta0 = [0.0f64; DIM];
    let theta0 = black_box(&theta0[..]);
    let (d, n) = (black_box(DIM), black_box(TERMS));
    let mut g = [0.0f64; DIM];
    black_box(
        t.term_grad(black_box(1), theta0, black_box(&mut g[..]))
            .is_ok(),
    );
    black_box(
        t.add_full_grad(theta0, black_box(1.0), black_box(&mut g[..]))
            .is_ok(),
    );
    black_box(t.potential(theta0).is_ok());

    // Batch streams alone.
    for access in ACCESS {
        let mut perm = [0u32; TERMS];
        let Some(perm) = black_box(&mut perm[..]).get_mut(..access.index_len(n)) else {
            continue;
        };
        if let Ok(mut s) = BatchStream::new(black_box(access), n, perm) {
            black_box((s.access(), s.terms(), s.next_index(rng)));
            let mut out = [0u32; 4];
            s.fill(rng, black_box(&mut out[..]));
            black_box(out);
        }
    }

    // LMC and SGLD.
    let lmc = LangevinSettings::lmc(black_box(0.01));
    let sgld = LangevinSettings::sgld(black_box(0.01), black_box(4));
    for (k, settings) in [lmc, sgld].into_iter().enumerate() {
        let Ok(settings) = settings else { continue };
        for access in ACCESS {
            let settings = settings.with_access(black_box(access));
            black_box((settings.step(), settings.batch(), settings.access(), k));
            let mut work = [0.0f64; Langevin::workspace_len(DIM)];
            let mut index = [0u32; TERMS];
            let len = black_box(Langevin::index_len(&settings, n));
            let Some(index) = index.get_mut(..len) else {
                continue;
            };
            if let Ok(mut c) = Langevin::new(settings, d, n, theta0, &mut work[..], index) {
                black_box((c.settings().step(), c.theta()));
                c.theta_mut().fill(black_box(0.0));
                sg_seen(c.step(t, rng));
                drive(&mut c, rng);
            }
        }
    }

    // Underdamped and SGHMC.
    let full = UnderdampedSettings::full(black_box(0.05), black_box(1.0));
    let sghmc = UnderdampedSettings::sghmc(black_box(0.05), black_box(1.0), black_box(4));
    for settings in [full, sghmc].into_iter().flatten() {
        for access in ACCESS {
            let settings = settings.with_access(black_box(access));
            black_box((
                settings.step(),
                settings.friction(),
                settings.batch(),
                settings.access(),
            ));
            let mut work = [0.0f64; Underdamped::workspace_len(DIM)];
            let mut index = [0u32; TERMS];
            let len = black_box(Underdamped::index_len(&settings, n));
            let Some(index) = index.get_mut(..len) else {
                continue;
            };
            if let Ok(mut c) = Underdamped::new(settings, d, n, theta0, &mut work[..], index) {
                black_box((c.settings().step(), c.theta(), c.momentum()));
                let (th, m) = c.state_mut();
                th.fill(black_box(0.0));
                m.fill(black_box(0.0));
                sg_seen(c.step(t, rng));
                drive(&mut c, rng);
            }
        }
    }

    // EWSG.
    if let Ok(settings) = EwsgSettings::new(black_box(0.05), black_box(1.0))
        .and_then(|s| s.with_batch(black_box(2)))
        .map(|s| s.with_index_chain(black_box(3)))
    {
        black_box((
            settings.step(),
            settings.friction(),
            settings.batch(),
            settings.index_chain(),
        ));
        let mut work = [0.0f64; Ewsg::workspace_len(DIM)];
        if let Ok(mut c) = Ewsg::new(settings, d, n, theta0, &mut work[..]) {
            black_box((c.settings().step(), c.theta(), c.momentum(), c.gradient()));
            let (th, m) = c.state_mut();
            th.fill(black_box(0.0));
            m.fill(black_box(0.0));
            sg_seen(c.select(t, rng));
            sg_seen(c.step(t, rng));
            drive(&mut c, rng);
        }
    }

    // AGLD: every update × access × store.
    let updates = [
        SnapshotUpdate::Total {
            period: black_box(4),
        },
        SnapshotUpdate::Partial,
        SnapshotUpdate::Mixed {
            period: black_box(4),
        },
    ];
    for update in updates {
        black_box((update.is_partial(), update.refreshes_at(black_box(8))));
        for access in ACCESS {
            let Ok(settings) =
                AgldSettings::new(black_box(0.01), black_box(4), black_box(access), update)
            else {
                continue;
            };
            black_box((
                settings.step(),
                settings.batch(),
                settings.access(),
                settings.update(),
            ));
            let mut buf = [0.0f64; (TERMS + 1) * DIM];
            let buf = black_box(&mut buf[..]);
            if let Some(b) = buf.get_mut(..PointSnapshot::len(d))
                && let Ok(mut s) = PointSnapshot::new(d, n, b)
            {
                black_box((s.point(), s.sum(), s.dim(), s.terms()));
                black_box(
                    s.refresh(t, theta0, &mut [0.0; DIM], &mut [0.0; DIM])
                        .is_ok(),
                );
                agld(settings, s, rng);
            }
            let dense = DenseSnapshots::len(d, n).unwrap_or(0);
            if let Some(b) = buf.get_mut(..dense)
                && let Ok(mut s) = DenseSnapshots::new(d, n, b)
            {
                black_box((s.table(), s.entry(black_box(3)), s.sum()));
                s.recompute_sum();
                agld(settings, s, rng);
            }
            let scalar = ScalarSnapshots::len(d, n).unwrap_or(0);
            if let Some(b) = buf.get_mut(..scalar)
                && let Ok(mut s) = ScalarSnapshots::new(d, n, b)
            {
                black_box((s.scalars(), s.sum()));
                s.recompute_sum(&OpaqueSum);
                agld(settings, s, rng);
            }
        }
    }
}

fn agld<S: SnapshotStore<OpaqueSum>>(
    settings: AgldSettings,
    store: S,
    rng: &mut Xoshiro256PlusPlus,
) {
    let (d, n) = (black_box(DIM), black_box(TERMS));
    let theta0 = [0.0f64; DIM];
    let mut work = [0.0f64; Agld::<PointSnapshot<'_>>::workspace_len(DIM)];
    let mut index = [0u32; 4 + TERMS];
    let len = black_box(Agld::<S>::index_len(&settings, n));
    let Some(index) = index.get_mut(..len) else {
        return;
    };
    if let Ok(mut c) = Agld::new(
        settings,
        d,
        n,
        black_box(&theta0[..]),
        store,
        black_box(&mut work[..]),
        index,
    ) {
        black_box((
            c.settings().step(),
            c.theta(),
            c.store().dim(),
            c.steps(),
            c.gradient(),
        ));
        c.theta_mut().fill(black_box(0.0));
        for _ in 0..black_box(3) {
            sg_seen(c.step(&mut OpaqueSum, rng));
        }
        drive(&mut c, rng);
    }
}

/// Replica exchange on a binary target: construction, sweeps, restarts and the accessors.
#[inline(never)]
pub fn replica_exchange<T: BinaryTarget>(target: &mut T, rng: &mut Xoshiro256PlusPlus) {
    use langevin_core::tempering::{LadderSettings, ReplicaScratch, Replicas};
    let (mut b0, mut b1) = (Bufs::new(), Bufs::new());
    let (Ok(c0), Ok(c1)) = (
        BinaryChain::new(b0.buffers(), &mut *target),
        BinaryChain::new(b1.buffers(), &mut *target),
    ) else {
        return;
    };
    let mut chains = [c0, c1];
    let n = black_box(2usize);
    let mut scratch = ReplicaScratch::<2>::new();
    let buffers = scratch.buffers(chains.get_mut(..n).unwrap_or(&mut []));
    let mut s = LadderSettings::default();
    s.min_beta = black_box(s.min_beta);
    s.budget = black_box(s.budget);
    s.target_acceptance = black_box(s.target_acceptance);
    s.window = black_box(s.window);
    black_box(s.validate().is_ok());
    let Ok(mut replicas) = Replicas::new(buffers, s, &mut *target) else {
        return;
    };
    for _ in 0..black_box(2) {
        if let Ok(r) = replicas.sweep(&mut *target, rng) {
            black_box((r.swaps, r.cold_swapped, r.cold.accepted));
        }
    }
    let x = [0u8; 4];
    black_box(
        replicas
            .restart(
                black_box(1),
                x.get(..black_box(4)).unwrap_or(&[]),
                &mut *target,
            )
            .is_ok(),
    );
    black_box((replicas.betas(), replicas.swaps(), replicas.tuners().len()));
    black_box((
        replicas.cold().map(|c| c.log_density()),
        replicas.chains().len(),
    ));
    black_box((replicas.sweeps(), replicas.is_frozen()));
    if black_box(false) {
        replicas.freeze();
    }
}
