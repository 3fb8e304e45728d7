//! The Hamming-ball block sampler for binary states.

use super::gibbs::draw_softmax;
use crate::chain::Chain;
use crate::domain::Binary;
use crate::error::{LenError, ParamError, StepError};
use crate::kernel::{Kernel, StepReport, evaluate_proposal};
use crate::random::{index, unit_f64};
use crate::target::Eval;
use rand_core::Rng;

/// The largest block [`HammingBall`] accepts.
pub const MAX_BLOCK: usize = 32;

/// The largest radius [`HammingBall`] accepts: with [`MAX_BLOCK`] a ball holds at most
/// `1 + 32 + 496 + 4960 = 5489` states, each one target evaluation.
pub const MAX_RADIUS: usize = 3;

/// The subsets of at most `r` of `k` positions, by size, then in lexicographic order: the
/// order in which a ball's states are numbered.
#[derive(Clone, Copy, Debug)]
struct Subsets {
    k: usize,
    r: usize,
    size: usize,
    pos: [usize; MAX_RADIUS],
}

impl Subsets {
    /// Starts at the empty subset.
    fn new(k: usize, r: usize) -> Self {
        Self {
            k,
            r: r.min(MAX_RADIUS),
            size: 0,
            pos: [0; MAX_RADIUS],
        }
    }

    /// The current subset.
    fn current(&self) -> &[usize] {
        self.pos.get(..self.size).unwrap_or(&[])
    }

    /// Moves to the next subset; `false` after the last.
    fn advance(&mut self) -> bool {
        let (k, size) = (self.k, self.size);
        // The rightmost position that can still move right.
        let mut j = size;
        while j > 0 {
            j -= 1;
            let limit = k.saturating_sub(size - j);
            if let Some(p) = self.pos.get_mut(j)
                && *p < limit
            {
                *p += 1;
                let first = *p;
                for (n, q) in self.pos.iter_mut().enumerate().take(size).skip(j + 1) {
                    *q = first + (n - j);
                }
                return true;
            }
        }
        if size >= self.r || size >= k {
            return false;
        }
        self.size = size + 1;
        for (n, q) in self.pos.iter_mut().enumerate() {
            *q = n;
        }
        true
    }
}

/// `Σ_{j ≤ r} C(k, j)`, the number of states within Hamming distance `r` of a point of
/// `{0,1}^k` (saturating).
pub fn ball_size(k: usize, r: usize) -> usize {
    let (mut total, mut c) = (1usize, 1usize);
    for j in 1..=r.min(k) {
        c = c.saturating_mul(k + 1 - j) / j;
        total = total.saturating_add(c);
    }
    total
}

/// Words in [`HammingBall::save_words`].
pub const HAMMING_BALL_WORDS: usize = 1;

/// The Hamming-ball sampler (Titsias and Yau 2017): a Gibbs sampler on the state and an
/// auxiliary point `u`, one block of coordinates at a time.
///
/// The coordinates are cut into blocks of `k` (the last one shorter), updated in turn. For the
/// block `B`, with `r' = min(r, |B|)`:
///
/// 1. draw `u` uniformly among the states that equal `x` off `B` and differ from `x` in at most
///    `r'` coordinates of `B`;
/// 2. draw the new state from `π` restricted to the states that equal `u` off `B` and differ
///    from `u` in at most `r'` coordinates of `B`, by enumerating all
///    [`ball_size`]`(|B|, r')` of them.
///
/// Both draws are exact conditionals of the joint `π(x) · 1[d(x, u) ≤ r'] / |ball|`, so every
/// update leaves `π` invariant and nothing is rejected; a block update is reversible. States
/// the target cannot evaluate (non-finite `U`, recoverable errors) get weight 0; the current
/// state is always in the second ball, so there is always something to draw.
///
/// A step costs one evaluation per state of the ball (the current state's is cached) and one
/// more at the new state for its gradient. It draws two words of the random stream (`u`'s
/// index by [`index`], then the uniform of the draw). The caller owns the log-weights buffer
/// `W`, of at least [`weights_len`](Self::weights_len) entries.
///
/// # Examples
///
/// ```
/// use langevin_core::baselines::HammingBall;
/// use langevin_core::binary::{BinaryChain, ChainStorage, Kernel};
/// use langevin_core::models::{ConstDims, IsingLattice};
/// use rand_core::SeedableRng;
///
/// let mut model = IsingLattice::<ConstDims<4, 4>>::new(0.3, 0.1, true).unwrap();
/// let mut storage = ChainStorage::<16>::new([0; 16]);
/// let mut chain = BinaryChain::new(storage.buffers(), &mut model).unwrap();
/// // Blocks of 4, radius 2: 11 states per ball.
/// let mut hb = HammingBall::new(2, 4, [0.0f64; 11]).unwrap();
/// let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(3);
/// for _ in 0..100 {
///     hb.step(&mut model, &mut chain, &mut rng).unwrap();
/// }
/// ```
///
/// # References
///
/// Titsias and Yau, "The Hamming ball sampler", JASA 2017.
#[derive(Clone, Debug)]
pub struct HammingBall<W> {
    radius: usize,
    block: usize,
    next: usize,
    weights: W,
}

