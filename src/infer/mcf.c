/* mcf.c — min-cost max-flow for profile inference.
 *
 * Successive shortest paths as in profi (LLVM SampleProfileInference), with
 * changes that keep the answer's cost and make it scale to functions of
 * thousands of blocks (a 4,400-block function with random weights went
 * from 3.5 s to 0.4 s; see tests/unit/test_infer_noise.c):
 *   - distances come from Dijkstra over reduced costs (Johnson potentials;
 *     every network cost is >= 0) instead of a Bellman-Ford queue per path;
 *   - one distance computation serves a whole phase: the arcs of reduced
 *     cost 0 are listed once, and the augmenting paths of that length are
 *     found Dinic style (breadth-first levels, then paths along current
 *     arcs) until none is left; then the shortest distance grows.
 * Even distribution (profi's D118640) works inside a phase as in profi:
 * from each path, the DAG of equally short paths whose residual capacity is
 * at least half the path's is found by a bounded DFS (here only through
 * nodes that still reach the sink), and the flow is split evenly at every
 * node of it, in integers (the fractional bound of profi's first step uses
 * 32.32 fixed point). After an augmentation the same DAG, pruned of what it
 * saturated, is augmented again before a new DFS (profi searches again).
 * Everything is in flat arrays (CSR adjacency, paired reverse arcs) and
 * visited in a fixed order, so the result depends only on the input. */
#include "infer/infer_int.h"

#define MAX_DFS_CALLS 10
#define FRAC_ONE ((uint64_t)1 << 32)

typedef struct mcf_edge {
    uint32_t from, to;
    int64_t cap, cost;
} mcf_edge;

struct pk_mcf {
    uint32_t nn;
    mcf_edge *e;
    size_t ne, ecap;
    /* CSR arcs, built by solve: arcs first[v] .. first[v+1] leave v */
    uint32_t *first, *to, *rev;
    uint32_t *zfirst, *zarc;    /* per phase: the arcs of reduced cost 0 (CSR) */
    uint32_t *level, *cur;      /* BFS levels and current arcs (Dinic) */
    uint32_t *rstamp;           /* epoch: the node reaches t (find_dag) */
    int64_t *res, *cost;
    uint32_t *arc_of_edge;      /* forward arc of each edge */
    int64_t *cap0;              /* original capacity of each arc */
    /* per-node work arrays */
    int64_t *pot, *dist;
    uint32_t *parent;           /* arc used to reach the node */
    uint32_t *queue;
    uint32_t *stamp;            /* DFS epochs */
    uint32_t epoch;
    uint64_t *disc, *fin;
    uint32_t *ncalls;
    uint8_t *taken;
    uint64_t *frac;
    int64_t *iflow;
    /* DAG of a step: order of nodes, their arcs */
    uint32_t *order, *dag_first, *dag_arc;
    int64_t *aug;               /* per arc */
    uint32_t *stk_node, *stk_next;
    /* Dijkstra's queue: nodes in heap order, and where each node is in
     * it (HEAP_NONE: never queued, HEAP_DONE: settled) */
    uint32_t *heap, *hpos;
    uint32_t hn;
};

#define HEAP_NONE UINT32_MAX
#define HEAP_DONE (UINT32_MAX - 1)

pk_mcf *pk_mcf_new(uint32_t nnodes)
{
    pk_mcf *g = calloc(1, sizeof *g);
    if (g)
        g->nn = nnodes;
    return g;
}

void pk_mcf_free(pk_mcf *g)
{
    if (!g)
        return;
    void *ptrs[] = {g->e, g->first, g->zfirst, g->zarc, g->level, g->cur, g->rstamp, g->to, g->rev, g->res, g->cost, g->arc_of_edge, g->cap0, g->pot, g->dist,
                    g->parent, g->queue, g->stamp, g->disc, g->fin, g->ncalls, g->taken, g->frac, g->iflow,
                    g->order, g->dag_first, g->dag_arc, g->aug, g->stk_node, g->stk_next, g->heap, g->hpos};
    for (size_t i = 0; i < sizeof ptrs / sizeof *ptrs; i++)
        free(ptrs[i]);
    free(g);
}

