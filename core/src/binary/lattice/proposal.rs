//! [`LatticeProposal`]: the flip proposal quantised and tabulated per class.

#[cfg(target_pointer_width = "64")]
use super::LatticePasses;
#[cfg(target_pointer_width = "64")]
use super::WORDS_PER_CALL;
use super::{
    ABSENT, FIXED_BITS, FLIP_BIT, Histogram, LOG_BINS, M_MASK, SCALE, SITES_PER_WORD, SPLIT, X_BIT,
};
#[cfg(not(target_pointer_width = "64"))]
use super::{BIN_MASK, SITE_BITS, bin};
use crate::binary::proposal::FlipProposal;
use crate::error::{LenError, ParamError};
use crate::models::{IsingLattice, LatticeDims};
use rand_core::Rng;

/// The flip proposal of [`FlipProposal`] on an [`IsingLattice`], with flip
/// probabilities quantised to `t / 2^16` and tabulated per class: the proposal of
/// [`LatticeDula`](super::LatticeDula) and [`LatticeDmala`](super::LatticeDmala).
///
/// # Quantisation
///
/// A site of class `k` flips with probability exactly `t_k / 2^16`, where
/// `t_k = round(sigmoid(l_k) · 2^16)` clamped to `[1, 2^16 − 1]`, and `l_k` is the logit of the
/// generic [`FlipProposal`] (in `f64`). The Metropolis test uses `ln(t_k / 2^16)` and `ln(1 − t_k / 2^16)`, the
/// log-probabilities of the proposal actually drawn, so [`LatticeDmala`](super::LatticeDmala)
/// leaves the Ising distribution exactly invariant. Its proposal differs from the generic one by at
/// most about `2^−17` per site and flip probability, and never goes below `2^−16`: at steps so
/// small that the generic proposal flips a site less often than that,
/// [`LatticeDula`](super::LatticeDula) (which has no correction) is no longer close to the generic
/// DULA, whose bias vanishes as the step shrinks; use the generic kernels there.
///
/// # Random stream
///
/// Site `i` uses bits `16·(i mod 4) .. 16·(i mod 4) + 16` of the `⌊i/4⌋`-th `next_u64` of a step;
/// [`LatticeDmala`](super::LatticeDmala) then draws one more word for its Metropolis test. The
/// draws are not those of the generic kernels (which use 32 bits per coordinate).
///
/// # Examples
///
/// ```
/// use langevin_core::binary::{BinaryChain, ChainStorage, LatticeDmala, LatticeProposal};
/// use langevin_core::models::{ConstDims, IsingLattice};
/// use rand_core::SeedableRng;
///
/// let mut model = IsingLattice::<ConstDims<8, 8>>::new(0.3, 0.0, true).unwrap();
/// let mut storage = ChainStorage::<64>::new([0; 64]);
/// let mut chain = BinaryChain::new(storage.buffers(), &mut model).unwrap();
/// let kernel = LatticeDmala::new(LatticeProposal::new(&model, 0.3, 0.5).unwrap());
/// let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
/// for _ in 0..100 {
///     kernel.step(&mut chain, &mut rng).unwrap();
/// }
/// assert!(chain.state().iter().all(|&x| x <= 1));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct LatticeProposal<D: LatticeDims> {
    pub(super) model: IsingLattice<D>,
    step: f64,
    balance: f64,
    /// Flip thresholds indexed by the whole class byte (so a lookup needs no mask and no bounds
    /// check); 0 for classes that cannot occur.
    threshold: [u16; 256],
    /// The bins a class byte can fall in (the first `bin_count`).
    #[cfg(target_pointer_width = "64")]
    bins: [u8; 36],
    #[cfg(target_pointer_width = "64")]
    bin_count: u8,
    /// `ln q` of a site's move by histogram bin, in fixed point (`L · 2^56`, see [`SPLIT`]):
    /// the high and low parts. `ln(t/2^16)` with the flip bit, `ln(1 − t/2^16)` without; 0 for
    /// bins that cannot occur.
    log_hi: [i32; LOG_BINS],
    log_lo: [i32; LOG_BINS],
    /// `∂U/∂x = 2 (J n + h)` by `m = n + 4`, in `f32` as the model computes it (64-bit
    /// targets compute it per site instead).
    #[cfg(not(target_pointer_width = "64"))]
    grad: [f32; 16],
    /// Every site has four neighbours (both axes wrap): `m` is even.
    even_m: bool,
    /// `J` and `h`, widened once.
    coupling: f64,
    field: f64,
}

