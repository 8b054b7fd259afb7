/* profile.c — function profiles: storage, building, sorted views
 * (merging and scaling: profile_merge.c). */
#include "profile/profile_int.h"

#include <stddef.h>
#include <stdlib.h>

#define ARENA_CHUNK 256

int pk_profset_init(pk_profset *ps, pk_err *err)
{
    memset(ps, 0, sizeof *ps);
    pk_vec_init(&ps->top, sizeof(pk_fprof *));
    pk_vec_init(&ps->arena, sizeof(pk_fprof *));
    ps->arena_used = ARENA_CHUNK;
    if (pk_names_new(ps, err)) {
        pk_names_free(ps);
        return -1;
    }
    return 0;
}

static void fprof_release(pk_fprof *f)
{
    pk_vec_free(&f->slots);
    free(f->slot_of);
    f->slot_of = NULL;
    f->slot_bits = 0;
    free(f->nobody);
    f->nobody = NULL;
    f->nobody_words = 0;
    pk_u64map_free(&f->calls);
    pk_u64map_free(&f->sites);
    pk_vec_free(&f->children);
}

void pk_profset_free(pk_profset *ps)
{
    for (size_t c = 0; c < ps->arena.len; c++) {
        pk_fprof *chunk = PK_VEC_AT(&ps->arena, pk_fprof *, c);
        size_t used = c + 1 == ps->arena.len ? ps->arena_used : ARENA_CHUNK;
        for (size_t i = 0; i < used; i++)
            fprof_release(&chunk[i]);
        free(chunk);
    }
    pk_vec_free(&ps->arena);
    pk_vec_free(&ps->top);
    pk_u64map_free(&ps->top_of);
    pk_u64map_free(&ps->symbols);
    pk_names_free(ps);
}

int pk_profset_add_symbol(pk_profset *ps, pk_name_id name, pk_err *err)
{
    uint64_t *v = pk_u64map_slot(&ps->symbols, name);
    if (!v)
        return pk_err_set(err, "out of memory");
    *v = 1;
    return 0;
}

size_t pk_profset_num_symbols(const pk_profset *ps) { return ps->symbols.len; }

static pk_fprof *fprof_new(pk_profset *ps, pk_name_id name, pk_err *err)
{
    if (ps->arena_used == ARENA_CHUNK) {
        pk_fprof *chunk = malloc(ARENA_CHUNK * sizeof *chunk);
        pk_fprof **slot = chunk ? pk_vec_push(&ps->arena) : NULL;
        if (!slot) {
            free(chunk);
            pk_err_set(err, "out of memory");
            return NULL;
        }
        *slot = chunk;
        ps->arena_used = 0;
    }
    pk_fprof *f = &PK_VEC_AT(&ps->arena, pk_fprof *, ps->arena.len - 1)[ps->arena_used++];
    memset(f, 0, sizeof *f);
    f->name = name;
    f->ctx = PK_NO_CTX;
    pk_vec_init(&f->slots, sizeof(struct pk_fprof_slot));
    pk_vec_init(&f->children, sizeof(pk_fprof *));
    return f;
}

/* ---- top level ---- */

pk_fprof *pk_profset_find_ctx(const pk_profset *ps, pk_ctx_id ctx)
{
    uint64_t *v = pk_u64map_get(&ps->top_of, ctx);
    if (!v || !*v)
        return NULL;
    return PK_VEC_AT(&ps->top, pk_fprof *, *v - 1);
}

pk_fprof *pk_profset_get_ctx(pk_profset *ps, pk_ctx_id ctx, pk_err *err)
{
    pk_fprof *f = pk_profset_find_ctx(ps, ctx);
    if (f)
        return f;
    size_t n;
    const pk_ctx_frame *fr = pk_profset_ctx(ps, ctx, &n);
    f = fprof_new(ps, fr[n - 1].name, err);
    if (!f)
        return NULL;
    f->ctx = ctx;
    pk_fprof **slot = pk_vec_push(&ps->top);
    uint64_t *v = slot ? pk_u64map_slot(&ps->top_of, ctx) : NULL;
    if (!v) {
        pk_err_set(err, "out of memory");
        return NULL;
    }
    *slot = f;
    *v = ps->top.len;
    return f;
}

