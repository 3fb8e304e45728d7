//! The stochastic-gradient integrators of `langevin-core` over a potential whose per-term
//! gradients come from a C function.

use crate::callback::CallbackError;
use crate::kernels::{count, key_values, number};
use crate::{
    LGV_ERR_CALLBACK, LGV_ERR_CALLBACK_NON_FINITE, LGV_ERR_DIVERGED, LGV_ERR_LENGTH,
    LGV_ERR_PARAMETER, LGV_ERR_PARAMETER_OUT_OF_RANGE, LGV_ERR_PARAMETER_VALUE, LGV_ERR_STEP,
    LGV_ERR_UNKNOWN_KERNEL, LGV_ERR_UNSUPPORTED_KERNEL, LgvStatus, param_status,
};
use core::ffi::c_void;
use langevin_core::continuous::{
    Access, BuildError, Ewsg, EwsgSettings, Langevin, LangevinSettings, SgStep, StepError,
    SumTarget, Underdamped, UnderdampedSettings,
};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Indices per callback call: a minibatch of up to this many terms is one call, a larger one
/// consecutive calls of this many (the buffer is on the stack: the library has no heap).
pub(crate) const BLOCK: usize = 64;

/// The per-term gradient callback, non-null.
pub(crate) type TermFn =
    unsafe extern "C" fn(*mut c_void, *const f64, usize, *const u32, usize, f64, *mut f64) -> i32;

/// A potential `V = Σ_i V_i` whose gradients a C function adds up.
#[derive(Debug)]
pub(crate) struct SumCallback {
    pub(crate) f: TermFn,
    pub(crate) user: *mut c_void,
    pub(crate) dim: usize,
    pub(crate) terms: usize,
}

impl SumCallback {
    fn call(
        &mut self,
        theta: &[f64],
        indices: &[u32],
        scale: f64,
        acc: &mut [f64],
    ) -> Result<(), CallbackError> {
        // SAFETY: `theta` and `acc` have `dim` entries (the integrator checks the shape),
        // `indices` is a live slice; the function and `user` follow the documented contract.
        let code = unsafe {
            (self.f)(
                self.user,
                theta.as_ptr(),
                theta.len(),
                indices.as_ptr(),
                indices.len(),
                scale,
                acc.as_mut_ptr(),
            )
        };
        match code {
            0 => Ok(()),
            c => Err(CallbackError::Aborted(c)),
        }
    }
}

impl SumTarget for SumCallback {
    type Error = CallbackError;

    fn dim(&self) -> usize {
        self.dim
    }

    fn num_terms(&self) -> usize {
        self.terms
    }

    fn add_term_grad(
        &mut self,
        i: usize,
        theta: &[f64],
        scale: f64,
        acc: &mut [f64],
    ) -> Result<(), CallbackError> {
        self.call(theta, &[i as u32], scale, acc)
    }

    /// The minibatch's indices in the order drawn, in calls of up to [`BLOCK`] indices: one
    /// call for a minibatch of up to [`BLOCK`] terms.
    fn add_batch_grad(
        &mut self,
        batch: &mut dyn Iterator<Item = usize>,
        theta: &[f64],
        scale: f64,
        acc: &mut [f64],
    ) -> Result<(), CallbackError> {
        let mut block = [0u32; BLOCK];
        loop {
            // `zip` asks the block for a slot first, so no index is drawn past a full block.
            let mut n = 0;
            for (slot, i) in block.iter_mut().zip(&mut *batch) {
                // Indices are below `terms`, which fits `u32` (checked at construction).
                *slot = i as u32;
                n += 1;
            }
            if n == 0 {
                return Ok(());
            }
            self.call(theta, block.get(..n).unwrap_or(&[]), scale, acc)?;
            if n < BLOCK {
                return Ok(());
            }
        }
    }

    /// Every term in index order, in calls of up to [`BLOCK`] indices.
    fn add_full_grad(
        &mut self,
        theta: &[f64],
        scale: f64,
        acc: &mut [f64],
    ) -> Result<(), CallbackError> {
        let mut block = [0u32; BLOCK];
        let mut start = 0usize;
        while start < self.terms {
            let n = (self.terms - start).min(block.len());
            for (k, v) in block.iter_mut().enumerate() {
                *v = (start + k) as u32;
            }
            self.call(theta, block.get(..n).unwrap_or(&[]), scale, acc)?;
            start += n;
        }
        Ok(())
    }
}