impl<D: LatticeDims> LatticeProposal<D> {
    /// The proposal with step `a` and balance `b` on `model`.
    ///
    /// # Errors
    ///
    /// As for [`FlipProposal::new`]; [`ParamError::NonFinite`] if a gradient `2 (J n + h)`,
    /// `|n| ≤ 4`, overflows `f32`: the kernels adopt moves without evaluating the model, so they
    /// could not refuse a state whose gradient is not finite.
    pub fn new(model: &IsingLattice<D>, step: f64, balance: f64) -> Result<Self, ParamError> {
        FlipProposal::new(step, balance)?;
        let (coupling, field) = (f64::from(model.coupling()), f64::from(model.field()));
        let mut grad = [0.0f32; 16];
        for m in 0..=8u8 {
            let n = f64::from(m) - 4.0;
            if let Some(slot) = grad.get_mut(usize::from(m)) {
                *slot = 2.0 * (model.coupling() * (n as f32) + model.field());
            }
        }
        if !grad.iter().all(|g| g.is_finite()) {
            return Err(ParamError::NonFinite("lattice gradient 2 (J n + h)"));
        }
        // Every site has four neighbours when both axes wrap: `m` is even then.
        let even_m = model.wraps() == (true, true);
        #[cfg(target_pointer_width = "64")]
        let (bins, bin_count) = {
            let m_step = if even_m { 2 } else { 1 };
            let mut bins = [0u8; 36];
            let mut count = 0u8;
            for group in [0, X_BIT, FLIP_BIT, FLIP_BIT | X_BIT] {
                for m in (0..=8).step_by(m_step) {
                    if let Some(slot) = bins.get_mut(usize::from(count)) {
                        *slot = group | m;
                        count += 1;
                    }
                }
            }
            (bins, count)
        };
        let mut proposal = Self {
            model: *model,
            step,
            balance,
            threshold: [0; 256],
            #[cfg(target_pointer_width = "64")]
            bins,
            #[cfg(target_pointer_width = "64")]
            bin_count,
            log_hi: [0; LOG_BINS],
            log_lo: [0; LOG_BINS],
            #[cfg(not(target_pointer_width = "64"))]
            grad,
            even_m,
            coupling,
            field,
        };
        proposal.fill_tables();
        Ok(proposal)
    }

    /// Sets the step `a` and balance `b`, refilling the tables in place: the proposal
    /// [`new`](Self::new) would build on the same model with these parameters, bit for bit,
    /// without rebuilding what does not depend on them. A tuner that changes `(a, b)` between
    /// steps keeps one proposal and retunes it; the kept classes of a chain
    /// ([`LatticeClasses`](super::LatticeClasses)) stay valid, as they depend on the state alone.
    ///
    /// The cost is 18 logistic functions and 36 logarithms (a few hundred nanoseconds);
    /// parameters equal to the current ones return at once.
    ///
    /// # Errors
    ///
    /// As for [`FlipProposal::new`]; the proposal is unchanged then.
    ///
    /// # Examples
    ///
    /// ```
    /// use langevin_core::binary::LatticeProposal;
    /// use langevin_core::models::{ConstDims, IsingLattice};
    ///
    /// let model = IsingLattice::<ConstDims<4, 4>>::new(0.3, 0.1, true).unwrap();
    /// let mut p = LatticeProposal::new(&model, 0.3, 0.5).unwrap();
    /// p.retune(2.0, 0.8).unwrap();
    /// let fresh = LatticeProposal::new(&model, 2.0, 0.8).unwrap();
    /// let x = [0u8; 16];
    /// assert_eq!((p.step(), p.balance()), (2.0, 0.8));
    /// assert_eq!(p.flip_probability(&x, 5), fresh.flip_probability(&x, 5));
    /// assert!(p.retune(-1.0, 0.5).is_err());
    /// assert_eq!(p.step(), 2.0);
    /// ```
    pub fn retune(&mut self, step: f64, balance: f64) -> Result<(), ParamError> {
        if step.to_bits() == self.step.to_bits() && balance.to_bits() == self.balance.to_bits() {
            return Ok(());
        }
        FlipProposal::new(step, balance)?;
        self.step = step;
        self.balance = balance;
        self.fill_tables();
        Ok(())
    }

