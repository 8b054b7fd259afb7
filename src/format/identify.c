/* identify.c — what kind of file a path holds, from its first bytes: every
 * file pgokit writes (sample profiles, raw profiles, temporal profiles,
 * perf.data, pprof, exact counts) and a few it is often handed by mistake
 * (ELF binaries, LLVM instrumentation profiles). The readers of one kind
 * then give the precise error; this only routes, and lets a command say
 * "that is a perf.data file" instead of a text parser's complaint about
 * line 1 of binary data. */
#include "format/format.h"

#include <stdio.h>

/* Bytes that never occur in a text profile: C0 controls other than tab,
 * newline and carriage return, and DEL. */
static bool text_like(const uint8_t *d, size_t n)
{
    if (n > 65536) /* the text reader judges the rest, line by line */
        n = 65536;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = d[i];
        if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f)
            return false;
    }
    return true;
}

pk_file_kind pk_file_identify(const uint8_t *d, size_t n)
{
    if (n == 0)
        return PK_KIND_EMPTY;
    if (n >= 8) {
        if (!memcmp(d, "PKRAWPRF", 8))
            return PK_KIND_RAWPROF;
        if (!memcmp(d, "PGOKRAW\n", 8))
            return PK_KIND_TEMPORAL_RAW;
        if (!memcmp(d, "PGOKTMP\n", 8))
            return PK_KIND_TEMPORAL_INDEXED;
        if (!memcmp(d, "PKEXACT1", 8))
            return PK_KIND_EXACT;
        if (!memcmp(d, "PERFILE2", 8) || !memcmp(d, "PERFFILE", 8) || !memcmp(d, "2ELIFREP", 8) ||
            !memcmp(d, "ELIFFREP", 8))
            return PK_KIND_PERF_DATA;
        uint64_t m = pk_ld64(d);
        /* LLVM's raw (64- and 32-bit) and indexed instrumentation profiles */
        if (m == 0xff6c70726f667281ull || m == 0xff6c70726f665281ull || m == 0xff6c70726f666981ull)
            return PK_KIND_LLVM_INSTR;
    }
    if (n >= 4 && !memcmp(d, "\x7f" "ELF", 4))
        return PK_KIND_ELF;
    switch (pk_prof_detect(d, n)) {
    case PK_FMT_BINARY: return PK_KIND_LLVM_BINARY;
    case PK_FMT_EXTBINARY: return PK_KIND_LLVM_EXTBINARY;
    case PK_FMT_GCC: return PK_KIND_GCC;
    default: break;
    }
    if (n >= 2 && d[0] == 0x1f && d[1] == 0x8b)
        return PK_KIND_PPROF; /* gzip: what pprof profiles are stored as */
    return text_like(d, n) ? PK_KIND_TEXT : PK_KIND_UNKNOWN;
}

const char *pk_file_kind_describe(pk_file_kind k)
{
    switch (k) {
    case PK_KIND_EMPTY: return "an empty file";
    case PK_KIND_TEXT: return "text";
    case PK_KIND_LLVM_BINARY: return "an LLVM binary sample profile";
    case PK_KIND_LLVM_EXTBINARY: return "an LLVM extbinary sample profile";
    case PK_KIND_GCC: return "a GCC AutoFDO profile";
    case PK_KIND_RAWPROF: return "a pgokit raw profile (profgen --raw-only; `pgokit profgen --raw FILE` reads it)";
    case PK_KIND_TEMPORAL_RAW: return "a raw temporal profile of libpgokit_rt (`pgokit merge --temporal` reads it)";
    case PK_KIND_TEMPORAL_INDEXED: return "an indexed temporal profile (`pgokit order --temporal` reads it)";
    case PK_KIND_EXACT: return "an exact-counts file (`pgokit overlap --exact` reads it)";
    case PK_KIND_PERF_DATA: return "a perf.data file (samples; `pgokit profgen --perf FILE` makes a profile of it)";
    case PK_KIND_PPROF: return "gzip data, e.g. a pprof profile (`pgokit profgen --pprof FILE` makes a profile of it)";
    case PK_KIND_ELF: return "an ELF binary (pass it as --binary)";
    case PK_KIND_LLVM_INSTR: return "an LLVM instrumentation profile (.profraw/.profdata: llvm-profdata reads it)";
    default: return "not a profile in any known format";
    }
}

int pk_file_not_a_profile(pk_err *err, const char *path, pk_file_kind k, const uint8_t *d, size_t n)
{
    if (k == PK_KIND_EMPTY)
        return pk_err_set(err, "%s: offset 0: the file is empty (not a profile)", path);
    if (k != PK_KIND_UNKNOWN && k != PK_KIND_TEXT)
        return pk_err_set(err, "%s: not a sample profile: %s", path, pk_file_kind_describe(k));
    char esc[16 * 4 + 1];
    pk_escape(esc, sizeof esc, d, n < 16 ? n : 16, PK_ESC_BACKSLASH);
    return pk_err_set(err, "%s: offset 0: not a profile in any known format (first bytes: \"%s\"%s)", path, esc,
                      n > 16 ? "..." : "");
}
