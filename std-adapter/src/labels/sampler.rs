//! Which kernel a label run uses.

use super::model::LabelDomain;
use crate::binary::{
    RunShape, SamplerSpec, ab_json, ab_tuner, acceptance_json, acceptance_tuner, acs_json,
    acs_tuner, grow, replica_plan,
};
use crate::kernels::{PathSampler, dlmc_json};
use crate::samplers::{self, Domain, SamplerError};
use langevin_core::ParamError;
use langevin_core::baselines::{Balancing, Gwg, LocallyBalanced, Scan};
use langevin_core::binary::{StepError, StepReport};
use langevin_core::categorical::{self, CategoricalProposal};
use langevin_core::dlmc::{CategoricalDlmcProposal, DLMC_TARGET_ACCEPTANCE, Solver, TunedDlmc};
use langevin_core::ordinal::{self, OrdinalProposal};
use langevin_core::tuning::{AbTuner, AcceptanceTuner, AcsTuner};
use langevin_core::{Categorical, Chain, Eval, Kernel, Ordinal};
use rand_core::Rng;
use serde_json::Value;

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
    pub(crate) fn ordinal_kernel(
        &self,
        shape: &RunShape,
    ) -> Result<Option<AnyOrdinalKernel>, ParamError> {
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
            } => AnyOrdinalKernel::Dula(ordinal::Dula::new(proposal(step, balance, window)?)),
            Self::Dmala {
                step,
                balance,
                window,
            } => AnyOrdinalKernel::Dmala(ordinal::Dmala::new(proposal(step, balance, window)?)),
            Self::Ab {
                step,
                balance,
                tune_balance,
                window,
            } => AnyOrdinalKernel::Ab(ab_tuner(
                (step, balance),
                tune_balance,
                shape.burn_in,
                window,
            )?),
            Self::Acs {
                a_ceil,
                fixed_steps,
                window,
            } => AnyOrdinalKernel::Acs(acs_tuner(a_ceil, fixed_steps, shape, window)?),
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
            } => AnyOrdinalKernel::DmalaAcceptance(acceptance_tuner(
                target_acceptance,
                shape.burn_in,
                window,
            )?),
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
    pub(crate) fn categorical_kernel(
        &self,
        shape: &RunShape,
    ) -> Result<Option<AnyCategoricalKernel>, ParamError> {
        Ok(Some(match *self {
            Self::Dula { step, balance, .. } => AnyCategoricalKernel::Dula(categorical::Dula::new(
                CategoricalProposal::new(step, balance)?,
            )),
            Self::Dmala { step, balance, .. } => AnyCategoricalKernel::Dmala(
                categorical::Dmala::new(CategoricalProposal::new(step, balance)?),
            ),
            Self::Gwg => AnyCategoricalKernel::Gwg(Gwg),
            Self::Ab {
                step,
                balance,
                tune_balance,
                ..
            } => AnyCategoricalKernel::Ab(ab_tuner(
                (step, balance),
                tune_balance,
                shape.burn_in,
                None,
            )?),
            Self::Acs {
                a_ceil,
                fixed_steps,
                ..
            } => AnyCategoricalKernel::Acs(acs_tuner(a_ceil, fixed_steps, shape, None)?),
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
            } => AnyCategoricalKernel::DmalaAcceptance(acceptance_tuner(
                target_acceptance,
                shape.burn_in,
                None,
            )?),
            Self::Lb { balancing } => {
                AnyCategoricalKernel::Lb(LocallyBalanced::new(balancing, Vec::new()))
            }
            Self::Pas { path_length } => AnyCategoricalKernel::Pas(Box::new(PathSampler::new(
                path_length,
                shape.dim,
                shape.burn_in,
            )?)),
            Self::Dlmc { time, solver } => {
                if solver == Some(Solver::Interpolate) {
                    return Err(ParamError::Unsupported(
                        "the interpolate solver is exact for binary models only (the categorical chain has no closed form); use --solver euler",
                    ));
                }
                let proposal = CategoricalDlmcProposal::new(time.unwrap_or(1.0))?;
                match time {
                    Some(_) => {
                        AnyCategoricalKernel::Dlmc(langevin_core::kernel::Dmala::new(proposal))
                    }
                    None => AnyCategoricalKernel::DlmcTuned(TunedDlmc::new(
                        proposal,
                        true,
                        shape.burn_in,
                        DLMC_TARGET_ACCEPTANCE,
                    )?),
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
            LabelDomain::Ordinal => self.ordinal_kernel(shape).map(|_| ()),
            LabelDomain::Categorical => self.categorical_kernel(shape).map(|_| ()),
        }
    }
}

/// The ordinal kernels with a cached chain.
#[derive(Clone, Debug)]
pub(crate) enum AnyOrdinalKernel {
    Dula(ordinal::Dula<'static>),
    Dmala(ordinal::Dmala<'static>),
    Ab(AbTuner),
    Acs(Box<AcsTuner>),
    DmalaAcceptance(AcceptanceTuner<crate::FlipMathImpl>),
}

/// The categorical kernels with a cached chain.
#[derive(Clone, Debug)]
pub(crate) enum AnyCategoricalKernel {
    Dula(categorical::Dula<'static>),
    Dmala(categorical::Dmala<'static>),
    Gwg(Gwg),
    Ab(AbTuner),
    Acs(Box<AcsTuner>),
    DmalaAcceptance(AcceptanceTuner<crate::FlipMathImpl>),
    Lb(LocallyBalanced<Vec<f64>>),
    Pas(Box<PathSampler>),
    Dlmc(langevin_core::kernel::Dmala<CategoricalDlmcProposal>),
    DlmcTuned(TunedDlmc<CategoricalDlmcProposal>),
}

/// What both kernel enums tell the run loop about tuning.
pub(crate) trait Tuning {
    fn tuner(&self) -> (Option<&AbTuner>, Option<&AcsTuner>);
    fn ab_mut(&mut self) -> Option<&mut AbTuner>;
    /// The acceptance-targeting DMALA tuner, if that is the kernel.
    fn acceptance(&self) -> Option<&AcceptanceTuner<crate::FlipMathImpl>>;
    fn acceptance_mut(&mut self) -> Option<&mut AcceptanceTuner<crate::FlipMathImpl>>;
    /// The acceptance tuner's report with the equivalent step of this domain.
    fn acceptance_json(&self) -> Option<Value>;

    /// Whether a kernel that adapts by its own rule (not AB or ACS) is still adapting.
    fn own_is_tuning(&self) -> bool {
        false
    }

    /// What a kernel that adapts by its own rule settled on, as JSON.
    fn own_tuned(&self) -> Option<Value> {
        None
    }

    fn is_tuning(&self) -> bool {
        match self.tuner() {
            (Some(ab), _) => !ab.is_frozen(),
            (_, Some(acs)) => !acs.is_frozen(),
            _ => self.own_is_tuning() || self.acceptance().is_some_and(|k| !k.is_frozen()),
        }
    }

    fn stop_tuning(&mut self) {
        if let Some(ab) = self.ab_mut() {
            ab.freeze();
        }
        if let Some(k) = self.acceptance_mut() {
            k.freeze();
        }
    }

    fn tuned(&self) -> Option<Value> {
        match self.tuner() {
            (Some(ab), _) => Some(ab_json(ab)),
            (_, Some(acs)) => Some(acs_json(&acs.report())),
            _ => self.own_tuned().or_else(|| self.acceptance_json()),
        }
    }
}

/// [`Tuning`] for a kernel enum whose tuners are the variants `Ab` and `Acs`.
macro_rules! impl_tuning {
    ($($kernel:ty: $domain:ty $({ $($own:tt)* })?),*) => {$(
        impl Tuning for $kernel {
            fn tuner(&self) -> (Option<&AbTuner>, Option<&AcsTuner>) {
                match self {
                    Self::Ab(k) => (Some(k), None),
                    Self::Acs(k) => (None, Some(&**k)),
                    _ => (None, None),
                }
            }
            fn ab_mut(&mut self) -> Option<&mut AbTuner> {
                match self {
                    Self::Ab(k) => Some(k),
                    _ => None,
                }
            }
            fn acceptance(&self) -> Option<&AcceptanceTuner<crate::FlipMathImpl>> {
                match self {
                    Self::DmalaAcceptance(k) => Some(k),
                    _ => None,
                }
            }
            fn acceptance_mut(&mut self) -> Option<&mut AcceptanceTuner<crate::FlipMathImpl>> {
                match self {
                    Self::DmalaAcceptance(k) => Some(k),
                    _ => None,
                }
            }
            fn acceptance_json(&self) -> Option<Value> {
                self.acceptance().map(acceptance_json::<$domain>)
            }
            $($($own)*)?
        }
    )*};
}

impl_tuning!(
    AnyOrdinalKernel: Ordinal,
    AnyCategoricalKernel: Categorical {
        fn own_is_tuning(&self) -> bool {
            match self {
                Self::Pas(k) => k.is_tuning(),
                Self::DlmcTuned(k) => !k.is_frozen(),
                _ => false,
            }
        }
        fn own_tuned(&self) -> Option<Value> {
            match self {
                Self::Pas(k) => k.tuned(),
                Self::DlmcTuned(k) => Some(dlmc_json(k.proposal().time(), k.is_frozen())),
                _ => None,
            }
        }
    }
);

/// [`Kernel`] of a domain for a kernel enum: each variant steps its own kernel (`Acs` and the
/// `boxed` ones through their box).
macro_rules! impl_kernel {
    ($kernel:ty, $domain:ty, [$($variant:ident),*] $(, sized [$($extra:ident),*])?
        $(, boxed [$($boxed:ident),*])?) => {
        impl Kernel<$domain> for $kernel {
            fn step<T, R>(
                &mut self,
                target: &mut T,
                chain: &mut Chain<'_, $domain>,
                rng: &mut R,
            ) -> Result<StepReport, StepError<T::Error>>
            where
                T: Eval<$domain> + ?Sized,
                R: Rng + ?Sized,
            {
                match self {
                    $(Self::$variant(k) => Kernel::step(k, target, chain, rng),)*
                    Self::Acs(k) => Kernel::step(&mut **k, target, chain, rng),
                    $($(Self::$extra(k) => {
                        let n = chain.dim().saturating_mul(chain.states());
                        grow(k.weights_mut(), n);
                        Kernel::step(k, target, chain, rng)
                    })*)?
                    $($(Self::$boxed(k) => Kernel::step(&mut **k, target, chain, rng),)*)?
                }
            }
        }
    };
}

impl_kernel!(
    AnyOrdinalKernel,
    Ordinal,
    [Dula, Dmala, Ab, DmalaAcceptance]
);
impl_kernel!(
    AnyCategoricalKernel,
    Categorical,
    [Dula, Dmala, Gwg, Ab, Dlmc, DlmcTuned, DmalaAcceptance],
    sized[Lb],
    boxed[Pas]
);
