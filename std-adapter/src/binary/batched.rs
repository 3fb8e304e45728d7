//! Chains of DULA/DMALA on a dense model stepped in lockstep groups, so that a group's
//! evaluations are matrix–matrix products (`sample --batch N`).
//!
//! Chains `0..N` form the first group, `N..2N` the second, and so on; a last, shorter group is
//! padded with spare chains to `N` rows (their draws are discarded), so that every product has
//! `N` rows. Chain `c` starts and draws from its own stream exactly as in
//! [`run_chains`](super::run_chains); only the evaluation of `U` and `∇U` differs, by model:
//!
//! * RBM ([`RbmBatch::incremental_f32`]): the hidden pre-activations are cached in `f32` and
//!   updated over the flipped units, and the gradients of a group are one product through
//!   [`Gemm`], whose rounding differs from the single-chain path;
//! * binary quadratic ([`QuadraticBatch::new`]): every chain's gradient is updated over its flips
//!   in `f64` as on the single-chain path, bit for bit (from rows of `W + Wᵀ`), so the draws are
//!   those of [`run_chains`](super::run_chains);
//! * logistic regression ([`LogisticBatch`]): the linear predictors and `U` as on the
//!   single-chain path, the gradients of a group one product `R · X` through [`Gemm`].
//!
//! Each step runs through [`crate::simd`]'s run-time dispatch (AVX-512 or AVX2 where the CPU has it), which does
//! not change its values. Where the product rounds, a chain's draws depend on the seed, its index and `N` (and on
//! whether the CPU has fused multiply–add, which the product uses when it can); never on the
//! thread count or the number of chains.

use super::model::BinaryModel;
use super::run::{BinaryRun, uniform_buffers};
use crate::run::Progress;
use crate::run::{
    BatchVecs, ChainResult, GroupJob, Lockstep, ModelError, RunConfig, RunError, run_groups,
};
use crate::samplers::{LangevinStep, Sampler};
use langevin_core::LenError;
use langevin_core::StepError;
use langevin_core::binary::{
    BatchLangevin, BatchTarget, Binary, ChainBatch, FlipProposal, StepReport,
};
use langevin_core::dense::{Product, Shape};
use langevin_core::models::{LogisticBatch, QuadraticBatch, Rbm, RbmBatch};
use nalgebra::{DMatrixView, DMatrixViewMut};
use rand_xoshiro::Xoshiro256PlusPlus;

/// The products of a group through `matrixmultiply` (by way of `nalgebra`'s `gemm`), which
/// picks AVX-512, AVX2/FMA (or AVX, SSE2) kernels at run time. The row-major buffers are viewed as
/// their column-major transposes, so nothing is copied.
#[derive(Clone, Copy, Debug, Default)]
pub struct Gemm;

impl Product for Gemm {
    fn matmul_acc(
        &mut self,
        shape: Shape,
        a: &[f32],
        b: &[f32],
        c: &mut [f32],
    ) -> Result<(), LenError> {
        shape.check(a.len(), b.len(), c.len())?;
        let Shape { m, k, n } = shape;
        if m == 0 || k == 0 || n == 0 {
            return Ok(());
        }
        // Row-major `C = A·B` is column-major `Cᵀ = Bᵀ·Aᵀ` on the same buffers. Contiguous
        // columns matter: `nalgebra`'s fallback for small shapes mishandles strided ones.
        let at = DMatrixView::from_slice(a, k, m);
        let bt = DMatrixView::from_slice(b, n, k);
        let mut ct = DMatrixViewMut::from_slice(c, n, m);
        ct.gemm(1.0, &bt, &at, 1.0);
        Ok(())
    }
}

/// Whether `sampler` on `model` has a batched path.
pub fn has_batched_path(model: &BinaryModel, sampler: &Sampler) -> bool {
    matches!(
        model,
        BinaryModel::Rbm { .. } | BinaryModel::Quadratic { .. } | BinaryModel::Logistic { .. }
    ) && sampler.langevin_step().is_some()
}

