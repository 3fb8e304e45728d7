//! What every summary records about how it was made: the tool, its version, the command line
//! and a hash of the model file.

use serde::Serialize;
use std::path::Path;

/// The first fields of every summary file.
#[derive(Debug, Clone, Serialize)]
pub struct Provenance {
    /// Always `langevin`.
    pub tool: &'static str,
    /// The tool's version.
    pub version: &'static str,
    /// The command line, program name first.
    pub command_line: Vec<String>,
    /// `fnv1a64:` and the 64-bit FNV-1a hash of the model file's bytes (the matrix for `sdp`),
    /// in hex.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_hash: Option<String>,
}

impl Provenance {
    /// This process's provenance; `model` is the model file, if the command read one.
    pub fn new(model: Option<&Path>) -> Self {
        Self {
            tool: "langevin",
            version: env!("CARGO_PKG_VERSION"),
            command_line: std::env::args_os()
                .map(|a| a.to_string_lossy().into_owned())
                .collect(),
            model_hash: model
                .and_then(|p| std::fs::read(p).ok())
                .map(|bytes| format!("fnv1a64:{:016x}", fnv1a64(&bytes))),
        }
    }

    /// `value` (a JSON object) with these fields in front.
    pub fn prepend(&self, value: serde_json::Value) -> serde_json::Value {
        let mut out = match serde_json::to_value(self) {
            Ok(serde_json::Value::Object(m)) => m,
            _ => serde_json::Map::new(),
        };
        if let serde_json::Value::Object(rest) = value {
            out.extend(rest);
        }
        serde_json::Value::Object(out)
    }
}

/// The 64-bit FNV-1a hash (Fowler, Noll and Vo): enough to tell two model files apart, not a
/// cryptographic digest.
fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn fnv1a64_reference_values() {
        // From the FNV reference test vectors.
        assert_eq!(super::fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(super::fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
