//! Online chain statistics: counts and running means, no heap.

use crate::binary::StepReport;
use crate::error::LenError;

/// Running totals of step reports.
///
/// # Examples
///
/// ```
/// use langevin_core::stats::ChainStats;
/// let stats = ChainStats::default();
/// assert_eq!(stats.acceptance_rate(), 0.0);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChainStats {
    /// Steps recorded.
    pub steps: u64,
    /// Steps whose proposal was adopted.
    pub accepted: u64,
    /// Sum of proposed flips.
    pub proposed_flips: u64,
    /// Sum of flips that took effect.
    pub accepted_flips: u64,
    /// Proposals rejected because they were invalid (non-finite or a target error).
    pub invalid: u64,
    /// Target evaluations (log-density with gradient).
    pub evaluations: u64,
}

impl ChainStats {
    /// Adds one step.
    #[inline]
    pub fn record(&mut self, report: &StepReport) {
        self.steps += 1;
        self.accepted += u64::from(report.accepted);
        self.proposed_flips += u64::from(report.proposed_flips);
        self.accepted_flips += u64::from(report.accepted_flips());
        self.invalid += u64::from(report.rejection.is_some());
        self.evaluations += u64::from(report.evaluations);
    }

    /// Adds another chain's totals.
    pub fn merge(&mut self, other: &ChainStats) {
        self.steps += other.steps;
        self.accepted += other.accepted;
        self.proposed_flips += other.proposed_flips;
        self.accepted_flips += other.accepted_flips;
        self.invalid += other.invalid;
        self.evaluations += other.evaluations;
    }

    /// Fraction of steps accepted (0 before any step).
    pub fn acceptance_rate(&self) -> f64 {
        ratio(self.accepted, self.steps)
    }

    /// Mean proposed flips per step.
    pub fn mean_proposed_flips(&self) -> f64 {
        ratio(self.proposed_flips, self.steps)
    }

    /// Mean flips per step that took effect.
    pub fn mean_accepted_flips(&self) -> f64 {
        ratio(self.accepted_flips, self.steps)
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

/// Running per-coordinate means of discrete draws, kept as exact integer sums in a caller
/// buffer.
#[derive(Debug)]
pub struct RunningMeans<'a> {
    sums: &'a mut [u64],
    count: u64,
}

impl<'a> RunningMeans<'a> {
    /// Starts empty, zeroing `sums`.
    pub fn new(sums: &'a mut [u64]) -> Self {
        sums.fill(0);
        Self { sums, count: 0 }
    }

    /// Adds one draw.
    ///
    /// # Errors
    ///
    /// [`LenError`] if `x` has another length than the buffer; nothing is recorded then.
    pub fn record<T: Copy + Into<u64>>(&mut self, x: &[T]) -> Result<(), LenError> {
        LenError::check("x", self.sums.len(), x.len())?;
        for (s, &v) in self.sums.iter_mut().zip(x) {
            *s += v.into();
        }
        self.count += 1;
        Ok(())
    }

    /// Draws recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The mean of coordinate `i` (0 before any draw or out of range).
    pub fn mean(&self, i: usize) -> f64 {
        self.sums.get(i).map_or(0.0, |&s| ratio(s, self.count))
    }
}
