/* test_ctx_sizes.c — the pre-inliner's context sizes on
 * tests/programs/cs_sizes.c built with clang-19 -fpseudo-probe-for-
 * profiling: a body inlined and optimized away (its probe left, no
 * instruction) is known to cost 0 bytes once the probe inline trees are
 * added (llvm-profgen's trackInlineesOptimizedAway) instead of taking the
 * size of its outlined copy; a top-level probe record without a symbol (an
 * inlinee whose inline stack the compiler lost) sizes nothing. */
#include "test.h"
#include "binary/binary.h"
#include "common/md5.h"
#include "profgen/preinline.h"

#include <stdlib.h>
#include <unistd.h>

static const char *desc_name(const pk_probe_info *pi, const char *prefix)
{
    for (size_t i = 0; i < pi->descs.n; i++)
        if (!strncmp(pi->descs.descs[i].name, prefix, strlen(prefix)))
            return pi->descs.descs[i].name;
    return NULL;
}

static pk_name_id name_of(pk_profset *ps, const pk_probe_info *pi, const char *prefix, uint32_t *len)
{
    const char *n = desc_name(pi, prefix);
    size_t l = 0;
    for (size_t i = 0; n && i < pi->descs.n; i++)
        if (pi->descs.descs[i].name == n)
            l = pi->descs.descs[i].name_len;
    pk_name_id id = 0;
    pk_err e;
    if (!n || pk_profset_intern(ps, n, l, &id, &e))
        CHECK(!"fixture name");
    if (len)
        *len = (uint32_t)l;
    return id;
}

TEST(optimized_away_inlinee_costs_nothing_and_orphan_records_size_nothing)
{
    if (access("/usr/bin/clang-19", X_OK) != 0) {
        fprintf(stderr, "clang-19 missing: skipped\n");
        return;
    }
    const char *path = pk_test_build("cs_sizes", "clang-19", "-O2 -g -fpseudo-probe-for-profiling", "cs_sizes.c");
    pk_binary *bin = NULL;
    pk_err e;
    if (!path || pk_binary_open(&bin, path, NULL, &e)) {
        CHECK(!"fixture builds and opens");
        return;
    }
    pk_probe_info pi;
    CHECK_OK(pk_probe_info_load(&pi, pk_binary_elf(bin), NULL, &e), &e);
    pk_profset ps;
    CHECK_OK(pk_profset_init(&ps, &e), &e);
    pk_name_id work = name_of(&ps, &pi, "work", NULL), ident = name_of(&ps, &pi, "_ZL5identi", NULL);
    pk_name_id twice = name_of(&ps, &pi, "_ZL5twicei", NULL);
    /* the call-site probes of ident and twice in work, from the inline tree */
    uint32_t ident_site = 0, twice_site = 0;
    for (size_t i = 0; i < pi.table.n_nodes; i++) {
        const pk_probe_node *n = &pi.table.nodes[i];
        if (n->parent == PK_PROBE_NO_NODE)
            continue;
        if (n->guid == pk_profset_name_guid(&ps, ident))
            ident_site = n->callsite_probe;
        if (n->guid == pk_profset_name_guid(&ps, twice))
            twice_site = n->callsite_probe;
    }
    CHECK(ident_site && twice_site);
    const pk_ctx_frame in_work[2] = {{work, ident_site, 0}, {ident, 0, 0}};
    const pk_ctx_frame twice_in_work[2] = {{work, twice_site, 0}, {twice, 0, 0}};
    const pk_ctx_frame twice_alone[1] = {{twice, 0, 0}}, work_alone[1] = {{work, 0, 0}};
    pk_ctx_id id;
    CHECK_OK(pk_profset_intern_ctx(&ps, in_work, 2, &id, &e), &e);
    CHECK_OK(pk_profset_intern_ctx(&ps, twice_in_work, 2, &id, &e), &e);
    pk_ctx_sizes *s = NULL;
    CHECK_OK(pk_ctx_sizes_build(&s, bin, &ps, true, &e), &e);
    uint32_t ident_before = pk_ctx_sizes_lookup(s, in_work, 2);
    uint32_t twice_before = pk_ctx_sizes_lookup(s, twice_alone, 1);
    uint32_t work_before = pk_ctx_sizes_lookup(s, work_alone, 1);
    /* without the probe trees: the outlined copy's bytes */
    CHECK(ident_before > 0);
    CHECK(twice_before > 0 && work_before > 0);

    /* an orphan record: twice's GUID at top level, no symbol of its own */
    pk_probe_info orphan = {0};
    pk_probe_node node = {pk_profset_name_guid(&ps, twice), PK_PROBE_NO_NODE, 0, 0};
    pk_probe probe = {.addr = pk_elf_func_by_name(pk_binary_elf(bin), "work")->addr, .index = 1, .node = 0};
    orphan.table.nodes = &node, orphan.table.n_nodes = 1;
    orphan.table.probes = &probe, orphan.table.n = 1;
    CHECK(pk_u64map_init(&orphan.by_guid, 4) == 0);
    *pk_u64map_slot(&orphan.by_guid, pk_profset_name_guid(&ps, work)) = probe.addr;
    CHECK_OK(pk_ctx_sizes_add_probed(s, &orphan, &e), &e);
    CHECK_EQ_U64(pk_ctx_sizes_lookup(s, twice_alone, 1), twice_before);
    pk_u64map_free(&orphan.by_guid);

    CHECK_OK(pk_ctx_sizes_add_probed(s, &pi, &e), &e);
    CHECK_EQ_U64(pk_ctx_sizes_lookup(s, in_work, 2), 0);
    /* bodies with code keep their sizes */
    CHECK_EQ_U64(pk_ctx_sizes_lookup(s, work_alone, 1), work_before);
    CHECK(pk_ctx_sizes_lookup(s, twice_in_work, 2) > 0);
    pk_ctx_sizes_free(s);
    pk_profset_free(&ps);
    pk_probe_info_free(&pi);
    pk_binary_close(bin);
}

int main(void) { return pk_test_main(); }
