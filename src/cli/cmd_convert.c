/* cmd_convert.c — `pgokit convert IN -o OUT --format F`: one profile from
 * any readable format (text, binary, extbinary, gcc) to another. */
#include "cli/cli.h"
#include "format/format.h"
#include "profile/profile.h"

const char pk_cmd_convert_summary[] = "convert a sample profile between text, binary, extbinary and gcc";

static void usage(FILE *to)
{
    fprintf(to,
            "usage: pgokit convert PROFILE -o OUT [--format F] [options]\n"
            "  --format F     output format: text, binary, extbinary (default), gcc\n"
            "  --use-md5      extbinary: store MD5 GUIDs instead of names\n"
            "  --compress     extbinary: zlib-compress every section\n");
}

int pk_cmd_convert(int argc, char **argv)
{
    const char *in = NULL, *out = NULL;
    pk_write_opts o = {PK_FMT_EXTBINARY, 0, 0, 0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && i + 1 < argc) {
            out = argv[++i];
        } else if (!strncmp(a, "--output=", 9)) {
            out = a + 9;
        } else if ((!strcmp(a, "--format") && i + 1 < argc) || !strncmp(a, "--format=", 9)) {
            const char *v = a[8] == '=' ? a + 9 : argv[++i];
            if (pk_prof_format_parse(v, &o.format))
                return pk_cli_usage("convert", "unknown format '%s'", v);
        } else if (!strcmp(a, "--text") || !strcmp(a, "--binary") || !strcmp(a, "--extbinary") ||
                   !strcmp(a, "--gcc")) {
            pk_prof_format_parse(a + 2, &o.format);
        } else if (!strcmp(a, "--use-md5")) {
            o.use_md5 = 1;
        } else if (!strcmp(a, "--compress") || !strcmp(a, "--compress-all-sections")) {
            o.compress = 1;
        } else if (a[0] == '-' && a[1]) {
            return pk_cli_usage("convert", "unknown option '%s'", a);
        } else if (!in) {
            in = a;
        } else {
            return pk_cli_usage("convert", "more than one input given (use `pgokit merge`)");
        }
    }
    if (!in || !out)
        return pk_cli_usage("convert", !in ? "no input profile" : "no output (-o) given");
    pk_err err = {{0}};
    pk_profset ps;
    if (pk_profset_init(&ps, &err))
        return pk_cli_fail("convert", &err);
    int rc = 0;
    if (pk_prof_read_file(&ps, in, PK_FMT_AUTO, NULL, &err) || pk_prof_write_file(&ps, &o, out, &err))
        rc = pk_cli_fail("convert", &err);
    pk_profset_free(&ps);
    return rc;
}
