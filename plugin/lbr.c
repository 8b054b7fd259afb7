/* lbr.c — pgokit's QEMU TCG plugin: last-branch-record emulation (and the
 * translation, arguments and installation shared with IP mode, ip.c).
 *
 * LBR mode. Every executed translation block (TB) calls tb_exec() with the
 * block's precomputed description packed into the callback's 64-bit userdata
 * (see "block words" below). A block that does not start at the
 * fall-through of the previous block on the same vCPU was reached by a taken
 * branch, whose source is the previous block's last instruction (classified
 * once, at translation). Taken branches go into a per-vCPU ring; calls and
 * returns drive a per-vCPU shadow stack; every P taken branches (P jittered
 * uniformly in [P/2, 3P/2]) a SAMPLE with the ring (newest first) and the
 * shadow stack as a user call chain is written to perf.data.
 *
 * The hot path touches only the vCPU's first cache line and its ring: about
 * twenty instructions, no call, no load from the block's info, no branch on
 * whether the branch was taken, and one loop-carried dependency (the
 * countdown). Measured on SQLite (bench/record_cost.sh), each of these
 * counts: handling calls and returns branch-free in it (a second dependency
 * chain, through the depth) cost 14%; taking the previous block from the
 * ring instead of its own field (a load that waits for the countdown) 9%.
 * Locks, map look-ups and I/O happen only on samples and new translations.
 *
 * Threads: in user mode one vCPU is one guest thread, each with its own ring
 * and stack; the perf writer is shared and guarded by g.lock.
 * fork() and exec: with dir=, every process of the run records itself into
 * its own file in that directory, and exec'd programs are run under the
 * emulator too (follow.c); without it only the process QEMU started is.
 * How the outputs are closed (exit, exec, death by a signal): finish.c.
 *
 * Arguments (from `pgokit record`): out=PATH | dir=DIR, period=N depth=N
 * callchain=on|off seed=N comm=NAME [exe=PATH] [exact=PATH] [ip=N] [sysroot=DIR]. exe is
 * the guest program's real path: its mappings are announced first, before
 * any sample. ip=N switches to IP mode (ip.c): a sample every N retired
 * instructions (jittered likewise) with the exact instruction address and
 * the call chain, no branch stack; period= and depth= are then ignored.
 * sysroot=DIR is QEMU's -L (a cross guest's libraries), for exec'd programs.
 * dir=DIR (an absolute path) replaces out=: see follow.c; exact= then only
 * turns exact counts on, each process writing its own into DIR. */
#include "lbr.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT int qemu_plugin_version = PK_QEMU_PLUGIN_VERSION;

lbr_state g = {.lock = PTHREAD_MUTEX_INITIALIZER};
lbr_vcpu lbr_v0;

/* ---- block words (their layout: lbr.h) ----
 * The hot path gets everything it needs about a block from the callback's
 * userdata, with no load from the block's info (over thousands of hot blocks
 * those miss L1) and no address arithmetic. A block's word holds the ids of
 * its start and end and its kind flags, so the previous block was left by a
 * taken branch exactly when the low half of the current word differs from
 * the high half of the previous one (flags included: W_ALWAYS makes them
 * differ), and everything but plain jumps and fall-throughs is one sign test
 * away. The ring and the shadow stack hold words and ids; a sample turns
 * them back into addresses. */

uint64_t lbr_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void lbr_fail_locked(void)
{
    if (!g.failed)
        fprintf(stderr, "pgokit-lbr: %s\n", g.err.msg);
    g.failed = true;
}

/* ---- exact counts ---- */

