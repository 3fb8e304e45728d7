//! The parameters of the discrete samplers, declared once in one typed table ([`Param`] and
//! [`SamplerParams`] are generated from it): each with its field and type, default, flag,
//! range and help. The command line's arguments ([`Param::arg`]), `--help`, the defaults, the
//! README's parameter table ([`markdown_table`]), the Python package's keywords and the
//! summary's option list ([`SamplerParams::options`]) all read it.

use super::{Domain, SAMPLERS};
use crate::ab2::DiagonalRule;
use langevin_core::baselines::{Balancing, Scan};
use langevin_core::dlmc::Solver;
use std::fmt;
use std::num::{ParseFloatError, ParseIntError};
use std::str::FromStr;

/// A parameter's values, named: the choices of an enumerated parameter, in the order `--help`
/// lists them.
pub trait Choice: Copy + PartialEq + 'static {
    /// The names, as the command line spells them.
    const NAMES: &'static [&'static str];
    /// The values, one per name.
    const VALUES: &'static [Self];
    /// What each value means, one line per name.
    const HELP: &'static [&'static str];

    /// The value named `name`.
    ///
    /// # Errors
    ///
    /// [`ValueTextError::UnknownChoice`], listing the names, when none is `name`.
    fn named(name: &str) -> Result<Self, ValueTextError> {
        Self::NAMES
            .iter()
            .zip(Self::VALUES)
            .find(|(n, _)| **n == name)
            .map(|(_, v)| *v)
            .ok_or_else(|| ValueTextError::UnknownChoice {
                text: name.to_owned(),
                expected: Self::NAMES,
            })
    }

    /// The name of `value` (`None` for a value no name stands for).
    fn name_of(value: &Self) -> Option<&'static str> {
        Self::NAMES
            .iter()
            .zip(Self::VALUES)
            .find(|(_, v)| *v == value)
            .map(|(n, _)| *n)
    }
}

impl Choice for Scan {
    const NAMES: &'static [&'static str] = &["systematic", "random"];
    const VALUES: &'static [Self] = &[Scan::Systematic, Scan::Random];
    const HELP: &'static [&'static str] = &[
        "Sites 0, 1, …, d−1 in turn (on an Ising lattice: the checkerboard order, with tabulated conditionals)",
        "d uniformly drawn sites per sweep",
    ];
}

impl Choice for Balancing {
    const NAMES: &'static [&'static str] = &["sqrt", "barker"];
    const VALUES: &'static [Self] = &[Balancing::Sqrt, Balancing::Barker];
    const HELP: &'static [&'static str] = &["φ(t) = √t", "Barker's φ(t) = t/(1+t)"];
}

impl Choice for DiagonalRule {
    const NAMES: &'static [&'static str] = &["trace", "shift", "max", "dlp-trace"];
    const VALUES: &'static [Self] = &[
        DiagonalRule::Trace,
        DiagonalRule::Shift { eps: 1e-3 },
        DiagonalRule::Max,
        DiagonalRule::DlpTrace { floor: 0.05 },
    ];
    const HELP: &'static [&'static str] = &[
        "Smallest trace (the diagonal SDP)",
        "A multiple of the identity: D = max(ε, −λ_min(W)) I",
        "Smallest largest eigenvalue of W + D (accelerated projected gradient on a smoothing, started from the trace choice; at most 200 eigendecompositions)",
        "First order instead: the discrete Langevin proposal (balance 1/2) with the per-coordinate step a / (2 D_ii) from the trace choice (D_ii floored at 5% of the mean), step tuned",
    ];
}

impl Choice for bool {
    const NAMES: &'static [&'static str] = &["true", "false"];
    const VALUES: &'static [Self] = &[true, false];
    const HELP: &'static [&'static str] = &["Tuned", "Kept as given"];
}

impl Choice for Option<Adapt> {
    const NAMES: &'static [&'static str] = &["acceptance"];
    const VALUES: &'static [Self] = &[Some(Adapt::Acceptance)];
    const HELP: &'static [&'static str] = &["The step, toward a target acceptance rate"];
}

impl Choice for Option<Solver> {
    const NAMES: &'static [&'static str] = &["auto", "euler", "interpolate"];
    const VALUES: &'static [Self] = &[None, Some(Solver::Euler), Some(Solver::Interpolate)];
    const HELP: &'static [&'static str] = &[
        "Interpolate on binary models, Euler on categorical ones",
        "One Euler step of the forward equation",
        "The exact two-state solution (binary models)",
    ];
}

