/* binary.h — the profiled binary: ELF (sections, symbols, segments, build-id,
 * separate debug files), instruction decoding (x86-64 and AArch64 behind one
 * interface chosen from e_machine; lazy, per function) and
 * DWARF symbolization (line, discriminator, inline frames, function start
 * lines), answered exactly as `llvm-symbolizer-19 --inlines` would.
 *
 * Ownership: a pk_elf owns its mapping; every pointer it hands out (names,
 * section bytes, symbol arrays) lives until pk_elf_close. A pk_binary owns its
 * pk_elf(s), its decoded instruction arrays and its symbolizer.
 *
 * Threads: the objects are NOT safe for concurrent use, not even for
 * lookups (sections are decompressed, functions decoded, units indexed and
 * file paths built lazily; pk_symbolize answers in a per-symbolizer buffer).
 * Use one pk_binary (or pk_elf + pk_symbolizer) per thread.
 *
 * Addresses are ELF virtual addresses (what `llvm-objdump -d` prints), not
 * runtime addresses: map runtime → file offset → vaddr with
 * pk_elf_offset_to_vaddr (see perf-data-inference-libs.md §1.12).
 */
#ifndef PK_BINARY_H
#define PK_BINARY_H

#include "common/pk_common.h"

/* ======================================================================
 * ELF
 * ====================================================================== */

typedef struct pk_elf pk_elf;

typedef struct pk_elf_section {
    const char *name;    /* ".text", ".debug_info", ".zdebug_line" ... */
    uint32_t index;      /* section header index */
    uint32_t type;       /* SHT_* */
    uint64_t flags;      /* SHF_* (SHF_COMPRESSED kept as in the file) */
    uint64_t addr;       /* sh_addr */
    uint64_t offset;     /* sh_offset in the file */
    uint64_t size;       /* sh_size: bytes in the file (compressed size if compressed) */
} pk_elf_section;

typedef struct pk_elf_symbol {
    const char *name;
    uint64_t addr;       /* st_value */
    uint64_t size;       /* st_size (0 for some assembler symbols) */
    uint8_t bind;        /* STB_LOCAL / STB_GLOBAL / STB_WEAK */
    uint8_t type;        /* STT_FUNC or STT_GNU_IFUNC */
    uint8_t is_alias;    /* 1: another symbol earlier in the array has the same
                            address and is the primary name (GLOBAL before WEAK
                            before LOCAL, then symbol-table order) */
    uint8_t from_dynsym; /* 1: .symtab was absent, this came from .dynsym */
    uint16_t shndx;      /* section index (never SHN_UNDEF) */
} pk_elf_symbol;

typedef struct pk_elf_segment {   /* a PT_LOAD program header */
    uint64_t vaddr, memsz;
    uint64_t offset, filesz;
    uint64_t align;
    uint32_t flags;      /* PF_X | PF_W | PF_R */
} pk_elf_segment;

/* Opens and maps an ELF64 little-endian file of any machine (decoding needs
 * one pk_arch_for_machine knows: x86-64 or AArch64). Validates the header, the section and program header
 * tables and the string tables; errors name the file and the offset. */
/* Gives the file's mapped pages back (re-read from the page cache on use). */
void pk_elf_release_pages(pk_elf *elf);
int pk_elf_open(pk_elf **out, const char *path, pk_err *err);
/* The same over bytes already in memory (they must outlive the pk_elf);
 * `name` stands for the path in messages. Split-DWARF .dwo files and
 * separate debug files are still looked up on disk, by the names the
 * bytes give. */
int pk_elf_open_mem(pk_elf **out, const void *data, size_t size, const char *name, pk_err *err);
void pk_elf_close(pk_elf *elf);

const char *pk_elf_path(const pk_elf *elf);
uint16_t pk_elf_type(const pk_elf *elf);       /* ET_EXEC, ET_DYN, ET_REL ... */
uint16_t pk_elf_machine(const pk_elf *elf);    /* EM_X86_64 ... */
/* Its instruction set (pk_arch_for_machine of e_machine, below); NULL when
 * pgokit cannot decode it. */
const struct pk_arch *pk_elf_arch(const pk_elf *elf);
const uint8_t *pk_elf_bytes(const pk_elf *elf, size_t *size); /* the whole file */

