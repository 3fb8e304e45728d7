//! The AB-2 schedule: the any-scale balanced sampler with the second-order (Gaussian integral
//! trick) kernel of [`langevin_core::second_order`], its quadratic term fitted during burn-in.
//!
//! Per chain (Sun et al. 2023, Sec. 3.2):
//!
//! 1. **first-order burn-in**: the AB-1st kernel (`W = D = 0`) with `(a, b)` tuned by
//!    [`AbTuner`](langevin_core::tuning::AbTuner); every accepted move contributes a pair `(Δx, Δg)`;
//! 2. **fit**: `W` by [`fit_symmetric`](fit::fit_symmetric), `D` by the chosen [`DiagonalRule`] (the diagonal SDP
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

//!
//! # Layout
//!
//! * [`fit`]: the least-squares fit of `W` and the factor of `W + D`;
//! * [`diagonal`]: the diagonal rules (trace by the SDP-lite solver of [`crate::sdp`], shift,
//!   max, the DLP preconditioner);
//! * the schedule's tuning phases, written once for binary and ordinal chains
//!   ([`tune_chain`], [`tune_ordinal_chain`]);
//! * the runners ([`run_ab2_chains`], [`run_ab2_ordinal_chains`]) on the one chain runner of
//!   [`crate::run`];
//! * [`exact_w`]: the exact `W` of an Ising model on a graph.

pub mod diagonal;
pub mod exact_w;
pub mod fit;
mod run;
mod schedule;

pub use diagonal::{
    DiagonalError, MaxEigOptions, dlp_preconditioner, max_diagonal, min_max_eigenvalue,
    shift_diagonal, trace_diagonal,
};
pub use run::{run_ab2_chains, run_ab2_ordinal_chains};
/// [`tune_chain`] on an ordinal chain: the first-order burn-in with the ordinal AB tuner
/// (window `settings.first.window`), the fit, and the `(a, b)` tuning by L1 jump distance for
/// the ordinal second-order kernel. The DLP rules have no ordinal kernel: their fitted
/// preconditioner is ignored there.
pub use schedule::tune_chain as tune_ordinal_chain;
pub use schedule::{Ab2Chain, Ab2Kernel, tune_chain};

use crate::sdp::SdpOptions;
use fit::{FitError, trick_factor_f32};
use langevin_core::ParamError;
use langevin_core::binary::StepError;
use langevin_core::second_order::TrickParams;
use langevin_core::tuning::AbSettings;

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
    /// The report as JSON (for [`ChainResult::tuned`](crate::run::ChainResult::tuned)).
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
    /// Any [`FitError`] of [`trick_factor_f32`].
    pub fn new(w: &[f64], diag: &[f64], dim: usize) -> Result<Self, FitError> {
        let unit_factor = trick_factor_f32(w, diag, dim, 1.0)?;
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

/// Why the schedule stopped.
pub type Ab2Error<E> = StepError<E>;
