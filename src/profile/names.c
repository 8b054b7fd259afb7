/* names.c — the profile set's interned name and context tables. */
#include "profile/profile_int.h"
#include "common/md5.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#define NAME_CHUNK (64 * 1024)

struct name_ent {
    const char *s;
    uint32_t len;
    uint32_t is_guid;
    uint64_t guid;
    uint64_t hash;
};

struct pk_names {
    pk_vec ents;         /* struct name_ent */
    uint32_t *slots;     /* id + 1, 0 = empty */
    size_t cap;
    pk_vec chunks;       /* char * */
    char *cur;
    size_t cur_left;
    pk_u64map by_guid;   /* guid → id (first name with that GUID) */
    pk_u64map guid_only; /* guid → id + 1 for names interned by GUID */
};

struct ctx_ent {
    uint32_t start, n;
    uint64_t hash;
};

struct pk_ctxs {
    pk_vec frames;       /* pk_ctx_frame */
    pk_vec ents;         /* struct ctx_ent */
    uint32_t *slots;
    size_t cap;
};

int pk_names_new(pk_profset *ps, pk_err *err)
{
    ps->names = calloc(1, sizeof *ps->names);
    ps->ctxs = calloc(1, sizeof *ps->ctxs);
    if (!ps->names || !ps->ctxs)
        return pk_err_set(err, "out of memory");
    pk_vec_init(&ps->names->ents, sizeof(struct name_ent));
    pk_vec_init(&ps->names->chunks, sizeof(char *));
    pk_vec_init(&ps->ctxs->frames, sizeof(pk_ctx_frame));
    pk_vec_init(&ps->ctxs->ents, sizeof(struct ctx_ent));
    return 0;
}

void pk_names_free(pk_profset *ps)
{
    struct pk_names *n = ps->names;
    if (n) {
        for (size_t i = 0; i < n->chunks.len; i++)
            free(PK_VEC_AT(&n->chunks, char *, i));
        pk_vec_free(&n->chunks);
        pk_vec_free(&n->ents);
        free(n->slots);
        pk_u64map_free(&n->by_guid);
        pk_u64map_free(&n->guid_only);
        free(n);
    }
    struct pk_ctxs *c = ps->ctxs;
    if (c) {
        pk_vec_free(&c->frames);
        pk_vec_free(&c->ents);
        free(c->slots);
        free(c);
    }
    ps->names = NULL;
    ps->ctxs = NULL;
}

static char *names_store(struct pk_names *n, const char *s, size_t len)
{
    if (len + 1 > n->cur_left) {
        size_t sz = len + 1 > NAME_CHUNK ? len + 1 : NAME_CHUNK;
        char *c = malloc(sz);
        char **slot = c ? pk_vec_push(&n->chunks) : NULL;
        if (!slot) {
            free(c);
            return NULL;
        }
        *slot = c;
        n->cur = c;
        n->cur_left = sz;
    }
    char *d = n->cur;
    memcpy(d, s, len);
    d[len] = 0;
    n->cur += len + 1;
    n->cur_left -= len + 1;
    return d;
}

static int names_grow(struct pk_names *n)
{
    size_t cap = n->cap ? n->cap * 2 : 256;
    uint32_t *slots = pk_zalloc(cap, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t i = 0; i < n->ents.len; i++) {
        const struct name_ent *e = &PK_VEC_AT(&n->ents, struct name_ent, i);
        size_t j = e->hash & (cap - 1);
        while (slots[j])
            j = (j + 1) & (cap - 1);
        slots[j] = (uint32_t)i + 1;
    }
    free(n->slots);
    n->slots = slots;
    n->cap = cap;
    return 0;
}

