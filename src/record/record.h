/* record.h — the library side of `pgokit record`.
 *
 *  - branch classification and taken-branch derivation for the QEMU plugin
 *    (pure functions, unit-tested: the plugin only calls them);
 *  - ELF facts the recorder needs (GNU build-id, PT_LOAD segments);
 *  - hardware mode: PMU probe and the `perf record` command line per vendor;
 *  - emulated mode: the `qemu-x86_64 -plugin ...` command line;
 *  - the exact-counts file (ground truth written by the plugin).
 */
#ifndef PK_RECORD_H
#define PK_RECORD_H

#include "common/pk_common.h"

/* ---- branch kinds (values are perf's branch types, PERF_BR_*, so they go
 * straight into bits 20..23 of a branch-stack entry's flags) ---- */
enum pk_br_kind {
    PK_BR_NONE = 0,      /* not a control transfer (TB ended for another reason) */
    PK_BR_COND = 1,
    PK_BR_UNCOND = 2,    /* direct jmp */
    PK_BR_IND = 3,       /* indirect jmp */
    PK_BR_CALL = 4,      /* direct call */
    PK_BR_IND_CALL = 5,
    PK_BR_RET = 6,
    PK_BR_SYSCALL = 7,
    PK_BR_REP = 16,      /* rep-prefixed string op: QEMU re-enters it per iteration */
};

/* Classifies one x86-64 instruction (the last of a translation block).
 * Returns its kind and its length (0 if it does not decode). */
enum pk_br_kind pk_record_classify(const uint8_t *code, size_t size, unsigned *len);

/* What the plugin precomputes per translation block, so that executing a
 * block costs no decoding. 32 bytes and 32-aligned: the hot path reads one
 * cache line per block. */
typedef struct __attribute__((aligned(32))) pk_tb_info {
    uint64_t vaddr;      /* first instruction */
    uint64_t last;       /* address of the last instruction */
    uint64_t ft;         /* where execution goes when no branch is taken: the
                            end of the block when it can fall through,
                            PK_NO_FALLTHROUGH when the last instruction always
                            transfers (jmp, call, ret), so that a jump to the
                            next instruction still counts as taken, as in
                            hardware LBR */
    uint16_t size;       /* of the last instruction: last + size is the return
                            address of a call */
    uint8_t kind;        /* enum pk_br_kind of the last instruction */
} pk_tb_info;

#define PK_NO_FALLTHROUGH UINT64_MAX

static inline pk_tb_info pk_record_tb_info(uint64_t vaddr, uint64_t last, unsigned last_size,
                                           enum pk_br_kind kind)
{
    bool always = kind == PK_BR_UNCOND || kind == PK_BR_IND || kind == PK_BR_CALL ||
                  kind == PK_BR_IND_CALL || kind == PK_BR_RET;
    pk_tb_info t;
    memset(&t, 0, sizeof t);
    t.vaddr = vaddr;
    t.last = last;
    t.ft = always ? PK_NO_FALLTHROUGH : last + last_size;
    t.size = (uint16_t)last_size;
    t.kind = (uint8_t)kind;
    return t;
}

static inline uint64_t pk_tb_end(const pk_tb_info *t) { return t->last + t->size; }

/* Outcome of moving from block `prev` to a block starting at `next`. */
enum pk_transition {
    PK_TR_FALLTHROUGH,   /* next == prev->ft: no taken branch */
    PK_TR_TAKEN,         /* a taken branch prev->last -> next of kind prev->kind */
    PK_TR_REPEAT,        /* a rep string op re-entered: not a branch, range continues */
    PK_TR_DISCONTINUITY, /* control moved without a branch instruction (signal,
                            sigreturn, syscall restart): not recorded as a branch */
};

static inline enum pk_transition pk_record_transition(const pk_tb_info *prev, uint64_t next)
{
    if (next == prev->ft)
        return PK_TR_FALLTHROUGH;
    if (prev->kind == PK_BR_REP && next == prev->last)
        return PK_TR_REPEAT;
    if (prev->kind == PK_BR_NONE || prev->kind == PK_BR_SYSCALL || prev->kind == PK_BR_REP)
        return PK_TR_DISCONTINUITY;
    return PK_TR_TAKEN;
}

/* ---- ELF facts ---- */
typedef struct pk_elf_load {
    uint64_t offset, vaddr, filesz, memsz;
    uint32_t flags;      /* PF_X = 1, PF_W = 2, PF_R = 4 */
} pk_elf_load;

typedef struct pk_elf_facts {
    uint8_t build_id[20];
    uint8_t build_id_size;   /* 0 when the file has no GNU build-id note */
    uint16_t type;           /* ET_EXEC 2, ET_DYN 3 */
    unsigned nloads;
    pk_elf_load loads[16];
} pk_elf_facts;

/* Reads the ELF header, PT_LOAD segments and the GNU build-id note of a
 * 64-bit little-endian ELF file. */
