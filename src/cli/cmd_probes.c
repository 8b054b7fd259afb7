/* cmd_probes.c — `pgokit probes --binary B`: the decoded pseudo-probe
 * descriptors and probes of a binary, in the notation of llvm-profgen's
 * `--show-pseudo-probe` (prefixed by the probe address), for inspection and
 * for comparing our decoder with llvm-profgen. */
#include "binary/binary.h"
#include "binary/probe_loader.h"
#include "cli/cli.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>

const char pk_cmd_probes_summary[] = "list the pseudo-probes of a binary (as llvm-profgen --show-pseudo-probe)";

static void help(void)
{
    printf("usage: pgokit probes --binary BIN [--no-desc] [--stats] [-q]\n"
           "Prints the .pseudo_probe_desc table, then every probe as\n"
           "  ADDR: [Probe]:\tFUNC: name Index: N  Type: Block  Inlined: @ caller:probe ...\n"
           "  --binary BIN   a binary built with -fpseudo-probe-for-profiling\n"
           "  --no-desc      leave out the .pseudo_probe_desc table\n"
           "  --stats        counts only\n"
           "  -q, --quiet    accepted (probes prints no progress)\n");
}

static int desc_by_guid(const void *a, const void *b)
{
    const pk_probe_desc *x = *(const pk_probe_desc *const *)a, *y = *(const pk_probe_desc *const *)b;
    return x->guid < y->guid ? -1 : x->guid > y->guid;
}

static void print_name(const pk_probe_descs *descs, uint64_t guid)
{
    const pk_probe_desc *d = pk_probe_descs_find(descs, guid);
    if (d)
        printf("%.*s", (int)d->name_len, d->name);
    else
        printf("%" PRIu64, guid);
}

/* Inline context, outermost first: "@ top:6 @ l1:3". */
static void print_context(const pk_probe_table *t, const pk_probe_descs *descs, uint32_t node)
{
    const pk_probe_node *n = &t->nodes[node];
    if (n->parent == PK_PROBE_NO_NODE)
        return;
    print_context(t, descs, n->parent);
    printf(" @ ");
    print_name(descs, t->nodes[n->parent].guid);
    printf(":%u", n->callsite_probe);
}

int pk_cmd_probes(int argc, char **argv)
{
    const char *binary = NULL;
    bool show_desc = true, stats = false;
    static const struct option opts[] = {
        {"binary", required_argument, 0, 'b'}, {"no-desc", no_argument, 0, 'n'},
        {"stats", no_argument, 0, 's'}, {"help", no_argument, 0, 'h'}, {"quiet", no_argument, 0, 'q'},
        {0, 0, 0, 0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "b:hq", opts, NULL)) != -1) {
        switch (c) {
        case 'b': binary = optarg; break;
        case 'n': show_desc = false; break;
        case 's': stats = true; break;
        case 'q': break;
        case 'h': help(); return 0;
        default: return pk_cli_usage("probes", "unknown option");
        }
    }
    if (!binary)
        return pk_cli_usage("probes", "--binary is required");

    pk_err err;
    pk_elf *elf;
    if (pk_elf_open(&elf, binary, &err))
        return pk_cli_fail("probes", &err);
    pk_probe_info info;
    if (pk_probe_info_load(&info, elf, NULL, &err)) {
        pk_elf_close(elf);
        return pk_cli_fail("probes", &err);
    }
    if (show_desc) {
        /* Listed by GUID, as llvm-profgen does. */
        const pk_probe_desc **sorted = malloc(info.descs.n * sizeof *sorted + 1);
        if (!sorted) {
            pk_probe_info_free(&info);
            pk_elf_close(elf);
            pk_err_set(&err, "out of memory");
            return pk_cli_fail("probes", &err);
        }
        for (size_t i = 0; i < info.descs.n; i++)
            sorted[i] = &info.descs.descs[i];
        qsort(sorted, info.descs.n, sizeof *sorted, desc_by_guid);
        printf("Pseudo Probe Desc:\n");
        for (size_t i = 0; i < info.descs.n; i++) {
            const pk_probe_desc *d = sorted[i];
            printf("GUID: %" PRIu64 " Name: %.*s\nHash: %" PRIu64 "\n", d->guid,
                   (int)d->name_len, d->name, d->cfg_hash);
        }
        free(sorted);
    }
    const pk_probe_table *t = &info.table;
    for (size_t i = 0; i < t->n; i++) {
        const pk_probe *p = &t->probes[i];
        printf("%" PRIx64 ": [Probe]:\tFUNC: ", p->addr);
        print_name(&info.descs, t->nodes[p->node].guid);
        printf(" Index: %u  ", p->index);
        if (p->discriminator)
            printf("Discriminator: %u  ", p->discriminator);
        printf("Type: %s  ", pk_probe_type_name(p->type));
        if (t->nodes[p->node].parent != PK_PROBE_NO_NODE) {
            printf("Inlined:");
            print_context(t, &info.descs, p->node);
        }
        printf("\n");
    }
    if (stats)
        fprintf(stderr, "records %" PRIu64 " (with unresolved probes %" PRIu64 ", probes skipped %" PRIu64 "), probes %" PRIu64
                ", sentinels %" PRIu64 " (unresolved %" PRIu64 ")\n",
                t->stats.records, t->stats.unresolved_records, t->stats.unresolved_probes, t->stats.probes,
                t->stats.sentinels, t->stats.unresolved_sentinels);
    pk_probe_info_free(&info);
    pk_elf_close(elf);
    return 0;
}
