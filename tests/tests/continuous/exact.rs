//! Exact stationary (and transient) moments of every continuous integrator on Gaussian targets.
//!
//! For quadratic terms each integrator is a linear chain with random coefficients; the
//! reference in `continuous_support` propagates its first and second moments exactly, so the
//! expected time averages of `θ` and `θθᵀ` over a chain's kept steps are known to rounding.
//! Independent chains give the standard errors; every test fails with probability ≤ 1e-6 if
//! the implementation is right, and checks that it has the sample size to see the effect it is
//! about (discretisation bias, minibatch noise, snapshot noise) against the law without it.
#![allow(
    clippy::needless_range_loop,
    reason = "dense matrix code reads best with indices"
)]

use super::support::*;
use langevin_core::continuous::{
    Access, Agld, AgldSettings, DenseSnapshots, Ewsg, EwsgSettings, Langevin, LangevinSettings,
    PointSnapshot, ScalarSnapshots, SgChain, SgStep, SnapshotUpdate, Underdamped,
    UnderdampedSettings,
};
use rand_xoshiro::Xoshiro256PlusPlus;

const CHAINS: usize = 200;
const BURN: usize = 200;
const KEPT: usize = 10_000;
const SEED: u64 = 0x5eed_c0de;

/// [`expected_averages`] of a two-dimensional `θ` over the `KEPT` steps after `BURN`, from `z0`.
fn exact_averages(z0: &[f64], segment: impl FnMut(usize) -> Segment) -> (Vec<f64>, Vec<f64>) {
    expected_averages(z0, 2, BURN, KEPT, segment)
}

/// Four ridge-like terms in two dimensions with distinct rank-one data Hessians.
fn quad4() -> QuadSum {
    let x = vec![
        vec![1.0, 0.3],
        vec![-0.4, 1.1],
        vec![0.8, -0.9],
        vec![0.2, 0.5],
    ];
    let y = vec![0.7, -1.2, 0.4, 1.5];
    QuadSum::ridge(&x, &y, 1.0, 2.0)
}

/// Twenty Gaussian-sum centres in two dimensions (fixed, spread like N(0, I)).
fn centers20() -> Vec<Vec<f64>> {
    let z = [
        0.49, -0.14, 0.65, 1.52, -0.23, -0.23, 1.58, 0.77, -0.47, 0.54, -0.46, -0.47, 0.24, -1.91,
        -1.72, -0.56, -1.01, 0.31, -0.91, -1.41, 1.47, -0.23, 0.07, -1.42, -0.54, 0.11, -1.15,
        0.38, -0.60, -0.29, -0.60, 1.85, -0.01, -1.06, 0.82, -1.22, 0.21, -1.96, -1.33, 0.20,
    ];
    z.chunks(2).map(|c| c.to_vec()).collect()
}

fn theta0() -> Vec<f64> {
    vec![1.0, -1.0]
}

/// Runs `CHAINS` chains of `step`, collecting time averages of the kept steps.
fn chains_of(mut one: impl FnMut(&mut Xoshiro256PlusPlus, &mut Accum)) -> Check {
    let runs = collect(CHAINS, |c| {
        let mut rng = chain_rng(SEED, c);
        let mut acc = Accum::new(2);
        one(&mut rng, &mut acc);
        acc.finish()
    });
    Check::new(&runs)
}

/// Takes `BURN + KEPT` steps of `ch` on `t`, handing each step's report to `check` and pushing
/// `θ` after each kept step.
fn burn_then_keep<C: SgChain<QuadSum>>(
    acc: &mut Accum,
    ch: &mut C,
    t: &mut QuadSum,
    rng: &mut Xoshiro256PlusPlus,
    mut check: impl FnMut(&SgStep),
) {
    for k in 0..BURN + KEPT {
        check(&ch.step_with(t, rng).unwrap());
        if k >= BURN {
            acc.push(ch.position());
        }
    }
}

