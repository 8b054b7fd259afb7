/* dwarf_internal.h — the DWARF reader behind pk_symbolizer, shared by
 * dwarf_*.c and symbolize.c only. It follows the lookup rules of LLVM's
 * DWARFContext (address → CU through .debug_aranges plus CU DIE ranges,
 * address → innermost subroutine DIE through an "AddrDieMap" built in DIE
 * preorder, line rows through sorted sequences) so that answers match
 * llvm-symbolizer exactly, but builds flat tables once per CU instead. */
#ifndef PK_DWARF_INTERNAL_H
#define PK_DWARF_INTERNAL_H

#include "binary/binary.h"

#include <sys/types.h>

/* DWARF constants we use (values from the DWARF 5 standard). */
enum {
    DW_TAG_compile_unit = 0x11, DW_TAG_partial_unit = 0x3c, DW_TAG_skeleton_unit = 0x4a,
    DW_TAG_subprogram = 0x2e, DW_TAG_inlined_subroutine = 0x1d,

    DW_AT_sibling = 0x01, DW_AT_name = 0x03, DW_AT_stmt_list = 0x10, DW_AT_low_pc = 0x11,
    DW_AT_high_pc = 0x12, DW_AT_comp_dir = 0x1b, DW_AT_abstract_origin = 0x31,
    DW_AT_decl_file = 0x3a, DW_AT_decl_line = 0x3b, DW_AT_declaration = 0x3c, DW_AT_specification = 0x47,
    DW_AT_ranges = 0x55, DW_AT_entry_pc = 0x52, DW_AT_call_column = 0x57, DW_AT_call_file = 0x58,
    DW_AT_call_line = 0x59, DW_AT_linkage_name = 0x6e, DW_AT_str_offsets_base = 0x72,
    DW_AT_addr_base = 0x73, DW_AT_rnglists_base = 0x74, DW_AT_MIPS_linkage_name = 0x2007,
    DW_AT_GNU_discriminator = 0x2136, DW_AT_GNU_addr_base = 0x2133, DW_AT_GNU_ranges_base = 0x2132,
    DW_AT_dwo_name = 0x76, DW_AT_GNU_dwo_name = 0x2130, DW_AT_GNU_dwo_id = 0x2131,

    DW_FORM_addr = 0x01, DW_FORM_block2 = 0x03, DW_FORM_block4 = 0x04, DW_FORM_data2 = 0x05,
    DW_FORM_data4 = 0x06, DW_FORM_data8 = 0x07, DW_FORM_string = 0x08, DW_FORM_block = 0x09,
    DW_FORM_block1 = 0x0a, DW_FORM_data1 = 0x0b, DW_FORM_flag = 0x0c, DW_FORM_sdata = 0x0d,
    DW_FORM_strp = 0x0e, DW_FORM_udata = 0x0f, DW_FORM_ref_addr = 0x10, DW_FORM_ref1 = 0x11,
    DW_FORM_ref2 = 0x12, DW_FORM_ref4 = 0x13, DW_FORM_ref8 = 0x14, DW_FORM_ref_udata = 0x15,
    DW_FORM_indirect = 0x16, DW_FORM_sec_offset = 0x17, DW_FORM_exprloc = 0x18,
    DW_FORM_flag_present = 0x19, DW_FORM_strx = 0x1a, DW_FORM_addrx = 0x1b,
    DW_FORM_ref_sup4 = 0x1c, DW_FORM_strp_sup = 0x1d, DW_FORM_data16 = 0x1e,
    DW_FORM_line_strp = 0x1f, DW_FORM_ref_sig8 = 0x20, DW_FORM_implicit_const = 0x21,
    DW_FORM_loclistx = 0x22, DW_FORM_rnglistx = 0x23, DW_FORM_ref_sup8 = 0x24,
    DW_FORM_strx1 = 0x25, DW_FORM_strx2 = 0x26, DW_FORM_strx3 = 0x27, DW_FORM_strx4 = 0x28,
    DW_FORM_addrx1 = 0x29, DW_FORM_addrx2 = 0x2a, DW_FORM_addrx3 = 0x2b, DW_FORM_addrx4 = 0x2c,
    DW_FORM_GNU_addr_index = 0x1f01, DW_FORM_GNU_str_index = 0x1f02,
    DW_FORM_GNU_ref_alt = 0x1f20, DW_FORM_GNU_strp_alt = 0x1f21,
};

/* Form classes of a decoded value. */
enum { DV_NONE, DV_CONST, DV_SCONST, DV_ADDR, DV_STR, DV_REF, DV_SECOFF, DV_BLOCK, DV_FLAG,
       DV_ADDRX, DV_STRX, DV_RNGLISTX, DV_LOCLISTX, DV_UNSUPPORTED };

