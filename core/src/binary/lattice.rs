//! DULA and DMALA specialised to the nearest-neighbour Ising lattice.
//!
//! On an [`IsingLattice`] (one coupling `J`, one field `h`) the flip logit of site `i` depends
//! only on its value and its neighbour sum `n_i ∈ {−4, …, 4}`: 18 classes. [`LatticeProposal`]
//! tabulates, per class, a 16-bit flip threshold and the exact log-probabilities of the
//! quantised flip probability, so a step evaluates no transcendental function in its passes:
//!
//! 1. the class of every site is computed from the state with byte-lane arithmetic (SWAR) into
//!    the chain's proposal buffer: 16 sites per operation on 64-bit targets (two machine words,
//!    which the compiler maps to one vector register), 4 on 32-bit ones
//!    ([`LatticeKernel::step_with_classes`] copies them instead from a [`LatticeClasses`] kept
//!    since the previous step, which an accepted move updates);
//! 2. site `i` flips when 16 random bits, read as an integer, are below its class's threshold;
//!    the sites are also counted by (class, flip) (on 64-bit targets the number of flips is
//!    then read off those bins);
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

use super::proposal::FlipProposal;
use crate::chain::BinaryChain;
use crate::error::{LenError, ParamError};
use crate::kernel::StepReport;
use crate::math::{Fast, FlipMath};
use crate::models::{IsingLattice, LatticeDims};
use crate::random::open_unit_f64_of;
use rand_core::Rng;

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
/// `2^−FIXED_BITS`, exactly.
const FIXED_UNIT: f64 = 1.0 / (1u64 << FIXED_BITS) as f64;
/// A tabulated log-probability `L` is stored as `hi · 2^SPLIT + lo`, `0 ≤ lo < 2^SPLIT`, so that
/// both halves fit an `i32` and a sum of `2d < 2^33` products with a site count stays in an `i64`.
const SPLIT: u32 = 30;

/// Machine words per SWAR chunk: two on 64-bit targets (16 bytes, one SSE2 or NEON register,
/// which the compiler uses for the word-wise loops), one on 32-bit targets (whose cores have no
/// such registers).
#[cfg(target_pointer_width = "64")]
const WORDS: usize = 2;
#[cfg(not(target_pointer_width = "64"))]
const WORDS: usize = 1;
/// Bytes per SWAR chunk.
const WORD: usize = WORDS * core::mem::size_of::<usize>();
/// `0x0101…01`: one in every byte of a word.
const LANES: usize = usize::MAX / 255;

/// Per-bin site counts: the reverse move's bins minus the forward move's.
type Histogram = [isize; BINS];

/// `WORD` bytes as `WORDS` little-endian machine words: byte-lane arithmetic (SWAR) with no
/// carry across a byte, as long as every lane stays below 256.
#[derive(Clone, Copy)]
struct Chunk([usize; WORDS]);

impl Chunk {
    /// `b` in every byte.
    #[inline(always)]
    fn splat(b: u8) -> Self {
        Self([LANES * usize::from(b); WORDS])
    }

    /// The chunk of `bytes` (0 if `bytes` is not a whole chunk).
    #[inline(always)]
    fn load(bytes: &[u8]) -> Self {
        let mut words = [0; WORDS];
        if let Ok(bytes) = <&[u8; WORD]>::try_from(bytes) {
            for (w, b) in words.iter_mut().zip(bytes.chunks_exact(WORD / WORDS)) {
                *w = <[u8; WORD / WORDS]>::try_from(b).map_or(0, usize::from_le_bytes);
            }
        }
        Self(words)
    }

    /// Writes the chunk into `bytes`.
    #[inline(always)]
    fn store(self, bytes: &mut [u8]) {
        for (b, w) in bytes.chunks_exact_mut(WORD / WORDS).zip(self.0) {
            for (b, v) in b.iter_mut().zip(w.to_le_bytes()) {
                *b = v;
            }
        }
    }

    /// `f` word by word.
    #[inline(always)]
    fn zip(self, other: Self, f: impl Fn(usize, usize) -> usize) -> Self {
        let mut out = self.0;
        for (a, b) in out.iter_mut().zip(other.0) {
            *a = f(*a, b);
        }
        Self(out)
    }

    /// Every word shifted left by `n` bits.
    #[inline(always)]
    fn shl(self, n: u32) -> Self {
        Self(self.0.map(|w| w << n))
    }

    /// Every word shifted right by `n` bits.
    #[inline(always)]
    fn shr(self, n: u32) -> Self {
        Self(self.0.map(|w| w >> n))
    }
}

impl core::ops::Add for Chunk {
    type Output = Self;
    #[inline(always)]
    fn add(self, other: Self) -> Self {
        self.zip(other, |a, b| a + b)
    }
}

impl core::ops::BitAnd for Chunk {
    type Output = Self;
    #[inline(always)]
    fn bitand(self, other: Self) -> Self {
        self.zip(other, |a, b| a & b)
    }
}

impl core::ops::BitOr for Chunk {
    type Output = Self;
    #[inline(always)]
    fn bitor(self, other: Self) -> Self {
        self.zip(other, |a, b| a | b)
    }
}

impl core::ops::BitXor for Chunk {
    type Output = Self;
    #[inline(always)]
    fn bitxor(self, other: Self) -> Self {
        self.zip(other, |a, b| a ^ b)
    }
}

/// The flip proposal of [`FlipProposal`](super::FlipProposal) on an [`IsingLattice`], with flip
/// probabilities quantised to `t / 2^16` and tabulated per class: the proposal of
/// [`LatticeDula`] and [`LatticeDmala`].
///
/// # Quantisation
///
/// A site of class `k` flips with probability exactly `t_k / 2^16`, where
/// `t_k = round(sigmoid(l_k) · 2^16)` clamped to `[1, 2^16 − 1]`, and `l_k` is the logit of the
/// generic [`FlipProposal`](super::FlipProposal) (in `f64`). The Metropolis test uses
/// `ln(t_k / 2^16)` and `ln(1 − t_k / 2^16)`, the log-probabilities of the proposal actually
/// drawn, so [`LatticeDmala`] leaves the Ising distribution exactly invariant. Its proposal
/// differs from the generic one by at most about `2^−17` per site and flip probability, and never
/// goes below `2^−16`: at steps so small that the generic proposal flips a site less often than
/// that, [`LatticeDula`] (which has no correction) is no longer close to the generic DULA, whose
/// bias vanishes as the step shrinks; use the generic kernels there.
///
/// # Random stream
///
/// Site `i` uses bits `16·(i mod 4) .. 16·(i mod 4) + 16` of the `⌊i/4⌋`-th `next_u64` of a
/// step; [`LatticeDmala`] then draws one more word for its Metropolis test. The draws are not
/// those of the generic kernels (which use 32 bits per coordinate).
///
/// # Examples
///
/// ```
/// use langevin_core::binary::{BinaryChain, ChainStorage, LatticeDmala, LatticeProposal};
/// use langevin_core::models::{ConstDims, IsingLattice};
/// use rand_core::SeedableRng;
///
/// let mut model = IsingLattice::<ConstDims<8, 8>>::new(0.3, 0.0, true).unwrap();
/// let mut storage = ChainStorage::<64>::new([0; 64]);
/// let mut chain = BinaryChain::new(storage.buffers(), &mut model).unwrap();
/// let kernel = LatticeDmala::new(LatticeProposal::new(&model, 0.3, 0.5).unwrap());
/// let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
/// for _ in 0..100 {
///     kernel.step(&mut chain, &mut rng).unwrap();
/// }
/// assert!(chain.state().iter().all(|&x| x <= 1));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct LatticeProposal<D: LatticeDims> {
    model: IsingLattice<D>,
    step: f64,
    balance: f64,
    /// Flip thresholds indexed by the whole class byte (so a lookup needs no mask and no bounds
    /// check); 0 for classes that cannot occur.
    threshold: [u16; 256],
    /// The bins a class byte can fall in (the first `bin_count`).
    #[cfg(target_pointer_width = "64")]
    bins: [u8; 36],
    #[cfg(target_pointer_width = "64")]
    bin_count: u8,
    /// `ln q` of a site's move by histogram bin, in fixed point (`L · 2^56`, see [`SPLIT`]):
    /// the high and low parts. `ln(t/2^16)` with the flip bit, `ln(1 − t/2^16)` without; 0 for
    /// bins that cannot occur.
    log_hi: [i32; LOG_BINS],
    log_lo: [i32; LOG_BINS],
    /// `∂U/∂x = 2 (J n + h)` by `m = n + 4`, in `f32` as the model computes it (64-bit
    /// targets compute it per site instead).
    #[cfg(not(target_pointer_width = "64"))]
    grad: [f32; 16],
    /// `J` and `h`, widened once.
    coupling: f64,
    field: f64,
}

