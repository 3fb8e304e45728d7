//! The integer lattice DMALA ([`SmallLatticeDmala`]): its table is the tabulated proposal's,
//! the kernel its steps compute is exactly invariant (enumeration), every step realises it,
//! it takes the same steps as `LatticeDmala` from the same stream, and one step from an exact
//! draw of `π` leaves `π` (exact start, pooled chi-square and TV at α = 1e-6).

use langevin_core::BinaryTarget;
use langevin_core::binary::{
    BinaryChain, LatticeDmala, LatticeProposal, SmallLatticeChain, SmallLatticeDmala,
};
use langevin_core::models::{Dims, IsingLattice};
use langevin_core::random::open_unit_f64;
use langevin_tests::ChainBox;
use langevin_tests::discrete::{check_exact_start, index_of_binary, normalise, stochastic_matrix};
use langevin_tests::harness::ScriptedRng;
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Shapes and parameters: both boundaries, a field of either sign, lines and a single site.
const CASES: [(usize, usize, bool, f32, f32); 8] = [
    (3, 3, true, 0.4407, 0.0),
    (3, 3, true, 0.3, 0.2),
    (2, 3, false, -0.5, 0.3),
    (2, 3, true, 0.7, -0.1),
    (4, 5, true, 0.3, 0.2),
    (1, 6, true, 0.5, 0.1),
    (5, 1, false, -0.2, -0.4),
    (8, 8, true, 0.3, 0.1),
];
/// Steps and balances, from tiny to huge.
const STEPS: [(f64, f64); 6] = [
    (0.1, 0.5),
    (0.6, 0.5),
    (2.0, 1.0),
    (1e-3, 0.5),
    (50.0, 0.3),
    (1e-30, 0.5),
];

fn model(rows: usize, cols: usize, periodic: bool, j: f32, h: f32) -> IsingLattice {
    IsingLattice::with_dims(Dims { rows, cols }, j, h, periodic).unwrap()
}

fn small(
    rows: usize,
    cols: usize,
    periodic: bool,
    j: f32,
    h: f32,
    a: f64,
    b: f64,
) -> SmallLatticeDmala {
    SmallLatticeDmala::new(rows, cols, periodic, j, h, a, b).unwrap()
}

fn state_of(index: usize, d: usize) -> Vec<u8> {
    (0..d).map(|i| ((index >> i) & 1) as u8).collect()
}

fn log_density(model: &mut IsingLattice, x: &[u8]) -> f64 {
    let mut g = vec![0.0; x.len()];
    model.log_density_and_grad(x, &mut g).unwrap()
}

/// `ln q(y | x)` from the kernel's per-site flip probabilities.
fn log_q(k: &SmallLatticeDmala, x: &[u8], y: &[u8]) -> f64 {
    (0..x.len())
        .map(|i| {
            let f = k.flip_probability(x, i).unwrap();
            if x[i] != y[i] { f.ln() } else { (1.0 - f).ln() }
        })
        .sum()
}

/// The flip thresholds, built in constant arithmetic, are those of `LatticeProposal` (built at
/// run time with `libm`) for every class of every case: the same proposal.
#[test]
fn small_table_is_the_tabulated_proposal() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
    for (rows, cols, periodic, j, h) in CASES {
        let m = model(rows, cols, periodic, j, h);
        let d = rows * cols;
        for (a, b) in STEPS {
            let p = LatticeProposal::new(&m, a, b).unwrap();
            let k = small(rows, cols, periodic, j, h, a, b);
            for _ in 0..20 {
                let x: Vec<u8> = (0..d).map(|_| (rng.next_u32() & 1) as u8).collect();
                for i in 0..d {
                    assert_eq!(
                        k.flip_probability(&x, i),
                        p.flip_probability(&x, i),
                        "{rows}x{cols} J={j} h={h} a={a} b={b} site {i}"
                    );
                }
                assert_eq!(k.flip_probability(&x, d), None);
            }
        }
    }
    // A constant kernel: the table of the 8×8 image.
    const IMAGE: SmallLatticeDmala = match SmallLatticeDmala::new(8, 8, true, 0.3, 0.1, 0.5, 0.5) {
        Ok(k) => k,
        Err(_) => panic!(),
    };
    let p = LatticeProposal::new(&model(8, 8, true, 0.3, 0.1), 0.5, 0.5).unwrap();
    let x = [0u8; 64];
    assert_eq!(IMAGE.flip_probability(&x, 9), p.flip_probability(&x, 9));
}

