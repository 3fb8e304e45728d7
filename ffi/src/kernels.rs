//! The kernels a chain runs, chosen by the command line's sampler names and parameters, and
//! their dispatch for each domain.

use crate::{
    LGV_ERR_PARAMETER_NAME, LGV_ERR_PARAMETER_VALUE, LGV_ERR_SIZE_OVERFLOW, LGV_ERR_UNKNOWN_KERNEL,
    LGV_ERR_UNSUPPORTED_KERNEL, LGV_ERR_WINDOW, LgvStatus, param_status,
};
use langevin_core::baselines::{
    Balancing, Gibbs, Gwg, HammingBall, LocallyBalanced, Scan, TunedRandomWalk, ball_size,
};
use langevin_core::binary::FlipProposal;
use langevin_core::categorical::CategoricalProposal;
use langevin_core::dlmc::{
    CategoricalDlmcProposal, DLMC_TARGET_ACCEPTANCE, DlmcProposal, Solver, TunedDlmc,
};
use langevin_core::kernel::{Dmala, Dula};
use langevin_core::ordinal::OrdinalProposal;
use langevin_core::path_auxiliary::{
    PATH_TARGET_ACCEPTANCE, PathAdaptation, PathAuxiliary, PathBuffers,
};
use langevin_core::tuning::{
    AbSettings, AbTuner, AcceptanceSettings, AcceptanceTuner, AcsSettings, AcsTuner,
};
use langevin_core::{Binary, Categorical, Chain, Eval, Kernel, Ordinal, StepError, StepReport};
use rand_xoshiro::Xoshiro256PlusPlus;

/// The fraction of a run (burn-in and kept steps) ACS may spend tuning, as on the command line.
const ACS_BUDGET_FRACTION: f64 = 0.1;

/// The state space of a chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dom {
    Binary,
    Ordinal,
    Categorical,
}

