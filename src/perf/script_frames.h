/* script_frames.h — private to src/perf/: making the call-chain addresses of
 * `perf script` text absolute.
 *
 * perf 6.1 prints a call-chain entry as its address inside the file it was
 * executed from (runtime address − mapping start + page offset, for
 * executables and shared objects alike) while branch stacks and mmap events
 * stay absolute; other perf versions, `pgokit dump --perfscript` and
 * hand-written scripts print absolute addresses. The reader keeps the mmap
 * lines (--show-mmap-events) and, per sample, tells which form it reads:
 * the leaf entry is the sample's ip, at or just after the newest branch's
 * target, so the leaf is either that target or the target's file-relative
 * form. Relative entries are then placed back in their mapping: the one the
 * line names (`addr sym (dso)` forms), else the only mapping whose file
 * range holds the offset; when several do, the mapping the sample's branch
 * stack ran in, else the neighbouring frame's, and the entry counts as
 * guessed (perf 6.1's `-F ip,brstack` names no file).
 */
#ifndef PK_SCRIPT_FRAMES_H
#define PK_SCRIPT_FRAMES_H

#include "perf/perf_data.h"

typedef struct pk_sframes pk_sframes;

pk_sframes *pk_sframes_new(void);
void pk_sframes_free(pk_sframes *f);

/* Remembers a mapping of an MMAP/MMAP2 line (a later mapping of the same
 * process over the same addresses replaces it). -1 on OOM. */
int pk_sframes_mmap(pk_sframes *f, const pk_mmap_event *m);

/* Id of a file name printed on a call-chain line ("(/usr/lib/libc.so.6)"
 * without the parentheses), for pk_sframes_place; 0 on OOM (0 also means
 * "no name"). */
uint32_t pk_sframes_name(pk_sframes *f, const char *name, size_t len);

/* Makes the n call-chain entries of one sample (leaf first) absolute in
 * place. names[i]: the id of the file frame i names, 0 when the line names
 * none. pid < 0: the text printed no pid (every process's mappings are
 * looked at). lbr: the sample's branch stack, newest first. Counts go to
 * st (frames, frames_rebased, frames_guessed, frames_unplaced,
 * frames_unmapped, relative). */
void pk_sframes_place(pk_sframes *f, int64_t pid, uint64_t *frames, const uint32_t *names, size_t n,
                      const pk_branch *lbr, size_t nlbr, pk_script_stats *st);

#endif
