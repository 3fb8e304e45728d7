//! Property tests of the binary kernels and models, and the value-stability (golden) test.
//!
//! For every core model (lattice Ising periodic and open with sides 1–5, graph Ising, binary
//! quadratic with asymmetric `W` and nonzero diagonal, RBM), with and without a preconditioner:
//! states stay in `{0,1}`, the chain's cached `U` and `∇U` equal a fresh evaluation by a second
//! model instance after every step, the same seed gives the same stream, each step consumes a
//! fixed number of random words, and the incremental model updates equal a full recomputation
//! (with moves that are and are not committed), which in turn matches an `f64` reference.
//!
//! # Tolerances
//!
//! With `ε = 2^-52` and `S` the sum of the magnitudes of the model's parameters (a bound on every
//! partial sum of `U` and of a gradient entry):
//! * lattice, graph and quadratic `U` are `f64` sums; an incremental update adds at most
//!   `4(d + 4)·ε·S` rounding per move, so after `t` moves
//!   `|U_inc − U_fresh| ≤ (t + 1)·4(d + 4)·ε·S`.
//! * lattice and graph gradients are recomputed from the state for every touched site: exact.
//! * quadratic gradients are `f64` sums rounded to `f32`: the two roundings of values that differ
//!   by the drift `δ` above differ by at most `δ + 2^-23·|g|`.
//! * RBM pre-activations are `f64` sums rounded to `f32` (1 ulp apart at most), then `softplus` and
//!   `sigmoid` in `f32`; so `|ΔU| ≤ 2^-21·Σ_j(|p_j| + 1)` and
//!   `|Δg_i| ≤ 2^-21·(H + 1)·(|b_i| + Σ_j |W_ji|(|p_j| + 1))`.

use langevin_core::binary::{BinaryChain, Dmala, Dula, FlipProposal, StepReport};
use langevin_core::models::{BinaryQuadratic, ConstDims, Dims, IsingLattice, LatticeDims, Rbm};
use langevin_core::{Binary, Kernel};
use langevin_core::{BinaryTarget, FlipMove};
use langevin_tests::{
    ChainBox, GraphData, QuadraticData, RbmData, golden_hash, ising_reference, lattice_bonds,
    uniform,
};
use proptest::prelude::*;
use rand_core::{Infallible, Rng, SeedableRng, TryRng};
use rand_xoshiro::Xoshiro256PlusPlus;

const EPS: f64 = f64::EPSILON;
const F32_ULP: f64 = f32::EPSILON as f64; // 2^-23

/// A generator that counts the 64-bit words drawn from it.
struct Counting<R> {
    inner: R,
    words: u64,
}

impl<R: Rng> TryRng for Counting<R> {
    type Error = Infallible;
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        self.words += 1;
        Ok(self.inner.next_u64() as u32)
    }
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        self.words += 1;
        Ok(self.inner.next_u64())
    }
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        for chunk in dst.chunks_mut(8) {
            let w = self.try_next_u64()?.to_le_bytes();
            chunk.copy_from_slice(&w[..chunk.len()]);
        }
        Ok(())
    }
}

/// How far a cached or incremental value may be from a fresh one, given the number of moves
/// applied so far (see the module docs).
trait Tolerance {
    fn log_density(&self, x: &[u8], moves: usize) -> f64;
    fn grad(&self, x: &[u8], i: usize, g: f64, moves: usize) -> f64;
}

/// `f64`-summed models: lattice, graph (exact gradients) and quadratic (rounded `f64` gradients).
struct Summed {
    d: usize,
    scale: f64,
    exact_grad: bool,
}

impl Summed {
    fn drift(&self, moves: usize) -> f64 {
        (moves as f64 + 1.0) * 4.0 * (self.d as f64 + 4.0) * EPS * self.scale
    }
}

impl Tolerance for Summed {
    fn log_density(&self, _x: &[u8], moves: usize) -> f64 {
        self.drift(moves)
    }
    fn grad(&self, _x: &[u8], _i: usize, g: f64, moves: usize) -> f64 {
        if self.exact_grad {
            0.0
        } else {
            let delta = self.drift(moves);
            2.0 * delta + F32_ULP * (g.abs() + delta)
        }
    }
}

