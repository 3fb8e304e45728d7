//! Persistent contrastive divergence (PCD; Tieleman, 2008) over the registry's binary samplers.
//!
//! For `π_θ(x) ∝ exp(U_θ(x))` the log-likelihood gradient is
//! `E_data[∇_θ U_θ(x)] − E_model[∇_θ U_θ(x)]`. Each update takes a minibatch of `B` data rows
//! for the first term and, for the second, a persistent buffer of `C` chains: every chain is
//! advanced `K` steps of the chosen sampler under the current parameters (never restarted
//! from data), and the model expectation is the mean over the buffer. Then one step of the
//! [`Optimizer`].
//!
//! # Randomness and threads
//!
//! Chain `c` starts uniformly in `{0,1}^d` and draws from stream `c` of the seed for the whole
//! run; the minibatches come from stream `C`. The chains of an update run on the project's
//! [`Pool`], and the gradient is summed in chain order on the calling thread, so the learned
//! parameters are bit-identical for every thread count.
//!
//! # Tuned samplers
//!
//! The kernel of each chain persists across updates. Tuned samplers adapt during the first
//! tenth of the run's sampler steps (at least one update) and are then fixed: RWM and AB tune
//! over that budget and freeze at its end; ACS spends its own budget, a tenth of all steps, and
//! then runs its fixed cycle. Gibbs sweeps use the models' single-flip fast path; on an RBM they
//! price each site from per-weight factors shared by the update's chains (one logarithm a site
//! instead of two transcendentals a hidden unit). AB-2 is not offered: its quadratic fit is of
//! one fixed target.

use super::ising::IsingParams;
use super::optim::{Optimizer, OptimizerKind};
use super::rbm::RbmParams;
use super::rbm_sites::RbmFlipFactors;
use super::{BinaryRows, LearnError, NotInPcd, SettingsError, ShapeError};
use crate::binary::{BinaryModel, ModelTarget, block_gibbs_sweep};
use crate::kernels::{ForModels, ModelKernel, Sweep, SweepReport};
use crate::run::{ChainVecs, Pool, RunError};
use crate::samplers::{
    Domain, Driver, RunShape, Sampler, SamplerEntry, SamplerError, SamplerParams, SamplerPlan,
};
use crate::seeding::chain_rngs;
use langevin_core::Kernel;
use langevin_core::baselines::{FlipDelta, Gibbs};
use langevin_core::binary::BinaryChain;
use langevin_core::stats::ChainStats;
use rand_core::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// A model PCD can train.
#[derive(Clone, Debug, PartialEq)]
pub enum PcdModel {
    /// A binary RBM (its visible marginal is the target).
    Rbm(RbmParams),
    /// An Ising model on a graph.
    Ising(IsingParams),
}

impl PcdModel {
    /// The dimension `d` of the sampled state.
    pub fn dim(&self) -> usize {
        match self {
            Self::Rbm(m) => m.visible(),
            Self::Ising(m) => m.nodes(),
        }
    }

    /// `θ`.
    pub fn theta(&self) -> &[f64] {
        match self {
            Self::Rbm(m) => m.theta(),
            Self::Ising(m) => m.theta(),
        }
    }

    fn theta_mut(&mut self) -> &mut [f64] {
        match self {
            Self::Rbm(m) => m.theta_mut(),
            Self::Ising(m) => m.theta_mut(),
        }
    }

    /// Doubles of scratch [`add_statistics`](Self::add_statistics) needs.
    fn scratch_len(&self) -> usize {
        match self {
            Self::Rbm(m) => m.hidden(),
            Self::Ising(_) => 0,
        }
    }

    fn is_weight(&self, k: usize) -> bool {
        match self {
            Self::Rbm(m) => m.is_weight(k),
            Self::Ising(m) => m.is_weight(k),
        }
    }

    fn add_statistics(&self, x: &[u8], weight: f64, acc: &mut [f64], scratch: &mut [f64]) {
        match self {
            Self::Rbm(m) => m.add_statistics(x, weight, acc, scratch),
            Self::Ising(m) => m.add_statistics(x, weight, acc),
        }
    }

