//! Per-coordinate bulk ESS and R-hat of discrete draws in one pass per coordinate.
//!
//! Discrete values take few distinct values, so the rank normalisation of Vehtari et al. (2021)
//! needs no sort: counting the draws at each state gives every state's average rank, and each
//! draw's z-score is a lookup.
//!
//! A coordinate that visits two states (every coordinate of a binary run that moves) has
//! z-scores that are an affine function of the indicator of the upper state, and the ESS and
//! R-hat are invariant under affine maps of the draws: both come from the 0/1 indicator, R-hat
//! from its counts per half and the ESS from its autocovariances, counted exactly on
//! bit-packed halves lag by lag. Geyer's truncation reads only the leading lags, so for a
//! fast-mixing coordinate a few hundred lags suffice; a coordinate likely to stay correlated
//! longer goes to the FFT, zero-padded only as far as the lags it is likely to need (more when
//! the truncation reads further), with one inverse transform of the power spectra summed over
//! the halves (the estimator reads only the sum). The values equal those of
//! [`ess_bulk`](super::ess_bulk) and [`rhat`](super::rhat) on the same draws converted to `f64`
//! up to rounding.

use super::discrete::{DiscreteValue, check_num_states};
use super::ess::{DrawArray, EssSummary, ess_from_summed_autocovariances, pooled_variances};
use super::fft::{AutocovTiers, FftBuffers};
use super::normal::inverse_normal_cdf;
use super::rhat::{Rhat, basic_rhat, rhat_from_moments};
use super::{DiagError, mean, median_of_defined};
use crate::run::Pool;
use std::ops::Range;

/// Coordinates gathered per pass over the draws: a cache line of `u16` states.
const BLOCK: usize = 32;

/// Lags of a two-state coordinate counted directly before the FFT takes over: a few hundred
/// lags of bit-packed halves cost less than the FFTs of a long run's halves.
const DIRECT_LAGS: usize = 512;

/// Per-coordinate diagnostics of a `(chains, draws, dim)` array of discrete draws.
#[derive(Debug, Clone, PartialEq)]
pub struct CoordinateDiagnostics {
    /// Bulk ESS of each coordinate, with its minimum and median.
    pub ess: EssSummary,
    /// [`Rhat::max`] of each coordinate; NaN where it is undefined (a coordinate that never
    /// varies).
    pub rhat: Vec<f64>,
}

impl CoordinateDiagnostics {
    /// The largest defined R-hat (NaN if none is defined).
    pub fn rhat_max(&self) -> f64 {
        self.rhat.iter().copied().fold(f64::NAN, f64::max)
    }
}

/// Bulk ESS ([`ess_bulk`](super::ess_bulk)) and rank-normalised split R-hat
/// ([`rhat`](super::rhat)) of every coordinate of discrete draws over `states` values, on a
/// [`Pool`] of `threads` workers (`0`: one per core). `progress`, if given, is called once per
/// coordinate finished, from the workers. The values do not depend on the thread count, and
/// equal the sorting estimators' up to rounding.
///
/// # Errors
///
/// [`DiagError::TooShort`] for fewer than 4 draws per chain,
/// [`DiagError::InvalidNumStates`] for `states` outside `1..=T::MAX_STATES`,
/// [`DiagError::Length`] for a value at or above `states`; [`DiagError::WorkerPanicked`] and
/// [`DiagError::ThreadPool`] as for [`ess_per_coordinate_on`](super::ess_per_coordinate_on).
///
/// # Examples
///
/// ```
/// use langevin_std::diagnostics::{DrawArray, coordinate_diagnostics, ess_per_coordinate};
/// // 2 chains × 6 draws × 2 coordinates; the second coordinate never changes.
/// let data: Vec<u8> = vec![0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 0, 1, 1, 1, 0, 1, 1, 1];
/// let draws = DrawArray::new(&data, 2, 6, 2).unwrap();
/// let d = coordinate_diagnostics(&draws, 2, 1, None).unwrap();
/// let sorted = ess_per_coordinate(&draws).unwrap();
/// assert!((d.ess.per_coordinate[0] - sorted.per_coordinate[0]).abs() < 1e-9);
/// assert!(d.rhat[0] > 0.0 && d.rhat[1].is_nan());
/// ```
pub fn coordinate_diagnostics<T: DiscreteValue + Into<f64>>(
    draws: &DrawArray<'_, T>,
    states: usize,
    threads: usize,
    progress: Option<&(dyn Fn() + Sync)>,
) -> Result<CoordinateDiagnostics, DiagError> {
    with_chains(draws, |c| {
        diagnostics_of(c, states, threads, progress, DIRECT_LAGS)
    })
}

