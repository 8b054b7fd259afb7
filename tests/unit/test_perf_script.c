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
    const char *path = pk_test_path("s.txt");
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

static int script_stats(const char *text, sgot *g, pk_script_stats *st, pk_err *e)
{
    const char *path = pk_test_path("s.txt");
    pf_write_file(path, text, strlen(text));
    memset(g, 0, sizeof *g);
    pk_perf_callbacks cb = {.ctx = g, .sample = sg_sample, .mmap = sg_mmap};
    return pk_perf_script_read(path, &cb, st, e);
}

/* perf 6.1: call chains relative to their file (address - map start +
 * page offset), branch stacks absolute. ld.so's file range covers the
 * program's: the program's frames fit both, the sample's branches decide. */
#define MMAPS_61 \
    "PERF_RECORD_MMAP2 77/77: [0x4000001000(0x1000) @ 0x1000 <f90c76>]: r-xp /tmp/so\n" \
    "PERF_RECORD_MMAP2 77/77: [0x4002808000(0x26000) @ 0x1000 <7ebc65>]: r-xp /lib/ld-linux-x86-64.so.2\n" \
    "PERF_RECORD_MMAP2 77/77: [0x4002871000(0x156000) @ 0x26000 <93ac61>]: r-xp /lib/libc.so.6\n"

TEST(script_file_relative_call_chains_are_made_absolute)
{
    sgot g;
    pk_err e;
    pk_script_stats st;
    const char *t = MMAPS_61
        "\n"
        "\t            12f0\n"
        "\t            1215\n"
        "\t           2724a\n"
        "\t            1081\n"
        " 0x4000001313/0x40000012f0/P/-/-/0/COND  0x4000001383/0x4000001304/P/-/-/0/RET \n";
    CHECK_OK(script_stats(t, &g, &st, &e), &e);
    CHECK_EQ_U64(g.n, 1);
    CHECK_EQ_U64(g.s[0].callchain_nr, 4);
    CHECK_EQ_U64(g.chain[0][0], 0x40000012f0);
    CHECK_EQ_U64(g.chain[0][1], 0x4000001215);
    CHECK_EQ_U64(g.chain[0][2], 0x400287224a);   /* only libc's range holds it */
    CHECK_EQ_U64(g.chain[0][3], 0x4000001081);
    CHECK_EQ_U64(g.s[0].ip, 0x40000012f0);
    CHECK_EQ_U64(g.s[0].pid, 0);                 /* not printed */
    CHECK_EQ_U64(st.frames, 4);
    CHECK_EQ_U64(st.frames_rebased, 4);
    CHECK_EQ_U64(st.frames_guessed, 3);          /* 12f0, 1215, 1081 fit ld.so too */
    CHECK_EQ_U64(st.frames_guessed_lbr, 3);
    CHECK_EQ_U64(st.frames_unplaced, 0);
    CHECK(st.relative);
    char w[512];
    CHECK(pk_script_stats_warning(&st, w, sizeof w) > 0);
    CHECK(strstr(w, "3 of 4 call-chain addresses") != NULL);
    CHECK(strstr(w, "-F ip,dso,brstack") != NULL);
    /* a tiny buffer: truncated, terminated */
    CHECK_EQ_U64(pk_script_stats_warning(&st, w, 8), 7);
    CHECK_EQ_U64(strlen(w), 7);

    /* with the file named on each line, nothing is guessed; a name with a
     * space, "(dso)" after branch addresses too */
    t = "PERF_RECORD_MMAP2 77/77: [0x4000001000(0x1000) @ 0x1000 <f90c76>]: r-xp /tmp/a b/so\n"
        "PERF_RECORD_MMAP2 77/77: [0x4002808000(0x26000) @ 0x1000 <7ebc65>]: r-xp /lib/ld.so\n"
        "\n"
        "\t            12f0 addVectorHead+0x20 (/tmp/a b/so)\n"
        "\t            1300 _dl_start+0x10 (/lib/ld.so)\n"
        "\t            1215 f(int, char) (/tmp/a b/so)\n"
        " 0x4000001313(/tmp/a b/so)/0x40000012f0(/tmp/a b/so)/P/-/-/0/COND \n";
    CHECK_OK(script_stats(t, &g, &st, &e), &e);
    CHECK_EQ_U64(g.chain[0][0], 0x40000012f0);
    CHECK_EQ_U64(g.chain[0][1], 0x4002808300);
    CHECK_EQ_U64(g.chain[0][2], 0x4000001215);
    CHECK_EQ_U64(g.br[0][0].from, 0x4000001313);
    CHECK_EQ_U64(g.br[0][0].to, 0x40000012f0);
    CHECK_EQ_U64(g.br[0][0].flags, 2 | (1u << 20));
    CHECK_EQ_U64(st.frames_rebased, 3);
    CHECK_EQ_U64(st.frames_guessed, 0);
    CHECK_EQ_U64(pk_script_stats_warning(&st, w, sizeof w), 0);
    CHECK_STR(w, "");
}

