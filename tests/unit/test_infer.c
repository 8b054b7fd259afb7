/* Flow inference on hand-made CFGs with known counts: the CFG builder's
 * rules (blocks, edge kinds, exits, jump tables, unresolved indirect
 * jumps, calls) and pk_flow_infer: flow conservation everywhere, and dense
 * exact weights give back exactly the true block and edge counts. */
#include "infer_util.h"

typedef struct want_edge {
    uint64_t from, to;
    uint8_t kind;
    uint64_t count;
} want_edge;

typedef struct want_block {
    uint64_t addr, count;
} want_block;

/* Builds the CFG, checks its blocks and edges, then infers with the true
 * block counts as weights (blocks not listed: weight 0) and checks that
 * every count comes back, for MCF with and without a known entry count. */
static void exact_case(const char *name, const pk_insn *insns, size_t n, const pk_cfg_hints *h,
                       const want_block *wb, size_t nwb, const want_edge *we, size_t nwe)
{
    pk_cfg c;
    pk_err err;
    if (pk_cfg_build(&c, insns, n, insns[0].addr, h, &err) != 0) {
        pk_test_failed_checks++;
        fprintf(stderr, "%s: %s\n", name, err.msg);
        return;
    }
    CHECK_EQ_U64(c.nblocks, nwb);
    CHECK_EQ_U64(c.nedges, nwe);
    for (size_t i = 0; i < nwb; i++)
        CHECK(blk(&c, wb[i].addr) != UINT32_MAX && c.blocks[blk(&c, wb[i].addr)].begin == wb[i].addr);
    for (size_t i = 0; i < nwe; i++) {
        uint32_t e = edge_of(&c, we[i].from, we[i].to);
        if (e == UINT32_MAX) {
            pk_test_failed_checks++;
            fprintf(stderr, "%s: no edge 0x%llx -> 0x%llx\n", name, (unsigned long long)we[i].from,
                    (unsigned long long)we[i].to);
            continue;
        }
        CHECK_EQ_U64(c.edges[e].kind, we[i].kind);
    }
    int64_t *w = calloc(c.nblocks, sizeof *w);
    uint64_t *bc = calloc(c.nblocks, sizeof *bc), *ec = calloc(c.nedges + 1, sizeof *ec);
    for (size_t i = 0; i < nwb; i++)
        w[blk(&c, wb[i].addr)] = (int64_t)wb[i].count;
    /* the entry count: the entry block's count minus its in-edges */
    int64_t entry = (int64_t)wb[0].count;
    for (size_t i = 0; i < nwe; i++)
        if (we[i].to == insns[0].addr)
            entry -= (int64_t)we[i].count;
    pk_flow_opts o;
    pk_flow_defaults(&o);
    for (int pass = 0; pass < 4; pass++) {
        o.even_distribution = pass & 1;
        CHECK_OK(pk_flow_infer(&c, w, pass & 2 ? entry : PK_FLOW_UNKNOWN, &o, bc, ec, &err), &err);
        int bad = conservation_errors(&c, bc, ec);
        for (size_t i = 0; i < nwb; i++)
            bad += bc[blk(&c, wb[i].addr)] != wb[i].count;
        for (size_t i = 0; i < nwe; i++) {
            uint32_t e = edge_of(&c, we[i].from, we[i].to);
            bad += e != UINT32_MAX && ec[e] != we[i].count;
        }
        if (bad) {
            pk_test_failed_checks++;
            fprintf(stderr, "%s (pass %d): %d wrong counts\n", name, pass, bad);
            for (size_t b = 0; b < c.nblocks; b++)
                fprintf(stderr, "  block 0x%llx: %llu\n", (unsigned long long)c.blocks[b].begin,
                        (unsigned long long)bc[b]);
            for (size_t e = 0; e < c.nedges; e++)
                fprintf(stderr, "  edge 0x%llx -> 0x%llx: %llu\n", (unsigned long long)c.blocks[c.edges[e].from].begin,
                        (unsigned long long)c.blocks[c.edges[e].to].begin, (unsigned long long)ec[e]);
        }
    }
    free(w);
    free(bc);
    free(ec);
    pk_cfg_free(&c);
}

#define N(a) (sizeof(a) / sizeof *(a))

