//! Reading input files (model files, `.npy` arrays, CSV data) within a memory cap.
//!
//! Every input is checked before it is read: a folder, a device (`/dev/zero`) or a socket is
//! refused by its file type; a regular file by its length against the cap; a stream (a FIFO,
//! standard input through `/dev/stdin`) is read with a bound of half the cap, so that the
//! buffer's growth stays under it. The JSON of a model file is parsed only after the memory
//! its parse holds (its values, a multiple of the text's size) has been estimated from the text
//! and checked, and an object that names a key twice is refused, naming the key: nothing is
//! kept silently.
//!
//! # Examples
//!
//! ```
//! use langevin_std::io::input::parse_json;
//! use langevin_std::resources::MemoryBudget;
//! let budget = MemoryBudget::with_limit(1 << 20);
//! assert!(parse_json(br#"{"a": [1, 2], "b": {"c": 3}}"#, &budget).is_ok());
//! let e = parse_json(br#"{"a": 0.2, "a": 5}"#, &budget).unwrap_err();
//! assert!(e.to_string().contains("duplicate key `a`"));
//! ```

use crate::resources::{MemoryBudget, MemoryError};
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

/// An input that could not be read or was refused before it was.
#[derive(Debug)]
#[non_exhaustive]
pub enum InputError {
    /// The file could not be opened or read.
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// Not a file that holds data: a folder, a device or a socket.
    NotAFile {
        /// The path.
        path: PathBuf,
        /// What it is.
        kind: &'static str,
    },
    /// The file, or the memory reading it needs, exceeds the cap.
    Memory {
        /// The file.
        path: PathBuf,
        /// The estimate and the cap.
        error: MemoryError,
    },
    /// A stream that did not end within the bound it is read with.
    StreamTooLong {
        /// The stream.
        path: PathBuf,
        /// The bound, in bytes.
        bound: u64,
    },
    /// The JSON is malformed or names a key twice.
    Json(JsonError),
}

/// JSON text that is malformed, or whose object names a key twice.
#[derive(Debug)]
pub struct JsonError(serde_json::Error);

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A duplicate key is a data error whose message says what it is; a syntax error is not.
        if self.0.is_data() {
            self.0.fmt(f)
        } else {
            write!(f, "not valid JSON: {}", self.0)
        }
    }
}

impl std::error::Error for JsonError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InputError::Io { path, source } => {
                write!(f, "{}: cannot read: {source}", path.display())
            }
            InputError::NotAFile { path, kind } => write!(
                f,
                "{}: cannot read: it is {kind}, not a file (inputs are read from regular files or \
                 pipes)",
                path.display()
            ),
            InputError::Memory { path, error } if path.as_os_str().is_empty() => {
                write!(f, "{error}")
            }
            InputError::Memory { path, error } => write!(f, "{}: {error}", path.display()),
            InputError::StreamTooLong { path, bound } => write!(
                f,
                "{}: the stream did not end within {}, the most an input may hold under the \
                 memory limit (raise --max-memory or read from a regular file)",
                path.display(),
                crate::resources::human(*bound)
            ),
            InputError::Json(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for InputError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            InputError::Io { source, .. } => Some(source),
            InputError::Memory { error, .. } => Some(error),
            InputError::Json(e) => Some(e),
            _ => None,
        }
    }
}

/// An input opened for reading after its checks: the file and the most bytes it may give.
#[derive(Debug)]
pub struct CheckedInput {
    /// The open file.
    pub file: std::fs::File,
    /// Its length, for a regular file; `None` for a stream.
    pub len: Option<u64>,
    /// The most bytes it may be read to: its length, or half the cap for a stream.
    pub bound: u64,
}

