/* cmd_dump.c — `pgokit dump FILE`: a readable listing of a perf.data file (or
 * of `perf script` text: --script, or detected), close to `perf script`'s: header
 * summary, mmaps with build-ids, comm/fork/exit, samples with their call
 * chains and branch stacks, then the reader's statistics.
 *
 * --perfscript writes instead the text `perf script -F ip,brstack
 * --show-mmap-events` prints, with absolute call-chain addresses (perf 6.1
 * prints them relative to their file, which llvm-profgen cannot place): the
 * input llvm-profgen reads best. */
#include "cli/cli.h"
#include "perf/perf_data.h"
#include "unwind/stack_cfi.h"

#include <inttypes.h>
#include <stdlib.h>

const char pk_cmd_dump_summary[] = "list the records of a perf.data file (like perf script)";

typedef struct dump_ctx {
    FILE *out;
    bool stats_only;
    bool perfscript;            /* --perfscript: llvm-profgen's input form */
    uint64_t samples;
    uint32_t nattr;
    uint64_t checksum;          /* --stats still decodes every sample */
    char line[1 << 16];
} dump_ctx;

static char *hex(char *p, uint64_t v)
{
    static const char digits[] = "0123456789abcdef";
    int n = v ? (67 - __builtin_clzll(v)) / 4 : 1;
    for (int i = n - 1; i >= 0; i--) {
        p[i] = digits[v & 15];
        v >>= 4;
    }
    return p + n;
}

static char *dec(char *p, uint64_t v)
{
    char tmp[20];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = tmp[--n];
    return p;
}

static void sample_type_names(uint64_t st, char *buf, size_t cap)
{
    static const char *const names[] = {
        "IP", "TID", "TIME", "ADDR", "READ", "CALLCHAIN", "ID", "CPU", "PERIOD", "STREAM_ID",
        "RAW", "BRANCH_STACK", "REGS_USER", "STACK_USER", "WEIGHT", "DATA_SRC", "IDENTIFIER",
        "TRANSACTION", "REGS_INTR", "PHYS_ADDR", "AUX", "CGROUP", "DATA_PAGE_SIZE",
        "CODE_PAGE_SIZE", "WEIGHT_STRUCT",
    };
    size_t len = 0;
    buf[0] = 0;
    for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++)
        if (st >> i & 1)
            len += (size_t)snprintf(buf + len, len < cap ? cap - len : 0, "%s%s", len ? "|" : "", names[i]);
}

static int on_attr(void *vctx, const pk_perf_attr *a)
{
    dump_ctx *c = vctx;
    uint32_t n = c->nattr++;
    if (c->stats_only || c->perfscript)
        return 0;
    char names[256];
    sample_type_names(a->sample_type, names, sizeof names);
    fprintf(c->out, "# attr %u: type %u config 0x%" PRIx64 " size %u period %" PRIu64 " sample_type 0x%" PRIx64
            " (%s) read_format 0x%" PRIx64 " flags 0x%" PRIx64 " branch_sample_type 0x%" PRIx64 " ids",
            n, a->type, a->config, a->size, a->sample_period, a->sample_type, names, a->read_format,
            a->flags, a->branch_sample_type);
    for (uint32_t i = 0; i < a->nr_ids && i < 16; i++)
        fprintf(c->out, " %" PRIu64, a->ids[i]);
    if (a->nr_ids > 16)
        fprintf(c->out, " ... (%u)", a->nr_ids);
    fputc('\n', c->out);
    return 0;
}

static void print_string_feature(dump_ctx *c, const char *what, const uint8_t *d, uint64_t size)
{
    size_t len;
    const char *s = pk_perf_feature_string(d, size, &len);
    if (s)
        fprintf(c->out, "# %s: %.*s\n", what, (int)len, s);
}