/// A balanced proposal built for the chain's domain.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Props {
    Binary(FlipProposal<'static>),
    Ordinal(OrdinalProposal<'static>),
    Categorical(CategoricalProposal<'static>),
}

impl Props {
    pub(crate) fn new(
        dom: Dom,
        step: f64,
        balance: f64,
        window: Option<u16>,
    ) -> Result<Self, LgvStatus> {
        let p = match dom {
            Dom::Binary => FlipProposal::new(step, balance).map(Props::Binary),
            Dom::Ordinal => OrdinalProposal::new(step, balance)
                .and_then(|p| match window {
                    Some(w) => p.windowed(w),
                    None => Ok(p),
                })
                .map(Props::Ordinal),
            Dom::Categorical => CategoricalProposal::new(step, balance).map(Props::Categorical),
        };
        p.map_err(param_status)
    }
}

/// The kernel of a chain and its state (tuners adapt; the Hamming ball walks its blocks).
#[derive(Debug)]
#[allow(
    clippy::large_enum_variant,
    reason = "no heap: the chain object is caller storage sized for the largest kernel (ACS)"
)]
pub(crate) enum Kind {
    Dula(Props),
    Dmala(Props),
    Ab(AbTuner),
    Adapt(AcceptanceTuner),
    Acs(AcsTuner),
    Gibbs(Gibbs),
    Gwg,
    Rwm(TunedRandomWalk),
    Lb(LocallyBalanced<&'static mut [f64]>),
    HammingBall(HammingBall<&'static mut [f64]>),
    Pas(PathAuxiliary, PathBuffers<'static>),
    PasTuned(PathAdaptation, PathBuffers<'static>),
    Dlmc(Dmala<DlmcProposal>),
    DlmcTuned(TunedDlmc<DlmcProposal>),
    CategoricalDlmc(Dmala<CategoricalDlmcProposal>),
    CategoricalDlmcTuned(TunedDlmc<CategoricalDlmcProposal>),
}

/// Why a step failed: the kernel's error, or a kernel that does not apply to the chain.
pub(crate) enum Failure<E> {
    Step(StepError<E>),
    Unsupported,
}

impl<E> From<StepError<E>> for Failure<E> {
    fn from(e: StepError<E>) -> Self {
        Failure::Step(e)
    }
}

type Stepped<E> = Result<StepReport, Failure<E>>;

/// One step of a binary chain.
pub(crate) fn step_binary<T: Eval<Binary>>(
    kind: &mut Kind,
    target: &mut T,
    chain: &mut Chain<'static, Binary>,
    rng: &mut Xoshiro256PlusPlus,
) -> Stepped<T::Error> {
    Ok(match kind {
        Kind::Dula(Props::Binary(p)) => Kernel::step(&mut Dula::new(*p), target, chain, rng)?,
        Kind::Dmala(Props::Binary(p)) => Kernel::step(&mut Dmala::new(*p), target, chain, rng)?,
        Kind::Ab(k) => Kernel::<Binary>::step(k, target, chain, rng)?,
        Kind::Adapt(k) => Kernel::<Binary>::step(k, target, chain, rng)?,
        Kind::Acs(k) => Kernel::<Binary>::step(k, target, chain, rng)?,
        Kind::Gibbs(k) => Kernel::<Binary>::step(k, target, chain, rng)?,
        Kind::Gwg => Kernel::<Binary>::step(&mut Gwg, target, chain, rng)?,
        Kind::Rwm(k) => Kernel::<Binary>::step(k, target, chain, rng)?,
        Kind::Lb(k) => Kernel::<Binary>::step(k, target, chain, rng)?,
        Kind::HammingBall(k) => Kernel::<Binary>::step(k, target, chain, rng)?,
        Kind::Pas(p, b) => p.step(target, chain, b, rng)?,
        Kind::PasTuned(p, b) => p.step(target, chain, b, rng)?,
        Kind::Dlmc(k) => Kernel::step(k, target, chain, rng)?,
        Kind::DlmcTuned(k) => Kernel::step(k, target, chain, rng)?,
        _ => return Err(Failure::Unsupported),
    })
}

/// One step of an ordinal chain.
pub(crate) fn step_ordinal<T: Eval<Ordinal>>(
    kind: &mut Kind,
    target: &mut T,
    chain: &mut Chain<'static, Ordinal>,
    rng: &mut Xoshiro256PlusPlus,
) -> Stepped<T::Error> {
    Ok(match kind {
        Kind::Dula(Props::Ordinal(p)) => Kernel::step(&mut Dula::new(*p), target, chain, rng)?,
        Kind::Dmala(Props::Ordinal(p)) => Kernel::step(&mut Dmala::new(*p), target, chain, rng)?,
        Kind::Ab(k) => Kernel::<Ordinal>::step(k, target, chain, rng)?,
        Kind::Adapt(k) => Kernel::<Ordinal>::step(k, target, chain, rng)?,
        Kind::Acs(k) => Kernel::<Ordinal>::step(k, target, chain, rng)?,
        Kind::Gibbs(k) => Kernel::<Ordinal>::step(k, target, chain, rng)?,
        _ => return Err(Failure::Unsupported),
    })
}

/// One step of a categorical chain.
pub(crate) fn step_categorical<T: Eval<Categorical>>(
    kind: &mut Kind,
    target: &mut T,
    chain: &mut Chain<'static, Categorical>,
    rng: &mut Xoshiro256PlusPlus,
) -> Stepped<T::Error> {
    Ok(match kind {
        Kind::Dula(Props::Categorical(p)) => Kernel::step(&mut Dula::new(*p), target, chain, rng)?,
        Kind::Dmala(Props::Categorical(p)) => {
            Kernel::step(&mut Dmala::new(*p), target, chain, rng)?
        }
        Kind::Ab(k) => Kernel::<Categorical>::step(k, target, chain, rng)?,
        Kind::Adapt(k) => Kernel::<Categorical>::step(k, target, chain, rng)?,
        Kind::Acs(k) => Kernel::<Categorical>::step(k, target, chain, rng)?,
        Kind::Gibbs(k) => Kernel::<Categorical>::step(k, target, chain, rng)?,
        Kind::Gwg => Kernel::<Categorical>::step(&mut Gwg, target, chain, rng)?,
        Kind::Lb(k) => Kernel::<Categorical>::step(k, target, chain, rng)?,
        Kind::Pas(p, b) => p.step(target, chain, b, rng)?,
        Kind::PasTuned(p, b) => p.step(target, chain, b, rng)?,
        Kind::CategoricalDlmc(k) => Kernel::step(k, target, chain, rng)?,
        Kind::CategoricalDlmcTuned(k) => Kernel::step(k, target, chain, rng)?,
        _ => return Err(Failure::Unsupported),
    })
}

/// The samplers of the command line's registry, with the parameters each reads (flag names
/// without `--`). `None`: the sampler needs more than one chain or the standard library.
const SAMPLERS: &[(&str, Option<&[&str]>)] = &[
    ("dula", Some(&["step", "balance", "window"])),
    (
        "dmala",
        Some(&["step", "balance", "window", "adapt", "target-acceptance"]),
    ),
    ("gibbs", Some(&["scan"])),
    ("gwg", Some(&[])),
    ("rwm", Some(&["rate"])),
    ("ab", Some(&["step", "balance", "tune-balance", "window"])),
    ("ab2", None),
    ("acs", Some(&["a-ceil", "a-max", "a-min", "window"])),
    ("lb", Some(&["balancing"])),
    ("hamming-ball", Some(&["radius", "block"])),
    ("block-gibbs", None),
    ("pas", Some(&["path-length"])),
    ("dlmc", Some(&["time", "solver"])),
    ("pt-dmala", None),
];

/// The samplers a chain can run, as C strings, in the order of [`SAMPLERS`].
pub(crate) const NAMES: [&core::ffi::CStr; 11] = [
    c"dula",
    c"dmala",
    c"gibbs",
    c"gwg",
    c"rwm",
    c"ab",
    c"acs",
    c"lb",
    c"hamming-ball",
    c"pas",
    c"dlmc",
];

/// A sampler name and its parameters, parsed; the command line's defaults where unset.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Spec {
    name: &'static str,
    step: f64,
    balance: f64,
    tune_balance: bool,
    window: Option<u16>,
    adapt: bool,
    target_acceptance: f64,
    scan: Scan,
    rate: Option<f64>,
    a_ceil: f64,
    a_max: Option<f64>,
    a_min: Option<f64>,
    balancing: Balancing,
    radius: usize,
    block: usize,
    path_length: Option<usize>,
    time: Option<f64>,
    solver: Option<Solver>,
}

/// Exact powers of ten representable in an `f64`.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// A decimal number, parsed without the formatting machinery of `core` (whose panics the
/// no-panic link proof would see): `[+-]digits[.digits][(e|E)[+-]digits]` with at most 15
/// significant digits and a value `m · 10^k` with `|k| ≤ 22`. Both `m` and `10^|k|` are exact
/// in an `f64`, so one multiplication or division rounds once: the result is the correctly
/// rounded value, the same as the command line's parser gives. Anything else is refused.
pub(crate) fn number(v: &[u8]) -> Result<f64, LgvStatus> {
    const BAD: LgvStatus = LGV_ERR_PARAMETER_VALUE;
    let (negative, v) = match v.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, v),
    };
    let (mut mantissa, mut digits, mut exp10) = (0u64, 0u32, 0i32);
    let (mut dot, mut any) = (false, false);
    let mut bytes = v.iter();
    let mut exponent = None;
    for &c in bytes.by_ref() {
        match c {
            b'0'..=b'9' => {
                any = true;
                if mantissa == 0 && c == b'0' {
                    exp10 = exp10.saturating_sub(i32::from(dot));
                    continue;
                }
                if digits == 15 {
                    return Err(BAD);
                }
                mantissa = mantissa * 10 + u64::from(c - b'0');
                digits += 1;
                exp10 = exp10.saturating_sub(i32::from(dot));
            }
            b'.' if !dot => dot = true,
            b'e' | b'E' if any => {
                exponent = Some(());
                break;
            }
            _ => return Err(BAD),
        }
    }
    if !any {
        return Err(BAD);
    }
    if exponent.is_some() {
        let rest = bytes.as_slice();
        let (sign, rest) = match rest.split_first() {
            Some((b'-', r)) => (-1, r),
            Some((b'+', r)) => (1, r),
            _ => (1, rest),
        };
        let e = integer(rest, 9_999)?;
        exp10 = exp10.saturating_add(sign * e as i32);
    }
    let scale = |k: i32| POW10.get(k.unsigned_abs() as usize).copied().ok_or(BAD);
    let magnitude = match mantissa {
        0 => 0.0,
        m if exp10 >= 0 => m as f64 * scale(exp10)?,
        m => m as f64 / scale(exp10)?,
    };
    Ok(if negative { -magnitude } else { magnitude })
}

/// A decimal integer at most `max`.
fn integer(v: &[u8], max: usize) -> Result<usize, LgvStatus> {
    if v.is_empty() {
        return Err(LGV_ERR_PARAMETER_VALUE);
    }
    v.iter().try_fold(0usize, |acc, &c| match c {
        b'0'..=b'9' => acc
            .checked_mul(10)
            .and_then(|a| a.checked_add(usize::from(c - b'0')))
            .filter(|&a| a <= max)
            .ok_or(LGV_ERR_PARAMETER_VALUE),
        _ => Err(LGV_ERR_PARAMETER_VALUE),
    })
}

/// The `key=value` pairs of `params` (separated by spaces, tabs, newlines or commas), each
/// key one of `keys`: a pair without `=` is `LGV_ERR_PARAMETER_VALUE`, another key
/// `LGV_ERR_PARAMETER_NAME`.
pub(crate) fn key_values<'p>(
    params: &'p [u8],
    keys: &'static [&'static str],
) -> impl Iterator<Item = Result<(&'static str, &'p [u8]), LgvStatus>> {
    params
        .split(|&b| matches!(b, b' ' | b'\t' | b'\n' | b','))
        .filter(|p| !p.is_empty())
        .map(move |pair| {
            let at = pair
                .iter()
                .position(|&b| b == b'=')
                .ok_or(LGV_ERR_PARAMETER_VALUE)?;
            let (Some(key), Some(value)) = (pair.get(..at), pair.get(at + 1..)) else {
                return Err(LGV_ERR_PARAMETER_VALUE);
            };
            let key = keys
                .iter()
                .find(|k| k.as_bytes() == key)
                .ok_or(LGV_ERR_PARAMETER_NAME)?;
            Ok((*key, value))
        })
}

