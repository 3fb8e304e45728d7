//! Run-time choice of the instruction set for the per-chain hot loops.
//!
//! On x86-64 a chain's step runs inside a function compiled for the widest vector instructions
//! the processor has: AVX-512 (the x86-64-v4 level: AVX-512 F, BW, CD, DQ and VL), else AVX2 and
//! FMA (x86-64-v3), else the portable baseline. The level is detected once per process by the
//! `pulp` crate, which also holds the one unsafe call this needs. The hot code a step calls
//! (kernel, proposal, target evaluation) is inlined into that function, so it is compiled for
//! those instructions there. Values do not change: the compiler never fuses a multiply and an
//! add on its own and each lane does the same operations in the same order whatever the width of
//! the register, so draws are bit-identical on every path.
//!
//! The environment variable `LANGEVIN_SIMD` caps the level: `portable` forces the portable path,
//! `avx2` stops at AVX2 and FMA, `avx512` (or no value) lets the processor decide. [`check_env`]
//! refuses any other value (the `langevin` command checks it before it runs); [`path`] says
//! which one runs.

#[cfg(target_arch = "x86_64")]
use langevin_core::binary::{LatticePasses, draw_flips};
use std::sync::OnceLock;

/// The environment variable that can cap the instruction set.
pub const ENV: &str = "LANGEVIN_SIMD";

/// The code path that runs the per-chain hot loops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SimdPath {
    /// Compiled for AVX-512 (x86-64 processors of the x86-64-v4 level).
    Avx512,
    /// Compiled for AVX2 and FMA (x86-64 processors of the x86-64-v3 level).
    Avx2Fma,
    /// Compiled for the baseline of the target.
    Portable,
}

impl SimdPath {
    /// `"avx512"`, `"avx2+fma"` or `"portable"`, as the run summaries name it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Avx512 => "avx512",
            Self::Avx2Fma => "avx2+fma",
            Self::Portable => "portable",
        }
    }
}

/// The values [`ENV`] may take.
pub const ENV_VALUES: [&str; 3] = ["portable", "avx2", "avx512"];

/// Checks the value of [`ENV`]: unset, empty or one of [`ENV_VALUES`].
///
/// # Errors
///
/// [`UnknownPath`] naming the value.
pub fn check_env() -> Result<(), UnknownPath> {
    match std::env::var_os(ENV) {
        None => Ok(()),
        Some(v) => check_value(&v.to_string_lossy()),
    }
}

/// A value of [`ENV`] that names no code path.
#[derive(Debug, thiserror::Error)]
#[error("{ENV}={value:?} is not a code path; use one of {} (or leave it unset)", ENV_VALUES.join(", "))]
pub struct UnknownPath {
    /// The value.
    pub value: String,
}

/// Whether `value` is a valid value of [`ENV`] (empty: unset).
fn check_value(value: &str) -> Result<(), UnknownPath> {
    if value.is_empty() || ENV_VALUES.contains(&value) {
        Ok(())
    } else {
        Err(UnknownPath {
            value: value.into(),
        })
    }
}

/// The path this process runs: decided once, from [`ENV`] and the processor's features.
pub fn path() -> SimdPath {
    dispatcher().0
}

/// The path and its `pulp` dispatcher, decided together so that they always agree.
fn dispatcher() -> &'static (SimdPath, pulp::Arch) {
    static PATH: OnceLock<(SimdPath, pulp::Arch)> = OnceLock::new();
    PATH.get_or_init(|| detect(std::env::var_os(ENV).as_deref().and_then(|v| v.to_str())))
}

/// The widest path the processor has, capped by `cap` (the value of [`ENV`]).
fn detect(cap: Option<&str>) -> (SimdPath, pulp::Arch) {
    if cap == Some("portable") {
        return (SimdPath::Portable, pulp::Arch::Scalar);
    }
    #[cfg(target_arch = "x86_64")]
    {
        if cap != Some("avx2")
            && let Some(v4) = pulp::x86::V4::try_new()
        {
            return (SimdPath::Avx512, pulp::Arch::V4(v4));
        }
        if let Some(v3) = pulp::x86::V3::try_new() {
            return (SimdPath::Avx2Fma, pulp::Arch::V3(v3));
        }
    }
    (SimdPath::Portable, pulp::Arch::Scalar)
}

