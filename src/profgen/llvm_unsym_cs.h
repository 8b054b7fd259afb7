/* llvm_unsym_cs.h — llvm-profgen's unsymbolized text of a probe-based
 * context-sensitive raw profile (what its --skip-symbolization writes for a
 * pseudo-probe binary and samples with stacks). */
#ifndef PK_LLVM_UNSYM_CS_H
#define PK_LLVM_UNSYM_CS_H

#include "binary/binary.h"
#include "unwind/unwind.h"

/* Writes `cs` as llvm-profgen does: per context ("[0xSITE @ 0xSITE...]", the
 * callers' call-site addresses outermost first, the leaf function left out,
 * contexts sorted as strings) its ranges then its branches, addresses
 * relative to `base`; only what lies in the binary's function symbols
 * (llvm-profgen disassembles no more), ranges that ran straight (no call,
 * return or jump before their end). Atomic: a failure leaves no file. */
int pk_llvm_unsym_write_cs(const pk_csraw *cs, pk_binary *bin, uint64_t base, const char *path, pk_err *err);

#endif
