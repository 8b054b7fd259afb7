/* profgen_lib.c — a shared library with a hot, branchy function, to profile
 * a DSO (PIC code mapped at an arbitrary address, found by build-id). */
#include <stdint.h>

static int weight(uint32_t x)
{
    if ((x & 7) == 0)
        return 3;
    if ((x & 3) == 1)
        return -1;
    return (int)(x >> 29);
}

int64_t lib_work(uint32_t seed, int n)
{
    int64_t acc = 0;
    for (int i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        acc += weight(seed);
        if (acc > 1000000)
            acc -= 999;
    }
    return acc;
}
