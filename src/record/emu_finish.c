/* emu_finish.c — the end of an emulated recording (emu_finish.h).
 *
 * perf record stops when its workload ends; here the first process ending
 * is not the end of the data: its children may still run (a script's
 * background job, a daemon's worker) and each writes its own file until it
 * exits. Record waits for the ones that are processes of this recording
 * (their QEMU command line names the directory: a reused pid is not) and
 * still write; ^C reaches them with the terminal's process group, a SIGTERM
 * sent to record is passed on to them; either way their plugins finish
 * their files, and record waits a few seconds more for that. */
#include "record/emu_finish.h"

#include "record/child.h"
#include "record/note.h"

#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define POLL_MS 20
#define TELL_AFTER_MS 1000     /* say why record has not ended yet */
#define AFTER_SIGNAL_MS 5000   /* how long a stopped process may take to finish its file */

char *pk_emu_session_create(const char *out, pk_err *err)
{
    struct stat st;
    char *dir = NULL;
    if (stat(out, &st) == 0 && !S_ISREG(st.st_mode)) {
        const char *tmp = getenv("TMPDIR");
        if (asprintf(&dir, "%s/pgokit-record.XXXXXX", tmp && *tmp ? tmp : "/tmp") < 0) {
            pk_err_set(err, "out of memory");
            return NULL;
        }
        if (!mkdtemp(dir)) {
            pk_err_errno(err, "cannot create a directory in %s", tmp && *tmp ? tmp : "/tmp");
            free(dir);
            return NULL;
        }
        char *abs = realpath(dir, NULL);
        free(dir);
        return abs;
    }
    char *copy = strdup(out), *copy2 = strdup(out);
    char *parent = copy ? realpath(dirname(copy), NULL) : NULL;
    /* mkdtemp: a name nobody can guess and occupy first */
    if (parent && copy2 && asprintf(&dir, "%s/%s.tmp.XXXXXX", parent, basename(copy2)) < 0)
        dir = NULL;
    free(parent);
    free(copy);
    free(copy2);
    if (!dir) {
        pk_err_set(err, "%s: cannot name a directory next to it", out);
        return NULL;
    }
    if (!mkdtemp(dir)) {
        pk_err_set(err, "cannot create %s: %s (nothing was run)", dir, strerror(errno));
        free(dir);
        return NULL;
    }
    return dir;
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* The processes still writing their file: pids of unfinished files that are
 * alive and of this recording. */
static size_t still_running(const char *dir, const pk_record_session *s, uint32_t *pids, char (*comms)[16],
                            size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < s->unfinished.len && n < cap; i++) {
        const pk_record_unrec *u = &PK_VEC_AT(&s->unfinished, pk_record_unrec, i);
        if (pk_record_session_alive(dir, u->pid)) {
            pids[n] = u->pid;
            memcpy(comms[n++], u->comm, 16);
        }
    }
    return n;
}

/* Waits until no process of the recording is still writing; returns the
 * scan at the end. */
static int wait_for_the_rest(const char *dir, const pk_recording *rec, pk_record_session *s, pk_err *err)
{
    uint32_t pids[64];
    char comms[64][16];
    unsigned waited = 0, since_signal = 0;
    bool told = false, signalled = false;
    for (;;) {
        if (pk_record_session_scan(dir, s, err) != 0)
            return -1;
        size_t n = still_running(dir, s, pids, comms, 64);
        if (n == 0 || (signalled && since_signal >= AFTER_SIGNAL_MS))
            return 0;
        pk_record_session_free(s);
        bool forward;
        int sig = pk_record_run_signal(&forward);
        if (sig && !signalled) {
            signalled = true;
            pk_record_note(rec, PK_NOTE_PROGRESS, "stopping %zu process%s still running", n, n == 1 ? "" : "es");
        }
        if (forward && sig)
            for (size_t i = 0; i < n; i++)
                kill((pid_t)pids[i], sig);
        if (!told && waited >= TELL_AFTER_MS) {
            told = true;
            char list[8 * 32] = "";
            size_t len = 0;
            for (size_t i = 0; i < n && i < 8 && len < sizeof list; i++)
                len += (size_t)snprintf(list + len, sizeof list - len, "%s %.16s[%" PRIu32 "]", i ? "," : "",
                                        comms[i], pids[i]);
            pk_record_note(rec, PK_NOTE_PROGRESS, "the program ended; waiting for %zu process%s it started, still "
                           "running (Ctrl-C stops them, their samples are kept):%s%s", n, n == 1 ? "" : "es", list,
                           n > 8 ? ", ..." : "");
        }
        sleep_ms(POLL_MS);
        waited += POLL_MS;
        if (signalled)
            since_signal += POLL_MS;
    }
}

