//! The restricted Boltzmann machine with hidden units summed out.

use super::Cache;
use super::weight::Weight;
use crate::error::{LenError, ParamError};
use crate::math::{FlipMath, FlipOdds, Libm};
use crate::target::{BinaryTarget, FlipMove};
use core::convert::Infallible;

/// A binary RBM over visible units `x ∈ {0,1}^V` with `H` hidden units summed out:
///
/// `U(x) = Σ_j softplus((W x + c)_j) + bᵀx`, `∇U(x) = Wᵀ sigmoid(W x + c) + b`,
///
/// with `W` (`H × V`, row-major), `b` (`V`) and `c` (`H`) borrowed from the caller. `W` is
/// stored as `E`: `f32`, or [`Bf16`](super::Bf16) for half the bytes (the model is then the RBM
/// whose weights are the `bf16` values, evaluated exactly as an `f32` RBM with those weights,
/// bit for bit; see [`from_weights`](Self::from_weights)). The hidden
/// pre-activations `W x + c` are cached in `f64` in a caller buffer of `2H` doubles (current and
/// proposed): a move adds the flipped columns of `W`, and the exact `f64` sums keep the cache a
/// function of the state. `softplus` and `sigmoid` are evaluated in `f32` through `M` and summed
/// in `f64`.
///
/// An evaluation reads `W` once, eight rows at a time (their pre-activations, then their share of
/// the gradient in one pass over the coordinates), so its cost is one stream of `W` through the
/// cache. A move picks the flipped columns' entries out of those rows; with
/// [`with_transpose`](Self::with_transpose) it reads them as contiguous rows of `Wᵀ` instead.
///
/// # Examples
///
/// ```
/// use langevin_core::models::Rbm;
/// use langevin_core::BinaryTarget;
/// let (w, b, c) = ([0.5f32, -0.5], [0.1f32, 0.2], [0.0f32]);
/// let mut cache = [0.0f64; 2];
/// let mut rbm = Rbm::new(&w, &b, &c, &mut cache).unwrap();
/// let mut g = [0.0f32; 2];
/// let u = rbm.log_density_and_grad(&[1, 0], &mut g).unwrap();
/// assert!((u - (0.1 + (1.0f64 + 0.5f64.exp()).ln())).abs() < 1e-6);
/// ```
#[derive(Debug)]
pub struct Rbm<'a, M: FlipMath = Libm, E: Weight = f32> {
    w: &'a [E],
    /// `Wᵀ` (`V × H`, row-major), if attached.
    wt: Option<&'a [E]>,
    b: &'a [f32],
    c: &'a [f32],
    /// The hidden pre-activations `W x + c`.
    hidden: Cache<'a>,
    math: core::marker::PhantomData<M>,
}

impl<'a> Rbm<'a, Libm> {
    /// Wraps `W` (`H·V` entries), `b` (`V`), `c` (`H`) and a cache of `2H` doubles.
    ///
    /// # Errors
    ///
    /// [`ParamError::EmptyDimension`] for `V = 0`, [`ParamError::Len`] for mismatched lengths,
    /// [`ParamError::NonFinite`] for a non-finite parameter.
    pub fn new(
        w: &'a [f32],
        b: &'a [f32],
        c: &'a [f32],
        cache: &'a mut [f64],
    ) -> Result<Self, ParamError> {
        Self::with_math(w, b, c, cache)
    }
}

impl<'a, M: FlipMath> Rbm<'a, M> {
    /// Like [`Rbm::new`], choosing how `softplus` and `sigmoid` are evaluated.
    ///
    /// # Errors
    ///
    /// As for [`Rbm::new`].
    pub fn with_math(
        w: &'a [f32],
        b: &'a [f32],
        c: &'a [f32],
        cache: &'a mut [f64],
    ) -> Result<Self, ParamError> {
        Self::from_weights(w, b, c, cache)
    }

    /// The parameters `(W, b, c)` (`W` is `H × V`, row-major), for samplers of the joint over
    /// visible and hidden units.
    pub fn parameters(&self) -> (&'a [f32], &'a [f32], &'a [f32]) {
        (self.w, self.b, self.c)
    }

