//! Diagnostics for chains over discrete states: the DISCS Hamming statistic, empirical
//! marginals and their error against exact ones.

use core::fmt;

use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

use super::{DiagError, ess, mean};

/// A state value of one coordinate of a discrete chain: `u8` (up to 256 states) or `u16` (up to
/// 65536 states).
pub trait DiscreteValue: Copy + PartialEq + Into<u32> + Send + Sync + fmt::Debug {
    /// The most states a coordinate of this type can hold.
    const MAX_STATES: usize;

    /// The value of state `k`; saturates at the largest value for `k ≥ MAX_STATES`.
    fn from_state(k: usize) -> Self;

    /// The state index of this value.
    fn state(self) -> usize {
        self.into() as usize
    }
}

impl DiscreteValue for u8 {
    const MAX_STATES: usize = 1 << 8;

    fn from_state(k: usize) -> Self {
        u8::try_from(k).unwrap_or(u8::MAX)
    }
}

impl DiscreteValue for u16 {
    const MAX_STATES: usize = 1 << 16;

    fn from_state(k: usize) -> Self {
        u16::try_from(k).unwrap_or(u16::MAX)
    }
}

/// Checks `1 ≤ num_states ≤ T::MAX_STATES`.
pub(crate) fn check_num_states<T: DiscreteValue>(num_states: usize) -> Result<(), DiagError> {
    if num_states == 0 || num_states > T::MAX_STATES {
        return Err(DiagError::InvalidNumStates { num_states });
    }
    Ok(())
}

/// Checks that `draws` holds whole draws of `dim` values; returns the number of draws.
pub(crate) fn check_draws<T>(draws: &[T], dim: usize) -> Result<usize, DiagError> {
    if dim == 0 {
        return Err(DiagError::Empty);
    }
    if !draws.len().is_multiple_of(dim) {
        return Err(DiagError::Length {
            expected: draws.len() / dim * dim + dim,
            found: draws.len(),
        });
    }
    Ok(draws.len() / dim)
}

/// A reference state with coordinates drawn uniformly from `0..num_states`, reproducible from
/// `seed` (Xoshiro256++ seeded by `seed_from_u64`).
///
/// # Errors
///
/// [`DiagError::InvalidNumStates`] unless `1 ≤ num_states ≤ T::MAX_STATES`.
pub fn random_reference<T: DiscreteValue>(
    dim: usize,
    num_states: usize,
    seed: u64,
) -> Result<Vec<T>, DiagError> {
    check_num_states::<T>(num_states)?;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    Ok((0..dim)
        .map(|_| T::from_state(langevin_core::random::index(&mut rng, num_states)))
        .collect())
}

/// The Hamming distance of every draw of `chain` (flat, `draws × dim`) to `reference`: the
/// scalar series that the DISCS benchmark takes the ESS of.
///
/// # Errors
///
/// [`DiagError::Empty`] for `dim = 0`; [`DiagError::Length`] if `reference.len() != dim` or
/// `chain.len()` is not a multiple of `dim`.
pub fn hamming_series<T: DiscreteValue>(
    chain: &[T],
    dim: usize,
    reference: &[T],
) -> Result<Vec<f64>, DiagError> {
    check_draws(chain, dim)?;
    if reference.len() != dim {
        return Err(DiagError::Length {
            expected: dim,
            found: reference.len(),
        });
    }
    Ok(chain
        .chunks_exact(dim)
        .map(|x| x.iter().zip(reference).filter(|(a, b)| a != b).count() as f64)
        .collect())
}

/// The DISCS effective sample size of a set of discrete chains.
#[derive(Debug, Clone, PartialEq)]
pub struct DiscsEss {
    /// Single-chain [`ess`](super::ess()) of each chain's Hamming series (second half only);
    /// NaN for a chain whose statistic never changes there.
    pub per_chain: Vec<f64>,
    /// Mean of the defined per-chain values (NaN if none is defined): the number DISCS reports.
    pub mean: f64,
    /// Number of chains whose ESS is undefined.
    pub undefined: usize,
}

/// The DISCS benchmark's ESS for discrete chains: each draw of the **second half** of each chain
/// (draws `⌊n/2⌋..n`) is mapped to its Hamming distance from one fixed `reference` state, the
/// single-chain ESS of that scalar series is taken per chain, and the results are averaged over
/// chains. Divide by the number of target evaluations (or seconds) for ESS per evaluation.
///
/// Chains may differ in length. A chain whose statistic is constant over its second half gets
/// NaN (it did not move as seen by this statistic) and is left out of the mean, and counted.
///
/// # Errors
///
/// [`DiagError::Empty`] without chains, the errors of [`hamming_series`], and
/// [`DiagError::TooShort`] if a chain's second half has fewer than 4 draws.
///
/// # Examples
///
/// ```
/// use langevin_std::diagnostics::{discs_ess, random_reference};
/// let dim = 3;
/// let reference: Vec<u8> = random_reference(dim, 2, 42).unwrap();
/// // A chain cycling through states.
/// let chain: Vec<u8> = (0..64u8).flat_map(|t| [t & 1, (t >> 1) & 1, (t >> 2) & 1]).collect();
/// let report = discs_ess(&[&chain], dim, &reference).unwrap();
/// assert_eq!(report.per_chain.len(), 1);
/// assert!(report.mean > 0.0);
/// ```
pub fn discs_ess<T: DiscreteValue>(
    chains: &[&[T]],
    dim: usize,
    reference: &[T],
) -> Result<DiscsEss, DiagError> {
    if chains.is_empty() {
        return Err(DiagError::Empty);
    }
    let mut per_chain = Vec::with_capacity(chains.len());
    for chain in chains {
        let draws = check_draws(chain, dim)?;
        let second_half = &chain[draws / 2 * dim..];
        let series = hamming_series(second_half, dim, reference)?;
        per_chain.push(match ess(&[&series]) {
            Err(DiagError::ZeroVariance) => f64::NAN,
            other => other?,
        });
    }
    let defined: Vec<f64> = per_chain.iter().copied().filter(|v| !v.is_nan()).collect();
    let undefined = per_chain.len() - defined.len();
    let mean = if defined.is_empty() {
        f64::NAN
    } else {
        mean(&defined)
    };
    Ok(DiscsEss {
        per_chain,
        mean,
        undefined,
    })
}

