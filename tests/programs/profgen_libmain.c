/* profgen_libmain.c — drives profgen_lib.c's lib_work from another DSO. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int64_t lib_work(uint32_t seed, int n);

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 20;
    int64_t s = 0;
    for (int r = 0; r < rounds; r++)
        s += lib_work((uint32_t)r, 20000);
    printf("%lld\n", (long long)s);
    return 0;
}
