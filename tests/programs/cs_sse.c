/* cs_sse.c — fixture of test_probe_cs: SSE2 intrinsics inlined into
 * match_mask. clang's headers declare them __nodebug__, so their pseudo-
 * probes have no inline stack: .pseudo_probe gets top-level records of
 * _mm_* functions that have no symbol, at match_mask's addresses. */
#include <emmintrin.h>

__attribute__((noinline)) int match_mask(const unsigned char *p, unsigned char tag)
{
    __m128i v = _mm_loadu_si128((const __m128i *)p);
    return _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8((char)tag)));
}

int main(int argc, char **argv)
{
    (void)argv;
    static unsigned char buf[4096];
    int s = 0;
    for (int i = 0; i < 4096; i++)
        buf[i] = (unsigned char)(i * 7);
    for (int r = 0; r < argc * 1000; r++)
        for (int i = 0; i + 16 <= 4096; i += 16)
            s += __builtin_popcount(match_mask(buf + i, (unsigned char)r));
    return s & 1;
}
