//! Many chains of one target stepped together, so that the target can evaluate all their
//! proposals at once (with matrix–matrix products, for dense models).
//!
//! * [`BatchTarget`]: a target that evaluates `U` and `∇U` at the states of `n` chains at once;
//! * [`ChainBatch`]: the states of `n` chains with their cached `U` and `∇U`, chain by chain in
//!   caller-owned buffers ([`BatchBuffers`]);
//! * [`BatchLangevin`]: DULA (`ADJUSTED = false`) or DMALA (`ADJUSTED = true`) with a
//!   [`RowProposal`], one step of every chain of a batch.
//!
//! Every type is generic over the [`Domain`] and defaults to [`Binary`]:
//! [`binary`](crate::binary) re-exports them under these names, [`ordinal`](crate::ordinal)
//! under `OrdinalBatch…` aliases. The balanced flip and ordinal proposals are the
//! [`RowProposal`]s.
//!
//! Each chain draws from its own stream exactly the words its own DULA/DMALA step would (the
//! proposal's, then one for the Metropolis uniform) and is tested with the same arithmetic, so
//! with a target whose batched values are those of its single-chain evaluation, a batched step
//! moves every chain exactly as the single-chain kernel does.

use crate::chain::all_finite;
use crate::domain::{Binary, Domain};
use crate::error::{InitError, LenError, ParamError, StepError};
use crate::kernel::{Drawn, Rejection, StepReport};
use crate::random::open_unit_f64;
use crate::target::TargetError;
use rand_core::Rng;

/// The proposals of a batch: chain `c` moves from `from[c·d..(c+1)·d]` to the same rows of
/// `to`, changing the `counts[c]` coordinates listed (ascending) at the front of
/// `changed[c·d..]`.
#[derive(Clone, Copy, Debug)]
pub struct BatchMoves<'a, D: Domain = Binary> {
    /// The chains' current states, chain by chain.
    pub from: &'a [D::Value],
    /// The proposals, chain by chain.
    pub to: &'a [D::Value],
    /// Each chain's changed (for binary states: flipped) coordinates at the front of its row
    /// of `d` entries.
    pub changed: &'a [u32],
    /// How many coordinates each chain changes (0: the chain does not move).
    pub counts: &'a [u32],
}

/// A target in domain `D` that evaluates `U` and `∇U` for `n` chains at once (`n` =
/// [`chains`](Self::chains)), keeping per-chain caches of the current states as a
/// single-chain target does for one.
///
/// Buffers are chain by chain: `x` holds `n·d` entries (chain `c` at `c·d..`), `grad` `n·g`
/// (`g` the domain's gradient length, `d` for binary and ordinal states), `log_density` `n`.
/// Every state entry is below [`states`](Self::states).
pub trait BatchTarget<D: Domain = Binary> {
    /// A failed evaluation.
    type Error: TargetError;

    /// The dimension `d`.
    fn dim(&self) -> usize;

    /// The number of values per coordinate `S` (2 to 65 535). By default the domain's fixed
    /// number (2 for binary states), else 0, which [`ChainBatch::new`] refuses: a target over
    /// labels gives its own.
    fn states(&self) -> usize {
        D::FIXED_STATES.unwrap_or(0)
    }

    /// The number of chains `n` it evaluates (its caches' size).
    fn chains(&self) -> usize;

    /// `U` and `∇U` at every chain's state `x`, which become the chains' current states.
    ///
    /// # Errors
    ///
    /// The target's error; the caches are then unspecified until the next successful call.
    fn log_density_and_grad_all(
        &mut self,
        x: &[D::Value],
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
        moves: &BatchMoves<'_, D>,
        grad: &mut [f32],
        log_density: &mut [f64],
    ) -> Result<(), Self::Error>;

    /// Makes the last evaluated proposal of chain `c` its current state (out of range: no-op).
    fn commit(&mut self, c: usize);
}