/// [`coordinate_diagnostics`] of chains held apart: `chains[c]` is chain `c`'s draws, `draws ×
/// dim` values row by row.
///
/// # Errors
///
/// As [`coordinate_diagnostics`]; [`DiagError::Empty`] for no chains or a zero `dim`,
/// [`DiagError::Length`] for a chain whose length is not `draws × dim`.
pub(crate) fn coordinate_diagnostics_of_chains<T: DiscreteValue + Into<f64>>(
    chains: &[&[T]],
    draws: usize,
    dim: usize,
    states: usize,
    threads: usize,
    progress: Option<&(dyn Fn() + Sync)>,
) -> Result<CoordinateDiagnostics, DiagError> {
    if chains.is_empty() || dim == 0 {
        return Err(DiagError::Empty);
    }
    let expected = draws.saturating_mul(dim);
    if let Some(c) = chains.iter().find(|c| c.len() != expected) {
        return Err(DiagError::Length {
            expected,
            found: c.len(),
        });
    }
    let draws = Chains { chains, draws, dim };
    diagnostics_of(&draws, states, threads, progress, DIRECT_LAGS)
}

/// Chains of discrete draws, each `draws × dim` values row by row: a [`DrawArray`] or chains
/// held apart.
struct Chains<'a, T> {
    chains: &'a [&'a [T]],
    draws: usize,
    dim: usize,
}