struct RbmTolerance<'a>(&'a RbmData);

impl Tolerance for RbmTolerance<'_> {
    fn log_density(&self, x: &[u8], _moves: usize) -> f64 {
        let pre = self.0.pre_activations(x);
        4.0 * F32_ULP * pre.iter().map(|p| p.abs() + 1.0).sum::<f64>()
    }
    fn grad(&self, x: &[u8], i: usize, _g: f64, _moves: usize) -> f64 {
        let pre = self.0.pre_activations(x);
        let v = self.0.b.len();
        let h = pre.len() as f64;
        let s: f64 = pre
            .iter()
            .enumerate()
            .map(|(j, p)| f64::from(self.0.w[j * v + i]).abs() * (p.abs() + 1.0))
            .sum();
        4.0 * F32_ULP * (h + 1.0) * (f64::from(self.0.b[i]).abs() + s)
    }
}

fn hamming(a: &[u8], b: &[u8]) -> u32 {
    a.iter().zip(b).filter(|(x, y)| x != y).count() as u32
}

/// Runs `steps` steps of `kernel` on `target` from `x0` and checks every invariant after each
/// step against `fresh` (a second instance of the same model).
fn check_chain<T, F, K>(
    target: &mut T,
    fresh: &mut F,
    kernel: &mut K,
    x0: &[u8],
    seed: u64,
    steps: usize,
    tol: &dyn Tolerance,
) -> Result<Vec<StepReport>, TestCaseError>
where
    T: BinaryTarget<Error = Infallible> + ?Sized,
    F: BinaryTarget<Error = Infallible> + ?Sized,
    K: Kernel<Binary>,
{
    let d = x0.len();
    let mut bufs = ChainBox::new(x0);
    let mut chain = BinaryChain::new(bufs.buffers(), target).unwrap();
    let mut rng = Counting {
        inner: Xoshiro256PlusPlus::seed_from_u64(seed),
        words: 0,
    };
    let words_per_step = d.div_ceil(2) as u64 + 1;
    let mut g = vec![0.0f32; d];
    let mut reports = Vec::with_capacity(steps);
    let mut moves = 0usize;
    for t in 0..steps {
        let before = chain.state().to_vec();
        let (u_before, g_before) = (chain.log_density(), chain.grad().to_vec());
        let words = rng.words;
        let r = kernel.step(target, &mut chain, &mut rng).unwrap();
        reports.push(r);
        prop_assert_eq!(
            rng.words - words,
            words_per_step,
            "random words at step {}",
            t
        );
        prop_assert!(chain.state().iter().all(|&v| v <= 1), "state left {{0,1}}");
        prop_assert!(r.rejection.is_none());
        prop_assert_eq!(r.evaluations, u32::from(r.proposed_flips > 0));
        if r.accepted {
            prop_assert_eq!(hamming(&before, chain.state()), r.proposed_flips);
            moves += usize::from(r.proposed_flips > 0);
        } else {
            prop_assert_eq!(chain.state(), &before[..]);
            prop_assert_eq!(chain.log_density().to_bits(), u_before.to_bits());
            prop_assert_eq!(chain.grad(), &g_before[..]);
        }
        let x = chain.state();
        let u = fresh.log_density_and_grad(x, &mut g).unwrap();
        let tu = tol.log_density(x, moves);
        prop_assert!(
            (chain.log_density() - u).abs() <= tu,
            "step {}: cached U {} vs fresh {} (tol {:e})",
            t,
            chain.log_density(),
            u,
            tu
        );
        for (i, (&gc, &gf)) in chain.grad().iter().zip(&g).enumerate() {
            let tg = tol.grad(x, i, f64::from(gf), moves);
            prop_assert!(
                (f64::from(gc) - f64::from(gf)).abs() <= tg,
                "step {}: cached grad[{}] {} vs fresh {} (tol {:e})",
                t,
                i,
                gc,
                gf,
                tg
            );
        }
    }
    Ok(reports)
}