    /// The model the samplers run (single precision).
    ///
    /// # Errors
    ///
    /// [`LearnError::NonFinite`] when a parameter overflows single precision.
    pub fn to_model(&self) -> Result<BinaryModel, LearnError> {
        match self {
            Self::Rbm(m) => m.to_model(),
            Self::Ising(m) => m.to_model(),
        }
    }

    /// The model file.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Self::Rbm(m) => m.to_json(),
            Self::Ising(m) => m.to_json(),
        }
    }
}

/// What a PCD run does.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PcdSettings {
    /// Sampler steps `K` per chain and update.
    pub pcd_steps: u64,
    /// Persistent chains `C`.
    pub chains: usize,
    /// Data rows `B` per minibatch.
    pub batch: usize,
    /// Updates the run will take (sizes the tuning budget).
    pub updates: u64,
    /// The update rule.
    pub optimizer: OptimizerKind,
    /// Learning rate `η`.
    pub lr: f64,
    /// ℓ1 penalty weight on the couplings or weights.
    pub l1: f64,
    /// ℓ2 penalty weight on the couplings or weights.
    pub l2: f64,
    /// Master seed.
    pub seed: u64,
    /// Worker threads (`0`: one per core); the result does not depend on it.
    pub threads: usize,
}

/// The sampler of a plan that runs inside PCD and how it steps a chain, or why it cannot.
fn pcd_kernel(plan: &SamplerPlan) -> Result<(Sampler, Driver), NotInPcd> {
    match plan {
        SamplerPlan::Kernel(spec) => match spec.driver(Domain::Binary, 0) {
            // A ladder's replicas are several coupled chains; each persistent chain here is
            // one (only a ladder's driver can fail).
            Ok(Driver::Replicas(_)) | Err(_) => Err(NotInPcd::Replicas),
            Ok(driver) => Ok((*spec, driver)),
        },
        SamplerPlan::Ab2(_) => Err(NotInPcd::FixedTarget),
    }
}

/// Whether the sampler runs inside PCD (with its default parameters).
pub fn runs_in_pcd(entry: &'static SamplerEntry) -> bool {
    entry
        .with(SamplerParams::default())
        .and_then(|s| s.plan(Domain::Binary))
        .is_ok_and(|plan| pcd_kernel(&plan).is_ok())
}

/// One persistent chain: its state, its kernel and its stream.
#[derive(Debug)]
struct Persistent {
    vecs: ChainVecs<u8>,
    mover: Mover,
    rng: Xoshiro256PlusPlus,
}

/// What advances a persistent chain.
#[derive(Debug)]
enum Mover {
    /// A kernel of the registry.
    Kernel(ModelKernel),
    /// Single-site Gibbs sweeps (through the model's single-flip fast path where it has one).
    Gibbs(Sweep),
    /// Alternating block Gibbs on an RBM, with room for the hidden units.
    BlockGibbs(Vec<u8>),
}

/// A PCD run in progress: call [`update`](Self::update) as often as wanted.
#[derive(Debug)]
pub struct Pcd<'d> {
    model: PcdModel,
    data: &'d BinaryRows,
    settings: PcdSettings,
    chains: Vec<Persistent>,
    pool: Pool,
    data_rng: Xoshiro256PlusPlus,
    order: Vec<usize>,
    cursor: usize,
    optimizer: Optimizer,
    steps_done: u64,
    tune_steps: u64,
    stats: ChainStats,
    updates: u64,
}

