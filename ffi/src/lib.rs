//! A C ABI for the chains of `langevin-core`: every `no_std` sampler of the registry, chosen by
//! the command line's names and parameters ([`lgv_chain_use_kernel`]), on a dense binary
//! quadratic model, a 2-D Ising lattice, an RBM, or a target the caller writes as a C function
//! over binary ([`lgv_chain_init_callback`]), ordinal or categorical states
//! ([`lgv_chain_init_label_callback`]); and the stochastic-gradient integrators over a potential
//! whose per-term gradients a C function adds up ([`lgv_sg_init`]). The simplest kernels (DULA,
//! DMALA and AB-1st: DMALA with its step and balance tuned during a burn-in, then frozen) are
//! also described by [`LgvKernel`].
//!
//! Nothing is allocated. The caller provides the chain object ([`LgvChain`], a block of
//! `LGV_CHAIN_WORDS` 64-bit words), the chain buffers ([`LgvBuffers`]) and the model arrays; the
//! chain borrows them from its `lgv_chain_init_*` call until [`lgv_chain_release`] (or another
//! `init` on the same object). Every function returns an [`LgvStatus`]: `LGV_OK` or the reason
//! it refused, in which case it changed nothing the caller can observe.
//!
//! The C header `include/langevin.h` is generated from this file by cbindgen with the settings
//! in `cbindgen.toml` (a test checks that the committed header matches;
//! `LANGEVIN_BLESS=1 cargo test -p langevin-ffi --test header` rewrites it).
//!
//! # Contract
//!
//! * Pointers are checked for null, alignment and (between buffers the chain writes and every
//!   other region) overlap; lengths are checked against the model.
//! * While a chain is live the caller must not touch its buffers, cache or model arrays other
//!   than through these functions, and must not use one chain from two threads at once.
//! * A chain object that was never initialised should be zero-filled; a zero object is reported
//!   as `LGV_ERR_NOT_INITIALISED`.
//! * Callbacks ([`LgvLogDensityFn`], [`LgvLabelLogDensityFn`], [`LgvTermGradFn`]) are pure in
//!   their inputs and `user`, are called only from the thread stepping the chain, and never
//!   unwind or `longjmp` out; a step they abandon, or at which they return a non-finite value,
//!   leaves the chain exactly as before it.
//!
//! # Threads
//!
//! The library has no global state: different chains may be used from different threads at
//! the same time, and a chain may be handed from one thread to another between calls. Calls on
//! one chain (and on its buffers and arrays) must not overlap in time; guard a shared chain with
//! a lock. `lgv_status_name` returns static strings and is safe from any thread.
//!
//! # Moving a chain
//!
//! A live `LgvChain` holds no pointer into itself, so it may be moved or copied with `memcpy`
//! between calls (for example when a task's memory is compacted); the copy continues the same
//! chain, with the same random stream. The buffers and model arrays it borrows must stay where
//! they are. Only one copy may be used afterwards: the copies share those buffers.
//!
//! # Crate features
//!
//! * `std` (default): link the standard library (host builds). Without it the crate is `no_std`
//!   and provides a panic handler.
//! * `no-panic-proof`: without `std`, make the panic handler an undefined symbol, so that
//!   linking the archive with `--no-undefined` proves no panic is reachable.
#![cfg_attr(not(feature = "std"), no_std)]
#![deny(missing_docs, missing_debug_implementations, unsafe_op_in_unsafe_fn)]
#![deny(
    clippy::panic,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::undocumented_unsafe_blocks
)]

mod callback;
mod kernels;
mod sg;

use callback::{BinaryCallback, ErrorStatus, LabelCallback};
use core::ffi::{CStr, c_char, c_void};
use core::mem::{align_of, size_of};
use core::ptr;
use kernels::{Dom, Failure, Kind, Props, Spec};
use langevin_core::binary::{
    BinaryChain, ChainBuffers, InitError, Rejection, StepError, StepReport,
};
use langevin_core::categorical::CategoricalChain;
use langevin_core::chain::LabelBuffers;
use langevin_core::models::{BinaryQuadratic, Dims, IsingLattice, Rbm};
use langevin_core::ordinal::OrdinalChain;
use langevin_core::stats::ChainStats;
use langevin_core::tuning::{AbSettings, AbTuner};
use langevin_core::{BinaryTarget, Chain, ParamError};
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

// ---------------------------------------------------------------------------------------------
// The C API, mirrored in include/langevin.h.
// ---------------------------------------------------------------------------------------------

/// The result of every function: `LGV_OK` (0) or a positive error code.
pub type LgvStatus = i32;

/// Major version of the library this header belongs to.
pub const LGV_VERSION_MAJOR: u32 = 0;
/// Minor version of the library this header belongs to.
pub const LGV_VERSION_MINOR: u32 = 1;
/// Patch version of the library this header belongs to.
pub const LGV_VERSION_PATCH: u32 = 0;
/// The version as one number, `major * 10000 + minor * 100 + patch`; compare it with
/// `lgv_version()` to check that header and library match.
pub const LGV_VERSION: u32 = 100;

/// Success.
pub const LGV_OK: LgvStatus = 0;
/// A required pointer was NULL.
pub const LGV_ERR_NULL: LgvStatus = 1;
/// A pointer is not aligned for its element type.
pub const LGV_ERR_ALIGNMENT: LgvStatus = 2;
/// A buffer the chain writes overlaps another buffer, the model arrays or the chain object.
pub const LGV_ERR_OVERLAP: LgvStatus = 3;
/// The model has dimension zero.
pub const LGV_ERR_EMPTY_DIMENSION: LgvStatus = 4;
/// A length does not fit the model.
pub const LGV_ERR_LENGTH: LgvStatus = 5;
/// A length is too large to address.
pub const LGV_ERR_SIZE_OVERFLOW: LgvStatus = 6;
/// A model parameter is NaN or infinite.
pub const LGV_ERR_NON_FINITE_PARAMETER: LgvStatus = 7;
/// A model parameter is out of range (for example a lattice too large for 32-bit indices).
pub const LGV_ERR_PARAMETER_OUT_OF_RANGE: LgvStatus = 8;
/// The step size is not a finite number greater than zero.
pub const LGV_ERR_STEP: LgvStatus = 9;
/// The balance is outside (0, 1].
pub const LGV_ERR_BALANCE: LgvStatus = 10;
/// The kernel kind is not one of the `LGV_KERNEL_*` values.
pub const LGV_ERR_UNKNOWN_KERNEL: LgvStatus = 11;
/// A state entry is neither 0 nor 1.
pub const LGV_ERR_STATE_OUT_OF_RANGE: LgvStatus = 12;
/// The log-density or gradient at the initial state is not finite.
pub const LGV_ERR_NON_FINITE_START: LgvStatus = 13;
/// The chain object was not initialised (or was released).
pub const LGV_ERR_NOT_INITIALISED: LgvStatus = 14;
/// A parameter was refused for a reason without its own code.
pub const LGV_ERR_PARAMETER: LgvStatus = 15;
/// The call needs a different kernel (for example reading the AB-1st parameters of a chain
/// that runs DULA or DMALA).
pub const LGV_ERR_WRONG_KERNEL: LgvStatus = 16;
/// The log-density callback returned a code other than `LGV_CALLBACK_OK` and
/// `LGV_CALLBACK_REJECT`: the step was abandoned and the chain is as before it (read the code
/// with `lgv_chain_callback_code`).
pub const LGV_ERR_CALLBACK: LgvStatus = 17;
/// The log-density callback returned a non-finite log-density or gradient at a proposal: the
/// step was abandoned and the chain is as before it.
pub const LGV_ERR_CALLBACK_NON_FINITE: LgvStatus = 18;
/// The log-density callback rejected the initial state.
pub const LGV_ERR_START_REJECTED: LgvStatus = 19;
/// The sampler exists but cannot run here: it does not apply to the chain's domain, or it
/// needs several chains or the standard library (`ab2`, `block-gibbs`, `pt-dmala`).
pub const LGV_ERR_UNSUPPORTED_KERNEL: LgvStatus = 20;
/// A parameter name the sampler does not read.
pub const LGV_ERR_PARAMETER_NAME: LgvStatus = 21;
/// A parameter value that does not parse (or a `params` string that is not `key=value` pairs
/// of UTF-8 text).
pub const LGV_ERR_PARAMETER_VALUE: LgvStatus = 22;
/// The call is for chains of another domain (for example `lgv_chain_state` on a categorical
/// chain).
pub const LGV_ERR_WRONG_DOMAIN: LgvStatus = 23;
/// The kernel's scratch buffers are shorter than `lgv_chain_kernel_scratch` asks for.
pub const LGV_ERR_SCRATCH: LgvStatus = 24;
/// A window on a chain that is not ordinal, or a window of 0.
pub const LGV_ERR_WINDOW: LgvStatus = 25;

/// A stochastic-gradient step produced a non-finite position or momentum (the step is too
/// large for the potential): the step was abandoned and the chain is as before it.
pub const LGV_ERR_DIVERGED: LgvStatus = 26;

/// A log-density callback's success: `*log_density` (and `grad`, if not NULL) are written.
pub const LGV_CALLBACK_OK: i32 = 0;
/// A log-density callback's refusal of the state it was given: the proposal is rejected and
/// counted (`LGV_REJECTION_TARGET_ERROR`), and the chain stays where it was.
pub const LGV_CALLBACK_REJECT: i32 = 1;

/// Binary states `{0,1}^d` (`uint8_t` entries).
pub const LGV_DOMAIN_BINARY: u32 = 0;
/// Ordinal states `{0..S-1}^d` (`uint16_t` entries; the order of the values matters); the
/// gradient has `d` entries.
pub const LGV_DOMAIN_ORDINAL: u32 = 1;
/// Categorical states `{0..S-1}^d` (`uint16_t` labels, unordered); the gradient has `d * S`
/// entries, `grad[i * S + k]` for coordinate `i` taking value `k`.
pub const LGV_DOMAIN_CATEGORICAL: u32 = 2;

