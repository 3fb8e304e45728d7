//! Reading and writing NumPy `.npy` files, any rank.
//!
//! Reads format versions 1.0, 2.0 and 3.0 with every real numeric dtype (`b1`, `i1`..`i8`,
//! `u1`..`u8`, `f2`, `f4`, `f8`), in either byte order and in C or Fortran order (Fortran-order
//! arrays are returned in C order); each is widened into the [`NpyData`] variant that holds its
//! values exactly. Writes little-endian C order, version 1.0 (version 2.0 only when a header
//! would not fit in 65 535 bytes).
//! Every byte input gives either an array or an [`NpyError`]; nothing panics and nothing
//! allocates more than the input holds, so the reader is safe to run on untrusted files.
//!
//! # Examples
//!
//! ```
//! use langevin_std::io::npy::{read_npy_bytes, write_npy_to, NpyData};
//! let mut bytes = Vec::new();
//! write_npy_to(&mut bytes, &[2, 3], &NpyData::F64(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))?;
//! let array = read_npy_bytes(&bytes)?;
//! assert_eq!(array.shape, vec![2, 3]);
//! assert_eq!(array.data, NpyData::F64(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]));
//! # Ok::<(), langevin_std::io::npy::NpyError>(())
//! ```

use crate::io::input::{InputError, open_checked, read_bounded};
use crate::resources::{MemoryBudget, product};
use std::io::{Read, Write};
use std::path::Path;

const MAGIC: &[u8; 6] = b"\x93NUMPY";
/// Headers (magic, version, length field and dictionary) are padded to this many bytes.
const HEADER_ALIGN: usize = 64;

/// An n-dimensional array as stored in a `.npy` file: its shape and its elements in C order.
#[derive(Clone, Debug, PartialEq)]
pub struct NpyArray {
    /// Extent along each axis; empty for a scalar (one element).
    pub shape: Vec<usize>,
    /// The elements in C (row-major) order.
    pub data: NpyData,
}

/// The elements of an array: one variant per dtype this module writes; a file of another
/// dtype is read into the variant that holds its values exactly (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub enum NpyData {
    /// `<f8`.
    F64(Vec<f64>),
    /// `<f4`.
    F32(Vec<f32>),
    /// `|u1`.
    U8(Vec<u8>),
    /// `<u2`.
    U16(Vec<u16>),
    /// `<i4`.
    I32(Vec<i32>),
    /// `<i8`.
    I64(Vec<i64>),
}

impl NpyData {
    /// The elements as doubles (exact for every supported dtype but `<i8` beyond 2^53).
    pub fn to_f64(&self) -> Vec<f64> {
        match self {
            NpyData::F64(v) => v.clone(),
            NpyData::F32(v) => v.iter().map(|&x| f64::from(x)).collect(),
            NpyData::U8(v) => v.iter().map(|&x| f64::from(x)).collect(),
            NpyData::U16(v) => v.iter().map(|&x| f64::from(x)).collect(),
            NpyData::I32(v) => v.iter().map(|&x| f64::from(x)).collect(),
            NpyData::I64(v) => v.iter().map(|&x| x as f64).collect(),
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        match self {
            NpyData::F64(v) => v.len(),
            NpyData::F32(v) => v.len(),
            NpyData::U8(v) => v.len(),
            NpyData::U16(v) => v.len(),
            NpyData::I32(v) => v.len(),
            NpyData::I64(v) => v.len(),
        }
    }

    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The NumPy dtype string (`descr`) of this variant, e.g. `<f8`.
    pub fn descr(&self) -> &'static str {
        match self {
            NpyData::F64(_) => "<f8",
            NpyData::F32(_) => "<f4",
            NpyData::U8(_) => "|u1",
            NpyData::U16(_) => "<u2",
            NpyData::I32(_) => "<i4",
            NpyData::I64(_) => "<i8",
        }
    }

