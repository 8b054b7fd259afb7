/* report_model.c — the profile walked into what the page shows: functions
 * folded over their instances, the context tree, the pre-inliner's
 * decisions, and block overlap per function; each written as a section of
 * the page's JSON data (see report.h).
 *
 * The pre-inliner's decisions are read back from what it leaves in the
 * profile, two ways:
 *   - a flat context-sensitive profile ([main:3 @ foo] keys) that went
 *     through the pre-inliner carries ContextShouldBeInlined (!Attributes
 *     bit 2) on every context it chose to inline into its caller; a context
 *     of two or more frames without it was not inlined (at compile time it
 *     is merged into its function's base profile);
 *   - a nested profile (profgen's default CSSPGO output, LLVM's
 *     --gen-cs-nested-profile) keeps the inlined contexts as callsites under
 *     their caller, marked ShouldBeInlined; everything not inlined was
 *     merged into the top-level base profiles [foo], whose own body holds
 *     those contexts' samples (the individual contexts are gone).
 * A profile with neither (AutoFDO, probe-only, flat CS without the
 * pre-inliner) has no decisions to show: its inlined callsites, if any, are
 * the inlining of the profiled binary (ContextWasInlined, bit 1, says the
 * same of CS contexts). */
#include "profgen/preinline.h"
#include "profile/block_overlap.h"
#include "report/report_int.h"

#include <stdlib.h>

int64_t rep_name(rep *r, pk_name_id id)
{
    uint64_t *slot = pk_u64map_slot(&r->name_idx, id);
    if (!slot)
        return -1;
    if (!*slot) {
        pk_name_id *n = pk_vec_push(&r->names);
        if (!n)
            return -1;
        *n = id;
        *slot = r->names.len;
    }
    return (int64_t)*slot - 1;
}

void rep_loc_text(char *buf, size_t cap, uint32_t line, uint32_t disc)
{
    if (disc)
        snprintf(buf, cap, "%u.%u", line, disc);
    else
        snprintf(buf, cap, "%u", line);
}

static rep_func *get_func(rep *r, pk_name_id name, pk_err *err)
{
    uint64_t *slot = pk_u64map_slot(&r->func_idx, name);
    if (!slot) {
        pk_err_set(err, "out of memory");
        return NULL;
    }
    if (!*slot) {
        rep_func *f = pk_vec_push(&r->funcs);
        if (!f || pk_u64map_init(&f->locs, 16)) {
            pk_err_set(err, "out of memory");
            return NULL;
        }
        f->name = name;
        *slot = r->funcs.len;
    }
    return &PK_VEC_AT(&r->funcs, rep_func, *slot - 1);
}

/* The child of `parent` for (name, callsite); created when absent. The map
 * key is a hash of the four fields, probed onward on a collision. */
static int64_t get_child(rep *r, uint32_t parent, pk_name_id name, uint32_t line, uint32_t disc, pk_err *err)
{
    uint64_t key = pk_hash64(((uint64_t)parent << 32) | name) ^ pk_hash64(((uint64_t)line << 32 | disc) + 0x9e3779b97f4a7c15ULL);
    for (;; key++) {
        if (!key)
            continue;
        uint64_t *slot = pk_u64map_get(&r->child, key);
        if (!slot)
            break;
        const rep_node *n = &PK_VEC_AT(&r->nodes, rep_node, *slot - 1);
        if (n->parent == parent && n->name == name && n->line == line && n->disc == disc)
            return (int64_t)*slot - 1;
    }
    rep_node *n = pk_vec_push(&r->nodes);
    uint64_t *slot = n ? pk_u64map_slot(&r->child, key) : NULL;
    if (!slot)
        return pk_err_set(err, "out of memory");
    n->parent = parent;
    n->name = name;
    n->line = line;
    n->disc = disc;
    n->depth = PK_VEC_AT(&r->nodes, rep_node, parent).depth + 1;
    if (n->depth > r->max_depth)
        r->max_depth = n->depth;
    *slot = r->nodes.len;
    return (int64_t)r->nodes.len - 1;
}