/// The per-site passes of the tabulated lattice step on the vector paths. The draw runs on
/// AVX2, 32 sites per register: the flip threshold of each class byte by a byte shuffle of
/// 16-entry tables (its low and high bytes, by `m`, one table pair per value `x`). The bin
/// counts run on AVX-512 when `v4` is given, 64 sites per register (a byte comparison into a
/// mask, then its population count), else on AVX2 by byte comparisons. Results equal those of
/// [`PortablePasses`](langevin_core::binary::PortablePasses); the sites left over by the draw
/// run through [`draw_flips`].
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug)]
pub(crate) struct LatticeVector {
    v3: pulp::x86::V3,
    v4: Option<pulp::x86::V4>,
}

#[cfg(target_arch = "x86_64")]
impl LatticePasses for LatticeVector {
    /// The step's histogram itself.
    type Tally = [isize; 64];

    #[inline(always)]
    fn tally(&self) -> [isize; 64] {
        [0; 64]
    }

    #[inline(always)]
    fn flip(&self, thresholds: &[u16; 32], class: &mut [u8], words: &[u64], _: &mut [isize; 64]) {
        use core::arch::x86_64::__m256i;
        let (avx, avx2) = (self.v3.avx, self.v3.avx2);
        // Byte `m` of each 128-bit half: the low or high byte of the threshold of class
        // `m + 16 x`.
        let table = |x: usize, shift: u32| -> __m256i {
            let half: [u8; 16] = core::array::from_fn(|m| (thresholds[16 * x + m] >> shift) as u8);
            pulp::cast([half, half])
        };
        let (lo0, lo1, hi0, hi1) = (table(0, 0), table(1, 0), table(0, 8), table(1, 8));
        let (m_mask, x_bit) = (avx._mm256_set1_epi8(0x0f), avx._mm256_set1_epi8(0x10));
        let (flip_bit, zero) = (avx._mm256_set1_epi8(0x20), avx._mm256_setzero_si256());
        let full = (class.len() / 32).min(words.len() / 8);
        let (body, rest) = class.split_at_mut(full * 32);
        for (sites, w) in body.chunks_exact_mut(32).zip(words.chunks_exact(8)) {
            let (Ok(sites), Ok(w)) = (<&mut [u8; 32]>::try_from(sites), <&[u64; 8]>::try_from(w))
            else {
                continue;
            };
            let k: __m256i = pulp::cast(*sites);
            let m = avx2._mm256_and_si256(k, m_mask);
            let x = avx2._mm256_cmpeq_epi8(avx2._mm256_and_si256(k, x_bit), x_bit);
            let pick = |t0, t1| {
                let (a, b) = (
                    avx2._mm256_shuffle_epi8(t0, m),
                    avx2._mm256_shuffle_epi8(t1, m),
                );
                avx2._mm256_blendv_epi8(a, b, x)
            };
            let (lo, hi) = (pick(lo0, lo1), pick(hi0, hi1));
            // 16-bit thresholds: sites 0–7 and 16–23, then 8–15 and 24–31.
            let (ta, tb) = (
                avx2._mm256_unpacklo_epi8(lo, hi),
                avx2._mm256_unpackhi_epi8(lo, hi),
            );
            let t0 = avx2._mm256_permute2x128_si256::<0x20>(ta, tb);
            let t1 = avx2._mm256_permute2x128_si256::<0x31>(ta, tb);
            let [w0, w1, w2, w3, w4, w5, w6, w7] = *w;
            let (r0, r1): (__m256i, __m256i) =
                (pulp::cast([w0, w1, w2, w3]), pulp::cast([w4, w5, w6, w7]));
            // A site stays when `t ≤ r`, i.e. when `t − r` saturates to 0.
            let stay0 = avx2._mm256_cmpeq_epi16(avx2._mm256_subs_epu16(t0, r0), zero);
            let stay1 = avx2._mm256_cmpeq_epi16(avx2._mm256_subs_epu16(t1, r1), zero);
            let stay = avx2
                ._mm256_permute4x64_epi64::<0b11_01_10_00>(avx2._mm256_packs_epi16(stay0, stay1));
            *sites = pulp::cast(avx2._mm256_or_si256(k, avx2._mm256_andnot_si256(stay, flip_bit)));
        }
        draw_flips(thresholds, rest, words.get(full * 8..).unwrap_or(&[]));
    }

