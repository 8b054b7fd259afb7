/* dwarf_line.c — .debug_line versions 2–5: header (v5 entry formats, MD5,
 * line_strp), the line-number program into compact rows, sequences sorted
 * as LLVM sorts them, row lookup and file paths as llvm-symbolizer prints. */
#include "binary/dwarf_internal.h"

#include <stdlib.h>

enum {
    LNS_copy = 1, LNS_advance_pc, LNS_advance_line, LNS_set_file, LNS_set_column, LNS_negate_stmt,
    LNS_set_basic_block, LNS_const_add_pc, LNS_fixed_advance_pc, LNS_set_prologue_end,
    LNS_set_epilogue_begin, LNS_set_isa,
    LNE_end_sequence = 1, LNE_set_address, LNE_define_file, LNE_set_discriminator,
    LNCT_path = 1, LNCT_directory_index = 2,
};

void dw_line_free(dw_line_table *lt)
{
    free(lt->dirs);
    free(lt->files);
    free(lt->paths);
    free(lt->rows);
    free(lt->seqs);
    memset(lt, 0, sizeof *lt);
}

/* v5 directory / file entry lists. */
static int entry_list(pk_symbolizer *s, const dw_cu *ucu, pk_cursor *c, int is_files, dw_line_table *lt,
                      pk_err *err)
{
    uint8_t nfmt = pk_cursor_u8(c);
    uint64_t fmt[2 * 32];
    if (nfmt > 32)
        return dw_bad(s, err, &s->line, (uint64_t)(c->pos - s->line.data), "too many entry formats (%u)", nfmt);
    for (unsigned i = 0; i < nfmt; i++) {
        fmt[2 * i] = dw_uleb(c);
        fmt[2 * i + 1] = dw_uleb(c);
    }
    uint64_t count = dw_uleb(c);
    if (c->bad)
        return dw_bad(s, err, &s->line, (uint64_t)(c->pos - s->line.data), "truncated line table header");
    if (count > pk_cursor_left(c))
        return dw_bad(s, err, &s->line, (uint64_t)(c->pos - s->line.data), "entry count %llu too large",
                      (unsigned long long)count);
    if (is_files) {
        lt->files = calloc(count ? count : 1, sizeof *lt->files);
        lt->nfiles = count;
    } else {
        lt->dirs = calloc(count ? count : 1, sizeof *lt->dirs);
        lt->ndirs = count;
    }
    if (!lt->files && !lt->dirs)
        return pk_err_set(err, "%s: out of memory", s->path);
    if ((is_files && !lt->files) || (!is_files && !lt->dirs))
        return pk_err_set(err, "%s: out of memory", s->path);
    for (uint64_t k = 0; k < count; k++) {
        const char *name = NULL;
        uint64_t dir = 0;
        for (unsigned i = 0; i < nfmt; i++) {
            dw_val v;
            if (dw_read_form(s, ucu, &s->line, c, (uint16_t)fmt[2 * i + 1], 0, &v, err) < 0)
                return -1;
            if (fmt[2 * i] == LNCT_path)
                name = dw_val_string(s, ucu, &v);
            else if (fmt[2 * i] == LNCT_directory_index)
                dir = v.u;
        }
        if (is_files) {
            lt->files[k].name = name;
            lt->files[k].dir = dir;
        } else {
            lt->dirs[k] = name;
        }
    }
    return 0;
}

static int cmp_seq(const void *a, const void *b)
{
    const dw_seq *x = a, *y = b;
    if (x->high != y->high)
        return x->high < y->high ? -1 : 1;
    return x->first < y->first ? -1 : x->first > y->first;
}

