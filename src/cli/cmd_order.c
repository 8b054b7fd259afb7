/* cmd_order.c — `pgokit order`: a function order for the linker, from
 * temporal traces (Balanced Partitioning: start-up) and/or a sample profile or
 * call graph (C3: steady state). With both, the start-up block comes first and
 * the hot steady-state functions not already in it follow. */
#include "cli/cli.h"
#include "format/format.h"
#include "layout/elf_funcs.h"
#include "layout/layout.h"
#include "profile/profile.h"
#include "temporal/temporal.h"

#include <elf.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

const char pk_cmd_order_summary[] =
    "function order for lld/gold/GNU ld (Balanced Partitioning start-up, C3 steady state)";

static void usage(FILE *to)
{
    fprintf(to,
"usage: pgokit order [--temporal FILE] [--c3 PROFILE | --call-graph FILE] [options]\n"
"\n"
"inputs (at least one):\n"
"  --temporal FILE    start-up traces: an indexed temporal profile (pgokit merge\n"
"                     --temporal), plain text (one trace per line, names separated\n"
"                     by blanks, optional leading @WEIGHT), or the output of\n"
"                     `llvm-profdata show --temporal-profile-traces`\n"
"  --c3 PROFILE       steady state: a sample profile (LLVM text/binary/extbinary,\n"
"                     GCC .afdo); arcs from call targets and inlined callsites\n"
"  --call-graph FILE  steady state from text: 'node NAME SIZE SAMPLES' and\n"
"                     'arc CALLER CALLEE COUNT' lines\n"
"options:\n"
"  -o FILE            output (default: stdout)\n"
"  --format F         lld (--symbol-ordering-file, default), gold\n"
"                     (--section-ordering-file), ld-script (GNU ld -T script)\n"
"  --binary ELF       function sizes (C3 density, size-aware windows, --eval)\n"
"  --debug-binary F, --debug-dir DIR, --dwp F: where the symbols of a fully\n"
"                     stripped ELF are (see `pgokit profgen --help`); --debug-dir\n"
"                     also serves --compression-utilities\n"
"  --compression-utilities ELF\n"
"                     also order every other function of ELF by code similarity\n"
"                     (hashed 4-byte windows, as lld's BP orderer)\n"
"  --compression-startup  similarity utilities for the start-up functions too\n"
"  --size-aware       trace windows also close when executed code size doubles\n"
"  --seed N           BP random seed (default 0)\n"
"  --threads N        BP threads (default: online CPUs; same result for any N)\n"
"  --eval             print the estimated start-up pages (4 KiB) of the order\n"
"  -q, --quiet        quiet\n");
}

typedef struct order_in {
    pk_layout_names names;
    pk_vec traces;        /* pk_layout_trace (funcs owned unless from a trace set) */
    pk_layout_trace_set text_traces;
    pk_temporal_profile tp;
    bool have_tp;
    uint32_t **owned;     /* trace arrays we allocated */
    size_t n_owned;
    pk_vec sizes;         /* uint64_t per name index (0 = unknown) */
} order_in;

static int ensure_sizes(order_in *in, pk_err *err)
{
    while (in->sizes.len < in->names.n)
        if (!pk_vec_push(&in->sizes))
            return pk_err_set(err, "out of memory");
    return 0;
}

/* An indexed temporal profile starts with its magic; anything else is text. */
static bool temporal_magic(const char *path)
{
    char m[8];
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    bool yes = fread(m, 1, 8, f) == 8 && !memcmp(m, PK_TEMPORAL_INDEXED_MAGIC, 8);
    fclose(f);
    return yes;
}

