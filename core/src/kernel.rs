//! The kernel interface every sampler implements, once for all domains, and the unadjusted
//! (DULA) and Metropolis-adjusted (DMALA) wrappers that turn a proposal into a kernel.
//!
//! * [`Kernel<D>`]: anything that advances a [`Chain<D>`](Chain) by one step and says what it
//!   did in a [`StepReport`];
//! * [`Proposal<D>`]: a proposal that draws a move from the chain's state and gradient and has
//!   an exact `log q`; [`Balanced`] names each domain's balanced proposal;
//! * [`Dula`] and [`Dmala`]: a proposal used without correction, or followed by a
//!   Metropolis–Hastings test, in any domain.

use crate::chain::{Chain, all_finite};
use crate::domain::Domain;
use crate::error::{LenError, ParamError, StepError};
use crate::random::open_unit_f64;
use crate::target::{Eval, Move, TargetError};
use core::fmt;
use rand_core::Rng;

/// Why a step kept the chain where it was, other than losing the Metropolis test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rejection {
    /// The target returned a non-finite log-density or gradient at the proposal.
    NonFinite,
    /// The target returned a recoverable error at the proposal.
    TargetError,
}

/// What one step did. The default is the report of a step that did nothing: no proposal, no
/// evaluation, not accepted.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepReport {
    /// Whether the chain moved to the proposal (a proposal with no changes counts as accepted).
    pub accepted: bool,
    /// How many coordinates the proposal changed (flipped, for binary states).
    pub proposed_flips: u32,
    /// The log Metropolis–Hastings ratio; `0` for unadjusted kernels and empty proposals,
    /// `−∞` or NaN when the proposal was invalid.
    pub log_accept_ratio: f64,
    /// Set when the proposal was invalid rather than merely unlucky.
    pub rejection: Option<Rejection>,
    /// Target evaluations (log-density with gradient) this step spent.
    pub evaluations: u32,
}

impl StepReport {
    /// Flips that took effect: `proposed_flips` if accepted, else 0.
    pub fn accepted_flips(&self) -> u32 {
        if self.accepted {
            self.proposed_flips
        } else {
            0
        }
    }

    /// A report of a proposal changing `changed` coordinates, before any test.
    #[inline(always)]
    pub(crate) fn proposed(accepted: bool, changed: usize, evaluations: u32) -> Self {
        Self {
            accepted,
            proposed_flips: changed as u32,
            log_accept_ratio: 0.0,
            rejection: None,
            evaluations,
        }
    }

    /// The report of an invalid proposal.
    #[inline(always)]
    pub(crate) fn rejected(mut self, why: Rejection) -> Self {
        self.accepted = false;
        self.log_accept_ratio = f64::NEG_INFINITY;
        self.rejection = Some(why);
        self
    }
}

/// A Markov kernel on chains in domain `D`: anything that can advance a [`Chain<D>`](Chain) by
/// one step.
///
/// `&mut self` lets adaptive kernels (step-size tuners, cyclical schedules) keep their own
/// state; fixed kernels such as [`Dmala`] ignore it. Implementations must consume the random
/// stream in a way that does not depend on the thread a chain runs on.
pub trait Kernel<D: Domain> {
    /// Advances `chain` by one step.
    ///
    /// # Errors
    ///
    /// [`StepError`]; the chain is unchanged on error.
    fn step<T, R>(
        &mut self,
        target: &mut T,
        chain: &mut Chain<'_, D>,
        rng: &mut R,
    ) -> Result<StepReport, StepError<T::Error>>
    where
        T: Eval<D> + ?Sized,
        R: Rng + ?Sized;
}

impl<D: Domain, K: Kernel<D> + ?Sized> Kernel<D> for &mut K {
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
        (**self).step(target, chain, rng)
    }
}

/// What a draw produced.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Drawn {
    /// How many coordinates changed (their indices are at the front of the `changed` buffer).
    pub changed: usize,
    /// The L1 distance `Σ |x'_i − x_i|` between the proposal and the current state (the
    /// Hamming distance for binary and categorical states).
    pub jump: u64,
    /// `log q(x' | x)` (0 when the draw was asked not to evaluate it).
    pub log_q: f64,
}

