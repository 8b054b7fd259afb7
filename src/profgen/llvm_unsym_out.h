/* llvm_unsym_out.h — llvm-profgen's unsymbolized text as its
 * --skip-symbolization writes it: of a flat raw profile, and of a probe-based
 * context-sensitive one (a pseudo-probe binary, samples with stacks). Both
 * keep what llvm-profgen keeps: what lies in the binary's function symbols
 * (llvm-profgen disassembles no more), ranges that ran straight (no call,
 * return or jump before their end). The text format: aggregate/llvm_unsym.c. */
#ifndef PK_LLVM_UNSYM_OUT_H
#define PK_LLVM_UNSYM_OUT_H

#include "aggregate/aggregate.h"
#include "binary/binary.h"
#include "unwind/unwind.h"

/* Writes `raw` (addresses relative to `base`). */
int pk_llvm_unsym_write_flat(const pk_rawprof *raw, pk_binary *bin, uint64_t base, const char *path, pk_err *err);

/* Writes `cs` as llvm-profgen does: per context ("[0xSITE @ 0xSITE...]", the
 * callers' call-site addresses outermost first, the leaf function left out,
 * contexts sorted as strings) its ranges then its branches, addresses
 * relative to `base`; only what lies in the binary's function symbols
 * (llvm-profgen disassembles no more), ranges that ran straight (no call,
 * return or jump before their end). Atomic: a failure leaves no file. */
int pk_llvm_unsym_write_cs(const pk_csraw *cs, pk_binary *bin, uint64_t base, const char *path, pk_err *err);

#endif
