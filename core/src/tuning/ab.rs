//! The any-scale balanced sampler with first-order proposals and adaptive (step, balance).

use crate::chain::Chain;
use crate::error::{ParamError, StepError};
use crate::kernel::{Balanced, Dmala, Kernel, StepReport};
use crate::target::Eval;
use rand_core::Rng;

/// Smallest and largest step the tuner will try (keeps every proposal constructible).
const STEP_RANGE: (f64, f64) = (1e-9, 1e12);
/// Smallest balance the tuner will try.
const MIN_BALANCE: f64 = 1e-3;

/// Settings of [`AbTuner`]; the defaults are those of the any-scale balanced paper (Alg. 3).
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct AbSettings {
    /// Initial step `a` (default 0.1).
    pub step: f64,
    /// Initial balance `b` (default 0.5).
    pub balance: f64,
    /// Initial relative probe size `γ` (default 0.2).
    pub rate: f64,
    /// Factor applied to `γ` after a round in which neither parameter moved (default 0.9).
    pub decay: f64,
    /// Steps per probe `N` (default 100).
    pub probe_steps: u32,
    /// Tuning budget in steps (default 10 000); the parameters freeze when it is spent.
    pub budget: u64,
    /// Tuning also ends once `γ` falls below this (default 0.01).
    pub min_rate: f64,
    /// Whether the step is tuned (default true).
    pub tune_step: bool,
    /// Whether the balance is tuned (default true).
    pub tune_balance: bool,
    /// Window for ordinal proposals (default none).
    pub window: Option<u16>,
}

impl Default for AbSettings {
    fn default() -> Self {
        Self {
            step: 0.1,
            balance: 0.5,
            rate: 0.2,
            decay: 0.9,
            probe_steps: 100,
            budget: 10_000,
            min_rate: 0.01,
            tune_step: true,
            tune_balance: true,
            window: None,
        }
    }
}

impl AbSettings {
    /// Checks every field.
    ///
    /// # Errors
    ///
    /// [`ParamError::Step`] / [`ParamError::Balance`] for a bad initial step or balance;
    /// [`ParamError::OutOfRange`] for `γ ∉ (0, 1)`, a decay outside `(0, 1)`, zero probe steps,
    /// a negative or non-finite `min_rate`, or a zero window.
    pub fn validate(&self) -> Result<(), ParamError> {
        ParamError::check_step(self.step)?;
        ParamError::check_balance(self.balance)?;
        let open_unit = |name, value: f64| {
            if value > 0.0 && value < 1.0 {
                Ok(())
            } else {
                Err(ParamError::OutOfRange { name, value })
            }
        };
        open_unit("rate", self.rate)?;
        open_unit("decay", self.decay)?;
        if self.probe_steps == 0 {
            return Err(ParamError::OutOfRange {
                name: "probe steps",
                value: 0.0,
            });
        }
        if !(self.min_rate.is_finite() && self.min_rate >= 0.0) {
            return Err(ParamError::OutOfRange {
                name: "min rate",
                value: self.min_rate,
            });
        }
        if self.window == Some(0) {
            return Err(ParamError::OutOfRange {
                name: "window",
                value: 0.0,
            });
        }
        Ok(())
    }
}

/// The parameter a probe varies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Param {
    Step,
    Balance,
}

/// What the tuner chose and what it spent.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AbReport {
    /// The step `a` (final once frozen).
    pub step: f64,
    /// The balance `b` (final once frozen).
    pub balance: f64,
    /// The probe size `γ` at the end.
    pub rate: f64,
    /// Steps spent tuning.
    pub tuning_steps: u64,
    /// Completed rounds (one probe triple per tuned parameter).
    pub rounds: u32,
    /// Whether tuning is over.
    pub frozen: bool,
}