static uint32_t attr_flags(uint32_t attrs)
{
    return (attrs & PK_ATTR_SHOULD_BE_INLINED ? REP_NODE_SHOULD_INLINE : 0) |
           (attrs & PK_ATTR_WAS_INLINED ? REP_NODE_WAS_INLINED : 0);
}

/* One instance (top-level or inlined) into the function fold and the tree. */
static int walk(rep *r, const pk_fprof *f, uint32_t node, bool inlined, pk_err *err)
{
    pk_fprof_view v;
    if (pk_fprof_view_build(r->ps, f, &v, err))
        return -1;
    int rc = -1;
    rep_func *rf = get_func(r, f->name, err);
    if (!rf)
        goto done;
    uint64_t self = 0;
    for (size_t i = 0; i < v.nbody; i++) {
        uint64_t *c = pk_u64map_slot(&rf->locs, pk_loc(v.body[i].line, v.body[i].disc));
        if (!c) {
            pk_err_set(err, "out of memory");
            goto done;
        }
        *c = pk_sat_add(*c, v.body[i].count);
        self = pk_sat_add(self, v.body[i].count);
    }
    rf->self = pk_sat_add(rf->self, self);
    rf->inlined += inlined;
    r->total = pk_sat_add(r->total, self);
    rep_node *n = &PK_VEC_AT(&r->nodes, rep_node, node);
    n->self = pk_sat_add(n->self, self);
    for (size_t i = 0; i < v.nsites; i++) {
        const pk_fprof *callee = v.sites[i].callee;
        int64_t c = get_child(r, node, callee->name, v.sites[i].line, v.sites[i].disc, err);
        if (c < 0)
            goto done;
        rep_node *cn = &PK_VEC_AT(&r->nodes, rep_node, c);
        cn->flags |= REP_NODE_INLINED | attr_flags(callee->attrs);
        if (callee->attrs & PK_ATTR_SHOULD_BE_INLINED)
            r->nested_inline = true;
        if (walk(r, callee, (uint32_t)c, true, err))
            goto done;
    }
    rc = 0;
done:
    pk_fprof_view_free(&v);
    return rc;
}

int rep_model_build(rep *r, pk_err *err)
{
    pk_vec_init(&r->names, sizeof(pk_name_id));
    pk_vec_init(&r->funcs, sizeof(rep_func));
    pk_vec_init(&r->nodes, sizeof(rep_node));
    if (pk_u64map_init(&r->name_idx, 256) || pk_u64map_init(&r->func_idx, 256) ||
        pk_u64map_init(&r->child, 1024) || !pk_vec_push(&r->nodes))
        return pk_err_set(err, "out of memory");
    const pk_profset *ps = r->ps;
    for (size_t t = 0; t < ps->top.len; t++) {
        const pk_fprof *f = PK_VEC_AT(&ps->top, pk_fprof *, t);
        if (f->removed)
            continue;
        size_t nf;
        const pk_ctx_frame *fr = pk_profset_ctx(ps, f->ctx, &nf);
        uint32_t node = 0;
        for (size_t i = 0; i < nf; i++) {
            int64_t c = get_child(r, node, fr[i].name, i ? fr[i - 1].line : 0, i ? fr[i - 1].disc : 0, err);
            if (c < 0)
                return -1;
            node = (uint32_t)c;
        }
        rep_node *n = &PK_VEC_AT(&r->nodes, rep_node, node);
        n->flags |= REP_NODE_PROFILE | attr_flags(f->attrs);
        rep_func *rf = get_func(r, f->name, err);
        if (!rf)
            return -1;
        rf->total = pk_sat_add(rf->total, f->total);
        rf->head = pk_sat_add(rf->head, f->head);
        rf->contexts++;
        if (walk(r, f, node, false, err))
            return -1;
    }
    /* inclusive totals: a child always comes after its parent */
    for (size_t i = 0; i < r->nodes.len; i++) {
        rep_node *n = &PK_VEC_AT(&r->nodes, rep_node, i);
        n->total = n->self;
    }
    for (size_t i = r->nodes.len; i-- > 1;) {
        rep_node *n = &PK_VEC_AT(&r->nodes, rep_node, i);
        rep_node *p = &PK_VEC_AT(&r->nodes, rep_node, n->parent);
        p->total = pk_sat_add(p->total, n->total);
    }
    return 0;
}

