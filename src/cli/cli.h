/* cli.h — what every subcommand file (src/cli/cmd_<name>.c) provides, and the
 * small helpers they share. Subcommands parse arguments, wire library stages
 * together and print; the library itself never prints or exits. */
#ifndef PK_CLI_H
#define PK_CLI_H

#include "common/pk_common.h"
#include <stdio.h>

/* cmd_<name>.c defines:
 *   const char pk_cmd_<name>_summary[] = "one line for `pgokit help`";
 *   int pk_cmd_<name>(int argc, char **argv);   // argv[0] is "<name>"
 * and returns the process exit status (0 ok, 1 failure, 2 usage). */
#define PK_COMMAND(name)                                   \
    extern const char pk_cmd_##name##_summary[];           \
    int pk_cmd_##name(int argc, char **argv);
#include "commands.h"
#undef PK_COMMAND

/* Prints "pgokit <cmd>: <message>" to stderr; returns 1 for `return cli_fail(...)`. */
int pk_cli_fail(const char *cmd, const pk_err *err);
/* Prints a usage problem to stderr; returns 2. */
int pk_cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Before any work: 1 (with a message) when the output `out` is the same
 * file as an argument of the command (its inputs are all named there: the
 * binary, the profiles, the store, the recorded program), else 0. `out` is
 * argv[i] or points into it (--output=FILE); "-" or NULL is never checked. */
int pk_cli_check_output(const char *cmd, const char *out, int argc, char **argv);
/* The same for one input named elsewhere (a list file, a directory's files). */
int pk_cli_check_output_input(const char *cmd, const char *out, const char *input);
/* A name from a file or a database (a function, a host, a binary) as shown
 * to a person: control bytes, escape sequences, C1 controls and bidi
 * overrides escaped as \xNN, other UTF-8 kept. Returns buf (cut to cap). */
const char *pk_cli_name(char *buf, size_t cap, const char *s);
/* Writes text (lines of names, as `show --counts` prints) to `to`, each
 * line escaped as pk_cli_name does when `to` is a terminal; as is otherwise
 * (a file or a pipe gets the exact bytes). */
void pk_cli_put_lines(FILE *to, const char *text, size_t len);
/* AutoFDO's command lines (create_llvm_prof; create_gcov when gcov), run
 * as `pgokit profgen`: see cmd_create_llvm_prof.c. */
int pk_cli_autofdo(const char *cmd, bool gcov, int argc, char **argv);
/* True when progress output is wanted: stderr is a terminal and not quiet. */
bool pk_cli_progress_wanted(bool quiet);

/* The options that say where a binary's debug information is, shared by
 * every command that opens a binary (cli_debug.c):
 *   --debug-binary F   --debug-dir DIR (repeatable)   --dwp F */
#include "binary/binary.h"

#define PK_CLI_DEBUG_DIRS_MAX 16
typedef struct pk_cli_debug {
    pk_debug_opts opts;
    const char *dirs[PK_CLI_DEBUG_DIRS_MAX];
} pk_cli_debug;

#define PK_CLI_DEBUG_HELP                                                                    \
    "  --debug-binary F    debug information (symbols, DWARF) from F, e.g. objcopy\n"       \
    "                      --only-keep-debug output; its build-id must match the binary's\n" \
    "  --debug-dir DIR     look for debug files under DIR as under /usr/lib/debug\n"         \
    "                      (DIR/.build-id/xx/yyyy.debug, DIR/<binary's dir>/<debuglink>),\n" \
    "                      before /usr/lib/debug; repeatable. Without --debug-binary, the\n" \
    "                      binary's own DWARF, else a file found by build-id, by\n"          \
    "                      .gnu_debuglink (CRC checked) or through debuginfod\n"             \
    "                      (DEBUGINFOD_URLS) is used\n"                                      \
    "  --dwp F             the split-DWARF package (.dwp) of the binary\n"

/* If `name` (as written: "--debug-dir", "--debug-dir=DIR", or getopt's
 * "debug-dir") is one of the options above, records `val` and returns 1; 0
 * if it is not one; -1 (usage printed) when there are too many --debug-dir. */
int pk_cli_debug_option(pk_cli_debug *d, const char *cmd, const char *name, const char *val);
/* The options, NULL when none was given (the default search). */
const pk_debug_opts *pk_cli_debug_opts(pk_cli_debug *d);
/* "pgokit CMD: debug info: ..." on stderr: which debug file the output came
 * from (never inside the output itself). */
void pk_cli_debug_note(const char *cmd, const pk_binary *bin);

#endif
