//! The samplers: one [`SamplerKind`] per sampler, stating its registry entry and building its
//! kernels from its parameters, and the list of them ([`SAMPLERS`]).
//!
//! This is the one place that names a sampler: a new one is its kernel, a kind here (and one
//! word in the list at the bottom), its tests and a README row.

use langevin_core::baselines::{
    Gibbs, Gwg, HammingBall, LocallyBalanced, TunedRandomWalk, ball_size,
};
use langevin_core::binary::{self, FlipProposal, LatticeDmala, LatticeProposal};
use langevin_core::categorical::{self, CategoricalProposal};
use langevin_core::dlmc::{
    CategoricalDlmcProposal, DLMC_TARGET_ACCEPTANCE, DlmcProposal, Solver, TunedDlmc,
};
use langevin_core::ordinal::{self, OrdinalProposal};
use langevin_core::tuning::{
    AbSettings, AbTuner, AcceptanceSettings, AcceptanceTuner, AcsSettings, AcsTuner,
};
use langevin_core::{Binary, Categorical, Eval, Ordinal, ParamError};

use super::{
    Adapt, Domain, Driver, LangevinStep, Param, RunShape, Sampler, SamplerEntry, SamplerKind,
    SamplerParams, SamplerPlan,
};
use crate::ab2::Ab2Settings;
use crate::kernels::{
    BoxedKernel, Boxing, Grown, LatticeAb, LatticeAcs, PathSampler, Stateless, Sweep,
    TabulatedLattice, boxed,
};
use crate::models::BinaryModel;
use crate::run::ReplicaPlan;

/// The acceptance rate the random walk's flip rate is tuned toward (the classic optimum for
/// high-dimensional random walks).
pub const RWM_TARGET_ACCEPTANCE: f64 = 0.234;

/// The fraction of a run (burn-in and kept steps) ACS may spend tuning.
pub const ACS_BUDGET_FRACTION: f64 = 0.1;

/// What `block-gibbs` on a model that is not an RBM says.
pub const BLOCK_GIBBS_NEEDS_RBM: &str =
    "sampler block-gibbs applies to RBM models only (kind \"rbm\"); use gibbs, lb or dmala";

/// The ordinal proposal of DULA and DMALA, windowed where a window is given.
fn ordinal_proposal(p: &SamplerParams) -> Result<OrdinalProposal<'static>, ParamError> {
    let proposal = OrdinalProposal::new(p.step, p.balance)?;
    match p.window {
        Some(w) => proposal.windowed(w),
        None => Ok(proposal),
    }
}

/// The settings of the fixed-step discrete Langevin samplers.
fn langevin_step(p: &SamplerParams, adjusted: bool) -> LangevinStep {
    LangevinStep {
        step: p.step,
        balance: p.balance,
        window: p.window,
        adjusted,
    }
}

/// Discrete unadjusted Langevin.
pub(crate) struct Dula;

impl SamplerKind for Dula {
    const NAME: &'static str = "dula";
    const DOMAINS: &'static [Domain] = &Domain::ALL;
    const PARAMS: &'static [Param] = &[Param::Step, Param::Balance, Param::Window];
    const DESCRIPTION: &'static str =
        "Discrete unadjusted Langevin (no Metropolis test; biased for step > 0)";
    const DEMO: &'static [Option<f64>] = &[Some(0.2)];