    /// Bytes per element.
    fn element_size(&self) -> usize {
        match self {
            NpyData::U8(_) => 1,
            NpyData::U16(_) => 2,
            NpyData::F32(_) | NpyData::I32(_) => 4,
            NpyData::F64(_) | NpyData::I64(_) => 8,
        }
    }
}

impl NpyArray {
    /// An array after checking that the shape's element count equals the data length.
    ///
    /// # Errors
    ///
    /// [`NpyError::ShapeMismatch`] when they differ (or the element count overflows).
    pub fn new(shape: Vec<usize>, data: NpyData) -> Result<Self, NpyError> {
        let expected = element_count(&shape).ok_or(NpyError::ShapeOverflow)?;
        if expected != data.len() {
            return Err(NpyError::ShapeMismatch {
                expected,
                found: data.len(),
            });
        }
        Ok(Self { shape, data })
    }
}

/// Why a `.npy` file could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NpyError {
    /// The underlying file or writer failed.
    #[error("npy i/o error: {0}")]
    Io(#[from] std::io::Error),
    /// The file does not start with `\x93NUMPY`.
    #[error("not a .npy file (bad magic string)")]
    BadMagic,
    /// A format version other than 1.0, 2.0 or 3.0.
    #[error("unsupported .npy format version {major}.{minor}")]
    UnsupportedVersion {
        /// Major version byte.
        major: u8,
        /// Minor version byte.
        minor: u8,
    },
    /// The file ends inside the preamble or the header dictionary.
    #[error("truncated .npy header")]
    TruncatedHeader,
    /// The header dictionary is not the expected Python literal; the text says where.
    #[error("malformed .npy header: {0}")]
    BadHeader(&'static str),
    /// A dtype this reader does not support (the `descr` string).
    #[error("unsupported .npy dtype {0:?}")]
    UnsupportedDtype(String),
    /// A `u8` (unsigned 64-bit) element above `i64::MAX`, which the `I64` variant cannot
    /// hold; `index` is its position in the file.
    #[error("uint64 element {index} is above 2^63 − 1 and cannot be read as int64")]
    ValueOutOfRange {
        /// Position of the element in the file's order.
        index: usize,
    },
    /// The product of the shape overflows `usize`.
    #[error("the .npy shape's element count overflows")]
    ShapeOverflow,
    /// The element count of the shape and the number of data elements (or, when reading,
    /// whole elements in the data bytes) differ.
    #[error("the shape implies {expected} elements but {found} are present")]
    ShapeMismatch {
        /// Elements the shape implies.
        expected: usize,
        /// Elements present.
        found: usize,
    },
    /// The data bytes are not a whole number of elements, or trail the last element.
    #[error("the shape and dtype imply {expected} data bytes but {found} are present")]
    DataLength {
        /// Bytes the shape and dtype imply.
        expected: usize,
        /// Bytes present after the header.
        found: usize,
    },
    /// The input was refused before its data were read: a device or folder, a file or stream
    /// beyond its bound, or an array whose memory exceeds the cap.
    #[error("{0}")]
    Input(#[source] InputError),
    /// The array is not what the caller asked for (rank or dtype), e.g. in
    /// [`read_matrix_f64`].
    #[error("expected {expected}, found a rank-{rank} array of dtype {dtype}")]
    WrongKind {
        /// What was wanted.
        expected: &'static str,
        /// The dtype string found.
        dtype: &'static str,
        /// The rank found.
        rank: usize,
    },
}

/// What the elements of a file are, before they are widened into an [`NpyData`] variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Bool,
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    F16,
    F32,
    F64,
}

/// A file's dtype: its element kind and byte order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FileDtype {
    kind: Kind,
    big_endian: bool,
}

impl Kind {
    fn size(self) -> usize {
        match self {
            Kind::Bool | Kind::I8 | Kind::U8 => 1,
            Kind::I16 | Kind::U16 | Kind::F16 => 2,
            Kind::I32 | Kind::U32 | Kind::F32 => 4,
            Kind::I64 | Kind::U64 | Kind::F64 => 8,
        }
    }
}

