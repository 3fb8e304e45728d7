//! The sampler keywords of `langevin.sample`: the registry's parameter table under the command
//! line's names (`--a-ceil` is `a_ceil`), with its defaults and checks.

use langevin_std::samplers::{self, Param, Sampler, SamplerParams};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

/// The keyword of a parameter: its field, the flag without `--`, dashes as underscores.
pub fn keyword(p: Param) -> &'static str {
    p.field()
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
    let mut given = Vec::new();
    for (key, value) in params.iter() {
        let key: String = key.extract()?;
        let Some(param) = Param::ALL.into_iter().find(|&q| keyword(q) == key) else {
            return Err(PyTypeError::new_err(format!(
                "sample() got an unexpected keyword `{key}` (sampler parameters: {})",
                Param::ALL.map(keyword).join(", ")
            )));
        };
        if !entry.params.contains(&param) {
            let reads: Vec<&str> = entry.params.iter().map(|&q| keyword(q)).collect();
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
        given.push(param);
        // The value as the command line would spell it: a string as it is, a number as
        // Python writes it (the shortest text that reads back as the same float).
        let text: String = if value.is_instance_of::<PyString>() {
            value.extract()?
        } else {
            value.str()?.extract()?
        };
        p.set(param, &text)
            .map_err(|e| PyValueError::new_err(format!("{key}: {e} (given {text:?})")))?;
    }
    if adapt_by_default {
        p.adapt_by_default(entry.params, &given);
    }
    entry
        .with(p)
        .map_err(|e| PyValueError::new_err(e.to_string()))
}
