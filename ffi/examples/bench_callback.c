/*
 * Cost of a step through a log-density callback against the built-in model of the same
 * energy: the periodic Ising lattice U(s) = J sum_<ij> s_i s_j + h sum_i s_i, s = 2x - 1, as
 * lgv_chain_init_ising_lattice and as a C callback that evaluates U and its gradient from
 * scratch at every call. Both chains run DMALA with the same step from the same state.
 *
 *   bench_callback [side] [steps] [kernel] [which]   (defaults: 8 200000 dmala both)
 *
 * Prints nanoseconds per step for both and their ratio. `which` = built-in or callback times
 * one chain only, for instruction counts under valgrind (`--toggle-collect=lgv_chain_step`).
 * Host only (uses clock_gettime).
 */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "langevin.h"

#define J 0.3
#define H 0.1

struct lattice {
    size_t side;
};

static int32_t ising(void *user, const uint8_t *x, size_t dim, double *log_density,
                     float *grad) {
    size_t n = ((const struct lattice *)user)->side, r, c;
    double u = 0.0;
    (void)dim;
    for (r = 0; r < n; r++) {
        for (c = 0; c < n; c++) {
            double s = 2.0 * x[r * n + c] - 1.0;
            double right = 2.0 * x[r * n + (c + 1) % n] - 1.0;
            double down = 2.0 * x[((r + 1) % n) * n + c] - 1.0;
            u += J * s * (right + down) + H * s;
            if (grad != NULL) {
                double left = 2.0 * x[r * n + (c + n - 1) % n] - 1.0;
                double up = 2.0 * x[((r + n - 1) % n) * n + c] - 1.0;
                grad[r * n + c] = (float)(2.0 * (J * (right + down + left + up) + H));
            }
        }
    }
    *log_density = u;
    return LGV_CALLBACK_OK;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Runs `steps` steps after a tenth as many for warm-up; returns ns per step. */
static double time_chain(LgvChain *chain, uint32_t steps, double *acceptance) {
    LgvStats stats;
    double t0;
    if (lgv_chain_step(chain, steps / 10 + 1, NULL) != LGV_OK) {
        return -1.0;
    }
    t0 = now();
    if (lgv_chain_step(chain, steps, NULL) != LGV_OK) {
        return -1.0;
    }
    t0 = now() - t0;
    lgv_chain_stats(chain, &stats);
    *acceptance = (double)stats.accepted / (double)stats.steps;
    return 1e9 * t0 / steps;
}

static LgvChain built_in, callback;

int main(int argc, char **argv) {
    size_t side = argc > 1 ? (size_t)atoi(argv[1]) : 8, d = side * side, i;
    uint32_t steps = argc > 2 ? (uint32_t)atol(argv[2]) : 200000u;
    const char *name = argc > 3 ? argv[3] : "dmala";
    const char *which = argc > 4 ? argv[4] : "both";
    int run_built_in = which[0] != 'c', run_callback = which[0] != 'b';
    struct lattice model = {side};
    uint8_t *x = calloc(2 * d, 1), *x2 = calloc(2 * d, 1);
    float *g = calloc(4 * d, sizeof(float));
    uint32_t *f = calloc(2 * d, sizeof(uint32_t));
    double *scratch = calloc(2 * d + 64, sizeof(double));
    uint32_t *indices = calloc(d + 1, sizeof(uint32_t));
    LgvKernel dmala = {LGV_KERNEL_DMALA, 0.4, 0.5, 0};
    LgvKernelSpec spec = {name, "", 0, steps, scratch, 2 * d + 64, indices, d + 1};
    double ns_built_in, ns_callback, acc_built_in = 0.0, acc_callback = 0.0;
    if (x == NULL || x2 == NULL || g == NULL || f == NULL || scratch == NULL || indices == NULL) {
        return 1;
    }
    for (i = 0; i < d; i++) {
        x[i] = x2[i] = (uint8_t)(i % 2);
    }
    {
        LgvBuffers a = {x, g, x + d, g + d, f, d};
        LgvBuffers b = {x2, g + 2 * d, x2 + d, g + 3 * d, f + d, d};
        LgvStatus s = lgv_chain_init_ising_lattice(&built_in, side, side, (float)J, (float)H,
                                                   true, &a, &dmala, 1);
        if (s == LGV_OK) {
            s = lgv_chain_init_callback(&callback, d, ising, &model, &b, &dmala, 1);
        }
        if (s == LGV_OK && spec.name[0] != '\0') {
            /* The same kernel by name on both (the spec's scratch serves one chain at a time:
             * the built-in chain gets its own copy below). */
            s = lgv_chain_use_kernel(&callback, &spec);
        }
        if (s != LGV_OK) {
            printf("langevin: %s\n", lgv_status_name(s));
            return 1;
        }
        ns_callback = run_callback ? time_chain(&callback, steps, &acc_callback) : 0.0;
        lgv_chain_release(&callback);
        if (lgv_chain_use_kernel(&built_in, &spec) != LGV_OK) {
            return 1;
        }
        ns_built_in = run_built_in ? time_chain(&built_in, steps, &acc_built_in) : 1.0;
    }
    printf("%zux%zu Ising, %s, %u steps: built-in %.1f ns/step (acceptance %.3f), "
           "C callback %.1f ns/step (acceptance %.3f), ratio %.2f\n",
           side, side, name, steps, ns_built_in, acc_built_in, ns_callback, acc_callback,
           ns_callback / ns_built_in);
    return 0;
}