    fn binary<B: Boxing<Binary>>(
        p: &SamplerParams,
        _: &RunShape,
        _: Option<&BinaryModel>,
    ) -> Result<B::Kernel, ParamError> {
        let proposal = FlipProposal::with_math(p.step, p.balance)?;
        Ok(B::boxed(
            Self::NAME,
            binary::Dula::<'static, crate::FlipMathImpl>::new(proposal),
        ))
    }
    fn ordinal<T: Eval<Ordinal> + ?Sized>(
        p: &SamplerParams,
        _: &RunShape,
    ) -> Result<Option<BoxedKernel<Ordinal, T>>, ParamError> {
        let kernel = ordinal::Dula::new(ordinal_proposal(p)?);
        Ok(Some(boxed(Self::NAME, kernel)))
    }
    fn categorical<T: Eval<Categorical> + ?Sized>(
        p: &SamplerParams,
        _: &RunShape,
    ) -> Result<Option<BoxedKernel<Categorical, T>>, ParamError> {
        let kernel = categorical::Dula::new(CategoricalProposal::new(p.step, p.balance)?);
        Ok(Some(boxed(Self::NAME, kernel)))
    }
    fn step_balance(p: &SamplerParams) -> Option<(f64, f64)> {
        Some((p.step, p.balance))
    }
    fn langevin_step(p: &SamplerParams) -> Option<LangevinStep> {
        Some(langevin_step(p, false))
    }
}

/// Discrete Metropolis-adjusted Langevin: a fixed step, or (`--adapt acceptance`) a step
/// tuned toward an acceptance rate during burn-in.
pub(crate) struct Dmala;

/// The name a step-tuned DMALA reports.
const DMALA_ACCEPTANCE: &str = "dmala (acceptance-targeting step)";

impl SamplerKind for Dmala {
    const NAME: &'static str = "dmala";
    const DOMAINS: &'static [Domain] = &Domain::ALL;
    const PARAMS: &'static [Param] = &[
        Param::Step,
        Param::Balance,
        Param::Window,
        Param::Adapt,
        Param::TargetAcceptance,
    ];
    const DESCRIPTION: &'static str = "Discrete Metropolis-adjusted Langevin (exact); without `--step` and `--balance`, `sample` tunes its step toward acceptance 0.574 during burn-in (`--adapt acceptance`); a given `--step` is fixed";
    const DEMO: &'static [Option<f64>] = &[Some(0.1), Some(0.2)];

    fn binary<B: Boxing<Binary>>(
        p: &SamplerParams,
        shape: &RunShape,
        model: Option<&BinaryModel>,
    ) -> Result<B::Kernel, ParamError> {
        if p.adapt.is_some() {
            let tuner = acceptance_tuner(p.target_acceptance, shape.burn_in, None)?;
            return Ok(B::boxed(DMALA_ACCEPTANCE, tuner));
        }
        Ok(match model {
            Some(BinaryModel::Lattice(lattice)) => B::boxed(
                "dmala (tabulated lattice kernel)",
                TabulatedLattice::new(
                    LatticeDmala::new(LatticeProposal::new(lattice, p.step, p.balance)?),
                    lattice.dim(),
                ),
            ),
            _ => B::boxed(
                Self::NAME,
                binary::Dmala::<'static, crate::FlipMathImpl>::new(FlipProposal::with_math(
                    p.step, p.balance,
                )?),
            ),
        })
    }
    fn ordinal<T: Eval<Ordinal> + ?Sized>(
        p: &SamplerParams,
        shape: &RunShape,
    ) -> Result<Option<BoxedKernel<Ordinal, T>>, ParamError> {
        Ok(Some(match p.adapt {
            Some(Adapt::Acceptance) => boxed(
                DMALA_ACCEPTANCE,
                acceptance_tuner(p.target_acceptance, shape.burn_in, p.window)?,
            ),
            None => boxed(Self::NAME, ordinal::Dmala::new(ordinal_proposal(p)?)),
        }))
    }
    fn categorical<T: Eval<Categorical> + ?Sized>(
        p: &SamplerParams,
        shape: &RunShape,
    ) -> Result<Option<BoxedKernel<Categorical, T>>, ParamError> {
        Ok(Some(match p.adapt {
            Some(Adapt::Acceptance) => boxed(
                DMALA_ACCEPTANCE,
                acceptance_tuner(p.target_acceptance, shape.burn_in, None)?,
            ),
            None => boxed(
                Self::NAME,
                categorical::Dmala::new(CategoricalProposal::new(p.step, p.balance)?),
            ),
        }))
    }
    fn is_tuned(p: &SamplerParams) -> bool {
        p.adapt.is_some()
    }
    fn step_balance(p: &SamplerParams) -> Option<(f64, f64)> {
        p.adapt.is_none().then_some((p.step, p.balance))
    }
    fn langevin_step(p: &SamplerParams) -> Option<LangevinStep> {
        p.adapt.is_none().then(|| langevin_step(p, true))
    }
}

