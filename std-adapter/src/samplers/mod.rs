//! The sampler registry: one entry per sampler of discrete models, with its command-line name,
//! the domains it applies to, its parameters (defaults and valid ranges), a one-line
//! description and its builder.
//!
//! The command line's `--sampler` values and `--help` text, the error for a sampler a model's
//! domain lacks, `langevin demo`, `langevin bench` and the README's sampler table all come from
//! [`SAMPLERS`]; a test checks the README against it. A new sampler is its kernel, one kind in
//! the registry (its entry and kernel builders, in one file), its tests and one README row.
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
mod registry;

pub use params::{
    Adapt, Choice, Codec, Named, Number, NumberError, OrAuto, Param, ParamInfo, ParamValueError,
    Range, SamplerParams, SummaryOptions, Unset, UnsetAtLeastOne, ValueTextError, add_args,
    markdown_table,
};
pub use registry::{ACS_BUDGET_FRACTION, BLOCK_GIBBS_NEEDS_RBM, RWM_TARGET_ACCEPTANCE, SAMPLERS};

use crate::ab2::Ab2Settings;
use crate::kernels::{BoxedKernel, Boxing, ForModels};
use crate::labels::LabelDomain;
use crate::models::{BinaryModel, OrdinalModel, Potts};
use langevin_core::baselines::Scan;
use langevin_core::{Binary, Categorical, Eval, Ordinal, ParamError};
use registry::Kind;
use std::fmt;
use std::marker::PhantomData;

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

/// One sampler of discrete models: what its registry entry says, and the kernels it builds
/// from its parameters. Each sampler implements it once, in the registry.
///
/// # Steps and tuning
///
/// One step of every sampler but Gibbs is one proposal (and its test); one Gibbs step is a
/// sweep of `d` site updates, so that per-step costs and kept draws compare across samplers.
/// A tuned sampler adapts during the burn-in and is fixed afterwards, so every kept draw comes
/// from one exact, time-homogeneous kernel.
pub(crate) trait SamplerKind {
    /// The name as the command line spells it.
    const NAME: &'static str;
    /// The domains it applies to.
    const DOMAINS: &'static [Domain];
    /// The parameters it reads, in the order `--help` and the README list them.
    const PARAMS: &'static [Param];
    /// One line for `--help` and the README.
    const DESCRIPTION: &'static str;
    /// How `langevin demo` runs it (see [`SamplerEntry::demo`]).
    const DEMO: &'static [Option<f64>] = &[];
    /// Whether its chains read an RBM's `Wᵀ` (see
    /// [`BinaryModel::rbm_transpose`](crate::models::BinaryModel::rbm_transpose)).
    const READS_RBM_TRANSPOSE: bool = true;

    /// A fresh kernel for one chain of a run of this shape on a binary model (`model`, where
    /// a model has a kernel of its own for the sampler: the tabulated Ising lattice).
    ///
    /// # Errors
    ///
    /// [`ParamError`] for invalid parameters (ACS: also a run too short for its tuning plan).
    fn binary<B: Boxing<Binary>>(
        p: &SamplerParams,
        shape: &RunShape,
        model: Option<&BinaryModel>,
    ) -> Result<B::Kernel, ParamError>;
    /// A fresh ordinal kernel; `None` where the sampler has none (Gibbs runs on the model's
    /// conditional, the replica ladder on a driver of its own).
    ///
    /// # Errors
    ///
    /// [`ParamError`] for invalid parameters.
    fn ordinal<T: Eval<Ordinal> + ?Sized>(
        _: &SamplerParams,
        _: &RunShape,
    ) -> Result<Option<BoxedKernel<Ordinal, T>>, ParamError> {
        Ok(None)
    }
    /// A fresh categorical kernel; `None` where the sampler has none.
    ///
    /// # Errors
    ///
    /// [`ParamError`] for invalid parameters.
    fn categorical<T: Eval<Categorical> + ?Sized>(
        _: &SamplerParams,
        _: &RunShape,
    ) -> Result<Option<BoxedKernel<Categorical, T>>, ParamError> {
        Ok(None)
    }
    /// How its chains are stepped on `domain` in a run of `burn_in` burn-in steps.
    ///
    /// # Errors
    ///
    /// [`ParamError`] for a driver's invalid settings.
    fn driver(_: &SamplerParams, _: Domain, _: u64) -> Result<Driver, ParamError> {
        Ok(Driver::Kernel)
    }
    /// Whether it adapts its parameters during the burn-in.
    fn is_tuned(_: &SamplerParams) -> bool {
        false
    }
    /// `(step, balance)` where it has them (tuned samplers: where tuning starts).
    fn step_balance(_: &SamplerParams) -> Option<(f64, f64)> {
        None
    }
    /// The settings of its batched path, where it has one.
    fn langevin_step(_: &SamplerParams) -> Option<LangevinStep> {
        None
    }
    /// Burn-in steps per chain a run takes at least.
    fn min_burn_in(_: &SamplerParams, burn_in: u64, _steps: u64) -> u64 {
        burn_in
    }
    /// What it runs as.
    fn plan(sampler: Sampler) -> SamplerPlan {
        SamplerPlan::Kernel(sampler)
    }
}