pub(crate) fn count(v: &[u8]) -> Result<usize, LgvStatus> {
    integer(v, u32::MAX as usize)
}

impl Spec {
    /// Parses `name` and `params` (`key=value` pairs separated by spaces, tabs, newlines or
    /// commas).
    pub(crate) fn parse(name: &[u8], params: &[u8]) -> Result<Self, LgvStatus> {
        let (name, keys) = SAMPLERS
            .iter()
            .find(|(n, _)| n.as_bytes() == name)
            .ok_or(LGV_ERR_UNKNOWN_KERNEL)?;
        let keys = keys.ok_or(LGV_ERR_UNSUPPORTED_KERNEL)?;
        let mut s = Spec {
            name,
            step: 0.2,
            balance: 0.5,
            tune_balance: true,
            window: None,
            adapt: false,
            target_acceptance: 0.574,
            scan: Scan::Systematic,
            rate: None,
            a_ceil: 5.0,
            a_max: None,
            a_min: None,
            balancing: Balancing::Sqrt,
            radius: 1,
            block: 10,
            path_length: None,
            time: None,
            solver: None,
        };
        for pair in key_values(params, keys) {
            match pair? {
                ("step", v) => s.step = number(v)?,
                ("balance", v) => s.balance = number(v)?,
                ("tune-balance", b"true") => s.tune_balance = true,
                ("tune-balance", b"false") => s.tune_balance = false,
                ("window", v) => {
                    let w = integer(v, usize::from(u16::MAX))?;
                    if w == 0 {
                        return Err(LGV_ERR_WINDOW);
                    }
                    s.window = Some(w as u16);
                }
                ("adapt", b"acceptance") => s.adapt = true,
                ("target-acceptance", v) => s.target_acceptance = number(v)?,
                ("scan", b"systematic") => s.scan = Scan::Systematic,
                ("scan", b"random") => s.scan = Scan::Random,
                ("rate", v) => s.rate = Some(number(v)?),
                ("a-ceil", v) => s.a_ceil = number(v)?,
                ("a-max", v) => s.a_max = Some(number(v)?),
                ("a-min", v) => s.a_min = Some(number(v)?),
                ("balancing", b"sqrt") => s.balancing = Balancing::Sqrt,
                ("balancing", b"barker") => s.balancing = Balancing::Barker,
                ("radius", v) => s.radius = count(v)?,
                ("block", v) => s.block = count(v)?,
                ("path-length", b"auto") => s.path_length = None,
                ("path-length", v) => s.path_length = Some(count(v)?),
                ("time", b"auto") => s.time = None,
                ("time", v) => s.time = Some(number(v)?),
                ("solver", b"auto") => s.solver = None,
                ("solver", b"euler") => s.solver = Some(Solver::Euler),
                ("solver", b"interpolate") => s.solver = Some(Solver::Interpolate),
                _ => return Err(LGV_ERR_PARAMETER_VALUE),
            }
        }
        Ok(s)
    }

