/* md5.c — MD5 as specified in RFC 1321, written from the specification. */
#include "common/md5.h"
#include "common/pk_common.h"

static inline uint32_t rol32(uint32_t x, unsigned n) { return (x << n) | (x >> (32 - n)); }

static void md5_block(pk_md5_ctx *c, const uint8_t *p)
{
    uint32_t m[16];
    for (int i = 0; i < 16; i++)
        m[i] = pk_ld32(p + i * 4); /* little-endian words */
    uint32_t a = c->a, b = c->b, cc = c->c, d = c->d;
    /* all 64 steps spelled out (constant shifts and message words): names
     * are hashed by the thousand, every symbol's GUID */
#define MD5_F(x, y, z) (((x) & (y)) | (~(x) & (z)))
#define MD5_G(x, y, z) (((z) & (x)) | (~(z) & (y)))
#define MD5_H(x, y, z) ((x) ^ (y) ^ (z))
#define MD5_I(x, y, z) ((y) ^ ((x) | ~(z)))
#define MD5_STEP(FN, w, x, y, z, k, r) (w) = (x) + rol32((w) + FN((x), (y), (z)) + (k), (r))
    uint32_t x0 = a, x1 = b, x2 = cc, x3 = d;
    MD5_STEP(MD5_F, x0, x1, x2, x3, m[0] + 0xd76aa478u, 7);
    MD5_STEP(MD5_F, x3, x0, x1, x2, m[1] + 0xe8c7b756u, 12);
    MD5_STEP(MD5_F, x2, x3, x0, x1, m[2] + 0x242070dbu, 17);
    MD5_STEP(MD5_F, x1, x2, x3, x0, m[3] + 0xc1bdceeeu, 22);
    MD5_STEP(MD5_F, x0, x1, x2, x3, m[4] + 0xf57c0fafu, 7);
    MD5_STEP(MD5_F, x3, x0, x1, x2, m[5] + 0x4787c62au, 12);
    MD5_STEP(MD5_F, x2, x3, x0, x1, m[6] + 0xa8304613u, 17);
    MD5_STEP(MD5_F, x1, x2, x3, x0, m[7] + 0xfd469501u, 22);
    MD5_STEP(MD5_F, x0, x1, x2, x3, m[8] + 0x698098d8u, 7);
    MD5_STEP(MD5_F, x3, x0, x1, x2, m[9] + 0x8b44f7afu, 12);
    MD5_STEP(MD5_F, x2, x3, x0, x1, m[10] + 0xffff5bb1u, 17);
    MD5_STEP(MD5_F, x1, x2, x3, x0, m[11] + 0x895cd7beu, 22);
    MD5_STEP(MD5_F, x0, x1, x2, x3, m[12] + 0x6b901122u, 7);
    MD5_STEP(MD5_F, x3, x0, x1, x2, m[13] + 0xfd987193u, 12);
    MD5_STEP(MD5_F, x2, x3, x0, x1, m[14] + 0xa679438eu, 17);
    MD5_STEP(MD5_F, x1, x2, x3, x0, m[15] + 0x49b40821u, 22);
    MD5_STEP(MD5_G, x0, x1, x2, x3, m[1] + 0xf61e2562u, 5);
    MD5_STEP(MD5_G, x3, x0, x1, x2, m[6] + 0xc040b340u, 9);
    MD5_STEP(MD5_G, x2, x3, x0, x1, m[11] + 0x265e5a51u, 14);
    MD5_STEP(MD5_G, x1, x2, x3, x0, m[0] + 0xe9b6c7aau, 20);
    MD5_STEP(MD5_G, x0, x1, x2, x3, m[5] + 0xd62f105du, 5);
    MD5_STEP(MD5_G, x3, x0, x1, x2, m[10] + 0x02441453u, 9);
    MD5_STEP(MD5_G, x2, x3, x0, x1, m[15] + 0xd8a1e681u, 14);
    MD5_STEP(MD5_G, x1, x2, x3, x0, m[4] + 0xe7d3fbc8u, 20);
    MD5_STEP(MD5_G, x0, x1, x2, x3, m[9] + 0x21e1cde6u, 5);
    MD5_STEP(MD5_G, x3, x0, x1, x2, m[14] + 0xc33707d6u, 9);
    MD5_STEP(MD5_G, x2, x3, x0, x1, m[3] + 0xf4d50d87u, 14);
    MD5_STEP(MD5_G, x1, x2, x3, x0, m[8] + 0x455a14edu, 20);
    MD5_STEP(MD5_G, x0, x1, x2, x3, m[13] + 0xa9e3e905u, 5);
    MD5_STEP(MD5_G, x3, x0, x1, x2, m[2] + 0xfcefa3f8u, 9);
    MD5_STEP(MD5_G, x2, x3, x0, x1, m[7] + 0x676f02d9u, 14);
    MD5_STEP(MD5_G, x1, x2, x3, x0, m[12] + 0x8d2a4c8au, 20);
    MD5_STEP(MD5_H, x0, x1, x2, x3, m[5] + 0xfffa3942u, 4);
    MD5_STEP(MD5_H, x3, x0, x1, x2, m[8] + 0x8771f681u, 11);
    MD5_STEP(MD5_H, x2, x3, x0, x1, m[11] + 0x6d9d6122u, 16);
    MD5_STEP(MD5_H, x1, x2, x3, x0, m[14] + 0xfde5380cu, 23);
    MD5_STEP(MD5_H, x0, x1, x2, x3, m[1] + 0xa4beea44u, 4);
    MD5_STEP(MD5_H, x3, x0, x1, x2, m[4] + 0x4bdecfa9u, 11);
    MD5_STEP(MD5_H, x2, x3, x0, x1, m[7] + 0xf6bb4b60u, 16);
    MD5_STEP(MD5_H, x1, x2, x3, x0, m[10] + 0xbebfbc70u, 23);
    MD5_STEP(MD5_H, x0, x1, x2, x3, m[13] + 0x289b7ec6u, 4);
    MD5_STEP(MD5_H, x3, x0, x1, x2, m[0] + 0xeaa127fau, 11);
    MD5_STEP(MD5_H, x2, x3, x0, x1, m[3] + 0xd4ef3085u, 16);
    MD5_STEP(MD5_H, x1, x2, x3, x0, m[6] + 0x04881d05u, 23);
    MD5_STEP(MD5_H, x0, x1, x2, x3, m[9] + 0xd9d4d039u, 4);
    MD5_STEP(MD5_H, x3, x0, x1, x2, m[12] + 0xe6db99e5u, 11);
    MD5_STEP(MD5_H, x2, x3, x0, x1, m[15] + 0x1fa27cf8u, 16);
    MD5_STEP(MD5_H, x1, x2, x3, x0, m[2] + 0xc4ac5665u, 23);
    MD5_STEP(MD5_I, x0, x1, x2, x3, m[0] + 0xf4292244u, 6);
    MD5_STEP(MD5_I, x3, x0, x1, x2, m[7] + 0x432aff97u, 10);
    MD5_STEP(MD5_I, x2, x3, x0, x1, m[14] + 0xab9423a7u, 15);
    MD5_STEP(MD5_I, x1, x2, x3, x0, m[5] + 0xfc93a039u, 21);
    MD5_STEP(MD5_I, x0, x1, x2, x3, m[12] + 0x655b59c3u, 6);
    MD5_STEP(MD5_I, x3, x0, x1, x2, m[3] + 0x8f0ccc92u, 10);
    MD5_STEP(MD5_I, x2, x3, x0, x1, m[10] + 0xffeff47du, 15);
    MD5_STEP(MD5_I, x1, x2, x3, x0, m[1] + 0x85845dd1u, 21);
    MD5_STEP(MD5_I, x0, x1, x2, x3, m[8] + 0x6fa87e4fu, 6);
    MD5_STEP(MD5_I, x3, x0, x1, x2, m[15] + 0xfe2ce6e0u, 10);
    MD5_STEP(MD5_I, x2, x3, x0, x1, m[6] + 0xa3014314u, 15);
    MD5_STEP(MD5_I, x1, x2, x3, x0, m[13] + 0x4e0811a1u, 21);
    MD5_STEP(MD5_I, x0, x1, x2, x3, m[4] + 0xf7537e82u, 6);
    MD5_STEP(MD5_I, x3, x0, x1, x2, m[11] + 0xbd3af235u, 10);
    MD5_STEP(MD5_I, x2, x3, x0, x1, m[2] + 0x2ad7d2bbu, 15);
    MD5_STEP(MD5_I, x1, x2, x3, x0, m[9] + 0xeb86d391u, 21);
    a = x0;
    b = x1;
    cc = x2;
    d = x3;
#undef MD5_STEP
#undef MD5_F
#undef MD5_G
#undef MD5_H
#undef MD5_I
    c->a += a;
    c->b += b;
    c->c += cc;
    c->d += d;
}

