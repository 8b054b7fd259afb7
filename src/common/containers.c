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

void *pk_zalloc(size_t n, size_t elem)
{
    void *p = pk_xrealloc_array(NULL, n ? n : 1, elem ? elem : 1);
    if (p)
        memset(p, 0, (n ? n : 1) * (elem ? elem : 1));
    return p;
}

int pk_vec_reserve(pk_vec *v, size_t n)
{
    if (n <= v->cap)
        return 0;
    size_t cap = v->cap ? v->cap : 4;
    while (cap < n)
        cap *= 2;
    void *d = pk_xrealloc_array(v->data, cap, v->elem);
    if (!d)
        return -1;
    v->data = d;
    v->cap = cap;
    return 0;
}

int pk_vec_reserve_exact(pk_vec *v, size_t n)
{
    if (n <= v->cap)
        return 0;
    void *d = pk_xrealloc_array(v->data, n, v->elem);
    if (!d)
        return -1;
    v->data = d;
    v->cap = n;
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

size_t pk_u64_lower_bound(const uint64_t *v, size_t n, uint64_t x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

size_t pk_u64_sort_unique(uint64_t *v, size_t n)
{
    if (n < 2)
        return n;
    qsort(v, n, sizeof *v, cmp_u64);
    size_t k = 1;
    for (size_t i = 1; i < n; i++)
        if (v[i] != v[k - 1])
            v[k++] = v[i];
    return k;
}

void pk_vec_shrink(pk_vec *v)
{
    if (v->cap > v->len && v->len) {
        void *d = pk_xrealloc_array(v->data, v->len, v->elem);
        if (d) { /* on failure the larger block is as good */
            v->data = d;
            v->cap = v->len;
        }
    }
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

uint64_t pk_hash_u64s(const uint64_t *w, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ n;
    for (size_t i = 0; i < n; i++) {
        h = (h ^ w[i]) * 0xff51afd7ed558ccdULL;
        h ^= h >> 29;
    }
    return pk_hash64(h);
}

int pk_u64map_init(pk_u64map *m, size_t initial_cap)
{
    size_t cap = 16;
    while (cap < initial_cap)
        cap *= 2;
    memset(m, 0, sizeof *m);
    m->e = pk_zalloc(cap, sizeof *m->e);
    if (!m->e)
        return -1;
    m->cap = cap;
    return 0;
}

void pk_u64map_free(pk_u64map *m)
{
    free(m->e);
    memset(m, 0, sizeof *m);
}

void pk_u64map_clear(pk_u64map *m)
{
    if (m->cap)
        memset(m->e, 0, m->cap * sizeof *m->e);
    m->len = 0;
    m->has_zero = false;
}

static int u64map_grow(pk_u64map *m)
{
    size_t ncap = m->cap ? m->cap * 2 : 16, mask = ncap - 1;
    pk_u64map_entry *ne = pk_zalloc(ncap, sizeof *ne); /* the whole table is about to be used */
    if (!ne)
        return -1;
    for (size_t i = 0; i < m->cap; i++) {
        uint64_t k = m->e[i].key;
        if (!k)
            continue;
        size_t j = pk_hash64(k) & mask;
        while (ne[j].key)
            j = (j + 1) & mask;
        ne[j] = m->e[i];
    }
    free(m->e);
    m->e = ne;
    m->cap = ncap;
    return 0;
}

uint64_t *pk_u64map_slot(pk_u64map *m, uint64_t key)
{
    if (!key) {
        if (!m->has_zero) {
            m->has_zero = true;
            m->zero_val = 0;
            m->len++;
        }
        return &m->zero_val;
    }
    if ((m->len + 1) * 4 > m->cap * 3 && u64map_grow(m))
        return NULL;
    size_t mask = m->cap - 1, j = pk_hash64(key) & mask;
    for (;;) {
        pk_u64map_entry *e = &m->e[j];
        if (e->key == key)
            return &e->val;
        if (!e->key) {
            e->key = key;
            e->val = 0;
            m->len++;
            return &e->val;
        }
        j = (j + 1) & mask;
    }
}

uint64_t *pk_u64map_get(const pk_u64map *m, uint64_t key)
{
    if (!key)
        return m->has_zero ? (uint64_t *)&m->zero_val : NULL;
    if (!m->cap)
        return NULL;
    size_t mask = m->cap - 1, j = pk_hash64(key) & mask;
    for (;;) {
        pk_u64map_entry *e = &m->e[j];
        if (e->key == key)
            return &e->val;
        if (!e->key)
            return NULL;
        j = (j + 1) & mask;
    }
}

void pk_listmap_free(pk_listmap *m)
{
    for (size_t i = 0; i < m->lists.len; i++)
        pk_vec_free(&PK_VEC_AT(&m->lists, pk_vec, i));
    pk_vec_free(&m->lists);
    pk_u64map_free(&m->index);
}

void *pk_listmap_push(pk_listmap *m, uint64_t key)
{
    uint64_t *idx = pk_u64map_slot(&m->index, key);
    if (!idx)
        return NULL;
    if (!*idx) {
        pk_vec *l = pk_vec_push(&m->lists);
        if (!l)
            return NULL; /* the key stays with index 0: absent */
        pk_vec_init(l, m->elem);
        *idx = m->lists.len;
    }
    return pk_vec_push(&PK_VEC_AT(&m->lists, pk_vec, *idx - 1));
}

pk_vec *pk_listmap_get(const pk_listmap *m, uint64_t key)
{
    const uint64_t *idx = pk_u64map_get(&m->index, key);
    return idx && *idx ? &PK_VEC_AT(&m->lists, pk_vec, *idx - 1) : NULL;
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

int pk_sort_by_u64(void *base, size_t n, size_t elem, size_t key_off)
{
    if (n < 2)
        return 0;
    uint8_t *a = base;
    uint64_t all_or = 0, all_and = UINT64_MAX;
    for (size_t i = 0; i < n; i++) {
        uint64_t k;
        memcpy(&k, a + i * elem + key_off, sizeof k);
        all_or |= k;
        all_and &= k;
    }
    uint64_t varying = all_or ^ all_and;
    if (!varying)
        return 0;
    if (n <= 32) { /* insertion sort: stable, no scratch */
        uint8_t tmp[256];
        if (elem <= sizeof tmp) {
            for (size_t i = 1; i < n; i++) {
                uint64_t k;
                memcpy(&k, a + i * elem + key_off, sizeof k);
                size_t j = i;
                for (; j > 0; j--) {
                    uint64_t kj;
                    memcpy(&kj, a + (j - 1) * elem + key_off, sizeof kj);
                    if (kj <= k)
                        break;
                }
                if (j < i) {
                    memcpy(tmp, a + i * elem, elem);
                    memmove(a + (j + 1) * elem, a + j * elem, (i - j) * elem);
                    memcpy(a + j * elem, tmp, elem);
                }
            }
            return 0;
        }
    }
    uint8_t *scratch = malloc(n * elem);
    if (!scratch)
        return -1;
    /* the histograms of every varying digit in one pass over the keys (the
     * counts of a digit do not depend on the order the other passes leave) */
    unsigned shifts[8], nd = 0;
    for (unsigned shift = 0; shift < 64; shift += 8)
        if ((varying >> shift) & 0xff)
            shifts[nd++] = shift;
    size_t count[8][256];
    memset(count, 0, nd * sizeof count[0]);
    for (size_t i = 0; i < n; i++) {
        uint64_t k;
        memcpy(&k, a + i * elem + key_off, sizeof k);
        for (unsigned d = 0; d < nd; d++)
            count[d][(k >> shifts[d]) & 0xff]++;
    }
    uint8_t *src = a, *dst = scratch;
    for (unsigned d = 0; d < nd; d++) {
        unsigned shift = shifts[d];
        size_t *c = count[d], sum = 0;
        for (size_t v = 0; v < 256; v++) {
            size_t x = c[v];
            c[v] = sum;
            sum += x;
        }
        /* fixed-size copies for the common element sizes: a memcpy of a
         * run-time size is a call per element */
#define PK_SCATTER(SZ)                                                        \
        for (size_t i = 0; i < n; i++) {                                      \
            uint64_t k;                                                       \
            memcpy(&k, src + i * (SZ) + key_off, sizeof k);                   \
            memcpy(dst + c[(k >> shift) & 0xff]++ * (SZ), src + i * (SZ), (SZ)); \
        }
        switch (elem) {
        case 8: PK_SCATTER(8) break;
        case 16: PK_SCATTER(16) break;
        case 24: PK_SCATTER(24) break;
        case 32: PK_SCATTER(32) break;
        default: PK_SCATTER(elem) break;
        }
#undef PK_SCATTER
        uint8_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != a)
        memcpy(a, src, n * elem);
    free(scratch);
    return 0;
}

int pk_addr_buckets_build(pk_addr_buckets *b, const void *base, size_t n, size_t elem, size_t key_off)
{
    memset(b, 0, sizeof *b);
    if (!n || n >= UINT32_MAX)
        return 0;
    const uint8_t *a = base;
    uint64_t lo, hi;
    memcpy(&lo, a + key_off, sizeof lo);
    memcpy(&hi, a + (n - 1) * elem + key_off, sizeof hi);
    unsigned shift = 2;
    while (shift < 63 && ((hi - lo) >> shift) > 2 * n + 64)
        shift++;
    size_t nb = (size_t)((hi - lo) >> shift) + 1;
    if (nb > ((size_t)1 << 26))
        return 0;
    uint32_t *first = malloc((nb + 1) * sizeof *first);
    if (!first)
        return -1;
    size_t i = 0;
    for (size_t k = 0; k < nb; k++) {
        /* (k < nb: the start of bucket nb could wrap past UINT64_MAX) */
        uint64_t start = lo + ((uint64_t)k << shift), key;
        while (i < n && (memcpy(&key, a + i * elem + key_off, sizeof key), key < start))
            i++;
        first[k] = (uint32_t)i;
    }
    first[nb] = (uint32_t)n;
    b->first = first;
    b->n = nb;
    b->lo = lo;
    b->shift = shift;
    return 0;
}

void pk_addr_buckets_free(pk_addr_buckets *b)
{
    free(b->first);
    memset(b, 0, sizeof *b);
}

size_t pk_compress_repeats(void *s, size_t n, size_t elem, int max_len)
{
    unsigned char *b = s;
    size_t limit = max_len < 0 ? n / 2 : (size_t)max_len;
    for (size_t k = 1; k <= limit && k <= n / 2; k++) {
        size_t out = 0;
        for (size_t i = 0; i < n;) {
            if (out >= k && i + k <= n && !memcmp(b + (out - k) * elem, b + i * elem, k * elem)) {
                i += k;
                continue;
            }
            if (out != i)
                memmove(b + out * elem, b + i * elem, elem);
            out++;
            i++;
        }
        n = out;
    }
    return n;
}
