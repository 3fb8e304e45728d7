//! The parameters of the discrete samplers: their flags, defaults, ranges and help.

use super::SAMPLERS;
use crate::ab2::DiagonalRule;
use langevin_core::baselines::{Balancing, Scan};
use langevin_core::dlmc::Solver;
use std::fmt;

/// A sampler parameter, as the registry lists it per sampler.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Param {
    /// The step size `a`.
    Step,
    /// The balance `b`.
    Balance,
    /// Gibbs' site order.
    Scan,
    /// The random walk's initial flip rate.
    Rate,
    /// Where ACS's search for the largest step starts.
    ACeil,
    /// ACS's largest step, fixed instead of searched.
    AMax,
    /// ACS's smallest step, fixed instead of searched.
    AMin,
    /// The ordinal window.
    Window,
    /// AB-2's choice of the diagonal `D`.
    Diagonal,
    /// AB-2's steps per tuning phase.
    Ab2Tune,
    /// What DMALA adapts during burn-in.
    Adapt,
    /// The acceptance rate an adapted step is tuned toward.
    TargetAcceptance,
    /// Replica exchange: the number of replicas.
    Replicas,
    /// The balancing function of the locally balanced proposal.
    Balancing,
    /// The Hamming ball's radius.
    Radius,
    /// The Hamming ball's block length.
    Block,
    /// The path auxiliary sampler's path length.
    PathLength,
    /// DLMC's time `τ`.
    Time,
    /// DLMC's solver.
    Solver,
}

/// The values a parameter may take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Range {
    /// Finite and `> 0`.
    Positive,
    /// In `(0, 1]`.
    UnitInterval,
    /// In `(0, 1)`.
    OpenUnit,
    /// An integer `≥ 1`.
    AtLeastOne,
    /// Any integer `≥ 0`.
    Count,
    /// One of these names.
    OneOf(&'static [&'static str]),
    /// An integer `≥ 1`, or `auto` (adapted).
    AtLeastOneOrAuto,
    /// Finite and `> 0`, or `auto` (adapted).
    PositiveOrAuto,
}

impl Range {
    /// Whether a number lies in the range (always `false` for [`Range::OneOf`]).
    pub fn contains(self, v: f64) -> bool {
        match self {
            Range::Positive => v.is_finite() && v > 0.0,
            Range::UnitInterval => v > 0.0 && v <= 1.0,
            Range::OpenUnit => v > 0.0 && v < 1.0,
            Range::AtLeastOne => v >= 1.0 && v.fract() == 0.0,
            Range::Count => v >= 0.0 && v.fract() == 0.0,
            Range::OneOf(_) => false,
            Range::AtLeastOneOrAuto => Range::AtLeastOne.contains(v),
            Range::PositiveOrAuto => Range::Positive.contains(v),
        }
    }
}

impl fmt::Display for Range {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Range::Positive => f.write_str("> 0"),
            Range::UnitInterval => f.write_str("(0, 1]"),
            Range::OpenUnit => f.write_str("(0, 1)"),
            Range::AtLeastOne => f.write_str("≥ 1"),
            Range::Count => f.write_str("≥ 0"),
            Range::OneOf(names) => f.write_str(&names.join("|")),
            Range::AtLeastOneOrAuto => f.write_str("≥ 1 or auto"),
            Range::PositiveOrAuto => f.write_str("> 0 or auto"),
        }
    }
}

/// What the registry says about one parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamInfo {
    /// The command-line flag, `--step`.
    pub flag: &'static str,
    /// The default as the command line shows it (`None`: unset unless given).
    pub default: Option<&'static str>,
    /// The values it may take.
    pub range: Range,
    /// What it means, in a few words.
    pub help: &'static str,
}

impl Param {
    /// Every parameter, in the order `--help` lists them.
    pub const ALL: [Param; 19] = [
        Param::Diagonal,
        Param::Ab2Tune,
        Param::Step,
        Param::Balance,
        Param::Scan,
        Param::Rate,
        Param::ACeil,
        Param::AMax,
        Param::AMin,
        Param::Window,
        Param::Adapt,
        Param::TargetAcceptance,
        Param::Replicas,
        Param::Balancing,
        Param::Radius,
        Param::Block,
        Param::PathLength,
        Param::Time,
        Param::Solver,
    ];

