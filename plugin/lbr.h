/* lbr.h — shared state of the pgokit QEMU plugin: plugin/lbr.c (LBR mode,
 * translation, arguments), plugin/ip.c (IP mode), plugin/finish.c (exact
 * counts, closing the outputs at exit, exec and death by a signal),
 * plugin/maps.c (guest mappings). The plugin is a separate component loaded
 * into qemu-x86_64: unlike the library it has process-global state (QEMU's
 * callbacks carry no context), `g` and the static vCPU 0. Everything here is
 * hidden: only qemu_plugin_install and qemu_plugin_version are exported, and
 * hidden data is reached PC-relative, with no GOT load on the hot path. */
#ifndef PK_LBR_H
#define PK_LBR_H

#include "binary/binary.h"
#include "perf/perf_data.h"
#include "qemu_plugin_api.h"
#include "record/record.h"

#include <pthread.h>

#pragma GCC visibility push(hidden)

#define RING 64          /* power of two, >= the largest --lbr-depth */
#define STACK 4096       /* shadow stack slots (power of two) */
#define MAX_CHAIN 127    /* perf's default kernel.perf_event_max_stack */
#define MAX_VCPUS 4096

/* ---- block words (LBR mode; see lbr.c) ----
 * Every guest address that starts or ends a block gets a small id (g.ids,
 * g.addr); a block's word is
 *   bits  1-27  id of its start                      (bit 0 clear)
 *   bit  32     W_ALWAYS: its last instruction always transfers (jmp, call,
 *               ret), so that even a jump to the next instruction is taken
 *   bits 33-59  id of its end: the fall-through and a call's return address
 *   bits 60-63  W_NOTBR, W_RET, W_CALL, W_RARE (any of the three)
 * The shadow stack of both modes holds end ids (return addresses). */
#define ID_BITS 27
#define ID_MAX ((1u << ID_BITS) - 1)
#define W_START(w) (((w) >> 1) & ID_MAX)
#define W_END(w) (((w) >> 33) & ID_MAX)
#define W_ALWAYS (1ull << 32)
#define W_NOTBR (1ull << 60)         /* leaving the block is not a branch (kind_rec 0) */
#define W_RET (1ull << 61)
#define W_CALL (1ull << 62)          /* call or indirect call: pushes */
#define W_RARE (1ull << 63)
#define ID_CHUNK 16                  /* g.addr: chunks of 2^16 addresses, never moved */

/* (a, b) -> count, open addressing; a slot is free when n == 0. Used only
 * with exact counts. */
typedef struct lbr_pairslot {
    uint64_t a, b, n;
} lbr_pairslot;
typedef struct lbr_pairmap {
    lbr_pairslot *s;
    size_t cap, len;
} lbr_pairmap;

/* A translated block. `older` chains earlier translations at the same
 * address with different code. IP mode also keeps the offset of each of its
 * instructions from info.vaddr (QEMU's decoding: real instruction starts). */
typedef struct lbr_tb {
    pk_tb_info info;
    uint64_t word;
    struct lbr_tb *older;
    const uint32_t *ioff;    /* IP mode: ninsns offsets; NULL otherwise */
    uint32_t ninsns;
} lbr_tb;

typedef struct __attribute__((aligned(64))) lbr_vcpu {
    /* hot: the first cache line */
    uint64_t pw;             /* LBR: word of the previous block; IP: its IP word */
    uint64_t left;           /* LBR: taken branches until the next sample, and
                                the ring write position: the ring fills
                                downwards and is rotated when a sample resets
                                the count. IP: instructions until the next
                                sample, >= 1 */
    uint64_t total;          /* LBR: taken branches up to the last sample */
    uint64_t depth;          /* shadow stack depth (may exceed STACK: wraps) */
    uint64_t interval;       /* the current jittered period */
    uint64_t rng;
    uint32_t tid;
    bool announced;
    /* exact-counts mode */
    const pk_tb_info *prev;
    uint64_t range_begin;
    /* The ring, as two arrays of words: the source block (its last
     * instruction and kind give from and type) and the target block (its
     * start is to). Two 8-byte stores per block; measured 1.5x faster than
     * 24-byte {from, to, flags} entries. */
    uint64_t rsrc[RING];
    uint64_t rto[RING];
    uint32_t stack[STACK];   /* ids of return addresses */
    lbr_pairmap ranges, branches;
} lbr_vcpu;

