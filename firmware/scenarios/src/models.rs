//! Fixed models with parameters computed from integers at compile time, so that their
//! values are identical everywhere.
#![allow(
    clippy::indexing_slicing,
    reason = "only evaluated at compile time, where an index out of range is a build error"
)]

use langevin_core::models::Bf16;

/// Visible size of the quadratic, RBM and graph models.
pub const SMALL_DIM: usize = 16;
/// Hidden units of the RBM.
pub const RBM_HIDDEN: usize = 8;

/// `W` of the dense quadratic model (row-major `16 × 16`, not symmetric).
pub const QUAD_W: [f32; SMALL_DIM * SMALL_DIM] = quad_w();
/// `b` of the dense quadratic model.
pub const QUAD_B: [f32; SMALL_DIM] = quad_b();
/// `W` of the RBM (row-major `8 × 16`).
pub const RBM_W: [f32; RBM_HIDDEN * SMALL_DIM] = rbm_w();
/// Visible biases of the RBM.
pub const RBM_B: [f32; SMALL_DIM] = rbm_b();
/// Hidden biases of the RBM.
pub const RBM_C: [f32; RBM_HIDDEN] = rbm_c();

/// Degree of every node of the graph model: the ring neighbours and the opposite node.
pub const GRAPH_DEGREE: usize = 3;
/// Offsets of the graph model in compressed adjacency form.
pub const GRAPH_OFFSETS: [u32; SMALL_DIM + 1] = graph_offsets();
/// Neighbours of the graph model.
pub const GRAPH_NEIGHBOURS: [u32; SMALL_DIM * GRAPH_DEGREE] = graph_neighbours();
/// Couplings of the graph model: 0.25 along the ring, −0.5 across.
pub const GRAPH_COUPLINGS: [f32; SMALL_DIM * GRAPH_DEGREE] = graph_couplings();
/// Fields of the graph model.
pub const GRAPH_FIELD: [f32; SMALL_DIM] = graph_field();

const fn quad_w() -> [f32; SMALL_DIM * SMALL_DIM] {
    let mut w = [0.0; SMALL_DIM * SMALL_DIM];
    let mut k = 0;
    while k < w.len() {
        let (i, j) = (k / SMALL_DIM, k % SMALL_DIM);
        w[k] = (((i * 7 + j * 13) % 11) as f32 - 5.0) * 0.0625;
        k += 1;
    }
    w
}

const fn quad_b() -> [f32; SMALL_DIM] {
    let mut b = [0.0; SMALL_DIM];
    let mut i = 0;
    while i < SMALL_DIM {
        b[i] = (((i * 5) % 7) as f32 - 3.0) * 0.25;
        i += 1;
    }
    b
}

const fn rbm_w() -> [f32; RBM_HIDDEN * SMALL_DIM] {
    let mut w = [0.0; RBM_HIDDEN * SMALL_DIM];
    let mut k = 0;
    while k < w.len() {
        let (j, i) = (k / SMALL_DIM, k % SMALL_DIM);
        w[k] = (((i * 3 + j * 11) % 13) as f32 - 6.0) * 0.125;
        k += 1;
    }
    w
}

const fn rbm_b() -> [f32; SMALL_DIM] {
    let mut b = [0.0; SMALL_DIM];
    let mut i = 0;
    while i < SMALL_DIM {
        b[i] = ((i % 5) as f32 - 2.0) * 0.25;
        i += 1;
    }
    b
}

const fn rbm_c() -> [f32; RBM_HIDDEN] {
    let mut c = [0.0; RBM_HIDDEN];
    let mut j = 0;
    while j < RBM_HIDDEN {
        c[j] = ((j % 3) as f32 - 1.0) * 0.5;
        j += 1;
    }
    c
}

const fn graph_offsets() -> [u32; SMALL_DIM + 1] {
    let mut o = [0; SMALL_DIM + 1];
    let mut i = 0;
    while i <= SMALL_DIM {
        o[i] = (i * GRAPH_DEGREE) as u32;
        i += 1;
    }
    o
}

const fn graph_neighbours() -> [u32; SMALL_DIM * GRAPH_DEGREE] {
    let mut n = [0; SMALL_DIM * GRAPH_DEGREE];
    let mut i = 0;
    while i < SMALL_DIM {
        n[i * GRAPH_DEGREE] = ((i + SMALL_DIM - 1) % SMALL_DIM) as u32;
        n[i * GRAPH_DEGREE + 1] = ((i + 1) % SMALL_DIM) as u32;
        n[i * GRAPH_DEGREE + 2] = ((i + SMALL_DIM / 2) % SMALL_DIM) as u32;
        i += 1;
    }
    n
}

