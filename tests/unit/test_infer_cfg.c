/* The CFG builder on real code: tests/programs/infer_switch.c (dense
 * switches, loops, calls, recursion, a noreturn call) built with clang-19
 * and gcc-12 at -O2, PIE and not, with and without CET. Oracles:
 *   - llvm-objdump-19 -d: every instruction of every function is in exactly
 *     one block, blocks start at every branch target and after every
 *     control transfer, and end only at a control transfer or before such
 *     a start; the edges of each block are what its last instruction does;
 *   - the emulator's exact counts (`pgokit record --emulate --exact-counts`):
 *     every executed fall-through range lies on block boundaries, every
 *     taken branch inside a function is an edge of the CFG, the switches'
 *     indirect jumps went to exactly the targets read from their tables,
 *     the true counts conserve flow on the CFG, exact weights give them
 *     back, and weights from simulated IP sampling are improved by MCF. */
#include "infer_random.h"
#include "infer_util.h"
#include "record/record.h"

#include <ctype.h>
#include <unistd.h>

typedef struct od_insn {
    uint64_t addr, target;   /* target: direct branches and calls */
    char mn[16];
    bool ind;                /* indirect (operand starts with '*') */
} od_insn;

/* Every instruction llvm-objdump-19 -d shows, in address order. */
static od_insn *objdump(const char *bin, size_t *n)
{
    char cmd[1024];
    *n = 0;
    snprintf(cmd, sizeof cmd, "llvm-objdump-19 -d --no-show-raw-insn '%s'", bin);
    FILE *p = popen(cmd, "r");
    if (!p)
        return NULL;
    size_t cap = 1024, k = 0;
    od_insn *v = malloc(cap * sizeof *v);
    char line[4096];
    while (fgets(line, sizeof line, p)) {
        char *s = line, *e;
        while (*s == ' ')
            s++;
        char *colon = strchr(s, ':');
        if (!colon || colon == s || !isxdigit((unsigned char)*s) || (colon[1] != '\t' && colon[1] != ' '))
            continue;
        uint64_t addr = strtoull(s, &e, 16);
        if (e != colon)
            continue;
        char *t = colon + 1, mn[64] = "";
        for (;;) {   /* prefixes printed as words */
            while (*t == ' ' || *t == '\t')
                t++;
            if (sscanf(t, "%63s", mn) != 1)
                break;
            t += strlen(mn);
            if (strcmp(mn, "notrack") && strcmp(mn, "bnd") && strcmp(mn, "rep") && strcmp(mn, "lock") &&
                strcmp(mn, "data16") && strcmp(mn, "cs") && strcmp(mn, "ds"))
                break;
        }
        while (*t == ' ' || *t == '\t')
            t++;
        if (k == cap)
            v = realloc(v, (cap *= 2) * sizeof *v);
        od_insn *o = &v[k++];
        memset(o, 0, sizeof *o);
        o->addr = addr;
        snprintf(o->mn, sizeof o->mn, "%s", mn);
        o->ind = *t == '*';
        if (!o->ind && (mn[0] == 'j' || !strncmp(mn, "call", 4) || !strncmp(mn, "loop", 4)))
            o->target = strtoull(t, NULL, 16);
    }
    pclose(p);
    *n = k;
    return v;
}

enum { OD_OTHER, OD_COND, OD_JMP, OD_IJMP, OD_CALL, OD_RET, OD_STOP };

static int od_kind(const od_insn *o)
{
    const char *m = o->mn;
    if (!strncmp(m, "jmp", 3))
        return o->ind ? OD_IJMP : OD_JMP;
    if (m[0] == 'j' || !strncmp(m, "loop", 4))
        return OD_COND;
    if (!strncmp(m, "call", 4))
        return OD_CALL;
    if (!strncmp(m, "ret", 3))
        return OD_RET;
    if (!strcmp(m, "ud2") || !strcmp(m, "hlt") || !strcmp(m, "int3"))
        return OD_STOP;
    return OD_OTHER;
}

static size_t od_find(const od_insn *v, size_t n, uint64_t addr)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].addr < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The CFG of one function against objdump's listing; returns the number
 * of disagreements (each printed). */