/// The discrete unadjusted Langevin kernel (every valid proposal accepted).
pub const LGV_KERNEL_DULA: u32 = 1;
/// The discrete Metropolis-adjusted Langevin kernel.
pub const LGV_KERNEL_DMALA: u32 = 2;
/// AB-1st: the Metropolis-adjusted kernel with its step and balance tuned for `burn_in` steps
/// (starting from `step` and `balance`), then frozen; afterwards every step is exact DMALA
/// with the chosen values (read them with `lgv_chain_ab_params`).
pub const LGV_KERNEL_AB: u32 = 3;

/// The proposal was valid (accepted or lost the Metropolis test).
pub const LGV_REJECTION_NONE: u32 = 0;
/// The target returned a non-finite log-density or gradient at the proposal.
pub const LGV_REJECTION_NON_FINITE: u32 = 1;
/// The target returned a recoverable error at the proposal.
pub const LGV_REJECTION_TARGET_ERROR: u32 = 2;

/// Size of a chain object in 64-bit words.
pub const LGV_CHAIN_WORDS: usize = 320;

/// Storage for one chain. Treat as opaque; zero-fill it before first use.
#[repr(C)]
#[derive(Debug)]
pub struct LgvChain {
    /// Private.
    pub opaque: [u64; LGV_CHAIN_WORDS],
}

/// The buffers of a chain, each of `len` entries, which must equal the model's dimension.
#[repr(C)]
#[derive(Debug)]
pub struct LgvBuffers {
    /// The initial state (entries 0 or 1); afterwards scratch: read the state with
    /// `lgv_chain_state`.
    pub x: *mut u8,
    /// Gradient at the current state.
    pub grad: *mut f32,
    /// Room for a proposed state.
    pub x_proposal: *mut u8,
    /// Room for the gradient at a proposed state.
    pub grad_proposal: *mut f32,
    /// Room for the indices a proposal flips.
    pub flipped: *mut u32,
    /// Entries in each buffer.
    pub len: usize,
}

/// A kernel and its parameters.
#[repr(C)]
#[derive(Debug)]
pub struct LgvKernel {
    /// `LGV_KERNEL_DULA`, `LGV_KERNEL_DMALA` or `LGV_KERNEL_AB`.
    pub kind: u32,
    /// Step size `a` (finite, greater than zero).
    pub step: f64,
    /// Balance `b` in (0, 1]; 0.5 is the discrete Langevin proposal.
    pub balance: f64,
    /// `LGV_KERNEL_AB` only: the number of steps during which `step` and `balance` are tuned
    /// (0 runs DMALA with the given values). Ignored by the other kernels.
    pub burn_in: u64,
}

/// The parameters of an AB-1st chain.
#[repr(C)]
#[derive(Debug)]
pub struct LgvAbParams {
    /// The step `a` the next step uses (final once frozen).
    pub step: f64,
    /// The balance `b` the next step uses (final once frozen).
    pub balance: f64,
    /// Steps spent tuning so far.
    pub tuning_steps: u64,
    /// 1 once tuning is over (the burn-in is spent, or the probe size fell below its minimum).
    pub frozen: u32,
}

/// What the last step did.
#[repr(C)]
#[derive(Debug)]
pub struct LgvStepReport {
    /// 1 if the chain moved to the proposal (a proposal with no flips counts as accepted).
    pub accepted: u32,
    /// Coordinates the proposal flipped.
    pub proposed_flips: u32,
    /// The log Metropolis-Hastings ratio (0 for DULA and empty proposals, -inf or NaN when the
    /// proposal was invalid).
    pub log_accept_ratio: f64,
    /// One of the `LGV_REJECTION_*` values.
    pub rejection: u32,
    /// Target evaluations the step spent (0 or 1).
    pub evaluations: u32,
}

/// Running totals since the chain was initialised.
#[repr(C)]
#[derive(Debug)]
pub struct LgvStats {
    /// Steps taken.
    pub steps: u64,
    /// Steps whose proposal was adopted.
    pub accepted: u64,
    /// Sum of proposed flips.
    pub proposed_flips: u64,
    /// Sum of flips that took effect.
    pub accepted_flips: u64,
    /// Proposals rejected as invalid.
    pub invalid: u64,
    /// Target evaluations.
    pub evaluations: u64,
}

/// A binary log-density written by the caller: writes `U(x)` (the log-density up to a
/// constant, higher is more likely) to `*log_density` and, unless `grad` is NULL, the gradient
/// of a differentiable extension of `U` at `x` to `grad[0..dim]`; returns `LGV_CALLBACK_OK`,
/// `LGV_CALLBACK_REJECT` (this state is impossible: the proposal is rejected and counted) or
/// any other code to abandon the step (`LGV_ERR_CALLBACK`).
///
/// Contract: the result depends only on `(x, user)` (seeded runs replay bit for bit only
/// then); the function is called only from the thread stepping the chain, during
/// `lgv_chain_init_*`, `lgv_chain_step` and `lgv_chain_reset*` (give each chain its own `user`,
/// or make it safe to share); it must not unwind (C++ exceptions, Rust panics) or `longjmp`
/// out of the call (catch inside and return a code); it must not call back into the library
/// for the same chain. `x` has `dim` entries, each 0 or 1, and must not be written. A NaN or
/// infinite value or gradient is reported as `LGV_ERR_CALLBACK_NON_FINITE` (at the initial
/// state: `LGV_ERR_NON_FINITE_START`); return `LGV_CALLBACK_REJECT` for states of zero
/// probability. The library passes a gradient buffer on every call today; accept NULL all the
/// same (value only).
pub type LgvLogDensityFn = Option<
    unsafe extern "C" fn(
        user: *mut c_void,
        x: *const u8,
        dim: usize,
        log_density: *mut f64,
        grad: *mut f32,
    ) -> i32,
>;

/// An ordinal or categorical log-density written by the caller: as `LgvLogDensityFn`, over
/// `x[0..dim]` with entries below `states`; the gradient has `dim` entries (ordinal) or
/// `dim * states` (categorical, `grad[i * states + k]`).
pub type LgvLabelLogDensityFn = Option<
    unsafe extern "C" fn(
        user: *mut c_void,
        x: *const u16,
        dim: usize,
        states: usize,
        log_density: *mut f64,
        grad: *mut f32,
    ) -> i32,
>;

/// The buffers of an ordinal or categorical chain of `dim` coordinates over `states` values.
#[repr(C)]
#[derive(Debug)]
pub struct LgvLabelBuffers {
    /// The initial state (`dim` entries below `states`); afterwards scratch: read the state
    /// with `lgv_chain_labels`.
    pub x: *mut u16,
    /// Gradient at the current state: `dim` entries (ordinal) or `dim * states` (categorical).
    pub grad: *mut f32,
    /// Room for a proposed state (`dim` entries).
    pub x_proposal: *mut u16,
    /// Room for the gradient at a proposed state (as `grad`).
    pub grad_proposal: *mut f32,
    /// Room for the indices a proposal changes (`dim` entries).
    pub changed: *mut u32,
    /// Work space of `states` entries.
    pub scratch: *mut f64,
    /// Coordinates `d`.
    pub dim: usize,
    /// Values per coordinate `S` (2 to 65535).
    pub states: usize,
}

/// A kernel by the command line's sampler name, with its parameters.
///
/// Samplers (see `langevin samplers`): `dula`, `dmala`, `gibbs` (one step is one site update;
/// the command line's step is a sweep of `d` of them), `gwg`, `rwm`, `ab`, `acs`, `lb`,
/// `hamming-ball`, `pas`, `dlmc`. `ab2`, `block-gibbs` and `pt-dmala` need the standard
/// library or several chains: `LGV_ERR_UNSUPPORTED_KERNEL`.
#[repr(C)]
#[derive(Debug)]
pub struct LgvKernelSpec {
    /// The sampler's name (NUL-terminated).
    pub name: *const c_char,
    /// Its parameters as `key=value` pairs separated by spaces or commas, with the command
    /// line's flag names without `--` and its defaults for those left out, for example
    /// `"step=0.3 balance=0.5"`, `"scan=random"`, `"path-length=auto"`,
    /// `"adapt=acceptance target-acceptance=0.6"`. NULL or "" for the defaults.
    pub params: *const c_char,
    /// Steps during which tuned samplers adapt (`ab`, `acs`, `rwm`, `dmala adapt=acceptance`,
    /// `pas path-length=auto`, `dlmc time=auto`), counted from this call.
    pub burn_in: u64,
    /// Steps planned after `burn_in` (`acs` spends a tenth of `burn_in + steps` tuning).
    pub steps: u64,
    /// Room the kernel works in (`lb`, `hamming-ball`, `pas`): at least the length
    /// `lgv_chain_kernel_scratch` gives; NULL when that is 0.
    pub scratch: *mut f64,
    /// Entries at `scratch`.
    pub scratch_len: usize,
    /// Room for indices (`pas`): as for `scratch`.
    pub indices: *mut u32,
    /// Entries at `indices`.
    pub indices_len: usize,
}

/// Size of a stochastic-gradient chain object in 64-bit words.
pub const LGV_SG_CHAIN_WORDS: usize = 48;

/// A potential `V(theta) = sum_i V_i(theta)` over `terms` terms written by the caller: adds
/// `scale * sum_k grad V_{indices[k]}(theta)` to `acc[0..dim]` (it must add, not overwrite) and
/// returns 0, or any other code to abandon the step (`LGV_ERR_CALLBACK`). `V` is a potential:
/// lower is more likely, `pi(theta) ~ exp(-V(theta))`.
///
/// Minibatch estimates call it once per minibatch with its `count` drawn indices in the order
/// drawn (repeats possible; a minibatch of more than 64 in consecutive calls of up to 64), and
/// full gradients with every index in order, up to 64 at a time; accept any `count`. Adding
/// the terms in the order given makes a run the same, bit for bit, as with one index per call.
/// The contract of `LgvLogDensityFn` applies: pure in `(theta, indices, user)`, called only
/// from the thread stepping the chain, no unwinding or `longjmp` out of it. Non-finite
/// gradients are reported as `LGV_ERR_CALLBACK_NON_FINITE`.
pub type LgvTermGradFn = Option<
    unsafe extern "C" fn(
        user: *mut c_void,
        theta: *const f64,
        dim: usize,
        indices: *const u32,
        count: usize,
        scale: f64,
        acc: *mut f64,
    ) -> i32,