static int on_feature(void *vctx, uint32_t id, const void *data, uint64_t size)
{
    dump_ctx *c = vctx;
    if (c->stats_only || c->perfscript)
        return 0;
    const char *name = pk_perf_feature_name(id);
    if (!name)
        fprintf(c->out, "# feature %u: %" PRIu64 " bytes\n", id, size);
    else
        fprintf(c->out, "# feature %s: %" PRIu64 " bytes\n", name, size);
    const uint8_t *d = data;
    if (id == PK_FEAT_HOSTNAME || id == PK_FEAT_OSRELEASE || id == 5 /* version */ || id == PK_FEAT_ARCH ||
        id == 8 /* cpudesc */ || id == 9 /* cpuid */)
        print_string_feature(c, name, d, size);
    if (id == PK_FEAT_CMDLINE && size >= 4) {
        uint32_t nr = pk_ld32(d);
        uint64_t pos = 4;
        fprintf(c->out, "# cmdline:");
        for (uint32_t i = 0; i < nr && size - pos >= 4; i++) {
            uint32_t len = pk_ld32(d + pos);
            if (len > size - pos - 4)
                break;
            fprintf(c->out, " %.*s", (int)strnlen((const char *)d + pos + 4, len), (const char *)d + pos + 4);
            pos += 4 + len;
        }
        fputc('\n', c->out);
    }
    return 0;
}

static void print_build_id(FILE *out, const uint8_t *id, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        fprintf(out, "%02x", id[i]);
}

static int on_build_id(void *vctx, const pk_build_id_event *b)
{
    dump_ctx *c = vctx;
    if (c->stats_only || c->perfscript)
        return 0;
    fprintf(c->out, "BUILD_ID ");
    print_build_id(c->out, b->build_id, b->size);
    fprintf(c->out, " pid %d misc 0x%x %s\n", b->pid, b->misc, b->filename);
    return 0;
}

static int on_mmap(void *vctx, const pk_mmap_event *m)
{
    dump_ctx *c = vctx;
    if (c->stats_only)
        return 0;
    if (!m->is_mmap2) {
        fprintf(c->out, "PERF_RECORD_MMAP %d/%d: [%#" PRIx64 "(%#" PRIx64 ") @ %#" PRIx64 "]: %c %s\n",
                (int)m->pid, (int)m->tid, m->addr, m->len, m->pgoff, m->misc & (1u << 13) ? 'r' : 'x', m->filename);
        return 0;
    }
    fprintf(c->out, "PERF_RECORD_MMAP2 %d/%d: [%#" PRIx64 "(%#" PRIx64 ") @ %#" PRIx64 " ",
            (int)m->pid, (int)m->tid, m->addr, m->len, m->pgoff);
    if (m->has_build_id) {
        fputc('<', c->out);
        print_build_id(c->out, m->build_id, m->build_id_size);
        fputc('>', c->out);
    } else {
        fprintf(c->out, "%02x:%02x %" PRIu64 " %" PRIu64, m->maj, m->min, m->ino, m->ino_generation);
    }
    fprintf(c->out, "]: %c%c%c%c %s\n", m->prot & 1 ? 'r' : '-', m->prot & 2 ? 'w' : '-',
            m->prot & 4 ? 'x' : '-', m->flags & 1 ? 's' : 'p', m->filename);
    return 0;
}

static int on_comm(void *vctx, const pk_comm_event *e)
{
    dump_ctx *c = vctx;
    if (!c->stats_only && !c->perfscript)
        fprintf(c->out, "PERF_RECORD_COMM%s: %s:%d/%d\n", e->exec ? " exec" : "", e->comm, (int)e->pid, (int)e->tid);
    return 0;
}

static int on_task(void *vctx, const pk_task_event *t)
{
    dump_ctx *c = vctx;
    if (!c->stats_only && !c->perfscript)
        fprintf(c->out, "PERF_RECORD_%s(%d:%d):(%d:%d)\n", t->is_fork ? "FORK" : "EXIT",
                (int)t->pid, (int)t->tid, (int)t->ppid, (int)t->ptid);
    return 0;
}