/* Sections. Index 0 is the null section. */
size_t pk_elf_num_sections(const pk_elf *elf);
const pk_elf_section *pk_elf_section_at(const pk_elf *elf, size_t index);
/* Exact name match ("\.zdebug_x" is NOT matched by ".debug_x" here). NULL if absent. */
const pk_elf_section *pk_elf_section_by_name(const pk_elf *elf, const char *name);
/* The contents of a section, decompressed if needed (SHF_COMPRESSED with zlib
 * or zstd, legacy "ZLIB"+size ".zdebug_*"). SHT_NOBITS gives size 0.
 * Decompressed copies are cached in the pk_elf. */
int pk_elf_section_data(pk_elf *elf, const pk_elf_section *sec,
                        const uint8_t **data, size_t *size, pk_err *err);
/* Looks up `name` (e.g. ".debug_info"), then its legacy ".zdebug_info" form,
 * and returns its (decompressed) bytes. Absent section: 0 with *data = NULL,
 * *size = 0. */
int pk_elf_debug_section(pk_elf *elf, const char *name,
                         const uint8_t **data, size_t *size, pk_err *err);

/* Function symbols (STT_FUNC / STT_GNU_IFUNC, defined) from .symtab, or from
 * .dynsym when there is no .symtab; sorted by address (aliases adjacent,
 * primary first). */
const pk_elf_symbol *pk_elf_funcs(const pk_elf *elf, size_t *count);
/* The primary function symbol containing vaddr (addr <= vaddr < addr+size;
 * a size-0 symbol covers only its own address). NULL if none. */
const pk_elf_symbol *pk_elf_func_at(const pk_elf *elf, uint64_t vaddr);
/* First function symbol with this exact name, NULL if none. */
const pk_elf_symbol *pk_elf_func_by_name(const pk_elf *elf, const char *name);
/* Data objects are not listed; this finds any defined symbol (any type) by
 * name, e.g. "__llvm_fs_discriminator__". Returns 1 and fills *sym if found. */
int pk_elf_find_symbol(const pk_elf *elf, const char *name, pk_elf_symbol *sym);

/* A symbol of any type defined in a section (pk_elf_section_symbols). */
typedef struct pk_elf_section_sym {
    const char *name;
    uint64_t addr;       /* st_value */
    uint32_t shndx;      /* the section it is defined in */
} pk_elf_section_sym;
/* Every symbol of the file's own .symtab (never .dynsym nor a debug file's)
 * defined in a section, in table order, as LLVM's ObjectFile::symbols()
 * lists them: an unnamed section symbol named after its section. *syms is
 * malloc'ed (NULL, 0 without .symtab). */
int pk_elf_section_symbols(const pk_elf *elf, pk_elf_section_sym **syms, size_t *count, pk_err *err);

/* The name llvm-symbolizer prints for the outermost frame: it overrides the
 * DWARF name with the symbol table's (.symtab, else .dynsym; FUNC, OBJECT,
 * IFUNC and NOTYPE symbols of SHF_ALLOC sections; at one address the largest
 * size wins; a size-0 symbol extends to the next one). Returns 1 and fills
 * *name and *start when a symbol covers vaddr, 0 otherwise. *file is the
 * preceding STT_FILE name for a local symbol (llvm-symbolizer shows it when
 * DWARF has no file), else NULL. */
int pk_elf_symbolizer_name(pk_elf *elf, uint64_t vaddr, const char **name, uint64_t *start, const char **file);

/* PT_LOAD segments in program-header order. */
const pk_elf_segment *pk_elf_segments(const pk_elf *elf, size_t *count);
/* The preferred load base: (p_vaddr - p_offset) of the lowest PT_LOAD,
 * page-aligned (4 KiB) — the address at which file offset 0 is mapped when
 * the binary loads where it was linked. 0 for a PIE, 0x400000 for a typical
 * non-PIE executable. Raw profiles store addresses relative to this. */
uint64_t pk_elf_preferred_base(const pk_elf *elf);
/* The page-aligned vaddr (and file offset) of the first executable PT_LOAD:
 * llvm-profgen's "preferred text segment address", which its unsymbolized
 * profile offsets are relative to. 0 if no executable segment. */
uint64_t pk_elf_first_exec_vaddr(const pk_elf *elf);
uint64_t pk_elf_first_exec_offset(const pk_elf *elf);
/* file offset ↔ ELF vaddr through the PT_LOAD covering it (file part only for
 * offsets; memsz for vaddrs). Return 0 on success, -1 if no segment covers it
 * (no error message: a miss is an ordinary outcome). */
