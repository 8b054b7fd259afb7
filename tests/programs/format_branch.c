/* format_branch.c — fixture for the profile-format e2e tests: a hand-written
 * profile says the loop body's "odd" branch is hot and the "even" branch
 * cold, and the compilers must carry those counts into their IR. Line
 * numbers are part of the test: the profile uses offsets from the line of
 * `work` (keep the layout). */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) int work(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++) {
        if (i % 7 == 3)
            s += i * 3;
        else
            s -= i;
    }
    return s;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    printf("%d\n", work(n));
    return 0;
}