>;

/// Storage for one stochastic-gradient chain. Treat as opaque; zero-fill it before first use.
#[repr(C)]
#[derive(Debug)]
pub struct LgvSgChain {
    /// Private.
    pub opaque: [u64; LGV_SG_CHAIN_WORDS],
}

/// A stochastic-gradient integrator by the command line's name (`langevin sample-continuous
/// --sampler`), with its parameters and the problem's shape.
///
/// Integrators and parameters (the command line's flags without `--`; `step` is required):
/// `lmc` (step: full gradients), `sgld` (step, batch = 1, access = random|reshuffle|cyclic),
/// `sghmc` (step, friction = 1, batch, access), `ewsg` (step, friction, batch,
/// index-chain = 1). `agld` needs snapshot tables: `LGV_ERR_UNSUPPORTED_KERNEL`.
#[repr(C)]
#[derive(Debug)]
pub struct LgvSgSpec {
    /// The integrator's name (NUL-terminated).
    pub name: *const c_char,
    /// `key=value` pairs separated by spaces or commas, for example `"step=0.01 batch=8"`.
    pub params: *const c_char,
    /// Coordinates `d` of `theta`.
    pub dim: usize,
    /// Terms `N` of the potential.
    pub terms: usize,
}

/// `LGV_VERSION` as this library was built, to check against the header.
#[unsafe(no_mangle)]
pub extern "C" fn lgv_version() -> u32 {
    LGV_VERSION
}

/// `sizeof(LgvChain)` as this library was built, to check against the header.
#[unsafe(no_mangle)]
pub extern "C" fn lgv_chain_storage_size() -> usize {
    size_of::<LgvChain>()
}

/// A static, NUL-terminated name for a status code ("unknown status" for other values).
#[unsafe(no_mangle)]
pub extern "C" fn lgv_status_name(status: LgvStatus) -> *const c_char {
    let name: &'static core::ffi::CStr = match status {
        LGV_OK => c"ok",
        LGV_ERR_NULL => c"null pointer",
        LGV_ERR_ALIGNMENT => c"misaligned pointer",
        LGV_ERR_OVERLAP => c"overlapping buffers",
        LGV_ERR_EMPTY_DIMENSION => c"empty dimension",
        LGV_ERR_LENGTH => c"length mismatch",
        LGV_ERR_SIZE_OVERFLOW => c"size overflow",
        LGV_ERR_NON_FINITE_PARAMETER => c"non-finite parameter",
        LGV_ERR_PARAMETER_OUT_OF_RANGE => c"parameter out of range",
        LGV_ERR_STEP => c"invalid step size",
        LGV_ERR_BALANCE => c"invalid balance",
        LGV_ERR_UNKNOWN_KERNEL => c"unknown kernel",
        LGV_ERR_STATE_OUT_OF_RANGE => c"state out of range",
        LGV_ERR_NON_FINITE_START => c"non-finite initial state",
        LGV_ERR_NOT_INITIALISED => c"chain not initialised",
        LGV_ERR_PARAMETER => c"invalid parameter",
        LGV_ERR_WRONG_KERNEL => c"wrong kernel for this call",
        LGV_ERR_CALLBACK => c"callback abandoned the step",
        LGV_ERR_CALLBACK_NON_FINITE => c"callback returned a non-finite value",
        LGV_ERR_START_REJECTED => c"callback rejected the initial state",
        LGV_ERR_UNSUPPORTED_KERNEL => c"kernel not supported for this chain",
        LGV_ERR_PARAMETER_NAME => c"unknown parameter name",
        LGV_ERR_PARAMETER_VALUE => c"invalid parameter value",
        LGV_ERR_WRONG_DOMAIN => c"wrong domain for this call",
        LGV_ERR_SCRATCH => c"kernel scratch too short",
        LGV_ERR_WINDOW => c"invalid window",
        LGV_ERR_DIVERGED => c"stochastic-gradient step diverged",
        _ => c"unknown status",
    };
    name.as_ptr()
}

/// Starts a chain on the `rows × cols` nearest-neighbour Ising lattice
/// `U(s) = J Σ s_i s_j + h Σ s_i` over spins `s = 2x − 1` (row-major sites; `periodic` wraps
/// axes of length 3 or more). `buffers->len` must be `rows * cols`.
///
/// # Safety
///
/// `chain` must point to writable memory for an `LgvChain`; `buffers` and `kernel` to readable
/// structs whose pointers address `len` valid entries each. The buffers stay borrowed by the
/// chain until it is released or initialised again.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lgv_chain_init_ising_lattice(
    chain: *mut LgvChain,
    rows: usize,
    cols: usize,
    coupling: f32,
    field: f32,
    periodic: bool,
    buffers: *const LgvBuffers,
    kernel: *const LgvKernel,
    seed: u64,
) -> LgvStatus {
    // SAFETY: forwarded from the caller's contract.
    status(unsafe {
        init(chain, buffers, kernel, seed, [], || {
            IsingLattice::with_dims(Dims { rows, cols }, coupling, field, periodic)
                .map(Model::Lattice)
                .map_err(param_status)
        })
    })
}

/// Starts a chain on the dense binary quadratic model `U(x) = xᵀWx + bᵀx`: `w` has
/// `dim * dim` entries (row-major, `w_len` of them), `b` has `dim`, and `cache` is room for
/// `cache_len = 2 * dim` doubles. `buffers->len` must be `dim`.
///
/// # Safety
///
/// As for `lgv_chain_init_ising_lattice`; in addition `w`, `b` and `cache` must address
/// `w_len`, `dim` and `cache_len` valid entries, and stay untouched while the chain lives.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lgv_chain_init_quadratic(
    chain: *mut LgvChain,
    w: *const f32,
    w_len: usize,
    b: *const f32,
    dim: usize,
    cache: *mut f64,
    cache_len: usize,
    buffers: *const LgvBuffers,
    kernel: *const LgvKernel,
    seed: u64,
) -> LgvStatus {
    let arrays = [
        raw_region(w, w_len, false),
        raw_region(b, dim, false),
        raw_region(cache.cast_const(), cache_len, true),
    ];
    let model = || {
        // SAFETY: checked non-null, aligned, sized and disjoint from everything the chain
        // writes; validity is the caller's contract.
        let (w, b, cache) = unsafe { (view(w, w_len), view(b, dim), view_mut(cache, cache_len)) };
        BinaryQuadratic::new(w, b, cache)
            .map(Model::Quadratic)
            .map_err(param_status)
    };
    // SAFETY: forwarded from the caller's contract.
    status(unsafe { init(chain, buffers, kernel, seed, arrays, model) })
}

/// Starts a chain on a binary RBM with the hidden units summed out,
/// `U(x) = Σ_j softplus((Wx + c)_j) + bᵀx`: `w` is `hidden × visible` (row-major, `w_len`
/// entries), `b` has `visible` entries, `c` has `hidden`, and `cache` is room for
/// `cache_len = 2 * hidden` doubles. `buffers->len` must be `visible`.
///
/// # Safety
///
/// As for `lgv_chain_init_quadratic`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lgv_chain_init_rbm(
    chain: *mut LgvChain,
    w: *const f32,
    w_len: usize,
    b: *const f32,
    visible: usize,
    c: *const f32,
    hidden: usize,
    cache: *mut f64,
    cache_len: usize,
    buffers: *const LgvBuffers,
    kernel: *const LgvKernel,
    seed: u64,
) -> LgvStatus {
    let arrays = [
        raw_region(w, w_len, false),
        raw_region(b, visible, false),
        raw_region(c, hidden, false),
        raw_region(cache.cast_const(), cache_len, true),
    ];
    let model = || {
        // SAFETY: as for `lgv_chain_init_quadratic`.
        let (w, b, c, cache) = unsafe {
            (
                view(w, w_len),
                view(b, visible),
                view(c, hidden),
                view_mut(cache, cache_len),
            )
        };
        Rbm::new(w, b, c, cache)
            .map(Model::Rbm)
            .map_err(param_status)
    };
    // SAFETY: forwarded from the caller's contract.
    status(unsafe { init(chain, buffers, kernel, seed, arrays, model) })
}

/// Replaces the kernel of a live chain (the state and random stream carry on). An AB-1st
/// kernel starts tuning afresh from the given step and balance.
///
/// # Safety
///
/// `chain` must point to an `LgvChain`, `kernel` to a readable `LgvKernel`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lgv_chain_set_kernel(
    chain: *mut LgvChain,
    kernel: *const LgvKernel,
) -> LgvStatus {
    // SAFETY: forwarded from the caller's contract.
    let inner = match unsafe { live(chain) } {
        Ok(i) => i,
        Err(e) => return e,
    };
    let dom = inner.chain.dom();
    // SAFETY: forwarded from the caller's contract.
    match unsafe { read_kernel(kernel, dom) } {
        Ok(kind) => {
            inner.install(kind, Region::default(), Region::default());
            LGV_OK
        }
        Err(e) => e,
    }
}

/// Writes the step and balance of an AB-1st chain to `out`: during the burn-in those the next
/// step uses, afterwards the frozen choice. `LGV_ERR_WRONG_KERNEL` for a DULA or DMALA chain.
///
/// # Safety
///
/// `chain` must point to an `LgvChain`; `out` to a writable `LgvAbParams`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lgv_chain_ab_params(
    chain: *const LgvChain,
    out: *mut LgvAbParams,
) -> LgvStatus {
    // SAFETY: forwarded from the caller's contract.
    let inner = match unsafe { live(chain.cast_mut()) } {
        Ok(i) => &*i,
        Err(e) => return e,
    };
    let Kind::Ab(tuner) = &inner.kind else {
        return LGV_ERR_WRONG_KERNEL;
    };
    if let Err(e) = inner.check_out(chain, out.cast_const(), 1) {
        return e;
    }
    let (step, balance) = tuner.current();
    let report = tuner.report();
    let value = LgvAbParams {
        step,
        balance,
        tuning_steps: report.tuning_steps,
        frozen: u32::from(report.frozen),
    };
    // SAFETY: checked non-null, aligned and apart from the chain's memory.
    unsafe { out.write(value) };
    LGV_OK
}

