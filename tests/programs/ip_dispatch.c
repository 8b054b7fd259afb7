/* ip_dispatch.c — a bytecode interpreter with computed-goto dispatch (as
 * Lua, CPython and Duktape are built with GCC and clang): handlers reached
 * only through `goto *labels[op]`, sharing tails. Two callers run it on
 * programs of different opcode mixes, so its profile depends on the calling
 * context. Usage: ip_dispatch N (N rounds). */
#include <stdio.h>
#include <stdlib.h>

enum { OP_ADD, OP_SUB, OP_MUL, OP_XOR, OP_SHL, OP_JNZ, OP_DEC, OP_HALT };

typedef struct { unsigned char op, a; } insn;

__attribute__((noinline)) static long run(const insn *code, long acc, long n)
{
    static void *const labels[] = {&&op_add, &&op_sub, &&op_mul, &&op_xor, &&op_shl, &&op_jnz, &&op_dec, &&op_halt};
    const insn *pc = code;
#define NEXT goto *labels[(++pc)->op]
    goto *labels[pc->op];
op_add:
    acc += pc->a;
    NEXT;
op_sub:
    acc -= pc->a;
    NEXT;
op_mul:
    acc = acc * (pc->a | 1) + 1;
    NEXT;
op_xor:
    acc ^= (long)pc->a << 3;
    NEXT;
op_shl:
    acc = (acc << (pc->a & 7)) | (acc >> 57);
    NEXT;
op_dec:
    n--;
    NEXT;
op_jnz:
    if (n > 0) {
        pc = code + pc->a;
        goto *labels[pc->op];
    }
    NEXT;
op_halt:
    return acc;
}

/* mostly arithmetic */
static const insn prog_a[] = {{OP_ADD, 3}, {OP_MUL, 5}, {OP_ADD, 7}, {OP_SUB, 2}, {OP_ADD, 1},
                              {OP_DEC, 0}, {OP_JNZ, 0}, {OP_HALT, 0}};
/* mostly bit operations */
static const insn prog_b[] = {{OP_XOR, 9}, {OP_SHL, 3}, {OP_XOR, 4}, {OP_SHL, 1}, {OP_SUB, 1},
                              {OP_DEC, 0}, {OP_JNZ, 0}, {OP_HALT, 0}};

__attribute__((noinline)) long arith(long n) { return run(prog_a, 1, n); }
__attribute__((noinline)) long bits(long n) { return run(prog_b, 2, n); }

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 100, sum = 0;
    for (long i = 0; i < rounds; i++) {
        sum += arith(20000);
        if (i % 4 == 0)
            sum += bits(20000);
    }
    printf("%ld\n", sum);
    return 0;
}
