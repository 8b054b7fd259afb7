/* temporal_cli.c — `pgokit show` / `pgokit merge` for temporal profiles.
 *
 * merge policy on bad inputs (truncated, corrupt, wrong build-id): by default
 * every input is checked, every bad one is reported, and NOTHING is written
 * (exit 1) — a partial profile is never produced silently. With --skip-bad the
 * bad inputs are reported as warnings and the others are merged (exit 0 if at
 * least one input was merged). Directories contribute their *.pgoraw and
 * *.pgotemporal files in name order; the runtime's "*.tmp.<pid>" leftovers of
 * a killed dump are therefore never picked up. */
#include "cli/cli.h"
#include "cli/temporal_cli.h"
#include "temporal/temporal.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

static void print_hex(FILE *o, const uint8_t *id, uint32_t len)
{
    for (uint32_t i = 0; i < len; i++) fprintf(o, "%02x", id[i]);
    if (!len) fputs("none", o);
}

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

int pk_cli_wants_temporal(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--temporal")) return 1;
        if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output") || !strcmp(argv[i], "--binary")) { i++; continue; }
        if (argv[i][0] == '-') continue;
        struct stat st;
        if (stat(argv[i], &st) != 0) continue;
        if (S_ISREG(st.st_mode) && pk_temporal_is_profile(argv[i])) return 1;
        if (S_ISDIR(st.st_mode)) {
            DIR *d = opendir(argv[i]);
            int yes = 0;
            struct dirent *e;
            while (d && (e = readdir(d)))
                if (ends_with(e->d_name, ".pgoraw") || ends_with(e->d_name, ".pgotemporal")) { yes = 1; break; }
            if (d) closedir(d);
            if (yes) return 1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ show */

void pk_cli_show_temporal_usage(FILE *o)
{
    fprintf(o, "usage: pgokit show [--temporal] [--binary BIN] [--functions|--traces] PROFILE\n"
               "  PROFILE: a raw temporal profile (*.pgoraw) or an indexed one (merge output).\n"
               "  --debug-binary F, --debug-dir DIR: where a stripped BIN's symbols are\n"
               "  --binary BIN   names for a raw profile (default: the path recorded in it,\n"
               "                 used only when its build-id matches)\n"
               "  --functions / --traces  print only that part of an indexed profile\n"
               "Raw lines:     rec ORDER COUNT MODULE 0xADDR NAME\n"
               "Indexed lines: func INDEX COVERED_RUNS ENTRY_COUNT 0xADDR SIZE NAME\n"
               "               trace T weight W length L: NAME...\n");
}

static int show_raw(const char *path, const char *binary, const pk_debug_opts *debug, int quiet)
{
    pk_err err;
    pk_temporal_raw raw;
    if (pk_temporal_raw_open(&raw, path, &err) != 0) return pk_cli_fail("show", &err);
    pk_temporal_symtab syms;
    int have_syms = 0;
    char *modpath = NULL;
    if (binary) {
        char origin[1024];
        if (pk_temporal_symtab_load_opts(&syms, binary, debug, origin, sizeof origin, &err) != 0) {
            pk_temporal_raw_close(&raw);
            return pk_cli_fail("show", &err);
        }
        if (!quiet)
            fprintf(stderr, "pgokit show: debug info: %s\n", origin);
        have_syms = 1;
    } else if (raw.num_modules && raw.modules[0].path_len) {
        modpath = strndup(raw.modules[0].path, raw.modules[0].path_len);
        if (modpath && pk_temporal_symtab_load(&syms, modpath, &err) == 0) have_syms = 1;
    }
    uint32_t mod = UINT32_MAX;
    if (have_syms) {
        for (uint32_t i = 0; i < raw.num_modules && mod == UINT32_MAX; i++)
            if (raw.modules[i].build_id_len == syms.build_id_len &&
                !memcmp(raw.modules[i].build_id, syms.build_id, syms.build_id_len)) mod = i;
        if (mod == UINT32_MAX && binary) {
            pk_err_set(&err, "%s: build-id mismatch: %s is not the binary that wrote this profile", path, binary);
            pk_temporal_symtab_free(&syms);
            pk_temporal_raw_close(&raw);
            free(modpath);
            return pk_cli_fail("show", &err);
        }
    }
    printf("raw temporal profile %s\n", path);
    if (mod == UINT32_MAX)
        printf("names: unavailable (%s; pass --binary BIN)\n",
               modpath ? "the recorded binary is missing or was rebuilt" : "no binary recorded");
    printf("version %u mode %s pid %llu records %llu dropped %llu redirected %u%s\n", raw.version,
           raw.flags & PK_TEMPORAL_RAW_COUNTS ? "count" : "trace", (unsigned long long)raw.pid,
           (unsigned long long)raw.num_records, (unsigned long long)raw.dropped, raw.redirected,
           raw.flags & PK_TEMPORAL_RAW_OVERFLOW ? " (table overflowed)" : "");
    for (uint32_t i = 0; i < raw.num_modules; i++) {
        const pk_temporal_raw_module *m = &raw.modules[i];
        printf("module %u build-id ", i);
        print_hex(stdout, m->build_id, m->build_id_len);
        printf(" bias 0x%llx %.*s\n", (unsigned long long)m->load_bias, (int)m->path_len, m->path);
    }
    for (uint64_t i = 0; i < raw.num_records; i++) {
        pk_temporal_raw_record r = pk_temporal_raw_record_at(&raw, i);
        const struct pk_temporal_sym *y = NULL;
        if (have_syms && r.module == mod) y = pk_temporal_symtab_lookup(&syms, r.addr);
        printf("rec %llu %llu %d 0x%llx %s\n", (unsigned long long)i + 1, (unsigned long long)r.count,
               r.module == UINT32_MAX ? -1 : (int)r.module, (unsigned long long)r.addr, y ? y->name : "?");
    }
    if (have_syms) pk_temporal_symtab_free(&syms);
    free(modpath);
    pk_temporal_raw_close(&raw);
    return 0;
}

static int show_indexed(const char *path, int funcs, int traces)
{
    pk_err err;
    pk_temporal_profile p;
    if (pk_temporal_load(&p, path, &err) != 0) return pk_cli_fail("show", &err);
    printf("indexed temporal profile %s\n", path);
    printf("runs %llu traces %llu seen %llu reservoir %llu max-length %llu functions %llu counts %s build-id ",
           (unsigned long long)p.num_runs, (unsigned long long)p.num_traces, (unsigned long long)p.traces_seen,
           (unsigned long long)p.reservoir_size, (unsigned long long)p.max_trace_len,
           (unsigned long long)p.num_funcs, p.flags & PK_TEMPORAL_HAS_COUNTS ? "yes" : "no");
    print_hex(stdout, p.build_id, p.build_id_len);
    putchar('\n');
    if (funcs)
        for (uint64_t i = 0; i < p.num_funcs; i++) {
            const pk_temporal_func *f = &p.funcs[i];
            printf("func %llu %llu %llu 0x%llx %llu %s\n", (unsigned long long)i,
                   (unsigned long long)f->covered_runs, (unsigned long long)f->entry_count,
                   (unsigned long long)f->addr, (unsigned long long)f->size, f->name);
        }
    if (traces)
        for (uint64_t t = 0; t < p.num_traces; t++) {
            const pk_temporal_trace *tr = &p.traces[t];
            printf("trace %llu weight %llu length %u:", (unsigned long long)t, (unsigned long long)tr->weight, tr->len);
            for (uint32_t i = 0; i < tr->len; i++) printf(" %s", p.funcs[tr->funcs[i]].name);
            putchar('\n');
        }
    pk_temporal_free(&p);
    return 0;
}

int pk_cli_show_temporal(int argc, char **argv)
{
    const char *binary = NULL, *path = NULL;
    int funcs = 1, traces = 1, quiet = 0;
    pk_cli_debug dbg = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { pk_cli_show_temporal_usage(stdout); return 0; }
        else if (!strcmp(a, "--temporal")) {}
        else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) quiet = 1;
        else if (!strcmp(a, "--binary") && i + 1 < argc) binary = argv[++i];
        else if ((!strcmp(a, "--debug-binary") || !strcmp(a, "--debug-dir") || !strcmp(a, "--dwp")) && i + 1 < argc) {
            if (pk_cli_debug_option(&dbg, "show", a, argv[++i]) < 0) return 2;
        }
        else if (!strcmp(a, "--functions")) traces = 0;
        else if (!strcmp(a, "--traces")) funcs = 0;
        else if (a[0] == '-') return pk_cli_usage("show", "unknown option '%s'", a);
        else if (path) return pk_cli_usage("show", "one profile at a time");
        else path = a;
    }
    if (!path) return pk_cli_usage("show", "missing PROFILE");
    if (pk_temporal_is_raw(path)) return show_raw(path, binary, &dbg.opts, quiet);
    return show_indexed(path, funcs, traces);
}

