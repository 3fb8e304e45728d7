/*
 * C test of the langevin C ABI: links liblangevin_ffi.a, runs the seeded chains of expected.h
 * (computed with the Rust API) and compares hashes of every step's state and log-density bits
 * and the final statistics (and, for AB-1st, the bits of the step and balance it chose); then
 * checks the status code of every kind of bad input.
 * Exit status 0 = pass.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "expected.h"
#include "langevin.h"

#define N 16
#define H 8

static int failures = 0;

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__,   \
                    #cond);                                                    \
            failures++;                                                        \
        }                                                                      \
    } while (0)

#define CHECK_STATUS(call, want)                                               \
    do {                                                                       \
        LgvStatus got_ = (call);                                               \
        if (got_ != (want)) {                                                  \
            fprintf(stderr, "%s:%d: %s returned %d (%s), expected %d (%s)\n",  \
                    __FILE__, __LINE__, #call, got_, lgv_status_name(got_),    \
                    (want), lgv_status_name(want));                            \
            failures++;                                                        \
        }                                                                      \
    } while (0)

static uint64_t fnv1a(uint64_t h, const uint8_t *bytes, size_t n) {
    for (size_t i = 0; i < n; i++) {
        h ^= bytes[i];
        h *= 0x00000100000001b3ull;
    }
    return h;
}

/* The little-endian bytes of a double's bit pattern, whatever the host byte order. */
static uint64_t fnv1a_f64(uint64_t h, double v) {
    uint64_t bits;
    uint8_t le[8];
    memcpy(&bits, &v, sizeof bits);
    for (int i = 0; i < 8; i++) {
        le[i] = (uint8_t)(bits >> (8 * i));
    }
    return fnv1a(h, le, 8);
}

/* The small models' parameters: exact multiples of 1/16 and 1/8, as in the Rust test. */
static float quad_w[N * N], quad_b[N], rbm_w[H * N], rbm_b[N], rbm_c[H];

static void init_models(void) {
    for (int k = 0; k < N * N; k++) {
        quad_w[k] = (float)(((k / N) * 7 + (k % N) * 13) % 11) * 0.0625f - 0.3125f;
    }
    for (int i = 0; i < N; i++) {
        quad_b[i] = (float)((i * 5) % 7) * 0.25f - 0.75f;
        rbm_b[i] = (float)(i % 5) * 0.25f - 0.5f;
    }
    for (int k = 0; k < H * N; k++) {
        rbm_w[k] = (float)(((k % N) * 3 + (k / N) * 11) % 13) * 0.125f - 0.75f;
    }
    for (int j = 0; j < H; j++) {
        rbm_c[j] = (float)(j % 3) * 0.5f - 0.5f;
    }
}

struct buffers {
    uint8_t x[64];
    float grad[64];
    uint8_t x_proposal[64];
    float grad_proposal[64];
    uint32_t flipped[64];
};

static LgvBuffers view(struct buffers *b, size_t len) {
    LgvBuffers v = {b->x, b->grad, b->x_proposal, b->grad_proposal, b->flipped, len};
    return v;
}

