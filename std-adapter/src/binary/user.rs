//! Chains of a binary kernel on a target the caller supplies (a user's log-density behind a
//! foreign-language callback, say), with the starts, streams, kernels and run loop of
//! [`run_chains`](super::run_chains).

use super::run::{BinaryRun, kernel_chain, uniform_buffers};
use crate::kernels::ForTarget;
use crate::run::{ChainDriver, ChainResult, Keep, Keeper, ModelError, RunConfig, RunError, drive};
use crate::run::{Checkpoint, Progress};
use crate::samplers::{Domain, RunShape, Sampler, SamplerError};
use langevin_core::BinaryTarget;
use rand_xoshiro::Xoshiro256PlusPlus;

/// Runs `config.chains` chains of `sampler` on the targets `make` builds (`make(c)` for chain
/// `c`, called on the worker that runs the chain), each `dim` coordinates.
///
/// Chain `c` starts, draws its randomness and steps as [`run_chains`](super::run_chains) does
/// on a model with no fast path (every evaluation goes through the target), so its draws
/// depend only on the seed and on the values the target returns. The chains run on
/// `config.threads` workers; a target that serves several chains' evaluations at once (one
/// call for every chain waiting) needs as many workers as chains. With a `checkpoint`, the
/// chains save snapshots to it and continue from the records it was resumed from.
///
/// Every sampler of the registry but block Gibbs (RBM models only) applies.
///
/// # Errors
///
/// [`RunError::Param`] for invalid parameters, [`RunError::Sampler`] for block Gibbs,
/// [`RunError::Chain`] for a start where the target is not finite and for a target's error.
pub fn run_target_chains<T, F>(
    dim: usize,
    sampler: &Sampler,
    config: &RunConfig,
    progress: Option<&Progress>,
    checkpoint: Option<&Checkpoint>,
    make: F,
) -> Result<BinaryRun, RunError>
where
    T: BinaryTarget,
    F: Fn(usize) -> Result<T, RunError> + Sync,
{
    if !sampler.runs_on_any_target() {
        return Err(SamplerError::RbmOnly.into());
    }
    let shape = config.shape(dim);
    sampler
        .validate(Domain::Binary, &shape)
        .map_err(RunError::Param)?;
    let cap = shape.burn_in.saturating_add(shape.steps);
    let run = config.map_chains(|c, rng| -> Result<ChainResult, RunError> {
        let mut target = make(c)?;
        let keep = Keep {
            checkpoint,
            ..Keep::all()
        };
        let keeper = Keeper::new(keep, c, dim);
        with_target_chain(&mut target, dim, sampler, &shape, c, rng, |driver| {
            drive(driver, config, cap, progress, keeper)
        })
    })?;
    Ok(BinaryRun::new(dim, run))
}

