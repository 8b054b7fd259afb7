/* test_perf_script.c — the `perf script` text reader: both forms llvm-profgen
 * accepts (LBR-only lines, stack + LBR blocks), mmap events, the inputs where
 * llvm-profgen silently drops samples (accepted here), malformed lines (an
 * error naming line and column), and mutation fuzzing. */
#include "test.h"
#include "perf/perf_data.h"
#include "perf_fixtures.h"

#include <stdlib.h>

/* ---- perf script text ---- */

typedef struct sgot {
    int n, nm;
    pk_sample s[8];
    uint64_t chain[8][8];
    pk_branch br[8][8];
    pk_mmap_event m[4];
    char mname[4][64];
} sgot;

static int sg_sample(void *ctx, const pk_sample *s)
{
    sgot *g = ctx;
    if (g->n < 8) {
        g->s[g->n] = *s;
        for (uint64_t k = 0; k < s->callchain_nr && k < 8; k++)
            g->chain[g->n][k] = s->callchain[k];
        for (uint64_t k = 0; k < s->branch_nr && k < 8; k++)
            g->br[g->n][k] = s->branches[k];
    }
    g->n++;
    return 0;
}
static int sg_mmap(void *ctx, const pk_mmap_event *m)
{
    sgot *g = ctx;
    if (g->nm < 4) {
        g->m[g->nm] = *m;
        snprintf(g->mname[g->nm], 64, "%s", m->filename);
    }
    g->nm++;
    return 0;
}

static int script(const char *text, sgot *g, pk_err *e)
{
    const char *path = pf_tmp_path("s.txt");
    pf_write_file(path, text, strlen(text));
    memset(g, 0, sizeof *g);
    pk_perf_callbacks cb = {.ctx = g, .sample = sg_sample, .mmap = sg_mmap};
    pk_script_stats st;
    return pk_perf_script_read(path, &cb, &st, e);
}

TEST(script_lbr_only_forms)
{
    sgot g;
    pk_err e;
    const char *t =
        "PERF_RECORD_MMAP2 123/123: [0x555555554000(0x2000) @ 0x1000 08:01 4567 0]: r-xp /tmp/a b/prog\n"
        "            4005d0 0x4005c8/0x4005dc/P/-/-/0  0x40062f/0x4005b0/M/X/A/17/COND \n"
        "  cycles:u:      4005d0 0x1/0x2/P/-/-/0\n"
        "cycles:u: 4005d0 0x3/0x4/-/-/-/3\n"
        "\t0x5/0x6/P/-/-/0\n"
        "3\n"
        " 0x7/0x8/P/-/-/0\n"
        "  prog 123/123  1.000: PERF_RECORD_MMAP2 123/124: [0x7f00(0x100) @ 0 <0102030405>]: r-xp [vdso]\n";
    CHECK_OK(script(t, &g, &e), &e);
    CHECK_EQ_U64(g.n, 7);     /* 4 lines + a repeat count of 3 */
    CHECK_EQ_U64(g.s[0].ip, 0x4005d0);
    CHECK_EQ_U64(g.s[0].branch_nr, 2);
    CHECK_EQ_U64(g.br[0][0].from, 0x4005c8);
    CHECK_EQ_U64(g.br[0][0].to, 0x4005dc);
    CHECK_EQ_U64(g.br[0][0].flags, 2);
    CHECK_EQ_U64(g.br[0][1].flags, 1 | 4 | 8 | (17u << 4) | (1u << 20));
    CHECK_EQ_U64(g.s[1].ip, 0x4005d0);
    CHECK_EQ_U64(g.br[1][0].to, 2);
    CHECK_EQ_U64(g.br[2][0].from, 3);
    CHECK_EQ_U64(g.br[2][0].flags, 3u << 4);
    CHECK_EQ_U64(g.s[3].ip, 0);
    CHECK_EQ_U64(g.br[3][0].from, 5);
    CHECK_EQ_U64(g.br[6][0].to, 8);
    CHECK_EQ_U64(g.nm, 2);
    CHECK_EQ_U64(g.m[0].pid, 123);
    CHECK_EQ_U64(g.m[0].addr, 0x555555554000);
    CHECK_EQ_U64(g.m[0].len, 0x2000);
    CHECK_EQ_U64(g.m[0].pgoff, 0x1000);
    CHECK_EQ_U64(g.m[0].maj, 8);
    CHECK_EQ_U64(g.m[0].ino, 4567);
    CHECK_EQ_U64(g.m[0].prot, 5);
    CHECK_EQ_U64(g.m[0].flags, 2);
    CHECK_STR(g.mname[0], "/tmp/a b/prog");
    CHECK(g.m[1].has_build_id);
    CHECK_EQ_U64(g.m[1].build_id_size, 5);
    CHECK_EQ_U64(g.m[1].build_id[4], 5);
    CHECK_EQ_U64(g.m[1].tid, 124);
    CHECK_STR(g.mname[1], "[vdso]");
}

