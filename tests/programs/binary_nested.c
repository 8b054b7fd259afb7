/* binary_nested.c — fixture of test_binary_dwarf (gcc only): a GNU C nested
 * function, whose DW_TAG_subprogram is a child of its enclosing function's
 * DIE while its code lies outside the enclosing function's range. */
__attribute__((noinline)) int nest_outer(int n)
{
    __attribute__((noinline)) int nest_inner(int x)
    {
        return x * n + (x >> 2);
    }
    int s = 0;
    for (int i = 0; i < n; i++)
        s += nest_inner(i);
    return s;
}

int main(int argc, char **argv)
{
    (void)argv;
    return nest_outer(argc + 3) & 1;
}