int pk_elf_offset_to_vaddr(const pk_elf *elf, uint64_t offset, uint64_t *vaddr);
int pk_elf_vaddr_to_offset(const pk_elf *elf, uint64_t vaddr, uint64_t *offset);
/* Bytes of the file backing [vaddr, vaddr+len) inside one PT_LOAD's file part;
 * NULL if not fully backed. */
const uint8_t *pk_elf_vaddr_bytes(const pk_elf *elf, uint64_t vaddr, size_t len);

/* GNU build-id (NT_GNU_BUILD_ID note). *len = 0 and *id = NULL if absent. */
void pk_elf_build_id(const pk_elf *elf, const uint8_t **id, size_t *len);
/* Lower-case hex of the build-id into buf (2*len+1 bytes); "" if none. */
void pk_elf_build_id_hex(const pk_elf *elf, char *buf, size_t bufsize);
/* .gnu_debuglink file name and CRC; NULL if absent. */
const char *pk_elf_debuglink(const pk_elf *elf, uint32_t *crc);
/* True when the file has DWARF (.debug_info or .zdebug_info with bytes). */
bool pk_elf_has_dwarf(const pk_elf *elf);

/* True when the file has a .symtab (not only .dynsym). */
bool pk_elf_has_symtab(const pk_elf *elf);
/* A fully stripped `elf` (no .symtab) takes its function symbols from the
 * .symtab of its separate debug file `debug` (same build: the caller checks
 * the build-ids), which must outlive it. Nothing happens when `elf` has its
 * own .symtab or `debug` has none. */
int pk_elf_adopt_symbols(pk_elf *elf, const pk_elf *debug, pk_err *err);
/* The section a function symbol's shndx refers to (in the file the symbols
 * came from); NULL if out of range. */
const pk_elf_section *pk_elf_symbol_section(const pk_elf *elf, uint16_t shndx);

/* Where the debug information of a binary is looked for (debuginfo.c), the
 * way gdb, perf and the elfutils tools do. All fields may be zero. */
typedef struct pk_debug_opts {
    const char *debug_binary;       /* --debug-binary: this file, whose build-id must match */
    const char *const *debug_dirs;  /* --debug-dir roots, searched before /usr/lib/debug */
    size_t ndebug_dirs;
    const char *dwp;                /* --dwp: the split-DWARF package of the binary */
    bool no_default_dir;            /* do not search /usr/lib/debug (tests) */
    bool no_debuginfod;             /* do not ask debuginfod even if DEBUGINFOD_URLS is set */
} pk_debug_opts;

/* Finds the separate debug file of `elf`:
 *   1. ROOT/.build-id/xx/rest.debug for each --debug-dir ROOT, then
 *      /usr/lib/debug (the build-id must match);
 *   2. the .gnu_debuglink name in the binary's dir, dir/.debug/ and
 *      ROOT/<absolute dir>/ for each root (CRC32 checked);
 *   3. debuginfod (libdebuginfod, its cache) when DEBUGINFOD_URLS is set.
 * Returns 0 with *path = malloc'ed path and *how = a static word saying how
 * it was found ("build-id", "debuglink", "debuginfod"), or *path = NULL if
 * none was found; then *why_not (if why_not is not NULL) is NULL or a
 * malloc'ed sentence saying why: a candidate refused (a debuglink target
 * with another CRC, a build-id file of another build; not searched
 * further) or what debuginfod said (unreachable, not there, no answer in
 * time, no build-id to ask for), for the error of a caller that needs the
 * debug information. -1 only when out of memory. */
int pk_debuginfo_find(const pk_elf *elf, const pk_debug_opts *opts, char **path, const char **how, char **why_not,
                      pk_err *err);
/* The dwz supplementary file a debug file names (.gnu_debugaltlink or
 * .debug_sup): its path as given, relative to the debug file, under each
 * root, by its build-id under each root, then through debuginfod. 0 with
 * *path = NULL when the file names none; -1 when it names one not found. */
int pk_debuginfo_find_alt(const pk_elf *debug, const pk_debug_opts *opts, char **path, pk_err *err);
/* Kept for callers without options: pk_debuginfo_find with none. */
int pk_elf_find_debug_file(const pk_elf *elf, char **path, pk_err *err);
/* The supplementary file's name and build-id as the debug file gives them
 * (.gnu_debugaltlink, else .debug_sup); NULL if none. */
const char *pk_elf_altlink(const pk_elf *elf, const uint8_t **build_id, size_t *build_id_len);

/* ======================================================================
 * Instruction decoding behind an architecture interface
 * ====================================================================== */

/* The kinds every architecture maps its control transfers onto (x86-64
 * names, historically; AArch64 equivalents in brackets). */
