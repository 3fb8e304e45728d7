//! The kernel a runner steps, for every sampler and domain: [`DynKernel`], one object-safe
//! interface with the tuning hooks the run loop needs, implemented once (by [`Named`]) for
//! every core kernel; and the kernels that own the memory their core kernel borrows (one per
//! chain).
//!
//! A sampler's builder returns a ready `Box<dyn DynKernel<D, T>>`; the runner steps it with
//! one virtual call per step, and the step itself runs on the code path [`crate::simd`] picks,
//! compiled once per kernel.

use crate::binary::ModelTarget;
use crate::simd::HotLoop;
use langevin_core::baselines::{
    Gibbs, HAMMING_BALL_WORDS, HammingBall, LocallyBalanced, SingleSiteMoves, TunedRandomWalk,
};
use langevin_core::binary::PortablePasses;
use langevin_core::binary::{
    LatticeClasses, LatticeDmala, LatticeDula, LatticeKernel, LatticeProposal,
};
use langevin_core::dlmc::{
    CategoricalDlmcProposal, DLMC_TARGET_ACCEPTANCE, DLMC_TUNER_WORDS, DlmcProposal, TunedDlmc,
};
use langevin_core::kernel::DiscreteLangevin;
use langevin_core::models::{Dims, IsingLattice};
use langevin_core::path_auxiliary::{
    PATH_TARGET_ACCEPTANCE, PathAdaptation, PathAuxiliary, PathBuffers, PathDomain,
};
use langevin_core::tuning::{
    ACCEPTANCE_TUNER_WORDS, AbTuner, AcceptanceTuner, AcsReport, AcsTuner, ScaledDmala,
};
use langevin_core::{
    Binary, Categorical, Chain, Domain, Eval, Kernel, LenError, ParamError, StepError,
};
use langevin_core::{StepReport, binary::Rejection};
use rand_core::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde_json::{Value, json};
use std::fmt;
use std::marker::PhantomData;

/// One chain's kernel as a runner sees it, over the domain `D` and the target type `T`: a
/// step, and the hooks of the burn-in (whether it is still adapting, the end of adaptation,
/// what it settled on).
pub trait DynKernel<D: Domain, T: Eval<D> + ?Sized>: Send + fmt::Debug {
    /// One step of the chain (Gibbs: one sweep).
    ///
    /// # Errors
    ///
    /// The kernel's [`StepError`].
    fn step(
        &mut self,
        target: &mut T,
        chain: &mut Chain<'_, D>,
        rng: &mut Xoshiro256PlusPlus,
    ) -> Result<StepReport, StepError<T::Error>>;
    /// What steps the chain: the sampler's name, and the specialised kernel where a model has
    /// one.
    fn name(&self) -> &'static str;
    /// Whether the kernel is still adapting (its steps must be discarded).
    fn is_tuning(&self) -> bool;
    /// Ends adaptation where the kernel allows it.
    fn stop_tuning(&mut self);
    /// The parameters a tuned kernel settled on, as JSON (`None` for fixed kernels).
    fn tuned(&self) -> Option<Value>;
    /// What the kernel's next steps depend on besides the chain and its stream, for a
    /// checkpoint: [`Value::Null`] for a kernel with nothing to save, `None` for one whose
    /// state cannot be saved.
    fn save(&self) -> Option<Value>;
    /// Puts back a state [`DynKernel::save`] returned; `false` when it does not fit.
    fn restore(&mut self, state: &Value) -> bool;
}

/// A boxed kernel of domain `D` for targets of type `T`.
pub type BoxedKernel<D, T> = Box<dyn DynKernel<D, T>>;

/// What a kernel tells the run loop about its adaptation; fixed kernels keep the defaults.
pub trait Tuning {
    /// Whether the kernel is still adapting.
    fn is_tuning(&self) -> bool {
        false
    }
    /// Ends adaptation where the kernel allows it (AB, acceptance-targeting DMALA); the other
    /// tuners end by their own plan.
    fn stop_tuning(&mut self) {}
    /// What the kernel settled on, as JSON, with steps expressed in domain `D`.
    fn tuned<D: ScaledDmala>(&self) -> Option<Value> {
        None
    }
    /// What the kernel's next steps depend on besides the chain and its stream (see
    /// [`DynKernel::save`]): `None`, cannot be saved, unless the kernel says otherwise.
    fn save(&self) -> Option<Value> {
        None
    }
    /// Puts back a state [`Tuning::save`] returned; `false` when it does not fit.
    fn restore(&mut self, _state: &Value) -> bool {
        false
    }
}

