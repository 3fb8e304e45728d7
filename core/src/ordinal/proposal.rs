//! The balanced proposal over ordinal states `{0, …, S−1}^d`.

use crate::binary::LANES;
use crate::error::{LenError, ParamError};
use crate::kernel::Drawn;
use crate::random::Pick;
use rand_core::Rng;

/// `2^-32` as an `f64` (exact).
const TWO_POW_NEG_32: f64 = 1.0 / 4_294_967_296.0;

/// The balanced proposal family on ordinal states (Zhang, Liu & Liu 2022; Sun et al. 2023): each coordinate is drawn
/// independently from the softmax over values `k` of the logits
///
/// `b · g_i · (k − x_i) − (k − x_i)² / (2 a_i)`, with `a_i = a` or `a · p_i²`,
///
/// optionally restricted to the window `|k − x_i| ≤ w`. `b = ½` is the discrete Langevin
/// proposal; other balances give the any-scale balanced family.
///
/// # Evaluation
///
/// The logits are a concave quadratic in `k`, so the weights relative to the largest one are
/// built by a multiplicative recurrence outward from the best value (two `exp` per coordinate,
/// then one multiply per value, all in `f64`): every weight is at most 1 and no softmax can
/// overflow. Drawing and [`log_q`](Self::log_q) walk the values in the same order with the same
/// arithmetic, so the probability a value is drawn with and the `log q` a Metropolis test uses
/// are one and the same number (`ln(w_k / Z)`), and the test is exact for the proposal drawn.
///
/// The window keeps the proposal exact for Metropolis tests too: a move of at most `w` per
/// coordinate can always be undone by a move of at most `w`.
///
/// # Cost
///
/// `O(d·S)` per draw or `log q` (`O(d·(2w+1))` with a window), no allocation.
#[derive(Clone, Copy, Debug)]
pub struct OrdinalProposal<'p> {
    step: f64,
    balance: f64,
    half_inv_step: f64,
    decay: f64,
    window: Option<u16>,
    precond: Option<&'p [f32]>,
}

impl OrdinalProposal<'static> {
    /// A proposal with step `a` and balance `b` over the full range of values.
    ///
    /// # Errors
    ///
    /// [`ParamError::Step`] unless `a` is finite and `> 0`; [`ParamError::Balance`] unless
    /// `0 < b ≤ 1`.
    ///
    /// # Examples
    ///
    /// ```
    /// use langevin_core::ordinal::OrdinalProposal;
    /// assert!(OrdinalProposal::new(2.0, 0.5).is_ok());
    /// assert!(OrdinalProposal::new(f64::NAN, 0.5).is_err());
    /// assert!(OrdinalProposal::new(2.0, 0.0).is_err());
    /// ```
    pub fn new(step: f64, balance: f64) -> Result<Self, ParamError> {
        ParamError::check_step(step)?;
        ParamError::check_balance(balance)?;
        let half_inv_step = 0.5 / step;
        Ok(Self {
            step,
            balance,
            half_inv_step,
            decay: libm::exp(-2.0 * half_inv_step),
            window: None,
            precond: None,
        })
    }
}

impl<'p> OrdinalProposal<'p> {
    /// Restricts every coordinate to values within distance `w` of its current value.
    ///
    /// # Errors
    ///
    /// [`ParamError::OutOfRange`] for `w = 0`.
    pub fn windowed(self, w: u16) -> Result<Self, ParamError> {
        if w == 0 {
            return Err(ParamError::OutOfRange {
                name: "window",
                value: 0.0,
            });
        }
        Ok(Self {
            window: Some(w),
            ..self
        })
    }

