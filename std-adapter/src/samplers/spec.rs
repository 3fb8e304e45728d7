//! What a run steps: a sampler and its parameters ([`SamplerSpec`], for every domain), and the
//! kernel each builds on binary, ordinal and categorical models.

use langevin_core::ParamError;
use langevin_core::baselines::{
    Balancing, Gibbs, Gwg, HammingBall, LocallyBalanced, Scan, TunedRandomWalk, ball_size,
};
use langevin_core::binary::{Dmala, Dula, FlipProposal, LatticeDmala, LatticeProposal};
use langevin_core::tuning::{
    AbSettings, AbTuner, AcceptanceSettings, AcceptanceTuner, AcsReport, AcsSettings, AcsTuner,
    ScaledDmala,
};
use langevin_core::{Binary, Categorical, Eval, Ordinal};
use serde_json::{Value, json};

use super::Domain;
use crate::kernels::{
    BoxedKernel, Boxing, ForModels, Grown, LatticeAb, LatticeAcs, PathSampler, Stateless, Sweep,
    TabulatedLattice, boxed,
};
use crate::models::{BinaryModel, OrdinalModel, Potts};
use langevin_core::categorical::{self, CategoricalProposal};
use langevin_core::dlmc::{
    CategoricalDlmcProposal, DLMC_TARGET_ACCEPTANCE, DlmcProposal, Solver, TunedDlmc,
};
use langevin_core::ordinal::{self, OrdinalProposal};

/// The acceptance rate the random walk's flip rate is tuned toward (the classic optimum for
/// high-dimensional random walks).
pub const RWM_TARGET_ACCEPTANCE: f64 = 0.234;

/// The fraction of a run (burn-in and kept steps) ACS may spend tuning.
pub const ACS_BUDGET_FRACTION: f64 = 0.1;

