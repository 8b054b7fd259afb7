/* fuzz_probes.c — the pseudo-probe decoders (src/binary/pseudo_probe.c) on
 * raw section bytes: input = u32 length of the .pseudo_probe_desc bytes,
 * those bytes, then the .pseudo_probe bytes. GUIDs resolve to an address
 * when even and are unknown when odd (unresolved records and sentinels).
 * Differential oracle: decoding half of the top-level records, then the
 * rest with pk_probe_table_decode_more, must give the table a single decode
 * of all gives (documented: "as if both sets had been decoded at once"). */
#include "fuzz_util.h"
#include "binary/pseudo_probe.h"

static int resolve(void *ctx, uint64_t guid, uint64_t *addr)
{
    (void)ctx;
    if (guid & 1)
        return -1;
    *addr = 0x400000 + ((guid >> 8) & 0xfffff);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4)
        return 0;
    size_t dlen = pk_ld32(data) % (size - 3);
    const uint8_t *desc = data + 4, *probe = desc + dlen;
    size_t plen = size - 4 - dlen;
    pk_err err = {{0}};
    pk_probe_descs descs;
    if (pk_probe_descs_decode(&descs, desc, dlen, 4, PK_FUZZ_NAME, &err))
        pk_fuzz_check_error(&err, NULL);
    else
        pk_probe_descs_free(&descs);

    pk_probe_table all;
    if (pk_probe_table_decode(&all, probe, plen, 4 + dlen, PK_FUZZ_NAME, resolve, NULL, NULL, &err)) {
        pk_fuzz_check_error(&err, NULL);
        return 0;
    }
    for (size_t i = 0; i < all.n; i += 1 + all.n / 32) {
        size_t n;
        if (!pk_probe_table_at(&all, all.probes[i].addr, &n) || !n)
            pk_fuzz_fail("probe %zu not found at its own address", i);
    }
    /* the same in two steps: the GUIDs of even-numbered records first, then
     * the others (a GUID in one set only, whatever records repeat it) */
    pk_u64map first, rest;
    pk_u64map_init(&first, 16);
    pk_u64map_init(&rest, 16);
    for (size_t i = 0; i < all.n_records; i++) {
        uint64_t g = all.records[i].guid;
        if (!pk_u64map_get(&first, g) && !pk_u64map_get(&rest, g))
            *pk_u64map_slot(i % 2 ? &rest : &first, g) = 1;
    }
    pk_probe_table two;
    if (pk_probe_table_decode(&two, probe, plen, 4 + dlen, PK_FUZZ_NAME, resolve, NULL, &first, &err))
        pk_fuzz_fail("a subset of records failed where all decoded: %s", err.msg);
    if (pk_probe_table_decode_more(&two, probe, plen, 4 + dlen, PK_FUZZ_NAME, resolve, NULL, &rest, &err))
        pk_fuzz_fail("decode_more failed where all decoded: %s", err.msg);
    if (two.n != all.n)
        pk_fuzz_fail("%zu probes in one decode, %zu in two", all.n, two.n);
    for (size_t i = 0; i < all.n; i++)
        if (all.probes[i].addr != two.probes[i].addr || all.probes[i].index != two.probes[i].index ||
            all.probes[i].order != two.probes[i].order)
            pk_fuzz_fail("probe %zu differs between one decode and two", i);
    pk_probe_table_free(&two);
    pk_u64map_free(&first);
    pk_u64map_free(&rest);
    pk_probe_table_free(&all);
    return 0;
}
