/* finish.c — the end of a recording: perf.data is closed (the temporary
 * renamed into place) and the exact counts written, once, whichever way the
 * guest ends.
 *
 *  - exit / exit_group: QEMU's atexit callback (QEMU 7.2 runs it from
 *    preexit_cleanup() for exit_group and for the exit of the last thread).
 *  - execve / execveat: the syscall callback (follow.c), before QEMU is
 *    replaced (no atexit callback runs then), once the exec is known to
 *    succeed; no EXIT record then, the process goes on.
 *  - death by a signal, whatever sent it: Ctrl-C or kill(1) on QEMU's pid
 *    (`pgokit record` forwards its SIGINT/SIGTERM there), abort() or raise()
 *    in the guest, a guest SIGSEGV/SIGBUS/SIGFPE/SIGILL, SIGPIPE... QEMU 7.2
 *    runs no plugin callback then: when the guest's disposition is the
 *    default, dump_core_and_abort() (linux-user/signal.c) writes a guest core
 *    if allowed, sets SIG_DFL, and calls kill(getpid(), sig) to die of the
 *    same signal; plugin atexit callbacks are not called (checked on
 *    7.2+dfsg-7+deb12u18: the .tmp file stayed). That kill() is the only
 *    call of kill() in qemu-x86_64 (the guest's kill/tgkill go through raw
 *    syscalls), so the plugin points qemu-x86_64's GOT entry for kill at
 *    kill_hook(), which closes the outputs first. This runs in QEMU's own
 *    context on the dying vCPU thread, after the guest decided to die and
 *    not in a signal handler: locks and malloc are safe. Other guest threads
 *    may still run (asynchronous signals); their later samples are dropped.
 *    A guest that handles or ignores the signal does not die and nothing
 *    happens.
 *  - not covered: SIGKILL (nothing runs), a crash of QEMU or of the plugin
 *    itself, and QEMU's own fatal errors (they call abort(), not kill()):
 *    the temporary "<out>.tmp.<pid>" stays behind.
 */
#include "lbr.h"

#include <elf.h>
#include <link.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* ---- exact counts ---- */

static int push_entry(pk_vec *v, uint64_t a, uint64_t b, uint64_t n)
{
    pk_exact_entry *e = pk_vec_push(v);
    if (!e)
        return -1;
    *e = (pk_exact_entry){a, b, n};
    return 0;
}

