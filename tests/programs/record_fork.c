/* record_fork.c — a process tree for `pgokit record`'s following of forks
 * (tests/e2e/record_forks.sh). The parent forks a child, each runs its own
 * loop (child_work: N iterations, parent_work: N / 3), and the parent waits.
 * The counts are distinct so that exact counts tell whose they are: each
 * loop's backward branch is taken exactly iterations - 1 times.
 *   record_fork N            both work, the child exits 7
 *   record_fork N abort      the child aborts after its work (dies of SIGABRT)
 *   record_fork N hang       the child works, then waits to be killed
 * Output: one line from each, independent of timing. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* One step of a 64-bit LCG per iteration: a serial dependency, so the loop
 * is neither vectorized nor unrolled at -O1/-O2. */
__attribute__((noinline)) static unsigned long lcg_loop(unsigned long n, unsigned long s)
{
    for (unsigned long i = 0; i < n; i++) {
        s = s * 6364136223846793005ul + (i ^ (s >> 7));
        __asm__ volatile("" : "+r"(s));
    }
    return s;
}

__attribute__((noinline)) unsigned long child_work(unsigned long n) { return lcg_loop(n, 3) ^ 1; }
__attribute__((noinline)) unsigned long parent_work(unsigned long n) { return lcg_loop(n, 5) ^ 2; }

int main(int argc, char **argv)
{
    unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000000;
    const char *mode = argc > 2 ? argv[2] : "";
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        return 2;
    if (pid == 0) {
        unsigned long r = child_work(n);
        printf("child %lu\n", r & 0xffff);
        fflush(stdout);
        if (!strcmp(mode, "abort"))
            abort();
        if (!strcmp(mode, "hang"))
            for (;;)
                pause();
        _exit(7);
    }
    unsigned long r = parent_work(n / 3);
    int st = 0;
    if (!strcmp(mode, "hang")) {
        sleep(1);   /* the child has done its work by then (it runs N, not N/3) */
        kill(pid, SIGKILL);
    }
    waitpid(pid, &st, 0);
    printf("parent %lu child status %s %d\n", r & 0xffff, WIFEXITED(st) ? "exit" : "signal",
           WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
    return 0;
}
