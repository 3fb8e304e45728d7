//! Replica exchange around DMALA: each replica's kernel is exact for its tempered law `π^β`
//! (transition matrix from the kernel's own `step` on the tempered target, see
//! `langevin_tests::harness`), and with the ladder frozen the cold chain's law stays `π` from an
//! exact start of all replicas (each drawn from its `π^{β_r}` by enumeration), which exercises
//! the swaps as implemented.

use langevin_core::binary::BinaryChain;
use langevin_core::models::{Dims, IsingLattice};
use langevin_core::tempering::{LadderSettings, ReplicaScratch, Replicas, SwapStats, Tempered};
use langevin_core::tuning::{AcceptanceSettings, AcceptanceTuner};
use langevin_core::{Binary, Chain};
use langevin_tests::discrete::{BinBuf, check_exact_start, normalise, tabulate_binary_u};
use langevin_tests::draw_index;
use langevin_tests::harness::{BinaryProbe, check_step_matrix, step_transition_matrix};
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// Replicas of the ladder tests.
const REPLICAS: usize = 3;

fn model() -> IsingLattice<Dims> {
    IsingLattice::with_dims(Dims { rows: 2, cols: 3 }, 0.6, 0.15, true).unwrap()
}

#[test]
fn each_replica_is_exact_for_its_tempered_law() {
    let mut m = model();
    for (beta, log_tau) in [(0.4, -1.0), (0.15, 0.5)] {
        let tempered = Tempered::new(&mut m, beta).unwrap();
        let kernel = AcceptanceTuner::fixed(log_tau, AcceptanceSettings::default()).unwrap();
        let mut probe = BinaryProbe::new(tempered, kernel);
        let matrix = step_transition_matrix(&mut probe);
        let c = check_step_matrix(&matrix);
        assert!(c.passed(), "β = {beta}: {c:?}");
    }
}

/// Exact start of every replica, then `k` frozen sweeps: the cold chain's state must follow
/// `π` (chi-square and TV at the false-positive rate `assert_matches` states).
#[test]
fn cold_chain_keeps_pi_at_a_frozen_ladder() {
    const N: usize = 20_000;
    let mut m = model();
    let (states, log_pi) = tabulate_binary_u(&mut m);
    with_ladder(&mut m, &states[0], 400, |replicas, m| {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(21);
        while !replicas.is_frozen() {
            replicas.sweep(m, &mut rng).unwrap();
        }
        let betas = replicas.betas().to_vec();
        assert!(
            betas.windows(2).all(|w| w[1] < w[0] && w[1] > 0.0),
            "{betas:?}"
        );
        // The tempered laws of the hot replicas, as cumulative sums.
        let cdfs: Vec<Vec<f64>> = betas
            .iter()
            .map(|&b| {
                let p = normalise(&log_pi.iter().map(|u| b * u).collect::<Vec<_>>());
                p.iter()
                    .scan(0.0, |c, &v| {
                        *c += v;
                        Some(*c)
                    })
                    .collect()
            })
            .collect();
        let pi = normalise(&log_pi);
        let index = |x: &[u8]| {
            x.iter()
                .enumerate()
                .map(|(i, &b)| usize::from(b) << i)
                .sum()
        };
        check_exact_start(
            &format!("replica exchange, ladder {betas:?}"),
            &pi,
            N,
            &mut rng,
            |x0, k, rng| {
                replicas.restart(0, &states[x0], m).unwrap();
                for (r, cdf) in cdfs.iter().enumerate().skip(1) {
                    let x = &states[draw_index(cdf, rng)];
                    replicas.restart(r, x, m).unwrap();
                }
                for _ in 0..k {
                    replicas.sweep(m, rng).unwrap();
                }
                index(replicas.cold().unwrap().state())
            },
        );
        let rates: Vec<f64> = replicas.swaps().iter().map(SwapStats::rate).collect();
        assert!(
            rates.iter().all(|&r| r > 0.05 && r <= 1.0),
            "swap rates {rates:?}"
        );
    });
}

/// A ladder saved mid-adaptation and put back into fresh replicas (their states restarted
/// where the saved ones were) continues with the same sweeps, bit for bit; words it cannot
/// reach are refused and change nothing.
#[test]
fn a_saved_ladder_continues_bit_for_bit_and_bad_words_change_nothing() {
    let mut m = model();
    let mut run = |words: Option<(&[u64], &[Vec<u8>])>, sweeps: usize| {
        with_ladder(&mut m, &[0u8; 6], 300, |replicas, m| {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
            if let Some((saved, states)) = words {
                let before: Vec<u64> = replicas.betas().iter().map(|b| b.to_bits()).collect();
                let mut bad = saved.to_vec();
                bad[2] = 2.0f64.to_bits(); // the cold replica's inverse temperature, above 1
                assert!(replicas.restore_words(&bad).is_err());
                assert!(replicas.restore_words(&saved[1..]).is_err());
                let after: Vec<u64> = replicas.betas().iter().map(|b| b.to_bits()).collect();
                assert_eq!(before, after);
                replicas.restore_words(saved).unwrap();
                for (r, x) in states.iter().enumerate() {
                    replicas.restart(r, x, m).unwrap();
                }
                rng = Xoshiro256PlusPlus::seed_from_u64(6);
            }
            for k in 0..sweeps {
                if words.is_none() && k == 150 {
                    rng = Xoshiro256PlusPlus::seed_from_u64(6);
                }
                replicas.sweep(m, &mut rng).unwrap();
            }
            let mut out = vec![0u64; Replicas::<Binary>::words_len(REPLICAS)];
            replicas.save_words(&mut out).unwrap();
            let states: Vec<Vec<u8>> = replicas
                .chains()
                .iter()
                .map(|c| c.state().to_vec())
                .collect();
            let cold_u = replicas.cold().unwrap().log_density().to_bits();
            (out, states, cold_u)
        })
    };
    // 150 sweeps, then the stream is re-seeded and 150 more: the reference.
    let whole = run(None, 300);
    // The same 150 sweeps, saved; a fresh ladder restored from them takes the other 150.
    let (saved, states, _) = run(None, 150);
    let resumed = run(Some((&saved, &states)), 150);
    assert_eq!(whole, resumed);
}

/// The test ladder: `REPLICAS` replicas of DMALA on `m`, all from `start`, geometric down to
/// β = 0.1 and adapted over `budget` sweeps, handed to `f` with the model.
fn with_ladder<O>(
    m: &mut IsingLattice<Dims>,
    start: &[u8],
    budget: u64,
    f: impl FnOnce(&mut Replicas<'_, '_, Binary>, &mut IsingLattice<Dims>) -> O,
) -> O {
    const R: usize = REPLICAS;
    let mut bufs: Vec<BinBuf> = (0..R).map(|_| BinBuf::new(start)).collect();
    let mut chains: Vec<Chain<'_, Binary>> = bufs
        .iter_mut()
        .map(|b| BinaryChain::new(b.buffers(), &mut *m).unwrap())
        .collect();
    let mut scratch = ReplicaScratch::<R>::new();
    let buffers = scratch.buffers(&mut chains);
    let mut settings = LadderSettings::default();
    settings.budget = budget;
    settings.min_beta = 0.1;
    let mut replicas = Replicas::new(buffers, settings, &mut *m).unwrap();
    f(&mut replicas, m)
}
