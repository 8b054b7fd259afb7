/* cmd_convert.c — `pgokit convert IN -o OUT`: one sample profile from any
 * readable format (text, binary, extbinary, gcc) to another, or samples
 * between perf.data and pprof. */
#include "cli/cli.h"
#include "format/format.h"
#include "pprof/pprof_convert.h"
#include "profile/profile.h"
#include "unwind/rawprof2.h"

#include <stdlib.h>

const char pk_cmd_convert_summary[] = "convert a sample profile (text, binary, extbinary, gcc) or samples (perf.data, pprof)";

static void usage(FILE *to)
{
    fprintf(to,
            "usage: pgokit convert IN -o OUT [--format F] [options]\n"
            "Sample profiles:\n"
            "  --format F     output format: text, binary, extbinary (default), gcc\n"
            "  --use-md5      extbinary: store MD5 GUIDs instead of names\n"
            "  --compress     extbinary: zlib-compress every section\n"
            "  --mark-preinlined  extbinary: flag the profile pre-inlined (as profgen's option:\n"
            "                 clang then uses its CSSPGO profile-use pipeline on an AutoFDO profile)\n"
            "  --mark-all-context-preinlined  also every profile and inlinee ContextShouldBeInlined\n"
            "                 (extbinary or text; llvm-profgen's option)\n"
            "  --mark-preinlined=no  the flag and every ContextShouldBeInlined cleared (profiles\n"
            "                 without calling contexts)\n"
            "Samples (perf.data is recognised by its magic, gzip-compressed pprof by gzip's):\n"
            "  perf.data -> pprof      --format pprof, or OUT ending in .pb.gz, .pprof, .pb\n"
            "  pprof -> perf.data      --format perf, or OUT ending in .data\n"

            "  --from perf|pprof  the input's kind (needed for raw, uncompressed pprof\n"
            "                 not named *.pb/*.pprof, and for standard input '-')\n"
            "  --sample-type T  pprof input: the value used as the period, by type or\n"
            "                 type/unit (default: 'samples' when present, else the first)\n"
            "  --sample-index N pprof input: the value used as the period, by position\n"
            "  --nonleaf minus-one|return  pprof input: non-leaf addresses are return\n"
            "                 address - 1 (default: Go, perf_data_converter, pgokit) or\n"
            "                 return addresses\n"
            "  --pid N        pprof input: the process id of the events (default 0)\n"
            "  --max-size N   pprof input: largest protobuf accepted, MiB (default 1024)\n"
            "Raw profiles (profgen --raw-only):\n"
            "  raw -> raw     --format raw (version 2, default: a version-1 file is upgraded)\n"
            "                 or raw-v1 (flat counts only: refused for calling contexts or IP\n"
            "                 samples, which version 1 cannot hold)\n"
            "  -q, --quiet    no summary on standard error\n");
}

static bool ends_with(const char *s, const char *suf)
{
    size_t n = strlen(s), k = strlen(suf);
    return n >= k && !strcmp(s + n - k, suf);
}

static bool pprof_name(const char *s)
{
    return ends_with(s, ".pb.gz") || ends_with(s, ".pprof") || ends_with(s, ".pb");
}

static void print_pprof_stats(const char *in, const pk_pprof_stats *s)
{
    fprintf(stderr, "convert: %s: pprof (%s%s), %llu samples: %llu used (%s/%s, total %llu)", in,
            pk_pprof_producer_name(s->producer), s->gzip ? ", gzip" : "", (unsigned long long)s->samples,
            (unsigned long long)s->samples_emitted, s->value_type, s->value_unit,
            (unsigned long long)s->value_total);
    if (s->samples_no_address || s->samples_zero || s->samples_negative)
        fprintf(stderr, ", %llu without address, %llu zero, %llu negative",
                (unsigned long long)s->samples_no_address, (unsigned long long)s->samples_zero,
                (unsigned long long)s->samples_negative);
    fprintf(stderr, "; %llu mappings (%llu build-ids), %llu locations (%llu without address)\n",
            (unsigned long long)s->mappings_emitted, (unsigned long long)s->build_ids_hex,
            (unsigned long long)s->locations, (unsigned long long)s->locations_no_address);
}

static void print_write_stats(const char *out, const pk_pprof_write_stats *w)
{
    fprintf(stderr, "convert: %s: %llu samples as %llu stacks, %llu locations, %llu mappings, %llu bytes\n", out,
            (unsigned long long)w->samples_in, (unsigned long long)w->samples, (unsigned long long)w->locations,
            (unsigned long long)w->mappings, (unsigned long long)w->bytes);
}