TEST(diamond)
{
    pk_insn in[] = {OTH(0x10, 2), CJ(0x12, 0x1a), OTH(0x14, 4), JM(0x18, 0x1c), OTH(0x1a, 2), RET(0x1c)};
    want_block b[] = {{0x10, 100}, {0x14, 70}, {0x1a, 30}, {0x1c, 100}};
    want_edge e[] = {{0x10, 0x14, PK_CFG_FALL, 70}, {0x10, 0x1a, PK_CFG_JUMP, 30},
                     {0x14, 0x1c, PK_CFG_JUMP, 70}, {0x1a, 0x1c, PK_CFG_FALL, 30}};
    exact_case("diamond", in, N(in), NULL, b, N(b), e, N(e));
}

TEST(diamond_zero_branch)
{
    pk_insn in[] = {OTH(0x10, 2), CJ(0x12, 0x1a), OTH(0x14, 4), JM(0x18, 0x1c), OTH(0x1a, 2), RET(0x1c)};
    want_block b[] = {{0x10, 100}, {0x14, 100}, {0x1a, 0}, {0x1c, 100}};
    want_edge e[] = {{0x10, 0x14, PK_CFG_FALL, 100}, {0x10, 0x1a, PK_CFG_JUMP, 0},
                     {0x14, 0x1c, PK_CFG_JUMP, 100}, {0x1a, 0x1c, PK_CFG_FALL, 0}};
    exact_case("diamond_zero", in, N(in), NULL, b, N(b), e, N(e));
}

TEST(loop)
{
    pk_insn in[] = {OTH(0x10, 2), OTH(0x12, 2), CJ(0x14, 0x1c), OTH(0x16, 4), JM(0x1a, 0x12), RET(0x1c)};
    want_block b[] = {{0x10, 5}, {0x12, 55}, {0x16, 50}, {0x1c, 5}};
    want_edge e[] = {{0x10, 0x12, PK_CFG_FALL, 5}, {0x12, 0x16, PK_CFG_FALL, 50},
                     {0x12, 0x1c, PK_CFG_JUMP, 5}, {0x16, 0x12, PK_CFG_JUMP, 50}};
    exact_case("loop", in, N(in), NULL, b, N(b), e, N(e));
}

TEST(nested_loops)
{
    pk_insn in[] = {OTH(0x10, 2), OTH(0x12, 2), OTH(0x14, 2), CJ(0x16, 0x1e), OTH(0x18, 4), JM(0x1c, 0x14),
                    OTH(0x1e, 2), CJ(0x20, 0x12), RET(0x22)};
    want_block b[] = {{0x10, 3}, {0x12, 30}, {0x14, 180}, {0x18, 150}, {0x1e, 30}, {0x22, 3}};
    want_edge e[] = {{0x10, 0x12, PK_CFG_FALL, 3},   {0x12, 0x14, PK_CFG_FALL, 30},
                     {0x14, 0x18, PK_CFG_FALL, 150}, {0x14, 0x1e, PK_CFG_JUMP, 30},
                     {0x18, 0x14, PK_CFG_JUMP, 150}, {0x1e, 0x22, PK_CFG_FALL, 3},
                     {0x1e, 0x12, PK_CFG_JUMP, 27}};
    exact_case("nested", in, N(in), NULL, b, N(b), e, N(e));
}

TEST(self_loop)
{
    /* 0x12's jcc goes back to its own start */
    pk_insn in[] = {OTH(0x10, 2), OTH(0x12, 2), CJ(0x14, 0x12), RET(0x16)};
    want_block b[] = {{0x10, 4}, {0x12, 40}, {0x16, 4}};
    want_edge e[] = {{0x10, 0x12, PK_CFG_FALL, 4}, {0x12, 0x16, PK_CFG_FALL, 4}, {0x12, 0x12, PK_CFG_JUMP, 36}};
    exact_case("self_loop", in, N(in), NULL, b, N(b), e, N(e));
}