/// What is done with the sampler of a [`Kind`]: the builders that are generic over the
/// runner's target.
pub(crate) trait Visitor {
    /// What it gives.
    type Output;
    /// Does it with the sampler `S`.
    fn visit<S: SamplerKind>(self) -> Self::Output;
}

/// [`Visitor`]: a binary kernel.
struct BinaryKernel<'a, B> {
    params: &'a SamplerParams,
    shape: &'a RunShape,
    model: Option<&'a BinaryModel>,
    boxing: PhantomData<B>,
}

impl<B: Boxing<Binary>> Visitor for BinaryKernel<'_, B> {
    type Output = Result<B::Kernel, ParamError>;
    fn visit<S: SamplerKind>(self) -> Self::Output {
        S::binary::<B>(self.params, self.shape, self.model)
    }
}

/// [`Visitor`]: an ordinal kernel.
struct OrdinalKernel<'a, T: ?Sized>(&'a SamplerParams, &'a RunShape, PhantomData<fn(&mut T)>);

impl<T: Eval<Ordinal> + ?Sized> Visitor for OrdinalKernel<'_, T> {
    type Output = Result<Option<BoxedKernel<Ordinal, T>>, ParamError>;
    fn visit<S: SamplerKind>(self) -> Self::Output {
        S::ordinal(self.0, self.1)
    }
}

/// [`Visitor`]: a categorical kernel.
struct CategoricalKernel<'a, T: ?Sized>(&'a SamplerParams, &'a RunShape, PhantomData<fn(&mut T)>);

impl<T: Eval<Categorical> + ?Sized> Visitor for CategoricalKernel<'_, T> {
    type Output = Result<Option<BoxedKernel<Categorical, T>>, ParamError>;
    fn visit<S: SamplerKind>(self) -> Self::Output {
        S::categorical(self.0, self.1)
    }
}

/// What a sampler runs as on a model of one domain: the input of the chain runners.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum SamplerPlan {
    /// A kernel, run by [`run_chains`](crate::binary::run_chains) on binary models and by
    /// [`run_label_chains`](crate::labels::run_label_chains) on ordinal and categorical ones.
    Kernel(Sampler),
    /// The second-order schedule, run by [`run_ab2_chains`](crate::ab2::run_ab2_chains)
    /// (binary) or [`run_ab2_ordinal_chains`](crate::ab2::run_ab2_ordinal_chains).
    Ab2(Ab2Settings),
}

