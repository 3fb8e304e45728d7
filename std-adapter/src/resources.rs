//! Memory a run will need, estimated with checked arithmetic before anything is allocated, and
//! the cap it must stay under.
//!
//! The default cap is half of the machine's memory (`MemTotal` of `/proc/meminfo`; 8 GiB where
//! that cannot be read); a command's `--max-memory` replaces it. An estimate that overflows 64
//! bits is refused like one above the cap, so no request from the command line reaches a
//! capacity overflow or an allocation abort.
//!
//! # Examples
//!
//! ```
//! use langevin_std::resources::{MemoryBudget, parse_size};
//! let budget = MemoryBudget::with_limit(parse_size("1M").unwrap());
//! assert!(budget.check(&[("kept draws", Some(1000))]).is_ok());
//! let e = budget.check(&[("kept draws", Some(10_000_000))]).unwrap_err();
//! assert!(e.to_string().contains("kept draws 10.0 MB"));
//! assert!(budget.check(&[("kept draws", None)]).is_err());
//! ```

use std::fmt;

/// The share of the machine's memory a run may use unless told otherwise.
pub const DEFAULT_FRACTION: f64 = 0.5;
/// The cap when the machine's memory cannot be read: 8 GiB.
pub const FALLBACK_LIMIT: u64 = 8 << 30;

/// Where a cap came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitSource {
    /// `--max-memory`.
    Given,
    /// [`DEFAULT_FRACTION`] of this much machine memory.
    Machine(u64),
    /// The machine's memory is unknown: [`FALLBACK_LIMIT`].
    Fallback,
}

/// A cap on the memory of one run, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryBudget {
    /// The cap.
    pub limit: u64,
    /// Where it came from.
    pub source: LimitSource,
}

impl MemoryBudget {
    /// `limit` bytes, as given by the user.
    pub fn with_limit(limit: u64) -> Self {
        Self {
            limit,
            source: LimitSource::Given,
        }
    }

    /// The given cap, or the default: [`DEFAULT_FRACTION`] of the machine's memory.
    pub fn new(given: Option<u64>) -> Self {
        match (given, machine_memory()) {
            (Some(limit), _) => Self::with_limit(limit),
            (None, Some(total)) => Self {
                limit: (total as f64 * DEFAULT_FRACTION) as u64,
                source: LimitSource::Machine(total),
            },
            (None, None) => Self {
                limit: FALLBACK_LIMIT,
                source: LimitSource::Fallback,
            },
        }
    }

    /// Checks an estimate given as named parts (`None`: the part overflows 64 bits).
    ///
    /// # Errors
    ///
    /// [`MemoryError`] naming the parts when their sum overflows or exceeds the cap.
    pub fn check(&self, parts: &[(&str, Option<u64>)]) -> Result<u64, MemoryError> {
        let total = parts
            .iter()
            .try_fold(0u64, |sum, (_, part)| sum.checked_add((*part)?));
        let describe = |(name, part): &(&str, Option<u64>)| match part {
            Some(b) => format!("{name} {}", human(*b)),
            None => format!("{name} beyond 2^64 bytes"),
        };
        let error = || MemoryError {
            needed: total,
            budget: *self,
            parts: parts.iter().map(describe).collect(),
        };
        match total {
            Some(t) if t <= self.limit => Ok(t),
            _ => Err(error()),
        }
    }
}

/// A run refused because its memory would exceed the cap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryError {
    /// Bytes needed (`None`: beyond 2^64).
    pub needed: Option<u64>,
    /// The cap.
    pub budget: MemoryBudget,
    /// Each part with its size, as text.
    pub parts: Vec<String>,
}

impl fmt::Display for MemoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.needed {
            Some(n) => write!(f, "the run needs about {}", human(n))?,
            None => f.write_str("the run needs more than 2^64 bytes")?,
        }
        write!(f, " ({})", self.parts.join(", "))?;
        write!(f, ", above the limit of {}", human(self.budget.limit))?;
        match self.budget.source {
            LimitSource::Given => f.write_str(" (--max-memory)")?,
            LimitSource::Machine(total) => {
                write!(f, " (half of the machine's {})", human(total))?;
            }
            LimitSource::Fallback => f.write_str(" (the default when memory is unknown)")?,
        }
        f.write_str(
            "; ask for less (fewer or shorter chains, more thinning, a smaller model) or raise \
             --max-memory",
        )
    }
}

