//! Files in and out: `.npy` arrays, draws as CSV, summaries as JSON, and writes that leave
//! each file whole or not at all.
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

use npy::{NpyData, NpyError, write_npy_to};
use std::fmt;
use std::path::{Path, PathBuf};

/// A file that could not be written.
#[derive(Debug)]
pub struct WriteError {
    /// The file.
    pub path: PathBuf,
    /// Why.
    pub source: std::io::Error,
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.source)
    }
}

impl std::error::Error for WriteError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// Writes `bytes` to `path` through a temporary file in the same folder and a rename, so a
/// failed write never leaves a partial file behind.
///
/// # Errors
///
/// [`WriteError`] when `path` names no file, or the write or the rename fails.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    let fail = |source| WriteError {
        path: path.to_path_buf(),
        source,
    };
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
    let name = path
        .file_name()
        .ok_or_else(|| fail(std::io::Error::other("not a file name")))?;
    let tmp = dir
        .map(|d| d.join(format!(".{}.partial", name.to_string_lossy())))
        .unwrap_or_else(|| format!(".{}.partial", name.to_string_lossy()).into());
    std::fs::write(&tmp, bytes).map_err(fail)?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        fail(e)
    })
}

/// Writes every file atomically; if one fails, removes those already written.
///
/// # Errors
///
/// The first [`WriteError`].
pub fn write_all<P: AsRef<Path>>(files: &[(P, Vec<u8>)]) -> Result<(), WriteError> {
    for (k, (path, bytes)) in files.iter().enumerate() {
        if let Err(e) = write_atomically(path.as_ref(), bytes) {
            for (written, _) in files.iter().take(k) {
                let _ = std::fs::remove_file(written);
            }
            return Err(e);
        }
    }
    Ok(())
}

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
