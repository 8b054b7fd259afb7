/* nest.c — flat context-sensitive profile → nested profile (llvm-profgen's
 * --gen-cs-nested-profile, the form current clang consumes): each context
 * profile is placed under its caller's profile at the call site, the call
 * target it replaces is removed from the caller's body (with its count),
 * and a context whose caller has no profile becomes a top-level profile of
 * its function. Context attributes and checksums are kept. */
#include "profgen/preinline.h"
#include "profgen/ctx_trie.h"

struct nest {
    const pk_profset *in;
    pk_profset *out;
    pk_ctx_trie tr;
    pk_err *err;
};

static int out_name(struct nest *n, pk_name_id in_id, pk_name_id *out_id)
{
    return pk_profset_intern(n->out, pk_profset_name(n->in, in_id), pk_profset_name_len(n->in, in_id),
                             out_id, n->err);
}

/* Whether `node` has a child with a profile for callee `name` at loc. */
static bool nested_child(struct nest *n, uint32_t node, pk_name_id name, uint32_t line, uint32_t disc)
{
    uint32_t c = pk_ctx_trie_child(&n->tr, node, name, line, disc, false, n->err);
    return c != PK_TRIE_NONE && PK_TRIE_NODE(&n->tr, c)->prof;
}

/* Copies node's own profile into dst, minus the calls now represented by
 * nested children; returns the count removed. */
static int copy_body(struct nest *n, uint32_t node, pk_fprof *dst, uint64_t *removed)
{
    const pk_fprof *src = PK_TRIE_NODE(&n->tr, node)->prof;
    pk_fprof_view v;
    *removed = 0;
    if (pk_fprof_view_build(n->in, src, &v, n->err))
        return -1;
    int rc = -1;
    for (size_t i = 0; i < v.nbody; i++) {
        const pk_body_entry *b = &v.body[i];
        uint64_t gone = 0;
        for (uint32_t k = 0; k < b->ncalls; k++)
            if (nested_child(n, node, b->calls[k].name, b->line, b->disc))
                gone += b->calls[k].count;
        uint64_t left = b->count > gone ? b->count - gone : 0;
        *removed += b->count - left;
        if (gone && !left)
            continue; /* as llvm-profgen: an emptied record goes, targets and all */
        if (pk_fprof_add_body(dst, b->line, b->disc, left, n->err))
            goto done;
        for (uint32_t k = 0; k < b->ncalls; k++) {
            pk_name_id t;
            if (nested_child(n, node, b->calls[k].name, b->line, b->disc))
                continue;
            if (out_name(n, b->calls[k].name, &t) ||
                pk_fprof_add_call(dst, b->line, b->disc, t, b->calls[k].count, n->err))
                goto done;
        }
    }
    rc = 0;
done:
    pk_fprof_view_free(&v);
    return rc;
}

/* Emits node (whose output profile is dst, or NULL when the node has no
 * profile of its own) and its subtree. */
static int convert(struct nest *n, uint32_t node, pk_fprof *dst, bool top)
{
    pk_trie_node *x = PK_TRIE_NODE(&n->tr, node);
    uint64_t total = 0;
    if (dst && x->prof) {
        const pk_fprof *src = x->prof;
        uint64_t removed;
        if (copy_body(n, node, dst, &removed))
            return -1;
        total = src->total > removed ? src->total - removed : 0;
        if (top)
            dst->head = pk_sat_add(dst->head, src->head);
        if (!dst->checksum)
            dst->checksum = src->checksum;
        dst->attrs |= src->attrs;
    }
    for (uint32_t c = PK_TRIE_NODE(&n->tr, node)->first_child; c != PK_TRIE_NONE;
         c = PK_TRIE_NODE(&n->tr, c)->next_sibling) {
        pk_trie_node *cn = PK_TRIE_NODE(&n->tr, c);
        if (cn->state & PK_TRIE_DEAD)
            continue;
        pk_fprof *cdst = NULL;
        bool ctop = false;
        if (cn->prof) {
            pk_name_id name;
            if (out_name(n, cn->name, &name))
                return -1;
            if (dst) {
                cdst = pk_fprof_callsite(n->out, dst, cn->line, cn->disc, name, n->err);
            } else {
                cdst = pk_profset_get_func(n->out, name, n->err);
                ctop = true;
            }
            if (!cdst)
                return -1;
        }
        uint64_t before = cdst ? cdst->total : 0;
        if (convert(n, c, cdst, ctop))
            return -1;
        if (dst && cdst)
            total = pk_sat_add(total, cdst->total - before);
    }
    if (dst)
        dst->total = pk_sat_add(dst->total, total);
    return 0;
}

int pk_cs_nest(const pk_profset *in, pk_profset *out, pk_err *err)
{
    if (!(in->kind & PK_PROF_CS))
        return pk_err_set(err, "nesting: the profile is not context-sensitive");
    struct nest n = {.in = in, .out = out, .err = err};
    if (pk_ctx_trie_init(&n.tr, err))
        return -1;
    int rc = pk_ctx_trie_build(&n.tr, (pk_profset *)in, NULL, NULL, err);
    if (!rc)
        rc = convert(&n, 0, NULL, true);
    if (!rc)
        out->kind = (out->kind | in->kind) & ~(uint32_t)PK_PROF_CS;
    pk_ctx_trie_free(&n.tr);
    return rc;
}
