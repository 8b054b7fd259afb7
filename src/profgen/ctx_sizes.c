/* ctx_sizes.c — context-sensitive code sizes for the pre-inliner: a
 * callee-first trie of inline contexts holding the bytes of instructions
 * whose innermost frame is that context's leaf (see preinline.h). */
#include "profgen/preinline.h"
#include "common/md5.h"

#include <stdlib.h>

#define NONE UINT32_MAX

struct size_node {
    uint64_t guid;        /* MD5 of the function name */
    uint64_t loc;         /* call-site location in the caller (0 for the leaf level) */
    uint32_t parent, first_child;
    uint32_t size;
    bool has_size;
};

struct pk_ctx_sizes {
    const pk_profset *ps;
    pk_vec nodes;         /* struct size_node; 0 is the root */
    pk_u64map child;      /* hash(parent, guid, loc) → node + 1, probing on collisions */
};

static uint64_t child_hash(uint32_t parent, uint64_t guid, uint64_t loc)
{
    return pk_hash64(pk_hash64(guid ^ loc * 0x9e3779b97f4a7c15ULL) + parent);
}

static uint32_t find_child(const pk_ctx_sizes *s, uint32_t parent, uint64_t guid, uint64_t loc)
{
    for (uint64_t h = child_hash(parent, guid, loc);; h++) {
        uint64_t *v = pk_u64map_get(&s->child, h);
        if (!v)
            return NONE;
        const struct size_node *n = &PK_VEC_AT(&s->nodes, struct size_node, *v - 1);
        if (n->parent == parent && n->guid == guid && n->loc == loc)
            return (uint32_t)(*v - 1);
    }
}

static uint32_t get_child(pk_ctx_sizes *s, uint32_t parent, uint64_t guid, uint64_t loc, pk_err *err)
{
    uint64_t h = child_hash(parent, guid, loc);
    for (;; h++) {
        uint64_t *v = pk_u64map_slot(&s->child, h);
        if (!v) {
            pk_err_set(err, "out of memory");
            return NONE;
        }
        if (*v) {
            const struct size_node *n = &PK_VEC_AT(&s->nodes, struct size_node, *v - 1);
            if (n->parent == parent && n->guid == guid && n->loc == loc)
                return (uint32_t)(*v - 1);
            continue;
        }
        struct size_node *n = pk_vec_push(&s->nodes);
        if (!n) {
            pk_err_set(err, "out of memory");
            return NONE;
        }
        uint32_t id = (uint32_t)(s->nodes.len - 1);
        n->guid = guid;
        n->loc = loc;
        n->parent = parent;
        n->first_child = NONE;
        *v = id + 1u;
        struct size_node *p = &PK_VEC_AT(&s->nodes, struct size_node, parent);
        if (p->first_child == NONE)
            p->first_child = id;
        return id;
    }
}

int pk_ctx_sizes_add(pk_ctx_sizes *s, const pk_ctx_frame *frames, size_t n, uint32_t bytes, pk_err *err)
{
    uint32_t cur = 0;
    for (size_t i = n; i-- > 0;) {
        uint64_t loc = i == n - 1 ? 0 : pk_loc(frames[i].line, frames[i].disc);
        cur = get_child(s, cur, pk_profset_name_guid(s->ps, frames[i].name), loc, err);
        if (cur == NONE)
            return -1;
    }
    struct size_node *node = &PK_VEC_AT(&s->nodes, struct size_node, cur);
    node->size += bytes;
    node->has_size = true;
    return 0;
}

