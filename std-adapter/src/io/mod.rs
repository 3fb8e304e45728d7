//! Files in and out: `.npy` arrays, draws as CSV, summaries as JSON, and writes that leave
//! each file whole or not at all, never replace an input, a link or a special file, and take
//! `-` for standard output (the rules: [`output`]).
//!
//! # Examples
//!
//! ```
//! use langevin_std::io::csv_draws;
//! let chains: [&[u8]; 2] = [&[0, 1, 1, 1], &[1, 0]];
//! let text = String::from_utf8(csv_draws(&chains, 2)).unwrap();
//! assert_eq!(text, "chain,draw,x_0,x_1\n0,0,0,1\n0,1,1,1\n1,0,1,0\n");
//! ```

pub mod npy;
pub mod output;

pub use output::{
    PathClash, WriteError, check_distinct, is_stdout, resolve_links, write_all, write_atomically,
};

use npy::{NpyData, NpyError, write_npy_to};
use std::fmt;

/// An `.npy` array in memory.
///
/// # Errors
///
/// [`NpyError`] when the shape does not match the data.
pub fn npy_bytes(shape: &[usize], data: &NpyData) -> Result<Vec<u8>, NpyError> {
    let mut bytes = Vec::new();
    write_npy_to(&mut bytes, shape, data)?;
    Ok(bytes)
}

/// Pretty JSON with a trailing newline.
///
/// # Errors
///
/// Serialisation errors of `serde_json`.
pub fn json_bytes(value: &impl serde::Serialize) -> Result<Vec<u8>, serde_json::Error> {
    let mut bytes = serde_json::to_vec_pretty(value)?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// Draws of several chains as CSV: a header `chain,draw,x_0,..,x_{d-1}`, then one draw per line,
/// chains in order, draws in order.
pub fn csv_draws<T: Copy + fmt::Display>(chains: &[&[T]], d: usize) -> Vec<u8> {
    use std::fmt::Write as _;
    let mut text = String::from("chain,draw");
    for i in 0..d {
        let _ = write!(text, ",x_{i}");
    }
    text.push('\n');
    for (c, chain) in chains.iter().enumerate() {
        for (t, draw) in chain.chunks_exact(d.max(1)).enumerate() {
            let _ = write!(text, "{c},{t}");
            for &x in draw {
                let _ = write!(text, ",{x}");
            }
            text.push('\n');
        }
    }
    text.into_bytes()
}
