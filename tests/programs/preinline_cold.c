/* preinline_cold.c — main calls foo, foo calls bar, each once: in a profile
 * of one sample every call is as cold as the coldest count, so the
 * pre-inliner's call graph keeps no edge and its visiting order comes from
 * its tie rule alone (tests/e2e/profgen_llvm_preinline_order.sh). */
volatile int sink;

__attribute__((noinline)) int bar(int x) { return x * 3 + 1; }

__attribute__((noinline)) int foo(int x)
{
    int s = bar(x);
    sink = s;
    return s + 1;
}

int main(int argc, char **argv)
{
    (void)argv;
    return foo(argc) & 1;
}
