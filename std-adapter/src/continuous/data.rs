//! Reading covariates and responses from `.npy` (through [`crate::io::npy`]) or CSV, and writing
//! `f32` samples as `.npy`.

use super::{ContinuousError, DataFileError, ModelDataError};
use crate::io::input::{InputError, read_limited};
use crate::resources::MemoryBudget;
use std::path::Path;

/// An array read from a file: row-major values and its shape (1-D arrays have one entry).
#[derive(Debug)]
pub(crate) struct Array {
    pub(crate) shape: Vec<usize>,
    pub(crate) values: Vec<f64>,
}

/// `problem` of the data or model file `path`.
pub(super) fn data_err(path: &Path, problem: impl Into<DataFileError>) -> ContinuousError {
    ContinuousError::Data {
        path: path.to_path_buf(),
        problem: problem.into(),
    }
}

/// Why the data or model file `path` could not be read or parsed as an input.
pub(super) fn input_err(path: &Path, e: InputError) -> ContinuousError {
    match e {
        InputError::Io { source, .. } => ContinuousError::Io {
            path: path.to_path_buf(),
            source,
        },
        InputError::Json(e) => data_err(path, e),
        InputError::Memory { error, .. } => data_err(path, error),
        e => ModelDataError::Input(e).into(),
    }
}

fn read_bytes(path: &Path, budget: &MemoryBudget) -> Result<Vec<u8>, ContinuousError> {
    read_limited(path, budget).map_err(|e| input_err(path, e))
}

fn is_npy(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("npy"))
}

/// A matrix from `.npy` (2-D; a 1-D array is one column) or CSV: `(rows, cols, row-major)`.
pub(crate) fn load_matrix(
    path: &Path,
    budget: &MemoryBudget,
) -> Result<(usize, usize, Vec<f64>), ContinuousError> {
    let a = if is_npy(path) {
        read_npy_f64(path, budget)?
    } else {
        read_csv(path, budget)?
    };
    match a.shape.as_slice() {
        [n] => Ok((*n, 1, a.values)),
        [n, d] => Ok((*n, *d, a.values)),
        s => Err(data_err(
            path,
            DataFileError::Shape {
                expected: "a 1-D or 2-D array",
                shape: s.to_vec(),
            },
        )),
    }
}

/// A vector from `.npy` (1-D, or 2-D with one row or one column) or CSV (one column or one row).
pub(crate) fn load_vector(path: &Path, budget: &MemoryBudget) -> Result<Vec<f64>, ContinuousError> {
    let a = if is_npy(path) {
        read_npy_f64(path, budget)?
    } else {
        read_csv(path, budget)?
    };
    match a.shape.as_slice() {
        [_] | [_, 1] | [1, _] => Ok(a.values),
        s => Err(data_err(
            path,
            DataFileError::Shape {
                expected: "a vector",
                shape: s.to_vec(),
            },
        )),
    }
}

/// Parses a CSV file of numbers. A first line with a non-numeric field is a header; blank
/// lines are skipped; every row must have the same number of fields. The file's length is
/// checked against `budget` before it is read, and its values (at most one per comma and line,
/// in `f64`, with their vector's spare capacity) before they are parsed.
pub(crate) fn read_csv(path: &Path, budget: &MemoryBudget) -> Result<Array, ContinuousError> {
    let bytes = read_bytes(path, budget)?;
    let fields = 1 + bytes.iter().filter(|&&c| c == b',' || c == b'\n').count() as u64;
    budget
        .check(&[
            ("the CSV text", Some(bytes.len() as u64)),
            ("its values", fields.checked_mul(16)),
        ])
        .map_err(|e| data_err(path, e))?;
    let csv = |error| ContinuousError::Csv {
        path: path.to_path_buf(),
        error,
    };
    let text = String::from_utf8(bytes).map_err(|_| csv(CsvError::NotUtf8))?;
    parse_csv(&text).map_err(csv)
}

/// Why a CSV data file is not a table of numbers ([`ContinuousError::Csv`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CsvError {
    /// The text is not UTF-8.
    #[error("CSV is not UTF-8")]
    NotUtf8,
    /// A field after the first row that is not a number.
    #[error("line {line}: {source}")]
    NotANumber {
        /// The line (from 1).
        line: usize,
        /// Why the field does not read as a number.
        source: std::num::ParseFloatError,
    },
    /// A row whose number of fields differs from the first row's.
    #[error("line {line} has {fields} fields, expected {expected}")]
    Ragged {
        /// The line (from 1).
        line: usize,
        /// Its fields.
        fields: usize,
        /// The first row's fields.
        expected: usize,
    },
    /// No row of numbers.
    #[error("no numeric rows")]
    NoRows,
}