/// A core kernel a runner can box (see [`Named`]): a [`Kernel`] over `D` with its [`Tuning`]
/// hooks, that can move to a worker thread.
pub trait CoreKernel<D: Domain>: Kernel<D> + Tuning + Send + fmt::Debug + 'static {}

impl<D: Domain, K: Kernel<D> + Tuning + Send + fmt::Debug + 'static> CoreKernel<D> for K {}

/// [`Tuning::save`] and [`Tuning::restore`] of a kernel whose steps depend only on its
/// parameters (scratch buffers aside).
macro_rules! stateless {
    () => {
        fn save(&self) -> Option<Value> {
            Some(Value::Null)
        }
        fn restore(&mut self, state: &Value) -> bool {
            state.is_null()
        }
    };
}

/// [`Tuning::save`] and [`Tuning::restore`] of a tuner whose state is its `$words` words
/// (`save_words` and `restore_words`, of domain `$domain` where they take one).
macro_rules! saved_words {
    ($words:expr $(, $domain:ty)?) => {
        fn save(&self) -> Option<Value> {
            Some(words_json(&self.save_words$(::<$domain>)?()))
        }
        fn restore(&mut self, state: &Value) -> bool {
            json_words::<{ $words }>(state)
                .is_some_and(|w| self.restore_words$(::<$domain>)?(&w).is_ok())
        }
    };
}

/// A tuner's state words as JSON (the bits of each, so that nothing is rounded).
fn words_json(words: &[u64]) -> Value {
    json!(words)
}

/// The words of [`words_json`] back, if there are `N`.
fn json_words<const N: usize>(state: &Value) -> Option<[u64; N]> {
    let v: Vec<u64> = state
        .as_array()?
        .iter()
        .map(Value::as_u64)
        .collect::<Option<_>>()?;
    v.try_into().ok()
}

/// A core kernel with the name a runner reports for it: the one implementation of
/// [`DynKernel`].
#[derive(Clone, Debug)]
pub struct Named<K> {
    name: &'static str,
    kernel: K,
}

impl<K> Named<K> {
    /// `kernel`, reported as `name`.
    pub fn new(name: &'static str, kernel: K) -> Self {
        Self { name, kernel }
    }

    /// The kernel.
    pub fn kernel(&self) -> &K {
        &self.kernel
    }
}

/// A binary kernel for the targets of every model file ([`ModelTarget`] of any lifetime): what
/// a runner that rebuilds the target between steps (PCD) keeps.
pub type ModelKernel = Box<dyn for<'m> DynKernel<Binary, ModelTarget<'m>>>;

