/* correlate.c — raw profile + binary → one trace, coverage and counts.
 * The raw profile holds only link-time addresses and build-ids; names come
 * from the binary's symbol table, and a binary whose build-id differs from
 * every module of the profile is refused (a stale binary would silently
 * mis-name every function). */
#include "temporal/temporal.h"

#include <stdio.h>
#include <stdlib.h>

static void hex(char *out, const uint8_t *id, uint32_t len)
{
    for (uint32_t i = 0; i < len; i++) sprintf(out + 2 * i, "%02x", id[i]);
    out[2 * len] = 0;
}

int pk_temporal_add_raw(pk_temporal_profile *p, const pk_temporal_raw *raw,
                        const pk_temporal_symtab *syms, uint64_t weight,
                        pk_temporal_correlate_stats *stats, pk_err *err)
{
    pk_temporal_correlate_stats st = {0, 0, 0};
    const char *path = raw->file.path ? raw->file.path : "raw profile";
    char want[2 * PK_TEMPORAL_BUILD_ID_MAX + 1];
    hex(want, syms->build_id, syms->build_id_len);
    if (!syms->build_id_len)
        return pk_err_set(err, "the binary has no GNU build-id: cannot check it matches %s (link with --build-id)", path);
    if (p->build_id_len && (p->build_id_len != syms->build_id_len ||
                            memcmp(p->build_id, syms->build_id, p->build_id_len)))
        return pk_err_set(err, "%s: the profile being built is for another binary (build-id differs from %s)", path, want);
    uint32_t mod = UINT32_MAX;
    for (uint32_t i = 0; i < raw->num_modules; i++)
        if (raw->modules[i].build_id_len == syms->build_id_len &&
            !memcmp(raw->modules[i].build_id, syms->build_id, syms->build_id_len)) { mod = i; break; }
    if (mod == UINT32_MAX) {
        char got[2 * PK_TEMPORAL_BUILD_ID_MAX + 1] = "none";
        if (raw->num_modules) hex(got, raw->modules[0].build_id, raw->modules[0].build_id_len);
        return pk_err_set(err, "%s: build-id mismatch: the binary has %s, the profiled program had %s%s "
                          "(rebuilt since the run?)", path, want, got,
                          raw->num_modules > 1 ? " (and its other modules differ too)" : "");
    }
    /* Map every record first so a failure leaves p untouched. */
    uint64_t n = raw->num_records;
    const struct pk_temporal_sym **hit = malloc((n ? n : 1) * sizeof *hit);
    if (!hit) return pk_err_set(err, "out of memory");
    for (uint64_t i = 0; i < n; i++) {
        pk_temporal_raw_record r = pk_temporal_raw_record_at(raw, i);
        hit[i] = NULL;
        if (r.module != mod) { st.other_modules++; continue; }
        st.records++;
        hit[i] = pk_temporal_symtab_lookup(syms, r.addr);
        if (!hit[i]) st.unresolved++;
    }
    uint32_t *trace = malloc((n ? n : 1) * sizeof *trace);
    pk_u64map seen;
    int rc = -1;
    if (!trace || pk_u64map_init(&seen, 64) != 0) {
        free(trace); free(hit);
        return pk_err_set(err, "out of memory");
    }
    uint32_t len = 0;
    int counts = (raw->flags & PK_TEMPORAL_RAW_COUNTS) != 0;
    for (uint64_t i = 0; i < n; i++) {
        if (!hit[i]) continue;
        const struct pk_temporal_sym *y = hit[i];
        int64_t f = pk_temporal_intern(p, y->name, y->symbol, y->addr, y->size, y->flags, err);
        if (f < 0) goto out;
        uint64_t *s = pk_u64map_slot(&seen, (uint64_t)f);
        if (!s) { pk_err_set(err, "out of memory"); goto out; }
        pk_temporal_raw_record r = pk_temporal_raw_record_at(raw, i);
        if (counts) p->funcs[f].entry_count += r.count;
        if (*s) continue;  /* two entry sites in one function: first one orders it */
        *s = 1;
        p->funcs[f].covered_runs++;
        trace[len++] = (uint32_t)f;
    }
    if (pk_temporal_add_trace(p, trace, len, weight ? weight : 1, err) != 0) goto out;
    if (!p->build_id_len) {
        memcpy(p->build_id, syms->build_id, syms->build_id_len);
        p->build_id_len = syms->build_id_len;
    }
    if (counts) p->flags |= PK_TEMPORAL_HAS_COUNTS;
    p->num_runs++;
    rc = 0;
out:
    pk_u64map_free(&seen);
    free(trace);
    free(hit);
    if (stats) *stats = st;
    return rc;
}