    #[inline(always)]
    fn drawn(&self, class: &[u8], bins: &[u8], tally: &mut [isize; 64]) -> usize {
        // The flips first: with none the step ends here, and needs no count.
        let flipped = self.flips(class);
        if flipped > 0 {
            self.count_bins(class, bins, tally, -1);
        }
        flipped
    }

    #[inline(always)]
    fn count(&self, class: &[u8], bins: &[u8], tally: &mut [isize; 64]) {
        self.count_bins(class, bins, tally, 1);
    }

    #[inline(always)]
    fn histogram(&self, tally: &[isize; 64], _: &[u8], hist: &mut [isize; 64]) {
        // The tally is 0 but at the bins counted: all of it is added.
        for (h, &n) in hist.iter_mut().zip(tally) {
            *h += n;
        }
    }
}

#[cfg(target_arch = "x86_64")]
impl LatticeVector {
    /// The passes of the path of [`path`]: none on the portable path, the AVX-512 counts on the
    /// AVX-512 path.
    pub(crate) fn for_path() -> Option<Self> {
        match dispatcher().1 {
            pulp::Arch::V4(v4) => Some(Self {
                v3: *v4,
                v4: Some(v4),
            }),
            pulp::Arch::V3(v3) => Some(Self { v3, v4: None }),
            _ => None,
        }
    }

    /// The number of bytes of `class` with the flip bit (bit 5): 32 at a time, the bit moved to
    /// the top of each byte and its mask counted.
    #[inline(always)]
    fn flips(&self, class: &[u8]) -> usize {
        use core::arch::x86_64::__m256i;
        const FLIP_BIT: u8 = 0x20;
        let avx2 = self.v3.avx2;
        let mut chunks = class.chunks_exact(32);
        let mut flips = 0;
        for sites in &mut chunks {
            let Ok(sites) = <&[u8; 32]>::try_from(sites) else {
                continue;
            };
            let k: __m256i = pulp::cast(*sites);
            let top = avx2._mm256_movemask_epi8(avx2._mm256_slli_epi16::<2>(k));
            flips += top.count_ones() as usize;
        }
        let rest = chunks.remainder().iter();
        flips + rest.filter(|&&k| k & FLIP_BIT != 0).count()
    }

    /// Adds `sign` times the number of bytes of `class` equal to `b` to `hist[b]`, for every
    /// `b` of `bins`.
    #[inline(always)]
    fn count_bins(&self, class: &[u8], bins: &[u8], hist: &mut [isize; 64], sign: isize) {
        match self.v4 {
            Some(v4) => Self::count_bins_avx512(v4, class, bins, hist, sign),
            None => self.count_bins_avx2(class, bins, hist, sign),
        }
    }

