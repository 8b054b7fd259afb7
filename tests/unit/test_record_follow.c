/* test_record_follow.c — following forks and execs in emulated recording:
 * what an exec would run (pk_record_exec_plan: the kernel's checks and #!
 * scripts), the per-process files of a session, their time-ordered merge
 * into one perf.data, the merge of exact counts, the qemu command line of a
 * session, and the per-program sample tally. */
#include "test.h"
#include "perf/perf_data.h"
#include "record/record.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static void write_file(const char *path, const void *data, size_t n, mode_t mode)
{
    unlink(path);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    CHECK(write(fd, data, n) == (ssize_t)n);
    close(fd);
    chmod(path, mode);
}

/* A minimal ELF header: class, machine, type. */
static void write_elf(const char *path, int cls, uint16_t machine, uint16_t type, mode_t mode)
{
    uint8_t h[64] = {0x7f, 'E', 'L', 'F', (uint8_t)cls, 1, 1};
    pk_st16(h + 16, type);
    pk_st16(h + 18, machine);
    write_file(path, h, sizeof h, mode);
}

static char *joined_argv(char **v, size_t n)
{
    static char buf[2048];
    buf[0] = 0;
    for (size_t i = 0; i < n; i++) {
        if (i)
            strcat(buf, "|");
        strcat(buf, v[i]);
    }
    CHECK(v[n] == NULL);
    return buf;
}

TEST(exec_plan_elf_keeps_argv)
{
    char *elf = pk_test_path("prog");
    write_elf(elf, 2, 62, 3, 0755);
    char *argv[] = {"myname", "-a", "b c", NULL};
    pk_exec_plan p;
    pk_err e;
    CHECK_OK(pk_record_exec_plan(elf, argv, &p, &e), &e);
    CHECK_EQ_U64(p.how, PK_EXEC_EMULATE);
    CHECK_STR(p.elf, elf);
    CHECK_STR(joined_argv(p.argv, p.argc), "myname|-a|b c");
    pk_record_exec_plan_free(&p);
}

TEST(exec_plan_script_chain_builds_kernel_argv)
{
    /* script -> interp script (with an argument) -> ELF, as binfmt_script:
     * [elf, opt2, interp, opt1, script, args...] */
    char *elf = pk_test_path("interp_elf"), *mid = pk_test_path("interp.sh"), *top = pk_test_path("run.sh");
    write_elf(elf, 2, 62, 2, 0755);
    char buf[2048];
    snprintf(buf, sizeof buf, "#!%s  -x  \nwhatever\n", elf);
    write_file(mid, buf, strlen(buf), 0755);
    snprintf(buf, sizeof buf, "#! \t%s -e one two\n", mid);
    write_file(top, buf, strlen(buf), 0755);
    char *argv[] = {"ignored-argv0", "A", NULL};
    pk_exec_plan p;
    pk_err e;
    CHECK_OK(pk_record_exec_plan(top, argv, &p, &e), &e);
    CHECK_EQ_U64(p.how, PK_EXEC_EMULATE);
    CHECK_STR(p.elf, elf);
    char want[4096];
    snprintf(want, sizeof want, "%s|-x|%s|-e one two|%s|A", elf, mid, top);
    CHECK_STR(joined_argv(p.argv, p.argc), want);
    pk_record_exec_plan_free(&p);
}