/// Hands `draws` to `f` as [`Chains`].
fn with_chains<T: Copy + Into<f64>, R>(
    draws: &DrawArray<'_, T>,
    f: impl FnOnce(&Chains<'_, T>) -> R,
) -> R {
    let chains: Vec<&[T]> = (0..draws.chains()).map(|c| draws.chain(c)).collect();
    f(&Chains {
        chains: &chains,
        draws: draws.draws(),
        dim: draws.dim(),
    })
}

impl<T> Chains<'_, T> {
    fn chains(&self) -> usize {
        self.chains.len()
    }

    fn draws(&self) -> usize {
        self.draws
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn chain(&self, c: usize) -> &[T] {
        self.chains.get(c).copied().unwrap_or(&[])
    }
}

/// [`coordinate_diagnostics`] of checked chains, counting at most `direct_lags` lags directly.
fn diagnostics_of<T: DiscreteValue + Into<f64>>(
    draws: &Chains<'_, T>,
    states: usize,
    threads: usize,
    progress: Option<&(dyn Fn() + Sync)>,
    direct_lags: usize,
) -> Result<CoordinateDiagnostics, DiagError> {
    check_num_states::<T>(states)?;
    let n = draws.draws();
    if n < 4 {
        return Err(DiagError::TooShort {
            needed: 4,
            found: n,
        });
    }
    let tiers = AutocovTiers::new(n / 2);
    let dim = draws.dim();
    // Coordinates are gathered a block at a time so each row's read is contiguous: a strided
    // read of one coordinate per row costs a cache miss per draw.
    let blocks: Vec<(usize, usize)> = (0..dim)
        .step_by(BLOCK)
        .map(|start| (start, (start + BLOCK).min(dim)))
        .collect();
    let pool = Pool::for_items(threads, blocks.len())?;
    let half = n / 2;
    let total = 2 * half * draws.chains();
    let tick = || {
        if let Some(tick) = progress {
            tick();
        }
    };
    let per_block = if states == 2 {
        // Binary draws: gathered straight into bit-packed halves.
        let words = half / 64 + 2;
        let halves = 2 * draws.chains();
        pool.map(blocks, |_, (start, end)| {
            let block = gather_bits(draws, start..end)?;
            let mut work = Work::default();
            Ok::<_, DiagError>(
                block
                    .chunks_exact(halves * words)
                    .map(|coordinate| {
                        let bits: Vec<&[u64]> = coordinate.chunks_exact(words).collect();
                        let result =
                            indicator_diagnostics(&bits, half, &tiers, &mut work, direct_lags);
                        tick();
                        result
                    })
                    .collect::<Vec<_>>(),
            )
        })?
    } else {
        pool.map(blocks, |_, (start, end)| {
            let block = gather(draws, start..end, states)?;
            // One set of work buffers per block, reused by its coordinates.
            let mut work = Work::default();
            Ok::<_, DiagError>(
                block
                    .chunks_exact(total)
                    .map(|series| {
                        let result = Coordinate::new(series, half, states).diagnostics(
                            &tiers,
                            &mut work,
                            direct_lags,
                        );
                        tick();
                        result
                    })
                    .collect::<Vec<_>>(),
            )
        })?
    };
    let (per_coordinate, rhat): (Vec<f64>, Vec<f64>) = per_block.into_iter().flatten().unzip();
    Ok(CoordinateDiagnostics {
        ess: EssSummary::new(per_coordinate),
        rhat,
    })
}

/// Buffers reused from one coordinate to the next.
#[derive(Default)]
struct Work {
    fft: FftBuffers,
    /// The leading autocovariances summed over the halves.
    summed: Vec<f64>,
    /// Each half's indicator, `n / 64 + 2` words a half (64 draws a word, the unused bits
    /// and words zero).
    packed: Vec<u64>,
}

/// The coordinates `range` of every chain's split halves, as state indices: coordinate
/// `range.start + k` is entry `k` of `2 × chains × half` values, chain by chain the first half
/// then the second. Read row by row: a strided read of one coordinate per row costs a cache
/// miss per draw.
fn gather<T: DiscreteValue + Into<f64>>(
    draws: &Chains<'_, T>,
    range: Range<usize>,
    states: usize,
) -> Result<Vec<u16>, DiagError> {
    let (n, dim) = (draws.draws(), draws.dim());
    let half = n / 2;
    let total = 2 * half * draws.chains();
    let width = range.len();
    let mut block = vec![0u16; width * total];
    let mut position = 0;
    for c in 0..draws.chains() {
        let chain = draws.chain(c);
        // For odd n the middle draw is dropped, as `split_halves` does.
        for start in [0, n - half] {
            for row in chain.chunks_exact(dim).skip(start).take(half) {
                let values = row.get(range.clone()).unwrap_or(&[]);
                for (k, v) in values.iter().enumerate() {
                    let s = v.state();
                    if s >= states {
                        return Err(DiagError::Length {
                            expected: states,
                            found: s,
                        });
                    }
                    // `s < states ≤ T::MAX_STATES ≤ 2^16`.
                    if let Some(slot) = block.get_mut(k * total + position) {
                        *slot = s as u16;
                    }
                }
                position += 1;
            }
        }
    }
    Ok(block)
}

/// [`gather`] for two states: each coordinate's split halves as indicators of state 1, one
/// after the other, `n / 64 + 2` words each (64 draws a word, the unused bits and words zero).
fn gather_bits<T: DiscreteValue + Into<f64>>(
    draws: &Chains<'_, T>,
    range: Range<usize>,
) -> Result<Vec<u64>, DiagError> {
    let (n, dim) = (draws.draws(), draws.dim());
    let half = n / 2;
    let words = half / 64 + 2;
    let halves = 2 * draws.chains();
    let mut block = vec![0u64; range.len() * halves * words];
    let mut h = 0;
    for c in 0..draws.chains() {
        let chain = draws.chain(c);
        for start in [0, n - half] {
            for (i, row) in chain.chunks_exact(dim).skip(start).take(half).enumerate() {
                let (word, shift) = (h * words + i / 64, i % 64);
                let values = row.get(range.clone()).unwrap_or(&[]);
                for (k, v) in values.iter().enumerate() {
                    let s = v.state();
                    if s >= 2 {
                        return Err(DiagError::Length {
                            expected: 2,
                            found: s,
                        });
                    }
                    if let Some(w) = block.get_mut(k * halves * words + word) {
                        *w |= (s as u64) << shift;
                    }
                }
            }
            h += 1;
        }
    }
    Ok(block)
}

/// One coordinate's split halves (`series`, half after half of `half` draws), as state
/// indices, with the count of each state.
struct Coordinate<'a> {
    series: &'a [u16],
    half: usize,
    counts: Vec<usize>,
    total: usize,
}

