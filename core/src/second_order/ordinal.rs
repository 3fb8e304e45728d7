//! The Gaussian-integral-trick kernel over ordinal states `{0, …, S−1}^d`.

use super::kernel::{
    Transition, TrickParams, gauss_ratio, mat_state, mat_t_vec, rejected, split, update_columns,
};
use super::scratch_len;
use crate::binary::{Rejection, StepError, StepReport};
use crate::error::LenError;
use crate::ordinal::{LabelMove, OrdinalChain, OrdinalKernel, OrdinalTarget, all_finite};
use crate::random::{fill_normal, open_unit_f64};
use crate::target::TargetError;
use rand_core::Rng;

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

/// `c_i = b g_i − b (W x)_i + x_i / a + (Aᵀu)_i` and `κ_i = b D_ii / 2 + 1/(2a)`.
#[inline(always)]
fn coefficients(p: &TrickParams<'_>, x: u16, g: f32, wx: f64, t: f64, d: f32) -> (f64, f64) {
    let inv_a = 1.0 / p.step();
    let b = p.balance();
    let c = b * f64::from(g) - b * wx + f64::from(x) * inv_a + t;
    (c, 0.5 * b * f64::from(d) + 0.5 * inv_a)
}

/// `log Q(to | from, u)` with `t = Aᵀu` and `wf = W from`.
#[allow(
    clippy::too_many_arguments,
    reason = "the kernel's vectors, passed apart"
)]
fn log_q(
    p: &TrickParams<'_>,
    from: &[u16],
    grad: &[f32],
    wf: &[f64],
    t: &[f64],
    to: &[u16],
    weights: &mut [f64],
) -> f64 {
    let states = weights.len();
    let mut total = 0.0f64;
    for (((&x, &g), (&w, &t)), (&d, &y)) in from
        .iter()
        .zip(grad)
        .zip(wf.iter().zip(t))
        .zip(p.diag().iter().zip(to))
    {
        let (c, kappa) = coefficients(p, x, g, w, t, d);
        total += Law::new(c, kappa, weights).log_prob(y, states);
    }
    total
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
#[derive(Debug)]
pub struct OrdinalAbSecondOrder<'m, 's> {
    params: TrickParams<'m>,
    states: usize,
    scratch: &'s mut [f64],
    cached_state: &'s mut [u16],
    cache_valid: bool,
}

impl<'m, 's> OrdinalAbSecondOrder<'m, 's> {
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
        let d = params.dim();
        LenError::check("scratch", ordinal_scratch_len(d, states), scratch.len())?;
        LenError::check("state", d, state.len())?;
        Ok(Self {
            params,
            states,
            scratch,
            cached_state: state,
            cache_valid: false,
        })
    }

    /// The parameters.
    pub fn params(&self) -> &TrickParams<'m> {
        &self.params
    }

    /// The number of values `S`.
    pub fn states(&self) -> usize {
        self.states
    }

    /// Replaces the parameters (same dimension), e.g. after tuning `a` or `b`.
    ///
    /// # Errors
    ///
    /// [`LenError`] if the dimension differs.
    pub fn set_params(&mut self, params: TrickParams<'m>) -> Result<(), LenError> {
        LenError::check("params", self.params.dim(), params.dim())?;
        self.params = params;
        self.cache_valid = false;
        Ok(())
    }

    /// The normalised conditionals and the Gaussian ratio of the move `x → y` given `u`,
    /// computed by the same code the step uses (for tests and diagnostics). A value `≥ S` in
    /// `y` (or `x`) has `log Q = −∞`. Invalidates the cache.
    ///
    /// # Errors
    ///
    /// [`LenError`] unless every slice has length `d`.
    pub fn transition(
        &mut self,
        x: &[u16],
        grad_x: &[f32],
        y: &[u16],
        grad_y: &[f32],
        u: &[f64],
    ) -> Result<Transition, LenError> {
        let p = self.params;
        let d = p.dim();
        for (name, len) in [
            ("x", x.len()),
            ("grad_x", grad_x.len()),
            ("y", y.len()),
            ("grad_y", grad_y.len()),
            ("u", u.len()),
        ] {
            LenError::check(name, d, len)?;
        }
        self.cache_valid = false;
        let (vectors, weights) = self.split()?;
        let [wx, ax, wy, ay, _, t] = split(vectors, d)?;
        p.w().mul_state(d, x, wx);
        mat_state(p.factor(), d, p.upper, x, ax);
        p.w().mul_state(d, y, wy);
        mat_state(p.factor(), d, p.upper, y, ay);
        mat_t_vec(p.factor(), d, p.upper, u, t);
        Ok(Transition {
            log_q_forward: log_q(&p, x, grad_x, wx, t, y, weights),
            log_q_reverse: log_q(&p, y, grad_y, wy, t, x, weights),
            log_gauss_ratio: gauss_ratio(u, ax, ay),
        })
    }

    /// The six `d`-vectors and the `S` weights.
    fn split(&mut self) -> Result<(&mut [f64], &mut [f64]), LenError> {
        let d6 = scratch_len(self.params.dim());
        let found = self.scratch.len();
        self.scratch.split_at_mut_checked(d6).ok_or(LenError {
            buffer: "scratch",
            expected: d6,
            found,
        })
    }

    /// Advances `chain` by one step.
    ///
    /// # Errors
    ///
    /// [`StepError::Len`] if the chain's or target's dimension or number of values differs
    /// from the kernel's; [`StepError::Target`] for an unrecoverable target error. The chain is
    /// unchanged then.
    pub fn step<T, R>(
        &mut self,
        target: &mut T,
        chain: &mut OrdinalChain<'_>,
        rng: &mut R,
    ) -> Result<StepReport, StepError<T::Error>>
    where
        T: OrdinalTarget + ?Sized,
        R: Rng + ?Sized,
    {
        self.step_with_jump(target, chain, rng).map(|r| r.0)
    }

    /// Like [`step`](Self::step), also returning the L1 distance the chain moved.
    ///
    /// # Errors
    ///
    /// As for [`step`](Self::step).
    pub fn step_with_jump<T, R>(
        &mut self,
        target: &mut T,
        chain: &mut OrdinalChain<'_>,
        rng: &mut R,
    ) -> Result<(StepReport, u64), StepError<T::Error>>
    where
        T: OrdinalTarget + ?Sized,
        R: Rng + ?Sized,
    {
        let p = self.params;
        let (d, states) = (p.dim(), self.states);
        LenError::check("chain", d, chain.dim())?;
        LenError::check("target", d, target.dim())?;
        LenError::check("states", states, chain.states())?;
        LenError::check("states", states, target.states())?;
        let valid = self.cache_valid && *self.cached_state == *chain.x;
        let cached_state = &mut *self.cached_state;
        let d6 = scratch_len(d);
        let found = self.scratch.len();
        let (vectors, weights) = self.scratch.split_at_mut_checked(d6).ok_or(LenError {
            buffer: "scratch",
            expected: d6,
            found,
        })?;
        let [wx, ax, wy, ay, u, t] = split(vectors, d)?;
        if !valid {
            p.w().mul_state(d, chain.x, wx);
            mat_state(p.factor(), d, p.upper, chain.x, ax);
            crate::slices::copy(cached_state, chain.x);
            self.cache_valid = true;
        }
        // 1. u = A x + ξ and t = Aᵀu.
        fill_normal(rng, u);
        for (ui, &a) in u.iter_mut().zip(ax.iter()) {
            *ui += a;
        }
        mat_t_vec(p.factor(), d, p.upper, u, t);
        // 2. y coordinatewise from the softmax, two 32-bit draws per word.
        let (mut changed, mut jump) = (0usize, 0u64);
        let mut log_q_forward = 0.0f64;
        let mut word = 0u64;
        for (i, ((((&xi, &gi), (&wxi, &ti)), &di), yi)) in chain
            .x
            .iter()
            .zip(chain.grad.iter())
            .zip(wx.iter().zip(t.iter()))
            .zip(p.diag())
            .zip(chain.x_proposal.iter_mut())
            .enumerate()
        {
            if i % 2 == 0 {
                word = rng.next_u64();
            }
            let bits = if i % 2 == 0 {
                word as u32
            } else {
                (word >> 32) as u32
            };
            let (c, kappa) = coefficients(&p, xi, gi, wxi, ti, di);
            let law = Law::new(c, kappa, weights);
            let threshold = f64::from(bits) * TWO_POW_NEG_32 * law.z;
            // Branch-free pick of the first value whose running sum exceeds the threshold.
            let (mut cum, mut found, mut value) = (0.0f64, false, xi);
            for (v, &w) in weights.iter().enumerate() {
                cum += w;
                let take = (cum > threshold) & !found;
                value = if take { v as u16 } else { value };
                found |= take;
            }
            // Nothing drawn (NaN weights): keep the coordinate; the NaN log Q rejects.
            *yi = value;
            log_q_forward += if found {
                law.log_prob(value, states)
            } else {
                f64::NAN
            };
            jump += u64::from(value.abs_diff(xi));
            if let Some(slot) = chain.changed.get_mut(changed) {
                *slot = i as u32;
            }
            changed += usize::from(value != xi);
        }
        let log_u = libm::log(open_unit_f64(rng));
        let mut report = StepReport {
            accepted: true,
            proposed_flips: changed as u32,
            log_accept_ratio: 0.0,
            rejection: None,
            evaluations: 0,
        };
        if changed == 0 {
            // y = x: every term of the ratio cancels.
            return Ok((report, 0));
        }
        let changed_idx = chain.changed.get(..changed).unwrap_or(&[]);
        let mv = LabelMove {
            from: chain.x,
            to: chain.x_proposal,
            changed: changed_idx,
            from_log_density: chain.log_density,
            from_grad: chain.grad,
        };
        report.evaluations = 1;
        let log_density = match target.log_density_and_grad_after(&mv, chain.grad_proposal) {
            Ok(v) => v,
            Err(e) if e.is_recoverable() => {
                return Ok((rejected(report, Rejection::TargetError), 0));
            }
            Err(e) => return Err(StepError::Target(e)),
        };
        if !log_density.is_finite() || !all_finite(chain.grad_proposal) {
            return Ok((rejected(report, Rejection::NonFinite), 0));
        }
        // 3. W y and A y from the cache (O(k d)) or afresh when most coordinates changed.
        if 2 * changed < d {
            let pair = (&*chain.x, &*chain.x_proposal);
            p.w().update(d, wx, pair, changed_idx, wy);
            update_columns(p.factor(), d, ax, pair, changed_idx, ay);
        } else {
            p.w().mul_state(d, chain.x_proposal, wy);
            mat_state(p.factor(), d, p.upper, chain.x_proposal, ay);
        }
        let log_q_reverse = log_q(
            &p,
            chain.x_proposal,
            chain.grad_proposal,
            wy,
            t,
            chain.x,
            weights,
        );
        report.log_accept_ratio = (log_density - chain.log_density)
            + gauss_ratio(u, ax, ay)
            + (log_q_reverse - log_q_forward);
        // NaN compares false: rejected.
        report.accepted = log_u < report.log_accept_ratio;
        if report.accepted {
            chain.adopt_proposal(log_density);
            target.commit();
            crate::slices::copy(wx, wy);
            crate::slices::copy(ax, ay);
            crate::slices::copy(cached_state, chain.x);
            Ok((report, jump))
        } else {
            Ok((report, 0))
        }
    }
}

impl OrdinalKernel for OrdinalAbSecondOrder<'_, '_> {
    fn step<T, R>(
        &mut self,
        target: &mut T,
        chain: &mut OrdinalChain<'_>,
        rng: &mut R,
    ) -> Result<StepReport, StepError<T::Error>>
    where
        T: OrdinalTarget + ?Sized,
        R: Rng + ?Sized,
    {
        OrdinalAbSecondOrder::step(self, target, chain, rng)
    }
}
