/*
 * langevin.h: C ABI of the langevin chains (every no_std sampler of the registry on
 * built-in models or on targets given by C callbacks), in caller-owned memory.
 *
 * Generated from ffi/src/lib.rs by cbindgen (ffi/cbindgen.toml); do not edit. Regenerate with
 * LANGEVIN_BLESS=1 cargo test -p langevin-ffi --test header
 */

#ifndef LANGEVIN_H
#define LANGEVIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/**
 * Major version of the library this header belongs to.
 */
#define LGV_VERSION_MAJOR 0

/**
 * Minor version of the library this header belongs to.
 */
#define LGV_VERSION_MINOR 1

/**
 * Patch version of the library this header belongs to.
 */
#define LGV_VERSION_PATCH 0

/**
 * The version as one number, `major * 10000 + minor * 100 + patch`; compare it with
 * `lgv_version()` to check that header and library match.
 */
#define LGV_VERSION 100

/**
 * A log-density callback's success: `*log_density` (and `grad`, if not NULL) are written.
 */
#define LGV_CALLBACK_OK 0

/**
 * A log-density callback's refusal of the state it was given: the proposal is rejected and
 * counted (`LGV_REJECTION_TARGET_ERROR`), and the chain stays where it was.
 */
#define LGV_CALLBACK_REJECT 1

/**
 * Binary states `{0,1}^d` (`uint8_t` entries).
 */
#define LGV_DOMAIN_BINARY 0

/**
 * Ordinal states `{0..S-1}^d` (`uint16_t` entries; the order of the values matters); the
 * gradient has `d` entries.
 */
#define LGV_DOMAIN_ORDINAL 1

/**
 * Categorical states `{0..S-1}^d` (`uint16_t` labels, unordered); the gradient has `d * S`
 * entries, `grad[i * S + k]` for coordinate `i` taking value `k`.
 */
#define LGV_DOMAIN_CATEGORICAL 2

/**
 * The discrete unadjusted Langevin kernel (every valid proposal accepted).
 */
#define LGV_KERNEL_DULA 1

/**
 * The discrete Metropolis-adjusted Langevin kernel.
 */
#define LGV_KERNEL_DMALA 2

/**
 * AB-1st: the Metropolis-adjusted kernel with its step and balance tuned for `burn_in` steps
 * (starting from `step` and `balance`), then frozen; afterwards every step is exact DMALA
 * with the chosen values (read them with `lgv_chain_ab_params`).
 */
#define LGV_KERNEL_AB 3

/**
 * The proposal was valid (accepted or lost the Metropolis test).
 */
#define LGV_REJECTION_NONE 0

/**
 * The target returned a non-finite log-density or gradient at the proposal.
 */
#define LGV_REJECTION_NON_FINITE 1

/**
 * The target returned a recoverable error at the proposal.
 */
#define LGV_REJECTION_TARGET_ERROR 2

/**
 * Size of a chain object in 64-bit words.
 */
#define LGV_CHAIN_WORDS 320

/**
 * Size of a stochastic-gradient chain object in 64-bit words.
 */
#define LGV_SG_CHAIN_WORDS 48

/**
 * The result of every function: `LGV_OK` (0) or a positive error code.
 */
typedef int32_t LgvStatus;

/**
 * Storage for one chain. Treat as opaque; zero-fill it before first use.
 */
typedef struct LgvChain {
    /**
     * Private.
     */
    uint64_t opaque[LGV_CHAIN_WORDS];
} LgvChain;

/**
 * The buffers of a chain, each of `len` entries, which must equal the model's dimension.
 */
typedef struct LgvBuffers {
    /**
     * The initial state (entries 0 or 1); afterwards scratch: read the state with
     * `lgv_chain_state`.
     */
    uint8_t *x;
    /**
     * Gradient at the current state.
     */
    float *grad;
    /**
     * Room for a proposed state.
     */
    uint8_t *x_proposal;
    /**
     * Room for the gradient at a proposed state.
     */
    float *grad_proposal;
    /**
     * Room for the indices a proposal flips.
     */
    uint32_t *flipped;
    /**
     * Entries in each buffer.
     */
    size_t len;
} LgvBuffers;

