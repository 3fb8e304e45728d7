//! The Gaussian-integral-trick kernel over `{0,1}^d`.

use crate::binary::{BinaryChain, BinaryKernel, Rejection, StepError, StepReport};
use crate::error::{LenError, ParamError};
use crate::math::{sigmoid, softplus};
use crate::random::{fill_normal, open_unit_f64};
use crate::target::{BinaryTarget, FlipMove};
use rand_core::Rng;

use super::sparse::{SparseW, WMatrix};

/// `f64` scratch entries per coordinate: `W x`, `A x`, `W y`, `A y`, `u` and `Aᵀu`.
pub const SCRATCH_PER_DIM: usize = 6;

/// `2^32` as an `f64`.
const TWO_POW_32: f64 = 4_294_967_296.0;

/// Length of the `f64` scratch buffer [`AbSecondOrder::new`] needs for dimension `d`:
/// `6 d` (`W x`, `A x`, `W y`, `A y`, `u`, `Aᵀu`). Saturates instead of overflowing.
///
/// # Examples
///
/// ```
/// assert_eq!(langevin_core::second_order::scratch_len(10), 60);
/// ```
pub const fn scratch_len(d: usize) -> usize {
    d.saturating_mul(SCRATCH_PER_DIM)
}

/// The parameters of the second-order kernel: `W` (symmetric; `d × d` row-major from
/// [`TrickParams::new`], or a [`SparseW`] from [`TrickParams::with_sparse_w`]), the diagonal
/// of `D` (`d`), the factor `A` (`d × d`, row-major; any shape, e.g. the upper-triangular
/// Cholesky factor with `AᵀA = b(W + D)`), the step `a` and the balance `b`.
///
/// Construction validates every entry once (`O(d²)`); the kernel does not check them again.
/// The dense and sparse forms of one `W` give bit-identical chains.
#[derive(Clone, Copy, Debug)]
pub struct TrickParams<'m> {
    dim: usize,
    w: WMatrix<'m>,
    diag: &'m [f32],
    factor: &'m [f32],
    step: f64,
    balance: f64,
    /// Whether `A` is upper triangular (products then skip the zero half).
    pub(super) upper: bool,
}

impl<'m> TrickParams<'m> {
    /// Validated parameters; the dimension is `diag.len()`.
    ///
    /// # Errors
    ///
    /// [`ParamError::EmptyDimension`]; [`ParamError::Len`] unless `w` and `factor` have `d²`
    /// entries; [`ParamError::NonFinite`] for a non-finite entry of `W`, `D` or `A`;
    /// [`ParamError::OutOfRange`] (name `"W symmetry"`, value the difference) if
    /// `W_ij ≠ W_ji`; [`ParamError::Step`] / [`ParamError::Balance`] as for
    /// [`crate::binary::FlipProposal::new`].
    ///
    /// # Examples
    ///
    /// ```
    /// use langevin_core::second_order::TrickParams;
    /// let zero = [0.0f32; 4];
    /// assert!(TrickParams::new(&zero, &[0.0, 0.0], &zero, 0.5, 0.5).is_ok());
    /// let asym = [0.0f32, 1.0, 0.0, 0.0];
    /// assert!(TrickParams::new(&asym, &[0.0, 0.0], &zero, 0.5, 0.5).is_err());
    /// ```
    pub fn new(
        w: &'m [f32],
        diag: &'m [f32],
        factor: &'m [f32],
        step: f64,
        balance: f64,
    ) -> Result<Self, ParamError> {
        let d = diag.len();
        if d == 0 {
            return Err(ParamError::EmptyDimension);
        }
        let d2 = d.checked_mul(d).ok_or(ParamError::OutOfRange {
            name: "dimension",
            value: d as f64,
        })?;
        LenError::check("W", d2, w.len())?;
        check_step_balance(step, balance)?;
        if !diag.iter().all(|v| v.is_finite()) {
            return Err(ParamError::NonFinite("D"));
        }
        if !w.iter().all(|v| v.is_finite()) {
            return Err(ParamError::NonFinite("W"));
        }
        for (i, row) in w.chunks_exact(d.max(1)).enumerate() {
            for (j, &wij) in row.iter().enumerate().skip(i + 1) {
                let wji = w.get(j * d + i).copied().unwrap_or(f32::NAN);
                if wij != wji {
                    return Err(ParamError::OutOfRange {
                        name: "W symmetry",
                        value: f64::from(wij) - f64::from(wji),
                    });
                }
            }
        }
        check_factor(factor, d2)?;
        Ok(Self {
            dim: d,
            w: WMatrix::Dense(w),
            diag,
            factor,
            step,
            balance,
            upper: is_upper(factor, d),
        })
    }

