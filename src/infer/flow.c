/* flow.c — pk_flow_infer: the profi network over a pk_cfg, its read-out,
 * the naive method, and block weights from IP hits. */
#include "infer/infer_int.h"

#include <math.h>

void pk_flow_defaults(pk_flow_opts *o)
{
    memset(o, 0, sizeof *o);
    o->method = PK_FLOW_MCF;
    o->cost_inc = 10;
    o->cost_dec = 20;
    o->cost_inc_entry = 40;
    o->cost_dec_entry = 10;
    o->cost_inc_zero = 11;
    o->cost_inc_unknown = 0;
    o->even_distribution = true;
    o->join_islands = true;
    o->rebalance_unknown = true;
    o->max_iterations = 100;
}

size_t pk_flow_block_weights(const pk_cfg *cfg, const uint64_t *addrs, const uint64_t *hits, size_t nhits,
                             uint32_t scale, int64_t *weight)
{
    size_t ignored = 0;
    /* Sums first (in weight, as unsigned), means after. */
    uint64_t *sum = (uint64_t *)weight;
    memset(sum, 0, cfg->nblocks * sizeof *sum);
    for (size_t i = 0; i < nhits; i++) {
        uint32_t b = pk_cfg_block_at(cfg, addrs[i]);
        if (b == UINT32_MAX)
            ignored++;
        else
            sum[b] += hits[i];
    }
    for (size_t b = 0; b < cfg->nblocks; b++) {
        uint64_t s = sum[b], k = cfg->blocks[b].ninsns;
        if (s == 0 || k == 0) {
            weight[b] = 0;
            continue;
        }
        unsigned __int128 w = ((unsigned __int128)s * scale + k / 2) / k;
        if (w > (unsigned __int128)PK_FLOW_MAX)
            w = PK_FLOW_MAX;   /* far beyond any real count */
        weight[b] = w ? (int64_t)w : 1;
    }
    return ignored;
}

void pk_flow_shrink_weights(int64_t *weight, size_t nblocks, uint64_t nhits, const double *shape, double prior)
{
    double own = 0, all = 0;
    for (size_t b = 0; b < nblocks; b++) {
        own += (double)weight[b];
        all += shape[b];
    }
    if (own <= 0 || all <= 0 || prior <= 0)
        return;
    double lambda = prior / ((double)nhits + prior);
    for (size_t b = 0; b < nblocks; b++) {
        double v = (1 - lambda) * (double)weight[b] + lambda * own * shape[b] / all;
        int64_t w = v >= (double)PK_FLOW_MAX ? PK_FLOW_MAX : (int64_t)(v + 0.5);
        if (w == 0 && weight[b] > 0)
            w = 1; /* a block with a hit of its own ran */
        weight[b] = w;
    }
}

/* NONE: counts are the weights; each block's count is split over its
 * out-edges in proportion to the targets' weights (evenly when all are 0). */
static void flow_none(const pk_cfg *cfg, const int64_t *weight, uint64_t *bc, uint64_t *ec)
{
    for (size_t b = 0; b < cfg->nblocks; b++)
        bc[b] = weight[b] > 0 ? (uint64_t)weight[b] : 0;
    for (size_t b = 0; b < cfg->nblocks; b++) {
        const pk_cfg_block *bl = &cfg->blocks[b];
        unsigned __int128 tot = 0;
        for (uint32_t i = 0; i < bl->nsucc; i++)
            tot += bc[cfg->edges[bl->first_succ + i].to];
        uint64_t left = bc[b];
        for (uint32_t i = 0; i < bl->nsucc; i++) {
            uint32_t e = bl->first_succ + i;
            uint64_t share = tot ? (uint64_t)((unsigned __int128)bc[b] * bc[cfg->edges[e].to] / tot)
                                 : bc[b] / bl->nsucc;
            if (i + 1 == bl->nsucc)
                share = left;   /* the rounding remainder */
            ec[e] = share;
            left -= share;
        }
    }
}

/* Which blocks the flow may use: reachable from the entry or from a
 * secondary entry (the head of an unreached region holding samples), and
 * which of them may end the flow: exits, plus blocks that reach no exit. */
