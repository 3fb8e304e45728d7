//! The fields of every model kind, discrete and continuous, generated from the serde types of
//! the kinds ([`ModelFile`] and [`ModelSpec`]): what `langevin model --schema` prints, and what
//! an unknown field is checked against.
//!
//! Both parsers ([`ModelDoc`](super::ModelDoc) for the discrete kinds, the continuous
//! [`ModelSpec`]) refuse a field their kind does not have, naming it, the kind's fields and,
//! for a near miss, the field that was probably meant; tests check that every field of the
//! schema is one the parser reads.

use super::kinds::ModelFile;
use crate::continuous::ModelSpec;
use serde_json::{Map, Value, json};
use std::sync::OnceLock;

/// One field of a model kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// Its name in the file.
    pub name: String,
    /// Whether a file must have it.
    pub required: bool,
    /// Whether it may name a file (an array or data file, relative to the model file).
    pub names_a_file: bool,
    /// What it means (with its default when optional).
    pub doc: String,
}

/// A model kind and its fields, read from the generated schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KindSchema {
    /// The `kind` value.
    pub kind: String,
    /// `binary`, `ordinal`, `categorical` or `continuous`.
    pub domain: String,
    /// What the model is.
    pub doc: String,
    /// Its fields, `kind` excluded, by name.
    pub fields: Vec<Field>,
}

/// The JSON Schema (draft 2020-12) of a model file: one of the kinds, generated from
/// [`ModelFile`] and [`ModelSpec`].
pub fn json_schema() -> Value {
    let mut one_of = Vec::new();
    let mut defs = Map::new();
    for schema in [
        schemars::schema_for!(ModelFile),
        schemars::schema_for!(ModelSpec),
    ] {
        let mut value = schema.to_value();
        if let Some(Value::Array(kinds)) = value.get_mut("oneOf").map(Value::take) {
            // Each kind titled by its name.
            one_of.extend(kinds.into_iter().map(|mut k| {
                let title = k.pointer("/properties/kind/const").cloned();
                if let (Some(t), Some(o)) = (title, k.as_object_mut()) {
                    o.insert("title".into(), t);
                }
                k
            }));
        }
        if let Some(Value::Object(d)) = value.get_mut("$defs").map(Value::take) {
            defs.extend(d);
        }
    }
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "langevin model file",
        "description": "A model: its `kind` and that kind's fields; arrays inline or as files relative to the model file",
        "oneOf": one_of,
        "$defs": defs,
    })
}

/// Every model kind the command line reads, in the order of the schema.
pub fn kinds() -> &'static [KindSchema] {
    static KINDS: OnceLock<Vec<KindSchema>> = OnceLock::new();
    KINDS.get_or_init(|| {
        let schema = json_schema();
        let defs = schema.get("$defs").cloned().unwrap_or(Value::Null);
        schema
            .get("oneOf")
            .and_then(Value::as_array)
            .map(|kinds| kinds.iter().filter_map(|k| kind_of(k, &defs)).collect())
            .unwrap_or_default()
    })
}

/// The schema of `kind`, if it is one.
pub fn find(kind: &str) -> Option<&'static KindSchema> {
    kinds().iter().find(|k| k.kind == kind)
}

/// `value` with a `$ref` into `defs` followed.
fn resolve<'a>(value: &'a Value, defs: &'a Value) -> &'a Value {
    match value.get("$ref").and_then(Value::as_str) {
        Some(r) => r
            .strip_prefix("#/$defs/")
            .and_then(|name| defs.get(name))
            .unwrap_or(value),
        None => value,
    }
}

/// The parts of one variant of the schema: itself, the definition it refers to, and the
/// members of its `allOf`.
fn parts<'a>(variant: &'a Value, defs: &'a Value) -> Vec<&'a Value> {
    let mut out = vec![variant, resolve(variant, defs)];
    if let Some(all) = variant.get("allOf").and_then(Value::as_array) {
        out.extend(all.iter().map(|p| resolve(p, defs)));
    }
    out
}

fn kind_of(variant: &Value, defs: &Value) -> Option<KindSchema> {
    let parts = parts(variant, defs);
    let string = |key: &str| {
        parts
            .iter()
            .find_map(|p| p.get(key).and_then(Value::as_str))
            .unwrap_or_default()
            .to_owned()
    };
    let kind = parts
        .iter()
        .find_map(|p| p.pointer("/properties/kind/const").and_then(Value::as_str))?
        .to_owned();
    let required: Vec<&str> = parts
        .iter()
        .filter_map(|p| p.get("required").and_then(Value::as_array))
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let mut fields: Vec<Field> = parts
        .iter()
        .filter_map(|p| p.get("properties").and_then(Value::as_object))
        .flatten()
        .filter(|(name, _)| name.as_str() != "kind")
        .map(|(name, p)| Field {
            name: name.clone(),
            required: required.contains(&name.as_str()),
            names_a_file: names_a_file(p, defs),
            doc: p
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
        })
        .collect();
    fields.sort_by(|a, b| a.name.cmp(&b.name));
    fields.dedup_by(|a, b| a.name == b.name);
    Some(KindSchema {
        kind,
        domain: string("x-domain"),
        doc: string("description"),
        fields,
    })
}