/// Restarts the chain's random stream at `Xoshiro256PlusPlus::seed_from_u64(seed)`.
///
/// # Safety
///
/// `chain` must point to an `LgvChain`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lgv_chain_reseed(chain: *mut LgvChain, seed: u64) -> LgvStatus {
    // SAFETY: forwarded from the caller's contract.
    match unsafe { live(chain) } {
        Ok(inner) => {
            inner.rng = Xoshiro256PlusPlus::seed_from_u64(seed);
            LGV_OK
        }
        Err(e) => e,
    }
}

/// Takes `steps` steps. If `last` is not NULL and `steps > 0`, the report of the last step is
/// written there.
///
/// # Safety
///
/// `chain` must point to an `LgvChain`; `last` must be NULL or point to writable memory for an
/// `LgvStepReport`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lgv_chain_step(
    chain: *mut LgvChain,
    steps: u32,
    last: *mut LgvStepReport,
) -> LgvStatus {
    // SAFETY: forwarded from the caller's contract.
    let inner = match unsafe { live(chain) } {
        Ok(i) => i,
        Err(e) => return e,
    };
    if !last.is_null() {
        if let Err(e) = inner.check_out(chain, last.cast_const(), 1) {
            return e;
        }
    }
    let mut report = None;
    for _ in 0..steps {
        match inner.step() {
            Ok(r) => {
                inner.stats.record(&r);
                report = Some(r);
            }
            Err(e) => return e,
        }
    }
    if let (Some(r), false) = (report, last.is_null()) {
        let out = LgvStepReport {
            accepted: u32::from(r.accepted),
            proposed_flips: r.proposed_flips,
            log_accept_ratio: r.log_accept_ratio,
            rejection: match r.rejection {
                None => LGV_REJECTION_NONE,
                Some(Rejection::NonFinite) => LGV_REJECTION_NON_FINITE,
                Some(Rejection::TargetError) => LGV_REJECTION_TARGET_ERROR,
            },
            evaluations: r.evaluations,
        };
        // SAFETY: checked non-null, aligned and apart from the chain's memory above.
        unsafe { last.write(out) };
    }
    LGV_OK
}

/// Moves the chain to the state `x` (`len` entries, each 0 or 1), re-evaluating the model.
/// On error the chain keeps its state.
///
/// # Safety
///
/// `chain` must point to an `LgvChain`; `x` must address `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lgv_chain_reset(
    chain: *mut LgvChain,
    x: *const u8,
    len: usize,
) -> LgvStatus {
    // SAFETY: forwarded from the caller's contract.
    unsafe { reset_from(chain, x, len, Inner::reset_bits) }
}

/// Copies the current state of a binary chain (`len` must be the dimension) into `out`.
///
/// # Safety
///
/// `chain` must point to an `LgvChain`; `out` must address `len` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lgv_chain_state(
    chain: *const LgvChain,
    out: *mut u8,
    len: usize,
) -> LgvStatus {
    // SAFETY: forwarded from the caller's contract.
    unsafe { copy_out(chain, out, len, AnyChain::bits) }
}

/// Copies the gradient at the current state into `out`; `len` must be its length: the
/// dimension, or `dim * states` for a categorical chain.
///
/// # Safety
///
/// `chain` must point to an `LgvChain`; `out` must address `len` writable floats.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lgv_chain_grad(
    chain: *const LgvChain,
    out: *mut f32,
    len: usize,
) -> LgvStatus {
    // SAFETY: forwarded from the caller's contract.
    unsafe { copy_out(chain, out, len, |c| Some(c.grad())) }
}

/// Writes the log-density at the current state to `out`.
///
/// # Safety
///
/// `chain` must point to an `LgvChain`; `out` to a writable double.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lgv_chain_log_density(chain: *const LgvChain, out: *mut f64) -> LgvStatus {
    // SAFETY: forwarded from the caller's contract.
    unsafe { write_out(chain, out, |i| i.chain.log_density()) }
}

/// Writes the dimension to `out`.
///
/// # Safety
///
/// `chain` must point to an `LgvChain`; `out` to a writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lgv_chain_dim(chain: *const LgvChain, out: *mut usize) -> LgvStatus {
    // SAFETY: forwarded from the caller's contract.
    unsafe { write_out(chain, out, |i| i.chain.dim()) }
}

/// Writes the running totals to `out`.
///
/// # Safety
///
/// `chain` must point to an `LgvChain`; `out` to a writable `LgvStats`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lgv_chain_stats(chain: *const LgvChain, out: *mut LgvStats) -> LgvStatus {
    // SAFETY: forwarded from the caller's contract.
    unsafe {
        write_out(chain, out, |i| LgvStats {
            steps: i.stats.steps,
            accepted: i.stats.accepted,
            proposed_flips: i.stats.proposed_flips,
            accepted_flips: i.stats.accepted_flips,
            invalid: i.stats.invalid,
            evaluations: i.stats.evaluations,
        })
    }
}

/// The name of the `i`-th sampler `lgv_chain_use_kernel` accepts (a static NUL-terminated
/// string, in the command line's registry order), or NULL past the last: a binding lists them
/// by calling it with 0, 1, 2, ... until NULL.
#[unsafe(no_mangle)]
pub extern "C" fn lgv_sampler_name(i: usize) -> *const c_char {
    kernels::NAMES.get(i).map_or(ptr::null(), |n| n.as_ptr())
}

/// Starts a chain on a binary target of dimension `dim` given by the caller's function `f`
/// (see `LgvLogDensityFn` for its contract), called with `user`. `buffers->len` must be `dim`
/// and `buffers->x` holds the initial state. Any kernel of the registry can be chosen
/// afterwards with `lgv_chain_use_kernel`.
///
/// # Safety
///
/// As for `lgv_chain_init_ising_lattice`; `f` must follow the contract of `LgvLogDensityFn`
/// and `user` stay valid for it while the chain lives.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lgv_chain_init_callback(
    chain: *mut LgvChain,
    dim: usize,
    f: LgvLogDensityFn,
    user: *mut c_void,
    buffers: *const LgvBuffers,
    kernel: *const LgvKernel,
    seed: u64,
) -> LgvStatus {
    // SAFETY: forwarded from the caller's contract.
    status(unsafe {
        init(chain, buffers, kernel, seed, [], || {
            let f = f.ok_or(LGV_ERR_NULL)?;
            Ok(Model::Callback(BinaryCallback { f, user, dim }))
        })
    })
}

/// Starts a chain on an ordinal (`LGV_DOMAIN_ORDINAL`) or categorical
/// (`LGV_DOMAIN_CATEGORICAL`) target given by the caller's function `f` (see
/// `LgvLabelLogDensityFn`), over `buffers->dim` coordinates of `buffers->states` values;
/// `buffers->x` holds the initial state.
///
/// # Safety
///
/// `chain` must point to writable memory for an `LgvChain`; `buffers` and `kernel` to
/// readable structs whose pointers address the documented number of entries each; `f` must
/// follow the contract of `LgvLabelLogDensityFn`. The buffers stay borrowed until the chain is
/// released or initialised again.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lgv_chain_init_label_callback(
    chain: *mut LgvChain,
    domain: u32,
    f: LgvLabelLogDensityFn,
    user: *mut c_void,
    buffers: *const LgvLabelBuffers,
    kernel: *const LgvKernel,
    seed: u64,
) -> LgvStatus {
    let Some(f) = f else {
        return LGV_ERR_NULL;
    };
    // SAFETY: forwarded from the caller's contract.
    status(unsafe { init_labels(chain, domain, f, user, buffers, kernel, seed) })
}

/// Writes the scratch lengths the kernel `spec` needs on this chain to `scratch_len` (doubles)
/// and `indices_len` (`uint32_t`); checks the name, the parameters and that the sampler applies
/// to the chain's domain. `spec`'s buffers and run lengths are not read.
///
/// # Safety
///
/// `chain` must point to an `LgvChain`; `spec` to a readable `LgvKernelSpec` with
/// NUL-terminated strings; `scratch_len` and `indices_len` to writable `size_t`s.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lgv_chain_kernel_scratch(
    chain: *const LgvChain,
    spec: *const LgvKernelSpec,
    scratch_len: *mut usize,
    indices_len: *mut usize,
) -> LgvStatus {
    // SAFETY: forwarded from the caller's contract.
    let inner = match unsafe { live(chain.cast_mut()) } {
        Ok(i) => &*i,
        Err(e) => return e,
    };
    let outcome = (|| {
        inner.check_out(chain, scratch_len.cast_const(), 1)?;
        inner.check_out(chain, indices_len.cast_const(), 1)?;
        if raw_region(scratch_len.cast_const(), 1, true)?.overlaps(&raw_region(
            indices_len.cast_const(),
            1,
            true,
        )?) {
            return Err(LGV_ERR_OVERLAP);
        }
        // SAFETY: forwarded from the caller's contract.
        let (_, parsed) = unsafe { read_spec(spec) }?;
        let c = &inner.chain;
        let need = parsed.scratch(c.dom(), c.dim(), c.states())?;
        // SAFETY: checked non-null, aligned, apart from the chain's memory and each other.
        unsafe {
            scratch_len.write(need.weights);
            indices_len.write(need.indices);
        }
        Ok(())
    })();
    status(outcome)
}

