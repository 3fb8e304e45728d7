//! Potential scale reduction factors (R-hat) and rank normalisation.

use super::normal::inverse_normal_cdf;
use super::{DiagError, check_chains, mean, median_of_defined, sample_variance};

/// The two halves of each chain of length `n`; for odd `n` the middle draw is dropped.
pub(crate) fn split_halves<'a>(chains: &[&'a [f64]], n: usize) -> Vec<&'a [f64]> {
    let half = n / 2;
    chains
        .iter()
        .flat_map(|c| [&c[..half], &c[n - half..]])
        .collect()
}

/// Classic R-hat of equal-length chains (at least two chains of at least two draws):
/// `sqrt(var⁺ / W)` with `var⁺ = (n−1)/n · W + B/n`.
pub(super) fn basic_rhat<C: AsRef<[f64]>>(chains: &[C]) -> Result<f64, DiagError> {
    let n = chains.first().map_or(0, |c| c.as_ref().len());
    let means: Vec<f64> = chains.iter().map(|c| mean(c.as_ref())).collect();
    let within: Vec<f64> = chains.iter().map(|c| sample_variance(c.as_ref())).collect();
    rhat_from_moments(n, &means, &within)
}

/// [`basic_rhat`] from the chains' length `n`, means and sample variances.
pub(super) fn rhat_from_moments(n: usize, means: &[f64], within: &[f64]) -> Result<f64, DiagError> {
    let n = n as f64;
    let w = mean(within);
    let b_over_n = sample_variance(means);
    if w <= 0.0 {
        return if b_over_n > 0.0 {
            // Every chain is stuck at its own value: the chains have not mixed at all.
            Ok(f64::INFINITY)
        } else {
            Err(DiagError::ZeroVariance)
        };
    }
    Ok((((n - 1.0) / n * w + b_over_n) / w).sqrt())
}

/// Split R-hat (Gelman et al., BDA3): each chain is cut into halves and the classic potential
/// scale reduction factor is computed over the halves.
///
/// # Errors
///
/// [`DiagError::Empty`], [`DiagError::RaggedChains`], [`DiagError::TooShort`] (fewer than 4
/// draws), [`DiagError::NonFinite`], [`DiagError::ZeroVariance`] if every draw is the same.
/// Chains each stuck at a different constant give `+∞`.
pub fn split_rhat(chains: &[&[f64]]) -> Result<f64, DiagError> {
    let n = check_chains(chains, 4)?;
    basic_rhat(&split_halves(chains, n))
}

/// Rank-normalised split R-hat (Vehtari et al. 2021).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rhat {
    /// R-hat of the rank-normalised split chains: sensitive to differences in location.
    pub bulk: f64,
    /// R-hat of the rank-normalised split chains after folding `|x − median|`: sensitive to
    /// differences in scale. NaN when the folded draws are all equal (a two-valued statistic
    /// whose median falls halfway between its values).
    pub folded: f64,
}

impl Rhat {
    /// The reported value, `max(bulk, folded)` (the bulk value alone if the folded one is NaN).
    /// Values above 1.01 signal chains that have not mixed.
    pub fn max(&self) -> f64 {
        self.bulk.max(self.folded)
    }
}