static int parse(pk_symbolizer *s, dw_cu *cu, dw_line_table *lt, pk_err *err)
{
    uint64_t off = cu->stmt_list;
    if (off >= s->line.size)
        return dw_bad(s, err, &s->line, off, "DW_AT_stmt_list of unit %llu points beyond the section",
                      (unsigned long long)cu->off);
    pk_cursor c;
    pk_cursor_init(&c, s->line.data + off, s->line.size - off);
    unsigned offsz;
    uint64_t len = dw_initial_length(&c, &offsz);
    if (c.bad || len > pk_cursor_left(&c))
        return dw_bad(s, err, &s->line, off, "line table length %llu runs past the section",
                      (unsigned long long)len);
    c.end = c.pos + len;
    uint64_t unit_end = (uint64_t)(c.end - s->line.data);
    lt->version = pk_cursor_u16(&c);
    if (lt->version < 2 || lt->version > 5)
        return dw_bad(s, err, &s->line, off, "unsupported line table version %u", lt->version);
    dw_cu ucu = *cu; /* the unit's string bases, the table's own sizes */
    ucu.offset_size = (uint8_t)offsz;
    ucu.version = (uint8_t)lt->version;
    if (lt->version >= 5) {
        ucu.addr_size = pk_cursor_u8(&c);
        pk_cursor_u8(&c); /* segment selector size */
    }
    uint64_t hdr_len = dw_uN(&c, offsz);
    if (c.bad || hdr_len > pk_cursor_left(&c))
        return dw_bad(s, err, &s->line, off, "line table header length runs past the table");
    const uint8_t *prog = c.pos + hdr_len;
    uint8_t min_inst = pk_cursor_u8(&c);
    if (lt->version >= 4)
        pk_cursor_u8(&c); /* maximum_operations_per_instruction: 1 on x86 */
    uint8_t default_stmt = pk_cursor_u8(&c);
    (void)default_stmt;
    int8_t line_base = (int8_t)pk_cursor_u8(&c);
    uint8_t line_range = pk_cursor_u8(&c);
    uint8_t opcode_base = pk_cursor_u8(&c);
    const uint8_t *std_len = pk_cursor_bytes(&c, opcode_base ? opcode_base - 1u : 0);
    if (c.bad)
        return dw_bad(s, err, &s->line, off, "truncated line table header");
    if (lt->version >= 5) {
        if (entry_list(s, &ucu, &c, 0, lt, err) < 0 || entry_list(s, &ucu, &c, 1, lt, err) < 0)
            return -1;
    } else {
        pk_vec dirs, files;
        pk_vec_init(&dirs, sizeof(const char *));
        pk_vec_init(&files, sizeof(dw_file));
        for (;;) {
            const uint8_t *z = c.bad ? NULL : memchr(c.pos, 0, pk_cursor_left(&c));
            if (!z) { c.bad = true; break; }
            const char *d = (const char *)c.pos;
            c.pos = z + 1;
            if (!*d)
                break;
            const char **slot = pk_vec_push(&dirs);
            if (!slot) { c.bad = true; break; }
            *slot = d;
        }
        for (;;) {
            const uint8_t *z = c.bad ? NULL : memchr(c.pos, 0, pk_cursor_left(&c));
            if (!z) { c.bad = true; break; }
            const char *n = (const char *)c.pos;
            c.pos = z + 1;
            if (!*n)
                break;
            dw_file *f = pk_vec_push(&files);
            if (!f) { c.bad = true; break; }
            f->name = n;
            f->dir = dw_uleb(&c);
            dw_uleb(&c);
            dw_uleb(&c);
        }
        lt->dirs = dirs.data;
        lt->ndirs = dirs.len;
        lt->files = files.data;
        lt->nfiles = files.len;
        if (c.bad)
            return dw_bad(s, err, &s->line, (uint64_t)(c.pos - s->line.data), "truncated line table file list");
    }
    /* The program starts where header_length says, whatever the header held. */
    c.pos = prog;
    pk_vec rows, seqs;
    pk_vec_init(&rows, sizeof(dw_row));
    pk_vec_init(&seqs, sizeof(dw_seq));
    dw_row r = {0};
    r.file = 1;
    r.line = 1;
    int seq_empty = 1;
    dw_seq seq = {0};
    const char *what = NULL;
    while (!c.bad && c.pos < c.end) {
        const uint8_t *op_at = c.pos;
        uint8_t op = pk_cursor_u8(&c);
        int emit = 0;
        if (op >= opcode_base) {
            if (line_range == 0) { what = "line_range is 0"; break; }
            unsigned adj = op - opcode_base;
            r.addr += (uint64_t)(adj / line_range) * min_inst;
            r.line += (uint32_t)(int32_t)(line_base + (int)(adj % line_range));
            emit = 1;
        } else if (op == 0) {
            uint64_t elen = dw_uleb(&c);
            if (c.bad || elen > pk_cursor_left(&c)) { c.bad = true; break; }
            const uint8_t *next = c.pos + elen;
            if (elen == 0) { continue; }
            uint8_t sub = pk_cursor_u8(&c);
            switch (sub) {
            case LNE_end_sequence:
                r.end_seq = 1;
                emit = 1;
                break;
            case LNE_set_address:
                if (elen - 1 == 1 || elen - 1 == 2 || elen - 1 == 4 || elen - 1 == 8)
                    r.addr = dw_uN(&c, (unsigned)(elen - 1));
                break;
            case LNE_define_file: {
                const uint8_t *z = memchr(c.pos, 0, (size_t)(next - c.pos));
                if (z && lt->version < 5) {
                    dw_file *nf = pk_xrealloc_array(lt->files, lt->nfiles + 1, sizeof *lt->files);
                    if (nf) {
                        lt->files = nf;
                        nf[lt->nfiles].name = (const char *)c.pos;
                        c.pos = z + 1;
                        nf[lt->nfiles].dir = dw_uleb(&c);
                        lt->nfiles++;
                    }
                }
                break;
            }
            case LNE_set_discriminator:
                r.discr = (uint32_t)dw_uleb(&c);
                break;
            default:
                break;
            }
            c.bad = false;
            c.pos = next;
        } else {
            switch (op) {
            case LNS_copy: emit = 1; break;
            case LNS_advance_pc: r.addr += dw_uleb(&c) * min_inst; break;
            case LNS_advance_line: r.line += (uint32_t)dw_sleb(&c); break;
            case LNS_set_file: r.file = (uint16_t)dw_uleb(&c); break;
            case LNS_set_column: r.column = (uint16_t)dw_uleb(&c); break;
            case LNS_negate_stmt: case LNS_set_basic_block: case LNS_set_prologue_end:
            case LNS_set_epilogue_begin: break;
            case LNS_const_add_pc:
                if (line_range == 0) { what = "line_range is 0"; break; }
                r.addr += (uint64_t)((255 - opcode_base) / line_range) * min_inst;
                break;
            case LNS_fixed_advance_pc: r.addr += pk_cursor_u16(&c); break;
            case LNS_set_isa: dw_uleb(&c); break;
            default:
                for (unsigned k = 0; k < std_len[op - 1]; k++)
                    dw_uleb(&c);
                break;
            }
            if (what)
                break;
        }
        if (c.bad) {
            c.pos = op_at;
            break;
        }
        if (emit) {
            uint32_t idx = (uint32_t)rows.len;
            dw_row *slot = pk_vec_push(&rows);
            if (!slot) { what = "out of memory"; break; }
            *slot = r;
            if (seq_empty) {
                seq_empty = 0;
                seq.low = r.addr;
                seq.first = idx;
            }
            if (r.end_seq) {
                seq.high = r.addr;
                seq.last = idx + 1;
                if (seq.low < seq.high && seq.first < seq.last) {
                    dw_seq *sq = pk_vec_push(&seqs);
                    if (!sq) { what = "out of memory"; break; }
                    *sq = seq;
                }
                seq_empty = 1;
                memset(&r, 0, sizeof r);
                r.file = 1;
                r.line = 1;
            }
            r.discr = 0;
        }
    }
    if (c.bad || what) {
        pk_vec_free(&rows);
        pk_vec_free(&seqs);
        return dw_bad(s, err, &s->line, (uint64_t)(c.pos - s->line.data), "%s in line program ending at %llu",
                      what ? what : "truncated opcode", (unsigned long long)unit_end);
    }
    pk_vec_shrink(&rows); /* kept for the binary's lifetime: a big CU has 100k+ rows */
    lt->rows = rows.data;
    lt->nrows = rows.len;
    lt->seqs = seqs.data;
    lt->nseqs = seqs.len;
    if (lt->nseqs)
        qsort(lt->seqs, lt->nseqs, sizeof *lt->seqs, cmp_seq);
    size_t npaths = lt->nfiles + 1;
    lt->paths = calloc(npaths, sizeof *lt->paths);
    if (!lt->paths)
        return pk_err_set(err, "%s: out of memory", s->path);
    return 0;
}

