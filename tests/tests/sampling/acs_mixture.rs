//! ACS on the 25-mode lattice mixture of Pynadath et al. (2024), Sec. 4.1 (`{0..449}²`, modes at 75…375 on each
//! axis, the published code's distance form with τ = 3.75), started in the mode at (75, 75).
//!
//! As in the paper's own experiment, the steps are set by hand (`a_max = 1575`, `a_min = 3`,
//! `s = 20`): the automatic step search aims at acceptance ρ* = ½, which mode-hopping jumps on
//! a wide ordinal lattice never reach. The balance schedule is tuned within the budget. DMALA
//! gets its step tuned to acceptance 0.574 (the paper's baseline protocol) over a geometric
//! grid.
//!
//! A mode counts as visited when the chain comes within Euclidean distance 10 of its centre
//! (75 % of a mode's mass lies there). Over seeds 1–4 ACS saw all 25 modes after 12 000 to
//! 25 000 steps and DMALA 4 to 7 modes in 60 000 steps; the thresholds below leave a margin on
//! both sides.

use langevin_core::ordinal::{Dmala, OrdinalChain, OrdinalProposal};
use langevin_core::tuning::{AcsSettings, AcsTuner};
use langevin_core::{Kernel, Ordinal};
use langevin_std::models::LatticeMixture;
use langevin_tests::discrete::*;
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

const STEPS: usize = 60_000;

/// Runs `steps` steps from (75, 75); returns the number of modes visited and the acceptance
/// rate.
fn visits<K: Kernel<Ordinal>>(
    m: &mut LatticeMixture,
    k: &mut K,
    steps: usize,
    seed: u64,
) -> (usize, f64) {
    let mut buf = LabelBuf::labels(&[75, 75], 450, 2);
    let mut chain = OrdinalChain::new_ordinal(buf.buffers(), m).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut seen = [false; 25];
    let mut accepted = 0usize;
    for _ in 0..steps {
        let r = k.step(m, &mut chain, &mut rng).unwrap();
        accepted += usize::from(r.accepted);
        if let Some(i) = m.nearest_mode(chain.state(), 10.0) {
            seen[i] = true;
        }
    }
    (
        seen.iter().filter(|&&s| s).count(),
        accepted as f64 / steps as f64,
    )
}

#[test]
fn acs_visits_every_mode_where_tuned_dmala_stays_local() {
    let mut m = LatticeMixture::twenty_five_modes();
    // DMALA's step: acceptance closest to 0.574 on a grid a = 2^(j/2), 2000 steps each.
    let mut best = (f64::INFINITY, 1.0);
    for j in 0..24 {
        let a = 2f64.powf(f64::from(j) / 2.0);
        let (_, acc) = visits(
            &mut m,
            &mut Dmala::new(OrdinalProposal::new(a, 0.5).unwrap()),
            2_000,
            50 + j as u64,
        );
        if (acc - 0.574).abs() < best.0 {
            best = ((acc - 0.574).abs(), a);
        }
    }
    let a_dmala = best.1;
    let (dmala_modes, dmala_acc) = visits(
        &mut m,
        &mut Dmala::new(OrdinalProposal::new(a_dmala, 0.5).unwrap()),
        STEPS,
        1,
    );

    let mut s = AcsSettings::default();
    s.fixed_steps = Some((1575.0, 3.0));
    s.total_steps = STEPS as u64;
    let mut acs = AcsTuner::new(s).unwrap();
    let (acs_modes, _) = visits(&mut m, &mut acs, STEPS, 2);
    let r = acs.report();
    assert!(
        r.frozen && r.tuning_steps <= r.budget,
        "overhead {} for a budget of {}",
        r.tuning_steps,
        r.budget
    );
    assert!(acs.planned_steps() <= r.budget);
    assert_eq!(
        acs_modes, 25,
        "ACS saw {acs_modes} modes (schedule {:?})",
        r.schedule
    );
    assert!(
        dmala_modes <= 10,
        "DMALA (a = {a_dmala}, acceptance {dmala_acc:.3}) saw {dmala_modes} modes"
    );
}