uint32_t pk_mcf_add(pk_mcf *g, uint32_t from, uint32_t to, int64_t cap, int64_t cost)
{
    if (g->ne == g->ecap) {
        size_t c = g->ecap ? 2 * g->ecap : 256;
        mcf_edge *e = pk_xrealloc_array(g->e, c, sizeof *e);
        if (!e || c >= UINT32_MAX / 2)
            return UINT32_MAX;
        g->e = e;
        g->ecap = c;
    }
    g->e[g->ne] = (mcf_edge){from, to, cap, cost};
    return (uint32_t)g->ne++;
}

int64_t pk_mcf_flow(const pk_mcf *g, uint32_t edge)
{
    uint32_t a = g->arc_of_edge[edge];
    return g->cap0[a] - g->res[a];
}

static int build_csr(pk_mcf *g)
{
    size_t na = 2 * g->ne, nn = g->nn;
#define ALLOC(p, n) ((p) = pk_xrealloc_array(NULL, (n) ? (n) : 1, sizeof *(p)))
    if (!ALLOC(g->first, nn + 1) || !ALLOC(g->to, na) || !ALLOC(g->zfirst, nn + 1) || !ALLOC(g->level, nn) || !ALLOC(g->rstamp, nn) || !ALLOC(g->cur, nn) || !ALLOC(g->zarc, na) || !ALLOC(g->rev, na) || !ALLOC(g->res, na) ||
        !ALLOC(g->cost, na) || !ALLOC(g->arc_of_edge, g->ne) || !ALLOC(g->cap0, na) || !ALLOC(g->aug, na) ||
        !ALLOC(g->dag_arc, na) || !ALLOC(g->pot, nn) || !ALLOC(g->dist, nn) || !ALLOC(g->parent, nn) ||
        !ALLOC(g->queue, nn) || !ALLOC(g->stamp, nn) || !ALLOC(g->disc, nn) || !ALLOC(g->fin, nn) ||
        !ALLOC(g->ncalls, nn) || !ALLOC(g->taken, nn) || !ALLOC(g->frac, nn) || !ALLOC(g->iflow, nn) ||
        !ALLOC(g->order, nn) || !ALLOC(g->dag_first, nn + 1) || !ALLOC(g->stk_node, nn + 1) ||
        !ALLOC(g->stk_next, nn + 1) || !ALLOC(g->heap, nn) || !ALLOC(g->hpos, nn))
        return -1;
#undef ALLOC
    memset(g->first, 0, (nn + 1) * sizeof *g->first);
    for (size_t i = 0; i < g->ne; i++) {
        g->first[g->e[i].from + 1]++;
        g->first[g->e[i].to + 1]++;
    }
    for (size_t v = 0; v < nn; v++)
        g->first[v + 1] += g->first[v];
    uint32_t *pos = g->queue;   /* scratch */
    memcpy(pos, g->first, nn * sizeof *pos);
    for (size_t i = 0; i < g->ne; i++) {
        const mcf_edge *e = &g->e[i];
        uint32_t a = pos[e->from]++, b = pos[e->to]++;
        g->to[a] = e->to;
        g->to[b] = e->from;
        g->rev[a] = b;
        g->rev[b] = a;
        g->res[a] = g->cap0[a] = e->cap;
        g->res[b] = g->cap0[b] = 0;
        g->cost[a] = e->cost;
        g->cost[b] = -e->cost;
        g->arc_of_edge[i] = a;
    }
    memset(g->pot, 0, nn * sizeof *g->pot);
    memset(g->stamp, 0, nn * sizeof *g->stamp);
    memset(g->rstamp, 0, nn * sizeof *g->rstamp);
    g->epoch = 0;
    return 0;
}

/* ---- Dijkstra over reduced costs, with a 4-ary heap of nodes keyed by
 * (distance, node), so ties break the same way every time. A node is in it
 * at most once: an improved distance moves it up (decrease-key) instead of
 * queueing it again, which keeps the heap at most one entry per node. ---- */

static inline bool heap_less(const pk_mcf *g, uint32_t a, uint32_t b)
{
    return g->dist[a] < g->dist[b] || (g->dist[a] == g->dist[b] && a < b);
}

