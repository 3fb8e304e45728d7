//! The RBM of [`Rbm`] evaluated for many chains at once.

use super::Rbm;
use crate::batch::{BatchShape, split_cache};
use crate::binary::{BatchMoves, BatchTarget};
use crate::dense::{Blocked, Product, Shape};
use crate::error::{LenError, ParamError};
use crate::math::{FlipMath, Libm, exp_neg_abs_each, ln_1p_each};

/// [`Rbm`]'s `U` and `∇U` for `n` chains at once: a [`BatchTarget`].
///
/// Per chain, the hidden pre-activations `W x + c` are cached in `f64` (in a caller buffer of
/// `2·n·H` doubles: the current ones of every chain, then the proposed ones) and a move adds
/// the flipped units' rows of `Wᵀ`, in flip order, exactly as [`Rbm`] with a transpose does.
/// `softplus` and `sigmoid` are evaluated as [`Rbm`] evaluates them (in `f32` through `M`), into
/// a caller buffer of `n·H` floats `S`; the gradients of all chains are then one product
/// `∇U = 1·bᵀ + S · W` (`n × H` times `H × V`) through `P`.
///
/// With the portable [`Blocked`] product and the same `M`, every value is that of [`Rbm`], bit
/// for bit (its gradient adds the hidden units' rows in order, as [`Blocked`] does); another
/// product (a host's SIMD library) may round differently.
///
/// [`recomputed`](Self::recomputed) instead forms the pre-activations of every proposal in
/// `f32` as a second product, `X' · Wᵀ + 1·cᵀ`: no cache of the current states, and, when many
/// units flip per step, less work than the per-flip update on a host whose product uses wide
/// SIMD.
///
/// [`incremental_f32`](Self::incremental_f32) keeps per-flip updates but in `f32`, hidden
/// tile by hidden tile over all chains (a unit's row of a tile is read once and added to every
/// chain that flips the unit), recomputing the current pre-activations from the states every
/// [`REFRESH`](Self::REFRESH) evaluations so that rounding cannot accumulate; its hidden terms
/// are summed in `f32` lanes folded into `f64`. Its values are close to [`Rbm`]'s, not equal.
#[derive(Debug)]
pub struct RbmBatch<'a, P: Product = Blocked, M: FlipMath = Libm> {
    w: &'a [f32],
    wt: &'a [f32],
    b: &'a [f32],
    c: &'a [f32],
    hidden: Hidden<'a>,
    sigma: &'a mut [f32],
    chains: usize,
    product: P,
    math: core::marker::PhantomData<M>,
}

impl<'a, P: Product, M: FlipMath> RbmBatch<'a, P, M> {
    /// The parameters of `rbm`, which must have its transpose attached
    /// ([`Rbm::with_transpose`]), for `chains` chains: `cache` holds `2·chains·H` doubles and
    /// `sigma` `chains·H` floats.
    ///
    /// # Errors
    ///
    /// [`ParamError::Unsupported`] without a transpose, [`ParamError::OutOfRange`] for no
    /// chains, [`ParamError::Len`] for buffers of the wrong length.
    ///
    /// # Examples
    ///
    /// ```
    /// use langevin_core::binary::{BatchBuffers, BatchDmala, ChainBatch, FlipProposal};
    /// use langevin_core::dense::Blocked;
    /// use langevin_core::models::{Rbm, RbmBatch};
    /// use langevin_core::StepReport;
    /// use rand_core::SeedableRng;
    ///
    /// let (w, wt) = ([0.5f32, -0.5], [0.5f32, -0.5]); // H = 1, V = 2
    /// let (b, c) = ([0.1f32, 0.2], [0.0f32]);
    /// let mut one = [0.0f64; 2];
    /// let rbm = Rbm::new(&w, &b, &c, &mut one).unwrap().with_transpose(&wt).unwrap();
    /// let (n, d) = (3, 2);
    /// let (mut cache, mut sigma) = (vec![0.0; 2 * n], vec![0.0f32; n]);
    /// let mut target = RbmBatch::<Blocked>::new(&rbm, n, &mut cache, &mut sigma, Blocked).unwrap();
    /// let (mut x, mut y) = (vec![0u8; n * d], vec![0u8; n * d]);
    /// let (mut g, mut gy) = (vec![0.0f32; n * d], vec![0.0f32; n * d]);
    /// let (mut u, mut uy, mut lq, mut lu) = (vec![0.0; n], vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    /// let (mut changed, mut counts, mut jumps) = (vec![0u32; n * d], vec![0u32; n], vec![0u64; n]);
    /// let buffers = BatchBuffers {
    ///     x: &mut x, grad: &mut g, log_density: &mut u, x_proposal: &mut y,
    ///     grad_proposal: &mut gy, log_density_proposal: &mut uy, changed: &mut changed,
    ///     counts: &mut counts, log_q: &mut lq, log_u: &mut lu, jumps: &mut jumps,
    /// };
    /// let mut batch = ChainBatch::new(buffers, &mut target).unwrap();
    /// let kernel = BatchDmala::new(FlipProposal::new(0.5, 0.5).unwrap());
    /// let mut rngs: Vec<_> = (0..n as u64).map(rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64).collect();
    /// let mut reports = vec![StepReport::default(); n];
    /// for _ in 0..20 {
    ///     kernel.step(&mut target, &mut batch, &mut rngs, &mut reports).unwrap();
    /// }
    /// assert!(batch.state(2).iter().all(|&v| v <= 1));
    /// ```
    pub fn new<N: FlipMath>(
        rbm: &Rbm<'a, N>,
        chains: usize,
        cache: &'a mut [f64],
        sigma: &'a mut [f32],
        product: P,
    ) -> Result<Self, ParamError> {
        let nh = chains.saturating_mul(rbm.hidden_units());
        let (current, proposal) = split_cache(cache, nh)?;
        Self::with_hidden(
            rbm,
            chains,
            Hidden::Incremental { current, proposal },
            sigma,
            product,
        )
    }

