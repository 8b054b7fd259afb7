/* child.h — running the recorder (perf or qemu-x86_64) of a recording
 * (recording.c), so that Ctrl-C and SIGTERM end it cleanly: the signal is
 * passed on to the recorder, which finishes its perf.data, and the
 * recording waits for it. Internal to src/record/. */
#ifndef PK_RECORD_CHILD_H
#define PK_RECORD_CHILD_H

#include <stdbool.h>
#include <sys/types.h>

typedef struct pk_run_result {
    pid_t pid;          /* the recorder's pid (names the plugin's temporary file) */
    int status;         /* how it ended: its exit code, or 128 + the signal that killed it */
    int signal;         /* SIGINT or SIGTERM that record received while it ran (0: none) */
    int exec_errno;     /* the recorder could not be executed (status 127): why */
} pk_run_result;

/* Runs argv[0] (searched in PATH) and waits for it. If pgokit dies first
 * (even of SIGKILL), the kernel sends the recorder `death_signal`. While it runs:
 *  - SIGINT and SIGTERM sent to pgokit are sent on to it (a ^C typed on
 *    the terminal reaches the whole foreground process group, the recorder
 *    included, and is not sent twice); pgokit itself keeps running and
 *    waits. A SIGINT that pgokit inherited as ignored (a background job of
 *    a script) stays ignored, as shells expect.
 *  - SIGQUIT is ignored by pgokit (the program owns the terminal's ^\).
 * The SIGINT/SIGTERM handlers stay installed after it returns (later ones
 * are only noted), so that record finishes its output before it exits.
 * Returns -1 (with a message in `msg`) when the recorder cannot be started. */
int pk_record_run_child(char **argv, int death_signal, pk_run_result *r, char *msg, size_t msg_size);

/* After pk_record_run_child: the first SIGINT/SIGTERM record got (0: none);
 * *to_forward says whether one came from kill(1) rather than the terminal
 * (whose ^C reaches the whole process group) since the last call: the
 * processes the program left running should get it too. */
int pk_record_run_signal(bool *to_forward);

#endif