/* Moves node v (at position i) up to where its key belongs. */
static void heap_up(pk_mcf *g, uint32_t i, uint32_t v)
{
    while (i > 0) {
        uint32_t p = (i - 1) / 4, pv = g->heap[p];
        if (!heap_less(g, v, pv))
            break;
        g->heap[i] = pv;
        g->hpos[pv] = i;
        i = p;
    }
    g->heap[i] = v;
    g->hpos[v] = i;
}

static uint32_t heap_pop(pk_mcf *g)
{
    uint32_t top = g->heap[0], v = g->heap[--g->hn], n = g->hn, i = 0;
    g->hpos[top] = HEAP_DONE;
    if (!n)
        return top;
    for (;;) {
        uint32_t c = 4 * i + 1;
        if (c >= n)
            break;
        uint32_t end = c + 4 < n ? c + 4 : n, m = c;
        for (uint32_t k = c + 1; k < end; k++)
            if (heap_less(g, g->heap[k], g->heap[m]))
                m = k;
        if (!heap_less(g, g->heap[m], v))
            break;
        g->heap[i] = g->heap[m];
        g->hpos[g->heap[i]] = i;
        i = m;
    }
    g->heap[i] = v;
    g->hpos[v] = i;
    return top;
}

static inline int64_t rcost(const pk_mcf *g, uint32_t u, uint32_t a)
{
    return g->cost[a] + g->pot[u] - g->pot[g->to[a]];
}

/* Shortest distances from s; stops once t is settled. Then raises every
 * potential by min(dist, dist(t)), which keeps all reduced costs >= 0 and
 * makes the arcs of every shortest s-t path exactly those of reduced
 * cost 0. Returns 0 when t is reachable, 1 when not. */
static int dijkstra(pk_mcf *g, uint32_t s, uint32_t t)
{
    const int64_t unseen = INT64_MAX;
    for (uint32_t v = 0; v < g->nn; v++) {
        g->dist[v] = unseen;
        g->hpos[v] = HEAP_NONE;
    }
    g->dist[s] = 0;
    g->hn = 1;
    g->heap[0] = s;
    g->hpos[s] = 0;
    while (g->hn) {
        uint32_t u = heap_pop(g);
        if (u == t)
            break;
        int64_t du = g->dist[u];
        for (uint32_t a = g->first[u]; a < g->first[u + 1]; a++) {
            if (g->res[a] <= 0)
                continue;
            uint32_t v = g->to[a];
            int64_t nd = du + rcost(g, u, a);
            /* (a settled node never improves: reduced costs are >= 0) */
            if (nd < g->dist[v] && g->hpos[v] != HEAP_DONE) {
                g->dist[v] = nd;
                heap_up(g, g->hpos[v] == HEAP_NONE ? g->hn++ : g->hpos[v], v);
            }
        }
    }
    if (g->hpos[t] != HEAP_DONE)
        return 1;
    int64_t D = g->dist[t];
    for (uint32_t v = 0; v < g->nn; v++)
        g->pot[v] += g->dist[v] < D ? g->dist[v] : D;
    /* The arcs that can be on a shortest path for the whole phase (their
     * residual is checked where they are used). */
    uint32_t k = 0;
    for (uint32_t u = 0; u < g->nn; u++) {
        g->zfirst[u] = k;
        for (uint32_t a = g->first[u]; a < g->first[u + 1]; a++)
            if (rcost(g, u, a) == 0)
                g->zarc[k++] = a;
    }
    g->zfirst[g->nn] = k;
    return 0;
}

/* Breadth-first levels from s over admissible arcs (residual > 0,
 * reduced cost 0); true when t is reached. Resets the current arcs. */
static bool bfs_levels(pk_mcf *g, uint32_t s, uint32_t t)
{
    for (uint32_t v = 0; v < g->nn; v++) {
        g->level[v] = UINT32_MAX;
        g->cur[v] = g->zfirst[v];
    }
    size_t qh = 0, qt = 0;
    g->queue[qt++] = s;
    g->level[s] = 0;
    while (qh < qt) {
        uint32_t u = g->queue[qh++];
        if (u == t)
            continue;
        for (uint32_t z = g->zfirst[u]; z < g->zfirst[u + 1]; z++) {
            uint32_t a = g->zarc[z], v = g->to[a];
            if (g->res[a] > 0 && g->level[v] == UINT32_MAX) {
                g->level[v] = g->level[u] + 1;
                g->queue[qt++] = v;
            }
        }
    }
    return g->level[t] != UINT32_MAX;
}