    /// Like [`new`](Self::new), the pre-activations recomputed in `f32` by the product at
    /// every evaluation: `work` holds `chains·(V + H)` floats (the states as `f32`, then the
    /// pre-activations), and there is no `f64` cache.
    ///
    /// # Errors
    ///
    /// As for [`new`](Self::new).
    pub fn recomputed<N: FlipMath>(
        rbm: &Rbm<'a, N>,
        chains: usize,
        work: &'a mut [f32],
        sigma: &'a mut [f32],
        product: P,
    ) -> Result<Self, ParamError> {
        let (_, b, c) = rbm.parameters();
        let nv = chains.saturating_mul(b.len());
        let nh = chains.saturating_mul(c.len());
        LenError::check("work", nv.saturating_add(nh), work.len())?;
        let (x, pre) = work.split_at_mut(nv);
        Self::with_hidden(rbm, chains, Hidden::Recomputed { x, pre }, sigma, product)
    }

    /// Like [`new`](Self::new), the pre-activations cached and updated in `f32`: `cache` holds
    /// `(V + 2·chains)·⌈H/64⌉·64 + 16` floats (a copy of `Wᵀ` in tiles of 64 hidden units
    /// starting on a 64-byte boundary, then the current pre-activations of every chain, then the
    /// proposed ones, tile by tile), `index` `(chains + 2)·V` integers (the moved units of every
    /// chain, bucketed by unit and sign).
    /// [`incremental_f32_lengths`](RbmBatch::incremental_f32_lengths) gives both lengths.
    ///
    /// # Errors
    ///
    /// As for [`new`](Self::new).
    pub fn incremental_f32<N: FlipMath>(
        rbm: &Rbm<'a, N>,
        chains: usize,
        cache: &'a mut [f32],
        index: &'a mut [u32],
        sigma: &'a mut [f32],
        product: P,
    ) -> Result<Self, ParamError> {
        let nh = chains.saturating_mul(rbm.hidden_units().div_ceil(TILE) * TILE);
        let v = rbm.parameters().1.len();
        let packed_len = packed_len(v, rbm.hidden_units());
        let (cache_len, index_len) =
            RbmBatch::incremental_f32_lengths(v, rbm.hidden_units(), chains);
        LenError::check("cache", cache_len, cache.len())?;
        LenError::check("index", index_len, index.len())?;
        // The first float on a 64-byte boundary (0 if the platform cannot say).
        let skip = match cache.as_ptr().align_offset(64) {
            k if k < ALIGN_SLACK => k,
            _ => 0,
        };
        let cache = cache.get_mut(skip..).unwrap_or(&mut []);
        let (packed, cache) = cache.split_at_mut(packed_len.min(cache.len()));
        if let Some(wt) = rbm.transpose() {
            pack(wt, rbm.hidden_units(), v, packed);
        }
        let (current, proposal) = cache.split_at_mut(nh.min(cache.len()));
        Self::with_hidden(
            rbm,
            chains,
            Hidden::Single {
                packed,
                current,
                proposal,
                index,
                age: 0,
            },
            sigma,
            product,
        )
    }

    /// How many evaluations of proposals an [`incremental_f32`](Self::incremental_f32) batch
    /// makes between recomputations of its current pre-activations.
    pub const REFRESH: u32 = 32;

    fn with_hidden<N: FlipMath>(
        rbm: &Rbm<'a, N>,
        chains: usize,
        hidden: Hidden<'a>,
        sigma: &'a mut [f32],
        product: P,
    ) -> Result<Self, ParamError> {
        let (w, b, c) = rbm.parameters();
        let wt = rbm.transpose().ok_or(ParamError::Unsupported(
            "a batched RBM needs the transpose of W (Rbm::with_transpose)",
        ))?;
        let chains = BatchShape::new(chains, b.len())?.chains;
        LenError::check("sigma", chains.saturating_mul(c.len()), sigma.len())?;
        Ok(Self {
            w,
            wt,
            b,
            c,
            hidden,
            sigma,
            chains,
            product,
            math: core::marker::PhantomData,
        })
    }

    /// The pre-activations of every chain's proposal, recomputed: `X' · Wᵀ + 1·cᵀ` in `f32`.
    fn recompute(&mut self, to: &[u8]) -> Result<(), LenError> {
        let (v, h) = (self.b.len(), self.c.len());
        let Hidden::Recomputed { x, pre } = &mut self.hidden else {
            return Ok(());
        };
        for (xf, &xi) in x.iter_mut().zip(to) {
            *xf = f32::from(xi);
        }
        for p in pre.chunks_exact_mut(h.max(1)) {
            p.copy_from_slice(self.c);
        }
        let shape = Shape {
            m: self.chains,
            k: v,
            n: h,
        };
        self.product.matmul_acc(shape, x, self.wt, pre)
    }