/// Whether a field's schema admits a free string (a file name), in any of its branches.
fn names_a_file(field: &Value, defs: &Value) -> bool {
    let field = resolve(field, defs);
    let free_string = field.get("type").and_then(Value::as_str) == Some("string")
        && field.get("enum").is_none()
        && field.get("const").is_none();
    free_string
        || ["anyOf", "oneOf"].iter().any(|key| {
            field
                .get(key)
                .and_then(Value::as_array)
                .is_some_and(|branches| branches.iter().any(|b| names_a_file(b, defs)))
        })
}

impl KindSchema {
    /// The field called `name`.
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// Refuses a field this kind does not have.
    ///
    /// # Errors
    ///
    /// The first unknown field, with the kind's fields and a suggestion for a near miss.
    pub fn check_fields(&self, fields: &Map<String, Value>) -> Result<(), UnknownField> {
        let Some(unknown) = fields
            .keys()
            .find(|k| k.as_str() != "kind" && self.field(k).is_none())
        else {
            return Ok(());
        };
        let names: Vec<&str> = self.fields.iter().map(|f| f.name.as_str()).collect();
        Err(UnknownField {
            field: unknown.clone(),
            kind: self.kind.clone(),
            suggestion: suggestion(unknown, &names).map(str::to_owned),
            fields: names.into_iter().map(str::to_owned).collect(),
        })
    }
}

/// A field a model kind does not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown field for kind `{kind}`; {}its fields are {} (`langevin model --schema` lists them)",
    suggestion.as_ref().map(|s| format!("did you mean `{s}`? ")).unwrap_or_default(),
    fields.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
)]
pub struct UnknownField {
    /// The field, as the file spells it.
    pub field: String,
    /// The kind.
    pub kind: String,
    /// The near miss of `field` among the kind's fields, if any.
    pub suggestion: Option<String>,
    /// The kind's fields.
    pub fields: Vec<String>,
}

impl UnknownField {
    /// The field's name escaped, so that a message naming it stays on one line.
    pub fn escaped_field(&self) -> String {
        self.field.escape_debug().to_string()
    }
}

/// The candidate closest to `name` when it is a near miss: an edit distance of at most a third
/// of the longer name (at least 1), or the same name in another case.
pub fn suggestion<'a>(name: &str, candidates: &[&'a str]) -> Option<&'a str> {
    candidates
        .iter()
        .map(|&c| (edit_distance(&name.to_lowercase(), &c.to_lowercase()), c))
        .filter(|&(d, c)| d <= (name.chars().count().max(c.chars().count()) / 3).max(1))
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

