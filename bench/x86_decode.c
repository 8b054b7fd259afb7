/* x86_decode.c — driver of bench/x86_decode.sh: decodes every instruction of
 * every function symbol of the given ELF files with the fast decoder
 * (pk_x86_decode) and with Zydis alone (pk_x86_decode_zydis).
 *   x86_decode diff FILE...        agreement and fast-path coverage
 *   x86_decode fast|zydis REPS FILE...   time one decoder (for valgrind too) */
#include "binary/binary.h"
#include "binary/x86_tables.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef size_t (*decode_fn)(const uint8_t *, size_t, uint64_t, pk_insn *);

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    int diff = !strcmp(argv[1], "diff");
    decode_fn fn = !strcmp(argv[1], "zydis") ? pk_x86_decode_zydis : pk_x86_decode;
    int reps = diff ? 1 : atoi(argv[2]);
    for (int fi = diff ? 2 : 3; fi < argc; fi++) {
        pk_elf *e;
        pk_err err;
        if (pk_elf_open(&e, argv[fi], &err)) {
            fprintf(stderr, "%s\n", err.msg);
            return 1;
        }
        size_t nf, total = 0, fast = 0, bad = 0;
        const pk_elf_symbol *fs = pk_elf_funcs(e, &nf);
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (int r = 0; r < reps; r++)
            for (size_t i = 0; i < nf; i++) {
                const pk_elf_symbol *f = &fs[i];
                if (f->is_alias || f->size == 0)
                    continue;
                const uint8_t *c = pk_elf_vaddr_bytes(e, f->addr, f->size);
                if (!c)
                    continue;
                for (size_t o = 0; o < f->size;) {
                    pk_insn a, b;
                    size_t n = fn(c + o, f->size - o, f->addr + o, &a);
                    total++;
                    if (diff) {
                        size_t nz = pk_x86_decode_zydis(c + o, f->size - o, f->addr + o, &b);
                        fast += pk_x86_decode_fast(c + o, f->size - o, f->addr + o, &b) != 0;
                        pk_x86_decode_zydis(c + o, f->size - o, f->addr + o, &b);
                        if (n != nz || a.len != b.len || a.cls != b.cls || a.target != b.target) {
                            if (bad++ < 20) {
                                fprintf(stderr, "%s %s+0x%zx:", argv[fi], f->name, o);
                                for (size_t k = 0; k < 15 && o + k < f->size; k++)
                                    fprintf(stderr, " %02x", c[o + k]);
                                fprintf(stderr, ": fast %zu %s %llx, zydis %zu %s %llx\n", n,
                                        pk_insn_class_name(a.cls), (unsigned long long)a.target, nz,
                                        pk_insn_class_name(b.cls), (unsigned long long)b.target);
                            }
                        }
                    }
                    o += n ? n : 1;
                }
            }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
        if (diff)
            printf("%s: %zu instructions, fast path %.3f%%, %zu mismatches\n", argv[fi], total,
                   100.0 * (double)fast / (double)(total ? total : 1), bad);
        else
            printf("%s: %s: %zu instructions in %.3f s: %.1f M insn/s\n", argv[fi], argv[1], total, s,
                   (double)total / s * 1e-6);
        pk_elf_close(e);
    }
    return 0;
}
