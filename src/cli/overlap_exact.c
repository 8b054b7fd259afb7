/* overlap_exact.c — `pgokit overlap --exact EXACT --binary BIN PROFILE...`:
 * the block-overlap degree of profiles against the ground truth of the
 * emulator's exact counts. The exact counts of BIN become a raw profile, and
 * the same generator that made the profiles under test turns it into a
 * reference at the same granularity (probe ids for probe binaries, line
 * offsets otherwise); see profile/block_overlap.h for the metric. */
#include "cli/cli.h"
#include "cli/overlap_exact.h"
#include "common/json_out.h"
#include "format/format.h"
#include "profgen/truth.h"
#include "profile/block_overlap.h"

#include <getopt.h>
#include <stdlib.h>

static double loss_of(const pk_block_overlap_func *f) { return f->weight * (1 - f->overlap); }

static int by_loss(const void *a, const void *b)
{
    double x = loss_of(a), y = loss_of(b);
    return x < y ? 1 : x > y ? -1 : 0;
}

/* The functions whose overlap costs the program's the most: where to look. */
static void print_worst(const pk_profset *ref, pk_block_overlap_func *rows, size_t n, size_t worst)
{
    if (!worst || !n)
        return;
    qsort(rows, n, sizeof *rows, by_loss);
    printf("  %-10s %-8s %-8s %12s %12s  function\n", "loss", "share", "overlap", "exact", "profile");
    for (size_t i = 0; i < n && i < worst; i++)
        printf("  %-10.4f %-8.4f %-8.4f %12llu %12llu  %s\n", loss_of(&rows[i]), rows[i].weight, rows[i].overlap,
               (unsigned long long)rows[i].ref_samples, (unsigned long long)rows[i].test_samples,
               pk_profset_name(ref, rows[i].name));
}