/* A raw profile in, of either version; version 2 (or 1) out. */
static int convert_raw(const char *in, const char *out, const char *format)
{
    bool v1 = format && !strcmp(format, "raw-v1");
    if (format && !v1 && strcmp(format, "raw"))
        return pk_cli_usage("convert", "a raw profile converts to raw or raw-v1, not '%s' (a sample profile comes "
                            "from `pgokit profgen --raw`)", format);
    pk_err err = {{0}};
    pk_rawprof2 r;
    if (pk_rawprof2_read(&r, in, &err))
        return pk_cli_fail("convert", &err);
    int rc = 0;
    if (v1 && (pk_rawprof2_has_contexts(&r) || pk_rawprof2_has_ip(&r)))
        rc = pk_cli_usage("convert", "%s holds %s, which a version-1 raw profile cannot: `pgokit profgen --binary "
                          "BIN --raw %s --raw-only --raw-version 1` makes one (flat, IP samples inferred)", in,
                          pk_rawprof2_has_contexts(&r) ? "calling contexts" : "IP observations", in);
    else if (v1 ? pk_rawprof_write(&r.flat, out, &err) : pk_rawprof2_write(&r, out, &err))
        rc = pk_cli_fail("convert", &err);
    pk_rawprof2_free(&r);
    return rc;
}

/* perf.data or pprof in; pprof or perf.data out. */
static int convert_samples(const char *in, pk_sample_file kind, const char *out, const char *format,
                           const pk_pprof_opts *ro, bool quiet)
{
    /* --format, else the output's name, else the other format */
    bool to_perf = format ? !strcmp(format, "perf")
                 : pprof_name(out) ? false : ends_with(out, ".data") ? true : kind == PK_SAMPLES_PPROF;
    if (kind == PK_SAMPLES_PERF && to_perf)
        return pk_cli_usage("convert", "perf.data converts to pprof (-o X.pb.gz or --format pprof)");
    if (kind == PK_SAMPLES_PPROF && !to_perf)
        return pk_cli_usage("convert", "pprof converts to perf.data (-o X.data or --format perf)");
    pk_err err = {{0}};
    pk_pprof_writer_opts wo = {0};
    char comment[512];
    snprintf(comment, sizeof comment, "pgokit convert from %s", in);
    wo.comment = comment;
    pk_pprof_write_stats ws;
    pk_pprof_stats rs;
    if (kind == PK_SAMPLES_PERF) {
        pk_perf_stats ps = {0};
        if (pk_perf_to_pprof(in, out, &wo, &ps, &ws, &err))
            return pk_cli_fail("convert", &err);
        if (!quiet)
            print_write_stats(out, &ws);
        return 0;
    }
    if (pk_pprof_to_perf(in, ro, out, &rs, &err))
        return pk_cli_fail("convert", &err);
    if (!quiet)
        print_pprof_stats(in, &rs);
    return 0;
}

int pk_cmd_convert(int argc, char **argv)
{
    const char *in = NULL, *out = NULL, *format = NULL, *from = NULL;
    pk_write_opts o = {PK_FMT_EXTBINARY, 0, 0, 0};
    pk_pprof_opts ro;
    pk_pprof_opts_init(&ro);
    bool quiet = false;
    int mark = PK_PREINLINED_NONE;
    bool unmark = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = NULL;
#define VALUE(name) ((!strcmp(a, name) && i + 1 < argc && (v = argv[++i])) || \
                     (!strncmp(a, name "=", strlen(name) + 1) && (v = a + strlen(name) + 1)))
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (VALUE("-o") || VALUE("--output")) {
            out = v;
        } else if (VALUE("--format")) {
            format = v;
        } else if (!strcmp(a, "--text") || !strcmp(a, "--binary") || !strcmp(a, "--extbinary") ||
                   !strcmp(a, "--gcc")) {
            format = a + 2;
        } else if (VALUE("--from")) {
            if (strcmp(v, "perf") && strcmp(v, "pprof"))
                return pk_cli_usage("convert", "--from takes perf or pprof, not '%s'", v);
            from = v;
        } else if (VALUE("--sample-type")) {
            ro.sample_type = v;
        } else if (VALUE("--sample-index")) {
            char *end;
            long n = strtol(v, &end, 10);
            if (*end || n < 0 || n > 1 << 20)
                return pk_cli_usage("convert", "bad --sample-index '%s'", v);
            ro.sample_index = (int)n;
        } else if (VALUE("--nonleaf")) {
            if (!strcmp(v, "minus-one"))
                ro.nonleaf = PK_PPROF_NONLEAF_MINUS_ONE;
            else if (!strcmp(v, "return"))
                ro.nonleaf = PK_PPROF_NONLEAF_RETURN;
            else
                return pk_cli_usage("convert", "--nonleaf takes minus-one or return, not '%s'", v);
        } else if (VALUE("--pid")) {
            char *end;
            unsigned long n = strtoul(v, &end, 10);
            if (*end || n >= UINT32_MAX)
                return pk_cli_usage("convert", "bad --pid '%s'", v);
            ro.pid = (uint32_t)n;
        } else if (VALUE("--max-size")) {
            char *end;
            unsigned long long n = strtoull(v, &end, 10);
            if (*end || !n || n > (1ull << 22))
                return pk_cli_usage("convert", "bad --max-size '%s' (MiB)", v);
            ro.max_bytes = n << 20;
        } else if (!strcmp(a, "--use-md5")) {
            o.use_md5 = 1;
        } else if (!strcmp(a, "--compress") || !strcmp(a, "--compress-all-sections")) {
            o.compress = 1;
        } else if (!strcmp(a, "--mark-preinlined") || !strcmp(a, "--mark-preinlined=yes")) {
            if (mark != PK_PREINLINED_ALL)
                mark = PK_PREINLINED_FLAG;
        } else if (!strcmp(a, "--mark-preinlined=no")) {
            unmark = true;
        } else if (!strcmp(a, "--mark-all-context-preinlined")) {
            mark = PK_PREINLINED_ALL;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = true;
        } else if (a[0] == '-' && a[1]) {
            return pk_cli_usage("convert", "unknown option '%s'", a);
        } else if (!in) {
            in = a;
        } else {
            return pk_cli_usage("convert", "more than one input given (use `pgokit merge`)");
        }
