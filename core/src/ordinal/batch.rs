//! Many chains of one ordinal target stepped together, so that the target can evaluate all
//! their proposals at once: the ordinal sibling of [`ChainBatch`](crate::binary::ChainBatch).
//!
//! * [`OrdinalBatchTarget`]: a target that evaluates `U` and `∇U` at the states of `n` chains;
//! * [`OrdinalBatch`]: the states of `n` chains with their cached `U` and `∇U`, chain by chain
//!   in caller-owned buffers ([`OrdinalBatchBuffers`]);
//! * [`OrdinalBatchLangevin`] ([`OrdinalBatchDula`], [`OrdinalBatchDmala`]): one step of every
//!   chain of a batch with the balanced [`OrdinalProposal`].
//!
//! Each chain draws from its own stream exactly the words its own DULA/DMALA step would (the
//! proposal's `⌈d/2⌉`, then one for the Metropolis uniform) and is tested with the same
//! arithmetic, so with a target whose batched values are those of its single-chain evaluation,
//! a batched step moves every chain exactly as [`Dmala`](super::Dmala) or
//! [`Dula`](super::Dula) does.

use super::OrdinalProposal;
use crate::chain::all_finite;
use crate::error::{InitError, LenError, StepError};
use crate::kernel::{Rejection, StepReport};
use crate::random::open_unit_f64;
use crate::target::TargetError;
use rand_core::Rng;

/// The proposals of a batch: chain `c` moves from `from[c·d..(c+1)·d]` to the same rows of
/// `to`, changing the `counts[c]` coordinates listed (ascending) at the front of
/// `changed[c·d..]`.
#[derive(Clone, Copy, Debug)]
pub struct OrdinalBatchMoves<'a> {
    /// The chains' current states, chain by chain.
    pub from: &'a [u16],
    /// The proposals, chain by chain.
    pub to: &'a [u16],
    /// Each chain's changed coordinates at the front of its row of `d` entries.
    pub changed: &'a [u32],
    /// How many coordinates each chain changes (0: the chain does not move).
    pub counts: &'a [u32],
}

/// An ordinal target that evaluates `U` and `∇U` for `n` chains at once (`n` =
/// [`chains`](Self::chains)), keeping per-chain caches of the current states as
/// [`OrdinalTarget`](super::OrdinalTarget) does for one.
///
/// Buffers are chain by chain: `x` and `grad` hold `n·d` entries (chain `c` at `c·d..`),
/// `log_density` holds `n`. Every state entry is below [`states`](Self::states).
pub trait OrdinalBatchTarget {
    /// A failed evaluation.
    type Error: TargetError;

    /// The dimension `d`.
    fn dim(&self) -> usize;

    /// The number of values per coordinate `S` (2 to 65 535).
    fn states(&self) -> usize;

    /// The number of chains `n` it evaluates (its caches' size).
    fn chains(&self) -> usize;

    /// `U` and `∇U` at every chain's state `x`, which become the chains' current states.
    ///
    /// # Errors
    ///
    /// The target's error; the caches are then unspecified until the next successful call.
    fn log_density_and_grad_all(
        &mut self,
        x: &[u16],
        grad: &mut [f32],
        log_density: &mut [f64],
    ) -> Result<(), Self::Error>;

    /// `U` and `∇U` at every chain's proposal, from the current states' caches. Entries of
    /// chains that change nothing are unspecified. The current states are kept until
    /// [`commit`](Self::commit).
    ///
    /// # Errors
    ///
    /// The target's error; the current states are unchanged then.
    fn log_density_and_grad_after_all(
        &mut self,
        moves: &OrdinalBatchMoves<'_>,
        grad: &mut [f32],
        log_density: &mut [f64],
    ) -> Result<(), Self::Error>;

    /// Makes the last evaluated proposal of chain `c` its current state (out of range: no-op).
    fn commit(&mut self, c: usize);
}

/// The buffers of an [`OrdinalBatch`] of `n` chains of dimension `d`: `x`, `grad`,
/// `x_proposal`, `grad_proposal` and `changed` hold `n·d` entries, the others `n`.
#[derive(Debug)]
pub struct OrdinalBatchBuffers<'a> {
    /// The initial states, chain by chain.
    pub x: &'a mut [u16],
    /// `∇U` at the states.
    pub grad: &'a mut [f32],
    /// `U` at the states.
    pub log_density: &'a mut [f64],
    /// The proposals.
    pub x_proposal: &'a mut [u16],
    /// `∇U` at the proposals.
    pub grad_proposal: &'a mut [f32],
    /// `U` at the proposals.
    pub log_density_proposal: &'a mut [f64],
    /// Each chain's changed coordinates.
    pub changed: &'a mut [u32],
    /// Each chain's number of changed coordinates.
    pub counts: &'a mut [u32],
    /// Each chain's forward `log q`.
    pub log_q: &'a mut [f64],
    /// Each chain's log Metropolis uniform.
    pub log_u: &'a mut [f64],
    /// Each chain's proposed L1 distance `Σ|x'_i − x_i|`, then the distance it moved.
    pub jumps: &'a mut [u64],
}

