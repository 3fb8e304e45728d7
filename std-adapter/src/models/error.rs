//! [`ModelError`]: the one error of model loading and construction, and [`Problem`], what is
//! wrong, as data.

use super::schema::UnknownField;
use crate::io::input::{InputError, JsonError};
use crate::io::npy::NpyError;
use crate::resources::MemoryError;
use langevin_core::ParamError;
use std::fmt;
use std::path::{Path, PathBuf};

/// A model file that could not be loaded, or a model its parameters could not build: the file,
/// the field at fault and the problem. Its text is one line: `file: field `W`: problem`.
#[derive(Debug)]
pub struct ModelError {
    /// The file, when the model came from one.
    pub file: Option<PathBuf>,
    /// The field at fault (empty for the document as a whole).
    pub field: String,
    /// What is wrong (boxed: the error stays small on the success path).
    pub problem: Box<Problem>,
}

impl ModelError {
    /// An error about `field`.
    pub fn new(field: impl Into<String>, problem: Problem) -> Self {
        Self {
            file: None,
            field: field.into(),
            problem: Box::new(problem),
        }
    }

    /// The same error, attributed to `file`.
    #[must_use]
    pub fn in_file(mut self, file: &Path) -> Self {
        self.file = Some(file.to_path_buf());
        self
    }
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{}: ", file.display())?;
        }
        if self.field.is_empty() {
            write!(f, "{}", self.problem)
        } else {
            write!(f, "field `{}`: {}", self.field, self.problem)
        }
    }
}

impl std::error::Error for ModelError {
    /// The error behind the problem, when there is one (a parameter a constructor refused, a
    /// file that could not be read).
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &*self.problem {
            Problem::Param(e) => Some(e),
            Problem::Input(e) => Some(e),
            Problem::Memory(e) => Some(e),
            Problem::ArrayFile { source, .. } => Some(source),
            Problem::UnknownField(e) => Some(e),
            _ => None,
        }
    }
}

impl From<ParamError> for ModelError {
    /// A parameter a model's constructor refused: no field, the parameter error's text.
    fn from(e: ParamError) -> Self {
        Self::new("", Problem::Param(e))
    }
}

/// What the problem's text expects of a field's length (see [`Problem::Entries`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expected {
    /// As many as the side of the square matrix `field`: `W is 3 × 3`.
    Square {
        /// The matrix.
        field: &'static str,
        /// Its side.
        n: usize,
    },
    /// As many as the count `field`: `n = 3`.
    Count {
        /// The count.
        field: &'static str,
        /// Its value.
        n: usize,
    },
    /// As many as the columns of `field`: `W has 3 columns`.
    Columns {
        /// The matrix.
        field: &'static str,
        /// Its columns.
        n: usize,
    },
    /// As many as the rows of `field`: `W has 3 rows`.
    Rows {
        /// The matrix.
        field: &'static str,
        /// Its rows.
        n: usize,
    },
    /// As many as the entries of the vector `field`: `mu has 3`.
    Entries {
        /// The vector.
        field: &'static str,
        /// Its entries.
        n: usize,
    },
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Expected::Square { field, n } => write!(f, "{field} is {n} × {n}"),
            Expected::Count { field, n } => write!(f, "{field} = {n}"),
            Expected::Columns { field, n } => write!(f, "{field} has {n} columns"),
            Expected::Rows { field, n } => write!(f, "{field} has {n} rows"),
            Expected::Entries { field, n } => write!(f, "{field} has {n}"),
        }
    }
}