static int names_add(struct pk_names *n, const char *s, size_t len, int is_guid, uint64_t guid, uint64_t hash,
                     pk_name_id *id, pk_err *err)
{
    if (n->ents.len >= UINT32_MAX - 1 || len >= UINT32_MAX)
        return pk_err_set(err, "too many or too long names");
    if ((n->ents.len + 1) * 2 > n->cap && names_grow(n))
        return pk_err_set(err, "out of memory");
    char *d = names_store(n, s, len);
    struct name_ent *e = d ? pk_vec_push(&n->ents) : NULL;
    if (!e)
        return pk_err_set(err, "out of memory");
    e->s = d;
    e->len = (uint32_t)len;
    e->is_guid = (uint32_t)is_guid;
    e->guid = guid;
    e->hash = hash;
    uint32_t nid = (uint32_t)(n->ents.len - 1);
    if (!is_guid) {
        size_t j = hash & (n->cap - 1);
        while (n->slots[j])
            j = (j + 1) & (n->cap - 1);
        n->slots[j] = nid + 1;
    }
    if (!pk_u64map_get(&n->by_guid, guid)) {
        uint64_t *v = pk_u64map_slot(&n->by_guid, guid);
        if (!v)
            return pk_err_set(err, "out of memory");
        *v = nid;
    }
    *id = nid;
    return 0;
}

int pk_profset_lookup_name(const pk_profset *ps, const char *s, size_t len, pk_name_id *id)
{
    const struct pk_names *n = ps->names;
    if (!n->cap)
        return -1;
    uint64_t h = pk_hash_bytes(s, len);
    size_t j = h & (n->cap - 1);
    while (n->slots[j]) {
        const struct name_ent *e = &PK_VEC_AT(&n->ents, struct name_ent, n->slots[j] - 1);
        if (e->hash == h && e->len == len && !memcmp(e->s, s, len)) {
            *id = n->slots[j] - 1;
            return 0;
        }
        j = (j + 1) & (n->cap - 1);
    }
    return -1;
}

int pk_profset_intern(pk_profset *ps, const char *s, size_t len, pk_name_id *id, pk_err *err)
{
    if (pk_profset_lookup_name(ps, s, len, id) == 0)
        return 0;
    return names_add(ps->names, s, len, 0, pk_md5_guid(s, len), pk_hash_bytes(s, len), id, err);
}

int pk_profset_intern_guid(pk_profset *ps, uint64_t guid, pk_name_id *id, pk_err *err)
{
    struct pk_names *n = ps->names;
    uint64_t *v = pk_u64map_get(&n->guid_only, guid);
    if (v) {
        *id = (pk_name_id)(*v - 1);
        return 0;
    }
    char buf[24];
    int len = snprintf(buf, sizeof buf, "%" PRIu64, guid);
    if (names_add(n, buf, (size_t)len, 1, guid, 0, id, err))
        return -1;
    v = pk_u64map_slot(&n->guid_only, guid);
    if (!v)
        return pk_err_set(err, "out of memory");
    *v = (uint64_t)*id + 1;
    return 0;
}

static const struct name_ent *name_ent(const pk_profset *ps, pk_name_id id)
{
    return &PK_VEC_AT(&ps->names->ents, struct name_ent, id);
}

const char *pk_profset_name(const pk_profset *ps, pk_name_id id) { return name_ent(ps, id)->s; }
size_t pk_profset_name_len(const pk_profset *ps, pk_name_id id) { return name_ent(ps, id)->len; }
uint64_t pk_profset_name_guid(const pk_profset *ps, pk_name_id id) { return name_ent(ps, id)->guid; }
int pk_profset_name_is_guid(const pk_profset *ps, pk_name_id id) { return (int)name_ent(ps, id)->is_guid; }
size_t pk_profset_num_names(const pk_profset *ps) { return ps->names->ents.len; }

int pk_profset_lookup_guid(const pk_profset *ps, uint64_t guid, pk_name_id *id)
{
    uint64_t *v = pk_u64map_get(&ps->names->by_guid, guid);
    if (!v)
        return -1;
    *id = (pk_name_id)*v;
    return 0;
}

int pk_profset_name_cmp(const pk_profset *ps, pk_name_id a, pk_name_id b)
{
    if (a == b)
        return 0;
    const struct name_ent *x = name_ent(ps, a), *y = name_ent(ps, b);
    if (x->is_guid || y->is_guid) {
        if (x->is_guid && y->is_guid)
            return x->guid < y->guid ? -1 : x->guid > y->guid;
        return x->is_guid ? 1 : -1;
    }
    size_t m = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->s, y->s, m);
    if (c)
        return c < 0 ? -1 : 1;
    return x->len < y->len ? -1 : x->len > y->len;
}

/* ---- contexts ---- */

