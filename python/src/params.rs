//! The sampler keywords of `langevin.sample`: the registry's parameters under the command
//! line's names (`--a-ceil` is `a_ceil`), with its defaults and checks.

use langevin_std::ab2::DiagonalRule;
use langevin_std::core_kernels::baselines::{Balancing, Scan};
use langevin_std::core_kernels::dlmc::Solver;
use langevin_std::samplers::{self, Adapt, Param, Sampler, SamplerParams};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The keyword of a parameter: its flag without `--`, dashes as underscores.
pub fn keyword(p: Param) -> String {
    p.info().flag.trim_start_matches("--").replace('-', "_")
}

/// The sampler named `name` with the parameters in `params` (the others at the command line's
/// defaults), checked as `langevin sample` checks them. With `adapt_by_default`, a sampler that
/// can tune its step (DMALA) does so during burn-in unless `step`, `balance` or `adapt` is
/// given: `langevin sample`'s default without `--batch`.
///
/// # Errors
///
/// `ValueError` for an unknown sampler or a value out of range; `TypeError` for a keyword that
/// is no parameter, or a parameter the sampler does not read.
pub fn sampler(
    name: &str,
    params: &Bound<'_, PyDict>,
    adapt_by_default: bool,
) -> PyResult<Sampler> {
    let entry = samplers::find(name).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let mut p = SamplerParams::default();
    let mut a_max = None;
    let mut a_min = None;
    let mut proposal_given = false;
    for (key, value) in params.iter() {
        let key: String = key.extract()?;
        let Some(param) = Param::ALL.into_iter().find(|&q| keyword(q) == key) else {
            return Err(PyTypeError::new_err(format!(
                "sample() got an unexpected keyword `{key}` (sampler parameters: {})",
                Param::ALL.map(keyword).join(", ")
            )));
        };
        if !entry.params.contains(&param) {
            let reads: Vec<String> = entry.params.iter().map(|&q| keyword(q)).collect();
            return Err(PyTypeError::new_err(format!(
                "sampler {} does not read `{key}` (it reads: {})",
                entry.name,
                if reads.is_empty() {
                    "nothing".to_string()
                } else {
                    reads.join(", ")
                }
            )));
        }
        if value.is_none() {
            continue;
        }
        proposal_given |= matches!(param, Param::Step | Param::Balance);
        match param {
            Param::Step => p.step = value.extract()?,
            Param::Balance => p.balance = value.extract()?,
            Param::Scan => {
                p.scan = choice(
                    &key,
                    &value,
                    &[("systematic", Scan::Systematic), ("random", Scan::Random)],
                )?
            }
            Param::Rate => p.rate = Some(value.extract()?),
            Param::ACeil => p.a_ceil = value.extract()?,
            Param::AMax => a_max = Some(value.extract::<f64>()?),
            Param::AMin => a_min = Some(value.extract::<f64>()?),
            Param::Window => {
                let w: u16 = value.extract()?;
                if w == 0 {
                    return Err(PyValueError::new_err("window must be at least 1"));
                }
                p.window = Some(w);
            }
            Param::Diagonal => {
                p.diagonal = choice(
                    &key,
                    &value,
                    &[
                        ("trace", DiagonalRule::Trace),
                        ("shift", DiagonalRule::Shift { eps: 1e-3 }),
                        ("max", DiagonalRule::Max),
                        ("dlp-trace", DiagonalRule::DlpTrace { floor: 0.05 }),
                    ],
                )?
            }
            Param::Ab2Tune => p.ab2_tune = value.extract()?,
            Param::Adapt => {
                p.adapt = Some(choice(&key, &value, &[("acceptance", Adapt::Acceptance)])?)
            }
            Param::TargetAcceptance => p.target_acceptance = value.extract()?,
            Param::Replicas => p.replicas = value.extract()?,
            Param::Balancing => {
                p.balancing = choice(
                    &key,
                    &value,
                    &[("sqrt", Balancing::Sqrt), ("barker", Balancing::Barker)],
                )?
            }
            Param::Radius => p.radius = value.extract()?,
            Param::Block => p.block = value.extract()?,
            Param::PathLength => p.path_length = auto(&value)?,
            Param::Time => p.time = auto(&value)?,
            Param::Solver => {
                p.solver = choice(
                    &key,
                    &value,
                    &[
                        ("auto", None),
                        ("euler", Some(Solver::Euler)),
                        ("interpolate", Some(Solver::Interpolate)),
                    ],
                )?
            }
            _ => {
                return Err(PyTypeError::new_err(format!(
                    "parameter `{key}` is not supported here"
                )));
            }
        }
    }
    if adapt_by_default
        && !proposal_given
        && p.adapt.is_none()
        && entry.params.contains(&Param::Adapt)
    {
        p.adapt = Some(Adapt::Acceptance);
    }
    p.fixed_steps = match (a_max, a_min) {
        (Some(hi), Some(lo)) => Some((hi, lo)),
        (None, None) => None,
        _ => {
            return Err(PyValueError::new_err(
                "a_max and a_min go together: give both or neither",
            ));
        }
    };
    entry
        .with(p)
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// One of the named values of an enumerated parameter.
fn choice<T: Copy>(key: &str, value: &Bound<'_, PyAny>, names: &[(&str, T)]) -> PyResult<T> {
    let given: String = value.extract()?;
    names
        .iter()
        .find(|(n, _)| *n == given)
        .map(|&(_, v)| v)
        .ok_or_else(|| {
            let all: Vec<&str> = names.iter().map(|(n, _)| *n).collect();
            PyValueError::new_err(format!(
                "{key} must be one of {}, not {given:?}",
                all.join(", ")
            ))
        })
}

/// A number, or `"auto"` (`None`: adapted by the sampler).
fn auto<'py, T: FromPyObjectOwned<'py>>(value: &Bound<'py, PyAny>) -> PyResult<Option<T>> {
    if let Ok(s) = value.extract::<String>() {
        if s == "auto" {
            return Ok(None);
        }
        return Err(PyValueError::new_err(format!(
            "expected a number or \"auto\", not {s:?}"
        )));
    }
    Ok(Some(value.extract::<T>().map_err(Into::<PyErr>::into)?))
}
