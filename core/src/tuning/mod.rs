//! Adaptive and scheduled parameters for the balanced proposal family (Sun et al. 2023; Pynadath et al. 2024).
//!
//! * [`AbTuner`]: the any-scale balanced sampler, first order, with its step and balance tuned
//!   by the jump-distance rule during a burn-in and then frozen;
//! * [`cyclical_step`], [`cyclical_balance`], [`AcsSchedule`] and [`Acs`]: cyclical schedules
//!   as pure functions of the step index and the sampler that follows one;
//! * [`AcsTuner`]: automatic cyclical scheduling, tuning the schedule within a fixed budget;
//! * [`AcceptanceTuner`]: DMALA with its step, as an expected number of changes, tuned toward
//!   a target acceptance rate during a burn-in.
//!
//! All of them drive the exact Metropolis-adjusted kernels of the binary, ordinal and
//! categorical domains, constructing a fresh proposal for every step (proposals are small
//! `Copy` values).

mod ab;
mod acceptance;
mod acs;

pub use ab::{AbReport, AbSettings, AbTuner};
pub use acceptance::{
    ACCEPTANCE_TUNER_WORDS, AcceptanceReport, AcceptanceSettings, AcceptanceTuner, ScaledDmala,
};
pub use acs::{
    Acs, AcsAction, AcsReport, AcsSchedule, AcsSettings, AcsTuner, MAX_CYCLE, cyclical_balance,
    cyclical_step,
};
