/* probe_loader.c — pseudo-probes of an ELF: sections + GUID → address. */
#include "binary/probe_loader.h"
#include "common/md5.h"

#include <inttypes.h>
#include <stdlib.h>

bool pk_elf_has_pseudo_probes(const pk_elf *elf)
{
    return pk_elf_section_by_name(elf, ".pseudo_probe_desc") != NULL;
}

static int resolve_guid(void *ctx, uint64_t guid, uint64_t *addr)
{
    uint64_t *a = pk_u64map_get(ctx, guid);
    if (!a)
        return -1;
    *addr = *a;
    return 0;
}

/* Records start at the function named by their GUID: MD5 of every function
 * symbol's name (the probe name equals the symbol name, with its .__uniq
 * suffix for internal functions). */
static int guid_addresses(pk_elf *elf, pk_u64map *by_guid, pk_err *err)
{
    size_t nfuncs;
    const pk_elf_symbol *funcs = pk_elf_funcs(elf, &nfuncs);
    if (pk_u64map_init(by_guid, nfuncs * 2 + 16))
        return pk_err_set(err, "%s: out of memory", pk_elf_path(elf));
    for (size_t i = 0; i < nfuncs; i++) {
        uint64_t *slot = pk_u64map_slot(by_guid, pk_md5_guid(funcs[i].name, strlen(funcs[i].name)));
        if (!slot) {
            pk_u64map_free(by_guid);
            return pk_err_set(err, "%s: out of memory", pk_elf_path(elf));
        }
        if (*slot == 0)
            *slot = funcs[i].addr;
    }
    return 0;
}

int pk_probe_info_load(pk_probe_info *info, pk_elf *elf, const pk_u64map *keep, pk_err *err)
{
    memset(info, 0, sizeof *info);
    const char *path = pk_elf_path(elf);
    const pk_elf_section *desc_sec = pk_elf_section_by_name(elf, ".pseudo_probe_desc");
    if (!desc_sec)
        return pk_err_set(err, "%s: no .pseudo_probe_desc section (not built with -fpseudo-probe-for-profiling?)", path);
    const uint8_t *data;
    size_t size;
    if (pk_elf_section_data(elf, desc_sec, &data, &size, err))
        return -1;
    if (pk_probe_descs_decode(&info->descs, data, size, desc_sec->offset, path, err))
        return -1;

    const pk_elf_section *probe_sec = pk_elf_section_by_name(elf, ".pseudo_probe");
    if (!probe_sec)
        return 0; /* descriptors only: nothing was probed into this binary's code */
    if (pk_elf_section_data(elf, probe_sec, &data, &size, err) || guid_addresses(elf, &info->by_guid, err) ||
        pk_probe_table_decode(&info->table, data, size, probe_sec->offset, path, resolve_guid, &info->by_guid,
                              keep, err) ||
        pk_probe_info_add_dwarf_calls(info, elf, 0, err))
        goto fail;
    return 0;
fail:
    pk_probe_table_free(&info->table);
    pk_u64map_free(&info->by_guid);
    pk_probe_descs_free(&info->descs);
    return -1;
}

int pk_probe_info_load_more(pk_probe_info *info, pk_elf *elf, const pk_u64map *more, pk_err *err)
{
    const pk_elf_section *probe_sec = pk_elf_section_by_name(elf, ".pseudo_probe");
    if (!probe_sec || !more->len)
        return 0;
    const uint8_t *data;
    size_t size;
    /* (the GUID map of the first load, made again only if it had none) */
    if (pk_elf_section_data(elf, probe_sec, &data, &size, err) ||
        (!info->by_guid.cap && guid_addresses(elf, &info->by_guid, err)))
        return -1;
    size_t first = info->table.n_nodes;
    if (pk_probe_table_decode_more(&info->table, data, size, probe_sec->offset, pk_elf_path(elf), resolve_guid,
                                   &info->by_guid, more, err))
        return -1;
    return pk_probe_info_add_dwarf_calls(info, elf, first, err);
}

void pk_probe_info_free(pk_probe_info *info)
{
    pk_probe_descs_free(&info->descs);
    pk_probe_table_free(&info->table);
    pk_u64map_free(&info->by_guid);
}

static int desc_by_guid(const void *a, const void *b)
{
    const pk_probe_desc *x = *(const pk_probe_desc *const *)a, *y = *(const pk_probe_desc *const *)b;
    return x->guid < y->guid ? -1 : x->guid > y->guid;
}

int pk_probe_fprint_descs(FILE *out, const pk_probe_descs *descs, pk_err *err)
{
    /* listed by GUID, as llvm-profgen does */
    const pk_probe_desc **sorted = malloc(descs->n * sizeof *sorted + 1);
    if (!sorted)
        return pk_err_set(err, "out of memory");
    for (size_t i = 0; i < descs->n; i++)
        sorted[i] = &descs->descs[i];
    qsort(sorted, descs->n, sizeof *sorted, desc_by_guid);
    fprintf(out, "Pseudo Probe Desc:\n");
    for (size_t i = 0; i < descs->n; i++) {
        const pk_probe_desc *d = sorted[i];
        fprintf(out, "GUID: %" PRIu64 " Name: %.*s\nHash: %" PRIu64 "\n", d->guid, (int)d->name_len, d->name,
                d->cfg_hash);
    }
    free(sorted);
    return 0;
}

static void print_name(FILE *out, const pk_probe_descs *descs, uint64_t guid)
{
    const pk_probe_desc *d = pk_probe_descs_find(descs, guid);
    if (d)
        fprintf(out, "%.*s", (int)d->name_len, d->name);
    else
        fprintf(out, "%" PRIu64, guid);
}

/* Inline context, outermost first: " @ top:6 @ l1:3". */
static void print_context(FILE *out, const pk_probe_table *t, const pk_probe_descs *descs, uint32_t node)
{
    const pk_probe_node *n = &t->nodes[node];
    if (n->parent == PK_PROBE_NO_NODE)
        return;
    print_context(out, t, descs, n->parent);
    fprintf(out, " @ ");
    print_name(out, descs, t->nodes[n->parent].guid);
    fprintf(out, ":%u", n->callsite_probe);
}

void pk_probe_fprint(FILE *out, const pk_probe_info *info, const pk_probe *p)
{
    const pk_probe_table *t = &info->table;
    fprintf(out, "[Probe]:\tFUNC: ");
    print_name(out, &info->descs, t->nodes[p->node].guid);
    fprintf(out, " Index: %u  ", p->index);
    if (p->discriminator)
        fprintf(out, "Discriminator: %u  ", p->discriminator);
    fprintf(out, "Type: %s  ", pk_probe_type_name(p->type));
    if (t->nodes[p->node].parent != PK_PROBE_NO_NODE) {
        fprintf(out, "Inlined:");
        print_context(out, t, &info->descs, p->node);
    }
    fprintf(out, "\n");
}