pk_fprof *pk_profset_get_func(pk_profset *ps, pk_name_id name, pk_err *err)
{
    pk_ctx_frame fr = {name, 0, 0};
    pk_ctx_id ctx;
    if (pk_profset_intern_ctx(ps, &fr, 1, &ctx, err))
        return NULL;
    return pk_profset_get_ctx(ps, ctx, err);
}

static pk_fprof *find_by_name_id(const pk_profset *ps, pk_name_id id)
{
    pk_ctx_frame fr = {id, 0, 0};
    pk_ctx_id ctx;
    if (pk_profset_lookup_ctx(ps, &fr, 1, &ctx))
        return NULL;
    return pk_profset_find_ctx(ps, ctx);
}

pk_fprof *pk_profset_find(const pk_profset *ps, const char *name)
{
    pk_name_id id;
    if (pk_profset_lookup_name(ps, name, strlen(name), &id))
        return NULL;
    return find_by_name_id(ps, id);
}

pk_fprof *pk_profset_find_guid(const pk_profset *ps, uint64_t guid)
{
    pk_name_id id;
    if (pk_profset_lookup_guid(ps, guid, &id))
        return NULL;
    return find_by_name_id(ps, id);
}

/* Frees a profile's counts and its inlined instances' (they belong to it
 * alone), leaving it empty: merged-away contexts are most of the memory of
 * a context-sensitive profile while the pre-inliner runs. */
static void fprof_empty(pk_fprof *f)
{
    for (size_t i = 0; i < f->children.len; i++)
        fprof_empty(PK_VEC_AT(&f->children, pk_fprof *, i));
    fprof_release(f);
    f->nbody = 0;
}

void pk_profset_remove(pk_profset *ps, pk_fprof *f)
{
    if (f->ctx == PK_NO_CTX || f->removed)
        return;
    uint64_t *v = pk_u64map_get(&ps->top_of, f->ctx);
    if (v)
        *v = 0;
    f->removed = 1;
    fprof_empty(f);
}

bool pk_name_is_ambiguous_init(const char *s)
{
    return !strncmp(s, "__cxx_global_var_init", 21) || !strncmp(s, "__tls_init", 10);
}

static size_t remove_ambiguous_inlinees(const pk_profset *ps, pk_fprof *f)
{
    size_t n = 0;
    for (size_t i = 0; i < f->children.len; i++) {
        pk_fprof *c = PK_VEC_AT(&f->children, pk_fprof *, i);
        if (c->removed)
            continue;
        if (pk_name_is_ambiguous_init(pk_profset_name(ps, c->name))) {
            c->removed = 1; /* the view leaves it out */
            fprof_empty(c);
            n++;
        } else {
            n += remove_ambiguous_inlinees(ps, c);
        }
    }
    return n;
}

size_t pk_profset_remove_ambiguous(pk_profset *ps)
{
    size_t n = 0;
    for (size_t i = 0; i < ps->top.len; i++) {
        pk_fprof *f = PK_VEC_AT(&ps->top, pk_fprof *, i);
        if (f->removed)
            continue;
        if (pk_name_is_ambiguous_init(pk_profset_name(ps, f->name))) {
            pk_profset_remove(ps, f);
            n++;
        } else {
            n += remove_ambiguous_inlinees(ps, f);
        }
    }
    return n;
}

size_t pk_profset_count(const pk_profset *ps)
{
    size_t n = 0;
    for (size_t i = 0; i < ps->top.len; i++)
        n += !PK_VEC_AT(&ps->top, pk_fprof *, i)->removed;
    return n;
}

static int top_cmp(const void *a, const void *b, void *arg)
{
    const pk_fprof *x = *(pk_fprof *const *)a, *y = *(pk_fprof *const *)b;
    if (x->total != y->total)
        return x->total > y->total ? -1 : 1;
    return pk_profset_ctx_cmp(arg, x->ctx, y->ctx);
}

