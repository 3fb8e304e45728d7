//! The AB-2 schedule: the any-scale balanced sampler with the second-order (Gaussian integral
//! trick) kernel of [`langevin_core::second_order`], its quadratic term fitted during burn-in.
//!
//! Per chain (Sun et al. 2023, Sec. 3.2):
//!
//! 1. **first-order burn-in**: the AB-1st kernel (`W = D = 0`) with `(a, b)` tuned by
//!    [`AbTuner`]; every accepted move contributes a pair `(Δx, Δg)`;
//! 2. **fit**: `W` by [`fit_symmetric`], `D` by the chosen [`DiagonalRule`] (the diagonal SDP
//!    for AB-trace, `λ I` for AB-shift, [`min_max_eigenvalue`] for AB-max), the factor `A₁`
//!    with `A₁ᵀA₁ = W + D` by [`trick_factor_f32`]; the factor for balance `b` is `√b · A₁`;
//! 3. **second-order tuning**: the same jump-distance coordinate ascent over `(a, b)` with the
//!    second-order kernel;
//! 4. **frozen**: the exact second-order kernel with the final `(a, b)`.
//!
//! The two first-order rules [`DiagonalRule::DlpTrace`] and [`DiagonalRule::Dmala`] replace
//! phases 3 and 4 by the Metropolis-adjusted flip proposal at balance `½` with a diagonal
//! preconditioner (see [`dlp_preconditioner`]), tuning only the step.
//!
//! Every step is an exact MH step, so only the adaptation makes the tuning phases
//! non-homogeneous; discard them. If the fit or the factorisation fails (say, the chain never
//! moved), the chain carries on with the first-order kernel and the report says why.
//!
//! Ordinal models run the same schedule ([`tune_ordinal_chain`], [`run_ab2_ordinal_chains`])
//! with the kernel of [`langevin_core::second_order::OrdinalAbSecondOrder`].

pub mod diagonal;
pub mod exact_w;
pub mod fit;
mod ordinal;

pub use ordinal::{run_ab2_ordinal_chains, tune_ordinal_chain};

use crate::FlipMathImpl;
use crate::ab2::diagonal::{MaxEigOptions, min_max_eigenvalue};
use crate::ab2::fit::{FitOptions, fit_symmetric, trick_factor_f32};
use crate::binary::{BinaryBuffers, BinaryModel, BinaryRun, ChainResult, RunConfig, RunError};
use crate::run::map_chains;
use crate::sdp::{SdpOptions, SymmetricMatrix, solve_diagonal_sdp};
use langevin_core::ParamError;
use langevin_core::binary::{
    BinaryChain, BinaryKernel, Dmala, FlipProposal, StepError, StepReport,
};
use langevin_core::second_order::{AbSecondOrder, TrickParams, scratch_len};
use langevin_core::stats::ChainStats;
use langevin_core::target::BinaryTarget;
use langevin_core::tuning::{AbSettings, AbTuner};
use nalgebra::DMatrix;
use rand_core::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::sync::atomic::{AtomicU64, Ordering};

/// How `D` is chosen once `W` is fitted.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DiagonalRule {
    /// AB-trace: `min trace(D)` with `W + D ⪰ 0` (the diagonal SDP).
    Trace,
    /// AB-shift: `D = λ I`, `λ = max(ε, −λ_min(W))`.
    Shift {
        /// The floor `ε`.
        eps: f64,
    },
    /// AB-1st: no second-order phase (`W = D = A = 0`).
    FirstOrder,
    /// AB-max: `min λ_max(W + D)` with `D ≥ 0`, `W + D ⪰ 0` ([`min_max_eigenvalue`], started
    /// from the trace-optimal `D`).
    Max,
    /// DLP-trace: the first-order kernel `exp(b gᵀ(y−x) − (y−x)ᵀD(y−x)/a)` at `b = ½` with the
    /// trace-optimal `D` (normalised to mean `½`, entries floored at `floor · ½`), step tuned;
    /// see [`dlp_preconditioner`].
    DlpTrace {
        /// Floor of `D_ii` relative to the mean of `D` (default in the CLI: 0.05).
        floor: f64,
    },
    /// DMALA: the first-order kernel at `b = ½` without a fit (`D = I/2`), step tuned; the
    /// baseline of the DLP rules.
    Dmala,
}

