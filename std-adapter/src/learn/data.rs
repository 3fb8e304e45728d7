//! Binary data sets: rows of 0/1 values read from `.npy` files.

use super::LearnError;
use crate::io::npy::{NpyError, read_npy_within};
use crate::resources::MemoryBudget;
use std::path::Path;

/// Why a `.npy` file is not rows of binary values ([`LearnError::Data`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RowsError {
    /// Not a `.npy` file that can be read.
    #[error(transparent)]
    Npy(#[from] NpyError),
    /// Fewer than two dimensions.
    #[error("expected an array of rows × values (2 or more dimensions), found {0}")]
    Dimensions(usize),
    /// No rows or no columns.
    #[error("the array is empty")]
    Empty,
    /// An entry other than 0 and 1.
    #[error("entry {index} (row {row}) is {value}, expected 0 or 1")]
    NotBinary {
        /// The entry, counted over the flattened array.
        index: usize,
        /// Its row.
        row: usize,
        /// Its value.
        value: f64,
    },
}

/// `n` rows of `d` binary values, row-major.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BinaryRows {
    /// Columns `d`.
    pub cols: usize,
    /// The values, `n × d`.
    pub values: Vec<u8>,
}

impl BinaryRows {
    /// Reads a `.npy` array of any numeric dtype whose entries are all 0 or 1, of shape
    /// `(rows, d)` or `(…, d)`: leading axes are flattened into rows, so the draws `langevin
    /// sample --out` writes, `(chains, draws, d)`, read as data.
    ///
    /// # Errors
    ///
    /// [`LearnError::Data`] naming the file and the problem (unreadable, not 2-D, empty, or an
    /// entry other than 0 and 1).
    pub fn read(path: &Path) -> Result<Self, LearnError> {
        Self::read_within(path, &MemoryBudget::new(None))
    }

    /// [`BinaryRows::read`] under `budget`: the file is checked (its type, its header and the
    /// memory of its values) before its data are read (see
    /// [`read_npy_within`](crate::io::npy::read_npy_within)).
    ///
    /// # Errors
    ///
    /// As [`BinaryRows::read`].
    pub fn read_within(path: &Path, budget: &MemoryBudget) -> Result<Self, LearnError> {
        let bad = |problem: RowsError| LearnError::Data {
            file: path.to_path_buf(),
            problem,
        };
        let array = read_npy_within(path, budget).map_err(|e| bad(RowsError::Npy(e)))?;
        let Some((&cols, leading)) = array.shape.split_last().filter(|_| array.shape.len() >= 2)
        else {
            return Err(bad(RowsError::Dimensions(array.shape.len())));
        };
        let rows: usize = leading.iter().product();
        if rows == 0 || cols == 0 {
            return Err(bad(RowsError::Empty));
        }
        let values = array.data.to_f64();
        if let Some(index) = values.iter().position(|&x| x != 0.0 && x != 1.0) {
            return Err(bad(RowsError::NotBinary {
                index,
                row: index / cols,
                value: values[index],
            }));
        }
        Ok(Self {
            cols,
            values: values.iter().map(|&x| u8::from(x == 1.0)).collect(),
        })
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.values.len() / self.cols.max(1)
    }

    /// Row `i`.
    pub fn row(&self, i: usize) -> &[u8] {
        &self.values[i * self.cols..(i + 1) * self.cols]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::npy::{NpyData, write_npy};

    #[test]
    fn arrays_that_are_not_rows_of_bits_are_refused_by_kind() {
        let dir = tempfile::tempdir().unwrap();
        let read = |name: &str, shape: &[usize], values: Vec<f32>| {
            let path = dir.path().join(name);
            write_npy(&path, shape, &NpyData::F32(values)).unwrap();
            BinaryRows::read(&path)
        };
        let rows = read("ok.npy", &[2, 1, 2], vec![0.0, 1.0, 1.0, 0.0]).unwrap();
        assert_eq!((rows.rows(), rows.cols, rows.row(1)), (2, 2, &[1, 0][..]));
        let problem = |r: Result<BinaryRows, LearnError>| match r {
            Err(LearnError::Data { problem, .. }) => problem,
            other => panic!("{other:?}"),
        };
        let flat = problem(read("flat.npy", &[4], vec![0.0; 4]));
        assert!(matches!(flat, RowsError::Dimensions(1)), "{flat}");
        let empty = problem(read("empty.npy", &[0, 3], Vec::new()));
        assert!(matches!(empty, RowsError::Empty), "{empty}");
        let half = problem(read("half.npy", &[2, 2], vec![0.0, 1.0, 0.5, 0.0]));
        assert!(
            matches!(half, RowsError::NotBinary { index: 2, row: 1, value } if value == 0.5),
            "{half}"
        );
        assert_eq!(half.to_string(), "entry 2 (row 1) is 0.5, expected 0 or 1");
        let missing = problem(BinaryRows::read(&dir.path().join("none.npy")));
        assert!(matches!(missing, RowsError::Npy(_)), "{missing}");
    }
}
