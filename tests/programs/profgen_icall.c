/* profgen_icall.c — fixture of test_tailcall: an indirect call with several
 * targets, one of which (ic_a) reaches ic_leaf only through a tail call, as
 * SQLite's VDBE calls its aggregate steps through a function pointer and
 * groupConcatStep tail-calls enlargeAndAppend. ic_c tail-calls ic_leaf as
 * well: with both targets seen the chain is ambiguous. ic_d, called
 * directly, tail-calls ic_leaf from two places (as Lua's luaH_resizearray
 * jumps to luaH_resize). ic_e ends in a call through a pointer (a tail
 * call by an indirect jump, as SQLite's getCellInfo ends in
 * pPage->xParseCell(...)); ic_s switches through a jump table. */
__attribute__((noinline)) int ic_leaf(int x)
{
    return x * 3 + 1;
}

__attribute__((noinline)) int ic_a(int x)
{
    return ic_leaf(x + 1);
}

__attribute__((noinline)) int ic_b(int x)
{
    return x - 1;
}

__attribute__((noinline)) int ic_c(int x)
{
    return ic_leaf(x ^ 5);
}

__attribute__((noinline)) int ic_sink(int x)
{
    return x ^ 9;
}

__attribute__((noinline)) int ic_d(int x)
{
    if (x & 1)
        return ic_leaf(ic_sink(x));
    return ic_leaf(x + 7);
}

int (*volatile ic_table[3])(int) = {ic_a, ic_b, ic_c};

__attribute__((noinline)) int ic_e(int x)
{
    int (*f)(int) = ic_table[x % 3];
    return f(x + 2);
}

volatile int ic_store;

__attribute__((noinline)) int ic_s(int x)
{
    switch (x & 7) {
    case 0: ic_store = x; break;
    case 1: ic_store = x * 3; break;
    case 2: ic_store = x ^ 0x55; break;
    case 3: ic_store = x + 11; break;
    case 4: ic_store = x - 7; break;
    case 5: ic_store = x << 2; break;
    case 6: ic_store = x | 0x100; break;
    default: ic_store = 0; break;
    }
    return ic_store;
}

int main(int argc, char **argv)
{
    (void)argv;
    int s = 0;
    for (int i = 0; i < argc * 300; i++)
        s += ic_table[i % 3](i) + ic_d(i) + ic_e(i) + ic_s(i);
    return s & 1;
}
