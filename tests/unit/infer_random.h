/* infer_random.h — random functions with a known circulation for the
 * flow-inference tests and the benchmark: a generated instruction list
 * (loops through backward conditional branches, forward jumps, calls,
 * early returns), its CFG, and the exact counts of random walks over it;
 * then IP sampling simulated by binomial thinning of every instruction's
 * executions. Deterministic for a seed. Header-only (static). */
#ifndef PK_TEST_INFER_RANDOM_H
#define PK_TEST_INFER_RANDOM_H

#include "infer/infer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct rng { uint64_t s; } rng;

static inline uint64_t rng_next(rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
static inline uint32_t rng_below(rng *r, uint32_t n) { return (uint32_t)(rng_next(r) % n); }
static inline double rng_unit(rng *r) { return (double)(rng_next(r) >> 11) / 9007199254740992.0; }

/* Binomial(n, p): exact for small n, normal approximation beyond. */
static inline uint64_t rng_binomial(rng *r, uint64_t n, double p)
{
    if (n <= 64) {
        uint64_t k = 0;
        for (uint64_t i = 0; i < n; i++)
            k += rng_unit(r) < p;
        return k;
    }
    double u1 = rng_unit(r), u2 = rng_unit(r);
    double z = sqrt(-2.0 * log(u1 > 1e-300 ? u1 : 1e-300)) * cos(6.283185307179586 * u2);
    double x = (double)n * p + z * sqrt((double)n * p * (1 - p));
    x = floor(x + 0.5);
    return x < 0 ? 0 : x > (double)n ? n : (uint64_t)x;
}

/* nblocks blocks of 1-5 instructions; the last returns, and about
 * early_ret % of the others too. */
static inline pk_insn *random_function(rng *r, size_t nblocks, uint32_t early_ret, size_t *ninsns)
{
    uint32_t *len = malloc(nblocks * sizeof *len);
    uint64_t *start = malloc((nblocks + 1) * sizeof *start);
    uint8_t *term = malloc(nblocks);
    uint32_t *tgt = malloc(nblocks * sizeof *tgt);
    size_t cap = nblocks * 6, n = 0;
    pk_insn *v = malloc(cap * sizeof *v);
    uint64_t a = 0x401000;
    for (size_t b = 0; b < nblocks; b++) {
        len[b] = 1 + rng_below(r, 5);   /* instructions before the terminator */
        uint32_t x = rng_below(r, 100);
        term[b] = b + 1 == nblocks ? PK_INSN_RET
                  : x < 20         ? PK_INSN_OTHER
                  : x < 60         ? PK_INSN_CJMP
                  : x < 72         ? PK_INSN_JMP
                  : x < 100 - early_ret ? PK_INSN_CALL
                                   : PK_INSN_RET;
        if (term[b] == PK_INSN_CJMP && rng_below(r, 100) < 35) {
            uint32_t back = 1 + rng_below(r, 8);
            tgt[b] = b >= back ? (uint32_t)(b - back) : 0;      /* a loop */
        } else {
            uint32_t fwd = 1 + rng_below(r, 16);
            tgt[b] = b + fwd < nblocks ? (uint32_t)(b + fwd) : (uint32_t)nblocks - 1;
        }
        start[b] = a;
        for (uint32_t i = 0; i < len[b]; i++)
            a += 1 + (i % 4);
        a += term[b] == PK_INSN_OTHER ? 0 : term[b] == PK_INSN_CALL ? 5 : term[b] == PK_INSN_RET ? 1 : 2;
    }
    start[nblocks] = a;
    for (size_t b = 0; b < nblocks; b++) {
        uint64_t p = start[b];
        for (uint32_t i = 0; i < len[b]; i++) {
            v[n++] = (pk_insn){.addr = p, .len = (uint8_t)(1 + i % 4), .cls = PK_INSN_OTHER};
            p += 1 + i % 4;
        }
        if (term[b] == PK_INSN_CJMP || term[b] == PK_INSN_JMP)
            v[n++] = (pk_insn){.addr = p, .len = 2, .cls = term[b], .target = start[tgt[b]]};
        else if (term[b] == PK_INSN_CALL)
            v[n++] = (pk_insn){.addr = p, .len = 5, .cls = PK_INSN_CALL, .target = 0x900000};
        else if (term[b] == PK_INSN_RET)
            v[n++] = (pk_insn){.addr = p, .len = 1, .cls = PK_INSN_RET};
    }
    free(len);
    free(start);
    free(term);
    free(tgt);
    *ninsns = n;
    return v;
}

/* Exact counts of `walks` runs from the entry: at each block an out-edge
 * (or leaving, at an exit) is picked with fixed random odds per block;
 * backward edges are taken with odds 1:1 to 4:1 so loops end. A walk
 * longer than max_steps is dropped (not counted). */
static inline void random_walks(rng *r, const pk_cfg *c, size_t walks, size_t max_steps, uint64_t *bc, uint64_t *ec)
{
    size_t nb = c->nblocks, ne = c->nedges;
    uint32_t *odds = malloc((ne + nb) * sizeof *odds), *path = malloc(max_steps * sizeof *path);
    uint32_t *pe = malloc(max_steps * sizeof *pe);
    for (size_t e = 0; e < ne; e++) {
        const pk_cfg_edge *ed = &c->edges[e];
        bool back = c->blocks[ed->to].begin <= c->blocks[ed->from].begin;
        odds[e] = back ? 1 + rng_below(r, 4) : 1 + rng_below(r, 8);
    }
    for (size_t b = 0; b < nb; b++)
        odds[ne + b] = (c->blocks[b].flags & PK_CFG_EXIT) ? (c->blocks[b].nsucc ? 1 + rng_below(r, 4) : 1) : 0;
    memset(bc, 0, nb * sizeof *bc);
    memset(ec, 0, ne * sizeof *ec);
    for (size_t w = 0; w < walks; w++) {
        uint32_t b = c->entry_block;
        size_t steps = 0;
        bool ok = false;
        while (steps < max_steps) {
            const pk_cfg_block *bl = &c->blocks[b];
            uint32_t tot = odds[ne + b];
            for (uint32_t i = 0; i < bl->nsucc; i++)
                tot += odds[bl->first_succ + i];
            path[steps] = b;
            uint32_t x = tot ? rng_below(r, tot) : 0, e = UINT32_MAX;
            for (uint32_t i = 0; i < bl->nsucc; i++) {
                if (x < odds[bl->first_succ + i]) {
                    e = bl->first_succ + i;
                    break;
                }
                x -= odds[bl->first_succ + i];
            }
            pe[steps++] = e;
            if (e == UINT32_MAX) {
                ok = true;   /* left the function */
                break;
            }
            b = c->edges[e].to;
        }
        if (!ok)
            continue;
        for (size_t s = 0; s < steps; s++) {
            bc[path[s]]++;
            if (pe[s] != UINT32_MAX)
                ec[pe[s]]++;
        }
    }
    free(odds);
    free(path);
    free(pe);
}

/* IP hits: every instruction of block b, executed bc[b] times, is sampled
 * with probability rate. Fills addrs/hits (one entry per instruction). */
static inline size_t sample_hits(rng *r, const pk_cfg *c, const pk_insn *insns, size_t n, const uint64_t *bc,
                                 double rate, uint64_t *addrs, uint64_t *hits)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t b = pk_cfg_block_at(c, insns[i].addr);
        addrs[i] = insns[i].addr;
        hits[i] = rng_binomial(r, bc[b], rate);
    }
    return n;
}

#endif
