//! Random-walk Metropolis on binary states.

use crate::binary::LANES;
use crate::chain::BinaryChain;
use crate::domain::Binary;
use crate::error::{LenError, ParamError, StepError};
use crate::kernel::{Drawn, Kernel, Proposal, StepReport, advance};
use crate::target::Eval;
use rand_core::Rng;

/// `2^32` as an `f64`.
const TWO_POW_32: f64 = 4_294_967_296.0;

/// Random-walk Metropolis: every coordinate flips independently with probability `p` (the flip
/// rate), uninformed by the gradient; the proposal is symmetric, so the test is
/// `min(1, exp(U' − U))`.
///
/// Each coordinate uses 32 random bits and flips when they fall below `⌊p·2^32⌋`, so the flip
/// probability is exactly that threshold over `2^32`. A step consumes `⌈d/2⌉ + 1` words and one
/// evaluation (none if nothing flips).
///
/// # Examples
///
/// ```
/// use langevin_core::baselines::RandomWalk;
/// assert!(RandomWalk::new(0.05).is_ok());
/// assert!(RandomWalk::new(0.0).is_err());
/// assert!(RandomWalk::new(f64::NAN).is_err());
/// ```
#[derive(Clone, Copy, Debug)]
pub struct RandomWalk {
    rate: f64,
    threshold: u32,
}

impl RandomWalk {
    /// A walk with flip rate `p ∈ (0, 1)`.
    ///
    /// # Errors
    ///
    /// [`ParamError::OutOfRange`] unless `0 < p < 1`, and unless `p ≥ 2^-32` (a smaller rate
    /// would never flip).
    pub fn new(rate: f64) -> Result<Self, ParamError> {
        let threshold = rate * TWO_POW_32;
        if !(rate > 0.0 && rate < 1.0 && threshold >= 1.0) {
            return Err(ParamError::OutOfRange {
                name: "flip rate",
                value: rate,
            });
        }
        Ok(Self {
            rate,
            threshold: threshold as u32,
        })
    }

    /// The flip rate `p`.
    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// The exact flip probability `⌊p·2^32⌋ / 2^32` the draw uses.
    pub fn flip_probability(&self) -> f64 {
        f64::from(self.threshold) / TWO_POW_32
    }

    /// One step; see [`RandomWalk`].
    ///
    /// # Errors
    ///
    /// [`StepError::Len`] if the target's dimension differs from the chain's;
    /// [`StepError::Target`] for an unrecoverable target error.
    pub fn step<T, R>(
        &self,
        target: &mut T,
        chain: &mut BinaryChain<'_>,
        rng: &mut R,
    ) -> Result<StepReport, StepError<T::Error>>
    where
        T: Eval<Binary> + ?Sized,
        R: Rng + ?Sized,
    {
        advance(self, true, target, chain, rng).map(|r| r.0)
    }
}

impl Proposal<Binary> for RandomWalk {
    const SYMMETRIC: bool = true;

    /// Flips every coordinate whose 32 random bits fall below the threshold.
    fn draw<R: Rng + ?Sized>(
        &self,
        chain: &mut BinaryChain<'_>,
        rng: &mut R,
        _with_log_q: bool,
    ) -> Result<Drawn, LenError> {
        let mut count = 0usize;
        let mut bits = [0u32; LANES];
        let pairs = chain
            .x
            .chunks(LANES)
            .zip(chain.x_proposal.chunks_mut(LANES));
        for (c, (xc, nc)) in pairs.enumerate() {
            crate::ordinal::fill_bits(rng, &mut bits, xc.len());
            for (j, ((&xi, ni), &r)) in xc.iter().zip(nc.iter_mut()).zip(&bits).enumerate() {
                let flip = r < self.threshold;
                *ni = xi ^ u8::from(flip);
                if let Some(slot) = chain.changed.get_mut(count) {
                    *slot = (c * LANES + j) as u32;
                }
                count += usize::from(flip);
            }
        }
        Ok(Drawn::hamming(count, 0.0))
    }

    /// The proposal is symmetric: `log q` cancels and is reported as 0.
    fn reverse_log_q(&self, _chain: &mut BinaryChain<'_>) -> Result<f64, LenError> {
        Ok(0.0)
    }
}

impl Kernel<Binary> for RandomWalk {
    #[cfg_attr(target_arch = "x86_64", inline(always))]
    fn step<T, R>(
        &mut self,
        target: &mut T,
        chain: &mut BinaryChain<'_>,
        rng: &mut R,
    ) -> Result<StepReport, StepError<T::Error>>
    where
        T: Eval<Binary> + ?Sized,
        R: Rng + ?Sized,
    {
        RandomWalk::step(self, target, chain, rng)
    }
}

/// Random-walk Metropolis whose flip rate is tuned during a burn-in and then frozen.
///
/// During the first `burn_in` steps the log-odds of the rate follow a Robbins–Monro recursion
/// toward the target acceptance rate ρ* (default 0.234, the classic optimum for high-dimensional
/// random walks): `logit p ← logit p + (accepted − ρ*) / (1 + t)^0.6`, with `p` kept in
/// `[2^-31, ½]`. Afterwards the kernel is the fixed, exact [`RandomWalk`] with the final rate,
/// so draws kept after burn-in have `π` as their invariant law.
#[derive(Clone, Copy, Debug)]
pub struct TunedRandomWalk {
    walk: RandomWalk,
    log_odds: f64,
    target_acceptance: f64,
    burn_in: u64,
    steps: u64,
}

