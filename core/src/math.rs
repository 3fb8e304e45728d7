//! The one place that evaluates transcendental functions.
//!
//! Kernels reach `exp` and `ln(1 + x)` only through a [`FlipMath`] implementation, so that the
//! probabilities used to draw a move and the `log q` used to accept it come from the very same
//! numbers. [`Libm`] forwards to the `libm` crate (correctly rounded to within 1 ulp or so);
//! [`Fast`] is a branch-free polynomial version that vectorises, with error bounds of the same
//! order (see its `# Precision` sections).

/// `exp` and `ln(1 + x)` in `f32`, as used by the flip proposal's hot loop.
pub trait FlipMath: Copy + Default + core::fmt::Debug {
    /// `e^x`.
    fn exp(x: f32) -> f32;
    /// `ln(1 + x)` for `x ∈ [0, 1]`.
    fn ln_1p(x: f32) -> f32;
}

/// `exp` and `ln(1 + x)` from the `libm` crate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Libm;

impl FlipMath for Libm {
    #[inline(always)]
    fn exp(x: f32) -> f32 {
        libm::expf(x)
    }
    #[inline(always)]
    fn ln_1p(x: f32) -> f32 {
        libm::log1pf(x)
    }
}

/// Branch-free polynomial `exp` and `ln(1 + x)` for the flip proposal's hot loop.
///
/// Both functions are straight-line `f32` arithmetic and bit manipulation (no table, no branch,
/// no call), so a loop over them vectorises. Each operation is a plain IEEE 754 `f32` add or
/// multiply in a fixed order (no fused multiply-add), so the results are the same bits on every
/// target, soft-float included.
///
/// # Examples
///
/// ```
/// use langevin_core::math::{Fast, FlipMath, FlipOdds};
/// assert_eq!(Fast::exp(0.0), 1.0);
/// assert!((Fast::ln_1p(1.0) - core::f32::consts::LN_2).abs() < 2e-7);
/// let o = FlipOdds::new::<Fast>(2.0);
/// assert!((o.p_flip - 0.880_797_1).abs() < 1e-6);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fast;

/// `ln 2` split so that `k · LN2_HI` is exact for `|k| < 2^15` (9 significant bits).
const LN2_HI: f32 = 355.0 / 512.0;
/// `ln 2 − LN2_HI` (Cody–Waite).
const LN2_LO: f32 = -2.121_944_4e-4;
/// `1.5 · 2^23`: adding and subtracting it rounds an `f32` of magnitude below `2^22` to the
/// nearest integer, which is then also readable from the low bits of the sum.
const ROUND: f32 = 12_582_912.0;
/// Inputs above this overflow to `+∞` (`ln f32::MAX ≈ 88.7228`); the bound keeps `k ≤ 128`.
const EXP_HI: f32 = 89.0;
/// Inputs below this round to `+0` (`e^x < 2^−150` for `x < −103.9721`); the bound keeps
/// `k ≥ −151`.
const EXP_LO: f32 = -104.0;
/// Minimax coefficients of `(e^r − 1 − r) / r²` on `|r| ≤ 0.347`, weighted for the relative
/// error of `e^r` (approximation error `3.1e-9` before rounding the coefficients to `f32`).
const EXP_P: [f32; 5] = [
    0.499_999_94,
    0.166_665_2,
    0.041_668_396,
    0.008_368_797,
    0.001_381_443_3,
];
/// Minimax coefficients of `(ln(1 + x) − x) / x²` on `[0, 1]`, weighted for the relative error
/// of `ln(1 + x)` (approximation error `3.3e-8` before rounding the coefficients to `f32`).
const LN1P_P: [f32; 8] = [
    -0.499_996_48,
    0.333_213_24,
    -0.248_571_63,
    0.191_536_56,
    -0.137_538_05,
    0.079_204_57,
    -0.030_065_81,
    0.005_364_829,
];

/// `2^k` for `−126 ≤ k ≤ 127`, built from its bits (other `k` give garbage, never a panic).
#[inline(always)]
fn pow2i(k: i32) -> f32 {
    f32::from_bits((k.wrapping_add(127) as u32).wrapping_shl(23))
}

