/* chains.c — the call chains of IP samples when the user named none (see
 * record.h: pk_record_choose_chains).
 *
 * Why: frame-pointer chains are what perf walks in the kernel, small and
 * exact in code that keeps frame pointers; in code built without them
 * (-O2's default) they skip every caller, and profiles lose the targets of
 * calls through pointers (SQLite's AutoFDO: 78 % of LBR's gain against 88 %
 * with stack copies, four draws of five runs). A stack copy is unwound
 * later with the program's .eh_frame whatever the code keeps. */
#include "record/record.h"

#include "binary/cfi.h"

#include <stdio.h>

void pk_record_choose_chains(const char *exe, pk_record_opts *o, char *why, size_t cap)
{
    pk_elf *elf = NULL;
    pk_cfi *cfi = NULL;
    pk_cfi_frames fr;
    pk_err err;
    if (pk_elf_open(&elf, exe, &err) != 0 || pk_cfi_open(&cfi, elf, &err) != 0 ||
        pk_cfi_frame_pointers(cfi, elf, &fr, &err) != 0) {
        snprintf(why, cap, "frame-pointer chains: %s", err.msg);
    } else if (!fr.bytes) {
        snprintf(why, cap, "frame-pointer chains: %s has no .eh_frame to unwind stack copies with", exe);
    } else {
        /* (no function with a frame at all: nothing to skip either) */
        double share = fr.framed_bytes ? 100.0 * (double)fr.with_fp_bytes / (double)fr.framed_bytes : 100.0;
        if (fr.with_fp_bytes * 2 >= fr.framed_bytes) {
            snprintf(why, cap, "frame-pointer chains: %s sets up a frame pointer in %.0f %% of the code of its "
                     "functions with a frame", exe, share);
        } else {
            o->dwarf_stack = PK_RECORD_AUTO_STACK;
            snprintf(why, cap,
                     "%u-byte stack copies: %s sets up a frame pointer in %.0f %% of the code of its functions with "
                     "a frame (frame-pointer chains would skip their callers; --call-graph fp or dwarf,BYTES to "
                     "choose)", PK_RECORD_AUTO_STACK, exe, share);
        }
    }
    pk_cfi_free(cfi);
    pk_elf_close(elf);
}
