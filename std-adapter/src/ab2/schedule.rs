//! The tuning phases of the AB-2 schedule, written once for every domain: first-order burn-in
//! with [`AbTuner`] collecting the pairs `(Δx, Δ∇U)` of accepted moves, the fit of `W` and
//! `D`, and the jump-distance tuning of `(a, b)` for the fitted kernel. What differs between
//! binary and ordinal chains (the tuner's step, the second-order kernel, the DLP kernel) is the
//! [`Ab2Chain`] trait.

use super::diagonal::{
    DiagonalError, dlp_preconditioner, lambda_max, max_diagonal, shift_diagonal, trace_diagonal,
};
use super::fit::{FitError, FitOptions, fit_symmetric};
use super::{Ab2Error, Ab2Fitted, Ab2Report, Ab2Settings, DiagonalRule};
use crate::FlipMathImpl;
use langevin_core::Kernel;
use langevin_core::ParamError;
use langevin_core::binary::{BinaryChain, Dmala, FlipProposal, StepError, StepReport};
use langevin_core::ordinal::{OrdinalChain, OrdinalTarget};
use langevin_core::second_order::{
    AbSecondOrder, OrdinalAbSecondOrder, TrickParams, ordinal_scratch_len, scratch_len,
};
use langevin_core::stats::ChainStats;
use langevin_core::target::BinaryTarget;
use langevin_core::tuning::AbTuner;
use rand_core::Rng;
use std::fmt;

mod sealed {
    /// Only the chains of this crate's domains are AB-2 chains.
    pub trait Sealed {}
    impl Sealed for langevin_core::binary::BinaryChain<'_> {}
    impl Sealed for langevin_core::ordinal::OrdinalChain<'_> {}
}

/// A chain the AB-2 schedule runs on, with target `T`: [`BinaryChain`] with a
/// [`BinaryTarget`], [`OrdinalChain`] with an [`OrdinalTarget`]. It supplies the domain's
/// first-order tuner step, its second-order kernel and, for binary chains, the DLP kernel;
/// the schedule itself ([`tune_chain`](super::tune_chain)) is written once over it.
pub trait Ab2Chain<T: ?Sized>: sealed::Sealed {
    /// The state's value type.
    type Value: Copy + Default + Into<f64>;
    /// The target's error.
    type Error;
    /// Whether the DLP rules' first-order kernel exists in this domain.
    const DLP: bool;
    /// The current state.
    fn values(&self) -> &[Self::Value];
    /// `∇U` at the current state.
    fn gradient(&self) -> &[f32];
    /// `U` at the current state.
    fn current_log_density(&self) -> f64;
    /// Length of the second-order kernel's scratch.
    fn second_order_scratch_len(&self) -> usize;
    /// One step of the first-order AB tuner.
    ///
    /// # Errors
    ///
    /// The step's error.
    fn tuner_step<R: Rng + ?Sized>(
        &mut self,
        tuner: &mut AbTuner,
        target: &mut T,
        rng: &mut R,
    ) -> Result<StepReport, StepError<Self::Error>>;
    /// `steps` steps of one `kernel`; `visit` sees each step's report, the distance moved
    /// and the chain after it, and returns whether to go on (`false` stops the steps early).
    ///
    /// # Errors
    ///
    /// A step's error; [`StepError::Len`] for buffers of the wrong length or invalid DLP
    /// parameters.
    fn kernel_steps<R, F>(
        &mut self,
        target: &mut T,
        rng: &mut R,
        kernel: Ab2Kernel<'_, Self::Value>,
        steps: u64,
        visit: F,
    ) -> Result<(), StepError<Self::Error>>
    where
        R: Rng + ?Sized,
        F: FnMut(&StepReport, u64, &Self) -> bool;
}