void pk_md5_init(pk_md5_ctx *c)
{
    c->a = 0x67452301;
    c->b = 0xefcdab89;
    c->c = 0x98badcfe;
    c->d = 0x10325476;
    c->len = 0;
    c->buf_len = 0;
}

void pk_md5_update(pk_md5_ctx *c, const void *data, size_t len)
{
    const uint8_t *p = data;
    c->len += len;
    if (c->buf_len) {
        size_t take = 64 - c->buf_len < len ? 64 - c->buf_len : len;
        memcpy(c->buf + c->buf_len, p, take);
        c->buf_len += take;
        p += take;
        len -= take;
        if (c->buf_len < 64)
            return;
        md5_block(c, c->buf);
        c->buf_len = 0;
    }
    while (len >= 64) {
        md5_block(c, p);
        p += 64;
        len -= 64;
    }
    memcpy(c->buf, p, len);
    c->buf_len = len;
}

void pk_md5_final(pk_md5_ctx *c, uint8_t digest[16])
{
    uint64_t bits = c->len * 8;
    uint8_t pad[72] = {0x80};
    size_t padlen = (c->buf_len < 56 ? 56 : 120) - c->buf_len;
    uint8_t lenb[8];
    for (int i = 0; i < 8; i++)
        lenb[i] = (uint8_t)(bits >> (8 * i));
    pk_md5_update(c, pad, padlen);
    pk_md5_update(c, lenb, 8);
    uint32_t w[4] = {c->a, c->b, c->c, c->d};
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            digest[i * 4 + j] = (uint8_t)(w[i] >> (8 * j));
}

void pk_md5(const void *data, size_t len, uint8_t digest[16])
{
    pk_md5_ctx c;
    pk_md5_init(&c);
    pk_md5_update(&c, data, len);
    pk_md5_final(&c, digest);
}

uint64_t pk_md5_guid(const void *data, size_t len)
{
    uint8_t d[16];
    pk_md5(data, len, d);
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | d[i];
    return v;
}
