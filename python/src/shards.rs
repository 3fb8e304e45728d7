//! Shards of a run in Python (`first_chain`): blocks of chains run apart (on the workers of a
//! Dask cluster, say) and merged into the result of one run of all the chains. The draws are
//! joined by the caller; the summary is recomputed here from the joined draws by the code a
//! single run uses (the diagnostics, the means, the warnings), its counts added up from the
//! blocks' exact totals.

use crate::summary::{number, warnings};
use langevin_std::run::{RunConfig, RunError};
use langevin_std::shards;
use numpy::{PyReadonlyArray3, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use serde_json::{Map, Value, json};

/// `config` for the chains `first_chain ..`; with `batch`, a shard starts at a group.
pub fn with_first_chain(
    mut config: RunConfig,
    first_chain: usize,
    batch: Option<usize>,
) -> PyResult<RunConfig> {
    if let Some(batch) = batch.filter(|&b| b > 0)
        && !first_chain.is_multiple_of(batch)
    {
        let e = RunError::ShardNotAligned { first_chain, batch };
        return Err(PyValueError::new_err(e.to_string()));
    }
    if first_chain.checked_add(config.chains).is_none() {
        return Err(PyValueError::new_err(
            "first_chain + chains is beyond the largest chain index",
        ));
    }
    config.first_chain = first_chain;
    Ok(config)
}

/// The summary (JSON) of one run of the chains of `blocks` (their summaries as JSON, in chain
/// order, following one another), whose kept draws, joined along the chain axis, are `draws`
/// (`(chains, kept, d)`, `uint8` or `int32`); `diagnostics` is `full`, `summary` or `none`.
#[pyfunction]
pub fn merge_summaries(
    draws: &Bound<'_, PyAny>,
    blocks: Vec<String>,
    diagnostics: &str,
) -> PyResult<String> {
    let bad = |m: String| PyValueError::new_err(m);
    let summaries: Vec<Map<String, Value>> = blocks
        .iter()
        .map(|b| match langevin_std::io::parse_json_exact(b) {
            Ok(Value::Object(m)) => Ok(m),
            Ok(_) => Err(bad("a block's summary is not a JSON object".into())),
            Err(e) => Err(bad(e.to_string())),
        })
        .collect::<PyResult<_>>()?;
    let Some(first) = summaries.first() else {
        return Err(bad("no blocks to merge".into()));
    };
    let count =
        |s: &Map<String, Value>, k: &str| s.get(k).and_then(Value::as_u64).unwrap_or(0) as usize;
    for s in &summaries {
        if let Some(m) = shards::mismatch(first, s) {
            return Err(bad(format!("the blocks differ in `{}`", m.field)));
        }
    }
    let ranges: Vec<[usize; 2]> = summaries
        .iter()
        .map(|s| {
            [
                count(s, "first_chain"),
                count(s, "first_chain") + count(s, "chains"),
            ]
        })
        .collect();
    shards::check_ranges(&ranges).map_err(|e| bad(e.to_string()))?;
    let depth = crate::summary::depth(diagnostics)?;
    let binary = first.get("domain").and_then(Value::as_str) == Some("binary");
    let (shape, values): ([usize; 3], Vec<u16>) =
        if let Ok(a) = draws.extract::<PyReadonlyArray3<'_, u8>>() {
            let shape = <[usize; 3]>::try_from(a.shape()).map_err(|e| bad(e.to_string()))?;
            let v = a.as_array().iter().map(|&x| u16::from(x)).collect();
            (shape, v)
        } else {
            let a = draws.extract::<PyReadonlyArray3<'_, i32>>()?;
            let shape = <[usize; 3]>::try_from(a.shape()).map_err(|e| bad(e.to_string()))?;
            let v = a
                .as_array()
                .iter()
                .map(|&x| x.clamp(0, 65535) as u16)
                .collect();
            (shape, v)
        };
    let [chains, kept, _] = shape;
    let held = ranges.last().map_or(0, |r| r[1]) - ranges.first().map_or(0, |r| r[0]);
    if chains != held {
        return Err(bad(format!(
            "{chains} chains of draws, the blocks hold {held}"
        )));
    }
    let blocks: Vec<&Map<String, Value>> = summaries.iter().collect();
    let merged = draws.py().detach(|| {
        if binary {
            let narrow: Vec<u8> = values.iter().map(|&v| v as u8).collect();
            shards::merge_summaries(&blocks, &narrow, shape, depth)
        } else {
            shards::merge_summaries(&blocks, &values, shape, depth)
        }
    });
    let mut m = merged.summary;
    m.insert("diagnostics".into(), json!(diagnostics));
    let warnings = warnings(merged.diagnostics.as_ref(), kept);
    m.insert("warnings".into(), json!(warnings));
    m.insert(
        "mean".into(),
        Value::Array(merged.means.into_iter().map(number).collect()),
    );
    serde_json::to_string(&Value::Object(m)).map_err(|e| bad(e.to_string()))
}