TEST(exec_plan_failures_are_the_kernels)
{
    pk_exec_plan p;
    pk_err e;
    char *argv[] = {"x", NULL};
    CHECK_OK(pk_record_exec_plan(pk_test_path("does-not-exist"), argv, &p, &e), &e);
    CHECK_EQ_U64(p.how, PK_EXEC_FAILS);
    CHECK_EQ_U64(p.err, ENOENT);
    CHECK_OK(pk_record_exec_plan(pk_test_tmpdir(), argv, &p, &e), &e);   /* a directory */
    CHECK_EQ_U64(p.err, EACCES);
    char *text = pk_test_path("text");
    write_file(text, "echo hi\n", 8, 0755);
    CHECK_OK(pk_record_exec_plan(text, argv, &p, &e), &e);   /* the shell runs it itself */
    CHECK_EQ_U64(p.how, PK_EXEC_FAILS);
    CHECK_EQ_U64(p.err, ENOEXEC);
    char *noint = pk_test_path("noint.sh");
    write_file(noint, "#!/nonexistent/interp\n", 22, 0755);
    CHECK_OK(pk_record_exec_plan(noint, argv, &p, &e), &e);
    CHECK_EQ_U64(p.how, PK_EXEC_FAILS);
    CHECK_EQ_U64(p.err, ENOENT);
    char *empty = pk_test_path("empty.sh");
    write_file(empty, "#!  \n", 5, 0755);
    CHECK_OK(pk_record_exec_plan(empty, argv, &p, &e), &e);
    CHECK_EQ_U64(p.err, ENOEXEC);
    char *loop = pk_test_path("loop.sh");
    char buf[1200];
    snprintf(buf, sizeof buf, "#!%s\n", loop);
    write_file(loop, buf, strlen(buf), 0755);
    CHECK_OK(pk_record_exec_plan(loop, argv, &p, &e), &e);
    CHECK_EQ_U64(p.err, ELOOP);
    char *nox = pk_test_path("nox");
    write_elf(nox, 2, 62, 3, 0644);
    CHECK_OK(pk_record_exec_plan(nox, argv, &p, &e), &e);
    CHECK_EQ_U64(p.how, PK_EXEC_FAILS);   /* no x bit at all: EACCES even for root */
}

TEST(exec_plan_other_programs_run_natively)
{
    pk_exec_plan p;
    pk_err e;
    char *argv[] = {"x", NULL};
    char *i386 = pk_test_path("i386");
    write_elf(i386, 1, 3, 2, 0755);
    CHECK_OK(pk_record_exec_plan(i386, argv, &p, &e), &e);
    CHECK_EQ_U64(p.how, PK_EXEC_NATIVE);
    CHECK(strstr(p.why, "32-bit") != NULL);
    char *rv = pk_test_path("riscv");
    write_elf(rv, 2, 243, 3, 0755);
    CHECK_OK(pk_record_exec_plan(rv, argv, &p, &e), &e);
    CHECK_EQ_U64(p.how, PK_EXEC_NATIVE);
    CHECK(strstr(p.why, "machine 243") != NULL);
    CHECK(p.argv == NULL && p.elf == NULL);
}

/* aarch64 programs go to qemu-aarch64: the plan names the machine, and
 * whether the program is dynamic (then it needs the cross sysroot). */
TEST(exec_plan_aarch64_static_and_dynamic)
{
    pk_exec_plan p;
    pk_err e;
    char *argv[] = {"x", NULL};
    char *arm = pk_test_path("arm64");
    write_elf(arm, 2, 183, 3, 0755);
    CHECK_OK(pk_record_exec_plan(arm, argv, &p, &e), &e);
    CHECK_EQ_U64(p.how, PK_EXEC_EMULATE);
    CHECK_EQ_U64(p.machine, 183);
    CHECK(!p.dynamic);
    pk_record_exec_plan_free(&p);
    /* one program header, PT_INTERP, right after the ELF header */
    uint8_t h[64 + 56] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
    pk_st16(h + 16, 3);
    pk_st16(h + 18, 183);
    pk_st64(h + 32, 64);
    pk_st16(h + 54, 56);
    pk_st16(h + 56, 1);
    pk_st32(h + 64, 3);
    char *dyn = pk_test_path("arm64dyn");
    write_file(dyn, h, sizeof h, 0755);
    CHECK_OK(pk_record_exec_plan(dyn, argv, &p, &e), &e);
    CHECK_EQ_U64(p.how, PK_EXEC_EMULATE);
    CHECK_EQ_U64(p.machine, 183);
    CHECK(p.dynamic);
    pk_record_exec_plan_free(&p);
    char *x86 = pk_test_path("x86prog");
    write_elf(x86, 2, 62, 2, 0755);
    CHECK_OK(pk_record_exec_plan(x86, argv, &p, &e), &e);
    CHECK_EQ_U64(p.machine, 62);
    CHECK(!p.dynamic);
    pk_record_exec_plan_free(&p);
}

