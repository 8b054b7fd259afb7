/* cmd_store.c — `pgokit store init|add|list|select|pull|prune`: the profile
 * store (src/store/) on SQLite (a file path) or PostgreSQL (a postgresql://
 * connection string). */
#include "cli/cli.h"
#include "store/store.h"

#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

const char pk_cmd_store_summary[] = "store raw profiles of many hosts in SQLite/PostgreSQL; merge there";

static void usage(FILE *to)
{
    fprintf(to,
            "usage: pgokit store init DB\n"
            "       pgokit store add DB [--binary B] [--host H] [--job J] [--time T] INPUT...\n"
            "       pgokit store list DB\n"
            "       pgokit store select DB --binary NAME [--since T] [--threshold PCT] [-v]\n"
            "       pgokit store pull DB --build-id ID [--since T] [--job J] -o OUT\n"
            "       pgokit store prune DB --before T\n"
            "DB is a file (SQLite, created by init) or a postgresql://USER@HOST:PORT/NAME connection\n"
            "string, or libpq's \"host=H dbname=NAME ...\" form (PostgreSQL 15 or newer); passwords in it\n"
            "are masked in every message. init creates or migrates the schema; every other command\n"
            "needs the current schema version.\n"
            "add: reduces INPUTs (perf.data, perf script text, pprof, raw profiles; - is perf.data\n"
            "streamed on standard input, as `pgokit record -o -` writes it) to one raw profile\n"
            "here and stores it in one transaction. Storing the same content (counts, host, job) again\n"
            "adds nothing.\n"
            "  --binary B          the profiled binary (needed for samples; for raw profiles it\n"
            "                      checks their build-id); its name is the binary's name in the store\n"
            "  --debug-binary F, --debug-dir DIR, --dwp F: where B's debug information is (a\n"
            "                      fully stripped B needs its symbols; see `pgokit profgen --help`)\n"
            "  --name NAME         the binary's name in the store (default: basename of B)\n"
            "  --build-id ID       refuse inputs of any other build-id\n"
            "  --host H            default: this machine's host name\n"
            "  --job J             default: empty\n"
            "  --time T            when the profile was taken (default: now)\n"
            "list: every binary and revision (build-id): profiles, hosts, samples, first and last time,\n"
            "and what `pgokit profgen` can make of its pull: autofdo (line-based, clang or gcc), probe\n"
            "(when the binary was built with -fpseudo-probe-for-profiling), csspgo when calling contexts\n"
            "with call sites were stored (samples with call stacks: LBR or IP), and whether the counts\n"
            "include IP samples (inferred by profgen, once, on the merged pull).\n"
            "select: prints the build-id to profile: the most recent revision (by first profile time)\n"
            "with at least PCT %% of the samples of the most-sampled revision since T.\n"
            "  --since T           default: 14d\n"
            "  --threshold PCT     default: 20\n"
            "  -v, --verbose       also the candidates, on stderr\n"
            "pull: merges every profile of the build-id in the database (GROUP BY, SUM) and writes the\n"
            "raw profile (`pgokit profgen --binary B --raw OUT` symbolizes it): version 2, per calling\n"
            "context with IP observations, or version 1 when every upload was version 1 (as `pgokit merge`).\n"
            "  --build-id ID       the revision\n"
            "  --since T           only profiles taken since T (default: all)\n"
            "  --job J             only profiles of job J\n"
            "  -o, --output OUT    the merged raw profile\n"
            "prune: deletes the profiles taken before T.\n"
            "  --before T          the cut-off\n"
            "  -q, --quiet         no summary on stderr\n"
            "Times T: epoch seconds, YYYY-MM-DD[THH:MM:SS] (UTC), or a duration before now (90s, 30m,\n"
            "12h, 14d, 2w).\n");
}

/* tests: PGOKIT_STORE_TEST_HOOK=kill:N (SIGKILL once N rows are sent, or at
 * the commit) or pause:SECS:FILE (touch FILE, sleep, once, before commit) */
typedef struct hook {
    int kill;
    uint64_t kill_rows;
    unsigned pause;
    const char *file;
    bool done;
} hook;

