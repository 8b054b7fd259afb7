/* test_cg_order.c — the pre-inliner's top-down order on call graphs whose
 * right order is known: callers before callees, a recursion cycle entered at
 * the caller of its hottest edges, and cold pairs judged on their summed
 * weight. */
#include "test.h"
#include "profgen/cg_order.h"

static bool before(const uint32_t *order, size_t n, uint32_t a, uint32_t b)
{
    size_t ia = n, ib = n;
    for (size_t i = 0; i < n; i++) {
        if (order[i] == a)
            ia = i;
        if (order[i] == b)
            ib = i;
    }
    return ia < n && ib < n && ia < ib;
}

TEST(callers_before_callees_whatever_the_numbering)
{
    /* c(0) calls b(1), a(2) calls c: a, c, b */
    pk_cg_edge e[] = {{0, 1, 10}, {2, 0, 10}};
    uint32_t order[3];
    pk_err err;
    CHECK_OK(pk_cg_top_down(3, e, 2, 0, PK_CG_CYCLE_MST, order, &err), &err);
    CHECK(order[0] == 2 && order[1] == 0 && order[2] == 1);
}

TEST(cycle_entered_at_the_caller_of_its_hottest_edges)
{
    /* An interpreter: exec(2) calls handle(0) 1000 times, handle calls
     * helper(1) 500 times, helper calls back into exec 400 times, handle
     * calls exec directly 10 times. In number order handle would come
     * first and merge exec's hot contexts of it into its base profile; the
     * spanning tree of the heavy edges starts at exec. */
    pk_cg_edge e[] = {{2, 0, 1000}, {0, 1, 500}, {1, 2, 400}, {0, 2, 10}};
    uint32_t order[3];
    pk_err err;
    CHECK_OK(pk_cg_top_down(3, e, 4, 0, PK_CG_CYCLE_MST, order, &err), &err);
    CHECK(order[0] == 2 && order[1] == 0 && order[2] == 1);
}

TEST(cycle_members_after_their_hot_callers_inside_the_cycle)
{
    /* a(0) -> b(1) 100, a -> c(2) 90, b -> c 5, c -> a 80: the tree is
     * a->b, a->c; c comes after a although c's heaviest edge (to a) enters a */
    pk_cg_edge e[] = {{0, 1, 100}, {0, 2, 90}, {1, 2, 5}, {2, 0, 80}};
    uint32_t order[3];
    pk_err err;
    CHECK_OK(pk_cg_top_down(3, e, 4, 0, PK_CG_CYCLE_MST, order, &err), &err);
    CHECK(order[0] == 0);
    CHECK(before(order, 3, 0, 1) && before(order, 3, 0, 2));
}

TEST(a_cycle_below_a_caller_comes_after_it)
{
    /* main(3) -> exec(2); exec <-> handle(0); handle -> leaf(1) */
    pk_cg_edge e[] = {{3, 2, 1}, {2, 0, 1000}, {0, 2, 10}, {0, 1, 50}};
    uint32_t order[4];
    pk_err err;
    CHECK_OK(pk_cg_top_down(4, e, 4, 0, PK_CG_CYCLE_MST, order, &err), &err);
    CHECK(order[0] == 3 && order[1] == 2 && order[2] == 0 && order[3] == 1);
}

TEST(cold_pairs_are_judged_on_their_summed_weight)
{
    /* x(0) -> y(1) seen in two contexts of weight 3: 6 > cold 5, kept, so x
     * comes first; a single context of 3 is cold and left out, and then the
     * whole graph decides: y -> x (5, cold too) is the heavier edge of the
     * cycle, which puts y first */
    pk_cg_edge twice[] = {{0, 1, 3}, {0, 1, 3}, {1, 0, 5}};
    pk_cg_edge once[] = {{0, 1, 3}, {1, 0, 5}};
    uint32_t order[2];
    pk_err err;
    CHECK_OK(pk_cg_top_down(2, twice, 3, 5, PK_CG_CYCLE_MST, order, &err), &err);
    CHECK(order[0] == 0 && order[1] == 1);
    CHECK_OK(pk_cg_top_down(2, once, 2, 5, PK_CG_CYCLE_MST, order, &err), &err);
    CHECK(order[0] == 1 && order[1] == 0);
}