/// The any-scale balanced sampler, first order (AB-1st): the balanced proposal family with a
/// Metropolis–Hastings test, its step `a` and balance `b` tuned during a burn-in by the
/// jump-distance rule of Sun et al. (2023), Alg. 3, then frozen.
///
/// # Tuning
///
/// Coordinate ascent on the mean jump distance (L1: Hamming for binary and categorical states,
/// `Σ|x'_i − x_i|` for ordinal ones). For the parameter `p` being tuned, `N` MH steps are run at
/// each of `p`, `p(1+γ)`, `p(1−γ)` (the balance capped at 1); the value with the largest total
/// jump is kept (the current one on ties) and used at once for the other parameter's probes.
/// After a round in which neither parameter moved, `γ ← 0.9γ`. Tuning stops when the budget of
/// steps is spent or `γ` falls below `min_rate`, whichever is first; a round cut short keeps
/// the parameters of the last completed probe triple.
///
/// # Exactness
///
/// Every step, tuning or not, is an exact MH step for the `(a, b)` in use, so `π` is invariant
/// under each of them; the adaptation only makes the sequence of kernels depend on the past.
/// Once frozen the chain is a time-homogeneous, exact MH chain with the reported `(a, b)`:
/// draws kept after [`is_frozen`](Self::is_frozen) are a valid MCMC sample. Discard the tuning
/// steps.
///
/// The same tuner drives binary, ordinal and categorical chains (it implements [`Kernel`] for
/// every [`Balanced`] domain); use one tuner per chain.
///
/// # Examples
///
/// ```
/// use langevin_core::binary::{BinaryChain, ChainStorage, Kernel};
/// use langevin_core::models::{ConstDims, IsingLattice};
/// use langevin_core::tuning::{AbSettings, AbTuner};
/// use rand_core::SeedableRng;
///
/// let mut model = IsingLattice::<ConstDims<5, 5>>::new(0.2, 0.0, true).unwrap();
/// let mut storage = ChainStorage::<25>::new([0; 25]);
/// let mut chain = BinaryChain::new(storage.buffers(), &mut model).unwrap();
/// let mut settings = AbSettings::default();
/// settings.budget = 3_000;
/// let mut ab = AbTuner::new(settings).unwrap();
/// let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
/// while !ab.is_frozen() {
///     ab.step(&mut model, &mut chain, &mut rng).unwrap();
/// }
/// let chosen = ab.report();
/// assert!(chosen.tuning_steps <= 3_000 && chosen.balance <= 1.0);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct AbTuner {
    settings: AbSettings,
    step: f64,
    balance: f64,
    rate: f64,
    param: Param,
    probe: usize,
    probe_done: u32,
    jumps: [u64; 3],
    moved: bool,
    tuning_steps: u64,
    rounds: u32,
    frozen: bool,
}

impl AbTuner {
    /// A tuner with these settings.
    ///
    /// # Errors
    ///
    /// As [`AbSettings::validate`].
    pub fn new(settings: AbSettings) -> Result<Self, ParamError> {
        settings.validate()?;
        let param = if settings.tune_step {
            Param::Step
        } else {
            Param::Balance
        };
        Ok(Self {
            settings,
            step: settings.step,
            balance: settings.balance,
            rate: settings.rate,
            param,
            probe: 0,
            probe_done: 0,
            jumps: [0; 3],
            moved: false,
            tuning_steps: 0,
            rounds: 0,
            frozen: !(settings.tune_step || settings.tune_balance) || settings.budget == 0,
        })
    }

    /// Whether tuning is over.
    pub fn is_frozen(&self) -> bool {
        self.frozen
    }

    /// The parameters chosen so far and the tuning spent.
    pub fn report(&self) -> AbReport {
        AbReport {
            step: self.step,
            balance: self.balance,
            rate: self.rate,
            tuning_steps: self.tuning_steps,
            rounds: self.rounds,
            frozen: self.frozen,
        }
    }

    /// Ends tuning now, keeping the current centre values.
    pub fn freeze(&mut self) {
        self.frozen = true;
    }

    /// Words in [`AbTuner::save_words`].
    pub const WORDS: usize = 13;

    /// Everything the tuner changes as it steps (the settings aside), as words: what a
    /// checkpoint saves so that [`AbTuner::restore_words`] on a tuner built from the same
    /// settings continues bit for bit.
    pub fn save_words(&self) -> [u64; Self::WORDS] {
        let [j0, j1, j2] = self.jumps;
        [
            self.step.to_bits(),
            self.balance.to_bits(),
            self.rate.to_bits(),
            u64::from(matches!(self.param, Param::Balance)),
            self.probe as u64,
            u64::from(self.probe_done),
            j0,
            j1,
            j2,
            u64::from(self.moved),
            self.tuning_steps,
            u64::from(self.rounds),
            u64::from(self.frozen),
        ]
    }

    /// Puts back a state [`AbTuner::save_words`] returned.
    ///
    /// # Errors
    ///
    /// [`ParamError::OutOfRange`] for words no tuner could have saved (the tuner is then
    /// unchanged).
    pub fn restore_words(&mut self, words: &[u64; Self::WORDS]) -> Result<(), ParamError> {
        let [
            step,
            balance,
            rate,
            param,
            probe,
            done,
            j0,
            j1,
            j2,
            moved,
            steps,
            rounds,
            frozen,
        ] = *words;
        let (step, balance, rate) = (
            f64::from_bits(step),
            f64::from_bits(balance),
            f64::from_bits(rate),
        );
        let bad = |name: &'static str, value: f64| ParamError::OutOfRange { name, value };
        if !(step.is_finite() && step > 0.0) {
            return Err(bad("saved step", step));
        }
        if !(balance > 0.0 && balance <= 1.0) {
            return Err(bad("saved balance", balance));
        }
        if !rate.is_finite() {
            return Err(bad("saved rate", rate));
        }
        let flag = |name, w: u64| match w {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(bad(name, w as f64)),
        };
        let param = if flag("saved parameter", param)? {
            Param::Balance
        } else {
            Param::Step
        };
        if probe > 3 {
            return Err(bad("saved probe", probe as f64));
        }
        let probe_done = u32::try_from(done).map_err(|_| bad("saved probe steps", done as f64))?;
        let rounds = u32::try_from(rounds).map_err(|_| bad("saved rounds", rounds as f64))?;
        let moved = flag("saved moved", moved)?;
        let frozen = flag("saved frozen", frozen)?;
        *self = Self {
            settings: self.settings,
            step,
            balance,
            rate,
            param,
            probe: probe as usize,
            probe_done,
            jumps: [j0, j1, j2],
            moved,
            tuning_steps: steps,
            rounds,
            frozen,
        };
        Ok(())
    }

