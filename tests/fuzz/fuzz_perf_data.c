/* fuzz_perf_data.c — the perf.data reader (src/perf/perf_read*.c): file
 * mode, pipe mode and zstd-compressed records, from memory
 * (pk_perf_read_mem), and a pipe-mode input a second time through a real
 * pipe (pk_perf_read_fd's streaming path): both paths must agree on the
 * outcome and on every event. Mutations are structure-aware (perf_mutator.c). */
#include "fuzz_util.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Feeds data through a pipe big enough to hold it all (no writer thread
 * needed); -1 when the kernel refuses such a pipe. */
static int read_through_pipe(const uint8_t *data, size_t size, pk_fuzz_digest *d, pk_perf_stats *st, pk_err *err,
                             int *rc)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC))
        return -1;
    if (fcntl(fds[1], F_SETPIPE_SZ, (int)(size < 4096 ? 4096 : size)) < (int)size) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    size_t off = 0;
    while (off < size) {
        ssize_t n = write(fds[1], data + off, size - off);
        if (n <= 0)
            pk_fuzz_fail("write to pipe failed");
        off += (size_t)n;
    }
    close(fds[1]);
    pk_perf_callbacks cb;
    pk_fuzz_perf_callbacks(&cb, d);
    *rc = pk_perf_read_fd(fds[0], PK_FUZZ_NAME, &cb, st, err);
    close(fds[0]);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pk_err err = {{0}};
    pk_fuzz_digest a = {0, 0};
    pk_perf_callbacks cb;
    pk_fuzz_perf_callbacks(&cb, &a);
    pk_perf_stats st;
    int rc = pk_perf_read_mem(data, size, PK_FUZZ_NAME, &cb, &st, &err);
    if (rc)
        pk_fuzz_check_error(&err, NULL);

    /* pipe mode: the streaming reader must see the same file */
    if (size >= 16 && pk_ld64(data + 8) == 16 && size <= (1u << 20)) {
        pk_err err2 = {{0}};
        pk_fuzz_digest b = {0, 0};
        pk_perf_stats st2;
        int rc2;
        if (read_through_pipe(data, size, &b, &st2, &err2, &rc2) == 0) {
            if (rc2)
                pk_fuzz_check_error(&err2, NULL);
            if (!rc != !rc2)
                pk_fuzz_fail("memory and pipe readers disagree: %s / %s", rc ? err.msg : "ok", rc2 ? err2.msg : "ok");
            if (a.h != b.h || a.events != b.events)
                pk_fuzz_fail("memory and pipe readers saw different events (%llu vs %llu)",
                             (unsigned long long)a.events, (unsigned long long)b.events);
        }
    }
    return 0;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    return pk_fuzz_perf_mutate(data, size, max_size, seed);
}
