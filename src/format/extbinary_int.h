/* extbinary_int.h — constants of LLVM's binary sample-profile formats,
 * private to src/format/. */
#ifndef PK_EXTBINARY_INT_H
#define PK_EXTBINARY_INT_H

#include "format/format.h"

/* "SPROF42" << 8 | format byte, stored as ULEB128. */
#define PK_SPROF_MAGIC_BASE 0x5350524f46343200ULL
#define PK_SPROF_FMT_BINARY 0xff
#define PK_SPROF_FMT_EXTBINARY 0x04
#define PK_SPROF_VERSION 103

enum {
    PK_SEC_SUMMARY = 1,
    PK_SEC_NAMETABLE = 2,
    PK_SEC_SYMLIST = 3,
    PK_SEC_FUNCOFFSET = 4,
    PK_SEC_FUNCMETA = 5,
    PK_SEC_CSNAMETABLE = 6,
    PK_SEC_LBRPROFILE = 0x20,
};

#define PK_SECFLAG_COMPRESS 0x1ULL
#define PK_SECFLAG_FLAT 0x2ULL
#define PK_SECFLAG_NAME_MD5 (1ULL << 32)
#define PK_SECFLAG_NAME_FIXEDMD5 (2ULL << 32)
#define PK_SECFLAG_NAME_UNIQ (4ULL << 32)
#define PK_SECFLAG_SUMMARY_PARTIAL (1ULL << 32)
#define PK_SECFLAG_SUMMARY_FULLCTX (2ULL << 32)
#define PK_SECFLAG_SUMMARY_FS (4ULL << 32)
#define PK_SECFLAG_SUMMARY_PREINLINED (16ULL << 32)
#define PK_SECFLAG_META_PROBE (1ULL << 32)
#define PK_SECFLAG_META_ATTR (2ULL << 32)
#define PK_SECFLAG_FUNCOFF_ORDERED (1ULL << 32)

#endif