    /// Adds a diagonal preconditioner: coordinate `i` uses step `a · p_i²`.
    ///
    /// # Errors
    ///
    /// [`ParamError::Preconditioner`] if some `p_i` is not finite and positive or makes
    /// `a · p_i²` overflow or vanish.
    pub fn preconditioned<'q>(self, p: &'q [f32]) -> Result<OrdinalProposal<'q>, ParamError> {
        ParamError::check_preconditioner(self.step, p, |_| true)?;
        Ok(OrdinalProposal {
            step: self.step,
            balance: self.balance,
            half_inv_step: self.half_inv_step,
            decay: self.decay,
            window: self.window,
            precond: Some(p),
        })
    }

    /// The step `a`.
    pub fn step(&self) -> f64 {
        self.step
    }

    /// The balance `b`.
    pub fn balance(&self) -> f64 {
        self.balance
    }

    /// The window `w`, if any.
    pub fn window(&self) -> Option<u16> {
        self.window
    }

    /// The preconditioner, if any.
    pub fn preconditioner(&self) -> Option<&'p [f32]> {
        self.precond
    }

    /// Checks that the preconditioner (if any) has length `d`.
    pub(crate) fn check(&self, d: usize) -> Result<(), LenError> {
        match self.precond {
            Some(p) => LenError::check("preconditioner", d, p.len()),
            None => Ok(()),
        }
    }

    /// The law of coordinate `i` at value `x` with gradient `g` over `states` values.
    #[inline(always)]
    fn law(&self, i: usize, x: u16, g: f32, states: usize) -> Law {
        let (h, decay) = match self.precond {
            None => (self.half_inv_step, self.decay),
            Some(p) => {
                let pi = f64::from(p.get(i).copied().unwrap_or(1.0));
                let h = self.half_inv_step / (pi * pi);
                (h, libm::exp(-2.0 * h))
            }
        };
        let last = states.saturating_sub(1) as i64;
        let x = i64::from(x);
        let (lo, hi) = match self.window {
            None => (0, last),
            Some(w) => ((x - i64::from(w)).max(0), (x + i64::from(w)).min(last)),
        };
        let bg = self.balance * f64::from(g);
        // The logit −h·(δ − v)² + const peaks at v = b·g·a = bg / (2h); over the integers of the
        // window it peaks at the nearest one (NaN falls back to the lower end).
        let vertex = bg / (2.0 * h);
        let best = libm::round(vertex)
            .max((lo - x) as f64)
            .min((hi - x) as f64) as i64;
        let two_best = 2.0 * best as f64;
        let up = libm::exp(bg - h * (two_best + 1.0));
        // The first steps up and down multiply to exp(−2h) = decay: one exponential fewer,
        // unless `up` is too small to divide by.
        let down = if up > 1e-290 {
            decay / up
        } else {
            libm::exp(-bg + h * (two_best - 1.0))
        };
        Law {
            lo,
            hi,
            mode: x + best,
            up,
            down,
            decay,
        }
    }

    /// Draws a move from `x` (gradient `grad`, `states` values per coordinate): writes the
    /// proposal into `x_new` and the changed indices into the front of `changed`.
    ///
    /// Consumes exactly `⌈d / 2⌉` outputs of `rng.next_u64()` (32 bits per coordinate).
    ///
    /// # Errors
    ///
    /// [`LenError`] unless `grad`, `x_new`, `changed` (and the preconditioner) have the length
    /// of `x`.
    pub fn propose<R: Rng + ?Sized>(
        &self,
        x: &[u16],
        grad: &[f32],
        states: usize,
        x_new: &mut [u16],
        changed: &mut [u32],
        rng: &mut R,
    ) -> Result<Drawn, LenError> {
        let d = x.len();
        LenError::check("grad", d, grad.len())?;
        LenError::check("proposal", d, x_new.len())?;
        LenError::check("changed", d, changed.len())?;
        self.check(d)?;
        let draw = |i: usize, xi: u16, u: f64| {
            let gi = grad.get(i).copied().unwrap_or(0.0);
            let law = self.law(i, xi, gi, states);
            let total = law.total();
            let (value, weight) = law.pick(u * total);
            // Nothing drawn (NaN weights): keep the coordinate; the NaN log q rejects.
            let value = if weight > 0.0 {
                value.clamp(0, i64::from(u16::MAX)) as u16
            } else {
                xi
            };
            (value, weight, total)
        };
        Ok(draw_each(x, x_new, changed, rng, u16::abs_diff, draw))
    }

    /// `log q(to | from)` with gradient `grad_from` at `from`; `−∞` for a move the proposal
    /// cannot make.
    ///
    /// # Errors
    ///
    /// [`LenError`] unless all slices (and the preconditioner) have the same length.
    pub fn log_q(
        &self,
        from: &[u16],
        grad_from: &[f32],
        states: usize,
        to: &[u16],
    ) -> Result<f64, LenError> {
        let d = from.len();
        LenError::check("grad", d, grad_from.len())?;
        LenError::check("to", d, to.len())?;
        self.check(d)?;
        let mut total_log_q = 0.0f64;
        for (i, ((&xi, &gi), &yi)) in from.iter().zip(grad_from).zip(to).enumerate() {
            let law = self.law(i, xi, gi, states);
            let (weight, total) = law.weight_of(i64::from(yi));
            total_log_q += libm::log(weight / total);
        }
        Ok(total_log_q)
    }
}