    /// Fills the flip thresholds and the log-probability tables of every class from the step,
    /// the balance, `J` and `h`.
    fn fill_tables(&mut self) {
        let (step, balance) = (self.step, self.balance);
        for m in 0..=8u8 {
            let n = f64::from(m) - 4.0;
            let g = 2.0 * (self.coupling * n + self.field);
            for x in 0..=1u8 {
                let class = usize::from(m | (x * X_BIT));
                let logit = balance * g * (1.0 - 2.0 * f64::from(x)) - 0.5 / step;
                let t = libm::round(crate::math::sigmoid(logit) * SCALE).clamp(1.0, SCALE - 1.0);
                if let Some(slot) = self.threshold.get_mut(class) {
                    *slot = t as u16;
                }
                let stay = fixed_log((SCALE - t) / SCALE);
                let flip = fixed_log(t / SCALE);
                for (bin, value) in [(class, stay), (class | usize::from(FLIP_BIT), flip)] {
                    if let (Some(hi), Some(lo)) =
                        (self.log_hi.get_mut(bin), self.log_lo.get_mut(bin))
                    {
                        (*hi, *lo) = value;
                    }
                }
            }
        }
    }

    /// The model.
    pub fn model(&self) -> &IsingLattice<D> {
        &self.model
    }

    /// The step `a`.
    pub fn step(&self) -> f64 {
        self.step
    }

    /// The balance `b`.
    pub fn balance(&self) -> f64 {
        self.balance
    }

    /// The probability that site `i` of state `x` flips: a multiple of `2^−16` in
    /// `[2^−16, 1 − 2^−16]`. `None` if `i` is out of range.
    pub fn flip_probability(&self, x: &[u8], i: usize) -> Option<f64> {
        let class = self.class_at(x, i)?;
        let t = self.threshold.get(usize::from(class)).copied()?;
        Some(f64::from(t) / SCALE)
    }

    /// `log q(to | from)`, summed over all sites in `f64` (a reference for tests; a step never
    /// calls it).
    ///
    /// # Errors
    ///
    /// [`LenError`] unless `from` and `to` have the model's dimension.
    pub fn log_q(&self, from: &[u8], to: &[u8]) -> Result<f64, LenError> {
        let d = self.dim();
        LenError::check("from", d, from.len())?;
        LenError::check("to", d, to.len())?;
        let mut total = 0.0;
        for (i, (&a, &b)) in from.iter().zip(to).enumerate() {
            let class = self.class_at(from, i).unwrap_or(0);
            let t = f64::from(self.threshold.get(usize::from(class)).copied().unwrap_or(0));
            let p = if a != b { t } else { SCALE - t };
            total += libm::log(p / SCALE);
        }
        Ok(total)
    }

    pub(super) fn dim(&self) -> usize {
        let dims = self.model.dims();
        dims.rows() * dims.cols()
    }

    /// The class byte of site `i`, computed from its neighbours.
    fn class_at(&self, x: &[u8], i: usize) -> Option<u8> {
        let xi = *x.get(i)?;
        let m = self.model.neighbours(i).iter().fold(0u8, |m, j| {
            m + j.and_then(|j| x.get(j)).map_or(ABSENT, |&xj| (xj & 1) << 1)
        });
        Some(m | ((xi & 1) * X_BIT))
    }

