//! The binary quadratic model of [`BinaryQuadratic`](super::BinaryQuadratic) evaluated for
//! many chains at once.

use super::quadratic::{flip_sym, full, narrow};
use crate::batch::{BatchShape, adopt_row};
use crate::binary::{BatchMoves, BatchTarget};
use crate::dense::{Blocked, Product, Shape};
use crate::error::{LenError, ParamError};

/// `U(x) = xᵀWx + bᵀx` and `∇U = (W + Wᵀ)x + b` for `n` chains at once: a [`BatchTarget`].
///
/// Two evaluations, chosen at construction:
///
/// * [`new`](Self::new) keeps every chain's gradient in `f64` (in a caller buffer) and updates it
///   over the flipped coordinates' rows and columns of `W`, exactly as
///   [`BinaryQuadratic`](super::BinaryQuadratic) does, but reading each flip's `W_i· + W_·i` as
///   one contiguous row of `S = W + Wᵀ` formed once in `f64` (each entry the sum the
///   single-chain model forms): every value is that of the single-chain model, bit for bit, and
///   a step costs `O(k·d)` per chain for `k` flips. No product is used.
/// * [`product`](Self::product) recomputes the gradients of all chains' proposals as one
///   product `X' · S + 1·bᵀ` through `P` (`n × d` times `d × d`, `S = W + Wᵀ` formed once in
///   `f32`), and `U = ½ xᵀ(∇U + b)` from it: `O(d²)` per chain whatever the flips, in `f32`, so
///   values are close to the single-chain ones but not equal.
///
/// # Examples
///
/// ```
/// use langevin_core::binary::{BatchBuffers, BatchDmala, ChainBatch, FlipProposal};
/// use langevin_core::dense::Blocked;
/// use langevin_core::models::QuadraticBatch;
/// use langevin_core::StepReport;
/// use rand_core::SeedableRng;
///
/// let (w, b) = ([0.0f32, 1.0, 0.0, 0.0], [0.5f32, -0.5]); // d = 2
/// let (n, d) = (3, 2);
/// let (mut s, mut cache) = (vec![0.0f64; d * d], vec![0.0f64; 2 * n * (d + 1)]);
/// let mut target = QuadraticBatch::<Blocked>::new(&w, &b, n, &mut s, &mut cache).unwrap();
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
/// // U = x₀x₁ + 0.5x₀ − 0.5x₁ at every chain's state.
/// let x = batch.state(1);
/// let expected = f64::from(x[0] * x[1]) + 0.5 * f64::from(x[0]) - 0.5 * f64::from(x[1]);
/// assert_eq!(batch.log_density(1), expected);
/// ```
#[derive(Debug)]
pub struct QuadraticBatch<'a, P: Product = Blocked> {
    w: &'a [f32],
    b: &'a [f32],
    shape: BatchShape,
    eval: Eval<'a>,
    product: P,
}

/// How a [`QuadraticBatch`] evaluates.
#[derive(Debug)]
enum Eval<'a> {
    /// Per-chain `f64` gradients updated over the flips.
    Incremental {
        /// `S = W + Wᵀ` in `f64`.
        s: &'a [f64],
        /// The current states' gradients, chain by chain (`n·d`).
        current: &'a mut [f64],
        /// The proposals' gradients (`n·d`).
        proposal: &'a mut [f64],
        /// The current states' `U` (`n`).
        u: &'a mut [f64],
        /// The proposals' `U` (`n`).
        u_proposal: &'a mut [f64],
    },
    /// Gradients recomputed by the product.
    Product {
        /// `S = W + Wᵀ`.
        s: &'a [f32],
        /// The states as `f32` (`n·d`).
        x: &'a mut [f32],
    },
}

/// Checks `W` and `b` as [`BinaryQuadratic::new`](super::BinaryQuadratic::new) does, and the
/// chain count.
fn check_model(w: &[f32], b: &[f32], chains: usize) -> Result<BatchShape, ParamError> {
    BatchShape::new(chains, super::quadratic::check_model(w, b)?)
}

