/* cmd_create_llvm_prof.c — `pgokit create_llvm_prof ARGS...` and
 * `pgokit create_gcov ARGS...` (cmd_create_gcov.c; also pgokit run through links of those
 * names): AutoFDO's command lines (google/autofdo), verbatim, turned into
 * `pgokit profgen`'s. AutoFDO's profiles are context-free and line-based
 * (probe-based for a pseudo-probe binary): call stacks are not used.
 * gflags spellings: -flag and --flag, =V and ' V', booleans also --noflag.
 * Every other AutoFDO flag is refused by name, never ignored. */
#include "cli/cli.h"

#include <stdlib.h>
#include <string.h>

const char pk_cmd_create_llvm_prof_summary[] = "AutoFDO's create_llvm_prof command line (a drop-in)";

static const char usage_llvm[] =
    "usage: pgokit create_llvm_prof --profile=perf.data --binary=BIN --out=OUT [options]\n"
    "       (or pgokit through a link named create_llvm_prof)\n"
    "\n"
    "create_llvm_prof's flags, with its meanings ('-flag' and '--flag', '=V' and ' V';\n"
    "booleans also --noflag):\n"
    "  --profile F      the perf.data file (default perf.data)\n"
    "  --binary F       the profiled binary (default a.out)\n"
    "  --out F          the output (--gcov F: the same)\n"
    "  --format F       binary (default), text or extbinary\n"
    "  --use_lbr        LBR branch stacks (default); --use_lbr=false: IP samples (pgokit\n"
    "                   infers block counts by flow over each sampled function's CFG)\n"
    "  --prof_sym_list  extbinary: the profile symbol list (every function of the binary)\n"
    "  --profiler perf  the only input kind pgokit reads\n"
    "Any other flag (--debug_dump, --prefetch_hints, logging flags...) is refused by name.\n"
    "  -q, --quiet      (pgokit's) no progress, no summary, no warnings: errors only\n";

static const char usage_gcov[] =
    "usage: pgokit create_gcov --profile=perf.data --binary=BIN --gcov=OUT [--gcov_version=N]\n"
    "       (or pgokit through a link named create_gcov)\n"
    "\n"
    "create_gcov's flags: --profile, --binary, --gcov (--out), --use_lbr, --profiler=perf,\n"
    "--gcov_version (1 or 2: the file is written as AUTO_PROFILE_VERSION 2, the version\n"
    "GCC 12+ -fauto-profile reads). Any other flag is refused by name.\n"
    "  -q, --quiet      (pgokit's) no progress, no summary, no warnings: errors only\n";

/* gflags' boolean spellings; -1: neither */
static int bool_val(const char *v)
{
    if (!v || !strcmp(v, "true") || !strcmp(v, "1") || !strcmp(v, "t") || !strcmp(v, "yes") || !strcmp(v, "y"))
        return 1;
    if (!strcmp(v, "false") || !strcmp(v, "0") || !strcmp(v, "f") || !strcmp(v, "no") || !strcmp(v, "n"))
        return 0;
    return -1;
}

int pk_cli_autofdo(const char *cmd, bool gcov, int argc, char **argv)
{
    const char *profile = "perf.data", *binary = "a.out", *out = NULL, *format = gcov ? "gcc" : "binary";
    bool use_lbr = true, sym_list = false, quiet = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help") || !strcmp(a, "-help") || !strcmp(a, "-helpshort")) {
            fputs(gcov ? usage_gcov : usage_llvm, stdout);
            return 0;
        }
        if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = true;
            continue;
        }
        if (a[0] != '-' || !a[1])
            return pk_cli_usage(cmd, "unexpected argument '%s' (%s takes flags only)", a, cmd);
        const char *s = a + (a[1] == '-' ? 2 : 1);
        const char *eq = strchr(s, '=');
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(eq ? (size_t)(eq - s) : strlen(s)), s);
        const char *val = eq ? eq + 1 : NULL;
        bool is_bool = !strcmp(name, "use_lbr") || !strcmp(name, "prof_sym_list") ||
                       !strcmp(name, "nouse_lbr") || !strcmp(name, "noprof_sym_list");
        if (is_bool) {
            bool negated = !strncmp(name, "no", 2);
            int b = negated ? (val ? -1 : 0) : bool_val(val);
            if (b < 0)
                return pk_cli_usage(cmd, "--%s: the value must be true or false, not '%s'", name, val ? val : "");
            if (strstr(name, "use_lbr"))
                use_lbr = b;
            else if (gcov)
                return pk_cli_usage(cmd, "create_gcov's flag --%s is not supported by pgokit", name);
            else
                sym_list = b;
            continue;
        }
        static const char *const valued[] = {"profile", "binary", "out", "gcov", "format", "profiler", "gcov_version"};
        bool known = false;
        for (size_t k = 0; k < sizeof valued / sizeof *valued; k++)
            known |= !strcmp(valued[k], name);
        if (!known || (gcov && !strcmp(name, "format")))
            return pk_cli_usage(cmd, "%s's flag --%s is not supported by pgokit", cmd, name);
        if (!val) {
            if (i + 1 >= argc)
                return pk_cli_usage(cmd, "--%s needs a value", name);
            val = argv[++i];
        }
        if (!strcmp(name, "profile"))
            profile = val;
        else if (!strcmp(name, "binary"))
            binary = val;
        else if (!strcmp(name, "out") || !strcmp(name, "gcov"))
            out = val;
        else if (!strcmp(name, "format")) {
            if (strcmp(val, "text") && strcmp(val, "binary") && strcmp(val, "extbinary"))
                return pk_cli_usage(cmd, "--format=%s is not supported by pgokit (text, binary or extbinary)", val);
            format = val;
        } else if (!strcmp(name, "profiler")) {
            if (strcmp(val, "perf"))
                return pk_cli_usage(cmd, "--profiler=%s is not supported by pgokit (perf only)", val);
        } else if (!strcmp(name, "gcov_version")) {
            if (!gcov)
                return pk_cli_usage(cmd, "create_llvm_prof's flag --gcov_version is not supported by pgokit "
                                         "(gcov output: pgokit create_gcov)");
            if (strcmp(val, "1") && strcmp(val, "2"))
                return pk_cli_usage(cmd, "--gcov_version=%s is not supported by pgokit (1 or 2; written as 2)", val);
        }
    }
    if (!out)
        return pk_cli_usage(cmd, "%s is required", gcov ? "--gcov" : "--out");
    if (sym_list && strcmp(format, "extbinary"))
        return pk_cli_usage(cmd, "--prof_sym_list needs --format=extbinary (the symbol list is one of its sections)");
    char *av[16];
    int n = 0;
    av[n++] = (char *)"profgen";
    av[n++] = (char *)"--binary";
    av[n++] = (char *)binary;
    av[n++] = (char *)"--perf";
    av[n++] = (char *)profile;
    av[n++] = (char *)"-o";
    av[n++] = (char *)out;
    av[n++] = (char *)"--format";
    av[n++] = (char *)format;
    /* AutoFDO's profiles have no calling contexts */
    av[n++] = (char *)"--ignore-stack-samples";
    av[n++] = (char *)(use_lbr ? "--lbr" : "--ip");
    if (sym_list)
        av[n++] = (char *)"--populate-profile-symbol-list";
    if (quiet)
        av[n++] = (char *)"-q";
    av[n] = NULL;
    return pk_cmd_profgen(n, av);
}

int pk_cmd_create_llvm_prof(int argc, char **argv)
{
    return pk_cli_autofdo("create_llvm_prof", false, argc, argv);
}
