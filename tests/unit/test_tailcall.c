/* test_tailcall.c — missing-frame inference (pk_infer_tail_frames) on
 * tests/programs/profgen_icall.c built with clang-19: at an indirect call
 * site with several targets, the frame of the one target that tail-calls
 * the sampled callee is spliced in; none when two targets lead there, or
 * when the callee is itself a target of the call. A function with two tail
 * calls to the callee gets its frame through the one the LBR saw. With
 * PK_TAILCALL_INDIRECT_JUMPS (contexts from IP samples), a function whose
 * epilogue ends in a jump through a pointer (ic_e) is taken to have
 * tail-called the callee, not one that jumps through a switch table (ic_s)
 * nor one without a frame to restore (the build without frame pointers). */
#include "test.h"
#include "binary/binary.h"
#include "unwind/unwind.h"

#include <unistd.h>

typedef struct fixture {
    pk_binary *bin;
    uint64_t base, icall, leaf, a, b, c, a_jmp, c_jmp, dcall, d, d_jmp[2];
} fixture;

/* The address of the k-th instruction (0: first) of class cls in f whose
 * target is `target` (0 for an indirect one), 0 if none. */
static uint64_t insn_in(pk_binary *bin, const pk_elf_symbol *f, int cls, uint64_t target, int k)
{
    const pk_insn *v;
    size_t n;
    pk_err e;
    if (!f || pk_binary_func_insns(bin, f, &v, &n, &e))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (v[i].cls == cls && v[i].target == target && k-- == 0)
            return v[i].addr;
    return 0;
}

static bool fixture_open(fixture *f)
{
    if (access("/usr/bin/clang-19", X_OK) != 0) {
        fprintf(stderr, "clang-19 missing: skipped\n");
        return false;
    }
    const char *path = pk_test_build("icall", "clang-19", "-O2 -g", "profgen_icall.c");
    pk_err e;
    if (!path || pk_binary_open(&f->bin, path, NULL, &e)) {
        CHECK(!"fixture builds and opens");
        return false;
    }
    pk_elf *elf = pk_binary_elf(f->bin);
    const pk_elf_symbol *m = pk_elf_func_by_name(elf, "main"), *l = pk_elf_func_by_name(elf, "ic_leaf");
    const pk_elf_symbol *a = pk_elf_func_by_name(elf, "ic_a"), *b = pk_elf_func_by_name(elf, "ic_b");
    const pk_elf_symbol *c = pk_elf_func_by_name(elf, "ic_c"), *d = pk_elf_func_by_name(elf, "ic_d");
    if (!m || !l || !a || !b || !c || !d) {
        CHECK(!"fixture symbols");
        return false;
    }
    f->icall = insn_in(f->bin, m, PK_INSN_ICALL, 0, 0);
    f->dcall = insn_in(f->bin, m, PK_INSN_CALL, d->addr, 0);
    f->leaf = l->addr, f->a = a->addr, f->b = b->addr, f->c = c->addr, f->d = d->addr;
    f->a_jmp = insn_in(f->bin, a, PK_INSN_JMP, l->addr, 0);
    f->c_jmp = insn_in(f->bin, c, PK_INSN_JMP, l->addr, 0);
    f->d_jmp[0] = insn_in(f->bin, d, PK_INSN_JMP, l->addr, 0);
    f->d_jmp[1] = insn_in(f->bin, d, PK_INSN_JMP, l->addr, 1);
    /* without the calls and tail calls it is made of the fixture is unusable */
    bool ok = f->icall && f->a_jmp && f->c_jmp && f->dcall && f->d_jmp[0] && f->d_jmp[1];
    CHECK(ok);
    f->base = m->addr & ~(uint64_t)0xfffff;
    return ok;
}

/* A csraw holding the context [call site, ic_leaf] (one range in ic_leaf)
 * and, under the root context, the given LBR branches. */
static int make_raw_at(const fixture *f, uint64_t site, pk_csraw *raw, const uint64_t (*br)[2], size_t nbr,
                       pk_err *e)
{
    uint64_t words[2] = {site, f->leaf}, root[1] = {f->leaf};
    uint32_t c, c0;
    if (pk_csraw_init(raw, f->base, e) || pk_csraw_intern(raw, words, 2, &c, e) ||
        pk_csraw_intern(raw, root, 1, &c0, e))
        return -1;
    pk_pairmap_add(&raw->ranges, (uint64_t)c << 32 | (f->leaf - f->base), f->leaf + 1 - f->base, 9);
    for (size_t i = 0; i < nbr; i++)
        pk_pairmap_add(&raw->branches, (uint64_t)c0 << 32 | (br[i][0] - f->base), br[i][1] - f->base, 3);
    return 0;
}