    /// The `(a, b)` the next step uses.
    pub fn current(&self) -> (f64, f64) {
        if self.frozen {
            return (self.step, self.balance);
        }
        let factor = match self.probe {
            1 => 1.0 + self.rate,
            2 => 1.0 - self.rate,
            _ => 1.0,
        };
        match self.param {
            Param::Step => (
                (self.step * factor).clamp(STEP_RANGE.0, STEP_RANGE.1),
                self.balance,
            ),
            Param::Balance => (self.step, (self.balance * factor).clamp(MIN_BALANCE, 1.0)),
        }
    }

    /// Books a step taken with [`current`](Self::current) elsewhere: its jump (the L1 distance
    /// the chain moved, 0 when the proposal was rejected) moves the probe schedule on, as
    /// [`step`](Kernel::step) does after its own step. For a driver that steps a specialised
    /// kernel of the same `(a, b)` itself, such as a tabulated lattice kernel. Does nothing once
    /// frozen.
    ///
    /// # Examples
    ///
    /// ```
    /// use langevin_core::binary::{BinaryChain, ChainStorage, LatticeDmala, LatticeProposal};
    /// use langevin_core::models::{ConstDims, IsingLattice};
    /// use langevin_core::tuning::{AbSettings, AbTuner};
    /// use rand_core::SeedableRng;
    ///
    /// let mut model = IsingLattice::<ConstDims<5, 5>>::new(0.2, 0.0, true).unwrap();
    /// let mut storage = ChainStorage::<25>::new([0; 25]);
    /// let mut chain = BinaryChain::new(storage.buffers(), &mut model).unwrap();
    /// let mut settings = AbSettings::default();
    /// settings.budget = 1_000;
    /// let mut ab = AbTuner::new(settings).unwrap();
    /// let (a, b) = ab.current();
    /// let mut kernel = LatticeDmala::new(LatticeProposal::new(&model, a, b).unwrap());
    /// let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
    /// while !ab.is_frozen() {
    ///     let (a, b) = ab.current();
    ///     kernel.retune(a, b).unwrap();
    ///     let report = kernel.step(&mut chain, &mut rng).unwrap();
    ///     ab.observe(u64::from(report.accepted_flips()));
    /// }
    /// assert_eq!(ab.report().tuning_steps, 1_000);
    /// ```
    pub fn observe(&mut self, jump: u64) {
        if self.frozen {
            return;
        }
        if let Some(j) = self.jumps.get_mut(self.probe) {
            *j += jump;
        }
        self.tuning_steps += 1;
        self.probe_done += 1;
        if self.probe_done >= self.settings.probe_steps {
            self.probe_done = 0;
            self.probe += 1;
            if self.probe == 3 {
                self.finish_triple();
            }
        }
        if self.tuning_steps >= self.settings.budget {
            self.frozen = true;
        }
    }

    fn finish_triple(&mut self) {
        let [d0, up, down] = self.jumps;
        let chosen = if up > d0 && up >= down {
            1
        } else if down > d0 && down > up {
            2
        } else {
            0
        };
        if chosen != 0 {
            let (a, b) = {
                let saved = self.probe;
                self.probe = chosen;
                let v = self.current();
                self.probe = saved;
                v
            };
            self.moved |= (a, b) != (self.step, self.balance);
            self.step = a;
            self.balance = b;
        }
        self.jumps = [0; 3];
        self.probe = 0;
        let last = match self.param {
            Param::Step if self.settings.tune_balance => {
                self.param = Param::Balance;
                false
            }
            Param::Balance if self.settings.tune_step => {
                self.param = Param::Step;
                true
            }
            _ => true,
        };
        if last {
            self.rounds += 1;
            if !self.moved {
                self.rate *= self.settings.decay;
            }
            self.moved = false;
            if self.rate < self.settings.min_rate {
                self.frozen = true;
            }
        }
    }
}

impl<D: Balanced> Kernel<D> for AbTuner {
    #[cfg_attr(target_arch = "x86_64", inline(always))]
    fn step<T, R>(
        &mut self,
        target: &mut T,
        chain: &mut Chain<'_, D>,
        rng: &mut R,
    ) -> Result<StepReport, StepError<T::Error>>
    where
        T: Eval<D> + ?Sized,
        R: Rng + ?Sized,
    {
        let (a, b) = self.current();
        let window = self.settings.window;
        // (a, b) are kept in range, so the proposal always exists; fall back to DLP otherwise.
        let proposal = D::balanced(a, b, window).or_else(|_| D::balanced(0.1, 0.5, window))?;
        let (report, jump) = Dmala::new(proposal).step_with_jump(target, chain, rng)?;
        self.observe(jump);
        Ok(report)
    }
}