/* A guest executable mapping seen under a translated block. */
typedef struct lbr_map {
    uint64_t start, end, pgoff;
    char *path;               /* NULL: anonymous / [vdso] / not an ELF file */
    pk_elf_facts facts;
    bool has_facts;
    bool has_bias;            /* an executable PT_LOAD holds the block seen there */
    uint64_t bias;            /* run-time address - ELF vaddr */
    int bin;                  /* index into the exact-counts binaries, -1 if none */
} lbr_map;

typedef struct lbr_maps {
    lbr_map *v;               /* sorted by start */
    size_t n, cap;
    char **bin_paths;         /* distinct binaries (for exact counts) */
    size_t nbins;
} lbr_maps;

typedef struct lbr_state {
    pthread_mutex_t lock;
    pk_perf_writer *w;
    pk_perf_writer_opts wopts;
    char *out, *exact, *comm, *exe;
    /* Following forks and execs (dir=, follow.c): every process writes its
     * own "<dir>/<pid>-<ns>-<comm>.data" (and .exact), `pgokit record` merges
     * them. Without dir=, only the first process is recorded. */
    char *dir;
    bool exact_on;           /* exact counts asked for (follow mode) */
    char *pass;              /* sampling arguments, passed on to an exec'd program's plugin */
    char *qemu, *self;       /* qemu-x86_64 and this plugin, to relaunch them on exec */
    uint32_t ppid;           /* the parent process (EXIT records) */
    uint64_t ignored;        /* signals 1..63 the guest ignores (bit n-1): kept across exec */
    bool preloaded;
    bool ip;                 /* IP mode: period counts retired instructions */
    const pk_arch *arch;     /* the guest's instruction set, from QEMU's target */
    char *sysroot;           /* sysroot=: QEMU's -L, given again to an exec'd program's */
    uint64_t period, seed;
    unsigned depth;
    bool callchain;
    uint32_t pid;
    volatile bool child;     /* this process records nothing (a fork child
                                without dir=, or its output failed) */
    bool finished;
    bool failed;
    /* The output is created at the first translation rather than at install:
     * until QEMU has set up its signal handling (after the plugin loads), a
     * SIGINT/SIGTERM kills QEMU outright, and a temporary made before would
     * stay behind. Install only checks that it can be created. */
    bool open_pending;
    int alive_fd;            /* alive=: record's liveness pipe (-1: none) */
    pk_err err;
    uint64_t samples, oom;
    lbr_maps maps;
    pk_u64map tbs;           /* TB vaddr -> newest lbr_tb * (reused across retranslation) */
    lbr_tb *arena;
    size_t arena_left;
    pk_u64map ids;           /* guest address -> id (0: none yet) */
    uint64_t *addr[(ID_MAX >> ID_CHUNK) + 1];   /* id -> guest address */
    uint32_t nids;
    lbr_vcpu *vcpus[MAX_VCPUS];
    lbr_tb start;            /* `prev` of a fresh vCPU: matches nothing */
} lbr_state;

extern lbr_state g;
/* vCPU 0, the main thread of every guest, is a static: the hot paths reach
 * it at a link-time constant offset, with no load. */
extern lbr_vcpu lbr_v0;

/* lbr.c */
uint64_t lbr_now_ns(void);
void lbr_fail_locked(void);                  /* reports g.err once; caller holds g.lock */
uint64_t lbr_next_interval(lbr_vcpu *v);     /* jittered uniformly in [P/2, 3P/2] */
lbr_vcpu *lbr_vcpu_other(unsigned idx);      /* vCPU idx (created on first use); NULL past MAX_VCPUS */
uint64_t lbr_addr_of(uint32_t id);           /* caller holds g.lock */
/* Writes one sample of vCPU v: ip, the shadow stack as a user call chain
 * (when callchain=on), the given branch stack. Caller holds g.lock. */
