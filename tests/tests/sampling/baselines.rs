//! Sampling-path tests of the baselines (exact start, `k ∈ {1, 10}`, `n = 10^5`, pooled
//! chi-square at α = 1e-6 and the TV bound), on binary Ising / quadratic / RBM models, an
//! ordinal lattice Gaussian and a Potts model.

use langevin_core::BinaryTarget;
use langevin_core::Kernel;
use langevin_core::baselines::{Gibbs, Gwg, RandomWalk, Scan, TunedRandomWalk};
use langevin_core::binary::BinaryChain;
use langevin_core::categorical::CategoricalTarget;
use langevin_core::models::{BinaryQuadratic, Dims, IsingLattice, Rbm};
use langevin_core::ordinal::OrdinalTarget;
use langevin_std::models::OrdinalQuadratic;
use langevin_tests::discrete::*;
use langevin_tests::{QuadraticData, RbmData};
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

const N: usize = 100_000;

fn lattice() -> IsingLattice<Dims> {
    IsingLattice::with_dims(Dims { rows: 3, cols: 3 }, 0.35, 0.1, true).unwrap()
}

#[test]
fn binary_gibbs_kernel_random_and_systematic() {
    let mut m = lattice();
    check_binary_kernel("gibbs random", &mut m, &mut Gibbs::new(Scan::Random), N, 1);
    check_binary_kernel(
        "gibbs systematic",
        &mut m,
        &mut Gibbs::new(Scan::Systematic),
        N,
        2,
    );
}

#[test]
fn binary_gibbs_on_a_raw_state_with_flip_deltas() {
    let r = RbmData::patterned();
    let mut cache = r.cache();
    let mut m = Rbm::new(&r.w, &r.b, &r.c, &mut cache).unwrap();
    let (states, log_pi) = tabulate_binary_u(&mut m);
    let pi = normalise(&log_pi);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
    for scan in [Scan::Random, Scan::Systematic] {
        let mut gibbs = Gibbs::new(scan);
        check_exact_start(
            &format!("raw gibbs {scan:?}"),
            &pi,
            N,
            &mut rng,
            |x0, k, rng| {
                let mut x = states[x0].clone();
                m.log_density_and_grad(&x, &mut [0.0; 6]).unwrap();
                for _ in 0..k {
                    gibbs.update_binary(&mut m, &mut x, rng).unwrap();
                }
                index_of_binary(&x)
            },
        );
    }
}

#[test]
fn binary_gwg_and_random_walk() {
    let mut m = lattice();
    check_binary_kernel("gwg lattice", &mut m, &mut Gwg, N, 4);
    let data = QuadraticData::patterned(7);
    let mut cache = data.cache();
    let mut q = BinaryQuadratic::new(&data.w, &data.b, &mut cache).unwrap();
    check_binary_kernel("gwg quadratic", &mut q, &mut Gwg, N, 5);
    check_binary_kernel("rwm 0.2", &mut q, &mut RandomWalk::new(0.2).unwrap(), N, 6);
}

#[test]
fn tuned_random_walk_is_exact_once_frozen() {
    let mut m = lattice();
    let mut tuned = TunedRandomWalk::new(1.0 / 9.0, 2000, 0.234).unwrap();
    let mut buf = BinBuf::new(&[0; 9]);
    let mut chain = BinaryChain::new(buf.buffers(), &mut m).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
    for _ in 0..2000 {
        tuned.step(&mut m, &mut chain, &mut rng).unwrap();
    }
    assert!(tuned.is_frozen());
    let rate = tuned.rate();
    assert!(rate > 0.0 && rate <= 0.5, "tuned rate {rate}");
    check_binary_kernel("tuned rwm (frozen)", &mut m, &mut tuned, N, 8);
    assert_eq!(tuned.rate(), rate, "the rate must stay frozen");
}