static int pair_grow(lbr_pairmap *m)
{
    size_t nc = m->cap ? m->cap * 2 : 4096;
    lbr_pairslot *ns = calloc(nc, sizeof *ns);
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

static void pair_add(lbr_pairmap *m, uint64_t a, uint64_t b)
{
    if ((m->len + 1) * 4 > m->cap * 3 && pair_grow(m) != 0) {
        g.oom++;
        return;
    }
    size_t mask = m->cap - 1, h = pk_hash64(a ^ pk_hash64(b)) & mask;
    for (;; h = (h + 1) & mask) {
        lbr_pairslot *s = &m->s[h];
        if (s->n == 0) {
            *s = (lbr_pairslot){a, b, 1};
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

uint64_t lbr_next_interval(lbr_vcpu *v)
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

static void vcpu_reset(lbr_vcpu *v, unsigned idx)
{
    v->prev = &g.start.info;
    v->pw = g.ip ? 0 : g.start.word;
    v->total = 0;
    v->depth = 0;
    v->range_begin = 0;
    v->tid = 0;
    v->announced = false;
    v->rng = pk_hash64(g.seed ^ (0x9E3779B97F4A7C15ull * (idx + 1))) | 1;
    v->left = lbr_next_interval(v);
}

static lbr_vcpu *vcpu_get(unsigned idx)
{
    if (idx >= MAX_VCPUS)
        return NULL;
    pthread_mutex_lock(&g.lock);
    lbr_vcpu *v = g.vcpus[idx];
    if (!v) {
        v = idx == 0 ? &lbr_v0 : aligned_alloc(64, sizeof *v);
        if (v)
            memset(v, 0, sizeof *v);
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
    lbr_vcpu *v = vcpu_get(idx);
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
const int64_t lbr_kind_delta[17] = {[PK_BR_CALL] = 1, [PK_BR_IND_CALL] = 1, [PK_BR_RET] = -1};
static const uint64_t kind_rec[17] = {[PK_BR_COND] = 1, [PK_BR_UNCOND] = 1, [PK_BR_IND] = 1,
                                      [PK_BR_CALL] = 1, [PK_BR_IND_CALL] = 1, [PK_BR_RET] = 1};


/* Caller holds g.lock (tb_trans adds ids). */
uint64_t lbr_addr_of(uint32_t id)
{
    return g.addr[id >> ID_CHUNK][id & ((1u << ID_CHUNK) - 1)];
}

/* The block a ring word was taken from. Caller holds g.lock (tb_trans
 * changes g.tbs). A retranslation with different code at the same address
 * is told apart by its word (end and kind flags); two versions that agree on
 * both but not on their last instruction resolve to the newest. */
static const pk_tb_info *resolve(uint64_t word)
{
    uint64_t *slot = pk_u64map_get(&g.tbs, lbr_addr_of(W_START(word)));
    for (const lbr_tb *t = slot ? (const lbr_tb *)(uintptr_t)*slot : NULL; t; t = t->older)
        if (t->word == word)
            return &t->info;
    return NULL;
}

void lbr_emit_locked(lbr_vcpu *v, uint64_t ip, uint64_t period, const pk_branch *br, uint64_t nbr)
{
    uint64_t chain[MAX_CHAIN + 1];
    uint64_t nchain = 0;
    if (g.callchain) {
        chain[nchain++] = PK_CONTEXT_USER;
        chain[nchain++] = ip;
        uint64_t d = v->depth < STACK ? v->depth : STACK;
        for (uint64_t i = 1; i <= d && nchain < MAX_CHAIN + 1; i++)
            chain[nchain++] = lbr_addr_of(v->stack[(v->depth - i) & (STACK - 1)]);
    }
    if (!v->tid)
        v->tid = (uint32_t)syscall(SYS_gettid);
    if (!g.w || g.failed)
        return;
    pk_sample s;
    memset(&s, 0, sizeof s);
    s.misc = PK_CPUMODE_USER;
    s.pid = g.pid;
    s.tid = v->tid;
    s.ip = ip;
    s.period = period;
    s.callchain_nr = nchain;
    s.callchain = chain;
    s.branches = br;
    s.branch_nr = nbr;
    s.time = lbr_now_ns();
    if (!v->announced && v->tid != g.pid) {
        pk_task_event t = {true, g.pid, g.pid, v->tid, g.pid, s.time};
        if (pk_perf_write_task(g.w, &t, &g.err) != 0)
            lbr_fail_locked();
    }
    v->announced = true;
    if (pk_perf_write_sample(g.w, &s, &g.err) != 0)
        lbr_fail_locked();
    g.samples++;
}

static __attribute__((cold, noinline)) void sample(lbr_vcpu *v, uint64_t w)
{
    uint64_t period = v->interval;
    v->total += period;
    /* The i-th newest branch is in slot left + 1 + i. */
    uint64_t n = v->total < g.depth ? v->total : g.depth;
    uint64_t srcw[RING], tow[RING];
    for (uint64_t i = 0; i < n; i++) {
        unsigned slot = (unsigned)((v->left + 1 + i) & (RING - 1));
        srcw[i] = v->rsrc[slot];
        tow[i] = v->rto[slot];
    }
    uint64_t left = lbr_next_interval(v);
    uint64_t rot = (left - v->left) & (RING - 1), tmp[RING];
    memcpy(tmp, v->rsrc, sizeof tmp);
    for (unsigned j = 0; j < RING; j++)
        v->rsrc[(j + rot) & (RING - 1)] = tmp[j];
    memcpy(tmp, v->rto, sizeof tmp);
    for (unsigned j = 0; j < RING; j++)
        v->rto[(j + rot) & (RING - 1)] = tmp[j];
    v->left = left;
    if (g.child)
        return;
    pthread_mutex_lock(&g.lock);
    pk_branch br[RING];
    for (uint64_t i = 0; i < n; i++) {
        const pk_tb_info *src = resolve(srcw[i]);
        br[i].from = src ? src->last : lbr_addr_of(W_START(srcw[i]));
        br[i].to = lbr_addr_of(W_START(tow[i]));
        br[i].flags = src ? kind_flags[src->kind] : 0;
    }
    lbr_emit_locked(v, lbr_addr_of(W_START(w)), period, br, n);
    pthread_mutex_unlock(&g.lock);
}

enum pk_transition lbr_exact_count(lbr_vcpu *v, const pk_tb_info *p, uint64_t to)
{
    enum pk_transition tr = pk_record_transition(p, to);
    switch (tr) {
    case PK_TR_FALLTHROUGH:
    case PK_TR_REPEAT:
        break;
    case PK_TR_DISCONTINUITY:
        if (p != &g.start.info && v->range_begin && !g.child)
            pair_add(&v->ranges, v->range_begin, p->last);
        v->range_begin = to;
        break;
    case PK_TR_TAKEN:
        if (!g.child) {
            if (v->range_begin)
                pair_add(&v->ranges, v->range_begin, p->last);
            pair_add(&v->branches, p->last, to);
            v->range_begin = to;
        }
        break;
    }
    return tr;
}

/* Exact-counts mode: the straightforward version, with counting. */
static __attribute__((noinline)) void transition(lbr_vcpu *v, const pk_tb_info *p, const lbr_tb *t)
{
    if (lbr_exact_count(v, p, t->info.vaddr) != PK_TR_TAKEN)
        return;
    uint64_t pw = ((const lbr_tb *)p)->word;
    if (lbr_kind_delta[p->kind] > 0)
        v->stack[v->depth++ & (STACK - 1)] = (uint32_t)W_END(pw);
    else if (lbr_kind_delta[p->kind] < 0 && v->depth)
        v->depth--;
    v->rsrc[v->left & (RING - 1)] = pw;
    v->rto[v->left-- & (RING - 1)] = t->word;
    if (v->left == 0)
        sample(v, t->word);
}

__attribute__((noinline)) lbr_vcpu *lbr_vcpu_other(unsigned idx)
{
    lbr_vcpu *v = idx < MAX_VCPUS ? g.vcpus[idx] : NULL;
    return v ? v : vcpu_get(idx);
}

static inline lbr_vcpu *vcpu_of(unsigned idx)
{
    return __builtin_expect(idx == 0, 1) ? &lbr_v0 : lbr_vcpu_other(idx);
}

static void tb_exec_exact(unsigned int idx, void *ud)
{
    const lbr_tb *t = ud;
    lbr_vcpu *v = vcpu_of(idx);
    if (!v)
        return;
    const pk_tb_info *p = v->prev;
    v->prev = &t->info;
    if (t->info.vaddr != p->ft)
        transition(v, p, t);
}

/* Calls, returns and blocks not left by a branch: as step() below, plus the
 * shadow stack. Calls and returns always transfer. A return pops one frame,
 * as the CPU's return stack does (no search for a matching address: longjmp
 * and exceptions leave stale frames until returns unwind past them); a
 * return at depth 0 leaves it at 0. */
static __attribute__((noinline)) void step_rare(lbr_vcpu *v, uint64_t pw, uint64_t w)
{
    if (pw & W_NOTBR)
        return;   /* fall-through, rep re-entry or a discontinuity (signal, sigreturn) */
    uint64_t n = v->left;
    v->rsrc[n & (RING - 1)] = pw;
    v->rto[n & (RING - 1)] = w;
    v->left = --n;
    uint64_t d = v->depth;
    if (pw & W_CALL) {
        v->stack[d & (STACK - 1)] = (uint32_t)W_END(pw);
        v->depth = d + 1;
    } else {
        v->depth = d - (d != 0);
    }
    if (__builtin_expect(n == 0, 0))
        sample(v, w);
}

/* The hot path, run for every executed block with its word. Whether the
 * previous block was left by a taken branch is data-dependent and poorly
 * predictable, so the ring and the sampling count are updated without
 * branching on it: the ring slot is always written and only advanced when
 * taken. */
static inline __attribute__((always_inline)) void step(lbr_vcpu *v, uint64_t w)
{
    uint64_t pw = v->pw;
    v->pw = w;
    if (__builtin_expect((int64_t)pw < 0, 0)) {
        step_rare(v, pw, w);
        return;
    }
    uint64_t moved = (uint32_t)w != pw >> 32;
    uint64_t n = v->left;
    v->rsrc[n & (RING - 1)] = pw;
    v->rto[n & (RING - 1)] = w;
    n -= moved;
    v->left = n;
    if (__builtin_expect(n == 0, 0))
        sample(v, w);
}

static __attribute__((noinline)) void tb_exec_other(unsigned int idx, uint64_t w)
{
    lbr_vcpu *v = lbr_vcpu_other(idx);
    if (v)
        step(v, w);
}

static void tb_exec(unsigned int idx, void *ud)
{
    uint64_t w = (uint64_t)(uintptr_t)ud;
    if (__builtin_expect(idx == 0, 1))
        step(&lbr_v0, w);
    else
        tb_exec_other(idx, w);
}

/* ---- translation ---- */

static lbr_tb *tb_alloc(void)
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

/* The id of a guest address, assigned on first sight. Caller holds g.lock;
 * 0 when out of ids or memory. Chunks never move, so samples on other
 * threads read g.addr under the lock while it grows. */
static uint32_t id_of(uint64_t addr)
{
    uint64_t *slot = pk_u64map_slot(&g.ids, addr);
    if (!slot)
        return 0;
    if (*slot)
        return (uint32_t)*slot;
    uint32_t id = g.nids + 1;
    if (id > ID_MAX)
        return 0;
    uint64_t **chunk = &g.addr[id >> ID_CHUNK];
    if (!*chunk && !(*chunk = malloc(sizeof(uint64_t) << ID_CHUNK)))
        return 0;
    (*chunk)[id & ((1u << ID_CHUNK) - 1)] = addr;
    g.nids = id;
    *slot = id;
    return id;
}

/* 0 when out of ids or memory. */
static uint64_t tb_word(const pk_tb_info *t)
{
    uint64_t start = id_of(t->vaddr), end = id_of(pk_tb_end(t));
    if (!start || !end)
        return 0;
    uint64_t w = start << 1 | end << 33;
    if (t->ft == PK_NO_FALLTHROUGH)
        w |= W_ALWAYS;
    if (!kind_rec[t->kind])
        w |= W_NOTBR | W_RARE;
    if (lbr_kind_delta[t->kind] > 0)
        w |= W_CALL | W_RARE;
    else if (lbr_kind_delta[t->kind] < 0)
        w |= W_RET | W_RARE;
    return w;
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
    enum pk_br_kind kind = pk_record_classify_for(g.arch->machine, qemu_plugin_insn_data(last), size, &len);
    /* IP mode: where each instruction starts, to name the sampled one */
    uint32_t *ioff = g.ip ? malloc(n * sizeof *ioff) : NULL;
    for (size_t i = 0; ioff && i < n; i++)
        ioff[i] = (uint32_t)(qemu_plugin_insn_vaddr(qemu_plugin_tb_get_insn(tb, i)) - vaddr);
    pthread_mutex_lock(&g.lock);
    lbr_open_pending_locked();   /* QEMU handles signals by now: see open_pending */
    lbr_tb *info = NULL, *old = NULL;
    uint64_t *slot = pk_u64map_slot(&g.tbs, vaddr);
    if (slot && *slot) {
        old = (lbr_tb *)(uintptr_t)*slot;
        if (old->info.last == lastva && old->info.size == size && old->info.kind == kind &&
            old->ninsns == n && (!ioff || !memcmp(old->ioff, ioff, n * sizeof *ioff)))
            info = old;
    }
    if (info) {
        free(ioff);
    } else if (g.ip && !ioff) {
        pk_err_set(&g.err, "out of memory");
        lbr_fail_locked();
    } else if ((info = tb_alloc()) != NULL) {
        info->info = pk_record_tb_info(vaddr, lastva, (unsigned)size, kind);
        info->word = tb_word(&info->info);
        info->older = old;
        info->ioff = ioff;
        info->ninsns = (uint32_t)n;
        if (!info->word || (g.ip && !lbr_ip_word(info))) {
            pk_err_set(&g.err, "out of memory or block ids (%u addresses)", g.nids);
            lbr_fail_locked();
            info = NULL;
        } else if (slot) {
            *slot = (uint64_t)(uintptr_t)info;
        }
    } else {
        free(ioff);
    }
    if (!g.preloaded && g.exe && !g.child && !g.failed) {
        g.preloaded = true;
        if (lbr_maps_preload(&g.maps, g.exe, g.w, g.pid, lbr_now_ns(), &g.err) != 0)
            lbr_fail_locked();
    }
    if (!g.child && lbr_maps_ensure(&g.maps, vaddr, g.failed ? NULL : g.w, g.pid, lbr_now_ns(), &g.err) != 0)
        lbr_fail_locked();
    pthread_mutex_unlock(&g.lock);
    if (!info)
        return;
    if (g.ip && g.exact_on)
        qemu_plugin_register_vcpu_tb_exec_cb(tb, lbr_ip_exec_exact, QEMU_PLUGIN_CB_NO_REGS, info);
    else if (g.ip)
        qemu_plugin_register_vcpu_tb_exec_cb(tb, lbr_ip_exec, QEMU_PLUGIN_CB_NO_REGS,
                                             (void *)(uintptr_t)lbr_ip_word(info));
    else if (g.exact_on)
        qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec_exact, QEMU_PLUGIN_CB_NO_REGS, info);
    else
        qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec, QEMU_PLUGIN_CB_NO_REGS,
                                             (void *)(uintptr_t)info->word);
}

static bool arg(const char *a, const char *key, const char **val)
{
    size_t k = strlen(key);
    if (strncmp(a, key, k) || a[k] != '=')
        return false;
    *val = a + k + 1;
    return true;
}

/* A positive decimal or 0x number, the whole string; 0 when not. */
static uint64_t positive(const char *s)
{
    char *end;
    errno = 0;
    uint64_t v = strtoull(s, &end, 0);
    return errno || end == s || *end || *s == '-' ? 0 : v;
}

EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv);
EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
    g.period = 20011;
    g.depth = 32;
    g.callchain = true;
    g.out = "perf.data";
    g.comm = "guest";
    uint64_t ip_period = 0;
    /* the sampling arguments, for the plugin of an exec'd program */
    size_t pass_len = 0;
    for (int i = 0; i < argc; i++)
        pass_len += strlen(argv[i]) + 1;
    g.pass = calloc(1, pass_len + 1);
    if (!g.pass) {
        fprintf(stderr, "pgokit-lbr: out of memory\n");
        return -1;
    }
    for (int i = 0; i < argc; i++) {
        const char *v;
        bool own = arg(argv[i], "out", &v) || arg(argv[i], "dir", &v) || arg(argv[i], "comm", &v) ||
                   arg(argv[i], "exe", &v);
        if (!own)
            strcat(strcat(g.pass, g.pass[0] ? "," : ""), argv[i]);
        if (arg(argv[i], "out", &v))
            g.out = strdup(v);
        else if (arg(argv[i], "dir", &v))
            g.dir = strdup(v);
        else if (arg(argv[i], "alive", &v))
            g.alive_fd = atoi(v) > 0 ? atoi(v) : -1;
        else if (arg(argv[i], "exact", &v))
            g.exact = strdup(v);
        else if (arg(argv[i], "exe", &v))
            g.exe = strdup(v);
        else if (arg(argv[i], "comm", &v))
            g.comm = strdup(v);
        else if (arg(argv[i], "sysroot", &v))
            g.sysroot = strdup(v);
        else if (arg(argv[i], "period", &v))
            g.period = strtoull(v, NULL, 0);
        else if (arg(argv[i], "depth", &v))
            g.depth = (unsigned)strtoul(v, NULL, 0);
        else if (arg(argv[i], "seed", &v))
            g.seed = strtoull(v, NULL, 0);
        else if (arg(argv[i], "callchain", &v))
            g.callchain = !strcmp(v, "on");
        else if (arg(argv[i], "ip", &v)) {
            g.ip = true;
            if (!(ip_period = positive(v))) {
                fprintf(stderr, "pgokit-lbr: ip=%s: want a number of instructions > 0\n", v);
                return -1;
            }
        } else {
            fprintf(stderr, "pgokit-lbr: unknown argument '%s'\n", argv[i]);
            return -1;
        }
    }
    if (info->system_emulation) {
        fprintf(stderr, "pgokit-lbr: only user-mode emulation (qemu-x86_64, qemu-aarch64) is supported\n");
        return -1;
    }
    /* QEMU's target names are uname's machine names, which pk_arch_by_name knows */
    g.arch = pk_arch_by_name(info->target_name);
    if (!g.arch) {
        fprintf(stderr, "pgokit-lbr: target %s is neither x86_64 nor aarch64\n", info->target_name);
        return -1;
    }
    if (g.period == 0 || g.depth == 0 || g.depth > RING) {
        fprintf(stderr, "pgokit-lbr: period must be > 0 and depth in 1..%d\n", RING);
        return -1;
    }
    if (g.dir && g.dir[0] != '/') {
        fprintf(stderr, "pgokit-lbr: dir=%s: want an absolute path (the guest may change directory)\n", g.dir);
        return -1;
    }
    if (g.ip)
        g.period = ip_period;
    g.exact_on = g.exact != NULL;
    g.pid = (uint32_t)getpid();
    g.ppid = (uint32_t)getppid();
    g.start.info = pk_record_tb_info(0, UINT64_MAX - 16, 1, PK_BR_NONE);
    g.start.word = W_NOTBR | W_RARE;
    if (!vcpu_get(0)) {
        fprintf(stderr, "pgokit-lbr: out of memory\n");
        return -1;
    }
    pk_err err;
    if (pk_u64map_init(&g.tbs, 1 << 14) != 0 || pk_u64map_init(&g.ids, 1 << 15) != 0) {
        fprintf(stderr, "pgokit-lbr: out of memory\n");
        return -1;
    }
    pk_perf_writer_opts *o = &g.wopts;
    memset(o, 0, sizeof *o);
    o->event_type = 0;            /* PERF_TYPE_HARDWARE */
    /* IP mode counts retired instructions: the event says so (instructions:u
     * in perf script), and the periods add up to the instruction total */
    o->event_config = g.ip ? 1 : 4;   /* instructions : branch-instructions */
    o->sample_period = g.period;
    o->callchain = g.callchain;
    o->branch_stack = !g.ip;
    /* perf takes a file without HEADER_ARCH for the host's: x86-64 leaves it
     * out (its files stay as they were), any other guest names itself */
    o->arch = g.arch == &pk_arch_x86_64 ? NULL : g.arch->perf_arch;
    if (lbr_probe_output(&err) != 0) {
        if (!g.dir) {
            fprintf(stderr, "pgokit-lbr: %s\n", err.msg);
            return -1;
        }
        /* an exec'd program runs on, unrecorded, rather than not at all */
        fprintf(stderr, "pgokit-lbr: process %u (%s) is not recorded: %s\n", g.pid, g.comm, err.msg);
        g.child = true;
    } else {
        g.open_pending = true;
    }
    lbr_finish_install(id);
    lbr_follow_install(id);
    lbr_alive_watch();
    qemu_plugin_register_vcpu_init_cb(id, vcpu_init);
    qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
    return 0;
}
