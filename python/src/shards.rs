//! Shards of a run in Python (`first_chain`): blocks of chains run apart (on the workers of a
//! Dask cluster, say) and merged into the result of one run of all the chains. The draws are
//! joined by the caller; the summary is recomputed here from the joined draws by the code a
//! single run uses (the diagnostics, the means, the warnings), its counts added up from the
//! blocks' exact totals.

use crate::summary::{number, warnings};
use langevin_std::binary::{BinaryDiagnostics, Depth, Statistic, diagnose_draws};
use langevin_std::run::{ChainResult, DiscreteRun, RunConfig, RunError};
use numpy::{PyReadonlyArray3, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use serde_json::{Map, Value, json};
use std::time::Duration;

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

/// Summary fields the blocks of one run share.
const SHARED: [&str; 15] = [
    "sampler",
    "model",
    "kind",
    "domain",
    "states",
    "step",
    "balance",
    "scan",
    "balancing",
    "radius",
    "block",
    "diagonal",
    "window",
    "dim",
    "seed",
];

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
    let count = |s: &Map<String, Value>, k: &str| s.get(k).and_then(Value::as_u64).unwrap_or(0);
    let mut end = count(first, "first_chain");
    for s in &summaries {
        for key in SHARED {
            if s.get(key) != first.get(key) {
                return Err(bad(format!("the blocks differ in `{key}`")));
            }
        }
        if count(s, "first_chain") != end {
            return Err(bad(format!(
                "a block starts at chain {}, the chains before it end at {end}",
                count(s, "first_chain")
            )));
        }
        end += count(s, "chains");
    }
    let mut totals = Map::new();
    for s in &summaries {
        if let Some(Value::Object(t)) = s.get("totals") {
            for (k, v) in t {
                let sum =
                    totals.get(k).and_then(Value::as_u64).unwrap_or(0) + v.as_u64().unwrap_or(0);
                totals.insert(k.clone(), json!(sum));
            }
        }
    }
    let total = |k: &str| totals.get(k).and_then(Value::as_u64).unwrap_or(0);
    let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    let evals: u64 = summaries.iter().map(|s| count(s, "evals")).sum();
    let wall: f64 = summaries
        .iter()
        .filter_map(|s| s.get("wall_time_s").and_then(Value::as_f64))
        .sum();
    let wall_time = Duration::try_from_secs_f64(wall).unwrap_or_default();
    let depth = crate::summary::depth(diagnostics)?;
    let states = count(first, "states") as usize;
    let seed = count(first, "seed");
    let statistic = match first.get("statistic").and_then(Value::as_str) {
        Some("l1") => Statistic::Manhattan,
        _ => Statistic::Hamming,
    };
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
    if chains as u64 != end - count(first, "first_chain") {
        return Err(bad(format!(
            "{chains} chains of draws, the blocks hold {}",
            end - count(first, "first_chain")
        )));
    }
    let py = draws.py();
    let (diagnosed, mean) = py.detach(|| {
        if binary {
            let narrow: Vec<u8> = values.iter().map(|&v| v as u8).collect();
            summarise(
                &narrow, shape, states, statistic, evals, wall_time, seed, depth,
            )
        } else {
            summarise(
                &values, shape, states, statistic, evals, wall_time, seed, depth,
            )
        }
    });
    let mut m = first.clone();
    let mut set = |k: &str, v: Value| {
        m.insert(k.to_string(), v);
    };
    set("chains", json!(chains));
    set("chain_range", json!([count(first, "first_chain"), end]));
    set("totals", Value::Object(totals.clone()));
    let burn_in_taken = summaries.iter().map(|s| count(s, "burn_in_taken")).max();
    set("burn_in_taken", json!(burn_in_taken.unwrap_or(0)));
    set(
        "acceptance_rate",
        number(ratio(total("accepted"), total("steps"))),
    );
    let (proposed, accepted) = if binary {
        ("mean_proposed_flips", "mean_accepted_flips")
    } else {
        ("mean_proposed_changes", "mean_accepted_changes")
    };
    set(
        proposed,
        number(ratio(total("proposed_flips"), total("steps"))),
    );
    set(
        accepted,
        number(ratio(total("accepted_flips"), total("steps"))),
    );
    set("mean_jump", number(ratio(total("jump"), total("steps"))));
    set("invalid_proposals", json!(total("invalid")));
    set("evals", json!(evals));
    set("wall_time_s", number(wall));
    let ns = if total("steps_taken") == 0 {
        0.0
    } else {
        wall_time.as_nanos() as f64 / total("steps_taken") as f64
    };
    set("ns_per_step", number(ns));
    set("diagnostics", json!(diagnostics));
    let tuned: Option<Vec<Value>> = summaries
        .iter()
        .map(|s| s.get("tuned").and_then(Value::as_array).cloned())
        .collect::<Option<Vec<_>>>()
        .map(|v| v.into_iter().flatten().collect());
    match tuned {
        Some(t) => set("tuned", Value::Array(t)),
        None => {
            m.remove("tuned");
        }
    }
    for key in [
        "ess_min",
        "ess_median",
        "ess_undefined",
        "ess_statistic",
        "ess_discs",
        "rhat_max",
        "per_coordinate",
        "ess_per_second",
        "ess_per_10k_evals",
    ] {
        m.remove(key);
    }
    if let Some(d) = &diagnosed
        && let Ok(Value::Object(fields)) = serde_json::to_value(d)
    {
        m.extend(fields);
    }
    m.insert("warnings".into(), json!(warnings(diagnosed.as_ref(), kept)));
    m.insert(
        "mean".into(),
        Value::Array(mean.into_iter().map(number).collect()),
    );
    serde_json::to_string(&Value::Object(m)).map_err(|e| bad(e.to_string()))
}

/// The diagnostics (to `depth`, when asked and computable) and the per-coordinate means of
/// draws `(chains, kept, d)`, by the code a run uses.
#[allow(
    clippy::too_many_arguments,
    reason = "the run's figures, each a plain number"
)]
fn summarise<T: Copy + Into<u64> + Into<f64> + langevin_std::diagnostics::DiscreteValue>(
    values: &[T],
    [chains, kept, dim]: [usize; 3],
    states: usize,
    statistic: Statistic,
    evals: u64,
    wall_time: Duration,
    seed: u64,
    depth: Option<Depth<'static>>,
) -> (Option<BinaryDiagnostics>, Vec<f64>) {
    let run = DiscreteRun {
        chains: values
            .chunks((kept * dim).max(1))
            .take(chains)
            .map(|c| ChainResult {
                draws: c.to_vec(),
                kept,
                ..ChainResult::default()
            })
            .collect(),
        dim,
        wall_time,
        threads: 0,
    };
    let views: Vec<&[T]> = run.chains.iter().map(|c| c.draws.as_slice()).collect();
    let diagnosed = depth.and_then(|depth| {
        diagnose_draws(
            &views, dim, states, statistic, evals, wall_time, seed, 0, depth,
        )
        .ok()
    });
    (diagnosed, run.means())
}