/* ----------------------------------------------------------------- merge */

void pk_cli_merge_temporal_usage(FILE *o)
{
    fprintf(o, "usage: pgokit merge --temporal --binary BIN -o OUT [options] INPUT...\n"
               "  INPUT: raw temporal profiles (*.pgoraw), indexed temporal profiles, or\n"
               "         directories (their *.pgoraw and *.pgotemporal files, in name order)\n"
               "  --binary BIN        the profiled binary (names; its build-id must match)\n"
               "  --debug-binary F, --debug-dir DIR: where a stripped BIN's symbols are\n"
               "  --reservoir N       traces kept by reservoir sampling (default %u)\n"
               "  --max-trace-len N   trace length cap (default %u)\n"
               "  --weight W          weight of the traces of raw inputs (default 1)\n"
               "  --skip-bad          report bad inputs and merge the others (default: any\n"
               "                      bad input fails the merge and nothing is written)\n"
               "  -q, --quiet         no summary on stderr\n",
               PK_TEMPORAL_DEFAULT_RESERVOIR, PK_TEMPORAL_DEFAULT_MAX_TRACE_LEN);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Expands directories; returns a malloc'd vector of malloc'd paths. */
static int collect(pk_vec *out, const char *arg, pk_err *err)
{
    struct stat st;
    if (stat(arg, &st) != 0) return pk_err_errno(err, "%s", arg);
    if (!S_ISDIR(st.st_mode)) {
        char **slot = pk_vec_push(out);
        if (!slot || !(*slot = strdup(arg))) return pk_err_set(err, "out of memory");
        return 0;
    }
    DIR *d = opendir(arg);
    if (!d) return pk_err_errno(err, "%s: cannot open directory", arg);
    size_t first = out->len;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!ends_with(e->d_name, ".pgoraw") && !ends_with(e->d_name, ".pgotemporal")) continue;
        char **slot = pk_vec_push(out);
        if (!slot || asprintf(slot, "%s/%s", arg, e->d_name) < 0) { closedir(d); return pk_err_set(err, "out of memory"); }
    }
    closedir(d);
    qsort((char **)out->data + first, out->len - first, sizeof(char *), cmp_str);
    return 0;
}

