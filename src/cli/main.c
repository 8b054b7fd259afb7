/* main.c — `pgokit <command> ...`: dispatch to src/cli/cmd_<command>.c.
 * The command table is generated at build time from the cmd_*.c files. */
#include "cli/cli.h"
#include "version.h" /* generated: PK_VERSION, from VERSION and git (mk/install.mk) */

#include <signal.h>
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
    fprintf(to, "usage: pgokit <command> [options]\n"
                "       pgokit help [COMMAND]\n"
                "       pgokit --version\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        char name[64];
        snprintf(name, sizeof name, "%s", commands[i].name);
        for (char *c = name; *c; c++)
            if (*c == '_')
                *c = '-';
        fprintf(to, "  %-10s %s\n", name, commands[i].summary);
    }
    fprintf(to, "\n`pgokit help <command>` (or `pgokit <command> --help`) describes a command.\n");
}

/* A command by name; '-' and '_' are the same ("llvm-profgen" is the
 * command of cmd_llvm_profgen.c). */
static const struct command *find(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        const char *a = name, *b = commands[i].name;
        while (*a && (*a == *b || (*a == '-' && *b == '_')))
            a++, b++;
        if (!*a && !*b)
            return &commands[i];
    }
    return NULL;
}

/* A user's kill, ^C or a closed terminal ends the command where it is: the
 * output it was writing is not committed, and its temporary goes too. */
static void on_fatal_signal(int sig)
{
    pk_out_remove_temporaries();
    raise(sig); /* delivered, with the default action, when the handler returns */
}

static void remove_temporaries_on_signals(void)
{
    static const int sigs[] = {SIGTERM, SIGINT, SIGHUP};
    struct sigaction act, old;
    memset(&act, 0, sizeof act);
    act.sa_handler = on_fatal_signal;
    act.sa_flags = SA_RESETHAND;
    sigfillset(&act.sa_mask);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        /* one the shell made ignored (nohup, a background job) stays so */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
            sigaction(sigs[i], &act, NULL);
    }
}

int main(int argc, char **argv)
{
    remove_temporaries_on_signals();
    /* run through a link named like a tool pgokit stands in for: that
     * tool's command line */
    const char *base = strrchr(argv[0], '/');
    base = base ? base + 1 : argv[0];
    if (!strcmp(base, "llvm-profgen") || !strcmp(base, "create_llvm_prof") || !strcmp(base, "create_gcov"))
        return find(base)->run(argc, argv);
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V") || !strcmp(argv[1], "version")) {
        printf("pgokit %s\n", PK_VERSION);
        return 0;
    }
    if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        if (argc < 3) {
            usage(stdout);
            return 0;
        }
        /* `pgokit help CMD` is `pgokit CMD --help` */
        const struct command *c = find(argv[2]);
        if (!c) {
            fputs("pgokit help: unknown command '", stderr);
            put_escaped(argv[2]);
            fputs("'\n", stderr);
            usage(stderr);
            return 2;
        }
        char *av[] = {argv[2], (char *)"--help", NULL};
        return c->run(2, av);
    }
    const struct command *c = find(argv[1]);
    if (c)
        return c->run(argc - 1, argv + 1);
    fputs("pgokit: unknown command '", stderr);
    put_escaped(argv[1]);
    fputs("'\n", stderr);
    usage(stderr);
    return 2;
}