/// What is wrong with a model file, one of its fields or the model they describe.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Problem {
    /// The file is not JSON, or names a key twice (the parser's message, with the line and
    /// column).
    #[error(transparent)]
    Json(JsonError),
    /// The file could not be read.
    #[error(transparent)]
    Input(InputError),
    /// The file, or the memory its parse needs, exceeds the cap.
    #[error(transparent)]
    Memory(MemoryError),
    /// The document is not a JSON object.
    #[error("expected a JSON object")]
    NotAnObject,
    /// `kind` is not a string.
    #[error("must be a string")]
    NotAString,
    /// A required field is missing.
    #[error("missing")]
    Missing,
    /// A field the kind does not have.
    #[error(transparent)]
    UnknownField(UnknownField),
    /// Not a number.
    #[error("expected a number, found {found}")]
    NotANumber {
        /// The value found, shortened.
        found: String,
    },
    /// Not finite.
    #[error("must be finite")]
    NotFinite,
    /// Not a non-negative integer.
    #[error("expected a non-negative integer, found {found}")]
    NotACount {
        /// The value found, shortened.
        found: String,
    },
    /// Not `true` or `false`.
    #[error("expected true or false, found {found}")]
    NotAFlag {
        /// The value found, shortened.
        found: String,
    },
    /// Not a vector.
    #[error("expected a vector, found shape {shape:?}")]
    NotAVector {
        /// The shape found.
        shape: Vec<usize>,
    },
    /// Not a matrix.
    #[error("expected a matrix, found shape {shape:?}")]
    NotAMatrix {
        /// The shape found.
        shape: Vec<usize>,
    },
    /// The array file a field names could not be read.
    #[error("cannot load {}: {source}", path.display())]
    ArrayFile {
        /// The file, resolved against the model file's folder.
        path: PathBuf,
        /// Why.
        source: NpyError,
    },
    /// Nested arrays of different lengths.
    #[error("ragged array: found {found} entries at depth {depth}, expected {expected}")]
    Ragged {
        /// Entries of the array at fault.
        found: usize,
        /// Its depth.
        depth: usize,
        /// Entries of the first array at that depth.
        expected: usize,
    },
    /// Numbers and arrays at the same depth.
    #[error("ragged array: numbers and arrays mixed")]
    Mixed,
    /// An array of something other than numbers.
    #[error("expected numbers, found {found}")]
    NotNumbers {
        /// The value found, shortened.
        found: String,
    },
    /// An array entry that is not finite.
    #[error("entry {index} is not finite")]
    NonFiniteEntry {
        /// Its index: `3` in a vector, `(0, 1)` in a matrix.
        index: String,
    },
    /// A matrix that must be square.
    #[error("must be square, found {rows} × {cols}")]
    NotSquare {
        /// Its rows.
        rows: usize,
        /// Its columns.
        cols: usize,
    },
    /// A vector of the wrong length.
    #[error("has {found} entries, {expected}")]
    Entries {
        /// Its entries.
        found: usize,
        /// What they must match.
        expected: Expected,
    },
    /// A `d × d` matrix of the wrong shape.
    #[error("is {rows} × {cols}, mu has {d} entries")]
    NotDByD {
        /// Its rows.
        rows: usize,
        /// Its columns.
        cols: usize,
        /// `d`.
        d: usize,
    },
    /// An `n × states` matrix of the wrong shape.
    #[error("is {rows} × {cols}, expected n × states = {n} × {states}")]
    NotNByStates {
        /// Its rows.
        rows: usize,
        /// Its columns.
        cols: usize,
        /// Nodes.
        n: usize,
        /// States.
        states: usize,
    },
    /// A response that is neither 0 nor 1.
    #[error("entry {entry} is {}, expected 0 or 1", super::binary::compact(*value))]
    NotBinary {
        /// The entry.
        entry: usize,
        /// Its value.
        value: f64,
    },
    /// A data matrix without rows or columns.
    #[error("must have at least one row and one column")]
    NoData,
    /// An RBM without visible units.
    #[error("has no visible units")]
    NoVisibleUnits,
    /// A model of dimension 0.
    #[error("the model has dimension 0")]
    DimensionZero,
    /// An edge that is not `[i, j, J_ij]`.
    #[error("each edge must be [i, j, J_ij]")]
    EdgeShape,
    /// An edge naming a node that does not exist.
    #[error("edge {edge} names node {node}, expected an integer in 0..{n}")]
    EdgeNode {
        /// The edge.
        edge: usize,
        /// The node it names.
        node: f64,
        /// Nodes.
        n: usize,
    },
    /// An edge from a node to itself.
    #[error("edge {edge} joins node {node} to itself")]
    SelfLoop {
        /// The edge.
        edge: usize,
        /// The node.
        node: usize,
    },
    /// A pair of nodes joined twice.
    #[error(
        "edge {edge} joins nodes {i} and {j}, as edge {first} does: duplicate edges are refused \
         (give each pair once, with the sum of its couplings)"
    )]
    DuplicateEdge {
        /// The second edge.
        edge: usize,
        /// The first.
        first: usize,
        /// One node.
        i: usize,
        /// The other.
        j: usize,
    },
    /// A coupling that overflows single precision.
    #[error("edge {edge} has a coupling that is not finite in single precision")]
    EdgeCoupling {
        /// The edge.
        edge: usize,
    },
    /// An array entry that overflows single precision.
    #[error("entry {entry} = {} overflows single precision", super::binary::compact(*value))]
    EntryOverflow {
        /// Its index: `3` in a vector, `(0, 1)` in a matrix.
        entry: String,
        /// Its value.
        value: f64,
    },
    /// An RBM weight that overflows bfloat16.
    #[error("has an entry that overflows bfloat16 (beyond 3.39e38)")]
    Bf16Overflow,
    /// An RBM weight format other than `f32` and `bf16`.
    #[error("expected \"f32\" or \"bf16\", found {found}")]
    WeightFormat {
        /// The value found, as JSON.
        found: String,
    },
    /// A number that overflows single precision.
    #[error("{} overflows single precision", super::binary::compact(*value))]
    Overflow {
        /// The number.
        value: f64,
    },
    /// A mixture without modes.
    #[error("needs at least one mode of dimension ≥ 1")]
    NoModes,
    /// A mode outside the lattice.
    #[error("mode {mode} has coordinate {value} outside the lattice 0..={max}")]
    ModeOutside {
        /// The mode.
        mode: usize,
        /// The coordinate.
        value: f64,
        /// The largest value.
        max: usize,
    },
    /// A number that must be positive.
    #[error("must be positive, found {value}")]
    NotPositive {
        /// The number.
        value: f64,
    },
    /// A distance other than `"l2"` and `"squared"`.
    #[error("expected \"l2\" or \"squared\", found {found}")]
    NotADistance {
        /// The value found.
        found: String,
    },
    /// A count that must be at least 1.
    #[error("must be at least 1")]
    Zero,
    /// A number of states outside `2..=65535`.
    #[error("must be between 2 and 65535, found {found}")]
    States {
        /// The number found.
        found: usize,
    },
    /// Rotation matrices that do not fit in memory.
    #[error("{dim} × {dim} rotation matrices with {components} components do not fit in memory")]
    TooLarge {
        /// The dimension.
        dim: usize,
        /// The components.
        components: usize,
    },
    /// A parameter a model's constructor refused.
    #[error(transparent)]
    Param(ParamError),
    /// A label kind where a binary one is needed.
    #[error("`{kind}` is a label model; this command takes binary kinds ({})", expected.join(", "))]
    LabelKind {
        /// The kind.
        kind: String,
        /// The kinds the command takes.
        expected: &'static [&'static str],
    },
    /// A kind no parser reads.
    #[error("unknown model kind `{kind}` (expected {})", kinds(expected, also))]
    UnknownKind {
        /// The kind.
        kind: String,
        /// The kinds the command takes.
        expected: &'static [&'static str],
        /// The kinds of another domain it takes too.
        also: &'static [&'static str],
    },
}

/// `a, b or c, d`: the kinds of one domain, then those of another, if any.
fn kinds(expected: &[&str], also: &[&str]) -> String {
    if also.is_empty() {
        expected.join(", ")
    } else {
        format!("{} or {}", expected.join(", "), also.join(", "))
    }
}