impl<D: LatticeDims> LatticeProposal<D> {
    /// The proposal with step `a` and balance `b` on `model`.
    ///
    /// # Errors
    ///
    /// As for [`FlipProposal::new`]; [`ParamError::NonFinite`] if a gradient `2 (J n + h)`,
    /// `|n| ≤ 4`, overflows `f32`: the kernels adopt moves without evaluating the model, so they
    /// could not refuse a state whose gradient is not finite.
    pub fn new(model: &IsingLattice<D>, step: f64, balance: f64) -> Result<Self, ParamError> {
        FlipProposal::new(step, balance)?;
        let (coupling, field) = (f64::from(model.coupling()), f64::from(model.field()));
        let mut threshold = [0u16; 256];
        let mut log_hi = [0i32; LOG_BINS];
        let mut log_lo = [0i32; LOG_BINS];
        let mut grad = [0.0f32; 16];
        for m in 0..=8u8 {
            let n = f64::from(m) - 4.0;
            if let Some(slot) = grad.get_mut(usize::from(m)) {
                *slot = 2.0 * (model.coupling() * (n as f32) + model.field());
            }
            for x in 0..=1u8 {
                let class = usize::from(m | (x * X_BIT));
                let g = 2.0 * (coupling * n + field);
                let logit = balance * g * (1.0 - 2.0 * f64::from(x)) - 0.5 / step;
                let t = libm::round(crate::math::sigmoid(logit) * SCALE).clamp(1.0, SCALE - 1.0);
                if let Some(slot) = threshold.get_mut(class) {
                    *slot = t as u16;
                }
                let stay = fixed_log((SCALE - t) / SCALE);
                let flip = fixed_log(t / SCALE);
                for (bin, value) in [(class, stay), (class | usize::from(FLIP_BIT), flip)] {
                    if let (Some(hi), Some(lo)) = (log_hi.get_mut(bin), log_lo.get_mut(bin)) {
                        (*hi, *lo) = value;
                    }
                }
            }
        }
        if !grad.iter().all(|g| g.is_finite()) {
            return Err(ParamError::NonFinite("lattice gradient 2 (J n + h)"));
        }
        #[cfg(target_pointer_width = "64")]
        let (bins, bin_count) = {
            // Every site has four neighbours when both axes wrap: `m` is even then.
            let m_step = if model.wraps() == (true, true) { 2 } else { 1 };
            let mut bins = [0u8; 36];
            let mut count = 0u8;
            for group in [0, X_BIT, FLIP_BIT, FLIP_BIT | X_BIT] {
                for m in (0..=8).step_by(m_step) {
                    if let Some(slot) = bins.get_mut(usize::from(count)) {
                        *slot = group | m;
                        count += 1;
                    }
                }
            }
            (bins, count)
        };
        Ok(Self {
            model: *model,
            step,
            balance,
            threshold,
            #[cfg(target_pointer_width = "64")]
            bins,
            #[cfg(target_pointer_width = "64")]
            bin_count,
            log_hi,
            log_lo,
            #[cfg(not(target_pointer_width = "64"))]
            grad,
            coupling,
            field,
        })
    }

    /// The model.
    pub fn model(&self) -> &IsingLattice<D> {
        &self.model
    }

    /// The step `a`.
    pub fn step(&self) -> f64 {
        self.step
    }

    /// The balance `b`.
    pub fn balance(&self) -> f64 {
        self.balance
    }

    /// The probability that site `i` of state `x` flips: a multiple of `2^−16` in
    /// `[2^−16, 1 − 2^−16]`. `None` if `i` is out of range.
    pub fn flip_probability(&self, x: &[u8], i: usize) -> Option<f64> {
        let class = self.class_at(x, i)?;
        let t = self.threshold.get(usize::from(class)).copied()?;
        Some(f64::from(t) / SCALE)
    }

    /// `log q(to | from)`, summed over all sites in `f64` (a reference for tests; a step never
    /// calls it).
    ///
    /// # Errors
    ///
    /// [`LenError`] unless `from` and `to` have the model's dimension.
    pub fn log_q(&self, from: &[u8], to: &[u8]) -> Result<f64, LenError> {
        let d = self.dim();
        LenError::check("from", d, from.len())?;
        LenError::check("to", d, to.len())?;
        let mut total = 0.0;
        for (i, (&a, &b)) in from.iter().zip(to).enumerate() {
            let class = self.class_at(from, i).unwrap_or(0);
            let t = f64::from(self.threshold.get(usize::from(class)).copied().unwrap_or(0));
            let p = if a != b { t } else { SCALE - t };
            total += libm::log(p / SCALE);
        }
        Ok(total)
    }

    fn dim(&self) -> usize {
        let dims = self.model.dims();
        dims.rows() * dims.cols()
    }

    /// The class byte of site `i`, computed from its neighbours.
    fn class_at(&self, x: &[u8], i: usize) -> Option<u8> {
        let xi = *x.get(i)?;
        let m = self.model.neighbours(i).iter().fold(0u8, |m, j| {
            m + j.and_then(|j| x.get(j)).map_or(ABSENT, |&xj| (xj & 1) << 1)
        });
        Some(m | ((xi & 1) * X_BIT))
    }