/// Replaces the kernel of a live chain by the registry's sampler `spec->name` with
/// `spec->params` (the state and random stream carry on; tuned samplers start tuning afresh).
/// The chain borrows `spec->scratch` and `spec->indices` until the next kernel change, release
/// or init; the strings are read during the call only. On error the chain keeps its kernel.
///
/// # Safety
///
/// `chain` must point to an `LgvChain`; `spec` to a readable `LgvKernelSpec` with
/// NUL-terminated strings whose buffers address the entries it states.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lgv_chain_use_kernel(
    chain: *mut LgvChain,
    spec: *const LgvKernelSpec,
) -> LgvStatus {
    // SAFETY: forwarded from the caller's contract.
    let inner = match unsafe { live(chain) } {
        Ok(i) => i,
        Err(e) => return e,
    };
    let outcome = (|| {
        // SAFETY: forwarded from the caller's contract.
        let (k, parsed) = unsafe { read_spec(spec) }?;
        let weights = raw_region(k.scratch.cast_const(), k.scratch_len, true)?;
        let indices = raw_region(k.indices.cast_const(), k.indices_len, true)?;
        let mut owned = inner.owned_here(chain)?;
        owned[KERNEL_WEIGHTS] = weights;
        owned[KERNEL_INDICES] = indices;
        disjoint(&owned)?;
        disjoint_from(&weights, &inner.arrays)?;
        disjoint_from(&indices, &inner.arrays)?;
        let c = &inner.chain;
        let (dom, dim, states) = (c.dom(), c.dim(), c.states());
        parsed.scratch(dom, dim, states)?;
        // SAFETY: checked non-null (or empty), aligned, sized and apart from everything else
        // the chain writes; exclusivity while the kernel lives is the caller's contract.
        let (w, i) = unsafe {
            (
                view_mut(k.scratch, k.scratch_len),
                view_mut(k.indices, k.indices_len),
            )
        };
        let kind = parsed.build(dom, dim, states, k.burn_in, k.steps, w, i)?;
        inner.install(kind, weights, indices);
        Ok(())
    })();
    status(outcome)
}

/// Moves an ordinal or categorical chain to the state `x` (`len` entries below the number of
/// values), re-evaluating the target. On error the chain keeps its state.
///
/// # Safety
///
/// `chain` must point to an `LgvChain`; `x` must address `len` readable `uint16_t`s.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lgv_chain_reset_labels(
    chain: *mut LgvChain,
    x: *const u16,
    len: usize,
) -> LgvStatus {
    // SAFETY: forwarded from the caller's contract.
    unsafe { reset_from(chain, x, len, Inner::reset_labels) }
}

/// Copies the current state of an ordinal or categorical chain (`len` must be the dimension)
/// into `out`.
///
/// # Safety
///
/// `chain` must point to an `LgvChain`; `out` must address `len` writable `uint16_t`s.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lgv_chain_labels(
    chain: *const LgvChain,
    out: *mut u16,
    len: usize,
) -> LgvStatus {
    // SAFETY: forwarded from the caller's contract.
    unsafe { copy_out(chain, out, len, AnyChain::labels) }
}

/// Writes the chain's domain (`LGV_DOMAIN_*`) to `out`.
///
/// # Safety
///
/// `chain` must point to an `LgvChain`; `out` to a writable `uint32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lgv_chain_domain(chain: *const LgvChain, out: *mut u32) -> LgvStatus {
    // SAFETY: forwarded from the caller's contract.
    unsafe {
        write_out(chain, out, |i| match i.chain.dom() {
            Dom::Binary => LGV_DOMAIN_BINARY,
            Dom::Ordinal => LGV_DOMAIN_ORDINAL,
            Dom::Categorical => LGV_DOMAIN_CATEGORICAL,
        })
    }
}

/// Writes the number of values per coordinate to `out` (2 for binary chains).
///
/// # Safety
///
/// `chain` must point to an `LgvChain`; `out` to a writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lgv_chain_states(chain: *const LgvChain, out: *mut usize) -> LgvStatus {
    // SAFETY: forwarded from the caller's contract.
    unsafe { write_out(chain, out, |i| i.chain.states()) }
}

/// Writes to `out` the code the log-density callback returned when it last abandoned a step
/// with `LGV_ERR_CALLBACK` (`LGV_CALLBACK_OK` for a non-finite value or a failure that was not
/// the callback's; 0 before any).
///
/// # Safety
///
/// `chain` must point to an `LgvChain`; `out` to a writable `int32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lgv_chain_callback_code(
    chain: *const LgvChain,
    out: *mut i32,
) -> LgvStatus {
    // SAFETY: forwarded from the caller's contract.
    unsafe { write_out(chain, out, |i| i.code) }
}

/// Writes the workspace lengths the integrator `spec` needs: `work_len` doubles and
/// `index_len` `uint32_t`s (checks the name and parameters).
///
/// # Safety
///
/// `spec` must point to a readable `LgvSgSpec` with NUL-terminated strings; `work_len` and
/// `index_len` to writable, distinct `size_t`s.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lgv_sg_workspace(
    spec: *const LgvSgSpec,
    work_len: *mut usize,
    index_len: *mut usize,
) -> LgvStatus {
    let outcome = (|| {
        let a = raw_region(work_len.cast_const(), 1, true)?;
        let b = raw_region(index_len.cast_const(), 1, true)?;
        disjoint(&[a, b])?;
        // SAFETY: forwarded from the caller's contract.
        let (k, parsed) = unsafe { read_sg_spec(spec) }?;
        let (w, i) = parsed.workspace(k.dim, k.terms)?;
        // SAFETY: checked non-null, aligned and distinct.
        unsafe {
            work_len.write(w);
            index_len.write(i);
        }
        Ok(())
    })();
    status(outcome)
}

/// Starts a stochastic-gradient chain at `theta0` (`spec->dim` entries) on the potential whose
/// gradients `f` adds up (see `LgvTermGradFn`), in the caller's workspaces of at least the
/// lengths `lgv_sg_workspace` gives. The chain borrows `work` and `index` until it is released
/// or initialised again.
///
/// # Safety
///
/// `chain` must point to writable memory for an `LgvSgChain`; `spec` as for
/// `lgv_sg_workspace`; `theta0`, `work` and `index` must address the entries stated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lgv_sg_init(
    chain: *mut LgvSgChain,
    spec: *const LgvSgSpec,
    theta0: *const f64,
    f: LgvTermGradFn,
    user: *mut c_void,
    work: *mut f64,
    work_len: usize,
    index: *mut u32,
    index_len: usize,
    seed: u64,
) -> LgvStatus {
    // SAFETY: forwarded from the caller's contract.
    status(unsafe {
        sg_init(
            chain, spec, theta0, f, user, work, work_len, index, index_len, seed,
        )
    })
}

/// Takes `steps` steps. On an error the position and momentum are those before the failed
/// step (the steps before it stand), and the random stream is restored to where it was.
///
/// # Safety
///
/// `chain` must point to an `LgvSgChain`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lgv_sg_step(chain: *mut LgvSgChain, steps: u32) -> LgvStatus {
    // SAFETY: forwarded from the caller's contract.
    let inner = match unsafe { sg_live(chain) } {
        Ok(i) => i,
        Err(e) => return e,
    };
    for _ in 0..steps {
        let saved = inner.rng.clone();
        match inner.chain.step(&mut inner.target, &mut inner.rng) {
            Ok(r) => {
                inner.steps += 1;
                inner.grad_evals += u64::from(r.grad_evals);
            }
            Err((s, code)) => {
                inner.rng = saved;
                inner.code = code;
                return s;
            }
        }
    }
    LGV_OK
}

/// Copies the position `theta` (`len` must be the dimension) into `out`.
///
/// # Safety
///
/// `chain` must point to an `LgvSgChain`; `out` must address `len` writable doubles.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lgv_sg_theta(
    chain: *const LgvSgChain,
    out: *mut f64,
    len: usize,
) -> LgvStatus {
    // SAFETY: forwarded; only read through the shared reborrow below.
    let inner = match unsafe { sg_live(chain.cast_mut()) } {
        Ok(i) => &*i,
        Err(e) => return e,
    };
    let theta = inner.chain.theta();
    if len != theta.len() {
        return LGV_ERR_LENGTH;
    }
    let outcome = (|| {
        let r = raw_region(out.cast_const(), len, true)?;
        let mut owned = inner.owned;
        owned[0] = raw_region(chain, 1, true)?;
        disjoint_from(&r, &owned)
    })();
    if let Err(e) = outcome {
        return e;
    }
    // SAFETY: checked non-null, aligned, `len` entries, apart from the chain's memory.
    let dst = unsafe { core::slice::from_raw_parts_mut(out, len) };
    for (d, &t) in dst.iter_mut().zip(theta) {
        *d = t;
    }
    LGV_OK
}

/// Writes the steps taken and the per-term gradients evaluated (a full gradient counts `N`)
/// to `steps` and `grad_evals`; the callback's code of the last abandoned step to `code`.
///
/// # Safety
///
/// `chain` must point to an `LgvSgChain`; the outputs to writable, distinct objects.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lgv_sg_counts(
    chain: *const LgvSgChain,
    steps: *mut u64,
    grad_evals: *mut u64,
    code: *mut i32,
) -> LgvStatus {
    // SAFETY: forwarded; only read through the shared reborrow below.
    let inner = match unsafe { sg_live(chain.cast_mut()) } {
        Ok(i) => &*i,
        Err(e) => return e,
    };
    let outcome = (|| {
        let mut owned = inner.owned;
        owned[0] = raw_region(chain, 1, true)?;
        let outs = [
            raw_region(steps.cast_const(), 1, true)?,
            raw_region(grad_evals.cast_const(), 1, true)?,
            raw_region(code.cast_const(), 1, true)?,
        ];
        disjoint(&outs)?;
        for r in &outs {
            disjoint_from(r, &owned)?;
        }
        Ok(())
    })();
    if let Err(e) = outcome {
        return e;
    }
    // SAFETY: checked non-null, aligned, distinct and apart from the chain's memory.
    unsafe {
        steps.write(inner.steps);
        grad_evals.write(inner.grad_evals);
        code.write(inner.code);
    }
    LGV_OK
}

/// Ends a stochastic-gradient chain: its workspaces belong to the caller again.
///
/// # Safety
///
/// `chain` must point to an `LgvSgChain`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lgv_sg_release(chain: *mut LgvSgChain) -> LgvStatus {
    // SAFETY: forwarded from the caller's contract.
    match unsafe { sg_live(chain) } {
        Ok(inner) => {
            inner.tag = 0;
            LGV_OK
        }
        Err(e) => e,
    }
}

/// Ends the chain: its buffers and arrays belong to the caller again, and the object reads as
/// not initialised.
///
/// # Safety
///
/// `chain` must point to an `LgvChain`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lgv_chain_release(chain: *mut LgvChain) -> LgvStatus {
    // SAFETY: forwarded from the caller's contract.
    match unsafe { live(chain) } {
        Ok(inner) => {
            inner.tag = 0;
            LGV_OK
        }
        Err(e) => e,
    }
}