    /// From the pre-activations `pre` (`n·H`): `U` of every chain at `x` into `log_density`,
    /// and `∇U` into `grad` (`n·V`). The hidden terms are evaluated [`LANES`] at a time and
    /// added to `U` in order.
    fn finish<T: Copy + Into<f64> + Default>(
        &mut self,
        x: &[u8],
        pre: &[T],
        grad: &mut [f32],
        log_density: &mut [f64],
    ) -> Result<(), LenError> {
        let (v, h) = (self.b.len(), self.c.len());
        for (c, (x, u)) in x.chunks_exact(v).zip(log_density.iter_mut()).enumerate() {
            let mut total: f64 = x
                .iter()
                .zip(self.b)
                .map(|(&xi, &bi)| f64::from(xi) * f64::from(bi))
                .sum();
            let sigma = self.sigma.get_mut(c * h..(c + 1) * h).unwrap_or(&mut []);
            let pre = pre.get(c * h..(c + 1) * h).unwrap_or(&[]);
            for (s, p) in sigma.chunks_mut(LANES).zip(pre.chunks(LANES)) {
                let mut lanes = [0f64; LANES];
                for (l, &p) in lanes.iter_mut().zip(p) {
                    *l = p.into();
                }
                let mut softplus = [0f32; LANES];
                let mut sig = [0f32; LANES];
                for ((sp, sg), &p) in softplus.iter_mut().zip(sig.iter_mut()).zip(&lanes) {
                    (*sp, *sg) = super::rbm::hidden_terms::<M>(p);
                }
                for &sp in softplus.iter().take(p.len()) {
                    total += f64::from(sp);
                }
                for (s, &sg) in s.iter_mut().zip(&sig) {
                    *s = sg;
                }
            }
            *u = total;
        }
        self.gradients(grad)
    }

    /// `∇U = b + Wᵀ σ` of every chain into `grad` (`n·V`), from the sigmoids `σ` that
    /// [`finish`](Self::finish) or [`finish_lanes`](Self::finish_lanes) left in `sigma`.
    #[inline(always)]
    fn gradients(&mut self, grad: &mut [f32]) -> Result<(), LenError> {
        let (v, h) = (self.b.len(), self.c.len());
        for g in grad.chunks_exact_mut(v.max(1)) {
            g.copy_from_slice(self.b);
        }
        let shape = Shape {
            m: self.chains,
            k: h,
            n: v,
        };
        self.product.matmul_acc(shape, self.sigma, self.w, grad)
    }
}

impl RbmBatch<'static> {
    /// The lengths `(cache, index)` of the buffers of
    /// [`incremental_f32`](RbmBatch::incremental_f32) for `visible` and `hidden` units and
    /// `chains` chains (saturating).
    ///
    /// # Examples
    ///
    /// ```
    /// use langevin_core::models::RbmBatch;
    /// assert_eq!(
    ///     RbmBatch::incremental_f32_lengths(3, 10, 2),
    ///     ((3 + 4) * 64 + 16, 2 * 3 + 2 * 3)
    /// );
    /// ```
    pub fn incremental_f32_lengths(visible: usize, hidden: usize, chains: usize) -> (usize, usize) {
        let padded = hidden.div_ceil(TILE).saturating_mul(TILE);
        let cache = chains
            .saturating_mul(2)
            .saturating_add(visible)
            .saturating_mul(padded)
            .saturating_add(ALIGN_SLACK);
        (cache, chains.saturating_add(2).saturating_mul(visible))
    }
}

impl<P: Product, M: FlipMath> RbmBatch<'_, P, M> {
    /// From `f32` pre-activations `pre` (tile-major, as [`update_f32`] leaves them): `U` of
    /// every chain at `x` into `log_density` and `∇U` into `grad`, the sums in `f32` lanes
    /// folded into `f64` every [`FOLD`] terms of `b·x` and every [`FOLD_UNITS`] softplus
    /// terms.
    #[inline(always)]
    fn finish_lanes(
        &mut self,
        x: &[u8],
        pre: &[f32],
        grad: &mut [f32],
        log_density: &mut [f64],
    ) -> Result<(), LenError> {
        let (v, h, n) = (self.b.len(), self.c.len(), self.chains);
        for (c, (x, u)) in x
            .chunks_exact(v.max(1))
            .zip(log_density.iter_mut())
            .enumerate()
        {
            let mut total = 0f64;
            for (x_fold, b_fold) in x.chunks(FOLD).zip(self.b.chunks(FOLD)) {
                let mut acc = [0f32; LANES];
                for (xc, bc) in x_fold.chunks(LANES).zip(b_fold.chunks(LANES)) {
                    match (<&[u8; LANES]>::try_from(xc), <&[f32; LANES]>::try_from(bc)) {
                        (Ok(xc), Ok(bc)) => {
                            for ((a, &xi), &bi) in acc.iter_mut().zip(xc).zip(bc) {
                                *a += if xi != 0 { bi } else { 0.0 };
                            }
                        }
                        _ => {
                            for ((a, &xi), &bi) in acc.iter_mut().zip(xc).zip(bc) {
                                *a += if xi != 0 { bi } else { 0.0 };
                            }
                        }
                    }
                }
                total += acc.iter().map(|&a| f64::from(a)).sum::<f64>();
            }
            let sigma = self.sigma.get_mut(c * h..(c + 1) * h).unwrap_or(&mut []);
            for (f, s_fold) in sigma.chunks_mut(FOLD_UNITS).enumerate() {
                let mut acc = [0f32; LANES];
                // A fold lies within one tile.
                let j0 = f * FOLD_UNITS;
                let at = (j0 / TILE * n + c) * TILE + j0 % TILE;
                let p_fold = pre
                    .get(at..)
                    .and_then(|p| p.get(..s_fold.len()))
                    .unwrap_or(&[]);
                // The fold's exponentials, then its logarithms, then the terms (the stages of
                // `exp_neg_abs_each`); padding lanes add nothing.
                let mut p = [0f32; FOLD_UNITS];
                for (d, &s) in p.iter_mut().zip(p_fold) {
                    *d = s;
                }
                let e = exp_neg_abs_each::<M, FOLD_UNITS>(&p);
                let lp = ln_1p_each::<M, FOLD_UNITS>(&e);
                let (mut softplus, mut sig) = ([0f32; FOLD_UNITS], [0f32; FOLD_UNITS]);
                let terms = p.iter().zip(&e).zip(&lp);
                for ((sp, sg), ((&p, &e), &lp)) in softplus.iter_mut().zip(&mut sig).zip(terms) {
                    (*sp, *sg) = super::rbm::hidden_terms_from_exp(p, e, lp);
                }
                let m = p_fold.len();
                for (k, chunk) in softplus.chunks_exact(LANES).enumerate() {
                    for (j, (a, &t)) in acc.iter_mut().zip(chunk).enumerate() {
                        *a += if k * LANES + j < m { t } else { 0.0 };
                    }
                }
                for (s, &sg) in s_fold.iter_mut().zip(&sig).take(m) {
                    *s = sg;
                }
                total += acc.iter().map(|&a| f64::from(a)).sum::<f64>();
            }
            *u = total;
        }
        self.gradients(grad)
    }
}

