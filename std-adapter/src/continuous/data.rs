//! Reading covariates and responses from `.npy` or CSV, and writing `f32` samples as `.npy`.
//!
//! NOTE: a stand-in, kept private on purpose. The crate's shared `.npy` module
//! (`read_npy` / `read_matrix_f64`) is meant to replace [`read_npy_f64`] and [`write_npy_f32`];
//! the CSV reader stays. Swap by changing only the bodies of [`load_matrix`], [`load_vector`]
//! and [`write_npy_f32`].

use super::ContinuousError;
use std::path::Path;

/// An array read from a file: row-major values and its shape (1-D arrays have one entry).
#[derive(Debug)]
pub(crate) struct Array {
    pub(crate) shape: Vec<usize>,
    pub(crate) values: Vec<f64>,
}

fn data_err(path: &Path, message: impl Into<String>) -> ContinuousError {
    ContinuousError::Data {
        path: path.to_path_buf(),
        message: message.into(),
    }
}

fn read_bytes(path: &Path) -> Result<Vec<u8>, ContinuousError> {
    std::fs::read(path).map_err(|source| ContinuousError::Io {
        path: path.to_path_buf(),
        source,
    })
}

fn is_npy(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("npy"))
}

/// A matrix from `.npy` (2-D; a 1-D array is one column) or CSV: `(rows, cols, row-major)`.
pub(crate) fn load_matrix(path: &Path) -> Result<(usize, usize, Vec<f64>), ContinuousError> {
    let a = if is_npy(path) {
        read_npy_f64(path)?
    } else {
        read_csv(path)?
    };
    match a.shape.as_slice() {
        [n] => Ok((*n, 1, a.values)),
        [n, d] => Ok((*n, *d, a.values)),
        s => Err(data_err(
            path,
            format!("expected a 1-D or 2-D array, got shape {s:?}"),
        )),
    }
}

/// A vector from `.npy` (1-D, or 2-D with one row or one column) or CSV (one column or one row).
pub(crate) fn load_vector(path: &Path) -> Result<Vec<f64>, ContinuousError> {
    let a = if is_npy(path) {
        read_npy_f64(path)?
    } else {
        read_csv(path)?
    };
    match a.shape.as_slice() {
        [_] | [_, 1] | [1, _] => Ok(a.values),
        s => Err(data_err(
            path,
            format!("expected a vector, got shape {s:?}"),
        )),
    }
}

/// Parses a CSV file of numbers. A first line with a non-numeric field is a header; blank
/// lines are skipped; every row must have the same number of fields.
pub(crate) fn read_csv(path: &Path) -> Result<Array, ContinuousError> {
    let bytes = read_bytes(path)?;
    let text = String::from_utf8(bytes).map_err(|_| data_err(path, "CSV is not UTF-8"))?;
    parse_csv(&text).map_err(|m| data_err(path, m))
}

fn parse_csv(text: &str) -> Result<Array, String> {
    let mut values = Vec::new();
    let mut cols = None;
    let mut rows = 0usize;
    for (ln, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        let parsed: Result<Vec<f64>, _> = fields.iter().map(|f| f.parse::<f64>()).collect();
        let row = match parsed {
            Ok(r) => r,
            Err(_) if rows == 0 && cols.is_none() => {
                cols = Some(fields.len());
                continue;
            }
            Err(e) => return Err(format!("line {}: {e}", ln + 1)),
        };
        match cols {
            Some(c) if c != row.len() => {
                return Err(format!(
                    "line {} has {} fields, expected {c}",
                    ln + 1,
                    row.len()
                ));
            }
            _ => cols = Some(row.len()),
        }
        values.extend(row);
        rows += 1;
    }
    let cols = cols.unwrap_or(0);
    if rows == 0 {
        return Err("no numeric rows".into());
    }
    let shape = if cols == 1 {
        vec![rows]
    } else {
        vec![rows, cols]
    };
    Ok(Array { shape, values })
}

/// Reads a `.npy` file of a real, integer or boolean dtype (either byte order, C or Fortran
/// order), converted to `f64` in C order.
pub(crate) fn read_npy_f64(path: &Path) -> Result<Array, ContinuousError> {
    let bytes = read_bytes(path)?;
    parse_npy(&bytes).map_err(|m| data_err(path, m))
}

fn header_value<'a>(header: &'a str, key: &str) -> Option<&'a str> {
    let k = header.find(&format!("'{key}'"))?;
    let rest = &header[k + key.len() + 2..];
    let colon = rest.find(':')?;
    Some(rest[colon + 1..].trim_start())
}

