/* bp_graph.c — building BP problems: node ↔ utility edges from temporal traces
 * and from code similarity, and the start-up order that chains them. */
#include "layout/layout.h"

#include <stdlib.h>

void pk_bp_graph_init(pk_bp_graph *g, size_t n_nodes)
{
    memset(g, 0, sizeof *g);
    g->n_nodes = n_nodes;
    pk_vec_init(&g->edges, sizeof(uint64_t));
    pk_vec_init(&g->weights, sizeof(uint32_t));
}

void pk_bp_graph_free(pk_bp_graph *g)
{
    pk_vec_free(&g->edges);
    pk_vec_free(&g->weights);
    free(g->util_off);
    free(g->utils);
    free(g->util_weight);
    memset(g, 0, sizeof *g);
}

int64_t pk_bp_graph_new_util(pk_bp_graph *g, uint32_t weight, pk_err *err)
{
    if (g->n_utils == UINT32_MAX - 1) {
        pk_err_set(err, "balanced partitioning: too many utilities");
        return -1;
    }
    uint32_t *w = pk_vec_push(&g->weights);
    if (!w) {
        pk_err_set(err, "balanced partitioning: out of memory");
        return -1;
    }
    *w = weight;
    return g->n_utils++;
}

int pk_bp_graph_add_edge(pk_bp_graph *g, uint32_t node, uint32_t util, pk_err *err)
{
    if (node >= g->n_nodes || util >= g->n_utils)
        return pk_err_set(err, "balanced partitioning: edge (%u, %u) out of range", node, util);
    uint64_t *e = pk_vec_push(&g->edges);
    if (!e)
        return pk_err_set(err, "balanced partitioning: out of memory");
    *e = (uint64_t)node << 32 | util;
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* LSD radix sort on the 64-bit keys (edges can number in the millions). */
static int sort_u64(uint64_t *a, size_t n)
{
    if (n < 4096) {
        qsort(a, n, sizeof *a, cmp_u64);
        return 0;
    }
    uint64_t *tmp = malloc(n * sizeof *tmp);
    size_t *cnt = malloc(65537 * sizeof *cnt);
    if (!tmp || !cnt) {
        free(tmp); free(cnt);
        return -1;
    }
    uint64_t *src = a, *dst = tmp;
    for (int shift = 0; shift < 64; shift += 16) {
        memset(cnt, 0, 65537 * sizeof *cnt);
        for (size_t i = 0; i < n; i++)
            cnt[((src[i] >> shift) & 0xffff) + 1]++;
        if (cnt[((src[0] >> shift) & 0xffff) + 1] == n)
            continue; /* one digit value: the pass would not move anything */
        for (size_t b = 0; b < 65536; b++)
            cnt[b + 1] += cnt[b];
        for (size_t i = 0; i < n; i++)
            dst[cnt[(src[i] >> shift) & 0xffff]++] = src[i];
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != a)
        memcpy(a, src, n * sizeof *a);
    free(tmp);
    free(cnt);
    return 0;
}

int pk_bp_graph_finish(pk_bp_graph *g, bool filter_common, pk_err *err)
{
    uint64_t *e = g->edges.data;
    size_t m = g->edges.len;
    if (sort_u64(e, m) != 0)
        return pk_err_set(err, "balanced partitioning: out of memory");
    size_t w = 0;
    for (size_t i = 0; i < m; i++)
        if (w == 0 || e[w - 1] != e[i])
            e[w++] = e[i];
    m = w;
    uint32_t *freq = calloc(g->n_utils ? g->n_utils : 1, sizeof *freq);
    if (!freq)
        return pk_err_set(err, "balanced partitioning: out of memory");
    for (size_t i = 0; i < m; i++)
        freq[(uint32_t)e[i]]++;
    /* Renumber the kept utilities densely (in id order, so deterministic). */
    uint32_t kept = 0;
    for (uint32_t u = 0; u < g->n_utils; u++) {
        bool keep = freq[u] >= 2 && (!filter_common || (size_t)freq[u] * 2 <= g->n_nodes);
        freq[u] = keep ? kept++ : UINT32_MAX;
    }
    g->util_off = calloc(g->n_nodes + 1, sizeof *g->util_off);
    g->utils = malloc((m ? m : 1) * sizeof *g->utils);
    g->util_weight = malloc((kept ? kept : 1) * sizeof *g->util_weight);
    if (!g->util_off || !g->utils || !g->util_weight) {
        free(freq);
        return pk_err_set(err, "balanced partitioning: out of memory");
    }
    const uint32_t *wt = g->weights.data;
    for (uint32_t u = 0; u < g->n_utils; u++)
        if (freq[u] != UINT32_MAX)
            g->util_weight[freq[u]] = wt[u];
    size_t k = 0;
    for (size_t i = 0; i < m; i++) {
        uint32_t node = (uint32_t)(e[i] >> 32), id = freq[(uint32_t)e[i]];
        if (id == UINT32_MAX)
            continue;
        g->utils[k++] = id;
        g->util_off[node + 1]++;
    }
    for (size_t i = 0; i < g->n_nodes; i++)
        g->util_off[i + 1] += g->util_off[i];
    free(freq);
    pk_vec_free(&g->edges);
    g->problem.n_nodes = g->n_nodes;
    g->problem.n_utils = kept;
    g->problem.util_off = g->util_off;
    g->problem.utils = g->utils;
    g->problem.util_weight = g->util_weight;
    return 0;
}

int pk_bp_add_trace_utils(pk_bp_graph *g, const uint32_t *node_of_func, size_t n_funcs,
                          const pk_layout_trace *traces, size_t n_traces,
                          const uint64_t *sizes, pk_err *err)
{
    /* first_win[node]: window in which the node first ran in this trace. */
    uint32_t *first_win = malloc((g->n_nodes ? g->n_nodes : 1) * sizeof *first_win);
    uint32_t *seen = malloc((g->n_nodes ? g->n_nodes : 1) * sizeof *seen);
    if (!first_win || !seen) {
        free(first_win); free(seen);
        return pk_err_set(err, "balanced partitioning: out of memory");
    }
    memset(first_win, 0xff, (g->n_nodes ? g->n_nodes : 1) * sizeof *first_win);
    int rc = 0;
    for (size_t t = 0; t < n_traces && rc == 0; t++) {
        const pk_layout_trace *tr = &traces[t];
        if (tr->weight == 0 || tr->len == 0)
            continue;
        uint32_t weight = tr->weight > UINT32_MAX ? UINT32_MAX : (uint32_t)tr->weight;
        size_t n_seen = 0, step = 0, cut_step = 1;
        uint64_t bytes = 0, cut_bytes = 0;
        uint32_t win = 0;
        for (size_t i = 0; i < tr->len; i++) {
            uint32_t f = tr->funcs[i];
            if (f >= n_funcs) {
                free(first_win); free(seen);
                return pk_err_set(err, "trace %zu: function index %u out of range (%zu functions)",
                                  t, f, n_funcs);
            }
            uint32_t v = node_of_func[f];
            if (v == UINT32_MAX || first_win[v] != UINT32_MAX)
                continue;
            /* A new window opens when the step count doubles, or (size-aware)
             * when the code executed so far doubles. */
            if (step > 0 && (step >= cut_step || (sizes && cut_bytes > 0 && bytes >= cut_bytes))) {
                win++;
                cut_step = 2 * step;
                cut_bytes = 2 * bytes;
            }
            if (step == 0)
                cut_bytes = 0;
            first_win[v] = win;
            seen[n_seen++] = v;
            step++;
            if (sizes) {
                bytes += sizes[f] ? sizes[f] : 1;
                if (cut_bytes == 0)
                    cut_bytes = 2 * bytes;
            }
        }
        int64_t base = -1;
        for (uint32_t w = 0; w <= win; w++) {
            int64_t id = pk_bp_graph_new_util(g, weight, err);
            if (id < 0) {
                rc = -1;
                break;
            }
            if (w == 0)
                base = id;
        }
        for (size_t i = 0; i < n_seen && rc == 0; i++) {
            uint32_t v = seen[i];
            for (uint32_t w = first_win[v]; w <= win && rc == 0; w++)
                rc = pk_bp_graph_add_edge(g, v, (uint32_t)(base + w), err);
        }
        for (size_t i = 0; i < n_seen; i++)
            first_win[seen[i]] = UINT32_MAX;
    }
    free(first_win);
    free(seen);
    return rc;
}

void pk_layout_content_free(pk_layout_content *c)
{
    free(c->off);
    free(c->hashes);
    memset(c, 0, sizeof *c);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

int pk_layout_content_build(pk_layout_content *c, size_t n_funcs, const uint8_t *const *bytes,
                            const uint64_t *sizes, pk_err *err)
{
    memset(c, 0, sizeof *c);
    c->n_funcs = n_funcs;
    size_t total = 0;
    for (size_t i = 0; i < n_funcs; i++)
        if (bytes[i] && sizes[i] >= 4)
            total += sizes[i] - 3;
    c->off = calloc(n_funcs + 1, sizeof *c->off);
    c->hashes = malloc((total ? total : 1) * sizeof *c->hashes);
    if (!c->off || !c->hashes) {
        pk_layout_content_free(c);
        return pk_err_set(err, "code similarity: out of memory");
    }
    size_t k = 0;
    for (size_t i = 0; i < n_funcs; i++) {
        size_t start = k;
        if (bytes[i] && sizes[i] >= 4) {
            for (uint64_t j = 0; j + 4 <= sizes[i]; j++)
                c->hashes[k++] = (uint32_t)pk_hash64(pk_ld32(bytes[i] + j));
            qsort(c->hashes + start, k - start, sizeof *c->hashes, cmp_u32);
            size_t w = start;
            for (size_t j = start; j < k; j++)
                if (w == start || c->hashes[w - 1] != c->hashes[j])
                    c->hashes[w++] = c->hashes[j];
            k = w;
        }
        c->off[i + 1] = k;
    }
    return 0;
}

int pk_bp_add_content_utils(pk_bp_graph *g, const uint32_t *node_of_func,
                            const pk_layout_content *c, pk_err *err)
{
    pk_u64map ids;
    if (pk_u64map_init(&ids, 1024) != 0)
        return pk_err_set(err, "code similarity: out of memory");
    int rc = 0;
    for (size_t f = 0; f < c->n_funcs && rc == 0; f++) {
        uint32_t v = node_of_func[f];
        if (v == UINT32_MAX)
            continue;
        for (size_t k = c->off[f]; k < c->off[f + 1] && rc == 0; k++) {
            uint64_t *slot = pk_u64map_slot(&ids, c->hashes[k]);
            if (!slot) {
                rc = pk_err_set(err, "code similarity: out of memory");
                break;
            }
            if (*slot == 0) {
                int64_t id = pk_bp_graph_new_util(g, 1, err);
                if (id < 0) {
                    rc = -1;
                    break;
                }
                *slot = (uint64_t)id + 1;
            }
            rc = pk_bp_graph_add_edge(g, v, (uint32_t)(*slot - 1), err);
        }
    }
    pk_u64map_free(&ids);
    return rc;
}

void pk_layout_opts_default(pk_layout_opts *o)
{
    memset(o, 0, sizeof *o);
    pk_bp_config_default(&o->bp);
}

typedef struct first_seen {
    uint64_t pos;
    uint32_t func;
} first_seen;

static int cmp_first_seen(const void *a, const void *b)
{
    const first_seen *x = a, *y = b;
    if (x->pos != y->pos)
        return x->pos < y->pos ? -1 : 1;
    return (x->func > y->func) - (x->func < y->func);
}

/* Runs BP over `nodes` (function indexes in input order) with the given
 * utility sources, and writes the ordered functions to out. */
static int bp_group(size_t n_funcs, const uint32_t *nodes, size_t n, const pk_layout_trace *traces,
                    size_t n_traces, const pk_layout_opts *o, bool with_traces, bool with_content,
                    uint32_t *out, pk_err *err)
{
    uint32_t *node_of_func = malloc((n_funcs ? n_funcs : 1) * sizeof *node_of_func);
    uint32_t *perm = malloc((n ? n : 1) * sizeof *perm);
    if (!node_of_func || !perm) {
        free(node_of_func); free(perm);
        return pk_err_set(err, "function ordering: out of memory");
    }
    memset(node_of_func, 0xff, (n_funcs ? n_funcs : 1) * sizeof *node_of_func);
    for (size_t i = 0; i < n; i++)
        node_of_func[nodes[i]] = (uint32_t)i;
    pk_bp_graph g;
    pk_bp_graph_init(&g, n);
    int rc = 0;
    if (with_traces)
        rc = pk_bp_add_trace_utils(&g, node_of_func, n_funcs, traces, n_traces, o->sizes, err);
    if (rc == 0 && with_content)
        rc = pk_bp_add_content_utils(&g, node_of_func, o->content, err);
    if (rc == 0)
        rc = pk_bp_graph_finish(&g, true, err);
    if (rc == 0)
        rc = pk_bp_run(&g.problem, &o->bp, perm, err);
    if (rc == 0)
        for (size_t i = 0; i < n; i++)
            out[i] = nodes[perm[i]];
    pk_bp_graph_free(&g);
    free(node_of_func);
    free(perm);
    return rc;
}

int pk_layout_startup_order(size_t n_funcs, const pk_layout_trace *traces, size_t n_traces,
                            const pk_layout_opts *o, uint32_t **order, size_t *order_len,
                            pk_err *err)
{
    *order = NULL;
    *order_len = 0;
    if (o->content && o->content->n_funcs != n_funcs)
        return pk_err_set(err, "function ordering: code similarity covers %zu functions, not %zu",
                          o->content->n_funcs, n_funcs);
    uint64_t *first = malloc((n_funcs ? n_funcs : 1) * sizeof *first);
    uint32_t *out = malloc((n_funcs ? n_funcs : 1) * sizeof *out);
    first_seen *fs = malloc((n_funcs ? n_funcs : 1) * sizeof *fs);
    uint32_t *nodes = malloc((n_funcs ? n_funcs : 1) * sizeof *nodes);
    if (!first || !out || !fs || !nodes) {
        free(first); free(out); free(fs); free(nodes);
        return pk_err_set(err, "function ordering: out of memory");
    }
    for (size_t f = 0; f < n_funcs; f++)
        first[f] = UINT64_MAX;
    for (size_t t = 0; t < n_traces; t++) {
        if (traces[t].weight == 0)
            continue;
        for (size_t i = 0; i < traces[t].len; i++) {
            uint32_t f = traces[t].funcs[i];
            if (f >= n_funcs) {
                free(first); free(out); free(fs); free(nodes);
                return pk_err_set(err, "trace %zu: function index %u out of range (%zu functions)",
                                  t, f, n_funcs);
            }
            if (i < first[f])
                first[f] = i;
        }
    }
    size_t ns = 0;
    for (size_t f = 0; f < n_funcs; f++)
        if (first[f] != UINT64_MAX)
            fs[ns++] = (first_seen){first[f], (uint32_t)f};
    qsort(fs, ns, sizeof *fs, cmp_first_seen);
    for (size_t i = 0; i < ns; i++)
        nodes[i] = fs[i].func;
    int rc = bp_group(n_funcs, nodes, ns, traces, n_traces, o, true,
                      o->content && o->content_for_startup, out, err);
    size_t len = ns;
    if (rc == 0 && o->order_rest) {
        size_t nr = 0;
        for (size_t f = 0; f < n_funcs; f++)
            if (first[f] == UINT64_MAX)
                nodes[nr++] = (uint32_t)f;
        if (o->content)
            rc = bp_group(n_funcs, nodes, nr, NULL, 0, o, false, true, out + ns, err);
        else
            memcpy(out + ns, nodes, nr * sizeof *nodes);
        len += nr;
    }
    free(first);
    free(fs);
    free(nodes);
    if (rc != 0) {
        free(out);
        return -1;
    }
    *order = out;
    *order_len = len;
    return 0;
}

int pk_layout_evaluate(size_t n_funcs, const uint64_t *sizes, const uint32_t *order, size_t order_len,
                       const pk_layout_trace *traces, size_t n_traces, uint64_t page_size,
                       uint64_t align, pk_layout_eval *out, pk_err *err)
{
    memset(out, 0, sizeof *out);
    if (page_size == 0 || align == 0 || (align & (align - 1)))
        return pk_err_set(err, "layout evaluation: bad page size or alignment");
    uint64_t *start = malloc((n_funcs ? n_funcs : 1) * sizeof *start);
    if (!start)
        return pk_err_set(err, "layout evaluation: out of memory");
    memset(start, 0xff, (n_funcs ? n_funcs : 1) * sizeof *start);
    uint64_t addr = 0;
    for (size_t i = 0; i < order_len; i++) {
        uint32_t f = order[i];
        if (f >= n_funcs || start[f] != UINT64_MAX) {
            free(start);
            return pk_err_set(err, "layout evaluation: order entry %zu (%u) out of range or repeated",
                              i, f);
        }
        addr = (addr + align - 1) & ~(align - 1);
        start[f] = addr;
        addr += sizes[f] ? sizes[f] : 1;
    }
    /* Functions outside the order get a private page each, past the end. */
    uint64_t out_page = addr / page_size + 1;
    pk_u64map all, mine;
    if (pk_u64map_init(&all, 256) != 0 || pk_u64map_init(&mine, 256) != 0) {
        free(start);
        return pk_err_set(err, "layout evaluation: out of memory");
    }
    int rc = 0;
    for (size_t t = 0; t < n_traces && rc == 0; t++) {
        if (traces[t].weight == 0)
            continue;
        pk_u64map_clear(&mine);
        for (size_t i = 0; i < traces[t].len && rc == 0; i++) {
            uint32_t f = traces[t].funcs[i];
            if (f >= n_funcs) {
                rc = pk_err_set(err, "layout evaluation: trace %zu: index %u out of range", t, f);
                break;
            }
            uint64_t p0, p1;
            if (start[f] == UINT64_MAX) {
                p0 = p1 = out_page + f;
            } else {
                p0 = start[f] / page_size;
                p1 = (start[f] + (sizes[f] ? sizes[f] : 1) - 1) / page_size;
            }
            for (uint64_t p = p0; p <= p1; p++) {
                if (!pk_u64map_slot(&mine, p) || !pk_u64map_slot(&all, p)) {
                    rc = pk_err_set(err, "layout evaluation: out of memory");
                    break;
                }
            }
            out->area += mine.len * traces[t].weight;
        }
    }
    out->pages = all.len;
    pk_u64map_free(&all);
    pk_u64map_free(&mine);
    free(start);
    return rc;
}
