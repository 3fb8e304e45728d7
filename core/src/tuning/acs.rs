//! Automatic cyclical scheduling (ACS): cyclical step and balance schedules and their tuner.

use crate::chain::Chain;
use crate::error::{ParamError, StepError};
use crate::kernel::{Balanced, Dmala, Dula, Kernel, StepReport};
use crate::target::Eval;
use core::f64::consts::PI;
use rand_core::Rng;

/// The longest cycle a schedule can hold (balances are stored inline, no heap).
pub const MAX_CYCLE: usize = 64;

/// Most candidates one search round tests.
const MAX_CANDIDATES: usize = 32;

/// The cyclical step (Pynadath et al. 2024) at step `k` of a cycle of length `s`:
///
/// `a_k = max((a_max / 2) · (cos(π (k mod s) / s) + 1), a_min)`,
///
/// starting at `a_max` and decaying to (at least) `a_min`. (Pynadath et al. (2024) prints the formula
/// without the factor ½, which would start the cycle at `2·a_max`.) Returns `a_min` for `s = 0`.
///
/// # Examples
///
/// ```
/// use langevin_core::tuning::cyclical_step;
/// assert_eq!(cyclical_step(0, 20, 10.0, 0.5), 10.0);
/// assert!((cyclical_step(10, 20, 10.0, 0.5) - 5.0).abs() < 1e-12);
/// assert_eq!(cyclical_step(19, 20, 10.0, 0.5), 0.5);
/// assert_eq!(cyclical_step(20, 20, 10.0, 0.5), 10.0);
/// ```
pub fn cyclical_step(k: u64, s: u32, a_max: f64, a_min: f64) -> f64 {
    if s == 0 {
        return a_min;
    }
    let pos = (k % u64::from(s)) as f64;
    let a = 0.5 * a_max * (libm::cos(PI * pos / f64::from(s)) + 1.0);
    if a > a_min { a } else { a_min }
}

/// The naive balance schedule of the tuner's burn-in: the same cosine decay applied to the
/// balance, `b_k = max((b_max / 2) · (cos(π (k mod s) / s) + 1), b_min)`.
pub fn cyclical_balance(k: u64, s: u32, b_max: f64, b_min: f64) -> f64 {
    cyclical_step(k, s, b_max, b_min)
}

/// A cyclical schedule: steps by [`cyclical_step`], one balance per position of the cycle
/// (non-increasing in the tuned schedules, as larger steps want balances nearer 1).
///
/// # Examples
///
/// ```
/// use langevin_core::tuning::AcsSchedule;
/// let s = AcsSchedule::naive(20.0, 0.5, 0.95, 0.5, 4).unwrap();
/// assert_eq!(s.at(0), (20.0, 0.95));
/// assert_eq!(s.at(4), s.at(0));
/// assert!(AcsSchedule::naive(0.5, 20.0, 0.95, 0.5, 4).is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AcsSchedule {
    a_max: f64,
    a_min: f64,
    cycle: u32,
    balances: [f64; MAX_CYCLE],
}

impl AcsSchedule {
    /// A schedule from `a_max`, `a_min` and one balance per position (the cycle length is
    /// `balances.len()`).
    ///
    /// # Errors
    ///
    /// [`ParamError::Step`] unless both steps are finite and positive;
    /// [`ParamError::OutOfRange`] if `a_min > a_max` or the cycle is empty or longer than
    /// [`MAX_CYCLE`]; [`ParamError::Balance`] for a balance outside `(0, 1]`.
    pub fn new(a_max: f64, a_min: f64, balances: &[f64]) -> Result<Self, ParamError> {
        check_steps(a_max, a_min)?;
        if balances.is_empty() || balances.len() > MAX_CYCLE {
            return Err(ParamError::OutOfRange {
                name: "cycle length",
                value: balances.len() as f64,
            });
        }
        let mut stored = [0.0; MAX_CYCLE];
        for (slot, &b) in stored.iter_mut().zip(balances) {
            ParamError::check_balance(b)?;
            *slot = b;
        }
        Ok(Self {
            a_max,
            a_min,
            cycle: balances.len() as u32,
            balances: stored,
        })
    }

    /// The untuned schedule: the cosine decay for both the step (`a_max → a_min`) and the
    /// balance (`b_max → b_min`), over a cycle of `s` steps.
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new), plus [`ParamError::OutOfRange`] if `b_min > b_max`.
    pub fn naive(
        a_max: f64,
        a_min: f64,
        b_max: f64,
        b_min: f64,
        s: u32,
    ) -> Result<Self, ParamError> {
        check_balances(b_max, b_min)?;
        let mut balances = [0.0; MAX_CYCLE];
        let n = (s as usize).min(MAX_CYCLE);
        for (k, b) in balances.iter_mut().take(n).enumerate() {
            *b = cyclical_balance(k as u64, s, b_max, b_min);
        }
        Self::new(a_max, a_min, balances.get(..s as usize).unwrap_or(&[]))
    }

    /// `(a_k, b_k)` at step `k`.
    pub fn at(&self, k: u64) -> (f64, f64) {
        let s = self.cycle.max(1);
        let pos = (k % u64::from(s)) as usize;
        (
            cyclical_step(k, s, self.a_max, self.a_min),
            self.balances.get(pos).copied().unwrap_or(0.5),
        )
    }

    /// The largest step.
    pub fn a_max(&self) -> f64 {
        self.a_max
    }

    /// The smallest step.
    pub fn a_min(&self) -> f64 {
        self.a_min
    }

    /// The cycle length `s`.
    pub fn cycle(&self) -> u32 {
        self.cycle
    }

    /// The balances, one per position.
    pub fn balances(&self) -> &[f64] {
        self.balances.get(..self.cycle as usize).unwrap_or(&[])
    }
}