impl FileDtype {
    /// Parses a `descr`: `b1`, `i1`..`i8`, `u1`..`u8`, `f2`, `f4`, `f8` with `<` (little),
    /// `>` (big), `=` (native) or, for single bytes, `|`.
    fn parse(descr: &str) -> Result<Self, NpyError> {
        let unsupported = || NpyError::UnsupportedDtype(descr.to_owned());
        let (order, code) = match descr.as_bytes() {
            [o @ (b'<' | b'>' | b'|' | b'='), rest @ ..] => (*o, rest),
            _ => return Err(unsupported()),
        };
        let kind = match code {
            b"b1" | b"?" => Kind::Bool,
            b"i1" => Kind::I8,
            b"u1" => Kind::U8,
            b"i2" => Kind::I16,
            b"u2" => Kind::U16,
            b"i4" => Kind::I32,
            b"u4" => Kind::U32,
            b"i8" => Kind::I64,
            b"u8" => Kind::U64,
            b"f2" => Kind::F16,
            b"f4" => Kind::F32,
            b"f8" => Kind::F64,
            _ => return Err(unsupported()),
        };
        let big_endian = match order {
            b'<' => false,
            b'>' => true,
            b'=' => cfg!(target_endian = "big"),
            // '|' (no byte order) only makes sense for single bytes.
            _ if kind.size() == 1 => false,
            _ => return Err(unsupported()),
        };
        Ok(Self { kind, big_endian })
    }
}

fn element_count(shape: &[usize]) -> Option<usize> {
    shape.iter().try_fold(1usize, |acc, &s| acc.checked_mul(s))
}

/// Reads a `.npy` file within the default memory cap (see [`read_npy_within`]).
///
/// # Errors
///
/// As [`read_npy_within`].
pub fn read_npy(path: impl AsRef<Path>) -> Result<NpyArray, NpyError> {
    read_npy_within(path, &MemoryBudget::new(None))
}

/// The longest header dictionary this reader takes: 1 MiB (NumPy writes a few dozen bytes).
const MAX_HEADER: usize = 1 << 20;

/// Reads a `.npy` file whose memory fits under `budget`, checked before its data are read:
/// the header (at most 1 MiB) gives the shape and dtype, and the file's bytes, its decoded
/// values (twice their width, for the decoding and a Fortran-order copy) and their `f64` copy
/// must fit under the cap. A device or folder is refused; a regular file whose length is not
/// the header's is refused before its data are read; a stream is read to the header's length
/// and no further.
///
/// # Errors
///
/// [`NpyError::Input`] for a refused input (its type, or the memory), [`NpyError::Io`] when it
/// cannot be read, otherwise as [`read_npy_bytes`].
pub fn read_npy_within(
    path: impl AsRef<Path>,
    budget: &MemoryBudget,
) -> Result<NpyArray, NpyError> {
    let path = path.as_ref();
    let input = open_checked(path, budget).map_err(|e| match e {
        InputError::Io { source, .. } => NpyError::Io(source),
        e => NpyError::Input(e),
    })?;
    let mut file = input.file;
    let mut bytes = Vec::new();
    (&mut file)
        .take(input.bound.min(MAX_HEADER as u64 + 16))
        .read_to_end(&mut bytes)?;
    let (header, data) = split_header(&bytes).map_err(|e| match e {
        NpyError::TruncatedHeader if bytes.len() > MAX_HEADER => {
            NpyError::BadHeader("the header is longer than 1 MiB")
        }
        e => e,
    })?;
    let Layout {
        dtype,
        count,
        expected,
        ..
    } = Layout::of(header)?;
    let offset = (bytes.len() - data.len()) as u64;
    let total = offset.checked_add(expected as u64);
    let values = count as u64;
    budget
        .check(&[
            ("the file", total),
            (
                "its decoded values",
                product(&[values, widened_size(dtype.kind), 2]),
            ),
            ("their f64 copy", product(&[values, 8])),
        ])
        .map_err(|error| {
            NpyError::Input(InputError::Memory {
                path: path.to_path_buf(),
                error,
            })
        })?;
    let total = total.ok_or(NpyError::ShapeOverflow)?;
    if let Some(len) = input.len
        && len != total
    {
        return Err(NpyError::DataLength {
            expected,
            found: usize::try_from(len.saturating_sub(offset)).unwrap_or(usize::MAX),
        });
    }
    let rest = total.saturating_sub(bytes.len() as u64);
    if rest > 0 {
        let more = read_bounded(path, file, Some(rest), rest).map_err(NpyError::Input)?;
        bytes.extend_from_slice(&more);
    } else if bytes.len() as u64 > total || file.read(&mut [0u8; 1])? > 0 {
        // Bytes after the data (of a stream, or a file that grew).
        return Err(NpyError::DataLength {
            expected,
            found: expected.saturating_add(1),
        });
    }
    read_npy_bytes(&bytes)
}

