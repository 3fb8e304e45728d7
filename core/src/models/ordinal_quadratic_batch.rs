//! The ordinal quadratic model `U(x) = −½ (x−μ)ᵀ A (x−μ) + bᵀx` evaluated for many chains at
//! once.

use crate::batch::{BatchShape, adopt_row, split_cache};
use crate::domain::Ordinal;
use crate::error::{LenError, ParamError};
use crate::ordinal::{BatchTarget, OrdinalBatchMoves};

/// Columns of `A` one pass of the update covers: every chain's entries of these columns are
/// accumulated in registers over its changed rows (eight independent 4-wide sums with AVX2, so
/// that the additions' latency is hidden), and the `d × BLOCK` panel of `A` they read stays in
/// cache from one chain to the next.
const BLOCK: usize = 32;

/// A chain's move, as the update of its `A (x−μ)` reads it.
struct Moved<'m> {
    a: &'m [f64],
    d: usize,
    from: &'m [u16],
    to: &'m [u16],
    changed: &'m [u32],
}

impl Moved<'_> {
    /// `acc` (columns `start..start + W` of `A (x−μ)`) plus `A_i· · (x'_i − x_i)` over the
    /// changed `i` in order: the additions of the single-chain update, entry by entry.
    #[inline(always)]
    fn accumulate<const W: usize>(&self, mut acc: [f64; W], start: usize) -> [f64; W] {
        for &i in self.changed {
            let i = i as usize;
            let (Some(&was), Some(&is)) = (self.from.get(i), self.to.get(i)) else {
                continue;
            };
            let delta = f64::from(is) - f64::from(was);
            let at = i * self.d + start;
            let Some(row) = self.a.get(at..at + W) else {
                continue;
            };
            for (r, a) in acc.iter_mut().zip(row) {
                *r += a * delta;
            }
        }
        acc
    }
}

/// `U(x) = −½ (x−μ)ᵀ A (x−μ) + bᵀx` over `x ∈ {0, …, S−1}^d` for `n` chains at once, with
/// `∇U = −A (x−μ) + b` and `A` symmetric: a [`BatchTarget<Ordinal>`](BatchTarget).
///
/// Every chain's `A (x−μ)` is cached in `f64` (in a caller buffer) and updated over the
/// changed coordinates, `r += A_i· · (x'_i − x_i)` for each changed `i` in ascending order, then
/// `U` and `∇U` are formed from it coordinate by coordinate: the operations, and so the values
/// bit for bit, of the single-chain model that keeps the same cache (the ordinal quadratic
/// model of the standard adapter). The update runs over blocks of 32 columns of `A`, all chains
/// through one block before the next: a chain's entries of a block are summed in registers over
/// its changed rows (the order of the additions into each entry is unchanged), and the block of
/// `A` stays in cache from one chain to the next. A step costs `O(k·d)` per chain for `k`
/// changes.
///
/// # Examples
///
/// ```
/// use langevin_core::models::OrdinalQuadraticBatch;
/// use langevin_core::ordinal::{OrdinalBatch, OrdinalBatchBuffers, OrdinalBatchDmala, OrdinalProposal};
/// use langevin_core::StepReport;
/// use rand_core::SeedableRng;
///
/// let (a, mu, b) = ([1.0, 0.2, 0.2, 1.0], [2.0, 2.0], [0.0, 0.5]); // d = 2, S = 5
/// let (n, d) = (3, 2);
/// let mut cache = vec![0.0f64; 2 * n * d];
/// let mut target = OrdinalQuadraticBatch::new(&a, &mu, &b, 5, n, &mut cache).unwrap();
/// let (mut x, mut y) = (vec![0u16; n * d], vec![0u16; n * d]);
/// let (mut g, mut gy) = (vec![0.0f32; n * d], vec![0.0f32; n * d]);
/// let (mut u, mut uy, mut lq, mut lu) = (vec![0.0; n], vec![0.0; n], vec![0.0; n], vec![0.0; n]);
/// let (mut changed, mut counts, mut jumps) = (vec![0u32; n * d], vec![0u32; n], vec![0u64; n]);
/// let buffers = OrdinalBatchBuffers {
///     x: &mut x, grad: &mut g, log_density: &mut u, x_proposal: &mut y,
///     grad_proposal: &mut gy, log_density_proposal: &mut uy, changed: &mut changed,
///     counts: &mut counts, log_q: &mut lq, log_u: &mut lu, jumps: &mut jumps,
/// };
/// let mut batch = OrdinalBatch::new(buffers, &mut target).unwrap();
/// let kernel = OrdinalBatchDmala::new(OrdinalProposal::new(1.0, 0.5).unwrap());
/// let mut rngs: Vec<_> = (0..n as u64).map(rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64).collect();
/// let mut reports = vec![StepReport::default(); n];
/// for _ in 0..20 {
///     kernel.step(&mut target, &mut batch, &mut rngs, &mut reports).unwrap();
/// }
/// let x = batch.state(1);
/// let r = [f64::from(x[0]) - 2.0, f64::from(x[1]) - 2.0];
/// let expected = -0.5 * (r[0] * r[0] + 0.4 * r[0] * r[1] + r[1] * r[1]) + 0.5 * f64::from(x[1]);
/// assert!((batch.log_density(1) - expected).abs() < 1e-12);
/// ```
#[derive(Debug)]
pub struct OrdinalQuadraticBatch<'a> {
    a: &'a [f64],
    mu: &'a [f64],
    b: &'a [f64],
    states: usize,
    shape: BatchShape,
    /// The current states' `A (x−μ)`, chain by chain (`n·d`).
    current: &'a mut [f64],
    /// The proposals' `A (x−μ)` (`n·d`).
    proposal: &'a mut [f64],
}