impl DiagonalRule {
    /// The name the CLI and reports use.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Trace => "trace",
            Self::Shift { .. } => "shift",
            Self::FirstOrder => "first-order",
            Self::Max => "max",
            Self::DlpTrace { .. } => "dlp-trace",
            Self::Dmala => "dmala",
        }
    }

    /// Whether the frozen kernel is the first-order flip proposal at `b = ½`.
    pub(crate) fn is_dlp(&self) -> bool {
        matches!(self, Self::DlpTrace { .. } | Self::Dmala)
    }
}

/// Settings of the AB-2 schedule.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Ab2Settings {
    /// The first-order burn-in tuner (default: [`AbSettings::default`] with a budget of 2000).
    pub first: AbSettings,
    /// Most recent pairs kept for the fit (default 4000).
    pub max_pairs: usize,
    /// Steps of second-order `(a, b)` tuning (default 2000).
    pub second_budget: u64,
    /// Steps per probe in the second-order tuning (default 100).
    pub probe_steps: u32,
    /// Initial relative probe size `γ` of the second-order tuning (default 0.2).
    pub rate: f64,
    /// Factor applied to `γ` after a round without change (default 0.9).
    pub decay: f64,
    /// The choice of `D` (default AB-trace).
    pub diagonal: DiagonalRule,
    /// Options of the diagonal SDP (default: relative gap `1e-3`).
    pub sdp: SdpOptions,
    /// Options of the AB-max solver (default: relative gap `1e-3`, 200 iterations).
    pub max_eig: MaxEigOptions,
}

impl Default for Ab2Settings {
    fn default() -> Self {
        let mut first = AbSettings::default();
        first.budget = 2000;
        Self {
            first,
            max_pairs: 4000,
            second_budget: 2000,
            probe_steps: 100,
            rate: 0.2,
            decay: 0.9,
            diagonal: DiagonalRule::Trace,
            sdp: SdpOptions::default(),
            max_eig: MaxEigOptions::default(),
        }
    }
}

/// What the schedule fitted and chose for one chain.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ab2Report {
    /// `(a, b)` at the end of the first-order burn-in.
    pub first_order: (f64, f64),
    /// Pairs used for the fit.
    pub pairs: usize,
    /// Relative residual of the fitted `W` (`‖M W − G‖_F / ‖G‖_F`).
    pub fit_residual: Option<f64>,
    /// Directions of `W` the burn-in explored.
    pub explored: usize,
    /// `trace(D)`.
    pub trace_d: f64,
    /// The SDP's certified relative gap (AB-trace, AB-max's start, DLP-trace).
    pub sdp_gap: Option<f64>,
    /// The rule that chose `D` ([`DiagonalRule::name`]).
    pub diagonal: &'static str,
    /// `λ_max(W + D)` (second-order rules).
    pub lambda_max: Option<f64>,
    /// AB-max: the solver's certified relative gap.
    pub max_gap: Option<f64>,
    /// DLP rules: smallest and largest preconditioner entry `p_i` (`a_i = a p_i²`).
    pub precond_range: Option<(f64, f64)>,
    /// Final step `a`.
    pub step: f64,
    /// Final balance `b`.
    pub balance: f64,
    /// Steps spent tuning (both phases).
    pub tuning_steps: u64,
    /// Why the chain stayed first order, if it did.
    pub fallback: Option<String>,
}

impl Ab2Report {
    /// The report as JSON (for [`ChainResult::tuned`]).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "sampler": "ab2",
            "first_order_step": self.first_order.0,
            "first_order_balance": self.first_order.1,
            "pairs": self.pairs,
            "fit_residual": self.fit_residual,
            "explored": self.explored,
            "trace_d": self.trace_d,
            "sdp_gap": self.sdp_gap,
            "diagonal": self.diagonal,
            "lambda_max": self.lambda_max,
            "max_gap": self.max_gap,
            "precond_range": self.precond_range.map(|(lo, hi)| [lo, hi]),
            "step": self.step,
            "balance": self.balance,
            "tuning_steps": self.tuning_steps,
            "fallback": self.fallback,
        })
    }
}

