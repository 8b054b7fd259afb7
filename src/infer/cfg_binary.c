/* cfg_binary.c — the CFG of a function of a pk_binary: decoding, jump
 * tables, stop instructions and noreturn callees (PLT stubs included). */
#include "infer/infer_int.h"

#include <elf.h>

struct pk_cfg_noreturn {
    pk_elf *elf;
    pk_u64map slots;   /* GOT slot address → 1 when its symbol is noreturn */
    pk_u64map imports; /* GOT slot address → 1 when its symbol is not defined here */
    pk_vec taken;      /* uint64_t: code addresses held by data, sorted, unique */
};

/* Functions that never return, by linkage name. The binary does not carry
 * the attribute, so this list is what tells them apart. */
static bool noreturn_name(const char *name)
{
    static const char *const names[] = {
        "abort", "exit", "_exit", "_Exit", "quick_exit", "__assert_fail", "__assert_perror_fail",
        "__assert", "__stack_chk_fail", "__stack_chk_fail_local", "__fortify_fail", "__chk_fail",
        "__cxa_throw", "__cxa_rethrow", "__cxa_bad_cast", "__cxa_bad_typeid",
        "__cxa_throw_bad_array_new_length", "__cxa_call_unexpected", "__cxa_pure_virtual",
        "__cxa_deleted_virtual", "__cxa_call_terminate", "_Unwind_Resume", "longjmp", "_longjmp",
        "siglongjmp", "__longjmp_chk", "pthread_exit", "err", "errx", "verr", "verrx",
        "_ZSt9terminatev", "__ubsan_handle_builtin_unreachable", "__ubsan_handle_missing_return",
        "__libc_start_main",
    };
    if (!name)
        return false;
    size_t len = strcspn(name, "@");   /* "abort@GLIBC_2.2.5" */
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strlen(names[i]) == len && !memcmp(names[i], name, len))
            return true;
    /* std::__throw_bad_alloc() and its siblings */
    return !strncmp(name, "_ZSt", 4) && strstr(name, "__throw_") != NULL;
}

/* Adds the GOT slots whose relocation names a noreturn function, and the
 * code addresses RELATIVE relocations put in data. */
static int scan_relocs(pk_cfg_noreturn *nr, const pk_elf_section *rs, pk_err *err)
{
    pk_elf *elf = nr->elf;
    const pk_arch *arch = pk_elf_arch(elf);
    if (!arch)
        return 0;
    const pk_elf_section *sym, *str;
    const uint8_t *rd, *sd, *strd;
    size_t rn, sn, strn;
    if (pk_elf_section_data(elf, rs, &rd, &rn, err) != 0)
        return -1;
    /* sh_link is not kept by pk_elf_section; the dynamic relocations always
     * refer to .dynsym. */
    sym = pk_elf_section_by_name(elf, ".dynsym");
    str = pk_elf_section_by_name(elf, ".dynstr");
    sd = strd = NULL;
    sn = strn = 0;
    if (sym && str &&
        (pk_elf_section_data(elf, sym, &sd, &sn, err) != 0 || pk_elf_section_data(elf, str, &strd, &strn, err) != 0))
        return -1;
    for (size_t off = 0; off + sizeof(Elf64_Rela) <= rn; off += sizeof(Elf64_Rela)) {
        uint64_t slot = pk_ld64(rd + off), info = pk_ld64(rd + off + 8);
        uint32_t type = (uint32_t)ELF64_R_TYPE(info), si = (uint32_t)ELF64_R_SYM(info);
        if (type == arch->reloc_relative) {
            uint64_t addr = pk_ld64(rd + off + 16);
            if (pk_elf_func_at(elf, addr)) {
                uint64_t *t = pk_vec_push(&nr->taken);
                if (!t)
                    return pk_err_set(err, "%s: out of memory", pk_elf_path(elf));
                *t = addr;
            }
            continue;
        }
        if ((type != arch->reloc_jump_slot && type != arch->reloc_glob_dat) || si == 0 || !sd)
            continue;
        if ((uint64_t)(si + 1) * sizeof(Elf64_Sym) > sn)
            return pk_err_set(err, "%s: offset %llu: relocation names symbol %u past .dynsym",
                              pk_elf_path(elf), (unsigned long long)(rs->offset + off), si);
        uint32_t name = pk_ld32(sd + (size_t)si * sizeof(Elf64_Sym));
        uint16_t shndx = pk_ld16(sd + (size_t)si * sizeof(Elf64_Sym) + offsetof(Elf64_Sym, st_shndx));
        if (shndx == SHN_UNDEF) {
            uint64_t *v = pk_u64map_slot(&nr->imports, slot);
            if (!v)
                return pk_err_set(err, "%s: out of memory", pk_elf_path(elf));
            *v = 1;
        }
        if (name >= strn || !memchr(strd + name, 0, strn - name))
            continue;
        if (noreturn_name((const char *)strd + name)) {
            uint64_t *v = pk_u64map_slot(&nr->slots, slot);
            if (!v)
                return pk_err_set(err, "%s: out of memory", pk_elf_path(elf));
            *v = 1;
        }
    }
    return 0;
}

