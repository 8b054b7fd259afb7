/* cmd_overlap.c — `pgokit overlap BASE TEST`: how similar two sample
 * profiles are, with the metrics and layout of `llvm-profdata overlap
 * --sample` (definitions in src/profile/overlap.h). */
#include "cli/cli.h"
#include "common/json_out.h"
#include "cli/overlap_exact.h"
#include "format/format.h"
#include "profile/overlap.h"

#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>

const char pk_cmd_overlap_summary[] = "compare two sample profiles (similarity, overlap, hot functions and blocks)";

static void usage(FILE *to)
{
    fprintf(to,
            "usage: pgokit overlap BASE TEST [options]\n"
            "  --function SUBSTR         function-level details for matched functions whose name contains SUBSTR\n"
            "  --value-cutoff N          function-level details for test functions with a max count >= N\n"
            "  --similarity-cutoff N     function-level details for matched functions with similarity below N/1e6\n"
            "  --json                    the same as JSON, shares as fractions (0..1); every function of TEST\n"
            "                            unless a --function / cutoff option selects some\n"
            "  --sample                  accepted and ignored (llvm-profdata's spelling)\n"
            "  -q, --quiet               accepted (overlap prints no progress)\n"
            "       pgokit overlap --exact EXACT... --binary BIN PROFILE...\n"
            "  block overlap of each PROFILE against exact counts (pgokit record --exact-counts);\n"
            "  --json: as a JSON array\n");
}

/* Pads the line to a column like LLVM's formatted_raw_ostream::PadToColumn
 * (always at least one space). */
static void pad(int *col, int to)
{
    int n = to - *col;
    if (n < 1)
        n = 1;
    printf("%*s", n, "");
    *col += n;
}

