/* perf_script.c — reading `perf script` text in the two forms llvm-profgen
 * accepts, plus PERF_RECORD_MMAP/MMAP2 lines from --show-mmap-events.
 *
 *   LBR-only:   [comm] [pid[/tid]] [time:] [event:]* [ip [sym] [(dso)]]
 *               0xFROM[(dso)]/0xTO[(dso)]/flags... 0xFROM/0xTO/flags...
 *   stack+LBR:  [a header line: comm, pid[/tid], time:, event:], then one
 *               indented hex address per line (leaf first), each maybe
 *               followed by "sym+off (dso)", then one LBR line; blocks
 *               separated by blank lines (perf prints a header instead
 *               when it prints any of those fields).
 *   repeat:     a bare decimal number at column 1 before a sample counts it
 *               that many times (llvm-profgen's aggregated scripts): one
 *               sample with that weight for callbacks that take weights. perf's
 *               pid header ("%5d ") is told apart by its trailing space and
 *               the tab-indented call chain under it.
 *
 * Call-chain addresses are made absolute (perf 6.1 prints them relative to
 * their file): script_frames.c. Where llvm-profgen silently drops every
 * sample (an LBR line with two leading spaces or a tab, an event name without
 * perf's column padding) we accept the line; where the input is malformed we
 * stop with an error naming the line and column instead of skipping it. */
#include "perf/perf_internal.h"
#include "perf/script_frames.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct sreader {
    const char *name;
    const pk_perf_callbacks *cb;
    pk_script_stats *st;
    pk_err *err;
    uint64_t lineno;
    const char *line;           /* start of the current line, for columns */
    pk_vec stack;               /* uint64_t, leaf first */
    pk_vec names;               /* uint32_t per stack entry: the file its line names (0: none) */
    uint64_t stack_line;        /* line of the first stack entry */
    int64_t pid, tid;           /* of the sample being read; -1: not printed */
    const char *next;           /* the next line (for the header test), NULL at the end */
    const char *text_end;
    pk_sframes *frames;
    pk_vec branches;            /* pk_branch */
    uint64_t repeat;
    int form;                   /* 0 not yet known, FORM_LBR, FORM_STACK */
    bool saw_lbr_line;
    bool line_bad;              /* sfail() was called for this line: skip it */
    bool skip_block;            /* a bad line interrupted a call stack: drop up to its end */
    const char *event;          /* the sample's event field, without its ':' (NULL: none) */
    size_t event_len;
    char name_buf[4096];
} sreader;

enum { FORM_LBR = 1, FORM_STACK = 2 };

