//! The balanced proposal over categorical states.

use crate::error::{LenError, ParamError};
use crate::kernel::Drawn;
use crate::ordinal::draw_each;
use crate::random::Pick;
use rand_core::Rng;

/// The balanced proposal family on categorical states (Zhang, Liu & Liu 2022; Sun et al. 2023): each coordinate is drawn
/// independently from the softmax over labels `k` of the logits
///
/// `b · (g_{i,k} − g_{i,x_i}) − [k ≠ x_i] / a_i`, with `a_i = a` or `a · p_i²`
///
/// (the squared distance between two one-hot vectors is 2). `b = ½` is the discrete Langevin
/// proposal.
///
/// # Evaluation
///
/// Per coordinate: the largest logit is found first, then the weights `w_k = exp(ℓ_k − max)`
/// (at most 1, never overflowing) are written to a scratch row of `S` values and summed in
/// `f64`; the draw inverts the running sum and `log q = ln(w_k / Z)` uses the very numbers the
/// draw used, so a Metropolis test on it is exact for the proposal drawn. [`log_q`](Self::log_q)
/// repeats the same arithmetic in the same order.
///
/// # Cost
///
/// `O(d·S)` exponentials per draw and per `log q`; no allocation (the scratch row belongs to
/// the chain).
#[derive(Clone, Copy, Debug)]
pub struct CategoricalProposal<'p> {
    step: f64,
    balance: f64,
    inv_step: f64,
    precond: Option<&'p [f32]>,
}

impl CategoricalProposal<'static> {
    /// A proposal with step `a` and balance `b`.
    ///
    /// # Errors
    ///
    /// [`ParamError::Step`] unless `a` is finite and `> 0`; [`ParamError::Balance`] unless
    /// `0 < b ≤ 1`.
    ///
    /// # Examples
    ///
    /// ```
    /// use langevin_core::categorical::CategoricalProposal;
    /// assert!(CategoricalProposal::new(1.0, 0.5).is_ok());
    /// assert!(CategoricalProposal::new(-1.0, 0.5).is_err());
    /// ```
    pub fn new(step: f64, balance: f64) -> Result<Self, ParamError> {
        ParamError::check_step(step)?;
        ParamError::check_balance(balance)?;
        Ok(Self {
            step,
            balance,
            inv_step: 1.0 / step,
            precond: None,
        })
    }
}

impl CategoricalProposal<'static> {
    /// The proposal in the scale form of the acceptance-targeting sampler: logits
    /// `b · (g_{i,k} − g_{i,x_i}) + [k ≠ x_i] · ln τ`. For `τ < 1` this is step `a = −1/ln τ`;
    /// `τ ≥ 1` has no step but is a valid proposal all the same ([`step`](Self::step) is then
    /// `∞`, and no preconditioner can be added).
    ///
    /// # Errors
    ///
    /// [`ParamError::OutOfRange`] unless `ln τ` is finite; [`ParamError::Balance`] unless
    /// `0 < b ≤ 1`.
    pub fn with_log_scale(log_tau: f64, balance: f64) -> Result<Self, ParamError> {
        if !log_tau.is_finite() {
            return Err(ParamError::OutOfRange {
                name: "log scale",
                value: log_tau,
            });
        }
        ParamError::check_balance(balance)?;
        Ok(Self {
            step: if log_tau < 0.0 {
                -1.0 / log_tau
            } else {
                f64::INFINITY
            },
            balance,
            inv_step: -log_tau,
            precond: None,
        })
    }
}

