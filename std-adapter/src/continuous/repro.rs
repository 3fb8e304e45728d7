//! Ranking reproductions of Li et al. (2020) and Zhang et al. (2020) as accuracy-versus-data-passes
//! tables.
//!
//! Each runs many independent chains with [`run`] and, after every data pass, fits a Gaussian
//! to the ensemble of chain states and compares it with the exact target: the error of a
//! method at `p` passes is a property of its law after `p N` per-term gradients, which is how
//! the papers compare samplers.

use super::metrics::{ensemble_moments, gaussian_kl, gaussian_w2};
use super::{
    ContinuousConfig, ContinuousError, GaussianSum, Model, RidgeRegression, SamplerKind,
    SnapshotKind, run,
};
use langevin_core::continuous::Access;
use std::fmt::Write as _;

/// Errors of several methods after each data pass.
#[derive(Clone, Debug, PartialEq)]
pub struct CurveTable {
    /// What is measured.
    pub title: String,
    /// The data passes of the rows (`1, 2, …`).
    pub passes: Vec<f64>,
    /// Method names, one column each.
    pub methods: Vec<String>,
    /// `errors[m][p]`: method `m` after `passes[p]` passes.
    pub errors: Vec<Vec<f64>>,
}

/// A distance between two Gaussians given by mean and row-major covariance, fit first.
type GaussianDistance = fn(&[f64], &[f64], &[f64], &[f64]) -> f64;

impl CurveTable {
    /// An empty table with rows at `1..=passes` data passes.
    fn new(title: String, passes: usize) -> Self {
        Self {
            title,
            passes: (1..=passes).map(|p| p as f64).collect(),
            methods: Vec::new(),
            errors: Vec::new(),
        }
    }

    /// Runs `cfg` with `chains` chains from `seed` for as many data passes as the table has
    /// rows, and adds its column: after each pass, `distance` from the Gaussian fit of the
    /// ensemble to the target `(mean, cov)`.
    fn add_method(
        &mut self,
        mut cfg: ContinuousConfig,
        (chains, seed): (usize, u64),
        (mean, cov): (&[f64], &[f64]),
        distance: GaussianDistance,
    ) -> Result<(), ContinuousError> {
        let passes = self.passes.len();
        cfg.passes = passes as f64;
        cfg.chains = chains;
        cfg.seed = seed;
        let out = run(&cfg)?;
        let errs = (0..passes)
            .map(|k| {
                let (m, c) = ensemble_moments(&out.samples, out.shape, k);
                distance(&m, &c, mean, cov)
            })
            .collect();
        self.methods.push(cfg.variant());
        self.errors.push(errs);
        Ok(())
    }

    /// The column of a method.
    pub fn column(&self, method: &str) -> Option<&[f64]> {
        let m = self.methods.iter().position(|x| x == method)?;
        self.errors.get(m).map(Vec::as_slice)
    }

    /// A Markdown table with the rows at the given passes (all rows if `rows` is empty).
    pub fn to_markdown(&self, rows: &[f64]) -> String {
        let mut s = format!("{}\n\n| passes |", self.title);
        for m in &self.methods {
            let _ = write!(s, " {m} |");
        }
        s.push_str("\n|---:|");
        s.push_str(&"---:|".repeat(self.methods.len()));
        s.push('\n');
        for (p, &passes) in self.passes.iter().enumerate() {
            if !rows.is_empty() && !rows.contains(&passes) {
                continue;
            }
            let _ = write!(s, "| {passes} |");
            for col in &self.errors {
                let _ = write!(s, " {:.4e} |", col[p]);
            }
            s.push('\n');
        }
        s
    }
}

/// Li et al. (2020), Sec. 5.1 (Fig. 1a): the 2-D Gaussian sum with `N = 20` centres from `N(0, I)`,
/// minibatch 1, 30 data passes, EWSG (`M = 1`) and SGHMC at `h = 0.05`, `γ = 10`, SGLD at
/// `h = 0.005`; all chains start at 0.
#[derive(Clone, Debug, PartialEq)]
pub struct GaussianSumSetup {
    /// `N` (paper: 20).
    pub terms: usize,
    /// `d` (paper: 2).
    pub dim: usize,
    /// Seed of the centres.
    pub data_seed: u64,
    /// Independent chains per method (paper: 10 000).
    pub chains: usize,
    /// Data passes (paper: 30).
    pub passes: usize,
    /// Step of SGHMC and EWSG (paper: 0.05).
    pub step: f64,
    /// Step of SGLD (paper: 0.005).
    pub sgld_step: f64,
    /// Friction (paper: 10).
    pub friction: f64,
    /// Seed of the chains.
    pub seed: u64,
}

impl Default for GaussianSumSetup {
    fn default() -> Self {
        Self {
            terms: 20,
            dim: 2,
            data_seed: 2024,
            chains: 10_000,
            passes: 30,
            step: 0.05,
            sgld_step: 0.005,
            friction: 10.0,
            seed: 1,
        }
    }
}