/* The next s-t path of the level graph, Dinic style: arcs from a level to
 * the next with residual left, dead ends remembered through the current
 * arc of each node. Leaves the path in parent[]. */
static bool level_path(pk_mcf *g, uint32_t s, uint32_t t)
{
    uint32_t *stk = g->stk_node;
    size_t sp = 0;
    stk[sp++] = s;
    while (sp) {
        uint32_t u = stk[sp - 1];
        if (u == t)
            return true;
        bool pushed = false;
        for (; g->cur[u] < g->zfirst[u + 1]; g->cur[u]++) {
            uint32_t a = g->zarc[g->cur[u]], v = g->to[a];
            if (g->res[a] > 0 && g->level[v] == g->level[u] + 1) {
                g->parent[v] = a;
                stk[sp++] = v;
                pushed = true;
                break;
            }
        }
        if (pushed)
            continue;
        g->level[u] = UINT32_MAX;   /* a dead end for this round */
        if (--sp)
            g->cur[stk[sp - 1]]++;
    }
    return false;
}

static int64_t path_capacity(const pk_mcf *g, uint32_t s, uint32_t t)
{
    int64_t c = PK_MCF_INF;
    for (uint32_t v = t; v != s;) {
        uint32_t a = g->parent[v];
        if (g->res[a] < c)
            c = g->res[a];
        v = g->to[g->rev[a]];
    }
    return c;
}

static void push_arc(pk_mcf *g, uint32_t a, int64_t f)
{
    g->res[a] -= f;
    g->res[g->rev[a]] += f;
}

static void augment_path(pk_mcf *g, uint32_t s, uint32_t t, int64_t f)
{
    for (uint32_t v = t; v != s;) {
        uint32_t a = g->parent[v];
        push_arc(g, a, f);
        v = g->to[g->rev[a]];
    }
}

static inline bool dag_arc_ok(const pk_mcf *g, uint32_t u, uint32_t a, uint32_t s, uint32_t t, int64_t mincap)
{
    return u != t && g->to[a] != s && g->res[a] >= mincap;   /* a is in zarc: reduced cost 0 */
}

/* profi's augmenting DAG: a DFS from s along admissible arcs with enough
 * residual capacity, in which a node whose subtree did not reach t may be
 * entered again (at most MAX_DFS_CALLS times). Nodes that reach t are
 * "taken"; the DAG is their arcs to taken nodes finished earlier, so it is
 * acyclic, and the nodes in decreasing finish time are a topological
 * order from s to t. Returns the number of nodes in g->order. */
