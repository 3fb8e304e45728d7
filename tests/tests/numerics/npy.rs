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
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
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
    // Integer matrices are read too (the `sdp` command takes them).
    write_npy(&path, &[2, 2], &NpyData::I32(vec![2, -1, -1, 3])).unwrap();
    assert_eq!(
        read_matrix_f64(&path).unwrap(),
        (2, 2, vec![2.0, -1.0, -1.0, 3.0])
    );
    assert!(matches!(
        read_npy(dir.join("missing.npy")),
        Err(NpyError::Io(_))
    ));
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
        err(&handmade(1, &dict("<f8", "True", "(1,)"), &d8[..4])),
        NpyError::DataLength {
            expected: 8,
            found: 4
        }
    ));
    // A uint64 beyond i64::MAX cannot be held.
    let mut big = 5u64.to_le_bytes().to_vec();
    big.extend_from_slice(&u64::MAX.to_le_bytes());
    assert!(matches!(
        err(&handmade(1, &dict("<u8", "False", "(2,)"), &big)),
        NpyError::ValueOutOfRange { index: 1 }
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

/// Every real numeric dtype NumPy writes, in both byte orders, each checked against values
/// written by hand (the bytes follow the IEEE and two's-complement layouts NumPy uses).
#[test]
fn every_numeric_dtype_and_byte_order_is_read() {
    let dict = |descr: &str, shape: &str| {
        format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}")
    };
    let read = |descr: &str, bytes: &[u8]| -> NpyData {
        read_npy_bytes(&handmade(1, &dict(descr, "(3,)"), bytes))
            .unwrap_or_else(|e| panic!("{descr}: {e}"))
            .data
    };
    // Element bytes in little-endian order; the big-endian file reverses each element.
    let cases: Vec<(&str, usize, Vec<u8>, Vec<f64>)> = vec![
        ("b1", 1, vec![0, 1, 1], vec![0.0, 1.0, 1.0]),
        ("i1", 1, vec![0xff, 0x7f, 0x80], vec![-1.0, 127.0, -128.0]),
        ("u1", 1, vec![0, 200, 255], vec![0.0, 200.0, 255.0]),
        (
            "i2",
            2,
            [-2i16, 300, i16::MIN]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
            vec![-2.0, 300.0, -32768.0],
        ),
        (
            "u2",
            2,
            [1u16, 2, u16::MAX]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
            vec![1.0, 2.0, 65535.0],
        ),
        (
            "i4",
            4,
            [-7i32, 0, i32::MAX]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
            vec![-7.0, 0.0, 2147483647.0],
        ),
        (
            "u4",
            4,
            [1u32, 0, u32::MAX]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
            vec![1.0, 0.0, 4294967295.0],
        ),
        (
            "i8",
            8,
            [-3i64, 4, 5].iter().flat_map(|v| v.to_le_bytes()).collect(),
            vec![-3.0, 4.0, 5.0],
        ),
        (
            "u8",
            8,
            [3u64, 4, 1 << 40]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
            vec![3.0, 4.0, (1u64 << 40) as f64],
        ),
        // Half precision: 1.0 = 0x3c00, −2.5 = 0xc100, 2⁻²⁴ (smallest subnormal) = 0x0001.
        (
            "f2",
            2,
            [0x3c00u16, 0xc100, 0x0001]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
            vec![1.0, -2.5, 2f64.powi(-24)],
        ),
        (
            "f4",
            4,
            [1.5f32, -0.25, 3.0]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
            vec![1.5, -0.25, 3.0],
        ),
        (
            "f8",
            8,
            [1.5f64, -0.25, 1e300]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
            vec![1.5, -0.25, 1e300],
        ),
    ];
    for (code, size, little, want) in cases {
        let big: Vec<u8> = little
            .chunks(size)
            .flat_map(|c| c.iter().rev().copied().collect::<Vec<_>>())
            .collect();
        let orders: Vec<(String, &[u8])> = if size == 1 {
            vec![(format!("|{code}"), &little), (format!("<{code}"), &little)]
        } else {
            vec![(format!("<{code}"), &little), (format!(">{code}"), &big)]
        };
        for (descr, bytes) in orders {
            assert_eq!(read(&descr, bytes).to_f64(), want, "{descr}");
        }
    }
    // Half precision: infinities and NaN keep their meaning.
    let special: Vec<u8> = [0x7c00u16, 0xfc00, 0x7e00]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let v = read("<f2", &special).to_f64();
    assert!(v[0] == f64::INFINITY && v[1] == f64::NEG_INFINITY && v[2].is_nan());
}

/// A Fortran-order array (what pandas' `to_numpy()` often gives) comes back in C order.
#[test]
fn fortran_order_is_read_in_c_order() {
    // The 2 × 3 matrix [[1, 2, 3], [4, 5, 6]] stored column by column, and a 2 × 2 × 2 array.
    let columns: Vec<u8> = [1.0f64, 4.0, 2.0, 5.0, 3.0, 6.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let dict = "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }";
    let a = read_npy_bytes(&handmade(1, dict, &columns)).unwrap();
    assert_eq!(a.shape, vec![2, 3]);
    assert_eq!(a.data, NpyData::F64(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]));
    // Element (i, j, k) of a Fortran array sits at i + 2j + 4k; its value here is 100i + 10j + k.
    let mut fortran = [0i32; 8];
    for i in 0..2 {
        for j in 0..2 {
            for k in 0..2 {
                fortran[i + 2 * j + 4 * k] = 100 * i as i32 + 10 * j as i32 + k as i32;
            }
        }
    }
    let bytes: Vec<u8> = fortran.iter().flat_map(|v| v.to_be_bytes()).collect();
    let dict = "{'descr': '>i4', 'fortran_order': True, 'shape': (2, 2, 2), }";
    let a = read_npy_bytes(&handmade(1, dict, &bytes)).unwrap();
    assert_eq!(a.data, NpyData::I32(vec![0, 1, 10, 11, 100, 101, 110, 111]));
}
