/* pgokit_rt.h — optional API of the pgokit instrumentation runtime.
 *
 * Build the program with `-pg -mfentry` (gcc-12 or clang-19) at compile time,
 * link WITHOUT -pg, adding libpgokit_rt.a (or -lpgokit_rt for the shared
 * runtime). Nothing has to be called: the raw profile is written at exit, on
 * SIGUSR2, or when the program calls pgokit_rt_dump().
 *
 * Environment:
 *   PGOKIT_RT_FILE    output path, "%p" → pid (default "default.pgoraw"; a
 *                     forked child whose pattern has no %p writes
 *                     "<stem>.<pid><ext>", so it never overwrites its parent's)
 *   PGOKIT_RT_MODE    "trace" (default: record first entries, then patch the
 *                     hook out), "count" (count every entry, never patch), "off"
 *   PGOKIT_RT_SIGNAL  signal that triggers a dump (default USR2; a number or a
 *                     name such as USR1; "0" or "none" disables). Installed only
 *                     when the program has no handler for it.
 *   PGOKIT_RT_PATCH   "0" keeps the hook calls (for debugging)
 *   PGOKIT_RT_PREFIX  "0": a removed hook always becomes a NOP (by default it
 *                     becomes ignored CS prefixes of the function's first
 *                     instruction when that instruction is a known non-branch,
 *                     so the entry costs no instruction)
 *   PGOKIT_RT_LEARN_CALLS  trace mode: each direct `call f` entering f's
 *                     hook is retargeted past the hook, so that call site then
 *                     costs nothing; after N (default 16) entries in a row from
 *                     callers that cannot be retargeted (indirect or tail
 *                     calls), or at once with N = 0, the hook itself is
 *                     removed
 *
 * Functions of the runtime are declared weak so a program can call them
 * conditionally: `if (pgokit_rt_dump) pgokit_rt_dump();`.
 */
#ifndef PGOKIT_RT_H
#define PGOKIT_RT_H

#ifdef __cplusplus
extern "C" {
#endif

/* Writes the raw profile now (atomically: temporary file + rename).
 * Returns 0, or -1 with errno set. */
__attribute__((weak)) int pgokit_rt_dump(void);
/* Same, to an explicit path ("%p" expanded). */
__attribute__((weak)) int pgokit_rt_dump_to(const char *path);
/* Forgets what was recorded so far (already patched sites stay patched).
 * Call it when no other thread runs instrumented code. */
__attribute__((weak)) void pgokit_rt_reset(void);

#ifdef __cplusplus
}
#endif
#endif
