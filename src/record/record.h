/* record.h — the library side of `pgokit record`.
 *
 *  - branch classification and taken-branch derivation for the QEMU plugin
 *    (pure functions, unit-tested: the plugin only calls them);
 *  - ELF facts the recorder needs (GNU build-id, PT_LOAD segments);
 *  - the recording mode (hardware LBR, IP sampling with perf, emulated LBR,
 *    emulated IP) from the user's flags and a PMU probe;
 *  - the `perf record` command lines (branch stacks per vendor; IP samples)
 *    and the `qemu-x86_64 -plugin ...` one;
 *  - the sample count of a written perf.data, per process;
 *  - the exact-counts file (ground truth written by the plugin);
 *  - a whole recording, start to end (pk_record_execute): what `pgokit
 *    record` runs, and what a test or another program can run the same way.
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
/* The same for one A64 instruction (4 bytes; *len = 4, or 0 when the word
 * does not decode). */
enum pk_br_kind pk_record_classify_a64(const uint8_t *code, size_t size, unsigned *len);
/* The classifier of e_machine `machine` (EM_AARCH64, else x86-64). */
enum pk_br_kind pk_record_classify_for(uint16_t machine, const uint8_t *code, size_t size, unsigned *len);

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

/* ---- recording modes ---- */
enum pk_record_mode {
    PK_MODE_HW_LBR,   /* perf record -b: the PMU's branch stacks + call chains */
    PK_MODE_PERF_IP,  /* perf record: IP samples + frame-pointer call chains */
    PK_MODE_EMU_LBR,  /* qemu-x86_64 + the pgokit plugin: emulated LBR */
    PK_MODE_EMU_IP,   /* the same plugin with ip=N: IP samples + call chains */
};

/* "hardware LBR", "IP sampling", "emulated LBR", "emulated IP sampling" */
const char *pk_record_mode_name(enum pk_record_mode m);

enum pk_cpu_vendor { PK_VENDOR_UNKNOWN, PK_VENDOR_INTEL, PK_VENDOR_AMD, PK_VENDOR_ARM /* arm64 cores, any implementer */ };

typedef struct pk_pmu_info {
    enum pk_cpu_vendor vendor;
    bool amd_lbr_v2;         /* cpuinfo flag: Zen 4 branch stacks */
    bool branch_stack;       /* perf_event_open accepted PERF_SAMPLE_BRANCH_STACK */
    char reason[256];        /* why branch stacks are unavailable */
    bool instructions;       /* a user-mode retired-instructions sampling event opens */
    bool buildid_mmap;       /* the kernel writes build-ids into MMAP2 records
                                (perf_event_attr.build_id, Linux 5.12+) */
    uint32_t max_sample_rate;/* kernel.perf_event_max_sample_rate, 0 unknown */
    char spe_pmu[32];        /* arm64: the Statistical Profiling Extension's PMU
                                ("arm_spe_0"), "" when the kernel has none */
} pk_pmu_info;

/* The vendor in /proc/cpuinfo text: x86 "vendor_id" lines, arm64 "CPU
 * implementer" lines (any implementer: Arm, Ampere, AWS...); *amd_lbr_v2 from
 * the flags line. Pure, for tests. */
enum pk_cpu_vendor pk_record_cpuinfo_vendor(const char *text, bool *amd_lbr_v2);
/* The first arm_spe_N PMU under `devices_dir` (/sys/bus/event_source/devices)
 * into out; false when there is none. */
bool pk_record_find_spe_pmu(const char *devices_dir, char *out, size_t out_size);

/* Reads /proc/cpuinfo and /proc/sys/kernel/perf_event_max_sample_rate and
 * probes perf_event_open for a user-mode branch-stack sampling event, an
 * instructions sampling event and MMAP2 build-ids. Never fails: the outcome is in
 * *info. */
void pk_record_probe_pmu(pk_pmu_info *info);
/* kernel.perf_event_max_sample_rate now (the kernel lowers it by itself when
 * sampling interrupts take too long); 0 when unreadable. */
uint32_t pk_record_max_sample_rate(void);

/* The mode for the user's flags (at most one of hardware / emulate, and
 * hardware without ip: the caller reports other combinations as usage
 * errors) on this PMU. No flag: hardware LBR when the PMU records branch
 * stacks, else IP sampling with perf. `why` gets one line saying why.
 * Returns -1 with err when --hardware meets a PMU without branch stacks. */
