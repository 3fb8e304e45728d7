//! The per-byte passes over class bytes and states. On 64-bit targets they are plain byte
//! loops over slices of one length, which the compiler vectorises (SSE2, AVX2 or NEON, as the
//! surrounding code is compiled for); on 32-bit targets, whose cores have no vector registers,
//! byte-lane arithmetic (SWAR): a machine word of sites at a time.

use super::{ABSENT, FLIP_BIT};

/// Machine words per SWAR chunk (32-bit targets).
#[cfg(not(target_pointer_width = "64"))]
pub(super) const WORDS: usize = 1;
/// Bytes per SWAR chunk.
#[cfg(not(target_pointer_width = "64"))]
pub(super) const WORD: usize = WORDS * core::mem::size_of::<usize>();
/// `0x0101…01`: one in every byte of a word.
#[cfg(not(target_pointer_width = "64"))]
pub(super) const LANES: usize = usize::MAX / 255;

/// `WORD` bytes as `WORDS` little-endian machine words: byte-lane arithmetic (SWAR) with no
/// carry across a byte, as long as every lane stays below 256.
#[cfg(not(target_pointer_width = "64"))]
#[derive(Clone, Copy)]
pub(super) struct Chunk(pub(super) [usize; WORDS]);

#[cfg(not(target_pointer_width = "64"))]
impl Chunk {
    /// `b` in every byte.
    #[inline(always)]
    pub(super) fn splat(b: u8) -> Self {
        Self([LANES * usize::from(b); WORDS])
    }

    /// The chunk of `bytes` (0 if `bytes` is not a whole chunk).
    #[inline(always)]
    pub(super) fn load(bytes: &[u8]) -> Self {
        let mut words = [0; WORDS];
        if let Ok(bytes) = <&[u8; WORD]>::try_from(bytes) {
            for (w, b) in words.iter_mut().zip(bytes.chunks_exact(WORD / WORDS)) {
                *w = <[u8; WORD / WORDS]>::try_from(b).map_or(0, usize::from_le_bytes);
            }
        }
        Self(words)
    }

