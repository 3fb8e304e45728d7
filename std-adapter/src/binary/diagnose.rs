//! Convergence diagnostics of a run, as reported in summaries and the demo: binary runs and,
//! through [`diagnose_draws`], label runs.

use super::run::BinaryRun;
use crate::diagnostics::{
    CoordinateDiagnostics, DiagError, DiscreteValue, coordinate_diagnostics_of_chains, ess,
    random_reference, rhat,
};
use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Effective sample sizes and R-hat of a run.
///
/// The summary statistic is the DISCS one: the distance of each draw to a fixed reference
/// state drawn uniformly at random (seeded), so runs are comparable across samplers: the
/// Hamming distance for binary and categorical states, the L1 distance `Σ|x_i − r_i|` for
/// ordinal ones (where two values rarely coincide, so a Hamming count barely moves).
/// `ess_per_second` and `ess_per_10k_evals` use [`BinaryDiagnostics::ess_statistic`].
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct BinaryDiagnostics {
    /// Smallest per-coordinate ESS (multi-chain, Geyer initial monotone sequence).
    pub ess_min: f64,
    /// Median per-coordinate ESS.
    pub ess_median: f64,
    /// Coordinates that never changed (their ESS is undefined and left out).
    pub ess_undefined: usize,
    /// Multi-chain ESS of the distance statistic over all kept draws.
    pub ess_statistic: f64,
    /// DISCS ESS: the statistic's single-chain ESS over each chain's second half, averaged.
    pub ess_discs: f64,
    /// Largest rank-normalised split R-hat over the coordinates and the statistic (the
    /// statistic's alone when `per_coordinate` is false).
    pub rhat_max: f64,
    /// Whether the per-coordinate ESS and R-hat were computed ([`Depth::Coordinates`]).
    pub per_coordinate: bool,
    /// `ess_statistic` per second of sampling.
    pub ess_per_second: f64,
    /// The per-coordinate bulk ESS and R-hat behind `ess_min`, `ess_median` and `rhat_max`
    /// ([`Depth::Coordinates`] only; not serialised).
    #[serde(skip)]
    pub coordinates: Option<CoordinateDiagnostics>,
    /// `ess_statistic` per 10,000 target evaluations; NaN (`null` in JSON) when the steps
    /// made none (block-Gibbs: only each chain's start was evaluated).
    pub ess_per_10k_evals: f64,
}

/// How much of [`BinaryDiagnostics`] to compute.
#[derive(Clone, Copy, Debug)]
pub enum Depth<'a> {
    /// The distance statistic's ESS and R-hat only: cheap for any dimension; the
    /// per-coordinate fields are NaN (`null` in JSON).
    Statistic,
    /// Also every coordinate's bulk ESS and R-hat; the counter, if given, is advanced by one
    /// per coordinate done.
    Coordinates(Option<&'a AtomicU64>),
}

/// The distance a run's summary statistic measures to the reference state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Statistic {
    /// Coordinates that differ (binary and categorical states).
    Hamming,
    /// `Σ|x_i − r_i|` (ordinal states).
    Manhattan,
}

impl Statistic {
    /// The series of distances of the draws of one chain (flat, `draws × dim`) to `reference`.
    pub fn series<T: DiscreteValue>(self, chain: &[T], reference: &[T]) -> Vec<f64> {
        let d = reference.len().max(1);
        chain
            .chunks_exact(d)
            .map(|x| match self {
                Statistic::Hamming => {
                    x.iter().zip(reference).filter(|(a, b)| a != b).count() as f64
                }
                Statistic::Manhattan => x
                    .iter()
                    .zip(reference)
                    .map(|(&a, &b)| (f64::from(a.into()) - f64::from(b.into())).abs())
                    .sum(),
            })
            .collect()
    }

    /// The reference state of a run with master seed `seed`.
    ///
    /// # Errors
    ///
    /// [`DiagError::InvalidNumStates`] for a number of states the value type cannot hold.
    pub fn reference<T: DiscreteValue>(
        dim: usize,
        states: usize,
        seed: u64,
    ) -> Result<Vec<T>, DiagError> {
        random_reference(dim, states, seed)
    }
}

/// Computes [`BinaryDiagnostics`] to `depth`; `seed` fixes the reference state.
///
/// # Errors
///
/// [`DiagError`] when there are too few kept draws (fewer than 8 per chain).
pub fn diagnose(
    run: &BinaryRun,
    seed: u64,
    depth: Depth<'_>,
) -> Result<BinaryDiagnostics, DiagError> {
    let chains: Vec<&[u8]> = run.chains.iter().map(|c| c.draws.as_slice()).collect();
    diagnose_draws(
        &chains,
        run.dim,
        2,
        Statistic::Hamming,
        run.evaluations(),
        run.wall_time,
        seed,
        run.threads,
        depth,
    )
}

