//! The RBM of [`Rbm`] evaluated for many chains at once.

use super::Rbm;
use crate::binary::{BatchMoves, BatchTarget};
use crate::dense::{Blocked, Product, Shape};
use crate::error::{LenError, ParamError};
use crate::math::{FlipMath, Libm};

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
#[derive(Debug)]
pub struct RbmBatch<'a, P: Product = Blocked, M: FlipMath = Libm> {
    w: &'a [f32],
    wt: &'a [f32],
    b: &'a [f32],
    c: &'a [f32],
    current: &'a mut [f64],
    proposal: &'a mut [f64],
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
    /// let (mut flipped, mut counts) = (vec![0u32; n * d], vec![0u32; n]);
    /// let buffers = BatchBuffers {
    ///     x: &mut x, grad: &mut g, log_density: &mut u, x_proposal: &mut y,
    ///     grad_proposal: &mut gy, log_density_proposal: &mut uy, flipped: &mut flipped,
    ///     counts: &mut counts, log_q: &mut lq, log_u: &mut lu,
    /// };
    /// let mut batch = ChainBatch::new(buffers, &mut target).unwrap();
    /// let kernel = BatchDmala::new(FlipProposal::new(0.5, 0.5).unwrap());
    /// let mut rngs: Vec<_> = (0..n as u64).map(rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64).collect();
    /// let mut reports = vec![StepReport { accepted: false, proposed_flips: 0,
    ///     log_accept_ratio: 0.0, rejection: None, evaluations: 0 }; n];
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
        let (w, b, c) = rbm.parameters();
        let wt = rbm.transpose().ok_or(ParamError::Unsupported(
            "a batched RBM needs the transpose of W (Rbm::with_transpose)",
        ))?;
        if chains == 0 {
            return Err(ParamError::OutOfRange {
                name: "chains",
                value: 0.0,
            });
        }
        let nh = chains.checked_mul(c.len()).ok_or(ParamError::OutOfRange {
            name: "chains * hidden",
            value: chains as f64 * c.len() as f64,
        })?;
        LenError::check("cache", nh.saturating_mul(2), cache.len())?;
        LenError::check("sigma", nh, sigma.len())?;
        let (current, proposal) = cache.split_at_mut(nh);
        Ok(Self {
            w,
            wt,
            b,
            c,
            current,
            proposal,
            sigma,
            chains,
            product,
            math: core::marker::PhantomData,
        })
    }

    /// `softplus(p)` and `sigmoid(p)` as [`Rbm`] computes them.
    #[inline(always)]
    fn hidden_terms(p: f64) -> (f32, f32) {
        let p = p as f32;
        let e = M::exp(-p.abs());
        let softplus = p.max(0.0) + M::ln_1p(e);
        let inv = 1.0 / (1.0 + e);
        (softplus, if p >= 0.0 { inv } else { e * inv })
    }

    /// From the pre-activations `pre` (`n·H`): `U` of every chain at `x` into `log_density`,
    /// and `∇U` into `grad` (`n·V`).
    fn finish(
        &mut self,
        x: &[u8],
        pre: &[f64],
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
            for (s, &p) in sigma.iter_mut().zip(pre) {
                let (softplus, sig) = Self::hidden_terms(p);
                total += f64::from(softplus);
                *s = sig;
            }
            *u = total;
        }
        for g in grad.chunks_exact_mut(v) {
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
        self.check(x.len(), grad.len(), log_density.len())?;
        let current = core::mem::take(&mut self.current);
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
        self.current = current;
        r
    }

    fn log_density_and_grad_after_all(
        &mut self,
        moves: &BatchMoves<'_>,
        grad: &mut [f32],
        log_density: &mut [f64],
    ) -> Result<(), LenError> {
        let (v, h) = (self.b.len(), self.c.len());
        self.check(moves.to.len(), grad.len(), log_density.len())?;
        LenError::check("flipped", moves.to.len(), moves.flipped.len())?;
        LenError::check("counts", self.chains, moves.counts.len())?;
        let proposal = core::mem::take(&mut self.proposal);
        let rows = proposal
            .chunks_mut(h.max(1))
            .zip(self.current.chunks(h.max(1)))
            .zip(moves.to.chunks_exact(v))
            .zip(moves.flipped.chunks_exact(v))
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
        self.proposal = proposal;
        r
    }

    fn commit(&mut self, c: usize) {
        let h = self.c.len();
        if let (Some(cur), Some(new)) = (
            self.current.get_mut(c * h..(c + 1) * h),
            self.proposal.get(c * h..(c + 1) * h),
        ) {
            cur.copy_from_slice(new);
        }
    }
}

