//! The balanced flip proposal over `{0,1}^d`.

use crate::error::{LenError, ParamError};
use crate::math::{FlipMath, FlipOdds, Libm, exp_neg_abs_each, ln_1p_each};
use rand_core::Rng;

/// Width of the fixed chunks the hot loops work on. Sums are formed lane by lane in this width,
/// so results do not depend on the platform's SIMD width.
pub const LANES: usize = 8;

/// Coordinates summed per lane in `f32` before the lane sums are folded into an `f64` total.
const BLOCK_CHUNKS: usize = 32;

/// Coordinates handled together by the hot loops (a multiple of [`LANES`]).
const BLOCK: usize = 64;

/// Coordinates whose flip odds are evaluated stage by stage (every `exp`, then every logarithm;
/// see [`exp_neg_abs_each`]): a whole block on hosted targets, whose vector units overlap the
/// stages' iterations; one chunk of [`LANES`] on bare-metal ones, whose step must fit a small
/// stack and has no vector unit to keep busy. The values do not depend on it.
const STAGE: usize = if cfg!(target_os = "none") {
    LANES
} else {
    BLOCK
};

// A block is a whole number of stages.
const _: () = assert!(BLOCK.is_multiple_of(STAGE));

/// `2^16` as an `f32` (exact).
const TWO_POW_16: f32 = 65_536.0;

/// The balanced proposal family on binary states (Zhang, Liu & Liu 2022; Sun et al. 2023): each coordinate flips
/// independently with probability `sigmoid(l_i)`,
///
/// `l_i = b · g_i · (1 − 2x_i) − 1 / (2 a_i)`, with `a_i = a` or `a · p_i²` (diagonal preconditioner).
///
/// `b = ½` is the discrete Langevin proposal; other balances give the any-scale balanced family.
/// `M` chooses how `exp` and `ln(1 + x)` are evaluated; drawing and [`log_q`](Self::log_q) use the
/// same values, so a Metropolis test built on it is exact for the proposal actually drawn.
///
/// # Drawing
///
/// Each coordinate uses 32 random bits: a flip happens when the bits, read as an integer `r`, are
/// below `⌊p · 2^32⌋` (saturating). The realised flip probability differs from the `f32` value of
/// `p` by less than `2^-32`.
#[derive(Clone, Copy, Debug)]
pub struct FlipProposal<'p, M: FlipMath = Libm> {
    balance: f32,
    half_inv_step: f32,
    step: f64,
    precond: Option<&'p [f32]>,
    math: core::marker::PhantomData<M>,
}

impl FlipProposal<'static, Libm> {
    /// A proposal with step `a` and balance `b`, evaluated through `libm`.
    ///
    /// # Errors
    ///
    /// [`ParamError::Step`] unless `a` is finite and `> 0`; [`ParamError::Balance`] unless
    /// `0 < b ≤ 1`.
    ///
    /// # Examples
    ///
    /// ```
    /// use langevin_core::binary::FlipProposal;
    /// assert!(FlipProposal::new(0.2, 0.5).is_ok());
    /// assert!(FlipProposal::new(0.0, 0.5).is_err());
    /// assert!(FlipProposal::new(0.2, 1.5).is_err());
    /// ```
    pub fn new(step: f64, balance: f64) -> Result<Self, ParamError> {
        Self::with_math(step, balance)
    }
}

impl<'p, M: FlipMath> FlipProposal<'p, M> {
    /// Like [`FlipProposal::new`], choosing the transcendental functions `M`.
    ///
    /// # Errors
    ///
    /// As for [`FlipProposal::new`].
    pub fn with_math(step: f64, balance: f64) -> Result<Self, ParamError> {
        ParamError::check_step(step)?;
        ParamError::check_balance(balance)?;
        Ok(Self {
            balance: balance as f32,
            half_inv_step: (0.5 / step) as f32,
            step,
            precond: None,
            math: core::marker::PhantomData,
        })
    }

    /// The proposal in the scale form of the acceptance-targeting sampler: flip logits
    /// `l_i = b · g_i · (1 − 2x_i) + ln τ`. For `τ < 1` this is step `a = −1/(2 ln τ)`; `τ ≥ 1`
    /// has no step but is a valid proposal all the same ([`step`](Self::step) is then `∞`, and
    /// no preconditioner can be added).
    ///
    /// # Errors
    ///
    /// [`ParamError::OutOfRange`] unless `|ln τ|` is finite and below `f32::MAX`;
    /// [`ParamError::Balance`] unless `0 < b ≤ 1`.
    pub fn with_log_scale(log_tau: f64, balance: f64) -> Result<Self, ParamError> {
        if log_tau.is_nan() || log_tau.abs() >= f64::from(f32::MAX) {
            return Err(ParamError::OutOfRange {
                name: "log scale",
                value: log_tau,
            });
        }
        ParamError::check_balance(balance)?;
        Ok(Self {
            balance: balance as f32,
            half_inv_step: (-log_tau) as f32,
            step: if log_tau < 0.0 {
                -0.5 / log_tau
            } else {
                f64::INFINITY
            },
            precond: None,
            math: core::marker::PhantomData,
        })
    }

