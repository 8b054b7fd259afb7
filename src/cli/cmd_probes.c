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
    if (show_desc && pk_probe_fprint_descs(stdout, &info.descs, &err)) {
        pk_probe_info_free(&info);
        pk_elf_close(elf);
        return pk_cli_fail("probes", &err);
    }
    const pk_probe_table *t = &info.table;
    for (size_t i = 0; i < t->n; i++) {
        printf("%" PRIx64 ": ", t->probes[i].addr);
        pk_probe_fprint(stdout, &info, &t->probes[i]);
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
