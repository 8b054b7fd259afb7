/* rt_temporal_driver.c — stand-alone `show`/`merge` for temporal profiles,
 * used by the rt_* e2e tests when the pgokit binary at hand does not yet
 * dispatch temporal profiles (cmd_show.c/cmd_merge.c are owned elsewhere).
 * Usage: rt-temporal-tool show|merge ARGS... (same arguments as pgokit). */
#include "cli/temporal_cli.h"
#include "common/pk_common.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int pk_cli_fail(const char *cmd, const pk_err *err);
int pk_cli_usage(const char *cmd, const char *fmt, ...);

int pk_cli_fail(const char *cmd, const pk_err *err)
{
    fprintf(stderr, "pgokit %s: %s\n", cmd, err->msg);
    return 1;
}

int pk_cli_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "pgokit %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    return 2;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "show")) return pk_cli_show_temporal(argc - 1, argv + 1);
    if (argc >= 2 && !strcmp(argv[1], "merge")) return pk_cli_merge_temporal(argc - 1, argv + 1);
    fprintf(stderr, "usage: %s show|merge ARGS...\n", argv[0]);
    return 2;
}
