//! A chain over labels `x_i ∈ {0, …, S−1}` and its caller-owned buffers, shared by the ordinal
//! and categorical domains.

use super::target::LabelMove;
use crate::error::LenError;
use crate::target::TargetError;
use core::fmt;
use core::marker::PhantomData;

mod sealed {
    pub trait Sealed {}
}

/// The domain of a [`LabelChain`]: it fixes the gradient layout.
pub trait Domain: sealed::Sealed + Copy + fmt::Debug {
    /// The gradient length for `d` coordinates of `s` values.
    fn grad_len(d: usize, s: usize) -> Option<usize>;
}

/// Ordinal states: the gradient has one entry per coordinate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OrdinalDomain;

/// Categorical states: the gradient is taken with respect to the one-hot encoding and has
/// `d·S` entries, row-major (`grad[i·S + k] = ∂U/∂onehot_{i,k}`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CategoricalDomain;

impl sealed::Sealed for OrdinalDomain {}
impl sealed::Sealed for CategoricalDomain {}

impl Domain for OrdinalDomain {
    fn grad_len(d: usize, _s: usize) -> Option<usize> {
        Some(d)
    }
}

impl Domain for CategoricalDomain {
    fn grad_len(d: usize, s: usize) -> Option<usize> {
        d.checked_mul(s)
    }
}

/// The buffers a [`LabelChain`] works in. `x`, `x_proposal` and `changed` have length `d`;
/// `grad` and `grad_proposal` the domain's gradient length (`d` ordinal, `d·S` categorical);
/// `scratch` has length `S`. `x` holds the initial state.
#[derive(Debug)]
pub struct LabelBuffers<'a> {
    /// The initial state on entry; the chain's current state afterwards.
    pub x: &'a mut [u16],
    /// `∇U` at the current state.
    pub grad: &'a mut [f32],
    /// Room for a proposed state.
    pub x_proposal: &'a mut [u16],
    /// Room for the gradient at a proposed state.
    pub grad_proposal: &'a mut [f32],
    /// Room for the indices a proposal changes.
    pub changed: &'a mut [u32],
    /// Per-coordinate work space of `S` values (categorical proposals, Gibbs conditionals).
    pub scratch: &'a mut [f64],
}

/// Fixed-size storage for one ordinal chain of dimension `D` over `S` values, no heap.
///
/// # Examples
///
/// ```
/// use langevin_core::ordinal::OrdinalStorage;
/// let mut storage = OrdinalStorage::<3, 5>::new([0, 2, 4]);
/// assert_eq!(storage.buffers().scratch.len(), 5);
/// ```
#[derive(Clone, Debug)]
pub struct OrdinalStorage<const D: usize, const S: usize> {
    x: [u16; D],
    grad: [f32; D],
    x_proposal: [u16; D],
    grad_proposal: [f32; D],
    changed: [u32; D],
    scratch: [f64; S],
}

impl<const D: usize, const S: usize> OrdinalStorage<D, S> {
    /// Storage starting at state `x0`.
    pub const fn new(x0: [u16; D]) -> Self {
        Self {
            x: x0,
            grad: [0.0; D],
            x_proposal: [0; D],
            grad_proposal: [0.0; D],
            changed: [0; D],
            scratch: [0.0; S],
        }
    }

    /// Borrows the buffers for [`LabelChain::new_ordinal`].
    pub fn buffers(&mut self) -> LabelBuffers<'_> {
        LabelBuffers {
            x: &mut self.x,
            grad: &mut self.grad,
            x_proposal: &mut self.x_proposal,
            grad_proposal: &mut self.grad_proposal,
            changed: &mut self.changed,
            scratch: &mut self.scratch,
        }
    }
}

/// Fixed-size storage for one categorical chain of dimension `D` over `S` labels, no heap.
///
/// # Examples
///
/// ```
/// use langevin_core::categorical::CategoricalStorage;
/// let mut storage = CategoricalStorage::<3, 4>::new([0, 3, 1]);
/// assert_eq!(storage.buffers().grad.len(), 12);
/// ```
#[derive(Clone, Debug)]
pub struct CategoricalStorage<const D: usize, const S: usize> {
    x: [u16; D],
    grad: [[f32; S]; D],
    x_proposal: [u16; D],
    grad_proposal: [[f32; S]; D],
    changed: [u32; D],
    scratch: [f64; S],
}

impl<const D: usize, const S: usize> CategoricalStorage<D, S> {
    /// Storage starting at state `x0`.
    pub const fn new(x0: [u16; D]) -> Self {
        Self {
            x: x0,
            grad: [[0.0; S]; D],
            x_proposal: [0; D],
            grad_proposal: [[0.0; S]; D],
            changed: [0; D],
            scratch: [0.0; S],
        }
    }