/// Optimal-string-alignment distance (a transposition counts as one edit).
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let width = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * width];
    for i in 0..=a.len() {
        for j in 0..=b.len() {
            d[i * width + j] = if i == 0 || j == 0 {
                i + j
            } else {
                let cost = usize::from(a[i - 1] != b[j - 1]);
                let mut best = (d[(i - 1) * width + j] + 1)
                    .min(d[i * width + j - 1] + 1)
                    .min(d[(i - 1) * width + j - 1] + cost);
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                    best = best.min(d[(i - 2) * width + j - 2] + 1);
                }
                best
            };
        }
    }
    d[a.len() * width + b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_misses_are_suggested() {
        let names = ["rows", "cols", "coupling", "field", "periodic"];
        assert_eq!(suggestion("feild", &names), Some("field"));
        assert_eq!(suggestion("periodc", &names), Some("periodic"));
        assert_eq!(suggestion("Coupling", &names), Some("coupling"));
        assert_eq!(suggestion("temperature", &names), None);
        assert_eq!(edit_distance("abc", "abc"), 0);
        assert_eq!(edit_distance("ab", "ba"), 1);
    }

    #[test]
    fn kinds_are_unique_and_the_schema_lists_them() {
        let kinds = kinds();
        assert_eq!(kinds.len(), 13);
        for (i, k) in kinds.iter().enumerate() {
            assert!(kinds[..i].iter().all(|o| o.kind != k.kind), "{}", k.kind);
            assert!(
                ["binary", "ordinal", "categorical", "continuous"].contains(&k.domain.as_str()),
                "{}: domain {:?}",
                k.kind,
                k.domain
            );
            assert!(!k.doc.is_empty(), "{}", k.kind);
            for f in &k.fields {
                assert!(!f.doc.is_empty(), "{}.{}", k.kind, f.name);
            }
        }
        let schema = json_schema();
        let titles: Vec<&str> = schema["oneOf"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k["title"].as_str().unwrap())
            .collect();
        let names: Vec<&str> = kinds.iter().map(|k| k.kind.as_str()).collect();
        assert_eq!(titles, names);
        let lattice = find("ising_lattice").unwrap();
        let required: Vec<&str> = lattice
            .fields
            .iter()
            .filter(|f| f.required)
            .map(|f| f.name.as_str())
            .collect();
        assert_eq!(required, ["cols", "coupling", "rows"]);
        assert!(lattice.fields.iter().all(|f| !f.names_a_file));
        let rbm = find("rbm").unwrap();
        assert!(
            rbm.fields
                .iter()
                .all(|f| (f.names_a_file && f.required) || f.name == "weights")
        );
        assert!(!rbm.field("weights").unwrap().required);
        let mixture = find("lattice_mixture").unwrap();
        assert!(!mixture.field("distance").unwrap().names_a_file);
        assert!(mixture.field("modes").unwrap().names_a_file);
        assert!(
            find("logistic_regression")
                .unwrap()
                .field("X")
                .unwrap()
                .names_a_file
        );
        assert!(
            !find("gaussian_sum")
                .unwrap()
                .field("centers")
                .unwrap()
                .names_a_file
        );
    }
}

#[cfg(test)]
mod parser_agreement {
    //! Every field the schema lists is one its parser reads: dropping a required field, or
    //! giving any field a value of the wrong type, is refused naming that field.
    use super::*;
    use crate::continuous::ModelSpec;
    use crate::models::{BinaryModel, LabelModel, ModelDoc};

    /// A valid file of every kind with every field present.
    pub(super) const FULL: &[&str] = &[
        r#"{"kind":"binary_quadratic","W":[[0,1],[1,0]],"b":[0,0]}"#,
        r#"{"kind":"ising","n":3,"edges":[[0,1,0.5]],"field":[0,0,0]}"#,
        r#"{"kind":"ising_lattice","rows":2,"cols":2,"coupling":0.1,"field":0.2,"periodic":false}"#,
        r#"{"kind":"rbm","W":[[1,2],[3,4]],"b":[0,0],"c":[0,0],"weights":"bf16"}"#,
        r#"{"kind":"binary_logistic","X":[[1,0],[0,1]],"y":[0,1],"beta_true":[1,0]}"#,
        r#"{"kind":"ordinal_quadratic","states":3,"mu":[1,1],"A":[[1,0],[0,1]],"b":[0,0]}"#,
        r#"{"kind":"potts","states":3,"n":2,"edges":[[0,1,0.5]],"field":[[0,0,0],[0,0,0]]}"#,
        r#"{"kind":"lattice_mixture","states":5,"modes":[[1,1]],"scale":1,"distance":"squared"}"#,
        r#"{"kind":"quartic_mixture","dim":2,"states":3,"components":1,"sigma":1,"seed":0}"#,
        r#"{"kind":"gaussian_sum","centers":[[0,1]]}"#,
        r#"{"kind":"logistic_regression","X":[[1,0],[0,1]],"y":[0,1],"prior_var":1}"#,
        r#"{"kind":"ridge_regression","X":[[1,0],[0,1]],"y":[0,1],"noise_var":1,"prior_var":1}"#,
        r#"{"kind":"gaussian_mixture","a":[[1,0]],"scale":0.5}"#,
    ];

