/*
 * langevin.h: C ABI of the langevin binary chains (DULA, DMALA and AB-1st on Ising
 * lattice, dense binary quadratic and RBM models), in caller-owned memory.
 *
 * Generated from ffi/src/lib.rs; do not edit. Regenerate with
 * LANGEVIN_BLESS=1 cargo test -p langevin-ffi --test header
 */
#ifndef LANGEVIN_H
#define LANGEVIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The result of every function: `LGV_OK` (0) or a positive error code. */
typedef int32_t LgvStatus;

/** Major version of the library this header belongs to. */
#define LGV_VERSION_MAJOR 0u

/** Minor version of the library this header belongs to. */
#define LGV_VERSION_MINOR 1u

/** Patch version of the library this header belongs to. */
#define LGV_VERSION_PATCH 0u

/**
 * The version as one number, `major * 10000 + minor * 100 + patch`; compare it with
 * `lgv_version()` to check that header and library match.
 */
#define LGV_VERSION 100u

/** Success. */
#define LGV_OK 0

/** A required pointer was NULL. */
#define LGV_ERR_NULL 1

/** A pointer is not aligned for its element type. */
#define LGV_ERR_ALIGNMENT 2

/** A buffer the chain writes overlaps another buffer, the model arrays or the chain object. */
#define LGV_ERR_OVERLAP 3

/** The model has dimension zero. */
#define LGV_ERR_EMPTY_DIMENSION 4

/** A length does not fit the model. */
#define LGV_ERR_LENGTH 5

/** A length is too large to address. */
#define LGV_ERR_SIZE_OVERFLOW 6

/** A model parameter is NaN or infinite. */
#define LGV_ERR_NON_FINITE_PARAMETER 7

/** A model parameter is out of range (for example a lattice too large for 32-bit indices). */
#define LGV_ERR_PARAMETER_OUT_OF_RANGE 8

/** The step size is not a finite number greater than zero. */
#define LGV_ERR_STEP 9

/** The balance is outside (0, 1]. */
#define LGV_ERR_BALANCE 10

/** The kernel kind is not one of the `LGV_KERNEL_*` values. */
#define LGV_ERR_UNKNOWN_KERNEL 11

/** A state entry is neither 0 nor 1. */
#define LGV_ERR_STATE_OUT_OF_RANGE 12

/** The log-density or gradient at the initial state is not finite. */
#define LGV_ERR_NON_FINITE_START 13

/** The chain object was not initialised (or was released). */
#define LGV_ERR_NOT_INITIALISED 14

/** A parameter was refused for a reason without its own code. */
#define LGV_ERR_PARAMETER 15

/**
 * The call needs a different kernel (for example reading the AB-1st parameters of a chain
 * that runs DULA or DMALA).
 */
#define LGV_ERR_WRONG_KERNEL 16

/** The discrete unadjusted Langevin kernel (every valid proposal accepted). */
#define LGV_KERNEL_DULA 1u

/** The discrete Metropolis-adjusted Langevin kernel. */
#define LGV_KERNEL_DMALA 2u

/**
 * AB-1st: the Metropolis-adjusted kernel with its step and balance tuned for `burn_in` steps
 * (starting from `step` and `balance`), then frozen; afterwards every step is exact DMALA
 * with the chosen values (read them with `lgv_chain_ab_params`).
 */
#define LGV_KERNEL_AB 3u

/** The proposal was valid (accepted or lost the Metropolis test). */
#define LGV_REJECTION_NONE 0u

/** The target returned a non-finite log-density or gradient at the proposal. */
#define LGV_REJECTION_NON_FINITE 1u

/** The target returned a recoverable error at the proposal. */
#define LGV_REJECTION_TARGET_ERROR 2u

/** Size of a chain object in 64-bit words. */
#define LGV_CHAIN_WORDS 96u

/** Storage for one chain. Treat as opaque; zero-fill it before first use. */
typedef struct LgvChain {
    /** Private. */
    uint64_t opaque[LGV_CHAIN_WORDS];
} LgvChain;

/** The buffers of a chain, each of `len` entries, which must equal the model's dimension. */
typedef struct LgvBuffers {
    /**
     * The initial state (entries 0 or 1); afterwards scratch: read the state with
     * `lgv_chain_state`.
     */
    uint8_t *x;
    /** Gradient at the current state. */
    float *grad;
    /** Room for a proposed state. */
    uint8_t *x_proposal;
    /** Room for the gradient at a proposed state. */
    float *grad_proposal;
    /** Room for the indices a proposal flips. */
    uint32_t *flipped;
    /** Entries in each buffer. */
    size_t len;
} LgvBuffers;

/** A kernel and its parameters. */
typedef struct LgvKernel {
    /** `LGV_KERNEL_DULA`, `LGV_KERNEL_DMALA` or `LGV_KERNEL_AB`. */
    uint32_t kind;
    /** Step size `a` (finite, greater than zero). */
    double step;
    /** Balance `b` in (0, 1]; 0.5 is the discrete Langevin proposal. */
    double balance;
    /**
     * `LGV_KERNEL_AB` only: the number of steps during which `step` and `balance` are tuned
     * (0 runs DMALA with the given values). Ignored by the other kernels.
     */
    uint64_t burn_in;
} LgvKernel;

/** The parameters of an AB-1st chain. */
typedef struct LgvAbParams {
    /** The step `a` the next step uses (final once frozen). */
    double step;
    /** The balance `b` the next step uses (final once frozen). */
    double balance;
    /** Steps spent tuning so far. */
    uint64_t tuning_steps;
    /** 1 once tuning is over (the burn-in is spent, or the probe size fell below its minimum). */
    uint32_t frozen;
} LgvAbParams;

