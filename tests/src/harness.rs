//! One exactness harness for every discrete domain: the transition matrix of a kernel built from
//! the kernel's own `step`, with no closed form of its acceptance rule.
//!
//! # How the matrix is built
//!
//! Every balanced kernel of the core (binary, ordinal, categorical; DULA and DMALA) draws its
//! randomness in one documented layout: coordinate `i` reads the 32-bit lane `i` (word `i / 2`,
//! low half first), and the Metropolis uniform is the word after the last lane, `⌈d/2⌉ + 1` words
//! in all. A step is therefore a deterministic function of those words, and the harness drives it
//! with a [`ScriptedRng`] that serves chosen words:
//!
//! 1. **Proposal.** For a state `x` and a coordinate `i`, the proposed value of `x_i` is a step
//!    function of lane `i` whose pieces are intervals (inverse-CDF sampling). Bisection on the lane
//!    finds every interval exactly; its width over `2^32` is the realised proposal probability of
//!    that value. The intervals of each lane are checked to partition the lane, and no value to
//!    occur twice (which would break the interval assumption).
//! 2. **Acceptance.** For each proposal `y ≠ x`, the lanes are set inside `y`'s intervals and the
//!    last word is bisected: `step` accepts for all words below a threshold `W*`, so the realised
//!    acceptance probability is `W*/2^64`, whatever formula the kernel uses.
//! 3. `P(x → y) = Π_i |I_i(y_i)| / 2^32 · W*(x, y) / 2^64`, and `P(x → x)` is the rest of the row.
//!
//! A wrong acceptance ratio in a kernel's `step` shows up in `P` and fails detailed balance or
//! `πP = π` (see [`check_step_matrix`]); the proposal's own `log q` is never consulted.
//!
//! # Adapting to a kernel interface
//!
//! The harness sees a kernel only through [`KernelProbe`]; [`DomainProbe`] adapts any
//! [`Kernel<D>`](Kernel) of any domain to it ([`BinaryProbe`], [`OrdinalProbe`] and
//! [`CategoricalProbe`] name the three).

use langevin_core::binary::StepReport;
use langevin_core::target::Move;
use langevin_core::{Binary, Categorical, Chain, Domain, Eval, Kernel, Ordinal};
use rand_core::TryRng;
use std::convert::Infallible;
use std::marker::PhantomData;

use crate::{UNIT_ROUNDOFF_F64, normalise_log};

// ---------------------------------------------------------------------------------------------
// State spaces
// ---------------------------------------------------------------------------------------------

/// The states `{0, …, levels−1}^dim` of a small model, coordinate 0 fastest: state `k` has
/// `x_i = (k / levels^i) mod levels` (for binary models, `x_i = (k >> i) & 1`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StateSpace {
    /// Coordinates `d`.
    pub dim: usize,
    /// Values per coordinate `S`.
    pub levels: usize,
}

impl StateSpace {
    /// The number of states `S^d`.
    pub fn len(&self) -> usize {
        self.levels.pow(self.dim as u32)
    }

    /// Whether the space is empty (`S = 0`).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// State `k`.
    pub fn state(&self, mut k: usize) -> Vec<u16> {
        (0..self.dim)
            .map(|_| {
                let v = (k % self.levels) as u16;
                k /= self.levels;
                v
            })
            .collect()
    }

    /// The index of `x` (inverse of [`state`](Self::state)).
    pub fn index(&self, x: &[u16]) -> usize {
        x.iter()
            .rev()
            .fold(0, |acc, &v| acc * self.levels + usize::from(v))
    }

    /// Every state, in index order.
    pub fn all(&self) -> Vec<Vec<u16>> {
        (0..self.len()).map(|k| self.state(k)).collect()
    }
}

// ---------------------------------------------------------------------------------------------
// A scripted random stream
// ---------------------------------------------------------------------------------------------