static const char *marker_name(uint64_t v)
{
    if (v == PK_CONTEXT_HV) return "[hv]";
    if (v == PK_CONTEXT_KERNEL) return "[kernel]";
    if (v == PK_CONTEXT_USER) return "[user]";
    if (v == PK_CONTEXT_GUEST) return "[guest]";
    if (v == (uint64_t)-2176) return "[guest kernel]";
    if (v == (uint64_t)-2560) return "[guest user]";
    return "[context]";
}

/* perf's names of branch types (PERF_BR_*), as `perf script` prints them. */
static const char *const branch_type_names[] = {
    NULL, "COND", "UNCOND", "IND", "CALL", "IND_CALL", "RET", "SYSCALL", "SYSRET", "COND_CALL", "COND_RET",
};

/* One sample as `perf script -F ip,brstack` prints it, call chain absolute:
 * a blank line, the chain (leaf first, one "\t%16x" line each, context
 * markers left out), the branch stack on one line starting " 0x"; without a
 * call chain in the recording, "%16x ip" and the branch stack on one line. */
static void perfscript_sample(dump_ctx *c, const pk_sample *s)
{
    char *p = c->line, *lim = c->line + sizeof c->line - 160;
    c->samples++;
    if (s->attr && (s->attr->sample_type & PK_SAMPLE_CALLCHAIN)) {
        *p++ = '\n';
        const uint8_t *cc = (const uint8_t *)s->callchain;
        bool any = false;
        for (uint64_t i = 0; i <= s->callchain_nr; i++) {
            uint64_t a = i < s->callchain_nr ? pk_ld64(cc + 8 * i) : s->ip;
            if (i == s->callchain_nr && any)
                break; /* the ip stands in only for an empty chain */
            if (a >= PK_CONTEXT_MAX)
                continue;
            if (p > lim) {
                fwrite(c->line, 1, (size_t)(p - c->line), c->out);
                p = c->line;
            }
            p += sprintf(p, "\t%16" PRIx64 "\n", a);
            any = true;
        }
    } else {
        p += sprintf(p, "%16" PRIx64, s->ip);
    }
    const uint8_t *br = (const uint8_t *)s->branches;
    for (uint64_t i = 0; i < s->branch_nr; i++) {
        if (p > lim) {
            fwrite(c->line, 1, (size_t)(p - c->line), c->out);
            p = c->line;
        }
        uint64_t from = pk_ld64(br + 24 * i), to = pk_ld64(br + 24 * i + 8), fl = pk_ld64(br + 24 * i + 16);
        if (!from && !to)
            break; /* unused slot */
        unsigned type = (unsigned)(fl >> 20 & 0xf);
        p += sprintf(p, " 0x%" PRIx64 "/0x%" PRIx64 "/%c/%c/%c/%u%s%s ", from, to, fl & 1 ? 'M' : fl & 2 ? 'P' : '-',
                     fl & 4 ? 'X' : '-', fl & 8 ? 'A' : '-', (unsigned)(fl >> 4 & 0xffff),
                     type && type < sizeof branch_type_names / sizeof branch_type_names[0] ? "/" : "",
                     type && type < sizeof branch_type_names / sizeof branch_type_names[0] ? branch_type_names[type] : "");
    }
    *p++ = '\n';
    fwrite(c->line, 1, (size_t)(p - c->line), c->out);
}