    /// Writes the chunk into the whole words of `bytes`, each with one store.
    #[inline(always)]
    pub(super) fn store(self, bytes: &mut [u8]) {
        for (b, w) in bytes.chunks_exact_mut(WORD / WORDS).zip(self.0) {
            if let Ok(b) = <&mut [u8; WORD / WORDS]>::try_from(b) {
                *b = w.to_le_bytes();
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
    pub(super) fn shl(self, n: u32) -> Self {
        Self(self.0.map(|w| w << n))
    }

    /// Every word shifted right by `n` bits.
    #[inline(always)]
    pub(super) fn shr(self, n: u32) -> Self {
        Self(self.0.map(|w| w >> n))
    }
}

#[cfg(not(target_pointer_width = "64"))]
impl core::ops::Add for Chunk {
    type Output = Self;
    #[inline(always)]
    fn add(self, other: Self) -> Self {
        self.zip(other, |a, b| a + b)
    }
}

#[cfg(not(target_pointer_width = "64"))]
impl core::ops::BitAnd for Chunk {
    type Output = Self;
    #[inline(always)]
    fn bitand(self, other: Self) -> Self {
        self.zip(other, |a, b| a & b)
    }
}

#[cfg(not(target_pointer_width = "64"))]
impl core::ops::BitOr for Chunk {
    type Output = Self;
    #[inline(always)]
    fn bitor(self, other: Self) -> Self {
        self.zip(other, |a, b| a | b)
    }
}

#[cfg(not(target_pointer_width = "64"))]
impl core::ops::BitXor for Chunk {
    type Output = Self;
    #[inline(always)]
    fn bitxor(self, other: Self) -> Self {
        self.zip(other, |a, b| a ^ b)
    }
}

/// `out = (out & keep) | (16 mid + 2 Σ nb + base)` byte by byte; every slice has `out`'s
/// length. Each neighbour count has its own loop over zipped slices, which the compiler
/// vectorises with no bounds checks.
#[cfg(target_pointer_width = "64")]
#[inline(always)]
pub(super) fn combine<const N: usize>(
    out: &mut [u8],
    mid: &[u8],
    nb: [&[u8]; N],
    keep: u8,
    base: u8,
) {
    let class =
        |o: u8, c: u8, sum: u8| (o & keep) | (c << 4).wrapping_add(sum << 1).wrapping_add(base);
    let sites = out.iter_mut().zip(mid);
    match nb.as_slice() {
        [up, down, left, right] => {
            let nb = up.iter().zip(*down).zip(*left).zip(*right);
            for ((o, &c), (((&u, &dn), &l), &r)) in sites.zip(nb) {
                *o = class(*o, c, u.wrapping_add(dn).wrapping_add(l).wrapping_add(r));
            }
        }
        [a, b, c] => {
            for ((o, &x), ((&a, &b), &c)) in sites.zip(a.iter().zip(*b).zip(*c)) {
                *o = class(*o, x, a.wrapping_add(b).wrapping_add(c));
            }
        }
        [a, b] => {
            for ((o, &x), (&a, &b)) in sites.zip(a.iter().zip(*b)) {
                *o = class(*o, x, a.wrapping_add(b));
            }
        }
        _ => {
            for (i, (o, &x)) in sites.enumerate() {
                let sum = nb.iter().fold(0u8, |acc, s| {
                    acc.wrapping_add(s.get(i).copied().unwrap_or(0))
                });
                *o = class(*o, x, sum);
            }
        }
    }
}

/// The class bytes of the inner rows in one flat pass ([`combine`]):
/// `16 x + 2 (x_up + x_down + x_left + x_right)`, keeping the bits `keep` of `out`.
#[cfg(target_pointer_width = "64")]
#[inline(always)]
pub(super) fn inner_classes(out: &mut [u8], [mid, up, down, left, right]: [&[u8]; 5], keep: u8) {
    combine(out, mid, [up, down, left, right], keep, 0);
}

/// The class bytes of the inner rows in one flat pass, a word of sites at a time:
/// `16 x + 2 (x_up + x_down + x_left + x_right)`, keeping the bits `keep` of `out`. Every byte
/// stays below 32, so no carry crosses a byte.
#[cfg(not(target_pointer_width = "64"))]
#[inline(always)]
pub(super) fn inner_classes(out: &mut [u8], [mid, up, down, left, right]: [&[u8]; 5], keep: u8) {
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

/// Toggles every site of `x` whose class byte has the flip bit.
#[cfg(target_pointer_width = "64")]
#[inline(always)]
pub(super) fn toggle_flipped(x: &mut [u8], class: &[u8]) {
    for (v, &k) in x.iter_mut().zip(class) {
        *v ^= (k >> 5) & 1;
    }
}

/// Toggles every site of `x` whose class byte has the flip bit, a word at a time.
#[cfg(not(target_pointer_width = "64"))]
#[inline(always)]
pub(super) fn toggle_flipped(x: &mut [u8], class: &[u8]) {
    for (xw, kw) in x.chunks_exact_mut(WORD).zip(class.chunks_exact(WORD)) {
        (Chunk::load(xw) ^ (Chunk::load(kw).shr(5) & Chunk::splat(1))).store(xw);
    }
    let done = x.len() - x.len() % WORD;
    let rest = x.get_mut(done..).unwrap_or(&mut []);
    for (v, &k) in rest.iter_mut().zip(class.get(done..).unwrap_or(&[])) {
        *v ^= (k >> 5) & 1;
    }
}

/// The class bytes of a first or last row: its inner columns in one pass, its two ends one at
/// a time. `up` and `down` are the rows above and below (`None` where absent).
#[cfg(target_pointer_width = "64")]
#[inline(always)]
pub(super) fn boundary_row(
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

/// The class bytes of a first or last row: the vertical neighbours a word at a time, then the
/// horizontal ones. `up` and `down` are the rows above and below (`None` where absent).
#[cfg(not(target_pointer_width = "64"))]
#[inline(always)]
pub(super) fn boundary_row(
    row: &[u8],
    up: Option<&[u8]>,
    down: Option<&[u8]>,
    out: &mut [u8],
    keep: u8,
    wrap: bool,
) {
    vertical(row, up, down, out, keep);
    horizontal(row, out, wrap);
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

/// `class = kept`, and whether the value bits of `kept` (bit 4 of a class byte below 32)
/// differ from `x` anywhere.
#[cfg(target_pointer_width = "64")]
#[inline(always)]
pub(super) fn copy_classes(class: &mut [u8], kept: &[u8], x: &[u8]) -> bool {
    let mut differ = 0u8;
    for ((c, &k), &xi) in class.iter_mut().zip(kept).zip(x) {
        *c = k;
        differ |= ((k >> 4) & 1) ^ xi;
    }
    differ != 0
}

/// `class = kept`, a word at a time, and whether the value bits of `kept` (bit 4 of a class
/// byte below 32) differ from `x` anywhere.
#[cfg(not(target_pointer_width = "64"))]
#[inline(always)]
pub(super) fn copy_classes(class: &mut [u8], kept: &[u8], x: &[u8]) -> bool {
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

/// `kept = class` without the flip bits (the classes of an accepted proposal, or fresh ones).
#[cfg(target_pointer_width = "64")]
#[inline(always)]
pub(super) fn keep_classes(kept: &mut [u8], class: &[u8]) {
    for (k, &c) in kept.iter_mut().zip(class) {
        *k = c & !FLIP_BIT;
    }
}

/// `kept = class` without the flip bits (the classes of an accepted proposal, or fresh ones),
/// a word at a time.
#[cfg(not(target_pointer_width = "64"))]
#[inline(always)]
pub(super) fn keep_classes(kept: &mut [u8], class: &[u8]) {
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