// ---------------------------------------------------------------------------------------------
// Implementation (not part of the C API).
// ---------------------------------------------------------------------------------------------

/// Marks an initialised chain object ("LGV_CHN1").
const MAGIC: u64 = 0x4c47_565f_4348_4e31;

#[derive(Debug)]
enum Model {
    Lattice(IsingLattice<Dims>),
    Quadratic(BinaryQuadratic<'static>),
    Rbm(Rbm<'static>),
    Callback(BinaryCallback),
    Labels(LabelCallback),
}

#[derive(Debug)]
enum AnyChain {
    Binary(BinaryChain<'static>),
    Ordinal(OrdinalChain<'static>),
    Categorical(CategoricalChain<'static>),
}

impl AnyChain {
    fn dom(&self) -> Dom {
        match self {
            AnyChain::Binary(_) => Dom::Binary,
            AnyChain::Ordinal(_) => Dom::Ordinal,
            AnyChain::Categorical(_) => Dom::Categorical,
        }
    }
    fn dim(&self) -> usize {
        match self {
            AnyChain::Binary(c) => c.dim(),
            AnyChain::Ordinal(c) => c.dim(),
            AnyChain::Categorical(c) => c.dim(),
        }
    }
    fn states(&self) -> usize {
        match self {
            AnyChain::Binary(c) => c.states(),
            AnyChain::Ordinal(c) => c.states(),
            AnyChain::Categorical(c) => c.states(),
        }
    }
    fn grad(&self) -> &[f32] {
        match self {
            AnyChain::Binary(c) => c.grad(),
            AnyChain::Ordinal(c) => c.grad(),
            AnyChain::Categorical(c) => c.grad(),
        }
    }
    fn log_density(&self) -> f64 {
        match self {
            AnyChain::Binary(c) => c.log_density(),
            AnyChain::Ordinal(c) => c.log_density(),
            AnyChain::Categorical(c) => c.log_density(),
        }
    }
    fn labels(&self) -> Option<&[u16]> {
        match self {
            AnyChain::Binary(_) => None,
            AnyChain::Ordinal(c) => Some(c.state()),
            AnyChain::Categorical(c) => Some(c.state()),
        }
    }
    fn bits(&self) -> Option<&[u8]> {
        match self {
            AnyChain::Binary(c) => Some(c.state()),
            _ => None,
        }
    }
}

/// A byte range of caller memory; `mutable` if the chain writes it.
#[derive(Clone, Copy, Debug, Default)]
struct Region {
    start: usize,
    len: usize,
    mutable: bool,
}

impl Region {
    fn overlaps(&self, other: &Region) -> bool {
        self.len > 0
            && other.len > 0
            && self.start < other.start.saturating_add(other.len)
            && other.start < self.start.saturating_add(self.len)
    }
}

/// Every region the chain writes: the chain object, five buffers, the model cache (label
/// chains: their scratch), and the kernel's weights and indices.
const OWNED: usize = 9;
/// The most read-only arrays a model has (the RBM's `W`, `b` and `c`).
const ARRAYS: usize = 3;
/// Where the kernel's scratch regions sit in `Inner::owned`.
const KERNEL_WEIGHTS: usize = 7;
const KERNEL_INDICES: usize = 8;

/// The chain object's contents. `tag` comes first (`repr(C)`) so it can be read before the
/// rest is trusted.
#[repr(C)]
#[derive(Debug)]
struct Inner {
    tag: u64,
    kind: Kind,
    rng: Xoshiro256PlusPlus,
    stats: ChainStats,
    owned: [Region; OWNED],
    /// The model's read-only arrays (which kernel scratch must not overlap either).
    arrays: [Region; ARRAYS],
    /// The code of the last callback that abandoned a step (0 if none).
    code: i32,
    model: Model,
    chain: AnyChain,
}

const _: () = assert!(size_of::<Inner>() <= size_of::<LgvChain>());
const _: () = assert!(align_of::<Inner>() <= align_of::<LgvChain>());

/// A failed step as its status and the callback's code (0 if none).
fn settle<E: ErrorStatus>(
    r: Result<StepReport, Failure<E>>,
) -> Result<StepReport, (LgvStatus, i32)> {
    r.map_err(|f| match f {
        Failure::Unsupported => (LGV_ERR_UNSUPPORTED_KERNEL, 0),
        Failure::Step(StepError::Len(_)) => (LGV_ERR_LENGTH, 0),
        Failure::Step(StepError::Param(e)) => (param_status(e), 0),
        Failure::Step(StepError::Target(e)) => (e.status(false), e.code()),
    })
}

impl Inner {
    /// One step; on failure the chain, its random stream and its kernel are as before.
    fn step(&mut self) -> Result<StepReport, LgvStatus> {
        let saved = self.rng.clone();
        let (kind, rng) = (&mut self.kind, &mut self.rng);
        let outcome = match (&mut self.model, &mut self.chain) {
            (Model::Lattice(m), AnyChain::Binary(c)) => {
                settle(kernels::step_binary(kind, m, c, rng))
            }
            (Model::Quadratic(m), AnyChain::Binary(c)) => {
                settle(kernels::step_binary(kind, m, c, rng))
            }
            (Model::Rbm(m), AnyChain::Binary(c)) => settle(kernels::step_binary(kind, m, c, rng)),
            (Model::Callback(m), AnyChain::Binary(c)) => {
                settle(kernels::step_binary(kind, m, c, rng))
            }
            (Model::Labels(m), AnyChain::Ordinal(c)) => {
                settle(kernels::step_ordinal(kind, m, c, rng))
            }
            (Model::Labels(m), AnyChain::Categorical(c)) => {
                settle(kernels::step_categorical(kind, m, c, rng))
            }
            _ => Err((LGV_ERR_WRONG_DOMAIN, 0)),
        };
        outcome.map_err(|(status, code)| {
            self.rng = saved;
            self.code = code;
            status
        })
    }

    fn reset_bits(&mut self, x: &[u8]) -> LgvStatus {
        let AnyChain::Binary(c) = &mut self.chain else {
            return LGV_ERR_WRONG_DOMAIN;
        };
        let outcome = match &mut self.model {
            Model::Lattice(m) => c.reset(x, m).map_err(init_status),
            Model::Quadratic(m) => c.reset(x, m).map_err(init_status),
            Model::Rbm(m) => c.reset(x, m).map_err(init_status),
            Model::Callback(m) => c.reset(x, m).map_err(init_status),
            Model::Labels(_) => Err(LGV_ERR_WRONG_DOMAIN),
        };
        status(outcome)
    }

    fn reset_labels(&mut self, x: &[u16]) -> LgvStatus {
        let Model::Labels(m) = &mut self.model else {
            return LGV_ERR_WRONG_DOMAIN;
        };
        let outcome = match &mut self.chain {
            AnyChain::Ordinal(c) => c.reset(x, m).map_err(init_status),
            AnyChain::Categorical(c) => c.reset(x, m).map_err(init_status),
            AnyChain::Binary(_) => Err(LGV_ERR_WRONG_DOMAIN),
        };
        status(outcome)
    }

    /// The regions the chain writes, with the chain object where it lives now (`here`: it may
    /// have been moved since `init` recorded its address).
    fn owned_here(&self, here: *const LgvChain) -> Result<[Region; OWNED], LgvStatus> {
        let mut owned = self.owned;
        owned[0] = raw_region(here, 1, true)?;
        Ok(owned)
    }

    /// Checks a caller pointer for `len` entries of `T`: aligned and apart from everything the
    /// chain writes.
    fn check_out<T>(
        &self,
        here: *const LgvChain,
        p: *const T,
        len: usize,
    ) -> Result<(), LgvStatus> {
        let r = raw_region(p, len, true)?;
        disjoint_from(&r, &self.owned_here(here)?)
    }

    /// Installs a kernel with its scratch regions (empty for the `LgvKernel` kernels).
    fn install(&mut self, kind: Kind, weights: Region, indices: Region) {
        self.kind = kind;
        self.owned[KERNEL_WEIGHTS] = weights;
        self.owned[KERNEL_INDICES] = indices;
    }
}

fn param_status(e: ParamError) -> LgvStatus {
    match e {
        ParamError::Step(_) => LGV_ERR_STEP,
        ParamError::Balance(_) => LGV_ERR_BALANCE,
        ParamError::EmptyDimension => LGV_ERR_EMPTY_DIMENSION,
        ParamError::NonFinite(_) => LGV_ERR_NON_FINITE_PARAMETER,
        ParamError::OutOfRange { .. }
        | ParamError::Preconditioner { .. }
        | ParamError::TuningBudget { .. } => LGV_ERR_PARAMETER_OUT_OF_RANGE,
        ParamError::Len(_) => LGV_ERR_LENGTH,
        _ => LGV_ERR_PARAMETER,
    }
}

fn init_status<E: ErrorStatus>(e: InitError<E>) -> LgvStatus {
    match e {
        InitError::EmptyDimension => LGV_ERR_EMPTY_DIMENSION,
        InitError::Len(_) => LGV_ERR_LENGTH,
        InitError::States(_) => LGV_ERR_PARAMETER_OUT_OF_RANGE,
        InitError::StateOutOfRange { .. } => LGV_ERR_STATE_OUT_OF_RANGE,
        InitError::NonFinite => LGV_ERR_NON_FINITE_START,
        InitError::Target(e) => e.status(true),
    }
}

/// The byte range of `len` entries of `T` at `p`, after the null, alignment and size checks.
/// `NULL` is accepted for `len == 0`.
fn raw_region<T>(p: *const T, len: usize, mutable: bool) -> Result<Region, LgvStatus> {
    if len == 0 {
        return Ok(Region::default());
    }
    if p.is_null() {
        return Err(LGV_ERR_NULL);
    }
    if !p.is_aligned() {
        return Err(LGV_ERR_ALIGNMENT);
    }
    let bytes = len
        .checked_mul(size_of::<T>())
        .filter(|&b| b <= isize::MAX as usize && (p as usize).checked_add(b).is_some())
        .ok_or(LGV_ERR_SIZE_OVERFLOW)?;
    Ok(Region {
        start: p as usize,
        len: bytes,
        mutable,
    })
}

/// Refuses any overlap that involves a mutable region.
fn disjoint(regions: &[Region]) -> Result<(), LgvStatus> {
    for (i, a) in regions.iter().enumerate() {
        for b in regions.iter().skip(i + 1) {
            if (a.mutable || b.mutable) && a.overlaps(b) {
                return Err(LGV_ERR_OVERLAP);
            }
        }
    }
    Ok(())
}

fn disjoint_from(r: &Region, others: &[Region]) -> Result<(), LgvStatus> {
    if others
        .iter()
        .any(|o| (o.mutable || r.mutable) && o.overlaps(r))
    {
        Err(LGV_ERR_OVERLAP)
    } else {
        Ok(())
    }
}

/// A shared slice over caller memory; empty for `len == 0` (even if `p` is NULL).
///
/// # Safety
///
/// `p` must have passed [`raw_region`] for `len`, and (if `len > 0`) address `len` initialised
/// entries that nothing mutates for `'static` (in practice: until the chain borrowing them is
/// released).
unsafe fn view<T>(p: *const T, len: usize) -> &'static [T] {
    if len == 0 {
        return &[];
    }
    // SAFETY: non-null, aligned, size checked by `raw_region`; validity is the caller's.
    unsafe { core::slice::from_raw_parts(p, len) }
}

/// A mutable slice over caller memory; see [`view`].
///
/// # Safety
///
/// As for [`view`], and nothing else may access the entries while the slice lives.
unsafe fn view_mut<T>(p: *mut T, len: usize) -> &'static mut [T] {
    if len == 0 {
        return &mut [];
    }
    // SAFETY: non-null, aligned, size checked by `raw_region`; exclusivity is the caller's
    // contract and the overlap checks.
    unsafe { core::slice::from_raw_parts_mut(p, len) }
}

/// Reads and validates a kernel description for a chain of domain `dom`.
///
/// # Safety
///
/// `kernel` must be NULL or point to a readable `LgvKernel`.
unsafe fn read_kernel(kernel: *const LgvKernel, dom: Dom) -> Result<Kind, LgvStatus> {
    raw_region(kernel, 1, false)?;
    // SAFETY: non-null and aligned; readable by the caller's contract.
    let k = unsafe { ptr::read(kernel) };
    if !matches!(k.kind, LGV_KERNEL_DULA | LGV_KERNEL_DMALA | LGV_KERNEL_AB) {
        return Err(LGV_ERR_UNKNOWN_KERNEL);
    }
    let props = Props::new(dom, k.step, k.balance, None)?;
    Ok(match k.kind {
        LGV_KERNEL_DULA => Kind::Dula(props),
        LGV_KERNEL_DMALA => Kind::Dmala(props),
        _ => {
            let mut settings = AbSettings::default();
            settings.step = k.step;
            settings.balance = k.balance;
            settings.budget = k.burn_in;
            Kind::Ab(AbTuner::new(settings).map_err(param_status)?)
        }
    })
}

/// Reads a kernel specification's name and parameters.
///
/// # Safety
///
/// `spec` must be NULL or point to a readable `LgvKernelSpec` whose strings are NULL or
/// NUL-terminated.
unsafe fn read_spec(spec: *const LgvKernelSpec) -> Result<(LgvKernelSpec, Spec), LgvStatus> {
    raw_region(spec, 1, false)?;
    // SAFETY: non-null and aligned; readable by the caller's contract.
    let k = unsafe { ptr::read(spec) };
    if k.name.is_null() {
        return Err(LGV_ERR_NULL);
    }
    // SAFETY: non-null; NUL-terminated by the caller's contract.
    let name = unsafe { CStr::from_ptr(k.name) }.to_bytes();
    let params = if k.params.is_null() {
        &[]
    } else {
        // SAFETY: non-null; NUL-terminated by the caller's contract.
        unsafe { CStr::from_ptr(k.params) }.to_bytes()
    };
    let parsed = Spec::parse(name, params)?;
    Ok((k, parsed))
}

/// The live chain behind `chain`.
///
/// # Safety
///
/// `chain` must be NULL or point to an `LgvChain` not otherwise borrowed for `'a`.
unsafe fn live<'a>(chain: *mut LgvChain) -> Result<&'a mut Inner, LgvStatus> {
    raw_region(chain.cast_const(), 1, true)?;
    // SAFETY: non-null and aligned; `LgvChain` is plain words, so reading the first is valid.
    let tag = unsafe { ptr::read(chain.cast::<u64>()) };
    if tag != MAGIC {
        return Err(LGV_ERR_NOT_INITIALISED);
    }
    // SAFETY: the tag is only ever written by `init` together with a valid `Inner`, which fits
    // and is aligned (checked at compile time).
    Ok(unsafe { &mut *chain.cast::<Inner>() })
}

/// Writes `f(chain)` to `out` after checking it.
///
/// # Safety
///
/// As for [`live`]; `out` must be NULL or point to writable memory for a `T`.
unsafe fn write_out<T>(
    chain: *const LgvChain,
    out: *mut T,
    f: impl FnOnce(&Inner) -> T,
) -> LgvStatus {
    // SAFETY: forwarded; only read through the shared reborrow below.
    let inner = match unsafe { live(chain.cast_mut()) } {
        Ok(i) => &*i,
        Err(e) => return e,
    };
    if let Err(e) = inner.check_out(chain, out.cast_const(), 1) {
        return e;
    }
    let value = f(inner);
    // SAFETY: checked non-null, aligned and apart from the chain's memory.
    unsafe { out.write(value) };
    LGV_OK
}

/// The body of the reset functions: `x` (`len` entries) checked against the chain's memory,
/// then handed to `reset`.
///
/// # Safety
///
/// `chain` must point to an `LgvChain`; `x` must address `len` readable entries.
unsafe fn reset_from<T: 'static>(
    chain: *mut LgvChain,
    x: *const T,
    len: usize,
    reset: impl FnOnce(&mut Inner, &[T]) -> LgvStatus,
) -> LgvStatus {
    // SAFETY: forwarded from the caller's contract.
    let inner = match unsafe { live(chain) } {
        Ok(i) => i,
        Err(e) => return e,
    };
    if let Err(e) = inner.check_out(chain, x, len) {
        return e;
    }
    // SAFETY: the caller guarantees `len` readable entries; checked above (non-null, aligned,
    // sized, apart from the chain's memory).
    let x = unsafe { view(x, len) };
    reset(inner, x)
}

/// Copies `f(chain)` into `out[..len]`; `len` must be its length.
///
/// # Safety
///
/// As for [`write_out`], with `len` entries at `out`.
unsafe fn copy_out<T: Copy>(
    chain: *const LgvChain,
    out: *mut T,
    len: usize,
    f: impl for<'c> FnOnce(&'c AnyChain) -> Option<&'c [T]>,
) -> LgvStatus {
    // SAFETY: forwarded; only read through the shared reborrow below.
    let inner = match unsafe { live(chain.cast_mut()) } {
        Ok(i) => &*i,
        Err(e) => return e,
    };
    let Some(src) = f(&inner.chain) else {
        return LGV_ERR_WRONG_DOMAIN;
    };
    if len != src.len() {
        return LGV_ERR_LENGTH;
    }
    if let Err(e) = inner.check_out(chain, out.cast_const(), len) {
        return e;
    }
    // SAFETY: checked non-null, aligned, `len` entries, apart from the chain's memory.
    let dst = unsafe { core::slice::from_raw_parts_mut(out, len) };
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = s;
    }
    LGV_OK
}

