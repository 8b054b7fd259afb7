/* test_record_exact.c — exact-counts file round trip, corruption, and the
 * branch classification / derivation the plugin relies on. */
#include "test.h"
#include "record/record.h"

#include <stdio.h>
#include <stdlib.h>

static pk_exact_entry *entries(const pk_exact_entry *src, size_t n)
{
    pk_exact_entry *e = malloc(n * sizeof *e);
    memcpy(e, src, n * sizeof *e);
    return e;
}

static void make_counts(pk_exact_counts *c)
{
    static const pk_exact_entry r0[] = {{0x1130, 0x1140, 5}, {0x1100, 0x1120, 3}, {0x1130, 0x1140, 2}};
    static const pk_exact_entry b0[] = {{0x1140, 0x1130, 6}, {0x1120, PK_EXACT_EXTERNAL, 1}};
    static const pk_exact_entry b1[] = {{PK_EXACT_EXTERNAL, 0x2000, 1}};
    c->nbins = 2;
    c->unmapped = 17;
    c->bins = calloc(2, sizeof *c->bins);
    c->bins[0].path = strdup("/bin/prog");
    c->bins[0].build_id_size = 20;
    for (int i = 0; i < 20; i++)
        c->bins[0].build_id[i] = (uint8_t)(i * 7);
    c->bins[0].ranges = entries(r0, 3);
    c->bins[0].nranges = 3;
    c->bins[0].branches = entries(b0, 2);
    c->bins[0].nbranches = 2;
    c->bins[1].path = strdup("/lib/libx.so.1");
    c->bins[1].branches = entries(b1, 1);
    c->bins[1].nbranches = 1;
}

TEST(exact_round_trip_sorts_and_merges)
{
    char path[512];
    snprintf(path, sizeof path, "%s/e.bin", pk_test_tmpdir());
    pk_exact_counts c, r;
    pk_err e;
    make_counts(&c);
    CHECK_OK(pk_exact_write(path, &c, &e), &e);
    CHECK_OK(pk_exact_read(path, &r, &e), &e);
    CHECK_EQ_U64(r.nbins, 2);
    CHECK_EQ_U64(r.unmapped, 17);
    CHECK_STR(r.bins[0].path, "/bin/prog");
    CHECK_EQ_U64(r.bins[0].build_id_size, 20);
    CHECK(memcmp(r.bins[0].build_id, c.bins[0].build_id, 20) == 0);
    CHECK_EQ_U64(r.bins[0].nranges, 2);           /* duplicates merged */
    CHECK_EQ_U64(r.bins[0].ranges[0].a, 0x1100);  /* sorted */
    CHECK_EQ_U64(r.bins[0].ranges[1].count, 7);
    CHECK_EQ_U64(r.bins[0].nbranches, 2);
    CHECK_EQ_U64(r.bins[0].branches[0].b, PK_EXACT_EXTERNAL);
    CHECK_EQ_U64(r.bins[0].branches[1].count, 6);
    CHECK_STR(r.bins[1].path, "/lib/libx.so.1");
    CHECK_EQ_U64(r.bins[1].build_id_size, 0);
    CHECK_EQ_U64(r.bins[1].nranges, 0);
    CHECK_EQ_U64(r.bins[1].branches[0].a, PK_EXACT_EXTERNAL);
    pk_exact_free(&c);
    pk_exact_free(&r);
}

TEST(exact_corrupt_files_fail_with_offset)
{
    char path[512], bad[512];
    snprintf(path, sizeof path, "%s/e2.bin", pk_test_tmpdir());
    snprintf(bad, sizeof bad, "%s/bad.bin", pk_test_tmpdir());
    pk_exact_counts c, r;
    pk_err e;
    make_counts(&c);
    CHECK_OK(pk_exact_write(path, &c, &e), &e);
    pk_exact_free(&c);
    pk_mapped_file f;
    CHECK_OK(pk_file_map(&f, path, &e), &e);
    /* every truncation is an error naming the file */
    for (size_t cut = 0; cut < f.size; cut += 5) {
        FILE *o = fopen(bad, "wb");
        fwrite(f.data, 1, cut, o);
        fclose(o);
        CHECK(pk_exact_read(bad, &r, &e) == -1);
        CHECK(strstr(e.msg, bad) != NULL);
    }
    /* a huge count must not allocate or read out of bounds */
    uint8_t *copy = malloc(f.size);
    memcpy(copy, f.data, f.size);
    pk_st64(copy + 32 + 32 + 16, 1ull << 60);   /* nranges of binary 0 (path "/bin/prog" pads to 16) */
    FILE *o = fopen(bad, "wb");
    fwrite(copy, 1, f.size, o);
    fclose(o);
    CHECK(pk_exact_read(bad, &r, &e) == -1);
    CHECK(strstr(e.msg, "offset") != NULL);
    /* unsorted entries are rejected */
    memcpy(copy, f.data, f.size);
    uint8_t tmp[24];
    uint8_t *r0 = copy + 32 + 32 + 16 + 16;
    memcpy(tmp, r0, 24);
    memcpy(r0, r0 + 24, 24);
    memcpy(r0 + 24, tmp, 24);
    o = fopen(bad, "wb");
    fwrite(copy, 1, f.size, o);
    fclose(o);
    CHECK(pk_exact_read(bad, &r, &e) == -1);
    CHECK(strstr(e.msg, "not sorted") != NULL);
    /* wrong magic, wrong version */
    memcpy(copy, f.data, f.size);
    copy[8] = 9;
    o = fopen(bad, "wb");
    fwrite(copy, 1, f.size, o);
    fclose(o);
    CHECK(pk_exact_read(bad, &r, &e) == -1);
    CHECK(strstr(e.msg, "version") != NULL);
    free(copy);
    pk_file_unmap(&f);
}