int dw_line_parse(pk_symbolizer *s, dw_cu *cu, pk_err *err)
{
    dw_line_table *lt = &cu->line;
    if (lt->parsed)
        return lt->failed ? -1 : 0;
    lt->parsed = 1;
    lt->failed = 1;
    if (!cu->has_stmt_list) {
        lt->failed = 0;
        return 0;
    }
    if (parse(s, cu, lt, err) < 0) {
        dw_line_free(lt);
        lt->parsed = 1;
        lt->failed = 1;
        return -1;
    }
    lt->failed = 0;
    return 0;
}

ssize_t dw_line_lookup(const dw_line_table *lt, uint64_t addr)
{
    /* First sequence whose high > addr (LLVM's upper_bound by HighPC). */
    size_t lo = 0, hi = lt->nseqs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (lt->seqs[mid].high <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == lt->nseqs)
        return -1;
    const dw_seq *sq = &lt->seqs[lo];
    if (!(sq->low <= addr && addr < sq->high))
        return -1;
    /* upper_bound over rows [first+1, last-1) by address, minus one. */
    size_t a = sq->first + 1, b = sq->last - 1;
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (lt->rows[mid].addr <= addr)
            a = mid + 1;
        else
            b = mid;
    }
    return (ssize_t)a - 1;
}