typedef struct dw_val {
    uint8_t cls;
    uint8_t alt;         /* DV_REF into the dwz supplementary file (GNU_ref_alt, ref_sup4/8) */
    uint16_t form;
    uint64_t u;          /* constant, address, index, section or DIE offset (absolute) */
    const char *str;     /* DV_STR: NUL-terminated inside its section (NULL if not) */
} dw_val;

typedef struct dw_attr_spec {
    uint16_t attr, form;
    int8_t size;             /* bytes when fixed for every unit using the table, else -1 (-2: unset) */
    int64_t implicit_const;
} dw_attr_spec;

typedef struct dw_abbrev {
    uint64_t code;
    uint16_t tag;
    uint8_t children;
    uint32_t nattr, first;   /* specs[first .. first+nattr) */
    int32_t fixed_size;      /* bytes of all attributes if every form has a fixed
                                size for this unit's sizes, else -1 */
} dw_abbrev;

typedef struct dw_abbrev_table {
    uint64_t offset;
    dw_abbrev *abbrevs;
    size_t n;
    dw_attr_spec *specs;
    size_t nspecs;
    uint32_t *direct;        /* code → index+1 for codes < ndirect */
    size_t ndirect;
} dw_abbrev_table;

/* One line-table row (compact). */
typedef struct dw_row {
    uint64_t addr;
    uint32_t line;
    uint32_t discr;
    uint32_t file;
    uint16_t column;
    uint8_t end_seq;
} dw_row;

typedef struct dw_seq {
    uint64_t low, high;
    uint32_t first, last;    /* rows [first, last) ; last row is the end_sequence */
} dw_seq;

typedef struct dw_file {
    const char *name;
    uint64_t dir;
} dw_file;

typedef struct dw_line_table {
    int parsed, failed;
    uint16_t version;
    const char **dirs;
    size_t ndirs;
    dw_file *files;
    size_t nfiles;
    char **paths;            /* lazily built full paths, by file index */
    dw_row *rows;
    size_t nrows;
    dw_seq *seqs;
    size_t nseqs;
} dw_line_table;

/* A subprogram / inlined_subroutine DIE of an indexed CU. */
typedef struct dw_sub {
    uint64_t die;            /* absolute .debug_info offset */
    int32_t parent;          /* nearest enclosing subroutine record, -1 */
    uint8_t inlined;         /* DW_TAG_inlined_subroutine */
    uint8_t has_low_pc;
    uint8_t resolved;
    uint64_t low_pc;
    uint32_t call_file, call_line, call_column, call_discr;
    const char *name;        /* resolved lazily */
    const char *decl_file;   /* resolved lazily again (dw_sub_decl_file): the path
                                needs the whole line program parsed */
    struct dw_cu *decl_cu;   /* the unit whose file table decl_file_index is in */
    struct pk_symbolizer *decl_sym; /* and the file that unit is in (the dwz
                                       supplementary file's, or the unit's own) */
    uint64_t decl_file_index;
    uint8_t has_decl_file, decl_file_done;
    uint32_t decl_line;
} dw_sub;

typedef struct dw_cu {
    uint64_t off, end, die_off;
    uint8_t version, addr_size, offset_size, unit_type;
    uint64_t abbrev_off;
    dw_abbrev_table *abbrevs;    /* owned by the symbolizer's table list */
    /* from the unit DIE */
    int top_parsed;
    int top_failed;
    uint16_t tag;
    uint64_t base;  int has_base;
    uint64_t addr_base;  int has_addr_base;
    uint64_t str_offsets_base;  int has_str_offsets_base;
    uint64_t rnglists_base;  int has_rnglists_base;
    uint64_t stmt_list;  int has_stmt_list;
    const char *comp_dir;
    dw_val comp_dir_val;
    const char *dwo_name;     /* split DWARF skeleton: the .dwo it points to */
    int is_skeleton;
    uint64_t dwo_id;          /* DWARF 5 unit header, or DW_AT_GNU_dwo_id */
    uint64_t gnu_ranges_base; /* DWARF 4 skeleton: DW_AT_GNU_ranges_base */
    uint64_t ranges_base;     /* added to .debug_ranges offsets (GNU split units) */
    struct pk_symbolizer *dwo; /* the loaded .dwo (owned), and its unit */
    struct dw_cu *dwo_cu;
    int dwo_tried;
    dw_val ranges;            /* the unit DIE's DW_AT_ranges, cls DV_NONE if absent */
    uint64_t low_pc, high_pc; int has_low_high;
    /* per-CU index, built on first query */
    int indexed, index_failed;
    /* indexed under pk_symbolizer_want: the ranges it was asked for (a copy);
     * NULL for a whole index */
    pk_addr_range *idx_want;
    size_t nidx_want;
    dw_sub *subs;
    size_t nsubs;
    uint64_t *map_lo, *map_hi;
    int32_t *map_sub;
    size_t nmap;
    dw_line_table line;
    /* the unit's subprogram definitions (not declarations; with code,
     * abstract or inlined-only alike): DIE offsets, for pk_dwarf_units; and
     * how many inlined subroutines name an origin in another unit (LTO) */
    uint64_t *defs;
    size_t ndefs;
    size_t cross_origins;
    /* ranges of the unit's subprograms (not inlined ones), for pk_dwarf_funcs */
    struct dw_prog_range { int32_t sub; uint64_t begin, end; } *prog;
    size_t nprog;
} dw_cu;