impl<'a> Coordinate<'a> {
    /// The coordinate of `series` (values below `states`, as [`gather`] checks).
    fn new(series: &'a [u16], half: usize, states: usize) -> Self {
        let mut counts = vec![0; states];
        for &s in series {
            if let Some(c) = counts.get_mut(usize::from(s)) {
                *c += 1;
            }
        }
        Self {
            series,
            half,
            counts,
            total: series.len(),
        }
    }

    /// The split halves.
    fn halves(&self) -> std::slice::ChunksExact<'a, u16> {
        self.series.chunks_exact(self.half.max(1))
    }

    /// `(bulk ESS, R-hat max)`, each NaN where undefined.
    fn diagnostics(&self, tiers: &AutocovTiers, work: &mut Work, direct_lags: usize) -> (f64, f64) {
        let mut visited = self.counts.iter().enumerate().filter(|&(_, &c)| c > 0);
        match (visited.next(), visited.next(), visited.next()) {
            // Every draw equal: neither is defined.
            (_, None, _) => (f64::NAN, f64::NAN),
            (Some(_), Some((upper, _)), None) => self.two_states(upper, tiers, work, direct_lags),
            _ => self.many_states(tiers, work),
        }
    }

    /// A coordinate visiting two states, the upper one `upper`: everything from the indicator
    /// of `upper`. The folded draws `|x − median|` are the same indicator (or its complement)
    /// scaled, or constant when the median falls between the two states, so the folded R-hat
    /// equals the bulk one or is NaN, and [`Rhat::max`] is the bulk R-hat.
    fn two_states(
        &self,
        upper: usize,
        tiers: &AutocovTiers,
        work: &mut Work,
        direct_lags: usize,
    ) -> (f64, f64) {
        let up = upper as u16;
        let words = self.half / 64 + 2;
        let mut packed = std::mem::take(&mut work.packed);
        packed.clear();
        for h in self.halves() {
            let start = packed.len();
            packed.extend(h.chunks(64).map(|chunk| {
                chunk
                    .iter()
                    .enumerate()
                    .fold(0, |w, (k, &s)| w | (u64::from(s == up) << k))
            }));
            packed.resize(start + words, 0);
        }
        let bits: Vec<&[u64]> = packed.chunks_exact(words).collect();
        let result = indicator_diagnostics(&bits, self.half, tiers, work, direct_lags);
        work.packed = packed;
        result
    }

    /// A coordinate visiting three states or more: the z-scores themselves.
    fn many_states(&self, tiers: &AutocovTiers, work: &mut Work) -> (f64, f64) {
        let bulk_scores = self.scores((0..self.counts.len()).map(|s| s as f64));
        let z = self.apply(&bulk_scores);
        let means: Vec<f64> = z.iter().map(|h| mean(h)).collect();
        let ess = fft_ess(z.len(), &means, 0, tiers, work, |h, x| {
            let m = means[h];
            for (v, &s) in x.iter_mut().zip(&z[h]) {
                *v = s - m;
            }
        });
        let rhat = basic_rhat(&z).map_or(f64::NAN, |bulk| {
            let median = self.median();
            let folded = self.scores((0..self.counts.len()).map(|s| (s as f64 - median).abs()));
            let folded = basic_rhat(&self.apply(&folded)).unwrap_or(f64::NAN);
            Rhat { bulk, folded }.max()
        });
        (ess, rhat)
    }

    /// The z-score of each state when the draws are replaced by `value(state)` and rank
    /// normalised together: ties share their average rank `r` (from 1), scored
    /// `Φ⁻¹((r − 3/8) / (S + 1/4))`, exactly as [`rank_normalize`](super::rank_normalize).
    fn scores(&self, value: impl Iterator<Item = f64>) -> Vec<f64> {
        let mut order: Vec<(f64, usize)> = value
            .zip(0..)
            .filter(|&(_, s)| self.counts[s] > 0)
            .collect();
        order.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut scores = vec![0.0; self.counts.len()];
        let total = self.total as f64;
        let mut start = 0;
        let mut k = 0;
        while k < order.len() {
            let value = order[k].0;
            let group = order[k..].iter().take_while(|p| p.0 == value).count();
            let end = start
                + order[k..k + group]
                    .iter()
                    .map(|&(_, s)| self.counts[s])
                    .sum::<usize>();
            let rank = (start + end + 1) as f64 / 2.0;
            let score = inverse_normal_cdf((rank - 0.375) / (total + 0.25));
            for &(_, s) in &order[k..k + group] {
                scores[s] = score;
            }
            start = end;
            k += group;
        }
        scores
    }

    fn apply(&self, scores: &[f64]) -> Vec<Vec<f64>> {
        self.halves()
            .map(|h| h.iter().map(|&s| scores[usize::from(s)]).collect())
            .collect()
    }

    /// The median of the pooled halves, as [`median_of_defined`] computes it.
    fn median(&self) -> f64 {
        let at = |j: usize| {
            let mut seen = 0;
            for (s, &c) in self.counts.iter().enumerate() {
                seen += c;
                if seen > j {
                    return s as f64;
                }
            }
            f64::NAN
        };
        match self.total {
            0 => median_of_defined(&[]),
            t if t % 2 == 1 => at(t / 2),
            t => 0.5 * (at(t / 2 - 1) + at(t / 2)),
        }
    }
}

