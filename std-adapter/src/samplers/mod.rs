//! The sampler registry: one entry per sampler of discrete models, with its command-line name,
//! the domains it applies to, its parameters (defaults and valid ranges), a one-line
//! description and its builder.
//!
//! The command line's `--sampler` values and `--help` text, the error for a sampler a model's
//! domain lacks, `langevin demo`, `langevin bench` and the README's sampler table all come from
//! [`SAMPLERS`]; a test checks the README against it. A new sampler is its kernel, one entry
//! here, its tests and one README row.
//!
//! # Examples
//!
//! ```
//! use langevin_std::samplers::{Domain, SamplerParams, find};
//!
//! let gwg = find("gwg").unwrap();
//! assert!(gwg.applies_to(Domain::Categorical) && !gwg.applies_to(Domain::Ordinal));
//! let sampler = gwg.with(SamplerParams::default()).unwrap();
//! let err = sampler.plan(Domain::Ordinal).unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "sampler gwg does not apply to ordinal models (use dula, dmala, gibbs, ab, ab2, acs or pt-dmala)"
//! );
//! ```

mod params;
mod spec;

pub use params::{
    Adapt, Choice, Codec, Named, Number, OrAuto, Param, ParamInfo, Range, SamplerParams,
    SummaryOptions, Unset, UnsetAtLeastOne, add_args, markdown_table,
};

pub use spec::{
    ACS_BUDGET_FRACTION, BLOCK_GIBBS_NEEDS_RBM, RWM_TARGET_ACCEPTANCE, RunShape, SamplerSpec,
};
pub(crate) use spec::{Driver, LangevinStep, ab_json, acceptance_json, acs_json};

use crate::ab2::Ab2Settings;
use crate::labels::LabelDomain;
use langevin_core::ParamError;
use std::fmt;

/// The state space of a discrete model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Domain {
    /// `{0, 1}^d`.
    Binary,
    /// `{0, …, S−1}^d` with the order of the values meaningful.
    Ordinal,
    /// `{0, …, S−1}^d`, unordered labels.
    Categorical,
}

impl Domain {
    /// Every domain, in the order the README's table lists them.
    pub const ALL: [Domain; 3] = [Domain::Binary, Domain::Ordinal, Domain::Categorical];

    /// The name used in summaries and messages.
    pub fn name(self) -> &'static str {
        match self {
            Domain::Binary => "binary",
            Domain::Ordinal => "ordinal",
            Domain::Categorical => "categorical",
        }
    }
}

impl From<LabelDomain> for Domain {
    fn from(d: LabelDomain) -> Self {
        match d {
            LabelDomain::Ordinal => Domain::Ordinal,
            LabelDomain::Categorical => Domain::Categorical,
        }
    }
}

/// What a sampler runs as on a model of one domain: the input of the chain runners.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum SamplerPlan {
    /// A kernel, run by [`run_chains`](crate::binary::run_chains) on binary models and by
    /// [`run_label_chains`](crate::labels::run_label_chains) on ordinal and categorical ones.
    Kernel(SamplerSpec),
    /// The second-order schedule, run by [`run_ab2_chains`](crate::ab2::run_ab2_chains)
    /// (binary) or [`run_ab2_ordinal_chains`](crate::ab2::run_ab2_ordinal_chains).
    Ab2(Ab2Settings),
}

impl SamplerPlan {
    /// The first-order kernel of the plan (AB-2: its first, first-order phase).
    pub fn first_order(&self) -> SamplerSpec {
        match self {
            SamplerPlan::Kernel(spec) => *spec,
            SamplerPlan::Ab2(s) => SamplerSpec::Ab {
                step: s.first.step,
                balance: s.first.balance,
                tune_balance: true,
                window: s.first.window,
            },
        }
    }

    /// `(step, balance)` where the sampler has them (tuned samplers: where tuning starts); NaN
    /// otherwise.
    pub fn step_balance(&self) -> (f64, f64) {
        self.first_order().step_balance()
    }

    /// The ordinal window, if any.
    pub fn window(&self) -> Option<u16> {
        self.first_order().window()
    }

    /// Burn-in steps per chain a run takes at least: ACS extends a shorter burn-in to its
    /// tuning budget, a fraction [`ACS_BUDGET_FRACTION`] of burn-in plus steps.
    pub fn min_burn_in(&self, burn_in: u64, steps: u64) -> u64 {
        if let SamplerPlan::Kernel(SamplerSpec::Acs { .. }) = self {
            burn_in.max((burn_in.saturating_add(steps) as f64 * ACS_BUDGET_FRACTION) as u64)
        } else {
            burn_in
        }
    }

