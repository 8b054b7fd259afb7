/* containers.c — growable arrays and the flat u64 → u64 map. */
#include "common/pk_common.h"

#include <stdlib.h>

void *pk_xrealloc_array(void *p, size_t n, size_t elem)
{
    if (elem && n > SIZE_MAX / elem)
        return NULL;
    size_t bytes = n * elem;
    return realloc(p, bytes != 0 ? bytes : 1);
}

int pk_vec_reserve(pk_vec *v, size_t n)
{
    if (n <= v->cap)
        return 0;
    size_t cap = v->cap ? v->cap : 16;
    while (cap < n)
        cap *= 2;
    void *d = pk_xrealloc_array(v->data, cap, v->elem);
    if (!d)
        return -1;
    v->data = d;
    v->cap = cap;
    return 0;
}

void *pk_vec_push(pk_vec *v)
{
    if (pk_vec_reserve(v, v->len + 1))
        return NULL;
    void *slot = (char *)v->data + v->len * v->elem;
    memset(slot, 0, v->elem);
    v->len++;
    return slot;
}

void pk_vec_free(pk_vec *v)
{
    free(v->data);
    v->data = NULL;
    v->len = v->cap = 0;
}

uint64_t pk_hash_bytes(const void *p, size_t n)
{
    /* FNV-1a folded through the 64-bit finalizer: fast enough for names. */
    const uint8_t *b = p;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ULL;
    }
    return pk_hash64(h);
}

int pk_u64map_init(pk_u64map *m, size_t initial_cap)
{
    size_t cap = 16;
    while (cap < initial_cap)
        cap *= 2;
    m->keys = calloc(cap, sizeof *m->keys);
    m->vals = calloc(cap, sizeof *m->vals);
    m->used = calloc(cap, 1);
    m->cap = cap;
    m->len = 0;
    if (!m->keys || !m->vals || !m->used) {
        pk_u64map_free(m);
        return -1;
    }
    return 0;
}

void pk_u64map_free(pk_u64map *m)
{
    free(m->keys);
    free(m->vals);
    free(m->used);
    m->keys = m->vals = NULL;
    m->used = NULL;
    m->cap = m->len = 0;
}

static int u64map_grow(pk_u64map *m)
{
    pk_u64map n;
    if (pk_u64map_init(&n, m->cap * 2))
        return -1;
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->used[i])
            continue;
        size_t mask = n.cap - 1, j = pk_hash64(m->keys[i]) & mask;
        while (n.used[j])
            j = (j + 1) & mask;
        n.used[j] = 1;
        n.keys[j] = m->keys[i];
        n.vals[j] = m->vals[i];
        n.len++;
    }
    pk_u64map_free(m);
    *m = n;
    return 0;
}

uint64_t *pk_u64map_slot(pk_u64map *m, uint64_t key)
{
    if ((m->len + 1) * 4 > m->cap * 3 && u64map_grow(m))
        return NULL;
    size_t mask = m->cap - 1, j = pk_hash64(key) & mask;
    while (m->used[j]) {
        if (m->keys[j] == key)
            return &m->vals[j];
        j = (j + 1) & mask;
    }
    m->used[j] = 1;
    m->keys[j] = key;
    m->vals[j] = 0;
    m->len++;
    return &m->vals[j];
}

uint64_t *pk_u64map_get(const pk_u64map *m, uint64_t key)
{
    if (!m->cap)
        return NULL;
    size_t mask = m->cap - 1, j = pk_hash64(key) & mask;
    while (m->used[j]) {
        if (m->keys[j] == key)
            return &m->vals[j];
        j = (j + 1) & mask;
    }
    return NULL;
}

uint64_t pk_cursor_uleb(pk_cursor *c)
{
    uint64_t v = 0;
    const uint8_t *p = c->pos;
    for (unsigned shift = 0; !c->bad; shift += 7) {
        if (p >= c->end || shift > 63) {
            c->bad = true;
            break;
        }
        uint8_t b = *p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            c->pos = p;
            return v;
        }
    }
    return 0;
}

int64_t pk_cursor_sleb(pk_cursor *c)
{
    uint64_t v = 0;
    unsigned shift = 0;
    const uint8_t *p = c->pos;
    while (!c->bad) {
        if (p >= c->end || shift > 63) {
            c->bad = true;
            break;
        }
        uint8_t b = *p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
        if (!(b & 0x80)) {
            if (shift < 64 && (b & 0x40))
                v |= ~(uint64_t)0 << shift;
            c->pos = p;
            return (int64_t)v;
        }
    }
    return 0;
}
