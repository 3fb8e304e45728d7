//! The per-site passes of a lattice step on 64-bit targets ([`LatticePasses`]) and their
//! portable definition ([`PortablePasses`], [`draw_flips`]).

use super::{BINS, FLIP_BIT, SITE_BITS, SITES_PER_WORD, SPLITS, bin};

/// The per-site passes of a lattice step on 64-bit targets, which a platform may run with
/// vector instructions that portable code cannot express (a table lookup per byte lane).
///
/// A class byte `k` holds the site's neighbour sum `m = n + 4` in bits 0–3, its value in bit 4
/// and, once drawn, its flip in bit 5. A step calls [`tally`](Self::tally), then
/// [`flip`](Self::flip) on consecutive pieces of the class bytes that cover them all,
/// [`drawn`](Self::drawn) once on all of them, [`count`](Self::count) once on the classes of
/// the proposed state, and [`histogram`](Self::histogram), the last three with the same `bins`:
/// every bin a class byte of the step can fall in. [`PortablePasses`] defines the results (with
/// [`draw_flips`] as the draw); an implementation must return exactly the same for every such
/// input, so that the draws do not depend on it.
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
    /// (`class & 0x3f`; each `b` of `bins` is counted, below
    /// [`CLASS_LIMIT`](super::CLASS_LIMIT) and none twice),
    /// unless [`flip`](Self::flip) did, and returns the number of sites with the flip bit.
    /// When that number is 0 the tally may be left as it is: a step with no flip ends there.
    fn drawn(&self, class: &[u8], bins: &[u8], tally: &mut Self::Tally) -> usize;

    /// Adds every site's bin of `class` to `tally` (for the bins of `bins`). Every byte of `class`
    /// must be below [`CLASS_LIMIT`](super::CLASS_LIMIT) (otherwise the counts are unspecified, but
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
