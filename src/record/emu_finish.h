/* emu_finish.h — the end of an emulated recording: every process of the
 * run wrote its own files into a session directory (plugin/follow.c); wait
 * for the ones still running, merge their files into the output, and say
 * which processes ran unrecorded. Internal to src/record/ (recording.c). */
#ifndef PK_RECORD_EMU_FINISH_H
#define PK_RECORD_EMU_FINISH_H

#include "record/record.h"

/* Creates the session directory for `out`: "<out>.tmp.XXXXXX" next to it
 * (same file system: a one-process run is a rename), or a fresh directory
 * in $TMPDIR when out is not a regular file. Absolute. NULL with err. */
char *pk_emu_session_create(const char *out, pk_err *err);

/* After the first process (QEMU, ended with `status`): waits for the
 * processes still writing (^C or SIGTERM stops the wait), merges the
 * perf.data files into `out` and the exact counts into `exact` (NULL:
 * none), and removes the directory. Progress and warnings go to `rec`'s
 * note function. Returns 0, or -1 with err when no perf.data could be
 * written; res says what was merged and what ran unrecorded either way. */
int pk_emu_session_finish(const char *dir, const char *out, const char *exact, int status, const pk_recording *rec,
                          pk_emu_outcome *res, pk_err *err);

#endif
