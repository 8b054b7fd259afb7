/* ctx_trie.h — the calling-context trie over a context-sensitive profile
 * set: a node is a function called at a location of its parent's function,
 * root children are the outermost frames, and a node holds the profile of
 * its context if there is one. Shared by the pre-inliner and the nested
 * conversion. Nodes are never unlinked: a node marked dead is skipped by
 * iteration and revived in place when the same key is asked for again. */
#ifndef PK_CTX_TRIE_H
#define PK_CTX_TRIE_H

#include "profile/profile.h"

#define PK_TRIE_NONE UINT32_MAX
enum { PK_TRIE_DEAD = 1 };   /* further state bits are the user's */

typedef struct pk_trie_node {
    pk_name_id name;
    uint32_t line, disc;      /* call-site location in the parent (0.0 for root children) */
    uint32_t parent, first_child, next_sibling;
    uint32_t state;
    pk_fprof *prof;
} pk_trie_node;

typedef struct pk_ctx_trie {
    pk_vec nodes;             /* pk_trie_node; 0 is the root */
    pk_u64map child;          /* hash(parent, name, loc) → node + 1 */
    pk_ctx_frame *frames;     /* scratch for pk_ctx_trie_frames */
    size_t frames_cap;
} pk_ctx_trie;

#define PK_TRIE_NODE(t, i) (&PK_VEC_AT(&(t)->nodes, pk_trie_node, i))

int pk_ctx_trie_init(pk_ctx_trie *t, pk_err *err);
void pk_ctx_trie_free(pk_ctx_trie *t);
/* Finds the child, creating it (or reviving a dead one) when `create`.
 * PK_TRIE_NONE when absent (or on OOM with create, err set). */
uint32_t pk_ctx_trie_child(pk_ctx_trie *t, uint32_t parent, pk_name_id name, uint32_t line,
                           uint32_t disc, bool create, pk_err *err);
/* Inserts every live top-level profile of ps under its context; `added`
 * (may be NULL) is called for each node given a profile. */
int pk_ctx_trie_build(pk_ctx_trie *t, pk_profset *ps,
                      int (*added)(void *ctx, uint32_t node), void *ctx, pk_err *err);
/* The context of a node, outermost first, in t's scratch (valid until the
 * next call); returns the number of frames (0 on OOM). */
size_t pk_ctx_trie_frames(pk_ctx_trie *t, uint32_t node, const pk_ctx_frame **frames);

#endif