void rep_model_free(rep *r)
{
    for (size_t i = 0; i < r->funcs.len; i++)
        pk_u64map_free(&PK_VEC_AT(&r->funcs, rep_func, i).locs);
    pk_vec_free(&r->funcs);
    pk_vec_free(&r->nodes);
    pk_vec_free(&r->names);
    pk_u64map_free(&r->name_idx);
    pk_u64map_free(&r->func_idx);
    pk_u64map_free(&r->child);
}

static int func_cmp(const void *a, const void *b)
{
    const rep_func *x = *(rep_func *const *)a, *y = *(rep_func *const *)b;
    if (x->self != y->self)
        return x->self > y->self ? -1 : 1;
    if (x->total != y->total)
        return x->total > y->total ? -1 : 1;
    return x->name < y->name ? -1 : x->name > y->name;
}

rep_func **rep_sorted_funcs(rep *r, size_t *n)
{
    rep_func **fs = malloc((r->funcs.len ? r->funcs.len : 1) * sizeof *fs);
    *n = 0;
    if (!fs)
        return NULL;
    for (size_t i = 0; i < r->funcs.len; i++)
        fs[i] = &PK_VEC_AT(&r->funcs, rep_func, i);
    qsort(fs, r->funcs.len, sizeof *fs, func_cmp);
    *n = r->funcs.len;
    return fs;
}

static size_t top_rows(const rep *r) { return r->in->top ? r->in->top : 100; }

void rep_json_summary(rep *r)
{
    const pk_profset *ps = r->ps;
    pk_json *j = &r->j;
    uint64_t stored = 0;
    size_t profiles = 0;
    for (size_t t = 0; t < ps->top.len; t++) {
        const pk_fprof *f = PK_VEC_AT(&ps->top, pk_fprof *, t);
        if (!f->removed) {
            stored = pk_sat_add(stored, f->total);
            profiles++;
        }
    }
    pk_json_begin_object(j, "summary");
    pk_json_str(j, "profile", r->in->profile_path ? r->in->profile_path : "");
    pk_json_str(j, "format", pk_prof_format_name(r->in->format));
    pk_json_bool(j, "probe", ps->kind & PK_PROF_PROBE);
    pk_json_bool(j, "cs", ps->kind & PK_PROF_CS);
    pk_json_bool(j, "preinlined", (ps->kind & PK_PROF_PREINLINED) || r->nested_inline);
    if (r->in->binary_path)
        pk_json_str(j, "binary", r->in->binary_path);
    pk_json_u64(j, "profiles", profiles);
    pk_json_u64(j, "stored_total", stored);
    pk_json_u64(j, "samples", r->total);
    pk_json_u64(j, "functions", r->funcs.len);
    pk_json_u64(j, "max_depth", r->max_depth);
    pk_json_end_object(j);
}

void rep_json_functions(rep *r)
{
    size_t n;
    rep_func **fs = rep_sorted_funcs(r, &n);
    pk_json *j = &r->j;
    size_t rows = n < top_rows(r) ? n : top_rows(r);
    pk_json_begin_object(j, "functions");
    pk_json_u64(j, "count", n);
    pk_json_begin_array(j, "rows");
    for (size_t i = 0; fs && i < rows; i++) {
        pk_json_begin_array(j, NULL); /* [name, self, total, head, contexts, inlined] */
        pk_json_i64(j, NULL, rep_name(r, fs[i]->name));
        pk_json_u64(j, NULL, fs[i]->self);
        pk_json_u64(j, NULL, fs[i]->total);
        pk_json_u64(j, NULL, fs[i]->head);
        pk_json_u64(j, NULL, fs[i]->contexts);
        pk_json_u64(j, NULL, fs[i]->inlined);
        pk_json_end_array(j);
    }
    pk_json_end_array(j);
    pk_json_end_object(j);
    free(fs);
}