fn parse_npy(bytes: &[u8]) -> Result<Array, String> {
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err("not a .npy file (bad magic)".into());
    }
    let major = bytes[6];
    let (hlen, start) = match major {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 => {
            if bytes.len() < 12 {
                return Err("truncated header".into());
            }
            (
                u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
                12,
            )
        }
        v => return Err(format!("unsupported .npy version {v}")),
    };
    let end = start + hlen;
    let header = bytes
        .get(start..end)
        .ok_or("truncated header")
        .map(String::from_utf8_lossy)?;
    let descr = header_value(&header, "descr").ok_or("header has no 'descr'")?;
    let descr = descr
        .strip_prefix('\'')
        .and_then(|d| d.split('\'').next())
        .ok_or("cannot read 'descr'")?;
    let fortran = header_value(&header, "fortran_order")
        .ok_or("header has no 'fortran_order'")?
        .starts_with("True");
    let shape_txt = header_value(&header, "shape").ok_or("header has no 'shape'")?;
    let inner = shape_txt
        .strip_prefix('(')
        .and_then(|s| s.split(')').next())
        .ok_or("cannot read 'shape'")?;
    let shape: Vec<usize> = inner
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<usize>().map_err(|e| format!("shape: {e}")))
        .collect::<Result<_, _>>()?;
    let count = shape
        .iter()
        .try_fold(1usize, |a, &b| a.checked_mul(b))
        .ok_or("shape overflows")?;
    let (order, kind, size) = {
        let mut ch = descr.chars();
        let order = ch.next().ok_or("empty descr")?;
        let kind = ch.next().ok_or("short descr")?;
        let size: usize = ch
            .as_str()
            .parse()
            .map_err(|_| format!("bad descr {descr}"))?;
        (order, kind, size)
    };
    let big = order == '>';
    let data = bytes.get(end..).unwrap_or(&[]);
    let need = count.checked_mul(size).ok_or("size overflows")?;
    if data.len() < need {
        return Err(format!(
            "data holds {} bytes, shape needs {need}",
            data.len()
        ));
    }
    let conv: fn(&[u8], bool) -> f64 = match (kind, size) {
        ('f', 8) => |b, big| {
            let a: [u8; 8] = b.try_into().unwrap_or([0; 8]);
            if big {
                f64::from_be_bytes(a)
            } else {
                f64::from_le_bytes(a)
            }
        },
        ('f', 4) => |b, big| {
            let a: [u8; 4] = b.try_into().unwrap_or([0; 4]);
            f64::from(if big {
                f32::from_be_bytes(a)
            } else {
                f32::from_le_bytes(a)
            })
        },
        ('i', 8) => |b, big| {
            let a: [u8; 8] = b.try_into().unwrap_or([0; 8]);
            (if big {
                i64::from_be_bytes(a)
            } else {
                i64::from_le_bytes(a)
            }) as f64
        },
        ('i', 4) => |b, big| {
            let a: [u8; 4] = b.try_into().unwrap_or([0; 4]);
            f64::from(if big {
                i32::from_be_bytes(a)
            } else {
                i32::from_le_bytes(a)
            })
        },
        ('i', 2) => |b, big| {
            let a: [u8; 2] = b.try_into().unwrap_or([0; 2]);
            f64::from(if big {
                i16::from_be_bytes(a)
            } else {
                i16::from_le_bytes(a)
            })
        },
        ('i', 1) => |b, _| f64::from(b[0] as i8),
        ('u', 8) => |b, big| {
            let a: [u8; 8] = b.try_into().unwrap_or([0; 8]);
            (if big {
                u64::from_be_bytes(a)
            } else {
                u64::from_le_bytes(a)
            }) as f64
        },
        ('u', 4) => |b, big| {
            let a: [u8; 4] = b.try_into().unwrap_or([0; 4]);
            f64::from(if big {
                u32::from_be_bytes(a)
            } else {
                u32::from_le_bytes(a)
            })
        },
        ('u', 2) => |b, big| {
            let a: [u8; 2] = b.try_into().unwrap_or([0; 2]);
            f64::from(if big {
                u16::from_be_bytes(a)
            } else {
                u16::from_le_bytes(a)
            })
        },
        ('u', 1) | ('b', 1) => |b, _| f64::from(b[0]),
        _ => return Err(format!("unsupported dtype {descr}")),
    };
    let raw: Vec<f64> = data[..need]
        .chunks_exact(size)
        .map(|b| conv(b, big))
        .collect();
    let values = if fortran && shape.len() == 2 {
        let (r, c) = (shape[0], shape[1]);
        let mut v = vec![0.0; count];
        for i in 0..r {
            for j in 0..c {
                v[i * c + j] = raw[j * r + i];
            }
        }
        v
    } else if fortran && shape.len() > 2 {
        return Err("Fortran-ordered arrays of more than two dimensions are not supported".into());
    } else {
        raw
    };
    Ok(Array { shape, values })
}

