/* infer_switch_a64.c — switches that AArch64 compilers turn into jump
 * tables (they want more cases than x86 compilers: 13+ for clang-19): an
 * int index, an unsigned char index, and cases padded with code so that the
 * word offsets exceed a byte (2-byte tables). For test_infer_a64.c; the
 * run takes every case, so the emulator's exact counts give each table's
 * targets. */
#include <stdio.h>
#include <stdlib.h>

static volatile int sink;
/* about 40 instructions of real code (inline asm would hide its size) */
#define P2 do { sink += x; sink ^= x >> 1; } while (0)
#define PAD do { P2; P2; P2; P2; P2; P2; P2; P2; } while (0)

__attribute__((noinline)) int op(int o, int x)
{
    switch (o) {
    case 0: return x * 3; case 1: return x + 11; case 2: return x ^ 0x55; case 3: return x - 7;
    case 4: return x << 1; case 5: return x >> 1; case 6: return x * x; case 7: return ~x;
    case 8: return x / 3; case 9: return x % 5; case 10: return x + 100; case 11: return x * 7;
    case 12: return x - 99; case 13: return x | 1; case 14: return x & 0xff; case 15: return x * x + 1;
    case 16: return -x; case 17: return x / 7; case 18: return x ^ 0xaa; case 19: return x + 1;
    default: return 0;
    }
}

__attribute__((noinline)) int opc(unsigned char o, int x)
{
    switch (o) {
    case 0: return x * 5; case 1: return x + 12; case 2: return x ^ 0x56; case 3: return x - 8;
    case 4: return x << 2; case 5: return x >> 2; case 6: return x * x - 1; case 7: return ~x + 1;
    case 8: return x / 9; case 9: return x % 6; case 10: return x + 101; case 11: return x * 9;
    case 12: return x - 98; case 13: return x | 2; case 14: return x & 0x7f; case 15: return x * x + 2;
    case 16: return 1 - x; case 17: return x / 11; case 18: return x ^ 0xab; case 19: return x + 2;
    default: return 1;
    }
}

__attribute__((noinline)) int wide(int o, int x)
{
    switch (o) {
    case 0: PAD; return x * 3; case 1: PAD; return x + 11; case 2: PAD; return x ^ 0x55;
    case 3: PAD; return x - 7; case 4: PAD; return x << 1; case 5: PAD; return x >> 1;
    case 6: PAD; return x * x; case 7: PAD; return ~x; case 8: PAD; return x / 3;
    case 9: PAD; return x % 5; case 10: PAD; return x + 100; case 11: PAD; return x * 7;
    case 12: PAD; return x - 99; case 13: PAD; return x | 1; case 14: PAD; return x & 0xff;
    case 15: PAD; return x * x + 1;
    default: return 2;
    }
}

#ifdef __clang__
/* inline asm of unknown size: clang falls back to 4-byte byte offsets
 * (ldrsw, added without a shift); gcc would count it as one instruction
 * and fail to assemble its byte table */
#define APAD __asm__ volatile(".rept 24\n\tnop\n\t.endr")
__attribute__((noinline)) int wide_asm(int o, int x)
{
    switch (o) {
    case 0: APAD; return x * 3; case 1: APAD; return x + 11; case 2: APAD; return x ^ 0x55;
    case 3: APAD; return x - 7; case 4: APAD; return x << 1; case 5: APAD; return x >> 1;
    case 6: APAD; return x * x; case 7: APAD; return ~x; case 8: APAD; return x / 3;
    case 9: APAD; return x % 5; case 10: APAD; return x + 100; case 11: APAD; return x * 7;
    case 12: APAD; return x - 99; case 13: APAD; return x | 1; case 14: APAD; return x & 0xff;
    case 15: APAD; return x * x + 1;
    default: return 3;
    }
}
#else
static int wide_asm(int o, int x) { return o + x; }
#endif

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    long s = 0;
    for (int i = 0; i < n; i++)
        s += op(i % 23, i) + opc((unsigned char)(i % 21), i) + wide(i % 17, i) + wide_asm(i % 17, i);
    printf("%ld\n", s);
    return 0;
}
