//! Model files: JSON documents naming a model `kind` and its parameters.
//!
//! Errors name the file, the field and the problem, in one line.

pub use super::error::{Expected, ModelError, Problem};
use crate::io::input::{InputError, json_parse_bytes, parse_json, parse_strict, read_limited};
use crate::resources::MemoryBudget;
use serde_json::{Map, Value};
use std::fmt;
use std::path::{Path, PathBuf};

/// A parsed model document: its `kind`, its fields, and the folder relative to which array
/// files are resolved.
#[derive(Debug, Clone)]
pub struct ModelDoc {
    /// The `kind` field.
    pub kind: String,
    /// All fields.
    pub fields: Map<String, Value>,
    /// Folder of the JSON file (array files named in fields are relative to it).
    pub base: PathBuf,
    /// The file, when the document came from one.
    pub file: Option<PathBuf>,
    /// The cap the document was read under; its array files are read under it too.
    pub budget: MemoryBudget,
    /// An upper bound on the memory the parsed document holds (see
    /// [`json_parse_bytes`]), for the run's estimate.
    pub parse_bytes: u64,
}

impl ModelDoc {
    /// Reads and parses `path` under the default memory cap (see [`ModelDoc::read_within`]).
    ///
    /// # Errors
    ///
    /// As [`ModelDoc::read_within`].
    pub fn read(path: &Path) -> Result<Self, ModelError> {
        Self::read_within(path, &MemoryBudget::new(None))
    }

    /// Reads and parses `path`, its memory checked against `budget` before it is read (the
    /// file's length) and before it is parsed (the parse's estimate, [`json_parse_bytes`]); a
    /// device or folder is refused, a stream read with a bound.
    ///
    /// # Errors
    ///
    /// A [`ModelError`] if the file is refused or cannot be read, is not JSON, names a key
    /// twice, is not an object, has no string `kind`, or has a field its kind does not list in
    /// [`schema`](super::schema).
    pub fn read_within(path: &Path, budget: &MemoryBudget) -> Result<Self, ModelError> {
        let refused = |e: InputError| match e {
            InputError::Json(e) => ModelError::new("", Problem::Json(e)).in_file(path),
            InputError::Memory { error, .. } => {
                ModelError::new("", Problem::Memory(error)).in_file(path)
            }
            e => ModelError::new("", Problem::Input(e)),
        };
        let text = read_limited(path, budget).map_err(refused)?;
        let value = parse_json(&text, budget).map_err(refused)?;
        let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let mut doc = Self::from_value(value, base).map_err(|e| e.in_file(path))?;
        doc.file = Some(path.to_path_buf());
        doc.budget = *budget;
        doc.parse_bytes = json_parse_bytes(&text);
        Ok(doc)
    }

    /// Parses a JSON text; array files are resolved against `base`.
    ///
    /// # Errors
    ///
    /// As for [`ModelDoc::read_within`].
    pub fn parse(text: &str, base: PathBuf) -> Result<Self, ModelError> {
        // The text is in memory already: its parse is the caller's to bound.
        let value =
            parse_strict(text.as_bytes()).map_err(|e| ModelError::new("", Problem::Json(e)))?;
        let mut doc = Self::from_value(value, base)?;
        doc.parse_bytes = json_parse_bytes(text.as_bytes());
        Ok(doc)
    }

    /// A document from a parsed value.
    fn from_value(value: Value, base: PathBuf) -> Result<Self, ModelError> {
        let Value::Object(fields) = value else {
            return Err(ModelError::new("", Problem::NotAnObject));
        };
        let kind = match fields.get("kind") {
            Some(Value::String(k)) => k.clone(),
            Some(_) => return Err(ModelError::new("kind", Problem::NotAString)),
            None => return Err(ModelError::new("kind", Problem::Missing)),
        };
        if let Some(schema) = super::schema::find(&kind) {
            schema
                .check_fields(&fields)
                .map_err(|e| ModelError::new(e.escaped_field(), Problem::UnknownField(e)))?;
        }
        Ok(Self {
            kind,
            fields,
            base,
            file: None,
            budget: MemoryBudget::new(None),
            parse_bytes: 0,
        })
    }

    /// The files this document names for its array fields, as `(field, path)` (paths
    /// resolved against the model file's folder): the inputs an output must not overwrite.
    pub fn array_files(&self) -> Vec<(String, PathBuf)> {
        self.fields
            .iter()
            .filter(|(name, _)| names_a_file(&self.kind, name))
            .filter_map(|(name, v)| Some((name.clone(), self.base.join(v.as_str()?))))
            .collect()
    }

