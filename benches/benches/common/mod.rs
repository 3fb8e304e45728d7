//! Pieces shared by the benches: owned buffers of a binary chain, random starts, and the
//! effective sample size of the ESS tables (the tests' own).

#![allow(dead_code, unused_imports, reason = "each bench uses a part")]

use langevin_core::random::fill_normal;
pub use langevin_std::run::ChainVecs;
/// Geyer's initial-monotone-sequence ESS of one series, as the tests compute it.
pub use langevin_tests::discrete::ess;
use rand_core::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// Owned buffers of a binary chain (`BinBuf::new(&x0)`).
pub type BinBuf = ChainVecs<u8>;

/// Buffers for a chain starting at a uniform random state.
pub fn random_buffers(d: usize, rng: &mut Xoshiro256PlusPlus) -> BinBuf {
    BinBuf::new(&random_bits(d, rng))
}

/// `d` uniform random bits, one `u32` draw each.
pub fn random_bits(d: usize, rng: &mut Xoshiro256PlusPlus) -> Vec<u8> {
    (0..d).map(|_| (rng.next_u32() >> 31) as u8).collect()
}

/// The dense random binary quadratic model `U = xᵀW₀x + bᵀx` of the second-order benches,
/// drawn from `rng`: `W₀` i.i.d. normal over `√d`, `b` normal.
pub struct DenseQuadratic {
    /// `W₀`, row-major `d × d`.
    pub w0: Vec<f32>,
    /// `b`.
    pub bias: Vec<f32>,
    /// The Hessian `W₀ + W₀ᵀ` of the quadratic extension, row-major.
    pub hessian: Vec<f64>,
}

impl DenseQuadratic {
    /// A model of dimension `d`.
    pub fn random(d: usize, rng: &mut Xoshiro256PlusPlus) -> Self {
        let mut g = vec![0.0; d * d + d];
        fill_normal(rng, &mut g);
        let scale = 1.0 / (d as f64).sqrt();
        let w0: Vec<f32> = g[..d * d].iter().map(|&v| (v * scale) as f32).collect();
        let bias = g[d * d..].iter().map(|&v| v as f32).collect();
        let hessian = (0..d * d)
            .map(|k| f64::from(w0[k]) + f64::from(w0[(k % d) * d + k / d]))
            .collect();
        Self { w0, bias, hessian }
    }
}
