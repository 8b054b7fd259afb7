/* cli_output.c — what every command that writes a file checks before it
 * does any work. */
#include "cli/cli.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void put_escaped_arg(const char *s)
{
    char buf[PK_ERR_MAX * 4 + 1];
    pk_escape(buf, sizeof buf, s, strnlen(s, PK_ERR_MAX), PK_ESC_KEEP_UTF8);
    fputs(buf, stderr);
}

/* A file named on the command line that is also the output would be
 * replaced by it before (or while) it is read: every argument, and the value
 * of every --option=VALUE, is compared with the output by device and inode.
 * An argument that is not a file (a number, a format name) matches nothing. */
int pk_cli_check_output(const char *cmd, const char *out, int argc, char **argv)
{
    if (!out || !strcmp(out, "-"))
        return 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (out >= a && out <= a + strlen(a)) /* the output's own argument */
            continue;
        const char *eq = a[0] == '-' && a[1] == '-' ? strchr(a, '=') : NULL;
        if (pk_cli_check_output_input(cmd, out, a) || (eq && pk_cli_check_output_input(cmd, out, eq + 1)))
            return 1;
    }
    return 0;
}

int pk_cli_check_output_input(const char *cmd, const char *out, const char *input)
{
    if (!out || !strcmp(out, "-") || !pk_same_file(input, out))
        return 0;
    /* writing to a character device (/dev/null, a terminal) overwrites no
     * input, even when that device is also the standard input */
    struct stat st;
    if (!stat(out, &st) && S_ISCHR(st.st_mode))
        return 0;
    fprintf(stderr, "pgokit %s: ", cmd);
    put_escaped_arg(out);
    fputs(" is the same file as the input ", stderr);
    put_escaped_arg(!strcmp(input, "-") ? "(standard input)" : input);
    fputs(": refusing to overwrite an input (nothing was written)\n", stderr);
    return 1;
}


const char *pk_cli_name(char *buf, size_t cap, const char *s)
{
    pk_escape(buf, cap, s, strlen(s), PK_ESC_KEEP_UTF8);
    return buf;
}

void pk_cli_put_lines(FILE *to, const char *text, size_t len)
{
    if (!isatty(fileno(to))) {
        fwrite(text, 1, len, to);
        return;
    }
    char buf[4096];
    while (len) {
        const char *nl = memchr(text, '\n', len);
        size_t n = nl ? (size_t)(nl - text) : len;
        pk_escape(buf, sizeof buf, text, n, PK_ESC_KEEP_UTF8);
        fputs(buf, to);
        if (nl) {
            fputc('\n', to);
            n++;
        }
        text += n;
        len -= n;
    }
}
