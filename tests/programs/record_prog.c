/* record_prog.c — a deterministic program for `pgokit record` tests: a loop,
 * direct and indirect calls, recursion and calls into a shared library. Its
 * argument scales the work; the output depends only on the argument. */
#include <stdio.h>
#include <stdlib.h>

int record_lib_mix(int x);

__attribute__((noinline)) static int leaf_add(int a, int b) { return a + b * 3; }
__attribute__((noinline)) static int leaf_sub(int a, int b) { return a - (b ^ 5); }
__attribute__((noinline)) static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

typedef int (*op_fn)(int, int);
static op_fn volatile ops[2] = {leaf_add, leaf_sub};

__attribute__((noinline)) static int work(int i)
{
    int acc = ops[i & 1](i, i >> 1);          /* indirect call */
    if (i % 3 == 0)
        acc += fib(i % 12);                     /* recursion */
    else
        acc ^= record_lib_mix(i);               /* shared library */
    return acc;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    long sum = 0;
    for (int i = 0; i < n; i++)
        sum += work(i);
    printf("%ld\n", sum);
    return 0;
}