    /// Draws the flips through `passes`: sets the flip bit of every flipping site, subtracts
    /// each site's (class, flip) bin from `tally`, and returns the number of flips. Site `i` uses
    /// bits `16·(i mod 4) ..` of the `⌊i/4⌋`-th word.
    #[cfg(target_pointer_width = "64")]
    #[inline(always)]
    pub(super) fn draw<R: Rng + ?Sized, P: LatticePasses + ?Sized>(
        &self,
        class: &mut [u8],
        tally: &mut P::Tally,
        rng: &mut R,
        passes: &P,
    ) -> usize {
        // Every class byte is below 32 at a draw: the head of the table is all of it.
        let Some(thresholds) = self.threshold.first_chunk::<32>() else {
            return 0;
        };
        // The block's words in stream order, so the stream is consumed as word by word.
        let mut words = [0u64; WORDS_PER_CALL];
        for block in class.chunks_mut(WORDS_PER_CALL * SITES_PER_WORD) {
            let used = block.len().div_ceil(SITES_PER_WORD);
            let words = words.get_mut(..used).unwrap_or(&mut []);
            for w in words.iter_mut() {
                *w = rng.next_u64();
            }
            passes.flip(thresholds, block, words, tally);
        }
        passes.drawn(class, self.bins(), tally)
    }

    /// The bins a class byte can fall in: `m ≤ 8`, and `m` even when every site has four
    /// neighbours.
    #[cfg(target_pointer_width = "64")]
    #[inline(always)]
    pub(super) fn bins(&self) -> &[u8] {
        self.bins.get(..usize::from(self.bin_count)).unwrap_or(&[])
    }

    /// Draws the flips, four sites at a time (see the 64-bit version).
    #[cfg(not(target_pointer_width = "64"))]
    #[inline(always)]
    pub(super) fn draw<R: Rng + ?Sized>(
        &self,
        class: &mut [u8],
        hist: &mut Histogram,
        rng: &mut R,
    ) -> usize {
        let mut quads = class.chunks_exact_mut(SITES_PER_WORD);
        for quad in &mut quads {
            let word = rng.next_u64();
            // Two 32-bit halves: on a 32-bit core each is one register.
            let (low, high) = (word as u32, (word >> 32) as u32);
            // Byte by byte: reading the quad as one word and writing it back cost more (the
            // lanes' shifts and the recombination) than the four byte loads and stores.
            if let Ok([a, b, c, e]) = <&mut [u8; SITES_PER_WORD]>::try_from(quad) {
                self.flip(a, low as u16, hist);
                self.flip(b, (low >> SITE_BITS) as u16, hist);
                self.flip(c, high as u16, hist);
                self.flip(e, (high >> SITE_BITS) as u16, hist);
            }
        }
        let rest = quads.into_remainder();
        if !rest.is_empty() {
            let mut word = rng.next_u64();
            for k in rest {
                self.flip(k, word as u16, hist);
                word >>= SITE_BITS;
            }
        }
        // Every flipping site was counted out of a bin with the flip bit: their number is read
        // off those bins (10 or 18 of them) rather than counted per site.
        if self.even_m {
            Self::flips_in::<2>(hist)
        } else {
            Self::flips_in::<1>(hist)
        }
    }

    /// The number of sites counted out of the flip bins with `m` a multiple of `M_STEP`.
    #[cfg(not(target_pointer_width = "64"))]
    #[inline(always)]
    fn flips_in<const M_STEP: usize>(hist: &Histogram) -> usize {
        let mut flips = 0isize;
        for group in [FLIP_BIT, FLIP_BIT | X_BIT] {
            for m in (0..9).step_by(M_STEP) {
                flips -= hist.get(usize::from(group) | m).copied().unwrap_or(0);
            }
        }
        flips as usize
    }

    /// Sets the flip bit of class `k` if `r` is below its threshold and counts the site out of
    /// its bin.
    #[cfg(not(target_pointer_width = "64"))]
    #[inline(always)]
    fn flip(&self, k: &mut u8, r: u16, hist: &mut Histogram) {
        let t = self.threshold.get(usize::from(*k)).copied().unwrap_or(0);
        let f = u8::from(r < t);
        let kv = *k | (f << 5);
        *k = kv;
        if let Some(n) = hist.get_mut(bin(kv)) {
            *n -= 1;
        }
    }

