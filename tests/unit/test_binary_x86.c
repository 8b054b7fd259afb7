/* The x86-64 decoder against llvm-objdump-19 -d: for every instruction of
 * every function of test programs (clang-19 and gcc-12 builds, and libc's
 * text as a larger corpus), the same boundaries, branch class and direct
 * target. */
#include "binary/binary.h"
#include "test.h"

#include <ctype.h>
#include <stdlib.h>

typedef struct ref_insn {
    uint64_t addr, target;
    int cls;
} ref_insn;

static int classify(const char *mn, const char *ops, uint64_t *target)
{
    *target = 0;
    int ind = ops[0] == '*';
    const char *hx = strstr(ops, "0x");
    if (!strncmp(mn, "call", 4)) {
        if (!ind && hx)
            *target = strtoull(hx, NULL, 16);
        return ind ? PK_INSN_ICALL : PK_INSN_CALL;
    }
    if (!strncmp(mn, "ret", 3) || !strncmp(mn, "iret", 4) || !strncmp(mn, "lret", 4))
        return PK_INSN_RET;
    if (!strncmp(mn, "ljmp", 4) || !strncmp(mn, "lcall", 5))
        return mn[1] == 'j' ? PK_INSN_IJMP : PK_INSN_ICALL;
    if (!strncmp(mn, "jmp", 3)) {
        if (!ind && hx)
            *target = strtoull(hx, NULL, 16);
        return ind ? PK_INSN_IJMP : PK_INSN_JMP;
    }
    if (mn[0] == 'j' || !strncmp(mn, "loop", 4)) {
        if (hx)
            *target = strtoull(hx, NULL, 16);
        return PK_INSN_CJMP;
    }
    return PK_INSN_OTHER;
}

/* Parses `llvm-objdump-19 -d` of the .text section. */
static ref_insn *objdump(const char *bin, size_t *n)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "llvm-objdump-19 -d --no-show-raw-insn --section=.text '%s'", bin);
    FILE *p = popen(cmd, "r");
    if (!p)
        return NULL;
    size_t cap = 1024, k = 0;
    ref_insn *v = malloc(cap * sizeof *v);
    char line[4096];
    while (fgets(line, sizeof line, p)) {
        char *s = line;
        while (*s == ' ')
            s++;
        char *colon = strchr(s, ':');
        if (!colon || colon == s || !isxdigit((unsigned char)*s) || (colon[1] != '\t' && colon[1] != ' '))
            continue;
        char *e;
        uint64_t addr = strtoull(s, &e, 16);
        if (e != colon)
            continue;
        char *t = colon + 1;
        while (*t == ' ' || *t == '\t')
            t++;
        char mn[64] = "", ops[1024] = "";
        if (sscanf(t, "%63s", mn) != 1)
            continue;
        t += strlen(mn);
        /* prefixes printed as separate words */
        while (!strcmp(mn, "notrack") || !strcmp(mn, "bnd") || !strcmp(mn, "rep") || !strcmp(mn, "lock") ||
               !strcmp(mn, "data16") || !strcmp(mn, "cs") || !strcmp(mn, "ds")) {
            while (*t == ' ' || *t == '\t')
                t++;
            if (sscanf(t, "%63s", mn) != 1)
                break;
            t += strlen(mn);
        }
        while (*t == ' ' || *t == '\t')
            t++;
        snprintf(ops, sizeof ops, "%s", t);
        if (k == cap) {
            cap *= 2;
            v = realloc(v, cap * sizeof *v);
        }
        v[k].addr = addr;
        v[k].cls = classify(mn, ops, &v[k].target);
        k++;
    }
    pclose(p);
    *n = k;
    return v;
}

static void compare(const char *bin)
{
    size_t nref;
    ref_insn *ref = objdump(bin, &nref);
    CHECK(ref != NULL && nref > 100);
    if (!ref)
        return;
    pk_err err;
    pk_binary *b;
    CHECK_OK(pk_binary_open(&b, bin, NULL, &err), &err);
    pk_elf *e = pk_binary_elf(b);
    const pk_elf_section *text = pk_elf_section_by_name(e, ".text");
    size_t nf;
    const pk_elf_symbol *fs = pk_elf_funcs(e, &nf);
    size_t checked = 0, bad = 0, branches = 0;
    for (size_t i = 0; i < nf; i++) {
        const pk_elf_symbol *f = &fs[i];
        if (f->is_alias || f->shndx != text->index || f->size == 0)
            continue;
        const pk_insn *in;
        size_t n;
        CHECK_OK(pk_binary_func_insns(b, f, &in, &n, &err), &err);
        /* locate the function's first instruction in the reference */
        size_t lo = 0, hi = nref;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (ref[mid].addr < f->addr)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (size_t k = 0; k < n; k++, lo++) {
            checked++;
            if (lo >= nref || ref[lo].addr != in[k].addr || ref[lo].cls != in[k].cls ||
                ref[lo].target != in[k].target) {
                if (bad++ < 10)
                    fprintf(stderr, "%s: %s+0x%llx: ours 0x%llx %s -> 0x%llx, objdump 0x%llx %s -> 0x%llx\n", bin,
                            f->name, (unsigned long long)(in[k].addr - f->addr), (unsigned long long)in[k].addr,
                            pk_insn_class_name(in[k].cls), (unsigned long long)in[k].target,
                            lo < nref ? (unsigned long long)ref[lo].addr : 0ULL,
                            lo < nref ? pk_insn_class_name(ref[lo].cls) : "-",
                            lo < nref ? (unsigned long long)ref[lo].target : 0ULL);
                break; /* boundaries diverged: the rest of the function would repeat it */
            }
            branches += pk_insn_is_branch(in[k].cls);
        }
    }
    fprintf(stderr, "%s: %zu instructions (%zu branches) compared, %zu mismatches\n", bin, checked, branches, bad);
    CHECK(checked > 100);
    CHECK(branches > 10);
    CHECK_EQ_U64(bad, 0);
    /* pk_binary_insn_at finds boundaries and rejects the middle of one */
    const pk_elf_symbol *m = pk_elf_func_by_name(e, "main");
    if (m) {
        const pk_insn *first = pk_binary_insn_at(b, m->addr, &err);
        CHECK(first != NULL);
        if (first && first->len > 1)
            CHECK(pk_binary_insn_at(b, m->addr + 1, &err) == NULL);
    }
    pk_binary_close(b);
    free(ref);
}

