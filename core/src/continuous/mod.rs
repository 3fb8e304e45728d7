//! Stochastic-gradient Langevin integrators for potentials that are sums over data.
//!
//! A posterior `π(θ) ∝ exp(−V(θ))` with `V(θ) = Σ_{i<N} V_i(θ)` (the prior folded into the
//! terms) is described by a [`SumTarget`]. The integrators here only ever ask it for per-term
//! gradients, and every step reports how many it evaluated, so that samplers can be compared per
//! data pass (`N` per-term gradients) as the papers do.
//!
//! | chain | update | gradient per step |
//! |---|---|---|
//! | [`Langevin`] | overdamped, `θ ← θ − h ĝ + √(2h) ξ` | full (LMC) or `(N/n) Σ_{i∈S} ∇V_i` (SGLD) |
//! | [`Underdamped`] | Euler–Maruyama on `(θ, r)` | full or uniform minibatch (SGHMC) |
//! | [`Ewsg`] | Euler–Maruyama on `(θ, r)` | a minibatch picked by a Metropolis index chain |
//! | [`Agld`] | overdamped | aggregated: `(N/n) Σ_{i∈S} (∇V_i − α_i) + Σ_i α_i` |
//!
//! Every chain borrows its state and scratch from one caller-provided `f64` workspace (and an
//! index workspace of `u32` where it needs one); the `*_len` functions say how long they must
//! be. Nothing allocates, and a failed step leaves the chain where it was.
//!
//! # Conventions
//!
//! `V` is a **potential** (lower is more likely); its gradient drives the chain downhill. The
//! Gaussian noise uses [`crate::random::fill_normal`], so a seeded chain is reproducible on every
//! platform. Friction `γ` and noise `σ = √(2γ)` follow the fluctuation–dissipation relation at
//! unit temperature, so the stationary law of the continuous dynamics is `exp(−V(θ) − |r|²/2)`.

mod access;
mod agld;
mod ewsg;
mod lmc;
mod underdamped;

pub use access::{Access, BatchStream};
pub use agld::{
    Agld, AgldSettings, DenseSnapshots, PointSnapshot, ScalarSnapshots, SnapshotShape,
    SnapshotStore, SnapshotUpdate,
};
pub use ewsg::{Ewsg, EwsgSettings};
pub use lmc::{Langevin, LangevinSettings};
pub use underdamped::{Underdamped, UnderdampedSettings};

use crate::error::{LenError, ParamError};
use crate::target::TargetError;
use core::fmt;

/// A potential that is a sum of `N` terms over `θ ∈ R^d`: `V(θ) = Σ_{i<N} V_i(θ)`.
///
/// # Contract
///
/// * `θ` and every gradient buffer have length [`dim`](Self::dim); term indices are below
///   [`num_terms`](Self::num_terms). Integrators check both once per step, not per call.
/// * [`add_term_grad`](Self::add_term_grad) **adds** `scale · ∇V_i(θ)` to the buffer: minibatch
///   sums then need no scratch. It must not depend on earlier calls (no hidden state that
///   changes the value), so that the same `θ` and `i` always give the same gradient.
/// * Non-finite gradients are allowed as outputs; integrators turn them into
///   [`StepError::NonFiniteGradient`] and leave the chain unchanged.
///
/// # Examples
///
/// The Gaussian sum `V_i(θ) = ½|θ − c_i|²`:
///
/// ```
/// use core::convert::Infallible;
/// use langevin_core::continuous::SumTarget;
///
/// struct Centres<'a>(&'a [[f64; 2]]);
///
/// impl SumTarget for Centres<'_> {
///     type Error = Infallible;
///     fn dim(&self) -> usize {
///         2
///     }
///     fn num_terms(&self) -> usize {
///         self.0.len()
///     }
///     fn add_term_grad(
///         &mut self,
///         i: usize,
///         theta: &[f64],
///         scale: f64,
///         acc: &mut [f64],
///     ) -> Result<(), Infallible> {
///         let c = self.0.get(i).copied().unwrap_or_default();
///         for ((a, t), c) in acc.iter_mut().zip(theta).zip(c) {
///             *a += scale * (t - c);
///         }
///         Ok(())
///     }
/// }
///
/// let mut t = Centres(&[[1.0, 0.0], [-1.0, 2.0]]);
/// let mut g = [0.0; 2];
/// t.add_full_grad(&[0.0, 0.0], 1.0, &mut g).unwrap();
/// assert_eq!(g, [0.0, -2.0]);
/// ```
pub trait SumTarget {
    /// Error returned by an evaluation.
    type Error: TargetError;