/// A random stream that serves fixed words, and panics if a kernel draws more of them (or draws
/// 32-bit or byte outputs, which no kernel here uses): the layout is part of what is tested.
#[derive(Clone, Debug)]
pub struct ScriptedRng {
    words: Vec<u64>,
    next: usize,
}

impl ScriptedRng {
    /// A stream serving `words` in order.
    pub fn new(words: Vec<u64>) -> Self {
        Self { words, next: 0 }
    }

    /// How many words were drawn.
    pub fn drawn(&self) -> usize {
        self.next
    }
}

impl TryRng for ScriptedRng {
    type Error = Infallible;
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        panic!("a kernel drew a 32-bit output; the scripted layout assumes 64-bit words")
    }
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        let w = *self
            .words
            .get(self.next)
            .unwrap_or_else(|| panic!("a kernel drew more than {} words", self.words.len()));
        self.next += 1;
        Ok(w)
    }
    fn try_fill_bytes(&mut self, _: &mut [u8]) -> Result<(), Infallible> {
        panic!("a kernel drew bytes; the scripted layout assumes 64-bit words")
    }
}

/// A stream that returns the same word forever (all-zero words are uniforms of exactly 0,
/// all-one words uniforms just below 1).
#[derive(Clone, Copy, Debug)]
pub struct ConstRng(pub u64);

impl TryRng for ConstRng {
    type Error = Infallible;
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        Ok(self.0 as u32)
    }
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        Ok(self.0)
    }
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        dst.fill(self.0 as u8);
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// The interface the harness needs
// ---------------------------------------------------------------------------------------------

/// What one step from a given state did.
#[derive(Clone, Debug, PartialEq)]
pub struct Probe {
    /// The state the kernel proposed (the start itself when the proposal changed nothing).
    pub proposed: Vec<u16>,
    /// The state after the step.
    pub after: Vec<u16>,
    /// The kernel's report.
    pub report: StepReport,
}

/// A kernel on a small model, seen through the two operations the harness needs.
pub trait KernelProbe {
    /// The model's states.
    fn space(&self) -> StateSpace;
    /// `U(x)` from a fresh evaluation.
    fn log_density(&mut self, x: &[u16]) -> f64;
    /// Puts a chain at `x` and takes one step drawing from `rng`.
    fn step_from(&mut self, x: &[u16], rng: &mut ScriptedRng) -> Probe;
}

/// A target wrapper that remembers the last state a kernel evaluated as a proposal, so the
/// harness sees a proposal even when the step rejects it.
#[derive(Clone, Debug)]
pub struct Recording<T> {
    /// The wrapped target.
    pub inner: T,
    /// The last proposal evaluated.
    pub last: Option<Vec<u16>>,
}

impl<T> Recording<T> {
    /// Wraps `inner`.
    pub fn new(inner: T) -> Self {
        Self { inner, last: None }
    }
}

impl<D: Domain, T: Eval<D>> Eval<D> for Recording<T> {
    type Error = T::Error;
    fn dim(&self) -> usize {
        self.inner.dim()
    }
    fn states(&self) -> usize {
        self.inner.states()
    }
    fn eval(&mut self, x: &[D::Value], grad: &mut [f32]) -> Result<f64, T::Error> {
        self.inner.eval(x, grad)
    }
    fn eval_after(&mut self, mv: &Move<'_, D::Value>, grad: &mut [f32]) -> Result<f64, T::Error> {
        self.last = Some(to_u16::<D>(mv.to));
        self.inner.eval_after(mv, grad)
    }
    fn commit(&mut self) {
        self.inner.commit();
    }
}

/// Owned buffers for one chain (labels by default; `LabelBox::labels(&x0, s, g)`, or any domain
/// through `LabelBox::for_domain`).
pub type LabelBox<V = u16> = langevin_std::run::ChainVecs<V>;

/// A state of domain `D` as `u16` values.
fn to_u16<D: Domain>(x: &[D::Value]) -> Vec<u16> {
    x.iter()
        .map(|&v| {
            let v: usize = v.into();
            v as u16
        })
        .collect()
}

