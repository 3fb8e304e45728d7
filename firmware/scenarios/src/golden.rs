//! Golden hashes: FNV-1a (64-bit) over the state bytes after every step, and separately over the
//! little-endian bytes of `f64::to_bits` of the chain's log-density after every step.
//!
//! Every chain starts at the all-zero state with step 0.5 and balance 0.5 and draws from
//! `Xoshiro256PlusPlus::seed_from_u64(seed)`. The lattice is the 8×8 periodic Ising model with
//! coupling 0.3 and field 0.1; the small models are those of [`crate::models`].

use crate::models::{
    GRAPH_COUPLINGS, GRAPH_FIELD, GRAPH_NEIGHBOURS, GRAPH_OFFSETS, QUAD_B, QUAD_W, RBM_B, RBM_C,
    RBM_HIDDEN, RBM_W, RBM_W_BF16, SMALL_DIM,
};
use crate::table::{MODEL_PINS, STEPS, same_name};
use crate::{Failure, Kernel};
use langevin_core::BinaryTarget;
use langevin_core::binary::{BinaryChain, ChainStorage, Dmala, Dula, FlipProposal};
use langevin_core::math::Libm;
use langevin_core::models::{Bf16, BinaryQuadratic, ConstDims, IsingGraph, IsingLattice, Rbm};
use langevin_core::{Binary, Kernel as CoreKernel};
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// FNV-1a offset basis.
pub const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
/// FNV-1a prime.
pub const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// Folds `bytes` into the FNV-1a hash `h`.
pub fn fnv1a(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(FNV_PRIME);
    }
    h
}

/// The models with golden values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Model {
    /// 8×8 periodic Ising lattice, coupling 0.3, field 0.1.
    Lattice8x8,
    /// The dense quadratic model on 16 coordinates.
    Quadratic16,
    /// The RBM with 16 visible and 8 hidden units.
    Rbm16x8,
    /// An RBM of the same size with `bf16` weights ([`crate::models::RBM_W_BF16`]).
    Rbm16x8Bf16,
    /// The Ising model on a 16-node ring with chords.
    Graph16,
}

impl Model {
    /// Every model, in a fixed order.
    pub const ALL: [Model; 5] = [
        Model::Lattice8x8,
        Model::Quadratic16,
        Model::Rbm16x8,
        Model::Rbm16x8Bf16,
        Model::Graph16,
    ];

    /// The model of a short name ([`Model::name`]).
    pub const fn from_name(name: &str) -> Option<Model> {
        let mut rest: &[Model] = &Model::ALL;
        while let [m, tail @ ..] = rest {
            if same_name(m.name(), name) {
                return Some(*m);
            }
            rest = tail;
        }
        None
    }

    /// A short lower-case name.
    pub const fn name(self) -> &'static str {
        match self {
            Model::Lattice8x8 => "ising8x8",
            Model::Quadratic16 => "quadratic16",
            Model::Rbm16x8 => "rbm16x8",
            Model::Rbm16x8Bf16 => "rbm16x8-bf16",
            Model::Graph16 => "graph16",
        }
    }
}

/// The two hashes of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hashes {
    /// FNV-1a over the state bytes after every step.
    pub state: u64,
    /// FNV-1a over the log-density bits after every step.
    pub log_density: u64,
}

/// A pinned run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Golden {
    /// The target.
    pub model: Model,
    /// The kernel.
    pub kernel: Kernel,
    /// The seed of `Xoshiro256PlusPlus::seed_from_u64`.
    pub seed: u64,
    /// Steps hashed.
    pub steps: u32,
    /// The expected hashes.
    pub hashes: Hashes,
}

/// The pinned values of [`crate::table::MODEL_PINS`], typed.
pub const GOLDEN: [Golden; MODEL_PINS.len()] = typed_table();

#[allow(
    clippy::indexing_slicing,
    clippy::panic,
    reason = "evaluated at compile time only: an unknown name is a compile error"
)]
const fn typed_table() -> [Golden; MODEL_PINS.len()] {
    let mut out = [Golden {
        model: Model::Lattice8x8,
        kernel: Kernel::Dula,
        seed: 0,
        steps: 0,
        hashes: Hashes {
            state: 0,
            log_density: 0,
        },
    }; MODEL_PINS.len()];
    let mut i = 0;
    while i < MODEL_PINS.len() {
        let p = MODEL_PINS[i];
        let (Some(model), Some(kernel)) = (Model::from_name(p.model), Kernel::from_name(p.kernel))
        else {
            panic!("a model pin of the golden table names no model or kernel");
        };
        out[i] = Golden {
            model,
            kernel,
            seed: p.seed,
            steps: STEPS,
            hashes: Hashes {
                state: p.state,
                log_density: p.log_density,
            },
        };
        i += 1;
    }
    out
}