/// `kernel` named `name`, boxed for a runner of domain `D` and targets `T`.
pub fn boxed<D, T, K>(name: &'static str, kernel: K) -> BoxedKernel<D, T>
where
    D: ScaledDmala,
    T: Eval<D> + ?Sized,
    K: CoreKernel<D>,
{
    Box::new(Named::new(name, kernel))
}

/// How a builder boxes the kernel it made: the kind of `Box<dyn DynKernel>` a runner wants.
pub trait Boxing<D: ScaledDmala> {
    /// The boxed kernel.
    type Kernel;
    /// `kernel` named `name`, boxed.
    fn boxed<K: CoreKernel<D>>(name: &'static str, kernel: K) -> Self::Kernel;
}

/// [`Boxing`] into a [`BoxedKernel`] for targets of type `T`.
#[derive(Debug)]
pub struct ForTarget<T: ?Sized>(PhantomData<fn(&mut T)>);

impl<D: ScaledDmala, T: Eval<D> + ?Sized> Boxing<D> for ForTarget<T> {
    type Kernel = BoxedKernel<D, T>;
    fn boxed<K: CoreKernel<D>>(name: &'static str, kernel: K) -> Self::Kernel {
        boxed(name, kernel)
    }
}

/// [`Boxing`] into a [`ModelKernel`].
#[derive(Debug)]
pub struct ForModels;

impl Boxing<Binary> for ForModels {
    type Kernel = ModelKernel;
    fn boxed<K: CoreKernel<Binary>>(name: &'static str, kernel: K) -> Self::Kernel {
        Box::new(Named::new(name, kernel))
    }
}

impl<D, T, K> DynKernel<D, T> for Named<K>
where
    D: ScaledDmala,
    T: Eval<D> + ?Sized,
    K: CoreKernel<D>,
{
    fn step(
        &mut self,
        target: &mut T,
        chain: &mut Chain<'_, D>,
        rng: &mut Xoshiro256PlusPlus,
    ) -> Result<StepReport, StepError<T::Error>> {
        crate::simd::dispatch(&mut KernelStep {
            kernel: &mut self.kernel,
            target,
            chain,
            rng,
        })
    }
    fn name(&self) -> &'static str {
        self.name
    }
    fn is_tuning(&self) -> bool {
        self.kernel.is_tuning()
    }
    fn stop_tuning(&mut self) {
        self.kernel.stop_tuning();
    }
    fn tuned(&self) -> Option<Value> {
        self.kernel.tuned::<D>()
    }
    fn save(&self) -> Option<Value> {
        self.kernel.save()
    }
    fn restore(&mut self, state: &Value) -> bool {
        self.kernel.restore(state)
    }
}

/// One step of kernel `K` as [`HotLoop`] work, so that each kernel runs in a function of its
/// own on the path [`crate::simd`] picks.
struct KernelStep<'s, 'c, K, D: Domain, T: ?Sized, R: ?Sized> {
    kernel: &'s mut K,
    target: &'s mut T,
    chain: &'s mut Chain<'c, D>,
    rng: &'s mut R,
}

impl<K, D, T, R> HotLoop for KernelStep<'_, '_, K, D, T, R>
where
    D: Domain,
    K: Kernel<D>,
    T: Eval<D> + ?Sized,
    R: Rng + ?Sized,
{
    type Output = Result<StepReport, StepError<T::Error>>;
    #[inline(always)]
    fn run(&mut self) -> Self::Output {
        self.kernel.step(self.target, self.chain, self.rng)
    }
}

impl<P, const ADJUSTED: bool> Tuning for DiscreteLangevin<P, ADJUSTED> {
    stateless!();
}

/// A kernel whose steps depend only on its parameters: it never adapts and a checkpoint saves
/// nothing of it. A core kernel of that kind runs wrapped in it and needs no [`Tuning`] impl
/// of its own.
#[derive(Clone, Copy, Debug)]
pub struct Stateless<K>(pub K);

impl<D: Domain, K: Kernel<D>> Kernel<D> for Stateless<K> {
    #[inline(always)]
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
        self.0.step(target, chain, rng)
    }
}

impl<K> Tuning for Stateless<K> {
    stateless!();
}

impl<W: AsMut<[f64]>> Tuning for HammingBall<W> {
    // The block the next step updates.
    saved_words!(HAMMING_BALL_WORDS);
}

impl Tuning for TunedRandomWalk {
    fn is_tuning(&self) -> bool {
        !self.is_frozen()
    }
    fn tuned<D: ScaledDmala>(&self) -> Option<Value> {
        Some(json!({
            "rate": self.rate(),
            "flip_probability": self.kernel().flip_probability(),
            "target_acceptance": crate::samplers::RWM_TARGET_ACCEPTANCE,
            "frozen": self.is_frozen(),
        }))
    }
    saved_words!(TunedRandomWalk::WORDS);
}

impl Tuning for AbTuner {
    fn is_tuning(&self) -> bool {
        !self.is_frozen()
    }
    fn stop_tuning(&mut self) {
        self.freeze();
    }
    fn tuned<D: ScaledDmala>(&self) -> Option<Value> {
        Some(ab_json(self))
    }
    saved_words!(AbTuner::WORDS);
}

