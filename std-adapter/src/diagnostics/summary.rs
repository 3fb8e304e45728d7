//! The per-coordinate table of a run's summary, in the columns of ArviZ's `summary`: mean, sd,
//! quantiles, the Monte Carlo standard error of the mean, bulk and tail ESS, R-hat.
//!
//! * `sd`: the sample standard deviation of the pooled draws (denominator `n − 1`).
//! * `q5`, `q50`, `q95`: quantiles of the pooled draws, linear interpolation between order
//!   statistics (NumPy's default `quantile`, which ArviZ uses): at `h = (n − 1)p`, the value
//!   `x_(⌊h⌋) + (h − ⌊h⌋)(x_(⌊h⌋+1) − x_(⌊h⌋))`.
//! * `mcse_mean`: `sd / √ESS_mean`, with `ESS_mean` the multi-chain ESS of the split chains
//!   (not rank-normalised), as ArviZ's `mcse(method="mean")`.
//! * `ess_tail`: the smaller ESS of the split chains of the indicators `x ≤ q5` and `x ≤ q95`
//!   (ArviZ's `ess(method="tail")`); an indicator that never varies (on a discrete coordinate,
//!   `x ≤ q95` is often always true) has no ESS and is left out, and the tail ESS is NaN when
//!   neither varies.
//!
//! Values are NaN (`null` in JSON) where they are undefined (a coordinate that never moves has
//! no ESS or MCSE).

use super::ess::ess;
use super::rhat::split_halves;
use super::{DiagError, check_chains};
use serde::Serialize;

/// The columns ArviZ's `summary` adds to a per-coordinate mean, one entry per coordinate.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct CoordinateTable {
    /// Standard deviation of the pooled draws.
    pub sd: Vec<f64>,
    /// 5% quantile.
    pub q5: Vec<f64>,
    /// Median.
    pub q50: Vec<f64>,
    /// 95% quantile.
    pub q95: Vec<f64>,
    /// Monte Carlo standard error of the mean.
    pub mcse_mean: Vec<f64>,
    /// Tail ESS.
    pub ess_tail: Vec<f64>,
}

/// The [`CoordinateTable`] of draws (discrete states or continuous values): `chains[c]` is
/// chain `c`'s kept draws, `dim` values per draw, all chains of equal length.
///
/// # Errors
///
/// [`DiagError::Empty`] for no chains or `dim = 0`; [`DiagError::Length`] for a chain whose
/// length is not a whole number of draws of the first chain's; [`DiagError::TooShort`] for
/// fewer than 8 draws per chain (4 per split half); [`DiagError::NonFinite`] for a value that
/// is not finite.
pub fn coordinate_table<T: Copy + Into<f64>>(
    chains: &[&[T]],
    dim: usize,
) -> Result<CoordinateTable, DiagError> {
    let first = chains.first().ok_or(DiagError::Empty)?;
    if dim == 0 {
        return Err(DiagError::Empty);
    }
    let n = first.len() / dim;
    if let Some(c) = chains.iter().find(|c| c.len() != n * dim) {
        return Err(DiagError::Length {
            expected: n * dim,
            found: c.len(),
        });
    }
    if n < 8 {
        return Err(DiagError::TooShort {
            needed: 8,
            found: n,
        });
    }
    let mut table = CoordinateTable::default();
    let mut series: Vec<Vec<f64>> = vec![Vec::with_capacity(n); chains.len()];
    let mut pooled: Vec<f64> = Vec::with_capacity(n * chains.len());
    for i in 0..dim {
        pooled.clear();
        for (s, c) in series.iter_mut().zip(chains) {
            s.clear();
            s.extend(c.iter().skip(i).step_by(dim).map(|&v| v.into()));
            pooled.extend_from_slice(s);
        }
        let views: Vec<&[f64]> = series.iter().map(Vec::as_slice).collect();
        check_chains(&views, 8)?;
        let row = coordinate_row(&views, &mut pooled);
        table.sd.push(row.sd);
        table.q5.push(row.q[0]);
        table.q50.push(row.q[1]);
        table.q95.push(row.q[2]);
        table.mcse_mean.push(row.mcse_mean);
        table.ess_tail.push(row.ess_tail);
    }
    Ok(table)
}

/// One coordinate's figures.
struct Row {
    sd: f64,
    q: [f64; 3],
    mcse_mean: f64,
    ess_tail: f64,
}

