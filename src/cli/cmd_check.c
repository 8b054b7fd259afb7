/* cmd_check.c — `pgokit check --binary NEW PROFILE`: does a sample profile
 * still fit a binary built from newer sources? Prints the stale functions
 * (src/check/check.h says what is checked) and exits 3 when the stale
 * share passes --max-stale-share, so a build can gate on it. */
#include "check/check.h"
#include "cli/cli.h"
#include "common/demangle.h"
#include "cli/json_out.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>

const char pk_cmd_check_summary[] = "is a profile stale for a new binary? lines, call sites, checksums (exit 3)";

#define EXIT_STALE 3

static void usage(FILE *to)
{
    fprintf(to,
            "usage: pgokit check --binary NEW PROFILE [options]\n"
            "Checks a sample profile (LLVM text, binary, extbinary; GCC .afdo) against a binary\n"
            "built from newer sources, before that profile is applied to them:\n"
            "  line-based profiles: profiled locations (line offset from the function's first\n"
            "    line, discriminator) that no instruction of the function has any more in NEW's\n"
            "    DWARF (every inlined copy counts), call targets and inlined callees with no call\n"
            "    to them at their location, functions NEW does not have;\n"
            "  probe profiles (-fpseudo-probe-for-profiling): functions whose CFG checksum\n"
            "    differs from NEW's .pseudo_probe_desc (clang cannot apply it as profiled),\n"
            "    functions without a descriptor.\n"
            "Each with its share of the profile's samples (body counts). An edit that adds or\n"
            "removes lines inside a function shifts the offsets below it; those that land on\n"
            "other existing lines look fresh, so a line-based share is a lower bound.\n"
            "  --binary NEW           the binary of the new sources (see below)\n"
            "  --debug-binary F, --debug-dir DIR, --dwp F: where NEW's debug information is\n"
            "                         (see `pgokit profgen --help`)\n"
            "  --max-stale-share PCT  exit 3 when more than PCT %% of the samples are stale\n"
            "                         (default 1)\n"
            "  --top N                list the N stalest functions (default 10; 0 = all)\n"
            "  -v, --verbose          list every stale location (default: the 5 heaviest each)\n"
            "  --json                 the report as JSON (every stale function, or --top N, and its keys;\n"
            "                         linkage names)\n"
            "  --no-demangle          C++ names as linkage names (default: demangled, as c++filt does)\n"
            "  -q, --quiet            print nothing; the exit status says it\n"
            "Exit status: 0 fresh (stale share <= PCT), 3 stale, 1 error, 2 usage.\n"
            "NEW is a binary of the new sources with the same compiler and debug flags (-g, and\n"
            "-fdebug-info-for-profiling / -fpseudo-probe-for-profiling if the profile's build had\n"
            "them). Line-based profiles: optimized or not (a -O0 -g build of unchanged sources\n"
            "passes too). Probe profiles: an optimized build (at -O0 clang inserts the probes in\n"
            "another pipeline, and every checksum differs).\n"
            "clang's own report, at compile time, for comparison: -mllvm -report-profile-staleness\n"
            "prints totals only: \"(N/M) of functions' profile are invalid and (X/Y) of samples\n"
            "are discarded due to function hash mismatch\" (probe profiles; the same functions and\n"
            "samples as this check) and \"... of callsites' profile are invalid ...\" (both\n"
            "kinds: call sites only). pgokit check names the functions and locations, checks\n"
            "every line of a line-based profile, reads GCC profiles, and gates a build by its exit\n"
            "status. (clang-19 also tries to salvage a probe profile whose checksum changed,\n"
            "-salvage-stale-profile, on by default: a flagged function may keep part of its profile.)\n");
}

static double pct(uint64_t a, uint64_t b) { return b ? 100.0 * (double)a / (double)b : 0.0; }

static const char *why_name(uint32_t why)
{
    switch (why) {
    case PK_STALE_MISSING: return "missing";
    case PK_STALE_CHECKSUM: return "checksum";
    case PK_STALE_LINES: return "line";
    default: return "call";
    }
}

/* Names go through the demangler one printf at a time: its result lives
 * until the next call. */
