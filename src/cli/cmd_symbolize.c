/* cmd_symbolize.c — `pgokit symbolize`: addresses → inline frames, printed
 * like `llvm-symbolizer --inlines --no-demangle` (LLVM or JSON style). The
 * debugging window onto src/binary/ and what the e2e tests compare with the
 * oracle. */
#include "binary/binary.h"
#include "cli/cli.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

const char pk_cmd_symbolize_summary[] = "print the inline frames of addresses (like llvm-symbolizer --inlines)";

static void usage(FILE *to)
{
    fprintf(to,
            "usage: pgokit symbolize --binary FILE [--debug-binary F] [--debug-dir D] [--dwp F]\n"
            "                        [options] [ADDR...]\n"
            "  Addresses are ELF virtual addresses (0x-prefixed hex, or decimal); without ADDR\n"
            "  arguments they are read from stdin, one per line.\n"
            "  --output-style=LLVM|JSON  output like llvm-symbolizer's (default LLVM);\n"
            "                            `none` prints nothing (timing)\n"
            "  --verbose                 LLVM style with start line, discriminator, column\n"
            "  --dwarf-only              outermost name from DWARF, as llvm-profgen sees it\n"
            "                            (default: the symbol table's, as llvm-symbolizer does)\n"
            "  --functions               list the DWARF functions instead: one line per\n"
            "                            address range, \"begin end name start_line\"\n"
            "  --prepare                 index every unit up front (timing)\n"
            "  --stats                   print timing to stderr\n"
            "  -q, --quiet               no \"debug info:\" line on stderr\n"
            PK_CLI_DEBUG_HELP);
}

static void json_str(FILE *o, const char *s)
{
    putc_unlocked('"', o);
    while (s && *s) {
        size_t n = 0; /* copy runs that need no escaping in one write */
        while (s[n] && s[n] != '"' && s[n] != '\\' && (unsigned char)s[n] >= 0x20)
            n++;
        fwrite_unlocked(s, 1, n, o);
        s += n;
        if (!*s)
            break;
        unsigned char ch = (unsigned char)*s++;
        if (ch == '"' || ch == '\\')
            fprintf(o, "\\%c", ch);
        else
            fprintf(o, "\\u%04x", ch);
    }
    putc_unlocked('"', o);
}

typedef struct opts {
    int json, verbose, dwarf_only, none;
    const char *module;
} opts;

static int emit(FILE *o, const opts *op, pk_elf *elf, uint64_t addr, const pk_frames *fr)
{
    pk_frame one;
    const pk_frame *frames = fr->frames;
    size_t n = fr->count;
    if (n == 0) {
        memset(&one, 0, sizeof one);
        frames = &one;
        n = 1;
    }
    /* llvm-symbolizer replaces the outermost frame's name (and start address)
     * with the symbol table's. */
    const char *outer_name = frames[n - 1].func;
    uint64_t outer_start = frames[n - 1].start_addr;
    bool outer_has_start = frames[n - 1].has_start_addr;
    const char *outer_file = frames[n - 1].file;
    if (!op->dwarf_only) {
        const char *nm, *file;
        uint64_t st;
        if (pk_elf_symbolizer_name(elf, addr, &nm, &st, &file)) {
            outer_name = nm;
            outer_start = st;
            outer_has_start = true;
            if (!outer_file && file && *file)
                outer_file = file;
        }
    }
    if (op->json) {
        fprintf(o, "{\"Address\":\"0x%llx\",\"ModuleName\":", (unsigned long long)addr);
        json_str(o, op->module);
        fputs(",\"Symbol\":[", o);
    }
    for (size_t i = 0; i < n; i++) {
        const pk_frame *f = &frames[i];
        const char *name = i == n - 1 ? outer_name : f->func;
        uint64_t start = i == n - 1 ? outer_start : f->start_addr;
        bool has_start = i == n - 1 ? outer_has_start : f->has_start_addr;
        const char *file = i == n - 1 ? outer_file : f->file;
        if (op->json) {
            if (i)
                fputc(',', o);
            fprintf(o, "{\"Column\":%u,\"Discriminator\":%u,\"FileName\":", f->column, f->discriminator);
            json_str(o, file);
            fputs(",\"FunctionName\":", o);
            json_str(o, name);
            fprintf(o, ",\"Line\":%u,\"StartAddress\":", f->line);
            if (has_start)
                fprintf(o, "\"0x%llx\"", (unsigned long long)start);
            else
                fputs("\"\"", o);
            fputs(",\"StartFileName\":", o);
            json_str(o, f->start_file);
            fprintf(o, ",\"StartLine\":%u}", f->start_line);
        } else if (op->verbose) {
            fprintf(o, "%s\n", name ? name : "??");
            fprintf(o, "  Filename: %s\n", file ? file : "??");
            if (f->start_file && *f->start_file)
                fprintf(o, "  Function start filename: %s\n", f->start_file);
            if (f->start_line)
                fprintf(o, "  Function start line: %u\n", f->start_line);
            if (has_start)
                fprintf(o, "  Function start address: 0x%llx\n", (unsigned long long)start);
            fprintf(o, "  Line: %u\n  Column: %u\n", f->line, f->column);
            if (f->discriminator)
                fprintf(o, "  Discriminator: %u\n", f->discriminator);
        } else {
            fprintf(o, "%s\n%s:%u:%u\n", name ? name : "??", file ? file : "??", f->line, f->column);
        }
    }
    if (op->json)
        fputs("]}\n", o);
    else
        fputc('\n', o);
    return 0;
}

