//! [`SmallLatticeDmala`]: the lattice DMALA in integer arithmetic alone, for the smallest
//! images.

use super::{FLIP_BIT, M_MASK, SCALE, SITE_BITS, SITES_PER_WORD, X_BIT};
use crate::error::{InitError, LenError, ParamError};
use core::convert::Infallible;
use rand_core::Rng;

/// Fractional bits of the fixed-point log-probabilities, couplings and ratios: `2^40`.
const FIXED_BITS: u32 = 40;
/// Terms of the shift-and-add logarithm: its error is below `2^−48`.
const LOG_TERMS: usize = 48;
/// `ln(1 + 2^−j)` for `j = 1 ..= LOG_TERMS`, at scale `2^62`.
const LN1P: [u64; LOG_TERMS] = ln1p_table();
/// `ln 2` at scale `2^62`.
const LN2_Q62: u64 = q64_to_q62(ln_ratio_q64(3));
/// `ln 2` at scale `2^62` as `LN2_FLOOR · 2^22 + LN2_REST`.
const LN2_FLOOR: i64 = (LN2_Q62 >> (62 - FIXED_BITS)) as i64;
const LN2_REST: i64 = (LN2_Q62 & ((1 << (62 - FIXED_BITS)) - 1)) as i64;

/// `ln((1 + y) / (1 − y)) = 2 Σ_k y^(2k+1) / (2k+1)` for `y = 1/q`, `q ≥ 3`, at scale `2^64`
/// (every term truncated: the sum is low by less than `2^−58`).
const fn ln_ratio_q64(q: u128) -> u128 {
    let mut power = (1u128 << 64) / q;
    let mut sum = 0u128;
    let mut k = 1u128;
    while power > 0 {
        sum += power / k;
        power /= q * q;
        k += 2;
    }
    2 * sum
}

/// From scale `2^64` to `2^62`, rounded.
const fn q64_to_q62(v: u128) -> u64 {
    ((v + 2) >> 2) as u64
}

/// From scale `2^62` to [`FIXED_BITS`], rounded to nearest.
const fn round_q62(v: i128) -> i64 {
    let shift = 62 - FIXED_BITS;
    ((v + (1 << (shift - 1))) >> shift) as i64
}

/// `ln(1 + 2^−j) = ln((1 + y)/(1 − y))` with `y = 1 / (2^(j+1) + 1)`.
#[allow(
    clippy::indexing_slicing,
    reason = "evaluated for a constant: an index out of range would fail the build"
)]
const fn ln1p_table() -> [u64; LOG_TERMS] {
    let mut t = [0u64; LOG_TERMS];
    let mut i = 0;
    while i < LOG_TERMS {
        t[i] = q64_to_q62(ln_ratio_q64((1u128 << (i + 2)) + 1));
        i += 1;
    }
    t
}

/// `ln(y / 2^63)` at scale `2^62` for `2^63 ≤ y < 2^64`, by shift and add: `p` grows from
/// `2^63` by the factors `1 + 2^−j` that keep it at most `y`, and the logarithms of the factors
/// taken are summed. Then `y / p < 1 + 2^−LOG_TERMS`, so the sum is low by less than
/// `2^−LOG_TERMS` (plus the rounding of the table, below `2^−56`).
const fn ln_mantissa(y: u64) -> u64 {
    let mut p: u64 = 1 << 63;
    let mut sum = 0u64;
    let mut shift = 1;
    let mut table: &[u64] = &LN1P;
    while let [ln, rest @ ..] = table {
        if let Some(q) = p.checked_add(p >> shift) {
            if q <= y {
                p = q;
                sum += *ln;
            }
        }
        shift += 1;
        table = rest;
    }
    sum
}

/// `ln(v / 2^16)` at scale `2^40` for `1 ≤ v < 2^16`.
const fn ln_fraction(v: u16) -> i64 {
    let lz = (v as u64).leading_zeros();
    // v = y · 2^(63 − lz) / 2^63, so ln(v / 2^16) = ln(y / 2^63) − (lz − 47) ln 2.
    let ln_y = ln_mantissa((v as u64) << lz) as i128;
    round_q62(ln_y - (lz as i128 - 47) * LN2_Q62 as i128)
}

