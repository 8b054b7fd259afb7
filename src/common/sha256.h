/* sha256.h — SHA-256 (FIPS 180-4): the digest a Content-Security-Policy
 * names a page's own script by. */
#ifndef PK_SHA256_H
#define PK_SHA256_H

#include <stddef.h>
#include <stdint.h>

void pk_sha256(const void *data, size_t len, uint8_t digest[32]);
/* Standard base64 (with padding) of n bytes into out (4 * ((n + 2) / 3) + 1
 * bytes, NUL included). */
void pk_base64(const uint8_t *data, size_t n, char *out);

#endif
