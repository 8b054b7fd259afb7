/* recording.c — a whole recording, start to end (record.h, pk_record_execute).
 *
 * Four modes (pmu.c chooses): hardware LBR with `perf record -b` when the
 * PMU records branch stacks, IP samples with frame-pointer call chains
 * through `perf record` on any Linux machine, and the same two emulated
 * under QEMU with the pgokit plugin (plugin/lbr.c), which give exact branch
 * data. Ctrl-C and SIGTERM end the recording and keep the samples so far
 * (child.c). Emulated, every process of the run writes its own files into a
 * session directory, merged at the end (emu_finish.c). */
#include "record/record.h"

#include "record/child.h"
#include "record/emu_finish.h"
#include "record/note.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void pk_record_note(const pk_recording *rec, enum pk_record_note_level level, const char *fmt, ...)
{
    if (!rec->note)
        return;
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    rec->note(rec->note_ctx, level, line);
}

static char *find_plugin(void)
{
    const char *env = getenv("PGOKIT_LBR_PLUGIN");
    if (env && *env)
        return strdup(env);
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return NULL;
    exe[n] = 0;
    char *dir = dirname(exe);
    /* the build tree (build/pgokit, build/san/pgokit), then `make install`'s
     * layout: PREFIX/bin/pgokit and PREFIX/lib/pgokit/pgokit-lbr.so */
    const char *cands[] = {"%s/pgokit-lbr.so", "%s/../pgokit-lbr.so", "%s/../lib/pgokit/pgokit-lbr.so"};
    for (unsigned i = 0; i < sizeof cands / sizeof cands[0]; i++) {
        char *p = NULL;
        if (asprintf(&p, cands[i], dir) < 0)
            return NULL;
        char *real = realpath(p, NULL);
        free(p);
        if (real)
            return real;
    }
    return NULL;
}

/* qemu-x86_64 does not search PATH for the guest program: do it here. */
static char *resolve_path(const char *name)
{
    if (strchr(name, '/'))
        return strdup(name);
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        size_t n = strcspn(path, ":");
        char *cand = NULL;
        if (asprintf(&cand, "%.*s/%s", (int)n, n ? path : ".", name) < 0)
            return NULL;
        if (access(cand, X_OK) == 0)
            return cand;
        free(cand);
        path += n + (path[n] == ':');
    }
    return strdup(name);
}

/* Fails before anything runs when the output cannot be created where it
 * goes (missing or read-only directory), rather than after the program ran
 * (QEMU reported that as "plugin failed to load"). perf.data must be a
 * regular file for perf (it seeks back to write the header); the plugin
 * also writes in place into a device or FIFO. */
static int check_output(const char *path, const char *what, bool regular_only, pk_err *err)
{
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return pk_err_set(err, "%s %s is a directory", what, path);
        if (!S_ISREG(st.st_mode)) {
            if (!regular_only)
                return 0;
            return pk_err_set(err, "%s %s is not a regular file (perf writes its header last, seeking back)", what,
                              path);
        }
    }
    char *probe = NULL;
    if (asprintf(&probe, "%s.tmp.%d", path, (int)getpid()) < 0)
        return pk_err_set(err, "out of memory");
    int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    int e = errno;
    if (fd >= 0) {
        close(fd);
        unlink(probe);
    }
    free(probe);
    if (fd < 0 && e != EEXIST) {
        char *copy = strdup(path);
        pk_err_set(err, "cannot create the %s %s in %s: %s (nothing was run)", what, path, copy ? dirname(copy) : ".",
                   strerror(e));
        free(copy);
        return -1;
    }
    return 0;
}

/* As perf record does: an existing non-empty output is kept as "<out>.old"
 * (replacing an older one), here only once the new recording is ready to
 * take its place. Returns the .old name (malloc'd) when one was made. */
