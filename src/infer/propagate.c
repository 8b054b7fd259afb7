/* propagate.c — the AutoFDO baseline (research note §3.2): equivalence
 * classes from dominance, post-dominance and loops, then iterative
 * propagation of block weights into edges, in LLVM's three phases
 * (SampleProfileLoaderBaseImpl: propagateWeights / propagateThroughEdges),
 * each bounded by max_iterations. It is here to be measured against: it
 * may stop inconsistent, and its result depends on the visiting order. */
#include "infer/infer_int.h"

typedef struct prop {
    const pk_cfg *cfg;
    const pk_cfg_preds *p;
    size_t nb;
    uint32_t *cls;       /* equivalence class leader of each block */
    int64_t *bw;         /* weight per class leader */
    uint8_t *bvis;       /* class weight known */
    int64_t *ew;         /* per edge */
    uint8_t *evis;       /* edge weight known */
} prop;

/* ---- dominators (Cooper, Harvey, Kennedy) over a graph given by
 * successor / predecessor callbacks, nodes 0..n-1, from root ---- */

typedef struct graph {
    uint32_t n;
    uint32_t *first, *adj;    /* successors (CSR) */
    uint32_t *rfirst, *radj;  /* predecessors (CSR) */
} graph;

static int graph_build(graph *g, uint32_t n, const uint32_t *from, const uint32_t *to, size_t m)
{
    g->n = n;
    g->first = calloc(n + 1, sizeof *g->first);
    g->rfirst = calloc(n + 1, sizeof *g->rfirst);
    g->adj = malloc((m ? m : 1) * sizeof *g->adj);
    g->radj = malloc((m ? m : 1) * sizeof *g->radj);
    uint32_t *pos = malloc((n + 1) * sizeof *pos), *rpos = malloc((n + 1) * sizeof *rpos);
    if (!g->first || !g->rfirst || !g->adj || !g->radj || !pos || !rpos) {
        free(pos);
        free(rpos);
        return -1;
    }
    for (size_t i = 0; i < m; i++) {
        g->first[from[i] + 1]++;
        g->rfirst[to[i] + 1]++;
    }
    for (uint32_t v = 0; v < n; v++) {
        g->first[v + 1] += g->first[v];
        g->rfirst[v + 1] += g->rfirst[v];
    }
    memcpy(pos, g->first, n * sizeof *pos);
    memcpy(rpos, g->rfirst, n * sizeof *rpos);
    for (size_t i = 0; i < m; i++) {
        g->adj[pos[from[i]]++] = to[i];
        g->radj[rpos[to[i]]++] = from[i];
    }
    free(pos);
    free(rpos);
    return 0;
}

static void graph_free(graph *g)
{
    free(g->first);
    free(g->adj);
    free(g->rfirst);
    free(g->radj);
}

/* Immediate dominators (idom[root] = root, UINT32_MAX when unreachable),
 * and pre/post numbers of the dominator tree for O(1) dominance tests. */
typedef struct domtree {
    uint32_t *idom, *pre, *post;
} domtree;