static int parse_u64(const char *s, uint64_t *v)
{
    char *end;
    unsigned long long x = strtoull(s, &end, 10);
    if (!*s || *end || x == 0) return -1;
    *v = x;
    return 0;
}

int pk_cli_merge_temporal(int argc, char **argv)
{
    const char *binary = NULL, *out = NULL;
    pk_cli_debug dbg = {0};
    uint64_t reservoir = 0, maxlen = 0, weight = 1;
    int skip_bad = 0, quiet = 0;
    pk_err err;
    pk_vec inputs;
    pk_vec_init(&inputs, sizeof(char *));
    int rc = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has = i + 1 < argc;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { pk_cli_merge_temporal_usage(stdout); rc = 0; goto done; }
        else if (!strcmp(a, "--temporal")) {}
        else if (!strcmp(a, "--binary") && has) binary = argv[++i];
        else if ((!strcmp(a, "--debug-binary") || !strcmp(a, "--debug-dir") || !strcmp(a, "--dwp")) && has) {
            if (pk_cli_debug_option(&dbg, "merge", a, argv[++i]) < 0) { rc = 2; goto done; }
        }
        else if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && has) out = argv[++i];
        else if (!strcmp(a, "--reservoir") && has) {
            if (parse_u64(argv[++i], &reservoir)) { rc = pk_cli_usage("merge", "bad --reservoir '%s'", argv[i]); goto done; }
        } else if (!strcmp(a, "--max-trace-len") && has) {
            if (parse_u64(argv[++i], &maxlen) || maxlen > UINT32_MAX) { rc = pk_cli_usage("merge", "bad --max-trace-len '%s'", argv[i]); goto done; }
        } else if (!strcmp(a, "--weight") && has) {
            if (parse_u64(argv[++i], &weight)) { rc = pk_cli_usage("merge", "bad --weight '%s'", argv[i]); goto done; }
        } else if (!strcmp(a, "--skip-bad")) skip_bad = 1;
        else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) quiet = 1;
        else if (a[0] == '-') { rc = pk_cli_usage("merge", "unknown option '%s'", a); goto done; }
        else if (collect(&inputs, a, &err) != 0) { rc = pk_cli_fail("merge", &err); goto done; }
    }
    if (!out) { rc = pk_cli_usage("merge", "missing -o OUT"); goto done; }
    if (pk_cli_check_output("merge", out, argc, argv)) { rc = 1; goto done; }
    if (!inputs.len) { rc = pk_cli_usage("merge", "no input profiles"); goto done; }
    for (size_t i = 0; i < inputs.len; i++) /* a directory's files too */
        if (pk_cli_check_output_input("merge", out, PK_VEC_AT(&inputs, char *, i))) { rc = 1; goto done; }

    pk_temporal_profile prof;
    pk_temporal_init(&prof, reservoir, maxlen);
    pk_temporal_symtab syms;
    int have_syms = 0;
    if (binary) {
        char origin[1024];
        if (pk_temporal_symtab_load_opts(&syms, binary, &dbg.opts, origin, sizeof origin, &err) != 0) { pk_temporal_free(&prof); rc = pk_cli_fail("merge", &err); goto done; }
        if (!quiet) fprintf(stderr, "pgokit merge: debug info: %s\n", origin);
        have_syms = 1;
    }
    size_t bad = 0, good = 0, nraw = 0, nidx = 0;
    uint64_t unresolved = 0;
    for (size_t i = 0; i < inputs.len; i++) {
        const char *path = PK_VEC_AT(&inputs, char *, i);
        int ok = 0;
        if (pk_temporal_is_raw(path)) {
            pk_temporal_raw raw;
            if (!have_syms) {
                pk_err_set(&err, "%s: raw temporal profile needs --binary BIN for its names", path);
            } else if (pk_temporal_raw_open(&raw, path, &err) == 0) {
                pk_temporal_correlate_stats st;
                ok = pk_temporal_add_raw(&prof, &raw, &syms, weight, &st, &err) == 0;
                unresolved += st.unresolved;
                pk_temporal_raw_close(&raw);
                nraw += ok;
            }
        } else {
            pk_temporal_profile src;
            if (pk_temporal_load(&src, path, &err) == 0) {
                if (have_syms && src.build_id_len &&
                    (src.build_id_len != syms.build_id_len || memcmp(src.build_id, syms.build_id, src.build_id_len)))
                    pk_err_set(&err, "%s: build-id mismatch with %s", path, binary);
                else if (pk_temporal_merge(&prof, &src, &err) == 0) ok = 1;
                else pk_err_prefix(&err, "%s", path);
                pk_temporal_free(&src);
                nidx += ok;
            }
        }
        if (ok) { good++; continue; }
        bad++;
        fprintf(stderr, "pgokit merge: %s%s\n", skip_bad ? "warning: skipped: " : "", err.msg);
    }
    if (bad && !skip_bad) {
        fprintf(stderr, "pgokit merge: %zu of %zu inputs are bad; nothing written (use --skip-bad to merge the others)\n",
                bad, inputs.len);
    } else if (!good) {
        fprintf(stderr, "pgokit merge: no input could be merged; nothing written\n");
    } else if (pk_temporal_write(&prof, out, &err) != 0) {
        pk_cli_fail("merge", &err);
    } else {
        rc = 0;
        if (!quiet)
            fprintf(stderr, "pgokit merge: %zu raw + %zu indexed inputs%s: %llu functions, %llu traces kept of %llu"
                    "%s%llu unresolved addresses\n", nraw, nidx, bad ? " (bad ones skipped)" : "",
                    (unsigned long long)prof.num_funcs, (unsigned long long)prof.num_traces,
                    (unsigned long long)prof.traces_seen, ", ", (unsigned long long)unresolved);
    }
    if (have_syms) pk_temporal_symtab_free(&syms);
    pk_temporal_free(&prof);
done:
    for (size_t i = 0; i < inputs.len; i++) free(PK_VEC_AT(&inputs, char *, i));
    pk_vec_free(&inputs);
    return rc;
}