int pk_profset_sorted(const pk_profset *ps, pk_fprof ***out, size_t *n, pk_err *err)
{
    size_t cnt = pk_profset_count(ps), k = 0;
    pk_fprof **a = pk_xrealloc_array(NULL, cnt ? cnt : 1, sizeof *a);
    if (!a)
        return pk_err_set(err, "out of memory");
    for (size_t i = 0; i < ps->top.len; i++) {
        pk_fprof *f = PK_VEC_AT(&ps->top, pk_fprof *, i);
        if (!f->removed)
            a[k++] = f;
    }
    qsort_r(a, k, sizeof *a, top_cmp, (void *)ps);
    *out = a;
    *n = k;
    return 0;
}

/* ---- building ---- */

/* Most profiles (a context's, an inlinee's) touch a handful of locations:
 * those are found by scanning the slots, and the loc → slot index is built
 * only once a profile grows past SLOT_SCAN. The index holds 4-byte slot
 * numbers and compares keys in the slots themselves: a quarter of the
 * memory of a u64 → u64 map, and one cache line less per lookup. */
#define SLOT_SCAN PK_FPROF_SLOT_SCAN

/* Fibonacci hashing: the top bits of the product depend on every key bit
 * (probe locations differ only in their high half). */
static inline size_t slot_hash(uint64_t loc, uint32_t bits)
{
    return (size_t)((loc * 0x9e3779b97f4a7c15ULL) >> (64 - bits));
}

/* Slot index + 1 of loc, 0 if absent. */
static uint64_t slot_find(const pk_fprof *f, uint64_t loc)
{
    const struct pk_fprof_slot *sl = f->slots.data;
    if (f->slot_of) {
        size_t mask = ((size_t)1 << f->slot_bits) - 1;
        for (size_t j = slot_hash(loc, f->slot_bits);; j = (j + 1) & mask) {
            uint32_t v = f->slot_of[j];
            if (!v || sl[v - 1].loc == loc)
                return v;
        }
    }
    for (size_t i = 0; i < f->slots.len; i++)
        if (sl[i].loc == loc)
            return i + 1;
    return 0;
}

/* Rebuilds the index for 2^bits entries from the slots. */
int pk_fprof_slot_index_build(pk_fprof *f, uint32_t bits)
{
    uint32_t *idx = pk_zalloc((size_t)1 << bits, sizeof *idx);
    if (!idx)
        return -1;
    size_t mask = ((size_t)1 << bits) - 1;
    const struct pk_fprof_slot *sl = f->slots.data;
    for (size_t i = 0; i < f->slots.len; i++) {
        size_t j = slot_hash(sl[i].loc, bits);
        while (idx[j])
            j = (j + 1) & mask;
        idx[j] = (uint32_t)(i + 1);
    }
    free(f->slot_of);
    f->slot_of = idx;
    f->slot_bits = bits;
    return 0;
}

/* Marks slot i as holding no body entry (a call-site anchor). */
static int mark_nobody(pk_fprof *f, size_t i, pk_err *err)
{
    size_t w = i >> 6;
    if (w >= f->nobody_words) {
        size_t nw = w + 1 > (size_t)f->nobody_words * 2 ? w + 1 : (size_t)f->nobody_words * 2;
        uint64_t *b = pk_xrealloc_array(f->nobody, nw, sizeof *b);
        if (!b)
            return pk_err_set(err, "out of memory");
        memset(b + f->nobody_words, 0, (nw - f->nobody_words) * sizeof *b);
        f->nobody = b;
        f->nobody_words = (uint32_t)nw;
    }
    f->nobody[w] |= 1ULL << (i & 63);
    return 0;
}

/* The slot of loc, created if absent; `body` makes it (or keeps it) a body
 * entry, otherwise a new slot only anchors call sites. */