static void run_expected(const struct expected *e) {
    static struct buffers b;
    static double cache[2 * N];
    LgvChain chain;
    LgvKernel kernel = {e->kernel, 0.5, 0.5, EXPECTED_AB_BURN_IN};
    size_t d = e->model == MODEL_ISING_8X8 ? 64 : N;
    LgvBuffers v;
    LgvStatus s;

    memset(&chain, 0, sizeof chain);
    memset(&b, 0, sizeof b);
    v = view(&b, d);
    switch (e->model) {
    case MODEL_ISING_8X8:
        s = lgv_chain_init_ising_lattice(&chain, 8, 8, 0.3f, 0.1f, true, &v, &kernel, e->seed);
        break;
    case MODEL_QUADRATIC_16:
        s = lgv_chain_init_quadratic(&chain, quad_w, N * N, quad_b, N, cache, 2 * N, &v, &kernel,
                                     e->seed);
        break;
    default:
        s = lgv_chain_init_rbm(&chain, rbm_w, H * N, rbm_b, N, rbm_c, H, cache, 2 * H, &v,
                               &kernel, e->seed);
        break;
    }
    CHECK_STATUS(s, LGV_OK);
    if (s != LGV_OK) {
        return;
    }

    uint64_t hs = 0xcbf29ce484222325ull, hu = 0xcbf29ce484222325ull;
    uint8_t state[64];
    for (int t = 0; t < EXPECTED_STEPS; t++) {
        LgvStepReport r;
        double u;
        CHECK_STATUS(lgv_chain_step(&chain, 1, &r), LGV_OK);
        CHECK(r.accepted <= 1 && r.evaluations <= 1 && r.rejection == LGV_REJECTION_NONE);
        CHECK_STATUS(lgv_chain_state(&chain, state, d), LGV_OK);
        CHECK_STATUS(lgv_chain_log_density(&chain, &u), LGV_OK);
        CHECK(isfinite(u));
        hs = fnv1a(hs, state, d);
        hu = fnv1a_f64(hu, u);
    }
    LgvStats st;
    CHECK_STATUS(lgv_chain_stats(&chain, &st), LGV_OK);
    uint64_t got[6] = {st.steps,          st.accepted, st.proposed_flips,
                       st.accepted_flips, st.invalid,  st.evaluations};
    int ok = hs == e->state_hash && hu == e->log_density_hash &&
             memcmp(got, e->stats, sizeof got) == 0;
    LgvAbParams ab;
    if (e->kernel == LGV_KERNEL_AB) {
        uint64_t bits[2];
        CHECK_STATUS(lgv_chain_ab_params(&chain, &ab), LGV_OK);
        memcpy(&bits[0], &ab.step, sizeof bits[0]);
        memcpy(&bits[1], &ab.balance, sizeof bits[1]);
        ok = ok && ab.frozen == 1 && ab.tuning_steps <= EXPECTED_AB_BURN_IN &&
             bits[0] == e->ab_bits[0] && bits[1] == e->ab_bits[1];
        printf("model %d seed %llu: AB-1st chose step %g balance %g after %llu tuning steps\n",
               e->model, (unsigned long long)e->seed, ab.step, ab.balance,
               (unsigned long long)ab.tuning_steps);
    } else {
        CHECK_STATUS(lgv_chain_ab_params(&chain, &ab), LGV_ERR_WRONG_KERNEL);
    }
    printf("model %d kernel %u seed %llu: state %016llx log-density %016llx accepted %llu %s\n",
           e->model, e->kernel, (unsigned long long)e->seed, (unsigned long long)hs,
           (unsigned long long)hu, (unsigned long long)st.accepted, ok ? "ok" : "MISMATCH");
    CHECK(ok);
    CHECK_STATUS(lgv_chain_release(&chain), LGV_OK);
}

