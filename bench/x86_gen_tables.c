/* x86_gen_tables.c — writes src/binary/x86_tables.c and x86_tables_evex.c:
 * the opcode tables of the fast x86-64 decoder (src/binary/x86.c), learned
 * from Zydis, the reference decoder.
 * For every (LOCK, map, mandatory prefix, opcode), VEX (map, pp, opcode) and
 * EVEX (map, pp, opcode) it decodes each ModRM byte (with SIB variants) under
 * several REX / VEX / EVEX W, L, L'L, b, aaa, z, R/X/B/R' and vvvv/V'
 * settings (vvvv also equal to the ModRM registers), and claims a
 * (W, variant, mod==3, reg) only if every probe of it was answered alike and
 * explained by the fast path's model: ModRM present or not, immediate size
 * per (W, reg), class per reg, target = end + signed immediate. Anything else
 * stays with Zydis at run time; tests/unit/test_binary_x86.c checks the
 * result on real code, random bytes and mutated instructions.
 * Build and run: bench/x86_decode.sh gen */
#include "binary/binary.h"
#include "binary/x86_tables.h"

#include <Zydis/Zydis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct acc {
    int bad;
    int modrm;                 /* -1 unknown */
    /* [W][variant: VEX.L, or EVEX L'L:b:aaa!=0:z][encoded vvvv (+ EVEX V') =
     * no register?][bit]: 1 valid, 2 invalid, 3 both, 4 not modelled */
    uint8_t st[2][32][3][16]; /* [..][2]: vvvv = a ModRM register (only means something with ModRM) */
    uint8_t regbad[2][8];      /* [W][reg]: immediate or class not a function of (W, reg) */
    int imm[2][8];             /* -1 unknown */
    int cls[8];
} acc;

static void acc_init(acc *a)
{
    memset(a, 0, sizeof *a);
    a->modrm = -1;
    memset(a->imm, 0xff, sizeof a->imm);
    memset(a->cls, 0xff, sizeof a->cls);
}

static const uint64_t ADDR = 0x10000000;

static int zy_ok(const uint8_t *buf, size_t n)
{
    ZydisDecoder dec;
    ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
    ZydisDecoderEnableMode(&dec, ZYDIS_DECODER_MODE_MINIMAL, ZYAN_TRUE);
    ZydisDecodedInstruction in;
    return ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&dec, NULL, buf, n, &in));
}

/* buf[0..hdr) = prefixes + opcode bytes; then modrm, optional sib, filler.
 * vmode: 1 = VEX/EVEX vvvv (and V') "no register", else a register: 0 as
 * in buf, 2 = the ModRM.reg register, 3 = the ModRM.rm register (so
 * instructions whose operands must differ, like gathers and the FP16
 * complex FMAs, show a validity that depends on register numbers). */
