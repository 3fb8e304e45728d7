//! The Gaussian-integral-trick kernel, for binary and ordinal states.

use super::linalg::{gauss_ratio, mat_state, mat_t_vec, scratch_len, split, update_columns};
use super::sparse::{SparseW, WMatrix};
use crate::chain::Chain;
use crate::domain::{Binary, Domain};
use crate::error::{LenError, ParamError, StepError};
use crate::kernel::{Kernel, StepReport, evaluate_proposal, settle};
use crate::math::{sigmoid, softplus};
use crate::random::{fill_normal, open_unit_f64};
use crate::target::Eval;
use rand_core::Rng;

/// `2^32` as an `f64`.
const TWO_POW_32: f64 = 4_294_967_296.0;

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
        Self::validated(WMatrix::Dense(w), diag, factor, step, balance)
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
        Self::validated(WMatrix::Sparse(w), diag, factor, step, balance)
    }

    /// The checks of [`new`](Self::new) and [`with_sparse_w`](Self::with_sparse_w), in this
    /// order: the dimension, `W`'s size, the step, balance and `D`, a dense `W`'s entries
    /// (finite, symmetric), the factor.
    fn validated(
        w: WMatrix<'m>,
        diag: &'m [f32],
        factor: &'m [f32],
        step: f64,
        balance: f64,
    ) -> Result<Self, ParamError> {
        let (dim, d2) = ParamError::check_square(diag.len())?;
        match w {
            WMatrix::Dense(w) => LenError::check("W", d2, w.len())?,
            WMatrix::Sparse(w) => LenError::check("W", dim, w.dim())?,
        }
        check_scalars(step, balance, diag)?;
        if let WMatrix::Dense(w) = w {
            check_symmetric(w, dim)?;
        }
        check_factor(factor, d2)?;
        Ok(Self {
            dim,
            w,
            diag,
            factor,
            step,
            balance,
            upper: is_upper(factor, dim),
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

    /// `c_i = b g_i − b (W x)_i + x_i / a + (Aᵀu)_i` and `κ_i = b D_ii / 2 + 1/(2a)` given the
    /// current `x_i`, `g_i`, `(W x)_i`, `(Aᵀu)_i` and `D_ii`: the conditional of `y_i` is
    /// `log Q(v) = v c_i − κ_i v² + const`. Drawing and `log Q` both go through here, so they
    /// agree bit for bit.
    #[inline(always)]
    pub(super) fn coefficients<V: Into<f64>>(
        &self,
        x: V,
        g: f32,
        wx: f64,
        t: f64,
        d: f32,
    ) -> (f64, f64) {
        let inv_a = 1.0 / self.step;
        let b = self.balance;
        let c = b * f64::from(g) - b * wx + x.into() * inv_a + t;
        (c, 0.5 * b * f64::from(d) + 0.5 * inv_a)
    }
}

/// Checks the step, the balance and the diagonal `D`.
fn check_scalars(step: f64, balance: f64, diag: &[f32]) -> Result<(), ParamError> {
    check_step_balance(step, balance)?;
    ParamError::check_finite("D", diag)
}

fn check_step_balance(step: f64, balance: f64) -> Result<(), ParamError> {
    ParamError::check_step(step)?;
    ParamError::check_balance(balance)
}

/// Whether every entry below the diagonal is zero.
fn is_upper(factor: &[f32], d: usize) -> bool {
    factor
        .chunks_exact(d.max(1))
        .enumerate()
        .all(|(i, row)| row.iter().take(i).all(|&v| v == 0.0))
}

/// Checks that the dense `d × d` matrix `W` is finite and symmetric.
fn check_symmetric(w: &[f32], d: usize) -> Result<(), ParamError> {
    ParamError::check_finite("W", w)?;
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
    Ok(())
}

fn check_factor(factor: &[f32], d2: usize) -> Result<(), ParamError> {
    LenError::check("A", d2, factor.len())?;
    ParamError::check_finite("A", factor)
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

/// What the second-order kernel needs of a domain: step 2, the coordinatewise draw of `y_i`
/// from its conditional, and that conditional's `log Q`. Implemented for [`Binary`] and
/// [`Ordinal`](crate::domain::Ordinal).
pub trait TrickDomain: Domain {
    /// Draws `y_i` with the 32 random `bits` given the conditional's coefficients `(c, κ)`;
    /// returns it with its `log Q`. `weights` is a row of `S` values (empty for binary states).
    fn draw(
        c: f64,
        kappa: f64,
        x: Self::Value,
        bits: u32,
        weights: &mut [f64],
    ) -> (Self::Value, f64);

    /// `log Q(y_i = v)` given the conditional's coefficients `(c, κ)`.
    fn log_prob(c: f64, kappa: f64, v: Self::Value, weights: &mut [f64]) -> f64;
}

impl TrickDomain for Binary {
    #[inline(always)]
    fn draw(c: f64, kappa: f64, _x: u8, bits: u32, _weights: &mut [f64]) -> (u8, f64) {
        // For binary states y² = y: `y = 1` with probability `sigmoid(c − κ)`.
        let l = c - kappa;
        let threshold = (sigmoid(l) * TWO_POW_32) as u32;
        let one = bits < threshold;
        (
            u8::from(one),
            if one { -softplus(-l) } else { -softplus(l) },
        )
    }

    #[inline(always)]
    fn log_prob(c: f64, kappa: f64, v: u8, _weights: &mut [f64]) -> f64 {
        let l = c - kappa;
        if v == 1 { -softplus(-l) } else { -softplus(l) }
    }
}

/// The six `d`-vectors of the scratch and the `S` weights after them (none for binary
/// states).
fn split_scratch(scratch: &mut [f64], d: usize) -> Result<([&mut [f64]; 6], &mut [f64]), LenError> {
    let d6 = scratch_len(d);
    let found = scratch.len();
    let (vectors, weights) = scratch.split_at_mut_checked(d6).ok_or(LenError {
        buffer: "scratch",
        expected: d6,
        found,
    })?;
    Ok((split(vectors, d)?, weights))
}

/// `log Q(to | from, u)` with `t = Aᵀu` and `wf = W from`.
#[allow(
    clippy::too_many_arguments,
    reason = "the kernel's vectors, passed apart"
)]
fn log_q<D: TrickDomain>(
    p: &TrickParams<'_>,
    from: &[D::Value],
    grad: &[f32],
    wf: &[f64],
    t: &[f64],
    to: &[D::Value],
    weights: &mut [f64],
) -> f64 {
    let mut total = 0.0f64;
    for (((&x, &g), (&w, &t)), (&d, &y)) in from
        .iter()
        .zip(grad)
        .zip(wf.iter().zip(t))
        .zip(p.diag.iter().zip(to))
    {
        let (c, kappa) = p.coefficients(x, g, w, t, d);
        total += D::log_prob(c, kappa, y, weights);
    }
    total
}

/// The second-order any-scale balanced kernel (module docs: [`crate::second_order`]) in domain
/// `D` with its caller-owned scratch; use the aliases [`AbSecondOrder`] (binary states) and
/// [`OrdinalAbSecondOrder`](super::OrdinalAbSecondOrder).
///
/// Every step is an exact Metropolis–Hastings step for `π`, whatever `W`, `D`, `A`, `a`, `b`.
/// A proposal at which the target is not finite, or returns a recoverable error, is rejected
/// and reported, as in [`crate::kernel::Dmala`]. A step consumes exactly `3⌈d/2⌉ + 1` words of
/// the random stream (`d` normals, one 32-bit draw per coordinate, one uniform).
#[derive(Debug)]
pub struct SecondOrder<'m, 's, D: Domain> {
    params: TrickParams<'m>,
    states: usize,
    scratch: &'s mut [f64],
    cached_state: &'s mut [D::Value],
    cache_valid: bool,
}

/// The second-order kernel over `{0,1}^d`.
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
pub type AbSecondOrder<'m, 's> = SecondOrder<'m, 's, Binary>;

impl<'m, 's> SecondOrder<'m, 's, Binary> {
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
        Self::with_states(params, 2, scratch_len(params.dim), scratch, state)
    }
}

