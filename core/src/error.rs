//! Small error types shared by the kernels.
//!
//! Each failing operation has its own error type: [`LenError`] and [`ParamError`] for
//! constructors, [`InitError`] for starting a chain, [`StepError`] for a kernel step. They are
//! the same for every [`Domain`](crate::domain::Domain).

use core::fmt;

/// A caller-provided buffer whose length does not fit the problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LenError {
    /// Which buffer was wrong.
    pub buffer: &'static str,
    /// The length the operation needs.
    pub expected: usize,
    /// The length it was given.
    pub found: usize,
}

impl LenError {
    /// Checks `found == expected`, naming `buffer` in the error.
    ///
    /// # Examples
    ///
    /// ```
    /// use langevin_core::LenError;
    /// assert!(LenError::check("grad", 4, 4).is_ok());
    /// assert_eq!(LenError::check("grad", 4, 3).unwrap_err().found, 3);
    /// ```
    pub fn check(buffer: &'static str, expected: usize, found: usize) -> Result<(), LenError> {
        if expected == found {
            Ok(())
        } else {
            Err(LenError {
                buffer,
                expected,
                found,
            })
        }
    }
}

impl fmt::Display for LenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "buffer `{}` has length {}, expected {}",
            self.buffer, self.found, self.expected
        )
    }
}

impl core::error::Error for LenError {}

/// An invalid sampler or model parameter.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum ParamError {
    /// A step size that is not a finite number greater than zero.
    Step(f64),
    /// A balance outside `(0, 1]`.
    Balance(f64),
    /// A preconditioner entry that is not finite and positive, or whose step `a·p_i²` is not.
    Preconditioner {
        /// The coordinate.
        index: usize,
        /// The offending value.
        value: f64,
    },
    /// A problem of dimension zero.
    EmptyDimension,
    /// A named parameter that must be finite is not.
    NonFinite(&'static str),
    /// A named parameter is outside its allowed range.
    OutOfRange {
        /// The parameter.
        name: &'static str,
        /// The offending value.
        value: f64,
    },
    /// A run too short for a tuner's plan: its budget of `steps` steps cannot hold one round of
    /// each search.
    TuningBudget {
        /// The budget, in steps.
        steps: u64,
    },
    /// A buffer of the wrong length.
    Len(LenError),
    /// A combination of options the sampler does not offer (the text says which).
    Unsupported(&'static str),
}

impl ParamError {
    /// Checks a step size: finite and `> 0`.
    ///
    /// # Errors
    ///
    /// [`ParamError::Step`] otherwise.
    pub fn check_step(step: f64) -> Result<(), ParamError> {
        if step.is_finite() && step > 0.0 {
            Ok(())
        } else {
            Err(ParamError::Step(step))
        }
    }

    /// Checks a balance: in `(0, 1]`.
    ///
    /// # Errors
    ///
    /// [`ParamError::Balance`] otherwise.
    pub fn check_balance(balance: f64) -> Result<(), ParamError> {
        if balance > 0.0 && balance <= 1.0 {
            Ok(())
        } else {
            Err(ParamError::Balance(balance))
        }
    }

    /// Checks that every entry of the parameter `name` is finite.
    ///
    /// # Errors
    ///
    /// [`ParamError::NonFinite`] otherwise.
    pub(crate) fn check_finite(name: &'static str, values: &[f32]) -> Result<(), ParamError> {
        if values.iter().all(|v| v.is_finite()) {
            Ok(())
        } else {
            Err(ParamError::NonFinite(name))
        }
    }

    /// The dimension `d = n` of a square `d × d` parameter and its size `d²`.
    ///
    /// # Errors
    ///
    /// [`ParamError::EmptyDimension`] for `n = 0`; [`ParamError::OutOfRange`] if `d²`
    /// overflows.
    pub(crate) fn check_square(n: usize) -> Result<(usize, usize), ParamError> {
        if n == 0 {
            return Err(ParamError::EmptyDimension);
        }
        let d2 = n.checked_mul(n).ok_or(ParamError::OutOfRange {
            name: "dimension",
            value: n as f64,
        })?;
        Ok((n, d2))
    }

    /// Checks a diagonal preconditioner for step `a`: every `p_i` finite and positive, with
    /// `a · p_i²` finite and positive, and `extra(p_i)` true.
    ///
    /// # Errors
    ///
    /// [`ParamError::Preconditioner`] for the first entry that fails.
    pub(crate) fn check_preconditioner(
        step: f64,
        p: &[f32],
        extra: impl Fn(f32) -> bool,
    ) -> Result<(), ParamError> {
        for (index, &pi) in p.iter().enumerate() {
            let scaled = step * f64::from(pi) * f64::from(pi);
            if !(pi.is_finite() && pi > 0.0 && scaled.is_finite() && scaled > 0.0 && extra(pi)) {
                return Err(ParamError::Preconditioner {
                    index,
                    value: f64::from(pi),
                });
            }
        }
        Ok(())
    }
}

impl From<LenError> for ParamError {
    fn from(e: LenError) -> Self {
        ParamError::Len(e)
    }
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamError::Step(a) => write!(f, "step size must be finite and > 0, got {a}"),
            ParamError::Balance(b) => write!(f, "balance must lie in (0, 1], got {b}"),
            ParamError::Preconditioner { index, value } => write!(
                f,
                "preconditioner entry {index} must be finite and > 0 (with a finite scaled step), got {value}"
            ),
            ParamError::EmptyDimension => f.write_str("dimension must be at least 1"),
            ParamError::NonFinite(name) => write!(f, "`{name}` must be finite"),
            ParamError::OutOfRange { name, value } => {
                write!(f, "`{name}` is out of range: {value}")
            }
            ParamError::TuningBudget { steps } => {
                write!(f, "`tuning budget (steps)` is out of range: {steps}")
            }
            ParamError::Len(e) => e.fmt(f),
            ParamError::Unsupported(what) => f.write_str(what),
        }
    }
}

