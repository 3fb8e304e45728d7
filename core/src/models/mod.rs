//! Binary models with incremental updates after a move, and the batched ordinal quadratic model.
//!
//! * [`IsingLattice`]: a 2-D nearest-neighbour Ising model, sized at compile time
//!   ([`ConstDims`]) or at run time ([`Dims`]), needing no buffers at all.
//! * [`IsingGraph`]: an Ising model on any graph given in compressed adjacency form.
//! * [`BinaryQuadratic`]: `U(x) = xᵀWx + bᵀx` over caller slices; [`QuadraticBatch`]
//!   evaluates it for many chains at once.
//! * [`BinaryLogistic`]: Bayesian logistic regression over binary coefficients;
//!   [`LogisticBatch`] evaluates it for many chains at once, its gradients one matrix–matrix
//!   product.
//! * [`Rbm`]: a restricted Boltzmann machine with the hidden units summed out, caching the
//!   hidden pre-activations; [`RbmBatch`] evaluates it for many chains at once, its gradients
//!   one matrix–matrix product. Its weights are `f32` or [`Bf16`] (half the bytes; any
//!   [`Weight`] format).
//! * [`OrdinalQuadraticBatch`]: `U(x) = −½(x−μ)ᵀA(x−μ) + bᵀx` over ordinal states for many
//!   chains at once (the single-chain model is in the standard adapter).
//!
//! After a move only the flipped coordinates' neighbours (lattice, graph), columns (quadratic)
//! or hidden pre-activations (RBM) are touched.

use crate::error::LenError;

mod ising_graph;
mod ising_lattice;
mod logistic;
mod logistic_batch;
mod ordinal_quadratic_batch;
mod quadratic;
mod quadratic_batch;
mod rbm;
mod rbm_batch;
mod weight;

pub use ising_graph::IsingGraph;
pub use ising_lattice::{ConstDims, Dims, IsingLattice, LatticeDims};
pub use logistic::BinaryLogistic;
pub use logistic_batch::LogisticBatch;
pub use ordinal_quadratic_batch::OrdinalQuadraticBatch;
pub use quadratic::BinaryQuadratic;
pub use quadratic_batch::QuadraticBatch;
pub use rbm::Rbm;
pub use rbm_batch::RbmBatch;
pub use weight::{Bf16, Weight};

/// A vector cached per state (linear predictors, a gradient, hidden pre-activations) for the
/// current state and a proposed one, in one caller buffer of `2n` doubles: a move fills the
/// proposal, a commit makes it current.
#[derive(Debug)]
struct Cache<'a> {
    current: &'a mut [f64],
    proposal: &'a mut [f64],
}

impl<'a> Cache<'a> {
    /// Splits `buf`, which must hold `2n` doubles.
    fn new(buf: &'a mut [f64], n: usize) -> Result<Self, LenError> {
        let expected = n.saturating_mul(2);
        let found = buf.len();
        LenError::check("cache", expected, found)?;
        match buf.split_at_mut_checked(n) {
            Some((current, proposal)) => Ok(Self { current, proposal }),
            None => Err(LenError {
                buffer: "cache",
                expected,
                found,
            }),
        }
    }

    /// The proposal, set to a copy of the current vector.
    fn propose(&mut self) -> &mut [f64] {
        crate::slices::copy(self.proposal, self.current);
        self.proposal
    }

    /// Makes the proposal current.
    fn commit(&mut self) {
        core::mem::swap(&mut self.current, &mut self.proposal);
    }
}

/// The spin change `s' − s` of a coordinate going from `from` to `to` (`s = 2x − 1`).
#[inline(always)]
fn spin_delta(from: u8, to: u8) -> f32 {
    2.0 * (f32::from(to) - f32::from(from))
}

/// The spin change of coordinate `i` under the move, if the move covers `i`.
#[inline(always)]
fn spin_change(mv: &crate::target::FlipMove<'_>, i: usize) -> Option<f32> {
    match (mv.from.get(i), mv.to.get(i)) {
        (Some(&from), Some(&to)) => Some(spin_delta(from, to)),
        _ => None,
    }
}

