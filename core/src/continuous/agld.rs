//! AGLD: aggregated-gradient Langevin dynamics (Zhang et al. 2020): SVRG-LD, SAGA-LD, TMU under any
//! data-access order.

use super::{
    Access, BuildError, Carver, GlmSumTarget, Problem, SgCore, SgStep, StepError, SumTarget,
    all_finite, check_batch, check_batch_size, check_finite, check_shape, check_step, target_err,
};
use crate::error::{LenError, ParamError};
use rand_core::Rng;

/// When snapshot entries are replaced (Zhang et al. 2020, Sec. 3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SnapshotUpdate {
    /// PTU (SVRG-LD): every `period` steps (from step 0) all entries are refreshed at the
    /// current point; in between the snapshot is frozen.
    Total {
        /// `D ≥ 1`.
        period: u64,
    },
    /// PPU (SAGA-LD): all entries are set at step 0; afterwards the entries of each step's
    /// minibatch are replaced by the gradients just evaluated.
    Partial,
    /// TMU: partial updates every step and a total refresh every `period` steps.
    Mixed {
        /// `D ≥ 1`.
        period: u64,
    },
}

impl SnapshotUpdate {
    /// Whether the minibatch's entries are replaced at every step.
    pub fn is_partial(self) -> bool {
        matches!(self, SnapshotUpdate::Partial | SnapshotUpdate::Mixed { .. })
    }

    /// Whether step `k` (counted from 0) refreshes the whole snapshot.
    pub fn refreshes_at(self, k: u64) -> bool {
        match self {
            SnapshotUpdate::Total { period } | SnapshotUpdate::Mixed { period } => {
                period != 0 && k.is_multiple_of(period)
            }
            SnapshotUpdate::Partial => k == 0,
        }
    }

    fn check(self) -> Result<(), ParamError> {
        match self {
            SnapshotUpdate::Total { period: 0 } | SnapshotUpdate::Mixed { period: 0 } => {
                Err(ParamError::OutOfRange {
                    name: "period",
                    value: 0.0,
                })
            }
            _ => Ok(()),
        }
    }
}

/// Settings of [`Agld`]: step `h`, minibatch size `n`, data access and snapshot update.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AgldSettings {
    step: f64,
    batch: usize,
    access: Access,
    update: SnapshotUpdate,
}

impl AgldSettings {
    /// Validated settings.
    ///
    /// # Errors
    ///
    /// [`ParamError::Step`], or [`ParamError::OutOfRange`] for `n = 0` or period `D = 0`.
    pub fn new(
        step: f64,
        batch: usize,
        access: Access,
        update: SnapshotUpdate,
    ) -> Result<Self, ParamError> {
        check_step(step)?;
        check_batch_size(batch)?;
        update.check()?;
        Ok(Self {
            step,
            batch,
            access,
            update,
        })
    }

    /// The step `h`.
    pub fn step(&self) -> f64 {
        self.step
    }

    /// The minibatch size `n`.
    pub fn batch(&self) -> usize {
        self.batch
    }

    /// The data access.
    pub fn access(&self) -> Access {
        self.access
    }

    /// The snapshot update.
    pub fn update(&self) -> SnapshotUpdate {
        self.update
    }
}

/// The shape of a snapshot store, independent of the target type.
pub trait SnapshotShape {
    /// Whether the store keeps one entry per term (partial updates need that).
    const TABLE: bool;
    /// `d`.
    fn dim(&self) -> usize;
    /// `N`.
    fn terms(&self) -> usize;
}

/// Where the snapshot gradients `α_i` and their running sum `Σ_i α_i` live.
///
/// Implemented by [`PointSnapshot`] (PTU only), [`DenseSnapshots`] (`N × d` table, any
/// target) and [`ScalarSnapshots`] (`N` scalars, for a [`GlmSumTarget`]).
pub trait SnapshotStore<T: SumTarget + ?Sized>: SnapshotShape {
    /// Sets every entry at `θ` and **adds** the full gradient `∇V(θ)` to `out` (which the
    /// caller zeroed). Returns the per-term gradients evaluated (`N`). `scratch` has length `d`.
    ///
    /// # Errors
    ///
    /// [`StepError::Target`] or [`StepError::NonFiniteGradient`]; entries already replaced stay
    /// replaced and the running sum is kept consistent with them.
    fn refresh(
        &mut self,
        target: &mut T,
        theta: &[f64],
        out: &mut [f64],
        scratch: &mut [f64],
    ) -> Result<u32, StepError<T::Error>>;

