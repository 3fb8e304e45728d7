//! What the C-ABI tests share: zeroed chain objects, a binary chain's buffers and its totals,
//! and the check of a committed generated file.

#![allow(
    dead_code,
    unused_macros,
    unused_imports,
    reason = "each test file uses its own part"
)]

use langevin_ffi::*;
use std::ffi::CString;
use std::path::Path;

/// Checks that the committed file `name` (relative to the crate) is `generated`;
/// `LANGEVIN_BLESS=1` rewrites it instead. `test` is the test target that generates it.
pub fn committed_or_bless(name: &str, generated: &[u8], test: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(name);
    if std::env::var_os("LANGEVIN_BLESS").is_some() {
        std::fs::write(&path, generated).unwrap();
        return;
    }
    let committed = std::fs::read(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{name} is out of date; run LANGEVIN_BLESS=1 cargo test -p langevin-ffi --test {test}"
    );
}

/// A zeroed chain object: it reads as not initialised.
pub fn new_chain() -> Box<LgvChain> {
    Box::new(LgvChain {
        opaque: [0; LGV_CHAIN_WORDS],
    })
}

/// A C string for a name or a parameter list.
pub fn c(s: &str) -> CString {
    CString::new(s).unwrap()
}

/// The buffers of a binary chain, owned by the test.
pub struct Bufs {
    pub x: Vec<u8>,
    pub grad: Vec<f32>,
    pub xp: Vec<u8>,
    pub gp: Vec<f32>,
    pub flipped: Vec<u32>,
}

impl Bufs {
    /// Zeroed buffers of `len` entries each.
    pub fn new(len: usize) -> Self {
        Self {
            x: vec![0; len],
            grad: vec![0.0; len],
            xp: vec![0; len],
            gp: vec![0.0; len],
            flipped: vec![0; len],
        }
    }

    /// The buffers as the C ABI takes them.
    pub fn c(&mut self) -> LgvBuffers {
        LgvBuffers {
            x: self.x.as_mut_ptr(),
            grad: self.grad.as_mut_ptr(),
            x_proposal: self.xp.as_mut_ptr(),
            grad_proposal: self.gp.as_mut_ptr(),
            flipped: self.flipped.as_mut_ptr(),
            len: self.x.len(),
        }
    }
}

/// The running totals of a live chain (`lgv_chain_stats` must succeed).
pub fn stats(chain: &LgvChain) -> LgvStats {
    let mut s = LgvStats {
        steps: 0,
        accepted: 0,
        proposed_flips: 0,
        accepted_flips: 0,
        invalid: 0,
        evaluations: 0,
    };
    // SAFETY: a live chain and a writable output.
    unsafe { assert_eq!(lgv_chain_stats(chain, &mut s), LGV_OK) };
    s
}

/// The six totals of an `LgvStats` (or of the core's `ChainStats`, whose fields have the same
/// names) in declaration order.
macro_rules! totals {
    ($stats:expr) => {{
        let s = $stats;
        [
            s.steps,
            s.accepted,
            s.proposed_flips,
            s.accepted_flips,
            s.invalid,
            s.evaluations,
        ]
    }};
}
pub(crate) use totals;