/// `run_langevin` and `run_underdamped`: `CHAINS` chains of the integrator from `theta0()`.
macro_rules! runners {
    ($($name:ident: $chain:ident, $settings:ident;)+) => {$(
        fn $name(t: &QuadSum, settings: $settings) -> Check {
            chains_of(|rng, acc| {
                let mut t = t.clone();
                let n = t.n();
                let mut work = vec![0.0; $chain::workspace_len(2)];
                let mut idx = vec![0; $chain::index_len(&settings, n)];
                let mut ch = $chain::new(settings, 2, n, &theta0(), &mut work, &mut idx).unwrap();
                burn_then_keep(acc, &mut ch, &mut t, rng, |_| ());
            })
        }
    )+};
}

runners! {
    run_langevin: Langevin, LangevinSettings;
    run_underdamped: Underdamped, UnderdampedSettings;
}

/// The three snapshot stores.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Store {
    Point,
    Dense,
    Scalar,
}

fn run_agld(t: &QuadSum, settings: AgldSettings, store: Store) -> Check {
    chains_of(|rng, acc| {
        let mut t = t.clone();
        let n = t.n();
        let mut work = vec![0.0; 8];
        let mut idx = vec![0; Agld::<DenseSnapshots>::index_len(&settings, n)];
        macro_rules! go {
            ($store:expr) => {{
                let mut ch =
                    Agld::new(settings, 2, n, &theta0(), $store, &mut work, &mut idx).unwrap();
                burn_then_keep(acc, &mut ch, &mut t, rng, |_| ());
            }};
        }
        match store {
            Store::Point => {
                let mut buf = vec![0.0; PointSnapshot::len(2)];
                go!(PointSnapshot::new(2, n, &mut buf).unwrap())
            }
            Store::Dense => {
                let mut buf = vec![0.0; DenseSnapshots::len(2, n).unwrap()];
                go!(DenseSnapshots::new(2, n, &mut buf).unwrap())
            }
            Store::Scalar => {
                let mut buf = vec![0.0; ScalarSnapshots::len(2, n).unwrap()];
                go!(ScalarSnapshots::new(2, n, &mut buf).unwrap())
            }
        }
    })
}

fn lmc_law(t: &QuadSum, h: f64) -> (Vec<f64>, Vec<f64>) {
    exact_averages(
        &theta0(),
        langevin_segments(t, h, None, None, Access::Random),
    )
}

/// The exact target's mean and raw second moment.
fn target_law(t: &QuadSum) -> (Vec<f64>, Vec<f64>) {
    let (m, cov) = t.target();
    let mut s = cov.clone();
    for r in 0..2 {
        for c in 0..2 {
            s[r * 2 + c] += m[r] * m[c];
        }
    }
    (m, s)
}

#[test]
fn lmc_matches_closed_form_variance() {
    // Gaussian sum: H = N I, so every direction has σ² = 1/N and LMC's stationary variance
    // is σ² / (1 − h / (2σ²)); hN = 0.5 makes it a third larger than σ².
    let t = QuadSum::gaussian_sum(&centers20());
    let n = t.n() as f64;
    let h = 0.5 / n;
    let (m_exact, s_exact) = lmc_law(&t, h);
    let (tm, _) = t.target();
    let var = (1.0 / n) / (1.0 - h * n / 2.0);
    // The reference itself reproduces the closed form (after a burn-in of 200 contractions
    // by 1 − hN = 0.5 the transient is far below rounding).
    for r in 0..2 {
        assert!((m_exact[r] - tm[r]).abs() < 1e-12);
        let v = s_exact[r * 2 + r] - m_exact[r] * m_exact[r];
        assert!((v - var).abs() < 1e-9 * var, "{v} vs {var}");
    }
    let check = run_langevin(&t, LangevinSettings::lmc(h).unwrap());
    check.assert_exact("LMC", &m_exact, &s_exact);
    let (ta, tb) = target_law(&t);
    check.assert_power("LMC vs target", (&m_exact, &s_exact), (&ta, &tb));
}

