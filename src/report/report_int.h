/* report_int.h — what the report's files share: the model built from the
 * profile (report_model.c), the JSON sections written from it
 * (report_model.c, report_src.c), the page around them (report_page.c). */
#ifndef PK_REPORT_INT_H
#define PK_REPORT_INT_H

#include "common/demangle.h"
#include "common/json_out.h"
#include "report/report.h"

#include <stdio.h>

/* One function folded over every instance: each context of it and each
 * place it was inlined into. */
typedef struct rep_func {
    pk_name_id name;
    uint64_t self;        /* Σ body counts of every instance */
    uint64_t total;       /* Σ totals of its top-level profiles (inlinees included) */
    uint64_t head;        /* Σ head samples of its top-level profiles */
    uint32_t contexts;    /* top-level profiles (contexts) whose leaf it is */
    uint32_t inlined;     /* inlined instances */
    pk_u64map locs;       /* packed location → Σ count over instances */
} rep_func;

/* A node of the context tree: the root (index 0, "all samples"), then a
 * node per frame path. A child is keyed by (callee, callsite location in the
 * parent frame). */
enum {
    REP_NODE_PROFILE = 1,   /* a top-level profile (context) ends here */
    REP_NODE_INLINED = 2,   /* an inlined callsite of a nested profile */
    REP_NODE_SHOULD_INLINE = 4, /* ContextShouldBeInlined (pre-inliner) */
    REP_NODE_WAS_INLINED = 8,   /* ContextWasInlined (inlined in the profiled binary) */
};

typedef struct rep_node {
    uint32_t parent;
    pk_name_id name;
    uint32_t line, disc;  /* callsite in the parent's frame */
    uint32_t flags;       /* REP_NODE_* */
    uint32_t depth;
    uint64_t self;        /* Σ body counts of the profiles at this node */
    uint64_t total;       /* self + children's totals (filled after the walk) */
} rep_node;

typedef struct rep {
    const pk_report_input *in;
    const pk_profset *ps;
    FILE *out;            /* the page being built (open_memstream) */
    pk_json j;            /* JSON writer over out */
    /* names used by the JSON sections: name id → index in `names` + 1 */
    pk_u64map name_idx;
    pk_vec names;         /* pk_name_id, in first-use order */
    /* functions */
    pk_u64map func_idx;   /* name id → index in funcs + 1 */
    pk_vec funcs;         /* rep_func */
    uint64_t total;       /* Σ self over every function */
    /* context tree */
    pk_vec nodes;         /* rep_node */
    pk_u64map child;      /* key of (parent, name, line, disc) → node index + 1 */
    uint32_t max_depth;
    bool nested_inline;   /* some callsite carries ShouldBeInlined */
    pk_demangler dm;      /* the page shows demangled C++ names */
} rep;

/* The index of a name in the page's name table (added on first use); -1
 * only on OOM (then r's build fails later on ferror). */
int64_t rep_name(rep *r, pk_name_id id);
/* Formats a location as the profile text does ("17", "15.2"). */
void rep_loc_text(char *buf, size_t cap, uint32_t line, uint32_t disc);

/* report_model.c: walk the profile into funcs and nodes. */
int rep_model_build(rep *r, pk_err *err);
void rep_model_free(rep *r);
/* JSON sections (keys of the page's data object). */
void rep_json_summary(rep *r);
void rep_json_functions(rep *r);
void rep_json_tree(rep *r);
int rep_json_decisions(rep *r, pk_err *err);
int rep_json_overlap(rep *r, pk_err *err);
/* report_src.c: "sources". */
int rep_json_sources(rep *r, pk_err *err);

/* Functions by self samples, heaviest first (caller frees). */
rep_func **rep_sorted_funcs(rep *r, size_t *n);

#endif
