//! Model files whose arrays live in `.npy` files beside the JSON: every kind, every numeric
//! dtype, and errors that name the file, the field and the problem.

use crate::common;

use common::{ISING, QUADRATIC, RBM, Scratch, npy_variant};
use langevin_std::binary::BinaryModel;
use langevin_std::io::npy::NpyData;
use langevin_std::models::ModelDoc;

#[test]
fn every_kind_loads_the_same_from_npy_as_from_json() {
    let scratch = Scratch::new("doc-kinds");
    for inline in [QUADRATIC, ISING, RBM] {
        let json = ModelDoc::parse(inline, scratch.0.clone()).unwrap();
        let path = npy_variant(&scratch, "m", inline);
        let npy = ModelDoc::read(&path).unwrap();
        assert_eq!(json.kind, npy.kind);
        for (field, value) in &json.fields {
            if value.is_array() {
                assert!(npy.fields[field].is_string());
                assert_eq!(
                    json.array(field).unwrap(),
                    npy.array(field).unwrap(),
                    "{field}"
                );
            }
        }
        let a = BinaryModel::from_doc(&json).unwrap().unwrap();
        let b = BinaryModel::from_doc(&npy).unwrap().unwrap();
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
    }
}

#[test]
fn every_numeric_dtype_is_read() {
    let scratch = Scratch::new("doc-dtypes");
    scratch.write("m.json", r#"{"kind": "x", "v": "v.npy"}"#);
    let cases = [
        NpyData::F64(vec![1.0, -2.0, 3.0]),
        NpyData::F32(vec![1.0, -2.0, 3.0]),
        NpyData::I64(vec![1, -2, 3]),
        NpyData::I32(vec![1, -2, 3]),
    ];
    for data in cases {
        scratch.npy("v.npy", &[3], data);
        let doc = ModelDoc::read(&scratch.path("m.json")).unwrap();
        assert_eq!(doc.vector("v").unwrap(), vec![1.0, -2.0, 3.0]);
    }
    for data in [NpyData::U8(vec![1, 2, 3]), NpyData::U16(vec![1, 2, 3])] {
        scratch.npy("v.npy", &[3], data);
        let doc = ModelDoc::read(&scratch.path("m.json")).unwrap();
        assert_eq!(doc.vector("v").unwrap(), vec![1.0, 2.0, 3.0]);
    }
}

#[test]
fn errors_name_file_field_and_problem() {
    let scratch = Scratch::new("doc-errors");
    let json = scratch.write(
        "sub/m.json",
        r#"{"kind": "rbm", "W": "w.npy", "b": "b.npy"}"#,
    );
    let message = |field: &str| {
        let doc = ModelDoc::read(&json).unwrap();
        let e = doc.array(field).unwrap_err();
        assert_eq!(e.file.as_deref(), Some(json.as_path()));
        assert_eq!(e.field, field);
        e.to_string()
    };
    // Missing array file.
    let text = message("W");
    assert!(
        text.contains("m.json") && text.contains("`W`") && text.contains("w.npy"),
        "{text}"
    );
    // Not an .npy file at all.
    scratch.write("sub/w.npy", "hello");
    let text = message("W");
    assert!(text.contains("cannot load"), "{text}");
    // Non-finite entries, with their position (row, column).
    scratch.npy(
        "sub/w.npy",
        &[2, 2],
        NpyData::F64(vec![0.0, 1.0, f64::NAN, 2.0]),
    );
    assert!(message("W").contains("entry (1, 0) is not finite"));
    // The wrong rank for a vector.
    scratch.npy("sub/b.npy", &[1, 2], NpyData::F64(vec![0.0, 1.0]));
    let doc = ModelDoc::read(&json).unwrap();
    let text = doc.vector("b").unwrap_err().to_string();
    assert!(text.contains("`b`") && text.contains("[1, 2]"), "{text}");
    // A field that is missing altogether.
    let e = doc.array("c").unwrap_err();
    assert_eq!(e.field, "c");
    assert!(
        matches!(*e.problem, langevin_std::models::Problem::Missing),
        "{e}"
    );
}
