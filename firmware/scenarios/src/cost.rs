//! Step-cost cases: a nominal case per model family and kernel, and extreme variants of it that
//! must not cost much more (the bounded-time goal: at most 1.25× the nominal step, see
//! [`CostCase::is_bounded`]).
//!
//! * The lattice family is the 8×8 periodic Ising model with absurd step sizes or couplings of
//!   ±1e30 (logits near ±1e31, so every coordinate flips surely or never).
//! * The scripted family is a 64-coordinate target that returns the same gradient everywhere and
//!   a fixed log-density at every proposal: NaN, ±∞, ±`f32::MAX`, beyond-±700 logits,
//!   subnormals and −0 reach the kernel exactly as given.
//! * The ordinal family runs the ordinal DULA and DMALA on a 64-coordinate lattice Gaussian
//!   with 5 values per coordinate ([`LatticeGauss`]): step 0.25 (nominal), 1e-30 and 1e30.

use crate::targets::{GAUSS_STATES, LatticeGauss};
use crate::{Failure, Kernel};
use core::convert::Infallible;
use langevin_core::binary::{
    BinaryChain, ChainStorage, Dmala, Dula, FlipProposal, StepError, StepReport,
};
use langevin_core::models::{ConstDims, IsingLattice};
use langevin_core::ordinal::{self, OrdinalChain, OrdinalProposal, OrdinalStorage};
use langevin_core::{BinaryTarget, FlipMove};
use langevin_core::{Chain, Domain, Eval, Kernel as CoreKernel};
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Dimension of every cost case.
pub const COST_DIM: usize = 64;

/// Brackets each measured step: `start` just before the step's call, `stop` just after it.
pub trait Meter {
    /// Called right before a measured call.
    fn start(&mut self);
    /// Called right after a measured call.
    fn stop(&mut self);
}

/// A meter that measures nothing (the host counts instructions from outside).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoMeter;

impl Meter for NoMeter {
    #[inline(always)]
    fn start(&mut self) {}
    #[inline(always)]
    fn stop(&mut self) {}
}

/// What a cost case runs on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Setup {
    /// The 8×8 periodic Ising lattice.
    Lattice {
        /// Coupling `J`.
        coupling: f32,
        /// Field `h`.
        field: f32,
    },
    /// A [`Scripted`] target.
    Scripted {
        /// Gradient entry at the initial state (must be finite).
        init_grad: f32,
        /// Gradient entry at every proposal.
        grad: f32,
        /// Log-density at every proposal.
        log_density: f64,
    },
    /// The ordinal kernel of the case's kind on [`LatticeGauss`] with `COST_DIM` coordinates.
    Ordinal,
}

/// One cost case.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CostCase {
    /// A short name.
    pub name: &'static str,
    /// The kernel.
    pub kernel: Kernel,
    /// The target.
    pub setup: Setup,
    /// Step size `a`.
    pub step: f64,
    /// Balance `b`.
    pub balance: f64,
    /// Index in [`COST_CASES`] of the nominal case this one is compared with (itself for a
    /// nominal case).
    pub baseline: usize,
}

impl CostCase {
    /// Whether this is a nominal case.
    pub fn is_nominal(&self, index: usize) -> bool {
        self.baseline == index
    }

    /// Whether the case is held to the time bound (1.25× its nominal case). All are: the
    /// scripted target costs the same whatever it returns, and the lattice falls back to a fresh
    /// evaluation when a move flips many sites, so its cost no longer grows with the flips.
    pub fn is_bounded(&self) -> bool {
        true
    }
}

/// A case at balance 0.5, as every case is.
const fn case(
    name: &'static str,
    kernel: Kernel,
    setup: Setup,
    step: f64,
    baseline: usize,
) -> CostCase {
    CostCase {
        name,
        kernel,
        setup,
        step,
        balance: 0.5,
        baseline,
    }
}

const fn lattice(
    name: &'static str,
    kernel: Kernel,
    coupling: f32,
    step: f64,
    base: usize,
) -> CostCase {
    let setup = Setup::Lattice {
        coupling,
        field: 0.1,
    };
    case(name, kernel, setup, step, base)
}

const fn scripted(
    name: &'static str,
    kernel: Kernel,
    init_grad: f32,
    grad: f32,
    log_density: f64,
    step: f64,
    base: usize,
) -> CostCase {
    let setup = Setup::Scripted {
        init_grad,
        grad,
        log_density,
    };
    case(name, kernel, setup, step, base)
}

