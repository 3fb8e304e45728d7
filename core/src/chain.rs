//! A chain's state and its caller-owned buffers, for every domain.

use crate::domain::{Binary, Categorical, Domain, Ordinal};
use crate::error::{InitError, LenError};
use crate::target::Eval;

/// The buffers a [`Chain`] works in. `x`, `x_proposal` and `changed` have length `d`; `grad`
/// and `grad_proposal` the domain's gradient length (`d`, or `d·S` for categorical states);
/// `scratch` has length `S` (empty for binary states). `x` holds the initial state.
#[derive(Debug)]
pub struct Buffers<'a, V> {
    /// The initial state on entry; the chain's current state afterwards.
    pub x: &'a mut [V],
    /// `∇U` at the current state.
    pub grad: &'a mut [f32],
    /// Room for a proposed state.
    pub x_proposal: &'a mut [V],
    /// Room for the gradient at a proposed state.
    pub grad_proposal: &'a mut [f32],
    /// Room for the indices a proposal changes.
    pub changed: &'a mut [u32],
    /// Per-coordinate work space of `S` values (categorical proposals, Gibbs conditionals).
    pub scratch: &'a mut [f64],
}

/// The buffers of a chain over labels (ordinal or categorical).
pub type LabelBuffers<'a> = Buffers<'a, u16>;

/// The buffers a binary chain works in, all of length `d`. `x` holds the initial state.
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

impl<'a> From<ChainBuffers<'a>> for Buffers<'a, u8> {
    fn from(b: ChainBuffers<'a>) -> Self {
        Buffers {
            x: b.x,
            grad: b.grad,
            x_proposal: b.x_proposal,
            grad_proposal: b.grad_proposal,
            changed: b.flipped,
            scratch: &mut [],
        }
    }
}

/// Fixed-size storage for one binary chain of dimension `D`: about `14·D` bytes, no heap.
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

    /// Borrows the buffers for [`Chain::new`].
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

/// Fixed-size storage for one chain over `S` labels in `D` coordinates, no heap. `G` is one
/// coordinate's gradient: `f32` for ordinal chains, `[f32; S]` for categorical ones.
#[derive(Clone, Debug)]
pub struct LabelStorage<const D: usize, const S: usize, G> {
    x: [u16; D],
    grad: [G; D],
    x_proposal: [u16; D],
    grad_proposal: [G; D],
    changed: [u32; D],
    scratch: [f64; S],
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
pub type OrdinalStorage<const D: usize, const S: usize> = LabelStorage<D, S, f32>;

/// Fixed-size storage for one categorical chain of dimension `D` over `S` labels, no heap.
///
/// # Examples
///
/// ```
/// use langevin_core::categorical::CategoricalStorage;
/// let mut storage = CategoricalStorage::<3, 4>::new([0, 3, 1]);
/// assert_eq!(storage.buffers().grad.len(), 12);
/// ```
pub type CategoricalStorage<const D: usize, const S: usize> = LabelStorage<D, S, [f32; S]>;

/// One coordinate's gradient in a [`LabelStorage`]: a single `f32` or a row of them.
pub trait GradCell: Copy {
    /// The zero gradient.
    const ZERO: Self;
    /// The cells as one flat slice.
    fn flatten(cells: &mut [Self]) -> &mut [f32];
}

impl GradCell for f32 {
    const ZERO: Self = 0.0;
    fn flatten(cells: &mut [Self]) -> &mut [f32] {
        cells
    }
}

impl<const S: usize> GradCell for [f32; S] {
    const ZERO: Self = [0.0; S];
    fn flatten(cells: &mut [Self]) -> &mut [f32] {
        cells.as_flattened_mut()
    }
}

impl<const D: usize, const S: usize, G: GradCell> LabelStorage<D, S, G> {
    /// Storage starting at state `x0`.
    pub const fn new(x0: [u16; D]) -> Self {
        Self {
            x: x0,
            grad: [G::ZERO; D],
            x_proposal: [0; D],
            grad_proposal: [G::ZERO; D],
            changed: [0; D],
            scratch: [0.0; S],
        }
    }