impl TunedRandomWalk {
    /// Starts at flip rate `initial` (for instance `1/d`), tunes for `burn_in` steps toward
    /// acceptance rate `target_acceptance`.
    ///
    /// # Errors
    ///
    /// As for [`RandomWalk::new`] for `initial` (a rate above ½ starts at ½; NaN is refused,
    /// not capped); [`ParamError::OutOfRange`] unless `0 < target_acceptance < 1`.
    pub fn new(initial: f64, burn_in: u64, target_acceptance: f64) -> Result<Self, ParamError> {
        // `f64::min` would turn a NaN rate into ½.
        let capped = if initial > 0.5 { 0.5 } else { initial };
        let walk = RandomWalk::new(capped)?;
        if !(target_acceptance > 0.0 && target_acceptance < 1.0) {
            return Err(ParamError::OutOfRange {
                name: "target acceptance",
                value: target_acceptance,
            });
        }
        Ok(Self {
            walk,
            log_odds: libm::log(walk.rate / (1.0 - walk.rate)),
            target_acceptance,
            burn_in,
            steps: 0,
        })
    }

    /// The current (after burn-in: final) flip rate.
    pub fn rate(&self) -> f64 {
        self.walk.rate
    }

    /// Whether the burn-in is over and the rate frozen.
    pub fn is_frozen(&self) -> bool {
        self.steps >= self.burn_in
    }

    /// The fixed kernel in use now.
    pub fn kernel(&self) -> RandomWalk {
        self.walk
    }

    /// Words in [`TunedRandomWalk::save_words`].
    pub const WORDS: usize = 3;

    /// Everything the tuner changes as it steps (rate, log-odds, steps taken), as words: what
    /// a checkpoint saves so that [`TunedRandomWalk::restore_words`] on a walk built from the
    /// same settings continues bit for bit.
    pub fn save_words(&self) -> [u64; Self::WORDS] {
        [
            self.walk.rate.to_bits(),
            self.log_odds.to_bits(),
            self.steps,
        ]
    }

    /// Puts back a state [`TunedRandomWalk::save_words`] returned.
    ///
    /// # Errors
    ///
    /// [`ParamError::OutOfRange`] for words no walk could have saved: a rate outside
    /// `[2^-32, ½]`, positive or non-finite log-odds, more steps than the burn-in (the walk is
    /// then unchanged).
    pub fn restore_words(&mut self, words: &[u64; Self::WORDS]) -> Result<(), ParamError> {
        let [rate, log_odds, steps] = *words;
        let (rate, log_odds) = (f64::from_bits(rate), f64::from_bits(log_odds));
        let bad = |name: &'static str, value: f64| ParamError::OutOfRange { name, value };
        if rate > 0.5 {
            return Err(bad("saved flip rate", rate));
        }
        let walk = RandomWalk::new(rate).map_err(|_| bad("saved flip rate", rate))?;
        if !(log_odds.is_finite() && log_odds <= 0.0) {
            return Err(bad("saved log-odds", log_odds));
        }
        if steps > self.burn_in {
            return Err(bad("saved steps", steps as f64));
        }
        self.walk = walk;
        self.log_odds = log_odds;
        self.steps = steps;
        Ok(())
    }
}

impl Kernel<Binary> for TunedRandomWalk {
    #[cfg_attr(target_arch = "x86_64", inline(always))]
    fn step<T, R>(
        &mut self,
        target: &mut T,
        chain: &mut BinaryChain<'_>,
        rng: &mut R,
    ) -> Result<StepReport, StepError<T::Error>>
    where
        T: Eval<Binary> + ?Sized,
        R: Rng + ?Sized,
    {
        let report = self.walk.step(target, chain, rng)?;
        if let Some(gain) = crate::math::burn_in_gain(&mut self.steps, self.burn_in) {
            let accepted = if report.accepted { 1.0 } else { 0.0 };
            let lo = libm::log(1.0 / (2_147_483_648.0 - 1.0));
            self.log_odds =
                (self.log_odds + gain * (accepted - self.target_acceptance)).clamp(lo, 0.0);
            let rate = 1.0 / (1.0 + libm::exp(-self.log_odds));
            if let Ok(walk) = RandomWalk::new(rate) {
                self.walk = walk;
            }
        }
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tuned_walk_refuses_a_nan_rate() {
        assert!(TunedRandomWalk::new(f64::NAN, 10, 0.234).is_err());
        // Rates above one half are capped, not refused.
        assert_eq!(TunedRandomWalk::new(0.9, 10, 0.234).unwrap().rate(), 0.5);
    }

    #[test]
    fn saved_words_continue_the_tuning_bit_for_bit() {
        use crate::binary::{BinaryChain, ChainStorage};
        use crate::models::{ConstDims, IsingLattice};
        use rand_core::SeedableRng;
        let mut model = IsingLattice::<ConstDims<4, 4>>::new(0.3, 0.1, true).unwrap();
        let mut storage = ChainStorage::<16>::new([0; 16]);
        let mut chain = BinaryChain::new(storage.buffers(), &mut model).unwrap();
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(5);
        let fresh = TunedRandomWalk::new(0.25, 200, 0.234).unwrap();
        let mut walk = fresh;
        for _ in 0..57 {
            walk.step(&mut model, &mut chain, &mut rng).unwrap();
        }
        let mut copy = fresh;
        copy.restore_words(&walk.save_words()).unwrap();
        assert_eq!(copy.save_words(), walk.save_words());
        assert_eq!(copy.rate().to_bits(), walk.rate().to_bits());
        let mut bad = walk.save_words();
        bad[2] = 201;
        assert!(copy.restore_words(&bad).is_err());
        bad = walk.save_words();
        bad[0] = 0.75f64.to_bits();
        assert!(copy.restore_words(&bad).is_err());
        bad = walk.save_words();
        bad[1] = f64::NAN.to_bits();
        assert!(copy.restore_words(&bad).is_err());
        assert_eq!(copy.save_words(), walk.save_words());
    }
}