/* One address range of a subroutine DIE, for the unit's address → DIE map. */
typedef struct dw_die_range {
    uint64_t lo, hi;
    uint64_t ord;         /* insertion order (preorder, then range-list order) */
    int32_t sub;          /* the DIE's index in the unit's subs (preorder) */
} dw_die_range;

/* Builds cu->map_* from the ranges (reordered in place), with LLVM's
 * AddrDieMap answers (see dwarf_info.c). -1 on OOM. */
int dw_build_die_map(dw_cu *cu, dw_die_range *r, size_t n);

typedef struct dw_sect {
    const uint8_t *data;
    size_t size;
    const char *name;
} dw_sect;

typedef struct dw_arange {
    uint64_t lo, hi;
    uint64_t cu_off;
} dw_arange;

typedef struct dw_dwp dw_dwp;

struct pk_symbolizer {
    pk_elf *elf;
    dw_dwp *dwp;               /* the split-DWARF package split units are read from first, or NULL */
    /* the dwz supplementary file's DWARF (.gnu_debugaltlink / .debug_sup):
     * DW_FORM_GNU_strp_alt / strp_sup strings and GNU_ref_alt / ref_sup
     * DIEs live there; NULL if none */
    struct pk_symbolizer *alt;
    pk_elf *own_elf;           /* a .dwo opened by this (nested) symbolizer */
    const char *path;
    dw_sect info, abbrev, str, line_str, str_offsets, addr, ranges, rnglists, line, aranges;
    dw_cu *cus;
    size_t ncus;
    dw_abbrev_table **tables;
    size_t ntables;
    pk_u64map table_by_off;    /* abbrev offset → index + 1 */
    dw_arange *aranges_tab;
    size_t naranges;
    pk_vec frames;             /* pk_frame, the last answer */
    pk_vec arena;              /* char * blocks owned */
    char *arena_cur;
    size_t arena_left;
    /* DWARF functions (pk_dwarf_funcs) */
    int funcs_built;
    pk_dwarf_func *funcs;
    size_t nfuncs;
    pk_addr_range *func_ranges;
    size_t nfunc_ranges;
    struct { uint64_t lo, hi; uint32_t func; } *func_map;
    size_t nfunc_map;
    /* pk_symbolizer_want: units indexed from then on keep only the
     * subprograms overlapping these sorted, disjoint ranges */
    pk_addr_range *want;
    size_t nwant;
};