/// Hidden units whose terms are evaluated together.
const LANES: usize = 8;

/// Hidden units whose `f32` softplus sums are folded into `f64` together.
const FOLD: usize = 8 * LANES;

/// Where a batch's hidden pre-activations come from.
#[derive(Debug)]
enum Hidden<'a> {
    /// Cached in `f64` per chain and updated over the flipped units.
    Incremental {
        current: &'a mut [f64],
        proposal: &'a mut [f64],
    },
    /// Recomputed in `f32` by the product (`x`: the states as `f32`).
    Recomputed {
        x: &'a mut [f32],
        pre: &'a mut [f32],
    },
    /// Cached in `f32` per chain, updated over the flipped units, recomputed from the states
    /// when `age` reaches [`RbmBatch::REFRESH`].
    Single {
        packed: &'a mut [f32],
        current: &'a mut [f32],
        proposal: &'a mut [f32],
        index: &'a mut [u32],
        age: u32,
    },
}

/// The placeholder left in a target while its buffers are taken out for an evaluation: no
/// buffers at all.
impl Default for Hidden<'_> {
    fn default() -> Self {
        Hidden::Recomputed {
            x: &mut [],
            pre: &mut [],
        }
    }
}

/// The error for a flipped unit at or past `v` (reported as a `flipped` buffer of the wrong
/// length).
fn out_of_range(v: usize) -> LenError {
    LenError {
        buffer: "flipped",
        expected: v,
        found: v.saturating_add(1),
    }
}

/// Hidden units of one tile of the `f32` update: a tile's row of `Wᵀ` is four 64-byte lines,
/// held in registers while it is added to the chains that flip its unit, and a tile's sums
/// for 100 chains take 25.6 KB, within the nearest cache.
const TILE: usize = 64;

/// Hidden units whose `f32` softplus lanes are summed before they are folded into `f64`.
const FOLD_UNITS: usize = 32;

// A fold lies within one tile.
const _: () = assert!(TILE.is_multiple_of(FOLD_UNITS) && FOLD_UNITS.is_multiple_of(LANES));

/// Floats of slack in an [`incremental_f32`](RbmBatch::incremental_f32) cache, so that the
/// packed `Wᵀ` can start on a 64-byte boundary (its rows then never straddle cache lines).
const ALIGN_SLACK: usize = 16;

/// Buckets, unit by unit, the chains whose pre-activations the unit's row of `Wᵀ` is added to,
/// then those it is subtracted from. `index` holds `2v` bucket ends, then the entries (`n·v` at
/// most, one chain index each): bucket `2i` lists the chains that add row `i`, bucket `2i + 1`
/// those that subtract it. Bucket `k` ends at entry `end[k]` and starts where bucket `k − 1`
/// ends (bucket 0 at 0); within a bucket the chains are in increasing order. A chain lists a unit
/// at most once, so the two buckets of a unit touch different chains' sums and the order in which
/// they are applied does not change a value. With `flips` = `Some((flipped, counts))` a chain lists its first
/// `counts[c]` flipped units, added when the state moves to 1 there (`states` are the
/// proposals) and subtracted otherwise; with `None`, its active units (`states[c][i] = 1`), all
/// added. Returns `false` if `index` is too short, a chain lists more than `v` units or a unit
/// is out of range.
#[inline(always)]
fn build_buckets(
    index: &mut [u32],
    v: usize,
    n: usize,
    states: &[u8],
    flips: Option<(&[u32], &[u32])>,
) -> bool {
    let Some((ends, entries)) = index.split_at_mut_checked(v.saturating_mul(2)) else {
        return false;
    };
    if entries.len() < n.saturating_mul(v) || v == 0 || n > u32::MAX as usize {
        return false;
    }
    // Count the buckets' sizes (into their ends, for now).
    ends.fill(0);
    for c in 0..n {
        let mut listed = 0usize;
        let ok = walk_units(states, v, flips, c, |i, add| {
            match ends.get_mut(bucket(i, add)) {
                Some(e) if listed < v => {
                    *e += 1;
                    listed += 1;
                    true
                }
                _ => false,
            }
        });
        if !ok {
            return false;
        }
    }
    // Starts, then the entries: each bucket's start advances to its end as it fills.
    let mut next = 0u32;
    for e in ends.iter_mut() {
        (*e, next) = (next, next.saturating_add(*e));
    }
    for c in 0..n {
        walk_units(states, v, flips, c, |i, add| {
            if let Some(e) = ends.get_mut(bucket(i, add))
                && let Some(slot) = entries.get_mut(*e as usize)
            {
                *slot = c as u32;
                *e += 1;
            }
            true
        });
    }
    true
}

/// The bucket of [`build_buckets`] of unit `i`: `2i` if its row is added, `2i + 1` otherwise.
#[inline(always)]
fn bucket(i: usize, add: bool) -> usize {
    i.wrapping_mul(2) | usize::from(!add)
}

