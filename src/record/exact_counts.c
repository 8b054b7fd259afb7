/* exact_counts.c — the exact-counts file (format in record.h): the ground
 * truth of every taken branch and fall-through range of an emulated run. */
#include "record/record.h"

#include <stdlib.h>

#define EXACT_MAGIC "PKEXACT1"
#define EXACT_VERSION 1u

static int cmp_entry(const void *x, const void *y)
{
    const pk_exact_entry *a = x, *b = y;
    if (a->a != b->a)
        return a->a < b->a ? -1 : 1;
    if (a->b != b->b)
        return a->b < b->b ? -1 : 1;
    return 0;
}

size_t pk_exact_normalize(pk_exact_entry *e, size_t n)
{
    if (n == 0)
        return 0;
    qsort(e, n, sizeof *e, cmp_entry);
    size_t w = 0;
    for (size_t i = 1; i < n; i++) {
        if (e[i].a == e[w].a && e[i].b == e[w].b)
            e[w].count += e[i].count;
        else
            e[++w] = e[i];
    }
    return w + 1;
}

static int write_entries(pk_out_file *o, const pk_exact_entry *e, size_t n, pk_err *err)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t v[3] = {e[i].a, e[i].b, e[i].count};
        if (pk_out_write(o, v, sizeof v, err) != 0)
            return -1;
    }
    return 0;
}

int pk_exact_write(const char *path, pk_exact_counts *c, pk_err *err)
{
    pk_out_file *o = malloc(sizeof *o);
    if (!o)
        return pk_err_set(err, "%s: out of memory", path);
    if (pk_out_open(o, path, err) != 0) {
        free(o);
        return -1;
    }
    uint8_t hdr[32] = {0};
    memcpy(hdr, EXACT_MAGIC, 8);
    pk_st32(hdr + 8, EXACT_VERSION);
    pk_st32(hdr + 12, (uint32_t)c->nbins);
    pk_st64(hdr + 16, c->unmapped);
    if (pk_out_write(o, hdr, sizeof hdr, err) != 0)
        goto fail;
    for (size_t i = 0; i < c->nbins; i++) {
        pk_exact_binary *b = &c->bins[i];
        b->nranges = pk_exact_normalize(b->ranges, b->nranges);
        b->nbranches = pk_exact_normalize(b->branches, b->nbranches);
        size_t plen = strlen(b->path);
        uint8_t bh[32] = {0};
        pk_st32(bh, (uint32_t)plen);
        bh[4] = b->build_id_size;
        memcpy(bh + 8, b->build_id, 20);
        static const uint8_t zeros[8];
        uint64_t counts[2] = {b->nranges, b->nbranches};
        if (pk_out_write(o, bh, sizeof bh, err) != 0 || pk_out_write(o, b->path, plen, err) != 0 ||
            pk_out_write(o, zeros, (8 - plen % 8) % 8, err) != 0 ||
            pk_out_write(o, counts, sizeof counts, err) != 0 ||
            write_entries(o, b->ranges, b->nranges, err) != 0 ||
            write_entries(o, b->branches, b->nbranches, err) != 0)
            goto fail;
    }
    if (pk_out_commit(o, err) != 0) {
        free(o);
        return -1;
    }
    free(o);
    return 0;
fail:
    pk_out_abort(o);
    free(o);
    return -1;
}

static int read_entries(const pk_mapped_file *f, uint64_t *pos, uint64_t n, pk_exact_entry **out,
                        const char *what, pk_err *err)
{
    if (n > (f->size - *pos) / 24)
        return pk_err_set(err, "%s: offset %llu: %llu %s entries run past the end of the file",
                          f->path, (unsigned long long)*pos, (unsigned long long)n, what);
    *out = NULL;
    if (n == 0)
        return 0;
    pk_exact_entry *e = malloc(n * sizeof *e);
    if (!e)
        return pk_err_set(err, "%s: out of memory", f->path);
    for (uint64_t i = 0; i < n; i++) {
        const uint8_t *p = f->data + *pos + i * 24;
        e[i] = (pk_exact_entry){pk_ld64(p), pk_ld64(p + 8), pk_ld64(p + 16)};
        if (i > 0 && cmp_entry(&e[i - 1], &e[i]) >= 0) {
            free(e);
            return pk_err_set(err, "%s: offset %llu: %s entries not sorted", f->path,
                              (unsigned long long)(*pos + i * 24), what);
        }
    }
    *pos += n * 24;
    *out = e;
    return 0;
}