int pk_record_elf_facts(const char *path, pk_elf_facts *f, pk_err *err);
/* File offset -> ELF virtual address (the "preferred base" address); returns
 * false when no PT_LOAD segment holds the offset. */
bool pk_record_elf_offset_to_vaddr(const pk_elf_facts *f, uint64_t offset, uint64_t *vaddr);

/* ---- hardware mode ---- */
enum pk_cpu_vendor { PK_VENDOR_UNKNOWN, PK_VENDOR_INTEL, PK_VENDOR_AMD };

typedef struct pk_pmu_info {
    enum pk_cpu_vendor vendor;
    bool amd_lbr_v2;         /* cpuinfo flag: Zen 4 branch stacks */
    bool branch_stack;       /* perf_event_open accepted PERF_SAMPLE_BRANCH_STACK */
    char reason[256];        /* why branch stacks are unavailable */
} pk_pmu_info;

/* Reads /proc/cpuinfo and probes perf_event_open for a user-mode branch-stack
 * sampling event. Never fails: the outcome is in *info. */
void pk_record_probe_pmu(pk_pmu_info *info);

typedef struct pk_record_opts {
    const char *output;      /* perf.data path */
    uint64_t period;         /* taken branches between samples */
    unsigned lbr_depth;      /* emulated ring size */
    bool callchain;
    const char *exact_counts;/* emulated only: NULL for none */
    uint64_t seed;           /* jitter PRNG seed (emulated) */
    const char *comm;        /* emulated: process name for COMM (NULL: basename of cmd[0]) */
} pk_record_opts;

/* Builds the argv (NULL-terminated, strings owned by `store`, a caller-freed
 * pk_vec of char*) for `perf record` on this vendor. Pure: no probing. */
int pk_record_hw_argv(enum pk_cpu_vendor vendor, bool amd_lbr_v2, const pk_record_opts *o,
                      char *const *cmd, pk_vec *argv_out, pk_err *err);
/* Builds `qemu-x86_64 -plugin PLUGIN,k=v,... CMD...`. Paths must not contain
 * commas (QEMU's option syntax); that is reported as an error. */
int pk_record_qemu_argv(const char *qemu, const char *plugin, const pk_record_opts *o,
                        char *const *cmd, pk_vec *argv_out, pk_err *err);
/* Frees the strings of an argv built above and the vector. */
void pk_record_argv_free(pk_vec *argv);

/* ---- exact counts (ground truth from the emulator) ----
 *
 * File format, version 1, little-endian:
 *   0   char magic[8] = "PKEXACT1"
 *   8   u32 version = 1
 *   12  u32 nbinaries
 *   16  u64 unmapped   taken branches / ranges with an end outside any file
 *                      mapping (JIT, vdso, anonymous memory); not listed
 *   24  u64 reserved (0)
 *   32  binaries, each:
 *       u32 path_len; u8 build_id_size; u8 reserved[3]; u8 build_id[20];
 *       u32 reserved; path (path_len bytes, no NUL), zero-padded to 8;
 *       u64 nranges; u64 nbranches;
 *       nranges   × {u64 begin, u64 end, u64 count}
 *       nbranches × {u64 src,   u64 dst, u64 count}
 * Addresses are ELF virtual addresses of the binary (file offset mapped
 * through its PT_LOAD segments), i.e. offsets from its preferred load base.
 * A range [begin, end] is a fall-through run: begin is where execution
 * arrived by a taken branch (or a discontinuity), end is the address of the
 * last instruction before the next taken branch (inclusive), the same
 * convention as llvm-profgen's unsymbolized ranges. Both arrays are sorted by
 * (first, second) and hold no duplicates. */
/* The other end of a branch that crosses binaries: a call from the main
 * binary into libc is listed in the main binary as (src, EXTERNAL) and in
 * libc as (EXTERNAL, dst). */
#define PK_EXACT_EXTERNAL UINT64_MAX

typedef struct pk_exact_entry {
    uint64_t a, b, count;
} pk_exact_entry;

typedef struct pk_exact_binary {
    char *path;
    uint8_t build_id[20];
    uint8_t build_id_size;
    pk_exact_entry *ranges;
    size_t nranges;
    pk_exact_entry *branches;
    size_t nbranches;
} pk_exact_binary;

typedef struct pk_exact_counts {
    pk_exact_binary *bins;
    size_t nbins;
    uint64_t unmapped;
} pk_exact_counts;

/* Sorts each binary's arrays (merging duplicates) and writes the file. */
int pk_exact_write(const char *path, pk_exact_counts *c, pk_err *err);
int pk_exact_read(const char *path, pk_exact_counts *c, pk_err *err);
/* Same over bytes in memory; `name` is for messages. */
int pk_exact_read_mem(const void *data, size_t size, const char *name, pk_exact_counts *c, pk_err *err);
void pk_exact_free(pk_exact_counts *c);
/* Sorts by (a, b) and adds up duplicates in place; returns the new length. */
size_t pk_exact_normalize(pk_exact_entry *e, size_t n);

#endif
