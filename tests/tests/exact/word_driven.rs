//! Transition matrices of kernels that draw a few whole 64-bit words per step (locally balanced,
//! Hamming ball), built from the kernels' own `step` by bisection on those words, as the lane
//! harness does for the balanced kernels: no closed form of the kernel is consulted.
//!
//! * **Pick, then Metropolis** (locally balanced): with the Metropolis word 0 (a uniform of
//!   `2^-54`, accepting any move whose log ratio is above −37), the state after the step is a
//!   step function of the pick word whose pieces are intervals (inverse-CDF sampling); bisection
//!   finds each interval and its width. Within a piece, the Metropolis word is bisected for the
//!   acceptance threshold.
//! * **Two draws, no test** (Hamming ball): the first word picks the auxiliary state by a
//!   multiply (`index`), whose preimages are computed exactly; for each, the second word's pieces
//!   give the final states.
//!
//! The matrices are checked with the lane harness's `check_step_matrix` (detailed balance and
//! `πP = π` within a relative `2^-16`); the realised probabilities here are exact multiples of
//! `2^-64`, well inside that tolerance.

use langevin_core::baselines::{Balancing, LocallyBalanced};
use langevin_core::models::{Dims, IsingLattice, Rbm};
use langevin_tests::RbmData;
use langevin_tests::discrete::small_potts;
use langevin_tests::harness::{
    BinaryProbe, CategoricalProbe, KernelProbe, ScriptedRng, StepMatrix, assert_exact,
    last_word_where,
};
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

const WORDS: f64 = 18_446_744_073_709_551_616.0; // 2^64

/// One step from `x` with these words; checks that exactly they were drawn.
fn run<P: KernelProbe + ?Sized>(probe: &mut P, x: &[u16], words: &[u64]) -> Vec<u16> {
    let mut rng = ScriptedRng::new(words.to_vec());
    let out = probe.step_from(x, &mut rng);
    assert_eq!(
        rng.drawn(),
        words.len(),
        "a step must draw {} words",
        words.len()
    );
    out.after
}

/// The pieces of `f` over the words `lo..=hi`: `(value, first word, width)` per maximal
/// interval, each value in one interval only.
fn pieces(lo: u64, hi: u64, mut f: impl FnMut(u64) -> Vec<u16>) -> Vec<(Vec<u16>, u64, u128)> {
    let mut out: Vec<(Vec<u16>, u64, u128)> = Vec::new();
    let mut start = lo;
    loop {
        let v = f(start);
        let good = last_word_where(start, hi, |w| f(w) == v);
        assert!(out.iter().all(|p| p.0 != v), "{v:?} occupies two intervals");
        out.push((v, start, u128::from(good - start) + 1));
        if good == hi {
            return out;
        }
        start = good + 1;
    }
}

/// The matrix of a kernel that draws a pick word and then a Metropolis word.
fn pick_then_metropolis<P: KernelProbe + ?Sized>(probe: &mut P) -> StepMatrix {
    let mut m = StepMatrix::blank(probe);
    let (k, states) = (m.space.len(), m.space.all());
    for (xi, x) in states.iter().enumerate() {
        let picks = pieces(0, u64::MAX, |w| run(probe, x, &[w, 0]));
        let mut off = 0.0;
        for (y, start, width) in picks {
            assert_ne!(&y, x, "a single-site move always changes the state");
            let yi = m.space.index(&y);
            let accepted = |probe: &mut P, w: u64| run(probe, x, &[start, w]) == y;
            let good = last_word_where(0, u64::MAX, |w| accepted(probe, w));
            let a = (u128::from(good) + 1) as f64 / WORDS;
            let qxy = width as f64 / WORDS;
            m.q[xi * k + yi] = qxy;
            m.accept[xi * k + yi] = a;
            m.p[xi * k + yi] = qxy * a;
            off += qxy * a;
        }
        m.p[xi * k + xi] = 1.0 - off;
    }
    m
}

