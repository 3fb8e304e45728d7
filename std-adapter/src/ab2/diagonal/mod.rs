//! The diagonal rules of AB-2: how `D` is chosen once `W` is fitted.

mod max;

pub use max::*;
