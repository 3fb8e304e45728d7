//! The one place that evaluates transcendental functions.
//!
//! Kernels reach `exp` and `ln(1 + x)` only through a [`FlipMath`] implementation, so that the
//! probabilities used to draw a move and the `log q` used to accept it come from the very same
//! numbers. [`Libm`] forwards to the `libm` crate (correctly rounded to within 1 ulp or so);
//! faster branch-free approximations plug in the same way.

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
        let lp = M::ln_1p(e);
        let inv = 1.0 / (1.0 + e);
        let p_flip = if l >= 0.0 { inv } else { e * inv };
        Self {
            p_flip,
            ln_flip: -((-l).max(0.0) + lp),
            ln_stay: -(l.max(0.0) + lp),
        }
    }

    /// Only the two logarithms (for a reverse move, where nothing is drawn).
    #[inline(always)]
    pub fn logs<M: FlipMath>(l: f32) -> (f32, f32) {
        let lp = M::ln_1p(M::exp(-l.abs()));
        (-((-l).max(0.0) + lp), -(l.max(0.0) + lp))
    }
}

/// A stable `ln(1 + e^x)` in `f64` through `libm`.
#[inline]
pub fn softplus(x: f64) -> f64 {
    x.max(0.0) + libm::log1p(libm::exp(-x.abs()))
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