/// The words that make a step from `x` propose `y` (16 zero bits flip a site, since every
/// threshold is at least 1; 16 one bits keep it, since none exceeds `2^16 − 1`), then a
/// Metropolis word.
fn words_for(x: &[u8], y: &[u8]) -> Vec<u64> {
    let mut words = vec![0u64; x.len().div_ceil(4)];
    for i in 0..x.len() {
        if x[i] == y[i] {
            words[i / 4] |= 0xffff << (16 * (i % 4));
        }
    }
    words.push(u64::MAX);
    words
}

/// Exact invariance of the kernel the step computes: for every pair of states, the step is
/// made to propose the move (scripted words) and its reported log ratio, with the proposal
/// probabilities of the table, gives the transition matrix; it satisfies detailed balance and
/// `πP = π` on every enumerable case. The reported ratio is a fixed-point sum (error below
/// `(3d + 2)·2^−40 < 3e-11`), so the tolerance is 1e-9 relative to the probabilities involved;
/// a wrong term of the ratio shows at the size of a probability.
#[test]
fn small_kernel_is_exactly_invariant() {
    for (rows, cols, periodic, j, h) in CASES.into_iter().filter(|c| c.0 * c.1 <= 9) {
        let mut m = model(rows, cols, periodic, j, h);
        let d = rows * cols;
        let n = 1usize << d;
        let u: Vec<f64> = (0..n)
            .map(|s| log_density(&mut m, &state_of(s, d)))
            .collect();
        let pi = normalise(&u);
        for (a, b) in STEPS {
            let k = small(rows, cols, periodic, j, h, a, b);
            let p = stochastic_matrix(n, |s, t| {
                let (x, y) = (state_of(s, d), state_of(t, d));
                let (mut xs, mut class) = (x.clone(), vec![0u8; d]);
                let mut chain = SmallLatticeChain::new(&k, &mut xs, &mut class).unwrap();
                let mut rng = ScriptedRng::new(words_for(&x, &y));
                let report = k.step(&mut chain, &mut rng).unwrap();
                assert_eq!(rng.drawn(), d.div_ceil(4) + 1);
                let flips = x.iter().zip(&y).filter(|(p, q)| p != q).count() as u32;
                assert_eq!(report.proposed_flips, flips);
                log_q(&k, &x, &y).exp() * report.log_accept_ratio().exp().min(1.0)
            });
            // No row proposes more than its whole mass.
            assert!((0..n).all(|s| p[s * n + s] >= -1e-12));
            for s in 0..n {
                for t in 0..n {
                    let (f, r) = (pi[s] * p[s * n + t], pi[t] * p[t * n + s]);
                    assert!(
                        (f - r).abs() <= 1e-9 * (f + r) + 1e-300,
                        "detailed balance {rows}x{cols} a={a}: {f} vs {r}"
                    );
                }
                let flow: f64 = (0..n).map(|r| pi[r] * p[r * n + s]).sum();
                assert!((flow - pi[s]).abs() < 1e-9 * pi[s], "πP = π at state {s}");
            }
        }
    }
}