/// `(bulk ESS, R-hat max)` of a coordinate from the indicators `bits[h]` of one of its two
/// states in each split half of `n` draws (`n / 64 + 2` words each, 64 draws a word, the unused
/// bits and words zero); both NaN if the coordinate never changes. The rank-normalised draws
/// are an affine function of the indicator, and both statistics are invariant under affine
/// maps (R-hat also the folded one; see [`Coordinate::two_states`]).
fn indicator_diagnostics(
    bits: &[&[u64]],
    n: usize,
    tiers: &AutocovTiers,
    work: &mut Work,
    direct_lags: usize,
) -> (f64, f64) {
    let ones: Vec<usize> = bits
        .iter()
        .map(|b| b.iter().map(|w| w.count_ones() as usize).sum())
        .collect();
    let all: usize = ones.iter().sum();
    if all == 0 || all == n * bits.len() {
        return (f64::NAN, f64::NAN);
    }
    let nf = n as f64;
    let means: Vec<f64> = ones.iter().map(|&k| k as f64 / nf).collect();
    let within: Vec<f64> = ones
        .iter()
        .map(|&k| k as f64 * (n - k) as f64 / (nf * (nf - 1.0)))
        .collect();
    let rhat = rhat_from_moments(n, &means, &within).unwrap_or(f64::NAN);
    let ess = indicator_ess(bits, &ones, &means, n, tiers, work, direct_lags);
    (ess, rhat)
}

/// The ESS of indicators (as [`indicator_diagnostics`], `ones` set bits and means `means`
/// each): lags counted directly in doubling batches while Geyer's truncation needs more, until
/// the lags it is likely to need (from the decay of the autocorrelation so far) exceed
/// `direct_lags`; then the FFT of the centred indicators, from the first tier likely to reach
/// the truncation.
fn indicator_ess(
    bits: &[&[u64]],
    ones: &[usize],
    means: &[f64],
    n: usize,
    tiers: &AutocovTiers,
    work: &mut Work,
    direct_lags: usize,
) -> f64 {
    let halves = bits.len();
    let mut needed = 0;
    work.summed.clear();
    let mut done = 0;
    let mut want = 16.min(n);
    // Per half: the set bits among its first `done` draws and among its last `done`.
    let mut head = vec![0usize; halves];
    let mut tail = vec![0usize; halves];
    let n3 = (n as i128).pow(3) as f64;
    while want <= direct_lags.min(n) {
        for t in done..want {
            let mut sum = 0;
            for (((b, &k), first), last) in bits.iter().zip(ones).zip(&mut head).zip(&mut tail) {
                sum += indicator_autocovariance(b, n, t, k, *first, *last);
                *first += bit(b, t);
                *last += bit(b, n - 1 - t);
            }
            work.summed.push(sum as f64 / n3);
        }
        done = want;
        match ess_from_summed_autocovariances(&work.summed, halves, means, n) {
            Ok(Some(ess)) => return ess,
            Ok(None) => {}
            Err(_) => return f64::NAN,
        }
        needed = likely_lags(&work.summed, halves, means, n);
        if want == n || needed > direct_lags {
            break;
        }
        want = (2 * want).min(n);
    }
    fft_ess(halves, means, needed, tiers, work, |h, x| {
        let (Some(bits), Some(&m)) = (bits.get(h), means.get(h)) else {
            return;
        };
        let (low, high) = (-m, 1.0 - m);
        for (chunk, &word) in x.chunks_mut(64).zip(bits.iter()) {
            for (k, v) in chunk.iter_mut().enumerate() {
                *v = if (word >> k) & 1 == 1 { high } else { low };
            }
        }
    })
}