static int dominators(const graph *g, uint32_t root, domtree *d)
{
    uint32_t n = g->n;
    uint32_t *rpo = malloc(n * sizeof *rpo), *num = malloc(n * sizeof *num), *stk = malloc(n * sizeof *stk),
             *it = malloc(n * sizeof *it), *kid_first = calloc(n + 1, sizeof *kid_first),
             *kids = malloc(n * sizeof *kids);
    d->idom = malloc(n * sizeof *d->idom);
    d->pre = malloc(n * sizeof *d->pre);
    d->post = malloc(n * sizeof *d->post);
    int rc = -1;
    if (!rpo || !num || !stk || !it || !kid_first || !kids || !d->idom || !d->pre || !d->post)
        goto out;
    /* reverse post-order */
    for (uint32_t v = 0; v < n; v++) {
        num[v] = UINT32_MAX;
        d->idom[v] = UINT32_MAX;
    }
    uint32_t sp = 0, npo = 0;
    uint8_t *seen = (uint8_t *)d->pre;   /* scratch until the numbering below */
    memset(seen, 0, n);
    stk[sp] = root;
    it[sp++] = g->first[root];
    seen[root] = 1;
    while (sp) {
        uint32_t v = stk[sp - 1];
        if (it[sp - 1] < g->first[v + 1]) {
            uint32_t w = g->adj[it[sp - 1]++];
            if (!seen[w]) {
                seen[w] = 1;
                stk[sp] = w;
                it[sp++] = g->first[w];
            }
        } else {
            rpo[npo++] = v;
            sp--;
        }
    }
    for (uint32_t i = 0; i < npo / 2; i++) {
        uint32_t x = rpo[i];
        rpo[i] = rpo[npo - 1 - i];
        rpo[npo - 1 - i] = x;
    }
    for (uint32_t i = 0; i < npo; i++)
        num[rpo[i]] = i;
    d->idom[root] = root;
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t i = 1; i < npo; i++) {
            uint32_t v = rpo[i], nd = UINT32_MAX;
            for (uint32_t k = g->rfirst[v]; k < g->rfirst[v + 1]; k++) {
                uint32_t p = g->radj[k];
                if (d->idom[p] == UINT32_MAX)
                    continue;
                if (nd == UINT32_MAX) {
                    nd = p;
                    continue;
                }
                uint32_t a = p, b = nd;
                while (a != b) {
                    while (num[a] > num[b])
                        a = d->idom[a];
                    while (num[b] > num[a])
                        b = d->idom[b];
                }
                nd = a;
            }
            if (nd != d->idom[v]) {
                d->idom[v] = nd;
                changed = true;
            }
        }
    }
    /* tree numbering */
    for (uint32_t v = 0; v < n; v++)
        if (d->idom[v] != UINT32_MAX && v != root)
            kid_first[d->idom[v] + 1]++;
    for (uint32_t v = 0; v < n; v++)
        kid_first[v + 1] += kid_first[v];
    memcpy(it, kid_first, n * sizeof *it);
    for (uint32_t v = 0; v < n; v++)
        if (d->idom[v] != UINT32_MAX && v != root)
            kids[it[d->idom[v]]++] = v;
    for (uint32_t v = 0; v < n; v++)
        d->pre[v] = d->post[v] = UINT32_MAX;
    uint32_t clock = 0;
    sp = 0;
    stk[sp] = root;
    it[sp++] = kid_first[root];
    d->pre[root] = clock++;
    while (sp) {
        uint32_t v = stk[sp - 1];
        if (it[sp - 1] < kid_first[v + 1]) {
            uint32_t w = kids[it[sp - 1]++];
            d->pre[w] = clock++;
            stk[sp] = w;
            it[sp++] = kid_first[w];
        } else {
            d->post[v] = clock++;
            sp--;
        }
    }
    rc = 0;
out:
    free(rpo);
    free(num);
    free(stk);
    free(it);
    free(kid_first);
    free(kids);
    return rc;
}

static bool dominates(const domtree *d, uint32_t a, uint32_t b)
{
    return d->pre[a] != UINT32_MAX && d->pre[b] != UINT32_MAX && d->pre[a] <= d->pre[b] && d->post[b] <= d->post[a];
}

static void domtree_free(domtree *d)
{
    free(d->idom);
    free(d->pre);
    free(d->post);
}

/* Innermost natural loop (its header) of every block, UINT32_MAX if none. */
static int loops(const pk_cfg *cfg, const graph *g, const domtree *dom, uint32_t *loop_of)
{
    uint32_t n = (uint32_t)cfg->nblocks;
    uint32_t *size = calloc(n, sizeof *size), *stk = malloc(n * sizeof *stk), *body = malloc(n * sizeof *body);
    uint8_t *in = calloc(n, 1);
    int rc = -1;
    if (!size || !stk || !body || !in)
        goto out;
    for (uint32_t v = 0; v < n; v++)
        loop_of[v] = UINT32_MAX;
    /* Headers in decreasing loop size, so inner loops overwrite outer ones:
     * first measure every header's body, then assign. */
    for (int pass = 0; pass < 2; pass++) {
        uint32_t *hdr = malloc(n * sizeof *hdr), nh = 0;
        if (!hdr)
            goto out;
        for (uint32_t h = 0; h < n; h++) {
            bool header = false;
            for (uint32_t k = g->rfirst[h]; k < g->rfirst[h + 1] && !header; k++)
                header = dominates(dom, h, g->radj[k]);
            if (header)
                hdr[nh++] = h;
        }
        if (pass == 1) {   /* sort headers by decreasing size (insertion: few loops) */
            for (uint32_t i = 1; i < nh; i++)
                for (uint32_t j = i; j > 0 && size[hdr[j]] > size[hdr[j - 1]]; j--) {
                    uint32_t x = hdr[j];
                    hdr[j] = hdr[j - 1];
                    hdr[j - 1] = x;
                }
        }
        for (uint32_t i = 0; i < nh; i++) {
            uint32_t h = hdr[i], sp = 0, nbody = 0;
            memset(in, 0, n);
            in[h] = 1;
            body[nbody++] = h;
            for (uint32_t k = g->rfirst[h]; k < g->rfirst[h + 1]; k++) {
                uint32_t u = g->radj[k];
                if (dominates(dom, h, u) && !in[u]) {
                    in[u] = 1;
                    stk[sp++] = u;
                    body[nbody++] = u;
                }
            }
            while (sp) {
                uint32_t u = stk[--sp];
                for (uint32_t k = g->rfirst[u]; k < g->rfirst[u + 1]; k++) {
                    uint32_t p = g->radj[k];
                    if (!in[p] && dom->pre[p] != UINT32_MAX) {
                        in[p] = 1;
                        stk[sp++] = p;
                        body[nbody++] = p;
                    }
                }
            }
            if (pass == 0)
                size[h] = nbody;
            else
                for (uint32_t k = 0; k < nbody; k++)
                    loop_of[body[k]] = h;
        }
        free(hdr);
    }
    rc = 0;
out:
    free(size);
    free(stk);
    free(body);
    free(in);
    return rc;
}