TEST(calls_and_recursion)
{
    /* a call out, a call to itself (recursion is just a call), a call at
     * the very end (no return address inside: an exit) */
    pk_insn in[] = {OTH(0x10, 2), CALL(0x12, 0x900), OTH(0x17, 2), CALL(0x19, 0x10), CJ(0x1e, 0x25),
                    RET(0x20), OTH(0x21, 4), CALL(0x25, 0x990)};
    want_block b[] = {{0x10, 9}, {0x17, 9}, {0x1e, 9}, {0x20, 6}, {0x21, 0}, {0x25, 3}};
    want_edge e[] = {{0x10, 0x17, PK_CFG_AFTER_CALL, 9}, {0x17, 0x1e, PK_CFG_AFTER_CALL, 9},
                     {0x1e, 0x20, PK_CFG_FALL, 6},       {0x1e, 0x25, PK_CFG_JUMP, 3},
                     {0x21, 0x25, PK_CFG_FALL, 0}};
    exact_case("calls", in, N(in), NULL, b, N(b), e, N(e));
    pk_cfg c;
    pk_err err;
    CHECK_OK(pk_cfg_build(&c, in, N(in), 0x10, NULL, &err), &err);
    CHECK(c.blocks[blk(&c, 0x25)].flags & PK_CFG_EXIT);
    CHECK(c.blocks[blk(&c, 0x20)].flags & PK_CFG_EXIT);
    CHECK(!(c.blocks[blk(&c, 0x10)].flags & PK_CFG_EXIT));
    CHECK_EQ_U64(c.blocks[blk(&c, 0x10)].term, PK_INSN_CALL);
    pk_cfg_free(&c);
}

/* A switch: ijmp at 0x14 through a table of 5 entries (one repeated). */
static const uint64_t table[] = {0x16, 0x1a, 0x1e, 0x1a, 0x22};

TEST(jump_table_resolved)
{
    pk_insn in[] = {OTH(0x10, 2), CJ(0x12, 0x22), IJ(0x14), OTH(0x16, 2), JM(0x18, 0x24), OTH(0x1a, 2),
                    JM(0x1c, 0x24), OTH(0x1e, 2), JM(0x20, 0x24), OTH(0x22, 2), RET(0x24)};
    pk_cfg_jtable jt = {.ijmp = 0x14, .targets = table, .ntargets = 5};
    pk_cfg_hints h = {.tables = &jt, .ntables = 1};
    want_block b[] = {{0x10, 60}, {0x14, 50}, {0x16, 10}, {0x1a, 15}, {0x1e, 5}, {0x22, 30}, {0x24, 60}};
    want_edge e[] = {{0x10, 0x14, PK_CFG_FALL, 50},  {0x10, 0x22, PK_CFG_JUMP, 10}, {0x14, 0x16, PK_CFG_TABLE, 10},
                     {0x14, 0x1a, PK_CFG_TABLE, 15}, {0x14, 0x1e, PK_CFG_TABLE, 5}, {0x14, 0x22, PK_CFG_TABLE, 20},
                     {0x16, 0x24, PK_CFG_JUMP, 10},  {0x1a, 0x24, PK_CFG_JUMP, 15}, {0x1e, 0x24, PK_CFG_JUMP, 5},
                     {0x22, 0x24, PK_CFG_FALL, 30}};
    exact_case("table", in, N(in), &h, b, N(b), e, N(e));
    pk_cfg c;
    pk_err err;
    CHECK_OK(pk_cfg_build(&c, in, N(in), 0x10, &h, &err), &err);
    CHECK_EQ_U64(c.ijumps_resolved, 1);
    CHECK_EQ_U64(c.ijumps_unresolved, 0);
    CHECK(!(c.blocks[blk(&c, 0x14)].flags & PK_CFG_EXIT));
    pk_cfg_free(&c);
    /* a table entry that is not an instruction: unresolved */
    static const uint64_t bad[] = {0x16, 0x17};
    pk_cfg_jtable jb = {.ijmp = 0x14, .targets = bad, .ntargets = 2};
    pk_cfg_hints hb = {.tables = &jb, .ntables = 1};
    CHECK_OK(pk_cfg_build(&c, in, N(in), 0x10, &hb, &err), &err);
    CHECK_EQ_U64(c.ijumps_resolved, 0);
    CHECK_EQ_U64(c.ijumps_unresolved, 1);
    pk_cfg_free(&c);
    /* an entry outside the function (a case in a .cold part not given):
     * resolved, the other cases are edges, and the jump is an exit too */
    static const uint64_t out[] = {0x16, 0x9000, 0x1e};
    pk_cfg_jtable jo = {.ijmp = 0x14, .targets = out, .ntargets = 3, .guessed = true};
    pk_cfg_hints ho = {.tables = &jo, .ntables = 1};
    CHECK_OK(pk_cfg_build(&c, in, N(in), 0x10, &ho, &err), &err);
    CHECK_EQ_U64(c.ijumps_resolved, 1);
    CHECK_EQ_U64(c.ijumps_guessed, 1);
    CHECK(c.blocks[blk(&c, 0x14)].flags & PK_CFG_EXIT);
    CHECK_EQ_U64(c.blocks[blk(&c, 0x14)].nsucc, 2);
    CHECK(edge_of(&c, 0x14, 0x1e) != UINT32_MAX);
    pk_cfg_free(&c);
}

