//! Stochastic-gradient integrators over a potential given by a per-term gradient callback,
//! through the C ABI: LMC's known stationary law on a Gaussian sum, gradient counts of every
//! integrator, and the statuses of failing callbacks and bad specifications.

mod common;

use common::c;
use langevin_ffi::*;
use std::cell::Cell;
use std::ffi::c_void;
use std::ptr;

const DIM: usize = 2;
const TERMS: usize = 10;

/// `V_i(θ) = ½|θ − c_i|²`, so `V = (N/2)|θ − c̄|² + const`: a Gaussian of variance `1/N` per
/// coordinate around `c̄`.
struct Centres {
    c: [[f64; DIM]; TERMS],
    abort: Cell<i32>,
    nan: Cell<bool>,
    calls: Cell<u64>,
}

impl Centres {
    fn new() -> Self {
        let mut c = [[0.0; DIM]; TERMS];
        for (i, row) in c.iter_mut().enumerate() {
            row[0] = i as f64 * 0.1 - 0.3;
            row[1] = 1.0 - (i % 3) as f64 * 0.4;
        }
        Self {
            c,
            abort: Cell::new(0),
            nan: Cell::new(false),
            calls: Cell::new(0),
        }
    }

    fn mean(&self) -> [f64; DIM] {
        let mut m = [0.0; DIM];
        for row in &self.c {
            for (a, v) in m.iter_mut().zip(row) {
                *a += v / TERMS as f64;
            }
        }
        m
    }
}

unsafe extern "C" fn grad(
    user: *mut c_void,
    theta: *const f64,
    dim: usize,
    indices: *const u32,
    count: usize,
    scale: f64,
    acc: *mut f64,
) -> i32 {
    // SAFETY: the test's `Centres`; `dim` and `count` entries as the contract says.
    let (m, theta, idx, acc) = unsafe {
        (
            &*(user as *const Centres),
            std::slice::from_raw_parts(theta, dim),
            std::slice::from_raw_parts(indices, count),
            std::slice::from_raw_parts_mut(acc, dim),
        )
    };
    m.calls.set(m.calls.get() + 1);
    if m.abort.get() != 0 {
        return m.abort.get();
    }
    for &i in idx {
        for k in 0..dim {
            acc[k] += scale * (theta[k] - m.c[i as usize][k]);
        }
    }
    if m.nan.get() {
        acc[0] = f64::NAN;
    }
    0
}

struct Sg {
    chain: Box<LgvSgChain>,
    work: Vec<f64>,
    index: Vec<u32>,
}

fn start(m: &Centres, name: &str, params: &str, seed: u64) -> Result<Sg, LgvStatus> {
    let (n, p) = (c(name), c(params));
    let spec = LgvSgSpec {
        name: n.as_ptr(),
        params: p.as_ptr(),
        dim: DIM,
        terms: TERMS,
    };
    let (mut w, mut i) = (0, 0);
    // SAFETY: readable spec, distinct outputs.
    let s = unsafe { lgv_sg_workspace(&spec, &mut w, &mut i) };
    if s != LGV_OK {
        return Err(s);
    }
    let mut sg = Sg {
        chain: Box::new(LgvSgChain {
            opaque: [0; LGV_SG_CHAIN_WORDS],
        }),
        work: vec![0.0; w],
        index: vec![0; i],
    };
    let theta0 = [0.5, -0.5];
    // SAFETY: every pointer addresses the stated entries.
    let s = unsafe {
        lgv_sg_init(
            &mut *sg.chain,
            &spec,
            theta0.as_ptr(),
            Some(grad),
            m as *const Centres as *mut c_void,
            sg.work.as_mut_ptr(),
            w,
            sg.index.as_mut_ptr(),
            i,
            seed,
        )
    };
    if s == LGV_OK { Ok(sg) } else { Err(s) }
}

fn theta(sg: &Sg) -> [f64; DIM] {
    let mut t = [0.0; DIM];
    // SAFETY: live chain, `DIM` writable entries.
    assert_eq!(
        unsafe { lgv_sg_theta(&*sg.chain, t.as_mut_ptr(), DIM) },
        LGV_OK
    );
    t
}

