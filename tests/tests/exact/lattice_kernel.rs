//! The tabulated lattice kernels: exact invariance by enumeration, a step realising exactly the
//! enumerated kernel, and agreement in distribution with the generic DMALA.

use langevin_core::BinaryTarget;
use langevin_core::LenError;
use langevin_core::binary::{
    BinaryChain, Dmala, Dula, FlipProposal, LatticeClasses, LatticeDmala, LatticeDula,
    LatticeProposal, PortablePasses, StepReport,
};
use langevin_core::models::{Dims, IsingLattice};
use langevin_core::random::open_unit_f64;
use langevin_tests::ChainBox;
use langevin_tests::discrete::stochastic_matrix;
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

fn lattice(rows: usize, cols: usize, coupling: f32, field: f32, periodic: bool) -> IsingLattice {
    IsingLattice::with_dims(Dims { rows, cols }, coupling, field, periodic).unwrap()
}

fn state_of(index: usize, d: usize) -> Vec<u8> {
    (0..d).map(|i| ((index >> i) & 1) as u8).collect()
}

fn log_density(model: &mut IsingLattice, x: &[u8]) -> f64 {
    let mut g = vec![0.0; x.len()];
    model.log_density_and_grad(x, &mut g).unwrap()
}

/// `q(y | x)` as the product of the table's per-site probabilities.
fn q_product(p: &LatticeProposal<Dims>, x: &[u8], y: &[u8]) -> f64 {
    (0..x.len())
        .map(|i| {
            let f = p.flip_probability(x, i).unwrap();
            if x[i] != y[i] { f } else { 1.0 - f }
        })
        .product()
}

/// Exact invariance: the DMALA transition matrix built from the table's flip probabilities
/// satisfies detailed balance and `πP = π`, and `log_q` agrees with the product of the
/// probabilities. All quantities are sums and products of at most 2^9 f64 terms of size ≤ 1,
/// so 1e-12 leaves a wide margin over rounding (~1e-15) while any error in the acceptance
/// ratio shows up at the size of a probability.
#[test]
fn dmala_table_kernel_is_exactly_invariant() {
    let models = [
        lattice(3, 3, 0.4407, 0.0, true),
        lattice(3, 3, 0.3, 0.2, true),
        lattice(2, 3, -0.5, 0.3, false),
        lattice(2, 3, 0.7, -0.1, true), // rows of 2 stay open
    ];
    for mut model in models {
        let d = model.dim();
        let k = 1usize << d;
        let u: Vec<f64> = (0..k)
            .map(|s| log_density(&mut model, &state_of(s, d)))
            .collect();
        let top = u.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let z: f64 = u.iter().map(|v| (v - top).exp()).sum();
        let pi: Vec<f64> = u.iter().map(|v| (v - top).exp() / z).collect();
        for (step, balance) in [(0.1, 0.5), (0.6, 0.5), (2.0, 1.0), (1e-3, 0.5), (50.0, 0.3)] {
            let p = LatticeProposal::new(&model, step, balance).unwrap();
            let matrix = stochastic_matrix(k, |a, b| {
                let (x, y) = (state_of(a, d), state_of(b, d));
                let q_fwd = q_product(&p, &x, &y);
                let lq_fwd = p.log_q(&x, &y).unwrap();
                assert!((lq_fwd - q_fwd.ln()).abs() < 1e-12 * (1.0 + lq_fwd.abs()));
                let ratio = u[b] - u[a] + p.log_q(&y, &x).unwrap() - lq_fwd;
                q_fwd * ratio.exp().min(1.0)
            });
            // No row proposes more than its whole mass.
            assert!((0..k).all(|a| matrix[a * k + a] >= -1e-12));
            for a in 0..k {
                for b in 0..k {
                    let (f, r) = (pi[a] * matrix[a * k + b], pi[b] * matrix[b * k + a]);
                    assert!((f - r).abs() <= 1e-12 * (pi[a] + pi[b]), "detailed balance");
                }
            }
            for b in 0..k {
                let flow: f64 = (0..k).map(|a| pi[a] * matrix[a * k + b]).sum();
                assert!((flow - pi[b]).abs() < 1e-12, "πP = π at state {b}");
            }
        }
    }
}