TEST(jump_table_unresolved)
{
    /* The same switch without its table: the cases 0x16, 0x1a, 0x1e have no
     * predecessor, so they are the unknown jump's targets; 0x22 (also the
     * jcc's target) is not. The ijmp block is an exit too. */
    pk_insn in[] = {OTH(0x10, 2), CJ(0x12, 0x22), IJ(0x14), OTH(0x16, 2), JM(0x18, 0x24), OTH(0x1a, 2),
                    JM(0x1c, 0x24), OTH(0x1e, 2), JM(0x20, 0x24), OTH(0x22, 2), RET(0x24)};
    want_block b[] = {{0x10, 40}, {0x14, 30}, {0x16, 10}, {0x1a, 15}, {0x1e, 5}, {0x22, 10}, {0x24, 40}};
    want_edge e[] = {{0x10, 0x14, PK_CFG_FALL, 30},        {0x10, 0x22, PK_CFG_JUMP, 10},
                     {0x14, 0x16, PK_CFG_UNKNOWN_IJMP, 10}, {0x14, 0x1a, PK_CFG_UNKNOWN_IJMP, 15},
                     {0x14, 0x1e, PK_CFG_UNKNOWN_IJMP, 5},  {0x16, 0x24, PK_CFG_JUMP, 10},
                     {0x1a, 0x24, PK_CFG_JUMP, 15},         {0x1e, 0x24, PK_CFG_JUMP, 5},
                     {0x22, 0x24, PK_CFG_FALL, 10}};
    exact_case("unresolved", in, N(in), NULL, b, N(b), e, N(e));
    pk_cfg c;
    pk_err err;
    CHECK_OK(pk_cfg_build(&c, in, N(in), 0x10, NULL, &err), &err);
    CHECK_EQ_U64(c.ijumps_unresolved, 1);
    CHECK(c.blocks[blk(&c, 0x14)].flags & PK_CFG_EXIT);
    pk_cfg_free(&c);
    /* an indirect tail call: no region is left unreached, so just an exit */
    pk_insn t[] = {OTH(0x10, 2), CJ(0x12, 0x16), IJ(0x14), RET(0x16)};
    CHECK_OK(pk_cfg_build(&c, t, N(t), 0x10, NULL, &err), &err);
    CHECK_EQ_U64(c.nblocks, 3);
    CHECK_EQ_U64(c.blocks[1].nsucc, 0);
    CHECK(c.blocks[1].flags & PK_CFG_EXIT);
    int64_t w[] = {8, 5, 3};
    uint64_t bc[3], ec[2];
    pk_flow_opts o;
    pk_flow_defaults(&o);
    CHECK_OK(pk_flow_infer(&c, w, PK_FLOW_UNKNOWN, &o, bc, ec, &err), &err);
    CHECK_EQ_U64(bc[0], 8);
    CHECK_EQ_U64(bc[1], 5);
    CHECK_EQ_U64(bc[2], 3);
    CHECK_EQ_U64(conservation_errors(&c, bc, ec), 0);
    pk_cfg_free(&c);
}

