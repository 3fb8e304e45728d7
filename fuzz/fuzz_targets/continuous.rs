//! The stochastic-gradient Langevin integrators (LMC, SGLD, underdamped/SGHMC, EWSG, AGLD with
//! point, dense and scalar snapshots under every snapshot update) with every data access, over
//! a small generalised-linear sum whose terms (scalars, data vectors, a shared ridge part,
//! errors) come from the input, as does the random stream. Checks that settings and
//! constructors accept exactly the valid parameters and buffer lengths; that after every step
//! the state is finite, the gradient count is the documented one and `refreshed` follows the
//! snapshot schedule; that a failed step leaves position, momentum and step counter untouched,
//! and a target of the wrong shape is refused; that LMC and full-gradient underdamped steps are
//! exactly the documented updates (replayed bit for bit from a clone of the random stream); that
//! a point snapshot holds the point and full gradient of its last refresh bit for bit and the
//! running sums of dense and scalar snapshots stay within rounding of their entries' sum; and
//! that the same input gives the same output.
#![no_main]

use langevin_core::continuous::{
    Access, Agld, AgldSettings, DenseSnapshots, Ewsg, EwsgSettings, GlmSumTarget, Langevin,
    LangevinSettings, PointSnapshot, ScalarSnapshots, SgStep, SnapshotShape, SnapshotUpdate,
    StepError, SumTarget, Underdamped, UnderdampedSettings,
};
use langevin_core::random::fill_normal;
use langevin_fuzz::{ByteRng, Input, TableError};

/// `V_i(θ) = c_i (z_i·θ − y_i)² / 2 + λ|θ|² / (2N)`: `∇V_i = s_i z_i + λθ/N` with
/// `s_i = c_i (z_i·θ − y_i)`; term `i` fails when `fail[i]`.
#[derive(Clone, Debug)]
struct Glm {
    dim: usize,
    c: Vec<f64>,
    z: Vec<Vec<f64>>,
    y: Vec<f64>,
    lambda: f64,
    fail: Vec<bool>,
}

impl Glm {
    fn read(dim: usize, terms: usize, input: &mut Input<'_>) -> Self {
        Self {
            dim,
            c: (0..terms).map(|_| input.f64()).collect(),
            z: (0..terms)
                .map(|_| (0..dim).map(|_| input.f64()).collect())
                .collect(),
            y: (0..terms).map(|_| input.f64()).collect(),
            lambda: input.f64(),
            fail: (0..terms).map(|_| input.u8() >= 250).collect(),
        }
    }
    fn scalar(&self, i: usize, theta: &[f64]) -> Result<f64, TableError> {
        if self.fail[i] {
            return Err(TableError { recoverable: false });
        }
        let dot: f64 = self.z[i].iter().zip(theta).map(|(z, t)| z * t).sum();
        Ok(self.c[i] * (dot - self.y[i]))
    }
    fn shared(&self, theta: &[f64], scale: f64, acc: &mut [f64]) {
        let n = self.c.len() as f64;
        for (a, t) in acc.iter_mut().zip(theta) {
            *a += scale * (self.lambda * t / n);
        }
    }
    /// `∇V(θ)` summed in index order into zeros, as `add_full_grad` does.
    fn full(&self, theta: &[f64]) -> Result<Vec<f64>, TableError> {
        let mut g = vec![0.0; self.dim];
        for i in 0..self.c.len() {
            self.add(i, theta, 1.0, &mut g)?;
        }
        Ok(g)
    }
    fn add(&self, i: usize, theta: &[f64], scale: f64, acc: &mut [f64]) -> Result<(), TableError> {
        let s = self.scalar(i, theta)?;
        for (a, z) in acc.iter_mut().zip(&self.z[i]) {
            *a += scale * s * z;
        }
        self.shared(theta, scale, acc);
        Ok(())
    }
}

impl SumTarget for Glm {
    type Error = TableError;
    fn dim(&self) -> usize {
        self.dim
    }
    fn num_terms(&self) -> usize {
        self.c.len()
    }
    fn add_term_grad(
        &mut self,
        i: usize,
        theta: &[f64],
        scale: f64,
        acc: &mut [f64],
    ) -> Result<(), TableError> {
        self.add(i, theta, scale, acc)
    }
}