impl<'d> Pcd<'d> {
    /// A run that starts at `model` on `data` with `sampler`.
    ///
    /// # Errors
    ///
    /// [`LearnError::Shape`] for data whose width is not the model's dimension;
    /// [`LearnError::Settings`] for zero steps, chains, batch or updates, a learning rate or a
    /// penalty that is not finite and non-negative (the rate positive), a sampler that does
    /// not run on binary models in a chain loop (AB-2) or invalid sampler parameters;
    /// [`LearnError::Run`] if the worker threads cannot start.
    pub fn new(
        model: PcdModel,
        data: &'d BinaryRows,
        sampler: &Sampler,
        settings: PcdSettings,
    ) -> Result<Self, LearnError> {
        let s = &settings;
        let d = model.dim();
        if data.cols != d {
            return Err(ShapeError::DataWidth {
                width: data.cols,
                dim: d,
            }
            .into());
        }
        if s.pcd_steps == 0 || s.chains == 0 || s.batch == 0 || s.updates == 0 {
            return Err(SettingsError::ZeroCount.into());
        }
        let rate_ok = s.lr.is_finite() && s.lr > 0.0;
        let penalties_ok = [s.l1, s.l2].iter().all(|p| p.is_finite() && *p >= 0.0);
        if !rate_ok || !penalties_ok {
            return Err(SettingsError::Rates {
                lr: s.lr,
                l1: s.l1,
                l2: s.l2,
            }
            .into());
        }
        let total = s.pcd_steps.saturating_mul(s.updates);
        let tune_steps = s
            .pcd_steps
            .saturating_mul((s.updates / 10).max(1))
            .min(total);
        let shape = RunShape {
            dim: d,
            burn_in: tune_steps,
            steps: total - tune_steps,
        };
        let plan = sampler
            .plan_for(Domain::Binary, &shape)
            .map_err(|e| LearnError::from(SettingsError::Sampler(e)))?;
        let (spec, driver) = pcd_kernel(&plan).map_err(|why| SettingsError::NotInPcd {
            sampler: sampler.name(),
            why,
        })?;
        let mut rngs = chain_rngs(s.seed, s.chains + 1);
        let data_rng = rngs.pop().ok_or(LearnError::NonFinite)?;
        let chains = rngs
            .into_iter()
            .map(|mut rng| {
                let vecs = crate::binary::uniform_buffers(d, &mut rng);
                let mover = match driver {
                    Driver::RbmBlocks => Mover::BlockGibbs(Vec::new()),
                    Driver::Gibbs(scan) => Mover::Gibbs(Sweep(Gibbs::new(scan))),
                    Driver::Kernel | Driver::Replicas(_) => Mover::Kernel(
                        spec.kernel_for::<ForModels>(&shape)
                            .map_err(|e| LearnError::from(SettingsError::Param(e)))?,
                    ),
                };
                Ok(Persistent { vecs, mover, rng })
            })
            .collect::<Result<Vec<_>, LearnError>>()?;
        let pool = Pool::for_items(s.threads, s.chains)?;
        let optimizer = Optimizer::new(s.optimizer, model.theta().len(), s.lr, s.l1, s.l2);
        Ok(Self {
            model,
            data,
            settings,
            chains,
            pool,
            data_rng,
            order: Vec::new(),
            cursor: 0,
            optimizer,
            steps_done: 0,
            tune_steps,
            stats: ChainStats::default(),
            updates: 0,
        })
    }

    /// The current model.
    pub fn model(&self) -> &PcdModel {
        &self.model
    }

    /// Updates taken so far.
    pub fn updates(&self) -> u64 {
        self.updates
    }

    /// The persistent chains' current states.
    pub fn chain_states(&self) -> impl Iterator<Item = &[u8]> {
        self.chains.iter().map(|c| c.vecs.x.as_slice())
    }

    /// The sampler steps' totals since the last call (acceptance and evaluations).
    pub fn take_stats(&mut self) -> ChainStats {
        std::mem::take(&mut self.stats)
    }

