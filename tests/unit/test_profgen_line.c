/* test_profgen_line.c — the line-based generator on a real binary built at
 * test time (tests/programs/profgen_calls.c with clang-19): MAX per line,
 * per-byte and summed totals, call targets and head samples from calls and
 * tail calls, dropped ranges by reason; and the canonical-name rule. */
#include "test.h"
#include "profgen/profgen.h"
#include "format/format.h"
#include "unwind/unwind.h"

#include <stdlib.h>
#include <unistd.h>

TEST(canonical_names_strip_llvm_and_part_keep_uniq)
{
    static const struct { const char *in, *out; } cases[] = {
        {"foo", "foo"},
        {"foo.llvm.123", "foo"},
        {"foo.part.1", "foo"},
        {"foo.part.1.llvm.2", "foo"},
        {"a.llvm.1.part.2", "a.llvm.1"},
        {"_ZL3foov.__uniq.1234", "_ZL3foov.__uniq.1234"},
        {"_ZL3foov.__uniq.1234.llvm.5678", "_ZL3foov.__uniq.1234"},
        {"foo.cold", "foo.cold"},
        {"foo.llvm.", "foo"},
        {".llvm.1", ".llvm.1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[128];
        size_t n = pk_profgen_canonical_len(cases[i].in);
        snprintf(buf, sizeof buf, "%.*s", (int)n, cases[i].in);
        CHECK_STR(buf, cases[i].out);
    }
}

typedef struct fixture {
    pk_binary *bin;
    pk_symbolizer *sym;
    uint64_t leaf, leaf_ret, tail, tail_jmp, main_, call, after_call, loop, jne, main_jmp;
    uint64_t leaf_bytes;
    uint64_t start;    /* _start: crt code without DWARF, 0 if absent */
} fixture;

static const pk_insn *find_cls(const pk_insn *v, size_t n, int cls)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].cls == cls)
            return &v[i];
    return NULL;
}