TEST(script_absolute_call_chains_stay_as_they_are)
{
    sgot g;
    pk_err e;
    pk_script_stats st;
    /* pgokit dump --perfscript, a fixed perf, llvm-profgen's test inputs */
    const char *t = MMAPS_61
        "\n\t      40000012f0\n\t      4000001215\n\t      400287224a\n\t      7f0000001234\n"
        " 0x4000001313/0x40000012f0/P/-/-/0/COND \n"
        "\n\t      4000001380\n\t      4000001304 [unknown] ([unknown])\n"
        " 0x4000001374/0x4000001380/P/-/-/0/UNCOND \n";
    CHECK_OK(script_stats(t, &g, &st, &e), &e);
    CHECK_EQ_U64(g.n, 2);
    CHECK_EQ_U64(g.chain[0][0], 0x40000012f0);
    CHECK_EQ_U64(g.chain[0][2], 0x400287224a);
    CHECK_EQ_U64(g.chain[0][3], 0x7f0000001234);
    CHECK_EQ_U64(g.chain[1][1], 0x4000001304);
    CHECK_EQ_U64(st.frames, 6);
    CHECK_EQ_U64(st.frames_rebased, 0);
    CHECK_EQ_U64(st.frames_unmapped, 1);       /* 7f0000001234: in no mapping */
    CHECK(!st.relative);
    /* and an [unknown] frame in relative text: printed as it is, in no mapping */
    t = MMAPS_61 "\n\t            12f0\n\t      7f0000001234 ([unknown])\n"
        " 0x4000001313/0x40000012f0/P/-/-/0/COND \n";
    CHECK_OK(script_stats(t, &g, &st, &e), &e);
    CHECK_EQ_U64(g.chain[0][0], 0x40000012f0);
    CHECK_EQ_U64(g.chain[0][1], 0x7f0000001234);
    CHECK_EQ_U64(st.frames_unmapped, 1);
    CHECK_EQ_U64(st.frames_unplaced, 0);
}

