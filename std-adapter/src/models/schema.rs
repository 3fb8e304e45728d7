//! The fields of every model kind, discrete and continuous: what the parsers accept, what
//! `langevin model --schema` prints, and what an unknown field is checked against.
//!
//! Both parsers ([`ModelDoc`](super::ModelDoc) for the discrete kinds, the continuous
//! `ModelSpec`) refuse a field their kind does not list here, naming it, the kind's fields and,
//! for a near miss, the field that was probably meant; tests check that every listed field is
//! one the parser reads.

use serde_json::{Map, Value, json};

/// What a field holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    /// A finite number.
    Number,
    /// A non-negative integer.
    Count,
    /// `true` or `false`.
    Flag,
    /// One of the listed strings.
    Choice(&'static [&'static str]),
    /// A vector: a JSON array of numbers, or the name of a 1-D `.npy` file (relative to the
    /// model file's folder).
    Vector,
    /// A matrix: a JSON array of equal-length rows, or the name of a 2-D `.npy` file.
    Matrix,
    /// Data of a continuous model: a JSON array (of numbers, or of rows), or the name of a
    /// `.npy` or CSV file.
    Data,
}

/// One field of a model kind.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    /// Its name in the file.
    pub name: &'static str,
    /// What it holds.
    pub ty: FieldType,
    /// Whether a file must have it.
    pub required: bool,
    /// What it means (with its default when optional).
    pub doc: &'static str,
}

/// A model kind and its fields.
#[derive(Debug, Clone, Copy)]
pub struct KindSchema {
    /// The `kind` value.
    pub kind: &'static str,
    /// `binary`, `ordinal`, `categorical` or `continuous`.
    pub domain: &'static str,
    /// What the model is.
    pub doc: &'static str,
    /// Its fields, `kind` excluded.
    pub fields: &'static [Field],
}

const fn req(name: &'static str, ty: FieldType, doc: &'static str) -> Field {
    Field {
        name,
        ty,
        required: true,
        doc,
    }
}

const fn opt(name: &'static str, ty: FieldType, doc: &'static str) -> Field {
    Field {
        name,
        ty,
        required: false,
        doc,
    }
}

use FieldType::{Choice, Count, Data, Flag, Matrix, Number, Vector};

