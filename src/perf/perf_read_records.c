/* perf_read_records.c — decoding one perf.data record into the public event
 * structures. Every variable-length field is bounds-checked against the
 * record's own size, so a corrupt count can never read past the record. */
#include "perf/perf_internal.h"

#include <stdio.h>
#include <stdlib.h>

int pk_reader_fail(pk_reader *r, uint64_t off, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (r->in_decompressed)
        return pk_err_set(r->err, "%s: decompressed offset %llu (COMPRESSED record at offset %llu): %s",
                          r->name, (unsigned long long)off, (unsigned long long)r->cur_comp_offset, msg);
    return pk_err_set(r->err, "%s: offset %llu: %s", r->name, (unsigned long long)off, msg);
}

const char *pk_perf_feature_string(const void *data, uint64_t size, size_t *len)
{
    if (size < 4)
        return NULL;
    uint64_t stated = pk_ld32(data);
    const char *s = (const char *)data + 4;
    *len = strnlen(s, (size_t)(stated < size - 4 ? stated : size - 4));
    return s;
}

const char *pk_perf_feature_name(uint32_t id)
{
    static const char *const names[] = {
        [1] = "tracing_data", [2] = "build_id", [3] = "hostname", [4] = "osrelease",
        [5] = "version", [6] = "arch", [7] = "nrcpus", [8] = "cpudesc", [9] = "cpuid",
        [10] = "total_mem", [11] = "cmdline", [12] = "event_desc", [13] = "cpu_topology",
        [14] = "numa_topology", [15] = "branch_stack", [16] = "pmu_mappings",
        [17] = "group_desc", [18] = "auxtrace", [19] = "stat", [20] = "cache",
        [21] = "sample_time", [22] = "mem_topology", [23] = "clockid", [24] = "dir_format",
        [25] = "bpf_prog_info", [26] = "bpf_btf", [27] = "compressed", [28] = "cpu_pmu_caps",
        [29] = "clock_data", [30] = "hybrid_topology", [31] = "pmu_caps",
    };
    if (id < sizeof names / sizeof names[0])
        return names[id];
    return NULL;
}

/* ---- attrs ---- */

static uint64_t attr_field(const uint8_t *raw, size_t avail, size_t off, size_t width)
{
    if (off + width > avail)
        return 0;
    return width == 4 ? pk_ld32(raw + off) : pk_ld64(raw + off);
}