static int parse_addr(const char *s, uint64_t *out)
{
    while (*s == ' ' || *s == '\t')
        s++;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || end == s)
        return -1;
    while (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r')
        end++;
    if (*end)
        return -1;
    *out = v;
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int pk_cmd_symbolize(int argc, char **argv)
{
    const char *bin_path = NULL;
    pk_cli_debug dbg = {0};
    opts op = {0};
    int quiet = 0, prepare = 0, stats = 0, functions = 0, first_addr = argc;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if ((!strcmp(a, "--binary") || !strcmp(a, "--obj")) && i + 1 < argc) {
            bin_path = argv[++i];
        } else if (!strncmp(a, "--binary=", 9) || !strncmp(a, "--obj=", 6)) {
            bin_path = strchr(a, '=') + 1;
        } else if ((!strcmp(a, "--debug-binary") || !strcmp(a, "--debug-dir") || !strcmp(a, "--dwp")) &&
                   i + 1 < argc) {
            if (pk_cli_debug_option(&dbg, "symbolize", a, argv[i + 1]) < 0)
                return 2;
            i++;
        } else if (!strncmp(a, "--debug-binary=", 15) || !strncmp(a, "--debug-dir=", 12) ||
                   !strncmp(a, "--dwp=", 6)) {
            if (pk_cli_debug_option(&dbg, "symbolize", a, strchr(a, '=') + 1) < 0)
                return 2;
        } else if (!strcmp(a, "--output-style=JSON")) {
            op.json = 1;
        } else if (!strcmp(a, "--output-style=LLVM")) {
            op.json = 0;
        } else if (!strcmp(a, "--output-style=none")) {
            op.none = 1; /* symbolize, print nothing: for timing the library */
        } else if (!strcmp(a, "--verbose")) {
            op.verbose = 1;
        } else if (!strcmp(a, "--dwarf-only")) {
            op.dwarf_only = 1;
        } else if (!strcmp(a, "--functions")) {
            functions = 1;
        } else if (!strcmp(a, "--prepare")) {
            prepare = 1;
        } else if (!strcmp(a, "--stats")) {
            stats = 1;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = 1;
        } else if (!strcmp(a, "--inlines") || !strcmp(a, "--no-demangle")) {
            /* always on: accepted for command-line compatibility */
        } else if (a[0] == '-' && a[1] == '-') {
            return pk_cli_usage("symbolize", "unknown option %s", a);
        } else {
            first_addr = i;
            break;
        }
    }
    if (!bin_path)
        return pk_cli_usage("symbolize", "--binary is required");
    op.module = bin_path;
    double t0 = now_s();
    pk_err err;
    pk_binary *bin;
    if (pk_binary_open_opts(&bin, bin_path, &dbg.opts, &err) < 0)
        return pk_cli_fail("symbolize", &err);
    if (!quiet)
        pk_cli_debug_note("symbolize", bin);
    pk_symbolizer *sym;
    if (pk_binary_symbolizer(bin, &sym, &err) < 0 || (prepare && pk_symbolizer_prepare(sym, &err) < 0)) {
        pk_binary_close(bin);
        return pk_cli_fail("symbolize", &err);
    }
    double t1 = now_s();
    static char obuf[1 << 16];
    setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
    if (functions) { /* the DWARF function list: "begin end name start_line" per range */
        const pk_dwarf_func *f;
        size_t n;
        int frc = 0;
        if (pk_dwarf_funcs(sym, &f, &n, &err) < 0)
            frc = pk_cli_fail("symbolize", &err);
        for (size_t i = 0; !frc && i < n; i++)
            for (uint32_t r = 0; r < f[i].nranges; r++)
                printf("0x%llx 0x%llx %s %u\n", (unsigned long long)f[i].ranges[r].begin,
                       (unsigned long long)f[i].ranges[r].end, f[i].name, f[i].start_line);
        fflush(stdout);
        pk_binary_close(bin);
        return frc;
    }
    pk_elf *elf = pk_binary_elf(bin);
    int rc = 0;
    size_t naddr = 0;
    char *line = NULL;
    size_t cap = 0;
    for (int i = first_addr;; i++) {
        const char *text;
        if (first_addr < argc) {
            if (i >= argc)
                break;
            text = argv[i];
        } else {
            if (getline(&line, &cap, stdin) < 0)
                break;
            text = line;
        }
        uint64_t addr;
        if (parse_addr(text, &addr) < 0) {
            fprintf(stderr, "pgokit symbolize: not an address: %s\n", text);
            rc = 1;
            continue;
        }
        pk_frames fr;
        if (pk_symbolize(sym, addr, &fr, &err) < 0) {
            pk_cli_fail("symbolize", &err);
            rc = 1;
            break;
        }
        if (!op.none)
            emit(stdout, &op, elf, addr, &fr);
        naddr++;
    }
    free(line);
    fflush(stdout);
    if (stats)
        fprintf(stderr, "pgokit symbolize: open %.3f s, %zu addresses in %.3f s\n", t1 - t0, naddr,
                now_s() - t1);
    pk_binary_close(bin);
    return rc;
}