    /// Adds a diagonal preconditioner: coordinate `i` uses step `a · p_i²`.
    ///
    /// # Errors
    ///
    /// [`ParamError::Preconditioner`] if some `p_i` is not finite and positive, makes
    /// `a · p_i²` overflow, or makes the `f32` evaluation of `1/(2a) / p_i²` undefined (`0/0` or
    /// `∞/∞`, which would give NaN logits).
    pub fn preconditioned<'q>(self, p: &'q [f32]) -> Result<FlipProposal<'q, M>, ParamError> {
        let defined = |pi: f32| !(self.half_inv_step / (pi * pi)).is_nan();
        ParamError::check_preconditioner(self.step, p, defined)?;
        Ok(FlipProposal {
            balance: self.balance,
            half_inv_step: self.half_inv_step,
            step: self.step,
            precond: Some(p),
            math: self.math,
        })
    }

    /// The step `a`.
    pub fn step(&self) -> f64 {
        self.step
    }

    /// The balance `b`.
    pub fn balance(&self) -> f64 {
        f64::from(self.balance)
    }

    /// The preconditioner, if any.
    pub fn preconditioner(&self) -> Option<&'p [f32]> {
        self.precond
    }

    /// Checks that the preconditioner (if any) has length `dim`.
    #[inline(always)]
    pub(crate) fn check_dim(&self, dim: usize) -> Result<(), LenError> {
        match self.precond {
            Some(p) => LenError::check("preconditioner", dim, p.len()),
            None => Ok(()),
        }
    }

    /// Draws a move from `x` (with gradient `grad`): writes the proposal into `x_new`, the flipped
    /// indices into the front of `flipped`, and returns `(number of flips, log q(x_new | x))`.
    ///
    /// Consumes exactly `⌈d / 2⌉` outputs of `rng.next_u64()`, whatever the values.
    ///
    /// # Errors
    ///
    /// [`LenError`] unless `grad`, `x_new`, `flipped` (and the preconditioner) have the length of
    /// `x`.
    #[cfg_attr(target_arch = "x86_64", inline(always))]
    pub fn propose<R: Rng + ?Sized>(
        &self,
        x: &[u8],
        grad: &[f32],
        x_new: &mut [u8],
        flipped: &mut [u32],
        rng: &mut R,
    ) -> Result<(usize, f64), LenError> {
        self.check_propose(x, grad, x_new, flipped)?;
        Ok(self.propose_with::<R, true>(x, grad, x_new, flipped, rng))
    }

    /// Like [`propose`](Self::propose) without evaluating `log q` (for unadjusted kernels):
    /// draws the same move from the same random words.
    ///
    /// # Errors
    ///
    /// As for [`propose`](Self::propose).
    #[cfg_attr(target_arch = "x86_64", inline(always))]
    pub(crate) fn propose_flips<R: Rng + ?Sized>(
        &self,
        x: &[u8],
        grad: &[f32],
        x_new: &mut [u8],
        flipped: &mut [u32],
        rng: &mut R,
    ) -> Result<usize, LenError> {
        self.check_propose(x, grad, x_new, flipped)?;
        Ok(self
            .propose_with::<R, false>(x, grad, x_new, flipped, rng)
            .0)
    }

    #[inline(always)]
    fn check_propose(
        &self,
        x: &[u8],
        grad: &[f32],
        x_new: &[u8],
        flipped: &[u32],
    ) -> Result<(), LenError> {
        let d = x.len();
        LenError::check("grad", d, grad.len())?;
        LenError::check("proposal", d, x_new.len())?;
        LenError::check("flipped", d, flipped.len())?;
        self.check_dim(d)
    }

    /// `log q(to | from)` with gradient `grad_from` at `from`.
    ///
    /// # Errors
    ///
    /// [`LenError`] unless all slices (and the preconditioner) have the same length.
    #[cfg_attr(target_arch = "x86_64", inline(always))]
    pub fn log_q(&self, from: &[u8], grad_from: &[f32], to: &[u8]) -> Result<f64, LenError> {
        let d = from.len();
        LenError::check("grad", d, grad_from.len())?;
        LenError::check("to", d, to.len())?;
        self.check_dim(d)?;
        let mut total = LogSum::default();
        let blocks = from
            .chunks(BLOCK)
            .zip(grad_from.chunks(BLOCK))
            .zip(to.chunks(BLOCK));
        for (b, ((fc, gc), tc)) in blocks.enumerate() {
            let xs = padded(fc, 0);
            let logits = self.logits(b, &xs, &padded(gc, 0.0));
            let ys = padded(tc, 0);
            let mut terms = [0f32; BLOCK];
            let stages = terms
                .chunks_exact_mut(STAGE)
                .zip(logits.chunks_exact(STAGE))
                .zip(xs.chunks_exact(STAGE).zip(ys.chunks_exact(STAGE)));
            for ((t, l), (xs, ys)) in stages {
                let Ok(l) = <&[f32; STAGE]>::try_from(l) else {
                    continue;
                };
                let lp = ln_1p_each::<M, STAGE>(&exp_neg_abs_each::<M, STAGE>(l));
                for ((t, (&l, &lp)), (&xi, &yi)) in
                    t.iter_mut().zip(l.iter().zip(&lp)).zip(xs.iter().zip(ys))
                {
                    let (ln_flip, ln_stay) = FlipOdds::logs_from(l, lp);
                    *t = if xi != yi { ln_flip } else { ln_stay };
                }
            }
            total.add_block(&terms, fc.len());
        }
        Ok(total.finish())
    }

    /// The flip logits of block `b`: `l_i = b · g_i · (1 − 2x_i) − 1/(2a_i)`.
    #[inline(always)]
    fn logits(&self, b: usize, x: &[u8; BLOCK], g: &[f32; BLOCK]) -> [f32; BLOCK] {
        let half_inv_step = match self.precond {
            None => [self.half_inv_step; BLOCK],
            Some(p) => padded(p.get(b * BLOCK..).unwrap_or(&[]), 1.0)
                .map(|pi| self.half_inv_step / (pi * pi)),
        };
        let mut l = [0f32; BLOCK];
        for (((l, &xi), &gi), &h) in l.iter_mut().zip(x).zip(g).zip(&half_inv_step) {
            // 1 − 2x is +1 for x = 0 and −1 for x = 1.
            let sign = 1.0 - 2.0 * f32::from(xi);
            *l = self.balance * gi * sign - h;
        }
        l
    }

    /// The draw, in blocks of `BLOCK` coordinates held in fixed-size arrays: each stage is a
    /// simple loop over the block without branches, which the compiler vectorises. The last,
    /// short block is padded and its padding lanes are ignored.
    #[inline(always)]
    fn propose_with<R: Rng + ?Sized, const LOG_Q: bool>(
        &self,
        x: &[u8],
        grad: &[f32],
        x_new: &mut [u8],
        flipped: &mut [u32],
        rng: &mut R,
    ) -> (usize, f64) {
        let mut count = 0usize;
        let mut total = LogSum::default();
        let blocks = x
            .chunks(BLOCK)
            .zip(grad.chunks(BLOCK))
            .zip(x_new.chunks_mut(BLOCK));
        for (b, ((xc, gc), nc)) in blocks.enumerate() {
            let n = xc.len();
            let xs = padded(xc, 0);
            let logits = self.logits(b, &xs, &padded(gc, 0.0));
            let bits = draw_bits(rng, n);
            let mut flips = [0u8; BLOCK];
            let mut terms = [0f32; BLOCK];
            let stages = flips
                .chunks_exact_mut(STAGE)
                .zip(terms.chunks_exact_mut(STAGE))
                .zip(logits.chunks_exact(STAGE).zip(bits.chunks_exact(STAGE)));
            for ((f, t), (l, r)) in stages {
                let Ok(l) = <&[f32; STAGE]>::try_from(l) else {
                    continue;
                };
                // Without `log q` the logarithms are never taken.
                let e = exp_neg_abs_each::<M, STAGE>(l);
                let lp = if LOG_Q {
                    ln_1p_each::<M, STAGE>(&e)
                } else {
                    [0.0; STAGE]
                };
                let lanes = l.iter().zip(r).zip(e.iter().zip(&lp));
                for ((f, t), ((&l, &r), (&e, &lp))) in f.iter_mut().zip(t.iter_mut()).zip(lanes) {
                    let odds = FlipOdds::from_exp(l, e, lp);
                    let flip = below(r, odds.p_flip);
                    *f = u8::from(flip);
                    *t = if flip { odds.ln_flip } else { odds.ln_stay };
                }
            }
            for ((o, &xi), &f) in nc.iter_mut().zip(&xs).zip(&flips) {
                *o = xi ^ f;
            }
            if LOG_Q {
                total.add_block(&terms, n);
            }
            // One bit per coordinate: eight 0/1 bytes at a time, packed by a multiplication.
            let mut mask = 0u64;
            for (k, eight) in flips.chunks_exact(8).enumerate() {
                let bytes = u64::from_le_bytes(<[u8; 8]>::try_from(eight).unwrap_or([0; 8]));
                mask |= (bytes.wrapping_mul(0x0102_0408_1020_4080) >> 56) << (8 * k);
            }
            // Padding lanes never count as flips.
            mask &= u64::MAX >> (BLOCK - n);
            let base = b * BLOCK;
            while mask != 0 {
                if let Some(slot) = flipped.get_mut(count) {
                    *slot = (base + mask.trailing_zeros() as usize) as u32;
                }
                count += 1;
                mask &= mask - 1;
            }
        }
        (count, total.finish())
    }
}

