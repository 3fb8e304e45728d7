//! The adaptive tuners (AB, ACS): their state machines and what they converge to.

mod ab;
mod acs;
mod pins;
mod targets;
