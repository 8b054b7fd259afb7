/* cg_order.c — the pre-inliner's top-down order (see cg_order.h). */
#include "profgen/cg_order.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX

static int cmp_edge(const void *a, const void *b)
{
    const pk_cg_edge *x = a, *y = b;
    if (x->from != y->from)
        return x->from < y->from ? -1 : 1;
    return x->to < y->to ? -1 : x->to > y->to;
}

/* Heavier first; equal weights keep their order (qsort is not stable, so
 * the position breaks ties). */
struct ranked { uint64_t weight; uint32_t pos, from, to; };

static int cmp_ranked(const void *a, const void *b)
{
    const struct ranked *x = a, *y = b;
    if (x->weight != y->weight)
        return x->weight > y->weight ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static uint32_t uf_find(uint32_t *parent, uint32_t x)
{
    while (parent[x] != x)
        x = parent[x] = parent[parent[x]];
    return x;
}

struct graph {
    size_t nf;
    const uint32_t *first;     /* CSR: edges of f at first[f] .. first[f+1] */
    const uint32_t *adj;
    const uint64_t *weight;
};

/* Orders the members of one component (mem[0..n), Tarjan's pop order) by
 * its maximum-weight spanning forest (Kruskal over the component's edges,
 * heaviest first), then Kahn's walk over the forest's directed edges from
 * the members no forest edge enters. `slot` maps a function to its member
 * index (NONE outside the component); scratch arrays hold n entries. */
static int order_members(const struct graph *g, uint32_t *mem, size_t n, uint32_t *slot, pk_err *err)
{
    size_t ne = 0;
    for (size_t i = 0; i < n; i++)
        for (uint32_t e = g->first[mem[i]]; e < g->first[mem[i] + 1]; e++)
            ne += slot[g->adj[e]] != NONE;
    struct ranked *r = malloc((ne ? ne : 1) * sizeof *r);
    uint32_t *parent = malloc(n * sizeof *parent), *incoming = calloc(n, sizeof *incoming);
    uint32_t *queue = malloc(n * sizeof *queue), *out = malloc(n * sizeof *out);
    uint32_t *epos = malloc(n * sizeof *epos);  /* member → number of its first edge */
    bool *in_tree = calloc(ne ? ne : 1, sizeof *in_tree);
    int rc = -1;
    if (!r || !parent || !incoming || !queue || !out || !in_tree || !epos) {
        pk_err_set(err, "out of memory");
        goto done;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        epos[i] = (uint32_t)k;
        for (uint32_t e = g->first[mem[i]]; e < g->first[mem[i] + 1]; e++)
            if (slot[g->adj[e]] != NONE) {
                r[k] = (struct ranked){g->weight[e], (uint32_t)k, (uint32_t)i, slot[g->adj[e]]};
                k++;
            }
    }
    qsort(r, ne, sizeof *r, cmp_ranked);
    for (size_t i = 0; i < n; i++)
        parent[i] = (uint32_t)i;
    for (size_t e = 0; e < ne; e++) {
        uint32_t a = uf_find(parent, r[e].from), b = uf_find(parent, r[e].to);
        if (a == b)
            continue;
        parent[a] = b;
        in_tree[r[e].pos] = true;   /* by position: the walk below goes in CSR order */
        incoming[r[e].to]++;
    }
    size_t qh = 0, qt = 0, no = 0;
    for (size_t i = 0; i < n; i++)
        if (!incoming[i])
            queue[qt++] = (uint32_t)i;
    while (qh < qt) {
        uint32_t m = queue[qh++];
        out[no++] = mem[m];
        size_t pos = epos[m];
        for (uint32_t e = g->first[mem[m]]; e < g->first[mem[m] + 1]; e++) {
            uint32_t to = slot[g->adj[e]];
            if (to == NONE)
                continue;
            if (in_tree[pos] && !--incoming[to])
                queue[qt++] = to;
            pos++;
        }
    }
    if (no != n) {  /* a spanning forest has no cycle: cannot happen */
        pk_err_set(err, "pre-inliner: call-graph cycle order is incomplete (%zu of %zu)", no, n);
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        mem[i] = out[i];
    rc = 0;
done:
    free(r), free(parent), free(incoming), free(queue), free(out), free(in_tree), free(epos);
    return rc;
}

/* A call weight as a signed sum term, capped so that sums over a few
 * thousand calls stay in range. */
#define CAPW(w) ((int64_t)((w) > (UINT64_MAX >> 16) ? (UINT64_MAX >> 16) : (w)))

/* Takes member m out of what is left: its calls no longer weigh on the
 * members it calls, nor its callers' calls to it on them. */
static void remove_member(const struct graph *g, const uint32_t *mem, const uint32_t *slot, const uint32_t *ifirst,
                          const uint32_t *ifrom, const uint64_t *iw, int64_t *out_w, int64_t *in_w, bool *gone,
                          uint32_t m)
{
    gone[m] = true;
    for (uint32_t e = g->first[mem[m]]; e < g->first[mem[m] + 1]; e++) {
        uint32_t to = slot[g->adj[e]];
        if (to != NONE && to != m)
            in_w[to] -= CAPW(g->weight[e]);
    }
    for (uint32_t e = ifirst[m]; e < ifirst[m + 1]; e++)
        out_w[ifrom[e]] -= CAPW(iw[e]);
}

#define FAS_SIFT_MAX 2048   /* members: a dense n x n weight matrix */
#define FAS_SIFT_PASSES 32

/* Improves a member order (ord: member indices) by moving one member at a
 * time to the place where the weight of backward calls drops most, until
 * no move helps: the greedy order is often a few moves from a better one
 * (the greedy picks by a member's own in- and out-weight, blind to where its
 * callers and callees ended up). Returns -1 when out of memory. */
static int sift_members(const struct graph *g, const uint32_t *mem, size_t n, const uint32_t *slot, uint32_t *ord)
{
    if (n < 3)
        return 0;
    int64_t *w = calloc(n * n, sizeof *w); /* w[a * n + b]: weight of a's calls to b */
    if (!w)
        return -1;
    for (size_t a = 0; a < n; a++)
        for (uint32_t e = g->first[mem[a]]; e < g->first[mem[a] + 1]; e++) {
            uint32_t b = slot[g->adj[e]];
            if (b != NONE && b != a)
                w[a * n + b] += CAPW(g->weight[e]);
        }
    for (int pass = 0; pass < FAS_SIFT_PASSES; pass++) {
        bool moved = false;
        for (size_t i = 0; i < n; i++) {
            uint32_t v = ord[i];
            /* the change in backward weight when v jumps over each member */
            int64_t d = 0, best_d = 0;
            size_t best = i;
            for (size_t j = i; j-- > 0;) {
                uint32_t u = ord[j];
                d += w[(size_t)u * n + v] - w[(size_t)v * n + u];
                if (d < best_d)
                    best_d = d, best = j;
            }
            d = 0;
            for (size_t j = i + 1; j < n; j++) {
                uint32_t u = ord[j];
                d += w[(size_t)v * n + u] - w[(size_t)u * n + v];
                if (d < best_d)
                    best_d = d, best = j;
            }
            if (best == i)
                continue;
            if (best < i)
                memmove(ord + best + 1, ord + best, (i - best) * sizeof *ord);
            else
                memmove(ord + i, ord + i + 1, (best - i) * sizeof *ord);
            ord[best] = v;
            moved = true;
        }
        if (!moved)
            break;
    }
    free(w);
    return 0;
}

/* Orders the members of one component so that the calls from a member to
 * one before it (contexts merged before their caller decides) weigh as
 * little as possible: Eades, Lin and Smyth's greedy heuristic for the
 * minimum feedback arc set, weighted. Members that nothing left in the
 * component calls go first, members that call nothing left go last, and
 * otherwise the member whose calls out outweigh its calls in by the most. */
static int order_members_fas(const struct graph *g, uint32_t *mem, size_t n, uint32_t *slot, pk_err *err)
{
    size_t ne = 0;
    for (size_t i = 0; i < n; i++)
        for (uint32_t e = g->first[mem[i]]; e < g->first[mem[i] + 1]; e++)
            ne += slot[g->adj[e]] != NONE && slot[g->adj[e]] != i;
    /* in-edges of each member (CSR): caller and weight */
    uint32_t *ifirst = calloc(n + 1, sizeof *ifirst), *ifrom = malloc((ne ? ne : 1) * sizeof *ifrom);
    uint64_t *iw = malloc((ne ? ne : 1) * sizeof *iw);
    int64_t *out_w = calloc(n, sizeof *out_w), *in_w = calloc(n, sizeof *in_w);
    bool *gone = calloc(n, sizeof *gone);
    uint32_t *head = malloc(n * sizeof *head), *tail = malloc(n * sizeof *tail);
    int rc = -1;
    if (!ifirst || !ifrom || !iw || !out_w || !in_w || !gone || !head || !tail) {
        pk_err_set(err, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        for (uint32_t e = g->first[mem[i]]; e < g->first[mem[i] + 1]; e++) {
            uint32_t to = slot[g->adj[e]];
            if (to == NONE || to == i)
                continue;
            ifirst[to + 1]++;
            out_w[i] += CAPW(g->weight[e]);
            in_w[to] += CAPW(g->weight[e]);
        }
    for (size_t i = 0; i < n; i++)
        ifirst[i + 1] += ifirst[i];
    {
        uint32_t *fill = calloc(n, sizeof *fill);
        if (!fill) {
            pk_err_set(err, "out of memory");
            goto done;
        }
        for (size_t i = 0; i < n; i++)
            for (uint32_t e = g->first[mem[i]]; e < g->first[mem[i] + 1]; e++) {
                uint32_t to = slot[g->adj[e]];
                if (to == NONE || to == i)
                    continue;
                ifrom[ifirst[to] + fill[to]] = (uint32_t)i;
                iw[ifirst[to] + fill[to]++] = g->weight[e];
            }
        free(fill);
    }
    /* counts of live out- and in-edges decide sources and sinks; weights
     * pick among the rest */
    size_t nh = 0, nt = 0, left = n;
    while (left) {
        bool moved = true;
        while (moved) {
            moved = false;
            for (size_t i = 0; i < n; i++) {
                if (gone[i])
                    continue;
                bool has_out = false, has_in = false;
                for (uint32_t e = g->first[mem[i]]; e < g->first[mem[i] + 1] && !has_out; e++) {
                    uint32_t to = slot[g->adj[e]];
                    has_out = to != NONE && to != i && !gone[to];
                }
                for (uint32_t e = ifirst[i]; e < ifirst[i + 1] && !has_in; e++)
                    has_in = !gone[ifrom[e]];
                if (has_out && has_in)
                    continue;
                if (!has_in)
                    head[nh++] = (uint32_t)i;   /* a source: nothing left calls it */
                else
                    tail[nt++] = (uint32_t)i;   /* a sink: calls nothing left */
                remove_member(g, mem, slot, ifirst, ifrom, iw, out_w, in_w, gone, (uint32_t)i);
                left--, moved = true;
            }
        }
        if (!left)
            break;
        size_t best = n;
        for (size_t i = 0; i < n; i++)
            if (!gone[i] && (best == n || out_w[i] - in_w[i] > out_w[best] - in_w[best]))
                best = i;
        head[nh++] = (uint32_t)best;
        remove_member(g, mem, slot, ifirst, ifrom, iw, out_w, in_w, gone, (uint32_t)best);
        left--;
    }
    {
        uint32_t *res = malloc(n * sizeof *res);
        if (!res) {
            pk_err_set(err, "out of memory");
            goto done;
        }
        for (size_t i = 0; i < nh; i++)
            res[i] = head[i];
        for (size_t i = 0; i < nt; i++)   /* sinks found last go first among the sinks */
            res[nh + i] = tail[nt - 1 - i];
        if (n <= FAS_SIFT_MAX && sift_members(g, mem, n, slot, res)) {
            free(res);
            pk_err_set(err, "out of memory");
            goto done;
        }
        for (size_t i = 0; i < n; i++)
            res[i] = mem[res[i]];
        memcpy(mem, res, n * sizeof *mem);
        free(res);
    }
    rc = 0;
done:
    free(ifirst), free(ifrom), free(iw), free(out_w), free(in_w), free(gone), free(head), free(tail);
    return rc;
}

/* The top-down order of the graph of `edges` (sorted by cmp_edge) without
 * its cold pairs. The virtual entry calls the functions in `entry_order`
 * (NULL: index order); Tarjan's depth-first walk writes the functions it
 * reaches from a later entry call before those of an earlier one, so
 * functions that no kept edge orders come out in the reverse of that order. */
static int top_down(size_t nf, const pk_cg_edge *edges, size_t ne, uint64_t cold, int cycle_order,
                    const uint32_t *entry_order, uint32_t *order, pk_err *err)
{
    /* adjacency (CSR) with a virtual entry node nf → every function; pairs
     * merged with their weights added, then the cold ones left out */
    uint32_t *first = calloc(nf + 2, sizeof *first), *adj = malloc((ne + nf + 1) * sizeof *adj);
    uint64_t *weight = malloc((ne + nf + 1) * sizeof *weight);
    uint32_t *idx = malloc((nf + 1) * sizeof *idx), *low = malloc((nf + 1) * sizeof *low);
    uint32_t *stack = malloc((nf + 1) * sizeof *stack), *cstack = malloc((nf + 1) * sizeof *cstack);
    uint32_t *citer = malloc((nf + 1) * sizeof *citer), *slot = malloc((nf + 1) * sizeof *slot);
    bool *on = calloc(nf + 1, sizeof *on);
    int rc = -1;
    if (!first || !adj || !weight || !idx || !low || !stack || !cstack || !citer || !slot || !on) {
        pk_err_set(err, "out of memory");
        goto done;
    }
    size_t na = 0;
    for (size_t i = 0, e = 0; i < nf; i++) {
        first[i] = (uint32_t)na;
        while (e < ne && edges[e].from == i) {
            uint32_t to = edges[e].to;
            uint64_t w = 0;
            for (; e < ne && edges[e].from == i && edges[e].to == to; e++)
                w = w + edges[e].weight < w ? UINT64_MAX : w + edges[e].weight;
            if (cold && w <= cold)
                continue;
            adj[na] = to;
            weight[na++] = w;
        }
    }
    first[nf] = (uint32_t)na;
    for (size_t i = 0; i < nf; i++)
        adj[na] = entry_order ? entry_order[i] : (uint32_t)i, weight[na++] = 0;
    first[nf + 1] = (uint32_t)na;
    struct graph g = {nf, first, adj, weight};
    for (size_t i = 0; i <= nf; i++)
        idx[i] = NONE, slot[i] = NONE;
    /* iterative Tarjan from the entry; components come out callees first,
     * so they are written from the end of `order` backwards */
    uint32_t counter = 0, sp = 0, cp = 0;
    size_t nout = nf;
    cstack[cp] = (uint32_t)nf, citer[cp++] = first[nf];
    idx[nf] = low[nf] = counter++;
    stack[sp++] = (uint32_t)nf, on[nf] = true;
    while (cp) {
        uint32_t v = cstack[cp - 1];
        if (citer[cp - 1] < first[v + 1]) {
            uint32_t w = adj[citer[cp - 1]++];
            if (idx[w] == NONE) {
                idx[w] = low[w] = counter++;
                stack[sp++] = w, on[w] = true;
                cstack[cp] = w, citer[cp++] = first[w];
            } else if (on[w] && idx[w] < low[v]) {
                low[v] = idx[w];
            }
            continue;
        }
        cp--;
        if (cp && low[v] < low[cstack[cp - 1]])
            low[cstack[cp - 1]] = low[v];
        if (low[v] != idx[v])
            continue;
        /* a component: stack[sp..top) after popping, v at the bottom */
        size_t top = sp;
        uint32_t w;
        do {
            w = stack[--sp];
            on[w] = false;
        } while (w != v);
        uint32_t *mem = stack + sp;
        size_t n = top - sp;
        if (n == 1 && mem[0] == nf)  /* the virtual entry, alone (nothing calls it) */
            continue;
        /* pop order, the first popped first */
        for (size_t i = 0; i < n / 2; i++) {
            uint32_t x = mem[i];
            mem[i] = mem[n - 1 - i];
            mem[n - 1 - i] = x;
        }
        if (n > 1) {
            for (size_t i = 0; i < n; i++)
                slot[mem[i]] = (uint32_t)i;
            int orc = cycle_order == PK_CG_CYCLE_FAS ? order_members_fas(&g, mem, n, slot, err)
                                                     : order_members(&g, mem, n, slot, err);
            for (size_t i = 0; i < n; i++)
                slot[mem[i]] = NONE;
            if (orc)
                goto done;
        }
        nout -= n;
        for (size_t i = 0; i < n; i++)
            order[nout + i] = mem[i];
    }
    if (nout) {
        pk_err_set(err, "pre-inliner: %zu functions not reached in the call graph", nout);
        goto done;
    }
    rc = 0;
done:
    free(first), free(adj), free(weight), free(idx), free(low), free(stack), free(cstack), free(citer);
    free(slot), free(on);
    return rc;
}

/* Whether some function pair's summed weight is at most `cold` (edges
 * sorted by cmp_edge). */
static bool cuts_a_pair(const pk_cg_edge *edges, size_t ne, uint64_t cold)
{
    if (!cold)
        return false;
    for (size_t e = 0; e < ne;) {
        uint64_t w = 0;
        size_t p = e;
        for (; e < ne && edges[e].from == edges[p].from && edges[e].to == edges[p].to; e++)
            w = w + edges[e].weight < w ? UINT64_MAX : w + edges[e].weight;
        if (w <= cold)
            return true;
    }
    return false;
}

int pk_cg_top_down(size_t nf, pk_cg_edge *edges, size_t ne, uint64_t cold, int cycle_order, uint32_t *order,
                   pk_err *err)
{
    if (ne > 1)
        qsort(edges, ne, sizeof *edges, cmp_edge);
    if (!cuts_a_pair(edges, ne, cold))
        return top_down(nf, edges, ne, 0, cycle_order, NULL, order, err);
    /* A cold call still joins a caller to its callee: the pre-inliner may
     * inline it (a small callee under the cold threshold, or one the binary
     * had inlined), which it can only while the callee's contexts are not yet
     * merged into its base profile. So what the hot graph leaves unordered
     * follows the whole graph's top-down order: the entry calls the
     * functions in the reverse of that order, which keeps it wherever the
     * hot edges agree (and they decide where they do not). */
    uint32_t *full = malloc((nf ? nf : 1) * sizeof *full), *entry = malloc((nf ? nf : 1) * sizeof *entry);
    int rc = -1;
    if (!full || !entry) {
        pk_err_set(err, "out of memory");
    } else if (!top_down(nf, edges, ne, 0, cycle_order, NULL, full, err)) {
        for (size_t i = 0; i < nf; i++)
            entry[i] = full[nf - 1 - i];
        rc = top_down(nf, edges, ne, cold, cycle_order, entry, order, err);
    }
    free(full), free(entry);
    return rc;
}