static int make_raw(const fixture *f, pk_csraw *raw, const uint64_t (*br)[2], size_t nbr, pk_err *e)
{
    return make_raw_at(f, f->icall, raw, br, nbr, e);
}

/* The words of the context whose last word is ic_leaf's entry. */
static uint32_t leaf_ctx(const fixture *f, const pk_csraw *raw, const uint64_t **w)
{
    for (uint32_t i = 0; i < pk_csraw_num_ctxs(raw); i++) {
        uint32_t n;
        *w = pk_csraw_ctx(raw, i, &n);
        if (n > 1 && (*w)[n - 1] == f->leaf)
            return n;
    }
    return 0;
}

TEST(one_target_of_an_indirect_call_tail_calls_the_callee)
{
    fixture f = {0};
    if (!fixture_open(&f))
        goto out;
    /* ic_a and ic_b seen as targets; only ic_a's tail call reaches ic_leaf */
    const uint64_t br[][2] = {{f.icall, f.a}, {f.icall, f.b}, {f.a_jmp, f.leaf}};
    pk_csraw raw;
    pk_err e;
    pk_tailcall_stats st;
    pk_u64map added = {0};
    CHECK_OK(make_raw(&f, &raw, br, 3, &e), &e);
    CHECK_OK(pk_infer_tail_frames(&raw, f.bin, 0, 0, &st, &added, &e), &e);
    CHECK_EQ_U64(st.mismatched, 1);
    CHECK_EQ_U64(st.recovered, 1);
    CHECK_EQ_U64(st.frames_added, 1);
    CHECK(pk_u64map_get(&added, f.a_jmp) != NULL);
    const uint64_t *w = NULL;
    uint32_t n = leaf_ctx(&f, &raw, &w);
    CHECK_EQ_U64(n, 3);
    if (n == 3) {
        CHECK_EQ_U64(w[0], f.icall);
        CHECK_EQ_U64(w[1], f.a_jmp);
    }
    pk_u64map_free(&added);
    pk_csraw_free(&raw);
out:
    pk_binary_close(f.bin);
}

TEST(two_targets_tail_calling_the_callee_are_ambiguous)
{
    fixture f = {0};
    if (!fixture_open(&f))
        goto out;
    const uint64_t br[][2] = {{f.icall, f.a}, {f.icall, f.b}, {f.icall, f.c},
                              {f.a_jmp, f.leaf}, {f.c_jmp, f.leaf}};
    pk_csraw raw;
    pk_err e;
    pk_tailcall_stats st;
    CHECK_OK(make_raw(&f, &raw, br, 5, &e), &e);
    CHECK_OK(pk_infer_tail_frames(&raw, f.bin, 0, 0, &st, NULL, &e), &e);
    CHECK_EQ_U64(st.ambiguous, 1);
    CHECK_EQ_U64(st.recovered, 0);
    const uint64_t *w = NULL;
    CHECK_EQ_U64(leaf_ctx(&f, &raw, &w), 2);
    pk_csraw_free(&raw);
out:
    pk_binary_close(f.bin);
}

TEST(a_callee_called_directly_by_the_site_is_not_a_tail_call)
{
    fixture f = {0};
    if (!fixture_open(&f))
        goto out;
    const uint64_t br[][2] = {{f.icall, f.a}, {f.icall, f.leaf}, {f.a_jmp, f.leaf}};
    pk_csraw raw;
    pk_err e;
    pk_tailcall_stats st;
    CHECK_OK(make_raw(&f, &raw, br, 3, &e), &e);
    CHECK_OK(pk_infer_tail_frames(&raw, f.bin, 0, 0, &st, NULL, &e), &e);
    CHECK_EQ_U64(st.mismatched, 0);
    const uint64_t *w = NULL;
    CHECK_EQ_U64(leaf_ctx(&f, &raw, &w), 2);
    pk_csraw_free(&raw);
out:
    pk_binary_close(f.bin);
}