/// Applies random moves through `log_density_and_grad_after` on `inc`, committing about half of
/// them, and compares each with a fresh evaluation by `fresh`.
fn check_incremental<T, F>(
    inc: &mut T,
    fresh: &mut F,
    x0: &[u8],
    seed: u64,
    moves: usize,
    tol: &dyn Tolerance,
) -> Result<(), TestCaseError>
where
    T: BinaryTarget<Error = Infallible> + ?Sized,
    F: BinaryTarget<Error = Infallible> + ?Sized,
{
    let d = x0.len();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut cur = x0.to_vec();
    let mut g_cur = vec![0.0f32; d];
    let mut u_cur = inc.log_density_and_grad(&cur, &mut g_cur).unwrap();
    let (mut g_inc, mut g_fresh) = (vec![0.0f32; d], vec![0.0f32; d]);
    let mut committed = 0usize;
    for m in 0..moves {
        // Flip each coordinate with a probability drawn per move: from single flips to all.
        let p = unit(&mut rng);
        let flipped: Vec<u32> = (0..d as u32).filter(|_| unit(&mut rng) < p).collect();
        let mut to = cur.clone();
        for &i in &flipped {
            to[i as usize] ^= 1;
        }
        let mv = FlipMove {
            from: &cur,
            to: &to,
            flipped: &flipped,
            from_log_density: u_cur,
            from_grad: &g_cur,
        };
        let u_inc = inc.log_density_and_grad_after(&mv, &mut g_inc).unwrap();
        let u_fresh = fresh.log_density_and_grad(&to, &mut g_fresh).unwrap();
        let tu = tol.log_density(&to, committed + 1);
        prop_assert!(
            (u_inc - u_fresh).abs() <= tu,
            "move {} ({} flips): incremental U {} vs fresh {} (tol {:e})",
            m,
            flipped.len(),
            u_inc,
            u_fresh,
            tu
        );
        for i in 0..d {
            let tg = tol.grad(&to, i, f64::from(g_fresh[i]), committed + 1);
            prop_assert!(
                (f64::from(g_inc[i]) - f64::from(g_fresh[i])).abs() <= tg,
                "move {}: incremental grad[{}] {} vs fresh {} (tol {:e})",
                m,
                i,
                g_inc[i],
                g_fresh[i],
                tg
            );
        }
        if unit(&mut rng) < 0.5 {
            inc.commit();
            cur = to;
            u_cur = u_inc;
            g_cur.copy_from_slice(&g_inc);
            committed += 1;
        }
    }
    Ok(())
}

fn unit(rng: &mut Xoshiro256PlusPlus) -> f64 {
    langevin_core::random::unit_f64(rng)
}

fn random_state(d: usize, rng: &mut Xoshiro256PlusPlus) -> Vec<u8> {
    (0..d).map(|_| (rng.next_u64() >> 63) as u8).collect()
}

/// Kernel parameters shared by the chain properties.
#[derive(Clone, Debug)]
struct KernelCase {
    step: f64,
    balance: f64,
    precond: bool,
    metropolis: bool,
    seed: u64,
}

fn kernel_case() -> impl Strategy<Value = KernelCase> {
    (
        prop_oneof![4 => -3.0f64..1.7, 1 => Just(13.8)], // ln a: 0.05 … 5.5, or 1e6
        0.05f64..=1.0,
        any::<bool>(),
        any::<bool>(),
        any::<u64>(),
    )
        .prop_map(|(ln_a, balance, precond, metropolis, seed)| KernelCase {
            step: ln_a.exp(),
            balance,
            precond,
            metropolis,
            seed,
        })
}

/// Runs [`check_chain`] with the kernel `case` describes (and checks the stream repeats).
fn check_kernel_case<T, F>(
    make: &mut dyn FnMut() -> (T, F),
    x0: &[u8],
    case: &KernelCase,
    tol: &dyn Tolerance,
) -> Result<(), TestCaseError>
where
    T: BinaryTarget<Error = Infallible>,
    F: BinaryTarget<Error = Infallible>,
{
    let d = x0.len();
    let mut prng = Xoshiro256PlusPlus::seed_from_u64(case.seed ^ 0x5eed);
    let p: Vec<f32> = (0..d)
        .map(|_| uniform(&mut prng, 0.3, 3.0) as f32)
        .collect();
    let base = FlipProposal::new(case.step, case.balance).unwrap();
    let proposal = if case.precond {
        base.preconditioned(&p).unwrap()
    } else {
        base
    };
    let mut run = || -> Result<Vec<StepReport>, TestCaseError> {
        let (mut target, mut fresh) = make();
        if case.metropolis {
            let mut k = Dmala::new(proposal);
            check_chain(&mut target, &mut fresh, &mut k, x0, case.seed, 40, tol)
        } else {
            let mut k = Dula::new(proposal);
            check_chain(&mut target, &mut fresh, &mut k, x0, case.seed, 40, tol)
        }
    };
    let first = run()?;
    let second = run()?;
    prop_assert_eq!(first, second, "same seed, different stream");
    Ok(())
}

