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
/* AutoFDO's command lines (create_llvm_prof; create_gcov when gcov), run
 * as `pgokit profgen`: see cmd_create_llvm_prof.c. */
int pk_cli_autofdo(const char *cmd, bool gcov, int argc, char **argv);
/* True when progress output is wanted: stderr is a terminal and not quiet. */
bool pk_cli_progress_wanted(bool quiet);

#endif
