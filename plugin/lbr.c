/* lbr.c — pgokit's QEMU TCG plugin: last-branch-record emulation.
 *
 * Every executed translation block (TB) calls tb_exec() with the block's
 * precomputed pk_tb_info. A block that does not start at the fall-through of
 * the previous block on the same vCPU was reached by a taken branch, whose
 * source is the previous block's last instruction (classified once, at
 * translation). Taken branches go into a per-vCPU ring; calls and returns
 * drive a per-vCPU shadow stack; every P taken branches (P jittered
 * uniformly in [P/2, 3P/2]) a SAMPLE with the ring (newest first) and the
 * shadow stack as a user call chain is written to perf.data.
 *
 * The hot path is one compare per executed block; everything else runs only
 * on taken branches, and locks and I/O only on samples and new mappings.
 *
 * Threads: in user mode one vCPU is one guest thread, each with its own ring
 * and stack; the perf writer is shared and guarded by g.lock.
 * fork(): the child stops recording (a pthread_atfork handler sets g.child),
 * writes nothing and leaves the parent's output alone; only the process that
 * QEMU started is recorded. Exec of another program leaves QEMU entirely.
 *
 * Arguments (from `pgokit record`): out=PATH period=N depth=N callchain=on|off
 * seed=N comm=NAME [exe=PATH] [exact=PATH]. exe is the guest program's real
 * path: its mappings are announced first, before any sample. */
#include "lbr.h"
#include "qemu_plugin_api.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT int qemu_plugin_version = PK_QEMU_PLUGIN_VERSION;

#define RING 64          /* power of two, >= the largest --lbr-depth */
#define STACK 4096       /* shadow stack slots (power of two) */
#define MAX_CHAIN 127    /* perf's default kernel.perf_event_max_stack */
#define MAX_VCPUS 4096

/* (a, b) -> count, open addressing; a slot is free when n == 0. Used only
 * with --exact-counts. */
typedef struct pairslot {
    uint64_t a, b, n;
} pairslot;
typedef struct pairmap {
    pairslot *s;
    size_t cap, len;
} pairmap;

typedef struct vcpu {
    const pk_tb_info *prev;
    uint64_t left;           /* taken branches until the next sample */
    uint64_t interval;       /* the current jittered period */
    uint64_t nbr;            /* taken branches so far: ring write position */
    uint64_t depth;          /* shadow stack depth (may exceed STACK: wraps) */
    uint64_t range_begin;
    uint64_t rng;
    uint32_t tid;
    bool announced;
    /* The ring, as two arrays: the source block (its last instruction and
     * kind give from and type) and the target. Two 8-byte stores per block;
     * measured 1.5x faster than 24-byte {from, to, flags} entries here. */
    const pk_tb_info *rsrc[RING];
    uint64_t rto[RING];
    uint64_t stack[STACK];
    pairmap ranges, branches;
} vcpu;

static struct {
    pthread_mutex_t lock;
    pk_perf_writer *w;
    char *out, *exact, *comm, *exe;
    bool preloaded;
    uint64_t period, seed;
    unsigned depth;
    bool callchain;
    uint32_t pid;
    volatile bool child;
    bool finished;
    bool failed;
    pk_err err;
    uint64_t samples, oom;
    lbr_maps maps;
    pk_u64map tbs;           /* TB vaddr -> pk_tb_info * (reused across retranslation) */
    pk_tb_info *arena;
    size_t arena_left;
    vcpu *vcpus[MAX_VCPUS];
    pk_tb_info start;        /* `prev` of a fresh vCPU: matches nothing */
} g = {.lock = PTHREAD_MUTEX_INITIALIZER};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void fail_locked(void)
{
    if (!g.failed)
        fprintf(stderr, "pgokit-lbr: %s\n", g.err.msg);
    g.failed = true;
}

/* ---- exact counts ---- */

static int pair_grow(pairmap *m)
{
    size_t nc = m->cap ? m->cap * 2 : 4096;
    pairslot *ns = calloc(nc, sizeof *ns);
    if (!ns)
        return -1;
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->s[i].n)
            continue;
        size_t h = pk_hash64(m->s[i].a ^ pk_hash64(m->s[i].b)) & (nc - 1);
        while (ns[h].n)
            h = (h + 1) & (nc - 1);
        ns[h] = m->s[i];
    }
    free(m->s);
    m->s = ns;
    m->cap = nc;
    return 0;
}