    /// Why [`load`] refused a document.
    #[derive(Debug, thiserror::Error)]
    enum LoadError {
        /// A continuous model's document, refused by its parser.
        #[error(transparent)]
        Continuous(#[from] serde_json::Error),
        /// A discrete model's document, refused by its parser.
        #[error(transparent)]
        Discrete(#[from] crate::models::ModelError),
        /// A kind no parser reads.
        #[error("unknown kind")]
        UnknownKind,
    }

    /// Loads a document as the command line would.
    fn load(value: &Value) -> Result<(), LoadError> {
        let text = value.to_string();
        let kind = value["kind"].as_str().unwrap_or("");
        if find(kind).is_some_and(|k| k.domain == "continuous") {
            return Ok(serde_json::from_str::<ModelSpec>(&text).map(|_| ())?);
        }
        let doc = ModelDoc::parse(&text, std::path::PathBuf::new())?;
        if BinaryModel::from_doc(&doc)?.is_some() {
            return Ok(());
        }
        LabelModel::from_doc(&doc)?
            .map(|_| ())
            .ok_or(LoadError::UnknownKind)
    }

    #[test]
    fn every_listed_field_is_read() {
        assert_eq!(FULL.len(), kinds().len());
        for text in FULL {
            let full: Value = serde_json::from_str(text).unwrap();
            let schema = find(full["kind"].as_str().unwrap()).unwrap();
            load(&full).unwrap_or_else(|e| panic!("{text}: {e}"));
            let names: Vec<&str> = full
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .filter(|&k| k != "kind")
                .collect();
            assert_eq!(names.len(), schema.fields.len(), "{text}: not every field");
            for f in &schema.fields {
                let name = f.name.as_str();
                if f.required {
                    let mut without = full.clone();
                    without.as_object_mut().unwrap().remove(name);
                    let e = load(&without).expect_err(name).to_string();
                    assert!(e.contains(name), "{}: {e}", schema.kind);
                }
                // `beta_true` is kept for reference only.
                if name != "beta_true" {
                    let mut wrong = full.clone();
                    wrong[name] = json!({"not": "a value"});
                    assert!(
                        load(&wrong).is_err(),
                        "{}: `{}` not read",
                        schema.kind,
                        name
                    );
                }
            }
            let mut extra = full.clone();
            extra["extra_field"] = json!(1);
            let e = load(&extra).expect_err("unknown field").to_string();
            assert!(e.contains("extra_field"), "{e}");
            // A key with control characters is named escaped, on one line (continuous files
            // are checked the same way by `ModelSpec::read` before serde sees them).
            if schema.domain != "continuous" {
                let mut odd = full.clone();
                odd["st\nat\u{7}es"] = json!(1);
                let e = load(&odd).expect_err("unknown field").to_string();
                assert!(!e.contains('\n') && e.contains("st\\nat"), "{e}");
            }
        }
    }
}

#[cfg(test)]
mod validation {
    //! Every example model file of the repository, every file `langevin model` writes and one
    //! file of every kind validate against the generated schema, read into their kind's type
    //! and round-trip through it; unknown fields are refused by both.
    use super::*;
    use crate::continuous::ModelSpec;
    use crate::models::ModelDoc;
    use crate::models::zoo;
    use std::path::{Path, PathBuf};

    /// Whether `value` satisfies `node` of the generated schema `root`: the keywords the
    /// generator emits (`$ref`, `type`, `const`, `enum`, `properties`, `required`,
    /// `additionalProperties`, `items`, `anyOf`, `oneOf`, `minimum`); any other keyword is
    /// refused, so that the check cannot pass by skipping one.
    fn valid(root: &Value, node: &Value, value: &Value) -> bool {
        let Some(node) = node.as_object() else {
            return node.as_bool().unwrap_or(false);
        };
        node.iter().all(|(key, want)| match key.as_str() {
            "$schema" | "title" | "description" | "format" | "x-domain" | "$defs" => true,
            "$ref" => {
                let name = want.as_str().and_then(|r| r.strip_prefix("#/$defs/"));
                let def = name.and_then(|n| root.get("$defs")?.get(n));
                def.is_some_and(|d| valid(root, d, value))
            }
            "type" => match want.as_str() {
                // `null` is never valid: an optional field is left out.
                Some("object") => value.is_object(),
                Some("array") => value.is_array(),
                Some("string") => value.is_string(),
                Some("number") => value.is_number(),
                Some("integer") => value.is_u64() || value.is_i64(),
                Some("boolean") => value.is_boolean(),
                _ => false,
            },
            "const" => value == want,
            "enum" => want.as_array().is_some_and(|e| e.contains(value)),
            "minimum" => match (value.as_f64(), want.as_f64()) {
                (Some(v), Some(m)) => v >= m,
                _ => !value.is_number(),
            },
            "properties" => want.as_object().is_some_and(|props| {
                props
                    .iter()
                    .all(|(k, p)| value.get(k).is_none_or(|v| valid(root, p, v)))
            }),
            "required" => want.as_array().is_some_and(|r| {
                r.iter()
                    .all(|k| k.as_str().is_some_and(|k| value.get(k).is_some()))
            }),
            "additionalProperties" => {
                let props = node.get("properties").and_then(Value::as_object);
                value.as_object().is_none_or(|fields| {
                    fields.iter().all(|(k, v)| {
                        props.is_some_and(|p| p.contains_key(k)) || valid(root, want, v)
                    })
                })
            }
            "items" => value
                .as_array()
                .is_none_or(|items| items.iter().all(|v| valid(root, want, v))),
            "anyOf" => want
                .as_array()
                .is_some_and(|b| b.iter().any(|n| valid(root, n, value))),
            "oneOf" => want
                .as_array()
                .is_some_and(|b| b.iter().filter(|n| valid(root, n, value)).count() == 1),
            _ => false,
        })
    }