fn check_steps(a_max: f64, a_min: f64) -> Result<(), ParamError> {
    check_pair(a_max, a_min, ParamError::check_step, "a_min (above a_max)")
}

fn check_balances(b_max: f64, b_min: f64) -> Result<(), ParamError> {
    check_pair(
        b_max,
        b_min,
        ParamError::check_balance,
        "b_min (above b_max)",
    )
}

/// Checks the ends `(max, min)` of a schedule: each valid, and `min ≤ max`.
fn check_pair(
    max: f64,
    min: f64,
    each: fn(f64) -> Result<(), ParamError>,
    name: &'static str,
) -> Result<(), ParamError> {
    each(max)?;
    each(min)?;
    if min > max {
        return Err(ParamError::OutOfRange { name, value: min });
    }
    Ok(())
}

/// The cyclical sampler with a fixed schedule (Pynadath et al. 2024, Alg. 1): step `k` is the exact
/// Metropolis-adjusted balanced kernel with `(a_k, b_k)`.
///
/// # Why the cycle leaves π invariant
///
/// Each step's kernel `P_k` is an exact MH kernel, so `π P_k = π` for every `k`; a product of
/// kernels that each fix `π` fixes `π` too (`π P_1 P_2 ⋯ P_s = π`), so a whole cycle — and any
/// number of steps — leaves `π` invariant, even though no single step is time-homogeneous. The
/// chain observed at cycle boundaries is a homogeneous Markov chain with kernel `P_1 ⋯ P_s`;
/// averages over all steps are consistent because every step starts from (and returns to) `π`.
///
/// The persistent-contrastive-divergence variant of Pynadath et al. (2024) (one exploration step at
/// `(a_max, b_max)` *without* the MH test per cycle, the rest at `(a_min, b_min)` with it) is
/// not offered as a sampler: its unadjusted step does not leave `π` invariant, so the chain
/// samples a perturbed law whose bias is unknown — acceptable inside a training loop where the
/// target itself changes every iteration, not when the draws are the answer.
#[derive(Clone, Copy, Debug)]
pub struct Acs {
    schedule: AcsSchedule,
    window: Option<u16>,
    k: u64,
}

impl Acs {
    /// Samples along `schedule`, starting at position 0 (the largest step).
    pub fn new(schedule: AcsSchedule) -> Self {
        Self {
            schedule,
            window: None,
            k: 0,
        }
    }

    /// Restricts ordinal proposals to a window `w ≥ 1` (other domains ignore it).
    pub fn with_window(self, w: u16) -> Self {
        Self {
            window: Some(w),
            ..self
        }
    }

    /// The schedule.
    pub fn schedule(&self) -> &AcsSchedule {
        &self.schedule
    }

    /// The index of the next step.
    pub fn position(&self) -> u64 {
        self.k
    }

    fn next(&mut self) -> (f64, f64) {
        let p = self.schedule.at(self.k);
        self.k += 1;
        p
    }
}

/// One Metropolis-adjusted or unadjusted step of the domain's balanced kernel at `(a, b)`.
fn balanced_step<D, T, R>(
    (a, b): (f64, f64),
    adjusted: bool,
    window: Option<u16>,
    target: &mut T,
    chain: &mut Chain<'_, D>,
    rng: &mut R,
) -> Result<StepReport, StepError<T::Error>>
where
    D: Balanced,
    T: Eval<D> + ?Sized,
    R: Rng + ?Sized,
{
    let p = D::balanced(a, b, window)?;
    if adjusted {
        Dmala::new(p).step(target, chain, rng)
    } else {
        Dula::new(p).step(target, chain, rng)
    }
}

impl<D: Balanced> Kernel<D> for Acs {
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
        let ab = self.next();
        balanced_step(ab, true, self.window, target, chain, rng)
    }
}

