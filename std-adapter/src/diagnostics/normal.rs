//! The standard normal quantile function (Wichura's algorithm AS 241, `PPND16`).

// The coefficients are written with the digits of the publication.
#![allow(clippy::excessive_precision, clippy::unreadable_literal)]

/// Evaluates the polynomial with coefficients `c` (constant term first) at `x` by Horner's rule.
fn horner(c: &[f64; 8], x: f64) -> f64 {
    c.iter().rev().fold(0.0, |acc, &ci| acc * x + ci)
}

// Central region |p - 1/2| ≤ 0.425.
const A: [f64; 8] = [
    3.3871328727963666080,
    1.3314166789178437745e+2,
    1.9715909503065514427e+3,
    1.3731693765509461125e+4,
    4.5921953931549871457e+4,
    6.7265770927008700853e+4,
    3.3430575583588128105e+4,
    2.5090809287301226727e+3,
];
const B: [f64; 8] = [
    1.0,
    4.2313330701600911252e+1,
    6.8718700749205790830e+2,
    5.3941960214247511077e+3,
    2.1213794301586595867e+4,
    3.9307895800092710610e+4,
    2.8729085735721942674e+4,
    5.2264952788528545610e+3,
];
// Intermediate tail, r = sqrt(-ln p) ≤ 5.
const C: [f64; 8] = [
    1.42343711074968357734,
    4.63033784615654529590,
    5.76949722146069140550,
    3.64784832476320460504,
    1.27045825245236838258,
    2.41780725177450611770e-1,
    2.27238449892691845833e-2,
    7.74545014278341407640e-4,
];
const D: [f64; 8] = [
    1.0,
    2.05319162663775882187,
    1.67638483018380384940,
    6.89767334985100004550e-1,
    1.48103976427480074590e-1,
    1.51986665636164571966e-2,
    5.47593808499534494600e-4,
    1.05075007164441684324e-9,
];
// Far tail, r > 5 (p below about 1.4e-11).
const E: [f64; 8] = [
    6.65790464350110377720,
    5.46378491116411436990,
    1.78482653991729133580,
    2.96560571828504891230e-1,
    2.65321895265761230930e-2,
    1.24266094738807843860e-3,
    2.71155556874348757815e-5,
    2.01033439929228813265e-7,
];
const F: [f64; 8] = [
    1.0,
    5.99832206555887937690e-1,
    1.36929880922735805310e-1,
    1.48753612908506148525e-2,
    7.86869131145613259100e-4,
    1.84631831751005468180e-5,
    1.42151175831644588870e-7,
    2.04426310338993978564e-15,
];

/// The standard normal quantile `Φ⁻¹(p)`.
///
/// Returns `-∞` for `p = 0`, `+∞` for `p = 1` and NaN for `p` outside `[0, 1]` or NaN.
///
/// # Precision
///
/// Wichura's rational approximations (AS 241) have a relative error near `1e-16`; the tests of
/// this module check `Φ(Φ⁻¹(p)) = p` through `libm::erfc` for `p` from `1e-300` to `1 − 1e-16`,
/// with the error in `x` below `1e-14 · max(1, |x|)`.
///
/// # Examples
///
/// ```
/// use langevin_std::diagnostics::inverse_normal_cdf;
/// assert_eq!(inverse_normal_cdf(0.5), 0.0);
/// assert!((inverse_normal_cdf(0.975) - 1.959_963_984_540_054).abs() < 1e-14);
/// ```
///
/// # References
///
/// M. J. Wichura, Algorithm AS 241: The percentage points of the normal distribution, Applied
/// Statistics 37 (1988) 477–484.
pub fn inverse_normal_cdf(p: f64) -> f64 {
    if !(0.0..=1.0).contains(&p) {
        return f64::NAN;
    }
    if p == 0.0 {
        return f64::NEG_INFINITY;
    }
    if p == 1.0 {
        return f64::INFINITY;
    }
    let q = p - 0.5;
    if q.abs() <= 0.425 {
        let r = 0.180_625 - q * q;
        return q * horner(&A, r) / horner(&B, r);
    }
    let tail = if q < 0.0 { p } else { 1.0 - p };
    let r = (-tail.ln()).sqrt();
    let value = if r <= 5.0 {
        let r = r - 1.6;
        horner(&C, r) / horner(&D, r)
    } else {
        let r = r - 5.0;
        horner(&E, r) / horner(&F, r)
    };
    if q < 0.0 { -value } else { value }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn normal_cdf(x: f64) -> f64 {
        0.5 * libm::erfc(-x / core::f64::consts::SQRT_2)
    }

    #[test]
    fn round_trip_through_erfc() {
        // The error is measured in x: Δx = (Φ(x) − p) / φ(x). In the tails a relative error
        // in Φ is |x| times larger than the relative error in x, so comparing Φ values would
        // blame the quantile for the conditioning of Φ.
        let pdf = |x: f64| (-0.5 * x * x).exp() / (2.0 * core::f64::consts::PI).sqrt();
        let mut p = 1e-300;
        while p < 0.5 {
            for v in [p, 1.0 - p].into_iter().filter(|&v| v < 1.0) {
                let x = inverse_normal_cdf(v);
                // Compare in the tail that is represented exactly.
                let (got, want) = if v < 0.5 {
                    (normal_cdf(x), v)
                } else {
                    (normal_cdf(-x), 1.0 - v)
                };
                let dx = (got - want) / pdf(x);
                assert!(
                    dx.abs() <= 1e-14 * x.abs().max(1.0),
                    "p {v}: x {x}, Δx {dx}"
                );
            }
            p *= 1.37;
        }
    }

    #[test]
    fn known_values() {
        assert_eq!(inverse_normal_cdf(0.5), 0.0);
        assert!((inverse_normal_cdf(0.841_344_746_068_542_9) - 1.0).abs() < 1e-14);
        assert!((inverse_normal_cdf(0.025) + 1.959_963_984_540_054).abs() < 1e-14);
        assert!(inverse_normal_cdf(0.0).is_infinite());
        assert!(inverse_normal_cdf(1.0) > 0.0 && inverse_normal_cdf(1.0).is_infinite());
        assert!(inverse_normal_cdf(-0.1).is_nan());
        assert!(inverse_normal_cdf(f64::NAN).is_nan());
    }
}