    /// The registry's description of the parameter.
    pub fn info(self) -> ParamInfo {
        let (flag, default, range, help) = match self {
            Param::Step => (
                "--step",
                Some("0.2"),
                Range::Positive,
                "Step size `a` in x-units (tuned samplers: where tuning starts)",
            ),
            Param::Balance => (
                "--balance",
                Some("0.5"),
                Range::UnitInterval,
                "Balance `b`; 0.5 is the discrete Langevin proposal (tuned samplers: where tuning starts)",
            ),
            Param::Scan => (
                "--scan",
                Some("systematic"),
                Range::OneOf(&["systematic", "random"]),
                "Site order of Gibbs",
            ),
            Param::Rate => (
                "--rate",
                None,
                Range::OpenUnit,
                "Initial flip rate (unset: 1/d)",
            ),
            Param::ACeil => (
                "--a-ceil",
                Some("5"),
                Range::Positive,
                "Where the search for the largest step starts",
            ),
            Param::AMax => (
                "--a-max",
                None,
                Range::Positive,
                "Largest step, fixed instead of searched (with --a-min)",
            ),
            Param::AMin => (
                "--a-min",
                None,
                Range::Positive,
                "Smallest step, fixed instead of searched (with --a-max)",
            ),
            Param::Window => (
                "--window",
                None,
                Range::AtLeastOne,
                "Ordinal models: proposals move each coordinate by at most W",
            ),
            Param::Diagonal => (
                "--diagonal",
                Some("trace"),
                Range::OneOf(&["trace", "shift", "max", "dlp-trace"]),
                "How the diagonal D that makes W + D positive semidefinite is chosen",
            ),
            Param::Ab2Tune => (
                "--ab2-tune",
                Some("10000"),
                Range::Count,
                "Steps of each of the two tuning phases, taken before --burn-in",
            ),
            Param::Adapt => (
                "--adapt",
                None,
                Range::OneOf(&["acceptance"]),
                "acceptance: the step, as an expected number of changes (from 3), tuned during burn-in toward --target-acceptance, then fixed",
            ),
            Param::TargetAcceptance => (
                "--target-acceptance",
                Some("0.574"),
                Range::OpenUnit,
                "The acceptance rate --adapt acceptance tunes toward",
            ),
            Param::Replicas => (
                "--replicas",
                Some("4"),
                Range::AtLeastOne,
                "Replicas of replica exchange, the cold one first",
            ),
            Param::Balancing => (
                "--balancing",
                Some("sqrt"),
                Range::OneOf(&["sqrt", "barker"]),
                "Balancing function φ(t) of the locally balanced proposal: √t or t/(1+t)",
            ),
            Param::Radius => (
                "--radius",
                Some("1"),
                Range::AtLeastOne,
                "Hamming-ball radius r (at most 3 and at most the block length)",
            ),
            Param::Block => (
                "--block",
                Some("10"),
                Range::AtLeastOne,
                "Hamming-ball block length k (at most 32); blocks are updated in turn, one per step",
            ),
            Param::PathLength => (
                "--path-length",
                Some("auto"),
                Range::AtLeastOneOrAuto,
                "Moves per path proposal; auto: from 1, adapted toward acceptance 0.574 during burn-in, then fixed",
            ),
            Param::Time => (
                "--time",
                Some("auto"),
                Range::PositiveOrAuto,
                "Time τ of DLMC's continuous-time chains; auto: from e/Σλ, log τ adapted toward acceptance 0.574 during burn-in, then fixed",
            ),
            Param::Solver => (
                "--solver",
                Some("auto"),
                Range::OneOf(&["auto", "euler", "interpolate"]),
                "DLMC's solver; auto: interpolate (the exact two-state solution) on binary models, euler on categorical ones",
            ),
        };
        ParamInfo {
            flag,
            default,
            range,
            help,
        }
    }

    /// The samplers that read the parameter, in registry order.
    pub fn samplers(self) -> impl Iterator<Item = &'static str> {
        SAMPLERS
            .iter()
            .filter(move |e| e.params.contains(&self))
            .map(|e| e.name)
    }

    /// The `--help` text: what the parameter means, its range and the samplers that read it.
    pub fn help(self) -> String {
        let info = self.info();
        let users: Vec<&str> = self.samplers().collect();
        format!(
            "{} [range: {}] [used by: {}]",
            info.help,
            info.range,
            users.join(", ")
        )
    }
}

/// The parameters of every sampler; each reads its own ([`SamplerEntry::params`]) and ignores
/// the rest.
///
/// [`SamplerEntry::params`]: super::SamplerEntry::params
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct SamplerParams {
    /// Step `a`.
    pub step: f64,
    /// Balance `b`.
    pub balance: f64,
    /// Gibbs' site order.
    pub scan: Scan,
    /// The random walk's initial flip rate (`None`: `1/d`).
    pub rate: Option<f64>,
    /// Where ACS's search for the largest step starts.
    pub a_ceil: f64,
    /// ACS's `(a_max, a_min)`, fixed instead of searched.
    pub fixed_steps: Option<(f64, f64)>,
    /// The ordinal window.
    pub window: Option<u16>,
    /// AB-2's rule for `D`.
    pub diagonal: DiagonalRule,
    /// AB-2's steps per tuning phase.
    pub ab2_tune: u64,
    /// What DMALA adapts during burn-in (`None`: nothing, a fixed step).
    pub adapt: Option<Adapt>,
    /// The acceptance rate an adapted step is tuned toward.
    pub target_acceptance: f64,
    /// Replica exchange: the number of replicas.
    pub replicas: usize,
    /// The locally balanced proposal's balancing function.
    pub balancing: Balancing,
    /// The Hamming ball's radius.
    pub radius: usize,
    /// The Hamming ball's block length.
    pub block: usize,
    /// The path auxiliary sampler's path length (`None`: adapted during burn-in).
    pub path_length: Option<usize>,
    /// DLMC's time (`None`: adapted during burn-in).
    pub time: Option<f64>,
    /// DLMC's solver (`None`: the domain's default).
    pub solver: Option<Solver>,
}

