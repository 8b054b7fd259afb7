/* test_probe_cs.c — CSSPGO probe contexts (pk_profgen_probe_cs) on
 * fixtures built with clang-19 -fpseudo-probe-for-profiling:
 *  - probe_inline.c: an inline site whose call-site probe is 0 (the
 *    compiler merged two call sites and the probe id was lost, as in
 *    SQLite's moveToRoot) cuts the context there, callers included: the
 *    inlinee heads its context, as llvm-profgen's getInlineContextForProbe
 *    does. No call in the program has probe id 0, so a context through it
 *    would match nothing in the compiler and its samples would be lost.
 *  - cs_sse.c: the probes of __nodebug__ intrinsics inlined into
 *    match_mask sit in top-level records of their own with no symbol; they
 *    are not counted (no [main:k @ _mm_movemask_epi8] beside match_mask). */
#include "test.h"
#include "binary/binary.h"
#include "profgen/probe_gen.h"

#include <stdlib.h>
#include <unistd.h>

static const char *desc_name(const pk_probe_info *pi, uint32_t node, char *buf, size_t cap)
{
    const pk_probe_desc *d = pk_probe_descs_find(&pi->descs, pi->table.nodes[node].guid);
    snprintf(buf, cap, "%.*s", d ? (int)d->name_len : 0, d ? d->name : "");
    return buf;
}

/* Whether some live profile of ps has the context text `want`. */
static bool has_ctx(const pk_profset *ps, const char *want)
{
    char buf[4096];
    for (size_t i = 0; i < ps->top.len; i++) {
        const pk_fprof *f = PK_VEC_AT(&ps->top, pk_fprof *, i);
        if (!f->removed && pk_profset_ctx_text(ps, f->ctx, buf, sizeof buf) < sizeof buf && !strcmp(buf, want))
            return true;
    }
    return false;
}

/* Whether some live context has a frame "name:0" (a zero call site). */
static bool has_zero_site(const pk_profset *ps)
{
    for (size_t i = 0; i < ps->top.len; i++) {
        const pk_fprof *f = PK_VEC_AT(&ps->top, pk_fprof *, i);
        size_t n;
        const pk_ctx_frame *fr = f->removed ? NULL : pk_profset_ctx(ps, f->ctx, &n);
        for (size_t k = 0; fr && k + 1 < n; k++)
            if (fr[k].line == 0)
                return true;
    }
    return false;
}

TEST(an_inline_site_without_probe_starts_the_context)
{
    if (access("/usr/bin/clang-19", X_OK) != 0) {
        fprintf(stderr, "clang-19 missing: skipped\n");
        return;
    }
    const char *path = pk_test_build("probe_inline", "clang-19", "-O2 -g -fpseudo-probe-for-profiling",
                                     "probe_inline.c");
    pk_binary *bin = NULL;
    pk_err e;
    if (!path || pk_binary_open(&bin, path, NULL, &e)) {
        CHECK(!"fixture builds and opens");
        return;
    }
    pk_elf *elf = pk_binary_elf(bin);
    pk_probe_info pi;
    CHECK_OK(pk_probe_info_load(&pi, elf, NULL, &e), &e);
    pk_probe_table *t = &pi.table;
    /* a block probe two inline levels below `top` (l2 or l3 in l1), and the
     * entry probe of that middle body */
    const pk_elf_symbol *top = pk_elf_func_by_name(elf, "top"), *mainf = pk_elf_func_by_name(elf, "main");
    const pk_probe *deep = NULL, *mid_entry = NULL;
    uint32_t mid = PK_PROBE_NO_NODE;
    for (size_t i = 0; top && i < t->n && !deep; i++) {
        const pk_probe *p = &t->probes[i];
        if (p->type != PK_PROBE_BLOCK || t->nodes[p->node].depth != 2 || p->addr < top->addr ||
            p->addr >= top->addr + top->size)
            continue;
        deep = p;
        mid = t->nodes[p->node].parent;
    }
    for (size_t i = 0; deep && i < t->n && !mid_entry; i++)
        if (t->probes[i].node == mid && t->probes[i].index == 1)
            mid_entry = &t->probes[i];
    /* main's direct call to top: the context's one call site */
    uint64_t site = 0;
    const pk_insn *v;
    size_t nv;
    if (mainf && top && !pk_binary_func_insns(bin, mainf, &v, &nv, &e))
        for (size_t i = 0; i < nv && !site; i++)
            if (v[i].cls == PK_INSN_CALL && v[i].target == top->addr)
                site = v[i].addr;
    CHECK(deep && mid_entry && site);
    if (!deep || !mid_entry || !site)
        goto out_info;
    char deep_name[512], mid_name[512], top_name[512], want[1600];
    desc_name(&pi, deep->node, deep_name, sizeof deep_name);
    desc_name(&pi, mid, mid_name, sizeof mid_name);
    desc_name(&pi, t->nodes[mid].parent, top_name, sizeof top_name);
    uint32_t deep_site = t->nodes[deep->node].callsite_probe;
    uint64_t deep_addr = deep->addr, entry_addr = mid_entry->addr;
    /* what the compiler does to a merged call site */
    t->nodes[mid].callsite_probe = 0;

    pk_csraw raw;
    uint64_t base = mainf->addr & ~(uint64_t)0xfffff, words[2] = {site, top->addr};
    uint32_t c;
    CHECK_OK(pk_csraw_init(&raw, base, &e), &e);
    CHECK_OK(pk_csraw_intern(&raw, words, 2, &c, &e), &e);
    pk_pairmap_add(&raw.ranges, (uint64_t)c << 32 | (deep_addr - base), deep_addr - base, 5);
    pk_pairmap_add(&raw.ranges, (uint64_t)c << 32 | (entry_addr - base), entry_addr - base, 7);
    pk_profset ps;
    pk_probe_gen_stats st;
    CHECK_OK(pk_profset_init(&ps, &e), &e);
    CHECK_OK(pk_profgen_probe_cs(bin, &pi, &raw, &ps, &st, &e), &e);
    /* the deep body's context restarts at the middle one, main and top gone */
    snprintf(want, sizeof want, "%s:%u @ %s", mid_name, deep_site, deep_name);
    CHECK(has_ctx(&ps, want));
    if (!has_ctx(&ps, want))
        fprintf(stderr, "wanted context %s\n", want);
    /* the middle body's entry: its own context, and no call recorded at
     * top's probe 0 (there is no caller in that context) */
    CHECK(has_ctx(&ps, mid_name));
    CHECK(!has_zero_site(&ps));
    pk_name_id main_id, top_id;
    if (!pk_profset_lookup_name(&ps, "main", 4, &main_id) &&
        !pk_profset_lookup_name(&ps, top_name, strlen(top_name), &top_id)) {
        for (size_t i = 0; i < ps.top.len; i++) { /* any [main:? @ top] */
            const pk_fprof *f = PK_VEC_AT(&ps.top, pk_fprof *, i);
            size_t n;
            const pk_ctx_frame *fr = pk_profset_ctx(&ps, f->ctx, &n);
            uint64_t cnt = 0;
            if (!f->removed && n == 2 && fr[0].name == main_id && fr[1].name == top_id)
                CHECK(pk_fprof_get_body(f, 0, 0, &cnt) != 0 || cnt == 0);
        }
    }
    pk_profset_free(&ps);
    pk_csraw_free(&raw);
out_info:
    pk_probe_info_free(&pi);
    pk_binary_close(bin);
}