TEST(computed_goto_labels)
{
    /* An interpreter's dispatch: `goto *table[op]` (an unresolved ijmp at
     * 0x1c) to labels only data holds. Handler A (0x10) runs into handler
     * B's label 0x14 without a jump, B's code shares A's tail; without the
     * labels, 0x10..0x1c is one block and B's hits raise A's count. With
     * the labels (hints.taken) 0x14 and 0x18 start blocks and are targets
     * of the dispatch, though the code before them reaches them too. */
    pk_insn in[] = {OTH(0x10, 2), OTH(0x12, 2), OTH(0x14, 2), OTH(0x16, 2), OTH(0x18, 2), OTH(0x1a, 2), IJ(0x1c)};
    static const uint64_t labels[] = {0x10, 0x14, 0x18};
    pk_cfg_hints h = {.taken = labels, .ntaken = N(labels)};
    pk_cfg c;
    pk_err err;
    CHECK_OK(pk_cfg_build(&c, in, N(in), 0x10, NULL, &err), &err);
    CHECK_EQ_U64(c.nblocks, 1);                      /* blind to the labels */
    pk_cfg_free(&c);
    CHECK_OK(pk_cfg_build(&c, in, N(in), 0x10, &h, &err), &err);
    CHECK_EQ_U64(c.nblocks, 3);
    CHECK(blk(&c, 0x14) != UINT32_MAX && c.blocks[blk(&c, 0x14)].begin == 0x14);
    CHECK(c.blocks[blk(&c, 0x18)].begin == 0x18);
    CHECK(edge_of(&c, 0x14, 0x18) != UINT32_MAX);    /* falls into the next label */
    CHECK(edge_of(&c, 0x18, 0x14) != UINT32_MAX && c.edges[edge_of(&c, 0x18, 0x14)].kind == PK_CFG_UNKNOWN_IJMP);
    CHECK(edge_of(&c, 0x18, 0x18) != UINT32_MAX);    /* the dispatch may run its own handler again */
    /* the hits of handler B (0x14 and on) no longer count for A: with A
     * never run and B hot, inference gives A nothing */
    int64_t w[3] = {0, 40, 40};
    uint64_t bc[3], ec[8];
    pk_flow_opts o;
    pk_flow_defaults(&o);
    CHECK_OK(pk_flow_infer(&c, w, PK_FLOW_UNKNOWN, &o, bc, ec, &err), &err);
    CHECK(bc[blk(&c, 0x14)] >= 39 && bc[blk(&c, 0x18)] >= 39);
    CHECK_EQ_U64(conservation_errors(&c, bc, ec), 0);
    pk_cfg_free(&c);
}

TEST(unreachable_blocks)
{
    /* 0x1d: a landing pad with samples (no predecessor) is a secondary
     * entry and keeps its count, flowing into 0x25; 0x23 (padding before
     * the ret, no samples) and 0x26 (after it) get 0. */
    pk_insn in[] = {OTH(0x10, 2), CJ(0x12, 0x1a), OTH(0x14, 4), JM(0x18, 0x25), OTH(0x1a, 2), RET(0x1c),
                    OTH(0x1d, 4), JM(0x21, 0x25), OTH(0x23, 2), RET(0x25), OTH(0x26, 2)};
    want_block b[] = {{0x10, 100}, {0x14, 70}, {0x1a, 30}, {0x1d, 7}, {0x23, 0}, {0x25, 77}, {0x26, 0}};
    want_edge e[] = {{0x10, 0x14, PK_CFG_FALL, 70}, {0x10, 0x1a, PK_CFG_JUMP, 30}, {0x14, 0x25, PK_CFG_JUMP, 70},
                     {0x1d, 0x25, PK_CFG_JUMP, 7},  {0x23, 0x25, PK_CFG_FALL, 0}};
    exact_case("unreachable", in, N(in), NULL, b, N(b), e, N(e));
}

