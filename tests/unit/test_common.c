/* test_common.c — errors, mapped files, atomic outputs, the u64 map. */
#include "test.h"
#include "common/pk_common.h"
#include "common/demangle.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

TEST(err_set_returns_minus_one_and_formats)
{
    pk_err e;
    CHECK(pk_err_set(&e, "%s: offset %d: bad", "f.data", 42) == -1);
    CHECK_STR(e.msg, "f.data: offset 42: bad");
    pk_err_prefix(&e, "reading %s", "x");
    CHECK_STR(e.msg, "reading x: f.data: offset 42: bad");
}

TEST(map_missing_file_names_it)
{
    pk_mapped_file f;
    pk_err e;
    CHECK(pk_file_map(&f, "/nonexistent/pk.data", &e) == -1);
    CHECK(strstr(e.msg, "/nonexistent/pk.data") != NULL);
}

/* A binary names its .dwo and debug-link files: /dev/zero as a .dwo was read
 * until memory ran out, a FIFO would be waited on (tests/fuzz/hostile.py). */
TEST(map_regular_refuses_devices_and_fifos)
{
    pk_mapped_file f;
    pk_err e;
    CHECK(pk_file_map_regular(&f, "/dev/zero", &e) == -1);
    CHECK(strstr(e.msg, "/dev/zero: offset 0: not a regular file") != NULL);
    char fifo[512], reg[512];
    snprintf(fifo, sizeof fifo, "%s/fifo", pk_test_tmpdir());
    CHECK(mkfifo(fifo, 0600) == 0);
    CHECK(pk_file_map_regular(&f, fifo, &e) == -1);   /* returns at once */
    CHECK(strstr(e.msg, "not a regular file") != NULL);
    snprintf(reg, sizeof reg, "%s/reg", pk_test_tmpdir());
    FILE *w = fopen(reg, "w");
    fputs("abc", w);
    fclose(w);
    CHECK_OK(pk_file_map_regular(&f, reg, &e), &e);
    CHECK(f.size == 3 && !memcmp(f.data, "abc", 3));
    pk_file_unmap(&f);
    /* a view of the caller's bytes: unmapping frees only the name */
    static const uint8_t bytes[] = {1, 2, 3};
    CHECK_OK(pk_file_borrow(&f, bytes, sizeof bytes, "mem", &e), &e);
    CHECK(f.data == bytes && f.size == 3 && !strcmp(f.path, "mem"));
    pk_file_unmap(&f);
}

TEST(out_file_commit_and_abort)
{
    char path[512], tmp[600];
    snprintf(path, sizeof path, "%s/out.bin", pk_test_tmpdir());
    pk_out_file o;
    pk_err e;
    CHECK_OK(pk_out_open(&o, path, &e), &e);
    snprintf(tmp, sizeof tmp, "%s", o.tmp_path);
    CHECK_OK(pk_out_printf(&o, &e, "hello %d\n", 7), &e);
    uint32_t z = 0;
    CHECK_OK(pk_out_write(&o, &z, 4, &e), &e);
    uint32_t patched = 0x01020304;
    CHECK_OK(pk_out_pwrite(&o, &patched, 4, 8, &e), &e);
    struct stat st;
    CHECK(stat(path, &st) != 0);          /* not visible before commit */
    CHECK_OK(pk_out_commit(&o, &e), &e);
    CHECK(stat(tmp, &st) != 0);           /* temporary gone */
    pk_mapped_file f;
    CHECK_OK(pk_file_map(&f, path, &e), &e);
    CHECK_EQ_U64(f.size, 12);
    CHECK(memcmp(f.data, "hello 7\n", 8) == 0);
    CHECK_EQ_U64(pk_ld32(f.data + 8), 0x01020304);
    pk_file_unmap(&f);

    char path2[512];
    snprintf(path2, sizeof path2, "%s/aborted.bin", pk_test_tmpdir());
    CHECK_OK(pk_out_open(&o, path2, &e), &e);
    snprintf(tmp, sizeof tmp, "%s", o.tmp_path);
    CHECK_OK(pk_out_write(&o, "x", 1, &e), &e);
    pk_out_abort(&o);
    CHECK(stat(path2, &st) != 0);
    CHECK(stat(tmp, &st) != 0);
}