TEST(classify_branch_kinds)
{
    struct { const char *bytes; unsigned n; enum pk_br_kind kind; } cases[] = {
        {"\x74\x05", 2, PK_BR_COND},                    /* je rel8 */
        {"\x0f\x85\x10\x00\x00\x00", 6, PK_BR_COND},    /* jne rel32 */
        {"\xe3\x02", 2, PK_BR_COND},                    /* jrcxz */
        {"\xeb\xfe", 2, PK_BR_UNCOND},                  /* jmp rel8 */
        {"\xe9\x00\x01\x00\x00", 5, PK_BR_UNCOND},      /* jmp rel32 */
        {"\xff\xe0", 2, PK_BR_IND},                     /* jmp *%rax */
        {"\xff\x25\x00\x10\x00\x00", 6, PK_BR_IND},     /* jmp *0x1000(%rip) (PLT) */
        {"\xe8\x00\x00\x00\x01", 5, PK_BR_CALL},        /* call rel32 */
        {"\xff\xd0", 2, PK_BR_IND_CALL},                /* call *%rax */
        {"\xff\x14\x25\x00\x10\x00\x00", 7, PK_BR_IND_CALL},
        {"\xc3", 1, PK_BR_RET},
        {"\xc2\x08\x00", 3, PK_BR_RET},                 /* ret $8 */
        {"\xf3\xc3", 2, PK_BR_RET},                     /* rep ret */
        {"\x0f\x05", 2, PK_BR_SYSCALL},
        {"\xf3\xa4", 2, PK_BR_REP},                     /* rep movsb */
        {"\xf3\x48\xab", 3, PK_BR_REP},                 /* rep stosq */
        {"\x48\x89\xc3", 3, PK_BR_NONE},                /* mov %rax,%rbx */
        {"\xf3\x0f\x1e\xfa", 4, PK_BR_NONE},            /* endbr64 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned len = 0;
        enum pk_br_kind k = pk_record_classify((const uint8_t *)cases[i].bytes, cases[i].n, &len);
        if (k != cases[i].kind || len != cases[i].n) {
            pk_test_failed_checks++;
            fprintf(stderr, "case %zu: kind %d len %u, want %d len %u\n", i, k, len, cases[i].kind,
                    cases[i].n);
        }
    }
    unsigned len = 9;
    CHECK(pk_record_classify((const uint8_t *)"\x0f", 1, &len) == PK_BR_NONE && len == 0);
}

/* A64 through the shared decoder: every branch form the plugin meets,
 * the pointer-authenticated ones included; hints are not branches. */
TEST(classify_a64_branch_kinds)
{
    struct { uint32_t w; enum pk_br_kind kind; } cases[] = {
        {0x54000041, PK_BR_COND},     /* b.ne #8 */
        {0xB4000040, PK_BR_COND},     /* cbz x0, #8 */
        {0x35000040, PK_BR_COND},     /* cbnz w0, #8 */
        {0x37180041, PK_BR_COND},     /* tbnz w1, #3, #8 */
        {0x14000001, PK_BR_UNCOND},   /* b #4 */
        {0x94000001, PK_BR_CALL},     /* bl #4 */
        {0xD61F0200, PK_BR_IND},      /* br x16 */
        {0xD61F0A1F, PK_BR_IND},      /* braaz x16 */
        {0xD63F0100, PK_BR_IND_CALL}, /* blr x8 */
        {0xD73F0909, PK_BR_IND_CALL}, /* blraa x8, x9 */
        {0xD65F03C0, PK_BR_RET},      /* ret */
        {0xD65F0BFF, PK_BR_RET},      /* retaa */
        {0xD65F0FFF, PK_BR_RET},      /* retab */
        {0xD4000001, PK_BR_SYSCALL},  /* svc #0 */
        {0xD503233F, PK_BR_NONE},     /* paciasp */
        {0xD503245F, PK_BR_NONE},     /* bti c */
        {0xD503201F, PK_BR_NONE},     /* nop */
        {0xAA0103E0, PK_BR_NONE},     /* mov x0, x1 */
        {0xD4200000, PK_BR_NONE},     /* brk #0 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t b[4];
        pk_st32(b, cases[i].w);
        unsigned len = 0;
        enum pk_br_kind k = pk_record_classify_for(183 /* EM_AARCH64 */, b, 4, &len);
        if (k != cases[i].kind || len != 4) {
            pk_test_failed_checks++;
            fprintf(stderr, "a64 case %zu (%08x): kind %d len %u, want %d\n", i, cases[i].w, k, len,
                    cases[i].kind);
        }
    }
    unsigned len = 9;
    CHECK(pk_record_classify_a64((const uint8_t *)"\x1f\x20", 2, &len) == PK_BR_NONE && len == 0);
    /* the x86 classifier stays the default */
    CHECK(pk_record_classify_for(62, (const uint8_t *)"\xc3", 1, &len) == PK_BR_RET && len == 1);
}

TEST(transition_rules)
{
    pk_tb_info jcc = pk_record_tb_info(0x1000, 0x100e, 2, PK_BR_COND);
    CHECK(pk_record_transition(&jcc, 0x1010) == PK_TR_FALLTHROUGH);
    CHECK(pk_record_transition(&jcc, 0x1000) == PK_TR_TAKEN);
    pk_tb_info rep = pk_record_tb_info(0x2000, 0x2000, 2, PK_BR_REP);
    CHECK(pk_record_transition(&rep, 0x2000) == PK_TR_REPEAT);
    CHECK(pk_record_transition(&rep, 0x2002) == PK_TR_FALLTHROUGH);
    CHECK(pk_record_transition(&rep, 0x5000) == PK_TR_DISCONTINUITY);
    pk_tb_info plain = pk_record_tb_info(0x3000, 0x303d, 3, PK_BR_NONE);
    CHECK(pk_record_transition(&plain, 0x3040) == PK_TR_FALLTHROUGH);
    CHECK(pk_record_transition(&plain, 0x7000) == PK_TR_DISCONTINUITY);   /* signal handler */
    pk_tb_info sys = pk_record_tb_info(0x4000, 0x400e, 2, PK_BR_SYSCALL);
    CHECK(pk_record_transition(&sys, 0x4010) == PK_TR_FALLTHROUGH);
    CHECK(pk_record_transition(&sys, 0x9000) == PK_TR_DISCONTINUITY);     /* sigreturn */
    pk_tb_info ret = pk_record_tb_info(0x5000, 0x5000, 1, PK_BR_RET);
    CHECK(pk_record_transition(&ret, 0x1234) == PK_TR_TAKEN);
    /* a jump table entry that is the next instruction is still a taken branch */
    pk_tb_info ind = pk_record_tb_info(0x6000, 0x6010, 7, PK_BR_IND);
    CHECK(pk_record_transition(&ind, 0x6017) == PK_TR_TAKEN);
    pk_tb_info call = pk_record_tb_info(0x7000, 0x7010, 5, PK_BR_CALL);
    CHECK(pk_tb_end(&call) == 0x7015);
    CHECK(sizeof(pk_tb_info) == 32);
    CHECK(pk_record_transition(&call, 0x7015) == PK_TR_TAKEN);
}

TEST(elf_facts_of_self)
{
    pk_elf_facts f;
    pk_err e;
    CHECK_OK(pk_record_elf_facts("/proc/self/exe", &f, &e), &e);
    CHECK(f.nloads >= 2);
    CHECK(f.type == 2 || f.type == 3);
    uint64_t va;
    CHECK(pk_record_elf_offset_to_vaddr(&f, f.loads[0].offset, &va) && va == f.loads[0].vaddr);
    CHECK(!pk_record_elf_offset_to_vaddr(&f, 1ull << 50, &va));
    CHECK(pk_record_elf_facts("/etc/hostname", &f, &e) == -1 || f.nloads > 0);
    CHECK(pk_record_elf_facts("/nonexistent/x", &f, &e) == -1 && strstr(e.msg, "/nonexistent/x"));
}

int main(void) { return pk_test_main(); }
