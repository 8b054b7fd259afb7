/* cs_prep.c — see cs_prep.h. */
#include "profgen/cs_prep.h"
#include "common/md5.h"

#include <pthread.h>
#include <stdlib.h>

struct pk_cs_prep {
    pthread_t th;
    bool threaded, index_dwarf;
    pk_binary *bin;
    pk_symbolizer *sym;
    pk_probe_info *probes;
    pk_u64map keep;
    /* the probes are ready (the caller may use them) */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool probes_done;
    bool table_final;        /* the caller has added what it had to: index now */
    int probes_rc, dwarf_rc;
    pk_err probes_err, dwarf_err;
};

/* Every function of the binary whose GUID (MD5 of its name) is an inline
 * tree node's: the names contexts can hold. Reads the probe table, so it
 * runs before the caller gets it back. */
static int named_functions(struct pk_cs_prep *p, pk_vec *ranges)
{
    const pk_probe_table *t = &p->probes->table;
    pk_u64map guids = {0};
    if (pk_u64map_init(&guids, t->n_nodes * 2 + 16))
        return pk_err_set(&p->dwarf_err, "out of memory");
    for (size_t i = 0; i < t->n_nodes; i++) {
        uint64_t *v = pk_u64map_slot(&guids, t->nodes[i].guid);
        if (!v) {
            pk_u64map_free(&guids);
            return pk_err_set(&p->dwarf_err, "out of memory");
        }
        *v = 1;
    }
    size_t nf;
    const pk_elf_symbol *f = pk_elf_funcs(pk_binary_elf(p->bin), &nf);
    int rc = 0;
    for (size_t i = 0; i < nf && !rc; i++) {
        if (!f[i].size || !pk_u64map_get(&guids, pk_md5_guid(f[i].name, strlen(f[i].name))))
            continue;
        pk_addr_range *r = pk_vec_push(ranges);
        if (!r)
            rc = pk_err_set(&p->dwarf_err, "out of memory");
        else
            *r = (pk_addr_range){f[i].addr, f[i].addr + f[i].size};
    }
    pk_u64map_free(&guids);
    return rc;
}

static void *prep_main(void *arg)
{
    struct pk_cs_prep *p = arg;
    pk_vec ranges;
    pk_vec_init(&ranges, sizeof(pk_addr_range));
    int rc = pk_probe_info_load(p->probes, pk_binary_elf(p->bin), &p->keep, &p->probes_err);
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
    if (!p || pk_u64map_init(&p->keep, keep->len * 2 + 16)) {
        free(p);
        return pk_err_set(err, "out of memory");
    }
    for (size_t i = 0; i < pk_u64map_end(keep); i++) {
        if (!pk_u64map_used(keep, i))
            continue;
        uint64_t *v = pk_u64map_slot(&p->keep, pk_u64map_key(keep, i));
        if (!v) {
            pk_u64map_free(&p->keep);
            free(p);
            return pk_err_set(err, "out of memory");
        }
        *v = 1;
    }
    p->bin = bin;
    p->probes = probes;
    /* the symbolizer is opened here: the binary's lazy state is not to be
     * touched from two threads; without DWARF there is no index to build */
    pk_err ignored;
    p->index_dwarf = index_dwarf && pk_binary_symbolizer(bin, &p->sym, &ignored) == 0;
    if (pthread_mutex_init(&p->mu, NULL) == 0) {
        if (pthread_cond_init(&p->cv, NULL) == 0) {
            if (pthread_create(&p->th, NULL, prep_main, p) == 0) {
                p->threaded = true;
                *out = p;
                return 0;
            }
            pthread_cond_destroy(&p->cv);
        }
        pthread_mutex_destroy(&p->mu);
    }
    /* no thread: the probes now, the DWARF when the sizes ask for it */
    int rc = pk_probe_info_load(probes, pk_binary_elf(bin), &p->keep, err);
    pk_u64map_free(&p->keep);
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
    pk_u64map_free(&p->keep);
    free(p);
    return rc;
}
