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

size_t pk_cfg_region_heads(const pk_cfg *cfg, const pk_cfg_preds *p, uint8_t *mark, uint32_t *stack,
                           unsigned skip_kinds, uint32_t *heads)
{
    size_t nh = 0;
    /* Blocks nothing branches to first: they are where such regions start
     * (a case of an unread jump table, a landing pad). */
    for (uint32_t b = 0; b < cfg->nblocks; b++) {
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
    /* What is left is made of cycles only entered from outside: take the
     * first block of each by address. */
    for (uint32_t b = 0; b < cfg->nblocks; b++) {
        if (mark[b])
            continue;
        heads[nh++] = b;
        pk_cfg_reach(cfg, b, mark, stack, skip_kinds);
    }
    return nh;
}