TEST(script_pid_headers_and_per_process_mappings)
{
    sgot g;
    pk_err e;
    pk_script_stats st;
    /* two processes map the program at different addresses; perf prints
     * the pid ("%5d " or pid/tid) on a header line above the call chain.
     * A pid of 5 digits starts at column 1: not a repeat count. */
    const char *t =
        "PERF_RECORD_MMAP2 12345/12345: [0x555500001000(0x1000) @ 0x1000 <aa>]: r-xp /tmp/so\n"
        "PERF_RECORD_MMAP2 77/77: [0x4000001000(0x1000) @ 0x1000 <aa>]: r-xp /tmp/so\n"
        "12345 \n"
        "\t            1215\n"
        "\t            1081\n"
        " 0x555500001313/0x555500001215/P/-/-/0/COND \n"
        "   77/78  \n"
        "\t            1215\n"
        " 0x4000001313/0x4000001215/P/-/-/0/COND \n"
        "so  77/77   2088.210594: branches:u: \n"
        "\t            1081 _start+0x21 (/tmp/so)\n"
        " 0x4000001313/0x4000001081/P/-/-/0/COND \n";
    CHECK_OK(script_stats(t, &g, &st, &e), &e);
    CHECK_EQ_U64(g.n, 3);
    CHECK_EQ_U64(g.s[0].pid, 12345);
    CHECK_EQ_U64(g.chain[0][0], 0x555500001215);
    CHECK_EQ_U64(g.chain[0][1], 0x555500001081);
    CHECK_EQ_U64(g.s[1].pid, 77);
    CHECK_EQ_U64(g.s[1].tid, 78);
    CHECK_EQ_U64(g.chain[1][0], 0x4000001215);
    CHECK_EQ_U64(g.s[2].pid, 77);
    CHECK_EQ_U64(g.chain[2][0], 0x4000001081);
    CHECK_EQ_U64(st.frames_guessed, 0);
    /* without pids: both mappings fit; the branch stack picks the process */
    t = "PERF_RECORD_MMAP2 12345/12345: [0x555500001000(0x1000) @ 0x1000 <aa>]: r-xp /tmp/so\n"
        "PERF_RECORD_MMAP2 77/77: [0x4000001000(0x1000) @ 0x1000 <aa>]: r-xp /tmp/so\n"
        "\n\t            1215\n\t            1081\n"
        " 0x555500001313/0x555500001215/P/-/-/0/COND \n";
    CHECK_OK(script_stats(t, &g, &st, &e), &e);
    CHECK_EQ_U64(g.chain[0][0], 0x555500001215);
    CHECK_EQ_U64(g.chain[0][1], 0x555500001081);
    CHECK_EQ_U64(st.frames_guessed, 2);
    CHECK_EQ_U64(st.frames_guessed_lbr, 2);
    /* LBR-only lines with perf's fields: pid, ip, sym, (dso) */
    t = "11864        4000001304 0x4000001383/0x4000001304/P/-/-/0/RET \n"
        "  so 11864/11865  2314.225432:        4000001340 subVectorHead (/tmp/so) 0x4000001361/0x4000001340/P/-/-/0/COND\n";
    CHECK_OK(script_stats(t, &g, &st, &e), &e);
    CHECK_EQ_U64(g.n, 2);
    CHECK_EQ_U64(g.s[0].pid, 11864);
    CHECK_EQ_U64(g.s[0].ip, 0x4000001304);
    CHECK_EQ_U64(g.s[1].pid, 11864);
    CHECK_EQ_U64(g.s[1].tid, 11865);
    CHECK_EQ_U64(g.s[1].ip, 0x4000001340);
    CHECK_EQ_U64(g.br[1][0].from, 0x4000001361);
    /* a symbol that looks like hex is no ip; an ip no pid */
    t = "   77/77        4000001304 add 0x4000001383/0x4000001304/P/-/-/0/RET \n"
        "       4000001340 face+0x3 0x4000001361/0x4000001340/P/-/-/0/COND\n"
        "   77        4000001341 beef 0x4000001361/0x4000001340/P/-/-/0/COND\n";
    CHECK_OK(script_stats(t, &g, &st, &e), &e);
    CHECK_EQ_U64(g.n, 3);
    CHECK_EQ_U64(g.s[0].pid, 77);
    CHECK_EQ_U64(g.s[0].ip, 0x4000001304);
    CHECK_EQ_U64(g.s[1].pid, 0);
    CHECK_EQ_U64(g.s[1].ip, 0x4000001340);
    CHECK_EQ_U64(g.s[2].pid, 77);
    CHECK_EQ_U64(g.s[2].ip, 0x4000001341);
}