/// `s = W + Wᵀ` for the `d × d` matrix `W` (row-major), summed in the precision of `s`.
fn symmetrise<F: From<f32> + core::ops::Add<Output = F>>(w: &[f32], d: usize, s: &mut [F]) {
    for (k, sk) in s.iter_mut().enumerate() {
        let (i, j) = (k / d, k % d);
        let (wij, wji) = (w.get(k), w.get(j * d + i));
        *sk = F::from(wij.copied().unwrap_or(0.0)) + F::from(wji.copied().unwrap_or(0.0));
    }
}

impl<'a, P: Product> QuadraticBatch<'a, P> {
    /// The incremental evaluation (see the type's documentation) of `W` (`d²` entries,
    /// row-major) and `b` (`d`) for `chains` chains: `s` (`d²` doubles) receives `W + Wᵀ` and
    /// `cache` holds `2·chains·(d + 1)` doubles.
    ///
    /// # Errors
    ///
    /// [`ParamError::EmptyDimension`] for `d = 0`, [`ParamError::Len`] for mismatched lengths,
    /// [`ParamError::NonFinite`] for a non-finite entry of `W` or `b`,
    /// [`ParamError::OutOfRange`] for no chains.
    pub fn new(
        w: &'a [f32],
        b: &'a [f32],
        chains: usize,
        s: &'a mut [f64],
        cache: &'a mut [f64],
    ) -> Result<Self, ParamError>
    where
        P: Default,
    {
        let shape = check_model(w, b, chains)?;
        let (d, nd) = (shape.dim, shape.len());
        LenError::check("S", w.len(), s.len())?;
        let len = nd.saturating_add(chains).saturating_mul(2);
        LenError::check("cache", len, cache.len())?;
        symmetrise(w, d, s);
        let (current, rest) = cache.split_at_mut(nd);
        let (proposal, rest) = rest.split_at_mut(nd);
        let (u, u_proposal) = rest.split_at_mut(chains);
        let s: &'a [f64] = s;
        Ok(Self {
            w,
            b,
            shape,
            eval: Eval::Incremental {
                s,
                current,
                proposal,
                u,
                u_proposal,
            },
            product: P::default(),
        })
    }

    /// The product evaluation (see the type's documentation) of `W` and `b` for `chains`
    /// chains: `s` (`d²` floats) receives `W + Wᵀ`, and `work` holds `chains·d` floats.
    ///
    /// # Errors
    ///
    /// As for [`new`](Self::new).
    pub fn product(
        w: &'a [f32],
        b: &'a [f32],
        chains: usize,
        s: &'a mut [f32],
        work: &'a mut [f32],
        product: P,
    ) -> Result<Self, ParamError> {
        let shape = check_model(w, b, chains)?;
        let d = shape.dim;
        LenError::check("S", w.len(), s.len())?;
        LenError::check("work", shape.len(), work.len())?;
        symmetrise(w, d, s);
        let s: &'a [f32] = s;
        Ok(Self {
            w,
            b,
            shape,
            eval: Eval::Product { s, x: work },
            product,
        })
    }

    /// The product evaluation at `x` (all chains).
    fn by_product(
        &mut self,
        to: &[u8],
        grad: &mut [f32],
        log_density: &mut [f64],
    ) -> Result<(), LenError> {
        let d = self.b.len();
        let Eval::Product { s, x } = &mut self.eval else {
            return Ok(());
        };
        for (xf, &xi) in x.iter_mut().zip(to) {
            *xf = f32::from(xi);
        }
        for g in grad.chunks_exact_mut(d) {
            g.copy_from_slice(self.b);
        }
        let shape = Shape {
            m: self.shape.chains,
            k: d,
            n: d,
        };
        self.product.matmul_acc(shape, x, s, grad)?;
        // xᵀWx = ½ xᵀ(W + Wᵀ)x = ½ xᵀ(∇U − b), so U = ½ xᵀ(∇U + b).
        let rows = to.chunks_exact(d).zip(grad.chunks_exact(d));
        for ((x, g), u) in rows.zip(log_density.iter_mut()) {
            let mut total = 0.0f64;
            for ((&xi, &gi), &bi) in x.iter().zip(g).zip(self.b) {
                if xi != 0 {
                    total += f64::from(gi) + f64::from(bi);
                }
            }
            *u = 0.5 * total;
        }
        Ok(())
    }
}

