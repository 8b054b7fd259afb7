/* C3 call-chain clustering on a small hand-checked graph. */
#include "layout/layout.h"
#include "test.h"

#include <stdlib.h>

/* 0 main, 1 A, 2 B, 3 C (big, cold-ish), 4 D (known only from arcs),
 * 5 never sampled, 6 E (dense, reached by an unlikely arc).
 * Densities: A 20, B 10, E 10, D 51/10, main 1, C 0.001.
 *  A: best caller main (100 of 1000 samples = 0.1, not below) -> [main A]
 *  B: caller A (400 of 500)                                   -> [main A B]
 *  D: callers B 50, C 1 -> B                                  -> [main A B D]
 *  C: caller main, but [main A B D] (1651/210) would drop below 1/8 of its
 *     density with C's 10 000 bytes: C stays alone.
 *  E: caller main brings 5 of 100 (< 0.1): alone.
 * Clusters by density: [E] 10, [main A B D] 7.86, [C] 0.001. */
TEST(c3_hand_checked)
{
    uint64_t sizes[7] = {100, 50, 50, 10000, 10, 64, 10};
    uint64_t samples[7] = {100, 1000, 500, 10, 0, 0, 100};
    pk_c3_arc arcs[] = {
        {0, 1, 60}, {0, 1, 40},   /* parallel arcs add up */
        {1, 2, 400}, {0, 3, 5}, {2, 4, 50}, {3, 4, 1}, {0, 6, 5},
        {2, 2, 1000},             /* recursion: ignored */
    };
    pk_c3_config c;
    pk_c3_config_default(&c);
    uint32_t *order;
    size_t n;
    pk_err err;
    CHECK_OK(pk_c3_order(7, sizes, samples, arcs, sizeof arcs / sizeof arcs[0], &c, &order, &n, &err), &err);
    uint32_t want[] = {6, 0, 1, 2, 4, 3};
    CHECK_EQ_U64(n, 6);
    for (size_t i = 0; i < 6 && i < n; i++)
        CHECK_EQ_U64(order[i], want[i]);
    free(order);

    /* A 150-byte cluster limit stops the chain after [main A]. */
    c.max_cluster_size = 150;
    CHECK_OK(pk_c3_order(7, sizes, samples, arcs, sizeof arcs / sizeof arcs[0], &c, &order, &n, &err), &err);
    /* [B D] (density 551/60 = 9.18) now precedes [main A] (7.33). */
    uint32_t want2[] = {6, 2, 4, 0, 1, 3};
    CHECK_EQ_U64(n, 6);
    for (size_t i = 0; i < 6 && i < n; i++)
        CHECK_EQ_U64(order[i], want2[i]);
    free(order);
}

TEST(c3_rejects_bad_arcs)
{
    pk_c3_arc arcs[] = {{0, 5, 1}};
    pk_c3_config c;
    pk_c3_config_default(&c);
    uint32_t *order;
    size_t n;
    pk_err err = {{0}};
    CHECK(pk_c3_order(2, NULL, NULL, arcs, 1, &c, &order, &n, &err) != 0);
    CHECK(strstr(err.msg, "out of range") != NULL);
}

TEST(c3_empty_graph)
{
    pk_c3_config c;
    pk_c3_config_default(&c);
    uint32_t *order;
    size_t n = 99;
    pk_err err;
    CHECK_OK(pk_c3_order(3, NULL, NULL, NULL, 0, &c, &order, &n, &err), &err);
    CHECK_EQ_U64(n, 0);
    free(order);
}

int main(void) { return pk_test_main(); }