/// Visits chain `c`'s listed units (see [`build_buckets`]) in order, with whether each is
/// added, until `visit` returns `false`; returns whether every unit was visited.
#[inline(always)]
fn walk_units(
    states: &[u8],
    v: usize,
    flips: Option<(&[u32], &[u32])>,
    c: usize,
    mut visit: impl FnMut(usize, bool) -> bool,
) -> bool {
    let x = states.get(c * v..(c + 1) * v).unwrap_or(&[]);
    match flips {
        Some((flipped, k)) => {
            let k = k.get(c).copied().unwrap_or(0) as usize;
            let list = flipped.get(c * v..).and_then(|f| f.get(..k)).unwrap_or(&[]);
            list.iter().all(|&i| {
                let i = i as usize;
                visit(i, x.get(i).is_some_and(|&t| t != 0))
            })
        }
        None => x
            .iter()
            .enumerate()
            .filter(|(_, t)| **t != 0)
            .all(|(i, _)| visit(i, true)),
    }
}

/// The length of `Wᵀ` ([`pack`]ed) in tiles of [`TILE`] hidden units: `V·⌈H/TILE⌉·TILE`.
fn packed_len(v: usize, h: usize) -> usize {
    v.saturating_mul(h.div_ceil(TILE)).saturating_mul(TILE)
}

/// Copies `Wᵀ` (`V × H`) into `packed` tile by tile: tile `t` holds, for `i = 0, 1, …`, the
/// hidden units `t·TILE..` of row `i` (zeros past `H`), so that a tile's rows are read in
/// sequence.
fn pack(wt: &[f32], h: usize, v: usize, packed: &mut [f32]) {
    for (t, block) in packed.chunks_exact_mut(TILE * v.max(1)).enumerate() {
        let j0 = t * TILE;
        let w = TILE.min(h.saturating_sub(j0));
        for (i, dst) in block.chunks_exact_mut(TILE).enumerate() {
            dst.fill(0.0);
            if let (Some(dst), Some(src)) = (dst.get_mut(..w), wt.get(i * h + j0..i * h + j0 + w)) {
                dst.copy_from_slice(src);
            }
        }
    }
}

/// `out[c] = base[c] + Σ ±Wᵀ[i]` for every chain `c` of `n` over the units `i` that `index`
/// ([`build_buckets`]) lists for it, summed in unit order, tile by tile of [`TILE`] hidden
/// units (`packed`: `Wᵀ` as [`pack`] lays it out). A tile's rows are read once each and added
/// to the chains in their buckets, whose sums (25.6 KB for 100 chains) stay in the nearest
/// cache. `base` and `out` are tile-major: tile `t` of chain `c` at `(t·n + c)·TILE` (units
/// past `H` are zero); `base` `None`: the bias `c` for every chain.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn update_f32(
    packed: &[f32],
    h: usize,
    v: usize,
    n: usize,
    base: Option<&[f32]>,
    bias: &[f32],
    out: &mut [f32],
    index: &[u32],
) {
    let (ends, entries) = index.split_at(v.saturating_mul(2).min(index.len()));
    let tiles = packed
        .chunks_exact(TILE * v.max(1))
        .zip(out.chunks_exact_mut(TILE * n.max(1)))
        .enumerate();
    for (t, (block, out)) in tiles {
        let j0 = t * TILE;
        match base.and_then(|b| b.get(j0 * n..(j0 + TILE) * n)) {
            Some(b) => out.copy_from_slice(b),
            None => {
                let mut bias_tile = [0f32; TILE];
                let w = TILE.min(h.saturating_sub(j0));
                if let (Some(dst), Some(src)) = (bias_tile.get_mut(..w), bias.get(j0..j0 + w)) {
                    dst.copy_from_slice(src);
                }
                out.chunks_exact_mut(TILE)
                    .for_each(|o| o.copy_from_slice(&bias_tile));
            }
        }
        let mut start = 0;
        for (row, pair) in block.chunks_exact(TILE).zip(ends.chunks_exact(2)) {
            let (split, end) = (pair.first().copied(), pair.get(1).copied());
            let (split, end) = (split.unwrap_or(start), end.unwrap_or(start));
            let added = entries.get(start as usize..split as usize).unwrap_or(&[]);
            add_row::<false>(out, row, added);
            let subtracted = entries.get(split as usize..end as usize).unwrap_or(&[]);
            add_row::<true>(out, row, subtracted);
            start = end;
        }
    }
}

/// Adds the row `row` ([`TILE`] floats) to the sum of each chain in `list` (subtracts it if
/// `SUBTRACT`; a chain past `sums` is skipped). `a − w` is `a + (−w)` bit for bit.
#[inline(always)]
fn add_row<const SUBTRACT: bool>(sums: &mut [f32], row: &[f32], list: &[u32]) {
    // Whole arrays loaded and stored: element-wise access through the two slices is left
    // scalar (the compiler cannot see that they do not overlap).
    let Ok(&row) = <&[f32; TILE]>::try_from(row) else {
        return;
    };
    for &e in list {
        let k = (e as usize).wrapping_mul(TILE);
        if let Some(Ok(s)) = sums
            .get_mut(k..k.wrapping_add(TILE))
            .map(<&mut [f32; TILE]>::try_from)
        {
            let mut a = *s;
            for (a, &w) in a.iter_mut().zip(&row) {
                *a = if SUBTRACT { *a - w } else { *a + w };
            }
            *s = a;
        }
    }
}

