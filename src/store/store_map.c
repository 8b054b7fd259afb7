/* store_map.c — the map step of the profile store (a host's samples → one
 * raw profile, through the profgen pipeline) and the store's times. */
#include "store/store_int.h"

#include "format/format.h"
#include "profgen/pipeline.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

/* raw_version: of a raw profile (else 0) */
static int input_kind(const char *path, int *kind, uint32_t *raw_version, pk_err *err)
{
    *raw_version = 0;
    if (!strcmp(path, "-")) { /* a stream: pipe-mode perf.data (perf record -o -, pgokit record -o -) */
        *kind = PK_INPUT_PERF;
        return 0;
    }
    pk_mapped_file f;
    if (pk_file_map(&f, path, err))
        return -1;
    pk_file_kind k = pk_file_identify(f.data, f.size);
    int rc = 0;
    switch (k) {
    case PK_KIND_RAWPROF:
        *kind = PK_INPUT_RAW;
        rc = pk_raw_file_version(f.data, f.size, path, raw_version, err);
        break;
    case PK_KIND_PERF_DATA: *kind = PK_INPUT_PERF; break;
    case PK_KIND_PPROF: *kind = PK_INPUT_PPROF; break;
    case PK_KIND_TEXT: *kind = PK_INPUT_SCRIPT; break; /* perf script text */
    default:
        rc = pk_err_set(err, "%s: %s, not samples (perf.data, perf script, pprof) or a raw profile", path,
                        pk_file_kind_describe(k));
    }
    pk_file_unmap(&f);
    return rc;
}

static int check_build_id(const pk_rawprof *r, const char *want, const char *what, pk_err *err)
{
    char have[41];
    pk_store_hex(have, r->build_id, r->build_id_size);
    if (!r->build_id_size)
        return pk_err_set(err, "%s: no build-id (the store keys profiles by build-id)", what);
    if (want && strcasecmp(want, have))
        return pk_err_set(err, "%s: build-id %s, not the expected %s", what, have, want);
    return 0;
}

int pk_store_reduce(const char *binary, const char *build_id, const char *const *inputs, size_t n,
                    pk_rawprof2 *out, pk_err *err)
{
    return pk_store_reduce_warn(binary, build_id, inputs, n, NULL, NULL, NULL, NULL, 0, out, err);
}

