//! Per-coordinate bulk ESS and R-hat of discrete draws in one pass per coordinate.
//!
//! Discrete values take few distinct values, so the rank normalisation of Vehtari et al. (2021)
//! needs no sort: counting the draws at each state gives every state's average rank, and each
//! draw's z-score is a lookup. The scores, and hence the ESS and R-hat, are bit-identical to
//! [`ess_bulk`](super::ess_bulk) and [`rhat`](super::rhat) on the same draws converted to `f64`.

use super::discrete::{DiscreteValue, check_num_states};
use super::ess::{DrawArray, EssSummary, chain_autocovariances, ess_from_autocovariances};
use super::fft::AutocovPlan;
use super::normal::inverse_normal_cdf;
use super::rhat::{Rhat, basic_rhat};
use super::{DiagError, median_of_defined};
use crate::run::Pool;
use std::ops::Range;

/// Coordinates gathered per pass over the draws: a cache line of `u16` states.
const BLOCK: usize = 32;

/// Per-coordinate diagnostics of a `(chains, draws, dim)` array of discrete draws.
#[derive(Debug, Clone, PartialEq)]
pub struct CoordinateDiagnostics {
    /// Bulk ESS of each coordinate, with its minimum and median.
    pub ess: EssSummary,
    /// [`Rhat::max`] of each coordinate; NaN where it is undefined (a coordinate that never
    /// varies).
    pub rhat: Vec<f64>,
}

impl CoordinateDiagnostics {
    /// The largest defined R-hat (NaN if none is defined).
    pub fn rhat_max(&self) -> f64 {
        self.rhat.iter().copied().fold(f64::NAN, f64::max)
    }
}

/// Bulk ESS ([`ess_bulk`](super::ess_bulk)) and rank-normalised split R-hat
/// ([`rhat`](super::rhat)) of every coordinate of discrete draws over `states` values, on a
/// [`Pool`] of `threads` workers (`0`: one per core). `progress`, if given, is called once per
/// coordinate finished, from the workers. The values do not depend on the thread count.
///
/// # Errors
///
/// [`DiagError::TooShort`] for fewer than 4 draws per chain,
/// [`DiagError::InvalidNumStates`] for `states` outside `1..=T::MAX_STATES`,
/// [`DiagError::Length`] for a value at or above `states`; [`DiagError::WorkerPanicked`] and
/// [`DiagError::ThreadPool`] as for [`ess_per_coordinate_on`](super::ess_per_coordinate_on).
///
/// # Examples
///
/// ```
/// use langevin_std::diagnostics::{DrawArray, coordinate_diagnostics, ess_per_coordinate};
/// // 2 chains × 6 draws × 2 coordinates; the second coordinate never changes.
/// let data: Vec<u8> = vec![0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 0, 1, 1, 1, 0, 1, 1, 1];
/// let draws = DrawArray::new(&data, 2, 6, 2).unwrap();
/// let d = coordinate_diagnostics(&draws, 2, 1, None).unwrap();
/// let sorted = ess_per_coordinate(&draws).unwrap();
/// assert_eq!(d.ess.per_coordinate[0], sorted.per_coordinate[0]);
/// assert!(d.rhat[0] > 0.0 && d.rhat[1].is_nan());
/// ```
pub fn coordinate_diagnostics<T: DiscreteValue + Into<f64>>(
    draws: &DrawArray<'_, T>,
    states: usize,
    threads: usize,
    progress: Option<&(dyn Fn() + Sync)>,
) -> Result<CoordinateDiagnostics, DiagError> {
    check_num_states::<T>(states)?;
    let n = draws.draws();
    if n < 4 {
        return Err(DiagError::TooShort {
            needed: 4,
            found: n,
        });
    }
    let plan = AutocovPlan::new(n / 2);
    let dim = draws.dim();
    // Coordinates are gathered a block at a time so each row's read is contiguous: a strided
    // read of one coordinate per row costs a cache miss per draw.
    let blocks: Vec<(usize, usize)> = (0..dim)
        .step_by(BLOCK)
        .map(|start| (start, (start + BLOCK).min(dim)))
        .collect();
    let pool = Pool::for_items(threads, blocks.len())?;
    let per_block = pool.map(blocks, |_, (start, end)| {
        Coordinate::gather(draws, start..end, states).map(|block| {
            block
                .iter()
                .map(|c| {
                    let result = c.diagnostics(&plan);
                    if let Some(tick) = progress {
                        tick();
                    }
                    result
                })
                .collect::<Vec<_>>()
        })
    })?;
    let (per_coordinate, rhat): (Vec<f64>, Vec<f64>) = per_block.into_iter().flatten().unzip();
    Ok(CoordinateDiagnostics {
        ess: EssSummary::new(per_coordinate),
        rhat,
    })
}

/// One coordinate's split halves, as state indices, with the count of each state.
struct Coordinate {
    halves: Vec<Vec<u16>>,
    counts: Vec<usize>,
    total: usize,
}

