//! Chains stepped by sweeps on a raw state: Gibbs through a model's single-site conditional or
//! fast path, the checkerboard sweep of a lattice, block Gibbs on an RBM. None tracks `U` or
//! needs a kernel chain, so one driver serves them all.

use super::{
    ChainDriver, CheckpointError, DriverState, RunError, Saved, Stepped, restore_raw, save_raw,
};
use crate::simd::HotLoop;
use rand_xoshiro::Xoshiro256PlusPlus;

/// A move of the whole state `x`. A sweep ends where it began, so the state, the stream and
/// the model's running sums are everything a checkpoint keeps.
pub(crate) trait RawSweep<V> {
    /// Whether a step runs through the run-time SIMD dispatch (compiled for the machine's
    /// widest instructions); a sweep whose inner loop gains nothing from it says no.
    const DISPATCH: bool = true;

    /// One sweep of `x`: its report and the distance moved. Implementations are
    /// `#[inline(always)]`, as the [`HotLoop`] that calls them.
    fn sweep(&mut self, x: &mut [V], rng: &mut Xoshiro256PlusPlus) -> Stepped;

    /// The model's running sums (an RBM's hidden pre-activations, a quadratic's `Wx`); none by
    /// default.
    fn sums(&self) -> &[f64] {
        &[]
    }

    /// Re-establishes the running sums at the restored `x` (a fresh evaluation), then gives
    /// them the saved bits: the next sweeps depend on their last bits.
    ///
    /// # Errors
    ///
    /// The model's error at `x`, or a record whose sums do not fit.
    fn restore_sums(&mut self, x: &[V], saved: &DriverState) -> Result<(), RunError> {
        let _ = (x, saved);
        Ok(())
    }
}

/// A chain of sweeps: the state, its stream and the sweep.
pub(crate) struct SweepDriver<V, S> {
    x: Vec<V>,
    rng: Xoshiro256PlusPlus,
    sweep: S,
}

impl<V, S> SweepDriver<V, S> {
    /// Sweeps of `sweep` from `x` on `rng`.
    pub(crate) fn new(x: Vec<V>, rng: Xoshiro256PlusPlus, sweep: S) -> Self {
        Self { x, rng, sweep }
    }
}

impl<V: Saved, S: RawSweep<V>> ChainDriver for SweepDriver<V, S> {
    type Value = V;
    fn step(&mut self) -> Stepped {
        if S::DISPATCH {
            crate::simd::dispatch(self)
        } else {
            self.run()
        }
    }
    fn state(&self) -> &[V] {
        &self.x
    }
    fn log_density(&self) -> Option<f64> {
        None
    }
    fn save(&self) -> Result<DriverState, CheckpointError> {
        Ok(save_raw(&self.x, &self.rng, self.sweep.sums()))
    }
    fn restore(&mut self, saved: &DriverState) -> Result<(), RunError> {
        restore_raw(&mut self.x, &mut self.rng, saved)?;
        self.sweep.restore_sums(&self.x, saved)
    }
}

impl<V, S: RawSweep<V>> HotLoop for SweepDriver<V, S> {
    type Output = Stepped;
    #[inline(always)]
    fn run(&mut self) -> Self::Output {
        self.sweep.sweep(&mut self.x, &mut self.rng)
    }
}
