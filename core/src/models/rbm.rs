//! The restricted Boltzmann machine with hidden units summed out.

use crate::error::{LenError, ParamError};
use crate::math::{FlipMath, Libm};
use crate::target::{BinaryTarget, FlipMove};
use core::convert::Infallible;

/// A binary RBM over visible units `x ∈ {0,1}^V` with `H` hidden units summed out:
///
/// `U(x) = Σ_j softplus((W x + c)_j) + bᵀx`, `∇U(x) = Wᵀ sigmoid(W x + c) + b`,
///
/// with `W` (`H × V`, row-major), `b` (`V`) and `c` (`H`) borrowed from the caller. The hidden
/// pre-activations `W x + c` are cached in `f64` in a caller buffer of `2H` doubles (current and
/// proposed): a move adds the flipped columns of `W`, and the exact `f64` sums keep the cache a
/// function of the state. `softplus` and `sigmoid` are evaluated in `f32` through `M` and summed
/// in `f64`.
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
pub struct Rbm<'a, M: FlipMath = Libm> {
    w: &'a [f32],
    b: &'a [f32],
    c: &'a [f32],
    hidden: &'a mut [f64],
    hidden_proposal: &'a mut [f64],
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
        let (v, h) = (b.len(), c.len());
        if v == 0 {
            return Err(ParamError::EmptyDimension);
        }
        let n = h.checked_mul(v).ok_or(ParamError::OutOfRange {
            name: "hidden * visible",
            value: h as f64 * v as f64,
        })?;
        LenError::check("W", n, w.len())?;
        LenError::check("cache", 2 * h, cache.len())?;
        for (name, s) in [("W", w), ("b", b), ("c", c)] {
            if s.iter().any(|v| !v.is_finite()) {
                return Err(ParamError::NonFinite(name));
            }
        }
        let (hidden, hidden_proposal) = cache.split_at_mut(h);
        Ok(Self {
            w,
            b,
            c,
            hidden,
            hidden_proposal,
            math: core::marker::PhantomData,
        })
    }

    /// Number of hidden units `H`.
    pub fn hidden_units(&self) -> usize {
        self.c.len()
    }

    /// `softplus(p)` and `sigmoid(p)` in `f32` through `M`, from one `exp`.
    #[inline(always)]
    fn hidden_terms(p: f64) -> (f32, f32) {
        let p = p as f32;
        let e = M::exp(-p.abs());
        let softplus = p.max(0.0) + M::ln_1p(e);
        let inv = 1.0 / (1.0 + e);
        (softplus, if p >= 0.0 { inv } else { e * inv })
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
        mut pre_block: impl FnMut(usize, &[f32], &mut [f64]),
    ) -> f64 {
        let v = self.b.len();
        grad.copy_from_slice(self.b);
        let mut u: f64 = x
            .iter()
            .zip(self.b)
            .map(|(&xi, &bi)| f64::from(xi) * f64::from(bi))
            .sum();
        for (k, (pre, rows)) in pre_out
            .chunks_mut(ROWS)
            .zip(self.w.chunks(ROWS * v))
            .enumerate()
        {
            pre_block(k * ROWS, rows, pre);
            let mut sigma = [0f32; ROWS];
            for (s, &p) in sigma.iter_mut().zip(pre.iter()) {
                let (softplus, sig) = Self::hidden_terms(p);
                u += f64::from(softplus);
                *s = sig;
            }
            accumulate_rows(grad, rows, &sigma, v);
        }
        u
    }
}

