//! Which kernel a label run uses.

use super::model::{LabelDomain, OrdinalModel};
use crate::binary::{RunShape, SamplerSpec, ab_tuner, acceptance_tuner, acs_tuner, replica_plan};
use crate::kernels::{BoxedKernel, Grown, PathSampler, boxed};
use crate::models::Potts;
use crate::samplers::{self, Domain, SamplerError};
use langevin_core::ParamError;
use langevin_core::baselines::{Balancing, Gwg, LocallyBalanced, Scan};
use langevin_core::categorical::{self, CategoricalProposal};
use langevin_core::dlmc::{CategoricalDlmcProposal, DLMC_TARGET_ACCEPTANCE, Solver, TunedDlmc};
use langevin_core::ordinal::{self, OrdinalProposal};
use langevin_core::{Categorical, Eval, Ordinal};

/// A sampler for ordinal or categorical models and its parameters.
///
/// Steps and tuning follow [`SamplerSpec`](crate::binary::SamplerSpec): one Gibbs step is a
/// sweep of `d` single-site updates (each pricing the `S − 1` other values, counted as `S − 1`
/// evaluations); AB tunes during the burn-in, ACS within a tenth of the run. The window
/// `|x'_i − x_i| ≤ w` applies to the ordinal proposals (DULA, DMALA, AB, ACS).
///
/// Which samplers apply to which domain is the registry's to say
/// ([`SAMPLERS`](crate::samplers::SAMPLERS)).
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum LabelSamplerSpec {
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
    /// Single-site Gibbs; one step is a sweep.
    Gibbs {
        /// Site order.
        scan: Scan,
    },
    /// Gibbs-with-gradients (categorical only).
    Gwg,
    /// The any-scale balanced sampler, `(a, b)` tuned during burn-in.
    Ab {
        /// Initial step.
        step: f64,
        /// Initial balance.
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
        /// `(a_max, a_min)` to use instead of searching.
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
    /// Replica exchange around acceptance-targeting DMALA; run by
    /// [`run_label_chains`](super::run_label_chains), which draws the cold replica's states.
    PtDmala {
        /// Replicas `R ≥ 1`.
        replicas: usize,
        /// The acceptance rate each replica's step is tuned toward.
        target_acceptance: f64,
        /// Ordinal window.
        window: Option<u16>,
    },
    /// The locally balanced informed proposal (categorical only).
    Lb {
        /// The balancing function.
        balancing: Balancing,
    },
    /// The path auxiliary sampler (categorical only).
    Pas {
        /// Moves per path (`None`: adapted during burn-in).
        path_length: Option<usize>,
    },
    /// Discrete Langevin Monte Carlo (categorical only; Euler solver).
    Dlmc {
        /// Time `τ` (`None`: adapted during burn-in).
        time: Option<f64>,
        /// Solver (`None`: Euler, the only one for categorical models).
        solver: Option<Solver>,
    },
}

impl LabelSamplerSpec {
    /// The same algorithm as a binary sampler: its name and `(step, balance)` are this one's
    /// (the window and AB's balance tuning are what the label domains add).
    pub fn algorithm(&self) -> SamplerSpec {
        match *self {
            Self::Dula { step, balance, .. } => SamplerSpec::Dula { step, balance },
            Self::Dmala { step, balance, .. } => SamplerSpec::Dmala { step, balance },
            Self::Gibbs { scan } => SamplerSpec::Gibbs { scan },
            Self::Gwg => SamplerSpec::Gwg,
            Self::Ab { step, balance, .. } => SamplerSpec::Ab { step, balance },
            Self::Acs {
                a_ceil,
                fixed_steps,
                ..
            } => SamplerSpec::Acs {
                a_ceil,
                fixed_steps,
            },
            Self::DmalaAcceptance {
                target_acceptance, ..
            } => SamplerSpec::DmalaAcceptance { target_acceptance },
            Self::PtDmala {
                replicas,
                target_acceptance,
                ..
            } => SamplerSpec::PtDmala {
                replicas,
                target_acceptance,
            },
            Self::Lb { balancing } => SamplerSpec::Lb { balancing },
            Self::Pas { path_length } => SamplerSpec::Pas { path_length },
            Self::Dlmc { time, solver } => SamplerSpec::Dlmc { time, solver },
        }
    }

    /// The name as the command line spells it.
    pub fn name(&self) -> &'static str {
        self.algorithm().name()
    }

    /// `(step, balance)` where the sampler has them (AB: initial); NaN otherwise.
    pub fn step_balance(&self) -> (f64, f64) {
        self.algorithm().step_balance()
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

    /// Checks that the sampler applies to the domain (as the registry says).
    ///
    /// # Errors
    ///
    /// [`SamplerError::Domain`] for a sampler the domain lacks (GWG on an ordinal model),
    /// [`SamplerError::Window`] for a window on a categorical model.
    pub fn check_domain(&self, domain: LabelDomain) -> Result<(), SamplerError> {
        let domain = Domain::from(domain);
        let entry = samplers::find(self.name())?;
        if !entry.applies_to(domain) {
            return Err(SamplerError::Domain {
                sampler: entry.name,
                domain,
            });
        }
        if self.window().is_some() && domain != Domain::Ordinal {
            return Err(SamplerError::Window);
        }
        Ok(())
    }

    /// A fresh ordinal kernel for a run of this shape; `None` for Gibbs (which runs on the
    /// model's conditional) and GWG.
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
            Self::Gibbs { .. }
            | Self::Gwg
            | Self::Lb { .. }
            | Self::Pas { .. }
            | Self::Dlmc { .. } => {
                return Ok(None);
            }
        }))
    }

    /// A fresh categorical kernel for a run of this shape; `None` for Gibbs.
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
            Self::Gwg => boxed(name, Gwg),
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
            Self::Gibbs { .. } => return Ok(None),
        }))
    }

    /// Checks the parameters for a run of this shape on a model of this domain (see
    /// [`check_domain`](Self::check_domain) for whether the sampler applies at all).
    ///
    /// # Errors
    ///
    /// [`ParamError`] for invalid parameters (ACS: also a run too short for its tuning plan).
    pub fn validate(&self, domain: LabelDomain, shape: &RunShape) -> Result<(), ParamError> {
        match domain {
            LabelDomain::Ordinal => self.ordinal_kernel::<OrdinalModel>(shape).map(|_| ()),
            LabelDomain::Categorical => self.categorical_kernel::<Potts>(shape).map(|_| ()),
        }
    }
}