/// A sampler and its parameters, as chosen on the command line, for models of every domain.
///
/// Which samplers apply to which domain is the registry's to say
/// ([`SAMPLERS`](super::SAMPLERS)). The ordinal window `|x'_i − x_i| ≤ w` applies to the
/// ordinal proposals (DULA, DMALA, AB, ACS and the acceptance-targeting DMALA); the kernels of
/// the other domains do not read it, and the registry refuses a window on their models.
///
/// # Steps
///
/// One step of every sampler but Gibbs is one proposal (and its test). One **Gibbs** step is a
/// whole sweep of `d` single-site updates (systematic: sites `0..d` in order; random: `d`
/// uniformly drawn sites), so that a step touches every coordinate once on average, as a
/// DULA/DMALA step does, and per-step costs and kept draws compare across samplers. Each site
/// update counts as one target evaluation (it prices one flip; on label models, `S − 1`
/// evaluations, one per other value), so a sweep costs `d` (or `d (S − 1)`).
///
/// # Tuned samplers
///
/// Tuning happens during the burn-in, and the kernel is fixed afterwards, so every kept draw
/// comes from one exact, time-homogeneous kernel (ACS: one fixed cyclical schedule):
///
/// * **rwm**: the flip rate starts at `rate` (default `1/d`) and follows a Robbins–Monro
///   recursion toward acceptance [`RWM_TARGET_ACCEPTANCE`] for the whole burn-in;
/// * **ab**: [`AbTuner`] from `(step, balance)` with the burn-in as its budget;
/// * **acs**: [`AcsTuner`] with the budget [`ACS_BUDGET_FRACTION`] of burn-in plus kept steps;
///   its tuning is taken first, and the burn-in is extended to cover it when it is shorter;
/// * **dmala --adapt acceptance**: [`AcceptanceTuner`] with the burn-in as its budget.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum SamplerSpec {
    /// Discrete unadjusted Langevin.
    Dula {
        /// Step `a`.
        step: f64,
        /// Balance `b`.
        balance: f64,
        /// Ordinal window.
        window: Option<u16>,
    },
    /// Discrete Metropolis-adjusted Langevin.
    Dmala {
        /// Step `a`.
        step: f64,
        /// Balance `b`.
        balance: f64,
        /// Ordinal window.
        window: Option<u16>,
    },
    /// Single-site Gibbs; one step is one sweep of `d` updates.
    Gibbs {
        /// Site order.
        scan: Scan,
    },
    /// Gibbs-with-gradients, one change per step.
    Gwg,
    /// Random-walk Metropolis with independent flips, rate tuned during burn-in.
    Rwm {
        /// Initial flip rate (`None`: `1/d`).
        rate: Option<f64>,
    },
    /// The any-scale balanced sampler (first order), `(a, b)` tuned during burn-in.
    Ab {
        /// Initial step `a`.
        step: f64,
        /// Initial balance `b`.
        balance: f64,
        /// Whether the balance is tuned too; `false` keeps `b` (at `½`: DMALA with its step
        /// tuned by the same jump-distance rule).
        tune_balance: bool,
        /// Ordinal window.
        window: Option<u16>,
    },
    /// Automatic cyclical scheduling.
    Acs {
        /// Where the search for the largest step starts.
        a_ceil: f64,
        /// `(a_max, a_min)` to use instead of searching for them.
        fixed_steps: Option<(f64, f64)>,
        /// Ordinal window.
        window: Option<u16>,
    },
    /// DMALA with its step, as an expected number of changes, tuned toward an acceptance rate
    /// during burn-in.
    DmalaAcceptance {
        /// The acceptance rate tuned toward.
        target_acceptance: f64,
        /// Ordinal window.
        window: Option<u16>,
    },
    /// Replica exchange around acceptance-targeting DMALA; run by the chain runners, which
    /// draw the cold replica's states.
    PtDmala {
        /// Replicas `R ≥ 1`.
        replicas: usize,
        /// The acceptance rate each replica's step is tuned toward.
        target_acceptance: f64,
        /// Ordinal window.
        window: Option<u16>,
    },
    /// The locally balanced informed proposal, one change per step.
    Lb {
        /// The balancing function.
        balancing: Balancing,
    },
    /// The Hamming-ball block sampler; one step updates one block.
    HammingBall {
        /// The radius `r`.
        radius: usize,
        /// The block length `k`.
        block: usize,
    },
    /// Alternating block Gibbs on an RBM's joint (RBM models only); one step is one
    /// hidden-then-visible sweep.
    BlockGibbs,
    /// The path auxiliary sampler.
    Pas {
        /// Moves per path (`None`: adapted during burn-in, from 1 up to `d`).
        path_length: Option<usize>,
    },
    /// Discrete Langevin Monte Carlo.
    Dlmc {
        /// Time `τ` (`None`: adapted during burn-in).
        time: Option<f64>,
        /// Solver (`None`: interpolate on binary models, Euler on categorical ones).
        solver: Option<Solver>,
    },
}

/// What `block-gibbs` on a model that is not an RBM says.
pub const BLOCK_GIBBS_NEEDS_RBM: &str =
    "sampler block-gibbs applies to RBM models only (kind \"rbm\"); use gibbs, lb or dmala";

/// The run a kernel is made for: tuned samplers size their tuning from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunShape {
    /// The dimension `d`.
    pub dim: usize,
    /// Burn-in steps.
    pub burn_in: u64,
    /// Kept-phase steps.
    pub steps: u64,
}

impl Default for RunShape {
    /// A nominal run: `d = 100`, 1,000 burn-in and 10,000 kept steps.
    fn default() -> Self {
        Self {
            dim: 100,
            burn_in: 1_000,
            steps: 10_000,
        }
    }
}

impl SamplerSpec {
    /// Whether the sampler's chains read an RBM's `Wᵀ` (see
    /// [`BinaryModel::rbm_transpose`](crate::models::BinaryModel::rbm_transpose)): every sampler that moves through the model's target
    /// does; block Gibbs (which samples the joint from `W`) and Gibbs (which flips one unit at a
    /// time from `W`'s columns) do not.
    pub fn reads_rbm_transpose(&self) -> bool {
        !matches!(self, Self::BlockGibbs | Self::Gibbs { .. })
    }