/// The fitted quadratic model of one chain: `W`, `D` and the unit factor `A₁` (`A₁ᵀA₁ = W + D`,
/// up to a relative jitter of `1e-12`), plus the factor for the current balance.
#[derive(Clone, Debug)]
pub struct Ab2Fitted {
    /// The dimension.
    pub dim: usize,
    /// `W`, `d × d` row-major, symmetric.
    pub w: Vec<f32>,
    /// The diagonal of `D`.
    pub diag: Vec<f32>,
    /// `A₁`, upper triangular, row-major.
    pub unit_factor: Vec<f32>,
    /// DLP rules: the preconditioner `p` of the frozen first-order kernel (`a_i = a p_i²`,
    /// balance `½`); `W`, `D` and `A₁` are then zero and unused.
    pub dlp_preconditioner: Option<Vec<f32>>,
    factor: Vec<f32>,
    factor_balance: f64,
}

impl Ab2Fitted {
    /// The first-order model `W = D = A = 0`.
    pub fn zero(dim: usize) -> Self {
        Self {
            dim,
            w: vec![0.0; dim * dim],
            diag: vec![0.0; dim],
            unit_factor: vec![0.0; dim * dim],
            dlp_preconditioner: None,
            factor: vec![0.0; dim * dim],
            factor_balance: 0.0,
        }
    }

    /// Whether `W = D = 0`: the second-order kernel is then the first-order balanced
    /// proposal, which the flip kernel draws without the two `d × d` products.
    pub fn is_first_order(&self) -> bool {
        self.w.iter().chain(&self.diag).all(|&v| v == 0.0)
    }

    /// A model from `W` (symmetric, `f64`) and `D`; factors `W + D`.
    ///
    /// # Errors
    ///
    /// Any [`crate::ab2::fit::FitError`] of [`trick_factor_f32`], as text.
    pub fn new(w: &[f64], diag: &[f64], dim: usize) -> Result<Self, String> {
        let unit_factor = trick_factor_f32(w, diag, dim, 1.0).map_err(|e| e.to_string())?;
        Ok(Self {
            dim,
            w: w.iter().map(|&v| v as f32).collect(),
            diag: diag.iter().map(|&v| v as f32).collect(),
            factor: unit_factor.clone(),
            unit_factor,
            dlp_preconditioner: None,
            factor_balance: 1.0,
        })
    }

    /// Kernel parameters for `(a, b)`, rescaling the factor to `√b · A₁` if `b` changed.
    ///
    /// # Errors
    ///
    /// [`ParamError`] for an invalid `a` or `b`.
    pub fn params(&mut self, step: f64, balance: f64) -> Result<TrickParams<'_>, ParamError> {
        if balance != self.factor_balance {
            let s = balance.sqrt() as f32;
            for (f, &u) in self.factor.iter_mut().zip(&self.unit_factor) {
                *f = s * u;
            }
            self.factor_balance = balance;
        }
        TrickParams::new(&self.w, &self.diag, &self.factor, step, balance)
    }
}

/// `D = max(ε, −λ_min(W)) I` for a symmetric `W` (`d × d`, row-major).
///
/// # Errors
///
/// A message for a wrong length or a non-finite `W`.
pub fn shift_diagonal(w: &[f64], dim: usize, eps: f64) -> Result<Vec<f64>, String> {
    if w.len() != dim * dim || dim == 0 {
        return Err(format!("W has {} entries, expected {}", w.len(), dim * dim));
    }
    if w.iter().any(|v| !v.is_finite()) {
        return Err("W is not finite".into());
    }
    let m = DMatrix::from_row_slice(dim, dim, w);
    let m = (&m + m.transpose()) * 0.5;
    let lambda_min = m.symmetric_eigenvalues().min();
    Ok(vec![eps.max(-lambda_min); dim])
}

/// `D` from the diagonal SDP (`min trace D`, `W + D ⪰ 0`); returns `D` and the certified gap.
///
/// # Errors
///
/// The solver's error, as text.
pub fn trace_diagonal(w: &[f64], dim: usize, opts: &SdpOptions) -> Result<(Vec<f64>, f64), String> {
    let m = SymmetricMatrix::from_row_major(dim, dim, w).map_err(|e| e.to_string())?;
    let sol = solve_diagonal_sdp(&m, opts).map_err(|e| e.to_string())?;
    Ok((sol.d, sol.rel_gap))
}