/* ---- byte reading (inline: the DIE walk is the hot loop) ---- */
static inline uint64_t dw_uleb(pk_cursor *c)
{
    if (c->pos < c->end && !(*c->pos & 0x80))
        return *c->pos++;
    return pk_cursor_uleb(c);
}
static inline int64_t dw_sleb(pk_cursor *c)
{
    if (c->pos < c->end && !(*c->pos & 0x80)) {
        uint8_t b = *c->pos++;
        return (int64_t)(b & 0x40 ? (uint64_t)b | ~(uint64_t)0x7f : b);
    }
    return pk_cursor_sleb(c);
}
static inline uint64_t dw_uN(pk_cursor *c, unsigned n)
{
    switch (n) {
    case 1: return pk_cursor_u8(c);
    case 2: return pk_cursor_u16(c);
    case 4: return pk_cursor_u32(c);
    case 8: return pk_cursor_u64(c);
    case 3: {
        const uint8_t *p = pk_cursor_bytes(c, 3);
        return p ? (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 : 0;
    }
    default: c->bad = true; return 0;
    }
}

/* Error helper: "<file>: <section> offset N: what". Returns -1. */
int dw_bad(pk_symbolizer *s, pk_err *err, const dw_sect *sec, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* dwarf_forms.c */
dw_abbrev_table *dw_abbrevs_get(pk_symbolizer *s, uint64_t off, pk_err *err);
void dw_abbrevs_free(dw_abbrev_table *t);
const dw_abbrev *dw_abbrev_find(const dw_abbrev_table *t, uint64_t code);
void dw_abbrev_fix_sizes(dw_abbrev_table *t, const dw_cu *cu);
/* Reads one attribute value of `form` at the cursor; implicit_const comes from spec. */
int dw_read_form(pk_symbolizer *s, const dw_cu *cu, const dw_sect *sec, pk_cursor *c, uint16_t form,
                 int64_t implicit_const, dw_val *v, pk_err *err);
/* Resolves strx / strp / string to a C string (NULL if unresolvable). */
const char *dw_val_string(pk_symbolizer *s, const dw_cu *cu, const dw_val *v);
/* Resolves addr / addrx to an address. Returns 0 ok, -1 not an address. */
int dw_val_addr(pk_symbolizer *s, const dw_cu *cu, const dw_val *v, uint64_t *addr);
/* LLVM's toUnsigned: constants (data*, udata, sdata>=... , implicit_const). */
int dw_val_unsigned(const dw_val *v, uint64_t *out);
/* Range list of a DIE (DW_AT_ranges value) into a vec of pk_addr_range. */
int dw_ranges(pk_symbolizer *s, const dw_cu *cu, const dw_val *rv, pk_vec *out, pk_err *err);
/* Parses the unit DIE's attributes into cu (bases, stmt_list, comp_dir...). */
int dw_cu_top(pk_symbolizer *s, dw_cu *cu, pk_err *err);
dw_cu *dw_cu_containing(pk_symbolizer *s, uint64_t info_off);
char *dw_arena_strdup(pk_symbolizer *s, const char *str, size_t len);

/* dwarf_line.c */
int dw_line_parse(pk_symbolizer *s, dw_cu *cu, pk_err *err);
void dw_line_free(dw_line_table *lt);
/* Full path of file `idx` as llvm-symbolizer prints it (AbsoluteFilePath); NULL if invalid. */
const char *dw_line_file_path(pk_symbolizer *s, dw_cu *cu, uint64_t idx);
/* Index of the row answering addr, or -1. */
ssize_t dw_line_lookup(const dw_line_table *lt, uint64_t addr);

/* dwarf_dwp.c: a split-DWARF package's unit index over `elf` (which
 * outlives it). */
int dw_dwp_open(dw_dwp **out, pk_elf *elf, pk_err *err);
void dw_dwp_close(dw_dwp *p);
const char *dw_dwp_path(const dw_dwp *p);
/* The slices of the unit with this DWO id (str: the whole shared string
 * section): 1 found, 0 not in the package, -1 corrupt index. */
int dw_dwp_unit(const dw_dwp *p, uint64_t dwo_id, dw_sect *info, dw_sect *abbrev, dw_sect *str,
                dw_sect *str_offsets, dw_sect *rnglists, pk_err *err);

/* symbolize.c: the unit whose DIEs describe `cu` — itself, or for a split
 * DWARF 5 skeleton the unit of its .dwo (loaded on first use). */
int dw_cu_split(pk_symbolizer *s, dw_cu *cu, pk_symbolizer **ds, dw_cu **dcu, pk_err *err);

/* dwarf_info.c */
int dw_open_cus(pk_symbolizer *s, pk_err *err);
int dw_build_aranges(pk_symbolizer *s, pk_err *err);
/* The index of the first address range ending after addr (naranges if none). */
size_t dw_arange_after(const pk_symbolizer *s, uint64_t addr);
dw_cu *dw_cu_for_addr(pk_symbolizer *s, uint64_t addr);
int dw_cu_index(pk_symbolizer *s, dw_cu *cu, pk_err *err);
/* dw_cu_index, and again with the wanted ranges widened when the unit was
 * indexed under pk_symbolizer_want without [lo, hi). */
int dw_cu_index_covering(pk_symbolizer *s, dw_cu *cu, uint64_t lo, uint64_t hi, pk_err *err);
/* Steps over one attribute value without decoding it; -1 for a form it
 * does not know the size of (read it with dw_read_form instead). */
int dw_skip_form(const dw_cu *cu, pk_cursor *c, uint16_t form);
void dw_cu_free(dw_cu *cu);
int dw_sub_resolve(pk_symbolizer *s, dw_cu *cu, dw_sub *sub, pk_err *err);
/* The sub's DW_AT_decl_file as a path (NULL if none), after dw_sub_resolve. */
const char *dw_sub_decl_file(pk_symbolizer *s, dw_sub *sub);
/* Innermost subroutine record covering addr in an indexed CU, -1 if none. */
int32_t dw_cu_sub_at(const dw_cu *cu, uint64_t addr);

/* A unit's initial length: 32-bit, or 0xffffffff then 64-bit (the 64-bit
 * DWARF format, whose offsets are 8 bytes: *offsz). Values 0xfffffff0 to
 * 0xfffffffe are reserved: returned as they are, for the caller to refuse. */
static inline uint64_t dw_initial_length(pk_cursor *c, unsigned *offsz)
{
    uint64_t len = pk_cursor_u32(c);
    *offsz = 4;
    if (len == 0xffffffff) {
        len = pk_cursor_u64(c);
        *offsz = 8;
    }
    return len;
}

#endif