/// Opens `path` after checking its type and (for a regular file) its length against
/// `budget`: `part` names the file in the estimate.
///
/// # Errors
///
/// [`InputError::NotAFile`] for a folder, device or socket; [`InputError::Memory`] for a file
/// longer than the cap; [`InputError::Io`] when it cannot be opened.
pub fn open_checked(path: &Path, budget: &MemoryBudget) -> Result<CheckedInput, InputError> {
    let io = |source| InputError::Io {
        path: path.to_path_buf(),
        source,
    };
    let meta = std::fs::metadata(path).map_err(io)?;
    let kind = special_kind(&meta.file_type());
    if let Some(kind) = kind {
        return Err(InputError::NotAFile {
            path: path.to_path_buf(),
            kind,
        });
    }
    let len = meta.is_file().then_some(meta.len());
    if let Some(len) = len {
        check(path, budget, &[("the file", Some(len))])?;
    }
    let file = std::fs::File::open(path).map_err(io)?;
    Ok(CheckedInput {
        file,
        len,
        bound: len.unwrap_or(budget.limit / 2),
    })
}

/// What a file type is when it is not a regular file or a stream that can be read with a
/// bound: `None` for those.
fn special_kind(t: &std::fs::FileType) -> Option<&'static str> {
    if t.is_dir() {
        return Some("a folder");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_char_device() {
            return Some("a character device");
        }
        if t.is_block_device() {
            return Some("a block device");
        }
        if t.is_socket() {
            return Some("a socket");
        }
    }
    None
}

/// Refuses an estimate above the cap, naming the file.
fn check(
    path: &Path,
    budget: &MemoryBudget,
    parts: &[(&str, Option<u64>)],
) -> Result<u64, InputError> {
    budget.check(parts).map_err(|error| InputError::Memory {
        path: path.to_path_buf(),
        error,
    })
}

/// Reads the whole of `path` after [`open_checked`], never more than its bound.
///
/// # Errors
///
/// As [`open_checked`], and [`InputError::StreamTooLong`] for a stream (or a file that grew)
/// beyond its bound.
pub fn read_limited(path: &Path, budget: &MemoryBudget) -> Result<Vec<u8>, InputError> {
    let input = open_checked(path, budget)?;
    read_bounded(path, input.file, input.len, input.bound)
}

/// Reads at most `bound` bytes of `reader` (`len`: the expected length, to reserve).
///
/// # Errors
///
/// [`InputError::Io`], or [`InputError::StreamTooLong`] past `bound`.
pub fn read_bounded(
    path: &Path,
    reader: impl Read,
    len: Option<u64>,
    bound: u64,
) -> Result<Vec<u8>, InputError> {
    let mut bytes = Vec::new();
    if let Some(n) = len.and_then(|n| usize::try_from(n).ok()) {
        bytes.try_reserve_exact(n).map_err(|e| InputError::Io {
            path: path.to_path_buf(),
            source: std::io::Error::new(std::io::ErrorKind::OutOfMemory, e),
        })?;
    }
    reader
        .take(bound.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|source| InputError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    if bytes.len() as u64 > bound {
        return Err(InputError::StreamTooLong {
            path: path.to_path_buf(),
            bound,
        });
    }
    Ok(bytes)
}

/// Bytes a parsed JSON value may hold per value it has: the value, its key in an object, and
/// the spare capacity of the vectors and maps that hold them (up to as much again).
const BYTES_PER_JSON_VALUE: u64 = 2 * (std::mem::size_of::<Value>() as u64 + 24);

/// An upper bound on the memory the parse of `text` holds: its strings (at most the text's
/// length) and its values, at most one per `,`, `[` and `{` outside strings, plus one.
pub fn json_parse_bytes(text: &[u8]) -> u64 {
    let (mut values, mut in_string, mut escaped) = (1u64, false, false);
    for &c in text {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
        } else {
            match c {
                b'"' => in_string = true,
                b',' | b'[' | b'{' => values += 1,
                _ => {}
            }
        }
    }
    values
        .saturating_mul(BYTES_PER_JSON_VALUE)
        .saturating_add(text.len() as u64)
}

/// Parses JSON text whose parse fits under `budget` (with the text: [`json_parse_bytes`]),
/// refusing an object that names a key twice.
///
/// # Errors
///
/// [`InputError::Memory`] (with an empty path) when the estimate exceeds the cap;
/// [`InputError::Json`] for malformed JSON or a duplicate key, naming the key and where.
pub fn parse_json(text: &[u8], budget: &MemoryBudget) -> Result<Value, InputError> {
    check(
        Path::new(""),
        budget,
        &[
            ("the JSON text", Some(text.len() as u64)),
            ("its parse", Some(json_parse_bytes(text))),
        ],
    )?;
    parse_strict(text).map_err(InputError::Json)
}

