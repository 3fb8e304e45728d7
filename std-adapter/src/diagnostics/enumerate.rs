//! Exact normalisation of small discrete targets by enumerating every state.

use super::DiagError;
use super::discrete::{DiscreteValue, check_num_states};

/// The most states [`enumerate`] visits: `2^24` (`d · log2(S) ≤ 24`), 128 MiB of `f64`.
pub const ENUMERATION_LIMIT: usize = 1 << 24;

/// The exact distribution of a target over `{0..S-1}^d`.
///
/// States are indexed in odometer order with coordinate 0 fastest:
/// `index = Σ_i x_i · S^i`, so for binary states `x_i` is bit `i` of the index.
#[derive(Debug, Clone, PartialEq)]
pub struct Enumeration {
    dim: usize,
    num_states: usize,
    log_normalizer: f64,
    probs: Vec<f64>,
    marginals: Vec<f64>,
}

impl Enumeration {
    /// Coordinates per state, `d`.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Values per coordinate, `S`.
    pub fn num_states(&self) -> usize {
        self.num_states
    }

    /// Number of states, `S^d`.
    pub fn len(&self) -> usize {
        self.probs.len()
    }

    /// Always `false`: there is at least one state.
    pub fn is_empty(&self) -> bool {
        self.probs.is_empty()
    }

    /// `ln Z = ln Σ_x exp(U(x))`.
    pub fn log_normalizer(&self) -> f64 {
        self.log_normalizer
    }

    /// `π(x) = exp(U(x) − ln Z)` for every state, by index.
    pub fn probs(&self) -> &[f64] {
        &self.probs
    }

    /// Marginals `P(x_i = k)` laid out as `i * num_states + k`.
    pub fn marginals(&self) -> &[f64] {
        &self.marginals
    }

    /// The marginal distribution of coordinate `i` (`None` if `i ≥ dim`).
    pub fn marginal(&self, i: usize) -> Option<&[f64]> {
        self.marginals
            .get(i * self.num_states..(i + 1) * self.num_states)
    }

    /// The state with index `index` (`None` if `index ≥ len`).
    pub fn state<T: DiscreteValue>(&self, index: usize) -> Option<Vec<T>> {
        if index >= self.len() {
            return None;
        }
        let mut rest = index;
        Some(
            (0..self.dim)
                .map(|_| {
                    let k = rest % self.num_states;
                    rest /= self.num_states;
                    T::from_state(k)
                })
                .collect(),
        )
    }

    /// The index of `state` (`None` if its length is not `dim` or a value is out of range).
    pub fn index_of<T: DiscreteValue>(&self, state: &[T]) -> Option<usize> {
        if state.len() != self.dim {
            return None;
        }
        let mut index = 0;
        for &v in state.iter().rev() {
            let k = v.state();
            if k >= self.num_states {
                return None;
            }
            index = index * self.num_states + k;
        }
        Some(index)
    }
}

/// Sum with error growing like `log n` rather than `n`.
fn pairwise_sum(x: &[f64]) -> f64 {
    if x.len() <= 256 {
        return x.iter().sum();
    }
    let (a, b) = x.split_at(x.len() / 2);
    pairwise_sum(a) + pairwise_sum(b)
}

/// The elementwise sum of the consecutive blocks of `width` values of `x`, added pairwise.
fn sum_blocks(x: &[f64], width: usize) -> Vec<f64> {
    let blocks = x.len() / width;
    if blocks <= 1 {
        return x.to_vec();
    }
    let (a, b) = x.split_at(blocks / 2 * width);
    let mut left = sum_blocks(a, width);
    for (l, r) in left.iter_mut().zip(sum_blocks(b, width)) {
        *l += r;
    }
    left
}

