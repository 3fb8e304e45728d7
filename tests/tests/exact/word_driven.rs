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
    BinaryProbe, CategoricalProbe, KernelProbe, ScriptedRng, StepMatrix, check_step_matrix,
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
        let (mut good, mut bad) = (start, hi);
        if f(hi) == v {
            good = hi;
        } else {
            while bad - good > 1 {
                let mid = good + (bad - good) / 2;
                if f(mid) == v {
                    good = mid;
                } else {
                    bad = mid;
                }
            }
        }
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
    let space = probe.space();
    let k = space.len();
    let states = space.all();
    let log_density: Vec<f64> = states.iter().map(|x| probe.log_density(x)).collect();
    let pi = langevin_tests::normalise_log(&log_density);
    let (mut p, mut q, mut accept) = (vec![0.0; k * k], vec![0.0; k * k], vec![1.0; k * k]);
    for (xi, x) in states.iter().enumerate() {
        let picks = pieces(0, u64::MAX, |w| run(probe, x, &[w, 0]));
        let mut off = 0.0;
        for (y, start, width) in picks {
            assert_ne!(&y, x, "a single-site move always changes the state");
            let yi = space.index(&y);
            let accepted = |probe: &mut P, w: u64| run(probe, x, &[start, w]) == y;
            let a = if accepted(probe, u64::MAX) {
                1.0
            } else {
                let (mut good, mut bad) = (0u64, u64::MAX);
                while bad - good > 1 {
                    let mid = good + (bad - good) / 2;
                    if accepted(probe, mid) {
                        good = mid;
                    } else {
                        bad = mid;
                    }
                }
                (u128::from(good) + 1) as f64 / WORDS
            };
            let qxy = width as f64 / WORDS;
            q[xi * k + yi] = qxy;
            accept[xi * k + yi] = a;
            p[xi * k + yi] = qxy * a;
            off += qxy * a;
        }
        p[xi * k + xi] = 1.0 - off;
    }
    StepMatrix {
        space,
        p,
        log_density,
        pi,
        q,
        accept,
    }
}

pub(crate) fn assert_exact(name: &str, m: &StepMatrix) {
    let c = check_step_matrix(m);
    assert!(c.passed(), "{name}: {c:?}");
    let stay: f64 = (0..m.space.len()).map(|x| m.pi[x] * m.get(x, x)).sum();
    assert!(
        stay < 0.95,
        "{name}: the chain stays put with probability {stay}"
    );
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