    /// The dimension `d` of `θ`.
    fn dim(&self) -> usize;

    /// The number of terms `N`.
    fn num_terms(&self) -> usize;

    /// Adds `scale · ∇V_i(θ)` to `acc`.
    ///
    /// # Errors
    ///
    /// Whatever the model cannot evaluate.
    fn add_term_grad(
        &mut self,
        i: usize,
        theta: &[f64],
        scale: f64,
        acc: &mut [f64],
    ) -> Result<(), Self::Error>;

    /// Writes `∇V_i(θ)` into `grad`.
    ///
    /// # Errors
    ///
    /// As for [`add_term_grad`](Self::add_term_grad).
    fn term_grad(&mut self, i: usize, theta: &[f64], grad: &mut [f64]) -> Result<(), Self::Error> {
        grad.fill(0.0);
        self.add_term_grad(i, theta, 1.0, grad)
    }

    /// Adds `scale · ∇V_i(θ)` to `acc` for every index `i` of a minibatch, in the order
    /// `batch` yields them (an index may come more than once). The stochastic-gradient
    /// integrators draw their minibatches through this method, so a model that evaluates a
    /// minibatch in one call (a foreign callback, a vectorised kernel) overrides it; the
    /// default adds the terms one by one with [`add_term_grad`](Self::add_term_grad), and an
    /// override that adds them in the same order gives the same values bit for bit.
    ///
    /// `batch` draws the indices as it is iterated: an override takes every index it yields
    /// (the integrators drain what is left, so the index stream is the same either way).
    ///
    /// # Errors
    ///
    /// As for [`add_term_grad`](Self::add_term_grad).
    fn add_batch_grad(
        &mut self,
        batch: &mut dyn Iterator<Item = usize>,
        theta: &[f64],
        scale: f64,
        acc: &mut [f64],
    ) -> Result<(), Self::Error> {
        for i in batch {
            self.add_term_grad(i, theta, scale, acc)?;
        }
        Ok(())
    }

    /// Adds `scale · ∇V(θ)` to `acc`, summing the terms in index order. Integrators count this
    /// as `N` per-term gradients whatever a model's override costs.
    ///
    /// # Errors
    ///
    /// As for [`add_term_grad`](Self::add_term_grad).
    fn add_full_grad(
        &mut self,
        theta: &[f64],
        scale: f64,
        acc: &mut [f64],
    ) -> Result<(), Self::Error> {
        for i in 0..self.num_terms() {
            self.add_term_grad(i, theta, scale, acc)?;
        }
        Ok(())
    }
}

/// A [`SumTarget`] that can also evaluate its terms' values `V_i(θ)` (for diagnostics; no
/// integrator here needs them).
pub trait SumPotential: SumTarget {
    /// `V_i(θ)`.
    ///
    /// # Errors
    ///
    /// Whatever the model cannot evaluate.
    fn term_potential(&mut self, i: usize, theta: &[f64]) -> Result<f64, Self::Error>;

    /// `V(θ) = Σ_i V_i(θ)`, summed in index order.
    ///
    /// # Errors
    ///
    /// As for [`term_potential`](Self::term_potential).
    fn potential(&mut self, theta: &[f64]) -> Result<f64, Self::Error> {
        let mut v = 0.0;
        for i in 0..self.num_terms() {
            v += self.term_potential(i, theta)?;
        }
        Ok(v)
    }
}