    /// Borrows the buffers for [`LabelChain::new_categorical`].
    pub fn buffers(&mut self) -> LabelBuffers<'_> {
        LabelBuffers {
            x: &mut self.x,
            grad: self.grad.as_flattened_mut(),
            x_proposal: &mut self.x_proposal,
            grad_proposal: self.grad_proposal.as_flattened_mut(),
            changed: &mut self.changed,
            scratch: &mut self.scratch,
        }
    }
}

/// Why a label chain could not be started or reset.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum InitError<E> {
    /// The target has dimension zero.
    EmptyDimension,
    /// The target's number of values is below 2 or above 65 535.
    States(usize),
    /// A buffer does not fit the target.
    Len(LenError),
    /// The initial state has an entry `≥ S`.
    StateOutOfRange {
        /// The coordinate.
        index: usize,
        /// Its value.
        value: u16,
    },
    /// `U` or `∇U` at the initial state is not finite.
    NonFinite,
    /// The target failed to evaluate the initial state.
    Target(E),
}

impl<E: fmt::Display> fmt::Display for InitError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InitError::EmptyDimension => f.write_str("the target has dimension zero"),
            InitError::States(s) => {
                write!(
                    f,
                    "the target has {s} values per coordinate, expected 2 to 65535"
                )
            }
            InitError::Len(e) => e.fmt(f),
            InitError::StateOutOfRange { index, value } => {
                write!(
                    f,
                    "initial state has x[{index}] = {value}, beyond the last value"
                )
            }
            InitError::NonFinite => {
                f.write_str("log-density or gradient at the initial state is not finite")
            }
            InitError::Target(e) => write!(f, "target failed at the initial state: {e}"),
        }
    }
}

impl<E: fmt::Debug + fmt::Display> core::error::Error for InitError<E> {}

impl<E> From<LenError> for InitError<E> {
    fn from(e: LenError) -> Self {
        InitError::Len(e)
    }
}

/// How kernels reach a target, whichever domain it belongs to.
pub(crate) trait Eval {
    type Error: TargetError;
    fn dim(&self) -> usize;
    fn states(&self) -> usize;
    fn eval(&mut self, x: &[u16], grad: &mut [f32]) -> Result<f64, Self::Error>;
    fn eval_after(&mut self, mv: &LabelMove<'_>, grad: &mut [f32]) -> Result<f64, Self::Error>;
    fn commit(&mut self);
}

/// A chain over labels: the current state with its cached log-density and gradient, room for a
/// proposal, and a scratch row. Invariant: `log_density()` and `grad()` are the target's values
/// at `state()`, both finite, and every entry of `state()` is below `states()`.
///
/// Use the aliases [`OrdinalChain`] and [`CategoricalChain`].
#[derive(Debug)]
pub struct LabelChain<'a, K: Domain> {
    pub(crate) x: &'a mut [u16],
    pub(crate) grad: &'a mut [f32],
    pub(crate) x_proposal: &'a mut [u16],
    pub(crate) grad_proposal: &'a mut [f32],
    pub(crate) changed: &'a mut [u32],
    pub(crate) scratch: &'a mut [f64],
    pub(crate) log_density: f64,
    pub(crate) states: usize,
    domain: PhantomData<K>,
}

/// A chain over ordinal states.
pub type OrdinalChain<'a> = LabelChain<'a, OrdinalDomain>;

/// A chain over categorical states.
pub type CategoricalChain<'a> = LabelChain<'a, CategoricalDomain>;

impl<'a> LabelChain<'a, OrdinalDomain> {
    /// Starts an ordinal chain at `buffers.x`, evaluating the target there.
    ///
    /// # Errors
    ///
    /// See [`InitError`].
    pub fn new_ordinal<T: super::OrdinalTarget + ?Sized>(
        buffers: LabelBuffers<'a>,
        target: &mut T,
    ) -> Result<Self, InitError<T::Error>> {
        Self::start(buffers, &mut super::OrdinalEval(target))
    }

    /// Moves the chain to `x`, re-evaluating the target. On error the chain keeps its state.
    ///
    /// # Errors
    ///
    /// As for [`new_ordinal`](Self::new_ordinal).
    pub fn reset<T: super::OrdinalTarget + ?Sized>(
        &mut self,
        x: &[u16],
        target: &mut T,
    ) -> Result<(), InitError<T::Error>> {
        self.reset_with(x, &mut super::OrdinalEval(target))
    }
}

impl<'a> LabelChain<'a, CategoricalDomain> {
    /// Starts a categorical chain at `buffers.x`, evaluating the target there.
    ///
    /// # Errors
    ///
    /// See [`InitError`].
    pub fn new_categorical<T: crate::categorical::CategoricalTarget + ?Sized>(
        buffers: LabelBuffers<'a>,
        target: &mut T,
    ) -> Result<Self, InitError<T::Error>> {
        Self::start(buffers, &mut crate::categorical::CategoricalEval(target))
    }