/// Whether `r < ⌊p · 2^32⌋` (the bound saturating at `2^32 − 1`; NaN never draws), as
/// `(p * 2^32) as u32` would decide it for `p ≤ 1`, but through exact `f32` and `i32` steps that
/// vectorise (no float-to-integer conversion): `p · 2^16` is split into its integer part (the
/// bound's top 16 bits) and `2^16` times its fraction (the low 16 bits).
#[inline(always)]
fn below(r: u32, p: f32) -> bool {
    const TOP: i32 = 1 << 16;
    // `p >= 0` is false for NaN: such a coordinate never flips.
    let p = if p >= 0.0 { p } else { 0.0 };
    let scaled = p * TWO_POW_16;
    let hi = floor_small(scaled);
    let lo = floor_small((scaled - hi as f32) * TWO_POW_16);
    let (hi, lo) = if hi >= TOP {
        (TOP - 1, TOP - 1)
    } else {
        (hi, lo)
    };
    let (r_hi, r_lo) = ((r >> 16) as i32, (r & 0xffff) as i32);
    (r_hi < hi) | ((r_hi == hi) & (r_lo < lo))
}

/// `⌊y⌋` for `0 ≤ y < 2^22`: adding `1.5 · 2^23` rounds `y` to an integer held in the low
/// mantissa bits; one correction turns the rounding into a floor. Every step is exact.
#[inline(always)]
fn floor_small(y: f32) -> i32 {
    const ROUND: f32 = 12_582_912.0;
    let k = (y + ROUND).to_bits().wrapping_sub(ROUND.to_bits()) as i32;
    k - i32::from(k as f32 > y)
}