/// Runs `config.chains` chains of `sampler` on `model`, `batch` at a time (see the module
/// documentation). `progress`, if given, is advanced by one per chain-step.
///
/// # Errors
///
/// [`RunError::NoBatchedPath`] for a model or sampler without a batched path;
/// [`RunError::Param`] for invalid parameters or `batch = 0`; [`RunError::Group`] for a start
/// where the model is not finite.
pub fn run_chains_batched(
    model: &BinaryModel,
    sampler: &Sampler,
    config: &RunConfig,
    batch: usize,
    progress: Option<&Progress>,
) -> Result<BinaryRun, RunError> {
    let LangevinStep {
        step,
        balance,
        adjusted,
        ..
    } = sampler.batched_step(model.kind(), has_batched_path(model, sampler))?;
    let proposal =
        FlipProposal::<crate::FlipMathImpl>::with_math(step, balance).map_err(RunError::Param)?;
    let v = model.dim();
    // The batched RBM reads the f32 copy of its weights (also for bf16 ones): its f32 `Wᵀ`.
    let wt = match model {
        BinaryModel::Rbm { w, b, c, .. } => crate::models::rbm_transpose(w, b.len(), c.len()),
        _ => Vec::new(),
    };
    let model = match model {
        BinaryModel::Rbm { w, b, c, .. } => Prepared::Rbm(Dense { w, wt: &wt, b, c }),
        BinaryModel::Quadratic { w, b } => Prepared::Quadratic { w, b },
        BinaryModel::Logistic { x, y } => Prepared::Logistic { x, y },
        _ => return Err(RunError::no_batched_path(model.kind(), sampler.name())),
    };
    let chains = run_groups(config, batch, progress, |job| {
        if adjusted {
            model_group::<true>(&model, proposal, &job)
        } else {
            model_group::<false>(&model, proposal, &job)
        }
    })?;
    Ok(BinaryRun::new(v, chains))
}

/// A model with a batched path, as its groups need it.
enum Prepared<'m> {
    /// An RBM.
    Rbm(Dense<'m>),
    /// A binary quadratic model.
    Quadratic { w: &'m [f32], b: &'m [f32] },
    /// A logistic regression.
    Logistic { x: &'m [f32], y: &'m [f32] },
}

/// Runs one group of `model` through [`run_group`] with the model's batched target.
fn model_group<const ADJUSTED: bool>(
    model: &Prepared<'_>,
    proposal: FlipProposal<'static, crate::FlipMathImpl>,
    job: &GroupJob<'_>,
) -> Result<Vec<ChainResult>, RunError> {
    let n = job.rows.len();
    match *model {
        Prepared::Rbm(ref dense) => {
            let (v, h) = (dense.b.len(), dense.c.len());
            let mut one = vec![0.0f64; 2 * h].into_boxed_slice();
            let rbm = Rbm::new(dense.w, dense.b, dense.c, &mut one)
                .and_then(|r| r.with_transpose(dense.wt))
                .map_err(|e| job.model_err(e))?;
            let (cache_len, index_len) = RbmBatch::incremental_f32_lengths(v, h, n);
            let (mut cache, mut sigma) = (vec![0.0f32; cache_len], vec![0.0f32; n * h]);
            let mut index = vec![0u32; index_len];
            let mut target = RbmBatch::<Gemm, crate::FlipMathImpl>::incremental_f32(
                &rbm, n, &mut cache, &mut index, &mut sigma, Gemm,
            )
            .map_err(RunError::Param)?;
            run_group::<_, ADJUSTED>(&mut target, proposal, job)
        }
        Prepared::Quadratic { w, b } => {
            let d = b.len();
            let mut s = vec![0.0f64; d * d];
            let mut cache = vec![0.0f64; 2 * n * (d + 1)];
            let mut target = QuadraticBatch::<Gemm>::new(w, b, n, &mut s, &mut cache)
                .map_err(RunError::Param)?;
            run_group::<_, ADJUSTED>(&mut target, proposal, job)
        }
        Prepared::Logistic { x, y } => {
            let m = y.len();
            let mut xt = vec![0.0f64; x.len()];
            let (mut cache, mut residual) = (vec![0.0f64; 2 * n * m], vec![0.0f32; n * m]);
            let mut target = LogisticBatch::new(x, y, n, &mut xt, &mut cache, &mut residual, Gemm)
                .map_err(RunError::Param)?;
            run_group::<_, ADJUSTED>(&mut target, proposal, job)
        }
    }
}