#[test]
fn ordinal_gibbs_raw_and_kernel() {
    let mut m = OrdinalQuadratic::rotated_gaussian(3, 5, 3.0, 1.3, 5).unwrap();
    let s = 5;
    let (states, _, _, pi) = ordinal_law(&mut m);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(9);
    let mut scratch = vec![0.0f64; s];
    for scan in [Scan::Random, Scan::Systematic] {
        let mut gibbs = Gibbs::new(scan);
        check_exact_start(
            &format!("raw ordinal gibbs {scan:?}"),
            &pi,
            N,
            &mut rng,
            |x0, k, rng| {
                let mut x = states[x0].clone();
                m.log_density_and_grad(&x, &mut [0.0; 3]).unwrap();
                for _ in 0..k {
                    gibbs
                        .update_ordinal(&mut m, &mut x, &mut scratch, rng)
                        .unwrap();
                }
                index_of(&x, s)
            },
        );
    }
    // The kernel path on a model without the capability.
    let mut w = Wavy::three(4);
    let (states, _, _, pi) = ordinal_law(&mut w);
    let mut buf = LabelBuf::labels(&states[0], 4, 3);
    let mut chain =
        langevin_core::ordinal::OrdinalChain::new_ordinal(buf.buffers(), &mut w).unwrap();
    let mut gibbs = Gibbs::new(Scan::Random);
    check_exact_start("ordinal gibbs kernel", &pi, N, &mut rng, |x0, k, rng| {
        chain.reset(&states[x0], &mut w).unwrap();
        for _ in 0..k {
            Kernel::step(&mut gibbs, &mut w, &mut chain, rng).unwrap();
        }
        index_of(chain.state(), 4)
    });
}

#[test]
fn categorical_gibbs_and_gwg() {
    let mut m = small_potts(4, 3);
    let (d, s) = (4, 3);
    let states = enumerate(d, s);
    let (log_pi, _) = tabulate_categorical(&mut m, &states);
    let pi = normalise(&log_pi);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(10);
    let mut scratch = vec![0.0f64; s];
    let mut gibbs = Gibbs::new(Scan::Systematic);
    check_exact_start("raw potts gibbs", &pi, N, &mut rng, |x0, k, rng| {
        let mut x = states[x0].clone();
        m.log_density_and_grad(&x, &mut [0.0; 12]).unwrap();
        for _ in 0..k {
            gibbs
                .update_categorical(&mut m, &mut x, &mut scratch, rng)
                .unwrap();
        }
        index_of(&x, s)
    });
    let mut buf = LabelBuf::labels(&states[0], s, d * s);
    let mut chain =
        langevin_core::ordinal::CategoricalChain::new_categorical(buf.buffers(), &mut m).unwrap();
    let mut gibbs = Gibbs::new(Scan::Random);
    for (name, use_gwg) in [("potts gibbs kernel", false), ("potts gwg", true)] {
        check_exact_start(name, &pi, N, &mut rng, |x0, k, rng| {
            chain.reset(&states[x0], &mut m).unwrap();
            for _ in 0..k {
                if use_gwg {
                    Kernel::step(&mut Gwg, &mut m, &mut chain, rng).unwrap();
                } else {
                    Kernel::step(&mut gibbs, &mut m, &mut chain, rng).unwrap();
                }
            }
            index_of(chain.state(), s)
        });
    }
    let _ = m.dim();
}

/// Block Gibbs leaves the visible marginal of the RBM invariant: exact start from that
/// marginal, `k` sweeps.
#[test]
fn rbm_block_gibbs() {
    let (v, h) = (6, 3);
    let w: Vec<f32> = (0..v * h)
        .map(|k| ((k * 5 % 9) as f32 - 4.0) * 0.3)
        .collect();
    let b: Vec<f32> = (0..v).map(|k| (k as f32 - 3.0) * 0.1).collect();
    let c = vec![0.2f32, -0.4, 0.1];
    let mut cache = vec![0.0f64; 2 * h];
    let mut m = Rbm::new(&w, &b, &c, &mut cache).unwrap();
    let (states, log_pi) = tabulate_binary_u(&mut m);
    let pi = normalise(&log_pi);
    let mut g = langevin_std::models::RbmBlockGibbs::new(w.clone(), b.clone(), c).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(12);
    check_exact_start("rbm block gibbs", &pi, N, &mut rng, |x0, k, rng| {
        let mut x = states[x0].clone();
        for _ in 0..k {
            g.sweep(&mut x, rng).unwrap();
        }
        index_of_binary(&x)
    });
    assert!(g.sweep(&mut [0u8; 5], &mut rng).is_err());
}

