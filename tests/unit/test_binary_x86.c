/* The x86-64 decoder against llvm-objdump-19 -d: for every instruction of
 * every function of test programs (clang-19 and gcc-12 builds, and libc's
 * text as a larger corpus), the same boundaries, branch class and direct
 * target. */
#include "binary/binary.h"
#include "binary/x86_tables.h"
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
    uint64_t prefix_addr = 0;
    bool prefix_pending = false;
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
        /* prefixes printed as separate words, on the instruction's line or
         * (llvm-objdump-19 with `lock`) alone on a line of their own at the
         * prefix's address: the instruction starts there */
        bool prefix_only = false;
        while (!strcmp(mn, "notrack") || !strcmp(mn, "bnd") || !strcmp(mn, "rep") || !strcmp(mn, "lock") ||
               !strcmp(mn, "data16") || !strcmp(mn, "cs") || !strcmp(mn, "ds")) {
            while (*t == ' ' || *t == '\t')
                t++;
            if (sscanf(t, "%63s", mn) != 1) {
                prefix_only = true;
                break;
            }
            t += strlen(mn);
        }
        if (prefix_only) {
            if (!prefix_pending)
                prefix_addr = addr, prefix_pending = true;
            continue;
        }
        if (prefix_pending)
            addr = prefix_addr, prefix_pending = false;
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

/* ---- the fast decoder against Zydis (pk_x86_decode_zydis), exactly ---- */

static int same(const uint8_t *c, size_t len, uint64_t addr, size_t *fastn)
{
    pk_insn a, b;
    memset(&a, 0xAA, sizeof a);
    memset(&b, 0x55, sizeof b);
    size_t n = pk_x86_decode(c, len, addr, &a);
    size_t nz = pk_x86_decode_zydis(c, len, addr, &b);
    if (fastn) {
        pk_insn f;
        *fastn = pk_x86_decode_fast(c, len, addr, &f);
    }
    if (n == nz && a.addr == b.addr && a.len == b.len && a.cls == b.cls && a.target == b.target)
        return 1;
    fprintf(stderr, "x86 fast/zydis mismatch at 0x%llx len %zu:", (unsigned long long)addr, len);
    for (size_t k = 0; k < len && k < 16; k++)
        fprintf(stderr, " %02x", c[k]);
    fprintf(stderr, ": fast %zu/%u %s -> 0x%llx, zydis %zu/%u %s -> 0x%llx\n", n, a.len, pk_insn_class_name(a.cls),
            (unsigned long long)a.target, nz, b.len, pk_insn_class_name(b.cls), (unsigned long long)b.target);
    return 0;
}

/* Linear sweep of every function symbol (every `step`-th one) of an ELF:
 * each instruction and each of its truncations must decode alike. Returns
 * the share (per mille) of instructions the fast path decoded itself. */
static double sweep(const char *path, size_t step, int truncations)
{
    pk_elf *e;
    pk_err err;
    if (pk_elf_open(&e, path, &err)) {
        fprintf(stderr, "note: %s: %s, skipped\n", path, err.msg);
        return -1;
    }
    size_t nf, total = 0, fast = 0, bad = 0, funcs = 0;
    const pk_elf_symbol *fs = pk_elf_funcs(e, &nf);
    for (size_t i = 0; i < nf; i += step) {
        const pk_elf_symbol *f = &fs[i];
        if (f->is_alias || f->size == 0)
            continue;
        const uint8_t *c = pk_elf_vaddr_bytes(e, f->addr, f->size);
        if (!c)
            continue;
        funcs++;
        for (size_t o = 0; o < f->size;) {
            pk_insn in;
            size_t fn, n = pk_x86_decode(c + o, f->size - o, f->addr + o, &in);
            total++;
            if (!same(c + o, f->size - o, f->addr + o, &fn) && ++bad > 10)
                break;
            fast += fn != 0;
            if (truncations)
                for (size_t t = 0; t < n; t++)
                    if (!same(c + o, t, f->addr + o, NULL) && ++bad > 10)
                        break;
            o += n ? n : 1;
        }
    }
    double share = total ? 100.0 * (double)fast / (double)total : 0;
    fprintf(stderr, "%s: %zu functions, %zu instructions, fast path %.3f%%, %zu mismatches\n", path, funcs, total,
            share, bad);
    CHECK(total > 1000);
    CHECK_EQ_U64(bad, 0);
    pk_elf_close(e);
    return share;
}

/* The whole .text, linearly: also the code without a symbol (libc's
 * internal AVX-512 string functions: EVEX, which Zydis decodes). */
