//! Bad input to every public entry point, keyed to `docs/bad-input.md`.

mod binary;
mod continuous;
mod doc_references;
mod domains;
mod inventory;
mod ordinal;

use langevin_core::binary::{BinaryChain, ChainBuffers};
use langevin_core::{BinaryTarget, InitError};

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
