//! Bad input on the ordinal and categorical domains: typed errors, rejected moves, valid
//! chains, no panics.

use super::FaultError;
use langevin_core::Kernel;
use langevin_core::baselines::{Gibbs, Scan};
use langevin_core::binary::{Rejection, StepError};
use langevin_core::categorical::{CategoricalProposal, CategoricalTarget, Dmala as CatDmala};
use langevin_core::ordinal::{
    CategoricalChain, Dmala, Dula, InitError, OrdinalChain, OrdinalProposal, OrdinalTarget,
};
use langevin_core::{LenError, ParamError};
use langevin_std::models::{OrdinalQuadratic, Potts};
use langevin_tests::discrete::*;
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// A bowl over `{0..S-1}^d` that misbehaves where `x_0` takes chosen values: NaN `U` at 1,
/// infinite gradient at 2, a recoverable error at 3, an unrecoverable one at 4 (if enabled).
struct Faulty {
    d: usize,
    s: usize,
    fatal: bool,
    one_hot: bool,
}

impl Faulty {
    fn eval(&self, x: &[u16], grad: &mut [f32]) -> Result<f64, FaultError> {
        let c = (self.s - 1) as f64 / 2.0;
        grad.fill(0.0);
        let mut u = 0.0;
        for (i, &v) in x.iter().enumerate() {
            let r = f64::from(v) - c;
            u -= 0.5 * r * r;
            if self.one_hot {
                grad[i * self.s + usize::from(v)] = (-r) as f32;
            } else {
                grad[i] = (-r) as f32;
            }
        }
        match x[0] {
            1 => Ok(f64::NAN),
            2 => {
                grad[0] = f32::INFINITY;
                Ok(u)
            }
            3 => Err(FaultError { recoverable: true }),
            4 if self.fatal => Err(FaultError { recoverable: false }),
            _ => Ok(u),
        }
    }
}

/// The same faulty model in both label domains (their target traits share their signatures).
macro_rules! faulty_label_target {
    ($($target:ident),+) => {$(
        impl $target for Faulty {
            type Error = FaultError;
            fn dim(&self) -> usize {
                self.d
            }
            fn states(&self) -> usize {
                self.s
            }
            fn log_density_and_grad(&mut self, x: &[u16], grad: &mut [f32]) -> Result<f64, FaultError> {
                self.eval(x, grad)
            }
        }
    )+};
}

faulty_label_target!(OrdinalTarget, CategoricalTarget);

fn faulty(d: usize, s: usize, fatal: bool) -> Faulty {
    Faulty {
        d,
        s,
        fatal,
        one_hot: false,
    }
}

#[test]
fn chains_refuse_bad_shapes_and_states() {
    for s in [0usize, 1, 65_536, usize::MAX] {
        let mut t = faulty(2, s, false);
        let mut buf = LabelBuf::labels(&[0, 0], s.min(8), 2);
        assert!(
            matches!(OrdinalChain::new_ordinal(buf.buffers(), &mut t), Err(InitError::States(v)) if v == s),
            "S = {s}"
        );
    }
    let mut t = faulty(0, 5, false);
    let mut buf = LabelBuf::labels(&[], 5, 0);
    assert!(matches!(
        OrdinalChain::new_ordinal(buf.buffers(), &mut t),
        Err(InitError::EmptyDimension)
    ));
    let mut t = faulty(3, 5, false);
    let mut buf = LabelBuf::labels(&[0, 0], 5, 3);
    assert!(matches!(
        OrdinalChain::new_ordinal(buf.buffers(), &mut t),
        Err(InitError::Len(_))
    ));
    let mut buf = LabelBuf::labels(&[0, 0, 0], 4, 3);
    assert!(matches!(
        OrdinalChain::new_ordinal(buf.buffers(), &mut t),
        Err(InitError::Len(LenError {
            buffer: "scratch",
            ..
        }))
    ));
    let mut buf = LabelBuf::labels(&[0, 5, 0], 5, 3);
    assert!(matches!(
        OrdinalChain::new_ordinal(buf.buffers(), &mut t),
        Err(InitError::StateOutOfRange { index: 1, value: 5 })
    ));
    let mut buf = LabelBuf::labels(&[1, 0, 0], 5, 3);
    assert!(matches!(
        OrdinalChain::new_ordinal(buf.buffers(), &mut t),
        Err(InitError::NonFinite)
    ));
    let mut buf = LabelBuf::labels(&[2, 0, 0], 5, 3);
    assert!(matches!(
        OrdinalChain::new_ordinal(buf.buffers(), &mut t),
        Err(InitError::NonFinite)
    ));
    let mut buf = LabelBuf::labels(&[3, 0, 0], 5, 3);
    assert!(matches!(
        OrdinalChain::new_ordinal(buf.buffers(), &mut t),
        Err(InitError::Target(FaultError { recoverable: true }))
    ));
    // Categorical gradients must be d·S long.
    let mut t = Faulty {
        d: 3,
        s: 4,
        fatal: false,
        one_hot: true,
    };
    let mut buf = LabelBuf::labels(&[0, 0, 0], 4, 3);
    assert!(matches!(
        CategoricalChain::new_categorical(buf.buffers(), &mut t),
        Err(InitError::Len(LenError { buffer: "grad", .. }))
    ));
    let mut buf = LabelBuf::labels(&[0, 0, 0], 4, 12);
    let mut chain = CategoricalChain::new_categorical(buf.buffers(), &mut t).unwrap();
    // Resetting to a bad state leaves the chain where it was.
    for bad in [[9u16, 0, 0], [1, 0, 0], [3, 0, 0]] {
        assert!(chain.reset(&bad, &mut t).is_err());
        assert_eq!(chain.state(), &[0, 0, 0]);
    }
    assert!(chain.reset(&[0, 0], &mut t).is_err());
}