static double sweep_text(const char *path)
{
    pk_elf *e;
    pk_err err;
    if (pk_elf_open(&e, path, &err)) {
        fprintf(stderr, "note: %s: %s, skipped\n", path, err.msg);
        return -1;
    }
    const pk_elf_section *t = pk_elf_section_by_name(e, ".text");
    const uint8_t *d = NULL;
    size_t sz = 0, total = 0, fast = 0, bad = 0;
    CHECK(t != NULL);
    if (t)
        CHECK(pk_elf_section_data(e, t, &d, &sz, &err) == 0);
    for (size_t o = 0; d && o < sz && bad < 10;) {
        pk_insn in;
        size_t fn, n = pk_x86_decode(d + o, sz - o, t->addr + o, &in);
        bad += !same(d + o, sz - o, t->addr + o, &fn);
        fast += fn != 0;
        total++;
        o += n ? n : 1;
    }
    double share = total ? 100.0 * (double)fast / (double)total : 0;
    fprintf(stderr, "%s .text: %zu instructions, fast path %.3f%%, %zu mismatches\n", path, total, share, bad);
    CHECK(total > 1000);
    CHECK_EQ_U64(bad, 0);
    pk_elf_close(e);
    return share;
}

TEST(x86_fast_vs_zydis_libc)
{
    double share = sweep("/lib/x86_64-linux-gnu/libc.so.6", 1, 1);
    if (share >= 0)
        CHECK(share > 99.0);
    share = sweep_text("/lib/x86_64-linux-gnu/libc.so.6");
    if (share >= 0)
        CHECK(share > 98.0);
}

TEST(x86_fast_vs_zydis_big)
{
    /* libLLVM: ~4.5M instructions incl. AVX/AVX2; a sample keeps ASan runs short */
    static const char *const llvm[] = {"/usr/lib/x86_64-linux-gnu/libLLVM.so.19.1",
                                       "/usr/lib/llvm-19/lib/libLLVM.so.19.1", "/usr/lib/x86_64-linux-gnu/libLLVM-19.so"};
    for (size_t i = 0; i < sizeof llvm / sizeof *llvm; i++) {
        FILE *f = fopen(llvm[i], "rb");
        if (f) {
            fclose(f);
            double share = sweep(llvm[i], 7, 0);
            CHECK(share > 99.0);
            break;
        }
    }
    FILE *q = fopen("/usr/bin/qemu-x86_64", "rb");
    if (q) {
        fclose(q);
        sweep("/usr/bin/qemu-x86_64", 1, 0);
    }
    const char *build = getenv("PK_BUILD");
    char path[1024];
    snprintf(path, sizeof path, "%s/pgokit", build ? build : "build");
    FILE *p = fopen(path, "rb");
    if (p) {
        fclose(p);
        sweep(path, 1, 1);
    }
}

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Random bytes, and random sequences of prefixes, REX, escapes and VEX
 * headers in front of random bytes, with random lengths: the fast path must
 * claim only what Zydis decodes the same way, and reject what Zydis rejects. */
TEST(x86_fast_vs_zydis_random)
{
    static const uint8_t pieces[] = {0x66, 0xF2, 0xF3, 0xF0, 0x2E, 0x3E, 0x26, 0x36, 0x64, 0x65, 0x67,
                                     0x40, 0x41, 0x44, 0x48, 0x4C, 0x4F, 0x0F, 0x0F, 0x0F, 0xC4, 0xC5,
                                     0x62, 0x8F, 0x38, 0x3A};
    uint64_t s = 0x9E3779B97F4A7C15ull;
    size_t bad = 0, fast = 0, valid = 0;
    const size_t rounds = 400000;
    for (size_t i = 0; i < rounds && bad < 10; i++) {
        uint8_t buf[20];
        for (size_t k = 0; k < sizeof buf; k += 8) {
            uint64_t r = rng_next(&s);
            memcpy(buf + k, &r, sizeof buf - k < 8 ? sizeof buf - k : 8);
        }
        uint64_t r = rng_next(&s);
        size_t np = (i & 1) ? (r & 3) : 0;
        for (size_t k = 0; k < np; k++)
            buf[k] = pieces[(r >> (8 + 8 * k)) % sizeof pieces];
        if ((i & 3) == 3 && np < 4) { /* a well-formed VEX / EVEX header */
            if ((r >> 39) & 1) {
                buf[np] = 0x62;
                buf[np + 1] = (uint8_t)((buf[np + 1] & 0xF0) | (1 + (r >> 48) % 6));
                buf[np + 2] |= 4;
            } else {
                buf[np] = (r >> 40) & 1 ? 0xC4 : 0xC5;
                buf[np + 1] = (uint8_t)(((r >> 41) & 0xE0) | (1 + (r >> 48) % 3));
            }
        }
        size_t len = (r >> 56) % 17;
        pk_insn in;
        size_t fn;
        bad += !same(buf, len, 0x400000 + i, &fn);
        fast += fn != 0;
        valid += pk_x86_decode(buf, len, 0, &in) != 0;
    }
    fprintf(stderr, "random: %zu decodes, %zu valid, %zu by the fast path, %zu mismatches\n", rounds, valid, fast,
            bad);
    CHECK_EQ_U64(bad, 0);
    CHECK(fast > rounds / 4);
}

