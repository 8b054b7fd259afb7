/* record_ip.c — fixture of the IP + call-stack sampling tests: a hot loop
 * three calls deep (main -> ip_outer -> ip_middle -> ip_hot), each function
 * kept out of line, so that a sample's call chain (built with
 * -fno-omit-frame-pointer) names all of them. One process, one thread.
 * Argument: CPU seconds of work (a decimal number, default 1): the program
 * stops when its own CPU time reaches it, so it runs as long under load or
 * under QEMU, long enough to attach to or to interrupt, and always ends.
 * Prints a checksum of the work done. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) static unsigned long ip_hot(unsigned long x)
{
    unsigned long s = 0;
    for (unsigned long i = 0; i < 3000; i++)
        s += (x ^ i) * 2654435761u >> 5;
    return s;
}

__attribute__((noinline)) static unsigned long ip_middle(unsigned long x)
{
    return ip_hot(x) + ip_hot(x * 7 + 1);
}

__attribute__((noinline)) static unsigned long ip_outer(unsigned long x)
{
    unsigned long s = 0;
    for (unsigned long i = 0; i < 4; i++)
        s += ip_middle(x * 4 + i);
    return s;
}

static double cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    double limit = argc > 1 ? atof(argv[1]) : 1.0;
    unsigned long n = 0;
    do {
        /* the clock is a system call: read it every 16 rounds (~0.2 ms) */
        for (int k = 0; k < 16; k++)
            sink += ip_outer(n++);
    } while (cpu_seconds() < limit);
    printf("%lu rounds\n", n);
    return 0;
}