/**
 * A kernel and its parameters.
 */
typedef struct LgvKernel {
    /**
     * `LGV_KERNEL_DULA`, `LGV_KERNEL_DMALA` or `LGV_KERNEL_AB`.
     */
    uint32_t kind;
    /**
     * Step size `a` (finite, greater than zero).
     */
    double step;
    /**
     * Balance `b` in (0, 1]; 0.5 is the discrete Langevin proposal.
     */
    double balance;
    /**
     * `LGV_KERNEL_AB` only: the number of steps during which `step` and `balance` are tuned
     * (0 runs DMALA with the given values). Ignored by the other kernels.
     */
    uint64_t burn_in;
} LgvKernel;

/**
 * The parameters of an AB-1st chain.
 */
typedef struct LgvAbParams {
    /**
     * The step `a` the next step uses (final once frozen).
     */
    double step;
    /**
     * The balance `b` the next step uses (final once frozen).
     */
    double balance;
    /**
     * Steps spent tuning so far.
     */
    uint64_t tuning_steps;
    /**
     * 1 once tuning is over (the burn-in is spent, or the probe size fell below its minimum).
     */
    uint32_t frozen;
} LgvAbParams;

/**
 * What the last step did.
 */
typedef struct LgvStepReport {
    /**
     * 1 if the chain moved to the proposal (a proposal with no flips counts as accepted).
     */
    uint32_t accepted;
    /**
     * Coordinates the proposal flipped.
     */
    uint32_t proposed_flips;
    /**
     * The log Metropolis-Hastings ratio (0 for DULA and empty proposals, -inf or NaN when the
     * proposal was invalid).
     */
    double log_accept_ratio;
    /**
     * One of the `LGV_REJECTION_*` values.
     */
    uint32_t rejection;
    /**
     * Target evaluations the step spent (0 or 1).
     */
    uint32_t evaluations;
} LgvStepReport;

/**
 * Running totals since the chain was initialised.
 */
typedef struct LgvStats {
    /**
     * Steps taken.
     */
    uint64_t steps;
    /**
     * Steps whose proposal was adopted.
     */
    uint64_t accepted;
    /**
     * Sum of proposed flips.
     */
    uint64_t proposed_flips;
    /**
     * Sum of flips that took effect.
     */
    uint64_t accepted_flips;
    /**
     * Proposals rejected as invalid.
     */
    uint64_t invalid;
    /**
     * Target evaluations.
     */
    uint64_t evaluations;
} LgvStats;

/**
 * A binary log-density written by the caller: writes `U(x)` (the log-density up to a
 * constant, higher is more likely) to `*log_density` and, unless `grad` is NULL, the gradient
 * of a differentiable extension of `U` at `x` to `grad[0..dim]`; returns `LGV_CALLBACK_OK`,
 * `LGV_CALLBACK_REJECT` (this state is impossible: the proposal is rejected and counted) or
 * any other code to abandon the step (`LGV_ERR_CALLBACK`).
 *
 * Contract: the result depends only on `(x, user)` (seeded runs replay bit for bit only
 * then); the function is called only from the thread stepping the chain, during
 * `lgv_chain_init_*`, `lgv_chain_step` and `lgv_chain_reset*` (give each chain its own `user`,
 * or make it safe to share); it must not unwind (C++ exceptions, Rust panics) or `longjmp`
 * out of the call (catch inside and return a code); it must not call back into the library
 * for the same chain. `x` has `dim` entries, each 0 or 1, and must not be written. A NaN or
 * infinite value or gradient is reported as `LGV_ERR_CALLBACK_NON_FINITE` (at the initial
 * state: `LGV_ERR_NON_FINITE_START`); return `LGV_CALLBACK_REJECT` for states of zero
 * probability. The library passes a gradient buffer on every call today; accept NULL all the
 * same (value only).
 */
typedef int32_t (*LgvLogDensityFn)(void *user,
                                   const uint8_t *x,
                                   size_t dim,
                                   double *log_density,
                                   float *grad);