    /// Validated parameters with a sparse `W` (validated by [`SparseW::new`]); the dimension is
    /// `diag.len()`. Products with `W` then cost `O(nnz)`, and its update after `k` changed
    /// coordinates `O(Σ deg)` over them; `A` stays dense.
    ///
    /// # Errors
    ///
    /// [`ParamError::EmptyDimension`]; [`ParamError::Len`] unless `W` has dimension `d`
    /// (buffer `"W"`) and `factor` has `d²` entries; [`ParamError::NonFinite`] for a
    /// non-finite entry of `D` or `A`; [`ParamError::Step`] / [`ParamError::Balance`] as for
    /// [`TrickParams::new`].
    ///
    /// # Examples
    ///
    /// ```
    /// use langevin_core::second_order::{SparseW, TrickParams};
    /// // W = [[0, 1], [1, 0]].
    /// let w = SparseW::new(&[0, 1, 2], &[1, 0], &[1.0, 1.0]).unwrap();
    /// let a = [1.0f32, 1.0, 0.0, 0.0];
    /// let p = TrickParams::with_sparse_w(w, &[1.0, 1.0], &a, 0.5, 0.5).unwrap();
    /// assert_eq!(p.w().entry(2, 0, 1), 1.0);
    /// assert!(TrickParams::with_sparse_w(w, &[1.0], &a[..1], 0.5, 0.5).is_err());
    /// ```
    pub fn with_sparse_w(
        w: SparseW<'m>,
        diag: &'m [f32],
        factor: &'m [f32],
        step: f64,
        balance: f64,
    ) -> Result<Self, ParamError> {
        let d = diag.len();
        if d == 0 {
            return Err(ParamError::EmptyDimension);
        }
        LenError::check("W", d, w.dim())?;
        let d2 = d.checked_mul(d).ok_or(ParamError::OutOfRange {
            name: "dimension",
            value: d as f64,
        })?;
        check_step_balance(step, balance)?;
        if !diag.iter().all(|v| v.is_finite()) {
            return Err(ParamError::NonFinite("D"));
        }
        check_factor(factor, d2)?;
        Ok(Self {
            dim: d,
            w: WMatrix::Sparse(w),
            diag,
            factor,
            step,
            balance,
            upper: is_upper(factor, d),
        })
    }

    /// The same parameters with step `a` (cheap: `A` does not depend on `a`).
    ///
    /// # Errors
    ///
    /// [`ParamError::Step`].
    pub fn with_step(self, step: f64) -> Result<Self, ParamError> {
        check_step_balance(step, self.balance)?;
        Ok(Self { step, ..self })
    }

    /// The same `W` and `D` with balance `b` and a new factor (which should satisfy
    /// `AᵀA = b(W + D)`); validates the factor in `O(d²)`.
    ///
    /// # Errors
    ///
    /// [`ParamError::Balance`], [`ParamError::Len`], [`ParamError::NonFinite`].
    pub fn with_balance<'n>(
        self,
        balance: f64,
        factor: &'n [f32],
    ) -> Result<TrickParams<'n>, ParamError>
    where
        'm: 'n,
    {
        check_step_balance(self.step, balance)?;
        check_factor(factor, self.dim.saturating_mul(self.dim))?;
        Ok(TrickParams {
            dim: self.dim,
            w: self.w,
            diag: self.diag,
            factor,
            step: self.step,
            balance,
            upper: is_upper(factor, self.dim),
        })
    }

    /// The dimension `d`.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The step `a`.
    pub fn step(&self) -> f64 {
        self.step
    }

    /// The balance `b`.
    pub fn balance(&self) -> f64 {
        self.balance
    }

    /// `W`, dense (row-major) or sparse.
    pub fn w(&self) -> WMatrix<'m> {
        self.w
    }

    /// The diagonal of `D`.
    pub fn diag(&self) -> &'m [f32] {
        self.diag
    }

    /// `A`, row-major.
    pub fn factor(&self) -> &'m [f32] {
        self.factor
    }

    /// The logit of `y_i = 1` given the current `x_i`, `g_i`, `(W x)_i`, `(Aᵀu)_i` and `D_ii`.
    /// Drawing and `log Q` both go through here, so they agree bit for bit.
    #[inline(always)]
    fn logit(&self, x: u8, g: f32, wx: f64, t: f64, d: f32) -> f64 {
        let inv_a = 1.0 / self.step;
        let b = self.balance;
        let c = b * f64::from(g) - b * wx + f64::from(x) * inv_a + t;
        c - (0.5 * b * f64::from(d) + 0.5 * inv_a)
    }

    /// `log Q(to | from, u)` with `t = Aᵀu` and `wf = W from`.
    fn log_q(&self, from: &[u8], grad: &[f32], wf: &[f64], t: &[f64], to: &[u8]) -> f64 {
        from.iter()
            .zip(grad)
            .zip(wf.iter().zip(t))
            .zip(self.diag.iter().zip(to))
            .map(|(((&x, &g), (&w, &t)), (&d, &y))| {
                let l = self.logit(x, g, w, t, d);
                if y == 1 { -softplus(-l) } else { -softplus(l) }
            })
            .sum()
    }
}