/// The flips a step must propose: site `i` flips when 16 bits of the `⌊i/4⌋`-th word are below
/// `p_i · 2^16`.
fn expected_flips(p: &LatticeProposal<Dims>, x: &[u8], rng: &mut Xoshiro256PlusPlus) -> Vec<u8> {
    let d = x.len();
    let words: Vec<u64> = (0..d.div_ceil(4)).map(|_| rng.next_u64()).collect();
    (0..d)
        .map(|i| {
            let r = (words[i / 4] >> (16 * (i % 4))) as u16;
            let t = p.flip_probability(x, i).unwrap() * 65536.0;
            assert_eq!(t, t.round(), "thresholds are multiples of 2^-16");
            x[i] ^ u8::from(f64::from(r) < t)
        })
        .collect()
}

fn check_chain_cache(model: &mut IsingLattice, chain: &BinaryChain<'_>) {
    let mut g = vec![0.0; chain.dim()];
    let u = model.log_density_and_grad(chain.state(), &mut g).unwrap();
    assert!((u - chain.log_density()).abs() < 1e-9 * (1.0 + u.abs()));
    assert_eq!(g, chain.grad(), "gradient is the model's, bit for bit");
}

/// Each step proposes exactly the flips the table prescribes for its random words, reports the
/// Metropolis ratio of the enumerated kernel, decides with the next word, consumes a fixed
/// number of words, and leaves the chain's log-density and gradient equal to the model's.
#[test]
fn steps_realise_the_tabulated_kernel() {
    let cases = [
        (lattice(3, 3, 0.4407, 0.0, true), 0.6),
        (lattice(2, 3, -0.5, 0.3, false), 0.4),
        (lattice(4, 5, 0.3, 0.2, true), 1.5),
        (lattice(7, 3, -0.2, -0.4, true), 0.3),
        (lattice(1, 6, 0.5, 0.1, true), 0.8),
        (lattice(5, 1, 0.5, 0.1, true), 0.8),
        (lattice(1, 1, 0.5, 0.3, true), 0.8),
        (lattice(6, 6, 0.4, 0.0, false), 3.0),
    ];
    for (mut model, step) in cases {
        let d = model.dim();
        let p = LatticeProposal::new(&model, step, 0.5).unwrap();
        let dmala = LatticeDmala::new(p);
        let dula = LatticeDula::new(p);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(d as u64);
        let x0: Vec<u8> = (0..d).map(|_| (rng.next_u32() & 1) as u8).collect();
        let mut bufs = ChainBox::new(&x0);
        let mut chain = BinaryChain::new(bufs.buffers(), &mut model).unwrap();
        let (mut moved, mut stayed) = (0, 0);
        for t in 0..400 {
            let x = chain.state().to_vec();
            let mut replay = rng.clone();
            let y = expected_flips(&p, &x, &mut replay);
            let flips = x.iter().zip(&y).filter(|(a, b)| a != b).count() as u32;
            let report: StepReport;
            if t % 2 == 0 {
                let u = open_unit_f64(&mut replay);
                report = dmala.step(&mut chain, &mut rng).unwrap();
                assert_eq!(report.proposed_flips, flips);
                if flips > 0 {
                    let ratio = log_density(&mut model, &y) - log_density(&mut model, &x)
                        + p.log_q(&y, &x).unwrap()
                        - p.log_q(&x, &y).unwrap();
                    assert!(
                        (report.log_accept_ratio - ratio).abs() < 1e-9 * (1.0 + ratio.abs()),
                        "{} vs {ratio}",
                        report.log_accept_ratio
                    );
                    assert_eq!(report.accepted, u.ln() < report.log_accept_ratio);
                }
                let expect = if report.accepted { &y } else { &x };
                assert_eq!(chain.state(), &expect[..]);
                if report.accepted && flips > 0 {
                    moved += 1;
                } else if flips > 0 {
                    stayed += 1;
                }
            } else {
                report = dula.step(&mut chain, &mut rng).unwrap();
                assert_eq!(report.proposed_flips, flips);
                assert!(report.accepted);
                assert_eq!(chain.state(), &y[..]);
            }
            assert_eq!(rng.next_u64(), replay.next_u64(), "fixed consumption");
            check_chain_cache(&mut model, &chain);
        }
        if d > 4 {
            assert!(
                moved > 0 && stayed > 0,
                "both outcomes exercised ({moved}, {stayed})"
            );
        }
    }
}