/// Single-site Gibbs; one step is one sweep of `d` updates (systematic: sites `0..d` in order;
/// random: `d` uniformly drawn sites). Each site update counts as one target evaluation (on
/// label models, `S − 1`, one per other value).
pub(crate) struct SingleSiteGibbs;

impl SamplerKind for SingleSiteGibbs {
    const NAME: &'static str = "gibbs";
    const DOMAINS: &'static [Domain] = &Domain::ALL;
    const PARAMS: &'static [Param] = &[Param::Scan];
    const DESCRIPTION: &'static str = "Single-site Gibbs; one step is a sweep of d site updates";
    const DEMO: &'static [Option<f64>] = &[None];
    // It flips one unit at a time from `W`'s columns.
    const READS_RBM_TRANSPOSE: bool = false;

    /// The kernel path of binary models without a single-site fast path; label models run
    /// Gibbs on their conditional.
    fn binary<B: Boxing<Binary>>(
        p: &SamplerParams,
        _: &RunShape,
        _: Option<&BinaryModel>,
    ) -> Result<B::Kernel, ParamError> {
        Ok(B::boxed(Self::NAME, Sweep(Gibbs::new(p.scan))))
    }
    fn driver(p: &SamplerParams, _: Domain, _: u64) -> Result<Driver, ParamError> {
        Ok(Driver::Gibbs(p.scan))
    }
}

/// Gibbs-with-gradients, one change per step.
pub(crate) struct GibbsWithGradients;

impl SamplerKind for GibbsWithGradients {
    const NAME: &'static str = "gwg";
    const DOMAINS: &'static [Domain] = &[Domain::Binary, Domain::Categorical];
    const PARAMS: &'static [Param] = &[];
    const DESCRIPTION: &'static str =
        "Gibbs-with-gradients: one change per step, picked by the gradient";
    const DEMO: &'static [Option<f64>] = &[None];

    fn binary<B: Boxing<Binary>>(
        _: &SamplerParams,
        _: &RunShape,
        _: Option<&BinaryModel>,
    ) -> Result<B::Kernel, ParamError> {
        Ok(B::boxed(Self::NAME, Stateless(Gwg)))
    }
    fn categorical<T: Eval<Categorical> + ?Sized>(
        _: &SamplerParams,
        _: &RunShape,
    ) -> Result<Option<BoxedKernel<Categorical, T>>, ParamError> {
        Ok(Some(boxed(Self::NAME, Stateless(Gwg))))
    }
}

/// Random-walk Metropolis with independent flips; the flip rate starts at `rate` (default
/// `1/d`) and follows a Robbins–Monro recursion toward acceptance [`RWM_TARGET_ACCEPTANCE`]
/// for the whole burn-in.
pub(crate) struct RandomWalk;

impl SamplerKind for RandomWalk {
    const NAME: &'static str = "rwm";
    const DOMAINS: &'static [Domain] = &[Domain::Binary];
    const PARAMS: &'static [Param] = &[Param::Rate];
    const DESCRIPTION: &'static str =
        "Random-walk Metropolis, flip rate tuned toward acceptance 0.234 during burn-in";
    const DEMO: &'static [Option<f64>] = &[None];

