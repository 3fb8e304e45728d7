//! The samplers of the benchmark suites on targets with arbitrary (tabled) energies, gradients
//! and errors, the random stream from the input: the locally balanced proposal on binary and
//! categorical chains, the Hamming-ball sampler on binary chains, and block Gibbs on an RBM
//! with arbitrary parameters. Checks the chain invariants of the drivers after every step and
//! reset; that every step draws exactly two words; that a locally balanced step proposes one
//! change and, when it moves, has the ratio `log Z(x) − log Z(y)` of an independent replay
//! from the table, bit for bit; that a Hamming-ball step moves only inside its block and at most
//! `2r` coordinates, and that its constructor accepts exactly the bounded balls; that block
//! Gibbs keeps its states binary, draws `H + V` words and refuses short buffers before drawing;
//! and that the same input gives the same output.
#![no_main]

use langevin_core::baselines::{
    Balancing, BlockGibbs, HammingBall, LocallyBalanced, MAX_BLOCK, MAX_RADIUS, ball_size,
};
use langevin_core::binary::{StepError, StepReport};
use langevin_core::models::Rbm;
use langevin_core::ordinal::CategoricalDomain;
use langevin_core::{Binary, Chain, Kernel};
use langevin_fuzz::drive::{self, BinarySetup, TabledDomain};
use langevin_fuzz::labels::{self, LabelSetup};
use langevin_fuzz::{ByteRng, Input, TableError};

/// The single-site moves of a state: `(x, S) →` every neighbour, in slot order.
type Moves<V> = dyn Fn(&[V], usize) -> Vec<Vec<V>>;

/// `log Z` at `x` replayed from the table: the moves in slot order, each `U(y) − U(x)`
/// balanced, unusable ones (errors, non-finite values or gradients) left out; `None` if some
/// move's error is unrecoverable.
fn log_z<D: TabledDomain>(
    target: &D::Target,
    x: &[D::Value],
    u_x: f64,
    s: usize,
    balancing: Balancing,
    moves: impl Fn(&[D::Value], usize) -> Vec<Vec<D::Value>>,
) -> Option<f64> {
    let mut w = Vec::new();
    for slot in moves(x, s) {
        w.push(match D::at(target, &slot) {
            Err(e) if !e.recoverable => return None,
            Ok((u, g)) if u.is_finite() && g.iter().all(|v| v.is_finite()) => {
                balancing.log_weight(u - u_x)
            }
            _ => f64::NEG_INFINITY,
        });
    }
    let m = w
        .iter()
        .fold(f64::NEG_INFINITY, |m, &v| if v > m { v } else { m });
    let total: f64 = w.iter().map(|&v| libm::exp(v - m)).sum();
    Some(m + libm::log(total))
}

/// One locally balanced step, checked against the replay.
fn lb_step<D: TabledDomain>(
    kernel: &mut LocallyBalanced<Vec<f64>>,
    target: &mut D::Target,
    chain: &mut Chain<'_, D>,
    rng: &mut ByteRng<'_>,
    moves: &Moves<D::Value>,
) -> Result<StepReport, StepError<TableError>>
where
    LocallyBalanced<Vec<f64>>: Kernel<D>,
{
    let (x, u_x, s) = (chain.state().to_vec(), chain.log_density(), chain.states());
    let words = rng.words;
    let got = Kernel::step(kernel, target, chain, rng);
    assert_eq!(rng.words - words, 2, "random words");
    if let Ok(r) = &got {
        assert_eq!(r.proposed_flips, 1);
        let m = moves(&x, s).len() as u32;
        assert!(r.evaluations <= 2 * m + 2, "{} evaluations", r.evaluations);
        let moved = x.iter().zip(chain.state()).filter(|(a, b)| a != b).count();
        assert_eq!(moved, usize::from(r.accepted));
        if r.accepted {
            let b = kernel.balancing();
            let zx = log_z::<D>(target, &x, u_x, s, b, moves).expect("priced");
            let y = chain.state().to_vec();
            let zy = log_z::<D>(target, &y, chain.log_density(), s, b, moves).expect("priced");
            assert_eq!(
                (zx - zy).to_bits(),
                r.log_accept_ratio.to_bits(),
                "LB ratio"
            );
        }
    }
    got
}

fn flips(x: &[u8], _s: usize) -> Vec<Vec<u8>> {
    (0..x.len())
        .map(|i| {
            let mut y = x.to_vec();
            y[i] ^= 1;
            y
        })
        .collect()
}

fn relabels(x: &[u16], s: usize) -> Vec<Vec<u16>> {
    let mut out = Vec::new();
    for i in 0..x.len() {
        for c in 0..s as u16 {
            if c != x[i] {
                let mut y = x.to_vec();
                y[i] = c;
                out.push(y);
            }
        }
    }
    out
}