static struct pk_fprof_slot *slot_get(pk_fprof *f, uint64_t loc, bool body, uint32_t *idx, pk_err *err)
{
    uint64_t found = slot_find(f, loc);
    if (!found) {
        if (f->slots.len >= UINT32_MAX - 1) {
            pk_err_set(err, "too many locations in one function");
            return NULL;
        }
        /* grow by a quarter, not double: bodies are mostly sized at once
         * (pk_fprof_touch_bodies, merges) and then get a few more
         * locations, and slots are most of a CS profile's memory */
        if (f->slots.len == f->slots.cap &&
            pk_vec_reserve_exact(&f->slots, f->slots.cap < 8 ? 8 : f->slots.cap + f->slots.cap / 4)) {
            pk_err_set(err, "out of memory");
            return NULL;
        }
        if (!body && mark_nobody(f, f->slots.len, err))
            return NULL;
        struct pk_fprof_slot *s = pk_vec_push(&f->slots);
        if (!s) {
            pk_err_set(err, "out of memory");
            return NULL;
        }
        s->loc = loc;
        found = f->slots.len;
        if (body)
            f->nbody++;
        if (found > SLOT_SCAN || f->slot_of) {
            /* at most half full */
            uint32_t bits = pk_fprof_slot_bits_for(found, f->slot_bits ? f->slot_bits : 6);
            if (!f->slot_of || bits != f->slot_bits) {
                if (pk_fprof_slot_index_build(f, bits)) {
                    f->slots.len--;
                    if (body)
                        f->nbody--;
                    else
                        f->nobody[f->slots.len >> 6] &= ~(1ULL << (f->slots.len & 63));
                    pk_err_set(err, "out of memory");
                    return NULL;
                }
            } else {
                size_t mask = ((size_t)1 << bits) - 1, j = slot_hash(loc, bits);
                while (f->slot_of[j])
                    j = (j + 1) & mask;
                f->slot_of[j] = (uint32_t)found;
            }
        }
    } else if (body && !pk_fprof_slot_in_body(f, found - 1)) {
        f->nobody[(found - 1) >> 6] &= ~(1ULL << ((found - 1) & 63));
        f->nbody++;
    }
    *idx = (uint32_t)(found - 1);
    return &PK_VEC_AT(&f->slots, struct pk_fprof_slot, *idx);
}

static struct pk_fprof_slot *body_slot(pk_fprof *f, uint32_t line, uint32_t disc, uint32_t *idx, pk_err *err)
{
    return slot_get(f, pk_loc(line, disc), true, idx, err);
}

int pk_fprof_add_body(pk_fprof *f, uint32_t line, uint32_t disc, uint64_t count, pk_err *err)
{
    uint32_t idx;
    struct pk_fprof_slot *s = body_slot(f, line, disc, &idx, err);
    if (!s)
        return -1;
    s->count = pk_sat_add(s->count, count);
    return 0;
}

int pk_fprof_touch_bodies(pk_fprof *f, const uint64_t *locs, size_t n, pk_err *err)
{
    if (f->slots.len || n <= SLOT_SCAN) {
        for (size_t i = 0; i < n; i++)
            if (pk_fprof_add_body(f, pk_loc_line(locs[i]), pk_loc_disc(locs[i]), 0, err))
                return -1;
        return 0;
    }
    uint32_t bits = pk_fprof_slot_bits_for(n, 6);
    if (pk_vec_reserve(&f->slots, n) || !(f->slot_of = pk_zalloc((size_t)1 << bits, sizeof *f->slot_of)))
        return pk_err_set(err, "out of memory");
    f->slot_bits = bits;
    size_t mask = ((size_t)1 << bits) - 1;
    struct pk_fprof_slot *sl = f->slots.data;
    for (size_t i = 0; i < n; i++) {
        size_t j = slot_hash(locs[i], bits);
        while (f->slot_of[j] && sl[f->slot_of[j] - 1].loc != locs[i])
            j = (j + 1) & mask;
        if (f->slot_of[j])
            continue; /* a repeat */
        sl[f->slots.len++] = (struct pk_fprof_slot){locs[i], 0};
        f->slot_of[j] = (uint32_t)f->slots.len;
    }
    f->nbody = (uint32_t)f->slots.len;
    return 0;
}

int pk_fprof_max_body(pk_fprof *f, uint32_t line, uint32_t disc, uint64_t count, pk_err *err)
{
    uint32_t idx;
    struct pk_fprof_slot *s = body_slot(f, line, disc, &idx, err);
    if (!s)
        return -1;
    if (count > s->count)
        s->count = count;
    return 0;
}

int pk_fprof_set_body(pk_fprof *f, uint32_t line, uint32_t disc, uint64_t count, pk_err *err)
{
    uint32_t idx;
    struct pk_fprof_slot *s = body_slot(f, line, disc, &idx, err);
    if (!s)
        return -1;
    s->count = count;
    return 0;
}