impl Tuning for AcsTuner {
    fn is_tuning(&self) -> bool {
        !self.is_frozen()
    }
    fn tuned<D: ScaledDmala>(&self) -> Option<Value> {
        Some(acs_json(&self.report()))
    }
    saved_words!(AcsTuner::WORDS);
}

impl Tuning for AcceptanceTuner<crate::FlipMathImpl> {
    fn is_tuning(&self) -> bool {
        !self.is_frozen()
    }
    fn stop_tuning(&mut self) {
        self.freeze();
    }
    fn tuned<D: ScaledDmala>(&self) -> Option<Value> {
        Some(acceptance_json::<D>(self))
    }
    saved_words!(ACCEPTANCE_TUNER_WORDS);
}

impl Tuning for TunedDlmc<DlmcProposal> {
    fn is_tuning(&self) -> bool {
        !self.is_frozen()
    }
    fn tuned<D: ScaledDmala>(&self) -> Option<Value> {
        Some(dlmc_json(self.proposal().time(), self.is_frozen()))
    }
    saved_words!(DLMC_TUNER_WORDS, Binary);
}

impl Tuning for TunedDlmc<CategoricalDlmcProposal> {
    fn is_tuning(&self) -> bool {
        !self.is_frozen()
    }
    fn tuned<D: ScaledDmala>(&self) -> Option<Value> {
        Some(dlmc_json(self.proposal().time(), self.is_frozen()))
    }
    saved_words!(DLMC_TUNER_WORDS, Categorical);
}

impl Tuning for PathSampler {
    fn is_tuning(&self) -> bool {
        PathSampler::is_tuning(self)
    }
    fn tuned<D: ScaledDmala>(&self) -> Option<Value> {
        PathSampler::tuned(self)
    }
    // A fixed length has nothing to save; an adapted one saves its rule's words.
    fn save(&self) -> Option<Value> {
        Some(match self.length {
            PathLength::Fixed(_) => Value::Null,
            PathLength::Adapted(a) => words_json(&a.save_words()),
        })
    }
    fn restore(&mut self, state: &Value) -> bool {
        match &mut self.length {
            PathLength::Fixed(_) => state.is_null(),
            PathLength::Adapted(a) => json_words::<{ PathAdaptation::WORDS }>(state)
                .is_some_and(|w| a.restore_words(&w).is_ok()),
        }
    }
}

/// Single-site Gibbs as a kernel of whole sweeps: one step is `d` site updates through the
/// target's ordinary evaluations, summed into one report (always accepted, the changed sites
/// as its flips).
#[derive(Clone, Copy, Debug)]
pub struct Sweep(pub Gibbs);

impl Tuning for Sweep {
    // A sweep visits every site once: a systematic scan ends where it began.
    stateless!();
}

impl Kernel<Binary> for Sweep {
    #[inline(always)]
    fn step<T, R>(
        &mut self,
        target: &mut T,
        chain: &mut Chain<'_, Binary>,
        rng: &mut R,
    ) -> Result<StepReport, StepError<T::Error>>
    where
        T: Eval<Binary> + ?Sized,
        R: Rng + ?Sized,
    {
        let mut sweep = SweepReport::default();
        for _ in 0..chain.dim() {
            sweep.add(&self.0.step(target, chain, rng)?);
        }
        Ok(sweep.report())
    }
}

/// The locally balanced proposal with its weights buffer, grown to the chain's number of
/// single-site moves on the first step (runs keep the kernel).
#[derive(Clone, Debug)]
pub struct Grown(pub LocallyBalanced<Vec<f64>>);

impl Tuning for Grown {
    stateless!();
}

impl<D: SingleSiteMoves> Kernel<D> for Grown {
    #[inline(always)]
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
        let n = D::slots(chain.dim(), chain.states()).unwrap_or(usize::MAX);
        grow(self.0.weights_mut(), n);
        self.0.step(target, chain, rng)
    }
}

/// The tabulated lattice kernel of a chain, with the class bytes of the chain's state that
/// it keeps from one step to the next (see [`LatticeClasses`]). It steps the lattice it was
/// built for, whatever the target: the runner starts the chain on that lattice.
#[derive(Clone, Debug)]
pub struct TabulatedLattice {
    /// The kernel.
    pub kernel: LatticeDmala<Dims>,
    classes: LatticeClasses<Vec<u8>>,
}