#undef VALUE
    }
    if (!in || !out)
        return pk_cli_usage("convert", !in ? "no input" : "no output (-o) given");
    if (pk_cli_check_output("convert", out, argc, argv))
        return 1;

    pk_err err = {{0}};
    if (strcmp(in, "-")) {
        pk_mapped_file f;
        if (!pk_file_map(&f, in, &err)) {
            bool raw = pk_file_identify(f.data, f.size) == PK_KIND_RAWPROF;
            pk_file_unmap(&f);
            if (raw && (mark || unmark))
                return pk_cli_usage("convert", "%s is a raw profile (samples): only a sample profile can be "
                                    "marked pre-inlined", in);
            if (raw)
                return convert_raw(in, out, format);
        }
    }
    pk_sample_file kind = PK_SAMPLES_UNKNOWN;
    if (from)
        kind = !strcmp(from, "perf") ? PK_SAMPLES_PERF : PK_SAMPLES_PPROF;
    else if (!strcmp(in, "-"))
        return pk_cli_usage("convert", "standard input needs --from perf or --from pprof");
    else if (pk_sample_file_kind(in, &kind, &err))
        return pk_cli_fail("convert", &err);
    if (kind == PK_SAMPLES_UNKNOWN && pprof_name(in))
        kind = PK_SAMPLES_PPROF;
    bool sample_out = format ? !strcmp(format, "pprof") || !strcmp(format, "perf")
                             : pprof_name(out) || (kind != PK_SAMPLES_UNKNOWN && ends_with(out, ".data"));
    if (kind != PK_SAMPLES_UNKNOWN) {
        if (mark || unmark)
            return pk_cli_usage("convert", "%s holds samples: only a sample profile can be marked pre-inlined", in);
        if (format && !sample_out)
            return pk_cli_usage("convert", "samples convert to pprof or perf, not '%s' (a sample profile comes "
                                "from `pgokit profgen`)", format);
        return convert_samples(in, kind, out, format, &ro, quiet);
    }
    if (sample_out)
        return pk_cli_usage("convert", "%s is neither perf.data nor pprof (use --from for raw protobuf)", in);
    if (format && pk_prof_format_parse(format, &o.format))
        return pk_cli_usage("convert", "unknown format '%s'", format);
    if (pk_prof_format_check_preinlined(o.format, mark, &err))
        return pk_cli_usage("convert", "%s", err.msg);

    pk_profset ps;
    if (pk_profset_init(&ps, &err))
        return pk_cli_fail("convert", &err);
    int rc = 0;
    if (pk_prof_read_file(&ps, in, PK_FMT_AUTO, NULL, &err))
        rc = pk_cli_fail("convert", &err);
    if (!rc && unmark && (ps.kind & PK_PROF_CS)) {
        pk_err_set(&err, "%s: a context-sensitive profile's pre-inlined mark holds its pre-inliner's decisions; "
                   "--mark-preinlined=no is for profiles without contexts", in);
        rc = pk_cli_fail("convert", &err);
    }
    if (!rc && unmark)
        pk_profset_unmark_preinlined(&ps);
    if (!rc && mark)
        pk_profset_mark_preinlined(&ps, mark == PK_PREINLINED_ALL);
    if (!rc && pk_prof_write_file(&ps, &o, out, &err))
        rc = pk_cli_fail("convert", &err);
    pk_profset_free(&ps);
    return rc;
}
