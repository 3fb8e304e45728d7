//! Storage formats of model weights: `f32`, and `bf16` for half the bytes.

/// A stored weight, read as the `f32` it stands for. Implemented for `f32` (itself) and
/// [`Bf16`]; the models generic over it compute with the widened values, so a model over
/// [`Bf16`] weights is exactly the model over `f32` weights equal to them.
pub trait Weight: Copy + PartialEq + core::fmt::Debug + sealed::Sealed {
    /// The weight's value in `f32` (exact for every format).
    fn to_f32(self) -> f32;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for super::Bf16 {}
}

impl Weight for f32 {
    #[inline(always)]
    fn to_f32(self) -> f32 {
        self
    }
}

/// A `bfloat16`: the upper 16 bits of an `f32` (sign, the 8-bit exponent, 7 bits of mantissa).
/// Widening to `f32` is exact (the low 16 bits are zero); [`from_f32`](Self::from_f32) rounds
/// to nearest, ties to even.
///
/// # Examples
///
/// ```
/// use langevin_core::models::{Bf16, Weight};
/// assert_eq!(Bf16::from_f32(1.0).to_f32(), 1.0);
/// // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties go to the even mantissa, 1.
/// assert_eq!(Bf16::from_f32(1.0 + 1.0 / 256.0).to_f32(), 1.0);
/// assert_eq!(Bf16::from_f32(0.1).to_f32(), 0.10009765625);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[repr(transparent)]
pub struct Bf16(pub u16);

impl Bf16 {
    /// `x` rounded to the nearest `bf16`, ties to even. Values beyond the largest finite `bf16`
    /// (about `3.39e38`) round to infinity, as in any IEEE format; a NaN stays a (quiet) NaN.
    #[inline]
    pub const fn from_f32(x: f32) -> Self {
        let bits = x.to_bits();
        if x.is_nan() {
            return Self(((bits >> 16) as u16) | 0x0040);
        }
        let round = 0x7fff + ((bits >> 16) & 1);
        Self((bits.wrapping_add(round) >> 16) as u16)
    }

    /// The value in `f32`, exactly.
    #[inline(always)]
    pub const fn to_f32(self) -> f32 {
        f32::from_bits((self.0 as u32) << 16)
    }
}

impl Weight for Bf16 {
    #[inline(always)]
    fn to_f32(self) -> f32 {
        Bf16::to_f32(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rounding to nearest, ties to even, checked against the reference rounding in `f64`
    /// (every `bf16` is an `f64`, so the nearest neighbours are found there exactly).
    #[test]
    fn rounding_is_to_nearest_even() {
        let mut x = 1.0e-38f32;
        let mut checked = 0;
        while x < 3.0e38 {
            for v in [x, -x, x * 1.000_001, x * 0.999_97] {
                let r = Bf16::from_f32(v);
                let (lo, hi) = {
                    let t = Bf16((v.to_bits() >> 16) as u16).to_f32();
                    let u = f32::from_bits((v.to_bits() & 0xffff_0000).wrapping_add(0x1_0000));
                    (t, u)
                };
                let (dl, dh) = (
                    (f64::from(v) - f64::from(lo)).abs(),
                    (f64::from(hi) - f64::from(v)).abs(),
                );
                let expected = if dl < dh || (dl == dh && (lo.to_bits() >> 16) & 1 == 0) {
                    lo
                } else {
                    hi
                };
                assert_eq!(r.to_f32().to_bits(), expected.to_bits(), "{v:e}");
                checked += 1;
            }
            x *= 1.37;
        }
        assert!(checked > 100);
        assert_eq!(Bf16::from_f32(f32::MAX).to_f32(), f32::INFINITY);
        assert!(Bf16::from_f32(f32::NAN).to_f32().is_nan());
        assert_eq!(Bf16::from_f32(-0.0).to_f32().to_bits(), (-0.0f32).to_bits());
        // Halfway cases both ways: 1 + 2^-8 goes down to 1, 1 + 3·2^-8 up to 1 + 2^-6.
        assert_eq!(Bf16::from_f32(1.0 + 1.0 / 256.0).to_f32(), 1.0);
        assert_eq!(Bf16::from_f32(1.0 + 3.0 / 256.0).to_f32(), 1.0 + 1.0 / 64.0);
    }
}