/// The kernel of a phase of the schedule, for [`Ab2Chain::kernel_steps`].
#[derive(Debug)]
pub enum Ab2Kernel<'a, V> {
    /// The second-order kernel with `params`, working in `scratch` and `cached`.
    SecondOrder {
        /// `W`, `D`, the factor and `(a, b)`.
        params: TrickParams<'a>,
        /// The kernel's scratch ([`Ab2Chain::second_order_scratch_len`] entries).
        scratch: &'a mut [f64],
        /// The state the kernel's cached products belong to.
        cached: &'a mut [V],
    },
    /// The DLP rules' first-order kernel: the flip proposal at `(step, balance)`
    /// preconditioned by `p`. Only binary chains have it ([`Ab2Chain::DLP`]); elsewhere it
    /// takes no steps.
    Dlp {
        /// Step `a`.
        step: f64,
        /// Balance `b`.
        balance: f64,
        /// The preconditioner.
        p: &'a [f32],
    },
}

/// The DLP steps of a domain: [`binary_dlp_steps`] where the domain has the kernel, none
/// elsewhere.
macro_rules! dlp_steps {
    (true, $($arg:expr),*) => {
        binary_dlp_steps($($arg),*)
    };
    (false, $($arg:expr),*) => {{
        let _ = ($($arg),*);
        Ok(())
    }};
}

/// Implements [`Ab2Chain`] for one domain: its chain and target trait, value type, `DLP`,
/// the first-order kernel trait's `step`, the second-order scratch length, kernel and step
/// (returning the report and the distance moved), and optionally the DLP steps.
macro_rules! ab2_chain {
    (
        $chain:ty, $target:path, $value:ty, $dlp:tt, $tuner:path,
        scratch: |$this:ident| $scratch:expr,
        kernel: |$params:ident, $s:ident, $cached:ident| $kernel:expr,
        step: |$k:ident, $t:ident, $c:ident, $r:ident| $step:expr $(,)?
    ) => {
        impl<T: $target + ?Sized> Ab2Chain<T> for $chain {
            type Value = $value;
            type Error = T::Error;
            const DLP: bool = $dlp;
            fn values(&self) -> &[$value] {
                self.state()
            }
            fn gradient(&self) -> &[f32] {
                self.grad()
            }
            fn current_log_density(&self) -> f64 {
                self.log_density()
            }
            fn second_order_scratch_len(&self) -> usize {
                let $this = self;
                $scratch
            }
            fn tuner_step<R: Rng + ?Sized>(
                &mut self,
                tuner: &mut AbTuner,
                target: &mut T,
                rng: &mut R,
            ) -> Result<StepReport, StepError<T::Error>> {
                $tuner(tuner, target, self, rng)
            }
            fn kernel_steps<R, F>(
                &mut self,
                target: &mut T,
                rng: &mut R,
                kernel: Ab2Kernel<'_, $value>,
                steps: u64,
                mut visit: F,
            ) -> Result<(), StepError<T::Error>>
            where
                R: Rng + ?Sized,
                F: FnMut(&StepReport, u64, &Self) -> bool,
            {
                let (params, scratch, cached) = match kernel {
                    Ab2Kernel::SecondOrder {
                        params,
                        scratch,
                        cached,
                    } => (params, scratch, cached),
                    Ab2Kernel::Dlp { step, balance, p } => {
                        return dlp_steps!(
                            $dlp,
                            self,
                            target,
                            rng,
                            (step, balance, p),
                            steps,
                            visit
                        );
                    }
                };
                let ($params, $s, $cached) = (params, scratch, cached);
                #[allow(unused_variables, reason = "not every domain's kernel needs the chain")]
                let $this = &*self;
                let mut kernel = $kernel.map_err(StepError::Len)?;
                for _ in 0..steps {
                    let ($k, $t, $c, $r) = (&mut kernel, &mut *target, &mut *self, &mut *rng);
                    let (report, jump) = $step;
                    if !visit(&report, jump, self) {
                        break;
                    }
                }
                Ok(())
            }
        }
    };
}

ab2_chain!(
    BinaryChain<'_>, BinaryTarget, u8, true, Kernel::step,
    scratch: |chain| scratch_len(chain.dim()),
    kernel: |params, scratch, cached| AbSecondOrder::new(params, scratch, cached),
    step: |kernel, target, chain, rng| {
        let report = kernel.step(target, chain, rng)?;
        (report, u64::from(report.accepted_flips()))
    },
);

ab2_chain!(
    OrdinalChain<'_>, OrdinalTarget, u16, false, Kernel::step,
    scratch: |chain| ordinal_scratch_len(chain.dim(), chain.states()),
    kernel: |params, scratch, cached| {
        OrdinalAbSecondOrder::new(params, chain.states(), scratch, cached)
    },
    step: |kernel, target, chain, rng| kernel.step_with_jump(target, chain, rng)?,
);