/// Empirical marginals `P̂(x_i = k)` of the draws of all `chains` pooled, laid out as
/// `i * num_states + k` (the layout of [`Enumeration::marginals`](super::Enumeration::marginals)).
///
/// # Errors
///
/// [`DiagError::Empty`] without draws or for `dim = 0`, [`DiagError::Length`] for a chain that
/// does not hold whole draws, [`DiagError::InvalidNumStates`], and
/// [`DiagError::StateOutOfRange`] for a value `≥ num_states`.
pub fn empirical_marginals<T: DiscreteValue>(
    chains: &[&[T]],
    dim: usize,
    num_states: usize,
) -> Result<Vec<f64>, DiagError> {
    check_num_states::<T>(num_states)?;
    let mut counts = vec![0u64; dim * num_states];
    let mut total = 0usize;
    for chain in chains {
        total += check_draws(chain, dim)?;
        for draw in chain.chunks_exact(dim) {
            for (i, &v) in draw.iter().enumerate() {
                let k = v.state();
                if k >= num_states {
                    return Err(DiagError::StateOutOfRange {
                        value: v.into(),
                        num_states,
                    });
                }
                counts[i * num_states + k] += 1;
            }
        }
    }
    if total == 0 {
        return Err(DiagError::Empty);
    }
    Ok(counts.iter().map(|&c| c as f64 / total as f64).collect())
}

/// Root mean square error `sqrt(mean_j (estimated_j − exact_j)²)` between two marginal tables
/// of the same layout.
///
/// For binary states, the table of `P(x_i = 1)` alone and the full table `P(x_i = k)` give the
/// same value, since the two entries of a coordinate have equal errors.
///
/// # Errors
///
/// [`DiagError::Empty`], [`DiagError::Length`] if the lengths differ, [`DiagError::NonFinite`].
pub fn marginal_rmse(estimated: &[f64], exact: &[f64]) -> Result<f64, DiagError> {
    if estimated.is_empty() {
        return Err(DiagError::Empty);
    }
    if estimated.len() != exact.len() {
        return Err(DiagError::Length {
            expected: exact.len(),
            found: estimated.len(),
        });
    }
    if estimated.iter().chain(exact).any(|v| !v.is_finite()) {
        return Err(DiagError::NonFinite);
    }
    let sum: f64 = estimated
        .iter()
        .zip(exact)
        .map(|(a, b)| (a - b) * (a - b))
        .sum();
    Ok((sum / estimated.len() as f64).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hamming_counts_differences() {
        let chain: [u8; 6] = [0, 1, 2, 2, 0, 1];
        let series = hamming_series(&chain, 3, &[0, 1, 0]).unwrap();
        assert_eq!(series, vec![1.0, 3.0]);
        assert!(hamming_series(&chain, 4, &[0, 1, 0, 0]).is_err());
        assert!(hamming_series(&chain, 3, &[0, 1]).is_err());
    }

    #[test]
    fn marginals_count_states() {
        let a: [u16; 4] = [0, 2, 1, 2];
        let b: [u16; 2] = [0, 0];
        let m = empirical_marginals(&[&a, &b], 2, 3).unwrap();
        assert_eq!(
            m,
            vec![2.0 / 3.0, 1.0 / 3.0, 0.0, 1.0 / 3.0, 0.0, 2.0 / 3.0]
        );
        assert!(matches!(
            empirical_marginals(&[&a[..]], 2, 2),
            Err(DiagError::StateOutOfRange { value: 2, .. })
        ));
    }

    #[test]
    fn reference_is_reproducible_and_in_range() {
        let a: Vec<u16> = random_reference(1000, 21, 9).unwrap();
        let b: Vec<u16> = random_reference(1000, 21, 9).unwrap();
        assert_eq!(a, b);
        assert!(a.iter().all(|&v| v < 21));
        assert!(random_reference::<u8>(3, 257, 0).is_err());
    }

    #[test]
    fn rmse_by_hand() {
        let r = marginal_rmse(&[0.1, 0.5], &[0.4, 0.1]).unwrap();
        assert!((r - (0.125f64).sqrt()).abs() < 1e-15);
    }
}