fn lattice_scale(rows: usize, cols: usize, periodic: bool, j: f32, h: f32) -> f64 {
    let bonds = lattice_bonds(rows, cols, periodic).len() as f64;
    f64::from(j).abs() * bonds + f64::from(h).abs() * (rows * cols) as f64
}

fn quadratic_scale(q: &QuadraticData) -> f64 {
    q.w.iter().chain(&q.b).map(|v| f64::from(*v).abs()).sum()
}

fn graph_scale(g: &GraphData) -> f64 {
    g.couplings
        .iter()
        .chain(&g.field)
        .map(|v| f64::from(*v).abs())
        .sum()
}

/// Fresh evaluations match an independent `f64` implementation of each model's definition.
fn check_fresh_against_definition(
    rows: usize,
    cols: usize,
    periodic: bool,
    seed: u64,
) -> Result<(), TestCaseError> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let d = rows * cols;
    let x = random_state(d, &mut rng);
    let mut g = vec![0.0f32; d];

    // Lattice: f32 parameters, so the reference uses their exact values.
    let (j, h) = (
        uniform(&mut rng, -1.0, 1.0) as f32,
        uniform(&mut rng, -1.0, 1.0) as f32,
    );
    let mut lat = IsingLattice::with_dims(Dims { rows, cols }, j, h, periodic).unwrap();
    let edges: Vec<(usize, usize, f64)> = lattice_bonds(rows, cols, periodic)
        .into_iter()
        .map(|(a, b)| (a, b, f64::from(j)))
        .collect();
    let (u_ref, g_ref) = ising_reference(&edges, &vec![f64::from(h); d], &x);
    let u = lat.log_density_and_grad(&x, &mut g).unwrap();
    let scale = lattice_scale(rows, cols, periodic, j, h);
    prop_assert!(
        close(u, u_ref, 4.0 * (d as f64 + 4.0) * EPS * scale),
        "lattice U {} vs {}",
        u,
        u_ref
    );
    for i in 0..d {
        // 2(J·n + h) in f32: two roundings of values below 4|J| + |h|.
        let tol = 2.0 * F32_ULP * (4.0 * f64::from(j).abs() + f64::from(h).abs());
        prop_assert!(
            close(f64::from(g[i]), g_ref[i], tol),
            "lattice grad[{}] {} vs {}",
            i,
            g[i],
            g_ref[i]
        );
    }

    // Graph.
    let graph = GraphData::random(d, 0.5, 1.0, 1.0, &mut rng);
    let u = graph.model().log_density_and_grad(&x, &mut g).unwrap();
    let (u_ref, g_ref) = graph.reference(&x);
    let scale = graph_scale(&graph);
    check_pairwise(d, (u, &g), (u_ref, &g_ref), scale)?;

    // Quadratic.
    let quad = QuadraticData::random(d, 0.5, 1.0, &mut rng);
    let mut cache = quad.cache();
    let u = BinaryQuadratic::new(&quad.w, &quad.b, &mut cache)
        .unwrap()
        .log_density_and_grad(&x, &mut g)
        .unwrap();
    let (u_ref, g_ref) = quad.reference(&x);
    let scale = quadratic_scale(&quad);
    check_pairwise(d, (u, &g), (u_ref, &g_ref), scale)?;

    // RBM with `d` visible units: softplus and sigmoid in f32 (a few ulps each).
    let rbm = RbmData::random(d, 1 + (seed % 5) as usize, 1.5, 1.0, 1.0, &mut rng);
    let mut cache = rbm.cache();
    let u = Rbm::new(&rbm.w, &rbm.b, &rbm.c, &mut cache)
        .unwrap()
        .log_density_and_grad(&x, &mut g)
        .unwrap();
    let (u_ref, g_ref) = rbm.reference(&x);
    let tol = RbmTolerance(&rbm);
    prop_assert!(
        close(u, u_ref, tol.log_density(&x, 0)),
        "RBM U {} vs {}",
        u,
        u_ref
    );
    for i in 0..d {
        prop_assert!(close(
            f64::from(g[i]),
            g_ref[i],
            tol.grad(&x, i, g_ref[i], 0)
        ));
    }
    Ok(())
}