    /// The `f64` and `u32` scratch lengths the kernel needs on a chain of `dim` coordinates
    /// over `states` values (also checks that the kernel applies to the domain).
    pub(crate) fn scratch(&self, dom: Dom, dim: usize, states: usize) -> Result<Need, LgvStatus> {
        let labels = dom != Dom::Binary;
        let ok = match self.name {
            "gwg" | "lb" | "pas" | "dlmc" => dom != Dom::Ordinal,
            "rwm" | "hamming-ball" => dom == Dom::Binary,
            _ => true,
        };
        if !ok {
            return Err(LGV_ERR_UNSUPPORTED_KERNEL);
        }
        if self.window.is_some() && dom != Dom::Ordinal {
            return Err(LGV_ERR_WINDOW);
        }
        let moves = if labels {
            dim.checked_mul(states).ok_or(LGV_ERR_SIZE_OVERFLOW)?
        } else {
            dim
        };
        Ok(match self.name {
            "lb" => Need {
                weights: moves,
                indices: 0,
            },
            "hamming-ball" => {
                let k =
                    HammingBall::new(self.radius, self.block, [0.0f64; 0]).map_err(param_status)?;
                Need {
                    weights: ball_size(k.block(), k.radius()),
                    indices: 0,
                }
            }
            "pas" => Need {
                weights: moves,
                indices: match self.path_length {
                    Some(l) => l,
                    None => dim.max(1),
                },
            },
            _ => Need::default(),
        })
    }