enum pk_insn_class {
    PK_INSN_OTHER = 0,   /* no control transfer (x86 syscall, int3, ud2, hlt;
                            A64 svc, brk, udf, BTI and PAC hints) */
    PK_INSN_CALL,        /* direct call rel32 [BL] */
    PK_INSN_ICALL,       /* indirect call (register / memory), far calls [BLR, BLRAA...] */
    PK_INSN_RET,         /* ret, ret imm16, retf, iret [RET, RETAA, RETAB, ERET...] */
    PK_INSN_JMP,         /* direct unconditional jmp rel8/rel32 [B] */
    PK_INSN_IJMP,        /* indirect jmp (register / memory, incl. notrack), far jmp [BR, BRAA...] */
    PK_INSN_CJMP,        /* conditional branch jcc / jrcxz / loop* (always direct)
                            [B.cond, BC.cond, CBZ/CBNZ, TBZ/TBNZ] */
    PK_INSN_INVALID,     /* bytes that do not decode; len is 1 */
};

typedef struct pk_insn {
    uint64_t addr;
    uint64_t target;     /* direct target of CALL / JMP / CJMP, else 0 */
    uint8_t len;         /* 1..15 (x86-64), 4 (AArch64) */
    uint8_t cls;         /* enum pk_insn_class */
} pk_insn;

/* Decodes one instruction at `addr` from `len` readable bytes. Returns its
 * length and fills *out, or 0 if the bytes do not form an instruction
 * (out->cls = PK_INSN_INVALID, out->len = 1). */
typedef size_t (*pk_decode_fn)(const uint8_t *code, size_t len, uint64_t addr, pk_insn *out);

/* One instruction set: what every stage that looks at machine code asks,
 * chosen from the ELF header's e_machine (never from the host: one pgokit
 * reads both kinds of binaries). Instances are constant. */
typedef struct pk_arch {
    const char *name;        /* "x86-64", "aarch64" */
    const char *perf_arch;   /* perf's arch string (HEADER_ARCH): "x86_64", "aarch64" */
    uint16_t machine;        /* EM_X86_64, EM_AARCH64 */
    uint8_t min_len, max_len;/* instruction lengths: 1..15, 4..4 */
    uint8_t align;           /* instruction alignment: 1, 4 */
    pk_decode_fn decode;
    /* Execution does not go on after this (non-branch) instruction: x86 ud2,
     * hlt, int3; A64 udf, brk, hlt. */
    bool (*is_trap)(const uint8_t *code, size_t len);
    uint8_t trap_max_len;    /* no longer instruction is a trap: 2, 4 */
    /* The frame-pointer prologue at a function's entry: the offset of the
     * first instruction after it has set up the frame pointer, reading
     * `prologue_len` bytes from the entry; 0 if they hold no such prologue
     * (x86-64: [endbr64] push %rbp; mov %rsp,%rbp. A64: [bti c | paciasp |
     * pacibsp] [sub sp] stp x29, x30, [sp...]; ...; mov x29, sp or add x29,
     * sp, #N within the 8 words). Until then (and after
     * the epilogue) a frame-pointer call chain misses the direct caller. */
    size_t (*frame_setup)(const uint8_t *code);
    uint8_t prologue_len;    /* bytes frame_setup reads: 8, 32 */
    /* The instruction (len bytes) restores the caller's frame pointer, as an
     * epilogue does before a return or a tail call (x86-64: pop %rbp,
     * leave. A64: ldp x29, x30, [sp]...). */
    bool (*frame_restore)(const uint8_t *code, size_t len);
    /* A PLT stub at `addr` (plt_len bytes from it): 1 and the GOT slot it
     * jumps through in *slot, else 0 (x86-64: [endbr64] [bnd] jmp
     * *slot(%rip); A64: [bti c] adrp x16, slot; ldr x17, [x16, #lo12]). */
    int (*plt_slot)(const uint8_t *code, uint64_t addr, uint64_t *slot);
    uint8_t plt_len;         /* 11, 12 */
    /* Dynamic relocation types that fill a GOT slot with a function's
     * address (R_*_JUMP_SLOT, R_*_GLOB_DAT): calls through them name it. */
    uint32_t reloc_jump_slot, reloc_glob_dat;
    /* R_*_RELATIVE: a word of data that holds an address of the binary
     * (its addend); in code, a code address taken (a computed-goto label). */
    uint32_t reloc_relative;
    /* clang-19 writes this target's call-site pseudo-probes only into the
     * DWARF discriminators of the calls, not into .pseudo_probe (AArch64):
     * the probe loader recovers them from there (probe_calls.c). */
    bool call_probes_in_dwarf;
} pk_arch;