    /// Adds the aggregated estimate `weight · Σ_{i∈batch} (∇V_i(θ) − α_i) + Σ_i α_i` to `out`,
    /// with `batch` sorted (repeats count with multiplicity but are evaluated once), and if
    /// `update` replaces `α_i` for the batch's indices, keeping the running sum in step.
    /// Returns the per-term gradients evaluated.
    ///
    /// # Errors
    ///
    /// As for [`refresh`](Self::refresh).
    #[allow(
        clippy::too_many_arguments,
        reason = "one call site; a struct would only rename"
    )]
    fn estimate(
        &mut self,
        target: &mut T,
        theta: &[f64],
        batch: &[u32],
        weight: f64,
        update: bool,
        out: &mut [f64],
        scratch: &mut [f64],
    ) -> Result<u32, StepError<T::Error>>;
}

/// The [`SnapshotShape`] of each store type, from its `dim` and `terms` fields: only `TABLE`
/// differs.
macro_rules! snapshot_shape {
    ($($store:ident: $table:literal),* $(,)?) => {$(
        impl SnapshotShape for $store<'_> {
            const TABLE: bool = $table;
            fn dim(&self) -> usize {
                self.dim
            }
            fn terms(&self) -> usize {
                self.terms
            }
        }
    )*};
}

snapshot_shape!(PointSnapshot: false, DenseSnapshots: true, ScalarSnapshots: true);

/// `out += src`.
#[inline]
fn add_to(out: &mut [f64], src: &[f64]) {
    for (o, &s) in out.iter_mut().zip(src) {
        *o += s;
    }
}

/// `scratch = ∇V_i(θ)`, checked finite.
#[inline]
fn term_grad_checked<T: SumTarget + ?Sized>(
    target: &mut T,
    i: usize,
    theta: &[f64],
    scratch: &mut [f64],
) -> Result<(), StepError<T::Error>> {
    scratch.fill(0.0);
    target
        .add_term_grad(i, theta, 1.0, scratch)
        .map_err(target_err)?;
    if all_finite(scratch) {
        Ok(())
    } else {
        Err(StepError::NonFiniteGradient)
    }
}

/// Calls `term(i, c)` for each distinct index `i` of the sorted `batch`, in order, with `c` the
/// weight times the number of times `i` was drawn, and adds up the per-term gradients the calls
/// report: the minibatch loop of every store's [`estimate`](SnapshotStore::estimate).
#[inline]
fn for_each_index<E>(
    batch: &[u32],
    weight: f64,
    mut term: impl FnMut(usize, f64) -> Result<u32, E>,
) -> Result<u32, E> {
    let mut evals = 0u32;
    for (i, run) in crate::slices::runs(batch) {
        evals += term(i as usize, run as f64 * weight)?;
    }
    Ok(evals)
}

/// A store's buffer `buf` checked for `dim` coordinates, `terms` terms and `total` entries
/// (`None`: the length overflows), zeroed and split into its first `first` entries and the
/// `dim` after them.
fn carve_store(
    dim: usize,
    terms: usize,
    buf: &mut [f64],
    total: Option<usize>,
    first: usize,
) -> Result<(&mut [f64], &mut [f64]), BuildError> {
    check_shape(dim, terms)?;
    let total = total.ok_or(BuildError::TooManyTerms(terms))?;
    buf.fill(0.0);
    let mut carve = Carver::new(buf, "snapshot", total)?;
    let head = carve.take(first);
    Ok((head, carve.take(dim)))
}

/// The PTU store of SVRG-LD: the snapshot point `θ̃` and its full gradient `∇V(θ̃)`; an entry
/// `α_i = ∇V_i(θ̃)` is re-evaluated when needed, so a minibatch costs `2n` gradients.
#[derive(Debug)]
pub struct PointSnapshot<'a> {
    dim: usize,
    terms: usize,
    point: &'a mut [f64],
    full: &'a mut [f64],
}