#[test]
fn locally_balanced_binary_is_reversible() {
    let ising = IsingLattice::with_dims(Dims { rows: 2, cols: 3 }, 0.45, 0.2, true).unwrap();
    for balancing in [Balancing::Sqrt, Balancing::Barker] {
        let kernel = LocallyBalanced::new(balancing, vec![0.0f64; 6]);
        let mut probe = BinaryProbe::new(ising, kernel);
        let m = pick_then_metropolis(&mut probe);
        assert_exact(&format!("LB {balancing:?}, Ising 2×3"), &m);
        // A move is rejected somewhere: the test is not vacuous.
        assert!(m.accept.iter().any(|&a| a < 0.999), "{balancing:?}");
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(23);
    let r = RbmData::random(5, 3, 0.9, 0.5, 0.5, &mut rng);
    let mut cache = r.cache();
    let model = Rbm::new(&r.w, &r.b, &r.c, &mut cache).unwrap();
    let mut probe = BinaryProbe::new(model, LocallyBalanced::new(Balancing::Barker, [0.0f64; 5]));
    assert_exact("LB Barker, RBM 5×3", &pick_then_metropolis(&mut probe));
}

#[test]
fn locally_balanced_categorical_is_reversible() {
    for balancing in [Balancing::Sqrt, Balancing::Barker] {
        let kernel = LocallyBalanced::new(balancing, vec![0.0f64; 9]);
        let mut probe = CategoricalProbe::new(small_potts(3, 3), kernel);
        assert_exact(
            &format!("LB {balancing:?}, Potts 3×3"),
            &pick_then_metropolis(&mut probe),
        );
    }
}

/// `φ(t)` of each named balancing function, from its textbook formula (not from the core).
fn phi(balancing: Balancing, t: f64) -> f64 {
    match balancing {
        Balancing::Sqrt => t.sqrt(),
        Balancing::Barker => t / (1.0 + t),
    }
}

/// The largest gap between the realised proposal of a locally balanced kernel and
/// `q(y | x) = φ(π(y)/π(x)) / Σ_z φ(π(z)/π(x))` over the single-site moves `z` of `x`, with
/// `φ` the named function's formula. The realised probabilities are pick-word widths over
/// `2^64` of an inverse-CDF draw in f64, so they match the formula to a few `2^-53`.
fn proposal_gap(m: &StepMatrix, balancing: Balancing) -> f64 {
    let k = m.space.len();
    let states = m.space.all();
    let neighbours = |x: &[u16], y: &[u16]| x.iter().zip(y).filter(|(a, b)| a != b).count() == 1;
    let mut worst = 0.0f64;
    for (xi, x) in states.iter().enumerate() {
        let ratio = |yi: usize| (m.log_density[yi] - m.log_density[xi]).exp();
        let moves: Vec<usize> = (0..k).filter(|&yi| neighbours(x, &states[yi])).collect();
        let z: f64 = moves.iter().map(|&yi| phi(balancing, ratio(yi))).sum();
        for yi in 0..k {
            let want = if moves.contains(&yi) {
                phi(balancing, ratio(yi)) / z
            } else {
                0.0
            };
            worst = worst.max((m.q[xi * k + yi] - want).abs());
        }
    }
    worst
}

/// Each named balancing function, as the kernel actually draws with it, is its formula:
/// `√t` and Barker's `t/(1+t)`. Detailed balance holds for both whichever is used, so only
/// this comparison tells them apart (swapping the two fails it by more than 1e-2).
#[test]
fn locally_balanced_proposals_follow_their_balancing_formula() {
    const TOL: f64 = 1e-12;
    let ising = IsingLattice::with_dims(Dims { rows: 2, cols: 3 }, 0.45, 0.2, true).unwrap();
    for b in [Balancing::Sqrt, Balancing::Barker] {
        let other = if b == Balancing::Sqrt {
            Balancing::Barker
        } else {
            Balancing::Sqrt
        };
        let binary = pick_then_metropolis(&mut BinaryProbe::new(
            ising,
            LocallyBalanced::new(b, vec![0.0f64; 6]),
        ));
        let potts = pick_then_metropolis(&mut CategoricalProbe::new(
            small_potts(3, 3),
            LocallyBalanced::new(b, vec![0.0f64; 9]),
        ));
        for (name, m) in [("Ising 2×3", &binary), ("Potts 3×3", &potts)] {
            let gap = proposal_gap(m, b);
            assert!(
                gap <= TOL,
                "{b:?} on {name}: q differs from φ's formula by {gap}"
            );
            // The other function's formula is far off: the check tells the two apart.
            let wrong = proposal_gap(m, other);
            assert!(
                wrong > 1e-2,
                "{b:?} on {name}: {other:?} fits within {wrong}"
            );
        }
    }
    // And the log-weights themselves, point by point.
    for b in [Balancing::Sqrt, Balancing::Barker] {
        for t in [1e-3, 0.25, 1.0, 3.0, 1e3] {
            let got = b.log_weight(f64::ln(t)).exp();
            assert!(
                (got - phi(b, t)).abs() <= 1e-14 * phi(b, t),
                "{b:?}: φ({t}) = {got}, formula {}",
                phi(b, t)
            );
        }
    }
    assert_eq!(Balancing::Sqrt.name(), "sqrt");
    assert_eq!(Balancing::Barker.name(), "barker");
}

#[test]
fn locally_balanced_refuses_a_short_weights_buffer() {
    use langevin_core::binary::{BinaryChain, ChainStorage, Kernel};
    use langevin_core::{LenError, StepError};
    let mut model = IsingLattice::with_dims(Dims { rows: 2, cols: 3 }, 0.45, 0.2, true).unwrap();
    let mut storage = ChainStorage::<6>::new([0; 6]);
    let mut chain = BinaryChain::new(storage.buffers(), &mut model).unwrap();
    let mut lb = LocallyBalanced::new(Balancing::Sqrt, [0.0f64; 5]);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
    let err = lb.step(&mut model, &mut chain, &mut rng).unwrap_err();
    assert!(matches!(
        err,
        StepError::Len(LenError {
            buffer: "weights",
            expected: 6,
            found: 5
        })
    ));
}

/// The words `w` with `index(w, m) = t` (`⌊w·m / 2^64⌋ = t`): the first one and how many.
fn index_preimage(t: usize, m: usize) -> (u64, u128) {
    let first = |t: u128| (t << 64).div_ceil(m as u128);
    let (lo, hi) = (first(t as u128), first(t as u128 + 1));
    (lo as u64, hi - lo)
}

/// The matrix of a kernel that draws an index in `0..m` and then a uniform, with no test.
fn index_then_draw<P: KernelProbe + ?Sized>(probe: &mut P, m: usize) -> StepMatrix {
    let mut matrix = StepMatrix::blank(probe);
    let (k, states) = (matrix.space.len(), matrix.space.all());
    for (xi, x) in states.iter().enumerate() {
        for t in 0..m {
            let (w1, count) = index_preimage(t, m);
            for (y, _, width) in pieces(0, u64::MAX, |w| run(probe, x, &[w1, w])) {
                let yi = matrix.space.index(&y);
                matrix.p[xi * k + yi] += count as f64 / WORDS * (width as f64 / WORDS);
            }
        }
    }
    // No test: every proposal is taken.
    matrix.q = matrix.p.clone();
    matrix
}

/// A probe that steps a fresh copy of one kernel each time, so a kernel that moves on (the
/// Hamming ball's next block) is probed at the same block.
struct Fresh<P, K> {
    probe: P,
    kernel: K,
}

impl<T, K> KernelProbe for Fresh<BinaryProbe<T, K>, K>
where
    T: langevin_core::BinaryTarget,
    K: langevin_core::Kernel<langevin_core::Binary> + Clone,
{
    fn space(&self) -> langevin_tests::harness::StateSpace {
        self.probe.space()
    }
    fn log_density(&mut self, x: &[u16]) -> f64 {
        self.probe.log_density(x)
    }
    fn step_from(&mut self, x: &[u16], rng: &mut ScriptedRng) -> langevin_tests::harness::Probe {
        self.probe.kernel = self.kernel.clone();
        self.probe.step_from(x, rng)
    }
}

#[test]
fn hamming_ball_blocks_are_reversible() {
    use langevin_core::baselines::{HammingBall, ball_size};
    let d = 4;
    let ising = IsingLattice::with_dims(Dims { rows: 2, cols: 2 }, 0.45, 0.2, true).unwrap();
    // (radius, block, first coordinate of the block): whole-state balls, a second block, and a
    // last block shorter than the others (and than the radius).
    for (r, k, start) in [
        (1, 4, 0),
        (2, 4, 0),
        (3, 4, 0),
        (2, 2, 2),
        (3, 3, 3),
        (1, 3, 0),
    ] {
        let kernel = HammingBall::new(r, k, vec![0.0f64; ball_size(k, r)])
            .unwrap()
            .with_next_block(start);
        let size = ball_size(k.min(d - start), r.min(d - start));
        let mut probe = Fresh {
            probe: BinaryProbe::new(ising, kernel.clone()),
            kernel,
        };
        let m = index_then_draw(&mut probe, size);
        assert_exact(&format!("Hamming ball r = {r}, k = {k}, at {start}"), &m);
        // Only the block moves.
        let block = ((1usize << k) - 1) << start;
        for (x, row) in m.p.chunks(m.space.len()).enumerate() {
            for (y, &pxy) in row.iter().enumerate() {
                assert!(
                    pxy == 0.0 || (x ^ y) & !block == 0,
                    "{x} → {y} leaves the block"
                );
            }
        }
    }
}

#[test]
fn hamming_ball_refuses_unbounded_balls() {
    use langevin_core::ParamError;
    use langevin_core::baselines::HammingBall;
    for (r, k) in [(0, 4), (4, 8), (3, 2), (1, 0), (1, 33)] {
        assert!(
            matches!(
                HammingBall::new(r, k, Vec::<f64>::new()),
                Err(ParamError::OutOfRange { .. })
            ),
            "r = {r}, k = {k}"
        );
    }
}

/// The realised probability that unit `unit` (word `unit` of the sweep) comes out 1, with the
/// other words fixed: bisection on its word.
fn realised_one(words: &mut [u64], unit: usize, mut out: impl FnMut(&[u64]) -> u8) -> f64 {
    words[unit] = u64::MAX;
    if out(words) == 1 {
        return 1.0;
    }
    words[unit] = 0;
    if out(words) == 0 {
        return 0.0;
    }
    let good = last_word_where(0, u64::MAX, |w| {
        words[unit] = w;
        out(words) == 1
    });
    (u128::from(good) + 1) as f64 / WORDS
}

#[test]
fn rbm_block_gibbs_leaves_the_visible_marginal_invariant() {
    use langevin_core::BinaryTarget;
    use langevin_core::baselines::BlockGibbs;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(31);
    let (v, h) = (4, 3);
    let r = RbmData::random(v, h, 1.2, 0.6, 0.6, &mut rng);
    let mut cache = r.cache();
    let mut rbm = Rbm::new(&r.w, &r.b, &r.c, &mut cache).unwrap();
    let states = langevin_tests::discrete::enumerate_binary(v);
    let log_pi: Vec<f64> = states
        .iter()
        .map(|x| rbm.log_density_and_grad(x, &mut [0.0; 4]).unwrap())
        .collect();
    let pi = langevin_tests::discrete::normalise(&log_pi);
    let sweep = |words: &[u64], x: &[u8]| {
        let (mut x, mut hid) = (x.to_vec(), vec![0u8; h]);
        let mut script = ScriptedRng::new(words.to_vec());
        BlockGibbs::sweep(&rbm, &mut x, &mut hid, &mut script).unwrap();
        assert_eq!(script.drawn(), v + h);
        (x, hid)
    };
    let k = states.len();
    let mut p = vec![0.0; k * k];
    for (a, x) in states.iter().enumerate() {
        // p(h_j = 1 | x) from the hidden words, the visible words at 0.
        let mut words = vec![0u64; h + v];
        let ph: Vec<f64> = (0..h)
            .map(|j| realised_one(&mut words, j, |w| sweep(w, x).1[j]))
            .collect();
        for hk in 0..1usize << h {
            let mut prob_h = 1.0;
            let mut words = vec![0u64; h + v];
            for j in 0..h {
                let on = hk >> j & 1 == 1;
                prob_h *= if on { ph[j] } else { 1.0 - ph[j] };
                // Word 0 draws 1 (probability > 0), the largest word 0 (probability < 1).
                words[j] = if on { 0 } else { u64::MAX };
            }
            assert_eq!(
                sweep(&words, x).1,
                (0..h).map(|j| (hk >> j & 1) as u8).collect::<Vec<_>>()
            );
            let pv: Vec<f64> = (0..v)
                .map(|i| realised_one(&mut words.clone(), h + i, |w| sweep(w, x).0[i]))
                .collect();
            for (b, y) in states.iter().enumerate() {
                let q: f64 = (0..v)
                    .map(|i| if y[i] == 1 { pv[i] } else { 1.0 - pv[i] })
                    .product();
                p[a * k + b] += prob_h * q;
            }
        }
    }
    // Tolerance: each realised probability is within 2^-53 of the f64 conditional, which is
    // within a few ulps of the exact one; U sums f32 softplus terms (relative 1e-7).
    langevin_tests::discrete::assert_invariant(&pi, &p, 1e-6, true);
}