/// A [`SumTarget`] whose terms' gradients are a scalar times a fixed data vector plus a part
/// shared by every term: `∇V_i(θ) = s_i(θ) z_i + q(θ)`, as for generalised linear models with
/// the prior's gradient spread evenly, `q(θ) = ∇(−log p(θ)) / N`.
///
/// Aggregated-gradient snapshots of such a model need one scalar per term
/// ([`ScalarSnapshots`]) instead of `d`. The shared part is evaluated exactly at the current
/// point, never from a snapshot.
///
/// # Contract
///
/// `add_term_grad(i, θ, c, acc)` must add the same as `add_term_data(i, c · s_i(θ), acc)`
/// followed by `add_shared_grad(θ, c, acc)` (up to rounding).
pub trait GlmSumTarget: SumTarget {
    /// The scalar `s_i(θ)`.
    ///
    /// # Errors
    ///
    /// Whatever the model cannot evaluate.
    fn term_scalar(&mut self, i: usize, theta: &[f64]) -> Result<f64, Self::Error>;

    /// Adds `scale · z_i` to `acc`.
    fn add_term_data(&self, i: usize, scale: f64, acc: &mut [f64]);

    /// Adds `scale · q(θ)` to `acc`.
    ///
    /// # Errors
    ///
    /// Whatever the model cannot evaluate.
    fn add_shared_grad(
        &mut self,
        theta: &[f64],
        scale: f64,
        acc: &mut [f64],
    ) -> Result<(), Self::Error>;
}

/// Writes trait methods that forward to `**self`, for the `&mut T` impls below (a model's own
/// overrides, such as a faster [`SumTarget::add_full_grad`], stay in force through a borrow).
macro_rules! forward_to_inner {
    () => {};
    (fn $name:ident(&self $(, $arg:ident: $ty:ty)*) $(-> $ret:ty)?; $($rest:tt)*) => {
        fn $name(&self $(, $arg: $ty)*) $(-> $ret)? {
            (**self).$name($($arg),*)
        }
        forward_to_inner!($($rest)*);
    };
    (fn $name:ident(&mut self $(, $arg:ident: $ty:ty)*) $(-> $ret:ty)?; $($rest:tt)*) => {
        fn $name(&mut self $(, $arg: $ty)*) $(-> $ret)? {
            (**self).$name($($arg),*)
        }
        forward_to_inner!($($rest)*);
    };
}

impl<T: SumTarget + ?Sized> SumTarget for &mut T {
    type Error = T::Error;
    forward_to_inner! {
        fn dim(&self) -> usize;
        fn num_terms(&self) -> usize;
        fn add_term_grad(&mut self, i: usize, theta: &[f64], scale: f64, acc: &mut [f64])
            -> Result<(), Self::Error>;
        fn term_grad(&mut self, i: usize, theta: &[f64], grad: &mut [f64])
            -> Result<(), Self::Error>;
        fn add_batch_grad(
            &mut self,
            batch: &mut dyn Iterator<Item = usize>,
            theta: &[f64],
            scale: f64,
            acc: &mut [f64]
        ) -> Result<(), Self::Error>;
        fn add_full_grad(&mut self, theta: &[f64], scale: f64, acc: &mut [f64])
            -> Result<(), Self::Error>;
    }
}

impl<T: GlmSumTarget + ?Sized> GlmSumTarget for &mut T {
    forward_to_inner! {
        fn term_scalar(&mut self, i: usize, theta: &[f64]) -> Result<f64, Self::Error>;
        fn add_term_data(&self, i: usize, scale: f64, acc: &mut [f64]);
        fn add_shared_grad(&mut self, theta: &[f64], scale: f64, acc: &mut [f64])
            -> Result<(), Self::Error>;
    }
}

impl<T: SumPotential + ?Sized> SumPotential for &mut T {
    forward_to_inner! {
        fn term_potential(&mut self, i: usize, theta: &[f64]) -> Result<f64, Self::Error>;
    }
}

/// What one integrator step did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SgStep {
    /// Per-term gradients evaluated (a full gradient counts `N`; for [`ScalarSnapshots`] each
    /// scalar `s_i` counts one).
    pub grad_evals: u32,
    /// Accepted moves of the EWSG index chain (zero for the other integrators).
    pub index_moves: u32,
    /// Whether an aggregated-gradient chain refreshed its whole snapshot in this step.
    pub refreshed: bool,
}