    /// `Wᵀ`, if attached with [`with_transpose`](Self::with_transpose).
    pub fn transpose(&self) -> Option<&'a [f32]> {
        self.wt
    }
}

impl<'a, M: FlipMath, E: Weight> Rbm<'a, M, E> {
    /// Like [`Rbm::with_math`], with `W` stored as `E` (`f32` or [`Bf16`](super::Bf16)): the
    /// model is the RBM whose weights are the stored values widened to `f32`, and every value
    /// (`U`, `∇U`, the cached pre-activations) equals that `f32` model's bit for bit, while a
    /// step reads half the bytes of `W` with `bf16`.
    ///
    /// # Errors
    ///
    /// As for [`Rbm::new`] (a weight is non-finite if its widened value is).
    ///
    /// # Examples
    ///
    /// ```
    /// use langevin_core::BinaryTarget;
    /// use langevin_core::math::Libm;
    /// use langevin_core::models::{Bf16, Rbm};
    /// let w32 = [0.1f32, -0.3, 0.7, 0.25];
    /// let w16 = w32.map(Bf16::from_f32);
    /// let rounded = w16.map(|w| w.to_f32());
    /// let (b, c) = ([0.1f32, 0.2], [0.0f32, -0.5]);
    /// let (mut c16, mut c32) = ([0.0f64; 4], [0.0f64; 4]);
    /// let mut half = Rbm::<Libm, Bf16>::from_weights(&w16, &b, &c, &mut c16).unwrap();
    /// let mut full = Rbm::new(&rounded, &b, &c, &mut c32).unwrap();
    /// let (mut g16, mut g32) = ([0.0f32; 2], [0.0f32; 2]);
    /// let u16 = half.log_density_and_grad(&[1, 1], &mut g16).unwrap();
    /// let u32 = full.log_density_and_grad(&[1, 1], &mut g32).unwrap();
    /// assert_eq!((u16.to_bits(), g16), (u32.to_bits(), g32));
    /// ```
    pub fn from_weights(
        w: &'a [E],
        b: &'a [f32],
        c: &'a [f32],
        cache: &'a mut [f64],
    ) -> Result<Self, ParamError> {
        let (v, h) = (b.len(), c.len());
        if v == 0 {
            return Err(ParamError::EmptyDimension);
        }
        let n = h.checked_mul(v).ok_or(ParamError::OutOfRange {
            name: "hidden * visible",
            value: h as f64 * v as f64,
        })?;
        LenError::check("W", n, w.len())?;
        let hidden = Cache::new(cache, h)?;
        if w.iter().any(|v| !v.to_f32().is_finite()) {
            return Err(ParamError::NonFinite("W"));
        }
        for (name, s) in [("b", b), ("c", c)] {
            if s.iter().any(|v| !v.is_finite()) {
                return Err(ParamError::NonFinite(name));
            }
        }
        Ok(Self {
            w,
            wt: None,
            b,
            c,
            hidden,
            math: core::marker::PhantomData,
        })
    }

    /// Number of hidden units `H`.
    pub fn hidden_units(&self) -> usize {
        self.c.len()
    }

