//! Run-time choice of the instruction set for the per-chain hot loops.
//!
//! On x86-64 a chain's step runs inside a function compiled for AVX2 and FMA when the processor
//! has them (the x86-64-v3 level, detected once per process by the `pulp` crate, which also
//! holds the one unsafe call this needs), and as portable code otherwise. The hot code a step
//! calls (kernel, proposal, target evaluation) is inlined into that function, so it is compiled
//! for those instructions there. Values do not change: the compiler never fuses a multiply and
//! an add on its own, so both paths do the same operations in the same order, and draws are
//! bit-identical either way.
//!
//! The environment variable `LANGEVIN_SIMD=portable` forces the portable path (any other value,
//! or none, lets the processor decide). [`path`] says which one runs.

use std::sync::OnceLock;

/// The environment variable that can force the portable path.
pub const ENV: &str = "LANGEVIN_SIMD";

/// The code path that runs the per-chain hot loops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SimdPath {
    /// Compiled for AVX2 and FMA (x86-64 processors of the x86-64-v3 level).
    Avx2Fma,
    /// Compiled for the baseline of the target.
    Portable,
}

impl SimdPath {
    /// `"avx2+fma"` or `"portable"`, as the run summaries name it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Avx2Fma => "avx2+fma",
            Self::Portable => "portable",
        }
    }
}

/// The path this process runs: decided once, from [`ENV`] and the processor's features.
pub fn path() -> SimdPath {
    static PATH: OnceLock<SimdPath> = OnceLock::new();
    *PATH.get_or_init(detect)
}

/// `Portable` when [`ENV`] is `portable` or the processor lacks AVX2 or FMA.
fn detect() -> SimdPath {
    if std::env::var_os(ENV).is_some_and(|v| v == "portable") {
        return SimdPath::Portable;
    }
    match pulp::Arch::new() {
        pulp::Arch::Scalar => SimdPath::Portable,
        #[allow(unreachable_patterns)]
        _ => SimdPath::Avx2Fma,
    }
}

/// The `pulp` dispatcher of [`path`].
fn arch() -> pulp::Arch {
    match path() {
        SimdPath::Portable => pulp::Arch::Scalar,
        SimdPath::Avx2Fma => pulp::Arch::new(),
    }
}

/// Work that runs on the path of [`path`] through [`dispatch`]: a chain's step.
pub(crate) trait HotLoop {
    /// What the work returns.
    type Output;
    /// Does the work. Implementations are `#[inline(always)]`, and so is the hot code they
    /// call: only code inlined into the AVX2/FMA function is compiled for those instructions.
    fn run(&mut self) -> Self::Output;
}

/// Runs `work` on the path of [`path`]: inside a function compiled for AVX2 and FMA when that
/// is the path, directly otherwise.
#[inline(always)]
pub(crate) fn dispatch<H: HotLoop + ?Sized>(work: &mut H) -> H::Output {
    arch().dispatch(Run(work))
}

/// A [`HotLoop`] as `pulp` work.
struct Run<'a, H: ?Sized>(&'a mut H);

impl<H: HotLoop + ?Sized> pulp::WithSimd for Run<'_, H> {
    type Output = H::Output;

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) -> H::Output {
        self.0.run()
    }
}

/// `work.run()` without a dispatch of its own, for work whose parts dispatch themselves (the
/// binary kernels, each on its own).
#[inline(always)]
pub(crate) fn direct<H: HotLoop + ?Sized>(work: &mut H) -> H::Output {
    work.run()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sum of squares, in order.
    struct Squares<'a>(&'a [f32]);

    impl HotLoop for Squares<'_> {
        type Output = f32;
        #[inline(always)]
        fn run(&mut self) -> f32 {
            self.0.iter().fold(0.0f32, |a, &b| a + b * b)
        }
    }

    #[test]
    fn the_path_is_named_and_dispatch_returns_the_value() {
        assert!(["avx2+fma", "portable"].contains(&path().name()));
        let v: Vec<f32> = (0..100).map(|i| i as f32 * 0.5).collect();
        let sum = dispatch(&mut Squares(&v));
        let plain = v.iter().fold(0.0f32, |a, &b| a + b * b);
        assert_eq!(sum.to_bits(), plain.to_bits());
    }
}
