/* probe_loader.h — the pseudo-probes of an ELF binary: finds the two
 * sections, resolves record start addresses through the MD5 of function
 * symbol names, and decodes (only the wanted top-level functions, if a set is
 * given). Builds on pseudo_probe.h, which knows only bytes. */
#ifndef PK_PROBE_LOADER_H
#define PK_PROBE_LOADER_H

#include "binary/binary.h"
#include "binary/pseudo_probe.h"

#include <stdio.h>

typedef struct pk_probe_info {
    pk_probe_descs descs;
    pk_probe_table table;
    pk_u64map by_guid;  /* function GUID → address, kept for pk_probe_info_load_more */
} pk_probe_info;

/* A binary without `.pseudo_probe_desc` is an error ("not built with
 * -fpseudo-probe-for-profiling"); one with descriptors but no probes is not.
 * `keep`: top-level GUIDs to decode (NULL: all). */
int pk_probe_info_load(pk_probe_info *info, pk_elf *elf, const pk_u64map *keep, pk_err *err);
void pk_probe_info_free(pk_probe_info *info);
/* Decodes the top-level records of the GUIDs in `more` as well (ones not
 * loaded before), as if they had been in `keep` from the start. */
int pk_probe_info_load_more(pk_probe_info *info, pk_elf *elf, const pk_u64map *more, pk_err *err);

/* For an architecture whose compiler leaves call-site probes out of
 * `.pseudo_probe` (pk_arch.call_probes_in_dwarf; a table without any call
 * probe): adds the call probes of the top-level bodies from node
 * `first_node` on, rebuilt from the calls' DWARF discriminators and inline
 * frames. Nothing for x86-64, or without DWARF. Called by the two above. */
int pk_probe_info_add_dwarf_calls(pk_probe_info *info, pk_elf *elf, size_t first_node, pk_err *err);

/* llvm-profgen's --show-pseudo-probe notation. The descriptors, by GUID:
 * "Pseudo Probe Desc:\n" then "GUID: G Name: N\nHash: H\n" each. */
int pk_probe_fprint_descs(FILE *out, const pk_probe_descs *descs, pk_err *err);
/* One probe: "[Probe]:\tFUNC: name Index: N  [Discriminator: D  ]Type: T  [Inlined: @ f:i ...]\n". */
void pk_probe_fprint(FILE *out, const pk_probe_info *info, const pk_probe *p);

/* True when the ELF has a `.pseudo_probe_desc` section. */
bool pk_elf_has_pseudo_probes(const pk_elf *elf);

#endif