static uint64_t ctx_hash(const pk_ctx_frame *f, size_t n)
{
    /* one multiply per frame word, one full mix at the end: contexts are
     * hashed for every profile lookup of the generator */
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ n;
    for (size_t i = 0; i < n; i++) {
        uint32_t line = i + 1 == n ? 0 : f[i].line, disc = i + 1 == n ? 0 : f[i].disc;
        h = (h ^ ((uint64_t)f[i].name << 32 | line)) * 0xbf58476d1ce4e5b9ULL;
        h = (h ^ (h >> 31) ^ disc) * 0x94d049bb133111ebULL;
    }
    return pk_hash64(h);
}

static int ctx_equal(const pk_ctx_frame *a, const pk_ctx_frame *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (a[i].name != b[i].name)
            return 0;
        if (i + 1 < n && (a[i].line != b[i].line || a[i].disc != b[i].disc))
            return 0;
    }
    return 1;
}

static int ctxs_grow(struct pk_ctxs *c)
{
    size_t cap = c->cap ? c->cap * 2 : 256;
    uint32_t *slots = pk_zalloc(cap, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t i = 0; i < c->ents.len; i++) {
        const struct ctx_ent *e = &PK_VEC_AT(&c->ents, struct ctx_ent, i);
        size_t j = e->hash & (cap - 1);
        while (slots[j])
            j = (j + 1) & (cap - 1);
        slots[j] = (uint32_t)i + 1;
    }
    free(c->slots);
    c->slots = slots;
    c->cap = cap;
    return 0;
}

int pk_profset_lookup_ctx(const pk_profset *ps, const pk_ctx_frame *frames, size_t n, pk_ctx_id *id)
{
    const struct pk_ctxs *c = ps->ctxs;
    if (!c->cap || !n)
        return -1;
    uint64_t h = ctx_hash(frames, n);
    size_t j = h & (c->cap - 1);
    while (c->slots[j]) {
        const struct ctx_ent *e = &PK_VEC_AT(&c->ents, struct ctx_ent, c->slots[j] - 1);
        if (e->hash == h && e->n == n && ctx_equal(&PK_VEC_AT(&c->frames, pk_ctx_frame, e->start), frames, n)) {
            *id = c->slots[j] - 1;
            return 0;
        }
        j = (j + 1) & (c->cap - 1);
    }
    return -1;
}

int pk_profset_intern_ctx(pk_profset *ps, const pk_ctx_frame *frames, size_t n, pk_ctx_id *id, pk_err *err)
{
    if (!n)
        return pk_err_set(err, "empty calling context");
    if (pk_profset_lookup_ctx(ps, frames, n, id) == 0)
        return 0;
    struct pk_ctxs *c = ps->ctxs;
    if (c->ents.len >= UINT32_MAX - 2 || c->frames.len + n >= UINT32_MAX)
        return pk_err_set(err, "too many contexts");
    if ((c->ents.len + 1) * 2 > c->cap && ctxs_grow(c))
        return pk_err_set(err, "out of memory");
    if (pk_vec_reserve(&c->frames, c->frames.len + n))
        return pk_err_set(err, "out of memory");
    uint32_t start = (uint32_t)c->frames.len;
    pk_ctx_frame *f = (pk_ctx_frame *)c->frames.data + start;
    memcpy(f, frames, n * sizeof *frames);
    f[n - 1].line = f[n - 1].disc = 0;
    c->frames.len += n;
    struct ctx_ent *e = pk_vec_push(&c->ents);
    if (!e)
        return pk_err_set(err, "out of memory");
    e->start = start;
    e->n = (uint32_t)n;
    e->hash = ctx_hash(frames, n);
    uint32_t cid = (uint32_t)(c->ents.len - 1);
    size_t j = e->hash & (c->cap - 1);
    while (c->slots[j])
        j = (j + 1) & (c->cap - 1);
    c->slots[j] = cid + 1;
    *id = cid;
    return 0;
}

const pk_ctx_frame *pk_profset_ctx(const pk_profset *ps, pk_ctx_id id, size_t *n)
{
    const struct ctx_ent *e = &PK_VEC_AT(&ps->ctxs->ents, struct ctx_ent, id);
    *n = e->n;
    return &PK_VEC_AT(&ps->ctxs->frames, pk_ctx_frame, e->start);
}

size_t pk_profset_num_ctxs(const pk_profset *ps) { return ps->ctxs->ents.len; }

