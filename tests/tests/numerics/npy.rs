//! `.npy` reading and writing: round trips of every dtype and rank, files as NumPy writes
//! them (versions 1.0–3.0), the reference data, and typed errors for malformed input.

use std::path::PathBuf;

use langevin_std::io::npy::{
    NpyArray, NpyData, NpyError, read_matrix_f64, read_npy, read_npy_bytes, write_npy, write_npy_to,
};
use proptest::prelude::*;

fn to_bytes(shape: &[usize], data: &NpyData) -> Vec<u8> {
    let mut out = Vec::new();
    write_npy_to(&mut out, shape, data).unwrap();
    out
}

/// A file in NumPy's own layout with an arbitrary version and header dictionary.
fn handmade(major: u8, dict: &str, data: &[u8]) -> Vec<u8> {
    let mut out = b"\x93NUMPY".to_vec();
    out.extend_from_slice(&[major, 0]);
    let header = format!("{dict}\n");
    if major == 1 {
        out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&(header.len() as u32).to_le_bytes());
    }
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out
}

#[test]
fn round_trip_every_dtype_and_rank() {
    let shapes: [&[usize]; 6] = [&[], &[0], &[7], &[3, 4], &[2, 3, 2], &[1, 2, 1, 3]];
    for shape in shapes {
        let n: usize = shape.iter().product();
        let datas = [
            NpyData::F64(
                (0..n)
                    .map(|i| i as f64 * -0.37 + 1e300 * (i % 2) as f64)
                    .collect(),
            ),
            NpyData::F32((0..n).map(|i| i as f32 * 0.25 - 3.0).collect()),
            NpyData::U8((0..n).map(|i| (i * 37 % 256) as u8).collect()),
            NpyData::U16((0..n).map(|i| (i * 7919 % 65536) as u16).collect()),
            NpyData::I32((0..n).map(|i| i as i32 * -1_000_003).collect()),
            NpyData::I64((0..n).map(|i| i as i64 * -(1 << 40)).collect()),
        ];
        for data in datas {
            let bytes = to_bytes(shape, &data);
            let back = read_npy_bytes(&bytes).unwrap();
            assert_eq!(back.shape, shape);
            assert_eq!(back.data, data);
        }
    }
}

#[test]
fn data_start_is_aligned() {
    for shape in [vec![3usize], vec![10, 10], vec![1; 20]] {
        let n: usize = shape.iter().product();
        let bytes = to_bytes(&shape, &NpyData::F64(vec![1.0; n]));
        assert_eq!((bytes.len() - 8 * n) % 64, 0);
        assert_eq!(bytes[bytes.len() - 8 * n - 1], b'\n');
    }
}

