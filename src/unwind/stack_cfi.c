/* stack_cfi.c — unwinding a sample's stack copy with CFI (see stack_cfi.h). */
#include "unwind/stack_cfi.h"
#include "aggregate/aggregate.h"

#include <elf.h>
#include <stdlib.h>
#include <string.h>

/* perf's x86-64 register indices (arch/x86/include/uapi/asm/perf_regs.h)
 * to DWARF numbers; -1: not a DWARF general register (flags, segments). */
static const int8_t x86_dwarf[24] = {
    0 /*ax*/, 3 /*bx*/, 2 /*cx*/, 1 /*dx*/, 4 /*si*/, 5 /*di*/, 6 /*bp*/, 7 /*sp*/,
    -1 /*ip*/, -1, -1, -1, -1, -1, -1, -1 /*flags, cs, ss, ds, es, fs, gs*/,
    8, 9, 10, 11, 12, 13, 14, 15 /*r8..r15*/,
};
#define X86_PERF_IP 8
#define A64_PERF_PC 32

uint64_t pk_user_regs_mask(uint16_t machine)
{
    if (machine == EM_X86_64)
        return 1ull << 6 | 1ull << 7 | 1ull << X86_PERF_IP;
    if (machine == EM_AARCH64)
        return 1ull << 29 | 1ull << 30 | 1ull << 31 | 1ull << A64_PERF_PC;
    return 0;
}

bool pk_user_regs_from_perf(pk_user_regs *out, uint16_t machine, uint64_t abi, uint64_t mask, const void *values)
{
    memset(out, 0, sizeof *out);
    if (abi == 0 || !values)
        return false;
    const uint8_t *v = values;
    bool have_pc = false;
    for (unsigned bit = 0, i = 0; bit < 64; bit++) {
        if (!(mask >> bit & 1))
            continue;
        uint64_t val = pk_ld64(v + 8 * i++);
        int dw = -1;
        if (machine == EM_X86_64) {
            if (bit == X86_PERF_IP) {
                out->pc = val;
                have_pc = true;
            } else if (bit < sizeof x86_dwarf) {
                dw = x86_dwarf[bit];
            }
        } else if (machine == EM_AARCH64) {
            if (bit == A64_PERF_PC) {
                out->pc = val;
                have_pc = true;
            } else if (bit <= 31) {
                dw = (int)bit; /* x0..x30, sp = 31 */
            }
        } else {
            return false;
        }
        if (dw >= 0 && dw < PK_CFI_NREGS) {
            out->reg[dw] = val;
            out->known |= 1ull << dw;
        }
    }
    uint16_t sp;
    return have_pc && pk_cfi_abi_regs(machine, &sp, NULL) && (out->known >> sp & 1);
}

/* 8 bytes of the stack copy at runtime address `addr`. */
static bool load(const uint8_t *stack, uint64_t size, uint64_t base, uint64_t addr, uint64_t *out)
{
    if (addr < base || addr - base > size || size - (addr - base) < 8)
        return false;
    *out = pk_ld64(stack + (addr - base));
    return true;
}

size_t pk_stack_unwind(const pk_cfi *cfi, pk_to_link_fn to_link, void *ctx, const pk_user_regs *regs,
                       const uint8_t *stack, uint64_t stack_size, uint64_t *out, size_t max, pk_stack_stop *stop,
                       pk_err *err)
{
    uint16_t sp; /* its DWARF number */
    size_t n = 0;
    if (!max) {
        *stop = PK_STACK_FULL;
        return 0;
    }
    out[n++] = regs->pc;
    if (!pk_cfi_abi_regs(pk_cfi_machine(cfi), &sp, NULL)) {
        *stop = PK_STACK_UNSUPPORTED;
        return n;
    }
    pk_user_regs r = *regs;
    const uint64_t base = regs->reg[sp]; /* the copy starts at the sampled stack pointer */
    for (;;) {
        uint64_t link = to_link(ctx, r.pc);
        if (link == UINT64_MAX) {
            *stop = PK_STACK_EXTERNAL;
            return n;
        }
        /* a return address is after its call: look the call up (the
         * caller's row), not the next instruction, which may start
         * another function or row */
        pk_cfi_row row;
        int got = pk_cfi_row_at(cfi, n == 1 ? link : link - 1, &row, err);
        if (got < 0) {
            *stop = PK_STACK_BAD_CFI;
            return n;
        }
        if (got > 0) {
            *stop = PK_STACK_NO_FDE;
            return n;
        }
        if (row.cfa_expression || row.cfa_reg >= PK_CFI_NREGS || !(r.known >> row.cfa_reg & 1)) {
            *stop = PK_STACK_UNSUPPORTED;
            return n;
        }
        uint64_t cfa = r.reg[row.cfa_reg] + (uint64_t)row.cfa_offset;
        uint16_t ra = row.ra_reg;
        const pk_cfi_rule *rar = ra < PK_CFI_NREGS ? &row.regs[ra] : NULL;
        if (!rar || rar->kind == PK_CFI_UNDEFINED) {
            *stop = PK_STACK_END;
            return n;
        }
        /* a frame that does not move the stack up cannot be left: without
         * this a corrupt copy could loop (a leaf of AArch64 may keep its
         * stack pointer, but then its return address is in the link
         * register, and its caller must move) */
        if (cfa <= r.reg[sp] && !(n == 1 && cfa == r.reg[sp] && rar->kind != PK_CFI_OFFSET)) {
            *stop = PK_STACK_NO_PROGRESS;
            return n;
        }
        pk_user_regs caller = r;
        caller.known = 0;
        for (uint16_t k = 0; k < PK_CFI_NREGS; k++) {
            const pk_cfi_rule *rule = &row.regs[k];
            uint64_t v;
            switch (rule->kind) {
            case PK_CFI_SAME:
                if (r.known >> k & 1) {
                    caller.reg[k] = r.reg[k];
                    caller.known |= 1ull << k;
                }
                break;
            case PK_CFI_OFFSET:
                if (load(stack, stack_size, base, cfa + (uint64_t)rule->offset, &v)) {
                    caller.reg[k] = v;
                    caller.known |= 1ull << k;
                }
                break;
            case PK_CFI_VAL_OFFSET:
                caller.reg[k] = cfa + (uint64_t)rule->offset;
                caller.known |= 1ull << k;
                break;
            case PK_CFI_REGISTER:
                if (r.known >> rule->reg & 1) {
                    caller.reg[k] = r.reg[rule->reg];
                    caller.known |= 1ull << k;
                }
                break;
            default:
                break;
            }
        }
        /* the caller's stack pointer is the CFA by definition */
        caller.reg[sp] = cfa;
        caller.known |= 1ull << sp;
        if (rar->kind == PK_CFI_EXPRESSION) {
            *stop = PK_STACK_UNSUPPORTED;
            return n;
        }
        if (!(caller.known >> ra & 1)) {
            *stop = PK_STACK_UNREADABLE;
            return n;
        }
        uint64_t ret = caller.reg[ra];
        if (ret == 0) {
            *stop = PK_STACK_END;
            return n;
        }
        if (n == max) {
            *stop = PK_STACK_FULL;
            return n;
        }
        out[n++] = ret;
        caller.pc = ret;
        r = caller;
    }
}