static int load_temporal(order_in *in, const char *path, pk_err *err)
{
    if (temporal_magic(path)) {
        if (pk_temporal_load(&in->tp, path, err) != 0)
            return -1;
        in->have_tp = true;
        /* Index the temporal functions by their ELF symbol: that is what the
         * linkers match. Two local symbols of one name merge (lld would place
         * both at that line anyway). */
        uint32_t *map = malloc((in->tp.num_funcs ? in->tp.num_funcs : 1) * sizeof *map);
        if (!map)
            return pk_err_set(err, "out of memory");
        for (uint64_t i = 0; i < in->tp.num_funcs; i++) {
            const pk_temporal_func *f = &in->tp.funcs[i];
            int64_t id = pk_layout_names_intern(&in->names, f->symbol, strlen(f->symbol), err);
            if (id < 0 || ensure_sizes(in, err) != 0) {
                free(map);
                return -1;
            }
            map[i] = (uint32_t)id;
            if (f->size && !PK_VEC_AT(&in->sizes, uint64_t, id))
                PK_VEC_AT(&in->sizes, uint64_t, id) = f->size;
        }
        in->owned = calloc(in->tp.num_traces ? in->tp.num_traces : 1, sizeof *in->owned);
        if (!in->owned) {
            free(map);
            return pk_err_set(err, "out of memory");
        }
        for (uint64_t t = 0; t < in->tp.num_traces; t++) {
            const pk_temporal_trace *tr = &in->tp.traces[t];
            uint32_t *a = malloc((tr->len ? tr->len : 1) * sizeof *a);
            pk_layout_trace *lt = pk_vec_push(&in->traces);
            if (!a || !lt) {
                free(a);
                free(map);
                return pk_err_set(err, "out of memory");
            }
            in->owned[in->n_owned++] = a;
            for (uint32_t i = 0; i < tr->len; i++) {
                if (tr->funcs[i] >= in->tp.num_funcs) {
                    free(map);
                    return pk_err_set(err, "%s: trace %llu refers to function %u of %llu", path,
                                      (unsigned long long)t, tr->funcs[i],
                                      (unsigned long long)in->tp.num_funcs);
                }
                a[i] = map[tr->funcs[i]];
            }
            *lt = (pk_layout_trace){a, tr->len, tr->weight};
        }
        free(map);
        return 0;
    }
    if (pk_layout_read_text_traces(path, &in->names, &in->text_traces, err) != 0)
        return -1;
    for (size_t t = 0; t < in->text_traces.traces.len; t++) {
        pk_layout_trace *lt = pk_vec_push(&in->traces);
        if (!lt)
            return pk_err_set(err, "out of memory");
        *lt = PK_VEC_AT(&in->text_traces.traces, pk_layout_trace, t);
    }
    return ensure_sizes(in, err);
}

/* Calls made from f's code (its own and that of its inlined instances) are
 * arcs from `owner`; an inlined callsite also counts as an arc of its total
 * samples (the callee may be out of line in the next build). */
static int profile_arcs(const pk_profset *ps, const pk_fprof *f, uint32_t owner,
                        order_in *in, pk_layout_call_graph *g, pk_err *err)
{
    pk_fprof_view v;
    if (pk_fprof_view_build(ps, f, &v, err) != 0)
        return -1;
    int rc = 0;
    for (size_t b = 0; b < v.nbody && rc == 0; b++)
        for (uint32_t c = 0; c < v.body[b].ncalls && rc == 0; c++) {
            const char *t = pk_profset_name(ps, v.body[b].calls[c].name);
            int64_t id = pk_layout_names_intern(&in->names, t, strlen(t), err);
            pk_c3_arc *a = id < 0 ? NULL : pk_vec_push(&g->arcs);
            if (!a || pk_layout_call_graph_touch(g, (size_t)id, err) != 0) {
                rc = pk_err_set(err, "out of memory");
                break;
            }
            *a = (pk_c3_arc){owner, (uint32_t)id, v.body[b].calls[c].count};
        }
    for (size_t s = 0; s < v.nsites && rc == 0; s++) {
        const pk_fprof *callee = v.sites[s].callee;
        const char *t = pk_profset_name(ps, callee->name);
        int64_t id = pk_layout_names_intern(&in->names, t, strlen(t), err);
        pk_c3_arc *a = id < 0 ? NULL : pk_vec_push(&g->arcs);
        if (!a || pk_layout_call_graph_touch(g, (size_t)id, err) != 0) {
            rc = pk_err_set(err, "out of memory");
            break;
        }
        *a = (pk_c3_arc){owner, (uint32_t)id, callee->total};
        rc = profile_arcs(ps, callee, owner, in, g, err);
    }
    pk_fprof_view_free(&v);
    return rc;
}

