//! DULA and DMALA specialised to the nearest-neighbour Ising lattice.
//!
//! On an [`IsingLattice`](crate::models::IsingLattice) (one coupling `J`, one field `h`) the flip
//! logit of site `i` depends only on its value and its neighbour sum `n_i ∈ {−4, …, 4}`: 18
//! classes. [`LatticeProposal`] tabulates, per class, a 16-bit flip threshold and the exact
//! log-probabilities of the quantised flip probability, so a step evaluates no transcendental
//! function in its passes:
//!
//! 1. the class of every site is computed from the state into the chain's proposal buffer: by
//!    byte loops that the compiler vectorises on 64-bit targets, with byte-lane arithmetic
//!    (SWAR), 4 sites per operation, on 32-bit ones
//!    ([`LatticeKernel::step_with_classes`] copies them instead from a [`LatticeClasses`] kept
//!    since the previous step, which an accepted move updates);
//! 2. site `i` flips when 16 random bits, read as an integer, are below its class's threshold;
//!    the sites are also counted by (class, flip), and the number of flips is then read off
//!    those bins;
//! 3. the proposed state is written over the current one (toggled back on rejection), the
//!    classes are computed again from it, and the sites are counted by (new class, flip);
//! 4. `U(x') − U(x)` and `log q(x | x') − log q(x' | x)` follow from the difference of the two
//!    histograms (36 bins) alone: the log-probabilities are summed in 64-bit fixed point, so the
//!    sum is exact but for the rounding of each table entry, whatever the number of sites.
//!
//! On 64-bit targets the draw and the two counts of steps 2 and 3 are [`LatticePasses`]: the
//! portable ones ([`PortablePasses`]) draw a block of random words first and then four sites
//! per word, and count into interleaved sub-histograms; a platform may supply vector versions
//! with the same results ([`LatticeKernel::step_with`]), which count bin by bin with byte
//! comparisons. Only the bins a class can reach are counted (20 when both axes wrap, as `m`
//! is even then).
//!
//! Every pass runs over all sites, so a step's cost does not depend on how many sites flip.
//!
//! See [`LatticeProposal`] for the quantisation and the random stream.
//!
//! The code is split by concept: [`LatticeProposal`] and its tables (`proposal`), the class
//! bytes of a state and [`LatticeClasses`] (`classes`), the byte passes over them
//! (`swar`), the per-site passes of 64-bit targets (`passes`) and the kernels (`kernel`).

mod classes;
mod kernel;
mod passes;
mod proposal;
mod small;
mod swar;

pub use classes::LatticeClasses;
pub use kernel::{LatticeDmala, LatticeDula, LatticeKernel};
pub use passes::{LatticePasses, PortablePasses, draw_flips};
pub use proposal::LatticeProposal;
pub use small::{SmallLatticeChain, SmallLatticeDmala, SmallStep};

/// Random bits per site.
const SITE_BITS: u32 = 16;
/// Sites served by one `next_u64`.
const SITES_PER_WORD: usize = 4;
/// `2^16`: the denominator of the quantised flip probabilities.
const SCALE: f64 = 65_536.0;

// A site's class byte (kept in the chain's proposal buffer during a step):
// bits 0–3 `m = n + 4`, the neighbour sum shifted to 0..=8, with an absent neighbour (open
// boundary) counted as spin 0; bit 4 the site's value `x`; bit 5 set when the proposal flips
// the site.
const M_MASK: u8 = 0x0f;
const X_BIT: u8 = 0x10;
const FLIP_BIT: u8 = 0x20;
/// A histogram bin: `class & BIN_MASK` (`m`, `x` and the flip bit).
const BIN_MASK: u8 = 0x3f;
/// Histogram bins (36 of them reachable: `m ≤ 8`).
const BINS: usize = 64;
/// Entries of the log-probability tables: every bin a class byte reaches (`class ≤ BIN_MASK`).
const LOG_BINS: usize = 64;
/// The histogram bin of a class byte.
#[inline(always)]
fn bin(class: u8) -> usize {
    usize::from(class & BIN_MASK)
}
/// Interleaved sub-histograms of the portable count: site `i` is counted in sub-histogram
/// `i mod SPLITS`, so that successive sites of one class do not each wait for the previous
/// increment of the same counter to be stored.
const SPLITS: usize = 8;
/// Random words per [`LatticePasses::flip`] call of the 64-bit draw (256 sites).
#[cfg(target_pointer_width = "64")]
const WORDS_PER_CALL: usize = 64;
/// Class bytes below this: `m ≤ 15`, `x` and the flip bit.
pub const CLASS_LIMIT: u8 = 64;
/// A neighbour's contribution to `m` is `s + 1`: 0 or 2 for a present neighbour, 1 for an absent
/// one.
const ABSENT: u8 = 1;
/// Fixed-point scale of the tabulated log-probabilities: `2^56` (`|ln p| ≤ 16 ln 2 < 2^4`).
const FIXED_BITS: i32 = 56;
/// A tabulated log-probability `L` is stored as `hi · 2^SPLIT + lo`, `0 ≤ lo < 2^SPLIT`, so that
/// both halves fit an `i32` and a sum of `2d < 2^33` products with a site count stays in an `i64`.
const SPLIT: u32 = 30;

/// Per-bin site counts: the reverse move's bins minus the forward move's.
type Histogram = [isize; BINS];
