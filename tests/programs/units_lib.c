/* units_lib.c — a small, hot function in a compilation unit of its own:
 * without LTO the compiler cannot inline it into units_main.c's loop, so a
 * CSSPGO profile must keep its counts where units_lib.c's compilation finds
 * them (its own top-level profile). */
int units_step(int x) { return (x * 7 + 3) ^ (x >> 2); }
