//! The lattice kernels: [`LatticeDula`] and [`LatticeDmala`].

use super::swar::{keep_classes, toggle_flipped};
use super::{
    BINS, FLIP_BIT, Histogram, LatticeClasses, LatticePasses, LatticeProposal, PortablePasses,
};
use crate::chain::BinaryChain;
use crate::error::{LenError, ParamError};
use crate::kernel::StepReport;
use crate::math::{Fast, FlipMath};
use crate::models::LatticeDims;
use crate::random::open_unit_f64_of;
use rand_core::Rng;

/// The flip kernels with the tabulated lattice proposal, unadjusted (`ADJUSTED = false`:
/// [`LatticeDula`]) or Metropolis-adjusted (`ADJUSTED = true`: [`LatticeDmala`]).
#[derive(Clone, Copy, Debug)]
pub struct LatticeKernel<D: LatticeDims, const ADJUSTED: bool> {
    proposal: LatticeProposal<D>,
}

/// The unadjusted kernel with the tabulated lattice proposal: every proposal is accepted.
///
/// Like [`Dula`](crate::binary::Dula) on the same model, with the proposal quantised as
/// [`LatticeProposal`] describes.
pub type LatticeDula<D> = LatticeKernel<D, false>;

/// The Metropolis-adjusted kernel with the tabulated lattice proposal: exact for every step and
/// balance.
pub type LatticeDmala<D> = LatticeKernel<D, true>;

impl<D: LatticeDims, const ADJUSTED: bool> LatticeKernel<D, ADJUSTED> {
    /// The kernel with this proposal.
    pub fn new(proposal: LatticeProposal<D>) -> Self {
        Self { proposal }
    }

    /// The proposal.
    pub fn proposal(&self) -> &LatticeProposal<D> {
        &self.proposal
    }

    /// Sets the proposal's step and balance in place (see [`LatticeProposal::retune`]): the
    /// kernel a tuner steps with its current `(a, b)`.
    ///
    /// # Errors
    ///
    /// As for [`LatticeProposal::retune`]; the kernel is unchanged then.
    ///
    /// # Examples
    ///
    /// ```
    /// use langevin_core::binary::{BinaryChain, ChainStorage, LatticeDmala, LatticeProposal};
    /// use langevin_core::models::{ConstDims, IsingLattice};
    /// use rand_core::SeedableRng;
    ///
    /// let mut model = IsingLattice::<ConstDims<8, 8>>::new(0.3, 0.0, true).unwrap();
    /// let mut kernel = LatticeDmala::new(LatticeProposal::new(&model, 0.3, 0.5).unwrap());
    /// let mut storage = ChainStorage::<64>::new([0; 64]);
    /// let mut chain = BinaryChain::new(storage.buffers(), &mut model).unwrap();
    /// let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
    /// for step in [0.3, 1.0, 3.0, 0.3] {
    ///     kernel.retune(step, 0.6).unwrap();
    ///     kernel.step(&mut chain, &mut rng).unwrap();
    /// }
    /// assert_eq!(kernel.proposal().step(), 0.3);
    /// ```
    pub fn retune(&mut self, step: f64, balance: f64) -> Result<(), ParamError> {
        self.proposal.retune(step, balance)
    }

    /// Advances `chain`, which must have been started on the proposal's model, by one step.
    /// Consumes `⌈d/4⌉` words of `rng`, and one more for the Metropolis test of the adjusted
    /// kernel. The chain's log-density and gradient are updated as the model would compute them.
    ///
    /// # Errors
    ///
    /// [`LenError`] if the chain's dimension is not the model's; the chain is unchanged then.
    #[cfg_attr(target_arch = "x86_64", inline(always))]
    pub fn step<R: Rng + ?Sized>(
        &self,
        chain: &mut BinaryChain<'_>,
        rng: &mut R,
    ) -> Result<StepReport, LenError> {
        self.step_with(chain, rng, &PortablePasses)
    }

    /// [`step`](Self::step) with the per-site passes run by `passes`, whose results equal
    /// those of [`PortablePasses`] (so the draws are the same). 32-bit targets run passes of
    /// their own, a machine word at a time, and do not call `passes`.
    ///
    /// # Errors
    ///
    /// As for [`step`](Self::step).
    #[cfg_attr(target_arch = "x86_64", inline(always))]
    pub fn step_with<R: Rng + ?Sized, P: LatticePasses + ?Sized>(
        &self,
        chain: &mut BinaryChain<'_>,
        rng: &mut R,
        passes: &P,
    ) -> Result<StepReport, LenError> {
        let p = &self.proposal;
        LenError::check("chain", p.dim(), chain.dim())?;
        p.fill_classes(chain.x, chain.x_proposal, 0);
        Ok(self.step_classified(chain, rng, passes, None))
    }