/// Writes a C-ordered little-endian `f32` `.npy` (version 1.0).
pub(crate) fn write_npy_f32(
    path: &Path,
    shape: &[usize],
    values: &[f32],
) -> Result<(), ContinuousError> {
    let dims: Vec<String> = shape.iter().map(ToString::to_string).collect();
    let shape_txt = if dims.len() == 1 {
        format!("({},)", dims[0])
    } else {
        format!("({})", dims.join(", "))
    };
    let mut header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {shape_txt}, }}");
    // Pad so that the data start on a multiple of 64 bytes, ending the header with '\n'.
    let unpadded = 10 + header.len() + 1;
    header.push_str(&" ".repeat((64 - unpadded % 64) % 64));
    header.push('\n');
    let mut out = Vec::with_capacity(10 + header.len() + 4 * values.len());
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    for v in values {
        out.extend_from_slice(&v.to_le_bytes());
    }
    std::fs::write(path, out).map_err(|source| ContinuousError::Io {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn npy_bytes(descr: &str, fortran: bool, shape: &str, data: &[u8]) -> Vec<u8> {
        let mut header = format!(
            "{{'descr': '{descr}', 'fortran_order': {}, 'shape': {shape}, }}",
            if fortran { "True" } else { "False" }
        );
        let unpadded = 10 + header.len() + 1;
        header.push_str(&" ".repeat((64 - unpadded % 64) % 64));
        header.push('\n');
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend_from_slice(&(header.len() as u16).to_le_bytes());
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(data);
        out
    }

    #[test]
    fn npy_f64_c_and_fortran() {
        let vals = [1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0];
        let data: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
        let a = parse_npy(&npy_bytes("<f8", false, "(2, 3)", &data)).unwrap();
        assert_eq!(a.shape, [2, 3]);
        assert_eq!(a.values, vals);
        let f = parse_npy(&npy_bytes("<f8", true, "(2, 3)", &data)).unwrap();
        // Column-major 2x3 [1 3 5; 2 4 6].
        assert_eq!(f.values, [1.0, 3.0, 5.0, 2.0, 4.0, 6.0]);
    }

    #[test]
    fn npy_f32_int_and_big_endian() {
        let data: Vec<u8> = [1.5f32, -2.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        assert_eq!(
            parse_npy(&npy_bytes("<f4", false, "(2,)", &data))
                .unwrap()
                .values,
            [1.5, -2.0]
        );
        let data: Vec<u8> = [0i64, 1, 1].iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(
            parse_npy(&npy_bytes("<i8", false, "(3,)", &data))
                .unwrap()
                .values,
            [0.0, 1.0, 1.0]
        );
        let data: Vec<u8> = [3.0f64].iter().flat_map(|v| v.to_be_bytes()).collect();
        assert_eq!(
            parse_npy(&npy_bytes(">f8", false, "(1,)", &data))
                .unwrap()
                .values,
            [3.0]
        );
    }

    #[test]
    fn npy_rejects_garbage() {
        assert!(parse_npy(b"hello").is_err());
        assert!(parse_npy(&npy_bytes("<c16", false, "(1,)", &[0; 16])).is_err());
        assert!(parse_npy(&npy_bytes("<f8", false, "(4,)", &[0; 8])).is_err());
    }

    #[test]
    fn csv_with_header_and_ragged() {
        let a = parse_csv("a,b\n1, 2\n\n3,4\n").unwrap();
        assert_eq!(a.shape, [2, 2]);
        assert_eq!(a.values, [1.0, 2.0, 3.0, 4.0]);
        assert!(parse_csv("1,2\n3\n").is_err());
        assert!(parse_csv("x\n").is_err());
        assert_eq!(parse_csv("1\n0\n1\n").unwrap().shape, [3]);
    }

    #[test]
    fn npy_round_trip() {
        let dir = std::env::temp_dir().join(format!("lgv-npy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("a.npy");
        write_npy_f32(&p, &[2, 2], &[1.0, 2.0, 3.0, 4.5]).unwrap();
        let a = read_npy_f64(&p).unwrap();
        assert_eq!(a.shape, [2, 2]);
        assert_eq!(a.values, [1.0, 2.0, 3.0, 4.5]);
        std::fs::remove_dir_all(&dir).ok();
    }
}