#[test]
fn proposals_refuse_bad_parameters() {
    for a in [0.0, -1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        assert!(matches!(
            OrdinalProposal::new(a, 0.5),
            Err(ParamError::Step(_))
        ));
        assert!(matches!(
            CategoricalProposal::new(a, 0.5),
            Err(ParamError::Step(_))
        ));
    }
    for b in [0.0, -0.1, 1.000_001, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            OrdinalProposal::new(1.0, b),
            Err(ParamError::Balance(_))
        ));
        assert!(matches!(
            CategoricalProposal::new(1.0, b),
            Err(ParamError::Balance(_))
        ));
    }
    assert!(OrdinalProposal::new(1.0, 0.5).unwrap().windowed(0).is_err());
    for p in [
        [1.0f32, f32::NAN],
        [1.0, 0.0],
        [1.0, -1.0],
        [1.0, f32::INFINITY],
        [1.0, 1e30],
    ] {
        let big = OrdinalProposal::new(1e300, 0.5).unwrap();
        let bad = if p[1] == 1e30 {
            big.preconditioned(&p)
        } else {
            OrdinalProposal::new(1.0, 0.5).unwrap().preconditioned(&p)
        };
        assert!(
            matches!(bad, Err(ParamError::Preconditioner { index: 1, .. })),
            "{p:?}"
        );
        assert!(
            CategoricalProposal::new(if p[1] == 1e30 { 1e300 } else { 1.0 }, 0.5)
                .unwrap()
                .preconditioned(&p)
                .is_err()
        );
    }
    // A preconditioner of the wrong length is a step error, not a panic.
    let mut t = faulty(3, 6, false);
    let mut buf = LabelBuf::labels(&[0, 0, 0], 6, 3);
    let mut chain = OrdinalChain::new_ordinal(buf.buffers(), &mut t).unwrap();
    let pre = [1.0f32, 1.0];
    let k = Dmala::new(
        OrdinalProposal::new(1.0, 0.5)
            .unwrap()
            .preconditioned(&pre)
            .unwrap(),
    );
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
    assert!(matches!(
        k.step(&mut t, &mut chain, &mut rng),
        Err(StepError::Len(_))
    ));
    // So is a target of another dimension or number of values.
    let mut other = faulty(4, 6, false);
    assert!(matches!(
        Dmala::new(OrdinalProposal::new(1.0, 0.5).unwrap()).step(&mut other, &mut chain, &mut rng),
        Err(StepError::Len(_))
    ));
    let mut other = faulty(3, 7, false);
    assert!(matches!(
        Dmala::new(OrdinalProposal::new(1.0, 0.5).unwrap()).step(&mut other, &mut chain, &mut rng),
        Err(StepError::Len(_))
    ));
}