int pk_store_reduce_warn(const char *binary, const char *build_id, const char *const *inputs, size_t n,
                         void (*warning)(void *ctx, const char *msg), void *ctx, const pk_debug_opts *debug,
                         char *debug_origin, size_t debug_origin_size, pk_rawprof2 *out, pk_err *err)
{
    if (debug_origin && debug_origin_size)
        debug_origin[0] = 0;
    memset(out, 0, sizeof *out);
    if (!n)
        return pk_err_set(err, "no input");
    pk_pipeline_input *ins = calloc(n, sizeof *ins);
    if (!ins)
        return pk_err_set(err, "out of memory");
    int rc = -1;
    bool all_raw = true;
    size_t v1 = 0;
    const char *v1_first = NULL;
    for (size_t i = 0; i < n; i++) {
        ins[i].path = inputs[i];
        uint32_t version;
        if (input_kind(inputs[i], &ins[i].kind, &version, err))
            goto out;
        all_raw &= ins[i].kind == PK_INPUT_RAW;
        if (version == 1 && !v1++)
            v1_first = inputs[i];
    }
    if (v1 && warning) { /* once, whatever the number of such inputs */
        char msg[4400];
        snprintf(msg, sizeof msg, "%s%s: version-1 raw profile%s: flat counts only (IP samples already inferred), "
                 "no calling contexts; a pull including %s cannot make CSSPGO of them (`pgokit profgen "
                 "--raw-only` writes version 2)", v1_first, v1 > 1 ? " and others" : "", v1 > 1 ? "s" : "",
                 v1 > 1 ? "them" : "it");
        warning(ctx, msg);
    }
    if (!binary) {
        if (!all_raw) {
            pk_err_set(err, "reducing samples (perf.data, perf script, pprof) needs the profiled binary: "
                            "give --binary");
            goto out;
        }
        /* raw profiles alone: checked and merged as they are */
        for (size_t i = 0; i < n; i++) {
            pk_rawprof2 r;
            if (pk_rawprof2_read(i ? &r : out, inputs[i], err))
                goto fail;
            pk_rawprof2 *got = i ? &r : out;
            if (check_build_id(&got->flat, build_id, inputs[i], err)) {
                if (i)
                    pk_rawprof2_free(&r);
                goto fail;
            }
            if (i) {
                int m = pk_rawprof2_merge(out, &r, err);
                pk_rawprof2_free(&r);
                if (m) {
                    pk_err_prefix(err, "%s", inputs[i]);
                    goto fail;
                }
            }
        }
        rc = 0;
        goto out;
    }
    /* everything else: the profgen pipeline, to a raw profile in a
     * temporary directory */
    const char *tmp = getenv("TMPDIR");
    char dir[4096], file[4200];
    snprintf(dir, sizeof dir, "%s/pgokit-store.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        pk_err_errno(err, "creating a temporary directory %s", dir);
        goto out;
    }
    snprintf(file, sizeof file, "%s/map.raw", dir);
    pk_pipeline_request rq = {.binary = binary, .output = file, .inputs = ins, .ninputs = n, .pid = -1,
                              .raw_only = true, .raw_version = 2, .warning = warning, .cb_ctx = ctx};
    if (debug)
        rq.debug = *debug;
    pk_pipeline_report rep;
    int prc = pk_pipeline_run(&rq, &rep, err);
    if (debug_origin && debug_origin_size)
        snprintf(debug_origin, debug_origin_size, "%s", rep.debug_origin);
    if (!prc)
        prc = pk_rawprof2_read(out, file, err);
    unlink(file);
    rmdir(dir);
    if (prc)
        goto out;
    if (check_build_id(&out->flat, build_id, binary, err))
        goto fail;
    rc = 0;
    goto out;
fail:
    pk_rawprof2_free(out);
    memset(out, 0, sizeof *out);
out:
    free(ins);
    return rc;
}

/* ---- times ---- */

int pk_store_parse_time(const char *s, int64_t now, int64_t *out, pk_err *err)
{
    char *end;
    if (!s || !*s)
        return pk_err_set(err, "empty time");
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end != s && !errno) {
        if (!*end) {
            *out = v;
            return 0;
        }
        static const struct {
            char c;
            int64_t secs;
        } units[] = {{'s', 1}, {'m', 60}, {'h', 3600}, {'d', 86400}, {'w', 7 * 86400}};
        for (size_t i = 0; i < sizeof units / sizeof *units; i++)
            if (end[0] == units[i].c && !end[1] && v >= 0 && v <= INT64_MAX / units[i].secs / 2) {
                *out = now - v * units[i].secs;
                return 0;
            }
    }
    struct tm tm = {0};
    const char *fmts[] = {"%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S", "%Y-%m-%d"};
    for (size_t i = 0; i < sizeof fmts / sizeof *fmts; i++) {
        memset(&tm, 0, sizeof tm);
        const char *e = strptime(s, fmts[i], &tm);
        if (e && !*e) {
            *out = (int64_t)timegm(&tm);
            return 0;
        }
    }
    return pk_err_set(err, "bad time '%s' (expected epoch seconds, YYYY-MM-DD[THH:MM:SS[Z]] in UTC, or a "
                           "duration before now such as 90s, 30m, 12h, 14d, 2w)", s);
}

void pk_store_format_time(int64_t t, char *out, size_t cap)
{
    time_t tt = (time_t)t;
    struct tm tm;
    if (!gmtime_r(&tt, &tm) || !strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", &tm))
        snprintf(out, cap, "%lld", (long long)t);
}
