/* child.c — the recorder as a child process whose end pgokit controls.
 *
 * perf finishes its file itself when it gets SIGINT or SIGTERM (it stops the
 * events, kills the workload it started with SIGTERM, writes the header and
 * dies of the same signal); the pgokit plugin finishes its file when the
 * guest dies of a signal. So on Ctrl-C pgokit only has to make sure the
 * recorder got the signal, and wait for it rather than die first: the file
 * is read back and summarized after the recorder is gone. */
#include "record/child.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* Signal handlers cannot take arguments: the state they share with the
 * waiting loop below. One recorder at a time. */
static volatile sig_atomic_t child_pid;
static volatile sig_atomic_t got_signal;
/* A SIGINT/SIGTERM from kill(1) rather than the terminal, not yet passed on
 * to the processes the program left running (pk_record_run_signal). */
static volatile sig_atomic_t pending_forward;

static void on_signal(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    int saved = errno;
    pid_t c = (pid_t)child_pid;
    if (!got_signal)
        got_signal = sig;
    /* SI_KERNEL: the terminal's ^C, sent to the whole foreground process
     * group, so the recorder has it already; a second one could reach a
     * guest that handles SIGINT twice. kill(1) and friends (SI_USER,
     * SI_QUEUE, SI_TKILL) reach pgokit only: pass them on. */
    if (c > 0 && si->si_code != SI_KERNEL)
        kill(c, sig);
    if (si->si_code != SI_KERNEL)
        pending_forward = sig;
    errno = saved;
}

int pk_record_run_signal(bool *to_forward)
{
    *to_forward = pending_forward != 0;
    pending_forward = 0;
    return got_signal;
}

int pk_record_run_child(char **argv, int death_signal, pk_run_result *r, char *msg, size_t msg_size)
{
    memset(r, 0, sizeof *r);
    child_pid = 0;
    got_signal = 0;
    pending_forward = 0;

    /* Handlers go in before the fork with the signals blocked, so a signal
     * that comes before the pid is known waits, pending, until it is. */
    sigset_t block, old_mask;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigprocmask(SIG_BLOCK, &block, &old_mask);

    struct sigaction act, ign, old_int, old_term, old_quit;
    memset(&act, 0, sizeof act);
    act.sa_sigaction = on_signal;
    act.sa_flags = SA_SIGINFO | SA_RESTART;
    sigfillset(&act.sa_mask);
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGINT, NULL, &old_int);
    bool int_ignored = old_int.sa_handler == SIG_IGN;
    if (!int_ignored)
        sigaction(SIGINT, &act, NULL);
    sigaction(SIGTERM, &act, &old_term);

    /* an exec that fails says why through this pipe (close-on-exec: an
     * exec that succeeds closes it unwritten) */
    int exec_err[2];
    if (pipe2(exec_err, O_CLOEXEC) != 0) {
        snprintf(msg, msg_size, "pipe: %s", strerror(errno));
        goto fail;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        snprintf(msg, msg_size, "fork: %s", strerror(e));
        close(exec_err[0]);
        close(exec_err[1]);
        goto fail;
    }
    if (pid == 0) {
        /* exec resets caught signals to their default; the mask is inherited */
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
        /* pgokit killed (SIGKILL, the OOM killer) must not leave the
         * recorder running on: the kernel signals it when pgokit dies. A
         * parent that died before the prctl is seen as a new parent. */
        if (prctl(PR_SET_PDEATHSIG, death_signal) != 0 || getppid() != parent)
            _exit(127);
        sigprocmask(SIG_SETMASK, &old_mask, NULL);
        execvp(argv[0], argv);
        int e = errno;
        ssize_t w = write(exec_err[1], &e, sizeof e);
        (void)w;
        _exit(127);
    }
    close(exec_err[1]);
    int exec_errno = 0;
    ssize_t got;
    while ((got = read(exec_err[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR)
        ;
    close(exec_err[0]);
    r->exec_errno = got == (ssize_t)sizeof exec_errno ? exec_errno : 0;
    child_pid = pid;
    r->pid = pid;
    sigaction(SIGQUIT, &ign, &old_quit);
    sigprocmask(SIG_SETMASK, &old_mask, NULL);

    /* Wait without reaping first: until the pid is reaped it cannot be
     * reused, so the handler's kill() never reaches another process. */
    siginfo_t info;
    while (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT) < 0 && errno == EINTR)
        ;
    sigprocmask(SIG_BLOCK, &block, NULL);
    child_pid = 0;
    sigprocmask(SIG_SETMASK, &old_mask, NULL);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0) {
        if (errno != EINTR) {
            int e = errno;
            snprintf(msg, msg_size, "waiting for %s: %s", argv[0], strerror(e));
            st = 1 << 8;
            break;
        }
    }
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    r->signal = got_signal;
    sigaction(SIGQUIT, &old_quit, NULL);
    /* The SIGINT/SIGTERM handlers stay: a second ^C while record renames
     * and reads back the file must not kill it half-way (it only notes the
     * signal now), and record exits right after. */
    return 0;
fail:
    if (!int_ignored)
        sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigprocmask(SIG_SETMASK, &old_mask, NULL);
    return -1;
}