/* At most this many tree nodes go into the page: past it the lightest are
 * left out (a node's total is never above its parent's, so what stays is
 * still a tree), and the page says how many. */
#define REP_MAX_NODES 250000

static int u64_desc(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

void rep_json_tree(rep *r)
{
    pk_json *j = &r->j;
    size_t n = r->nodes.len;
    uint64_t cut = 0; /* nodes with total below cut are left out */
    if (n > REP_MAX_NODES) {
        uint64_t *t = malloc(n * sizeof *t);
        if (t) {
            for (size_t i = 0; i < n; i++)
                t[i] = PK_VEC_AT(&r->nodes, rep_node, i).total;
            qsort(t, n, sizeof *t, u64_desc);
            cut = t[REP_MAX_NODES - 1] + 1;
            free(t);
        }
    }
    uint32_t *map = malloc((n ? n : 1) * sizeof *map); /* old index → new, UINT32_MAX: left out */
    size_t kept = 0;
    for (size_t i = 0; map && i < n; i++) {
        const rep_node *nd = &PK_VEC_AT(&r->nodes, rep_node, i);
        map[i] = i == 0 || (nd->total >= cut && map[nd->parent] != UINT32_MAX) ? (uint32_t)kept++ : UINT32_MAX;
    }
    pk_json_begin_object(j, "tree");
    pk_json_u64(j, "nodes", n);
    pk_json_u64(j, "omitted", map ? n - kept : n);
    static const char *const cols[] = {"parent", "name", "line", "disc", "flags", "self", "total"};
    for (int c = 0; c < 7; c++) {
        pk_json_begin_array(j, cols[c]);
        for (size_t i = 0; map && i < n; i++) {
            if (map[i] == UINT32_MAX)
                continue;
            const rep_node *nd = &PK_VEC_AT(&r->nodes, rep_node, i);
            switch (c) {
            case 0: pk_json_i64(j, NULL, i ? (int64_t)map[nd->parent] : -1); break;
            case 1: pk_json_i64(j, NULL, i ? rep_name(r, nd->name) : -1); break;
            case 2: pk_json_u64(j, NULL, nd->line); break;
            case 3: pk_json_u64(j, NULL, nd->disc); break;
            case 4: pk_json_u64(j, NULL, nd->flags); break;
            case 5: pk_json_u64(j, NULL, nd->self); break;
            default: pk_json_u64(j, NULL, nd->total); break;
            }
        }
        pk_json_end_array(j);
    }
    pk_json_end_object(j);
    free(map);
}

/* ---- pre-inliner decisions ---- */

struct decision {
    uint32_t node;        /* in the tree */
    uint64_t samples;
    bool inlined;
};

static int decision_cmp(const void *a, const void *b)
{
    const struct decision *x = a, *y = b;
    if (x->samples != y->samples)
        return x->samples > y->samples ? -1 : 1;
    return x->node < y->node ? -1 : x->node > y->node;
}

/* The frames of a tree node's path, outermost first (pk_profset order: each
 * caller frame carries the callsite of the next one). */
static size_t node_frames(const rep *r, uint32_t node, pk_ctx_frame *fr, size_t cap)
{
    size_t n = 0;
    for (uint32_t k = node; k; k = PK_VEC_AT(&r->nodes, rep_node, k).parent)
        n++;
    if (n > cap)
        return 0;
    size_t i = n;
    uint32_t line = 0, disc = 0;
    for (uint32_t k = node; k; k = PK_VEC_AT(&r->nodes, rep_node, k).parent) {
        const rep_node *nd = &PK_VEC_AT(&r->nodes, rep_node, k);
        fr[--i] = (pk_ctx_frame){nd->name, line, disc};
        line = nd->line;
        disc = nd->disc;
    }
    return n;
}

static void json_context(rep *r, uint32_t node, pk_vec *text)
{
    text->len = 0;
    pk_ctx_frame fr[256];
    size_t n = node_frames(r, node, fr, 256);
    for (size_t i = 0; i < n; i++) {
        const char *nm = pk_profset_name(r->ps, fr[i].name);
        size_t need = strlen(nm) + 32;
        if (pk_vec_reserve(text, text->len + need))
            break;
        char *p = (char *)text->data + text->len;
        char loc[24] = "";
        if (i + 1 < n)
            rep_loc_text(loc, sizeof loc, fr[i].line, fr[i].disc);
        text->len += (size_t)sprintf(p, "%s%s%s%s", i ? " @ " : "", nm, i + 1 < n ? ":" : "", loc);
    }
    /* sprintf left text NUL-terminated */
    pk_json_str(&r->j, "context", text->len ? pk_demangle_text(&r->dm, text->data) : "");
}

int rep_json_decisions(rep *r, pk_err *err)
{
    const pk_profset *ps = r->ps;
    bool flat = (ps->kind & PK_PROF_CS) && (ps->kind & PK_PROF_PREINLINED) && !r->nested_inline;
    const char *mode = r->nested_inline ? "nested" : flat ? "flat" : "none";
    pk_vec ds;
    pk_vec_init(&ds, sizeof(struct decision));
    uint64_t ninl = 0, nnot = 0, sinl = 0, snot = 0;
    for (size_t i = 1; i < r->nodes.len && strcmp(mode, "none"); i++) {
        const rep_node *nd = &PK_VEC_AT(&r->nodes, rep_node, i);
        /* flat: every context of 2+ frames that has a profile; nested: every
         * inlined callsite (kept inlined) */
        bool cand = flat ? (nd->flags & REP_NODE_PROFILE) && nd->depth >= 2 : (nd->flags & REP_NODE_INLINED) != 0;
        if (!cand)
            continue;
        struct decision *d = pk_vec_push(&ds);
        if (!d) {
            pk_vec_free(&ds);
            return pk_err_set(err, "out of memory");
        }
        d->node = (uint32_t)i;
        d->inlined = (nd->flags & REP_NODE_SHOULD_INLINE) != 0;
        d->samples = flat ? nd->self : nd->total;
        if (d->inlined)
            ninl++, sinl = pk_sat_add(sinl, d->samples);
        else
            nnot++, snot = pk_sat_add(snot, d->samples);
    }
    if (ds.len > 1)
        qsort(ds.data, ds.len, sizeof(struct decision), decision_cmp);
    /* code sizes, as the pre-inliner weighed them (needs the binary) */
    pk_ctx_sizes *sizes = NULL;
    const char *size_note = NULL;
    pk_err serr;
    if (ds.len && r->in->bin) {
        if (pk_ctx_sizes_build(&sizes, r->in->bin, ps, (ps->kind & PK_PROF_PROBE) != 0, &serr)) {
            sizes = NULL;
            size_note = serr.msg;
        }
    }
    pk_json *j = &r->j;
    pk_json_begin_object(j, "decisions");
    pk_json_str(j, "mode", mode);
    pk_json_u64(j, "inlined", ninl);
    pk_json_u64(j, "not_inlined", nnot);
    pk_json_u64(j, "inlined_samples", sinl);
    pk_json_u64(j, "not_inlined_samples", snot);
    if (size_note)
        pk_json_str(j, "size_note", size_note);
    pk_json_bool(j, "sizes", sizes != NULL);
    pk_vec text;
    pk_vec_init(&text, 1);
    pk_json_begin_array(j, "rows");
    for (size_t i = 0; i < ds.len && i < top_rows(r); i++) {
        const struct decision *d = &PK_VEC_AT(&ds, struct decision, i);
        const rep_node *nd = &PK_VEC_AT(&r->nodes, rep_node, d->node);
        pk_json_begin_object(j, NULL);
        json_context(r, d->node, &text);
        pk_json_i64(j, "callee", rep_name(r, nd->name));
        pk_json_u64(j, "samples", d->samples);
        pk_json_bool(j, "inlined", d->inlined);
        pk_json_bool(j, "binary_inlined", (nd->flags & REP_NODE_WAS_INLINED) != 0);
        if (sizes) {
            pk_ctx_frame fr[256];
            size_t nf = node_frames(r, d->node, fr, 256);
            if (nf)
                pk_json_u64(j, "size", pk_ctx_sizes_lookup(sizes, fr, nf));
        }
        pk_json_end_object(j);
    }
    pk_json_end_array(j);
    /* nested: the base profiles hold what was not inlined */
    uint64_t nbases = 0, sbases = 0;
    for (size_t i = 1; i < r->nodes.len && r->nested_inline; i++) {
        const rep_node *nd = &PK_VEC_AT(&r->nodes, rep_node, i);
        if (nd->depth == 1 && (nd->flags & REP_NODE_PROFILE))
            nbases++, sbases = pk_sat_add(sbases, nd->self);
    }
    pk_json_u64(j, "base_profiles", nbases);
    pk_json_u64(j, "base_samples", sbases);
    pk_json_begin_array(j, "bases");
    size_t nb = 0;
    for (size_t i = 1; i < r->nodes.len && r->nested_inline && nb < top_rows(r); i++) {
        const rep_node *nd = &PK_VEC_AT(&r->nodes, rep_node, i);
        if (nd->depth != 1 || !(nd->flags & REP_NODE_PROFILE))
            continue;
        pk_json_begin_array(j, NULL); /* [name, own samples, with inlinees] */
        pk_json_i64(j, NULL, rep_name(r, nd->name));
        pk_json_u64(j, NULL, nd->self);
        pk_json_u64(j, NULL, nd->total);
        pk_json_end_array(j);
        nb++;
    }
    pk_json_end_array(j);
    pk_json_end_object(j);
    pk_vec_free(&text);
    pk_vec_free(&ds);
    pk_ctx_sizes_free(sizes);
    return 0;
}

int rep_json_overlap(rep *r, pk_err *err)
{
    if (!r->in->ref)
        return 0;
    pk_block_overlap o;
    pk_block_overlap_func *rows = NULL;
    size_t n = 0;
    if (pk_profset_block_overlap_funcs(r->ps, r->in->ref, &o, &rows, &n, err))
        return -1;
    pk_json *j = &r->j;
    pk_json_begin_object(j, "overlap");
    pk_json_str(j, "reference", r->in->ref_label ? r->in->ref_label : "reference");
    pk_json_double(j, "overlap", o.overlap);
    pk_json_u64(j, "reference_functions", o.ref_functions);
    pk_json_u64(j, "common_functions", o.common_functions);
    pk_json_double(j, "reference_weight_covered", o.ref_weight_covered);
    pk_json_begin_array(j, "rows");
    for (size_t i = 0; i < n && i < top_rows(r); i++) {
        pk_json_begin_array(j, NULL); /* [name, overlap, weight, reference samples, test samples] */
        pk_json_str(j, NULL, pk_demangle_text(&r->dm, pk_profset_name(r->in->ref, rows[i].name)));
        pk_json_double(j, NULL, rows[i].overlap);
        pk_json_double(j, NULL, rows[i].weight);
        pk_json_u64(j, NULL, rows[i].ref_samples);
        pk_json_u64(j, NULL, rows[i].test_samples);
        pk_json_end_array(j);
    }
    pk_json_end_array(j);
    pk_json_end_object(j);
    free(rows);
    return 0;
}
