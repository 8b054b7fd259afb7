/* fuzz_temporal_raw.c — the raw temporal profiles libpgokit_rt writes
 * (src/temporal/raw.c, pk_temporal_raw_open_mem), then their correlation
 * with a binary's symbols (correlate.c) into an indexed profile, written and
 * loaded back. The header holds the total size and a checksum: each input
 * is read as it is and with both made right. The symbol table is made up
 * (functions every 64 bytes from the module's lowest record address) and
 * carries module 0's build-id, so correlation gets past its build-id check. */
#include "fuzz_util.h"
#include "temporal/temporal.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define NSYMS 64

static void correlate(const pk_temporal_raw *raw)
{
    if (!raw->num_modules || !raw->modules[0].build_id_len)
        return;
    pk_temporal_symtab syms;
    memset(&syms, 0, sizeof syms);
    memcpy(syms.build_id, raw->modules[0].build_id, raw->modules[0].build_id_len);
    syms.build_id_len = raw->modules[0].build_id_len;
    uint64_t lo = UINT64_MAX;
    for (uint64_t i = 0; i < raw->num_records; i++) {
        pk_temporal_raw_record r = pk_temporal_raw_record_at(raw, i);
        if (r.module == 0 && r.addr < lo)
            lo = r.addr;
    }
    if (lo == UINT64_MAX)
        lo = 0x1000;
    struct pk_temporal_sym s[NSYMS];
    char names[NSYMS][16];
    for (int i = 0; i < NSYMS; i++) {
        snprintf(names[i], sizeof names[i], "f%d", i);
        s[i] = (struct pk_temporal_sym){lo + 64u * (uint64_t)i, 48, names[i], names[i], 0};
    }
    syms.syms = s;
    syms.num_syms = lo <= UINT64_MAX - 64 * NSYMS ? NSYMS : 0;
    pk_temporal_profile p;
    pk_temporal_init(&p, 4, 16);
    pk_err err = {{0}};
    pk_temporal_correlate_stats st;
    for (int run = 0; run < 6; run++)
        if (pk_temporal_add_raw(&p, raw, &syms, 1 + (uint64_t)run, &st, &err))
            pk_fuzz_fail("correlating a raw profile that validated: %s", err.msg);
    char path[128];
    snprintf(path, sizeof path, "%s/t.pgotemporal", pk_fuzz_tmpdir());
    if (pk_temporal_write(&p, path, &err))
        pk_fuzz_fail("writing the indexed profile: %s", err.msg);
    pk_temporal_profile back;
    if (pk_temporal_load(&back, path, &err))
        pk_fuzz_fail("loading what was written: %s", err.msg);
    if (back.num_funcs != p.num_funcs || back.num_traces != p.num_traces)
        pk_fuzz_fail("the indexed profile changed on its way through the file");
    pk_temporal_free(&back);
    pk_temporal_free(&p);
    unlink(path);
}

static void one(const uint8_t *data, size_t size)
{
    pk_err err = {{0}};
    pk_temporal_raw raw;
    if (pk_temporal_raw_open_mem(&raw, data, size, PK_FUZZ_NAME, &err)) {
        pk_fuzz_check_error(&err, NULL);
        return;
    }
    correlate(&raw);
    pk_temporal_raw_close(&raw);
}

/* the header's size and checksum fields (offsets 16 and 24) */
static void fix_checksum(uint8_t *data, size_t size)
{
    pk_st64(data + 16, size);
    pk_st64(data + 24, pk_temporal_checksum(data, size));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pk_fuzz_read_with_fixed_checksum(data, size, 32, fix_checksum, one);
    return 0;
}