fn check_step_balance(step: f64, balance: f64) -> Result<(), ParamError> {
    if !(step.is_finite() && step > 0.0) {
        return Err(ParamError::Step(step));
    }
    if !(balance > 0.0 && balance <= 1.0) {
        return Err(ParamError::Balance(balance));
    }
    Ok(())
}

/// Whether every entry below the diagonal is zero.
fn is_upper(factor: &[f32], d: usize) -> bool {
    factor
        .chunks_exact(d.max(1))
        .enumerate()
        .all(|(i, row)| row.iter().take(i).all(|&v| v == 0.0))
}

fn check_factor(factor: &[f32], d2: usize) -> Result<(), ParamError> {
    LenError::check("A", d2, factor.len())?;
    if !factor.iter().all(|v| v.is_finite()) {
        return Err(ParamError::NonFinite("A"));
    }
    Ok(())
}

/// The pieces of the acceptance ratio of a move `x → y` for a given auxiliary `u`
/// (see [`AbSecondOrder::transition`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transition {
    /// `log Q(y | x, u)`, normalised.
    pub log_q_forward: f64,
    /// `log Q(x | y, u)`, normalised.
    pub log_q_reverse: f64,
    /// `log N(u; A y, I) − log N(u; A x, I)`.
    pub log_gauss_ratio: f64,
}

/// The second-order any-scale balanced kernel (module docs: [`crate::second_order`]) with its
/// caller-owned scratch.
///
/// Every step is an exact Metropolis–Hastings step for `π`, whatever `W`, `D`, `A`, `a`, `b`.
/// A proposal at which the target is not finite, or returns a recoverable error, is rejected
/// and reported, as in [`crate::binary::Dmala`]. A step consumes exactly `3⌈d/2⌉ + 1` words of
/// the random stream (`d` normals, one 32-bit draw per coordinate, one uniform).
///
/// # Examples
///
/// With `W = D = A = 0` it is the first-order balanced (AB-1st) kernel:
///
/// ```
/// use langevin_core::binary::{BinaryChain, ChainStorage};
/// use langevin_core::models::{ConstDims, IsingLattice};
/// use langevin_core::second_order::{AbSecondOrder, TrickParams, scratch_len};
/// use rand_core::SeedableRng;
///
/// let mut model = IsingLattice::<ConstDims<3, 3>>::new(0.3, 0.0, true).unwrap();
/// let mut storage = ChainStorage::<9>::new([0; 9]);
/// let mut chain = BinaryChain::new(storage.buffers(), &mut model).unwrap();
/// let (w, a, d) = ([0.0f32; 81], [0.0f32; 81], [0.0f32; 9]);
/// let params = TrickParams::new(&w, &d, &a, 0.5, 0.5).unwrap();
/// let (mut scratch, mut state) = ([0.0f64; scratch_len(9)], [0u8; 9]);
/// let mut kernel = AbSecondOrder::new(params, &mut scratch, &mut state).unwrap();
/// let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(3);
/// for _ in 0..50 {
///     kernel.step(&mut model, &mut chain, &mut rng).unwrap();
/// }
/// ```
#[derive(Debug)]
pub struct AbSecondOrder<'m, 's> {
    params: TrickParams<'m>,
    scratch: &'s mut [f64],
    cached_state: &'s mut [u8],
    cache_valid: bool,
}