    /// The weights `W` as stored (`H × V`, row-major).
    pub fn weights(&self) -> &'a [E] {
        self.w
    }

    /// Attaches `Wᵀ` (`V × H`, row-major: `wt[i·H + j] = W[j·V + i]`), a copy of `W` laid out
    /// by visible unit. A move then updates the hidden pre-activations from the flipped units'
    /// contiguous rows of `Wᵀ` instead of picking one entry out of every row of `W`: the same
    /// sums (the same values, bit for bit), much faster when many units flip, for `4·H·V`
    /// more bytes of memory.
    ///
    /// # Errors
    ///
    /// [`ParamError::Len`] if `wt` does not have `H·V` entries; [`ParamError::OutOfRange`]
    /// (named `"Wt"`, with the offending index) if it is not the transpose of `W`.
    ///
    /// # Examples
    ///
    /// ```
    /// use langevin_core::models::Rbm;
    /// // W is 2 × 3; Wᵀ is 3 × 2.
    /// let w = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
    /// let wt = [1.0f32, 4.0, 2.0, 5.0, 3.0, 6.0];
    /// let (b, c) = ([0.0f32; 3], [0.0f32; 2]);
    /// let mut cache = [0.0f64; 4];
    /// assert!(Rbm::new(&w, &b, &c, &mut cache).unwrap().with_transpose(&wt).is_ok());
    /// ```
    pub fn with_transpose(mut self, wt: &'a [E]) -> Result<Self, ParamError> {
        let (v, h) = (self.b.len(), self.c.len());
        LenError::check("Wt", self.w.len(), wt.len())?;
        if h > 0 {
            for (i, column) in wt.chunks_exact(h).enumerate() {
                let w_column = self.w.get(i..).unwrap_or(&[]).iter().step_by(v.max(1));
                if let Some(j) = column.iter().zip(w_column).position(|(a, b)| a != b) {
                    return Err(ParamError::OutOfRange {
                        name: "Wt",
                        value: (i * h + j) as f64,
                    });
                }
            }
        }
        self.wt = Some(wt);
        Ok(self)
    }

    /// `U` and `∇U` at `x`. `W` is read once, [`ROWS`] rows at a time: `pre_block(j, rows, pre)`
    /// writes the pre-activations of the hidden units `j..` whose rows are `rows` into `pre`
    /// (a block of `pre_out`), then the rows' contributions to the gradient are added in one
    /// pass over the coordinates. Every sum is formed in the same order as a row-by-row
    /// evaluation.
    #[inline(always)]
    fn evaluate(
        &self,
        x: &[u8],
        grad: &mut [f32],
        pre_out: &mut [f64],
        mut pre_block: impl FnMut(usize, &[E], &mut [f64]),
    ) -> f64 {
        let v = self.b.len();
        for (g, &b) in grad.iter_mut().zip(self.b) {
            *g = b;
        }
        let mut u: f64 = x
            .iter()
            .zip(self.b)
            .map(|(&xi, &bi)| f64::from(xi) * f64::from(bi))
            .sum();
        for (k, (pre, rows)) in pre_out
            .chunks_mut(ROWS)
            .zip(self.w.chunks((ROWS * v).max(1)))
            .enumerate()
        {
            pre_block(k * ROWS, rows, pre);
            // The block's terms lane by lane (so that they vectorise), then summed in order.
            let mut p = [0f64; ROWS];
            for (a, &b) in p.iter_mut().zip(pre.iter()) {
                *a = b;
            }
            let mut softplus = [0f32; ROWS];
            let mut sigma = [0f32; ROWS];
            for ((sp, s), &p) in softplus.iter_mut().zip(sigma.iter_mut()).zip(&p) {
                (*sp, *s) = hidden_terms::<M>(p);
            }
            for &sp in softplus.iter().take(pre.len()) {
                u += f64::from(sp);
            }
            // Padding lanes of a short block add nothing to the gradient.
            for s in sigma.iter_mut().skip(pre.len()) {
                *s = 0.0;
            }
            accumulate_rows(grad, rows, &sigma, v);
        }
        u
    }
}

/// Adds `(x'_i − x_i) · W_ji` to the pre-activation `pre[r]` of each row `r` of `rows` (of
/// length `v`) for every flipped `i`, in flip order: the sums of a column-by-column update,
/// read from the rows (which the gradient pass streams next) with one chain per row.
/// `softplus(p)` and `sigmoid(p)` in `f32` through `M`, from one `exp` (shared with
/// [`RbmBatch`](super::RbmBatch), whose values must equal these bit for bit).
#[inline(always)]
pub(super) fn hidden_terms<M: FlipMath>(p: f64) -> (f32, f32) {
    hidden_terms_f32::<M>(p as f32)
}

/// [`hidden_terms`] of a pre-activation already in `f32`.
#[inline(always)]
pub(super) fn hidden_terms_f32<M: FlipMath>(p: f32) -> (f32, f32) {
    let e = M::exp(-p.abs());
    hidden_terms_from_exp(p, e, M::ln_1p(e))
}