/// `|a − b| ≤ tol`.
fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

/// `U` and `∇U` of a pairwise model (`d` coordinates) against its `f64` reference, within the
/// rounding bound of sums of terms of size `scale`.
fn check_pairwise(
    d: usize,
    (u, g): (f64, &[f32]),
    (u_ref, g_ref): (f64, &[f64]),
    scale: f64,
) -> Result<(), TestCaseError> {
    prop_assert!(close(u, u_ref, 4.0 * (d as f64 + 4.0) * EPS * scale));
    for i in 0..d {
        prop_assert!(close(
            f64::from(g[i]),
            g_ref[i],
            F32_ULP * g_ref[i].abs() + 4.0 * d as f64 * EPS * scale
        ));
    }
    Ok(())
}

/// Compile-time and run-time lattice sizes give bit-identical chains.
fn check_const_dims(seed: u64, periodic: bool) -> Result<(), TestCaseError> {
    fn run<D: LatticeDims>(dims: D, periodic: bool, seed: u64) -> Vec<(Vec<u8>, u64)> {
        let mut m = IsingLattice::with_dims(dims, 0.35, -0.2, periodic).unwrap();
        let d = dims.rows() * dims.cols();
        let mut bufs = ChainBox::new(&vec![0u8; d]);
        let mut chain = BinaryChain::new(bufs.buffers(), &mut m).unwrap();
        let k = Dmala::new(FlipProposal::new(0.7, 0.5).unwrap());
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        (0..30)
            .map(|_| {
                k.step(&mut m, &mut chain, &mut rng).unwrap();
                (chain.state().to_vec(), chain.log_density().to_bits())
            })
            .collect()
    }
    macro_rules! same_chain {
        ($(($r:literal, $c:literal)),*) => {$(
            prop_assert_eq!(
                run(ConstDims::<$r, $c>, periodic, seed),
                run(Dims { rows: $r, cols: $c }, periodic, seed)
            );
        )*};
    }
    same_chain!((1, 1), (1, 2), (2, 2), (3, 3), (3, 5));
    Ok(())
}