TEST(probes_of_inlinees_without_inline_stack_are_not_counted)
{
    if (access("/usr/bin/clang-19", X_OK) != 0) {
        fprintf(stderr, "clang-19 missing: skipped\n");
        return;
    }
    const char *path = pk_test_build("cs_sse", "clang-19", "-O2 -g -fpseudo-probe-for-profiling", "cs_sse.c");
    pk_binary *bin = NULL;
    pk_err e;
    if (!path || pk_binary_open(&bin, path, NULL, &e)) {
        CHECK(!"fixture builds and opens");
        return;
    }
    pk_elf *elf = pk_binary_elf(bin);
    pk_probe_info pi;
    CHECK_OK(pk_probe_info_load(&pi, elf, NULL, &e), &e);
    const pk_elf_symbol *mm = pk_elf_func_by_name(elf, "match_mask"), *mainf = pk_elf_func_by_name(elf, "main");
    uint64_t site = 0;
    const pk_insn *v;
    size_t nv;
    if (mm && mainf && !pk_binary_func_insns(bin, mainf, &v, &nv, &e))
        for (size_t i = 0; i < nv && !site; i++)
            if (v[i].cls == PK_INSN_CALL && v[i].target == mm->addr)
                site = v[i].addr;
    /* the fixture holds what it is for: symbol-less records in match_mask */
    size_t orphans = 0, n;
    const pk_probe *at = mm ? pk_probe_table_at(&pi.table, mm->addr, &n) : NULL;
    for (size_t i = 0; at && i < n; i++)
        orphans += pi.table.nodes[at[i].node].parent == PK_PROBE_NO_NODE &&
                   !pk_u64map_get(&pi.by_guid, pi.table.nodes[at[i].node].guid);
    CHECK(site && orphans > 0);
    if (!site || !orphans)
        goto out;
    pk_csraw raw;
    uint64_t base = mainf->addr & ~(uint64_t)0xfffff, words[2] = {site, mm->addr};
    uint32_t c;
    CHECK_OK(pk_csraw_init(&raw, base, &e), &e);
    CHECK_OK(pk_csraw_intern(&raw, words, 2, &c, &e), &e);
    pk_pairmap_add(&raw.ranges, (uint64_t)c << 32 | (mm->addr - base), mm->addr - base, 9);
    pk_profset ps;
    pk_probe_gen_stats st;
    CHECK_OK(pk_profset_init(&ps, &e), &e);
    CHECK_OK(pk_profgen_probe_cs(bin, &pi, &raw, &ps, &st, &e), &e);
    CHECK_EQ_U64(st.lost_inlinee_probes, orphans);
    size_t live = 0;
    for (size_t i = 0; i < ps.top.len; i++) {
        const pk_fprof *f = PK_VEC_AT(&ps.top, pk_fprof *, i);
        size_t nf;
        const pk_ctx_frame *fr = f->removed ? NULL : pk_profset_ctx(&ps, f->ctx, &nf);
        if (!fr)
            continue;
        live++;
        /* the one context: main's call site, then match_mask */
        CHECK_EQ_U64(nf, 2);
        CHECK_STR(pk_profset_name(&ps, fr[nf - 1].name), "match_mask");
    }
    CHECK_EQ_U64(live, 1);
    pk_profset_free(&ps);
    pk_csraw_free(&raw);
out:
    pk_probe_info_free(&pi);
    pk_binary_close(bin);
}

int main(void) { return pk_test_main(); }
