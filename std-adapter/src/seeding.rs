//! How chains are seeded: one master seed, one non-overlapping stream per chain.
//!
//! Chain `c` uses `Xoshiro256PlusPlus::seed_from_u64(seed)` advanced by `c` calls of `jump()`
//! (2^128 steps each), so chains never share random numbers and a chain's stream does not depend
//! on how many chains or threads a run has.

use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// The random stream of chain `chain` under master seed `seed`.
///
/// # Examples
///
/// ```
/// use rand_core::Rng;
/// let mut a = langevin_std::seeding::chain_rng(7, 2);
/// let mut b = langevin_std::seeding::chain_rng(7, 2);
/// assert_eq!(a.next_u64(), b.next_u64());
/// ```
pub fn chain_rng(seed: u64, chain: usize) -> Xoshiro256PlusPlus {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    for _ in 0..chain {
        rng.jump();
    }
    rng
}

/// The streams of chains `0..chains`, in order: the same values as [`chain_rng`] for each chain,
/// in `O(chains)` jumps rather than `O(chains²)`.
pub fn chain_rngs(seed: u64, chains: usize) -> Vec<Xoshiro256PlusPlus> {
    chain_rngs_from(seed, 0, chains)
}

/// The streams of chains `first..first + chains`, in order: the same values as [`chain_rng`]
/// for each chain, so a run of a block of chains (a shard) draws what those chains draw in one
/// run of all of them.
///
/// # Examples
///
/// ```
/// use langevin_std::seeding::{chain_rngs, chain_rngs_from};
/// assert_eq!(chain_rngs_from(7, 3, 2), chain_rngs(7, 5)[3..].to_vec());
/// ```
pub fn chain_rngs_from(seed: u64, first: usize, chains: usize) -> Vec<Xoshiro256PlusPlus> {
    let mut rng = chain_rng(seed, first);
    (0..chains)
        .map(|_| {
            let this = rng.clone();
            rng.jump();
            this
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::Rng;

    #[test]
    fn batch_streams_equal_single_streams() {
        let mut all = chain_rngs(11, 5);
        for (c, rng) in all.iter_mut().enumerate() {
            assert_eq!(rng.next_u64(), chain_rng(11, c).next_u64());
        }
    }

    #[test]
    fn a_block_of_streams_is_the_same_block_of_one_run() {
        let all = chain_rngs(11, 9);
        for first in 0..9 {
            assert_eq!(chain_rngs_from(11, first, 9 - first), all[first..].to_vec());
        }
    }
}
