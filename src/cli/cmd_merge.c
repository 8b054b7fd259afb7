/* cmd_merge.c — `pgokit merge A B ... -o OUT`: adds sample profiles
 * (optionally weighted), like `llvm-profdata merge --sample`, and writes the
 * result in any format. Inputs may mix formats; probe/non-probe and
 * CS/non-CS inputs are refused. */
#include "aggregate/aggregate.h"
#include "cli/cli.h"
#include "cli/temporal_cli.h"
#include "format/format.h"
#include "profile/profile.h"
#include "unwind/rawprof2.h"

#include <stdlib.h>

const char pk_cmd_merge_summary[] = "merge sample profiles (text, binary, extbinary, gcc) into one";

static void usage(FILE *to)
{
    fprintf(to,
            "usage: pgokit merge PROFILE... -o OUT [options]\n"
            "  -o, --output FILE          output profile\n"
            "  --format F                 text, binary, extbinary (default), gcc\n"
            "  --text / --extbinary / --binary / --gcc   shorthands for --format\n"
            "  -w, --weighted-input W,FILE  add FILE with every count multiplied by W (integer >= 1)\n"
            "  -f, --input-files LIST     more inputs, one a line: FILE or W,FILE ('#' comments)\n"
            "  --use-md5                  extbinary: store MD5 GUIDs instead of names\n"
            "  --compress, --compress-all-sections  extbinary: zlib-compress every section\n"
            "  --prof-sym-list FILE       extbinary: add FILE's names (one a line) to the profile symbol list\n"
            "  --drop-profile-symbol-list do not keep the inputs' profile symbol lists\n"
            "  -q, --quiet                no warnings (dropped functions)\n"
            "  --sample                   accepted and ignored (llvm-profdata's spelling)\n"
            "--binary is --format binary for sample profiles; for temporal profiles it names the\n"
            "profiled binary (below). Temporal merging is chosen by --temporal or by an input that\n"
            "is a temporal profile (or a directory of them).\n"
            "Raw profiles (profgen --raw-only, store pull) merge into a raw profile: counts add up.\n"
            "\n");
    pk_cli_merge_temporal_usage(to);
}

struct input {
    const char *path;
    uint64_t weight;
    char *owned;          /* path copy for inputs listed in --input-files */
};

static int parse_weighted(const char *v, struct input *in)
{
    const char *comma = strchr(v, ',');
    if (!comma || comma == v || !comma[1])
        return -1;
    char *end;
    unsigned long long w = strtoull(v, &end, 10);
    if (end != comma || w < 1)
        return -1;
    in->weight = w;
    in->path = comma + 1;
    return 0;
}

/* Whether path is a raw profile (profgen --raw-only); unreadable: no. */
static bool is_rawprof(const char *path)
{
    pk_mapped_file f;
    pk_err e;
    if (pk_file_map(&f, path, &e))
        return false;
    bool raw = pk_file_identify(f.data, f.size) == PK_KIND_RAWPROF;
    pk_file_unmap(&f);
    return raw;
}

/* Raw profiles merge into a raw profile: counts and statistics add up (per
 * calling context), the first input's binary path is kept (what `pgokit
 * store pull` writes too). The output has the newest version among the
 * inputs: version-1 inputs alone give the same bytes as before. */
static int merge_raw(const struct input *ins, size_t nin, const char *out)
{
    pk_err err = {{0}};
    pk_rawprof2 dst, src;
    for (size_t i = 0; i < nin; i++)
        if (ins[i].weight != 1)
            return pk_cli_usage("merge", "%s: raw profiles are merged without weights", ins[i].path);
    if (pk_rawprof2_read(&dst, ins[0].path, &err))
        return pk_cli_fail("merge", &err);
    int rc = 0;
    for (size_t i = 1; i < nin && !rc; i++) {
        if (!is_rawprof(ins[i].path)) {
            pk_err_set(&err, "%s: not a raw profile (the first input is one: inputs cannot mix raw and "
                             "symbolized profiles)", ins[i].path);
            rc = pk_cli_fail("merge", &err);
        } else if (pk_rawprof2_read(&src, ins[i].path, &err)) {
            rc = pk_cli_fail("merge", &err);
        } else {
            if (pk_rawprof2_merge(&dst, &src, &err)) {
                pk_err_prefix(&err, "%s", ins[i].path);
                rc = pk_cli_fail("merge", &err);
            }
            pk_rawprof2_free(&src);
        }
    }
    if (!rc && (dst.version == 1 ? pk_rawprof_write(&dst.flat, out, &err) : pk_rawprof2_write(&dst, out, &err)))
        rc = pk_cli_fail("merge", &err);
    pk_rawprof2_free(&dst);
    return rc;
}