/// The shape of a batched target, `chains` chains of dimension `dim`, and the length checks
/// every batched target makes with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchShape {
    /// The number of chains `n`.
    pub chains: usize,
    /// The dimension `d` (entries per chain of the states and gradients).
    pub dim: usize,
}

impl BatchShape {
    /// `chains` chains of dimension `dim`, for a target's constructor.
    ///
    /// # Errors
    ///
    /// [`ParamError::OutOfRange`] (named `chains`) for no chains.
    pub fn new(chains: usize, dim: usize) -> Result<Self, ParamError> {
        if chains == 0 {
            return Err(ParamError::OutOfRange {
                name: "chains",
                value: 0.0,
            });
        }
        Ok(Self { chains, dim })
    }

    /// `n·d`, the length of the states and gradients of all chains (saturating).
    pub fn len(&self) -> usize {
        self.chains.saturating_mul(self.dim)
    }

    /// Whether there are no entries (no chains or dimension 0).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Checks the buffers of an evaluation at every chain's state: `x` and `grad` of `n·d`
    /// entries, `log_density` of `n`.
    ///
    /// # Errors
    ///
    /// [`LenError`] naming the first buffer that does not fit.
    pub fn check(&self, x: usize, grad: usize, log_density: usize) -> Result<(), LenError> {
        LenError::check("x", self.len(), x)?;
        LenError::check("grad", self.len(), grad)?;
        LenError::check("log_density", self.chains, log_density)
    }

    /// Checks the buffers of an evaluation after `moves`: as [`check`](Self::check) with
    /// `moves.to` for `x`, then `moves.from` and the changed indices as long as `moves.to`,
    /// and `moves.counts` of `n`.
    ///
    /// # Errors
    ///
    /// [`LenError`] naming the first buffer that does not fit.
    pub fn check_moves<D: Domain>(
        &self,
        moves: &BatchMoves<'_, D>,
        grad: usize,
        log_density: usize,
    ) -> Result<(), LenError> {
        let to = moves.to.len();
        self.check(to, grad, log_density)?;
        LenError::check("from", to, moves.from.len())?;
        LenError::check(D::CHANGED_BUFFER, to, moves.changed.len())?;
        LenError::check("counts", self.chains, moves.counts.len())
    }
}

/// Splits a target's cache into two halves of `half` entries (the current states' values,
/// then the proposals').
///
/// # Errors
///
/// [`LenError`] (named `cache`) unless `cache` holds `2·half` entries.
pub fn split_cache<T>(cache: &mut [T], half: usize) -> Result<(&mut [T], &mut [T]), LenError> {
    LenError::check("cache", half.saturating_mul(2), cache.len())?;
    Ok(cache.split_at_mut(half))
}

/// Copies row `c` (of `width` entries) of `proposal` into the same row of `current`: a target's
/// [`commit`](BatchTarget::commit) of its per-chain cache (out of range: no-op).
pub fn adopt_row<T: Copy>(current: &mut [T], proposal: &[T], c: usize, width: usize) {
    let rows = c.saturating_mul(width)..c.saturating_add(1).saturating_mul(width);
    if let (Some(cur), Some(new)) = (current.get_mut(rows.clone()), proposal.get(rows)) {
        crate::slices::copy(cur, new);
    }
}

/// The buffers of a [`ChainBatch`] of `n` chains of dimension `d`: `x`, `x_proposal` and
/// `changed` hold `n·d` entries, `grad` and `grad_proposal` `n·g` (`g` the domain's gradient
/// length, `d` for binary and ordinal states), the others `n`.
#[derive(Debug)]
pub struct BatchBuffers<'a, D: Domain = Binary> {
    /// The initial states, chain by chain.
    pub x: &'a mut [D::Value],
    /// `∇U` at the states.
    pub grad: &'a mut [f32],
    /// `U` at the states.
    pub log_density: &'a mut [f64],
    /// The proposals.
    pub x_proposal: &'a mut [D::Value],
    /// `∇U` at the proposals.
    pub grad_proposal: &'a mut [f32],
    /// `U` at the proposals.
    pub log_density_proposal: &'a mut [f64],
    /// Each chain's changed (for binary states: flipped) coordinates.
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

