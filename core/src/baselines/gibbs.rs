//! Single-site Gibbs sampling (Gibbs-1) for binary, ordinal and categorical states.

use super::flip_delta::FlipDelta;
use crate::categorical::CategoricalConditional;
use crate::chain::Chain;
use crate::domain::{Binary, Categorical, LabelDomain, Ordinal};
use crate::error::{LenError, StepError};
use crate::kernel::{Kernel, Rejection, StepReport, evaluate_proposal, propose_single, settle};
use crate::ordinal::OrdinalConditional;
use crate::random::{Pick, index, unit_f64};
use crate::target::{Conditional, Eval, TargetError};
use rand_core::Rng;

/// A typed front end of [`Gibbs::update_labels`] or [`Gibbs::sweep_labels`] for one label
/// domain and its conditional trait.
macro_rules! label_front_end {
    ($(#[$doc:meta])* $name:ident -> $out:ty = $inner:ident::<$domain:ident, $conditional:ident>) => {
        $(#[$doc])*
        pub fn $name<T, R>(
            &mut self,
            target: &mut T,
            x: &mut [u16],
            scratch: &mut [f64],
            rng: &mut R,
        ) -> Result<$out, StepError<T::Error>>
        where
            T: $conditional + ?Sized,
            R: Rng + ?Sized,
        {
            self.$inner::<$domain, _, _>(target, x, scratch, rng)
        }
    };
}

/// The order in which a single-site sampler visits coordinates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scan {
    /// A uniformly random coordinate each update (one `next_u64`).
    Random,
    /// Coordinates `0, 1, …, d−1, 0, …` in turn.
    Systematic,
}

/// Gibbs-1: each update resamples one coordinate from its exact conditional given the others.
///
/// Every update leaves `π` invariant (and is reversible with a random scan), whatever the
/// domain. There are two ways to run it:
///
/// * **on a raw state**, with a model that prices one coordinate cheaply
///   ([`FlipDelta`] for binary, [`OrdinalConditional`] / [`CategoricalConditional`] for labels):
///   [`update_binary`](Self::update_binary), [`sweep_binary`](Self::sweep_binary),
///   [`update_labels`](Self::update_ordinal) … This is the baseline to time: on a lattice
///   Ising model an update costs a handful of operations.
/// * **as a [`Kernel`]** on a [`BinaryChain`](crate::chain::BinaryChain), [`OrdinalChain`](crate::chain::OrdinalChain) or
///   [`CategoricalChain`](crate::chain::CategoricalChain): one step is one single-site update, priced through the target's
///   ordinary evaluations (one per binary update, `S` per label update) so that it works for
///   every target and keeps the chain's cached `U` and `∇U` exact.
///
/// Both consume the random stream the same way: with a random scan one word for the site and
/// one for the uniform; with a systematic scan one word.
///
/// # Examples
///
/// ```
/// use langevin_core::baselines::{Gibbs, Scan};
/// use langevin_core::models::{ConstDims, IsingLattice};
/// use langevin_core::BinaryTarget;
/// use rand_core::SeedableRng;
///
/// let mut model = IsingLattice::<ConstDims<4, 4>>::new(0.3, 0.0, true).unwrap();
/// let mut x = [0u8; 16];
/// model.log_density_and_grad(&x, &mut [0.0; 16]).unwrap();
/// let mut gibbs = Gibbs::new(Scan::Systematic);
/// let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
/// for _ in 0..10 {
///     gibbs.sweep_binary(&mut model, &mut x, &mut rng).unwrap();
/// }
/// assert!(x.iter().all(|&v| v <= 1));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Gibbs {
    scan: Scan,
    next: usize,
}

impl Gibbs {
    /// A sampler with this scan; a systematic scan starts at coordinate 0.
    pub fn new(scan: Scan) -> Self {
        Self { scan, next: 0 }
    }

    /// The scan.
    pub fn scan(&self) -> Scan {
        self.scan
    }

    /// The coordinate of the next update, consuming a word for a random scan.
    #[inline]
    fn site<R: Rng + ?Sized>(&mut self, d: usize, rng: &mut R) -> usize {
        match self.scan {
            Scan::Random => index(rng, d),
            Scan::Systematic => {
                let i = if self.next < d { self.next } else { 0 };
                self.next = i + 1;
                i
            }
        }
    }

    /// The site and the uniform of one update of a raw state of `d` coordinates.
    #[inline]
    fn raw_site<R: Rng + ?Sized>(
        &mut self,
        d: usize,
        rng: &mut R,
    ) -> Result<(usize, f64), LenError> {
        if d == 0 {
            return Err(LenError {
                buffer: "x",
                expected: 1,
                found: 0,
            });
        }
        let i = self.site(d, rng);
        Ok((i, unit_f64(rng)))
    }