static int on_sample(void *vctx, const pk_sample *s)
{
    dump_ctx *c = vctx;
    if (c->perfscript) {
        perfscript_sample(c, s);
        return 0;
    }
    if (c->stats_only) {
        uint64_t h = s->ip ^ s->time;
        const uint8_t *cc = (const uint8_t *)s->callchain;
        for (uint64_t i = 0; i < s->callchain_nr; i++)
            h += pk_ld64(cc + 8 * i);
        const uint8_t *br = (const uint8_t *)s->branches;
        for (uint64_t i = 0; i < s->branch_nr; i++)
            h += pk_ld64(br + 24 * i) ^ pk_ld64(br + 24 * i + 8);
        c->checksum += h;
        return 0;
    }
    char *p = c->line, *lim = c->line + sizeof c->line - 128;
    p = dec(p, s->pid);
    *p++ = '/';
    p = dec(p, s->tid);
    *p++ = ' ';
    p = dec(p, s->time / 1000000000u);
    *p++ = '.';
    char ns[16];
    snprintf(ns, sizeof ns, "%09u", (unsigned)(s->time % 1000000000u));
    memcpy(p, ns, 9);
    p += 9;
    memcpy(p, ": ip 0x", 7);
    p += 7;
    p = hex(p, s->ip);
    memcpy(p, " period ", 8);
    p += 8;
    p = dec(p, s->period);
    if (s->attr && (s->attr->sample_type & PK_SAMPLE_CPU)) {
        memcpy(p, " cpu ", 5);
        p += 5;
        p = dec(p, s->cpu);
    }
    if (c->nattr > 1) {
        memcpy(p, " id ", 4);
        p += 4;
        p = dec(p, s->id);
    }
    if (s->has_hw_idx) {
        memcpy(p, " hw_idx ", 8);
        p += 8;
        p = dec(p, s->hw_idx);
    }
    *p++ = '\n';
    const uint8_t *cc = (const uint8_t *)s->callchain;
    for (uint64_t i = 0; i < s->callchain_nr; i++) {
        if (p > lim) {
            fwrite(c->line, 1, (size_t)(p - c->line), c->out);
            p = c->line;
        }
        uint64_t a = pk_ld64(cc + 8 * i);
        *p++ = '\t';
        if (a >= PK_CONTEXT_MAX) {
            const char *m = marker_name(a);
            size_t n = strlen(m);
            memcpy(p, m, n);
            p += n;
        } else {
            p = hex(p, a);
        }
        *p++ = '\n';
    }
    if (s->branch_nr) {
        const uint8_t *br = (const uint8_t *)s->branches;
        for (uint64_t i = 0; i < s->branch_nr; i++) {
            if (p > lim) {
                fwrite(c->line, 1, (size_t)(p - c->line), c->out);
                p = c->line;
            }
            uint64_t fl = pk_ld64(br + 24 * i + 16);
            memcpy(p, " 0x", 3);
            p += 3;
            p = hex(p, pk_ld64(br + 24 * i));
            memcpy(p, "/0x", 3);
            p += 3;
            p = hex(p, pk_ld64(br + 24 * i + 8));
            *p++ = '/';
            *p++ = fl & 1 ? 'M' : fl & 2 ? 'P' : '-';
            *p++ = '/';
            *p++ = fl & 4 ? 'X' : '-';
            *p++ = '/';
            *p++ = fl & 8 ? 'A' : '-';
            *p++ = '/';
            p = dec(p, fl >> 4 & 0xffff);
        }
        *p++ = '\n';
    }
    fwrite(c->line, 1, (size_t)(p - c->line), c->out);
    return 0;
}