impl<P: Product> BatchTarget for QuadraticBatch<'_, P> {
    type Error = LenError;

    fn dim(&self) -> usize {
        self.shape.dim
    }

    fn chains(&self) -> usize {
        self.shape.chains
    }

    fn log_density_and_grad_all(
        &mut self,
        x: &[u8],
        grad: &mut [f32],
        log_density: &mut [f64],
    ) -> Result<(), LenError> {
        self.shape.check(x.len(), grad.len(), log_density.len())?;
        let d = self.b.len();
        match &mut self.eval {
            Eval::Incremental { current, u, .. } => {
                let rows = x
                    .chunks_exact(d)
                    .zip(current.chunks_exact_mut(d))
                    .zip(grad.chunks_exact_mut(d))
                    .zip(u.iter_mut().zip(log_density.iter_mut()));
                for (((x, g64), g), (u, out)) in rows {
                    let value = full(self.w, self.b, x, g64);
                    *u = narrow(g, g64, value);
                    *out = *u;
                }
                Ok(())
            }
            Eval::Product { .. } => self.by_product(x, grad, log_density),
        }
    }

    fn log_density_and_grad_after_all(
        &mut self,
        moves: &BatchMoves<'_>,
        grad: &mut [f32],
        log_density: &mut [f64],
    ) -> Result<(), LenError> {
        self.shape
            .check_moves(moves, grad.len(), log_density.len())?;
        let d = self.b.len();
        match &mut self.eval {
            Eval::Incremental {
                s,
                current,
                proposal,
                u,
                u_proposal,
            } => {
                let rows = proposal
                    .chunks_exact_mut(d)
                    .zip(current.chunks_exact(d))
                    .zip(moves.from.chunks_exact(d).zip(moves.to.chunks_exact(d)))
                    .zip(moves.changed.chunks_exact(d).zip(moves.counts))
                    .zip(grad.chunks_exact_mut(d))
                    .zip(u.iter().zip(u_proposal.iter_mut()))
                    .zip(log_density.iter_mut());
                for ((((((g64, cur), (from, to)), (flipped, &k)), g), (&u, u_new)), out) in rows {
                    if k == 0 {
                        continue;
                    }
                    g64.copy_from_slice(cur);
                    let mut delta_u = 0.0f64;
                    for &i in flipped.get(..k as usize).unwrap_or(&[]) {
                        let i = i as usize;
                        let (Some(&a), Some(&b)) = (from.get(i), to.get(i)) else {
                            continue;
                        };
                        let delta = f64::from(b) - f64::from(a);
                        let row = s.get(i * d..(i + 1) * d).unwrap_or(&[]);
                        delta_u += flip_sym(g64, self.w, i, delta, row);
                    }
                    *u_new = narrow(g, g64, u + delta_u);
                    *out = *u_new;
                }
                Ok(())
            }
            Eval::Product { .. } => self.by_product(moves.to, grad, log_density),
        }
    }

    fn commit(&mut self, c: usize) {
        let d = self.b.len();
        if let Eval::Incremental {
            current,
            proposal,
            u,
            u_proposal,
            ..
        } = &mut self.eval
        {
            adopt_row(current, proposal, c, d);
            adopt_row(u, u_proposal, c, 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dense::Blocked;
    use crate::models::BinaryQuadratic;
    use crate::models::batch_testing::compare;
    use std::vec;
    use std::vec::Vec;

    fn model(d: usize) -> (Vec<f32>, Vec<f32>) {
        let w = (0..d * d)
            .map(|k| ((k * 37 % 101) as f32 - 50.0) * 0.004)
            .collect();
        let b = (0..d).map(|i| (i as f32 * 0.7).sin() * 0.3).collect();
        (w, b)
    }

    /// [`compare`]s `steps` steps of batched DMALA on 6 chains of a 23-coordinate model with
    /// single-chain DMALA on [`BinaryQuadratic`], with the incremental evaluation (`exact`) or
    /// the product; returns the moves accepted.
    fn against_single_chains(exact: bool, steps: usize) -> usize {
        let (d, n) = (23, 6);
        let (w, b) = model(d);
        let mut caches = vec![vec![0.0; 2 * d]; n];
        let mut singles: Vec<_> = caches
            .iter_mut()
            .map(|c| BinaryQuadratic::new(&w, &b, c).unwrap())
            .collect();
        let (mut s, mut cache) = (vec![0.0; d * d], vec![0.0; 2 * n * (d + 1)]);
        let (mut s32, mut work) = (vec![0.0f32; d * d], vec![0.0f32; n * d]);
        let mut batch = if exact {
            QuadraticBatch::<Blocked>::new(&w, &b, n, &mut s, &mut cache)
        } else {
            QuadraticBatch::<Blocked>::product(&w, &b, n, &mut s32, &mut work, Blocked)
        }
        .unwrap();
        compare(&mut singles, &mut batch, 0.6, steps, exact)
    }

    /// Batched DMALA with the incremental evaluation moves every chain exactly as single-chain
    /// DMALA on [`BinaryQuadratic`] does: the same states, `U` and `∇U`, bit for bit (`W` is
    /// not symmetric, so rows and columns differ).
    #[test]
    fn incremental_steps_equal_single_chain_steps() {
        let accepted = against_single_chains(true, 50);
        assert!(accepted > 20, "the test must see moves: {accepted}");
    }

    /// The product evaluation gives close values, and the same moves over a short run.
    #[test]
    fn product_values_are_close_to_the_single_chain_ones() {
        let accepted = against_single_chains(false, 20);
        assert!(accepted > 10, "the test must see moves: {accepted}");
    }

    #[test]
    fn refuses_bad_parameters_and_buffers() {
        let (w, b) = model(3);
        let (mut wt, mut cache) = (vec![0.0; 9], vec![0.0; 16]);
        let new = |w: &[f32], b: &[f32], n, s: &mut [f64], cache: &mut [f64]| {
            QuadraticBatch::<Blocked>::new(w, b, n, s, cache).map(|_| ())
        };
        assert!(new(&w, &b, 2, &mut wt, &mut cache).is_ok());
        assert!(matches!(
            new(&w, &b, 2, &mut wt, &mut cache[..15]),
            Err(ParamError::Len(_))
        ));
        assert!(matches!(
            new(&w, &b, 2, &mut wt[..8], &mut cache),
            Err(ParamError::Len(_))
        ));
        assert!(matches!(
            new(&w[..8], &b, 2, &mut wt, &mut cache),
            Err(ParamError::Len(_))
        ));
        assert!(matches!(
            new(&w, &b, 0, &mut wt, &mut cache),
            Err(ParamError::OutOfRange { .. })
        ));
        assert!(matches!(
            new(&[], &[], 2, &mut [], &mut cache),
            Err(ParamError::EmptyDimension)
        ));
        let mut bad = w.clone();
        bad[4] = f32::NAN;
        assert!(matches!(
            new(&bad, &b, 2, &mut wt, &mut cache),
            Err(ParamError::NonFinite("W"))
        ));
        let (mut s, mut work) = (vec![0.0f32; 9], vec![0.0f32; 5]);
        assert!(matches!(
            QuadraticBatch::<Blocked>::product(&w, &b, 2, &mut s, &mut work, Blocked),
            Err(ParamError::Len(_))
        ));
        // A batch of the wrong length is a typed error, not a panic.
        let mut t = QuadraticBatch::<Blocked>::new(&w, &b, 2, &mut wt, &mut cache).unwrap();
        let (mut g, mut u) = (vec![0.0f32; 6], vec![0.0; 2]);
        assert!(t.log_density_and_grad_all(&[0; 5], &mut g, &mut u).is_err());
    }
}