impl TabulatedLattice {
    /// The kernel, with room for the classes of a state of `dim` sites.
    pub fn new(kernel: LatticeDmala<Dims>, dim: usize) -> Self {
        Self {
            kernel,
            classes: LatticeClasses::new(vec![0; dim]),
        }
    }
}

impl Tuning for TabulatedLattice {
    fn save(&self) -> Option<Value> {
        Some(Value::Null)
    }
    fn restore(&mut self, state: &Value) -> bool {
        // The kept classes describe the state before the restore: forget them.
        let bytes = std::mem::replace(&mut self.classes, LatticeClasses::new(Vec::new()));
        self.classes = LatticeClasses::new(bytes.into_inner());
        state.is_null()
    }
}

impl Kernel<Binary> for TabulatedLattice {
    #[inline(always)]
    fn step<T, R>(
        &mut self,
        _target: &mut T,
        chain: &mut Chain<'_, Binary>,
        rng: &mut R,
    ) -> Result<StepReport, StepError<T::Error>>
    where
        T: Eval<Binary> + ?Sized,
        R: Rng + ?Sized,
    {
        lattice_step(&self.kernel, &mut self.classes, chain, rng).map_err(StepError::Len)
    }
}

/// One step of a tabulated lattice kernel on the path [`crate::simd`] picks.
#[inline(always)]
fn lattice_step<R: Rng + ?Sized, const ADJUSTED: bool>(
    kernel: &LatticeKernel<Dims, ADJUSTED>,
    classes: &mut LatticeClasses<Vec<u8>>,
    chain: &mut Chain<'_, Binary>,
    rng: &mut R,
) -> Result<StepReport, LenError> {
    #[cfg(target_arch = "x86_64")]
    if let Some(passes) = crate::simd::LatticeVector::for_path() {
        return kernel.step_with_classes(chain, classes, rng, &passes);
    }
    portable_lattice_step(kernel, classes, chain, rng)
}

/// The portable lattice step in a function of its own: inlined into the dispatcher's large
/// function, some of the step's helpers were left out of line.
#[inline(never)]
fn portable_lattice_step<R: Rng + ?Sized, const ADJUSTED: bool>(
    kernel: &LatticeKernel<Dims, ADJUSTED>,
    classes: &mut LatticeClasses<Vec<u8>>,
    chain: &mut Chain<'_, Binary>,
    rng: &mut R,
) -> Result<StepReport, LenError> {
    kernel.step_with_classes(chain, classes, rng, &PortablePasses)
}

/// Sets a tabulated kernel to a tuner's `(a, b)`: the tables are refilled only when the
/// parameters change.
fn retune<E>(kernel: &mut LatticeDmala<Dims>, (a, b): (f64, f64)) -> Result<(), StepError<E>> {
    kernel.retune(a, b).map_err(StepError::Param)
}

/// AB on an Ising lattice: [`AbTuner`]'s adaptation, unchanged, driving the tabulated lattice
/// DMALA. Each step uses the tuner's current `(a, b)` (the tables refilled when a probe or a
/// round changes them, every `N = 100` steps at most, and never once frozen) and books the
/// step's jump, the number of flips that took effect, as the generic step does.
#[derive(Clone, Debug)]
pub struct LatticeAb {
    tuner: AbTuner,
    lattice: TabulatedLattice,
}

impl LatticeAb {
    /// `tuner` driving the tabulated kernel on `lattice`.
    ///
    /// # Errors
    ///
    /// As [`LatticeProposal::new`] at the tuner's initial `(a, b)`.
    pub fn new(tuner: AbTuner, lattice: &IsingLattice) -> Result<Self, ParamError> {
        let (a, b) = tuner.current();
        let kernel = LatticeDmala::new(LatticeProposal::new(lattice, a, b)?);
        Ok(Self {
            tuner,
            lattice: TabulatedLattice::new(kernel, lattice.dim()),
        })
    }

    /// The tuner.
    pub fn tuner(&self) -> &AbTuner {
        &self.tuner
    }
}