/// The caches of the two runs of [`check_kernel_case`] (a pair of models each), from four
/// caches, taken last run first.
fn cache_pool(caches: &mut [Vec<f64>]) -> Vec<Option<(&mut Vec<f64>, &mut Vec<f64>)>> {
    let [a, b, c, e] = caches else {
        panic!("four caches")
    };
    vec![Some((a, b)), Some((c, e))]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn lattice_chain_invariants(
        rows in 1usize..=5,
        cols in 1usize..=5,
        periodic in any::<bool>(),
        j in -1.0f32..1.0,
        h in -1.0f32..1.0,
        case in kernel_case(),
    ) {
        let dims = Dims { rows, cols };
        let d = rows * cols;
        let x0 = random_state(d, &mut Xoshiro256PlusPlus::seed_from_u64(case.seed));
        let tol = Summed { d, scale: lattice_scale(rows, cols, periodic, j, h), exact_grad: true };
        let mut make = || {
            (
                IsingLattice::with_dims(dims, j, h, periodic).unwrap(),
                IsingLattice::with_dims(dims, j, h, periodic).unwrap(),
            )
        };
        check_kernel_case(&mut make, &x0, &case, &tol)?;
    }

    #[test]
    fn graph_chain_invariants(d in 1usize..=14, p_edge in 0.0f64..1.0, case in kernel_case()) {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(case.seed);
        let data = GraphData::random(d, p_edge, 1.0, 1.0, &mut rng);
        let x0 = random_state(d, &mut rng);
        let tol = Summed { d, scale: graph_scale(&data), exact_grad: true };
        check_kernel_case(&mut || (data.model(), data.model()), &x0, &case, &tol)?;
    }

    #[test]
    fn quadratic_chain_invariants(d in 1usize..=14, case in kernel_case()) {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(case.seed);
        let data = QuadraticData::random(d, 0.5, 1.0, &mut rng);
        prop_assume!((0..d).any(|i| data.w[i * d + i] != 0.0));
        let x0 = random_state(d, &mut rng);
        let tol = Summed { d, scale: quadratic_scale(&data), exact_grad: false };
        // Both instances need their own caches, which must outlive the models.
        let mut caches = vec![data.cache(); 4];
        let mut pool = cache_pool(&mut caches);
        let mut make = || {
            let (ca, cb) = pool.pop().flatten().expect("two runs");
            (
                BinaryQuadratic::new(&data.w, &data.b, ca).unwrap(),
                BinaryQuadratic::new(&data.w, &data.b, cb).unwrap(),
            )
        };
        check_kernel_case(&mut make, &x0, &case, &tol)?;
    }

    #[test]
    fn rbm_chain_invariants(v in 1usize..=12, h in 1usize..=5, case in kernel_case()) {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(case.seed);
        let data = RbmData::random(v, h, 1.5, 1.0, 1.0, &mut rng);
        let x0 = random_state(v, &mut rng);
        let tol = RbmTolerance(&data);
        let mut caches = vec![data.cache(); 4];
        let mut pool = cache_pool(&mut caches);
        let mut make = || {
            let (ca, cb) = pool.pop().flatten().expect("two runs");
            (
                Rbm::new(&data.w, &data.b, &data.c, ca).unwrap(),
                Rbm::new(&data.w, &data.b, &data.c, cb).unwrap(),
            )
        };
        check_kernel_case(&mut make, &x0, &case, &tol)?;
    }

    #[test]
    fn lattice_incremental_matches_full(
        rows in 1usize..=5,
        cols in 1usize..=5,
        periodic in any::<bool>(),
        j in -1.0f32..1.0,
        h in -1.0f32..1.0,
        seed in any::<u64>(),
    ) {
        let dims = Dims { rows, cols };
        let d = rows * cols;
        let x0 = random_state(d, &mut Xoshiro256PlusPlus::seed_from_u64(seed));
        let tol = Summed { d, scale: lattice_scale(rows, cols, periodic, j, h), exact_grad: true };
        let mut inc = IsingLattice::with_dims(dims, j, h, periodic).unwrap();
        let mut fresh = IsingLattice::with_dims(dims, j, h, periodic).unwrap();
        check_incremental(&mut inc, &mut fresh, &x0, seed, 60, &tol)?;
    }

    #[test]
    fn graph_incremental_matches_full(
        d in 1usize..=14,
        p_edge in 0.0f64..1.0,
        seed in any::<u64>(),
    ) {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let data = GraphData::random(d, p_edge, 1.0, 1.0, &mut rng);
        let x0 = random_state(d, &mut rng);
        let tol = Summed { d, scale: graph_scale(&data), exact_grad: true };
        check_incremental(&mut data.model(), &mut data.model(), &x0, seed, 60, &tol)?;
    }

    #[test]
    fn quadratic_incremental_matches_full(d in 1usize..=14, seed in any::<u64>()) {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let data = QuadraticData::random(d, 0.5, 1.0, &mut rng);
        let x0 = random_state(d, &mut rng);
        let tol = Summed { d, scale: quadratic_scale(&data), exact_grad: false };
        let (mut c1, mut c2) = (data.cache(), data.cache());
        let mut inc = BinaryQuadratic::new(&data.w, &data.b, &mut c1).unwrap();
        let mut fresh = BinaryQuadratic::new(&data.w, &data.b, &mut c2).unwrap();
        check_incremental(&mut inc, &mut fresh, &x0, seed, 60, &tol)?;
    }

    #[test]
    fn rbm_incremental_matches_full(v in 1usize..=12, h in 1usize..=5, seed in any::<u64>()) {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let data = RbmData::random(v, h, 1.5, 1.0, 1.0, &mut rng);
        let x0 = random_state(v, &mut rng);
        let tol = RbmTolerance(&data);
        let (mut c1, mut c2) = (data.cache(), data.cache());
        let mut inc = Rbm::new(&data.w, &data.b, &data.c, &mut c1).unwrap();
        let mut fresh = Rbm::new(&data.w, &data.b, &data.c, &mut c2).unwrap();
        check_incremental(&mut inc, &mut fresh, &x0, seed, 60, &tol)?;
    }

    /// Fresh evaluations match an independent `f64` implementation of each model's definition.
    #[test]
    fn fresh_evaluation_matches_definition(
        rows in 1usize..=5,
        cols in 1usize..=5,
        periodic in any::<bool>(),
        seed in any::<u64>(),
    ) {
        check_fresh_against_definition(rows, cols, periodic, seed)?;
    }

    /// `propose` returns the flipped set of the state it writes, its `log q` equals `log_q` bit
    /// for bit, and it consumes `⌈d/2⌉` words, for any gradient including huge and signed zeros.
    #[test]
    fn propose_agrees_with_log_q(
        d in 1usize..=40,
        ln_a in -4.0f64..14.0,
        balance in 0.01f64..=1.0,
        precond in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let x = random_state(d, &mut rng);
        let g: Vec<f32> = (0..d)
            .map(|i| match i % 7 {
                0 => -0.0,
                1 => 1e30,
                2 => -1e30,
                _ => uniform(&mut rng, -20.0, 20.0) as f32,
            })
            .collect();
        let p: Vec<f32> = (0..d).map(|_| uniform(&mut rng, 0.2, 5.0) as f32).collect();
        let base = FlipProposal::new(ln_a.exp(), balance).unwrap();
        let prop = if precond { base.preconditioned(&p).unwrap() } else { base };
        let mut y = vec![0u8; d];
        let mut flipped = vec![0u32; d];
        let mut counting = Counting { inner: rng, words: 0 };
        let (k, lq) = prop.propose(&x, &g, &mut y, &mut flipped, &mut counting).unwrap();
        prop_assert_eq!(counting.words, d.div_ceil(2) as u64);
        let diff: Vec<u32> = (0..d as u32).filter(|&i| x[i as usize] != y[i as usize]).collect();
        prop_assert_eq!(&flipped[..k], &diff[..]);
        prop_assert!(y.iter().all(|&v| v <= 1));
        prop_assert_eq!(lq.to_bits(), prop.log_q(&x, &g, &y).unwrap().to_bits());
        prop_assert!(lq <= 0.0 && !lq.is_nan());
    }

    /// Compile-time and run-time lattice sizes give bit-identical chains.
    #[test]
    fn const_and_runtime_dims_agree(seed in any::<u64>(), periodic in any::<bool>()) {
        check_const_dims(seed, periodic)?;
    }
}