    /// The sampler's name as the command line spells it.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Dula { .. } => "dula",
            Self::Dmala { .. } => "dmala",
            Self::Gibbs { .. } => "gibbs",
            Self::Gwg => "gwg",
            Self::Rwm { .. } => "rwm",
            Self::Ab { .. } => "ab",
            Self::Acs { .. } => "acs",
            Self::DmalaAcceptance { .. } => "dmala",
            Self::PtDmala { .. } => "pt-dmala",
            Self::Lb { .. } => "lb",
            Self::HammingBall { .. } => "hamming-ball",
            Self::BlockGibbs => "block-gibbs",
            Self::Pas { .. } => "pas",
            Self::Dlmc { .. } => "dlmc",
        }
    }

    /// `(step, balance)` where the sampler has them (AB: the initial ones); NaN for Gibbs,
    /// GWG, RWM and ACS (written as `null` in JSON).
    pub fn step_balance(&self) -> (f64, f64) {
        match *self {
            Self::Dula { step, balance, .. }
            | Self::Dmala { step, balance, .. }
            | Self::Ab { step, balance, .. } => (step, balance),
            _ => (f64::NAN, f64::NAN),
        }
    }

    /// The ordinal window, if any.
    pub fn window(&self) -> Option<u16> {
        match *self {
            Self::Dula { window, .. }
            | Self::Dmala { window, .. }
            | Self::Ab { window, .. }
            | Self::Acs { window, .. }
            | Self::DmalaAcceptance { window, .. }
            | Self::PtDmala { window, .. } => window,
            _ => None,
        }
    }

    /// Whether the sampler adapts its parameters during the burn-in.
    pub fn is_tuned(&self) -> bool {
        matches!(
            self,
            Self::Rwm { .. }
                | Self::Ab { .. }
                | Self::Acs { .. }
                | Self::Pas { path_length: None }
                | Self::Dlmc { time: None, .. }
                | Self::DmalaAcceptance { .. }
                | Self::PtDmala { .. }
        )
    }

    /// A fresh kernel for one chain of a nominal run ([`RunShape::default`]).
    ///
    /// # Errors
    ///
    /// [`ParamError`] for invalid parameters.
    pub fn kernel<B: Boxing<Binary>>(&self) -> Result<B::Kernel, ParamError> {
        self.kernel_for::<B>(&RunShape::default())
    }

    /// Checks the parameters for a run of this shape (ACS: also that the run is long enough
    /// for its tuning plan) by building the kernel.
    ///
    /// # Errors
    ///
    /// As [`kernel_for`](Self::kernel_for).
    pub fn check(&self, shape: &RunShape) -> Result<(), ParamError> {
        self.kernel_for::<ForModels>(shape).map(|_| ())
    }

    /// A fresh kernel for one chain of a run of this shape on `model`: like
    /// [`kernel_for`](Self::kernel_for), but DMALA, AB and ACS on an Ising lattice use the
    /// tabulated lattice kernel.
    ///
    /// # Errors
    ///
    /// [`ParamError`] for invalid parameters (ACS: also a run too short for its tuning plan).
    pub fn kernel_for_model<B: Boxing<Binary>>(
        &self,
        model: &BinaryModel,
        shape: &RunShape,
    ) -> Result<B::Kernel, ParamError> {
        match (self, model) {
            (&Self::Dmala { step, balance, .. }, BinaryModel::Lattice(lattice)) => Ok(B::boxed(
                "dmala (tabulated lattice kernel)",
                TabulatedLattice::new(
                    LatticeDmala::new(LatticeProposal::new(lattice, step, balance)?),
                    lattice.dim(),
                ),
            )),
            // AB and ACS step the same tabulated kernel at their tuner's parameters.
            (
                &Self::Ab {
                    step,
                    balance,
                    tune_balance,
                    ..
                },
                BinaryModel::Lattice(lattice),
            ) => Ok(B::boxed(
                "ab (tabulated lattice kernel)",
                LatticeAb::new(
                    ab_tuner((step, balance), tune_balance, shape.burn_in, None)?,
                    lattice,
                )?,
            )),
            (
                &Self::Acs {
                    a_ceil,
                    fixed_steps,
                    ..
                },
                BinaryModel::Lattice(lattice),
            ) => Ok(B::boxed(
                "acs (tabulated lattice kernel)",
                LatticeAcs::new(acs_tuner(a_ceil, fixed_steps, shape, None)?, lattice)?,
            )),
            _ => self.kernel_for::<B>(shape),
        }
    }

    /// A fresh kernel for one chain of a run of this shape on a binary model, whatever the
    /// model (the window is for ordinal models: binary kernels do not read it).
    ///
    /// # Errors
    ///
    /// [`ParamError`] for invalid parameters (ACS: also a run too short for its tuning plan).
    pub fn kernel_for<B: Boxing<Binary>>(&self, shape: &RunShape) -> Result<B::Kernel, ParamError> {
        let name = self.name();
        Ok(match *self {
            Self::Dula { step, balance, .. } => B::boxed(
                name,
                Dula::<'static, crate::FlipMathImpl>::new(FlipProposal::with_math(step, balance)?),
            ),
            Self::Dmala { step, balance, .. } => B::boxed(
                name,
                Dmala::<'static, crate::FlipMathImpl>::new(FlipProposal::with_math(step, balance)?),
            ),
            Self::Gibbs { scan } => B::boxed(name, Sweep(Gibbs::new(scan))),
            Self::Gwg => B::boxed(name, Stateless(Gwg)),
            Self::Rwm { rate } => {
                if let Some(p) = rate
                    && !(p > 0.0 && p < 1.0)
                {
                    return Err(ParamError::OutOfRange {
                        name: "flip rate",
                        value: p,
                    });
                }
                let initial = rate.unwrap_or(1.0 / shape.dim.max(2) as f64);
                B::boxed(
                    name,
                    TunedRandomWalk::new(initial, shape.burn_in, RWM_TARGET_ACCEPTANCE)?,
                )
            }
            Self::Ab {
                step,
                balance,
                tune_balance,
                ..
            } => B::boxed(
                name,
                ab_tuner((step, balance), tune_balance, shape.burn_in, None)?,
            ),
            Self::Acs {
                a_ceil,
                fixed_steps,
                ..
            } => B::boxed(name, acs_tuner(a_ceil, fixed_steps, shape, None)?),
            Self::DmalaAcceptance {
                target_acceptance, ..
            } => B::boxed(
                "dmala (acceptance-targeting step)",
                acceptance_tuner(target_acceptance, shape.burn_in, None)?,
            ),
            // The replicas are run by `run_chains`; this is the cold replica's step kernel.
            Self::PtDmala {
                replicas,
                target_acceptance,
                ..
            } => {
                replica_plan(replicas, target_acceptance, shape.burn_in, None)?;
                B::boxed(
                    "dmala (acceptance-targeting step)",
                    acceptance_tuner(target_acceptance, shape.burn_in, None)?,
                )
            }
            Self::Lb { balancing } => B::boxed(
                name,
                Grown(LocallyBalanced::new(balancing, vec![0.0; shape.dim])),
            ),
            Self::HammingBall { radius, block } => {
                // Sized for a valid (radius, block); `new` refuses the others.
                let len = ball_size(block.min(64), radius.min(4));
                B::boxed(name, HammingBall::new(radius, block, vec![0.0; len])?)
            }
            Self::BlockGibbs => return Err(ParamError::Unsupported(BLOCK_GIBBS_NEEDS_RBM)),
            Self::Pas { path_length } => B::boxed(
                name,
                PathSampler::new(path_length, shape.dim, shape.burn_in)?,
            ),
            Self::Dlmc { time, solver } => {
                let solver = solver.unwrap_or(Solver::Interpolate);
                let proposal = DlmcProposal::new(solver, time.unwrap_or(1.0))?;
                match time {
                    Some(_) => B::boxed(name, langevin_core::kernel::Dmala::new(proposal)),
                    None => B::boxed(
                        name,
                        TunedDlmc::new(proposal, true, shape.burn_in, DLMC_TARGET_ACCEPTANCE)?,
                    ),
                }
            }
        })
    }
}

