/* ip_leaf.c — a hot leaf function without a frame of its own (built with
 * -momit-leaf-frame-pointer) called from one site of a caller that has
 * one: frame-pointer call chains sampled in the leaf skip the caller, and
 * profgen must put it back. usage: ip_leaf [iterations] */
#include <stdlib.h>

__attribute__((noinline)) unsigned leaf_mix(unsigned x)
{
    for (int i = 0; i < 64; i++)
        x = x * 2654435761u + (x >> 13);
    return x;
}

__attribute__((noinline)) unsigned middle(unsigned x, int n)
{
    unsigned s = 0;
    for (int i = 0; i < n; i++)
        s += leaf_mix(x + (unsigned)i);
    return s;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 20000;
    unsigned s = 0;
    for (long i = 0; i < n; i++)
        s += middle((unsigned)i, 100);
    return (int)(s & 1);
}