static int load_sample_profile(order_in *in, const char *path, pk_layout_call_graph *g, pk_err *err)
{
    pk_profset ps;
    if (pk_profset_init(&ps, err) != 0)
        return -1;
    int rc = pk_prof_read_file(&ps, path, PK_FMT_AUTO, NULL, err);
    for (size_t i = 0; rc == 0 && i < ps.top.len; i++) {
        const pk_fprof *f = PK_VEC_AT(&ps.top, pk_fprof *, i);
        if (f->removed)
            continue;
        const char *name = pk_profset_name(&ps, f->name);
        int64_t id = pk_layout_names_intern(&in->names, name, strlen(name), err);
        if (id < 0 || pk_layout_call_graph_touch(g, (size_t)id, err) != 0) {
            rc = -1;
            break;
        }
        PK_VEC_AT(&g->samples, uint64_t, id) += f->total;
        /* A context profile: its caller frame called it (unless inlined there). */
        if (f->ctx != PK_NO_CTX && !(f->attrs & PK_ATTR_WAS_INLINED) && f->head) {
            size_t nfr;
            const pk_ctx_frame *fr = pk_profset_ctx(&ps, f->ctx, &nfr);
            if (nfr >= 2) {
                const char *cn = pk_profset_name(&ps, fr[nfr - 2].name);
                int64_t cid = pk_layout_names_intern(&in->names, cn, strlen(cn), err);
                pk_c3_arc *a = cid < 0 ? NULL : pk_vec_push(&g->arcs);
                if (!a || pk_layout_call_graph_touch(g, (size_t)cid, err) != 0) {
                    rc = pk_err_set(err, "out of memory");
                    break;
                }
                *a = (pk_c3_arc){(uint32_t)cid, (uint32_t)id, f->head};
            }
        }
        rc = profile_arcs(&ps, f, (uint32_t)id, in, g, err);
    }
    pk_profset_free(&ps);
    return rc;
}

static int parse_u64_arg(const char *s, uint64_t *v)
{
    char *end;
    if (!*s || *s == '-')
        return -1;
    unsigned long long x = strtoull(s, &end, 0);
    if (*end)
        return -1;
    *v = x;
    return 0;
}

int pk_cmd_order(int argc, char **argv)
{
    const char *cmd = "order";
    const char *temporal = NULL, *c3 = NULL, *cg_path = NULL, *out_path = NULL;
    const char *binary = NULL, *compression = NULL;
    pk_cli_debug dbg = {0};
    pk_order_format fmt = PK_ORDER_LLD;
    bool quiet = false, size_aware = false, eval = false, compression_startup = false;
    pk_layout_opts lo;
    pk_layout_opts_default(&lo);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        uint64_t v;
#define NEED_ARG() do { if (!next) return pk_cli_usage(cmd, "%s needs an argument", a); i++; } while (0)
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--temporal") || !strcmp(a, "--traces")) {
            NEED_ARG(); temporal = next;
        } else if (!strcmp(a, "--c3")) {
            NEED_ARG(); c3 = next;
        } else if (!strcmp(a, "--call-graph")) {
            NEED_ARG(); cg_path = next;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            NEED_ARG(); out_path = next;
        } else if (!strcmp(a, "--format")) {
            NEED_ARG();
            if (pk_order_format_parse(next, &fmt) != 0)
                return pk_cli_usage(cmd, "unknown format '%s' (lld, gold, ld-script)", next);
        } else if (!strcmp(a, "--binary")) {
            NEED_ARG(); binary = next;
        } else if (!strcmp(a, "--debug-binary") || !strcmp(a, "--debug-dir") || !strcmp(a, "--dwp")) {
            NEED_ARG();
            if (pk_cli_debug_option(&dbg, cmd, a, next) < 0)
                return 2;
        } else if (!strcmp(a, "--compression-utilities")) {
            NEED_ARG(); compression = next;
        } else if (!strcmp(a, "--compression-startup")) {
            compression_startup = true;
        } else if (!strcmp(a, "--size-aware")) {
            size_aware = true;
        } else if (!strcmp(a, "--eval")) {
            eval = true;
        } else if (!strcmp(a, "--seed")) {
            NEED_ARG();
            if (parse_u64_arg(next, &v) != 0)
                return pk_cli_usage(cmd, "bad seed '%s'", next);
            lo.bp.seed = v;
        } else if (!strcmp(a, "--threads")) {
            NEED_ARG();
            if (parse_u64_arg(next, &v) != 0 || v == 0 || v > 64)
                return pk_cli_usage(cmd, "bad thread count '%s' (1..64)", next);
            lo.bp.threads = (unsigned)v;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = true;
        } else {
            return pk_cli_usage(cmd, "unknown argument '%s'", a);
        }