#[test]
fn file_round_trip() {
    let dir = std::env::temp_dir().join(format!("langevin-npy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("m.npy");
    let data = NpyData::F32(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    write_npy(&path, &[2, 3], &data).unwrap();
    let back = read_npy(&path).unwrap();
    assert_eq!(back, NpyArray::new(vec![2, 3], data).unwrap());
    let (r, c, m) = read_matrix_f64(&path).unwrap();
    assert_eq!((r, c, m), (2, 3, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]));
    write_npy(&path, &[6], &NpyData::F64(vec![0.0; 6])).unwrap();
    assert!(matches!(
        read_matrix_f64(&path),
        Err(NpyError::WrongKind { rank: 1, .. })
    ));
    write_npy(&path, &[2, 3], &NpyData::I32(vec![0; 6])).unwrap();
    assert!(matches!(
        read_matrix_f64(&path),
        Err(NpyError::WrongKind { dtype: "<i4", .. })
    ));
    assert!(matches!(
        read_npy(dir.join("missing.npy")),
        Err(NpyError::Io(_))
    ));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn versions_two_and_three_and_header_variants() {
    let data: Vec<u8> = [1.5f64, -2.0]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    for (major, dict) in [
        (
            1,
            "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }",
        ),
        (
            2,
            "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }",
        ),
        (
            3,
            "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }",
        ),
        (
            1,
            "{\"shape\": (2,), \"fortran_order\": False, \"descr\": \"<f8\"}   ",
        ),
        (1, "{'descr':'<f8','fortran_order':False,'shape':(2,)}"),
        (
            1,
            "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 2), }",
        ),
    ] {
        let a = read_npy_bytes(&handmade(major, dict, &data)).unwrap();
        assert_eq!(a.data, NpyData::F64(vec![1.5, -2.0]), "{dict}");
    }
    // A big header forces the writer to format 2.0; the reader takes it back.
    let shape = vec![1usize; 25_000];
    let bytes = to_bytes(&shape, &NpyData::U8(vec![9]));
    assert_eq!(bytes[6], 2);
    assert_eq!(read_npy_bytes(&bytes).unwrap().shape, shape);
}

#[test]
fn reference_matrices_read() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/sdp");
    let (r, c, w) = read_matrix_f64(dir.join("rotated_gaussian100_k10_W.npy")).unwrap();
    assert_eq!((r, c, w.len()), (100, 100, 10_000));
    assert!(w.iter().all(|x| x.is_finite()));
    let d = read_npy(dir.join("rotated_gaussian100_k10_d_opt.npy")).unwrap();
    assert_eq!(d.shape, vec![100]);
    assert!(matches!(d.data, NpyData::F64(_)));
}

#[test]
fn malformed_files_give_typed_errors() {
    let good = to_bytes(&[2, 2], &NpyData::F64(vec![1.0, 2.0, 3.0, 4.0]));
    let header_len = good.len() - 32;
    let err = |b: &[u8]| read_npy_bytes(b).unwrap_err();
    assert!(matches!(err(b"not a numpy file"), NpyError::BadMagic));
    assert!(matches!(err(b"\x93NUM"), NpyError::TruncatedHeader));
    assert!(matches!(err(b""), NpyError::TruncatedHeader));
    for cut in [6, 7, 9, header_len - 1] {
        assert!(
            matches!(err(&good[..cut]), NpyError::TruncatedHeader),
            "cut at {cut}"
        );
    }
    for cut in [header_len, header_len + 8, good.len() - 1] {
        assert!(
            matches!(err(&good[..cut]), NpyError::DataLength { expected: 32, .. }),
            "cut at {cut}"
        );
    }
    let mut long = good.clone();
    long.push(0);
    assert!(matches!(
        err(&long),
        NpyError::DataLength {
            expected: 32,
            found: 33
        }
    ));
    let mut v = good.clone();
    v[6] = 4;
    assert!(matches!(
        err(&v),
        NpyError::UnsupportedVersion { major: 4, minor: 0 }
    ));
    let d8 = [0u8; 8];
    let dict = |descr: &str, fortran: &str, shape: &str| {
        format!("{{'descr': '{descr}', 'fortran_order': {fortran}, 'shape': {shape}, }}")
    };
    assert!(matches!(
        err(&handmade(1, &dict("<c16", "False", "(1,)"), &[0; 16])),
        NpyError::UnsupportedDtype(d) if d == "<c16"
    ));
    assert!(matches!(
        err(&handmade(1, &dict("|f8", "False", "(1,)"), &d8)),
        NpyError::UnsupportedDtype(_)
    ));
    assert!(matches!(
        err(&handmade(1, &dict(">f8", "False", "(1,)"), &d8)),
        NpyError::BigEndian(d) if d == ">f8"
    ));
    assert!(matches!(
        err(&handmade(1, &dict("<f8", "True", "(1,)"), &d8)),
        NpyError::FortranOrder
    ));
    assert!(matches!(
        err(&handmade(1, &dict("<f8", "False", "(2,)"), &d8)),
        NpyError::DataLength {
            expected: 16,
            found: 8
        }
    ));
    assert!(matches!(
        err(&handmade(
            1,
            &dict("<f8", "False", "(99999999999, 99999999999)"),
            &d8
        )),
        NpyError::ShapeOverflow
    ));
    for bad in [
        "{'descr': '<f8', 'fortran_order': False}",
        "{'descr': '<f8', 'fortran_order': Maybe, 'shape': (1,)}",
        "{'descr': '<f8', 'fortran_order': False, 'shape': (-1,)}",
        "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), 'extra': 1}",
        "['descr', '<f8']",
        "{'descr': '<f8', 'fortran_order': False, 'shape': (1,)} trailing",
        "{'descr: '<f8'",
    ] {
        assert!(
            matches!(err(&handmade(1, bad, &d8)), NpyError::BadHeader(_)),
            "{bad}"
        );
    }
    // Writing a shape that does not match the data.
    let mut sink = Vec::new();
    assert!(matches!(
        write_npy_to(&mut sink, &[3], &NpyData::U8(vec![1, 2])),
        Err(NpyError::ShapeMismatch {
            expected: 3,
            found: 2
        })
    ));
    assert!(matches!(
        NpyArray::new(vec![2, 2], NpyData::U16(vec![1])),
        Err(NpyError::ShapeMismatch {
            expected: 4,
            found: 1
        })
    ));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// Arbitrary bytes never panic.
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = read_npy_bytes(&bytes);
    }

    /// Valid files with bytes overwritten or cut never panic, and what parses is consistent.
    #[test]
    fn mutated_files_never_panic(
        edits in proptest::collection::vec((0usize..200, any::<u8>()), 0..6),
        cut in 0usize..300,
    ) {
        let mut bytes = to_bytes(&[3, 5], &NpyData::I32((0..15).collect()));
        for (pos, b) in edits {
            if let Some(x) = bytes.get_mut(pos) {
                *x = b;
            }
        }
        bytes.truncate(cut.max(1));
        if let Ok(a) = read_npy_bytes(&bytes) {
            prop_assert_eq!(a.data.len(), a.shape.iter().product::<usize>());
        }
    }
}
