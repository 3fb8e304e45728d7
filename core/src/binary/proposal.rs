//! The balanced flip proposal over `{0,1}^d`.

use crate::error::{LenError, ParamError};
use crate::math::{FlipMath, FlipOdds, Libm};
use rand_core::Rng;

/// Width of the fixed chunks the hot loops work on. Sums are formed lane by lane in this width,
/// so results do not depend on the platform's SIMD width.
pub const LANES: usize = 8;

/// Coordinates summed per lane in `f32` before the lane sums are folded into an `f64` total.
const BLOCK_CHUNKS: usize = 32;

/// `2^32` as an `f32` (exact).
const TWO_POW_32: f32 = 4_294_967_296.0;

/// The balanced proposal family on binary states, DESIGN §3: each coordinate flips
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
        if !(step.is_finite() && step > 0.0) {
            return Err(ParamError::Step(step));
        }
        if !(balance > 0.0 && balance <= 1.0) {
            return Err(ParamError::Balance(balance));
        }
        Ok(Self {
            balance: balance as f32,
            half_inv_step: (0.5 / step) as f32,
            step,
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
        for (index, &pi) in p.iter().enumerate() {
            let scaled = self.step * f64::from(pi) * f64::from(pi);
            let half_inv = self.half_inv_step / (pi * pi);
            if !(pi.is_finite() && pi > 0.0 && scaled.is_finite() && scaled > 0.0)
                || half_inv.is_nan()
            {
                return Err(ParamError::Preconditioner {
                    index,
                    value: f64::from(pi),
                });
            }
        }
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
    pub fn propose<R: Rng + ?Sized>(
        &self,
        x: &[u8],
        grad: &[f32],
        x_new: &mut [u8],
        flipped: &mut [u32],
        rng: &mut R,
    ) -> Result<(usize, f64), LenError> {
        let d = x.len();
        LenError::check("grad", d, grad.len())?;
        LenError::check("proposal", d, x_new.len())?;
        LenError::check("flipped", d, flipped.len())?;
        self.check_dim(d)?;
        Ok(match self.precond {
            None => self.propose_with(x, grad, x_new, flipped, rng, |_| self.half_inv_step),
            Some(p) => self.propose_with(x, grad, x_new, flipped, rng, |i| {
                let pi = p.get(i).copied().unwrap_or(1.0);
                self.half_inv_step / (pi * pi)
            }),
        })
    }

    /// `log q(to | from)` with gradient `grad_from` at `from`.
    ///
    /// # Errors
    ///
    /// [`LenError`] unless all slices (and the preconditioner) have the same length.
    pub fn log_q(&self, from: &[u8], grad_from: &[f32], to: &[u8]) -> Result<f64, LenError> {
        let d = from.len();
        LenError::check("grad", d, grad_from.len())?;
        LenError::check("to", d, to.len())?;
        self.check_dim(d)?;
        Ok(match self.precond {
            None => self.log_q_with(from, grad_from, to, |_| self.half_inv_step),
            Some(p) => self.log_q_with(from, grad_from, to, |i| {
                let pi = p.get(i).copied().unwrap_or(1.0);
                self.half_inv_step / (pi * pi)
            }),
        })
    }

    #[inline(always)]
    fn logit(&self, x: u8, g: f32, half_inv_step: f32) -> f32 {
        // 1 − 2x is +1 for x = 0 and −1 for x = 1.
        let sign = 1.0 - 2.0 * f32::from(x);
        self.balance * g * sign - half_inv_step
    }

    #[inline(always)]
    fn propose_with<R: Rng + ?Sized>(
        &self,
        x: &[u8],
        grad: &[f32],
        x_new: &mut [u8],
        flipped: &mut [u32],
        rng: &mut R,
        half_inv_step: impl Fn(usize) -> f32,
    ) -> (usize, f64) {
        let mut count = 0usize;
        let mut total = LogSum::default();
        let mut bits = [0u32; LANES];
        let mut flips = [0u8; LANES];
        let mut terms = [0f32; LANES];
        let chunks = x
            .chunks(LANES)
            .zip(grad.chunks(LANES))
            .zip(x_new.chunks_mut(LANES));
        for (c, ((xc, gc), nc)) in chunks.enumerate() {
            let base = c * LANES;
            fill_bits(rng, &mut bits, xc.len());
            for (j, (((&xi, &gi), ni), (&r, (f, t)))) in xc
                .iter()
                .zip(gc)
                .zip(nc.iter_mut())
                .zip(bits.iter().zip(flips.iter_mut().zip(terms.iter_mut())))
                .enumerate()
            {
                let odds = FlipOdds::new::<M>(self.logit(xi, gi, half_inv_step(base + j)));
                let threshold = (odds.p_flip * TWO_POW_32) as u32;
                let flip = r < threshold;
                *ni = xi ^ u8::from(flip);
                *f = u8::from(flip);
                *t = if flip { odds.ln_flip } else { odds.ln_stay };
            }
            total.add_chunk(&terms, xc.len());
            for (j, &f) in flips.iter().take(xc.len()).enumerate() {
                if let Some(slot) = flipped.get_mut(count) {
                    *slot = (base + j) as u32;
                }
                count += usize::from(f);
            }
        }
        (count, total.finish())
    }

    #[inline(always)]
    fn log_q_with(
        &self,
        from: &[u8],
        grad_from: &[f32],
        to: &[u8],
        half_inv_step: impl Fn(usize) -> f32,
    ) -> f64 {
        let mut total = LogSum::default();
        let mut terms = [0f32; LANES];
        let chunks = from
            .chunks(LANES)
            .zip(grad_from.chunks(LANES))
            .zip(to.chunks(LANES));
        for (c, ((fc, gc), tc)) in chunks.enumerate() {
            let base = c * LANES;
            for (j, (((&xi, &gi), &yi), t)) in
                fc.iter().zip(gc).zip(tc).zip(terms.iter_mut()).enumerate()
            {
                let (ln_flip, ln_stay) =
                    FlipOdds::logs::<M>(self.logit(xi, gi, half_inv_step(base + j)));
                *t = if xi != yi { ln_flip } else { ln_stay };
            }
            total.add_chunk(&terms, fc.len());
        }
        total.finish()
    }
}

/// Fills the first `n` entries of `bits` with 32-bit draws, two per `next_u64`.
#[inline(always)]
fn fill_bits<R: Rng + ?Sized>(rng: &mut R, bits: &mut [u32; LANES], n: usize) {
    for pair in bits.chunks_exact_mut(2).take(n.div_ceil(2)) {
        let r = rng.next_u64();
        if let [lo, hi] = pair {
            *lo = r as u32;
            *hi = (r >> 32) as u32;
        }
    }
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
