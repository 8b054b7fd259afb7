/* record_signal.c — a long-running program for the recorder's signal tests.
 * Modes: "spin" loops over a few calls until it is killed; "abort" and
 * "segv" crash after some work (abort(), a store through a null pointer);
 * "handle" catches SIGINT, then prints "clean" and exits 0; "mark FILE"
 * spins like "spin" and creates FILE once it has done some work (a
 * condition a test can wait on before it stops the program). The work is
 * real calls and loops, so that samples and call chains have content. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop;
static volatile unsigned long sink;
static int *volatile nowhere;   /* NULL, read at run time: a real SIGSEGV, no ud2 */

static void on_int(int sig)
{
    (void)sig;
    stop = 1;
}

__attribute__((noinline)) static unsigned long mix(unsigned long x)
{
    for (int i = 0; i < 64; i++) {   /* xorshift: no closed form to fold */
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    return x;
}

__attribute__((noinline)) static void round_of_work(unsigned long i)
{
    sink += mix(i) >> 7;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "spin";
    if (!strcmp(mode, "handle"))
        signal(SIGINT, on_int);
    for (unsigned long i = 0; !stop; i++) {
        round_of_work(i);
        if (i == 200000 && !strcmp(mode, "abort"))
            abort();
        if (i == 200000 && !strcmp(mode, "segv"))
            *nowhere = 1;
        if (i == 100000 && !strcmp(mode, "mark") && argc > 2) {
            int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (fd >= 0)
                close(fd);
        }
    }
    printf("clean\n");
    return 0;
}