/// One coordinate's proposal law: values `lo..=hi`, weights relative to the best value `mode`
/// (weight 1), and the ratios of the first step up and down from it.
#[derive(Clone, Copy, Debug)]
struct Law {
    lo: i64,
    hi: i64,
    mode: i64,
    up: f64,
    down: f64,
    decay: f64,
}

impl Law {
    /// Calls `f(value, weight)` for every value, in the fixed order `mode, mode+1, …, hi,
    /// mode−1, …, lo`.
    #[inline(always)]
    fn visit(&self, mut f: impl FnMut(i64, f64)) {
        f(self.mode, 1.0);
        let (mut w, mut r, mut v) = (1.0f64, self.up, self.mode);
        while v < self.hi {
            w *= r;
            r *= self.decay;
            v += 1;
            f(v, w);
        }
        let (mut w, mut r, mut v) = (1.0f64, self.down, self.mode);
        while v > self.lo {
            w *= r;
            r *= self.decay;
            v -= 1;
            f(v, w);
        }
    }

    /// The normaliser `Z = Σ w` (at least 1), summed in visiting order.
    #[inline(always)]
    fn total(&self) -> f64 {
        let mut z = 0.0f64;
        self.visit(|_, w| z += w);
        z
    }

    /// The first value in visiting order whose running sum exceeds `threshold`, with its
    /// weight. Branch-free selects, so the time does not depend on the draw.
    #[inline(always)]
    fn pick(&self, threshold: f64) -> (i64, f64) {
        let mut pick = Pick::new(threshold, self.mode);
        self.visit(|v, w| pick.offer(v, w));
        let (value, weight, _) = pick.result();
        (value, weight)
    }

    /// The weight of `target` (0 outside the window) and the normaliser.
    #[inline(always)]
    fn weight_of(&self, target: i64) -> (f64, f64) {
        let (mut z, mut weight) = (0.0f64, 0.0f64);
        self.visit(|v, w| {
            z += w;
            weight = if v == target { w } else { weight };
        });
        (weight, z)
    }
}

/// Draws every coordinate of a label state independently, 32 random bits each, two per word
/// (`⌈d/2⌉` words in all): `law(i, x_i, u)` turns the uniform `u = r·2^-32` of coordinate `i` into
/// its new value, that value's weight and the normaliser, so `log q` gains `ln(weight / total)`.
/// The new state goes to `x_new`, the changed indices to the front of `changed`; the jump adds
/// `distance(x_i, x'_i)` per coordinate.
#[inline(always)]
pub(crate) fn draw_each<R: Rng + ?Sized>(
    x: &[u16],
    x_new: &mut [u16],
    changed: &mut [u32],
    rng: &mut R,
    distance: fn(u16, u16) -> u16,
    mut law: impl FnMut(usize, u16, f64) -> (u16, f64, f64),
) -> Drawn {
    let mut drawn = Drawn {
        changed: 0,
        jump: 0,
        log_q: 0.0,
    };
    let mut bits = [0u32; LANES];
    for (c, (xc, nc)) in x.chunks(LANES).zip(x_new.chunks_mut(LANES)).enumerate() {
        fill_bits(rng, &mut bits, xc.len());
        for (j, ((&xi, ni), &r)) in xc.iter().zip(nc.iter_mut()).zip(&bits).enumerate() {
            let i = c * LANES + j;
            let (value, weight, total) = law(i, xi, f64::from(r) * TWO_POW_NEG_32);
            *ni = value;
            drawn.log_q += libm::log(weight / total);
            drawn.jump += u64::from(distance(xi, value));
            if let Some(slot) = changed.get_mut(drawn.changed) {
                *slot = i as u32;
            }
            drawn.changed += usize::from(value != xi);
        }
    }
    drawn
}

