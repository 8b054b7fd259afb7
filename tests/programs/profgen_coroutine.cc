// profgen_coroutine.cc — a C++20 generator coroutine: clang splits it into a
// ramp function and .resume/.destroy/.cleanup funclets, each its own DWARF
// subprogram with the coroutine's name. A profile counts them as one
// function; resuming (an indirect call to the .resume funclet) does not
// enter it.
#include <coroutine>
#include <cstdio>
#include <cstdlib>

struct gen {
    struct promise_type {
        int value = 0;
        gen get_return_object() { return gen{std::coroutine_handle<promise_type>::from_promise(*this)}; }
        std::suspend_always initial_suspend() noexcept { return {}; }
        std::suspend_always final_suspend() noexcept { return {}; }
        std::suspend_always yield_value(int v) noexcept
        {
            value = v;
            return {};
        }
        void return_void() {}
        void unhandled_exception() { std::abort(); }
    };
    std::coroutine_handle<promise_type> h;
    explicit gen(std::coroutine_handle<promise_type> c) : h(c) {}
    gen(gen &&o) noexcept : h(o.h) { o.h = {}; }
    ~gen()
    {
        if (h)
            h.destroy();
    }
    __attribute__((noinline)) bool next()
    {
        h.resume();
        return !h.done();
    }
    int value() const { return h.promise().value; }
};

__attribute__((noinline)) gen ticker(int n)
{
    for (int i = 0; i < n; i++) {
        int v = i * 7 % 13;
        if (v & 1)
            v = v * 3 + 1;
        co_yield v;
    }
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? std::atoi(argv[1]) : 1000;
    long sum = 0;
    for (int round = 0; round < 20; round++) {
        gen g = ticker(n);
        while (g.next())
            sum += g.value();
    }
    std::printf("%ld\n", sum);
    return sum == 0;
}