    /// Writes the class byte of every site of `x` into `class`, keeping the bits of `keep`
    /// (0 or [`FLIP_BIT`]) of what `class` held: the inner rows in one flat SWAR pass (then
    /// their first and last columns corrected), the inner columns of the first and last rows
    /// in one pass each, and the four corners one at a time.
    #[cfg(target_pointer_width = "64")]
    #[inline(always)]
    fn fill_classes(&self, x: &[u8], class: &mut [u8], keep: u8) {
        let dims = self.model.dims();
        let (rows, cols) = (dims.rows(), dims.cols());
        let d = rows * cols;
        let (wrap_rows, wrap_cols) = self.model.wraps();
        if rows >= 3 {
            let inner = (
                class.get_mut(cols..d - cols),
                x.get(cols..d - cols),
                x.get(..d - 2 * cols),
                x.get(2 * cols..),
                x.get(cols - 1..d - cols - 1),
                x.get(cols + 1..d - cols + 1),
            );
            if let (Some(out), Some(mid), Some(up), Some(down), Some(left), Some(right)) = inner {
                combine(out, mid, [up, down, left, right], keep, 0);
            }
            // The flat pass took the previous row's last site as the left neighbour of column
            // 0, and the next row's first as the right neighbour of the last column.
            let (absent, wrap) = if wrap_cols { (0, 1) } else { (ABSENT, 0) };
            let out_rows = class.chunks_exact_mut(cols.max(1)).skip(1);
            let x_rows = x.chunks_exact(cols.max(1));
            let windows = x_rows
                .clone()
                .zip(x_rows.clone().skip(1))
                .zip(x_rows.skip(2));
            for (out, ((prev, row), next)) in out_rows.zip(windows) {
                let (Some(&p), Some(&n), Some(&first), Some(&last)) =
                    (prev.last(), next.first(), row.first(), row.last())
                else {
                    continue;
                };
                if let Some(o) = out.first_mut() {
                    *o = o
                        .wrapping_sub(p << 1)
                        .wrapping_add(absent + wrap * (last << 1));
                }
                if let Some(o) = out.last_mut() {
                    *o = o
                        .wrapping_sub(n << 1)
                        .wrapping_add(absent + wrap * (first << 1));
                }
            }
        }
        let row_at = |r: usize| x.get(r * cols..(r + 1) * cols);
        for r in [0, rows - 1] {
            let (Some(row), Some(out)) = (row_at(r), class.get_mut(r * cols..(r + 1) * cols))
            else {
                continue;
            };
            let up = match r {
                0 if wrap_rows => row_at(rows - 1),
                0 => None,
                _ => row_at(r - 1),
            };
            let down = match r + 1 {
                n if n < rows => row_at(n),
                _ if wrap_rows => row_at(0),
                _ => None,
            };
            boundary_row(row, up, down, out, keep, wrap_cols);
        }
    }

    /// Writes the class byte of every site of `x` into `class`, keeping the bits of `keep`
    /// (0 or [`FLIP_BIT`]) of what `class` held: the inner rows in one flat SWAR pass (then
    /// their first and last columns corrected), the first and last rows one at a time (32-bit targets).
    #[cfg(not(target_pointer_width = "64"))]
    #[inline(always)]
    fn fill_classes(&self, x: &[u8], class: &mut [u8], keep: u8) {
        let dims = self.model.dims();
        let (rows, cols) = (dims.rows(), dims.cols());
        let d = rows * cols;
        let (wrap_rows, wrap_cols) = self.model.wraps();
        if rows >= 3 {
            let inner = (
                class.get_mut(cols..d - cols),
                x.get(cols..d - cols),
                x.get(..d - 2 * cols),
                x.get(2 * cols..),
                x.get(cols - 1..d - cols - 1),
                x.get(cols + 1..d - cols + 1),
            );
            if let (Some(out), Some(mid), Some(up), Some(down), Some(left), Some(right)) = inner {
                inner_classes(out, [mid, up, down, left, right], keep);
            }
            // The flat pass took the previous row's last site as the left neighbour of column
            // 0, and the next row's first as the right neighbour of the last column.
            let first_col = class.get_mut(cols..d - cols).unwrap_or(&mut []);
            for (r, out) in first_col.chunks_exact_mut(cols.max(1)).enumerate() {
                let start = (r + 1) * cols;
                let at = |i: usize| x.get(i).map_or(0, |&v| v << 1);
                let (left, right) = if wrap_cols {
                    (at(start + cols - 1), at(start))
                } else {
                    (ABSENT, ABSENT)
                };
                if let Some(o) = out.first_mut() {
                    *o = o.wrapping_sub(at(start - 1)).wrapping_add(left);
                }
                if let Some(o) = out.last_mut() {
                    *o = o.wrapping_sub(at(start + cols)).wrapping_add(right);
                }
            }
        }
        let row_at = |r: usize| x.get(r * cols..(r + 1) * cols);
        for r in [0, rows - 1] {
            let (Some(row), Some(out)) = (row_at(r), class.get_mut(r * cols..(r + 1) * cols))
            else {
                continue;
            };
            let up = match r {
                0 if wrap_rows => row_at(rows - 1),
                0 => None,
                _ => row_at(r - 1),
            };
            let down = match r + 1 {
                n if n < rows => row_at(n),
                _ if wrap_rows => row_at(0),
                _ => None,
            };
            vertical(row, up, down, out, keep);
            horizontal(row, out, wrap_cols);
        }
    }

    /// Draws the flips through `passes`: sets the flip bit of every flipping site, subtracts
    /// each site's (class, flip) bin from `tally`, and returns the number of flips. Site `i` uses
    /// bits `16·(i mod 4) ..` of the `⌊i/4⌋`-th word.
    #[cfg(target_pointer_width = "64")]
    #[inline(always)]
    fn draw<R: Rng + ?Sized, P: LatticePasses + ?Sized>(
        &self,
        class: &mut [u8],
        tally: &mut P::Tally,
        rng: &mut R,
        passes: &P,
    ) -> usize {
        // Every class byte is below 32 at a draw: the head of the table is all of it.
        let Some(thresholds) = self.threshold.first_chunk::<32>() else {
            return 0;
        };
        // The block's words in stream order, so the stream is consumed as word by word.
        let mut words = [0u64; WORDS_PER_CALL];
        for block in class.chunks_mut(WORDS_PER_CALL * SITES_PER_WORD) {
            let used = block.len().div_ceil(SITES_PER_WORD);
            let words = words.get_mut(..used).unwrap_or(&mut []);
            for w in words.iter_mut() {
                *w = rng.next_u64();
            }
            passes.flip(thresholds, block, words, tally);
        }
        passes.drawn(class, self.bins(), tally)
    }

    /// The bins a class byte can fall in: `m ≤ 8`, and `m` even when every site has four
    /// neighbours.
    #[cfg(target_pointer_width = "64")]
    #[inline(always)]
    fn bins(&self) -> &[u8] {
        self.bins.get(..usize::from(self.bin_count)).unwrap_or(&[])
    }

    /// Draws the flips, four sites at a time (see the 64-bit version).
    #[cfg(not(target_pointer_width = "64"))]
    #[inline(always)]
    fn draw<R: Rng + ?Sized>(&self, class: &mut [u8], hist: &mut Histogram, rng: &mut R) -> usize {
        let mut count = 0usize;
        let mut quads = class.chunks_exact_mut(SITES_PER_WORD);
        for quad in &mut quads {
            let word = rng.next_u64();
            // Two 32-bit halves: on a 32-bit core each is one register.
            let (low, high) = (word as u32, (word >> 32) as u32);
            if let Ok([a, b, c, e]) = <&mut [u8; SITES_PER_WORD]>::try_from(quad) {
                count += self.flip(a, low as u16, hist)
                    + self.flip(b, (low >> SITE_BITS) as u16, hist)
                    + self.flip(c, high as u16, hist)
                    + self.flip(e, (high >> SITE_BITS) as u16, hist);
            }
        }
        let rest = quads.into_remainder();
        if !rest.is_empty() {
            let mut word = rng.next_u64();
            for k in rest {
                count += self.flip(k, word as u16, hist);
                word >>= SITE_BITS;
            }
        }
        count
    }