/* Real instructions (libc's whole .text: legacy, VEX, EVEX) with one or two
 * bytes of their first six flipped or replaced: near misses of valid code,
 * where a wrong validity or length rule would show. */
TEST(x86_fast_vs_zydis_mutations)
{
    pk_elf *e;
    pk_err err;
    if (pk_elf_open(&e, "/lib/x86_64-linux-gnu/libc.so.6", &err)) {
        fprintf(stderr, "note: libc: %s, skipped\n", err.msg);
        return;
    }
    const pk_elf_section *t = pk_elf_section_by_name(e, ".text");
    const uint8_t *d = NULL;
    size_t sz = 0;
    CHECK(t != NULL);
    if (!t || pk_elf_section_data(e, t, &d, &sz, &err) || sz < 64) {
        pk_elf_close(e);
        return;
    }
    size_t ns = 0, *starts = malloc(sz * sizeof *starts);
    for (size_t o = 0; o < sz;) {
        pk_insn in;
        size_t n = pk_x86_decode(d + o, sz - o, 0, &in);
        if (n)
            starts[ns++] = o;
        o += n ? n : 1;
    }
    uint64_t s = 0xC0FFEE;
    size_t bad = 0, valid = 0, fast = 0;
    const size_t rounds = 300000;
    for (size_t i = 0; i < rounds && bad < 10; i++) {
        uint64_t r = rng_next(&s), r2 = rng_next(&s);
        size_t o = starts[r % ns], avail = sz - o < 24 ? sz - o : 24;
        uint8_t b[24] = {0};
        memcpy(b, d + o, avail);
        for (int k = 0; k < 1 + (int)(r2 & 1); k++) {
            size_t pos = (r2 >> (2 + 8 * k)) % 6;
            b[pos] ^= (uint8_t)(1u << ((r2 >> (5 + 8 * k)) & 7));
            if ((r2 >> 40) & 1)
                b[pos] = (uint8_t)(r2 >> 48);
        }
        size_t fn;
        pk_insn in;
        bad += !same(b, sizeof b, 0x7000, &fn);
        fast += fn != 0;
        valid += pk_x86_decode_zydis(b, sizeof b, 0, &in) != 0;
    }
    fprintf(stderr, "mutations: %zu of %zu instructions, %zu valid, %zu by the fast path, %zu mismatches\n", rounds, ns,
            valid, fast, bad);
    CHECK_EQ_U64(bad, 0);
    free(starts);
    pk_elf_close(e);
}

/* Every ModRM/SIB of every opcode of each map under each mandatory prefix
 * and W: the generator's probes, replayed with other trailing bytes. */
TEST(x86_fast_vs_zydis_opcodes)
{
    static const uint8_t pfx[] = {0, 0x66, 0xF3, 0xF2};
    size_t bad = 0, fast = 0, total = 0;
    uint64_t s = 12345;
    for (int map = 0; map < 4 && bad < 10; map++)
        for (int mp = 0; mp < 4; mp++)
            for (int op = 0; op < 256; op++)
                for (int m = 0; m < 256; m += 3) {
                    uint8_t buf[20];
                    size_t h = 0;
                    uint64_t r = rng_next(&s);
                    if (mp)
                        buf[h++] = pfx[mp];
                    if (r & 1)
                        buf[h++] = (uint8_t)(0x40 | ((r >> 1) & 15));
                    if (map)
                        buf[h++] = 0x0F;
                    if (map >= 2)
                        buf[h++] = map == 2 ? 0x38 : 0x3A;
                    buf[h++] = (uint8_t)op;
                    buf[h++] = (uint8_t)m;
                    for (size_t k = h; k < sizeof buf; k++)
                        buf[k] = (uint8_t)(r >> (k * 3 % 56));
                    size_t fn;
                    bad += !same(buf, sizeof buf, 0x1000, &fn);
                    fast += fn != 0;
                    total++;
                }
    fprintf(stderr, "opcodes: %zu decodes, %zu by the fast path, %zu mismatches\n", total, fast, bad);
    CHECK_EQ_U64(bad, 0);
}

