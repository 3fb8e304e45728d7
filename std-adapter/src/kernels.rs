//! Kernels that own the memory their core kernel borrows, for the runners (one per chain).

use langevin_core::dlmc::DLMC_TARGET_ACCEPTANCE;
use langevin_core::path_auxiliary::{
    PATH_TARGET_ACCEPTANCE, PathAdaptation, PathAuxiliary, PathBuffers, PathDomain,
};
use langevin_core::{Chain, Eval, Kernel, LenError, ParamError, StepError, StepReport};
use rand_core::Rng;
use serde_json::{Value, json};

/// The path length of a [`PathSampler`]: fixed, or adapted during the burn-in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PathLength {
    /// A fixed length.
    Fixed(PathAuxiliary),
    /// Adapted toward an acceptance rate during the burn-in, then frozen.
    Adapted(PathAdaptation),
}

/// The path auxiliary sampler with its own buffers (the weights sized on the first step, the
/// path at the largest length).
#[derive(Clone, Debug)]
pub struct PathSampler {
    length: PathLength,
    weights: Vec<f64>,
    path: Vec<u32>,
}

impl PathSampler {
    /// Paths of `length` moves, or (`None`) a length adapted during the first `burn_in` steps
    /// toward acceptance [`PATH_TARGET_ACCEPTANCE`], starting at 1 and at most `dim`.
    ///
    /// # Errors
    ///
    /// [`ParamError::OutOfRange`] for a length of 0.
    pub fn new(length: Option<usize>, dim: usize, burn_in: u64) -> Result<Self, ParamError> {
        let length = match length {
            Some(l) => PathLength::Fixed(PathAuxiliary::new(l)?),
            None => PathLength::Adapted(PathAdaptation::new(
                1,
                dim.max(1),
                burn_in,
                PATH_TARGET_ACCEPTANCE,
            )?),
        };
        let max = match length {
            PathLength::Fixed(p) => p.length(),
            PathLength::Adapted(_) => dim.max(1),
        };
        Ok(Self {
            length,
            weights: Vec::new(),
            path: vec![0; max],
        })
    }

    /// The path length in use now.
    pub fn length(&self) -> usize {
        match self.length {
            PathLength::Fixed(p) => p.length(),
            PathLength::Adapted(a) => a.length(),
        }
    }

    /// Whether the length is still being adapted.
    pub fn is_tuning(&self) -> bool {
        matches!(self.length, PathLength::Adapted(a) if !a.is_frozen())
    }

    /// The adapted length as JSON (`None` for a fixed length).
    pub fn tuned(&self) -> Option<Value> {
        match self.length {
            PathLength::Fixed(_) => None,
            PathLength::Adapted(a) => Some(json!({
                "path_length": a.length(),
                "radius": a.radius(),
                "target_acceptance": PATH_TARGET_ACCEPTANCE,
                "frozen": a.is_frozen(),
            })),
        }
    }
}

impl<D: PathDomain> Kernel<D> for PathSampler {
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
        let moves = D::moves(chain.dim(), chain.states()).ok_or(LenError {
            buffer: "moves",
            expected: u32::MAX as usize,
            found: usize::MAX,
        })?;
        if self.weights.len() != moves {
            self.weights.resize(moves, 0.0);
        }
        let mut buffers = PathBuffers {
            weights: &mut self.weights,
            path: &mut self.path,
        };
        match &mut self.length {
            PathLength::Fixed(p) => p.step(target, chain, &mut buffers, rng),
            PathLength::Adapted(a) => a.step(target, chain, &mut buffers, rng),
        }
    }
}

/// DLMC's adapted time as JSON.
pub fn dlmc_json(time: f64, frozen: bool) -> Value {
    json!({
        "time": time,
        "target_acceptance": DLMC_TARGET_ACCEPTANCE,
        "frozen": frozen,
    })
}