impl<P: Product, M: FlipMath> BatchTarget for RbmBatch<'_, P, M> {
    type Error = LenError;

    fn dim(&self) -> usize {
        self.b.len()
    }

    fn chains(&self) -> usize {
        self.chains
    }

    fn log_density_and_grad_all(
        &mut self,
        x: &[u8],
        grad: &mut [f32],
        log_density: &mut [f64],
    ) -> Result<(), LenError> {
        let (v, h) = (self.b.len(), self.c.len());
        self.shape().check(x.len(), grad.len(), log_density.len())?;
        let hidden = core::mem::take(&mut self.hidden);
        match hidden {
            Hidden::Incremental { current, proposal } => {
                for (pre, x) in current.chunks_mut(h.max(1)).zip(x.chunks_exact(v)) {
                    for ((p, row), &cj) in pre.iter_mut().zip(self.w.chunks_exact(v)).zip(self.c) {
                        *p = f64::from(cj)
                            + row
                                .iter()
                                .zip(x)
                                .map(|(&w, &xi)| f64::from(w) * f64::from(xi))
                                .sum::<f64>();
                    }
                }
                let r = self.finish(x, current, grad, log_density);
                self.hidden = Hidden::Incremental { current, proposal };
                r
            }
            recomputed @ Hidden::Recomputed { .. } => {
                self.hidden = recomputed;
                self.evaluate_recomputed(x, grad, log_density)
            }
            Hidden::Single {
                packed,
                current,
                proposal,
                index,
                ..
            } => {
                let r = if build_buckets(index, v, self.chains, x, None) {
                    update_f32(packed, h, v, self.chains, None, self.c, current, index);
                    self.finish_lanes(x, current, grad, log_density)
                } else {
                    Err(out_of_range(v))
                };
                self.hidden = Hidden::Single {
                    packed,
                    current,
                    proposal,
                    index,
                    age: 0,
                };
                r
            }
        }
    }

    #[inline(always)]
    fn log_density_and_grad_after_all(
        &mut self,
        moves: &BatchMoves<'_>,
        grad: &mut [f32],
        log_density: &mut [f64],
    ) -> Result<(), LenError> {
        let (v, h) = (self.b.len(), self.c.len());
        self.shape()
            .check_moves(moves, grad.len(), log_density.len())?;
        let hidden = core::mem::take(&mut self.hidden);
        match hidden {
            Hidden::Incremental { current, proposal } => {
                let rows = proposal
                    .chunks_mut(h.max(1))
                    .zip(current.chunks(h.max(1)))
                    .zip(moves.to.chunks_exact(v))
                    .zip(moves.changed.chunks_exact(v))
                    .zip(moves.counts);
                for ((((pre, current), to), flipped), &k) in rows {
                    pre.copy_from_slice(current);
                    for &i in flipped.get(..k as usize).unwrap_or(&[]) {
                        let i = i as usize;
                        let column = self.wt.get(i * h..(i + 1) * h).unwrap_or(&[]);
                        if to.get(i).is_some_and(|&t| t != 0) {
                            for (p, &w) in pre.iter_mut().zip(column) {
                                *p += f64::from(w);
                            }
                        } else {
                            for (p, &w) in pre.iter_mut().zip(column) {
                                *p -= f64::from(w);
                            }
                        }
                    }
                }
                let r = self.finish(moves.to, proposal, grad, log_density);
                self.hidden = Hidden::Incremental { current, proposal };
                r
            }
            recomputed @ Hidden::Recomputed { .. } => {
                self.hidden = recomputed;
                self.evaluate_recomputed(moves.to, grad, log_density)
            }
            Hidden::Single {
                packed,
                current,
                proposal,
                index,
                age,
            } => {
                let mut ok = true;
                let age = if age >= Self::REFRESH {
                    ok &= build_buckets(index, v, self.chains, moves.from, None);
                    update_f32(packed, h, v, self.chains, None, self.c, current, index);
                    0
                } else {
                    age
                };
                ok &= build_buckets(
                    index,
                    v,
                    self.chains,
                    moves.to,
                    Some((moves.changed, moves.counts)),
                );
                let r = if ok {
                    update_f32(
                        packed,
                        h,
                        v,
                        self.chains,
                        Some(current),
                        self.c,
                        proposal,
                        index,
                    );
                    self.finish_lanes(moves.to, proposal, grad, log_density)
                } else {
                    Err(out_of_range(v))
                };
                self.hidden = Hidden::Single {
                    packed,
                    current,
                    proposal,
                    index,
                    age: age.saturating_add(1),
                };
                r
            }
        }
    }

    fn commit(&mut self, c: usize) {
        let h = self.c.len();
        if let Hidden::Incremental { current, proposal } = &mut self.hidden
            && let (Some(cur), Some(new)) = (
                current.get_mut(c * h..(c + 1) * h),
                proposal.get(c * h..(c + 1) * h),
            )
        {
            cur.copy_from_slice(new);
        }
        let n = self.chains;
        if let Hidden::Single {
            current, proposal, ..
        } = &mut self.hidden
        {
            for (cur, new) in current
                .chunks_exact_mut(TILE * n)
                .zip(proposal.chunks_exact(TILE * n))
            {
                if let (Some(cur), Some(new)) = (
                    cur.get_mut(c * TILE..(c + 1) * TILE),
                    new.get(c * TILE..(c + 1) * TILE),
                ) {
                    cur.copy_from_slice(new);
                }
            }
        }
    }
}

