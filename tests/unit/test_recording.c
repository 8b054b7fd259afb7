/* test_recording.c — a recording driven through the library
 * (pk_record_execute), as a program other than the CLI drives it: the mode
 * and the program's status, the output read back, failures that leave no
 * file behind, a stop by SIGTERM that keeps the samples, and a library
 * that speaks only through its note function. Emulated IP (QEMU and the
 * pgokit plugin): the same on every machine, no PMU needed. */
#include "test.h"
#include "record/record.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct notes {
    int progress, warnings;
    char first[512];         /* the first progress line: the mode chosen */
} notes;

static void on_note(void *ctx, enum pk_record_note_level level, const char *line)
{
    notes *n = ctx;
    if (level == PK_NOTE_PROGRESS && !n->progress++)
        snprintf(n->first, sizeof n->first, "%s", line);
    if (level == PK_NOTE_WARNING)
        n->warnings++;
}

/* The plugin of this build: beside the test binary's directory
 * (build/tests -> build/, build/san/tests -> build/). */
static const char *plugin_path(void)
{
    static char found[PATH_MAX];
    const char *env = getenv("PGOKIT_LBR_PLUGIN");
    if (env && *env)
        return env;
    char dir[PATH_MAX - 32];
    ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
    if (n <= 0)
        return NULL;
    dir[n] = 0;
    for (int up = 0; up < 3; up++) {
        char *slash = strrchr(dir, '/');
        if (!slash)
            return NULL;
        *slash = 0;
        snprintf(found, sizeof found, "%s/pgokit-lbr.so", dir);
        if (access(found, R_OK) == 0)
            return found;
    }
    return NULL;
}

static const char *signal_prog(void)
{
    return pk_test_build("record_signal", "cc", "-O1 -g -fno-omit-frame-pointer", "record_signal.c");
}

static void start(pk_recording *r, notes *n, const char *out, char **cmd)
{
    memset(r, 0, sizeof *r);
    memset(n, 0, sizeof *n);
    r->o.output = out;
    r->o.lbr_depth = 32;
    r->o.callchain = true;
    r->o.seed = 1;
    r->cmd = cmd;
    r->ip = true;
    r->emulate = true;
    r->plugin = plugin_path();
    r->note = on_note;
    r->note_ctx = n;
}

/* Runs pk_record_execute with standard error going to a file, and says
 * whether anything the library itself would print ("pgokit ...") got there
 * (the program and QEMU may write what they like). */
static int execute_quietly(pk_recording *r, pk_err *err, bool *library_printed)
{
    char *log = pk_test_path("stderr.log");
    fflush(stderr);
    int saved = dup(2), fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(saved >= 0 && fd >= 0);
    dup2(fd, 2);
    close(fd);
    int rc = pk_record_execute(r, err);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    *library_printed = false;
    FILE *f = fopen(log, "r");
    char line[1024];
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "pgokit", 6))
            *library_printed = true;
    if (f)
        fclose(f);
    return rc;
}

TEST(emulated_ip_the_program_status_and_the_output)
{
    const char *prog = signal_prog();
    CHECK(prog != NULL && plugin_path() != NULL);
    if (!prog || !plugin_path())
        return;
    char *out = pk_test_path("abort.data");
    char *cmd[] = {(char *)prog, "abort", NULL};
    pk_recording r;
    notes n;
    start(&r, &n, out, cmd);
    pk_err err;
    bool printed;
    int rc = execute_quietly(&r, &err, &printed);
    CHECK_EQ_U64(rc, 0);
    if (rc)
        fprintf(stderr, "pk_record_execute: %s\n", err.msg);
    CHECK(!printed);
    CHECK_EQ_U64(r.mode, PK_MODE_EMU_IP);
    CHECK(r.emulated);
    CHECK_EQ_U64(r.exit_status, 128 + SIGABRT);   /* the program's own end, as a shell would report it */
    CHECK_EQ_U64(r.signal, 0);
    CHECK(r.tallied);
    CHECK(r.tally.samples > 100);                  /* 200,000 rounds of ~200 instructions, one sample per ~10k */
    CHECK_EQ_U64(r.tally.with_callchain, r.tally.samples);
    CHECK_EQ_U64(r.emu.parts, 1);
    CHECK_EQ_U64(r.emu.missing.len, 0);
    CHECK_EQ_U64(r.o.period, PK_RECORD_DEFAULT_IP_PERIOD);
    CHECK_STR(r.o.output, out);
    /* nothing in the options points into what the recording freed */
    CHECK(r.o.comm == NULL && r.o.argv0 == NULL && r.o.session_dir == NULL && r.o.alive_fd == 0);
    /* one progress line before the run: the mode, how, and why */
    CHECK_EQ_U64(n.progress, 1);
    CHECK(strstr(n.first, "emulated IP sampling") != NULL);
    CHECK(strstr(n.first, "a sample every ~10007 instructions") != NULL);
    CHECK_EQ_U64(n.warnings, 0);
    /* what the tally counted is what a reader reads back */
    pk_record_tally t;
    CHECK_OK(pk_record_tally_file(out, &t, &err), &err);
    CHECK_EQ_U64(t.samples, r.tally.samples);
    pk_record_tally_free(&t);
    /* nothing left beside the output: no session directory, no temporary */
    DIR *d = opendir(pk_test_tmpdir());
    struct dirent *e;
    int leftovers = 0;
    while (d && (e = readdir(d)))
        if (!strncmp(e->d_name, "abort.data.", 11))
            leftovers++;
    if (d)
        closedir(d);
    CHECK_EQ_U64(leftovers, 0);
    pk_recording_free(&r);
}