/// A chain's state, log-density (bits), gradient (bits) and the step's report, for comparing
/// two chains bit for bit.
fn snapshot(chain: &BinaryChain<'_>, r: &StepReport) -> (Vec<u8>, u64, Vec<u32>, String) {
    let grad = chain.grad().iter().map(|g| g.to_bits()).collect();
    (
        chain.state().to_vec(),
        chain.log_density().to_bits(),
        grad,
        format!("{r:?}"),
    )
}

/// Steps with kept classes are the plain steps bit for bit, even when one `LatticeClasses` is
/// shared out of turn by two chains, when a chain is moved between steps, and when it is
/// handed to a lattice of the same size but another shape or boundary while the state is the
/// same (so that only the lattice tells the kept bytes are stale). Every case accepts moves
/// (which hand the proposal's classes on) and rejects others.
#[test]
fn kept_classes_change_no_step() {
    let cases = [
        (
            lattice(4, 5, 0.3, 0.2, true),
            lattice(5, 4, 0.3, 0.2, true),
            1.5,
        ),
        (
            lattice(4, 5, 0.3, 0.2, true),
            lattice(4, 5, 0.3, 0.2, false),
            0.6,
        ),
        (
            lattice(3, 3, 0.4407, 0.0, true),
            lattice(1, 9, 0.4407, 0.0, true),
            0.6,
        ),
        (
            lattice(6, 6, 0.4, 0.0, false),
            lattice(4, 9, 0.4, 0.0, true),
            3.0,
        ),
        (
            lattice(20, 20, 0.2, 0.2, true),
            lattice(10, 40, 0.2, 0.2, true),
            0.4,
        ),
        (
            lattice(1, 1, 0.5, 0.3, true),
            lattice(1, 1, 0.5, 0.3, false),
            0.8,
        ),
    ];
    for (mut model, mut other, step) in cases {
        let d = model.dim();
        let kernels = |m: &IsingLattice| {
            let p = LatticeProposal::new(m, step, 0.5).unwrap();
            (LatticeDmala::new(p), LatticeDula::new(p))
        };
        let ((dmala, dula), (other_dmala, _)) = (kernels(&model), kernels(&other));
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(d as u64 + 7);
        let starts: Vec<Vec<u8>> = (0..2)
            .map(|_| (0..d).map(|_| (rng.next_u32() & 1) as u8).collect())
            .collect();
        // Chains 0 and 1 with the shared kept classes, 2 and 3 their plain twins.
        let mut boxes: Vec<ChainBox> = starts
            .iter()
            .chain(&starts)
            .map(|x| ChainBox::new(x))
            .collect();
        let mut chains: Vec<BinaryChain<'_>> = boxes
            .iter_mut()
            .map(|b| BinaryChain::new(b.buffers(), &mut model).unwrap())
            .collect();
        let mut classes = LatticeClasses::new(vec![0u8; d]);
        let (mut accepted, mut rejected) = (0, 0);
        for t in 0..600u64 {
            let c = usize::from(rng.next_u32() % 3 == 0);
            let seed = rng.next_u64();
            let (kept, plain) = match &mut chains[..] {
                [a, b, pa, pb] => {
                    if c == 0 {
                        (a, pa)
                    } else {
                        (b, pb)
                    }
                }
                _ => unreachable!(),
            };
            if t % 97 == 50 {
                // Moved by other code between steps.
                let x: Vec<u8> = (0..d).map(|_| (rng.next_u32() & 1) as u8).collect();
                kept.reset(&x, &mut model).unwrap();
                plain.reset(&x, &mut model).unwrap();
            }
            if t % 89 == 30 {
                // The same state on another lattice of `d` sites, stepped with the same bytes.
                let mut twin = ChainBox::new(kept.state());
                let mut on_other = BinaryChain::new(twin.buffers(), &mut other).unwrap();
                let mut plain_box = ChainBox::new(kept.state());
                let mut plain_other = BinaryChain::new(plain_box.buffers(), &mut other).unwrap();
                let mut r1 = Xoshiro256PlusPlus::seed_from_u64(seed);
                let mut r2 = r1.clone();
                let a = other_dmala
                    .step_with_classes(&mut on_other, &mut classes, &mut r1, &PortablePasses)
                    .unwrap();
                let b = other_dmala.step(&mut plain_other, &mut r2).unwrap();
                assert_eq!(snapshot(&on_other, &a), snapshot(&plain_other, &b));
            }
            let mut r1 = Xoshiro256PlusPlus::seed_from_u64(seed);
            let mut r2 = r1.clone();
            let (a, b) = if t % 5 == 4 {
                (
                    dula.step_with_classes(kept, &mut classes, &mut r1, &PortablePasses),
                    dula.step(plain, &mut r2),
                )
            } else {
                (
                    dmala.step_with_classes(kept, &mut classes, &mut r1, &PortablePasses),
                    dmala.step(plain, &mut r2),
                )
            };
            let (a, b) = (a.unwrap(), b.unwrap());
            assert_eq!(snapshot(kept, &a), snapshot(plain, &b), "step {t}");
            assert_eq!(r1.next_u64(), r2.next_u64(), "the same consumption");
            if b.proposed_flips > 0 {
                if b.accepted {
                    accepted += 1;
                } else {
                    rejected += 1;
                }
            }
        }
        if d > 1 {
            assert!(accepted > 0 && rejected > 0, "{accepted} {rejected}");
        }
    }
}