/// Value stability: the first 1,000 steps of DMALA and DULA (step 0.5, balance 0.5) on the 8×8
/// periodic lattice Ising model (coupling 0.3, field 0.1) from the all-zero state, seeds 1, 2, 3
/// through `Xoshiro256PlusPlus::seed_from_u64`, hashed with FNV-1a 64 over the state bytes and the
/// bits of the log-density after every step (see `golden_hash`). The same values are expected on
/// every platform, firmware included; a change here is value-breaking.
#[test]
fn golden_streams_are_stable() {
    let proposal = FlipProposal::new(0.5, 0.5).unwrap();
    let dmala: Vec<u64> = (1..=3)
        .map(|s| golden_hash(&mut Dmala::new(proposal), s, 1000))
        .collect();
    let dula: Vec<u64> = (1..=3)
        .map(|s| golden_hash(&mut Dula::new(proposal), s, 1000))
        .collect();
    assert_eq!(
        dmala,
        [
            0x3e2f_89b6_0291_d629,
            0x11fe_4386_8be6_3e18,
            0x6909_07a4_4a45_86b7
        ],
        "DMALA golden hashes changed"
    );
    assert_eq!(
        dula,
        [
            0x1ef4_3b80_2121_5c7c,
            0x521a_2358_d2cd_e994,
            0x615c_b8e8_a874_c0a7
        ],
        "DULA golden hashes changed"
    );
}