impl Tuning for LatticeAb {
    fn is_tuning(&self) -> bool {
        self.tuner.is_tuning()
    }
    fn stop_tuning(&mut self) {
        self.tuner.stop_tuning();
    }
    fn tuned<D: ScaledDmala>(&self) -> Option<Value> {
        self.tuner.tuned::<D>()
    }
    // The tables follow the tuner's (a, b) at every step: its words are the whole state.
    fn save(&self) -> Option<Value> {
        Tuning::save(&self.tuner)
    }
    fn restore(&mut self, state: &Value) -> bool {
        self.lattice.restore(&Value::Null) && self.tuner.restore(state)
    }
}

impl Kernel<Binary> for LatticeAb {
    #[inline(always)]
    fn step<T, R>(
        &mut self,
        _target: &mut T,
        chain: &mut Chain<'_, Binary>,
        rng: &mut R,
    ) -> Result<StepReport, StepError<T::Error>>
    where
        T: Eval<Binary> + ?Sized,
        R: Rng + ?Sized,
    {
        let TabulatedLattice { kernel, classes } = &mut self.lattice;
        let (a, b) = self.tuner.current();
        // The tuner keeps (a, b) in range; the generic step falls back to DLP otherwise.
        if kernel.retune(a, b).is_err() {
            retune(kernel, (0.1, 0.5))?;
        }
        let report = lattice_step(kernel, classes, chain, rng)?;
        self.tuner.observe(u64::from(report.accepted_flips()));
        Ok(report)
    }
}

/// ACS on an Ising lattice: [`AcsTuner`]'s adaptation, unchanged, driving the tabulated
/// lattice kernels: each step is the tabulated DMALA (DULA in the tuner's unadjusted burn-in)
/// at the tuner's [`action`](AcsTuner::action), and the tuner observes its acceptance
/// probability, as the generic step does.
///
/// While tuning, one kernel is retuned whenever the action changes (every step of the adjusted
/// burn-in, every few steps of the searches). Once the schedule is fixed, the kernels of its
/// whole cycle (`s ≤ 64` of them) are built once, so that the kept steps, whose step changes
/// every time, refill no table.
#[derive(Clone, Debug)]
pub struct LatticeAcs {
    tuner: AcsTuner,
    lattice: TabulatedLattice,
    /// The kernels of the frozen schedule's cycle, position by position (empty until frozen).
    cycle: Vec<LatticeDmala<Dims>>,
    /// The cycle position of the next frozen step.
    position: usize,
}

impl LatticeAcs {
    /// `tuner` driving the tabulated kernels on `lattice`.
    ///
    /// # Errors
    ///
    /// As [`LatticeProposal::new`] at the tuner's first action.
    pub fn new(tuner: AcsTuner, lattice: &IsingLattice) -> Result<Self, ParamError> {
        let act = tuner.action();
        let kernel = LatticeDmala::new(LatticeProposal::new(lattice, act.step, act.balance)?);
        Ok(Self {
            tuner,
            lattice: TabulatedLattice::new(kernel, lattice.dim()),
            cycle: Vec::new(),
            position: 0,
        })
    }

    /// The tuner.
    pub fn tuner(&self) -> &AcsTuner {
        &self.tuner
    }

    /// The kernels of the tuned schedule's cycle, built when tuning ends.
    fn build_cycle(&mut self) -> Result<(), ParamError> {
        let schedule = self.tuner.report().schedule;
        let mut kernel = self.lattice.kernel;
        self.cycle = (0..u64::from(schedule.cycle()))
            .map(|k| {
                let (a, b) = schedule.at(k);
                kernel.retune(a, b)?;
                Ok(kernel)
            })
            .collect::<Result<_, ParamError>>()?;
        // The position the tuner's schedule is at: 0 when the cycle is built as tuning ends,
        // anywhere when it is rebuilt after a checkpoint's restore.
        let len = self.cycle.len().max(1) as u64;
        self.position = (self.tuner.cycle_position() % len) as usize;
        Ok(())
    }
}

