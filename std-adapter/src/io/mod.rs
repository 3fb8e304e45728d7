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

pub mod input;
pub mod npy;
pub mod output;

pub use output::{
    OutputError, PathClash, Prepared, Rendering, StreamedFile, WriteError, check_distinct,
    clean_up_on_signals, is_stdout, prepare, render, resolve_links, sweep_leftovers, write_all,
    write_all_with, write_atomically,
};

use npy::{NpyData, NpyError, npy_header, write_npy_to};
use std::fmt;
use std::path::Path;

/// How a [`DrawsFile`] stores each value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DrawDtype {
    /// `|u1`: binary states and labels below 256.
    U8,
    /// `<i4`: labels from 256 up.
    I32,
    /// `<f4`: continuous draws.
    F32,
}

impl DrawDtype {
    /// The `.npy` dtype string.
    pub fn descr(self) -> &'static str {
        match self {
            DrawDtype::U8 => "|u1",
            DrawDtype::I32 => "<i4",
            DrawDtype::F32 => "<f4",
        }
    }

    /// Bytes per value.
    pub fn size(self) -> usize {
        match self {
            DrawDtype::U8 => 1,
            DrawDtype::I32 | DrawDtype::F32 => 4,
        }
    }
}

/// The `.npy` file of the kept draws of a run, shape `(chains, kept, d)`, streamed: its header
/// is written first, then each chain's draws at their offsets as the chain produces them, in
/// any order and from any thread. The finished file is byte for byte what
/// [`npy_bytes`] gives for the same draws.
#[derive(Debug)]
pub struct DrawsFile {
    file: StreamedFile,
    header: u64,
    shape: [usize; 3],
    dtype: DrawDtype,
}

impl DrawsFile {
    /// Creates the temporary file for `path` ([`StreamedFile`]) with the header of a
    /// `(chains, kept, d)` array of `dtype`.
    ///
    /// # Errors
    ///
    /// [`WriteError`] naming the path when the file cannot be created or written, or its
    /// size overflows.
    pub fn create(path: &Path, shape: [usize; 3], dtype: DrawDtype) -> Result<Self, WriteError> {
        let fail = |source| WriteError {
            path: path.to_path_buf(),
            source,
        };
        let header =
            npy_header(&shape, dtype.descr()).map_err(|e| fail(std::io::Error::other(e)))?;
        let data = shape
            .iter()
            .try_fold(dtype.size() as u64, |n, &s| n.checked_mul(s as u64));
        let len = data.and_then(|n| n.checked_add(header.len() as u64));
        let len = len.ok_or_else(|| {
            fail(std::io::Error::new(
                std::io::ErrorKind::FileTooLarge,
                "the draws overflow 2^64 bytes",
            ))
        })?;
        let file = StreamedFile::create(path, len)?;
        file.write_at(0, &header).map_err(fail)?;
        Ok(Self {
            file,
            header: header.len() as u64,
            shape,
            dtype,
        })
    }

    /// The shape `(chains, kept, d)`.
    pub fn shape(&self) -> [usize; 3] {
        self.shape
    }

    /// Writes draws `first..` of `chain` (whole draws, flat), each value as `f64` converts it
    /// to the file's dtype.
    fn write_values(&self, chain: usize, first: usize, values: &[f64]) -> std::io::Result<()> {
        let mut bytes = Vec::with_capacity(values.len() * self.dtype.size());
        for &v in values {
            match self.dtype {
                DrawDtype::U8 => bytes.push(v as u8),
                DrawDtype::I32 => bytes.extend_from_slice(&(v as i32).to_le_bytes()),
                DrawDtype::F32 => bytes.extend_from_slice(&(v as f32).to_le_bytes()),
            }
        }
        self.write_bytes(chain, first, &bytes)
    }

    /// Writes encoded draws `first..` of `chain`.
    fn write_bytes(&self, chain: usize, first: usize, bytes: &[u8]) -> std::io::Result<()> {
        let [_, kept, d] = self.shape;
        let value = (chain as u64 * kept as u64 + first as u64) * d as u64;
        let offset = self.header + value * self.dtype.size() as u64;
        self.file.write_at(offset, bytes)
    }