int pk_record_choose_mode(bool ip, bool emulate, bool hardware, const pk_pmu_info *pmu,
                          enum pk_record_mode *mode, char *why, size_t why_size, pk_err *err);

/* The perf event of IP sampling: "instructions:u" when the PMU counts
 * retired instructions, else the hrtimer-driven "cpu-clock:u" (every Linux
 * machine has it). A sample every N retired instructions lands on each
 * instruction in proportion to how often it runs, which is what a profile
 * counts; cycles and cpu-clock land in proportion to the time it takes, and
 * a stalled load outweighs a hundred quick instructions (see
 * pk_record_ip_rate). */
const char *pk_record_ip_event(const pk_pmu_info *pmu);

typedef struct pk_record_opts {
    const char *output;      /* perf.data path */
    uint64_t period;         /* LBR modes: taken branches between samples;
                                emulated IP: retired instructions between
                                samples; perf IP without freq: events (cycles,
                                or nanoseconds of cpu-clock) */
    unsigned lbr_depth;      /* emulated ring size */
    bool callchain;
    /* perf IP: call chains as user-stack copies of this many bytes per
     * sample (perf record --call-graph dwarf,N), unwound later with the
     * binary's CFI; 0: frame-pointer chains */
    uint32_t dwarf_stack;
    const char *exact_counts;/* emulated only: NULL for none */
    uint64_t seed;           /* jitter PRNG seed (emulated) */
    const char *comm;        /* emulated: process name for COMM (NULL: basename of cmd[0]) */
    const char *session_dir; /* emulated: follow forks and execs, each process
                                writing its own files into this directory
                                (absolute; dir= instead of out=, exact=on) */
    const char *argv0;       /* emulated: the program's argv[0] (-0), when not cmd[0] */
    bool ip;                 /* emulated: ip=PERIOD (IP samples) instead of LBR */
    const char *ld_prefix;   /* emulated: `-L DIR`, the target's sysroot for a
                                dynamic program of another architecture; NULL: none */
    int alive_fd;            /* emulated: alive=FD, the read end of a pipe whose write
                                end only record holds: every QEMU of the run dies
                                with record (> 0; 0: none) */
    /* perf modes */
    uint64_t freq;           /* perf IP: samples per second (-F); 0: -c period */
    int pid;                 /* attach to this process (-p) instead of running cmd; 0: none */
    double duration;         /* with pid: seconds to record (perf's workload is
                                `sleep`, started once the events are on); 0: until
                                perf is stopped by a signal */
    bool buildid_mmap;       /* --buildid-mmap: build-ids in MMAP2, no end-of-run
                                pass; else --no-buildid-cache (the end-of-run
                                pass still writes the BUILD_ID feature) */
    bool quiet;              /* perf -q */
} pk_record_opts;

/* Builds the argv (NULL-terminated, strings owned by `store`, a caller-freed
 * pk_vec of char*) for `perf record` with branch stacks on this vendor. Pure:
 * no probing. cmd is ignored (may be NULL) when o->pid is set. */
int pk_record_hw_argv(enum pk_cpu_vendor vendor, bool amd_lbr_v2, const pk_record_opts *o,
                      char *const *cmd, pk_vec *argv_out, pk_err *err);
/* Arm SPE sampling only branches: `perf record -e SPE_PMU/branch_filter=1,
 * jitter=1,ts_enable=1/u -c PERIOD` (PERIOD operations between samples). Each
 * record is one sampled branch with its target, in the AUX area: perf
 * script --itrace decodes it, pgokit's reader does not yet (the issue's
 * SPE consumption is not done). No call chains: SPE has none. Pure. */
int pk_record_spe_argv(const char *spe_pmu, const pk_record_opts *o, char *const *cmd, pk_vec *argv_out,
                       pk_err *err);
/* `perf record -e EVENT (-F freq | -c period) --call-graph fp ...`: user-space
 * IP samples with frame-pointer call chains. Pure, like the above. */
int pk_record_perf_ip_argv(const char *event, const pk_record_opts *o, char *const *cmd, pk_vec *argv_out,
                           pk_err *err);
/* Builds `qemu-x86_64 -plugin PLUGIN,k=v,... [-0 ARGV0] CMD...`. Paths must
 * not contain commas (QEMU's option syntax); that is reported as an error. */
int pk_record_qemu_argv(const char *qemu, const char *plugin, const pk_record_opts *o,
                        char *const *cmd, pk_vec *argv_out, pk_err *err);
