//! The shards of one run put back together.
//!
//! A run's chains can be run apart in blocks (`first_chain`, on several machines or the
//! workers of a cluster): each chain draws what it draws in one run of all the chains. This
//! module holds what the front ends (`langevin merge`, the Python package's Dask entry) share
//! when they join the blocks: the fields every block of one run must agree on, the check that
//! their chains follow one another, and the summary of the joined run, its statistics
//! recomputed from the joined draws by the code a single run uses and its counts added up from
//! the blocks' exact totals.

use crate::binary::{BinaryDiagnostics, Depth, Statistic, diagnose_draws};
use crate::diagnostics::DiscreteValue;
use crate::run::{ChainResult, DiscreteRun};
use crate::samplers::Param;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::time::Duration;

/// A run's step counts over all its chains, exact, so that the blocks' counts add up to those
/// one run of all their chains reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Totals {
    /// Kept-phase steps.
    pub steps: u64,
    /// Kept-phase steps whose proposal was adopted.
    pub accepted: u64,
    /// Proposed flips (changes).
    pub proposed_flips: u64,
    /// Flips (changes) that took effect.
    pub accepted_flips: u64,
    /// Invalid proposals.
    pub invalid: u64,
    /// Distance moved over the kept phase.
    pub jump: u64,
    /// Steps taken, burn-in and tuning included.
    pub steps_taken: u64,
}

impl Totals {
    /// The counts of a run.
    pub fn of<T: Copy + Into<u64>>(run: &DiscreteRun<T>) -> Self {
        let stats = run.stats();
        Self {
            steps: stats.steps,
            accepted: stats.accepted,
            proposed_flips: stats.proposed_flips,
            accepted_flips: stats.accepted_flips,
            invalid: stats.invalid,
            jump: run.chains.iter().map(|c| c.jump).sum(),
            steps_taken: run.steps_taken(),
        }
    }

    /// Adds another block's counts.
    pub fn add(&mut self, other: &Totals) {
        self.steps += other.steps;
        self.accepted += other.accepted;
        self.proposed_flips += other.proposed_flips;
        self.accepted_flips += other.accepted_flips;
        self.invalid += other.invalid;
        self.jump += other.jump;
        self.steps_taken += other.steps_taken;
    }
}

/// Nanoseconds of wall time per step taken (0 for no steps).
pub fn ns_per_step(wall: Duration, steps: u64) -> f64 {
    if steps == 0 {
        0.0
    } else {
        wall.as_nanos() as f64 / steps as f64
    }
}

/// Summary fields every block of one run has alike, beside the sampler options the parameter
/// table marks for the summary ([`Param::in_summary`]: Gibbs' scan, the balancing function,
/// the Hamming ball's radius and block), which [`mismatch`] checks too.
pub const SHARED_FIELDS: [&str; 16] = [
    "version",
    "model_hash",
    "sampler",
    "kind",
    "domain",
    "states",
    "step",
    "balance",
    "diagonal",
    "window",
    "dim",
    "steps",
    "burn_in",
    "thin",
    "seed",
    "statistic",
];

/// Options (a summary's `options`) that change neither a chain's draws nor the statistics:
/// where the outputs go, how the run is shown, how many chains a block holds and on how many
/// threads.
pub const PER_BLOCK_OPTIONS: [&str; 13] = [
    "model",
    "chains",
    "first-chain",
    "threads",
    "out",
    "csv",
    "summary",
    "plot",
    "quiet",
    "format",
    "max-memory",
    "exact",
    "mmd",
];

/// Two blocks that differ in something one run holds fixed.
#[derive(Clone, Debug, PartialEq)]
pub struct Mismatch {
    /// The summary field, or the option as `--name`.
    pub field: String,
    /// The first block's value (`None`: absent).
    pub first: Option<Value>,
    /// The other block's value.
    pub other: Option<Value>,
}