impl std::error::Error for MemoryError {}

/// The product of `factors`, `None` on overflow.
pub fn product(factors: &[u64]) -> Option<u64> {
    factors.iter().try_fold(1u64, |p, &f| p.checked_mul(f))
}

/// `MemTotal` of `/proc/meminfo` in bytes, where the system has it (read once per process).
pub fn machine_memory() -> Option<u64> {
    static TOTAL: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
    *TOTAL.get_or_init(read_machine_memory)
}

fn read_machine_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// Why [`parse_size`] refused a text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SizeError {
    /// The text does not start with a number.
    #[error("`{0}` is not a size (e.g. 4G, 512M, 100000)")]
    NotANumber(String),
    /// The number is followed by something other than a known unit.
    #[error("`{text}`: unknown unit `{unit}` (K, M, G, T, Ki, Mi, Gi, Ti)")]
    UnknownUnit {
        /// The whole text.
        text: String,
        /// What follows the number.
        unit: String,
    },
    /// Below one byte, or 2^64 bytes or more.
    #[error("`{0}` must be at least one byte and below 2^64")]
    OutOfRange(String),
}

/// A size such as `4G`, `512M`, `1.5GB`, `2GiB` or `100000` (bytes). `K`, `M`, `G`, `T` are
/// powers of 1000 with or without `B`; `Ki`, `Mi`, `Gi`, `Ti` powers of 1024.
///
/// # Errors
///
/// [`SizeError`] for anything else, zero, or 2^64 bytes or more.
pub fn parse_size(text: &str) -> Result<u64, SizeError> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| SizeError::NotANumber(text.to_owned()))?;
    let scale: f64 = match unit.trim().trim_end_matches(['B', 'b']) {
        "" => 1.0,
        "K" | "k" => 1e3,
        "M" | "m" => 1e6,
        "G" | "g" => 1e9,
        "T" | "t" => 1e12,
        "Ki" | "ki" => 1024.0,
        "Mi" | "mi" => 1024.0 * 1024.0,
        "Gi" | "gi" => 1024.0 * 1024.0 * 1024.0,
        "Ti" | "ti" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => {
            return Err(SizeError::UnknownUnit {
                text: text.to_owned(),
                unit: unit.to_owned(),
            });
        }
    };
    let bytes = value * scale;
    if !(1.0..18_446_744_073_709_551_615.0).contains(&bytes) {
        return Err(SizeError::OutOfRange(text.to_owned()));
    }
    Ok(bytes as u64)
}

/// A byte count for people, with at least two significant digits before the point: `200.0 GB`,
/// `5000.0 MB`, `1001 B`.
pub fn human(bytes: u64) -> String {
    let b = bytes as f64;
    for (unit, scale) in [("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)] {
        if b >= 10.0 * scale {
            return format!("{:.1} {unit}", b / scale);
        }
    }
    format!("{bytes} B")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("100000"), Ok(100_000));
        assert_eq!(parse_size("4G"), Ok(4_000_000_000));
        assert_eq!(parse_size("1.5GB"), Ok(1_500_000_000));
        assert_eq!(parse_size("2GiB"), Ok(2 << 30));
        assert_eq!(parse_size("512Mi"), Ok(512 << 20));
        for bad in ["", "G", "-1", "0", "4X", "1e30", "99999999999T"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn budgets_refuse_overflow_and_excess() {
        let b = MemoryBudget::with_limit(1000);
        assert_eq!(b.check(&[("a", Some(400)), ("b", Some(600))]), Ok(1000));
        let e = b.check(&[("a", Some(400)), ("b", Some(601))]).unwrap_err();
        assert_eq!(e.needed, Some(1001));
        let text = e.to_string();
        assert!(
            text.contains("a 400 B, b 601 B") && text.contains("1000 B"),
            "{text}"
        );
        assert!(b.check(&[("a", Some(u64::MAX)), ("b", Some(1))]).is_err());
        assert!(b.check(&[("a", product(&[u64::MAX, 2]))]).is_err());
        assert_eq!(product(&[3, 4, 5]), Some(60));
        assert!(MemoryBudget::new(None).limit > 0);
    }
}