impl SamplerPlan {
    /// The first-order sampler of the plan (AB-2: its first, first-order phase).
    pub fn first_order(&self) -> Sampler {
        match self {
            SamplerPlan::Kernel(sampler) => *sampler,
            SamplerPlan::Ab2(s) => registry::first_phase(s),
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
        match self {
            SamplerPlan::Kernel(s) => (s.entry.min_burn_in)(&s.params, burn_in, steps),
            SamplerPlan::Ab2(_) => burn_in,
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
    kind: Kind,
    reads_rbm_transpose: bool,
    driver: fn(&SamplerParams, Domain, u64) -> Result<Driver, ParamError>,
    is_tuned: fn(&SamplerParams) -> bool,
    step_balance: fn(&SamplerParams) -> Option<(f64, f64)>,
    langevin_step: fn(&SamplerParams) -> Option<LangevinStep>,
    min_burn_in: fn(&SamplerParams, u64, u64) -> u64,
    plan: fn(Sampler) -> SamplerPlan,
}

impl SamplerEntry {
    /// The entry of sampler `S`, of kind `kind`.
    const fn of<S: SamplerKind>(kind: Kind) -> Self {
        Self {
            name: S::NAME,
            domains: S::DOMAINS,
            params: S::PARAMS,
            description: S::DESCRIPTION,
            demo: S::DEMO,
            kind,
            reads_rbm_transpose: S::READS_RBM_TRANSPOSE,
            driver: S::driver,
            is_tuned: S::is_tuned,
            step_balance: S::step_balance,
            langevin_step: S::langevin_step,
            min_burn_in: S::min_burn_in,
            plan: S::plan,
        }
    }

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
        let sampler = Sampler::new(self, params);
        sampler.param(
            sampler
                .plan_unchecked()
                .first_order()
                .validate(Domain::Binary, &RunShape::default()),
        )?;
        Ok(sampler)
    }
}

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
    /// `entry` with `params`, unchecked.
    pub(crate) const fn new(entry: &'static SamplerEntry, params: SamplerParams) -> Self {
        Self { entry, params }
    }

    /// The sampler `name` with its parameters at their defaults but where `set` changes them,
    /// checked as [`SamplerEntry::with`] checks them.
    ///
    /// # Examples
    ///
    /// ```
    /// use langevin_std::samplers::Sampler;
    ///
    /// let dmala = Sampler::named("dmala", |p| (p.step, p.balance) = (0.4, 0.6)).unwrap();
    /// assert_eq!(dmala.step_balance(), (0.4, 0.6));
    /// assert!(Sampler::named("dmala", |p| p.step = -1.0).is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// [`SamplerError::Unknown`] for an unknown name, and the errors of
    /// [`SamplerEntry::with`].
    pub fn named(name: &str, set: impl FnOnce(&mut SamplerParams)) -> Result<Self, SamplerError> {
        let mut params = SamplerParams::DEFAULT;
        set(&mut params);
        find(name)?.with(params)
    }

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

    /// What the sampler runs as, whatever the domain.
    fn plan_unchecked(&self) -> SamplerPlan {
        (self.entry.plan)(*self)
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
        Ok(self.plan_unchecked())
    }

    /// [`plan`](Self::plan), with the parameters checked for a run of this shape.
    ///
    /// # Errors
    ///
    /// As [`plan`](Self::plan), and [`SamplerError::Param`] for invalid parameters (ACS: also
    /// a run too short for its tuning plan).
    pub fn plan_for(&self, domain: Domain, shape: &RunShape) -> Result<SamplerPlan, SamplerError> {
        let plan = self.plan(domain)?;
        self.param(plan.first_order().validate(domain, shape))?;
        Ok(plan)
    }

    fn param(&self, outcome: Result<(), ParamError>) -> Result<(), SamplerError> {
        outcome.map_err(|error| SamplerError::Param {
            sampler: self.entry.name,
            error,
        })
    }

    /// Checks that the sampler applies to a label model's domain (as the registry says).
    ///
    /// # Errors
    ///
    /// [`SamplerError::Domain`] for a sampler the domain lacks (GWG on an ordinal model),
    /// [`SamplerError::NotForDomain`] for a window on a categorical model.
    pub fn check_domain(&self, domain: LabelDomain) -> Result<(), SamplerError> {
        self.entry.check_domain(domain.into(), |p| {
            self.entry.params.contains(&p) && self.params.text(p).is_some()
        })
    }

    /// Whether the sampler's chains read an RBM's `Wᵀ` (see
    /// [`BinaryModel::rbm_transpose`](crate::models::BinaryModel::rbm_transpose)): every
    /// sampler that moves through the model's target does; block Gibbs (which samples the
    /// joint from `W`) and Gibbs (which flips one unit at a time from `W`'s columns) do not.
    pub fn reads_rbm_transpose(&self) -> bool {
        self.entry.reads_rbm_transpose
    }

    /// Whether the sampler runs on any binary target: every one does but block Gibbs, which
    /// samples an RBM model's joint.
    pub fn runs_on_any_target(&self) -> bool {
        !matches!(self.driver(Domain::Binary, 0), Ok(Driver::RbmBlocks))
    }

    /// `(step, balance)` where the sampler has them (AB: the initial ones); NaN for the others
    /// (written as `null` in JSON).
    pub fn step_balance(&self) -> (f64, f64) {
        (self.entry.step_balance)(&self.params).unwrap_or((f64::NAN, f64::NAN))
    }

    /// The ordinal window, if the sampler reads one and it is set.
    pub fn window(&self) -> Option<u16> {
        self.params
            .window
            .filter(|_| self.entry.params.contains(&Param::Window))
    }

    /// Whether the sampler adapts its parameters during the burn-in.
    pub fn is_tuned(&self) -> bool {
        (self.entry.is_tuned)(&self.params)
    }

    /// How the sampler's chains are stepped on `domain` in a run of `burn_in` burn-in steps
    /// (which the replica ladder tunes in).
    pub(crate) fn driver(&self, domain: Domain, burn_in: u64) -> Result<Driver, ParamError> {
        (self.entry.driver)(&self.params, domain, burn_in)
    }

    /// The settings of DULA and DMALA, the samplers with batched paths; `None` for the others.
    pub(crate) fn langevin_step(&self) -> Option<LangevinStep> {
        (self.entry.langevin_step)(&self.params)
    }

    /// The settings of the batched path on a model of `kind`, which has one for this
    /// sampler if `has_path`.
    ///
    /// # Errors
    ///
    /// [`RunError::NoBatchedPath`](crate::run::RunError::NoBatchedPath) for a sampler or
    /// model without one.
    pub(crate) fn batched_step(
        &self,
        kind: &str,
        has_path: bool,
    ) -> Result<LangevinStep, crate::run::RunError> {
        self.langevin_step()
            .filter(|_| has_path)
            .ok_or_else(|| crate::run::RunError::no_batched_path(kind, self.name()))
    }

    /// A fresh kernel for one chain of a run of this shape on a binary model, whatever the
    /// model (the window is for ordinal models: binary kernels do not read it).
    ///
    /// # Errors
    ///
    /// [`ParamError`] for invalid parameters (ACS: also a run too short for its tuning plan).
    pub fn kernel_for<B: Boxing<Binary>>(&self, shape: &RunShape) -> Result<B::Kernel, ParamError> {
        self.binary_kernel::<B>(shape, None)
    }

    /// A fresh kernel for one chain of a run of this shape on `model`: like
    /// [`kernel_for`](Self::kernel_for), but DMALA, AB and ACS on an Ising lattice use the
    /// tabulated lattice kernel.
    ///
    /// # Errors
    ///
    /// As [`kernel_for`](Self::kernel_for).
    pub fn kernel_for_model<B: Boxing<Binary>>(
        &self,
        model: &BinaryModel,
        shape: &RunShape,
    ) -> Result<B::Kernel, ParamError> {
        self.binary_kernel::<B>(shape, Some(model))
    }

    fn binary_kernel<B: Boxing<Binary>>(
        &self,
        shape: &RunShape,
        model: Option<&BinaryModel>,
    ) -> Result<B::Kernel, ParamError> {
        self.entry.kind.visit(BinaryKernel::<B> {
            params: &self.params,
            shape,
            model,
            boxing: PhantomData,
        })
    }

    /// A fresh ordinal kernel for a run of this shape; `None` for Gibbs (which runs on the
    /// model's conditional) and the samplers without an ordinal kernel.
    pub(crate) fn ordinal_kernel<T: Eval<Ordinal> + ?Sized>(
        &self,
        shape: &RunShape,
    ) -> Result<Option<BoxedKernel<Ordinal, T>>, ParamError> {
        self.entry
            .kind
            .visit(OrdinalKernel(&self.params, shape, PhantomData))
    }

    /// A fresh categorical kernel for a run of this shape; `None` for Gibbs (which runs on
    /// the model's conditional) and the samplers without a categorical kernel.
    pub(crate) fn categorical_kernel<T: Eval<Categorical> + ?Sized>(
        &self,
        shape: &RunShape,
    ) -> Result<Option<BoxedKernel<Categorical, T>>, ParamError> {
        self.entry
            .kind
            .visit(CategoricalKernel(&self.params, shape, PhantomData))
    }

    /// Checks the parameters for a run of this shape on a model of this domain by building
    /// the domain's kernel (block Gibbs: its runner checks that the model is an RBM).
    ///
    /// # Errors
    ///
    /// [`ParamError`] for invalid parameters (ACS: also a run too short for its tuning plan).
    pub fn validate(&self, domain: Domain, shape: &RunShape) -> Result<(), ParamError> {
        if let Driver::RbmBlocks = self.driver(domain, shape.burn_in)? {
            return Ok(());
        }
        match domain {
            Domain::Binary => self.kernel_for::<ForModels>(shape).map(|_| ()),
            Domain::Ordinal => self.ordinal_kernel::<OrdinalModel>(shape).map(|_| ()),
            Domain::Categorical => self.categorical_kernel::<Potts>(shape).map(|_| ()),
        }
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
    /// Block Gibbs (it draws the hidden units too) on a model that is not an RBM.
    RbmOnly,
    /// An AB-2 diagonal rule for binary models (the `dlp-*` rules and `dmala`), on a model of
    /// labels.
    BinaryRule {
        /// The rule.
        rule: &'static str,
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
            SamplerError::RbmOnly => f.write_str(BLOCK_GIBBS_NEEDS_RBM),
            SamplerError::BinaryRule { rule } => write!(
                f,
                "the {rule} rule is for binary models; use trace, shift or max on an ordinal model"
            ),
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
                let own_driver = match spec.driver(d, 0).unwrap() {
                    Driver::RbmBlocks => true,
                    Driver::Replicas(_) | Driver::Gibbs(_) => d != Domain::Binary,
                    Driver::Kernel => false,
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
            rwm.plan(Domain::Ordinal).unwrap_err().to_string(),
            "sampler rwm does not apply to ordinal models (use dula, dmala, gibbs, ab, ab2, acs or pt-dmala)"
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
