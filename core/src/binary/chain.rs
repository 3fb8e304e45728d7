//! A binary chain's state and its caller-owned buffers.

use crate::error::LenError;
use crate::target::BinaryTarget;
use core::fmt;

/// The buffers a [`BinaryChain`] works in, all of length `d`. `x` holds the initial state.
#[derive(Debug)]
pub struct ChainBuffers<'a> {
    /// The initial state on entry (entries 0 or 1); the chain's current state afterwards.
    pub x: &'a mut [u8],
    /// `∇U` at the current state.
    pub grad: &'a mut [f32],
    /// Room for a proposed state.
    pub x_proposal: &'a mut [u8],
    /// Room for the gradient at a proposed state.
    pub grad_proposal: &'a mut [f32],
    /// Room for the indices a proposal flips.
    pub flipped: &'a mut [u32],
}

/// Fixed-size storage for one chain of dimension `D`: about `14·D` bytes, no heap.
///
/// # Examples
///
/// ```
/// use langevin_core::binary::ChainStorage;
/// let mut storage = ChainStorage::<4>::new([0, 1, 0, 1]);
/// assert_eq!(storage.buffers().x.len(), 4);
/// ```
#[derive(Clone, Debug)]
pub struct ChainStorage<const D: usize> {
    x: [u8; D],
    grad: [f32; D],
    x_proposal: [u8; D],
    grad_proposal: [f32; D],
    flipped: [u32; D],
}

impl<const D: usize> ChainStorage<D> {
    /// Storage starting at state `x0`.
    pub const fn new(x0: [u8; D]) -> Self {
        Self {
            x: x0,
            grad: [0.0; D],
            x_proposal: [0; D],
            grad_proposal: [0.0; D],
            flipped: [0; D],
        }
    }

    /// Borrows the buffers for [`BinaryChain::new`].
    pub fn buffers(&mut self) -> ChainBuffers<'_> {
        ChainBuffers {
            x: &mut self.x,
            grad: &mut self.grad,
            x_proposal: &mut self.x_proposal,
            grad_proposal: &mut self.grad_proposal,
            flipped: &mut self.flipped,
        }
    }
}

/// Why a chain could not be started.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum InitError<E> {
    /// The target has dimension zero.
    EmptyDimension,
    /// A buffer does not have the target's dimension.
    Len(LenError),
    /// The initial state has an entry other than 0 or 1.
    StateOutOfRange {
        /// The coordinate.
        index: usize,
        /// Its value.
        value: u8,
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
            InitError::Len(e) => e.fmt(f),
            InitError::StateOutOfRange { index, value } => {
                write!(f, "initial state has x[{index}] = {value}, expected 0 or 1")
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

/// A binary chain: the current state with its cached log-density and gradient, plus room for a
/// proposal. Invariant: `log_density()` and `grad()` are the target's values at `state()`, both
/// finite, and every entry of `state()` is 0 or 1.
#[derive(Debug)]
pub struct BinaryChain<'a> {
    pub(crate) x: &'a mut [u8],
    pub(crate) grad: &'a mut [f32],
    pub(crate) x_proposal: &'a mut [u8],
    pub(crate) grad_proposal: &'a mut [f32],
    pub(crate) flipped: &'a mut [u32],
    pub(crate) log_density: f64,
}

impl<'a> BinaryChain<'a> {
    /// Starts a chain at `buffers.x`, evaluating the target there.
    ///
    /// # Errors
    ///
    /// See [`InitError`]; an unrecoverable or recoverable target error alike is returned as
    /// [`InitError::Target`], since there is no earlier state to fall back to.
    pub fn new<T: BinaryTarget + ?Sized>(
        buffers: ChainBuffers<'a>,
        target: &mut T,
    ) -> Result<Self, InitError<T::Error>> {
        let d = target.dim();
        if d == 0 {
            return Err(InitError::EmptyDimension);
        }
        LenError::check("x", d, buffers.x.len())?;
        LenError::check("grad", d, buffers.grad.len())?;
        LenError::check("x_proposal", d, buffers.x_proposal.len())?;
        LenError::check("grad_proposal", d, buffers.grad_proposal.len())?;
        LenError::check("flipped", d, buffers.flipped.len())?;
        if let Some((index, &value)) = buffers.x.iter().enumerate().find(|(_, v)| **v > 1) {
            return Err(InitError::StateOutOfRange { index, value });
        }
        let log_density = target
            .log_density_and_grad(buffers.x, buffers.grad)
            .map_err(InitError::Target)?;
        if !log_density.is_finite() || !all_finite(buffers.grad) {
            return Err(InitError::NonFinite);
        }
        Ok(Self {
            x: buffers.x,
            grad: buffers.grad,
            x_proposal: buffers.x_proposal,
            grad_proposal: buffers.grad_proposal,
            flipped: buffers.flipped,
            log_density,
        })
    }

    /// The dimension `d`.
    pub fn dim(&self) -> usize {
        self.x.len()
    }

    /// The current state.
    pub fn state(&self) -> &[u8] {
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

    /// Moves the chain to `x` (entries 0 or 1), re-evaluating the target. On error the chain
    /// keeps its previous state.
    ///
    /// # Errors
    ///
    /// As for [`BinaryChain::new`].
    pub fn reset<T: BinaryTarget + ?Sized>(
        &mut self,
        x: &[u8],
        target: &mut T,
    ) -> Result<(), InitError<T::Error>> {
        LenError::check("x", self.dim(), x.len())?;
        LenError::check("target", self.dim(), target.dim())?;
        if let Some((index, &value)) = x.iter().enumerate().find(|(_, v)| **v > 1) {
            return Err(InitError::StateOutOfRange { index, value });
        }
        for (d, &s) in self.x_proposal.iter_mut().zip(x) {
            *d = s;
        }
        let outcome = target.log_density_and_grad(self.x_proposal, self.grad_proposal);
        let restore = |chain: &mut Self, target: &mut T| {
            // Re-establish the old state in the target; it was valid before.
            let _ = target.log_density_and_grad(chain.x, chain.grad_proposal);
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

    /// Makes the proposal buffers current.
    #[inline]
    pub(crate) fn adopt_proposal(&mut self, log_density: f64) {
        core::mem::swap(&mut self.x, &mut self.x_proposal);
        core::mem::swap(&mut self.grad, &mut self.grad_proposal);
        self.log_density = log_density;
    }
}

/// Whether every entry is finite (a branch-free reduction that vectorises).
#[inline]
pub(crate) fn all_finite(v: &[f32]) -> bool {
    v.iter().fold(true, |ok, g| ok & g.is_finite())
}