    /// Borrows the buffers for [`Chain::new`].
    pub fn buffers(&mut self) -> LabelBuffers<'_> {
        Buffers {
            x: &mut self.x,
            grad: G::flatten(&mut self.grad),
            x_proposal: &mut self.x_proposal,
            grad_proposal: G::flatten(&mut self.grad_proposal),
            changed: &mut self.changed,
            scratch: &mut self.scratch,
        }
    }
}

/// A chain in domain `D`: the current state with its cached log-density and gradient, room for
/// a proposal, and a scratch row. Invariant: `log_density()` and `grad()` are the target's values
/// at `state()`, both finite, and every entry of `state()` is below `states()`.
///
/// Use the aliases [`BinaryChain`], [`OrdinalChain`] and [`CategoricalChain`].
#[derive(Debug)]
pub struct Chain<'a, D: Domain> {
    pub(crate) x: &'a mut [D::Value],
    pub(crate) grad: &'a mut [f32],
    pub(crate) x_proposal: &'a mut [D::Value],
    pub(crate) grad_proposal: &'a mut [f32],
    pub(crate) changed: &'a mut [u32],
    pub(crate) scratch: &'a mut [f64],
    pub(crate) log_density: f64,
    pub(crate) states: usize,
    domain: D,
}

/// A chain over binary states.
pub type BinaryChain<'a> = Chain<'a, Binary>;

/// A chain over ordinal states.
pub type OrdinalChain<'a> = Chain<'a, Ordinal>;

/// A chain over categorical states.
pub type CategoricalChain<'a> = Chain<'a, Categorical>;

/// A chain over labels, ordinal or categorical (the older name of [`Chain`]).
pub type LabelChain<'a, D> = Chain<'a, D>;

impl<'a> Chain<'a, Ordinal> {
    /// Starts an ordinal chain: [`Chain::new`].
    ///
    /// # Errors
    ///
    /// See [`InitError`].
    pub fn new_ordinal<T: Eval<Ordinal> + ?Sized>(
        buffers: LabelBuffers<'a>,
        target: &mut T,
    ) -> Result<Self, InitError<T::Error>> {
        Self::new(buffers, target)
    }
}

impl<'a> Chain<'a, Categorical> {
    /// Starts a categorical chain: [`Chain::new`].
    ///
    /// # Errors
    ///
    /// See [`InitError`].
    pub fn new_categorical<T: Eval<Categorical> + ?Sized>(
        buffers: LabelBuffers<'a>,
        target: &mut T,
    ) -> Result<Self, InitError<T::Error>> {
        Self::new(buffers, target)
    }
}