#[test]
fn lmc_reaches_its_known_stationary_law_on_a_gaussian_sum() {
    // LMC on V = (N/2)|θ − c̄|² is the AR(1) chain θ' = c̄ + ρ(θ − c̄) + √(2h) ξ with ρ = 1 − hN;
    // its stationary variance is (1/N) / (1 − hN/2), and the integrated autocorrelation time
    // of θ (and of (θ − c̄)²: ρ²) bounds the effective sample size. Tolerances are 4.9 standard
    // errors (false-positive rate about 1e-6 per check), with the errors of an AR(1) chain.
    let h = 0.02;
    let m = Centres::new();
    let mut sg = start(&m, "lmc", "step=0.02", 1).unwrap();
    let (rho, n) = (1.0 - h * TERMS as f64, 200_000usize);
    let var = (1.0 / TERMS as f64) / (1.0 - h * TERMS as f64 / 2.0);
    // SAFETY: live chain.
    assert_eq!(unsafe { lgv_sg_step(&mut *sg.chain, 1000) }, LGV_OK);
    let (mut sum, mut sq) = ([0.0; DIM], [0.0; DIM]);
    let mean = m.mean();
    for _ in 0..n {
        // SAFETY: live chain.
        assert_eq!(unsafe { lgv_sg_step(&mut *sg.chain, 1) }, LGV_OK);
        let t = theta(&sg);
        for k in 0..DIM {
            sum[k] += t[k];
            sq[k] += (t[k] - mean[k]).powi(2);
        }
    }
    let se_mean = (var * (1.0 + rho) / (1.0 - rho) / n as f64).sqrt();
    let se_var = var * (2.0 * (1.0 + rho * rho) / (1.0 - rho * rho) / n as f64).sqrt();
    for k in 0..DIM {
        let (mu, v) = (sum[k] / n as f64, sq[k] / n as f64);
        assert!(
            (mu - mean[k]).abs() < 4.9 * se_mean,
            "mean {k}: {mu} vs {}",
            mean[k]
        );
        assert!((v - var).abs() < 4.9 * se_var, "variance {k}: {v} vs {var}");
        // The check can tell the discretised law from the exact one (variance 1/N).
        assert!((0.1 - var).abs() > 4.9 * se_var * 3.0);
    }
    let (mut steps, mut evals, mut code) = (0, 0, 0);
    // SAFETY: live chain, distinct outputs.
    unsafe {
        assert_eq!(
            lgv_sg_counts(&*sg.chain, &mut steps, &mut evals, &mut code),
            LGV_OK
        )
    };
    assert_eq!(steps, 1000 + n as u64);
    assert_eq!(evals, steps * TERMS as u64, "a full gradient counts N");
}

#[test]
fn every_integrator_runs_and_counts_its_gradients() {
    for (name, params, per_step) in [
        ("lmc", "step=0.01", TERMS as u64),
        ("sgld", "step=0.01 batch=4", 4),
        ("sgld", "step=0.01 batch=3 access=reshuffle", 3),
        ("sgld", "step=0.01 batch=2 access=cyclic", 2),
        ("sghmc", "step=0.05 friction=1 batch=4 access=cyclic", 4),
        ("ewsg", "step=0.05 friction=1 batch=2 index-chain=1", 0),
    ] {
        let m = Centres::new();
        let mut sg = start(&m, name, params, 3).unwrap();
        // SAFETY: live chain.
        assert_eq!(
            unsafe { lgv_sg_step(&mut *sg.chain, 500) },
            LGV_OK,
            "{name}"
        );
        let t = theta(&sg);
        assert!(
            t.iter().all(|v| v.is_finite() && v.abs() < 5.0),
            "{name}: {t:?}"
        );
        let (mut steps, mut evals, mut code) = (0, 0, 0);
        // SAFETY: live chain.
        unsafe { lgv_sg_counts(&*sg.chain, &mut steps, &mut evals, &mut code) };
        assert_eq!(steps, 500);
        if per_step > 0 {
            assert_eq!(evals, 500 * per_step, "{name} {params}");
        } else {
            assert!(evals > 0, "{name}");
        }
    }
}

