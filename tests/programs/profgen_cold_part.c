/* profgen_cold_part.c — foo's rare path (a call of a cold function) goes to a
 * separate cold part, foo.cold (gcc -freorder-blocks-and-partition). The
 * test builds it through assembly with foo.cold's ".type" line removed, as
 * some compilers emit it: a sized symbol without a type, still foo's code. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline, cold)) int bar(int x) { return x % 3 ? x * 5 : x + 7; }

__attribute__((noinline)) int foo(int n)
{
    int s = 0;
    for (int i = 1; i < n; i++) {
        if (__builtin_expect(i % 5 == 0, 0))
            s += bar(i);
        s += i ^ (s >> 3);
    }
    return s;
}

int main(int argc, char **argv)
{
    int s = foo(argc > 1 ? atoi(argv[1]) : 1000);
    printf("%d\n", s);
    return s == 42;
}
