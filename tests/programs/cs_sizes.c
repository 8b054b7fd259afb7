/* cs_sizes.c — fixture of test_ctx_sizes: `ident` is inlined into `work`
 * and optimized away there (its probe is left, no instruction), while an
 * outlined copy of it is kept through a function pointer; `twice` is
 * inlined with code of its own (a call). */
__attribute__((noinline)) int sink(int x)
{
    return x ^ 0x5a;
}

static int ident(int x)
{
    return x;
}

static inline int twice(int x)
{
    return sink(x) * 2;
}

__attribute__((noinline)) int work(int x)
{
    return twice(ident(x)) + 1;
}

int (*volatile keep_ident)(int) = ident;

int main(int argc, char **argv)
{
    (void)argv;
    int s = 0;
    for (int i = 0; i < argc * 100; i++)
        s += work(i) + keep_ident(i);
    return s & 1;
}