#[test]
fn failing_callbacks_and_bad_specifications_are_statuses() {
    let m = Centres::new();
    let mut sg = start(&m, "sgld", "step=0.01 batch=4", 2).unwrap();
    // SAFETY: live chain.
    assert_eq!(unsafe { lgv_sg_step(&mut *sg.chain, 10) }, LGV_OK);
    let before = theta(&sg);
    m.abort.set(9);
    // SAFETY: live chain.
    assert_eq!(unsafe { lgv_sg_step(&mut *sg.chain, 5) }, LGV_ERR_CALLBACK);
    assert_eq!(theta(&sg), before);
    let (mut steps, mut evals, mut code) = (0, 0, 0);
    // SAFETY: live chain.
    unsafe { lgv_sg_counts(&*sg.chain, &mut steps, &mut evals, &mut code) };
    assert_eq!((steps, code), (10, 9));
    m.abort.set(0);
    m.nan.set(true);
    // SAFETY: live chain.
    assert_eq!(
        unsafe { lgv_sg_step(&mut *sg.chain, 1) },
        LGV_ERR_CALLBACK_NON_FINITE
    );
    assert_eq!(theta(&sg), before);
    m.nan.set(false);
    // SAFETY: live chain.
    assert_eq!(unsafe { lgv_sg_step(&mut *sg.chain, 1) }, LGV_OK);
    // A step far too large diverges (the position, or first the gradient, overflows); the
    // chain stays at its last finite position.
    let mut big = start(&m, "lmc", "step=1e10", 2).unwrap();
    let b0 = theta(&big);
    // SAFETY: live chain.
    let s = unsafe { lgv_sg_step(&mut *big.chain, 100) };
    assert!(
        matches!(s, LGV_ERR_DIVERGED | LGV_ERR_CALLBACK_NON_FINITE),
        "{s}"
    );
    assert!(theta(&big).iter().all(|v| v.is_finite()), "{b0:?}");
    for (name, params, want) in [
        ("agld", "step=0.1", LGV_ERR_UNSUPPORTED_KERNEL),
        ("hmc", "step=0.1", LGV_ERR_UNKNOWN_KERNEL),
        ("sgld", "batch=2", LGV_ERR_STEP),
        ("sgld", "step=-1", LGV_ERR_STEP),
        ("sgld", "step=0.1 batch=11", LGV_ERR_PARAMETER_OUT_OF_RANGE),
        ("sgld", "step=0.1 batch=0", LGV_ERR_PARAMETER_OUT_OF_RANGE),
        ("lmc", "step=0.1 batch=2", LGV_ERR_PARAMETER_NAME),
        ("sgld", "step=0.1 access=sorted", LGV_ERR_PARAMETER_VALUE),
    ] {
        assert_eq!(
            start(&m, name, params, 1).err(),
            Some(want),
            "{name} {params}"
        );
    }
    // Short workspaces, NULL callback.
    let (n, p) = (c("sgld"), c("step=0.1 batch=2 access=reshuffle"));
    let spec = LgvSgSpec {
        name: n.as_ptr(),
        params: p.as_ptr(),
        dim: DIM,
        terms: TERMS,
    };
    let mut chain = Box::new(LgvSgChain {
        opaque: [0; LGV_SG_CHAIN_WORDS],
    });
    let (mut w, mut i) = (0, 0);
    let theta0 = [0.0; DIM];
    // SAFETY: each call passes one bad argument and otherwise valid memory.
    unsafe {
        assert_eq!(lgv_sg_workspace(&spec, &mut w, &mut i), LGV_OK);
        assert_eq!((w, i), (3 * DIM, TERMS));
        let mut work = vec![0.0; w];
        let mut index = vec![0u32; i];
        let user = &m as *const Centres as *mut c_void;
        let (wp, ip) = (work.as_mut_ptr(), index.as_mut_ptr());
        let init = |chain: &mut LgvSgChain, theta: *const f64, f: LgvTermGradFn, index_len| {
            lgv_sg_init(chain, &spec, theta, f, user, wp, w, ip, index_len, 1)
        };
        let t0 = theta0.as_ptr();
        assert_eq!(init(&mut chain, t0, Some(grad), i - 1), LGV_ERR_SCRATCH);
        assert_eq!(init(&mut chain, t0, None, i), LGV_ERR_NULL);
        assert_eq!(init(&mut chain, ptr::null(), Some(grad), i), LGV_ERR_NULL);
        assert_eq!(lgv_sg_step(&mut *chain, 1), LGV_ERR_NOT_INITIALISED);
        assert_eq!(init(&mut chain, t0, Some(grad), i), LGV_OK);
        assert_eq!(lgv_sg_theta(&*chain, wp, DIM), LGV_ERR_OVERLAP);
        assert_eq!(lgv_sg_release(&mut *chain), LGV_OK);
        assert_eq!(lgv_sg_step(&mut *chain, 1), LGV_ERR_NOT_INITIALISED);
    }
}

#[test]
fn a_minibatch_is_one_call_with_the_values_of_one_index_per_call() {
    use langevin_core::continuous::{Access, Langevin, LangevinSettings};
    use langevin_std::continuous::GaussianSum;
    use rand_core::SeedableRng;
    let (steps, seed, theta0) = (300u32, 11u64, [0.5, -0.5]);
    for (params, batch, access) in [
        ("step=0.01 batch=4", 4, Access::Random),
        ("step=0.01 batch=7 access=reshuffle", 7, Access::Reshuffle),
        ("step=0.01 batch=3 access=cyclic", 3, Access::Cyclic),
    ] {
        let m = Centres::new();
        let mut sg = start(&m, "sgld", params, seed).unwrap();
        // SAFETY: live chain.
        assert_eq!(unsafe { lgv_sg_step(&mut *sg.chain, steps) }, LGV_OK);
        assert_eq!(
            m.calls.get(),
            u64::from(steps),
            "{params}: one call per minibatch"
        );
        // The core's integrator on the same potential, evaluated one index at a time.
        let settings = LangevinSettings::sgld(0.01, batch)
            .unwrap()
            .with_access(access);
        let mut work = vec![0.0; Langevin::workspace_len(DIM)];
        let mut index = vec![0u32; Langevin::index_len(&settings, TERMS)];
        let mut chain =
            Langevin::new(settings, DIM, TERMS, &theta0, &mut work, &mut index).unwrap();
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
        // The command line's Gaussian sum over the same centres: the core's own minibatch,
        // one term at a time.
        let rows: Vec<Vec<f64>> = m.c.iter().map(|r| r.to_vec()).collect();
        let mut target = GaussianSum::from_rows(&rows).unwrap();
        for _ in 0..steps {
            chain.step(&mut target, &mut rng).unwrap();
        }
        let (a, b) = (theta(&sg), chain.theta());
        assert_eq!(
            a.map(f64::to_bits),
            [b[0].to_bits(), b[1].to_bits()],
            "{params}"
        );
    }
}