/// Rank-normalised split R-hat with its bulk and folded parts; [`Rhat::max`] is the value to
/// report.
///
/// Each chain is split in halves; all draws are ranked together (ties get their average rank)
/// and mapped to `Φ⁻¹((r − 3/8) / (S + 1/4))` with `S` the total number of draws; the classic
/// R-hat of these z-scores is the bulk value. The folded value repeats this on
/// `|x − median(x)|`.
///
/// # Errors
///
/// As [`split_rhat`].
///
/// # Examples
///
/// ```
/// use langevin_std::diagnostics::rhat;
/// let a: Vec<f64> = (0..100).map(|i| ((i * 37) % 101) as f64).collect();
/// let b: Vec<f64> = a.iter().map(|v| v + 200.0).collect();
/// assert!(rhat(&[&a, &b]).unwrap().max() > 1.5);
/// ```
pub fn rhat(chains: &[&[f64]]) -> Result<Rhat, DiagError> {
    let n = check_chains(chains, 4)?;
    let halves = split_halves(chains, n);
    let bulk = basic_rhat(&rank_normalize(&halves)?)?;
    let pooled: Vec<f64> = halves.iter().flat_map(|c| c.iter().copied()).collect();
    let median = median_of_defined(&pooled);
    let folded: Vec<Vec<f64>> = halves
        .iter()
        .map(|c| c.iter().map(|v| (v - median).abs()).collect())
        .collect();
    let folded_views: Vec<&[f64]> = folded.iter().map(Vec::as_slice).collect();
    let folded = match basic_rhat(&rank_normalize(&folded_views)?) {
        Err(DiagError::ZeroVariance) => f64::NAN,
        other => other?,
    };
    Ok(Rhat { bulk, folded })
}

/// Rank normalisation: all draws of all chains are ranked together (ties get their average
/// rank `r`, from 1) and replaced by `Φ⁻¹((r − 3/8) / (S + 1/4))`, `S` the total number of
/// draws. The chains keep their shapes.
///
/// # Errors
///
/// [`DiagError::Empty`] if there are no draws, [`DiagError::NonFinite`] for NaN or infinite
/// draws. Chains may have different lengths here.
pub fn rank_normalize(chains: &[&[f64]]) -> Result<Vec<Vec<f64>>, DiagError> {
    let total: usize = chains.iter().map(|c| c.len()).sum();
    if total == 0 {
        return Err(DiagError::Empty);
    }
    if chains.iter().flat_map(|c| c.iter()).any(|v| !v.is_finite()) {
        return Err(DiagError::NonFinite);
    }
    // Sorting (value, position) pairs keeps the comparisons on contiguous memory.
    let mut sorted: Vec<(f64, usize)> = chains
        .iter()
        .flat_map(|c| c.iter().copied())
        .zip(0..)
        .collect();
    sorted.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
    let mut z = vec![0.0; total];
    let s = total as f64;
    let mut start = 0;
    while start < total {
        let value = sorted[start].0;
        let end = start + sorted[start..].iter().take_while(|p| p.0 == value).count();
        // Ranks start..end (0-based) share the average 1-based rank.
        let rank = (start + end + 1) as f64 / 2.0;
        let score = inverse_normal_cdf((rank - 0.375) / (s + 0.25));
        for &(_, k) in &sorted[start..end] {
            z[k] = score;
        }
        start = end;
    }
    let mut out = Vec::with_capacity(chains.len());
    let mut offset = 0;
    for c in chains {
        out.push(z[offset..offset + c.len()].to_vec());
        offset += c.len();
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_share_the_average_rank() {
        let a = [3.0, 1.0, 3.0];
        let b = [2.0];
        let z = rank_normalize(&[&a, &b]).unwrap();
        // Ranks: 1.0 → 1, 2.0 → 2, the two 3.0 → 3.5.
        let f = |r: f64| inverse_normal_cdf((r - 0.375) / 4.25);
        assert_eq!(z[0], vec![f(3.5), f(1.0), f(3.5)]);
        assert_eq!(z[1], vec![f(2.0)]);
    }

    #[test]
    fn split_rhat_by_hand() {
        // Halves [0, 2] and [1, 3]: means 1 and 2, variances 2 and 2; W = 2,
        // B/n = var(means) = 0.5, var⁺ = 1/2 · 2 + 0.5 = 1.5, R = sqrt(0.75).
        let x = [0.0, 2.0, 1.0, 3.0];
        let r = split_rhat(&[&x]).unwrap();
        assert!((r - 0.75f64.sqrt()).abs() < 1e-15, "{r}");
    }

    #[test]
    fn stuck_chains_give_infinity() {
        let a = [0.0; 10];
        let b = [1.0; 10];
        assert_eq!(split_rhat(&[&a, &b]), Ok(f64::INFINITY));
        assert_eq!(split_rhat(&[&a, &a]), Err(DiagError::ZeroVariance));
    }
}
