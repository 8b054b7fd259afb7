/* Flow inference on random functions with a known circulation (random
 * walks), from weights made by simulated IP sampling (binomial thinning of
 * every instruction's executions): MCF conserves flow, and its counts are
 * closer to the truth than the raw weights, by block overlap
 * Σ min(p_i/P, q_i/Q); PROPAGATE and NONE are reported beside it. Also:
 * exact weights give back exact block counts on every random graph, and
 * the time per function of 1,000 and 5,000 blocks (printed, not asserted). */
#include "infer_random.h"
#include "infer_util.h"
#include "infer/ip_ranges.h"

#include <time.h>

typedef struct acc {
    double block[3], edge[3];
    double block_cost[3];        /* MCF: POISSON, FLAT convex, POISSON convex costs */
    int n, mcf_better;
} acc;

static const char *const method_name[3] = {"MCF", "PROPAGATE", "NONE"};

static void one_graph(uint64_t seed, size_t nblocks, double rate, acc *a)
{
    rng r = {seed};
    size_t n;
    pk_insn *insns = random_function(&r, nblocks, 8, &n);
    pk_cfg c;
    pk_err err;
    if (pk_cfg_build(&c, insns, n, insns[0].addr, NULL, &err) != 0) {
        pk_test_failed_checks++;
        fprintf(stderr, "seed %llu: %s\n", (unsigned long long)seed, err.msg);
        free(insns);
        return;
    }
    size_t nb = c.nblocks, ne = c.nedges;
    uint64_t *tb = calloc(nb, 8), *te = calloc(ne + 1, 8), *bc = calloc(nb, 8), *ec = calloc(ne + 1, 8);
    uint64_t *addrs = malloc(n * 8), *hits = malloc(n * 8);
    int64_t *w = malloc(nb * 8);
    random_walks(&r, &c, 200, 200000, tb, te);
    if (conservation_errors(&c, tb, te) != 0) {   /* the generator's own check */
        pk_test_failed_checks++;
        fprintf(stderr, "seed %llu: the true counts are not a flow\n", (unsigned long long)seed);
    }
    sample_hits(&r, &c, insns, n, tb, rate, addrs, hits);
    CHECK_EQ_U64(pk_flow_block_weights(&c, addrs, hits, n, 16, w), 0);
    uint64_t *raw = calloc(nb, 8);
    for (size_t b = 0; b < nb; b++)
        raw[b] = (uint64_t)w[b];
    double raw_ov = overlap_u64(tb, raw, nb);
    pk_flow_opts o;
    pk_flow_defaults(&o);
    for (int m = 0; m < 3; m++) {
        o.method = m;
        CHECK_OK(pk_flow_infer(&c, w, PK_FLOW_UNKNOWN, &o, bc, ec, &err), &err);
        double bo = overlap_u64(tb, bc, nb), eo = overlap_u64(te, ec, ne);
        a->block[m] += bo;
        a->edge[m] += eo;
        if (m == PK_FLOW_MCF) {
            /* deterministic: the same input gives the same counts */
            uint64_t *bc2 = malloc(nb * 8), *ec2 = malloc((ne + 1) * 8);
            CHECK_OK(pk_flow_infer(&c, w, PK_FLOW_UNKNOWN, &o, bc2, ec2, &err), &err);
            CHECK(!memcmp(bc, bc2, nb * 8) && !memcmp(ec, ec2, ne * 8));
            free(bc2);
            free(ec2);
            int bad = conservation_errors(&c, bc, ec);
            if (bad) {
                pk_test_failed_checks++;
                fprintf(stderr, "seed %llu: %d blocks not conserved\n", (unsigned long long)seed, bad);
            }
            a->mcf_better += bo >= raw_ov;
        }
    }
    (void)raw_ov;
    o.method = PK_FLOW_MCF;
    o.weight_scale = 16;
    for (int m = 0; m < 3; m++) {
        static const int model[3] = {PK_FLOW_COSTS_POISSON, PK_FLOW_COSTS_FLAT, PK_FLOW_COSTS_POISSON};
        o.cost_model = model[m];
        o.convex_costs = m >= 1;
        CHECK_OK(pk_flow_infer(&c, w, PK_FLOW_UNKNOWN, &o, bc, ec, &err), &err);
        a->block_cost[m] += overlap_u64(tb, bc, nb);
        CHECK_EQ_U64(conservation_errors(&c, bc, ec), 0);   /* other costs, still a flow */
    }
    o.cost_model = PK_FLOW_COSTS_FLAT;
    o.convex_costs = false;
    a->n++;
    /* exact weights: a zero-cost flow exists, so every block comes back */
    for (size_t b = 0; b < nb; b++)
        w[b] = (int64_t)tb[b];
    o.method = PK_FLOW_MCF;
    CHECK_OK(pk_flow_infer(&c, w, PK_FLOW_UNKNOWN, &o, bc, ec, &err), &err);
    size_t wrong = 0;
    for (size_t b = 0; b < nb; b++)
        wrong += bc[b] != tb[b];
    if (wrong) {
        pk_test_failed_checks++;
        fprintf(stderr, "seed %llu: exact weights, %zu of %zu blocks differ\n", (unsigned long long)seed, wrong, nb);
    }
    CHECK_EQ_U64(conservation_errors(&c, bc, ec), 0);
    free(tb);
    free(te);
    free(bc);
    free(ec);
    free(addrs);
    free(hits);
    free(w);
    free(raw);
    free(insns);
    pk_cfg_free(&c);
}