impl<'a> OrdinalQuadraticBatch<'a> {
    /// The model of `A` (`d²` entries, row-major, symmetric), `μ` and `b` (`d` each) over
    /// `states` values, for `chains` chains; `cache` holds `2·chains·d` doubles.
    ///
    /// # Errors
    ///
    /// [`ParamError::EmptyDimension`] for `d = 0`, [`ParamError::Len`] for mismatched lengths,
    /// [`ParamError::NonFinite`] for a non-finite entry, [`ParamError::OutOfRange`] for `states`
    /// outside `2..=65535`, no chains, or an `A` that is not symmetric (named `A symmetry`,
    /// with the first row-major index `i·d + j` where `A_ij ≠ A_ji`).
    pub fn new(
        a: &'a [f64],
        mu: &'a [f64],
        b: &'a [f64],
        states: usize,
        chains: usize,
        cache: &'a mut [f64],
    ) -> Result<Self, ParamError> {
        let d = mu.len();
        if d == 0 {
            return Err(ParamError::EmptyDimension);
        }
        LenError::check("b", d, b.len())?;
        LenError::check("A", d.saturating_mul(d), a.len())?;
        for (name, v) in [("A", a), ("mu", mu), ("b", b)] {
            if v.iter().any(|x| !x.is_finite()) {
                return Err(ParamError::NonFinite(name));
            }
        }
        if let Some(k) = (0..a.len()).find(|&k| a.get(k) != a.get((k % d) * d + k / d)) {
            return Err(ParamError::OutOfRange {
                name: "A symmetry",
                value: k as f64,
            });
        }
        if !(2..=usize::from(u16::MAX)).contains(&states) {
            return Err(ParamError::OutOfRange {
                name: "states",
                value: states as f64,
            });
        }
        let shape = BatchShape::new(chains, d)?;
        let (current, proposal) = split_cache(cache, shape.len())?;
        Ok(Self {
            a,
            mu,
            b,
            states,
            shape,
            current,
            proposal,
        })
    }

    /// `U` at `x` from its `A (x−μ)` in `r`, with `∇U` into `grad`.
    #[inline(always)]
    fn finish(&self, x: &[u16], r: &[f64], grad: &mut [f32]) -> f64 {
        let mut u = 0.0;
        for ((g, (&v, &ar)), (&m, &b)) in grad
            .iter_mut()
            .zip(x.iter().zip(r))
            .zip(self.mu.iter().zip(self.b))
        {
            let r = f64::from(v) - m;
            u += -0.5 * r * ar + b * f64::from(v);
            *g = (-ar + b) as f32;
        }
        u
    }
}

