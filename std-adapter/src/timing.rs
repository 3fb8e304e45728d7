//! Per-step cost of a binary sampler on a model: warm-up, timed repeats, median and spread.

use crate::binary::{BinaryModel, SamplerSpec, uniform_buffers};
use crate::seeding::chain_rng;
use langevin_core::Kernel;
use langevin_core::binary::BinaryChain;
use langevin_core::stats::ChainStats;
use std::fmt;
use std::time::Instant;

/// Why a timing could not be taken.
#[derive(Debug)]
pub enum TimingError {
    /// Invalid sampler parameters.
    Param(langevin_core::ParamError),
    /// The model could not be set up or evaluated.
    Model(String),
    /// Zero steps or repeats were asked for.
    Empty(&'static str),
}

impl fmt::Display for TimingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Param(e) => e.fmt(f),
            Self::Model(e) => f.write_str(e),
            Self::Empty(what) => write!(f, "{what} must be at least 1"),
        }
    }
}

impl std::error::Error for TimingError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Param(e) => Some(e),
            _ => None,
        }
    }
}

/// Timings of one chain: `ns_per_step[r]` is repeat `r`'s wall time divided by its steps.
#[derive(Clone, Debug, PartialEq)]
pub struct StepTiming {
    /// The dimension `d`.
    pub dim: usize,
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

/// Times one chain of `sampler` on `model`: `warm_up` untimed steps from a uniform random
/// start, then `repeats` timed runs of `steps` steps each, continuing the same chain. The chain
/// uses the stream of chain 0 under `seed` and keeps no draws, so the time is the kernel's and
/// the model's alone.
///
/// # Errors
///
/// [`TimingError`] for invalid parameters, zero steps or repeats, or a model that cannot be
/// evaluated at the start.
pub fn time_steps(
    model: &BinaryModel,
    sampler: &SamplerSpec,
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
    let d = model.dim();
    let mut rng = chain_rng(seed, 0);
    let mut cache = vec![0.0f64; model.cache_len()];
    let mut target = model.target(&mut cache).map_err(TimingError::Model)?;
    let mut kernel = sampler.kernel().map_err(TimingError::Param)?;
    let mut buffers = uniform_buffers(d, &mut rng);
    let mut chain = BinaryChain::new(buffers.buffers(), &mut target)
        .map_err(|e| TimingError::Model(e.to_string()))?;
    let model_error = |e: langevin_core::binary::StepError<_>| TimingError::Model(e.to_string());
    let mut warm_stats = ChainStats::default();
    for _ in 0..warm_up {
        let report = kernel
            .step(&mut target, &mut chain, &mut rng)
            .map_err(model_error)?;
        warm_stats.record(&report);
    }
    let mut stats = ChainStats::default();
    let mut ns_per_step = Vec::with_capacity(repeats);
    for _ in 0..repeats {
        let start = Instant::now();
        for _ in 0..steps {
            let report = kernel
                .step(&mut target, &mut chain, &mut rng)
                .map_err(model_error)?;
            stats.record(&report);
        }
        ns_per_step.push(start.elapsed().as_nanos() as f64 / steps as f64);
    }
    std::hint::black_box(&warm_stats);
    Ok(StepTiming {
        dim: d,
        warm_up,
        steps,
        ns_per_step,
        stats,
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
        let spec = SamplerSpec::Dmala {
            step: 0.2,
            balance: 0.5,
        };
        let t = time_steps(&model, &spec, 100, 500, 4, 1).unwrap();
        assert_eq!(t.ns_per_step.len(), 4);
        assert_eq!(t.stats.steps, 2000);
        assert!(t.min() > 0.0 && t.min() <= t.median() && t.median() <= t.max());
        assert!((t.ns_per_coordinate_step() - t.median() / 64.0).abs() < 1e-9);
        assert!(matches!(
            time_steps(&model, &spec, 0, 0, 1, 1),
            Err(TimingError::Empty("steps"))
        ));
        let bad = SamplerSpec::Dula {
            step: -1.0,
            balance: 0.5,
        };
        assert!(matches!(
            time_steps(&model, &bad, 0, 10, 1, 1),
            Err(TimingError::Param(_))
        ));
    }

    #[test]
    fn median_of_even_and_odd_counts() {
        let mut t = StepTiming {
            dim: 1,
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