/// Bytes per element of the [`NpyData`] variant a file's kind is decoded into.
fn widened_size(kind: Kind) -> u64 {
    match kind {
        Kind::Bool | Kind::U8 => 1,
        Kind::U16 => 2,
        Kind::I8 | Kind::I16 | Kind::I32 | Kind::F16 | Kind::F32 => 4,
        Kind::U32 | Kind::I64 | Kind::U64 | Kind::F64 => 8,
    }
}

/// The header dictionary's text and the bytes after it.
fn split_header(bytes: &[u8]) -> Result<(&str, &[u8]), NpyError> {
    let rest = bytes.strip_prefix(MAGIC.as_slice()).ok_or(
        if bytes.len() < MAGIC.len() && MAGIC.starts_with(bytes) {
            NpyError::TruncatedHeader
        } else {
            NpyError::BadMagic
        },
    )?;
    let (&major, rest) = rest.split_first().ok_or(NpyError::TruncatedHeader)?;
    let (&minor, rest) = rest.split_first().ok_or(NpyError::TruncatedHeader)?;
    let (header_len, rest) = match (major, minor) {
        (1, 0) => match rest {
            [a, b, tail @ ..] => (usize::from(u16::from_le_bytes([*a, *b])), tail),
            _ => return Err(NpyError::TruncatedHeader),
        },
        (2 | 3, 0) => match rest {
            [a, b, c, d, tail @ ..] => {
                let len = u32::from_le_bytes([*a, *b, *c, *d]);
                let len = usize::try_from(len).map_err(|_| NpyError::TruncatedHeader)?;
                (len, tail)
            }
            _ => return Err(NpyError::TruncatedHeader),
        },
        _ => return Err(NpyError::UnsupportedVersion { major, minor }),
    };
    if rest.len() < header_len {
        return Err(NpyError::TruncatedHeader);
    }
    let (header, data) = rest.split_at(header_len);
    // Version 3.0 allows UTF-8; 1.0 and 2.0 are Latin-1, whose ASCII subset is all we accept.
    let header = std::str::from_utf8(header).map_err(|_| NpyError::BadHeader("not UTF-8 text"))?;
    Ok((header, data))
}

/// Parses the bytes of a `.npy` file.
///
/// # Errors
///
/// A typed [`NpyError`] naming the first problem found: magic, version, truncation, header
/// syntax, dtype, byte order, Fortran order, or a data length that does not match the shape.
pub fn read_npy_bytes(bytes: &[u8]) -> Result<NpyArray, NpyError> {
    let (header, data) = split_header(bytes)?;
    let Layout {
        parsed,
        dtype,
        expected,
        ..
    } = Layout::of(header)?;
    if data.len() != expected {
        return Err(NpyError::DataLength {
            expected,
            found: data.len(),
        });
    }
    let data = decode(dtype, data)?;
    let data = if parsed.fortran_order && parsed.shape.len() > 1 {
        to_c_order(data, &parsed.shape)
    } else {
        data
    };
    Ok(NpyArray {
        shape: parsed.shape,
        data,
    })
}