int pk_fprof_add_call(pk_fprof *f, uint32_t line, uint32_t disc, pk_name_id target, uint64_t count, pk_err *err)
{
    uint32_t idx;
    struct pk_fprof_slot *s = body_slot(f, line, disc, &idx, err);
    if (!s)
        return -1;
    uint64_t key = (uint64_t)idx << 32 | target;
    uint64_t *v = pk_u64map_slot(&f->calls, key);
    if (!v)
        return pk_err_set(err, "out of memory");
    *v = pk_sat_add(*v, count);
    return 0;
}

void pk_fprof_clear_calls(pk_fprof *f)
{
    pk_u64map_clear(&f->calls);
}

pk_fprof *pk_fprof_callsite(pk_profset *ps, pk_fprof *f, uint32_t line, uint32_t disc, pk_name_id callee, pk_err *err)
{
    uint32_t idx;
    if (!slot_get(f, pk_loc(line, disc), false, &idx, err))
        return NULL;
    uint64_t key = (uint64_t)idx << 32 | callee;
    uint64_t *v = pk_u64map_get(&f->sites, key);
    if (v)
        return PK_VEC_AT(&f->children, pk_fprof *, *v);
    pk_fprof *c = fprof_new(ps, callee, err);
    if (!c)
        return NULL;
    pk_fprof **slot = pk_vec_push(&f->children);
    v = slot ? pk_u64map_slot(&f->sites, key) : NULL;
    if (!v) {
        pk_err_set(err, "out of memory");
        return NULL;
    }
    *slot = c;
    *v = f->children.len - 1;
    return c;
}

int pk_fprof_get_body(const pk_fprof *f, uint32_t line, uint32_t disc, uint64_t *count)
{
    uint64_t v = slot_find(f, pk_loc(line, disc));
    if (!v)
        return -1;
    const struct pk_fprof_slot *s = &PK_VEC_AT(&f->slots, struct pk_fprof_slot, v - 1);
    if (!pk_fprof_slot_in_body(f, v - 1))
        return -1;
    *count = s->count;
    return 0;
}

pk_fprof *pk_fprof_find_callsite(const pk_fprof *f, uint32_t line, uint32_t disc, pk_name_id callee)
{
    uint64_t v = slot_find(f, pk_loc(line, disc));
    if (!v)
        return NULL;
    uint64_t *c = pk_u64map_get(&f->sites, (v - 1) << 32 | callee);
    return c ? PK_VEC_AT(&f->children, pk_fprof *, *c) : NULL;
}

int pk_fprof_get_call(const pk_fprof *f, uint32_t line, uint32_t disc, pk_name_id target, uint64_t *count)
{
    uint64_t v = slot_find(f, pk_loc(line, disc));
    if (!v)
        return -1;
    uint64_t *c = pk_u64map_get(&f->calls, (v - 1) << 32 | target);
    if (!c)
        return -1;
    *count = *c;
    return 0;
}

uint64_t pk_fprof_head_estimate(const pk_fprof *f)
{
    if (f->head)
        return f->head;
    /* the lowest location: a body entry, or the callsites there */
    uint64_t body_loc = UINT64_MAX, body_count = 0, site_loc = UINT64_MAX;
    for (size_t i = 0; i < f->slots.len; i++) {
        const struct pk_fprof_slot *s = &PK_VEC_AT(&f->slots, struct pk_fprof_slot, i);
        if (pk_fprof_slot_in_body(f, i) && s->loc < body_loc)
            body_loc = s->loc, body_count = s->count;
    }
    for (size_t i = 0; i < pk_u64map_end(&f->sites); i++)
        if (pk_u64map_used(&f->sites, i)) {
            uint64_t loc = PK_VEC_AT(&f->slots, struct pk_fprof_slot, pk_u64map_key(&f->sites, i) >> 32).loc;
            if (loc < site_loc)
                site_loc = loc;
        }
    uint64_t count = 0;
    if (body_loc != UINT64_MAX && body_loc < site_loc) {
        count = body_count;
    } else if (site_loc != UINT64_MAX) {
        for (size_t i = 0; i < pk_u64map_end(&f->sites); i++)
            if (pk_u64map_used(&f->sites, i) &&
                PK_VEC_AT(&f->slots, struct pk_fprof_slot, pk_u64map_key(&f->sites, i) >> 32).loc == site_loc)
                count = pk_sat_add(count, pk_fprof_head_estimate(PK_VEC_AT(&f->children, pk_fprof *, pk_u64map_val(&f->sites, i))));
    }
    return count ? count : f->total > 0;
}

