/* cs_prep.c — see cs_prep.h. */
#include "profgen/cs_prep.h"

#include <pthread.h>
#include <stdlib.h>

struct pk_cs_prep {
    pthread_t th;
    bool index_dwarf;
    pk_binary *bin;
    pk_symbolizer *sym;
    pk_probe_info *probes;
    const pk_u64map *keep;   /* the caller's, read until the probes are decoded */
    /* the probes are ready (the caller may use them) */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool probes_done;
    bool table_final;        /* the caller has added what it had to: index now */
    int probes_rc, dwarf_rc;
    pk_err probes_err, dwarf_err;
};

/* The code of every function an inline tree node names (found through the
 * loader's GUID -> address map): the names contexts can hold. A hint only:
 * the index widens when asked about more. */
static int named_functions(struct pk_cs_prep *p, pk_vec *ranges)
{
    const pk_probe_table *t = &p->probes->table;
    const pk_elf *elf = pk_binary_elf(p->bin);
    pk_u64map seen = {0};
    if (pk_u64map_init(&seen, t->n_nodes * 2 + 16))
        return pk_err_set(&p->dwarf_err, "out of memory");
    int rc = 0;
    for (size_t i = 0; i < t->n_nodes && !rc; i++) {
        uint64_t *v = pk_u64map_slot(&seen, t->nodes[i].guid);
        if (!v) {
            rc = pk_err_set(&p->dwarf_err, "out of memory");
            break;
        }
        if (*v)
            continue;
        *v = 1;
        const uint64_t *addr = pk_u64map_get(&p->probes->by_guid, t->nodes[i].guid);
        const pk_elf_symbol *f = addr ? pk_elf_func_at(elf, *addr) : NULL;
        if (!f || !f->size)
            continue;
        pk_addr_range *r = pk_vec_push(ranges);
        if (!r)
            rc = pk_err_set(&p->dwarf_err, "out of memory");
        else
            *r = (pk_addr_range){f->addr, f->addr + f->size};
    }
    pk_u64map_free(&seen);
    return rc;
}

static void *prep_main(void *arg)
{
    struct pk_cs_prep *p = arg;
    pk_vec ranges;
    pk_vec_init(&ranges, sizeof(pk_addr_range));
    int rc = pk_probe_info_load(p->probes, pk_binary_elf(p->bin), p->keep, &p->probes_err);
    pthread_mutex_lock(&p->mu);
    p->probes_rc = rc;
    p->probes_done = true;
    pthread_cond_broadcast(&p->cv);
    /* the caller may add records (tail-call frames): their inline trees
     * name functions too */
    while (!rc && p->index_dwarf && !p->table_final)
        pthread_cond_wait(&p->cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
    if (!rc && p->index_dwarf)
        p->dwarf_rc = named_functions(p, &ranges);
    if (!rc && p->index_dwarf && !p->dwarf_rc)
        p->dwarf_rc = pk_symbolizer_index(p->sym, ranges.data, ranges.len, &p->dwarf_err);
    pk_vec_free(&ranges);
    return NULL;
}

int pk_cs_prep_start(pk_cs_prep **out, pk_binary *bin, pk_probe_info *probes, const pk_u64map *keep,
                     bool index_dwarf, pk_err *err)
{
    *out = NULL;
    struct pk_cs_prep *p = calloc(1, sizeof *p);
    if (!p)
        return pk_err_set(err, "out of memory");
    p->keep = keep;
    p->bin = bin;
    p->probes = probes;
    /* the symbolizer is opened here: the binary's lazy state is not to be
     * touched from two threads; without DWARF there is no index to build */
    pk_err ignored;
    p->index_dwarf = index_dwarf && pk_binary_symbolizer(bin, &p->sym, &ignored) == 0;
    if (pthread_mutex_init(&p->mu, NULL) == 0) {
        if (pthread_cond_init(&p->cv, NULL) == 0) {
            if (pthread_create(&p->th, NULL, prep_main, p) == 0) {
                *out = p;
                return 0;
            }
            pthread_cond_destroy(&p->cv);
        }
        pthread_mutex_destroy(&p->mu);
    }
    /* no thread: the probes now, the DWARF when the sizes ask for it */
    int rc = pk_probe_info_load(probes, pk_binary_elf(bin), keep, err);
    free(p);
    return rc;
}

int pk_cs_prep_probes(pk_cs_prep *p, pk_err *err)
{
    if (!p)
        return 0;
    pthread_mutex_lock(&p->mu);
    while (!p->probes_done)
        pthread_cond_wait(&p->cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
    if (p->probes_rc && err)
        *err = p->probes_err;
    return p->probes_rc;
}

void pk_cs_prep_index(pk_cs_prep *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->table_final = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

int pk_cs_prep_finish(pk_cs_prep *p, pk_err *err)
{
    if (!p)
        return 0;
    pk_cs_prep_index(p); /* (a caller that failed before never released it) */
    pthread_join(p->th, NULL);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    int rc = p->dwarf_rc;
    if (rc && err)
        *err = p->dwarf_err;
    free(p);
    return rc;
}
