/* record_stream.h — `pgokit record -o -`: the recording streamed to
 * standard output in pipe mode once it is complete. */
#ifndef PK_CLI_RECORD_STREAM_H
#define PK_CLI_RECORD_STREAM_H

/* Creates the private file the recording goes to (in $TMPDIR, removed on
 * SIGTERM/SIGINT/SIGHUP like every temporary) and moves standard output
 * aside: fd 1 becomes a copy of standard error for the recorder and the
 * program. Returns the descriptor the data goes to, or -1 (message printed). */
int pk_record_stream_begin(char **path);
/* Streams the recording at path (if there is one) onto data_fd in pipe
 * mode, removes the file, and returns the exit status: record's `rc`, or
 * 1 when the stream could not be written. */
int pk_record_stream_end(int data_fd, char *path, int rc);

#endif