/// Settings of [`AcsTuner`]; defaults as in Pynadath et al. (2024), appendix and code.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct AcsSettings {
    /// Where the search for `a_max` starts (default 5; the paper's main text says 60, its
    /// appendix and code use 5).
    pub a_ceil: f64,
    /// Where the search for `a_min` starts (default 0.05).
    pub a_floor: f64,
    /// Balance at the largest step (default 0.95).
    pub b_max: f64,
    /// Balance at the smallest step (default 0.5).
    pub b_min: f64,
    /// Target acceptance rate ρ* (default 0.5).
    pub target: f64,
    /// Learning rate ζ of the step search (default 0.5).
    pub zeta: f64,
    /// Cycle length `s` (default 20, at most [`MAX_CYCLE`]).
    pub cycle: u32,
    /// Length of the whole run in steps (default 10 000); the tuning budget is a fraction of it.
    pub total_steps: u64,
    /// Fraction of `total_steps` the tuning may spend (default 0.1).
    pub budget_fraction: f64,
    /// Steps averaged per acceptance estimate on a single chain (default 4; see
    /// [`AcsTuner`]).
    pub steps_per_estimate: u32,
    /// Step candidates per search round (default 5).
    pub step_candidates: u32,
    /// Balance candidates per cycle position (default 10).
    pub balance_candidates: u32,
    /// Unadjusted burn-in steps at `(a_ceil, b_max)` (default 50).
    pub burn_in_unadjusted: u32,
    /// Metropolis-adjusted burn-in steps along the naive schedule (default 50).
    pub burn_in_adjusted: u32,
    /// Window for ordinal proposals (default none).
    pub window: Option<u16>,
    /// `(a_max, a_min)` to use instead of searching for them (default none: search). With
    /// fixed steps only the balance schedule is tuned, and it may use the whole budget left
    /// after the burn-in.
    pub fixed_steps: Option<(f64, f64)>,
}

impl Default for AcsSettings {
    fn default() -> Self {
        Self {
            a_ceil: 5.0,
            a_floor: 0.05,
            b_max: 0.95,
            b_min: 0.5,
            target: 0.5,
            zeta: 0.5,
            cycle: 20,
            total_steps: 10_000,
            budget_fraction: 0.1,
            steps_per_estimate: 4,
            step_candidates: 5,
            balance_candidates: 10,
            burn_in_unadjusted: 50,
            burn_in_adjusted: 50,
            window: None,
            fixed_steps: None,
        }
    }
}

impl AcsSettings {
    /// The tuning budget in steps: `⌊budget_fraction · total_steps⌋`.
    pub fn budget(&self) -> u64 {
        (self.budget_fraction * self.total_steps as f64) as u64
    }

    /// Checks every field.
    ///
    /// # Errors
    ///
    /// [`ParamError::Step`] for a non-finite or non-positive `a_ceil` / `a_floor`;
    /// [`ParamError::Balance`] for balances outside `(0, 1]`; [`ParamError::OutOfRange`] for
    /// `a_floor > a_ceil`, `b_min > b_max`, `ρ* ∉ (0, 1)`, `ζ ∉ (0, 1)`, a cycle of 0 or more
    /// than [`MAX_CYCLE`] (or 1, which leaves nothing to schedule), a budget fraction outside
    /// `(0, 1]`, zero steps per estimate, fewer than 2 or more than 32 candidates, a zero
    /// window, or a budget too small for one round of every search.
    pub fn validate(&self) -> Result<(), ParamError> {
        check_steps(self.a_ceil, self.a_floor)?;
        check_balances(self.b_max, self.b_min)?;
        let open = |name, v: f64| {
            if v > 0.0 && v < 1.0 {
                Ok(())
            } else {
                Err(ParamError::OutOfRange { name, value: v })
            }
        };
        open("target acceptance", self.target)?;
        open("zeta", self.zeta)?;
        if !(2..=MAX_CYCLE as u32).contains(&self.cycle) {
            return Err(ParamError::OutOfRange {
                name: "cycle",
                value: f64::from(self.cycle),
            });
        }
        if !(self.budget_fraction > 0.0 && self.budget_fraction <= 1.0) {
            return Err(ParamError::OutOfRange {
                name: "budget fraction",
                value: self.budget_fraction,
            });
        }
        if self.steps_per_estimate == 0 {
            return Err(ParamError::OutOfRange {
                name: "steps per estimate",
                value: 0.0,
            });
        }
        for (name, t) in [
            ("step candidates", self.step_candidates),
            ("balance candidates", self.balance_candidates),
        ] {
            if !(2..=MAX_CANDIDATES as u32).contains(&t) {
                return Err(ParamError::OutOfRange {
                    name,
                    value: f64::from(t),
                });
            }
        }
        if self.window == Some(0) {
            return Err(ParamError::OutOfRange {
                name: "window",
                value: 0.0,
            });
        }
        if let Some((a_max, a_min)) = self.fixed_steps {
            check_steps(a_max, a_min)?;
        }
        Plan::new(self).map(|_| ())
    }
}

/// How the budget is split between the phases (all in steps).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Plan {
    unadjusted: u64,
    adjusted: u64,
    per_estimate: u64,
    balance_candidates: u64,
    rounds_min: u64,
    rounds_max: u64,
}

