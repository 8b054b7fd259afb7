/* cmd_llvm_profgen.c — `pgokit llvm-profgen ARGS...` (also pgokit run through
 * a link named llvm-profgen): llvm-profgen's command line, verbatim, turned
 * into `pgokit profgen`'s. Its defaults are llvm-profgen's: extbinary output,
 * context-sensitive profiles whenever the samples have call stacks (also
 * line-based ones, for binaries without pseudo-probes). Every option
 * llvm-profgen has and pgokit does not is refused by name, never ignored. */
#include "cli/cli.h"
#include "cli/profgen_dumps.h"

#include <stdlib.h>
#include <string.h>

const char pk_cmd_llvm_profgen_summary[] = "llvm-profgen's command line (a drop-in: same options, same meanings)";

/* Options passed on as they are (pgokit profgen has them, same meaning). */
static const char *const same_value[] = {
    "--binary", "--debug-binary", "--dwp", "--output", "--format", "--pid", "--compress-recursion",
    "--csprof-max-context-depth", "--csprof-max-cold-context-depth", "--profile-summary-hot-count",
    "--profile-summary-cold-count", "--profile-summary-cutoff-hot", "--profile-summary-cutoff-cold",
    "--sample-profile-hot-inline-threshold", "--sample-profile-cold-inline-threshold",
    "--profile-density-threshold", "--profile-density-cutoff-hot", "--unsymbolized-profile",
    "--perf-event", "--perf-events", "--sample-period", "--llvm-sample-profile",
};
static const char *const same_bool[] = {
    "--trim-cold-profile", "--csprof-merge-cold-context", "--csspgo-preinliner", "--gen-cs-nested-profile",
    "--use-md5", "--populate-profile-symbol-list", "--update-total-samples", "--show-density",
    "--skip-symbolization", "--use-offset", "--fill-zero-for-all-funcs", "--leading-ip-only",
    "--use-first-loadable-segment-as-base", "--show-mmap-events", "--show-detailed-warning",
    "--use-context-cost-for-preinliner", "--csspgo-replay-preinline", "--mark-all-context-preinlined",
};
/* Booleans that map to a pgokit flag when true. */
static const struct {
    const char *name, *flag_true, *flag_false;
} mapped_bool[] = {
    {"--ignore-stack-samples", "--ignore-stack-samples", NULL},
    {"--use-dwarf-correlation", "--use-dwarf-correlation", NULL},
    {"--infer-missing-frames", NULL, "--no-infer-missing-frames"},
};

/* --show-disassembly-only prints the binary's code and stops: `pgokit
 * disasm`, given these options (flag NULL: only selects disasm). */
static const struct {
    const char *name, *flag;
    bool takes_value;
} disasm_opt[] = {
    {"--show-disassembly-only", NULL, false},        {"--show-source-locations", "--source-locations", false},
    {"--show-canonical-fname", "--canonical-names", false}, {"--show-pseudo-probe", "--pseudo-probes", false},
    {"--disassemble-functions", "--functions", true}, {"--x86-asm-syntax", "--syntax", true},
};

/* "true"/"false" of an llvm boolean (-1: neither). */
static int bool_val(const char *v)
{
    if (!v || !strcmp(v, "true") || !strcmp(v, "1") || !strcmp(v, "TRUE") || !strcmp(v, "True"))
        return 1;
    if (!strcmp(v, "false") || !strcmp(v, "0") || !strcmp(v, "FALSE") || !strcmp(v, "False"))
        return 0;
    return -1;
}