    /// [`count_bins`](Self::count_bins) by byte comparisons: [`AVX2_GROUP`] bins at a time,
    /// each chunk of 32 sites loaded once and compared with every bin of the group (one byte
    /// counter per lane and bin, held in registers).
    #[inline(always)]
    fn count_bins_avx2(&self, class: &[u8], bins: &[u8], hist: &mut [isize; 64], sign: isize) {
        use core::arch::x86_64::__m256i;
        let (avx, avx2) = (self.v3.avx, self.v3.avx2);
        let zero = avx._mm256_setzero_si256();
        let body = class.get(..class.len() / 32 * 32).unwrap_or(&[]);
        let tail = self.tail_avx2(class);
        // The byte counters of two bins summed: four partial sums of each (`sad`), those of
        // the two interleaved and added, then the two halves.
        let sum_pair = |a: __m256i, b: __m256i| -> [u64; 2] {
            let (a, b) = (avx2._mm256_sad_epu8(a, zero), avx2._mm256_sad_epu8(b, zero));
            let both = avx2._mm256_add_epi64(
                avx2._mm256_unpacklo_epi64(a, b),
                avx2._mm256_unpackhi_epi64(a, b),
            );
            let [a0, b0, a1, b1]: [u64; 4] = pulp::cast(both);
            [a0 + a1, b0 + b1]
        };
        for group in bins.chunks(AVX2_GROUP) {
            let mut targets = [zero; AVX2_GROUP];
            for (j, t) in targets.iter_mut().enumerate() {
                // A slot of a short group compares with a byte no class equals.
                *t = pulp::cast([group.get(j).copied().unwrap_or(u8::MAX); 32]);
            }
            let counts = |k: __m256i, acc: &mut [__m256i; AVX2_GROUP]| {
                for (a, &t) in acc.iter_mut().zip(&targets) {
                    *a = avx2._mm256_sub_epi8(*a, avx2._mm256_cmpeq_epi8(k, t));
                }
            };
            let mut acc = [zero; AVX2_GROUP];
            counts(tail, &mut acc);
            let mut totals = [0usize; AVX2_GROUP];
            // One byte counter per lane, at most 255 rounds each (the tail's one included):
            // the counters are summed after each part of 254 chunks, once if there is none.
            let mut parts = body.chunks(32 * 254);
            loop {
                for sites in parts.next().unwrap_or(&[]).chunks_exact(32) {
                    let Ok(sites) = <&[u8; 32]>::try_from(sites) else {
                        continue;
                    };
                    counts(pulp::cast(*sites), &mut acc);
                }
                for (total, a) in totals.chunks_mut(2).zip(acc.chunks(2)) {
                    let pair = match *a {
                        [a, b] => sum_pair(a, b),
                        [a] => sum_pair(a, zero),
                        _ => [0; 2],
                    };
                    for (t, n) in total.iter_mut().zip(pair) {
                        *t += n as usize;
                    }
                }
                acc = [zero; AVX2_GROUP];
                if parts.len() == 0 {
                    break;
                }
            }
            for (&b, total) in group.iter().zip(totals) {
                if let Some(h) = hist.get_mut(usize::from(b)) {
                    *h += sign * total as isize;
                }
            }
        }
    }

    /// The sites of `class` after its last whole chunk of 32 as a register, the lanes past them
    /// set to a byte no class equals (`0xff`): on a lattice of 32 sites or more, the last 32
    /// loaded, with the lanes counted already covered.
    #[inline(always)]
    fn tail_avx2(&self, class: &[u8]) -> core::arch::x86_64::__m256i {
        use core::arch::x86_64::__m256i;
        let avx2 = self.v3.avx2;
        /// `COVER[r..r + 32]`: `0xff` in the first `32 − r` lanes, 0 in the last `r`.
        const COVER: [u8; 64] = {
            let mut c = [0; 64];
            let mut i = 0;
            while i < 32 {
                c[i] = u8::MAX;
                i += 1;
            }
            c
        };
        let rest = class.len() % 32;
        let last = class.len().checked_sub(32).and_then(|s| class.get(s..));
        let last = last.and_then(|l| <&[u8; 32]>::try_from(l).ok());
        let cover = COVER.get(rest..rest + 32);
        let cover = cover.and_then(|c| <&[u8; 32]>::try_from(c).ok());
        if let (Some(last), Some(cover)) = (last, cover) {
            let (last, cover): (__m256i, __m256i) = (pulp::cast(*last), pulp::cast(*cover));
            return avx2._mm256_or_si256(last, cover);
        }
        let mut tail = [u8::MAX; 32];
        let sites = class.get(class.len() - rest..).unwrap_or(&[]);
        tail.iter_mut().zip(sites).for_each(|(t, &k)| *t = k);
        pulp::cast(tail)
    }