    /// Checks the parameters for a run of this shape on a model of this domain (AB-2: those of
    /// its first-order phase; its runner checks the rest).
    fn validate(&self, domain: Domain, shape: &RunShape) -> Result<(), ParamError> {
        match self.first_order() {
            // Its runner checks that the model is an RBM.
            SamplerSpec::BlockGibbs => Ok(()),
            spec => spec.validate(domain, shape),
        }
    }
}

/// One sampler of the registry.
#[derive(Debug)]
pub struct SamplerEntry {
    /// The name as the command line spells it.
    pub name: &'static str,
    /// The domains it applies to.
    pub domains: &'static [Domain],
    /// The parameters it reads, in the order `--help` and the README list them.
    pub params: &'static [Param],
    /// One line for `--help` and the README.
    pub description: &'static str,
    /// How `langevin demo` runs it on the critical Ising model: once per listed step size
    /// (`None`: at its defaults); not at all when empty.
    pub demo: &'static [Option<f64>],
    /// Its builder: the plan for a model of a domain in [`domains`](Self::domains).
    build: fn(&SamplerParams) -> SamplerPlan,
}

impl SamplerEntry {
    /// Whether the sampler applies to models of this domain.
    pub fn applies_to(&self, domain: Domain) -> bool {
        self.domains.contains(&domain)
    }

    /// Checks that the sampler applies to models of `domain`, and that no parameter `given`
    /// says is set is one the domain refuses.
    fn check_domain(
        &self,
        domain: Domain,
        given: impl Fn(Param) -> bool,
    ) -> Result<(), SamplerError> {
        if !self.applies_to(domain) {
            return Err(SamplerError::Domain {
                sampler: self.name,
                domain,
            });
        }
        match Param::ALL
            .into_iter()
            .find(|&p| !p.applies_to(domain) && given(p))
        {
            Some(param) => Err(SamplerError::NotForDomain { param, domain }),
            None => Ok(()),
        }
    }

    /// The sampler with these parameters, checked as far as they do not depend on the model
    /// (with a nominal run shape, [`RunShape::default`]).
    ///
    /// # Errors
    ///
    /// [`SamplerError::Param`] for a parameter out of its range, [`SamplerError::Requires`]
    /// for a parameter set without the one it needs.
    pub fn with(&'static self, params: SamplerParams) -> Result<Sampler, SamplerError> {
        for &param in self.params {
            if let Some(other) = param.requires()
                && params.text(param).is_some()
                && params.text(other).is_none()
            {
                return Err(SamplerError::Requires { param, other });
            }
        }
        let sampler = Sampler {
            entry: self,
            params,
        };
        sampler.param((self.build)(&params).validate(Domain::Binary, &RunShape::default()))?;
        Ok(sampler)
    }
}

