//! Single-site Gibbs on the nearest-neighbour Ising lattice: checkerboard sweeps with tabulated
//! conditionals.
//!
//! On an [`IsingLattice`] the conditional law of a site given the others depends only on its
//! neighbour sum `n ∈ {−4, …, 4}` (an absent neighbour of an open boundary counting as 0):
//! `P(x_i = 1 | rest) = sigmoid(2 (J n + h))`. [`LatticeGibbs`] tabulates these nine
//! probabilities once as 64-bit integer thresholds, so a site update is a few byte loads, an
//! integer comparison and a store: no `exp`, no division, no evaluation of `ΔU`.

use crate::error::LenError;
use crate::models::{IsingLattice, LatticeDims};
use rand_core::Rng;

/// A neighbour's contribution to `m = n + 4`: `s + 1`, so 0 or 2 for a present neighbour and 1
/// for an absent one.
const ABSENT: u8 = 1;
/// `2^64` as a double.
const TWO_POW_64: f64 = 18_446_744_073_709_551_616.0;

/// Gibbs sweeps of an [`IsingLattice`]: every site in turn, in checkerboard order (the sites with
/// `row + column` even, row by row, then the odd ones), drawn from its exact conditional.
///
/// A fixed visiting order keeps `π` invariant whatever it is; on a lattice whose sides are even
/// (or open) no two sites of a colour are neighbours, so each half sweep updates independent
/// sites. On an odd periodic side the wrapped neighbours share a colour and are updated one after
/// the other, which is still an exact Gibbs sweep.
///
/// # Conditionals and random stream
///
/// Site `i` is set to 1 when a 64-bit uniform integer is below `T_m = P(x_i = 1 | m) · 2^64`
/// (rounded, computed in `f64` from the side of the smaller probability, so both tails keep their
/// relative precision): the law is that of the generic [`Gibbs`](crate::baselines::Gibbs) to
/// within `2^−64` per update. The top 32 bits of that integer come from half a word: the `k`-th
/// site of a sweep (in visiting order) uses the low half of the sweep's `⌊k/2⌋`-th `next_u64`
/// for even `k` and the high half for odd `k`. Only when those 32 bits equal the top half of `T_m`
/// (probability `2^−32`) are the low 32 bits needed: they are the high half of one more word,
/// drawn at once. A sweep of `d` sites draws `⌈d/2⌉` words plus those rare extra words; a half
/// word left over at the end of a sweep is discarded.
///
/// # Examples
///
/// ```
/// use langevin_core::binary::LatticeGibbs;
/// use langevin_core::models::{ConstDims, IsingLattice};
/// use rand_core::SeedableRng;
///
/// let model = IsingLattice::<ConstDims<8, 8>>::new(0.3, 0.1, true).unwrap();
/// let gibbs = LatticeGibbs::new(&model);
/// let mut x = [0u8; 64];
/// let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
/// for _ in 0..100 {
///     gibbs.sweep(&mut x, &mut rng).unwrap();
/// }
/// assert!(x.iter().all(|&v| v <= 1));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct LatticeGibbs<D: LatticeDims> {
    model: IsingLattice<D>,
    /// `T_m` by `m = n + 4`; entries beyond 8 are never read.
    threshold: [u64; 16],
}

impl<D: LatticeDims> LatticeGibbs<D> {
    /// The sampler of `model`.
    pub fn new(model: &IsingLattice<D>) -> Self {
        let (coupling, field) = (f64::from(model.coupling()), f64::from(model.field()));
        let mut threshold = [0u64; 16];
        for (m, slot) in threshold.iter_mut().enumerate().take(9) {
            let n = m as f64 - 4.0;
            let logit = 2.0 * (coupling * n + field);
            // The smaller of the two probabilities is computed directly.
            *slot = if logit >= 0.0 {
                let zero = libm::round(crate::math::sigmoid(-logit) * TWO_POW_64) as u64;
                // 2^64 − zero, which is 2^64 − 1 at most.
                u64::MAX - zero.saturating_sub(1)
            } else {
                libm::round(crate::math::sigmoid(logit) * TWO_POW_64) as u64
            };
        }
        Self {
            model: *model,
            threshold,
        }
    }

