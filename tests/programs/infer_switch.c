/* infer_switch.c — control flow for the CFG builder and flow inference
 * tests (test_infer_cfg.c): dense switches that compile to jump tables
 * (an int index, a char index, a switch in a loop), loops and nested loops,
 * calls, recursion, a noreturn call. Deterministic: the same argument gives
 * the same run, so the emulator's exact counts are the ground truth. */
#include <stdio.h>
#include <stdlib.h>

static volatile int sink;

/* A cold callee: gcc moves the path calling it to main.cold, a second
 * range of main (the CFG test builds main from its DWARF ranges). */
__attribute__((noinline, cold)) void die(const char *msg)
{
    fprintf(stderr, "%s\n", msg);
    exit(2);
}

__attribute__((noinline)) int op_int(int op, int x)
{
    switch (op) {
    case 0: return x * 3 + 1;
    case 1: return x + 11;
    case 2: return x ^ 0x55;
    case 3: return x - 7;
    case 4: return x << 1;
    case 5: return x >> 1;
    case 6: return x * x;
    case 7: return ~x;
    case 9: return x / 3;
    case 10: return x % 5 + 2;
    default: return -x;
    }
}

/* Every value has a case and the default is unreachable: compilers drop
 * the bound check, the table's size must be guessed. */
enum shape { SQUARE, CIRCLE, TRIANGLE, HEXAGON, STAR, LINE, DOT };

__attribute__((noinline)) int op_enum(enum shape s, int x)
{
    switch (s) {
    case SQUARE: return x * x;
    case CIRCLE: return 3 * x * x + 7;
    case TRIANGLE: return x * x / 2 + 1;
    case HEXAGON: return 6 * x - 5;
    case STAR: return 5 * x + 13;
    case LINE: return x - 99;
    case DOT: return 1;
    }
    __builtin_unreachable();
}

__attribute__((noinline)) int op_char(const char *s)
{
    int acc = 0;
    for (; *s; s++) {
        switch (*s) {
        case 'a': acc += 1; break;
        case 'b': acc *= 3; break;
        case 'c': acc -= 2; break;
        case 'd': acc ^= 0x33; break;
        case 'e': acc += acc >> 2; break;
        case 'f': sink = acc; break;
        case 'g': acc = acc * 7 + 1; break;
        case 'h': acc /= 2; break;
        default: acc++; break;
        }
    }
    return acc;
}

__attribute__((noinline)) long nested(int n)
{
    long s = 0;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < i; j++) {
            if ((i ^ j) & 1)
                s += j;
            else
                s -= i;
        }
        if (i % 3 == 0)
            s = s * 3 + 1;
    }
    return s;
}

__attribute__((noinline)) int depth(int n)
{
    if (n <= 0)
        return 1;
    return depth(n - 1) + (n & 1);
}

__attribute__((noinline)) void check(int v)
{
    if (v == 123456789) {
        fprintf(stderr, "impossible %d\n", v);
        abort();
    }
}

/* A call through a pointer in tail position: an indirect jump that is no
 * switch (`mov tail_target(%rip),%rax; ...; jmp *%rax`). */
static int twice(int x) { return 2 * x; }
int (*volatile tail_target)(int) = twice;
__attribute__((noinline)) int tail_ptr(int x) { return tail_target(x + 1); }

#if defined(__x86_64__)
/* A switch in a loop whose table base is set once before the loop, with
 * code placed between them in address order (a path that returns) writing
 * the same register: walking back from the table load, that other
 * definition comes first. As clang lays out expat's tokenizer loops. */
int jt_hoisted(const char *s, int n);
__asm__("    .text\n"
        "    .globl jt_hoisted\n"
        "    .type jt_hoisted,@function\n"
        "jt_hoisted:\n"
        "    push %r12\n"
        "    xor %eax, %eax\n"
        "    lea .Ljt_tab(%rip), %r12\n"
        "    test %esi, %esi\n"
        "    jle .Ljt_done\n"
        "    jmp .Ljt_loop\n"
        ".Ljt_other:\n"
        "    mov %rdx, %r12\n"
        "    mov %r12d, %eax\n"
        "    pop %r12\n"
        "    ret\n"
        ".Ljt_loop:\n"
        "    movzbl (%rdi), %ecx\n"
        "    and $7, %ecx\n"
        "    cmp $3, %ecx\n"
        "    ja .Ljt_next\n"
        "    movslq (%r12,%rcx,4), %rcx\n"
        "    add %r12, %rcx\n"
        "    jmp *%rcx\n"
        ".Ljt_c0:\n"
        "    add $1, %eax\n"
        "    jmp .Ljt_next\n"
        ".Ljt_c1:\n"
        "    add $2, %eax\n"
        "    jmp .Ljt_next\n"
        ".Ljt_c2:\n"
        "    add $3, %eax\n"
        "    jmp .Ljt_next\n"
        ".Ljt_c3:\n"
        "    sub $1, %eax\n"
        ".Ljt_next:\n"
        "    inc %rdi\n"
        "    dec %esi\n"
        "    jg .Ljt_loop\n"
        ".Ljt_done:\n"
        "    cmp $-1000000, %eax\n"
        "    je .Ljt_other\n"
        "    pop %r12\n"
        "    ret\n"
        "    .size jt_hoisted, .-jt_hoisted\n"
        "    .section .rodata\n"
        "    .p2align 2\n"
        ".Ljt_tab:\n"
        "    .long .Ljt_c0-.Ljt_tab\n"
        "    .long .Ljt_c1-.Ljt_tab\n"
        "    .long .Ljt_c2-.Ljt_tab\n"
        "    .long .Ljt_c3-.Ljt_tab\n"
        "    .text\n");
#endif

int main(int argc, char **argv)
{
    if (argc > 2)
        die("usage: infer_switch [iterations]");
    int n = argc > 1 ? atoi(argv[1]) : 2000;
    static const char text[] = "abcdefghxaabbccddeeffgghhzz";
    long acc = 0;
    for (int i = 0; i < n; i++) {
        acc += op_int(i % 12, i);
        acc += op_enum((enum shape)(i % 7), i);
        if (i % 10 == 0)
            acc += op_char(text + (i % 7));
#if defined(__x86_64__)
        if (i % 10 == 5)
            acc += jt_hoisted(text + (i % 7), 12);
#endif
        if (i % 50 == 0)
            acc += depth(i % 17) + nested(i % 23);
        if (i % 20 == 3)
            acc += tail_ptr(i);
        check((int)acc);
    }
    printf("%ld\n", acc);
    return 0;
}