/// [`hidden_terms_f32`] from `e = e^{−|p|}` and `lp = ln(1 + e)`, through the flip odds of
/// logit `p`: `sigmoid(p)` is their `p_flip` and `softplus(p)` is `−ln_stay`, bit for bit.
#[inline(always)]
pub(super) fn hidden_terms_from_exp(p: f32, e: f32, lp: f32) -> (f32, f32) {
    let odds = FlipOdds::from_exp(p, e, lp);
    (-odds.ln_stay, odds.p_flip)
}

#[inline(always)]
fn add_flipped_columns<E: Weight>(pre: &mut [f64], rows: &[E], v: usize, mv: &FlipMove<'_>) {
    if let (Some(rows), Ok(acc)) = (block(rows, v), <&mut [f64; ROWS]>::try_from(&mut *pre)) {
        let mut h = *acc;
        for &i in mv.flipped {
            let i = i as usize;
            // The move flips i, so x'_i − x_i is +1 when x'_i = 1 and −1 otherwise; ±w is
            // exact, and h − w is h + (−w).
            let up = mv.to.get(i).is_some_and(|&t| t != 0);
            for (hr, row) in h.iter_mut().zip(&rows) {
                let w = f64::from(row.get(i).map_or(0.0, |w| w.to_f32()));
                *hr = if up { *hr + w } else { *hr - w };
            }
        }
        *acc = h;
    } else {
        for (p, row) in pre.iter_mut().zip(rows.chunks_exact(v.max(1))) {
            for &i in mv.flipped {
                let i = i as usize;
                let up = mv.to.get(i).is_some_and(|&t| t != 0);
                let w = f64::from(row.get(i).map_or(0.0, |w| w.to_f32()));
                *p = if up { *p + w } else { *p - w };
            }
        }
    }
}

/// Flips whose rows of `Wᵀ` are added to the pre-activations in one pass.
const FLIP_GROUP: usize = 8;

/// `pre = current + Σ ±(row i of Wᵀ)` over the flipped `i`, each coordinate summed in flip
/// order (`+` when `x'_i = 1`, `−` otherwise), as one pass per flip would. The flips are taken
/// [`FLIP_GROUP`] at a time: one pass over `pre` adds a group's rows to each coordinate in
/// order, so `pre` is loaded and stored once per group rather than once per flip. A sign is
/// applied to the `f32` weight before widening (`a + (−w)` is `a − w` bit for bit).
#[inline(always)]
fn add_transposed_rows<E: Weight>(pre: &mut [f64], current: &[f64], wt: &[E], mv: &FlipMove<'_>) {
    let h = current.len();
    for (p, &c) in pre.iter_mut().zip(current) {
        *p = c;
    }
    // The sign bit to apply to flip `i`'s weights, and its row (empty if out of range).
    let signed_row = move |i: u32| {
        let i = i as usize;
        let up = mv.to.get(i).is_some_and(|&t| t != 0);
        let row = i
            .checked_mul(h)
            .and_then(|start| wt.get(start..start.checked_add(h)?))
            .unwrap_or(&[]);
        (if up { 0u32 } else { 0x8000_0000 }, row)
    };
    let widen = |w: E, sign: u32| f64::from(f32::from_bits(w.to_f32().to_bits() ^ sign));
    let mut groups = mv.flipped.chunks_exact(FLIP_GROUP);
    for group in &mut groups {
        let Ok(&[i0, i1, i2, i3, i4, i5, i6, i7]) = <&[u32; FLIP_GROUP]>::try_from(group) else {
            add_rows_one_by_one(pre, group, signed_row, widen);
            continue;
        };
        // Called one by one (an array `map` here stays out of line).
        let ((s0, r0), (s1, r1), (s2, r2), (s3, r3)) = (
            signed_row(i0),
            signed_row(i1),
            signed_row(i2),
            signed_row(i3),
        );
        let ((s4, r4), (s5, r5), (s6, r6), (s7, r7)) = (
            signed_row(i4),
            signed_row(i5),
            signed_row(i6),
            signed_row(i7),
        );
        let rows = [r0, r1, r2, r3, r4, r5, r6, r7];
        if rows.iter().all(|r| r.len() == h) {
            for (p, [w0, w1, w2, w3, w4, w5, w6, w7]) in pre.iter_mut().zip(columns(rows)) {
                let mut a = *p;
                a += widen(w0, s0);
                a += widen(w1, s1);
                a += widen(w2, s2);
                a += widen(w3, s3);
                a += widen(w4, s4);
                a += widen(w5, s5);
                a += widen(w6, s6);
                a += widen(w7, s7);
                *p = a;
            }
        } else {
            add_rows_one_by_one(pre, group, signed_row, widen);
        }
    }
    add_rows_one_by_one(pre, groups.remainder(), signed_row, widen);
}

