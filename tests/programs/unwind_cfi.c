/* unwind_cfi.c — fixture of the CFI unwinding tests: a hot loop four calls
 * deep, main -> uw_outer -> uw_frame -> (through a pointer) uw_hot, built
 * without frame pointers, whose frames need each of the CFA rules a
 * compiler writes: uw_hot keeps no frame at all (CFA = sp + 8 on x86-64),
 * uw_frame pushes callee-saved registers and sizes a variable-length array
 * at run time, so the compiler addresses its frame from a frame pointer
 * (CFA = rbp + 16 / x29 + 16 after the prologue), uw_outer calls through a
 * function pointer (an indirect call: a call target only a whole chain can
 * name). Argument: CPU seconds of work (default 1); prints a checksum. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) static unsigned long uw_hot(unsigned long x)
{
    unsigned long s = 0;
    for (unsigned long i = 0; i < 3000; i++)
        s += (x ^ i) * 2654435761u >> 5;
    return s;
}

__attribute__((noinline)) static unsigned long uw_cold(unsigned long x)
{
    return x * 3;
}

__attribute__((noinline)) static unsigned long uw_frame(unsigned long (*fn)(unsigned long), unsigned long x,
                                                        unsigned n)
{
    volatile unsigned long buf[n]; /* a VLA: the frame's size is known only at run time */
    for (unsigned i = 0; i < n; i++)
        buf[i] = x + i;
    unsigned long s = 0;
    for (unsigned i = 0; i < n; i++)
        s += fn(buf[i]);
    return s;
}

__attribute__((noinline)) static unsigned long uw_outer(unsigned long x)
{
    /* sink is never 1: the pointer is uw_hot, but the compiler cannot know */
    unsigned long (*fn)(unsigned long) = sink == 1 ? uw_cold : uw_hot;
    /* (work after the call: not a tail call, which would leave no frame) */
    return uw_frame(fn, x, 2 + (unsigned)(x & 3)) ^ x;
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
        for (int k = 0; k < 16; k++)
            sink += uw_outer(n++);
    } while (cpu_seconds() < limit);
    printf("%lu rounds\n", n);
    return 0;
}
