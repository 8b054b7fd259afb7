// demangle_cpp.cc — a C++ program whose hot functions have the names C++
// makes hard to read: templates (class and function, with non-type
// arguments), lambdas, a function in an anonymous namespace, a member of a
// class in one, and exceptions thrown and caught on the hot path. Built with
// -DEDITED, the sources as edited later (for `pgokit check`): parse_value
// takes a long (another linkage name: the old one is missing) and main calls
// scaled_sum<long, 4> instead of <long, 3> (a stale call site). Its output
// depends only on its argument. No iostream:
// c++filt spells the standard abbreviations (std::ostream...) out where
// __cxa_demangle does not.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <vector>

namespace {
#ifdef EDITED
typedef long value_t;
#define FIRST_SCALE 4
#else
typedef int value_t;
#define FIRST_SCALE 3
#endif

template <typename T> struct Accumulator {
    T sum{};
    __attribute__((noinline)) void add(T v) { sum += v * 3 + (v >> 1); }
};

__attribute__((noinline)) int parse_value(value_t x)
{
    if (x % 97 == 0)
        throw std::runtime_error("not a value");
    return x * 7 + 1;
}
} // namespace

namespace pipeline {
template <typename T, int Scale> __attribute__((noinline)) T scaled_sum(const std::vector<T> &v)
{
    T s = 0;
    for (const T &x : v)
        s += x * Scale;
    return s;
}

struct Stage {
    virtual ~Stage() = default;
    virtual long run(long x) const = 0;
};
struct Square final : Stage {
    __attribute__((noinline)) long run(long x) const override { return x * x % 1000003; }
};
} // namespace pipeline

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 100000;
    Accumulator<long> acc;
    Accumulator<unsigned> uacc;
    std::vector<long> v;
    int errors = 0;
    auto weigh = [&](int i) __attribute__((noinline)) {
        long w = 0;
        for (int k = 0; k < 8; k++)
            w += (i ^ k) * (k + 1);
        return w;
    };
    const pipeline::Stage *stage = new pipeline::Square;
    for (int i = 1; i <= n; i++) {
        try {
            acc.add(parse_value(i));
        } catch (const std::runtime_error &) {
            errors++;
        }
        uacc.add((unsigned)weigh(i));
        v.push_back(stage->run(i));
        if (v.size() == 64) {
            acc.add(pipeline::scaled_sum<long, FIRST_SCALE>(v));
            uacc.add((unsigned)pipeline::scaled_sum<long, 5>(v));
            v.clear();
        }
    }
    delete stage;
    printf("%ld %u %d\n", acc.sum, uacc.sum, errors);
    return 0;
}
