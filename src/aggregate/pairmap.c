/* pairmap.c — the flat (u64, u64) → count map behind range and branch counts.
 * One array of 24-byte slots, linear probing: an LBR sample touches ~64
 * entries, so lookups must stay within a cache line or two. */
#include "aggregate/aggregate.h"

#include <stddef.h>
#include <stdlib.h>

/* Every key bit must reach the low bits the mask keeps: keys of one
 * context differ only in their high 32 bits (ctx << 32 | offset), and a
 * multiply alone carries high bits nowhere but up, which once piled whole
 * contexts onto a few probe chains (1,000 probes per insert). */
static inline size_t pair_hash(uint64_t a, uint64_t b)
{
    return (size_t)pk_hash64(a * 0x9e3779b97f4a7c15ULL ^ b);
}

/* Counts saturate at UINT64_MAX (as the profile model's do): a count that
 * wrapped to 0 would mark its slot free, cutting the probe chains through it
 * (keys after it not found, inserted twice) while len still counted it. */
static inline uint64_t sat_add(uint64_t x, uint64_t y) { return x + y < x ? UINT64_MAX : x + y; }

int pk_pairmap_init(pk_pairmap *m, size_t initial_cap)
{
    size_t cap = 64;
    while (cap < initial_cap)
        cap *= 2;
    m->e = pk_zalloc(cap, sizeof *m->e);
    m->cap = m->e ? cap : 0;
    m->len = 0;
    return m->e ? 0 : -1;
}

void pk_pairmap_free(pk_pairmap *m)
{
    free(m->e);
    m->e = NULL;
    m->cap = m->len = 0;
}

static int pairmap_rehash(pk_pairmap *m, size_t ncap)
{
    /* zeroed by writing, not calloc: fresh pages that are read before being
     * written are mapped twice (zero page, then a copy), and with a second
     * thread running each remap interrupts the other CPU for a TLB flush */
    pk_pair_count *ne = pk_zalloc(ncap, sizeof *ne);
    if (!ne)
        return -1;
    size_t mask = ncap - 1;
    for (size_t i = 0; i < m->cap; i++) {
        pk_pair_count *p = &m->e[i];
        if (!p->n)
            continue;
        size_t j = pair_hash(p->a, p->b) & mask;
        while (ne[j].n)
            j = (j + 1) & mask;
        ne[j] = *p;
    }
    free(m->e);
    m->e = ne;
    m->cap = ncap;
    return 0;
}

int pk_pairmap_reserve(pk_pairmap *m, size_t n)
{
    size_t cap = m->cap ? m->cap : 64;
    while (n * 4 > cap * 3)
        cap *= 2;
    return cap > m->cap ? pairmap_rehash(m, cap) : 0;
}

int pk_pairmap_add(pk_pairmap *m, uint64_t a, uint64_t b, uint64_t n)
{
    if (!n)
        return 0;
    if ((m->len + 1) * 4 > m->cap * 3 && pairmap_rehash(m, m->cap ? m->cap * 2 : 64))
        return -1;
    size_t mask = m->cap - 1, j = pair_hash(a, b) & mask;
    for (;;) {
        pk_pair_count *p = &m->e[j];
        if (!p->n) {
            p->a = a;
            p->b = b;
            p->n = n;
            m->len++;
            return 0;
        }
        if (p->a == a && p->b == b) {
            p->n = sat_add(p->n, n);
            return 0;
        }
        j = (j + 1) & mask;
    }
}

int pk_pairmap_add_batch(pk_pairmap *m, const pk_pair_count *items, size_t n)
{
    if (pk_pairmap_reserve(m, m->len + n))
        return -1;
    size_t mask = m->cap - 1;
    for (size_t done = 0; done < n;) {
        size_t k = n - done < 64 ? n - done : 64, at[64];
        const pk_pair_count *it = items + done;
        /* every slot's cache line requested before the first is probed */
        for (size_t i = 0; i < k; i++) {
            at[i] = pair_hash(it[i].a, it[i].b) & mask;
            __builtin_prefetch(&m->e[at[i]], 1);
        }
        for (size_t i = 0; i < k; i++) {
            if (!it[i].n)
                continue;
            for (size_t j = at[i];; j = (j + 1) & mask) {
                pk_pair_count *p = &m->e[j];
                if (!p->n) {
                    *p = it[i];
                    m->len++;
                    break;
                }
                if (p->a == it[i].a && p->b == it[i].b) {
                    p->n = sat_add(p->n, it[i].n);
                    break;
                }
            }
        }
        done += k;
    }
    return 0;
}

uint64_t pk_pairmap_get(const pk_pairmap *m, uint64_t a, uint64_t b)
{
    if (!m->cap)
        return 0;
    size_t mask = m->cap - 1, j = pair_hash(a, b) & mask;
    while (m->e[j].n) {
        if (m->e[j].a == a && m->e[j].b == b)
            return m->e[j].n;
        j = (j + 1) & mask;
    }
    return 0;
}

pk_pair_count *pk_pairmap_sorted(const pk_pairmap *m, size_t *out_len)
{
    *out_len = 0;
    if (!m->len)
        return NULL;
    pk_pair_count *v = malloc(m->len * sizeof *v);
    if (!v)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < m->cap; i++)
        if (m->e[i].n)
            v[k++] = m->e[i];
    if (pk_sort_by_u64(v, k, sizeof *v, offsetof(pk_pair_count, b)) ||
        pk_sort_by_u64(v, k, sizeof *v, offsetof(pk_pair_count, a))) {
        free(v);
        return NULL;
    }
    *out_len = k;
    return v;
}