impl<'m, 's> AbSecondOrder<'m, 's> {
    /// The kernel with these parameters, working in `scratch` (length [`scratch_len`]`(d)`) and
    /// `state` (length `d`, the state the cached products belong to).
    ///
    /// # Errors
    ///
    /// [`LenError`] for buffers of the wrong length.
    pub fn new(
        params: TrickParams<'m>,
        scratch: &'s mut [f64],
        state: &'s mut [u8],
    ) -> Result<Self, LenError> {
        LenError::check("scratch", scratch_len(params.dim), scratch.len())?;
        LenError::check("state", params.dim, state.len())?;
        Ok(Self {
            params,
            scratch,
            cached_state: state,
            cache_valid: false,
        })
    }

    /// The parameters.
    pub fn params(&self) -> &TrickParams<'m> {
        &self.params
    }

    /// Replaces the parameters (same dimension), e.g. after tuning `a` or `b`.
    ///
    /// # Errors
    ///
    /// [`LenError`] if the dimension differs.
    pub fn set_params(&mut self, params: TrickParams<'m>) -> Result<(), LenError> {
        LenError::check("params", self.params.dim, params.dim)?;
        self.params = params;
        self.cache_valid = false;
        Ok(())
    }

    /// The normalised conditionals and the Gaussian ratio of the move `x → y` given `u`, computed
    /// by the same code the step uses (for tests and diagnostics). Invalidates the cache.
    ///
    /// # Errors
    ///
    /// [`LenError`] unless every slice has length `d`.
    pub fn transition(
        &mut self,
        x: &[u8],
        grad_x: &[f32],
        y: &[u8],
        grad_y: &[f32],
        u: &[f64],
    ) -> Result<Transition, LenError> {
        let p = self.params;
        let d = p.dim;
        for (name, len) in [
            ("x", x.len()),
            ("grad_x", grad_x.len()),
            ("y", y.len()),
            ("grad_y", grad_y.len()),
            ("u", u.len()),
        ] {
            LenError::check(name, d, len)?;
        }
        self.cache_valid = false;
        let [wx, ax, wy, ay, _, t] = split(self.scratch, d)?;
        p.w.mul_state(d, x, wx);
        mat_state(p.factor, d, p.upper, x, ax);
        p.w.mul_state(d, y, wy);
        mat_state(p.factor, d, p.upper, y, ay);
        mat_t_vec(p.factor, d, p.upper, u, t);
        Ok(Transition {
            log_q_forward: p.log_q(x, grad_x, wx, t, y),
            log_q_reverse: p.log_q(y, grad_y, wy, t, x),
            log_gauss_ratio: gauss_ratio(u, ax, ay),
        })
    }

    /// Advances `chain` by one step.
    ///
    /// # Errors
    ///
    /// [`StepError::Len`] if the chain or target dimension differs from the parameters';
    /// [`StepError::Target`] for an unrecoverable target error. The chain is unchanged then.
    pub fn step<T, R>(
        &mut self,
        target: &mut T,
        chain: &mut BinaryChain<'_>,
        rng: &mut R,
    ) -> Result<StepReport, StepError<T::Error>>
    where
        T: BinaryTarget + ?Sized,
        R: Rng + ?Sized,
    {
        let p = self.params;
        let d = p.dim;
        LenError::check("chain", d, chain.dim())?;
        LenError::check("target", d, target.dim())?;
        let [wx, ax, wy, ay, u, t] = split(self.scratch, d)?;
        if !self.cache_valid || *self.cached_state != *chain.x {
            p.w.mul_state(d, chain.x, wx);
            mat_state(p.factor, d, p.upper, chain.x, ax);
            crate::slices::copy(self.cached_state, chain.x);
            self.cache_valid = true;
        }
        // 1. u = A x + ξ and t = Aᵀu.
        fill_normal(rng, u);
        for (ui, &a) in u.iter_mut().zip(ax.iter()) {
            *ui += a;
        }
        mat_t_vec(p.factor, d, p.upper, u, t);
        // 2. y coordinatewise, two 32-bit draws per word.
        let mut flips = 0usize;
        let mut log_q_forward = 0.0f64;
        let mut word = 0u64;
        for (i, ((((&xi, &gi), (&wxi, &ti)), &di), yi)) in chain
            .x
            .iter()
            .zip(chain.grad.iter())
            .zip(wx.iter().zip(t.iter()))
            .zip(p.diag)
            .zip(chain.x_proposal.iter_mut())
            .enumerate()
        {
            if i % 2 == 0 {
                word = rng.next_u64();
            }
            let bits = if i % 2 == 0 {
                word as u32
            } else {
                (word >> 32) as u32
            };
            let l = p.logit(xi, gi, wxi, ti, di);
            let threshold = (sigmoid(l) * TWO_POW_32) as u32;
            let one = bits < threshold;
            *yi = u8::from(one);
            log_q_forward += if one { -softplus(-l) } else { -softplus(l) };
            if *yi != xi {
                if let Some(slot) = chain.flipped.get_mut(flips) {
                    *slot = i as u32;
                }
                flips += 1;
            }
        }
        let log_u = libm::log(open_unit_f64(rng));
        let mut report = StepReport {
            accepted: true,
            proposed_flips: flips as u32,
            log_accept_ratio: 0.0,
            rejection: None,
            evaluations: 0,
        };
        if flips == 0 {
            // y = x: every term of the ratio cancels.
            return Ok(report);
        }
        let flipped = chain.flipped.get(..flips).unwrap_or(&[]);
        let mv = FlipMove {
            from: chain.x,
            to: chain.x_proposal,
            flipped,
            from_log_density: chain.log_density,
            from_grad: chain.grad,
        };
        report.evaluations = 1;
        let log_density = match target.log_density_and_grad_after(&mv, chain.grad_proposal) {
            Ok(v) => v,
            Err(e) if crate::target::TargetError::is_recoverable(&e) => {
                return Ok(rejected(report, Rejection::TargetError));
            }
            Err(e) => return Err(StepError::Target(e)),
        };
        if !log_density.is_finite() || !chain.grad_proposal.iter().all(|g| g.is_finite()) {
            return Ok(rejected(report, Rejection::NonFinite));
        }
        // 3. W y and A y from the cache (O(k d)) or afresh when most coordinates flipped.
        if 2 * flips < d {
            let pair = (&*chain.x, &*chain.x_proposal);
            p.w.update(d, wx, pair, flipped, wy);
            update_columns(p.factor, d, ax, pair, flipped, ay);
        } else {
            p.w.mul_state(d, chain.x_proposal, wy);
            mat_state(p.factor, d, p.upper, chain.x_proposal, ay);
        }
        let log_q_reverse = p.log_q(chain.x_proposal, chain.grad_proposal, wy, t, chain.x);
        report.log_accept_ratio = (log_density - chain.log_density)
            + gauss_ratio(u, ax, ay)
            + (log_q_reverse - log_q_forward);
        // NaN compares false: rejected.
        report.accepted = log_u < report.log_accept_ratio;
        if report.accepted {
            chain.adopt_proposal(log_density);
            target.commit();
            crate::slices::copy(wx, wy);
            crate::slices::copy(ax, ay);
            crate::slices::copy(self.cached_state, chain.x);
        }
        Ok(report)
    }
}