/// Kept classes of the wrong length are refused before anything changes.
#[test]
fn kept_classes_of_the_wrong_length_are_refused() {
    let mut model = lattice(3, 4, 0.3, 0.1, true);
    let kernel = LatticeDmala::new(LatticeProposal::new(&model, 0.5, 0.5).unwrap());
    let x0 = [1, 0, 0, 1, 1, 1, 0, 0, 1, 0, 1, 0];
    let mut bufs = ChainBox::new(&x0);
    let mut chain = BinaryChain::new(bufs.buffers(), &mut model).unwrap();
    let before = (chain.state().to_vec(), chain.log_density().to_bits());
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
    let fresh = rng.clone();
    for len in [0, 11, 13] {
        let mut classes = LatticeClasses::new(vec![0u8; len]);
        let e = kernel.step_with_classes(&mut chain, &mut classes, &mut rng, &PortablePasses);
        assert_eq!(
            e.unwrap_err(),
            LenError::check("classes", 12, len).unwrap_err()
        );
    }
    assert_eq!(
        (chain.state().to_vec(), chain.log_density().to_bits()),
        before
    );
    assert_eq!(rng, fresh, "nothing drawn");
}

/// Batch means of a scalar series: (mean, standard error).
fn batch_mean(values: &[f64], batches: usize) -> (f64, f64) {
    let size = values.len() / batches;
    let means: Vec<f64> = values
        .chunks_exact(size)
        .map(|c| c.iter().sum::<f64>() / size as f64)
        .collect();
    let m = means.iter().sum::<f64>() / batches as f64;
    let var = means.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (batches - 1) as f64;
    (m, (var / batches as f64).sqrt())
}