    /// [`step_with`](Self::step_with), with the class bytes of the chain's state kept in
    /// `classes` from one step to the next: the same draws and the same chain, for one pass
    /// over the sites fewer per step (the classes of the current state are copied rather than
    /// computed). `classes` may start empty and may be shared with other chains or lattices;
    /// it is refilled whenever it does not describe the chain (see [`LatticeClasses`]).
    ///
    /// # Errors
    ///
    /// As for [`step`](Self::step), and [`LenError`] if `classes` does not hold `d` bytes;
    /// the chain and `classes` are unchanged then.
    ///
    /// # Examples
    ///
    /// ```
    /// use langevin_core::binary::{
    ///     BinaryChain, ChainStorage, LatticeClasses, LatticeDmala, LatticeProposal, PortablePasses,
    /// };
    /// use langevin_core::models::{ConstDims, IsingLattice};
    /// use rand_core::SeedableRng;
    ///
    /// let mut model = IsingLattice::<ConstDims<8, 8>>::new(0.3, 0.0, true).unwrap();
    /// let kernel = LatticeDmala::new(LatticeProposal::new(&model, 0.3, 0.5).unwrap());
    /// let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
    /// let mut storage = ChainStorage::<64>::new([0; 64]);
    /// let mut chain = BinaryChain::new(storage.buffers(), &mut model).unwrap();
    /// let mut classes = LatticeClasses::new([0u8; 64]);
    /// for _ in 0..100 {
    ///     kernel.step_with_classes(&mut chain, &mut classes, &mut rng, &PortablePasses).unwrap();
    /// }
    ///
    /// // The same stream and start without the kept classes: the same chain.
    /// let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
    /// let mut again = ChainStorage::<64>::new([0; 64]);
    /// let mut plain = BinaryChain::new(again.buffers(), &mut model).unwrap();
    /// for _ in 0..100 {
    ///     kernel.step(&mut plain, &mut rng).unwrap();
    /// }
    /// assert_eq!(plain.state(), chain.state());
    /// ```
    #[cfg_attr(target_arch = "x86_64", inline(always))]
    pub fn step_with_classes<R, P, S>(
        &self,
        chain: &mut BinaryChain<'_>,
        classes: &mut LatticeClasses<S>,
        rng: &mut R,
        passes: &P,
    ) -> Result<StepReport, LenError>
    where
        R: Rng + ?Sized,
        P: LatticePasses + ?Sized,
        S: AsRef<[u8]> + AsMut<[u8]>,
    {
        let p = &self.proposal;
        LenError::check("chain", p.dim(), chain.dim())?;
        LenError::check("classes", p.dim(), classes.bytes.as_ref().len())?;
        classes.load(p, chain.x, chain.x_proposal);
        Ok(self.step_classified(chain, rng, passes, Some(classes.bytes.as_mut())))
    }

    /// The step once the class bytes of the current state are in `chain.x_proposal` (every
    /// length checked): on acceptance of a move, `kept` (if given) receives the new state's.
    #[inline(always)]
    fn step_classified<R: Rng + ?Sized, P: LatticePasses + ?Sized>(
        &self,
        chain: &mut BinaryChain<'_>,
        rng: &mut R,
        passes: &P,
        kept: Option<&mut [u8]>,
    ) -> StepReport {
        let p = &self.proposal;
        let class = &mut *chain.x_proposal;
        #[cfg(target_pointer_width = "64")]
        let mut tally = passes.tally();
        #[cfg(target_pointer_width = "64")]
        let flips = p.draw(class, &mut tally, rng, passes);
        #[cfg(not(target_pointer_width = "64"))]
        let mut hist: Histogram = [0; BINS];
        #[cfg(not(target_pointer_width = "64"))]
        let flips = {
            let _ = passes;
            p.draw(class, &mut hist, rng)
        };
        let u_word = if ADJUSTED { rng.next_u64() } else { 0 };
        let mut report = StepReport::proposed(true, flips, u32::from(flips > 0));
        if flips == 0 {
            return report;
        }
        // The proposed state in place of the current one, and its classes (flip bits kept).
        toggle_flipped(chain.x, class);
        p.fill_classes(chain.x, class, FLIP_BIT);
        #[cfg(target_pointer_width = "64")]
        let mut hist: Histogram = [0; BINS];
        #[cfg(target_pointer_width = "64")]
        {
            passes.count(class, p.bins(), &mut tally);
            passes.histogram(&tally, p.bins(), &mut hist);
        }
        #[cfg(not(target_pointer_width = "64"))]
        LatticeProposal::<D>::count_bins(class, &mut hist);
        let (log_q_ratio, pair, ups) = p.histogram_terms(&hist);
        let delta_u = p.delta_u(pair, ups);
        if ADJUSTED {
            report.log_accept_ratio = delta_u + log_q_ratio;
            report.accepted = metropolis_accepts(u_word, report.log_accept_ratio);
        }
        if report.accepted {
            p.refresh_grad(chain.grad, class);
            chain.log_density += delta_u;
            if let Some(kept) = kept {
                keep_classes(kept, class);
            }
        } else {
            toggle_flipped(chain.x, class);
        }
        report
    }
}

