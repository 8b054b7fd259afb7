/* Fixture for the binary/ tests: static inline helpers on several levels,
 * loops that get discriminators, a function gcc splits into a .cold part,
 * indirect calls and jumps (switch tables), tail calls. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline int sq(int x) { return x * x; }
static inline int cube(int x) { return sq(x) * x; }
static inline int poly(int x) { return cube(x) + 3 * sq(x) + x; }

__attribute__((noinline)) static int sum_poly(const int *a, int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += poly(a[i]);
    return s;
}

__attribute__((noinline)) int loops(int n)
{
    int t = 0;
    for (int i = 0; i < n; i++) { if (i & 1) t += i; else t -= sq(i); }
    for (int j = 0; j < n; j++) t ^= j * 7;
    return t;
}

/* A call to a cold noreturn function makes gcc move the path into
 * checked_div.cold (a second range of the same DWARF subprogram). */
__attribute__((cold, noreturn, noinline)) static void die(const char *msg, int v)
{
    fprintf(stderr, "fatal: %s %d\n", msg, v);
    exit(3);
}

__attribute__((noinline)) int checked_div(int a, int b)
{
    if (b == 0)
        die("division by zero", a);
    return a / b;
}

typedef int (*op_fn)(int);
static int op_inc(int x) { return x + 1; }
static int op_dbl(int x) { return 2 * x; }
static int op_neg(int x) { return -x; }

__attribute__((noinline)) int dispatch(int k, int x)
{
    switch (k) {
    case 0: return x + 11;
    case 1: return x * 13;
    case 2: return x - 17;
    case 3: return x ^ 19;
    case 4: return x << 2;
    case 5: return x >> 1;
    case 6: return x % 23;
    default: return loops(x); /* tail call */
    }
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 100;
    int *a = malloc(sizeof(int) * (size_t)n);
    if (!a)
        return 1;
    for (int i = 0; i < n; i++)
        a[i] = i % 17;
    op_fn ops[3] = {op_inc, op_dbl, op_neg};
    int s = sum_poly(a, n) + loops(n) + checked_div(n, argc);
    for (int i = 0; i < n; i++)
        s += ops[i % 3](i) + dispatch(i % 9, i);
    printf("%d %zu\n", s, strlen(argv[0]));
    free(a);
    return 0;
}
