/* md5.h — MD5 (RFC 1321) and the GUID LLVM derives from it.
 *
 * LLVM's MD5Hash(name) / Function::getGUID(name) take the 16-byte digest
 * and read its FIRST 8 bytes as a little-endian u64 (MD5Result::low()).
 * That value names functions in MD5 profiles and in pseudo-probe
 * descriptors. */
#ifndef PK_MD5_H
#define PK_MD5_H

#include <stddef.h>
#include <stdint.h>

typedef struct pk_md5_ctx {
    uint32_t a, b, c, d;
    uint64_t len;          /* bytes hashed so far */
    uint8_t buf[64];
    size_t buf_len;
} pk_md5_ctx;

void pk_md5_init(pk_md5_ctx *c);
void pk_md5_update(pk_md5_ctx *c, const void *data, size_t len);
void pk_md5_final(pk_md5_ctx *c, uint8_t digest[16]);
void pk_md5(const void *data, size_t len, uint8_t digest[16]);
/* Low 64 bits of MD5(data), as LLVM's MD5Hash. */
uint64_t pk_md5_guid(const void *data, size_t len);

#endif
