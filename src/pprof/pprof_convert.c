/* pprof_convert.c — whole-file conversions between perf.data and pprof, the
 * library side of `pgokit convert` for sample files. Each is a reader's
 * callbacks wired to a writer. */
#include "pprof/pprof_convert.h"

#include <stdlib.h>

int pk_sample_file_kind(const char *path, pk_sample_file *kind, pk_err *err)
{
    pk_mapped_file f;
    if (pk_file_map(&f, path, err))
        return -1;
    *kind = PK_SAMPLES_UNKNOWN;
    if (f.size >= 8 && !memcmp(f.data, "PERFILE2", 8))
        *kind = PK_SAMPLES_PERF;
    else if (pk_pprof_is_gzip(f.data, f.size))
        *kind = PK_SAMPLES_PPROF;
    pk_file_unmap(&f);
    return 0;
}

int pk_perf_to_pprof(const char *in, const char *out, const pk_pprof_writer_opts *wo, pk_perf_stats *ps,
                     pk_pprof_write_stats *ws, pk_err *err)
{
    pk_pprof_writer *w = pk_pprof_writer_new(wo, err);
    if (!w)
        return -1;
    pk_perf_callbacks cb;
    pk_pprof_writer_callbacks(w, err, &cb);
    int rc = pk_perf_read(in, &cb, ps, err);
    if (rc)
        rc = -1;
    else if (!ps->samples)
        rc = pk_err_set(err, "%s: no samples: nothing to convert", in);
    else
        rc = pk_pprof_writer_write(w, out, ws, err);
    pk_pprof_writer_free(w);
    return rc;
}

/* ---- pprof → perf.data ---- */
typedef struct to_perf {
    const char *out;
    pk_perf_writer *w;
    pk_err *err;
    bool comm_written;
} to_perf;

static int tp_attr(void *ctx, const pk_perf_attr *a)
{
    to_perf *t = ctx;
    if (t->w)
        return 0;
    pk_perf_writer_opts o = {0};
    o.event_type = a->type;
    o.event_config = a->config;
    o.sample_period = a->sample_period ? a->sample_period : 1;
    o.callchain = true;
    o.cmdline = "pgokit convert (from pprof)";
    t->w = pk_perf_writer_open(t->out, &o, t->err);
    return t->w ? 0 : -1;
}

static int tp_mmap(void *ctx, const pk_mmap_event *m)
{
    to_perf *t = ctx;
    /* perf names a process after its command: take the main binary's
     * (the first user mapping, pprof's mapping 1) base name. */
    if (!t->comm_written && m->pid != UINT32_MAX) {
        const char *base = strrchr(m->filename, '/');
        pk_comm_event c = {m->pid, m->tid, false, base ? base + 1 : m->filename, 0};
        if (!*c.comm)
            c.comm = "pprof";
        if (pk_perf_write_comm(t->w, &c, t->err))
            return -1;
        t->comm_written = true;
    }
    return pk_perf_write_mmap(t->w, m, t->err);
}

static int tp_sample(void *ctx, const pk_sample *s)
{
    to_perf *t = ctx;
    return pk_perf_write_sample(t->w, s, t->err);
}

int pk_pprof_to_perf(const char *in, const pk_pprof_opts *ro, const char *out, pk_pprof_stats *rs, pk_err *err)
{
    to_perf t = {out, NULL, err, false};
    pk_pprof_opts o = *ro;
    o.restore_return_addresses = true; /* perf.data holds return addresses */
    pk_perf_callbacks cb = {0};
    cb.ctx = &t;
    cb.attr = tp_attr;
    cb.mmap = tp_mmap;
    cb.sample = tp_sample;
    int rc = pk_pprof_read_opts(in, &o, &cb, rs, err);
    if (!rc && !rs->samples_emitted)
        rc = pk_err_set(err, "%s: no samples: nothing to convert", in);
    if (rc) {
        if (t.w)
            pk_perf_writer_abort(t.w);
        return -1;
    }
    return pk_perf_writer_close(t.w, err);
}