static void probe(acc *a, uint8_t *buf, size_t hdr, int w, int l, int vmode, int modrm, int sib)
{
    size_t n = hdr;
    int vs = vmode == 1 ? 1 : vmode >= 2 ? 2 : 0;
    if (vmode >= 2 && (buf[0] == 0xC4 || buf[0] == 0x62)) {
        int evex = buf[0] == 0x62, R = !(buf[1] & 0x80), X = !(buf[1] & 0x40), B = !(buf[1] & 0x20);
        int R2 = evex && !(buf[1] & 0x10);
        int t = vmode == 2 ? (((modrm >> 3) & 7) | R << 3 | R2 << 4) : ((modrm & 7) | B << 3 | (evex ? X << 4 : 0));
        buf[2] = (uint8_t)((buf[2] & ~0x78) | (~t & 15) << 3);
        if (evex)
            buf[3] = (uint8_t)((buf[3] & ~8) | (t & 16 ? 0 : 8));
    }
    buf[n++] = (uint8_t)modrm;
    if (sib >= 0)
        buf[n++] = (uint8_t)sib;
    for (int i = 0; i < 14; i++)
        buf[n++] = (uint8_t)(0x80 | (i * 7));
    ZydisDecoder dec;
    ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
    ZydisDecoderEnableMode(&dec, ZYDIS_DECODER_MODE_MINIMAL, ZYAN_TRUE);
    ZydisDecodedInstruction in;
    int ok = ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&dec, NULL, buf, n, &in));
    int mod = modrm >> 6, reg = (modrm >> 3) & 7;
    int bit = (mod == 3 ? 8 : 0) + reg;
    a->st[w][l][vs][bit] |= ok ? 1 : 2;
    if (!ok)
        return;
    pk_insn ref;
    if (pk_x86_decode_zydis(buf, n, ADDR, &ref) != in.length) {
        a->bad = 1;
        return;
    }
    uint8_t *stp = &a->st[w][l][vs][bit];
    int hm = (in.attributes & ZYDIS_ATTRIB_HAS_MODRM) != 0;
    if (a->modrm < 0)
        a->modrm = hm;
    if (a->modrm != hm) {
        a->bad = 1;
        return;
    }
    int r = hm ? reg : 0;
    int imm = (in.raw.imm[0].size + in.raw.imm[1].size) / 8;
    if (imm > 8 || (in.raw.imm[0].size | in.raw.imm[1].size) % 8) {
        a->bad = 1;
        return;
    }
    size_t p = hdr + (hm ? 1 + pk_x86_modrm_tail((unsigned)modrm, (unsigned)(sib < 0 ? 0 : sib)) : 0);
    if (p + imm != in.length) {
        *stp |= 4;
        return;
    }
    if (a->imm[w][r] < 0)
        a->imm[w][r] = imm;
    if (a->cls[r] < 0)
        a->cls[r] = ref.cls;
    if (a->imm[w][r] != imm)
        a->regbad[w][r] = 1;
    if (a->cls[r] != ref.cls)
        a->regbad[0][r] = a->regbad[1][r] = 1;
    if (ref.cls == PK_INSN_CALL || ref.cls == PK_INSN_JMP || ref.cls == PK_INSN_CJMP) {
        const uint8_t *q = buf + p;
        int64_t d = imm == 1 ? (int8_t)q[0] : imm == 2 ? (int16_t)(q[0] | q[1] << 8) : imm == 4 ? (int32_t)pk_ld32(q) : 0;
        if ((imm != 1 && imm != 2 && imm != 4) || ref.target != ADDR + in.length + (uint64_t)d)
            *stp |= 4;
    }
}

static void probe_all(acc *a, uint8_t *buf, size_t hdr, int w, int l, int vmode, int dense)
{
    for (int m = 0; m < 256; m++) {
        int rm = m & 7, mod = m >> 6;
        /* sparse: rm = reg too, for operands that must differ */
        if (!dense && rm != 0 && rm != 1 && rm != 4 && rm != 5 && rm != 7 && rm != ((m >> 3) & 7))
            continue;
        if (mod != 3 && rm == 4) {
            static const int sibs[] = {0x24, 0x25, 0xE5, 0x61, 0x00};
            for (int s = 0; s < (dense ? 5 : 2); s++)
                probe(a, buf, hdr, w, l, vmode, m, sibs[s]);
        } else {
            probe(a, buf, hdr, w, l, vmode, m, -1);
        }
    }
}

/* The validity masks [W][variant] (kind 0: legacy, 1: VEX, 2: EVEX) and
 * PK_X86_MODRM / PK_X86_V1111, or -1 when the opcode can't be modelled. */
static int acc_masks(const acc *a, int kind, uint16_t mask[2][32], uint32_t *flags)
{
    int nl = kind == 2 ? 32 : kind == 1 ? 2 : 1;
    if (a->bad || a->modrm < 0 || (kind == 2 && !a->modrm))
        return -1;
    *flags = a->modrm ? PK_X86_MODRM : 0;
    static uint16_t m[2][32][2];
    memset(mask, 0, 2 * 32 * sizeof(uint16_t));
    for (int w = 0; w < 2; w++)
        for (int l = 0; l < nl; l++)
            for (int v = 0; v < 2; v++) {
                const uint8_t *st = a->st[w][l][v];
                uint16_t mk = 0;
                if (a->modrm) {
                    uint8_t comb[16];
                    for (int b = 0; b < 16; b++)
                        comb[b] = (uint8_t)(st[b] | (v == 0 ? a->st[w][l][2][b] : 0));
                    st = comb;
                    /* a (mod==3, reg) whose answer also depends on rm, the
                     * SIB or R/X/B stays with Zydis */
                    for (int b = 0; b < 16; b++)
                        if (st[b] == 1 && !a->regbad[w][b & 7])
                            mk |= (uint16_t)(1u << b);
                } else {
                    /* validity can't depend on the byte after the opcode */
                    for (int b = 0; b < 16; b++)
                        if (st[b] != st[0])
                            return -1;
                    if (st[0] != 0 && st[0] != 1 && st[0] != 2) /* 0: not probed */
                        return -1;
                    if (a->regbad[w][0])
                        return -1;
                    mk = st[0] == 1;
                }
                m[w][l][v] = mk;
            }
    uint16_t any0 = 0, any = 0;
    for (int w = 0; w < 2; w++)
        for (int l = 0; l < nl; l++)
            any0 |= m[w][l][0];
    /* VEX/EVEX: either vvvv is ignored, or it must be "no register" (when
     * nothing is valid otherwise), or only what is valid both ways is claimed */
    int need1111 = kind && !any0;
    for (int w = 0; w < 2; w++)
        for (int l = 0; l < nl; l++) {
            mask[w][l] = !kind ? m[w][0][1] : need1111 ? m[w][l][1] : (uint16_t)(m[w][l][0] & m[w][l][1]);
            any |= mask[w][l];
        }
    if (need1111)
        *flags |= PK_X86_V1111;
    return any ? 0 : -1;
}