impl<'m, 's, D: TrickDomain> SecondOrder<'m, 's, D> {
    pub(super) fn with_states(
        params: TrickParams<'m>,
        states: usize,
        scratch_needed: usize,
        scratch: &'s mut [f64],
        state: &'s mut [D::Value],
    ) -> Result<Self, LenError> {
        LenError::check("scratch", scratch_needed, scratch.len())?;
        LenError::check("state", params.dim, state.len())?;
        Ok(Self {
            params,
            states,
            scratch,
            cached_state: state,
            cache_valid: false,
        })
    }

    /// The parameters.
    pub fn params(&self) -> &TrickParams<'m> {
        &self.params
    }

    /// The number of values `S` (2 for binary states).
    pub fn states(&self) -> usize {
        self.states
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
    /// by the same code the step uses (for tests and diagnostics). A value beyond the last in
    /// `y` (or `x`) has `log Q = −∞`. Invalidates the cache.
    ///
    /// # Errors
    ///
    /// [`LenError`] unless every slice has length `d`.
    pub fn transition(
        &mut self,
        x: &[D::Value],
        grad_x: &[f32],
        y: &[D::Value],
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
        let ([wx, ax, wy, ay, _, t], weights) = split_scratch(self.scratch, d)?;
        p.w.mul_state(d, x, wx);
        mat_state(p.factor, d, p.upper, x, ax);
        p.w.mul_state(d, y, wy);
        mat_state(p.factor, d, p.upper, y, ay);
        mat_t_vec(p.factor, d, p.upper, u, t);
        Ok(Transition {
            log_q_forward: log_q::<D>(&p, x, grad_x, wx, t, y, weights),
            log_q_reverse: log_q::<D>(&p, y, grad_y, wy, t, x, weights),
            log_gauss_ratio: gauss_ratio(u, ax, ay),
        })
    }

    /// Advances `chain` by one step.
    ///
    /// # Errors
    ///
    /// [`StepError::Len`] if the chain's or target's dimension or number of values differs
    /// from the kernel's; [`StepError::Target`] for an unrecoverable target error. The chain is
    /// unchanged then.
    pub fn step<T, R>(
        &mut self,
        target: &mut T,
        chain: &mut Chain<'_, D>,
        rng: &mut R,
    ) -> Result<StepReport, StepError<T::Error>>
    where
        T: Eval<D> + ?Sized,
        R: Rng + ?Sized,
    {
        self.step_with_jump(target, chain, rng).map(|r| r.0)
    }

    /// Like [`step`](Self::step), also returning the L1 distance the chain moved (0 unless
    /// accepted).
    ///
    /// # Errors
    ///
    /// As for [`step`](Self::step).
    pub fn step_with_jump<T, R>(
        &mut self,
        target: &mut T,
        chain: &mut Chain<'_, D>,
        rng: &mut R,
    ) -> Result<(StepReport, u64), StepError<T::Error>>
    where
        T: Eval<D> + ?Sized,
        R: Rng + ?Sized,
    {
        let p = self.params;
        let d = p.dim;
        LenError::check("chain", d, chain.dim())?;
        LenError::check("target", d, target.dim())?;
        LenError::check("states", self.states, chain.states())?;
        LenError::check("states", self.states, target.states())?;
        let valid = self.cache_valid && *self.cached_state == *chain.x;
        let ([wx, ax, wy, ay, u, t], weights) = split_scratch(self.scratch, d)?;
        let cached_state = &mut *self.cached_state;
        self.cache_valid = true;
        if !valid {
            p.w.mul_state(d, chain.x, wx);
            mat_state(p.factor, d, p.upper, chain.x, ax);
            crate::slices::copy(cached_state, chain.x);
        }
        // 1. u = A x + ξ and t = Aᵀu.
        fill_normal(rng, u);
        for (ui, &a) in u.iter_mut().zip(ax.iter()) {
            *ui += a;
        }
        mat_t_vec(p.factor, d, p.upper, u, t);
        // 2. y coordinatewise, two 32-bit draws per word.
        let (mut changed, mut jump) = (0usize, 0u64);
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
            let (c, kappa) = p.coefficients(xi, gi, wxi, ti, di);
            let (value, term) = D::draw(c, kappa, xi, bits, weights);
            *yi = value;
            log_q_forward += term;
            let (from, to): (usize, usize) = (xi.into(), value.into());
            jump += from.abs_diff(to) as u64;
            if let Some(slot) = chain.changed.get_mut(changed) {
                *slot = i as u32;
            }
            changed += usize::from(value != xi);
        }
        let log_u = libm::log(open_unit_f64(rng));
        let mut report = StepReport::proposed(true, changed, 0);
        // y = x needs no evaluation: every term of the ratio cancels.
        let Some(log_density) = evaluate_proposal(target, chain, &mut report)? else {
            return Ok((report, 0));
        };
        // 3. W y and A y from the cache (O(k d)) or afresh when most coordinates changed.
        let changed_idx = chain.changed.get(..changed).unwrap_or(&[]);
        if 2 * changed < d {
            let pair = (&*chain.x, &*chain.x_proposal);
            p.w.update(d, wx, pair, changed_idx, wy);
            update_columns(p.factor, d, ax, pair, changed_idx, ay);
        } else {
            p.w.mul_state(d, chain.x_proposal, wy);
            mat_state(p.factor, d, p.upper, chain.x_proposal, ay);
        }
        let log_q_reverse = log_q::<D>(
            &p,
            chain.x_proposal,
            chain.grad_proposal,
            wy,
            t,
            chain.x,
            weights,
        );
        let log_ratio = (log_density - chain.log_density)
            + gauss_ratio(u, ax, ay)
            + (log_q_reverse - log_q_forward);
        if settle(
            &mut report,
            true,
            log_u,
            log_ratio,
            log_density,
            target,
            chain,
        ) {
            crate::slices::copy(wx, wy);
            crate::slices::copy(ax, ay);
            crate::slices::copy(cached_state, chain.x);
            Ok((report, jump))
        } else {
            Ok((report, 0))
        }
    }
}

impl<D: TrickDomain> Kernel<D> for SecondOrder<'_, '_, D> {
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
        SecondOrder::step(self, target, chain, rng)
    }
}