TEST(qemu_command_of_a_session)
{
    pk_record_opts o = {.output = "/t/p.data", .period = 999, .lbr_depth = 16, .callchain = true,
                        .exact_counts = "/t/e.bin", .seed = 7, .session_dir = "/t/p.data.tmp.9.d",
                        .comm = "run.sh", .argv0 = "/bin/sh"};
    char *prog[] = {"/usr/bin/dash", "./run.sh", "x", NULL};
    pk_vec v;
    pk_err e;
    CHECK_OK(pk_record_qemu_argv("qemu-x86_64", "/b/pgokit-lbr.so", &o, prog, &v, &e), &e);
    char buf[2048] = "";
    for (size_t i = 0; i + 1 < v.len; i++)
        strcat(strcat(buf, i ? " " : ""), PK_VEC_AT(&v, char *, i));
    CHECK_STR(buf, "qemu-x86_64 -plugin /b/pgokit-lbr.so,dir=/t/p.data.tmp.9.d,period=999,depth=16,"
                   "callchain=on,seed=7,comm=run.sh,exe=/usr/bin/dash,exact=on -0 /bin/sh /usr/bin/dash ./run.sh x");
    pk_record_argv_free(&v);
    o.session_dir = "/t/a,b";
    CHECK(pk_record_qemu_argv("q", "/p.so", &o, prog, &v, &e) == -1);
    CHECK(strstr(e.msg, "/t/a,b") != NULL);
}

TEST(perf_commands_inherit_to_children)
{
    /* perf record follows children unless told not to: neither -i nor
     * --no-inherit may appear, in any mode */
    pk_record_opts o = {.output = "p.data", .period = 1000, .callchain = true};
    char *prog[] = {"./app", NULL};
    pk_vec v;
    pk_err e;
    for (int mode = 0; mode < 3; mode++) {
        if (mode == 0)
            CHECK_OK(pk_record_hw_argv(PK_VENDOR_INTEL, false, &o, prog, &v, &e), &e);
        else if (mode == 1)
            CHECK_OK(pk_record_hw_argv(PK_VENDOR_AMD, true, &o, prog, &v, &e), &e);
        else
            CHECK_OK(pk_record_perf_ip_argv("cpu-clock:u", &o, prog, &v, &e), &e);
        for (size_t i = 0; i + 1 < v.len; i++) {
            const char *a = PK_VEC_AT(&v, char *, i);
            CHECK(strcmp(a, "-i") != 0 && strcmp(a, "--no-inherit") != 0);
        }
        pk_record_argv_free(&v);
    }
}

/* ---- per-process files and their merge ---- */

static pk_perf_writer *open_writer(const char *path, bool branches)
{
    pk_perf_writer_opts o;
    memset(&o, 0, sizeof o);
    o.event_config = 4;
    o.sample_period = 100;
    o.callchain = true;
    o.branch_stack = branches;
    pk_err e;
    pk_perf_writer *w = pk_perf_writer_open(path, &o, &e);
    CHECK(w != NULL);
    return w;
}

static void put_sample(pk_perf_writer *w, uint32_t pid, uint64_t t)
{
    uint64_t chain[3] = {PK_CONTEXT_USER, 0x1000 + t, 0x2000};
    pk_branch br = {0x3000, 0x4000 + t, 0};
    pk_sample s;
    memset(&s, 0, sizeof s);
    s.pid = s.tid = pid;
    s.ip = 0x1000 + t;
    s.time = t;
    s.callchain = chain;
    s.callchain_nr = 3;
    s.branches = &br;
    s.branch_nr = 1;
    pk_err e;
    CHECK(pk_perf_write_sample(w, &s, &e) == 0);
}