impl Plan {
    /// Burn-in first (capped at a fifth of the budget), then the balance search (reducing the
    /// steps per estimate, then the candidates, until it takes at most half of what is left),
    /// then equal numbers of step-search rounds for `a_min` and `a_max` from the rest.
    fn new(s: &AcsSettings) -> Result<Self, ParamError> {
        let budget = s.budget();
        let burn_cap = budget / 10;
        let unadjusted = u64::from(s.burn_in_unadjusted).min(burn_cap);
        let adjusted = u64::from(s.burn_in_adjusted).min(burn_cap);
        let left = budget - unadjusted - adjusted;
        let positions = u64::from(s.cycle) - 1;
        let t = u64::from(s.step_candidates);
        let fixed = s.fixed_steps.is_some();
        let cap = if fixed { left } else { left / 2 };
        let mut per_estimate = u64::from(s.steps_per_estimate);
        let mut balance_candidates = u64::from(s.balance_candidates);
        while per_estimate > 1 && positions * balance_candidates * per_estimate > cap {
            per_estimate -= 1;
        }
        while balance_candidates > 2 && positions * balance_candidates * per_estimate > cap {
            balance_candidates -= 1;
        }
        let balance = positions * balance_candidates * per_estimate;
        let round = t * per_estimate;
        let rounds = if fixed {
            0
        } else {
            left.saturating_sub(balance)
                .checked_div(2 * round)
                .unwrap_or(0)
        };
        if balance > left || (rounds == 0 && !fixed) {
            return Err(ParamError::TuningBudget { steps: budget });
        }
        Ok(Self {
            unadjusted,
            adjusted,
            per_estimate,
            balance_candidates,
            rounds_min: rounds,
            rounds_max: rounds,
        })
    }

    fn total(&self, s: &AcsSettings) -> u64 {
        let t = u64::from(s.step_candidates);
        self.unadjusted
            + self.adjusted
            + (self.rounds_min + self.rounds_max) * t * self.per_estimate
            + (u64::from(s.cycle) - 1) * self.balance_candidates * self.per_estimate
    }
}

/// The phase the tuner is in.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Phase {
    /// Unadjusted steps at `(a_ceil, b_max)`.
    Unadjusted,
    /// MH steps along the naive schedule.
    Adjusted,
    /// Searching `a_min` (at `b_min`) upward from `a_floor`.
    AlphaMin,
    /// Searching `a_max` (at `b_max`) downward from `a_ceil`.
    AlphaMax,
    /// Choosing the balance of cycle position `position`.
    Balance,
    /// Sampling along the tuned schedule.
    Frozen,
}

/// What the tuner asks for next: one step of the balanced kernel at `(step, balance)`,
/// Metropolis-adjusted or not.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AcsAction {
    /// The step `a`.
    pub step: f64,
    /// The balance `b`.
    pub balance: f64,
    /// Whether the step has a Metropolis–Hastings test (false only in the first burn-in phase).
    pub adjusted: bool,
}

/// What the tuner chose and what it spent.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AcsReport {
    /// The tuned schedule (the naive one until tuning ends).
    pub schedule: AcsSchedule,
    /// Steps spent tuning so far.
    pub tuning_steps: u64,
    /// The tuning budget in steps.
    pub budget: u64,
    /// Whether tuning is over.
    pub frozen: bool,
}

