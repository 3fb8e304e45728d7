/*
 * Bring your own target: an energy written in C, not one of langevin's models, sampled with
 * DMALA through a log-density callback, and checked against exact enumeration.
 *
 * The target is a ring of D binary sites with fields, pair couplings and a three-body term,
 *
 *     U(x) = sum_i h_i x_i + J_i x_i x_{i+1} + T x_i x_{i+1} x_{i+2}     (indices mod D),
 *
 * whose gradient is that of the same polynomial over real x. No built-in model has a
 * three-body term.
 *
 * The check is the exact-start test: draw X0 from pi by enumeration (2^D states), take K DMALA
 * steps, keep X_K; repeated N times these are independent draws from pi exactly when the
 * kernel leaves pi invariant. The total-variation distance between their histogram and pi is
 * compared with tau = 1/2 sum_s sqrt(p_s (1 - p_s) / N) + sqrt(ln(1/alpha) / (2 N)), which a
 * correct sampler exceeds with probability at most alpha = 1e-6 (McDiarmid). The program prints
 * one line and exits with 0 if the check passes.
 *
 * Nothing is allocated: the chain and its buffers are static. The same file builds for a
 * hosted system and for a Cortex-M board (see ffi/README.md).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "langevin.h"

#define D 8
#define STATES (1u << D)
#ifndef REPLICATES
#define REPLICATES 20000u
#endif
#define K 3u

/* The user's model: any data the callback needs travels through `user`. */
struct ring {
    double h[D];
    double j[D];
    double t;
};

static const struct ring model = {
    {0.4, -0.3, 0.2, -0.5, 0.1, 0.3, -0.2, 0.0},
    {0.5, -0.4, 0.3, 0.6, -0.2, 0.4, -0.5, 0.2},
    -0.7,
};

/* The log-density callback: pure in (x, user), no allocation, returns LGV_CALLBACK_OK. */
static int32_t ring_energy(void *user, const uint8_t *x, size_t dim, double *log_density,
                           float *grad) {
    const struct ring *m = (const struct ring *)user;
    double u = 0.0;
    size_t i;
    if (dim != D) {
        return 2; /* any code but 0 and 1 abandons the step: LGV_ERR_CALLBACK */
    }
    for (i = 0; i < D; i++) {
        double a = x[i], b = x[(i + 1) % D], c = x[(i + 2) % D];
        u += m->h[i] * a + m->j[i] * a * b + m->t * a * b * c;
    }
    *log_density = u;
    if (grad != NULL) {
        for (i = 0; i < D; i++) {
            double prev2 = x[(i + D - 2) % D], prev = x[(i + D - 1) % D];
            double next = x[(i + 1) % D], next2 = x[(i + 2) % D];
            double g = m->h[i] + m->j[i] * next + m->j[(i + D - 1) % D] * prev +
                       m->t * (next * next2 + prev * next + prev2 * prev);
            grad[i] = (float)g;
        }
    }
    return LGV_CALLBACK_OK;
}

/* Caller-owned memory. */
static LgvChain chain;
static uint8_t x[D], x_proposal[D], out[D];
static float grad[D], grad_proposal[D];
static uint32_t flipped[D];
static double p[STATES];
static uint32_t counts[STATES];

/* splitmix64: the test's own stream for the exact starts. */
static uint64_t mix_state = 0x9e3779b97f4a7c15ull;
static double uniform(void) {
    uint64_t z = (mix_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

static void to_bits(uint32_t s, uint8_t *bits) {
    size_t i;
    for (i = 0; i < D; i++) {
        bits[i] = (uint8_t)((s >> i) & 1u);
    }
}

int main(void) {
    LgvBuffers buffers = {x, grad, x_proposal, grad_proposal, flipped, D};
    LgvKernel kernel = {LGV_KERNEL_DMALA, 0.8 /* step */, 0.5 /* balance */, 0};
    LgvStats stats;
    LgvStatus s;
    double max = -1e300, z = 0.0, tv = 0.0, bound = 0.0, tau;
    uint32_t st, r;

    if (lgv_version() != LGV_VERSION || lgv_chain_storage_size() != sizeof(LgvChain)) {
        printf("header and library differ\n");
        return 1;
    }
    /* Exact probabilities by enumeration, through the same callback. */
    for (st = 0; st < STATES; st++) {
        to_bits(st, x);
        ring_energy((void *)&model, x, D, &p[st], NULL);
        max = p[st] > max ? p[st] : max;
    }
    for (st = 0; st < STATES; st++) {
        p[st] = exp(p[st] - max);
        z += p[st];
    }
    for (st = 0; st < STATES; st++) {
        p[st] /= z;
    }

    to_bits(0, x);
    s = lgv_chain_init_callback(&chain, D, ring_energy, (void *)&model, &buffers, &kernel, 1);
    for (r = 0; r < REPLICATES && s == LGV_OK; r++) {
        double u = uniform(), acc = 0.0;
        uint32_t pick = STATES - 1, k;
        for (st = 0; st < STATES; st++) {
            acc += p[st];
            if (u < acc) {
                pick = st;
                break;
            }
        }
        to_bits(pick, out);
        if ((s = lgv_chain_reset(&chain, out, D)) != LGV_OK ||
            (s = lgv_chain_reseed(&chain, 1000u + r)) != LGV_OK ||
            (s = lgv_chain_step(&chain, K, NULL)) != LGV_OK ||
            (s = lgv_chain_state(&chain, out, D)) != LGV_OK) {
            break;
        }
        for (k = 0, st = 0; k < D; k++) {
            st |= (uint32_t)out[k] << k;
        }
        counts[st]++;
    }
    if (s == LGV_OK) {
        s = lgv_chain_stats(&chain, &stats);
    }
    if (s != LGV_OK) {
        printf("langevin: %s\n", lgv_status_name(s));
        return 1;
    }
    for (st = 0; st < STATES; st++) {
        tv += fabs((double)counts[st] / REPLICATES - p[st]);
        bound += sqrt(p[st] * (1.0 - p[st]) / REPLICATES);
    }
    tv /= 2.0;
    tau = bound / 2.0 + sqrt(log(1e6) / (2.0 * REPLICATES));
    printf("langevin %u.%u.%u: C energy (3-body ring, d = %d) with DMALA: acceptance %.3f, "
           "TV %.4f vs threshold %.4f (%u exact starts x %u steps): %s\n",
           LGV_VERSION_MAJOR, LGV_VERSION_MINOR, LGV_VERSION_PATCH, D,
           (double)stats.accepted / (double)stats.steps, tv, tau, REPLICATES, K,
           tv < tau ? "exact" : "FAILED");
    lgv_chain_release(&chain);
    return tv < tau ? 0 : 1;
}
