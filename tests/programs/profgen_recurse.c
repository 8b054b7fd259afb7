/* profgen_recurse.c — recursion (direct, and mutual through two call
 * sites) and a callback from libc (qsort's comparator), for the unwinder's
 * context shapes: recursion compression, callers kept across code outside
 * the binary; an inlined call (scale) and two calls on one line, whose
 * discriminators a pseudo-probe build fills with probe indices. */
#include <stdio.h>
#include <stdlib.h>

volatile int sink;

__attribute__((noinline)) int leafwork(int x)
{
    int s = 0;
    for (int i = 0; i < (x & 7) + 3; i++)
        s += i * x;
    return s;
}

__attribute__((noinline)) int walk(int n, int k)
{
    if (n <= 0)
        return leafwork(k);
    int r = walk(n - 1, k + 1);
    return r + leafwork(n);
}

__attribute__((noinline)) int odd(int n);
__attribute__((noinline)) int even(int n)
{
    if (n == 0)
        return leafwork(1);
    return odd(n - 1) + 1;
}
__attribute__((noinline)) int odd(int n)
{
    if (n == 0)
        return leafwork(2);
    return even(n - 1) + leafwork(n);
}

static int cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    sink += leafwork(x);
    return (x > y) - (x < y);
}

static inline int scale(int x)
{
    return x * 3 + (x >> 2);
}

__attribute__((noinline)) int sorter(int *v, int n)
{
    int s = leafwork(n);
    qsort(v, n, sizeof *v, cmp);
    for (int i = 0; i < n; i++)
        s += scale(v[i]) * i;
    return s;
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 200;
    int v[64];
    long t = 0;
    for (int it = 0; it < iters; it++) {
        t += walk(12, it);
        t += even(9 + (it & 1));
        for (int i = 0; i < 64; i++)
            v[i] = (i * 7919 + it) % 101;
        t += sorter(v, 64);
    }
    printf("%ld\n", t);
    return 0;
}