extern const pk_arch pk_arch_x86_64;
extern const pk_arch pk_arch_aarch64;

/* The architecture of an e_machine value; NULL when pgokit cannot decode it. */
const pk_arch *pk_arch_for_machine(uint16_t machine);
/* The same by name ("x86-64"/"x86_64", "aarch64"/"arm64"); NULL if unknown. */
const pk_arch *pk_arch_by_name(const char *name);

static inline size_t pk_arch_decode(const pk_arch *a, const uint8_t *code, size_t len, uint64_t addr,
                                    pk_insn *out)
{
    return a->decode(code, len, addr, out);
}

/* x86-64: a table-driven fast path for common encodings, Zydis 4 for the rest. */
size_t pk_x86_decode(const uint8_t *code, size_t len, uint64_t addr, pk_insn *out);
/* The same through Zydis alone (the fast path's reference, for tests and benchmarks). */
size_t pk_x86_decode_zydis(const uint8_t *code, size_t len, uint64_t addr, pk_insn *out);
/* The instruction at `addr` as LLVM 19's printer shows it after
 * llvm-profgen's "ADDR:": "\tmnemonic\toperands", AT&T (intel false) or
 * Intel syntax, branch targets as absolute addresses. Writes at most cap
 * bytes (NUL included) and its length to *insn_len; -1 when the bytes do
 * not decode (or the text does not fit). */
int pk_x86_print(const uint8_t *code, size_t len, uint64_t addr, bool intel, char *text, size_t cap,
                 size_t *insn_len);
/* AArch64 (A64, little-endian): fixed 4-byte words, table-driven. Fewer than
 * 4 bytes, or an address not 4-aligned, give PK_INSN_INVALID (len 1). Every
 * other word decodes: what is not a branch is PK_INSN_OTHER, unallocated
 * encodings included (objdump's "<unknown>", udf). */
size_t pk_a64_decode(const uint8_t *code, size_t len, uint64_t addr, pk_insn *out);

const char *pk_insn_class_name(int cls);
static inline bool pk_insn_is_branch(int cls) { return cls >= PK_INSN_CALL && cls <= PK_INSN_CJMP; }
static inline bool pk_insn_is_call(int cls) { return cls == PK_INSN_CALL || cls == PK_INSN_ICALL; }
/* A transfer that can leave the function without pushing a return address:
 * a jump (direct, indirect or conditional) whose target turns out to be
 * another function's entry is a tail call. Calls and returns are not. */
static inline bool pk_insn_tailcall_candidate(int cls)
{
    return cls == PK_INSN_JMP || cls == PK_INSN_IJMP || cls == PK_INSN_CJMP;
}

/* In instructions sorted by address: the index of the first one starting at
 * or after addr (n if none), and the index of the one starting exactly at
 * addr (SIZE_MAX if none). */
static inline size_t pk_insn_lower_bound(const pk_insn *insns, size_t n, uint64_t addr)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (insns[mid].addr < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}
static inline size_t pk_insn_index(const pk_insn *insns, size_t n, uint64_t addr)
{
    size_t i = pk_insn_lower_bound(insns, n, addr);
    return i < n && insns[i].addr == addr ? i : SIZE_MAX;
}

/* Control never falls through it: an unconditional jump, a call, a return.
 * A fall-through range (an LBR target up to the next entry's source) cannot
 * hold one before its last instruction. */
static inline bool pk_insn_is_uncond(int cls)
{
    return cls == PK_INSN_JMP || cls == PK_INSN_IJMP || cls == PK_INSN_RET ||
           cls == PK_INSN_CALL || cls == PK_INSN_ICALL;
}

/* ======================================================================
 * DWARF symbolization
 * ====================================================================== */

typedef struct pk_symbolizer pk_symbolizer;

/* One frame of an inline stack; pk_frames lists them innermost first, the
 * last one being the real (outlined) function — exactly the frames of
 * `llvm-symbolizer-19 --inlines --no-demangle`. */
