/* cli_debug.c — the debug-information options every command that opens a
 * binary shares, and the line saying which debug file was used. */
#include "cli/cli.h"

/* `arg` is the option as written: "--NAME", "--NAME=VALUE" or "NAME" (getopt). */
static bool is_option(const char *arg, const char *name)
{
    if (!strncmp(arg, "--", 2))
        arg += 2;
    size_t n = strcspn(arg, "=");
    return n == strlen(name) && !strncmp(arg, name, n);
}

int pk_cli_debug_option(pk_cli_debug *d, const char *cmd, const char *name, const char *val)
{
    if (is_option(name, "debug-binary")) {
        d->opts.debug_binary = val;
    } else if (is_option(name, "dwp")) {
        d->opts.dwp = val;
    } else if (is_option(name, "debug-dir")) {
        if (d->opts.ndebug_dirs == PK_CLI_DEBUG_DIRS_MAX) {
            pk_cli_usage(cmd, "at most %d --debug-dir", PK_CLI_DEBUG_DIRS_MAX);
            return -1;
        }
        d->dirs[d->opts.ndebug_dirs++] = val;
        d->opts.debug_dirs = d->dirs;
    } else {
        return 0;
    }
    return 1;
}

const pk_debug_opts *pk_cli_debug_opts(pk_cli_debug *d) { return &d->opts; }

void pk_cli_debug_note(const char *cmd, const pk_binary *bin)
{
    if (bin)
        fprintf(stderr, "pgokit %s: debug info: %s\n", cmd, pk_binary_debug_origin(bin));
}