static int select_blocks(pk_flow_fn *f)
{
    const pk_cfg *cfg = f->cfg;
    size_t nb = cfg->nblocks;
    uint8_t *mark = calloc(nb, 1), *region = calloc(nb, 1), *coreach = calloc(nb, 1);
    uint32_t *stack = malloc(nb * sizeof *stack), *heads = malloc(nb * sizeof *heads);
    int rc = -1;
    if (!mark || !region || !coreach || !stack || !heads)
        goto out;
    pk_cfg_reach(cfg, cfg->entry_block, f->kept, stack, 0);
    f->entry[cfg->entry_block] = 1;
    memcpy(mark, f->kept, nb);
    size_t nh = pk_cfg_region_heads(cfg, f->preds, mark, stack, 0, heads);
    for (size_t k = 0; k < nh; k++) {
        /* the head's region: what it reaches that is not kept yet */
        memcpy(region, f->kept, nb);
        pk_cfg_reach(cfg, heads[k], region, stack, 0);
        bool samples = false;
        for (size_t b = 0; b < nb && !samples; b++)
            samples = region[b] && !f->kept[b] && f->weight[b] > 0;
        if (samples) {
            f->entry[heads[k]] = 1;
            memcpy(f->kept, region, nb);
        }
    }
    /* backwards from the exits */
    size_t sp = 0;
    for (uint32_t b = 0; b < nb; b++)
        if (f->kept[b] && (cfg->blocks[b].flags & PK_CFG_EXIT)) {
            f->exit[b] = coreach[b] = 1;
            stack[sp++] = b;
        }
    while (sp) {
        uint32_t b = stack[--sp];
        for (uint32_t i = f->preds->pred_first[b]; i < f->preds->pred_first[b + 1]; i++) {
            uint32_t p = cfg->edges[f->preds->pred_edge[i]].from;
            if (f->kept[p] && !coreach[p]) {
                coreach[p] = 1;
                stack[sp++] = p;
            }
        }
    }
    for (size_t b = 0; b < nb; b++)
        if (f->kept[b] && !coreach[b])
            f->exit[b] = 1;
    rc = 0;
out:
    free(mark);
    free(region);
    free(coreach);
    free(stack);
    free(heads);
    return rc;
}

/* pk_mcf_add that remembers a failure (OOM) instead of stopping. */
static uint32_t add(pk_mcf *g, uint32_t from, uint32_t to, int64_t cap, int64_t cost, bool *fail)
{
    uint32_t id = pk_mcf_add(g, from, to, cap, cost);
    *fail |= id == UINT32_MAX;
    return id;
}

static bool edge_kept(const pk_flow_fn *f, const pk_cfg_edge *e)
{
    return f->kept[e->from] && f->kept[e->to];
}

/* The multiplier of a block's costs under PK_FLOW_COSTS_POISSON: 4 for a
 * one-instruction block of one hit, so that integer costs keep some
 * precision below it. */
static double cost_factor(const pk_flow_opts *o, uint32_t ninsns, int64_t weight)
{
    double k = ninsns ? ninsns : 1;
    double hits = o->weight_scale ? (double)weight / o->weight_scale : 1;
    return 4 * sqrt(k / (hits > 0.5 ? hits : 0.5));
}

#define CONVEX_SLOPE 4.0   /* the dearer slope, times the first */

static int64_t scaled_cost(int64_t cost, double m)
{
    double c = (double)cost * m;
    if (cost == 0)
        return 0;
    return c < 1 ? 1 : c > (double)PK_FLOW_MAX_COST ? PK_FLOW_MAX_COST : (int64_t)(c + 0.5);
}

/* profi's network (research note §3.1): nodes 2b (in) and 2b+1 (out) per
 * block, then S, T, S1, T1. Reads the counts into f->bflow / f->eflow. */