/// ACS with automatic tuning (Pynadath et al. 2024, Alg. 2–5): a burn-in, two step-size searches, a
/// balance search, then sampling along the tuned cyclical schedule.
///
/// # Phases
///
/// 1. **InitBurnin**: `burn_in_unadjusted` unadjusted steps at `(a_ceil, b_max)` to leave the
///    starting point fast, then `burn_in_adjusted` MH steps along the naive schedule
///    (cosine decays `a_ceil → a_floor`, `b_max → b_min`; the fixed steps instead of
///    `a_ceil`, `a_floor` when given); together at most a fifth of the budget.
/// 2. **EstimateAlpha(min)**: from `a_bound = a_floor` at `b_min`, each round tests
///    `step_candidates` steps evenly spaced in `[a_bound, a_bound (1 + ζ |ρ* − ρ|)]` and moves
///    `a_bound` to the one whose acceptance is closest to ρ* (ρ is that acceptance; 0 at
///    first). **EstimateAlpha(max)** mirrors it downward from `a_ceil` at `b_max` over
///    `[a_bound (1 − ζ |ρ* − ρ|), a_bound]`. Both get the same number of rounds.
/// 3. **EstimateBalSched**: with the steps `a_k` of [`cyclical_step`] fixed, position
///    `k = 1, …, s−1` tests `balance_candidates` balances evenly spaced in
///    `[b_min, b_{k−1}]` (`b_0 = b_max`) and keeps the one with the highest acceptance.
/// 4. **Frozen**: sampling along [`AcsSchedule::at`], cycle position 0 first.
///
/// With [`AcsSettings::fixed_steps`] phase 2 is skipped (for targets where the searches'
/// acceptance goal does not fit, such as mode hopping on a wide ordinal lattice, where useful
/// jumps are rarely accepted).
///
/// If the searches end with `a_min > a_max` (a target on which small steps are rejected more
/// than large ones), `a_min` is lowered to `a_max`.
///
/// # Acceptance estimates
///
/// The paper measures each candidate's acceptance from a single proposal, which makes the
/// searches follow noise. Here an estimate is the mean Metropolis acceptance probability
/// `min(1, exp(log ratio))` (not the 0/1 outcome) over `steps_per_estimate` consecutive MH
/// steps of the chain at that candidate (default 4). A driver running a batch of chains can
/// instead take one step of every chain with the same [`action`](Self::action), average the
/// acceptance probabilities across chains and pass the mean to [`observe`](Self::observe),
/// with `steps_per_estimate = 1`; the budget counts steps of the batch, not proposals.
///
/// # Budget
///
/// The budget is `budget_fraction · total_steps` steps (default 10 %) and is split by a fixed
/// plan before the first step: burn-in, the balance search (fewer steps per estimate or fewer
/// candidates if it would take more than half of what remains), and equal step-search rounds
/// for the rest. [`report`](Self::report) gives the steps spent, never more than the budget.
///
/// # Exactness
///
/// Tuning steps are burn-in and must be discarded (the first phase is unadjusted). After
/// tuning, each step is the exact MH kernel of its `(a_k, b_k)`; see [`Acs`] for why the
/// cycle as a whole leaves `π` invariant.
///
/// # Examples
///
/// ```
/// use langevin_core::binary::{BinaryChain, ChainStorage, Kernel};
/// use langevin_core::models::{ConstDims, IsingLattice};
/// use langevin_core::tuning::{AcsSettings, AcsTuner};
/// use rand_core::SeedableRng;
///
/// let mut model = IsingLattice::<ConstDims<5, 5>>::new(0.3, 0.0, true).unwrap();
/// let mut storage = ChainStorage::<25>::new([0; 25]);
/// let mut chain = BinaryChain::new(storage.buffers(), &mut model).unwrap();
/// let mut settings = AcsSettings::default();
/// settings.total_steps = 20_000;
/// let mut acs = AcsTuner::new(settings).unwrap();
/// let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
/// for _ in 0..settings.total_steps {
///     acs.step(&mut model, &mut chain, &mut rng).unwrap();
/// }
/// let r = acs.report();
/// assert!(r.frozen && r.tuning_steps <= r.budget);
/// assert!(r.schedule.a_min() <= r.schedule.a_max());
/// ```
#[derive(Clone, Copy, Debug)]
pub struct AcsTuner {
    settings: AcsSettings,
    plan: Plan,
    phase: Phase,
    /// Steps taken in the current phase (burn-in phases) or search round.
    done: u64,
    /// Rounds completed in the current step search.
    rounds: u64,
    /// Candidates of the current round and their summed acceptance.
    candidates: [f64; MAX_CANDIDATES],
    sums: [f64; MAX_CANDIDATES],
    n_candidates: usize,
    /// Step search state.
    bound: f64,
    rho: f64,
    a_min: f64,
    a_max: f64,
    /// Balance search state.
    position: u32,
    balances: [f64; MAX_CYCLE],
    tuning_steps: u64,
    schedule: AcsSchedule,
    k: u64,
}

impl AcsTuner {
    /// A tuner with these settings.
    ///
    /// # Errors
    ///
    /// As [`AcsSettings::validate`].
    pub fn new(settings: AcsSettings) -> Result<Self, ParamError> {
        settings.validate()?;
        let plan = Plan::new(&settings)?;
        let (ceil, floor) = settings
            .fixed_steps
            .unwrap_or((settings.a_ceil, settings.a_floor));
        let schedule =
            AcsSchedule::naive(ceil, floor, settings.b_max, settings.b_min, settings.cycle)?;
        let mut tuner = Self {
            settings,
            plan,
            phase: Phase::Unadjusted,
            done: 0,
            rounds: 0,
            candidates: [0.0; MAX_CANDIDATES],
            sums: [0.0; MAX_CANDIDATES],
            n_candidates: 0,
            bound: settings.a_floor,
            rho: 0.0,
            a_min: settings.a_floor,
            a_max: settings.a_ceil,
            position: 1,
            balances: [settings.b_max; MAX_CYCLE],
            tuning_steps: 0,
            schedule,
            k: 0,
        };
        tuner.skip_empty_phases();
        Ok(tuner)
    }

    /// The steps the plan will spend in total (at most the budget).
    pub fn planned_steps(&self) -> u64 {
        self.plan.total(&self.settings)
    }

    /// Whether tuning is over.
    pub fn is_frozen(&self) -> bool {
        self.phase == Phase::Frozen
    }

    /// The schedule (tuned once frozen) and the tuning spent.
    pub fn report(&self) -> AcsReport {
        AcsReport {
            schedule: self.schedule,
            tuning_steps: self.tuning_steps,
            budget: self.settings.budget(),
            frozen: self.is_frozen(),
        }
    }

    /// The settings.
    pub fn settings(&self) -> &AcsSettings {
        &self.settings
    }

    /// Steps taken along the frozen schedule (0 while tuning): the next frozen step uses
    /// schedule position `cycle_position() mod s`.
    pub fn cycle_position(&self) -> u64 {
        self.k
    }