/// The DLP kernel's steps on a binary chain: DMALA at `(a, b)` preconditioned by `p`.
fn binary_dlp_steps<'c, T, R, F>(
    chain: &mut BinaryChain<'c>,
    target: &mut T,
    rng: &mut R,
    (step, balance, p): (f64, f64, &[f32]),
    steps: u64,
    mut visit: F,
) -> Result<(), StepError<T::Error>>
where
    T: BinaryTarget + ?Sized,
    R: Rng + ?Sized,
    F: FnMut(&StepReport, u64, &BinaryChain<'c>) -> bool,
{
    let kernel = dlp_kernel(step, balance, p).map_err(param_error)?;
    for _ in 0..steps {
        let r = kernel.step(target, chain, rng)?;
        if !visit(&r, u64::from(r.accepted_flips()), chain) {
            break;
        }
    }
    Ok(())
}

/// Why a chain stayed first order (the text goes to [`Ab2Report::fallback`]).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Fallback {
    /// The rule asks for no second-order phase.
    FirstOrderRequested,
    /// The burn-in accepted no move, so there is nothing to fit.
    NoMoves,
    /// The least-squares fit of `W` failed.
    Fit(FitError),
    /// The diagonal rule failed.
    Diagonal(DiagonalError),
    /// `W + D` could not be factored.
    Factor(FitError),
}

impl fmt::Display for Fallback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::FirstOrderRequested => f.write_str("first order requested"),
            Self::NoMoves => f.write_str("no accepted moves during burn-in"),
            Self::Fit(e) => write!(f, "fit: {e}"),
            Self::Diagonal(e) => e.fmt(f),
            Self::Factor(e) => write!(f, "factor: {e}"),
        }
    }
}

impl From<DiagonalError> for Fallback {
    fn from(e: DiagonalError) -> Self {
        Self::Diagonal(e)
    }
}

/// Runs the tuning phases of the AB-2 schedule on `chain` (first-order burn-in, fit,
/// second-order tuning) and returns the fitted model with the final `(a, b)`. Step totals are
/// added to `stats`. Binary and ordinal chains ([`Ab2Chain`]) run the same phases with their
/// own kernels; jump distances are flips (binary) or L1 (ordinal).
///
/// # Errors
///
/// [`StepError`] from a kernel step; a failed fit is not an error (see
/// [`Ab2Report::fallback`]).
pub fn tune_chain<C, T, R>(
    target: &mut T,
    chain: &mut C,
    rng: &mut R,
    settings: &Ab2Settings,
    stats: &mut ChainStats,
) -> Result<(Ab2Fitted, Ab2Report), Ab2Error<C::Error>>
where
    C: Ab2Chain<T>,
    T: ?Sized,
    R: Rng + ?Sized,
{
    tune_chain_until(target, chain, rng, settings, stats, &|| false)
}