#undef NEED_ARG
    }
    if (!temporal && !c3 && !cg_path)
        return pk_cli_usage(cmd, "give --temporal, --c3 or --call-graph");
    if (c3 && cg_path)
        return pk_cli_usage(cmd, "--c3 and --call-graph are exclusive");
    if (compression_startup && !compression)
        return pk_cli_usage(cmd, "--compression-startup needs --compression-utilities");
    if (pk_cli_check_output(cmd, out_path, argc, argv))
        return 1;

    pk_err err = {{0}};
    order_in in;
    memset(&in, 0, sizeof in);
    pk_vec_init(&in.traces, sizeof(pk_layout_trace));
    pk_vec_init(&in.sizes, sizeof(uint64_t));
    pk_vec_init(&in.text_traces.traces, sizeof(pk_layout_trace));
    pk_layout_call_graph g;
    pk_layout_call_graph_init(&g);
    pk_layout_elf celf = {0};
    pk_binary *bin = NULL, *cbin = NULL;
    pk_layout_content content = {0};
    uint32_t *startup = NULL, *steady = NULL, *final = NULL;
    size_t n_startup = 0, n_steady = 0, n_final = 0;
    const uint8_t **bytes = NULL;
    const char **names = NULL;
    int rc = 1;
    if (pk_layout_names_init(&in.names, &err) != 0)
        goto out;
    if (temporal && load_temporal(&in, temporal, &err) != 0)
        goto out;
    if (c3 && load_sample_profile(&in, c3, &g, &err) != 0)
        goto out;
    if (cg_path && pk_layout_read_call_graph(cg_path, &in.names, &g, &err) != 0)
        goto out;
    if (ensure_sizes(&in, &err) != 0)
        goto out;
    if (binary) {
        /* function sizes: symbols of executable sections (a fully stripped
         * binary's from its debug file) */
        if (pk_binary_open_opts(&bin, binary, &dbg.opts, &err) != 0)
            goto out;
        if (!quiet)
            pk_cli_debug_note(cmd, bin);
        size_t nf;
        const pk_elf *be = pk_binary_elf(bin);
        const pk_elf_symbol *fs = pk_elf_funcs(be, &nf);
        for (size_t i = 0; i < nf; i++) {
            const pk_elf_section *sec = pk_elf_symbol_section(be, fs[i].shndx);
            if (fs[i].is_alias || !fs[i].size || !sec || !(sec->flags & SHF_EXECINSTR))
                continue;
            int64_t id = pk_layout_names_find(&in.names, fs[i].name, strlen(fs[i].name));
            if (id >= 0 && !PK_VEC_AT(&in.sizes, uint64_t, id))
                PK_VEC_AT(&in.sizes, uint64_t, id) = fs[i].size;
        }
    }
    if (compression) {
        /* a relocatable object through the layout reader (section-relative
         * code), anything else through the binary stage like --binary */
        int rel = 0;
        pk_elf *probe = NULL;
        if (pk_elf_open(&probe, compression, &err) != 0)
            goto out;
        rel = pk_elf_type(probe) == ET_REL;
        pk_elf_close(probe);
        /* --debug-binary names --binary's debug file: for this ELF only when it is that binary */
        pk_debug_opts copts = dbg.opts;
        if (!binary || strcmp(binary, compression))
            copts.debug_binary = NULL;
        if (rel ? pk_layout_elf_open(&celf, compression, &err) != 0
                : pk_binary_open_opts(&cbin, compression, &copts, &err) != 0 ||
                      pk_layout_elf_from_binary(&celf, cbin, &err) != 0)
            goto out;
        if (cbin && !quiet)
            pk_cli_debug_note(cmd, cbin);
        for (size_t i = 0; i < celf.n; i++) {
            int64_t id = pk_layout_names_intern(&in.names, celf.funcs[i].name,
                                                strlen(celf.funcs[i].name), &err);
            if (id < 0 || ensure_sizes(&in, &err) != 0)
                goto out;
        }
        bytes = calloc(in.names.n ? in.names.n : 1, sizeof *bytes);
        if (!bytes) {
            pk_err_set(&err, "out of memory");
            goto out;
        }
        for (size_t i = 0; i < celf.n; i++) {
            int64_t id = pk_layout_names_find(&in.names, celf.funcs[i].name, strlen(celf.funcs[i].name));
            if (!bytes[id]) {
                bytes[id] = celf.funcs[i].bytes;
                PK_VEC_AT(&in.sizes, uint64_t, id) = celf.funcs[i].size;
            }
        }
        if (pk_layout_content_build(&content, in.names.n, bytes, in.sizes.data, &err) != 0)
            goto out;
        lo.content = &content;
        lo.content_for_startup = compression_startup;
        lo.order_rest = true;
    }
    size_t nf = in.names.n;
    if (size_aware)
        lo.sizes = in.sizes.data;
    if (pk_layout_call_graph_touch(&g, nf ? nf - 1 : 0, &err) != 0)
        goto out;
    if (in.traces.len &&
        pk_layout_startup_order(nf, in.traces.data, in.traces.len, &lo, &startup, &n_startup, &err) != 0)
        goto out;
    if (c3 || cg_path) {
        pk_c3_config cc;
        pk_c3_config_default(&cc);
        uint64_t *sz = g.sizes.data;
        for (size_t i = 0; i < nf; i++)
            if (!sz[i])
                sz[i] = PK_VEC_AT(&in.sizes, uint64_t, i);
        if (pk_c3_order(nf, sz, g.samples.data, g.arcs.data, g.arcs.len, &cc, &steady, &n_steady,
                        &err) != 0)
            goto out;
    }
    /* Start-up block first, then steady-state functions not yet placed. The
     * compression-ordered rest of the start-up run goes last. */
    final = malloc((nf ? nf : 1) * sizeof *final);
    uint8_t *placed = calloc(nf ? nf : 1, 1);
    names = malloc((nf ? nf : 1) * sizeof *names);
    if (!final || !placed || !names) {
        free(placed);
        pk_err_set(&err, "out of memory");
        goto out;
    }
    size_t n_trace_funcs = 0;
    {
        uint8_t *in_trace = calloc(nf ? nf : 1, 1);
        if (!in_trace) {
            free(placed);
            pk_err_set(&err, "out of memory");
            goto out;
        }
        for (size_t t = 0; t < in.traces.len; t++) {
            const pk_layout_trace *tr = &PK_VEC_AT(&in.traces, pk_layout_trace, t);
            if (tr->weight)
                for (size_t i = 0; i < tr->len; i++)
                    in_trace[tr->funcs[i]] = 1;
        }
        for (size_t k = 0; k < n_startup; k++)
            if (in_trace[startup[k]] && !placed[startup[k]]) {
                placed[startup[k]] = 1;
                final[n_final++] = startup[k];
                n_trace_funcs++;
            }
        for (size_t k = 0; k < n_steady; k++)
            if (!placed[steady[k]]) {
                placed[steady[k]] = 1;
                final[n_final++] = steady[k];
            }
        for (size_t k = 0; k < n_startup; k++)
            if (!placed[startup[k]]) {
                placed[startup[k]] = 1;
                final[n_final++] = startup[k];
            }
        free(in_trace);
    }
    free(placed);
    for (size_t i = 0; i < nf; i++)
        names[i] = pk_layout_name(&in.names, i);

    char header[256];
    snprintf(header, sizeof header,
             "pgokit order: %zu functions (%zu start-up, %zu steady-state, seed %llu)", n_final,
             n_trace_funcs, n_steady, (unsigned long long)lo.bp.seed);
    /* stdout, or an existing non-regular file (/dev/null, a pipe): write a
     * private temporary, then copy it out — renaming it over a device node
     * would replace the device with a regular file. */
    struct stat st;
    bool copy_out = !out_path || (stat(out_path, &st) == 0 && !S_ISREG(st.st_mode));
    /* in a directory of its own (mkdtemp: a name nobody can plant a
     * symlink or a FIFO at beforehand) */
    char tmp_dir[4096], tmp_out[4200];
    snprintf(tmp_dir, sizeof tmp_dir, "%s/pgokit-order.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (copy_out && !mkdtemp(tmp_dir)) {
        pk_err_errno(&err, "creating a temporary directory %s", tmp_dir);
        goto out;
    }
    snprintf(tmp_out, sizeof tmp_out, "%s/order", tmp_dir);
    const char *dest = copy_out ? tmp_out : out_path;
    pk_out_file o;
    int wrc = pk_out_open(&o, dest, &err);
    if (!wrc && pk_layout_write_order(&o, fmt, names, final, n_final, header, &err) != 0) {
        pk_out_abort(&o);
        wrc = -1;
    }
    if (!wrc)
        wrc = pk_out_commit(&o, &err);
    if (wrc) {
        if (copy_out)
            rmdir(tmp_dir);
        goto out;
    }
    if (copy_out) {
        pk_mapped_file mf;
        int crc = pk_file_map(&mf, tmp_out, &err);
        unlink(tmp_out);
        rmdir(tmp_dir);
        if (crc != 0)
            goto out;
        FILE *to = out_path ? fopen(out_path, "w") : stdout;
        bool ok = to && (mf.size == 0 || fwrite(mf.data, 1, mf.size, to) == mf.size);
        if (to)
            ok = (to == stdout ? fflush(to) : fclose(to)) == 0 && ok;
        pk_file_unmap(&mf);
        if (!ok) {
            pk_err_set(&err, "writing to %s failed", out_path ? out_path : "stdout");
            goto out;
        }
    }
    if (!quiet)
        fprintf(stderr, "pgokit order: %zu functions ordered (%zu from %zu traces, %zu by C3)\n",
                n_final, n_trace_funcs, in.traces.len, n_steady);
    if (eval && in.traces.len) {
        pk_layout_eval ev;
        if (pk_layout_evaluate(nf, in.sizes.data, final, n_final, in.traces.data, in.traces.len,
                               4096, 16, &ev, &err) != 0)
            goto out;
        fprintf(stderr, "pgokit order: estimated start-up: %llu distinct 4 KiB pages, "
                        "fault-curve area %llu\n",
                (unsigned long long)ev.pages, (unsigned long long)ev.area);
    }
    rc = 0;
out:
    if (rc != 0)
        pk_cli_fail(cmd, &err);
    for (size_t i = 0; i < in.n_owned; i++)
        free(in.owned[i]);
    free(in.owned);
    if (in.have_tp)
        pk_temporal_free(&in.tp);
    pk_layout_trace_set_free(&in.text_traces);
    pk_vec_free(&in.traces);
    pk_vec_free(&in.sizes);
    pk_layout_names_free(&in.names);
    pk_layout_call_graph_free(&g);
    pk_layout_content_free(&content);
    pk_binary_close(bin);
    if (celf.funcs || celf.file.data)
        pk_layout_elf_close(&celf);
    pk_binary_close(cbin);
    free(bytes);
    free(names);
    free(startup);
    free(steady);
    free(final);
    return rc;
}