/// A guess at the lags Geyer's truncation will read, from the autocorrelation at the last of
/// the leading lags `summed` (summed over `chains` chains of `n` draws): ten times its
/// e-folding lag were the decay exponential.
fn likely_lags(summed: &[f64], chains: usize, means: &[f64], n: usize) -> usize {
    let last = summed.len().saturating_sub(1);
    let (Some(&lag0), Some(&at)) = (summed.first(), summed.last()) else {
        return n;
    };
    let (mean_var, var_plus) = pooled_variances(lag0, chains, means, n);
    let rho = 1.0 - (mean_var - at / chains as f64) / var_plus;
    if !(rho > 0.0 && rho < 1.0) || last == 0 {
        return if rho <= 0.0 { 2 * last + 2 } else { n };
    }
    let e_folding = last as f64 / -rho.ln();
    (10.0 * e_folding).min(n as f64) as usize + last
}

/// Bit `i` of a packed indicator, as 0 or 1.
fn bit(bits: &[u64], i: usize) -> usize {
    bits.get(i / 64)
        .map_or(0, |w| ((w >> (i % 64)) & 1) as usize)
}

/// `n³` times the biased autocovariance at lag `t < n` of a 0/1 series of length `n` packed
/// in `bits` (with a zero word after the last), `ones` set bits in all, `head` among its first
/// `t` draws and `tail` among its last `t`: `n² Σ_{i<n−t} (x_i − m)(x_{i+t} − m)` with
/// `m = ones / n`, exactly.
fn indicator_autocovariance(
    bits: &[u64],
    n: usize,
    t: usize,
    ones: usize,
    head: usize,
    tail: usize,
) -> i128 {
    let (q, r) = (t / 64, t % 64);
    let used = n.div_ceil(64);
    let both: u64 = if r == 0 {
        bits[..used]
            .iter()
            .zip(&bits[q..])
            .map(|(a, b)| u64::from((a & b).count_ones()))
            .sum()
    } else {
        bits[..used]
            .iter()
            .zip(bits[q..].windows(2))
            .map(|(a, w)| u64::from((a & ((w[0] >> r) | (w[1] << (64 - r)))).count_ones()))
            .sum()
    };
    // n² Σ (x_i − m)(x_{i+t} − m) = n² c − n K (H + T) + (n − t) K², where c counts the pairs
    // of set bits t apart, K = ones, H = K − tail and T = K − head the set bits among the
    // first and the last n − t draws.
    let (n, t, k) = (n as i128, t as i128, ones as i128);
    let (h, tl) = (k - tail as i128, k - head as i128);
    n * n * i128::from(both) - n * k * (h + tl) + (n - t) * k * k
}