TEST(noisy_random_graphs)
{
    /* sampling rates: about 4, 1 and 0.25 hits per block execution and
     * instruction... of the total; lower is noisier */
    static const double rates[] = {0.05, 0.01, 0.002};
    for (size_t k = 0; k < sizeof rates / sizeof *rates; k++) {
        acc a = {0};
        double raw = 0;
        for (uint64_t seed = 1; seed <= 30; seed++) {
            one_graph(seed * 7919 + k, 40 + (seed * 13) % 120, rates[k], &a);
        }
        (void)raw;
        printf("rate %.3f, %d graphs: block overlap", rates[k], a.n);
        for (int m = 0; m < 3; m++)
            printf(" %s %.4f", method_name[m], a.block[m] / a.n);
        printf("; edge overlap");
        for (int m = 0; m < 3; m++)
            printf(" %s %.4f", method_name[m], a.edge[m] / a.n);
        printf("; MCF >= raw on %d; MCF block overlap with costs by Poisson %.4f, convex %.4f, "
               "convex by Poisson %.4f\n",
               a.mcf_better, a.block_cost[0] / a.n, a.block_cost[1] / a.n, a.block_cost[2] / a.n);
        /* NONE's block counts are the raw weights */
        CHECK(a.block[PK_FLOW_MCF] > a.block[PK_FLOW_NONE]);
        CHECK(a.edge[PK_FLOW_MCF] > a.edge[PK_FLOW_NONE]);
        CHECK(a.mcf_better >= a.n * 3 / 4);
        /* convex costs weighted by Poisson evidence: closer to the truth
         * than profi's linear ones at every density (0.953 / 0.920 / 0.790
         * against 0.948 / 0.907 / 0.743 when written) */
        CHECK(a.block_cost[2] > a.block[PK_FLOW_MCF]);
    }
}

/* One function sampled in two calling contexts: `dense` with many samples,
 * `sparse` with few. Returns the block overlap of the sparse context's
 * inferred counts against its true counts, alone (prior 0) or with its
 * weights shrunk toward the two contexts' merged shape. same_shape: both
 * contexts take the same branches with the same odds (a function whose
 * behaviour does not depend on its caller), else each its own. */
static double sparse_context_overlap(uint64_t seed, bool same_shape, double prior, double *dense_overlap)
{
    rng r = {seed};
    size_t n;
    pk_insn *insns = random_function(&r, 30 + seed % 50, 8, &n);
    pk_cfg c;
    pk_err err;
    if (pk_cfg_build(&c, insns, n, insns[0].addr, NULL, &err) != 0) {
        pk_test_failed_checks++;
        free(insns);
        return 0;
    }
    size_t nb = c.nblocks, ne = c.nedges;
    uint64_t *tb[2], *te = calloc(ne + 1, 8), *bc = calloc(nb, 8), *ec = calloc(ne + 1, 8);
    uint64_t *addrs = malloc(n * 8), *hits = malloc(n * 8), nhits[2] = {0, 0};
    int64_t *w[2];
    double *shape = calloc(nb, sizeof *shape);
    static const double rate[2] = {0.02, 0.0004};
    rng odds = r;
    for (int k = 0; k < 2; k++) {
        tb[k] = calloc(nb, 8);
        w[k] = malloc(nb * 8);
        rng walk = same_shape ? odds : r;   /* same odds: the same branch probabilities */
        random_walks(&walk, &c, 300, 200000, tb[k], te);
        r.s ^= walk.s;                        /* the next draws differ either way */
        rng_next(&r);
        sample_hits(&r, &c, insns, n, tb[k], rate[k], addrs, hits);
        for (size_t i = 0; i < n; i++)
            nhits[k] += hits[i];
        pk_flow_block_weights(&c, addrs, hits, n, 64, w[k]);
        for (size_t b = 0; b < nb; b++)
            shape[b] += (double)w[k][b];
    }
    for (int k = 0; k < 2; k++)
        pk_flow_shrink_weights(w[k], nb, nhits[k], shape, prior);
    pk_flow_opts o;
    pk_flow_defaults(&o);
    double ov[2];
    for (int k = 0; k < 2; k++) {
        ov[k] = 0;
        if (pk_flow_infer(&c, w[k], PK_FLOW_UNKNOWN, &o, bc, ec, &err) != 0) {
            pk_test_failed_checks++;
            fprintf(stderr, "seed %llu: %s\n", (unsigned long long)seed, err.msg);
        } else {
            ov[k] = overlap_u64(tb[k], bc, nb);
        }
    }
    *dense_overlap = ov[0];
    for (int k = 0; k < 2; k++) {
        free(tb[k]);
        free(w[k]);
    }
    free(te);
    free(bc);
    free(ec);
    free(addrs);
    free(hits);
    free(shape);
    pk_cfg_free(&c);
    free(insns);
    return ov[1];
}

