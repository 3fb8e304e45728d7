//! Owned buffers for one chain and for a batch of chains: the heap counterparts of the core's
//! fixed-size storage and caller-owned batch buffers.

use langevin_core::batch::BatchBuffers;
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

/// The buffers of a batch of chains of a binary or ordinal domain in `Vec`s (gradients of `d`
/// entries per chain). [`buffers`](Self::buffers) lends them to
/// [`ChainBatch::new`](langevin_core::batch::ChainBatch::new).
///
/// # Examples
///
/// ```
/// use langevin_std::core_kernels::binary::{ChainBatch, Binary};
/// use langevin_std::core_kernels::dense::Blocked;
/// use langevin_std::core_kernels::models::QuadraticBatch;
/// use langevin_std::run::BatchVecs;
///
/// let (w, b) = ([0.0f32, 1.0, 0.0, 0.0], [0.5f32, -0.5]); // d = 2
/// let (mut s, mut cache) = (vec![0.0; 4], vec![0.0; 2 * 3 * 3]);
/// let mut target = QuadraticBatch::<Blocked>::new(&w, &b, 3, &mut s, &mut cache).unwrap();
/// let mut vecs = BatchVecs::<Binary>::new(vec![0, 1, 1, 1, 0, 0], 2); // 3 chains
/// let batch = ChainBatch::new(vecs.buffers(), &mut target).unwrap();
/// assert_eq!(batch.log_density(1), 1.0);
/// ```
#[derive(Clone, Debug, Default)]
pub struct BatchVecs<D: Domain> {
    /// The states, chain by chain.
    pub x: Vec<D::Value>,
    /// `∇U` at the states.
    pub grad: Vec<f32>,
    /// `U` at the states.
    pub log_density: Vec<f64>,
    /// Room for the proposals.
    pub x_proposal: Vec<D::Value>,
    /// Room for the gradients at the proposals.
    pub grad_proposal: Vec<f32>,
    /// Room for `U` at the proposals.
    pub log_density_proposal: Vec<f64>,
    /// Room for the indices each proposal changes.
    pub changed: Vec<u32>,
    /// Room for each chain's number of changed indices.
    pub counts: Vec<u32>,
    /// Room for each chain's forward `log q`.
    pub log_q: Vec<f64>,
    /// Room for each chain's log Metropolis uniform.
    pub log_u: Vec<f64>,
    /// Room for each chain's jump.
    pub jumps: Vec<u64>,
}

impl<D: Domain> BatchVecs<D> {
    /// Buffers for the chains starting at `x0`, chain by chain, `dim` entries each (a length
    /// that is not a multiple of `dim` is refused by the batch).
    pub fn new(x0: Vec<D::Value>, dim: usize) -> Self {
        let n = x0.len() / dim.max(1);
        let nd = n * dim;
        Self {
            x: x0,
            grad: vec![0.0; nd],
            log_density: vec![0.0; n],
            x_proposal: vec![D::Value::default(); nd],
            grad_proposal: vec![0.0; nd],
            log_density_proposal: vec![0.0; n],
            changed: vec![0; nd],
            counts: vec![0; n],
            log_q: vec![0.0; n],
            log_u: vec![0.0; n],
            jumps: vec![0; n],
        }
    }

    /// Lends the buffers to a batch.
    pub fn buffers(&mut self) -> BatchBuffers<'_, D> {
        BatchBuffers {
            x: &mut self.x,
            grad: &mut self.grad,
            log_density: &mut self.log_density,
            x_proposal: &mut self.x_proposal,
            grad_proposal: &mut self.grad_proposal,
            log_density_proposal: &mut self.log_density_proposal,
            changed: &mut self.changed,
            counts: &mut self.counts,
            log_q: &mut self.log_q,
            log_u: &mut self.log_u,
            jumps: &mut self.jumps,
        }
    }
}