#[test]
fn sgld_matches_closed_form_variance() {
    // With H_i = I the minibatch error is additive with variance s² = (N²/n) Var_j(c_j) per
    // coordinate (indices with replacement), and the variance becomes
    // σ² (1 + h s²/2) / (1 − h/(2σ²)).
    let c = centers20();
    let t = QuadSum::gaussian_sum(&c);
    let (n, batch) = (t.n() as f64, 2usize);
    let h = 0.25 / n;
    let (m_exact, s_exact) = exact_averages(
        &theta0(),
        langevin_segments(&t, h, None, Some(batch), Access::Random),
    );
    for r in 0..2 {
        let mean_c = c.iter().map(|v| v[r]).sum::<f64>() / n;
        let var_c = c.iter().map(|v| (v[r] - mean_c).powi(2)).sum::<f64>() / n;
        let s2 = n * n / batch as f64 * var_c;
        let var = (1.0 / n) * (1.0 + h * s2 / 2.0) / (1.0 - h * n / 2.0);
        let v = s_exact[r * 2 + r] - m_exact[r] * m_exact[r];
        assert!((v - var).abs() < 1e-9 * var, "{v} vs {var}");
    }
    let check = run_langevin(&t, LangevinSettings::sgld(h, batch).unwrap());
    check.assert_exact("SGLD", &m_exact, &s_exact);
    let (lm, ls) = lmc_law(&t, h);
    check.assert_power("SGLD vs LMC", (&m_exact, &s_exact), (&lm, &ls));
}

#[test]
fn sgld_heterogeneous_terms_all_access_orders() {
    let t = quad4();
    let h = 0.15;
    for access in [Access::Random, Access::Reshuffle, Access::Cyclic] {
        let (m_exact, s_exact) =
            exact_averages(&theta0(), langevin_segments(&t, h, None, Some(2), access));
        let check = run_langevin(
            &t,
            LangevinSettings::sgld(h, 2).unwrap().with_access(access),
        );
        check.assert_exact(&format!("SGLD {access:?}"), &m_exact, &s_exact);
        let (lm, ls) = lmc_law(&t, h);
        check.assert_power(
            &format!("SGLD {access:?} vs LMC"),
            (&m_exact, &s_exact),
            (&lm, &ls),
        );
    }
}

#[test]
fn underdamped_full_and_sghmc() {
    let t = quad4();
    let (h, gamma) = (0.2, 2.0);
    let z0 = [1.0, -1.0, 0.0, 0.0];
    let full = exact_averages(
        &z0,
        langevin_segments(&t, h, Some(gamma), None, Access::Random),
    );
    let check = run_underdamped(&t, UnderdampedSettings::full(h, gamma).unwrap());
    check.assert_exact("underdamped EM", &full.0, &full.1);
    let (ta, tb) = target_law(&t);
    check.assert_power("underdamped vs target", (&full.0, &full.1), (&ta, &tb));

    for access in [Access::Random, Access::Reshuffle, Access::Cyclic] {
        let sg = exact_averages(&z0, langevin_segments(&t, h, Some(gamma), Some(1), access));
        let check = run_underdamped(
            &t,
            UnderdampedSettings::sghmc(h, gamma, 1)
                .unwrap()
                .with_access(access),
        );
        check.assert_exact(&format!("SGHMC {access:?}"), &sg.0, &sg.1);
        check.assert_power(
            &format!("SGHMC {access:?} vs full"),
            (&sg.0, &sg.1),
            (&full.0, &full.1),
        );
    }
}

