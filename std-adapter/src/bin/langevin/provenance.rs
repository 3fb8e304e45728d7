//! What every summary records about how it was made: the tool, its version, the command line,
//! every option's value (defaults included) and a hash of the model file.

use serde::Serialize;
use std::collections::BTreeMap;
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
    /// `fnv1a64:` and, in hex, the 64-bit FNV-1a hash of the model file's bytes (the matrix
    /// for `sdp`) followed by, for each array or data file the model names (in the order of its
    /// fields' names), the file's length (8 bytes, little-endian) and bytes: the content of
    /// every file the model reads, not only their names.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_hash: Option<String>,
    /// Every option of the command by its long name (without `--`), with the value it took:
    /// given on the command line or the default; flags as `true`/`false`, options not given
    /// and without a default left out, repeated values as a list.
    pub options: BTreeMap<String, serde_json::Value>,
    /// `fnv1a64:` hashes of the other input files (data, held-out data, reference model), by
    /// their option.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub input_hashes: BTreeMap<String, String>,
    /// The code path of the per-chain hot loops: `avx512`, `avx2+fma` or `portable` (see
    /// [`langevin_std::simd`]).
    pub simd: &'static str,
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
            model_hash: model.and_then(model_hash),
            options: options(std::env::args_os()),
            input_hashes: BTreeMap::new(),
            simd: langevin_std::simd::path().name(),
        }
    }

    /// These provenance fields with the hashes of `inputs` (option name, path) added.
    pub fn with_inputs(mut self, inputs: &[(&str, Option<&Path>)]) -> Self {
        for (name, path) in inputs {
            if let Some(hash) = path.and_then(file_hash) {
                self.input_hashes.insert((*name).to_string(), hash);
            }
        }
        self
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

/// The [`Provenance::model_hash`] of the model file `path`, if it and every file it names can
/// be read (each streamed through the hash, never held whole).
fn model_hash(path: &Path) -> Option<String> {
    let mut hash = Fnv1a(FNV_OFFSET);
    std::io::copy(&mut std::fs::File::open(path).ok()?, &mut hash).ok()?;
    // A model file names its array and data files; a matrix (`sdp`) names none.
    if let Some(files) = langevin_std::models::ModelDoc::array_files_of(path) {
        for (_, file) in files {
            let mut f = std::fs::File::open(&file).ok()?;
            let len = f.metadata().ok()?.len();
            std::io::Write::write_all(&mut hash, &len.to_le_bytes()).ok()?;
            std::io::copy(&mut f, &mut hash).ok()?;
        }
    }
    Some(format!("fnv1a64:{:016x}", hash.0))
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// The FNV-1a hash of the bytes written to it.
struct Fnv1a(u64);

impl std::io::Write for Fnv1a {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0 = bytes.iter().fold(self.0, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `fnv1a64:` and the hash of the file's bytes, if it can be read.
fn file_hash(path: &Path) -> Option<String> {
    std::fs::read(path)
        .ok()
        .map(|bytes| format!("fnv1a64:{:016x}", fnv1a64(&bytes)))
}

/// Every option of the subcommand of `args` with the value it took (see
/// [`Provenance::options`]); empty when the line does not parse (it always does here: the
/// command runs only after parsing).
pub fn options<I, T>(args: I) -> BTreeMap<String, serde_json::Value>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    use clap::CommandFactory;
    let mut out = BTreeMap::new();
    let command = crate::Cli::command();
    let Ok(matches) = command.clone().try_get_matches_from(args) else {
        return out;
    };
    let Some((name, sub)) = matches.subcommand() else {
        return out;
    };
    let Some(sub_command) = command.find_subcommand(name) else {
        return out;
    };
    for arg in sub_command.get_arguments() {
        let id = arg.get_id().as_str();
        let Some(long) = arg.get_long() else { continue };
        if matches!(long, "help" | "version") {
            continue;
        }
        let Ok(Some(raw)) = sub.try_get_raw(id) else {
            continue;
        };
        let values: Vec<serde_json::Value> = raw
            .map(|v| serde_json::Value::String(v.to_string_lossy().into_owned()))
            .collect();
        let value = match <[serde_json::Value; 1]>::try_from(values) {
            Ok([one]) => one,
            Err(many) => serde_json::Value::Array(many),
        };
        out.insert(long.to_string(), value);
    }
    // A sampler's options that the chosen sampler does not read are not its options.
    if let Some(entry) = sub
        .try_get_one::<&'static langevin_std::samplers::SamplerEntry>("sampler")
        .ok()
        .flatten()
    {
        for param in langevin_std::samplers::Param::ALL {
            if !entry.params.contains(&param) {
                out.remove(param.info().flag.trim_start_matches("--"));
            }
        }
    }
    out
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
    fn options_hold_given_values_and_defaults() {
        let o = super::options(["langevin", "bench", "--model", "m.json", "--steps", "7"]);
        assert_eq!(o["model"], "m.json");
        assert_eq!(o["steps"], "7");
        // Defaults the line did not give.
        assert_eq!(o["repeats"], "10");
        assert_eq!(o["chains"], "4");
        assert_eq!(o["seed"], "0");
        assert!(!o.contains_key("help"));
        let o = super::options(["langevin", "compare", "--models", "ising-ba,ising-grid"]);
        assert_eq!(o["models"], serde_json::json!(["ising-ba", "ising-grid"]));
    }

    #[test]
    fn fnv1a64_reference_values() {
        // From the FNV reference test vectors.
        assert_eq!(super::fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(super::fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