/// `n` chains of one target in domain `D`, with their cached `U` and `∇U`.
#[derive(Debug)]
pub struct ChainBatch<'a, D: Domain = Binary> {
    dim: usize,
    grad_len: usize,
    chains: usize,
    states: usize,
    b: BatchBuffers<'a, D>,
}

impl<'a, D: Domain> ChainBatch<'a, D> {
    /// Starts `target.chains()` chains at `buffers.x`, evaluating the target there.
    ///
    /// # Errors
    ///
    /// [`InitError::EmptyDimension`], [`InitError::States`] for a target with fewer than 2 or
    /// more than 65 535 values, [`InitError::Len`] for a buffer that does not fit (the changed
    /// indices are named `flipped` for binary states),
    /// [`InitError::StateOutOfRange`] (the index is into the whole of `x`),
    /// [`InitError::NonFinite`] if some chain's `U` or `∇U` is not finite,
    /// [`InitError::Target`] for the target's error.
    pub fn new<T: BatchTarget<D> + ?Sized>(
        buffers: BatchBuffers<'a, D>,
        target: &mut T,
    ) -> Result<Self, InitError<T::Error>> {
        let (d, n, s) = (target.dim(), target.chains(), target.states());
        if d == 0 {
            return Err(InitError::EmptyDimension);
        }
        if !(2..=usize::from(u16::MAX)).contains(&s) {
            return Err(InitError::States(s));
        }
        let g = D::grad_len(d, s).ok_or(InitError::States(s))?;
        let (nd, ng) = (n.saturating_mul(d), n.saturating_mul(g));
        let b = buffers;
        LenError::check("x", nd, b.x.len())?;
        LenError::check("grad", ng, b.grad.len())?;
        LenError::check("x_proposal", nd, b.x_proposal.len())?;
        LenError::check("grad_proposal", ng, b.grad_proposal.len())?;
        LenError::check(D::CHANGED_BUFFER, nd, b.changed.len())?;
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
        crate::chain::check_states::<D, _>(b.x, s)?;
        target
            .log_density_and_grad_all(b.x, b.grad, b.log_density)
            .map_err(InitError::Target)?;
        if !b.log_density.iter().all(|u| u.is_finite()) || !all_finite(b.grad) {
            return Err(InitError::NonFinite);
        }
        Ok(Self {
            dim: d,
            grad_len: g,
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

    /// The number of values per coordinate (2 for binary states).
    pub fn states(&self) -> usize {
        self.states
    }

    /// Chain `c`'s state (empty if out of range).
    pub fn state(&self, c: usize) -> &[D::Value] {
        row(self.b.x, c, self.dim)
    }

    /// `∇U` at chain `c`'s state (empty if out of range).
    pub fn grad(&self, c: usize) -> &[f32] {
        row(self.b.grad, c, self.grad_len)
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

/// Row `c` of length `d` of `v`, or empty.
fn row<T>(v: &[T], c: usize, d: usize) -> &[T] {
    v.get(c * d..(c + 1) * d).unwrap_or(&[])
}

/// A proposal that draws from, and scores, one chain's rows of a batch: what
/// [`BatchLangevin`] needs of it. Implemented by the balanced flip and ordinal proposals.
pub trait RowProposal<D: Domain> {
    /// Checks the proposal against the dimension `d` (a preconditioner's length).
    ///
    /// # Errors
    ///
    /// [`LenError`] for a preconditioner of another length.
    fn check_rows(&self, d: usize) -> Result<(), LenError>;

    /// Draws a move from `x` (gradient `grad`, `states` values per coordinate) into `x_new`,
    /// with the changed indices at the front of `changed`, consuming the words the
    /// single-chain draw does. `log q` is evaluated only if `with_log_q` (the move drawn is the
    /// same either way).
    ///
    /// # Errors
    ///
    /// [`LenError`] for rows of different lengths.
    #[allow(
        clippy::too_many_arguments,
        reason = "a chain's rows, its value count, its stream and the flag of the single-chain draw"
    )]
    fn draw_row<R: Rng + ?Sized>(
        &self,
        x: &[D::Value],
        grad: &[f32],
        states: usize,
        x_new: &mut [D::Value],
        changed: &mut [u32],
        rng: &mut R,
        with_log_q: bool,
    ) -> Result<Drawn, LenError>;

    /// `log q(to | from)` with gradient `grad_from` at `from`.
    ///
    /// # Errors
    ///
    /// [`LenError`] for rows of different lengths.
    fn log_q_row(
        &self,
        from: &[D::Value],
        grad_from: &[f32],
        states: usize,
        to: &[D::Value],
    ) -> Result<f64, LenError>;
}

/// DULA (`ADJUSTED = false`) or DMALA (`ADJUSTED = true`) with the proposal `P`, stepping
/// every chain of a [`ChainBatch`] at once.
#[derive(Clone, Copy, Debug)]
pub struct BatchLangevin<P, const ADJUSTED: bool = true> {
    proposal: P,
}

impl<P, const ADJUSTED: bool> BatchLangevin<P, ADJUSTED> {
    /// The kernel with this proposal.
    pub fn new(proposal: P) -> Self {
        Self { proposal }
    }

    /// The proposal.
    pub fn proposal(&self) -> &P {
        &self.proposal
    }

    /// Advances every chain of `batch` by one step: chain `c` draws its proposal and its
    /// Metropolis uniform from `rngs[c]` (consuming what a single-chain step does), the target
    /// evaluates all proposals at once, and each chain is tested and moved on its own.
    /// `reports[c]` says what chain `c`'s step did, [`ChainBatch::jump`] how far it moved.
    ///
    /// # Errors
    ///
    /// [`StepError::Len`] if the target's dimension, values or chain count, the
    /// preconditioner, `rngs` or `reports` does not fit the batch; [`StepError::Target`] for
    /// any target error (no chain moves then).
    #[inline(always)]
    pub fn step<D, T, R>(
        &self,
        target: &mut T,
        batch: &mut ChainBatch<'_, D>,
        rngs: &mut [R],
        reports: &mut [StepReport],
    ) -> Result<(), StepError<T::Error>>
    where
        D: Domain,
        P: RowProposal<D>,
        T: BatchTarget<D> + ?Sized,
        R: Rng,
    {
        let (d, g, n, s) = (batch.dim, batch.grad_len, batch.chains, batch.states);
        LenError::check("target", d, target.dim())?;
        LenError::check("states", s, target.states())?;
        LenError::check("target chains", n, target.chains())?;
        LenError::check("rngs", n, rngs.len())?;
        LenError::check("reports", n, reports.len())?;
        self.proposal.check_rows(d)?;
        let b = &mut batch.b;
        let rows =
            b.x.chunks_exact(d)
                .zip(b.grad.chunks_exact(g))
                .zip(b.x_proposal.chunks_exact_mut(d))
                .zip(b.changed.chunks_exact_mut(d));
        let per_chain = rows
            .zip(rngs.iter_mut())
            .zip(b.counts.iter_mut())
            .zip(b.log_q.iter_mut().zip(b.log_u.iter_mut()))
            .zip(b.jumps.iter_mut());
        for (((((((x, gr), y), ch), rng), count), (log_q, log_u)), jump) in per_chain {
            let drawn = self.proposal.draw_row(x, gr, s, y, ch, rng, ADJUSTED)?;
            *count = drawn.changed as u32;
            *log_q = drawn.log_q;
            *jump = drawn.jump;
            *log_u = libm::log(open_unit_f64(rng));
        }
        if b.counts.iter().any(|&k| k > 0) {
            let moves = BatchMoves {
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
            *report = self.settle(target, b, c, (d, g, s))?;
        }
        Ok(())
    }

    /// Tests chain `c`'s evaluated proposal and moves it if accepted, with the arithmetic of
    /// the single-chain kernel (`(d, g, s)`: dimension, gradient length, values).
    #[inline(always)]
    fn settle<D, T>(
        &self,
        target: &mut T,
        b: &mut BatchBuffers<'_, D>,
        c: usize,
        (d, g, s): (usize, usize, usize),
    ) -> Result<StepReport, LenError>
    where
        D: Domain,
        P: RowProposal<D>,
        T: BatchTarget<D> + ?Sized,
    {
        let k = b.counts.get(c).copied().unwrap_or(0);
        let mut report = StepReport::proposed(true, k as usize, 0);
        if k == 0 {
            return Ok(report);
        }
        report.evaluations = 1;
        let (range, grads) = (c * d..(c + 1) * d, c * g..(c + 1) * g);
        let u_new = b.log_density_proposal.get(c).copied().unwrap_or(f64::NAN);
        let g_new = b.grad_proposal.get(grads.clone()).unwrap_or(&[]);
        if !u_new.is_finite() || !all_finite(g_new) {
            report = report.rejected(Rejection::NonFinite);
        } else if ADJUSTED {
            let x = b.x.get(range.clone()).unwrap_or(&[]);
            let y = b.x_proposal.get(range.clone()).unwrap_or(&[]);
            let u = b.log_density.get(c).copied().unwrap_or(f64::NAN);
            let reverse = self.proposal.log_q_row(y, g_new, s, x)?;
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
                (b.grad.get_mut(grads.clone()), b.grad_proposal.get(grads))
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

/// Owned batch buffers for the crate's tests.
#[cfg(test)]
#[derive(Debug)]
pub(crate) struct TestVecs<D: Domain> {
    x: std::vec::Vec<D::Value>,
    grad: std::vec::Vec<f32>,
    x_proposal: std::vec::Vec<D::Value>,
    grad_proposal: std::vec::Vec<f32>,
    changed: std::vec::Vec<u32>,
    counts: std::vec::Vec<u32>,
    per_chain: [std::vec::Vec<f64>; 4],
    jumps: std::vec::Vec<u64>,
}

#[cfg(test)]
impl<D: Domain> TestVecs<D> {
    /// Buffers for the chains starting at `x`, of dimension `d` (gradients of `d` entries).
    pub(crate) fn new(x: std::vec::Vec<D::Value>, d: usize) -> Self {
        use std::vec;
        let (nd, n) = (x.len(), x.len() / d.max(1));
        Self {
            x,
            grad: vec![0.0; nd],
            x_proposal: vec![D::Value::default(); nd],
            grad_proposal: vec![0.0; nd],
            changed: vec![0; nd],
            counts: vec![0; n],
            per_chain: [vec![0.0; n], vec![0.0; n], vec![0.0; n], vec![0.0; n]],
            jumps: vec![0; n],
        }
    }

    /// Lends the buffers to [`ChainBatch::new`].
    pub(crate) fn buffers(&mut self) -> BatchBuffers<'_, D> {
        let [log_density, log_density_proposal, log_q, log_u] = &mut self.per_chain;
        BatchBuffers {
            x: &mut self.x,
            grad: &mut self.grad,
            log_density,
            x_proposal: &mut self.x_proposal,
            grad_proposal: &mut self.grad_proposal,
            log_density_proposal,
            changed: &mut self.changed,
            counts: &mut self.counts,
            log_q,
            log_u,
            jumps: &mut self.jumps,
        }
    }
}