int pk_cfg_noreturn_open(pk_cfg_noreturn **out, pk_binary *bin, pk_err *err)
{
    *out = NULL;
    pk_cfg_noreturn *nr = calloc(1, sizeof *nr);
    if (!nr)
        return pk_err_set(err, "out of memory");
    nr->elf = pk_binary_elf(bin);
    pk_vec_init(&nr->taken, sizeof(uint64_t));
    for (size_t i = 1; i < pk_elf_num_sections(nr->elf); i++) {
        const pk_elf_section *s = pk_elf_section_at(nr->elf, i);
        if (s->type == SHT_RELA && (s->flags & SHF_ALLOC) && scan_relocs(nr, s, err) != 0) {
            pk_cfg_noreturn_close(nr);
            return -1;
        }
    }
    nr->taken.len = pk_u64_sort_unique(nr->taken.data, nr->taken.len);
    *out = nr;
    return 0;
}

void pk_cfg_noreturn_close(pk_cfg_noreturn *nr)
{
    if (!nr)
        return;
    pk_u64map_free(&nr->slots);
    pk_u64map_free(&nr->imports);
    pk_vec_free(&nr->taken);
    free(nr);
}

bool pk_cfg_noreturn_call(const pk_cfg_noreturn *nr, uint64_t target)
{
    if (!nr)
        return false;
    const pk_elf_symbol *f = pk_elf_func_at(nr->elf, target);
    if (f && f->addr == target)
        return noreturn_name(f->name);
    /* A PLT stub jumping through the GOT slot of a noreturn function */
    const pk_arch *arch = pk_elf_arch(nr->elf);
    const uint8_t *p = arch ? pk_elf_vaddr_bytes(nr->elf, target, arch->plt_len) : NULL;
    uint64_t slot;
    if (!p || nr->slots.len == 0 || !arch->plt_slot(p, target, &slot))
        return false;
    const uint64_t *v = pk_u64map_get(&nr->slots, slot);
    return v && *v;
}

/* The GOT slot an x86-64 `call *slot(%rip)` (what -fno-plt and glibc's
 * _start emit) reads its target from; 0 for any other instruction. */
static uint64_t icall_slot(const pk_cfg_noreturn *nr, uint64_t addr, uint32_t len)
{
    if (pk_elf_machine(nr->elf) != EM_X86_64 || len < 6)
        return 0;
    const uint8_t *p = pk_elf_vaddr_bytes(nr->elf, addr, len);
    if (!p)
        return 0;
    size_t o = len - 6;   /* prefixes (notrack, bnd) before ff 15 disp32 */
    if (p[o] != 0xff || p[o + 1] != 0x15)
        return 0;
    return addr + len + (uint64_t)(int64_t)(int32_t)pk_ld32(p + o + 2);
}