    /// [`ModelDoc::array_files`] of the model file `path`, found by a pass over its JSON that
    /// keeps only the strings of its top-level fields (arrays are skipped, never built), in
    /// the order of the fields' names; `None` when it is not a JSON object with a string
    /// `kind`. For reading a file already checked, without the memory of a second parse.
    pub fn array_files_of(path: &Path) -> Option<Vec<(String, PathBuf)>> {
        let file = std::io::BufReader::new(std::fs::File::open(path).ok()?);
        let fields: std::collections::BTreeMap<String, TopField> =
            serde_json::from_reader(file).ok()?;
        let Some(TopField::Name(kind)) = fields.get("kind") else {
            return None;
        };
        let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
        Some(
            fields
                .iter()
                .filter(|(name, _)| names_a_file(kind, name))
                .filter_map(|(name, v)| match v {
                    TopField::Name(file) => Some((name.clone(), base.join(file))),
                    TopField::Other => None,
                })
                .collect(),
        )
    }

    /// Attributes a model constructor's error to this document's file.
    ///
    /// # Errors
    ///
    /// `built`'s error, naming the file.
    pub fn own<T>(&self, built: Result<T, ModelError>) -> Result<T, ModelError> {
        built.map_err(|e| match &self.file {
            Some(f) => e.in_file(f),
            None => e,
        })
    }

    /// Attributes an error to this document's file.
    pub fn err(&self, field: &str, problem: Problem) -> ModelError {
        let e = ModelError::new(field, problem);
        match &self.file {
            Some(f) => e.in_file(f),
            None => e,
        }
    }

    /// A required field.
    ///
    /// # Errors
    ///
    /// If it is missing.
    pub fn get(&self, field: &str) -> Result<&Value, ModelError> {
        self.fields
            .get(field)
            .ok_or_else(|| self.err(field, Problem::Missing))
    }

    /// A required finite number.
    ///
    /// # Errors
    ///
    /// If missing, not a number or not finite.
    pub fn number(&self, field: &str) -> Result<f64, ModelError> {
        let v = self.get(field)?;
        let x = v
            .as_f64()
            .ok_or_else(|| self.err(field, Problem::NotANumber { found: short(v) }))?;
        if !x.is_finite() {
            return Err(self.err(field, Problem::NotFinite));
        }
        Ok(x)
    }

    /// An optional finite number with a default.
    ///
    /// # Errors
    ///
    /// If present but not a finite number.
    pub fn number_or(&self, field: &str, default: f64) -> Result<f64, ModelError> {
        if self.fields.contains_key(field) {
            self.number(field)
        } else {
            Ok(default)
        }
    }

    /// A required non-negative integer.
    ///
    /// # Errors
    ///
    /// If missing or not a non-negative integer.
    pub fn count(&self, field: &str) -> Result<usize, ModelError> {
        let v = self.get(field)?;
        v.as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| self.err(field, Problem::NotACount { found: short(v) }))
    }

    /// An optional boolean with a default.
    ///
    /// # Errors
    ///
    /// If present but not a boolean.
    pub fn flag_or(&self, field: &str, default: bool) -> Result<bool, ModelError> {
        match self.fields.get(field) {
            None => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(v) => Err(self.err(field, Problem::NotAFlag { found: short(v) })),
        }
    }

    /// A finite vector: a JSON array of numbers, or the name of a 1-D `.npy` file.
    ///
    /// # Errors
    ///
    /// If missing, malformed or containing non-finite values.
    pub fn vector(&self, field: &str) -> Result<Vec<f64>, ModelError> {
        let (shape, data) = self.array(field)?;
        if shape.len() != 1 {
            return Err(self.err(field, Problem::NotAVector { shape }));
        }
        Ok(data)
    }

    /// A finite matrix: a JSON array of equal-length rows, or the name of a 2-D `.npy` file.
    /// Returns `(rows, cols, row-major data)`.
    ///
    /// # Errors
    ///
    /// If missing, ragged, malformed or containing non-finite values.
    pub fn matrix(&self, field: &str) -> Result<(usize, usize, Vec<f64>), ModelError> {
        let (shape, data) = self.array(field)?;
        match shape.as_slice() {
            &[r, c] => Ok((r, c, data)),
            _ => Err(self.err(field, Problem::NotAMatrix { shape })),
        }
    }

    /// A finite array of any rank, from JSON or a `.npy` file: `(shape, row-major data)`.
    ///
    /// # Errors
    ///
    /// If missing, ragged, malformed or containing non-finite values.
    pub fn array(&self, field: &str) -> Result<(Vec<usize>, Vec<f64>), ModelError> {
        let v = self.get(field)?;
        let (shape, data) = match v {
            Value::String(name) => {
                let path = self.base.join(name);
                let arr =
                    crate::io::npy::read_npy_within(&path, &self.budget).map_err(|source| {
                        let path = path.clone();
                        self.err(field, Problem::ArrayFile { path, source })
                    })?;
                let data = arr.data.to_f64();
                (arr.shape, data)
            }
            _ => {
                let mut shape = Vec::new();
                let mut data = Vec::new();
                flatten(v, 0, &mut shape, &mut data).map_err(|p| self.err(field, p))?;
                (shape, data)
            }
        };
        if let Some(i) = data.iter().position(|x| !x.is_finite()) {
            let index = entry_index(i, &shape);
            return Err(self.err(field, Problem::NonFiniteEntry { index }));
        }
        Ok((shape, data))
    }
}