TEST(script_remapped_files_and_missing_mmap_lines)
{
    sgot g;
    pk_err e;
    pk_script_stats st;
    /* an exec: the new image's mapping over the old addresses retires the
     * old one, whose file range would otherwise fit too */
    const char *t =
        "PERF_RECORD_MMAP2 9/9: [0x4000001000(0x2000) @ 0x1000 <aa>]: r-xp /tmp/old\n"
        "PERF_RECORD_MMAP2 9/9: [0x4000001000(0x1000) @ 0x1000 <bb>]: r-xp /tmp/new\n"
        "PERF_RECORD_MMAP2 9/9: [0x4000100000(0x2000) @ 0x1000 <cc>]: r-xp /tmp/lib.so\n"
        "\n\t            1200\n\t            2100\n"
        " 0x4000001313/0x4000001200/P/-/-/0/COND \n";
    CHECK_OK(script_stats(t, &g, &st, &e), &e);
    CHECK_EQ_U64(g.chain[0][0], 0x4000001200);
    CHECK_EQ_U64(g.chain[0][1], 0x4000101100);   /* only lib.so's range holds 0x2100 now */
    CHECK_EQ_U64(st.frames_guessed, 1);          /* 0x1200: new or lib.so */
    /* relative chains without any mmap line (perf script without
     * --show-mmap-events): the page offsets give the form away; counted */
    t = "\n\t            1215\n\t            1081\n"
        " 0x401313/0x401215/P/-/-/0/COND \n";
    CHECK_OK(script_stats(t, &g, &st, &e), &e);
    CHECK_EQ_U64(g.chain[0][0], 0x1215);
    CHECK_EQ_U64(st.frames_unplaced, 2);
    char w[512];
    CHECK(pk_script_stats_warning(&st, w, sizeof w) > 0);
    CHECK(strstr(w, "2 of 2 call-chain addresses") != NULL);
    CHECK(strstr(w, "--show-mmap-events") != NULL);
    /* a named file with no mmap line, in relative text: unplaced too */
    t = MMAPS_61 "\n\t            12f0 (/tmp/so)\n\t            1500 (/opt/jit.so)\n"
        " 0x4000001313/0x40000012f0/P/-/-/0/COND \n";
    CHECK_OK(script_stats(t, &g, &st, &e), &e);
    CHECK_EQ_U64(g.chain[0][0], 0x40000012f0);
    CHECK_EQ_U64(g.chain[0][1], 0x1500);
    CHECK_EQ_U64(st.frames_unplaced, 1);
}

/* A malformed line is skipped and counted, the samples around it read;
 * the whole text is refused only when no sample remains. Either way the
 * first bad line is named (line and column). nsamples: samples passed on
 * (a text without LBR lines passes its IP-only samples, then fails). */
static void script_skips(const char *text, const char *needle, bool refused, int nsamples, uint64_t skipped_samples)
{
    sgot g;
    pk_err e;
    e.msg[0] = 0;
    const char *path = pk_test_path("s.txt");
    pf_write_file(path, text, strlen(text));
    memset(&g, 0, sizeof g);
    pk_perf_callbacks cb = {.ctx = &g, .sample = sg_sample, .mmap = sg_mmap};
    pk_script_stats st;
    int rc = pk_perf_script_read(path, &cb, &st, &e);
    const char *where = rc ? e.msg : st.first_skipped;
    CHECK_EQ_U64(rc != 0, refused);
    CHECK_EQ_U64(g.n, nsamples);
    CHECK_EQ_U64(st.samples_skipped, skipped_samples);
    if (!strstr(where, needle)) {
        pk_test_failed_checks++;
        fprintf(stderr, "\"%s\" does not mention \"%s\"\n", where, needle);
    }
}