/// Why a step failed. The chain's state (position, momentum, step counter) is unchanged,
/// except that [`Agld`] may have replaced some snapshot entries with valid newer ones (its
/// running sum stays consistent); the random stream and the data-access position have moved on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepError<E> {
    /// The target returned an error.
    Target(E),
    /// The target's dimension or number of terms differs from the chain's.
    Shape {
        /// `(d, N)` the chain was built for.
        expected: (usize, usize),
        /// `(d, N)` of the target passed to the step.
        found: (usize, usize),
    },
    /// A gradient (a term's, a minibatch sum or the aggregated estimate) was NaN or infinite.
    NonFiniteGradient,
    /// The update overflowed: the proposed position or momentum was not finite.
    NonFiniteState,
}

impl<E: fmt::Display> fmt::Display for StepError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StepError::Target(e) => write!(f, "target evaluation failed: {e}"),
            StepError::Shape { expected, found } => write!(
                f,
                "target has (dim, terms) = {found:?}, the chain was built for {expected:?}"
            ),
            StepError::NonFiniteGradient => f.write_str("a gradient was NaN or infinite"),
            StepError::NonFiniteState => f.write_str("the update overflowed to a non-finite state"),
        }
    }
}

impl<E: fmt::Debug + fmt::Display> core::error::Error for StepError<E> {}

/// Why a chain could not be built.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum BuildError {
    /// A bad parameter, dimension or buffer length.
    Param(ParamError),
    /// The sum has no terms (`N = 0`).
    NoTerms,
    /// `N` does not fit the `u32` indices and counters the chains use.
    TooManyTerms(usize),
    /// A minibatch larger than the data.
    BatchTooLarge {
        /// The minibatch size `n`.
        batch: usize,
        /// The number of terms `N`.
        terms: usize,
    },
    /// The per-step gradient count does not fit in a `u32`.
    TooManyEvaluations,
    /// Partial snapshot updates (SAGA-LD, TMU) need a snapshot table, not a [`PointSnapshot`].
    SnapshotNeedsTable,
}

impl From<ParamError> for BuildError {
    fn from(e: ParamError) -> Self {
        BuildError::Param(e)
    }
}

impl From<LenError> for BuildError {
    fn from(e: LenError) -> Self {
        BuildError::Param(ParamError::Len(e))
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::Param(e) => e.fmt(f),
            BuildError::NoTerms => f.write_str("the sum has no terms (N = 0)"),
            BuildError::TooManyTerms(n) => write!(f, "{n} terms do not fit 32-bit indices"),
            BuildError::BatchTooLarge { batch, terms } => {
                write!(
                    f,
                    "minibatch size {batch} exceeds the number of terms {terms}"
                )
            }
            BuildError::TooManyEvaluations => {
                f.write_str("gradient evaluations per step overflow a 32-bit counter")
            }
            BuildError::SnapshotNeedsTable => {
                f.write_str("partial snapshot updates need a snapshot table")
            }
        }
    }
}

impl core::error::Error for BuildError {}

/// A chain over a [`SumTarget`] that can be stepped: the common face of the integrators, for
/// drivers that run any of them.
pub trait SgChain<T: SumTarget + ?Sized> {
    /// One step.
    ///
    /// # Errors
    ///
    /// See [`StepError`]; the chain is left where it was.
    fn step_with<R: rand_core::Rng + ?Sized>(
        &mut self,
        target: &mut T,
        rng: &mut R,
    ) -> Result<SgStep, StepError<T::Error>>;
    /// The current position `θ`.
    fn position(&self) -> &[f64];
}

/// Implements [`SgChain`] through the chains' inherent `step` and `theta`; the brackets hold
/// the extra generic parameters of a chain.
macro_rules! impl_sg_chain {
    ($([$($generics:tt)*] $chain:ty),* $(,)?) => {$(
        impl<T: SumTarget + ?Sized, $($generics)*> SgChain<T> for $chain {
            fn step_with<R: rand_core::Rng + ?Sized>(
                &mut self,
                target: &mut T,
                rng: &mut R,
            ) -> Result<SgStep, StepError<T::Error>> {
                self.step(target, rng)
            }
            fn position(&self) -> &[f64] {
                self.theta()
            }
        }
    )*};
}