/// How a parameter of type `T` is read from text and written back: the type column of the
/// table.
pub trait Codec<T> {
    /// The value `text` stands for.
    ///
    /// # Errors
    ///
    /// [`ValueTextError`] saying what is wrong with `text`.
    fn parse(text: &str) -> Result<T, ValueTextError>;
    /// The value as text (`None`: unset).
    fn text(value: &T) -> Option<String>;
    /// The names and help of an enumerated parameter's values (empty for the others).
    fn choices() -> Vec<(&'static str, &'static str)> {
        Vec::new()
    }
}

/// A number, always set.
#[derive(Debug)]
pub struct Number;
/// A number, or unset (`None`) unless given.
#[derive(Debug)]
pub struct Unset;
/// An integer `≥ 1`, or unset (`None`) unless given.
#[derive(Debug)]
pub struct UnsetAtLeastOne;
/// A number, or `auto` (`None`: adapted by the sampler).
#[derive(Debug)]
pub struct OrAuto;
/// One of the names of a [`Choice`].
#[derive(Debug)]
pub struct Named;

fn number<T: FromStr>(text: &str) -> Result<T, ValueTextError>
where
    T::Err: Into<NumberError>,
{
    text.parse()
        .map_err(|e: T::Err| ValueTextError::NotANumber {
            text: text.to_owned(),
            source: e.into(),
        })
}

impl<T: FromStr + fmt::Display> Codec<T> for Number
where
    T::Err: Into<NumberError>,
{
    fn parse(text: &str) -> Result<T, ValueTextError> {
        number(text)
    }
    fn text(value: &T) -> Option<String> {
        Some(value.to_string())
    }
}

impl<T: FromStr + fmt::Display> Codec<Option<T>> for Unset
where
    T::Err: Into<NumberError>,
{
    fn parse(text: &str) -> Result<Option<T>, ValueTextError> {
        number(text).map(Some)
    }
    fn text(value: &Option<T>) -> Option<String> {
        value.as_ref().map(T::to_string)
    }
}

impl Codec<Option<u16>> for UnsetAtLeastOne {
    fn parse(text: &str) -> Result<Option<u16>, ValueTextError> {
        match number(text)? {
            0 => Err(ValueTextError::BelowOne),
            v => Ok(Some(v)),
        }
    }
    fn text(value: &Option<u16>) -> Option<String> {
        value.as_ref().map(u16::to_string)
    }
}

impl<T: FromStr + fmt::Display> Codec<Option<T>> for OrAuto
where
    T::Err: Into<NumberError>,
{
    fn parse(text: &str) -> Result<Option<T>, ValueTextError> {
        if text == "auto" {
            return Ok(None);
        }
        text.parse()
            .map(Some)
            .map_err(|e: T::Err| ValueTextError::NotANumberOrAuto {
                text: text.to_owned(),
                source: e.into(),
            })
    }
    fn text(value: &Option<T>) -> Option<String> {
        Some(value.as_ref().map_or_else(|| "auto".into(), T::to_string))
    }
}

impl<T: Choice> Codec<T> for Named {
    fn parse(text: &str) -> Result<T, ValueTextError> {
        T::named(text)
    }
    fn text(value: &T) -> Option<String> {
        T::name_of(value).map(str::to_string)
    }
    fn choices() -> Vec<(&'static str, &'static str)> {
        T::NAMES
            .iter()
            .copied()
            .zip(T::HELP.iter().copied())
            .collect()
    }
}

/// A parameter's value whose text does not read as the parameter's type.
#[derive(Debug, thiserror::Error)]
#[error("{reason}")]
pub struct ParamValueError {
    /// The parameter.
    pub param: Param,
    /// What is wrong with the text.
    pub reason: ValueTextError,
}

/// What is wrong with a parameter's text ([`Codec::parse`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ValueTextError {
    /// Not a number of the parameter's type.
    #[error("{source}")]
    NotANumber {
        /// The text.
        text: String,
        /// Why it does not read as the type.
        source: NumberError,
    },
    /// Neither a number of the parameter's type nor `auto`.
    #[error("expected a number or `auto`: {source}")]
    NotANumberOrAuto {
        /// The text.
        text: String,
        /// Why it does not read as the type.
        source: NumberError,
    },
    /// Zero, for a parameter that is at least 1.
    #[error("must be at least 1")]
    BelowOne,
    /// None of the names of an enumerated parameter.
    #[error("expected one of {}", .expected.join(", "))]
    UnknownChoice {
        /// The text.
        text: String,
        /// The names, in the order `--help` lists them.
        expected: &'static [&'static str],
    },
}

