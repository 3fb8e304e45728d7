//! Data access: which term indices a minibatch step visits.

use super::BuildError;
use crate::error::LenError;
use crate::random;
use rand_core::Rng;

/// How minibatch indices are chosen (Zhang et al. 2020, Sec. 3.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Access {
    /// RA: `n` indices uniform over `0..N`, with replacement. The only unbiased choice.
    #[default]
    Random,
    /// RR: a fresh uniform permutation at the start of every data pass, read in order. A batch
    /// that straddles two passes takes the end of one permutation and the start of the next.
    Reshuffle,
    /// CA: `0, 1, …, N−1, 0, 1, …` in order.
    Cyclic,
}

impl Access {
    /// The `u32` workspace [`BatchStream::new`] needs: `N` for [`Access::Reshuffle`], else 0.
    pub const fn index_len(self, terms: usize) -> usize {
        match self {
            Access::Reshuffle => terms,
            Access::Random | Access::Cyclic => 0,
        }
    }
}

/// A stream of term indices under one [`Access`] strategy; the permutation of
/// [`Access::Reshuffle`] lives in caller memory.
#[derive(Debug)]
pub struct BatchStream<'a> {
    access: Access,
    terms: u32,
    cursor: u32,
    perm: &'a mut [u32],
}

impl<'a> BatchStream<'a> {
    /// A stream over `terms` indices. `perm` must have length
    /// [`access.index_len(terms)`](Access::index_len); it is overwritten.
    ///
    /// # Errors
    ///
    /// [`BuildError::NoTerms`], [`BuildError::TooManyTerms`], or a length error for `perm`.
    pub fn new(access: Access, terms: usize, perm: &'a mut [u32]) -> Result<Self, BuildError> {
        if terms == 0 {
            return Err(BuildError::NoTerms);
        }
        let n = u32::try_from(terms).map_err(|_| BuildError::TooManyTerms(terms))?;
        LenError::check("permutation", access.index_len(terms), perm.len())?;
        for (k, p) in (0u32..).zip(perm.iter_mut()) {
            *p = k;
        }
        // Reshuffle starts "at the end of a pass" so that the first index draws a permutation.
        let cursor = if access == Access::Reshuffle { n } else { 0 };
        Ok(Self {
            access,
            terms: n,
            cursor,
            perm,
        })
    }

    /// The strategy.
    pub fn access(&self) -> Access {
        self.access
    }

    /// The number of terms `N`.
    pub fn terms(&self) -> usize {
        self.terms as usize
    }

    /// The next index. Random access draws one `u64`; reshuffling draws `N − 1` at the start
    /// of each pass; cyclic access draws nothing.
    #[inline]
    pub fn next_index<R: Rng + ?Sized>(&mut self, rng: &mut R) -> usize {
        match self.access {
            Access::Random => random::index(rng, self.terms as usize),
            Access::Cyclic => {
                let i = self.cursor;
                self.cursor = if i + 1 >= self.terms { 0 } else { i + 1 };
                i as usize
            }
            Access::Reshuffle => {
                if self.cursor >= self.terms {
                    random::shuffle(rng, self.perm);
                    self.cursor = 0;
                }
                let i = self.perm.get(self.cursor as usize).copied().unwrap_or(0);
                self.cursor += 1;
                i as usize
            }
        }
    }

    /// Fills `out` with the next `out.len()` indices.
    pub fn fill<R: Rng + ?Sized>(&mut self, rng: &mut R, out: &mut [u32]) {
        for o in out.iter_mut() {
            *o = self.next_index(rng) as u32;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    #[test]
    fn cyclic_wraps() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let mut s = BatchStream::new(Access::Cyclic, 3, &mut []).unwrap();
        let v: std::vec::Vec<usize> = (0..7).map(|_| s.next_index(&mut rng)).collect();
        assert_eq!(v, [0, 1, 2, 0, 1, 2, 0]);
    }

    #[test]
    fn reshuffle_passes_are_permutations() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(2);
        let mut perm = [0u32; 5];
        let mut s = BatchStream::new(Access::Reshuffle, 5, &mut perm).unwrap();
        for _ in 0..20 {
            let mut seen = [false; 5];
            for _ in 0..5 {
                seen[s.next_index(&mut rng)] = true;
            }
            assert!(seen.iter().all(|&b| b));
        }
    }

    #[test]
    fn bad_sizes() {
        assert_eq!(
            BatchStream::new(Access::Random, 0, &mut []).unwrap_err(),
            BuildError::NoTerms
        );
        assert!(BatchStream::new(Access::Reshuffle, 3, &mut [0; 2]).is_err());
    }
}
