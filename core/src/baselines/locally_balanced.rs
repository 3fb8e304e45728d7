//! The locally balanced informed proposal (LB-1) for binary and categorical states.

use crate::chain::Chain;
use crate::domain::{Binary, Categorical, Domain};
use crate::error::{LenError, StepError};
use crate::kernel::{Kernel, Rejection, StepReport, evaluate_proposal, propose_single};
use crate::random::{Pick, open_unit_f64, unit_f64};
use crate::target::Eval;
use rand_core::Rng;

/// A balancing function `φ` with `φ(t) = t φ(1/t)`, as the log-weight `log φ(e^Δ)` of a move
/// that changes `U` by `Δ`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Balancing {
    /// `φ(t) = √t`: log-weight `Δ/2`.
    Sqrt,
    /// Barker's `φ(t) = t/(1+t)`: log-weight `log σ(Δ)`.
    Barker,
}

impl Balancing {
    /// `log φ(e^Δ)`.
    #[inline]
    pub fn log_weight(self, delta: f64) -> f64 {
        match self {
            Balancing::Sqrt => 0.5 * delta,
            Balancing::Barker => -crate::math::softplus(-delta),
        }
    }

    /// The name the command line uses (`sqrt`, `barker`).
    pub fn name(self) -> &'static str {
        match self {
            Balancing::Sqrt => "sqrt",
            Balancing::Barker => "barker",
        }
    }
}

/// The single-site moves of a domain, numbered by a slot `p` in `0..slots(d, S)`: what the
/// locally balanced kernel enumerates. Implemented for [`Binary`] (slot `i` flips bit `i`) and
/// [`Categorical`] (slot `i·S + c` sets coordinate `i` to label `c`; the slot of the current
/// label is no move).
pub trait SingleSiteMoves: Domain {
    /// The number of slots for `d` coordinates of `s` values (`None` on overflow).
    fn slots(d: usize, s: usize) -> Option<usize>;
    /// The coordinate and new value of slot `p` at `x`; `None` when the slot is no move.
    fn decode(p: usize, x: &[Self::Value], s: usize) -> Option<(usize, Self::Value)>;
}

impl SingleSiteMoves for Binary {
    #[inline(always)]
    fn slots(d: usize, _s: usize) -> Option<usize> {
        Some(d)
    }
    #[inline(always)]
    fn decode(p: usize, x: &[u8], _s: usize) -> Option<(usize, u8)> {
        x.get(p).map(|&v| (p, v ^ 1))
    }
}

impl SingleSiteMoves for Categorical {
    #[inline(always)]
    fn slots(d: usize, s: usize) -> Option<usize> {
        d.checked_mul(s)
    }
    #[inline(always)]
    fn decode(p: usize, x: &[u16], s: usize) -> Option<(usize, u16)> {
        let s = s.max(1);
        let (i, c) = (p / s, (p % s) as u16);
        x.get(i).and_then(|&v| (v != c).then_some((i, c)))
    }
}

/// The locally balanced informed proposal with one change per step (Zanella 2020), exact
/// differences and a Metropolis test.
///
/// From `x`, every single-site move `y` (a flip of one bit; for labels, a new label of one
/// coordinate) is priced exactly, `Δ = U(y) − U(x)`, and picked with probability
/// `φ(e^Δ) / Z(x)`, `Z(x) = Σ_y φ(e^{Δ(y)})`; the move is accepted with probability
/// `min(1, Z(x)/Z(y))`, which is what the balancing property `φ(t) = t φ(1/t)` makes of the
/// Metropolis–Hastings ratio. Moves the target cannot evaluate (non-finite `U`, recoverable
/// errors) get weight 0.
///
/// The exact differences are target evaluations at the neighbours, so that the kernel works
/// with every target and keeps the chain's cached `U` and `∇U` exact: a step costs `2m + 1`
/// evaluations for `m` moves per state (`m = d` binary, `d(S − 1)` categorical), one more when
/// the move is rejected (the gradient at `x` is evaluated again).
///
/// The caller owns the weights buffer `W` (`[f64; N]`, `Vec<f64>`, `&mut [f64]`), of at least
/// [`weights_len`](Self::weights_len) entries. Each step draws two words of the random stream
/// (the pick, then the Metropolis uniform).
///
/// # Examples
///
/// ```
/// use langevin_core::baselines::{Balancing, LocallyBalanced};
/// use langevin_core::binary::{BinaryChain, ChainStorage, Kernel};
/// use langevin_core::models::{ConstDims, IsingLattice};
/// use rand_core::SeedableRng;
///
/// let mut model = IsingLattice::<ConstDims<4, 4>>::new(0.3, 0.1, true).unwrap();
/// let mut storage = ChainStorage::<16>::new([0; 16]);
/// let mut chain = BinaryChain::new(storage.buffers(), &mut model).unwrap();
/// let mut lb = LocallyBalanced::new(Balancing::Sqrt, [0.0f64; 16]);
/// let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(3);
/// for _ in 0..100 {
///     lb.step(&mut model, &mut chain, &mut rng).unwrap();
/// }
/// ```
///
/// # References
///
/// Zanella, "Informed proposals for local MCMC in discrete spaces", JASA 2020.
#[derive(Clone, Debug)]
pub struct LocallyBalanced<W> {
    balancing: Balancing,
    weights: W,
}