/* A process file: COMM (or FORK) at t0, an MMAP2, samples at the times given. */
static void write_proc(const char *path, uint32_t pid, uint32_t ppid, uint64_t t0, const uint64_t *times, size_t n)
{
    pk_perf_writer *w = open_writer(path, true);
    if (!w)
        return;
    pk_err e;
    if (ppid) {
        pk_task_event f = {true, pid, ppid, pid, ppid, t0};
        CHECK(pk_perf_write_task(w, &f, &e) == 0);
    } else {
        pk_comm_event c = {pid, pid, true, "prog", t0};
        CHECK(pk_perf_write_comm(w, &c, &e) == 0);
    }
    pk_mmap_event m;
    memset(&m, 0, sizeof m);
    m.is_mmap2 = true;
    m.pid = m.tid = pid;
    m.addr = 0x1000;
    m.len = 0x10000;
    m.filename = "/bin/prog";
    m.time = t0 + 1;
    m.has_build_id = true;
    m.build_id_size = 20;
    memset(m.build_id, (int)pid, 20);
    CHECK(pk_perf_write_mmap(w, &m, &e) == 0);
    for (size_t i = 0; i < n; i++)
        put_sample(w, pid, times[i]);
    CHECK(pk_perf_writer_close(w, &e) == 0);
}

typedef struct seen {
    uint64_t last, n, samples, comms, forks, mmaps, bad_order, branch_nr;
    uint64_t order[64];
} seen;

static void saw(seen *s, uint64_t t)
{
    if (t < s->last)
        s->bad_order++;
    s->last = t;
    if (s->n < 64)
        s->order[s->n] = t;
    s->n++;
}
static int s_sample(void *c, const pk_sample *e)
{
    seen *s = c;
    saw(s, e->time);
    s->samples++;
    s->branch_nr += e->branch_nr;
    return 0;
}
static int s_mmap(void *c, const pk_mmap_event *e) { ((seen *)c)->mmaps++; saw(c, e->time); return 0; }
static int s_comm(void *c, const pk_comm_event *e) { ((seen *)c)->comms++; saw(c, e->time); return 0; }
static int s_task(void *c, const pk_task_event *e) { ((seen *)c)->forks += e->is_fork; saw(c, e->time); return 0; }

static int read_back(const char *path, seen *s, pk_err *e)
{
    memset(s, 0, sizeof *s);
    pk_perf_callbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.ctx = s;
    cb.sample = s_sample;
    cb.mmap = s_mmap;
    cb.comm = s_comm;
    cb.task = s_task;
    pk_perf_stats st;
    return pk_perf_read(path, &cb, &st, e);
}

TEST(merge_interleaves_processes_by_time)
{
    /* a parent, a child running at the same time, a later process, and one
     * with no events between the others */
    uint64_t t1[] = {20, 30, 31, 32, 70, 71, 200};
    uint64_t t2[] = {25, 26, 33, 60, 61, 62, 63, 64, 65, 150};
    uint64_t t3[] = {300, 301, 302};
    char *a = pk_test_path("m1.data"), *b = pk_test_path("m2.data"), *c = pk_test_path("m3.data"), *out = pk_test_path("merged.data");
    write_proc(a, 100, 0, 10, t1, 7);
    write_proc(b, 101, 100, 22, t2, 10);
    write_proc(c, 102, 0, 250, t3, 3);
    char *in[] = {c, a, b};   /* any order */
    pk_err e;
    CHECK_OK(pk_record_merge_perf(in, 3, out, &e), &e);
    seen s;
    CHECK_OK(read_back(out, &s, &e), &e);
    CHECK_EQ_U64(s.samples, 20);
    CHECK_EQ_U64(s.comms, 2);
    CHECK_EQ_U64(s.forks, 1);
    CHECK_EQ_U64(s.mmaps, 3);
    CHECK_EQ_U64(s.bad_order, 0);
    CHECK_EQ_U64(s.n, 26);
    CHECK_EQ_U64(s.branch_nr, 20);
    CHECK_EQ_U64(s.order[0], 10);
    CHECK_EQ_U64(s.order[25], 302);
    /* one file merges to itself */
    CHECK_OK(pk_record_merge_perf(in + 1, 1, out, &e), &e);
    CHECK_OK(read_back(out, &s, &e), &e);
    CHECK_EQ_U64(s.samples, 7);
}