/// `n` ordinal chains of one target, with their cached `U` and `∇U`.
#[derive(Debug)]
pub struct OrdinalBatch<'a> {
    dim: usize,
    chains: usize,
    states: usize,
    b: OrdinalBatchBuffers<'a>,
}

impl<'a> OrdinalBatch<'a> {
    /// Starts `target.chains()` chains at `buffers.x`, evaluating the target there.
    ///
    /// # Errors
    ///
    /// [`InitError::EmptyDimension`], [`InitError::States`] for a target with fewer than 2 or
    /// more than 65 535 values, [`InitError::Len`] for a buffer that does not fit,
    /// [`InitError::StateOutOfRange`] (the index is into the whole of `x`),
    /// [`InitError::NonFinite`] if some chain's `U` or `∇U` is not finite,
    /// [`InitError::Target`] for the target's error.
    pub fn new<T: OrdinalBatchTarget + ?Sized>(
        buffers: OrdinalBatchBuffers<'a>,
        target: &mut T,
    ) -> Result<Self, InitError<T::Error>> {
        let (d, n, s) = (target.dim(), target.chains(), target.states());
        if d == 0 {
            return Err(InitError::EmptyDimension);
        }
        if !(2..=usize::from(u16::MAX)).contains(&s) {
            return Err(InitError::States(s));
        }
        let nd = n.saturating_mul(d);
        let b = buffers;
        LenError::check("x", nd, b.x.len())?;
        LenError::check("grad", nd, b.grad.len())?;
        LenError::check("x_proposal", nd, b.x_proposal.len())?;
        LenError::check("grad_proposal", nd, b.grad_proposal.len())?;
        LenError::check("changed", nd, b.changed.len())?;
        for (name, len) in [
            ("log_density", b.log_density.len()),
            ("log_density_proposal", b.log_density_proposal.len()),
            ("counts", b.counts.len()),
            ("log_q", b.log_q.len()),
            ("log_u", b.log_u.len()),
            ("jumps", b.jumps.len()),
        ] {
            LenError::check(name, n, len)?;
        }
        if let Some((index, &value)) = b.x.iter().enumerate().find(|(_, v)| usize::from(**v) >= s) {
            return Err(InitError::StateOutOfRange { index, value });
        }
        target
            .log_density_and_grad_all(b.x, b.grad, b.log_density)
            .map_err(InitError::Target)?;
        if !b.log_density.iter().all(|u| u.is_finite()) || !all_finite(b.grad) {
            return Err(InitError::NonFinite);
        }
        Ok(Self {
            dim: d,
            chains: n,
            states: s,
            b,
        })
    }

    /// The number of chains.
    pub fn chains(&self) -> usize {
        self.chains
    }

    /// The dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The number of values per coordinate.
    pub fn states(&self) -> usize {
        self.states
    }

    /// Chain `c`'s state (empty if out of range).
    pub fn state(&self, c: usize) -> &[u16] {
        self.b
            .x
            .get(c * self.dim..(c + 1) * self.dim)
            .unwrap_or(&[])
    }

    /// `∇U` at chain `c`'s state (empty if out of range).
    pub fn grad(&self, c: usize) -> &[f32] {
        self.b
            .grad
            .get(c * self.dim..(c + 1) * self.dim)
            .unwrap_or(&[])
    }

    /// `U` at chain `c`'s state (NaN if out of range).
    pub fn log_density(&self, c: usize) -> f64 {
        self.b.log_density.get(c).copied().unwrap_or(f64::NAN)
    }

    /// The L1 distance chain `c` moved in the last step (0 if it stayed or is out of range).
    pub fn jump(&self, c: usize) -> u64 {
        self.b.jumps.get(c).copied().unwrap_or(0)
    }
}

/// DULA (`ADJUSTED = false`) or DMALA (`ADJUSTED = true`) with the balanced ordinal proposal,
/// stepping every chain of an [`OrdinalBatch`] at once.
#[derive(Clone, Copy, Debug)]
pub struct OrdinalBatchLangevin<'p, const ADJUSTED: bool = true> {
    proposal: OrdinalProposal<'p>,
}

/// Batched ordinal DULA: see [`OrdinalBatchLangevin`].
pub type OrdinalBatchDula<'p> = OrdinalBatchLangevin<'p, false>;

/// Batched ordinal DMALA: see [`OrdinalBatchLangevin`].
pub type OrdinalBatchDmala<'p> = OrdinalBatchLangevin<'p, true>;

impl<'p, const ADJUSTED: bool> OrdinalBatchLangevin<'p, ADJUSTED> {
    /// The kernel with this proposal.
    pub fn new(proposal: OrdinalProposal<'p>) -> Self {
        Self { proposal }
    }