/**
 * An ordinal or categorical log-density written by the caller: as `LgvLogDensityFn`, over
 * `x[0..dim]` with entries below `states`; the gradient has `dim` entries (ordinal) or
 * `dim * states` (categorical, `grad[i * states + k]`).
 */
typedef int32_t (*LgvLabelLogDensityFn)(void *user,
                                        const uint16_t *x,
                                        size_t dim,
                                        size_t states,
                                        double *log_density,
                                        float *grad);

/**
 * The buffers of an ordinal or categorical chain of `dim` coordinates over `states` values.
 */
typedef struct LgvLabelBuffers {
    /**
     * The initial state (`dim` entries below `states`); afterwards scratch: read the state
     * with `lgv_chain_labels`.
     */
    uint16_t *x;
    /**
     * Gradient at the current state: `dim` entries (ordinal) or `dim * states` (categorical).
     */
    float *grad;
    /**
     * Room for a proposed state (`dim` entries).
     */
    uint16_t *x_proposal;
    /**
     * Room for the gradient at a proposed state (as `grad`).
     */
    float *grad_proposal;
    /**
     * Room for the indices a proposal changes (`dim` entries).
     */
    uint32_t *changed;
    /**
     * Work space of `states` entries.
     */
    double *scratch;
    /**
     * Coordinates `d`.
     */
    size_t dim;
    /**
     * Values per coordinate `S` (2 to 65535).
     */
    size_t states;
} LgvLabelBuffers;

/**
 * A kernel by the command line's sampler name, with its parameters.
 *
 * Samplers (see `langevin samplers`): `dula`, `dmala`, `gibbs` (one step is one site update;
 * the command line's step is a sweep of `d` of them), `gwg`, `rwm`, `ab`, `acs`, `lb`,
 * `hamming-ball`, `pas`, `dlmc`. `ab2`, `block-gibbs` and `pt-dmala` need the standard
 * library or several chains: `LGV_ERR_UNSUPPORTED_KERNEL`.
 */
typedef struct LgvKernelSpec {
    /**
     * The sampler's name (NUL-terminated).
     */
    const char *name;
    /**
     * Its parameters as `key=value` pairs separated by spaces or commas, with the command
     * line's flag names without `--` and its defaults for those left out, for example
     * `"step=0.3 balance=0.5"`, `"scan=random"`, `"path-length=auto"`,
     * `"adapt=acceptance target-acceptance=0.6"`. NULL or "" for the defaults.
     */
    const char *params;
    /**
     * Steps during which tuned samplers adapt (`ab`, `acs`, `rwm`, `dmala adapt=acceptance`,
     * `pas path-length=auto`, `dlmc time=auto`), counted from this call.
     */
    uint64_t burn_in;
    /**
     * Steps planned after `burn_in` (`acs` spends a tenth of `burn_in + steps` tuning).
     */
    uint64_t steps;
    /**
     * Room the kernel works in (`lb`, `hamming-ball`, `pas`): at least the length
     * `lgv_chain_kernel_scratch` gives; NULL when that is 0.
     */
    double *scratch;
    /**
     * Entries at `scratch`.
     */
    size_t scratch_len;
    /**
     * Room for indices (`pas`): as for `scratch`.
     */
    uint32_t *indices;
    /**
     * Entries at `indices`.
     */
    size_t indices_len;
} LgvKernelSpec;

/**
 * A stochastic-gradient integrator by the command line's name (`langevin sample-continuous
 * --sampler`), with its parameters and the problem's shape.
 *
 * Integrators and parameters (the command line's flags without `--`; `step` is required):
 * `lmc` (step: full gradients), `sgld` (step, batch = 1, access = random|reshuffle|cyclic),
 * `sghmc` (step, friction = 1, batch, access), `ewsg` (step, friction, batch,
 * index-chain = 1). `agld` needs snapshot tables: `LGV_ERR_UNSUPPORTED_KERNEL`.
 */