/// Runs `steps` steps of `kernel` on `model` from the all-zero state and hashes them.
///
/// # Errors
///
/// A [`Failure`] if a constructor or a step refuses; none is expected for these models.
pub fn run(model: Model, kernel: Kernel, seed: u64, steps: u32) -> Result<Hashes, Failure> {
    match model {
        Model::Lattice8x8 => {
            let proposal = FlipProposal::new(0.5, 0.5).map_err(|_| Failure::Param)?;
            match kernel {
                Kernel::Dula => run_lattice(Dula::new(proposal), seed, steps),
                Kernel::Dmala => run_lattice(Dmala::new(proposal), seed, steps),
            }
        }
        Model::Quadratic16 => {
            let mut cache = [0.0f64; 2 * SMALL_DIM];
            let mut target =
                BinaryQuadratic::new(&QUAD_W, &QUAD_B, &mut cache).map_err(|_| Failure::Param)?;
            drive(&mut target, kernel, seed, steps)
        }
        Model::Rbm16x8 => {
            let mut cache = [0.0f64; 2 * RBM_HIDDEN];
            let mut target =
                Rbm::new(&RBM_W, &RBM_B, &RBM_C, &mut cache).map_err(|_| Failure::Param)?;
            drive(&mut target, kernel, seed, steps)
        }
        Model::Rbm16x8Bf16 => {
            let mut cache = [0.0f64; 2 * RBM_HIDDEN];
            let mut target =
                Rbm::<Libm, Bf16>::from_weights(&RBM_W_BF16, &RBM_B, &RBM_C, &mut cache)
                    .map_err(|_| Failure::Param)?;
            drive(&mut target, kernel, seed, steps)
        }
        Model::Graph16 => {
            let mut target = IsingGraph::new(
                &GRAPH_OFFSETS,
                &GRAPH_NEIGHBOURS,
                &GRAPH_COUPLINGS,
                &GRAPH_FIELD,
            )
            .map_err(|_| Failure::Param)?;
            drive(&mut target, kernel, seed, steps)
        }
    }
}

/// The 8×8 periodic Ising lattice of [`Model::Lattice8x8`] and of the kernel runs on it.
pub(crate) type Lattice8x8 = IsingLattice<ConstDims<8, 8>>;

/// The lattice of [`Model::Lattice8x8`]: coupling 0.3, field 0.1.
pub(crate) fn lattice_8x8() -> Result<Lattice8x8, Failure> {
    IsingLattice::new(0.3, 0.1, true).map_err(|_| Failure::Param)
}

/// Runs `steps` steps of `kernel` on the 8×8 lattice from the all-zero state and hashes them:
/// the lattice runs of [`run`] for one kernel alone.
///
/// # Errors
///
/// As for [`run`].
pub fn run_lattice<K: CoreKernel<Binary>>(
    kernel: K,
    seed: u64,
    steps: u32,
) -> Result<Hashes, Failure> {
    let mut target = lattice_8x8()?;
    let mut storage = ChainStorage::<64>::new([0; 64]);
    let mut chain = BinaryChain::new(storage.buffers(), &mut target).map_err(|_| Failure::Init)?;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    hash_steps(kernel, &mut target, &mut chain, &mut rng, steps)
}

/// Runs `kernel` on `target` (`SMALL_DIM` coordinates) from the all-zero state and hashes it.
fn drive<T: BinaryTarget + ?Sized>(
    target: &mut T,
    kernel: Kernel,
    seed: u64,
    steps: u32,
) -> Result<Hashes, Failure> {
    let mut storage = ChainStorage::<SMALL_DIM>::new([0; SMALL_DIM]);
    let mut chain = BinaryChain::new(storage.buffers(), target).map_err(|_| Failure::Init)?;
    let proposal = FlipProposal::new(0.5, 0.5).map_err(|_| Failure::Param)?;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    match kernel {
        Kernel::Dula => hash_steps(Dula::new(proposal), target, &mut chain, &mut rng, steps),
        Kernel::Dmala => hash_steps(Dmala::new(proposal), target, &mut chain, &mut rng, steps),
    }
}

fn hash_steps<K: CoreKernel<Binary>, T: BinaryTarget + ?Sized>(
    mut kernel: K,
    target: &mut T,
    chain: &mut BinaryChain<'_>,
    rng: &mut Xoshiro256PlusPlus,
    steps: u32,
) -> Result<Hashes, Failure> {
    let mut h = Hashes {
        state: FNV_OFFSET,
        log_density: FNV_OFFSET,
    };
    for _ in 0..steps {
        kernel.step(target, chain, rng).map_err(|_| Failure::Step)?;
        h.state = fnv1a(h.state, chain.state());
        h.log_density = fnv1a(h.log_density, &chain.log_density().to_bits().to_le_bytes());
    }
    Ok(h)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_reference_vectors() {
        // From the FNV reference: "" and "a".
        assert_eq!(fnv1a(FNV_OFFSET, b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(FNV_OFFSET, b"a"), 0xaf63_dc4c_8601_ec8c);
    }

    #[test]
    fn golden_values_hold_on_the_host() {
        for g in GOLDEN {
            let h = run(g.model, g.kernel, g.seed, g.steps);
            assert_eq!(
                h,
                Ok(g.hashes),
                "{} {} seed {}",
                g.model.name(),
                g.kernel.name(),
                g.seed
            );
        }
    }
}