/// Fills the first `n` entries of `bits` with 32-bit draws, two per `next_u64`.
#[inline(always)]
pub(crate) fn fill_bits<R: Rng + ?Sized>(rng: &mut R, bits: &mut [u32; LANES], n: usize) {
    for pair in bits.chunks_exact_mut(2).take(n.div_ceil(2)) {
        let r = rng.next_u64();
        if let [lo, hi] = pair {
            *lo = r as u32;
            *hi = (r >> 32) as u32;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;
    use std::vec;
    use std::vec::Vec;

    /// Softmax of the logits by direct evaluation, in f64.
    fn reference(p: &OrdinalProposal<'_>, i: usize, x: u16, g: f32, s: usize) -> Vec<f64> {
        let a = p.step * p.precond.map_or(1.0, |q| f64::from(q[i]) * f64::from(q[i]));
        let w = p.window.map_or(s as i64, i64::from);
        let logits: Vec<f64> = (0..s as i64)
            .map(|k| {
                let delta = (k - i64::from(x)) as f64;
                if (k - i64::from(x)).abs() > w {
                    f64::NEG_INFINITY
                } else {
                    p.balance * f64::from(g) * delta - delta * delta / (2.0 * a)
                }
            })
            .collect();
        let m = logits.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let z: f64 = logits.iter().map(|l| (l - m).exp()).sum();
        logits.iter().map(|l| (l - m).exp() / z).collect()
    }

    #[test]
    fn law_matches_direct_softmax() {
        let s = 9usize;
        let pre = [0.5f32, 1.0, 2.0];
        for (a, b) in [(0.3, 0.5), (2.0, 0.7), (40.0, 1.0), (1e-3, 0.5), (1e6, 0.9)] {
            let base = OrdinalProposal::new(a, b).unwrap();
            for prop in [
                base,
                base.windowed(2).unwrap(),
                base.preconditioned(&pre).unwrap(),
            ] {
                for x in 0..s as u16 {
                    for g in [-3.0f32, -0.2, 0.0, 0.7, 5.0] {
                        let i = usize::from(x) % 3;
                        let want = reference(&prop, i, x, g, s);
                        let law = prop.law(i, x, g, s);
                        for (k, &pk) in want.iter().enumerate() {
                            let (w, z) = law.weight_of(k as i64);
                            let got = w / z;
                            assert!(
                                (got - pk).abs() <= 1e-12 + 1e-9 * pk,
                                "a={a} b={b} x={x} g={g} k={k}: {got} vs {pk}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn draw_and_log_q_agree_bit_for_bit() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let s = 21usize;
        for d in [1usize, 7, 8, 9, 33] {
            let x: Vec<u16> = (0..d).map(|i| (i * 7 % s) as u16).collect();
            let g: Vec<f32> = (0..d).map(|i| (i as f32 * 0.37).sin() * 2.0).collect();
            let prop = OrdinalProposal::new(3.0, 0.6).unwrap().windowed(5).unwrap();
            let mut y = vec![0u16; d];
            let mut ch = vec![0u32; d];
            let drawn = prop.propose(&x, &g, s, &mut y, &mut ch, &mut rng).unwrap();
            let listed: Vec<u32> = ch[..drawn.changed].to_vec();
            let diff: Vec<u32> = (0..d as u32)
                .filter(|&i| x[i as usize] != y[i as usize])
                .collect();
            assert_eq!(listed, diff);
            let jump: u64 = x
                .iter()
                .zip(&y)
                .map(|(&a, &b)| u64::from(a.abs_diff(b)))
                .sum();
            assert_eq!(drawn.jump, jump);
            assert_eq!(drawn.log_q, prop.log_q(&x, &g, s, &y).unwrap());
        }
    }

    #[test]
    fn consumes_fixed_words_and_survives_extremes() {
        let x = [0u16, 20, 10, 5, 7];
        let mut y = [0u16; 5];
        let mut ch = [0u32; 5];
        for (a, g) in [
            (1e300, 3e38f32),
            (1e-300, -3e38),
            (1.0, f32::NAN),
            (1e300, f32::INFINITY),
        ] {
            let mut r1 = Xoshiro256PlusPlus::seed_from_u64(9);
            let mut r2 = r1.clone();
            let prop = OrdinalProposal::new(a, 1.0).unwrap();
            let gs = [g; 5];
            let drawn = prop.propose(&x, &gs, 21, &mut y, &mut ch, &mut r1).unwrap();
            for _ in 0..3 {
                r2.next_u64();
            }
            assert_eq!(r1.next_u64(), r2.next_u64());
            assert!(y.iter().all(|&v| v <= 20));
            assert!(drawn.log_q.is_nan() || drawn.log_q <= 0.0);
        }
    }
}
