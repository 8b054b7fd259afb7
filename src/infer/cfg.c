/* cfg.c — the control-flow graph of one function from its decoded
 * instructions (rules in infer.h). */
#include "infer/infer_int.h"

static bool is_transfer(int cls)
{
    return cls != PK_INSN_OTHER;   /* every branch, call, ret and invalid bytes */
}

uint32_t pk_cfg_block_at(const pk_cfg *cfg, uint64_t addr)
{
    size_t lo = 0, hi = cfg->nblocks;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cfg->blocks[mid].begin <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || addr >= cfg->blocks[lo - 1].end)
        return UINT32_MAX;
    return (uint32_t)(lo - 1);
}

void pk_cfg_free(pk_cfg *cfg)
{
    free(cfg->blocks);
    free(cfg->edges);
    memset(cfg, 0, sizeof *cfg);
}

/* True when addr is inside one of the instructions (not necessarily at
 * its start). */
static bool covered(const pk_insn *insns, size_t n, uint64_t addr)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (insns[mid].addr <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && addr < insns[lo - 1].addr + insns[lo - 1].len;
}

/* The table of the indirect jmp at addr, or NULL: its targets must be
 * instructions of the function, or outside its ranges altogether (a case
 * in a .cold part not given, which leaves the ranges as a tail call
 * would); one inside an instruction means the table was misread. */
static const pk_cfg_jtable *find_table(const pk_cfg_hints *h, uint64_t addr, const pk_insn *insns, size_t n)
{
    if (!h)
        return NULL;
    for (size_t i = 0; i < h->ntables; i++) {
        const pk_cfg_jtable *t = &h->tables[i];
        if (t->ijmp != addr || t->ntargets == 0)
            continue;
        for (uint32_t k = 0; k < t->ntargets; k++)
            if (pk_insn_index(insns, n, t->targets[k]) == SIZE_MAX && covered(insns, n, t->targets[k]))
                return NULL;
        return t;
    }
    return NULL;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

typedef struct edge_buf {
    pk_cfg_edge *e;
    size_t n, cap;
} edge_buf;

static int edge_push(edge_buf *b, uint32_t from, uint32_t to, uint8_t kind)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 64;
        pk_cfg_edge *e = pk_xrealloc_array(b->e, cap, sizeof *e);
        if (!e)
            return -1;
        b->e = e;
        b->cap = cap;
    }
    b->e[b->n++] = (pk_cfg_edge){from, to, kind};
    return 0;
}

/* Blocks from the leaders. */
static int make_blocks(pk_cfg *cfg, const pk_insn *insns, size_t n, const uint8_t *leader)
{
    size_t nb = 0;
    for (size_t i = 0; i < n; i++)
        nb += leader[i];
    if (nb > UINT32_MAX - 1)
        return -1;
    cfg->blocks = calloc(nb, sizeof *cfg->blocks);
    if (!cfg->blocks)
        return -1;
    size_t b = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        if (leader[i]) {
            b = b == SIZE_MAX ? 0 : b + 1;
            cfg->blocks[b].begin = insns[i].addr;
        }
        pk_cfg_block *bl = &cfg->blocks[b];
        bl->last = insns[i].addr;
        bl->end = insns[i].addr + insns[i].len;
        bl->ninsns++;
        bl->term = insns[i].cls;
    }
    cfg->nblocks = nb;
    return 0;
}

