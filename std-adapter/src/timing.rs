//! Per-step cost of a binary sampler on a model: warm-up, timed repeats, median and spread.

use crate::binary::{BinaryModel, transpose_for, with_chain};
use crate::run::{ChainDriver, RunError};
use crate::samplers::{RunShape, Sampler};
use crate::seeding::chain_rng;
use langevin_core::stats::ChainStats;
use std::fmt;
use std::time::Instant;

/// Why a timing could not be taken.
#[derive(Debug)]
pub enum TimingError {
    /// Invalid sampler parameters.
    Param(langevin_core::ParamError),
    /// The model could not be set up or evaluated, or the chain failed otherwise.
    Run(RunError),
    /// Zero steps or repeats were asked for.
    Empty(&'static str),
}

impl fmt::Display for TimingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Param(e) => e.fmt(f),
            Self::Run(e) => e.fmt(f),
            Self::Empty(what) => write!(f, "{what} must be at least 1"),
        }
    }
}

impl std::error::Error for TimingError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Param(e) => Some(e),
            Self::Run(e) => Some(e),
            Self::Empty(_) => None,
        }
    }
}

/// Timings of one chain: `ns_per_step[r]` is repeat `r`'s wall time divided by its steps.
#[derive(Clone, Debug, PartialEq)]
pub struct StepTiming {
    /// The dimension `d`.
    pub dim: usize,
    /// The kernel that was timed (the one `sample` runs for this sampler and model).
    pub kernel: &'static str,
    /// Untimed steps before the first repeat.
    pub warm_up: u64,
    /// Steps per timed repeat.
    pub steps: u64,
    /// Nanoseconds per step, one entry per repeat, in the order they ran.
    pub ns_per_step: Vec<f64>,
    /// Step totals over the timed repeats.
    pub stats: ChainStats,
}

impl StepTiming {
    fn sorted(&self) -> Vec<f64> {
        let mut v = self.ns_per_step.clone();
        v.sort_by(f64::total_cmp);
        v
    }

    /// Median nanoseconds per step over the repeats (mean of the middle two for an even count).
    pub fn median(&self) -> f64 {
        let v = self.sorted();
        match v.len() {
            0 => f64::NAN,
            n if n % 2 == 1 => v[n / 2],
            n => 0.5 * (v[n / 2 - 1] + v[n / 2]),
        }
    }

    /// Fastest repeat, nanoseconds per step.
    pub fn min(&self) -> f64 {
        self.sorted().first().copied().unwrap_or(f64::NAN)
    }

    /// Slowest repeat, nanoseconds per step.
    pub fn max(&self) -> f64 {
        self.sorted().last().copied().unwrap_or(f64::NAN)
    }

    /// Median nanoseconds per step and coordinate.
    pub fn ns_per_coordinate_step(&self) -> f64 {
        self.median() / self.dim.max(1) as f64
    }
}

/// Times one chain of `sampler` on `model` exactly as [`run_chains`](crate::binary::run_chains)
/// runs it (the same start, kernel selection and fast paths, so a lattice's tabulated DMALA and
/// checkerboard Gibbs sweep, and the other models' single-flip Gibbs, are what is timed):
/// `warm_up` untimed steps (a tuned sampler
/// adapts during them and is frozen after), then `repeats` timed runs of `steps` steps each,
/// continuing the same chain. The chain is chain 0 of a run seeded with `seed`; it keeps no
/// draws, so the time is the step's alone.
///
/// # Errors
///
/// [`TimingError`] for invalid parameters, zero steps or repeats, or a model that cannot be
/// evaluated at the start.
pub fn time_steps(
    model: &BinaryModel,
    sampler: &Sampler,
    warm_up: u64,
    steps: u64,
    repeats: usize,
    seed: u64,
) -> Result<StepTiming, TimingError> {
    if steps == 0 {
        return Err(TimingError::Empty("steps"));
    }
    if repeats == 0 {
        return Err(TimingError::Empty("repeats"));
    }
    let shape = RunShape {
        dim: model.dim(),
        burn_in: warm_up,
        steps: steps.saturating_mul(repeats as u64),
    };
    let timed = |kernel: &'static str, driver: &mut dyn ChainDriver<Value = u8>| {
        let mut warm_stats = ChainStats::default();
        for _ in 0..warm_up {
            warm_stats.record(&driver.step()?.0);
        }
        driver.stop_tuning();
        let mut stats = ChainStats::default();
        let mut ns_per_step = Vec::with_capacity(repeats);
        for _ in 0..repeats {
            let start = Instant::now();
            for _ in 0..steps {
                stats.record(&driver.step()?.0);
            }
            ns_per_step.push(start.elapsed().as_nanos() as f64 / steps as f64);
        }
        std::hint::black_box(&warm_stats);
        Ok(StepTiming {
            dim: shape.dim,
            kernel,
            warm_up,
            steps,
            ns_per_step,
            stats,
        })
    };
    let wt = transpose_for(model, sampler);
    with_chain((model, &wt), sampler, &shape, 0, chain_rng(seed, 0), timed).map_err(|e| match e {
        RunError::Param(e) => TimingError::Param(e),
        e => TimingError::Run(e),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use langevin_core::models::{Dims, IsingLattice};

    #[test]
    fn timings_are_positive_and_ordered() {
        let model = BinaryModel::Lattice(
            IsingLattice::with_dims(Dims { rows: 8, cols: 8 }, 0.3, 0.0, true).unwrap(),
        );
        let spec = Sampler::named("dmala", |p| p.step = 0.2).unwrap();
        let t = time_steps(&model, &spec, 100, 500, 4, 1).unwrap();
        assert_eq!(t.ns_per_step.len(), 4);
        assert_eq!(t.stats.steps, 2000);
        assert!(t.min() > 0.0 && t.min() <= t.median() && t.median() <= t.max());
        assert!((t.ns_per_coordinate_step() - t.median() / 64.0).abs() < 1e-9);
        assert!(matches!(
            time_steps(&model, &spec, 0, 0, 1, 1),
            Err(TimingError::Empty("steps"))
        ));
        // Checked by the runner too, for a sampler built without the registry's checks.
        let mut params = crate::samplers::SamplerParams::DEFAULT;
        params.step = -1.0;
        let bad = Sampler::new(crate::samplers::find("dula").unwrap(), params);
        assert!(matches!(
            time_steps(&model, &bad, 0, 10, 1, 1),
            Err(TimingError::Param(_))
        ));
    }

    #[test]
    fn median_of_even_and_odd_counts() {
        let mut t = StepTiming {
            dim: 1,
            kernel: "dmala",
            warm_up: 0,
            steps: 1,
            ns_per_step: vec![3.0, 1.0, 2.0],
            stats: ChainStats::default(),
        };
        assert_eq!(t.median(), 2.0);
        t.ns_per_step.push(10.0);
        assert_eq!(t.median(), 2.5);
        assert_eq!((t.min(), t.max()), (1.0, 10.0));
    }
}