/// Builds chain `c` on `target` as [`with_chain`](super::with_chain) does on a model without
/// fast paths, and hands its driver to `f`.
fn with_target_chain<T: BinaryTarget, O>(
    target: &mut T,
    dim: usize,
    sampler: &Sampler,
    shape: &RunShape,
    c: usize,
    mut rng: Xoshiro256PlusPlus,
    f: impl FnOnce(&mut dyn ChainDriver<Value = u8>) -> Result<O, RunError>,
) -> Result<O, RunError> {
    if target.dim() != dim {
        return Err(RunError::Chain {
            chain: c,
            error: ModelError::TargetLength {
                target: target.dim(),
                run: dim,
            },
        });
    }
    let buffers = uniform_buffers(dim, &mut rng);
    let driver = sampler
        .driver(Domain::Binary, shape.burn_in)
        .map_err(RunError::Param)?;
    let kernel = sampler
        .kernel_for::<ForTarget<_>>(shape)
        .map_err(RunError::Param)?;
    kernel_chain(target, buffers, driver, kernel, (c, rng), |_, d| f(d))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::binary::{BinaryModel, ModelTarget, run_chains};
    use langevin_core::FlipMove;

    /// A model's target behind a caller's type: what a foreign callback looks like to the
    /// runner.
    struct Borrowed<'a>(ModelTarget<'a>);

    impl BinaryTarget for Borrowed<'_> {
        type Error = <ModelTarget<'static> as BinaryTarget>::Error;
        fn dim(&self) -> usize {
            self.0.dim()
        }
        fn log_density_and_grad(&mut self, x: &[u8], grad: &mut [f32]) -> Result<f64, Self::Error> {
            self.0.log_density_and_grad(x, grad)
        }
        fn log_density_and_grad_after(
            &mut self,
            mv: &FlipMove<'_>,
            grad: &mut [f32],
        ) -> Result<f64, Self::Error> {
            self.0.log_density_and_grad_after(mv, grad)
        }
        fn commit(&mut self) {
            self.0.commit();
        }
    }

    /// `model`'s target over a cache of its own (leaked: the tests' targets outlive no run),
    /// as a caller's target.
    fn borrowed(model: &BinaryModel) -> Result<Borrowed<'_>, RunError> {
        let cache = Box::leak(vec![0.0; model.cache_len()].into_boxed_slice());
        Ok(Borrowed(
            model.target(cache).map_err(|e| RunError::Model(e.into()))?,
        ))
    }

    fn quadratic() -> BinaryModel {
        let d = 7;
        let w: Vec<f32> = (0..d * d)
            .map(|k| {
                let (i, j) = (k / d, k % d);
                if i == j {
                    0.0
                } else {
                    0.3 * (((i * 3 + j * 5) % 7) as f32 - 3.0) / 3.0
                }
            })
            .collect();
        let w = (0..d * d)
            .map(|k| 0.5 * (w[k] + w[(k % d) * d + k / d]))
            .collect();
        let b = (0..d).map(|i| 0.2 * i as f32 - 0.6).collect();
        BinaryModel::Quadratic { w, b }
    }

    #[test]
    fn a_caller_target_moves_as_the_model_it_evaluates() {
        let model = quadratic();
        let config = RunConfig {
            steps: 300,
            burn_in: 50,
            thin: 1,
            chains: 3,
            seed: 5,
            threads: 2,
            first_chain: 0,
        };
        for sampler in [
            Sampler::named("dmala", |p| p.step = 0.4),
            Sampler::named("gwg", |_| {}),
            Sampler::named("ab", |p| p.step = 0.2),
            Sampler::named("pt-dmala", |p| p.replicas = 3),
        ] {
            let sampler = sampler.unwrap();
            let expected = run_chains(&model, &sampler, &config, None, Keep::all()).unwrap();
            let got = run_target_chains(model.dim(), &sampler, &config, None, None, |_| {
                borrowed(&model)
            })
            .unwrap();
            for (a, b) in expected.chains.iter().zip(&got.chains) {
                assert_eq!(a.draws, b.draws, "{sampler:?}");
                assert_eq!(a.stats.accepted, b.stats.accepted, "{sampler:?}");
            }
            assert!(expected.stats().accepted > 0);
        }
    }

    #[test]
    fn block_gibbs_and_a_wrong_dimension_are_refused() {
        let model = quadratic();
        let config = RunConfig {
            steps: 10,
            burn_in: 0,
            thin: 1,
            chains: 1,
            seed: 0,
            threads: 1,
            first_chain: 0,
        };
        let make = |_| borrowed(&model);
        let block_gibbs = Sampler::named("block-gibbs", |_| {}).unwrap();
        let gibbs = run_target_chains(7, &block_gibbs, &config, None, None, make);
        assert!(matches!(
            gibbs,
            Err(RunError::Sampler(SamplerError::RbmOnly))
        ));
        let gwg = Sampler::named("gwg", |_| {}).unwrap();
        let wrong = run_target_chains(6, &gwg, &config, None, None, make);
        assert!(matches!(
            wrong,
            Err(RunError::Chain {
                chain: 0,
                error: ModelError::TargetLength { target: 7, run: 6 }
            })
        ));
    }
}
