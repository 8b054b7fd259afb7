/* harness.c — the runner behind test.h (linked into every unit test). */
#include "test.h"
#include "binary/binary.h"

#include <stdlib.h>
#include <unistd.h>

#define MAX_TESTS 512
static struct { const char *name; pk_test_fn fn; } tests[MAX_TESTS];
static int ntests;
int pk_test_failed_checks;
static char tmpdir[256];

void pk_test_register(const char *name, pk_test_fn fn)
{
    if (ntests < MAX_TESTS) {
        tests[ntests].name = name;
        tests[ntests].fn = fn;
        ntests++;
    }
}

static void cleanup_tmp(void)
{
    if (tmpdir[0] && !getenv("PK_KEEP_TMP")) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
        if (system(cmd) != 0)
            fprintf(stderr, "warning: could not remove %s\n", tmpdir);
    }
}

const char *pk_test_tmpdir(void)
{
    if (!tmpdir[0]) {
        const char *base = getenv("TMPDIR");
        snprintf(tmpdir, sizeof tmpdir, "%s/pktest.XXXXXX", base ? base : "/tmp");
        if (!mkdtemp(tmpdir)) {
            perror("mkdtemp");
            exit(1);
        }
        atexit(cleanup_tmp);
    }
    return tmpdir;
}

const char *pk_test_srcdir(void)
{
    const char *d = getenv("PK_TEST_SRCDIR");
    return d ? d : "tests";
}

char *pk_test_path(const char *name)
{
    static char buf[16][1024];
    static unsigned k;
    char *p = buf[k++ % 16];
    snprintf(p, sizeof buf[0], "%s/%s", pk_test_tmpdir(), name);
    return p;
}

const char *pk_test_build(const char *name, const char *cc, const char *flags, const char *source)
{
    static char paths[32][512];
    static int n;
    for (int i = 0; i < n; i++)
        if (!strcmp(strrchr(paths[i], '/') + 1, name))
            return paths[i];
    if (n == 32)
        return NULL;
    snprintf(paths[n], sizeof paths[n], "%s/%s", pk_test_tmpdir(), name);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s %s %s/programs/%s -o %s", cc, flags, pk_test_srcdir(), source, paths[n]);
    if (system(cmd) != 0)
        return NULL;
    return paths[n++];
}

pk_elf *pk_test_open_elf(const char *bin)
{
    pk_elf *e = NULL;
    pk_err err;
    if (!bin) {
        pk_test_failed_checks++;
        fprintf(stderr, "fixture not built (see the compiler's message above)\n");
    } else if (pk_elf_open(&e, bin, &err)) {
        pk_test_failed_checks++;
        fprintf(stderr, "%s: %s\n", bin, err.msg);
        e = NULL;
    }
    return e;
}

int pk_test_main(void)
{
    int passed = 0, failed = 0;
    const char *only = getenv("PK_TEST_ONLY");
    for (int i = 0; i < ntests; i++) {
        if (only && !strstr(tests[i].name, only))
            continue;
        int before = pk_test_failed_checks;
        tests[i].fn();
        if (pk_test_failed_checks == before) {
            passed++;
        } else {
            failed++;
            fprintf(stderr, "FAIL %s\n", tests[i].name);
        }
    }
    printf("unit: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