/// Whether field `name` of a model of `kind` may name an array or data file.
fn names_a_file(kind: &str, name: &str) -> bool {
    super::schema::find(kind)
        .and_then(|s| s.field(name))
        .is_some_and(|f| f.names_a_file)
}

/// A top-level field of a model file as [`ModelDoc::array_files_of`] reads it: a string, or
/// anything else, skipped.
enum TopField {
    Name(String),
    Other,
}

impl<'de> serde::Deserialize<'de> for TopField {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = TopField;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_str<E>(self, v: &str) -> Result<TopField, E> {
                Ok(TopField::Name(v.to_owned()))
            }
            fn visit_bool<E>(self, _: bool) -> Result<TopField, E> {
                Ok(TopField::Other)
            }
            fn visit_i64<E>(self, _: i64) -> Result<TopField, E> {
                Ok(TopField::Other)
            }
            fn visit_u64<E>(self, _: u64) -> Result<TopField, E> {
                Ok(TopField::Other)
            }
            fn visit_f64<E>(self, _: f64) -> Result<TopField, E> {
                Ok(TopField::Other)
            }
            fn visit_unit<E>(self) -> Result<TopField, E> {
                Ok(TopField::Other)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<TopField, A::Error> {
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(TopField::Other)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<TopField, A::Error> {
                while map
                    .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(TopField::Other)
            }
        }
        d.deserialize_any(Visit)
    }
}

/// The index of the `flat`-th entry of a row-major array of `shape`: `3` for a vector,
/// `(0, 1)` for a matrix.
fn entry_index(flat: usize, shape: &[usize]) -> String {
    if shape.len() <= 1 {
        return flat.to_string();
    }
    let mut rest = flat;
    let mut index = vec![0; shape.len()];
    for (slot, &n) in index.iter_mut().zip(shape).rev() {
        *slot = rest % n.max(1);
        rest /= n.max(1);
    }
    let parts: Vec<String> = index.iter().map(usize::to_string).collect();
    format!("({})", parts.join(", "))
}

/// Flattens nested JSON arrays of numbers, checking they are rectangular.
fn flatten(
    v: &Value,
    depth: usize,
    shape: &mut Vec<usize>,
    out: &mut Vec<f64>,
) -> Result<(), Problem> {
    match v {
        Value::Array(items) => {
            match shape.get(depth) {
                None => shape.push(items.len()),
                Some(&n) if n != items.len() => {
                    return Err(Problem::Ragged {
                        found: items.len(),
                        depth,
                        expected: n,
                    });
                }
                Some(_) => {}
            }
            for item in items {
                flatten(item, depth + 1, shape, out)?;
            }
            Ok(())
        }
        Value::Number(n) => {
            if depth != shape.len() {
                return Err(Problem::Mixed);
            }
            out.push(n.as_f64().unwrap_or(f64::NAN));
            Ok(())
        }
        other => Err(Problem::NotNumbers {
            found: short(other),
        }),
    }
}

/// A short description of a JSON value for error messages.
fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 40 {
        format!("{}…", s.chars().take(40).collect::<String>())
    } else {
        s
    }
}