/// A Hamming-ball sweep (`⌈d/k⌉` block steps from block 0) updates every coordinate: each step
/// moves only its own block, the blocks start at `0, k, 2k, …` and the sweep ends back at 0,
/// and every coordinate changes in at least 5% of sweeps (the least-changed one does in over
/// 20% here). Exact start on independent coordinates (`θ_i` spread over `[−1, 1]`), `n = 2·10^4`
/// sweeps per configuration; each coordinate's frequency of ones after the sweep is tested
/// against `σ(θ_i)` by a binomial z-score, `|z| ≤ 5.6` (α = 1e-6 over the 29 coordinates,
/// Bonferroni). A block index off by one leaves a coordinate unchanged or moves one outside
/// its block.
#[test]
fn hamming_ball_sweep_touches_every_coordinate() {
    use langevin_core::baselines::{HammingBall, ball_size};
    use rand_core::Rng;
    const SWEEPS: usize = 20_000;
    const Z: f64 = 5.6;
    // (d, block k, radius r): a shorter last block (shorter than r too), blocks that divide d,
    // blocks of two, and one block holding the whole state.
    for (d, k, r) in [(7usize, 3usize, 2usize), (8, 4, 1), (9, 2, 2), (5, 5, 3)] {
        let theta: Vec<f32> = (0..d)
            .map(|i| -1.0 + 2.0 * i as f32 / (d - 1) as f32)
            .collect();
        let p1: Vec<f64> = theta
            .iter()
            .map(|&t| langevin_tests::sigmoid(f64::from(t)))
            .collect();
        let mut m = Independent(theta);
        let mut hb = HammingBall::new(r, k, vec![0.0f64; ball_size(k, r)]).unwrap();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(0x4b_00 + d as u64);
        let (mut changed, mut ones) = (vec![0u64; d], vec![0u64; d]);
        let name = format!("d = {d}, k = {k}, r = {r}");
        for _ in 0..SWEEPS {
            let x0: Vec<u8> = p1
                .iter()
                .map(|&p| u8::from(((rng.next_u64() >> 11) as f64) * 2f64.powi(-53) < p))
                .collect();
            let mut buf = BinBuf::new(&x0);
            let mut chain = BinaryChain::new(buf.buffers(), &mut m).unwrap();
            for b in 0..d.div_ceil(k) {
                let start = b * k;
                assert_eq!(hb.next_block(), start, "{name}: block {b} starts elsewhere");
                let before = chain.state().to_vec();
                hb.step(&mut m, &mut chain, &mut rng).unwrap();
                for (i, (&u, &v)) in before.iter().zip(chain.state()).enumerate() {
                    assert!(
                        u == v || (start..start + k).contains(&i),
                        "{name}: the block at {start} changed coordinate {i}"
                    );
                }
            }
            assert_eq!(hb.next_block(), 0, "{name}: the sweep does not end at 0");
            for (i, (&a, &b)) in x0.iter().zip(chain.state()).enumerate() {
                changed[i] += u64::from(a != b);
                ones[i] += u64::from(b);
            }
        }
        let n = SWEEPS as f64;
        for i in 0..d {
            let share = changed[i] as f64 / n;
            assert!(
                share >= 0.05,
                "{name}: coordinate {i} changed in {share} of sweeps"
            );
            let z = (ones[i] as f64 - n * p1[i]) / (n * p1[i] * (1.0 - p1[i])).sqrt();
            assert!(z.abs() <= Z, "{name}: coordinate {i}: z = {z}");
        }
    }
}