TEST(sparse_context_borrows_function_shape)
{
    /* Where the contexts behave alike, the sparse one's counts come out
     * closer to the truth when it borrows the merged shape; where they
     * differ, the dense one keeps its own shape (its overlap moves little). */
    for (int same = 1; same >= 0; same--) {
        double alone = 0, borrowed = 0, dense_alone = 0, dense_borrowed = 0, d;
        int better = 0, graphs = 40;
        for (uint64_t seed = 1; seed <= (uint64_t)graphs; seed++) {
            double a = sparse_context_overlap(seed * 104729, same, 0, &d);
            dense_alone += d;
            double b = sparse_context_overlap(seed * 104729, same, 64, &d);
            dense_borrowed += d;
            alone += a;
            borrowed += b;
            better += b >= a;
        }
        printf("%s shapes, %d graphs: sparse context overlap %.4f alone, %.4f borrowed (better or equal on %d); "
               "dense context %.4f alone, %.4f borrowed\n",
               same ? "same" : "different", graphs, alone / graphs, borrowed / graphs, better, dense_alone / graphs,
               dense_borrowed / graphs);
        if (same) {
            CHECK(borrowed > alone + 0.02 * graphs);
            CHECK(better >= graphs * 3 / 4);
        }
        CHECK(dense_borrowed > dense_alone - 0.01 * graphs);
    }
    /* nothing moves without a prior, or when the shape is empty */
    int64_t w[3] = {5, 0, 7}, keep[3] = {5, 0, 7};
    double none[3] = {0, 0, 0}, flat[3] = {1, 1, 1};
    pk_flow_shrink_weights(w, 3, 2, flat, 0);
    CHECK(!memcmp(w, keep, sizeof w));
    pk_flow_shrink_weights(w, 3, 2, none, 64);
    CHECK(!memcmp(w, keep, sizeof w));
    /* a strong prior: the flat shape at the context's own mass (12) */
    pk_flow_shrink_weights(w, 3, 0, flat, 64);
    CHECK(w[0] == 4 && w[1] == 4 && w[2] == 4);
}

