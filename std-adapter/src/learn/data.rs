//! Binary data sets: rows of 0/1 values read from `.npy` files.

use super::LearnError;
use crate::io::npy::read_npy_within;
use crate::resources::MemoryBudget;
use std::path::Path;

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
        let bad = |why: String| LearnError::Data {
            file: path.display().to_string(),
            problem: why,
        };
        let array = read_npy_within(path, budget).map_err(|e| bad(e.to_string()))?;
        let Some((&cols, leading)) = array.shape.split_last().filter(|_| array.shape.len() >= 2)
        else {
            return Err(bad(format!(
                "expected an array of rows × values (2 or more dimensions), found {}",
                array.shape.len()
            )));
        };
        let rows: usize = leading.iter().product();
        if rows == 0 || cols == 0 {
            return Err(bad("the array is empty".into()));
        }
        let values = array.data.to_f64();
        if let Some(i) = values.iter().position(|&x| x != 0.0 && x != 1.0) {
            return Err(bad(format!(
                "entry {i} (row {}) is {}, expected 0 or 1",
                i / cols,
                values[i]
            )));
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