fn status(r: Result<(), LgvStatus>) -> LgvStatus {
    match r {
        Ok(()) => LGV_OK,
        Err(e) => e,
    }
}

/// The common part of every binary `lgv_chain_init_*`: `arrays` are the model's arrays as
/// `raw_region` checked them one by one (the first refusal, in their order, is the status),
/// `model` builds the model once every region is known to be disjoint.
///
/// # Safety
///
/// As for `lgv_chain_init_ising_lattice`.
unsafe fn init<const N: usize>(
    chain: *mut LgvChain,
    buffers: *const LgvBuffers,
    kernel: *const LgvKernel,
    seed: u64,
    checked: [Result<Region, LgvStatus>; N],
    model: impl FnOnce() -> Result<Model, LgvStatus>,
) -> Result<(), LgvStatus> {
    let mut arrays = [Region::default(); N];
    for (slot, r) in arrays.iter_mut().zip(checked) {
        *slot = r?;
    }
    let chain_region = raw_region(chain.cast_const(), 1, true)?;
    raw_region(buffers, 1, false)?;
    // SAFETY: non-null and aligned; readable by the caller's contract.
    let b = unsafe { ptr::read(buffers) };
    // SAFETY: forwarded from the caller's contract.
    let kind = unsafe { read_kernel(kernel, Dom::Binary) }?;
    let owned = [
        chain_region,
        raw_region(b.x.cast_const(), b.len, true)?,
        raw_region(b.grad.cast_const(), b.len, true)?,
        raw_region(b.x_proposal.cast_const(), b.len, true)?,
        raw_region(b.grad_proposal.cast_const(), b.len, true)?,
        raw_region(b.flipped.cast_const(), b.len, true)?,
        arrays
            .iter()
            .copied()
            .find(|r| r.mutable)
            .unwrap_or_default(),
        Region::default(),
        Region::default(),
    ];
    let mut all = [Region::default(); OWNED + 4];
    let read_only = arrays.iter().filter(|r| !r.mutable);
    for (slot, r) in all.iter_mut().zip(owned.iter().chain(read_only)) {
        *slot = *r;
    }
    disjoint(&all)?;
    let mut model = model()?;
    if b.len != model_dim(&model) {
        return Err(LGV_ERR_LENGTH);
    }
    // SAFETY: each buffer passed `raw_region` and the overlap check; validity and exclusivity
    // while the chain lives are the caller's contract.
    let buffers = unsafe {
        ChainBuffers {
            x: view_mut(b.x, b.len),
            grad: view_mut(b.grad, b.len),
            x_proposal: view_mut(b.x_proposal, b.len),
            grad_proposal: view_mut(b.grad_proposal, b.len),
            flipped: view_mut(b.flipped, b.len),
        }
    };
    let started = match &mut model {
        Model::Lattice(m) => BinaryChain::new(buffers, m).map_err(init_status),
        Model::Quadratic(m) => BinaryChain::new(buffers, m).map_err(init_status),
        Model::Rbm(m) => BinaryChain::new(buffers, m).map_err(init_status),
        Model::Callback(m) => BinaryChain::new(buffers, m).map_err(init_status),
        Model::Labels(_) => Err(LGV_ERR_WRONG_DOMAIN),
    }?;
    let mut read_only = [Region::default(); ARRAYS];
    for (slot, r) in read_only
        .iter_mut()
        .zip(arrays.iter().filter(|r| !r.mutable))
    {
        *slot = *r;
    }
    // SAFETY: `chain` passed `raw_region` above; writable by the caller's contract.
    unsafe {
        store(
            chain,
            kind,
            seed,
            (owned, read_only),
            model,
            AnyChain::Binary(started),
        )
    };
    Ok(())
}