    /// Writes `f32` draws `first..` of `chain` (a `<f4` file).
    ///
    /// # Errors
    ///
    /// The file system's error.
    pub fn write_f32(&self, chain: usize, first: usize, values: &[f32]) -> std::io::Result<()> {
        let mut bytes = Vec::with_capacity(values.len() * 4);
        for v in values {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
        self.write_bytes(chain, first, &bytes)
    }

    /// Reads back the `f32` values `start..start + out.len()` of the array (flat, C order) of
    /// a `<f4` file.
    ///
    /// # Errors
    ///
    /// The file system's error.
    pub fn read_f32(&self, start: usize, out: &mut [f32]) -> std::io::Result<()> {
        let mut bytes = vec![0u8; out.len() * 4];
        self.file
            .read_at(self.header + start as u64 * 4, &mut bytes)?;
        for (o, b) in out.iter_mut().zip(bytes.chunks_exact(4)) {
            *o = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        }
        Ok(())
    }

    /// The finished file, for [`write_all_with`].
    pub fn into_file(self) -> StreamedFile {
        self.file
    }
}

impl crate::run::DrawSink<u8> for DrawsFile {
    fn write(&self, chain: usize, first: usize, draws: &[u8]) -> std::io::Result<()> {
        match self.dtype {
            DrawDtype::U8 => self.write_bytes(chain, first, draws),
            _ => {
                let values: Vec<f64> = draws.iter().map(|&v| f64::from(v)).collect();
                self.write_values(chain, first, &values)
            }
        }
    }
}

impl crate::run::DrawSink<u16> for DrawsFile {
    fn write(&self, chain: usize, first: usize, draws: &[u16]) -> std::io::Result<()> {
        let bytes: Vec<u8> = match self.dtype {
            DrawDtype::U8 => draws.iter().map(|&v| v as u8).collect(),
            DrawDtype::I32 => draws
                .iter()
                .flat_map(|&v| i32::from(v).to_le_bytes())
                .collect(),
            DrawDtype::F32 => draws
                .iter()
                .flat_map(|&v| f32::from(v).to_le_bytes())
                .collect(),
        };
        self.write_bytes(chain, first, &bytes)
    }
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

/// Parses JSON text into a [`serde_json::Value`] whose numbers hold exactly the values their
/// digits denote: serde_json's default parse is best-effort for long mantissas (one unit in the
/// last place off at times), which a summary read back and written again must not be. Each
/// number read is replaced by the correctly rounded value of its digits.
///
/// # Errors
///
/// The parse error of serde_json.
///
/// # Examples
///
/// ```
/// let v = langevin_std::io::parse_json_exact(r#"{"x": [-2.1981602824624322]}"#).unwrap();
/// assert_eq!(v["x"][0].as_f64(), Some(-2.1981602824624322));
/// ```
pub fn parse_json_exact(text: &str) -> Result<serde_json::Value, serde_json::Error> {
    let mut value: serde_json::Value = serde_json::from_str(text)?;
    // Every number token: the value serde_json gives it, and the correctly rounded one.
    let mut exact = std::collections::HashMap::new();
    let bytes = text.as_bytes();
    let (mut i, mut in_string) = (0, false);
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        if b == b'"' {
            in_string = true;
            i += 1;
            continue;
        }
        if b == b'-' || b.is_ascii_digit() {
            let start = i;
            while i < bytes.len()
                && matches!(bytes[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
            {
                i += 1;
            }
            let token = &text[start..i];
            if let (Ok(loose), Ok(right)) =
                (serde_json::from_str::<f64>(token), token.parse::<f64>())
                && loose.to_bits() != right.to_bits()
            {
                exact.insert(loose.to_bits(), right);
            }
            continue;
        }
        i += 1;
    }
    if !exact.is_empty() {
        fix_numbers(&mut value, &exact);
    }
    Ok(value)
}

/// Replaces each float of `value` found in `exact` (by its bits).
fn fix_numbers(value: &mut serde_json::Value, exact: &std::collections::HashMap<u64, f64>) {
    match value {
        serde_json::Value::Number(n) if n.is_f64() => {
            if let Some(right) = n.as_f64().and_then(|f| exact.get(&f.to_bits()))
                && let Some(number) = serde_json::Number::from_f64(*right)
            {
                *n = number;
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(|v| fix_numbers(v, exact)),
        serde_json::Value::Object(map) => map.values_mut().for_each(|v| fix_numbers(v, exact)),
        _ => {}
    }
}

/// Draws of several chains as CSV: a header `chain,draw,x_0,..,x_{d-1}`, then one draw per line,
/// chains in order, draws in order.
pub fn csv_draws<T: Copy + fmt::Display>(chains: &[&[T]], d: usize) -> Vec<u8> {
    csv_draws_from(chains, d, 0)
}

/// [`csv_draws`] of the chains `first..` (a shard): chain `c` of `chains` is numbered
/// `first + c`.
pub fn csv_draws_from<T: Copy + fmt::Display>(chains: &[&[T]], d: usize, first: usize) -> Vec<u8> {
    use std::fmt::Write as _;
    let mut text = String::from("chain,draw");
    for i in 0..d {
        let _ = write!(text, ",x_{i}");
    }
    text.push('\n');
    for (c, chain) in chains.iter().enumerate() {
        for (t, draw) in chain.chunks_exact(d.max(1)).enumerate() {
            let _ = write!(text, "{},{t}", first + c);
            for &x in draw {
                let _ = write!(text, ",{x}");
            }
            text.push('\n');
        }
    }
    text.into_bytes()
}