    /// Sets the flip bit of class `k` if `r` is below its threshold, counts the site out of its
    /// bin, and returns 1 if it flips.
    #[cfg(not(target_pointer_width = "64"))]
    #[inline(always)]
    fn flip(&self, k: &mut u8, r: u16, hist: &mut Histogram) -> usize {
        let t = self.threshold.get(usize::from(*k)).copied().unwrap_or(0);
        let f = u8::from(r < t);
        let kv = *k | (f << 5);
        *k = kv;
        if let Some(n) = hist.get_mut(bin(kv)) {
            *n -= 1;
        }
        usize::from(f)
    }

    /// Counts every site into the bin of its (new class, flip), a word of sites at a time.
    #[cfg(not(target_pointer_width = "64"))]
    #[inline(always)]
    fn count_bins(class: &[u8], hist: &mut Histogram) {
        let mut words = class.chunks_exact(WORD);
        for w in &mut words {
            for word in Chunk::load(w).0 {
                for lane in 0..WORD / WORDS {
                    if let Some(n) = hist.get_mut((word >> (8 * lane)) & usize::from(BIN_MASK)) {
                        *n += 1;
                    }
                }
            }
        }
        for &k in words.remainder() {
            if let Some(n) = hist.get_mut(usize::from(k & BIN_MASK)) {
                *n += 1;
            }
        }
    }

    /// From the histogram difference (reverse bins minus forward bins): `ln q(x | x') −
    /// ln q(x' | x)`, and `(pair, ups)` with `ΔU = 2J·pair + 2h·ups` exactly:
    /// `4·pair = Σ_i s'_i n'_i − Σ_i s_i n_i` (every bond counted from both ends) and
    /// `ups = Σ_i (x'_i − x_i)`.
    #[inline(always)]
    fn histogram_terms(&self, hist: &Histogram) -> (f64, i64, i64) {
        let (mut hi, mut lo, mut pair4, mut ups) = (0i64, 0i64, 0i64, 0i64);
        for group in [0u8, X_BIT, FLIP_BIT, FLIP_BIT | X_BIT] {
            let (mut m_sum, mut n_sum) = (0i64, 0i64);
            for m in 0..9 {
                let bin = usize::from(group) | m;
                let n = hist.get(bin).map_or(0, |&n| n as i64);
                hi += n * i64::from(self.log_hi.get(bin).copied().unwrap_or(0));
                lo += n * i64::from(self.log_lo.get(bin).copied().unwrap_or(0));
                m_sum += n * m as i64;
                n_sum += n;
            }
            // s (m − 4), s = ±1 by the value bit.
            let s_n = m_sum - 4 * n_sum;
            if group & X_BIT != 0 {
                pair4 += s_n;
                ups += n_sum;
            } else {
                pair4 -= s_n;
            }
        }
        // |hi|, |lo| < 2^30 and Σ|count| ≤ 2d < 2^33: neither sum overflows. The exact total,
        // rounded once.
        let total = (i128::from(hi) << SPLIT) + i128::from(lo);
        let ratio = total as f64 * FIXED_UNIT;
        (ratio, pair4 / 4, ups)
    }

    /// `ΔU = 2J·pair + 2h·ups` (see [`histogram_terms`](Self::histogram_terms)).
    #[inline(always)]
    fn delta_u(&self, pair: i64, ups: i64) -> f64 {
        self.coupling * (2 * pair) as f64 + self.field * (2 * ups) as f64
    }

    /// On acceptance: the gradient of every site from its new class byte, computed as
    /// [`new`](Self::new) tabulates it (the same operations, so the same bits), which
    /// vectorises where a table lookup per site does not.
    #[cfg(target_pointer_width = "64")]
    #[inline(always)]
    fn refresh_grad(&self, grad: &mut [f32], class: &[u8]) {
        let (coupling, field) = (self.model.coupling(), self.model.field());
        for (g, &k) in grad.iter_mut().zip(class) {
            let n = i32::from(k & M_MASK) - 4;
            *g = 2.0 * (coupling * (n as f32) + field);
        }
    }

    /// On acceptance: the gradient of every site from its new class byte.
    #[cfg(not(target_pointer_width = "64"))]
    #[inline(always)]
    fn refresh_grad(&self, grad: &mut [f32], class: &[u8]) {
        for (g, &k) in grad.iter_mut().zip(class) {
            *g = self
                .grad
                .get(usize::from(k & M_MASK))
                .copied()
                .unwrap_or(0.0);
        }
    }
}

/// `ln p` in fixed point at scale `2^56`, split as `(hi, lo)` with `L = hi · 2^30 + lo`.
fn fixed_log(p: f64) -> (i32, i32) {
    let fixed = (libm::log(p) * libm::exp2(f64::from(FIXED_BITS))) as i64;
    ((fixed >> SPLIT) as i32, (fixed & ((1 << SPLIT) - 1)) as i32)
}

/// `out = (out & keep) | (16 mid + 2 Σ nb + base)` byte by byte, a chunk of sites at a time
/// (the last chunk overlapping the one before it: the formula is idempotent); every slice has
/// `out`'s length. Every byte stays below 32, so no carry crosses a byte.
#[cfg(target_pointer_width = "64")]
#[inline(always)]
fn combine<const N: usize>(out: &mut [u8], mid: &[u8], nb: [&[u8]; N], keep: u8, base: u8) {
    let len = out.len();
    if len < WORD {
        for (i, (o, &c)) in out.iter_mut().zip(mid).enumerate() {
            let sum = nb
                .iter()
                .fold(0u8, |acc, s| acc + s.get(i).copied().unwrap_or(0));
            *o = (*o & keep) | ((c << 4) + (sum << 1) + base);
        }
        return;
    }
    let (keep_word, base_word) = (Chunk::splat(keep), Chunk::splat(base));
    #[inline(always)]
    fn class_chunk(o: &[u8], c: &[u8], sum: Chunk, keep: Chunk, base: Chunk) -> Chunk {
        (Chunk::load(o) & keep) | (Chunk::load(c).shl(4) + sum.shl(1) + base)
    }
    if let [up, down, left, right] = nb.as_slice() {
        // The flat pass over the inner rows: one zip, which the compiler keeps free of checks.
        let words = out
            .chunks_exact_mut(WORD)
            .zip(mid.chunks_exact(WORD))
            .zip(up.chunks_exact(WORD))
            .zip(down.chunks_exact(WORD))
            .zip(left.chunks_exact(WORD))
            .zip(right.chunks_exact(WORD));
        for (((((o, c), u), dn), l), r) in words {
            let sum = Chunk::load(u) + Chunk::load(dn) + Chunk::load(l) + Chunk::load(r);
            class_chunk(o, c, sum, keep_word, base_word).store(o);
        }
    } else {
        for (w, (o, c)) in out
            .chunks_exact_mut(WORD)
            .zip(mid.chunks_exact(WORD))
            .enumerate()
        {
            let at = w * WORD;
            let sum = nb.iter().fold(Chunk::splat(0), |acc, s| {
                acc + s.get(at..at + WORD).map_or(Chunk::splat(0), Chunk::load)
            });
            class_chunk(o, c, sum, keep_word, base_word).store(o);
        }
    }
    if !len.is_multiple_of(WORD) {
        let tail = len - WORD;
        let at = |s: &[u8]| s.get(tail..).map_or(Chunk::splat(0), Chunk::load);
        let sum = nb.iter().fold(Chunk::splat(0), |acc, s| acc + at(s));
        let c = mid.get(tail..).unwrap_or(&[]);
        if let Some(o) = out.get_mut(tail..) {
            class_chunk(o, c, sum, keep_word, base_word).store(o);
        }
    }
}