static void print_stats(FILE *out, const pk_perf_stats *st, uint64_t checksum)
{
    fprintf(out, "# mode: %s%s\n", st->pipe_mode ? "pipe" : "file", st->compressed ? ", compressed" : "");
    fprintf(out, "# attrs: %u\n", st->nr_attrs);
    fprintf(out, "# records: %" PRIu64 "\n", st->records);
    fprintf(out, "# samples: %" PRIu64 "\n", st->samples);
    fprintf(out, "# branch entries: %" PRIu64 "\n", st->branch_entries);
    fprintf(out, "# callchain entries: %" PRIu64 "\n", st->callchain_entries);
    fprintf(out, "# mmaps: %" PRIu64 "\n", st->mmaps);
    fprintf(out, "# comms: %" PRIu64 "\n", st->comms);
    fprintf(out, "# forks: %" PRIu64 "\n", st->forks);
    fprintf(out, "# exits: %" PRIu64 "\n", st->exits);
    fprintf(out, "# lost events: %" PRIu64 "\n", st->lost_events);
    fprintf(out, "# skipped records: %" PRIu64 "\n", st->skipped_records);
    fprintf(out, "# finished rounds: %" PRIu64 "\n", st->finished_rounds);
    if (st->compressed)
        fprintf(out, "# compressed bytes: %" PRIu64 " -> %" PRIu64 "\n", st->compressed_bytes, st->decompressed_bytes);
    if (checksum)
        fprintf(out, "# sample checksum: %016" PRIx64 "\n", checksum);
}

/* perf script text is recognised by its first bytes: printable, and not a
 * perf.data magic (which would give a precise error from the reader). */
static bool looks_like_text(const char *path)
{
    if (!strcmp(path, "-"))
        return false;
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    unsigned char b[8];
    size_t n = fread(b, 1, sizeof b, f);
    fclose(f);
    static const char *const magics[] = {"PERFILE2", "PERFFILE", "2ELIFREP", "ELIFFREP"};
    if (n < 8)
        return false;
    for (size_t i = 0; i < 4; i++)
        if (!memcmp(b, magics[i], 8))
            return false;
    for (size_t i = 0; i < n; i++)
        if (b[i] != '\t' && b[i] != '\n' && b[i] != '\r' && (b[i] < 0x20 || b[i] > 0x7e))
            return false;
    return true;
}

static int print_unwound(void *ctx, const pk_sample *s, const uint64_t *frames, size_t n, pk_stack_stop stop)
{
    FILE *out = ctx;
    fprintf(out, "%u %s", s->pid, pk_stack_stop_name(stop));
    for (size_t i = 0; i < n; i++) {
        if (frames[i] == UINT64_MAX)
            fputs(" -", out);
        else
            fprintf(out, " %" PRIx64, frames[i]);
    }
    fputc('\n', out);
    return 0;
}

static int dump_unwound(const char *file, const char *binary)
{
    pk_err err;
    pk_binary *bin;
    if (pk_binary_open(&bin, binary, NULL, &err))
        return pk_cli_fail("dump", &err);
    int rc = pk_stack_unwind_file(file, bin, binary, print_unwound, stdout, &err);
    pk_binary_close(bin);
    fflush(stdout);
    if (rc)
        return pk_cli_fail("dump", &err);
    return ferror(stdout) ? (fprintf(stderr, "pgokit dump: write error on standard output\n"), 1) : 0;
}

static void usage(FILE *to)
{
    fprintf(to, "usage: pgokit dump [--stats] [--script] [--perfscript] [--unwind BINARY] [-q] FILE\n"
                "  Lists the records of a perf.data file (FILE \"-\": standard input, pipe mode).\n"
                "  --stats       only print the statistics (every sample is still decoded)\n"
                "  --script      FILE is `perf script` text (LBR-only or stack+LBR form);\n"
                "                detected automatically for files that start with text\n"
                "  --perfscript  write what `perf script -F ip,brstack --show-mmap-events` prints,\n"
                "                with absolute call-chain addresses (perf 6.1 prints them relative\n"
                "                to their file): the input llvm-profgen --perfscript reads best\n"
                "  --unwind BINARY\n"
                "                only the samples that carry a stack copy (perf record --call-graph\n"
                "                dwarf): their call chains unwound with BINARY's CFI (.eh_frame), one\n"
                "                line each: pid, where unwinding stopped, then BINARY's link-time\n"
                "                addresses, leaf first (\"-\": a frame in other code)\n"
                "  -q, --quiet   quiet, as in every command (dump prints nothing but its listing\n"
                "                and errors). Compatibility: -q used to mean --stats; use --stats.\n");
}

