//! Error lines people can read: a number of more than [`LONG`] digits (a huge value in full
//! decimal, as `{}` prints `1e300`, or a value the user typed) is shown in scientific notation
//! with at most six significant digits.

/// Digits (point excluded) from which a number is shortened.
const LONG: usize = 24;

/// `line` with every number of more than [`LONG`] digits written as `d.ddddde±n` (its first six
/// significant digits, cut, not rounded, and its decimal exponent).
pub fn compact_numbers(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].is_ascii_digit() {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        // A run of digits, optionally with one point followed by more digits.
        let start = i;
        while i < chars.len() && chars[i].is_ascii_digit() {
            i += 1;
        }
        let int_end = i;
        let mut frac_end = i;
        if i + 1 < chars.len() && chars[i] == '.' && chars[i + 1].is_ascii_digit() {
            frac_end = i + 1;
            while frac_end < chars.len() && chars[frac_end].is_ascii_digit() {
                frac_end += 1;
            }
        }
        let integer: String = chars[start..int_end].iter().collect();
        let fraction: String = if frac_end > int_end {
            chars[int_end + 1..frac_end].iter().collect()
        } else {
            String::new()
        };
        if integer.len() + fraction.len() > LONG {
            out.push_str(&scientific(&integer, &fraction));
        } else {
            out.extend(&chars[start..frac_end]);
        }
        i = frac_end;
    }
    out
}

/// `integer.fraction` as `d.ddddde±n`.
fn scientific(integer: &str, fraction: &str) -> String {
    let all: String = format!("{integer}{fraction}");
    let Some(first) = all.find(|c: char| c != '0') else {
        return "0".into();
    };
    // The exponent of the first significant digit.
    let exponent = integer.len() as i64 - 1 - first as i64;
    let digits: String = all[first..].chars().take(6).collect();
    let digits = digits.trim_end_matches('0');
    let (lead, rest) = digits.split_at(1);
    if rest.is_empty() {
        format!("{lead}e{exponent}")
    } else {
        format!("{lead}.{rest}e{exponent}")
    }
}

#[cfg(test)]
mod tests {
    use super::compact_numbers;

    #[test]
    fn long_numbers_become_scientific() {
        let huge = format!("{}", 1e300);
        assert_eq!(huge.len(), 301);
        assert_eq!(
            compact_numbers(&format!("balance must lie in (0, 1], got {huge}")),
            "balance must lie in (0, 1], got 1e300"
        );
        let typed = "9".repeat(320);
        assert_eq!(
            compact_numbers(&format!("invalid value '{typed}' for '--steps'")),
            "invalid value '9.99999e319' for '--steps'"
        );
        assert_eq!(compact_numbers(&format!("{}", 1.5e-300)), "1.5e-300");
        assert_eq!(
            compact_numbers(&format!("x = {}", 123.25e40)),
            "x = 1.2325e42"
        );
    }

    #[test]
    fn ordinary_text_is_unchanged() {
        for line in [
            "entry (0, 1) is NaN, not finite",
            "the run needs about 10.0 MB (kept draws 10.0 MB)",
            "--steps 18446744073709551615 × --repeats 10",
            "seed 123456789012345678901234",
            "1.2.3",
        ] {
            assert_eq!(compact_numbers(line), line);
        }
    }
}
