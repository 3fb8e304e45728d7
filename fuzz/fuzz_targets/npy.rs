//! The `.npy` reader on arbitrary bytes. Checks that it never panics, that an array it accepts
//! has as many elements as its shape says, that writing the array back and reading it again
//! gives the same array bit for bit (NaN payloads included) and the same bytes on a second
//! write, and that the same input gives the same output.
#![no_main]

use langevin_std::io::npy::{NpyArray, NpyData, read_npy_bytes, write_npy_to};

/// The dtype and every element's bits.
fn bits(data: &NpyData) -> (&'static str, Vec<u64>) {
    let v = match data {
        NpyData::F64(v) => v.iter().map(|x| x.to_bits()).collect(),
        NpyData::F32(v) => v.iter().map(|x| u64::from(x.to_bits())).collect(),
        NpyData::U8(v) => v.iter().map(|&x| u64::from(x)).collect(),
        NpyData::U16(v) => v.iter().map(|&x| u64::from(x)).collect(),
        NpyData::I32(v) => v.iter().map(|&x| x as u64).collect(),
        NpyData::I64(v) => v.iter().map(|&x| x as u64).collect(),
    };
    (data.descr(), v)
}

fn write(a: &NpyArray) -> Vec<u8> {
    let mut out = Vec::new();
    if let Err(e) = write_npy_to(&mut out, &a.shape, &a.data) {
        panic!("writing an array the reader accepted failed: {e}");
    }
    out
}

/// What a run observes: the shape and the data's type and bits.
type Observed = (Vec<usize>, (&'static str, Vec<u64>));

fn run(data: &[u8]) -> Option<Observed> {
    let a = match read_npy_bytes(data) {
        Ok(a) => a,
        Err(e) => {
            assert!(!e.to_string().contains('\n'), "multi-line error: {e}");
            return None;
        }
    };
    let count = a
        .shape
        .iter()
        .try_fold(1usize, |n, &s| n.checked_mul(s))
        .expect("the shape's element count overflows");
    assert_eq!(count, a.data.len(), "shape {:?}", a.shape);
    assert_eq!(a.data.is_empty(), count == 0);

    let bytes = write(&a);
    let b = read_npy_bytes(&bytes).unwrap_or_else(|e| panic!("re-reading a written array: {e}"));
    assert_eq!(a.shape, b.shape, "shape changed in the round trip");
    assert_eq!(
        bits(&a.data),
        bits(&b.data),
        "data changed in the round trip"
    );
    assert_eq!(write(&b), bytes, "a second write gives other bytes");
    Some((a.shape, bits(&a.data)))
}

langevin_fuzz::deterministic_fuzz_target!(run);
