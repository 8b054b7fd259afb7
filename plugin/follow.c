/* follow.c — recording every process of the run, as `perf record` does
 * without --no-inherit: forked children and exec'd programs.
 *
 * fork(). QEMU runs a guest fork() as a host fork() (vfork and posix_spawn
 * too: CLONE_VFORK is dropped), so the child is a copy of this QEMU with
 * this plugin, its state and its translated blocks, and it goes on running
 * the guest. With dir= (follow mode) the child records itself: the
 * pthread_atfork child handler leaves the parent's writer untouched (its
 * buffered bytes and its temporary file are the parent's; closing or
 * flushing it here would corrupt them), opens "<dir>/<pid>-<ns>-<comm>.data",
 * and writes a FORK record, then the MMAP2 records of the mappings it
 * inherits (perf and pgokit copy the parent's at FORK; llvm-profgen --pid
 * wants the child's own, and duplicates are harmless). Exact counts start from zero in the child (the parent counts what
 * ran before the fork). QEMU's atexit callback and the kill() hook
 * (finish.c) are inherited: a child that exits, or dies of a signal, closes
 * its own file. Without dir= the child records nothing and says so.
 *
 * exec. QEMU 7.2 runs a guest execve() as a host execve() of the new
 * program, natively: it would leave the emulator unrecorded. In follow mode
 * the syscall callback, which runs before the syscall, decides what the
 * exec would run (pk_record_exec_plan: the kernel's checks, #! scripts) and
 *  - when the exec would fail, lets it fail as it would (a shell tries each
 *    PATH directory; recording goes on);
 *  - when the program is x86-64, finishes this process's files and execs
 *    qemu-x86_64 with this plugin on it itself, with the guest's argv
 *    (argv[0] through -0) and environment: the same pid goes on recording
 *    in a new file, announced by a COMM exec record. Signals the guest
 *    ignores stay ignored (QEMU takes the host's ignored signals as the
 *    guest's at start), and blocked ones blocked (the host mask at the
 *    syscall is the guest's, and so is the new QEMU's at start);
 *  - when it cannot run under the emulator (another architecture, set-user-ID),
 *    finishes the files and lets the kernel run it, natively, and notes it.
 * Processes that run unrecorded are noted in "<dir>/unrecorded" (pid, name,
 * why), which `pgokit record` reports.
 *
 * Guest memory is the host's at the same addresses (qemu-x86_64 on x86-64:
 * guest_base 0, as maps.c also relies on); execve's arguments are read with
 * process_vm_readv so that a bad guest pointer is an EFAULT for the guest,
 * not a crash of the plugin. */
#include "lbr.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

/* The guest's system call numbers (the callback gets the guest's, not the
 * host's): x86-64, then the generic table AArch64 uses. */
typedef struct guest_sysnos {
    int64_t rt_sigaction, execve, execveat;
} guest_sysnos;
static const guest_sysnos sysnos_x86_64 = {13, 59, 322};
static const guest_sysnos sysnos_aarch64 = {134, 221, 281};
static const guest_sysnos *sysnos;   /* the guest's, chosen at install */
#define MAX_ARG_BYTES (64u << 20)  /* argv + envp read at most (the kernel allows a
                                      quarter of the stack limit) */

/* ---- per-process outputs ---- */

/* Notes a process that runs (or ran) unrecorded: a line in <dir>/unrecorded
 * (O_APPEND: one write per line, whole lines from concurrent processes), or
 * a warning on stderr without dir=. */
static void note_unrecorded(uint32_t pid, const char *comm, const char *why)
{
    char line[768];
    int n = snprintf(line, sizeof line, "%u\t%.15s\t%.600s", pid, comm, why);
    if (n < 0)
        return;
    /* the fields hold no tab after the two separators, and no newline */
    int tabs = 0;
    for (int i = 0; i < n; i++)
        if (line[i] == '\n' || (line[i] == '\t' && ++tabs > 2))
            line[i] = ' ';
    if (!g.dir) {
        fprintf(stderr, "pgokit-lbr: process %u (%s) is not recorded: %s\n", pid, comm, why);
        return;
    }
    line[n++] = '\n';
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/unrecorded", g.dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0 || write(fd, line, (size_t)n) != n)
        fprintf(stderr, "pgokit-lbr: process %u (%s) is not recorded: %s\n", pid, comm, why);
    if (fd >= 0)
        close(fd);
}