/* An indirect call through a GOT slot to a noreturn function. */
static bool noreturn_icall(const pk_cfg_noreturn *nr, const pk_insn *in)
{
    if (!nr || nr->slots.len == 0)
        return false;
    uint64_t slot = icall_slot(nr, in->addr, in->len);
    const uint64_t *v = slot ? pk_u64map_get(&nr->slots, slot) : NULL;
    return v && *v;
}

bool pk_cfg_icall_to_import(const pk_cfg_noreturn *nr, uint64_t addr, uint32_t len)
{
    if (!nr || nr->imports.len == 0)
        return false;
    uint64_t slot = icall_slot(nr, addr, len);
    const uint64_t *v = slot ? pk_u64map_get(&nr->imports, slot) : NULL;
    return v && *v;
}

static int cmp_range(const void *a, const void *b)
{
    const pk_addr_range *x = a, *y = b;
    return x->begin < y->begin ? -1 : x->begin > y->begin;
}

/* ud2, hlt, int3 (udf, brk, hlt on AArch64): execution does not go on after them. */
static bool stop_insn(const pk_elf *elf, const pk_arch *arch, const pk_insn *in)
{
    if (in->cls != PK_INSN_OTHER || !arch || in->len > arch->trap_max_len)
        return false;
    const uint8_t *p = pk_elf_vaddr_bytes(elf, in->addr, in->len);
    return p && arch->is_trap(p, in->len);
}