/** What the last step did. */
typedef struct LgvStepReport {
    /** 1 if the chain moved to the proposal (a proposal with no flips counts as accepted). */
    uint32_t accepted;
    /** Coordinates the proposal flipped. */
    uint32_t proposed_flips;
    /**
     * The log Metropolis-Hastings ratio (0 for DULA and empty proposals, -inf or NaN when the
     * proposal was invalid).
     */
    double log_accept_ratio;
    /** One of the `LGV_REJECTION_*` values. */
    uint32_t rejection;
    /** Target evaluations the step spent (0 or 1). */
    uint32_t evaluations;
} LgvStepReport;

/** Running totals since the chain was initialised. */
typedef struct LgvStats {
    /** Steps taken. */
    uint64_t steps;
    /** Steps whose proposal was adopted. */
    uint64_t accepted;
    /** Sum of proposed flips. */
    uint64_t proposed_flips;
    /** Sum of flips that took effect. */
    uint64_t accepted_flips;
    /** Proposals rejected as invalid. */
    uint64_t invalid;
    /** Target evaluations. */
    uint64_t evaluations;
} LgvStats;

/** `LGV_VERSION` as this library was built, to check against the header. */
uint32_t lgv_version(void);

/** `sizeof(LgvChain)` as this library was built, to check against the header. */
size_t lgv_chain_storage_size(void);

/** A static, NUL-terminated name for a status code ("unknown status" for other values). */
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
LgvStatus lgv_chain_init_ising_lattice(LgvChain *chain, size_t rows, size_t cols, float coupling, float field, bool periodic, const LgvBuffers *buffers, const LgvKernel *kernel, uint64_t seed);

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
LgvStatus lgv_chain_init_quadratic(LgvChain *chain, const float *w, size_t w_len, const float *b, size_t dim, double *cache, size_t cache_len, const LgvBuffers *buffers, const LgvKernel *kernel, uint64_t seed);

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
LgvStatus lgv_chain_init_rbm(LgvChain *chain, const float *w, size_t w_len, const float *b, size_t visible, const float *c, size_t hidden, double *cache, size_t cache_len, const LgvBuffers *buffers, const LgvKernel *kernel, uint64_t seed);

/**
 * Replaces the kernel of a live chain (the state and random stream carry on). An AB-1st
 * kernel starts tuning afresh from the given step and balance.
 *
 * # Safety
 *
 * `chain` must point to an `LgvChain`, `kernel` to a readable `LgvKernel`.
 */
LgvStatus lgv_chain_set_kernel(LgvChain *chain, const LgvKernel *kernel);

/**
 * Writes the step and balance of an AB-1st chain to `out`: during the burn-in those the next
 * step uses, afterwards the frozen choice. `LGV_ERR_WRONG_KERNEL` for a DULA or DMALA chain.
 *
 * # Safety
 *
 * `chain` must point to an `LgvChain`; `out` to a writable `LgvAbParams`.
 */
LgvStatus lgv_chain_ab_params(const LgvChain *chain, LgvAbParams *out);

/**
 * Restarts the chain's random stream at `Xoshiro256PlusPlus::seed_from_u64(seed)`.
 *
 * # Safety
 *
 * `chain` must point to an `LgvChain`.
 */
LgvStatus lgv_chain_reseed(LgvChain *chain, uint64_t seed);

/**
 * Takes `steps` steps. If `last` is not NULL and `steps > 0`, the report of the last step is
 * written there.
 *
 * # Safety
 *
 * `chain` must point to an `LgvChain`; `last` must be NULL or point to writable memory for an
 * `LgvStepReport`.
 */
LgvStatus lgv_chain_step(LgvChain *chain, uint32_t steps, LgvStepReport *last);

/**
 * Moves the chain to the state `x` (`len` entries, each 0 or 1), re-evaluating the model.
 * On error the chain keeps its state.
 *
 * # Safety
 *
 * `chain` must point to an `LgvChain`; `x` must address `len` readable bytes.
 */
LgvStatus lgv_chain_reset(LgvChain *chain, const uint8_t *x, size_t len);

/**
 * Copies the current state (`len` must be the dimension) into `out`.
 *
 * # Safety
 *
 * `chain` must point to an `LgvChain`; `out` must address `len` writable bytes.
 */
LgvStatus lgv_chain_state(const LgvChain *chain, uint8_t *out, size_t len);

/**
 * Copies the gradient at the current state (`len` must be the dimension) into `out`.
 *
 * # Safety
 *
 * `chain` must point to an `LgvChain`; `out` must address `len` writable floats.
 */
LgvStatus lgv_chain_grad(const LgvChain *chain, float *out, size_t len);

/**
 * Writes the log-density at the current state to `out`.
 *
 * # Safety
 *
 * `chain` must point to an `LgvChain`; `out` to a writable double.
 */
LgvStatus lgv_chain_log_density(const LgvChain *chain, double *out);

/**
 * Writes the dimension to `out`.
 *
 * # Safety
 *
 * `chain` must point to an `LgvChain`; `out` to a writable `size_t`.
 */
LgvStatus lgv_chain_dim(const LgvChain *chain, size_t *out);

/**
 * Writes the running totals to `out`.
 *
 * # Safety
 *
 * `chain` must point to an `LgvChain`; `out` to a writable `LgvStats`.
 */
LgvStatus lgv_chain_stats(const LgvChain *chain, LgvStats *out);

/**
 * Ends the chain: its buffers and arrays belong to the caller again, and the object reads as
 * not initialised.
 *
 * # Safety
 *
 * `chain` must point to an `LgvChain`.
 */
LgvStatus lgv_chain_release(LgvChain *chain);

#ifdef __cplusplus
}
#endif

#endif /* LANGEVIN_H */