/// Every model kind the command line reads.
pub const KINDS: &[KindSchema] = &[
    KindSchema {
        kind: "binary_quadratic",
        domain: "binary",
        doc: "U(x) = xᵀWx + bᵀx over x ∈ {0,1}^d",
        fields: &[
            req("W", Matrix, "d × d couplings"),
            req("b", Vector, "d linear terms"),
        ],
    },
    KindSchema {
        kind: "ising",
        domain: "binary",
        doc: "Ising model on a graph: U(x) = Σ_edges J_ij s_i s_j + Σ_i h_i s_i, s = 2x − 1",
        fields: &[
            req("n", Count, "nodes"),
            opt(
                "edges",
                Matrix,
                "edges [[i, j, J_ij], ..], each once (default: none)",
            ),
            opt("field", Vector, "n fields h_i (default: zeros)"),
        ],
    },
    KindSchema {
        kind: "ising_lattice",
        domain: "binary",
        doc: "Ising model on a rows × cols nearest-neighbour lattice",
        fields: &[
            req("rows", Count, "lattice rows"),
            req("cols", Count, "lattice columns"),
            req("coupling", Number, "coupling J of every bond"),
            opt("field", Number, "field h at every site (default 0)"),
            opt("periodic", Flag, "wrap around the edges (default true)"),
        ],
    },
    KindSchema {
        kind: "rbm",
        domain: "binary",
        doc: "Restricted Boltzmann machine over its visible units, hidden units summed out",
        fields: &[
            req("W", Matrix, "hidden × visible weights"),
            req("b", Vector, "visible biases"),
            req("c", Vector, "hidden biases"),
            opt(
                "weights",
                Choice(&["f32", "bf16"]),
                "storage of W (default \"f32\"); \"bf16\" rounds W to bfloat16, and the model is \
                 the RBM with the rounded weights",
            ),
        ],
    },
    KindSchema {
        kind: "binary_logistic",
        domain: "binary",
        doc: "Bayesian logistic regression over binary coefficients β ∈ {0,1}^d",
        fields: &[
            req("X", Matrix, "m × d covariates"),
            req("y", Vector, "m responses, 0 or 1"),
            opt(
                "beta_true",
                Vector,
                "the coefficients the data were generated from (kept for reference, not read)",
            ),
        ],
    },
    KindSchema {
        kind: "ordinal_quadratic",
        domain: "ordinal",
        doc: "U(x) = −½ (x−μ)ᵀ A (x−μ) + bᵀx over {0..S−1}^d",
        fields: &[
            req("states", Count, "values per coordinate S (2..=65535)"),
            req("mu", Vector, "d centres μ"),
            req("A", Matrix, "d × d precision"),
            opt("b", Vector, "d linear terms (default: zeros)"),
        ],
    },
    KindSchema {
        kind: "potts",
        domain: "categorical",
        doc: "Potts model: U(x) = Σ_edges J_ij [x_i = x_j] + Σ_i h_{i,x_i}",
        fields: &[
            req("states", Count, "labels per node S (2..=65535)"),
            req("n", Count, "nodes"),
            opt(
                "edges",
                Matrix,
                "edges [[i, j, J_ij], ..], each once (default: none)",
            ),
            opt("field", Matrix, "n × S fields h (default: zeros)"),
        ],
    },
    KindSchema {
        kind: "lattice_mixture",
        domain: "ordinal",
        doc: "U(x) = ln Σ_k exp(−dist(x, μ_k) / τ) over {0..S−1}^d",
        fields: &[
            req("states", Count, "values per coordinate S (2..=65535)"),
            req("modes", Matrix, "K × d modes μ_k, inside the lattice"),
            req("scale", Number, "τ > 0"),
            opt(
                "distance",
                Choice(&["l2", "squared"]),
                "distance to a mode (default \"l2\")",
            ),
        ],
    },
    KindSchema {
        kind: "quartic_mixture",
        domain: "ordinal",
        doc: "A seeded mixture of quartic wells over {0..S−1}^d",
        fields: &[
            req("dim", Count, "dimension d"),
            req("states", Count, "values per coordinate S (2..=65535)"),
            req("components", Count, "wells K ≥ 1"),
            req("sigma", Number, "width σ > 0"),
            req("seed", Count, "seed of the wells"),
        ],
    },
    KindSchema {
        kind: "gaussian_sum",
        domain: "continuous",
        doc: "Potential V(θ) = Σ_i ½|θ − c_i|², one term per centre",
        fields: &[req("centers", Matrix, "N × d centres, inline")],
    },
    KindSchema {
        kind: "logistic_regression",
        domain: "continuous",
        doc: "Bayesian logistic regression with a Gaussian prior",
        fields: &[
            req("X", Data, "N × d covariates"),
            req("y", Data, "N labels, {0, 1} or {−1, 1}"),
            req("prior_var", Number, "prior variance v"),
        ],
    },
    KindSchema {
        kind: "ridge_regression",
        domain: "continuous",
        doc: "Bayesian linear regression with a Gaussian prior",
        fields: &[
            req("X", Data, "N × d covariates"),
            req("y", Data, "N responses"),
            req("noise_var", Number, "noise variance λ"),
            req("prior_var", Number, "prior variance v"),
        ],
    },
    KindSchema {
        kind: "gaussian_mixture",
        domain: "continuous",
        doc: "Potential Σ_i w f_i(θ), each term a symmetric two-component Gaussian mixture around ±a_i",
        fields: &[
            req("a", Matrix, "N × d parameter vectors, inline"),
            opt("scale", Number, "weight w of every term (default 1/N)"),
        ],
    },
];

/// The schema of `kind`, if it is one.
pub fn find(kind: &str) -> Option<&'static KindSchema> {
    KINDS.iter().find(|k| k.kind == kind)
}

