/* record_stream.c — `pgokit record -o -`. */
#include "cli/record_stream.h"
#include "cli/cli.h"
#include "perf/perf_data.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int pk_record_stream_begin(char **path)
{
    *path = NULL;
    const char *dir = getenv("TMPDIR");
    char base[4096];
    snprintf(base, sizeof base, "%s/pgokit-record.data", dir && *dir ? dir : "/tmp");
    pk_err err;
    int fd = pk_out_create_temporary(base, path, &err);
    if (fd < 0) {
        pk_cli_fail("record", &err);
        return -1;
    }
    close(fd);
    pk_out_track_temporary(*path);
    int data_fd = fcntl(1, F_DUPFD_CLOEXEC, 3);
    if (data_fd < 0 || dup2(2, 1) < 0) {
        pk_err_errno(&err, "standard output");
        pk_cli_fail("record", &err);
        if (data_fd >= 0)
            close(data_fd);
        unlink(*path);
        pk_out_untrack_temporary(*path);
        free(*path);
        *path = NULL;
        return -1;
    }
    return data_fd;
}

int pk_record_stream_end(int data_fd, char *path, int rc)
{
    struct stat st;
    if (stat(path, &st) == 0 && st.st_size > 0) {
        pk_err err;
        if (pk_perf_file_to_pipe(path, data_fd, "standard output", &err)) {
            pk_cli_fail("record", &err);
            rc = 1;
        }
    }
    unlink(path);
    pk_out_untrack_temporary(path);
    free(path);
    if (close(data_fd) != 0 && !rc)
        rc = 1;
    return rc;
}