impl<W: AsMut<[f64]>> HammingBall<W> {
    /// The sampler with radius `r` and blocks of `k` coordinates; the first step updates the
    /// block at coordinate 0.
    ///
    /// # Errors
    ///
    /// [`ParamError::OutOfRange`] unless `1 ≤ k ≤` [`MAX_BLOCK`] and `1 ≤ r ≤`
    /// `min(k,` [`MAX_RADIUS`]`)`.
    pub fn new(radius: usize, block: usize, weights: W) -> Result<Self, ParamError> {
        if !(1..=MAX_BLOCK).contains(&block) {
            return Err(ParamError::OutOfRange {
                name: "Hamming-ball block (1 to 32)",
                value: block as f64,
            });
        }
        if !(1..=MAX_RADIUS.min(block)).contains(&radius) {
            return Err(ParamError::OutOfRange {
                name: "Hamming-ball radius (1 to min(3, block))",
                value: radius as f64,
            });
        }
        Ok(Self {
            radius,
            block,
            next: 0,
            weights,
        })
    }

    /// The radius `r`.
    pub fn radius(&self) -> usize {
        self.radius
    }

    /// The block length `k`.
    pub fn block(&self) -> usize {
        self.block
    }

    /// The first coordinate of the block the next step updates (0 when the last step ended
    /// the sweep).
    pub fn next_block(&self) -> usize {
        self.next
    }

    /// The sampler with the next step updating the block that starts at `start` (a multiple
    /// of `k` below `d`; any other value restarts the sweep at coordinate 0).
    pub fn with_next_block(mut self, start: usize) -> Self {
        self.next = if start.is_multiple_of(self.block) {
            start
        } else {
            0
        };
        self
    }

    /// What the sampler changes as it steps (the block the next step updates), as words: what
    /// a checkpoint saves so that [`HammingBall::restore_words`] on a sampler built from the
    /// same settings continues bit for bit.
    pub fn save_words(&self) -> [u64; HAMMING_BALL_WORDS] {
        [self.next as u64]
    }

    /// Puts back a state [`HammingBall::save_words`] returned.
    ///
    /// # Errors
    ///
    /// [`ParamError::OutOfRange`] for a block start that is not a multiple of `k` (the sampler
    /// is then unchanged).
    pub fn restore_words(&mut self, words: &[u64; HAMMING_BALL_WORDS]) -> Result<(), ParamError> {
        let [next] = *words;
        match usize::try_from(next) {
            Ok(start) if start.is_multiple_of(self.block) => {
                self.next = start;
                Ok(())
            }
            _ => Err(ParamError::OutOfRange {
                name: "saved Hamming-ball block start",
                value: next as f64,
            }),
        }
    }

    /// The length the weights buffer needs: [`ball_size`]`(k, r)`.
    pub fn weights_len(&self) -> usize {
        ball_size(self.block, self.radius)
    }

