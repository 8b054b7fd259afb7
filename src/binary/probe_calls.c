/* probe_calls.c — call-site probes recovered from DWARF.
 *
 * clang-19 encodes a call's probe id twice: as a DirectCall/IndirectCall
 * record in `.pseudo_probe` (x86-64) and as the pseudo-probe discriminator of
 * the call's line-table row. Its AArch64 back end emits only the second, so
 * an aarch64 `.pseudo_probe` has block probes alone and every context would
 * be cut at its first call. The discriminators hold all that is missing:
 * the innermost row's gives the call's probe index and type; the call
 * discriminators of the enclosing inlined subroutines give the call-site
 * probes at which each inlined body sits, i.e. the inline-forest node the
 * call belongs to. This file rebuilds those records so that the rest of
 * pgokit sees the same table as for x86.
 *
 * LLVM's packing (PseudoProbeDwarfDiscriminator): bits 0-2 all set mark a
 * probe discriminator; index in bits 3-18, distribution factor 19-25, type
 * 26-27, attributes 28-30. */
#include "binary/probe_loader.h"
#include "common/md5.h"

#include <stdlib.h>

static bool probe_discr(uint32_t d, uint32_t *index, uint8_t *type)
{
    if ((d & 7) != 7)
        return false;
    *index = (d >> 3) & 0xFFFF;
    *type = (uint8_t)((d >> 26) & 3);
    return *index != 0;
}

static uint64_t name_guid(const char *name)
{
    return name ? pk_md5_guid(name, strlen(name)) : 0;
}

/* The child of `parent` for `guid` inlined at call-site probe `site`,
 * appended when the table has none (a body inlined without block probes of
 * its own still names the calls inside it). PK_PROBE_NO_NODE when out of
 * memory. */
static uint32_t child_node(pk_probe_table *t, uint32_t parent, uint64_t guid, uint32_t site)
{
    for (size_t i = 0; i < t->n_nodes; i++)
        if (t->nodes[i].parent == parent && t->nodes[i].guid == guid && t->nodes[i].callsite_probe == site)
            return (uint32_t)i;
    pk_probe_node *nn = pk_xrealloc_array(t->nodes, t->n_nodes + 1, sizeof *nn);
    if (!nn)
        return PK_PROBE_NO_NODE;
    t->nodes = nn;
    nn[t->n_nodes] = (pk_probe_node){guid, parent, site, t->nodes[parent].depth + 1};
    return (uint32_t)t->n_nodes++;
}

/* The call probe of the call instruction at `addr` inside top-level body
 * `top`, from its inline frames; false when the frames do not describe it
 * (no probe discriminator, or names that are not the body's). */
static bool call_probe(pk_probe_table *t, uint32_t top, const pk_frames *fr, pk_probe *out, bool *oom)
{
    size_t n = fr->count;
    if (!n || name_guid(fr->frames[n - 1].func) != t->nodes[top].guid)
        return false;
    uint32_t node = top, index;
    uint8_t type;
    for (size_t i = n - 1; i > 0; i--) {
        /* frames[i] holds the call that inlined frames[i - 1] */
        uint64_t g = name_guid(fr->frames[i - 1].func);
        if (!g || !probe_discr(fr->frames[i].discriminator, &index, &type))
            return false;
        if ((node = child_node(t, node, g, index)) == PK_PROBE_NO_NODE) {
            *oom = true;
            return false;
        }
    }
    if (!probe_discr(fr->frames[0].discriminator, &index, &type) ||
        (type != PK_PROBE_DIRECT_CALL && type != PK_PROBE_INDIRECT_CALL))
        return false;
    out->index = index;
    out->type = type;
    out->node = node;
    return true;
}

/* Calls, and jumps that may be tail calls (to a function's entry, or
 * indirect): x86's .pseudo_probe has call probes on those too. Other
 * instructions share the call's line row (its argument set-up) but are not
 * where the probe sits. */
