// profgen_global_init.cc — hot work in C++ global initialisers: clang makes
// one __cxx_global_var_init per initialised global and inlines them into
// _GLOBAL__sub_I_<file>; several share one canonical name, so profile
// generators leave their profiles out (inlinees included).
#include <cstdlib>

volatile int sink;

static int heavy(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++) {
        s += i * i;
        sink = s;
    }
    return s;
}

int g1 = heavy(200000);
int g2 = heavy(100000);

__attribute__((noinline)) int work(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += i ^ sink;
    return s;
}

int main(int argc, char **argv)
{
    return work(argc > 1 ? atoi(argv[1]) : 300000) == 42;
}
