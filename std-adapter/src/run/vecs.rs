//! Owned buffers for one chain: the heap counterpart of the core's fixed-size storage.

use langevin_core::chain::Buffers;
use langevin_core::domain::Domain;

/// The buffers of one chain of any domain in `Vec`s, for dimensions known only at run time.
/// [`buffers`](Self::buffers) lends them to `Chain::new`.
///
/// # Examples
///
/// ```
/// use langevin_std::core_kernels::binary::BinaryChain;
/// use langevin_std::core_kernels::models::{Dims, IsingLattice};
/// use langevin_std::run::ChainVecs;
///
/// let mut model = IsingLattice::with_dims(Dims { rows: 3, cols: 3 }, 0.2, 0.0, true).unwrap();
/// let mut vecs = ChainVecs::new(&[0u8; 9]);
/// let chain = BinaryChain::new(vecs.buffers(), &mut model).unwrap();
/// assert_eq!(chain.state().len(), 9);
/// ```
#[derive(Clone, Debug, Default)]
pub struct ChainVecs<V> {
    /// The state.
    pub x: Vec<V>,
    /// `∇U` at the state (`d` entries, or `d·S` for categorical chains).
    pub grad: Vec<f32>,
    /// Room for a proposal.
    pub x_proposal: Vec<V>,
    /// Room for the gradient at a proposal.
    pub grad_proposal: Vec<f32>,
    /// Room for the indices a proposal changes.
    pub changed: Vec<u32>,
    /// Work space of `S` values (empty for binary chains).
    pub scratch: Vec<f64>,
}

impl<V: Copy + Default> ChainVecs<V> {
    /// Buffers starting at `x0` with gradients of `d` entries and no scratch row: what a binary
    /// or an ordinal chain without Gibbs needs.
    pub fn new(x0: &[V]) -> Self {
        Self::with_lengths(x0, x0.len(), 0)
    }

    /// Buffers for a label chain starting at `x0`: `states` values and gradients of
    /// `grad_len` entries.
    pub fn labels(x0: &[V], states: usize, grad_len: usize) -> Self {
        Self::with_lengths(x0, grad_len, states)
    }

    /// Buffers starting at `x0`, gradients of `grad_len` entries, a scratch row of `scratch`.
    pub fn with_lengths(x0: &[V], grad_len: usize, scratch: usize) -> Self {
        let d = x0.len();
        Self {
            x: x0.to_vec(),
            grad: vec![0.0; grad_len],
            x_proposal: vec![V::default(); d],
            grad_proposal: vec![0.0; grad_len],
            changed: vec![0; d],
            scratch: vec![0.0; scratch],
        }
    }

    /// Buffers of domain `D` starting at `x0`, for `states` values per coordinate; `None` if
    /// the gradient length overflows.
    pub fn for_domain<D: Domain<Value = V>>(x0: &[V], states: usize) -> Option<Self> {
        let g = D::grad_len(x0.len(), states)?;
        Some(Self::with_lengths(x0, g, D::scratch_len(states)))
    }

    /// Lends the buffers to a chain.
    pub fn buffers(&mut self) -> Buffers<'_, V> {
        Buffers {
            x: &mut self.x,
            grad: &mut self.grad,
            x_proposal: &mut self.x_proposal,
            grad_proposal: &mut self.grad_proposal,
            changed: &mut self.changed,
            scratch: &mut self.scratch,
        }
    }
}
