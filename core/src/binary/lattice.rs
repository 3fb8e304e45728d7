//! DULA and DMALA specialised to the nearest-neighbour Ising lattice.
//!
//! On an [`IsingLattice`] (one coupling `J`, one field `h`) the flip logit of site `i` depends
//! only on its value and its neighbour sum `n_i ∈ {−4, …, 4}`: 18 classes. [`LatticeProposal`]
//! tabulates, per class, a 16-bit flip threshold and the exact log-probabilities of the
//! quantised flip probability, so a step evaluates no transcendental function:
//!
//! 1. the class of every site is computed from the state with byte arithmetic on whole rows
//!    (into the chain's proposal buffer, so nothing is cached between steps);
//! 2. site `i` flips when 16 random bits, read as an integer, are below its class's threshold;
//! 3. `U(x') − U(x)`, `log q(x | x') − log q(x' | x)` and, on acceptance, the state and the
//!    chain's cached gradient are updated from the flipped sites and their neighbours only: a
//!    site that neither flips nor has a flipped neighbour keeps its class, so its two stay terms
//!    are equal and cancel.
//!
//! A step costs `O(d)` for the classes and the draw, and `O(flips)` for the rest.
//!
//! See [`LatticeProposal`] for the quantisation and the random stream.

use super::proposal::FlipProposal;
use crate::chain::BinaryChain;
use crate::error::{LenError, ParamError};
use crate::kernel::StepReport;
use crate::models::{IsingLattice, LatticeDims};
use crate::random::open_unit_f64;
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
// the site; bit 6 a mark used to visit each affected site once.
const M_MASK: u8 = 0x0f;
const X_BIT: u8 = 0x10;
const FLIP_BIT: u8 = 0x20;
const MARK_BIT: u8 = 0x40;
const TERM_MASK: u8 = 0x7f;
/// A neighbour's contribution to `m` is `s + 1`: 0 or 2 for a present neighbour, 1 for an absent
/// one.
const ABSENT: u8 = 1;

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
    /// `ln q` of a site's move by `class & TERM_MASK`, nonzero only with the mark bit:
    /// `ln(t/2^16)` with the flip bit, `ln(1 − t/2^16)` without. Reading it at `class` counts
    /// marked sites only, at `class ^ MARK_BIT` unmarked ones, without a branch.
    log_term: [f64; 128],
    /// `∂U/∂x = 2 (J n + h)` by `m = n + 4`, in `f32` as the model computes it.
    grad: [f32; 16],
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
        let mut log_term = [0.0f64; 128];
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
                let marked = class | usize::from(MARK_BIT);
                if let Some(slot) = log_term.get_mut(marked) {
                    *slot = libm::log((SCALE - t) / SCALE);
                }
                if let Some(slot) = log_term.get_mut(marked | usize::from(FLIP_BIT)) {
                    *slot = libm::log(t / SCALE);
                }
            }
        }
        if !grad.iter().all(|g| g.is_finite()) {
            return Err(ParamError::NonFinite("lattice gradient 2 (J n + h)"));
        }
        Ok(Self {
            model: *model,
            step,
            balance,
            threshold,
            log_term,
            grad,
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
            let flip = if a != b { FLIP_BIT } else { 0 };
            total += self.term(self.class_at(from, i).unwrap_or(0) | flip | MARK_BIT);
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

    /// Writes the class byte of every site of `x` into `class`: the inner rows in one flat pass
    /// (then their first and last columns corrected), the first and last rows one at a time.
    #[inline(always)]
    fn fill_classes(&self, x: &[u8], class: &mut [u8]) {
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
                for (((((o, &c), &u), &dn), &l), &r) in out
                    .iter_mut()
                    .zip(mid)
                    .zip(up)
                    .zip(down)
                    .zip(left)
                    .zip(right)
                {
                    *o = (c << 4) + ((u + dn + l + r) << 1);
                }
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
            vertical(row, up, down, out);
            horizontal(row, out, wrap_cols);
        }
    }

    /// Draws the flips: writes the flipped indices to the front of `flipped`, sets their flip
    /// bits, and returns their number. Site `i` uses bits `16·(i mod 4) ..` of the `⌊i/4⌋`-th
    /// word.
    #[inline(always)]
    fn draw<R: Rng + ?Sized>(&self, class: &mut [u8], flipped: &mut [u32], rng: &mut R) -> usize {
        // The flips of a block of 64 sites are shifted into a bit mask, first site in the top
        // bit (`mask + mask + carry`: no other dependency between sites), then listed in order.
        const BLOCK: usize = 64;
        let d = class.len();
        let mut count = 0usize;
        for base in (0..d).step_by(BLOCK) {
            let block = class.get(base..d.min(base + BLOCK)).unwrap_or(&[]);
            let len = block.len();
            let mut mask = 0u64;
            let mut quads = block.chunks_exact(SITES_PER_WORD);
            for quad in &mut quads {
                let mut word = rng.next_u64();
                for &k in quad {
                    mask = mask.wrapping_add(mask) + self.flip(word, k);
                    word >>= SITE_BITS;
                }
            }
            let rest = quads.remainder();
            if !rest.is_empty() {
                let mut word = rng.next_u64();
                for &k in rest {
                    mask = mask.wrapping_add(mask) + self.flip(word, k);
                    word >>= SITE_BITS;
                }
            }
            // Align the first site of a short block with the top bit.
            mask <<= BLOCK - len;
            while mask != 0 {
                let i = base + mask.leading_zeros() as usize;
                if let Some(slot) = flipped.get_mut(count) {
                    *slot = i as u32;
                }
                if let Some(k) = class.get_mut(i) {
                    *k |= FLIP_BIT;
                }
                count += 1;
                mask &= u64::MAX >> 1 >> (i - base);
            }
        }
        count
    }

    /// 1 if the low 16 bits of `r` are below the threshold of class `k`, else 0.
    #[inline(always)]
    fn flip(&self, r: u64, k: u8) -> u64 {
        let t = self.threshold.get(usize::from(k)).copied().unwrap_or(0);
        u64::from((r as u16) < t)
    }

    /// Site `i` followed by its four neighbours (left, right, up, down), an absent neighbour
    /// (open boundary) replaced by `i` itself, and which of the four are present (1) or not (0).
    #[inline(always)]
    fn around(&self, i: usize) -> ([usize; 5], [u8; 4]) {
        let dims = self.model.dims();
        let (rows, cols) = (dims.rows(), dims.cols());
        let (wrap_rows, wrap_cols) = self.model.wraps();
        // Indices fit in a u32 (checked by the model); a 32-bit division is the cheaper one.
        let r = (i as u32).checked_div(cols as u32).unwrap_or(0) as usize;
        let c = i - r * cols;
        let (left, has_left) = match c {
            0 if wrap_cols => (i + cols - 1, 1),
            0 => (i, 0),
            _ => (i - 1, 1),
        };
        let (right, has_right) = match c + 1 {
            n if n < cols => (i + 1, 1),
            _ if wrap_cols => (i + 1 - cols, 1),
            _ => (i, 0),
        };
        let (up, has_up) = match r {
            0 if wrap_rows => (i + (rows - 1) * cols, 1),
            0 => (i, 0),
            _ => (i - cols, 1),
        };
        let (down, has_down) = match r + 1 {
            n if n < rows => (i + cols, 1),
            _ if wrap_rows => (c, 1),
            _ => (i, 0),
        };
        (
            [i, left, right, up, down],
            [has_left, has_right, has_up, has_down],
        )
    }

    /// Flips the proposed sites one after another in the class bytes (toggling each one's
    /// value bit and moving its neighbours' `m` by ±2) and returns `(ratio, pair, ups)`:
    /// `pair = Σ_i (−s_i) ñ_i` with `ñ_i` the neighbour sum when `i` flips in this sequence,
    /// and `ups = Σ_i (−s_i)`, so that `ΔU = 2J·pair + 2h·ups` exactly. With `METROPOLIS`,
    /// `ratio` is minus the forward log-probability of the move at every site around a flip,
    /// each read (and marked) before any flip touches it.
    #[inline(always)]
    fn apply_flips<const METROPOLIS: bool>(
        &self,
        class: &mut [u8],
        flipped: &[u32],
    ) -> (f64, i64, i64) {
        // One accumulator per position around a flip: five short dependency chains. Each
        // site's byte is read and written once per visit: its forward term is taken on the
        // first visit, before any flip has touched it.
        let mut ratio = [0.0f64; 5];
        let (mut pair, mut ups) = (0i64, 0i64);
        for &i in flipped {
            let i = i as usize;
            let ([own, neighbours @ ..], present) = self.around(i);
            let [own_ratio, neighbour_ratios @ ..] = &mut ratio;
            let Some(k) = class.get_mut(own) else {
                continue;
            };
            let mut kv = *k;
            if METROPOLIS {
                *own_ratio -= self.term(kv ^ MARK_BIT);
                kv |= MARK_BIT;
            }
            let n = i64::from(kv & M_MASK) - 4;
            let up = kv & X_BIT == 0;
            *k = kv ^ X_BIT;
            // −s_i is +1 for a site going up.
            let sign = if up { 1 } else { -1 };
            pair += sign * n;
            ups += sign;
            for ((&j, &p), acc) in neighbours
                .iter()
                .zip(&present)
                .zip(neighbour_ratios.iter_mut())
            {
                if let Some(k) = class.get_mut(j) {
                    let mut kv = *k;
                    if METROPOLIS {
                        *acc -= self.term(kv ^ MARK_BIT);
                        kv |= MARK_BIT;
                    }
                    *k = if up {
                        kv.wrapping_add(2 * p)
                    } else {
                        kv.wrapping_sub(2 * p)
                    };
                }
            }
        }
        let [a, b, c, d, e] = ratio;
        (((a + b) + (c + d)) + e, pair, ups)
    }

    /// Adds the reverse log-probability of the move at every marked site around a flip, and
    /// clears the marks.
    #[inline(always)]
    fn reverse_terms(&self, class: &mut [u8], flipped: &[u32]) -> f64 {
        let mut ratio = [0.0f64; 5];
        for &i in flipped {
            let (sites, _) = self.around(i as usize);
            for (acc, &j) in ratio.iter_mut().zip(&sites) {
                if let Some(k) = class.get_mut(j) {
                    *acc += self.term(*k);
                    *k &= !MARK_BIT;
                }
            }
        }
        let [a, b, c, d, e] = ratio;
        ((a + b) + (c + d)) + e
    }

    /// `ΔU = 2J·pair + 2h·ups` (see [`apply_flips`](Self::apply_flips)).
    #[inline(always)]
    fn delta_u(&self, pair: i64, ups: i64) -> f64 {
        f64::from(self.model.coupling()) * (2 * pair) as f64
            + f64::from(self.model.field()) * (2 * ups) as f64
    }

    /// On acceptance: toggles the flipped sites of the state and refreshes the gradient of every
    /// affected site from the updated class bytes.
    #[inline(always)]
    fn adopt(&self, x: &mut [u8], grad: &mut [f32], class: &[u8], flipped: &[u32]) {
        for &i in flipped {
            let i = i as usize;
            if let Some(v) = x.get_mut(i) {
                *v ^= 1;
            }
            let (sites, _) = self.around(i);
            for j in sites {
                if let (Some(g), Some(&k)) = (grad.get_mut(j), class.get(j)) {
                    *g = self
                        .grad
                        .get(usize::from(k & M_MASK))
                        .copied()
                        .unwrap_or(0.0);
                }
            }
        }
    }

    #[inline(always)]
    fn term(&self, class: u8) -> f64 {
        self.log_term
            .get(usize::from(class & TERM_MASK))
            .copied()
            .unwrap_or(0.0)
    }
}