static int check_against_objdump(const char *fname, const pk_cfg *c, const od_insn *od, size_t nod, uint64_t lo,
                                 uint64_t hi)
{
    int bad = 0;
#define BAD(...) do { if (bad++ < 8) { fprintf(stderr, "  %s: ", fname); fprintf(stderr, __VA_ARGS__); \
        fputc('\n', stderr); } } while (0)
    size_t first = od_find(od, nod, lo), last = od_find(od, nod, hi);
    uint32_t total = 0;
    for (size_t b = 0; b < c->nblocks; b++)
        total += c->blocks[b].ninsns;
    if (total != last - first)
        BAD("%u instructions in blocks, objdump has %zu", total, last - first);
    uint8_t *starts = calloc(last - first + 1, 1);
    for (size_t i = first; i < last; i++) {
        const od_insn *o = &od[i];
        int k = od_kind(o);
        /* after a control transfer, and at a direct target inside: a block starts */
        if (k != OD_OTHER && i + 1 < last)
            starts[i + 1 - first] = 1;
        if ((k == OD_COND || k == OD_JMP) && o->target >= lo && o->target < hi) {
            size_t t = od_find(od, nod, o->target);
            if (t < last && od[t].addr == o->target)
                starts[t - first] = 1;
        }
    }
    for (size_t i = first; i < last; i++) {
        uint32_t b = pk_cfg_block_at(c, od[i].addr);
        if (b == UINT32_MAX) {
            BAD("0x%llx (%s) in no block", (unsigned long long)od[i].addr, od[i].mn);
            continue;
        }
        if (starts[i - first] && c->blocks[b].begin != od[i].addr)
            BAD("0x%llx starts no block", (unsigned long long)od[i].addr);
    }
    for (uint32_t b = 0; b < c->nblocks; b++) {
        const pk_cfg_block *bl = &c->blocks[b];
        size_t i = od_find(od, nod, bl->begin), j = od_find(od, nod, bl->last);
        if (i >= last || od[i].addr != bl->begin || j >= last || od[j].addr != bl->last ||
            (j + 1 < last ? od[j + 1].addr : hi) != bl->end) {
            BAD("block 0x%llx-0x%llx not on objdump's boundaries", (unsigned long long)bl->begin,
                (unsigned long long)bl->end);
            continue;
        }
        /* a block ends at a control transfer, or before a start */
        int k = od_kind(&od[j]);
        bool next_start = j + 1 >= last || starts[j + 1 - first];
        bool table_target = false;
        for (size_t e = 0; e < c->nedges; e++)
            table_target |= c->edges[e].kind == PK_CFG_TABLE && c->edges[e].to == b + 1;
        if (k == OD_OTHER && !next_start && !table_target)
            BAD("block 0x%llx ends at 0x%llx for no reason", (unsigned long long)bl->begin,
                (unsigned long long)bl->last);
        /* its edges: what the last instruction does */
        uint32_t next = b + 1 < c->nblocks && c->blocks[b + 1].begin == bl->end ? b + 1 : UINT32_MAX;
        uint32_t tgt = od[j].target >= lo && od[j].target < hi ? pk_cfg_block_at(c, od[j].target) : UINT32_MAX;
        bool has_fall = false, has_jump = false, has_after = false;
        for (uint32_t s = 0; s < bl->nsucc; s++) {
            const pk_cfg_edge *e = &c->edges[bl->first_succ + s];
            has_fall |= e->kind == PK_CFG_FALL && e->to == next;
            has_jump |= e->kind == PK_CFG_JUMP && e->to == tgt;
            has_after |= e->kind == PK_CFG_AFTER_CALL && e->to == next;
        }
        switch (k) {
        case OD_COND:
            if (next != UINT32_MAX && !has_fall)
                BAD("jcc at 0x%llx: no fall-through edge", (unsigned long long)bl->last);
            if (tgt != UINT32_MAX && tgt != next && !has_jump)
                BAD("jcc at 0x%llx: no edge to 0x%llx", (unsigned long long)bl->last,
                    (unsigned long long)od[j].target);
            if (tgt == UINT32_MAX && !(bl->flags & PK_CFG_EXIT))
                BAD("jcc at 0x%llx leaves the function but is no exit", (unsigned long long)bl->last);
            break;
        case OD_JMP:
            if (tgt != UINT32_MAX ? !has_jump || bl->nsucc != 1 : !(bl->flags & PK_CFG_EXIT))
                BAD("jmp at 0x%llx: wrong edges", (unsigned long long)bl->last);
            break;
        case OD_CALL:
            /* a call to a noreturn function (objdump names it) ends the flow */
            if (strstr(od[j].mn, "call") && (bl->flags & PK_CFG_STOP) == 0 && next != UINT32_MAX && !has_after)
                BAD("call at 0x%llx: no after-call edge", (unsigned long long)bl->last);
            break;
        case OD_RET:
        case OD_STOP:
            if (!(bl->flags & PK_CFG_EXIT) || bl->nsucc != 0)
                BAD("%s at 0x%llx is no exit", od[j].mn, (unsigned long long)bl->last);
            break;
        default:
            break;
        }
    }
    free(starts);
    return bad;