int pk_cli_overlap_exact(int argc, char **argv)
{
    const char *exact[64], *binary = NULL, *write_ref = NULL;
    size_t nexact = 0;
    bool json = false, quiet = false;
    long worst = 0;
    pk_cli_debug dbg = {0};
    static const struct option opts[] = {
        {"exact", required_argument, 0, 'e'}, {"binary", required_argument, 0, 'b'},
        {"help", no_argument, 0, 'h'}, {"json", no_argument, 0, 'j'}, {"quiet", no_argument, 0, 'q'},
        {"debug-binary", required_argument, 0, 'd'}, {"debug-dir", required_argument, 0, 'D'},
        {"dwp", required_argument, 0, 'W'}, {"functions", required_argument, 0, 'f'},
        {"write-reference", required_argument, 0, 'w'}, {0, 0, 0, 0},
    };
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "e:b:hqf:w:", opts, NULL)) != -1) {
        switch (c) {
        case 'e':
            if (nexact == sizeof exact / sizeof exact[0])
                return pk_cli_usage("overlap", "at most 64 --exact files");
            exact[nexact++] = optarg;
            break;
        case 'b': binary = optarg; break;
        case 'f': {
            char *end;
            worst = strtol(optarg, &end, 10);
            if (*end || worst < 0 || worst > 1000000)
                return pk_cli_usage("overlap", "--functions takes a count, not '%s'", optarg);
            break;
        }
        case 'j': json = true; break;
        case 'w': write_ref = optarg; break;
        case 'q': quiet = true; break;
        case 'd': pk_cli_debug_option(&dbg, "overlap", "debug-binary", optarg); break;
        case 'D':
            if (pk_cli_debug_option(&dbg, "overlap", "debug-dir", optarg) < 0)
                return 2;
            break;
        case 'W': pk_cli_debug_option(&dbg, "overlap", "dwp", optarg); break;
        case 'h':
            printf("usage: pgokit overlap --exact EXACT [--exact EXACT...] --binary BIN PROFILE...\n"
                   "Block-overlap degree (CSSPGO paper, §IV-C) of each PROFILE against the\n"
                   "ground truth of the emulator's exact counts (pgokit record --exact-counts).\n"
                   "  --debug-binary F, --debug-dir DIR, --dwp F: where BIN's debug information is\n"
                   "  --functions N  also the N functions that lose the most overlap (share of the\n"
                   "           reference x (1 - overlap)), with their samples in both\n"
                   "  --json   a JSON array: profile, block_overlap, common_functions,\n"
                   "           reference_functions, reference_weight_covered\n"
                   "  --write-reference F  also write the reference (the exact counts as a profile\n"
                   "           of the first PROFILE's kind: line-based or probe-based, context-free)\n"
                   "           to F (extbinary): what a profile could be at best, to build with\n");
            return 0;
        default: return pk_cli_usage("overlap", "unknown option");
        }
    }
    if (!nexact || !binary || optind >= argc)
        return pk_cli_usage("overlap", "--exact, --binary and at least one profile are required");
    pk_err err;
    pk_binary *bin;
    if (pk_binary_open_opts(&bin, binary, &dbg.opts, &err))
        return pk_cli_fail("overlap", &err);
    if (!quiet)
        pk_cli_debug_note("overlap", bin);
    int rc = 0;
    pk_profset truth[2];
    bool built[2] = {false, false};
    pk_json j;
    pk_json_init(&j, stdout);
    if (json)
        pk_json_begin_array(&j, NULL);
    for (int i = optind; i < argc && !rc; i++) {
        pk_profset test;
        if (pk_profset_init(&test, &err) || pk_prof_read_file(&test, argv[i], PK_FMT_AUTO, NULL, &err)) {
            rc = pk_cli_fail("overlap", &err);
            break;
        }
        int kind = (test.kind & PK_PROF_PROBE) ? 1 : 0;
        if (!built[kind]) {
            if (pk_profset_init(&truth[kind], &err) ||
                pk_truth_profile(exact, nexact, bin, binary, kind == 1, &truth[kind], &err)) {
                pk_profset_free(&test);
                rc = pk_cli_fail("overlap", &err);
                break;
            }
            built[kind] = true;
            pk_write_opts wo = {.format = PK_FMT_EXTBINARY};
            if (write_ref && i == optind && pk_prof_write_file(&truth[kind], &wo, write_ref, &err)) {
                pk_profset_free(&test);
                rc = pk_cli_fail("overlap", &err);
                break;
            }
        }
        pk_block_overlap o;
        pk_block_overlap_func *rows = NULL;
        size_t nrows = 0;
        if (pk_profset_block_overlap_funcs(&test, &truth[kind], &o, worst ? &rows : NULL, &nrows, &err)) {
            rc = pk_cli_fail("overlap", &err);
        } else if (json) {
            pk_json_begin_object(&j, NULL);
            pk_json_str(&j, "profile", argv[i]);
            pk_json_double(&j, "block_overlap", o.overlap);
            pk_json_u64(&j, "common_functions", o.common_functions);
            pk_json_u64(&j, "reference_functions", o.ref_functions);
            pk_json_double(&j, "reference_weight_covered", o.ref_weight_covered);
            pk_json_end_object(&j);
        } else {
            printf("%s: block overlap %.4f (%llu of %llu reference functions, covering %.1f%% of the reference)\n",
                   argv[i], o.overlap, (unsigned long long)o.common_functions,
                   (unsigned long long)o.ref_functions, 100.0 * o.ref_weight_covered);
            print_worst(&truth[kind], rows, nrows, (size_t)worst);
        }
        free(rows);
        pk_profset_free(&test);
    }
    if (json) { /* well-formed even after a failure (the exit status tells) */
        pk_json_end_array(&j);
        pk_json_finish(&j);
    }
    for (int k = 0; k < 2; k++)
        if (built[k])
            pk_profset_free(&truth[k]);
    pk_binary_close(bin);
    return rc;
}