/// An RBM's parameters with `Wᵀ`.
struct Dense<'m> {
    w: &'m [f32],
    wt: &'m [f32],
    b: &'m [f32],
    c: &'m [f32],
}

/// Runs the group of `job` on `target` (of as many chains as the group has rows) for the
/// burn-in and kept phase of the run, and returns the real chains' results in order.
fn run_group<T: BatchTarget, const ADJUSTED: bool>(
    target: &mut T,
    proposal: FlipProposal<'static, crate::FlipMathImpl>,
    job: &GroupJob<'_>,
) -> Result<Vec<ChainResult>, RunError> {
    let (v, n) = (target.dim(), job.rows.len());
    let mut rngs = Vec::with_capacity(n);
    let mut x = Vec::with_capacity(n * v);
    for (_, mut rng) in job.rows.iter().cloned() {
        x.extend_from_slice(&uniform_buffers(v, &mut rng).x);
        rngs.push(rng);
    }
    let mut vecs = BatchVecs::<Binary>::new(x, v);
    let batch = ChainBatch::new(vecs.buffers(), target).map_err(|e| job.model_err(e))?;
    let kernel = BatchLangevin::<_, ADJUSTED>::new(proposal);
    job.drive(&mut Group {
        kernel: &kernel,
        target,
        batch,
        rngs,
    })
}

/// A group's kernel, target, chains and streams, stepped through [`crate::simd::dispatch`] (as
/// the per-chain loops are, so that the step's element-wise loops (the proposal, the
/// pre-activation updates, the hidden terms) use AVX-512 or AVX2 where the CPU has it; without fused
/// multiply–add in those loops their values do not depend on the dispatch).
struct Group<'k, 'b, T: BatchTarget, const ADJUSTED: bool> {
    kernel: &'k BatchLangevin<FlipProposal<'static, crate::FlipMathImpl>, ADJUSTED>,
    target: &'k mut T,
    batch: ChainBatch<'b>,
    rngs: Vec<Xoshiro256PlusPlus>,
}

impl<T: BatchTarget, const ADJUSTED: bool> Lockstep for Group<'_, '_, T, ADJUSTED> {
    type Value = u8;

    fn step(&mut self, reports: &mut [StepReport]) -> Result<(), ModelError> {
        let mut step = Step {
            kernel: self.kernel,
            target: &mut *self.target,
            batch: &mut self.batch,
            rngs: &mut self.rngs,
            reports,
        };
        crate::simd::dispatch(&mut step).map_err(ModelError::evaluation)
    }

    fn state(&self, c: usize) -> &[u8] {
        self.batch.state(c)
    }

    fn log_density(&self, c: usize) -> f64 {
        self.batch.log_density(c)
    }

    fn jump(&self, _: usize, report: &StepReport) -> u64 {
        u64::from(report.accepted_flips())
    }
}

/// One step of a batch, for [`crate::simd::dispatch`]: everything the step inlines is compiled
/// for the dispatched instruction set.
struct Step<'k, 'b, 'c, T: BatchTarget, const ADJUSTED: bool> {
    kernel: &'k BatchLangevin<FlipProposal<'static, crate::FlipMathImpl>, ADJUSTED>,
    target: &'k mut T,
    batch: &'k mut ChainBatch<'b>,
    rngs: &'c mut [Xoshiro256PlusPlus],
    reports: &'c mut [StepReport],
}

impl<T: BatchTarget, const ADJUSTED: bool> crate::simd::HotLoop for Step<'_, '_, '_, T, ADJUSTED> {
    type Output = Result<(), StepError<T::Error>>;

    #[inline(always)]
    fn run(&mut self) -> Self::Output {
        self.kernel
            .step(self.target, self.batch, self.rngs, self.reports)
    }
}
