/* record_i386.c — a 32-bit x86 program with no C library (no 32-bit libc is
 * needed to build it: clang-19 -m32 -nostdlib -static -fuse-ld=lld). The
 * kernel runs it natively; qemu-x86_64 cannot: `pgokit record --emulate`
 * must say that a process exec'ing it ran unrecorded
 * (tests/e2e/record_forks.sh). Prints "i386 ok". */
void _start(void)
{
    static const char msg[] = "i386 ok\n";
    long r;
    __asm__ volatile("int $0x80" : "=a"(r) : "a"(4), "b"(1), "c"(msg), "d"(sizeof msg - 1) : "memory");
    __asm__ volatile("int $0x80" : : "a"(1), "b"(0));
    for (;;) ;
}