const fn graph_couplings() -> [f32; SMALL_DIM * GRAPH_DEGREE] {
    let mut c = [0.0; SMALL_DIM * GRAPH_DEGREE];
    let mut i = 0;
    while i < SMALL_DIM {
        c[i * GRAPH_DEGREE] = 0.25;
        c[i * GRAPH_DEGREE + 1] = 0.25;
        c[i * GRAPH_DEGREE + 2] = -0.5;
        i += 1;
    }
    c
}

const fn graph_field() -> [f32; SMALL_DIM] {
    let mut h = [0.0; SMALL_DIM];
    let mut i = 0;
    while i < SMALL_DIM {
        h[i] = ((i % 3) as f32 - 1.0) * 0.05;
        i += 1;
    }
    h
}

/// `W` of the RBM stored as `bf16` (row-major `8 × 16`): multiples of 0.1 between −0.6 and 0.6,
/// which `bf16` cannot hold, rounded to nearest (ties to even). Its visible and hidden biases
/// are [`RBM_B`] and [`RBM_C`].
pub const RBM_W_BF16: [Bf16; RBM_HIDDEN * SMALL_DIM] = rbm_w_bf16();

const fn rbm_w_bf16() -> [Bf16; RBM_HIDDEN * SMALL_DIM] {
    let mut w = [Bf16(0); RBM_HIDDEN * SMALL_DIM];
    let mut k = 0;
    while k < w.len() {
        let (j, i) = (k / SMALL_DIM, k % SMALL_DIM);
        w[k] = Bf16::from_f32(((i * 3 + j * 11) % 13) as f32 * 0.1 - 0.6);
        k += 1;
    }
    w
}

/// Visible units of the large RBM (a 28 × 28 image).
pub const BIG_VISIBLE: usize = 784;
/// Hidden units of the large RBM.
pub const BIG_HIDDEN: usize = 500;
/// Entries of the large RBM's `W`.
pub const BIG_WEIGHTS: usize = BIG_HIDDEN * BIG_VISIBLE;

/// Entry `(j, i)` of the large RBM's `W`: an integer in `−6..=6` times `2^−7`, exact in `bf16`,
/// so that the `f32` and `bf16` copies are the same model.
const fn big_rbm_weight(j: usize, i: usize) -> f32 {
    (((i * 3 + j * 11 + (i * j) % 7) % 13) as f32 - 6.0) * 0.007_812_5
}

/// `W` of the large RBM (`500 × 784`, row-major) in `f32`: a `const fn`, evaluated only where a
/// `static` of it is written (an image or a test that runs this model).
pub const fn big_rbm_w_f32() -> [f32; BIG_WEIGHTS] {
    let mut w = [0.0; BIG_WEIGHTS];
    let mut k = 0;
    while k < BIG_WEIGHTS {
        w[k] = big_rbm_weight(k / BIG_VISIBLE, k % BIG_VISIBLE);
        k += 1;
    }
    w
}

/// The same `W` stored as `bf16` (every entry is exact: the same model as
/// [`big_rbm_w_f32`]).
pub const fn big_rbm_w_bf16() -> [Bf16; BIG_WEIGHTS] {
    let mut w = [Bf16(0); BIG_WEIGHTS];
    let mut k = 0;
    while k < BIG_WEIGHTS {
        w[k] = Bf16::from_f32(big_rbm_weight(k / BIG_VISIBLE, k % BIG_VISIBLE));
        k += 1;
    }
    w
}

/// Visible biases of the large RBM.
pub const BIG_RBM_B: [f32; BIG_VISIBLE] = big_rbm_b();
/// Hidden biases of the large RBM.
pub const BIG_RBM_C: [f32; BIG_HIDDEN] = big_rbm_c();

const fn big_rbm_b() -> [f32; BIG_VISIBLE] {
    let mut b = [0.0; BIG_VISIBLE];
    let mut i = 0;
    while i < BIG_VISIBLE {
        b[i] = ((i % 9) as f32 - 4.0) * 0.0625;
        i += 1;
    }
    b
}

const fn big_rbm_c() -> [f32; BIG_HIDDEN] {
    let mut c = [0.0; BIG_HIDDEN];
    let mut j = 0;
    while j < BIG_HIDDEN {
        c[j] = ((j % 5) as f32 - 2.0) * 0.125;
        j += 1;
    }
    c
}
