/* lbr.h — shared state of the pgokit LBR plugin (plugin/lbr.c, plugin/maps.c).
 * The plugin is a separate component loaded into qemu-x86_64: unlike the
 * library it has process-global state (QEMU's callbacks carry no context). */
#ifndef PK_LBR_H
#define PK_LBR_H

#include "perf/perf_data.h"
#include "record/record.h"

#include <pthread.h>

/* A guest executable mapping seen under a translated block. */
typedef struct lbr_map {
    uint64_t start, end, pgoff;
    char *path;               /* NULL: anonymous / [vdso] / not an ELF file */
    pk_elf_facts facts;
    bool has_facts;
    int bin;                  /* index into the exact-counts binaries, -1 if none */
} lbr_map;

typedef struct lbr_maps {
    lbr_map *v;               /* sorted by start */
    size_t n, cap;
    char **bin_paths;         /* distinct binaries (for exact counts) */
    size_t nbins;
} lbr_maps;

/* Makes sure a mapping covering `addr` is known; writes an MMAP2 record for a
 * newly seen file mapping through `w` (may be NULL). Caller holds the lock.
 * Returns -1 only when writing the record failed (message in werr). */
int lbr_maps_ensure(lbr_maps *m, uint64_t addr, pk_perf_writer *w, uint32_t pid, uint64_t time,
                    pk_err *werr);
/* Registers (and announces) every mapping of `path` now, so that the main
 * binary's MMAP2 comes before any sample, as with the kernel. */
int lbr_maps_preload(lbr_maps *m, const char *path, pk_perf_writer *w, uint32_t pid, uint64_t time,
                     pk_err *werr);
const lbr_map *lbr_maps_find(const lbr_maps *m, uint64_t addr);
/* Run-time address -> binary index and ELF vaddr; false when unmapped. */
bool lbr_maps_to_vaddr(const lbr_maps *m, uint64_t addr, int *bin, uint64_t *vaddr);

#endif