uint64_t pk_fprof_recompute_total(pk_fprof *f)
{
    uint64_t t = 0;
    for (size_t i = 0; i < f->slots.len; i++) {
        const struct pk_fprof_slot *s = &PK_VEC_AT(&f->slots, struct pk_fprof_slot, i);
        if (pk_fprof_slot_in_body(f, i))
            t = pk_sat_add(t, s->count);
    }
    for (size_t i = 0; i < f->children.len; i++)
        t = pk_sat_add(t, pk_fprof_recompute_total(PK_VEC_AT(&f->children, pk_fprof *, i)));
    f->total = t;
    return t;
}

uint64_t pk_fprof_body_sum(const pk_fprof *f)
{
    uint64_t t = 0;
    for (size_t i = 0; i < f->slots.len; i++) {
        const struct pk_fprof_slot *s = &PK_VEC_AT(&f->slots, struct pk_fprof_slot, i);
        if (pk_fprof_slot_in_body(f, i))
            t = pk_sat_add(t, s->count);
    }
    for (size_t i = 0; i < f->children.len; i++)
        t = pk_sat_add(t, pk_fprof_body_sum(PK_VEC_AT(&f->children, pk_fprof *, i)));
    return t;
}

uint64_t pk_fprof_max_count(const pk_fprof *f)
{
    uint64_t m = 0;
    for (size_t i = 0; i < f->slots.len; i++) {
        const struct pk_fprof_slot *s = &PK_VEC_AT(&f->slots, struct pk_fprof_slot, i);
        if (pk_fprof_slot_in_body(f, i) && s->count > m)
            m = s->count;
    }
    for (size_t i = 0; i < f->children.len; i++) {
        uint64_t c = pk_fprof_max_count(PK_VEC_AT(&f->children, pk_fprof *, i));
        if (c > m)
            m = c;
    }
    return m;
}

void pk_fprof_visit_names(const pk_fprof *f, void (*fn)(pk_name_id, void *), void *arg)
{
    for (size_t i = 0; i < pk_u64map_end(&f->calls); i++)
        if (pk_u64map_used(&f->calls, i))
            fn((pk_name_id)pk_u64map_key(&f->calls, i), arg);
    for (size_t i = 0; i < f->children.len; i++) {
        const pk_fprof *c = PK_VEC_AT(&f->children, pk_fprof *, i);
        fn(c->name, arg);
        pk_fprof_visit_names(c, fn, arg);
    }
}

/* ---- views ---- */

static int body_cmp(const void *a, const void *b)
{
    const pk_body_entry *x = a, *y = b;
    uint64_t la = pk_loc(x->line, x->disc), lb = pk_loc(y->line, y->disc);
    return la < lb ? -1 : la > lb;
}

static int target_cmp(const void *a, const void *b, void *arg)
{
    const pk_call_target *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return pk_profset_name_cmp(arg, x->name, y->name);
}

static int site_cmp(const void *a, const void *b, void *arg)
{
    const pk_callsite_entry *x = a, *y = b;
    uint64_t la = pk_loc(x->line, x->disc), lb = pk_loc(y->line, y->disc);
    if (la != lb)
        return la < lb ? -1 : 1;
    return pk_profset_name_cmp(arg, x->callee->name, y->callee->name);
}

/* Body entries in location order. Profiles built in that order (nested
 * ones, read ones) are left as they are; large ones are radix-sorted by
 * location (probe bodies list hundreds of probes in address order: qsort's
 * comparator calls were a few percent of a CS profgen run). */