/* The QEMU user-mode emulator of e_machine `machine`: "qemu-aarch64" for
 * EM_AARCH64, else "qemu-x86_64". */
const char *pk_record_qemu_name(uint16_t machine);
/* The -L prefix for a dynamic program of `machine`: where Debian's cross
 * packages put its loader and libraries ("/usr/aarch64-linux-gnu"); NULL
 * for the host's own machine, and NULL when the host (under host_root, ""
 * for the real one) has the target's multiarch libc installed, whose loader
 * and libraries must not be mixed with the cross ones. */
const char *pk_record_cross_sysroot(uint16_t machine, const char *host_root);
/* Frees the strings of an argv built above and the vector. */
void pk_record_argv_free(pk_vec *argv);

/* ---- following exec ----
 * qemu-x86_64 runs the program an emulated process execs natively, outside
 * the emulator. The plugin (and `record`, for its command) relaunch the
 * emulator on it instead; this decides whether that is possible and builds
 * the argv the kernel would give the program (exec_plan.c). */
enum pk_exec_how {
    PK_EXEC_FAILS,    /* the kernel would refuse the exec (err): let it fail as it would */
    PK_EXEC_EMULATE,  /* an x86-64 or AArch64 ELF program, directly or through #! interpreters */
    PK_EXEC_NATIVE,   /* the kernel would run it, the emulator cannot (why) */
};

typedef struct pk_exec_plan {
    enum pk_exec_how how;
    int err;          /* FAILS: the errno execve would return */
    char why[128];    /* NATIVE: why not under the emulator */
    char *elf;        /* EMULATE: the file qemu-x86_64 loads (a script's last interpreter) */
    char **argv;      /* EMULATE: the argv the program gets, NULL-terminated: a
                         script's "#!interp arg" turns [a0, a1...] into
                         [interp, arg, path, a1...], as the kernel does */
    size_t argc;
    uint16_t machine; /* EMULATE: the ELF's e_machine (EM_X86_64, EM_AARCH64): which QEMU */
    bool dynamic;     /* EMULATE: it has a PT_INTERP (needs the target's libraries) */
} pk_exec_plan;

/* What execve(path, argv) would run (argv may be NULL). Returns -1 only out
 * of memory; the outcome is in *p (free it with pk_record_exec_plan_free). */
int pk_record_exec_plan(const char *path, char *const *argv, pk_exec_plan *p, pk_err *err);
void pk_record_exec_plan_free(pk_exec_plan *p);

/* ---- a recording of several processes (emulated modes) ----
 * The plugin, given dir=, records each process image (the first program,
 * every fork child, every exec'd program) into its own file in that
 * directory (session.c lists the names); `record` merges them. */
typedef struct pk_record_part {
    char *data;       /* the process's finished perf.data (NULL: none) */
    char *exact;      /* its exact counts (NULL: none) */
    uint32_t pid;
    uint64_t start;   /* when it started recording (CLOCK_MONOTONIC ns) */
    char comm[16];
} pk_record_part;

typedef struct pk_record_unrec {
    uint32_t pid;
    char comm[16];
    char *why;        /* NULL in `unfinished` */
} pk_record_unrec;

typedef struct pk_record_session {
    pk_vec parts;       /* pk_record_part, by start */
    pk_vec unfinished;  /* pk_record_unrec: a perf.data still being written, or
                           never finished (the process was killed by SIGKILL) */
    pk_vec unrecorded;  /* pk_record_unrec: what the plugin could not record, and why */
} pk_record_session;

int pk_record_session_scan(const char *dir, pk_record_session *s, pk_err *err);
void pk_record_session_free(pk_record_session *s);
/* Whether pid is alive and a process of the recording in dir (a reused pid
 * is not). */
bool pk_record_session_alive(const char *dir, uint32_t pid);
/* Removes the files in dir, then dir. */
int pk_record_session_remove(const char *dir, pk_err *err);
/* Merges perf.data files of one recording, each in time order, into one in
 * time order (merge.c). They must share the event and the sample layout. */
int pk_record_merge_perf(char *const *paths, size_t n, const char *out, pk_err *err);

/* ---- what a recording holds (read back for the closing summary) ---- */
typedef struct pk_record_proc {
    uint32_t pid;
    uint64_t samples;
    char comm[16];           /* the process's last COMM (empty if none) */
} pk_record_proc;            /* one per process, and per program it exec'd
                                once it has samples */

