//! Replica exchange as one chain of the run loop: the replicas' buffers live here, the cold
//! chain's states are the draws.

use super::Progress;
use super::{
    ChainDriver, ChainResult, ChainVecs, CheckpointError, DriverState, Jump, Keeper, ModelError,
    RunConfig, RunError, Saved, Stepped, drive, misfit,
};
use crate::FlipMathImpl;
use langevin_core::tempering::{LadderSettings, ReplicaBuffers, Replicas, SwapStats};
use langevin_core::tuning::{AcceptanceTuner, ScaledDmala};
use langevin_core::{Chain, Eval};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde_json::{Value, json};
use std::fmt::Display;

/// The replicas of one run: how many, and the ladder's settings.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ReplicaPlan {
    /// Replicas `R ≥ 1`.
    pub(crate) replicas: usize,
    /// The ladder's settings (budget: the burn-in).
    pub(crate) settings: LadderSettings,
}

struct ReplicaDriver<'r, 'c, 't, D: ScaledDmala, T: ?Sized> {
    replicas: Replicas<'r, 'c, D, FlipMathImpl>,
    target: &'t mut T,
    rng: Xoshiro256PlusPlus,
    previous: Vec<D::Value>,
}

impl<D, T> ChainDriver for ReplicaDriver<'_, '_, '_, D, T>
where
    D: ScaledDmala + Jump,
    T: Eval<D> + ?Sized,
    T::Error: Display,
{
    type Value = D::Value;
    fn step(&mut self) -> Stepped {
        if let Some(c) = self.replicas.cold() {
            self.previous.copy_from_slice(c.state());
        }
        let r = self
            .replicas
            .sweep(&mut *self.target, &mut self.rng)
            .map_err(RunError::evaluation)?;
        Ok((r.cold, D::jump(&self.previous, self.state())))
    }
    fn state(&self) -> &[D::Value] {
        self.replicas.cold().map_or(&[], Chain::state)
    }
    fn log_density(&self) -> Option<f64> {
        self.replicas.cold().map(Chain::log_density)
    }
    fn is_tuning(&self) -> bool {
        !self.replicas.is_frozen()
    }
    fn stop_tuning(&mut self) {
        self.replicas.freeze();
    }
    fn tuned(&self) -> Option<Value> {
        Some(replicas_json(&self.replicas))
    }
    // Every evaluation of a replica is a full one: its state, its temperature and the ladder's
    // words are everything, and a replica moved back to its state has the bits it had.
    fn save(&self) -> Result<DriverState, CheckpointError> {
        let chains = self.replicas.chains();
        let mut words = vec![0u64; Replicas::<D, FlipMathImpl>::words_len(chains.len())];
        self.replicas
            .save_words(&mut words)
            .map_err(|e| CheckpointError::Unsupported {
                what: format!("pt-dmala's ladder ({e})"),
            })?;
        Ok(DriverState {
            state: chains
                .iter()
                .flat_map(|c| c.state().iter().map(|&v| v.to_word()))
                .collect(),
            rng: self.rng.clone(),
            kernel: json!(words),
            log_density: self.log_density().map(f64::to_bits),
            grad: Vec::new(),
            sums: Vec::new(),
        })
    }
    fn restore(&mut self, saved: &DriverState) -> Result<(), RunError> {
        let words: Vec<u64> =
            serde_json::from_value(saved.kernel.clone()).map_err(|_| misfit("kernel state"))?;
        let x: Vec<D::Value> = saved.values().ok_or_else(|| misfit("state"))?;
        let d = self.previous.len();
        if d == 0 || x.len() != d * self.replicas.chains().len() {
            return Err(misfit("state"));
        }
        self.replicas
            .restore_words(&words)
            .map_err(RunError::restoring)?;
        for (r, state) in x.chunks_exact(d).enumerate() {
            self.replicas
                .restart(r, state, &mut *self.target)
                .map_err(RunError::restoring)?;
        }
        let (fresh, u) = (
            self.log_density().unwrap_or(f64::NAN),
            saved.log_density.map_or(f64::NAN, f64::from_bits),
        );
        if fresh.to_bits() != u.to_bits() {
            return Err(CheckpointError::Restore(ModelError::NotTheSavedTarget {
                fresh,
                saved: u,
            })
            .into());
        }
        self.rng = saved.rng.clone();
        Ok(())
    }
}

