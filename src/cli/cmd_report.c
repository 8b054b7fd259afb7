/* cmd_report.c — `pgokit report PROFILE -o report.html`: one self-contained
 * HTML page about a profile (see report/report.h), with block overlap
 * against exact counts (--exact, reference built by profgen/truth.h) or
 * another profile (--compare), and source lines when --binary is given. */
#include "cli/cli.h"
#include "format/format.h"
#include "profgen/truth.h"
#include "report/report.h"

#include <getopt.h>
#include <stdlib.h>

const char pk_cmd_report_summary[] = "one self-contained HTML page: hot functions, contexts, inlining, overlap, source";

static void usage(FILE *to)
{
    fprintf(to,
            "usage: pgokit report PROFILE -o OUT.html [options]\n"
            "One self-contained HTML file (no network: inline CSS, JavaScript and SVG) about a\n"
            "sample profile: hot functions with their share, an icicle chart of the calling\n"
            "contexts (CSSPGO contexts, inlined callsites), the pre-inliner's decisions,\n"
            "per-function block overlap against a reference, and the hottest functions'\n"
            "source lines annotated with their counts. For machines: show --json, overlap --json.\n"
            "  -o, --output FILE     the page to write (replaced atomically)\n"
            "  --binary B            the profiled binary: source lines (DWARF), code sizes of\n"
            "                        inlining decisions; required by --exact\n"
            "  --debug-binary F, --debug-dir DIR, --dwp F: where B's debug information is\n"
            "                        (see `pgokit profgen --help`)\n"
            "  --exact COUNTS        block overlap against the exact counts of a run (pgokit\n"
            "                        record --exact-counts; repeat to add runs)\n"
            "  --compare OTHER       block overlap against another profile (OTHER is the reference)\n"
            "  --top N               rows per table (default 100)\n"
            "  --source-functions N  functions shown in the source view (default 20)\n"
            "  --source-root DIR     also show source files from under DIR (repeatable); by\n"
            "                        default only regular files under the compilation\n"
            "                        directories the DWARF gives are read (at most 16 MiB each,\n"
            "                        none in a hidden directory)\n"
            "  --title TEXT          the page's title\n"
            "  --format F            force PROFILE's format (text, binary, extbinary, gcc)\n"
            "  --no-demangle         C++ names as linkage names (default: demangled, as c++filt does)\n"
            "  -q, --quiet           no summary line\n");
}

static int parse_count(const char *v, size_t *out)
{
    char *end;
    long n = strtol(v, &end, 10);
    if (!*v || *end || n <= 0 || n > 1000000)
        return -1;
    *out = (size_t)n;
    return 0;
}