typedef struct LgvSgSpec {
    /**
     * The integrator's name (NUL-terminated).
     */
    const char *name;
    /**
     * `key=value` pairs separated by spaces or commas, for example `"step=0.01 batch=8"`.
     */
    const char *params;
    /**
     * Coordinates `d` of `theta`.
     */
    size_t dim;
    /**
     * Terms `N` of the potential.
     */
    size_t terms;
} LgvSgSpec;

/**
 * Storage for one stochastic-gradient chain. Treat as opaque; zero-fill it before first use.
 */
typedef struct LgvSgChain {
    /**
     * Private.
     */
    uint64_t opaque[LGV_SG_CHAIN_WORDS];
} LgvSgChain;

/**
 * A potential `V(theta) = sum_i V_i(theta)` over `terms` terms written by the caller: adds
 * `scale * sum_k grad V_{indices[k]}(theta)` to `acc[0..dim]` (it must add, not overwrite) and
 * returns 0, or any other code to abandon the step (`LGV_ERR_CALLBACK`). `V` is a potential:
 * lower is more likely, `pi(theta) ~ exp(-V(theta))`.
 *
 * Minibatch estimates call it once per minibatch with its `count` drawn indices in the order
 * drawn (repeats possible; a minibatch of more than 64 in consecutive calls of up to 64), and
 * full gradients with every index in order, up to 64 at a time; accept any `count`. Adding
 * the terms in the order given makes a run the same, bit for bit, as with one index per call.
 * The contract of `LgvLogDensityFn` applies: pure in `(theta, indices, user)`, called only
 * from the thread stepping the chain, no unwinding or `longjmp` out of it. Non-finite
 * gradients are reported as `LGV_ERR_CALLBACK_NON_FINITE`.
 */
typedef int32_t (*LgvTermGradFn)(void *user,
                                 const double *theta,
                                 size_t dim,
                                 const uint32_t *indices,
                                 size_t count,
                                 double scale,
                                 double *acc);

/**
 * Success.
 */
#define LGV_OK 0

/**
 * A required pointer was NULL.
 */
#define LGV_ERR_NULL 1

/**
 * A pointer is not aligned for its element type.
 */
#define LGV_ERR_ALIGNMENT 2

/**
 * A buffer the chain writes overlaps another buffer, the model arrays or the chain object.
 */
#define LGV_ERR_OVERLAP 3

/**
 * The model has dimension zero.
 */
#define LGV_ERR_EMPTY_DIMENSION 4

/**
 * A length does not fit the model.
 */
#define LGV_ERR_LENGTH 5

/**
 * A length is too large to address.
 */
#define LGV_ERR_SIZE_OVERFLOW 6

/**
 * A model parameter is NaN or infinite.
 */
#define LGV_ERR_NON_FINITE_PARAMETER 7

/**
 * A model parameter is out of range (for example a lattice too large for 32-bit indices).
 */
#define LGV_ERR_PARAMETER_OUT_OF_RANGE 8

/**
 * The step size is not a finite number greater than zero.
 */
#define LGV_ERR_STEP 9

/**
 * The balance is outside (0, 1].
 */
#define LGV_ERR_BALANCE 10

/**
 * The kernel kind is not one of the `LGV_KERNEL_*` values.
 */
#define LGV_ERR_UNKNOWN_KERNEL 11

/**
 * A state entry is neither 0 nor 1.
 */
#define LGV_ERR_STATE_OUT_OF_RANGE 12

/**
 * The log-density or gradient at the initial state is not finite.
 */
#define LGV_ERR_NON_FINITE_START 13

/**
 * The chain object was not initialised (or was released).
 */
#define LGV_ERR_NOT_INITIALISED 14

/**
 * A parameter was refused for a reason without its own code.
 */
#define LGV_ERR_PARAMETER 15

/**
 * The call needs a different kernel (for example reading the AB-1st parameters of a chain
 * that runs DULA or DMALA).
 */
#define LGV_ERR_WRONG_KERNEL 16

/**
 * The log-density callback returned a code other than `LGV_CALLBACK_OK` and
 * `LGV_CALLBACK_REJECT`: the step was abandoned and the chain is as before it (read the code
 * with `lgv_chain_callback_code`).
 */
