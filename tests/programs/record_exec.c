/* record_exec.c — execs another program after some work of its own, for
 * `pgokit record`'s following of execs (tests/e2e/record_forks.sh).
 *   record_exec N PROGRAM ARGS...   runs exec_work(N), then execv(PROGRAM,
 *                                   [PROGRAM, ARGS...]); a PROGRAM that does
 *                                   not exist is tried first, as a shell's
 *                                   PATH search does, and must not stop
 *                                   anything. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline)) unsigned long exec_work(unsigned long n)
{
    unsigned long s = 11;
    for (unsigned long i = 0; i < n; i++) {
        s = s * 2862933555777941757ul + (i | 1);
        __asm__ volatile("" : "+r"(s));
    }
    return s;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    printf("exec_work %lu\n", exec_work(strtoul(argv[1], NULL, 0)) & 0xffff);
    fflush(stdout);
    execv("/nonexistent/pgokit-test-program", argv + 2);   /* fails: ENOENT */
    execv(argv[2], argv + 2);
    perror("execv");
    return 127;
}