impl KindSchema {
    /// The field called `name`.
    pub fn field(&self, name: &str) -> Option<&'static Field> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// Refuses a field this kind does not have.
    ///
    /// # Errors
    ///
    /// `(field, message)`: the first unknown field, with the kind's fields and a suggestion
    /// for a near miss.
    pub fn check_fields(&self, fields: &Map<String, Value>) -> Result<(), (String, String)> {
        let Some(unknown) = fields
            .keys()
            .find(|k| k.as_str() != "kind" && self.field(k).is_none())
        else {
            return Ok(());
        };
        let names: Vec<&str> = self.fields.iter().map(|f| f.name).collect();
        let hint = suggestion(unknown, &names)
            .map(|s| format!("did you mean `{s}`? "))
            .unwrap_or_default();
        // A key may hold any characters: escaped, the message stays on one line.
        Err((
            unknown.escape_debug().to_string(),
            format!(
                "unknown field for kind `{}`; {hint}its fields are {} (`langevin model --schema` lists them)",
                self.kind,
                names
                    .iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ))
    }

    /// This kind as a JSON Schema object.
    pub fn json_schema(&self) -> Value {
        let mut properties = Map::new();
        properties.insert(
            "kind".into(),
            json!({"const": self.kind, "description": self.doc}),
        );
        for f in self.fields {
            let mut p = type_schema(f.ty);
            if let Value::Object(m) = &mut p {
                m.insert("description".into(), Value::String(f.doc.into()));
            }
            properties.insert(f.name.into(), p);
        }
        let mut required = vec!["kind"];
        required.extend(self.fields.iter().filter(|f| f.required).map(|f| f.name));
        json!({
            "title": self.kind,
            "description": format!("{} ({} model)", self.doc, self.domain),
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false,
        })
    }
}

fn type_schema(ty: FieldType) -> Value {
    let file = json!({"type": "string", "description": "a file relative to the model file"});
    let numbers = json!({"type": "array", "items": {"type": "number"}});
    let rows = json!({"type": "array", "items": {"type": "array", "items": {"type": "number"}}});
    match ty {
        Number => json!({"type": "number"}),
        Count => json!({"type": "integer", "minimum": 0}),
        Flag => json!({"type": "boolean"}),
        Choice(values) => json!({"enum": values}),
        Vector => json!({"anyOf": [numbers, file]}),
        Matrix => json!({"anyOf": [rows, file]}),
        Data => json!({"anyOf": [rows, numbers, file]}),
    }
}

/// The JSON Schema (draft 2020-12) of a model file: one of the kinds.
pub fn json_schema() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "langevin model file",
        "oneOf": KINDS.iter().map(KindSchema::json_schema).collect::<Vec<_>>(),
    })
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
        for (i, k) in KINDS.iter().enumerate() {
            assert!(KINDS[..i].iter().all(|o| o.kind != k.kind), "{}", k.kind);
        }
        let schema = json_schema();
        assert_eq!(schema["oneOf"].as_array().unwrap().len(), KINDS.len());
        let lattice = &find("ising_lattice").unwrap().json_schema();
        assert_eq!(lattice["additionalProperties"], false);
        assert_eq!(
            lattice["required"],
            json!(["kind", "rows", "cols", "coupling"])
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
    const FULL: &[&str] = &[
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

    /// Loads a document as the command line would; the error's text on failure.
    fn load(value: &Value) -> Result<(), String> {
        let text = value.to_string();
        let kind = value["kind"].as_str().unwrap_or("");
        if find(kind).is_some_and(|k| k.domain == "continuous") {
            return serde_json::from_str::<ModelSpec>(&text)
                .map(|_| ())
                .map_err(|e| e.to_string());
        }
        let doc = ModelDoc::parse(&text, std::path::PathBuf::new()).map_err(|e| e.to_string())?;
        if BinaryModel::from_doc(&doc)
            .map_err(|e| e.to_string())?
            .is_some()
        {
            return Ok(());
        }
        LabelModel::from_doc(&doc)
            .map_err(|e| e.to_string())?
            .map(|_| ())
            .ok_or_else(|| "unknown kind".into())
    }

    #[test]
    fn every_listed_field_is_read() {
        assert_eq!(FULL.len(), KINDS.len());
        for (text, schema) in FULL.iter().zip(KINDS) {
            let full: Value = serde_json::from_str(text).unwrap();
            assert_eq!(full["kind"], schema.kind);
            load(&full).unwrap_or_else(|e| panic!("{text}: {e}"));
            let names: Vec<&str> = full
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .filter(|&k| k != "kind")
                .collect();
            assert_eq!(names.len(), schema.fields.len(), "{text}: not every field");
            for f in schema.fields {
                if f.required {
                    let mut without = full.clone();
                    without.as_object_mut().unwrap().remove(f.name);
                    let e = load(&without).expect_err(f.name);
                    assert!(e.contains(f.name), "{}: {e}", schema.kind);
                }
                // `beta_true` is kept for reference only.
                if f.name != "beta_true" {
                    let mut wrong = full.clone();
                    wrong[f.name] = json!({"not": "a value"});
                    assert!(
                        load(&wrong).is_err(),
                        "{}: `{}` not read",
                        schema.kind,
                        f.name
                    );
                }
            }
            let mut extra = full.clone();
            extra["extra_field"] = json!(1);
            let e = load(&extra).expect_err("unknown field");
            assert!(e.contains("extra_field"), "{e}");
            // A key with control characters is named escaped, on one line (continuous files
            // are checked the same way by `ModelSpec::read` before serde sees them).
            if schema.domain != "continuous" {
                let mut odd = full.clone();
                odd["st\nat\u{7}es"] = json!(1);
                let e = load(&odd).expect_err("unknown field");
                assert!(!e.contains('\n') && e.contains("st\\nat"), "{e}");
            }
        }
    }
}