    /// Counts every site into the bin of its (new class, flip), four sites at a time: the lanes
    /// written out, as at opt-level "s" a loop over them stays a loop (twice the instructions).
    #[cfg(not(target_pointer_width = "64"))]
    #[inline(always)]
    pub(super) fn count_bins(class: &[u8], hist: &mut Histogram) {
        let mut add = |k: u32| {
            if let Some(n) = hist.get_mut((k & u32::from(BIN_MASK)) as usize) {
                *n += 1;
            }
        };
        let mut quads = class.chunks_exact(SITES_PER_WORD);
        for quad in &mut quads {
            let k = <[u8; SITES_PER_WORD]>::try_from(quad).map_or(0, u32::from_le_bytes);
            add(k);
            add(k >> 8);
            add(k >> 16);
            add(k >> 24);
        }
        for &k in quads.remainder() {
            add(u32::from(k));
        }
    }

    /// From the histogram difference (reverse bins minus forward bins): `ln q(x | x') −
    /// ln q(x' | x)`, and `(pair, ups)` with `ΔU = 2J·pair + 2h·ups` exactly:
    /// `4·pair = Σ_i s'_i n'_i − Σ_i s_i n_i` (every bond counted from both ends) and
    /// `ups = Σ_i (x'_i − x_i)`.
    #[inline(always)]
    pub(super) fn histogram_terms(&self, hist: &Histogram) -> (f64, i64, i64) {
        // Bins a class cannot reach are 0: only the reachable `m` are read.
        let (hi, lo, pair4, ups) = if self.even_m {
            self.bin_sums::<2>(hist)
        } else {
            self.bin_sums::<1>(hist)
        };
        // |hi|, |lo| < 2^30 and Σ|count| ≤ 2d < 2^33: neither sum overflows. The exact total,
        // rounded once (as an `i64` when it fits, which converts with fewer instructions on
        // 32-bit targets and rounds the same), then scaled by `2^−56` exactly.
        let total = (i128::from(hi) << SPLIT) + i128::from(lo);
        let ratio = match i64::try_from(total) {
            Ok(0) => 0.0,
            Ok(t) => fixed_to_f64(t as f64),
            Err(_) => fixed_to_f64(total as f64),
        };
        (ratio, pair4 / 4, ups)
    }

    /// The sums of [`histogram_terms`](Self::histogram_terms) over the bins with `m` a multiple
    /// of `M_STEP`: the high and low parts of the fixed-point log-probabilities, `4·pair` and
    /// `ups`.
    #[inline(always)]
    fn bin_sums<const M_STEP: usize>(&self, hist: &Histogram) -> (i64, i64, i64, i64) {
        let (mut hi, mut lo, mut pair4, mut ups) = (0i64, 0i64, 0i64, 0i64);
        for group in [0u8, X_BIT, FLIP_BIT, FLIP_BIT | X_BIT] {
            let (mut m_sum, mut n_sum) = (0i64, 0i64);
            for m in (0..9).step_by(M_STEP) {
                let bin = usize::from(group) | m;
                let n = hist.get(bin).map_or(0, |&n| n as i64);
                hi += n * i64::from(self.log_hi.get(bin).copied().unwrap_or(0));
                lo += n * i64::from(self.log_lo.get(bin).copied().unwrap_or(0));
                m_sum += n * m as i64;
                n_sum += n;
            }
            // s (m − 4), s = ±1 by the value bit.
            let s_n = m_sum - 4 * n_sum;
            if group & X_BIT != 0 {
                pair4 += s_n;
                ups += n_sum;
            } else {
                pair4 -= s_n;
            }
        }
        (hi, lo, pair4, ups)
    }

    /// `ΔU = 2J·pair + 2h·ups` (see [`histogram_terms`](Self::histogram_terms)).
    #[inline(always)]
    pub(super) fn delta_u(&self, pair: i64, ups: i64) -> f64 {
        self.coupling * small_to_f64(2 * pair) + self.field * small_to_f64(2 * ups)
    }