impl<P: Product, M: FlipMath> RbmBatch<'_, P, M> {
    /// `U` and `∇U` at `x` with recomputed pre-activations.
    fn evaluate_recomputed(
        &mut self,
        x: &[u8],
        grad: &mut [f32],
        log_density: &mut [f64],
    ) -> Result<(), LenError> {
        self.recompute(x)?;
        let pre = match &mut self.hidden {
            Hidden::Recomputed { pre, .. } => core::mem::take(pre),
            Hidden::Incremental { .. } | Hidden::Single { .. } => &mut [],
        };
        let r = self.finish(x, pre, grad, log_density);
        if let Hidden::Recomputed { pre: slot, .. } = &mut self.hidden {
            *slot = pre;
        }
        r
    }

    /// The batch's shape, for its length checks.
    fn shape(&self) -> BatchShape {
        BatchShape {
            chains: self.chains,
            dim: self.b.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::StepReport;
    use crate::batch::TestVecs;
    use crate::binary::{BatchDmala, ChainBatch, FlipProposal};
    use crate::models::batch_testing::compare;
    use crate::target::BinaryTarget;
    use rand_core::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;
    use std::vec;
    use std::vec::Vec;

    /// A deterministic RBM with `v` visible and `h` hidden units: `W` (`h × v`), `Wᵀ`, `b`, `c`.
    fn params(v: usize, h: usize) -> (Vec<f32>, Vec<f32>, Vec<f32>, Vec<f32>) {
        super::super::rbm::test_params(v, h, 0.03, 1.0)
    }

    /// The single-chain RBM of `W`, `b`, `c` with `Wᵀ` attached.
    fn transposed<'a>(
        w: &'a [f32],
        wt: &'a [f32],
        b: &'a [f32],
        c: &'a [f32],
        cache: &'a mut [f64],
    ) -> Rbm<'a> {
        Rbm::new(w, b, c, cache)
            .unwrap()
            .with_transpose(wt)
            .unwrap()
    }

    /// Asserts that `U = u` and `∇U = g` at `x` agree with the single-chain RBM of `(W, b, c)`
    /// to within `tol` relative to `1 + |value|`.
    fn assert_close_to_single(
        (w, b, c): (&[f32], &[f32], &[f32]),
        x: &[u8],
        u: f64,
        g: &[f32],
        tol: f64,
    ) {
        let mut cache = vec![0.0; 2 * c.len()];
        let mut single = Rbm::new(w, b, c, &mut cache).unwrap();
        let mut gs = vec![0.0f32; b.len()];
        let us = single.log_density_and_grad(x, &mut gs).unwrap();
        assert!((u - us).abs() < tol * (1.0 + us.abs()), "{u} vs {us}");
        for (a, e) in g.iter().zip(&gs) {
            assert!((a - e).abs() < tol as f32 * (1.0 + e.abs()), "{a} vs {e}");
        }
    }

    /// Batched DMALA with the portable product moves every chain exactly as single-chain DMALA
    /// on [`Rbm`] does: the same states, `U` and `∇U`, bit for bit (`H = 13` leaves short tiles).
    #[test]
    fn batched_steps_equal_single_chain_steps() {
        let (v, h, n) = (23, 13, 6);
        let (w, wt, b, c) = params(v, h);
        let mut caches = vec![vec![0.0; 2 * h]; n];
        let mut singles: Vec<Rbm<'_>> = caches
            .iter_mut()
            .map(|cache| Rbm::new(&w, &b, &c, cache).unwrap())
            .collect();
        let mut one = vec![0.0; 2 * h];
        let rbm = transposed(&w, &wt, &b, &c, &mut one);
        let (mut cache, mut sigma) = (vec![0.0; 2 * n * h], vec![0.0f32; n * h]);
        let mut target =
            RbmBatch::<Blocked>::new(&rbm, n, &mut cache, &mut sigma, Blocked).unwrap();
        let accepted = compare(&mut singles, &mut target, 0.6, 50, true);
        assert!(accepted > 20, "the test must see moves: {accepted}");
    }

    /// The recomputed (`f32`) pre-activations give `U` and `∇U` close to [`Rbm`]'s, at fresh
    /// states and after moves.
    #[test]
    fn recomputed_values_are_close_to_the_single_chain_ones() {
        let (v, h, n) = (23, 13, 3);
        let (w, wt, b, c) = params(v, h);
        let mut one = vec![0.0; 2 * h];
        let rbm = transposed(&w, &wt, &b, &c, &mut one);
        let (mut work, mut sigma) = (vec![0.0f32; n * (v + h)], vec![0.0f32; n * h]);
        let mut batch =
            RbmBatch::<Blocked>::recomputed(&rbm, n, &mut work, &mut sigma, Blocked).unwrap();
        let x: Vec<u8> = (0..n * v).map(|i| u8::from(i % 3 == 1)).collect();
        let (mut g, mut u) = (vec![0.0f32; n * v], vec![0.0; n]);
        batch.log_density_and_grad_all(&x, &mut g, &mut u).unwrap();
        for k in 0..n {
            let (x, g) = (&x[k * v..(k + 1) * v], &g[k * v..(k + 1) * v]);
            assert_close_to_single((&w, &b, &c), x, u[k], g, 1e-5);
        }
    }

    /// The `f32` incremental pre-activations: batched DMALA over more than
    /// [`RbmBatch::REFRESH`] steps (moves, refreshes, chains that flip nothing) keeps `U` and
    /// `∇U` of every chain close to [`Rbm`]'s at its state.
    #[test]
    fn incremental_f32_values_stay_close_to_the_single_chain_ones() {
        let (v, h, n) = (23, 45, 5);
        let (w, wt, b, c) = params(v, h);
        let mut one = vec![0.0; 2 * h];
        let rbm = transposed(&w, &wt, &b, &c, &mut one);
        let (mut cache, mut sigma) = (
            vec![0.0f32; RbmBatch::incremental_f32_lengths(v, h, n).0],
            vec![0.0f32; n * h],
        );
        let mut index = vec![0u32; RbmBatch::incremental_f32_lengths(v, h, n).1];
        let mut target = RbmBatch::<Blocked>::incremental_f32(
            &rbm, n, &mut cache, &mut index, &mut sigma, Blocked,
        )
        .unwrap();
        let x: Vec<u8> = (0..n * v).map(|i| u8::from(i % 3 == 1)).collect();
        let mut vecs = TestVecs::new(x, v);
        let mut batch = ChainBatch::new(vecs.buffers(), &mut target).unwrap();
        let mut rngs: Vec<_> = (0..n as u64)
            .map(Xoshiro256PlusPlus::seed_from_u64)
            .collect();
        let mut reports = vec![StepReport::default(); n];
        let kernel = BatchDmala::new(FlipProposal::new(0.6, 0.5).unwrap());
        let mut moves = 0;
        for _ in 0..3 * RbmBatch::<Blocked>::REFRESH + 5 {
            kernel
                .step(&mut target, &mut batch, &mut rngs, &mut reports)
                .unwrap();
            moves += reports
                .iter()
                .filter(|r| r.accepted && r.proposed_flips > 0)
                .count();
            for k in 0..n {
                let (x, u, g) = (batch.state(k), batch.log_density(k), batch.grad(k));
                assert_close_to_single((&w, &b, &c), x, u, g, 1e-4);
            }
        }
        assert!(moves > 50, "the test must see moves: {moves}");
    }

    /// The bucketed `f32` update equals, bit for bit, each chain's sum of its signed rows in
    /// unit order, for flips and for a recomputation from the states.
    #[test]
    fn bucketed_update_sums_each_chain_in_unit_order() {
        let (v, h, n) = (37, 21, 6);
        let (_, wt, _, c) = params(v, h);
        let padded = h.div_ceil(TILE) * TILE;
        let mut packed = vec![0.0f32; packed_len(v, h)];
        pack(&wt, h, v, &mut packed);
        let (cache_len, index_len) = RbmBatch::incremental_f32_lengths(v, h, n);
        let mut index = vec![0u32; index_len];
        assert!(cache_len >= (v + 2 * n) * padded);
        // Chain k flips every unit i with (i·(k + 2)) mod 5 < k (none for chain 0), in
        // increasing order, to the states `to`.
        let to: Vec<u8> = (0..n * v).map(|i| u8::from((i * 7) % 3 == 0)).collect();
        let mut flipped = vec![0u32; n * v];
        let mut counts = vec![0u32; n];
        for k in 0..n {
            for i in (0..v).filter(|i| (i * (k + 2)) % 5 < k) {
                flipped[k * v + counts[k] as usize] = i as u32;
                counts[k] += 1;
            }
        }
        let base: Vec<f32> = (0..n * padded).map(|i| (i as f32 * 0.37).sin()).collect();
        let reference = |k: usize, j: usize, start: f32, list: &[u32]| {
            list.iter().fold(start, |a, &i| {
                let w = wt[i as usize * h + j];
                if to[k * v + i as usize] != 0 {
                    a + w
                } else {
                    a - w
                }
            })
        };
        assert!(build_buckets(
            &mut index,
            v,
            n,
            &to,
            Some((&flipped, &counts))
        ));
        let mut out = vec![0.0f32; n * padded];
        update_f32(&packed, h, v, n, Some(&base), &c, &mut out, &index);
        for k in 0..n {
            let list = &flipped[k * v..k * v + counts[k] as usize];
            for j in 0..h {
                let at = (j / TILE * n + k) * TILE + j % TILE;
                let expected = reference(k, j, base[at], list);
                assert_eq!(out[at].to_bits(), expected.to_bits(), "chain {k}, unit {j}");
            }
        }
        // From the states: every active unit added to the bias.
        assert!(build_buckets(&mut index, v, n, &to, None));
        update_f32(&packed, h, v, n, None, &c, &mut out, &index);
        for k in 0..n {
            let active: Vec<u32> = (0..v as u32)
                .filter(|&i| to[k * v + i as usize] != 0)
                .collect();
            for (j, &cj) in c.iter().enumerate() {
                let at = (j / TILE * n + k) * TILE + j % TILE;
                assert_eq!(out[at].to_bits(), reference(k, j, cj, &active).to_bits());
            }
        }
        // A unit out of range, a chain listing more than `v` units or a short index is refused.
        let first = flipped[v];
        flipped[v] = v as u32;
        assert!(!build_buckets(
            &mut index,
            v,
            n,
            &to,
            Some((&flipped, &counts))
        ));
        flipped[v] = first;
        counts[1] = v as u32 + 1;
        assert!(!build_buckets(
            &mut index,
            v,
            n,
            &to,
            Some((&flipped, &counts))
        ));
        assert!(!build_buckets(&mut index[..index_len - 1], v, n, &to, None));
    }

    #[test]
    fn refuses_a_missing_transpose_and_bad_buffers() {
        let (w, b, c) = ([0.5f32, -0.5], [0.1f32, 0.2], [0.0f32]);
        let mut one = [0.0; 2];
        let rbm = Rbm::new(&w, &b, &c, &mut one).unwrap();
        let (mut cache, mut sigma) = (vec![0.0; 4], vec![0.0f32; 2]);
        assert!(matches!(
            RbmBatch::<Blocked>::new(&rbm, 2, &mut cache, &mut sigma, Blocked),
            Err(ParamError::Unsupported(_))
        ));
        let mut one = [0.0; 2];
        let rbm = Rbm::new(&w, &b, &c, &mut one)
            .unwrap()
            .with_transpose(&w)
            .unwrap();
        assert!(matches!(
            RbmBatch::<Blocked>::new(&rbm, 2, &mut cache[..3], &mut sigma, Blocked),
            Err(ParamError::Len(_))
        ));
        assert!(matches!(
            RbmBatch::<Blocked>::new(&rbm, 0, &mut [], &mut [], Blocked),
            Err(ParamError::OutOfRange { .. })
        ));
    }
}
