/* rt_fentry.S — the entry hook called by code compiled with `-pg -mfentry`.
 *
 * It runs as the first instruction of the instrumented function, before its
 * prologue, so every argument register (and %rax: vararg SSE count, %r10:
 * static chain) is live. We save the integer caller-saved registers and call
 * the C handler, which is compiled with -mgeneral-regs-only and calls no
 * libc code, so vector registers never need saving.
 * Stack: at the instrumented function's entry %rsp = 8 mod 16; our return
 * address makes it 0 mod 16; 9 pushes + 8 bytes realign to 0 mod 16. */
        .text
        .globl  __fentry__
        .type   __fentry__, @function
        .globl  pk_rt_fentry_self
        .hidden pk_rt_fentry_self
        .p2align 4
__fentry__:
pk_rt_fentry_self:
        pushq   %rax
        pushq   %rcx
        pushq   %rdx
        pushq   %rsi
        pushq   %rdi
        pushq   %r8
        pushq   %r9
        pushq   %r10
        pushq   %r11
        subq    $8, %rsp
        movq    80(%rsp), %rdi          /* return address = end of the call site */
        movq    88(%rsp), %rsi          /* the instrumented function's return address */
        call    pk_rt_hit
        addq    $8, %rsp
        popq    %r11
        popq    %r10
        popq    %r9
        popq    %r8
        popq    %rdi
        popq    %rsi
        popq    %rdx
        popq    %rcx
        popq    %rax
        ret
        .size   __fentry__, . - __fentry__

        .section .note.GNU-stack, "", @progbits