/// The class bytes of the inner rows in one flat pass, a word of sites at a time:
/// `16 x + 2 (x_up + x_down + x_left + x_right)`, keeping the bits `keep` of `out`. Every byte
/// stays below 32, so no carry crosses a byte.
#[cfg(not(target_pointer_width = "64"))]
#[inline(always)]
fn inner_classes(out: &mut [u8], [mid, up, down, left, right]: [&[u8]; 5], keep: u8) {
    let keep_word = Chunk::splat(keep);
    let words = out
        .chunks_exact_mut(WORD)
        .zip(mid.chunks_exact(WORD))
        .zip(up.chunks_exact(WORD))
        .zip(down.chunks_exact(WORD))
        .zip(left.chunks_exact(WORD))
        .zip(right.chunks_exact(WORD));
    for (((((o, c), u), dn), l), r) in words {
        let sum = Chunk::load(u) + Chunk::load(dn) + Chunk::load(l) + Chunk::load(r);
        ((Chunk::load(o) & keep_word) | (Chunk::load(c).shl(4) + sum.shl(1))).store(o);
    }
    let done = out.len() - out.len() % WORD;
    fn tail(s: &[u8], done: usize) -> &[u8] {
        s.get(done..).unwrap_or(&[])
    }
    let rest = out
        .get_mut(done..)
        .unwrap_or(&mut [])
        .iter_mut()
        .zip(tail(mid, done))
        .zip(tail(up, done))
        .zip(tail(down, done))
        .zip(tail(left, done))
        .zip(tail(right, done));
    for (((((o, &c), &u), &dn), &l), &r) in rest {
        *o = (*o & keep) | ((c << 4) + ((u + dn + l + r) << 1));
    }
}

/// Toggles every site of `x` whose class byte has the flip bit, a word at a time.
#[inline(always)]
fn toggle_flipped(x: &mut [u8], class: &[u8]) {
    for (xw, kw) in x.chunks_exact_mut(WORD).zip(class.chunks_exact(WORD)) {
        (Chunk::load(xw) ^ (Chunk::load(kw).shr(5) & Chunk::splat(1))).store(xw);
    }
    let done = x.len() - x.len() % WORD;
    let rest = x.get_mut(done..).unwrap_or(&mut []);
    for (v, &k) in rest.iter_mut().zip(class.get(done..).unwrap_or(&[])) {
        *v ^= (k >> 5) & 1;
    }
}

/// The Metropolis test `ln u < ratio`, with `u` the draw of
/// [`open_unit_f64`](crate::random::open_unit_f64) made from `word`:
/// decided in single precision (no double-precision logarithm) unless `u` lies within a
/// relative `2^−16` of `e^ratio`, where the test is made exactly as written. The single
/// precision figures are within a relative `4·10^−6` of the exact ones (the rounding of `ratio`
/// to `f32` at `|ratio| < 37.5`, of `u`, and the error of [`Fast::exp`], below one ulp like a
/// library `expf`), so the decision is always that of the exact test.
#[inline(always)]
fn metropolis_accepts(word: u64, ratio: f64) -> bool {
    /// Below `ln 2^−54`, the logarithm of the smallest `u`.
    const LN_U_FLOOR: f64 = -37.5;
    const BAND: f32 = 1.0 / 65_536.0;
    if ratio >= 0.0 {
        return true;
    }
    // Also a NaN ratio: rejected, as `ln u < NaN` is false.
    if ratio.is_nan() || ratio <= LN_U_FLOOR {
        return false;
    }
    let bound = Fast::exp(ratio as f32);
    let u = ((word >> 11) as f32 + 0.5) * (1.0 / 9_007_199_254_740_992.0);
    if u < bound * (1.0 - BAND) {
        return true;
    }
    if u > bound * (1.0 + BAND) {
        return false;
    }
    libm::log(open_unit_f64_of(word)) < ratio
}

/// The class bytes of a first or last row: its inner columns in one pass, its two ends one at
/// a time. `up` and `down` are the rows above and below (`None` where absent).
#[cfg(target_pointer_width = "64")]
#[inline(always)]
fn boundary_row(
    row: &[u8],
    up: Option<&[u8]>,
    down: Option<&[u8]>,
    out: &mut [u8],
    keep: u8,
    wrap: bool,
) {
    fn inner(s: &[u8], cols: usize) -> Option<&[u8]> {
        s.get(1..cols.saturating_sub(1))
    }
    let cols = row.len();
    let sides = (
        inner(row, cols),
        row.get(..cols.saturating_sub(2)),
        row.get(2..),
    );
    if let (Some(o), (Some(mid), Some(l), Some(r))) =
        (out.get_mut(1..cols.saturating_sub(1)), sides)
    {
        match (
            up.and_then(|u| inner(u, cols)),
            down.and_then(|d| inner(d, cols)),
        ) {
            (Some(u), Some(d)) => combine(o, mid, [u, d, l, r], keep, 0),
            (Some(v), None) | (None, Some(v)) => combine(o, mid, [v, l, r], keep, ABSENT),
            (None, None) => combine(o, mid, [l, r], keep, 2 * ABSENT),
        }
    }
    let nb = |s: Option<&[u8]>, c: usize| s.and_then(|s| s.get(c)).map_or(ABSENT, |&v| v << 1);
    for c in [0, cols.saturating_sub(1)] {
        let left = match c {
            0 if wrap => cols.checked_sub(1),
            0 => None,
            _ => Some(c - 1),
        };
        let right = match c + 1 {
            n if n < cols => Some(n),
            _ if wrap => Some(0),
            _ => None,
        };
        let m = nb(up, c)
            + nb(down, c)
            + nb(Some(row), left.unwrap_or(cols))
            + nb(Some(row), right.unwrap_or(cols));
        if let (Some(o), Some(&v)) = (out.get_mut(c), row.get(c)) {
            *o = (*o & keep) | ((v << 4) + m);
        }
    }
}

/// The vertical part of the class bytes of one row: `16 x + (s_up + 1) + (s_down + 1)`,
/// keeping the bits `keep` of `out`.
#[cfg(not(target_pointer_width = "64"))]
#[inline(always)]
fn vertical(row: &[u8], up: Option<&[u8]>, down: Option<&[u8]>, out: &mut [u8], keep: u8) {
    match (up, down) {
        (Some(u), Some(d)) => row_classes(out, row, [u, d], keep, 0),
        (Some(v), None) | (None, Some(v)) => row_classes(out, row, [v], keep, ABSENT),
        (None, None) => row_classes(out, row, [], keep, 2 * ABSENT),
    }
}

/// `out = (out & keep) | (16 x + 2 Σ neighbours + base)` byte by byte, a word at a time.
#[cfg(not(target_pointer_width = "64"))]
#[inline(always)]
fn row_classes<const N: usize>(out: &mut [u8], x: &[u8], nb: [&[u8]; N], keep: u8, base: u8) {
    let len = out.len();
    let (keep_word, base_word) = (Chunk::splat(keep), Chunk::splat(base));
    for w in 0..len / WORD {
        let at = w * WORD;
        let word = |s: &[u8]| s.get(at..at + WORD).map_or(Chunk::splat(0), Chunk::load);
        let sum = nb.iter().fold(Chunk::splat(0), |acc, s| acc + word(s));
        let c = word(x);
        if let Some(o) = out.get_mut(at..at + WORD) {
            ((Chunk::load(o) & keep_word) | (c.shl(4) + sum.shl(1) + base_word)).store(o);
        }
    }
    for i in len - len % WORD..len {
        let byte = |s: &[u8]| s.get(i).copied().unwrap_or(0);
        let sum = nb.iter().fold(0, |acc, s| acc + byte(s));
        let c = byte(x);
        if let Some(o) = out.get_mut(i) {
            *o = (*o & keep) | ((c << 4) + (sum << 1) + base);
        }
    }
}