int pk_cmd_report(int argc, char **argv)
{
    const char *out_path = NULL, *binary = NULL, *compare = NULL, *title = NULL;
    pk_cli_debug dbg = {0};
    const char *roots[64];
    size_t nroots = 0;
    const char *exact[64];
    size_t nexact = 0, top = 0, srcfuncs = 0;
    bool quiet = false, no_demangle = false;
    pk_prof_format fmt = PK_FMT_AUTO;
    static const struct option opts[] = {
        {"output", required_argument, 0, 'o'}, {"binary", required_argument, 0, 'b'},
        {"debug-binary", required_argument, 0, 'd'}, {"exact", required_argument, 0, 'e'},
        {"debug-dir", required_argument, 0, 'D'}, {"dwp", required_argument, 0, 'W'},
        {"compare", required_argument, 0, 'c'}, {"top", required_argument, 0, 't'},
        {"source-functions", required_argument, 0, 's'}, {"title", required_argument, 0, 'T'},
        {"format", required_argument, 0, 'f'}, {"source-root", required_argument, 0, 'R'}, {"quiet", no_argument, 0, 'q'}, {"help", no_argument, 0, 'h'},
        {"no-demangle", no_argument, 0, 'N'},
        {0, 0, 0, 0},
    };
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:qh", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out_path = optarg; break;
        case 'b': binary = optarg; break;
        case 'd': pk_cli_debug_option(&dbg, "report", "--debug-binary", optarg); break;
        case 'D':
            if (pk_cli_debug_option(&dbg, "report", "--debug-dir", optarg) < 0)
                return 2;
            break;
        case 'W': pk_cli_debug_option(&dbg, "report", "--dwp", optarg); break;
        case 'e':
            if (nexact == sizeof exact / sizeof exact[0])
                return pk_cli_usage("report", "at most 64 --exact files");
            exact[nexact++] = optarg;
            break;
        case 'c': compare = optarg; break;
        case 't':
            if (parse_count(optarg, &top))
                return pk_cli_usage("report", "bad --top value '%s'", optarg);
            break;
        case 's':
            if (parse_count(optarg, &srcfuncs))
                return pk_cli_usage("report", "bad --source-functions value '%s'", optarg);
            break;
        case 'T': title = optarg; break;
        case 'R':
            if (nroots == sizeof roots / sizeof roots[0])
                return pk_cli_usage("report", "at most 64 --source-root directories");
            roots[nroots++] = optarg;
            break;
        case 'f':
            if (pk_prof_format_parse(optarg, &fmt))
                return pk_cli_usage("report", "unknown format '%s'", optarg);
            break;
        case 'q': quiet = true; break;
        case 'N': no_demangle = true; break;
        case 'h': usage(stdout); return 0;
        default: return pk_cli_usage("report", "unknown option");
        }
    }
    if (optind >= argc)
        return pk_cli_usage("report", "no profile given");
    if (optind + 1 < argc)
        return pk_cli_usage("report", "one profile at a time ('%s' is extra)", argv[optind + 1]);
    if (!out_path)
        return pk_cli_usage("report", "-o OUT.html is required");
    if (pk_cli_check_output("report", out_path, argc, argv))
        return 1;
    if (nexact && !binary)
        return pk_cli_usage("report", "--exact needs --binary (the binary whose counts they are)");
    if (nexact && compare)
        return pk_cli_usage("report", "--exact and --compare exclude each other");
    if ((dbg.opts.debug_binary || dbg.opts.ndebug_dirs || dbg.opts.dwp) && !binary)
        return pk_cli_usage("report", "--debug-binary, --debug-dir and --dwp go with --binary");
    const char *path = argv[optind];

    pk_err err;
    pk_profset ps, ref;
    bool have_ps = false, have_ref = false;
    pk_binary *bin = NULL;
    pk_prof_format got = PK_FMT_AUTO;
    char *html = NULL, label[1024];
    size_t len = 0;
    int rc = 1;
    if (pk_profset_init(&ps, &err))
        goto fail;
    have_ps = true;
    if (pk_prof_read_file(&ps, path, fmt, &got, &err))
        goto fail;
    if (binary && pk_binary_open_opts(&bin, binary, &dbg.opts, &err))
        goto fail;
    if (bin && !quiet)
        pk_cli_debug_note("report", bin);
    if (nexact || compare) {
        if (pk_profset_init(&ref, &err))
            goto fail;
        have_ref = true;
        if (compare) {
            if (pk_prof_read_file(&ref, compare, PK_FMT_AUTO, NULL, &err))
                goto fail;
            snprintf(label, sizeof label, "the profile %s", compare);
        } else {
            if (pk_truth_profile(exact, nexact, bin, binary, (ps.kind & PK_PROF_PROBE) != 0, &ref, &err))
                goto fail;
            snprintf(label, sizeof label, "the exact counts %s%s", exact[0], nexact > 1 ? " (and more runs)" : "");
        }
    }
    pk_report_input in = {
        .ps = &ps, .profile_path = path, .format = got, .bin = bin, .binary_path = binary,
        .ref = have_ref ? &ref : NULL, .ref_label = label, .top = top, .source_functions = srcfuncs, .title = title,
        .no_demangle = no_demangle,
        .source_roots = roots, .nsource_roots = nroots,
    };
    if (pk_report_build(&in, &html, &len, &err))
        goto fail;
    pk_out_file *o = malloc(sizeof *o);
    if (!o) {
        pk_err_set(&err, "out of memory");
        goto fail;
    }
    if (pk_out_open(o, out_path, &err)) {
        free(o);
        goto fail;
    }
    if (pk_out_write(o, html, len, &err) || pk_out_commit(o, &err)) {
        pk_out_abort(o);
        free(o);
        goto fail;
    }
    free(o);
    if (!quiet)
        fprintf(stderr, "report: %s: %zu bytes, %zu %s\n", out_path, len, pk_profset_count(&ps),
                ps.kind & PK_PROF_CS ? "contexts" : "profiles");
    rc = 0;
    goto done;
fail:
    pk_cli_fail("report", &err);
done:
    free(html);
    if (bin)
        pk_binary_close(bin);
    if (have_ref)
        pk_profset_free(&ref);
    if (have_ps)
        pk_profset_free(&ps);
    return rc;
}
