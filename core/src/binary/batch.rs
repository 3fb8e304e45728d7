//! Many chains of one dense binary target stepped together, so that the target can evaluate
//! all their proposals with matrix–matrix products.
//!
//! * [`BatchTarget`]: a target that evaluates `U` and `∇U` at the states of `n` chains at once;
//! * [`ChainBatch`]: the states of `n` chains with their cached `U` and `∇U`, chain by chain in
//!   caller-owned buffers ([`BatchBuffers`]);
//! * [`BatchLangevin`] ([`BatchDula`], [`BatchDmala`]): one step of every chain of a batch.
//!
//! Each chain draws from its own stream exactly the words its own DULA/DMALA step would (the
//! proposal's, then one for the Metropolis uniform), so with a target whose batched values are
//! those of its single-chain evaluation, a batched step moves every chain exactly as the
//! single-chain kernel does.

use super::FlipProposal;
use crate::chain::all_finite;
use crate::error::{InitError, LenError, StepError};
use crate::kernel::{Rejection, StepReport};
use crate::math::{FlipMath, Libm};
use crate::random::open_unit_f64;
use crate::target::TargetError;
use rand_core::Rng;

/// The proposals of a batch: chain `c` moves from `from[c·d..(c+1)·d]` to the same rows of
/// `to`, flipping the `counts[c]` coordinates listed at the front of `flipped[c·d..]`.
#[derive(Clone, Copy, Debug)]
pub struct BatchMoves<'a> {
    /// The chains' current states, chain by chain.
    pub from: &'a [u8],
    /// The proposals, chain by chain.
    pub to: &'a [u8],
    /// Each chain's flipped coordinates at the front of its row of `d` entries.
    pub flipped: &'a [u32],
    /// How many coordinates each chain flips (0: the chain does not move).
    pub counts: &'a [u32],
}

/// A binary target that evaluates `U` and `∇U` for `n` chains at once (`n` =
/// [`chains`](Self::chains)), keeping per-chain caches of the current states as
/// [`BinaryTarget`](crate::BinaryTarget) does for one.
///
/// Buffers are chain by chain: `x` and `grad` hold `n·d` entries (chain `c` at `c·d..`),
/// `log_density` holds `n`.
pub trait BatchTarget {
    /// A failed evaluation.
    type Error: TargetError;

    /// The dimension `d`.
    fn dim(&self) -> usize;

    /// The number of chains `n` it evaluates (its caches' size).
    fn chains(&self) -> usize;

    /// `U` and `∇U` at every chain's state `x`, which become the chains' current states.
    ///
    /// # Errors
    ///
    /// The target's error; the caches are then unspecified until the next successful call.
    fn log_density_and_grad_all(
        &mut self,
        x: &[u8],
        grad: &mut [f32],
        log_density: &mut [f64],
    ) -> Result<(), Self::Error>;

    /// `U` and `∇U` at every chain's proposal, from the current states' caches. Entries of
    /// chains that flip nothing are unspecified. The current states are kept until
    /// [`commit`](Self::commit).
    ///
    /// # Errors
    ///
    /// The target's error; the current states are unchanged then.
    fn log_density_and_grad_after_all(
        &mut self,
        moves: &BatchMoves<'_>,
        grad: &mut [f32],
        log_density: &mut [f64],
    ) -> Result<(), Self::Error>;

    /// Makes the last evaluated proposal of chain `c` its current state (out of range: no-op).
    fn commit(&mut self, c: usize);
}

/// The buffers of a [`ChainBatch`] of `n` chains of dimension `d`: `x`, `grad`,
/// `x_proposal`, `grad_proposal` and `flipped` hold `n·d` entries, the others `n`.
#[derive(Debug)]
pub struct BatchBuffers<'a> {
    /// The initial states, chain by chain.
    pub x: &'a mut [u8],
    /// `∇U` at the states.
    pub grad: &'a mut [f32],
    /// `U` at the states.
    pub log_density: &'a mut [f64],
    /// The proposals.
    pub x_proposal: &'a mut [u8],
    /// `∇U` at the proposals.
    pub grad_proposal: &'a mut [f32],
    /// `U` at the proposals.
    pub log_density_proposal: &'a mut [f64],
    /// Each chain's flipped coordinates.
    pub flipped: &'a mut [u32],
    /// Each chain's number of flips.
    pub counts: &'a mut [u32],
    /// Each chain's forward `log q`.
    pub log_q: &'a mut [f64],
    /// Each chain's log Metropolis uniform.
    pub log_u: &'a mut [f64],
}