static int sfail(sreader *r, const char *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int sfail(sreader *r, const char *at, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    r->line_bad = true;
    return pk_err_set(r->err, "%s: line %llu, column %u: %s", r->name, (unsigned long long)r->lineno,
                      (unsigned)(at - r->line) + 1, msg);
}

static inline bool is_space(char c) { return c == ' ' || c == '\t'; }
static inline int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Parses hex digits (optional 0x) at p; returns the end or NULL if none or
 * more than 16 digits. */
static const char *parse_hex(const char *p, const char *end, uint64_t *out)
{
    if (end - p >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
        p += 2;
    const char *s = p;
    uint64_t v = 0;
    while (p < end && hexval(*p) >= 0) {
        v = v << 4 | (uint64_t)hexval(*p);
        p++;
    }
    if (p == s || p - s > 16)
        return NULL;
    *out = v;
    return p;
}

static const char *parse_dec(const char *p, const char *end, uint64_t *out)
{
    const char *s = p;
    uint64_t v = 0;
    while (p < end && *p >= '0' && *p <= '9') {
        if (v > (UINT64_MAX - 9) / 10)
            return NULL;
        v = v * 10 + (uint64_t)(*p - '0');
        p++;
    }
    if (p == s)
        return NULL;
    *out = v;
    return p;
}

static const char *skip_sp(const char *p, const char *end)
{
    while (p < end && is_space(*p))
        p++;
    return p;
}

/* The end of a token; spaces inside parentheses do not end it (a file name
 * "(/a b/c)", a symbol "f(int, char)"). */
static const char *tok_end(const char *p, const char *end)
{
    int depth = 0;
    while (p < end && (depth || !is_space(*p))) {
        depth += *p == '(';
        depth -= *p == ')' && depth;
        p++;
    }
    return p;
}

/* After an address, perf's "(dso)" when the dso field is printed. */
static const char *skip_dso(const char *p, const char *end)
{
    if (p >= end || *p != '(')
        return p;
    int depth = 0;
    for (; p < end; p++) {
        depth += *p == '(';
        depth -= *p == ')';
        if (!depth)
            return p + 1;
    }
    return p;
}

/* Linux's PID_MAX_LIMIT: a larger decimal number is no pid. */
#define PID_MAX 4194304

static bool is_dec(const char *p, const char *e)
{
    if (p == e)
        return false;
    for (; p < e; p++)
        if (*p < '0' || *p > '9')
            return false;
    return true;
}

/* The value of the decimal digits [p, e) (callers checked is_dec), or
 * UINT64_MAX when it overflows. Bounded by e: the text is not NUL-terminated
 * (strtoll went on reading past the end of the mapped file). */
static uint64_t dec_value(const char *p, const char *e)
{
    uint64_t v = UINT64_MAX;
    return parse_dec(p, e, &v) == e ? v : UINT64_MAX;
}

/* "PID/TID", both decimal. */
static bool pid_tid(const char *p, const char *e, int64_t *pid, int64_t *tid)
{
    const char *sl = memchr(p, '/', (size_t)(e - p));
    if (!sl || !is_dec(p, sl) || !is_dec(sl + 1, e) || sl - p > 10 || e - sl > 11)
        return false;
    *pid = (int64_t)dec_value(p, sl);
    *tid = (int64_t)dec_value(sl + 1, e);
    return true;
}

static void stack_clear(sreader *r)
{
    r->stack.len = 0;
    r->names.len = 0;
}

static bool is_lbr_token(const char *p, const char *e)
{
    if (e - p < 3 || p[0] != '0' || (p[1] != 'x' && p[1] != 'X'))
        return false;
    return memchr(p, '/', (size_t)(e - p)) != NULL;
}

static const struct { const char *name; unsigned type; } branch_types[] = {
    {"COND", 1}, {"UNCOND", 2}, {"IND", 3}, {"CALL", 4}, {"IND_CALL", 5}, {"RET", 6},
    {"SYSCALL", 7}, {"SYSRET", 8}, {"COND_CALL", 9}, {"COND_RET", 10},
};

/* One entry "0xFROM/0xTO[/M|P|-[/X|-[/A|-[/cycles[/type...]]]]]". */
static int parse_entry(sreader *r, const char *p, const char *e, pk_branch *b)
{
    const char *q = parse_hex(p, e, &b->from);
    if (q)
        q = skip_dso(q, e);
    if (!q || q == e || *q != '/')
        return sfail(r, q ? q : p, "malformed branch entry: expected 0xFROM/0xTO");
    q++;
    if (!(e - q >= 2 && q[0] == '0' && (q[1] == 'x' || q[1] == 'X')))
        return sfail(r, q, "malformed branch entry: the target must start with 0x");
    const char *t = parse_hex(q, e, &b->to);
    if (t)
        t = skip_dso(t, e);
    if (!t || (t < e && *t != '/'))
        return sfail(r, t ? t : q, "malformed branch entry target");
    b->flags = 0;
    /* Flag fields vary across perf versions; read the ones we know. */
    for (int field = 0; t < e; field++) {
        const char *f = t + 1, *fe = f;
        while (fe < e && *fe != '/')
            fe++;
        size_t n = (size_t)(fe - f);
        if (field == 0 && n == 1 && *f == 'M')
            b->flags |= 1;
        else if (field == 0 && n == 1 && *f == 'P')
            b->flags |= 2;
        else if (field == 1 && n == 1 && *f == 'X')
            b->flags |= 4;
        else if (field == 2 && n == 1 && *f == 'A')
            b->flags |= 8;
        else if (field == 3 && n) {
            uint64_t cyc = 0;
            if (parse_dec(f, fe, &cyc) == fe)
                b->flags |= (cyc > 0xffff ? 0xffff : cyc) << 4;
        } else if (field == 4 && n) {
            for (size_t i = 0; i < sizeof branch_types / sizeof branch_types[0]; i++)
                if (strlen(branch_types[i].name) == n && !memcmp(branch_types[i].name, f, n))
                    b->flags |= (uint64_t)branch_types[i].type << 20;
        }
        t = fe;
    }
    return 0;
}

/* One sample from what was read; ip_from_stack: its ip is the leaf entry. */
/* An "event:" field: a word ending with ':' that is not perf's time
 * ("12345.678901:", digits and one dot). */
static void note_event(sreader *r, const char *q, const char *e)
{
    bool time = true;
    for (const char *c = q; c < e - 1; c++)
        time &= (*c >= '0' && *c <= '9') || *c == '.';
    if (!time) {
        r->event = q;
        r->event_len = (size_t)(e - 1 - q);
    }
}

/* The sample's event is one the callbacks want (no filter, or no event field). */
static bool event_wanted(sreader *r)
{
    if (!r->cb->nevents)
        return true;
    if (!r->event) {
        r->st->samples_no_event++;
        return true;
    }
    for (size_t i = 0; i < r->cb->nevents; i++)
        if (strlen(r->cb->events[i]) == r->event_len && !memcmp(r->cb->events[i], r->event, r->event_len))
            return true;
    r->st->samples_other_event++;
    return false;
}

static int emit_sample(sreader *r, uint64_t ip, bool ip_from_stack)
{
    if (!event_wanted(r)) {
        r->event = NULL;
        r->repeat = 0;
        r->pid = r->tid = -1;
        stack_clear(r);
        return 0;
    }
    r->event = NULL;
    if (r->stack.len) {
        pk_sframes_place(r->frames, r->pid, r->stack.data, r->names.data, r->stack.len, r->branches.data,
                         r->branches.len, r->st);
        if (ip_from_stack)
            ip = PK_VEC_AT(&r->stack, uint64_t, 0);
    }
    pk_sample s;
    memset(&s, 0, sizeof s);
    s.misc = PK_CPUMODE_USER;
    s.period = 1;
    s.ip = ip;
    s.pid = r->pid >= 0 ? (uint32_t)r->pid : 0;
    s.tid = r->tid >= 0 ? (uint32_t)r->tid : s.pid;
    s.callchain_nr = r->stack.len;
    s.callchain = r->stack.data;
    s.branch_nr = r->branches.len;
    s.branches = r->branches.data;
    s.file_offset = r->lineno;
    uint64_t n = r->repeat ? r->repeat : 1;
    if (r->cb->sample_weights) {
        s.weight = n;
        r->st->samples += n;
        if (r->cb->sample) {
            int rc = r->cb->sample(r->cb->ctx, &s);
            if (rc)
                return rc;
        }
    } else {
        for (uint64_t i = 0; i < n; i++) {
            r->st->samples++;
            if (r->cb->sample) {
                int rc = r->cb->sample(r->cb->ctx, &s);
                if (rc)
                    return rc;
            }
        }
    }
    r->repeat = 0;
    r->pid = r->tid = -1;
    stack_clear(r);
    return 0;
}

/* Address-only lines that turned out to be LBR-only samples with an empty
 * branch stack: one sample each. */
static int flush_ip_only(sreader *r)
{
    size_t n = r->stack.len;
    uint64_t *ips = malloc(n * sizeof *ips);
    if (!ips)
        return pk_err_set(r->err, "%s: out of memory", r->name);
    memcpy(ips, r->stack.data, n * sizeof *ips);
    size_t saved_branches = r->branches.len;
    int64_t pid = r->pid, tid = r->tid;
    stack_clear(r);
    r->branches.len = 0;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++)
        rc = emit_sample(r, ips[i], false);
    r->branches.len = saved_branches;
    r->pid = pid;
    r->tid = tid;
    free(ips);
    return rc;
}

static int lbr_line(sreader *r, const char *p, const char *end)
{
    uint64_t ip = 0;
    bool have_ip = false;
    int64_t pid = -1, tid = -1;
    r->branches.len = 0;
    /* prefix: perf's fields in its order: comm, pid[/tid], time:, event:
     * (padded or not), ip, sym, (dso). Two numbers are pid and ip (unless
     * the first cannot be a pid, or pid/tid came first: a symbol then,
     * which may look like hex); words (comm, sym) only beside a number or
     * a pid/time/event field. */
    const char *first_word = NULL, *q = p;
    bool anchored = false, after_sym = false;
    uint64_t nums = 0, num0 = 0;
    const char *num0_at = NULL, *num0_end = NULL;
    while (q < end) {
        const char *e = tok_end(q, end);
        if (is_lbr_token(q, e))
            break;
        uint64_t v;
        if (e[-1] == ':' || (pid < 0 && pid_tid(q, e, &pid, &tid))) {
            if (e[-1] == ':')
                note_event(r, q, e);
            anchored = true;
        } else if (!after_sym && nums < (pid < 0 ? 2u : 1u) && parse_hex(q, e, &v) == e &&
                   (!nums || (is_dec(num0_at, num0_end) && dec_value(num0_at, num0_end) <= PID_MAX))) {
            if (!nums) {
                num0 = v;
                num0_at = q;
                num0_end = e;
            } else {
                ip = v;
            }
            nums++;
        } else if (nums) {
            after_sym = true;  /* sym, sym+off, (dso) after the ip */
        } else if (!first_word) {
            first_word = q;    /* comm */
        }
        q = skip_sp(e, end);
    }
    if (first_word && !anchored && !nums)
        return sfail(r, first_word, "unexpected token before the branch entries (expected an event name or an ip)");
    if (nums == 2)
        pid = tid = (int64_t)dec_value(num0_at, num0_end);
    else if (nums == 1)
        ip = num0;
    have_ip = nums > 0;
    p = q;
    while (p < end) {
        const char *e = tok_end(p, end);
        if (!is_lbr_token(p, e))
            return sfail(r, p, "expected a branch entry 0xFROM/0xTO/...");
        pk_branch *b = pk_vec_push(&r->branches);
        if (!b)
            return pk_err_set(r->err, "%s: out of memory", r->name);
        if (parse_entry(r, p, e, b))
            return -1;
        p = skip_sp(e, end);
    }
    if (r->branches.len)
        r->saw_lbr_line = true;
    if (r->form == 0 && r->stack.len) {
        /* pending address-only lines: call stacks when this LBR line has no
         * ip of its own (perf's stack + LBR form), else LBR-only samples
         * whose branch stack was empty (perf then prints only the ip) */
        if (have_ip) {
            int rc = flush_ip_only(r);
            if (rc)
                return rc;
        }
    }
    if (r->form == 0)
        r->form = r->stack.len ? FORM_STACK : FORM_LBR;
    if (pid >= 0) {
        r->pid = pid;
        r->tid = tid;
    }
    return emit_sample(r, ip, !have_ip);
}

static int mmap_line(sreader *r, const char *p, const char *end, bool v2)
{
    pk_mmap_event m;
    memset(&m, 0, sizeof m);
    m.is_mmap2 = v2;
    m.misc = PK_CPUMODE_USER;
    uint64_t v;
    p = skip_sp(p, end);
    bool neg = p < end && *p == '-';
    const char *q = parse_dec(p + neg, end, &v);
    if (!q || q >= end || *q != '/')
        return sfail(r, p, "expected pid/tid in the mmap event");
    m.pid = neg ? (uint32_t)-(int64_t)v : (uint32_t)v;
    p = q + 1;
    neg = p < end && *p == '-';
    q = parse_dec(p + neg, end, &v);
    if (!q || q >= end || *q != ':')
        return sfail(r, p, "expected tid: in the mmap event");
    m.tid = neg ? (uint32_t)-(int64_t)v : (uint32_t)v;
    p = skip_sp(q + 1, end);
    if (p >= end || *p != '[')
        return sfail(r, p, "expected '[' in the mmap event");
    if (!(q = parse_hex(p + 1, end, &m.addr)) || q >= end || *q != '(')
        return sfail(r, p + 1, "expected 0xADDR( in the mmap event");
    p = q + 1;
    if (!(q = parse_hex(p, end, &m.len)) || q >= end || *q != ')')
        return sfail(r, p, "expected 0xLEN) in the mmap event");
    p = skip_sp(q + 1, end);
    if (p >= end || *p != '@')
        return sfail(r, p, "expected '@ PGOFF' in the mmap event");
    p = skip_sp(p + 1, end);
    if (!(q = parse_hex(p, end, &m.pgoff)))
        return sfail(r, p, "expected the page offset in the mmap event");
    p = skip_sp(q, end);
    if (v2 && p < end && *p == '<') {
        /* build-id flavour: <hex> */
        const char *h = p + 1;
        unsigned n = 0;
        while (h + 1 < end && hexval(h[0]) >= 0 && hexval(h[1]) >= 0 && n < 20) {
            m.build_id[n++] = (uint8_t)(hexval(h[0]) << 4 | hexval(h[1]));
            h += 2;
        }
        if (h >= end || *h != '>')
            return sfail(r, h, "malformed build-id in the mmap event");
        m.has_build_id = true;
        m.build_id_size = (uint8_t)n;
        m.misc |= PK_MISC_MMAP_BUILD_ID;
        p = skip_sp(h + 1, end);
    } else if (v2) {
        uint64_t maj, min;
        if (!(q = parse_hex(p, end, &maj)) || q >= end || *q != ':' || !(q = parse_hex(q + 1, end, &min)))
            return sfail(r, p, "expected MAJ:MIN in the mmap event");
        m.maj = (uint32_t)maj;
        m.min = (uint32_t)min;
        p = skip_sp(q, end);
        if (!(q = parse_dec(p, end, &m.ino)))
            return sfail(r, p, "expected the inode in the mmap event");
        p = skip_sp(q, end);
        if (!(q = parse_dec(p, end, &m.ino_generation)))
            return sfail(r, p, "expected the inode generation in the mmap event");
        p = skip_sp(q, end);
    }
    if (p + 1 >= end || p[0] != ']' || p[1] != ':')
        return sfail(r, p, "expected ']:' in the mmap event");
    p = skip_sp(p + 2, end);
    const char *pe = tok_end(p, end);
    if (pe == p)
        return sfail(r, p, "expected protection flags in the mmap event");
    for (const char *c = p; c < pe; c++) {
        if (*c == 'r') m.prot |= 1;
        else if (*c == 'w') m.prot |= 2;
        else if (*c == 'x') m.prot |= 4;
        else if (*c == 's') m.flags |= 1;
        else if (*c == 'p') m.flags |= 2;
        else if (*c != '-')
            return sfail(r, c, "unexpected protection flag '%c' in the mmap event", *c);
    }
    p = skip_sp(pe, end);
    size_t n = (size_t)(end - p);
    if (n == 0)
        return sfail(r, p, "missing file name in the mmap event");
    if (n >= sizeof r->name_buf)
        return sfail(r, p, "file name too long in the mmap event");
    memcpy(r->name_buf, p, n);
    r->name_buf[n] = 0;
    m.filename = r->name_buf;
    r->st->mmaps++;
    if (pk_sframes_mmap(r->frames, &m))
        return pk_err_set(r->err, "%s: out of memory", r->name);
    return r->cb->mmap ? r->cb->mmap(r->cb->ctx, &m) : 0;
}

/* A sample header of perf's stack + LBR output: the fields perf prints
 * before the call chain (comm, pid[/tid], time:, event:) alone on a line
 * above the tab-indented chain, with perf's trailing space when no time or
 * event field ends it. Sets the sample's pid when it is there. */
static bool header_line(sreader *r, const char *line, const char *p, const char *end, bool trailing_ws)
{
    if (r->stack.len || *line == '\t' || !r->next || r->next >= r->text_end || *r->next != '\t')
        return false;
    int64_t pid = -1, tid = -1;
    bool anchored = false;
    const char *dec = NULL, *dec_end = NULL;
    for (const char *q = p; q < end;) {
        const char *e = tok_end(q, end);
        if (e[-1] == ':')
            note_event(r, q, e);
        if (e[-1] == ':' || (pid < 0 && pid_tid(q, e, &pid, &tid)))
            anchored = true;
        else if (!dec && is_dec(q, e) && e - q <= 10 && dec_value(q, e) <= PID_MAX) {
            dec = q;
            dec_end = e;
        }
        q = skip_sp(e, end);
    }
    if (!anchored && !trailing_ws)
        return false;
    if (pid < 0 && dec)
        pid = tid = (int64_t)dec_value(dec, dec_end);
    r->pid = pid;
    r->tid = tid;
    return true;
}

/* "(dso)" at the end of a call-chain line, after a space: the file's id. */
static int frame_file(sreader *r, const char *after_addr, const char *end, uint32_t *name)
{
    *name = 0;
    if (end - after_addr < 3 || end[-1] != ')')
        return 0;
    int depth = 0;
    const char *o = end - 1;
    for (; o > after_addr; o--) {
        if (*o == ')')
            depth++;
        else if (*o == '(' && !--depth)
            break;
    }
    if (o <= after_addr || *o != '(' || !is_space(o[-1]) || end - 1 == o + 1)
        return 0;
    if (!(*name = pk_sframes_name(r->frames, o + 1, (size_t)(end - 1 - (o + 1)))))
        return pk_err_set(r->err, "%s: out of memory", r->name);
    return 0;
}

static int one_line(sreader *r, const char *line, const char *end)
{
    while (end > line && end[-1] == '\r')
        end--;
    const char *text_end = end;
    while (end > line && (end[-1] == '\r' || is_space(end[-1])))
        end--;
    bool trailing_ws = end < text_end;
    const char *p = skip_sp(line, end);
    if (r->skip_block) {
        /* the rest of a sample a bad line broke: its blank line or its
         * LBR line ends it */
        bool lbr = false;
        for (const char *t = p; t < end && !lbr;) {
            const char *te = tok_end(t, end);
            lbr = is_lbr_token(t, te);
            t = skip_sp(te, end);
        }
        if (p == end || lbr)
            r->skip_block = false;
        return 0;
    }
    if (p == end) {
        if (r->stack.len) {
            /* a stack block whose sample had an empty branch stack */
            if (r->form == FORM_LBR)
                return flush_ip_only(r);
            r->form = FORM_STACK;
            r->branches.len = 0;
            return emit_sample(r, 0, true);
        }
        return 0;
    }
    const char *rec = memmem(p, (size_t)(end - p), "PERF_RECORD_", 12);
    if (rec) {
        if (r->stack.len)
            return sfail(r, rec, "event line inside the call stack started at line %llu",
                         (unsigned long long)r->stack_line);
        const char *k = rec + 12;
        if (end - k >= 6 && !memcmp(k, "MMAP2 ", 6))
            return mmap_line(r, k + 6, end, true);
        if (end - k >= 5 && !memcmp(k, "MMAP ", 5))
            return mmap_line(r, k + 5, end, false);
        return 0; /* COMM, FORK, EXIT...: not needed */
    }
    const char *e = tok_end(p, end);
    /* a bare decimal number at column 1: repeat count of the next sample */
    if (p == line && e == end && !r->stack.len && !trailing_ws) {
        uint64_t n = 0;
        if (parse_dec(p, e, &n) == e) {
            if (n == 0 || n > 1000000000u)
                return sfail(r, p, "repeat count %llu out of range (1 to 10^9)", (unsigned long long)n);
            r->repeat = n;
            return 0;
        }
    }
    /* an LBR line has at least one 0xFROM/0xTO token */
    for (const char *t = p; t < end;) {
        const char *te = tok_end(t, end);
        if (is_lbr_token(t, te))
            return lbr_line(r, p, end);
        t = skip_sp(te, end);
    }
    if (header_line(r, line, p, end, trailing_ws))
        return 0;
    /* event name + ip with an empty branch stack */
    if (e[-1] == ':')
        return lbr_line(r, p, end);
    uint64_t addr;
    if (parse_hex(p, e, &addr) != e)
        return sfail(r, p, "expected a call-stack address, an LBR line (0xFROM/0xTO/...) or a PERF_RECORD_MMAP2 event");
    if (!r->stack.len)
        r->stack_line = r->lineno;
    uint32_t name;
    if (frame_file(r, e, end, &name))
        return -1;
    uint64_t *slot = pk_vec_push(&r->stack);
    uint32_t *nslot = slot ? pk_vec_push(&r->names) : NULL;
    if (!nslot)
        return pk_err_set(r->err, "%s: out of memory", r->name);
    *slot = addr;
    *nslot = name;
    if (r->form == FORM_LBR)
        return flush_ip_only(r);
    return 0; /* the symbol between address and file is not needed */
}

/* A line sfail() refused: counted and skipped, with the sample it was
 * part of (its stack so far, and the rest of its block). */
static int skip_line(sreader *r)
{
    r->line_bad = false;
    if (!r->st->lines_skipped++) {
        /* the message without the file name the reader prefixed */
        const char *m = r->err->msg, *at = strstr(m, ": line ");
        snprintf(r->st->first_skipped, sizeof r->st->first_skipped, "%.250s", at ? at + 2 : m);
    }
    if (r->stack.len) {
        r->st->samples_skipped++;
        r->skip_block = true;
    }
    stack_clear(r);
    r->branches.len = 0;
    r->repeat = 0;
    r->pid = r->tid = -1;
    r->err->msg[0] = 0;
    return 0;
}

static int script_read(const uint8_t *data, size_t size, const char *path, const pk_perf_callbacks *cb,
                       pk_script_stats *stats, pk_err *err)
{
    static const pk_perf_callbacks none;
    pk_script_stats local;
    sreader *r = calloc(1, sizeof *r);
    if (!r)
        return pk_err_set(err, "%s: out of memory", path);
    r->name = path;
    r->cb = cb ? cb : &none;
    r->st = stats ? stats : &local;
    r->err = err;
    memset(r->st, 0, sizeof *r->st);
    r->pid = r->tid = -1;
    pk_vec_init(&r->stack, sizeof(uint64_t));
    pk_vec_init(&r->names, sizeof(uint32_t));
    pk_vec_init(&r->branches, sizeof(pk_branch));
    if (!(r->frames = pk_sframes_new())) {
        free(r);
        return pk_err_set(err, "%s: out of memory", path);
    }
    int rc = 0;
    {
        const char *p = (const char *)data, *end = p + size;
        r->text_end = end;
        while (p < end && !rc) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            const char *le = nl ? nl : end;
            r->lineno++;
            r->st->lines++;
            r->line = p;
            r->next = nl ? nl + 1 : NULL;
            if (memchr(p, 0, (size_t)(le - p)))
                rc = sfail(r, (const char *)memchr(p, 0, (size_t)(le - p)), "NUL byte: this is not perf script text");
            else
                rc = one_line(r, p, le);
            if (rc && r->line_bad)
                rc = skip_line(r);
            p = nl ? nl + 1 : end;
        }
        if (!rc && r->stack.len) {
            if (r->form == FORM_STACK) {
                r->branches.len = 0;
                rc = emit_sample(r, 0, true);
            } else {
                rc = flush_ip_only(r);
            }
        }
        char skipped[400] = "";
        if (r->st->lines_skipped)
            snprintf(skipped, sizeof skipped, " (%llu lines skipped that are not perf script text; the first: %s)",
                     (unsigned long long)r->st->lines_skipped, r->st->first_skipped);
        if (!rc && !r->saw_lbr_line)
            rc = pk_err_set(err, "%s: no LBR line (0xFROM/0xTO/...) found: was the profile recorded with branch "
                            "stacks?%s", path, skipped);
        if (!rc && r->st->samples == 0)
            rc = pk_err_set(err, "%s: no samples: no LBR line (0xFROM/0xTO/...) found; was the profile recorded "
                            "with branch stacks?%s", path, skipped);
    }
    pk_vec_free(&r->stack);
    pk_vec_free(&r->names);
    pk_vec_free(&r->branches);
    pk_sframes_free(r->frames);
    free(r);
    return rc;
}