/// `D` for AB-max: [`min_max_eigenvalue`] started from the trace-optimal `D`; returns `D`,
/// `λ_max(W + D)`, the solver's certified relative gap and the SDP's gap.
///
/// # Errors
///
/// The SDP's or the solver's error, as text.
pub fn max_diagonal(
    w: &[f64],
    dim: usize,
    sdp: &SdpOptions,
    opts: &MaxEigOptions,
) -> Result<(Vec<f64>, f64, f64, f64), String> {
    let (start, sdp_gap) = trace_diagonal(w, dim, sdp)?;
    let sol = min_max_eigenvalue(w, dim, Some(&start), opts).map_err(|e| e.to_string())?;
    Ok((sol.d, sol.lambda_max, sol.rel_gap, sdp_gap))
}

/// The preconditioner that turns the flip proposal into the anisotropic DLP kernel with
/// diagonal `D`.
///
/// The kernel `exp(b gᵀ(y−x) − (y−x)ᵀD(y−x)/a)` on `{0,1}^d` has `(y_i − x_i)² = [flip i]`,
/// so its flip logit is `b g_i (1 − 2x_i) − D_ii/a`; the flip proposal with preconditioner `p`
/// has `b g_i (1 − 2x_i) − 1/(2 a p_i²)`. They agree for `p_i = 1/√(2 D_ii)`. The overall scale
/// of `D` only rescales the step `a`, which is tuned, so `D` is first normalised to mean `½`
/// (then `a` means the same as DMALA's step on average). A coordinate with `D_ii = 0` would get
/// an infinite step (a flip probability independent of `a`); entries are therefore floored at
/// `floor · ½`, i.e. at `floor` times the mean, which caps `p_i` at `1/√floor`. When `D = 0`
/// (`W ⪰ 0`) the result is `p = 1`: plain DMALA.
///
/// # Errors
///
/// A message unless `floor` is finite and in `(0, 1]` and `D` is finite and `≥ 0`.
pub fn dlp_preconditioner(diag: &[f64], floor: f64) -> Result<Vec<f32>, String> {
    if !(floor > 0.0 && floor <= 1.0) {
        return Err(format!("the DLP floor must be in (0, 1], got {floor}"));
    }
    if diag.iter().any(|v| !(v.is_finite() && *v >= 0.0)) {
        return Err("D must be finite and ≥ 0".into());
    }
    let mean = diag.iter().sum::<f64>() / diag.len().max(1) as f64;
    if mean <= 0.0 {
        return Ok(vec![1.0; diag.len()]);
    }
    Ok(diag
        .iter()
        .map(|&v| {
            let normalised = (0.5 * v / mean).max(0.5 * floor);
            (1.0 / (2.0 * normalised).sqrt()) as f32
        })
        .collect())
}

/// `λ_max` of a symmetric `W + D` (`d × d`, row-major).
fn lambda_max(w: &[f64], diag: &[f64], dim: usize) -> f64 {
    let mut m = DMatrix::from_row_slice(dim, dim, w);
    for (i, &v) in diag.iter().enumerate() {
        m[(i, i)] += v;
    }
    let m = (&m + m.transpose()) * 0.5;
    m.symmetric_eigenvalues().max()
}

/// The jump-distance coordinate ascent of [`AbTuner`] over `(a, b)`, for any kernel.
#[derive(Clone, Copy, Debug)]
struct JumpTuner {
    step: f64,
    balance: f64,
    rate: f64,
    decay: f64,
    tune_balance: bool,
    /// Only the step is tuned (DLP rules).
    fixed_balance: bool,
    probe: usize,
    jumps: [u64; 3],
    moved: bool,
}

impl JumpTuner {
    /// `(a, b)` of probe `k` (0: centre, 1: up, 2: down).
    fn probe_params(&self, k: usize) -> (f64, f64) {
        let f = match k {
            1 => 1.0 + self.rate,
            2 => 1.0 - self.rate,
            _ => 1.0,
        };
        if self.tune_balance {
            (self.step, (self.balance * f).clamp(1e-3, 1.0))
        } else {
            (self.step * f, self.balance)
        }
    }

    /// Books a finished probe; after the third, moves the centre and switches parameter.
    fn finish_probe(&mut self, jump: u64) {
        if let Some(j) = self.jumps.get_mut(self.probe) {
            *j = jump;
        }
        self.probe += 1;
        if self.probe < 3 {
            return;
        }
        let [d0, up, down] = self.jumps;
        let chosen = if up > d0 && up >= down {
            1
        } else if down > d0 && down > up {
            2
        } else {
            0
        };
        let (a, b) = self.probe_params(chosen);
        self.moved |= (a, b) != (self.step, self.balance);
        (self.step, self.balance) = (a, b);
        self.probe = 0;
        self.jumps = [0; 3];
        if self.tune_balance || self.fixed_balance {
            // A round is over.
            if !self.moved {
                self.rate *= self.decay;
            }
            self.moved = false;
        }
        if !self.fixed_balance {
            self.tune_balance = !self.tune_balance;
        }
    }
}

