//! Targets whose log-density and gradient come from a C function.

use crate::{
    LGV_CALLBACK_OK, LGV_CALLBACK_REJECT, LGV_ERR_CALLBACK, LGV_ERR_CALLBACK_NON_FINITE,
    LGV_ERR_NON_FINITE_START, LGV_ERR_START_REJECTED, LgvStatus,
};
use core::convert::Infallible;
use core::ffi::c_void;
use core::fmt;
use langevin_core::categorical::CategoricalTarget;
use langevin_core::ordinal::OrdinalTarget;
use langevin_core::{BinaryTarget, TargetError};

/// The binary callback, non-null.
pub(crate) type BinaryFn =
    unsafe extern "C" fn(*mut c_void, *const u8, usize, *mut f64, *mut f32) -> i32;
/// The label callback, non-null.
pub(crate) type LabelFn =
    unsafe extern "C" fn(*mut c_void, *const u16, usize, usize, *mut f64, *mut f32) -> i32;

/// What a callback evaluation can go wrong with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CallbackError {
    /// The callback returned `LGV_CALLBACK_REJECT`: the proposal is rejected, the step goes on.
    Rejected,
    /// The callback returned another non-zero code: the step is abandoned.
    Aborted(i32),
    /// The callback returned a non-finite log-density or gradient: the step is abandoned.
    NonFinite,
}

impl fmt::Display for CallbackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallbackError::Rejected => f.write_str("the callback rejected the state"),
            CallbackError::Aborted(c) => write!(f, "the callback returned {c}"),
            CallbackError::NonFinite => f.write_str("the callback returned a non-finite value"),
        }
    }
}

impl TargetError for CallbackError {
    fn is_recoverable(&self) -> bool {
        matches!(self, CallbackError::Rejected)
    }
}

/// How a target's errors become statuses.
pub(crate) trait ErrorStatus {
    /// The status of an error that stopped a step (`start`: at the initial state).
    fn status(&self, start: bool) -> LgvStatus;
    /// The callback's own code, if any.
    fn code(&self) -> i32;
}

impl ErrorStatus for Infallible {
    fn status(&self, _: bool) -> LgvStatus {
        match *self {}
    }
    fn code(&self) -> i32 {
        match *self {}
    }
}

impl ErrorStatus for CallbackError {
    fn status(&self, start: bool) -> LgvStatus {
        match (self, start) {
            (CallbackError::Rejected, _) => LGV_ERR_START_REJECTED,
            (CallbackError::Aborted(_), _) => LGV_ERR_CALLBACK,
            (CallbackError::NonFinite, true) => LGV_ERR_NON_FINITE_START,
            (CallbackError::NonFinite, false) => LGV_ERR_CALLBACK_NON_FINITE,
        }
    }
    fn code(&self) -> i32 {
        match self {
            CallbackError::Rejected => LGV_CALLBACK_REJECT,
            CallbackError::Aborted(c) => *c,
            CallbackError::NonFinite => LGV_CALLBACK_OK,
        }
    }
}

/// Turns a callback's code and outputs into a result.
fn finish(code: i32, u: f64, grad: &[f32]) -> Result<f64, CallbackError> {
    match code {
        LGV_CALLBACK_OK => {}
        LGV_CALLBACK_REJECT => return Err(CallbackError::Rejected),
        c => return Err(CallbackError::Aborted(c)),
    }
    if u.is_finite() && grad.iter().all(|g| g.is_finite()) {
        Ok(u)
    } else {
        Err(CallbackError::NonFinite)
    }
}

/// A binary target evaluated by a C function.
#[derive(Debug)]
pub(crate) struct BinaryCallback {
    pub(crate) f: BinaryFn,
    pub(crate) user: *mut c_void,
    pub(crate) dim: usize,
}

impl BinaryTarget for BinaryCallback {
    type Error = CallbackError;

    fn dim(&self) -> usize {
        self.dim
    }

    fn log_density_and_grad(&mut self, x: &[u8], grad: &mut [f32]) -> Result<f64, CallbackError> {
        let mut u = f64::NAN;
        // SAFETY: `x` and `grad` are live slices of `dim` entries (the chain checks the
        // lengths); the function and `user` are the caller's, under the documented contract.
        let code = unsafe { (self.f)(self.user, x.as_ptr(), x.len(), &mut u, grad.as_mut_ptr()) };
        finish(code, u, grad)
    }
}

/// An ordinal or categorical target evaluated by a C function.
#[derive(Debug)]
pub(crate) struct LabelCallback {
    pub(crate) f: LabelFn,
    pub(crate) user: *mut c_void,
    pub(crate) dim: usize,
    pub(crate) states: usize,
}

impl LabelCallback {
    fn eval(&mut self, x: &[u16], grad: &mut [f32]) -> Result<f64, CallbackError> {
        let mut u = f64::NAN;
        // SAFETY: as for `BinaryCallback`; `grad` has the domain's gradient length.
        let code = unsafe {
            (self.f)(
                self.user,
                x.as_ptr(),
                x.len(),
                self.states,
                &mut u,
                grad.as_mut_ptr(),
            )
        };
        finish(code, u, grad)
    }
}

/// One C function serves both label domains: the two target traits read it alike.
macro_rules! label_target {
    ($($target:ident),+) => {$(
        impl $target for LabelCallback {
            type Error = CallbackError;
            fn dim(&self) -> usize {
                self.dim
            }
            fn states(&self) -> usize {
                self.states
            }
            fn log_density_and_grad(
                &mut self,
                x: &[u16],
                grad: &mut [f32],
            ) -> Result<f64, CallbackError> {
                self.eval(x, grad)
            }
        }
    )+};
}

label_target!(OrdinalTarget, CategoricalTarget);