impl Drawn {
    /// A draw that changed `changed` coordinates by one step or label each: its L1 distance is
    /// the count (binary flips, categorical relabellings, unit ordinal moves).
    #[inline(always)]
    pub(crate) fn hamming(changed: usize, log_q: f64) -> Self {
        Self {
            changed,
            jump: changed as u64,
            log_q,
        }
    }
}

/// Appends coordinate `i` to the front of `changed` (which holds `count` indices so far).
#[inline(always)]
pub(crate) fn push_changed(changed: &mut [u32], count: &mut usize, i: usize) {
    if let Some(slot) = changed.get_mut(*count) {
        *slot = i as u32;
    }
    *count += 1;
}

/// A proposal on domain `D` with an exact `log q`: the balanced proposals of each domain (and
/// the random walk's flips). It draws from the chain's current state and gradient into the
/// chain's proposal buffers, so it is implemented inside the crate, where those are reachable.
pub trait Proposal<D: Domain> {
    /// Whether `q(x' | x) = q(x | x')` always, so that the Metropolis test needs no `log q`.
    const SYMMETRIC: bool = false;

    /// Draws a move from the chain's state into its proposal buffers, with the changed indices
    /// at the front of its `changed` buffer. `log q` is evaluated only if `with_log_q` (the move
    /// drawn is the same either way).
    ///
    /// # Errors
    ///
    /// [`LenError`] for a target or preconditioner of the wrong dimension.
    fn draw<R: Rng + ?Sized>(
        &self,
        chain: &mut Chain<'_, D>,
        rng: &mut R,
        with_log_q: bool,
    ) -> Result<Drawn, LenError>;

    /// `log q(x | x')`: the probability of drawing the chain's current state from its proposal
    /// (whose gradient is in the proposal-gradient buffer).
    ///
    /// # Errors
    ///
    /// As for [`draw`](Self::draw).
    fn reverse_log_q(&self, chain: &mut Chain<'_, D>) -> Result<f64, LenError>;
}

/// A domain with a balanced proposal family (Zhang, Liu & Liu 2022; Sun et al. 2023) indexed
/// by a step `a` and a balance `b`: what the tuners build a fresh proposal from every step.
pub trait Balanced: Domain {
    /// The domain's balanced proposal, without preconditioner.
    type Proposal: Proposal<Self> + Copy + fmt::Debug;