TEST(script_malformed_lines_are_skipped_and_named)
{
    script_skips(" 0x1/0x2/P 0x3/0x4\n 0x5/0xZZ/P\n", "line 2, column 6", false, 1, 0);
    script_skips(" 0x1/0x2/P/-/-/0 junk\n", "line 1, column 18", true, 0, 0);
    /* a bad line inside a call stack: that sample goes, the next stays */
    script_skips("   400100\n   hello\n   400200\n 0x1/0x2/P\n\n   400300\n 0x3/0x4/P\n", "line 2, column 4", false, 1, 1);
    script_skips("   400100\n   400200\n", "no LBR line", true, 2, 0);
    script_skips("   400100\n   400200\n0x1/0x2 zz\n", "line 3, column 9", true, 0, 1);
    script_skips(" 0x1/2/P\n", "line 1", true, 0, 0);
    script_skips("PERF_RECORD_MMAP2 1/1: [0x10(0x20) @ 0 08:01 5 0]: r-zp /x\n 0x1/0x2\n", "line 1, column", false, 1, 0);
    script_skips("PERF_RECORD_MMAP2 1/1: [0x10 @ 0]: r-xp /x\n", "line 1", true, 0, 0);
    script_skips("", "no LBR line", true, 0, 0);
    script_skips("foo bar 0x1/0x2/P\n", "line 1, column 1", true, 0, 0);
    /* a wrapper's banner and a comment */
    script_skips("=== perf script of run 7 ===\n 0x1/0x2/P\n# 1 sample\n 0x3/0x4/P\n", "line 1, column 1", false, 2, 0);
}

/* fuzz_perf_script: a pid/tid (or a pid alone) as the very last bytes of the
 * text was read with strtoll, past the end of the (not NUL-terminated)
 * bytes: off the end of the mapping for a file of a multiple of the page
 * size. Read from an exact-size buffer here (ASan sees any byte past it). */
TEST(script_number_at_the_very_end_of_the_text)
{
    static const char *texts[] = {
        "3\n590/25: \xdf @\xdf\xdf\xe6" "0: 0/2",  /* the fuzzer's input */
        "cycles: prog 123/456",
        "cycles: 77",
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        size_t n = strlen(texts[i]);
        char *exact = malloc(n);
        memcpy(exact, texts[i], n);
        pk_err e;
        sgot g;
        memset(&g, 0, sizeof g);
        pk_perf_callbacks cb = {.ctx = &g, .sample = sg_sample};
        pk_perf_script_read_mem(exact, n, "end.txt", &cb, NULL, &e);
        free(exact);
    }
    sgot g;
    pk_err e;
    CHECK_OK(script("prog 4242/4243 0x401000 0x1/0x2/P/-/-/0\n", &g, &e), &e);
    CHECK_EQ_U64(g.n, 1);
    CHECK_EQ_U64(g.s[0].pid, 4242);
    CHECK_EQ_U64(g.s[0].tid, 4243);
}

/* A repeat count: one callback of that weight for callbacks that take
 * weights (a 1e9 count in a tiny file was 1e9 callbacks, minutes of
 * profgen: found by fuzz_perf_script), else as many callbacks. */
static int count_weight(void *ctx, const pk_sample *s)
{
    uint64_t *n = ctx;
    n[0]++;
    n[1] += pk_sample_weight(s);
    return 0;
}

TEST(script_repeat_count_is_a_weight)
{
    const char *t = "1000000000\n 0x401000/0x401100/P/-/-/0 \n3\n 0x401000/0x401100/P/-/-/0 \n";
    const char *path = pk_test_path("rep.txt");
    pf_write_file(path, t, strlen(t));
    uint64_t n[2] = {0, 0};
    pk_perf_callbacks cb = {.ctx = n, .sample = count_weight, .sample_weights = true};
    pk_script_stats st;
    pk_err e;
    CHECK_OK(pk_perf_script_read(path, &cb, &st, &e), &e);
    CHECK_EQ_U64(n[0], 2);
    CHECK_EQ_U64(n[1], 1000000003ull);
    CHECK_EQ_U64(st.samples, 1000000003ull);
    cb.sample_weights = false;
    const char *small = "3\n 0x401000/0x401100/P/-/-/0 \n";
    pf_write_file(path, small, strlen(small));
    n[0] = n[1] = 0;
    CHECK_OK(pk_perf_script_read(path, &cb, &st, &e), &e);
    CHECK_EQ_U64(n[0], 3);
    CHECK_EQ_U64(n[1], 3);
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
    const char *path = pk_test_path("fuzz.txt");
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