fn run(mut step: impl FnMut() -> StepReport, n: usize) -> (Vec<f64>, Vec<f64>) {
    (0..n)
        .map(|_| {
            let r = step();
            (f64::from(r.proposed_flips), f64::from(u8::from(r.accepted)))
        })
        .unzip()
}

/// Zhang, Liu & Liu (2022)'s 5×5 periodic lattice (`a = 0.1` per twice-counted edge, i.e. `J = 0.2` per bond,
/// field 0.2) at step 0.6: the tabulated and the generic DMALA agree on the mean number of
/// proposed flips and the acceptance rate, and both land near the reference values 6.0 and
/// 0.54.
///
/// Each kernel runs 10^6 steps after a burn-in of 10^4; standard errors come from 100 batch
/// means (batches of 10^4 steps, far longer than the autocorrelation time of a few steps).
/// The two-sample |z| ≤ 4.9 has a false-positive rate of 1e-6 per statistic. The reference
/// windows (±0.2 flips, ±0.02 acceptance) are ≥ 10 standard errors wide.
#[test]
fn tabulated_and_generic_dmala_agree() {
    let n = 1_000_000;
    let mut model = lattice(5, 5, 0.2, 0.2, true);
    let step = 0.6;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(20);
    let mut bufs = ChainBox::new(&[0; 25]);
    let mut chain = BinaryChain::new(bufs.buffers(), &mut model).unwrap();
    let generic = Dmala::new(FlipProposal::new(step, 0.5).unwrap());
    run(
        || generic.step(&mut model, &mut chain, &mut rng).unwrap(),
        10_000,
    );
    let (gf, ga) = run(
        || generic.step(&mut model, &mut chain, &mut rng).unwrap(),
        n,
    );

    let tab = LatticeDmala::new(LatticeProposal::new(&model, step, 0.5).unwrap());
    let mut bufs = ChainBox::new(&[0; 25]);
    let mut chain = BinaryChain::new(bufs.buffers(), &mut model).unwrap();
    run(|| tab.step(&mut chain, &mut rng).unwrap(), 10_000);
    let (tf, ta) = run(|| tab.step(&mut chain, &mut rng).unwrap(), n);

    for (name, g, t, reference, window) in [
        ("proposed flips", &gf, &tf, 6.0, 0.2),
        ("acceptance", &ga, &ta, 0.54, 0.02),
    ] {
        let (gm, gs) = batch_mean(g, 100);
        let (tm, ts) = batch_mean(t, 100);
        let z = (gm - tm) / (gs * gs + ts * ts).sqrt();
        eprintln!("{name}: generic {gm:.4} ± {gs:.4}, tabulated {tm:.4} ± {ts:.4}, z = {z:.2}");
        assert!(z.abs() <= 4.9, "{name}: kernels disagree, z = {z}");
        assert!(
            gs.max(ts) * 10.0 <= window,
            "{name}: too few samples for the window"
        );
        for m in [gm, tm] {
            assert!(
                (m - reference).abs() <= window,
                "{name}: {m} vs {reference} ± {window}"
            );
        }
    }
}