    /// [`count_bins`](Self::count_bins) by mask comparisons and population counts.
    #[inline(always)]
    fn count_bins_avx512(
        v4: pulp::x86::V4,
        class: &[u8],
        bins: &[u8],
        hist: &mut [isize; 64],
        sign: isize,
    ) {
        use core::arch::x86_64::__m512i;
        let (avx512f, avx512bw) = (v4.avx512f, v4.avx512bw);
        let (body, rest) = class.split_at(class.len() / 64 * 64);
        // The sites left over, padded with a byte no class equals.
        let mut tail = [u8::MAX; 64];
        tail.iter_mut().zip(rest).for_each(|(t, &k)| *t = k);
        let tail: __m512i = pulp::cast(tail);
        for &b in bins {
            let target = avx512f._mm512_set1_epi8(b as i8);
            let count = |k| avx512bw._mm512_cmpeq_epi8_mask(k, target).count_ones() as usize;
            let mut total = count(tail);
            for sites in body.chunks_exact(64) {
                let Ok(sites) = <&[u8; 64]>::try_from(sites) else {
                    continue;
                };
                total += count(pulp::cast(*sites));
            }
            if let Some(h) = hist.get_mut(usize::from(b)) {
                *h += sign * total as isize;
            }
        }
    }
}

/// Bins counted together by the AVX2 count: ten accumulators stay in registers and the ten
/// comparands are read from memory by the comparisons, so the 20 bins of a lattice that wraps
/// both ways take two passes over the sites (five bins a pass, all in registers, took four).
#[cfg(target_arch = "x86_64")]
const AVX2_GROUP: usize = 10;

/// Work that runs on the path of [`path`] through [`dispatch`]: a chain's step.
pub(crate) trait HotLoop {
    /// What the work returns.
    type Output;
    /// Does the work. Implementations are `#[inline(always)]`, and so is the hot code they
    /// call: only code inlined into the dispatched function is compiled for its instructions.
    fn run(&mut self) -> Self::Output;
}

/// Runs `work` on the path of [`path`]: inside a function compiled for AVX-512, or for AVX2 and
/// FMA, when that is the path, directly otherwise.
#[inline(always)]
pub(crate) fn dispatch<H: HotLoop + ?Sized>(work: &mut H) -> H::Output {
    dispatcher().1.dispatch(Run(work))
}

/// A [`HotLoop`] as `pulp` work.
struct Run<'a, H: ?Sized>(&'a mut H);