fn lb_binary(data: &[u8]) -> Vec<u64> {
    let mut input = Input::new(data);
    let setup = BinarySetup::read(&mut input, 12, 12);
    let mut kernel = LocallyBalanced::new(
        input.either(Balancing::Barker, Balancing::Sqrt),
        vec![0.0; setup.d],
    );
    let rng = ByteRng::new(input.rest());
    drive::drive(setup, rng, &mut |_, target, chain, rng| {
        lb_step::<Binary>(&mut kernel, target, chain, rng, &flips)
    })
}

fn lb_categorical(data: &[u8]) -> Vec<u64> {
    let mut input = Input::new(data);
    let setup = LabelSetup::read(&mut input, true, 6, 6, 10);
    let n = setup.d * setup.s.min(300);
    let mut kernel = LocallyBalanced::new(
        input.either(Balancing::Barker, Balancing::Sqrt),
        vec![0.0; n],
    );
    let rng = ByteRng::new(input.rest());
    labels::drive::<CategoricalDomain>(setup, rng, &mut |_, target, chain, rng| {
        lb_step::<CategoricalDomain>(&mut kernel, target, chain, rng, &relabels)
    })
}

fn hamming(data: &[u8]) -> Vec<u64> {
    let mut input = Input::new(data);
    let setup = BinarySetup::read(&mut input, 14, 12);
    let (r, k) = (usize::from(input.u8() % 6), usize::from(input.u8() % 40));
    let built = HammingBall::new(r, k, vec![0.0; ball_size(k, r)]);
    let valid = (1..=MAX_BLOCK).contains(&k) && (1..=MAX_RADIUS.min(k)).contains(&r);
    assert_eq!(built.is_ok(), valid, "r = {r}, k = {k}");
    let Ok(mut kernel) = built else {
        return Vec::new();
    };
    let rng = ByteRng::new(input.rest());
    // A no-move step may price the whole ball: drive without the at-most-one-evaluation rule.
    drive::drive_chain::<Binary>(setup, rng, &mut |_, target, chain, rng| {
        let d = chain.dim();
        let start = if kernel.next_block() < d {
            kernel.next_block()
        } else {
            0
        };
        let x = chain.state().to_vec();
        let words = rng.words;
        let got = Kernel::step(&mut kernel, target, chain, rng);
        assert_eq!(rng.words - words, 2, "random words");
        let moved: Vec<usize> = (0..d).filter(|&i| x[i] != chain.state()[i]).collect();
        assert!(
            moved.iter().all(|&i| (start..start + k).contains(&i)),
            "{moved:?}"
        );
        assert!(moved.len() <= 2 * r);
        if let Ok(rep) = &got {
            let kb = k.min(d - start);
            assert!(rep.evaluations as usize <= ball_size(kb, r.min(kb)));
            assert_eq!(rep.accepted_flips() as usize, moved.len());
        }
        got
    })
}

fn block_gibbs(data: &[u8]) -> Vec<u64> {
    let mut input = Input::new(data);
    let (v, h) = (1 + usize::from(input.u8() % 8), usize::from(input.u8() % 6));
    let w: Vec<f32> = (0..v * h).map(|_| input.f32()).collect();
    let b: Vec<f32> = (0..v).map(|_| input.f32()).collect();
    let c: Vec<f32> = (0..h).map(|_| input.f32()).collect();
    let sweeps = 1 + usize::from(input.u8() % 8);
    let mut x: Vec<u8> = (0..v).map(|_| input.bit()).collect();
    let mut rng = ByteRng::new(input.rest());
    let mut cache = vec![0.0f64; 2 * h];
    let finite = w.iter().chain(&b).chain(&c).all(|p| p.is_finite());
    let rbm = Rbm::new(&w, &b, &c, &mut cache);
    assert_eq!(rbm.is_ok(), finite);
    let Ok(rbm) = rbm else { return Vec::new() };
    let mut hidden = vec![0u8; h];
    let mut out = Vec::new();
    if v > 1 {
        let words = rng.words;
        assert!(BlockGibbs::sweep(&rbm, &mut x[..v - 1], &mut hidden, &mut rng).is_err());
        assert_eq!(rng.words, words);
    }
    for _ in 0..sweeps {
        let words = rng.words;
        let before = x.clone();
        let changed = BlockGibbs::sweep(&rbm, &mut x, &mut hidden, &mut rng).unwrap();
        assert_eq!(rng.words - words, (v + h) as u64);
        assert!(x.iter().chain(&hidden).all(|&u| u <= 1));
        let moved = before.iter().zip(&x).filter(|(a, b)| a != b).count();
        assert_eq!(changed as usize, moved);
        out.extend(x.iter().chain(&hidden).map(|&u| u64::from(u)));
    }
    out
}

fn run(data: &[u8]) -> Vec<u64> {
    langevin_fuzz::pick_case(data, &[lb_binary, lb_categorical, hamming, block_gibbs])
}

langevin_fuzz::deterministic_fuzz_target!(run);
