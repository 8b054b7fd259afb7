/* pprof_internal.h — what the pprof reader and writer share: the protobuf
 * wire walk and schema check (pprof_wire.c), gzip in and out, and the
 * messages protoc-c generates from profile.proto. */
#ifndef PK_PPROF_INTERNAL_H
#define PK_PPROF_INTERNAL_H

#include "pprof/pprof.h"
#include "pprof/profile.pb-c.h" /* generated into $(BUILD)/gen/pprof by mk/pprof.mk */

/* ---- protobuf wire format ---- */
enum { PW_VARINT = 0, PW_I64 = 1, PW_LEN = 2, PW_SGROUP = 3, PW_EGROUP = 4, PW_I32 = 5 };

/* One field as it sits on the wire. Offsets are from the start of the
 * whole protobuf stream, so errors can name them. */
typedef struct pw_field {
    uint32_t num;
    uint8_t wt;
    uint64_t v;           /* PW_VARINT value; PW_I64/PW_I32 raw bits */
    size_t off;           /* of the tag */
    size_t data, len;     /* PW_LEN payload: [data, data + len) */
} pw_field;

/* An error in the stream: where and what. */
typedef struct pw_error {
    size_t off;
    char msg[384];
} pw_error;

/* Reads a varint at *pos (< end); false when truncated or longer than 10
 * bytes (*pos is then left at its start). */
bool pw_varint(const uint8_t *b, size_t end, size_t *pos, uint64_t *v);
/* Reads the field at *pos of a message that ends at `end`: 1 read, 0 at
 * the end, -1 malformed (e filled; m, when given, names the field). Groups
 * (wire types 3, 4) and the invalid wire types 6, 7 are malformed:
 * profile.proto has none. */
typedef struct pw_mspec pw_mspec;
int pw_next(const uint8_t *b, size_t end, size_t *pos, pw_field *f, const pw_mspec *m, pw_error *e);

/* The schema, for a check that names the first bad byte: protobuf-c only
 * says yes or no. */
typedef enum pw_kind {
    PWK_VARINT,           /* int64/uint64/bool: a varint */
    PWK_REP_VARINT,       /* repeated scalar: varints or packed (LEN of varints) */
    PWK_BYTES,            /* string: LEN */
    PWK_MSG,              /* embedded message: LEN, checked recursively */
} pw_kind;

typedef struct pw_fspec {
    uint32_t num;
    pw_kind kind;
    const char *name;
    const pw_mspec *msg;  /* PWK_MSG */
} pw_fspec;
struct pw_mspec {
    const char *name;
    const pw_fspec *f;
    size_t n;
};

extern const pw_mspec pw_profile, pw_value_type, pw_sample, pw_mapping, pw_location, pw_function;
/* The field spec of field num in m, or NULL for a field the schema does
 * not know (skipped, as protobuf readers do). */
const pw_fspec *pw_spec_field(const pw_mspec *m, uint32_t num);
/* Checks the message [start, end) against m: framing, wire types of known
 * fields, packed contents, embedded messages. 0, or -1 with e filled. */
int pw_check(const pw_mspec *m, const uint8_t *b, size_t start, size_t end, pw_error *e);

/* ---- gzip ---- */
/* Inflates a gzip stream (several members allowed) into a new buffer of at
 * most max bytes. 0, or -1 with err naming `name` and the compressed offset. */
int pk_pprof_gunzip(const uint8_t *in, size_t n, uint64_t max, uint8_t **out, size_t *out_len,
                    const char *name, pk_err *err);

#endif
