//! The continuous (stochastic-gradient) integrators: exact moments, models and rankings.

mod agld;
mod ewsg;
mod exact;
mod models;
mod ranking;
mod support;