/// The unadjusted kernels have no Metropolis test to absorb a difference in the proposal, so
/// their agreement checks that the quantisation moves nothing measurable: on the same 5×5
/// lattice at step 0.3 (DULA is biased, so no reference value), the tabulated and the generic
/// DULA agree on the mean number of flips and the mean magnetisation `Σ x_i` under their own
/// stationary laws. 10^6 steps each, standard errors from 100 batch means, |z| ≤ 4.9
/// (α = 1e-6 per statistic).
#[test]
fn tabulated_and_generic_dula_agree() {
    let n = 1_000_000;
    let step = 0.3;
    let mut model = lattice(5, 5, 0.2, 0.2, true);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(21);
    let magnetisation =
        |chain: &BinaryChain<'_>| chain.state().iter().map(|&v| f64::from(v)).sum::<f64>();

    let generic = Dula::new(FlipProposal::new(step, 0.5).unwrap());
    let mut bufs = ChainBox::new(&[0; 25]);
    let mut chain = BinaryChain::new(bufs.buffers(), &mut model).unwrap();
    for _ in 0..10_000 {
        generic.step(&mut model, &mut chain, &mut rng).unwrap();
    }
    let (mut gf, mut gm) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for _ in 0..n {
        let r = generic.step(&mut model, &mut chain, &mut rng).unwrap();
        gf.push(f64::from(r.proposed_flips));
        gm.push(magnetisation(&chain));
    }

    let tab = LatticeDula::new(LatticeProposal::new(&model, step, 0.5).unwrap());
    let mut bufs = ChainBox::new(&[0; 25]);
    let mut chain = BinaryChain::new(bufs.buffers(), &mut model).unwrap();
    for _ in 0..10_000 {
        tab.step(&mut chain, &mut rng).unwrap();
    }
    let (mut tf, mut tm) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for _ in 0..n {
        let r = tab.step(&mut chain, &mut rng).unwrap();
        tf.push(f64::from(r.proposed_flips));
        tm.push(magnetisation(&chain));
    }

    for (name, g, t) in [("flips", &gf, &tf), ("magnetisation", &gm, &tm)] {
        let (gmean, gs) = batch_mean(g, 100);
        let (tmean, ts) = batch_mean(t, 100);
        let z = (gmean - tmean) / (gs * gs + ts * ts).sqrt();
        eprintln!(
            "DULA {name}: generic {gmean:.4} ± {gs:.4}, tabulated {tmean:.4} ± {ts:.4}, z = {z:.2}"
        );
        assert!(z.abs() <= 4.9, "{name}: kernels disagree, z = {z}");
    }
}

/// A coupling so large that `2 (J n + h)` overflows `f32` for some neighbour sum: the tabulated
/// kernels adopt moves without evaluating the model, so the proposal must be refused (the
/// chain started at a state whose neighbour sums are all 0 and a flip made them ±2, leaving an
/// infinite cached gradient; found by the lattice fuzz target).
#[test]
fn proposal_refuses_an_overflowing_gradient() {
    let model = lattice(2, 2, 1e38, 0.0, false);
    assert!(LatticeProposal::new(&model, 0.5, 0.5).is_err());
    let model = lattice(2, 2, 4e37, 0.0, false);
    assert!(LatticeProposal::new(&model, 0.5, 0.5).is_ok());
    let mut model = lattice(2, 2, 1e38, 0.0, false);
    // Rows [1, 1], [0, 0]: every neighbour sum is 0, so the start is finite.
    let mut b = ChainBox::new(&[1, 1, 0, 0]);
    let chain = BinaryChain::new(b.buffers(), &mut model).unwrap();
    assert!(chain.grad().iter().all(|g| g.is_finite()));
}

fn index_of(x: &[u8]) -> usize {
    x.iter()
        .enumerate()
        .map(|(i, &v)| usize::from(v) << i)
        .sum()
}