/// The first `BLOCK` entries of `src` as an array, padded with `pad` if it is shorter.
#[inline(always)]
fn padded<T: Copy>(src: &[T], pad: T) -> [T; BLOCK] {
    match src.get(..BLOCK).map(<[T; BLOCK]>::try_from) {
        Some(Ok(a)) => a,
        _ => {
            let mut a = [pad; BLOCK];
            for (d, &s) in a.iter_mut().zip(src) {
                *d = s;
            }
            a
        }
    }
}

/// `BLOCK` 32-bit draws, two per `next_u64` (low half first); only the first `n` are drawn,
/// the rest are 0.
#[inline(always)]
fn draw_bits<R: Rng + ?Sized>(rng: &mut R, n: usize) -> [u32; BLOCK] {
    let mut bits = [0u32; BLOCK];
    for pair in bits.chunks_exact_mut(2).take(n.div_ceil(2)) {
        let r = rng.next_u64();
        if let [lo, hi] = pair {
            *lo = r as u32;
            *hi = (r >> 32) as u32;
        }
    }
    bits
}

/// A sum of `f32` terms accumulated lane by lane and folded into `f64` every
/// `BLOCK_CHUNKS` chunks: fast, and accurate enough for `d = 10^5` terms.
#[derive(Default)]
struct LogSum {
    lanes: [f32; LANES],
    chunks: usize,
    total: f64,
}

impl LogSum {
    #[inline(always)]
    fn add_chunk(&mut self, terms: &[f32; LANES], n: usize) {
        for (j, (acc, &t)) in self.lanes.iter_mut().zip(terms).enumerate() {
            // Lanes past the end of a short final chunk hold stale terms: add zero instead.
            *acc += if j < n { t } else { 0.0 };
        }
        self.chunks += 1;
        if self.chunks == BLOCK_CHUNKS {
            self.fold();
        }
    }

