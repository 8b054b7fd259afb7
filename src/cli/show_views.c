/* show_views.c — `pgokit show --json` and `--hot-func-list` (see show.h). */
#include "cli/cli.h"
#include "common/json_out.h"
#include "cli/show.h"

#include <inttypes.h>
#include <stdlib.h>

static void json_fprof(pk_json *j, const pk_profset *ps, const pk_fprof *f, bool top)
{
    pk_err err;
    pk_fprof_view v;
    pk_json_begin_object(j, NULL);
    pk_json_strn(j, "name", pk_profset_name(ps, f->name), pk_profset_name_len(ps, f->name));
    if (top && (ps->kind & PK_PROF_CS) && f->ctx != PK_NO_CTX) {
        size_t need = pk_profset_ctx_text(ps, f->ctx, NULL, 0);
        char *buf = malloc(need + 1);
        if (buf) {
            pk_profset_ctx_text(ps, f->ctx, buf, need + 1);
            pk_json_str(j, "context", buf);
            free(buf);
        }
    }
    pk_json_u64(j, "total", f->total);
    if (top)
        pk_json_u64(j, "head", f->head);
    if ((ps->kind & PK_PROF_PROBE) && f->checksum)
        pk_json_u64(j, "checksum", f->checksum);
    if (pk_fprof_view_build(ps, f, &v, &err)) {
        pk_json_str(j, "error", err.msg);
        pk_json_end_object(j);
        return;
    }
    if (v.nbody) {
        pk_json_begin_array(j, "body");
        for (size_t i = 0; i < v.nbody; i++) {
            const pk_body_entry *e = &v.body[i];
            pk_json_begin_object(j, NULL);
            pk_json_u64(j, "line", e->line);
            if (e->disc)
                pk_json_u64(j, "discriminator", e->disc);
            pk_json_u64(j, "samples", e->count);
            if (e->ncalls) {
                pk_json_begin_array(j, "calls");
                for (uint32_t k = 0; k < e->ncalls; k++) {
                    pk_json_begin_object(j, NULL);
                    pk_json_strn(j, "function", pk_profset_name(ps, e->calls[k].name),
                                 pk_profset_name_len(ps, e->calls[k].name));
                    pk_json_u64(j, "samples", e->calls[k].count);
                    pk_json_end_object(j);
                }
                pk_json_end_array(j);
            }
            pk_json_end_object(j);
        }
        pk_json_end_array(j);
    }
    if (v.nsites) {
        pk_json_begin_array(j, "callsites");
        for (size_t i = 0; i < v.nsites; i++) {
            pk_json_begin_object(j, NULL);
            pk_json_u64(j, "line", v.sites[i].line);
            if (v.sites[i].disc)
                pk_json_u64(j, "discriminator", v.sites[i].disc);
            pk_json_begin_array(j, "samples");
            json_fprof(j, ps, v.sites[i].callee, false);
            pk_json_end_array(j);
            pk_json_end_object(j);
        }
        pk_json_end_array(j);
    }
    pk_fprof_view_free(&v);
    pk_json_end_object(j);
}

void pk_show_json(FILE *out, const pk_profset *ps, pk_fprof *const *fs, size_t n)
{
    pk_json j;
    pk_json_init(&j, out);
    pk_json_begin_array(&j, NULL);
    for (size_t i = 0; i < n; i++)
        json_fprof(&j, ps, fs[i], true);
    pk_json_end_array(&j);
    pk_json_finish(&j);
}

/* LLVM's getHeadSamplesEstimate as llvm-profdata-19 prints it: the head
 * samples only for a flat context-sensitive profile; otherwise the count at
 * the lowest location (a body entry, or the inlinees there), at least 1. */
static uint64_t entry_estimate(const pk_profset *ps, const pk_fprof *f)
{
    if ((ps->kind & PK_PROF_CS) && f->head)
        return f->head;
    pk_err err;
    pk_fprof_view v;
    if (pk_fprof_view_build(ps, f, &v, &err))
        return pk_fprof_head_estimate(f);
    uint64_t count = 0;
    if (v.nbody && (!v.nsites || pk_loc(v.body[0].line, v.body[0].disc) < pk_loc(v.sites[0].line, v.sites[0].disc)))
        count = v.body[0].count;
    else
        for (size_t i = 0; i < v.nsites && v.sites[i].line == v.sites[0].line && v.sites[i].disc == v.sites[0].disc; i++)
            count = pk_sat_add(count, pk_fprof_head_estimate(v.sites[i].callee));
    pk_fprof_view_free(&v);
    return count ? count : f->total > 0;
}

/* LLVM's formatted_raw_ostream::PadToColumn: at least one space. */
static void pad(FILE *out, int *col, int to)
{
    int n = to - *col;
    if (n < 1)
        n = 1;
    fprintf(out, "%*s", n, "");
    *col += n;
}

void pk_show_hot_list(FILE *out, const pk_profset *ps, pk_fprof *const *fs, size_t n, const pk_summary *s,
                      size_t top, pk_demangler *dm)
{
    uint64_t threshold = 0, total = 0, hot_total = 0;
    for (uint32_t i = 0; i < s->num_entries; i++)
        if (s->entries[i].cutoff == 990000) {
            threshold = s->entries[i].min_count;
            break;
        }
    size_t nhot = 0;
    for (size_t i = 0; i < n; i++) {
        total = pk_sat_add(total, fs[i]->total);
        if (pk_fprof_max_count(fs[i]) >= threshold) {
            hot_total = pk_sat_add(hot_total, fs[i]->total);
            nhot++;
        }
    }
    fprintf(out, "%zu out of %zu functions with profile (%.2f%%) are considered hot functions (max sample >= %" PRIu64
            ").\n", nhot, n, n ? 100.0 * (double)nhot / (double)n : 0.0, threshold);
    fprintf(out, "%" PRIu64 " out of %" PRIu64 " profile counts (%.2f%%) are from hot functions.\n", hot_total, total,
            total ? 100.0 * (double)hot_total / (double)total : 0.0);
    static const char *const titles[] = {"Total sample (%)", "Max sample", "Entry sample", "Function name"};
    static const int cols[] = {0, 24, 42, 58};
    int col = 0;
    for (int i = 0; i < 4; i++) {
        pad(out, &col, cols[i]);
        col += fprintf(out, "%s", titles[i]);
    }
    fputc('\n', out);
    size_t shown = 0;
    for (size_t i = 0; i < n && (!top || shown < top); i++) {
        const pk_fprof *f = fs[i];
        uint64_t max = pk_fprof_max_count(f);
        if (max < threshold)
            continue;
        shown++;
        char name[1024];
        const char *nm = pk_profset_name(ps, f->name);
        if (ps->kind & PK_PROF_CS) {
            pk_profset_ctx_text(ps, f->ctx, name, sizeof name);
            nm = name;
        }
        col = 0;
        pad(out, &col, cols[0]);
        col += fprintf(out, "%" PRIu64 " (%.2f%%)", f->total, total ? 100.0 * (double)f->total / (double)total : 0.0);
        pad(out, &col, cols[1]);
        col += fprintf(out, "%" PRIu64, max);
        pad(out, &col, cols[2]);
        col += fprintf(out, "%" PRIu64, entry_estimate(ps, f));
        pad(out, &col, cols[3]);
        char name_esc[2048];
        fprintf(out, "%s\n", pk_cli_name(name_esc, sizeof name_esc, pk_demangle_text(dm, nm)));
    }
}