#define LGV_ERR_CALLBACK 17

/**
 * The log-density callback returned a non-finite log-density or gradient at a proposal: the
 * step was abandoned and the chain is as before it.
 */
#define LGV_ERR_CALLBACK_NON_FINITE 18

/**
 * The log-density callback rejected the initial state.
 */
#define LGV_ERR_START_REJECTED 19

/**
 * The sampler exists but cannot run here: it does not apply to the chain's domain, or it
 * needs several chains or the standard library (`ab2`, `block-gibbs`, `pt-dmala`).
 */
#define LGV_ERR_UNSUPPORTED_KERNEL 20

/**
 * A parameter name the sampler does not read.
 */
#define LGV_ERR_PARAMETER_NAME 21

/**
 * A parameter value that does not parse (or a `params` string that is not `key=value` pairs
 * of UTF-8 text).
 */
#define LGV_ERR_PARAMETER_VALUE 22

/**
 * The call is for chains of another domain (for example `lgv_chain_state` on a categorical
 * chain).
 */
#define LGV_ERR_WRONG_DOMAIN 23

/**
 * The kernel's scratch buffers are shorter than `lgv_chain_kernel_scratch` asks for.
 */
#define LGV_ERR_SCRATCH 24

/**
 * A window on a chain that is not ordinal, or a window of 0.
 */
#define LGV_ERR_WINDOW 25

/**
 * A stochastic-gradient step produced a non-finite position or momentum (the step is too
 * large for the potential): the step was abandoned and the chain is as before it.
 */
#define LGV_ERR_DIVERGED 26

