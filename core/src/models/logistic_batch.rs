//! The logistic regression of [`BinaryLogistic`](super::BinaryLogistic) evaluated for many
//! chains at once.

use crate::batch::{BatchShape, adopt_row, split_cache};
use crate::binary::{BatchMoves, BatchTarget};
use crate::dense::{Blocked, Product, Shape};
use crate::error::{LenError, ParamError};
use crate::math::softplus_and_sigmoid;

/// [`BinaryLogistic`](super::BinaryLogistic)'s `U` and `∇U` for `n` chains at once: a
/// [`BatchTarget`].
///
/// Per chain, the linear predictors `v = Xβ` are cached in `f64` (in a caller buffer of
/// `2·n·m` doubles: the current ones of every chain, then the proposed ones) and a move adds the
/// flipped coefficients' columns of `X` (read as rows of a copy of `Xᵀ` in `f64`), in flip order, as
/// [`BinaryLogistic`](super::BinaryLogistic) does. The residuals `y − σ(v)` of all chains
/// (`f32`, `n × m`) then make the gradients one product `∇U = R · X` (`n × m` times `m × d`)
/// through `P`.
///
/// With the portable [`Blocked`] product every value is that of
/// [`BinaryLogistic`](super::BinaryLogistic), bit for bit (its gradient adds the data rows in
/// order, as [`Blocked`] does); another product (a host's SIMD library) may round the
/// gradient differently (`U` is the same).
///
/// # Examples
///
/// ```
/// use langevin_core::binary::{BatchBuffers, BatchDmala, ChainBatch, FlipProposal};
/// use langevin_core::dense::Blocked;
/// use langevin_core::models::LogisticBatch;
/// use langevin_core::StepReport;
/// use rand_core::SeedableRng;
///
/// let (x, y) = ([1.0f32, -1.0, 0.5, 2.0], [1.0f32, 0.0]); // m = 2 rows, d = 2
/// let (n, d, m) = (3, 2, 2);
/// let (mut xt, mut cache, mut r) = (vec![0.0; m * d], vec![0.0; 2 * n * m], vec![0.0f32; n * m]);
/// let mut target =
///     LogisticBatch::<Blocked>::new(&x, &y, n, &mut xt, &mut cache, &mut r, Blocked).unwrap();
/// let (mut b, mut b_new) = (vec![0u8; n * d], vec![0u8; n * d]);
/// let (mut g, mut gy) = (vec![0.0f32; n * d], vec![0.0f32; n * d]);
/// let (mut u, mut uy, mut lq, mut lu) = (vec![0.0; n], vec![0.0; n], vec![0.0; n], vec![0.0; n]);
/// let (mut changed, mut counts, mut jumps) = (vec![0u32; n * d], vec![0u32; n], vec![0u64; n]);
/// let buffers = BatchBuffers {
///     x: &mut b, grad: &mut g, log_density: &mut u, x_proposal: &mut b_new,
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
/// assert!(batch.log_density(0) < 0.0);
/// ```
#[derive(Debug)]
pub struct LogisticBatch<'a, P: Product = Blocked> {
    x: &'a [f32],
    xt: &'a [f64],
    y: &'a [f32],
    shape: BatchShape,
    current: &'a mut [f64],
    proposal: &'a mut [f64],
    residual: &'a mut [f32],
    product: P,
}