/// The kernels of ordinal and categorical models.
impl SamplerSpec {
    /// A fresh ordinal kernel for a run of this shape; `None` for Gibbs (which runs on the
    /// model's conditional) and the samplers without an ordinal kernel.
    ///
    /// # Errors
    ///
    /// [`ParamError`] for invalid parameters.
    pub(crate) fn ordinal_kernel<T: Eval<Ordinal> + ?Sized>(
        &self,
        shape: &RunShape,
    ) -> Result<Option<BoxedKernel<Ordinal, T>>, ParamError> {
        let name = self.name();
        let proposal = |step, balance, window: Option<u16>| {
            let p = OrdinalProposal::new(step, balance)?;
            match window {
                Some(w) => p.windowed(w),
                None => Ok(p),
            }
        };
        Ok(Some(match *self {
            Self::Dula {
                step,
                balance,
                window,
            } => boxed(name, ordinal::Dula::new(proposal(step, balance, window)?)),
            Self::Dmala {
                step,
                balance,
                window,
            } => boxed(name, ordinal::Dmala::new(proposal(step, balance, window)?)),
            Self::Ab {
                step,
                balance,
                tune_balance,
                window,
            } => boxed(
                name,
                ab_tuner((step, balance), tune_balance, shape.burn_in, window)?,
            ),
            Self::Acs {
                a_ceil,
                fixed_steps,
                window,
            } => boxed(name, acs_tuner(a_ceil, fixed_steps, shape, window)?),
            Self::PtDmala {
                replicas,
                target_acceptance,
                window,
            } => {
                replica_plan(replicas, target_acceptance, shape.burn_in, window)?;
                return Ok(None);
            }
            Self::DmalaAcceptance {
                target_acceptance,
                window,
            } => boxed(
                name,
                acceptance_tuner(target_acceptance, shape.burn_in, window)?,
            ),
            _ => return Ok(None),
        }))
    }