int lbr_probe_output(pk_err *err)
{
    /* creates nothing: a signal may still kill QEMU outright here */
    if (g.dir)
        return access(g.dir, W_OK | X_OK) == 0 ? 0 : pk_err_errno(err, "%s: cannot write there", g.dir);
    struct stat st;
    if (stat(g.out, &st) == 0 && S_ISDIR(st.st_mode))
        return pk_err_set(err, "%s: is a directory", g.out);
    char *copy = strdup(g.out);
    if (!copy)
        return pk_err_set(err, "out of memory");
    int rc = access(dirname(copy), W_OK | X_OK) == 0 ? 0 : pk_err_errno(err, "%s: cannot create", g.out);
    free(copy);
    return rc;
}

void lbr_open_pending_locked(void)
{
    if (!g.open_pending)
        return;
    g.open_pending = false;
    if (g.finished || g.child)
        return;
    pk_err err;
    if (lbr_open_output(NULL, &err) != 0) {
        fprintf(stderr, "pgokit-lbr: process %u (%s) is not recorded: %s\n", g.pid, g.comm, err.msg);
        g.child = true;
    }
}

int lbr_open_output(const pk_task_event *fork, pk_err *err)
{
    uint64_t now = lbr_now_ns();
    if (g.dir) {
        /* "<pid>-<start ns>-<comm>": unique even when a pid is reused, and
         * named when it is left unfinished */
        char comm[16], *out = NULL, *exact = NULL;
        snprintf(comm, sizeof comm, "%s", g.comm);
        for (char *c = comm; *c; c++)
            if (*c == '/' || *c == '\n')
                *c = '_';
        if (asprintf(&out, "%s/%u-%llu-%s.data", g.dir, g.pid, (unsigned long long)now, comm) < 0 ||
            (g.exact_on &&
             asprintf(&exact, "%s/%u-%llu-%s.exact", g.dir, g.pid, (unsigned long long)now, comm) < 0))
            return pk_err_set(err, "out of memory");
        g.out = out;
        g.exact = exact;
    }
    g.w = pk_perf_writer_open(g.out, &g.wopts, err);
    if (!g.w)
        return -1;
    int rc;
    if (fork) {
        rc = pk_perf_write_task(g.w, fork, err);
    } else {
        pk_comm_event c = {g.pid, g.pid, true, g.comm, now};
        rc = pk_perf_write_comm(g.w, &c, err);
    }
    if (rc != 0) {
        pk_perf_writer_abort(g.w);
        g.w = NULL;
    }
    return rc;
}

/* ---- fork ---- */

static uint32_t fork_tid;

/* The prepare/parent handlers keep g.lock consistent across the fork
 * (another thread may hold it). */
static void on_fork_prepare(void)
{
    pthread_mutex_lock(&g.lock);
    fork_tid = (uint32_t)syscall(SYS_gettid);
}

static void on_fork_parent(void)
{
    pthread_mutex_unlock(&g.lock);
}

/* Runs in the child, inside fork(), before QEMU's own fork_end: glibc has
 * reset malloc and stdio for the child, QEMU's locks are not needed. */