/// Adds `(x'_i − x_i) · W_ji` to the pre-activation `pre[r]` of each row `r` of `rows` (of
/// length `v`) for every flipped `i`, in flip order: the sums of a column-by-column update,
/// read from the rows (which the gradient pass streams next) with one chain per row.
#[inline(always)]
fn add_flipped_columns(pre: &mut [f64], rows: &[f32], v: usize, mv: &FlipMove<'_>) {
    let mut it = rows.chunks_exact(v);
    let full = (
        <&mut [f64; ROWS]>::try_from(&mut *pre),
        it.next(),
        it.next(),
        it.next(),
        it.next(),
        it.next(),
        it.next(),
        it.next(),
        it.next(),
    );
    if let (
        Ok(acc),
        Some(r0),
        Some(r1),
        Some(r2),
        Some(r3),
        Some(r4),
        Some(r5),
        Some(r6),
        Some(r7),
    ) = full
    {
        let rows = [r0, r1, r2, r3, r4, r5, r6, r7];
        let mut h = *acc;
        for &i in mv.flipped {
            let i = i as usize;
            // The move flips i, so x'_i − x_i is +1 when x'_i = 1 and −1 otherwise; ±w is
            // exact, and h − w is h + (−w).
            let up = mv.to.get(i).is_some_and(|&t| t != 0);
            for (hr, row) in h.iter_mut().zip(&rows) {
                let w = f64::from(row.get(i).copied().unwrap_or(0.0));
                *hr = if up { *hr + w } else { *hr - w };
            }
        }
        *acc = h;
    } else {
        for (p, row) in pre.iter_mut().zip(rows.chunks_exact(v)) {
            for &i in mv.flipped {
                let i = i as usize;
                let up = mv.to.get(i).is_some_and(|&t| t != 0);
                let w = f64::from(row.get(i).copied().unwrap_or(0.0));
                *p = if up { *p + w } else { *p - w };
            }
        }
    }
}

/// Hidden units whose rows of `W` are read together.
const ROWS: usize = 8;

/// `grad += Σ_r sigma_r · row_r` over the rows in `rows` (each of length `v`), adding the rows
/// to each coordinate in order, as a row-by-row loop would. A full block of [`ROWS`] rows is
/// one pass over `grad`.
#[inline(always)]
fn accumulate_rows(grad: &mut [f32], rows: &[f32], sigma: &[f32; ROWS], v: usize) {
    let mut it = rows.chunks_exact(v);
    if let (
        [s0, s1, s2, s3, s4, s5, s6, s7],
        Some(r0),
        Some(r1),
        Some(r2),
        Some(r3),
        Some(r4),
        Some(r5),
        Some(r6),
        Some(r7),
    ) = (
        sigma,
        it.next(),
        it.next(),
        it.next(),
        it.next(),
        it.next(),
        it.next(),
        it.next(),
        it.next(),
    ) {
        let rows = r0
            .iter()
            .zip(r1)
            .zip(r2)
            .zip(r3)
            .zip(r4)
            .zip(r5)
            .zip(r6)
            .zip(r7);
        for (g, (((((((&w0, &w1), &w2), &w3), &w4), &w5), &w6), &w7)) in grad.iter_mut().zip(rows) {
            let mut t = *g;
            t += s0 * w0;
            t += s1 * w1;
            t += s2 * w2;
            t += s3 * w3;
            t += s4 * w4;
            t += s5 * w5;
            t += s6 * w6;
            t += s7 * w7;
            *g = t;
        }
    } else {
        for (row, &s) in rows.chunks_exact(v).zip(sigma) {
            for (g, &w) in grad.iter_mut().zip(row) {
                *g += s * w;
            }
        }
    }
}

impl<M: FlipMath> BinaryTarget for Rbm<'_, M> {
    type Error = Infallible;

    fn dim(&self) -> usize {
        self.b.len()
    }

    fn log_density_and_grad(&mut self, x: &[u8], grad: &mut [f32]) -> Result<f64, Infallible> {
        let v = self.b.len();
        let pre = core::mem::take(&mut self.hidden);
        let u = self.evaluate(x, grad, pre, |first, rows, pre| {
            let c = self.c.get(first..).unwrap_or(&[]);
            for ((p, row), &cj) in pre.iter_mut().zip(rows.chunks_exact(v)).zip(c) {
                *p = f64::from(cj)
                    + row
                        .iter()
                        .zip(x)
                        .map(|(&w, &xi)| f64::from(w) * f64::from(xi))
                        .sum::<f64>();
            }
        });
        self.hidden = pre;
        Ok(u)
    }

    fn log_density_and_grad_after(
        &mut self,
        mv: &FlipMove<'_>,
        grad: &mut [f32],
    ) -> Result<f64, Infallible> {
        let v = self.b.len();
        let current = core::mem::take(&mut self.hidden);
        let pre = core::mem::take(&mut self.hidden_proposal);
        let u = self.evaluate(mv.to, grad, pre, |first, rows, pre| {
            let start = current.get(first..).unwrap_or(&[]);
            for (p, &h) in pre.iter_mut().zip(start) {
                *p = h;
            }
            add_flipped_columns(pre, rows, v, mv);
        });
        self.hidden = current;
        self.hidden_proposal = pre;
        Ok(u)
    }

    fn commit(&mut self) {
        core::mem::swap(&mut self.hidden, &mut self.hidden_proposal);
    }
}
