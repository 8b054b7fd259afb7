/* cmd_llvm_profgen.c — `pgokit llvm-profgen ARGS...` (also pgokit run through
 * a link named llvm-profgen): llvm-profgen's command line, verbatim, turned
 * into `pgokit profgen`'s. Its defaults are llvm-profgen's: extbinary output,
 * context-sensitive profiles whenever the samples have call stacks (also
 * line-based ones, for binaries without pseudo-probes). Every option
 * llvm-profgen has and pgokit does not is refused by name, never ignored. */
#include "cli/cli.h"

#include <stdlib.h>
#include <string.h>

const char pk_cmd_llvm_profgen_summary[] = "llvm-profgen's command line (a drop-in: same options, same meanings)";

static const char usage_text[] =
    "usage: pgokit llvm-profgen --binary=BIN (--perfscript=FILE | --perfdata=FILE | --unsymbolized-profile=FILE)\n"
    "                           --output=OUT [options]\n"
    "       (or pgokit through a link named llvm-profgen)\n"
    "\n"
    "llvm-profgen's options, with its meanings ('-opt' and '--opt', '=V' and ' V' alike):\n"
    "  --binary, --debug-binary, --dwp, --perfscript, --perfdata, --output (-o), --format\n"
    "  (text|binary|extbinary|gcc), --pid, --ignore-stack-samples, --use-dwarf-correlation,\n"
    "  --infer-missing-frames, --compress-recursion, --csprof-max-context-depth,\n"
    "  --csprof-max-cold-context-depth, --csprof-merge-cold-context, --trim-cold-profile,\n"
    "  --profile-summary-hot-count, --profile-summary-cold-count, --profile-summary-cutoff-hot,\n"
    "  --profile-summary-cutoff-cold, --csspgo-preinliner, --gen-cs-nested-profile,\n"
    "  --sample-profile-hot-inline-threshold, --sample-profile-cold-inline-threshold,\n"
    "  --use-md5, --populate-profile-symbol-list, --update-total-samples, --show-density,\n"
    "  --profile-density-threshold, --profile-density-cutoff-hot, --fill-zero-for-all-funcs,\n"
    "  --perf-event(s), --sample-period, --leading-ip-only,\n"
    "  --skip-symbolization, --unsymbolized-profile (flat or line-based context text;\n"
    "  probe-based context text is written, not read), --llvm-sample-profile, --use-offset,\n"
    "  --use-first-loadable-segment-as-base.\n"
    "Any other llvm-profgen option is refused by name. See `pgokit profgen --help`.\n"
    "  -q, --quiet    (pgokit's) no progress, no summary, no warnings: errors only\n";

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
    "--use-first-loadable-segment-as-base",
};
/* Booleans that map to a pgokit flag when true. */
static const struct {
    const char *name, *flag_true, *flag_false;
} mapped_bool[] = {
    {"--ignore-stack-samples", "--ignore-stack-samples", NULL},
    {"--use-dwarf-correlation", "--use-dwarf-correlation", NULL},
    {"--infer-missing-frames", NULL, "--no-infer-missing-frames"},
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
    char **av = calloc((size_t)argc * 2 + 9, sizeof *av);
    char **owned = calloc((size_t)argc + 1, sizeof *owned);
    size_t n = 0, nowned = 0;
    int rc = 2;
    if (!av || !owned) {
        free(av);
        free(owned);
        return 1;
    }
    av[n++] = (char *)"profgen";
    bool have_format = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help") || !strcmp(a, "-help")) {
            fputs(usage_text, stdout);
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
        if (!strcmp(name, "--perfscript") || !strcmp(name, "--perfdata")) {
            if (!val && i + 1 >= argc) {
                rc = pk_cli_usage(cmd, "%s needs a file", name);
                goto done;
            }
            av[n++] = (char *)(name[6] == 's' ? "--perfscript" : "--perf");
            av[n++] = (char *)(val ? val : argv[++i]);
            continue;
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
    av[n] = NULL;
    rc = pk_cmd_profgen((int)n, av);
done:
    for (size_t k = 0; k < nowned; k++)
        free(owned[k]);
    free(owned);
    free(av);
    return rc;
}