/// [`tune_chain`], asking `stop` before every step: once it answers `true` the tuning ends
/// early and what it returns is not a tuned model (the caller, who asked to stop, drops it).
///
/// # Errors
///
/// As [`tune_chain`].
pub fn tune_chain_until<C, T, R>(
    target: &mut T,
    chain: &mut C,
    rng: &mut R,
    settings: &Ab2Settings,
    stats: &mut ChainStats,
    stop: &dyn Fn() -> bool,
) -> Result<(Ab2Fitted, Ab2Report), Ab2Error<C::Error>>
where
    C: Ab2Chain<T>,
    T: ?Sized,
    R: Rng + ?Sized,
{
    let d = chain.values().len();
    let mut report = Ab2Report::default();
    let mut tuner = AbTuner::new(settings.first).map_err(param_error)?;
    let mut pairs = Pairs::new(d, settings.max_pairs);
    let (mut x0, mut g0) = (vec![C::Value::default(); d], vec![0.0f32; d]);
    while !tuner.is_frozen() {
        if stop() {
            return Ok((Ab2Fitted::zero(d), report));
        }
        x0.copy_from_slice(chain.values());
        g0.copy_from_slice(chain.gradient());
        let r = chain.tuner_step(&mut tuner, target, rng)?;
        stats.record(&r);
        report.tuning_steps += 1;
        if r.accepted && r.proposed_flips > 0 {
            pairs.push(&x0, &g0, chain.values(), chain.gradient());
        }
    }
    let ab = tuner.report();
    report.first_order = (ab.step, ab.balance);
    (report.step, report.balance) = (ab.step, ab.balance);
    report.pairs = pairs.next.min(pairs.cap);
    let mut fitted = match fit(&pairs, d, settings, &mut report) {
        Ok(f) => f,
        Err(why) => {
            report.fallback = Some(why.to_string());
            return Ok((Ab2Fitted::zero(d), report));
        }
    };
    let dlp = C::DLP && settings.diagonal.is_dlp();
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
    let precond = if C::DLP {
        fitted.dlp_preconditioner.clone()
    } else {
        None
    };
    let mut scratch = vec![0.0f64; chain.second_order_scratch_len()];
    let mut cached = vec![C::Value::default(); d];
    let probe = u64::from(settings.probe_steps);
    let mut spent = 0u64;
    while spent + probe <= settings.second_budget {
        let (a, b) = jt.probe_params(jt.probe);
        let mut jump = 0u64;
        let visit = |r: &StepReport, j: u64, _: &C| {
            stats.record(r);
            jump += j;
            !stop()
        };
        let kernel = match &precond {
            Some(p) => Ab2Kernel::Dlp {
                step: a,
                balance: b,
                p,
            },
            None => Ab2Kernel::SecondOrder {
                params: fitted.params(a, b).map_err(param_error)?,
                scratch: &mut scratch,
                cached: &mut cached,
            },
        };
        chain.kernel_steps(target, rng, kernel, probe, visit)?;
        spent += probe;
        jt.finish_probe(jump);
    }
    report.tuning_steps += spent;
    (report.step, report.balance) = (jt.step, jt.balance);
    Ok((fitted, report))
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
    /// Room for the `cap` most recent pairs of dimension `dim`.
    fn new(dim: usize, cap: usize) -> Self {
        Self {
            dim,
            cap,
            next: 0,
            dx: Vec::new(),
            dg: Vec::new(),
        }
    }

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

/// The frozen kernel of the DLP rules: DMALA at `(a, b)` with preconditioner `p`.
fn dlp_kernel(a: f64, b: f64, p: &[f32]) -> Result<Dmala<'_, FlipMathImpl>, ParamError> {
    Ok(Dmala::new(
        FlipProposal::<FlipMathImpl>::with_math(a, b)?.preconditioned(p)?,
    ))
}

/// Fits `W`, chooses `D` and factors; fills the fit fields of `report`.
fn fit(
    pairs: &Pairs,
    d: usize,
    settings: &Ab2Settings,
    report: &mut Ab2Report,
) -> Result<Ab2Fitted, Fallback> {
    report.diagonal = settings.diagonal.name();
    if settings.diagonal == DiagonalRule::FirstOrder {
        return Err(Fallback::FirstOrderRequested);
    }
    if settings.diagonal == DiagonalRule::Dmala {
        let mut fitted = Ab2Fitted::zero(d);
        fitted.dlp_preconditioner = Some(vec![1.0; d]);
        report.precond_range = Some((1.0, 1.0));
        return Ok(fitted);
    }
    if pairs.next == 0 {
        return Err(Fallback::NoMoves);
    }
    let q =
        fit_symmetric(&pairs.dx, &pairs.dg, d, &FitOptions::default()).map_err(Fallback::Fit)?;
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
            return Err(Fallback::FirstOrderRequested);
        }
    };
    report.trace_d = diag.iter().sum();
    report.lambda_max = Some(lambda_max(&q.w, &diag, d));
    Ab2Fitted::new(&q.w, &diag, d).map_err(Fallback::Factor)
}

/// Turns a parameter error of the schedule into the step error it reports.
pub(crate) fn param_error<E>(e: ParamError) -> StepError<E> {
    match e {
        ParamError::Len(l) => StepError::Len(l),
        _ => StepError::Len(langevin_core::LenError {
            buffer: "AB-2 parameters",
            expected: 0,
            found: 0,
        }),
    }
}