    /// Words in [`AcsTuner::save_words`].
    pub const WORDS: usize = 14 + 2 * MAX_CANDIDATES + 2 * MAX_CYCLE;

    /// Everything the tuner changes as it steps (the settings and plan aside), as words (floats
    /// as their bits): what a checkpoint saves so that [`AcsTuner::restore_words`] on a tuner
    /// built from the same settings continues bit for bit.
    pub fn save_words(&self) -> [u64; Self::WORDS] {
        let mut w = [0u64; Self::WORDS];
        let head = [
            self.phase as u64,
            self.done,
            self.rounds,
            self.n_candidates as u64,
            self.bound.to_bits(),
            self.rho.to_bits(),
            self.a_min.to_bits(),
            self.a_max.to_bits(),
            u64::from(self.position),
            self.tuning_steps,
            self.k,
            self.schedule.a_max.to_bits(),
            self.schedule.a_min.to_bits(),
            u64::from(self.schedule.cycle),
        ];
        let floats = self
            .candidates
            .iter()
            .chain(&self.sums)
            .chain(&self.balances)
            .chain(&self.schedule.balances)
            .map(|f| f.to_bits());
        for (slot, word) in w.iter_mut().zip(head.into_iter().chain(floats)) {
            *slot = word;
        }
        w
    }