/// Why a text does not read as a number of a parameter's type: the standard library's parse
/// error (its message is the standard library's).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NumberError {
    /// Not an integer of the type (or out of its range).
    #[error(transparent)]
    Int(#[from] ParseIntError),
    /// Not a floating-point number.
    #[error(transparent)]
    Float(#[from] ParseFloatError),
}

/// What the table says about one parameter, beside its field.
struct Row {
    flag: &'static str,
    field: &'static str,
    range: Range,
    help: &'static str,
    requires: Option<Param>,
    summary: bool,
    domains: &'static [Domain],
    choices: fn() -> Vec<(&'static str, &'static str)>,
}

/// The table: one row per parameter, in the order `--help` lists them. A row is the
/// parameter's doc line, `Variant field: Type = default, Codec, "--flag", range, "help"`,
/// then `requires Other` where the flag needs another one, `summary true` where the summary
/// lists the value (when the sampler reads it), and `domains [..]` where the parameter applies
/// to models of some domains only.
macro_rules! params {
    ($(
        #[doc = $doc:literal]
        $variant:ident $field:ident : $ty:ty = $default:expr, $codec:ident, $flag:literal,
        $range:expr, $help:literal $(, requires $req:ident)? $(, summary $summary:literal)?
        $(, domains $domains:expr)? ;
    )*) => {
        /// A sampler parameter, as the registry lists it per sampler.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum Param {
            $(#[doc = $doc] $variant,)*
        }

        impl Param {
            /// Every parameter, in the order `--help` lists them.
            pub const ALL: [Param; [$(stringify!($variant)),*].len()] = [$(Param::$variant),*];

            fn row(self) -> Row {
                match self {
                    $(Param::$variant => Row {
                        flag: $flag,
                        field: stringify!($field),
                        range: $range,
                        help: $help,
                        requires: None $(.or(Some(Param::$req)))?,
                        summary: false $(|| $summary)?,
                        domains: None::<&[Domain]> $(.or(Some($domains)))?.unwrap_or(&Domain::ALL),
                        choices: <$codec as Codec<$ty>>::choices,
                    },)*
                }
            }
        }

        /// The parameters of every sampler; each reads its own ([`SamplerEntry::params`]) and
        /// ignores the rest.
        ///
        /// [`SamplerEntry::params`]: super::SamplerEntry::params
        #[derive(Clone, Copy, Debug, PartialEq)]
        #[non_exhaustive]
        pub struct SamplerParams {
            $(#[doc = $doc] pub $field: $ty,)*
        }

        impl SamplerParams {
            /// The defaults the table states.
            pub const DEFAULT: Self = Self { $($field: $default,)* };

            /// Sets `param` to the value `text` stands for (as the command line spells it).
            ///
            /// # Errors
            ///
            /// [`ParamValueError`] saying what is wrong with `text`; the parameter is left as
            /// it was.
            pub fn set(&mut self, param: Param, text: &str) -> Result<(), ParamValueError> {
                let reason = |reason| ParamValueError { param, reason };
                match param {
                    $(Param::$variant => {
                        self.$field = <$codec as Codec<$ty>>::parse(text).map_err(reason)?;
                    })*
                }
                Ok(())
            }

            /// The value of `param` as the command line spells it (`None`: unset).
            pub fn text(&self, param: Param) -> Option<String> {
                match param {
                    $(Param::$variant => <$codec as Codec<$ty>>::text(&self.$field),)*
                }
            }
        }
    };
}

params! {
    /// AB-2's choice of the diagonal `D`.
    Diagonal diagonal: DiagonalRule = DiagonalRule::Trace, Named, "--diagonal",
        Range::OneOf(<DiagonalRule as Choice>::NAMES),
        "How the diagonal D that makes W + D positive semidefinite is chosen";
    /// AB-2's steps per tuning phase.
    Ab2Tune ab2_tune: u64 = 10_000, Number, "--ab2-tune", Range::Count,
        "Steps of each of the two tuning phases, taken before --burn-in";
    /// The step size `a`.
    Step step: f64 = 0.2, Number, "--step", Range::Positive,
        "Step size `a` in x-units (tuned samplers: where tuning starts)";
    /// The balance `b`.
    Balance balance: f64 = 0.5, Number, "--balance", Range::UnitInterval,
        "Balance `b`; 0.5 is the discrete Langevin proposal (tuned samplers: where tuning starts)";
    /// Whether AB tunes the balance as well as the step.
    TuneBalance tune_balance: bool = true, Named, "--tune-balance",
        Range::OneOf(<bool as Choice>::NAMES),
        "Whether the balance is tuned too; false keeps --balance (at 0.5: DMALA with its step tuned by the same rule)";
    /// Gibbs' site order.
    Scan scan: Scan = Scan::Systematic, Named, "--scan", Range::OneOf(<Scan as Choice>::NAMES),
        "Site order of Gibbs", summary true;
    /// The random walk's initial flip rate (`None`: `1/d`).
    Rate rate: Option<f64> = None, Unset, "--rate", Range::OpenUnit,
        "Initial flip rate (unset: 1/d)";
    /// Where ACS's search for the largest step starts.
    ACeil a_ceil: f64 = 5.0, Number, "--a-ceil", Range::Positive,
        "Where the search for the largest step starts";
    /// ACS's largest step, fixed instead of searched (with `a_min`).
    AMax a_max: Option<f64> = None, Unset, "--a-max", Range::Positive,
        "Largest step, fixed instead of searched (with --a-min)", requires AMin;
    /// ACS's smallest step, fixed instead of searched (with `a_max`).
    AMin a_min: Option<f64> = None, Unset, "--a-min", Range::Positive,
        "Smallest step, fixed instead of searched (with --a-max)", requires AMax;
    /// The ordinal window.
    Window window: Option<u16> = None, UnsetAtLeastOne, "--window", Range::AtLeastOne,
        "Ordinal models: proposals move each coordinate by at most W", domains &[Domain::Ordinal];
    /// What DMALA adapts during burn-in (`None`: nothing, a fixed step).
    Adapt adapt: Option<Adapt> = None, Named, "--adapt",
        Range::OneOf(<Option<Adapt> as Choice>::NAMES),
        "acceptance: the step, as an expected number of changes (from 3), tuned during burn-in toward --target-acceptance, then fixed";
    /// The acceptance rate an adapted step is tuned toward.
    TargetAcceptance target_acceptance: f64 = 0.574, Number, "--target-acceptance",
        Range::OpenUnit, "The acceptance rate --adapt acceptance tunes toward";
    /// Replica exchange: the number of replicas.
    Replicas replicas: usize = 4, Number, "--replicas", Range::AtLeastOne,
        "Replicas of replica exchange, the cold one first";
    /// The locally balanced proposal's balancing function.
    Balancing balancing: Balancing = Balancing::Sqrt, Named, "--balancing",
        Range::OneOf(<Balancing as Choice>::NAMES),
        "Balancing function φ(t) of the locally balanced proposal: √t or t/(1+t)", summary true;
    /// The Hamming ball's radius.
    Radius radius: usize = 1, Number, "--radius", Range::AtLeastOne,
        "Hamming-ball radius r (at most 3 and at most the block length)", summary true;
    /// The Hamming ball's block length.
    Block block: usize = 10, Number, "--block", Range::AtLeastOne,
        "Hamming-ball block length k (at most 32); blocks are updated in turn, one per step", summary true;
    /// The path auxiliary sampler's path length (`None`: adapted during burn-in).
    PathLength path_length: Option<usize> = None, OrAuto, "--path-length",
        Range::AtLeastOneOrAuto,
        "Moves per path proposal; auto: from 1, adapted toward acceptance 0.574 during burn-in, then fixed";
    /// DLMC's time `τ` (`None`: adapted during burn-in).
    Time time: Option<f64> = None, OrAuto, "--time", Range::PositiveOrAuto,
        "Time τ of DLMC's continuous-time chains; auto: from e/Σλ, log τ adapted toward acceptance 0.574 during burn-in, then fixed";
    /// DLMC's solver (`None`: the domain's default).
    Solver solver: Option<Solver> = None, Named, "--solver",
        Range::OneOf(<Option<Solver> as Choice>::NAMES),
        "DLMC's solver; auto: interpolate (the exact two-state solution) on binary models, euler on categorical ones";
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
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamInfo {
    /// The command-line flag, `--step`.
    pub flag: &'static str,
    /// The default as the command line shows it (`None`: unset unless given).
    pub default: Option<String>,
    /// The values it may take.
    pub range: Range,
    /// What it means, in a few words.
    pub help: &'static str,
}

impl Param {
    /// The parameters that fix a sampler's proposal: given either, a sampler that adapts its
    /// step by default keeps the proposal as given ([`SamplerParams::adapt_by_default`]).
    pub const PROPOSAL: [Param; 2] = [Param::Step, Param::Balance];

    /// The registry's description of the parameter.
    pub fn info(self) -> ParamInfo {
        let row = self.row();
        ParamInfo {
            flag: row.flag,
            default: SamplerParams::DEFAULT.text(self),
            range: row.range,
            help: row.help,
        }
    }

    /// The name of its field in [`SamplerParams`] (and of its argument's id and its keyword):
    /// the flag without `--`, dashes as underscores.
    pub fn field(self) -> &'static str {
        self.row().field
    }

    /// The parameter whose field is `field`.
    pub fn from_field(field: &str) -> Option<Param> {
        Param::ALL.into_iter().find(|p| p.field() == field)
    }

    /// Whether a run's summary lists the value (for a sampler that reads it).
    pub fn in_summary(self) -> bool {
        self.row().summary
    }

    /// Whether the parameter applies to models of this domain (samplers on other domains
    /// refuse it).
    pub fn applies_to(self, domain: Domain) -> bool {
        self.row().domains.contains(&domain)
    }

    /// The parameter the flag needs beside it (`--a-max` needs `--a-min`).
    pub fn requires(self) -> Option<Param> {
        self.row().requires
    }

    /// The names and help of the values of an enumerated parameter (empty for the others).
    pub fn choices(self) -> Vec<(&'static str, &'static str)> {
        (self.row().choices)()
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

    /// The command-line argument: its flag, help, default and the values it accepts (checked
    /// by [`SamplerParams::set`] as it is parsed). Its id is [`field`](Self::field).
    pub fn arg(self) -> clap::Arg {
        use clap::builder::{PossibleValue, PossibleValuesParser};
        let info = self.info();
        let mut arg = clap::Arg::new(self.field())
            .long(info.flag.trim_start_matches("--"))
            .value_name(self.field().to_uppercase())
            .help(self.help())
            .allow_negative_numbers(true);
        let choices = self.choices();
        arg = if choices.is_empty() {
            arg.value_parser(move |text: &str| {
                let mut p = SamplerParams::DEFAULT;
                p.set(self, text).map(|()| text.to_string())
            })
        } else {
            arg.value_parser(PossibleValuesParser::new(
                choices
                    .into_iter()
                    .map(|(name, help)| PossibleValue::new(name).help(help)),
            ))
        };
        if let Some(default) = info.default {
            arg = arg.default_value(default);
        }
        if let Some(other) = self.requires() {
            arg = arg.requires(other.field());
        }
        arg
    }
}

/// `command` with the arguments of `params` ([`Param::arg`]), in the table's order.
pub fn add_args(command: clap::Command, params: &[Param]) -> clap::Command {
    command.args(
        Param::ALL
            .into_iter()
            .filter(|p| params.contains(p))
            .map(Param::arg),
    )
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
    /// The default of `langevin sample` and of the Python package: a sampler that reads
    /// `adapt` (`reads`), given neither `adapt` nor a parameter of the proposal
    /// ([`Param::PROPOSAL`]) among `given`, adapts its step toward the target acceptance
    /// during burn-in.
    pub fn adapt_by_default(&mut self, reads: &[Param], given: &[Param]) {
        if self.adapt.is_none()
            && reads.contains(&Param::Adapt)
            && !given.iter().any(|p| Param::PROPOSAL.contains(p))
        {
            self.adapt = Some(Adapt::Acceptance);
        }
    }

    /// ACS's `(a_max, a_min)`, fixed instead of searched, when both are given.
    pub fn fixed_steps(&self) -> Option<(f64, f64)> {
        self.a_max.zip(self.a_min)
    }

    /// The parameters of `params` that `matches` holds (given, or by their default), the
    /// others at their defaults (arguments made by [`add_args`]).
    ///
    /// # Errors
    ///
    /// [`ParamValueError`] for a value that does not read as its type (the parser of the
    /// arguments has checked them already).
    pub fn from_matches(
        matches: &clap::ArgMatches,
        params: &[Param],
    ) -> Result<Self, ParamValueError> {
        let mut p = Self::DEFAULT;
        for &param in params {
            if let Some(text) = matches.get_one::<String>(param.field()) {
                p.set(param, text)?;
            }
        }
        Ok(p)
    }

    /// The options a summary lists: those of `reads` marked for it in the table, in the
    /// table's order, each as its field name and value (a number where the value is one).
    pub fn options(&self, reads: &[Param]) -> SummaryOptions {
        SummaryOptions(
            Param::ALL
                .into_iter()
                .filter(|p| p.in_summary() && reads.contains(p))
                .filter_map(|p| {
                    let text = self.text(p)?;
                    let value = serde_json::from_str::<serde_json::Value>(&text)
                        .ok()
                        .filter(serde_json::Value::is_number)
                        .unwrap_or(serde_json::Value::String(text));
                    Some((p.field(), value))
                })
                .collect(),
        )
    }
}

/// The sampler options a summary lists ([`SamplerParams::options`]): field names and values in
/// the table's order, written as a JSON object in that order (a `serde_json::Map` would sort
/// them).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SummaryOptions(pub Vec<(&'static str, serde_json::Value)>);

impl SummaryOptions {
    /// The value of the option named `field`.
    pub fn get(&self, field: &str) -> Option<&serde_json::Value> {
        self.0.iter().find(|(k, _)| *k == field).map(|(_, v)| v)
    }

    /// The field names, in order.
    pub fn keys(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.0.iter().map(|(k, _)| *k)
    }
}

impl serde::Serialize for SummaryOptions {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl Default for SamplerParams {
    /// [`SamplerParams::DEFAULT`].
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// The README's parameter table, generated from the table: one row per parameter with its
/// flag, default, range, the samplers that read it and its help.
pub fn markdown_table() -> String {
    let mut out = String::from(
        "| parameter | default | range | used by | description |\n|---|---|---|---|---|\n",
    );
    for p in Param::ALL {
        let info = p.info();
        let users: Vec<String> = p.samplers().map(|s| format!("`{s}`")).collect();
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            info.flag,
            info.default
                .map_or_else(|| "unset".into(), |d| format!("`{d}`")),
            info.range.to_string().replace('|', "\\|"),
            users.join(", "),
            info.help.replace('|', "\\|"),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stated_defaults_read_back_as_the_defaults() {
        for param in Param::ALL {
            let mut p = SamplerParams::DEFAULT;
            if let Some(text) = param.info().default {
                p.set(param, &text).unwrap();
                assert_eq!(p, SamplerParams::DEFAULT, "{param:?} = {text}");
            }
        }
        assert_eq!(Param::Step.info().default.as_deref(), Some("0.2"));
        assert_eq!(Param::ACeil.info().default.as_deref(), Some("5"));
        assert_eq!(Param::Scan.info().default.as_deref(), Some("systematic"));
        assert_eq!(Param::PathLength.info().default.as_deref(), Some("auto"));
        assert_eq!(Param::Solver.info().default.as_deref(), Some("auto"));
        for param in [
            Param::Rate,
            Param::AMax,
            Param::AMin,
            Param::Window,
            Param::Adapt,
        ] {
            assert_eq!(param.info().default, None, "{param:?}");
        }
    }

    #[test]
    fn set_reads_every_parameter_into_its_own_field() {
        let given = [
            (Param::Diagonal, "max"),
            (Param::Ab2Tune, "7"),
            (Param::Step, "0.3"),
            (Param::Balance, "0.75"),
            (Param::TuneBalance, "false"),
            (Param::Scan, "random"),
            (Param::Rate, "0.1"),
            (Param::ACeil, "2"),
            (Param::AMax, "3"),
            (Param::AMin, "0.5"),
            (Param::Window, "2"),
            (Param::Adapt, "acceptance"),
            (Param::TargetAcceptance, "0.4"),
            (Param::Replicas, "3"),
            (Param::Balancing, "barker"),
            (Param::Radius, "2"),
            (Param::Block, "5"),
            (Param::PathLength, "4"),
            (Param::Time, "0.5"),
            (Param::Solver, "euler"),
        ];
        assert_eq!(given.len(), Param::ALL.len());
        let mut p = SamplerParams::DEFAULT;
        for (param, text) in given {
            p.set(param, text).unwrap();
            assert_eq!(p.text(param).as_deref(), Some(text), "{param:?}");
        }
        assert_eq!(p.diagonal, DiagonalRule::Max);
        assert_eq!((p.step, p.balance, p.scan), (0.3, 0.75, Scan::Random));
        assert!(!p.tune_balance);
        assert_eq!(p.fixed_steps(), Some((3.0, 0.5)));
        assert_eq!((p.window, p.adapt), (Some(2), Some(Adapt::Acceptance)));
        assert_eq!((p.radius, p.block, p.path_length), (2, 5, Some(4)));
        assert_eq!((p.time, p.solver), (Some(0.5), Some(Solver::Euler)));
        let reason = |p: &mut SamplerParams, param, text| p.set(param, text).unwrap_err().reason;
        assert_eq!(reason(&mut p, Param::Window, "0"), ValueTextError::BelowOne);
        let e = reason(&mut p, Param::Scan, "sideways");
        assert!(
            matches!(&e, ValueTextError::UnknownChoice { text, expected }
                if text == "sideways" && *expected == ["systematic", "random"]),
            "{e:?}"
        );
        assert_eq!(e.to_string(), "expected one of systematic, random");
        let e = reason(&mut p, Param::Step, "x");
        assert!(
            matches!(&e, ValueTextError::NotANumber { text, source: NumberError::Float(_) }
                if text == "x"),
            "{e:?}"
        );
        assert_eq!(e.to_string(), "invalid float literal");
        let e = reason(&mut p, Param::PathLength, "-1");
        assert!(
            matches!(
                &e,
                ValueTextError::NotANumberOrAuto {
                    source: NumberError::Int(_),
                    ..
                }
            ),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            "expected a number or `auto`: invalid digit found in string"
        );
        assert_eq!(
            p.step, 0.3,
            "a refused value leaves the parameter as it was"
        );
    }

    #[test]
    fn each_field_is_its_flag_and_each_choice_has_its_help() {
        for param in Param::ALL {
            let flag = param.info().flag;
            assert_eq!(
                flag.trim_start_matches("--").replace('-', "_"),
                param.field()
            );
            assert_eq!(Param::from_field(param.field()), Some(param));
            if let Range::OneOf(names) = param.info().range {
                let choices = param.choices();
                assert_eq!(choices.len(), names.len(), "{param:?}");
                assert!(choices.iter().zip(names).all(|((n, _), m)| n == m));
            } else {
                assert!(param.choices().is_empty(), "{param:?}");
            }
        }
        assert_eq!(Param::AMax.requires(), Some(Param::AMin));
    }

    #[test]
    fn the_step_is_adapted_by_default_unless_the_proposal_is_given() {
        let reads = [Param::Step, Param::Balance, Param::Adapt];
        let adapted = |given: &[Param]| {
            let mut p = SamplerParams::DEFAULT;
            p.adapt_by_default(&reads, given);
            p.adapt
        };
        assert_eq!(adapted(&[]), Some(Adapt::Acceptance));
        assert_eq!(adapted(&[Param::Window]), Some(Adapt::Acceptance));
        assert_eq!(adapted(&[Param::Step]), None);
        assert_eq!(adapted(&[Param::Window, Param::Balance]), None);
        let mut p = SamplerParams::DEFAULT;
        p.adapt_by_default(&[Param::Step], &[]);
        assert_eq!(p.adapt, None, "a sampler that does not read adapt");
    }

    #[test]
    fn the_summary_lists_its_options_with_numbers_as_numbers() {
        let p = SamplerParams::DEFAULT;
        let all = p.options(&Param::ALL);
        let keys: Vec<&str> = all.keys().collect();
        assert_eq!(keys, ["scan", "balancing", "radius", "block"]);
        assert_eq!(all.get("radius"), Some(&serde_json::json!(1)));
        assert_eq!(all.get("scan"), Some(&serde_json::json!("systematic")));
        assert_eq!(
            serde_json::to_string(&p.options(&[Param::Block, Param::Radius])).unwrap(),
            r#"{"radius":1,"block":10}"#,
            "written in the table's order"
        );
        assert!(p.options(&[Param::Step]).0.is_empty());
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
            for name in Param::PathLength.samplers() {
                let entry = super::super::find(name).unwrap();
                assert_eq!(entry.with(p).is_ok(), ok, "{name} {v}");
            }
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