static bool probed_transfer(const pk_elf *elf, const pk_insn *in)
{
    switch (in->cls) {
    case PK_INSN_CALL:
    case PK_INSN_ICALL:
    case PK_INSN_IJMP:
        return true;
    case PK_INSN_JMP:
    case PK_INSN_CJMP: {
        const pk_elf_symbol *f = pk_elf_func_at(elf, in->target);
        if (f && f->addr == in->target)
            return true;
        /* a tail call into the PLT (`b fprintf@plt`): stubs have no symbols */
        const pk_elf_section *plt = pk_elf_section_by_name(elf, ".plt");
        return plt && in->target >= plt->addr && in->target - plt->addr < plt->size;
    }
    default:
        return false;
    }
}

int pk_probe_info_add_dwarf_calls(pk_probe_info *info, pk_elf *elf, size_t first_node, pk_err *err)
{
    pk_probe_table *t = &info->table;
    const pk_arch *arch = pk_elf_arch(elf);
    if (!arch || !arch->call_probes_in_dwarf || first_node >= t->n_nodes || !pk_elf_has_dwarf(elf))
        return 0;
    for (size_t i = 0; i < t->n; i++)
        if (t->probes[i].type != PK_PROBE_BLOCK)
            return 0; /* a compiler that writes them: nothing to recover */
    pk_symbolizer *sym;
    if (pk_symbolizer_open(&sym, elf, err))
        return -1;
    pk_vec add;
    pk_vec_init(&add, sizeof(pk_probe));
    size_t tops = t->n_nodes;
    int rc = 0;
    bool oom = false;
    for (size_t k = first_node; k < tops && !rc && !oom; k++) {
        if (t->nodes[k].parent != PK_PROBE_NO_NODE)
            continue;
        uint64_t *entry = pk_u64map_get(&info->by_guid, t->nodes[k].guid);
        const pk_elf_symbol *fn = entry ? pk_elf_func_at(elf, *entry) : NULL;
        const uint8_t *code = fn && fn->size ? pk_elf_vaddr_bytes(elf, fn->addr, fn->size) : NULL;
        for (uint64_t off = 0; code && off < fn->size && !rc && !oom;) {
            pk_insn in;
            size_t len = pk_arch_decode(arch, code + off, (size_t)(fn->size - off), fn->addr + off, &in);
            off += len ? len : arch->min_len;
            if (!len || !probed_transfer(elf, &in))
                continue;
            pk_frames fr;
            pk_probe p = {.addr = in.addr, .order = UINT64_MAX};
            if ((rc = pk_symbolize(sym, in.addr, &fr, err)) != 0 || !call_probe(t, (uint32_t)k, &fr, &p, &oom))
                continue;
            pk_probe *slot = pk_vec_push(&add);
            if (!slot)
                oom = true;
            else
                *slot = p;
        }
    }
    pk_symbolizer_close(sym);
    if (!rc && !oom && add.len) {
        /* after every decoded probe at the same address: ties keep section order */
        pk_probe *all = pk_xrealloc_array(t->probes, t->n + add.len, sizeof *all);
        if (!all) {
            oom = true;
        } else {
            t->probes = all;
            memcpy(all + t->n, add.data, add.len * sizeof *all);
            t->n += add.len;
            t->stats.probes += add.len;
            pk_addr_buckets_free(&t->buckets);
            if (pk_sort_by_u64(all, t->n, sizeof *all, offsetof(pk_probe, order)) ||
                pk_sort_by_u64(all, t->n, sizeof *all, offsetof(pk_probe, addr)) ||
                pk_addr_buckets_build(&t->buckets, all, t->n, sizeof *all, offsetof(pk_probe, addr)))
                oom = true;
        }
    }
    pk_vec_free(&add);
    if (!rc && oom)
        rc = pk_err_set(err, "%s: out of memory", pk_elf_path(elf));
    return rc;
}
