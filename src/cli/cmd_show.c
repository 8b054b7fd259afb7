/* cmd_show.c — `pgokit show PROFILE`: what a sample profile holds (format,
 * kind, totals, summary, hottest functions), one function's profile, every
 * function's, as JSON, or llvm-profdata's hot-function list. Every other
 * file pgokit writes gets its own summary (show_files.c, temporal_cli.c);
 * anything else is "not a profile in any known format". */
#include "cli/cli.h"
#include "cli/show.h"
#include "common/demangle.h"
#include "cli/temporal_cli.h"
#include "format/format.h"
#include "profile/profile.h"

#include <inttypes.h>
#include <stdlib.h>

const char pk_cmd_show_summary[] = "what a profile or samples file holds: totals, hot functions, JSON";

static void usage(FILE *to)
{
    fprintf(to,
            "usage: pgokit show PROFILE [options]\n"
            "PROFILE: a sample profile (LLVM text, binary, extbinary; GCC .afdo), a pgokit raw\n"
            "profile (profgen --raw-only), perf.data or pprof samples, exact counts\n"
            "(record --exact-counts), or a temporal profile (options below).\n"
            "  --function NAME      print the profile of NAME (every context whose leaf is NAME)\n"
            "  --top N, --topn N    list the N hottest functions by total samples (default 20; 0 = all)\n"
            "  --counts             print the body of every listed function (text format)\n"
            "  --all, --all-functions  print the whole profile in text format\n"
            "  --json               every function as JSON (llvm-profdata show --sample --json's\n"
            "                       layout, plus \"context\" and \"checksum\"); with --function or\n"
            "                       --top, only those (also --show-format=json)\n"
            "  --hot-func-list      the functions whose max sample reaches the 99%% cutoff, as\n"
            "                       llvm-profdata show --hot-func-list lists them\n"
            "  --detailed-summary   print the profile summary with every cutoff\n"
            "  --show-prof-sym-list print the profile symbol list (extbinary), one name a line\n"
            "  --format F           force the input format (text, binary, extbinary, gcc)\n"
            "  --sample             accepted and ignored (llvm-profdata's spelling)\n"
            "  --no-demangle        C++ names as stored (linkage names); by default the lists show\n"
            "                       them demangled (as c++filt does); --json, --all, --counts and\n"
            "                       --show-prof-sym-list always print linkage names\n"
            "  -q, --quiet          accepted (show prints no progress)\n"
            "\n");
    pk_cli_show_temporal_usage(to);
}

static void print_kind(const pk_profset *ps, pk_prof_format fmt)
{
    printf("Format: %s, %s%s%s%s%s\n", pk_prof_format_name(fmt),
           ps->kind & PK_PROF_PROBE ? "probe-based" : "line-based",
           ps->kind & PK_PROF_CS ? ", context-sensitive" : "", ps->kind & PK_PROF_PREINLINED ? ", pre-inlined" : "",
           ps->kind & PK_PROF_MD5 ? ", MD5 names" : "", ps->kind & PK_PROF_FS ? ", FS discriminators" : "");
}

static void print_summary(const pk_summary *s, int detailed)
{
    printf("Total functions: %" PRIu64 "\n", s->num_functions);
    printf("Maximum function count: %" PRIu64 "\n", s->max_function_count);
    printf("Maximum block count: %" PRIu64 "\n", s->max_count);
    printf("Total number of blocks: %" PRIu64 "\n", s->num_counts);
    printf("Total count: %" PRIu64 "\n", s->total_count);
    if (!detailed) {
        printf("Hot threshold (99%%): %" PRIu64 ", cold threshold (99.9999%%): %" PRIu64 "\n",
               pk_summary_threshold(s, 990000), pk_summary_threshold(s, 999999));
        return;
    }
    printf("Detailed summary:\n");
    for (uint32_t i = 0; i < s->num_entries; i++)
        printf("%" PRIu64 " blocks with count >= %" PRIu64 " account for %g percentage of the total counts.\n",
               s->entries[i].num_counts, s->entries[i].min_count, s->entries[i].cutoff / 10000.0);
}

static int summary_eq(const pk_summary *a, const pk_summary *b)
{
    if (a->total_count != b->total_count || a->max_count != b->max_count ||
        a->max_function_count != b->max_function_count || a->num_counts != b->num_counts ||
        a->num_functions != b->num_functions || a->num_entries != b->num_entries)
        return 0;
    for (uint32_t i = 0; i < a->num_entries; i++)
        if (a->entries[i].cutoff != b->entries[i].cutoff || a->entries[i].min_count != b->entries[i].min_count ||
            a->entries[i].num_counts != b->entries[i].num_counts)
            return 0;
    return 1;
}