/// One pass over `pre` per flip (an empty row, for an index out of range, adds nothing).
#[inline(always)]
fn add_rows_one_by_one<'w, E: Weight + 'w>(
    pre: &mut [f64],
    flipped: &[u32],
    signed_row: impl Fn(u32) -> (u32, &'w [E]),
    widen: impl Fn(E, u32) -> f64,
) {
    for &i in flipped {
        let (sign, row) = signed_row(i);
        for (p, &w) in pre.iter_mut().zip(row) {
            *p += widen(w, sign);
        }
    }
}

/// Hidden units whose rows of `W` are read together.
const ROWS: usize = 8;

/// The [`ROWS`] rows of length `v` that make up a full block `rows`, or `None` for a short one.
#[inline(always)]
fn block<E>(rows: &[E], v: usize) -> Option<[&[E]; ROWS]> {
    let mut it = rows.chunks_exact(v.max(1));
    match (
        it.next(),
        it.next(),
        it.next(),
        it.next(),
        it.next(),
        it.next(),
        it.next(),
        it.next(),
    ) {
        (Some(r0), Some(r1), Some(r2), Some(r3), Some(r4), Some(r5), Some(r6), Some(r7)) => {
            Some([r0, r1, r2, r3, r4, r5, r6, r7])
        }
        _ => None,
    }
}

/// The entries of eight rows coordinate by coordinate (as far as the shortest row goes): one
/// pass over the rows together.
#[inline(always)]
fn columns<E: Copy>(rows: [&[E]; ROWS]) -> impl Iterator<Item = [E; ROWS]> + '_ {
    let [r0, r1, r2, r3, r4, r5, r6, r7] = rows;
    r0.iter()
        .zip(r1)
        .zip(r2)
        .zip(r3)
        .zip(r4)
        .zip(r5)
        .zip(r6)
        .zip(r7)
        .map(|(((((((&w0, &w1), &w2), &w3), &w4), &w5), &w6), &w7)| {
            [w0, w1, w2, w3, w4, w5, w6, w7]
        })
}

/// `grad += Σ_r sigma_r · row_r` over the rows in `rows` (each of length `v`), adding the rows
/// to each coordinate in order, as a row-by-row loop would. A full block of [`ROWS`] rows is
/// one pass over `grad`.
#[inline(always)]
fn accumulate_rows<E: Weight>(grad: &mut [f32], rows: &[E], sigma: &[f32; ROWS], v: usize) {
    if let Some(rows) = block(rows, v) {
        let [s0, s1, s2, s3, s4, s5, s6, s7] = sigma;
        for (g, [w0, w1, w2, w3, w4, w5, w6, w7]) in grad.iter_mut().zip(columns(rows)) {
            let mut t = *g;
            t += s0 * w0.to_f32();
            t += s1 * w1.to_f32();
            t += s2 * w2.to_f32();
            t += s3 * w3.to_f32();
            t += s4 * w4.to_f32();
            t += s5 * w5.to_f32();
            t += s6 * w6.to_f32();
            t += s7 * w7.to_f32();
            *g = t;
        }
    } else {
        for (row, &s) in rows.chunks_exact(v.max(1)).zip(sigma) {
            for (g, &w) in grad.iter_mut().zip(row) {
                *g += s * w.to_f32();
            }
        }
    }
}