#[test]
fn ewsg_with_identical_terms_is_full_gradient_em() {
    // Identical terms make every minibatch estimate the full gradient, so the index chain
    // (whatever it picks) cannot change the law: EWSG must equal Euler–Maruyama exactly.
    let x = vec![vec![0.9, -0.3]; 5];
    let y = vec![0.5; 5];
    let t = QuadSum::ridge(&x, &y, 1.0, 2.0);
    let (h, gamma) = (0.1, 2.0);
    let z0 = [1.0, -1.0, 0.0, 0.0];
    let full = exact_averages(
        &z0,
        langevin_segments(&t, h, Some(gamma), None, Access::Random),
    );
    for (batch, m) in [(1, 1), (2, 3)] {
        let settings = EwsgSettings::new(h, gamma)
            .unwrap()
            .with_batch(batch)
            .unwrap()
            .with_index_chain(m);
        let check = chains_of(|rng, acc| {
            let mut t = t.clone();
            let mut work = vec![0.0; Ewsg::workspace_len(2)];
            let mut ch = Ewsg::new(settings, 2, 5, &theta0(), &mut work).unwrap();
            burn_then_keep(acc, &mut ch, &mut t, rng, |rep| {
                assert_eq!(rep.grad_evals as usize, (m as usize + 1) * batch);
            });
        });
        check.assert_exact("EWSG, identical terms", &full.0, &full.1);
        let (ta, tb) = target_law(&t);
        check.assert_power("EWSG vs target", (&full.0, &full.1), (&ta, &tb));
    }
}

fn agld_case(access: Access, update: SnapshotUpdate, store: Store, batch: usize) {
    let t = quad4();
    let h = 0.15;
    let part = if store == Store::Scalar {
        SnapPart::Data
    } else {
        SnapPart::Full
    };
    let mut z0 = vec![0.0; agld_state_len(&t)];
    z0[..2].copy_from_slice(&theta0());
    let (m_exact, s_exact) = exact_averages(&z0, agld_segments(&t, h, batch, access, update, part));
    let settings = AgldSettings::new(h, batch, access, update).unwrap();
    let check = run_agld(&t, settings, store);
    let label = format!("AGLD {access:?} {update:?} {store:?}");
    check.assert_exact(&label, &m_exact, &s_exact);
    let (lm, ls) = lmc_law(&t, h);
    check.assert_power(&format!("{label} vs LMC"), (&m_exact, &s_exact), (&lm, &ls));
}

macro_rules! agld_tests {
    ($($name:ident: $access:expr, $update:expr, $store:expr, $batch:expr;)*) => {$(
        #[test]
        fn $name() {
            agld_case($access, $update, $store, $batch);
        }
    )*};
}

agld_tests! {
    svrg_ld_random: Access::Random, SnapshotUpdate::Total { period: 6 }, Store::Point, 2;
    ptu_reshuffle: Access::Reshuffle, SnapshotUpdate::Total { period: 6 }, Store::Point, 2;
    ptu_cyclic: Access::Cyclic, SnapshotUpdate::Total { period: 6 }, Store::Point, 1;
    saga_ld_random: Access::Random, SnapshotUpdate::Partial, Store::Dense, 2;
    ppu_reshuffle: Access::Reshuffle, SnapshotUpdate::Partial, Store::Dense, 2;
    ppu_cyclic: Access::Cyclic, SnapshotUpdate::Partial, Store::Dense, 1;
    tmu_random: Access::Random, SnapshotUpdate::Mixed { period: 5 }, Store::Dense, 2;
    tmu_reshuffle: Access::Reshuffle, SnapshotUpdate::Mixed { period: 5 }, Store::Dense, 2;
    tmu_cyclic: Access::Cyclic, SnapshotUpdate::Mixed { period: 5 }, Store::Dense, 1;
    ptu_dense_table_random: Access::Random, SnapshotUpdate::Total { period: 6 }, Store::Dense, 2;
    saga_ld_scalar_snapshots: Access::Random, SnapshotUpdate::Partial, Store::Scalar, 2;
    tmu_scalar_snapshots_cyclic: Access::Cyclic, SnapshotUpdate::Mixed { period: 5 }, Store::Scalar, 1;
}