static int run_mcf(pk_flow_fn *f, int64_t entry_count, const pk_flow_opts *o)
{
    const pk_cfg *cfg = f->cfg;
    uint32_t nb = (uint32_t)cfg->nblocks, S = 2 * nb, T = S + 1, S1 = S + 2, T1 = S + 3;
    pk_mcf *g = pk_mcf_new(2 * nb + 4);
    uint32_t *inc = malloc(nb * sizeof *inc), *dec = malloc(nb * sizeof *dec);
    uint32_t *inc2 = malloc(nb * sizeof *inc2), *dec2 = malloc(nb * sizeof *dec2);
    uint32_t *eid = malloc((cfg->nedges ? cfg->nedges : 1) * sizeof *eid), *sid = malloc(nb * sizeof *sid);
    int rc = -1;
    if (!g || !inc || !dec || !inc2 || !dec2 || !eid || !sid)
        goto out;
    bool known_entry = entry_count >= 0;
    bool fail = false;
    for (uint32_t b = 0; b < nb; b++) {
        inc[b] = dec[b] = inc2[b] = dec2[b] = sid[b] = UINT32_MAX;
        if (!f->kept[b])
            continue;
        uint32_t bin = 2 * b, bout = bin + 1;
        int64_t w = f->weight[b];
        bool is_entry = b == cfg->entry_block;
        if (f->entry[b]) {
            if (is_entry && known_entry) {
                sid[b] = add(g, S, bin, PK_MCF_INF, o->cost_inc_entry, &fail);
                if (entry_count > 0) {
                    add(g, bin, S, entry_count, o->cost_dec_entry, &fail);
                    add(g, S1, bin, entry_count, 0, &fail);
                    add(g, S, T1, entry_count, 0, &fail);
                }
            } else {
                sid[b] = add(g, S, bin, PK_MCF_INF, 0, &fail);
            }
        }
        if (f->exit[b])
            add(g, bout, T, PK_MCF_INF, 0, &fail);
        int64_t ci, cd;
        if (w < 0) {
            ci = o->cost_inc_unknown;
            cd = 0;
        } else if (is_entry && !known_entry) {
            ci = o->cost_inc_entry;
            cd = o->cost_dec_entry;
        } else {
            ci = w == 0 ? o->cost_inc_zero : o->cost_inc;
            cd = o->cost_dec;
        }
        if (o->cost_model != PK_FLOW_COSTS_FLAT && w >= 0) {
            double m = cost_factor(o, cfg->blocks[b].ninsns, w);
            ci = scaled_cost(ci, m);
            cd = scaled_cost(cd, m);
        }
        if (o->convex_costs && w > 0) {
            /* two slopes each way: the first half of the weight (up or
             * down) at the block's cost, the rest dearer, so that a
             * correction the flow must make is shared out over many blocks
             * instead of zeroing a few (linear costs put it all on the
             * cheapest) */
            int64_t half = w / 2 > 0 ? w / 2 : 1;
            inc[b] = add(g, bin, bout, half, ci, &fail);
            inc2[b] = add(g, bin, bout, PK_MCF_INF, scaled_cost(ci, CONVEX_SLOPE), &fail);
            dec[b] = add(g, bout, bin, half, cd, &fail);
            if (w > half)
                dec2[b] = add(g, bout, bin, w - half, scaled_cost(cd, CONVEX_SLOPE), &fail);
        } else {
            inc[b] = add(g, bin, bout, PK_MCF_INF, ci, &fail);
            if (w > 0)
                dec[b] = add(g, bout, bin, w, cd, &fail);
        }
        if (w > 0) {
            add(g, S1, bout, w, 0, &fail);
            add(g, bin, T1, w, 0, &fail);
        }
    }
    for (size_t e = 0; e < cfg->nedges; e++) {
        const pk_cfg_edge *ed = &cfg->edges[e];
        eid[e] = edge_kept(f, ed) ? add(g, 2 * ed->from + 1, 2 * ed->to, PK_MCF_INF, 0, &fail) : UINT32_MAX;
    }
    add(g, T, S, PK_MCF_INF, 0, &fail);
    if (fail || pk_mcf_solve(g, S1, T1, o->even_distribution) != 0)
        goto out;
    for (uint32_t b = 0; b < nb; b++) {
        if (!f->kept[b])
            continue;
        int64_t w = f->weight[b] > 0 ? f->weight[b] : 0;
        f->bflow[b] = w + pk_mcf_flow(g, inc[b]) - (dec[b] != UINT32_MAX ? pk_mcf_flow(g, dec[b]) : 0) +
                      (inc2[b] != UINT32_MAX ? pk_mcf_flow(g, inc2[b]) : 0) -
                      (dec2[b] != UINT32_MAX ? pk_mcf_flow(g, dec2[b]) : 0);
        if (sid[b] != UINT32_MAX)
            f->entry_flow[b] = pk_mcf_flow(g, sid[b]);
    }
    /* With a known entry count, the S→entry gadget carries part of the
     * entry flow on its own edges: entry flow = in-flow − in-edges. */
    for (size_t e = 0; e < cfg->nedges; e++)
        f->eflow[e] = eid[e] != UINT32_MAX ? pk_mcf_flow(g, eid[e]) : 0;
    if (known_entry && f->kept[cfg->entry_block]) {
        uint32_t b = cfg->entry_block;
        int64_t in = 0;
        for (uint32_t i = f->preds->pred_first[b]; i < f->preds->pred_first[b + 1]; i++)
            in += f->eflow[f->preds->pred_edge[i]];
        f->entry_flow[b] = f->bflow[b] - in;
    }
    rc = 0;
out:
    pk_mcf_free(g);
    free(inc);
    free(inc2);
    free(dec2);
    free(dec);
    free(eid);
    free(sid);
    return rc;
}