/// The vertical part of the class bytes of one row: `16 x + (s_up + 1) + (s_down + 1)`.
#[inline(always)]
fn vertical(row: &[u8], up: Option<&[u8]>, down: Option<&[u8]>, out: &mut [u8]) {
    match (up, down) {
        (Some(u), Some(d)) => {
            for (((o, &x), &xu), &xd) in out.iter_mut().zip(row).zip(u).zip(d) {
                *o = (x << 4) + ((xu + xd) << 1);
            }
        }
        (Some(v), None) | (None, Some(v)) => {
            for ((o, &x), &xv) in out.iter_mut().zip(row).zip(v) {
                *o = (x << 4) + (xv << 1) + ABSENT;
            }
        }
        (None, None) => {
            for (o, &x) in out.iter_mut().zip(row) {
                *o = (x << 4) + 2 * ABSENT;
            }
        }
    }
}

/// Adds the horizontal neighbours' `s + 1` to the class bytes of one row.
#[inline(always)]
fn horizontal(row: &[u8], out: &mut [u8], wrap: bool) {
    let cols = row.len();
    if let (Some(inner), Some(right)) = (out.get_mut(1..cols.saturating_sub(1)), row.get(2..)) {
        for ((o, &l), &r) in inner.iter_mut().zip(row).zip(right) {
            *o += (l + r) << 1;
        }
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
    pub fn step<R: Rng + ?Sized>(
        &self,
        chain: &mut BinaryChain<'_>,
        rng: &mut R,
    ) -> Result<StepReport, LenError> {
        let p = &self.proposal;
        LenError::check("chain", p.dim(), chain.dim())?;
        p.fill_classes(chain.x, chain.x_proposal);
        let flips = p.draw(chain.x_proposal, chain.changed, rng);
        let u = if ADJUSTED { open_unit_f64(rng) } else { 0.0 };
        let mut report = StepReport::proposed(true, flips, u32::from(flips > 0));
        if flips == 0 {
            return Ok(report);
        }
        let flipped = chain.changed.get(..flips).unwrap_or(&[]);
        let class = &mut *chain.x_proposal;
        let (forward, pair, ups) = p.apply_flips::<ADJUSTED>(class, flipped);
        let delta_u = p.delta_u(pair, ups);
        if ADJUSTED {
            let log_q_ratio = forward + p.reverse_terms(class, flipped);
            report.log_accept_ratio = delta_u + log_q_ratio;
            // `ln u < 0` always: skip the logarithm when the ratio is not negative.
            report.accepted =
                report.log_accept_ratio >= 0.0 || libm::log(u) < report.log_accept_ratio;
        }
        if report.accepted {
            p.adopt(chain.x, chain.grad, class, flipped);
            chain.log_density += delta_u;
        }
        Ok(report)
    }
}