typedef struct pk_frame {
    const char *func;        /* linkage name (DW_AT_linkage_name, else DW_AT_name,
                                through abstract_origin/specification); NULL = "??" */
    const char *file;        /* full path as llvm-symbolizer prints it; NULL = "??" */
    uint32_t line;           /* innermost: the line-table row's line; outer frames:
                                the call line of the frame inside them. 0 = unknown */
    uint32_t column;
    uint32_t discriminator;  /* innermost: row discriminator; outer: call discriminator
                                (raw, LLVM-encoded: see pk_discr_base) */
    uint32_t start_line;     /* DW_AT_decl_line of the subprogram (0 if none) */
    const char *start_file;  /* DW_AT_decl_file of the subprogram, full path; NULL if none */
    uint64_t start_addr;     /* DW_AT_low_pc of the frame's DIE (subprogram or inlined
                                subroutine) when it has one: llvm-symbolizer's StartAddress */
    bool has_start_addr;
    const char *comp_dir;    /* DW_AT_comp_dir of the frame's unit (with files); NULL if none */
} pk_frame;

typedef struct pk_frames {
    const pk_frame *frames;  /* innermost first; owned by the symbolizer, valid until
                                the next pk_symbolize call on it. The strings it points
                                to live as long as the symbolizer. */
    size_t count;            /* 0: no DWARF covers this address (llvm-symbolizer: "??") */
} pk_frames;

/* Opens a symbolizer over the DWARF of `elf` (the binary itself or its
 * separate debug file; the pk_elf must outlive the symbolizer). Cheap: it
 * builds the address → CU map (CU low_pc/high_pc/ranges, not .debug_aranges)
 * and nothing else; a CU's line table and inline index are built the first
 * time an address inside it is queried. Split DWARF (DWARF 5 and the GNU
 * DWARF 4 flavour) is followed to the .dwo files named by the skeleton units
 * (DW_AT_[GNU_]dwo_name, relative to DW_AT_comp_dir) when a unit is first
 * queried, or from a .dwp package (pk_symbolizer_set_dwp). An ELF without
 * DWARF is an error. */
int pk_symbolizer_open(pk_symbolizer **out, pk_elf *elf, pk_err *err);
/* The same for a dwz-compressed debug file: `alt` is its supplementary file
 * (pk_debuginfo_find_alt), whose strings and DIEs its alt forms refer to;
 * both ELFs outlive the symbolizer. */
int pk_symbolizer_open_alt(pk_symbolizer **out, pk_elf *elf, pk_elf *alt, pk_err *err);
/* Split units are read from this split-DWARF package (.dwp: its
 * .debug_cu_index) before their .dwo files; it outlives the symbolizer.
 * NULL: none. Errors for a file that is not a package. */
int pk_symbolizer_set_dwp(pk_symbolizer *sym, pk_elf *dwp, pk_err *err);
void pk_symbolizer_close(pk_symbolizer *sym);

/* The inline frames at vaddr. Errors only for corrupt DWARF (file + offset).
 * count 0: no unit covers vaddr; a unit without a subroutine DIE there gives
 * one frame with func NULL from its line table (llvm-symbolizer's "??"). */
int pk_symbolize(pk_symbolizer *sym, uint64_t vaddr, pk_frames *out, pk_err *err);

/* The inline frames of every address in [lo, hi), one call per span of
 * addresses sharing their innermost DIE, in address order: what pk_symbolize
 * gives for each address of the span, minus everything that needs the line
 * table (no file, line, column or discriminator on the innermost frame, no
 * file on the outer ones; call lines and discriminators are there). Addresses
 * no subroutine DIE covers are skipped. One DIE lookup per span instead of a
 * line-table and DIE lookup per instruction: code sizes per inline context.
 * A non-zero return from fn stops the walk and is returned as -1. */
typedef int (*pk_span_fn)(void *arg, uint64_t begin, uint64_t end, const pk_frames *frames, pk_err *err);
int pk_symbolize_spans(pk_symbolizer *sym, uint64_t lo, uint64_t hi, pk_span_fn fn, void *arg, pk_err *err);

typedef struct pk_addr_range { uint64_t begin, end; } pk_addr_range;

/* Restricts the units indexed from now on to the subprograms (with their
 * inline trees) that overlap `ranges`: a caller that knows every address it
 * will ask about (the code sizes of the sampled functions) skips decoding
 * the rest of a large unit. pk_symbolize answers outside the ranges may come
 * back empty and pk_dwarf_funcs lists only the kept subprograms;
 * pk_symbolize_spans widens a unit's index when asked about more. Units
 * already indexed whole stay whole; split-DWARF units are indexed whole. */