static int build_fixture(fixture *f)
{
    char bin[600], cmd[2048];
    snprintf(bin, sizeof bin, "%s/calls", pk_test_tmpdir());
    snprintf(cmd, sizeof cmd, "clang-19 -O2 -g -fdebug-info-for-profiling %s/programs/profgen_calls.c -o %s",
             pk_test_srcdir(), bin);
    if (system(cmd) != 0)
        return -1;
    pk_err e;
    if (pk_binary_open(&f->bin, bin, NULL, &e) || pk_binary_symbolizer(f->bin, &f->sym, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        return -1;
    }
    pk_elf *elf = pk_binary_elf(f->bin);
    const pk_elf_symbol *sl = pk_elf_func_by_name(elf, "pg_leaf");
    const pk_elf_symbol *st = pk_elf_func_by_name(elf, "pg_tail");
    const pk_elf_symbol *sm = pk_elf_func_by_name(elf, "main");
    if (!sl || !st || !sm)
        return -1;
    const pk_insn *v;
    size_t n;
    if (pk_binary_func_insns(f->bin, sl, &v, &n, &e))
        return -1;
    f->leaf = sl->addr;
    const pk_insn *r = find_cls(v, n, PK_INSN_RET);
    if (!r)
        return -1;
    f->leaf_ret = r->addr;
    f->leaf_bytes = r->addr + r->len - sl->addr;
    if (pk_binary_func_insns(f->bin, st, &v, &n, &e))
        return -1;
    f->tail = st->addr;
    const pk_insn *j = find_cls(v, n, PK_INSN_JMP);
    if (!j || j->target != f->leaf)
        return -1;  /* the compiler did not make a tail call: fixture unusable */
    f->tail_jmp = j->addr;
    if (pk_binary_func_insns(f->bin, sm, &v, &n, &e))
        return -1;
    f->main_ = sm->addr;
    const pk_elf_symbol *s0 = pk_elf_func_by_name(elf, "_start");
    f->start = s0 ? s0->addr : 0;
    const pk_insn *c = find_cls(v, n, PK_INSN_CALL);
    const pk_insn *jn = find_cls(v, n, PK_INSN_CJMP);
    for (size_t i = 0; i < n; i++)
        if (v[i].cls == PK_INSN_CJMP && v[i].target < v[i].addr)
            jn = &v[i];  /* the loop's back edge */
    const pk_insn *jm = find_cls(v, n, PK_INSN_JMP);
    if (!c || !jn || !jm)
        return -1;
    f->call = c->addr;
    f->after_call = c->addr + c->len;
    f->loop = jn->target;
    f->jne = jn->addr;
    f->main_jmp = jm->addr;
    return 0;
}

/* Builds the fixture; false when the test cannot run (clang-19 missing:
 * skipped; a build that fails: a failure). */
static bool fixture_ready(fixture *f)
{
    if (access("/usr/bin/clang-19", X_OK) != 0) {
        fprintf(stderr, "clang-19 missing: skipped\n");
        return false;
    }
    if (build_fixture(f)) {
        CHECK(!"fixture");
        pk_binary_close(f->bin);
        return false;
    }
    return true;
}

static uint32_t line_of(fixture *f, uint64_t addr)
{
    pk_frames fs;
    pk_err e;
    if (pk_symbolize(f->sym, addr, &fs, &e) || !fs.count)
        return 0xffffffff;
    return (fs.frames[0].line - fs.frames[0].start_line) & 0xffff;
}

static void fill_raw(fixture *f, pk_rawprof *raw)
{
    pk_err e;
    pk_rawprof_init(raw, "calls", NULL, 0, 0, &e);
    pk_pairmap_add(&raw->ranges, f->leaf, f->leaf_ret, 10);
    pk_pairmap_add(&raw->ranges, f->loop, f->call, 6);
    pk_pairmap_add(&raw->ranges, f->after_call, f->jne, 6);
    pk_pairmap_add(&raw->ranges, f->main_, f->main_jmp, 2);  /* crosses the call */
    pk_pairmap_add(&raw->ranges, f->leaf + 1, f->leaf_ret, 3); /* mid-instruction */
    pk_pairmap_add(&raw->ranges, f->leaf, f->tail, 4);        /* past the function's end */
    if (f->start)
        pk_pairmap_add(&raw->ranges, f->start, f->start, 8); /* no DWARF function */
    pk_pairmap_add(&raw->branches, f->call, f->tail, 7);
    pk_pairmap_add(&raw->branches, f->tail_jmp, f->leaf, 5);
    pk_pairmap_add(&raw->branches, PK_AGG_EXTERNAL, f->main_, 1);
    pk_pairmap_add(&raw->branches, f->jne, f->loop, 600);     /* not into an entry */
}

/* Tail-call inference on the fixture: main's call to pg_tail reaches
 * pg_leaf through pg_tail's tail jump, so a context [main's call site,
 * pg_leaf] gets pg_tail's jump spliced in, and that site is reported (the
 * caller decodes the probes of the functions holding reported sites). */
TEST(tail_frames_are_spliced_and_reported)
{
    fixture f = {0};
    if (!fixture_ready(&f))
        return;
    pk_err e;
    pk_csraw raw;
    uint64_t base = f.main_ & ~(uint64_t)0xfffff;
    CHECK_OK(pk_csraw_init(&raw, base, &e), &e);
    uint64_t ctx_words[2] = {f.call, f.leaf}, leaf_only[1] = {f.leaf};
    uint32_t c, c0;
    CHECK_OK(pk_csraw_intern(&raw, ctx_words, 2, &c, &e), &e);
    CHECK_OK(pk_csraw_intern(&raw, leaf_only, 1, &c0, &e), &e);
    pk_pairmap_add(&raw.ranges, (uint64_t)c << 32 | (f.leaf - base), f.leaf_ret - base, 9);
    /* the tail jump, seen in the LBR (under the leaf-only context) */
    pk_pairmap_add(&raw.branches, (uint64_t)c0 << 32 | (f.tail_jmp - base), f.leaf - base, 5);
    pk_tailcall_stats st;
    pk_u64map added = {0};
    CHECK_OK(pk_infer_tail_frames(&raw, f.bin, 0, 0, &st, &added, &e), &e);
    CHECK_EQ_U64(st.recovered, 1);
    CHECK_EQ_U64(st.frames_added, 1);
    CHECK_EQ_U64(added.len, 1);
    CHECK(pk_u64map_get(&added, f.tail_jmp) != NULL);
    bool found = false;
    for (uint32_t i = 0; i < pk_csraw_num_ctxs(&raw); i++) {
        uint32_t n;
        const uint64_t *w = pk_csraw_ctx(&raw, i, &n);
        if (n == 3 && w[0] == f.call && w[1] == f.tail_jmp && w[2] == f.leaf)
            found = true;
    }
    CHECK(found);
    pk_u64map_free(&added);
    pk_csraw_free(&raw);
    pk_binary_close(f.bin);
}

TEST(line_profile_of_calls_fixture)
{
    fixture f = {0};
    if (!fixture_ready(&f))
        return;
    pk_rawprof raw;
    fill_raw(&f, &raw);
    for (int mode = PK_TOTAL_PER_BYTE; mode <= PK_TOTAL_SUM; mode++) {
        pk_profset ps;
        pk_err e;
        CHECK_OK(pk_profset_init(&ps, &e), &e);
        pk_profgen_opts o = {.total_mode = mode};
        pk_profgen_stats st;
        CHECK_OK(pk_profgen_line(f.bin, &raw, &o, &ps, &st, &e), &e);
        CHECK_EQ_U64(st.range_drop[PK_RANGE_DROP_CROSS_UNCOND], 2);
        CHECK_EQ_U64(st.range_drop[PK_RANGE_DROP_NOT_CODE], 3);
        CHECK_EQ_U64(st.range_drop[PK_RANGE_DROP_CROSS_FUNC], 4);
        if (f.start)
            CHECK_EQ_U64(st.range_drop[PK_RANGE_DROP_NO_FUNC], 8);
        CHECK_EQ_U64(st.calls, 7);
        CHECK_EQ_U64(st.tail_calls, 5);
        CHECK_EQ_U64(st.external_entries, 1);
        CHECK_EQ_U64(st.branches_not_call, 0);

        pk_fprof *leaf = pk_profset_find(&ps, "pg_leaf");
        pk_fprof *tail = pk_profset_find(&ps, "pg_tail");
        pk_fprof *mainp = pk_profset_find(&ps, "main");
        CHECK(leaf && tail && mainp);
        if (!leaf || !tail || !mainp) {
            pk_profset_free(&ps);
            continue;
        }
        CHECK_EQ_U64(leaf->head, 5);
        CHECK_EQ_U64(tail->head, 7);
        CHECK_EQ_U64(mainp->head, 1);
        uint64_t c = 0;
        CHECK(pk_fprof_get_body(leaf, line_of(&f, f.leaf), 0, &c) == 0);
        CHECK_EQ_U64(c, 10);
        if (mode == PK_TOTAL_PER_BYTE)
            CHECK_EQ_U64(leaf->total, 10 * f.leaf_bytes);
        else
            CHECK_EQ_U64(leaf->total, pk_fprof_body_sum(leaf));
        /* the call line carries the call target and at least its count */
        pk_name_id tid;
        CHECK(pk_profset_lookup_name(&ps, "pg_tail", 7, &tid) == 0);
        CHECK(pk_fprof_get_body(mainp, line_of(&f, f.call), 0, &c) == 0);
        CHECK_EQ_U64(c, 7);
        CHECK(pk_fprof_get_body(tail, line_of(&f, f.tail_jmp), 0, &c) == 0);
        CHECK_EQ_U64(c, 5);
        /* the text writer accepts it and llvm's syntax shows the call target */
        pk_buf b = {0};
        CHECK_OK(pk_text_write(&ps, &b, &e), &e);
        pk_buf_put(&b, "", 1);
        CHECK(b.data && strstr((char *)b.data, "pg_tail:7") != NULL);
        CHECK(b.data && strstr((char *)b.data, "pg_leaf:5") != NULL);
        pk_buf_free(&b);
        pk_profset_free(&ps);
    }
    pk_rawprof_free(&raw);
    pk_binary_close(f.bin);
}

/* The warning needs a line that ran over blocks and no discriminator at
 * all: a binary without lines over blocks has nothing to lose, one with a
 * discriminator somewhere was built with them. */
TEST(discriminator_warning_conditions)
{
    char w[512];
    pk_profgen_stats st = {0};
    st.insns_symbolized = 5000;
    CHECK(pk_profgen_discriminator_warning(&st, w, sizeof w) == 0);
    st.insns_line_split = 1;
    CHECK(pk_profgen_discriminator_warning(&st, w, sizeof w) == 1);
    CHECK(strstr(w, "-fdebug-info-for-profiling") != NULL);
    CHECK(strstr(w, "none of the 5000 sampled instructions") != NULL);
    st.insns_no_debug = 1000;
    CHECK(pk_profgen_discriminator_warning(&st, w, sizeof w) == 1);
    CHECK(strstr(w, "none of the 4000 sampled instructions") != NULL);
    st.insns_discriminated = 1;
    CHECK(pk_profgen_discriminator_warning(&st, w, sizeof w) == 0);
    /* a small buffer gets a cut, terminated text */
    st.insns_discriminated = 0;
    char small[16];
    CHECK(pk_profgen_discriminator_warning(&st, small, sizeof small) == 1);
    CHECK(strlen(small) == sizeof small - 1);
}

int main(void) { return pk_test_main(); }