    /// The proposal at step `a` and balance `b`, restricted to `window` where the domain has a
    /// distance (ordinal states; the others ignore it).
    ///
    /// # Errors
    ///
    /// [`ParamError`] for a step, balance or window out of range.
    fn balanced(step: f64, balance: f64, window: Option<u16>)
    -> Result<Self::Proposal, ParamError>;
}

/// A proposal used as a kernel, without correction (`ADJUSTED = false`: [`Dula`]) or followed
/// by a Metropolis–Hastings test (`ADJUSTED = true`: [`Dmala`]).
#[derive(Clone, Copy, Debug)]
pub struct DiscreteLangevin<P, const ADJUSTED: bool> {
    proposal: P,
}

/// The discrete unadjusted Langevin kernel: every valid proposal is accepted.
///
/// One gradient per step and no log-density is needed, so the target may return an unbiased
/// minibatch estimate of `∇U` (and any finite value, such as 0, for `U`). The chain's law
/// converges to a stationary `π_a` that differs from `π` for `a > 0`; for log-quadratic targets the
/// difference vanishes like `exp(−1/(2a))` as `a → 0`.
///
/// A proposal whose gradient (or returned `U`) is not finite is rejected and reported.
pub type Dula<P> = DiscreteLangevin<P, false>;

/// The discrete Metropolis-adjusted Langevin kernel: the proposal followed by a
/// Metropolis–Hastings test, exact for every step and balance (and window).
///
/// `U` and `∇U` of the current state are cached in the chain, so a step costs one evaluation at
/// the proposal. A proposal whose log-density or gradient is not finite, or at which the target
/// returns a recoverable error, is rejected and reported.
///
/// # Examples
///
/// ```
/// use core::convert::Infallible;
/// use langevin_core::ordinal::{Dmala, OrdinalChain, OrdinalProposal, OrdinalStorage, OrdinalTarget};
/// use rand_core::SeedableRng;
///
/// // A discretised Gaussian around 3 on {0..7}².
/// struct Bowl;
/// impl OrdinalTarget for Bowl {
///     type Error = Infallible;
///     fn dim(&self) -> usize { 2 }
///     fn states(&self) -> usize { 8 }
///     fn log_density_and_grad(&mut self, x: &[u16], g: &mut [f32]) -> Result<f64, Infallible> {
///         let mut u = 0.0;
///         for (gi, &xi) in g.iter_mut().zip(x) {
///             let r = f64::from(xi) - 3.0;
///             *gi = -r as f32;
///             u -= 0.5 * r * r;
///         }
///         Ok(u)
///     }
/// }
///
/// let mut storage = OrdinalStorage::<2, 8>::new([0, 7]);
/// let mut chain = OrdinalChain::new(storage.buffers(), &mut Bowl).unwrap();
/// let kernel = Dmala::new(OrdinalProposal::new(1.5, 0.5).unwrap());
/// let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
/// for _ in 0..50 {
///     kernel.step(&mut Bowl, &mut chain, &mut rng).unwrap();
/// }
/// assert!(chain.state().iter().all(|&v| v < 8));
/// ```
pub type Dmala<P> = DiscreteLangevin<P, true>;

impl<P, const ADJUSTED: bool> DiscreteLangevin<P, ADJUSTED> {
    /// The kernel with this proposal.
    pub fn new(proposal: P) -> Self {
        Self { proposal }
    }

    /// The proposal.
    pub fn proposal(&self) -> &P {
        &self.proposal
    }

    /// Advances `chain` by one step. Consumes the proposal's words of `rng` (`⌈d/2⌉` for the
    /// balanced proposals) and one more.
    ///
    /// # Errors
    ///
    /// [`StepError::Len`] if the target's dimension or number of values, or the
    /// preconditioner, differs from the chain's; [`StepError::Target`] for an unrecoverable
    /// target error. The chain is unchanged then.
    #[cfg_attr(target_arch = "x86_64", inline(always))]
    pub fn step<D, T, R>(
        &self,
        target: &mut T,
        chain: &mut Chain<'_, D>,
        rng: &mut R,
    ) -> Result<StepReport, StepError<T::Error>>
    where
        D: Domain,
        P: Proposal<D>,
        T: Eval<D> + ?Sized,
        R: Rng + ?Sized,
    {
        self.step_with_jump(target, chain, rng).map(|r| r.0)
    }

    /// Like [`step`](Self::step), also returning the L1 distance the chain moved (the Hamming
    /// distance for binary and categorical states; 0 unless accepted).
    ///
    /// # Errors
    ///
    /// As for [`step`](Self::step).
    #[cfg_attr(target_arch = "x86_64", inline(always))]
    pub fn step_with_jump<D, T, R>(
        &self,
        target: &mut T,
        chain: &mut Chain<'_, D>,
        rng: &mut R,
    ) -> Result<(StepReport, u64), StepError<T::Error>>
    where
        D: Domain,
        P: Proposal<D>,
        T: Eval<D> + ?Sized,
        R: Rng + ?Sized,
    {
        advance(&self.proposal, ADJUSTED, target, chain, rng)
    }
}

impl<D: Domain, P: Proposal<D>, const ADJUSTED: bool> Kernel<D> for DiscreteLangevin<P, ADJUSTED> {
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
        DiscreteLangevin::step(self, target, chain, rng)
    }
}

