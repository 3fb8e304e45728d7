//! The Gaussian-integral-trick kernel over ordinal states `{0, …, S−1}^d`.

use super::kernel::{SecondOrder, TrickDomain, TrickParams};
use super::linalg::scratch_len;
use crate::domain::Ordinal;
use crate::error::LenError;
use crate::random::Pick;

/// `2^-32` as an `f64` (exact).
const TWO_POW_NEG_32: f64 = 1.0 / 4_294_967_296.0;

/// Length of the `f64` scratch buffer [`OrdinalAbSecondOrder::new`] needs for dimension `d` and
/// `S` values: `6 d` (as [`scratch_len`]) plus `S` (one coordinate's weights). Saturates
/// instead of overflowing.
///
/// # Examples
///
/// ```
/// assert_eq!(langevin_core::second_order::ordinal_scratch_len(10, 5), 65);
/// ```
pub const fn ordinal_scratch_len(d: usize, states: usize) -> usize {
    scratch_len(d).saturating_add(states)
}

/// One coordinate's conditional `log Q(v) = v c − κ v² − log Z` over `v ∈ {0, …, S−1}`.
#[derive(Clone, Copy, Debug)]
struct Law {
    c: f64,
    kappa: f64,
    /// The largest logit (the shift of the log-sum-exp).
    top: f64,
    /// `Z = Σ_v exp(logit(v) − top)`, at least about 1.
    z: f64,
}

impl Law {
    #[inline(always)]
    fn logit(c: f64, kappa: f64, v: f64) -> f64 {
        v * c - kappa * v * v
    }

    /// The law for `c`, `κ` over `s` values; writes the weights `exp(logit(v) − top)` into
    /// `weights` (length `s`). Drawing and `log Q` both come here, so they use the same numbers.
    #[inline(always)]
    fn new(c: f64, kappa: f64, weights: &mut [f64]) -> Self {
        let last = weights.len().saturating_sub(1) as f64;
        // The logit is a parabola in v: its integer maximum is the integer nearest the vertex
        // (κ > 0) or an end of the range (κ ≤ 0). Taking the largest of the three candidates
        // covers both without a pass over the values.
        // `max` before `min` maps NaN (κ = 0, non-finite c) to 0; no panicking `clamp`.
        let vertex = libm::round((c / (2.0 * kappa)).max(0.0).min(last));
        let top = Self::logit(c, kappa, 0.0)
            .max(Self::logit(c, kappa, last))
            .max(Self::logit(c, kappa, vertex));
        let mut z = 0.0f64;
        let mut v = 0.0f64;
        for w in weights.iter_mut() {
            *w = libm::exp(Self::logit(c, kappa, v) - top);
            z += *w;
            v += 1.0;
        }
        Self { c, kappa, top, z }
    }

    /// `log Q(v)`; `−∞` for a value beyond the range.
    #[inline(always)]
    fn log_prob(&self, v: u16, states: usize) -> f64 {
        if usize::from(v) >= states {
            return f64::NEG_INFINITY;
        }
        (Self::logit(self.c, self.kappa, f64::from(v)) - self.top) - libm::log(self.z)
    }
}

impl TrickDomain for Ordinal {
    #[inline(always)]
    fn draw(c: f64, kappa: f64, x: u16, bits: u32, weights: &mut [f64]) -> (u16, f64) {
        let states = weights.len();
        let law = Law::new(c, kappa, weights);
        let threshold = f64::from(bits) * TWO_POW_NEG_32 * law.z;
        let mut pick = Pick::new(threshold, x);
        for (v, &w) in weights.iter().enumerate() {
            pick.offer(v as u16, w);
        }
        let (value, _, found) = pick.result();
        // Nothing drawn (NaN weights): keep the coordinate; the NaN log Q rejects.
        let log_q = if found {
            law.log_prob(value, states)
        } else {
            f64::NAN
        };
        (value, log_q)
    }

    #[inline(always)]
    fn log_prob(c: f64, kappa: f64, v: u16, weights: &mut [f64]) -> f64 {
        let states = weights.len();
        Law::new(c, kappa, weights).log_prob(v, states)
    }
}