TEST(cold_calls_keep_callers_before_callees)
{
    /* main -> foo -> bar, every call at the cold count: no hot edge is left,
     * and the whole graph's order decides (the pre-inliner may still inline
     * a cold call, but only while the callee's contexts are not merged
     * away). Numbered callers first and callees first. */
    pk_cg_edge down[] = {{0, 1, 14}, {1, 2, 14}};
    pk_cg_edge up[] = {{2, 1, 14}, {1, 0, 0}};
    uint32_t order[3];
    pk_err err;
    CHECK_OK(pk_cg_top_down(3, down, 2, 14, PK_CG_CYCLE_FAS, order, &err), &err);
    CHECK(order[0] == 0 && order[1] == 1 && order[2] == 2);
    CHECK_OK(pk_cg_top_down(3, up, 2, 14, PK_CG_CYCLE_FAS, order, &err), &err);
    CHECK(order[0] == 2 && order[1] == 1 && order[2] == 0);
}

TEST(cold_calls_ordered_around_the_hot_ones)
{
    /* main(0) -> foo(1) hot; foo -> bar(2), main -> baz(3), baz -> bar
     * cold: every caller still comes before its callees */
    pk_cg_edge e[] = {{0, 1, 100}, {1, 2, 1}, {0, 3, 1}, {3, 2, 1}};
    uint32_t order[4];
    pk_err err;
    CHECK_OK(pk_cg_top_down(4, e, 4, 5, PK_CG_CYCLE_FAS, order, &err), &err);
    CHECK(before(order, 4, 0, 1) && before(order, 4, 1, 2) && before(order, 4, 0, 3) && before(order, 4, 3, 2));
}

TEST(self_recursion_and_empty_graphs)
{
    pk_cg_edge e[] = {{0, 0, 100}, {1, 0, 5}};
    uint32_t order[2];
    pk_err err;
    CHECK_OK(pk_cg_top_down(2, e, 2, 0, PK_CG_CYCLE_MST, order, &err), &err);
    CHECK(order[0] == 1 && order[1] == 0);
    CHECK_OK(pk_cg_top_down(0, NULL, 0, 0, PK_CG_CYCLE_MST, order, &err), &err);
}


/* The weight of calls from a member to one visited before it. */
static uint64_t backward_weight(const pk_cg_edge *e, size_t ne, const uint32_t *order, size_t n)
{
    uint64_t w = 0;
    for (size_t i = 0; i < ne; i++)
        if (e[i].from != e[i].to && before(order, n, e[i].to, e[i].from))
            w += e[i].weight;
    return w;
}

TEST(fas_keeps_the_heavy_calls_forward)
{
    /* u(1) -> s(2) 1000, s -> r(0) 900, r -> u 300, s -> u 50: two cycles
     * through u -> s; the least weight left backward is 350 (u, s, r),
     * against 950 for r, u, s and 1000 for s, r, u */
    pk_cg_edge e[] = {{1, 2, 1000}, {2, 0, 900}, {0, 1, 300}, {2, 1, 50}};
    uint32_t mst[3], fas[3];
    pk_err err;
    CHECK_OK(pk_cg_top_down(3, e, 4, 0, PK_CG_CYCLE_MST, mst, &err), &err);
    CHECK_OK(pk_cg_top_down(3, e, 4, 0, PK_CG_CYCLE_FAS, fas, &err), &err);
    CHECK_EQ_U64(backward_weight(e, 4, fas, 3), 350);
    CHECK_EQ_U64(backward_weight(e, 4, mst, 3), 350);
    CHECK(fas[0] == 1 && fas[1] == 2 && fas[2] == 0);
}