static char *keep_old_output(const pk_recording *r, const char *out)
{
    struct stat st;
    char *old = NULL;
    if (stat(out, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0 || asprintf(&old, "%s.old", out) < 0)
        return NULL;
    if (rename(out, old) != 0) {
        pk_record_note(r, PK_NOTE_WARNING, "warning: cannot keep %s as %s: %s", out, old, strerror(errno));
        free(old);
        return NULL;
    }
    return old;
}

/* perf's temporary, done with (renamed or removed) */
static void untrack_free(char *perf_tmp)
{
    if (perf_tmp)
        pk_out_untrack_temporary(perf_tmp);
    free(perf_tmp);
}

/* Fails the recording: err holds the message, r->exit_status the status. */
static int fail(pk_recording *r, int status)
{
    r->exit_status = status;
    return -1;
}

/* The recorder's argv for an emulated mode: the plugin, the program as the
 * kernel would run it (a script through its #! interpreter or /bin/sh), the
 * QEMU of its machine, and the session directory every process writes to. */
typedef struct emu_setup {
    char *plugin, *resolved, *session;
    pk_exec_plan plan;
    char comm[16];
    int alive[2];        /* the pipe every QEMU of the run watches (-1: none) */
} emu_setup;

/* Frees the setup and takes back what o borrowed from it (names, the
 * session directory, the pipe), so that nothing in the caller's options
 * points into freed memory. */
static void emu_setup_free(emu_setup *s, pk_record_opts *o)
{
    o->comm = NULL;
    o->argv0 = NULL;
    o->session_dir = NULL;
    o->alive_fd = 0;
    for (int i = 0; i < 2; i++)
        if (s->alive[i] >= 0)
            close(s->alive[i]);
    if (s->session) {
        pk_out_untrack_directory(s->session);
        rmdir(s->session);
    }
    free(s->session);
    pk_record_exec_plan_free(&s->plan);
    free(s->plugin);
    free(s->resolved);
    memset(s, 0, sizeof *s);
    s->alive[0] = s->alive[1] = -1;
}

/* Gives up before the output is placed: the setup freed, perf's temporary
 * removed, the caller's output name back; err holds the message. */
static int abandon(pk_recording *r, emu_setup *emu, char *perf_tmp, const char *final_out, int status)
{
    emu_setup_free(emu, &r->o);
    if (perf_tmp)
        unlink(perf_tmp);
    untrack_free(perf_tmp);
    r->o.output = final_out;
    return fail(r, status);
}

static int emu_argv(pk_recording *r, const char *final_out, emu_setup *s, pk_vec *av, pk_err *err)
{
    pk_record_opts *o = &r->o;
    s->plugin = r->plugin ? strdup(r->plugin) : find_plugin();
    if (!s->plugin) {
        pk_err_set(err, "cannot find pgokit-lbr.so next to the pgokit binary or in ../lib/pgokit/ (set "
                        "PGOKIT_LBR_PLUGIN)");
        return fail(r, 1);
    }
    const char *qemu = getenv("PGOKIT_QEMU");
    s->resolved = resolve_path(r->cmd[0]);
    /* what the kernel would run: a script runs its #! interpreter, which
     * QEMU does not do by itself */
    if (!s->resolved || pk_record_exec_plan(s->resolved, r->cmd, &s->plan, err) != 0) {
        pk_err_set(err, "out of memory");
        return fail(r, 1);
    }
    if (s->plan.how == PK_EXEC_FAILS && s->plan.err == ENOEXEC) {
        /* a script without "#!": /bin/sh runs it, as execvp (and so perf
         * record, and a shell) would */
        size_t n = 0;
        while (r->cmd[n])
            n++;
        char **sh = calloc(n + 2, sizeof *sh);
        if (sh) {
            sh[0] = "/bin/sh";
            sh[1] = s->resolved;
            memcpy(sh + 2, r->cmd + 1, n * sizeof *sh);   /* cmd[1..n], NULL included */
            pk_record_exec_plan_free(&s->plan);
            if (pk_record_exec_plan("/bin/sh", sh, &s->plan, err) != 0)
                s->plan.how = PK_EXEC_FAILS;
        }
        free(sh);
    }
    if (s->plan.how != PK_EXEC_EMULATE) {
        if (s->plan.how == PK_EXEC_FAILS) {
            pk_err_set(err, "cannot run %s: %s%s", r->cmd[0], strerror(s->plan.err),
                       s->plan.err == ENOEXEC ? " (neither an ELF program nor a #! script)" : "");
            return fail(r, 127);
        }
        pk_err_set(err, "%s is %s: the emulators run x86-64 and aarch64 programs only; record it with --ip (perf)",
                   r->cmd[0], s->plan.why);
        return fail(r, 1);
    }
    /* the name the kernel gives the process: the file's, a script's too */
    const char *base = strrchr(r->cmd[0], '/');
    snprintf(s->comm, sizeof s->comm, "%s", base ? base + 1 : r->cmd[0]);
    o->comm = s->comm;
    o->argv0 = s->plan.argv[0];
    if (!(s->session = pk_emu_session_create(final_out, err)))
        return fail(r, 1);
    pk_out_track_directory(s->session);
    o->session_dir = s->session;
    char **prog = s->plan.argv;
    char *argv0 = prog[0];
    prog[0] = s->plan.elf;   /* qemu loads the ELF file; -0 gives argv[0] */
    /* the emulator of the program's machine (its ELF header says which); a
     * dynamic cross program finds its loader and libraries under the
     * target's sysroot unless QEMU_LD_PREFIX already says where, or the
     * host has the target's own libc (see pk_record_cross_sysroot) */
    const char *emu = pk_record_qemu_name(s->plan.machine);
    if (s->plan.machine == EM_AARCH64) {
        qemu = getenv("PGOKIT_QEMU_AARCH64");
        const char *prefix = getenv("QEMU_LD_PREFIX");
        if (s->plan.dynamic && !(prefix && *prefix))
            o->ld_prefix = pk_record_cross_sysroot(s->plan.machine, "");
    }
    /* every QEMU of the run (forks and execs included) watches this pipe
     * and dies with record: PR_SET_PDEATHSIG only reaches the first one.
     * Only record holds the write end (close-on-exec); the read end is
     * inherited. */
    if (pipe2(s->alive, O_CLOEXEC) != 0)
        s->alive[0] = s->alive[1] = -1;
    else if (fcntl(s->alive[0], F_SETFD, 0) == 0)
        o->alive_fd = s->alive[0];
    int rc = pk_record_qemu_argv(qemu && *qemu ? qemu : emu, s->plugin, o, prog, av, err);
    prog[0] = argv0;
    if (rc != 0)
        return fail(r, 1);
    if (r->mode == PK_MODE_EMU_IP)
        snprintf(r->details, sizeof r->details, "%s, a sample every ~%" PRIu64 " instructions%s", emu, o->period,
                 o->callchain ? ", call chains" : "");
    else
        snprintf(r->details, sizeof r->details, "%s, a sample every ~%" PRIu64 " taken branches, "
                 "%u-entry branch stacks%s", emu, o->period, o->lbr_depth, o->callchain ? ", call chains" : "");
    return 0;
}

/* The mode, and the options it settles (period, frequency, the output's
 * checks): everything decided before anything runs. */
static int prepare(pk_recording *r, pk_pmu_info *pmu, pk_err *err)
{
    pk_record_opts *o = &r->o;
    pk_record_probe_pmu(pmu);
    if (pk_record_choose_mode(r->ip, r->emulate, r->hardware, pmu, &r->mode, r->why, sizeof r->why, err) != 0)
        return fail(r, 1);
    r->emulated = r->mode == PK_MODE_EMU_LBR || r->mode == PK_MODE_EMU_IP;
    if (!r->emulated && r->depth_set) {
        r->usage_error = true;
        pk_err_set(err, "--lbr-depth is for emulated LBR (%s chosen: %s)", pk_record_mode_name(r->mode), r->why);
        return fail(r, 2);
    }
    pk_record_ip_rate(r->mode, pmu, r->period_set, r->freq_set, o);
    o->ip = r->mode == PK_MODE_EMU_IP;
    o->buildid_mmap = pmu->buildid_mmap;
    if (r->mode == PK_MODE_PERF_IP && o->freq) {
        if (pmu->max_sample_rate && o->freq > pmu->max_sample_rate) {
            pk_record_note(r, PK_NOTE_WARNING, "%" PRIu64 " Hz is above kernel.perf_event_max_sample_rate (%" PRIu32
                           "): sampling at %" PRIu32 " Hz (sysctl kernel.perf_event_max_sample_rate=N raises the "
                           "limit)", o->freq, pmu->max_sample_rate, pmu->max_sample_rate);
            o->freq = pmu->max_sample_rate;
        }
    }
    if (o->pid && kill(o->pid, 0) != 0 && errno == ESRCH) {
        pk_err_set(err, "--pid %d: no such process", o->pid);
        return fail(r, 1);
    }
    if (r->cmd) {
        /* a missing program is this run's error, before any recorder starts
         * (perf would write an empty perf.data, QEMU a cryptic message) */
        char *exe = resolve_path(r->cmd[0]);
        int bad = !exe ? ENOMEM : access(exe, X_OK) != 0 ? errno : 0;
        free(exe);
        if (bad) {
            pk_err_set(err, "cannot run %s: %s", r->cmd[0], strerror(bad));
            return fail(r, 127);
        }
    }
    if (r->mode == PK_MODE_PERF_IP && o->callchain && !r->chains_set) {
        char *exe = NULL;
        if (o->pid ? asprintf(&exe, "/proc/%d/exe", o->pid) < 0 : !(exe = resolve_path(r->cmd[0]))) {
            pk_err_set(err, "out of memory");
            return fail(r, 1);
        }
        pk_record_choose_chains(exe, o, r->chains_why, sizeof r->chains_why);
        free(exe);
    }
    if (check_output(o->output, "output", !r->emulated, err) != 0 ||
        (o->exact_counts && check_output(o->exact_counts, "exact-counts file", false, err) != 0))
        return fail(r, 1);
    return 0;
}

/* perf's file, once perf is gone: read back whole, then renamed into place
 * (the caller removes it when this fails). */
static int place_perf_output(pk_recording *r, const pk_run_result *run, const char *perf_tmp, const char *final_out,
                             int fail_status, pk_err *err)
{
    struct stat st;
    if (stat(perf_tmp, &st) != 0 || st.st_size == 0) { /* created here, empty until perf writes */
        pk_err_set(err, "perf wrote no profile (it exited with status %d)", run->status);
        return fail(r, fail_status);
    }
    pk_err e2;
    if (pk_record_tally_file(perf_tmp, &r->tally, &e2) != 0) {
        pk_err_set(err, "perf left an unreadable file (removed): %s", e2.msg);
        return fail(r, 1);
    }
    if (!r->tally.samples && run->status && !run->signal) {
        /* perf failed (it writes its header even when the workload or an
         * event could not start): an empty file would hide that */
        pk_err_set(err, "perf exited with status %d and recorded no sample: nothing written", run->status);
        pk_record_tally_free(&r->tally);
        return fail(r, run->status);
    }
    free(keep_old_output(r, final_out));
    if (rename(perf_tmp, final_out) != 0) {
        pk_err_errno(err, "rename %s to %s", perf_tmp, final_out);
        pk_record_tally_free(&r->tally);
        return fail(r, 1);
    }
    r->tallied = true;
    return 0;
}

/* The emulated processes' files, merged into place. */
static int place_emu_output(pk_recording *r, const pk_run_result *run, const char *session, const char *final_out,
                            int fail_status, pk_err *err)
{
    char *old = keep_old_output(r, final_out);
    int frc = pk_emu_session_finish(session, final_out, r->o.exact_counts, run->status, r, &r->emu, err);
    if (frc != 0 && old && access(final_out, F_OK) != 0)
        rename(old, final_out); /* nothing new: the previous output stays where it was */
    free(old);
    if (frc != 0)
        return fail(r, fail_status);
    struct stat after;
    if (stat(final_out, &after) != 0 || !S_ISREG(after.st_mode))
        return 0;   /* a device or a FIFO: nothing to read back */
    pk_err e2;
    if (pk_record_tally_file(final_out, &r->tally, &e2) != 0) {
        pk_err_set(err, "the plugin wrote an unreadable file: %s", e2.msg);
        return fail(r, 1);
    }
    r->tallied = true;
    return 0;
}

int pk_record_execute(pk_recording *r, pk_err *err)
{
    pk_record_opts *o = &r->o;
    r->exit_status = 1;
    r->signal = 0;
    r->tallied = false;
    r->usage_error = false;
    r->rate_now = 0;
    r->details[0] = 0;
    r->chains_why[0] = 0;
    memset(&r->tally, 0, sizeof r->tally);
    pk_vec_init(&r->tally.procs, sizeof(pk_record_proc));
    memset(&r->emu, 0, sizeof r->emu);
    pk_vec_init(&r->emu.missing, sizeof(pk_record_unrec));
    if (!r->cmd && !o->pid) {
        pk_err_set(err, "no command to record and no process to attach to");
        return fail(r, 2);
    }
    pk_pmu_info pmu;
    if (prepare(r, &pmu, err) != 0)
        return -1;

    /* perf writes into a temporary beside the output (created here, as
     * every output's is, under a name nobody can plant a symlink at),
     * renamed once it is read back whole: a failed or killed run never
     * leaves a half file under the name asked. The plugin does the same
     * itself. The temporary goes if a signal ends the process first. */
    const char *final_out = o->output;
    char *perf_tmp = NULL;
    if (!r->emulated) {
        int fd = pk_out_create_temporary(final_out, &perf_tmp, err);
        if (fd < 0)
            return fail(r, 1);
        close(fd);
        pk_out_track_temporary(perf_tmp);
        o->output = perf_tmp;
    }
    pk_vec av;
    emu_setup emu;
    memset(&emu, 0, sizeof emu);
    emu.alive[0] = emu.alive[1] = -1;
    int rc;
    if (r->mode == PK_MODE_HW_LBR) {
        rc = pk_record_hw_argv(pmu.vendor, pmu.amd_lbr_v2, o, r->cmd, &av, err);
        snprintf(r->details, sizeof r->details, "perf record -b, a sample every %" PRIu64 " events%s", o->period,
                 o->callchain ? ", call chains" : "");
    } else if (r->mode == PK_MODE_PERF_IP) {
        const char *event = pk_record_ip_event(&pmu);
        rc = pk_record_perf_ip_argv(event, o, r->cmd, &av, err);
        char chains[96] = "";
        if (o->callchain && o->dwarf_stack)
            snprintf(chains, sizeof chains, ", call chains as %u-byte stack copies (DWARF)", o->dwarf_stack);
        else if (o->callchain)
            snprintf(chains, sizeof chains, ", frame-pointer call chains");
        if (o->freq)
            snprintf(r->details, sizeof r->details, "perf record -e %s at %" PRIu64 " Hz%s", event, o->freq, chains);
        else
            snprintf(r->details, sizeof r->details, "perf record -e %s every %" PRIu64 " events%s", event,
                     o->period, chains);
    } else {
        rc = emu_argv(r, final_out, &emu, &av, err);
    }
    if (rc != 0)
        return abandon(r, &emu, perf_tmp, final_out, r->emulated ? r->exit_status : 1);
    char attach[96] = "";
    if (o->pid && o->duration > 0)
        snprintf(attach, sizeof attach, ", attached to pid %d for %g s", o->pid, o->duration);
    else if (o->pid)
        snprintf(attach, sizeof attach, ", attached to pid %d until Ctrl-C", o->pid);
    pk_record_note(r, PK_NOTE_PROGRESS, "%s (%s%s): %s%s%s", pk_record_mode_name(r->mode), r->details, attach, r->why,
                   r->chains_why[0] ? "; " : "", r->chains_why);

    pk_run_result run;
    char msg[256] = "";
    /* If the process is killed: perf stops on SIGTERM and ends the program
     * it started; QEMU is the program, and nothing would read what it
     * writes. */
    int run_rc = pk_record_run_child((char **)av.data, r->emulated ? SIGKILL : SIGTERM, &run, msg, sizeof msg);
    if (run_rc == 0 && run.exec_errno)
        pk_record_note(r, PK_NOTE_WARNING, "cannot run %s: %s", ((char **)av.data)[0], strerror(run.exec_errno));
    pk_record_argv_free(&av);
    if (run_rc != 0) {
        pk_err_set(err, "%s", msg);
        return abandon(r, &emu, perf_tmp, final_out, 1);
    }
    r->signal = run.signal;
    if (run.signal)
        pk_record_note(r, PK_NOTE_PROGRESS, "stopped by %s", run.signal == SIGINT ? "SIGINT"
                                                            : run.signal == SIGTERM ? "SIGTERM" : "a signal");
    /* The status when the file is good: the program's, or the stop's. An
     * attach has no program status (perf ends 130 or 143 when stopped, or
     * when the process exits before --duration): 0. */
    int ok_status = o->pid ? 0 : run.signal ? 128 + run.signal : run.status;
    int fail_status = run.status && !run.signal ? run.status : 1;
    if (!r->emulated) {
        rc = place_perf_output(r, &run, perf_tmp, final_out, fail_status, err);
        if (rc != 0)
            unlink(perf_tmp);
        untrack_free(perf_tmp);
    } else {
        rc = place_emu_output(r, &run, emu.session, final_out, fail_status, err);
        pk_out_untrack_directory(emu.session);
        free(emu.session);
        emu.session = NULL;   /* the session's end removed it */
    }
    /* the write end of the alive pipe closes here: a QEMU of the run still
     * going (it did not finish its file after the stop) ends with it */
    emu_setup_free(&emu, o);
    o->output = final_out;
    if (rc != 0)
        return -1;
    uint32_t now = pk_record_max_sample_rate();
    if (r->mode == PK_MODE_PERF_IP && o->freq && now && now < o->freq)
        r->rate_now = now;
    r->exit_status = ok_status;
    return 0;
}

void pk_recording_free(pk_recording *r)
{
    pk_record_tally_free(&r->tally);
    pk_emu_outcome_free(&r->emu);
}