/// `e^x` for `x ≤ 0` as `libm::exp` computes it (the same operations, so the same bits), for
/// the table of [`SmallLatticeDmala::new`] in constant evaluation. Below −700 it returns 0
/// (`libm` gives less than `2^−1009` there, which no use here can tell from 0).
const fn exp_nonpositive(x: f64) -> f64 {
    const LN2HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
    const LN2LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);
    const INVLN2: f64 = f64::from_bits(0x3ff7_1547_652b_82fe);
    const P1: f64 = f64::from_bits(0x3fc5_5555_5555_553e);
    const P2: f64 = f64::from_bits(0xbf66_c16c_16be_bd93);
    const P3: f64 = f64::from_bits(0x3f11_566a_af25_de2c);
    const P4: f64 = f64::from_bits(0xbebb_bd41_c5d2_6bf1);
    const P5: f64 = f64::from_bits(0x3e66_3769_72be_a4d0);
    if x < -700.0 {
        return 0.0;
    }
    let hx = ((x.to_bits() >> 32) as u32) & 0x7fff_ffff;
    let (k, hi, lo, r) = if hx > 0x3fd6_2e42 {
        // |x| > ln 2 / 2 (x is negative: the sign bit is set).
        let k = if hx >= 0x3ff0_a2b2 {
            (INVLN2 * x - 0.5) as i32
        } else {
            -1
        };
        let hi = x - k as f64 * LN2HI;
        let lo = k as f64 * LN2LO;
        (k, hi, lo, hi - lo)
    } else if hx > 0x3e30_0000 {
        (0, x, 0.0, x)
    } else {
        return 1.0 + x;
    };
    let rr = r * r;
    let c = r - rr * (P1 + rr * (P2 + rr * (P3 + rr * (P4 + rr * P5))));
    let y = 1.0 + (r * c / (2.0 - c) - lo + hi);
    if k == 0 {
        y
    } else {
        // 2^k with −1010 < k < 0 is a normal number, and y · 2^k is exact: scalbn's result.
        y * f64::from_bits(((0x3ff + k) as u64) << 52)
    }
}

/// The flip threshold of [`LatticeProposal`](super::LatticeProposal):
/// `round(sigmoid(l) · 2^16)` clamped to `[1, 2^16 − 1]`, with the same operations.
const fn threshold_of(logit: f64) -> u16 {
    let e = exp_nonpositive(-logit.abs());
    let p = if logit >= 0.0 {
        1.0 / (1.0 + e)
    } else {
        e / (1.0 + e)
    };
    let v = p * SCALE;
    let whole = v as u32;
    let t = if v - whole as f64 >= 0.5 {
        whole + 1
    } else {
        whole
    };
    if t < 1 {
        1
    } else if t > 65_535 {
        65_535
    } else {
        t as u16
    }
}

