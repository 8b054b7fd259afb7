/* probe_inline.c — a fixture for pseudo-probe decoding: several levels of
 * inlining of static functions, an indirect call, a direct call kept
 * out of line, loops (duplicated blocks), and a cold path. */
#include <stdio.h>
#include <stdlib.h>

static inline int l3(int x) { return x % 3 ? x * 5 : x + 7; }
static inline int l2(int x)
{
    int s = 0;
    for (int i = 0; i < x; i++)
        s += l3(i);
    return s;
}
static inline int l1(int x) { return x > 5 ? l2(x) : l3(x); }
__attribute__((noinline)) static int leaf(int x) { return x ^ (x >> 3); }
__attribute__((noinline)) int top(int n)
{
    int r = 0;
    for (int j = 0; j < n; j++)
        r += l1(j) + l1(j + 1) + leaf(j);
    return r;
}
__attribute__((noinline, cold)) static void report(const char *what) { fprintf(stderr, "%s\n", what); }
int (*volatile indirect)(int) = top;

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 30;
    if (n < 0)
        report("negative");
    printf("%d\n", indirect(n) + top(n / 2));
    return 0;
}