impl BatchTarget<Ordinal> for OrdinalQuadraticBatch<'_> {
    type Error = LenError;

    fn dim(&self) -> usize {
        self.shape.dim
    }

    fn states(&self) -> usize {
        self.states
    }

    fn chains(&self) -> usize {
        self.shape.chains
    }

    #[inline(always)]
    fn log_density_and_grad_all(
        &mut self,
        x: &[u16],
        grad: &mut [f32],
        log_density: &mut [f64],
    ) -> Result<(), LenError> {
        self.shape.check(x.len(), grad.len(), log_density.len())?;
        let d = self.mu.len();
        let current = core::mem::take(&mut self.current);
        let rows = x
            .chunks_exact(d)
            .zip(current.chunks_exact_mut(d))
            .zip(grad.chunks_exact_mut(d).zip(log_density.iter_mut()));
        for ((x, r), (g, u)) in rows {
            for (ri, a) in r.iter_mut().zip(self.a.chunks_exact(d)) {
                *ri = a
                    .iter()
                    .zip(x.iter().zip(self.mu))
                    .map(|(a, (&v, m))| a * (f64::from(v) - m))
                    .sum();
            }
            *u = self.finish(x, r, g);
        }
        self.current = current;
        Ok(())
    }

    #[inline(always)]
    fn log_density_and_grad_after_all(
        &mut self,
        moves: &OrdinalBatchMoves<'_>,
        grad: &mut [f32],
        log_density: &mut [f64],
    ) -> Result<(), LenError> {
        self.shape
            .check_moves(moves, grad.len(), log_density.len())?;
        let d = self.mu.len();
        let mut start = 0;
        while start < d {
            // Full blocks of `BLOCK` columns, then the last columns one at a time.
            let width = if start + BLOCK <= d { BLOCK } else { 1 };
            let end = start + width;
            let rows = self
                .proposal
                .chunks_exact_mut(d)
                .zip(self.current.chunks_exact(d))
                .zip(moves.from.chunks_exact(d).zip(moves.to.chunks_exact(d)))
                .zip(moves.changed.chunks_exact(d).zip(moves.counts));
            for (((new, cur), (from, to)), (changed, &k)) in rows {
                let changed = changed.get(..k as usize).unwrap_or(&[]);
                let (Some(new), Some(cur)) = (new.get_mut(start..end), cur.get(start..end)) else {
                    continue;
                };
                let moved = Moved {
                    a: self.a,
                    d,
                    from,
                    to,
                    changed,
                };
                if k == 0 {
                    continue;
                } else if let (Ok(new), Ok(cur)) = (
                    <&mut [f64; BLOCK]>::try_from(&mut *new),
                    <&[f64; BLOCK]>::try_from(cur),
                ) {
                    *new = moved.accumulate(*cur, start);
                } else if let (Some(new), Some(&cur)) = (new.first_mut(), cur.first()) {
                    *new = moved.accumulate([cur], start)[0];
                }
            }
            start = end;
        }
        let rows = moves
            .to
            .chunks_exact(d)
            .zip(self.proposal.chunks_exact(d))
            .zip(grad.chunks_exact_mut(d))
            .zip(moves.counts.iter().zip(log_density.iter_mut()));
        for (((to, r), g), (&k, u)) in rows {
            if k > 0 {
                *u = self.finish(to, r, g);
            }
        }
        Ok(())
    }

    #[inline(always)]
    fn commit(&mut self, c: usize) {
        adopt_row(self.current, self.proposal, c, self.shape.dim);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::TestVecs;
    use crate::ordinal::{OrdinalBatch, OrdinalBatchDmala, OrdinalProposal};
    use crate::{InitError, StepReport};
    use rand_core::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;
    use std::vec;
    use std::vec::Vec;

    /// A symmetric `A`, `μ` and `b` of dimension `d`.
    fn model(d: usize) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
        let mut a = vec![0.0; d * d];
        for i in 0..d {
            for j in 0..=i {
                let v = if i == j {
                    1.0
                } else {
                    ((i * 31 + j * 17) % 13) as f64 * 0.01 - 0.06
                };
                a[i * d + j] = v;
                a[j * d + i] = v;
            }
        }
        let mu = (0..d).map(|i| 1.0 + (i % 3) as f64).collect();
        let b = (0..d).map(|i| (i as f64 * 0.7).sin() * 0.3).collect();
        (a, mu, b)
    }

    /// `U` by its definition.
    fn direct(a: &[f64], mu: &[f64], b: &[f64], x: &[u16]) -> f64 {
        let d = mu.len();
        let r: Vec<f64> = x.iter().zip(mu).map(|(&v, m)| f64::from(v) - m).collect();
        let mut u = 0.0;
        for i in 0..d {
            for j in 0..d {
                u -= 0.5 * r[i] * a[i * d + j] * r[j];
            }
            u += b[i] * f64::from(x[i]);
        }
        u
    }

    /// After many batched DMALA steps (panels narrower than `d`, so several passes), every
    /// chain's cached `U` and `∇U` are those of its state.
    #[test]
    fn cached_values_follow_the_states() {
        let (d, n, s) = (603, 3, 6);
        let (a, mu, b) = model(d);
        let mut cache = vec![0.0; 2 * n * d];
        let mut t = OrdinalQuadraticBatch::new(&a, &mu, &b, s, n, &mut cache).unwrap();
        let x: Vec<u16> = (0..n * d).map(|k| (k * 7 % s) as u16).collect();
        let mut vecs = TestVecs::new(x, d);
        let mut batch = OrdinalBatch::new(vecs.buffers(), &mut t).unwrap();
        let kernel = OrdinalBatchDmala::new(OrdinalProposal::new(0.05, 0.5).unwrap());
        let mut rngs: Vec<_> = (0..n as u64)
            .map(Xoshiro256PlusPlus::seed_from_u64)
            .collect();
        let report = StepReport::proposed(false, 0, 0);
        let mut reports = vec![report; n];
        let mut accepted = 0;
        for _ in 0..30 {
            kernel
                .step(&mut t, &mut batch, &mut rngs, &mut reports)
                .unwrap();
            accepted += reports
                .iter()
                .filter(|r| r.accepted && r.proposed_flips > 0)
                .count();
        }
        assert!(accepted > 5, "the test must see moves: {accepted}");
        for c in 0..n {
            let x = batch.state(c);
            let want = direct(&a, &mu, &b, x);
            let got = batch.log_density(c);
            assert!(
                (got - want).abs() < 1e-8 * (1.0 + want.abs()),
                "{got} vs {want}"
            );
            for i in 0..d {
                let ar: f64 = (0..d)
                    .map(|j| a[i * d + j] * (f64::from(x[j]) - mu[j]))
                    .sum();
                assert!((f64::from(batch.grad(c)[i]) - (b[i] - ar)).abs() < 1e-4);
            }
        }
    }

    #[test]
    fn refuses_bad_parameters_and_buffers() {
        let (a, mu, b) = model(3);
        let mut cache = vec![0.0; 12];
        let new = |a: &[f64], s, n, cache: &mut [f64]| {
            OrdinalQuadraticBatch::new(a, &mu, &b, s, n, cache).map(|_| ())
        };
        assert!(new(&a, 4, 2, &mut cache).is_ok());
        assert!(matches!(
            new(&a, 4, 2, &mut cache[..11]),
            Err(ParamError::Len(_))
        ));
        assert!(matches!(
            new(&a[..8], 4, 2, &mut cache),
            Err(ParamError::Len(_))
        ));
        for (s, n) in [(1, 2), (70_000, 2), (4, 0)] {
            assert!(matches!(
                new(&a, s, n, &mut cache),
                Err(ParamError::OutOfRange { .. })
            ));
        }
        let mut skew = a.clone();
        skew[1] += 0.5;
        assert!(matches!(
            new(&skew, 4, 2, &mut cache),
            Err(ParamError::OutOfRange {
                name: "A symmetry",
                value
            }) if value == 1.0
        ));
        skew[1] = f64::NAN;
        assert!(matches!(
            new(&skew, 4, 2, &mut cache),
            Err(ParamError::NonFinite("A"))
        ));
        assert!(matches!(
            OrdinalQuadraticBatch::new(&[], &[], &[], 4, 2, &mut cache),
            Err(ParamError::EmptyDimension)
        ));
        // Wrong lengths and out-of-range states are typed errors, not panics.
        let mut t = OrdinalQuadraticBatch::new(&a, &mu, &b, 4, 2, &mut cache).unwrap();
        let (mut g, mut u) = (vec![0.0f32; 6], vec![0.0; 2]);
        assert!(t.log_density_and_grad_all(&[0; 5], &mut g, &mut u).is_err());
        let mut vecs = TestVecs::new(vec![0u16, 1, 2, 3, 4, 0], 3);
        assert!(matches!(
            OrdinalBatch::new(vecs.buffers(), &mut t),
            Err(InitError::StateOutOfRange { index: 4, value: 4 })
        ));
    }
}