/// The elements widened into the variant that holds every value of the file's dtype
/// exactly: `b1` (as 0/1) and `u1` to `U8`; `i1`, `i2`, `i4` to `I32`; `u2` to `U16`; `u4` and
/// `i8` to `I64`; `u8` to `I64` (values above `i64::MAX` are an error); `f2` and `f4` to `F32`;
/// `f8` to `F64`.
fn decode(dtype: FileDtype, data: &[u8]) -> Result<NpyData, NpyError> {
    fn map<const N: usize, T>(data: &[u8], big: bool, f: impl Fn([u8; N]) -> T) -> Vec<T> {
        data.chunks_exact(N)
            .map(|c| {
                let mut a = [0u8; N];
                a.copy_from_slice(c);
                if big {
                    a.reverse();
                }
                f(a)
            })
            .collect()
    }
    let big = dtype.big_endian;
    Ok(match dtype.kind {
        Kind::Bool => NpyData::U8(data.iter().map(|&b| u8::from(b != 0)).collect()),
        Kind::U8 => NpyData::U8(data.to_vec()),
        Kind::I8 => NpyData::I32(data.iter().map(|&b| i32::from(b as i8)).collect()),
        Kind::I16 => NpyData::I32(map(data, big, |a| i32::from(i16::from_le_bytes(a)))),
        Kind::U16 => NpyData::U16(map(data, big, u16::from_le_bytes)),
        Kind::I32 => NpyData::I32(map(data, big, i32::from_le_bytes)),
        Kind::U32 => NpyData::I64(map(data, big, |a| i64::from(u32::from_le_bytes(a)))),
        Kind::I64 => NpyData::I64(map(data, big, i64::from_le_bytes)),
        Kind::U64 => {
            let wide = map(data, big, u64::from_le_bytes);
            let mut out = Vec::with_capacity(wide.len());
            for (index, v) in wide.into_iter().enumerate() {
                out.push(i64::try_from(v).map_err(|_| NpyError::ValueOutOfRange { index })?);
            }
            NpyData::I64(out)
        }
        Kind::F16 => NpyData::F32(map(data, big, |a| f16_to_f32(u16::from_le_bytes(a)))),
        Kind::F32 => NpyData::F32(map(data, big, f32::from_le_bytes)),
        Kind::F64 => NpyData::F64(map(data, big, f64::from_le_bytes)),
    })
}

/// An IEEE half-precision value, exactly, as single precision.
fn f16_to_f32(h: u16) -> f32 {
    let sign = u32::from(h >> 15) << 31;
    let exponent = u32::from((h >> 10) & 0x1f);
    let mantissa = u32::from(h & 0x3ff);
    let bits = match (exponent, mantissa) {
        (0, 0) => sign,
        // Subnormal: mantissa · 2⁻²⁴, exact in f32.
        (0, m) => {
            let magnitude = m as f32 * f32::from_bits(0x3380_0000); // 2⁻²⁴
            return if sign == 0 { magnitude } else { -magnitude };
        }
        (0x1f, 0) => sign | 0x7f80_0000,
        (0x1f, m) => sign | 0x7fc0_0000 | (m << 13),
        (e, m) => sign | ((e + 127 - 15) << 23) | (m << 13),
    };
    f32::from_bits(bits)
}

