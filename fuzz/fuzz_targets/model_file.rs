//! Model documents from arbitrary text: parsing, then the binary and label loaders. Checks
//! that nothing panics, that every error renders to one line, that a loaded binary model has
//! dimension ≥ 1 and evaluates at the all-zero state (finite or not), that a label model
//! evaluates at the all-zero state, and that the same input gives the same output.
//! Documents that name array files, or whose building and one evaluation would take more than
//! about 10^7 operations (estimated per kind from its counts and inline arrays), are skipped,
//! so no input comes near libFuzzer's time limit.
#![no_main]

use langevin_core::BinaryTarget;
use langevin_std::binary::BinaryModel;
use langevin_std::labels::LabelModel;
use langevin_std::models::ModelDoc;
use serde_json::Value;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::PathBuf;

/// Cap on the work (element operations and elements allocated) a document may imply. Under the
/// fuzzing instrumentation an element operation costs about a microsecond, so this is about a
/// second: an Ising graph of a million nodes took 2.3 s for the two runs of one input.
const MAX_WORK: f64 = 1e6;

fn one_line(e: &dyn std::fmt::Display) -> String {
    let s = e.to_string();
    assert!(!s.contains('\n'), "multi-line error: {s}");
    s
}

/// Numbers in a JSON value (what an inline array costs to read and, at most, to evaluate).
fn elements(v: &Value) -> f64 {
    match v {
        Value::Array(items) => items.iter().map(elements).sum(),
        Value::Object(fields) => fields.values().map(elements).sum(),
        _ => 1.0,
    }
}

/// The work of building the document's model and evaluating it once: its inline arrays, plus
/// what its counts imply for the kinds that generate or allocate from counts.
fn work(doc: &ModelDoc) -> f64 {
    let count = |k: &str| {
        doc.fields
            .get(k)
            .and_then(Value::as_f64)
            .map_or(1.0, |v| v.abs().max(1.0))
    };
    let inline: f64 = doc.fields.values().map(elements).sum();
    let implied = match doc.kind.as_str() {
        // A QR of a d × d Gaussian matrix (d³), then K components of O(d²) per evaluation.
        "quartic_mixture" => {
            let d = count("dim");
            d * d * d + count("components") * d * d
        }
        // An n × S field (zeros by default) and the adjacency of n nodes.
        "potts" => count("n") * count("states"),
        // A field, its narrowing, the node offsets, one evaluation and its gradient: about
        // four passes over the nodes (measured: 1.2 µs per node per run, against 0.5 µs for
        // a lattice site).
        "ising" => 4.0 * count("n"),
        "ising_lattice" => 2.0 * count("rows") * count("cols"),
        // Every other kind is as large as its inline arrays; its counts only bound values.
        _ => 0.0,
    };
    inline + implied
}

/// Whether the document is cheap to build and evaluate: no file references, little work.
fn cheap(doc: &ModelDoc) -> bool {
    let files = doc
        .fields
        .iter()
        .any(|(k, v)| k != "kind" && k != "distance" && v.is_string());
    let work = work(doc);
    !files && work.is_finite() && work <= MAX_WORK
}

fn run(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let doc = match ModelDoc::parse(text, PathBuf::from("no-such-folder")) {
        Ok(d) => d,
        Err(e) => {
            out.push(one_line(&e));
            return out;
        }
    };
    if !cheap(&doc) {
        return out;
    }
    match BinaryModel::from_doc(&doc) {
        Err(e) => out.push(one_line(&e)),
        Ok(None) => out.push("not binary".into()),
        Ok(Some(model)) => {
            let d = model.dim();
            assert!(d >= 1, "a loaded binary model of dimension 0");
            let mut cache = vec![0.0f64; model.cache_len()];
            let mut target = model
                .target(&mut cache)
                .unwrap_or_else(|e| panic!("a loaded model refused its target: {e}"));
            assert_eq!(target.dim(), d);
            let x = vec![0u8; d];
            let mut grad = vec![0.0f32; d];
            let u = target
                .log_density_and_grad(&x, &mut grad)
                .unwrap_or_else(|e| match e {});
            // One hash for the gradient: a string per coordinate would cost the harness more
            // than the model on documents with millions of coordinates.
            let mut hasher = DefaultHasher::new();
            grad.iter().for_each(|g| g.to_bits().hash(&mut hasher));
            out.push(format!(
                "binary {d} {:x} {:x}",
                u.to_bits(),
                hasher.finish()
            ));
        }
    }
    match LabelModel::from_doc(&doc) {
        Err(e) => out.push(one_line(&e)),
        Ok(None) => out.push("not a label model".into()),
        Ok(Some(model)) => {
            let (d, s) = (model.dim(), model.states());
            assert!(s >= 2, "a label model with {s} states");
            let u = model.log_density(&vec![0u16; d]);
            out.push(format!("{} {d} {s} {:x}", model.kind(), u.to_bits()));
        }
    }
    out
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let first = run(&text);
    assert_eq!(first, run(&text), "same input, different output");
});