impl<W: AsMut<[f64]>> LocallyBalanced<W> {
    /// The kernel with this balancing function and weights buffer.
    pub fn new(balancing: Balancing, weights: W) -> Self {
        Self { balancing, weights }
    }

    /// The balancing function.
    pub fn balancing(&self) -> Balancing {
        self.balancing
    }

    /// The weights buffer (for a caller that sizes it to the chain it is about to step).
    pub fn weights_mut(&mut self) -> &mut W {
        &mut self.weights
    }

    /// The length the weights buffer needs for `d` coordinates of `s` values in domain `D`:
    /// `d` (binary) or `d·S` (categorical); `None` on overflow.
    pub fn weights_len<D: SingleSiteMoves>(d: usize, s: usize) -> Option<usize> {
        D::slots(d, s)
    }
}

/// `log Z` of the chain's current state: prices every single-site move into `weights` (left
/// holding `exp(log φ − max)`), returns `(max, total)` with `log Z = max + ln total`.
fn price_moves<D, T>(
    balancing: Balancing,
    target: &mut T,
    chain: &mut Chain<'_, D>,
    weights: &mut [f64],
    report: &mut StepReport,
) -> Result<(f64, f64), StepError<T::Error>>
where
    D: SingleSiteMoves,
    T: Eval<D> + ?Sized,
{
    let s = chain.states;
    crate::slices::copy(chain.x_proposal, chain.x);
    for (p, w) in weights.iter_mut().enumerate() {
        *w = match D::decode(p, chain.x, s) {
            None => f64::NEG_INFINITY,
            Some((i, v)) => {
                // The proposal buffer holds x; change coordinate i only (no O(d) copy).
                if let Some(slot) = chain.x_proposal.get_mut(i) {
                    *slot = v;
                }
                if let Some(c) = chain.changed.first_mut() {
                    *c = i as u32;
                }
                // An unusable neighbour is no rejection of the step: only count the evaluation.
                let mut probe = StepReport::proposed(false, 1, 0);
                let u = evaluate_proposal(target, chain, &mut probe)?;
                report.evaluations += probe.evaluations;
                if let (Some(slot), Some(&old)) = (chain.x_proposal.get_mut(i), chain.x.get(i)) {
                    *slot = old;
                }
                u.map_or(f64::NEG_INFINITY, |u| {
                    balancing.log_weight(u - chain.log_density)
                })
            }
        };
    }
    let m = weights
        .iter()
        .fold(f64::NEG_INFINITY, |m, &v| if v > m { v } else { m });
    let mut total = 0.0f64;
    for w in weights.iter_mut() {
        *w = libm::exp(*w - m);
        total += *w;
    }
    Ok((m, total))
}

impl<D, W> Kernel<D> for LocallyBalanced<W>
where
    D: SingleSiteMoves,
    W: AsMut<[f64]>,
{
    #[cfg_attr(target_arch = "x86_64", inline(always))]
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
        let (d, s) = chain.check_target(target)?;
        let n = D::slots(d, s).unwrap_or(usize::MAX);
        let buffer = self.weights.as_mut();
        let found = buffer.len();
        let weights = buffer.get_mut(..n).ok_or(LenError {
            buffer: "weights",
            expected: n,
            found,
        })?;
        let u_pick = unit_f64(rng);
        let log_u = libm::log(open_unit_f64(rng));
        let mut report = StepReport::proposed(false, 1, 0);

        let (m_x, total_x) = price_moves(self.balancing, target, chain, weights, &mut report)?;
        if !(total_x > 0.0 && total_x.is_finite()) {
            return Ok(report.rejected(Rejection::NonFinite));
        }
        let mut pick = Pick::new(u_pick * total_x, usize::MAX);
        for (p, &w) in weights.iter().enumerate() {
            pick.offer(p, w);
        }
        let Some((i, value)) = D::decode(pick.result().0, chain.x, s) else {
            return Ok(report.rejected(Rejection::NonFinite));
        };
        let old = chain.x.get(i).copied().unwrap_or_default();
        let log_density_x = chain.log_density;
        propose_single(chain, i, value);
        let Some(u_y) = evaluate_proposal(target, chain, &mut report)? else {
            return Ok(report);
        };

        // Price the moves from y with y current; step back to x if the test fails.
        chain.adopt_proposal(u_y);
        target.commit();
        let back = |chain: &mut Chain<'_, D>, target: &mut T, report: &mut StepReport| {
            propose_single(chain, i, old);
            let u = evaluate_proposal(target, chain, report);
            chain.adopt_proposal(log_density_x);
            target.commit();
            u
        };
        let priced = price_moves(self.balancing, target, chain, weights, &mut report);
        let (m_y, total_y) = match priced {
            Ok(z) => z,
            Err(e) => {
                let _ = back(chain, target, &mut StepReport::proposed(false, 1, 0));
                return Err(e);
            }
        };
        let log_ratio = (m_x + libm::log(total_x)) - (m_y + libm::log(total_y));
        report.log_accept_ratio = log_ratio;
        report.accepted = log_u < log_ratio;
        if !report.accepted {
            let mut restore = StepReport::proposed(false, 1, 0);
            let u = back(chain, target, &mut restore)?;
            report.evaluations += restore.evaluations;
            if u.is_none() {
                // The target no longer evaluates at x: re-establish it from scratch.
                report.evaluations += 1;
                target
                    .eval(chain.x, chain.grad)
                    .map_err(StepError::Target)?;
            }
        }
        Ok(report)
    }
}