uint32_t pk_ctx_sizes_lookup(const pk_ctx_sizes *s, const pk_ctx_frame *frames, size_t n)
{
    uint32_t cur = 0, prev = NONE, size = 0;
    bool have = false;
    for (size_t i = n; i-- > 0 && cur != NONE;) {
        prev = cur;
        uint64_t loc = i == n - 1 ? 0 : pk_loc(frames[i].line, frames[i].disc);
        cur = find_child(s, cur, pk_profset_name_guid(s->ps, frames[i].name), loc);
        if (cur != NONE) {
            const struct size_node *node = &PK_VEC_AT(&s->nodes, struct size_node, cur);
            if (node->has_size) {
                size = node->size;
                have = true;
            }
        }
    }
    /* Never seen in this exact context: the same function elsewhere. */
    if (!have) {
        if (cur == NONE)
            cur = prev;
        while (!have && cur != NONE) {
            const struct size_node *node = &PK_VEC_AT(&s->nodes, struct size_node, cur);
            cur = node->first_child;
            if (cur != NONE && PK_VEC_AT(&s->nodes, struct size_node, cur).has_size) {
                size = PK_VEC_AT(&s->nodes, struct size_node, cur).size;
                have = true;
            }
        }
    }
    return size;
}

int pk_ctx_sizes_add_probed(pk_ctx_sizes *s, const pk_probe_info *pi, pk_err *err)
{
    const pk_probe_table *t = &pi->table;
    uint8_t *probed = pk_zalloc(t->n_nodes + 1, 1);
    if (!probed)
        return pk_err_set(err, "out of memory");
    for (size_t i = 0; i < t->n; i++)
        probed[t->probes[i].node] = 1;
    int rc = 0;
    for (size_t n = 0; n < t->n_nodes && !rc; n++) {
        if (!probed[n])
            continue;
        uint32_t root = (uint32_t)n;
        while (t->nodes[root].parent != PK_PROBE_NO_NODE)
            root = t->nodes[root].parent;
        pk_name_id id;
        /* functions the profile names, by their own symbol's record: a
         * record without a symbol holds probes of an inlinee whose inline
         * stack was lost (see probe_gen.c), not the body of a function */
        if (pk_profset_lookup_guid(s->ps, t->nodes[root].guid, &id) ||
            !pk_u64map_get(&pi->by_guid, t->nodes[root].guid))
            continue;
        /* the inline path, innermost body first, each inliner keyed by
         * the call-site probe of the body below it */
        uint32_t cur = 0;
        uint64_t loc = 0;
        for (uint32_t k = (uint32_t)n; k != PK_PROBE_NO_NODE && cur != NONE; k = t->nodes[k].parent) {
            cur = get_child(s, cur, t->nodes[k].guid, loc, err);
            loc = pk_loc(t->nodes[k].callsite_probe, 0);
        }
        if (cur == NONE)
            rc = -1;
        else
            PK_VEC_AT(&s->nodes, struct size_node, cur).has_size = true;
    }
    free(probed);
    return rc;
}

void pk_ctx_sizes_free(pk_ctx_sizes *s)
{
    if (!s)
        return;
    pk_vec_free(&s->nodes);
    pk_u64map_free(&s->child);
    free(s);
}

/* The location of the call to the inner frame, inside frame f. */
static uint64_t call_loc(const pk_frame *f, bool probe_locations)
{
    if (probe_locations) {
        /* probe discriminators: bits 0-2 all set, probe index in bits 3-18 */
        uint32_t d = f->discriminator;
        return pk_loc((d & 7) == 7 ? (d >> 3) & 0xffff : 0, 0);
    }
    uint32_t off = f->start_line && f->line >= f->start_line ? f->line - f->start_line : f->line;
    return pk_loc(off & 0xffff, pk_discr_base(f->discriminator));
}

struct build {
    pk_ctx_sizes *s;
    pk_u64map guid_of;    /* symbolizer name pointer → GUID (its strings are stable) */
    bool probe_locations;
};

/* One span of addresses sharing an inline stack: its bytes go to the stack's
 * leaf context. DWARF ranges begin and end on instruction boundaries, so a
 * span's length is the sum of the lengths of its instructions, which is what
 * llvm-profgen adds up one instruction at a time. */