/* --prof-sym-list: one name per line (blank lines ignored). */
static int add_symbols(pk_profset *ps, const char *path, pk_err *err)
{
    pk_mapped_file f;
    if (pk_file_map(&f, path, err))
        return -1;
    const char *p = (const char *)f.data, *end = p + f.size;
    int rc = 0;
    while (p < end && !rc) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        size_t len = (size_t)(le - p);
        if (len && p[len - 1] == '\r')
            len--;
        pk_name_id id;
        if (len)
            rc = pk_profset_intern(ps, p, len, &id, err) || pk_profset_add_symbol(ps, id, err) ? -1 : 0;
        p = nl ? nl + 1 : end;
    }
    pk_file_unmap(&f);
    return rc;
}

/* --input-files: one input a line, "W,FILE" or "FILE"; '#' comments and
 * blank lines ignored (llvm-profdata's format). */
static int read_input_list(const char *path, struct input **ins, size_t *nin, size_t *cap, pk_err *err)
{
    pk_mapped_file f;
    if (pk_file_map(&f, path, err))
        return -1;
    const char *p = (const char *)f.data, *end = p + f.size;
    int rc = 0;
    for (size_t lineno = 1; p < end && !rc; lineno++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        while (p < le && (*p == ' ' || *p == '\t'))
            p++;
        size_t len = (size_t)(le - p);
        while (len && (p[len - 1] == ' ' || p[len - 1] == '\t' || p[len - 1] == '\r'))
            len--;
        if (len && *p != '#') {
            if (*nin == *cap) {
                struct input *n = pk_xrealloc_array(*ins, *cap * 2 + 8, sizeof **ins);
                if (!n) {
                    rc = pk_err_set(err, "out of memory");
                    break;
                }
                *ins = n;
                *cap = *cap * 2 + 8;
            }
            struct input *in = &(*ins)[*nin];
            memset(in, 0, sizeof *in);
            in->owned = strndup(p, len);
            if (!in->owned) {
                rc = pk_err_set(err, "out of memory");
                break;
            }
            (*nin)++;
            in->path = in->owned;
            in->weight = 1;
            if (strchr(in->owned, ',') && parse_weighted(in->owned, in))
                rc = pk_err_set(err, "%s: line %zu: expected 'WEIGHT,FILE' or 'FILE'", path, lineno);
        }
        p = nl ? nl + 1 : end;
    }
    pk_file_unmap(&f);
    return rc;
}