static int write_exact(pk_err *err)
{
    size_t nb = g.maps.nbins;
    pk_vec *rv = calloc(nb + 1, sizeof *rv), *bv = calloc(nb + 1, sizeof *bv);
    pk_exact_counts c = {calloc(nb + 1, sizeof(pk_exact_binary)), nb, 0};
    int rc = -1;
    if (!rv || !bv || !c.bins) {
        pk_err_set(err, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < nb; i++) {
        pk_vec_init(&rv[i], sizeof(pk_exact_entry));
        pk_vec_init(&bv[i], sizeof(pk_exact_entry));
        c.bins[i].path = g.maps.bin_paths[i];
        for (size_t k = 0; k < g.maps.n; k++)
            if (g.maps.v[k].bin == (int)i) {
                c.bins[i].build_id_size = g.maps.v[k].facts.build_id_size;
                memcpy(c.bins[i].build_id, g.maps.v[k].facts.build_id, 20);
                break;
            }
    }
    for (unsigned vi = 0; vi < MAX_VCPUS; vi++) {
        lbr_vcpu *v = g.vcpus[vi];
        if (!v)
            continue;
        for (size_t i = 0; i < v->ranges.cap; i++) {
            lbr_pairslot *s = &v->ranges.s[i];
            int b1, b2;
            uint64_t x, y;
            if (!s->n)
                continue;
            if (lbr_maps_to_vaddr(&g.maps, s->a, &b1, &x) && lbr_maps_to_vaddr(&g.maps, s->b, &b2, &y) &&
                b1 == b2) {
                if (push_entry(&rv[b1], x, y, s->n) != 0)
                    goto oom;
            } else {
                c.unmapped += s->n;
            }
        }
        for (size_t i = 0; i < v->branches.cap; i++) {
            lbr_pairslot *s = &v->branches.s[i];
            int b1 = -1, b2 = -1;
            uint64_t x = 0, y = 0;
            if (!s->n)
                continue;
            bool m1 = lbr_maps_to_vaddr(&g.maps, s->a, &b1, &x);
            bool m2 = lbr_maps_to_vaddr(&g.maps, s->b, &b2, &y);
            if (m1 && m2 && b1 == b2) {
                if (push_entry(&bv[b1], x, y, s->n) != 0)
                    goto oom;
                continue;
            }
            if (m1 && push_entry(&bv[b1], x, PK_EXACT_EXTERNAL, s->n) != 0)
                goto oom;
            if (m2 && push_entry(&bv[b2], PK_EXACT_EXTERNAL, y, s->n) != 0)
                goto oom;
            if (!m1 && !m2)
                c.unmapped += s->n;
        }
    }
    for (size_t i = 0; i < nb; i++) {
        c.bins[i].ranges = rv[i].data;
        c.bins[i].nranges = rv[i].len;
        c.bins[i].branches = bv[i].data;
        c.bins[i].nbranches = bv[i].len;
    }
    if (g.oom) {
        pk_err_set(err, "out of memory counting branches: %llu events lost", (unsigned long long)g.oom);
        goto out;
    }
    rc = pk_exact_write(g.exact, &c, err);
    goto out;
oom:
    pk_err_set(err, "out of memory");
out:
    for (size_t i = 0; rv && bv && i < nb; i++) {
        pk_vec_free(&rv[i]);
        pk_vec_free(&bv[i]);
    }
    free(rv);
    free(bv);
    free(c.bins);
    return rc;
}

/* Other vCPU threads may still be running: g.w becomes NULL under the lock,
 * so their samples stop; exact counts are read while they may still count
 * (a race only for threads alive at the end). `patience`: seconds to wait
 * for the lock, 0 for ever. */
static void finish(int patience, bool exiting)
{
    if (!patience) {
        pthread_mutex_lock(&g.lock);
    } else {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += patience;
        if (pthread_mutex_timedlock(&g.lock, &until) != 0) {
            fprintf(stderr, "pgokit-lbr: %s not closed: the plugin's lock stayed taken\n", g.out);
            return;
        }
    }
    if (g.finished || g.child) {
        pthread_mutex_unlock(&g.lock);
        return;
    }
    g.finished = true;
    if (g.w) {
        /* an exec goes on in the same process: no EXIT (perf writes none) */
        pk_task_event t = {false, g.pid, g.ppid, g.pid, g.ppid, lbr_now_ns()};
        if (g.failed || (exiting && pk_perf_write_task(g.w, &t, &g.err) != 0)) {
            lbr_fail_locked();
            pk_perf_writer_abort(g.w);
        } else if (pk_perf_writer_close(g.w, &g.err) != 0) {
            lbr_fail_locked();
        }
        g.w = NULL;
    }
    if (g.exact) {
        pk_err err;
        if (write_exact(&err) != 0)
            fprintf(stderr, "pgokit-lbr: %s: %s\n", g.exact, err.msg);
    }
    pthread_mutex_unlock(&g.lock);
}

void lbr_finish(bool exiting)
{
    finish(0, exiting);
}

static void at_exit(qemu_plugin_id_t id, void *ud)
{
    lbr_finish(true);
}

/* ---- death by a signal ---- */

/* Called by QEMU instead of kill(). Killing itself means the guest dies of
 * `sig` (see the top of the file); anything else passes through. A fork
 * child inherits the patched GOT: a child that dies of a signal closes its
 * own files the same way. The lock is free unless the plugin itself
 * faulted while holding it (the fault then reaches the guest as a SIGSEGV):
 * then the process must still die, not hang, hence the bounded wait. */
static int kill_hook(pid_t pid, int sig)
{
    if (pid == getpid() && sig > 0)
        finish(2, true);
    return kill(pid, sig);
}

typedef struct got_slot {
    const char *name;
    void **slot;
    uintptr_t relro_start, relro_end;   /* read-only after relocation */
} got_slot;

/* d_ptr values of the dynamic section: glibc relocates them in place on
 * x86-64; left as link-time values they are below the load base. */
static uintptr_t dyn_ptr(uintptr_t base, uint64_t v)
{
    return v < base ? base + v : v;
}

/* dl_iterate_phdr visits the main program (qemu-x86_64) first: finds its
 * JUMP_SLOT or GLOB_DAT relocation of the undefined symbol f->name. */
static int find_got_slot(struct dl_phdr_info *info, size_t size, void *data)
{
    got_slot *f = data;
    uintptr_t base = info->dlpi_addr;
    const ElfW(Dyn) *dyn = NULL;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(base + ph->p_vaddr);
        else if (ph->p_type == PT_GNU_RELRO) {
            f->relro_start = base + ph->p_vaddr;
            f->relro_end = base + ph->p_vaddr + ph->p_memsz;
        }
    }
    const ElfW(Sym) *sym = NULL;
    const char *str = NULL;
    uint64_t strsz = 0, relsz[2] = {0, 0};
    const ElfW(Rela) *rel[2] = {NULL, NULL};
    bool pltrela = true;
    for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
        switch (dyn->d_tag) {
        case DT_SYMTAB: sym = (const ElfW(Sym) *)dyn_ptr(base, dyn->d_un.d_ptr); break;
        case DT_STRTAB: str = (const char *)dyn_ptr(base, dyn->d_un.d_ptr); break;
        case DT_STRSZ: strsz = dyn->d_un.d_val; break;
        case DT_JMPREL: rel[0] = (const ElfW(Rela) *)dyn_ptr(base, dyn->d_un.d_ptr); break;
        case DT_PLTRELSZ: relsz[0] = dyn->d_un.d_val; break;
        case DT_PLTREL: pltrela = dyn->d_un.d_val == DT_RELA; break;
        case DT_RELA: rel[1] = (const ElfW(Rela) *)dyn_ptr(base, dyn->d_un.d_ptr); break;
        case DT_RELASZ: relsz[1] = dyn->d_un.d_val; break;
        }
    }
    if (!sym || !str || !pltrela)
        return 1;
    for (int t = 0; t < 2 && !f->slot; t++) {
        for (size_t i = 0; rel[t] && i < relsz[t] / sizeof *rel[t]; i++) {
            const ElfW(Rela) *r = &rel[t][i];
            uint32_t type = ELF64_R_TYPE(r->r_info), si = ELF64_R_SYM(r->r_info);
            if ((type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) || !si)
                continue;
            if (sym[si].st_shndx != SHN_UNDEF || sym[si].st_name >= strsz ||
                strcmp(str + sym[si].st_name, f->name))
                continue;
            f->slot = (void **)(base + r->r_offset);
            break;
        }
    }
    return 1;   /* the main program only */
}