int pk_cfg_build_binary(pk_cfg *cfg, pk_binary *bin, const pk_cfg_noreturn *nr, const pk_addr_range *ranges,
                        size_t nranges, uint64_t entry, pk_err *err)
{
    memset(cfg, 0, sizeof *cfg);
    pk_elf *elf = pk_binary_elf(bin);
    const pk_arch *arch = pk_binary_arch(bin);
    pk_addr_range *rs = malloc((nranges ? nranges : 1) * sizeof *rs);
    pk_vec insns, stops, targets, tables;
    pk_vec_init(&insns, sizeof(pk_insn));
    pk_vec_init(&stops, sizeof(uint64_t));
    pk_vec_init(&targets, sizeof(uint64_t));
    pk_vec_init(&tables, sizeof(pk_cfg_jtable));
    int rc = -1;
    if (nranges == 0) {
        pk_err_set(err, "%s: no address range for the function at 0x%llx", pk_elf_path(elf), (unsigned long long)entry);
        goto out;
    }
    if (!rs) {
        pk_err_set(err, "out of memory");
        goto out;
    }
    memcpy(rs, ranges, nranges * sizeof *rs);
    qsort(rs, nranges, sizeof *rs, cmp_range);
    for (size_t i = 0; i < nranges; i++) {
        if (i > 0 && rs[i].begin < rs[i - 1].end) {
            pk_err_set(err, "%s: function ranges 0x%llx-0x%llx and 0x%llx-0x%llx overlap", pk_elf_path(elf),
                       (unsigned long long)rs[i - 1].begin, (unsigned long long)rs[i - 1].end,
                       (unsigned long long)rs[i].begin, (unsigned long long)rs[i].end);
            goto out;
        }
        pk_insn *v;
        size_t k;
        if (pk_binary_decode_range(bin, rs[i].begin, rs[i].end, &v, &k, err) != 0)
            goto out;
        if (pk_vec_reserve(&insns, insns.len + k) != 0) {
            free(v);
            pk_err_set(err, "out of memory");
            goto out;
        }
        if (k)
            memcpy((pk_insn *)insns.data + insns.len, v, k * sizeof *v);
        insns.len += k;
        free(v);
    }
    const pk_insn *in = insns.data;
    size_t n = insns.len;
    /* Tables first (their targets go into one vector that may move: the
     * pointers are set once it is complete). */
    pk_vec starts;
    pk_vec_init(&starts, sizeof(size_t));
    uint32_t untabled = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t *s = NULL;
        /* Jump tables of x86-64 and AArch64 code; elsewhere an indirect
         * jump has unknown targets. */
        if (in[i].cls == PK_INSN_IJMP && (arch == &pk_arch_x86_64 || arch == &pk_arch_aarch64)) {
            size_t before = targets.len;
            int r = arch == &pk_arch_x86_64 ? pk_jtable_resolve(elf, in, n, i, &targets, err)
                                            : pk_jtable_resolve_a64(elf, in, n, i, &targets, err);
            if (r < 0) {
                pk_vec_free(&starts);
                goto out;
            }
            /* left unresolved and no switch at all: a call through a pointer */
            if (r == 0 && arch == &pk_arch_x86_64 && !pk_jtable_form(elf, in, n, i))
                untabled++;
            if (r > 0) {
                pk_cfg_jtable *t = pk_vec_push(&tables);
                size_t *st = pk_vec_push(&starts);
                if (!t || !st) {
                    pk_vec_free(&starts);
                    pk_err_set(err, "out of memory");
                    goto out;
                }
                t->ijmp = in[i].addr;
                t->ntargets = (uint32_t)(targets.len - before);
                t->guessed = r == 2;
                *st = before;
            }
        } else if ((in[i].cls == PK_INSN_CALL && pk_cfg_noreturn_call(nr, in[i].target)) ||
                   (in[i].cls == PK_INSN_ICALL && noreturn_icall(nr, &in[i])) || stop_insn(elf, arch, &in[i]) ||
                   /* a call followed by ud2 / hlt / int3 is not expected to return */
                   ((in[i].cls == PK_INSN_CALL || in[i].cls == PK_INSN_ICALL) && i + 1 < n &&
                    in[i].addr + in[i].len == in[i + 1].addr && stop_insn(elf, arch, &in[i + 1]))) {
            if (!(s = pk_vec_push(&stops))) {
                pk_vec_free(&starts);
                pk_err_set(err, "out of memory");
                goto out;
            }
            *s = in[i].addr;
        }
    }
    for (size_t i = 0; i < tables.len; i++)
        PK_VEC_AT(&tables, pk_cfg_jtable, i).targets = (const uint64_t *)targets.data + PK_VEC_AT(&starts, size_t, i);
    pk_vec_free(&starts);
    stops.len = pk_u64_sort_unique(stops.data, stops.len);
    /* code addresses data holds, inside the function's ranges */
    pk_vec taken;
    pk_vec_init(&taken, sizeof(uint64_t));
    const uint64_t *all = nr ? nr->taken.data : NULL;
    size_t nall = nr ? nr->taken.len : 0;
    for (size_t r = 0; r < nranges && nall; r++)
        for (size_t i = pk_u64_lower_bound(all, nall, rs[r].begin); i < nall && all[i] < rs[r].end; i++) {
            uint64_t *t = pk_vec_push(&taken);
            if (!t) {
                pk_vec_free(&taken);
                pk_err_set(err, "out of memory");
                goto out;
            }
            *t = all[i];
        }
    pk_cfg_hints h = {.tables = tables.data, .ntables = tables.len, .stops = stops.data, .nstops = stops.len,
                      .taken = taken.data, .ntaken = taken.len};
    rc = pk_cfg_build(cfg, in, n, entry, &h, err);
    pk_vec_free(&taken);
    if (rc == 0)
        cfg->ijumps_untabled = untabled;
    if (rc != 0)
        pk_err_prefix(err, "%s", pk_elf_path(elf));
out:
    free(rs);
    pk_vec_free(&insns);
    pk_vec_free(&stops);
    pk_vec_free(&targets);
    pk_vec_free(&tables);
    return rc;
}
