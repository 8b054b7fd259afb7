/* llvm_unsym_out.h — llvm-profgen's unsymbolized text as its
 * --skip-symbolization writes it: of a flat raw profile, of a probe-based
 * context-sensitive one (a pseudo-probe binary, samples with stacks), and of
 * a line-based one (source-frame contexts); and the line-based context text
 * read back (--unsymbolized-profile; the flat text: aggregate/). The writers
 * keep what llvm-profgen keeps: what lies in the binary's function symbols
 * (llvm-profgen disassembles no more), ranges that ran straight (no call,
 * return or jump before their end). The text format: aggregate/llvm_unsym.c. */
#ifndef PK_LLVM_UNSYM_OUT_H
#define PK_LLVM_UNSYM_OUT_H

#include "aggregate/aggregate.h"
#include "binary/binary.h"
#include "profgen/profgen.h"
#include "unwind/unwind.h"

/* Writes `raw` (addresses relative to `base`). */
int pk_llvm_unsym_write_flat(const pk_rawprof *raw, pk_binary *bin, uint64_t base, const char *path, pk_err *err);

/* Writes `cs` as llvm-profgen does: per context ("[0xSITE @ 0xSITE...]", the
 * callers' call-site addresses outermost first, the leaf function left out,
 * contexts sorted as strings) its ranges then its branches, addresses
 * relative to `base`; branches from outside the binary in the root context
 * "[]", as llvm-profgen records them; only what lies in the binary's function symbols
 * (llvm-profgen disassembles no more), ranges that ran straight (no call,
 * return or jump before their end). Atomic: a failure leaves no file. */
int pk_llvm_unsym_write_cs(const pk_csraw *cs, pk_binary *bin, uint64_t base, const char *path, pk_err *err);

/* Writes `cs` (a binary without pseudo-probes) as llvm-profgen's line-based
 * context text: contexts named by source frames ("[main:1 @ foo:3 @ bar]",
 * the leaf's inline frames included, its location left out), each range cut
 * where the inline frames of its instructions change, each piece and branch
 * under the frames of its first instruction (its source); branches from
 * outside the binary, and code without debug information, under "[]".
 * Recursion compression and depth trimming as `opts` asks (llvm-profgen
 * shapes these keys as it makes them). See pk_profgen_line_cs_keys. */
int pk_llvm_unsym_write_line_cs(const pk_csraw *cs, pk_binary *bin, uint64_t base, const pk_profgen_opts *opts,
                                const char *path, pk_err *err);

/* Writes contexts read by pk_llvm_unsym_read_ctx (`cs`, their names in
 * `ps`) back as the same text. */
int pk_llvm_unsym_write_named(const pk_csraw *cs, pk_profset *ps, pk_binary *bin, uint64_t base, const char *path,
                              pk_err *err);

/* Reads llvm-profgen's unsymbolized text, flat or with line-based contexts:
 * counts outside any context into `flat`; each context interned into `ps`
 * and its counts kept in `cs` (initialised, based at the binary's preferred
 * base) under the one-element context {its id} (PK_LINE_CTX_NONE for "[]"),
 * the input of pk_profgen_line_cs_named. Probe-based context text
 * ("[0x...]") is refused; errors name the line. */
int pk_llvm_unsym_read_ctx(pk_rawprof *flat, pk_csraw *cs, pk_profset *ps, const char *path, uint64_t base,
                           pk_err *err);

#endif