static int print_one(const pk_profset *ps, const pk_fprof *f, pk_err *err)
{
    pk_buf b = {0};
    int rc = pk_text_write_one(ps, f, &b, err);
    if (!rc && b.oom)
        rc = pk_err_set(err, "out of memory");
    if (!rc)
        pk_cli_put_lines(stdout, (const char *)b.data, b.len);
    pk_buf_free(&b);
    return rc;
}

/* --function NAME: the linkage name, or (demangling on) its demangled form */
static bool names_function(const pk_profset *ps, const pk_fprof *f, const char *func, pk_demangler *dm)
{
    const char *name = pk_profset_name(ps, f->name);
    return !strcmp(name, func) || !strcmp(pk_demangle_text(dm, name), func);
}

int pk_cmd_show(int argc, char **argv)
{
    if (pk_cli_wants_temporal(argc, argv)) /* raw/indexed temporal profiles: temporal_cli.c */
        return pk_cli_show_temporal(argc, argv);
    const char *path = NULL, *func = NULL;
    long top = 20;
    int counts = 0, all = 0, detailed = 0, syms = 0, json = 0, hot = 0, top_given = 0;
    pk_demangler dm = {0};
    pk_prof_format fmt = PK_FMT_AUTO;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--function") && i + 1 < argc) {
            func = argv[++i];
        } else if (!strncmp(a, "--function=", 11)) {
            func = a + 11;
        } else if (((!strcmp(a, "--top") || !strcmp(a, "--topn")) && i + 1 < argc) || !strncmp(a, "--top=", 6) ||
                   !strncmp(a, "--topn=", 7)) {
            const char *eq = strchr(a, '=');
            const char *v = eq ? eq + 1 : argv[++i];
            char *end;
            top = strtol(v, &end, 10);
            if (!*v || *end || top < 0)
                return pk_cli_usage("show", "bad --top value '%s'", v);
            top_given = 1;
        } else if (!strcmp(a, "--counts")) {
            counts = 1;
        } else if (!strcmp(a, "--all") || !strcmp(a, "--all-functions")) {
            all = 1;
        } else if (!strcmp(a, "--json") || !strcmp(a, "--show-format=json")) {
            json = 1;
        } else if (!strcmp(a, "--show-format=text")) {
            json = 0;
        } else if (!strcmp(a, "--hot-func-list")) {
            hot = 1;
        } else if (!strcmp(a, "--sample") || !strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            /* llvm-profdata's profile kind; quiet: nothing to silence */
        } else if (!strcmp(a, "--no-demangle")) {
            dm.off = true;
        } else if (!strcmp(a, "--show-prof-sym-list")) {
            syms = 1;
        } else if (!strcmp(a, "--detailed-summary")) {
            detailed = 1;
        } else if ((!strcmp(a, "--format") && i + 1 < argc) || !strncmp(a, "--format=", 9)) {
            const char *v = a[8] == '=' ? a + 9 : argv[++i];
            if (pk_prof_format_parse(v, &fmt))
                return pk_cli_usage("show", "unknown format '%s'", v);
        } else if (a[0] == '-' && a[1]) {
            return pk_cli_usage("show", "unknown option '%s'", a);
        } else if (!path) {
            path = a;
        } else {
            return pk_cli_usage("show", "more than one profile given");
        }
    }
    if (!path)
        return pk_cli_usage("show", "no profile given");
    if (json + hot + all + syms > 1)
        return pk_cli_usage("show", "--json, --hot-func-list, --all and --show-prof-sym-list exclude each other");

    /* the other files pgokit writes: a summary of each */
    if (fmt == PK_FMT_AUTO) {
        uint8_t head[16];
        size_t got_n = 0;
        FILE *fp = fopen(path, "rb");
        if (fp) {
            got_n = fread(head, 1, sizeof head, fp);
            fclose(fp);
        }
        switch (got_n ? pk_file_identify(head, got_n) : PK_KIND_TEXT) {
        case PK_KIND_RAWPROF: return pk_show_rawprof(path, (size_t)top);
        case PK_KIND_PERF_DATA: return pk_show_samples(path, false);
        case PK_KIND_PPROF: return pk_show_samples(path, true);
        case PK_KIND_EXACT: return pk_show_exact(path);
        default: break; /* sample profiles; the reader names anything else */
        }
    }

    pk_err err = {{0}};
    pk_profset ps;
    if (pk_profset_init(&ps, &err))
        return pk_cli_fail("show", &err);
    pk_prof_format got;
    int rc = 0;
    pk_fprof **fs = NULL;
    size_t n = 0;
    if (pk_prof_read_file(&ps, path, fmt, &got, &err) || pk_profset_sorted(&ps, &fs, &n, &err)) {
        rc = pk_cli_fail("show", &err);
        goto out;
    }
    if (syms) {
        for (size_t i = 0; i < pk_u64map_end(&ps.symbols); i++)
            if (pk_u64map_used(&ps.symbols, i))
                printf("%s\n", pk_profset_name(&ps, (pk_name_id)pk_u64map_key(&ps.symbols, i)));
        goto out;
    }
    if (json) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++) /* --function: every context of that leaf */
            if (!func || names_function(&ps, fs[i], func, &dm))
                fs[k++] = fs[i];
        if (func && !k) {
            fprintf(stderr, "pgokit show: %s: no profile for function '%s'\n", path, func);
            rc = 1;
            goto out;
        }
        pk_show_json(stdout, &ps, fs, top_given && top && (size_t)top < k ? (size_t)top : k);
        goto out;
    }
    if (hot) {
        pk_summary hs;
        if (!ps.has_summary && pk_profset_summary(&ps, &hs, &err)) {
            rc = pk_cli_fail("show", &err);
            goto out;
        }
        pk_show_hot_list(stdout, &ps, fs, n, ps.has_summary ? &ps.summary : &hs, top_given ? (size_t)top : 0, &dm);
        goto out;
    }
    if (all) {
        for (size_t i = 0; i < n && !rc; i++)
            if (print_one(&ps, fs[i], &err))
                rc = pk_cli_fail("show", &err);
        goto out;
    }
    if (func) {
        size_t found = 0;
        for (size_t i = 0; i < n && !rc; i++) {
            if (!names_function(&ps, fs[i], func, &dm))
                continue;
            found++;
            if (print_one(&ps, fs[i], &err))
                rc = pk_cli_fail("show", &err);
        }
        if (!found) {
            fprintf(stderr, "pgokit show: %s: no profile for function '%s'\n", path, func);
            rc = 1;
        }
        goto out;
    }
    pk_summary s;
    if (pk_profset_summary(&ps, &s, &err)) {
        rc = pk_cli_fail("show", &err);
        goto out;
    }
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total = pk_sat_add(total, fs[i]->total);
    printf("Profile: %s\n", path);
    print_kind(&ps, got);
    printf("Profiles: %zu%s, total samples: %" PRIu64 "\n", n, ps.kind & PK_PROF_CS ? " contexts" : " functions",
           total);
    print_summary(ps.has_summary ? &ps.summary : &s, detailed);
    if (ps.has_summary && !summary_eq(&ps.summary, &s))
        printf("Note: the stored summary differs from the one recomputed from the counts\n");
    size_t shown = top == 0 || (size_t)top > n ? n : (size_t)top;
    printf("Top %zu %s by total samples:\n", shown, ps.kind & PK_PROF_CS ? "contexts" : "functions");
    printf("%14s %8s %12s %12s  %s\n", "total", "%", "head", "max", "name");
    for (size_t i = 0; i < shown; i++) {
        const pk_fprof *f = fs[i];
        char ctxbuf[512];
        const char *name = pk_profset_name(&ps, f->name);
        if (ps.kind & PK_PROF_CS) {
            pk_profset_ctx_text(&ps, f->ctx, ctxbuf, sizeof ctxbuf);
            name = ctxbuf;
        }
        char name_esc[2048];
        printf("%14" PRIu64 " %7.3f%% %12" PRIu64 " %12" PRIu64 "  %s\n", f->total,
               total ? 100.0 * (double)f->total / (double)total : 0.0, f->head, pk_fprof_max_count(f),
               pk_cli_name(name_esc, sizeof name_esc, pk_demangle_text(&dm, name)));
    }
    if (counts)
        for (size_t i = 0; i < shown && !rc; i++)
            if (print_one(&ps, fs[i], &err))
                rc = pk_cli_fail("show", &err);
out:
    free(fs);
    pk_profset_free(&ps);
    pk_demangler_free(&dm);
    return rc;
}