TEST(a_second_recording_keeps_the_first_as_old)
{
    const char *prog = signal_prog();
    if (!prog || !plugin_path())
        return;
    char *out = pk_test_path("twice.data"), *old = pk_test_path("twice.data.old");
    char *cmd[] = {(char *)prog, "abort", NULL};
    for (int i = 0; i < 2; i++) {
        pk_recording r;
        notes n;
        start(&r, &n, out, cmd);
        r.o.seed = 1 + (uint64_t)i;
        pk_err err;
        bool printed;
        CHECK_OK(execute_quietly(&r, &err, &printed), &err);
        CHECK(!printed);
        CHECK(r.tallied && r.tally.samples > 0);
        pk_recording_free(&r);
    }
    struct stat st;
    CHECK(stat(old, &st) == 0 && st.st_size > 0);
}

TEST(failures_name_the_cause_and_write_nothing)
{
    pk_recording r;
    notes n;
    pk_err err;
    char *out = pk_test_path("never.data");
    unlink(out);

    /* a program that does not exist: 127, as a shell says, before any recorder starts */
    char *missing[] = {"/nonexistent/prog", NULL};
    start(&r, &n, out, missing);
    CHECK(pk_record_execute(&r, &err) != 0);
    CHECK_EQ_U64(r.exit_status, 127);
    CHECK(strstr(err.msg, "cannot run /nonexistent/prog") != NULL);
    CHECK(!r.usage_error);
    CHECK_EQ_U64(n.progress, 0);   /* nothing ran: no mode line either */
    CHECK(access(out, F_OK) != 0);
    pk_recording_free(&r);

    /* an output that is a directory */
    char *true_cmd[] = {"/bin/true", NULL};
    start(&r, &n, pk_test_tmpdir(), true_cmd);
    CHECK(pk_record_execute(&r, &err) != 0);
    CHECK_EQ_U64(r.exit_status, 1);
    CHECK(strstr(err.msg, "is a directory") != NULL);
    pk_recording_free(&r);

    /* an output in a directory that does not exist */
    start(&r, &n, "/nonexistent/dir/x.data", true_cmd);
    CHECK(pk_record_execute(&r, &err) != 0);
    CHECK(strstr(err.msg, "cannot create the output /nonexistent/dir/x.data") != NULL);
    CHECK(strstr(err.msg, "nothing was run") != NULL);
    pk_recording_free(&r);

    /* a branch-stack depth for perf's IP sampling: the options do not fit the mode */
    start(&r, &n, out, true_cmd);
    r.emulate = false;
    r.depth_set = true;
    CHECK(pk_record_execute(&r, &err) != 0);
    CHECK(r.usage_error);
    CHECK_EQ_U64(r.exit_status, 2);
    CHECK(strstr(err.msg, "--lbr-depth is for emulated LBR") != NULL);
    CHECK(access(out, F_OK) != 0);
    pk_recording_free(&r);

    /* no program and no process */
    start(&r, &n, out, NULL);
    CHECK(pk_record_execute(&r, &err) != 0);
    CHECK_EQ_U64(r.exit_status, 2);
    pk_recording_free(&r);

    /* a plugin that is not there: QEMU cannot start it, no output */
    char *ok_cmd[] = {"/bin/true", NULL};
    start(&r, &n, out, ok_cmd);
    r.plugin = "/nonexistent/pgokit-lbr.so";
    CHECK(pk_record_execute(&r, &err) != 0);
    CHECK(r.exit_status != 0);
    CHECK(access(out, F_OK) != 0);
    pk_recording_free(&r);
}

/* SIGTERM to the process that drives the recording, as a supervisor sends
 * it: once the emulated program has done some work (it creates a marker
 * file after 100,000 rounds), the stop is passed on, the program ends, and
 * what it recorded is kept. The program spins until stopped, so the stop
 * comes after 20 s at the latest (and the test fails: `running` was never
 * seen). */
typedef struct stopper {
    const char *marker;
    atomic_bool running;         /* the marker was seen before the stop */
} stopper;

static void *stop_when_running(void *arg)
{
    stopper *s = arg;
    for (int tries = 0; tries < 2000; tries++) {   /* 20 s at the most */
        if (access(s->marker, F_OK) == 0) {
            atomic_store(&s->running, true);
            break;
        }
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
    kill(getpid(), SIGTERM);
    return NULL;
}

TEST(sigterm_stops_the_program_and_keeps_its_samples)
{
    const char *prog = signal_prog();
    if (!prog || !plugin_path())
        return;
    char *out = pk_test_path("stopped.data"), *marker = pk_test_path("working");
    unlink(marker);
    char *cmd[] = {(char *)prog, "mark", marker, NULL};
    pk_recording r;
    notes n;
    start(&r, &n, out, cmd);
    stopper s = {.marker = marker};
    atomic_init(&s.running, false);
    pthread_t th;
    CHECK(pthread_create(&th, NULL, stop_when_running, &s) == 0);
    pk_err err;
    int rc = pk_record_execute(&r, &err);
    pthread_join(th, NULL);
    CHECK(atomic_load(&s.running));
    CHECK_EQ_U64(rc, 0);
    if (rc)
        fprintf(stderr, "pk_record_execute: %s\n", err.msg);
    CHECK_EQ_U64(r.signal, SIGTERM);
    CHECK_EQ_U64(r.exit_status, 128 + SIGTERM);
    CHECK(r.tallied && r.tally.samples > 0);
    CHECK_EQ_U64(r.emu.missing.len, 0);
    CHECK(n.progress >= 2);   /* the mode, then "stopped by SIGTERM" */
    pk_recording_free(&r);
}

int main(void) { return pk_test_main(); }