static void on_rows(void *ctx, uint64_t rows)
{
    hook *h = ctx;
    if (h->kill && rows >= h->kill_rows)
        raise(SIGKILL);
    if (h->pause && !h->done && rows >= h->kill_rows) {
        h->done = true;
        FILE *f = fopen(h->file, "w");
        if (f)
            fclose(f);
        sleep(h->pause);
    }
}

static void parse_hook(hook *h)
{
    const char *v = getenv("PGOKIT_STORE_TEST_HOOK");
    memset(h, 0, sizeof *h);
    if (!v)
        return;
    if (!strncmp(v, "kill:", 5)) {
        h->kill = 1;
        h->kill_rows = strtoull(v + 5, NULL, 10);
    } else if (!strncmp(v, "pause:", 6)) {
        char *e;
        h->pause = (unsigned)strtoul(v + 6, &e, 10);
        h->file = *e == ':' ? e + 1 : "/dev/null";
        h->kill_rows = 0;
    }
}

static void on_warning(void *ctx, const char *msg)
{
    fprintf(stderr, "pgokit store add: warning: %s\n", msg);
}

/* " autofdo,probe,csspgo; from IP samples" or
 * " autofdo,probe; no csspgo (no calling contexts stored: ...)" */
static void pull_kinds(char *out, size_t cap, const pk_store_rev *r)
{
    snprintf(out, cap, " %s%s%s%s", r->kinds & PK_STORE_KIND_AUTOFDO ? "autofdo," : "",
             r->kinds & PK_STORE_KIND_PROBE ? "probe," : "", r->kinds & PK_STORE_KIND_CSSPGO ? "csspgo," : "",
             r->kinds ? "" : "nothing (no counts),");
    size_t n = strlen(out);
    out[--n] = 0; /* the last comma */
    if (r->kinds & PK_STORE_KIND_IP)
        n += (size_t)snprintf(out + n, cap - n, "; from IP samples%s", r->ranges || r->branches ? " and LBR" : "");
    if (!(r->kinds & PK_STORE_KIND_CSSPGO) && r->no_csspgo && r->kinds)
        snprintf(out + n, cap - n, "; no csspgo (%s)", r->no_csspgo);
}

#define OPT(name) ((!strcmp(a, name) && i + 1 < argc) || \
                   (!strncmp(a, name "=", sizeof name) && (a += sizeof name - 1, 1)))
#define VAL() (a[0] == '=' ? a + 1 : argv[++i])