/// The per-flip update of a model whose gradient changes only near the flipped sites (the
/// Ising models): `grad` starts as the gradient before the move, then `flip(i, δ_i, grad)` is
/// called for each flipped site `i` in flip order with its spin change `δ_i`; it refreshes the
/// gradient entries it touches and returns its share of `ΔU`, summed in flip order. Returns the
/// log-density after the move, or `None`, leaving `grad` alone, when the move flips more than
/// one site in eight: a fresh evaluation is then cheaper than the per-flip updates (this also
/// bounds the cost of a step whatever the inputs).
#[inline(always)]
fn local_update(
    mv: &crate::target::FlipMove<'_>,
    grad: &mut [f32],
    dim: usize,
    mut flip: impl FnMut(usize, f32, &mut [f32]) -> f64,
) -> Option<f64> {
    if mv.flipped.len() * 8 > dim {
        return None;
    }
    for (g, &f) in grad.iter_mut().zip(mv.from_grad) {
        *g = f;
    }
    let mut delta_u = 0.0f64;
    for &i in mv.flipped {
        let i = i as usize;
        if let Some(delta) = spin_change(mv, i) {
            delta_u += flip(i, delta, grad);
        }
    }
    Some(mv.from_log_density + delta_u)
}

/// Checks batched targets against their single-chain models.
#[cfg(test)]
mod batch_testing {
    use crate::StepReport;
    use crate::batch::TestVecs;
    use crate::binary::{BatchDmala, BatchTarget, BinaryChain, ChainBatch, Dmala, FlipProposal};
    use crate::chain::ChainBuffers;
    use crate::target::BinaryTarget;
    use rand_core::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;
    use std::vec;
    use std::vec::Vec;

    /// Steps `singles.len()` single chains of DMALA and one batch of `batch` for `steps` steps
    /// from the same starts and streams; asserts equal states, reports and, if `exact`, equal
    /// `U` and `∇U` bit for bit (else within `1e-4` relative). Returns the accepted moves.
    pub(crate) fn compare<S: BinaryTarget, B: BatchTarget>(
        singles: &mut [S],
        batch: &mut B,
        step: f64,
        steps: usize,
        exact: bool,
    ) -> usize {
        let (n, d) = (singles.len(), batch.dim());
        let proposal = FlipProposal::new(step, 0.5).unwrap();
        let rng = |c: usize| Xoshiro256PlusPlus::seed_from_u64(100 + c as u64);
        let start: Vec<u8> = {
            let mut r = rng(99);
            (0..n * d).map(|_| (r.next_u32() >> 31) as u8).collect()
        };
        let mut traces = Vec::new();
        for (k, single) in singles.iter_mut().enumerate() {
            let mut x = start[k * d..(k + 1) * d].to_vec();
            let (mut g, mut y, mut gy, mut ch) =
                (vec![0.0; d], vec![0; d], vec![0.0; d], vec![0; d]);
            let buffers = ChainBuffers {
                x: &mut x,
                grad: &mut g,
                x_proposal: &mut y,
                grad_proposal: &mut gy,
                flipped: &mut ch,
            };
            let mut chain = BinaryChain::new(buffers, single).unwrap();
            let mut r = rng(k);
            let mut trace = Vec::new();
            for _ in 0..steps {
                let rep = Dmala::new(proposal)
                    .step(single, &mut chain, &mut r)
                    .unwrap();
                trace.push((
                    chain.state().to_vec(),
                    chain.log_density(),
                    chain.grad().to_vec(),
                    rep,
                ));
            }
            traces.push(trace);
        }
        let mut vecs = TestVecs::new(start.clone(), d);
        let mut chains = ChainBatch::new(vecs.buffers(), batch).unwrap();
        let mut rngs: Vec<_> = (0..n).map(rng).collect();
        let mut reports = vec![StepReport::default(); n];
        let kernel = BatchDmala::new(proposal);
        let mut accepted = 0;
        let close = |a: f64, e: f64| (a - e).abs() <= 1e-4 * (1.0 + e.abs());
        for s in 0..steps {
            kernel
                .step(batch, &mut chains, &mut rngs, &mut reports)
                .unwrap();
            for (k, trace) in traces.iter().enumerate() {
                let (state, u, grad, rep) = &trace[s];
                assert_eq!(chains.state(k), state.as_slice(), "chain {k} step {s}");
                if exact {
                    assert_eq!(chains.log_density(k).to_bits(), u.to_bits());
                    let bits = |v: &[f32]| v.iter().map(|g| g.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(chains.grad(k)), bits(grad), "chain {k} step {s}");
                    assert_eq!(reports[k], *rep);
                } else {
                    assert!(close(chains.log_density(k), *u), "chain {k} step {s}");
                    for (&a, &e) in chains.grad(k).iter().zip(grad) {
                        assert!(close(f64::from(a), f64::from(e)), "{a} vs {e}");
                    }
                    assert_eq!(reports[k].accepted, rep.accepted);
                }
                accepted += usize::from(rep.accepted && rep.proposed_flips > 0);
            }
        }
        accepted
    }
}
