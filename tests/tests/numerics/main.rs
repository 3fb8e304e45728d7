//! Numeric helpers, diagnostics and output formats: math accuracy, ESS/R-hat, `.npy`, plots.

mod diagnostics;
mod math_accuracy;
mod npy;
mod plot;