int pk_reader_add_attr(pk_reader *r, const uint8_t *raw, size_t avail, const uint8_t *ids,
                       uint64_t nr_ids, uint64_t off)
{
    if (avail < 8)
        return pk_reader_fail(r, off, "attr of %zu bytes is too short", avail);
    uint32_t asz = pk_ld32(raw + 4);
    if (asz == 0)
        asz = 64; /* PERF_ATTR_SIZE_VER0: size 0 means the first published layout */
    if (asz < 64)
        return pk_reader_fail(r, off, "attr size %u is smaller than 64", asz);
    size_t use = asz < avail ? asz : avail;
    if (r->nr_attrs >= 1u << 16)
        return pk_reader_fail(r, off, "too many attrs");
    pk_attr_int *a = calloc(1, sizeof *a);
    if (!a)
        return pk_reader_fail(r, off, "out of memory");
    pk_perf_attr *p = &a->pub;
    p->type = (uint32_t)attr_field(raw, use, 0, 4);
    p->size = asz;
    p->config = attr_field(raw, use, 8, 8);
    p->sample_period = attr_field(raw, use, 16, 8);
    p->sample_type = attr_field(raw, use, 24, 8);
    p->read_format = attr_field(raw, use, 32, 8);
    p->flags = attr_field(raw, use, 40, 8);
    p->branch_sample_type = attr_field(raw, use, 72, 8);
    p->sample_regs_user = attr_field(raw, use, 80, 8);
    p->sample_regs_intr = attr_field(raw, use, 96, 8);
    if (p->sample_type & ~PK_SAMPLE_KNOWN_MASK) {
        unsigned long long stype = p->sample_type;
        free(a);
        return pk_reader_fail(r, off, "attr sample_type 0x%llx has bits this reader does not know (layout unknown)",
                              stype);
    }
    if (nr_ids) {
        a->ids_owned = malloc(nr_ids * sizeof(uint64_t));
        if (!a->ids_owned) {
            free(a);
            return pk_reader_fail(r, off, "out of memory");
        }
        for (uint64_t i = 0; i < nr_ids; i++)
            a->ids_owned[i] = pk_ld64(ids + 8 * i);
    }
    p->ids = a->ids_owned;
    p->nr_ids = (uint32_t)nr_ids;
    a->time_pos = p->sample_type & PK_SAMPLE_TIME
                      ? 8 + 8 * __builtin_popcountll(p->sample_type & (PK_SAMPLE_IDENTIFIER | PK_SAMPLE_IP | PK_SAMPLE_TID))
                      : -1;
    if (r->nr_attrs == r->cap_attrs) {
        uint32_t nc = r->cap_attrs ? r->cap_attrs * 2 : 4;
        pk_attr_int **na = pk_xrealloc_array(r->attrs, nc, sizeof *na);
        if (!na) {
            free(a->ids_owned);
            free(a);
            return pk_reader_fail(r, off, "out of memory");
        }
        r->attrs = na;
        r->cap_attrs = nc;
    }
    uint32_t idx = r->nr_attrs;
    r->attrs[r->nr_attrs++] = a;
    if (idx == 0) {
        r->sample_type0 = p->sample_type;
        r->sample_id_all = (p->flags & PK_ATTR_FLAG_SAMPLE_ID_ALL) != 0;
        /* the trailer ends with ID, STREAM_ID, CPU, IDENTIFIER after the time */
        uint64_t st = p->sample_type;
        r->trailer_time_back = r->sample_id_all && (st & PK_SAMPLE_TIME)
                                   ? 8 + 8 * __builtin_popcountll(st & (PK_SAMPLE_ID | PK_SAMPLE_STREAM_ID | PK_SAMPLE_CPU |
                                                                       PK_SAMPLE_IDENTIFIER))
                                   : -1;
    }
    if (p->branch_sample_type & PK_BRANCH_COUNTERS)
        r->any_branch_counters = true;
    for (uint64_t i = 0; i < nr_ids; i++) {
        uint64_t *slot = pk_u64map_slot(&r->id2attr, a->ids_owned[i]);
        if (!slot)
            return pk_reader_fail(r, off, "out of memory");
        *slot = idx;
    }
    r->st->nr_attrs = r->nr_attrs;
    if (r->cb->attr) {
        int rc = r->cb->attr(r->cb->ctx, p);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- build-ids (BUILD_ID feature, HEADER_BUILD_ID records) ---- */

static int build_id_record(pk_reader *r, const uint8_t *p, size_t size, uint64_t off)
{
    if (size < 36)
        return pk_reader_fail(r, off, "build-id record of %zu bytes is shorter than 36", size);
    pk_build_id_event b;
    b.misc = pk_ld16(p + 4);
    b.pid = (int32_t)pk_ld32(p + 8);
    memcpy(b.build_id, p + 12, 20);
    b.size = 20;
    if (b.misc & 0x8000) { /* BUILD_ID_SIZE: the real length is in byte 20 */
        b.size = p[12 + 20];
        if (b.size > 20)
            return pk_reader_fail(r, off, "build-id size %u exceeds 20", b.size);
    }
    const uint8_t *name = p + 36;
    if (size == 36 || !memchr(name, 0, size - 36))
        return pk_reader_fail(r, off, "build-id file name is not NUL-terminated");
    b.filename = (const char *)name;
    if (r->cb->build_id)
        return r->cb->build_id(r->cb->ctx, &b);
    return 0;
}

int pk_reader_build_ids(pk_reader *r, const uint8_t *data, uint64_t size, uint64_t off)
{
    uint64_t pos = 0;
    while (pos < size) {
        if (size - pos < 8)
            return pk_reader_fail(r, off + pos, "truncated build-id record header");
        uint16_t rs = pk_ld16(data + pos + 6);
        if (rs > size - pos)
            return pk_reader_fail(r, off + pos, "build-id record of %u bytes runs past its section (%llu bytes left)",
                                  rs, (unsigned long long)(size - pos));
        int rc = build_id_record(r, data + pos, rs, off + pos);
        if (rc)
            return rc;
        pos += rs;
    }
    return 0;
}

/* ---- the sample_id trailer of non-sample records ---- */

typedef struct trailer {
    size_t size;
    uint32_t pid, tid;
    uint64_t time;
} trailer;

static void parse_trailer(const pk_reader *r, const uint8_t *rec, size_t size, trailer *t)
{
    memset(t, 0, sizeof *t);
    if (!r->sample_id_all || r->nr_attrs == 0)
        return;
    uint64_t st = r->sample_type0;
    size_t n = 0;
    n += !!(st & PK_SAMPLE_TID) + !!(st & PK_SAMPLE_TIME) + !!(st & PK_SAMPLE_ID) +
         !!(st & PK_SAMPLE_STREAM_ID) + !!(st & PK_SAMPLE_CPU) + !!(st & PK_SAMPLE_IDENTIFIER);
    t->size = 8 * n;
    if (t->size > size - 8)
        return; /* caller reports: fixed part + trailer must fit */
    const uint8_t *q = rec + size - t->size;
    if (st & PK_SAMPLE_TID) {
        t->pid = pk_ld32(q);
        t->tid = pk_ld32(q + 4);
        q += 8;
    }
    if (st & PK_SAMPLE_TIME)
        t->time = pk_ld64(q);
}

/* Returns the end of the variable part (record end minus trailer), or fails
 * when the fixed part and the trailer do not fit. */
static int body_end(pk_reader *r, size_t size, size_t fixed, const trailer *t, uint64_t off,
                    const char *what, size_t *end)
{
    if (fixed + t->size > size)
        return pk_reader_fail(r, off, "%s record of %zu bytes is too short (needs %zu)", what, size, fixed + t->size);
    *end = size - t->size;
    return 0;
}

static int string_field(pk_reader *r, const uint8_t *rec, size_t from, size_t to, uint64_t off,
                        const char *what, const char **out)
{
    if (from >= to || !memchr(rec + from, 0, to - from))
        return pk_reader_fail(r, off + from, "%s is not NUL-terminated inside its record", what);
    *out = (const char *)rec + from;
    return 0;
}

static int do_mmap(pk_reader *r, const uint8_t *rec, size_t size, uint64_t off, bool v2)
{
    trailer t;
    parse_trailer(r, rec, size, &t);
    size_t fixed = v2 ? 72 : 40, end = 0;
    if (body_end(r, size, fixed, &t, off, v2 ? "MMAP2" : "MMAP", &end))
        return -1;
    pk_mmap_event m;
    memset(&m, 0, sizeof m);
    m.is_mmap2 = v2;
    m.misc = pk_ld16(rec + 4);
    m.pid = pk_ld32(rec + 8);
    m.tid = pk_ld32(rec + 12);
    m.addr = pk_ld64(rec + 16);
    m.len = pk_ld64(rec + 24);
    m.pgoff = pk_ld64(rec + 32);
    if (v2) {
        if (m.misc & PK_MISC_MMAP_BUILD_ID) {
            m.has_build_id = true;
            m.build_id_size = rec[40];
            if (m.build_id_size > 20)
                return pk_reader_fail(r, off, "MMAP2 build-id size %u exceeds 20", m.build_id_size);
            memcpy(m.build_id, rec + 44, 20);
        } else {
            m.maj = pk_ld32(rec + 40);
            m.min = pk_ld32(rec + 44);
            m.ino = pk_ld64(rec + 48);
            m.ino_generation = pk_ld64(rec + 56);
        }
        m.prot = pk_ld32(rec + 64);
        m.flags = pk_ld32(rec + 68);
    }
    if (string_field(r, rec, fixed, end, off, "mmap file name", &m.filename))
        return -1;
    m.time = t.time;
    r->st->mmaps++;
    return r->cb->mmap ? r->cb->mmap(r->cb->ctx, &m) : 0;
}

static int do_comm(pk_reader *r, const uint8_t *rec, size_t size, uint64_t off)
{
    trailer t;
    parse_trailer(r, rec, size, &t);
    size_t end = 0;
    if (body_end(r, size, 16, &t, off, "COMM", &end))
        return -1;
    pk_comm_event c;
    c.pid = pk_ld32(rec + 8);
    c.tid = pk_ld32(rec + 12);
    c.exec = (pk_ld16(rec + 4) & PK_MISC_COMM_EXEC) != 0;
    if (string_field(r, rec, 16, end, off, "comm", &c.comm))
        return -1;
    c.time = t.time;
    r->st->comms++;
    return r->cb->comm ? r->cb->comm(r->cb->ctx, &c) : 0;
}

static int do_task(pk_reader *r, const uint8_t *rec, size_t size, uint64_t off, bool fork)
{
    trailer t;
    parse_trailer(r, rec, size, &t);
    size_t end = 0;
    if (body_end(r, size, 32, &t, off, fork ? "FORK" : "EXIT", &end))
        return -1;
    pk_task_event e;
    e.is_fork = fork;
    e.pid = pk_ld32(rec + 8);
    e.ppid = pk_ld32(rec + 12);
    e.tid = pk_ld32(rec + 16);
    e.ptid = pk_ld32(rec + 20);
    e.time = pk_ld64(rec + 24);
    if (fork)
        r->st->forks++;
    else
        r->st->exits++;
    return r->cb->task ? r->cb->task(r->cb->ctx, &e) : 0;
}

/* ---- samples ---- */

#define NEED(n, what)                                                                     \
    do {                                                                                  \
        if ((uint64_t)(end - p) < (uint64_t)(n))                                          \
            return pk_reader_fail(r, off, "SAMPLE field %s at record byte %zu overflows the record (%zu bytes)", \
                                  what, (size_t)(p - rec), size);                         \
    } while (0)

static int skip_regs(pk_reader *r, const uint8_t *rec, size_t size, uint64_t off, const uint8_t **pp,
                     const uint8_t *end, uint64_t mask, const char *what)
{
    const uint8_t *p = *pp;
    NEED(8, what);
    uint64_t abi = pk_ld64(p);
    p += 8;
    if (abi) {
        uint64_t n = 8ull * (uint64_t)__builtin_popcountll(mask);
        NEED(n, what);
        p += n;
    }
    *pp = p;
    return 0;
}

/* The attr of a SAMPLE: with several attrs, the one its id names. Fails
 * (message in err) when r is non-NULL; quiet otherwise. */
static const pk_perf_attr *sample_attr(const pk_reader *r, pk_reader *report, const uint8_t *rec, size_t size,
                                       uint64_t off)
{
    if (r->nr_attrs == 0) {
        if (report)
            pk_reader_fail(report, off, "SAMPLE record before any attr");
        return NULL;
    }
    if (r->nr_attrs == 1)
        return &r->attrs[0]->pub;
    uint64_t st0 = r->sample_type0;
    size_t idpos;
    if (st0 & PK_SAMPLE_IDENTIFIER)
        idpos = 0;
    else if (st0 & PK_SAMPLE_ID)
        idpos = 8u * (size_t)__builtin_popcountll(st0 & (PK_SAMPLE_IP | PK_SAMPLE_TID | PK_SAMPLE_TIME | PK_SAMPLE_ADDR));
    else {
        if (report)
            pk_reader_fail(report, off, "%u attrs but samples carry no ID/IDENTIFIER to tell them apart", r->nr_attrs);
        return NULL;
    }
    if (size < 16 + idpos) {
        if (report)
            pk_reader_fail(report, off, "SAMPLE record of %zu bytes too short for its id", size);
        return NULL;
    }
    uint64_t id = pk_ld64(rec + 8 + idpos);
    const uint64_t *ix = pk_u64map_get((pk_u64map *)&r->id2attr, id);
    if (!ix) {
        if (report)
            pk_reader_fail(report, off, "SAMPLE id %llu matches no attr", (unsigned long long)id);
        return NULL;
    }
    return &r->attrs[*ix]->pub;
}

const pk_perf_attr *pk_reader_sample_attr(const pk_reader *r, const uint8_t *rec, size_t size)
{
    return sample_attr(r, NULL, rec, size, 0);
}

static int do_sample(pk_reader *r, const uint8_t *rec, size_t size, uint64_t off)
{
    const uint8_t *p = rec + 8, *end = rec + size;
    const pk_perf_attr *at = sample_attr(r, r, rec, size, off);
    if (!at)
        return -1;
    uint64_t st = at->sample_type;
    pk_sample s;
    memset(&s, 0, sizeof s);
    s.attr = at;
    s.misc = pk_ld16(rec + 4);
    s.file_offset = off;
    if (st & PK_SAMPLE_IDENTIFIER) {
        NEED(8, "IDENTIFIER");
        s.id = pk_ld64(p);
        p += 8;
    }
    if (st & PK_SAMPLE_IP) {
        NEED(8, "IP");
        s.ip = pk_ld64(p);
        p += 8;
    }
    if (st & PK_SAMPLE_TID) {
        NEED(8, "TID");
        s.pid = pk_ld32(p);
        s.tid = pk_ld32(p + 4);
        p += 8;
    }
    if (st & PK_SAMPLE_TIME) {
        NEED(8, "TIME");
        s.time = pk_ld64(p);
        p += 8;
    }
    if (st & PK_SAMPLE_ADDR) {
        NEED(8, "ADDR");
        s.addr = pk_ld64(p);
        p += 8;
    }
    if (st & PK_SAMPLE_ID) {
        NEED(8, "ID");
        s.id = pk_ld64(p);
        p += 8;
    }
    if (st & PK_SAMPLE_STREAM_ID) {
        NEED(8, "STREAM_ID");
        p += 8;
    }
    if (st & PK_SAMPLE_CPU) {
        NEED(8, "CPU");
        s.cpu = pk_ld32(p);
        p += 8;
    }
    if (st & PK_SAMPLE_PERIOD) {
        NEED(8, "PERIOD");
        s.period = pk_ld64(p);
        p += 8;
    } else if (!(at->flags & PK_ATTR_FLAG_FREQ)) {
        s.period = at->sample_period;   /* fixed period (-c): as perf does */
    }
    if (st & PK_SAMPLE_READ) {
        uint64_t rf = at->read_format;
        uint64_t per = 1 + !!(rf & PK_FORMAT_ID) + !!(rf & PK_FORMAT_LOST);
        uint64_t hdr = !!(rf & PK_FORMAT_TOTAL_TIME_ENABLED) + !!(rf & PK_FORMAT_TOTAL_TIME_RUNNING);
        if (rf & PK_FORMAT_GROUP) {
            NEED(8, "READ");
            uint64_t nr = pk_ld64(p);
            p += 8;
            if (nr > (uint64_t)(end - p) / (8 * per))
                return pk_reader_fail(r, off, "SAMPLE READ group of %llu values overflows the record",
                                      (unsigned long long)nr);
            NEED(8 * hdr + 8 * per * nr, "READ");
            p += 8 * hdr + 8 * per * nr;
        } else {
            NEED(8 * (hdr + per), "READ");
            p += 8 * (hdr + per);
        }
    }
    if (st & PK_SAMPLE_CALLCHAIN) {
        NEED(8, "CALLCHAIN");
        uint64_t nr = pk_ld64(p);
        p += 8;
        if (nr > (uint64_t)(end - p) / 8)
            return pk_reader_fail(r, off, "SAMPLE callchain nr %llu overflows the record (%zu bytes)",
                                  (unsigned long long)nr, size);
        s.callchain_nr = nr;
        s.callchain = (const uint64_t *)(const void *)p;
        p += 8 * nr;
        r->st->callchain_entries += nr;
    }
    if (st & PK_SAMPLE_RAW) {
        NEED(4, "RAW");
        uint32_t n = pk_ld32(p);
        p += 4;
        NEED(n, "RAW");
        p += n;
    }
    if (st & PK_SAMPLE_BRANCH_STACK) {
        NEED(8, "BRANCH_STACK");
        uint64_t nr = pk_ld64(p);
        p += 8;
        if (at->branch_sample_type & PK_BRANCH_HW_INDEX) {
            NEED(8, "BRANCH_STACK hw_idx");
            s.hw_idx = pk_ld64(p);
            s.has_hw_idx = true;
            p += 8;
        }
        uint64_t each = r->any_branch_counters ? 32 : 24;
        if (nr > (uint64_t)(end - p) / each)
            return pk_reader_fail(r, off, "SAMPLE branch stack nr %llu overflows the record (%zu bytes)",
                                  (unsigned long long)nr, size);
        s.branch_nr = nr;
        s.branches = (const pk_branch *)(const void *)p;
        p += each * nr;
        r->st->branch_entries += nr;
    }
    if (st & PK_SAMPLE_REGS_USER) {
        if ((size_t)(end - p) >= 8 && pk_ld64(p)) {
            s.regs_abi = pk_ld64(p);
            s.regs_mask = at->sample_regs_user;
            s.regs_user = p + 8;
        }
        if (skip_regs(r, rec, size, off, &p, end, at->sample_regs_user, "REGS_USER"))
            return -1;
    }
    if (st & PK_SAMPLE_STACK_USER) {
        NEED(8, "STACK_USER");
        uint64_t n = pk_ld64(p);
        p += 8;
        if (n) {
            NEED(n, "STACK_USER");
            const uint8_t *data = p;
            p += n;
            NEED(8, "STACK_USER dyn_size");
            uint64_t dyn = pk_ld64(p);
            p += 8;
            s.stack_user = data;
            s.stack_size = dyn < n ? dyn : n;
        }
    }
    static const uint64_t simple[] = {
        PK_SAMPLE_WEIGHT | PK_SAMPLE_WEIGHT_STRUCT, PK_SAMPLE_DATA_SRC, PK_SAMPLE_TRANSACTION,
    };
    for (size_t i = 0; i < sizeof simple / sizeof simple[0]; i++)
        if (st & simple[i]) {
            NEED(8, "WEIGHT/DATA_SRC/TRANSACTION");
            p += 8;
        }
    if (st & PK_SAMPLE_REGS_INTR)
        if (skip_regs(r, rec, size, off, &p, end, at->sample_regs_intr, "REGS_INTR"))
            return -1;
    static const uint64_t simple2[] = {
        PK_SAMPLE_PHYS_ADDR, PK_SAMPLE_CGROUP, PK_SAMPLE_DATA_PAGE_SIZE, PK_SAMPLE_CODE_PAGE_SIZE,
    };
    for (size_t i = 0; i < sizeof simple2 / sizeof simple2[0]; i++)
        if (st & simple2[i]) {
            NEED(8, "PHYS_ADDR/CGROUP/PAGE_SIZE");
            p += 8;
        }
    if (st & PK_SAMPLE_AUX) {
        NEED(8, "AUX");
        uint64_t n = pk_ld64(p);
        p += 8;
        NEED(n, "AUX");
        p += n;
    }
    r->st->samples++;
    return r->cb->sample ? r->cb->sample(r->cb->ctx, &s) : 0;
}

/* ---- dispatch ---- */

static int do_header_attr(pk_reader *r, const uint8_t *rec, size_t size, uint64_t off)
{
    if (size < 8 + 64)
        return pk_reader_fail(r, off, "HEADER_ATTR record of %zu bytes is too short", size);
    uint32_t asz = pk_ld32(rec + 12);
    if (asz == 0)
        asz = 64;
    if (asz > size - 8)
        return pk_reader_fail(r, off, "HEADER_ATTR attr size %u exceeds its record (%zu bytes)", asz, size);
    uint64_t nr_ids = (size - 8 - asz) / 8;
    return pk_reader_add_attr(r, rec + 8, asz, rec + 8 + asz, nr_ids, off);
}

static int do_feature(pk_reader *r, const uint8_t *rec, size_t size, uint64_t off)
{
    if (size < 16)
        return pk_reader_fail(r, off, "HEADER_FEATURE record of %zu bytes is too short", size);
    uint64_t id = pk_ld64(rec + 8);
    if (id < 256)
        r->st->features[id / 64] |= 1ull << (id % 64);
    if (id == PK_FEAT_BUILD_ID) {
        int rc = pk_reader_build_ids(r, rec + 16, size - 16, off + 16);
        if (rc)
            return rc;
    }
    if (r->cb->feature && id < 256)
        return r->cb->feature(r->cb->ctx, (uint32_t)id, rec + 16, size - 16);
    return 0;
}

/* ID_INDEX entries are {id, idx, cpu, tid} where idx is the ring-buffer (CPU)
 * index, not an attr index: ids are tied to attrs by the attr table and
 * HEADER_ATTR records. Only the bounds are checked here. */
static int do_id_index(pk_reader *r, const uint8_t *rec, size_t size, uint64_t off)
{
    if (size < 16)
        return pk_reader_fail(r, off, "ID_INDEX record of %zu bytes is too short", size);
    uint64_t nr = pk_ld64(rec + 8);
    if (nr > (size - 16) / 32)
        return pk_reader_fail(r, off, "ID_INDEX nr %llu overflows the record (%zu bytes)", (unsigned long long)nr, size);
    return 0;
}

int pk_reader_event(pk_reader *r, uint32_t type, const uint8_t *rec, size_t size, uint64_t off)
{
    switch (type) {
    case PK_REC_SAMPLE:
        return do_sample(r, rec, size, off);
    case PK_REC_MMAP:
        return do_mmap(r, rec, size, off, false);
    case PK_REC_MMAP2:
        return do_mmap(r, rec, size, off, true);
    case PK_REC_COMM:
        return do_comm(r, rec, size, off);
    case PK_REC_FORK:
        return do_task(r, rec, size, off, true);
    case PK_REC_EXIT:
        return do_task(r, rec, size, off, false);
    default:
        return 0;
    }
}

int pk_reader_record(pk_reader *r, const uint8_t *rec, size_t size, uint64_t off, uint64_t *extra)
{
    uint32_t type = pk_ld32(rec);
    *extra = 0;
    r->st->records++;
    switch (type) {
    case PK_REC_SAMPLE:
    case PK_REC_MMAP:
    case PK_REC_MMAP2:
    case PK_REC_COMM:
    case PK_REC_FORK:
    case PK_REC_EXIT:
        return pk_order_record(r, type, rec, size, off);
    case PK_REC_LOST:
        if (size < 24)
            return pk_reader_fail(r, off, "LOST record of %zu bytes is too short", size);
        r->st->lost_events += pk_ld64(rec + 16);
        return 0;
    case PK_REC_LOST_SAMPLES:
        if (size < 16)
            return pk_reader_fail(r, off, "LOST_SAMPLES record of %zu bytes is too short", size);
        r->st->lost_events += pk_ld64(rec + 8);
        return 0;
    case PK_REC_FINISHED_ROUND:
        r->st->finished_rounds++;
        return pk_order_round(r);
    case PK_REC_HEADER_ATTR:
        return do_header_attr(r, rec, size, off);
    case PK_REC_HEADER_FEATURE:
        return do_feature(r, rec, size, off);
    case PK_REC_HEADER_BUILD_ID:
        return build_id_record(r, rec, size, off);
    case PK_REC_ID_INDEX:
        return do_id_index(r, rec, size, off);
    case PK_REC_COMPRESSED:
    case PK_REC_COMPRESSED2: {
        if (r->in_decompressed)
            return pk_reader_fail(r, off, "COMPRESSED record inside a compressed stream");
        const uint8_t *data = rec + 8;
        size_t len = size - 8;
        if (type == PK_REC_COMPRESSED2) {
            if (size < 16)
                return pk_reader_fail(r, off, "COMPRESSED2 record of %zu bytes is too short", size);
            uint64_t dsz = pk_ld64(rec + 8);
            if (dsz > size - 16)
                return pk_reader_fail(r, off, "COMPRESSED2 data size %llu exceeds its record (%zu bytes)",
                                      (unsigned long long)dsz, size);
            data = rec + 16;
            len = (size_t)dsz;
        }
        r->st->compressed = true;
        return pk_reader_decompress(r, data, len, off);
    }
    case PK_REC_AUXTRACE:
        if (size < 16)
            return pk_reader_fail(r, off, "AUXTRACE record of %zu bytes is too short", size);
        *extra = pk_ld64(rec + 8);
        r->st->skipped_records++;
        return 0;
    case PK_REC_HEADER_TRACING_DATA:
        if (size < 12)
            return pk_reader_fail(r, off, "TRACING_DATA record of %zu bytes is too short", size);
        *extra = ((uint64_t)pk_ld32(rec + 8) + 7) & ~7ull;
        r->st->skipped_records++;
        return 0;
    default:
        r->st->skipped_records++;
        return 0;
    }
}