/* Points the main program's GOT entry for kill() at kill_hook(). */
static bool hook_kill(void)
{
    got_slot f = {.name = "kill"};
    dl_iterate_phdr(find_got_slot, &f);
    if (!f.slot)
        return false;
    uintptr_t page = (uintptr_t)f.slot & ~(uintptr_t)4095;
    bool ro = (uintptr_t)f.slot >= f.relro_start && (uintptr_t)f.slot < f.relro_end;
    if (ro && mprotect((void *)page, 4096, PROT_READ | PROT_WRITE) != 0)
        return false;
    __atomic_store_n(f.slot, (void *)kill_hook, __ATOMIC_RELEASE);
    if (ro)
        mprotect((void *)page, 4096, PROT_READ);
    return true;
}

void lbr_finish_install(qemu_plugin_id_t id)
{
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
    if (!hook_kill())
        fprintf(stderr, "pgokit-lbr: kill() not found in QEMU's relocations: a guest that dies of a "
                        "signal will leave no perf.data\n");
}

/* ---- the recorder's life ---- */

/* Blocks until the pipe reports its write end closed: record is gone. A
 * guest that closed or replaced the descriptor (POLLNVAL, or data on it)
 * ends the watch instead: this process then runs on as it would without. */
static void *alive_watcher(void *arg)
{
    (void)arg;
    struct pollfd p = {g.alive_fd, POLLIN, 0};
    for (;;) {
        int n = poll(&p, 1, -1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 || (p.revents & POLLNVAL))
            return NULL;
        if (p.revents & POLLHUP) {
            char c;
            if (read(g.alive_fd, &c, 1) == 0) /* no writer left, nothing buffered: record died */
                kill(getpid(), SIGKILL);
        }
        return NULL;
    }
}

void lbr_alive_watch(void)
{
    if (g.alive_fd <= 0)
        return;
    /* No signal may reach this thread: QEMU handles host signals on the
     * threads it knows. The new thread inherits the blocked mask. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    pthread_attr_t a;
    pthread_t t;
    if (pthread_attr_init(&a) == 0) {
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&a, 64 << 10);
        if (pthread_create(&t, &a, alive_watcher, NULL) != 0)
            fprintf(stderr, "pgokit-lbr: cannot watch for the recorder's end: this process would outlive it\n");
        pthread_attr_destroy(&a);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}