impl Tuning for LatticeAcs {
    fn is_tuning(&self) -> bool {
        self.tuner.is_tuning()
    }
    fn tuned<D: ScaledDmala>(&self) -> Option<Value> {
        self.tuner.tuned::<D>()
    }
    // The tables follow the tuner's action at every step and the frozen cycle is rebuilt
    // from its schedule (at its position) on the next step: its words are the whole state.
    fn save(&self) -> Option<Value> {
        Tuning::save(&self.tuner)
    }
    fn restore(&mut self, state: &Value) -> bool {
        self.cycle.clear();
        self.position = 0;
        self.lattice.restore(&Value::Null) && self.tuner.restore(state)
    }
}

impl Kernel<Binary> for LatticeAcs {
    #[inline(always)]
    fn step<T, R>(
        &mut self,
        _target: &mut T,
        chain: &mut Chain<'_, Binary>,
        rng: &mut R,
    ) -> Result<StepReport, StepError<T::Error>>
    where
        T: Eval<Binary> + ?Sized,
        R: Rng + ?Sized,
    {
        let act = self.tuner.action();
        let wanted = (act.step, act.balance);
        if self.tuner.is_frozen() && self.cycle.is_empty() {
            self.build_cycle().map_err(StepError::Param)?;
        }
        // The frozen tuner walks its cycle from position 0, one position per step; the
        // cached kernel is used only if it is the one asked for.
        let cached = if self.tuner.is_frozen() && !self.cycle.is_empty() {
            let at = self.position;
            self.position = (at + 1) % self.cycle.len();
            self.cycle
                .get(at)
                .filter(|k| (k.proposal().step(), k.proposal().balance()) == wanted)
        } else {
            None
        };
        let report = if let Some(kernel) = cached {
            lattice_step(kernel, &mut self.lattice.classes, chain, rng)?
        } else {
            let TabulatedLattice { kernel, classes } = &mut self.lattice;
            retune(kernel, wanted)?;
            if act.adjusted {
                lattice_step(kernel, classes, chain, rng)?
            } else {
                lattice_step(&LatticeDula::new(*kernel.proposal()), classes, chain, rng)?
            }
        };
        self.tuner.observe(if act.adjusted {
            AcsTuner::acceptance_probability(&report)
        } else {
            1.0
        });
        Ok(report)
    }
}

/// Grows a kernel's buffer to at least `n` entries (once per chain: runs keep the kernel).
pub(crate) fn grow(buffer: &mut Vec<f64>, n: usize) {
    if buffer.len() < n {
        buffer.resize(n, 0.0);
    }
}

/// A sweep of single-site updates summed into one step report: always "accepted" (Gibbs never
/// rejects), `proposed_flips` = coordinates that changed, evaluations summed, the first
/// invalid update's reason kept.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SweepReport {
    changed: u32,
    evaluations: u32,
    rejection: Option<Rejection>,
}

impl SweepReport {
    /// Adds one single-site update.
    pub(crate) fn add(&mut self, r: &StepReport) {
        self.changed += r.accepted_flips();
        self.evaluations += r.evaluations;
        self.rejection = self.rejection.or(r.rejection);
    }

    /// Adds one update of the fast path: whether it changed the coordinate, what it cost.
    pub(crate) fn add_update(&mut self, changed: bool, evaluations: u32) {
        self.changed += u32::from(changed);
        self.evaluations += evaluations;
    }

    /// The sweep as one step.
    pub(crate) fn report(&self) -> StepReport {
        StepReport {
            accepted: true,
            proposed_flips: self.changed,
            log_accept_ratio: 0.0,
            rejection: self.rejection,
            evaluations: self.evaluations,
        }
    }
}

/// The path length of a [`PathSampler`]: fixed, or adapted during the burn-in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PathLength {
    /// A fixed length.
    Fixed(PathAuxiliary),
    /// Adapted toward an acceptance rate during the burn-in, then frozen.
    Adapted(PathAdaptation),
}

/// The path auxiliary sampler with its own buffers (the weights sized on the first step, the
/// path at the largest length).
#[derive(Clone, Debug)]
pub struct PathSampler {
    length: PathLength,
    weights: Vec<f64>,
    path: Vec<u32>,
}

