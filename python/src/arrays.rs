//! Built-in models from NumPy arrays: the fields of a model file given as Python values, read
//! by the model-file parser itself, so a model built from arrays is the model `load_model`
//! reads from a file with the same fields (and samples to the same draws).

use super::{Loaded, Model, value_error};
use langevin_std::binary::BinaryModel;
use langevin_std::labels::LabelModel;
use langevin_std::models::{ModelDoc, Problem, schema};
use langevin_std::resources::MemoryBudget;
use langevin_std::run::Fingerprint;
use numpy::{PyReadonlyArrayDyn, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyString};
use serde_json::{Map, Number, Value};
use std::path::PathBuf;

/// A model of the discrete kind `kind` from `fields`, the fields of its model file: `int`,
/// `float`, `bool` and `str` values for the scalar fields and C-contiguous `float64` arrays for
/// the vector and matrix fields. The fields are checked as a file's are (with the same
/// messages, naming the field).
#[pyfunction]
pub(crate) fn model_from_fields(kind: &str, fields: &Bound<'_, PyDict>) -> PyResult<Model> {
    let Some(kind_schema) = schema::find(kind).filter(|k| k.domain != "continuous") else {
        return Err(PyValueError::new_err(format!(
            "unknown model kind `{kind}`"
        )));
    };
    let mut map = Map::new();
    for (name, value) in fields.iter() {
        let name: String = name.extract()?;
        let value = json_value(&name, &value)?;
        map.insert(name, value);
    }
    kind_schema.check_fields(&map).map_err(|e| {
        let field = e.escaped_field();
        PyValueError::new_err(format!("field `{field}`: {}", Problem::UnknownField(e)))
    })?;
    let doc = ModelDoc {
        kind: kind.to_owned(),
        fields: map,
        base: PathBuf::new(),
        file: None,
        budget: MemoryBudget::new(None),
        parse_bytes: 0,
    };
    let model = if let Some(m) = BinaryModel::from_doc(&doc).map_err(value_error)? {
        Loaded::Binary(m)
    } else if let Some(m) = LabelModel::from_doc(&doc).map_err(value_error)? {
        Loaded::Labels(m)
    } else {
        return Err(PyValueError::new_err(format!(
            "unknown model kind `{kind}`"
        )));
    };
    Ok(Model {
        path: None,
        kind: kind.to_owned(),
        model,
        fields: Some(Fingerprint::of_model_fields(kind, &doc.fields)),
        inputs: Vec::new(),
    })
}

/// A field's value as the JSON a model file would hold.
fn json_value(name: &str, value: &Bound<'_, PyAny>) -> PyResult<Value> {
    if value.is_instance_of::<PyBool>() {
        return Ok(Value::Bool(value.extract()?));
    }
    if value.is_instance_of::<PyInt>() {
        return match value.extract::<u64>() {
            Ok(n) => Ok(Value::Number(n.into())),
            Err(_) => Ok(Value::Number(value.extract::<i64>()?.into())),
        };
    }
    if value.is_instance_of::<PyFloat>() {
        return number(name, value.extract()?).map(Value::Number);
    }
    if value.is_instance_of::<PyString>() {
        return Ok(Value::String(value.extract()?));
    }
    let Ok(array) = value.extract::<PyReadonlyArrayDyn<'_, f64>>() else {
        return Err(PyTypeError::new_err(format!(
            "field `{name}`: expected a number, a string or a float64 array, found {}",
            value.get_type().name()?
        )));
    };
    let shape = array.shape().to_vec();
    let data = array
        .as_slice()
        .map_err(|_| PyValueError::new_err(format!("field `{name}`: array not contiguous")))?;
    nest(name, &shape, data)
}

/// A finite number as JSON.
fn number(name: &str, x: f64) -> PyResult<Number> {
    Number::from_f64(x)
        .ok_or_else(|| PyValueError::new_err(format!("field `{name}`: {x} is not finite")))
}

/// A row-major array of `shape` as nested JSON arrays.
fn nest(name: &str, shape: &[usize], data: &[f64]) -> PyResult<Value> {
    match shape.split_first() {
        None => data
            .first()
            .map_or(Ok(Value::Null), |&x| number(name, x).map(Value::Number)),
        Some((&n, rest)) => {
            let inner: usize = rest.iter().product();
            let items = (0..n)
                .map(|k| {
                    let part = data.get(k * inner..(k + 1) * inner).unwrap_or(&[]);
                    nest(name, rest, part)
                })
                .collect::<PyResult<Vec<Value>>>()?;
            Ok(Value::Array(items))
        }
    }
}