typedef struct pk_record_tally {
    uint64_t samples;
    uint64_t with_callchain; /* samples with at least one user frame */
    uint64_t with_branches;  /* samples with a non-empty branch stack */
    uint64_t lost;           /* LOST / LOST_SAMPLES counts */
    pk_vec procs;            /* pk_record_proc, most samples first */
    size_t nprocs;           /* distinct pids with samples */
} pk_record_tally;

/* Reads a perf.data file through pk_perf_read and counts its samples per
 * process. A file that does not read is an error (file and offset). */
int pk_record_tally_file(const char *path, pk_record_tally *t, pk_err *err);
void pk_record_tally_free(pk_record_tally *t);

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
/* Adds up exact-counts files (one per process of a run) into one: the same
 * binary (path and build-id) in several gets the sum of their counts. */
int pk_exact_merge(char *const *paths, size_t n, const char *out, pk_err *err);
/* Sorts by (a, b) and adds up duplicates in place; returns the new length. */
size_t pk_exact_normalize(pk_exact_entry *e, size_t n);

/* ---- a whole recording (recording.c) ----
 * What `pgokit record` does between its options and its summary: choose the
 * mode, check the output, run perf or QEMU as a child that Ctrl-C and
 * SIGTERM stop cleanly (passed on; the recorder finishes its file), wait for
 * every emulated process of the run and merge their files, and put the
 * output in place only once it reads back whole (a failed or stopped run
 * never leaves a half file under the name asked; an older one is kept as
 * "<out>.old", as perf does). It prints nothing: its lines go to `note`.
 * One recording at a time in a process: SIGINT and SIGTERM handlers are
 * installed while the recorder runs and stay installed afterwards (a
 * second ^C must not end the process while the output is being placed). */

/* The sampling rates a recording takes when none is asked. */
/* perf IP sampling on retired instructions: a fixed period (a frequency
 * would make the kernel retune the period tick by tick to the program's
 * instruction rate, and so weigh fast code less again). At 1-3e9
 * instructions per second that is 2,000-6,000 samples per second, about
 * cpu-clock's 4999 Hz. Prime, so it does not divide loop trip counts. */
#define PK_RECORD_DEFAULT_INSN_PERIOD 500009
/* LBR modes: taken branches between samples. SQLite speedtest1 retires
 * 1.19e9 taken branches per native CPU-second (counted with --exact-counts,
 * see bench/record_cost.sh), so 20011 gives ~60,000 samples per native
 * second there, and still >= 10,000 for code with 5x fewer taken branches
 * (2e8/s, about one per 15 instructions). Prime, so it does not divide loop
 * trip counts; emulation also jitters it. */
#define PK_RECORD_DEFAULT_PERIOD 20011
/* Emulated IP mode: retired instructions between samples (jittered
 * uniformly in [N/2, 3N/2] by the plugin). At 1-3e9 instructions per native
 * second that is 100,000-300,000 samples per native second: IP samples say
 * less than a 32-entry branch stack each, so they come denser, for about
 * the same file size per second as the LBR default. Prime, like the above. */
#define PK_RECORD_DEFAULT_IP_PERIOD 10007
/* perf IP mode: samples per second of the program's CPU time. perf's own
 * default is 4000 Hz; 4999 keeps >= 4,000 samples per CPU-second even when
 * a fifth of the ticks land in the kernel (user-space sampling drops them),
 * and, prime, it does not run in step with work driven by the kernel tick
 * (HZ 100/250/1000) or by round-numbered timers. */
#define PK_RECORD_DEFAULT_FREQ 4999

/* The rate of a recording in `mode` when the user gave no --period
 * (period_set) or --freq (freq_set): o->period and o->freq. perf IP
 * sampling takes a fixed period of retired instructions where the PMU
 * counts them, else cpu-clock at PK_RECORD_DEFAULT_FREQ. Why: samples that
 * follow instructions (the emulator's IP mode) at the density of five
 * cpu-clock runs gave probe-only profiles that saved 0.4-1.0 points more
 * instructions on SQLite, Lua and bzip2 (three to six recordings each),
 * and call-site counts a median 1.26x off the exact ones where cpu-clock's
 * were 1.72x off (SQLite's 200 busiest sites). Pure. */
void pk_record_ip_rate(enum pk_record_mode mode, const pk_pmu_info *pmu, bool period_set, bool freq_set,
                       pk_record_opts *o);

