//! Uniform and Gaussian draws from any [`rand_core::Rng`], defined bit for bit so that a seeded
//! chain gives the same values on every platform.

use rand_core::Rng;

const TWO_POW_NEG_53: f64 = 1.0 / (1u64 << 53) as f64;

/// A uniform draw from `[0, 1)` with 53 random bits.
///
/// # Examples
///
/// ```
/// use rand_core::SeedableRng;
/// let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
/// let u = langevin_core::random::unit_f64(&mut rng);
/// assert!((0.0..1.0).contains(&u));
/// ```
#[inline]
pub fn unit_f64<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    (rng.next_u64() >> 11) as f64 * TWO_POW_NEG_53
}

/// A uniform draw from the open interval `(0, 1)`: safe to take the logarithm of.
#[inline]
pub fn open_unit_f64<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    open_unit_f64_of(rng.next_u64())
}

/// The draw of [`open_unit_f64`] made from the word `word`.
#[inline]
pub(crate) fn open_unit_f64_of(word: u64) -> f64 {
    // The largest word would round to exactly 1.0: clamp it to the largest double below 1.
    (((word >> 11) as f64 + 0.5) * TWO_POW_NEG_53).min(1.0 - TWO_POW_NEG_53)
}

/// A uniform index in `0..n` (`n ≥ 1`) by a 64×64-bit multiply: constant time, no rejection
/// loop, and a bias below `n / 2^64`. Returns 0 for `n = 0`.
#[inline]
pub fn index<R: Rng + ?Sized>(rng: &mut R, n: usize) -> usize {
    ((u128::from(rng.next_u64()) * n as u128) >> 64) as usize
}

/// A pair of independent standard normal draws (Box–Muller on `libm`).
#[inline]
pub fn normal_pair<R: Rng + ?Sized>(rng: &mut R) -> (f64, f64) {
    let u1 = open_unit_f64(rng);
    let u2 = unit_f64(rng);
    let radius = libm::sqrt(-2.0 * libm::log(u1));
    let (s, c) = libm::sincos(core::f64::consts::TAU * u2);
    (radius * c, radius * s)
}

/// Fills `out` with independent standard normal draws, two per Box–Muller pair.
///
/// # Examples
///
/// ```
/// use rand_core::SeedableRng;
/// let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
/// let mut z = [0.0f64; 5];
/// langevin_core::random::fill_normal(&mut rng, &mut z);
/// assert!(z.iter().all(|v| v.is_finite()));
/// ```
pub fn fill_normal<R: Rng + ?Sized>(rng: &mut R, out: &mut [f64]) {
    let mut pairs = out.chunks_exact_mut(2);
    for pair in &mut pairs {
        let (a, b) = normal_pair(rng);
        if let [x, y] = pair {
            *x = a;
            *y = b;
        }
    }
    if let [last] = pairs.into_remainder() {
        *last = normal_pair(rng).0;
    }
}

/// Shuffles `items` uniformly (Fisher–Yates with [`index`]).
pub fn shuffle<T, R: Rng + ?Sized>(rng: &mut R, items: &mut [T]) {
    let mut rest = items;
    while let Some((last, head)) = rest.split_last_mut() {
        if head.is_empty() {
            break;
        }
        // j = i swaps `last` with itself: nothing to do.
        if let Some(other) = head.get_mut(index(rng, head.len() + 1)) {
            core::mem::swap(last, other);
        }
        rest = head;
    }
}

/// A draw by inverting a running sum of weights: the values are offered in a fixed order and
/// the first whose running sum exceeds the threshold is kept, with its weight. Branch-free
/// selects, so the time does not depend on the draw; if no running sum exceeds the threshold
/// (NaN weights), the fallback value is kept with a NaN weight.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pick<V> {
    threshold: f64,
    cum: f64,
    found: bool,
    value: V,
    weight: f64,
}

impl<V: Copy> Pick<V> {
    /// A pick at `threshold` (a uniform times the total weight).
    #[inline(always)]
    pub(crate) fn new(threshold: f64, fallback: V) -> Self {
        Self {
            threshold,
            cum: 0.0,
            found: false,
            value: fallback,
            weight: f64::NAN,
        }
    }

    /// Adds `weight` to the running sum; keeps `value` if it is the first to exceed the
    /// threshold.
    #[inline(always)]
    pub(crate) fn offer(&mut self, value: V, weight: f64) {
        self.cum += weight;
        let take = (self.cum > self.threshold) & !self.found;
        self.value = if take { value } else { self.value };
        self.weight = if take { weight } else { self.weight };
        self.found |= take;
    }

    /// The value kept (the fallback if none was), its weight, and whether one was.
    #[inline(always)]
    pub(crate) fn result(&self) -> (V, f64, bool) {
        (self.value, self.weight, self.found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    #[test]
    fn index_stays_in_range() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        for n in 1..50 {
            for _ in 0..100 {
                assert!(index(&mut rng, n) < n);
            }
        }
        assert_eq!(index(&mut rng, 0), 0);
    }

    #[test]
    fn open_unit_excludes_both_ends() {
        struct Constant(u64);
        impl rand_core::TryRng for Constant {
            type Error = core::convert::Infallible;
            fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
                Ok(self.0 as u32)
            }
            fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
                Ok(self.0)
            }
            fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
                dst.fill(self.0 as u8);
                Ok(())
            }
        }
        let top = open_unit_f64(&mut Constant(u64::MAX));
        let bottom = open_unit_f64(&mut Constant(0));
        assert!(top < 1.0 && bottom > 0.0, "{bottom} {top}");
    }

    #[test]
    fn normal_moments() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
        let mut z = [0.0f64; 20001];
        fill_normal(&mut rng, &mut z);
        let n = z.len() as f64;
        let mean = z.iter().sum::<f64>() / n;
        let var = z.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
        // 5 standard errors: sd(mean) = 1/√n, sd(var) ≈ √(2/n).
        assert!(mean.abs() < 5.0 / n.sqrt(), "mean {mean}");
        assert!((var - 1.0).abs() < 5.0 * (2.0 / n).sqrt(), "var {var}");
    }
}
