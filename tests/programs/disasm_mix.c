/* disasm_mix.c — a fixture for the disassembly listing (pgokit disasm,
 * llvm-profgen --show-disassembly-only): inlined static functions, and
 * many instruction kinds compilers emit: atomics (lock), long double
 * (x87), vector and scalar floating point with compares, 64-bit constants
 * (movabs), negative and wide immediates, jump tables, bit scans, string
 * stores, division, conditional moves and sets, and a gcc partial-inlining
 * candidate (a .part.N clone). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline int mix3(int x) { return x % 3 ? x * 5 - 1000000 : x + 7; }
static inline int mix2(int x)
{
    int s = 0;
    for (int i = 0; i < x; i++)
        s += mix3(i);
    return s;
}

long counter;
__attribute__((noinline)) long bump(long by) { return __atomic_add_fetch(&counter, by, __ATOMIC_SEQ_CST); }

__attribute__((noinline)) long double ld_poly(long double x) { return x * x * 0.5L + x * 3.25L - 1.0L; }

__attribute__((noinline)) float fsel(float a, float b, float c) { return a < b ? c : (a >= c ? a : b * 2.0f); }

__attribute__((noinline)) double dsum(const double *v, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += v[i] > 0.5 ? v[i] * 1.5 : -v[i];
    return s;
}

__attribute__((noinline)) uint64_t hash64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

__attribute__((noinline)) int classify(int k)
{
    switch (k) {
    case 0: return 11;
    case 1: return -3;
    case 2: return 250;
    case 3: return 4000000;
    case 4: return -70000;
    case 5: return 9;
    case 6: return 1 << 20;
    default: return 0;
    }
}

__attribute__((noinline)) int bits(uint64_t x, unsigned y)
{
    return __builtin_ctzll(x | 1) + __builtin_clz(y | 1) + __builtin_popcountll(x) + (x > y) + (int)(x % 7u);
}

struct big {
    long v[64];
};
__attribute__((noinline)) void clear(struct big *b, int fill)
{
    memset(b, 0, sizeof *b);
    b->v[fill & 63] = fill;
}

static int slow_path(int *p, int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += p[i] * i - (p[i] >> 2);
    return s;
}
/* gcc splits the rarely-taken part out (slow_path.part.0, or inlines it) */
__attribute__((noinline)) int maybe_slow(int *p, int n)
{
    if (__builtin_expect(n < 4, 1))
        return n;
    return slow_path(p, n) + mix2(n);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 20;
    double v[16];
    int iv[16];
    for (int i = 0; i < 16; i++)
        v[i] = i * 0.1, iv[i] = i * 3 - 7;
    struct big b;
    clear(&b, n);
    long r = bump(n) + classify(n % 9) + bits((uint64_t)n * 977, (unsigned)n) + mix2(n % 50);
    r += maybe_slow(iv, n % 16) + (long)hash64((uint64_t)n) % 1000;
    printf("%ld %.3f %.3Lf %.2f %ld\n", r, dsum(v, 16), ld_poly(n), fsel(n, 2.0f, 3.0f), b.v[n & 63]);
    return 0;
}