    /// A fresh categorical kernel for a run of this shape; `None` for Gibbs (which runs on the
    /// model's conditional) and the samplers without a categorical kernel.
    ///
    /// # Errors
    ///
    /// [`ParamError`] for invalid parameters.
    pub(crate) fn categorical_kernel<T: Eval<Categorical> + ?Sized>(
        &self,
        shape: &RunShape,
    ) -> Result<Option<BoxedKernel<Categorical, T>>, ParamError> {
        let name = self.name();
        Ok(Some(match *self {
            Self::Dula { step, balance, .. } => boxed(
                name,
                categorical::Dula::new(CategoricalProposal::new(step, balance)?),
            ),
            Self::Dmala { step, balance, .. } => boxed(
                name,
                categorical::Dmala::new(CategoricalProposal::new(step, balance)?),
            ),
            Self::Gwg => boxed(name, Stateless(Gwg)),
            Self::Ab {
                step,
                balance,
                tune_balance,
                ..
            } => boxed(
                name,
                ab_tuner((step, balance), tune_balance, shape.burn_in, None)?,
            ),
            Self::Acs {
                a_ceil,
                fixed_steps,
                ..
            } => boxed(name, acs_tuner(a_ceil, fixed_steps, shape, None)?),
            Self::PtDmala {
                replicas,
                target_acceptance,
                ..
            } => {
                replica_plan(replicas, target_acceptance, shape.burn_in, None)?;
                return Ok(None);
            }
            Self::DmalaAcceptance {
                target_acceptance, ..
            } => boxed(
                name,
                acceptance_tuner(target_acceptance, shape.burn_in, None)?,
            ),
            Self::Lb { balancing } => {
                boxed(name, Grown(LocallyBalanced::new(balancing, Vec::new())))
            }
            Self::Pas { path_length } => boxed(
                name,
                PathSampler::new(path_length, shape.dim, shape.burn_in)?,
            ),
            Self::Dlmc { time, solver } => {
                if solver == Some(Solver::Interpolate) {
                    return Err(ParamError::Unsupported(
                        "the interpolate solver is exact for binary models only (the categorical chain has no closed form); use --solver euler",
                    ));
                }
                let proposal = CategoricalDlmcProposal::new(time.unwrap_or(1.0))?;
                match time {
                    Some(_) => boxed(name, langevin_core::kernel::Dmala::new(proposal)),
                    None => boxed(
                        name,
                        TunedDlmc::new(proposal, true, shape.burn_in, DLMC_TARGET_ACCEPTANCE)?,
                    ),
                }
            }
            _ => return Ok(None),
        }))
    }