static void print_key(const pk_check_report *r, const pk_check_func *f, const pk_check_loc *l, pk_demangler *dm)
{
    const char *in = strcmp(l->func, f->name) ? l->func : NULL;
    printf("      ");
    if (l->why == PK_STALE_MISSING && !l->callee) {
        printf("not in the binary");
        if (f->same_but_uniq)
            printf(", which has it as %s (the .__uniq. suffix hashes the source path given to the compiler)",
                   pk_demangle_text(dm, f->same_but_uniq));
    } else if (l->why == PK_STALE_CHECKSUM && !l->callee) {
        printf("CFG checksum %" PRIu64 " in the profile, %" PRIu64 " in the binary", f->profile_checksum,
               f->binary_checksum);
    } else {
        if (in)
            printf("in inlined %s: ", pk_demangle_text(dm, in));
        printf("%u", l->line);
        if (l->disc)
            printf(".%u", l->disc);
        if (l->why == PK_STALE_LINES)
            printf(": no such location");
        else if (l->why == PK_STALE_CALLS)
            printf(": %s %s: no call to it there", l->inlined ? "inlined" : "call to", pk_demangle_text(dm, l->callee));
        else
            printf(": inlined %s: %s", pk_demangle_text(dm, l->callee),
                   l->why == PK_STALE_MISSING ? "not in the binary" : "CFG checksum differs");
    }
    printf(" (%" PRIu64 " samples, %.2f %%)\n", l->samples, pct(l->samples, r->samples));
}

static void print_text(const pk_check_report *r, const char *profile, const char *binary, pk_prof_format fmt,
                       double max, size_t top, bool verbose, pk_demangler *dm)
{
    printf("profile %s: %s, %s%s%s\n", profile, pk_prof_format_name(fmt),
           r->kind == PK_CHECK_PROBES ? "probe-based" : "line-based", r->cs ? ", context-sensitive" : "",
           r->ignore_disc ? ", no discriminators" : "");
    if (r->kind == PK_CHECK_PROBES)
        printf("binary %s: %" PRIu64 " probe descriptors\n", binary, r->bin_functions);
    else
        printf("binary %s: %" PRIu64 " DWARF functions, %" PRIu64 " instructions, %" PRIu64 " locations\n",
               binary, r->bin_functions, r->bin_insns, r->bin_locations);
    printf("functions: %zu profiled, %zu stale (%zu missing, %zu %s, %zu with stale call sites)\n", r->functions,
           r->stale_functions, r->missing_functions,
           r->kind == PK_CHECK_PROBES ? r->checksum_functions : r->line_functions,
           r->kind == PK_CHECK_PROBES ? "checksum mismatches" : "with stale lines", r->call_functions);
    printf("samples: %" PRIu64 ", stale %" PRIu64 " = %.2f %% (", r->samples, r->stale_samples,
           pct(r->stale_samples, r->samples));
    if (r->kind == PK_CHECK_PROBES)
        printf("checksums %.2f %%, ", pct(r->checksum_samples, r->samples));
    else
        printf("lines %.2f %%, ", pct(r->line_samples, r->samples));
    printf("call sites %.2f %%, missing functions %.2f %%)\n", pct(r->call_samples, r->samples),
           pct(r->missing_samples, r->samples));
    if (r->kind == PK_CHECK_LINES && r->stale_function_samples > r->stale_samples)
        printf("the functions with stale samples hold %.2f %% of all samples (an edit shifts every line below\n"
               "it; an offset that lands on another line of code looks fresh)\n",
               pct(r->stale_function_samples, r->samples));
    size_t shown = 0;
    for (size_t i = 0; i < r->nfuncs && (!top || shown < top); i++) {
        const pk_check_func *f = &r->funcs[i];
        if (!f->flags)
            continue;
        if (!shown++)
            printf("\n  stale %%  of func   samples  function\n");
        printf("  %6.2f %%  %5.1f %%  %8" PRIu64 "  %s", pct(f->stale_samples, r->samples),
               pct(f->stale_samples, f->samples), f->samples, pk_demangle_text(dm, f->name));
        if (f->flags & PK_STALE_MISSING)
            printf(": missing");
        if (f->flags & PK_STALE_CHECKSUM)
            printf(": CFG checksum differs");
        if (f->stale_locs)
            printf(": %u/%u locations gone", f->stale_locs, f->locs);
        if (f->stale_calls)
            printf("%s %u/%u calls unmatched", f->stale_locs ? "," : ":", f->stale_calls, f->calls);
        printf("\n");
        for (size_t k = 0; k < f->nlocs && (verbose || k < 5); k++)
            print_key(r, f, &r->locs[f->first_loc + k], dm);
        if (!verbose && f->nlocs > 5)
            printf("      ... %zu more (-v lists them)\n", f->nlocs - 5);
    }
    if (top && r->stale_functions > top)
        printf("  ... %zu more stale functions (--top 0 lists them)\n", r->stale_functions - top);
    double share = pct(r->stale_samples, r->samples);
    if (pk_check_is_stale(r, max / 100.0))
        printf("\nSTALE: %.2f %% of the samples are on keys the binary no longer has (limit %g %%): "
               "regenerate the profile\n", share, max);
    else
        printf("\nfresh: %.2f %% of the samples are stale (limit %g %%)\n", share, max);
}