/// Elements stored in Fortran (column-major) order, rearranged into C (row-major) order.
fn to_c_order(data: NpyData, shape: &[usize]) -> NpyData {
    fn permute<T: Copy>(v: Vec<T>, shape: &[usize]) -> Vec<T> {
        // Strides of the Fortran layout: the first axis is contiguous.
        let mut strides = Vec::with_capacity(shape.len());
        let mut stride = 1usize;
        for &n in shape {
            strides.push(stride);
            stride = stride.saturating_mul(n);
        }
        let mut index = vec![0usize; shape.len()];
        let mut out = Vec::with_capacity(v.len());
        for _ in 0..v.len() {
            let f: usize = index.iter().zip(&strides).map(|(i, s)| i * s).sum();
            if let Some(&x) = v.get(f) {
                out.push(x);
            }
            // Next C-order multi-index: the last axis fastest.
            for (i, &n) in index.iter_mut().zip(shape).rev() {
                *i += 1;
                if *i < n {
                    break;
                }
                *i = 0;
            }
        }
        out
    }
    match data {
        NpyData::F64(v) => NpyData::F64(permute(v, shape)),
        NpyData::F32(v) => NpyData::F32(permute(v, shape)),
        NpyData::U8(v) => NpyData::U8(permute(v, shape)),
        NpyData::U16(v) => NpyData::U16(permute(v, shape)),
        NpyData::I32(v) => NpyData::I32(permute(v, shape)),
        NpyData::I64(v) => NpyData::I64(permute(v, shape)),
    }
}

struct Header {
    descr: String,
    fortran_order: bool,
    shape: Vec<usize>,
}

/// What a header says of the data: its dtype, its number of elements and of bytes.
struct Layout {
    parsed: Header,
    dtype: FileDtype,
    count: usize,
    expected: usize,
}

impl Layout {
    fn of(header: &str) -> Result<Self, NpyError> {
        let parsed = parse_header(header)?;
        let dtype = FileDtype::parse(&parsed.descr)?;
        let count = element_count(&parsed.shape).ok_or(NpyError::ShapeOverflow)?;
        let expected = count
            .checked_mul(dtype.kind.size())
            .ok_or(NpyError::ShapeOverflow)?;
        Ok(Self {
            parsed,
            dtype,
            count,
            expected,
        })
    }
}

/// A tiny parser for the one Python literal NumPy writes:
/// `{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }` plus padding.
struct Cursor<'a> {
    s: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn skip_ws(&mut self) {
        while let Some(c) = self.s.get(self.pos) {
            if c.is_ascii_whitespace() {
                self.pos += 1;
            } else {
                break;
            }
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.s.get(self.pos).copied()
    }

    fn expect(&mut self, c: u8, why: &'static str) -> Result<(), NpyError> {
        if self.peek() == Some(c) {
            self.pos += 1;
            Ok(())
        } else {
            Err(NpyError::BadHeader(why))
        }
    }

    fn string(&mut self) -> Result<&'a str, NpyError> {
        let quote = match self.peek() {
            Some(q @ (b'\'' | b'"')) => q,
            _ => return Err(NpyError::BadHeader("expected a quoted string")),
        };
        let start = self.pos + 1;
        let len = self
            .s
            .get(start..)
            .and_then(|tail| tail.iter().position(|&c| c == quote))
            .ok_or(NpyError::BadHeader("unterminated string"))?;
        let text = self
            .s
            .get(start..start + len)
            .ok_or(NpyError::BadHeader("unterminated string"))?;
        self.pos = start + len + 1;
        std::str::from_utf8(text).map_err(|_| NpyError::BadHeader("string is not UTF-8"))
    }

    fn word(&mut self) -> &'a [u8] {
        self.skip_ws();
        let start = self.pos;
        while let Some(c) = self.s.get(self.pos) {
            if c.is_ascii_alphanumeric() || *c == b'_' {
                self.pos += 1;
            } else {
                break;
            }
        }
        self.s.get(start..self.pos).unwrap_or(&[])
    }

    fn bool(&mut self) -> Result<bool, NpyError> {
        match self.word() {
            b"True" => Ok(true),
            b"False" => Ok(false),
            _ => Err(NpyError::BadHeader("fortran_order is not True or False")),
        }
    }

    fn shape(&mut self) -> Result<Vec<usize>, NpyError> {
        self.expect(b'(', "shape is not a tuple")?;
        let mut shape = Vec::new();
        loop {
            if self.peek() == Some(b')') {
                self.pos += 1;
                return Ok(shape);
            }
            let digits = self.word();
            if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
                return Err(NpyError::BadHeader(
                    "shape entry is not a non-negative integer",
                ));
            }
            let value = digits.iter().try_fold(0usize, |acc, &c| {
                acc.checked_mul(10)?.checked_add(usize::from(c - b'0'))
            });
            shape.push(value.ok_or(NpyError::ShapeOverflow)?);
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b')') => {}
                _ => return Err(NpyError::BadHeader("shape tuple is not comma separated")),
            }
        }
    }
}

