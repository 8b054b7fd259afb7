/* line_int.h — what the line-based generators (line.c: flat, line_cs.c:
 * context-sensitive) share: the decoded function ranges, the name cache and
 * the symbolizer's frames as profile locations. Internal to src/profgen. */
#ifndef PK_LINE_INT_H
#define PK_LINE_INT_H

#include "profgen/profgen.h"
#include "profgen/ctx_trie.h"
#include "unwind/unwind.h"

#include <stdlib.h>

typedef struct fn_range {
    const pk_dwarf_func *func;
    uint64_t begin, end;         /* [begin, end) */
    pk_insn *insns;
    size_t n;
    int64_t *delta;              /* n + 1: difference array of counts */
    uint32_t *uncond;            /* n + 1: unconditional transfers before index i */
    uint8_t *cut;                /* CS keys: inline frames change at instruction i (NULL until asked) */
    /* ranges as given that ran into this function from another one: the
     * instructions they cover (difference array, n + 1; NULL: none). Only
     * those are written unless the function is sampled. */
    int32_t *cover;
    bool sampled;                /* a range landed here (else decoded for a branch only) */
} fn_range;

typedef struct gen {
    pk_binary *bin;
    pk_symbolizer *sym;
    pk_profset *ps;
    const pk_profgen_opts *o;
    pk_profgen_stats *st;
    pk_vec frs;                  /* fn_range */
    pk_u64map fr_of;             /* range begin → index + 1 */
    size_t last;                 /* index + 1 of the last hit */
    pk_u64map name_of;           /* symbolizer string pointer → name id + 1 */
    pk_vec key;                  /* pk_ctx_frame: a context being shaped */
    bool fs;
    bool named;                  /* CS: the csraw's contexts are profile contexts, not addresses */
    /* the instruction noted before (pk_lg_note_insn): its innermost
     * location and count; func NULL at the start of a range */
    const char *prev_func;
    uint32_t prev_line;
    uint64_t prev_count;
} gen;

int pk_lg_intern_canon(gen *g, const char *name, pk_name_id *id, pk_err *err);
/* The decoded function range containing addr, or NULL (not in any DWARF
 * function). Decodes on first use. */
fn_range *pk_lg_range_for(gen *g, uint64_t addr, pk_err *err, int *failed);
/* Index of the instruction starting exactly at addr, or SIZE_MAX. */
size_t pk_lg_insn_index(const fn_range *r, uint64_t addr);
/* The function range and instruction indices [*ib, *ie] of a range that ran
 * straight in one DWARF function: 0; 1 when it cannot have (counted in the
 * stats by reason); -1 on error. */
int pk_lg_range_span(gen *g, uint64_t b, uint64_t e, uint64_t c, fn_range **hit, size_t *ib, size_t *ie, pk_err *err);
/* Adds a range's count to its instructions (pk_lg_range_span's answers). */
int pk_lg_add_range(gen *g, uint64_t b, uint64_t e, uint64_t c, fn_range **hit, pk_err *err);
uint32_t pk_lg_line_off(const pk_frame *f);
uint32_t pk_lg_base_disc(const gen *g, uint32_t d);
/* Counts a symbolized instruction with its count in the statistics the
 * discriminator warning reads: whether a frame has a discriminator, and
 * whether it ran another number of times than the instruction before it on
 * the same source line (the line spans blocks). g->prev_func = NULL first
 * at each range. */
void pk_lg_note_insn(gen *g, const pk_frames *fs, uint64_t count);
int pk_lg_call_kind(gen *g, uint64_t src, const pk_dwarf_func *callee, uint64_t c, pk_err *err);
int pk_lg_gen_open(gen *g, pk_binary *bin, pk_profset *out, const pk_profgen_opts *opts,
                   pk_profgen_stats *stats, pk_err *err);
void pk_lg_gen_close(gen *g);

#endif