/// [`BinaryDiagnostics`] of any discrete draws: `chains` holds each chain's kept draws
/// (`draws × dim`, equal lengths) over `states` values per coordinate; `evaluations` and
/// `wall_time` are the run's, `seed` fixes the reference state; the per-coordinate ESS runs on
/// `threads` workers (`0`: one per core; the values do not depend on it) when `depth` asks for
/// it.
///
/// # Errors
///
/// [`DiagError`] when there are too few kept draws (fewer than 8 per chain) or the chains do
/// not fit the shape.
#[allow(
    clippy::too_many_arguments,
    reason = "the run's figures, each a plain number"
)]
pub fn diagnose_draws<T: DiscreteValue + Into<f64>>(
    chains: &[&[T]],
    dim: usize,
    states: usize,
    statistic: Statistic,
    evaluations: u64,
    wall_time: Duration,
    seed: u64,
    threads: usize,
    depth: Depth<'_>,
) -> Result<BinaryDiagnostics, DiagError> {
    let draws = chains.first().map_or(0, |c| c.len() / dim.max(1));
    if chains.is_empty() || dim == 0 || draws == 0 {
        return Err(DiagError::Empty);
    }
    let expected = chains.len() * draws * dim;
    let found: usize = chains.iter().map(|c| c.len()).sum();
    if chains.iter().any(|c| c.len() != draws * dim) {
        return Err(DiagError::Length { expected, found });
    }
    let coordinates = match depth {
        Depth::Statistic => None,
        Depth::Coordinates(progress) => {
            let tick = || {
                if let Some(p) = progress {
                    p.fetch_add(1, Ordering::Relaxed);
                }
            };
            // The chains are read where they are: no copy of the draws.
            Some(coordinate_diagnostics_of_chains(
                chains,
                draws,
                dim,
                states,
                threads,
                Some(&tick),
            )?)
        }
    };
    let reference: Vec<T> = Statistic::reference(dim, states, seed)?;
    let series: Vec<Vec<f64>> = chains
        .iter()
        .map(|c| statistic.series(c, &reference))
        .collect();
    let views: Vec<&[f64]> = series.iter().map(Vec::as_slice).collect();
    let ess_statistic = match ess(&views) {
        Err(DiagError::ZeroVariance) => 0.0,
        other => other?,
    };
    // DISCS: each chain's second half on its own, averaged over the chains where it varies.
    let mut halves = Vec::with_capacity(views.len());
    for s in &views {
        let half = s.get(s.len() / 2..).unwrap_or(&[]);
        match ess(&[half]) {
            Ok(e) => halves.push(e),
            Err(DiagError::ZeroVariance) => {}
            Err(e) => return Err(e),
        }
    }
    let ess_discs = if halves.is_empty() {
        f64::NAN
    } else {
        halves.iter().sum::<f64>() / halves.len() as f64
    };
    let rhat_statistic = rhat(&views).map_or(f64::NAN, |r| r.max());
    let rhat_max = coordinates
        .as_ref()
        .map_or(rhat_statistic, |c| rhat_statistic.max(c.rhat_max()));
    let seconds = wall_time.as_secs_f64();
    Ok(BinaryDiagnostics {
        ess_min: coordinates.as_ref().map_or(f64::NAN, |c| c.ess.min),
        ess_median: coordinates.as_ref().map_or(f64::NAN, |c| c.ess.median),
        ess_undefined: coordinates.as_ref().map_or(0, |c| c.ess.undefined),
        per_coordinate: coordinates.is_some(),
        ess_statistic,
        ess_discs,
        rhat_max,
        ess_per_second: if seconds > 0.0 {
            ess_statistic / seconds
        } else {
            0.0
        },
        // Only the chains' start-up evaluations: the sampler's steps evaluate no target
        // (block-Gibbs), so a figure per evaluation would divide by almost nothing.
        ess_per_10k_evals: if evaluations <= chains.len() as u64 {
            f64::NAN
        } else {
            ess_statistic * 1e4 / evaluations as f64
        },
        coordinates,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics_measure_distance_to_the_reference() {
        let chain: [u16; 4] = [0, 3, 2, 2];
        let reference = [1u16, 3];
        assert_eq!(
            Statistic::Hamming.series(&chain, &reference),
            vec![1.0, 2.0]
        );
        assert_eq!(
            Statistic::Manhattan.series(&chain, &reference),
            vec![1.0, 2.0]
        );
        let chain: [u16; 2] = [5, 0];
        assert_eq!(Statistic::Manhattan.series(&chain, &reference), vec![7.0]);
    }
}