/// Cases of one kernel, starting at index `o` of [`COST_CASES`].
const fn family(k: Kernel, o: usize) -> [CostCase; PER_KERNEL] {
    let l = o; // the nominal lattice case
    let s = o + 6; // the nominal scripted case
    let (nan, inf, max) = (f32::NAN, f32::INFINITY, f32::MAX);
    [
        lattice("lattice", k, 0.3, 0.5, l),
        lattice("lattice a=1e-30", k, 0.3, 1e-30, l),
        lattice("lattice a=1e30", k, 0.3, 1e30, l),
        lattice("lattice J=+1e30", k, 1e30, 0.5, l),
        lattice("lattice J=-1e30", k, -1e30, 0.5, l),
        lattice("lattice J=1e-40", k, 1e-40, 0.5, l),
        scripted("scripted", k, 0.3, 0.3, 0.0, 0.5, s),
        scripted("grad NaN", k, 0.3, nan, 0.0, 0.5, s),
        scripted("grad +inf", k, 0.3, inf, 0.0, 0.5, s),
        scripted("grad -inf", k, 0.3, -inf, 0.0, 0.5, s),
        scripted("U NaN", k, 0.3, 0.3, f64::NAN, 0.5, s),
        scripted("U +inf", k, 0.3, 0.3, f64::INFINITY, 0.5, s),
        scripted("U -inf", k, 0.3, 0.3, f64::NEG_INFINITY, 0.5, s),
        scripted("U=MAX", k, 0.3, 0.3, f64::MAX, 0.5, s),
        scripted("grad +MAX", k, max, max, 0.0, 0.5, s),
        scripted("grad -MAX", k, -max, -max, 0.0, 0.5, s),
        scripted("grad +2000", k, 2000.0, 2000.0, 0.0, 0.5, s),
        scripted("grad -2000", k, -2000.0, -2000.0, 0.0, 0.5, s),
        scripted("subnormal", k, 1e-40, 1e-40, 0.0, 1e38, s),
        scripted("grad -0", k, -0.0, -0.0, 0.0, 0.5, s),
        scripted("a=1e-30", k, 0.3, 0.3, 0.0, 1e-30, s),
        scripted("a=1e30", k, 0.3, 0.3, 0.0, 1e30, s),
    ]
}

const PER_KERNEL: usize = 22;

const fn ordinal(name: &'static str, kernel: Kernel, step: f64, base: usize) -> CostCase {
    case(name, kernel, Setup::Ordinal, step, base)
}

/// Ordinal cases of one kernel, starting at index `o` of [`COST_CASES`].
const fn ordinal_family(k: Kernel, o: usize) -> [CostCase; PER_ORDINAL] {
    [
        ordinal("ordinal", k, 0.25, o),
        ordinal("ordinal a=1e-30", k, 1e-30, o),
        ordinal("ordinal a=1e30", k, 1e30, o),
    ]
}

const PER_ORDINAL: usize = 3;

/// Every cost case: the binary DMALA family, the binary DULA family, then the ordinal DMALA and
/// DULA cases.
pub const COST_CASES: [CostCase; 2 * PER_KERNEL + 2 * PER_ORDINAL] = concat(
    family(Kernel::Dmala, 0),
    family(Kernel::Dula, PER_KERNEL),
    ordinal_family(Kernel::Dmala, 2 * PER_KERNEL),
    ordinal_family(Kernel::Dula, 2 * PER_KERNEL + PER_ORDINAL),
);

#[allow(
    clippy::indexing_slicing,
    reason = "only evaluated at compile time, where an index out of range is a build error"
)]
const fn concat(
    a: [CostCase; PER_KERNEL],
    b: [CostCase; PER_KERNEL],
    c: [CostCase; PER_ORDINAL],
    d: [CostCase; PER_ORDINAL],
) -> [CostCase; 2 * PER_KERNEL + 2 * PER_ORDINAL] {
    let mut out = [a[0]; 2 * PER_KERNEL + 2 * PER_ORDINAL];
    let mut i = 0;
    while i < PER_KERNEL {
        out[i] = a[i];
        out[PER_KERNEL + i] = b[i];
        i += 1;
    }
    let mut j = 0;
    while j < PER_ORDINAL {
        out[2 * PER_KERNEL + j] = c[j];
        out[2 * PER_KERNEL + PER_ORDINAL + j] = d[j];
        j += 1;
    }
    out
}

/// A target over `{0,1}^64` that writes the same gradient entry everywhere and returns a fixed
/// log-density at proposals: it delivers any value, finite or not, to the kernel unchanged.
#[derive(Clone, Copy, Debug)]
pub struct Scripted {
    /// Gradient entry at the initial state.
    pub init_grad: f32,
    /// Gradient entry at every proposal.
    pub grad: f32,
    /// Log-density at every proposal.
    pub log_density: f64,
}

impl BinaryTarget for Scripted {
    type Error = Infallible;

    fn dim(&self) -> usize {
        COST_DIM
    }

    fn log_density_and_grad(&mut self, _x: &[u8], grad: &mut [f32]) -> Result<f64, Infallible> {
        grad.fill(self.init_grad);
        Ok(0.0)
    }

    fn log_density_and_grad_after(
        &mut self,
        _mv: &FlipMove<'_>,
        grad: &mut [f32],
    ) -> Result<f64, Infallible> {
        grad.fill(self.grad);
        Ok(self.log_density)
    }
}

