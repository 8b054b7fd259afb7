/* fixed_time.c — preloaded into the scoreboard's counted runs: time()
 * returns one fixed instant. Lua seeds its string hashes with time(NULL)
 * (and stack and heap addresses): run to run, one binary's count of
 * lua_bench.lua moved by 1% (12,063 to 12,192 M instructions), more than
 * the gaps between variants. With a fixed time, a fixed environment and a
 * fixed path (see variants.sh) it repeats to within a few instructions. */
#include <time.h>

time_t time(time_t *t)
{
    if (t)
        *t = 1000000000;
    return 1000000000;
}