/* LLVM's findEquivalenceClasses: in address order, a block not yet in a
 * class leads one, and takes in every block it dominates that
 * post-dominates it and is in the same innermost loop; the class weight is
 * the largest known weight among them. */
static void equivalence(prop *P, const domtree *dom, const domtree *pdom, const uint32_t *loop_of,
                        const int64_t *weight)
{
    size_t nb = P->nb;
    uint8_t *has = calloc(nb, 1);
    if (!has) {
        for (size_t b = 0; b < nb; b++)
            P->cls[b] = (uint32_t)b;
    }
    for (uint32_t b = 0; b < nb; b++) {
        P->bw[b] = weight[b] > 0 ? weight[b] : 0;
        P->bvis[b] = weight[b] >= 0;
    }
    for (uint32_t b1 = 0; has && b1 < nb; b1++) {
        if (has[b1])
            continue;
        has[b1] = 1;
        P->cls[b1] = b1;
        if (dom->pre[b1] == UINT32_MAX)
            continue;
        for (uint32_t b2 = 0; b2 < nb; b2++) {
            if (b2 == b1 || !dominates(dom, b1, b2) || !dominates(pdom, b2, b1) || loop_of[b1] != loop_of[b2])
                continue;
            P->cls[b2] = b1;
            has[b2] = 1;
            if (P->bvis[b2])
                P->bvis[b1] = 1;
            if (P->bw[b2] > P->bw[b1])
                P->bw[b1] = P->bw[b2];
        }
    }
    free(has);
}

/* One pass of propagateThroughEdges; true if anything changed. */
static bool propagate_pass(prop *P, bool update_block)
{
    const pk_cfg *cfg = P->cfg;
    bool changed = false;
    for (uint32_t b = 0; b < P->nb; b++) {
        uint32_t ec = P->cls[b];
        for (int dir = 0; dir < 2; dir++) {
            int64_t total = 0;
            uint32_t nunk = 0, ntot = 0, unk = UINT32_MAX, self = UINT32_MAX, single = UINT32_MAX;
            uint32_t lo = dir == 0 ? P->p->pred_first[b] : cfg->blocks[b].first_succ;
            uint32_t hi = dir == 0 ? P->p->pred_first[b + 1] : lo + cfg->blocks[b].nsucc;
            for (uint32_t k = lo; k < hi; k++) {
                uint32_t e = dir == 0 ? P->p->pred_edge[k] : k;
                ntot++;
                if (P->evis[e])
                    total += P->ew[e];
                else {
                    nunk++;
                    unk = e;
                }
                if (dir == 0 && cfg->edges[e].from == b)
                    self = e;
                single = e;
            }
            if (ntot != 1)
                single = UINT32_MAX;
            int64_t *bw = &P->bw[ec];
            if (nunk <= 1) {
                if (nunk == 0) {
                    if (!P->bvis[ec]) {
                        if (total > *bw) {
                            *bw = total;
                            changed = true;
                        }
                    } else if (single != UINT32_MAX && P->ew[single] < *bw) {
                        P->ew[single] = *bw;
                        changed = true;
                    }
                } else if (P->bvis[ec]) {
                    P->ew[unk] = *bw >= total ? *bw - total : 0;
                    uint32_t other = P->cls[dir == 0 ? cfg->edges[unk].from : cfg->edges[unk].to];
                    if (P->bvis[other] && P->ew[unk] > P->bw[other])
                        P->ew[unk] = P->bw[other];
                    P->evis[unk] = 1;
                    changed = true;
                }
            } else if (P->bvis[ec] && *bw == 0) {
                for (uint32_t k = lo; k < hi; k++) {
                    uint32_t e = dir == 0 ? P->p->pred_edge[k] : k;
                    P->ew[e] = 0;
                    P->evis[e] = 1;
                }
            } else if (self != UINT32_MAX && P->bvis[ec]) {
                P->ew[self] = *bw >= total ? *bw - total : 0;
                P->evis[self] = 1;
                changed = true;
            }
            if (update_block && !P->bvis[ec] && total > 0) {
                *bw = total;
                P->bvis[ec] = 1;
                changed = true;
            }
        }
    }
    return changed;
}

