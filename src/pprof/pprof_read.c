/* pprof_read.c — a pprof profile → the perf.data callbacks (see pprof.h).
 *
 * The protobuf stream is walked four times, each walk cheap (fields are
 * skipped by their lengths): (A) frame the top-level fields and count them,
 * so every table is allocated once at its final size; (B) decode sample
 * types, mappings, locations and a few functions; (C) pick out the strings
 * those reference (the string table usually comes last, and only a handful
 * of its entries matter here); (D) decode the samples one by one and hand
 * them on. Samples are never all in memory: only the locations and
 * mappings are tabled. Each embedded message is checked against the schema
 * (pw_check, which names the first bad byte) before protobuf-c decodes it. */
#include "pprof/pprof_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#define DEFAULT_MAX_BYTES (1ull << 30)
#define DEFAULT_MAX_ENTRIES (1ull << 25)
#define MAX_FUNCS_LOOKED_AT 64  /* enough to recognise a Go profile */
#define NO_MAP UINT64_MAX

typedef struct rd_loc {
    uint64_t id, addr;
    uint64_t map;              /* the mapping id while reading, then its index; NO_MAP */
} rd_loc;

typedef struct rd_map {
    uint64_t id, start, limit, off;
    int64_t file, bid;         /* string indexes */
} rd_map;

typedef struct rd_str {
    size_t off, len;
    bool found;
} rd_str;

typedef struct rd {
    const char *name;
    const uint8_t *b;
    size_t n;
    const char *where;         /* " (decompressed)" for gzip input */
    const pk_pprof_opts *o;
    pk_pprof_stats *st;
    pk_err *err;
    uint64_t count[16];        /* top-level fields by number (1..15) */
    rd_loc *locs;
    size_t nlocs;
    bool dense;                /* location ids are 1..n in order: no map needed */
    pk_u64map loc_ids;         /* id → index, when not dense */
    rd_map *maps;
    size_t nmaps;
    pk_u64map map_ids;         /* id → index */
    int64_t (*stypes)[2];
    size_t nstypes;
    int64_t period_type[2];
    bool has_period_type;
    int64_t *comments;
    size_t ncomments;
    int64_t func_files[MAX_FUNCS_LOOKED_AT];
    size_t nfunc_files;
    uint64_t nstrings;
    pk_u64map want;            /* string index → slot in strs */
    rd_str *strs;
    size_t nstrs;
} rd;

const char *pk_pprof_producer_name(pk_pprof_producer p)
{
    switch (p) {
    case PK_PPROF_PRODUCER_GO: return "go";
    case PK_PPROF_PRODUCER_PERF_DATA_CONVERTER: return "perf_data_converter";
    case PK_PPROF_PRODUCER_PGOKIT: return "pgokit";
    default: return "unknown";
    }
}

void pk_pprof_opts_init(pk_pprof_opts *o)
{
    memset(o, 0, sizeof *o);
    o->sample_index = -1;
}

bool pk_pprof_is_gzip(const void *data, size_t size)
{
    const uint8_t *p = data;
    return size >= 2 && p[0] == 0x1f && p[1] == 0x8b;
}

