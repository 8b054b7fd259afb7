/* cs_scalarop.c — the CSSPGO paper's motivating example: scalarOp is called
 * from addVectorHead always with isAdd = 1 and from subVectorHead always with
 * isAdd = 0. A context-insensitive profile sees its branch 50/50; a
 * context-sensitive one sees it always taken in one context and never in the
 * other, which is what the copies inlined into each caller must carry.
 * The condition is data (always true for one caller, always false for the
 * other), so the branch survives inlining. Build the profiled binary with
 * -DPROFILED_BUILD to keep scalarOp out of line there, as in the paper. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static int scalarAdd(int a, int b) { return a + b; }
__attribute__((noinline)) static int scalarSub(int a, int b) { return a - b; }

#ifdef PROFILED_BUILD
__attribute__((noinline))
#endif
static int scalarOp(int a, int b, int isAdd)
{
    if (isAdd)
        return scalarAdd(a, b);
    return scalarSub(a, b);
}

__attribute__((noinline)) static void addVectorHead(int *v, const int *w, int n)
{
    for (int i = 0; i < n; i++)
        v[i] = scalarOp(v[i], w[i], w[i] >= 0);
}

__attribute__((noinline)) static void subVectorHead(int *v, const int *w, int n)
{
    for (int i = 0; i < n; i++)
        v[i] = scalarOp(v[i], w[i], w[i] < 0);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 2000;
    enum { N = 1000 };
    static int v[N], w[N];
    for (int i = 0; i < N; i++)
        v[i] = i, w[i] = (i * 7) & 15;
    for (int r = 0; r < rounds; r++) {
        addVectorHead(v, w, N);
        subVectorHead(v, w, N / 2);
    }
    long sum = 0;
    for (int i = 0; i < N; i++)
        sum += v[i];
    printf("%ld\n", sum);
    return 0;
}
