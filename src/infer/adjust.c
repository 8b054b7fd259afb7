/* adjust.c — profi's two post-passes over a solved flow (research note
 * §3.1, FlowAdjuster): joining positive-flow islands to the entry, and
 * spreading flow evenly inside subgraphs of blocks of unknown weight. */
#include "infer/infer_int.h"

#define COST_UNLIKELY ((int64_t)1 << 30)
#define MIN_BASE_DISTANCE 10000

/* ---------------------------------------------------------------- islands */

typedef struct heap_item { int64_t d; uint32_t v; } heap_item;

typedef struct dheap {
    heap_item *h;
    size_t n;
} dheap;

static bool hless(heap_item a, heap_item b) { return a.d < b.d || (a.d == b.d && a.v < b.v); }

static void hpush(dheap *q, heap_item x)
{
    size_t i = q->n++;
    q->h[i] = x;
    while (i && hless(q->h[i], q->h[(i - 1) / 2])) {
        heap_item t = q->h[i];
        q->h[i] = q->h[(i - 1) / 2];
        q->h[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

static heap_item hpop(dheap *q)
{
    heap_item top = q->h[0];
    q->h[0] = q->h[--q->n];
    for (size_t i = 0;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < q->n && hless(q->h[l], q->h[m]))
            m = l;
        if (r < q->n && hless(q->h[r], q->h[m]))
            m = r;
        if (m == i)
            break;
        heap_item t = q->h[i];
        q->h[i] = q->h[m];
        q->h[m] = t;
        i = m;
    }
    return top;
}

static bool kept_edge(const pk_flow_fn *f, uint32_t e)
{
    return f->kept[f->cfg->edges[e].from] && f->kept[f->cfg->edges[e].to];
}

/* Marks what positive-flow edges reach from b. */
static void reach_positive(const pk_flow_fn *f, uint32_t b, uint8_t *vis, uint32_t *stack)
{
    if (vis[b])
        return;
    size_t sp = 0;
    vis[b] = 1;
    stack[sp++] = b;
    while (sp) {
        const pk_cfg_block *bl = &f->cfg->blocks[stack[--sp]];
        for (uint32_t i = 0; i < bl->nsucc; i++) {
            uint32_t e = bl->first_succ + i, t = f->cfg->edges[e].to;
            if (f->eflow[e] > 0 && !vis[t] && kept_edge(f, e)) {
                vis[t] = 1;
                stack[sp++] = t;
            }
        }
    }
}

/* profi's jump distance: prefer hot edges, avoid cold ones (integers: the
 * fraction 1/flow is kept in units of 1/base). */
static int64_t jump_distance(const pk_flow_fn *f, uint32_t e, int64_t base)
{
    int64_t fl = f->eflow[e];
    return fl > 0 ? base + base / fl : 2 * base * (int64_t)(f->cfg->nblocks + 1);
}

/* Dijkstra from the sources (src_mask, or the single block src) to block
 * dst, or to any exit when dst is UINT32_MAX; fills par (in-edge on the
 * path) and returns the block reached, UINT32_MAX if none. */
static uint32_t shortest(const pk_flow_fn *f, const uint8_t *src_mask, uint32_t src, uint32_t dst, int64_t base,
                         int64_t *dist, uint32_t *par, dheap *q)
{
    size_t nb = f->cfg->nblocks;
    for (size_t b = 0; b < nb; b++) {
        dist[b] = INT64_MAX;
        par[b] = UINT32_MAX;
    }
    q->n = 0;
    for (uint32_t b = 0; b < nb; b++)
        if (f->kept[b] && (src_mask ? src_mask[b] : b == src)) {
            dist[b] = 0;
            hpush(q, (heap_item){0, b});
        }
    while (q->n) {
        heap_item it = hpop(q);
        uint32_t u = it.v;
        if (it.d != dist[u])
            continue;
        if (dst == UINT32_MAX ? f->exit[u] != 0 : u == dst)
            return u;
        const pk_cfg_block *bl = &f->cfg->blocks[u];
        for (uint32_t i = 0; i < bl->nsucc; i++) {
            uint32_t e = bl->first_succ + i, v = f->cfg->edges[e].to;
            if (!kept_edge(f, e))
                continue;
            int64_t nd = it.d + jump_distance(f, e, base);
            if (nd < dist[v]) {
                dist[v] = nd;
                par[v] = e;
                hpush(q, (heap_item){nd, v});
            }
        }
    }
    return UINT32_MAX;
}

/* Adds one unit along the path ending at block `to` (par[]), back to a block
 * with no parent; returns that first block. */
static uint32_t add_path(pk_flow_fn *f, uint32_t to, const uint32_t *par, uint8_t *vis, uint32_t *stack)
{
    uint32_t b = to;
    while (par[b] != UINT32_MAX) {
        uint32_t e = par[b];
        f->eflow[e] += 1;
        f->bflow[b] += 1;
        reach_positive(f, b, vis, stack);
        b = f->cfg->edges[e].from;
    }
    return b;
}

void pk_flow_join_islands(pk_flow_fn *f)
{
    size_t nb = f->cfg->nblocks;
    uint8_t *vis = calloc(nb, 1);
    uint32_t *stack = malloc(nb * sizeof *stack), *par = malloc(nb * sizeof *par), *par1 = malloc(nb * sizeof *par1);
    int64_t *dist = malloc(nb * sizeof *dist);
    dheap q = {malloc((f->cfg->nedges + nb + 1) * sizeof(heap_item)), 0};
    if (!vis || !stack || !par || !par1 || !dist || !q.h)
        goto out;   /* the flow stays valid, only less realistic */
    int64_t entry_flow = f->bflow[f->cfg->entry_block];
    int64_t base = entry_flow < COST_UNLIKELY / (2 * ((int64_t)nb + 1)) ? entry_flow
                                                                       : COST_UNLIKELY / (2 * ((int64_t)nb + 1));
    if (base < MIN_BASE_DISTANCE)
        base = MIN_BASE_DISTANCE;
    for (uint32_t b = 0; b < nb; b++)
        if (f->entry[b] && f->kept[b] && (b == f->cfg->entry_block || f->entry_flow[b] > 0))
            reach_positive(f, b, vis, stack);
    for (uint32_t b = 0; b < nb; b++) {
        if (!f->kept[b] || f->bflow[b] <= 0 || vis[b])
            continue;
        /* entry → b, then b → an exit; the first leg is added last so the
         * second starts from b's own distances */
        if (shortest(f, f->entry, 0, b, base, dist, par, &q) == UINT32_MAX)
            continue;
        memcpy(par1, par, nb * sizeof *par1);
        uint32_t x = shortest(f, NULL, b, UINT32_MAX, base, dist, par, &q);
        if (x != UINT32_MAX) {
            uint32_t first = add_path(f, b, par1, vis, stack);
            f->bflow[first] += 1;          /* the entry block itself */
            f->entry_flow[first] += 1;
            reach_positive(f, first, vis, stack);
            add_path(f, x, par, vis, stack);   /* b itself was counted by the first leg */
        }
    }
out:
    free(vis);
    free(stack);
    free(par);
    free(par1);
    free(dist);
    free(q.h);
}

/* ------------------------------------------------------ unknown subgraphs */

static bool unknown(const pk_flow_fn *f, uint32_t b)
{
    return f->weight[b] < 0;
}

/* profi's ignoreJump: which edges do not take part in rebalancing the
 * subgraph rooted at src ending at dst (UINT32_MAX: none). */
static bool ignored(const pk_flow_fn *f, uint32_t src, uint32_t dst, uint32_t e)
{
    const pk_cfg_edge *ed = &f->cfg->edges[e];
    if (!kept_edge(f, e))
        return true;
    if (dst != UINT32_MAX && ed->to == dst)
        return false;
    if (!unknown(f, ed->to) && ed->from == src)
        return true;
    if (!unknown(f, ed->to) && f->bflow[ed->to] == 0)
        return true;
    return false;
}

typedef struct rb_work {
    uint8_t *vis;
    uint32_t *queue, *unk, *order, *indeg;
    size_t nunk;
} rb_work;

/* Finds the unknown blocks reached from src and the known blocks they lead
 * to; returns the single known destination (UINT32_MAX: none), or
 * UINT32_MAX - 1 when the subgraph cannot be rebalanced. */
static uint32_t find_subgraph(const pk_flow_fn *f, uint32_t src, rb_work *w)
{
    size_t nb = f->cfg->nblocks, qh = 0, qt = 0;
    uint32_t dst = UINT32_MAX, ndst = 0;
    memset(w->vis, 0, nb);
    w->nunk = 0;
    w->queue[qt++] = src;
    w->vis[src] = 1;
    while (qh < qt) {
        const pk_cfg_block *bl = &f->cfg->blocks[w->queue[qh++]];
        for (uint32_t i = 0; i < bl->nsucc; i++) {
            uint32_t e = bl->first_succ + i, t = f->cfg->edges[e].to;
            if (ignored(f, src, UINT32_MAX, e) || w->vis[t])
                continue;
            w->vis[t] = 1;
            if (!unknown(f, t)) {
                dst = t;
                ndst++;
            } else {
                w->queue[qt++] = t;
                w->unk[w->nunk++] = t;
            }
        }
    }
    if (w->nunk == 0 || ndst > 1)
        return UINT32_MAX - 1;
    for (size_t k = 0; k < w->nunk; k++) {
        uint32_t b = w->unk[k];
        const pk_cfg_block *bl = &f->cfg->blocks[b];
        uint32_t nsucc = 0, nign = 0;
        for (uint32_t i = 0; i < bl->nsucc; i++) {
            if (!kept_edge(f, bl->first_succ + i))
                continue;
            nsucc++;
            nign += ignored(f, src, dst, bl->first_succ + i);
        }
        /* Flow that enters or leaves the function inside the subgraph is
         * not seen by the split (profi has no such blocks). */
        if (f->entry[b] || (f->exit[b] && nsucc > 0))
            return UINT32_MAX - 1;
        if (nsucc == 0) {
            if (dst != UINT32_MAX)
                return UINT32_MAX - 1;   /* a second sink */
            continue;
        }
        if (nign == nsucc)
            return UINT32_MAX - 1;
    }
    return dst;
}

/* Orders the unknown blocks topologically (into w->order); false when the
 * subgraph has a cycle or src is in one. */
static bool acyclic(const pk_flow_fn *f, uint32_t src, uint32_t dst, rb_work *w)
{
    size_t nb = f->cfg->nblocks;
    memset(w->indeg, 0, nb * sizeof *w->indeg);
    for (size_t k = 0; k <= w->nunk; k++) {
        uint32_t b = k == 0 ? src : w->unk[k - 1];
        const pk_cfg_block *bl = &f->cfg->blocks[b];
        for (uint32_t i = 0; i < bl->nsucc; i++)
            if (!ignored(f, src, dst, bl->first_succ + i))
                w->indeg[f->cfg->edges[bl->first_succ + i].to]++;
    }
    if (w->indeg[src] > 0)
        return false;
    size_t qh = 0, qt = 0, no = 0;
    w->queue[qt++] = src;
    while (qh < qt) {
        uint32_t b = w->queue[qh++];
        if (b == dst)
            break;
        if (b != src && unknown(f, b))
            w->order[no++] = b;
        const pk_cfg_block *bl = &f->cfg->blocks[b];
        for (uint32_t i = 0; i < bl->nsucc; i++) {
            uint32_t e = bl->first_succ + i, t = f->cfg->edges[e].to;
            if (ignored(f, src, dst, e))
                continue;
            if (--w->indeg[t] == 0)
                w->queue[qt++] = t;
        }
    }
    return no == w->nunk;
}

/* Splits flow evenly over b's edges in the subgraph. */
static void split(pk_flow_fn *f, uint32_t src, uint32_t dst, uint32_t b, int64_t flow)
{
    const pk_cfg_block *bl = &f->cfg->blocks[b];
    int64_t deg = 0;
    for (uint32_t i = 0; i < bl->nsucc; i++)
        deg += !ignored(f, src, dst, bl->first_succ + i);
    if (deg == 0)
        return;   /* a sink */
    int64_t each = (flow + deg - 1) / deg;
    for (uint32_t i = 0; i < bl->nsucc; i++) {
        uint32_t e = bl->first_succ + i;
        if (ignored(f, src, dst, e))
            continue;
        int64_t x = each < flow ? each : flow;
        f->eflow[e] = x;
        flow -= x;
    }
}

void pk_flow_rebalance_unknown(pk_flow_fn *f)
{
    size_t nb = f->cfg->nblocks;
    bool any = false;
    for (uint32_t b = 0; b < nb && !any; b++)
        any = f->kept[b] && unknown(f, b);
    if (!any)
        return;
    rb_work w = {calloc(nb, 1), malloc(nb * sizeof(uint32_t)), malloc(nb * sizeof(uint32_t)),
                 malloc(nb * sizeof(uint32_t)), malloc(nb * sizeof(uint32_t)), 0};
    if (!w.vis || !w.queue || !w.unk || !w.order || !w.indeg)
        goto out;
    for (uint32_t src = 0; src < nb; src++) {
        if (!f->kept[src] || unknown(f, src) || f->bflow[src] == 0)
            continue;
        const pk_cfg_block *bl = &f->cfg->blocks[src];
        bool unknown_succ = false;
        for (uint32_t i = 0; i < bl->nsucc && !unknown_succ; i++)
            unknown_succ = kept_edge(f, bl->first_succ + i) && unknown(f, f->cfg->edges[bl->first_succ + i].to);
        if (!unknown_succ)
            continue;
        uint32_t dst = find_subgraph(f, src, &w);
        if (dst == UINT32_MAX - 1 || !acyclic(f, src, dst, &w))
            continue;
        int64_t flow = 0;
        for (uint32_t i = 0; i < bl->nsucc; i++)
            if (!ignored(f, src, dst, bl->first_succ + i))
                flow += f->eflow[bl->first_succ + i];
        split(f, src, dst, src, flow);
        for (size_t k = 0; k < w.nunk; k++) {
            uint32_t b = w.order[k];
            int64_t in = 0;
            for (uint32_t i = f->preds->pred_first[b]; i < f->preds->pred_first[b + 1]; i++)
                if (kept_edge(f, f->preds->pred_edge[i]))
                    in += f->eflow[f->preds->pred_edge[i]];
            f->bflow[b] = in;
            split(f, src, dst, b, in);
        }
    }
out:
    free(w.vis);
    free(w.queue);
    free(w.unk);
    free(w.order);
    free(w.indeg);
}