/// Steps into NaN, infinite or failing regions are rejected and reported; a fatal error stops
/// the step and leaves the chain as it was; the chain stays valid throughout.
#[test]
fn invalid_proposals_are_rejected_and_fatal_errors_returned() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(2);
    let (d, s) = (2usize, 6usize);
    for fatal in [false, true] {
        let mut t = faulty(d, s, fatal);
        let mut buf = LabelBuf::labels(&[5, 2], s, d);
        let mut chain = OrdinalChain::new_ordinal(buf.buffers(), &mut t).unwrap();
        let mut seen = [false; 3];
        let mut fatal_seen = false;
        for step in 0..20_000 {
            // Alternate large, small and windowed steps, adjusted and not.
            let prop = OrdinalProposal::new(if step % 2 == 0 { 30.0 } else { 0.7 }, 0.8).unwrap();
            let prop = if step % 3 == 0 {
                prop.windowed(2).unwrap()
            } else {
                prop
            };
            let before = chain.state().to_vec();
            let result = if step % 5 == 0 {
                Dula::new(prop).step(&mut t, &mut chain, &mut rng)
            } else {
                Dmala::new(prop).step(&mut t, &mut chain, &mut rng)
            };
            match result {
                Ok(r) => match r.rejection {
                    Some(Rejection::NonFinite) => seen[0] = true,
                    Some(Rejection::TargetError) => seen[1] = true,
                    None => seen[2] = true,
                },
                Err(StepError::Target(FaultError { recoverable: false })) => {
                    fatal_seen = true;
                    assert_eq!(
                        chain.state(),
                        &before[..],
                        "a fatal error leaves the chain alone"
                    );
                }
                Err(e) => panic!("unexpected {e:?}"),
            }
            assert!(chain.state().iter().all(|&v| usize::from(v) < s));
            assert!(chain.log_density().is_finite() && chain.grad().iter().all(|g| g.is_finite()));
            assert!(![1, 2, 3].contains(&chain.state()[0]) || step == 0);
        }
        assert!(seen.iter().all(|&v| v), "{seen:?}");
        assert_eq!(fatal_seen, fatal);
    }
    // Categorical, same story.
    let mut t = Faulty {
        d: 2,
        s: 6,
        fatal: true,
        one_hot: true,
    };
    let mut buf = LabelBuf::labels(&[5, 2], 6, 12);
    let mut chain = CategoricalChain::new_categorical(buf.buffers(), &mut t).unwrap();
    let k = CatDmala::new(CategoricalProposal::new(0.5, 0.9).unwrap());
    let mut errors = 0;
    for _ in 0..5_000 {
        let before = chain.state().to_vec();
        if k.step(&mut t, &mut chain, &mut rng).is_err() {
            errors += 1;
            assert_eq!(chain.state(), &before[..]);
        }
        assert!(chain.log_density().is_finite());
    }
    assert!(errors > 0);
}

/// Extreme but finite numbers: huge gradients and steps, tiny steps.
#[test]
fn extreme_numbers_keep_the_chain_valid() {
    let a = vec![1e30, 0.0, 0.0, 1e-30];
    let mut q = OrdinalQuadratic::new(21, a, vec![3.0, 17.0], vec![1e30, -1e30]).unwrap();
    let mut buf = LabelBuf::labels(&[0, 20], 21, 2);
    // U is about −1e31 there, finite.
    let mut chain = OrdinalChain::new_ordinal(buf.buffers(), &mut q).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
    for (a, b) in [
        (1e-300, 0.5),
        (1e300, 1.0),
        (f64::MAX, 0.9),
        (f64::MIN_POSITIVE, 0.5),
    ] {
        let k = Dmala::new(OrdinalProposal::new(a, b).unwrap());
        for _ in 0..50 {
            k.step(&mut q, &mut chain, &mut rng).unwrap();
            assert!(chain.state().iter().all(|&v| v < 21));
        }
    }
    let mut p = Potts::new(3, 2, &[(0, 1, 1e30)], vec![3e30, -1e30, 0.0, 0.0, 0.0, 0.0]).unwrap();
    let mut buf = LabelBuf::labels(&[0, 1], 3, 6);
    let mut chain = CategoricalChain::new_categorical(buf.buffers(), &mut p).unwrap();
    for (a, b) in [(1e-300, 0.5), (1e300, 1.0)] {
        let mut k = CatDmala::new(CategoricalProposal::new(a, b).unwrap());
        for _ in 0..50 {
            Kernel::step(&mut k, &mut p, &mut chain, &mut rng).unwrap();
            assert!(chain.state().iter().all(|&v| v < 3));
        }
    }
    // Gibbs on the same: a conditional of ±1e30 is a sure pick, never a NaN draw.
    let mut x = vec![2u16, 2];
    let mut scratch = vec![0.0; 3];
    let mut g = Gibbs::new(Scan::Systematic);
    CategoricalTarget::log_density_and_grad(&mut p, &x, &mut [0.0; 6]).unwrap();
    for _ in 0..10 {
        g.update_categorical(&mut p, &mut x, &mut scratch, &mut rng)
            .unwrap();
    }
    assert_eq!(x[0], 0);
    let mut gibbs = Gibbs::new(Scan::Random);
    let mut t = faulty(2, 6, true);
    let mut buf = LabelBuf::labels(&[5, 2], 6, 2);
    let mut chain = OrdinalChain::new_ordinal(buf.buffers(), &mut t).unwrap();
    for _ in 0..2_000 {
        let before = chain.state().to_vec();
        match Kernel::step(&mut gibbs, &mut t, &mut chain, &mut rng) {
            Ok(_) => {}
            Err(_) => assert_eq!(chain.state(), &before[..]),
        }
        assert!(![1, 2, 3].contains(&chain.state()[0]));
    }
}