static int add_missing(pk_emu_outcome *res, uint32_t pid, const char *comm, const char *why)
{
    pk_record_unrec *u = pk_vec_push(&res->missing);
    if (!u || !(u->why = strdup(why)))
        return -1;
    u->pid = pid;
    snprintf(u->comm, sizeof u->comm, "%s", comm);
    return 0;
}

/* One file: renamed into place (same directory tree, same file system) when
 * the output is a regular file; otherwise merged (copied) by `merge`. */
static int place(char **paths, size_t n, const char *out, int (*merge)(char *const *, size_t, const char *, pk_err *),
                 pk_err *err)
{
    struct stat st;
    if (n == 1 && !(stat(out, &st) == 0 && !S_ISREG(st.st_mode))) {
        if (rename(paths[0], out) == 0)
            return 0;
        if (errno != EXDEV)
            return pk_err_errno(err, "rename %s to %s", paths[0], out);
    }
    return merge(paths, n, out, err);
}

int pk_emu_session_finish(const char *dir, const char *out, const char *exact, int status, const pk_recording *rec,
                          pk_emu_outcome *res, pk_err *err)
{
    memset(res, 0, sizeof *res);
    pk_vec_init(&res->missing, sizeof(pk_record_unrec));
    pk_record_session s;
    pk_err e2;
    int rc = -1;
    if (wait_for_the_rest(dir, rec, &s, err) != 0) {
        if (pk_record_session_remove(dir, &e2) != 0)
            pk_record_note(rec, PK_NOTE_WARNING, "warning: %s", e2.msg);
        return -1;
    }
    size_t np = s.parts.len, nd = 0, ne = 0;
    char **data = calloc(np + 1, sizeof *data), **counts = calloc(np + 1, sizeof *counts);
    if (!data || !counts)
        goto oom;
    for (size_t i = 0; i < np; i++) {
        pk_record_part *p = &PK_VEC_AT(&s.parts, pk_record_part, i);
        if (p->data)
            data[nd++] = p->data;
        if (p->exact)
            counts[ne++] = p->exact;
    }
    res->parts = nd;
    for (size_t i = 0; i < s.unrecorded.len; i++) {
        pk_record_unrec *u = &PK_VEC_AT(&s.unrecorded, pk_record_unrec, i);
        if (add_missing(res, u->pid, u->comm, u->why) != 0)
            goto oom;
    }
    for (size_t i = 0; i < s.unfinished.len; i++) {
        pk_record_unrec *u = &PK_VEC_AT(&s.unfinished, pk_record_unrec, i);
        bool alive = pk_record_session_alive(dir, u->pid);
        if (add_missing(res, u->pid, u->comm,
                        alive ? "still running when the recording ended: its samples are lost"
                              : "ended without finishing its recording (killed by SIGKILL, or QEMU "
                                "failed): its samples are lost") != 0)
            goto oom;
    }
    if (nd == 0) {
        pk_err_set(err, "no profile was written to %s (the emulator exited with status %d)", out, status);
        goto out;
    }
    if (place(data, nd, out, pk_record_merge_perf, err) != 0)
        goto out;
    if (exact && ne == 0)
        pk_record_note(rec, PK_NOTE_WARNING, "no exact counts were written to %s", exact);
    else if (exact && place(counts, ne, exact, pk_exact_merge, &e2) != 0)
        pk_record_note(rec, PK_NOTE_WARNING, "exact counts: %s", e2.msg);
    rc = 0;
    goto out;
oom:
    pk_err_set(err, "out of memory");
out:
    free(data);
    free(counts);
    pk_record_session_free(&s);
    if (pk_record_session_remove(dir, &e2) != 0)
        pk_record_note(rec, PK_NOTE_WARNING, "warning: %s", e2.msg);
    return rc;
}

void pk_emu_outcome_free(pk_emu_outcome *res)
{
    for (size_t i = 0; i < res->missing.len; i++)
        free(PK_VEC_AT(&res->missing, pk_record_unrec, i).why);
    pk_vec_free(&res->missing);
}