/// DMALA on the nearest-neighbour Ising lattice in integer arithmetic alone: the kernel of
/// [`LatticeDmala`](super::LatticeDmala) (the same proposal, target and Metropolis test, and
/// the same draws from the same random stream) for images with no room for floating-point
/// routines, such as a Cortex-M0 with 8 KiB of flash.
///
/// Everything that needs a transcendental function is tabulated by [`new`](Self::new), a
/// `const fn`: evaluated in a `const` item, the kernel is a table in flash (about 660 bytes,
/// beside the 384 bytes of the logarithm's table) and the image holds no floating-point code. A step reads the state (one byte a site) and a
/// class buffer of the same length, both owned by the caller through [`SmallLatticeChain`], and
/// keeps no gradient: on the lattice a site's local field is `J n + h` with its neighbour sum
/// `n` a small integer.
///
/// # Arithmetic
///
/// The log-probabilities `ln(t/2^16)` and `ln(1 − t/2^16)` of the quantised proposal (see
/// [`LatticeProposal`](super::LatticeProposal)) and the parameters `J`, `h` are held in fixed
/// point at scale `2^40`, and the log acceptance ratio is summed exactly in `i64` from them.
/// The test `ln u < ratio` computes `ln u` of the same `u` as
/// [`LatticeDmala`](super::LatticeDmala) (53 bits of one `next_u64`) by shift and add. The
/// table entries are within `2^−40` of the exact values and `ln u` within `2^−39`, so the
/// decision is that of the exact test unless `ln u` lies within `(3d + 2)·2^−40` of the ratio
/// (`d` sites), an event of probability below `2^−31` per step on an 8×8 lattice. In that band
/// the two kernels may decide differently, each within the rounding of its own arithmetic.
///
/// # Limits
///
/// At most [`MAX_SITES`](Self::MAX_SITES) sites and `|J|, |h| ≤` [`MAX_PARAM`](Self::MAX_PARAM),
/// so that no sum overflows.
///
/// # Examples
///
/// ```
/// use langevin_core::binary::{SmallLatticeChain, SmallLatticeDmala};
/// use rand_core::SeedableRng;
///
/// // 8×8 periodic lattice, J = 0.3, h = 0.1, step 0.5, balance 0.5: a table built at compile time.
/// const KERNEL: SmallLatticeDmala = match SmallLatticeDmala::new(8, 8, true, 0.3, 0.1, 0.5, 0.5) {
///     Ok(k) => k,
///     Err(_) => panic!("invalid parameters"),
/// };
/// let (mut x, mut class) = ([0u8; 64], [0u8; 64]);
/// let mut chain = SmallLatticeChain::new(&KERNEL, &mut x, &mut class).unwrap();
/// let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
/// for _ in 0..100 {
///     KERNEL.step(&mut chain, &mut rng).unwrap();
/// }
/// assert!(chain.state().iter().all(|&v| v <= 1));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct SmallLatticeDmala {
    rows: usize,
    cols: usize,
    wrap_rows: bool,
    wrap_cols: bool,
    /// Flip thresholds by class byte (`m | x << 4`).
    threshold: [u16; 32],
    /// `ln q` of a site's move by class byte and flip bit (`class | flip << 5`), at scale
    /// `2^40`: `ln(t/2^16)` with the flip bit, `ln(1 − t/2^16)` without.
    log_q: [i64; 64],
    /// `J` and `h` at scale `2^40`, rounded.
    coupling: i64,
    field: i64,
    /// `J` and `h` as given.
    coupling_f32: f32,
    field_f32: f32,
}

/// What one step of [`SmallLatticeDmala`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SmallStep {
    /// Whether the chain moved to the proposal (an empty proposal counts as accepted).
    pub accepted: bool,
    /// Sites the proposal flipped.
    pub proposed_flips: u32,
    /// The log acceptance ratio at scale `2^40` (see
    /// [`log_accept_ratio`](Self::log_accept_ratio)); 0 for an empty proposal.
    pub log_accept_ratio_fixed: i64,
}

impl SmallStep {
    /// The log acceptance ratio as a number.
    pub fn log_accept_ratio(&self) -> f64 {
        self.log_accept_ratio_fixed as f64 / (1u64 << FIXED_BITS) as f64
    }
}

/// The chain of [`SmallLatticeDmala`]: the state (one byte a site, 0 or 1) and a class buffer
/// of the same length in caller-owned memory, with the two integers that give the
/// log-density, `U = J·bonds + h·magnetisation`.
#[derive(Debug)]
pub struct SmallLatticeChain<'a> {
    x: &'a mut [u8],
    class: &'a mut [u8],
    bonds: i32,
    magnetisation: i32,
}

impl<'a> SmallLatticeChain<'a> {
    /// The chain at state `x`, with `class` (of `x`'s length, content ignored) as the step's
    /// buffer.
    ///
    /// # Errors
    ///
    /// [`InitError::Len`] unless both buffers have the kernel's number of sites;
    /// [`InitError::StateOutOfRange`] for a state entry above 1.
    pub fn new(
        kernel: &SmallLatticeDmala,
        x: &'a mut [u8],
        class: &'a mut [u8],
    ) -> Result<Self, InitError<Infallible>> {
        let d = kernel.sites();
        LenError::check("state", d, x.len()).map_err(InitError::Len)?;
        LenError::check("class buffer", d, class.len()).map_err(InitError::Len)?;
        if let Some((index, &v)) = x.iter().enumerate().find(|&(_, &v)| v > 1) {
            return Err(InitError::StateOutOfRange {
                index,
                value: u16::from(v),
            });
        }
        let (mut pairs, mut ups) = (0i32, 0i32);
        kernel.for_each_class(x, |_, k| {
            let (s_n, up) = spin_terms(k);
            pairs += s_n;
            ups += up;
        });
        Ok(Self {
            x,
            class,
            bonds: pairs / 2,
            magnetisation: 2 * ups - d as i32,
        })
    }