    /// The model.
    pub fn model(&self) -> &IsingLattice<D> {
        &self.model
    }

    /// The probability with which an update of site `i` of `x` sets it to 1: `T_m / 2^64`.
    /// `None` if `i` is out of range.
    pub fn probability_of_one(&self, x: &[u8], i: usize) -> Option<f64> {
        x.get(i)?;
        let m = self.model.neighbours(i).iter().fold(0u8, |m, j| {
            m + j.and_then(|j| x.get(j)).map_or(ABSENT, |&v| (v & 1) << 1)
        });
        let t = self.threshold.get(usize::from(m)).copied()?;
        Some(t as f64 / TWO_POW_64)
    }

    /// One sweep over the raw state `x` (entries 0 or 1; other values are read by their low bit
    /// and written as 0 or 1). Returns the number of sites that changed.
    ///
    /// # Errors
    ///
    /// [`LenError`] unless `x` has the model's dimension (`x` unchanged).
    pub fn sweep<R: Rng + ?Sized>(&self, x: &mut [u8], rng: &mut R) -> Result<u32, LenError> {
        let dims = self.model.dims();
        let (rows, cols) = (dims.rows(), dims.cols());
        LenError::check("x", rows * cols, x.len())?;
        let (wrap_rows, wrap_cols) = self.model.wraps();
        let mut halves = Halves::default();
        let mut changed = 0u32;
        for colour in 0..2 {
            for r in 0..rows {
                let up = match r {
                    0 if wrap_rows => Some((rows - 1) * cols),
                    0 => None,
                    _ => Some((r - 1) * cols),
                };
                let down = match r + 1 {
                    n if n < rows => Some(n * cols),
                    _ if wrap_rows => Some(0),
                    _ => None,
                };
                let start = r * cols;
                let mut c = (r + colour) & 1;
                while c < cols {
                    let left = match c {
                        0 if wrap_cols => Some(start + cols - 1),
                        0 => None,
                        _ => Some(start + c - 1),
                    };
                    let right = match c + 1 {
                        n if n < cols => Some(start + n),
                        _ if wrap_cols => Some(start),
                        _ => None,
                    };
                    let at =
                        |j: Option<usize>| j.and_then(|j| x.get(j)).map_or(ABSENT, |&v| v << 1);
                    let m = at(left) + at(right) + at(up.map(|u| u + c)) + at(down.map(|d| d + c));
                    let t = self.threshold.get(usize::from(m)).copied().unwrap_or(0);
                    let one = u8::from(below(halves.next(rng), t, rng));
                    if let Some(v) = x.get_mut(start + c) {
                        changed += u32::from(*v != one);
                        *v = one;
                    }
                    c += 2;
                }
            }
        }
        Ok(changed)
    }
}

/// Whether the 64-bit uniform integer whose top half is `top` lies below `t`; the low half, if
/// needed, is the high half of a fresh word of `rng`.
#[inline(always)]
fn below<R: Rng + ?Sized>(top: u32, t: u64, rng: &mut R) -> bool {
    let t_top = (t >> 32) as u32;
    if top != t_top {
        return top < t_top;
    }
    ((rng.next_u64() >> 32) as u32) < t as u32
}

/// Two 32-bit uniforms from each word: the low half first.
#[derive(Default)]
struct Halves {
    word: u64,
    spare: bool,
}

impl Halves {
    #[inline(always)]
    fn next<R: Rng + ?Sized>(&mut self, rng: &mut R) -> u32 {
        if self.spare {
            self.spare = false;
            (self.word >> 32) as u32
        } else {
            self.word = rng.next_u64();
            self.spare = true;
            self.word as u32
        }
    }
}
