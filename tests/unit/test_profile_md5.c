/* test_profile_md5.c — MD5 and LLVM GUIDs (low 64 bits of the digest, read
 * little-endian). Expected values computed offline with Python's hashlib;
 * 15822663052811949562 is also main's GUID in LLVM's own tests. */
#include "test.h"
#include "common/md5.h"

#include <stdio.h>

static void hexdigest(const void *p, size_t n, char out[33])
{
    uint8_t d[16];
    pk_md5(p, n, d);
    for (int i = 0; i < 16; i++)
        snprintf(out + 2 * i, 3, "%02x", d[i]);
}

TEST(md5_digests)
{
    char h[33];
    hexdigest("", 0, h);
    CHECK_STR(h, "d41d8cd98f00b204e9800998ecf8427e");
    hexdigest("abc", 3, h);
    CHECK_STR(h, "900150983cd24fb0d6963f7d28e17f72");
    char a[1000];
    memset(a, 'a', sizeof a);
    hexdigest(a, 55, h); /* padding fits in the same block */
    CHECK_STR(h, "ef1772b6dff9a122358552954ad0df65");
    hexdigest(a, 56, h); /* padding needs a second block */
    CHECK_STR(h, "3b0c8ac703f828b04c6c197006d17218");
    hexdigest(a, 64, h);
    CHECK_STR(h, "014842d480b571495a4a0363793f7367");
    memset(a, 'x', sizeof a);
    hexdigest(a, 1000, h);
    CHECK_STR(h, "398533d48111e9f664b1f64cb10c4b63");
}

TEST(md5_incremental_equals_oneshot)
{
    char a[300];
    for (int i = 0; i < 300; i++)
        a[i] = (char)(i * 7);
    uint8_t d1[16], d2[16];
    pk_md5(a, sizeof a, d1);
    pk_md5_ctx c;
    pk_md5_init(&c);
    for (size_t off = 0, step = 1; off < sizeof a; off += step, step = step * 3 % 97 + 1)
        pk_md5_update(&c, a + off, off + step > sizeof a ? sizeof a - off : step);
    pk_md5_final(&c, d2);
    CHECK(!memcmp(d1, d2, 16));
}

TEST(llvm_guids)
{
    CHECK_EQ_U64(pk_md5_guid("main", 4), 15822663052811949562ULL);
    CHECK_EQ_U64(pk_md5_guid("foo", 3), 6699318081062747564ULL);
    CHECK_EQ_U64(pk_md5_guid("_ZN4llvm3FooEv", 14), 6047288610639292363ULL);
    CHECK_EQ_U64(pk_md5_guid("", 0), 338333539836370388ULL);
}

int main(void) { return pk_test_main(); }