#undef BAD
}

/* ---- exact counts ---- */

static const char *pgokit_path(void)
{
    static char path[1024];
    const char *p = getenv("PGOKIT");
    if (p)
        return p;
    const char *b = getenv("PK_BUILD");
    snprintf(path, sizeof path, "%s/pgokit", b ? b : "build");
    return path;
}

/* Records bin under the emulator; fills *ex with its exact counts. 0 if
 * recorded, 1 if the emulator is not available (skipped), -1 on failure. */
static int record_exact(const char *bin, pk_exact_binary *ex, pk_exact_counts *all)
{
    const char *pg = pgokit_path();
    char plugin[1100];
    snprintf(plugin, sizeof plugin, "%.*s/pgokit-lbr.so", (int)(strrchr(pg, '/') ? strrchr(pg, '/') - pg : 1),
             strrchr(pg, '/') ? pg : ".");
    if (access(pg, X_OK) != 0 || access(plugin, R_OK) != 0 || system("command -v qemu-x86_64 >/dev/null") != 0) {
        fprintf(stderr, "note: %s, its plugin or qemu-x86_64 missing: exact-count checks skipped\n", pg);
        return 1;
    }
    char cmd[4096], out[1100];
    snprintf(out, sizeof out, "%s.exact", bin);
    snprintf(cmd, sizeof cmd, "'%s' record -q --emulate --exact-counts '%s' -o '%s.data' -- '%s' 3000 >/dev/null", pg,
             out, bin, bin);
    if (system(cmd) != 0)
        return -1;
    pk_err err;
    if (pk_exact_read(out, all, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        return -1;
    }
    for (size_t i = 0; i < all->nbins; i++)
        if (!strcmp(all->bins[i].path, bin)) {
            *ex = all->bins[i];
            return 0;
        }
    fprintf(stderr, "%s: not in its exact counts\n", bin);
    return -1;
}

typedef struct truth {
    uint64_t *bc, *ec;
    int bad;
} truth;

static bool in_ranges(const pk_addr_range *r, size_t n, uint64_t a)
{
    for (size_t i = 0; i < n; i++)
        if (a >= r[i].begin && a < r[i].end)
            return true;
    return false;
}

/* The true block and edge counts of a function (its address ranges) from
 * the exact ranges and branches, checking that they fit the CFG. */
static void true_counts(const char *fname, const pk_cfg *c, const pk_exact_binary *ex, const pk_addr_range *fr,
                        size_t nfr, truth *t)
{
#define TBAD(...) do { if (t->bad++ < 8) { fprintf(stderr, "  %s: ", fname); fprintf(stderr, __VA_ARGS__); \
        fputc('\n', stderr); } } while (0)
    for (size_t i = 0; i < ex->nranges; i++) {
        const pk_exact_entry *r = &ex->ranges[i];
        if (!in_ranges(fr, nfr, r->a))
            continue;
        uint32_t b = pk_cfg_block_at(c, r->a);
        if (b == UINT32_MAX || c->blocks[b].begin != r->a) {
            TBAD("range 0x%llx-0x%llx starts inside a block", (unsigned long long)r->a, (unsigned long long)r->b);
            continue;
        }
        for (;;) {
            t->bc[b] += r->count;
            if (c->blocks[b].last >= r->b)
                break;
            uint32_t e = edge_of(c, c->blocks[b].begin, c->blocks[b].end);
            if (e == UINT32_MAX || c->edges[e].kind != PK_CFG_FALL) {
                TBAD("range 0x%llx-0x%llx falls from 0x%llx without a FALL edge", (unsigned long long)r->a,
                     (unsigned long long)r->b, (unsigned long long)c->blocks[b].begin);
                break;
            }
            t->ec[e] += r->count;
            b = c->edges[e].to;
        }
        if (c->blocks[b].last != r->b)
            TBAD("range 0x%llx-0x%llx ends inside a block", (unsigned long long)r->a, (unsigned long long)r->b);
    }
    for (size_t i = 0; i < ex->nbranches; i++) {
        const pk_exact_entry *br = &ex->branches[i];
        bool src_in = in_ranges(fr, nfr, br->a), dst_in = in_ranges(fr, nfr, br->b);
        if (!dst_in)
            continue;
        uint32_t sb = src_in ? pk_cfg_block_at(c, br->a) : UINT32_MAX, db = pk_cfg_block_at(c, br->b);
        if (db == UINT32_MAX || c->blocks[db].begin != br->b) {
            TBAD("branch 0x%llx -> 0x%llx lands inside a block", (unsigned long long)br->a, (unsigned long long)br->b);
            continue;
        }
        int term = sb != UINT32_MAX ? c->blocks[sb].term : -1;
        if (src_in && (term == PK_INSN_JMP || term == PK_INSN_CJMP || term == PK_INSN_IJMP)) {
            uint32_t e = edge_of(c, c->blocks[sb].begin, br->b);
            if (e == UINT32_MAX)
                TBAD("branch 0x%llx -> 0x%llx is no edge", (unsigned long long)br->a, (unsigned long long)br->b);
            else
                t->ec[e] += br->count;
        } else if (src_in && term == PK_INSN_CALL && br->b == c->entry) {
            /* recursion: a call, the entry's own count */
        } else if (br->b != c->entry) {
            /* a return to the instruction after a call */
            uint32_t e = db > 0 ? edge_of(c, c->blocks[db - 1].begin, br->b) : UINT32_MAX;
            if (e == UINT32_MAX || c->edges[e].kind != PK_CFG_AFTER_CALL)
                TBAD("return 0x%llx -> 0x%llx has no after-call edge", (unsigned long long)br->a,
                     (unsigned long long)br->b);
            else
                t->ec[e] += br->count;
        }
    }