    /// The proposal.
    pub fn proposal(&self) -> &OrdinalProposal<'p> {
        &self.proposal
    }

    /// Advances every chain of `batch` by one step: chain `c` draws its proposal and its
    /// Metropolis uniform from `rngs[c]` (consuming what a single-chain step does), the target
    /// evaluates all proposals at once, and each chain is tested and moved on its own.
    /// `reports[c]` says what chain `c`'s step did, [`OrdinalBatch::jump`] how far it moved.
    ///
    /// # Errors
    ///
    /// [`StepError::Len`] if the target's dimension, values or chain count, the
    /// preconditioner, `rngs` or `reports` does not fit the batch; [`StepError::Target`] for
    /// any target error (no chain moves then).
    #[inline(always)]
    pub fn step<T, R>(
        &self,
        target: &mut T,
        batch: &mut OrdinalBatch<'_>,
        rngs: &mut [R],
        reports: &mut [StepReport],
    ) -> Result<(), StepError<T::Error>>
    where
        T: OrdinalBatchTarget + ?Sized,
        R: Rng,
    {
        let (d, n, s) = (batch.dim, batch.chains, batch.states);
        LenError::check("target", d, target.dim())?;
        LenError::check("states", s, target.states())?;
        LenError::check("target chains", n, target.chains())?;
        LenError::check("rngs", n, rngs.len())?;
        LenError::check("reports", n, reports.len())?;
        let b = &mut batch.b;
        let rows =
            b.x.chunks_exact(d)
                .zip(b.grad.chunks_exact(d))
                .zip(b.x_proposal.chunks_exact_mut(d))
                .zip(b.changed.chunks_exact_mut(d));
        let per_chain = rows
            .zip(rngs.iter_mut())
            .zip(b.counts.iter_mut())
            .zip(b.log_q.iter_mut().zip(b.log_u.iter_mut()))
            .zip(b.jumps.iter_mut());
        for (((((((x, g), y), ch), rng), count), (log_q, log_u)), jump) in per_chain {
            let drawn = self.proposal.propose(x, g, s, y, ch, rng)?;
            *count = drawn.changed as u32;
            *log_q = drawn.log_q;
            *jump = drawn.jump;
            *log_u = libm::log(open_unit_f64(rng));
        }
        if b.counts.iter().any(|&k| k > 0) {
            let moves = OrdinalBatchMoves {
                from: b.x,
                to: b.x_proposal,
                changed: b.changed,
                counts: b.counts,
            };
            target
                .log_density_and_grad_after_all(&moves, b.grad_proposal, b.log_density_proposal)
                .map_err(StepError::Target)?;
        }
        for (c, report) in reports.iter_mut().enumerate() {
            *report = self.settle(target, b, c, d, s)?;
        }
        Ok(())
    }

    /// Tests chain `c`'s evaluated proposal and moves it if accepted, with the arithmetic of
    /// the single-chain kernel.
    #[inline(always)]
    fn settle<T: OrdinalBatchTarget + ?Sized>(
        &self,
        target: &mut T,
        b: &mut OrdinalBatchBuffers<'_>,
        c: usize,
        d: usize,
        s: usize,
    ) -> Result<StepReport, LenError> {
        let k = b.counts.get(c).copied().unwrap_or(0);
        let mut report = StepReport::proposed(true, k as usize, 0);
        if k == 0 {
            return Ok(report);
        }
        report.evaluations = 1;
        let range = c * d..(c + 1) * d;
        let u_new = b.log_density_proposal.get(c).copied().unwrap_or(f64::NAN);
        let g_new = b.grad_proposal.get(range.clone()).unwrap_or(&[]);
        if !u_new.is_finite() || !all_finite(g_new) {
            report = report.rejected(Rejection::NonFinite);
        } else if ADJUSTED {
            let x = b.x.get(range.clone()).unwrap_or(&[]);
            let y = b.x_proposal.get(range.clone()).unwrap_or(&[]);
            let u = b.log_density.get(c).copied().unwrap_or(f64::NAN);
            let reverse = self.proposal.log_q(y, g_new, s, x)?;
            let forward = b.log_q.get(c).copied().unwrap_or(f64::NAN);
            let ratio = (u_new - u) + (reverse - forward);
            report.log_accept_ratio = ratio;
            report.accepted = b.log_u.get(c).is_some_and(|&lu| lu < ratio);
        }
        if report.accepted {
            if let (Some(x), Some(y)) =
                (b.x.get_mut(range.clone()), b.x_proposal.get(range.clone()))
            {
                crate::slices::copy(x, y);
            }
            if let (Some(g), Some(g_new)) =
                (b.grad.get_mut(range.clone()), b.grad_proposal.get(range))
            {
                crate::slices::copy(g, g_new);
            }
            if let Some(slot) = b.log_density.get_mut(c) {
                *slot = u_new;
            }
            target.commit(c);
        } else if let Some(jump) = b.jumps.get_mut(c) {
            *jump = 0;
        }
        Ok(report)
    }
}