static void json_flags(pk_json *j, uint32_t flags)
{
    pk_json_begin_array(j, "reasons");
    for (uint32_t w = PK_STALE_MISSING; w <= PK_STALE_CALLS; w <<= 1)
        if (flags & w)
            pk_json_str(j, NULL, why_name(w));
    pk_json_end_array(j);
}

static void print_json(const pk_check_report *r, const char *profile, const char *binary, pk_prof_format fmt,
                       double max, size_t top)
{
    pk_json j;
    pk_json_init(&j, stdout);
    pk_json_begin_object(&j, NULL);
    pk_json_str(&j, "profile", profile);
    pk_json_str(&j, "binary", binary);
    pk_json_str(&j, "format", pk_prof_format_name(fmt));
    pk_json_str(&j, "kind", r->kind == PK_CHECK_PROBES ? "probe" : "line");
    pk_json_bool(&j, "context_sensitive", r->cs);
    pk_json_bool(&j, "discriminators_ignored", r->ignore_disc);
    pk_json_bool(&j, "stale", pk_check_is_stale(r, max / 100.0));
    pk_json_double(&j, "stale_share", pk_check_stale_share(r));
    pk_json_double(&j, "max_stale_share", max / 100.0);
    pk_json_u64(&j, "samples", r->samples);
    pk_json_u64(&j, "stale_samples", r->stale_samples);
    pk_json_u64(&j, "stale_function_samples", r->stale_function_samples);
    pk_json_begin_object(&j, "stale_samples_by_reason");
    pk_json_u64(&j, "missing", r->missing_samples);
    pk_json_u64(&j, "checksum", r->checksum_samples);
    pk_json_u64(&j, "line", r->line_samples);
    pk_json_u64(&j, "call", r->call_samples);
    pk_json_end_object(&j);
    pk_json_begin_object(&j, "functions");
    pk_json_u64(&j, "profiled", r->functions);
    pk_json_u64(&j, "stale", r->stale_functions);
    pk_json_u64(&j, "missing", r->missing_functions);
    pk_json_u64(&j, "checksum", r->checksum_functions);
    pk_json_u64(&j, "line", r->line_functions);
    pk_json_u64(&j, "call", r->call_functions);
    pk_json_end_object(&j);
    pk_json_begin_object(&j, "binary_read");
    if (r->kind == PK_CHECK_PROBES) {
        pk_json_u64(&j, "probe_descriptors", r->bin_functions);
    } else {
        pk_json_u64(&j, "dwarf_functions", r->bin_functions);
        pk_json_u64(&j, "instructions", r->bin_insns);
        pk_json_u64(&j, "locations", r->bin_locations);
    }
    pk_json_end_object(&j);
    pk_json_begin_array(&j, "stale_functions");
    size_t shown = 0;
    for (size_t i = 0; i < r->nfuncs && (!top || shown < top); i++) {
        const pk_check_func *f = &r->funcs[i];
        if (!f->flags)
            continue;
        shown++;
        pk_json_begin_object(&j, NULL);
        pk_json_str(&j, "name", f->name);
        json_flags(&j, f->flags);
        pk_json_u64(&j, "samples", f->samples);
        pk_json_u64(&j, "stale_samples", f->stale_samples);
        pk_json_double(&j, "stale_share", r->samples ? (double)f->stale_samples / (double)r->samples : 0.0);
        pk_json_u64(&j, "contexts", f->contexts);
        pk_json_u64(&j, "locations", f->locs);
        pk_json_u64(&j, "stale_locations", f->stale_locs);
        pk_json_u64(&j, "calls", f->calls);
        pk_json_u64(&j, "stale_calls", f->stale_calls);
        if (f->same_but_uniq)
            pk_json_str(&j, "same_but_uniq", f->same_but_uniq);
        if (r->kind == PK_CHECK_PROBES) {
            pk_json_u64(&j, "profile_checksum", f->profile_checksum);
            pk_json_u64(&j, "binary_checksum", f->binary_checksum);
        }
        pk_json_begin_array(&j, "keys");
        for (size_t k = 0; k < f->nlocs; k++) {
            const pk_check_loc *l = &r->locs[f->first_loc + k];
            pk_json_begin_object(&j, NULL);
            pk_json_str(&j, "reason", why_name(l->why));
            pk_json_str(&j, "function", l->func);
            if (l->why == PK_STALE_LINES || l->why == PK_STALE_CALLS || l->callee) {
                pk_json_u64(&j, "line", l->line);
                pk_json_u64(&j, "discriminator", l->disc);
            }
            if (l->callee) {
                pk_json_str(&j, "callee", l->callee);
                pk_json_bool(&j, "inlined", l->inlined);
            }
            pk_json_u64(&j, "samples", l->samples);
            pk_json_end_object(&j);
        }
        pk_json_end_array(&j);
        pk_json_end_object(&j);
    }
    pk_json_end_array(&j);
    pk_json_end_object(&j);
    pk_json_finish(&j);
}