#undef TBAD
}

typedef struct totals {
    int funcs, tables_ok, exact_funcs, exact_edges_ok, exact_edges;
    double ov_block[3], ov_edge[3];
    int nov;
} totals;

/* The checks that need the emulator's exact counts, for one CFG built
 * over the function's address ranges fr[0..nfr). */
static void exact_checks(const char *name, const char *fname, pk_binary *b, const pk_cfg *c, const pk_addr_range *fr,
                         size_t nfr, const pk_exact_binary *ex, bool is_switch, totals *tot, rng *r)
{
    pk_err err;
    truth t = {calloc(c->nblocks, 8), calloc(c->nedges + 1, 8), 0};
    true_counts(fname, c, ex, fr, nfr, &t);
    uint64_t sum = 0;
    for (size_t k = 0; k < c->nblocks; k++)
        sum += t.bc[k];
    if (t.bad) {
        pk_test_failed_checks++;
        fprintf(stderr, "%s %s: %d executed paths not in the CFG\n", name, fname, t.bad);
    }
    if (sum && !t.bad && conservation_errors(c, t.bc, t.ec) != 0) {
        pk_test_failed_checks++;
        fprintf(stderr, "%s %s: the true counts do not conserve flow on the CFG\n", name, fname);
    }
    /* the switch went to exactly its table's targets */
    for (uint32_t k = 0; is_switch && k < c->nblocks; k++) {
        if (c->blocks[k].term != PK_INSN_IJMP)
            continue;
        size_t seen = 0, table = c->blocks[k].nsucc, taken = 0;
        for (size_t j = 0; j < ex->nbranches; j++) {
            if (ex->branches[j].a != c->blocks[k].last)
                continue;
            taken++;
            uint32_t e = edge_of(c, c->blocks[k].begin, ex->branches[j].b);
            seen += e != UINT32_MAX && c->edges[e].kind == PK_CFG_TABLE;
        }
        CHECK_EQ_U64(seen, taken);
        CHECK_EQ_U64(taken, table);
        tot->tables_ok += seen == taken && taken == table;
    }
    if (sum == 0 || t.bad) {
        free(t.bc);
        free(t.ec);
        return;
    }
    /* exact weights: blocks come back exactly, edges where the block
     * counts determine them */
    int64_t *w = malloc(c->nblocks * 8);
    uint64_t *bc = malloc(c->nblocks * 8), *ec = malloc((c->nedges + 1) * 8);
    for (size_t k = 0; k < c->nblocks; k++)
        w[k] = (int64_t)t.bc[k];
    pk_flow_opts o;
    pk_flow_defaults(&o);
    if (pk_flow_infer(c, w, PK_FLOW_UNKNOWN, &o, bc, ec, &err) != 0) {
        pk_test_failed_checks++;
        fprintf(stderr, "%s %s: %s\n", name, fname, err.msg);
    }
    size_t wrong = 0;
    for (size_t k = 0; k < c->nblocks; k++)
        wrong += bc[k] != t.bc[k];
    if (wrong) {
        pk_test_failed_checks++;
        fprintf(stderr, "%s %s: exact weights, %zu blocks differ\n", name, fname, wrong);
    }
    CHECK_EQ_U64(conservation_errors(c, bc, ec), 0);
    tot->exact_funcs++;
    for (size_t e = 0; e < c->nedges; e++)
        tot->exact_edges_ok += ec[e] == t.ec[e];
    tot->exact_edges += (int)c->nedges;
    /* IP sampling: each instruction's executions thinned */
    pk_vec addrs, hits;
    pk_vec_init(&addrs, 8);
    pk_vec_init(&hits, 8);
    for (size_t k = 0; k < nfr; k++) {
        pk_insn *in;
        size_t n;
        if (pk_binary_decode_range(b, fr[k].begin, fr[k].end, &in, &n, &err) != 0 ||
            pk_vec_reserve(&addrs, addrs.len + n) != 0 || pk_vec_reserve(&hits, hits.len + n) != 0) {
            pk_test_failed_checks++;
            break;
        }
        sample_hits(r, c, in, n, t.bc, 0.02, (uint64_t *)addrs.data + addrs.len, (uint64_t *)hits.data + hits.len);
        addrs.len += n;
        hits.len += n;
        free(in);
    }
    CHECK_EQ_U64(pk_flow_block_weights(c, addrs.data, hits.data, addrs.len, 16, w), 0);
    bool sampled = false;
    for (size_t k = 0; k < c->nblocks; k++)
        sampled |= w[k] > 0;
    for (int m = 0; m < 3 && sampled; m++) {   /* no samples, nothing to infer */
        o.method = m;
        if (pk_flow_infer(c, w, PK_FLOW_UNKNOWN, &o, bc, ec, &err) != 0) {
            pk_test_failed_checks++;
            fprintf(stderr, "%s %s: %s\n", name, fname, err.msg);
        }
        tot->ov_block[m] += overlap_u64(t.bc, bc, c->nblocks);
        tot->ov_edge[m] += overlap_u64(t.ec, ec, c->nedges);
        if (m == PK_FLOW_MCF)
            CHECK_EQ_U64(conservation_errors(c, bc, ec), 0);
    }
    tot->nov += sampled;
    pk_vec_free(&addrs);
    pk_vec_free(&hits);
    free(w);
    free(bc);
    free(ec);
    free(t.bc);
    free(t.ec);
}

