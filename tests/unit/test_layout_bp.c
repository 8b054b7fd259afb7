/* Balanced Partitioning: known answers on synthetic traces, utility
 * construction, determinism, threads = single thread. */
#include "layout/layout.h"
#include "test.h"

#include <stdlib.h>

static uint64_t rng_state;
static uint32_t rnd(uint32_t k)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(rng_state >> 33) % k;
}

static void shuffle(uint32_t *a, size_t n)
{
    for (size_t i = n; i > 1; i--) {
        uint32_t j = rnd((uint32_t)i), t = a[i - 1];
        a[i - 1] = a[j];
        a[j] = t;
    }
}

/* Positions of the functions for which pred holds form one contiguous block. */
static bool contiguous_mod(const uint32_t *order, size_t n, uint32_t mod, uint32_t val)
{
    size_t first = n, last = 0, count = 0;
    for (size_t i = 0; i < n; i++)
        if (order[i] % mod == val) {
            if (first == n)
                first = i;
            last = i;
            count++;
        }
    return count > 0 && last - first + 1 == count;
}

static bool contiguous(const uint32_t *order, size_t n, int parity)
{
    size_t first = n, last = 0, count = 0;
    for (size_t i = 0; i < n; i++)
        if ((int)(order[i] % 2) == parity) {
            if (first == n)
                first = i;
            last = i;
            count++;
        }
    return count > 0 && last - first + 1 == count;
}

TEST(bp_problem_two_groups)
{
    /* 8 nodes, interleaved input order; even nodes share utilities 0 and 1,
     * odd nodes share 2 and 3: the halves must be {even} and {odd}. */
    size_t off[9];
    uint32_t ut[16];
    for (uint32_t i = 0; i < 8; i++) {
        off[i] = 2 * i;
        ut[2 * i] = (i % 2) * 2;
        ut[2 * i + 1] = (i % 2) * 2 + 1;
    }
    off[8] = 16;
    pk_bp_problem p = {8, 4, off, ut, NULL};
    pk_bp_config c;
    pk_bp_config_default(&c);
    c.threads = 1;
    uint32_t order[8];
    pk_err err;
    CHECK_OK(pk_bp_run(&p, &c, order, &err), &err);
    CHECK(contiguous(order, 8, 0));
    CHECK(contiguous(order, 8, 1));
    /* Below the split, nodes keep their input order. */
    for (int i = 1; i < 8; i++)
        if (order[i] % 2 == order[i - 1] % 2)
            CHECK(order[i] > order[i - 1]);
}

TEST(bp_rejects_bad_problem)
{
    size_t off[3] = {0, 1, 2};
    uint32_t ut[2] = {0, 7};
    pk_bp_problem p = {2, 4, off, ut, NULL};
    pk_bp_config c;
    pk_bp_config_default(&c);
    uint32_t order[2];
    pk_err err = {{0}};
    CHECK(pk_bp_run(&p, &c, order, &err) != 0);
    CHECK(strstr(err.msg, "utility 7") != NULL);
}

TEST(trace_utils_llvm_windows)
{
    /* LLVM's unit-test example: trace [0,1,2,3] gives f0:{0,1,2}, f1:{1,2},
     * f2:{2}, f3:{2} (before filtering). */
    uint32_t funcs[4] = {0, 1, 2, 3}, nof[4] = {0, 1, 2, 3};
    pk_layout_trace tr = {funcs, 4, 1};
    pk_bp_graph g;
    pk_bp_graph_init(&g, 4);
    pk_err err;
    CHECK_OK(pk_bp_add_trace_utils(&g, nof, 4, &tr, 1, NULL, &err), &err);
    CHECK_EQ_U64(g.n_utils, 3);
    uint64_t want[] = {0x0, 0x1, 0x2, 1ull << 32 | 1, 1ull << 32 | 2, 2ull << 32 | 2, 3ull << 32 | 2};
    CHECK_EQ_U64(g.edges.len, 7);
    uint64_t *e = g.edges.data;
    /* edges were added node by node in first-execution order: compare as a set */
    for (size_t i = 0; i < 7; i++) {
        bool found = false;
        for (size_t j = 0; j < g.edges.len; j++)
            found |= e[j] == want[i];
        CHECK(found);
    }
    /* finish: utility 0 (one node) goes; 1 keeps {0,1}; 2 connects all 4 > n/2
     * and goes with filtering, stays without. */
    CHECK_OK(pk_bp_graph_finish(&g, true, &err), &err);
    CHECK_EQ_U64(g.problem.n_utils, 1);
    CHECK_EQ_U64(g.util_off[4], 2);
    pk_bp_graph_free(&g);

    pk_bp_graph_init(&g, 4);
    CHECK_OK(pk_bp_add_trace_utils(&g, nof, 4, &tr, 1, NULL, &err), &err);
    CHECK_OK(pk_bp_graph_finish(&g, false, &err), &err);
    CHECK_EQ_U64(g.problem.n_utils, 2);
    CHECK_EQ_U64(g.util_off[4], 6);
    pk_bp_graph_free(&g);
}