/// KL divergence from the ensemble's Gaussian fit to the target `N(c̄, I/N)` after each pass,
/// for EWSG, SGHMC and SGLD.
///
/// # Errors
///
/// Whatever [`run`] returns.
pub fn ewsg_vs_sghmc(setup: &GaussianSumSetup) -> Result<CurveTable, ContinuousError> {
    let model = GaussianSum::synthetic(setup.terms, setup.dim, setup.data_seed)?;
    let mean = model.target_mean();
    let d = setup.dim;
    let mut cov = vec![0.0; d * d];
    for i in 0..d {
        cov[i * d + i] = model.target_var();
    }
    let methods = [
        (SamplerKind::Ewsg, setup.step),
        (SamplerKind::Sghmc, setup.step),
        (SamplerKind::Sgld, setup.sgld_step),
    ];
    let title = format!(
        "KL(ensemble fit ‖ target), Gaussian sum N = {}, d = {}, {} chains, batch 1",
        setup.terms, setup.dim, setup.chains
    );
    let mut table = CurveTable::new(title, setup.passes);
    for (sampler, step) in methods {
        let mut cfg = ContinuousConfig::new(Model::GaussianSum(model.clone()), sampler, step);
        cfg.friction = setup.friction;
        cfg.batch = 1;
        cfg.index_chain = 1;
        let chains = (setup.chains, setup.seed);
        table.add_method(cfg, chains, (&mean, &cov), gaussian_kl)?;
    }
    Ok(table)
}

/// Zhang et al. (2020), Sec. 6.2 (Fig. 2, first panel) on synthetic data: Bayesian ridge regression with
/// `y ~ N(xᵀw, λ)`, prior `N(0, λ I)` (the paper uses one `λ` for both), random access,
/// all methods at the same step, chains starting at 0.
#[derive(Clone, Debug, PartialEq)]
pub struct RidgeSetup {
    /// `N`.
    pub terms: usize,
    /// `d`.
    pub dim: usize,
    /// `λ`, the noise and prior variance.
    pub lambda: f64,
    /// Seed of the data.
    pub data_seed: u64,
    /// Minibatch size `n`.
    pub batch: usize,
    /// Step `h` as a fraction of `1 / L`, `L` the largest eigenvalue of the posterior
    /// precision.
    pub step_times_l: f64,
    /// Period `D` of SVRG-LD and TMU (`None`: `N / n`, one data pass of minibatch steps).
    pub period: Option<u64>,
    /// Independent chains per method.
    pub chains: usize,
    /// Data passes.
    pub passes: usize,
    /// Seed of the chains.
    pub seed: u64,
}

impl Default for RidgeSetup {
    fn default() -> Self {
        Self {
            terms: 1000,
            dim: 10,
            lambda: 1.0,
            data_seed: 2020,
            batch: 10,
            step_times_l: 0.1,
            period: None,
            chains: 200,
            passes: 10,
            seed: 1,
        }
    }
}

/// 2-Wasserstein distance from the ensemble's Gaussian fit to the exact posterior after each
/// pass, for SGLD, SVRG-LD, SAGA-LD, TMU-RA and LMC. Returns the table and the step used.
///
/// # Errors
///
/// Whatever [`run`] returns.
pub fn agld_ridge(setup: &RidgeSetup) -> Result<(CurveTable, f64), ContinuousError> {
    let (model, _) = RidgeRegression::synthetic(
        setup.terms,
        setup.dim,
        setup.lambda,
        setup.lambda,
        setup.data_seed,
    )?;
    let (mean, cov) = model.posterior()?;
    let l = largest_precision_eigenvalue(&cov, setup.dim);
    let step = setup.step_times_l / l;
    let methods: [(SamplerKind, Option<SnapshotKind>); 5] = [
        (SamplerKind::Sgld, None),
        (SamplerKind::Agld, Some(SnapshotKind::Total)),
        (SamplerKind::Agld, Some(SnapshotKind::Partial)),
        (SamplerKind::Agld, Some(SnapshotKind::Mixed)),
        (SamplerKind::Lmc, None),
    ];
    let title = format!(
        "W2(ensemble fit, posterior), ridge regression N = {}, d = {}, batch {}, h = {:.3e} ({} / L), {} chains",
        setup.terms, setup.dim, setup.batch, step, setup.step_times_l, setup.chains
    );
    let mut table = CurveTable::new(title, setup.passes);
    for (sampler, snapshot) in methods {
        let mut cfg = ContinuousConfig::new(Model::Ridge(model.clone()), sampler, step);
        cfg.batch = setup.batch;
        cfg.access = Access::Random;
        if let Some(s) = snapshot {
            cfg.snapshot = s;
        }
        cfg.period = setup.period;
        let chains = (setup.chains, setup.seed);
        table.add_method(cfg, chains, (&mean, &cov), gaussian_w2)?;
    }
    Ok((table, step))
}

/// `1 / λ_min(Σ)`: the largest eigenvalue of the precision.
fn largest_precision_eigenvalue(cov: &[f64], d: usize) -> f64 {
    let m = nalgebra::DMatrix::from_row_slice(d, d, cov);
    let min = m
        .symmetric_eigen()
        .eigenvalues
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min);
    1.0 / min
}