impl<'a> PointSnapshot<'a> {
    /// The buffer length: `2d`.
    pub const fn len(dim: usize) -> usize {
        2 * dim
    }

    /// A store in `buf` (zeroed) for `dim` coordinates and `terms` terms.
    ///
    /// # Errors
    ///
    /// A [`BuildError`] for an empty shape or a buffer of the wrong length.
    pub fn new(dim: usize, terms: usize, buf: &'a mut [f64]) -> Result<Self, BuildError> {
        let (point, full) = carve_store(dim, terms, buf, Some(Self::len(dim)), dim)?;
        Ok(Self {
            dim,
            terms,
            point,
            full,
        })
    }

    /// The snapshot point `θ̃`.
    pub fn point(&self) -> &[f64] {
        self.point
    }

    /// `∇V(θ̃)`, the running sum of the (implicit) entries.
    pub fn sum(&self) -> &[f64] {
        self.full
    }
}

impl<T: SumTarget + ?Sized> SnapshotStore<T> for PointSnapshot<'_> {
    fn refresh(
        &mut self,
        target: &mut T,
        theta: &[f64],
        out: &mut [f64],
        _scratch: &mut [f64],
    ) -> Result<u32, StepError<T::Error>> {
        target.add_full_grad(theta, 1.0, out).map_err(target_err)?;
        if !all_finite(out) {
            return Err(StepError::NonFiniteGradient);
        }
        crate::slices::copy(self.full, out);
        crate::slices::copy(self.point, theta);
        Ok(self.terms as u32)
    }

    fn estimate(
        &mut self,
        target: &mut T,
        theta: &[f64],
        batch: &[u32],
        weight: f64,
        _update: bool,
        out: &mut [f64],
        scratch: &mut [f64],
    ) -> Result<u32, StepError<T::Error>> {
        add_to(out, self.full);
        for_each_index(batch, weight, |i, c| {
            scratch.fill(0.0);
            target
                .add_term_grad(i, theta, 1.0, scratch)
                .map_err(target_err)?;
            target
                .add_term_grad(i, self.point, -1.0, scratch)
                .map_err(target_err)?;
            if !all_finite(scratch) {
                return Err(StepError::NonFiniteGradient);
            }
            for (o, &t) in out.iter_mut().zip(scratch.iter()) {
                *o += c * t;
            }
            Ok(2)
        })
    }
}

/// A table of `N` snapshot gradients (`N × d`, row `i` is `α_i`) and their running sum.
#[derive(Debug)]
pub struct DenseSnapshots<'a> {
    dim: usize,
    terms: usize,
    table: &'a mut [f64],
    sum: &'a mut [f64],
}

impl<'a> DenseSnapshots<'a> {
    /// The buffer length `(N + 1) d`, or `None` if it overflows.
    pub const fn len(dim: usize, terms: usize) -> Option<usize> {
        match terms.checked_add(1) {
            Some(rows) => rows.checked_mul(dim),
            None => None,
        }
    }

    /// A zeroed table in `buf` (the first `N d` entries; the sum after them).
    ///
    /// # Errors
    ///
    /// A [`BuildError`] for an empty shape or a buffer of the wrong length.
    pub fn new(dim: usize, terms: usize, buf: &'a mut [f64]) -> Result<Self, BuildError> {
        let table_len = terms.saturating_mul(dim);
        let (table, sum) = carve_store(dim, terms, buf, Self::len(dim, terms), table_len)?;
        Ok(Self {
            dim,
            terms,
            table,
            sum,
        })
    }

    /// The table, row-major `N × d`.
    pub fn table(&self) -> &[f64] {
        self.table
    }

    /// The entry `α_i`.
    pub fn entry(&self, i: usize) -> Option<&[f64]> {
        let start = i.checked_mul(self.dim)?;
        self.table.get(start..start.checked_add(self.dim)?)
    }

    /// The running sum `Σ_i α_i`.
    pub fn sum(&self) -> &[f64] {
        self.sum
    }

