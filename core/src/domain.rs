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

    /// The name of the buffer of changed indices, as length errors report it.
    const CHANGED_BUFFER: &'static str;

    /// The gradient length for `d` coordinates of `s` values (`None` on overflow).
    fn grad_len(d: usize, s: usize) -> Option<usize>;

    /// The length of a chain's scratch row for `s` values.
    fn scratch_len(s: usize) -> usize;

    /// The value `k` (which the caller keeps below the number of states).
    fn value(k: usize) -> Self::Value;
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
    fn grad_len(d: usize, _s: usize) -> Option<usize> {
        Some(d)
    }
    fn scratch_len(_s: usize) -> usize {
        0
    }
    fn value(k: usize) -> u8 {
        k as u8
    }
}

impl Domain for Ordinal {
    type Value = u16;
    const CHANGED_BUFFER: &'static str = "changed";
    fn grad_len(d: usize, _s: usize) -> Option<usize> {
        Some(d)
    }
    fn scratch_len(s: usize) -> usize {
        s
    }
    fn value(k: usize) -> u16 {
        k as u16
    }
}

impl Domain for Categorical {
    type Value = u16;
    const CHANGED_BUFFER: &'static str = "changed";
    fn grad_len(d: usize, s: usize) -> Option<usize> {
        d.checked_mul(s)
    }
    fn scratch_len(s: usize) -> usize {
        s
    }
    fn value(k: usize) -> u16 {
        k as u16
    }
}