impl<'a, P: Product> LogisticBatch<'a, P> {
    /// Data `X` (`m·d` entries, row-major) and responses `y` (`m`, each 0 or 1) for `chains`
    /// chains: `xt` (`m·d` doubles) receives `Xᵀ`, `cache` holds `2·chains·m` doubles and
    /// `residual` `chains·m` floats.
    ///
    /// # Errors
    ///
    /// As [`BinaryLogistic::new`](super::BinaryLogistic::new): [`ParamError::EmptyDimension`]
    /// for no rows or no columns, [`ParamError::Len`] for mismatched lengths,
    /// [`ParamError::NonFinite`] for non-finite data, [`ParamError::OutOfRange`] for a response
    /// other than 0 or 1; and [`ParamError::OutOfRange`] for no chains.
    pub fn new(
        x: &'a [f32],
        y: &'a [f32],
        chains: usize,
        xt: &'a mut [f64],
        cache: &'a mut [f64],
        residual: &'a mut [f32],
        product: P,
    ) -> Result<Self, ParamError> {
        let (m, d) = super::logistic::check_data(x, y)?;
        let shape = BatchShape::new(chains, d)?;
        let nm = chains.saturating_mul(m);
        LenError::check("Xᵀ", x.len(), xt.len())?;
        let (current, proposal) = split_cache(cache, nm)?;
        LenError::check("residual", nm, residual.len())?;
        for (k, t) in xt.iter_mut().enumerate() {
            *t = f64::from(x.get((k % m) * d + k / m).copied().unwrap_or(0.0));
        }
        let xt: &'a [f64] = xt;
        Ok(Self {
            x,
            xt,
            y,
            shape,
            current,
            proposal,
            residual,
            product,
        })
    }

    /// The number of coefficients `d`.
    fn cols(&self) -> usize {
        self.shape.dim
    }

    /// From the linear predictors `v` (`n·m`): `U` of the chains whose `moved` entry is not 0
    /// into `log_density`, and `∇U = R · X` of every chain into `grad` (the residuals of the
    /// other chains are 0).
    fn finish(
        &mut self,
        v: &[f64],
        moved: Option<&[u32]>,
        grad: &mut [f32],
        log_density: &mut [f64],
    ) -> Result<(), LenError> {
        let (m, d) = (self.y.len(), self.cols());
        let rows = v
            .chunks_exact(m)
            .zip(self.residual.chunks_exact_mut(m))
            .zip(log_density.iter_mut())
            .enumerate();
        for (c, ((v, r), u)) in rows {
            if moved.is_some_and(|k| k.get(c).is_some_and(|&k| k == 0)) {
                r.fill(0.0);
                continue;
            }
            let mut total = 0.0;
            for ((&vi, &yi), ri) in v.iter().zip(self.y).zip(r.iter_mut()) {
                let (softplus, sigmoid) = softplus_and_sigmoid(vi);
                total += f64::from(yi) * vi - softplus;
                *ri = (f64::from(yi) - sigmoid) as f32;
            }
            *u = total;
        }
        grad.fill(0.0);
        let shape = Shape {
            m: self.shape.chains,
            k: m,
            n: d,
        };
        self.product.matmul_acc(shape, self.residual, self.x, grad)
    }
}

