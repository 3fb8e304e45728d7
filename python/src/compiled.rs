//! Targets given as a compiled C function (an address from ctypes, cffi or numba), called from
//! the worker threads with the GIL released:
//!
//! ```c
//! /* 0 = ok, 1 = reject this proposal, anything else = stop the run */
//! int32_t logp(void *user, const uint8_t *x, size_t dim, double *log_density, float *grad);
//! ```
//!
//! The function is called with `grad` non-NULL (room for `dim` values); it must be pure in
//! `(x, user)`, safe to call from several threads at once (each chain on its own worker) and
//! must not unwind through its caller.

use langevin_std::core_kernels::{BinaryTarget, TargetError};
use std::ffi::c_void;
use std::fmt;

/// The C signature of a compiled log-density.
pub type LogDensityFn =
    unsafe extern "C" fn(*mut c_void, *const u8, usize, *mut f64, *mut f32) -> i32;

/// Why an evaluation of a compiled function failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallbackError {
    /// It returned 1: the proposal is rejected and the chain goes on.
    Rejected,
    /// It returned this other non-zero code: the run stops.
    Code(i32),
}

impl fmt::Display for CallbackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallbackError::Rejected => f.write_str("the log-density function rejected the state"),
            CallbackError::Code(c) => write!(f, "the log-density function returned code {c}"),
        }
    }
}

impl TargetError for CallbackError {
    fn is_recoverable(&self) -> bool {
        matches!(self, CallbackError::Rejected)
    }
}

/// The function and its user pointer, shared by the chains.
#[derive(Clone, Copy)]
pub struct Compiled {
    /// The function.
    pub f: LogDensityFn,
    /// Its user pointer, as an address.
    pub user: usize,
    /// The dimension.
    pub dim: usize,
}

/// One chain's view of a compiled function.
pub struct CompiledTarget(pub Compiled);

impl BinaryTarget for CompiledTarget {
    type Error = CallbackError;

    fn dim(&self) -> usize {
        self.0.dim
    }

    fn log_density_and_grad(&mut self, x: &[u8], grad: &mut [f32]) -> Result<f64, CallbackError> {
        if x.len() != self.0.dim || grad.len() != self.0.dim {
            return Err(CallbackError::Code(-1));
        }
        let mut u = f64::NAN;
        // SAFETY: the caller of `langevin.CompiledTarget` vouches that `f` is a function of
        // this signature that reads `dim` bytes at `x` and writes one double at `log_density`
        // and at most `dim` floats at `grad`, which are these buffers of `dim` entries.
        let code = unsafe {
            (self.0.f)(
                self.0.user as *mut c_void,
                x.as_ptr(),
                x.len(),
                &mut u,
                grad.as_mut_ptr(),
            )
        };
        match code {
            0 => Ok(u),
            1 => Err(CallbackError::Rejected),
            c => Err(CallbackError::Code(c)),
        }
    }
}