/// What a sampler adapts during burn-in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Adapt {
    /// The step, expressed as an expected number of changes, toward a target acceptance rate.
    Acceptance,
}

impl Adapt {
    /// The name as the command line spells it.
    pub fn name(self) -> &'static str {
        match self {
            Adapt::Acceptance => "acceptance",
        }
    }
}

impl SamplerParams {
    /// The defaults [`Param::info`] states.
    pub const DEFAULT: Self = Self {
        step: 0.2,
        balance: 0.5,
        scan: Scan::Systematic,
        rate: None,
        a_ceil: 5.0,
        fixed_steps: None,
        window: None,
        diagonal: DiagonalRule::Trace,
        ab2_tune: 10_000,
        adapt: None,
        target_acceptance: 0.574,
        replicas: 4,
        balancing: Balancing::Sqrt,
        radius: 1,
        block: 10,
        path_length: None,
        time: None,
        solver: None,
    };
}

impl Default for SamplerParams {
    /// [`SamplerParams::DEFAULT`].
    fn default() -> Self {
        Self::DEFAULT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stated_defaults_are_the_defaults() {
        let p = SamplerParams::default();
        let text = |param: Param| param.info().default.map(str::to_string);
        assert_eq!(text(Param::Step), Some(p.step.to_string()));
        assert_eq!(text(Param::Balance), Some(p.balance.to_string()));
        assert_eq!(text(Param::ACeil), Some(p.a_ceil.to_string()));
        assert_eq!(text(Param::Ab2Tune), Some(p.ab2_tune.to_string()));
        assert_eq!(text(Param::Replicas), Some(p.replicas.to_string()));
        assert_eq!(text(Param::Diagonal).as_deref(), Some(p.diagonal.name()));
        assert_eq!(text(Param::Scan).as_deref(), Some("systematic"));
        assert_eq!(
            text(Param::TargetAcceptance),
            Some(p.target_acceptance.to_string())
        );
        assert_eq!(p.scan, Scan::Systematic);
        for param in [
            Param::Rate,
            Param::AMax,
            Param::AMin,
            Param::Window,
            Param::Adapt,
        ] {
            assert_eq!(param.info().default, None, "{param:?}");
        }
        assert_eq!(text(Param::Balancing).as_deref(), Some(p.balancing.name()));
        assert_eq!(text(Param::Radius), Some(p.radius.to_string()));
        assert_eq!(text(Param::Block), Some(p.block.to_string()));
        for param in [Param::Rate, Param::AMax, Param::AMin, Param::Window] {
            assert_eq!(param.info().default, None, "{param:?}");
        }
        assert!(p.rate.is_none() && p.fixed_steps.is_none() && p.window.is_none());
        assert_eq!(text(Param::PathLength).as_deref(), Some("auto"));
        assert!(p.path_length.is_none());
        assert_eq!(text(Param::Time).as_deref(), Some("auto"));
        assert_eq!(text(Param::Solver).as_deref(), Some("auto"));
        assert!(p.time.is_none() && p.solver.is_none());
    }

    #[test]
    fn every_parameter_is_read_by_some_sampler() {
        for param in Param::ALL {
            assert!(param.samplers().next().is_some(), "{param:?}");
        }
    }

    /// The ranges the registry states are the ones the kernels enforce.
    #[test]
    fn stated_ranges_agree_with_the_kernels() {
        let probes = [-1.0, 0.0, 1e-9, 0.5, 1.0, 1.5, f64::INFINITY, f64::NAN];
        let check = |name: &str, param: Param, set: &dyn Fn(&mut SamplerParams, f64)| {
            let entry = super::super::find(name).unwrap();
            for v in probes {
                let mut p = SamplerParams::default();
                set(&mut p, v);
                let ok = entry.with(p).is_ok();
                assert_eq!(ok, param.info().range.contains(v), "{name} {param:?} = {v}");
            }
        };
        check("dmala", Param::Step, &|p, v| p.step = v);
        check("dula", Param::Balance, &|p, v| p.balance = v);
        check("rwm", Param::Rate, &|p, v| p.rate = Some(v));
        for (v, ok) in [(0usize, false), (1, true), (7, true)] {
            let p = SamplerParams {
                path_length: Some(v),
                ..SamplerParams::default()
            };
            assert_eq!(
                super::super::find("pas").unwrap().with(p).is_ok(),
                ok,
                "{v}"
            );
            assert_eq!(Param::PathLength.info().range.contains(v as f64), ok);
        }
        for v in probes {
            let p = SamplerParams {
                time: Some(v),
                ..SamplerParams::default()
            };
            let ok = super::super::find("dlmc").unwrap().with(p).is_ok();
            assert_eq!(ok, Param::Time.info().range.contains(v), "time {v}");
        }
        check("dmala", Param::TargetAcceptance, &|p, v| {
            p.adapt = Some(Adapt::Acceptance);
            p.target_acceptance = v;
        });
    }
}