#ifdef __cplusplus
extern "C" {
#endif // __cplusplus

/**
 * `LGV_VERSION` as this library was built, to check against the header.
 */
uint32_t lgv_version(void);

/**
 * `sizeof(LgvChain)` as this library was built, to check against the header.
 */
size_t lgv_chain_storage_size(void);

/**
 * A static, NUL-terminated name for a status code ("unknown status" for other values).
 */
const char *lgv_status_name(LgvStatus status);

/**
 * Starts a chain on the `rows × cols` nearest-neighbour Ising lattice
 * `U(s) = J Σ s_i s_j + h Σ s_i` over spins `s = 2x − 1` (row-major sites; `periodic` wraps
 * axes of length 3 or more). `buffers->len` must be `rows * cols`.
 *
 * # Safety
 *
 * `chain` must point to writable memory for an `LgvChain`; `buffers` and `kernel` to readable
 * structs whose pointers address `len` valid entries each. The buffers stay borrowed by the
 * chain until it is released or initialised again.
 */
LgvStatus lgv_chain_init_ising_lattice(struct LgvChain *chain,
                                       size_t rows,
                                       size_t cols,
                                       float coupling,
                                       float field,
                                       bool periodic,
                                       const struct LgvBuffers *buffers,
                                       const struct LgvKernel *kernel,
                                       uint64_t seed);

/**
 * Starts a chain on the dense binary quadratic model `U(x) = xᵀWx + bᵀx`: `w` has
 * `dim * dim` entries (row-major, `w_len` of them), `b` has `dim`, and `cache` is room for
 * `cache_len = 2 * dim` doubles. `buffers->len` must be `dim`.
 *
 * # Safety
 *
 * As for `lgv_chain_init_ising_lattice`; in addition `w`, `b` and `cache` must address
 * `w_len`, `dim` and `cache_len` valid entries, and stay untouched while the chain lives.
 */
LgvStatus lgv_chain_init_quadratic(struct LgvChain *chain,
                                   const float *w,
                                   size_t w_len,
                                   const float *b,
                                   size_t dim,
                                   double *cache,
                                   size_t cache_len,
                                   const struct LgvBuffers *buffers,
                                   const struct LgvKernel *kernel,
                                   uint64_t seed);

/**
 * Starts a chain on a binary RBM with the hidden units summed out,
 * `U(x) = Σ_j softplus((Wx + c)_j) + bᵀx`: `w` is `hidden × visible` (row-major, `w_len`
 * entries), `b` has `visible` entries, `c` has `hidden`, and `cache` is room for
 * `cache_len = 2 * hidden` doubles. `buffers->len` must be `visible`.
 *
 * # Safety
 *
 * As for `lgv_chain_init_quadratic`.
 */
LgvStatus lgv_chain_init_rbm(struct LgvChain *chain,
                             const float *w,
                             size_t w_len,
                             const float *b,
                             size_t visible,
                             const float *c,
                             size_t hidden,
                             double *cache,
                             size_t cache_len,
                             const struct LgvBuffers *buffers,
                             const struct LgvKernel *kernel,
                             uint64_t seed);

/**
 * Replaces the kernel of a live chain (the state and random stream carry on). An AB-1st
 * kernel starts tuning afresh from the given step and balance.
 *
 * # Safety
 *
 * `chain` must point to an `LgvChain`, `kernel` to a readable `LgvKernel`.
 */
LgvStatus lgv_chain_set_kernel(struct LgvChain *chain, const struct LgvKernel *kernel);

/**
 * Writes the step and balance of an AB-1st chain to `out`: during the burn-in those the next
 * step uses, afterwards the frozen choice. `LGV_ERR_WRONG_KERNEL` for a DULA or DMALA chain.
 *
 * # Safety
 *
 * `chain` must point to an `LgvChain`; `out` to a writable `LgvAbParams`.
 */
LgvStatus lgv_chain_ab_params(const struct LgvChain *chain, struct LgvAbParams *out);

/**
 * Restarts the chain's random stream at `Xoshiro256PlusPlus::seed_from_u64(seed)`.
 *
 * # Safety
 *
 * `chain` must point to an `LgvChain`.
 */
LgvStatus lgv_chain_reseed(struct LgvChain *chain, uint64_t seed);

/**
 * Takes `steps` steps. If `last` is not NULL and `steps > 0`, the report of the last step is
 * written there.
 *
 * # Safety
 *
 * `chain` must point to an `LgvChain`; `last` must be NULL or point to writable memory for an
 * `LgvStepReport`.
 */
LgvStatus lgv_chain_step(struct LgvChain *chain, uint32_t steps, struct LgvStepReport *last);

/**
 * Moves the chain to the state `x` (`len` entries, each 0 or 1), re-evaluating the model.
 * On error the chain keeps its state.
 *
 * # Safety
 *
 * `chain` must point to an `LgvChain`; `x` must address `len` readable bytes.
 */
LgvStatus lgv_chain_reset(struct LgvChain *chain, const uint8_t *x, size_t len);

/**
 * Copies the current state of a binary chain (`len` must be the dimension) into `out`.
 *
 * # Safety
 *
 * `chain` must point to an `LgvChain`; `out` must address `len` writable bytes.
 */
LgvStatus lgv_chain_state(const struct LgvChain *chain, uint8_t *out, size_t len);

/**
 * Copies the gradient at the current state into `out`; `len` must be its length: the
 * dimension, or `dim * states` for a categorical chain.
 *
 * # Safety
 *
 * `chain` must point to an `LgvChain`; `out` must address `len` writable floats.
 */
LgvStatus lgv_chain_grad(const struct LgvChain *chain, float *out, size_t len);

/**
 * Writes the log-density at the current state to `out`.
 *
 * # Safety
 *
 * `chain` must point to an `LgvChain`; `out` to a writable double.
 */
LgvStatus lgv_chain_log_density(const struct LgvChain *chain, double *out);

/**
 * Writes the dimension to `out`.
 *
 * # Safety
 *
 * `chain` must point to an `LgvChain`; `out` to a writable `size_t`.
 */
LgvStatus lgv_chain_dim(const struct LgvChain *chain, size_t *out);

/**
 * Writes the running totals to `out`.
 *
 * # Safety
 *
 * `chain` must point to an `LgvChain`; `out` to a writable `LgvStats`.
 */
LgvStatus lgv_chain_stats(const struct LgvChain *chain, struct LgvStats *out);

/**
 * The name of the `i`-th sampler `lgv_chain_use_kernel` accepts (a static NUL-terminated
 * string, in the command line's registry order), or NULL past the last: a binding lists them
 * by calling it with 0, 1, 2, ... until NULL.
 */
const char *lgv_sampler_name(size_t i);

/**
 * Starts a chain on a binary target of dimension `dim` given by the caller's function `f`
 * (see `LgvLogDensityFn` for its contract), called with `user`. `buffers->len` must be `dim`
 * and `buffers->x` holds the initial state. Any kernel of the registry can be chosen
 * afterwards with `lgv_chain_use_kernel`.
 *
 * # Safety
 *
 * As for `lgv_chain_init_ising_lattice`; `f` must follow the contract of `LgvLogDensityFn`
 * and `user` stay valid for it while the chain lives.
 */
LgvStatus lgv_chain_init_callback(struct LgvChain *chain,
                                  size_t dim,
                                  LgvLogDensityFn f,
                                  void *user,
                                  const struct LgvBuffers *buffers,
                                  const struct LgvKernel *kernel,
                                  uint64_t seed);

/**
 * Starts a chain on an ordinal (`LGV_DOMAIN_ORDINAL`) or categorical
 * (`LGV_DOMAIN_CATEGORICAL`) target given by the caller's function `f` (see
 * `LgvLabelLogDensityFn`), over `buffers->dim` coordinates of `buffers->states` values;
 * `buffers->x` holds the initial state.
 *
 * # Safety
 *
 * `chain` must point to writable memory for an `LgvChain`; `buffers` and `kernel` to
 * readable structs whose pointers address the documented number of entries each; `f` must
 * follow the contract of `LgvLabelLogDensityFn`. The buffers stay borrowed until the chain is
 * released or initialised again.
 */
LgvStatus lgv_chain_init_label_callback(struct LgvChain *chain,
                                        uint32_t domain,
                                        LgvLabelLogDensityFn f,
                                        void *user,
                                        const struct LgvLabelBuffers *buffers,
                                        const struct LgvKernel *kernel,
                                        uint64_t seed);

/**
 * Writes the scratch lengths the kernel `spec` needs on this chain to `scratch_len` (doubles)
 * and `indices_len` (`uint32_t`); checks the name, the parameters and that the sampler applies
 * to the chain's domain. `spec`'s buffers and run lengths are not read.
 *
 * # Safety
 *
 * `chain` must point to an `LgvChain`; `spec` to a readable `LgvKernelSpec` with
 * NUL-terminated strings; `scratch_len` and `indices_len` to writable `size_t`s.
 */
LgvStatus lgv_chain_kernel_scratch(const struct LgvChain *chain,
                                   const struct LgvKernelSpec *spec,
                                   size_t *scratch_len,
                                   size_t *indices_len);

/**
 * Replaces the kernel of a live chain by the registry's sampler `spec->name` with
 * `spec->params` (the state and random stream carry on; tuned samplers start tuning afresh).
 * The chain borrows `spec->scratch` and `spec->indices` until the next kernel change, release
 * or init; the strings are read during the call only. On error the chain keeps its kernel.
 *
 * # Safety
 *
 * `chain` must point to an `LgvChain`; `spec` to a readable `LgvKernelSpec` with
 * NUL-terminated strings whose buffers address the entries it states.
 */
LgvStatus lgv_chain_use_kernel(struct LgvChain *chain, const struct LgvKernelSpec *spec);

/**
 * Moves an ordinal or categorical chain to the state `x` (`len` entries below the number of
 * values), re-evaluating the target. On error the chain keeps its state.
 *
 * # Safety
 *
 * `chain` must point to an `LgvChain`; `x` must address `len` readable `uint16_t`s.
 */
LgvStatus lgv_chain_reset_labels(struct LgvChain *chain, const uint16_t *x, size_t len);

/**
 * Copies the current state of an ordinal or categorical chain (`len` must be the dimension)
 * into `out`.
 *
 * # Safety
 *
 * `chain` must point to an `LgvChain`; `out` must address `len` writable `uint16_t`s.
 */
LgvStatus lgv_chain_labels(const struct LgvChain *chain, uint16_t *out, size_t len);

/**
 * Writes the chain's domain (`LGV_DOMAIN_*`) to `out`.
 *
 * # Safety
 *
 * `chain` must point to an `LgvChain`; `out` to a writable `uint32_t`.
 */
LgvStatus lgv_chain_domain(const struct LgvChain *chain, uint32_t *out);

/**
 * Writes the number of values per coordinate to `out` (2 for binary chains).
 *
 * # Safety
 *
 * `chain` must point to an `LgvChain`; `out` to a writable `size_t`.
 */
LgvStatus lgv_chain_states(const struct LgvChain *chain, size_t *out);

/**
 * Writes to `out` the code the log-density callback returned when it last abandoned a step
 * with `LGV_ERR_CALLBACK` (`LGV_CALLBACK_OK` for a non-finite value or a failure that was not
 * the callback's; 0 before any).
 *
 * # Safety
 *
 * `chain` must point to an `LgvChain`; `out` to a writable `int32_t`.
 */
LgvStatus lgv_chain_callback_code(const struct LgvChain *chain, int32_t *out);

/**
 * Writes the workspace lengths the integrator `spec` needs: `work_len` doubles and
 * `index_len` `uint32_t`s (checks the name and parameters).
 *
 * # Safety
 *
 * `spec` must point to a readable `LgvSgSpec` with NUL-terminated strings; `work_len` and
 * `index_len` to writable, distinct `size_t`s.
 */
LgvStatus lgv_sg_workspace(const struct LgvSgSpec *spec, size_t *work_len, size_t *index_len);

/**
 * Starts a stochastic-gradient chain at `theta0` (`spec->dim` entries) on the potential whose
 * gradients `f` adds up (see `LgvTermGradFn`), in the caller's workspaces of at least the
 * lengths `lgv_sg_workspace` gives. The chain borrows `work` and `index` until it is released
 * or initialised again.
 *
 * # Safety
 *
 * `chain` must point to writable memory for an `LgvSgChain`; `spec` as for
 * `lgv_sg_workspace`; `theta0`, `work` and `index` must address the entries stated.
 */
LgvStatus lgv_sg_init(struct LgvSgChain *chain,
                      const struct LgvSgSpec *spec,
                      const double *theta0,
                      LgvTermGradFn f,
                      void *user,
                      double *work,
                      size_t work_len,
                      uint32_t *index,
                      size_t index_len,
                      uint64_t seed);

/**
 * Takes `steps` steps. On an error the position and momentum are those before the failed
 * step (the steps before it stand), and the random stream is restored to where it was.
 *
 * # Safety
 *
 * `chain` must point to an `LgvSgChain`.
 */
LgvStatus lgv_sg_step(struct LgvSgChain *chain, uint32_t steps);

/**
 * Copies the position `theta` (`len` must be the dimension) into `out`.
 *
 * # Safety
 *
 * `chain` must point to an `LgvSgChain`; `out` must address `len` writable doubles.
 */
LgvStatus lgv_sg_theta(const struct LgvSgChain *chain, double *out, size_t len);

/**
 * Writes the steps taken and the per-term gradients evaluated (a full gradient counts `N`)
 * to `steps` and `grad_evals`; the callback's code of the last abandoned step to `code`.
 *
 * # Safety
 *
 * `chain` must point to an `LgvSgChain`; the outputs to writable, distinct objects.
 */
LgvStatus lgv_sg_counts(const struct LgvSgChain *chain,
                        uint64_t *steps,
                        uint64_t *grad_evals,
                        int32_t *code);

/**
 * Ends a stochastic-gradient chain: its workspaces belong to the caller again.
 *
 * # Safety
 *
 * `chain` must point to an `LgvSgChain`.
 */
LgvStatus lgv_sg_release(struct LgvSgChain *chain);

/**
 * Ends the chain: its buffers and arrays belong to the caller again, and the object reads as
 * not initialised.
 *
 * # Safety
 *
 * `chain` must point to an `LgvChain`.
 */
LgvStatus lgv_chain_release(struct LgvChain *chain);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* LANGEVIN_H */