/* Errors name the path the user gave, never the internal "<path>.tmp.<pid>". */
TEST(out_file_errors_name_the_users_path)
{
    pk_out_file o;
    pk_err e;
    const char *missing = "/nonexistent-pgokit-dir/out.prof";
    CHECK(pk_out_open(&o, missing, &e) == -1);
    CHECK(!strncmp(e.msg, "/nonexistent-pgokit-dir/out.prof: cannot create", 47));
    CHECK(strstr(e.msg, ".tmp.") == NULL);

    /* a write that fails (file size limit, EFBIG with SIGXFSZ ignored) */
    char path[512];
    snprintf(path, sizeof path, "%s/big.bin", pk_test_tmpdir());
    struct rlimit old, small;
    CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0);
    small = old;
    small.rlim_cur = 4096;
    void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
    CHECK_OK(pk_out_open(&o, path, &e), &e);
    CHECK(setrlimit(RLIMIT_FSIZE, &small) == 0);
    static char block[1 << 17];
    int wrc = pk_out_write(&o, block, sizeof block, &e);
    if (!wrc)
        wrc = pk_out_commit(&o, &e);
    else
        pk_out_abort(&o);
    CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0);
    signal(SIGXFSZ, prev);
    CHECK(wrc == -1);
    CHECK(!strncmp(e.msg, path, strlen(path)) && e.msg[strlen(path)] == ':');
    CHECK(strstr(e.msg, ".tmp.") == NULL);
    struct stat st;
    CHECK(stat(path, &st) != 0); /* nothing left under the final name */
}

TEST(out_file_to_a_device_writes_in_place)
{
    pk_out_file o;
    pk_err e;
    CHECK_OK(pk_out_open(&o, "/dev/null", &e), &e);
    CHECK_OK(pk_out_printf(&o, &e, "discarded %d\n", 1), &e);
    CHECK(pk_out_pwrite(&o, "x", 1, 0, &e) == -1);
    CHECK_OK(pk_out_commit(&o, &e), &e);
    struct stat st;
    CHECK(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode));
}

TEST(u64map_counts_and_grows)
{
    pk_u64map m;
    CHECK(pk_u64map_init(&m, 4) == 0);
    for (uint64_t i = 0; i < 10000; i++)
        *pk_u64map_slot(&m, i * 7919) += i;
    *pk_u64map_slot(&m, 0) += 5;
    CHECK_EQ_U64(m.len, 10000);
    CHECK_EQ_U64(*pk_u64map_get(&m, 0), 5);
    CHECK_EQ_U64(*pk_u64map_get(&m, 9999 * 7919), 9999);
    CHECK(pk_u64map_get(&m, 3) == NULL);
    uint64_t sum = 0;
    for (size_t i = 0; i < pk_u64map_end(&m); i++)
        if (pk_u64map_used(&m, i))
            sum += pk_u64map_val(&m, i);
    CHECK_EQ_U64(sum, 9999ull * 10000 / 2 + 5);
    pk_u64map_free(&m);
}

TEST(vec_push_zeroes)
{
    pk_vec v;
    pk_vec_init(&v, sizeof(uint64_t));
    for (int i = 0; i < 1000; i++) {
        uint64_t *s = pk_vec_push(&v);
        CHECK(s && *s == 0);
        *s = (uint64_t)i;
    }
    CHECK_EQ_U64(v.len, 1000);
    CHECK_EQ_U64(PK_VEC_AT(&v, uint64_t, 999), 999);
    pk_vec_free(&v);
}

TEST(listmap_keeps_a_list_per_key)
{
    pk_listmap m;
    pk_listmap_init(&m, sizeof(uint32_t));
    CHECK(pk_listmap_get(&m, 7) == NULL);
    for (uint32_t i = 0; i < 1000; i++) {
        uint32_t *e = pk_listmap_push(&m, i % 10); /* key 0 included */
        CHECK(e && *e == 0);
        *e = i;
    }
    for (uint64_t k = 0; k < 10; k++) {
        const pk_vec *l = pk_listmap_get(&m, k);
        CHECK(l && l->len == 100);
        for (size_t i = 0; i < l->len; i++)
            CHECK_EQ_U64(PK_VEC_AT(l, uint32_t, i), k + 10 * i);
    }
    CHECK(pk_listmap_get(&m, 10) == NULL);
    pk_listmap_free(&m);
}

/* pk_sort_by_u64 against a reference (a stable insertion sort), for every
 * element size with its own copy loop and one without, keys at the start
 * and inside the element, sizes on both sides of the insertion-sort cut,
 * keys varying in a few digits or in all of them, many equal keys. */