/// The ESS of `halves` series (means `means`) by the FFT, `fill(h, x)` writing half `h`
/// centred into `x`: the summed autocovariances' leading lags from the first tier that covers
/// `needed` lags, the next tier when Geyer's truncation reads beyond them.
fn fft_ess(
    halves: usize,
    means: &[f64],
    needed: usize,
    tiers: &AutocovTiers,
    work: &mut Work,
    mut fill: impl FnMut(usize, &mut [f64]),
) -> f64 {
    let n = tiers.len();
    let plans = tiers.plans();
    let first = plans
        .iter()
        .position(|p| p.lags() >= needed)
        .unwrap_or(plans.len().saturating_sub(1));
    for plan in plans.iter().skip(first) {
        let Work { fft, summed, .. } = work;
        summed.clear();
        summed.resize(plan.lags(), 0.0);
        plan.summed_autocovariance_into(halves, &mut fill, fft, summed);
        match ess_from_summed_autocovariances(summed, halves, means, n) {
            Ok(Some(ess)) => return ess,
            Ok(None) => {}
            Err(_) => return f64::NAN,
        }
    }
    f64::NAN
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::Lcg;
    use crate::diagnostics::{ess_per_coordinate_on, rhat};

    /// A sticky chain over `states` values per coordinate, deterministic.
    fn draws(chains: usize, n: usize, dim: usize, states: u32, seed: u64) -> Vec<u16> {
        let mut s = seed;
        let mut next = move || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 33) as u32
        };
        let mut x = vec![0u16; dim];
        let mut out = Vec::new();
        for _ in 0..chains {
            for _ in 0..n {
                for (i, v) in x.iter_mut().enumerate() {
                    // Coordinate 0 never moves; the others move at different rates.
                    if i > 0 && next() % (i as u32 + 1) == 0 {
                        *v = (next() % states) as u16;
                    }
                }
                out.extend_from_slice(&x);
            }
        }
        out
    }

    /// Equal up to rounding. Chains each stuck at its own value have R-hat `+∞`; the sorting
    /// estimator's within-chain variance of constant z-scores is rounding noise, so it may give
    /// a huge finite value instead.
    fn close(a: f64, b: f64) -> bool {
        a.to_bits() == b.to_bits()
            || (a - b).abs() <= 1e-9 * b.abs().max(1.0)
            || (a == f64::INFINITY && b > 1e10)
    }

    #[test]
    fn agree_with_the_sorting_estimators() {
        for (chains, n, states, dim) in [(1, 41, 2, 4), (3, 60, 5, 37), (2, 33, 3, 70)] {
            let data = draws(chains, n, dim, states, 7 + n as u64);
            let array = DrawArray::new(&data, chains, n, dim).unwrap();
            let d = coordinate_diagnostics(&array, states as usize, 2, None).unwrap();
            let sorted = ess_per_coordinate_on(&array, 1).unwrap();
            for i in 0..dim {
                let (a, b) = (d.ess.per_coordinate[i], sorted.per_coordinate[i]);
                assert!(close(a, b), "coordinate {i}: ESS {a} vs {b}");
                let series: Vec<Vec<f64>> = (0..chains).map(|c| array.coordinate(c, i)).collect();
                let views: Vec<&[f64]> = series.iter().map(Vec::as_slice).collect();
                let expected = rhat(&views).map_or(f64::NAN, |r| r.max());
                assert!(
                    close(d.rhat[i], expected),
                    "coordinate {i}: R-hat {} vs {expected}",
                    d.rhat[i]
                );
            }
        }
    }

    /// Random `(chains, n, dim)` draws over `states` values: coordinate `i` redraws its value
    /// with probability `rates[i]` at each step (0: never moves, from 0 in every chain; 1:
    /// independent draws), from a start that differs between chains; a negative rate keeps
    /// each chain at its own start.
    fn random_draws(seed: u64, chains: usize, n: usize, states: u16, rates: &[f64]) -> Vec<u16> {
        let mut g = Lcg(seed);
        let mut out = Vec::with_capacity(chains * n * rates.len());
        for c in 0..chains {
            // A coordinate that never moves starts at 0 in every chain.
            let mut x: Vec<u16> = rates
                .iter()
                .enumerate()
                .map(|(i, &rate)| {
                    if rate == 0.0 {
                        0
                    } else {
                        ((c + i) % usize::from(states)) as u16
                    }
                })
                .collect();
            for _ in 0..n {
                for (v, &rate) in x.iter_mut().zip(rates) {
                    if g.next() < rate {
                        *v = (g.next() * f64::from(states)) as u16;
                    }
                }
                out.extend_from_slice(&x);
            }
        }
        out
    }

    /// Every path (lags counted directly only, the FFT only, and both with the switch at
    /// several points) agrees with the sorting estimators with all lags by FFT, to rounding,
    /// on random binary and many-state draws with fast-, slow- and non-mixing coordinates.
    #[test]
    fn every_path_agrees_with_the_reference_on_random_draws() {
        let rates = [
            0.0, 1.0, 0.9, 0.5, 0.2, 0.05, 0.01, 0.003, 0.001, 0.0005, -1.0, 0.3,
        ];
        let cases: [(u64, usize, usize, u16); 5] = [
            (1, 2, 3000, 2),
            (2, 3, 2001, 2),
            (3, 1, 4000, 2),
            (4, 2, 2500, 5),
            (5, 4, 1000, 3),
        ];
        for (seed, chains, n, states) in cases {
            let data = random_draws(seed, chains, n, states, &rates);
            let dim = rates.len();
            let array = DrawArray::new(&data, chains, n, dim).unwrap();
            let reference = ess_per_coordinate_on(&array, 1).unwrap();
            let reference_rhat: Vec<f64> = (0..dim)
                .map(|i| {
                    let series: Vec<Vec<f64>> =
                        (0..chains).map(|c| array.coordinate(c, i)).collect();
                    let views: Vec<&[f64]> = series.iter().map(Vec::as_slice).collect();
                    rhat(&views).map_or(f64::NAN, |r| r.max())
                })
                .collect();
            for direct in [0, 16, 64, DIRECT_LAGS, usize::MAX] {
                let states = usize::from(states);
                let d =
                    with_chains(&array, |c| diagnostics_of(c, states, 2, None, direct)).unwrap();
                for (i, &expected_rhat) in reference_rhat.iter().enumerate() {
                    let (a, b) = (d.ess.per_coordinate[i], reference.per_coordinate[i]);
                    assert!(
                        close(a, b),
                        "seed {seed}, direct {direct}, coordinate {i}: ESS {a} vs {b}"
                    );
                    let (a, b) = (d.rhat[i], expected_rhat);
                    assert!(
                        close(a, b),
                        "seed {seed}, direct {direct}, coordinate {i}: R-hat {a} vs {b}"
                    );
                }
                assert!(d.ess.per_coordinate[0].is_nan() && d.rhat[0].is_nan());
                if chains > 1 {
                    // `+∞` from two states; many states give rounding noise for `W`, as above.
                    assert!(d.rhat[10] > 1e10, "seed {seed}: {}", d.rhat[10]);
                }
            }
        }
    }

    /// The integer count of a 0/1 series' centred autocovariance equals the direct sum.
    #[test]
    fn indicator_autocovariance_is_the_direct_sum() {
        let mut g = Lcg(9);
        for n in [1usize, 2, 63, 64, 65, 130, 700] {
            let x: Vec<u64> = (0..n).map(|_| u64::from(g.next() < 0.3)).collect();
            let mut bits = vec![0u64; n / 64 + 2];
            for (i, &v) in x.iter().enumerate() {
                bits[i / 64] |= v << (i % 64);
            }
            let ones = x.iter().sum::<u64>() as usize;
            let m = ones as f64 / n as f64;
            for t in 0..n {
                let head = x[..t].iter().sum::<u64>() as usize;
                let tail = x[n - t..].iter().sum::<u64>() as usize;
                let fast = indicator_autocovariance(&bits, n, t, ones, head, tail) as f64
                    / (n as f64).powi(3);
                let slow = (0..n - t)
                    .map(|i| (x[i] as f64 - m) * (x[i + t] as f64 - m))
                    .sum::<f64>()
                    / n as f64;
                assert!(
                    (fast - slow).abs() < 1e-12,
                    "n {n}, lag {t}: {fast} vs {slow}"
                );
            }
        }
    }

    #[test]
    fn values_beyond_the_states_are_an_error() {
        let data = [0u8, 1, 2, 1, 0, 1];
        let array = DrawArray::new(&data, 1, 6, 1).unwrap();
        assert!(matches!(
            coordinate_diagnostics(&array, 2, 1, None),
            Err(DiagError::Length { .. })
        ));
    }
}