    fn binary<B: Boxing<Binary>>(
        p: &SamplerParams,
        shape: &RunShape,
        _: Option<&BinaryModel>,
    ) -> Result<B::Kernel, ParamError> {
        if let Some(rate) = p.rate
            && !(rate > 0.0 && rate < 1.0)
        {
            return Err(ParamError::OutOfRange {
                name: "flip rate",
                value: rate,
            });
        }
        let initial = p.rate.unwrap_or(1.0 / shape.dim.max(2) as f64);
        let kernel = TunedRandomWalk::new(initial, shape.burn_in, RWM_TARGET_ACCEPTANCE)?;
        Ok(B::boxed(Self::NAME, kernel))
    }
    fn is_tuned(_: &SamplerParams) -> bool {
        true
    }
}

/// The any-scale balanced sampler (first order): [`AbTuner`] from `(step, balance)` with the
/// burn-in as its budget; with the balance kept, DMALA with its step tuned by the same
/// jump-distance rule.
pub(crate) struct AnyScaleBalanced;

impl AnyScaleBalanced {
    fn tuner(p: &SamplerParams, budget: u64, window: Option<u16>) -> Result<AbTuner, ParamError> {
        let mut s = AbSettings::default();
        s.step = p.step;
        s.balance = p.balance;
        s.budget = budget;
        s.window = window;
        s.tune_balance = p.tune_balance;
        AbTuner::new(s)
    }
}

impl SamplerKind for AnyScaleBalanced {
    const NAME: &'static str = "ab";
    const DOMAINS: &'static [Domain] = &Domain::ALL;
    const PARAMS: &'static [Param] = &[
        Param::Step,
        Param::Balance,
        Param::TuneBalance,
        Param::Window,
    ];
    const DESCRIPTION: &'static str =
        "Any-scale balanced sampler: step and balance tuned during burn-in, then fixed";
    const DEMO: &'static [Option<f64>] = &[Some(0.1)];

    fn binary<B: Boxing<Binary>>(
        p: &SamplerParams,
        shape: &RunShape,
        model: Option<&BinaryModel>,
    ) -> Result<B::Kernel, ParamError> {
        let tuner = Self::tuner(p, shape.burn_in, None)?;
        Ok(match model {
            // The tabulated lattice kernel, stepped at the tuner's parameters.
            Some(BinaryModel::Lattice(lattice)) => B::boxed(
                "ab (tabulated lattice kernel)",
                LatticeAb::new(tuner, lattice)?,
            ),
            _ => B::boxed(Self::NAME, tuner),
        })
    }
    fn ordinal<T: Eval<Ordinal> + ?Sized>(
        p: &SamplerParams,
        shape: &RunShape,
    ) -> Result<Option<BoxedKernel<Ordinal, T>>, ParamError> {
        let tuner = Self::tuner(p, shape.burn_in, p.window)?;
        Ok(Some(boxed(Self::NAME, tuner)))
    }
    fn categorical<T: Eval<Categorical> + ?Sized>(
        p: &SamplerParams,
        shape: &RunShape,
    ) -> Result<Option<BoxedKernel<Categorical, T>>, ParamError> {
        let tuner = Self::tuner(p, shape.burn_in, None)?;
        Ok(Some(boxed(Self::NAME, tuner)))
    }
    fn is_tuned(_: &SamplerParams) -> bool {
        true
    }
    fn step_balance(p: &SamplerParams) -> Option<(f64, f64)> {
        Some((p.step, p.balance))
    }
}

/// The any-scale balanced sampler, second order: a schedule of its own, run by the AB-2
/// runners; its first phase is [`AnyScaleBalanced`].
pub(crate) struct SecondOrderBalanced;

impl SecondOrderBalanced {
    /// The schedule the parameters ask for.
    fn settings(p: &SamplerParams) -> Ab2Settings {
        let mut settings = Ab2Settings::default();
        settings.first.step = p.step;
        settings.first.balance = p.balance;
        settings.first.window = p.window;
        settings.diagonal = p.diagonal;
        settings.first.budget = p.ab2_tune;
        settings.second_budget = p.ab2_tune;
        settings
    }
}