impl<M: FlipMath, E: Weight> BinaryTarget for Rbm<'_, M, E> {
    type Error = Infallible;

    fn dim(&self) -> usize {
        self.b.len()
    }

    #[cfg_attr(target_arch = "x86_64", inline(always))]
    fn log_density_and_grad(&mut self, x: &[u8], grad: &mut [f32]) -> Result<f64, Infallible> {
        let v = self.b.len();
        let pre = core::mem::take(&mut self.hidden.current);
        let u = self.evaluate(x, grad, pre, |first, rows, pre| {
            let c = self.c.get(first..).unwrap_or(&[]);
            for ((p, row), &cj) in pre.iter_mut().zip(rows.chunks_exact(v.max(1))).zip(c) {
                *p = f64::from(cj)
                    + row
                        .iter()
                        .zip(x)
                        .map(|(&w, &xi)| f64::from(w.to_f32()) * f64::from(xi))
                        .sum::<f64>();
            }
        });
        self.hidden.current = pre;
        Ok(u)
    }

    #[cfg_attr(target_arch = "x86_64", inline(always))]
    fn log_density_and_grad_after(
        &mut self,
        mv: &FlipMove<'_>,
        grad: &mut [f32],
    ) -> Result<f64, Infallible> {
        let current = core::mem::take(&mut self.hidden.current);
        let pre = core::mem::take(&mut self.hidden.proposal);
        let u = if let Some(wt) = self.wt {
            // Each flip adds ±(its row of Wᵀ), in flip order: the sums of the other branch.
            add_transposed_rows(pre, current, wt, mv);
            self.evaluate(mv.to, grad, pre, |_, _, _| {})
        } else {
            let v = self.b.len();
            self.evaluate(mv.to, grad, pre, |first, rows, pre| {
                let start = current.get(first..).unwrap_or(&[]);
                for (p, &h) in pre.iter_mut().zip(start) {
                    *p = h;
                }
                add_flipped_columns(pre, rows, v, mv);
            })
        };
        self.hidden.current = current;
        self.hidden.proposal = pre;
        Ok(u)
    }

    fn commit(&mut self) {
        self.hidden.commit();
    }

    fn running_sums(&self) -> &[f64] {
        self.hidden.current
    }

    fn running_sums_mut(&mut self) -> &mut [f64] {
        self.hidden.current
    }
}

impl<M: FlipMath, E: Weight> crate::baselines::FlipDelta for Rbm<'_, M, E> {
    #[cfg_attr(target_arch = "x86_64", inline(always))]
    fn log_density_delta(&mut self, x: &[u8], i: usize) -> Result<f64, Infallible> {
        // ΔU = δ b_i + Σ_j [softplus(p_j + δ W_ji) − softplus(p_j)] from the cached p = Wx + c.
        let v = self.b.len();
        let delta = 1.0 - 2.0 * f64::from(x.get(i).copied().unwrap_or(0));
        let column = self.w.get(i..).unwrap_or(&[]).iter().step_by(v.max(1));
        let hidden: f64 = self
            .hidden
            .current
            .iter()
            .zip(column)
            .map(|(&p, &w)| {
                crate::math::softplus(p + delta * f64::from(w.to_f32())) - crate::math::softplus(p)
            })
            .sum();
        Ok(delta * f64::from(self.b.get(i).copied().unwrap_or(0.0)) + hidden)
    }

    fn commit_flip(&mut self, x: &[u8], i: usize) {
        let v = self.b.len();
        let delta = 2.0 * f64::from(x.get(i).copied().unwrap_or(0)) - 1.0;
        let column = self.w.get(i..).unwrap_or(&[]).iter().step_by(v.max(1));
        for (h, &w) in self.hidden.current.iter_mut().zip(column) {
            *h += delta * f64::from(w.to_f32());
        }
    }
}