impl BinaryKernel for AbSecondOrder<'_, '_> {
    fn step<T, R>(
        &mut self,
        target: &mut T,
        chain: &mut BinaryChain<'_>,
        rng: &mut R,
    ) -> Result<StepReport, StepError<T::Error>>
    where
        T: BinaryTarget + ?Sized,
        R: Rng + ?Sized,
    {
        AbSecondOrder::step(self, target, chain, rng)
    }
}

pub(super) fn rejected(mut report: StepReport, why: Rejection) -> StepReport {
    report.accepted = false;
    report.log_accept_ratio = f64::NEG_INFINITY;
    report.rejection = Some(why);
    report
}

/// The six scratch vectors of length `d`.
pub(super) fn split(scratch: &mut [f64], d: usize) -> Result<[&mut [f64]; 6], LenError> {
    let err = LenError {
        buffer: "scratch",
        expected: scratch_len(d),
        found: scratch.len(),
    };
    let mut parts = scratch.chunks_exact_mut(d.max(1));
    let mut next = || parts.next().ok_or(err);
    Ok([next()?, next()?, next()?, next()?, next()?, next()?])
}

/// `log N(u; A y, I) − log N(u; A x, I) = ½|u − A x|² − ½|u − A y|²`.
pub(super) fn gauss_ratio(u: &[f64], ax: &[f64], ay: &[f64]) -> f64 {
    u.iter()
        .zip(ax.iter().zip(ay))
        .map(|(&u, (&x, &y))| 0.5 * ((u - x) * (u - x) - (u - y) * (u - y)))
        .sum()
}