impl SamplerKind for SecondOrderBalanced {
    const NAME: &'static str = "ab2";
    const DOMAINS: &'static [Domain] = &[Domain::Binary, Domain::Ordinal];
    const PARAMS: &'static [Param] = &[
        Param::Step,
        Param::Balance,
        Param::Diagonal,
        Param::Ab2Tune,
        Param::Window,
    ];
    const DESCRIPTION: &'static str = "Any-scale balanced, second order: first-order tuning, a fitted quadratic W, a diagonal D, then the Gaussian-integral-trick kernel with (a, b) tuned again; the tuning phases come before the burn-in";

    /// The first phase's kernel.
    fn binary<B: Boxing<Binary>>(
        p: &SamplerParams,
        shape: &RunShape,
        model: Option<&BinaryModel>,
    ) -> Result<B::Kernel, ParamError> {
        AnyScaleBalanced::binary::<B>(p, shape, model)
    }
    fn ordinal<T: Eval<Ordinal> + ?Sized>(
        p: &SamplerParams,
        shape: &RunShape,
    ) -> Result<Option<BoxedKernel<Ordinal, T>>, ParamError> {
        AnyScaleBalanced::ordinal(p, shape)
    }
    fn is_tuned(_: &SamplerParams) -> bool {
        true
    }
    fn step_balance(p: &SamplerParams) -> Option<(f64, f64)> {
        Some((p.step, p.balance))
    }
    fn plan(sampler: Sampler) -> SamplerPlan {
        SamplerPlan::Ab2(Self::settings(sampler.params()))
    }
}

/// The first phase of AB-2's schedule, as the first-order sampler.
pub(crate) fn first_phase(settings: &Ab2Settings) -> Sampler {
    let params = SamplerParams {
        step: settings.first.step,
        balance: settings.first.balance,
        window: settings.first.window,
        ..SamplerParams::DEFAULT
    };
    Sampler::new(&AnyScaleBalanced::ENTRY, params)
}

/// Automatic cyclical scheduling: [`AcsTuner`] with the budget [`ACS_BUDGET_FRACTION`] of
/// burn-in plus kept steps; its tuning is taken first, and the burn-in is extended to cover
/// it when it is shorter. The kept draws come from one fixed cyclical schedule.
pub(crate) struct CyclicalSchedule;

impl CyclicalSchedule {
    fn tuner(
        p: &SamplerParams,
        shape: &RunShape,
        window: Option<u16>,
    ) -> Result<AcsTuner, ParamError> {
        let mut s = AcsSettings::default();
        s.a_ceil = p.a_ceil;
        s.fixed_steps = p.fixed_steps();
        s.total_steps = shape.burn_in.saturating_add(shape.steps);
        s.budget_fraction = ACS_BUDGET_FRACTION;
        s.window = window;
        AcsTuner::new(s)
    }
}

impl SamplerKind for CyclicalSchedule {
    const NAME: &'static str = "acs";
    const DOMAINS: &'static [Domain] = &Domain::ALL;
    const PARAMS: &'static [Param] = &[Param::ACeil, Param::AMax, Param::AMin, Param::Window];
    const DESCRIPTION: &'static str =
        "Automatic cyclical scheduling: tuned within 10% of the run, then a fixed cycle";
    const DEMO: &'static [Option<f64>] = &[None];

    fn binary<B: Boxing<Binary>>(
        p: &SamplerParams,
        shape: &RunShape,
        model: Option<&BinaryModel>,
    ) -> Result<B::Kernel, ParamError> {
        let tuner = Self::tuner(p, shape, None)?;
        Ok(match model {
            Some(BinaryModel::Lattice(lattice)) => B::boxed(
                "acs (tabulated lattice kernel)",
                LatticeAcs::new(tuner, lattice)?,
            ),
            _ => B::boxed(Self::NAME, tuner),
        })
    }
    fn ordinal<T: Eval<Ordinal> + ?Sized>(
        p: &SamplerParams,
        shape: &RunShape,
    ) -> Result<Option<BoxedKernel<Ordinal, T>>, ParamError> {
        Ok(Some(boxed(Self::NAME, Self::tuner(p, shape, p.window)?)))
    }
    fn categorical<T: Eval<Categorical> + ?Sized>(
        p: &SamplerParams,
        shape: &RunShape,
    ) -> Result<Option<BoxedKernel<Categorical, T>>, ParamError> {
        Ok(Some(boxed(Self::NAME, Self::tuner(p, shape, None)?)))
    }
    fn is_tuned(_: &SamplerParams) -> bool {
        true
    }
    fn min_burn_in(_: &SamplerParams, burn_in: u64, steps: u64) -> u64 {
        burn_in.max((burn_in.saturating_add(steps) as f64 * ACS_BUDGET_FRACTION) as u64)
    }
}