/// Enumerates every state of `{0..num_states-1}^dim`, calling `log_density` exactly once per
/// state (in odometer order, see [`Enumeration`]), and returns the normalised probabilities
/// (by log-sum-exp) and the per-coordinate marginals.
///
/// `log_density` returns `U(x)` with `π(x) ∝ exp(U(x))`; `−∞` marks an impossible state.
///
/// # Precision
///
/// `Z` and the marginals are pairwise sums, so their relative errors stay near
/// `log2(S^d) · ε` (about `5e-15` at the limit) rather than growing with `S^d`. The
/// whole enumeration of `2^24` binary states takes well under a second for a cheap closure.
///
/// # Errors
///
/// [`DiagError::InvalidNumStates`] unless `1 ≤ num_states ≤ T::MAX_STATES`;
/// [`DiagError::TooManyStates`] if `num_states^dim > ENUMERATION_LIMIT`;
/// [`DiagError::NonFinite`] if `log_density` returns NaN or `+∞`, or `−∞` for every state.
///
/// # Examples
///
/// ```
/// use langevin_std::diagnostics::enumerate;
/// // Two independent bits with P(x_i = 1) = e / (1 + e).
/// let exact = enumerate::<u8, _>(2, 2, |x| x.iter().map(|&v| f64::from(v)).sum()).unwrap();
/// let p1 = 1f64.exp() / (1.0 + 1f64.exp());
/// assert!((exact.marginal(1).unwrap()[1] - p1).abs() < 1e-15);
/// assert_eq!(exact.index_of(&[1u8, 0]), Some(1));
/// ```
pub fn enumerate<T, F>(
    dim: usize,
    num_states: usize,
    mut log_density: F,
) -> Result<Enumeration, DiagError>
where
    T: DiscreteValue,
    F: FnMut(&[T]) -> f64,
{
    check_num_states::<T>(num_states)?;
    let mut total = 1usize;
    for _ in 0..dim {
        total = total
            .checked_mul(num_states)
            .filter(|&t| t <= ENUMERATION_LIMIT)
            .ok_or(DiagError::TooManyStates)?;
    }

    let mut state = vec![T::from_state(0); dim];
    let mut values = Vec::with_capacity(total);
    for _ in 0..total {
        let u = log_density(&state);
        if u.is_nan() || u == f64::INFINITY {
            return Err(DiagError::NonFinite);
        }
        values.push(u);
        // Odometer step: coordinate 0 turns fastest.
        for x in &mut state {
            let k = x.state() + 1;
            if k < num_states {
                *x = T::from_state(k);
                break;
            }
            *x = T::from_state(0);
        }
    }

    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if max == f64::NEG_INFINITY {
        return Err(DiagError::NonFinite);
    }
    for v in &mut values {
        *v = (*v - max).exp();
    }
    let z = pairwise_sum(&values);
    for v in &mut values {
        *v /= z;
    }
    let probs = values;

    // Coordinate i has value (index / S^i) mod S. Let R_j be the distribution of the
    // coordinates 0..j (higher ones summed out), an array of S^j values in the same order:
    // R_d = probs, and R_j adds the S blocks of S^j values of R_(j+1). Then
    // P(x_i = k) is the sum of the k-th stretch of S^i values of R_(i+1). The whole cascade
    // costs O(S^d log S).
    let mut marginals = vec![0.0; dim * num_states];
    let mut reduced = probs.clone();
    for i in (0..dim).rev() {
        let inner = reduced.len() / num_states;
        for (m, stretch) in marginals[i * num_states..(i + 1) * num_states]
            .iter_mut()
            .zip(reduced.chunks_exact(inner))
        {
            *m = pairwise_sum(stretch);
        }
        reduced = sum_blocks(&reduced, inner);
    }

    Ok(Enumeration {
        dim,
        num_states,
        log_normalizer: max + z.ln(),
        probs,
        marginals,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits() {
        assert!(matches!(
            enumerate::<u8, _>(25, 2, |_| 0.0),
            Err(DiagError::TooManyStates)
        ));
        assert!(enumerate::<u8, _>(3, 0, |_| 0.0).is_err());
        assert!(enumerate::<u8, _>(2, 2, |_| f64::NAN).is_err());
        assert!(enumerate::<u8, _>(2, 2, |_| f64::NEG_INFINITY).is_err());
        let one = enumerate::<u16, _>(0, 5, |_| 1.5).unwrap();
        assert_eq!(one.probs(), &[1.0]);
        assert!((one.log_normalizer() - 1.5).abs() < 1e-15);
    }

    #[test]
    fn calls_once_per_state_in_odometer_order() {
        let mut seen = Vec::new();
        let e = enumerate::<u16, _>(2, 3, |x| {
            seen.push(x.to_vec());
            0.0
        })
        .unwrap();
        assert_eq!(seen.len(), 9);
        for (i, s) in seen.iter().enumerate() {
            assert_eq!(e.index_of(s), Some(i));
            assert_eq!(e.state::<u16>(i).as_ref(), Some(s));
        }
        assert_eq!(seen[1], vec![1, 0]);
    }
}