    /// Validates `text` against the schema and round-trips it through its kind's type.
    fn check(text: &str, origin: &str) {
        let schema = json_schema();
        let value: Value = serde_json::from_str(text).unwrap();
        assert!(
            valid(&schema, &schema, &value),
            "{origin}: not valid: {text}"
        );
        let kind = value["kind"].as_str().unwrap();
        if find(kind).unwrap().domain == "continuous" {
            let spec: ModelSpec = serde_json::from_value(value.clone()).unwrap();
            let back = serde_json::to_value(&spec).unwrap();
            assert_eq!(
                serde_json::from_value::<ModelSpec>(back).unwrap(),
                spec,
                "{origin}"
            );
        } else {
            let file: ModelFile =
                serde_json::from_value(value.clone()).unwrap_or_else(|e| panic!("{origin}: {e}"));
            let back = serde_json::to_value(&file).unwrap();
            assert!(
                valid(&schema, &schema, &back),
                "{origin}: written back, not valid"
            );
            assert_eq!(
                serde_json::from_value::<ModelFile>(back).unwrap(),
                file,
                "{origin}"
            );
            ModelDoc::parse(text, PathBuf::new()).unwrap_or_else(|e| panic!("{origin}: {e}"));
        }
        let mut extra = value;
        extra["not_a_field"] = json!(1);
        assert!(
            !valid(&schema, &schema, &extra),
            "{origin}: an unknown field validates"
        );
        assert!(serde_json::from_value::<ModelFile>(extra.clone()).is_err());
        assert!(serde_json::from_value::<ModelSpec>(extra).is_err());
    }

    #[test]
    fn the_repository_s_model_files_validate_and_round_trip() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut seen = 0;
        for folder in ["fuzz/corpus/model_file", "data/ising"] {
            for entry in std::fs::read_dir(root.join(folder)).unwrap() {
                let path = entry.unwrap().path();
                if path.extension().is_some_and(|e| e == "json") {
                    check(
                        &std::fs::read_to_string(&path).unwrap(),
                        &path.display().to_string(),
                    );
                    seen += 1;
                }
            }
        }
        assert!(seen >= 12, "{seen} files");
    }

    #[test]
    fn every_generated_kind_validates_and_round_trips() {
        use zoo::{GaussianStructure, LatticeGaussianSpec};
        let generated = [
            zoo::IsingLatticeSpec::default().generate(),
            zoo::BarabasiAlbertSpec::default().generate(),
            zoo::RbmSpec::default().generate(),
            zoo::BinaryQuadraticSpec::default().generate(),
            zoo::LogisticRegressionSpec::default().generate(),
            LatticeGaussianSpec::default().generate(),
            LatticeGaussianSpec {
                structure: GaussianStructure::SparseCycle { coupling: 0.25 },
                ..LatticeGaussianSpec::default()
            }
            .generate(),
            zoo::LatticeMixtureSpec::default().generate(),
        ];
        let mut kinds = Vec::new();
        for spec in generated {
            let spec = spec.unwrap();
            check(&spec.to_json(), "inline");
            check(&spec.to_json_with_files("model").0, "with files");
            kinds.push(spec.kind.clone());
        }
        kinds.sort();
        kinds.dedup();
        assert_eq!(kinds.len(), 7, "{kinds:?}");
    }

    #[test]
    fn one_file_of_every_kind_validates_and_round_trips() {
        for text in super::parser_agreement::FULL {
            check(text, text);
        }
        // The check refuses what the schema refuses.
        let schema = json_schema();
        for bad in [
            r#"{"kind":"rbm","W":[[1]],"b":[0]}"#,
            r#"{"kind":"ising_lattice","rows":-1,"cols":2,"coupling":0.1}"#,
            r#"{"kind":"lattice_mixture","states":5,"modes":[[1]],"scale":1,"distance":"l1"}"#,
            r#"{"kind":"potts","states":3,"n":2,"field":[["x"]]}"#,
            r#"{"kind":"no_such_kind"}"#,
        ] {
            let value: Value = serde_json::from_str(bad).unwrap();
            assert!(!valid(&schema, &schema, &value), "{bad}");
        }
    }
}