fn parse_header(text: &str) -> Result<Header, NpyError> {
    let mut c = Cursor {
        s: text.as_bytes(),
        pos: 0,
    };
    c.expect(b'{', "header is not a dictionary")?;
    let (mut descr, mut fortran, mut shape) = (None, None, None);
    loop {
        if c.peek() == Some(b'}') {
            c.pos += 1;
            break;
        }
        let key = c.string()?;
        c.expect(b':', "expected ':' after a key")?;
        match key {
            "descr" => descr = Some(c.string()?.to_owned()),
            "fortran_order" => fortran = Some(c.bool()?),
            "shape" => shape = Some(c.shape()?),
            _ => return Err(NpyError::BadHeader("unknown key in header dictionary")),
        }
        match c.peek() {
            Some(b',') => c.pos += 1,
            Some(b'}') => {}
            _ => {
                return Err(NpyError::BadHeader(
                    "dictionary entries not comma separated",
                ));
            }
        }
    }
    if c.peek().is_some() {
        return Err(NpyError::BadHeader(
            "trailing characters after the dictionary",
        ));
    }
    Ok(Header {
        descr: descr.ok_or(NpyError::BadHeader("missing 'descr'"))?,
        fortran_order: fortran.ok_or(NpyError::BadHeader("missing 'fortran_order'"))?,
        shape: shape.ok_or(NpyError::BadHeader("missing 'shape'"))?,
    })
}

/// Writes an array as a `.npy` file (format 1.0).
///
/// # Errors
///
/// [`NpyError::ShapeMismatch`] when `shape` does not match `data`; [`NpyError::Io`] on
/// write failure.
pub fn write_npy(path: impl AsRef<Path>, shape: &[usize], data: &NpyData) -> Result<(), NpyError> {
    let mut bytes = Vec::new();
    write_npy_to(&mut bytes, shape, data)?;
    std::fs::write(path, bytes)?;
    Ok(())
}

/// Writes an array in `.npy` format to any writer (format 1.0; 2.0 for an over-long header).
///
/// # Errors
///
/// As [`write_npy`].
pub fn write_npy_to<W: Write>(
    mut writer: W,
    shape: &[usize],
    data: &NpyData,
) -> Result<(), NpyError> {
    let expected = element_count(shape).ok_or(NpyError::ShapeOverflow)?;
    if expected != data.len() {
        return Err(NpyError::ShapeMismatch {
            expected,
            found: data.len(),
        });
    }
    let mut out = npy_header(shape, data.descr())?;
    out.reserve_exact(expected * data.element_size());
    /// Appends little-endian words.
    fn put<const N: usize>(out: &mut Vec<u8>, words: impl Iterator<Item = [u8; N]>) {
        words.for_each(|w| out.extend_from_slice(&w));
    }
    match data {
        NpyData::F64(v) => put(&mut out, v.iter().map(|x| x.to_le_bytes())),
        NpyData::F32(v) => put(&mut out, v.iter().map(|x| x.to_le_bytes())),
        NpyData::U8(v) => out.extend_from_slice(v),
        NpyData::U16(v) => put(&mut out, v.iter().map(|x| x.to_le_bytes())),
        NpyData::I32(v) => put(&mut out, v.iter().map(|x| x.to_le_bytes())),
        NpyData::I64(v) => put(&mut out, v.iter().map(|x| x.to_le_bytes())),
    }
    writer.write_all(&out)?;
    Ok(())
}

