/* store_fleet_gen.c — a simulated fleet for bench/store_fleet.sh: from one
 * real raw profile, N host profiles with deterministic per-host variation.
 * Host h keeps a fraction 60..100 % of the ranges and branches (which ones
 * depends on h and the entry) and scales each kept count by 0.5..1.5 (at
 * least 1); its statistics words scale by the kept fraction.
 *   store_fleet_gen BASE.raw OUTDIR N [FIRST]   → OUTDIR/host-NNNNN.raw */
#include "aggregate/aggregate.h"

#include <stdio.h>
#include <stdlib.h>

static uint64_t mix(uint64_t a, uint64_t b, uint64_t c)
{
    return pk_hash64(a * 0x9e3779b97f4a7c15ULL ^ pk_hash64(b + 0x632be59bd9b4e019ULL) ^ pk_hash64(c) * 3);
}

static int vary(pk_pairmap *dst, const pk_pairmap *src, uint64_t host, unsigned keep_permille)
{
    for (size_t i = 0; i < src->cap; i++) {
        const pk_pair_count *p = &src->e[i];
        if (!p->n)
            continue;
        uint64_t h = mix(host, p->a, p->b);
        if (h % 1000 >= keep_permille)
            continue;
        uint64_t n = p->n * (500 + (h >> 20) % 1001) / 1000;
        if (pk_pairmap_add(dst, p->a, p->b, n ? n : 1))
            return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: store_fleet_gen BASE.raw OUTDIR N [FIRST]\n");
        return 2;
    }
    pk_err err = {{0}};
    pk_rawprof base;
    if (pk_rawprof_read(&base, argv[1], &err)) {
        fprintf(stderr, "store_fleet_gen: %s\n", err.msg);
        return 1;
    }
    long n = strtol(argv[3], NULL, 10), first = argc > 4 ? strtol(argv[4], NULL, 10) : 0;
    for (long h = first; h < first + n; h++) {
        unsigned keep = 600 + (unsigned)(mix((uint64_t)h, 1, 2) % 401);
        pk_rawprof r;
        char path[4096];
        snprintf(path, sizeof path, "%s/host-%05ld.raw", argv[2], h);
        if (pk_rawprof_init(&r, base.path, base.build_id, base.build_id_size, base.preferred_base, &err) ||
            vary(&r.ranges, &base.ranges, (uint64_t)h, keep) || vary(&r.branches, &base.branches, (uint64_t)h, keep)) {
            fprintf(stderr, "store_fleet_gen: %s\n", err.msg[0] ? err.msg : "out of memory");
            return 1;
        }
        uint64_t *w = (uint64_t *)&r.stats;
        const uint64_t *bw = (const uint64_t *)&base.stats;
        for (size_t k = 0; k < sizeof r.stats / 8; k++)
            w[k] = bw[k] * keep / 1000;
        if (pk_rawprof_write(&r, path, &err)) {
            fprintf(stderr, "store_fleet_gen: %s\n", err.msg);
            return 1;
        }
        pk_rawprof_free(&r);
    }
    pk_rawprof_free(&base);
    return 0;
}