fn parse_csv(text: &str) -> Result<Array, CsvError> {
    let mut values = Vec::new();
    let mut cols = None;
    let mut rows = 0usize;
    for (ln, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        let parsed: Result<Vec<f64>, _> = fields.iter().map(|f| f.parse::<f64>()).collect();
        let row = match parsed {
            Ok(r) => r,
            Err(_) if rows == 0 && cols.is_none() => {
                cols = Some(fields.len());
                continue;
            }
            Err(source) => {
                return Err(CsvError::NotANumber {
                    line: ln + 1,
                    source,
                });
            }
        };
        match cols {
            Some(c) if c != row.len() => {
                return Err(CsvError::Ragged {
                    line: ln + 1,
                    fields: row.len(),
                    expected: c,
                });
            }
            _ => cols = Some(row.len()),
        }
        values.extend(row);
        rows += 1;
    }
    let cols = cols.unwrap_or(0);
    if rows == 0 {
        return Err(CsvError::NoRows);
    }
    let shape = if cols == 1 {
        vec![rows]
    } else {
        vec![rows, cols]
    };
    Ok(Array { shape, values })
}

/// Reads a numeric `.npy` file (C order, little-endian), converted to `f64`.
pub(crate) fn read_npy_f64(path: &Path, budget: &MemoryBudget) -> Result<Array, ContinuousError> {
    let array = crate::io::npy::read_npy_within(path, budget).map_err(|e| match e {
        crate::io::npy::NpyError::Input(e) => ModelDataError::Input(e).into(),
        e => data_err(path, e),
    })?;
    Ok(Array {
        shape: array.shape,
        values: array.data.to_f64(),
    })
}

/// Writes a C-ordered little-endian `f32` `.npy`.
pub(crate) fn write_npy_f32(
    path: &Path,
    shape: &[usize],
    values: &[f32],
) -> Result<(), ContinuousError> {
    crate::io::npy::write_npy(path, shape, &crate::io::npy::NpyData::F32(values.to_vec()))
        .map_err(|e| data_err(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_with_header_and_ragged() {
        let a = parse_csv("a,b\n1, 2\n\n3,4\n").unwrap();
        assert_eq!(a.shape, [2, 2]);
        assert_eq!(a.values, [1.0, 2.0, 3.0, 4.0]);
        assert_eq!(
            parse_csv("1,2\n3\n").unwrap_err(),
            CsvError::Ragged {
                line: 2,
                fields: 1,
                expected: 2
            }
        );
        assert_eq!(parse_csv("x\n").unwrap_err(), CsvError::NoRows);
        let e = parse_csv("1\nx\n").unwrap_err();
        assert!(matches!(e, CsvError::NotANumber { line: 2, .. }), "{e:?}");
        assert_eq!(e.to_string(), "line 2: invalid float literal");
        assert_eq!(parse_csv("1\n0\n1\n").unwrap().shape, [3]);
    }

    #[test]
    fn npy_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.npy");
        write_npy_f32(&p, &[2, 2], &[1.0, 2.0, 3.0, 4.5]).unwrap();
        let a = read_npy_f64(&p, &MemoryBudget::new(None)).unwrap();
        assert_eq!(a.shape, [2, 2]);
        assert_eq!(a.values, [1.0, 2.0, 3.0, 4.5]);
    }

    #[test]
    fn arrays_of_the_wrong_shape_or_size_are_refused_by_kind() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.npy");
        write_npy_f32(&p, &[2, 2], &[1.0, 2.0, 3.0, 4.5]).unwrap();
        let unlimited = MemoryBudget::new(None);
        let e = load_vector(&p, &unlimited).unwrap_err();
        assert!(
            matches!(&e, ContinuousError::Data { problem: DataFileError::Shape { expected, shape }, .. }
                if *expected == "a vector" && *shape == [2, 2]),
            "{e:?}"
        );
        assert!(
            e.to_string()
                .ends_with("m.npy: expected a vector, got shape [2, 2]"),
            "{e}"
        );
        let tiny = MemoryBudget::new(Some(16));
        let e = read_csv(&dir.path().join("none.csv"), &tiny).unwrap_err();
        assert!(matches!(e, ContinuousError::Io { .. }), "{e:?}");
        let csv = dir.path().join("big.csv");
        std::fs::write(&csv, "1,2,3,4,5,6,7,8\n").unwrap();
        let e = read_csv(&csv, &tiny).unwrap_err();
        assert!(
            matches!(
                e,
                ContinuousError::Data {
                    problem: DataFileError::Memory(_),
                    ..
                }
            ),
            "{e:?}"
        );
    }
}