/// The header of a `.npy` file of `shape` and dtype `descr` (e.g. `<f8`, `|u1`), exactly as
/// [`write_npy_to`] writes it: the data follows it. Lets a caller write the elements itself,
/// in pieces, after the header.
///
/// # Errors
///
/// [`NpyError::ShapeOverflow`] when the header cannot be written.
pub fn npy_header(shape: &[usize], descr: &str) -> Result<Vec<u8>, NpyError> {
    let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
    let tuple = match dims.as_slice() {
        [one] => format!("({one},)"),
        _ => format!("({})", dims.join(", ")),
    };
    let mut dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {tuple}, }}");
    // Version 1.0 has a 2-byte length field; fall back to 2.0 only when it cannot hold the header.
    let padded = |len_bytes: usize| {
        let preamble = MAGIC.len() + 2 + len_bytes;
        (preamble + dict.len() + 1).div_ceil(HEADER_ALIGN) * HEADER_ALIGN - preamble
    };
    let (version, header_len) = if padded(2) <= usize::from(u16::MAX) {
        (1u8, padded(2))
    } else {
        (2u8, padded(4))
    };
    dict.extend(std::iter::repeat_n(' ', header_len - dict.len() - 1));
    dict.push('\n');
    let mut out = Vec::with_capacity(header_len + 12);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[version, 0]);
    if version == 1 {
        let len = u16::try_from(dict.len()).map_err(|_| NpyError::ShapeOverflow)?;
        out.extend_from_slice(&len.to_le_bytes());
    } else {
        let len = u32::try_from(dict.len()).map_err(|_| NpyError::ShapeOverflow)?;
        out.extend_from_slice(&len.to_le_bytes());
    }
    out.extend_from_slice(dict.as_bytes());
    Ok(out)
}

/// Reads a 2-D array of any numeric dtype as `(rows, cols, row-major f64 data)` (exact but for
/// 64-bit integers beyond 2^53).
///
/// # Errors
///
/// As [`read_npy`], and [`NpyError::WrongKind`] for another rank.
pub fn read_matrix_f64(path: impl AsRef<Path>) -> Result<(usize, usize, Vec<f64>), NpyError> {
    read_matrix_f64_within(path, &MemoryBudget::new(None))
}

/// [`read_matrix_f64`] within `budget` (see [`read_npy_within`]).
///
/// # Errors
///
/// As [`read_npy_within`], and [`NpyError::WrongKind`] for another rank.
pub fn read_matrix_f64_within(
    path: impl AsRef<Path>,
    budget: &MemoryBudget,
) -> Result<(usize, usize, Vec<f64>), NpyError> {
    let array = read_npy_within(path, budget)?;
    match array.shape.as_slice() {
        &[rows, cols] => Ok((rows, cols, array.data.to_f64())),
        _ => Err(NpyError::WrongKind {
            expected: "a 2-D array",
            dtype: array.data.descr(),
            rank: array.shape.len(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_aligned_and_newline_terminated() {
        let mut bytes = Vec::new();
        write_npy_to(&mut bytes, &[5], &NpyData::U8(vec![1, 2, 3, 4, 5])).unwrap();
        assert_eq!((bytes.len() - 5) % HEADER_ALIGN, 0);
        assert_eq!(bytes[bytes.len() - 6], b'\n');
    }

    #[test]
    fn scalar_and_empty_shapes() {
        for (shape, n) in [(vec![], 1), (vec![0], 0), (vec![3, 0, 2], 0)] {
            let mut bytes = Vec::new();
            let data = NpyData::I32(vec![7; n]);
            write_npy_to(&mut bytes, &shape, &data).unwrap();
            let back = read_npy_bytes(&bytes).unwrap();
            assert_eq!(back, NpyArray { shape, data });
        }
    }

    #[test]
    fn numpy_written_header_parses() {
        // Exactly what NumPy 1.26 writes for np.zeros((2, 3)).
        let dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }";
        let parsed = parse_header(dict).unwrap();
        assert_eq!(parsed.shape, vec![2, 3]);
        assert_eq!(parsed.descr, "<f8");
        assert!(!parsed.fortran_order);
    }
}