static void pair_add(pairmap *m, uint64_t a, uint64_t b)
{
    if ((m->len + 1) * 4 > m->cap * 3 && pair_grow(m) != 0) {
        g.oom++;
        return;
    }
    size_t mask = m->cap - 1, h = pk_hash64(a ^ pk_hash64(b)) & mask;
    for (;; h = (h + 1) & mask) {
        pairslot *s = &m->s[h];
        if (s->n == 0) {
            *s = (pairslot){a, b, 1};
            m->len++;
            return;
        }
        if (s->a == a && s->b == b) {
            s->n++;
            return;
        }
    }
}

/* ---- per-vCPU state ---- */

static uint64_t next_interval(vcpu *v)
{
    /* xorshift64*: cheap, and jitter only has to break aliasing with loops */
    v->rng ^= v->rng >> 12;
    v->rng ^= v->rng << 25;
    v->rng ^= v->rng >> 27;
    uint64_t r = v->rng * 0x2545F4914F6CDD1Dull;
    uint64_t p = g.period;
    v->interval = p < 2 ? 1 : p / 2 + r % (p + 1);
    return v->interval;
}

static void vcpu_reset(vcpu *v, unsigned idx)
{
    v->prev = &g.start;
    v->nbr = 0;
    v->depth = 0;
    v->range_begin = 0;
    v->tid = 0;
    v->announced = false;
    v->rng = pk_hash64(g.seed ^ (0x9E3779B97F4A7C15ull * (idx + 1))) | 1;
    v->left = next_interval(v);
}

static vcpu *vcpu_get(unsigned idx)
{
    if (idx >= MAX_VCPUS)
        return NULL;
    pthread_mutex_lock(&g.lock);
    vcpu *v = g.vcpus[idx];
    if (!v) {
        v = calloc(1, sizeof *v);
        if (v) {
            vcpu_reset(v, idx);
            g.vcpus[idx] = v;
        }
    }
    pthread_mutex_unlock(&g.lock);
    return v;
}

/* A vCPU index is reused by a later thread: start its ring and stack afresh
 * but keep its exact counts. */
static void vcpu_init(qemu_plugin_id_t id, unsigned int idx)
{
    vcpu *v = vcpu_get(idx);
    if (v) {
        pthread_mutex_lock(&g.lock);
        vcpu_reset(v, idx);
        pthread_mutex_unlock(&g.lock);
    }
}

/* ---- sampling ---- */

/* Per-kind constants, indexed by enum pk_br_kind (0..16): L1-resident. */
static const uint64_t kind_flags[17] = {
    [PK_BR_COND] = PK_BR_COND << 20 | 2, [PK_BR_UNCOND] = PK_BR_UNCOND << 20 | 2,
    [PK_BR_IND] = PK_BR_IND << 20 | 2, [PK_BR_CALL] = PK_BR_CALL << 20 | 2,
    [PK_BR_IND_CALL] = PK_BR_IND_CALL << 20 | 2, [PK_BR_RET] = PK_BR_RET << 20 | 2,
};
static const int64_t kind_delta[17] = {[PK_BR_CALL] = 1, [PK_BR_IND_CALL] = 1, [PK_BR_RET] = -1};
static const uint64_t kind_rec[17] = {[PK_BR_COND] = 1, [PK_BR_UNCOND] = 1, [PK_BR_IND] = 1,
                                      [PK_BR_CALL] = 1, [PK_BR_IND_CALL] = 1, [PK_BR_RET] = 1};