/* The out-edges of every block but those of unresolved indirect jumps. */
static int make_edges(pk_cfg *cfg, const pk_insn *insns, size_t n, const pk_cfg_hints *h, edge_buf *eb,
                      uint8_t *unresolved)
{
    uint32_t tmp_cap = 0, *tmp = NULL;
    int rc = 0;
    for (uint32_t b = 0; b < cfg->nblocks && rc == 0; b++) {
        pk_cfg_block *bl = &cfg->blocks[b];
        bool has_next = b + 1 < cfg->nblocks && cfg->blocks[b + 1].begin == bl->end;
        uint32_t next = b + 1;
        size_t li = pk_insn_index(insns, n, bl->last);
        const pk_insn *last = &insns[li];
        bool stop = h && pk_u64_sorted_has(h->stops, h->nstops, last->addr);
        if (stop || last->cls == PK_INSN_INVALID) {
            bl->flags |= PK_CFG_EXIT | PK_CFG_STOP;
            continue;
        }
        switch (last->cls) {
        case PK_INSN_CJMP:
        case PK_INSN_JMP: {
            bool cond = last->cls == PK_INSN_CJMP;
            uint32_t t = pk_insn_index(insns, n, last->target) != SIZE_MAX ? pk_cfg_block_at(cfg, last->target)
                                                                          : UINT32_MAX;
            if (cond) {
                if (has_next)
                    rc |= edge_push(eb, b, next, PK_CFG_FALL);
                else
                    bl->flags |= PK_CFG_EXIT;   /* falls off the end of its range */
            }
            if (t == UINT32_MAX)
                bl->flags |= PK_CFG_EXIT;       /* (conditional) tail call */
            else if (!(cond && has_next && t == next))
                rc |= edge_push(eb, b, t, PK_CFG_JUMP);
            break;
        }
        case PK_INSN_IJMP: {
            const pk_cfg_jtable *jt = find_table(h, last->addr, insns, n);
            if (!jt) {
                bl->flags |= PK_CFG_EXIT;
                unresolved[b] = 1;
                cfg->ijumps_unresolved++;
                break;
            }
            cfg->ijumps_resolved++;
            cfg->ijumps_guessed += jt->guessed;
            if (jt->ntargets > tmp_cap) {
                uint32_t *t2 = pk_xrealloc_array(tmp, jt->ntargets, sizeof *tmp);
                if (!t2) {
                    rc = -1;
                    break;
                }
                tmp = t2;
                tmp_cap = jt->ntargets;
            }
            for (uint32_t k = 0; k < jt->ntargets; k++)
                tmp[k] = pk_cfg_block_at(cfg, jt->targets[k]);
            qsort(tmp, jt->ntargets, sizeof *tmp, cmp_u32);
            for (uint32_t k = 0; k < jt->ntargets && rc == 0; k++) {
                if (tmp[k] == UINT32_MAX)
                    bl->flags |= PK_CFG_EXIT;   /* a case outside the ranges */
                else if (k == 0 || tmp[k] != tmp[k - 1])
                    rc |= edge_push(eb, b, tmp[k], PK_CFG_TABLE);
            }
            break;
        }
        case PK_INSN_CALL:
        case PK_INSN_ICALL:
            if (has_next)
                rc |= edge_push(eb, b, next, PK_CFG_AFTER_CALL);
            else
                bl->flags |= PK_CFG_EXIT;
            break;
        case PK_INSN_RET:
            bl->flags |= PK_CFG_EXIT;
            break;
        default:
            if (has_next)
                rc |= edge_push(eb, b, next, PK_CFG_FALL);
            else
                bl->flags |= PK_CFG_EXIT;
            break;
        }
    }
    free(tmp);
    return rc;
}

/* Sets first_succ / nsucc from edges sorted by from (stable: the order
 * each block's edges were pushed in). */
static int group_edges(pk_cfg *cfg, edge_buf *eb)
{
    pk_cfg_edge *out = malloc((eb->n ? eb->n : 1) * sizeof *out);
    uint32_t *cnt = calloc(cfg->nblocks + 1, sizeof *cnt);
    if (!out || !cnt) {
        free(out);
        free(cnt);
        return -1;
    }
    for (size_t i = 0; i < eb->n; i++)
        cnt[eb->e[i].from + 1]++;
    for (size_t b = 0; b < cfg->nblocks; b++) {
        cnt[b + 1] += cnt[b];
        cfg->blocks[b].first_succ = cnt[b];
        cfg->blocks[b].nsucc = 0;
    }
    for (size_t i = 0; i < eb->n; i++) {
        pk_cfg_block *bl = &cfg->blocks[eb->e[i].from];
        out[bl->first_succ + bl->nsucc++] = eb->e[i];
    }
    free(cnt);
    free(cfg->edges);
    cfg->edges = out;
    cfg->nedges = eb->n;
    return 0;
}

/* Edges from every unresolved indirect jump to the heads of the regions the
 * entry does not reach otherwise. */