/// Every sampler of discrete models, in the order the command line lists them.
pub static SAMPLERS: &[SamplerEntry] = &[
    SamplerEntry {
        name: "dula",
        domains: &Domain::ALL,
        params: &[Param::Step, Param::Balance, Param::Window],
        description: "Discrete unadjusted Langevin (no Metropolis test; biased for step > 0)",
        demo: &[Some(0.2)],
        build: |p| {
            SamplerPlan::Kernel(SamplerSpec::Dula {
                step: p.step,
                balance: p.balance,
                window: p.window,
            })
        },
    },
    SamplerEntry {
        name: "dmala",
        domains: &Domain::ALL,
        params: &[
            Param::Step,
            Param::Balance,
            Param::Window,
            Param::Adapt,
            Param::TargetAcceptance,
        ],
        description: "Discrete Metropolis-adjusted Langevin (exact); without `--step` and `--balance`, `sample` tunes its step toward acceptance 0.574 during burn-in (`--adapt acceptance`); a given `--step` is fixed",
        demo: &[Some(0.1), Some(0.2)],
        build: |p| {
            SamplerPlan::Kernel(match p.adapt {
                Some(Adapt::Acceptance) => SamplerSpec::DmalaAcceptance {
                    target_acceptance: p.target_acceptance,
                    window: p.window,
                },
                None => SamplerSpec::Dmala {
                    step: p.step,
                    balance: p.balance,
                    window: p.window,
                },
            })
        },
    },
    SamplerEntry {
        name: "gibbs",
        domains: &Domain::ALL,
        params: &[Param::Scan],
        description: "Single-site Gibbs; one step is a sweep of d site updates",
        demo: &[None],
        build: |p| SamplerPlan::Kernel(SamplerSpec::Gibbs { scan: p.scan }),
    },
    SamplerEntry {
        name: "gwg",
        domains: &[Domain::Binary, Domain::Categorical],
        params: &[],
        description: "Gibbs-with-gradients: one change per step, picked by the gradient",
        demo: &[None],
        build: |_| SamplerPlan::Kernel(SamplerSpec::Gwg),
    },
    SamplerEntry {
        name: "rwm",
        domains: &[Domain::Binary],
        params: &[Param::Rate],
        description: "Random-walk Metropolis, flip rate tuned toward acceptance 0.234 during burn-in",
        demo: &[None],
        build: |p| SamplerPlan::Kernel(SamplerSpec::Rwm { rate: p.rate }),
    },
    SamplerEntry {
        name: "ab",
        domains: &Domain::ALL,
        params: &[Param::Step, Param::Balance, Param::Window],
        description: "Any-scale balanced sampler: step and balance tuned during burn-in, then fixed",
        demo: &[Some(0.1)],
        build: |p| {
            SamplerPlan::Kernel(SamplerSpec::Ab {
                step: p.step,
                balance: p.balance,
                tune_balance: true,
                window: p.window,
            })
        },
    },
    SamplerEntry {
        name: "ab2",
        domains: &[Domain::Binary, Domain::Ordinal],
        params: &[
            Param::Step,
            Param::Balance,
            Param::Diagonal,
            Param::Ab2Tune,
            Param::Window,
        ],
        description: "Any-scale balanced, second order: first-order tuning, a fitted quadratic W, a diagonal D, then the Gaussian-integral-trick kernel with (a, b) tuned again; the tuning phases come before the burn-in",
        demo: &[],
        build: |p| {
            let mut settings = Ab2Settings::default();
            settings.first.step = p.step;
            settings.first.balance = p.balance;
            settings.first.window = p.window;
            settings.diagonal = p.diagonal;
            settings.first.budget = p.ab2_tune;
            settings.second_budget = p.ab2_tune;
            SamplerPlan::Ab2(settings)
        },
    },
    SamplerEntry {
        name: "acs",
        domains: &Domain::ALL,
        params: &[Param::ACeil, Param::AMax, Param::AMin, Param::Window],
        description: "Automatic cyclical scheduling: tuned within 10% of the run, then a fixed cycle",
        demo: &[None],
        build: |p| {
            SamplerPlan::Kernel(SamplerSpec::Acs {
                a_ceil: p.a_ceil,
                fixed_steps: p.fixed_steps(),
                window: p.window,
            })
        },
    },
    SamplerEntry {
        name: "lb",
        domains: &[Domain::Binary, Domain::Categorical],
        params: &[Param::Balancing],
        description: "Locally balanced informed proposal: one change per step, picked by exact differences, Metropolis-adjusted",
        demo: &[],
        build: |p| {
            SamplerPlan::Kernel(SamplerSpec::Lb {
                balancing: p.balancing,
            })
        },
    },
    SamplerEntry {
        name: "hamming-ball",
        domains: &[Domain::Binary],
        params: &[Param::Radius, Param::Block],
        description: "Hamming-ball block sampler: each step redraws one block from π restricted to a ball of radius r around a random auxiliary point; no rejection",
        demo: &[],
        build: |p| {
            SamplerPlan::Kernel(SamplerSpec::HammingBall {
                radius: p.radius,
                block: p.block,
            })
        },
    },
    SamplerEntry {
        name: "block-gibbs",
        domains: &[Domain::Binary],
        params: &[],
        description: "RBM models only: alternating block Gibbs on the joint (hidden given visible, then visible given hidden); reports the visible units",
        demo: &[],
        build: |_| SamplerPlan::Kernel(SamplerSpec::BlockGibbs),
    },
    SamplerEntry {
        name: "pas",
        domains: &[Domain::Binary, Domain::Categorical],
        params: &[Param::PathLength],
        description: "Path auxiliary sampler: a path of gradient-picked moves per proposal, the path as auxiliary variable in the test",
        demo: &[None],
        build: |p| {
            SamplerPlan::Kernel(SamplerSpec::Pas {
                path_length: p.path_length,
            })
        },
    },
    SamplerEntry {
        name: "dlmc",
        domains: &[Domain::Binary, Domain::Categorical],
        params: &[Param::Time, Param::Solver],
        description: "Discrete Langevin Monte Carlo: every coordinate runs its own gradient-informed continuous-time chain for a time τ, then a Metropolis test",
        demo: &[None],
        build: |p| {
            SamplerPlan::Kernel(SamplerSpec::Dlmc {
                time: p.time,
                solver: p.solver,
            })
        },
    },
    PT_DMALA,
];