    /// The state.
    pub fn state(&self) -> &[u8] {
        self.x
    }

    /// `Σ s_i s_j` over the bonds (each counted once), `s = 2x − 1`.
    pub fn bonds(&self) -> i32 {
        self.bonds
    }

    /// `Σ s_i`.
    pub fn magnetisation(&self) -> i32 {
        self.magnetisation
    }
}

/// `(s·n, x)` of a class byte, with `s = 2x − 1` and `n = m − 4` (an absent neighbour counts
/// as spin 0).
#[inline(always)]
fn spin_terms(class: u8) -> (i32, i32) {
    let n = i32::from(class & M_MASK) - 4;
    let x = i32::from((class >> 4) & 1);
    ((2 * x - 1) * n, x)
}

impl SmallLatticeDmala {
    /// The most sites a lattice may have.
    pub const MAX_SITES: usize = 1 << 14;
    /// The largest `|J|` and `|h|`.
    pub const MAX_PARAM: f32 = 64.0;

    /// The kernel on the `rows × cols` Ising lattice with coupling `J` and field `h`, periodic
    /// along every axis of at least 3 sites if `periodic` (as
    /// [`IsingLattice`](crate::models::IsingLattice)), with step `a` and balance `b`: the
    /// proposal of [`LatticeProposal::new`](super::LatticeProposal::new) on that model,
    /// tabulated with the same operations (so the same flip thresholds).
    ///
    /// # Errors
    ///
    /// [`ParamError::EmptyDimension`] for no site; [`ParamError::OutOfRange`] beyond
    /// [`MAX_SITES`](Self::MAX_SITES) sites or for `|J|` or `|h|` above
    /// [`MAX_PARAM`](Self::MAX_PARAM) (or not finite); [`ParamError::Step`] and
    /// [`ParamError::Balance`] as for [`FlipProposal::new`](crate::binary::FlipProposal::new).
    #[allow(
        clippy::indexing_slicing,
        reason = "class bytes below 32 and flip bit 32 index tables of 32 and 64 entries"
    )]
    pub const fn new(
        rows: usize,
        cols: usize,
        periodic: bool,
        coupling: f32,
        field: f32,
        step: f64,
        balance: f64,
    ) -> Result<Self, ParamError> {
        match rows.checked_mul(cols) {
            Some(0) => return Err(ParamError::EmptyDimension),
            Some(n) if n <= Self::MAX_SITES => {}
            _ => {
                return Err(ParamError::OutOfRange {
                    name: "rows * cols",
                    value: rows as f64 * cols as f64,
                });
            }
        }
        if coupling.is_nan() || coupling.abs() > Self::MAX_PARAM {
            return Err(ParamError::OutOfRange {
                name: "coupling",
                value: coupling as f64,
            });
        }
        if field.is_nan() || field.abs() > Self::MAX_PARAM {
            return Err(ParamError::OutOfRange {
                name: "field",
                value: field as f64,
            });
        }
        if !(step.is_finite() && step > 0.0) {
            return Err(ParamError::Step(step));
        }
        if !(balance > 0.0 && balance <= 1.0) {
            return Err(ParamError::Balance(balance));
        }
        let (j, h) = (coupling as f64, field as f64);
        let mut threshold = [0u16; 32];
        let mut log_q = [0i64; 64];
        let mut m = 0u8;
        while m <= 8 {
            let n = m as f64 - 4.0;
            let mut x = 0u8;
            while x <= 1 {
                let class = (m | (x * X_BIT)) as usize;
                let g = 2.0 * (j * n + h);
                let logit = balance * g * (1.0 - 2.0 * x as f64) - 0.5 / step;
                let t = threshold_of(logit);
                threshold[class] = t;
                log_q[class] = ln_fraction(65_535 - t + 1);
                log_q[class | FLIP_BIT as usize] = ln_fraction(t);
                x += 1;
            }
            m += 1;
        }
        let scale = (1u64 << FIXED_BITS) as f64;
        Ok(Self {
            rows,
            cols,
            wrap_rows: periodic && rows >= 3,
            wrap_cols: periodic && cols >= 3,
            threshold,
            log_q,
            coupling: round_fixed(j * scale),
            field: round_fixed(h * scale),
            coupling_f32: coupling,
            field_f32: field,
        })
    }

    /// The number of sites.
    pub const fn sites(&self) -> usize {
        self.rows * self.cols
    }

    /// The probability that site `i` of state `x` flips: `t / 2^16` for its class. `None` if
    /// `i` is out of range.
    pub fn flip_probability(&self, x: &[u8], i: usize) -> Option<f64> {
        if x.len() != self.sites() {
            return None;
        }
        let mut found = None;
        self.for_each_class(x, |j, k| {
            if j == i {
                found = Some(k);
            }
        });
        let t = self.threshold.get(usize::from(found?))?;
        Some(f64::from(*t) / SCALE)
    }

    /// The log-density `U = J·bonds + h·magnetisation` of `chain`'s state.
    pub fn log_density(&self, chain: &SmallLatticeChain<'_>) -> f64 {
        f64::from(self.coupling_f32) * f64::from(chain.bonds)
            + f64::from(self.field_f32) * f64::from(chain.magnetisation)
    }

    /// Calls `f(i, class)` for every site `i` of `x` in order, with its class byte
    /// `m | x_i << 4`, `m` the sum over its four neighbours of `s + 1` (1 for an absent one).
    #[inline(always)]
    fn for_each_class(&self, x: &[u8], mut f: impl FnMut(usize, u8)) {
        let (rows, cols) = (self.rows, self.cols);
        let at = |i: usize| x.get(i).map_or(1, |&v| (v & 1) << 1);
        let mut i = 0;
        for r in 0..rows {
            let up = if r > 0 {
                Some(i - cols)
            } else if self.wrap_rows {
                Some(i + (rows - 1) * cols)
            } else {
                None
            };
            let down = if r + 1 < rows {
                Some(i + cols)
            } else if self.wrap_rows {
                Some(i + cols - rows * cols)
            } else {
                None
            };
            let row_start = i;
            for c in 0..cols {
                let left = if c > 0 {
                    at(i - 1)
                } else if self.wrap_cols {
                    at(row_start + cols - 1)
                } else {
                    1
                };
                let right = if c + 1 < cols {
                    at(i + 1)
                } else if self.wrap_cols {
                    at(row_start)
                } else {
                    1
                };
                let up_down = vertical_at(x, up, down, c);
                let m = up_down + left + right;
                let v = x.get(i).map_or(0, |&v| v & 1);
                f(i, m | (v << 4));
                i += 1;
            }
        }
    }

    /// Advances `chain` by one step. Consumes `⌈d/4⌉` words of `rng` for the proposal (site
    /// `i` uses bits `16·(i mod 4) ..` of the `⌊i/4⌋`-th) and one for the Metropolis test, as
    /// [`LatticeDmala::step`](super::LatticeDmala::step) does.
    ///
    /// # Errors
    ///
    /// [`LenError`] if the chain's buffers do not have the kernel's number of sites (a chain
    /// made for another kernel); the chain is unchanged then.
    pub fn step<R: Rng + ?Sized>(
        &self,
        chain: &mut SmallLatticeChain<'_>,
        rng: &mut R,
    ) -> Result<SmallStep, LenError> {
        let d = self.sites();
        LenError::check("chain", d, chain.x.len())?;
        LenError::check("class buffer", d, chain.class.len())?;
        let (x, class) = (&mut *chain.x, &mut *chain.class);
        // The classes of the current state, then the draw: site i flips when its 16 bits are
        // below its class's threshold. `forward` sums ln q(x' | x).
        self.for_each_class(x, |i, k| {
            if let Some(c) = class.get_mut(i) {
                *c = k;
            }
        });
        let (mut flips, mut forward) = (0u32, 0i64);
        let mut word = 0u64;
        for (i, k) in class.iter_mut().enumerate() {
            if i % SITES_PER_WORD == 0 {
                word = rng.next_u64();
            }
            let r = word as u16;
            word >>= SITE_BITS;
            let t = self
                .threshold
                .get(usize::from(*k & 0x1f))
                .copied()
                .unwrap_or(0);
            let flip = u8::from(r < t);
            *k |= flip << 5;
            flips += u32::from(flip);
            forward += self.log_q.get(usize::from(*k & 0x3f)).copied().unwrap_or(0);
        }
        let u_word = rng.next_u64();
        if flips == 0 {
            return Ok(SmallStep {
                accepted: true,
                proposed_flips: 0,
                log_accept_ratio_fixed: 0,
            });
        }
        // The proposal in place of the state; `reverse` sums ln q(x | x') from its classes.
        for (v, &k) in x.iter_mut().zip(class.iter()) {
            *v ^= (k >> 5) & 1;
        }
        let (mut reverse, mut pairs, mut ups) = (0i64, 0i32, 0i32);
        self.for_each_class(x, |i, k| {
            let flip = class.get(i).map_or(0, |&c| c & FLIP_BIT);
            reverse += self.log_q.get(usize::from(k | flip)).copied().unwrap_or(0);
            let (s_n, up) = spin_terms(k);
            pairs += s_n;
            ups += up;
        });
        let (bonds, magnetisation) = (pairs / 2, 2 * ups - d as i32);
        let ratio = reverse - forward
            + self.coupling * i64::from(bonds - chain.bonds)
            + self.field * i64::from(magnetisation - chain.magnetisation);
        let accepted = metropolis_accepts(u_word, ratio);
        if accepted {
            chain.bonds = bonds;
            chain.magnetisation = magnetisation;
        } else {
            for (v, &k) in x.iter_mut().zip(class.iter()) {
                *v ^= (k >> 5) & 1;
            }
        }
        Ok(SmallStep {
            accepted,
            proposed_flips: flips,
            log_accept_ratio_fixed: ratio,
        })
    }
}

