//! Small error types shared by the kernels.
//!
//! Each failing operation has its own error type; these two are the ones nearly every
//! constructor can return.

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
    /// A buffer of the wrong length.
    Len(LenError),
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
            ParamError::Len(e) => e.fmt(f),
        }
    }
}

impl core::error::Error for ParamError {}
