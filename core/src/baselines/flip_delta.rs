//! The optional single-flip capability of binary targets.

use crate::target::BinaryTarget;

/// A binary target that can price a single flip cheaply, for single-site samplers (Gibbs) on a
/// raw state.
///
/// # Contract
///
/// `x` is the model's current state: the last one established by
/// [`log_density_and_grad`](BinaryTarget::log_density_and_grad), a committed move, or
/// [`commit_flip`](Self::commit_flip). Models with caches (a quadratic's gradient, an RBM's
/// hidden pre-activations) read them; models without read `x`.
pub trait FlipDelta: BinaryTarget {
    /// `U(x with bit i flipped) − U(x)`.
    ///
    /// # Errors
    ///
    /// As for [`log_density_and_grad`](BinaryTarget::log_density_and_grad).
    fn log_density_delta(&mut self, x: &[u8], i: usize) -> Result<f64, Self::Error>;

    /// Bit `i` of the current state was flipped; `x` (already flipped) is now current.
    fn commit_flip(&mut self, x: &[u8], i: usize) {
        let _ = (x, i);
    }
}

impl<T: FlipDelta + ?Sized> FlipDelta for &mut T {
    fn log_density_delta(&mut self, x: &[u8], i: usize) -> Result<f64, Self::Error> {
        (**self).log_density_delta(x, i)
    }
    fn commit_flip(&mut self, x: &[u8], i: usize) {
        (**self).commit_flip(x, i)
    }
}