/// The locally balanced informed proposal, one change per step.
pub(crate) struct LocallyBalancedProposal;

impl SamplerKind for LocallyBalancedProposal {
    const NAME: &'static str = "lb";
    const DOMAINS: &'static [Domain] = &[Domain::Binary, Domain::Categorical];
    const PARAMS: &'static [Param] = &[Param::Balancing];
    const DESCRIPTION: &'static str = "Locally balanced informed proposal: one change per step, picked by exact differences, Metropolis-adjusted";

    fn binary<B: Boxing<Binary>>(
        p: &SamplerParams,
        shape: &RunShape,
        _: Option<&BinaryModel>,
    ) -> Result<B::Kernel, ParamError> {
        let kernel = LocallyBalanced::new(p.balancing, vec![0.0; shape.dim]);
        Ok(B::boxed(Self::NAME, Grown(kernel)))
    }
    fn categorical<T: Eval<Categorical> + ?Sized>(
        p: &SamplerParams,
        _: &RunShape,
    ) -> Result<Option<BoxedKernel<Categorical, T>>, ParamError> {
        let kernel = LocallyBalanced::new(p.balancing, Vec::new());
        Ok(Some(boxed(Self::NAME, Grown(kernel))))
    }
}

/// The Hamming-ball block sampler; one step updates one block.
pub(crate) struct HammingBallBlocks;

impl SamplerKind for HammingBallBlocks {
    const NAME: &'static str = "hamming-ball";
    const DOMAINS: &'static [Domain] = &[Domain::Binary];
    const PARAMS: &'static [Param] = &[Param::Radius, Param::Block];
    const DESCRIPTION: &'static str = "Hamming-ball block sampler: each step redraws one block from π restricted to a ball of radius r around a random auxiliary point; no rejection";

    fn binary<B: Boxing<Binary>>(
        p: &SamplerParams,
        _: &RunShape,
        _: Option<&BinaryModel>,
    ) -> Result<B::Kernel, ParamError> {
        // Sized for a valid (radius, block); `new` refuses the others.
        let len = ball_size(p.block.min(64), p.radius.min(4));
        let kernel = HammingBall::new(p.radius, p.block, vec![0.0; len])?;
        Ok(B::boxed(Self::NAME, kernel))
    }
}

/// Alternating block Gibbs on an RBM's joint (RBM models only); one step is one
/// hidden-then-visible sweep.
pub(crate) struct RbmBlockGibbs;

impl SamplerKind for RbmBlockGibbs {
    const NAME: &'static str = "block-gibbs";
    const DOMAINS: &'static [Domain] = &[Domain::Binary];
    const PARAMS: &'static [Param] = &[];
    const DESCRIPTION: &'static str = "RBM models only: alternating block Gibbs on the joint (hidden given visible, then visible given hidden); reports the visible units";
    // It samples the joint from `W`.
    const READS_RBM_TRANSPOSE: bool = false;

    fn binary<B: Boxing<Binary>>(
        _: &SamplerParams,
        _: &RunShape,
        _: Option<&BinaryModel>,
    ) -> Result<B::Kernel, ParamError> {
        Err(ParamError::Unsupported(BLOCK_GIBBS_NEEDS_RBM))
    }
    fn driver(_: &SamplerParams, _: Domain, _: u64) -> Result<Driver, ParamError> {
        Ok(Driver::RbmBlocks)
    }
}

