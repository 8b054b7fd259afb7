/* test_infer_a64.c — AArch64 switch tables (jumptable_a64.c) on real code:
 * tests/programs/infer_switch_a64.c cross-built with clang-19 and gcc-12
 * (byte, halfword and, with inline asm, 4-byte byte-offset tables; clang's
 * fall-through bound check and gcc's branch around the default). Oracle: the
 * emulator's exact counts of a run that takes every case — the distinct
 * targets the run's `br` went to are exactly the distinct entries of the
 * table the CFG builder read. Skipped without the cross compilers or
 * qemu-aarch64. */
#include "infer_util.h"
#include "record/record.h"

#include <stdio.h>
#include <unistd.h>

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

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static size_t uniq(uint64_t *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_u64);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!k || v[k - 1] != v[i])
            v[k++] = v[i];
    return k;
}

/* The distinct table targets of f's (single) indirect jump; its address in *br. */
static size_t table_targets(const pk_cfg *c, uint64_t *out, size_t cap, uint64_t *br)
{
    size_t k = 0;
    for (uint32_t b = 0; b < c->nblocks; b++)
        for (uint32_t s = 0; s < c->blocks[b].nsucc; s++) {
            const pk_cfg_edge *e = &c->edges[c->blocks[b].first_succ + s];
            if (e->kind == PK_CFG_TABLE && k < cap) {
                out[k++] = c->blocks[e->to].begin;
                *br = c->blocks[b].last;
            }
        }
    return uniq(out, k);
}

static void check_build(const char *name, const char *cc, const char *flags, int nfuncs)
{
    char probe[256];
    snprintf(probe, sizeof probe, "command -v %s >/dev/null && command -v qemu-aarch64 >/dev/null", cc);
    if (system(probe) != 0 || access("/usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1", R_OK) != 0) {
        printf("%s: skipped (no %s, qemu-aarch64 or aarch64 sysroot)\n", name, cc);
        return;
    }
    const char *bin = pk_test_build(name, cc, flags, "infer_switch_a64.c");
    CHECK(bin != NULL);
    if (!bin)
        return;
    char cmd[4096], exact[1100];
    snprintf(exact, sizeof exact, "%s.exact", bin);
    snprintf(cmd, sizeof cmd, "'%s' record -q --emulate --exact-counts '%s' -o '%s.data' -- '%s' 400 >/dev/null",
             pgokit_path(), exact, bin, bin);
    CHECK(system(cmd) == 0);
    pk_exact_counts all = {0};
    pk_err err;
    CHECK_OK(pk_exact_read(exact, &all, &err), &err);
    const pk_exact_binary *ex = NULL;
    for (size_t i = 0; i < all.nbins; i++)
        if (!strcmp(all.bins[i].path, bin))
            ex = &all.bins[i];
    CHECK(ex != NULL);
    pk_binary *b;
    CHECK_OK(pk_binary_open(&b, bin, NULL, &err), &err);
    pk_cfg_noreturn *nr;
    CHECK_OK(pk_cfg_noreturn_open(&nr, b, &err), &err);
    pk_elf *elf = pk_binary_elf(b);
    static const char *const funcs[] = {"op", "opc", "wide", "wide_asm"};
    int checked = 0;
    for (int f = 0; f < nfuncs && ex; f++) {
        const pk_elf_symbol *s = NULL;
        size_t nf;
        const pk_elf_symbol *fs = pk_elf_funcs(elf, &nf);
        for (size_t i = 0; i < nf; i++)
            if (!strcmp(fs[i].name, funcs[f]))
                s = &fs[i];
        CHECK(s != NULL);
        if (!s)
            continue;
        pk_addr_range range = {s->addr, s->addr + s->size};
        pk_cfg c;
        CHECK_OK(pk_cfg_build_binary(&c, b, nr, &range, 1, s->addr, &err), &err);
        CHECK_EQ_U64(c.ijumps_resolved, 1);
        CHECK_EQ_U64(c.ijumps_unresolved, 0);
        CHECK_EQ_U64(c.ijumps_guessed, 0);
        uint64_t tab[64], run[64], br = 0;
        size_t nt = table_targets(&c, tab, 64, &br), nrun = 0;
        for (size_t i = 0; i < ex->nbranches; i++)
            if (ex->branches[i].a == br && nrun < 64)
                run[nrun++] = ex->branches[i].b;
        nrun = uniq(run, nrun);
        bool same = nt == nrun && nt > 0 && !memcmp(tab, run, nt * sizeof *tab);
        if (!same) {
            pk_test_failed_checks++;
            fprintf(stderr, "%s %s: table has %zu distinct targets, the run's br at 0x%llx went to %zu\n", name,
                    funcs[f], nt, (unsigned long long)br, nrun);
        }
        checked += same;
        pk_cfg_free(&c);
    }
    printf("%s: %d switch tables equal to the run's targets\n", name, checked);
    pk_cfg_noreturn_close(nr);
    pk_binary_close(b);
    pk_exact_free(&all);
}

TEST(clang_a64) { check_build("sw-clang-a64", "clang-19", "--target=aarch64-linux-gnu -O2 -g", 4); }
TEST(clang_a64_nopie)
{
    check_build("sw-clang-a64-nopie", "clang-19", "--target=aarch64-linux-gnu -O2 -g -fno-pie -no-pie", 4);
}
TEST(gcc_a64) { check_build("sw-gcc-a64", "aarch64-linux-gnu-gcc-12", "-O2 -g", 3); }

int main(void) { return pk_test_main(); }
