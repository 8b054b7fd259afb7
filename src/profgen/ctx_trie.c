/* ctx_trie.c — the calling-context trie (see ctx_trie.h). */
#include "profgen/ctx_trie.h"

#include <stdlib.h>

static uint64_t child_hash(uint32_t parent, pk_name_id name, uint32_t line, uint32_t disc)
{
    return pk_hash64(((uint64_t)parent << 32 | name) ^ pk_hash64(pk_loc(line, disc) + 0x632be59bd9b4e019ULL));
}

int pk_ctx_trie_init(pk_ctx_trie *t, pk_err *err)
{
    memset(t, 0, sizeof *t);
    pk_vec_init(&t->nodes, sizeof(pk_trie_node));
    pk_trie_node *root = pk_vec_push(&t->nodes);
    if (!root || pk_u64map_init(&t->child, 1024)) {
        pk_ctx_trie_free(t);
        return pk_err_set(err, "out of memory");
    }
    root->parent = root->first_child = root->next_sibling = PK_TRIE_NONE;
    return 0;
}

void pk_ctx_trie_free(pk_ctx_trie *t)
{
    pk_vec_free(&t->nodes);
    pk_u64map_free(&t->child);
    free(t->frames);
    t->frames = NULL;
    t->frames_cap = 0;
}

uint32_t pk_ctx_trie_child(pk_ctx_trie *t, uint32_t parent, pk_name_id name, uint32_t line,
                           uint32_t disc, bool create, pk_err *err)
{
    for (uint64_t h = child_hash(parent, name, line, disc);; h++) {
        uint64_t *v = create ? pk_u64map_slot(&t->child, h) : pk_u64map_get(&t->child, h);
        if (!v) {
            if (create)
                pk_err_set(err, "out of memory");
            return PK_TRIE_NONE;
        }
        if (*v) {
            pk_trie_node *n = PK_TRIE_NODE(t, *v - 1);
            if (n->parent != parent || n->name != name || n->line != line || n->disc != disc)
                continue;
            if (n->state & PK_TRIE_DEAD) {
                if (!create)
                    return PK_TRIE_NONE;
                n->state &= ~(uint32_t)PK_TRIE_DEAD; /* still linked: revive in place */
            }
            return (uint32_t)(*v - 1);
        }
        if (!create)
            return PK_TRIE_NONE;
        pk_trie_node *n = pk_vec_push(&t->nodes);
        if (!n) {
            pk_err_set(err, "out of memory");
            return PK_TRIE_NONE;
        }
        uint32_t id = (uint32_t)(t->nodes.len - 1);
        n->name = name, n->line = line, n->disc = disc, n->parent = parent;
        n->first_child = PK_TRIE_NONE;
        pk_trie_node *p = PK_TRIE_NODE(t, parent);
        n->next_sibling = p->first_child;
        p->first_child = id;
        *v = id + 1u;
        return id;
    }
}

int pk_ctx_trie_build(pk_ctx_trie *t, pk_profset *ps,
                      int (*added)(void *ctx, uint32_t node), void *ctx, pk_err *err)
{
    for (size_t i = 0; i < ps->top.len; i++) {
        pk_fprof *f = PK_VEC_AT(&ps->top, pk_fprof *, i);
        if (f->removed)
            continue;
        size_t n;
        const pk_ctx_frame *fr = pk_profset_ctx(ps, f->ctx, &n);
        uint32_t node = 0, line = 0, disc = 0;
        for (size_t k = 0; k < n; k++) {
            node = pk_ctx_trie_child(t, node, fr[k].name, line, disc, true, err);
            if (node == PK_TRIE_NONE)
                return -1;
            line = fr[k].line, disc = fr[k].disc;
        }
        PK_TRIE_NODE(t, node)->prof = f;
        if (added && added(ctx, node))
            return -1;
    }
    return 0;
}

size_t pk_ctx_trie_frames(pk_ctx_trie *t, uint32_t node, const pk_ctx_frame **frames)
{
    size_t n = 0;
    for (uint32_t i = node; i != 0; i = PK_TRIE_NODE(t, i)->parent)
        n++;
    if (n > t->frames_cap) {
        pk_ctx_frame *f = realloc(t->frames, n * 2 * sizeof *f);
        if (!f)
            return 0;
        t->frames = f;
        t->frames_cap = n * 2;
    }
    uint32_t loc_line = 0, loc_disc = 0;
    size_t k = n;
    for (uint32_t i = node; i != 0; i = PK_TRIE_NODE(t, i)->parent) {
        pk_trie_node *x = PK_TRIE_NODE(t, i);
        t->frames[--k] = (pk_ctx_frame){x->name, loc_line, loc_disc};
        loc_line = x->line, loc_disc = x->disc;
    }
    *frames = t->frames;
    return n;
}
