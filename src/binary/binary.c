/* binary.c — the profiled binary: executable + where its DWARF lives +
 * per-function instruction arrays decoded on first use. */
#include "binary/binary.h"
#include "binary/cfi.h"
#include "binary/elf_internal.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct func_insns {
    pk_insn *insns;
    size_t count;
} func_insns;

struct pk_binary {
    pk_elf *elf;
    pk_elf *debug;        /* == elf, a separate file, or NULL */
    pk_elf *alt;          /* the debug file's dwz supplementary file, or NULL */
    pk_elf *dwp;          /* the split-DWARF package (--dwp, or BINARY.dwp beside it), or NULL */
    char *origin;         /* pk_binary_debug_origin */
    char *why_not;        /* no debug file: what debuginfod said, or NULL */
    pk_symbolizer *sym;
    pk_cfi *cfi;          /* .eh_frame index, opened on first use */
    pk_u64map decoded;    /* func index → slot in `slots` + 1 */
    pk_vec slots;         /* func_insns */
};

static int open_debug_binary(pk_binary *b, const char *debug_path, pk_err *err)
{
    if (pk_elf_open(&b->debug, debug_path, err) < 0)
        return -1;
    const uint8_t *want, *got;
    size_t want_len, got_len;
    pk_elf_build_id(b->elf, &want, &want_len);
    pk_elf_build_id(b->debug, &got, &got_len);
    if (want_len && (got_len != want_len || memcmp(want, got, want_len))) {
        char w[128], g[128];
        pk_elf_build_id_hex(b->elf, w, sizeof w);
        pk_elf_build_id_hex(b->debug, g, sizeof g);
        return pk_err_set(err, "%s: build-id %s does not match the binary's (%s, build-id %s): "
                               "a debug file of another build",
                          debug_path, *g ? g : "(none)", pk_elf_path(b->elf), w);
    }
    return 0;
}

int pk_binary_open(pk_binary **out, const char *path, const char *debug_path, pk_err *err)
{
    pk_debug_opts o = {.debug_binary = debug_path};
    return pk_binary_open_opts(out, path, &o, err);
}

/* The debug file (b->debug) and how it was found (*how, for the origin). */
static int find_debug(pk_binary *b, const pk_debug_opts *opts, const char **how, pk_err *err)
{
    *how = NULL;
    if (opts && opts->debug_binary) {
        *how = "--debug-binary";
        return open_debug_binary(b, opts->debug_binary, err);
    }
    if (pk_elf_has_dwarf(b->elf)) {
        b->debug = b->elf;
        return 0;
    }
    char *found = NULL;
    if (pk_debuginfo_find(b->elf, opts, &found, how, &b->why_not, err) < 0)
        return -1;
    int rc = found ? pk_elf_open(&b->debug, found, err) : 0;
    free(found);
    return rc;
}

/* The split-DWARF package: --dwp, else llvm-symbolizer's default BINARY.dwp. */
static int open_dwp(pk_binary *b, const char *path, const pk_debug_opts *opts, pk_err *err)
{
    char *dwp = NULL;
    if (opts && opts->dwp) {
        dwp = strdup(opts->dwp);
    } else if (asprintf(&dwp, "%s.dwp", path) < 0) {
        dwp = NULL;
    } else if (access(dwp, R_OK) != 0) {
        free(dwp);
        return 0;
    }
    if (!dwp)
        return pk_err_set(err, "%s: out of memory", path);
    int rc = pk_elf_open(&b->dwp, dwp, err);
    free(dwp);
    return rc;
}

/* b->origin += ", WHAT PATH"; frees it (NULL) when out of memory. */
static void origin_add(pk_binary *b, const char *what, const pk_elf *e)
{
    char *o;
    if (!b->origin || !e)
        return;
    if (asprintf(&o, "%s, %s %s", b->origin, what, pk_elf_path(e)) < 0)
        o = NULL;
    free(b->origin);
    b->origin = o;
}

int pk_binary_open_opts(pk_binary **out, const char *path, const pk_debug_opts *opts, pk_err *err)
{
    *out = NULL;
    pk_binary *b = calloc(1, sizeof *b);
    if (!b)
        return pk_err_set(err, "%s: out of memory", path);
    pk_vec_init(&b->slots, sizeof(func_insns));
    if (pk_u64map_init(&b->decoded, 64) < 0) {
        free(b);
        return pk_err_set(err, "%s: out of memory", path);
    }
    const char *how;
    if (pk_elf_open(&b->elf, path, err) < 0 || find_debug(b, opts, &how, err) < 0)
        goto fail;
    char *alt = NULL;
    if (b->debug && pk_debuginfo_find_alt(b->debug, opts, &alt, err) < 0)
        goto fail;
    if (alt) {
        int rc = pk_elf_open(&b->alt, alt, err);
        free(alt);
        if (rc < 0)
            goto fail;
    }
    if (b->debug && b->debug != b->elf && pk_elf_adopt_symbols(b->elf, b->debug, err) < 0)
        goto fail;
    if (open_dwp(b, path, opts, err) < 0)
        goto fail;
    int n;
    if (!b->debug)
        n = asprintf(&b->origin, "none%s%s", b->why_not ? ": " : "", b->why_not ? b->why_not : "");
    else if (b->debug == b->elf)
        n = asprintf(&b->origin, "the binary itself");
    else
        n = asprintf(&b->origin, "%s (%s)", pk_elf_path(b->debug), how);
    if (n < 0)
        b->origin = NULL;
    origin_add(b, "dwz supplementary file", b->alt);
    origin_add(b, "split-DWARF package", b->dwp);
    if (!b->origin) {
        pk_err_set(err, "%s: out of memory", path);
        goto fail;
    }
    *out = b;
    return 0;
fail:
    pk_binary_close(b);
    return -1;
}

