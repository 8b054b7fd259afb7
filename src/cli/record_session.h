/* record_session.h — the end of an emulated `pgokit record`: every process
 * of the run wrote its own files into a session directory (plugin/follow.c);
 * wait for the ones still running, merge their files into the output, and
 * say which processes ran unrecorded. */
#ifndef PK_CLI_RECORD_SESSION_H
#define PK_CLI_RECORD_SESSION_H

#include "record/record.h"

#include <sys/types.h>

typedef struct pk_emu_outcome {
    size_t parts;               /* process images recorded (files merged) */
    pk_vec missing;             /* pk_record_unrec: processes that ran unrecorded */
} pk_emu_outcome;

/* Creates the session directory for `out`: "<out>.tmp.XXXXXX" next to it
 * (same file system: a one-process run is a rename), or a fresh directory
 * in $TMPDIR when out is not a regular file. Absolute. NULL on error
 * (message printed). */
char *pk_emu_session_create(const char *out);

/* After the first process (QEMU's pid `qemu_pid`, ended with `status`):
 * waits for the processes still writing (^C or SIGTERM stops the wait),
 * merges the perf.data files into `out` and the exact counts into `exact`
 * (NULL: none), and removes the directory. Returns 0, or -1 when no
 * perf.data could be written (message printed). */
int pk_emu_session_finish(const char *dir, const char *out, const char *exact, int status, bool quiet,
                          pk_emu_outcome *res);

/* Prints the processes that ran unrecorded (nothing when there are none). */
void pk_emu_outcome_report(const pk_emu_outcome *res, const char *out);
void pk_emu_outcome_free(pk_emu_outcome *res);

#endif
