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

/* The line-based check (check_lines.c). */
int pk_check_lines(pk_binary *bin, pk_check_build *b, bool ignore_disc, pk_err *err);

#endif
