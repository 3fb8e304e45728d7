//! Chains stepped in lockstep groups (`sample --batch N`), whatever their domain.
//!
//! Chains `0..N` form the first group, `N..2N` the second, and so on; a last, shorter group is
//! padded with spare chains to `N` rows (their draws are discarded). Chain `c` draws from
//! `chain_rngs(seed, ·)[c]`, as it does when run alone; the spare rows' streams come after
//! every real chain's. A shard (`first_chain` K) groups its chains from K in the same way. Groups run in parallel, so nothing a chain draws depends on the thread
//! count or on the number of chains.

use super::{ChainResult, Chains, ModelError, Pool, Progress, RunConfig, RunError};
use crate::seeding::chain_rngs_from;
use langevin_core::ParamError;
use langevin_core::binary::StepReport;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::fmt;
use std::time::Instant;

/// A group of chains stepped together.
pub(crate) trait Lockstep {
    /// The state entries.
    type Value: Copy;
    /// Advances every chain by one step, saying what chain `c` did in `reports[c]`.
    fn step(&mut self, reports: &mut [StepReport]) -> Result<(), ModelError>;
    /// Chain `c`'s state.
    fn state(&self, c: usize) -> &[Self::Value];
    /// `U` at chain `c`'s state.
    fn log_density(&self, c: usize) -> f64;
    /// The distance chain `c` moved in the step that `report` describes.
    fn jump(&self, c: usize, report: &StepReport) -> u64;
}

/// One group of a lockstep run as [`run_groups`] hands it out: its rows (chain index and
/// stream per row; rows at or past `real` are padding) and the run's settings.
pub(crate) struct GroupJob<'a> {
    /// Chain index and stream of each row.
    pub(crate) rows: Vec<(usize, Xoshiro256PlusPlus)>,
    /// The number of real chains of the whole run.
    real: usize,
    config: &'a RunConfig,
    progress: Option<&'a Progress>,
}

impl GroupJob<'_> {
    /// A model error of the group's chains.
    pub(crate) fn model_err(&self, e: impl fmt::Display) -> RunError {
        self.in_group(ModelError::evaluation(e))
    }

    fn in_group(&self, error: ModelError) -> RunError {
        let first = self.rows.first().map_or(0, |g| g.0);
        RunError::Group { first, error }
    }

    /// Runs `group`, the chains of these rows, for the burn-in and kept phase of the run, and
    /// returns the real chains' results (see [`drive_group`]); its model errors name the
    /// group's chains.
    pub(crate) fn drive<L: Lockstep>(
        &self,
        group: &mut L,
    ) -> Result<Vec<ChainResult<L::Value>>, RunError> {
        let kept = self.rows.iter().take_while(|g| g.0 < self.real).count();
        drive_group(group, self.rows.len(), kept, self.config, self.progress).map_err(|e| match e {
            RunError::Model(e) => self.in_group(e),
            e => e,
        })
    }
}

/// Runs `config.chains` chains in groups of `batch` on a pool of `config.threads` workers:
/// `group` runs one group ([`GroupJob`]) and returns its real chains' results in order.
/// `progress`, if given, is advanced by one per real chain-step.
///
/// # Errors
///
/// [`RunError::Param`] for `batch = 0`; [`RunError::ShardNotAligned`] for a `first_chain`
/// that is not a multiple of `batch`; the pool's and `group`'s errors.
pub(crate) fn run_groups<V, F>(
    config: &RunConfig,
    batch: usize,
    progress: Option<&Progress>,
    group: F,
) -> Result<Chains<ChainResult<V>>, RunError>
where
    V: Send,
    F: Fn(GroupJob<'_>) -> Result<Vec<ChainResult<V>>, RunError> + Sync,
{
    if batch == 0 {
        return Err(RunError::Param(ParamError::OutOfRange {
            name: "batch",
            value: 0.0,
        }));
    }
    if !config.first_chain.is_multiple_of(batch) {
        return Err(RunError::ShardNotAligned {
            first_chain: config.first_chain,
            batch,
        });
    }
    let groups = config.chains.div_ceil(batch);
    let mut rngs = chain_rngs_from(config.seed, config.first_chain, groups * batch).into_iter();
    let jobs: Vec<Vec<(usize, Xoshiro256PlusPlus)>> = (0..groups)
        .map(|g| (g * batch..(g + 1) * batch).zip(rngs.by_ref()).collect())
        .collect();
    let pool = Pool::for_items(config.threads, groups)?;
    let start = Instant::now();
    let results = pool.map(jobs, |_, rows| {
        group(GroupJob {
            rows,
            real: config.chains,
            config,
            progress,
        })
    })?;
    Ok(Chains {
        results: results.into_iter().flatten().collect(),
        threads: pool.threads(),
        wall_time: start.elapsed(),
    })
}

/// Runs the `n` chains of `group`, of which the first `kept` are real, for the burn-in and kept
/// phase of `config`, and returns the real chains' results. `progress`, if given, is advanced
/// by one per real chain-step and checked for cancellation every step.
fn drive_group<L: Lockstep>(
    group: &mut L,
    n: usize,
    kept: usize,
    config: &RunConfig,
    progress: Option<&Progress>,
) -> Result<Vec<ChainResult<L::Value>>, RunError> {
    let d = group.state(0).len();
    let mut results: Vec<ChainResult<L::Value>> = (0..kept)
        .map(|_| ChainResult {
            draws: Vec::with_capacity(config.kept() * d),
            ..ChainResult::default()
        })
        .collect();
    let none = StepReport {
        accepted: false,
        proposed_flips: 0,
        log_accept_ratio: 0.0,
        rejection: None,
        evaluations: 0,
    };
    let mut reports = vec![none; n];
    let thin = config.thin.max(1);
    let total = config.burn_in.saturating_add(config.steps);
    for t in 0..total {
        group.step(&mut reports).map_err(RunError::Model)?;
        let kept_phase = t >= config.burn_in;
        let keep = kept_phase && (t - config.burn_in + 1).is_multiple_of(thin);
        for (c, (result, report)) in results.iter_mut().zip(&reports).enumerate() {
            if kept_phase {
                result.stats.record(report);
                result.jump += group.jump(c, report);
            } else {
                result.burn_in_stats.record(report);
            }
            if keep {
                result.draws.extend_from_slice(group.state(c));
                result.log_density.push(group.log_density(c));
            }
        }
        if let Some(p) = progress {
            p.add(kept as u64);
            p.check()?;
        }
    }
    Ok(results)
}