void lbr_emit_locked(lbr_vcpu *v, uint64_t ip, uint64_t period, const pk_branch *br, uint64_t nbr);
/* Exact counts of moving from block p to a block at `to` (ranges and taken
 * branches); returns the transition. */
enum pk_transition lbr_exact_count(lbr_vcpu *v, const pk_tb_info *p, uint64_t to);
extern const int64_t lbr_kind_delta[17];     /* +1 call, -1 return, by enum pk_br_kind */

/* ip.c */
/* The callback argument of a block in IP mode; 0 when it cannot be encoded. */
uint64_t lbr_ip_word(const lbr_tb *t);
void lbr_ip_exec(unsigned int idx, void *ud);          /* ud: the IP word */
void lbr_ip_exec_exact(unsigned int idx, void *ud);    /* ud: the lbr_tb */

/* finish.c */
/* Closes perf.data and writes the exact counts, once; a process that does
 * not record and a second call do nothing. `exiting`: the process ends
 * (EXIT record), rather than exec another program. */
void lbr_finish(bool exiting);
/* Registers what ends the recording: QEMU's atexit (exit, exit_group) and
 * death by a signal. */
void lbr_finish_install(qemu_plugin_id_t id);
/* alive=FD: watches the pipe `pgokit record` holds the write end of, and
 * kills this process when record is gone (even by SIGKILL), so that no QEMU
 * of the run (forked and exec'd ones inherit the descriptor) runs on. Called
 * at install and in a fork child (threads do not survive fork). */
void lbr_alive_watch(void);

/* follow.c */
/* Opens this process's perf.data (and names its exact counts) and writes
 * its first records: COMM (exec) for a new program, FORK for a fork child
 * (fork != NULL). Caller holds g.lock or runs alone. */
int lbr_open_output(const pk_task_event *fork, pk_err *err);
/* Whether the output can be created (out=: a temporary beside it, removed
 * at once; dir=: the directory is writable), without leaving anything. */
int lbr_probe_output(pk_err *err);
/* Under g.lock: the deferred lbr_open_output (see open_pending). */
void lbr_open_pending_locked(void);
/* Registers the fork handlers and the syscall callback (exec, sigaction). */
void lbr_follow_install(qemu_plugin_id_t id);

/* maps.c */
/* Makes sure a mapping covering `addr` is known; writes an MMAP2 record for a
 * newly seen file mapping through `w` (may be NULL). Caller holds the lock.
 * Returns -1 only when writing the record failed (message in werr). */
int lbr_maps_ensure(lbr_maps *m, uint64_t addr, pk_perf_writer *w, uint32_t pid, uint64_t time,
                    pk_err *werr);
/* Registers (and announces) every mapping of `path` now, so that the main
 * binary's MMAP2 comes before any sample, as with the kernel. */
int lbr_maps_preload(lbr_maps *m, const char *path, pk_perf_writer *w, uint32_t pid, uint64_t time,
                     pk_err *werr);
/* Writes the MMAP2 records of every known file mapping again, for `pid`
 * (a fork child: perf's readers copy its parent's mappings at FORK, but
 * llvm-profgen --pid looks for the child's own). */
int lbr_maps_announce_all(const lbr_maps *m, pk_perf_writer *w, uint32_t pid, uint64_t time, pk_err *werr);
const lbr_map *lbr_maps_find(const lbr_maps *m, uint64_t addr);
/* Run-time address -> binary index and ELF vaddr; false when unmapped. */
bool lbr_maps_to_vaddr(const lbr_maps *m, uint64_t addr, int *bin, uint64_t *vaddr);

#pragma GCC visibility pop

#endif