int pk_cmd_merge(int argc, char **argv)
{
    if (pk_cli_wants_temporal(argc, argv)) /* raw/indexed temporal profiles: temporal_cli.c */
        return pk_cli_merge_temporal(argc, argv);
    const char *out = NULL, *symlist = NULL;
    int drop_syms = 0, quiet = 0;
    pk_write_opts o = {PK_FMT_EXTBINARY, 0, 0, 0};
    size_t cap = (size_t)argc + 1, nin = 0;
    struct input *ins = calloc(cap, sizeof *ins);
    const char *listfile = NULL;
    int rc = 0;
    if (!ins)
        return 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            free(ins);
            return 0;
        } else if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && i + 1 < argc) {
            out = argv[++i];
        } else if (!strncmp(a, "--output=", 9)) {
            out = a + 9;
        } else if ((!strcmp(a, "--format") && i + 1 < argc) || !strncmp(a, "--format=", 9)) {
            const char *v = a[8] == '=' ? a + 9 : argv[++i];
            if (pk_prof_format_parse(v, &o.format)) {
                free(ins);
                return pk_cli_usage("merge", "unknown format '%s'", v);
            }
        } else if (!strcmp(a, "--text") || !strcmp(a, "--binary") || !strcmp(a, "--extbinary") ||
                   !strcmp(a, "--gcc")) {
            pk_prof_format_parse(a + 2, &o.format);
        } else if (((!strcmp(a, "-w") || !strcmp(a, "--weighted-input")) && i + 1 < argc) ||
                   !strncmp(a, "--weighted-input=", 17)) {
            const char *v = a[16] == '=' ? a + 17 : argv[++i];
            if (parse_weighted(v, &ins[nin])) {
                free(ins);
                return pk_cli_usage("merge", "bad weighted input '%s' (expected W,FILE with W >= 1)", v);
            }
            nin++;
        } else if ((!strcmp(a, "--prof-sym-list") && i + 1 < argc) || !strncmp(a, "--prof-sym-list=", 16)) {
            symlist = a[15] == '=' ? a + 16 : argv[++i];
        } else if (!strcmp(a, "--drop-profile-symbol-list")) {
            drop_syms = 1;
        } else if (((!strcmp(a, "-f") || !strcmp(a, "--input-files")) && i + 1 < argc) ||
                   !strncmp(a, "--input-files=", 14)) {
            listfile = a[13] == '=' ? a + 14 : argv[++i];
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = 1;
        } else if (!strcmp(a, "--sample")) {
            /* llvm-profdata's profile kind: the default here */
        } else if (!strcmp(a, "--use-md5")) {
            o.use_md5 = 1;
        } else if (!strcmp(a, "--compress") || !strcmp(a, "--compress-all-sections")) {
            o.compress = 1;
        } else if (a[0] == '-' && a[1]) {
            free(ins);
            return pk_cli_usage("merge", "unknown option '%s'", a);
        } else {
            ins[nin].path = a;
            ins[nin].weight = 1;
            nin++;
        }
    }
    pk_err err = {{0}};
    if (listfile && read_input_list(listfile, &ins, &nin, &cap, &err)) {
        for (size_t i = 0; i < nin; i++)
            free(ins[i].owned);
        free(ins);
        return pk_cli_fail("merge", &err);
    }
    if (!nin || !out) {
        for (size_t i = 0; i < nin; i++)
            free(ins[i].owned);
        free(ins);
        return pk_cli_usage("merge", !nin ? "no input profiles" : "no output (-o) given");
    }
    bool clash = pk_cli_check_output("merge", out, argc, argv);
    for (size_t i = 0; i < nin && !clash; i++) /* those of --input-files too */
        clash = pk_cli_check_output_input("merge", out, ins[i].path);
    if (clash) {
        for (size_t i = 0; i < nin; i++)
            free(ins[i].owned);
        free(ins);
        return 1;
    }
    if (is_rawprof(ins[0].path)) {
        rc = merge_raw(ins, nin, out);
        for (size_t i = 0; i < nin; i++)
            free(ins[i].owned);
        free(ins);
        return rc;
    }
    pk_profset dst;
    if (pk_profset_init(&dst, &err)) {
        for (size_t i = 0; i < nin; i++)
            free(ins[i].owned);
        free(ins);
        return pk_cli_fail("merge", &err);
    }
    for (size_t i = 0; i < nin && !rc; i++) {
        pk_profset src;
        size_t mm = 0;
        if (i == 0 && ins[0].weight == 1) { /* the first input needs no copy */
            if (pk_prof_read_file(&dst, ins[0].path, PK_FMT_AUTO, NULL, &err))
                rc = pk_cli_fail("merge", &err);
            continue;
        }
        if (pk_profset_init(&src, &err)) {
            rc = pk_cli_fail("merge", &err);
            break;
        }
        if (pk_prof_read_file(&src, ins[i].path, PK_FMT_AUTO, NULL, &err))
            rc = pk_cli_fail("merge", &err);
        else if (pk_profset_merge(&dst, &src, ins[i].weight, &mm, &err)) {
            pk_err_prefix(&err, "%s", ins[i].path);
            rc = pk_cli_fail("merge", &err);
        }
        if (mm && !quiet)
            fprintf(stderr, "pgokit merge: warning: %s: %zu function(s) dropped: CFG checksum differs from an "
                            "earlier input (profiles of different builds?)\n", ins[i].path, mm);
        pk_profset_free(&src);
    }
    if (!rc && drop_syms)
        pk_u64map_free(&dst.symbols);
    if (!rc && symlist && add_symbols(&dst, symlist, &err))
        rc = pk_cli_fail("merge", &err);
    if (!rc && pk_prof_write_file(&dst, &o, out, &err))
        rc = pk_cli_fail("merge", &err);
    pk_profset_free(&dst);
    for (size_t i = 0; i < nin; i++)
        free(ins[i].owned);
    free(ins);
    return rc;
}
