/* truth.c — exact counts → reference profile (see truth.h). */
#include "profgen/truth.h"
#include "aggregate/aggregate.h"
#include "binary/probe_loader.h"
#include "profgen/probe_gen.h"
#include "profgen/profgen.h"
#include "record/record.h"

static bool same_binary(const pk_exact_binary *e, pk_elf *elf, const char *path)
{
    const uint8_t *id;
    size_t len;
    pk_elf_build_id(elf, &id, &len);
    if (len && e->build_id_size)
        return len == e->build_id_size && !memcmp(id, e->build_id, len);
    const char *a = strrchr(e->path, '/'), *b = strrchr(path, '/');
    return !strcmp(a ? a + 1 : e->path, b ? b + 1 : path);
}

/* Adds the exact counts of the binary `elf` from one file into raw. */
static int add_exact(const char *exact_path, pk_elf *elf, const char *bin_path, pk_rawprof *raw, pk_err *err)
{
    pk_exact_counts ec;
    if (pk_exact_read(exact_path, &ec, err))
        return -1;
    const pk_exact_binary *eb = NULL;
    for (size_t i = 0; i < ec.nbins && !eb; i++)
        if (same_binary(&ec.bins[i], elf, bin_path))
            eb = &ec.bins[i];
    int rc = -1;
    if (!eb) {
        pk_err_set(err, "%s: no counts for %s (build-id or name)", exact_path, bin_path);
        goto done;
    }
    for (size_t i = 0; i < eb->nranges; i++)
        if (eb->ranges[i].a != PK_EXACT_EXTERNAL && eb->ranges[i].b != PK_EXACT_EXTERNAL &&
            pk_pairmap_add(&raw->ranges, eb->ranges[i].a, eb->ranges[i].b, eb->ranges[i].count))
            goto oom;
    for (size_t i = 0; i < eb->nbranches; i++)
        if (eb->branches[i].b != PK_EXACT_EXTERNAL &&
            pk_pairmap_add(&raw->branches, eb->branches[i].a, eb->branches[i].b, eb->branches[i].count))
            goto oom;
    rc = 0;
    goto done;
oom:
    pk_err_set(err, "out of memory");
done:
    pk_exact_free(&ec);
    return rc;
}

int pk_truth_profile(const char *const *exact_paths, size_t nexact, pk_binary *bin, const char *bin_path,
                     bool probes, pk_profset *out, pk_err *err)
{
    pk_elf *elf = pk_binary_elf(bin);
    const uint8_t *id;
    size_t len;
    pk_elf_build_id(elf, &id, &len);
    pk_rawprof raw;
    if (pk_rawprof_init(&raw, bin_path, id, (uint8_t)(len > 20 ? 20 : len), pk_elf_preferred_base(elf), err))
        return -1;
    int rc = -1;
    for (size_t i = 0; i < nexact; i++)
        if (add_exact(exact_paths[i], elf, bin_path, &raw, err))
            goto done;
    if (probes) {
        pk_probe_info pi;
        pk_probe_gen_stats gs;
        if (pk_probe_info_load(&pi, elf, NULL, err))
            goto done;
        rc = pk_profgen_probe(bin, &pi, &raw, out, &gs, err);
        pk_probe_info_free(&pi);
    } else {
        pk_profgen_opts go = {0};
        pk_profgen_stats gs;
        rc = pk_profgen_line(bin, &raw, &go, out, &gs, err);
    }
done:
    pk_rawprof_free(&raw);
    return rc;
}