/// Writes a live chain object.
///
/// # Safety
///
/// `chain` must be non-null, aligned and writable for an `LgvChain`.
unsafe fn store(
    chain: *mut LgvChain,
    kind: Kind,
    seed: u64,
    (owned, arrays): ([Region; OWNED], [Region; ARRAYS]),
    model: Model,
    started: AnyChain,
) {
    let inner = Inner {
        tag: MAGIC,
        kind,
        rng: Xoshiro256PlusPlus::seed_from_u64(seed),
        stats: ChainStats::default(),
        owned,
        arrays,
        code: 0,
        model,
        chain: started,
    };
    // SAFETY: `chain` is non-null, aligned for `LgvChain` (hence for `Inner`, checked at compile
    // time) and large enough; whatever it held is plain data and is overwritten.
    unsafe { chain.cast::<Inner>().write(inner) };
}

/// `lgv_chain_init_label_callback` after the null check of the function.
///
/// # Safety
///
/// As for `lgv_chain_init_label_callback`.
unsafe fn init_labels(
    chain: *mut LgvChain,
    domain: u32,
    f: callback::LabelFn,
    user: *mut c_void,
    buffers: *const LgvLabelBuffers,
    kernel: *const LgvKernel,
    seed: u64,
) -> Result<(), LgvStatus> {
    let chain_region = raw_region(chain.cast_const(), 1, true)?;
    raw_region(buffers, 1, false)?;
    // SAFETY: non-null and aligned; readable by the caller's contract.
    let b = unsafe { ptr::read(buffers) };
    let dom = match domain {
        LGV_DOMAIN_ORDINAL => Dom::Ordinal,
        LGV_DOMAIN_CATEGORICAL => Dom::Categorical,
        _ => return Err(LGV_ERR_WRONG_DOMAIN),
    };
    // SAFETY: forwarded from the caller's contract.
    let kind = unsafe { read_kernel(kernel, dom) }?;
    let (d, s) = (b.dim, b.states);
    let g = match dom {
        Dom::Categorical => d.checked_mul(s).ok_or(LGV_ERR_SIZE_OVERFLOW)?,
        _ => d,
    };
    let owned = [
        chain_region,
        raw_region(b.x.cast_const(), d, true)?,
        raw_region(b.grad.cast_const(), g, true)?,
        raw_region(b.x_proposal.cast_const(), d, true)?,
        raw_region(b.grad_proposal.cast_const(), g, true)?,
        raw_region(b.changed.cast_const(), d, true)?,
        raw_region(b.scratch.cast_const(), s, true)?,
        Region::default(),
        Region::default(),
    ];
    disjoint(&owned)?;
    let mut model = LabelCallback {
        f,
        user,
        dim: d,
        states: s,
    };
    // SAFETY: each buffer passed `raw_region` and the overlap check; validity and exclusivity
    // while the chain lives are the caller's contract.
    let buffers = unsafe {
        LabelBuffers {
            x: view_mut(b.x, d),
            grad: view_mut(b.grad, g),
            x_proposal: view_mut(b.x_proposal, d),
            grad_proposal: view_mut(b.grad_proposal, g),
            changed: view_mut(b.changed, d),
            scratch: view_mut(b.scratch, s),
        }
    };
    let started = match dom {
        Dom::Ordinal => Chain::new_ordinal(buffers, &mut model)
            .map(AnyChain::Ordinal)
            .map_err(init_status),
        _ => Chain::new_categorical(buffers, &mut model)
            .map(AnyChain::Categorical)
            .map_err(init_status),
    }?;
    // SAFETY: checked non-null and aligned above; writable by the caller's contract.
    unsafe {
        store(
            chain,
            kind,
            seed,
            (owned, [Region::default(); ARRAYS]),
            Model::Labels(model),
            started,
        )
    };
    Ok(())
}

/// Marks an initialised stochastic-gradient chain object ("LGV_SGC1").
const SG_MAGIC: u64 = 0x4c47_565f_5347_4331;

/// A stochastic-gradient chain object's contents.
#[repr(C)]
#[derive(Debug)]
struct SgInner {
    tag: u64,
    rng: Xoshiro256PlusPlus,
    /// The object, the workspace and the index workspace.
    owned: [Region; 3],
    steps: u64,
    grad_evals: u64,
    code: i32,
    target: sg::SumCallback,
    chain: sg::SgChain,
}

const _: () = assert!(size_of::<SgInner>() <= size_of::<LgvSgChain>());
const _: () = assert!(align_of::<SgInner>() <= align_of::<LgvSgChain>());

/// Reads an integrator specification.
///
/// # Safety
///
/// As for [`read_spec`].
unsafe fn read_sg_spec(spec: *const LgvSgSpec) -> Result<(LgvSgSpec, sg::SgSpec), LgvStatus> {
    raw_region(spec, 1, false)?;
    // SAFETY: non-null and aligned; readable by the caller's contract.
    let k = unsafe { ptr::read(spec) };
    if k.name.is_null() {
        return Err(LGV_ERR_NULL);
    }
    // SAFETY: non-null; NUL-terminated by the caller's contract.
    let name = unsafe { CStr::from_ptr(k.name) }.to_bytes();
    let params = if k.params.is_null() {
        &[]
    } else {
        // SAFETY: non-null; NUL-terminated by the caller's contract.
        unsafe { CStr::from_ptr(k.params) }.to_bytes()
    };
    let parsed = sg::SgSpec::parse(name, params)?;
    Ok((k, parsed))
}

/// The live stochastic-gradient chain behind `chain`.
///
/// # Safety
///
/// As for [`live`].
unsafe fn sg_live<'a>(chain: *mut LgvSgChain) -> Result<&'a mut SgInner, LgvStatus> {
    raw_region(chain.cast_const(), 1, true)?;
    // SAFETY: non-null and aligned; `LgvSgChain` is plain words, so reading the first is valid.
    let tag = unsafe { ptr::read(chain.cast::<u64>()) };
    if tag != SG_MAGIC {
        return Err(LGV_ERR_NOT_INITIALISED);
    }
    // SAFETY: the tag is only ever written by `sg_init` together with a valid `SgInner`.
    Ok(unsafe { &mut *chain.cast::<SgInner>() })
}

/// `lgv_sg_init`.
///
/// # Safety
///
/// As for `lgv_sg_init`.
#[allow(clippy::too_many_arguments, reason = "the C signature")]
unsafe fn sg_init(
    chain: *mut LgvSgChain,
    spec: *const LgvSgSpec,
    theta0: *const f64,
    f: LgvTermGradFn,
    user: *mut c_void,
    work: *mut f64,
    work_len: usize,
    index: *mut u32,
    index_len: usize,
    seed: u64,
) -> Result<(), LgvStatus> {
    let object = raw_region(chain.cast_const(), 1, true)?;
    // SAFETY: forwarded from the caller's contract.
    let (k, parsed) = unsafe { read_sg_spec(spec) }?;
    let f = f.ok_or(LGV_ERR_NULL)?;
    let (need_work, need_index) = parsed.workspace(k.dim, k.terms)?;
    if work_len < need_work || index_len < need_index {
        return Err(LGV_ERR_SCRATCH);
    }
    let owned = [
        object,
        raw_region(work.cast_const(), need_work, true)?,
        raw_region(index.cast_const(), need_index, true)?,
    ];
    let start = raw_region(theta0, k.dim, false)?;
    disjoint(&[owned[0], owned[1], owned[2], start])?;
    // SAFETY: checked non-null, aligned, sized and disjoint; validity and exclusivity while
    // the chain lives are the caller's contract.
    let (theta0, work, index) = unsafe {
        (
            view(theta0, k.dim),
            view_mut(work, need_work),
            view_mut(index, need_index),
        )
    };
    let started = parsed.build(k.dim, k.terms, theta0, work, index)?;
    let inner = SgInner {
        tag: SG_MAGIC,
        rng: Xoshiro256PlusPlus::seed_from_u64(seed),
        owned,
        steps: 0,
        grad_evals: 0,
        code: 0,
        target: sg::SumCallback {
            f,
            user,
            dim: k.dim,
            terms: k.terms,
        },
        chain: started,
    };
    // SAFETY: `chain` is non-null, aligned for `LgvSgChain` (hence for `SgInner`, checked at
    // compile time) and large enough.
    unsafe { chain.cast::<SgInner>().write(inner) };
    Ok(())
}

fn model_dim(m: &Model) -> usize {
    match m {
        Model::Lattice(m) => m.dim(),
        Model::Quadratic(m) => m.dim(),
        Model::Rbm(m) => m.dim(),
        Model::Callback(m) => m.dim,
        Model::Labels(m) => m.dim,
    }
}

#[cfg(all(not(feature = "std"), not(test), not(feature = "no-panic-proof")))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // No reachable panic is known (see the no-panic probe); should one happen, stop here.
    loop {
        core::hint::spin_loop();
    }
}

#[cfg(all(not(feature = "std"), not(test), feature = "no-panic-proof"))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    unsafe extern "C" {
        /// Defined nowhere: the link fails if a panic is reachable.
        fn panic_is_reachable() -> !;
    }
    // SAFETY: never executed; the link fails if this call survives optimisation.
    unsafe { panic_is_reachable() }
}
