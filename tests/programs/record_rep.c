/* record_rep.c — a rep-prefixed string instruction in a loop, for the IP
 * mode's count of retired instructions: QEMU runs every iteration of a
 * `rep movsb` as a block of its own, and the plugin must count the
 * instruction once per execution, as the exact counts do. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

static char src[4096], dst[4096];

__attribute__((noinline)) static void copy(size_t n)
{
    void *d = dst, *s = src;
    __asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    unsigned long sum = 0;
    for (int i = 0; i < n; i++) {
        src[i & 4095] = (char)i;
        copy(64 + (size_t)(i & 255));
        sum += (unsigned char)dst[i & 63];
    }
    printf("%lu\n", sum);
    return 0;
}