TEST(builder_rules)
{
    pk_cfg c;
    pk_err err;
    /* a jcc to its own fall-through is one FALL edge; a jmp out of the
     * function is a tail call (exit); a jcc out is a conditional tail call
     * (exit with its fall-through); hlt/ud2 stops (hints) */
    pk_insn in[] = {OTH(0x10, 2), CJ(0x12, 0x14), CJ(0x14, 0x800), OTH(0x16, 2), CALL(0x18, 0x700),
                    OTH(0x1d, 1), JM(0x1e, 0x900), RET(0x20)};
    uint64_t stops[] = {0x18};   /* the call does not return */
    pk_cfg_hints h = {.stops = stops, .nstops = 1};
    CHECK_OK(pk_cfg_build(&c, in, N(in), 0x10, &h, &err), &err);
    CHECK_EQ_U64(c.nblocks, 5);   /* 0x10 0x14 0x16 0x1d 0x20 */
    uint32_t b0 = blk(&c, 0x10), b1 = blk(&c, 0x14), b2 = blk(&c, 0x16), b3 = blk(&c, 0x1d);
    CHECK_EQ_U64(c.blocks[b0].nsucc, 1);
    CHECK_EQ_U64(c.edges[c.blocks[b0].first_succ].kind, PK_CFG_FALL);
    CHECK(c.blocks[b1].flags & PK_CFG_EXIT);
    CHECK_EQ_U64(c.blocks[b1].nsucc, 1);
    CHECK_EQ_U64(c.blocks[b2].nsucc, 0);
    CHECK(c.blocks[b2].flags & PK_CFG_STOP);
    CHECK(c.blocks[b3].flags & PK_CFG_EXIT);
    CHECK_EQ_U64(c.blocks[b3].nsucc, 0);
    CHECK_EQ_U64(c.blocks[b3].ninsns, 2);
    CHECK_EQ_U64(c.blocks[b3].last, 0x1e);
    CHECK_EQ_U64(c.blocks[b3].end, 0x20);
    CHECK_EQ_U64(pk_cfg_block_at(&c, 0x1f), b3);
    CHECK_EQ_U64(pk_cfg_block_at(&c, 0x21), UINT32_MAX);
    CHECK_EQ_U64(pk_cfg_block_at(&c, 0x0f), UINT32_MAX);
    pk_cfg_free(&c);
    /* two ranges (a .cold part): no fall-through across the gap; an entry
     * that is not the first instruction */
    pk_insn r[] = {OTH(0x10, 2), CJ(0x12, 0x100), RET(0x14), OTH(0x100, 2), JM(0x102, 0x14)};
    CHECK_OK(pk_cfg_build(&c, r, N(r), 0x12, NULL, &err), &err);
    CHECK_EQ_U64(c.nblocks, 4);
    CHECK_EQ_U64(c.entry_block, 1);
    CHECK(edge_of(&c, 0x12, 0x100) != UINT32_MAX);
    CHECK(edge_of(&c, 0x100, 0x14) != UINT32_MAX);
    CHECK(edge_of(&c, 0x14, 0x100) == UINT32_MAX);
    pk_cfg_free(&c);
    /* errors: unsorted, entry not an instruction */
    pk_insn u[] = {OTH(0x10, 4), OTH(0x12, 2)};
    CHECK(pk_cfg_build(&c, u, 2, 0x10, NULL, &err) != 0);
    CHECK(pk_cfg_build(&c, r, N(r), 0x11, NULL, &err) != 0);
    CHECK(strstr(err.msg, "0x11") != NULL);
    pk_cfg_free(&c);
}

TEST(block_weights)
{
    pk_insn in[] = {OTH(0x10, 2), OTH(0x12, 2), CJ(0x14, 0x1a), OTH(0x16, 2), OTH(0x18, 2), RET(0x1a)};
    pk_cfg c;
    pk_err err;
    CHECK_OK(pk_cfg_build(&c, in, N(in), 0x10, NULL, &err), &err);
    CHECK_EQ_U64(c.nblocks, 3);
    uint64_t addrs[] = {0x10, 0x12, 0x14, 0x12, 0x17, 0x30, 0x1a};
    uint64_t hits[] = {3, 2, 4, 1, 1, 9, 0};
    int64_t w[3];
    /* block 0: (3+2+4+1)*4/3 = 13.33 → 13; block 1: 0x17 is inside, not on a
     * boundary: counts, (1*4)/2 = 2; block 2: hit 0 → known zero; 0x30 ignored */
    CHECK_EQ_U64(pk_flow_block_weights(&c, addrs, hits, 7, 4, w), 1);
    CHECK_EQ_U64(w[0], 13);
    CHECK_EQ_U64(w[1], 2);
    CHECK_EQ_U64(w[2], 0);
    uint64_t one[] = {0x10}, h1[] = {1};
    CHECK_EQ_U64(pk_flow_block_weights(&c, one, h1, 1, 1, w), 0);
    CHECK_EQ_U64(w[0], 1);   /* 1/3 rounds to 0, raised to 1: a block with a hit ran */
    CHECK_EQ_U64(w[1], 0);
    pk_cfg_free(&c);
}

