//! Which kernel a run uses, chosen by name and parameters.

use langevin_core::BinaryTarget;
use langevin_core::ParamError;
use langevin_core::binary::{
    BinaryChain, BinaryKernel, Dmala, Dula, FlipProposal, StepError, StepReport,
};
use rand_core::Rng;

/// A binary sampler and its parameters, as chosen on the command line.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum SamplerSpec {
    /// Discrete unadjusted Langevin.
    Dula {
        /// Step `a`.
        step: f64,
        /// Balance `b`.
        balance: f64,
    },
    /// Discrete Metropolis-adjusted Langevin.
    Dmala {
        /// Step `a`.
        step: f64,
        /// Balance `b`.
        balance: f64,
    },
}

impl SamplerSpec {
    /// The sampler's name as the command line spells it.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Dula { .. } => "dula",
            Self::Dmala { .. } => "dmala",
        }
    }

    /// `(step, balance)` where the sampler has them.
    pub fn step_balance(&self) -> (f64, f64) {
        match *self {
            Self::Dula { step, balance } | Self::Dmala { step, balance } => (step, balance),
        }
    }

    /// A fresh kernel for one chain.
    ///
    /// # Errors
    ///
    /// [`ParamError`] for invalid parameters.
    pub fn kernel(&self) -> Result<AnyBinaryKernel, ParamError> {
        Ok(match *self {
            Self::Dula { step, balance } => {
                AnyBinaryKernel::Dula(Dula::new(FlipProposal::with_math(step, balance)?))
            }
            Self::Dmala { step, balance } => {
                AnyBinaryKernel::Dmala(Dmala::new(FlipProposal::with_math(step, balance)?))
            }
        })
    }
}

/// Any of the binary kernels, dispatched by a `match` per step.
#[derive(Clone, Copy, Debug)]
pub enum AnyBinaryKernel {
    /// See [`Dula`].
    Dula(Dula<'static, crate::FlipMathImpl>),
    /// See [`Dmala`].
    Dmala(Dmala<'static, crate::FlipMathImpl>),
}

impl BinaryKernel for AnyBinaryKernel {
    fn step<T, R>(
        &mut self,
        target: &mut T,
        chain: &mut BinaryChain<'_>,
        rng: &mut R,
    ) -> Result<StepReport, StepError<T::Error>>
    where
        T: BinaryTarget + ?Sized,
        R: Rng + ?Sized,
    {
        match self {
            Self::Dula(k) => k.step(target, chain, rng),
            Self::Dmala(k) => k.step(target, chain, rng),
        }
    }
}