    /// Checks the parameters for a run of this shape on a model of this domain by building
    /// the domain's kernel (see [`check_domain`](Self::check_domain) for whether the sampler
    /// applies at all).
    ///
    /// # Errors
    ///
    /// [`ParamError`] for invalid parameters (ACS: also a run too short for its tuning plan).
    pub fn validate(&self, domain: Domain, shape: &RunShape) -> Result<(), ParamError> {
        match domain {
            Domain::Binary => self.check(shape),
            Domain::Ordinal => self.ordinal_kernel::<OrdinalModel>(shape).map(|_| ()),
            Domain::Categorical => self.categorical_kernel::<Potts>(shape).map(|_| ()),
        }
    }
}

/// A fresh AB tuner: the paper's defaults, started at `(step, balance)`, tuning the balance
/// too when `tune_balance`, budget `budget` steps.
pub(crate) fn ab_tuner(
    (step, balance): (f64, f64),
    tune_balance: bool,
    budget: u64,
    window: Option<u16>,
) -> Result<AbTuner, ParamError> {
    let mut s = AbSettings::default();
    s.step = step;
    s.balance = balance;
    s.budget = budget;
    s.window = window;
    s.tune_balance = tune_balance;
    AbTuner::new(s)
}

/// A fresh acceptance-targeting DMALA tuner: the benchmark suite's rule toward
/// `target_acceptance`, tuning for `budget` steps.
pub(crate) fn acceptance_tuner(
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

/// How a sampler's chains are stepped: all a runner needs to know of the sampler besides the
/// kernel the domain's builder makes of it.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Driver {
    /// The domain's kernel on a chain that caches `U` and `∇U`.
    Kernel,
    /// Gibbs sweeps: through a model's single-site fast path where it has one, else its kernel
    /// (each step a sweep, the distance measured between the states).
    Gibbs(Scan),
    /// Block Gibbs sweeps of an RBM, hidden and visible units in turn.
    RbmBlocks,
    /// A replica-exchange ladder of DMALA chains, the cold one kept.
    Replicas(crate::run::ReplicaPlan),
}

impl SamplerSpec {
    /// How the sampler's chains are stepped on `domain` in a run of `burn_in` burn-in steps
    /// (which the replica ladder tunes in; it reads the ordinal window on label domains only).
    ///
    /// # Errors
    ///
    /// [`ParamError`] for a replica ladder's invalid settings.
    pub(crate) fn driver(&self, domain: Domain, burn_in: u64) -> Result<Driver, ParamError> {
        Ok(match *self {
            Self::Gibbs { scan } => Driver::Gibbs(scan),
            Self::BlockGibbs => Driver::RbmBlocks,
            Self::PtDmala {
                replicas,
                target_acceptance,
                window,
            } => {
                let window = window.filter(|_| domain != Domain::Binary);
                Driver::Replicas(replica_plan(replicas, target_acceptance, burn_in, window)?)
            }
            _ => Driver::Kernel,
        })
    }
}

/// A fixed-step discrete Langevin sampler's settings: what the batched paths (lockstep groups
/// of chains) run.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LangevinStep {
    /// Step size.
    pub(crate) step: f64,
    /// Balancing exponent.
    pub(crate) balance: f64,
    /// Ordinal window.
    pub(crate) window: Option<u16>,
    /// DMALA (with the Metropolis–Hastings correction) rather than DULA.
    pub(crate) adjusted: bool,
}

