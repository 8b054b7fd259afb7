/* cmd_disasm.c — `pgokit disasm --binary B`: the disassembly of a binary's
 * code as `llvm-profgen --show-disassembly-only` prints it (same text), with
 * its source-location, canonical-name and pseudo-probe annotations. Also
 * what `pgokit llvm-profgen --show-disassembly-only ...` runs. */
#include "cli/cli.h"
#include "profgen/disasm_print.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

const char pk_cmd_disasm_summary[] = "disassemble a binary as llvm-profgen --show-disassembly-only does";

static void help(void)
{
    printf("usage: pgokit disasm --binary BIN [options]\n"
           "Prints every symbol of every executable section of BIN (x86-64 ELF), one\n"
           "instruction a line, in llvm-profgen 19's --show-disassembly-only text.\n"
           "  --binary BIN          the binary (also the first non-option argument)\n"
           "  --debug-binary FILE   read DWARF from FILE\n"
           "  --syntax att|intel    instruction syntax (default att)\n"
           "  --source-locations    each instruction's inline context, \"f:1 @ g:2\"\n"
           "  --canonical-names     names without .llvm.N / .part.N suffixes\n"
           "  --pseudo-probes       the probe descriptors, and the probes at each address\n"
           "  --functions A,B       only these symbols (repeatable)\n"
           "  -q, --quiet           accepted (nothing but the listing is printed)\n");
}

int pk_cmd_disasm(int argc, char **argv)
{
    const char *binary = NULL, *debug = NULL;
    pk_disasm_opts o = {0};
    char **funcs = NULL;
    size_t nfuncs = 0;
    int rc = 2;
    static const struct option lopts[] = {
        {"binary", required_argument, 0, 'b'},   {"debug-binary", required_argument, 0, 'd'},
        {"syntax", required_argument, 0, 'x'},   {"source-locations", no_argument, 0, 'l'},
        {"canonical-names", no_argument, 0, 'c'}, {"pseudo-probes", no_argument, 0, 'p'},
        {"functions", required_argument, 0, 'f'}, {"help", no_argument, 0, 'h'},
        {"quiet", no_argument, 0, 'q'},           {0, 0, 0, 0},
    };
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "b:hq", lopts, NULL)) != -1) {
        switch (c) {
        case 'b': binary = optarg; break;
        case 'd': debug = optarg; break;
        case 'x':
            if (strcmp(optarg, "att") && strcmp(optarg, "intel")) {
                rc = pk_cli_usage("disasm", "--syntax is att or intel, not '%s'", optarg);
                goto done;
            }
            o.intel = !strcmp(optarg, "intel");
            break;
        case 'l': o.source_locations = true; break;
        case 'c': o.canonical_names = true; break;
        case 'p': o.pseudo_probes = true; break;
        case 'f':
            /* a comma-separated list: each name its own string */
            for (const char *s = optarg; *s;) {
                size_t len = strcspn(s, ",");
                char **grown = realloc(funcs, (nfuncs + 1) * sizeof *funcs);
                if (!grown || !(grown[nfuncs] = strndup(s, len))) {
                    if (grown)
                        funcs = grown;
                    rc = 1;
                    goto done;
                }
                funcs = grown;
                nfuncs++;
                s += len + (s[len] == ',');
            }
            break;
        case 'q': break;
        case 'h': help(); rc = 0; goto done;
        default: rc = pk_cli_usage("disasm", "unknown option"); goto done;
        }
    }
    if (!binary && optind < argc)
        binary = argv[optind++];
    if (!binary || optind < argc) {
        rc = pk_cli_usage("disasm", binary ? "one binary only" : "--binary is required");
        goto done;
    }
    o.funcs = (const char *const *)funcs;
    o.nfuncs = nfuncs;
    pk_err err;
    pk_binary *bin;
    if (pk_binary_open(&bin, binary, debug, &err)) {
        rc = pk_cli_fail("disasm", &err);
        goto done;
    }
    rc = pk_disasm_print(stdout, bin, binary, &o, &err) || fflush(stdout) ? pk_cli_fail("disasm", &err) : 0;
    pk_binary_close(bin);
done:
    for (size_t i = 0; i < nfuncs; i++)
        free(funcs[i]);
    free(funcs);
    return rc;
}