static void bad_inputs(void) {
    static struct buffers b;
    LgvChain chain, zero;
    LgvKernel ok = {LGV_KERNEL_DMALA, 0.5, 0.5, 0};
    LgvKernel ab = {LGV_KERNEL_AB, 0.5, 0.5, 200};
    LgvAbParams p;
    LgvBuffers v;

    memset(&b, 0, sizeof b);
    memset(&chain, 0, sizeof chain);
    memset(&zero, 0, sizeof zero);
    v = view(&b, 9);

    CHECK(sizeof(LgvChain) == lgv_chain_storage_size());
    CHECK_STATUS(lgv_chain_init_ising_lattice(NULL, 3, 3, 0.3f, 0.f, true, &v, &ok, 1),
                 LGV_ERR_NULL);
    CHECK_STATUS(lgv_chain_init_ising_lattice(&chain, 3, 3, 0.3f, 0.f, true, NULL, &ok, 1),
                 LGV_ERR_NULL);
    CHECK_STATUS(lgv_chain_init_ising_lattice(&chain, 0, 3, 0.3f, 0.f, true, &v, &ok, 1),
                 LGV_ERR_EMPTY_DIMENSION);
    CHECK_STATUS(lgv_chain_init_ising_lattice(&chain, 2, 3, 0.3f, 0.f, true, &v, &ok, 1),
                 LGV_ERR_LENGTH);
    CHECK_STATUS(lgv_chain_init_ising_lattice(&chain, 3, 3, NAN, 0.f, true, &v, &ok, 1),
                 LGV_ERR_NON_FINITE_PARAMETER);
    CHECK_STATUS(lgv_chain_init_ising_lattice(&chain, 3, 3, 0.3f, -INFINITY, true, &v, &ok, 1),
                 LGV_ERR_NON_FINITE_PARAMETER);

    LgvKernel k = ok;
    k.step = 0.0;
    CHECK_STATUS(lgv_chain_init_ising_lattice(&chain, 3, 3, 0.3f, 0.f, true, &v, &k, 1),
                 LGV_ERR_STEP);
    k.step = NAN;
    CHECK_STATUS(lgv_chain_init_ising_lattice(&chain, 3, 3, 0.3f, 0.f, true, &v, &k, 1),
                 LGV_ERR_STEP);
    k = ok;
    k.balance = 1.5;
    CHECK_STATUS(lgv_chain_init_ising_lattice(&chain, 3, 3, 0.3f, 0.f, true, &v, &k, 1),
                 LGV_ERR_BALANCE);
    k = ab;
    k.step = -1.0;
    CHECK_STATUS(lgv_chain_init_ising_lattice(&chain, 3, 3, 0.3f, 0.f, true, &v, &k, 1),
                 LGV_ERR_STEP);
    k = ab;
    k.balance = 0.0;
    CHECK_STATUS(lgv_chain_init_ising_lattice(&chain, 3, 3, 0.3f, 0.f, true, &v, &k, 1),
                 LGV_ERR_BALANCE);
    k = ok;
    k.kind = 0;
    CHECK_STATUS(lgv_chain_init_ising_lattice(&chain, 3, 3, 0.3f, 0.f, true, &v, &k, 1),
                 LGV_ERR_UNKNOWN_KERNEL);

    LgvBuffers w = v;
    w.x_proposal = w.x;
    CHECK_STATUS(lgv_chain_init_ising_lattice(&chain, 3, 3, 0.3f, 0.f, true, &w, &ok, 1),
                 LGV_ERR_OVERLAP);
    w = v;
    w.grad = (float *)((char *)b.grad + 2);
    CHECK_STATUS(lgv_chain_init_ising_lattice(&chain, 3, 3, 0.3f, 0.f, true, &w, &ok, 1),
                 LGV_ERR_ALIGNMENT);
    b.x[3] = 7;
    CHECK_STATUS(lgv_chain_init_ising_lattice(&chain, 3, 3, 0.3f, 0.f, true, &v, &ok, 1),
                 LGV_ERR_STATE_OUT_OF_RANGE);
    b.x[3] = 0;

    CHECK_STATUS(lgv_chain_step(&zero, 1, NULL), LGV_ERR_NOT_INITIALISED);
    CHECK_STATUS(lgv_chain_ab_params(&zero, &p), LGV_ERR_NOT_INITIALISED);

    /* AB-1st: tuning for 200 steps, then frozen. */
    CHECK_STATUS(lgv_chain_init_ising_lattice(&chain, 3, 3, 0.3f, 0.1f, true, &v, &ab, 1), LGV_OK);
    CHECK_STATUS(lgv_chain_ab_params(&chain, NULL), LGV_ERR_NULL);
    CHECK_STATUS(lgv_chain_ab_params(&chain, (LgvAbParams *)(void *)b.grad), LGV_ERR_OVERLAP);
    CHECK_STATUS(lgv_chain_step(&chain, 10, NULL), LGV_OK);
    CHECK_STATUS(lgv_chain_ab_params(&chain, &p), LGV_OK);
    CHECK(p.tuning_steps == 10 && p.frozen == 0);
    CHECK_STATUS(lgv_chain_step(&chain, 300, NULL), LGV_OK);
    CHECK_STATUS(lgv_chain_ab_params(&chain, &p), LGV_OK);
    CHECK(p.frozen == 1 && p.tuning_steps <= 200 && p.step > 0.0 && p.balance > 0.0 &&
          p.balance <= 1.0);
    CHECK_STATUS(lgv_chain_set_kernel(&chain, &ok), LGV_OK);
    CHECK_STATUS(lgv_chain_ab_params(&chain, &p), LGV_ERR_WRONG_KERNEL);
    CHECK_STATUS(lgv_chain_release(&chain), LGV_OK);

    CHECK_STATUS(lgv_chain_init_ising_lattice(&chain, 3, 3, 0.3f, 0.1f, true, &v, &ok, 1),
                 LGV_OK);
    CHECK_STATUS(lgv_chain_step(&chain, 100, NULL), LGV_OK);
    uint8_t st[9], bad[9];
    CHECK_STATUS(lgv_chain_state(&chain, st, 8), LGV_ERR_LENGTH);
    CHECK_STATUS(lgv_chain_state(&chain, b.x_proposal, 9), LGV_ERR_OVERLAP);
    memset(bad, 2, sizeof bad);
    CHECK_STATUS(lgv_chain_reset(&chain, bad, 9), LGV_ERR_STATE_OUT_OF_RANGE);
    CHECK_STATUS(lgv_chain_release(&chain), LGV_OK);
    CHECK_STATUS(lgv_chain_step(&chain, 1, NULL), LGV_ERR_NOT_INITIALISED);

    double cache[2 * N];
    LgvBuffers q = view(&b, N);
    CHECK_STATUS(lgv_chain_init_quadratic(&chain, quad_w, N * N - 1, quad_b, N, cache, 2 * N, &q,
                                          &ok, 1),
                 LGV_ERR_LENGTH);
    CHECK_STATUS(lgv_chain_init_quadratic(&chain, quad_w, N * N, quad_b, N, NULL, 2 * N, &q, &ok,
                                          1),
                 LGV_ERR_NULL);
    float wn[H * N];
    memcpy(wn, rbm_w, sizeof wn);
    wn[5] = NAN;
    CHECK_STATUS(lgv_chain_init_rbm(&chain, wn, H * N, rbm_b, N, rbm_c, H, cache, 2 * H, &q, &ok,
                                    1),
                 LGV_ERR_NON_FINITE_PARAMETER);

    for (LgvStatus s = 0; s <= LGV_ERR_DIVERGED; s++) {
        CHECK(lgv_status_name(s) != NULL && lgv_status_name(s)[0] != '\0');
    }
}