TEST(ip_density_hot_instructions)
{
    /* the fewest blocks, heaviest first, that reach the share: 80 + 15 of
     * 100 for 90 %, 80 alone for 80 %; the input order does not matter */
    pk_ip_block_mass a[] = {{5, 1}, {80, 4}, {15, 10}}, b[] = {{15, 10}, {5, 1}, {80, 4}};
    CHECK_EQ_U64(pk_ip_hot_instructions(a, 3, 0.9), 14);
    CHECK_EQ_U64(pk_ip_hot_instructions(b, 3, 0.9), 14);
    CHECK_EQ_U64(pk_ip_hot_instructions(a, 3, 0.8), 4);
    CHECK_EQ_U64(pk_ip_hot_instructions(a, 3, 1.0), 15);
    /* equal masses: the block of fewer instructions first, whatever the order */
    pk_ip_block_mass t1[] = {{50, 7}, {50, 3}}, t2[] = {{50, 3}, {50, 7}};
    CHECK_EQ_U64(pk_ip_hot_instructions(t1, 2, 0.5), 3);
    CHECK_EQ_U64(pk_ip_hot_instructions(t2, 2, 0.5), 3);
    /* nothing ran: no hot code */
    pk_ip_block_mass z[] = {{0, 5}};
    CHECK_EQ_U64(pk_ip_hot_instructions(z, 1, 0.9), 0);
    CHECK_EQ_U64(pk_ip_hot_instructions(z, 0, 0.9), 0);

    /* density = share x samples / hot instructions; the warning below the
     * threshold names the figures, and none at or above it or with nothing */
    char buf[512];
    pk_ip_infer_stats st = {.samples_inferred = 1000, .hot_instructions = 900};
    CHECK(fabs(pk_ip_density(&st) - PK_IP_HOT_SHARE * 1000 / 900) < 1e-12);
    st.hot_instructions = (uint64_t)(PK_IP_HOT_SHARE * 1000 / PK_IP_THIN_DENSITY);
    CHECK(pk_ip_density(&st) >= PK_IP_THIN_DENSITY);
    CHECK(pk_ip_density_warning(&st, buf, sizeof buf) == 0 && buf[0] == 0);
    st.hot_instructions = 4000;
    CHECK(pk_ip_density_warning(&st, buf, sizeof buf) > 0);
    CHECK(strstr(buf, "0.23 samples per hot instruction") && strstr(buf, "1000 samples") && strstr(buf, "4000 instr"));
    pk_ip_infer_stats empty = {0};
    CHECK(pk_ip_density(&empty) == 0 && pk_ip_density_warning(&empty, buf, sizeof buf) == 0);
    /* a short buffer keeps a terminated prefix */
    char small[16];
    CHECK(pk_ip_density_warning(&st, small, sizeof small) == 15 && small[15] == 0);
}

/* The indirect-call warning: at half of the calls through pointers without a
 * callee and above, never below, never without such calls. */
TEST(ip_icall_warning_threshold)
{
    char buf[768];
    pk_ip_infer_stats st = {0};
    CHECK(pk_ip_icall_warning(&st, buf, sizeof buf) == 0 && buf[0] == 0);
    st.icall_sites = 4;
    st.icall_calls = 1000;
    st.icall_sites_untargeted = 3;
    st.icall_calls_untargeted = 499;
    CHECK(pk_ip_icall_warning(&st, buf, sizeof buf) == 0 && buf[0] == 0);
    st.icall_calls_untargeted = 500;
    CHECK(pk_ip_icall_warning(&st, buf, sizeof buf) > 0);
    CHECK(strstr(buf, "3 of 4 indirect call sites") && strstr(buf, "(50 % of their calls)") &&
          strstr(buf, "--call-graph dwarf"));
    char small[16];
    CHECK(pk_ip_icall_warning(&st, small, sizeof small) == 15 && small[15] == 0);
}

/* The hot code's instructions, from counts per block. */
static uint64_t hot_of(const pk_cfg *c, const uint64_t *count)
{
    pk_ip_block_mass *m = calloc(c->nblocks + 1, sizeof *m);
    size_t k = 0;
    for (size_t b = 0; b < c->nblocks; b++)
        if (count[b])
            m[k++] = (pk_ip_block_mass){(double)count[b] * c->blocks[b].ninsns, c->blocks[b].ninsns};
    uint64_t h = pk_ip_hot_instructions(m, k, PK_IP_HOT_SHARE);
    free(m);
    return h;
}

/* Density as profgen measures it (the hot code found from the inferred
 * counts) against the true one (the same samples over the hot code of the
 * exact counts), on random functions sampled at two rates: close to it at
 * either rate (the inference neither spreads the hot code out nor shrinks
 * it much), and it grows with the samples as the true one does. */