TEST(merge_refuses_mixed_layouts_and_bad_files)
{
    char *a = pk_test_path("l1.data"), *b = pk_test_path("l2.data"), *out = pk_test_path("mixed.data");
    uint64_t t[] = {5};
    write_proc(a, 1, 0, 1, t, 1);
    pk_perf_writer *w = open_writer(b, false);
    pk_err e;
    if (w)
        CHECK(pk_perf_writer_close(w, &e) == 0);
    char *in[] = {a, b};
    CHECK(pk_record_merge_perf(in, 2, out, &e) == -1);
    CHECK(strstr(e.msg, "l2.data") != NULL);
    CHECK(access(out, F_OK) != 0);
    char *junk = pk_test_path("junk.data");
    write_file(junk, "PERFILE2 and then nothing useful at all, far too short", 54, 0644);
    in[1] = junk;
    CHECK(pk_record_merge_perf(in, 2, out, &e) == -1);
    CHECK(strstr(e.msg, "junk.data") != NULL);
    CHECK(access(out, F_OK) != 0);
}

TEST(exact_counts_of_processes_add_up)
{
    pk_exact_entry r1[] = {{0x10, 0x20, 5}}, b1[] = {{0x20, 0x10, 4}};
    pk_exact_entry r2[] = {{0x10, 0x20, 7}, {0x30, 0x40, 1}}, b2[] = {{0x20, 0x10, 6}};
    pk_exact_binary bin1 = {.path = "/bin/prog", .build_id_size = 2, .ranges = r1, .nranges = 1,
                            .branches = b1, .nbranches = 1};
    pk_exact_binary bin2 = bin1, other = {.path = "/lib/x.so", .ranges = r2 + 1, .nranges = 1};
    bin2.ranges = r2;
    bin2.nranges = 2;
    bin2.branches = b2;
    pk_exact_binary pair[] = {bin2, other};
    pk_exact_counts c1 = {&bin1, 1, 3}, c2 = {pair, 2, 4};
    char *p1 = pk_test_path("p1.exact"), *p2 = pk_test_path("p2.exact"), *out = pk_test_path("all.exact");
    pk_err e;
    CHECK_OK(pk_exact_write(p1, &c1, &e), &e);
    CHECK_OK(pk_exact_write(p2, &c2, &e), &e);
    char *in[] = {p1, p2};
    CHECK_OK(pk_exact_merge(in, 2, out, &e), &e);
    pk_exact_counts m;
    CHECK_OK(pk_exact_read(out, &m, &e), &e);
    CHECK_EQ_U64(m.nbins, 2);
    CHECK_EQ_U64(m.unmapped, 7);
    CHECK_STR(m.bins[0].path, "/bin/prog");
    CHECK_EQ_U64(m.bins[0].nranges, 2);
    CHECK_EQ_U64(m.bins[0].ranges[0].count, 12);
    CHECK_EQ_U64(m.bins[0].branches[0].count, 10);
    CHECK_EQ_U64(m.bins[1].nranges, 1);
    pk_exact_free(&m);
}