/// `n` binary chains of one target, with their cached `U` and `∇U`.
#[derive(Debug)]
pub struct ChainBatch<'a> {
    dim: usize,
    chains: usize,
    b: BatchBuffers<'a>,
}

impl<'a> ChainBatch<'a> {
    /// Starts `target.chains()` chains at `buffers.x`, evaluating the target there.
    ///
    /// # Errors
    ///
    /// [`InitError::EmptyDimension`], [`InitError::Len`] for a buffer that does not fit,
    /// [`InitError::StateOutOfRange`] (the index is into the whole of `x`),
    /// [`InitError::NonFinite`] if some chain's `U` or `∇U` is not finite,
    /// [`InitError::Target`] for the target's error.
    pub fn new<T: BatchTarget + ?Sized>(
        buffers: BatchBuffers<'a>,
        target: &mut T,
    ) -> Result<Self, InitError<T::Error>> {
        let (d, n) = (target.dim(), target.chains());
        if d == 0 {
            return Err(InitError::EmptyDimension);
        }
        let nd = n.saturating_mul(d);
        let b = buffers;
        LenError::check("x", nd, b.x.len())?;
        LenError::check("grad", nd, b.grad.len())?;
        LenError::check("x_proposal", nd, b.x_proposal.len())?;
        LenError::check("grad_proposal", nd, b.grad_proposal.len())?;
        LenError::check("flipped", nd, b.flipped.len())?;
        for (name, len) in [
            ("log_density", b.log_density.len()),
            ("log_density_proposal", b.log_density_proposal.len()),
            ("counts", b.counts.len()),
            ("log_q", b.log_q.len()),
            ("log_u", b.log_u.len()),
        ] {
            LenError::check(name, n, len)?;
        }
        if let Some((index, &v)) = b.x.iter().enumerate().find(|(_, v)| **v > 1) {
            return Err(InitError::StateOutOfRange {
                index,
                value: u16::from(v),
            });
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

    /// Chain `c`'s state (empty if out of range).
    pub fn state(&self, c: usize) -> &[u8] {
        row(self.b.x, c, self.dim)
    }

    /// `∇U` at chain `c`'s state (empty if out of range).
    pub fn grad(&self, c: usize) -> &[f32] {
        row(self.b.grad, c, self.dim)
    }

    /// `U` at chain `c`'s state (NaN if out of range).
    pub fn log_density(&self, c: usize) -> f64 {
        self.b.log_density.get(c).copied().unwrap_or(f64::NAN)
    }
}

/// Row `c` of length `d` of `v`, or empty.
fn row<T>(v: &[T], c: usize, d: usize) -> &[T] {
    v.get(c * d..(c + 1) * d).unwrap_or(&[])
}

/// DULA (`ADJUSTED = false`) or DMALA (`ADJUSTED = true`) with the balanced flip proposal,
/// stepping every chain of a [`ChainBatch`] at once.
#[derive(Clone, Copy, Debug)]
pub struct BatchLangevin<'p, M: FlipMath = Libm, const ADJUSTED: bool = true> {
    proposal: FlipProposal<'p, M>,
}

/// Batched DULA: see [`BatchLangevin`].
pub type BatchDula<'p, M = Libm> = BatchLangevin<'p, M, false>;

/// Batched DMALA: see [`BatchLangevin`].
pub type BatchDmala<'p, M = Libm> = BatchLangevin<'p, M, true>;

impl<'p, M: FlipMath, const ADJUSTED: bool> BatchLangevin<'p, M, ADJUSTED> {
    /// The kernel with this proposal.
    pub fn new(proposal: FlipProposal<'p, M>) -> Self {
        Self { proposal }
    }

    /// The proposal.
    pub fn proposal(&self) -> &FlipProposal<'p, M> {
        &self.proposal
    }