int pk_symbolizer_want(pk_symbolizer *sym, const pk_addr_range *ranges, size_t n, pk_err *err);
/* pk_symbolizer_want, then the index of every unit those ranges cross built
 * now (ahead of the queries, e.g. on another thread while the caller does
 * something else: the symbolizer is not thread-safe, nothing else may use it
 * meanwhile). A unit indexed for other ranges than a later query's is
 * indexed again, widened: answers never depend on what was wanted before. */
int pk_symbolizer_index(pk_symbolizer *sym, const pk_addr_range *ranges, size_t n, pk_err *err);

/* Builds the index of every CU now (benchmarking, or to see every DWARF
 * error up front). */
int pk_symbolizer_prepare(pk_symbolizer *sym, pk_err *err);

/* DWARF functions (DW_TAG_subprogram DIEs with code: concrete, outlined
 * instances), the function boundaries llvm-profgen uses. A function split by
 * gcc into "foo" and "foo.cold" is one entry with two ranges. One entry per
 * DIE: llvm-profgen merges entries of the same name (static functions of
 * different units) into one BinaryFunction; group by name for that. */

typedef struct pk_dwarf_func {
    const char *name;            /* linkage name, else name */
    uint32_t start_line;         /* DW_AT_decl_line */
    uint32_t nranges;
    const pk_addr_range *ranges; /* as listed in the DIE (empty ranges dropped) */
    uint64_t entry_pc;           /* DW_AT_low_pc, else the first range's begin as listed */
    /* Several DIEs of one name are one function in a profile (a coroutine's
     * ramp and its .resume/.destroy/.cleanup funclets): next_part is the
     * next of them (a ring; NULL when the name is the DIE's alone), and
     * not_entry marks a part whose start carries ELF symbols of other names
     * only (a funclet: a branch there does not enter the function). */
    const struct pk_dwarf_func *next_part;
    bool not_entry;
} pk_dwarf_func;

/* Whether a branch to vaddr enters f (its entry, not a funclet's start). */
static inline bool pk_dwarf_func_entered_at(const pk_dwarf_func *f, uint64_t vaddr)
{
    return f->entry_pc == vaddr && !f->not_entry;
}

/* All DWARF functions of all CUs (built on first call: one pass over the
 * DIEs), sorted by entry_pc. */
int pk_dwarf_funcs(pk_symbolizer *sym, const pk_dwarf_func **funcs, size_t *count, pk_err *err);
/* Compilation units, and which functions each could inline. Without (Thin)
 * LTO a compiler inlines only the bodies it sees in the unit it compiles: a
 * function defined in one .c file is never inlined into a caller in another.
 * A CSSPGO profile that nests such a callee under its caller says what the
 * compiler cannot do, and worse, the callee's unit then finds no profile of
 * its own for those calls (bzip2: BZ2_blockSort, blocksort.c, nested under
 * BZ2_compressBlock, compress.c, was compiled with no entry count at all).
 * A unit "has" a function when it holds a definition DIE of it: with code,
 * abstract (inlined only) or a C++ inline function's copy the linker
 * discarded; declarations do not count. An inlined subroutine whose origin
 * is in another unit (DW_FORM_ref_addr: LTO; or dwz's shared units) makes
 * the whole binary cross-unit: then anything may be inlined anywhere. */
typedef struct pk_dwarf_units pk_dwarf_units;
int pk_dwarf_units_build(pk_symbolizer *sym, pk_dwarf_units **out, pk_err *err);
void pk_dwarf_units_free(pk_dwarf_units *u);
/* The units inline across each other (LTO, or a shared dwz unit seen). */
bool pk_dwarf_units_cross(const pk_dwarf_units *u);
/* Whether `callee` can be inlined into `root` (both linkage names): false
 * only when both are known and no unit that has root has callee. */
bool pk_dwarf_units_can_inline(const pk_dwarf_units *u, const char *root, const char *callee);
/* How many units the binary has. */
size_t pk_dwarf_units_count(const pk_dwarf_units *u);

/* The DWARF function one of whose ranges contains vaddr; NULL if none or on
 * error (call pk_dwarf_funcs first to see errors). */
const pk_dwarf_func *pk_dwarf_func_at(pk_symbolizer *sym, uint64_t vaddr);
/* The DWARF functions' address ranges, all of them sorted by start
 * (pk_dwarf_funcs must have succeeded): how many there are, the index of
 * the last one starting at or before vaddr (0 when none does), and range i. */
size_t pk_dwarf_func_ranges_count(const pk_symbolizer *sym);
size_t pk_dwarf_func_range_from(const pk_symbolizer *sym, uint64_t vaddr);
pk_addr_range pk_dwarf_func_range(const pk_symbolizer *sym, size_t i);