const char *pk_stack_stop_name(pk_stack_stop stop)
{
    static const char *const names[] = {"end", "external", "no-fde", "unreadable", "no-progress", "unsupported",
                                        "full", "bad-cfi"};
    return (unsigned)stop < sizeof names / sizeof names[0] ? names[stop] : "?";
}

int pk_stack_unwind_sample(const pk_cfi *cfi, pk_to_link_fn to_link, void *ctx, const pk_sample *s, uint64_t *raw,
                           uint64_t *link, size_t max, size_t *n, pk_stack_stop *stop, pk_err *err)
{
    pk_user_regs regs;
    *n = 0;
    *stop = PK_STACK_END;
    if (!s->stack_size ||
        !pk_user_regs_from_perf(&regs, pk_cfi_machine(cfi), s->regs_abi, s->regs_mask, s->regs_user))
        return 0;
    *n = pk_stack_unwind(cfi, to_link, ctx, &regs, s->stack_user, s->stack_size, raw, max, stop, err);
    if (*stop == PK_STACK_BAD_CFI)
        return -1;
    for (size_t i = 0; i < *n; i++)
        link[i] = to_link(ctx, raw[i]);
    return 0;
}

/* ---- a whole file ---- */

typedef struct file_unwind {
    pk_agg *agg;
    const pk_cfi *cfi;
    pk_unwound_fn each;
    void *ctx;
    pk_err *err;
    uint32_t pid;
    uint64_t raw[PK_STACK_MAX_FRAMES], link[PK_STACK_MAX_FRAMES];
} file_unwind;

static uint64_t file_to_link(void *ctx, uint64_t runtime)
{
    file_unwind *u = ctx;
    return pk_agg_translate(u->agg, u->pid, runtime);
}

static int fu_mmap(void *ctx, const pk_mmap_event *m) { file_unwind *u = ctx; return pk_agg_on_mmap(u->agg, m, u->err); }
static int fu_comm(void *ctx, const pk_comm_event *c) { file_unwind *u = ctx; return pk_agg_on_comm(u->agg, c, u->err); }
static int fu_task(void *ctx, const pk_task_event *t) { file_unwind *u = ctx; return pk_agg_on_task(u->agg, t, u->err); }
static int fu_build_id(void *ctx, const pk_build_id_event *b)
{
    file_unwind *u = ctx;
    return pk_agg_on_build_id(u->agg, b, u->err);
}

static int fu_sample(void *ctx, const pk_sample *s)
{
    file_unwind *u = ctx;
    u->pid = s->pid;
    size_t n;
    pk_stack_stop stop;
    if (pk_stack_unwind_sample(u->cfi, file_to_link, u, s, u->raw, u->link, PK_STACK_MAX_FRAMES, &n, &stop, u->err))
        return -1;
    return n ? u->each(u->ctx, s, u->link, n, stop) : 0;
}

int pk_stack_unwind_file(const char *perf_path, pk_binary *bin, const char *bin_path, pk_unwound_fn each, void *ctx,
                         pk_err *err)
{
    file_unwind *u = calloc(1, sizeof *u);
    pk_agg_segment *segs = NULL;
    pk_agg_target t;
    int rc = -1;
    if (!u)
        return pk_err_set(err, "out of memory");
    *u = (file_unwind){.each = each, .ctx = ctx, .err = err};
    if (pk_binary_cfi(bin, &u->cfi, err) || pk_agg_target_of_elf(&t, &segs, pk_binary_elf(bin), bin_path, err))
        goto out;
    pk_agg_opts ao = {.pid = -1};
    if (!(u->agg = pk_agg_new(&t, &ao, err)))
        goto out;
    pk_perf_callbacks cb = {.ctx = u, .sample = fu_sample, .mmap = fu_mmap, .comm = fu_comm, .task = fu_task,
                             .build_id = fu_build_id};
    pk_perf_stats st;
    rc = pk_perf_read(perf_path, &cb, &st, err);
out:
    pk_agg_free(u->agg);
    free(segs);
    free(u);
    return rc;
}