    /// The weights buffer (for a caller that sizes it before stepping).
    pub fn weights_mut(&mut self) -> &mut W {
        &mut self.weights
    }
}

/// Flips, in the proposal buffer, the block positions in the symmetric difference of `a` and
/// `b` (sorted subsets of block offsets), listing them in the chain's `changed` buffer in
/// increasing order; returns how many.
fn flip_difference(chain: &mut Chain<'_, Binary>, start: usize, a: &[usize], b: &[usize]) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0);
    loop {
        let (pa, pb) = (a.get(i).copied(), b.get(j).copied());
        let p = match (pa, pb) {
            (None, None) => return n,
            (Some(x), Some(y)) if x == y => {
                i += 1;
                j += 1;
                continue;
            }
            (Some(x), Some(y)) if x < y => {
                i += 1;
                x
            }
            (Some(x), None) => {
                i += 1;
                x
            }
            (_, Some(y)) => {
                j += 1;
                y
            }
        };
        let c = start + p;
        if let Some(v) = chain.x_proposal.get_mut(c) {
            *v ^= 1;
        }
        if let Some(slot) = chain.changed.get_mut(n) {
            *slot = c as u32;
        }
        n += 1;
    }
}

impl<W: AsMut<[f64]>> Kernel<Binary> for HammingBall<W> {
    #[cfg_attr(target_arch = "x86_64", inline(always))]
    fn step<T, R>(
        &mut self,
        target: &mut T,
        chain: &mut Chain<'_, Binary>,
        rng: &mut R,
    ) -> Result<StepReport, StepError<T::Error>>
    where
        T: Eval<Binary> + ?Sized,
        R: Rng + ?Sized,
    {
        let (d, _) = chain.check_target(target)?;
        let start = if self.next < d { self.next } else { 0 };
        let k = self.block.min(d - start);
        let r = self.radius.min(k);
        let m = ball_size(k, r);
        let buffer = self.weights.as_mut();
        let found = buffer.len();
        let weights = buffer.get_mut(..m).ok_or(LenError {
            buffer: "weights",
            expected: m,
            found,
        })?;
        // The last block ends the sweep: the next step starts again at coordinate 0.
        self.next = if start + k < d { start + k } else { 0 };
        let t = index(rng, m);
        let u_draw = unit_f64(rng);

        // The offsets where u differs from x.
        let mut to_u = Subsets::new(k, r);
        for _ in 0..t {
            to_u.advance();
        }
        let to_u = to_u;
        let mut report = StepReport::proposed(true, 0, 0);
        crate::slices::copy(chain.x_proposal, chain.x);
        let (mut ball, mut s, mut keep) = (Subsets::new(k, r), 0usize, 0usize);
        loop {
            let n = flip_difference(chain, start, to_u.current(), ball.current());
            let log_weight = if n == 0 {
                keep = s;
                chain.log_density
            } else {
                // An unusable state is no rejection of the step: only count the evaluation.
                let mut probe = StepReport::proposed(false, n, 0);
                let u = evaluate_proposal(target, chain, &mut probe)?;
                report.evaluations += probe.evaluations;
                u.unwrap_or(f64::NEG_INFINITY)
            };
            if let Some(w) = weights.get_mut(s) {
                *w = log_weight;
            }
            flip_difference(chain, start, to_u.current(), ball.current());
            s += 1;
            if !ball.advance() {
                break;
            }
        }

        let chosen = draw_softmax(weights, u_draw, keep);
        let mut pick = Subsets::new(k, r);
        for _ in 0..chosen {
            pick.advance();
        }
        let n = flip_difference(chain, start, to_u.current(), pick.current());
        report.proposed_flips = n as u32;
        let Some(u_new) = evaluate_proposal(target, chain, &mut report)? else {
            // Nothing changes (n = 0), or the target no longer evaluates the state it priced.
            return Ok(report);
        };
        report.log_accept_ratio = u_new - chain.log_density;
        chain.adopt_proposal(u_new);
        target.commit();
        Ok(report)
    }
}