TEST(fas_on_a_chain_with_one_back_edge)
{
    /* 4 -> 3 -> 2 -> 1 -> 0 heavy, 0 -> 4 light: the chain's order, the
     * light call the only one backward */
    pk_cg_edge e[] = {{4, 3, 100}, {3, 2, 100}, {2, 1, 100}, {1, 0, 100}, {0, 4, 1}};
    uint32_t order[5];
    pk_err err;
    CHECK_OK(pk_cg_top_down(5, e, 5, 0, PK_CG_CYCLE_FAS, order, &err), &err);
    CHECK(order[0] == 4 && order[1] == 3 && order[2] == 2 && order[3] == 1 && order[4] == 0);
    CHECK_EQ_U64(backward_weight(e, 5, order, 5), 1);
}


/* A ring of 2000 functions with a heavy chord: every member comes out
 * once, the chord's caller before its callee, and (fas) at most the
 * lightest ring edge of each of the two cycles left backward. */
static void large_cycle(int cycle_order)
{
    enum { N = 2000 };
    static pk_cg_edge e[N + 1];
    static uint32_t order[N];
    bool seen[N] = {false};
    for (uint32_t i = 0; i < N; i++)
        e[i] = (pk_cg_edge){i, (i + 1) % N, 1 + (i * 7919) % 1000};
    e[N] = (pk_cg_edge){N / 2, 0, 5000};
    pk_err err;
    CHECK_OK(pk_cg_top_down(N, e, N + 1, 0, cycle_order, order, &err), &err);
    size_t distinct = 0;
    for (size_t i = 0; i < N; i++)
        if (order[i] < N && !seen[order[i]]) {
            seen[order[i]] = true;
            distinct++;
        }
    CHECK_EQ_U64(distinct, N);
    CHECK(before(order, N, N / 2, 0));
    if (cycle_order == PK_CG_CYCLE_FAS)
        CHECK(backward_weight(e, N + 1, order, N) <= 2 * 1000);
}

TEST(a_large_cycle_is_ordered_completely_mst) { large_cycle(PK_CG_CYCLE_MST); }
TEST(a_large_cycle_is_ordered_completely_fas) { large_cycle(PK_CG_CYCLE_FAS); }

int main(void) { return pk_test_main(); }

/* The feedback-arc order is a local optimum: on random strongly connected
 * graphs (a ring through every function, plus random weighted calls), no
 * single function moved elsewhere lowers the weight of calls that point
 * backward (into a function ordered before their caller). The greedy order
 * alone is not: its choices only see a function's own in- and out-weight. */
TEST(feedback_arc_order_is_a_local_optimum)
{
    enum { NF = 24, NE = 4 * NF };
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    for (int graph = 0; graph < 40; graph++) {
        pk_cg_edge e[NF + NE], copy[NF + NE];
        size_t ne = 0;
        for (uint32_t f = 0; f < NF; f++)
            e[ne++] = (pk_cg_edge){f, (f + 1) % NF, 1 + f % 3};
        for (int k = 0; k < NE; k++) {
            rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
            uint32_t a = (uint32_t)(rng % NF), b = (uint32_t)((rng >> 20) % NF);
            if (a != b)
                e[ne++] = (pk_cg_edge){a, b, 1 + (rng >> 40) % 1000};
        }
        memcpy(copy, e, ne * sizeof *e);
        uint32_t order[NF];
        pk_err err;
        CHECK_OK(pk_cg_top_down(NF, e, ne, 0, PK_CG_CYCLE_FAS, order, &err), &err);
        static int64_t w[NF][NF];
        memset(w, 0, sizeof w);
        for (size_t i = 0; i < ne; i++)
            w[copy[i].from][copy[i].to] += (int64_t)copy[i].weight;
        /* the best single move of each function: jumping over the functions
         * between changes only the calls between them and it */
        bool improvable = false;
        for (uint32_t i = 0; i < NF && !improvable; i++) {
            uint32_t v = order[i];
            int64_t d = 0;
            for (uint32_t j = i; j-- > 0 && !improvable;)
                improvable = (d += w[order[j]][v] - w[v][order[j]]) < 0;
            d = 0;
            for (uint32_t j = i + 1; j < NF && !improvable; j++)
                improvable = (d += w[v][order[j]] - w[order[j]][v]) < 0;
        }
        CHECK(!improvable);
    }
}