    /// The kernel for a chain of `dim` coordinates over `states` values, tuning (where it
    /// does) for `burn_in` steps of a run of `burn_in + steps`, working in `weights` and
    /// `indices` (at least [`scratch`](Self::scratch) long).
    #[allow(clippy::too_many_arguments, reason = "the chain's shape and the run's")]
    pub(crate) fn build(
        &self,
        dom: Dom,
        dim: usize,
        states: usize,
        burn_in: u64,
        steps: u64,
        weights: &'static mut [f64],
        indices: &'static mut [u32],
    ) -> Result<Kind, LgvStatus> {
        let need = self.scratch(dom, dim, states)?;
        let weights = weights
            .get_mut(..need.weights)
            .ok_or(crate::LGV_ERR_SCRATCH)?;
        let indices = indices
            .get_mut(..need.indices)
            .ok_or(crate::LGV_ERR_SCRATCH)?;
        let p = param_status;
        Ok(match self.name {
            "dula" => Kind::Dula(Props::new(dom, self.step, self.balance, self.window)?),
            "dmala" if self.adapt => {
                let mut s = AcceptanceSettings::default();
                s.target_acceptance = self.target_acceptance;
                s.budget = burn_in;
                s.window = self.window;
                Kind::Adapt(AcceptanceTuner::new(s).map_err(p)?)
            }
            "dmala" => Kind::Dmala(Props::new(dom, self.step, self.balance, self.window)?),
            "gibbs" => Kind::Gibbs(Gibbs::new(self.scan)),
            "gwg" => Kind::Gwg,
            "rwm" => {
                if let Some(r) = self.rate
                    && !(r > 0.0 && r < 1.0)
                {
                    return Err(crate::LGV_ERR_PARAMETER_OUT_OF_RANGE);
                }
                let initial = self.rate.unwrap_or(1.0 / dim.max(2) as f64);
                Kind::Rwm(TunedRandomWalk::new(initial, burn_in, 0.234).map_err(p)?)
            }
            "ab" => {
                let mut s = AbSettings::default();
                s.step = self.step;
                s.balance = self.balance;
                s.budget = burn_in;
                s.window = self.window;
                s.tune_balance = self.tune_balance;
                Kind::Ab(AbTuner::new(s).map_err(p)?)
            }
            "acs" => {
                let mut s = AcsSettings::default();
                s.a_ceil = self.a_ceil;
                s.fixed_steps = match (self.a_max, self.a_min) {
                    (Some(hi), Some(lo)) => Some((hi, lo)),
                    (None, None) => None,
                    _ => return Err(crate::LGV_ERR_PARAMETER),
                };
                s.total_steps = burn_in.saturating_add(steps);
                s.budget_fraction = ACS_BUDGET_FRACTION;
                s.window = self.window;
                Kind::Acs(AcsTuner::new(s).map_err(p)?)
            }
            "lb" => Kind::Lb(LocallyBalanced::new(self.balancing, weights)),
            "hamming-ball" => {
                Kind::HammingBall(HammingBall::new(self.radius, self.block, weights).map_err(p)?)
            }
            "pas" => {
                let buffers = PathBuffers {
                    weights,
                    path: indices,
                };
                match self.path_length {
                    Some(l) => Kind::Pas(PathAuxiliary::new(l).map_err(p)?, buffers),
                    None => Kind::PasTuned(
                        PathAdaptation::new(1, dim.max(1), burn_in, PATH_TARGET_ACCEPTANCE)
                            .map_err(p)?,
                        buffers,
                    ),
                }
            }
            "dlmc" => self.dlmc(dom, burn_in)?,
            _ => return Err(LGV_ERR_UNSUPPORTED_KERNEL),
        })
    }