TEST(x86_fast_edges)
{
    pk_insn a;
    size_t fn;
    /* the fast path's own answers, spot-checked by hand */
    const uint8_t movabs[] = {0x48, 0xB8, 1, 2, 3, 4, 5, 6, 7, 8};      /* imm64 */
    const uint8_t mov16[] = {0x66, 0xB8, 1, 2};                          /* imm16 */
    const uint8_t test[] = {0xF7, 0x05, 0, 0, 0, 0, 1, 2, 3, 4};        /* test $imm32, x(%rip) */
    const uint8_t neg[] = {0xF7, 0xD8};                                  /* neg %eax: no imm */
    const uint8_t sib5[] = {0x8B, 0x04, 0x25, 0, 0, 0, 0};               /* mov 0x0, %eax */
    const uint8_t enter[] = {0xC8, 0x10, 0x00, 0x01};
    const uint8_t vex[] = {0xC5, 0xF8, 0x77};                            /* vzeroupper */
    const uint8_t vex3[] = {0xC4, 0xE3, 0x79, 0x0F, 0xC1, 0x08};         /* vpalignr $8 */
    const uint8_t endbr[] = {0xF3, 0x0F, 0x1E, 0xFA};
    const uint8_t nop[] = {0x66, 0x66, 0x2E, 0x0F, 0x1F, 0x84, 0, 0, 0, 0, 0};
    const uint8_t lockx[] = {0xF0, 0x48, 0x0F, 0xB1, 0x17};              /* lock cmpxchg */
    const uint8_t jmpm[] = {0x3E, 0xFF, 0x24, 0xC5, 0, 0, 0, 0};        /* notrack jmp *(,%rax,8) */
    const uint8_t evex[] = {0x62, 0xE1, 0xFE, 0x28, 0x6F, 0x4E, 0x01};   /* vmovdqu64 0x20(%rsi),%ymm17 */
    struct { const uint8_t *c; size_t n; int cls; } cases[] = {
        {movabs, sizeof movabs, PK_INSN_OTHER}, {mov16, sizeof mov16, PK_INSN_OTHER},
        {test, sizeof test, PK_INSN_OTHER},     {neg, sizeof neg, PK_INSN_OTHER},
        {sib5, sizeof sib5, PK_INSN_OTHER},     {enter, sizeof enter, PK_INSN_OTHER},
        {vex, sizeof vex, PK_INSN_OTHER},       {vex3, sizeof vex3, PK_INSN_OTHER},
        {endbr, sizeof endbr, PK_INSN_OTHER},   {nop, sizeof nop, PK_INSN_OTHER},
        {lockx, sizeof lockx, PK_INSN_OTHER},   {jmpm, sizeof jmpm, PK_INSN_IJMP},
        {evex, sizeof evex, PK_INSN_OTHER},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        CHECK(same(cases[i].c, cases[i].n, 0x5000, &fn));
        CHECK_EQ_U64(fn, cases[i].n);
        CHECK_EQ_U64(pk_x86_decode(cases[i].c, cases[i].n, 0x5000, &a), cases[i].n);
        CHECK_EQ_U64(a.cls, cases[i].cls);
        for (size_t t = 0; t < cases[i].n; t++) /* truncated: 0 and INVALID */
            CHECK(same(cases[i].c, t, 0x5000, NULL) && pk_x86_decode(cases[i].c, t, 0x5000, &a) == 0);
    }
    /* 66-prefixed and backward branches agree with Zydis whoever decodes them */
    const uint8_t b66[][6] = {{0x66, 0xE8, 1, 2, 3, 4}, {0x66, 0xE9, 0xF0, 0xFF, 0xFF, 0xFF},
                              {0x66, 0x0F, 0x84, 1, 0, 0}, {0x66, 0xEB, 0x80}, {0xF2, 0xE9, 0, 0, 0, 0x80}};
    for (size_t i = 0; i < sizeof b66 / sizeof *b66; i++)
        CHECK(same(b66[i], 6, 0xFFFFFFFFFFFFFF00ull, NULL));
}

int main(void) { return pk_test_main(); }