impl GlmSumTarget for Glm {
    fn term_scalar(&mut self, i: usize, theta: &[f64]) -> Result<f64, TableError> {
        self.scalar(i, theta)
    }
    fn add_term_data(&self, i: usize, scale: f64, acc: &mut [f64]) {
        for (a, z) in acc.iter_mut().zip(&self.z[i]) {
            *a += scale * z;
        }
    }
    fn add_shared_grad(
        &mut self,
        theta: &[f64],
        scale: f64,
        acc: &mut [f64],
    ) -> Result<(), TableError> {
        self.shared(theta, scale, acc);
        Ok(())
    }
}

fn valid_step(h: f64) -> bool {
    h.is_finite() && h > 0.0
}

fn finite(v: &[f64]) -> bool {
    v.iter().all(|x| x.is_finite())
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// `|a − b| ≤ tol` entrywise for a running sum kept through `ops` additions, where `hist`
/// bounds the magnitudes it ever held (rounding errors scale with those, not with today's
/// entries) and is updated with `scale` and `a`; unchecked where the bound overflows.
fn close(a: &[f64], b: &[f64], scale: &[f64], hist: &mut [f64], ops: usize) {
    for (((&x, &y), &s), h) in a.iter().zip(b).zip(scale).zip(hist.iter_mut()) {
        // A non-finite entry or sum poisons the bound for good (∞ − ∞ cannot be undone).
        *h = if s.is_finite() && x.is_finite() {
            h.max(s).max(x.abs())
        } else {
            f64::INFINITY
        };
        let tol = 4.0 * ops as f64 * (f64::EPSILON * *h + f64::from_bits(1));
        if tol.is_finite() && y.is_finite() {
            assert!((x - y).abs() <= tol, "running sum {x} vs {y} (bound {h})");
        }
    }
}

struct Case {
    d: usize,
    n: usize,
    target: Glm,
    theta0: Vec<f64>,
    step: f64,
    friction: f64,
    batch: usize,
    access: Access,
    index_chain: u32,
    update: SnapshotUpdate,
    steps: usize,
}

impl Case {
    fn read(input: &mut Input<'_>) -> Self {
        let d = 1 + usize::from(input.u8() % 4);
        let n = 1 + usize::from(input.u8() % 6);
        let target = Glm::read(d, n, input);
        let theta0 = (0..d).map(|_| input.f64()).collect();
        let step = input.f64();
        let friction = input.f64();
        let batch = usize::from(input.u8() % 8);
        let access = match input.u8() % 3 {
            0 => Access::Random,
            1 => Access::Reshuffle,
            _ => Access::Cyclic,
        };
        let index_chain = u32::from(input.u8() % 4);
        let period = u64::from(input.u8() % 5);
        let update = match input.u8() % 3 {
            0 => SnapshotUpdate::Total { period },
            1 => SnapshotUpdate::Partial,
            _ => SnapshotUpdate::Mixed { period },
        };
        let steps = 1 + usize::from(input.u8() % 16);
        Self {
            d,
            n,
            target,
            theta0,
            step,
            friction,
            batch,
            access,
            index_chain,
            update,
            steps,
        }
    }

    /// Whether the start is finite (the builders refuse any other).
    fn finite_start(&self) -> bool {
        self.theta0.iter().all(|v| v.is_finite())
    }

    fn wrong_shape(&self) -> Glm {
        let mut t = self.target.clone();
        t.c.push(1.0);
        t.z.push(vec![0.0; self.d]);
        t.y.push(0.0);
        t.fail.push(false);
        t
    }
}

/// Generic per-step checks; `state` gives `(θ, momentum)` bits.
fn check_step(
    got: &Result<SgStep, StepError<TableError>>,
    before: &[Vec<u64>],
    after: &[Vec<u64>],
    out: &mut Vec<u64>,
) {
    match got {
        Ok(s) => {
            for v in after {
                assert!(
                    v.iter().all(|&b| f64::from_bits(b).is_finite()),
                    "state not finite"
                );
            }
            out.extend([
                u64::from(s.grad_evals),
                u64::from(s.index_moves),
                u64::from(s.refreshed),
            ]);
        }
        Err(StepError::Shape { .. }) => panic!("shape error on a consistent target"),
        Err(e) => {
            assert_eq!(before, after, "a failed step moved the chain: {e:?}");
            out.push(u64::MAX);
        }
    }
    for v in after {
        out.extend(v);
    }
}

fn overdamped(c: &mut Case, input: &mut Input<'_>, minibatch: bool) -> Vec<u64> {
    let settings = if minibatch {
        LangevinSettings::sgld(c.step, c.batch)
    } else {
        LangevinSettings::lmc(c.step)
    };
    assert_eq!(
        settings.is_ok(),
        valid_step(c.step) && (!minibatch || c.batch > 0)
    );
    let Ok(settings) = settings else {
        return Vec::new();
    };
    let settings = settings.with_access(c.access);
    let mut work = vec![0.0; Langevin::workspace_len(c.d)];
    let mut index = vec![0u32; Langevin::index_len(&settings, c.n)];
    let mut short = vec![0.0; Langevin::workspace_len(c.d) - 1];
    assert!(Langevin::new(settings, c.d, c.n, &c.theta0, &mut short, &mut index).is_err());
    let chain = Langevin::new(settings, c.d, c.n, &c.theta0, &mut work, &mut index);
    assert_eq!(
        chain.is_ok(),
        (!minibatch || c.batch <= c.n) && c.finite_start()
    );
    let Ok(mut chain) = chain else {
        return Vec::new();
    };
    let mut rng = ByteRng::new(input.rest());
    let mut out = Vec::new();
    for _ in 0..c.steps {
        let before = vec![bits(chain.theta())];
        let theta = chain.theta().to_vec();
        // Replay of LMC: θ − h ∇V(θ) + √(2h) ξ.
        let want = if minibatch {
            None
        } else {
            let mut r = rng.clone();
            Some(match c.target.full(&theta) {
                Err(_) => Err(0),
                Ok(g) if !finite(&g) => Err(1),
                Ok(g) => {
                    let mut xi = vec![0.0; c.d];
                    fill_normal(&mut r, &mut xi);
                    let s = libm::sqrt(2.0 * c.step);
                    let next: Vec<f64> = theta
                        .iter()
                        .zip(&g)
                        .zip(&xi)
                        .map(|((t, g), x)| t - c.step * g + s * x)
                        .collect();
                    if finite(&next) { Ok(next) } else { Err(2) }
                }
            })
        };
        let got = chain.step(&mut c.target, &mut rng);
        if let Ok(s) = &got {
            let evals = if minibatch { c.batch } else { c.n };
            assert_eq!(s.grad_evals as usize, evals);
            assert_eq!((s.index_moves, s.refreshed), (0, false));
        }
        if let Some(want) = want {
            match (&want, &got) {
                (Ok(next), Ok(_)) => assert_eq!(bits(next), bits(chain.theta()), "LMC update"),
                (Err(0), Err(StepError::Target(_)))
                | (Err(1), Err(StepError::NonFiniteGradient))
                | (Err(2), Err(StepError::NonFiniteState)) => {}
                (w, g) => panic!("LMC step gave {g:?}, expected {w:?}"),
            }
        }
        check_step(&got, &before, &[bits(chain.theta())], &mut out);
    }
    let before = bits(chain.theta());
    let got = chain.step(&mut c.wrong_shape(), &mut rng);
    assert!(matches!(got, Err(StepError::Shape { .. })));
    assert_eq!(bits(chain.theta()), before);
    out
}

fn underdamped(c: &mut Case, input: &mut Input<'_>, minibatch: bool) -> Vec<u64> {
    let settings = if minibatch {
        UnderdampedSettings::sghmc(c.step, c.friction, c.batch)
    } else {
        UnderdampedSettings::full(c.step, c.friction)
    };
    let friction_ok = c.friction.is_finite() && c.friction >= 0.0;
    assert_eq!(
        settings.is_ok(),
        valid_step(c.step) && friction_ok && (!minibatch || c.batch > 0)
    );
    let Ok(settings) = settings else {
        return Vec::new();
    };
    let settings = settings.with_access(c.access);
    let mut work = vec![0.0; Underdamped::workspace_len(c.d)];
    let mut index = vec![0u32; Underdamped::index_len(&settings, c.n)];
    let chain = Underdamped::new(settings, c.d, c.n, &c.theta0, &mut work, &mut index);
    assert_eq!(
        chain.is_ok(),
        (!minibatch || c.batch <= c.n) && c.finite_start()
    );
    let Ok(mut chain) = chain else {
        return Vec::new();
    };
    assert!(chain.momentum().iter().all(|&r| r == 0.0));
    let mut rng = ByteRng::new(input.rest());
    let mut out = Vec::new();
    for _ in 0..c.steps {
        let before = vec![bits(chain.theta()), bits(chain.momentum())];
        let (theta, mom) = (chain.theta().to_vec(), chain.momentum().to_vec());
        // Replay of the Euler–Maruyama step: θ + h r, (1 − hγ) r − h ∇V + √(2γh) ξ.
        let want = if minibatch {
            None
        } else {
            let mut r = rng.clone();
            Some(match c.target.full(&theta) {
                Err(_) => Err(0),
                Ok(g) if !finite(&g) => Err(1),
                Ok(g) => {
                    let mut xi = vec![0.0; c.d];
                    fill_normal(&mut r, &mut xi);
                    let (h, gam) = (c.step, c.friction);
                    let s = libm::sqrt(2.0 * gam * h);
                    let keep = 1.0 - h * gam;
                    let r2: Vec<f64> = mom
                        .iter()
                        .zip(&g)
                        .zip(&xi)
                        .map(|((r, g), x)| keep * r - h * g + s * x)
                        .collect();
                    let t2: Vec<f64> = theta.iter().zip(&mom).map(|(t, r)| t + h * r).collect();
                    if finite(&r2) && finite(&t2) {
                        Ok((t2, r2))
                    } else {
                        Err(2)
                    }
                }
            })
        };
        let got = chain.step(&mut c.target, &mut rng);
        if let Ok(s) = &got {
            assert_eq!(s.grad_evals as usize, if minibatch { c.batch } else { c.n });
        }
        if let Some(want) = want {
            match (&want, &got) {
                (Ok((t, r)), Ok(_)) => {
                    assert_eq!(bits(t), bits(chain.theta()), "position update");
                    assert_eq!(bits(r), bits(chain.momentum()), "momentum update");
                }
                (Err(0), Err(StepError::Target(_)))
                | (Err(1), Err(StepError::NonFiniteGradient))
                | (Err(2), Err(StepError::NonFiniteState)) => {}
                (w, g) => panic!("underdamped step gave {g:?}, expected {w:?}"),
            }
        }
        check_step(
            &got,
            &before,
            &[bits(chain.theta()), bits(chain.momentum())],
            &mut out,
        );
    }
    let got = chain.step(&mut c.wrong_shape(), &mut rng);
    assert!(matches!(got, Err(StepError::Shape { .. })));
    out
}

fn ewsg(c: &mut Case, input: &mut Input<'_>) -> Vec<u64> {
    let settings = EwsgSettings::new(c.step, c.friction);
    let friction_ok = c.friction.is_finite() && c.friction > 0.0;
    assert_eq!(settings.is_ok(), valid_step(c.step) && friction_ok);
    let Ok(settings) = settings else {
        return Vec::new();
    };
    let settings = settings.with_batch(c.batch);
    assert_eq!(settings.is_ok(), c.batch > 0);
    let Ok(settings) = settings else {
        return Vec::new();
    };
    let settings = settings.with_index_chain(c.index_chain);
    let mut work = vec![0.0; Ewsg::workspace_len(c.d)];
    let chain = Ewsg::new(settings, c.d, c.n, &c.theta0, &mut work);
    assert_eq!(chain.is_ok(), c.batch <= c.n && c.finite_start());
    let Ok(mut chain) = chain else {
        return Vec::new();
    };
    let mut rng = ByteRng::new(input.rest());
    let mut out = Vec::new();
    for t in 0..c.steps {
        let before = vec![bits(chain.theta()), bits(chain.momentum())];
        let got = if t % 3 == 2 {
            // Selection alone never moves the chain.
            let got = chain.select(&mut c.target, &mut rng);
            assert_eq!(before, vec![bits(chain.theta()), bits(chain.momentum())]);
            if got.is_ok() {
                assert!(finite(chain.gradient()));
            }
            got
        } else {
            chain.step(&mut c.target, &mut rng)
        };
        if let Ok(s) = &got {
            assert_eq!(
                s.grad_evals as usize,
                (c.index_chain as usize + 1) * c.batch
            );
            assert!(s.index_moves <= c.index_chain && !s.refreshed);
        }
        check_step(
            &got,
            &before,
            &[bits(chain.theta()), bits(chain.momentum())],
            &mut out,
        );
    }
    let got = chain.step(&mut c.wrong_shape(), &mut rng);
    assert!(matches!(got, Err(StepError::Shape { .. })));
    out
}

/// Which snapshot store an AGLD case uses.
#[derive(Clone, Copy, PartialEq)]
enum Store {
    Point,
    Dense,
    Scalar,
}

fn agld(c: &mut Case, input: &mut Input<'_>, store: Store) -> Vec<u64> {
    let settings = AgldSettings::new(c.step, c.batch, c.access, c.update);
    let period_ok = !matches!(
        c.update,
        SnapshotUpdate::Total { period: 0 } | SnapshotUpdate::Mixed { period: 0 }
    );
    assert_eq!(
        settings.is_ok(),
        valid_step(c.step) && c.batch > 0 && period_ok
    );
    let Ok(settings) = settings else {
        return Vec::new();
    };
    let (d, n) = (c.d, c.n);
    let mut work = vec![0.0; Agld::<PointSnapshot<'_>>::workspace_len(d)];
    let mut index = vec![0u32; Agld::<PointSnapshot<'_>>::index_len(&settings, n)];
    let batch_fits = c.batch <= n;
    // The store is checked before the start.
    let fits = batch_fits && c.finite_start();
    let mut out = Vec::new();
    let mut rng = ByteRng::new(input.rest());
    let hist = core::cell::RefCell::new(vec![0.0f64; d]);
    // Additions a running sum has seen: a refresh or update per step touches every term.
    let ops = (c.steps + 2) * (n + 2) * (c.batch + 2);
    macro_rules! run_chain {
        ($chain:expr, $check:expr) => {{
            let mut chain = $chain;
            for _ in 0..c.steps {
                let before = vec![bits(chain.theta())];
                let theta = chain.theta().to_vec();
                let k = chain.steps();
                let got = chain.step(&mut c.target, &mut rng);
                match &got {
                    Ok(s) => {
                        assert_eq!(chain.steps(), k + 1);
                        assert_eq!(s.refreshed, c.update.refreshes_at(k), "refresh schedule");
                        if s.refreshed {
                            assert_eq!(s.grad_evals as usize, n);
                        } else {
                            let per = if store == Store::Point { 2 } else { 1 };
                            assert!(s.grad_evals as usize <= per * c.batch.min(n));
                        }
                        assert!(finite(chain.gradient()));
                    }
                    Err(_) => assert_eq!(chain.steps(), k),
                }
                #[allow(clippy::redundant_closure_call)]
                ($check)(&chain, &c.target, &theta, &got);
                check_step(&got, &before, &[bits(chain.theta())], &mut out);
            }
            let got = chain.step(&mut c.wrong_shape(), &mut rng);
            assert!(matches!(got, Err(StepError::Shape { .. })));
        }};
    }
    // A store with a table: its running sum stays within rounding of its entries' sum.
    macro_rules! run_summed {
        ($snap:expr, $store:ty) => {{
            let chain = Agld::new(settings, d, n, &c.theta0, $snap, &mut work, &mut index);
            assert_eq!(chain.is_ok(), fits);
            if let Ok(chain) = chain {
                run_chain!(
                    chain,
                    |chain: &Agld<'_, $store>, target: &Glm, _: &[f64], _: &Result<SgStep, _>| {
                        let s = chain.store();
                        let rows = s.rows(target);
                        let sum = sum_rows(d, rows.iter().map(Vec::as_slice));
                        let scale = abs_sum(d, &rows);
                        close(s.sum(), &sum, &scale, &mut hist.borrow_mut(), ops);
                    }
                )
            }
        }};
    }
    match store {
        Store::Point => {
            let mut buf = vec![0.0; PointSnapshot::len(d)];
            let snap = PointSnapshot::new(d, n, &mut buf).expect("lengths fit");
            let chain = Agld::new(settings, d, n, &c.theta0, snap, &mut work, &mut index);
            match chain {
                Err(langevin_core::continuous::BuildError::SnapshotNeedsTable) => {
                    assert!(c.update.is_partial() && batch_fits)
                }
                Ok(chain) => {
                    assert!(!c.update.is_partial() && fits);
                    run_chain!(
                        chain,
                        |chain: &Agld<'_, PointSnapshot<'_>>,
                         target: &Glm,
                         theta: &[f64],
                         got: &Result<SgStep, _>| {
                            if got.as_ref().is_ok_and(|s| s.refreshed) {
                                let p = chain.store();
                                assert_eq!(bits(p.point()), bits(theta), "snapshot point");
                                let full = target.full(theta).expect("evaluated");
                                assert_eq!(bits(p.sum()), bits(&full), "snapshot gradient");
                            }
                        }
                    )
                }
                Err(e) => assert!(!fits, "{e:?}"),
            }
        }
        Store::Dense => {
            let len = DenseSnapshots::len(d, n).expect("small");
            let mut bad = vec![0.0; len + 1];
            assert!(DenseSnapshots::new(d, n, &mut bad).is_err());
            let mut buf = vec![0.0; len];
            let snap = DenseSnapshots::new(d, n, &mut buf).expect("lengths fit");
            run_summed!(snap, DenseSnapshots<'_>)
        }
        Store::Scalar => {
            let mut buf = vec![0.0; ScalarSnapshots::len(d, n).expect("small")];
            let snap = ScalarSnapshots::new(d, n, &mut buf).expect("lengths fit");
            run_summed!(snap, ScalarSnapshots<'_>)
        }
    }
    out
}

/// The snapshot stores that keep one entry per term and their running sum.
trait TableStore {
    /// The entries `α_i`, a row per term.
    fn rows(&self, target: &Glm) -> Vec<Vec<f64>>;
}

impl TableStore for DenseSnapshots<'_> {
    fn rows(&self, _: &Glm) -> Vec<Vec<f64>> {
        (0..self.terms())
            .map(|i| self.entry(i).expect("entry").to_vec())
            .collect()
    }
}

impl TableStore for ScalarSnapshots<'_> {
    fn rows(&self, target: &Glm) -> Vec<Vec<f64>> {
        self.scalars()
            .iter()
            .zip(&target.z)
            .map(|(a, z)| z.iter().map(|v| a * v).collect())
            .collect()
    }
}

/// The entrywise sum of the rows' magnitudes: what their sum's rounding scales with.
fn abs_sum(d: usize, rows: &[Vec<f64>]) -> Vec<f64> {
    let mut s = vec![0.0f64; d];
    for row in rows {
        for (a, v) in s.iter_mut().zip(row) {
            *a += v.abs();
        }
    }
    s
}

/// The entrywise sum of `rows`, added row after row.
fn sum_rows<'r>(d: usize, rows: impl IntoIterator<Item = &'r [f64]>) -> Vec<f64> {
    let mut sum = vec![0.0; d];
    for row in rows {
        for (a, v) in sum.iter_mut().zip(row) {
            *a += v;
        }
    }
    sum
}

fn run(data: &[u8]) -> Vec<u64> {
    let Some((&mode, rest)) = data.split_first() else {
        return Vec::new();
    };
    let mut input = Input::new(rest);
    let mut case = Case::read(&mut input);
    match mode % 8 {
        0 => overdamped(&mut case, &mut input, false),
        1 => overdamped(&mut case, &mut input, true),
        2 => underdamped(&mut case, &mut input, false),
        3 => underdamped(&mut case, &mut input, true),
        4 => ewsg(&mut case, &mut input),
        5 => agld(&mut case, &mut input, Store::Point),
        6 => agld(&mut case, &mut input, Store::Dense),
        _ => agld(&mut case, &mut input, Store::Scalar),
    }
}

langevin_fuzz::deterministic_fuzz_target!(run);