/// One step of the unadjusted or adjusted kernel on any chain. Returns the report and the L1
/// jump that took effect. The random stream is consumed identically whatever happens: the
/// proposal's words, then one word for the Metropolis uniform.
#[cfg_attr(target_arch = "x86_64", inline(always))]
pub(crate) fn advance<D, P, T, R>(
    proposal: &P,
    metropolis: bool,
    target: &mut T,
    chain: &mut Chain<'_, D>,
    rng: &mut R,
) -> Result<(StepReport, u64), StepError<T::Error>>
where
    D: Domain,
    P: Proposal<D> + ?Sized,
    T: Eval<D> + ?Sized,
    R: Rng + ?Sized,
{
    chain.check_target(target)?;
    let drawn = proposal.draw(chain, rng, metropolis)?;
    let log_u = libm::log(open_unit_f64(rng));
    let mut report = StepReport::proposed(true, drawn.changed, 0);
    let Some(log_density) = evaluate_proposal(target, chain, &mut report)? else {
        return Ok((report, 0));
    };
    let log_ratio = if !metropolis {
        0.0
    } else if P::SYMMETRIC {
        log_density - chain.log_density
    } else {
        let log_q_reverse = proposal.reverse_log_q(chain)?;
        (log_density - chain.log_density) + (log_q_reverse - drawn.log_q)
    };
    let moved = settle(
        &mut report,
        metropolis,
        log_u,
        log_ratio,
        log_density,
        target,
        chain,
    );
    Ok((report, if moved { drawn.jump } else { 0 }))
}

/// Evaluates the target at the chain's proposal, which differs from the current state at the
/// first `report.proposed_flips` entries of the chain's `changed` buffer, and books the
/// evaluation in `report`. `Some(U)` for a usable value (finite, with a finite gradient in the
/// proposal-gradient buffer); `None` when the step is over: a proposal equal to the current
/// state (nothing to evaluate, nothing changes) or one to reject (`report` says why).
///
/// # Errors
///
/// [`StepError::Target`] for an unrecoverable target error.
#[inline(always)]
pub(crate) fn evaluate_proposal<D, T>(
    target: &mut T,
    chain: &mut Chain<'_, D>,
    report: &mut StepReport,
) -> Result<Option<f64>, StepError<T::Error>>
where
    D: Domain,
    T: Eval<D> + ?Sized,
{
    let changed = report.proposed_flips as usize;
    if changed == 0 {
        return Ok(None);
    }
    report.evaluations += 1;
    let mv = Move {
        from: chain.x,
        to: chain.x_proposal,
        changed: chain.changed.get(..changed).unwrap_or(&[]),
        from_log_density: chain.log_density,
        from_grad: chain.grad,
    };
    let why = match target.eval_after(&mv, chain.grad_proposal) {
        Ok(u) if u.is_finite() && all_finite(chain.grad_proposal) => return Ok(Some(u)),
        Ok(_) => Rejection::NonFinite,
        Err(e) if e.is_recoverable() => Rejection::TargetError,
        Err(e) => return Err(StepError::Target(e)),
    };
    *report = report.rejected(why);
    Ok(None)
}

/// Finishes a step whose proposal evaluated to `log_density`: with a Metropolis test, records
/// `log_ratio` and accepts when `log_u < log_ratio` (NaN compares false: rejected); without, the
/// report's verdict stands. An accepted proposal becomes the chain's state and is committed to
/// the target. Returns whether the chain moved.
#[inline(always)]
pub(crate) fn settle<D, T>(
    report: &mut StepReport,
    metropolis: bool,
    log_u: f64,
    log_ratio: f64,
    log_density: f64,
    target: &mut T,
    chain: &mut Chain<'_, D>,
) -> bool
where
    D: Domain,
    T: Eval<D> + ?Sized,
{
    if metropolis {
        report.log_accept_ratio = log_ratio;
        report.accepted = log_u < log_ratio;
    }
    if report.accepted {
        chain.adopt_proposal(log_density);
        target.commit();
    }
    report.accepted
}

/// Makes the chain's proposal its current state with coordinate `i` set to `value`, and lists
/// `i` as the one change.
#[inline(always)]
pub(crate) fn propose_single<D: Domain>(chain: &mut Chain<'_, D>, i: usize, value: D::Value) {
    crate::slices::copy(chain.x_proposal, chain.x);
    if let Some(v) = chain.x_proposal.get_mut(i) {
        *v = value;
    }
    if let Some(c) = chain.changed.first_mut() {
        *c = i as u32;
    }
}