/// `out = M x` for an integer state `x` (rows of `M` dotted with `x`), in `f64`.
pub(super) fn mat_state<V: Copy + Into<f64>>(
    m: &[f32],
    d: usize,
    upper: bool,
    x: &[V],
    out: &mut [f64],
) {
    for (i, (row, o)) in m.chunks_exact(d.max(1)).zip(out.iter_mut()).enumerate() {
        let skip = if upper { i } else { 0 };
        let (row, x) = (row.get(skip..).unwrap_or(&[]), x.get(skip..).unwrap_or(&[]));
        let mut acc = [0.0f64; 4];
        let mut rc = row.chunks_exact(4);
        let mut xc = x.chunks_exact(4);
        for (r, xs) in (&mut rc).zip(&mut xc) {
            for ((a, &m), &x) in acc.iter_mut().zip(r).zip(xs) {
                *a += f64::from(m) * x.into();
            }
        }
        let tail: f64 = rc
            .remainder()
            .iter()
            .zip(xc.remainder())
            .map(|(&m, &x)| f64::from(m) * x.into())
            .sum();
        let [a, b, c, e] = acc;
        *o = (a + b) + (c + e) + tail;
    }
}

/// `out = Mᵀ v` (rows of `M` scaled by `v_i` and summed), in `f64`.
pub(super) fn mat_t_vec(m: &[f32], d: usize, upper: bool, v: &[f64], out: &mut [f64]) {
    out.fill(0.0);
    for (i, (row, &vi)) in m.chunks_exact(d.max(1)).zip(v).enumerate() {
        let skip = if upper { i } else { 0 };
        let (row, out) = (
            row.get(skip..).unwrap_or(&[]),
            out.get_mut(skip..).unwrap_or(&mut []),
        );
        for (o, &a) in out.iter_mut().zip(row) {
            *o += vi * f64::from(a);
        }
    }
}

/// `y_j − x_j` as an `f64` (0 for an index beyond either state).
#[inline(always)]
fn delta<V: Copy + Into<f64>>(x: &[V], y: &[V], j: usize) -> f64 {
    match (x.get(j), y.get(j)) {
        (Some(&a), Some(&b)) => b.into() - a.into(),
        _ => 0.0,
    }
}

/// `wy = wx + Σ_{j changed} (y_j − x_j) W[j, :]` (`W` symmetric, so rows stand in for
/// columns). For binary states the factor is `±1`, exact.
pub(super) fn update_symmetric<V: Copy + Into<f64>>(
    w: &[f32],
    d: usize,
    wx: &[f64],
    (x, y): (&[V], &[V]),
    changed: &[u32],
    wy: &mut [f64],
) {
    crate::slices::copy(wy, wx);
    for &j in changed {
        let j = j as usize;
        let step = delta(x, y, j);
        let row = w.get(j * d..(j + 1) * d).unwrap_or(&[]);
        for (o, &a) in wy.iter_mut().zip(row) {
            *o += step * f64::from(a);
        }
    }
}

/// `ay_i = ax_i + Σ_{j changed} (y_j − x_j) A[i, j]`.
pub(super) fn update_columns<V: Copy + Into<f64>>(
    a: &[f32],
    d: usize,
    ax: &[f64],
    (x, y): (&[V], &[V]),
    changed: &[u32],
    ay: &mut [f64],
) {
    for (row, (o, &base)) in a.chunks_exact(d.max(1)).zip(ay.iter_mut().zip(ax)) {
        let mut acc = base;
        for &j in changed {
            let j = j as usize;
            let v = f64::from(row.get(j).copied().unwrap_or(0.0));
            acc += delta(x, y, j) * v;
        }
        *o = acc;
    }
}
