/* check_int.h — shared between the staleness checks (check.c: the report,
 * the probe check; check_lines.c: the line-based check). */
#ifndef PK_CHECK_INT_H
#define PK_CHECK_INT_H

#include "check/check.h"

/* A report under construction: functions are keyed by the profile's name id
 * (contexts of one leaf function add up), stale keys are collected with the
 * index of their function and sorted when the report is finished. */
typedef struct pk_check_build {
    pk_check_report *r;
    const pk_profset *ps;
    pk_vec funcs;      /* pk_check_func */
    pk_vec locs;       /* struct pk_check_bloc */
    pk_u64map func_of; /* profile name id → index into funcs + 1 */
    pk_u64map str_of;  /* profile name id → the report's copy (pointer) */
    /* MD5 profiles name functions by GUID only: the binary's name of a GUID,
     * for the report (0 and *name set when known). */
    int (*guid_name)(void *ctx, uint64_t guid, const char **name, size_t *len);
    void *guid_ctx;
} pk_check_build;

struct pk_check_bloc {
    pk_check_loc loc;
    size_t func;
};

int pk_check_build_init(pk_check_build *b, pk_check_report *r, const pk_profset *ps, pk_err *err);
void pk_check_build_free(pk_check_build *b);
/* The record of the function named `name` (a profile name id), created on first use. */
pk_check_func *pk_check_build_func(pk_check_build *b, pk_name_id name, size_t *index, pk_err *err);
/* Appends a stale key of function `func` (index); func_name and callee are
 * profile name ids (callee PK_NO_NAME for none). */
#define PK_NO_NAME UINT32_MAX
int pk_check_build_loc(pk_check_build *b, size_t func, pk_name_id func_name, pk_name_id callee, uint32_t line,
                       uint32_t disc, uint32_t why, uint64_t samples, pk_err *err);
/* The same for an inlined callee (pk_check_loc.inlined). */
int pk_check_build_inlinee(pk_check_build *b, size_t func, pk_name_id func_name, pk_name_id callee, uint32_t line,
                           uint32_t disc, uint32_t why, uint64_t samples, pk_err *err);
/* A copy of s (n bytes) owned by the report. */
const char *pk_check_build_str(pk_check_build *b, const char *s, size_t n, pk_err *err);
/* The length of name before its ".__uniq." suffix (all of it without one). */
size_t pk_check_uniq_base(const char *name, size_t len);
/* Moves the records into the report, sorted, with the totals computed. */
int pk_check_build_finish(pk_check_build *b, pk_err *err);

/* Lines only an optimized build gives code to (check_optlines.c). An -O2
 * build attributes code to lines an -O0 build (or another optimized build)
 * leaves without any: braces, "do{", "}else{" (a loop's latch, a merged
 * return), and, in the inlined copies of a function, lines of the caller's
 * text (code merged across the inlining). A profile location missing from
 * the new binary on such a line says nothing about the sources changing. */
typedef struct pk_optlines {
    pk_vec funcs;               /* struct optfunc: function id, decl file and line */
    pk_u64map index;            /* function id → index in funcs + 1 (valid once sorted) */
    bool sorted;
    char *src_path;             /* the source file held, one at a time */
    pk_mapped_file src;
    bool src_ok;
    pk_vec line_at;             /* size_t: offset of each line of src (line 1 first) */
} pk_optlines;

int pk_optlines_init(pk_optlines *o, pk_err *err);
/* A line the new binary gives function id code on (a frame of it), with
 * the function's decl file (a string that outlives o; NULL if unknown) and
 * decl line. Every frame of the walk, before the first query. */
int pk_optlines_func(pk_optlines *o, uint32_t id, const char *file, uint32_t decl, uint32_t line, pk_err *err);
/* Whether the location `offset` (16-bit line offset) of function id lies on
 * a line only an optimized build gives code to: line 0, in the text of the
 * functions after it (past the next function's declaration in the same file
 * and past its own last line), or a brace-only line of the source (when
 * the source is readable). */
bool pk_optlines_excused(pk_optlines *o, uint32_t id, uint32_t offset);
void pk_optlines_free(pk_optlines *o);

/* The line-based check (check_lines.c). */
int pk_check_lines(pk_binary *bin, pk_check_build *b, bool ignore_disc, pk_err *err);

#endif
