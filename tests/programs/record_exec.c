/* record_exec.c — execs another program after some work of its own, for
 * `pgokit record`'s following of execs (tests/e2e/record_forks.sh).
 *   record_exec N PATH ARGV0 ARGS...  runs exec_work(N), ignores SIGUSR1 and
 *                                     blocks SIGUSR2, then execv(PATH,
 *                                     [ARGV0, ARGS...]); a PATH that does not
 *                                     exist is tried first, as a shell's PATH
 *                                     search does, and must stop nothing
 *   record_exec signals               prints argv[0] and what an exec kept:
 *                                     SIGUSR1 ignored, SIGUSR2 blocked */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    if (argc > 1 && !strcmp(argv[1], "signals")) {
        struct sigaction a;
        sigset_t m;
        sigaction(SIGUSR1, NULL, &a);
        sigprocmask(SIG_BLOCK, NULL, &m);
        printf("argv0 %s, SIGUSR1 ignored %d, SIGUSR2 blocked %d\n", argv[0], a.sa_handler == SIG_IGN,
               sigismember(&m, SIGUSR2));
        return 0;
    }
    if (argc < 4)
        return 2;
    printf("exec_work %lu\n", exec_work(strtoul(argv[1], NULL, 0)) & 0xffff);
    fflush(stdout);
    signal(SIGUSR1, SIG_IGN);
    sigset_t m;
    sigemptyset(&m);
    sigaddset(&m, SIGUSR2);
    sigprocmask(SIG_BLOCK, &m, NULL);
    execv("/nonexistent/pgokit-test-program", argv + 3);   /* fails: ENOENT */
    execv(argv[2], argv + 3);
    perror("execv");
    return 127;
}