    /// Recomputes the running sum from the table (undoing rounding drift).
    pub fn recompute_sum(&mut self) {
        self.sum.fill(0.0);
        for row in self.table.chunks_exact(self.dim.max(1)) {
            add_to(self.sum, row);
        }
    }
}

impl<T: SumTarget + ?Sized> SnapshotStore<T> for DenseSnapshots<'_> {
    fn refresh(
        &mut self,
        target: &mut T,
        theta: &[f64],
        out: &mut [f64],
        scratch: &mut [f64],
    ) -> Result<u32, StepError<T::Error>> {
        let mut failed = None;
        for (i, row) in self.table.chunks_exact_mut(self.dim.max(1)).enumerate() {
            if let Err(e) = term_grad_checked(target, i, theta, scratch) {
                failed = Some(e);
                break;
            }
            crate::slices::copy(row, scratch);
            add_to(out, scratch);
        }
        if let Some(e) = failed {
            self.recompute_sum();
            return Err(e);
        }
        crate::slices::copy(self.sum, out);
        Ok(self.terms as u32)
    }

    fn estimate(
        &mut self,
        target: &mut T,
        theta: &[f64],
        batch: &[u32],
        weight: f64,
        update: bool,
        out: &mut [f64],
        scratch: &mut [f64],
    ) -> Result<u32, StepError<T::Error>> {
        add_to(out, self.sum);
        let d = self.dim;
        for_each_index(batch, weight, |i, c| {
            term_grad_checked(target, i, theta, scratch)?;
            let start = i * d;
            let Some(row) = self.table.get_mut(start..start + d) else {
                return Ok(1);
            };
            if update {
                for ((o, s), (a, &t)) in out
                    .iter_mut()
                    .zip(self.sum.iter_mut())
                    .zip(row.iter_mut().zip(scratch.iter()))
                {
                    let delta = t - *a;
                    *o += c * delta;
                    *s += delta;
                    *a = t;
                }
            } else {
                for (o, (&a, &t)) in out.iter_mut().zip(row.iter().zip(scratch.iter())) {
                    *o += c * (t - a);
                }
            }
            Ok(1)
        })
    }
}

/// One scalar `σ_i = s_i(θ_i)` per term for a [`GlmSumTarget`] (`∇V_i = s_i z_i + q`), and the
/// running sum `Σ_i σ_i z_i` of the data parts. The shared part `q(θ)` is always evaluated at
/// the current point.
#[derive(Debug)]
pub struct ScalarSnapshots<'a> {
    dim: usize,
    terms: usize,
    scalars: &'a mut [f64],
    sum: &'a mut [f64],
}

impl<'a> ScalarSnapshots<'a> {
    /// The buffer length `N + d`, or `None` if it overflows.
    pub const fn len(dim: usize, terms: usize) -> Option<usize> {
        terms.checked_add(dim)
    }

    /// A zeroed store in `buf` (the `N` scalars, then the `d` sum).
    ///
    /// # Errors
    ///
    /// A [`BuildError`] for an empty shape or a buffer of the wrong length.
    pub fn new(dim: usize, terms: usize, buf: &'a mut [f64]) -> Result<Self, BuildError> {
        let (scalars, sum) = carve_store(dim, terms, buf, Self::len(dim, terms), terms)?;
        Ok(Self {
            dim,
            terms,
            scalars,
            sum,
        })
    }

    /// The scalars `σ_i`.
    pub fn scalars(&self) -> &[f64] {
        self.scalars
    }

    /// The running sum `Σ_i σ_i z_i`.
    pub fn sum(&self) -> &[f64] {
        self.sum
    }

    /// Recomputes the running sum from the scalars and the target's data vectors.
    pub fn recompute_sum<T: GlmSumTarget + ?Sized>(&mut self, target: &T) {
        self.sum.fill(0.0);
        for (i, &s) in self.scalars.iter().enumerate() {
            target.add_term_data(i, s, self.sum);
        }
    }
}