impl Coordinate {
    /// The coordinates `range` of every draw, read row by row.
    fn gather<T: DiscreteValue + Into<f64>>(
        draws: &DrawArray<'_, T>,
        range: Range<usize>,
        states: usize,
    ) -> Result<Vec<Self>, DiagError> {
        let (n, dim) = (draws.draws(), draws.dim());
        let half = n / 2;
        let mut block: Vec<Self> = range
            .clone()
            .map(|_| Self {
                halves: Vec::with_capacity(2 * draws.chains()),
                counts: vec![0; states],
                total: 2 * half * draws.chains(),
            })
            .collect();
        for c in 0..draws.chains() {
            let chain = draws.chain(c);
            // For odd n the middle draw is dropped, as `split_halves` does.
            for start in [0, n - half] {
                for coordinate in &mut block {
                    coordinate.halves.push(Vec::with_capacity(half));
                }
                for row in chain.chunks_exact(dim).skip(start).take(half) {
                    let values = row.get(range.clone()).unwrap_or(&[]);
                    for (coordinate, v) in block.iter_mut().zip(values) {
                        let s = v.state();
                        let count = coordinate.counts.get_mut(s).ok_or(DiagError::Length {
                            expected: states,
                            found: s,
                        })?;
                        *count += 1;
                        if let Some(h) = coordinate.halves.last_mut() {
                            h.push(s as u16);
                        }
                    }
                }
            }
        }
        Ok(block)
    }

    /// `(bulk ESS, R-hat max)`, each NaN where undefined.
    fn diagnostics(&self, plan: &AutocovPlan) -> (f64, f64) {
        let bulk_scores = self.scores((0..self.counts.len()).map(|s| s as f64));
        let z = self.apply(&bulk_scores);
        let (acov, means) = chain_autocovariances(plan, &z);
        let ess = ess_from_autocovariances(&acov, &means, plan.len()).unwrap_or(f64::NAN);
        let rhat = basic_rhat(&z).map_or(f64::NAN, |bulk| {
            let median = self.median();
            let folded = self.scores((0..self.counts.len()).map(|s| (s as f64 - median).abs()));
            let folded = basic_rhat(&self.apply(&folded)).unwrap_or(f64::NAN);
            Rhat { bulk, folded }.max()
        });
        (ess, rhat)
    }

    /// The z-score of each state when the draws are replaced by `value(state)` and rank
    /// normalised together: ties share their average rank `r` (from 1), scored
    /// `Φ⁻¹((r − 3/8) / (S + 1/4))`, exactly as [`rank_normalize`](super::rank_normalize).
    fn scores(&self, value: impl Iterator<Item = f64>) -> Vec<f64> {
        let mut order: Vec<(f64, usize)> = value
            .zip(0..)
            .filter(|&(_, s)| self.counts[s] > 0)
            .collect();
        order.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut scores = vec![0.0; self.counts.len()];
        let total = self.total as f64;
        let mut start = 0;
        let mut k = 0;
        while k < order.len() {
            let value = order[k].0;
            let group = order[k..].iter().take_while(|p| p.0 == value).count();
            let end = start
                + order[k..k + group]
                    .iter()
                    .map(|&(_, s)| self.counts[s])
                    .sum::<usize>();
            let rank = (start + end + 1) as f64 / 2.0;
            let score = inverse_normal_cdf((rank - 0.375) / (total + 0.25));
            for &(_, s) in &order[k..k + group] {
                scores[s] = score;
            }
            start = end;
            k += group;
        }
        scores
    }

    fn apply(&self, scores: &[f64]) -> Vec<Vec<f64>> {
        self.halves
            .iter()
            .map(|h| h.iter().map(|&s| scores[s as usize]).collect())
            .collect()
    }

    /// The median of the pooled halves, as [`median_of_defined`] computes it.
    fn median(&self) -> f64 {
        let at = |j: usize| {
            let mut seen = 0;
            for (s, &c) in self.counts.iter().enumerate() {
                seen += c;
                if seen > j {
                    return s as f64;
                }
            }
            f64::NAN
        };
        match self.total {
            0 => median_of_defined(&[]),
            t if t % 2 == 1 => at(t / 2),
            t => 0.5 * (at(t / 2 - 1) + at(t / 2)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::{ess_per_coordinate_on, rhat};

    /// A sticky chain over `states` values per coordinate, deterministic.
    fn draws(chains: usize, n: usize, dim: usize, states: u32, seed: u64) -> Vec<u16> {
        let mut s = seed;
        let mut next = move || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 33) as u32
        };
        let mut x = vec![0u16; dim];
        let mut out = Vec::new();
        for _ in 0..chains {
            for _ in 0..n {
                for (i, v) in x.iter_mut().enumerate() {
                    // Coordinate 0 never moves; the others move at different rates.
                    if i > 0 && next() % (i as u32 + 1) == 0 {
                        *v = (next() % states) as u16;
                    }
                }
                out.extend_from_slice(&x);
            }
        }
        out
    }

    #[test]
    fn bit_identical_to_the_sorting_estimators() {
        for (chains, n, states, dim) in [(1, 41, 2, 4), (3, 60, 5, 37), (2, 33, 3, 70)] {
            let data = draws(chains, n, dim, states, 7 + n as u64);
            let array = DrawArray::new(&data, chains, n, dim).unwrap();
            let d = coordinate_diagnostics(&array, states as usize, 2, None).unwrap();
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            let sorted = ess_per_coordinate_on(&array, 1).unwrap();
            assert_eq!(bits(&d.ess.per_coordinate), bits(&sorted.per_coordinate));
            for i in 0..dim {
                let series: Vec<Vec<f64>> = (0..chains).map(|c| array.coordinate(c, i)).collect();
                let views: Vec<&[f64]> = series.iter().map(Vec::as_slice).collect();
                let expected = rhat(&views).map_or(f64::NAN, |r| r.max());
                assert_eq!(d.rhat[i].to_bits(), expected.to_bits(), "coordinate {i}");
            }
        }
    }

    #[test]
    fn values_beyond_the_states_are_an_error() {
        let data = [0u8, 1, 2, 1, 0, 1];
        let array = DrawArray::new(&data, 1, 6, 1).unwrap();
        assert!(matches!(
            coordinate_diagnostics(&array, 2, 1, None),
            Err(DiagError::Length { .. })
        ));
    }
}
