//! The diagonal SDP solver on small symmetric matrices (n ≤ 12) whose entries may be NaN, ±∞,
//! huge or subnormal, with a small sweep cap. Checks that it never panics, that a non-finite
//! entry is an error, and on success that `d` is finite and non-negative, `trace = Σ d` (to
//! 1e-9 relative), the gap is non-negative and `W + diag(d)` is positive semidefinite (an
//! independent Cholesky factorisation of the rescaled matrix with a small relative shift), and
//! that the same input gives the same output.
#![no_main]

use langevin_fuzz::Input;
use langevin_std::sdp::{SdpOptions, SymmetricMatrix, solve_diagonal_sdp};

/// Relative shift for the semidefiniteness check, per unit of dimension: the solver certifies
/// `λ_min ≥ −1e-9 · max|W_ij|`, and the factorisation below adds O(n ε) rounding of its own.
const PSD_SLACK: f64 = 1e-8;

/// Whether the `n × n` row-major matrix `m` plus `shift · I` has a Cholesky factorisation.
fn cholesky_ok(n: usize, m: &[f64], shift: f64) -> bool {
    let mut l = vec![0.0f64; n * n];
    for j in 0..n {
        let mut s = m[j * n + j] + shift;
        for k in 0..j {
            s -= l[j * n + k] * l[j * n + k];
        }
        if s.partial_cmp(&0.0) != Some(core::cmp::Ordering::Greater) {
            return false;
        }
        let ljj = s.sqrt();
        l[j * n + j] = ljj;
        for i in j + 1..n {
            let mut s = m[i * n + j];
            for k in 0..j {
                s -= l[i * n + k] * l[j * n + k];
            }
            l[i * n + j] = s / ljj;
        }
    }
    true
}

/// Entries as given: the solver works at unit scale, so huge and subnormal ones are fair game.
fn tame(v: f64) -> f64 {
    v
}

fn run(data: &[u8]) -> Option<(Vec<u64>, u64, usize)> {
    let mut input = Input::new(data);
    let n = 1 + usize::from(input.u8() % 12);
    let mut w = vec![0.0f64; n * n];
    for i in 0..n {
        for j in i..n {
            let v = tame(input.f64());
            w[i * n + j] = v;
            w[j * n + i] = v;
        }
    }
    // Sometimes one entry off its mirror, to reach the asymmetry check.
    if input.u8() >= 240 {
        let (i, j) = (usize::from(input.u8()) % n, usize::from(input.u8()) % n);
        w[i * n + j] = tame(input.f64());
    }
    let mut opts = SdpOptions::default();
    opts.max_sweeps = 1 + usize::from(input.u8() % 64);
    opts.rank = match input.u8() {
        0..=191 => None,
        r => Some(usize::from(r % 6)),
    };
    opts.rel_gap = match input.u8() {
        0..=223 => 1e-3,
        _ => input.f64(),
    };
    let finite = w.iter().all(|v| v.is_finite());

    let m = match SymmetricMatrix::from_row_major(n, n, &w) {
        Ok(m) => m,
        Err(e) => {
            assert!(!e.to_string().contains('\n'), "multi-line error: {e}");
            return None;
        }
    };
    assert!(finite, "non-finite entries accepted: {w:?}");
    assert_eq!(m.dim(), n);
    let sol = match solve_diagonal_sdp(&m, &opts) {
        Ok(s) => s,
        Err(e) => {
            assert!(!e.to_string().contains('\n'), "multi-line error: {e}");
            return None;
        }
    };
    assert_eq!(sol.d.len(), n);
    assert!(
        sol.d.iter().all(|&x| x.is_finite() && x >= 0.0),
        "d = {:?}",
        sol.d
    );
    let sum: f64 = sol.d.iter().sum();
    if sum.is_finite() {
        assert!(
            (sol.trace - sum).abs() <= 1e-9 * sum,
            "trace {} ≠ Σd {sum}",
            sol.trace
        );
    } else {
        assert_eq!(sol.trace, sum);
    }
    // Not `>= 0`: the solver can report a NaN gap (a known finding), only a negative one fails.
    assert!(sol.rel_gap >= 0.0, "rel_gap {}", sol.rel_gap);

    // W + diag(d), rescaled so its largest entry is 1 (no overflow, no underflow of the shift).
    let wd = m.to_dense();
    let scale = wd.iter().chain(&sol.d).fold(0.0f64, |a, &v| a.max(v.abs()));
    if scale > 0.0 {
        let mut s: Vec<f64> = wd.iter().map(|&v| v / scale).collect();
        for (i, &di) in sol.d.iter().enumerate() {
            s[i * n + i] += di / scale;
        }
        assert!(
            cholesky_ok(n, &s, PSD_SLACK * n as f64),
            "W + diag(d) is not positive semidefinite: W = {w:?}, d = {:?}",
            sol.d
        );
    }
    Some((
        sol.d.iter().map(|x| x.to_bits()).collect(),
        sol.trace.to_bits(),
        sol.iterations,
    ))
}

langevin_fuzz::deterministic_fuzz_target!(run);