/* LLVM discriminator decoding (llvm-profgen.md §3.6): the base discriminator
 * and duplication factor (0 → 1) of a raw DWARF discriminator. */
uint32_t pk_discr_base(uint32_t d);
uint32_t pk_discr_dup_factor(uint32_t d);
uint32_t pk_discr_copy_id(uint32_t d);

/* ======================================================================
 * The profiled binary: executable + debug info + lazy per-function decoding
 * ====================================================================== */

typedef struct pk_binary pk_binary;

/* Opens `path`; DWARF is read from `debug_path` if given (its build-id must
 * match), else from the binary itself if it has DWARF, else from the
 * separate debug file pk_debuginfo_find finds (none found: the binary has
 * no DWARF, which is not an error here; pk_binary_symbolizer will fail). A
 * binary without .symtab takes its function symbols from the debug file.
 * A debug file compressed by dwz brings its supplementary file. */
int pk_binary_open(pk_binary **out, const char *path, const char *debug_path, pk_err *err);
int pk_binary_open_opts(pk_binary **out, const char *path, const pk_debug_opts *opts, pk_err *err);
/* Which debug information the binary uses, for a line of output:
 * "DEBUG-PATH (how found)[, dwz supplementary file ALT][, split-DWARF
 * package DWP]", "the binary itself", or "none[: what debuginfod said]".
 * Lives until pk_binary_close. */
const char *pk_binary_debug_origin(const pk_binary *bin);
void pk_binary_close(pk_binary *bin);
/* drop_caches frees the symbolizer and the decoded instructions (both are
 * rebuilt on demand) and gives back the pages of the mapped files (read
 * again from the page cache if used): for a caller done with them that goes
 * on with other work, like a memory peak that needs none of it.
 * drop_insns frees the decoded instructions only. */
void pk_binary_drop_caches(pk_binary *bin);
void pk_binary_drop_insns(pk_binary *bin);

pk_elf *pk_binary_elf(pk_binary *bin);        /* the executable */
/* The executable's call-frame information (binary/cfi.h: .eh_frame, kept in
 * stripped binaries), indexed on first call and owned by bin. */
struct pk_cfi;
int pk_binary_cfi(pk_binary *bin, const struct pk_cfi **cfi, pk_err *err);
/* Its instruction set (from e_machine); NULL when pgokit cannot decode it,
 * and then every decoding call below fails. */
const pk_arch *pk_binary_arch(const pk_binary *bin);
pk_elf *pk_binary_debug_elf(pk_binary *bin);  /* where DWARF is read; NULL if none */
/* The symbolizer over the debug ELF (opened on first call, owned by bin). */
int pk_binary_symbolizer(pk_binary *bin, pk_symbolizer **sym, pk_err *err);

/* The one instruction starting at vaddr, decoded on its own (no function
 * decode, nothing cached): for an address already known to start an
 * instruction (a call site, an LBR source). -1 if vaddr is not in the file
 * or the bytes do not decode. */
int pk_binary_decode_one(pk_binary *bin, uint64_t vaddr, pk_insn *out);
/* The instructions of one function symbol (from pk_elf_funcs), decoded on
 * first request and cached: sorted by address, covering [addr, addr+size).
 * Undecodable bytes appear as PK_INSN_INVALID entries of length 1.
 * Size-0 symbols extend to the next symbol or the end of their section. */
int pk_binary_func_insns(pk_binary *bin, const pk_elf_symbol *func,
                         const pk_insn **insns, size_t *count, pk_err *err);
/* Same for an arbitrary address range (e.g. a DWARF .cold range), not cached:
 * the caller frees *insns with free(). */
int pk_binary_decode_range(pk_binary *bin, uint64_t begin, uint64_t end,
                           pk_insn **insns, size_t *count, pk_err *err);
/* The decoded instruction starting exactly at vaddr (decoding its function if
 * needed); NULL if vaddr is not an instruction boundary of a function symbol. */
const pk_insn *pk_binary_insn_at(pk_binary *bin, uint64_t vaddr, pk_err *err);
/* 1 when an instruction of [begin, end) (end: a range's last instruction,
 * not looked at) never falls through (pk_insn_is_uncond): the range is not
 * one that ran, e.g. made by a duplicated LBR entry. 0 otherwise, also when
 * begin is not in a function symbol (nothing known). */
int pk_binary_range_crosses_uncond(pk_binary *bin, uint64_t begin, uint64_t end);

#endif