TEST(trace_utils_size_aware_windows)
{
    /* Without sizes the windows are {0} {1} {2,3} {4,5}; with sizes, the big
     * f2 doubles the executed bytes, so f3 opens a window of its own:
     * {0} {1} {2} {3,4,5}. Edges: 4+3+2+2+1+1 = 13 vs 4+3+2+1+1+1 = 12. */
    uint32_t funcs[6] = {0, 1, 2, 3, 4, 5}, nof[6] = {0, 1, 2, 3, 4, 5};
    uint64_t sizes[6] = {10, 10, 1000, 10, 10, 10};
    pk_layout_trace tr = {funcs, 6, 1};
    pk_bp_graph g;
    pk_err err;
    pk_bp_graph_init(&g, 6);
    CHECK_OK(pk_bp_add_trace_utils(&g, nof, 6, &tr, 1, NULL, &err), &err);
    CHECK_EQ_U64(g.n_utils, 4);
    CHECK_EQ_U64(g.edges.len, 13);
    pk_bp_graph_free(&g);
    pk_bp_graph_init(&g, 6);
    CHECK_OK(pk_bp_add_trace_utils(&g, nof, 6, &tr, 1, sizes, &err), &err);
    CHECK_EQ_U64(g.n_utils, 4);
    CHECK_EQ_U64(g.edges.len, 12);
    pk_bp_graph_free(&g);
}

TEST(trace_utils_reject_bad_index)
{
    uint32_t funcs[2] = {0, 9}, nof[2] = {0, 1};
    pk_layout_trace tr = {funcs, 2, 1};
    pk_bp_graph g;
    pk_bp_graph_init(&g, 2);
    pk_err err = {{0}};
    CHECK(pk_bp_add_trace_utils(&g, nof, 2, &tr, 1, NULL, &err) != 0);
    CHECK(strstr(err.msg, "out of range") != NULL);
    pk_bp_graph_free(&g);
}

/* 100 functions; even ones only run in traces 0..4, odd ones in 5..9, in
 * random orders; the start-up order must keep each group contiguous. */
static void disjoint_traces(uint32_t *buf, pk_layout_trace *tr)
{
    for (int t = 0; t < 10; t++) {
        uint32_t *a = buf + t * 50;
        for (uint32_t i = 0; i < 50; i++)
            a[i] = 2 * i + (t >= 5);
        shuffle(a, 50);
        tr[t] = (pk_layout_trace){a, 30 + (size_t)rnd(21), 1};
    }
}

TEST(startup_disjoint_groups_contiguous)
{
    rng_state = 42;
    uint32_t buf[500];
    pk_layout_trace tr[10];
    disjoint_traces(buf, tr);
    pk_layout_opts o;
    pk_layout_opts_default(&o);
    o.bp.threads = 1;
    uint32_t *order;
    size_t n;
    pk_err err;
    CHECK_OK(pk_layout_startup_order(100, tr, 10, &o, &order, &n, &err), &err);
    /* Only functions of the traces are ordered. */
    uint8_t in[100] = {0};
    size_t expect = 0;
    for (int t = 0; t < 10; t++)
        for (size_t i = 0; i < tr[t].len; i++)
            in[tr[t].funcs[i]] = 1;
    for (int f = 0; f < 100; f++)
        expect += in[f];
    CHECK_EQ_U64(n, expect);
    CHECK(contiguous(order, n, 0));
    CHECK(contiguous(order, n, 1));
    free(order);
}