    /// One update: every chain `K` steps, then one optimiser step.
    ///
    /// # Errors
    ///
    /// [`LearnError::NonFinite`] when the parameters leave single precision;
    /// [`LearnError::Run`] when a chain fails.
    pub fn update(&mut self) -> Result<(), LearnError> {
        let target = self.model.to_model()?;
        let factors = match (&target, self.chains.first().map(|p| &p.mover)) {
            (BinaryModel::Rbm { w, b, c, .. }, Some(Mover::Gibbs(_))) => {
                RbmFlipFactors::new(w, b, c)
            }
            _ => None,
        };
        let k = self.settings.pcd_steps;
        self.steps_done = self.steps_done.saturating_add(k);
        let stop_tuning = self.steps_done >= self.tune_steps;
        let chains = std::mem::take(&mut self.chains);
        let advanced = self.pool.map(chains, |c, mut p| {
            let stats = advance(&target, factors.as_ref(), &mut p, k).map_err(|e| e.in_chain(c))?;
            if stop_tuning && let Mover::Kernel(k) = &mut p.mover {
                k.stop_tuning();
            }
            Ok::<_, RunError>((p, stats))
        })?;
        for (p, stats) in advanced {
            self.stats.merge(&stats);
            self.chains.push(p);
        }
        let batch = self.next_batch();
        let mut grad = vec![0.0; self.model.theta().len()];
        let mut scratch = vec![0.0; self.model.scratch_len()];
        let (b, c) = (batch.len() as f64, self.chains.len() as f64);
        for &i in &batch {
            self.model
                .add_statistics(self.data.row(i), 1.0 / b, &mut grad, &mut scratch);
        }
        for p in &self.chains {
            self.model
                .add_statistics(&p.vecs.x, -1.0 / c, &mut grad, &mut scratch);
        }
        let model = &mut self.model;
        let weights: Vec<bool> = (0..grad.len()).map(|k| model.is_weight(k)).collect();
        self.optimizer
            .step(model.theta_mut(), &grad, |k| weights[k]);
        if model.theta().iter().any(|t| !t.is_finite()) {
            return Err(LearnError::NonFinite);
        }
        self.updates += 1;
        Ok(())
    }

    /// The next `B` row indices: a fresh random permutation of the rows every epoch.
    fn next_batch(&mut self) -> Vec<usize> {
        let n = self.data.rows();
        let mut out = Vec::with_capacity(self.settings.batch);
        while out.len() < self.settings.batch.min(n) {
            if self.cursor == self.order.len() {
                self.order = (0..n).collect();
                for i in (1..n).rev() {
                    // Lemire's multiply-shift: j uniform in 0..=i (bias below 2⁻³²·n).
                    let j =
                        ((u128::from(self.data_rng.next_u64()) * (i as u128 + 1)) >> 64) as usize;
                    self.order.swap(i, j);
                }
                self.cursor = 0;
            }
            out.push(self.order[self.cursor]);
            self.cursor += 1;
        }
        out
    }
}

/// `k` steps of a chain's kernel under `model`, from its current state; Gibbs on an RBM
/// prices its sites from `factors` when given.
fn advance(
    model: &BinaryModel,
    factors: Option<&RbmFlipFactors>,
    p: &mut Persistent,
    k: u64,
) -> Result<ChainStats, RunError> {
    let mut cache = vec![0.0; model.cache_len()];
    let mut target = model
        .target(&mut cache)
        .map_err(|e| RunError::Model(e.into()))?;
    let mut stats = ChainStats::default();
    let (x, rng) = (&mut p.vecs.x, &mut p.rng);
    match &mut p.mover {
        Mover::BlockGibbs(hidden) => {
            let ModelTarget::Rbm(rbm) = &target else {
                return Err(SamplerError::RbmOnly.into());
            };
            hidden.resize(rbm.hidden_units(), 0);
            for _ in 0..k {
                let report =
                    block_gibbs_sweep(rbm, x, hidden, rng).map_err(RunError::evaluation)?;
                stats.record(&report);
            }
            return Ok(stats);
        }
        Mover::Gibbs(Sweep(g)) => {
            if let Some(f) = factors {
                let mut state = vec![0.0; f.state_len()];
                return gibbs_sweeps(&mut f.sites(&mut state), g, x, k, rng);
            }
            match &mut target {
                ModelTarget::IsingGraph(t) => return gibbs_sweeps(t, g, x, k, rng),
                ModelTarget::Rbm(t) => return gibbs_sweeps(t, g, x, k, rng),
                _ => {}
            }
        }
        Mover::Kernel(_) => {}
    }
    let mut chain =
        BinaryChain::new(p.vecs.buffers(), &mut target).map_err(RunError::evaluation)?;
    for _ in 0..k {
        let r = match &mut p.mover {
            Mover::Kernel(kernel) => kernel.step(&mut target, &mut chain, &mut p.rng),
            Mover::Gibbs(sweep) => sweep.step(&mut target, &mut chain, &mut p.rng),
            Mover::BlockGibbs(_) => return Err(SamplerError::RbmOnly.into()),
        }
        .map_err(RunError::evaluation)?;
        stats.record(&r);
    }
    Ok(stats)
}