TEST(flow_options_and_errors)
{
    pk_insn in[] = {OTH(0x10, 2), CJ(0x12, 0x1a), OTH(0x14, 4), JM(0x18, 0x1c), OTH(0x1a, 2), RET(0x1c)};
    pk_cfg c;
    pk_err err;
    CHECK_OK(pk_cfg_build(&c, in, N(in), 0x10, NULL, &err), &err);
    uint64_t bc[4], ec[4];
    pk_flow_opts o;
    pk_flow_defaults(&o);
    int64_t bad[] = {1, -2, 0, 0};
    CHECK(pk_flow_infer(&c, bad, PK_FLOW_UNKNOWN, &o, bc, ec, &err) != 0);
    int64_t big[] = {1, PK_FLOW_MAX + 1, 0, 0};
    CHECK(pk_flow_infer(&c, big, PK_FLOW_UNKNOWN, &o, bc, ec, &err) != 0);
    int64_t ok[] = {1, 1, 0, 1};
    CHECK(pk_flow_infer(&c, ok, -3, &o, bc, ec, &err) != 0);
    o.cost_dec = -1;
    CHECK(pk_flow_infer(&c, ok, PK_FLOW_UNKNOWN, &o, bc, ec, &err) != 0);
    CHECK(strstr(err.msg, "cost") != NULL);
    pk_flow_defaults(&o);
    /* no samples at all: all zero */
    int64_t z[] = {0, 0, PK_FLOW_UNKNOWN, 0};
    CHECK_OK(pk_flow_infer(&c, z, PK_FLOW_UNKNOWN, &o, bc, ec, &err), &err);
    CHECK_EQ_U64(bc[0] + bc[1] + bc[2] + bc[3], 0);
    /* a known entry count: the flow goes through the unknown block, free to raise */
    int64_t k[] = {12, 0, PK_FLOW_UNKNOWN, 12};
    CHECK_OK(pk_flow_infer(&c, k, 12, &o, bc, ec, &err), &err);
    CHECK_EQ_U64(bc[0], 12);
    CHECK_EQ_U64(bc[1], 0);
    CHECK_EQ_U64(bc[2], 12);
    CHECK_EQ_U64(bc[3], 12);
    CHECK_EQ_U64(conservation_errors(&c, bc, ec), 0);
    /* callers say 12, the body says 0: consistent, whichever wins */
    CHECK_OK(pk_flow_infer(&c, z, 12, &o, bc, ec, &err), &err);
    CHECK_EQ_U64(conservation_errors(&c, bc, ec), 0);
    CHECK(bc[0] >= 1 && bc[0] <= 12);
    /* inconsistent weights: the result is consistent, the entry kept */
    int64_t w[] = {100, 90, 40, 60};
    CHECK_OK(pk_flow_infer(&c, w, PK_FLOW_UNKNOWN, &o, bc, ec, &err), &err);
    CHECK_EQ_U64(conservation_errors(&c, bc, ec), 0);
    CHECK_EQ_U64(bc[0], bc[3]);
    /* the other methods run and fill every count */
    o.method = PK_FLOW_PROPAGATE;
    int64_t ex[] = {100, 70, 30, 100};
    CHECK_OK(pk_flow_infer(&c, ex, PK_FLOW_UNKNOWN, &o, bc, ec, &err), &err);
    CHECK_EQ_U64(bc[0], 100);
    CHECK_EQ_U64(bc[1], 70);
    CHECK_EQ_U64(ec[edge_of(&c, 0x10, 0x14)], 70);
    CHECK_EQ_U64(ec[edge_of(&c, 0x10, 0x1a)], 30);
    o.method = PK_FLOW_NONE;
    CHECK_OK(pk_flow_infer(&c, ex, PK_FLOW_UNKNOWN, &o, bc, ec, &err), &err);
    CHECK_EQ_U64(bc[1], 70);
    CHECK_EQ_U64(ec[edge_of(&c, 0x10, 0x14)], 70);
    o.method = 7;
    CHECK(pk_flow_infer(&c, ex, PK_FLOW_UNKNOWN, &o, bc, ec, &err) != 0);
    pk_cfg_free(&c);
}