    /// Moves the chain to `x`, re-evaluating the target. On error the chain keeps its state.
    ///
    /// # Errors
    ///
    /// As for [`new_categorical`](Self::new_categorical).
    pub fn reset<T: crate::categorical::CategoricalTarget + ?Sized>(
        &mut self,
        x: &[u16],
        target: &mut T,
    ) -> Result<(), InitError<T::Error>> {
        self.reset_with(x, &mut crate::categorical::CategoricalEval(target))
    }
}

impl<'a, K: Domain> LabelChain<'a, K> {
    pub(crate) fn start<E: Eval + ?Sized>(
        buffers: LabelBuffers<'a>,
        target: &mut E,
    ) -> Result<Self, InitError<E::Error>> {
        let (d, s) = (target.dim(), target.states());
        if d == 0 {
            return Err(InitError::EmptyDimension);
        }
        if !(2..=usize::from(u16::MAX)).contains(&s) {
            return Err(InitError::States(s));
        }
        let g = K::grad_len(d, s).ok_or(InitError::States(s))?;
        LenError::check("x", d, buffers.x.len())?;
        LenError::check("grad", g, buffers.grad.len())?;
        LenError::check("x_proposal", d, buffers.x_proposal.len())?;
        LenError::check("grad_proposal", g, buffers.grad_proposal.len())?;
        LenError::check("changed", d, buffers.changed.len())?;
        LenError::check("scratch", s, buffers.scratch.len())?;
        check_states(buffers.x, s)?;
        let log_density = target
            .eval(buffers.x, buffers.grad)
            .map_err(InitError::Target)?;
        if !log_density.is_finite() || !all_finite(buffers.grad) {
            return Err(InitError::NonFinite);
        }
        Ok(Self {
            x: buffers.x,
            grad: buffers.grad,
            x_proposal: buffers.x_proposal,
            grad_proposal: buffers.grad_proposal,
            changed: buffers.changed,
            scratch: buffers.scratch,
            log_density,
            states: s,
            domain: PhantomData,
        })
    }

    pub(crate) fn reset_with<E: Eval + ?Sized>(
        &mut self,
        x: &[u16],
        target: &mut E,
    ) -> Result<(), InitError<E::Error>> {
        LenError::check("x", self.dim(), x.len())?;
        LenError::check("target", self.dim(), target.dim())?;
        if target.states() != self.states {
            return Err(InitError::States(target.states()));
        }
        check_states(x, self.states)?;
        crate::slices::copy(self.x_proposal, x);
        let outcome = target.eval(self.x_proposal, self.grad_proposal);
        let restore = |chain: &mut Self, target: &mut E| {
            // Re-establish the old state in the target; it was valid before.
            let _ = target.eval(chain.x, chain.grad_proposal);
        };
        match outcome {
            Ok(u) if u.is_finite() && all_finite(self.grad_proposal) => {
                self.adopt_proposal(u);
                Ok(())
            }
            Ok(_) => {
                restore(self, target);
                Err(InitError::NonFinite)
            }
            Err(e) => {
                restore(self, target);
                Err(InitError::Target(e))
            }
        }
    }

    /// The dimension `d`.
    pub fn dim(&self) -> usize {
        self.x.len()
    }

    /// The number of values `S` per coordinate.
    pub fn states(&self) -> usize {
        self.states
    }

    /// The current state.
    pub fn state(&self) -> &[u16] {
        self.x
    }

    /// `∇U` at the current state.
    pub fn grad(&self) -> &[f32] {
        self.grad
    }

    /// `U` at the current state.
    pub fn log_density(&self) -> f64 {
        self.log_density
    }

    /// Makes the proposal buffers current.
    #[inline]
    pub(crate) fn adopt_proposal(&mut self, log_density: f64) {
        core::mem::swap(&mut self.x, &mut self.x_proposal);
        core::mem::swap(&mut self.grad, &mut self.grad_proposal);
        self.log_density = log_density;
    }
}

fn check_states<E>(x: &[u16], s: usize) -> Result<(), InitError<E>> {
    match x.iter().enumerate().find(|(_, v)| usize::from(**v) >= s) {
        Some((index, &value)) => Err(InitError::StateOutOfRange { index, value }),
        None => Ok(()),
    }
}

/// Whether every entry is finite (a branch-free reduction that vectorises).
#[inline]
pub(crate) fn all_finite(v: &[f32]) -> bool {
    v.iter().fold(true, |ok, g| ok & g.is_finite())
}