static int add_span(void *arg, uint64_t begin, uint64_t end, const pk_frames *frames, pk_err *err)
{
    struct build *b = arg;
    if (!frames->count)
        return 0;
    uint32_t cur = 0;
    for (size_t j = 0; j < frames->count; j++) { /* innermost first */
        const char *name = frames->frames[j].func ? frames->frames[j].func : "??";
        uint64_t *g = pk_u64map_slot(&b->guid_of, (uint64_t)(uintptr_t)name);
        if (!g)
            return pk_err_set(err, "out of memory");
        if (!*g) /* (a GUID of 0 is just recomputed next time) */
            *g = pk_md5_guid(name, strlen(name));
        /* the leaf is keyed by location 0, a caller by the call site inside it */
        uint64_t loc = j ? call_loc(&frames->frames[j], b->probe_locations) : 0;
        cur = get_child(b->s, cur, *g, loc, err);
        if (cur == NONE)
            return -1;
    }
    struct size_node *node = &PK_VEC_AT(&b->s->nodes, struct size_node, cur);
    node->size += (uint32_t)(end - begin);
    node->has_size = true;
    return 0;
}

int pk_ctx_sizes_build(pk_ctx_sizes **out, pk_binary *bin, const pk_profset *ps,
                       bool probe_locations, pk_err *err)
{
    pk_ctx_sizes *s = calloc(1, sizeof *s);
    struct build b = {.s = s, .probe_locations = probe_locations};
    pk_u64map seen = {0};
    pk_vec funcs; /* pk_addr_range: the outlined functions to size */
    pk_vec_init(&funcs, sizeof(pk_addr_range));
    if (!s)
        return pk_err_set(err, "out of memory");
    s->ps = ps;
    pk_vec_init(&s->nodes, sizeof(struct size_node));
    struct size_node *root = pk_vec_push(&s->nodes);
    if (!root || pk_u64map_init(&s->child, 1024) || pk_u64map_init(&seen, 256) ||
        pk_u64map_init(&b.guid_of, 1024)) {
        pk_err_set(err, "out of memory");
        goto fail;
    }
    root->parent = root->first_child = NONE;
    pk_symbolizer *sym;
    if (pk_binary_symbolizer(bin, &sym, err))
        goto fail;
    pk_elf *elf = pk_binary_elf(bin);
    /* Every function named in a context may have been an outlined frame:
     * those are the only code the symbolizer is asked about. */
    for (size_t c = 0; c < pk_profset_num_ctxs(ps); c++) {
        size_t nf;
        const pk_ctx_frame *fr = pk_profset_ctx(ps, (pk_ctx_id)c, &nf);
        for (size_t i = 0; i < nf; i++) {
            uint64_t *done = pk_u64map_slot(&seen, fr[i].name);
            if (!done) {
                pk_err_set(err, "out of memory");
                goto fail;
            }
            if (*done)
                continue;
            *done = 1;
            const pk_elf_symbol *f = pk_elf_func_by_name(elf, pk_profset_name(ps, fr[i].name));
            if (f && f->size) {
                pk_addr_range *r = pk_vec_push(&funcs);
                if (!r) {
                    pk_err_set(err, "out of memory");
                    goto fail;
                }
                *r = (pk_addr_range){f->addr, f->addr + f->size};
            }
        }
    }
    if (pk_symbolizer_want(sym, funcs.data, funcs.len, err))
        goto fail;
    for (size_t i = 0; i < funcs.len; i++) {
        const pk_addr_range *r = &PK_VEC_AT(&funcs, pk_addr_range, i);
        if (pk_symbolize_spans(sym, r->begin, r->end, add_span, &b, err))
            goto fail;
    }
    pk_vec_free(&funcs);
    pk_u64map_free(&seen);
    pk_u64map_free(&b.guid_of);
    *out = s;
    return 0;
fail:
    pk_vec_free(&funcs);
    pk_u64map_free(&seen);
    pk_u64map_free(&b.guid_of);
    pk_ctx_sizes_free(s);
    return -1;
}