static void sample(vcpu *v, uint64_t ip)
{
    uint64_t period = v->interval;
    v->left = next_interval(v);
    if (g.child)
        return;
    pk_branch br[RING];
    uint64_t n = v->nbr < g.depth ? v->nbr : g.depth;
    for (uint64_t i = 0; i < n; i++) {
        unsigned slot = (unsigned)((v->nbr - 1 - i) & (RING - 1));
        const pk_tb_info *src = v->rsrc[slot];
        br[i].from = src->last;
        br[i].to = v->rto[slot];
        br[i].flags = kind_flags[src->kind];
    }
    uint64_t chain[MAX_CHAIN + 1];
    uint64_t nchain = 0;
    if (g.callchain) {
        chain[nchain++] = PK_CONTEXT_USER;
        chain[nchain++] = ip;
        uint64_t d = v->depth < STACK ? v->depth : STACK;
        for (uint64_t i = 1; i <= d && nchain < MAX_CHAIN + 1; i++)
            chain[nchain++] = v->stack[(v->depth - i) & (STACK - 1)];
    }
    if (!v->tid)
        v->tid = (uint32_t)syscall(SYS_gettid);
    pk_sample s;
    memset(&s, 0, sizeof s);
    s.misc = PK_CPUMODE_USER;
    s.pid = g.pid;
    s.tid = v->tid;
    s.ip = ip;
    s.period = period;
    s.callchain_nr = nchain;
    s.callchain = chain;
    s.branch_nr = n;
    s.branches = br;
    pthread_mutex_lock(&g.lock);
    if (g.w && !g.failed) {
        s.time = now_ns();
        if (!v->announced && v->tid != g.pid) {
            pk_task_event t = {true, g.pid, g.pid, v->tid, g.pid, s.time};
            if (pk_perf_write_task(g.w, &t, &g.err) != 0)
                fail_locked();
        }
        v->announced = true;
        if (pk_perf_write_sample(g.w, &s, &g.err) != 0)
            fail_locked();
        g.samples++;
    }
    pthread_mutex_unlock(&g.lock);
}

/* Exact-counts mode: the straightforward version, with counting. */
static __attribute__((noinline)) void transition(vcpu *v, const pk_tb_info *p, uint64_t to)
{
    switch (pk_record_transition(p, to)) {
    case PK_TR_FALLTHROUGH:
    case PK_TR_REPEAT:
        return;
    case PK_TR_DISCONTINUITY:
        if (p != &g.start && v->range_begin && !g.child)
            pair_add(&v->ranges, v->range_begin, p->last);
        v->range_begin = to;
        return;
    case PK_TR_TAKEN:
        break;
    }
    uint64_t from = p->last;
    if (kind_delta[p->kind] > 0)
        v->stack[v->depth++ & (STACK - 1)] = pk_tb_end(p);
    else if (kind_delta[p->kind] < 0 && v->depth)
        v->depth--;
    v->rsrc[v->nbr & (RING - 1)] = p;
    v->rto[v->nbr++ & (RING - 1)] = to;
    if (!g.child) {
        if (v->range_begin)
            pair_add(&v->ranges, v->range_begin, from);
        pair_add(&v->branches, from, to);
        v->range_begin = to;
    }
    if (--v->left == 0)
        sample(v, to);
}

/* In user mode a vCPU is a host thread, so the state is one TLS load away
 * (initial-exec: a %fs-relative load, no call). */
static __thread vcpu *tls_vcpu __attribute__((tls_model("initial-exec")));

static inline vcpu *vcpu_of(unsigned idx)
{
    vcpu *v = tls_vcpu;
    if (__builtin_expect(v == NULL, 0)) {
        v = vcpu_get(idx);
        tls_vcpu = v;
    }
    return v;
}

static void tb_exec_exact(unsigned int idx, void *ud)
{
    const pk_tb_info *t = ud;
    vcpu *v = vcpu_of(idx);
    if (!v)
        return;
    const pk_tb_info *p = v->prev;
    v->prev = t;
    if (t->vaddr != p->ft)
        transition(v, p, t->vaddr);
}

/* The hot path, run for every executed block. Whether the previous block was
 * left by a taken branch is data-dependent and poorly predictable, so the
 * ring and the sampling countdown are updated without branching on it: the
 * ring slot is always written and only advanced when taken. Calls and
 * returns always transfer, so the shadow stack is touched only for them. A
 * return pops one frame, as the CPU's return stack does (no search for a
 * matching address: longjmp and exceptions leave stale frames until returns
 * unwind past them); a return at depth 0 leaves it at 0. Measured on SQLite:
 * layouts matter more than instruction counts here (see bench/record_cost.sh). */
