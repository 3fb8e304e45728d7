//! Bad input to every public entry point, keyed to `docs/bad-input.md`.

mod binary;
mod continuous;
mod doc_references;
mod domains;
mod inventory;
mod ordinal;

use langevin_core::binary::{BinaryChain, ChainBuffers};
use langevin_core::{BinaryTarget, InitError, TargetError};
use std::fmt;

/// The error of the faulty test targets: recoverable (a rejection) or not (the run stops).
#[derive(Clone, Copy, Debug, PartialEq)]
struct FaultError {
    recoverable: bool,
}

impl fmt::Display for FaultError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "injected fault (recoverable: {})", self.recoverable)
    }
}

impl TargetError for FaultError {
    fn is_recoverable(&self) -> bool {
        self.recoverable
    }
}

/// Starts a binary chain of dimension 4 whose buffer `bad` (`x`, `grad`, `x_proposal`,
/// `grad_proposal` or `flipped`) has `len` entries, and asserts the length error names it.
fn assert_binary_len_refused<T: BinaryTarget>(target: &mut T, bad: &str, len: usize) {
    let at = |name: &str| if name == bad { len } else { 4 };
    let (mut x, mut g, mut xp, mut gp, mut fl) = (
        vec![0u8; at("x")],
        vec![0f32; at("grad")],
        vec![0u8; at("x_proposal")],
        vec![0f32; at("grad_proposal")],
        vec![0u32; at("flipped")],
    );
    let bufs = ChainBuffers {
        x: &mut x,
        grad: &mut g,
        x_proposal: &mut xp,
        grad_proposal: &mut gp,
        flipped: &mut fl,
    };
    match BinaryChain::new(bufs, target) {
        Err(InitError::Len(e)) => assert_eq!(e.buffer, bad),
        other => panic!("{bad}: {other:?}"),
    }
}