/// Where the summaries of two blocks differ in a shared field or option, if they do.
pub fn mismatch(a: &Map<String, Value>, b: &Map<String, Value>) -> Option<Mismatch> {
    let differ = |field: String, x: Option<&Value>, y: Option<&Value>| {
        (x != y).then(|| Mismatch {
            field,
            first: x.cloned(),
            other: y.cloned(),
        })
    };
    let summary_options = Param::ALL
        .into_iter()
        .filter(|p| p.in_summary())
        .map(Param::field);
    if let Some(m) = SHARED_FIELDS
        .into_iter()
        .chain(summary_options)
        .find_map(|k| differ(k.to_owned(), a.get(k), b.get(k)))
    {
        return Some(m);
    }
    let options = |s: &Map<String, Value>| -> Map<String, Value> {
        let all = s.get("options").and_then(Value::as_object);
        all.into_iter()
            .flatten()
            .filter(|(k, _)| !PER_BLOCK_OPTIONS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    };
    let (oa, ob) = (options(a), options(b));
    oa.keys()
        .chain(ob.keys())
        .find_map(|k| differ(format!("--{k}"), oa.get(k), ob.get(k)))
}

/// Why blocks' chains do not make one run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RangeError {
    /// Blocks `i` and `i + 1` (in order of their first chain) hold a chain in common.
    #[error("blocks {0} and {next} hold a chain in common", next = .0 + 1)]
    Overlap(usize),
    /// No block holds the chains `[first, end)`.
    #[error("chains {}..{} are in no block", .0[0], .0[1])]
    Gap([usize; 2]),
}

/// Checks that chain ranges `[first, end)`, sorted by their first chain, follow one another
/// without overlap or gap.
pub fn check_ranges(ranges: &[[usize; 2]]) -> Result<(), RangeError> {
    for (i, pair) in ranges.windows(2).enumerate() {
        let [a, b] = pair else { continue };
        if b[0] < a[1] {
            return Err(RangeError::Overlap(i));
        }
        if b[0] > a[1] {
            return Err(RangeError::Gap([a[1], b[0]]));
        }
    }
    Ok(())
}

/// The joined run: its summary and what the front end adds to it in its own words.
#[derive(Clone, Debug)]
pub struct Merged {
    /// The first block's summary with the chains, counts and statistics of all.
    pub summary: Map<String, Value>,
    /// The diagnostics recomputed from the joined draws (`None`: not asked, or too few draws).
    pub diagnostics: Option<BinaryDiagnostics>,
    /// The per-coordinate means of the joined draws.
    pub means: Vec<f64>,
}