int pk_cmd_llvm_profgen(int argc, char **argv)
{
    const char *cmd = "llvm-profgen";
    /* room for every argument split in two, plus the defaults */
    char **av = calloc((size_t)argc * 2 + 10, sizeof *av);
    char **owned = calloc((size_t)argc + 1, sizeof *owned);
    char **dav = calloc((size_t)argc * 2 + 6, sizeof *dav); /* pgokit disasm's */
    size_t n = 0, nowned = 0, nd = 0;
    bool show_disasm = false;
    const char *disasm_extra = NULL; /* an option only --show-disassembly-only takes */
    int rc = 2;
    if (!av || !owned || !dav) {
        free(av);
        free(owned);
        free(dav);
        return 1;
    }
    dav[nd++] = (char *)"disasm";
    av[n++] = (char *)"profgen";
    bool have_format = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help") || !strcmp(a, "-help")) {
            fputs(pk_llvm_profgen_help, stdout);
            rc = 0;
            goto done;
        }
        if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            av[n++] = (char *)"-q";
            continue;
        }
        if (a[0] != '-' || !a[1]) {
            rc = pk_cli_usage(cmd, "unexpected argument '%s' (llvm-profgen takes options only)", a);
            goto done;
        }
        /* LLVM's command line takes -opt and --opt alike */
        char *opt = malloc(strlen(a) + 2);
        if (!opt) {
            rc = 1;
            goto done;
        }
        owned[nowned++] = opt;
        strcpy(opt, a[1] == '-' ? "" : "-");
        strcat(opt, a);
        char *eq = strchr(opt, '=');
        const char *val = eq ? eq + 1 : NULL;
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)(eq ? (size_t)(eq - opt) : strlen(opt)), opt);
        if (!strcmp(name, "--o"))
            strcpy(name, "--output");
        bool done_opt = false;
        if (!strcmp(name, "--debug-only")) { /* LLVM's debug types: only the pre-inliner's */
            if (!val && i + 1 < argc)
                val = argv[++i];
            if (!val || strcmp(val, "cs-preinliner")) {
                rc = pk_cli_usage(cmd, "--debug-only=%s: pgokit prints only cs-preinliner's debug output",
                                  val ? val : "");
                goto done;
            }
            av[n++] = (char *)"--trace-preinline=-";
            av[n++] = (char *)"--trace-preinline-wording=llvm";
            continue;
        }
        if (!strcmp(name, "--perfscript") || !strcmp(name, "--perfdata")) {
            if (!val && i + 1 >= argc) {
                rc = pk_cli_usage(cmd, "%s needs a file", name);
                goto done;
            }
            av[n++] = (char *)(name[6] == 's' ? "--perfscript" : "--perf");
            av[n++] = (char *)(val ? val : argv[++i]);
            continue;
        }
        for (size_t k = 0; k < sizeof disasm_opt / sizeof *disasm_opt && !done_opt; k++)
            if (!strcmp(disasm_opt[k].name, name)) {
                const char *v = val;
                if (disasm_opt[k].takes_value && !v && i + 1 < argc)
                    v = argv[++i];
                int b = disasm_opt[k].takes_value ? (v != NULL) : bool_val(v);
                if (b < 0 || (disasm_opt[k].takes_value && !v)) {
                    rc = pk_cli_usage(cmd, "%s: bad or missing value", name);
                    goto done;
                }
                if (!disasm_opt[k].flag)
                    show_disasm = b;
                else if (b) {
                    dav[nd++] = (char *)disasm_opt[k].flag;
                    disasm_extra = disasm_opt[k].name;
                    if (disasm_opt[k].takes_value)
                        dav[nd++] = (char *)v;
                }
                done_opt = true;
            }
        for (size_t k = 0; k < sizeof same_value / sizeof *same_value && !done_opt; k++)
            if (!strcmp(same_value[k], name)) {
                if (!val && i + 1 >= argc) {
                    rc = pk_cli_usage(cmd, "%s needs a value", name);
                    goto done;
                }
                av[n++] = (char *)same_value[k];
                av[n++] = (char *)(val ? val : argv[++i]);
                have_format |= !strcmp(name, "--format");
                if (!strcmp(name, "--binary") || !strcmp(name, "--debug-binary")) {
                    dav[nd++] = av[n - 2]; /* what --show-disassembly-only prints */
                    dav[nd++] = av[n - 1];
                }
                done_opt = true;
            }
        for (size_t k = 0; k < sizeof same_bool / sizeof *same_bool && !done_opt; k++)
            if (!strcmp(same_bool[k], name)) {
                av[n++] = opt; /* "--name[=value]": profgen checks the value */
                done_opt = true;
            }
        for (size_t k = 0; k < sizeof mapped_bool / sizeof *mapped_bool && !done_opt; k++)
            if (!strcmp(mapped_bool[k].name, name)) {
                int b = bool_val(val);
                if (b < 0) {
                    rc = pk_cli_usage(cmd, "%s: the value must be true or false, not '%s'", name, val);
                    goto done;
                }
                const char *f = b ? mapped_bool[k].flag_true : mapped_bool[k].flag_false;
                if (f)
                    av[n++] = (char *)f;
                done_opt = true;
            }
        if (!done_opt) {
            rc = pk_cli_usage(cmd, "llvm-profgen's option %s is not supported by pgokit", name);
            goto done;
        }
    }
    if (disasm_extra && !show_disasm) {
        rc = pk_cli_usage(cmd, "%s should work together with --show-disassembly-only", disasm_extra);
        goto done;
    }
    if (show_disasm) {
        dav[nd] = NULL;
        rc = pk_cmd_disasm((int)nd, dav);
        goto done;
    }
    if (!have_format) {
        av[n++] = (char *)"--format";
        av[n++] = (char *)"extbinary";
    }
    /* llvm-profgen makes a context-sensitive profile of any binary whose
     * samples have stacks (--ignore-stack-samples turns that off) */
    av[n++] = (char *)"--cs";
    /* keeps the callers of samples taken outside the binary, and drops
     * samples taken in a prologue or epilogue, from flat profiles too when
     * the samples carry stacks (llvm-profgen reads the stack, and drops
     * them, before it knows whether it will use it) */
    av[n++] = (char *)"--outside-leaf-context=full";
    av[n++] = (char *)"--prolog-epilog-leaf=drop-all";
    /* its pre-inliner inlines across compilation units (it assumes LTO) */
    av[n++] = (char *)"--preinline-across-units";
    av[n] = NULL;
    rc = pk_cmd_profgen((int)n, av);
done:
    for (size_t k = 0; k < nowned; k++)
        free(owned[k]);
    free(owned);
    free(av);
    free(dav);
    return rc;
}