static pk_x86_ent ents[65536];
static size_t nents = 1;
static pk_x86_evex_ent eents[65536];
static size_t neents = 1;

/* Turns the observations into an entry index (0 = leave it to Zydis). */
static uint16_t acc_finish(const acc *a, int kind)
{
    uint16_t mask[2][32];
    uint32_t flags;
    if (acc_masks(a, kind, mask, &flags))
        return 0;
    uint32_t imm[2] = {0, 0}, cls = 0;
    for (int r = 0; r < 8; r++) {
        for (int w = 0; w < 2; w++)
            if (a->imm[w][r] > 0)
                imm[w] |= (uint32_t)a->imm[w][r] << (4 * r);
        if (a->cls[r] > 0)
            cls |= (uint32_t)a->cls[r] << (3 * r);
    }
    if (kind == 2) {
        pk_x86_evex_ent e;
        memset(&e, 0, sizeof e);
        if (cls)
            return 0; /* no EVEX branches */
        memcpy(e.mask, mask, sizeof e.mask);
        e.imm[0] = imm[0];
        e.imm[1] = imm[1];
        e.flags = flags;
        for (size_t i = 1; i < neents; i++)
            if (!memcmp(&eents[i], &e, sizeof e))
                return (uint16_t)i;
        eents[neents] = e;
        return (uint16_t)neents++;
    }
    pk_x86_ent e;
    memset(&e, 0, sizeof e);
    for (int w = 0; w < 2; w++)
        for (int l = 0; l < 2; l++)
            e.mask[w][l] = mask[w][kind ? l : 0];
    e.imm[0] = imm[0];
    e.imm[1] = imm[1];
    e.cls = cls;
    e.flags = flags;
    for (size_t i = 1; i < nents; i++)
        if (!memcmp(&ents[i], &e, sizeof e))
            return (uint16_t)i;
    ents[nents] = e;
    return (uint16_t)nents++;
}

static uint16_t legacy[2][4][4][256], vexi[3][4][256], evexi[8][4][256];

static int skip_legacy(int map, int op)
{
    if (map == 0)
        return op == 0x0F || op == 0x26 || op == 0x2E || op == 0x36 || op == 0x3E || (op >= 0x40 && op <= 0x4F) ||
               op == 0x62 || (op >= 0x64 && op <= 0x67) || op == 0xC4 || op == 0xC5 || op == 0xF0 || op == 0xF2 ||
               op == 0xF3;
    /* 0F 0F: 3DNow! validity depends on the trailing opcode byte */
    return map == 1 && (op == 0x0F || op == 0x38 || op == 0x3A);
}