/// Replica exchange's entry (appended after the others).
const PT_DMALA: SamplerEntry = SamplerEntry {
    name: "pt-dmala",
    domains: &Domain::ALL,
    params: &[Param::Replicas, Param::TargetAcceptance, Param::Window],
    description: "Replica exchange: DMALA at R temperatures, neighbours swapped, ladder and steps tuned during burn-in; the cold chain's draws",
    demo: &[],
    build: |p| {
        SamplerPlan::Kernel(SamplerSpec::PtDmala {
            replicas: p.replicas,
            target_acceptance: p.target_acceptance,
            window: p.window,
        })
    },
};

/// The names of every sampler, in registry order.
pub fn names() -> impl Iterator<Item = &'static str> {
    SAMPLERS.iter().map(|e| e.name)
}

/// The entry of the sampler with this name.
///
/// # Errors
///
/// [`SamplerError::Unknown`] when no sampler has this name.
pub fn find(name: &str) -> Result<&'static SamplerEntry, SamplerError> {
    SAMPLERS
        .iter()
        .find(|e| e.name == name)
        .ok_or_else(|| SamplerError::Unknown(name.to_string()))
}

/// A sampler with its parameters, checked as far as they do not depend on the model.
#[derive(Clone, Copy, Debug)]
pub struct Sampler {
    entry: &'static SamplerEntry,
    params: SamplerParams,
}

impl Sampler {
    /// The registry entry.
    pub fn entry(&self) -> &'static SamplerEntry {
        self.entry
    }

    /// The name as the command line spells it.
    pub fn name(&self) -> &'static str {
        self.entry.name
    }

    /// The parameters.
    pub fn params(&self) -> &SamplerParams {
        &self.params
    }

    /// What the sampler runs as on a model of this domain.
    ///
    /// # Errors
    ///
    /// [`SamplerError::Domain`] when the sampler does not apply to the domain;
    /// [`SamplerError::NotForDomain`] for a parameter given that does not apply to the domain
    /// (a window on a model that is not ordinal).
    pub fn plan(&self, domain: Domain) -> Result<SamplerPlan, SamplerError> {
        self.entry
            .check_domain(domain, |p| self.params.text(p).is_some())?;
        Ok((self.entry.build)(&self.params))
    }

    /// [`plan`](Self::plan), with the parameters checked for a run of this shape.
    ///
    /// # Errors
    ///
    /// As [`plan`](Self::plan), and [`SamplerError::Param`] for invalid parameters (ACS: also
    /// a run too short for its tuning plan).
    pub fn plan_for(&self, domain: Domain, shape: &RunShape) -> Result<SamplerPlan, SamplerError> {
        let plan = self.plan(domain)?;
        self.param(plan.validate(domain, shape))?;
        Ok(plan)
    }

    fn param(&self, outcome: Result<(), ParamError>) -> Result<(), SamplerError> {
        outcome.map_err(|error| SamplerError::Param {
            sampler: self.entry.name,
            error,
        })
    }
}

impl SamplerSpec {
    /// Checks that the sampler applies to the domain (as the registry says).
    ///
    /// # Errors
    ///
    /// [`SamplerError::Domain`] for a sampler the domain lacks (GWG on an ordinal model),
    /// [`SamplerError::NotForDomain`] for a window on a categorical model.
    pub fn check_domain(&self, domain: LabelDomain) -> Result<(), SamplerError> {
        // The window is the one parameter a spec carries that some domains refuse.
        find(self.name())?.check_domain(domain.into(), |p| {
            p == Param::Window && self.window().is_some()
        })
    }
}

/// Why a sampler cannot run as asked.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum SamplerError {
    /// No sampler has this name.
    Unknown(String),
    /// The sampler does not apply to models of this domain.
    Domain {
        /// The sampler.
        sampler: &'static str,
        /// The model's domain.
        domain: Domain,
    },
    /// A parameter given for a model of a domain it does not apply to (a window on a model
    /// that is not ordinal).
    NotForDomain {
        /// The parameter.
        param: Param,
        /// The model's domain.
        domain: Domain,
    },
    /// A parameter set without the one it needs beside it.
    Requires {
        /// The parameter set.
        param: Param,
        /// The one it needs.
        other: Param,
    },
    /// A parameter out of its range.
    Param {
        /// The sampler.
        sampler: &'static str,
        /// What is wrong.
        error: ParamError,
    },
}

