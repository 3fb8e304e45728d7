//! Slice helpers that cannot panic.

/// Copies `src` into `dst` element by element. The callers' slices have equal lengths by
/// construction; unlike `copy_from_slice`, a mismatch copies the common prefix instead of
/// panicking, so no panic path is left for the no-panic link proof.
#[inline]
pub(crate) fn copy<T: Copy>(dst: &mut [T], src: &[T]) {
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = s;
    }
}

/// The runs of equal adjacent values of `items`, as `(value, length)`, without the slicing of
/// `chunk_by`.
pub(crate) fn runs(items: &[u32]) -> impl Iterator<Item = (u32, usize)> + '_ {
    let mut it = items.iter().copied().peekable();
    core::iter::from_fn(move || {
        let v = it.next()?;
        let mut n = 1;
        while it.next_if_eq(&v).is_some() {
            n += 1;
        }
        Some((v, n))
    })
}

/// Sorts `v` ascending in place (heapsort). Equal `u32`s are indistinguishable, so the result
/// is that of `sort_unstable`, whose comparison-violation check is a panic path the optimiser
/// cannot remove.
pub(crate) fn sort(v: &mut [u32]) {
    let n = v.len();
    for root in (0..n / 2).rev() {
        sift_down(v, root, n);
    }
    for end in (1..n).rev() {
        swap(v, 0, end);
        sift_down(v, 0, end);
    }
}

fn at(v: &[u32], i: usize) -> u32 {
    v.get(i).copied().unwrap_or(0)
}

fn swap(v: &mut [u32], a: usize, b: usize) {
    let (x, y) = (at(v, a), at(v, b));
    if let Some(p) = v.get_mut(a) {
        *p = y;
    }
    if let Some(p) = v.get_mut(b) {
        *p = x;
    }
}

/// Restores the max-heap property of `v[..end]` below `root`.
fn sift_down(v: &mut [u32], mut root: usize, end: usize) {
    loop {
        let mut child = 2 * root + 1;
        if child >= end {
            return;
        }
        if child + 1 < end && at(v, child) < at(v, child + 1) {
            child += 1;
        }
        if at(v, root) >= at(v, child) {
            return;
        }
        swap(v, root, child);
        root = child;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    #[test]
    fn copy_equal_and_unequal_lengths() {
        let mut d = [0u8; 3];
        copy(&mut d, &[1, 2, 3]);
        assert_eq!(d, [1, 2, 3]);
        copy(&mut d, &[9]);
        assert_eq!(d, [9, 2, 3]);
        copy(&mut d, &[4, 5, 6, 7]);
        assert_eq!(d, [4, 5, 6]);
    }

    #[test]
    fn sort_matches_sort_unstable() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for n in [0usize, 1, 2, 3, 4, 7, 16, 33, 100, 257] {
            for modulus in [2u64, 5, 1000, u64::from(u32::MAX)] {
                let mut v: Vec<u32> = (0..n)
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        (state % modulus) as u32
                    })
                    .collect();
                let mut reference = v.clone();
                reference.sort_unstable();
                sort(&mut v);
                assert_eq!(v, reference, "n = {n}, modulus {modulus}");
            }
        }
    }

    #[test]
    fn runs_match_chunk_by() {
        for items in [&[][..], &[1], &[1, 1, 2, 3, 3, 3, 1], &[5, 5, 5, 5]] {
            let ours: Vec<(u32, usize)> = runs(items).collect();
            let reference: Vec<(u32, usize)> = items
                .chunk_by(|a, b| a == b)
                .map(|r| (r[0], r.len()))
                .collect();
            assert_eq!(ours, reference);
        }
    }
}