TEST(sort_by_u64_is_a_stable_sort)
{
    static const size_t elems[] = {8, 16, 24, 32, 40};
    static const size_t counts[] = {0, 1, 2, 31, 33, 1000, 5000};
    uint64_t rng = 0x9e3779b97f4a7c15ULL;
    for (size_t ei = 0; ei < 5; ei++) {
        size_t elem = elems[ei], key_off = elem == 8 ? 0 : 8;
        for (size_t ci = 0; ci < 7; ci++) {
            for (int mode = 0; mode < 3; mode++) {
                size_t n = counts[ci];
                uint8_t *a = malloc(n * elem + 1), *ref = malloc(n * elem + 1);
                CHECK(a && ref);
                for (size_t i = 0; i < n; i++) {
                    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
                    uint64_t k = mode == 0 ? rng : mode == 1 ? (rng & 0x0f0f00) << 20 : rng % 7;
                    memset(a + i * elem, 0, elem);
                    memcpy(a + i * elem + key_off, &k, 8);
                    if (elem > 8) {
                        uint64_t seq = i; /* the original position, to check stability */
                        memcpy(a + i * elem + (key_off ? 0 : 8), &seq, 8);
                    }
                }
                memcpy(ref, a, n * elem);
                uint8_t tmp[40];
                for (size_t i = 1; i < n; i++) {
                    uint64_t k, kj;
                    memcpy(&k, ref + i * elem + key_off, 8);
                    size_t j = i;
                    for (; j > 0; j--) {
                        memcpy(&kj, ref + (j - 1) * elem + key_off, 8);
                        if (kj <= k)
                            break;
                    }
                    memcpy(tmp, ref + i * elem, elem);
                    memmove(ref + (j + 1) * elem, ref + j * elem, (i - j) * elem);
                    memcpy(ref + j * elem, tmp, elem);
                }
                CHECK(pk_sort_by_u64(a, n, elem, key_off) == 0);
                CHECK(n == 0 || memcmp(a, ref, n * elem) == 0);
                free(a);
                free(ref);
            }
        }
    }
}

/* pk_addr_buckets_range brackets the lower and upper bounds of any address,
 * keys near UINT64_MAX included (the last bucket's start used to wrap). */
TEST(addr_buckets_bracket_bounds)
{
    static const uint64_t top[] = {UINT64_MAX - 100, UINT64_MAX - 50, UINT64_MAX - 3, UINT64_MAX};
    uint64_t spread[64];
    for (int i = 0; i < 64; i++)
        spread[i] = 0x400000 + (uint64_t)i * i * 37;
    const uint64_t *sets[] = {top, spread};
    const size_t ns[] = {4, 64};
    for (int si = 0; si < 2; si++) {
        const uint64_t *k = sets[si];
        size_t n = ns[si];
        pk_addr_buckets b;
        CHECK(pk_addr_buckets_build(&b, k, n, sizeof *k, 0) == 0);
        CHECK(b.first != NULL);
        for (size_t q = 0; q < n; q++) {
            for (int d = -1; d <= 1; d++) {
                uint64_t addr = k[q] + (uint64_t)(int64_t)d;
                size_t lb = 0, ub = 0, lo, hi;
                while (lb < n && k[lb] < addr)
                    lb++;
                while (ub < n && k[ub] <= addr)
                    ub++;
                pk_addr_buckets_range(&b, addr, n, &lo, &hi);
                CHECK(lo <= lb && ub <= hi);
            }
        }
        pk_addr_buckets_free(&b);
    }
}

/* Expected texts are c++filt's (binutils 2.40) on the same input. */
TEST(demangle_text_as_cxxfilt_filters)
{
    pk_demangler d = {0};
    CHECK_STR(pk_demangle_text(&d, "main"), "main");
    CHECK_STR(pk_demangle_text(&d, "_ZL15sqlite3VdbeExecP4Vdbe"), "sqlite3VdbeExec(Vdbe*)");
    CHECK_STR(pk_demangle_text(&d, "[main:3 @ _ZN12_GLOBAL__N_13bazEv.__uniq.12:2.1 @ _Z3foov.cold]"),
              "[main:3 @ (anonymous namespace)::baz() [clone .__uniq.12]:2.1 @ foo() [clone .cold]]");
    CHECK_STR(pk_demangle_text(&d, "_ZZ4mainENK3$_0clEi"), "main::$_0::operator()(int) const");
    /* not mangled, or not valid: as it is */
    CHECK_STR(pk_demangle_text(&d, "_Zfoo x_Z3foov _Z"), "_Zfoo x_Z3foov _Z");
    CHECK_STR(pk_demangle_text(&d, ""), "");
    /* a long template name (the scratch grows) */
    char longname[4096] = "_Z1fI";
    for (int i = 0; i < 300; i++)
        strcat(longname, "Pi");
    strcat(longname, "EvT_");
    const char *got = pk_demangle_text(&d, longname);
    CHECK(strlen(got) > 600 && !strncmp(got, "void f<int*", 11));
    d.off = true;
    CHECK_STR(pk_demangle_text(&d, "_Z3foov"), "_Z3foov");
    pk_demangler_free(&d);
}