/// `k` Gibbs sweeps through the single-flip fast path.
fn gibbs_sweeps<T: FlipDelta<Error = std::convert::Infallible>>(
    target: &mut T,
    gibbs: &mut Gibbs,
    x: &mut [u8],
    k: u64,
    rng: &mut Xoshiro256PlusPlus,
) -> Result<ChainStats, RunError> {
    // Establishes the model's caches at the current state.
    let mut grad = vec![0.0f32; x.len()];
    let _ = target.log_density_and_grad(x, &mut grad);
    let mut stats = ChainStats::default();
    for _ in 0..k {
        let mut sweep = SweepReport::default();
        for _ in 0..x.len() {
            let changed = gibbs
                .update_binary(target, x, rng)
                .map_err(RunError::evaluation)?;
            sweep.add_update(changed, 1);
        }
        stats.record(&sweep.report());
    }
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::samplers::{SamplerParams, find};
    use langevin_core::random::unit_f64;
    use rand_core::SeedableRng;

    fn sampler(name: &str) -> Sampler {
        find(name).unwrap().with(SamplerParams::default()).unwrap()
    }

    fn settings(updates: u64, threads: usize) -> PcdSettings {
        PcdSettings {
            pcd_steps: 3,
            chains: 100,
            batch: 2_000,
            updates,
            optimizer: OptimizerKind::Adam,
            lr: 0.02,
            l1: 0.0,
            l2: 0.0,
            seed: 5,
            threads,
        }
    }

    /// Every state of the model (bit k of the index is node k) with its probability.
    fn law(m: &IsingParams) -> Vec<(Vec<u8>, f64)> {
        let n = m.nodes();
        let log_z = m.exact_log_z().unwrap();
        (0u32..1 << n)
            .map(|bits| {
                let x: Vec<u8> = (0..n).map(|k| ((bits >> k) & 1) as u8).collect();
                let p = (m.log_density(&x) - log_z).exp();
                (x, p)
            })
            .collect()
    }

    /// `n` exact draws by inverting the distribution function.
    fn exact_rows(m: &IsingParams, n: usize, seed: u64) -> BinaryRows {
        let states = law(m);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut values = Vec::new();
        for _ in 0..n {
            let mut u = unit_f64(&mut rng);
            let pick = states
                .iter()
                .find(|(_, p)| {
                    u -= p;
                    u < 0.0
                })
                .unwrap_or(&states[states.len() - 1]);
            values.extend_from_slice(&pick.0);
        }
        BinaryRows {
            cols: m.nodes(),
            values,
        }
    }

    /// The asymptotic RMSE over the couplings of the maximum-likelihood estimate from `n`
    /// draws: `sqrt(mean_e [I⁻¹]_ee / n)` with `I` the Fisher information (the covariance of
    /// the sufficient statistics), by enumeration and Gauss–Jordan elimination.
    fn mle_rmse(m: &IsingParams, n: usize) -> f64 {
        let p = m.theta().len();
        let mut mean = vec![0.0; p];
        let mut second = vec![0.0; p * p];
        for (x, prob) in law(m) {
            let mut t = vec![0.0; p];
            m.add_statistics(&x, 1.0, &mut t);
            for a in 0..p {
                mean[a] += prob * t[a];
                for b in 0..p {
                    second[a * p + b] += prob * t[a] * t[b];
                }
            }
        }
        // [I | 1] → [1 | I⁻¹].
        let w = 2 * p;
        let mut aug = vec![0.0; p * w];
        for a in 0..p {
            for b in 0..p {
                aug[a * w + b] = second[a * p + b] - mean[a] * mean[b];
            }
            aug[a * w + p + a] = 1.0;
        }
        for col in 0..p {
            let pivot = aug[col * w + col];
            for k in 0..w {
                aug[col * w + k] /= pivot;
            }
            for row in 0..p {
                if row != col {
                    let f = aug[row * w + col];
                    for k in 0..w {
                        aug[row * w + k] -= f * aug[col * w + k];
                    }
                }
            }
        }
        let e = m.edges().len();
        let trace: f64 = (0..e).map(|a| aug[a * w + p + a]).sum();
        (trace / e as f64 / n as f64).sqrt()
    }

    #[test]
    fn pcd_recovers_the_couplings_of_an_exactly_sampled_ising_model() {
        let mut truth = IsingParams::lattice(3, 3, false).unwrap();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(2);
        let edges = truth.edges().len();
        for (k, t) in truth.theta_mut().iter_mut().enumerate() {
            let scale = if k < edges { 0.6 } else { 0.2 };
            *t = (2.0 * unit_f64(&mut rng) - 1.0) * scale;
        }
        let n = 2_000;
        let data = exact_rows(&truth, n, 3);
        // The MLE's expected RMSE from n draws; PCD adds the noise of 100 chains and of Adam's
        // steps, which at this rate stays below the MLE's own error. RMSE² is a mean of 12
        // squared errors of roughly normal estimates: 3× its expectation is exceeded with
        // probability below 10⁻⁴ (a scaled χ² with ≥ 6 effective degrees of freedom).
        let expected = mle_rmse(&truth, n);
        let threshold = 3.0 * expected;
        let truth_model = truth.to_model().unwrap();
        for name in ["gibbs", "dmala"] {
            let start = PcdModel::Ising(IsingParams::lattice(3, 3, false).unwrap());
            let mut s = settings(1_000, 2);
            (s.pcd_steps, s.lr) = (5, 0.01);
            let mut pcd = Pcd::new(start, &data, &sampler(name), s).unwrap();
            for _ in 0..1_000 {
                pcd.update().unwrap();
            }
            let PcdModel::Ising(learned) = pcd.model() else {
                unreachable!()
            };
            let rmse = learned.coupling_rmse(&truth_model).unwrap();
            assert!(
                rmse < threshold,
                "{name}: RMSE {rmse}, MLE's expected {expected}, threshold {threshold}"
            );
        }
    }

    #[test]
    fn the_learned_parameters_do_not_depend_on_the_thread_count() {
        let data = BinaryRows {
            cols: 6,
            values: (0..120)
                .map(|k| u8::from(k % 3 == 0 || k % 7 == 1))
                .collect(),
        };
        for name in ["gibbs", "ab", "acs", "gwg"] {
            let run = |threads| {
                let model = PcdModel::Rbm(RbmParams::zeros(6, 3));
                let mut s = settings(40, threads);
                (s.chains, s.batch, s.pcd_steps) = (5, 4, 20);
                let mut pcd = Pcd::new(model, &data, &sampler(name), s).unwrap();
                for _ in 0..40 {
                    pcd.update().unwrap();
                }
                pcd.model()
                    .theta()
                    .iter()
                    .map(|t| t.to_bits())
                    .collect::<Vec<_>>()
            };
            let one = run(1);
            assert!(one.iter().any(|&b| b != 0), "{name}");
            assert_eq!(one, run(2), "{name}");
            assert_eq!(one, run(3), "{name}");
        }
    }

    #[test]
    fn refused_settings_are_named_by_their_variant() {
        let data = BinaryRows {
            cols: 4,
            values: vec![0, 1, 1, 0],
        };
        let model = || PcdModel::Rbm(RbmParams::zeros(4, 2));
        let refused = |model, name, s| Pcd::new(model, &data, &sampler(name), s).err();
        let e = refused(
            PcdModel::Rbm(RbmParams::zeros(5, 2)),
            "gibbs",
            settings(1, 1),
        );
        assert!(
            matches!(
                e,
                Some(LearnError::Shape(ShapeError::DataWidth {
                    width: 4,
                    dim: 5
                }))
            ),
            "{e:?}"
        );
        let e = refused(model(), "pt-dmala", settings(1, 1));
        assert!(
            matches!(
                e,
                Some(LearnError::Settings(SettingsError::NotInPcd {
                    sampler: "pt-dmala",
                    why: NotInPcd::Replicas
                }))
            ),
            "{e:?}"
        );
        let mut s = settings(1, 1);
        s.lr = f64::NAN;
        let e = refused(model(), "gibbs", s);
        assert!(
            matches!(e, Some(LearnError::Settings(SettingsError::Rates { .. }))),
            "{e:?}"
        );
        let e = refused(model(), "gibbs", settings(0, 1));
        assert!(
            matches!(e, Some(LearnError::Settings(SettingsError::ZeroCount))),
            "{e:?}"
        );
    }
}