int pk_cmd_dump(int argc, char **argv)
{
    bool stats_only = false, script = false, perfscript = false;
    const char *file = NULL, *unwind_bin = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--stats"))
            stats_only = true;
        else if (!strcmp(a, "-q") || !strcmp(a, "--quiet"))
            ; /* quiet: the listing is the output, there is no chatter to drop */
        else if (!strcmp(a, "--script"))
            script = true;
        else if (!strcmp(a, "--perfscript"))
            perfscript = true;
        else if (!strcmp(a, "--unwind")) {
            if (++i == argc)
                return pk_cli_usage("dump", "--unwind needs a binary");
            unwind_bin = argv[i];
        }
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (a[0] == '-' && a[1])
            return pk_cli_usage("dump", "unknown option '%s'", a);
        else if (file)
            return pk_cli_usage("dump", "more than one input file");
        else
            file = a;
    }
    if (!file)
        return pk_cli_usage("dump", "no input file");
    if (unwind_bin) {
        if (stats_only || script || perfscript)
            return pk_cli_usage("dump", "--unwind lists chains only (not with --stats, --script or --perfscript)");
        return dump_unwound(file, unwind_bin);
    }
    dump_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        fprintf(stderr, "pgokit dump: out of memory\n");
        return 1;
    }
    static char obuf[1 << 20];
    setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
    c->out = stdout;
    c->stats_only = stats_only;
    c->perfscript = perfscript;
    if (perfscript && stats_only) {
        free(c);
        return pk_cli_usage("dump", "--perfscript and --stats exclude each other");
    }
    pk_perf_callbacks cb = {
        .ctx = c, .attr = on_attr, .sample = on_sample, .mmap = on_mmap, .comm = on_comm,
        .task = on_task, .build_id = on_build_id, .feature = on_feature,
        /* statistics only: a perf script repeat count is one weighted sample,
         * not that many callbacks (the listing writes each one out) */
        .sample_weights = stats_only,
    };
    pk_err err;
    int rc;
    if (script || looks_like_text(file)) {
        pk_script_stats ss;
        rc = pk_perf_script_read(file, &cb, &ss, &err);
        if (!rc && !perfscript)
            fprintf(stdout, "# lines: %" PRIu64 "\n# samples: %" PRIu64 "\n# mmaps: %" PRIu64 "\n"
                    "# call-chain entries: %" PRIu64 " (%" PRIu64 " file-relative made absolute, %" PRIu64
                    " of them guessed, %" PRIu64 " unplaced, %" PRIu64 " in no mapping)\n",
                    ss.lines, ss.samples, ss.mmaps, ss.frames, ss.frames_rebased, ss.frames_guessed,
                    ss.frames_unplaced, ss.frames_unmapped);
        if (!rc && !perfscript && ss.lines_skipped)
            fprintf(stdout, "# lines skipped: %" PRIu64 " (%" PRIu64 " samples with them)\n", ss.lines_skipped,
                    ss.samples_skipped);
        char w[1024];
        if (!rc && pk_script_stats_warning(&ss, w, sizeof w))
            fprintf(stderr, "pgokit dump: warning: %s: %s\n", file, w);
    } else {
        pk_perf_stats st;
        if (!stats_only && !perfscript)
            fprintf(stdout, "# pgokit dump: %s\n", file);
        rc = pk_perf_read(file, &cb, &st, &err);
        if (!rc && !perfscript)
            print_stats(stdout, &st, stats_only ? c->checksum : 0);
        char w[512];
        if (!rc && pk_perf_stats_warning(&st, w, sizeof w))
            fprintf(stderr, "pgokit dump: warning: %s: %s\n", file, w);
    }
    fflush(stdout);
    free(c);
    if (rc)
        return pk_cli_fail("dump", &err);
    if (ferror(stdout)) {
        fprintf(stderr, "pgokit dump: write error on standard output\n");
        return 1;
    }
    return 0;
}
