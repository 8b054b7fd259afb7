/* main.c — `pgokit <command> ...`: dispatch to src/cli/cmd_<command>.c.
 * The command table is generated at build time from the cmd_*.c files. */
#include "cli/cli.h"

#include <stdarg.h>
#include <string.h>
#include <unistd.h>

struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
};

static const struct command commands[] = {
#define PK_COMMAND(name) {#name, pk_cmd_##name, pk_cmd_##name##_summary},
#include "commands.h"
#undef PK_COMMAND
};

/* Messages quote file contents and names: control bytes are escaped so
 * that nothing read from a file reaches the terminal raw. */
static void put_escaped(const char *msg)
{
    char buf[PK_ERR_MAX * 4 + 1];
    pk_escape(buf, sizeof buf, msg, strnlen(msg, PK_ERR_MAX), PK_ESC_KEEP_UTF8);
    fputs(buf, stderr);
}

int pk_cli_fail(const char *cmd, const pk_err *err)
{
    fprintf(stderr, "pgokit %s: ", cmd);
    put_escaped(err->msg);
    fputc('\n', stderr);
    return 1;
}

int pk_cli_usage(const char *cmd, const char *fmt, ...)
{
    char msg[PK_ERR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "pgokit %s: ", cmd);
    put_escaped(msg);
    fprintf(stderr, "\n(see `pgokit %s --help`)\n", cmd);
    return 2;
}

bool pk_cli_progress_wanted(bool quiet)
{
    return !quiet && isatty(2);
}

static void usage(FILE *to)
{
    fprintf(to, "usage: pgokit <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(to, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(to, "\n`pgokit <command> --help` describes a command.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(stdout);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "pgokit: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
