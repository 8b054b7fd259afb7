/* agg_target.c — the aggregator's target from the binary's ELF. */
#include "aggregate/aggregate.h"
#include "binary/binary.h"

#include <stdlib.h>

int pk_agg_target_of_elf(pk_agg_target *t, pk_agg_segment **segs, const pk_elf *elf, const char *path, pk_err *err)
{
    size_t nseg;
    const pk_elf_segment *es = pk_elf_segments(elf, &nseg);
    if (!(*segs = calloc(nseg + 1, sizeof **segs)))
        return pk_err_set(err, "out of memory");
    for (size_t i = 0; i < nseg; i++)
        (*segs)[i] = (pk_agg_segment){es[i].vaddr, es[i].memsz, es[i].offset, es[i].filesz, es[i].flags};
    const uint8_t *bid;
    size_t bid_len;
    pk_elf_build_id(elf, &bid, &bid_len);
    if (bid_len > 20)
        bid_len = 20;
    *t = (pk_agg_target){.path = path, .build_id_size = (uint8_t)bid_len, .preferred_base = pk_elf_preferred_base(elf),
                         .segs = *segs, .nsegs = nseg};
    if (bid_len)
        memcpy(t->build_id, bid, bid_len);
    return 0;
}