impl<T: GlmSumTarget + ?Sized> SnapshotStore<T> for ScalarSnapshots<'_> {
    fn refresh(
        &mut self,
        target: &mut T,
        theta: &[f64],
        out: &mut [f64],
        _scratch: &mut [f64],
    ) -> Result<u32, StepError<T::Error>> {
        for i in 0..self.terms {
            let s = match target.term_scalar(i, theta) {
                Ok(s) if s.is_finite() => s,
                other => {
                    self.recompute_sum(target);
                    return Err(match other {
                        Err(e) => StepError::Target(e),
                        Ok(_) => StepError::NonFiniteGradient,
                    });
                }
            };
            if let Some(slot) = self.scalars.get_mut(i) {
                *slot = s;
            }
            target.add_term_data(i, s, out);
        }
        crate::slices::copy(self.sum, out);
        target
            .add_shared_grad(theta, self.terms as f64, out)
            .map_err(target_err)?;
        Ok(self.terms as u32)
    }

    fn estimate(
        &mut self,
        target: &mut T,
        theta: &[f64],
        batch: &[u32],
        weight: f64,
        update: bool,
        out: &mut [f64],
        _scratch: &mut [f64],
    ) -> Result<u32, StepError<T::Error>> {
        add_to(out, self.sum);
        let evals = for_each_index(batch, weight, |i, c| {
            let s = target.term_scalar(i, theta).map_err(target_err)?;
            if !s.is_finite() {
                return Err(StepError::NonFiniteGradient);
            }
            let Some(slot) = self.scalars.get_mut(i) else {
                return Ok(1);
            };
            let delta = s - *slot;
            target.add_term_data(i, c * delta, out);
            if update {
                target.add_term_data(i, delta, self.sum);
                *slot = s;
            }
            Ok(1)
        })?;
        target
            .add_shared_grad(theta, self.terms as f64, out)
            .map_err(target_err)?;
        Ok(evals)
    }
}

/// An AGLD chain in caller memory, generic over its snapshot store `S`.
///
/// Step `k` either refreshes the whole snapshot (PTU/TMU every `D` steps, and every strategy at
/// `k = 0`), which costs `N` gradients and makes the estimate the exact `∇V(θ)`, or draws a
/// minibatch `S_k` of `n` indices from the data access and uses
/// `ĝ = (N/n) Σ_{i∈S_k} (∇V_i(θ) − α_i) + Σ_i α_i`, then moves
/// `θ ← θ − h ĝ + √(2h) ξ`. Refresh steps draw no indices and do not advance the data access.
///
/// # Examples
///
/// SAGA-LD with a dense table:
///
/// ```
/// use core::convert::Infallible;
/// use langevin_core::continuous::{
///     Access, Agld, AgldSettings, DenseSnapshots, SnapshotUpdate, SumTarget,
/// };
/// use rand_core::SeedableRng;
///
/// struct Centres;
/// impl SumTarget for Centres {
///     type Error = Infallible;
///     fn dim(&self) -> usize { 1 }
///     fn num_terms(&self) -> usize { 3 }
///     fn add_term_grad(&mut self, i: usize, t: &[f64], s: f64, acc: &mut [f64]) -> Result<(), Infallible> {
///         acc[0] += s * (t[0] - i as f64);
///         Ok(())
///     }
/// }
///
/// let settings = AgldSettings::new(0.05, 1, Access::Random, SnapshotUpdate::Partial).unwrap();
/// let mut snap = vec![0.0; DenseSnapshots::len(1, 3).unwrap()];
/// let store = DenseSnapshots::new(1, 3, &mut snap).unwrap();
/// let mut work = vec![0.0; Agld::<DenseSnapshots>::workspace_len(1)];
/// let mut index = vec![0; Agld::<DenseSnapshots>::index_len(&settings, 3)];
/// let mut chain = Agld::new(settings, 1, 3, &[0.0], store, &mut work, &mut index).unwrap();
/// let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(5);
/// assert_eq!(chain.step(&mut Centres, &mut rng).unwrap().grad_evals, 3); // initial refresh
/// assert_eq!(chain.step(&mut Centres, &mut rng).unwrap().grad_evals, 1);
/// ```
#[derive(Debug)]
pub struct Agld<'a, S> {
    settings: AgldSettings,
    core: SgCore<'a>,
    scratch: &'a mut [f64],
    batch: &'a mut [u32],
    store: S,
    steps: u64,
}