impl_sg_chain! {
    [] Langevin<'_>,
    [] Underdamped<'_>,
    [] Ewsg<'_>,
    [S: SnapshotStore<T>] Agld<'_, S>,
}

/// Checks the problem shape shared by every chain: `d ≥ 1`, `1 ≤ N ≤ u32::MAX`.
pub(crate) fn check_shape(dim: usize, terms: usize) -> Result<(), BuildError> {
    if dim == 0 {
        return Err(ParamError::EmptyDimension.into());
    }
    if terms == 0 {
        return Err(BuildError::NoTerms);
    }
    if u32::try_from(terms).is_err() {
        return Err(BuildError::TooManyTerms(terms));
    }
    Ok(())
}

/// Checks a starting point: `d` finite entries (a NaN or infinite start could never move).
pub(crate) fn check_start(dim: usize, theta0: &[f64]) -> Result<(), BuildError> {
    LenError::check("theta0", dim, theta0.len())?;
    if theta0.iter().all(|v| v.is_finite()) {
        Ok(())
    } else {
        Err(ParamError::NonFinite("theta0").into())
    }
}

/// Checks a minibatch size against `N` (the settings already checked `n ≥ 1`).
pub(crate) fn check_batch(batch: usize, terms: usize) -> Result<(), BuildError> {
    if batch > terms {
        Err(BuildError::BatchTooLarge { batch, terms })
    } else {
        Ok(())
    }
}

/// Checks that `step` is finite and positive.
pub(crate) fn check_step(step: f64) -> Result<(), ParamError> {
    if step.is_finite() && step > 0.0 {
        Ok(())
    } else {
        Err(ParamError::Step(step))
    }
}

/// Checks that a minibatch size is at least one.
pub(crate) fn check_batch_size(batch: usize) -> Result<(), ParamError> {
    if batch == 0 {
        Err(ParamError::OutOfRange {
            name: "batch",
            value: 0.0,
        })
    } else {
        Ok(())
    }
}

/// Checks the target passed to a step against the chain's shape.
pub(crate) fn check_target<T: SumTarget + ?Sized>(
    target: &T,
    dim: usize,
    terms: usize,
) -> Result<(), StepError<T::Error>> {
    let found = (target.dim(), target.num_terms());
    if found == (dim, terms) {
        Ok(())
    } else {
        Err(StepError::Shape {
            expected: (dim, terms),
            found,
        })
    }
}

/// Carves consecutive sub-slices out of a caller's workspace whose total length was checked.
pub(crate) struct Carver<'a, X> {
    rest: &'a mut [X],
}

impl<'a, X> Carver<'a, X> {
    /// Checks `buf.len() == expected` and starts carving.
    pub(crate) fn new(
        buf: &'a mut [X],
        name: &'static str,
        expected: usize,
    ) -> Result<Self, LenError> {
        LenError::check(name, expected, buf.len())?;
        Ok(Self { rest: buf })
    }

    /// The next `n` elements (fewer only if the checked total was too small, which the
    /// callers' length formulas rule out).
    pub(crate) fn take(&mut self, n: usize) -> &'a mut [X] {
        let rest = core::mem::take(&mut self.rest);
        let n = n.min(rest.len());
        let (head, tail) = rest.split_at_mut(n);
        self.rest = tail;
        head
    }
}

/// Whether every entry is finite.
#[inline]
pub(crate) fn all_finite(xs: &[f64]) -> bool {
    // `x * 0.0` is NaN exactly for non-finite x and branch-free to accumulate; four lanes
    // keep the loop free of a serial dependency so that it vectorises.
    let chunks = xs.chunks_exact(4);
    let tail = chunks
        .remainder()
        .iter()
        .fold(0.0f64, |acc, &x| acc + x * 0.0);
    let mut acc = [0.0f64; 4];
    for c in chunks {
        for (a, &x) in acc.iter_mut().zip(c) {
            *a += x * 0.0;
        }
    }
    let [a0, a1, a2, a3] = acc;
    (a0 + a1) + (a2 + a3) + tail == 0.0
}