    /// Puts back a state [`AcsTuner::save_words`] returned.
    ///
    /// # Errors
    ///
    /// [`ParamError::OutOfRange`] (or the schedule's own error) for words no tuner with these
    /// settings could have saved: an unknown phase, a count past its plan, a step, rate or
    /// balance out of its range, a schedule of another cycle length (the tuner is then
    /// unchanged).
    pub fn restore_words(&mut self, words: &[u64; Self::WORDS]) -> Result<(), ParamError> {
        let bad = |name: &'static str, value: f64| ParamError::OutOfRange { name, value };
        let (head, rest) = words.split_at(14);
        let word = |i: usize| head.get(i).copied().unwrap_or(0);
        let float = |i: usize| f64::from_bits(word(i));
        let phase = match word(0) {
            0 => Phase::Unadjusted,
            1 => Phase::Adjusted,
            2 => Phase::AlphaMin,
            3 => Phase::AlphaMax,
            4 => Phase::Balance,
            5 => Phase::Frozen,
            p => return Err(bad("saved ACS phase", p as f64)),
        };
        let (done, rounds, n) = (word(1), word(2), word(3));
        let (bound, rho, a_min, a_max) = (float(4), float(5), float(6), float(7));
        let (position, tuning_steps, k) = (word(8), word(9), word(10));
        let cycle = self.settings.cycle;
        if n > MAX_CANDIDATES as u64 {
            return Err(bad("saved candidates", n as f64));
        }
        if done
            > n.max(1) * self.plan.per_estimate.max(1) + self.plan.unadjusted + self.plan.adjusted
        {
            return Err(bad("saved steps of a round", done as f64));
        }
        if rounds > self.plan.rounds_min.max(self.plan.rounds_max) {
            return Err(bad("saved rounds", rounds as f64));
        }
        if position > u64::from(cycle) {
            return Err(bad("saved cycle position", position as f64));
        }
        if tuning_steps > self.settings.budget() {
            return Err(bad("saved tuning steps", tuning_steps as f64));
        }
        if !(0.0..=1.0).contains(&rho) {
            return Err(bad("saved acceptance", rho));
        }
        for (name, v) in [
            ("saved bound", bound),
            ("saved a_min", a_min),
            ("saved a_max", a_max),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(bad(name, v));
            }
        }
        if word(13) != u64::from(cycle) {
            return Err(bad("saved schedule cycle", word(13) as f64));
        }
        let mut arrays = rest
            .chunks_exact(1)
            .map(|c| f64::from_bits(c.first().copied().unwrap_or(0)));
        let mut candidates = [0.0; MAX_CANDIDATES];
        let mut sums = [0.0; MAX_CANDIDATES];
        let mut balances = [0.0; MAX_CYCLE];
        let mut scheduled = [0.0; MAX_CYCLE];
        for (slot, v) in candidates
            .iter_mut()
            .chain(sums.iter_mut())
            .chain(balances.iter_mut())
            .chain(scheduled.iter_mut())
            .zip(&mut arrays)
        {
            *slot = v;
        }
        if candidates.iter().any(|c| !(c.is_finite() && *c >= 0.0)) {
            return Err(bad("saved candidate", f64::NAN));
        }
        if sums.iter().any(|s| !(s.is_finite() && *s >= 0.0)) {
            return Err(bad("saved acceptance sum", f64::NAN));
        }
        if balances.iter().any(|b| !(*b > 0.0 && *b <= 1.0)) {
            return Err(bad("saved balance", f64::NAN));
        }
        let schedule = AcsSchedule::new(
            float(11),
            float(12),
            scheduled.get(..cycle as usize).unwrap_or(&[]),
        )?;
        *self = Self {
            phase,
            done,
            rounds,
            candidates,
            sums,
            n_candidates: n as usize,
            bound,
            rho,
            a_min,
            a_max,
            position: position as u32,
            balances,
            tuning_steps,
            schedule,
            k,
            ..*self
        };
        Ok(())
    }

    /// The kernel the next step should use.
    pub fn action(&self) -> AcsAction {
        let s = &self.settings;
        let candidate = |t: &Self| {
            let idx = (t.done / t.plan.per_estimate.max(1)) as usize;
            t.candidates.get(idx).copied().unwrap_or(0.0)
        };
        let (step, balance, adjusted) = match self.phase {
            Phase::Unadjusted => (self.schedule.a_max(), s.b_max, false),
            Phase::Adjusted => {
                let (a, b) = self.schedule.at(self.done);
                (a, b, true)
            }
            Phase::AlphaMin => (candidate(self), s.b_min, true),
            Phase::AlphaMax => (candidate(self), s.b_max, true),
            Phase::Balance => {
                let a = cyclical_step(u64::from(self.position), s.cycle, self.a_max, self.a_min);
                (a, candidate(self), true)
            }
            Phase::Frozen => {
                let (a, b) = self.schedule.at(self.k);
                (a, b, true)
            }
        };
        AcsAction {
            step,
            balance,
            adjusted,
        }
    }

    /// The acceptance probability `min(1, exp(log ratio))` of a step report (1 for a proposal
    /// equal to the current state or an unadjusted step, 0 for an invalid one).
    pub fn acceptance_probability(report: &StepReport) -> f64 {
        if report.rejection.is_some() {
            return 0.0;
        }
        let p = libm::exp(report.log_accept_ratio);
        if p.is_nan() { 0.0 } else { p.min(1.0) }
    }

    /// Records the step taken with [`action`](Self::action): `acceptance` is its acceptance
    /// probability (or the mean over a batch of chains) and moves the tuner on.
    pub fn observe(&mut self, acceptance: f64) {
        let acceptance = if acceptance.is_finite() {
            acceptance.clamp(0.0, 1.0)
        } else {
            0.0
        };
        match self.phase {
            Phase::Frozen => {
                self.k += 1;
                return;
            }
            Phase::Unadjusted | Phase::Adjusted => self.done += 1,
            Phase::AlphaMin | Phase::AlphaMax | Phase::Balance => {
                let idx = (self.done / self.plan.per_estimate.max(1)) as usize;
                if let Some(sum) = self.sums.get_mut(idx) {
                    *sum += acceptance;
                }
                self.done += 1;
            }
        }
        self.tuning_steps += 1;
        self.advance();
    }

    /// Moves to the next round or phase when the current one is complete.
    fn advance(&mut self) {
        let s = self.settings;
        match self.phase {
            Phase::Unadjusted if self.done >= self.plan.unadjusted => self.enter(Phase::Adjusted),
            Phase::Adjusted if self.done >= self.plan.adjusted => self.enter_searches(),
            Phase::AlphaMin | Phase::AlphaMax | Phase::Balance
                if self.done >= self.n_candidates as u64 * self.plan.per_estimate =>
            {
                let per = self.plan.per_estimate as f64;
                let n = self.n_candidates;
                let rates = |i: usize| self.sums.get(i).copied().unwrap_or(0.0) / per;
                if self.phase == Phase::Balance {
                    // Highest acceptance; the larger balance on ties (candidates ascend).
                    let best = (0..n).fold(0, |b, i| if rates(i) >= rates(b) { i } else { b });
                    let chosen = self.candidates.get(best).copied().unwrap_or(s.b_min);
                    if let Some(slot) = self.balances.get_mut(self.position as usize) {
                        *slot = chosen;
                    }
                    self.position += 1;
                    if self.position >= s.cycle {
                        self.finish();
                    } else {
                        self.start_balance_round();
                    }
                } else {
                    // Closest to the target acceptance; the first (smallest) on ties.
                    let gap = |i: usize| libm::fabs(rates(i) - s.target);
                    let best = (0..n).fold(0, |b, i| if gap(i) < gap(b) { i } else { b });
                    self.bound = self.candidates.get(best).copied().unwrap_or(self.bound);
                    self.rho = rates(best);
                    self.rounds += 1;
                    let rounds = if self.phase == Phase::AlphaMin {
                        self.plan.rounds_min
                    } else {
                        self.plan.rounds_max
                    };
                    if self.rounds < rounds {
                        self.start_step_round();
                    } else if self.phase == Phase::AlphaMin {
                        self.a_min = self.bound;
                        self.enter(Phase::AlphaMax);
                    } else {
                        self.a_max = self.bound;
                        self.a_min = self.a_min.min(self.a_max);
                        self.enter(Phase::Balance);
                    }
                }
            }
            _ => {}
        }
    }

    fn enter(&mut self, phase: Phase) {
        self.phase = phase;
        self.done = 0;
        self.rounds = 0;
        self.rho = 0.0;
        match phase {
            Phase::AlphaMin => {
                self.bound = self.settings.a_floor;
                self.start_step_round();
            }
            Phase::AlphaMax => {
                self.bound = self.settings.a_ceil;
                self.start_step_round();
            }
            Phase::Balance => {
                self.position = 1;
                self.balances = [self.settings.b_max; MAX_CYCLE];
                self.start_balance_round();
            }
            _ => {}
        }
        self.skip_empty_phases();
    }

    fn skip_empty_phases(&mut self) {
        if self.phase == Phase::Unadjusted && self.plan.unadjusted == 0 {
            self.enter(Phase::Adjusted);
        } else if self.phase == Phase::Adjusted && self.plan.adjusted == 0 {
            self.enter_searches();
        }
    }

    /// After the burn-in: the step searches, or straight to the balances with fixed steps.
    fn enter_searches(&mut self) {
        match self.settings.fixed_steps {
            Some((a_max, a_min)) => {
                self.a_max = a_max;
                self.a_min = a_min;
                self.enter(Phase::Balance);
            }
            None => self.enter(Phase::AlphaMin),
        }
    }

    fn start_step_round(&mut self) {
        let s = self.settings;
        let width = s.zeta * libm::fabs(s.target - self.rho);
        let (lo, hi) = if self.phase == Phase::AlphaMin {
            (self.bound, self.bound * (1.0 + width))
        } else {
            (self.bound * (1.0 - width), self.bound)
        };
        self.fill_candidates(lo, hi, s.step_candidates as usize);
    }

    fn start_balance_round(&mut self) {
        let ceiling = self
            .balances
            .get(self.position.saturating_sub(1) as usize)
            .copied()
            .unwrap_or(self.settings.b_max);
        self.fill_candidates(
            self.settings.b_min,
            ceiling,
            self.plan.balance_candidates as usize,
        );
    }

    /// `n` values evenly spaced over `[lo, hi]`, ascending, held within the positive finite
    /// numbers: a step bound near `f64::MAX` widened by `1 + ζ|ρ* − ρ|`, or a subnormal one
    /// narrowed by `1 − ζ|ρ* − ρ|`, must still give valid steps.
    fn fill_candidates(&mut self, lo: f64, hi: f64, n: usize) {
        let n = n.clamp(2, MAX_CANDIDATES);
        let hi = hi.min(f64::MAX);
        let lo = lo.max(f64::from_bits(1)).min(hi);
        for (i, c) in self.candidates.iter_mut().take(n).enumerate() {
            *c = (lo + (hi - lo) * i as f64 / (n - 1) as f64).min(hi);
        }
        self.sums = [0.0; MAX_CANDIDATES];
        self.n_candidates = n;
        self.done = 0;
    }

    fn finish(&mut self) {
        let s = self.settings;
        let balances = self.balances.get(..s.cycle as usize).unwrap_or(&[]);
        if let Ok(schedule) = AcsSchedule::new(self.a_max, self.a_min, balances) {
            self.schedule = schedule;
        }
        self.phase = Phase::Frozen;
        self.k = 0;
    }
}

