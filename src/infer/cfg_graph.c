/* cfg_graph.c — predecessor lists, reachability and region heads over a
 * pk_cfg: shared by the CFG builder (targets of unresolved indirect jumps)
 * and by flow inference (secondary entries, reachability filter). */
#include "infer/infer_int.h"

int pk_cfg_preds_build(const pk_cfg *cfg, pk_cfg_preds *p)
{
    size_t nb = cfg->nblocks, ne = cfg->nedges;
    p->pred_first = calloc(nb + 1, sizeof *p->pred_first);
    p->pred_edge = malloc((ne ? ne : 1) * sizeof *p->pred_edge);
    if (!p->pred_first || !p->pred_edge) {
        pk_cfg_preds_free(p);
        return -1;
    }
    for (size_t e = 0; e < ne; e++)
        p->pred_first[cfg->edges[e].to + 1]++;
    for (size_t b = 0; b < nb; b++)
        p->pred_first[b + 1] += p->pred_first[b];
    /* Filled in edge order, so each block's in-edges are sorted by source. */
    uint32_t *pos = malloc((nb ? nb : 1) * sizeof *pos);
    if (!pos) {
        pk_cfg_preds_free(p);
        return -1;
    }
    memcpy(pos, p->pred_first, nb * sizeof *pos);
    for (size_t e = 0; e < ne; e++)
        p->pred_edge[pos[cfg->edges[e].to]++] = (uint32_t)e;
    free(pos);
    return 0;
}

void pk_cfg_preds_free(pk_cfg_preds *p)
{
    free(p->pred_first);
    free(p->pred_edge);
    p->pred_first = p->pred_edge = NULL;
}

void pk_cfg_reach(const pk_cfg *cfg, uint32_t start, uint8_t *mark, uint32_t *stack, unsigned skip_kinds)
{
    if (mark[start])
        return;
    size_t sp = 0;
    mark[start] = 1;
    stack[sp++] = start;
    while (sp) {
        const pk_cfg_block *b = &cfg->blocks[stack[--sp]];
        for (uint32_t i = 0; i < b->nsucc; i++) {
            const pk_cfg_edge *e = &cfg->edges[b->first_succ + i];
            if ((skip_kinds >> e->kind) & 1 || mark[e->to])
                continue;
            mark[e->to] = 1;
            stack[sp++] = e->to;
        }
    }
}

/* Strongly connected components of the unmarked blocks (iterative
 * Tarjan), numbered in comp[]; returns their number. */
static uint32_t unmarked_sccs(const pk_cfg *cfg, const uint8_t *mark, unsigned skip_kinds, uint32_t *comp,
                              uint32_t *index, uint32_t *low, uint32_t *stack, uint32_t *cs, uint32_t *ce)
{
    uint32_t nb = (uint32_t)cfg->nblocks, next = 0, ncomp = 0;
    size_t sp = 0, csp = 0;
    for (uint32_t b = 0; b < nb; b++)
        index[b] = comp[b] = UINT32_MAX;
    for (uint32_t root = 0; root < nb; root++) {
        if (mark[root] || index[root] != UINT32_MAX)
            continue;
        index[root] = low[root] = next++;
        stack[sp++] = root;
        cs[csp] = root;
        ce[csp++] = 0;
        while (csp) {
            uint32_t v = cs[csp - 1];
            const pk_cfg_block *bl = &cfg->blocks[v];
            if (ce[csp - 1] < bl->nsucc) {
                const pk_cfg_edge *e = &cfg->edges[bl->first_succ + ce[csp - 1]++];
                uint32_t w = e->to;
                if (mark[w] || (skip_kinds >> e->kind) & 1)
                    continue;
                if (index[w] == UINT32_MAX) {
                    index[w] = low[w] = next++;
                    stack[sp++] = w;
                    cs[csp] = w;
                    ce[csp++] = 0;
                } else if (comp[w] == UINT32_MAX && index[w] < low[v]) {
                    low[v] = index[w];
                }
                continue;
            }
            csp--;
            if (csp && low[v] < low[cs[csp - 1]])
                low[cs[csp - 1]] = low[v];
            if (low[v] == index[v]) {
                uint32_t w;
                do {
                    w = stack[--sp];
                    comp[w] = ncomp;
                } while (w != v);
                ncomp++;
            }
        }
    }
    return ncomp;
}

size_t pk_cfg_region_heads(const pk_cfg *cfg, const pk_cfg_preds *p, uint8_t *mark, uint32_t *stack,
                           unsigned skip_kinds, uint32_t *heads)
{
    size_t nh = 0, nb = cfg->nblocks;
    /* Blocks nothing branches to first: they are where such regions start
     * (a case of an unread jump table, a landing pad). */
    for (uint32_t b = 0; b < nb; b++) {
        if (mark[b])
            continue;
        bool has_pred = false;
        for (uint32_t i = p->pred_first[b]; i < p->pred_first[b + 1] && !has_pred; i++) {
            const pk_cfg_edge *e = &cfg->edges[p->pred_edge[i]];
            has_pred = e->from != b && !((skip_kinds >> e->kind) & 1);
        }
        if (has_pred)
            continue;
        heads[nh++] = b;
        pk_cfg_reach(cfg, b, mark, stack, skip_kinds);
    }
    /* Every block left has a predecessor that is left too, so it is
     * reached from a cycle entered only from outside: a strongly connected
     * component without in-edges from other components. Its first block by
     * address is the head. */
    bool left = false;
    for (uint32_t b = 0; b < nb && !left; b++)
        left = !mark[b];
    if (!left)
        return nh;
    uint32_t *w = malloc(6 * nb * sizeof *w);
    if (!w) {   /* out of memory: one head per block left, still a cover */
        for (uint32_t b = 0; b < nb; b++)
            if (!mark[b]) {
                heads[nh++] = b;
                pk_cfg_reach(cfg, b, mark, stack, skip_kinds);
            }
        return nh;
    }
    uint32_t *comp = w, *index = w + nb, *low = w + 2 * nb, *cs = w + 3 * nb, *ce = w + 4 * nb, *first = w + 5 * nb;
    uint32_t ncomp = unmarked_sccs(cfg, mark, skip_kinds, comp, index, low, stack, cs, ce);
    uint8_t *entered = (uint8_t *)low;   /* reused: per component */
    memset(entered, 0, ncomp);
    for (uint32_t c = 0; c < ncomp; c++)
        first[c] = UINT32_MAX;
    for (uint32_t b = 0; b < nb; b++) {
        if (mark[b])
            continue;
        if (first[comp[b]] == UINT32_MAX)
            first[comp[b]] = b;
        const pk_cfg_block *bl = &cfg->blocks[b];
        for (uint32_t i = 0; i < bl->nsucc; i++) {
            const pk_cfg_edge *e = &cfg->edges[bl->first_succ + i];
            if (!mark[e->to] && !((skip_kinds >> e->kind) & 1) && comp[e->to] != comp[b])
                entered[comp[e->to]] = 1;
        }
    }
    for (uint32_t b = 0; b < nb; b++)
        if (!mark[b] && !entered[comp[b]] && first[comp[b]] == b)
            heads[nh++] = b;
    for (size_t k = 0; k < nh; k++)
        pk_cfg_reach(cfg, heads[k], mark, stack, skip_kinds);
    free(w);
    return nh;
}