static int exact_read(const pk_mapped_file *f, pk_exact_counts *c, pk_err *err)
{
    const char *path = f->path;
    int rc = -1;
    if (f->size < 32 || memcmp(f->data, EXACT_MAGIC, 8) != 0) {
        pk_err_set(err, "%s: offset 0: not a pgokit exact-counts file", path);
        goto out;
    }
    uint32_t version = pk_ld32(f->data + 8), nbins = pk_ld32(f->data + 12);
    if (version != EXACT_VERSION) {
        pk_err_set(err, "%s: offset 8: unsupported exact-counts version %u", path, version);
        goto out;
    }
    c->unmapped = pk_ld64(f->data + 16);
    if (nbins > (f->size - 32) / 48) {
        pk_err_set(err, "%s: offset 12: %u binaries cannot fit in %zu bytes", path, nbins, f->size);
        goto out;
    }
    c->bins = calloc(nbins ? nbins : 1, sizeof *c->bins);
    if (!c->bins) {
        pk_err_set(err, "%s: out of memory", path);
        goto out;
    }
    uint64_t pos = 32;
    for (uint32_t i = 0; i < nbins; i++) {
        if (f->size - pos < 32) {
            pk_err_set(err, "%s: offset %llu: truncated binary header", path, (unsigned long long)pos);
            goto out;
        }
        const uint8_t *h = f->data + pos;
        uint32_t plen = pk_ld32(h);
        pk_exact_binary *b = &c->bins[c->nbins++];
        b->build_id_size = h[4];
        if (b->build_id_size > 20) {
            pk_err_set(err, "%s: offset %llu: build-id size %u > 20", path, (unsigned long long)pos + 4,
                       b->build_id_size);
            goto out;
        }
        memcpy(b->build_id, h + 8, 20);
        pos += 32;
        uint64_t padded = (plen + 7ull) & ~7ull;
        if (padded + 16 > f->size - pos) {
            pk_err_set(err, "%s: offset %llu: path of %u bytes runs past the end", path,
                       (unsigned long long)pos, plen);
            goto out;
        }
        b->path = malloc(plen + 1ull);
        if (!b->path) {
            pk_err_set(err, "%s: out of memory", path);
            goto out;
        }
        memcpy(b->path, f->data + pos, plen);
        b->path[plen] = 0;
        pos += padded;
        uint64_t nr = pk_ld64(f->data + pos), nb = pk_ld64(f->data + pos + 8);
        pos += 16;
        if (read_entries(f, &pos, nr, &b->ranges, "range", err) != 0)
            goto out;
        b->nranges = nr;
        if (read_entries(f, &pos, nb, &b->branches, "branch", err) != 0)
            goto out;
        b->nbranches = nb;
    }
    if (pos != f->size) {
        pk_err_set(err, "%s: offset %llu: %llu trailing bytes", path, (unsigned long long)pos,
                   (unsigned long long)(f->size - pos));
        goto out;
    }
    rc = 0;
out:
    if (rc != 0)
        pk_exact_free(c);
    return rc;
}

int pk_exact_read(const char *path, pk_exact_counts *c, pk_err *err)
{
    memset(c, 0, sizeof *c);
    pk_mapped_file f;
    if (pk_file_map(&f, path, err) != 0)
        return -1;
    int rc = exact_read(&f, c, err);
    pk_file_unmap(&f);
    return rc;
}

int pk_exact_read_mem(const void *data, size_t size, const char *name, pk_exact_counts *c, pk_err *err)
{
    memset(c, 0, sizeof *c);
    pk_mapped_file f;
    if (pk_file_borrow(&f, data, size, name, err) != 0)
        return -1;
    int rc = exact_read(&f, c, err);
    pk_file_unmap(&f);
    return rc;
}

void pk_exact_free(pk_exact_counts *c)
{
    for (size_t i = 0; i < c->nbins; i++) {
        free(c->bins[i].path);
        free(c->bins[i].ranges);
        free(c->bins[i].branches);
    }
    free(c->bins);
    memset(c, 0, sizeof *c);
}

/* Appends n entries to a binary's array. */
static int append_entries(pk_exact_entry **dst, size_t *len, const pk_exact_entry *src, size_t n)
{
    if (!n)
        return 0;
    pk_exact_entry *nd = realloc(*dst, (*len + n) * sizeof *nd);
    if (!nd)
        return -1;
    memcpy(nd + *len, src, n * sizeof *nd);
    *dst = nd;
    *len += n;
    return 0;
}

int pk_exact_merge(char *const *paths, size_t n, const char *out, pk_err *err)
{
    pk_exact_counts all;
    memset(&all, 0, sizeof all);
    size_t cap = 0;
    int rc = -1;
    for (size_t i = 0; i < n; i++) {
        pk_exact_counts c;
        if (pk_exact_read(paths[i], &c, err) != 0)
            goto out;
        all.unmapped += c.unmapped;
        for (size_t k = 0; k < c.nbins; k++) {
            pk_exact_binary *b = &c.bins[k], *to = NULL;
            /* the same file in several processes: one binary */
            for (size_t j = 0; j < all.nbins && !to; j++)
                if (!strcmp(all.bins[j].path, b->path) && all.bins[j].build_id_size == b->build_id_size &&
                    !memcmp(all.bins[j].build_id, b->build_id, b->build_id_size))
                    to = &all.bins[j];
            if (!to) {
                if (all.nbins == cap) {
                    size_t nc = cap ? 2 * cap : 8;
                    pk_exact_binary *nb = realloc(all.bins, nc * sizeof *nb);
                    if (!nb)
                        goto oom;
                    all.bins = nb;
                    cap = nc;
                }
                to = &all.bins[all.nbins++];
                memset(to, 0, sizeof *to);
                to->path = b->path;
                b->path = NULL;
                to->build_id_size = b->build_id_size;
                memcpy(to->build_id, b->build_id, 20);
            }
            if (append_entries(&to->ranges, &to->nranges, b->ranges, b->nranges) != 0 ||
                append_entries(&to->branches, &to->nbranches, b->branches, b->nbranches) != 0)
                goto oom;
        }
        pk_exact_free(&c);
        continue;
oom:
        pk_exact_free(&c);
        pk_err_set(err, "%s: out of memory", out);
        goto out;
    }
    rc = pk_exact_write(out, &all, err);
out:
    pk_exact_free(&all);
    return rc;
}