/// `a, b or c`.
fn or_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_string(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

impl fmt::Display for SamplerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SamplerError::Unknown(name) => write!(
                f,
                "unknown sampler `{name}` (expected {})",
                or_list(&names().collect::<Vec<_>>())
            ),
            SamplerError::Domain { sampler, domain } => {
                let others: Vec<&str> = SAMPLERS
                    .iter()
                    .filter(|e| e.applies_to(*domain))
                    .map(|e| e.name)
                    .collect();
                write!(
                    f,
                    "sampler {sampler} does not apply to {} models (use {})",
                    domain.name(),
                    or_list(&others)
                )
            }
            SamplerError::NotForDomain { param, .. } => {
                let domains: Vec<&str> = Domain::ALL
                    .into_iter()
                    .filter(|d| param.applies_to(*d))
                    .map(Domain::name)
                    .collect();
                write!(
                    f,
                    "{} applies to {} models only",
                    param.info().flag,
                    or_list(&domains)
                )
            }
            SamplerError::Requires { param, other } => write!(
                f,
                "{} needs {} beside it: give both or neither",
                param.info().flag,
                other.info().flag
            ),
            SamplerError::Param {
                sampler,
                error: ParamError::TuningBudget { steps },
            } => write!(
                f,
                "{sampler}: the run is too short to tune: a tenth of burn-in plus steps is {steps} steps, too few for one round of each search (use at least a few thousand steps)"
            ),
            SamplerError::Param { sampler, error } => write!(f, "{sampler}: {error}"),
        }
    }
}

impl std::error::Error for SamplerError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SamplerError::Param { error, .. } => Some(error),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_every_sampler_applies_to_binary_models() {
        for (k, e) in SAMPLERS.iter().enumerate() {
            assert!(SAMPLERS[..k].iter().all(|o| o.name != e.name), "{}", e.name);
            assert!(e.applies_to(Domain::Binary), "{}", e.name);
        }
    }

    #[test]
    fn every_sampler_builds_a_plan_for_each_of_its_domains() {
        for e in SAMPLERS {
            let sampler = e.with(SamplerParams::default()).unwrap();
            for d in Domain::ALL {
                let plan = sampler.plan_for(d, &RunShape::default());
                assert_eq!(plan.is_ok(), e.applies_to(d), "{} {d:?}", e.name);
            }
        }
    }

    /// A sampler the registry lists for a domain has a kernel of that domain, unless a driver
    /// of its own runs it; the kernel builders fall back to "no kernel" for everything else.
    #[test]
    fn every_sampler_has_a_kernel_on_each_of_its_domains() {
        use crate::kernels::ForModels;
        use crate::models::{OrdinalModel, Potts};
        let shape = RunShape::default();
        for e in SAMPLERS {
            let sampler = e.with(SamplerParams::default()).unwrap();
            for d in Domain::ALL.into_iter().filter(|&d| e.applies_to(d)) {
                // AB-2 has a runner of its own.
                let SamplerPlan::Kernel(spec) = sampler.plan(d).unwrap() else {
                    continue;
                };
                // The replica ladder, Gibbs sweeps through the model's conditional and RBM
                // block sweeps have drivers of their own (a binary kernel stands for pt-dmala's
                // cold replica and Gibbs's slow path).
                let own_driver = match spec {
                    SamplerSpec::BlockGibbs => true,
                    SamplerSpec::PtDmala { .. } | SamplerSpec::Gibbs { .. } => d != Domain::Binary,
                    _ => false,
                };
                let kernel = match d {
                    Domain::Binary => spec.kernel_for::<ForModels>(&shape).is_ok(),
                    Domain::Ordinal => spec
                        .ordinal_kernel::<OrdinalModel>(&shape)
                        .unwrap()
                        .is_some(),
                    Domain::Categorical => {
                        spec.categorical_kernel::<Potts>(&shape).unwrap().is_some()
                    }
                };
                assert_eq!(kernel, !own_driver, "{} {d:?}", e.name);
            }
        }
    }

    #[test]
    fn the_domain_error_lists_the_samplers_that_apply() {
        let rwm = find("rwm").unwrap().with(SamplerParams::default()).unwrap();
        assert_eq!(
            rwm.plan(Domain::Categorical).unwrap_err().to_string(),
            "sampler rwm does not apply to categorical models (use dula, dmala, gibbs, gwg, ab, acs, lb, pas, dlmc or pt-dmala)"
        );
        assert!(matches!(find("nuts"), Err(SamplerError::Unknown(_))));
    }

    #[test]
    fn parameters_out_of_range_fail_before_the_model_is_known() {
        let p = SamplerParams {
            rate: Some(1.0),
            ..SamplerParams::default()
        };
        let err = find("rwm").unwrap().with(p).unwrap_err();
        assert!(err.to_string().starts_with("rwm: "), "{err}");
    }
}