    /// On acceptance: the gradient of every site from its new class byte, computed as
    /// [`new`](Self::new) tabulates it (the same operations, so the same bits), which
    /// vectorises where a table lookup per site does not.
    #[cfg(target_pointer_width = "64")]
    #[inline(always)]
    pub(super) fn refresh_grad(&self, grad: &mut [f32], class: &[u8]) {
        let (coupling, field) = (self.model.coupling(), self.model.field());
        for (g, &k) in grad.iter_mut().zip(class) {
            let n = i32::from(k & M_MASK) - 4;
            *g = 2.0 * (coupling * (n as f32) + field);
        }
    }

    /// On acceptance: the gradient of every site from its new class byte, four sites at a time
    /// (one load of their class bytes, the lanes written out).
    #[cfg(not(target_pointer_width = "64"))]
    #[inline(always)]
    pub(super) fn refresh_grad(&self, grad: &mut [f32], class: &[u8]) {
        let of = |k: u32| {
            self.grad
                .get((k & u32::from(M_MASK)) as usize)
                .copied()
                .unwrap_or(0.0)
        };
        let mut quads = class.chunks_exact(SITES_PER_WORD);
        let mut grads = grad.chunks_exact_mut(SITES_PER_WORD);
        for (g, quad) in (&mut grads).zip(&mut quads) {
            let k = <[u8; SITES_PER_WORD]>::try_from(quad).map_or(0, u32::from_le_bytes);
            if let Ok([a, b, c, e]) = <&mut [f32; SITES_PER_WORD]>::try_from(g) {
                *a = of(k);
                *b = of(k >> 8);
                *c = of(k >> 16);
                *e = of(k >> 24);
            }
        }
        for (g, &k) in grads.into_remainder().iter_mut().zip(quads.remainder()) {
            *g = of(u32::from(k));
        }
    }
}

/// `x as f64`, converted from an `i32` when it fits (always, on a lattice of fewer than 2^28
/// sites): the same value, with a cheaper library call on 32-bit cores. The wide conversion is
/// kept out of line: inlined, the compiler made both library calls and chose between them.
#[inline(always)]
fn small_to_f64(x: i64) -> f64 {
    i32::try_from(x).map_or_else(|_| wide_to_f64(x), f64::from)
}

/// `x as f64` for the counts beyond `i32` (lattices of `2^28` sites or more).
#[cold]
#[inline(never)]
fn wide_to_f64(x: i64) -> f64 {
    x as f64
}

/// `x · 2^−56` for an integer `x ≠ 0`: `x` is normal with an exponent of at least
/// 0, so lowering the exponent by 56 gives the product exactly, with no multiplication (a
/// library call on cores without a double-precision unit).
#[inline(always)]
fn fixed_to_f64(x: f64) -> f64 {
    f64::from_bits(x.to_bits() - ((FIXED_BITS as u64) << 52))
}

/// `ln p` in fixed point at scale `2^56`, split as `(hi, lo)` with `L = hi · 2^30 + lo`.
fn fixed_log(p: f64) -> (i32, i32) {
    let fixed = (libm::log(p) * libm::exp2(f64::from(FIXED_BITS))) as i64;
    ((fixed >> SPLIT) as i32, (fixed & ((1 << SPLIT) - 1)) as i32)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lowering the exponent is the multiplication by `2^−56`, bit for bit, for integers of
    /// either sign and every size the fixed-point sum takes (and the conversion through `i64`
    /// rounds as the one through `i128`).
    #[test]
    fn fixed_to_f64_is_the_scaled_value() {
        let unit = 1.0 / (1u64 << FIXED_BITS) as f64;
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for shift in 0..64 {
            x = x.rotate_left(17).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            for t in [
                1i64,
                -1,
                (x >> shift) as i64,
                -((x >> shift) as i64),
                i64::MAX,
                i64::MIN,
            ] {
                if t == 0 {
                    continue;
                }
                assert_eq!(
                    fixed_to_f64(t as f64).to_bits(),
                    (t as f64 * unit).to_bits()
                );
                assert_eq!((t as f64).to_bits(), (i128::from(t) as f64).to_bits());
            }
        }
        let wide = (i128::from(i64::MAX) << 20) + 12345;
        assert_eq!(
            fixed_to_f64(wide as f64).to_bits(),
            (wide as f64 * unit).to_bits()
        );
    }
}
