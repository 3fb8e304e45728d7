//! The adaptive tuners (AB, ACS): their state machines and what they converge to.

mod ab;
mod acs;
#[path = "../common_discrete/mod.rs"]
mod common_discrete;
mod pins;