static void tb_exec(unsigned int idx, void *ud)
{
    const pk_tb_info *t = ud;
    vcpu *v = vcpu_of(idx);
    if (!v)
        return;
    const pk_tb_info *p = v->prev;
    v->prev = t;
    uint64_t to = t->vaddr;
    uint64_t moved = to != p->ft;
    unsigned k = p->kind;
    if (__builtin_expect(moved & (kind_rec[k] ^ 1), 0))
        return;   /* rep re-entry or a discontinuity (signal, sigreturn): not a branch */
    uint64_t n = v->nbr;
    v->rsrc[n & (RING - 1)] = p;
    v->rto[n & (RING - 1)] = to;
    v->nbr = n + moved;
    if (__builtin_expect(kind_delta[k] != 0, 0)) {
        uint64_t d = v->depth;
        v->stack[d & (STACK - 1)] = pk_tb_end(p);
        int64_t nd = (int64_t)d + kind_delta[k];
        v->depth = (uint64_t)(nd & ~(nd >> 63));
    }
    v->left -= moved;
    if (__builtin_expect(v->left == 0, 0))
        sample(v, to);
}

/* ---- translation ---- */

static pk_tb_info *tb_alloc(void)
{
    if (!g.arena_left) {
        /* cache-line aligned so that no block's info straddles two lines */
        g.arena = aligned_alloc(64, 4096 * sizeof *g.arena);
        if (!g.arena)
            return NULL;
        memset(g.arena, 0, 4096 * sizeof *g.arena);
        g.arena_left = 4096;
    }
    g.arena_left--;
    return g.arena++;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    size_t n = qemu_plugin_tb_n_insns(tb);
    if (n == 0)
        return;
    struct qemu_plugin_insn *last = qemu_plugin_tb_get_insn(tb, n - 1);
    uint64_t vaddr = qemu_plugin_tb_vaddr(tb);
    uint64_t lastva = qemu_plugin_insn_vaddr(last);
    size_t size = qemu_plugin_insn_size(last);
    unsigned len;
    enum pk_br_kind kind = pk_record_classify(qemu_plugin_insn_data(last), size, &len);
    pthread_mutex_lock(&g.lock);
    pk_tb_info *info = NULL;
    uint64_t *slot = pk_u64map_slot(&g.tbs, vaddr);
    if (slot && *slot) {
        pk_tb_info *old = (pk_tb_info *)(uintptr_t)*slot;
        if (old->last == lastva && old->size == size && old->kind == kind)
            info = old;
    }
    if (!info && (info = tb_alloc()) != NULL) {
        *info = pk_record_tb_info(vaddr, lastva, (unsigned)size, kind);
        if (slot)
            *slot = (uint64_t)(uintptr_t)info;
    }
    if (!g.preloaded && g.exe && !g.child && !g.failed) {
        g.preloaded = true;
        if (lbr_maps_preload(&g.maps, g.exe, g.w, g.pid, now_ns(), &g.err) != 0)
            fail_locked();
    }
    if (!g.child && lbr_maps_ensure(&g.maps, vaddr, g.failed ? NULL : g.w, g.pid, now_ns(), &g.err) != 0)
        fail_locked();
    pthread_mutex_unlock(&g.lock);
    if (info)
        qemu_plugin_register_vcpu_tb_exec_cb(tb, g.exact ? tb_exec_exact : tb_exec, QEMU_PLUGIN_CB_NO_REGS,
                                             info);
}

