//! When a run's numbers should not be trusted: the thresholds of Vehtari et al. (2021) turned
//! into warnings a summary carries.

use super::{DrawArray, ess_per_coordinate_on, rhat};

/// R-hat above this says the chains have not mixed (Vehtari et al. 2021 recommend 1.01).
pub const RHAT_LIMIT: f64 = 1.01;
/// An ESS below this is too small for R-hat and the ESS itself to be reliable (Vehtari et al.
/// 2021 ask for at least 100, i.e. 50 per split chain with four chains).
pub const ESS_LIMIT: f64 = 100.0;

/// The warnings for a run whose largest R-hat is `rhat_max` and whose smallest ESS is
/// `ess_min` (NaN values are not judged): one line each, empty when both pass.
pub fn convergence_warnings(rhat_max: f64, ess_min: f64) -> Vec<String> {
    let mut warnings = Vec::new();
    if rhat_max > RHAT_LIMIT {
        warnings.push(format!(
            "R-hat {rhat_max:.3} > {RHAT_LIMIT}: the chains have not mixed; run longer or \
             start them closer"
        ));
    }
    if ess_min < ESS_LIMIT {
        warnings.push(format!(
            "ESS {ess_min:.1} < {ESS_LIMIT}: too few effective draws for reliable estimates \
             or R-hat; run longer"
        ));
    }
    warnings
}

/// R-hat (largest over the coordinates) and bulk ESS (smallest) of a `(chains, draws, dim)`
/// array of continuous draws, with `threads` workers for the ESS (`0`: one per core).
/// `None` when there are too few draws (fewer than 4 per chain) or a draw is not finite.
pub fn rhat_and_ess<T: Copy + Into<f64> + Sync>(
    draws: &DrawArray<'_, T>,
    threads: usize,
) -> Option<(f64, f64)> {
    let ess = ess_per_coordinate_on(draws, threads).ok()?;
    let mut worst = f64::NAN;
    for i in 0..draws.dim() {
        let series: Vec<Vec<f64>> = (0..draws.chains())
            .map(|c| draws.coordinate(c, i))
            .collect();
        let views: Vec<&[f64]> = series.iter().map(Vec::as_slice).collect();
        if let Ok(r) = rhat(&views) {
            worst = worst.max(r.max());
        }
    }
    Some((worst, ess.min))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds() {
        assert!(convergence_warnings(1.0, 400.0).is_empty());
        assert!(convergence_warnings(f64::NAN, f64::NAN).is_empty());
        let w = convergence_warnings(1.59, 12.0);
        assert_eq!(w.len(), 2);
        assert!(w[0].starts_with("R-hat 1.590 > 1.01"), "{}", w[0]);
        assert!(w[1].starts_with("ESS 12.0 < 100"), "{}", w[1]);
    }

    #[test]
    fn separated_chains_have_a_large_rhat() {
        // Two chains of 50 draws each around different centres, one coordinate.
        let data: Vec<f64> = (0..100)
            .map(|k| ((k * 37) % 11) as f64 + if k < 50 { 0.0 } else { 100.0 })
            .collect();
        let draws = DrawArray::new(&data, 2, 50, 1).unwrap();
        let (r, ess) = rhat_and_ess(&draws, 1).unwrap();
        assert!(r > 1.5 && ess < ESS_LIMIT, "{r} {ess}");
        let few = DrawArray::new(&data[..6], 2, 3, 1).unwrap();
        assert!(rhat_and_ess(&few, 1).is_none());
    }
}