impl<'p> CategoricalProposal<'p> {
    /// Adds a diagonal preconditioner: coordinate `i` uses step `a · p_i²`.
    ///
    /// # Errors
    ///
    /// [`ParamError::Preconditioner`] if some `p_i` is not finite and positive or makes
    /// `a · p_i²` overflow or vanish.
    pub fn preconditioned<'q>(self, p: &'q [f32]) -> Result<CategoricalProposal<'q>, ParamError> {
        ParamError::check_preconditioner(self.step, p, |_| true)?;
        Ok(CategoricalProposal {
            step: self.step,
            balance: self.balance,
            inv_step: self.inv_step,
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

    /// The preconditioner, if any.
    pub fn preconditioner(&self) -> Option<&'p [f32]> {
        self.precond
    }

    fn check(&self, d: usize, states: usize, grad: usize) -> Result<(), LenError> {
        LenError::check("grad", d.saturating_mul(states), grad)?;
        match self.precond {
            Some(p) => LenError::check("preconditioner", d, p.len()),
            None => Ok(()),
        }
    }

    /// `1/a_i`.
    #[inline(always)]
    fn penalty(&self, i: usize) -> f64 {
        match self.precond {
            None => self.inv_step,
            Some(p) => {
                let pi = f64::from(p.get(i).copied().unwrap_or(1.0));
                self.inv_step / (pi * pi)
            }
        }
    }

    /// The largest logit of a row (at least 0, the logit of staying).
    #[inline(always)]
    fn max_logit(&self, row: &[f32], current: usize, penalty: f64) -> f64 {
        let gc = f64::from(row.get(current).copied().unwrap_or(0.0));
        let mut m = 0.0f64;
        for (k, &gk) in row.iter().enumerate() {
            let l = self.logit(gk, gc, k != current, penalty);
            m = if l > m { l } else { m };
        }
        m
    }

    #[inline(always)]
    fn logit(&self, gk: f32, gc: f64, moved: bool, penalty: f64) -> f64 {
        self.balance * (f64::from(gk) - gc) - if moved { penalty } else { 0.0 }
    }

    /// The weight `exp(ℓ − max)` of one label, in `f32` arithmetic widened to `f64`.
    #[inline(always)]
    fn weight(&self, gk: f32, gc: f64, moved: bool, penalty: f64, m: f64) -> f64 {
        f64::from(libm::expf((self.logit(gk, gc, moved, penalty) - m) as f32))
    }

    /// Draws a move from `x` (one-hot gradient `grad` of length `d·S`): writes the proposal into
    /// `x_new` and the changed indices into the front of `changed`, using `scratch` (length `S`)
    /// for one row of weights.
    ///
    /// Consumes exactly `⌈d / 2⌉` outputs of `rng.next_u64()` (32 bits per coordinate).
    ///
    /// # Errors
    ///
    /// [`LenError`] unless the lengths fit (`grad`: `d·S`, `scratch`: `S`, others `d`).
    #[allow(
        clippy::too_many_arguments,
        reason = "the chain's buffers, passed apart"
    )]
    pub fn propose<R: Rng + ?Sized>(
        &self,
        x: &[u16],
        grad: &[f32],
        states: usize,
        x_new: &mut [u16],
        changed: &mut [u32],
        scratch: &mut [f64],
        rng: &mut R,
    ) -> Result<Drawn, LenError> {
        let d = x.len();
        self.check(d, states, grad.len())?;
        LenError::check("proposal", d, x_new.len())?;
        LenError::check("changed", d, changed.len())?;
        LenError::check("scratch", states, scratch.len())?;
        let mut rows = grad.chunks_exact(states.max(1));
        let draw = |i: usize, xi: u16, u: f64| {
            let row = rows.next().unwrap_or(&[]);
            let current = usize::from(xi);
            let penalty = self.penalty(i);
            let gc = f64::from(row.get(current).copied().unwrap_or(0.0));
            let m = self.max_logit(row, current, penalty);
            let mut total = 0.0f64;
            for (k, (&gk, w)) in row.iter().zip(scratch.iter_mut()).enumerate() {
                *w = self.weight(gk, gc, k != current, penalty, m);
                total += *w;
            }
            let mut pick = Pick::new(u * total, current);
            for (k, &w) in scratch.iter().enumerate() {
                pick.offer(k, w);
            }
            let (label, weight, _) = pick.result();
            (label as u16, weight, total)
        };
        let hamming = |a: u16, b: u16| u16::from(a != b);
        Ok(draw_each(x, x_new, changed, rng, hamming, draw))
    }

    /// `log q(to | from)` with one-hot gradient `grad_from` at `from`.
    ///
    /// # Errors
    ///
    /// [`LenError`] unless the lengths fit.
    pub fn log_q(
        &self,
        from: &[u16],
        grad_from: &[f32],
        states: usize,
        to: &[u16],
    ) -> Result<f64, LenError> {
        let d = from.len();
        self.check(d, states, grad_from.len())?;
        LenError::check("to", d, to.len())?;
        let mut total_log_q = 0.0f64;
        let rows = grad_from.chunks_exact(states.max(1));
        for (i, ((&xi, &yi), row)) in from.iter().zip(to).zip(rows).enumerate() {
            let current = usize::from(xi);
            let penalty = self.penalty(i);
            let gc = f64::from(row.get(current).copied().unwrap_or(0.0));
            let m = self.max_logit(row, current, penalty);
            let (mut total, mut weight) = (0.0f64, 0.0f64);
            for (k, &gk) in row.iter().enumerate() {
                let w = self.weight(gk, gc, k != current, penalty, m);
                total += w;
                weight = if k == usize::from(yi) { w } else { weight };
            }
            total_log_q += libm::log(weight / total);
        }
        Ok(total_log_q)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;
    use std::vec;
    use std::vec::Vec;

    #[test]
    fn draw_and_log_q_agree_and_match_softmax() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(4);
        let s = 5usize;
        for d in [1usize, 3, 8, 9, 17] {
            let x: Vec<u16> = (0..d).map(|i| (i * 3 % s) as u16).collect();
            let g: Vec<f32> = (0..d * s).map(|i| (i as f32 * 0.71).sin() * 2.0).collect();
            let prop = CategoricalProposal::new(0.8, 0.7).unwrap();
            let mut y = vec![0u16; d];
            let mut ch = vec![0u32; d];
            let mut scratch = vec![0.0f64; s];
            let drawn = prop
                .propose(&x, &g, s, &mut y, &mut ch, &mut scratch, &mut rng)
                .unwrap();
            assert_eq!(drawn.log_q, prop.log_q(&x, &g, s, &y).unwrap());
            let diff: Vec<u32> = (0..d as u32)
                .filter(|&i| x[i as usize] != y[i as usize])
                .collect();
            assert_eq!(&ch[..drawn.changed], &diff[..]);
            // Against a direct softmax in f64.
            let mut want = 0.0f64;
            for i in 0..d {
                let row = &g[i * s..(i + 1) * s];
                let c = x[i] as usize;
                let logits: Vec<f64> = (0..s)
                    .map(|k| {
                        0.7 * (f64::from(row[k]) - f64::from(row[c]))
                            - if k != c { 1.0 / 0.8 } else { 0.0 }
                    })
                    .collect();
                let m = logits.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                let z: f64 = logits.iter().map(|l| (l - m).exp()).sum();
                want += logits[y[i] as usize] - m - z.ln();
            }
            assert!(
                (drawn.log_q - want).abs() < 1e-5 * (1.0 + want.abs()),
                "{} vs {want}",
                drawn.log_q
            );
        }
    }
}
