/* dwarf_units.c — which compilation unit has which function (see
 * pk_dwarf_units_build in binary.h). */
#include "binary/binary.h"
#include "binary/dwarf_internal.h"

#include <stdlib.h>
#include <string.h>

struct pk_dwarf_units {
    size_t nunits;
    bool cross;
    pk_u64map first;             /* name hash → 1 + index in ent of its first unit */
    pk_u64map pairs;             /* hash of (name hash, unit) → 1 */
    pk_vec ent;                  /* struct unit_ent: a name's units, a list each */
};

struct unit_ent {
    uint32_t unit, next;         /* next: 1 + index, 0 at the end */
};

static uint64_t name_hash(const char *s) { return pk_hash_bytes(s, strlen(s)); }

static uint64_t pair_key(uint64_t name, size_t unit) { return pk_hash64(name + 0x9e3779b97f4a7c15ull * (unit + 1)); }

static int add(pk_dwarf_units *u, const char *name, size_t unit, pk_err *err)
{
    uint64_t h = name_hash(name);
    uint64_t *seen = pk_u64map_slot(&u->pairs, pair_key(h, unit));
    if (!seen)
        return pk_err_set(err, "out of memory");
    if (*seen)
        return 0;
    *seen = 1;
    uint64_t *head = pk_u64map_slot(&u->first, h);
    struct unit_ent *e = pk_vec_push(&u->ent);
    if (!head || !e)
        return pk_err_set(err, "out of memory");
    e->unit = (uint32_t)unit;
    e->next = (uint32_t)*head;
    *head = u->ent.len;
    return 0;
}

int pk_dwarf_units_build(pk_symbolizer *s, pk_dwarf_units **out, pk_err *err)
{
    *out = NULL;
    pk_dwarf_units *u = calloc(1, sizeof *u);
    if (!u)
        return pk_err_set(err, "out of memory");
    pk_vec_init(&u->ent, sizeof(struct unit_ent));
    if (pk_u64map_init(&u->first, 1024) || pk_u64map_init(&u->pairs, 1024)) {
        pk_dwarf_units_free(u);
        return pk_err_set(err, "out of memory");
    }
    u->nunits = s->ncus;
    for (size_t i = 0; i < s->ncus; i++) {
        pk_symbolizer *ds;
        dw_cu *cu;
        if (dw_cu_split(s, &s->cus[i], &ds, &cu, err) < 0 || dw_cu_index(ds, cu, err) < 0)
            goto fail;
        u->cross |= cu->cross_origins > 0;
        for (size_t k = 0; k < cu->ndefs; k++) {
            dw_sub d = {.die = cu->defs[k]};
            if (dw_sub_resolve(ds, cu, &d, err) < 0)
                goto fail;
            if (d.name && add(u, d.name, i, err))
                goto fail;
        }
    }
    *out = u;
    return 0;
fail:
    pk_dwarf_units_free(u);
    return -1;
}

void pk_dwarf_units_free(pk_dwarf_units *u)
{
    if (!u)
        return;
    pk_u64map_free(&u->first);
    pk_u64map_free(&u->pairs);
    pk_vec_free(&u->ent);
    free(u);
}

bool pk_dwarf_units_cross(const pk_dwarf_units *u) { return u->cross; }

size_t pk_dwarf_units_count(const pk_dwarf_units *u) { return u->nunits; }

bool pk_dwarf_units_can_inline(const pk_dwarf_units *u, const char *root, const char *callee)
{
    if (u->cross)
        return true;
    uint64_t hc = name_hash(callee);
    const uint64_t *head = pk_u64map_get(&u->first, name_hash(root));
    if (!head || !pk_u64map_get(&u->first, hc))
        return true; /* not described: nothing to say against it */
    for (uint32_t e = (uint32_t)*head; e; e = PK_VEC_AT(&u->ent, struct unit_ent, e - 1).next)
        if (pk_u64map_get(&u->pairs, pair_key(hc, PK_VEC_AT(&u->ent, struct unit_ent, e - 1).unit)))
            return true;
    return false;
}
