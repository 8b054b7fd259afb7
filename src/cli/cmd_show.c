/* cmd_show.c — `pgokit show PROFILE`: what a sample profile holds (format,
 * kind, totals, summary, hottest functions), one function's profile, or
 * every function's. */
#include "cli/cli.h"
#include "cli/temporal_cli.h"
#include "format/format.h"
#include "profile/profile.h"

#include <inttypes.h>
#include <stdlib.h>

const char pk_cmd_show_summary[] = "show a sample profile: totals, summary, top functions, one function";

static void usage(FILE *to)
{
    fprintf(to,
            "usage: pgokit show PROFILE [options]\n"
            "  --function NAME      print the profile of NAME (every context whose leaf is NAME)\n"
            "  --top N              list the N hottest functions by total samples (default 20; 0 = all)\n"
            "  --counts             print the body of every listed function (text format)\n"
            "  --all                print the whole profile in text format\n"
            "  --detailed-summary   print the profile summary with every cutoff\n"
            "  --show-prof-sym-list print the profile symbol list (extbinary), one name a line\n"
            "  --format F           force the input format (text, binary, extbinary, gcc)\n");
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
        fwrite(b.data, 1, b.len, stdout);
    pk_buf_free(&b);
    return rc;
}

int pk_cmd_show(int argc, char **argv)
{
    if (pk_cli_wants_temporal(argc, argv)) /* raw/indexed temporal profiles: temporal_cli.c */
        return pk_cli_show_temporal(argc, argv);
    const char *path = NULL, *func = NULL;
    long top = 20;
    int counts = 0, all = 0, detailed = 0, syms = 0;
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
        } else if ((!strcmp(a, "--top") && i + 1 < argc) || !strncmp(a, "--top=", 6)) {
            const char *v = a[5] == '=' ? a + 6 : argv[++i];
            char *end;
            top = strtol(v, &end, 10);
            if (*end || top < 0)
                return pk_cli_usage("show", "bad --top value '%s'", v);
        } else if (!strcmp(a, "--counts")) {
            counts = 1;
        } else if (!strcmp(a, "--all")) {
            all = 1;
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
    if (all) {
        for (size_t i = 0; i < n && !rc; i++)
            if (print_one(&ps, fs[i], &err))
                rc = pk_cli_fail("show", &err);
        goto out;
    }
    if (func) {
        size_t found = 0;
        for (size_t i = 0; i < n && !rc; i++) {
            if (strcmp(pk_profset_name(&ps, fs[i]->name), func))
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
        printf("%14" PRIu64 " %7.3f%% %12" PRIu64 " %12" PRIu64 "  %s\n", f->total,
               total ? 100.0 * (double)f->total / (double)total : 0.0, f->head, pk_fprof_max_count(f), name);
    }
    if (counts)
        for (size_t i = 0; i < shown && !rc; i++)
            if (print_one(&ps, fs[i], &err))
                rc = pk_cli_fail("show", &err);
out:
    free(fs);
    pk_profset_free(&ps);
    return rc;
}