impl<D: Balanced> Kernel<D> for AcsTuner {
    /// One step: the [`action`](AcsTuner::action), the kernel, the observation.
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
        let act = self.action();
        let report = balanced_step(
            (act.step, act.balance),
            act.adjusted,
            self.settings.window,
            target,
            chain,
            rng,
        )?;
        self.observe(if act.adjusted {
            Self::acceptance_probability(&report)
        } else {
            1.0
        });
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::binary::{BinaryChain, ChainStorage};
    use crate::models::{ConstDims, IsingLattice};
    use rand_core::SeedableRng;

    #[test]
    fn saved_words_restore_every_phase_and_bad_words_are_refused() {
        let mut model = IsingLattice::<ConstDims<4, 4>>::new(0.3, 0.0, true).unwrap();
        let mut storage = ChainStorage::<16>::new([0; 16]);
        let mut chain = BinaryChain::new(storage.buffers(), &mut model).unwrap();
        let settings = AcsSettings {
            total_steps: 20_000,
            ..AcsSettings::default()
        };
        let fresh = AcsTuner::new(settings).unwrap();
        let mut acs = fresh;
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(3);
        let mut phases = [false; 6];
        for _ in 0..2_100 {
            acs.step(&mut model, &mut chain, &mut rng).unwrap();
            phases[acs.phase as usize] = true;
            let mut copy = fresh;
            copy.restore_words(&acs.save_words()).unwrap();
            assert_eq!(copy.save_words(), acs.save_words());
            assert_eq!(copy.action(), acs.action());
        }
        assert!(phases.iter().skip(1).all(|&p| p), "{phases:?}");
        let good = acs.save_words();
        for (i, w) in [(0, 6), (3, 33), (5, f64::NAN.to_bits()), (13, 7)] {
            let mut bad = good;
            bad[i] = w;
            let mut copy = fresh;
            assert!(copy.restore_words(&bad).is_err(), "word {i}");
            assert_eq!(copy.save_words(), fresh.save_words());
        }
    }
}
