/* profgen_nofp.c — code built without frame pointers that uses %rbp as a
 * general register (as -fomit-frame-pointer code may) and calls code that
 * keeps frame pointers. `spin` (no frame pointer) holds a pointer to data
 * in %rbp while it calls `work` (built with -fno-omit-frame-pointer): a
 * frame-pointer walk from a sample in `work` goes through spin's call back
 * into spin, then takes %rbp's data for a frame whose return address is
 * spin_no_call, an address in spin that follows no call. llvm-profgen
 * truncates such stacks there ("invalid return address ... frame pointer
 * omission"). Usage: profgen_nofp [ITERATIONS] */
#include <stdlib.h>

extern long spin(long n, void *data);
__asm__(".text\n"
        ".globl spin\n.type spin,@function\nspin:\n"
        "  push %rbx\n  push %rbp\n  mov %rsi, %rbp\n"
        "spin_no_call:\n  mov %rdi, %rbx\n  xor %eax, %eax\n"
        "1: mov %rbx, %rdi\n  call work\n  dec %rbx\n  jnz 1b\n"
        "  pop %rbp\n  pop %rbx\n  ret\n.size spin, .-spin\n");
extern char spin_no_call[];

volatile long sink;

__attribute__((noinline)) long work(long x)
{
    long acc = x;
    for (int i = 0; i < 1000; i++)
        acc = acc * 3 + i;
    sink = acc;
    return acc;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 300000;
    /* the "frame" %rbp points at while spin runs: no caller, then the
     * return address a frame-pointer walk reads */
    static void *data[2];
    data[1] = spin_no_call;
    return (int)(spin(n, data) & 1);
}