/// Adds `2 (l + r)` to every byte of `out`, a word at a time.
#[cfg(not(target_pointer_width = "64"))]
#[inline(always)]
fn add_pairs(out: &mut [u8], l: &[u8], r: &[u8]) {
    let len = out.len();
    for w in 0..len / WORD {
        let at = w * WORD;
        let word = |s: &[u8]| s.get(at..at + WORD).map_or(Chunk::splat(0), Chunk::load);
        let sum = word(l) + word(r);
        if let Some(o) = out.get_mut(at..at + WORD) {
            (Chunk::load(o) + sum.shl(1)).store(o);
        }
    }
    for i in len - len % WORD..len {
        let byte = |s: &[u8]| s.get(i).copied().unwrap_or(0);
        if let Some(o) = out.get_mut(i) {
            *o += (byte(l) + byte(r)) << 1;
        }
    }
}

/// Adds the horizontal neighbours' `s + 1` to the class bytes of one row.
#[cfg(not(target_pointer_width = "64"))]
#[inline(always)]
fn horizontal(row: &[u8], out: &mut [u8], wrap: bool) {
    let cols = row.len();
    if let (Some(inner), Some(right)) = (out.get_mut(1..cols.saturating_sub(1)), row.get(2..)) {
        add_pairs(inner, row, right);
    }
    let first = row.first().map_or(ABSENT, |&v| v << 1);
    let last = row.last().map_or(ABSENT, |&v| v << 1);
    if cols == 1 {
        if let Some(o) = out.first_mut() {
            *o += 2 * ABSENT;
        }
        return;
    }
    let second = row.get(1).map_or(ABSENT, |&v| v << 1);
    let before_last = row.get(cols - 2).map_or(ABSENT, |&v| v << 1);
    let (wrap_first, wrap_last) = if wrap {
        (last, first)
    } else {
        (ABSENT, ABSENT)
    };
    if let Some(o) = out.first_mut() {
        *o += wrap_first + second;
    }
    if let Some(o) = out.last_mut() {
        *o += before_last + wrap_last;
    }
}

/// The per-site passes of a lattice step on 64-bit targets, which a platform may run with
/// vector instructions that portable code cannot express (a table lookup per byte lane).
///
/// A class byte `k` holds the site's neighbour sum `m = n + 4` in bits 0–3, its value in bit 4
/// and, once drawn, its flip in bit 5. A step calls [`tally`](Self::tally), then
/// [`flip`](Self::flip) on consecutive pieces of the class bytes that cover them all,
/// [`drawn`](Self::drawn) once on all of them, [`count`](Self::count) once on the classes of
/// the proposed state, and [`histogram`](Self::histogram). [`PortablePasses`] defines the
/// results (with [`draw_flips`] as the draw); an implementation must return exactly the same
/// for every input, so that the draws do not depend on it.
pub trait LatticePasses {
    /// The bin counts of a step in progress, in the implementation's own form.
    type Tally;

    /// An empty tally.
    fn tally(&self) -> Self::Tally;

    /// Draws the flips of `class` as [`draw_flips`] does (a step's class bytes are below 32
    /// then). The sites may be counted out of their bins here or in [`drawn`](Self::drawn).
    fn flip(
        &self,
        thresholds: &[u16; 32],
        class: &mut [u8],
        words: &[u64],
        tally: &mut Self::Tally,
    );

    /// Once the flips of all of `class` are drawn: subtracts from `tally` every site's bin
    /// (`class & 0x3f`; each `b` of `bins` is counted, below [`CLASS_LIMIT`] and none twice),
    /// unless [`flip`](Self::flip) did, and returns the number of sites with the flip bit.
    fn drawn(&self, class: &[u8], bins: &[u8], tally: &mut Self::Tally) -> usize;

    /// Adds every site's bin of `class` to `tally` (for the bins of `bins`). Every byte of
    /// `class` must be below [`CLASS_LIMIT`] (otherwise the counts are unspecified, but
    /// nothing panics).
    fn count(&self, class: &[u8], bins: &[u8], tally: &mut Self::Tally);

    /// Adds the tally of bin `b` to `hist[b]`, for every `b` of `bins`.
    fn histogram(&self, tally: &Self::Tally, bins: &[u8], hist: &mut [isize; 64]);
}

/// The draw of the flips of `class`, which defines it: site `j` flips when bits
/// `16·(j mod 4) .. 16·(j mod 4) + 16` of `words[j / 4]`, read as an integer, are below
/// `thresholds[k mod 32]`, and then gets bit 5 set. Sites beyond `4 · words.len()` are left
/// alone.
#[inline(always)]
pub fn draw_flips(thresholds: &[u16; 32], class: &mut [u8], words: &[u64]) {
    let flip = |k: u8, r: u16| {
        let t = thresholds.get(usize::from(k & 0x1f)).copied().unwrap_or(0);
        u32::from(r < t) << 5
    };
    let done = class.len() / SITES_PER_WORD;
    let mut quads = class.chunks_exact_mut(SITES_PER_WORD);
    for (quad, &w) in (&mut quads).zip(words) {
        // The four sites as one word: one load and one store.
        let Ok(quad) = <&mut [u8; SITES_PER_WORD]>::try_from(quad) else {
            continue;
        };
        let k = u32::from_le_bytes(*quad);
        let mut flips = 0;
        for lane in 0..SITES_PER_WORD {
            let r = (w >> (SITE_BITS as usize * lane)) as u16;
            flips |= flip((k >> (8 * lane)) as u8, r) << (8 * lane);
        }
        *quad = (k | flips).to_le_bytes();
    }
    let rest = quads.into_remainder();
    if let Some(&w) = words.get(done) {
        for (lane, k) in rest.iter_mut().enumerate() {
            *k |= flip(*k, (w >> (SITE_BITS as usize * lane)) as u16) as u8;
        }
    }
}

/// The portable [`LatticePasses`], a site at a time: both counts go to one set of eight
/// interleaved sub-histograms (site `i` of a count into sub-histogram `i mod 8`, so that
/// successive sites of one class do not each wait for the previous increment of the same
/// counter to be stored), cleared and summed once a step.
#[derive(Clone, Copy, Debug, Default)]
pub struct PortablePasses;

impl PortablePasses {
    /// Adds `delta` to the bin of every site of `class` in `tally`.
    #[inline(always)]
    fn tally_sites(class: &[u8], tally: &mut [[i32; BINS]; SPLITS], delta: i32) {
        let mut groups = class.chunks_exact(SPLITS);
        for group in &mut groups {
            for (counts, &k) in tally.iter_mut().zip(group) {
                if let Some(n) = counts.get_mut(bin(k)) {
                    *n += delta;
                }
            }
        }
        for (counts, &k) in tally.iter_mut().zip(groups.remainder()) {
            if let Some(n) = counts.get_mut(bin(k)) {
                *n += delta;
            }
        }
    }

    /// The count of bin `b` summed over the sub-histograms (each at most `⌈d/SPLITS⌉ < 2^31`
    /// in magnitude).
    #[inline(always)]
    fn total(tally: &[[i32; BINS]; SPLITS], b: u8) -> isize {
        let n: i32 = tally
            .iter()
            .map(|c| c.get(bin(b)).copied().unwrap_or(0))
            .sum();
        n as isize
    }
}