impl core::error::Error for ParamError {}

/// Why a chain could not be started or reset.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum InitError<E> {
    /// The target has dimension zero.
    EmptyDimension,
    /// The target's number of values is below 2 or above 65 535 (or, on reset, not the
    /// chain's).
    States(usize),
    /// A buffer does not fit the target.
    Len(LenError),
    /// The initial state has an entry beyond the last value (above 1 for binary states, `≥ S`
    /// otherwise).
    StateOutOfRange {
        /// The coordinate.
        index: usize,
        /// Its value.
        value: u16,
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
            InitError::States(s) => {
                write!(
                    f,
                    "the target has {s} values per coordinate, expected 2 to 65535"
                )
            }
            InitError::Len(e) => e.fmt(f),
            InitError::StateOutOfRange { index, value } => {
                write!(
                    f,
                    "initial state has x[{index}] = {value}, beyond the last value"
                )
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

/// Why a step could not be taken. The chain is left unchanged.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StepError<E> {
    /// The chain, the target or the preconditioner disagree on the dimension.
    Len(LenError),
    /// An adaptive kernel could not build a proposal from its current parameters.
    Param(ParamError),
    /// The target returned an unrecoverable error.
    Target(E),
}

impl<E: fmt::Display> fmt::Display for StepError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StepError::Len(e) => e.fmt(f),
            StepError::Param(e) => e.fmt(f),
            StepError::Target(e) => write!(f, "target failed: {e}"),
        }
    }
}

impl<E: fmt::Debug + fmt::Display> core::error::Error for StepError<E> {}

impl<E> From<LenError> for StepError<E> {
    fn from(e: LenError) -> Self {
        StepError::Len(e)
    }
}

impl<E> From<ParamError> for StepError<E> {
    fn from(e: ParamError) -> Self {
        StepError::Param(e)
    }
}