/// A state given as `u16` values in domain `D`'s value type.
fn from_u16<D: Domain>(x: &[u16]) -> Vec<D::Value>
where
    D::Value: TryFrom<u16>,
{
    x.iter()
        .map(|&v| {
            D::Value::try_from(v).unwrap_or_else(|_| panic!("{v} is not a value of the domain"))
        })
        .collect()
}

/// The state space of a target of domain `D`.
pub fn domain_space<D: Domain, T: Eval<D> + ?Sized>(target: &T) -> StateSpace {
    StateSpace {
        dim: target.dim(),
        levels: target.states(),
    }
}

/// `U(x)` of a target of domain `D` at a state given as `u16` values.
pub fn domain_log_density<D: Domain, T: Eval<D> + ?Sized>(target: &mut T, x: &[u16]) -> f64
where
    D::Value: TryFrom<u16>,
{
    let g = D::grad_len(x.len(), target.states()).expect("a small model");
    target
        .eval(&from_u16::<D>(x), &mut vec![0.0f32; g])
        .expect("the model evaluates")
}

/// A target of domain `D` with a kernel of that domain.
#[derive(Debug)]
pub struct DomainProbe<D, T, K> {
    /// The target, recording proposals.
    pub target: Recording<T>,
    /// The kernel.
    pub kernel: K,
    domain: PhantomData<D>,
}

/// A binary target with a binary kernel.
pub type BinaryProbe<T, K> = DomainProbe<Binary, T, K>;
/// An ordinal target with an ordinal kernel.
pub type OrdinalProbe<T, K> = DomainProbe<Ordinal, T, K>;
/// A categorical target with a categorical kernel.
pub type CategoricalProbe<T, K> = DomainProbe<Categorical, T, K>;

impl<D: Domain, T: Eval<D>, K: Kernel<D>> DomainProbe<D, T, K> {
    /// Wraps `target` and `kernel`.
    pub fn new(target: T, kernel: K) -> Self {
        Self {
            target: Recording::new(target),
            kernel,
            domain: PhantomData,
        }
    }
}