impl<P: Product, M: FlipMath> RbmBatch<'_, P, M> {
    /// Checks a batch's state, gradient and log-density lengths.
    fn check(&self, x: usize, grad: usize, log_density: usize) -> Result<(), LenError> {
        let nv = self.chains.saturating_mul(self.b.len());
        LenError::check("x", nv, x)?;
        LenError::check("grad", nv, grad)?;
        LenError::check("log_density", self.chains, log_density)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::StepReport;
    use crate::binary::{BatchBuffers, BatchDmala, BinaryChain, ChainBatch, Dmala, FlipProposal};
    use crate::chain::ChainBuffers;
    use rand_core::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;
    use std::vec;
    use std::vec::Vec;

    /// Batched DMALA with the portable product moves every chain exactly as single-chain DMALA
    /// on [`Rbm`] does: the same states, `U` and `∇U`, bit for bit (`H = 13` leaves short tiles).
    #[test]
    fn batched_steps_equal_single_chain_steps() {
        let (v, h, n) = (23, 13, 6);
        let w: Vec<f32> = (0..h * v)
            .map(|k| ((k * 37 % 101) as f32 - 50.0) * 0.03)
            .collect();
        let wt: Vec<f32> = (0..v * h).map(|k| w[(k % h) * v + k / h]).collect();
        let b: Vec<f32> = (0..v).map(|i| (i as f32 * 0.7).sin()).collect();
        let c: Vec<f32> = (0..h).map(|j| (j as f32 * 1.3).cos() * 0.5).collect();
        let proposal = FlipProposal::new(0.6, 0.5).unwrap();
        let rng = |c: usize| Xoshiro256PlusPlus::seed_from_u64(100 + c as u64);
        let start: Vec<u8> = {
            let mut r = rng(99);
            (0..n * v).map(|_| (r.next_u32() >> 31) as u8).collect()
        };
        // Single chains.
        let steps = 50;
        let mut single = Vec::new();
        for k in 0..n {
            let mut cache = vec![0.0; 2 * h];
            let mut rbm = Rbm::new(&w, &b, &c, &mut cache).unwrap();
            let mut x = start[k * v..(k + 1) * v].to_vec();
            let (mut g, mut y, mut gy, mut ch) =
                (vec![0.0; v], vec![0; v], vec![0.0; v], vec![0; v]);
            let buffers = ChainBuffers {
                x: &mut x,
                grad: &mut g,
                x_proposal: &mut y,
                grad_proposal: &mut gy,
                flipped: &mut ch,
            };
            let mut chain = BinaryChain::new(buffers, &mut rbm).unwrap();
            let mut r = rng(k);
            let mut trace = Vec::new();
            for _ in 0..steps {
                let rep = Dmala::new(proposal)
                    .step(&mut rbm, &mut chain, &mut r)
                    .unwrap();
                let grad: Vec<u32> = chain.grad().iter().map(|g| g.to_bits()).collect();
                trace.push((
                    chain.state().to_vec(),
                    chain.log_density().to_bits(),
                    grad,
                    rep,
                ));
            }
            single.push(trace);
        }
        // One batch.
        let mut cache1 = vec![0.0; 2 * h];
        let rbm = Rbm::new(&w, &b, &c, &mut cache1)
            .unwrap()
            .with_transpose(&wt)
            .unwrap();
        let (mut cache, mut sigma) = (vec![0.0; 2 * n * h], vec![0.0f32; n * h]);
        let mut target =
            RbmBatch::<Blocked>::new(&rbm, n, &mut cache, &mut sigma, Blocked).unwrap();
        let mut x = start.clone();
        let (mut g, mut y, mut gy) = (vec![0.0; n * v], vec![0; n * v], vec![0.0; n * v]);
        let (mut u, mut uy, mut lq, mut lu) =
            (vec![0.0; n], vec![0.0; n], vec![0.0; n], vec![0.0; n]);
        let (mut fl, mut counts) = (vec![0; n * v], vec![0; n]);
        let buffers = BatchBuffers {
            x: &mut x,
            grad: &mut g,
            log_density: &mut u,
            x_proposal: &mut y,
            grad_proposal: &mut gy,
            log_density_proposal: &mut uy,
            flipped: &mut fl,
            counts: &mut counts,
            log_q: &mut lq,
            log_u: &mut lu,
        };
        let mut batch = ChainBatch::new(buffers, &mut target).unwrap();
        let mut rngs: Vec<_> = (0..n).map(rng).collect();
        let empty = StepReport {
            accepted: false,
            proposed_flips: 0,
            log_accept_ratio: 0.0,
            rejection: None,
            evaluations: 0,
        };
        let mut reports = vec![empty; n];
        let kernel = BatchDmala::new(proposal);
        let mut accepted = 0;
        for s in 0..steps {
            kernel
                .step(&mut target, &mut batch, &mut rngs, &mut reports)
                .unwrap();
            for (k, trace) in single.iter().enumerate() {
                let (state, u, grad, rep) = &trace[s];
                assert_eq!(batch.state(k), state.as_slice(), "chain {k} step {s}");
                assert_eq!(batch.log_density(k).to_bits(), *u);
                let bits: Vec<u32> = batch.grad(k).iter().map(|g| g.to_bits()).collect();
                assert_eq!(&bits, grad);
                assert_eq!(reports[k], *rep);
                accepted += usize::from(rep.accepted && rep.proposed_flips > 0);
            }
        }
        assert!(accepted > 20, "the test must see moves: {accepted}");
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