/// `out ← (N/n) Σ_{i∈batch} ∇V_i(θ)` over `n` indices drawn from `stream`, checked finite: `n`
/// per-term gradients, asked of the target in one [`SumTarget::add_batch_grad`] call.
pub(crate) fn minibatch_estimate<T: SumTarget + ?Sized, R: rand_core::Rng + ?Sized>(
    target: &mut T,
    stream: &mut BatchStream<'_>,
    batch: usize,
    theta: &[f64],
    out: &mut [f64],
    rng: &mut R,
) -> Result<(), StepError<T::Error>> {
    out.fill(0.0);
    let w = stream.terms() as f64 / batch as f64;
    let mut indices = (0..batch).map(|_| stream.next_index(rng));
    target
        .add_batch_grad(&mut indices, theta, w, out)
        .map_err(target_err)?;
    // Indices a target left undrawn are drawn here, so the stream does not depend on it.
    indices.for_each(drop);
    check_finite(out)
}

/// [`StepError::NonFiniteGradient`] unless every entry of the gradient `g` is finite.
pub(crate) fn check_finite<E>(g: &[f64]) -> Result<(), StepError<E>> {
    if all_finite(g) {
        Ok(())
    } else {
        Err(StepError::NonFiniteGradient)
    }
}

/// What a chain is built for: the shape `(d, N)`, the minibatch size (`None` for the full
/// gradient) and the start `θ₀`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Problem<'t> {
    /// `d`.
    pub(crate) dim: usize,
    /// `N`.
    pub(crate) terms: usize,
    /// `n`, or `None` for the full gradient.
    pub(crate) batch: Option<usize>,
    /// `θ₀`.
    pub(crate) theta0: &'t [f64],
}

impl<'t> Problem<'t> {
    /// The problem `(d, N)` with minibatches of `batch` (or the full gradient) from `theta0`.
    pub(crate) fn new(dim: usize, terms: usize, batch: Option<usize>, theta0: &'t [f64]) -> Self {
        Self {
            dim,
            terms,
            batch,
            theta0,
        }
    }
}

/// The state every integrator carries: the shape, the position `θ`, the gradient estimate,
/// the proposed next state (position or momentum) and the stream of minibatch indices.
#[derive(Debug)]
pub(crate) struct SgCore<'a> {
    pub(crate) dim: usize,
    pub(crate) terms: usize,
    pub(crate) theta: &'a mut [f64],
    pub(crate) grad: &'a mut [f64],
    pub(crate) next: &'a mut [f64],
    pub(crate) stream: BatchStream<'a>,
}

impl<'a> SgCore<'a> {
    /// Checks `problem` (shape, minibatch against `N`, a finite start of length `d`) and the
    /// workspace length `len`, then takes `θ` (set to `θ₀`), the gradient and the proposal from
    /// `work`; the rest of `work` is returned for the chain's own buffers. The minibatch
    /// indices follow `access` over the permutation buffer `perm` (cyclic, drawing nothing, for
    /// the full gradient).
    pub(crate) fn new(
        problem: Problem<'_>,
        work: &'a mut [f64],
        len: usize,
        access: Access,
        perm: &'a mut [u32],
    ) -> Result<(Self, Carver<'a, f64>), BuildError> {
        let Problem {
            dim,
            terms,
            batch,
            theta0,
        } = problem;
        check_shape(dim, terms)?;
        if let Some(n) = batch {
            check_batch(n, terms)?;
        }
        check_start(dim, theta0)?;
        let mut carve = Carver::new(work, "workspace", len)?;
        let theta = carve.take(dim);
        crate::slices::copy(theta, theta0);
        let grad = carve.take(dim);
        let next = carve.take(dim);
        let access = if batch.is_some() {
            access
        } else {
            Access::Cyclic
        };
        let stream = BatchStream::new(access, terms, perm)?;
        let chain = Self {
            dim,
            terms,
            theta,
            grad,
            next,
            stream,
        };
        Ok((chain, carve))
    }

    /// Checks the target passed to a step against the chain's shape.
    pub(crate) fn check<T: SumTarget + ?Sized>(
        &self,
        target: &T,
    ) -> Result<(), StepError<T::Error>> {
        check_target(target, self.dim, self.terms)
    }