impl<'a, S: SnapshotShape> Agld<'a, S> {
    /// The `f64` workspace length: `4d`.
    pub const fn workspace_len(dim: usize) -> usize {
        4 * dim
    }

    /// The `u32` workspace length: `n`, plus `N` for reshuffled access.
    pub fn index_len(settings: &AgldSettings, terms: usize) -> usize {
        settings.batch + settings.access.index_len(terms)
    }

    /// A chain at `theta0` using `store` (whose contents are replaced at step 0).
    ///
    /// # Errors
    ///
    /// A [`BuildError`] for an empty shape, `n > N`, a store of another shape, partial updates
    /// with a [`PointSnapshot`], workspaces of the wrong length, or a non-finite `theta0`.
    #[allow(clippy::too_many_arguments, reason = "state, store and two workspaces")]
    pub fn new(
        settings: AgldSettings,
        dim: usize,
        terms: usize,
        theta0: &[f64],
        store: S,
        work: &'a mut [f64],
        index: &'a mut [u32],
    ) -> Result<Self, BuildError> {
        check_shape(dim, terms)?;
        check_batch(settings.batch, terms)?;
        if (settings.batch as u64) * 2 > u64::from(u32::MAX) {
            return Err(BuildError::TooManyEvaluations);
        }
        LenError::check("snapshot dim", dim, store.dim())?;
        LenError::check("snapshot terms", terms, store.terms())?;
        if settings.update.is_partial() && !S::TABLE {
            return Err(BuildError::SnapshotNeedsTable);
        }
        let mut icarve = Carver::new(index, "index", Self::index_len(&settings, terms))?;
        let batch = icarve.take(settings.batch);
        let perm = icarve.take(settings.access.index_len(terms));
        let problem = Problem::new(dim, terms, Some(settings.batch), theta0);
        let len = Self::workspace_len(dim);
        let (core, mut rest) = SgCore::new(problem, work, len, settings.access, perm)?;
        Ok(Self {
            settings,
            core,
            scratch: rest.take(dim),
            batch,
            store,
            steps: 0,
        })
    }

    /// The settings.
    pub fn settings(&self) -> &AgldSettings {
        &self.settings
    }

    /// The position `θ`.
    pub fn theta(&self) -> &[f64] {
        self.core.theta
    }

    /// The position `θ`, to move the chain by hand (the snapshot is left as it is).
    pub fn theta_mut(&mut self) -> &mut [f64] {
        self.core.theta
    }

    /// The snapshot store.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// Completed steps `k`.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// The last gradient estimate `ĝ`.
    pub fn gradient(&self) -> &[f64] {
        self.core.grad
    }

    /// One step. RNG use: the minibatch indices (none at refresh steps), then `d` normals.
    ///
    /// # Errors
    ///
    /// See [`StepError`]; `θ` and the step counter are unchanged on error (snapshot entries
    /// may have been replaced by valid newer ones).
    pub fn step<T: SumTarget + ?Sized, R: Rng + ?Sized>(
        &mut self,
        target: &mut T,
        rng: &mut R,
    ) -> Result<SgStep, StepError<T::Error>>
    where
        S: SnapshotStore<T>,
    {
        let chain = &mut self.core;
        chain.check(target)?;
        chain.grad.fill(0.0);
        let refreshed = self.settings.update.refreshes_at(self.steps);
        let evals = if refreshed {
            self.store
                .refresh(target, chain.theta, chain.grad, self.scratch)?
        } else {
            chain.stream.fill(rng, self.batch);
            crate::slices::sort(self.batch);
            let weight = chain.terms as f64 / self.settings.batch as f64;
            self.store.estimate(
                target,
                chain.theta,
                self.batch,
                weight,
                self.settings.update.is_partial(),
                chain.grad,
                self.scratch,
            )?
        };
        check_finite(chain.grad)?;
        chain.overdamped(self.settings.step, rng)?;
        self.steps += 1;
        Ok(SgStep {
            grad_evals: evals,
            index_moves: 0,
            refreshed,
        })
    }
}