/// A deterministic RBM with `v` visible and `h` hidden units for tests: `W` (`h × v`, its
/// entries spread over `±50 w_scale`), `Wᵀ`, `b` (within `±b_scale`) and `c`.
#[cfg(test)]
#[allow(clippy::type_complexity, reason = "the four parameter vectors")]
pub(super) fn test_params(
    v: usize,
    h: usize,
    w_scale: f32,
    b_scale: f32,
) -> (
    std::vec::Vec<f32>,
    std::vec::Vec<f32>,
    std::vec::Vec<f32>,
    std::vec::Vec<f32>,
) {
    let w: std::vec::Vec<f32> = (0..h * v)
        .map(|k| ((k * 37 % 101) as f32 - 50.0) * w_scale)
        .collect();
    let wt = (0..v * h).map(|k| w[(k % h) * v + k / h]).collect();
    let b = (0..v).map(|i| (i as f32 * 0.7).sin() * b_scale).collect();
    let c = (0..h).map(|j| (j as f32 * 1.3).cos() * 0.5).collect();
    (w, wt, b, c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::Fast;
    use std::vec;
    use std::vec::Vec;

    /// A small deterministic RBM: `W` (`H × V`), its transpose, `b`, `c`.
    fn params(v: usize, h: usize) -> (Vec<f32>, Vec<f32>, Vec<f32>, Vec<f32>) {
        test_params(v, h, 0.013, 0.4)
    }

    /// The move of step `step` from `x`: the flipped indices (for 23 coordinates, 5 to 12 flips:
    /// groups of eight and their remainders) and the state after it.
    fn move_at(x: &[u8], step: usize) -> (Vec<u32>, Vec<u8>) {
        let flipped: Vec<u32> = (0..x.len() as u32)
            .filter(|&i| (i as usize * 7 + step).is_multiple_of(2 + step % 4))
            .collect();
        let mut y = x.to_vec();
        for &i in &flipped {
            y[i as usize] ^= 1;
        }
        (flipped, y)
    }

    /// Moves through a sequence of states (flipping a varying set each time), checking the
    /// incremental evaluation against a fresh one and the transposed path against the plain
    /// one, bit for bit. `H = 13` leaves a short final block of rows.
    #[test]
    fn incremental_and_transposed_paths_agree() {
        let (v, h) = (23, 13);
        let (w, wt, b, c) = params(v, h);
        let (mut cache_a, mut cache_b, mut cache_f) =
            (vec![0.0; 2 * h], vec![0.0; 2 * h], vec![0.0; 2 * h]);
        let mut plain = Rbm::<Fast>::with_math(&w, &b, &c, &mut cache_a).unwrap();
        let mut transposed = Rbm::<Fast>::with_math(&w, &b, &c, &mut cache_b)
            .unwrap()
            .with_transpose(&wt)
            .unwrap();
        let mut fresh = Rbm::<Fast>::with_math(&w, &b, &c, &mut cache_f).unwrap();
        let mut x: Vec<u8> = (0..v).map(|i| (i % 3 == 0) as u8).collect();
        let (mut ga, mut gb, mut gf) = (vec![0.0; v], vec![0.0; v], vec![0.0; v]);
        let mut u = plain.log_density_and_grad(&x, &mut ga).unwrap();
        transposed.log_density_and_grad(&x, &mut gb).unwrap();
        for step in 0..40usize {
            let (flipped, y) = move_at(&x, step);
            let mv = FlipMove {
                from: &x,
                to: &y,
                flipped: &flipped,
                from_log_density: u,
                from_grad: &ga,
            };
            let mut ga2 = vec![0.0; v];
            let ua = plain.log_density_and_grad_after(&mv, &mut ga2).unwrap();
            let ub = transposed.log_density_and_grad_after(&mv, &mut gb).unwrap();
            assert_eq!(ua.to_bits(), ub.to_bits());
            assert_eq!(ga2, gb);
            let uf = fresh.log_density_and_grad(&y, &mut gf).unwrap();
            assert!((ua - uf).abs() < 1e-5 * (1.0 + uf.abs()), "{ua} vs {uf}");
            for (a, f) in ga2.iter().zip(&gf) {
                assert!((a - f).abs() < 1e-5 * (1.0 + f.abs()));
            }
            if step % 3 != 2 {
                plain.commit();
                transposed.commit();
                x = y;
                u = ua;
                ga = ga2;
            }
        }
    }

    /// An RBM over `bf16` weights gives the values of the `f32` RBM whose weights are the
    /// widened `bf16` ones, bit for bit, on the plain and the transposed incremental paths and
    /// for single-flip deltas; and those differ from the unrounded model's.
    #[test]
    fn bf16_weights_are_the_rounded_f32_model() {
        use super::super::Bf16;
        let (v, h) = (23, 13);
        let (w, _, b, c) = params(v, h);
        let w16: Vec<Bf16> = w.iter().map(|&x| Bf16::from_f32(x)).collect();
        let rounded: Vec<f32> = w16.iter().map(|x| x.to_f32()).collect();
        assert!(rounded.iter().zip(&w).any(|(a, b)| a != b));
        let wt16: Vec<Bf16> = (0..v * h).map(|k| w16[(k % h) * v + k / h]).collect();
        let mut caches = [
            vec![0.0; 2 * h],
            vec![0.0; 2 * h],
            vec![0.0; 2 * h],
            vec![0.0; 2 * h],
        ];
        let [c0, c1, c2, c3] = &mut caches;
        let mut half = Rbm::<Fast, Bf16>::from_weights(&w16, &b, &c, c0).unwrap();
        let mut half_t = Rbm::<Fast, Bf16>::from_weights(&w16, &b, &c, c1)
            .unwrap()
            .with_transpose(&wt16)
            .unwrap();
        let mut full = Rbm::<Fast>::with_math(&rounded, &b, &c, c2).unwrap();
        let mut unrounded = Rbm::<Fast>::with_math(&w, &b, &c, c3).unwrap();
        let mut x: Vec<u8> = (0..v).map(|i| (i % 3 == 0) as u8).collect();
        let mut gs = [
            vec![0.0f32; v],
            vec![0.0f32; v],
            vec![0.0f32; v],
            vec![0.0f32; v],
        ];
        let u = [
            half.log_density_and_grad(&x, &mut gs[0]).unwrap(),
            half_t.log_density_and_grad(&x, &mut gs[1]).unwrap(),
            full.log_density_and_grad(&x, &mut gs[2]).unwrap(),
            unrounded.log_density_and_grad(&x, &mut gs[3]).unwrap(),
        ];
        assert!(u[..3].iter().all(|a| a.to_bits() == u[2].to_bits()));
        assert!(gs[..3].iter().all(|g| *g == gs[2]));
        assert_ne!(u[3].to_bits(), u[2].to_bits());
        for step in 0..20usize {
            let (flipped, y) = move_at(&x, step);
            let g0 = gs[2].clone();
            let mv = FlipMove {
                from: &x,
                to: &y,
                flipped: &flipped,
                from_log_density: u[2],
                from_grad: &g0,
            };
            let a = half.log_density_and_grad_after(&mv, &mut gs[0]).unwrap();
            let bt = half_t.log_density_and_grad_after(&mv, &mut gs[1]).unwrap();
            let f = full.log_density_and_grad_after(&mv, &mut gs[2]).unwrap();
            assert_eq!((a.to_bits(), bt.to_bits()), (f.to_bits(), f.to_bits()));
            assert_eq!((&gs[0], &gs[1]), (&gs[2], &gs[2]));
            use crate::baselines::FlipDelta;
            let i = step % v;
            assert_eq!(
                half.log_density_delta(&x, i).unwrap().to_bits(),
                full.log_density_delta(&x, i).unwrap().to_bits()
            );
            half.commit();
            half_t.commit();
            full.commit();
            x = y;
        }
    }

    #[test]
    fn transpose_is_checked() {
        let (v, h) = (5, 3);
        let (w, mut wt, b, c) = params(v, h);
        let mut cache = vec![0.0; 2 * h];
        assert!(matches!(
            Rbm::new(&w, &b, &c, &mut cache)
                .unwrap()
                .with_transpose(&wt[1..]),
            Err(ParamError::Len(_))
        ));
        wt[7] += 1.0;
        let mut cache = vec![0.0; 2 * h];
        assert!(matches!(
            Rbm::new(&w, &b, &c, &mut cache).unwrap().with_transpose(&wt),
            Err(ParamError::OutOfRange { name: "Wt", value }) if value == 7.0
        ));
    }
}