int pk_perf_script_read(const char *path, const pk_perf_callbacks *cb, pk_script_stats *stats, pk_err *err)
{
    pk_mapped_file f;
    if (stats)
        memset(stats, 0, sizeof *stats);
    if (pk_file_map(&f, strcmp(path, "-") ? path : "/dev/stdin", err))
        return -1;
    int rc = script_read(f.data, f.size, path, cb, stats, err);
    pk_file_unmap(&f);
    return rc;
}

int pk_perf_script_read_mem(const void *data, size_t size, const char *name, const pk_perf_callbacks *cb,
                            pk_script_stats *stats, pk_err *err)
{
    return script_read(data, size, name, cb, stats, err);
}

int pk_script_stats_warning(const pk_script_stats *st, char *buf, size_t cap)
{
    int n = 0;
    buf[0] = 0;
    if (st->frames_guessed)
        n += snprintf(buf, cap, "%llu of %llu call-chain addresses are relative to a file the text does not "
                      "name (perf 6.1's `perf script -F ip,brstack`) and fit several mapped files: placed in "
                      "the file the sample's branches ran in (%llu), else the neighbouring frame's; "
                      "`perf script -F ip,dso,brstack --show-mmap-events` names each frame's file",
                      (unsigned long long)st->frames_guessed, (unsigned long long)st->frames,
                      (unsigned long long)st->frames_guessed_lbr);
    if (st->frames_unplaced && (size_t)n < cap)
        n += snprintf(buf + n, cap - (size_t)n, "%s%llu of %llu call-chain addresses are relative to a file "
                      "without an mmap line and could not be placed (they count as outside the binary and cut "
                      "their stacks): print the text with `perf script --show-mmap-events`",
                      n ? "; " : "", (unsigned long long)st->frames_unplaced, (unsigned long long)st->frames);
    if (st->lines_skipped && (size_t)n < cap)
        n += snprintf(buf + n, cap - (size_t)n, "%s%llu lines skipped that are not perf script text (%llu samples "
                      "with them); the first: %s", n ? "; " : "", (unsigned long long)st->lines_skipped,
                      (unsigned long long)st->samples_skipped, st->first_skipped);
    return pk_snprintf_len(n, cap);
}