static void sort_body(pk_fprof_view *v)
{
    pk_body_entry *b = v->body;
    size_t n = v->nbody, i = 1;
    while (i < n && pk_loc(b[i - 1].line, b[i - 1].disc) < pk_loc(b[i].line, b[i].disc))
        i++;
    if (i >= n)
        return;
    if (n > 32) {
        struct keyed {
            uint64_t loc, idx;
        } *k = malloc(n * sizeof *k);
        pk_body_entry *out = malloc(n * sizeof *out);
        if (k && out) {
            for (size_t j = 0; j < n; j++)
                k[j] = (struct keyed){pk_loc(b[j].line, b[j].disc), j};
            if (pk_sort_by_u64(k, n, sizeof *k, offsetof(struct keyed, loc)) == 0) {
                for (size_t j = 0; j < n; j++)
                    out[j] = b[k[j].idx];
                free(k);
                free(v->body);
                v->body = out;
                return;
            }
        }
        free(k);
        free(out);
    }
    qsort(b, n, sizeof *b, body_cmp);
}

int pk_fprof_view_build(const pk_profset *ps, const pk_fprof *f, pk_fprof_view *v, pk_err *err)
{
    memset(v, 0, sizeof *v);
    size_t nslots = f->slots.len;
    v->body = pk_xrealloc_array(NULL, f->nbody ? f->nbody : 1, sizeof *v->body);
    v->sites = pk_xrealloc_array(NULL, f->children.len ? f->children.len : 1, sizeof *v->sites);
    v->targets_ = pk_xrealloc_array(NULL, f->calls.len ? f->calls.len : 1, sizeof *v->targets_);
    /* slot index → body index, to place targets */
    uint32_t *pos = pk_zalloc(nslots ? nslots : 1, sizeof *pos);
    if (!v->body || !v->sites || !v->targets_ || !pos) {
        free(pos);
        pk_fprof_view_free(v);
        return pk_err_set(err, "out of memory");
    }
    /* targets per slot first (pos holds the counts until it holds positions) */
    for (size_t i = 0; i < pk_u64map_end(&f->calls); i++)
        if (pk_u64map_used(&f->calls, i))
            pos[pk_u64map_key(&f->calls, i) >> 32]++;
    size_t tcount = 0;
    for (size_t i = 0; i < nslots; i++) {
        const struct pk_fprof_slot *s = &PK_VEC_AT(&f->slots, struct pk_fprof_slot, i);
        if (!pk_fprof_slot_in_body(f, i))
            continue;
        pk_body_entry *b = &v->body[v->nbody++];
        b->line = pk_loc_line(s->loc);
        b->disc = pk_loc_disc(s->loc);
        b->count = s->count;
        b->ncalls = 0;
        b->calls = v->targets_ + tcount;
        tcount += pos[i];
        pos[i] = (uint32_t)(v->nbody - 1);
    }
    for (size_t i = 0; i < pk_u64map_end(&f->calls); i++) {
        if (!pk_u64map_used(&f->calls, i))
            continue;
        uint32_t slot = (uint32_t)(pk_u64map_key(&f->calls, i) >> 32);
        pk_body_entry *b = &v->body[pos[slot]];
        b->calls[b->ncalls].name = (pk_name_id)pk_u64map_key(&f->calls, i);
        b->calls[b->ncalls].count = pk_u64map_val(&f->calls, i);
        b->ncalls++;
    }
    for (size_t i = 0; i < v->nbody; i++)
        if (v->body[i].ncalls > 1)
            qsort_r(v->body[i].calls, v->body[i].ncalls, sizeof(pk_call_target), target_cmp, (void *)ps);
    /* entries carry their target ranges along when sorted */
    sort_body(v);
    for (size_t i = 0; i < pk_u64map_end(&f->sites); i++) {
        if (!pk_u64map_used(&f->sites, i))
            continue;
        uint32_t slot = (uint32_t)(pk_u64map_key(&f->sites, i) >> 32);
        uint64_t loc = PK_VEC_AT(&f->slots, struct pk_fprof_slot, slot).loc;
        pk_fprof *callee = PK_VEC_AT(&f->children, pk_fprof *, pk_u64map_val(&f->sites, i));
        if (callee->removed)
            continue;
        pk_callsite_entry *c = &v->sites[v->nsites++];
        c->line = pk_loc_line(loc);
        c->disc = pk_loc_disc(loc);
        c->callee = callee;
    }
    qsort_r(v->sites, v->nsites, sizeof *v->sites, site_cmp, (void *)ps);
    free(pos);
    return 0;
}

void pk_fprof_view_free(pk_fprof_view *v)
{
    free(v->body);
    free(v->sites);
    free(v->targets_);
    memset(v, 0, sizeof *v);
}
