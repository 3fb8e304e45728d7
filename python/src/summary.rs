//! The summary of a run as `langevin sample --summary` writes it: the same fields, as JSON for
//! the Python side to load into a dict. The command line's provenance (its command line and
//! options) has no counterpart here; `tool` and `version` are kept.

use langevin_std::binary::{BinaryDiagnostics, Depth};
use langevin_std::core_kernels::stats::ChainStats;
use langevin_std::diagnostics::convergence_warnings;
use langevin_std::run::RunConfig;
use langevin_std::samplers::{Domain, Sampler, SamplerPlan};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use serde_json::{Map, Value, json};
use std::time::Duration;

/// What the run was asked to do.
pub struct Settings<'a> {
    /// The sampler and its parameters.
    pub sampler: &'a Sampler,
    /// Its plan on the model.
    pub plan: &'a SamplerPlan,
    /// The model file (or a placeholder for a user target).
    pub model: String,
    /// The model's kind.
    pub kind: String,
    /// The model's domain.
    pub domain: Domain,
    /// Values per coordinate.
    pub states: usize,
    /// Coordinates.
    pub dim: usize,
    /// Chains, steps, seed.
    pub config: &'a RunConfig,
    /// The diagnostics asked for (`None`: none).
    pub diagnostics: Option<Depth<'static>>,
}

/// What the run measured.
pub struct Measured {
    /// Burn-in steps taken per chain (the most over the chains).
    pub burn_in_taken: u64,
    /// Step totals of the kept phase.
    pub stats: ChainStats,
    /// Mean distance moved per kept step.
    pub mean_jump: f64,
    /// Distance moved over the kept phase, all chains.
    pub jump: u64,
    /// Target evaluations.
    pub evals: u64,
    /// Wall time of the chains.
    pub wall_time: Duration,
    /// Steps taken over all chains.
    pub steps_taken: u64,
    /// R-hat and ESS, when asked and computable.
    pub diagnostics: Option<BinaryDiagnostics>,
    /// The tuned parameters per chain.
    pub tuned: Option<Value>,
    /// Per-coordinate means.
    pub mean: Vec<f64>,
}

/// The `diagnostics` keyword: `full`, `summary` or `none`.
pub fn depth(name: &str) -> PyResult<Option<Depth<'static>>> {
    match name {
        "full" => Ok(Some(Depth::Coordinates(None))),
        "summary" => Ok(Some(Depth::Statistic)),
        "none" => Ok(None),
        _ => Err(PyValueError::new_err(format!(
            "diagnostics must be one of full, summary, none, not {name:?}"
        ))),
    }
}

/// The summary, as a JSON object.
pub fn json(s: &Settings<'_>, m: Measured) -> PyResult<String> {
    let (step, balance) = s.plan.step_balance();
    let params = s.sampler.params();
    let config = s.config;
    let mut o = Map::new();
    let mut put = |k: &str, v: Value| {
        o.insert(k.to_string(), v);
    };
    put("tool", json!("langevin"));
    put("version", json!(env!("CARGO_PKG_VERSION")));
    put("sampler", json!(s.sampler.name()));
    put("model", json!(s.model));
    put("kind", json!(s.kind));
    put("domain", json!(s.domain.name()));
    put("states", json!(s.states));
    put("step", number(step));
    put("balance", number(balance));
    for (field, value) in params.options(s.sampler.entry().params).0 {
        put(field, value);
    }
    if let SamplerPlan::Ab2(a) = s.plan
        && s.domain == Domain::Binary
    {
        put("diagonal", json!(a.diagonal.name()));
    }
    if let Some(w) = s.plan.window() {
        put("window", json!(w));
    }
    put("dim", json!(s.dim));
    put("chains", json!(config.chains));
    put("steps", json!(config.steps));
    put("burn_in", json!(config.burn_in));
    put("burn_in_taken", json!(m.burn_in_taken));
    put("thin", json!(config.thin));
    put("seed", json!(config.seed));
    put("first_chain", json!(config.first_chain));
    put(
        "chain_range",
        json!([
            config.first_chain,
            config.first_chain.saturating_add(config.chains)
        ]),
    );
    put(
        "totals",
        json!({
            "steps": m.stats.steps,
            "accepted": m.stats.accepted,
            "proposed_flips": m.stats.proposed_flips,
            "accepted_flips": m.stats.accepted_flips,
            "invalid": m.stats.invalid,
            "jump": m.jump,
            "steps_taken": m.steps_taken,
        }),
    );
    put("kept_per_chain", json!(config.kept()));
    put("acceptance_rate", number(m.stats.acceptance_rate()));
    let (proposed, accepted) = if s.domain == Domain::Binary {
        ("mean_proposed_flips", "mean_accepted_flips")
    } else {
        ("mean_proposed_changes", "mean_accepted_changes")
    };
    put(proposed, number(m.stats.mean_proposed_flips()));
    put(accepted, number(m.stats.mean_accepted_flips()));
    put("mean_jump", number(m.mean_jump));
    put("invalid_proposals", json!(m.stats.invalid));
    put("evals", json!(m.evals));
    put("wall_time_s", number(m.wall_time.as_secs_f64()));
    let ns = if m.steps_taken == 0 {
        0.0
    } else {
        m.wall_time.as_nanos() as f64 / m.steps_taken as f64
    };
    put("ns_per_step", number(ns));
    put(
        "statistic",
        json!(if s.domain == Domain::Ordinal {
            "l1"
        } else {
            "hamming"
        }),
    );
    put(
        "diagnostics",
        json!(match s.diagnostics {
            None => "none",
            Some(Depth::Statistic) => "summary",
            Some(Depth::Coordinates(_)) => "full",
        }),
    );
    if let Some(d) = &m.diagnostics
        && let Ok(Value::Object(fields)) = serde_json::to_value(d)
    {
        o.extend(fields);
    }
    let warnings = warnings(m.diagnostics.as_ref(), config.kept());
    if let Some(t) = m.tuned {
        o.insert("tuned".into(), t);
    }
    o.insert("warnings".into(), json!(warnings));
    o.insert(
        "mean".into(),
        Value::Array(m.mean.into_iter().map(number).collect()),
    );
    serde_json::to_string(&Value::Object(o)).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The warnings of a run: R-hat and the smallest ESS judged, or why they could not be.
pub fn warnings(diagnostics: Option<&BinaryDiagnostics>, kept: usize) -> Vec<String> {
    match diagnostics {
        Some(d) => convergence_warnings(d.rhat_max, d.ess_min.min(d.ess_statistic)),
        None => vec![format!(
            "R-hat and ESS were not computed (diagnostics=\"none\", or {kept} kept draws per \
             chain, fewer than 8): the run cannot be judged"
        )],
    }
}

/// A number, `null` when not finite (as serde writes NaN).
pub fn number(v: f64) -> Value {
    serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
}