/* A C energy for the callback checks: U(x) = sum_i b_i x_i - 0.5 x_0 x_1, with a switch that
 * makes it misbehave. */
struct toy {
    int mode; /* 0 ok, 1 reject everything, 2 abort with 42, 3 NaN value, 4 infinite gradient */
    int calls;
};

static int32_t toy_energy(void *user, const uint8_t *x, size_t dim, double *log_density,
                          float *grad) {
    struct toy *t = (struct toy *)user;
    double u = 0.0;
    t->calls++;
    if (t->mode == 1) {
        return LGV_CALLBACK_REJECT;
    }
    if (t->mode == 2) {
        return 42;
    }
    for (size_t i = 0; i < dim; i++) {
        double b = 0.25 * (double)(i % 3) - 0.25;
        u += b * x[i];
        if (grad != NULL) {
            grad[i] = (float)(b - (i == 0 ? 0.5 * x[1] : i == 1 ? 0.5 * x[0] : 0.0));
        }
    }
    u -= 0.5 * x[0] * x[1];
    *log_density = t->mode == 3 ? NAN : u;
    if (t->mode == 4 && grad != NULL) {
        grad[dim - 1] = INFINITY;
    }
    return LGV_CALLBACK_OK;
}

/* The callback path from C: statuses, and the chain unchanged after a failed step. */
static void callbacks(void) {
    static LgvChain chain;
    static uint8_t x[N], xp[N], before[N], after[N];
    static float g[N], gp[N];
    static uint32_t f[N];
    static double scratch[N];
    struct toy t = {0, 0};
    LgvBuffers b = {x, g, xp, gp, f, N};
    LgvKernel dmala = {LGV_KERNEL_DMALA, 0.5, 0.5, 0};
    LgvStats st;
    double u0, u1;
    int32_t code = 0;

    CHECK_STATUS(lgv_chain_init_callback(&chain, N, NULL, &t, &b, &dmala, 1), LGV_ERR_NULL);
    CHECK_STATUS(lgv_chain_init_callback(&chain, N + 1, toy_energy, &t, &b, &dmala, 1),
                 LGV_ERR_LENGTH);
    CHECK_STATUS(lgv_chain_init_callback(&chain, N, toy_energy, &t, &b, &dmala, 1), LGV_OK);
    CHECK(t.calls == 1);
    CHECK_STATUS(lgv_chain_step(&chain, 100, NULL), LGV_OK);
    for (int mode = 2; mode <= 4; mode++) {
        CHECK_STATUS(lgv_chain_state(&chain, before, N), LGV_OK);
        CHECK_STATUS(lgv_chain_log_density(&chain, &u0), LGV_OK);
        t.mode = mode;
        CHECK_STATUS(lgv_chain_step(&chain, 1, NULL),
                     mode == 2 ? LGV_ERR_CALLBACK : LGV_ERR_CALLBACK_NON_FINITE);
        CHECK_STATUS(lgv_chain_state(&chain, after, N), LGV_OK);
        CHECK_STATUS(lgv_chain_log_density(&chain, &u1), LGV_OK);
        CHECK(memcmp(before, after, N) == 0 && u0 == u1);
        CHECK_STATUS(lgv_chain_callback_code(&chain, &code), LGV_OK);
        CHECK(code == (mode == 2 ? 42 : LGV_CALLBACK_OK));
    }
    t.mode = 1;
    CHECK_STATUS(lgv_chain_step(&chain, 10, NULL), LGV_OK);
    CHECK_STATUS(lgv_chain_stats(&chain, &st), LGV_OK);
    CHECK(st.steps == 110 && st.invalid >= 10);

    /* Samplers by name. */
    t.mode = 0;
    {
        LgvKernelSpec spec = {"lb", "balancing=barker", 0, 0, scratch, N, NULL, 0};
        size_t need = 0, need_indices = 1;
        CHECK_STATUS(lgv_chain_kernel_scratch(&chain, &spec, &need, &need_indices), LGV_OK);
        CHECK(need == N && need_indices == 0);
        CHECK_STATUS(lgv_chain_use_kernel(&chain, &spec), LGV_OK);
        CHECK_STATUS(lgv_chain_step(&chain, 50, NULL), LGV_OK);
        spec.name = "nuts";
        CHECK_STATUS(lgv_chain_use_kernel(&chain, &spec), LGV_ERR_UNKNOWN_KERNEL);
        spec.name = "pt-dmala";
        CHECK_STATUS(lgv_chain_use_kernel(&chain, &spec), LGV_ERR_UNSUPPORTED_KERNEL);
        spec.name = "gibbs";
        spec.params = "scan=sideways";
        CHECK_STATUS(lgv_chain_use_kernel(&chain, &spec), LGV_ERR_PARAMETER_VALUE);
        spec.params = "step=0.1";
        CHECK_STATUS(lgv_chain_use_kernel(&chain, &spec), LGV_ERR_PARAMETER_NAME);
        spec.params = "scan=random";
        CHECK_STATUS(lgv_chain_use_kernel(&chain, &spec), LGV_OK);
        CHECK_STATUS(lgv_chain_step(&chain, 50, NULL), LGV_OK);
    }
    CHECK_STATUS(lgv_chain_release(&chain), LGV_OK);
}

int main(void) {
    init_models();
    for (size_t i = 0; i < sizeof EXPECTED / sizeof EXPECTED[0]; i++) {
        run_expected(&EXPECTED[i]);
    }
    bad_inputs();
    callbacks();
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("C ABI test: all checks passed\n");
    return 0;
}