impl PathSampler {
    /// Paths of `length` moves, or (`None`) a length adapted during the first `burn_in` steps
    /// toward acceptance [`PATH_TARGET_ACCEPTANCE`], starting at 1 and at most `dim`.
    ///
    /// # Errors
    ///
    /// [`ParamError::OutOfRange`] for a length of 0.
    pub fn new(length: Option<usize>, dim: usize, burn_in: u64) -> Result<Self, ParamError> {
        let length = match length {
            Some(l) => PathLength::Fixed(PathAuxiliary::new(l)?),
            None => PathLength::Adapted(PathAdaptation::new(
                1,
                dim.max(1),
                burn_in,
                PATH_TARGET_ACCEPTANCE,
            )?),
        };
        let max = match length {
            PathLength::Fixed(p) => p.length(),
            PathLength::Adapted(_) => dim.max(1),
        };
        Ok(Self {
            length,
            weights: Vec::new(),
            path: vec![0; max],
        })
    }

    /// The path length in use now.
    pub fn length(&self) -> usize {
        match self.length {
            PathLength::Fixed(p) => p.length(),
            PathLength::Adapted(a) => a.length(),
        }
    }

    /// Whether the length is still being adapted.
    pub fn is_tuning(&self) -> bool {
        matches!(self.length, PathLength::Adapted(a) if !a.is_frozen())
    }

    /// The adapted length as JSON (`None` for a fixed length).
    pub fn tuned(&self) -> Option<Value> {
        match self.length {
            PathLength::Fixed(_) => None,
            PathLength::Adapted(a) => Some(json!({
                "path_length": a.length(),
                "radius": a.radius(),
                "target_acceptance": PATH_TARGET_ACCEPTANCE,
                "frozen": a.is_frozen(),
            })),
        }
    }
}

impl<D: PathDomain> Kernel<D> for PathSampler {
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
        let moves = D::moves(chain.dim(), chain.states()).ok_or(LenError {
            buffer: "moves",
            expected: u32::MAX as usize,
            found: usize::MAX,
        })?;
        if self.weights.len() != moves {
            self.weights.resize(moves, 0.0);
        }
        let mut buffers = PathBuffers {
            weights: &mut self.weights,
            path: &mut self.path,
        };
        match &mut self.length {
            PathLength::Fixed(p) => p.step(target, chain, &mut buffers, rng),
            PathLength::Adapted(a) => a.step(target, chain, &mut buffers, rng),
        }
    }
}

/// DLMC's adapted time as JSON.
pub fn dlmc_json(time: f64, frozen: bool) -> Value {
    json!({
        "time": time,
        "target_acceptance": DLMC_TARGET_ACCEPTANCE,
        "frozen": frozen,
    })
}

/// The acceptance tuner's report as JSON, with the equivalent step of domain `D` (`null` where
/// `τ ≥ 1`).
fn acceptance_json<D: ScaledDmala>(k: &AcceptanceTuner<crate::FlipMathImpl>) -> Value {
    let r = k.report_for::<D>();
    json!({
        "expected_changes": r.changes,
        "log_scale": r.log_scale,
        "step": r.step,
        "target_acceptance": k.settings().target_acceptance,
        "tuning_acceptance": r.tuning_acceptance,
        "tuning_steps": r.tuning_steps,
        "frozen": r.frozen,
    })
}

/// AB's report as JSON.
fn ab_json(k: &AbTuner) -> Value {
    let r = k.report();
    json!({
        "step": r.step,
        "balance": r.balance,
        "probe_rate": r.rate,
        "tuning_steps": r.tuning_steps,
        "rounds": r.rounds,
        "frozen": r.frozen,
    })
}

/// ACS's report as JSON: the whole cycle of steps and balances.
fn acs_json(r: &AcsReport) -> Value {
    let s = &r.schedule;
    let cycle = u64::from(s.cycle());
    let (steps, balances): (Vec<f64>, Vec<f64>) = (0..cycle).map(|k| s.at(k)).unzip();
    json!({
        "a_max": s.a_max(),
        "a_min": s.a_min(),
        "cycle": cycle,
        "steps": steps,
        "balances": balances,
        "tuning_steps": r.tuning_steps,
        "budget": r.budget,
        "frozen": r.frozen,
    })
}