    /// The gradient estimate at `θ`, checked finite: the full gradient (`batch = None`) or a
    /// minibatch of `n` drawn from the stream. Returns the per-term gradients evaluated.
    pub(crate) fn estimate<T: SumTarget + ?Sized, R: rand_core::Rng + ?Sized>(
        &mut self,
        target: &mut T,
        batch: Option<usize>,
        rng: &mut R,
    ) -> Result<u32, StepError<T::Error>> {
        let evals = match batch {
            None => {
                self.grad.fill(0.0);
                target
                    .add_full_grad(self.theta, 1.0, self.grad)
                    .map_err(target_err)?;
                check_finite(self.grad)?;
                self.terms
            }
            Some(n) => {
                minibatch_estimate(target, &mut self.stream, n, self.theta, self.grad, rng)?;
                n
            }
        };
        Ok(evals as u32)
    }

    /// The overdamped move with the current gradient estimate (see [`overdamped_move`]).
    pub(crate) fn overdamped<R: rand_core::Rng + ?Sized>(
        &mut self,
        step: f64,
        rng: &mut R,
    ) -> Result<(), NonFiniteState> {
        overdamped_move(self.theta, self.grad, self.next, step, rng)
    }

    /// The underdamped move with the current gradient estimate (see [`underdamped_move`]).
    pub(crate) fn underdamped<R: rand_core::Rng + ?Sized>(
        &mut self,
        momentum: &mut [f64],
        step: f64,
        friction: f64,
        rng: &mut R,
    ) -> Result<(), NonFiniteState> {
        underdamped_move(
            self.theta, momentum, self.grad, self.next, step, friction, rng,
        )
    }
}

/// The overdamped move `θ ← θ − h g + √(2h) ξ`, computed into `next` and committed only if
/// finite. Draws `d` normals.
pub(crate) fn overdamped_move<R: rand_core::Rng + ?Sized>(
    theta: &mut [f64],
    grad: &[f64],
    next: &mut [f64],
    step: f64,
    rng: &mut R,
) -> Result<(), NonFiniteState> {
    crate::random::fill_normal(rng, next);
    let s = libm::sqrt(2.0 * step);
    for (n, (&t, &g)) in next.iter_mut().zip(theta.iter().zip(grad)) {
        *n = t - step * g + s * *n;
    }
    if !all_finite(next) {
        return Err(NonFiniteState);
    }
    crate::slices::copy(theta, next);
    Ok(())
}

/// The Euler–Maruyama move of underdamped Langevin,
/// `θ ← θ + h r`, `r ← r − h (g + γ r) + σ √h ξ` with `σ = √(2γ)`, computed into `next` and
/// committed only if finite. Draws `d` normals.
pub(crate) fn underdamped_move<R: rand_core::Rng + ?Sized>(
    theta: &mut [f64],
    momentum: &mut [f64],
    grad: &[f64],
    next: &mut [f64],
    step: f64,
    friction: f64,
    rng: &mut R,
) -> Result<(), NonFiniteState> {
    crate::random::fill_normal(rng, next);
    let s = libm::sqrt(2.0 * friction * step);
    let keep = 1.0 - step * friction;
    for (n, (&r, &g)) in next.iter_mut().zip(momentum.iter().zip(grad)) {
        *n = keep * r - step * g + s * *n;
    }
    let theta_ok = theta
        .iter()
        .zip(momentum.iter())
        .all(|(&t, &r)| (t + step * r).is_finite());
    if !theta_ok || !all_finite(next) {
        return Err(NonFiniteState);
    }
    for (t, &r) in theta.iter_mut().zip(momentum.iter()) {
        *t += step * r;
    }
    crate::slices::copy(momentum, next);
    Ok(())
}

/// Wraps a target error.
pub(crate) fn target_err<E>(e: E) -> StepError<E> {
    StepError::Target(e)
}

/// Marker for an update that overflowed.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NonFiniteState;

impl<E> From<NonFiniteState> for StepError<E> {
    fn from(_: NonFiniteState) -> Self {
        StepError::NonFiniteState
    }
}