static void cell(int *col, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void cell(int *col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    *col += vprintf(fmt, ap);
    va_end(ap);
}

struct row {
    const pk_overlap_func *f;
    size_t order;
};

static int row_cmp(const void *a, const void *b)
{
    const struct row *x = a, *y = b;
    if (x->f->base_weight != y->f->base_weight)
        return x->f->base_weight > y->f->base_weight ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

static double share(uint64_t a, uint64_t b) { return b ? (double)a / (double)b : 0.0; }

static void print_json(const pk_overlap *o, const pk_profset *test, const char *const paths[2],
                       const struct row *rows, size_t nrows)
{
    pk_json j;
    pk_json_init(&j, stdout);
    pk_json_begin_object(&j, NULL);
    pk_json_str(&j, "base_profile", paths[0]);
    pk_json_str(&j, "test_profile", paths[1]);
    pk_json_begin_object(&j, "program");
    pk_json_double(&j, "similarity", o->similarity);
    pk_json_double(&j, "sample_overlap", share(o->overlap_sample, o->union_sample));
    pk_json_double(&j, "base_unique_sample_share", share(o->base_unique_sample, o->base_sample));
    pk_json_double(&j, "test_unique_sample_share", share(o->test_unique_sample, o->test_sample));
    pk_json_u64(&j, "base_samples", o->base_sample);
    pk_json_u64(&j, "test_samples", o->test_sample);
    pk_json_double(&j, "function_overlap", share(o->overlap_funcs, o->union_funcs));
    pk_json_u64(&j, "overlap_functions", o->overlap_funcs);
    pk_json_u64(&j, "base_unique_functions", o->base_unique_funcs);
    pk_json_u64(&j, "test_unique_functions", o->test_unique_funcs);
    pk_json_double(&j, "hot_function_overlap", share(o->hot_func_overlap, o->hot_func_union));
    pk_json_u64(&j, "overlap_hot_functions", o->hot_func_overlap);
    pk_json_u64(&j, "base_unique_hot_functions", o->hot_func_base - o->hot_func_overlap);
    pk_json_u64(&j, "test_unique_hot_functions", o->hot_func_test - o->hot_func_overlap);
    pk_json_double(&j, "hot_block_overlap", share(o->hot_block_overlap, o->hot_block_union));
    pk_json_u64(&j, "overlap_hot_blocks", o->hot_block_overlap);
    pk_json_u64(&j, "base_unique_hot_blocks", o->hot_block_base - o->hot_block_overlap);
    pk_json_u64(&j, "test_unique_hot_blocks", o->hot_block_test - o->hot_block_overlap);
    pk_json_u64(&j, "base_hot_threshold", o->base_hot_threshold);
    pk_json_u64(&j, "test_hot_threshold", o->test_hot_threshold);
    pk_json_end_object(&j);
    pk_json_begin_array(&j, "functions");
    for (size_t i = 0; i < nrows; i++) {
        const pk_overlap_func *f = rows[i].f;
        size_t need = pk_profset_ctx_text(test, f->test->ctx, NULL, 0);
        char *name = malloc(need + 1);
        pk_json_begin_object(&j, NULL);
        if (name) {
            pk_profset_ctx_text(test, f->test->ctx, name, need + 1);
            pk_json_str(&j, "name", name);
            free(name);
        }
        pk_json_bool(&j, "in_base", f->base != NULL);
        pk_json_double(&j, "base_weight", f->base_weight);
        pk_json_double(&j, "test_weight", f->test_weight);
        pk_json_double(&j, "similarity", f->similarity);
        pk_json_double(&j, "overlap", share(f->overlap_sample, f->union_sample));
        pk_json_double(&j, "base_unique", share(f->base_unique_sample, f->base_sample));
        pk_json_double(&j, "test_unique", share(f->test_unique_sample, f->test_sample));
        pk_json_u64(&j, "base_samples", f->base_sample);
        pk_json_u64(&j, "test_samples", f->test_sample);
        pk_json_u64(&j, "test_max", f->test_max);
        pk_json_end_object(&j);
    }
    pk_json_end_array(&j);
    pk_json_end_object(&j);
    pk_json_finish(&j);
}

static int load(pk_profset *ps, const char *path, pk_err *err)
{
    if (pk_profset_init(ps, err))
        return -1;
    return pk_prof_read_file(ps, path, PK_FMT_AUTO, NULL, err);
}

int pk_cmd_overlap(int argc, char **argv)
{
    const char *paths[2] = {NULL, NULL}, *func = NULL;
    unsigned long long value_cutoff = ULLONG_MAX, sim_cutoff = 0;
    int np = 0, json = 0;
    /* against ground truth: a different comparison (block overlap) */
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--exact") || !strncmp(argv[i], "--exact=", 8))
            return pk_cli_overlap_exact(argc, argv);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if ((!strcmp(a, "--function") && i + 1 < argc) || !strncmp(a, "--function=", 11)) {
            func = a[10] == '=' ? a + 11 : argv[++i];
        } else if ((!strcmp(a, "--value-cutoff") && i + 1 < argc) || !strncmp(a, "--value-cutoff=", 15)) {
            const char *v = a[14] == '=' ? a + 15 : argv[++i];
            char *end;
            value_cutoff = strtoull(v, &end, 10);
            if (*end || !*v)
                return pk_cli_usage("overlap", "bad --value-cutoff '%s'", v);
        } else if ((!strcmp(a, "--similarity-cutoff") && i + 1 < argc) || !strncmp(a, "--similarity-cutoff=", 20)) {
            const char *v = a[19] == '=' ? a + 20 : argv[++i];
            char *end;
            sim_cutoff = strtoull(v, &end, 10);
            if (*end || !*v)
                return pk_cli_usage("overlap", "bad --similarity-cutoff '%s'", v);
        } else if (!strcmp(a, "--sample") || !strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            /* accepted for llvm-profdata muscle memory; nothing to silence */
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (a[0] == '-' && a[1]) {
            return pk_cli_usage("overlap", "unknown option '%s'", a);
        } else if (np < 2) {
            paths[np++] = a;
        } else {
            return pk_cli_usage("overlap", "expected exactly two profiles");
        }
    }
    if (np != 2)
        return pk_cli_usage("overlap", "expected two profiles: BASE TEST");
    pk_err err = {{0}};
    pk_profset base, test;
    memset(&base, 0, sizeof base);
    memset(&test, 0, sizeof test);
    int rc = 0, have_b = 0, have_t = 0;
    pk_overlap o;
    memset(&o, 0, sizeof o);
    if (load(&base, paths[0], &err)) {
        rc = pk_cli_fail("overlap", &err);
        goto out;
    }
    have_b = 1;
    if (load(&test, paths[1], &err)) {
        rc = pk_cli_fail("overlap", &err);
        goto out;
    }
    have_t = 1;
    if (pk_overlap_compute(&base, &test, &o, &err)) {
        rc = pk_cli_fail("overlap", &err);
        goto out;
    }
    if (json && o.base_sample && o.test_sample) {
        bool select = func || value_cutoff != ULLONG_MAX || sim_cutoff;
        struct row *rows = calloc(o.nfuncs ? o.nfuncs : 1, sizeof *rows);
        size_t nrows = 0;
        if (!rows) {
            rc = 1;
            goto out;
        }
        for (size_t i = 0; i < o.nfuncs; i++) {
            const pk_overlap_func *f = &o.funcs[i];
            char name[1024];
            pk_profset_ctx_text(&test, f->test->ctx, name, sizeof name);
            if (!select || f->test_max >= value_cutoff || (f->base && f->similarity < (double)sim_cutoff / 1000000) ||
                (f->base && func && strstr(name, func))) {
                rows[nrows].f = f;
                rows[nrows].order = i;
                nrows++;
            }
        }
        qsort(rows, nrows, sizeof *rows, row_cmp);
        print_json(&o, &test, paths, rows, nrows);
        free(rows);
        goto out;
    }
    if (!o.base_sample || !o.test_sample) {
        if (json) {
            pk_err_set(&err, "%s: the sum of sample counts is 0", !o.base_sample ? paths[0] : paths[1]);
            rc = pk_cli_fail("overlap", &err);
            goto out;
        }
        if (!o.base_sample)
            printf("Sum of sample counts for profile %s is 0.\n", paths[0]);
        if (!o.test_sample)
            printf("Sum of sample counts for profile %s is 0.\n", paths[1]);
        goto out;
    }
    printf("Profile overlap infomation for base_profile: %s and test_profile: %s\nProgram level:\n", paths[0],
           paths[1]);
    printf("  Whole program profile similarity: %.3f%%\n", o.similarity * 100);
    printf("  Whole program sample overlap: %.3f%%\n", (double)o.overlap_sample / (double)o.union_sample * 100);
    printf("    percentage of samples unique in base profile: %.3f%%\n",
           (double)o.base_unique_sample / (double)o.base_sample * 100);
    printf("    percentage of samples unique in test profile: %.3f%%\n",
           (double)o.test_unique_sample / (double)o.test_sample * 100);
    printf("    total samples in base profile: %" PRIu64 "\n", o.base_sample);
    printf("    total samples in test profile: %" PRIu64 "\n", o.test_sample);
    printf("  Function overlap: %.3f%%\n", (double)o.overlap_funcs / (double)o.union_funcs * 100);
    printf("    overlap functions: %" PRIu64 "\n", o.overlap_funcs);
    printf("    functions unique in base profile: %" PRIu64 "\n", o.base_unique_funcs);
    printf("    functions unique in test profile: %" PRIu64 "\n", o.test_unique_funcs);
    printf("  Hot-function overlap: %.3f%%\n",
           o.hot_func_union ? (double)o.hot_func_overlap / (double)o.hot_func_union * 100 : 0.0);
    printf("    overlap hot functions: %" PRIu64 "\n", o.hot_func_overlap);
    printf("    hot functions unique in base profile: %" PRIu64 "\n", o.hot_func_base - o.hot_func_overlap);
    printf("    hot functions unique in test profile: %" PRIu64 "\n", o.hot_func_test - o.hot_func_overlap);
    printf("  Hot-block overlap: %.3f%%\n",
           o.hot_block_union ? (double)o.hot_block_overlap / (double)o.hot_block_union * 100 : 0.0);
    printf("    overlap hot blocks: %" PRIu64 "\n", o.hot_block_overlap);
    printf("    hot blocks unique in base profile: %" PRIu64 "\n", o.hot_block_base - o.hot_block_overlap);
    printf("    hot blocks unique in test profile: %" PRIu64 "\n", o.hot_block_test - o.hot_block_overlap);

    struct row *rows = calloc(o.nfuncs ? o.nfuncs : 1, sizeof *rows);
    size_t nrows = 0;
    if (!rows) {
        rc = 1;
        goto out;
    }
    double low = (double)sim_cutoff / 1000000;
    for (size_t i = 0; i < o.nfuncs; i++) {
        const pk_overlap_func *f = &o.funcs[i];
        char name[1024];
        pk_profset_ctx_text(&test, f->test->ctx, name, sizeof name);
        if (f->test_max >= value_cutoff || (f->base && f->similarity < low) ||
            (f->base && func && strstr(name, func))) {
            rows[nrows].f = f;
            rows[nrows].order = i;
            nrows++;
        }
    }
    qsort(rows, nrows, sizeof *rows, row_cmp);
    if (nrows) {
        int col = 0;
        printf("Function-level details:\n");
        cell(&col, "Base weight");
        pad(&col, 15);
        cell(&col, "Test weight");
        pad(&col, 30);
        cell(&col, "Similarity");
        pad(&col, 43);
        cell(&col, "Overlap");
        pad(&col, 53);
        cell(&col, "Base unique");
        pad(&col, 67);
        cell(&col, "Test unique");
        pad(&col, 81);
        cell(&col, "Base samples");
        pad(&col, 96);
        cell(&col, "Test samples");
        pad(&col, 111);
        printf("Function name\n");
    }
    for (size_t i = 0; i < nrows; i++) {
        const pk_overlap_func *f = rows[i].f;
        int col = 0;
        char name[1024];
        pk_profset_ctx_text(&test, f->test->ctx, name, sizeof name);
        cell(&col, "%.2f%%", f->base_weight * 100);
        pad(&col, 15);
        cell(&col, "%.2f%%", f->test_weight * 100);
        pad(&col, 30);
        cell(&col, "%.2f%%", f->similarity * 100);
        pad(&col, 43);
        cell(&col, "%.2f%%", f->union_sample ? (double)f->overlap_sample / (double)f->union_sample * 100 : 0.0);
        pad(&col, 53);
        cell(&col, "%.2f%%", f->base_sample ? (double)f->base_unique_sample / (double)f->base_sample * 100 : 0.0);
        pad(&col, 67);
        cell(&col, "%.2f%%", f->test_sample ? (double)f->test_unique_sample / (double)f->test_sample * 100 : 0.0);
        pad(&col, 81);
        cell(&col, "%" PRIu64, f->base_sample);
        pad(&col, 96);
        cell(&col, "%" PRIu64, f->test_sample);
        pad(&col, 111);
        printf("%s\n", name);
    }
    free(rows);
out:
    pk_overlap_free(&o);
    if (have_b || base.names)
        pk_profset_free(&base);
    if (have_t || test.names)
        pk_profset_free(&test);
    return rc;
}