int pk_flow_infer(const pk_cfg *cfg, const int64_t *weight, int64_t entry_count, const pk_flow_opts *o,
                  uint64_t *block_count, uint64_t *edge_count, pk_err *err)
{
    size_t nb = cfg->nblocks, ne = cfg->nedges;
    pk_flow_opts def;
    if (!o) {
        pk_flow_defaults(&def);
        o = &def;
    }
    for (size_t b = 0; b < nb; b++)
        if (weight[b] < PK_FLOW_UNKNOWN || weight[b] > PK_FLOW_MAX)
            return pk_err_set(err, "flow: block %zu at 0x%llx has weight %lld (-1 .. 2^40 allowed)", b,
                              (unsigned long long)cfg->blocks[b].begin, (long long)weight[b]);
    if (entry_count < PK_FLOW_UNKNOWN || entry_count > PK_FLOW_MAX)
        return pk_err_set(err, "flow: entry count %lld (-1 .. 2^40 allowed)", (long long)entry_count);
    const int64_t costs[] = {o->cost_inc, o->cost_dec, o->cost_inc_entry, o->cost_dec_entry, o->cost_inc_zero,
                             o->cost_inc_unknown};
    for (size_t i = 0; i < sizeof costs / sizeof *costs; i++)
        if (costs[i] < 0 || costs[i] > PK_FLOW_MAX_COST)
            return pk_err_set(err, "flow: cost %lld out of range (0 .. 2^24)", (long long)costs[i]);
    memset(block_count, 0, nb * sizeof *block_count);
    memset(edge_count, 0, ne * sizeof *edge_count);
    if (nb == 0)
        return 0;
    if (o->method == PK_FLOW_NONE) {
        flow_none(cfg, weight, block_count, edge_count);
        return 0;
    }
    if (o->method == PK_FLOW_PROPAGATE)
        return pk_flow_propagate(cfg, weight, entry_count, o, block_count, edge_count, err);
    if (o->method != PK_FLOW_MCF)
        return pk_err_set(err, "flow: unknown method %d", o->method);

    bool samples = entry_count > 0;
    for (size_t b = 0; b < nb && !samples; b++)
        samples = weight[b] > 0;
    if (!samples)
        return 0;   /* nothing ran, as far as we know */

    pk_cfg_preds preds = {0};
    pk_flow_fn f = {.cfg = cfg, .preds = &preds};
    int64_t *w = malloc(nb * sizeof *w);
    f.kept = calloc(nb, 1);
    f.entry = calloc(nb, 1);
    f.exit = calloc(nb, 1);
    f.bflow = calloc(nb, sizeof *f.bflow);
    f.entry_flow = calloc(nb, sizeof *f.entry_flow);
    f.eflow = calloc(ne ? ne : 1, sizeof *f.eflow);
    int rc = -1;
    if (!w || !f.kept || !f.entry || !f.exit || !f.bflow || !f.entry_flow || !f.eflow ||
        pk_cfg_preds_build(cfg, &preds) != 0)
        goto out;
    memcpy(w, weight, nb * sizeof *w);
    if (w[cfg->entry_block] == 0)
        w[cfg->entry_block] = 1;   /* it ran: the function has samples */
    f.weight = w;
    if (select_blocks(&f) != 0 || run_mcf(&f, entry_count, o) != 0)
        goto out;
    if (o->join_islands)
        pk_flow_join_islands(&f);
    if (o->rebalance_unknown)
        pk_flow_rebalance_unknown(&f);
    for (size_t b = 0; b < nb; b++)
        block_count[b] = f.bflow[b] > 0 ? (uint64_t)f.bflow[b] : 0;
    for (size_t e = 0; e < ne; e++)
        edge_count[e] = f.eflow[e] > 0 ? (uint64_t)f.eflow[e] : 0;
    rc = 0;
out:
    if (rc != 0)
        pk_err_set(err, "flow: out of memory");
    pk_cfg_preds_free(&preds);
    free(w);
    free(f.kept);
    free(f.entry);
    free(f.exit);
    free(f.bflow);
    free(f.entry_flow);
    free(f.eflow);
    return rc;
}