/// Keeps the most recent `cap` pairs `(Δx, Δg)`, `d` entries each.
struct Pairs {
    dim: usize,
    cap: usize,
    next: usize,
    dx: Vec<f64>,
    dg: Vec<f64>,
}

impl Pairs {
    fn push<V: Copy + Into<f64>>(&mut self, x0: &[V], g0: &[f32], x1: &[V], g1: &[f32]) {
        if self.cap == 0 {
            return;
        }
        let row = self.next % self.cap;
        self.next += 1;
        if self.dx.len() < self.cap * self.dim {
            self.dx.resize(self.dx.len() + self.dim, 0.0);
            self.dg.resize(self.dg.len() + self.dim, 0.0);
        }
        let span = row * self.dim..(row + 1) * self.dim;
        for (((o, &a), &b), (p, (&c, &e))) in self.dx[span.clone()]
            .iter_mut()
            .zip(x1)
            .zip(x0)
            .zip(self.dg[span].iter_mut().zip(g1.iter().zip(g0)))
        {
            *o = a.into() - b.into();
            *p = f64::from(c) - f64::from(e);
        }
    }
}

/// Why the schedule stopped.
pub type Ab2Error<E> = StepError<E>;

/// Runs the tuning phases of the AB-2 schedule on `chain` (first-order burn-in, fit, second-order
/// tuning) and returns the fitted model with the final `(a, b)`. Step totals are added to
/// `stats`.
///
/// # Errors
///
/// [`StepError`] from a kernel step; a failed fit is not an error (see [`Ab2Report::fallback`]).
pub fn tune_chain<T, R>(
    target: &mut T,
    chain: &mut BinaryChain<'_>,
    rng: &mut R,
    settings: &Ab2Settings,
    stats: &mut ChainStats,
) -> Result<(Ab2Fitted, Ab2Report), Ab2Error<T::Error>>
where
    T: BinaryTarget + ?Sized,
    R: Rng + ?Sized,
{
    let d = chain.dim();
    let mut report = Ab2Report::default();
    let mut tuner = AbTuner::new(settings.first).map_err(param_error)?;
    let mut pairs = Pairs {
        dim: d,
        cap: settings.max_pairs,
        next: 0,
        dx: Vec::new(),
        dg: Vec::new(),
    };
    let (mut x0, mut g0) = (vec![0u8; d], vec![0.0f32; d]);
    while !tuner.is_frozen() {
        x0.copy_from_slice(chain.state());
        g0.copy_from_slice(chain.grad());
        let r = tuner.step(target, chain, rng)?;
        stats.record(&r);
        report.tuning_steps += 1;
        if r.accepted && r.proposed_flips > 0 {
            pairs.push(&x0, &g0, chain.state(), chain.grad());
        }
    }
    let ab = tuner.report();
    report.first_order = (ab.step, ab.balance);
    (report.step, report.balance) = (ab.step, ab.balance);
    report.pairs = pairs.next.min(pairs.cap);
    let mut fitted = match fit(&pairs, d, settings, &mut report) {
        Ok(f) => f,
        Err(why) => {
            report.fallback = Some(why);
            return Ok((Ab2Fitted::zero(d), report));
        }
    };
    let dlp = settings.diagonal.is_dlp();
    let mut jt = JumpTuner {
        step: ab.step,
        balance: if dlp { 0.5 } else { ab.balance },
        rate: settings.rate,
        decay: settings.decay,
        tune_balance: false,
        fixed_balance: dlp,
        probe: 0,
        jumps: [0; 3],
        moved: false,
    };
    if let Some(p) = &fitted.dlp_preconditioner {
        let mut spent = 0u64;
        while spent + u64::from(settings.probe_steps) <= settings.second_budget {
            let (a, b) = jt.probe_params(jt.probe);
            let kernel = dlp_kernel(a, b, p).map_err(param_error)?;
            let mut jump = 0u64;
            for _ in 0..settings.probe_steps {
                let r = kernel.step(target, chain, rng)?;
                stats.record(&r);
                jump += u64::from(r.accepted_flips());
            }
            spent += u64::from(settings.probe_steps);
            jt.finish_probe(jump);
        }
        report.tuning_steps += spent;
        (report.step, report.balance) = (jt.step, jt.balance);
        return Ok((fitted, report));
    }
    let mut scratch = vec![0.0f64; scratch_len(d)];
    let mut cached = vec![0u8; d];
    let mut spent = 0u64;
    while spent + u64::from(settings.probe_steps) <= settings.second_budget {
        let (a, b) = jt.probe_params(jt.probe);
        let params = fitted.params(a, b).map_err(param_error)?;
        let mut kernel =
            AbSecondOrder::new(params, &mut scratch, &mut cached).map_err(StepError::Len)?;
        let mut jump = 0u64;
        for _ in 0..settings.probe_steps {
            let r = kernel.step(target, chain, rng)?;
            stats.record(&r);
            jump += u64::from(r.accepted_flips());
        }
        spent += u64::from(settings.probe_steps);
        jt.finish_probe(jump);
    }
    report.tuning_steps += spent;
    (report.step, report.balance) = (jt.step, jt.balance);
    Ok((fitted, report))
}

