/* profgen_calls.c — fixture of test_profgen_line: a call, a tail call and a
 * loop, small enough to reason about instruction by instruction. */
__attribute__((noinline)) int pg_leaf(int x)
{
    return x * 3 + 1;
}

__attribute__((noinline)) int pg_tail(int x)
{
    return pg_leaf(x + 1);
}

int main(int argc, char **argv)
{
    int s = 0;
    for (int i = 0; i < argc * 100; i++)
        s += pg_tail(i);
    return s & 1;
}