static uint32_t find_dag(pk_mcf *g, uint32_t s, uint32_t t, int64_t mincap)
{
    uint32_t ep = ++g->epoch;
    /* First, backwards from t, the nodes that reach it at all: the DFS
     * then never walks into dead ends (profi's DFS does, up to ten times
     * per node). The arcs into v with reduced cost 0 are the reverses of
     * v's own such arcs. */
    size_t qh = 0, qt = 0;
    g->queue[qt++] = t;
    g->rstamp[t] = ep;
    while (qh < qt) {
        uint32_t v = g->queue[qh++];
        for (uint32_t z = g->zfirst[v]; z < g->zfirst[v + 1]; z++) {
            uint32_t a = g->rev[g->zarc[z]], u = g->to[g->zarc[z]];
            if (g->rstamp[u] != ep && u != t && v != s && g->res[a] >= mincap) {
                g->rstamp[u] = ep;
                g->queue[qt++] = u;
            }
        }
    }
    if (g->rstamp[s] != ep)
        return 0;
#define FRESH(v) do { if (g->stamp[v] != ep) { g->stamp[v] = ep; g->disc[v] = g->fin[v] = 0; \
        g->ncalls[v] = 0; g->taken[v] = 0; } } while (0)
    uint64_t time = 0;
    uint32_t norder = 0;
    FRESH(t);
    g->taken[t] = 1;
    FRESH(s);
    size_t sp = 0;
    g->stk_node[sp] = s;
    g->stk_next[sp++] = g->zfirst[s];
    g->disc[s] = ++time;
    while (sp) {
        uint32_t u = g->stk_node[sp - 1];
        uint32_t z = g->stk_next[sp - 1];
        if (z < g->zfirst[u + 1]) {
            uint32_t a = g->zarc[z];
            g->stk_next[sp - 1]++;
            if (!dag_arc_ok(g, u, a, s, t, mincap) || g->rstamp[g->to[a]] != ep)
                continue;
            uint32_t v = g->to[a];
            FRESH(v);
            if (g->disc[v] == 0 && g->ncalls[v] < MAX_DFS_CALLS) {
                g->disc[v] = ++time;
                g->ncalls[v]++;
                g->stk_node[sp] = v;
                g->stk_next[sp++] = g->zfirst[v];
            } else if (g->taken[v] && g->fin[v] != 0) {
                g->taken[u] = 1;
            }
            continue;
        }
        sp--;
        if (!g->taken[u]) {
            g->disc[u] = 0;
        } else {
            g->fin[u] = ++time;
            if (sp)
                g->taken[g->stk_node[sp - 1]] = 1;
            g->order[norder++] = u;
        }
    }
#undef FRESH
    /* decreasing finish time */
    for (uint32_t i = 0; i < norder / 2; i++) {
        uint32_t x = g->order[i];
        g->order[i] = g->order[norder - 1 - i];
        g->order[norder - 1 - i] = x;
    }
    uint32_t k = 0;
    for (uint32_t i = 0; i < norder; i++) {
        uint32_t u = g->order[i];
        g->dag_first[i] = k;
        for (uint32_t z = g->zfirst[u]; z < g->zfirst[u + 1]; z++) {
            uint32_t a = g->zarc[z], v = g->to[a];
            if (dag_arc_ok(g, u, a, s, t, mincap) && g->stamp[v] == ep && g->taken[v] && g->fin[v] != 0 &&
                g->fin[v] < g->fin[u])
                g->dag_arc[k++] = a;
        }
    }
    g->dag_first[norder] = k;
    return norder;
}

/* Sends as much flow as possible over the DAG, split evenly at every node;
 * true when at least one arc became saturated (profi's progress rule). */
static bool augment_dag(pk_mcf *g, uint32_t s, uint32_t t, uint32_t norder)
{
    if (norder < 2 || g->order[0] != s)
        return false;
    for (uint32_t i = 0; i < norder; i++) {
        uint32_t u = g->order[i];
        g->frac[u] = 0;
        g->iflow[u] = 0;
        for (uint32_t k = g->dag_first[i]; k < g->dag_first[i + 1]; k++)
            g->aug[g->dag_arc[k]] = 0;
    }
    /* 1. one unit, split evenly, bounds how much the arcs let through */
    uint64_t amount = (uint64_t)PK_MCF_INF;
    g->frac[s] = FRAC_ONE;
    for (uint32_t i = 0; i < norder; i++) {
        uint32_t u = g->order[i], deg = g->dag_first[i + 1] - g->dag_first[i];
        if (deg == 0)
            continue;
        uint64_t ef = g->frac[u] / deg;
        for (uint32_t k = g->dag_first[i]; k < g->dag_first[i + 1]; k++) {
            uint32_t a = g->dag_arc[k];
            g->frac[g->to[a]] += ef;
            if (g->res[a] >= PK_MCF_INF / 2 || ef == 0)
                continue;
            unsigned __int128 m = ((unsigned __int128)(uint64_t)g->res[a] << 32) / ef;
            if (m < amount)
                amount = (uint64_t)m;
        }
    }
    if (amount == 0)
        return false;
    /* 2. integral flow, rounded up at every split */
    g->iflow[s] = (int64_t)amount;
    for (uint32_t i = 0; i < norder; i++) {
        uint32_t u = g->order[i], deg = g->dag_first[i + 1] - g->dag_first[i];
        if (u == t)
            break;
        if (deg == 0)
            continue;
        int64_t succ = (g->iflow[u] + deg - 1) / deg;
        for (uint32_t k = g->dag_first[i]; k < g->dag_first[i + 1]; k++) {
            uint32_t a = g->dag_arc[k];
            int64_t f = g->iflow[u] < succ ? g->iflow[u] : succ;
            if (g->res[a] < f)
                f = g->res[a];
            g->iflow[g->to[a]] += f;
            g->iflow[u] -= f;
            g->aug[a] += f;
        }
    }
    g->iflow[t] = 0;
    /* 3. what rounding stranded goes back the way it came */
    for (uint32_t i = norder - 1; i > 0; i--) {
        uint32_t idx = i - 1;
        for (uint32_t k = g->dag_first[idx]; k < g->dag_first[idx + 1]; k++) {
            uint32_t a = g->dag_arc[k], v = g->to[a];
            if (g->iflow[v] == 0)
                continue;
            int64_t f = g->iflow[v] < g->aug[a] ? g->iflow[v] : g->aug[a];
            g->iflow[v] -= f;
            g->iflow[g->order[idx]] += f;
            g->aug[a] -= f;
        }
    }
    /* 4. apply */
    bool saturated = false;
    for (uint32_t i = 0; i < norder; i++)
        for (uint32_t k = g->dag_first[i]; k < g->dag_first[i + 1]; k++) {
            uint32_t a = g->dag_arc[k];
            if (g->aug[a] == 0)
                continue;
            push_arc(g, a, g->aug[a]);
            if (g->res[a] == 0)
                saturated = true;
        }
    return saturated;
}