    /// Advances every chain of `batch` by one step: chain `c` draws its proposal and its
    /// Metropolis uniform from `rngs[c]` (consuming what a single-chain step does), the target
    /// evaluates all proposals at once, and each chain is tested and moved on its own.
    /// `reports[c]` says what chain `c`'s step did.
    ///
    /// # Errors
    ///
    /// [`StepError::Len`] if the target's dimension or chain count, the preconditioner,
    /// `rngs` or `reports` does not fit the batch; [`StepError::Target`] for any target error
    /// (no chain moves then).
    #[inline(always)]
    pub fn step<T, R>(
        &self,
        target: &mut T,
        batch: &mut ChainBatch<'_>,
        rngs: &mut [R],
        reports: &mut [StepReport],
    ) -> Result<(), StepError<T::Error>>
    where
        T: BatchTarget + ?Sized,
        R: Rng,
    {
        let (d, n) = (batch.dim, batch.chains);
        LenError::check("target", d, target.dim())?;
        LenError::check("target chains", n, target.chains())?;
        LenError::check("rngs", n, rngs.len())?;
        LenError::check("reports", n, reports.len())?;
        self.proposal.check_dim(d)?;
        let b = &mut batch.b;
        let rows =
            b.x.chunks_exact(d)
                .zip(b.grad.chunks_exact(d))
                .zip(b.x_proposal.chunks_exact_mut(d))
                .zip(b.flipped.chunks_exact_mut(d));
        let per_chain = rows
            .zip(rngs.iter_mut())
            .zip(b.counts.iter_mut())
            .zip(b.log_q.iter_mut())
            .zip(b.log_u.iter_mut());
        for (((((((x, g), y), f), rng), count), log_q), log_u) in per_chain {
            let (k, lq) = if ADJUSTED {
                self.proposal.propose(x, g, y, f, rng)?
            } else {
                (self.proposal.propose_flips(x, g, y, f, rng)?, 0.0)
            };
            *count = k as u32;
            *log_q = lq;
            *log_u = libm::log(open_unit_f64(rng));
        }
        if b.counts.iter().any(|&k| k > 0) {
            let moves = BatchMoves {
                from: b.x,
                to: b.x_proposal,
                flipped: b.flipped,
                counts: b.counts,
            };
            target
                .log_density_and_grad_after_all(&moves, b.grad_proposal, b.log_density_proposal)
                .map_err(StepError::Target)?;
        }
        for (c, report) in reports.iter_mut().enumerate() {
            *report = self.settle(target, b, c, d)?;
        }
        Ok(())
    }

    /// Tests chain `c`'s evaluated proposal and moves it if accepted.
    #[inline(always)]
    fn settle<T: BatchTarget + ?Sized>(
        &self,
        target: &mut T,
        b: &mut BatchBuffers<'_>,
        c: usize,
        d: usize,
    ) -> Result<StepReport, LenError> {
        let k = b.counts.get(c).copied().unwrap_or(0) as usize;
        let mut report = StepReport {
            accepted: true,
            proposed_flips: k as u32,
            log_accept_ratio: 0.0,
            rejection: None,
            evaluations: 0,
        };
        if k == 0 {
            return Ok(report);
        }
        report.evaluations = 1;
        let range = c * d..(c + 1) * d;
        let u_new = b.log_density_proposal.get(c).copied().unwrap_or(f64::NAN);
        let g_new = b.grad_proposal.get(range.clone()).unwrap_or(&[]);
        if !u_new.is_finite() || !all_finite(g_new) {
            report.accepted = false;
            report.log_accept_ratio = f64::NEG_INFINITY;
            report.rejection = Some(Rejection::NonFinite);
            return Ok(report);
        }
        let x = b.x.get(range.clone()).unwrap_or(&[]);
        let y = b.x_proposal.get(range.clone()).unwrap_or(&[]);
        let u = b.log_density.get(c).copied().unwrap_or(f64::NAN);
        if ADJUSTED {
            let reverse = self.proposal.log_q(y, g_new, x)?;
            let forward = b.log_q.get(c).copied().unwrap_or(f64::NAN);
            let ratio = (u_new - u) + (reverse - forward);
            report.log_accept_ratio = ratio;
            report.accepted = b.log_u.get(c).is_some_and(|&lu| lu < ratio);
        }
        if report.accepted {
            if let (Some(x), Some(y)) =
                (b.x.get_mut(range.clone()), b.x_proposal.get(range.clone()))
            {
                x.copy_from_slice(y);
            }
            if let (Some(g), Some(g_new)) =
                (b.grad.get_mut(range.clone()), b.grad_proposal.get(range))
            {
                g.copy_from_slice(g_new);
            }
            if let Some(slot) = b.log_density.get_mut(c) {
                *slot = u_new;
            }
            target.commit(c);
        }
        Ok(report)
    }
}