/// Each step proposes exactly the flips its words prescribe, reports the enumerated kernel's
/// log ratio (to the fixed-point rounding, 1e-9), decides `ln u < ratio` with the next word,
/// consumes `⌈d/4⌉ + 1` words, and keeps the model's log-density.
#[test]
fn small_steps_realise_the_kernel() {
    for (rows, cols, periodic, j, h) in CASES {
        let mut m = model(rows, cols, periodic, j, h);
        let d = rows * cols;
        for (a, b) in [(0.6, 0.5), (3.0, 1.0)] {
            let k = small(rows, cols, periodic, j, h, a, b);
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(d as u64);
            let mut x: Vec<u8> = (0..d).map(|_| (rng.next_u32() & 1) as u8).collect();
            let mut class = vec![0u8; d];
            let mut chain = SmallLatticeChain::new(&k, &mut x, &mut class).unwrap();
            let (mut moved, mut stayed) = (0, 0);
            for _ in 0..400 {
                let x = chain.state().to_vec();
                let mut replay = rng.clone();
                let words: Vec<u64> = (0..d.div_ceil(4)).map(|_| replay.next_u64()).collect();
                let y: Vec<u8> = (0..d)
                    .map(|i| {
                        let r = f64::from((words[i / 4] >> (16 * (i % 4))) as u16);
                        x[i] ^ u8::from(r < k.flip_probability(&x, i).unwrap() * 65536.0)
                    })
                    .collect();
                let flips = x.iter().zip(&y).filter(|(p, q)| p != q).count() as u32;
                let u = open_unit_f64(&mut replay);
                let report = k.step(&mut chain, &mut rng).unwrap();
                assert_eq!(report.proposed_flips, flips);
                if flips > 0 {
                    let ratio = log_density(&mut m, &y) - log_density(&mut m, &x)
                        + log_q(&k, &y, &x)
                        - log_q(&k, &x, &y);
                    let got = report.log_accept_ratio();
                    assert!(
                        (got - ratio).abs() < 1e-9 * (1.0 + ratio.abs()),
                        "{got} vs {ratio}"
                    );
                    assert_eq!(report.accepted, u.ln() < ratio);
                    if report.accepted {
                        moved += 1
                    } else {
                        stayed += 1
                    }
                }
                let expect = if report.accepted { &y } else { &x };
                assert_eq!(chain.state(), &expect[..]);
                assert_eq!(rng.next_u64(), replay.next_u64(), "fixed consumption");
                let exact = log_density(&mut m, chain.state());
                assert!((k.log_density(&chain) - exact).abs() < 1e-9 * (1.0 + exact.abs()));
            }
            if d > 4 {
                assert!(moved > 0 && stayed > 0, "both outcomes ({moved}, {stayed})");
            }
        }
    }
}

/// From the same state and stream the integer kernel and `LatticeDmala` make the same moves,
/// step after step (20 runs of 2,000 steps).
#[test]
fn small_and_tabulated_dmala_take_the_same_steps() {
    for (c, (rows, cols, periodic, j, h)) in CASES.into_iter().enumerate() {
        let mut m = model(rows, cols, periodic, j, h);
        let d = rows * cols;
        for (s, (a, b)) in [(0.5, 0.5), (1.5, 0.8), (0.2, 0.5)].into_iter().enumerate() {
            let lattice = LatticeDmala::new(LatticeProposal::new(&m, a, b).unwrap());
            let k = small(rows, cols, periodic, j, h, a, b);
            let seed = (c * 3 + s) as u64;
            let mut start = Xoshiro256PlusPlus::seed_from_u64(seed);
            let x0: Vec<u8> = (0..d).map(|_| (start.next_u32() & 1) as u8).collect();
            let mut bufs = ChainBox::new(&x0);
            let mut reference = BinaryChain::new(bufs.buffers(), &mut m).unwrap();
            let (mut x, mut class) = (x0.clone(), vec![0u8; d]);
            let mut chain = SmallLatticeChain::new(&k, &mut x, &mut class).unwrap();
            let mut r1 = Xoshiro256PlusPlus::seed_from_u64(seed + 100);
            let mut r2 = r1.clone();
            for t in 0..2000 {
                let a = lattice.step(&mut reference, &mut r1).unwrap();
                let b = k.step(&mut chain, &mut r2).unwrap();
                assert_eq!(
                    (a.accepted, a.proposed_flips),
                    (b.accepted, b.proposed_flips)
                );
                assert_eq!(reference.state(), chain.state(), "case {c}, step {t}");
                let u = k.log_density(&chain);
                assert!((reference.log_density() - u).abs() < 1e-9 * (1.0 + u.abs()));
            }
        }
    }
}