/* After an augmentation, the DAG without its arcs whose residual fell
 * below mincap and without the nodes that no longer reach t: profi would
 * search it again from scratch, finding the same arcs (the reverse arcs
 * the augmentation opened point backwards in the DAG's order, so they
 * could only close cycles). Returns the number of nodes left, 0 when s
 * does not reach t any more. */
static uint32_t prune_dag(pk_mcf *g, uint32_t s, uint32_t t, uint32_t norder, int64_t mincap)
{
    uint8_t *live = g->taken;   /* set for every node of the order below */
    for (uint32_t i = norder; i-- > 0;) {
        uint32_t u = g->order[i];
        live[u] = u == t;
        for (uint32_t k = g->dag_first[i]; k < g->dag_first[i + 1] && !live[u]; k++) {
            uint32_t a = g->dag_arc[k];
            live[u] = g->res[a] >= mincap && live[g->to[a]];
        }
    }
    if (!live[s])
        return 0;
    uint32_t no = 0, k2 = 0;
    for (uint32_t i = 0; i < norder; i++) {
        uint32_t u = g->order[i], lo = g->dag_first[i], hi = g->dag_first[i + 1];
        if (!live[u])
            continue;
        g->order[no] = u;
        g->dag_first[no++] = k2;
        for (uint32_t k = lo; k < hi; k++) {
            uint32_t a = g->dag_arc[k];
            if (g->res[a] >= mincap && live[g->to[a]])
                g->dag_arc[k2++] = a;
        }
    }
    g->dag_first[no] = k2;
    return no;
}

int pk_mcf_solve(pk_mcf *g, uint32_t s, uint32_t t, bool even)
{
    if (build_csr(g) != 0)
        return -1;
    for (;;) {
        if (dijkstra(g, s, t) != 0)
            break;
        /* every shortest path of this length, Dinic style */
        while (bfs_levels(g, s, t)) {
            while (level_path(g, s, t)) {
                int64_t c = path_capacity(g, s, t);
                while (c > 0) {
                    bool progress = false;
                    if (even) {
                        int64_t mincap = c / 2 > 1 ? c / 2 : 1;
                        uint32_t no = find_dag(g, s, t, mincap);
                        progress = augment_dag(g, s, t, no);
                        for (bool more = progress; more && (no = prune_dag(g, s, t, no, mincap)) != 0;)
                            more = augment_dag(g, s, t, no);
                        c = path_capacity(g, s, t);
                    }
                    if (!progress) {
                        augment_path(g, s, t, c);
                        c = 0;
                    }
                }
            }
        }
    }
    return 0;
}