TEST(script_stack_and_lbr_blocks)
{
    sgot g;
    pk_err e;
    const char *t =
        "\t          40062f\n"
        "\t          400613 main+0x13 (/bin/prog)\n"
        "\t          7f0001\n"
        " 0x4005c8/0x4005dc/P/-/-/0  0x40062f/0x4005b0/P/-/-/0\n"
        "\n"
        "          400700\n"
        "  0x1/0x2/P/-/-/0\n"
        "\n";
    CHECK_OK(script(t, &g, &e), &e);
    CHECK_EQ_U64(g.n, 2);
    CHECK_EQ_U64(g.s[0].callchain_nr, 3);
    CHECK_EQ_U64(g.chain[0][0], 0x40062f);
    CHECK_EQ_U64(g.chain[0][1], 0x400613);
    CHECK_EQ_U64(g.chain[0][2], 0x7f0001);
    CHECK_EQ_U64(g.s[0].ip, 0x40062f);
    CHECK_EQ_U64(g.s[0].branch_nr, 2);
    CHECK_EQ_U64(g.br[0][1].to, 0x4005b0);
    CHECK_EQ_U64(g.s[1].callchain_nr, 1);   /* two leading spaces: still an LBR line */
    CHECK_EQ_U64(g.br[1][0].from, 1);
}

TEST(script_empty_branch_stacks_in_both_forms)
{
    sgot g;
    pk_err e;
    /* LBR-only: a sample with an empty stack prints only its ip */
    CHECK_OK(script("           401250\n           401251 0x1/0x2/P/-/-/1/\n           401252\n", &g, &e), &e);
    CHECK_EQ_U64(g.n, 3);
    CHECK_EQ_U64(g.s[0].ip, 0x401250);
    CHECK_EQ_U64(g.s[0].branch_nr, 0);
    CHECK_EQ_U64(g.s[0].callchain_nr, 0);
    CHECK_EQ_U64(g.s[1].branch_nr, 1);
    CHECK_EQ_U64(g.s[2].ip, 0x401252);
    CHECK_EQ_U64(g.s[2].branch_nr, 0);
    /* stack + LBR: a block ended by a blank line had an empty stack */
    CHECK_OK(script("\n\t  12a5\n\t  1271\n 0x1/0x2/P/-/-/1/\n\n\t  12a6\n\n\t  12a7\n 0x3/0x4/M/-/-/1/\n", &g, &e), &e);
    CHECK_EQ_U64(g.n, 3);
    CHECK_EQ_U64(g.s[0].callchain_nr, 2);
    CHECK_EQ_U64(g.s[1].callchain_nr, 1);
    CHECK_EQ_U64(g.s[1].branch_nr, 0);
    CHECK_EQ_U64(g.chain[1][0], 0x12a6);
    CHECK_EQ_U64(g.s[2].branch_nr, 1);
    CHECK_EQ_U64(g.chain[2][0], 0x12a7);
}

static void script_error(const char *text, const char *needle)
{
    sgot g;
    pk_err e;
    e.msg[0] = 0;
    CHECK(script(text, &g, &e) != 0);
    if (!strstr(e.msg, needle)) {
        pk_test_failed_checks++;
        fprintf(stderr, "script error \"%s\" does not mention \"%s\"\n", e.msg, needle);
    }
}

TEST(script_malformed_lines_are_errors_with_line_and_column)
{
    script_error(" 0x1/0x2/P 0x3/0x4\n 0x5/0xZZ/P\n", "line 2, column 6");
    script_error(" 0x1/0x2/P/-/-/0 junk\n", "line 1, column 18");
    script_error("   400100\n   hello\n", "line 2, column 4");
    script_error("   400100\n   400200\n", "no LBR line");
    script_error("   400100\n   400200\n0x1/0x2 zz\n", "line 3, column 9");
    script_error(" 0x1/2/P\n", "line 1");
    script_error("PERF_RECORD_MMAP2 1/1: [0x10(0x20) @ 0 08:01 5 0]: r-zp /x\n 0x1/0x2\n", "line 1, column");
    script_error("PERF_RECORD_MMAP2 1/1: [0x10 @ 0]: r-xp /x\n", "line 1");
    script_error("", "no LBR line");
    script_error("foo bar 0x1/0x2/P\n", "line 1, column 1");
}

static uint64_t lcg(uint64_t *x)
{
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    return *x >> 33;
}

TEST(mutated_script_text_gives_errors_never_crashes)
{
    const char *t =
        "PERF_RECORD_MMAP2 123/123: [0x555555554000(0x2000) @ 0x1000 08:01 4567 0]: r-xp /tmp/prog\n"
        "\t          40062f\n\t          400613\n"
        " 0x4005c8/0x4005dc/P/-/-/0  0x40062f/0x4005b0/P/-/-/0\n\n"
        "  cycles:u:      4005d0 0x1/0x2/P/-/-/0\n2\n 0x7/0x8/M/X/A/3/COND\n";
    size_t n = strlen(t);
    char *d = malloc(n);
    const char *path = pf_tmp_path("fuzz.txt");
    uint64_t seed = 5;
    int errors = 0;
    for (int it = 0; it < 1500; it++) {
        memcpy(d, t, n);
        size_t len = n;
        int k = 1 + (int)(lcg(&seed) % 4);
        for (int j = 0; j < k; j++) {
            size_t at = lcg(&seed) % n;
            switch (lcg(&seed) % 4) {
            case 0: d[at] = (char)lcg(&seed); break;
            case 1: d[at] = "0x/ \n:PM-9"[lcg(&seed) % 10]; break;
            case 2: d[at] = '\n'; break;
            default: if (lcg(&seed) % 4 == 0) len = at; break;
            }
        }
        pf_write_file(path, d, len);
        sgot g;
        memset(&g, 0, sizeof g);
        pk_perf_callbacks cb = {.ctx = &g, .sample = sg_sample, .mmap = sg_mmap};
        pk_err e;
        if (pk_perf_script_read(path, &cb, NULL, &e)) {
            errors++;
            CHECK(strstr(e.msg, "fuzz.txt") != NULL);
        }
    }
    CHECK(errors > 0);
    free(d);
}

int main(void) { return pk_test_main(); }