/// Exact start on the 3×3 torus: `x0 ~ π`, then 1 and 10 steps; the final states must follow
/// `π` (pooled chi-square and TV at α = 1e-6 each, 400,000 draws).
#[test]
fn small_kernel_keeps_pi_from_an_exact_start() {
    const N: usize = 400_000;
    for (j, h, a) in [(0.4407f32, 0.0f32, 0.6), (-0.3, 0.2, 2.0)] {
        let mut m = model(3, 3, true, j, h);
        let u: Vec<f64> = (0..512)
            .map(|s| log_density(&mut m, &state_of(s, 9)))
            .collect();
        let pi = normalise(&u);
        let k = small(3, 3, true, j, h, a, 0.5);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(17);
        let name = format!("small lattice DMALA J={j} h={h} a={a}");
        check_exact_start(&name, &pi, N, &mut rng, |x0, steps, rng| {
            let (mut x, mut class) = (state_of(x0, 9), [0u8; 9]);
            let mut chain = SmallLatticeChain::new(&k, &mut x, &mut class).unwrap();
            for _ in 0..steps {
                k.step(&mut chain, rng).unwrap();
            }
            index_of_binary(chain.state())
        });
    }
}

/// Parameters the integer arithmetic cannot hold are refused; a chain of another size or a
/// state entry above 1 is refused.
#[test]
fn small_kernel_refuses_what_it_cannot_hold() {
    assert!(SmallLatticeDmala::new(0, 3, true, 0.3, 0.0, 0.5, 0.5).is_err());
    assert!(SmallLatticeDmala::new(200, 200, true, 0.3, 0.0, 0.5, 0.5).is_err());
    assert!(SmallLatticeDmala::new(usize::MAX, 2, true, 0.3, 0.0, 0.5, 0.5).is_err());
    for bad in [f32::NAN, f32::INFINITY, 65.0, -65.0] {
        assert!(SmallLatticeDmala::new(3, 3, true, bad, 0.0, 0.5, 0.5).is_err());
        assert!(SmallLatticeDmala::new(3, 3, true, 0.3, bad, 0.5, 0.5).is_err());
    }
    for (a, b) in [
        (0.0, 0.5),
        (f64::NAN, 0.5),
        (f64::INFINITY, 0.5),
        (0.5, 0.0),
        (0.5, 1.5),
    ] {
        assert!(SmallLatticeDmala::new(3, 3, true, 0.3, 0.0, a, b).is_err());
    }
    let k = small(3, 3, true, 0.3, 0.0, 0.5, 0.5);
    let (mut x, mut class) = ([0u8; 8], [0u8; 9]);
    assert!(SmallLatticeChain::new(&k, &mut x, &mut class).is_err());
    let (mut x, mut class) = ([0u8; 9], [0u8; 8]);
    assert!(SmallLatticeChain::new(&k, &mut x, &mut class).is_err());
    let (mut x, mut class) = ([0, 0, 2, 0, 0, 0, 0, 0, 0], [0u8; 9]);
    assert!(SmallLatticeChain::new(&k, &mut x, &mut class).is_err());
    // A chain of a 3×3 kernel stepped by a 2×3 one is refused and left alone.
    let (mut x, mut class) = ([1, 0, 1, 0, 1, 0, 1, 0, 1], [0u8; 9]);
    let mut chain = SmallLatticeChain::new(&k, &mut x, &mut class).unwrap();
    let other = small(2, 3, true, 0.3, 0.0, 0.5, 0.5);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
    assert!(other.step(&mut chain, &mut rng).is_err());
    assert_eq!(chain.state(), &[1, 0, 1, 0, 1, 0, 1, 0, 1]);
}