/// Parses JSON text, refusing an object that names a key twice (`serde_json::Value` keeps the
/// last silently).
///
/// # Errors
///
/// [`JsonError`]: `not valid JSON: …`, or `duplicate key `k` at line l column c`.
pub fn parse_strict(text: &[u8]) -> Result<Value, JsonError> {
    let mut de = serde_json::Deserializer::from_slice(text);
    let Strict(value) = Strict::deserialize(&mut de).map_err(JsonError)?;
    de.end().map_err(JsonError)?;
    Ok(value)
}

/// A JSON value whose objects name each key once.
struct Strict(Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Strict(v)) = seq.next_element()? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut fields = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if fields.contains_key(&key) {
                // Escaped, so a key holding a line break still gives a one-line message.
                return Err(de::Error::custom(format!(
                    "duplicate key `{}` (each key may appear once in an object)",
                    key.escape_debug()
                )));
            }
            let Strict(v) = map.next_value()?;
            fields.insert(key, v);
        }
        Ok(Value::Object(fields))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicate_keys_are_refused_at_any_depth() {
        assert_eq!(
            parse_strict(br#"{"a": [1, {"b": null}], "c": "x"}"#).unwrap(),
            serde_json::json!({"a": [1, {"b": null}], "c": "x"})
        );
        for text in [
            r#"{"coupling": 0.2, "coupling": 5}"#,
            r#"{"a": {"b": 1, "b": 1}}"#,
            r#"[{"k": 1}, {"k": 2, "k": 3}]"#,
        ] {
            let e = parse_strict(text.as_bytes()).unwrap_err();
            assert!(e.to_string().contains("duplicate key"), "{text}: {e}");
        }
        let e = parse_strict(br#"{"a\nb": 1, "a\nb": 2}"#).unwrap_err();
        assert!(e.to_string().contains(r"duplicate key `a\nb`"), "{e}");
        assert!(
            parse_strict(b"{")
                .unwrap_err()
                .to_string()
                .contains("not valid JSON")
        );
        assert!(parse_strict(b"1 2").is_err());
    }

    #[test]
    fn the_parse_estimate_counts_values_not_string_contents() {
        assert_eq!(json_parse_bytes(b"1"), BYTES_PER_JSON_VALUE + 1);
        let commas_in_string = br#"{"a": ",,,[{"}"#;
        assert_eq!(
            json_parse_bytes(commas_in_string),
            2 * BYTES_PER_JSON_VALUE + commas_in_string.len() as u64
        );
        let list = b"[0,0,0,0]";
        assert_eq!(json_parse_bytes(list), 5 * BYTES_PER_JSON_VALUE + 9);
        let e = parse_json(list, &MemoryBudget::with_limit(100)).unwrap_err();
        assert!(matches!(e, InputError::Memory { .. }), "{e}");
    }

    #[test]
    fn devices_are_refused_before_reading() {
        #[cfg(unix)]
        {
            let e = read_limited(Path::new("/dev/zero"), &MemoryBudget::with_limit(1 << 30));
            assert!(
                matches!(
                    e,
                    Err(InputError::NotAFile {
                        kind: "a character device",
                        ..
                    })
                ),
                "{e:?}"
            );
        }
        let e = read_limited(&std::env::temp_dir(), &MemoryBudget::with_limit(1 << 30));
        assert!(matches!(
            e,
            Err(InputError::NotAFile {
                kind: "a folder",
                ..
            })
        ));
        let e = read_bounded(Path::new("s"), &b"abcdef"[..], None, 3).unwrap_err();
        assert!(matches!(e, InputError::StreamTooLong { bound: 3, .. }));
        assert_eq!(
            read_bounded(Path::new("s"), &b"abc"[..], None, 3).unwrap(),
            b"abc"
        );
    }
}