impl<'a, D: Domain> Chain<'a, D> {
    /// Starts a chain at `buffers.x`, evaluating the target there.
    ///
    /// # Errors
    ///
    /// See [`InitError`]; an unrecoverable or recoverable target error alike is returned as
    /// [`InitError::Target`], since there is no earlier state to fall back to.
    pub fn new<T: Eval<D> + ?Sized>(
        buffers: impl Into<Buffers<'a, D::Value>>,
        target: &mut T,
    ) -> Result<Self, InitError<T::Error>> {
        let buffers = buffers.into();
        let (d, s) = (target.dim(), target.states());
        if d == 0 {
            return Err(InitError::EmptyDimension);
        }
        if !(2..=usize::from(u16::MAX)).contains(&s) {
            return Err(InitError::States(s));
        }
        let g = D::grad_len(d, s).ok_or(InitError::States(s))?;
        LenError::check("x", d, buffers.x.len())?;
        LenError::check("grad", g, buffers.grad.len())?;
        LenError::check("x_proposal", d, buffers.x_proposal.len())?;
        LenError::check("grad_proposal", g, buffers.grad_proposal.len())?;
        LenError::check(D::CHANGED_BUFFER, d, buffers.changed.len())?;
        LenError::check("scratch", D::scratch_len(s), buffers.scratch.len())?;
        check_states::<D, _>(buffers.x, s)?;
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
            domain: D::default(),
        })
    }

    /// Moves the chain to `x`, re-evaluating the target. On error the chain keeps its state.
    ///
    /// # Errors
    ///
    /// As for [`new`](Self::new).
    pub fn reset<T: Eval<D> + ?Sized>(
        &mut self,
        x: &[D::Value],
        target: &mut T,
    ) -> Result<(), InitError<T::Error>> {
        LenError::check("x", self.dim(), x.len())?;
        LenError::check("target", self.dim(), target.dim())?;
        if target.states() != self.states {
            return Err(InitError::States(target.states()));
        }
        check_states::<D, _>(x, self.states)?;
        crate::slices::copy(self.x_proposal, x);
        let outcome = target.eval(self.x_proposal, self.grad_proposal);
        let restore = |chain: &mut Self, target: &mut T| {
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

    /// Puts back the `U` and `∇U` a chain held at its current state in an earlier run (a
    /// checkpoint's), in place of those a fresh evaluation there gave: a model that keeps
    /// running sums need not reproduce them to the last bit, and the next moves depend on
    /// them. Nothing changes on error.
    ///
    /// # Errors
    ///
    /// [`InitError::Len`] for a gradient of another length, [`InitError::NonFinite`] for a
    /// non-finite value.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::convert::Infallible;
    /// use langevin_core::binary::{BinaryChain, ChainStorage};
    /// use langevin_core::{BinaryTarget, InitError};
    ///
    /// struct Tilt;
    /// impl BinaryTarget for Tilt {
    ///     type Error = Infallible;
    ///     fn dim(&self) -> usize {
    ///         2
    ///     }
    ///     fn log_density_and_grad(&mut self, x: &[u8], g: &mut [f32]) -> Result<f64, Infallible> {
    ///         g.fill(0.5);
    ///         Ok(0.5 * f64::from(x[0] + x[1]))
    ///     }
    /// }
    ///
    /// let mut storage = ChainStorage::<2>::new([1, 0]);
    /// let mut chain = BinaryChain::new(storage.buffers(), &mut Tilt).unwrap();
    /// // The values an earlier run had there, a rounding away from a fresh evaluation's.
    /// chain.restore_cached::<Infallible>(0.5000000000000001, &[0.5, 0.5]).unwrap();
    /// assert_eq!(chain.log_density(), 0.5000000000000001);
    /// let refused = chain.restore_cached::<Infallible>(f64::NAN, &[0.5, 0.5]);
    /// assert!(matches!(refused, Err(InitError::NonFinite)));
    /// assert!(chain.restore_cached::<Infallible>(0.5, &[0.5]).is_err());
    /// assert_eq!(chain.log_density(), 0.5000000000000001);
    /// ```
    pub fn restore_cached<E>(
        &mut self,
        log_density: f64,
        grad: &[f32],
    ) -> Result<(), InitError<E>> {
        LenError::check("grad", self.grad.len(), grad.len())?;
        if !log_density.is_finite() || !all_finite(grad) {
            return Err(InitError::NonFinite);
        }
        crate::slices::copy(self.grad, grad);
        self.log_density = log_density;
        Ok(())
    }

    /// The dimension `d`.
    pub fn dim(&self) -> usize {
        self.x.len()
    }

    /// `(d, S)` once `target` is checked to have the chain's dimension and number of values:
    /// the check every kernel makes before it draws.
    #[inline(always)]
    pub(crate) fn check_target<T: Eval<D> + ?Sized>(
        &self,
        target: &T,
    ) -> Result<(usize, usize), LenError> {
        let (d, s) = (self.dim(), self.states);
        LenError::check("target", d, target.dim())?;
        LenError::check("states", s, target.states())?;
        Ok((d, s))
    }

    /// The number of values `S` per coordinate (2 for binary chains).
    pub fn states(&self) -> usize {
        self.states
    }

    /// The domain.
    pub fn domain(&self) -> D {
        self.domain
    }

    /// The current state.
    pub fn state(&self) -> &[D::Value] {
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

/// Checks that every entry of `x` is below `s` (the index is into the whole of `x`).
pub(crate) fn check_states<D: Domain, E>(x: &[D::Value], s: usize) -> Result<(), InitError<E>> {
    match x
        .iter()
        .enumerate()
        .find(|(_, v)| Into::<usize>::into(**v) >= s)
    {
        Some((index, &value)) => Err(InitError::StateOutOfRange {
            index,
            value: Into::<usize>::into(value) as u16,
        }),
        None => Ok(()),
    }
}

/// Whether every entry is finite (a branch-free reduction that vectorises).
#[inline]
pub(crate) fn all_finite(v: &[f32]) -> bool {
    v.iter().fold(true, |ok, g| ok & g.is_finite())
}