impl LatticePasses for PortablePasses {
    type Tally = [[i32; BINS]; SPLITS];

    #[inline(always)]
    fn tally(&self) -> Self::Tally {
        [[0; BINS]; SPLITS]
    }

    #[inline(always)]
    fn flip(&self, thresholds: &[u16; 32], class: &mut [u8], words: &[u64], _: &mut Self::Tally) {
        draw_flips(thresholds, class, words);
    }

    #[inline(always)]
    fn drawn(&self, class: &[u8], bins: &[u8], tally: &mut Self::Tally) -> usize {
        Self::tally_sites(class, tally, -1);
        // The flips, from their bins (the forward counts are negative).
        let flipped: isize = bins
            .iter()
            .filter(|&&b| b & FLIP_BIT != 0)
            .map(|&b| Self::total(tally, b))
            .sum();
        flipped.unsigned_abs()
    }

    #[inline(always)]
    fn count(&self, class: &[u8], _: &[u8], tally: &mut Self::Tally) {
        Self::tally_sites(class, tally, 1);
    }

    #[inline(always)]
    fn histogram(&self, tally: &Self::Tally, bins: &[u8], hist: &mut [isize; 64]) {
        for &b in bins {
            if let Some(h) = hist.get_mut(usize::from(b)) {
                *h += Self::total(tally, b);
            }
        }
    }
}

/// The flip kernels with the tabulated lattice proposal, unadjusted (`ADJUSTED = false`:
/// [`LatticeDula`]) or Metropolis-adjusted (`ADJUSTED = true`: [`LatticeDmala`]).
#[derive(Clone, Copy, Debug)]
pub struct LatticeKernel<D: LatticeDims, const ADJUSTED: bool> {
    proposal: LatticeProposal<D>,
}

/// The unadjusted kernel with the tabulated lattice proposal: every proposal is accepted.
///
/// Like [`Dula`](super::Dula) on the same model, with the proposal quantised as
/// [`LatticeProposal`] describes.
pub type LatticeDula<D> = LatticeKernel<D, false>;

/// The Metropolis-adjusted kernel with the tabulated lattice proposal: exact for every step and
/// balance.
pub type LatticeDmala<D> = LatticeKernel<D, true>;

impl<D: LatticeDims, const ADJUSTED: bool> LatticeKernel<D, ADJUSTED> {
    /// The kernel with this proposal.
    pub fn new(proposal: LatticeProposal<D>) -> Self {
        Self { proposal }
    }

    /// The proposal.
    pub fn proposal(&self) -> &LatticeProposal<D> {
        &self.proposal
    }

    /// Advances `chain`, which must have been started on the proposal's model, by one step.
    /// Consumes `⌈d/4⌉` words of `rng`, and one more for the Metropolis test of the adjusted
    /// kernel. The chain's log-density and gradient are updated as the model would compute them.
    ///
    /// # Errors
    ///
    /// [`LenError`] if the chain's dimension is not the model's; the chain is unchanged then.
    #[cfg_attr(target_arch = "x86_64", inline(always))]
    pub fn step<R: Rng + ?Sized>(
        &self,
        chain: &mut BinaryChain<'_>,
        rng: &mut R,
    ) -> Result<StepReport, LenError> {
        self.step_with(chain, rng, &PortablePasses)
    }

    /// [`step`](Self::step) with the per-site passes run by `passes`, whose results equal
    /// those of [`PortablePasses`] (so the draws are the same). 32-bit targets run passes of
    /// their own, a machine word at a time, and do not call `passes`.
    ///
    /// # Errors
    ///
    /// As for [`step`](Self::step).
    #[cfg_attr(target_arch = "x86_64", inline(always))]
    pub fn step_with<R: Rng + ?Sized, P: LatticePasses + ?Sized>(
        &self,
        chain: &mut BinaryChain<'_>,
        rng: &mut R,
        passes: &P,
    ) -> Result<StepReport, LenError> {
        let p = &self.proposal;
        LenError::check("chain", p.dim(), chain.dim())?;
        p.fill_classes(chain.x, chain.x_proposal, 0);
        Ok(self.step_classified(chain, rng, passes, None))
    }

    /// [`step_with`](Self::step_with), with the class bytes of the chain's state kept in
    /// `classes` from one step to the next: the same draws and the same chain, for one pass
    /// over the sites fewer per step (the classes of the current state are copied rather than
    /// computed). `classes` may start empty and may be shared with other chains or lattices;
    /// it is refilled whenever it does not describe the chain (see [`LatticeClasses`]).
    ///
    /// # Errors
    ///
    /// As for [`step`](Self::step), and [`LenError`] if `classes` does not hold `d` bytes;
    /// the chain and `classes` are unchanged then.
    ///
    /// # Examples
    ///
    /// ```
    /// use langevin_core::binary::{
    ///     BinaryChain, ChainStorage, LatticeClasses, LatticeDmala, LatticeProposal, PortablePasses,
    /// };
    /// use langevin_core::models::{ConstDims, IsingLattice};
    /// use rand_core::SeedableRng;
    ///
    /// let mut model = IsingLattice::<ConstDims<8, 8>>::new(0.3, 0.0, true).unwrap();
    /// let kernel = LatticeDmala::new(LatticeProposal::new(&model, 0.3, 0.5).unwrap());
    /// let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
    /// let mut storage = ChainStorage::<64>::new([0; 64]);
    /// let mut chain = BinaryChain::new(storage.buffers(), &mut model).unwrap();
    /// let mut classes = LatticeClasses::new([0u8; 64]);
    /// for _ in 0..100 {
    ///     kernel.step_with_classes(&mut chain, &mut classes, &mut rng, &PortablePasses).unwrap();
    /// }
    ///
    /// // The same stream and start without the kept classes: the same chain.
    /// let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
    /// let mut again = ChainStorage::<64>::new([0; 64]);
    /// let mut plain = BinaryChain::new(again.buffers(), &mut model).unwrap();
    /// for _ in 0..100 {
    ///     kernel.step(&mut plain, &mut rng).unwrap();
    /// }
    /// assert_eq!(plain.state(), chain.state());
    /// ```
    #[cfg_attr(target_arch = "x86_64", inline(always))]
    pub fn step_with_classes<R, P, S>(
        &self,
        chain: &mut BinaryChain<'_>,
        classes: &mut LatticeClasses<S>,
        rng: &mut R,
        passes: &P,
    ) -> Result<StepReport, LenError>
    where
        R: Rng + ?Sized,
        P: LatticePasses + ?Sized,
        S: AsRef<[u8]> + AsMut<[u8]>,
    {
        let p = &self.proposal;
        LenError::check("chain", p.dim(), chain.dim())?;
        LenError::check("classes", p.dim(), classes.bytes.as_ref().len())?;
        classes.load(p, chain.x, chain.x_proposal);
        Ok(self.step_classified(chain, rng, passes, Some(classes.bytes.as_mut())))
    }