static void on_fork_child(void)
{
    uint32_t parent = g.pid;
    g.pid = (uint32_t)getpid();
    g.ppid = parent;
    if (g.child || g.finished) {
        /* the parent recorded nothing, or no more (it failed to exec):
         * neither does the child */
        g.child = true;
        lbr_alive_watch();
        pthread_mutex_unlock(&g.lock);
        return;
    }
    g.w = NULL;   /* the parent's: left exactly as it is */
    if (!g.dir) {
        g.child = true;
        lbr_alive_watch();
        note_unrecorded(g.pid, g.comm, "forked, and the plugin was given no dir= to follow forks");
        pthread_mutex_unlock(&g.lock);
        return;
    }
    g.failed = false;
    g.samples = 0;
    g.oom = 0;
    /* Only the forking thread lives on. Every vCPU's thread id is read
     * again (the forking one's is now the pid) and exact counts restart. */
    for (unsigned i = 0; i < MAX_VCPUS; i++) {
        lbr_vcpu *v = g.vcpus[i];
        if (!v)
            continue;
        v->tid = 0;
        v->announced = false;
        free(v->ranges.s);
        free(v->branches.s);
        memset(&v->ranges, 0, sizeof v->ranges);
        memset(&v->branches, 0, sizeof v->branches);
    }
    lbr_alive_watch();
    pk_task_event fe = {true, g.pid, parent, g.pid, fork_tid, lbr_now_ns()};
    if (lbr_open_output(&fe, &g.err) != 0 ||
        lbr_maps_announce_all(&g.maps, g.w, g.pid, fe.time, &g.err) != 0) {
        char why[PK_ERR_MAX + 64];
        snprintf(why, sizeof why, "forked, but its recording could not start: %s", g.err.msg);
        note_unrecorded(g.pid, g.comm, why);
        if (g.w)
            pk_perf_writer_abort(g.w);
        g.w = NULL;
        g.child = true;
    }
    pthread_mutex_unlock(&g.lock);
}

/* ---- guest memory ---- */

/* Reads n bytes of guest memory at addr; false when any of it is unmapped. */
static bool guest_read(uint64_t addr, void *buf, size_t n)
{
    while (n) {
        /* page by page: a partial read stops at a fault */
        size_t chunk = 4096 - (addr & 4095);
        if (chunk > n)
            chunk = n;
        struct iovec local = {buf, chunk}, remote = {(void *)(uintptr_t)addr, chunk};
        if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != (ssize_t)chunk)
            return false;
        addr += chunk;
        buf = (char *)buf + chunk;
        n -= chunk;
    }
    return true;
}

/* A NUL-terminated guest string (malloc'd); NULL when unreadable, too long
 * (*budget bytes left) or out of memory. */
static char *guest_string(uint64_t addr, size_t *budget)
{
    size_t cap = 256, len = 0;
    char *s = malloc(cap);
    while (s) {
        size_t chunk = 4096 - (addr & 4095);
        if (len + chunk + 1 > cap) {
            char *ns = realloc(s, cap = len + chunk + 1);
            if (!ns)
                break;
            s = ns;
        }
        if (chunk > *budget || !guest_read(addr, s + len, chunk))
            break;
        char *nul = memchr(s + len, 0, chunk);
        if (nul) {
            *budget -= (size_t)(nul - (s + len)) + 1;
            return s;
        }
        *budget -= chunk;
        len += chunk;
        addr += chunk;
    }
    free(s);
    return NULL;
}