int pk_cmd_check(int argc, char **argv)
{
    const char *binary = NULL;
    pk_cli_debug dbg = {0};
    double max = 1.0;
    unsigned long top = 10;
    bool top_set = false, json = false, quiet = false, verbose = false;
    pk_demangler dm = {0};
    static const struct option opts[] = {
        {"binary", required_argument, 0, 'b'}, {"debug-binary", required_argument, 0, 'd'},
        {"debug-dir", required_argument, 0, 'D'}, {"dwp", required_argument, 0, 'W'},
        {"max-stale-share", required_argument, 0, 'm'}, {"top", required_argument, 0, 't'},
        {"json", no_argument, 0, 'j'}, {"verbose", no_argument, 0, 'v'}, {"quiet", no_argument, 0, 'q'},
        {"no-demangle", no_argument, 0, 'N'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0},
    };
    int c;
    char *end;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "b:hqv", opts, NULL)) != -1) {
        switch (c) {
        case 'b': binary = optarg; break;
        case 'd': pk_cli_debug_option(&dbg, "check", "--debug-binary", optarg); break;
        case 'D':
            if (pk_cli_debug_option(&dbg, "check", "--debug-dir", optarg) < 0)
                return 2;
            break;
        case 'W': pk_cli_debug_option(&dbg, "check", "--dwp", optarg); break;
        case 'm':
            max = strtod(optarg, &end);
            if (end == optarg || *end || !(max >= 0 && max <= 100))
                return pk_cli_usage("check", "--max-stale-share wants a percentage (0 to 100), not '%s'", optarg);
            break;
        case 't':
            top = strtoul(optarg, &end, 10);
            if (end == optarg || *end)
                return pk_cli_usage("check", "--top wants a number, not '%s'", optarg);
            top_set = true;
            break;
        case 'j': json = true; break;
        case 'v': verbose = true; break;
        case 'q': quiet = true; break;
        case 'N': dm.off = true; break;
        case 'h': usage(stdout); return 0;
        default: return pk_cli_usage("check", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (!binary)
        return pk_cli_usage("check", "--binary is required");
    if (optind + 1 != argc)
        return pk_cli_usage("check", optind == argc ? "a PROFILE is required" : "one PROFILE only");
    const char *profile = argv[optind];

    pk_err err;
    pk_check_report r;
    pk_prof_format fmt = PK_FMT_AUTO;
    char origin[1024] = "";
    if (pk_check_files(binary, &dbg.opts, profile, &fmt, origin, sizeof origin, &r, &err)) {
        pk_check_report_free(&r);
        return pk_cli_fail("check", &err);
    }
    if (!quiet)
        fprintf(stderr, "pgokit check: debug info: %s\n", origin);
    if (json)
        print_json(&r, profile, binary, fmt, max, top_set ? top : 0);
    else if (!quiet)
        print_text(&r, profile, binary, fmt, max, top, verbose, &dm);
    int rc = pk_check_is_stale(&r, max / 100.0) ? EXIT_STALE : 0;
    pk_check_report_free(&r);
    pk_demangler_free(&dm);
    return rc;
}