/// The path auxiliary sampler.
pub(crate) struct PathAuxiliary;

impl SamplerKind for PathAuxiliary {
    const NAME: &'static str = "pas";
    const DOMAINS: &'static [Domain] = &[Domain::Binary, Domain::Categorical];
    const PARAMS: &'static [Param] = &[Param::PathLength];
    const DESCRIPTION: &'static str = "Path auxiliary sampler: a path of gradient-picked moves per proposal, the path as auxiliary variable in the test";
    const DEMO: &'static [Option<f64>] = &[None];

    fn binary<B: Boxing<Binary>>(
        p: &SamplerParams,
        shape: &RunShape,
        _: Option<&BinaryModel>,
    ) -> Result<B::Kernel, ParamError> {
        let kernel = PathSampler::new(p.path_length, shape.dim, shape.burn_in)?;
        Ok(B::boxed(Self::NAME, kernel))
    }
    fn categorical<T: Eval<Categorical> + ?Sized>(
        p: &SamplerParams,
        shape: &RunShape,
    ) -> Result<Option<BoxedKernel<Categorical, T>>, ParamError> {
        let kernel = PathSampler::new(p.path_length, shape.dim, shape.burn_in)?;
        Ok(Some(boxed(Self::NAME, kernel)))
    }
    fn is_tuned(p: &SamplerParams) -> bool {
        p.path_length.is_none()
    }
}

/// Discrete Langevin Monte Carlo.
pub(crate) struct LangevinMonteCarlo;

impl SamplerKind for LangevinMonteCarlo {
    const NAME: &'static str = "dlmc";
    const DOMAINS: &'static [Domain] = &[Domain::Binary, Domain::Categorical];
    const PARAMS: &'static [Param] = &[Param::Time, Param::Solver];
    const DESCRIPTION: &'static str = "Discrete Langevin Monte Carlo: every coordinate runs its own gradient-informed continuous-time chain for a time τ, then a Metropolis test";
    const DEMO: &'static [Option<f64>] = &[None];

    fn binary<B: Boxing<Binary>>(
        p: &SamplerParams,
        shape: &RunShape,
        _: Option<&BinaryModel>,
    ) -> Result<B::Kernel, ParamError> {
        let solver = p.solver.unwrap_or(Solver::Interpolate);
        let proposal = DlmcProposal::new(solver, p.time.unwrap_or(1.0))?;
        Ok(match p.time {
            Some(_) => B::boxed(Self::NAME, langevin_core::kernel::Dmala::new(proposal)),
            None => B::boxed(
                Self::NAME,
                TunedDlmc::new(proposal, true, shape.burn_in, DLMC_TARGET_ACCEPTANCE)?,
            ),
        })
    }
    fn categorical<T: Eval<Categorical> + ?Sized>(
        p: &SamplerParams,
        shape: &RunShape,
    ) -> Result<Option<BoxedKernel<Categorical, T>>, ParamError> {
        if p.solver == Some(Solver::Interpolate) {
            return Err(ParamError::Unsupported(
                "the interpolate solver is exact for binary models only (the categorical chain has no closed form); use --solver euler",
            ));
        }
        let proposal = CategoricalDlmcProposal::new(p.time.unwrap_or(1.0))?;
        Ok(Some(match p.time {
            Some(_) => boxed(Self::NAME, langevin_core::kernel::Dmala::new(proposal)),
            None => boxed(
                Self::NAME,
                TunedDlmc::new(proposal, true, shape.burn_in, DLMC_TARGET_ACCEPTANCE)?,
            ),
        }))
    }
    fn is_tuned(p: &SamplerParams) -> bool {
        p.time.is_none()
    }
}

/// Replica exchange around acceptance-targeting DMALA, run by the chain runners, which draw
/// the cold replica's states; the ladder and steps are tuned during the burn-in.
pub(crate) struct ReplicaExchange;

