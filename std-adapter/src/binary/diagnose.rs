//! Convergence diagnostics of a binary run, as reported in summaries and the demo.

use super::run::BinaryRun;
use crate::diagnostics::{
    DiagError, DrawArray, discs_ess, ess, ess_per_coordinate, hamming_series, random_reference,
    rhat,
};
use serde::Serialize;

/// Effective sample sizes and R-hat of a binary run.
///
/// The summary statistic is the DISCS one: the Hamming distance of each draw to a fixed reference
/// state drawn uniformly at random (seeded), so runs are comparable across samplers.
/// `ess_per_second` and `ess_per_10k_evals` use [`BinaryDiagnostics::ess_statistic`].
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct BinaryDiagnostics {
    /// Smallest per-coordinate ESS (multi-chain, Geyer initial monotone sequence).
    pub ess_min: f64,
    /// Median per-coordinate ESS.
    pub ess_median: f64,
    /// Coordinates that never changed (their ESS is undefined and left out).
    pub ess_undefined: usize,
    /// Multi-chain ESS of the Hamming-distance statistic over all kept draws.
    pub ess_statistic: f64,
    /// DISCS ESS: the statistic's single-chain ESS over each chain's second half, averaged.
    pub ess_discs: f64,
    /// Largest rank-normalised split R-hat over the coordinates and the statistic.
    pub rhat_max: f64,
    /// `ess_statistic` per second of sampling.
    pub ess_per_second: f64,
    /// `ess_statistic` per 10,000 target evaluations.
    pub ess_per_10k_evals: f64,
}

/// Computes [`BinaryDiagnostics`]; `seed` fixes the reference state.
///
/// # Errors
///
/// [`DiagError`] when there are too few kept draws (fewer than 8 per chain).
pub fn diagnose(run: &BinaryRun, seed: u64) -> Result<BinaryDiagnostics, DiagError> {
    let chains = run.chains.len();
    let d = run.dim;
    let draws = run.chains.first().map_or(0, |c| c.draws.len() / d.max(1));
    let samples = run.samples();
    let array = DrawArray::new(&samples, chains, draws, d)?;
    let per_coordinate = ess_per_coordinate(&array)?;
    let reference: Vec<u8> = random_reference(d, 2, seed)?;
    let series: Vec<Vec<f64>> = run
        .chains
        .iter()
        .map(|c| hamming_series(&c.draws, d, &reference))
        .collect::<Result<_, _>>()?;
    let views: Vec<&[f64]> = series.iter().map(Vec::as_slice).collect();
    let ess_statistic = match ess(&views) {
        Err(DiagError::ZeroVariance) => 0.0,
        other => other?,
    };
    let chain_views: Vec<&[u8]> = run.chains.iter().map(|c| c.draws.as_slice()).collect();
    let ess_discs = discs_ess(&chain_views, d, &reference).map_or(f64::NAN, |r| r.mean);
    let mut rhat_max = rhat(&views).map_or(f64::NAN, |r| r.max());
    for i in 0..d {
        let coordinate: Vec<Vec<f64>> = (0..chains).map(|c| array.coordinate(c, i)).collect();
        let v: Vec<&[f64]> = coordinate.iter().map(Vec::as_slice).collect();
        if let Ok(r) = rhat(&v) {
            rhat_max = rhat_max.max(r.max());
        }
    }
    let seconds = run.wall_time.as_secs_f64();
    Ok(BinaryDiagnostics {
        ess_min: per_coordinate.min,
        ess_median: per_coordinate.median,
        ess_undefined: per_coordinate.undefined,
        ess_statistic,
        ess_discs,
        rhat_max,
        ess_per_second: if seconds > 0.0 {
            ess_statistic / seconds
        } else {
            0.0
        },
        ess_per_10k_evals: ess_statistic * 1e4 / run.evaluations().max(1) as f64,
    })
}