/* Functions whose DWARF lists several ranges (gcc's main + main.cold):
 * the CFG over all of them, with the checks above. Returns how many. */
static int check_split_functions(const char *name, pk_binary *b, const pk_cfg_noreturn *nr, const od_insn *od,
                                 size_t nod, const pk_exact_binary *ex, int rec, totals *tot, rng *r)
{
    pk_symbolizer *sym;
    pk_err err;
    const pk_dwarf_func *df;
    size_t ndf;
    int split = 0;
    if (pk_binary_symbolizer(b, &sym, &err) != 0 || pk_dwarf_funcs(sym, &df, &ndf, &err) != 0) {
        pk_test_failed_checks++;
        fprintf(stderr, "%s: %s\n", name, err.msg);
        return 0;
    }
    for (size_t i = 0; i < ndf; i++) {
        if (df[i].nranges < 2)
            continue;
        pk_cfg c;
        if (pk_cfg_build_binary(&c, b, nr, df[i].ranges, df[i].nranges, df[i].entry_pc, &err) != 0) {
            pk_test_failed_checks++;
            fprintf(stderr, "%s %s: %s\n", name, df[i].name, err.msg);
            continue;
        }
        split++;
        CHECK_EQ_U64(c.blocks[c.entry_block].begin, df[i].entry_pc);
        /* objdump, range by range (edges into the other range are checked
         * by the exact counts) */
        size_t inter = 0;
        for (size_t k = 0; k < c.nedges; k++) {
            const pk_cfg_edge *e = &c.edges[k];
            for (uint32_t q = 0; q < df[i].nranges; q++) {
                uint64_t lo = df[i].ranges[q].begin, hi = df[i].ranges[q].end;
                bool from_in = c.blocks[e->from].begin >= lo && c.blocks[e->from].begin < hi;
                bool to_in = c.blocks[e->to].begin >= lo && c.blocks[e->to].begin < hi;
                inter += from_in && !to_in;
            }
        }
        CHECK(inter >= 1);   /* the hot part branches into the cold one (and back) */
        pk_cfg part;
        for (uint32_t q = 0; q < df[i].nranges; q++) {
            /* each range alone against objdump: same blocks where no edge
             * crosses ranges */
            if (pk_cfg_build_binary(&part, b, nr, &df[i].ranges[q], 1, df[i].ranges[q].begin, &err) != 0)
                continue;
            int bad = check_against_objdump(df[i].name, &part, od, nod, df[i].ranges[q].begin, df[i].ranges[q].end);
            if (bad) {
                pk_test_failed_checks++;
                fprintf(stderr, "%s %s part %u: %d disagreements with objdump\n", name, df[i].name, q, bad);
            }
            pk_cfg_free(&part);
        }
        if (rec == 0)
            exact_checks(name, df[i].name, b, &c, df[i].ranges, df[i].nranges, ex, false, tot, r);
        pk_cfg_free(&c);
    }
    return split;
}

