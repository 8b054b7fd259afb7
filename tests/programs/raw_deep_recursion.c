/* raw_deep_recursion.c — mutual recursion thousands of frames deep: three
 * functions call one another in turn, down to a depth that changes from one
 * call of main's loop to the next. Every sampled stack is a different long
 * chain of the same three call sites; compressed as profgen compresses
 * recursion, they are a handful of contexts, and a raw profile must stay as
 * small at depth 3000 as at depth 30.
 * usage: raw_deep_recursion [DEPTH [ITERATIONS]] */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) int work(int x)
{
    int s = 0;
    for (int i = 0; i < (x & 15) + 4; i++)
        s += i ^ x;
    return s;
}

__attribute__((noinline)) int pong(int n, int k);
__attribute__((noinline)) int pang(int n, int k);

__attribute__((noinline)) int ping(int n, int k)
{
    if (n <= 0)
        return work(k);
    return pong(n - 1, k + 1) + (n & 3 ? 0 : work(n));
}

__attribute__((noinline)) int pong(int n, int k)
{
    if (n <= 0)
        return work(k + 1);
    return pang(n - 1, k * 3) + 1;
}

__attribute__((noinline)) int pang(int n, int k)
{
    if (n <= 0)
        return work(k + 2);
    return ping(n - 1, k ^ n) - 1;
}

int main(int argc, char **argv)
{
    int depth = argc > 1 ? atoi(argv[1]) : 3000, iters = argc > 2 ? atoi(argv[2]) : 40;
    long t = 0;
    for (int i = 0; i < iters; i++)
        t += ping(depth - (i % 7) * (depth / 20), i);
    printf("%ld\n", t);
    return 0;
}