    /// Adds the first `n` terms of a block, `LANES` at a time (the same sums as adding them
    /// chunk by chunk).
    #[inline(always)]
    fn add_block(&mut self, terms: &[f32; BLOCK], n: usize) {
        for (k, chunk) in terms
            .chunks_exact(LANES)
            .enumerate()
            .take(n.div_ceil(LANES))
        {
            if let Ok(chunk) = <&[f32; LANES]>::try_from(chunk) {
                self.add_chunk(chunk, n - k * LANES);
            }
        }
    }

    #[inline(always)]
    fn fold(&mut self) {
        let [a, b, c, d, e, f, g, h] = self.lanes.map(f64::from);
        self.total += ((a + b) + (c + d)) + ((e + f) + (g + h));
        self.lanes = [0.0; LANES];
        self.chunks = 0;
    }

    #[inline(always)]
    fn finish(mut self) -> f64 {
        self.fold();
        self.total
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;
    use std::vec;
    use std::vec::Vec;

    /// A per-coordinate reference with no chunking, in f64.
    fn log_q_reference(p: &FlipProposal<'_>, from: &[u8], g: &[f32], to: &[u8]) -> f64 {
        let mut s = 0.0f64;
        for i in 0..from.len() {
            let a = p.step * p.precond.map_or(1.0, |q| f64::from(q[i]) * f64::from(q[i]));
            let l = p.balance() * f64::from(g[i]) * (1.0 - 2.0 * f64::from(from[i])) - 0.5 / a;
            let lp = if from[i] != to[i] {
                -crate::math::softplus(-l)
            } else {
                -crate::math::softplus(l)
            };
            s += lp;
        }
        s
    }

    #[test]
    fn proposal_log_q_matches_reference_and_draw() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
        for d in [1usize, 7, 8, 9, 33, 300] {
            let x: Vec<u8> = (0..d).map(|i| (i % 3 == 0) as u8).collect();
            let g: Vec<f32> = (0..d).map(|i| (i as f32 * 0.37).sin() * 3.0).collect();
            let pre: Vec<f32> = (0..d).map(|i| 0.5 + (i % 4) as f32 * 0.25).collect();
            let base = FlipProposal::new(0.7, 0.6).unwrap();
            for prop in [base, base.preconditioned(&pre).unwrap()] {
                let mut y = vec![0u8; d];
                let mut fl = vec![0u32; d];
                let (k, lq) = prop.propose(&x, &g, &mut y, &mut fl, &mut rng).unwrap();
                let listed: Vec<u32> = fl[..k].to_vec();
                let diff: Vec<u32> = (0..d as u32)
                    .filter(|&i| x[i as usize] != y[i as usize])
                    .collect();
                assert_eq!(listed, diff);
                let again = prop.log_q(&x, &g, &y).unwrap();
                assert_eq!(lq, again, "draw and log_q must agree bit for bit");
                let r = log_q_reference(&prop, &x, &g, &y);
                assert!((lq - r).abs() <= 1e-5 * (1.0 + r.abs()), "{lq} vs {r}");
            }
        }
    }

    #[test]
    fn below_matches_the_saturating_cast() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let mut ps: Vec<f32> = vec![
            0.0,
            1.0,
            f32::MIN_POSITIVE,
            1e-45,
            0.5,
            1.0 - f32::EPSILON / 2.0,
        ];
        ps.extend((0..200_000).map(|_| f32::from_bits(rng.next_u32() % 0x3f80_0001)));
        ps.extend((0..1000).map(|k| k as f32 / 2f32.powi(32)));
        for p in ps {
            let t = (p * 4_294_967_296.0) as u32;
            for r in [
                0,
                1,
                t.wrapping_sub(1),
                t,
                t.wrapping_add(1),
                u32::MAX - 1,
                u32::MAX,
            ] {
                assert_eq!(below(r, p), r < t, "p = {p:e}, r = {r}, t = {t}");
            }
            let r = rng.next_u32();
            assert_eq!(below(r, p), r < t);
        }
        assert!(!below(0, f32::NAN));
    }

    #[test]
    fn draws_consume_a_fixed_number_of_words() {
        let x = [0u8; 9];
        let g = [f32::NAN; 9];
        let mut y = [0u8; 9];
        let mut fl = [0u32; 9];
        let mut a = Xoshiro256PlusPlus::seed_from_u64(9);
        let mut b = a.clone();
        FlipProposal::new(1e30, 1.0)
            .unwrap()
            .propose(&x, &g, &mut y, &mut fl, &mut a)
            .unwrap();
        for _ in 0..5 {
            b.next_u64();
        }
        assert_eq!(a.next_u64(), b.next_u64());
        assert_eq!(y, [0; 9], "NaN logits never flip");
    }
}