static void free_vector(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

/* A guest argv/envp: NULL-terminated array of string pointers. A NULL
 * pointer (allowed for both) is an empty vector. */
static char **guest_vector(uint64_t addr, size_t *budget)
{
    size_t n = 0, cap = 16;
    char **v = calloc(cap, sizeof *v);
    while (v) {
        uint64_t p = 0;
        if (addr && !guest_read(addr + 8 * n, &p, 8))
            break;
        if (!p)
            return v;
        if (n + 2 > cap) {
            char **nv = realloc(v, (cap *= 2) * sizeof *v);
            if (!nv)
                break;
            v = nv;
        }
        if (!(v[n] = guest_string(p, budget)))
            break;
        v[++n] = NULL;
    }
    free_vector(v);
    return NULL;
}

/* ---- exec ---- */

/* comm as the kernel sets it on exec: the file name's last component, 15
 * bytes; ',' and '=' would end the plugin option. */
static void comm_of(const char *path, char comm[16])
{
    const char *b = strrchr(path, '/');
    snprintf(comm, 16, "%s", b ? b + 1 : path);
    for (char *c = comm; *c; c++)
        if (*c == ',' || *c == '=')
            *c = '_';
}

/* The file execveat(dirfd, path, ..., flags) runs, as a path this process
 * can exec (NULL when out of memory). */
static char *exec_path(bool at, int64_t dirfd, const char *path, uint64_t flags)
{
    char *p = NULL;
    if (!at || path[0] == '/' || (dirfd == AT_FDCWD && path[0]))
        return strdup(path);
    char link[64], target[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", (int)dirfd);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n <= 0)
        return strdup(path);   /* a bad fd: the exec fails with the kernel's error */
    target[n] = 0;
    if (!path[0] && (flags & AT_EMPTY_PATH))
        return strdup(target);
    return asprintf(&p, "%s/%s", target, path) < 0 ? NULL : p;
}

static void restore_signals(const struct sigaction *old, const bool *saved)
{
    for (int s = 1; s < 32; s++)
        if (saved[s])
            sigaction(s, &old[s], NULL);
}

/* Runs the exec'd program under this same QEMU with this plugin; returns only
 * when that exec failed (errno). */
static int relaunch(const pk_exec_plan *plan, const char *path, char **envp)
{
    char comm[16];
    comm_of(path, comm);
    char *exe = realpath(plan->elf, NULL);
    if (exe && strchr(exe, ',')) {
        free(exe);
        exe = NULL;
    }
    char *spec = NULL;
    int r = asprintf(&spec, "%s,dir=%s,comm=%s%s%s%s%s", g.self, g.dir, comm, exe ? ",exe=" : "", exe ? exe : "",
                     g.pass[0] ? "," : "", g.pass);
    free(exe);
    size_t n = 0;
    char **av = r < 0 ? NULL : calloc(plan->argc + 10, sizeof *av);
    char *elf = NULL;
    if (!av || asprintf(&elf, "%s%s", plan->elf[0] == '-' ? "./" : "", plan->elf) < 0) {
        free(spec);
        free(av);
        return ENOMEM;
    }
    av[n++] = g.qemu;
    if (g.sysroot) {
        av[n++] = "-L";
        av[n++] = g.sysroot;
    }
    av[n++] = "-plugin";
    av[n++] = spec;
    if (plan->argc) {
        av[n++] = "-0";
        av[n++] = plan->argv[0];
    }
    av[n++] = elf;
    for (size_t i = 1; i < plan->argc; i++)
        av[n++] = plan->argv[i];
    av[n] = NULL;
    /* Host dispositions become the new guest's: ignored stays ignored,
     * the rest default (QEMU's own handlers would be reset anyway). */
    struct sigaction old[32], act;
    bool saved[32] = {false};
    for (int s = 1; s < 32; s++) {
        if (s == SIGKILL || s == SIGSTOP)
            continue;
        memset(&act, 0, sizeof act);
        act.sa_handler = g.ignored >> (s - 1) & 1 ? SIG_IGN : SIG_DFL;
        saved[s] = sigaction(s, &act, &old[s]) == 0;
    }
    execve(g.qemu, av, envp);
    int e = errno;
    restore_signals(old, saved);
    free(spec);
    free(elf);
    free(av);
    return e;
}

static void on_exec(bool at, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5)
{
    size_t budget = MAX_ARG_BYTES;
    uint64_t path_at = at ? a2 : a1, argv_at = at ? a3 : a2, envp_at = at ? a4 : a3;
    char *gpath = guest_string(path_at, &budget);
    char **argv = gpath ? guest_vector(argv_at, &budget) : NULL;
    char **envp = argv ? guest_vector(envp_at, &budget) : NULL;
    char *path = envp ? exec_path(at, (int64_t)(int32_t)a1, gpath, a5) : NULL;
    pk_exec_plan plan;
    pk_err err;
    memset(&plan, 0, sizeof plan);
    if (!path && budget < 4096) {
        note_unrecorded(g.pid, g.comm, "exec with more than 64 MiB of arguments: not followed");
        lbr_finish(false);
    } else if (!path) {
        /* unreadable arguments: the kernel says EFAULT too */
    } else if (pk_record_exec_plan(path, argv, &plan, &err) != 0) {
        note_unrecorded(g.pid, g.comm, "exec: out of memory in the plugin");
        lbr_finish(false);
    } else if (plan.how == PK_EXEC_NATIVE) {
        char comm[16], why[256];
        comm_of(path, comm);
        snprintf(why, sizeof why, "exec of %s: %s; it runs natively", path, plan.why);
        note_unrecorded(g.pid, comm, why);
        lbr_finish(false);
    } else if (plan.how == PK_EXEC_EMULATE && plan.machine != g.arch->machine) {
        /* this QEMU runs one instruction set; another emulator's recording
         * could not be merged with this one's anyway */
        char comm[16], why[256];
        comm_of(path, comm);
        snprintf(why, sizeof why, "exec of %s: a program for another machine than %s; it runs natively", path,
                 g.arch->name);
        note_unrecorded(g.pid, comm, why);
        lbr_finish(false);
    } else if (plan.how == PK_EXEC_EMULATE && (!g.qemu || !g.self)) {
        char comm[16], why[PATH_MAX + 128];
        comm_of(path, comm);
        snprintf(why, sizeof why, "exec of %s: the plugin does not know %s; it runs natively", path,
                 g.qemu ? "its own path" : "QEMU's path");
        note_unrecorded(g.pid, comm, why);
        lbr_finish(false);
    } else if (plan.how == PK_EXEC_EMULATE) {
        lbr_finish(false);
        int e = relaunch(&plan, path, envp);
        char comm[16], why[PATH_MAX + 128];
        comm_of(path, comm);
        snprintf(why, sizeof why, "exec of %s: cannot relaunch %s on it (%s); it runs natively", path, g.qemu,
                 strerror(e));
        note_unrecorded(g.pid, comm, why);
    }
    pk_record_exec_plan_free(&plan);
    free(path);
    free_vector(envp);
    free_vector(argv);
    free(gpath);
}

/* ---- the syscall callback (before the syscall runs) ---- */

static void on_syscall(qemu_plugin_id_t id, unsigned int idx, int64_t num, uint64_t a1, uint64_t a2,
                       uint64_t a3, uint64_t a4, uint64_t a5, uint64_t a6, uint64_t a7, uint64_t a8)
{
    const guest_sysnos *sn = sysnos;
    if (num == sn->rt_sigaction) {
        /* rt_sigaction(sig, act, ...): act->sa_handler is its first word */
        uint64_t h;
        if (a1 >= 1 && a1 < 32 && a2 && guest_read(a2, &h, 8))
            g.ignored = h == (uint64_t)(uintptr_t)SIG_IGN ? g.ignored | 1ull << (a1 - 1)
                                                           : g.ignored & ~(1ull << (a1 - 1));
        return;
    }
    if (num != sn->execve && num != sn->execveat)
        return;
    if (g.dir)
        on_exec(num == sn->execveat, a1, a2, a3, a4, a5);
    else if (!g.child)
        lbr_finish(true);   /* without dir=: the recording ends at the exec */
}

/* The host's ignored signals at start are the guest's (QEMU's signal_init
 * reads them after plugins are loaded). */
static uint64_t initial_ignored(void)
{
    FILE *f = fopen("/proc/self/status", "re");
    char line[256];
    unsigned long long mask = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "SigIgn: %llx", &mask) == 1)
            break;
    if (f)
        fclose(f);
    return mask;
}

void lbr_follow_install(qemu_plugin_id_t id)
{
    pthread_atfork(on_fork_prepare, on_fork_parent, on_fork_child);
    sysnos = g.arch == &pk_arch_aarch64 ? &sysnos_aarch64 : &sysnos_x86_64;
    qemu_plugin_register_vcpu_syscall_cb(id, on_syscall);
    g.ignored = initial_ignored();
    if (!g.dir)
        return;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    Dl_info info;
    if (n > 0) {
        exe[n] = 0;
        g.qemu = strdup(exe);
    }
    if (dladdr((void *)lbr_follow_install, &info) && info.dli_fname)
        g.self = realpath(info.dli_fname, NULL);
}
