//! The any-scale balanced sampler, second order (Sun et al. 2023): a proposal that follows a global
//! quadratic model `U(y) − U(x) ≈ (y−x)ᵀg + ½(y−x)ᵀW(y−x)` of the target, made coordinatewise by
//! the Gaussian integral trick and corrected by an exact Metropolis–Hastings test.
//!
//! # The kernel
//!
//! Given a symmetric `W`, a diagonal `D` and a factor `A` (meant to satisfy `AᵀA = b(W + D)`),
//! one step from `x` with gradient `g`:
//!
//! 1. draws `u = A x + ξ`, `ξ ~ N(0, I)`;
//! 2. draws each `y_i ∈ {0, 1}` independently with
//!    `log Q(y_i | x, u) = y_i c_i − κ_i y_i² + const`, `c = b g − b W x + x/a + Aᵀu`,
//!    `κ_i = b D_ii / 2 + 1/(2a)`; for binary states `y_i² = y_i`, so `y_i = 1` with
//!    probability `sigmoid(c_i − κ_i)`;
//! 3. accepts with probability `min(1, r)`,
//!    `log r = U(y) − U(x) + log N(u; A y, I) − log N(u; A x, I) + log Q(x | y, u) − log Q(y | x, u)`.
//!
//! Step 1 is a Gibbs update of `u` under `π(x) N(u; A x, I)` and steps 2–3 are a Metropolis–
//! Hastings update of `x` given `u` under the same joint law, so `π` is invariant for **every**
//! `W`, `D`, `A`, `a`, `b` (the identity `AᵀA = b(W + D)` only makes the proposal good, not the
//! chain exact). The variants of the paper are choices of `W` and `D` made by the caller:
//! AB-trace (`D` from the diagonal SDP), AB-shift (`D = λI`), AB-max, and AB-1st (`W = D = 0`,
//! `A = 0`, which is the first-order balanced proposal of [`crate::binary::FlipProposal`]).
//!
//! # Cost and caching
//!
//! `W x` and `A x` of the current state are cached (in `f64`) in the scratch buffer together
//! with a copy of the state they belong to; the cache is rebuilt whenever the chain's state is
//! not the cached one (first step, a reset, a different chain). A step costs one full
//! product `Aᵀu` and, for a proposal that flips `k` coordinates, `W y` and `A y` updated from
//! the cache in `O(k d)` (or recomputed in full when `k ≥ d/2`): at most about two `d × d`
//! products. The matrices are `f32`; every product is accumulated in `f64`.
//!
//! # Sparse `W`
//!
//! For graphs, `W` may be given in compressed sparse rows ([`SparseW`],
//! [`TrickParams::with_sparse_w`]): `W x` then costs `O(nnz)` and `W y` from the cache
//! `O(Σ deg)` over the changed coordinates. The sparse products add the same terms in the same
//! order as the dense ones, so both forms of one `W` give bit-identical chains. `A` stays dense
//! (an upper-triangular `A` still skips its zero half), so its products dominate then.
//!
//! # Ordinal states
//!
//! [`OrdinalAbSecondOrder`] is the same kernel over `{0, …, S−1}^d`: step 2 draws each `y_i`
//! from the normalised softmax over the `S` values `v` of `v c_i − κ_i v²`; everything else,
//! `TrickParams` included, is shared.

mod kernel;
mod linalg;
mod ordinal;
mod sparse;

pub use kernel::{AbSecondOrder, SecondOrder, Transition, TrickDomain, TrickParams};
pub use linalg::{SCRATCH_PER_DIM, scratch_len};
pub use ordinal::{OrdinalAbSecondOrder, ordinal_scratch_len};
pub use sparse::{SparseW, WMatrix};
