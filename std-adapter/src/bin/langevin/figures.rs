//! Figures that cannot mislead: how every table of the command line prints an efficiency
//! figure (ESS per second, per evaluation) beside the convergence check it depends on.
//!
//! An ESS from chains that have not mixed (R-hat above [`RHAT_LIMIT`], or R-hat undefined:
//! infinite or NaN) is not an effective sample size of the target, so every such figure
//! carries [`not_converged`]'s mark on its own line; a figure per target evaluation of a
//! sampler that evaluates no target (block-Gibbs) is `n/a`, never a division by the chains'
//! start-up evaluations.

use langevin_std::diagnostics::RHAT_LIMIT;

/// Whether `rhat` fails the check: above [`RHAT_LIMIT`], infinite or NaN.
pub fn failed(rhat: f64) -> bool {
    rhat.is_nan() || rhat > RHAT_LIMIT
}

/// The mark printed after a figure whose run has R-hat `rhat`: empty when it passes.
pub fn not_converged(rhat: f64) -> String {
    if failed(rhat) {
        format!(
            "  ! WARNING: not converged (R-hat {} > {RHAT_LIMIT})",
            rhat_text(rhat)
        )
    } else {
        String::new()
    }
}

/// R-hat as a table prints it: two decimals, `>100`, `inf` or `NaN`.
pub fn rhat_text(rhat: f64) -> String {
    if rhat.is_nan() {
        "NaN".into()
    } else if rhat.is_infinite() {
        "inf".into()
    } else if rhat >= 100.0 {
        ">100".into()
    } else {
        format!("{rhat:.3}")
    }
}

/// A figure per 10⁴ evaluations with `decimals` decimals, or `n/a` with the reason when the
/// sampler made no target evaluations (the figure is NaN then).
pub fn per_evaluation(value: f64, decimals: usize) -> String {
    if value.is_nan() {
        "n/a (the sampler evaluates no target density)".into()
    } else {
        format!("{value:.decimals$}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_rhat_marks_the_figure() {
        for r in [1.88, f64::INFINITY, f64::NAN, 1.011] {
            assert!(failed(r), "{r}");
            assert!(not_converged(r).contains("WARNING: not converged"), "{r}");
        }
        for r in [1.0, 1.01, 0.999] {
            assert!(!failed(r) && not_converged(r).is_empty(), "{r}");
        }
        assert_eq!(rhat_text(f64::INFINITY), "inf");
        assert_eq!(
            per_evaluation(f64::NAN, 2),
            "n/a (the sampler evaluates no target density)"
        );
        assert_eq!(per_evaluation(12.345, 1), "12.3");
    }
}