/// A count in a summary (0 where absent).
fn count(s: &Map<String, Value>, key: &str) -> u64 {
    s.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// `a / b` as a run's statistics compute it (0 for no steps).
fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

/// Fields a block's summary computed from its own draws: the join recomputes them, or drops
/// them where it does not (the pictures, the enumeration's error, the MMD).
const RECOMPUTED: [&str; 15] = [
    "ess_min",
    "ess_median",
    "ess_undefined",
    "ess_statistic",
    "ess_discs",
    "rhat_max",
    "per_coordinate",
    "ess_per_second",
    "ess_per_10k_evals",
    "ess_bulk",
    "rhat",
    "diagnostics_on",
    "plots",
    "marginal_rmse",
    "mmd",
];

/// The summary of one run of the chains of `blocks` (their summaries in chain order, following
/// one another; see [`check_ranges`]) whose kept draws, joined along the chain axis, are
/// `values` of shape `(chains, kept, d)`; the diagnostics are computed to `depth`.
///
/// The warnings and the means' place in the summary are the front end's: it words them.
pub fn merge_summaries<T: DiscreteValue + Into<f64> + Into<u64>>(
    blocks: &[&Map<String, Value>],
    values: &[T],
    [chains, kept, dim]: [usize; 3],
    depth: Option<Depth<'_>>,
) -> Merged {
    let first = blocks.first().copied().cloned().unwrap_or_default();
    let mut totals = Totals::default();
    for s in blocks {
        let t: Totals = s
            .get("totals")
            .cloned()
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_default();
        totals.add(&t);
    }
    let evals: u64 = blocks.iter().map(|s| count(s, "evals")).sum();
    let wall: f64 = blocks
        .iter()
        .filter_map(|s| s.get("wall_time_s").and_then(Value::as_f64))
        .sum();
    let wall_time = Duration::try_from_secs_f64(wall).unwrap_or_default();
    let statistic = match first.get("statistic").and_then(Value::as_str) {
        Some("l1") => Statistic::Manhattan,
        _ => Statistic::Hamming,
    };
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
    let diagnostics = depth.and_then(|depth| {
        let states = count(&first, "states") as usize;
        let seed = count(&first, "seed");
        diagnose_draws(
            &views, dim, states, statistic, evals, wall_time, seed, 0, depth,
        )
        .ok()
    });
    let first_chain = count(&first, "first_chain");
    let mut m = first;
    let mut set = |k: &str, v: Value| {
        m.insert(k.to_owned(), v);
    };
    set("chains", chains.into());
    set("first_chain", first_chain.into());
    set(
        "chain_range",
        Value::from(vec![first_chain, first_chain + chains as u64]),
    );
    set("totals", serde_json::to_value(totals).unwrap_or_default());
    let burn_in_taken = blocks.iter().map(|s| count(s, "burn_in_taken")).max();
    set("burn_in_taken", burn_in_taken.unwrap_or(0).into());
    set(
        "acceptance_rate",
        ratio(totals.accepted, totals.steps).into(),
    );
    for (proposed, accepted) in [
        ("mean_proposed_flips", "mean_accepted_flips"),
        ("mean_proposed_changes", "mean_accepted_changes"),
    ] {
        if blocks.first().is_some_and(|s| s.contains_key(proposed)) {
            set(proposed, ratio(totals.proposed_flips, totals.steps).into());
            set(accepted, ratio(totals.accepted_flips, totals.steps).into());
        }
    }
    set("mean_jump", ratio(totals.jump, totals.steps).into());
    set("invalid_proposals", totals.invalid.into());
    set("evals", evals.into());
    set("wall_time_s", wall.into());
    set(
        "ns_per_step",
        ns_per_step(wall_time, totals.steps_taken).into(),
    );
    // The tuned parameters per chain, in chain order.
    let tuned: Option<Vec<Value>> = blocks
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
    for key in RECOMPUTED {
        m.remove(key);
    }
    if let Some(Value::Object(fields)) = diagnostics
        .as_ref()
        .and_then(|d| serde_json::to_value(d).ok())
    {
        m.extend(fields);
    }
    Merged {
        summary: m,
        diagnostics,
        means: run.means(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ranges_follow_one_another() {
        assert_eq!(check_ranges(&[[0, 4], [4, 6], [6, 7]]), Ok(()));
        assert_eq!(check_ranges(&[[0, 4], [3, 6]]), Err(RangeError::Overlap(0)));
        assert_eq!(
            check_ranges(&[[0, 4], [4, 6], [8, 9]]),
            Err(RangeError::Gap([6, 8]))
        );
    }

    #[test]
    fn a_mismatch_names_the_field_or_option() {
        let a = json!({"seed": 1, "options": {"step": "0.4", "threads": "2"}});
        let b = json!({"seed": 1, "options": {"step": "0.4", "threads": "1"}});
        let c = json!({"seed": 1, "options": {"step": "0.5"}});
        let d = json!({"seed": 2});
        let (a, b, c, d) = (a.as_object(), b.as_object(), c.as_object(), d.as_object());
        let (a, b, c, d) = (a.unwrap(), b.unwrap(), c.unwrap(), d.unwrap());
        assert_eq!(mismatch(a, b), None);
        assert_eq!(mismatch(a, c).map(|m| m.field), Some("--step".to_owned()));
        assert_eq!(mismatch(a, d).map(|m| m.field), Some("seed".to_owned()));
        let ball = |radius: u64| json!({"seed": 1, "radius": radius, "block": 10});
        let (e, f) = (ball(1), ball(2));
        let (e, f) = (e.as_object().unwrap(), f.as_object().unwrap());
        assert_eq!(mismatch(e, e), None);
        assert_eq!(
            mismatch(e, f).map(|m| m.field),
            Some("radius".to_owned()),
            "a sampler option the summary lists is a shared field"
        );
    }

    #[test]
    fn counts_add_up_and_statistics_are_recomputed() {
        let block = |first: u64, steps: u64, accepted: u64| {
            json!({
                "first_chain": first, "chains": 1, "evals": 10, "wall_time_s": 0.5,
                "mean_proposed_flips": 9.0, "mean_accepted_flips": 9.0, "ess_min": 123.0,
                "totals": {"steps": steps, "accepted": accepted, "proposed_flips": steps,
                           "accepted_flips": accepted, "invalid": 0, "jump": accepted,
                           "steps_taken": steps}
            })
        };
        let (a, b) = (block(2, 10, 5), block(3, 30, 5));
        let blocks = [a.as_object().unwrap(), b.as_object().unwrap()];
        let values = [0u8, 1, 1, 1];
        let merged = merge_summaries(&blocks, &values, [2, 2, 1], None);
        let s = &merged.summary;
        assert_eq!(s["chain_range"], json!([2, 4]));
        assert_eq!(s["acceptance_rate"], json!(0.25));
        assert_eq!(s["mean_accepted_flips"], json!(0.25));
        assert_eq!(s["evals"], json!(20));
        assert_eq!(s["totals"]["steps"], json!(40));
        assert!(!s.contains_key("ess_min"));
        assert_eq!(merged.means, vec![0.75]);
    }
}
