/* units_main.c — a hot loop calling units_step (units_lib.c: another
 * compilation unit) and mix (this unit): see tests/e2e/profgen_units.sh. */
#include <stdio.h>
#include <stdlib.h>

int units_step(int x);

static int mix(int x) { return x % 3 ? x + 1 : x - 5; }

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 100000;
    unsigned s = 0;
    for (int i = 0; i < n; i++)
        s += (unsigned)units_step(i) + (unsigned)mix(i);
    printf("%u\n", s);
    return 0;
}
