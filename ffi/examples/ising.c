/*
 * The smallest complete use of the langevin C ABI: an 8 x 8 periodic Ising lattice sampled
 * with DMALA in memory the program owns (no heap), printing the acceptance rate and the mean
 * magnetisation per site.
 *
 * The sampling is in `sample_ising`, which needs no C library; `main` only prints, so the same
 * file builds for a hosted system and for a Cortex-M (see ffi/README.md for both build lines).
 */
#include <stdint.h>
#include <stdio.h>

#include "langevin.h"

#define ROWS 8
#define COLS 8
#define SITES (ROWS * COLS)

struct ising_result {
    LgvStatus status;   /* LGV_OK, or the first status that was not */
    double acceptance;  /* accepted steps / steps */
    double magnetisation; /* mean of (2 x_i - 1) over sites and kept steps */
};

/* Caller-owned memory: the chain object and its five buffers. Static, so nothing is on the
 * stack of a small microcontroller task and nothing is allocated. */
static LgvChain chain;
static uint8_t x[SITES], x_proposal[SITES];
static float grad[SITES], grad_proposal[SITES];
static uint32_t flipped[SITES];

struct ising_result sample_ising(uint32_t burn_in, uint32_t kept, uint64_t seed) {
    struct ising_result r = {LGV_OK, 0.0, 0.0};
    LgvBuffers buffers = {x, grad, x_proposal, grad_proposal, flipped, SITES};
    LgvKernel kernel = {LGV_KERNEL_DMALA, 0.4, 0.5, 0};
    LgvStats stats;
    uint32_t k;
    size_t i;
    long spins = 0;

    for (i = 0; i < SITES; i++) {
        x[i] = (uint8_t)(i % 2); /* any 0/1 start */
    }
    /* U(s) = J sum s_i s_j + h sum s_i over spins s = 2x - 1: J = 0.3, h = 0.1. */
    r.status = lgv_chain_init_ising_lattice(&chain, ROWS, COLS, 0.3f, 0.1f, true, &buffers,
                                            &kernel, seed);
    if (r.status != LGV_OK) {
        return r;
    }
    if (burn_in > 0 && (r.status = lgv_chain_step(&chain, burn_in, NULL)) != LGV_OK) {
        return r;
    }
    for (k = 0; k < kept; k++) {
        uint8_t state[SITES];
        if ((r.status = lgv_chain_step(&chain, 1, NULL)) != LGV_OK ||
            (r.status = lgv_chain_state(&chain, state, SITES)) != LGV_OK) {
            return r;
        }
        for (i = 0; i < SITES; i++) {
            spins += 2 * (long)state[i] - 1;
        }
    }
    if ((r.status = lgv_chain_stats(&chain, &stats)) != LGV_OK) {
        return r;
    }
    r.acceptance = stats.steps ? (double)stats.accepted / (double)stats.steps : 0.0;
    r.magnetisation = kept ? (double)spins / ((double)kept * SITES) : 0.0;
    r.status = lgv_chain_release(&chain);
    return r;
}

int main(void) {
    struct ising_result r;
    if (lgv_version() != LGV_VERSION || lgv_chain_storage_size() != sizeof(LgvChain)) {
        printf("langevin.h does not match the library it is linked with\n");
        return 1;
    }
    r = sample_ising(1000, 10000, 42);
    if (r.status != LGV_OK) {
        printf("langevin: %s\n", lgv_status_name(r.status));
        return 1;
    }
    printf("langevin %u.%u.%u: 8x8 Ising, DMALA step 0.4: acceptance %.3f, magnetisation %.3f\n",
           LGV_VERSION_MAJOR, LGV_VERSION_MINOR, LGV_VERSION_PATCH, r.acceptance,
           r.magnetisation);
    return 0;
}