TEST(startup_better_than_input_order)
{
    /* 400 functions of 1 KiB; each trace runs a random scattered subset of
     * 60 "common" functions plus 20 of its own: BP's page count must beat the
     * plain index order and be close to the minimum. */
    rng_state = 7;
    enum { N = 400, T = 8 };
    uint64_t sizes[N];
    for (int i = 0; i < N; i++)
        sizes[i] = 1000;
    uint32_t common[60], buf[T][80];
    uint32_t perm[N];
    for (uint32_t i = 0; i < N; i++)
        perm[i] = i;
    shuffle(perm, N);
    memcpy(common, perm, sizeof common);
    pk_layout_trace tr[T];
    for (int t = 0; t < T; t++) {
        memcpy(buf[t], common, sizeof common);
        memcpy(buf[t] + 60, perm + 60 + 20 * t, 20 * sizeof(uint32_t));
        shuffle(buf[t], 80);
        tr[t] = (pk_layout_trace){buf[t], 80, 1};
    }
    pk_layout_opts o;
    pk_layout_opts_default(&o);
    uint32_t *order;
    size_t n;
    pk_err err;
    CHECK_OK(pk_layout_startup_order(N, tr, T, &o, &order, &n, &err), &err);
    CHECK_EQ_U64(n, 60 + 20 * T);
    pk_layout_eval bp, plain;
    CHECK_OK(pk_layout_evaluate(N, sizes, order, n, tr, T, 4096, 16, &bp, &err), &err);
    uint32_t ident[N];
    for (uint32_t i = 0; i < N; i++)
        ident[i] = i;
    CHECK_OK(pk_layout_evaluate(N, sizes, ident, N, tr, T, 4096, 16, &plain, &err), &err);
    /* 220 functions × 1008 bytes ≈ 54 pages at best. */
    fprintf(stderr, "pages: bp %llu plain %llu; area: bp %llu plain %llu\n",
            (unsigned long long)bp.pages, (unsigned long long)plain.pages,
            (unsigned long long)bp.area, (unsigned long long)plain.area);
    CHECK(bp.pages <= 56);
    CHECK(plain.pages > bp.pages + 30);
    /* The common block first: a single trace only needs the common pages
     * plus its own, so the area is far below the plain layout's. */
    CHECK(bp.area * 2 < plain.area);
    free(order);
}

static void big_random_traces(uint32_t *buf, pk_layout_trace *tr, int T, uint32_t N, uint32_t len)
{
    uint32_t *perm = malloc(N * sizeof *perm);
    for (uint32_t i = 0; i < N; i++)
        perm[i] = i;
    for (int t = 0; t < T; t++) {
        shuffle(perm, N);
        /* a shared core (first 300 of a fixed list) + random tail */
        for (uint32_t i = 0; i < len; i++)
            buf[t * len + i] = i < 300 ? (i * 7919u) % N : perm[i];
        tr[t] = (pk_layout_trace){buf + t * len, len, 1 + (uint64_t)(t % 3)};
    }
    free(perm);
}