const char *pk_binary_debug_origin(const pk_binary *b) { return b->origin; }

void pk_binary_close(pk_binary *b)
{
    if (!b)
        return;
    pk_symbolizer_close(b->sym);
    pk_cfi_free(b->cfi);
    for (size_t i = 0; i < b->slots.len; i++)
        free(PK_VEC_AT(&b->slots, func_insns, i).insns);
    pk_vec_free(&b->slots);
    pk_u64map_free(&b->decoded);
    /* the executable may hold the debug file's symbols: closed first */
    pk_elf_close(b->elf);
    if (b->debug != b->elf)
        pk_elf_close(b->debug);
    pk_elf_close(b->alt);
    pk_elf_close(b->dwp);
    free(b->origin);
    free(b->why_not);
    free(b);
}

void pk_binary_drop_insns(pk_binary *b)
{
    for (size_t i = 0; i < b->slots.len; i++)
        free(PK_VEC_AT(&b->slots, func_insns, i).insns);
    b->slots.len = 0;
    pk_u64map_clear(&b->decoded);
}

void pk_binary_drop_caches(pk_binary *b)
{
    pk_symbolizer_close(b->sym);
    b->sym = NULL;
    pk_binary_drop_insns(b);
    pk_elf_release_pages(b->elf);
    if (b->debug && b->debug != b->elf)
        pk_elf_release_pages(b->debug);
    if (b->alt)
        pk_elf_release_pages(b->alt);
}

pk_elf *pk_binary_elf(pk_binary *b) { return b->elf; }

int pk_binary_cfi(pk_binary *b, const struct pk_cfi **out, pk_err *err)
{
    if (!b->cfi && pk_cfi_open(&b->cfi, b->elf, err))
        return -1;
    *out = b->cfi;
    return 0;
}
pk_elf *pk_binary_debug_elf(pk_binary *b) { return b->debug; }
const pk_arch *pk_binary_arch(const pk_binary *b) { return pk_elf_arch(b->elf); }

int pk_binary_symbolizer(pk_binary *b, pk_symbolizer **sym, pk_err *err)
{
    *sym = NULL;
    if (!b->sym) {
        if (!b->debug && b->why_not)
            return pk_err_set(err, "%s: no DWARF debug information, and no usable separate debug file: %s",
                              pk_elf_path(b->elf), b->why_not);
        if (!b->debug)
            return pk_err_set(err, "%s: no DWARF debug information, and no separate debug file found (by build-id "
                                   "under /usr/lib/debug and --debug-dir roots, by .gnu_debuglink, or through "
                                   "debuginfod when DEBUGINFOD_URLS is set): give --debug-binary F or --debug-dir DIR",
                              pk_elf_path(b->elf));
        if (pk_symbolizer_open_alt(&b->sym, b->debug, b->alt, err) < 0)
            return -1;
        if (pk_symbolizer_set_dwp(b->sym, b->dwp, err) < 0) {
            pk_symbolizer_close(b->sym);
            b->sym = NULL;
            return -1;
        }
    }
    *sym = b->sym;
    return 0;
}