TEST(unknown_subgraph_rebalanced)
{
    /* A diamond of unknown blocks under a known hot block: rebalancing
     * splits 50/50, without it the solver may send everything one way. */
    pk_insn in[] = {OTH(0x10, 2), CJ(0x12, 0x1a), OTH(0x14, 4), JM(0x18, 0x1c), OTH(0x1a, 2), RET(0x1c)};
    pk_cfg c;
    pk_err err;
    CHECK_OK(pk_cfg_build(&c, in, N(in), 0x10, NULL, &err), &err);
    int64_t w[] = {100, PK_FLOW_UNKNOWN, PK_FLOW_UNKNOWN, 100};
    uint64_t bc[4], ec[4];
    pk_flow_opts o;
    pk_flow_defaults(&o);
    CHECK_OK(pk_flow_infer(&c, w, PK_FLOW_UNKNOWN, &o, bc, ec, &err), &err);
    CHECK_EQ_U64(bc[1], 50);
    CHECK_EQ_U64(bc[2], 50);
    CHECK_EQ_U64(conservation_errors(&c, bc, ec), 0);
    pk_cfg_free(&c);
}

TEST(even_distribution)
{
    /* Both sides of the diamond were measured as zero but 100 units must
     * pass: the two paths cost the same. Even distribution splits them
     * 50/50; without it one side takes everything. */
    pk_insn in[] = {OTH(0x10, 2), CJ(0x12, 0x1a), OTH(0x14, 4), JM(0x18, 0x1c), OTH(0x1a, 2), RET(0x1c)};
    pk_cfg c;
    pk_err err;
    CHECK_OK(pk_cfg_build(&c, in, N(in), 0x10, NULL, &err), &err);
    int64_t w[] = {100, 0, 0, 100};
    uint64_t bc[4], ec[4], bc2[4], ec2[4];
    pk_flow_opts o;
    pk_flow_defaults(&o);
    CHECK_OK(pk_flow_infer(&c, w, PK_FLOW_UNKNOWN, &o, bc, ec, &err), &err);
    CHECK_EQ_U64(bc[1], 50);
    CHECK_EQ_U64(bc[2], 50);
    CHECK_EQ_U64(conservation_errors(&c, bc, ec), 0);
    /* deterministic */
    CHECK_OK(pk_flow_infer(&c, w, PK_FLOW_UNKNOWN, &o, bc2, ec2, &err), &err);
    CHECK(!memcmp(bc, bc2, sizeof bc) && !memcmp(ec, ec2, sizeof ec));
    o.even_distribution = false;
    CHECK_OK(pk_flow_infer(&c, w, PK_FLOW_UNKNOWN, &o, bc, ec, &err), &err);
    CHECK(bc[1] + bc[2] == 100 && (bc[1] == 0 || bc[2] == 0));
    CHECK_EQ_U64(conservation_errors(&c, bc, ec), 0);
    pk_cfg_free(&c);
}

TEST(island_joined)
{
    /* The loop body and header carry samples but the entry edge into the
     * loop none: min-cost flow alone may circulate inside the loop without
     * entering it; join-islands connects it through the entry. */
    pk_insn in[] = {OTH(0x10, 2), CJ(0x12, 0x20), OTH(0x14, 2), CJ(0x16, 0x20), OTH(0x18, 4), JM(0x1c, 0x14),
                    OTH(0x1e, 2), RET(0x20)};
    pk_cfg c;
    pk_err err;
    CHECK_OK(pk_cfg_build(&c, in, N(in), 0x10, NULL, &err), &err);
    int64_t w[8] = {0};
    w[blk(&c, 0x10)] = 50;
    w[blk(&c, 0x14)] = 1000;
    w[blk(&c, 0x18)] = 1000;
    w[blk(&c, 0x20)] = 50;
    uint64_t *bc = calloc(c.nblocks, 8), *ec = calloc(c.nedges, 8);
    pk_flow_opts o;
    pk_flow_defaults(&o);
    CHECK_OK(pk_flow_infer(&c, w, PK_FLOW_UNKNOWN, &o, bc, ec, &err), &err);
    CHECK_EQ_U64(conservation_errors(&c, bc, ec), 0);
    CHECK(ec[edge_of(&c, 0x10, 0x14)] >= 1);   /* the loop is entered */
    CHECK(bc[blk(&c, 0x14)] >= 1000);
    free(bc);
    free(ec);
    pk_cfg_free(&c);
}

int main(void) { return pk_test_main(); }