static int is_sep(char ch) { return ch == '/'; }

/* llvm::sys::path::append for POSIX paths. */
static void path_append(char *buf, size_t cap, size_t *len, const char *comp)
{
    if (!comp || !*comp)
        return;
    if (*len > 0 && is_sep(buf[*len - 1])) {
        while (is_sep(*comp))
            comp++;
    } else if (*len > 0 && !is_sep(comp[0])) {
        if (*len + 1 < cap)
            buf[(*len)++] = '/';
    }
    size_t n = strlen(comp);
    if (*len + n >= cap)
        n = cap - 1 - *len;
    memcpy(buf + *len, comp, n);
    *len += n;
    buf[*len] = 0;
}

const char *dw_line_file_path(pk_symbolizer *s, dw_cu *cu, uint64_t idx)
{
    dw_line_table *lt = &cu->line;
    if (!lt->parsed || lt->failed || !lt->files)
        return NULL;
    size_t fi;
    if (lt->version >= 5) {
        if (idx >= lt->nfiles)
            return NULL;
        fi = (size_t)idx;
    } else {
        if (idx < 1 || idx > lt->nfiles)
            return NULL;
        fi = (size_t)idx - 1;
    }
    if (lt->paths && fi < lt->nfiles + 1 && lt->paths[fi])
        return lt->paths[fi];
    const dw_file *f = &lt->files[fi];
    if (!f->name)
        return NULL;
    const char *result;
    char buf[4096];
    if (f->name[0] == '/') {
        result = f->name;
    } else {
        const char *inc = NULL;
        if (lt->version >= 5) {
            if (f->dir < lt->ndirs)
                inc = lt->dirs[f->dir];
        } else if (f->dir > 0 && f->dir <= lt->ndirs) {
            inc = lt->dirs[f->dir - 1];
        }
        size_t len = 0;
        buf[0] = 0;
        if ((lt->version < 5 || f->dir != 0) && cu->comp_dir && *cu->comp_dir && !(inc && inc[0] == '/'))
            path_append(buf, sizeof buf, &len, cu->comp_dir);
        path_append(buf, sizeof buf, &len, inc);
        path_append(buf, sizeof buf, &len, f->name);
        result = buf;
    }
    char *p = dw_arena_strdup(s, result, strlen(result));
    if (p && lt->paths)
        lt->paths[fi] = p;
    return p;
}