/* The temporary is created exclusively under an unpredictable name: a
 * symlink planted at any name next to the output is never written through,
 * and two writers of one output do not share a temporary. */
TEST(out_file_temporary_is_exclusive_and_unpredictable)
{
    char path[512], victim[512], link[600];
    snprintf(path, sizeof path, "%s/shared.out", pk_test_tmpdir());
    snprintf(victim, sizeof victim, "%s/victim", pk_test_tmpdir());
    FILE *f = fopen(victim, "w");
    CHECK(f && fputs("keep", f) >= 0 && fclose(f) == 0);
    snprintf(link, sizeof link, "%s.tmp.%ld", path, (long)getpid());
    CHECK(symlink(victim, link) == 0);
    pk_out_file a, b;
    pk_err e;
    CHECK_OK(pk_out_open(&a, path, &e), &e);
    CHECK_OK(pk_out_open(&b, path, &e), &e);
    CHECK(strcmp(a.tmp_path, b.tmp_path) != 0);
    CHECK(strcmp(a.tmp_path, link) != 0);
    CHECK_OK(pk_out_printf(&a, &e, "new"), &e);
    CHECK_OK(pk_out_commit(&a, &e), &e);
    pk_out_abort(&b);
    struct stat st;
    CHECK(stat(victim, &st) == 0 && st.st_size == 4);
    CHECK(lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 3);
    unlink(link);
}

/* What a signal handler calls: the live temporaries go, the committed
 * output stays. */
TEST(out_file_temporaries_removed_on_request)
{
    char path[512], done[512], tmp[700];
    snprintf(path, sizeof path, "%s/killed.out", pk_test_tmpdir());
    snprintf(done, sizeof done, "%s/done.out", pk_test_tmpdir());
    pk_out_file o, d;
    pk_err e;
    CHECK_OK(pk_out_open(&d, done, &e), &e);
    CHECK_OK(pk_out_commit(&d, &e), &e);
    CHECK_OK(pk_out_open(&o, path, &e), &e);
    snprintf(tmp, sizeof tmp, "%s", o.tmp_path);
    struct stat st;
    CHECK(stat(tmp, &st) == 0);
    pk_out_remove_temporaries();
    CHECK(stat(tmp, &st) != 0);
    CHECK(stat(done, &st) == 0);
    pk_out_abort(&o);
}

TEST(same_file_by_device_and_inode)
{
    char a[512], b[512], c[512];
    snprintf(a, sizeof a, "%s/same-a", pk_test_tmpdir());
    snprintf(b, sizeof b, "%s/same-b", pk_test_tmpdir());
    snprintf(c, sizeof c, "%s/same-c", pk_test_tmpdir());
    FILE *f = fopen(a, "w");
    CHECK(f && fclose(f) == 0);
    f = fopen(c, "w");
    CHECK(f && fclose(f) == 0);
    CHECK(link(a, b) == 0);
    CHECK(pk_same_file(a, b));
    CHECK(!pk_same_file(a, c));
    CHECK(!pk_same_file(a, "/nonexistent-pgokit"));
}

/* Text that acts on a terminal is escaped even when it is valid UTF-8: the
 * C1 controls (U+009B is CSI) and the bidi formatting characters; other
 * UTF-8 (a name in Greek, an accented path) is kept. */
TEST(escape_keeps_utf8_but_not_terminal_controls)
{
    char out[256];
    pk_escape(out, sizeof out, "a\x1b[2Jb", 6, PK_ESC_KEEP_UTF8);
    CHECK_STR(out, "a\\x1b[2Jb");
    pk_escape(out, sizeof out, "f\xc2\x9b" "2J", 5, PK_ESC_KEEP_UTF8);
    CHECK_STR(out, "f\\xc2\\x9b2J");
    pk_escape(out, sizeof out, "x\xe2\x80\xaey", 5, PK_ESC_KEEP_UTF8);
    CHECK_STR(out, "x\\xe2\\x80\\xaey");
    pk_escape(out, sizeof out, "\xe2\x81\xa6\xd8\x9c", 5, PK_ESC_KEEP_UTF8);
    CHECK_STR(out, "\\xe2\\x81\\xa6\\xd8\\x9c");
    pk_escape(out, sizeof out, "\xce\xb1\xc3\xa9", 4, PK_ESC_KEEP_UTF8);
    CHECK_STR(out, "\xce\xb1\xc3\xa9");
}

int main(void) { return pk_test_main(); }