/// The figures of one coordinate's chains (equal lengths `≥ 8`, finite); `pooled` holds all
/// their draws and is sorted here.
fn coordinate_row(chains: &[&[f64]], pooled: &mut [f64]) -> Row {
    let total = pooled.len() as f64;
    let mean = pooled.iter().sum::<f64>() / total;
    let sd = (pooled.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (total - 1.0)).sqrt();
    pooled.sort_by(f64::total_cmp);
    let q = [0.05, 0.5, 0.95].map(|p| quantile(pooled, p));
    let n = chains.first().map_or(0, |c| c.len());
    let halves = split_halves(chains, n);
    // An undefined ESS (a series that never varies) is NaN.
    let ess_of = |h: &[&[f64]]| ess(h).unwrap_or(f64::NAN);
    let ess_mean = ess_of(&halves);
    let tail = [q[0], q[2]].map(|level| {
        let indicators: Vec<Vec<f64>> = halves
            .iter()
            .map(|h| h.iter().map(|&v| f64::from(u8::from(v <= level))).collect())
            .collect();
        let views: Vec<&[f64]> = indicators.iter().map(Vec::as_slice).collect();
        ess_of(&views)
    });
    Row {
        sd,
        q,
        mcse_mean: if sd > 0.0 {
            sd / ess_mean.sqrt()
        } else {
            f64::NAN
        },
        // The smaller defined one; NaN when neither is.
        ess_tail: tail[0].min(tail[1]),
    }
}

/// The `p`-quantile of sorted values by linear interpolation (NumPy's default).
fn quantile(sorted: &[f64], p: f64) -> f64 {
    let Some(&last) = sorted.last() else {
        return f64::NAN;
    };
    let h = (sorted.len() - 1) as f64 * p;
    let lo = h.floor() as usize;
    let below = sorted.get(lo).copied().unwrap_or(last);
    let above = sorted.get(lo + 1).copied().unwrap_or(below);
    below + (h - lo as f64) * (above - below)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_interpolate_as_numpy() {
        // numpy.quantile([0, 1, 2, 3, 4], [0.05, 0.5, 0.95]) = [0.2, 2.0, 3.8]
        let v = [0.0, 1.0, 2.0, 3.0, 4.0];
        assert!((quantile(&v, 0.05) - 0.2).abs() < 1e-12);
        assert_eq!(quantile(&v, 0.5), 2.0);
        assert!((quantile(&v, 0.95) - 3.8).abs() < 1e-12);
    }

    #[test]
    fn independent_draws_have_full_ess_and_the_mcse_of_iid_draws() {
        // Two chains of 2000 pseudo-random values in 0..4 (a multiplicative congruential
        // stream): nearly independent, so both ESS are near the 4000 draws and the MCSE near
        // sd/√4000.
        let mut x: u64 = 12345;
        let mut next = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((x >> 33) % 4) as u8
        };
        let data: Vec<u8> = (0..4000).map(|_| next()).collect();
        let chains: Vec<&[u8]> = data.chunks(2000).collect();
        let t = coordinate_table(&chains, 1).unwrap();
        let sd = t.sd[0];
        assert!((sd - 1.118).abs() < 0.03, "{sd}");
        assert_eq!((t.q5[0], t.q95[0]), (0.0, 3.0));
        assert!((1.0..=2.0).contains(&t.q50[0]), "{t:?}");
        assert!(
            (t.mcse_mean[0] / (sd / 4000f64.sqrt()) - 1.0).abs() < 0.15,
            "{t:?}"
        );
        assert!(t.ess_tail[0] > 3000.0 && t.ess_tail[0] < 5000.0, "{t:?}");
    }

    #[test]
    fn a_stuck_coordinate_has_no_ess() {
        let data = [1u8; 40];
        let chains: Vec<&[u8]> = data.chunks(20).collect();
        let t = coordinate_table(&chains, 1).unwrap();
        assert_eq!(t.sd[0], 0.0);
        assert!(t.mcse_mean[0].is_nan() && t.ess_tail[0].is_nan());
        assert_eq!((t.q5[0], t.q50[0], t.q95[0]), (1.0, 1.0, 1.0));
        assert!(matches!(
            coordinate_table(&[&data[..7]], 1),
            Err(DiagError::TooShort { .. })
        ));
    }

    #[test]
    fn coordinates_are_read_with_their_stride() {
        // Two coordinates: the first always 0, the second alternating 0, 1.
        let data: Vec<u8> = (0..40)
            .map(|k| if k % 2 == 0 { 0 } else { ((k / 2) % 2) as u8 })
            .collect();
        let t = coordinate_table(&[&data], 2).unwrap();
        assert_eq!(t.sd[0], 0.0);
        assert!(t.sd[1] > 0.4 && t.q95[1] == 1.0, "{t:?}");
    }
}
