//! The state spaces a chain can live on.
//!
//! A [`Domain`] fixes the type of one coordinate's value and the layout of the gradient; every
//! chain, kernel and tuner in the crate is generic over it. The trait is sealed: the three
//! domains below are all there is.
//!
//! | domain          | value  | states `S`       | gradient length |
//! |-----------------|--------|------------------|-----------------|
//! | [`Binary`]      | `u8`   | 2                | `d`             |
//! | [`Ordinal`]     | `u16`  | `2 ..= 65 535`   | `d`             |
//! | [`Categorical`] | `u16`  | `2 ..= 65 535`   | `d·S` (one-hot) |

use core::fmt;

mod sealed {
    pub trait Sealed {}
}

/// A state space `{0, …, S−1}^d`: binary bits, ordinal levels or categorical labels.
///
/// Sealed: implemented by [`Binary`], [`Ordinal`] and [`Categorical`] only.
pub trait Domain: sealed::Sealed + Copy + Default + fmt::Debug + Send + Sync + 'static {
    /// The type of one coordinate's value.
    type Value: Copy + Eq + Default + fmt::Debug + fmt::Display + Into<usize> + Into<f64> + 'static;

    // The defaults are those of the label domains; binary states override all but `ONE_HOT`.

    /// The name of the buffer of changed indices, as length errors report it.
    const CHANGED_BUFFER: &'static str = "changed";

    /// Whether the gradient is taken with respect to the one-hot encoding (`d·S` entries).
    const ONE_HOT: bool = false;

    /// Whether a chain keeps a scratch row of `S` values.
    const SCRATCH_ROW: bool = true;

    /// The number of values `S` when the domain fixes it (2 for binary states); `None` when
    /// the target gives it.
    const FIXED_STATES: Option<usize> = None;

    /// The gradient length for `d` coordinates of `s` values (`None` on overflow).
    fn grad_len(d: usize, s: usize) -> Option<usize> {
        if Self::ONE_HOT {
            d.checked_mul(s)
        } else {
            Some(d)
        }
    }

    /// The length of a chain's scratch row for `s` values.
    fn scratch_len(s: usize) -> usize {
        if Self::SCRATCH_ROW { s } else { 0 }
    }
}

/// A domain whose values are labels `0..S` stored as `u16` (ordinal or categorical).
pub trait LabelDomain: Domain<Value = u16> {}

/// Binary states `x ∈ {0,1}^d` stored as `u8`; the gradient has one entry per coordinate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Binary;

/// Ordinal states `x ∈ {0, …, S−1}^d` (integer distance matters); the gradient has one entry
/// per coordinate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ordinal;

/// Categorical states (labels without order): the gradient is taken with respect to the
/// one-hot encoding and has `d·S` entries, row-major (`grad[i·S + k] = ∂U/∂onehot_{i,k}`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Categorical;

impl sealed::Sealed for Binary {}
impl sealed::Sealed for Ordinal {}
impl sealed::Sealed for Categorical {}
impl LabelDomain for Ordinal {}
impl LabelDomain for Categorical {}

impl Domain for Binary {
    type Value = u8;
    const CHANGED_BUFFER: &'static str = "flipped";
    const SCRATCH_ROW: bool = false;
    const FIXED_STATES: Option<usize> = Some(2);
}

impl Domain for Ordinal {
    type Value = u16;
}

impl Domain for Categorical {
    type Value = u16;
    const ONE_HOT: bool = true;
}