static const char *build(const char *name, const char *cc, const char *flags)
{
    return pk_test_build(name, cc, flags, "binary_inline.c");
}

TEST(x86_vs_objdump_clang)
{
    const char *b = build("x86-clang", "clang-19", "-O2 -g -fcf-protection=full");
    CHECK(b != NULL);
    if (b)
        compare(b);
}

TEST(x86_vs_objdump_gcc)
{
    const char *b = build("x86-gcc", "gcc-12", "-O2 -g -no-pie");
    CHECK(b != NULL);
    if (b)
        compare(b);
}

/* A larger corpus: the pgokit executable itself (gcc or clang -O2). */
TEST(x86_vs_objdump_pgokit)
{
    const char *build = getenv("PK_BUILD");
    char path[1024];
    snprintf(path, sizeof path, "%s/pgokit", build ? build : "build");
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "note: %s not found, skipped\n", path);
        return;
    }
    fclose(f);
    compare(path);
}

TEST(x86_decode_edges)
{
    pk_insn in;
    /* e8 rel32: call to next+0x10 */
    const uint8_t call[] = {0xe8, 0x10, 0, 0, 0};
    CHECK_EQ_U64(pk_x86_decode(call, sizeof call, 0x1000, &in), 5);
    CHECK_EQ_U64(in.cls, PK_INSN_CALL);
    CHECK_EQ_U64(in.target, 0x1015);
    /* eb fe: jmp to itself */
    const uint8_t self[] = {0xeb, 0xfe};
    CHECK_EQ_U64(pk_x86_decode(self, 2, 0x2000, &in), 2);
    CHECK_EQ_U64(in.cls, PK_INSN_JMP);
    CHECK_EQ_U64(in.target, 0x2000);
    /* ff e0: jmp *%rax ; 3e ff e0: notrack jmp *%rax ; ff d0: call *%rax */
    const uint8_t ij[] = {0xff, 0xe0}, nt[] = {0x3e, 0xff, 0xe0}, ic[] = {0xff, 0xd0};
    CHECK_EQ_U64(pk_x86_decode(ij, 2, 0, &in), 2);
    CHECK_EQ_U64(in.cls, PK_INSN_IJMP);
    CHECK_EQ_U64(pk_x86_decode(nt, 3, 0, &in), 3);
    CHECK_EQ_U64(in.cls, PK_INSN_IJMP);
    CHECK_EQ_U64(pk_x86_decode(ic, 2, 0, &in), 2);
    CHECK_EQ_U64(in.cls, PK_INSN_ICALL);
    /* c3 ret, c2 08 00 ret $8, 0f 84 rel32 je, e3 rel8 jrcxz */
    const uint8_t ret[] = {0xc3}, reti[] = {0xc2, 8, 0}, je[] = {0x0f, 0x84, 0, 1, 0, 0}, jr[] = {0xe3, 0x02};
    CHECK_EQ_U64(pk_x86_decode(ret, 1, 0, &in), 1);
    CHECK_EQ_U64(in.cls, PK_INSN_RET);
    CHECK_EQ_U64(pk_x86_decode(reti, 3, 0, &in), 3);
    CHECK_EQ_U64(in.cls, PK_INSN_RET);
    CHECK_EQ_U64(pk_x86_decode(je, 6, 0x100, &in), 6);
    CHECK_EQ_U64(in.cls, PK_INSN_CJMP);
    CHECK_EQ_U64(in.target, 0x206);
    CHECK_EQ_U64(pk_x86_decode(jr, 2, 0x100, &in), 2);
    CHECK_EQ_U64(in.cls, PK_INSN_CJMP);
    CHECK_EQ_U64(in.target, 0x104);
    /* truncated and invalid bytes */
    CHECK_EQ_U64(pk_x86_decode(je, 3, 0, &in), 0);
    CHECK_EQ_U64(in.cls, PK_INSN_INVALID);
    CHECK_EQ_U64(in.len, 1);
    const uint8_t bad[] = {0x06}; /* push %es: invalid in 64-bit mode */
    CHECK_EQ_U64(pk_x86_decode(bad, 1, 0, &in), 0);
    CHECK_EQ_U64(pk_x86_decode(call, 0, 0, &in), 0);
    /* 15 bytes of prefixes + opcode: too long */
    uint8_t longi[16];
    memset(longi, 0x66, sizeof longi);
    longi[15] = 0x90;
    CHECK_EQ_U64(pk_x86_decode(longi, 16, 0, &in), 0);
}

int main(void) { return pk_test_main(); }