/// The ladder, the swap rates of the kept phase and each replica's step, as JSON.
fn replicas_json<D: ScaledDmala>(r: &Replicas<'_, '_, D, FlipMathImpl>) -> Value {
    let reports: Vec<_> = r
        .tuners()
        .iter()
        .map(AcceptanceTuner::report_for::<D>)
        .collect();
    json!({
        "betas": r.betas(),
        "swap_rates": r.swaps().iter().map(SwapStats::rate).collect::<Vec<_>>(),
        "swaps_accepted": r.swaps().iter().map(|s| s.accepted).collect::<Vec<_>>(),
        "swaps_proposed": r.swaps().iter().map(|s| s.attempts).collect::<Vec<_>>(),
        "expected_changes": reports.iter().map(|t| t.changes).collect::<Vec<_>>(),
        "steps": reports.iter().map(|t| t.step).collect::<Vec<_>>(),
        "log_scales": reports.iter().map(|t| t.log_scale).collect::<Vec<_>>(),
        "sweeps": r.sweeps(),
        "frozen": r.is_frozen(),
    })
}

/// One replica-exchange chain of `target` from `x0` (every replica starts there), driven
/// through burn-in and the kept phase like any chain.
#[allow(clippy::too_many_arguments, reason = "one call site per domain")]
pub(crate) fn drive_replicas<D, T>(
    target: &mut T,
    x0: &[D::Value],
    plan: ReplicaPlan,
    config: &RunConfig,
    rng: Xoshiro256PlusPlus,
    progress: Option<&Progress>,
    chain_index: usize,
    keeper: Keeper<'_, D::Value>,
) -> Result<ChainResult<D::Value>, RunError>
where
    D: ScaledDmala + Jump,
    D::Value: Into<u64>,
    T: Eval<D> + ?Sized,
    T::Error: Display,
{
    with_replicas(target, x0, plan, rng, chain_index, |driver| {
        drive(driver, config, 0, progress, keeper)
    })
}

/// Builds the replica-exchange chain of [`drive_replicas`] and hands its driver to `f`.
pub(crate) fn with_replicas<D, T, O>(
    target: &mut T,
    x0: &[D::Value],
    plan: ReplicaPlan,
    rng: Xoshiro256PlusPlus,
    chain_index: usize,
    f: impl FnOnce(&mut dyn ChainDriver<Value = D::Value>) -> Result<O, RunError>,
) -> Result<O, RunError>
where
    D: ScaledDmala + Jump,
    T: Eval<D> + ?Sized,
    T::Error: Display,
{
    let r = plan.replicas.max(1);
    let states = target.states();
    let mut buffers: Vec<ChainVecs<D::Value>> = (0..r)
        .map(|_| ChainVecs::for_domain::<D>(x0, states))
        .collect::<Option<_>>()
        .ok_or(RunError::Chain {
            chain: chain_index,
            error: ModelError::TooLarge,
        })?;
    let mut chains: Vec<Chain<'_, D>> = buffers
        .iter_mut()
        .map(|b| Chain::new(b.buffers(), &mut *target))
        .collect::<Result<_, _>>()
        .map_err(RunError::at_chain(chain_index))?;
    let tuner =
        AcceptanceTuner::<FlipMathImpl>::with_math(Default::default()).map_err(RunError::Param)?;
    let (mut betas, mut log_densities, mut tuners) = (vec![0.0; r], vec![0.0; r], vec![tuner; r]);
    let (mut log_gaps, mut swaps) = (vec![0.0; r - 1], vec![SwapStats::default(); r - 1]);
    let buffers = ReplicaBuffers {
        chains: &mut chains,
        betas: &mut betas,
        log_densities: &mut log_densities,
        tuners: &mut tuners,
        log_gaps: &mut log_gaps,
        swaps: &mut swaps,
    };
    let replicas = Replicas::new(buffers, plan.settings, &mut *target)
        .map_err(RunError::at_chain(chain_index))?;
    let mut driver = ReplicaDriver {
        replicas,
        target,
        rng,
        previous: x0.to_vec(),
    };
    f(&mut driver)
}