/// Totals of a cost run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Steps taken.
    pub steps: u32,
    /// Steps accepted.
    pub accepted: u32,
    /// Coordinates flipped by accepted steps.
    pub flips: u32,
}

/// Runs `steps` steps of `case` from the all-zero state with seed 1, bracketing every step call
/// with `meter`.
///
/// # Errors
///
/// A [`Failure`] if the case's parameters are refused or a step fails.
pub fn run_case<M: Meter>(case: &CostCase, steps: u32, meter: &mut M) -> Result<Outcome, Failure> {
    if case.setup == Setup::Ordinal {
        return run_ordinal(case, steps, meter);
    }
    let proposal = FlipProposal::new(case.step, case.balance).map_err(|_| Failure::Param)?;
    match case.setup {
        Setup::Lattice { coupling, field } => {
            let mut target = IsingLattice::<ConstDims<8, 8>>::new(coupling, field, true)
                .map_err(|_| Failure::Param)?;
            run_binary(case.kernel, proposal, &mut target, steps, meter)
        }
        Setup::Scripted {
            init_grad,
            grad,
            log_density,
        } => {
            let mut target = Scripted {
                init_grad,
                grad,
                log_density,
            };
            run_binary(case.kernel, proposal, &mut target, steps, meter)
        }
        Setup::Ordinal => Err(Failure::Param),
    }
}

fn run_ordinal<M: Meter>(case: &CostCase, steps: u32, meter: &mut M) -> Result<Outcome, Failure> {
    let proposal = OrdinalProposal::new(case.step, case.balance).map_err(|_| Failure::Param)?;
    let mut target = LatticeGauss::<COST_DIM>;
    let mut storage = OrdinalStorage::<COST_DIM, GAUSS_STATES>::new([0; COST_DIM]);
    let mut chain =
        OrdinalChain::new_ordinal(storage.buffers(), &mut target).map_err(|_| Failure::Init)?;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
    let mut dula = ordinal::Dula::new(proposal);
    let mut dmala = ordinal::Dmala::new(proposal);
    tally(steps, meter, || match case.kernel {
        Kernel::Dula => metered_step(&mut dula, &mut target, &mut chain, &mut rng),
        Kernel::Dmala => metered_step(&mut dmala, &mut target, &mut chain, &mut rng),
    })
}

/// Runs a binary case on `target` from the all-zero state with seed 1.
fn run_binary<T: BinaryTarget, M: Meter>(
    kernel: Kernel,
    proposal: FlipProposal<'static>,
    target: &mut T,
    steps: u32,
    meter: &mut M,
) -> Result<Outcome, Failure> {
    let mut storage = ChainStorage::<COST_DIM>::new([0; COST_DIM]);
    let mut chain = BinaryChain::new(storage.buffers(), target).map_err(|_| Failure::Init)?;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
    match kernel {
        Kernel::Dula => {
            let mut k = Dula::new(proposal);
            tally(steps, meter, || {
                metered_step(&mut k, target, &mut chain, &mut rng)
            })
        }
        Kernel::Dmala => {
            let mut k = Dmala::new(proposal);
            tally(steps, meter, || {
                metered_step(&mut k, target, &mut chain, &mut rng)
            })
        }
    }
}

/// Takes `steps` steps with `step`, bracketing each call (and nothing else) with `meter`, and
/// totals their reports.
fn tally<M: Meter, E>(
    steps: u32,
    meter: &mut M,
    mut step: impl FnMut() -> Result<StepReport, E>,
) -> Result<Outcome, Failure> {
    let mut out = Outcome::default();
    for _ in 0..steps {
        meter.start();
        let report = step();
        meter.stop();
        let report = report.map_err(|_| Failure::Step)?;
        out.steps += 1;
        out.accepted += u32::from(report.accepted);
        out.flips += report.accepted_flips();
    }
    Ok(out)
}

/// One kernel step of any domain, never inlined, so that a meter (or `callgrind
/// --toggle-collect`) can bracket exactly this call.
#[inline(never)]
pub fn metered_step<D, K, T, R>(
    kernel: &mut K,
    target: &mut T,
    chain: &mut Chain<'_, D>,
    rng: &mut R,
) -> Result<StepReport, StepError<T::Error>>
where
    D: Domain,
    K: CoreKernel<D>,
    T: Eval<D> + ?Sized,
    R: Rng + ?Sized,
{
    kernel.step(target, chain, rng)
}

/// An empty call with the shape of [`metered_step`], to measure what a meter adds.
#[inline(never)]
pub fn metered_nothing(x: &mut u32) {
    *x = core::hint::black_box(*x);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_case_runs_and_baselines_are_nominal() {
        for (i, case) in COST_CASES.iter().enumerate() {
            let base = &COST_CASES[case.baseline];
            assert!(base.is_nominal(case.baseline), "{}", case.name);
            assert_eq!(base.kernel, case.kernel, "{}", case.name);
            let out = run_case(case, 50, &mut NoMeter);
            assert!(out.is_ok(), "{} ({i}): {out:?}", case.name);
        }
    }
}
