//! Writing results: files appear whole or not at all.

use crate::CliError;
use std::path::Path;

/// Writes `bytes` to `path` through a temporary file in the same folder and a rename, so a
/// failed run never leaves a partial file behind.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
    let name = path
        .file_name()
        .ok_or_else(|| CliError(format!("{}: not a file name", path.display())))?;
    let tmp = dir
        .map(|d| d.join(format!(".{}.partial", name.to_string_lossy())))
        .unwrap_or_else(|| format!(".{}.partial", name.to_string_lossy()).into());
    std::fs::write(&tmp, bytes).map_err(|e| CliError(format!("{}: {e}", path.display())))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        CliError(format!("{}: {e}", path.display()))
    })
}

/// Serialises an `.npy` array into memory.
pub fn npy_bytes(shape: &[usize], data: &langevin_std::npy::NpyData) -> Result<Vec<u8>, CliError> {
    let mut bytes = Vec::new();
    langevin_std::npy::write_npy_to(&mut bytes, shape, data)?;
    Ok(bytes)
}

/// Pretty JSON with a trailing newline.
pub fn json_bytes(value: &impl serde::Serialize) -> Result<Vec<u8>, CliError> {
    let mut bytes = serde_json::to_vec_pretty(value)?;
    bytes.push(b'\n');
    Ok(bytes)
}
