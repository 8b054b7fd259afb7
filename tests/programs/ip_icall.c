/* ip_icall.c — fixture of tests/e2e/profgen_ip_icall.sh: a hot loop calls
 * three functions through one pointer site, and a C library function
 * through its GOT slot (built with -fno-plt): profgen counts the first call
 * site among the calls through pointers, never the second (its callee is
 * other code, named in no profile of this binary). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static unsigned step_a(unsigned x)
{
    for (unsigned i = 0; i < 40; i++)
        x = x * 2654435761u + i;
    return x;
}

__attribute__((noinline)) static unsigned step_b(unsigned x)
{
    for (unsigned i = 0; i < 40; i++)
        x = (x ^ (x >> 7)) * 40503u + i;
    return x;
}

__attribute__((noinline)) static unsigned step_c(unsigned x)
{
    for (unsigned i = 0; i < 40; i++)
        x = x * 69069u + (x >> 13) + i;
    return x;
}

static unsigned (*volatile steps[3])(unsigned) = {step_a, step_b, step_c};

int main(int argc, char **argv)
{
    unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 1000, s = 0;
    for (unsigned i = 0; i < n; i++) {
        s = steps[i % 3](s + i);
        s += (unsigned)strlen(argv[0] + (i & 3));
    }
    printf("%u\n", s);
    return 0;
}