/// `s + 1` of the neighbours above and below column `c` (1 for an absent one).
#[inline(always)]
fn vertical_at(x: &[u8], up: Option<usize>, down: Option<usize>, c: usize) -> u8 {
    let at = |row: Option<usize>| row.and_then(|r| x.get(r + c)).map_or(1, |&v| (v & 1) << 1);
    at(up) + at(down)
}

/// `v` rounded to the nearest integer (`|v| < 2^53`).
const fn round_fixed(v: f64) -> i64 {
    let whole = v as i64;
    let frac = v - whole as f64;
    if frac >= 0.5 {
        whole + 1
    } else if frac <= -0.5 {
        whole - 1
    } else {
        whole
    }
}

/// The Metropolis test `ln u < ratio` (`ratio` at scale `2^40`), with
/// `u = (2⌊word / 2^11⌋ + 1) / 2^54` the draw of [`LatticeDmala`](super::LatticeDmala).
///
/// `ln u = k ln 2 + ln(y / 2^63)` with `k = e − 54` for the binary exponent `e` of the odd
/// integer `2^54 u` and `y` its mantissa; it is computed at scale `2^62` (exact but for the
/// table) and rounded down to `2^40`. The mantissa's logarithm (in `[0, ln 2)`) is computed
/// only when the exponent leaves the decision open: the shortcuts give the same answer as the
/// full computation, as `ln u` grows with the mantissa's logarithm.
#[inline(always)]
fn metropolis_accepts(word: u64, ratio: i64) -> bool {
    if ratio >= 0 {
        return true;
    }
    let n = ((word >> 11) << 1) | 1;
    let lz = n.leading_zeros();
    let k = 9 - i64::from(lz);
    let ln_u = |ln_y: i64| k * LN2_FLOOR + ((k * LN2_REST + ln_y) >> (62 - FIXED_BITS));
    if ratio <= ln_u(0) {
        return false;
    }
    if ratio > ln_u(LN2_Q62 as i64) {
        return true;
    }
    ln_u(ln_mantissa(n << lz) as i64) < ratio
}