/// An integrator over caller memory.
#[derive(Debug)]
pub(crate) enum SgChain {
    Langevin(Langevin<'static>),
    Underdamped(Underdamped<'static>),
    Ewsg(Ewsg<'static>),
}

impl SgChain {
    pub(crate) fn theta(&self) -> &[f64] {
        match self {
            SgChain::Langevin(c) => c.theta(),
            SgChain::Underdamped(c) => c.theta(),
            SgChain::Ewsg(c) => c.theta(),
        }
    }

    pub(crate) fn step(
        &mut self,
        target: &mut SumCallback,
        rng: &mut Xoshiro256PlusPlus,
    ) -> Result<SgStep, (LgvStatus, i32)> {
        let r = match self {
            SgChain::Langevin(c) => c.step(target, rng),
            SgChain::Underdamped(c) => c.step(target, rng),
            SgChain::Ewsg(c) => c.step(target, rng),
        };
        r.map_err(|e| match e {
            StepError::Target(e) => (LGV_ERR_CALLBACK, e.code()),
            StepError::Shape { .. } => (LGV_ERR_LENGTH, 0),
            StepError::NonFiniteGradient => (LGV_ERR_CALLBACK_NON_FINITE, 0),
            StepError::NonFiniteState => (LGV_ERR_DIVERGED, 0),
        })
    }
}

impl CallbackError {
    fn code(&self) -> i32 {
        match self {
            CallbackError::Aborted(c) => *c,
            _ => 0,
        }
    }
}

/// An integrator by the command line's name (`lmc`, `sgld`, `sghmc`, `ewsg`) with its
/// parameters.
#[derive(Clone, Copy, Debug)]
pub(crate) enum SgSpec {
    Langevin(LangevinSettings),
    Underdamped(UnderdampedSettings),
    Ewsg(EwsgSettings),
}

const SG: &[(&str, &[&str])] = &[
    ("lmc", &["step"]),
    ("sgld", &["step", "batch", "access"]),
    ("sghmc", &["step", "friction", "batch", "access"]),
    ("ewsg", &["step", "friction", "batch", "index-chain"]),
];

impl SgSpec {
    pub(crate) fn parse(name: &[u8], params: &[u8]) -> Result<Self, LgvStatus> {
        if name == b"agld" {
            return Err(LGV_ERR_UNSUPPORTED_KERNEL);
        }
        let (name, keys) = SG
            .iter()
            .find(|(n, _)| n.as_bytes() == name)
            .ok_or(LGV_ERR_UNKNOWN_KERNEL)?;
        let (mut step, mut batch, mut friction, mut moves) = (None, 1usize, 1.0, 1u32);
        let mut access = Access::Random;
        for pair in key_values(params, keys) {
            match pair? {
                ("step", v) => step = Some(number(v)?),
                ("batch", v) => batch = count(v)?,
                ("friction", v) => friction = number(v)?,
                ("index-chain", v) => moves = count(v)? as u32,
                ("access", b"random") => access = Access::Random,
                ("access", b"reshuffle") => access = Access::Reshuffle,
                ("access", b"cyclic") => access = Access::Cyclic,
                _ => return Err(LGV_ERR_PARAMETER_VALUE),
            }
        }
        // The command line has no default step: it must be given.
        let step = step.ok_or(LGV_ERR_STEP)?;
        let p = param_status;
        Ok(match *name {
            "lmc" => SgSpec::Langevin(LangevinSettings::lmc(step).map_err(p)?),
            "sgld" => SgSpec::Langevin(
                LangevinSettings::sgld(step, batch)
                    .map_err(p)?
                    .with_access(access),
            ),
            "sghmc" => SgSpec::Underdamped(
                UnderdampedSettings::sghmc(step, friction, batch)
                    .map_err(p)?
                    .with_access(access),
            ),
            _ => SgSpec::Ewsg(
                EwsgSettings::new(step, friction)
                    .and_then(|s| s.with_batch(batch))
                    .map_err(p)?
                    .with_index_chain(moves),
            ),
        })
    }

    /// The `f64` and `u32` workspace lengths for `dim` coordinates and `terms` terms.
    pub(crate) fn workspace(&self, dim: usize, terms: usize) -> Result<(usize, usize), LgvStatus> {
        let f = |n: Option<usize>| n.ok_or(crate::LGV_ERR_SIZE_OVERFLOW);
        Ok(match self {
            SgSpec::Langevin(s) => (f(dim.checked_mul(3))?, Langevin::index_len(s, terms)),
            SgSpec::Underdamped(s) => (f(dim.checked_mul(4))?, Underdamped::index_len(s, terms)),
            SgSpec::Ewsg(_) => (f(dim.checked_mul(5))?, 0),
        })
    }

    pub(crate) fn build(
        &self,
        dim: usize,
        terms: usize,
        theta0: &[f64],
        work: &'static mut [f64],
        index: &'static mut [u32],
    ) -> Result<SgChain, LgvStatus> {
        let b = build_status;
        Ok(match *self {
            SgSpec::Langevin(s) => {
                SgChain::Langevin(Langevin::new(s, dim, terms, theta0, work, index).map_err(b)?)
            }
            SgSpec::Underdamped(s) => SgChain::Underdamped(
                Underdamped::new(s, dim, terms, theta0, work, index).map_err(b)?,
            ),
            SgSpec::Ewsg(s) => SgChain::Ewsg(Ewsg::new(s, dim, terms, theta0, work).map_err(b)?),
        })
    }
}

fn build_status(e: BuildError) -> LgvStatus {
    match e {
        BuildError::Param(e) => param_status(e),
        BuildError::NoTerms
        | BuildError::TooManyTerms(_)
        | BuildError::BatchTooLarge { .. }
        | BuildError::TooManyEvaluations => LGV_ERR_PARAMETER_OUT_OF_RANGE,
        _ => LGV_ERR_PARAMETER,
    }
}