/// The checkerboard Gibbs sweep's conditionals are the model's: for every state and site of
/// small lattices (odd periodic, open, even periodic), `probability_of_one` equals
/// `π(x_i = 1 | rest) = 1 / (1 + e^{U(x, x_i = 0) − U(x, x_i = 1)})`. The thresholds are
/// `2^64`-multiples of a double and both sides are f64 evaluations of the same logistic
/// function, so 1e-13 leaves a margin over their rounding while any wrong neighbour or sign
/// shows up at the size of a probability.
#[test]
fn lattice_gibbs_conditionals_are_exact() {
    use langevin_core::binary::LatticeGibbs;
    let models = [
        lattice(3, 3, 0.4407, 0.0, true),
        lattice(2, 3, -0.5, 0.3, false),
        lattice(4, 4, 0.3, -0.2, true),
        lattice(1, 5, 0.7, 0.1, true),
        lattice(3, 3, 40.0, 0.0, true), // probabilities within 2^-64 of 0 and 1
    ];
    for mut model in models {
        let d = model.dim();
        let gibbs = LatticeGibbs::new(&model);
        for s in 0..1usize << d {
            let x = state_of(s, d);
            for i in 0..d {
                let (mut x0, mut x1) = (x.clone(), x.clone());
                x0[i] = 0;
                x1[i] = 1;
                let (u0, u1) = (log_density(&mut model, &x0), log_density(&mut model, &x1));
                let exact = 1.0 / (1.0 + (u0 - u1).exp());
                let p = gibbs.probability_of_one(&x, i).unwrap();
                assert!(
                    (p - exact).abs() < 1e-13,
                    "state {s} site {i}: {p} vs {exact}"
                );
            }
        }
        assert!(gibbs.probability_of_one(&vec![0; d], d).is_none());
    }
}

/// The checkerboard Gibbs sweep samples π: exact start (x0 drawn from π by enumeration), then 1
/// and 10 sweeps of the real kernel, 200,000 times; the final states are compared with π by a
/// pooled chi-square test and a TV bound, each at false-positive rate 1e-6
/// (`langevin_tests::discrete::assert_matches`). The 3×3 periodic lattice has odd sides (wrapped
/// neighbours share a colour), the 2×4 lattice is open, the 4×2 one periodic along its rows only.
#[test]
fn lattice_gibbs_sweeps_sample_pi() {
    use langevin_core::binary::LatticeGibbs;
    use langevin_tests::discrete::check_exact_start;
    let models = [
        lattice(3, 3, 0.4407, 0.1, true),
        lattice(2, 4, -0.6, 0.3, false),
        lattice(4, 2, 0.5, -0.2, true),
    ];
    for (case, mut model) in models.into_iter().enumerate() {
        let d = model.dim();
        let u: Vec<f64> = (0..1usize << d)
            .map(|s| log_density(&mut model, &state_of(s, d)))
            .collect();
        let top = u.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let z: f64 = u.iter().map(|v| (v - top).exp()).sum();
        let pi: Vec<f64> = u.iter().map(|v| (v - top).exp() / z).collect();
        let gibbs = LatticeGibbs::new(&model);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(40 + case as u64);
        check_exact_start(
            &format!("checkerboard Gibbs, case {case}"),
            &pi,
            200_000,
            &mut rng,
            |x0, k, rng| {
                let mut x = state_of(x0, d);
                for _ in 0..k {
                    gibbs.sweep(&mut x, rng).unwrap();
                }
                index_of(&x)
            },
        );
        // A wrong length is refused and leaves the state alone.
        let mut short = vec![1u8; d - 1];
        assert!(gibbs.sweep(&mut short, &mut rng).is_err());
        assert!(short.iter().all(|&v| v == 1));
    }
}

/// A sweep draws `⌈d/2⌉` words (no threshold tie in these short runs: probability 2^-32 each),
/// and returns the number of sites that changed.
#[test]
fn lattice_gibbs_sweep_consumes_half_words() {
    use langevin_core::binary::LatticeGibbs;
    for (rows, cols) in [(3, 3), (4, 5), (1, 1), (6, 6)] {
        let model = lattice(rows, cols, 0.3, 0.1, true);
        let d = rows * cols;
        let gibbs = LatticeGibbs::new(&model);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(d as u64);
        let mut x = vec![0u8; d];
        for _ in 0..20 {
            let mut twin = rng.clone();
            let before = x.clone();
            let changed = gibbs.sweep(&mut x, &mut rng).unwrap();
            let moved = x.iter().zip(&before).filter(|(a, b)| a != b).count();
            assert_eq!(changed as usize, moved);
            for _ in 0..d.div_ceil(2) {
                twin.next_u64();
            }
            assert_eq!(twin.next_u64(), rng.clone().next_u64(), "{rows}×{cols}");
        }
    }
}