/// The frozen kernel of the DLP rules: DMALA at `(a, b)` with preconditioner `p`.
fn dlp_kernel(a: f64, b: f64, p: &[f32]) -> Result<Dmala<'_, FlipMathImpl>, ParamError> {
    Ok(Dmala::new(
        FlipProposal::<FlipMathImpl>::with_math(a, b)?.preconditioned(p)?,
    ))
}

fn param_error<E>(e: ParamError) -> StepError<E> {
    match e {
        ParamError::Len(l) => StepError::Len(l),
        _ => StepError::Len(langevin_core::LenError {
            buffer: "AB-2 parameters",
            expected: 0,
            found: 0,
        }),
    }
}

/// Fits `W`, chooses `D` and factors; fills the fit fields of `report`.
fn fit(
    pairs: &Pairs,
    d: usize,
    settings: &Ab2Settings,
    report: &mut Ab2Report,
) -> Result<Ab2Fitted, String> {
    report.diagonal = settings.diagonal.name();
    if settings.diagonal == DiagonalRule::FirstOrder {
        return Err("first order requested".into());
    }
    if settings.diagonal == DiagonalRule::Dmala {
        let mut fitted = Ab2Fitted::zero(d);
        fitted.dlp_preconditioner = Some(vec![1.0; d]);
        report.precond_range = Some((1.0, 1.0));
        return Ok(fitted);
    }
    if pairs.next == 0 {
        return Err("no accepted moves during burn-in".into());
    }
    let q = fit_symmetric(&pairs.dx, &pairs.dg, d, &FitOptions::default())
        .map_err(|e| format!("fit: {e}"))?;
    report.fit_residual = Some(q.residual);
    report.explored = q.explored;
    let diag = match settings.diagonal {
        DiagonalRule::Trace => {
            let (diag, gap) = trace_diagonal(&q.w, d, &settings.sdp)?;
            report.sdp_gap = Some(gap);
            diag
        }
        DiagonalRule::Shift { eps } => shift_diagonal(&q.w, d, eps)?,
        DiagonalRule::Max => {
            let (diag, _, max_gap, sdp_gap) =
                max_diagonal(&q.w, d, &settings.sdp, &settings.max_eig)?;
            report.sdp_gap = Some(sdp_gap);
            report.max_gap = Some(max_gap);
            diag
        }
        DiagonalRule::DlpTrace { floor } => {
            let (diag, gap) = trace_diagonal(&q.w, d, &settings.sdp)?;
            report.sdp_gap = Some(gap);
            report.trace_d = diag.iter().sum();
            let p = dlp_preconditioner(&diag, floor)?;
            let (lo, hi) = p.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &v| {
                (lo.min(f64::from(v)), hi.max(f64::from(v)))
            });
            report.precond_range = Some((lo, hi));
            let mut fitted = Ab2Fitted::zero(d);
            fitted.dlp_preconditioner = Some(p);
            return Ok(fitted);
        }
        DiagonalRule::FirstOrder | DiagonalRule::Dmala => {
            return Err("first order requested".into());
        }
    };
    report.trace_d = diag.iter().sum();
    report.lambda_max = Some(lambda_max(&q.w, &diag, d));
    Ab2Fitted::new(&q.w, &diag, d).map_err(|e| format!("factor: {e}"))
}

