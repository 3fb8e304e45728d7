//! Seeded runs of the binary kernels shared by the firmware images and the host.
//!
//! * [`table`]: the golden table, written once and read by the host test as well.
//! * [`golden`]: FNV-1a hashes of the first steps of seeded chains, pinned bit for bit. The same
//!   numbers must come out on x86_64, on Cortex-M3 with soft float and on Cortex-M4F with the
//!   hardware FPU.
//! * [`cost`]: step-cost cases, nominal and extreme (NaN, ±∞, huge logits, absurd step sizes),
//!   run through a [`cost::Meter`] that counts instructions on the board or on the host.
//!
//! Nothing here allocates or panics: every failure is a [`Failure`].
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs, missing_debug_implementations)]
#![cfg_attr(
    not(test),
    deny(
        clippy::panic,
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::indexing_slicing
    )
)]

pub mod cost;
pub mod golden;
pub mod kernels;
pub mod large;
pub mod models;
pub mod table;
pub mod targets;

use core::fmt;

/// The binary kernels of the core.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    /// The unadjusted kernel [`langevin_core::binary::Dula`].
    Dula,
    /// The Metropolis-adjusted kernel [`langevin_core::binary::Dmala`].
    Dmala,
}

impl Kernel {
    /// Every kernel, in a fixed order.
    pub const ALL: [Kernel; 2] = [Kernel::Dula, Kernel::Dmala];

    /// A short lower-case name.
    pub const fn name(self) -> &'static str {
        match self {
            Kernel::Dula => "dula",
            Kernel::Dmala => "dmala",
        }
    }

    /// The kernel of a short name ([`Kernel::name`]).
    pub const fn from_name(name: &str) -> Option<Kernel> {
        let mut rest: &[Kernel] = &Kernel::ALL;
        while let [k, tail @ ..] = rest {
            if table::same_name(k.name(), name) {
                return Some(*k);
            }
            rest = tail;
        }
        None
    }
}

/// Why a run stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// A model or proposal parameter was refused.
    Param,
    /// The chain could not be started.
    Init,
    /// A step returned an error.
    Step,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Failure::Param => "parameter refused",
            Failure::Init => "chain could not be started",
            Failure::Step => "step failed",
        })
    }
}