/* ---- exit ---- */

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
        vcpu *v = g.vcpus[vi];
        if (!v)
            continue;
        for (size_t i = 0; i < v->ranges.cap; i++) {
            pairslot *s = &v->ranges.s[i];
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
            pairslot *s = &v->branches.s[i];
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

/* Commits perf.data (and the exact counts). Called at exit, or before an
 * execve() replaces QEMU, since no atexit callback runs then. Other vCPU
 * threads may still be running: g.w becomes NULL under the lock, so their
 * samples stop; exact counts are read while they may still count (a race
 * only for threads alive at exit_group). */
static void finish(void)
{
    pthread_mutex_lock(&g.lock);
    if (g.finished || g.child) {
        pthread_mutex_unlock(&g.lock);
        return;
    }
    g.finished = true;
    if (g.w) {
        pk_task_event t = {false, g.pid, g.pid, g.pid, g.pid, now_ns()};
        if (g.failed || pk_perf_write_task(g.w, &t, &g.err) != 0) {
            fail_locked();
            pk_perf_writer_abort(g.w);
        } else if (pk_perf_writer_close(g.w, &g.err) != 0) {
            fail_locked();
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

static void at_exit(qemu_plugin_id_t id, void *ud)
{
    finish();
}

/* execve (59) and execveat (322) end the emulated program if they succeed:
 * write the outputs first. If the exec fails, recording has stopped. */
static void on_syscall(qemu_plugin_id_t id, unsigned int idx, int64_t num, uint64_t a1, uint64_t a2,
                       uint64_t a3, uint64_t a4, uint64_t a5, uint64_t a6, uint64_t a7, uint64_t a8)
{
    if ((num == 59 || num == 322) && !g.child)
        finish();
}

/* fork(): the prepare/parent handlers keep g.lock consistent across the fork
 * (another thread may hold it); the child stops recording. */
static void on_fork_prepare(void)
{
    pthread_mutex_lock(&g.lock);
}

static void on_fork_parent(void)
{
    pthread_mutex_unlock(&g.lock);
}

static void on_fork_child(void)
{
    g.child = true;
    pthread_mutex_unlock(&g.lock);
}

static bool arg(const char *a, const char *key, const char **val)
{
    size_t k = strlen(key);
    if (strncmp(a, key, k) || a[k] != '=')
        return false;
    *val = a + k + 1;
    return true;
}

EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv);
EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
    g.period = 20011;
    g.depth = 32;
    g.callchain = true;
    g.out = "perf.data";
    g.comm = "guest";
    for (int i = 0; i < argc; i++) {
        const char *v;
        if (arg(argv[i], "out", &v))
            g.out = strdup(v);
        else if (arg(argv[i], "exact", &v))
            g.exact = strdup(v);
        else if (arg(argv[i], "exe", &v))
            g.exe = strdup(v);
        else if (arg(argv[i], "comm", &v))
            g.comm = strdup(v);
        else if (arg(argv[i], "period", &v))
            g.period = strtoull(v, NULL, 0);
        else if (arg(argv[i], "depth", &v))
            g.depth = (unsigned)strtoul(v, NULL, 0);
        else if (arg(argv[i], "seed", &v))
            g.seed = strtoull(v, NULL, 0);
        else if (arg(argv[i], "callchain", &v))
            g.callchain = !strcmp(v, "on");
        else {
            fprintf(stderr, "pgokit-lbr: unknown argument '%s'\n", argv[i]);
            return -1;
        }
    }
    if (info->system_emulation) {
        fprintf(stderr, "pgokit-lbr: only user-mode emulation (qemu-x86_64) is supported\n");
        return -1;
    }
    if (strcmp(info->target_name, "x86_64") != 0) {
        fprintf(stderr, "pgokit-lbr: target %s is not x86_64\n", info->target_name);
        return -1;
    }
    if (g.period == 0 || g.depth == 0 || g.depth > RING) {
        fprintf(stderr, "pgokit-lbr: period must be > 0 and depth in 1..%d\n", RING);
        return -1;
    }
    g.pid = (uint32_t)getpid();
    g.start = pk_record_tb_info(0, UINT64_MAX - 16, 1, PK_BR_NONE);
    pk_err err;
    if (pk_u64map_init(&g.tbs, 1 << 14) != 0) {
        fprintf(stderr, "pgokit-lbr: out of memory\n");
        return -1;
    }
    pk_perf_writer_opts o;
    memset(&o, 0, sizeof o);
    o.event_type = 0;            /* PERF_TYPE_HARDWARE */
    o.event_config = 4;          /* branch-instructions */
    o.sample_period = g.period;
    o.callchain = g.callchain;
    o.branch_stack = true;
    g.w = pk_perf_writer_open(g.out, &o, &err);
    if (!g.w) {
        fprintf(stderr, "pgokit-lbr: %s\n", err.msg);
        return -1;
    }
    pk_comm_event c = {g.pid, g.pid, true, g.comm, now_ns()};
    if (pk_perf_write_comm(g.w, &c, &err) != 0) {
        fprintf(stderr, "pgokit-lbr: %s\n", err.msg);
        pk_perf_writer_abort(g.w);
        return -1;
    }
    pthread_atfork(on_fork_prepare, on_fork_parent, on_fork_child);
    qemu_plugin_register_vcpu_syscall_cb(id, on_syscall);
    qemu_plugin_register_vcpu_init_cb(id, vcpu_init);
    qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
    return 0;
}