impl SamplerKind for ReplicaExchange {
    const NAME: &'static str = "pt-dmala";
    const DOMAINS: &'static [Domain] = &Domain::ALL;
    const PARAMS: &'static [Param] = &[Param::Replicas, Param::TargetAcceptance, Param::Window];
    const DESCRIPTION: &'static str = "Replica exchange: DMALA at R temperatures, neighbours swapped, ladder and steps tuned during burn-in; the cold chain's draws";

    /// The cold replica's step kernel.
    fn binary<B: Boxing<Binary>>(
        p: &SamplerParams,
        shape: &RunShape,
        _: Option<&BinaryModel>,
    ) -> Result<B::Kernel, ParamError> {
        let tuner = acceptance_tuner(p.target_acceptance, shape.burn_in, None)?;
        Ok(B::boxed(DMALA_ACCEPTANCE, tuner))
    }
    fn driver(p: &SamplerParams, domain: Domain, burn_in: u64) -> Result<Driver, ParamError> {
        if p.replicas == 0 {
            return Err(ParamError::OutOfRange {
                name: "replicas",
                value: 0.0,
            });
        }
        let mut settings = langevin_core::tempering::LadderSettings::default();
        settings.budget = burn_in;
        settings.target_acceptance = p.target_acceptance;
        settings.window = p.window.filter(|_| domain != Domain::Binary);
        settings.validate()?;
        Ok(Driver::Replicas(ReplicaPlan {
            replicas: p.replicas,
            settings,
        }))
    }
    fn is_tuned(_: &SamplerParams) -> bool {
        true
    }
}

/// A fresh acceptance-targeting DMALA tuner: the benchmark suite's rule toward
/// `target_acceptance`, tuning for `budget` steps.
fn acceptance_tuner(
    target_acceptance: f64,
    budget: u64,
    window: Option<u16>,
) -> Result<AcceptanceTuner<crate::FlipMathImpl>, ParamError> {
    let mut s = AcceptanceSettings::default();
    s.target_acceptance = target_acceptance;
    s.budget = budget;
    s.window = window;
    AcceptanceTuner::with_math(s)
}

/// The list: [`SAMPLERS`] in this order, and the kinds an entry dispatches to.
macro_rules! registry {
    ($($kind:ident),* $(,)?) => {
        /// Which sampler an entry is.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub(crate) enum Kind {
            $($kind,)*
        }

        $(impl $kind {
            /// The registry entry.
            pub(crate) const ENTRY: SamplerEntry = SamplerEntry::of::<$kind>(Kind::$kind);
        })*

        /// Every sampler of discrete models, in the order the command line lists them.
        pub static SAMPLERS: &[SamplerEntry] = &[$($kind::ENTRY,)*];

        impl Kind {
            /// `visitor` called with the sampler of this kind.
            pub(crate) fn visit<V: super::Visitor>(self, visitor: V) -> V::Output {
                match self {
                    $(Kind::$kind => visitor.visit::<$kind>(),)*
                }
            }
        }
    };
}

registry![
    Dula,
    Dmala,
    SingleSiteGibbs,
    GibbsWithGradients,
    RandomWalk,
    AnyScaleBalanced,
    SecondOrderBalanced,
    CyclicalSchedule,
    LocallyBalancedProposal,
    HammingBallBlocks,
    RbmBlockGibbs,
    PathAuxiliary,
    LangevinMonteCarlo,
    ReplicaExchange,
];

#[cfg(test)]
mod tests {
    use super::*;
    use langevin_core::baselines::Scan;

    #[test]
    fn scan_is_what_gibbs_sweeps_in() {
        let p = SamplerParams {
            scan: Scan::Random,
            ..SamplerParams::DEFAULT
        };
        assert!(matches!(
            SingleSiteGibbs::driver(&p, Domain::Binary, 0),
            Ok(Driver::Gibbs(Scan::Random))
        ));
    }
}