TEST(session_scan_names_every_file)
{
    char *dir = pk_test_path("session.d");
    mkdir(dir, 0755);
    uint64_t t[] = {5};
    char p[1200];
    snprintf(p, sizeof p, "%s/200-900-run.sh.data", dir);
    write_proc(p, 200, 0, 1, t, 1);
    snprintf(p, sizeof p, "%s/201-50-my-prog.data", dir);
    write_proc(p, 201, 0, 1, t, 1);
    snprintf(p, sizeof p, "%s/201-50-my-prog.exact", dir);
    write_file(p, "x", 1, 0644);
    snprintf(p, sizeof p, "%s/202-70-child.data.tmp.202", dir);
    write_file(p, "x", 1, 0644);
    snprintf(p, sizeof p, "%s/unrecorded", dir);
    const char *log = "203\ti386\texec of ./i386: a 32-bit program; it runs natively\n204\tcut";
    write_file(p, log, strlen(log), 0644);
    snprintf(p, sizeof p, "%s/stray.txt", dir);
    write_file(p, "x", 1, 0644);
    pk_record_session s;
    pk_err e;
    CHECK_OK(pk_record_session_scan(dir, &s, &e), &e);
    CHECK_EQ_U64(s.parts.len, 2);
    pk_record_part *first = &PK_VEC_AT(&s.parts, pk_record_part, 0);
    CHECK_EQ_U64(first->pid, 201);   /* by start time */
    CHECK_STR(first->comm, "my-prog");
    CHECK(first->data && first->exact && strstr(first->exact, "201-50-my-prog.exact"));
    CHECK(PK_VEC_AT(&s.parts, pk_record_part, 1).exact == NULL);
    CHECK_EQ_U64(s.unfinished.len, 1);
    CHECK_EQ_U64(PK_VEC_AT(&s.unfinished, pk_record_unrec, 0).pid, 202);
    CHECK_STR(PK_VEC_AT(&s.unfinished, pk_record_unrec, 0).comm, "child");
    CHECK_EQ_U64(s.unrecorded.len, 1);
    CHECK_STR(PK_VEC_AT(&s.unrecorded, pk_record_unrec, 0).comm, "i386");
    CHECK(strstr(PK_VEC_AT(&s.unrecorded, pk_record_unrec, 0).why, "32-bit") != NULL);
    CHECK(!pk_record_session_alive(dir, 202));
    CHECK(!pk_record_session_alive(dir, (uint32_t)getpid()));   /* alive, but not of this recording */
    pk_record_session_free(&s);
    CHECK_OK(pk_record_session_remove(dir, &e), &e);
    CHECK(access(dir, F_OK) != 0);
}

TEST(tally_counts_a_script_and_its_exec_apart)
{
    char *path = pk_test_path("tally.data");
    pk_perf_writer *w = open_writer(path, true);
    if (!w)
        return;
    pk_err e;
    pk_comm_event c1 = {300, 300, true, "run.sh", 1}, c2 = {300, 300, true, "prog", 10};
    CHECK(pk_perf_write_comm(w, &c1, &e) == 0);
    put_sample(w, 300, 2);
    CHECK(pk_perf_write_comm(w, &c2, &e) == 0);
    put_sample(w, 300, 11);
    put_sample(w, 300, 12);
    pk_task_event f = {true, 301, 300, 301, 300, 13};
    CHECK(pk_perf_write_task(w, &f, &e) == 0);
    put_sample(w, 301, 14);
    CHECK(pk_perf_writer_close(w, &e) == 0);
    pk_record_tally t;
    CHECK_OK(pk_record_tally_file(path, &t, &e), &e);
    CHECK_EQ_U64(t.samples, 4);
    CHECK_EQ_U64(t.procs.len, 3);
    CHECK_EQ_U64(t.nprocs, 2);
    pk_record_proc *p = t.procs.data;
    CHECK_STR(p[0].comm, "prog");
    CHECK_EQ_U64(p[0].samples, 2);
    CHECK_EQ_U64(p[1].pid, 300);
    CHECK_STR(p[1].comm, "run.sh");
    CHECK_EQ_U64(p[2].pid, 301);
    CHECK_STR(p[2].comm, "prog");   /* a fork child has its parent's name */
    pk_record_tally_free(&t);
}

int main(void) { return pk_test_main(); }