impl FlipMath for Fast {
    /// `e^x` by `x = k ln 2 + r`, `|r| ≤ ln 2 / 2`, a degree-6 polynomial on `r`, and a scaling
    /// by `2^k` done in two halves so that overflow and gradual underflow round once, like a
    /// correctly rounded `exp`.
    ///
    /// # Precision
    ///
    /// Measured on every `f32` in `[−104, 89]` against `f64` `exp`: the error is below
    /// **1 ulp** of the exact result (max 0.99 ulp), which for normal results
    /// (`x ≥ −87.33`) means a relative error below `8.4e-8`, and for subnormal results an
    /// absolute error below `2^−149 ≈ 1.4e-45`.
    ///
    /// Special values: `exp(±0) = 1`; `x ≥ 88.722_84` (and `+∞`) gives `+∞` and
    /// `x ≤ −103.972_084` (and `−∞`) gives `+0`, the same thresholds as a correctly rounded `exp`;
    /// NaN gives NaN.
    #[inline(always)]
    fn exp(x: f32) -> f32 {
        // Clamp with selects whose comparisons are false for NaN, so NaN passes through
        // (`f32::min`/`max` would replace it by the bound).
        let x = if x > EXP_HI { EXP_HI } else { x };
        let x = if x < EXP_LO { EXP_LO } else { x };
        let t = x * core::f32::consts::LOG2_E + ROUND;
        let kf = t - ROUND;
        // Two's-complement reinterpretation of the integer held in the low bits of `t`.
        let k = t.to_bits().wrapping_sub(ROUND.to_bits()) as i32;
        let r = (x - kf * LN2_HI) - kf * LN2_LO;
        let [p0, p1, p2, p3, p4] = EXP_P;
        let p = p0 + r * (p1 + r * (p2 + r * (p3 + r * p4)));
        let e = 1.0 + (r + (r * r) * p);
        // 2^k = 2^k1 · 2^k2 with both halves normal for k ∈ [−151, 128]: `e · 2^k1` is exact
        // and the second product rounds once, to +∞ or into the subnormals as it should.
        let k1 = k >> 1;
        let k2 = k.wrapping_sub(k1);
        e * pow2i(k1) * pow2i(k2)
    }

    /// `ln(1 + x)` as `x + x² P(x)` with a degree-7 minimax polynomial `P`, accurate relative
    /// to the result down to the smallest subnormal `x`.
    ///
    /// # Domain
    ///
    /// `x ∈ [0, 1]` (all the flip odds need: `x = e^{−|l|}`); `±0` gives `±0` and NaN gives
    /// NaN. Outside `[0, 1]` the polynomial is not an approximation of `ln(1 + x)` (for
    /// `x = 2` it is off by about `0.1`, and it grows like `x^9`); a full-range `ln(1 + x)`
    /// needs an exponent split and a division, which would roughly double the cost.
    ///
    /// # Precision
    ///
    /// Measured on every `f32` in `[0, 1]` against `f64` `ln_1p`: error at most **2.1 ulp**,
    /// relative error at most `1.8e-7`, absolute error at most `1.25e-7`.
    #[inline(always)]
    fn ln_1p(x: f32) -> f32 {
        let [c0, c1, c2, c3, c4, c5, c6, c7] = LN1P_P;
        let p = c0 + x * (c1 + x * (c2 + x * (c3 + x * (c4 + x * (c5 + x * (c6 + x * c7))))));
        x + (x * x) * p
    }
}

/// The probabilities of flipping a binary coordinate with logit `l`, all derived from one
/// `e = exp(−|l|)` so that drawing and `log q` agree.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlipOdds {
    /// `sigmoid(l)`.
    pub p_flip: f32,
    /// `ln sigmoid(l) = −softplus(−l)`.
    pub ln_flip: f32,
    /// `ln sigmoid(−l) = −softplus(l)`.
    pub ln_stay: f32,
}

impl FlipOdds {
    /// Evaluates the odds of logit `l` with the functions of `M`.
    ///
    /// Non-finite input gives a documented safe outcome: `l = +∞` flips surely, `l = −∞` never
    /// flips, and NaN gives `p_flip = NaN` (which draws no flip) and NaN logarithms (which make a
    /// Metropolis test reject).
    ///
    /// # Examples
    ///
    /// ```
    /// use langevin_core::math::{FlipOdds, Libm};
    /// let o = FlipOdds::new::<Libm>(0.0);
    /// assert_eq!(o.p_flip, 0.5);
    /// assert!((o.ln_flip - 0.5f32.ln()).abs() < 1e-7);
    /// ```
    #[inline(always)]
    pub fn new<M: FlipMath>(l: f32) -> Self {
        let e = M::exp(-l.abs());
        Self::from_exp(l, e, M::ln_1p(e))
    }

    /// The odds of logit `l` from `e = e^{−|l|}` and `lp = ln(1 + e)`.
    #[inline(always)]
    pub(crate) fn from_exp(l: f32, e: f32, lp: f32) -> Self {
        let inv = 1.0 / (1.0 + e);
        let p_flip = if l >= 0.0 { inv } else { e * inv };
        let (ln_flip, ln_stay) = Self::logs_from(l, lp);
        Self {
            p_flip,
            ln_flip,
            ln_stay,
        }
    }

    /// Only the two logarithms (for a reverse move, where nothing is drawn).
    #[inline(always)]
    pub fn logs<M: FlipMath>(l: f32) -> (f32, f32) {
        Self::logs_from(l, M::ln_1p(M::exp(-l.abs())))
    }

    /// `(ln_flip, ln_stay)` of logit `l` from `lp = ln(1 + e^{−|l|})`.
    #[inline(always)]
    pub(crate) fn logs_from(l: f32, lp: f32) -> (f32, f32) {
        (-((-l).max(0.0) + lp), -(l.max(0.0) + lp))
    }
}