    /// One single-site update of the raw binary state `x`, which must be the target's current
    /// state (see [`FlipDelta`]). Flips bit `i` with probability `sigmoid(ΔU)`; returns whether
    /// it did. A recoverable target error or a NaN or infinite `ΔU` keeps the bit.
    ///
    /// # Errors
    ///
    /// [`StepError::Len`] if `x` does not have the target's dimension (or it is 0);
    /// [`StepError::Target`] for an unrecoverable error (`x` unchanged).
    #[cfg_attr(target_arch = "x86_64", inline(always))]
    pub fn update_binary<T, R>(
        &mut self,
        target: &mut T,
        x: &mut [u8],
        rng: &mut R,
    ) -> Result<bool, StepError<T::Error>>
    where
        T: FlipDelta + ?Sized,
        R: Rng + ?Sized,
    {
        let d = target.dim();
        LenError::check("x", d, x.len())?;
        let (i, u) = self.raw_site(d, rng)?;
        let delta = match target.log_density_delta(x, i) {
            Ok(v) => v,
            Err(e) if e.is_recoverable() => return Ok(false),
            Err(e) => return Err(StepError::Target(e)),
        };
        // A NaN or infinite ΔU keeps the bit (+∞ would move to a state of infinite density).
        let flip = delta.is_finite() && u < crate::math::sigmoid(delta);
        if flip {
            if let Some(v) = x.get_mut(i) {
                *v ^= 1;
            }
            target.commit_flip(x, i);
        }
        Ok(flip)
    }

    /// `d` single-site updates (one sweep); returns the number of flips.
    ///
    /// # Errors
    ///
    /// As for [`update_binary`](Self::update_binary); updates before the error stand.
    pub fn sweep_binary<T, R>(
        &mut self,
        target: &mut T,
        x: &mut [u8],
        rng: &mut R,
    ) -> Result<u32, StepError<T::Error>>
    where
        T: FlipDelta + ?Sized,
        R: Rng + ?Sized,
    {
        let mut flips = 0;
        for _ in 0..x.len() {
            flips += u32::from(self.update_binary(target, x, rng)?);
        }
        Ok(flips)
    }

    label_front_end! {
        /// One single-site update of an ordinal state: [`update_labels`](Self::update_labels).
        ///
        /// # Errors
        ///
        /// As for [`update_labels`](Self::update_labels).
        update_ordinal -> bool = update_labels::<Ordinal, OrdinalConditional>
    }

    label_front_end! {
        /// `d` single-site updates of an ordinal state: [`sweep_labels`](Self::sweep_labels).
        ///
        /// # Errors
        ///
        /// As for [`sweep_labels`](Self::sweep_labels).
        sweep_ordinal -> u32 = sweep_labels::<Ordinal, OrdinalConditional>
    }

    label_front_end! {
        /// One single-site update of a categorical state: [`update_labels`](Self::update_labels).
        ///
        /// # Errors
        ///
        /// As for [`update_labels`](Self::update_labels).
        update_categorical -> bool = update_labels::<Categorical, CategoricalConditional>
    }

    label_front_end! {
        /// `d` single-site updates of a categorical state: [`sweep_labels`](Self::sweep_labels).
        ///
        /// # Errors
        ///
        /// As for [`sweep_labels`](Self::sweep_labels).
        sweep_categorical -> u32 = sweep_labels::<Categorical, CategoricalConditional>
    }

    /// One single-site update of the raw label state `x` (the target's current state) in
    /// either domain, with `scratch` of length `S` for the conditional. Returns whether the
    /// coordinate changed. A recoverable target error keeps it; non-finite conditional values
    /// are never drawn (all of them non-finite keeps it).
    ///
    /// # Errors
    ///
    /// [`StepError::Len`] for mismatched lengths; [`StepError::Target`] for an unrecoverable
    /// error (`x` unchanged).
    pub fn update_labels<D, T, R>(
        &mut self,
        target: &mut T,
        x: &mut [u16],
        scratch: &mut [f64],
        rng: &mut R,
    ) -> Result<bool, StepError<T::Error>>
    where
        D: LabelDomain,
        T: Conditional<D> + ?Sized,
        R: Rng + ?Sized,
    {
        let (d, s) = (target.dim(), target.states());
        LenError::check("x", d, x.len())?;
        LenError::check("scratch", s, scratch.len())?;
        let (i, u) = self.raw_site(d, rng)?;
        match target.conditional(x, i, scratch) {
            Ok(()) => {}
            Err(e) if e.is_recoverable() => return Ok(false),
            Err(e) => return Err(StepError::Target(e)),
        }
        let old = x.get(i).copied().unwrap_or(0);
        let k = draw_softmax(scratch, u, usize::from(old));
        let new = k as u16;
        if new != old {
            if let Some(v) = x.get_mut(i) {
                *v = new;
            }
            target.commit_change(x, i, old);
        }
        Ok(new != old)
    }

    /// `d` single-site updates of a raw label state in either domain; returns how many changed
    /// a coordinate.
    ///
    /// # Errors
    ///
    /// As for [`update_labels`](Self::update_labels); updates before the error stand.
    pub fn sweep_labels<D, T, R>(
        &mut self,
        target: &mut T,
        x: &mut [u16],
        scratch: &mut [f64],
        rng: &mut R,
    ) -> Result<u32, StepError<T::Error>>
    where
        D: LabelDomain,
        T: Conditional<D> + ?Sized,
        R: Rng + ?Sized,
    {
        let mut moves = 0;
        for _ in 0..x.len() {
            moves += u32::from(self.update_labels::<D, _, _>(target, x, scratch, rng)?);
        }
        Ok(moves)
    }
}

