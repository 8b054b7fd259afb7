/* infer_util.h — helpers shared by the flow-inference unit tests
 * (test_infer*.c): hand-written instruction lists, flow conservation and
 * block overlap. Header-only (static): each test program includes it once. */
#ifndef PK_TEST_INFER_UTIL_H
#define PK_TEST_INFER_UTIL_H

#include "infer/infer.h"
#include "test.h"

#include <stdlib.h>

/* One instruction of a hand-written function: address, length, class,
 * direct target. */
#define I_(a, l, c, t) ((pk_insn){.addr = (a), .len = (l), .cls = (c), .target = (t)})
#define OTH(a, l) I_(a, l, PK_INSN_OTHER, 0)
#define CJ(a, t) I_(a, 2, PK_INSN_CJMP, t)
#define JM(a, t) I_(a, 2, PK_INSN_JMP, t)
#define CALL(a, t) I_(a, 5, PK_INSN_CALL, t)
#define RET(a) I_(a, 1, PK_INSN_RET, 0)
#define IJ(a) I_(a, 2, PK_INSN_IJMP, 0)

static inline uint32_t blk(const pk_cfg *c, uint64_t addr)
{
    return pk_cfg_block_at(c, addr);
}

/* The edge from → to (block start addresses), or UINT32_MAX. */
static inline uint32_t edge_of(const pk_cfg *c, uint64_t from, uint64_t to)
{
    uint32_t f = blk(c, from), t = blk(c, to);
    if (f == UINT32_MAX || t == UINT32_MAX)
        return UINT32_MAX;
    for (uint32_t i = 0; i < c->blocks[f].nsucc; i++)
        if (c->edges[c->blocks[f].first_succ + i].to == t)
            return c->blocks[f].first_succ + i;
    return UINT32_MAX;
}

/* Flow conservation as infer.h states it: in-edges = count except at the
 * entry and in regions the entry does not reach (they may have secondary
 * entries), out-edges = count except at exits; never more than the count
 * on either side. Returns the number of violations (each printed). */
static inline int conservation_errors(const pk_cfg *c, const uint64_t *bc, const uint64_t *ec)
{
    int bad = 0;
    uint64_t *in = calloc(c->nblocks, sizeof *in);
    uint8_t *reached = calloc(c->nblocks, 1);
    uint32_t *stack = malloc(c->nblocks * sizeof *stack), sp = 0;
    for (size_t e = 0; e < c->nedges; e++)
        in[c->edges[e].to] += ec[e];
    reached[c->entry_block] = 1;
    stack[sp++] = c->entry_block;
    while (sp) {
        const pk_cfg_block *bl = &c->blocks[stack[--sp]];
        for (uint32_t i = 0; i < bl->nsucc; i++) {
            uint32_t t = c->edges[bl->first_succ + i].to;
            if (!reached[t]) {
                reached[t] = 1;
                stack[sp++] = t;
            }
        }
    }
    for (uint32_t b = 0; b < c->nblocks; b++) {
        uint64_t out = 0;
        for (uint32_t i = 0; i < c->blocks[b].nsucc; i++)
            out += ec[c->blocks[b].first_succ + i];
        bool entry = b == c->entry_block || !reached[b];
        bool exit = (c->blocks[b].flags & PK_CFG_EXIT) != 0;
        if (in[b] > bc[b] || (!entry && in[b] != bc[b]) || out > bc[b] || (!exit && out != bc[b])) {
            if (bad++ < 5)
                fprintf(stderr, "  block %u @0x%llx: in %llu count %llu out %llu%s%s\n", b,
                        (unsigned long long)c->blocks[b].begin, (unsigned long long)in[b],
                        (unsigned long long)bc[b], (unsigned long long)out, entry ? " entry" : "",
                        exit ? " exit" : "");
        }
    }
    free(in);
    free(reached);
    free(stack);
    return bad;
}

/* Block overlap of two count vectors: Σ min(p_i / P, q_i / Q). */
static inline double overlap_u64(const uint64_t *p, const uint64_t *q, size_t n)
{
    double P = 0, Q = 0, s = 0;
    for (size_t i = 0; i < n; i++) {
        P += (double)p[i];
        Q += (double)q[i];
    }
    if (P == 0 || Q == 0)
        return P == Q ? 1.0 : 0.0;
    for (size_t i = 0; i < n; i++) {
        double a = (double)p[i] / P, b = (double)q[i] / Q;
        s += a < b ? a : b;
    }
    return s;
}

#endif