int pk_flow_propagate(const pk_cfg *cfg, const int64_t *weight, int64_t entry_count, const pk_flow_opts *o,
                      uint64_t *block_count, uint64_t *edge_count, pk_err *err)
{
    size_t nb = cfg->nblocks, ne = cfg->nedges;
    prop P = {.cfg = cfg, .nb = nb};
    pk_cfg_preds preds = {0};
    graph g = {0}, rg = {0};
    domtree dom = {0}, pdom = {0};
    uint32_t *from = malloc((ne + nb + 1) * sizeof *from), *to = malloc((ne + nb + 1) * sizeof *to);
    uint32_t *loop_of = malloc(nb * sizeof *loop_of);
    P.cls = malloc(nb * sizeof *P.cls);
    P.bw = malloc(nb * sizeof *P.bw);
    P.bvis = calloc(nb, 1);
    P.ew = calloc(ne ? ne : 1, sizeof *P.ew);
    P.evis = calloc(ne ? ne : 1, 1);
    int rc = -1;
    if (!from || !to || !loop_of || !P.cls || !P.bw || !P.bvis || !P.ew || !P.evis || pk_cfg_preds_build(cfg, &preds))
        goto out;
    P.p = &preds;
    /* the CFG, and its reverse with a virtual exit node nb fed by the exits
     * (and by blocks that end the flow elsewhere: none here, as LLVM) */
    size_t m = 0;
    for (size_t e = 0; e < ne; e++) {
        from[m] = cfg->edges[e].from;
        to[m++] = cfg->edges[e].to;
    }
    if (graph_build(&g, (uint32_t)nb, from, to, m) != 0 || dominators(&g, cfg->entry_block, &dom) != 0 ||
        loops(cfg, &g, &dom, loop_of) != 0)
        goto out;
    m = 0;
    for (size_t e = 0; e < ne; e++) {
        from[m] = cfg->edges[e].to;
        to[m++] = cfg->edges[e].from;
    }
    for (uint32_t b = 0; b < nb; b++)
        if (cfg->blocks[b].flags & PK_CFG_EXIT) {
            from[m] = (uint32_t)nb;
            to[m++] = b;
        }
    if (graph_build(&rg, (uint32_t)nb + 1, from, to, m) != 0 || dominators(&rg, (uint32_t)nb, &pdom) != 0)
        goto out;
    equivalence(&P, &dom, &pdom, loop_of, weight);
    uint32_t entry = P.cls[cfg->entry_block];
    if (entry_count >= 0) {   /* LLVM: head samples + 1 */
        P.bw[entry] = entry_count;
        P.bvis[entry] = 1;
    }
    /* a block heavier than its loop's header raises the header */
    for (uint32_t b = 0; b < nb; b++) {
        uint32_t h = loop_of[b];
        if (h != UINT32_MAX && P.bw[P.cls[b]] > P.bw[P.cls[h]])
            P.bw[P.cls[h]] = P.bw[P.cls[b]];
    }
    uint32_t lim = o->max_iterations, it = 0;
    for (bool ch = true; ch && it++ < lim;)
        ch = propagate_pass(&P, false);
    memset(P.evis, 0, ne);
    for (bool ch = true; ch && it++ < 2 * lim;)
        ch = propagate_pass(&P, false);
    for (bool ch = true; ch && it++ < 3 * lim;)
        ch = propagate_pass(&P, true);
    for (size_t b = 0; b < nb; b++)
        block_count[b] = P.bvis[P.cls[b]] && P.bw[P.cls[b]] > 0 ? (uint64_t)P.bw[P.cls[b]] : 0;
    for (size_t e = 0; e < ne; e++)
        edge_count[e] = P.evis[e] && P.ew[e] > 0 ? (uint64_t)P.ew[e] : 0;
    rc = 0;
out:
    if (rc != 0)
        pk_err_set(err, "flow: out of memory");
    pk_cfg_preds_free(&preds);
    graph_free(&g);
    graph_free(&rg);
    domtree_free(&dom);
    domtree_free(&pdom);
    free(from);
    free(to);
    free(loop_of);
    free(P.cls);
    free(P.bw);
    free(P.bvis);
    free(P.ew);
    free(P.evis);
    return rc;
}