int main(int argc, char **argv)
{
    static const uint8_t mps[4] = {0, 0x66, 0xF3, 0xF2};
    static const int rexes[5] = {-1, 0x40, 0x47, 0x48, 0x4F};
    uint8_t buf[64];
    for (int lock = 0; lock < 2; lock++)
    for (int map = 0; map < 4; map++)
        for (int mp = 0; mp < 4; mp++)
            for (int op = 0; op < 256; op++) {
                if (skip_legacy(map, op))
                    continue;
                acc a;
                acc_init(&a);
                for (int r = 0; r < 5; r++) {
                    size_t h = 0;
                    if (lock)
                        buf[h++] = 0xF0;
                    if (mp)
                        buf[h++] = mps[mp];
                    if (rexes[r] >= 0)
                        buf[h++] = (uint8_t)rexes[r];
                    if (map)
                        buf[h++] = 0x0F;
                    if (map >= 2)
                        buf[h++] = map == 2 ? 0x38 : 0x3A;
                    buf[h++] = (uint8_t)op;
                    probe_all(&a, buf, h, r >= 3, 0, 1, 1);
                }
                legacy[lock][map][mp][op] = acc_finish(&a, 0);
            }
    for (int map = 1; map <= 3; map++)
        for (int pp = 0; pp < 4; pp++)
            for (int op = 0; op < 256; op++) {
                acc a;
                acc_init(&a);
                for (int w = 0; w < 2; w++)
                    for (int l = 0; l < 2; l++)
                        for (int rxb = 0; rxb < 2; rxb++)
                            for (int v = 0; v < 4; v++) {
                                buf[0] = 0xC4;
                                buf[1] = (uint8_t)((rxb ? 0xE0 : 0x00) | map);
                                buf[2] = (uint8_t)(w << 7 | (v == 1 ? 0xF : 0) << 3 | l << 2 | pp);
                                buf[3] = (uint8_t)op;
                                probe_all(&a, buf, 4, w, l, v, 0);
                            }
                vexi[map - 1][pp][op] = acc_finish(&a, 1);
            }
    /* EVEX: 62 P0 (R X B R' 0 mmm) P1 (W vvvv 1 pp) P2 (z L'L b V' aaa) */
    static const int aaas[3] = {0, 1, 7};
    for (int map = 1; map < 8; map++)
        for (int pp = 0; pp < 4; pp++)
            for (int op = 0; op < 256; op++) {
                /* most (map, pp, opcode) are undefined: a quick screen */
                int seen = 0;
                for (int x = 0; x < 384 * 16 && !seen; x++) {
                    uint8_t q[24] = {0x62, (uint8_t)(0xF0 | map), (uint8_t)((x & 1) << 7 | 0x7C | pp),
                                     (uint8_t)((x >> 1) & 0x7F), (uint8_t)op, (uint8_t)(((x >> 8) & 1) * 0xC0 | ((x >> 9) & 7) << 3)};
                    q[3] ^= (uint8_t)((x >> 12) << 3); /* V' */
                    seen = zy_ok(q, sizeof q);
                }
                if (!seen)
                    continue;
                acc a;
                acc_init(&a);
                for (int w = 0; w < 2; w++)
                    for (int ll = 0; ll < 4; ll++)
                        for (int bb = 0; bb < 2; bb++)
                            for (int ai = 0; ai < 3; ai++)
                                for (int z = 0; z < 2; z++)
                                    for (int rxb = 0; rxb < 2; rxb++)
                                        for (int v = 0; v < 4; v++) {
                                            int var = ((ll * 2 + bb) * 2 + (aaas[ai] != 0)) * 2 + z;
                                            buf[0] = 0x62;
                                            buf[1] = (uint8_t)((rxb ? 0xF0 : 0x00) | map);
                                            buf[2] = (uint8_t)(w << 7 | (v == 1 ? 0xF : 0) << 3 | 4 | pp);
                                            buf[3] = (uint8_t)(z << 7 | ll << 5 | bb << 4 | (v == 1 ? 8 : 0) | aaas[ai]);
                                            buf[4] = (uint8_t)op;
                                            probe_all(&a, buf, 5, w, var, v, 0);
                                        }
                evexi[map][pp][op] = acc_finish(&a, 2);
            }
    FILE *f = argc > 2 ? fopen(argv[1], "w") : NULL, *fe = argc > 2 ? fopen(argv[2], "w") : NULL;
    if (!f || !fe) {
        fprintf(stderr, "usage: x86_gen_tables OUT.c OUT_EVEX.c\n");
        return 1;
    }
    fprintf(f, "/* x86_tables.c — GENERATED by bench/x86_gen_tables.c (bench/x86_decode.sh gen)\n"
               " * from Zydis %u.%u.%u: do not edit. See x86_tables.h. */\n#include \"binary/x86_tables.h\"\n\n",
            (unsigned)ZYDIS_VERSION_MAJOR(ZYDIS_VERSION), (unsigned)ZYDIS_VERSION_MINOR(ZYDIS_VERSION),
            (unsigned)ZYDIS_VERSION_PATCH(ZYDIS_VERSION));
    fprintf(f, "const pk_x86_ent pk_x86_ents[%zu] = {\n", nents);
    for (size_t i = 0; i < nents; i++) {
        const pk_x86_ent *e = &ents[i];
        fprintf(f, "    {{{0x%x, 0x%x}, {0x%x, 0x%x}}, {0x%x, 0x%x}, 0x%x, %u},\n", e->mask[0][0], e->mask[0][1],
                e->mask[1][0], e->mask[1][1], e->imm[0], e->imm[1], e->cls, e->flags);
    }
    fprintf(f, "};\n\n");
    const char *names[2] = {"pk_x86_legacy[2][4][4][256]", "pk_x86_vex[3][4][256]"};
    for (int t = 0; t < 2; t++) {
        fprintf(f, "const uint16_t %s = {\n", names[t]);
        for (int lock = 0; lock < (t ? 1 : 2); lock++) {
            if (!t)
                fprintf(f, "{\n");
            for (int map = 0; map < (t ? 3 : 4); map++) {
                fprintf(f, "    {\n");
                for (int mp = 0; mp < 4; mp++) {
                    fprintf(f, "        {\n");
                    for (int op = 0; op < 256; op++)
                        fprintf(f, "%s%u,%s", op % 32 ? "" : "            ",
                                t ? vexi[map][mp][op] : legacy[lock][map][mp][op], op % 32 == 31 ? "\n" : "");
                    fprintf(f, "        },\n");
                }
                fprintf(f, "    },\n");
            }
            if (!t)
                fprintf(f, "},\n");
        }
        fprintf(f, "};\n\n");
    }
    fprintf(fe, "/* x86_tables_evex.c — GENERATED by bench/x86_gen_tables.c (bench/x86_decode.sh gen)\n"
                " * from Zydis %u.%u.%u: do not edit. See x86_tables.h. */\n#include \"binary/x86_tables.h\"\n\n",
            (unsigned)ZYDIS_VERSION_MAJOR(ZYDIS_VERSION), (unsigned)ZYDIS_VERSION_MINOR(ZYDIS_VERSION),
            (unsigned)ZYDIS_VERSION_PATCH(ZYDIS_VERSION));
    fprintf(fe, "const pk_x86_evex_ent pk_x86_evex_ents[%zu] = {\n", neents);
    for (size_t i = 0; i < neents; i++) {
        const pk_x86_evex_ent *e = &eents[i];
        fprintf(fe, "    {{");
        for (int w = 0; w < 2; w++) {
            fprintf(fe, "{");
            for (int v = 0; v < 32; v++)
                fprintf(fe, "%s0x%x,", v ? "" : "\n        ", e->mask[w][v]);
            fprintf(fe, "},");
        }
        fprintf(fe, "},\n        {0x%x, 0x%x}, %u},\n", e->imm[0], e->imm[1], e->flags);
    }
    fprintf(fe, "};\n\n");
    fprintf(fe, "const uint16_t pk_x86_evex[8][4][256] = {\n");
    for (int map = 0; map < 8; map++) {
        fprintf(fe, "    {\n");
        for (int pp = 0; pp < 4; pp++) {
            fprintf(fe, "        {\n");
            for (int op = 0; op < 256; op++)
                fprintf(fe, "%s%u,%s", op % 64 ? "" : "            ", evexi[map][pp][op], op % 64 == 63 ? "\n" : "");
            fprintf(fe, "        },\n");
        }
        fprintf(fe, "    },\n");
    }
    fprintf(fe, "};\n");
    size_t ne = 0;
    for (int i = 0; i < 8 * 4 * 256; i++)
        ne += ((uint16_t *)evexi)[i] != 0;
    fprintf(stderr, "x86_gen_tables: %zu EVEX entries, %zu EVEX opcodes handled\n", neents, ne);
    size_t nl = 0, nv = 0;
    for (int i = 0; i < 2 * 4 * 4 * 256; i++)
        nl += ((uint16_t *)legacy)[i] != 0;
    for (int i = 0; i < 3 * 4 * 256; i++)
        nv += ((uint16_t *)vexi)[i] != 0;
    fprintf(stderr, "x86_gen_tables: %zu entries, %zu legacy and %zu VEX opcodes handled\n", nents, nl, nv);
    int rc = fclose(f) != 0;
    rc |= fclose(fe) != 0; /* both closed either way */
    return rc;
}