static void check_binary(const char *name, const char *cc, const char *flags)
{
    const char *bin = pk_test_build(name, cc, flags, "infer_switch.c");
    if (!bin) {
        pk_test_failed_checks++;
        fprintf(stderr, "%s: fixture not built\n", name);
        return;
    }
    size_t nod;
    od_insn *od = objdump(bin, &nod);
    CHECK(od != NULL && nod > 100);
    pk_binary *b;
    pk_err err;
    if (pk_binary_open(&b, bin, NULL, &err) != 0) {
        pk_test_failed_checks++;
        fprintf(stderr, "%s\n", err.msg);
        free(od);
        return;
    }
    pk_cfg_noreturn *nr;
    CHECK_OK(pk_cfg_noreturn_open(&nr, b, &err), &err);
    pk_exact_binary ex = {0};
    pk_exact_counts all = {0};
    int rec = record_exact(bin, &ex, &all);
    CHECK(rec >= 0);
    pk_elf *elf = pk_binary_elf(b);
    const pk_elf_section *text = pk_elf_section_by_name(elf, ".text");
    size_t nf;
    const pk_elf_symbol *fs = pk_elf_funcs(elf, &nf);
    totals tot = {0};
    rng r = {42};
    for (size_t i = 0; i < nf; i++) {
        const pk_elf_symbol *f = &fs[i];
        if (f->is_alias || f->shndx != text->index || f->size == 0)
            continue;
        pk_addr_range range = {f->addr, f->addr + f->size};
        pk_cfg c;
        if (pk_cfg_build_binary(&c, b, nr, &range, 1, f->addr, &err) != 0) {
            pk_test_failed_checks++;
            fprintf(stderr, "%s %s: %s\n", name, f->name, err.msg);
            continue;
        }
        tot.funcs++;
        int bad = check_against_objdump(f->name, &c, od, nod, range.begin, range.end);
        if (bad) {
            pk_test_failed_checks++;
            fprintf(stderr, "%s %s: %d disagreements with objdump\n", name, f->name, bad);
        }
        /* jt_hoisted: its table base is found past another definition of
         * the register (in address order) */
        bool is_switch = !strcmp(f->name, "op_int") || !strcmp(f->name, "op_char") || !strcmp(f->name, "op_enum") ||
                         !strcmp(f->name, "jt_hoisted");
        if (is_switch) {
            CHECK_EQ_U64(c.ijumps_resolved, 1);
            CHECK_EQ_U64(c.ijumps_unresolved, 0);
            CHECK_EQ_U64(c.ijumps_untabled, 0);
            /* op_enum's switch has no bound check: its size is guessed */
            CHECK_EQ_U64(c.ijumps_guessed, !strcmp(f->name, "op_enum"));
        }
        if (!strcmp(f->name, "tail_ptr")) {   /* a tail call through a pointer: no switch */
            CHECK_EQ_U64(c.ijumps_resolved, 0);
            CHECK_EQ_U64(c.ijumps_unresolved, 1);
            CHECK_EQ_U64(c.ijumps_untabled, 1);
        }
        if (!strcmp(f->name, "check")) {   /* abort() does not return */
            bool stop = false;
            for (size_t k = 0; k < c.nblocks; k++)
                stop |= c.blocks[k].term == PK_INSN_CALL && (c.blocks[k].flags & PK_CFG_STOP);
            CHECK(stop);
        }
        if (rec != 0) {
            pk_cfg_free(&c);
            continue;
        }
        exact_checks(name, f->name, b, &c, &range, 1, &ex, is_switch, &tot, &r);
        pk_cfg_free(&c);
    }
    int split = check_split_functions(name, b, nr, od, nod, &ex, rec, &tot, &r);
    if (!strncmp(name, "sw-gcc", 6))
        CHECK(split >= 1);   /* main.cold */
    printf("%s: %d functions (%d in several ranges), switch tables matching the run %d", name, tot.funcs, split,
           tot.tables_ok);
    if (rec == 0) {
        printf("; exact weights: %d functions, edges exact %d/%d", tot.exact_funcs, tot.exact_edges_ok, tot.exact_edges);
        printf("; IP-sampled (rate 0.02), mean over the %d functions with samples: block overlap MCF %.4f PROPAGATE %.4f NONE %.4f,"
               " edge overlap MCF %.4f PROPAGATE %.4f NONE %.4f",
               tot.nov, tot.ov_block[0] / tot.nov, tot.ov_block[1] / tot.nov, tot.ov_block[2] / tot.nov,
               tot.ov_edge[0] / tot.nov, tot.ov_edge[1] / tot.nov, tot.ov_edge[2] / tot.nov);
        CHECK_EQ_U64(tot.tables_ok, 4);   /* op_int, op_char, op_enum, jt_hoisted */
        CHECK(tot.exact_funcs >= 6);
        CHECK(tot.ov_block[0] >= tot.ov_block[2]);
        CHECK(tot.ov_edge[0] >= tot.ov_edge[2]);
    }
    printf("\n");
    pk_exact_free(&all);
    pk_cfg_noreturn_close(nr);
    pk_binary_close(b);
    free(od);
}

TEST(clang_pie) { check_binary("sw-clang-pie", "clang-19", "-O2 -g"); }
TEST(clang_nopie) { check_binary("sw-clang-nopie", "clang-19", "-O2 -g -fno-pie -no-pie"); }
TEST(clang_cet) { check_binary("sw-clang-cet", "clang-19", "-O2 -g -fcf-protection=full"); }
TEST(gcc_pie) { check_binary("sw-gcc-pie", "gcc-12", "-O2 -g -fpie -pie"); }
TEST(gcc_nopie) { check_binary("sw-gcc-nopie", "gcc-12", "-O2 -g -fno-pie -no-pie"); }
TEST(gcc_cet) { check_binary("sw-gcc-cet", "gcc-12", "-O2 -g -fcf-protection=full"); }

int main(void) { return pk_test_main(); }