/// The Metropolis test `ln u < ratio`, with `u` the draw of
/// [`open_unit_f64`](crate::random::open_unit_f64) made from `word`:
/// decided in single precision (no double-precision logarithm) unless `u` lies within a
/// relative `2^−16` of `e^ratio`, where the test is made exactly as written. The single
/// precision figures are within a relative `4·10^−6` of the exact ones (the rounding of `ratio`
/// to `f32` at `|ratio| < 37.5`, of `u`, and the error of [`Fast::exp`], below one ulp like a
/// library `expf`), so the decision is always that of the exact test.
#[inline(always)]
fn metropolis_accepts(word: u64, ratio: f64) -> bool {
    /// Below `ln 2^−54`, the logarithm of the smallest `u`.
    const LN_U_FLOOR: f64 = -37.5;
    const BAND: f32 = 1.0 / 65_536.0;
    // The comparisons on the bits (sign and magnitude), which decide as the floating-point ones
    // would, without a library call on cores with no double-precision unit.
    const SIGN: u64 = 1 << 63;
    let (bits, mag) = (ratio.to_bits(), ratio.to_bits() & !SIGN);
    // A NaN ratio: rejected, as `ln u < NaN` is false.
    if mag > f64::INFINITY.to_bits() {
        return false;
    }
    // `ratio ≥ 0` (±0 included).
    if bits & SIGN == 0 || mag == 0 {
        return true;
    }
    // `ratio ≤ LN_U_FLOOR` (negative here).
    if mag >= (-LN_U_FLOOR).to_bits() {
        return false;
    }
    let bound = Fast::exp(ratio as f32);
    let u = ((word >> 11) as f32 + 0.5) * (1.0 / 9_007_199_254_740_992.0);
    if u < bound * (1.0 - BAND) {
        return true;
    }
    if u > bound * (1.0 + BAND) {
        return false;
    }
    libm::log(open_unit_f64_of(word)) < ratio
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::SeedableRng;

    /// The test as written: `ln u < ratio` in double precision.
    fn exact(word: u64, ratio: f64) -> bool {
        libm::log(open_unit_f64_of(word)) < ratio
    }

    /// The single-precision shortcut decides as the exact test does: on ratios spread over the
    /// whole range, and on ratios within a few parts in 10^7 of `ln u`, where a shortcut
    /// without its exact fallback (or with an `exp` less accurate than its band allows) would
    /// decide otherwise.
    #[test]
    fn metropolis_shortcut_is_the_exact_test() {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(11);
        let mut near = 0;
        for k in 0..400_000u32 {
            let word = rng.next_u64();
            let ln_u = libm::log(open_unit_f64_of(word));
            let spread = f64::from(rng.next_u32()) / f64::from(u32::MAX);
            let ratio = match k % 4 {
                0 => -40.0 + 41.0 * spread,
                1 => ln_u * (1.0 + (spread - 0.5) * 1e-6),
                2 => ln_u + (spread - 0.5) * 1e-5,
                _ => ln_u,
            };
            if (ratio - ln_u).abs() < 1e-5 * ln_u.abs().max(1.0) {
                near += 1;
            }
            assert_eq!(
                metropolis_accepts(word, ratio),
                exact(word, ratio),
                "word {word:#x}, ratio {ratio}"
            );
        }
        assert!(near > 200_000, "{near} ratios near ln u");
        for ratio in [
            f64::NAN,
            -f64::NAN,
            f64::NEG_INFINITY,
            -37.5,
            -37.499_999_999,
            -f64::from_bits(1),
            f64::from_bits(1),
            -1e300,
            -0.0,
            0.0,
            f64::INFINITY,
        ] {
            for word in [0, 1 << 11, u64::MAX / 3, u64::MAX] {
                assert_eq!(
                    metropolis_accepts(word, ratio),
                    exact(word, ratio) || ratio >= 0.0
                );
            }
        }
    }
}