impl<P: Product> BatchTarget for LogisticBatch<'_, P> {
    type Error = LenError;

    fn dim(&self) -> usize {
        self.cols()
    }

    fn chains(&self) -> usize {
        self.shape.chains
    }

    fn log_density_and_grad_all(
        &mut self,
        beta: &[u8],
        grad: &mut [f32],
        log_density: &mut [f64],
    ) -> Result<(), LenError> {
        self.shape
            .check(beta.len(), grad.len(), log_density.len())?;
        let (m, d) = (self.y.len(), self.cols());
        let current = core::mem::take(&mut self.current);
        for (v, beta) in current.chunks_exact_mut(m).zip(beta.chunks_exact(d)) {
            for (vi, row) in v.iter_mut().zip(self.x.chunks_exact(d)) {
                *vi = row
                    .iter()
                    .zip(beta)
                    .map(|(&xij, &bj)| f64::from(xij) * f64::from(bj))
                    .sum();
            }
        }
        let r = self.finish(current, None, grad, log_density);
        self.current = current;
        r
    }

    fn log_density_and_grad_after_all(
        &mut self,
        moves: &BatchMoves<'_>,
        grad: &mut [f32],
        log_density: &mut [f64],
    ) -> Result<(), LenError> {
        self.shape
            .check_moves(moves, grad.len(), log_density.len())?;
        let (m, d) = (self.y.len(), self.cols());
        let rows = self
            .proposal
            .chunks_exact_mut(m)
            .zip(self.current.chunks_exact(m))
            .zip(moves.from.chunks_exact(d).zip(moves.to.chunks_exact(d)))
            .zip(moves.changed.chunks_exact(d).zip(moves.counts));
        for (((v, cur), (from, to)), (flipped, &k)) in rows {
            if k == 0 {
                continue;
            }
            v.copy_from_slice(cur);
            for &j in flipped.get(..k as usize).unwrap_or(&[]) {
                let j = j as usize;
                let (Some(&a), Some(&b)) = (from.get(j), to.get(j)) else {
                    continue;
                };
                let delta = f64::from(b) - f64::from(a);
                let column = self.xt.get(j * m..(j + 1) * m).unwrap_or(&[]);
                for (vi, &xij) in v.iter_mut().zip(column) {
                    *vi += delta * xij;
                }
            }
        }
        let proposal = core::mem::take(&mut self.proposal);
        let r = self.finish(proposal, Some(moves.counts), grad, log_density);
        self.proposal = proposal;
        r
    }

    fn commit(&mut self, c: usize) {
        adopt_row(self.current, self.proposal, c, self.y.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::BinaryLogistic;
    use crate::models::batch_testing::compare;
    use std::vec;
    use std::vec::Vec;

    /// `m = 19` rows, `d = 13` coefficients: short tiles on both edges of the product.
    fn data() -> (Vec<f32>, Vec<f32>) {
        let (m, d) = (19, 13);
        let x = (0..m * d)
            .map(|k| ((k * 37 % 101) as f32 - 50.0) * 0.02)
            .collect();
        let y = (0..m).map(|i| f32::from(u8::from(i % 3 != 1))).collect();
        (x, y)
    }

    /// Batched DMALA with the portable product moves every chain exactly as single-chain DMALA
    /// on [`BinaryLogistic`] does: the same states, `U` and `∇U`, bit for bit.
    #[test]
    fn batched_steps_equal_single_chain_steps() {
        let (x, y) = data();
        let (m, d, n) = (19, 13, 6);
        let mut caches = vec![vec![0.0; 2 * m]; n];
        let mut singles: Vec<_> = caches
            .iter_mut()
            .map(|c| BinaryLogistic::new(&x, &y, c).unwrap())
            .collect();
        let (mut xt, mut cache, mut r) =
            (vec![0.0; m * d], vec![0.0; 2 * n * m], vec![0.0f32; n * m]);
        let mut batch =
            LogisticBatch::new(&x, &y, n, &mut xt, &mut cache, &mut r, Blocked).unwrap();
        let accepted = compare(&mut singles, &mut batch, 0.6, 50, true);
        assert!(accepted > 20, "the test must see moves: {accepted}");
    }

    #[test]
    fn refuses_bad_parameters_and_buffers() {
        let (x, y) = data();
        let (m, d, n) = (19, 13, 2);
        let (mut xt, mut cache, mut r) =
            (vec![0.0; m * d], vec![0.0; 2 * n * m], vec![0.0f32; n * m]);
        let mut new = |x: &[f32], y: &[f32], n, short: usize| {
            let c = cache.len() - short;
            LogisticBatch::new(x, y, n, &mut xt, &mut cache[..c], &mut r, Blocked).map(|_| ())
        };
        assert!(new(&x, &y, n, 0).is_ok());
        assert!(matches!(new(&x, &y, n, 1), Err(ParamError::Len(_))));
        assert!(matches!(new(&x[..5], &y, n, 0), Err(ParamError::Len(_))));
        assert!(matches!(
            new(&x, &y, 0, 0),
            Err(ParamError::OutOfRange { .. })
        ));
        assert!(matches!(
            new(&x, &[], n, 0),
            Err(ParamError::EmptyDimension)
        ));
        let mut bad = y.clone();
        bad[2] = 0.5;
        assert!(matches!(
            new(&x, &bad, n, 0),
            Err(ParamError::OutOfRange { name: "y", .. })
        ));
        let mut bad = x.clone();
        bad[7] = f32::INFINITY;
        assert!(matches!(
            new(&bad, &y, n, 0),
            Err(ParamError::NonFinite("X"))
        ));
    }
}