/// The second-order any-scale balanced kernel (module docs: [`crate::second_order`]) on ordinal
/// states, with its caller-owned scratch.
///
/// Given `u = A x + ξ`, each `y_i` is drawn from the normalised softmax over `v ∈ {0, …, S−1}`
/// of `v c_i − κ_i v²`, `c = b g − b W x + x/a + Aᵀu`, `κ_i = b D_ii/2 + 1/(2a)` (a stable
/// log-sum-exp, shifted by the exact largest logit; the same numbers give the draw and
/// `log Q`), and the move is accepted with
/// `log r = U(y) − U(x) + log N(u; A y, I) − log N(u; A x, I) + log Q(x | y, u) − log Q(y | x, u)`.
/// Every step is an exact Metropolis–Hastings step for `π`, whatever `W`, `D`, `A`, `a`, `b`.
///
/// `W x` and `A x` of the current state are cached in `f64` and updated from the cache in
/// `O(k d)` for a proposal that changes `k < d/2` coordinates. A proposal at which the target is
/// not finite, or returns a recoverable error, is rejected and reported as in
/// [`crate::ordinal::Dmala`]. A step consumes exactly `3⌈d/2⌉ + 1` words of the random stream
/// (`d` normals, one 32-bit draw per coordinate, one uniform) and costs `O(d² + d S)`.
///
/// # Examples
///
/// A discretised Gaussian with precision `Λ = [[1, ¼], [¼, 1]]` on `{0..7}²`, with its exact
/// `W = −Λ`, `D = 1.25 I` (so `W + D = ¼ (1, −1)(1, −1)ᵀ ⪰ 0`) and the factor
/// `A = √(b/4) [[1, −1], [0, 0]]`:
///
/// ```
/// use core::convert::Infallible;
/// use langevin_core::ordinal::{OrdinalChain, OrdinalStorage, OrdinalTarget};
/// use langevin_core::second_order::{OrdinalAbSecondOrder, TrickParams, ordinal_scratch_len};
/// use rand_core::SeedableRng;
///
/// struct Bowl;
/// impl OrdinalTarget for Bowl {
///     type Error = Infallible;
///     fn dim(&self) -> usize { 2 }
///     fn states(&self) -> usize { 8 }
///     fn log_density_and_grad(&mut self, x: &[u16], g: &mut [f32]) -> Result<f64, Infallible> {
///         let r = [f64::from(x[0]) - 3.0, f64::from(x[1]) - 4.0];
///         g[0] = (-r[0] - 0.25 * r[1]) as f32;
///         g[1] = (-r[1] - 0.25 * r[0]) as f32;
///         Ok(-0.5 * (r[0] * r[0] + r[1] * r[1]) - 0.25 * r[0] * r[1])
///     }
/// }
///
/// let b = 0.8f32;
/// let w = [-1.0f32, -0.25, -0.25, -1.0];
/// let diag = [1.25f32, 1.25];
/// let s = (b / 4.0).sqrt();
/// let factor = [s, -s, 0.0, 0.0];
/// let params = TrickParams::new(&w, &diag, &factor, 2.0, f64::from(b)).unwrap();
/// let mut storage = OrdinalStorage::<2, 8>::new([0, 7]);
/// let mut chain = OrdinalChain::new_ordinal(storage.buffers(), &mut Bowl).unwrap();
/// let (mut scratch, mut cached) = ([0.0f64; ordinal_scratch_len(2, 8)], [0u16; 2]);
/// let mut kernel = OrdinalAbSecondOrder::new(params, 8, &mut scratch, &mut cached).unwrap();
/// let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(5);
/// for _ in 0..100 {
///     kernel.step(&mut Bowl, &mut chain, &mut rng).unwrap();
/// }
/// assert!(chain.state().iter().all(|&v| v < 8));
/// ```
pub type OrdinalAbSecondOrder<'m, 's> = SecondOrder<'m, 's, Ordinal>;

impl<'m, 's> SecondOrder<'m, 's, Ordinal> {
    /// The kernel with these parameters for chains over `states` values, working in `scratch`
    /// (length [`ordinal_scratch_len`]`(d, states)`) and `state` (length `d`, the state the
    /// cached products belong to).
    ///
    /// # Errors
    ///
    /// [`LenError`] for buffers of the wrong length, or `states` outside `2..=65535` (buffer
    /// `"states"`).
    pub fn new(
        params: TrickParams<'m>,
        states: usize,
        scratch: &'s mut [f64],
        state: &'s mut [u16],
    ) -> Result<Self, LenError> {
        if !(2..=usize::from(u16::MAX)).contains(&states) {
            return Err(LenError {
                buffer: "states",
                expected: 2,
                found: states,
            });
        }
        let needed = ordinal_scratch_len(params.dim(), states);
        Self::with_states(params, states, needed, scratch, state)
    }
}