/* The stack copy `pgokit record --ip` takes by itself from a program that
 * keeps no frame pointers (perf record --call-graph dwarf,N). Why this
 * size: every kind of profile needs a sample's direct caller (the targets
 * of calls through pointers), and 1 KiB holds it for 99.5 % of SQLite's
 * samples (512 bytes: 77 %, sqlite3VdbeExec's frame is larger) and 99.5 %
 * of Lua's (from 256 bytes); for 60 % of bzip2's, whose hot functions keep
 * frames of several KiB but call each other directly. Profiles from such copies
 * equalled those from perf's whole 8 KiB ones, every kind on SQLite, Lua,
 * bzip2 and zstd (four draws of five runs each, bench/ip_chains.sh). An
 * eighth of the bytes per sample. */
#define PK_RECORD_AUTO_STACK 1024

/* --ip's call chains when none were asked for: frame-pointer chains when
 * `exe` (the program to run, or /proc/PID/exe) sets up a frame pointer in
 * at least half of the code of its functions with a frame, counted
 * function by function from its .eh_frame (pk_cfi_frame_pointers); else
 * stack copies of PK_RECORD_AUTO_STACK bytes in o->dwarf_stack, which
 * profgen unwinds with that .eh_frame. A file that cannot be read as an
 * ELF file with .eh_frame (a script) keeps frame-pointer chains. `why`
 * gets one clause saying what was found. */
void pk_record_choose_chains(const char *exe, pk_record_opts *o, char *why, size_t cap);

enum pk_record_note_level {
    PK_NOTE_PROGRESS,   /* what is happening (the mode chosen, a wait, a stop): `-q` hides it */
    PK_NOTE_WARNING,    /* something the user must hear even with `-q` */
};
/* One line, without a trailing newline or a program-name prefix. */
typedef void (*pk_record_note_fn)(void *ctx, enum pk_record_note_level level, const char *line);

typedef struct pk_emu_outcome {
    size_t parts;               /* process images recorded (files merged) */
    pk_vec missing;             /* pk_record_unrec: processes that ran unrecorded */
} pk_emu_outcome;
void pk_emu_outcome_free(pk_emu_outcome *res);

typedef struct pk_recording {
    /* what is asked (zero the struct, then fill these in) */
    pk_record_opts o;            /* output (a path: "-" is the caller's business), exact_counts,
                                    period, freq, lbr_depth, callchain, seed, pid, duration, quiet */
    char **cmd;                  /* the program and its arguments, NULL-terminated; NULL with o.pid */
    bool ip, emulate, hardware;  /* the mode asked; none: LBR when the PMU records branch stacks, else IP */
    bool period_set, freq_set, depth_set; /* o.period / o.freq / o.lbr_depth were given (else defaults) */
    bool chains_set;             /* o.callchain / o.dwarf_stack were given (else chosen from the program) */
    const char *plugin;          /* the QEMU plugin (NULL: $PGOKIT_LBR_PLUGIN, or beside the running
                                    program: ./, ../, ../lib/pgokit/) */
    pk_record_note_fn note;      /* NULL: silent */
    void *note_ctx;
    /* what happened */
    enum pk_record_mode mode;
    char why[512];               /* why that mode */
    char details[256];           /* how: "perf record -e cpu-clock:u at 4999 Hz, ..." */
    char chains_why[320];        /* perf IP without chains_set: why these call chains */
    bool emulated;
    int signal;                  /* SIGINT or SIGTERM that stopped the recording; 0: none */
    int exit_status;             /* what a command running it should exit with: the program's status
                                    (128 + N when it died of signal N), 0 for an attach; on failure
                                    the recorder's status, 127 when nothing could run, else 1 */
    bool usage_error;            /* failed: the options do not fit the mode chosen (exit 2) */
    bool tallied;                /* the output is a regular file, read back: `tally` holds its counts */
    pk_record_tally tally;
    pk_emu_outcome emu;          /* emulated: files merged, processes that ran unrecorded */
    uint32_t rate_now;           /* perf IP at a frequency: kernel.perf_event_max_sample_rate at the
                                    end, when the kernel lowered it under o.freq meanwhile (else 0) */
} pk_recording;

/* Records. Returns 0 when the output was written (r->exit_status says how
 * the program ended), -1 with err when not (r->exit_status is the status
 * to fail with; r->emu may still name processes that ran unrecorded). */
int pk_record_execute(pk_recording *r, pk_err *err);
/* Frees what pk_record_execute left in r (the tally, the outcome). */
void pk_recording_free(pk_recording *r);

#endif