TEST(ip_density_from_inferred_counts)
{
    const double rates[2] = {0.002, 0.008};
    double measured[2] = {0, 0}, truth[2] = {0, 0};
    for (uint64_t seed = 1; seed <= 20; seed++) {
        rng r = {seed * 7919};
        size_t n;
        pk_insn *insns = random_function(&r, 150, 8, &n);
        pk_cfg c;
        pk_err err;
        if (pk_cfg_build(&c, insns, n, insns[0].addr, NULL, &err) != 0) {
            pk_test_failed_checks++;
            free(insns);
            continue;
        }
        size_t nb = c.nblocks;
        uint64_t *tb = calloc(nb, 8), *te = calloc(c.nedges + 1, 8), *bc = calloc(nb, 8), *ec = calloc(c.nedges + 1, 8);
        uint64_t *addrs = malloc(n * 8), *hits = malloc(n * 8);
        int64_t *w = malloc(nb * 8);
        random_walks(&r, &c, 200, 200000, tb, te);
        uint64_t hot_true = hot_of(&c, tb);
        for (int k = 0; k < 2; k++) {
            sample_hits(&r, &c, insns, n, tb, rates[k], addrs, hits);
            uint64_t samples = 0;
            for (size_t i = 0; i < n; i++)
                samples += hits[i];
            CHECK_EQ_U64(pk_flow_block_weights(&c, addrs, hits, n, 64, w), 0);
            pk_flow_opts o;
            pk_flow_defaults(&o);
            o.weight_scale = 64;
            o.cost_model = PK_FLOW_COSTS_POISSON;
            o.convex_costs = true;
            CHECK_OK(pk_flow_infer(&c, w, PK_FLOW_UNKNOWN, &o, bc, ec, &err), &err);
            pk_ip_infer_stats st = {.samples_inferred = samples, .hot_instructions = hot_of(&c, bc)};
            pk_ip_infer_stats st_true = {.samples_inferred = samples, .hot_instructions = hot_true};
            measured[k] += pk_ip_density(&st) / 20;
            truth[k] += pk_ip_density(&st_true) / 20;
        }
        free(tb);
        free(te);
        free(bc);
        free(ec);
        free(addrs);
        free(hits);
        free(w);
        pk_cfg_free(&c);
        free(insns);
    }
    for (int k = 0; k < 2; k++)
        printf("sampling rate %.3f: density %.3f from the inferred counts, %.3f from the true ones\n", rates[k],
               measured[k], truth[k]);
    for (int k = 0; k < 2; k++)
        CHECK(measured[k] > 0.75 * truth[k] && measured[k] < 1.33 * truth[k]);
    double grows = measured[1] / measured[0], grows_true = truth[1] / truth[0];
    CHECK(grows_true > 2.5 && grows > 0.75 * grows_true && grows < 1.33 * grows_true);
}

static double cpu_now(void)
{
    /* CPU time of this process: other jobs on the machine do not count */
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Times every method on one function, weights given. */
static void time_methods(const pk_cfg *c, const int64_t *w, const char *what)
{
    uint64_t *bc = malloc(c->nblocks * 8), *ec = malloc((c->nedges + 1) * 8);
    pk_flow_opts o;
    pk_err err;
    pk_flow_defaults(&o);
    printf("  %s weights:", what);
    for (int m = 0; m < 4; m++) {
        o.method = m == 3 ? PK_FLOW_MCF : m;
        o.even_distribution = m != 3;
        double t0 = cpu_now();
        if (pk_flow_infer(c, w, PK_FLOW_UNKNOWN, &o, bc, ec, &err) != 0) {
            pk_test_failed_checks++;
            fprintf(stderr, "%s\n", err.msg);
            break;
        }
        printf(" %s%s %.1f ms", method_name[o.method], m == 3 ? " (no even)" : "", (cpu_now() - t0) * 1e3);
        if (o.method == PK_FLOW_MCF)
            CHECK_EQ_U64(conservation_errors(c, bc, ec), 0);
    }
    printf("\n");
    free(bc);
    free(ec);
}

TEST(timing_large_functions)
{
    static const size_t sizes[] = {1000, 5000};
    for (size_t k = 0; k < 2; k++) {
        rng r = {1234 + k};
        size_t n;
        pk_insn *insns = random_function(&r, sizes[k], 0, &n);
        pk_cfg c;
        pk_err err;
        double t0 = cpu_now();
        CHECK_OK(pk_cfg_build(&c, insns, n, insns[0].addr, NULL, &err), &err);
        printf("%zu blocks, %zu edges: cfg %.2f ms\n", c.nblocks, c.nedges, (cpu_now() - t0) * 1e3);
        int64_t *w = malloc(c.nblocks * 8);
        uint64_t *tb = malloc(c.nblocks * 8), *te = malloc((c.nedges + 1) * 8);
        uint64_t *addrs = malloc(n * 8), *hits = malloc(n * 8);
        for (size_t b = 0; b < c.nblocks; b++)
            w[b] = rng_below(&r, 1000);   /* as inconsistent as weights get */
        time_methods(&c, w, "random");
        random_walks(&r, &c, 20, 10000000, tb, te);
        size_t ran = 0;
        for (size_t b = 0; b < c.nblocks; b++)
            ran += tb[b] != 0;
        sample_hits(&r, &c, insns, n, tb, 0.01, addrs, hits);
        pk_flow_block_weights(&c, addrs, hits, n, 16, w);
        char what[64];
        snprintf(what, sizeof what, "sampled (%zu blocks ran)", ran);
        time_methods(&c, w, what);
        free(w);
        free(tb);
        free(te);
        free(addrs);
        free(hits);
        free(insns);
        pk_cfg_free(&c);
    }
}

int main(void) { return pk_test_main(); }
