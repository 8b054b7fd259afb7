/* cs_prep.h — the work a CSSPGO profgen run can do ahead, on a second
 * thread: decoding the sampled functions' pseudo-probes while the caller
 * infers tail-call frames, then indexing the DWARF the code sizes will need
 * while the caller builds the profile. */
#ifndef PK_CS_PREP_H
#define PK_CS_PREP_H

#include "binary/probe_loader.h"

typedef struct pk_cs_prep pk_cs_prep;

/* Starts: the probes of the functions in `keep` are decoded into
 * *probes; then, with index_dwarf and once the caller has called
 * pk_cs_prep_index, the symbolizer of bin indexes the units of every
 * function the probe inline trees name (a superset of what the profile's
 * contexts will name: pk_ctx_sizes_build finds its index ready). Until
 * pk_cs_prep_probes returns the caller must not touch *probes, `keep`
 * nor the ELF's section data; between pk_cs_prep_index and pk_cs_prep_finish it may only
 * read *probes; until pk_cs_prep_finish, not use bin's symbolizer. Without
 * a thread to be had the probes are decoded at once and nothing else is
 * done ahead (not an error). */
int pk_cs_prep_start(pk_cs_prep **out, pk_binary *bin, pk_probe_info *probes, const pk_u64map *keep,
                     bool index_dwarf, pk_err *err);
/* Waits until the probes are decoded: their result. */
int pk_cs_prep_probes(pk_cs_prep *p, pk_err *err);
/* The probe table is final (records added since): index the DWARF now. */
void pk_cs_prep_index(pk_cs_prep *p);
/* Waits for the rest and frees p (NULL is fine); the DWARF indexing's error
 * (corrupt DWARF) into err when err is not NULL. */
int pk_cs_prep_finish(pk_cs_prep *p, pk_err *err);

#endif