TEST(of_two_tail_calls_to_the_callee_the_sampled_one_is_spliced)
{
    fixture f = {0};
    if (!fixture_open(&f))
        goto out;
    for (int seen = 0; seen < 2; seen++) {
        /* the LBR saw d's second jump only, then both */
        const uint64_t one[][2] = {{f.d_jmp[1], f.leaf}}, both[][2] = {{f.d_jmp[0], f.leaf}, {f.d_jmp[1], f.leaf}};
        pk_csraw raw;
        pk_err e;
        pk_tailcall_stats st;
        CHECK_OK(make_raw_at(&f, f.dcall, &raw, seen ? both : one, seen ? 2 : 1, &e), &e);
        CHECK_OK(pk_infer_tail_frames(&raw, f.bin, 0, 0, &st, NULL, &e), &e);
        const uint64_t *w = NULL;
        uint32_t n = leaf_ctx(&f, &raw, &w);
        if (!seen) {
            CHECK_EQ_U64(st.recovered, 1);
            CHECK_EQ_U64(n, 3);
            if (n == 3)
                CHECK_EQ_U64(w[1], f.d_jmp[1]);
        } else {
            CHECK_EQ_U64(st.ambiguous, 1);
            CHECK_EQ_U64(n, 2);
        }
        pk_csraw_free(&raw);
    }
out:
    pk_binary_close(f.bin);
}

TEST(an_epilogue_jump_through_a_pointer_is_a_tail_call_for_ip_contexts)
{
    if (access("/usr/bin/clang-19", X_OK) != 0) {
        fprintf(stderr, "clang-19 missing: skipped\n");
        return;
    }
    for (int fp = 0; fp < 2; fp++) {
        const char *path = fp ? pk_test_build("icall-fp", "clang-19", "-O2 -g -fno-omit-frame-pointer", "profgen_icall.c")
                              : pk_test_build("icall", "clang-19", "-O2 -g", "profgen_icall.c");
        fixture f = {0};
        pk_err e;
        if (!path || pk_binary_open(&f.bin, path, NULL, &e)) {
            CHECK(!"fixture builds and opens");
            continue;
        }
        pk_elf *elf = pk_binary_elf(f.bin);
        const pk_elf_symbol *ef = pk_elf_func_by_name(elf, "ic_e"), *sf = pk_elf_func_by_name(elf, "ic_s");
        const pk_elf_symbol *b = pk_elf_func_by_name(elf, "ic_b");
        const pk_elf_symbol *m = pk_elf_func_by_name(elf, "main");
        uint64_t e_jmp = insn_in(f.bin, ef, PK_INSN_IJMP, 0, 0), s_jmp = insn_in(f.bin, sf, PK_INSN_IJMP, 0, 0);
        uint64_t e_call = ef ? insn_in(f.bin, m, PK_INSN_CALL, ef->addr, 0) : 0;
        uint64_t s_call = sf ? insn_in(f.bin, m, PK_INSN_CALL, sf->addr, 0) : 0;
        /* the fixture must hold both kinds of indirect jump */
        CHECK(b && e_jmp && s_jmp && e_call && s_call);
        if (!b || !e_jmp || !s_jmp || !e_call || !s_call) {
            pk_binary_close(f.bin);
            continue;
        }
        f.leaf = b->addr; /* the callee the stacks show: ic_b */
        f.base = m->addr & ~(uint64_t)0xfffff;
        for (int flags = 0; flags < 2; flags++) {
            for (int sw = 0; sw < 2; sw++) {
                pk_csraw raw;
                pk_tailcall_stats st;
                pk_u64map added = {0};
                CHECK_OK(make_raw_at(&f, sw ? s_call : e_call, &raw, NULL, 0, &e), &e);
                CHECK_OK(pk_infer_tail_frames(&raw, f.bin, 0, flags ? PK_TAILCALL_INDIRECT_JUMPS : 0, &st, &added, &e),
                         &e);
                CHECK_EQ_U64(st.mismatched, 1);
                const uint64_t *w = NULL;
                uint32_t n = leaf_ctx(&f, &raw, &w);
                if (flags && fp && !sw) {
                    /* spliced: [call of ic_e, ic_e's jmp *%rax, ic_b] */
                    CHECK_EQ_U64(st.recovered, 1);
                    CHECK_EQ_U64(st.through_indirect, 1);
                    CHECK_EQ_U64(n, 3);
                    if (n == 3)
                        CHECK_EQ_U64(w[1], e_jmp);
                    CHECK(pk_u64map_get(&added, e_jmp) != NULL);
                } else {
                    /* LBR semantics, a switch's jump, or no frame to restore */
                    CHECK_EQ_U64(st.recovered, 0);
                    CHECK_EQ_U64(st.unreachable, 1);
                    CHECK_EQ_U64(n, 2);
                }
                pk_u64map_free(&added);
                pk_csraw_free(&raw);
            }
        }
        pk_binary_close(f.bin);
    }
}

int main(void) { return pk_test_main(); }