static int add_unknown_ijmp_edges(pk_cfg *cfg, const pk_cfg_hints *hints, const uint8_t *unresolved, edge_buf *eb)
{
    size_t nb = cfg->nblocks;
    uint8_t *mark = calloc(nb, 1);
    uint32_t *stack = malloc(nb * sizeof *stack), *heads = malloc(nb * sizeof *heads);
    pk_cfg_preds p = {0};
    int rc = -1;
    if (!mark || !stack || !heads || pk_cfg_preds_build(cfg, &p) != 0)
        goto out;
    pk_cfg_reach(cfg, cfg->entry_block, mark, stack, 0);
    size_t nh = pk_cfg_region_heads(cfg, &p, mark, stack, 0, heads), nregion = nh;
    /* and every block at a code address data holds (a computed goto's
     * labels: reached from the function's own code too, so not heads) */
    memset(mark, 0, nb);
    for (size_t k = 0; k < nh; k++)
        mark[heads[k]] = 1;
    for (size_t k = 0; hints && k < hints->ntaken; k++) {
        uint32_t b = pk_cfg_block_at(cfg, hints->taken[k]);
        if (b != UINT32_MAX && cfg->blocks[b].begin == hints->taken[k] && !mark[b] && b != cfg->entry_block) {
            mark[b] = 1;
            heads[nh++] = b;
        }
    }
    rc = 0;
    for (uint32_t b = 0; b < nb && rc == 0; b++) {
        if (!unresolved[b])
            continue;
        /* a label may be jumped to from its own block (the same handler
         * run twice in a row); a region's head not (it has no other way in) */
        for (size_t k = 0; k < nh && rc == 0; k++)
            if (heads[k] != b || k >= nregion)
                rc |= edge_push(eb, b, heads[k], PK_CFG_UNKNOWN_IJMP);
    }
    if (rc == 0 && nh)
        rc = group_edges(cfg, eb);
out:
    pk_cfg_preds_free(&p);
    free(mark);
    free(stack);
    free(heads);
    return rc;
}

int pk_cfg_build(pk_cfg *cfg, const pk_insn *insns, size_t n, uint64_t entry, const pk_cfg_hints *hints, pk_err *err)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->entry = entry;
    if (n == 0)
        return pk_err_set(err, "cfg: no instructions");
    for (size_t i = 1; i < n; i++)
        if (insns[i].addr < insns[i - 1].addr + insns[i - 1].len)
            return pk_err_set(err, "cfg: instructions not sorted or overlapping at 0x%llx",
                              (unsigned long long)insns[i].addr);
    size_t ei = pk_insn_index(insns, n, entry);
    if (ei == SIZE_MAX)
        return pk_err_set(err, "cfg: entry 0x%llx is not an instruction of the function",
                          (unsigned long long)entry);

    uint8_t *leader = calloc(n, 1), *unresolved = NULL;
    edge_buf eb = {0};
    if (!leader)
        goto oom;
    leader[0] = leader[ei] = 1;
    for (size_t i = 0; i < n; i++) {
        const pk_insn *in = &insns[i];
        if (i + 1 < n && in->addr + in->len != insns[i + 1].addr)
            leader[i + 1] = 1;                       /* a new range */
        bool stop = hints && pk_u64_sorted_has(hints->stops, hints->nstops, in->addr);
        if ((is_transfer(in->cls) || stop) && i + 1 < n)
            leader[i + 1] = 1;
        if (in->cls == PK_INSN_JMP || in->cls == PK_INSN_CJMP) {
            size_t t = pk_insn_index(insns, n, in->target);
            if (t != SIZE_MAX)
                leader[t] = 1;
        }
        if (hints && pk_u64_sorted_has(hints->taken, hints->ntaken, in->addr))
            leader[i] = 1;                           /* a computed-goto label */
        if (in->cls == PK_INSN_IJMP) {
            const pk_cfg_jtable *jt = find_table(hints, in->addr, insns, n);
            for (uint32_t k = 0; jt && k < jt->ntargets; k++) {
                size_t t = pk_insn_index(insns, n, jt->targets[k]);
                if (t != SIZE_MAX)
                    leader[t] = 1;
            }
        }
    }
    if (make_blocks(cfg, insns, n, leader) != 0)
        goto oom;
    cfg->entry_block = pk_cfg_block_at(cfg, entry);
    unresolved = calloc(cfg->nblocks, 1);
    if (!unresolved || make_edges(cfg, insns, n, hints, &eb, unresolved) != 0 || group_edges(cfg, &eb) != 0)
        goto oom;
    if (cfg->ijumps_unresolved && add_unknown_ijmp_edges(cfg, hints, unresolved, &eb) != 0)
        goto oom;
    free(leader);
    free(unresolved);
    free(eb.e);
    return 0;
oom:
    free(leader);
    free(unresolved);
    free(eb.e);
    pk_cfg_free(cfg);
    return pk_err_set(err, "cfg: out of memory");
}