    fn dlmc(&self, dom: Dom, burn_in: u64) -> Result<Kind, LgvStatus> {
        let p = param_status;
        let time = self.time.unwrap_or(1.0);
        Ok(match (dom, self.time) {
            (Dom::Binary, fixed) => {
                let q = DlmcProposal::new(self.solver.unwrap_or(Solver::Interpolate), time)
                    .map_err(p)?;
                match fixed {
                    Some(_) => Kind::Dlmc(Dmala::new(q)),
                    None => Kind::DlmcTuned(
                        TunedDlmc::new(q, true, burn_in, DLMC_TARGET_ACCEPTANCE).map_err(p)?,
                    ),
                }
            }
            (_, fixed) => {
                if self.solver == Some(Solver::Interpolate) {
                    return Err(crate::LGV_ERR_PARAMETER);
                }
                let q = CategoricalDlmcProposal::new(time).map_err(p)?;
                match fixed {
                    Some(_) => Kind::CategoricalDlmc(Dmala::new(q)),
                    None => Kind::CategoricalDlmcTuned(
                        TunedDlmc::new(q, true, burn_in, DLMC_TARGET_ACCEPTANCE).map_err(p)?,
                    ),
                }
            }
        })
    }
}

/// The scratch a kernel works in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Need {
    pub(crate) weights: usize,
    pub(crate) indices: usize,
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "a test")]
mod tests {
    use super::*;

    #[test]
    fn the_names_are_the_runnable_samplers_in_registry_order() {
        let runnable: Vec<&str> = SAMPLERS
            .iter()
            .filter(|(_, keys)| keys.is_some())
            .map(|(n, _)| *n)
            .collect();
        let names: Vec<&str> = NAMES.iter().map(|n| n.to_str().unwrap()).collect();
        assert_eq!(names, runnable);
    }

    #[test]
    fn numbers_parse_to_the_correctly_rounded_value_or_are_refused() {
        for text in [
            "0.2",
            "0.5",
            "0.574",
            "1",
            "5",
            "-3.25",
            "+7",
            "1e-3",
            "2.5E2",
            "0.1",
            "0.3",
            "1e22",
            "123456789012345",
            "0.000001",
            "3.",
            ".5",
            "1e+2",
            "0",
            "-0",
            "00.0100",
            "9e-22",
        ] {
            let want: f64 = text.parse().unwrap();
            let got = number(text.as_bytes()).unwrap();
            assert_eq!(got.to_bits(), want.to_bits(), "{text}");
        }
        for text in [
            "",
            "-",
            ".",
            "e5",
            "1e",
            "1.2.3",
            "nan",
            "inf",
            "1e23",
            "1e-23",
            "0x10",
            "1,5",
            "1234567890123456",
            "1 ",
        ] {
            assert_eq!(
                number(text.as_bytes()),
                Err(LGV_ERR_PARAMETER_VALUE),
                "{text}"
            );
        }
    }
}