/// Runs `config.chains` chains of the AB-2 schedule on `model`, like
/// [`crate::binary::run_chains`]: chain `c` starts uniformly at random from its own stream, runs
/// the tuning phases of [`tune_chain`] and then `config.burn_in` further frozen steps (all
/// counted in `burn_in_stats`), then `config.steps` kept steps. Each chain's
/// [`ChainResult::tuned`] holds its [`Ab2Report`] as JSON. Output does not depend on the thread
/// count.
///
/// # Errors
///
/// [`RunError`] for a start where the model is not finite or a failing step.
pub fn run_ab2_chains(
    model: &BinaryModel,
    settings: &Ab2Settings,
    config: &RunConfig,
    progress: Option<&AtomicU64>,
) -> Result<BinaryRun, RunError> {
    settings.first.validate().map_err(RunError::Param)?;
    let run = map_chains(
        config.seed,
        config.threads,
        vec![(); config.chains],
        |c, (), rng| run_one(model, settings, config, c, rng, progress),
    )?;
    Ok(BinaryRun {
        chains: run.results,
        dim: model.dim(),
        wall_time: run.wall_time,
        threads: run.threads,
    })
}

fn run_one(
    model: &BinaryModel,
    settings: &Ab2Settings,
    config: &RunConfig,
    c: usize,
    mut rng: Xoshiro256PlusPlus,
    progress: Option<&AtomicU64>,
) -> Result<ChainResult, RunError> {
    let d = model.dim();
    let mut cache = vec![0.0f64; model.cache_len()];
    let mut target = model.target(&mut cache).map_err(RunError::Model)?;
    let mut buffers = BinaryBuffers::uniform(d, &mut rng);
    let mut chain = BinaryChain::new(buffers.buffers(), &mut target)
        .map_err(|e| RunError::Model(format!("chain {c}: {e}")))?;
    let mut result = ChainResult {
        draws: Vec::with_capacity(config.kept() * d),
        log_density: Vec::with_capacity(config.kept()),
        ..ChainResult::default()
    };
    let step_err = |e: StepError<_>| RunError::Model(e.to_string());
    let (mut fitted, report) = tune_chain(
        &mut target,
        &mut chain,
        &mut rng,
        settings,
        &mut result.burn_in_stats,
    )
    .map_err(step_err)?;
    if let Some(p) = progress {
        p.fetch_add(report.tuning_steps, Ordering::Relaxed);
    }
    let precond = fitted
        .dlp_preconditioner
        .take()
        .or_else(|| fitted.is_first_order().then(|| vec![1.0; d]));
    let mut scratch = vec![0.0f64; scratch_len(d)];
    let mut cached = vec![0u8; d];
    let mut kernel = match &precond {
        Some(p) => {
            Frozen::Dlp(dlp_kernel(report.step, report.balance, p).map_err(RunError::Param)?)
        }
        None => {
            let params = fitted
                .params(report.step, report.balance)
                .map_err(RunError::Param)?;
            Frozen::Second(
                AbSecondOrder::new(params, &mut scratch, &mut cached)
                    .map_err(|e| RunError::Param(e.into()))?,
            )
        }
    };
    let mut step = |chain: &mut BinaryChain<'_>,
                    rng: &mut Xoshiro256PlusPlus|
     -> Result<StepReport, RunError> {
        match &mut kernel {
            Frozen::Dlp(k) => k.step(&mut target, chain, rng),
            Frozen::Second(k) => k.step(&mut target, chain, rng),
        }
        .map_err(step_err)
    };
    for _ in 0..config.burn_in {
        let r = step(&mut chain, &mut rng)?;
        result.burn_in_stats.record(&r);
    }
    let thin = config.thin.max(1);
    for t in 1..=config.steps {
        let r = step(&mut chain, &mut rng)?;
        result.stats.record(&r);
        result.jump += u64::from(r.accepted_flips());
        if t % thin == 0 {
            result.draws.extend_from_slice(chain.state());
            result.log_density.push(chain.log_density());
        }
    }
    if let Some(p) = progress {
        p.fetch_add(config.burn_in + config.steps, Ordering::Relaxed);
    }
    result.tuned = Some(report.to_json());
    Ok(result)
}

/// The kernel of the kept phase.
enum Frozen<'a> {
    Second(AbSecondOrder<'a, 'a>),
    Dlp(Dmala<'a, FlipMathImpl>),
}