impl<H: HotLoop + ?Sized> pulp::WithSimd for Run<'_, H> {
    type Output = H::Output;

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) -> H::Output {
        self.0.run()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sum of squares, in order.
    struct Squares<'a>(&'a [f32]);

    impl HotLoop for Squares<'_> {
        type Output = f32;
        #[inline(always)]
        fn run(&mut self) -> f32 {
            self.0.iter().fold(0.0f32, |a, &b| a + b * b)
        }
    }

    #[test]
    fn the_path_is_named_and_dispatch_returns_the_value() {
        assert!(["avx512", "avx2+fma", "portable"].contains(&path().name()));
        let v: Vec<f32> = (0..100).map(|i| i as f32 * 0.5).collect();
        let sum = dispatch(&mut Squares(&v));
        let plain = v.iter().fold(0.0f32, |a, &b| a + b * b);
        assert_eq!(sum.to_bits(), plain.to_bits());
    }

    #[test]
    fn the_environment_caps_the_path() {
        assert_eq!(detect(Some("portable")).0, SimdPath::Portable);
        let capped = detect(Some("avx2")).0;
        assert_ne!(capped, SimdPath::Avx512);
        let widest = detect(None).0;
        assert_eq!(detect(Some("avx512")).0, widest);
        for ok in ["", "portable", "avx2", "avx512"] {
            assert!(check_value(ok).is_ok(), "{ok}");
        }
        for bad in ["AVX2", "avx", "sse", "portable "] {
            let e = check_value(bad).unwrap_err();
            assert_eq!(e.value, bad);
            assert!(e.to_string().contains("portable, avx2, avx512"), "{e}");
        }
        #[cfg(target_arch = "x86_64")]
        {
            assert_eq!(
                widest == SimdPath::Avx512,
                pulp::x86::V4::try_new().is_some()
            );
            assert_eq!(
                capped == SimdPath::Avx2Fma,
                pulp::x86::V3::try_new().is_some()
            );
        }
    }

    /// The AVX2 and AVX-512 lattice passes give the portable passes' results on random class
    /// bytes, thresholds and words, at every length around a register and its tail.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn lattice_vector_passes_equal_the_portable_ones() {
        let Some(v3) = pulp::x86::V3::try_new() else {
            return;
        };
        passes_equal_the_portable_ones(&LatticeVector { v3, v4: None });
        if let Some(v4) = pulp::x86::V4::try_new() {
            passes_equal_the_portable_ones(&LatticeVector { v3, v4: Some(v4) });
        }
    }

    #[cfg(target_arch = "x86_64")]
    fn passes_equal_the_portable_ones<P: LatticePasses<Tally = [isize; 64]>>(fast_passes: &P) {
        use langevin_core::binary::PortablePasses;
        use rand_core::{Rng, SeedableRng};
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
        for len in (0..200usize).chain([
            254 * 32 + 31,
            255 * 32 - 1,
            255 * 32,
            255 * 32 + 33,
            255 * 64 + 65,
            20_000,
        ]) {
            for _ in 0..5 {
                let thresholds: [u16; 32] = std::array::from_fn(|_| rng.next_u64() as u16);
                // Any byte for the draw (it reads bits 0-4); extreme thresholds too.
                let mut class: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
                let mut t = thresholds;
                t[rng.next_u64() as usize % 32] = 0;
                t[rng.next_u64() as usize % 32] = u16::MAX;
                let words: Vec<u64> = (0..len.div_ceil(4) + (len % 3))
                    .map(|_| rng.next_u64())
                    .collect();
                let mut fast = class.clone();
                draw_flips(&t, &mut class, &words);
                fast_passes.flip(&t, &mut fast, &words, &mut fast_passes.tally());
                assert_eq!(fast, class, "flip, {len} sites");
                // A step's passes on classes of a random set below 32, drawn in pieces of 256
                // sites as a step draws them, with the bins of those classes (flipped or not),
                // and a second set of bytes in those bins to count.
                let mut classes: Vec<u8> = (0..32u8).filter(|_| rng.next_u64() % 3 != 0).collect();
                if classes.is_empty() {
                    classes.push(0);
                }
                let bins: Vec<u8> = classes.iter().flat_map(|&k| [k, k | 0x20]).collect();
                let mut slow: Vec<u8> = class
                    .iter()
                    .map(|&k| classes[usize::from(k) % classes.len()])
                    .collect();
                let mut fast = slow.clone();
                let (mut ta, mut tb) = (PortablePasses.tally(), fast_passes.tally());
                let pieces = slow.chunks_mut(256).zip(fast.chunks_mut(256));
                for (i, (a, b)) in pieces.enumerate() {
                    let w = words.get(64 * i..).unwrap_or(&[]);
                    let w = &w[..w.len().min(64)];
                    PortablePasses.flip(&t, a, w, &mut ta);
                    fast_passes.flip(&t, b, w, &mut tb);
                }
                assert_eq!(fast, slow, "flip in pieces, {len} sites");
                let flips = PortablePasses.drawn(&slow, &bins, &mut ta);
                assert_eq!(
                    fast_passes.drawn(&fast, &bins, &mut tb),
                    flips,
                    "flips, {len} sites"
                );
                if flips == 0 {
                    // The tally is unspecified then (a step ends there): both start afresh.
                    (ta, tb) = (PortablePasses.tally(), fast_passes.tally());
                }
                let second: Vec<u8> = (0..len)
                    .map(|_| bins[rng.next_u64() as usize % bins.len()])
                    .collect();
                PortablePasses.count(&second, &bins, &mut ta);
                fast_passes.count(&second, &bins, &mut tb);
                let start: [isize; 64] = std::array::from_fn(|_| (rng.next_u64() % 100) as isize);
                let (mut a, mut b) = (start, start);
                PortablePasses.histogram(&ta, &bins, &mut a);
                fast_passes.histogram(&tb, &bins, &mut b);
                assert_eq!(a, b, "count, {len} sites");
            }
        }
    }
}
