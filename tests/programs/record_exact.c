/* record_exact.c — deterministic control flow for the exact-counts test:
 * loops, if/else, a switch (jump table), direct calls and recursion, with
 * counts known to callgrind too. Built without PIE and with -gdwarf-4. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) int classify(int x)
{
    switch (x % 7) {
    case 0: return x * 3;
    case 1: return x + 11;
    case 2: return x ^ 0x55;
    case 3: return x - 7;
    case 4: return x << 1;
    case 5: return x >> 1;
    default: return -x;
    }
}

__attribute__((noinline)) int depth(int n)
{
    if (n <= 0)
        return 1;
    return depth(n - 1) + (n & 1);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 5000;
    long acc = 0;
    for (int i = 0; i < n; i++) {
        if (i & 1)
            acc += classify(i);
        else
            acc -= classify(i >> 2);
        if (i % 100 == 0)
            acc += depth(i % 13);
    }
    printf("%ld\n", acc);
    return 0;
}