int pk_profset_ctx_cmp(const pk_profset *ps, pk_ctx_id a, pk_ctx_id b)
{
    if (a == b)
        return 0;
    size_t na, nb;
    const pk_ctx_frame *fa = pk_profset_ctx(ps, a, &na);
    const pk_ctx_frame *fb = pk_profset_ctx(ps, b, &nb);
    for (size_t i = 0; i < na && i < nb; i++) {
        int c = pk_profset_name_cmp(ps, fa[i].name, fb[i].name);
        if (c)
            return c;
        uint64_t la = pk_loc(fa[i].line, fa[i].disc), lb = pk_loc(fb[i].line, fb[i].disc);
        if (la != lb)
            return la < lb ? -1 : 1;
    }
    return na < nb ? -1 : na > nb;
}

size_t pk_profset_ctx_text(const pk_profset *ps, pk_ctx_id id, char *buf, size_t cap)
{
    size_t n, len = 0;
    const pk_ctx_frame *f = pk_profset_ctx(ps, id, &n);
    for (size_t i = 0; i < n; i++) {
        char tmp[40];
        int tl = 0;
        if (i + 1 < n)
            tl = f[i].disc ? snprintf(tmp, sizeof tmp, ":%u.%u @ ", f[i].line, f[i].disc)
                           : snprintf(tmp, sizeof tmp, ":%u @ ", f[i].line);
        size_t nl = pk_profset_name_len(ps, f[i].name);
        const char *ns = pk_profset_name(ps, f[i].name);
        for (size_t k = 0; k < nl; k++, len++)
            if (len + 1 < cap)
                buf[len] = ns[k];
        for (int k = 0; k < tl; k++, len++)
            if (len + 1 < cap)
                buf[len] = tmp[k];
    }
    if (cap)
        buf[len < cap ? len : cap - 1] = 0;
    return len;
}

/* Parses "LINE[.DISC]" fully; returns 0 on success. */
static int parse_loc(const char *s, size_t len, uint32_t *line, uint32_t *disc)
{
    uint64_t v = 0, d = 0;
    size_t i = 0;
    if (!len)
        return -1;
    for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
        if ((v = v * 10 + (uint64_t)(s[i] - '0')) > UINT32_MAX)
            return -1;
    if (!i)
        return -1;
    if (i < len) {
        if (s[i] != '.' || i + 1 == len)
            return -1;
        size_t j = ++i;
        for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
            if ((d = d * 10 + (uint64_t)(s[i] - '0')) > UINT32_MAX)
                return -1;
        if (i != len || i == j)
            return -1;
    }
    *line = (uint32_t)v;
    *disc = (uint32_t)d;
    return 0;
}

int pk_profset_ctx_parse(pk_profset *ps, const char *s, size_t len, pk_ctx_id *id, pk_err *err)
{
    pk_vec frames;
    pk_vec_init(&frames, sizeof(pk_ctx_frame));
    size_t pos = 0;
    int rc = -1;
    for (;;) {
        /* next " @ " separator ends this frame */
        size_t end = pos;
        while (end < len && !(end + 3 <= len && s[end] == ' ' && s[end + 1] == '@' && s[end + 2] == ' '))
            end++;
        int last = end >= len;
        pk_ctx_frame *f = pk_vec_push(&frames);
        if (!f) {
            pk_err_set(err, "out of memory");
            goto out;
        }
        size_t name_end = end;
        if (!last) {
            /* caller frame: name ':' loc; the name may itself contain ':' */
            size_t c = end;
            while (c > pos && s[c - 1] != ':')
                c--;
            if (c <= pos + 1 || parse_loc(s + c, end - c, &f->line, &f->disc)) {
                pk_err_set(err, "bad context frame '%.*s'", (int)(end - pos), s + pos);
                goto out;
            }
            name_end = c - 1;
        }
        if (name_end == pos) {
            pk_err_set(err, "empty function name in context '%.*s'", (int)len, s);
            goto out;
        }
        if (pk_profset_intern(ps, s + pos, name_end - pos, &f->name, err))
            goto out;
        if (last)
            break;
        pos = end + 3;
    }
    rc = pk_profset_intern_ctx(ps, frames.data, frames.len, id, err);
out:
    pk_vec_free(&frames);
    return rc;
}