int pk_binary_decode_range(pk_binary *b, uint64_t begin, uint64_t end, pk_insn **insns, size_t *count,
                           pk_err *err)
{
    *insns = NULL;
    *count = 0;
    if (end <= begin)
        return 0;
    const pk_arch *arch = pk_elf_arch(b->elf);
    if (!arch)
        return pk_err_set(err, "%s: cannot decode instructions of machine %u (x86-64 and AArch64 only)",
                          pk_elf_path(b->elf), (unsigned)pk_elf_machine(b->elf));
    const uint8_t *code = pk_elf_vaddr_bytes(b->elf, begin, end - begin);
    if (!code)
        return pk_err_set(err, "%s: address range 0x%llx-0x%llx is not backed by the file",
                          pk_elf_path(b->elf), (unsigned long long)begin, (unsigned long long)end);
    uint64_t n = end - begin;
    size_t cap = arch->min_len > 1 ? n / arch->min_len + 1 : n / 3 + 16;
    pk_insn *v = malloc(cap * sizeof *v);
    if (!v)
        return pk_err_set(err, "%s: out of memory", pk_elf_path(b->elf));
    size_t k = 0;
    const bool x86 = arch == &pk_arch_x86_64;
    for (uint64_t o = 0; o < n;) {
        if (k == cap) {
            pk_insn *nv = pk_xrealloc_array(v, cap * 2, sizeof *v);
            if (!nv) {
                free(v);
                return pk_err_set(err, "%s: out of memory", pk_elf_path(b->elf));
            }
            v = nv;
            cap *= 2;
        }
        /* (x86-64 calls its decoder directly: inlined into this loop, the
         * function's decoding time stays what it was before the interface) */
        if (x86)
            pk_x86_decode(code + o, (size_t)(n - o), begin + o, &v[k]);
        else
            pk_arch_decode(arch, code + o, (size_t)(n - o), begin + o, &v[k]);
        o += v[k].len;
        k++;
    }
    *insns = v;
    *count = k;
    return 0;
}

/* A size-0 symbol ends at the next symbol's address or its section's end. */
static uint64_t func_end(const pk_elf *e, const pk_elf_symbol *f)
{
    if (f->size)
        return f->addr + f->size;
    size_t n;
    const pk_elf_symbol *all = pk_elf_funcs(e, &n);
    uint64_t end = UINT64_MAX;
    for (size_t i = (size_t)(f - all) + 1; i < n; i++)
        if (all[i].addr > f->addr) {
            end = all[i].addr;
            break;
        }
    const pk_elf_section *s = pk_elf_symbol_section(e, f->shndx);
    if (s && s->addr <= f->addr && s->addr + s->size < end)
        end = s->addr + s->size;
    return end == UINT64_MAX ? f->addr : end;
}

int pk_binary_func_insns(pk_binary *b, const pk_elf_symbol *func, const pk_insn **insns, size_t *count,
                         pk_err *err)
{
    size_t n;
    const pk_elf_symbol *all = pk_elf_funcs(b->elf, &n);
    *insns = NULL;
    *count = 0;
    if (func < all || func >= all + n)
        return pk_err_set(err, "%s: function symbol does not belong to this binary", pk_elf_path(b->elf));
    uint64_t key = (uint64_t)(func - all);
    uint64_t *slot = pk_u64map_get(&b->decoded, key);
    if (slot) {
        func_insns *fi = &PK_VEC_AT(&b->slots, func_insns, *slot - 1);
        *insns = fi->insns;
        *count = fi->count;
        return 0;
    }
    pk_insn *v;
    size_t k;
    if (pk_binary_decode_range(b, func->addr, func_end(b->elf, func), &v, &k, err) < 0)
        return pk_err_prefix(err, "function %s", func->name);
    func_insns *fi = pk_vec_push(&b->slots);
    uint64_t *s = fi ? pk_u64map_slot(&b->decoded, key) : NULL;
    if (!s) {
        if (fi)
            b->slots.len--;
        free(v);
        return pk_err_set(err, "%s: out of memory", pk_elf_path(b->elf));
    }
    fi->insns = v;
    fi->count = k;
    *s = b->slots.len;
    *insns = v;
    *count = k;
    return 0;
}

int pk_binary_decode_one(pk_binary *b, uint64_t vaddr, pk_insn *out)
{
    const pk_arch *arch = pk_elf_arch(b->elf);
    if (!arch)
        return -1;
    /* up to the longest instruction, fewer at the end of the mapped range */
    for (size_t len = arch->max_len; len > 0; len--) {
        const uint8_t *code = pk_elf_vaddr_bytes(b->elf, vaddr, len);
        if (code)
            return pk_arch_decode(arch, code, len, vaddr, out) ? 0 : -1;
    }
    return -1;
}

int pk_binary_range_crosses_uncond(pk_binary *b, uint64_t begin, uint64_t end)
{
    const pk_elf_symbol *f = pk_elf_func_at(b->elf, begin);
    const pk_insn *v;
    size_t n;
    pk_err err;
    if (!f || pk_binary_func_insns(b, f, &v, &n, &err) < 0)
        return 0;
    for (size_t i = pk_insn_lower_bound(v, n, begin); i < n && v[i].addr < end; i++)
        if (pk_insn_is_uncond(v[i].cls))
            return 1;
    return 0;
}

const pk_insn *pk_binary_insn_at(pk_binary *b, uint64_t vaddr, pk_err *err)
{
    const pk_elf_symbol *f = pk_elf_func_at(b->elf, vaddr);
    if (!f)
        return NULL;
    const pk_insn *v;
    size_t n;
    if (pk_binary_func_insns(b, f, &v, &n, err) < 0)
        return NULL;
    size_t i = pk_insn_index(v, n, vaddr);
    return i != SIZE_MAX ? &v[i] : NULL;
}
