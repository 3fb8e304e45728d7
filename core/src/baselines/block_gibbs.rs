//! Alternating block Gibbs sampling for the binary RBM.

use crate::error::LenError;
use crate::math::{FlipMath, sigmoid};
use crate::models::Rbm;
use crate::random::unit_f64;
use rand_core::Rng;

/// Alternating block Gibbs for the RBM's joint `p(x, h) ∝ exp(hᵀ W x + bᵀ x + cᵀ h)`, whose
/// visible marginal is the [`Rbm`] target: all hidden units given the visible ones
/// (independent Bernoullis with `σ(W x + c)`), then all visible units given the hidden ones
/// (`σ(Wᵀ h + b)`). The visible state is the draw; the hidden one lives in a caller buffer.
///
/// One [`sweep`](Self::sweep) reads `W` twice (by column for the visible units unless `Wᵀ` is
/// attached to the model) and draws `H + V` words of the random stream, hidden units first,
/// each unit one uniform compared with its conditional probability. Pre-activations are summed
/// in `f64` in a fixed order, so a seeded sweep gives the same bits on every platform.
///
/// It works on a raw state and does not touch the model's cache: a caller that evaluates the
/// model afterwards establishes the state with a full evaluation.
///
/// # Examples
///
/// ```
/// use langevin_core::baselines::BlockGibbs;
/// use langevin_core::models::Rbm;
/// use rand_core::SeedableRng;
///
/// let (w, b, c) = ([0.5f32, -0.5, 0.25, 1.0], [0.1f32, 0.2], [0.0f32, -0.3]);
/// let mut cache = [0.0f64; 4];
/// let rbm = Rbm::new(&w, &b, &c, &mut cache).unwrap();
/// let (mut x, mut h) = ([0u8, 1], [0u8; 2]);
/// let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
/// for _ in 0..10 {
///     BlockGibbs::sweep(&rbm, &mut x, &mut h, &mut rng).unwrap();
/// }
/// assert!(x.iter().chain(&h).all(|&v| v <= 1));
/// ```
///
/// # References
///
/// Hinton, "Training products of experts by minimizing contrastive divergence", Neural
/// Computation 2002 (the alternating sampler of the RBM).
#[derive(Clone, Copy, Debug, Default)]
pub struct BlockGibbs;

impl BlockGibbs {
    /// One sweep in place: `h ~ p(h | x)`, then `x ~ p(x | h)`. Returns how many visible units
    /// changed.
    ///
    /// # Errors
    ///
    /// [`LenError`] unless `x` has `V` entries and `hidden` has `H` (nothing is drawn then).
    #[cfg_attr(target_arch = "x86_64", inline(always))]
    pub fn sweep<M: FlipMath, R: Rng + ?Sized>(
        rbm: &Rbm<'_, M>,
        x: &mut [u8],
        hidden: &mut [u8],
        rng: &mut R,
    ) -> Result<u32, LenError> {
        let (w, b, c) = rbm.parameters();
        let v = b.len();
        LenError::check("x", v, x.len())?;
        LenError::check("hidden", c.len(), hidden.len())?;
        for ((h, &cj), row) in hidden.iter_mut().zip(c).zip(w.chunks_exact(v.max(1))) {
            let pre: f64 = f64::from(cj)
                + row
                    .iter()
                    .zip(x.iter())
                    .map(|(&wji, &xi)| f64::from(wji) * f64::from(xi))
                    .sum::<f64>();
            *h = u8::from(unit_f64(rng) < sigmoid(pre));
        }
        let mut changed = 0u32;
        let h_count = c.len();
        let wt = rbm.transpose();
        for (i, (xi, &bi)) in x.iter_mut().zip(b).enumerate() {
            let mut pre = f64::from(bi);
            match wt.and_then(|t| t.get(i * h_count..(i + 1) * h_count)) {
                Some(column) => {
                    for (&h, &wji) in hidden.iter().zip(column) {
                        if h != 0 {
                            pre += f64::from(wji);
                        }
                    }
                }
                None => {
                    let column = w.get(i..).unwrap_or(&[]).iter().step_by(v.max(1));
                    for (&h, &wji) in hidden.iter().zip(column) {
                        if h != 0 {
                            pre += f64::from(wji);
                        }
                    }
                }
            }
            let new = u8::from(unit_f64(rng) < sigmoid(pre));
            changed += u32::from(new != *xi);
            *xi = new;
        }
        Ok(changed)
    }
}