int pk_cmd_store(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const char *sub = argv[1];
    static const char *const subs[] = {"init", "add", "list", "select", "pull", "prune"};
    bool known = false;
    for (size_t k = 0; k < sizeof subs / sizeof *subs; k++)
        known |= !strcmp(sub, subs[k]);
    if (!known)
        return pk_cli_usage("store", "unknown store command '%s' (init, add, list, select, pull, prune)", sub);
    const char *db = NULL, *binary = NULL, *name = NULL, *bid = NULL, *host = NULL, *job = NULL;
    const char *tstr = NULL, *since = NULL, *before = NULL, *out = NULL, *thr = NULL;
    bool quiet = false, verbose = false;
    pk_cli_debug dbg = {0};
    const char **ins = calloc((size_t)argc, sizeof *ins);
    size_t nin = 0;
    int rc = 2;
    if (!ins)
        return 1;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            rc = 0;
            goto done;
        } else if (OPT("--binary")) {
            binary = VAL();
        } else if (OPT("--debug-binary") || OPT("--debug-dir") || OPT("--dwp")) {
            const char *opt = argv[i]; /* before VAL() moves i */
            if (pk_cli_debug_option(&dbg, "store", opt, VAL()) < 0)
                goto done;
        } else if (OPT("--name")) {
            name = VAL();
        } else if (OPT("--build-id")) {
            bid = VAL();
        } else if (OPT("--host")) {
            host = VAL();
        } else if (OPT("--job")) {
            job = VAL();
        } else if (OPT("--time")) {
            tstr = VAL();
        } else if (OPT("--since")) {
            since = VAL();
        } else if (OPT("--before")) {
            before = VAL();
        } else if (OPT("--threshold")) {
            thr = VAL();
        } else if ((!strcmp(a, "-o") && i + 1 < argc) || OPT("--output")) {
            out = VAL();
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = true;
        } else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
            verbose = true;
        } else if (a[0] == '-' && a[1]) {
            rc = pk_cli_usage("store", "unknown option '%s' (or a missing value)", a);
            goto done;
        } else if (!db) {
            db = a;
        } else {
            ins[nin++] = a;
        }
    }
    if (!db) {
        rc = pk_cli_usage("store", "no database (a file or a postgresql:// connection string)");
        goto done;
    }
    if (nin && strcmp(sub, "add")) {
        rc = pk_cli_usage("store", "unexpected argument '%s'", ins[0]);
        goto done;
    }
    pk_err err = {{0}};
    int64_t now = (int64_t)time(NULL);
    int64_t t_since = INT64_MIN, t_before = 0, t_time = now;
    double threshold = 0.2;
    if (!strcmp(sub, "select") && !since)
        since = "14d";
    if ((since && pk_store_parse_time(since, now, &t_since, &err)) ||
        (before && pk_store_parse_time(before, now, &t_before, &err)) ||
        (tstr && pk_store_parse_time(tstr, now, &t_time, &err))) {
        rc = pk_cli_usage("store", "%s", err.msg);
        goto done;
    }
    if (thr) {
        char *e;
        threshold = strtod(thr, &e) / 100;
        if (*e || !(threshold >= 0 && threshold <= 1)) {
            rc = pk_cli_usage("store", "bad --threshold '%s' (a percentage, 0 to 100)", thr);
            goto done;
        }
    }
    if (!strcmp(sub, "add") && !nin) {
        rc = pk_cli_usage("store", "add: no input (perf.data, pprof, raw profile)");
        goto done;
    }
    if (!strcmp(sub, "select") && !binary) {
        rc = pk_cli_usage("store", "select: no --binary NAME");
        goto done;
    }
    if (!strcmp(sub, "pull") && (!bid || !out)) {
        rc = pk_cli_usage("store", "pull: %s", !bid ? "no --build-id" : "no output (-o)");
        goto done;
    }
    if (pk_cli_check_output("store", out, argc, argv)) {
        rc = 1;
        goto done;
    }
    if (!strcmp(sub, "prune") && !before) {
        rc = pk_cli_usage("store", "prune: no --before T");
        goto done;
    }

    /* the map step runs before connecting: a bad input never opens the database */
    pk_rawprof2 raw;
    bool have_raw = false;
    if (!strcmp(sub, "add")) {
        char origin[1024];
        if (pk_store_reduce_warn(binary, bid, ins, nin, quiet ? NULL : on_warning, NULL, &dbg.opts, origin,
                                 sizeof origin, &raw, &err)) {
            rc = pk_cli_fail("store add", &err);
            goto done;
        }
        if (!quiet && origin[0])
            fprintf(stderr, "pgokit store add: debug info: %s\n", origin);
        have_raw = true;
    }
    pk_store *s;
    rc = 1;
    if (pk_store_open(&s, db, !strcmp(sub, "init"), &err)) {
        rc = pk_cli_fail("store", &err);
        goto free_raw;
    }
    if (!strcmp(sub, "init")) {
        int from, to;
        if (pk_store_init(s, &from, &to, &err))
            rc = pk_cli_fail("store init", &err);
        else {
            rc = 0;
            if (!quiet)
                fprintf(stderr, from == to ? "store: %s store at schema version %d\n"
                                           : "store: %s store migrated from schema version %d to %d\n",
                        pk_store_engine(s), from, to);
        }
    } else if (!strcmp(sub, "add")) {
        char hn[256] = "";
        if (!host) {
            gethostname(hn, sizeof hn - 1);
            host = hn;
        }
        const char *bname = name;
        if (!bname && binary) {
            bname = strrchr(binary, '/');
            bname = bname ? bname + 1 : binary;
        }
        hook h;
        parse_hook(&h);
        pk_store_meta m = {.binary_name = bname, .host = host, .job = job ? job : "", .time = t_time,
                           .progress = (h.kill || h.pause) ? on_rows : NULL, .cb_ctx = &h};
        pk_store_add_result res;
        if (pk_store_add(s, &raw, &m, &res, &err))
            rc = pk_cli_fail("store add", &err);
        else {
            rc = 0;
            if (!quiet && res.duplicate)
                fprintf(stderr, "store: already stored (content %s): nothing added\n", res.hash);
            else if (!quiet)
                fprintf(stderr, "store: added profile %lld (build-id %s): %llu ranges, %llu branches, %llu IP "
                        "observations, %llu contexts (%llu new), %llu samples\n",
                        (long long)res.id, res.build_id, (unsigned long long)res.ranges,
                        (unsigned long long)res.branches, (unsigned long long)res.ip,
                        (unsigned long long)res.contexts, (unsigned long long)res.contexts_new,
                        (unsigned long long)res.samples);
        }
    } else if (!strcmp(sub, "list") || !strcmp(sub, "select")) {
        pk_store_rev *v = NULL;
        size_t n = 0, chosen = 0;
        bool list = !strcmp(sub, "list");
        int q = list ? pk_store_list(s, &v, &n, &err)
                     : pk_store_select(s, binary, t_since, threshold, &v, &n, &chosen, &err);
        if (q) {
            rc = pk_cli_fail(list ? "store list" : "store select", &err);
        } else {
            rc = 0;
            FILE *to = list ? stdout : stderr;
            if (list || verbose)
                fprintf(to, "%-20s %-40s %8s %6s %12s %-20s %-20s%s\n", "binary", "build-id", "profiles", "hosts",
                        "samples", "first", "last", list ? " pull makes" : "");
            for (size_t k = 0; k < n && (list || verbose); k++) {
                char f[32], l[32];
                pk_store_format_time(v[k].first, f, sizeof f);
                pk_store_format_time(v[k].last, l, sizeof l);
                char bin_esc[1024], bid_esc[512];
                char kinds[256] = "";
                if (list)
                    pull_kinds(kinds, sizeof kinds, &v[k]);
                fprintf(to, "%-20s %-40s %8llu %6llu %12llu %-20s %-20s%s\n", pk_cli_name(bin_esc, sizeof bin_esc, v[k].binary),
                        pk_cli_name(bid_esc, sizeof bid_esc, v[k].build_id),
                        (unsigned long long)v[k].profiles, (unsigned long long)v[k].hosts,
                        (unsigned long long)v[k].samples, f, l, list ? kinds : k == chosen ? "  <- selected" : "");
            }
            if (!list) {
                char bid_esc[512];
                printf("%s\n", pk_cli_name(bid_esc, sizeof bid_esc, v[chosen].build_id));
            }
        }
        free(v);
    } else if (!strcmp(sub, "pull")) {
        pk_store_filter f = {.build_id = bid, .since = t_since, .job = job};
        pk_store_pull_result res;
        if (pk_store_pull(s, &f, out, &res, &err))
            rc = pk_cli_fail("store pull", &err);
        else {
            rc = 0;
            if (!quiet)
                fprintf(stderr, "store: merged %llu profiles: %llu ranges, %llu branches, %llu IP observations, "
                        "%llu contexts -> %s (raw profile version %u)\n",
                        (unsigned long long)res.profiles, (unsigned long long)res.ranges,
                        (unsigned long long)res.branches, (unsigned long long)res.ip,
                        (unsigned long long)res.contexts, out, res.version);
        }
    } else { /* prune */
        uint64_t np, nr;
        if (pk_store_prune(s, t_before, &np, &nr, &err))
            rc = pk_cli_fail("store prune", &err);
        else {
            rc = 0;
            if (!quiet)
                fprintf(stderr, "store: pruned %llu profiles (%llu rows)\n", (unsigned long long)np,
                        (unsigned long long)nr);
        }
    }
    pk_store_close(s);
free_raw:
    if (have_raw)
        pk_rawprof2_free(&raw);
done:
    free(ins);
    return rc;
}