/// `U` at the chain's state with coordinate `i` set to `k`, evaluated into the proposal
/// buffers (which hold the current state elsewhere); `None` if it is not usable (non-finite or
/// a recoverable error).
fn evaluate_at<D, T>(
    target: &mut T,
    chain: &mut Chain<'_, D>,
    i: usize,
    k: u16,
    report: &mut StepReport,
) -> Result<Option<f64>, StepError<T::Error>>
where
    D: LabelDomain,
    T: Eval<D> + ?Sized,
{
    if let Some(v) = chain.x_proposal.get_mut(i) {
        *v = k;
    }
    // An unusable alternative is not a rejection of the step: only count the evaluation.
    let mut probe = StepReport::proposed(false, 1, 0);
    let u = evaluate_proposal(target, chain, &mut probe)?;
    report.evaluations += probe.evaluations;
    Ok(u)
}

/// Draws an index from the softmax of the log-weights in `w` (overwritten with the weights)
/// with the uniform `u`; falls back to `keep` if nothing can be drawn (all weights NaN or
/// `−∞`). Branch-free selects: the time does not depend on the draw.
pub(crate) fn draw_softmax(w: &mut [f64], u: f64, keep: usize) -> usize {
    let m = w
        .iter()
        .fold(f64::NEG_INFINITY, |m, &v| if v > m { v } else { m });
    let mut total = 0.0f64;
    for v in w.iter_mut() {
        *v = libm::exp(*v - m);
        total += if v.is_nan() { 0.0 } else { *v };
    }
    let mut pick = Pick::new(u * total, keep);
    for (k, &v) in w.iter().enumerate() {
        pick.offer(k, if v.is_nan() { 0.0 } else { v });
    }
    pick.result().0
}

impl Kernel<Binary> for Gibbs {
    /// One single-site update through one evaluation of the target at the flipped state: the
    /// flip is taken with probability `sigmoid(U' − U)`, reported as `log_accept_ratio = U' − U`.
    #[cfg_attr(target_arch = "x86_64", inline(always))]
    fn step<T, R>(
        &mut self,
        target: &mut T,
        chain: &mut Chain<'_, Binary>,
        rng: &mut R,
    ) -> Result<StepReport, StepError<T::Error>>
    where
        T: Eval<Binary> + ?Sized,
        R: Rng + ?Sized,
    {
        let (d, _) = chain.check_target(target)?;
        let i = self.site(d, rng);
        let u = unit_f64(rng);
        let flipped = chain.x.get(i).map_or(1, |&v| v ^ 1);
        propose_single(chain, i, flipped);
        let mut report = StepReport::proposed(false, 1, 0);
        let Some(u_new) = evaluate_proposal(target, chain, &mut report)? else {
            return Ok(report);
        };
        report.log_accept_ratio = u_new - chain.log_density;
        report.accepted = u < crate::math::sigmoid(report.log_accept_ratio);
        settle(&mut report, false, 0.0, 0.0, u_new, target, chain);
        Ok(report)
    }
}

impl<D: LabelDomain> Kernel<D> for Gibbs {
    /// One single-site update through evaluations: `S − 1` evaluations price the
    /// alternatives, one more refreshes the gradient of the chosen value.
    #[cfg_attr(target_arch = "x86_64", inline(always))]
    fn step<T, R>(
        &mut self,
        target: &mut T,
        chain: &mut Chain<'_, D>,
        rng: &mut R,
    ) -> Result<StepReport, StepError<T::Error>>
    where
        T: Eval<D> + ?Sized,
        R: Rng + ?Sized,
    {
        let (d, s) = chain.check_target(target)?;
        let i = self.site(d, rng);
        let u = unit_f64(rng);
        let old = chain.x.get(i).copied().unwrap_or(0);
        propose_single(chain, i, old);
        let mut report = StepReport::proposed(false, 1, 0);
        for k in 0..s {
            let value = if k == usize::from(old) {
                0.0
            } else {
                let u_k = evaluate_at(target, chain, i, k as u16, &mut report)?;
                u_k.map_or(f64::NEG_INFINITY, |u| u - chain.log_density)
            };
            if let Some(o) = chain.scratch.get_mut(k) {
                *o = value;
            }
        }
        let k = draw_softmax(chain.scratch, u, usize::from(old));
        if k == usize::from(old) {
            report.proposed_flips = 0;
            report.accepted = true;
            return Ok(report);
        }
        match evaluate_at(target, chain, i, k as u16, &mut report)? {
            Some(u_k) => {
                report.accepted = true;
                report.log_accept_ratio = u_k - chain.log_density;
                chain.adopt_proposal(u_k);
                target.commit();
            }
            None => report.rejection = Some(Rejection::NonFinite),
        }
        Ok(report)
    }
}