impl<D: Domain, T: Eval<D>, K: Kernel<D>> KernelProbe for DomainProbe<D, T, K>
where
    D::Value: TryFrom<u16>,
{
    fn space(&self) -> StateSpace {
        domain_space::<D, _>(&self.target)
    }
    fn log_density(&mut self, x: &[u16]) -> f64 {
        domain_log_density::<D, _>(&mut self.target, x)
    }
    fn step_from(&mut self, x: &[u16], rng: &mut ScriptedRng) -> Probe {
        let s = Eval::<D>::states(&self.target);
        let mut bufs = LabelBox::for_domain::<D>(&from_u16::<D>(x), s).expect("a small model");
        let mut chain = Chain::<D>::new(bufs.buffers(), &mut self.target).expect("valid start");
        self.target.last = None;
        let report = self
            .kernel
            .step(&mut self.target, &mut chain, rng)
            .expect("step");
        let after = to_u16::<D>(chain.state());
        Probe {
            proposed: self.target.last.take().unwrap_or_else(|| x.to_vec()),
            after,
            report,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The matrix
// ---------------------------------------------------------------------------------------------

const LANE: u64 = 1 << 32;

/// The words of one step: lane `i` in word `i / 2` (low half first), then the Metropolis word.
fn words(lanes: &[u32], accept: u64) -> Vec<u64> {
    let mut w: Vec<u64> = lanes
        .chunks(2)
        .map(|p| u64::from(p[0]) | (u64::from(p.get(1).copied().unwrap_or(0)) << 32))
        .collect();
    w.push(accept);
    w
}

/// Runs one scripted step and checks that it drew exactly the documented number of words.
fn scripted<P: KernelProbe + ?Sized>(
    probe: &mut P,
    x: &[u16],
    lanes: &[u32],
    accept: u64,
) -> Probe {
    let mut rng = ScriptedRng::new(words(lanes, accept));
    let out = probe.step_from(x, &mut rng);
    assert_eq!(
        rng.drawn(),
        lanes.len().div_ceil(2) + 1,
        "a step must draw ⌈d/2⌉ + 1 words"
    );
    out
}

/// The last word `w` of `good..=hi` for which `holds(w)`, where `holds(good)` and `holds` is
/// true on a prefix of the range (a monotone acceptance, a maximal run of one proposal): `hi`
/// if it holds there, else found by bisection.
pub fn last_word_where(mut good: u64, hi: u64, mut holds: impl FnMut(u64) -> bool) -> u64 {
    if holds(hi) {
        return hi;
    }
    let mut bad = hi;
    while bad - good > 1 {
        let mid = good + (bad - good) / 2;
        if holds(mid) {
            good = mid;
        } else {
            bad = mid;
        }
    }
    good
}

/// One value's interval of a lane: lanes `start..start + width` propose `value`.
#[derive(Clone, Copy, Debug)]
struct Piece {
    value: u16,
    start: u64,
    width: u64,
}

/// The intervals of lane `i` at state `x` (step 1 of the module documentation).
fn lane_pieces<P: KernelProbe + ?Sized>(probe: &mut P, x: &[u16], i: usize) -> Vec<Piece> {
    let d = x.len();
    let mut lanes = vec![0u32; d];
    let mut value_at = |probe: &mut P, l: u64| {
        lanes[i] = l as u32;
        scripted(probe, x, &lanes, u64::MAX).proposed[i]
    };
    let mut pieces: Vec<Piece> = Vec::new();
    let mut start = 0u64;
    while start < LANE {
        let v = value_at(probe, start);
        let good = last_word_where(start, LANE - 1, |l| value_at(probe, l) == v);
        assert!(
            pieces.iter().all(|p| p.value != v),
            "lane {i} at {x:?}: value {v} occupies two intervals"
        );
        pieces.push(Piece {
            value: v,
            start,
            width: good - start + 1,
        });
        start = good + 1;
    }
    assert_eq!(pieces.iter().map(|p| p.width).sum::<u64>(), LANE);
    pieces
}

/// The number of Metropolis words (out of `2^64`) for which the step from `x` with these lanes
/// ends at `y` (step 2 of the module documentation).
fn accepting_words<P: KernelProbe + ?Sized>(
    probe: &mut P,
    x: &[u16],
    lanes: &[u32],
    y: &[u16],
) -> u128 {
    let accepts = |probe: &mut P, w: u64| {
        let out = scripted(probe, x, lanes, w);
        assert_eq!(out.proposed, y, "the lanes must propose y");
        out.after == y
    };
    if !accepts(probe, 0) {
        return 0;
    }
    let good = last_word_where(0, u64::MAX, |w| accepts(probe, w));
    // Monotone: every word up to `good` accepts; spot-check one below.
    assert!(
        accepts(probe, good / 2),
        "acceptance is not monotone in the uniform"
    );
    u128::from(good) + 1
}

/// A transition matrix built from a kernel's `step` (see the module documentation).
#[derive(Clone, Debug)]
pub struct StepMatrix {
    /// The states.
    pub space: StateSpace,
    /// `P` row-major: `p[x·K + y] = P(x → y)`.
    pub p: Vec<f64>,
    /// `U` at each state (fresh evaluation).
    pub log_density: Vec<f64>,
    /// `π ∝ exp U`.
    pub pi: Vec<f64>,
    /// The realised proposal probability `q(y | x)`, row-major.
    pub q: Vec<f64>,
    /// The realised acceptance probability of `x → y`, row-major (1 on the diagonal).
    pub accept: Vec<f64>,
}

/// Asserts that `m` is the matrix of an exact kernel ([`check_step_matrix`]) that moves: the
/// chain stays put with probability below 0.95, so the matrix is not trivially the identity.
pub fn assert_exact(name: &str, m: &StepMatrix) {
    let c = check_step_matrix(m);
    assert!(c.passed(), "{name}: {c:?}");
    let stay: f64 = (0..m.space.len()).map(|x| m.pi[x] * m.get(x, x)).sum();
    assert!(
        stay < 0.95,
        "{name}: the chain stays put with probability {stay}"
    );
}

impl StepMatrix {
    /// The matrix of no kernel yet over `probe`'s states: `U` and `π` tabulated, `P` and `Q`
    /// zero, every acceptance 1; a builder fills it in.
    pub fn blank<P: KernelProbe + ?Sized>(probe: &mut P) -> Self {
        let space = probe.space();
        let k = space.len();
        let log_density: Vec<f64> = space.all().iter().map(|x| probe.log_density(x)).collect();
        let pi = normalise_log(&log_density);
        Self {
            space,
            p: vec![0.0; k * k],
            log_density,
            pi,
            q: vec![0.0; k * k],
            accept: vec![1.0; k * k],
        }
    }

    /// `P(x → y)`.
    pub fn get(&self, x: usize, y: usize) -> f64 {
        self.p[x * self.space.len() + y]
    }

    /// `v P` for a row vector `v`.
    pub fn left_mul(&self, v: &[f64]) -> Vec<f64> {
        let k = self.space.len();
        let mut out = vec![0.0; k];
        for (x, &vx) in v.iter().enumerate() {
            for (o, &pxy) in out.iter_mut().zip(&self.p[x * k..(x + 1) * k]) {
                *o += vx * pxy;
            }
        }
        out
    }
}

/// Builds the transition matrix of `probe`'s kernel from its `step` alone.
///
/// The cost is about `K·(d·S·32 + K·64)` steps for `K` states.
pub fn step_transition_matrix<P: KernelProbe + ?Sized>(probe: &mut P) -> StepMatrix {
    let mut m = StepMatrix::blank(probe);
    let (k, d, states) = (m.space.len(), m.space.dim, m.space.all());
    for (xi, x) in states.iter().enumerate() {
        let pieces: Vec<Vec<Piece>> = (0..d).map(|i| lane_pieces(probe, x, i)).collect();
        let mut off = 0.0f64;
        for (yi, y) in states.iter().enumerate() {
            let mut qxy = 1.0f64;
            let mut lanes = vec![0u32; d];
            for i in 0..d {
                match pieces[i].iter().find(|pc| pc.value == y[i]) {
                    Some(pc) => {
                        qxy *= pc.width as f64 / LANE as f64;
                        lanes[i] = pc.start as u32;
                    }
                    None => qxy = 0.0,
                }
            }
            m.q[xi * k + yi] = qxy;
            if yi == xi || qxy == 0.0 {
                continue;
            }
            let a = accepting_words(probe, x, &lanes, y) as f64 / 2f64.powi(64);
            m.accept[xi * k + yi] = a;
            m.p[xi * k + yi] = qxy * a;
            off += qxy * a;
        }
        m.p[xi * k + xi] = 1.0 - off;
    }
    m
}

/// Result of [`check_step_matrix`]: worst violations as multiples of their tolerance (a check
/// passes at most 1).
#[derive(Clone, Copy, Debug)]
pub struct StepCheck {
    /// `max |π_x P_xy − π_y P_yx| / tol_xy` (detailed balance).
    pub balance: f64,
    /// `max_y |(πP)_y − π_y| / tol_y`.
    pub invariance: f64,
    /// The most negative diagonal entry (a row whose moves sum above 1), as a multiple of
    /// `K·u`.
    pub negative_diagonal: f64,
}

impl StepCheck {
    /// Whether every check passed.
    pub fn passed(&self) -> bool {
        self.balance <= 1.0 && self.invariance <= 1.0 && self.negative_diagonal <= 1.0
    }
}

/// Relative tolerance of a step-built matrix: see [`check_step_matrix`].
pub const STEP_RELATIVE_TOLERANCE: f64 = 1.0 / 65_536.0;

/// Checks detailed balance and `πP = π` for a matrix built by [`step_transition_matrix`].
///
/// # Tolerance
///
/// The kernel's Metropolis ratio uses its own `f32` logits and `log q`, while the realised
/// proposal probabilities are the lane intervals. Per coordinate and direction these differ by a
/// relative `8·2^-24` at most (the `f32` rounding of the logits or weights and of the
/// logarithm), so by `2·d·8·2^-24 ≤ 2^-17` for `d ≤ 8`, and by an absolute `2^-32` per lane
/// (the interval ends are integers). The acceptance threshold adds `2^-53` (the resolution of
/// the uniform). So with `ρ = 2^-16` (twice that) and `δ = d·2^-31 + 2^-52`:
/// `|π_x P_xy − π_y P_yx| ≤ ρ·max(π_x P_xy, π_y P_yx) + δ·(π_x + π_y)`, and `(πP)_y − π_y`
/// (a sum of such differences over `x`) is bounded by the sum of their tolerances plus
/// `K·u` for the summation. A wrong acceptance ratio changes entries by a relative `O(1)`.
pub fn check_step_matrix(m: &StepMatrix) -> StepCheck {
    let k = m.space.len();
    let d = m.space.dim as f64;
    let delta = d * 2f64.powi(-31) + 2f64.powi(-52);
    let tol = |x: usize, y: usize| {
        let a = m.pi[x] * m.get(x, y);
        let b = m.pi[y] * m.get(y, x);
        (
            (a - b).abs(),
            STEP_RELATIVE_TOLERANCE * a.max(b) + delta * (m.pi[x] + m.pi[y]),
        )
    };
    let mut balance = 0.0f64;
    let mut invariance = 0.0f64;
    let pp = m.left_mul(&m.pi);
    for (y, (&ppy, &piy)) in pp.iter().zip(&m.pi).enumerate() {
        let mut budget = k as f64 * UNIT_ROUNDOFF_F64 * piy;
        for x in 0..k {
            if x == y {
                continue;
            }
            let (err, t) = tol(x, y);
            balance = balance.max(err / t);
            budget += t;
        }
        invariance = invariance.max((ppy - piy).abs() / budget);
    }
    let negative_diagonal = (0..k)
        .map(|x| -m.get(x, x) / (k as f64 * UNIT_ROUNDOFF_F64))
        .fold(0.0, f64::max);
    StepCheck {
        balance,
        invariance,
        negative_diagonal,
    }
}

/// `max_{x,y} |P_xy − R_xy| / (ρ·R_xy + δ)` for a reference matrix `r` (row-major, same order):
/// how far a step-built matrix is from a closed form, in units of the tolerance of
/// [`check_step_matrix`]. Used for kernels that are not reversible (DULA).
pub fn distance_to_reference(m: &StepMatrix, r: &[f64]) -> f64 {
    let d = m.space.dim as f64;
    let delta = d * 2f64.powi(-31) + 2f64.powi(-52);
    let k = m.space.len();
    (0..k * k)
        .map(|i| (m.p[i] - r[i]).abs() / (STEP_RELATIVE_TOLERANCE * r[i].abs() + delta))
        .fold(0.0, f64::max)
}

// ---------------------------------------------------------------------------------------------
// Kernels that draw a path of moves: one word per move, then the Metropolis word
// ---------------------------------------------------------------------------------------------

/// Runs one scripted step of a kernel drawing `words.len() − 1` move words and a Metropolis
/// word, and checks that it drew exactly those.
fn scripted_words<P: KernelProbe + ?Sized>(probe: &mut P, x: &[u16], words: &[u64]) -> Probe {
    let mut rng = ScriptedRng::new(words.to_vec());
    let out = probe.step_from(x, &mut rng);
    assert_eq!(rng.drawn(), words.len(), "a step must draw L + 1 words");
    out
}

/// The intervals of move word `k` (the other move words fixed at 0, the Metropolis word at
/// `u64::MAX`, which rejects every proposal that needs a test): maximal runs of words that
/// propose the same state. For a path kernel whose moves are independent draws from one
/// distribution, these are the moves' intervals.
fn word_pieces<P: KernelProbe + ?Sized>(
    probe: &mut P,
    x: &[u16],
    picks: usize,
    k: usize,
) -> Vec<(Vec<u16>, u64, u64)> {
    let mut words = vec![0u64; picks + 1];
    words[picks] = u64::MAX;
    let mut proposed_at = |probe: &mut P, w: u64| {
        words[k] = w;
        scripted_words(probe, x, &words).proposed
    };
    let mut pieces: Vec<(Vec<u16>, u64, u64)> = Vec::new();
    let mut start = 0u64;
    loop {
        let v = proposed_at(probe, start);
        let good = last_word_where(start, u64::MAX, |w| proposed_at(probe, w) == v);
        assert!(
            pieces.iter().all(|p| p.0 != v),
            "word {k} at {x:?}: one proposal occupies two intervals"
        );
        pieces.push((v, start, good));
        if good == u64::MAX {
            break;
        }
        start = good + 1;
    }
    pieces
}

/// Builds the transition matrix of a kernel that draws `picks` moves, one word each, then a
/// Metropolis word (the path auxiliary sampler), from its `step` alone.
///
/// The intervals of each move word are found by bisection (all move words must share them:
/// checked), every path of intervals is replayed with the Metropolis word bisected as in
/// [`step_transition_matrix`], and `P(x → y)` sums `Π_k |I_k| / 2^64 · W*/2^64` over the paths
/// that end at `y`. Cost: about `K·(n^picks·64)` steps for `n` moves per state.
pub fn path_transition_matrix<P: KernelProbe + ?Sized>(probe: &mut P, picks: usize) -> StepMatrix {
    let mut m = StepMatrix::blank(probe);
    let (k, states) = (m.space.len(), m.space.all());
    let two64 = 2f64.powi(64);
    for (xi, x) in states.iter().enumerate() {
        let pieces = word_pieces(probe, x, picks, 0);
        if picks > 1 {
            let bounds =
                |ps: &[(Vec<u16>, u64, u64)]| ps.iter().map(|p| (p.1, p.2)).collect::<Vec<_>>();
            let last = word_pieces(probe, x, picks, picks - 1);
            assert_eq!(bounds(&pieces), bounds(&last), "move words differ at {x:?}");
        }
        let n = pieces.len();
        let mut off = 0.0f64;
        let mut accepted_mass = vec![0.0f64; k];
        for code in 0..n.pow(picks as u32) {
            let mut words = vec![0u64; picks + 1];
            let mut weight = 1.0f64;
            let mut c = code;
            for w in words.iter_mut().take(picks) {
                let piece = &pieces[c % n];
                c /= n;
                *w = piece.1;
                weight *= (piece.2 - piece.1) as f64 / two64 + 1.0 / two64;
            }
            let accepts = |probe: &mut P, words: &mut Vec<u64>, u: u64| {
                words[picks] = u;
                let out = scripted_words(probe, x, words);
                (out.proposed.clone(), out.after == out.proposed)
            };
            let (y, at_zero) = accepts(probe, &mut words, 0);
            let yi = m.space.index(&y);
            m.q[xi * k + yi] += weight;
            if yi == xi || !at_zero {
                continue;
            }
            let good = last_word_where(0, u64::MAX, |u| accepts(probe, &mut words, u).1);
            assert!(
                accepts(probe, &mut words, good / 2).1,
                "acceptance is not monotone"
            );
            let a = (good as f64 + 1.0) / two64;
            accepted_mass[yi] += weight * a;
        }
        for (yi, &mass) in accepted_mass.iter().enumerate() {
            if yi != xi {
                m.p[xi * k + yi] = mass;
                off += mass;
                let qxy = m.q[xi * k + yi];
                m.accept[xi * k + yi] = if qxy > 0.0 { mass / qxy } else { 1.0 };
            }
        }
        m.p[xi * k + xi] = 1.0 - off;
    }
    m
}