static int rd_fail(rd *r, size_t off, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int rd_fail(rd *r, size_t off, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return pk_err_set(r->err, "%s: offset %zu%s: %s", r->name, off, r->where, msg);
}

/* Checks the embedded message of field f against spec m, then decodes it. */
static void *rd_unpack(rd *r, const pw_field *f, const pw_mspec *m, const ProtobufCMessageDescriptor *d)
{
    pw_error e;
    if (pw_check(m, r->b, f->data, f->data + f->len, &e)) {
        rd_fail(r, e.off, "in the %s at offset %zu: %s", m->name, f->off, e.msg);
        return NULL;
    }
    void *msg = protobuf_c_message_unpack(d, NULL, f->len, r->b + f->data);
    if (!msg)
        rd_fail(r, f->off, "protobuf-c cannot decode this %s (%zu bytes; out of memory?)", m->name, f->len);
    return msg;
}

static int rd_strindex(rd *r, int64_t idx, size_t off, const char *what)
{
    if (idx < 0 || (uint64_t)idx >= r->nstrings)
        return rd_fail(r, off, "%s: string index %lld is outside the string table (%llu strings)", what,
                       (long long)idx, (unsigned long long)r->nstrings);
    uint64_t *slot = pk_u64map_slot(&r->want, (uint64_t)idx);
    if (!slot)
        return pk_err_set(r->err, "%s: out of memory", r->name);
    return 0;
}

/* ---- walk A: framing and counts ---- */
static int walk_count(rd *r)
{
    size_t pos = 0;
    pw_field f;
    pw_error e;
    int k;
    while ((k = pw_next(r->b, r->n, &pos, &f, &pw_profile, &e)) > 0) {
        const pw_fspec *fs = pw_spec_field(&pw_profile, f.num);
        if (!fs)
            continue;
        bool ok = fs->kind == PWK_VARINT ? f.wt == PW_VARINT
                : fs->kind == PWK_REP_VARINT ? f.wt == PW_VARINT || f.wt == PW_LEN : f.wt == PW_LEN;
        if (!ok)
            return rd_fail(r, f.off, "Profile.%s (field %u) has wire type %u, which does not fit its type "
                           "(not a pprof profile?)", fs->name, f.num, f.wt);
        if (fs->kind == PWK_REP_VARINT && f.wt == PW_LEN) {
            size_t p = f.data;
            uint64_t v;
            while (p < f.data + f.len) {
                if (!pw_varint(r->b, f.data + f.len, &p, &v))
                    return rd_fail(r, p, "Profile.%s: truncated packed varint", fs->name);
                r->count[f.num]++;
            }
        } else {
            r->count[f.num]++;
        }
    }
    if (k < 0)
        return rd_fail(r, e.off, "Profile: %s%s", e.msg,
                       strstr(e.msg, "runs past the end") || strstr(e.msg, "truncated") ? " (a truncated file?)" : "");
    r->nstrings = r->count[6];
    uint64_t entries = r->count[3] + r->count[4];
    uint64_t max = r->o->max_entries ? r->o->max_entries : DEFAULT_MAX_ENTRIES;
    if (entries > max)
        return pk_err_set(r->err, "%s: %llu locations and mappings, more than the limit of %llu", r->name,
                          (unsigned long long)entries, (unsigned long long)max);
    return 0;
}

/* ---- walk B: the tables ---- */
static int take_mapping(rd *r, const pw_field *f)
{
    Pk__Pprof__Mapping *m = rd_unpack(r, f, &pw_mapping, &pk__pprof__mapping__descriptor);
    if (!m)
        return -1;
    int rc = 0;
    rd_map *d = &r->maps[r->nmaps];
    *d = (rd_map){m->id, m->memory_start, m->memory_limit, m->file_offset, m->filename, m->build_id};
    if (!m->id)
        rc = rd_fail(r, f->off, "Mapping with id 0 (ids must be nonzero)");
    else if (m->memory_limit < m->memory_start)
        rc = rd_fail(r, f->off, "Mapping %llu ends (0x%llx) before it starts (0x%llx)", (unsigned long long)m->id,
                     (unsigned long long)m->memory_limit, (unsigned long long)m->memory_start);
    else if (rd_strindex(r, m->filename, f->off, "Mapping.filename") ||
             rd_strindex(r, m->build_id, f->off, "Mapping.build_id"))
        rc = -1;
    if (!rc) {
        uint64_t *slot = pk_u64map_get(&r->map_ids, m->id);
        if (slot)
            rc = rd_fail(r, f->off, "Mapping id %llu appears twice", (unsigned long long)m->id);
        else if (!(slot = pk_u64map_slot(&r->map_ids, m->id)))
            rc = pk_err_set(r->err, "%s: out of memory", r->name);
        else
            *slot = r->nmaps++;
    }
    protobuf_c_message_free_unpacked(&m->base, NULL);
    return rc;
}

static int take_location(rd *r, const pw_field *f)
{
    Pk__Pprof__Location *l = rd_unpack(r, f, &pw_location, &pk__pprof__location__descriptor);
    if (!l)
        return -1;
    int rc = 0;
    if (!l->id)
        rc = rd_fail(r, f->off, "Location with id 0 (ids must be nonzero)");
    rd_loc *d = &r->locs[r->nlocs++];
    *d = (rd_loc){l->id, l->address, NO_MAP};
    if (l->id != r->nlocs)
        r->dense = false;
    /* The mapping is resolved once every mapping is known: Go writes
     * them after the locations. */
    d->map = l->mapping_id ? l->mapping_id : NO_MAP;
    if (!l->address)
        r->st->locations_no_address++;
    if (l->n_line > 1)
        r->st->locations_inline++;
    protobuf_c_message_free_unpacked(&l->base, NULL);
    return rc;
}

static int take_value_type(rd *r, const pw_field *f, int64_t out[2], const char *what)
{
    Pk__Pprof__ValueType *v = rd_unpack(r, f, &pw_value_type, &pk__pprof__value_type__descriptor);
    if (!v)
        return -1;
    out[0] = v->type;
    out[1] = v->unit;
    protobuf_c_message_free_unpacked(&v->base, NULL);
    if (rd_strindex(r, out[0], f->off, what) || rd_strindex(r, out[1], f->off, what))
        return -1;
    return 0;
}

static int take_function(rd *r, const pw_field *f)
{
    Pk__Pprof__Function *fn = rd_unpack(r, f, &pw_function, &pk__pprof__function__descriptor);
    if (!fn)
        return -1;
    int64_t file = fn->filename;
    protobuf_c_message_free_unpacked(&fn->base, NULL);
    if (rd_strindex(r, file, f->off, "Function.filename"))
        return -1;
    r->func_files[r->nfunc_files++] = file;
    return 0;
}

/* Where the n-th (from 0) top-level field num starts: for errors found
 * after the walk, which keeps no offsets per entry. */
static size_t nth_field_offset(const rd *r, uint32_t num, size_t n)
{
    size_t pos = 0;
    pw_field f;
    pw_error e;
    while (pw_next(r->b, r->n, &pos, &f, NULL, &e) > 0)
        if (f.num == num && !n--)
            return f.off;
    return 0;
}

static int walk_tables(rd *r)
{
    r->locs = pk_xrealloc_array(NULL, r->count[4] ? r->count[4] : 1, sizeof *r->locs);
    r->maps = pk_xrealloc_array(NULL, r->count[3] ? r->count[3] : 1, sizeof *r->maps);
    r->stypes = pk_xrealloc_array(NULL, r->count[1] ? r->count[1] : 1, sizeof *r->stypes);
    r->comments = pk_xrealloc_array(NULL, r->count[13] ? r->count[13] : 1, sizeof *r->comments);
    if (!r->locs || !r->maps || !r->stypes || !r->comments ||
        pk_u64map_init(&r->map_ids, 2 * r->count[3] + 8) || pk_u64map_init(&r->want, 64))
        return pk_err_set(r->err, "%s: out of memory for %llu locations", r->name,
                          (unsigned long long)r->count[4]);
    r->dense = true;
    size_t pos = 0;
    pw_field f;
    pw_error e;
    while (pw_next(r->b, r->n, &pos, &f, NULL, &e) > 0) {
        int rc = 0;
        switch (f.num) {
        case 1:
            rc = take_value_type(r, &f, r->stypes[r->nstypes], "Profile.sample_type");
            r->nstypes++;
            break;
        case 3: rc = take_mapping(r, &f); break;
        case 4: rc = take_location(r, &f); break;
        case 5:
            r->st->functions++;
            if (r->nfunc_files < MAX_FUNCS_LOOKED_AT)
                rc = take_function(r, &f);
            break;
        case 10: r->st->duration_nanos = (int64_t)f.v; break;
        case 11:
            rc = take_value_type(r, &f, r->period_type, "Profile.period_type");
            r->has_period_type = !rc;
            break;
        case 12: r->st->period = (int64_t)f.v; break;
        case 13: {
            size_t first = r->ncomments;
            if (f.wt == PW_VARINT) {
                r->comments[r->ncomments++] = (int64_t)f.v;
            } else {
                size_t p = f.data;
                uint64_t v;
                while (p < f.data + f.len && pw_varint(r->b, f.data + f.len, &p, &v))
                    r->comments[r->ncomments++] = (int64_t)v;
            }
            for (size_t i = first; !rc && i < r->ncomments; i++)
                rc = rd_strindex(r, r->comments[i], f.off, "Profile.comment");
            break;
        }
        default: break;
        }
        if (rc)
            return -1;
    }
    /* Location → mapping index, now that every mapping is known. */
    for (size_t i = 0; i < r->nlocs; i++) {
        rd_loc *l = &r->locs[i];
        if (l->map == NO_MAP) {
            r->st->locations_no_mapping++;
            continue;
        }
        uint64_t *mi = pk_u64map_get(&r->map_ids, l->map);
        if (!mi)
            return rd_fail(r, nth_field_offset(r, 4, i), "Location %llu refers to mapping %llu, which does not exist%s",
                           (unsigned long long)l->id, (unsigned long long)l->map,
                           r->nmaps ? "" : " (the profile has no mappings)");
        l->map = *mi;
        const rd_map *m = &r->maps[l->map];
        if (l->addr && (l->addr < m->start || l->addr >= m->limit))
            r->st->locations_outside_mapping++;
    }
    if (!r->dense) {
        if (pk_u64map_init(&r->loc_ids, 2 * r->nlocs + 8))
            return pk_err_set(r->err, "%s: out of memory", r->name);
        for (size_t i = 0; i < r->nlocs; i++) {
            uint64_t *slot = pk_u64map_get(&r->loc_ids, r->locs[i].id);
            if (slot)
                return rd_fail(r, nth_field_offset(r, 4, i), "Location id %llu appears twice",
                               (unsigned long long)r->locs[i].id);
            if (!(slot = pk_u64map_slot(&r->loc_ids, r->locs[i].id)))
                return pk_err_set(r->err, "%s: out of memory", r->name);
            *slot = i;
        }
    }
    return 0;
}

/* ---- walk C: the strings the tables name ---- */
static int walk_strings(rd *r)
{
    r->nstrs = r->want.len;
    r->strs = calloc(r->nstrs ? r->nstrs : 1, sizeof *r->strs);
    if (!r->strs)
        return pk_err_set(r->err, "%s: out of memory", r->name);
    size_t k = 0;
    for (size_t i = 0; i < pk_u64map_end(&r->want); i++)
        if (pk_u64map_used(&r->want, i))
            *pk_u64map_valp(&r->want, i) = k++;
    size_t pos = 0;
    uint64_t idx = 0;
    pw_field f;
    pw_error e;
    while (pw_next(r->b, r->n, &pos, &f, NULL, &e) > 0) {
        if (f.num != 6)
            continue;
        uint64_t *slot = pk_u64map_get(&r->want, idx++);
        if (slot)
            r->strs[*slot] = (rd_str){f.data, f.len, true};
    }
    return 0;
}

/* The string at idx (checked when the tables were read), not terminated. */
static const char *rd_string(const rd *r, int64_t idx, size_t *len)
{
    uint64_t *slot = pk_u64map_get(&r->want, (uint64_t)idx);
    if (!slot || !r->strs[*slot].found) {
        *len = 0;
        return "";
    }
    *len = r->strs[*slot].len;
    return (const char *)r->b + r->strs[*slot].off;
}

static bool str_is(const rd *r, int64_t idx, const char *s)
{
    size_t n;
    const char *p = rd_string(r, idx, &n);
    return n == strlen(s) && !memcmp(p, s, n);
}

static bool str_has_prefix(const rd *r, int64_t idx, const char *s)
{
    size_t n;
    const char *p = rd_string(r, idx, &n);
    return n >= strlen(s) && !memcmp(p, s, strlen(s));
}

static bool str_has_suffix(const rd *r, int64_t idx, const char *s)
{
    size_t n, k = strlen(s);
    const char *p = rd_string(r, idx, &n);
    return n >= k && !memcmp(p + n - k, s, k);
}

static void copy_str(const rd *r, int64_t idx, char *out, size_t cap)
{
    size_t n;
    const char *p = rd_string(r, idx, &n);
    if (n >= cap)
        n = cap - 1;
    memcpy(out, p, n);
    out[n] = 0;
}

/* Which sample_type is the period (see pprof.h). */
static int choose_value(rd *r)
{
    const pk_pprof_opts *o = r->o;
    int vi = -1;
    if (o->sample_index >= 0) {
        if ((size_t)o->sample_index >= r->nstypes)
            return pk_err_set(r->err, "%s: sample type index %d asked for, the profile has %zu sample types",
                              r->name, o->sample_index, r->nstypes);
        vi = o->sample_index;
    } else if (o->sample_type && *o->sample_type) {
        const char *slash = strchr(o->sample_type, '/');
        size_t tl = slash ? (size_t)(slash - o->sample_type) : strlen(o->sample_type);
        for (size_t i = 0; i < r->nstypes && vi < 0; i++) {
            size_t n, un;
            const char *t = rd_string(r, r->stypes[i][0], &n);
            const char *u = rd_string(r, r->stypes[i][1], &un);
            if (n == tl && !memcmp(t, o->sample_type, tl) &&
                (!slash || (un == strlen(slash + 1) && !memcmp(u, slash + 1, un))))
                vi = (int)i;
        }
        if (vi < 0) {
            char list[512] = "";
            size_t used = 0;
            for (size_t i = 0; i < r->nstypes && used < sizeof list - 64; i++) {
                char t[48], u[48];
                copy_str(r, r->stypes[i][0], t, sizeof t);
                copy_str(r, r->stypes[i][1], u, sizeof u);
                used += (size_t)snprintf(list + used, sizeof list - used, "%s%s/%s", i ? ", " : "", t, u);
            }
            return pk_err_set(r->err, "%s: no sample type '%s' (the profile has: %s)", r->name, o->sample_type,
                              r->nstypes ? list : "none");
        }
    } else if (r->nstypes) {
        vi = 0;
        for (size_t i = 0; i < r->nstypes; i++)
            if (str_is(r, r->stypes[i][0], "samples")) {
                vi = (int)i;
                break;
            }
    }
    r->st->value_index = vi;
    if (vi >= 0) {
        copy_str(r, r->stypes[vi][0], r->st->value_type, sizeof r->st->value_type);
        copy_str(r, r->stypes[vi][1], r->st->value_unit, sizeof r->st->value_unit);
    }
    return 0;
}

static void detect_producer(rd *r)
{
    pk_pprof_stats *st = r->st;
    for (size_t i = 0; i < r->ncomments && !st->producer; i++)
        if (str_has_prefix(r, r->comments[i], "pgokit"))
            st->producer = PK_PPROF_PRODUCER_PGOKIT;
        else if (str_has_prefix(r, r->comments[i], "perf-version:") ||
                 str_has_prefix(r, r->comments[i], "perf-command:"))
            st->producer = PK_PPROF_PRODUCER_PERF_DATA_CONVERTER;
    for (size_t i = 0; i + 1 < r->nstypes && !st->producer; i += 2)
        if (str_has_suffix(r, r->stypes[i][0], "_sample") && str_has_suffix(r, r->stypes[i + 1][0], "_event"))
            st->producer = PK_PPROF_PRODUCER_PERF_DATA_CONVERTER;
    for (size_t i = 0; i < r->nfunc_files && !st->producer; i++)
        if (str_has_suffix(r, r->func_files[i], ".go"))
            st->producer = PK_PPROF_PRODUCER_GO;
    st->nonleaf_minus_one = r->o->nonleaf != PK_PPROF_NONLEAF_RETURN;
    st->restored_return_addresses = st->nonleaf_minus_one && r->o->restore_return_addresses;
}

/* Kernel text lives in the upper half on every 64-bit Linux port. */
static bool is_kernel(uint64_t addr) { return addr >> 63; }

static int cmp_start(const void *a, const void *b)
{
    const rd_map *x = *(const rd_map *const *)a, *y = *(const rd_map *const *)b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static int emit_mappings(rd *r, const pk_perf_callbacks *cb)
{
    pk_pprof_stats *st = r->st;
    /* Overlaps: only counted (see pprof.h). */
    if (r->nmaps > 1) {
        const rd_map **v = malloc(r->nmaps * sizeof *v);
        if (!v)
            return pk_err_set(r->err, "%s: out of memory", r->name);
        for (size_t i = 0; i < r->nmaps; i++)
            v[i] = &r->maps[i];
        qsort(v, r->nmaps, sizeof *v, cmp_start);
        uint64_t end = 0;
        for (size_t i = 0; i < r->nmaps; i++) {
            if (v[i]->limit == v[i]->start)
                continue;
            if (i && v[i]->start < end)
                st->mappings_overlapping++;
            if (v[i]->limit > end)
                end = v[i]->limit;
        }
        free(v);
    }
    char *file = NULL;
    size_t file_cap = 0;
    int rc = 0;
    for (size_t i = 0; i < r->nmaps && !rc; i++) {
        const rd_map *m = &r->maps[i];
        if (m->limit == m->start) {
            st->mappings_empty++;
            continue;
        }
        pk_mmap_event ev = {0};
        ev.is_mmap2 = true;
        bool kernel = is_kernel(m->start);
        ev.misc = kernel ? PK_CPUMODE_KERNEL : PK_CPUMODE_USER;
        ev.pid = ev.tid = kernel ? UINT32_MAX : r->o->pid;
        ev.addr = m->start;
        ev.len = m->limit - m->start;
        ev.pgoff = m->off;
        ev.prot = 5; /* PROT_READ | PROT_EXEC */
        ev.flags = 2; /* MAP_PRIVATE */
        size_t n;
        const char *s = rd_string(r, m->bid, &n);
        if (n) {
            bool hex = n % 2 == 0 && n <= 40;
            for (size_t k = 0; hex && k < n; k++)
                hex = hexval(s[k]) >= 0;
            if (hex) {
                for (size_t k = 0; k < n / 2; k++)
                    ev.build_id[k] = (uint8_t)(hexval(s[2 * k]) << 4 | hexval(s[2 * k + 1]));
                ev.build_id_size = (uint8_t)(n / 2);
                ev.has_build_id = true;
                ev.misc |= PK_MISC_MMAP_BUILD_ID;
                st->build_ids_hex++;
            } else {
                st->build_ids_other++;
            }
        }
        s = rd_string(r, m->file, &n);
        if (n + 1 > file_cap) {
            char *nf = realloc(file, n + 1);
            if (!nf) {
                rc = pk_err_set(r->err, "%s: out of memory", r->name);
                break;
            }
            file = nf;
            file_cap = n + 1;
        }
        memcpy(file, s, n);
        file[n] = 0;
        ev.filename = file;
        st->mappings_emitted++;
        if (cb->mmap)
            rc = cb->mmap(cb->ctx, &ev);
    }
    free(file);
    return rc;
}

static const rd_loc *find_loc(const rd *r, uint64_t id)
{
    if (r->dense)
        return id && id <= r->nlocs ? &r->locs[id - 1] : NULL;
    uint64_t *i = pk_u64map_get(&r->loc_ids, id);
    return i ? &r->locs[*i] : NULL;
}

/* ---- walk D: the samples ---- */
static int walk_samples(rd *r, const pk_perf_callbacks *cb, const pk_perf_attr *attr)
{
    pk_pprof_stats *st = r->st;
    pk_vec chain;
    pk_vec_init(&chain, sizeof(uint64_t));
    size_t pos = 0;
    pw_field f;
    pw_error e;
    int rc = 0;
    while (!rc && pw_next(r->b, r->n, &pos, &f, NULL, &e) > 0) {
        if (f.num != 2)
            continue;
        st->samples++;
        Pk__Pprof__Sample *s = rd_unpack(r, &f, &pw_sample, &pk__pprof__sample__descriptor);
        if (!s) {
            rc = -1;
            break;
        }
        const rd_loc *leaf = NULL;
        for (size_t i = 0; i < s->n_location_id && !rc; i++) {
            const rd_loc *l = find_loc(r, s->location_id[i]);
            if (!l)
                rc = rd_fail(r, f.off, "Sample: location id %llu (frame %zu) does not exist%s",
                             (unsigned long long)s->location_id[i], i,
                             r->nlocs ? "" : " (the profile has no locations)");
            else if (!i)
                leaf = l;
        }
        if (!rc && s->n_value != r->nstypes)
            rc = rd_fail(r, f.off, "Sample has %zu values, the profile declares %zu sample types", s->n_value,
                         r->nstypes);
        if (rc) {
            protobuf_c_message_free_unpacked(&s->base, NULL);
            break;
        }
        int64_t v = st->value_index >= 0 ? s->value[st->value_index] : 0;
        if (!s->n_location_id || !leaf->addr) {
            st->samples_no_address++;
        } else if (v == 0) {
            st->samples_zero++;
        } else if (v < 0) {
            st->samples_negative++;
        } else if (pk_vec_reserve(&chain, 2 * s->n_location_id + 2)) {
            rc = pk_err_set(r->err, "%s: out of memory", r->name);
        } else {
            uint64_t *c = chain.data;
            size_t nc = 0;
            int ctx = -1; /* 1 kernel, 0 user */
            for (size_t i = 0; i < s->n_location_id; i++) {
                const rd_loc *l = find_loc(r, s->location_id[i]);
                if (!l->addr) {
                    st->samples_cut++;
                    st->frames_dropped += s->n_location_id - i;
                    break;
                }
                uint64_t a = l->addr + (i && st->restored_return_addresses);
                int k = is_kernel(l->addr);
                if (k != ctx) {
                    c[nc++] = k ? PK_CONTEXT_KERNEL : PK_CONTEXT_USER;
                    ctx = k;
                }
                c[nc++] = a;
                st->frames++;
            }
            pk_sample ps = {0};
            ps.attr = attr;
            ps.misc = is_kernel(leaf->addr) ? PK_CPUMODE_KERNEL : PK_CPUMODE_USER;
            ps.pid = ps.tid = r->o->pid;
            ps.ip = leaf->addr;
            ps.period = (uint64_t)v;
            ps.callchain_nr = nc;
            ps.callchain = c;
            ps.file_offset = f.off;
            st->samples_emitted++;
            st->value_total += (uint64_t)v;
            if (cb->sample)
                rc = cb->sample(cb->ctx, &ps);
        }
        protobuf_c_message_free_unpacked(&s->base, NULL);
    }
    pk_vec_free(&chain);
    if (rc)
        return rc;
    if (st->samples && !st->samples_emitted) {
        if (st->samples_no_address)
            return pk_err_set(r->err, "%s: nothing usable: %llu of %llu samples have a leaf location without an "
                              "address (%llu of %llu locations have none: a symbolic-only profile cannot be tied "
                              "to a binary)", r->name, (unsigned long long)st->samples_no_address,
                              (unsigned long long)st->samples, (unsigned long long)st->locations_no_address,
                              (unsigned long long)st->locations);
        return pk_err_set(r->err, "%s: nothing usable: every sample has a %s value of %s for sample type %s/%s",
                          r->name, st->samples_zero ? "zero" : "negative", st->samples_zero ? "0" : "< 0",
                          st->value_type, st->value_unit);
    }
    return 0;
}

static void rd_free(rd *r)
{
    free(r->locs);
    free(r->maps);
    free(r->stypes);
    free(r->comments);
    free(r->strs);
    pk_u64map_free(&r->loc_ids);
    pk_u64map_free(&r->map_ids);
    pk_u64map_free(&r->want);
}

static int read_proto(rd *r, const pk_perf_callbacks *cb)
{
    pk_pprof_stats *st = r->st;
    int rc;
    if ((rc = walk_count(r)) || (rc = walk_tables(r)) || (rc = walk_strings(r)) || (rc = choose_value(r)))
        return rc;
    st->sample_types = r->nstypes;
    st->mappings = r->nmaps;
    st->locations = r->nlocs;
    st->strings = r->nstrings;
    if (r->has_period_type) {
        copy_str(r, r->period_type[0], st->period_type, sizeof st->period_type);
        copy_str(r, r->period_type[1], st->period_unit, sizeof st->period_unit);
    }
    if (r->count[2] && st->value_index < 0)
        return pk_err_set(r->err, "%s: %llu samples but no sample_type says what their values count", r->name,
                          (unsigned long long)r->count[2]);
    detect_producer(r);

    pk_perf_attr attr = {0};
    attr.type = 1; /* PERF_TYPE_SOFTWARE */
    attr.config = !strcmp(st->period_type, "cpu") ? 0 /* CPU_CLOCK */ : 9 /* DUMMY */;
    attr.sample_period = st->period > 0 ? (uint64_t)st->period : 0;
    attr.sample_type = PK_SAMPLE_IP | PK_SAMPLE_TID | PK_SAMPLE_CALLCHAIN | PK_SAMPLE_PERIOD;
    if (cb->attr && (rc = cb->attr(cb->ctx, &attr)))
        return rc;
    if ((rc = emit_mappings(r, cb)))
        return rc;
    return walk_samples(r, cb, &attr);
}

int pk_pprof_read_mem(const void *data, size_t size, const char *name, const pk_pprof_opts *opts,
                      const pk_perf_callbacks *cb, pk_pprof_stats *st, pk_err *err)
{
    pk_pprof_opts def;
    pk_pprof_stats dummy;
    pk_perf_callbacks nocb = {0};
    if (!opts) {
        pk_pprof_opts_init(&def);
        opts = &def;
    }
    if (!st)
        st = &dummy;
    if (!cb)
        cb = &nocb;
    memset(st, 0, sizeof *st);
    st->value_index = -1;
    st->file_bytes = size;
    if (!size)
        return pk_err_set(err, "%s: offset 0: empty file (not a pprof profile)", name);
    uint64_t max = opts->max_bytes ? opts->max_bytes : DEFAULT_MAX_BYTES;
    rd r = {0};
    r.name = name;
    r.o = opts;
    r.st = st;
    r.err = err;
    r.where = "";
    uint8_t *plain = NULL;
    if (pk_pprof_is_gzip(data, size)) {
        size_t n;
        if (pk_pprof_gunzip(data, size, max, &plain, &n, name, err))
            return -1;
        st->gzip = true;
        r.b = plain;
        r.n = n;
        r.where = " (decompressed)";
    } else {
        if (size > max)
            return pk_err_set(err, "%s: %zu bytes of protobuf, more than the limit of %llu", name, size,
                              (unsigned long long)max);
        r.b = data;
        r.n = size;
    }
    st->proto_bytes = r.n;
    int rc = read_proto(&r, cb);
    rd_free(&r);
    free(plain);
    return rc;
}

int pk_pprof_read_opts(const char *path, const pk_pprof_opts *opts, const pk_perf_callbacks *cb,
                       pk_pprof_stats *st, pk_err *err)
{
    pk_mapped_file f;
    bool stdin_ = !strcmp(path, "-");
    if (pk_file_map(&f, stdin_ ? "/dev/stdin" : path, err))
        return -1;
    int rc = pk_pprof_read_mem(f.data, f.size, stdin_ ? "(standard input)" : path, opts, cb, st, err);
    pk_file_unmap(&f);
    return rc;
}

int pk_pprof_read(const char *path, const pk_perf_callbacks *cb, pk_pprof_stats *st, pk_err *err)
{
    return pk_pprof_read_opts(path, NULL, cb, st, err);
}