TEST(startup_deterministic_and_thread_independent)
{
    rng_state = 99;
    enum { N = 3000, T = 12, L = 900 };
    uint32_t *buf = malloc(sizeof(uint32_t) * T * L);
    pk_layout_trace tr[T];
    big_random_traces(buf, tr, T, N, L);
    /* Dedup within each trace (traces list a function once). */
    for (int t = 0; t < T; t++) {
        uint8_t seen[N] = {0};
        size_t w = 0;
        uint32_t *a = (uint32_t *)tr[t].funcs;
        for (size_t i = 0; i < tr[t].len; i++)
            if (!seen[a[i]]) {
                seen[a[i]] = 1;
                a[w++] = a[i];
            }
        tr[t].len = w;
    }
    pk_layout_opts o;
    pk_layout_opts_default(&o);
    uint32_t *r1, *r2, *r4, *s5;
    size_t n1, n2, n4, n5;
    pk_err err;
    o.bp.threads = 1;
    CHECK_OK(pk_layout_startup_order(N, tr, T, &o, &r1, &n1, &err), &err);
    CHECK_OK(pk_layout_startup_order(N, tr, T, &o, &r2, &n2, &err), &err);
    o.bp.threads = 4;
    CHECK_OK(pk_layout_startup_order(N, tr, T, &o, &r4, &n4, &err), &err);
    o.bp.seed = 5;
    CHECK_OK(pk_layout_startup_order(N, tr, T, &o, &s5, &n5, &err), &err);
    CHECK_EQ_U64(n1, n2);
    CHECK_EQ_U64(n1, n4);
    CHECK_EQ_U64(n1, n5);
    CHECK(n1 > 1000);
    CHECK(memcmp(r1, r2, n1 * sizeof *r1) == 0);
    CHECK(memcmp(r1, r4, n1 * sizeof *r1) == 0);
    CHECK(memcmp(r1, s5, n1 * sizeof *r1) != 0); /* the seed matters */
    /* Every traced function exactly once. */
    uint8_t *seen = calloc(N, 1);
    bool dup = false;
    for (size_t i = 0; i < n1; i++) {
        dup |= seen[r1[i]];
        seen[r1[i]] = 1;
    }
    CHECK(!dup);
    free(seen);
    free(r1); free(r2); free(r4); free(s5);
    free(buf);
}

TEST(content_utils_group_similar_code)
{
    /* 40 functions in 3 families (f % 3), each with its own byte pattern;
     * ordering the rest by similarity must keep each family contiguous. */
    enum { N = 40, SZ = 64 };
    static uint8_t code[N][SZ];
    const uint8_t *bytes[N];
    uint64_t sizes[N];
    rng_state = 3;
    for (int f = 0; f < N; f++) {
        for (int i = 0; i < SZ; i++)
            code[f][i] = (uint8_t)(f % 3 == 0 ? i * 13 + 200 : f % 3 == 1 ? i * 37 + 11 : i * i + 5);
        code[f][rnd(SZ)] ^= 0x5a; /* a small difference per function */
        bytes[f] = code[f];
        sizes[f] = SZ;
    }
    pk_layout_content c;
    pk_err err;
    CHECK_OK(pk_layout_content_build(&c, N, bytes, sizes, &err), &err);
    CHECK(c.off[1] > 0 && c.off[1] <= SZ - 3);
    pk_layout_opts o;
    pk_layout_opts_default(&o);
    o.content = &c;
    o.order_rest = true;
    uint32_t f0[1] = {0};
    pk_layout_trace tr = {f0, 1, 1};
    uint32_t *order;
    size_t n;
    CHECK_OK(pk_layout_startup_order(N, &tr, 1, &o, &order, &n, &err), &err);
    CHECK_EQ_U64(n, N);
    CHECK_EQ_U64(order[0], 0);
    for (uint32_t fam = 0; fam < 3; fam++)
        CHECK(contiguous_mod(order + 1, N - 1, 3, fam));
    free(order);
    pk_layout_content_free(&c);
}

TEST(evaluate_counts_pages)
{
    uint64_t sizes[4] = {4096, 100, 100, 5000};
    uint32_t order[3] = {1, 0, 2};     /* 3 is not placed */
    uint32_t t0[3] = {1, 2, 3};
    pk_layout_trace tr = {t0, 3, 1};
    pk_layout_eval ev;
    pk_err err;
    CHECK_OK(pk_layout_evaluate(4, sizes, order, 3, &tr, 1, 4096, 16, &ev, &err), &err);
    /* f1 at 0 (page 0), f0 at 112..4207 (pages 0,1), f2 at 4208 (page 1); f3 one page. */
    CHECK_EQ_U64(ev.pages, 3);
    CHECK_EQ_U64(ev.area, 1 + 2 + 3);
    uint32_t bad[2] = {1, 1};
    CHECK(pk_layout_evaluate(4, sizes, bad, 2, &tr, 1, 4096, 16, &ev, &err) != 0);
}

int main(void) { return pk_test_main(); }