/// `e^{−|l|}` of each logit of a block: the first stage of [`FlipOdds::new`] over a block.
///
/// A block's odds are computed stage by stage (every `exp`, then every `ln(1 + e)`
/// ([`ln_1p_each`]), then [`FlipOdds::from_exp`] lane by lane): each short loop vectorises and its
/// iterations overlap, where one loop over [`FlipOdds::new`] runs each vector through one long
/// chain of dependent operations. The lanes are [`FlipOdds::new`]'s values bit for bit.
#[inline(always)]
pub(crate) fn exp_neg_abs_each<M: FlipMath, const N: usize>(l: &[f32; N]) -> [f32; N] {
    let mut e = [0f32; N];
    for (e, &l) in e.iter_mut().zip(l) {
        *e = M::exp(-l.abs());
    }
    e
}

/// `ln(1 + x)` of each entry of a block (see [`exp_neg_abs_each`]).
#[inline(always)]
pub(crate) fn ln_1p_each<M: FlipMath, const N: usize>(x: &[f32; N]) -> [f32; N] {
    let mut y = [0f32; N];
    for (y, &x) in y.iter_mut().zip(x) {
        *y = M::ln_1p(x);
    }
    y
}

/// A stable `ln(1 + e^x)` in `f64` through `libm`.
#[inline]
pub fn softplus(x: f64) -> f64 {
    x.max(0.0) + libm::log1p(libm::exp(-x.abs()))
}

/// [`softplus`] and [`sigmoid`] of one `x`, sharing their `e^{−|x|}`: the same values, bit for
/// bit, for two thirds of the `libm` calls.
#[inline]
pub fn softplus_and_sigmoid(x: f64) -> (f64, f64) {
    let e = libm::exp(-x.abs());
    let sigmoid = if x >= 0.0 {
        1.0 / (1.0 + e)
    } else {
        e / (1.0 + e)
    };
    (x.max(0.0) + libm::log1p(e), sigmoid)
}

/// A stable logistic function `1 / (1 + e^{−x})` in `f64` through `libm`.
#[inline]
pub fn sigmoid(x: f64) -> f64 {
    let e = libm::exp(-x.abs());
    if x >= 0.0 {
        1.0 / (1.0 + e)
    } else {
        e / (1.0 + e)
    }
}

/// The Metropolis acceptance probability `min(1, e^r)` of a log ratio `r`; a NaN ratio (an
/// invalid proposal) counts as a rejection (0).
#[inline]
pub(crate) fn acceptance_probability(log_ratio: f64) -> f64 {
    if log_ratio >= 0.0 {
        1.0
    } else if log_ratio > f64::NEG_INFINITY {
        libm::exp(log_ratio)
    } else {
        0.0
    }
}

/// The Robbins–Monro gain `(1 + n)^{−0.6}` of the `n`-th adaptation step of the step-size
/// and length tuners.
#[inline]
pub(crate) fn adaptation_gain(n: u64) -> f64 {
    libm::pow(1.0 + n as f64, -0.6)
}

/// The gain of the next adaptation step of a tuner that adapts for its first `burn_in` steps,
/// counting that step in `steps`; `None` once the burn-in is spent.
#[inline]
pub(crate) fn burn_in_gain(steps: &mut u64, burn_in: u64) -> Option<f64> {
    if *steps >= burn_in {
        return None;
    }
    let gain = adaptation_gain(*steps);
    *steps += 1;
    Some(gain)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Logits over the whole range, with the special values.
    fn logits() -> [f32; 64] {
        let mut l = [0f32; 64];
        for (i, l) in l.iter_mut().enumerate() {
            *l = (i as f32 - 30.0) * 0.37 + 1.0e-3 * (i * i) as f32;
        }
        let special = [
            0.0,
            -0.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            1.0e-40,
            -90.0,
            120.0,
        ];
        l[..special.len()].copy_from_slice(&special);
        l
    }

    fn same(a: f32, b: f32) -> bool {
        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
    }

    #[test]
    fn block_odds_are_the_single_odds_bit_for_bit() {
        fn check<M: FlipMath>() {
            let l = logits();
            let e = exp_neg_abs_each::<M, 64>(&l);
            let lp = ln_1p_each::<M, 64>(&e);
            for ((&l, &e), &lp) in l.iter().zip(&e).zip(&lp) {
                let (one, block) = (FlipOdds::new::<M>(l), FlipOdds::from_exp(l, e, lp));
                assert!(same(block.p_flip, one.p_flip), "p_flip of {l}");
                assert!(same(block.ln_flip, one.ln_flip), "ln_flip of {l}");
                assert!(same(block.ln_stay, one.ln_stay), "ln_stay of {l}");
                let ((f, s), (bf, bs)) = (FlipOdds::logs::<M>(l), FlipOdds::logs_from(l, lp));
                assert!(same(f, bf) && same(s, bs), "logs of {l}");
            }
        }
        check::<Fast>();
        check::<Libm>();
    }
}