impl SamplerSpec {
    /// The settings of the batched path on a model of `kind`, which has one for this
    /// sampler if `has_path`.
    ///
    /// # Errors
    ///
    /// [`RunError::NoBatchedPath`] for a sampler or model without one.
    pub(crate) fn batched_step(
        &self,
        kind: &str,
        has_path: bool,
    ) -> Result<LangevinStep, crate::run::RunError> {
        self.langevin_step()
            .filter(|_| has_path)
            .ok_or_else(|| crate::run::RunError::no_batched_path(kind, self.name()))
    }

    /// The settings of DULA and DMALA, the samplers with batched paths; `None` for the others.
    pub(crate) fn langevin_step(&self) -> Option<LangevinStep> {
        let (step, balance, window, adjusted) = match *self {
            Self::Dmala {
                step,
                balance,
                window,
            } => (step, balance, window, true),
            Self::Dula {
                step,
                balance,
                window,
            } => (step, balance, window, false),
            _ => return None,
        };
        Some(LangevinStep {
            step,
            balance,
            window,
            adjusted,
        })
    }
}

/// The replicas of a replica-exchange run, checked.
pub(crate) fn replica_plan(
    replicas: usize,
    target_acceptance: f64,
    burn_in: u64,
    window: Option<u16>,
) -> Result<crate::run::ReplicaPlan, ParamError> {
    if replicas == 0 {
        return Err(ParamError::OutOfRange {
            name: "replicas",
            value: 0.0,
        });
    }
    let mut settings = langevin_core::tempering::LadderSettings::default();
    settings.budget = burn_in;
    settings.target_acceptance = target_acceptance;
    settings.window = window;
    settings.validate()?;
    Ok(crate::run::ReplicaPlan { replicas, settings })
}

/// The acceptance tuner's report as JSON, with the equivalent step of domain `D` (`null` where
/// `τ ≥ 1`).
pub(crate) fn acceptance_json<D: ScaledDmala>(k: &AcceptanceTuner<crate::FlipMathImpl>) -> Value {
    let r = k.report_for::<D>();
    json!({
        "expected_changes": r.changes,
        "log_scale": r.log_scale,
        "step": r.step,
        "target_acceptance": k.settings().target_acceptance,
        "tuning_acceptance": r.tuning_acceptance,
        "tuning_steps": r.tuning_steps,
        "frozen": r.frozen,
    })
}

/// A fresh ACS tuner: the paper's defaults, searching from `a_ceil` (or with fixed steps), the
/// budget a tenth of the whole run.
pub(crate) fn acs_tuner(
    a_ceil: f64,
    fixed_steps: Option<(f64, f64)>,
    shape: &RunShape,
    window: Option<u16>,
) -> Result<AcsTuner, ParamError> {
    let mut s = AcsSettings::default();
    s.a_ceil = a_ceil;
    s.fixed_steps = fixed_steps;
    s.total_steps = shape.burn_in.saturating_add(shape.steps);
    s.budget_fraction = ACS_BUDGET_FRACTION;
    s.window = window;
    AcsTuner::new(s)
}

/// AB's report as JSON.
pub(crate) fn ab_json(k: &AbTuner) -> Value {
    let r = k.report();
    json!({
        "step": r.step,
        "balance": r.balance,
        "probe_rate": r.rate,
        "tuning_steps": r.tuning_steps,
        "rounds": r.rounds,
        "frozen": r.frozen,
    })
}

/// ACS's report as JSON: the whole cycle of steps and balances.
pub(crate) fn acs_json(r: &AcsReport) -> Value {
    let s = &r.schedule;
    let cycle = u64::from(s.cycle());
    let (steps, balances): (Vec<f64>, Vec<f64>) = (0..cycle).map(|k| s.at(k)).unzip();
    json!({
        "a_max": s.a_max(),
        "a_min": s.a_min(),
        "cycle": cycle,
        "steps": steps,
        "balances": balances,
        "tuning_steps": r.tuning_steps,
        "budget": r.budget,
        "frozen": r.frozen,
    })
}