    /// The step once the class bytes of the current state are in `chain.x_proposal` (every
    /// length checked): on acceptance of a move, `kept` (if given) receives the new state's.
    #[inline(always)]
    fn step_classified<R: Rng + ?Sized, P: LatticePasses + ?Sized>(
        &self,
        chain: &mut BinaryChain<'_>,
        rng: &mut R,
        passes: &P,
        kept: Option<&mut [u8]>,
    ) -> StepReport {
        let p = &self.proposal;
        let class = &mut *chain.x_proposal;
        #[cfg(target_pointer_width = "64")]
        let mut tally = passes.tally();
        #[cfg(target_pointer_width = "64")]
        let flips = p.draw(class, &mut tally, rng, passes);
        #[cfg(not(target_pointer_width = "64"))]
        let mut hist: Histogram = [0; BINS];
        #[cfg(not(target_pointer_width = "64"))]
        let flips = {
            let _ = passes;
            p.draw(class, &mut hist, rng)
        };
        let u_word = if ADJUSTED { rng.next_u64() } else { 0 };
        let mut report = StepReport::proposed(true, flips, u32::from(flips > 0));
        if flips == 0 {
            return report;
        }
        // The proposed state in place of the current one, and its classes (flip bits kept).
        toggle_flipped(chain.x, class);
        p.fill_classes(chain.x, class, FLIP_BIT);
        #[cfg(target_pointer_width = "64")]
        let mut hist: Histogram = [0; BINS];
        #[cfg(target_pointer_width = "64")]
        {
            passes.count(class, p.bins(), &mut tally);
            passes.histogram(&tally, p.bins(), &mut hist);
        }
        #[cfg(not(target_pointer_width = "64"))]
        LatticeProposal::<D>::count_bins(class, &mut hist);
        let (log_q_ratio, pair, ups) = p.histogram_terms(&hist);
        let delta_u = p.delta_u(pair, ups);
        if ADJUSTED {
            report.log_accept_ratio = delta_u + log_q_ratio;
            report.accepted = metropolis_accepts(u_word, report.log_accept_ratio);
        }
        if report.accepted {
            p.refresh_grad(chain.grad, class);
            chain.log_density += delta_u;
            if let Some(kept) = kept {
                keep_classes(kept, class);
            }
        } else {
            toggle_flipped(chain.x, class);
        }
        report
    }
}

/// The class bytes of a chain's current state, kept by
/// [`LatticeKernel::step_with_classes`] from one step to the next in `d` bytes of storage `S`
/// that the caller owns (an array, a slice, a `Vec`).
///
/// A step trusts the bytes only while they describe its chain: they must have been computed
/// on the kernel's lattice (its shape and boundaries), and their value bits must equal the
/// chain's state, which one pass checks while copying them (a state changed by other code,
/// or another chain stepped with the same bytes, fails the check). Otherwise the step
/// computes them afresh, so stale bytes cost time, never a wrong draw.
#[derive(Clone, Debug)]
pub struct LatticeClasses<S> {
    bytes: S,
    /// The lattice `(rows, cols, wraps)` the bytes were computed on; `None` until they are.
    lattice: Option<(usize, usize, (bool, bool))>,
}

impl<S: AsRef<[u8]> + AsMut<[u8]>> LatticeClasses<S> {
    /// Empty kept classes in `bytes` (which must hold `d` bytes; their content is ignored).
    pub const fn new(bytes: S) -> Self {
        Self {
            bytes,
            lattice: None,
        }
    }

    /// The storage back.
    pub fn into_inner(self) -> S {
        self.bytes
    }

    /// Writes the class bytes of `x` on `p`'s lattice into `class` (of `x`'s length): copied
    /// if the kept ones describe `x`, computed and kept otherwise.
    #[inline(always)]
    fn load<D: LatticeDims>(&mut self, p: &LatticeProposal<D>, x: &[u8], class: &mut [u8]) {
        let dims = p.model.dims();
        let lattice = Some((dims.rows(), dims.cols(), p.model.wraps()));
        let bytes = self.bytes.as_mut();
        if self.lattice != lattice || copy_classes(class, bytes, x) {
            p.fill_classes(x, class, 0);
            keep_classes(bytes, class);
            self.lattice = lattice;
        }
    }
}

/// `class = kept`, a word at a time, and whether the value bits of `kept` (bit 4 of a class
/// byte below 32) differ from `x` anywhere.
#[inline(always)]
fn copy_classes(class: &mut [u8], kept: &[u8], x: &[u8]) -> bool {
    let one = Chunk::splat(1);
    let mut differ = Chunk::splat(0);
    let words = class
        .chunks_exact_mut(WORD)
        .zip(kept.chunks_exact(WORD))
        .zip(x.chunks_exact(WORD));
    for ((c, k), xw) in words {
        let k = Chunk::load(k);
        k.store(c);
        differ = differ | ((k.shr(4) & one) ^ Chunk::load(xw));
    }
    let done = class.len() - class.len() % WORD;
    let mut rest = 0u8;
    for ((c, &k), &xi) in class
        .get_mut(done..)
        .unwrap_or(&mut [])
        .iter_mut()
        .zip(kept.get(done..).unwrap_or(&[]))
        .zip(x.get(done..).unwrap_or(&[]))
    {
        *c = k;
        rest |= (k >> 4) ^ xi;
    }
    differ.0.iter().any(|&w| w != 0) || rest != 0
}

/// `kept = class` without the flip bits (the classes of an accepted proposal, or fresh ones),
/// a word at a time.
#[inline(always)]
fn keep_classes(kept: &mut [u8], class: &[u8]) {
    let mask = Chunk::splat(!FLIP_BIT);
    for (k, c) in kept.chunks_exact_mut(WORD).zip(class.chunks_exact(WORD)) {
        (Chunk::load(c) & mask).store(k);
    }
    let done = kept.len() - kept.len() % WORD;
    let rest = kept.get_mut(done..).unwrap_or(&mut []);
    for (k, &c) in rest.iter_mut().zip(class.get(done..).unwrap_or(&[])) {
        *k = c & !FLIP_BIT;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::SeedableRng;

    /// The test as written: `ln u < ratio` in double precision.
    fn exact(word: u64, ratio: f64) -> bool {
        libm::log(open_unit_f64_of(word)) < ratio
    }

    /// The single-precision shortcut decides as the exact test does: on ratios spread over the
    /// whole range, and on ratios within a few parts in 10^7 of `ln u`, where a shortcut
    /// without its exact fallback (or with an `exp` less accurate than its band allows) would
    /// decide otherwise.
    #[test]
    fn metropolis_shortcut_is_the_exact_test() {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(11);
        let mut near = 0;
        for k in 0..400_000u32 {
            let word = rng.next_u64();
            let ln_u = libm::log(open_unit_f64_of(word));
            let spread = f64::from(rng.next_u32()) / f64::from(u32::MAX);
            let ratio = match k % 4 {
                0 => -40.0 + 41.0 * spread,
                1 => ln_u * (1.0 + (spread - 0.5) * 1e-6),
                2 => ln_u + (spread - 0.5) * 1e-5,
                _ => ln_u,
            };
            if (ratio - ln_u).abs() < 1e-5 * ln_u.abs().max(1.0) {
                near += 1;
            }
            assert_eq!(
                metropolis_accepts(word, ratio),
                exact(word, ratio),
                "word {word:#x}, ratio {ratio}"
            );
        }
        assert!(near > 200_000, "{near} ratios near ln u");
        for ratio in [
            f64::NAN,
            f64::NEG_INFINITY,
            -37.5,
            -1e300,
            -0.0,
            0.0,
            f64::INFINITY,
        ] {
            for word in [0, 1 << 11, u64::MAX / 3, u64::MAX] {
                assert_eq!(
                    metropolis_accepts(word, ratio),
                    exact(word, ratio) || ratio >= 0.0
                );
            }
        }
    }
}
