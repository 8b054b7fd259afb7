/* test.h — a minimal unit-test kit. Each tests/unit/test_<x>.c is one program:
 *   TEST(name) { CHECK(cond); CHECK_EQ_U64(a, b); CHECK_STR(a, b); }
 *   int main(void) { return pk_test_main(); }
 * It prints one line per failed check and a closing "N passed, N failed" line.
 * Tests register themselves through constructors, so there is no list to keep. */
#ifndef PK_TEST_H
#define PK_TEST_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef void (*pk_test_fn)(void);
void pk_test_register(const char *name, pk_test_fn fn);
int pk_test_main(void);
extern int pk_test_failed_checks;
/* A scratch directory for this test program (created once, removed at exit
 * unless PK_KEEP_TMP is set). */
const char *pk_test_tmpdir(void);
/* tmpdir/NAME, in one of 16 buffers used in turn (a path outlives the
 * next 15 calls). */
char *pk_test_path(const char *name);
/* Directory holding the test binaries' sources (tests/), for fixtures. */
const char *pk_test_srcdir(void);
/* Builds tests/programs/SOURCE with `cc flags` into tmpdir/NAME, once per
 * NAME in this program; the path, or NULL if the compiler failed. */
const char *pk_test_build(const char *name, const char *cc, const char *flags, const char *source);
/* Opens a built fixture (pk_test_build's path) as an ELF file; NULL, with a
 * failed check and the reason printed, when bin is NULL or does not open. */
struct pk_elf;
struct pk_elf *pk_test_open_elf(const char *bin);

#define TEST(name)                                                        \
    static void test_##name(void);                                        \
    __attribute__((constructor)) static void register_##name(void)        \
    { pk_test_register(#name, test_##name); }                             \
    static void test_##name(void)

#define CHECK(cond)                                                       \
    do { if (!(cond)) { pk_test_failed_checks++;                          \
        fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); } } while (0)

#define CHECK_EQ_U64(a, b)                                                \
    do { unsigned long long a_ = (unsigned long long)(a), b_ = (unsigned long long)(b); \
        if (a_ != b_) { pk_test_failed_checks++;                          \
        fprintf(stderr, "%s:%d: %s == %s failed: 0x%llx != 0x%llx\n",     \
                __FILE__, __LINE__, #a, #b, a_, b_); } } while (0)

#define CHECK_STR(a, b)                                                   \
    do { const char *a_ = (a), *b_ = (b);                                 \
        if (!a_ || !b_ || strcmp(a_, b_)) { pk_test_failed_checks++;      \
        fprintf(stderr, "%s:%d: %s == %s failed: \"%s\" != \"%s\"\n",     \
                __FILE__, __LINE__, #a, #b, a_ ? a_ : "(null)", b_ ? b_ : "(null)"); } } while (0)

/* Fails the test and returns from it when an operation reported an error. */
#define CHECK_OK(expr, errp)                                              \
    do { if ((expr) != 0) { pk_test_failed_checks++;                      \
        fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #expr, (errp)->msg); \
        return; } } while (0)

#endif
