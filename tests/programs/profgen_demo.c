/* profgen_demo.c — the `make demo` workload: a small bytecode interpreter,
 * a merge sort calling its comparator through a pointer, and a token
 * classifier whose common case sits at the end of an if-chain. All three have
 * branches whose bias only a profile reveals (opcode mix, which comparator,
 * which token class), so sample-PGO has something to win: block layout,
 * indirect-call promotion + inlining of the comparator, hot/cold splitting.
 *
 * usage: profgen_demo [scale] [comparator 0..3] [parts: bit 0 vm, 1 sort, 2 scan]
 * (prints a checksum)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------- bytecode interpreter ---------------- */
enum op { OP_PUSH, OP_LOAD, OP_STORE, OP_ADD, OP_SUB, OP_MUL, OP_AND, OP_SHR, OP_XOR,
          OP_LT, OP_JNZ, OP_JMP, OP_DUP, OP_POP, OP_CALLH, OP_HALT };

typedef struct insn { uint8_t op; int32_t arg; } insn;

static uint64_t hash_step(uint64_t x)
{
    x ^= x >> 31;
    x *= 0x7fb5d329728ea185ULL;
    x ^= x >> 27;
    return x;
}

__attribute__((noinline)) static int64_t run_vm(const insn *code, int64_t *vars)
{
    int64_t stack[64];
    int sp = 0;
    int pc = 0;
    for (;;) {
        const insn *i = &code[pc++];
        switch (i->op) {
        case OP_PUSH: stack[sp++] = i->arg; break;
        case OP_LOAD: stack[sp++] = vars[i->arg]; break;
        case OP_STORE: vars[i->arg] = stack[--sp]; break;
        case OP_ADD: sp--; stack[sp - 1] += stack[sp]; break;
        case OP_SUB: sp--; stack[sp - 1] -= stack[sp]; break;
        case OP_MUL: sp--; stack[sp - 1] *= stack[sp]; break;
        case OP_AND: sp--; stack[sp - 1] &= stack[sp]; break;
        case OP_SHR: sp--; stack[sp - 1] = (int64_t)((uint64_t)stack[sp - 1] >> (stack[sp] & 63)); break;
        case OP_XOR: sp--; stack[sp - 1] ^= stack[sp]; break;
        case OP_LT: sp--; stack[sp - 1] = stack[sp - 1] < stack[sp]; break;
        case OP_JNZ: if (stack[--sp]) pc = i->arg; break;
        case OP_JMP: pc = i->arg; break;
        case OP_DUP: stack[sp] = stack[sp - 1]; sp++; break;
        case OP_POP: sp--; break;
        case OP_CALLH: stack[sp - 1] = (int64_t)hash_step((uint64_t)stack[sp - 1]); break;
        case OP_HALT: return sp ? stack[sp - 1] : 0;
        default:
            fprintf(stderr, "bad opcode %d\n", i->op);
            exit(1);
        }
    }
}

/* for (i = 0; i < n; i++) acc = acc ^ (hash(acc + i) >> 3) & mask */
static const insn vm_prog[] = {
    {OP_PUSH, 0}, {OP_STORE, 0},                 /* i = 0 */
    /* 2: loop */
    {OP_LOAD, 1}, {OP_LOAD, 0}, {OP_ADD, 0}, {OP_CALLH, 0},
    {OP_PUSH, 3}, {OP_SHR, 0}, {OP_LOAD, 3}, {OP_AND, 0},
    {OP_LOAD, 1}, {OP_XOR, 0}, {OP_STORE, 1},
    {OP_LOAD, 0}, {OP_PUSH, 1}, {OP_ADD, 0}, {OP_DUP, 0}, {OP_STORE, 0},
    {OP_LOAD, 2}, {OP_LT, 0}, {OP_JNZ, 2},
    {OP_LOAD, 1}, {OP_HALT, 0},
};

/* ---------------- merge sort with an indirect comparator ---------------- */
typedef struct rec { uint32_t key; uint32_t aux; } rec;
typedef int (*cmp_fn)(const rec *, const rec *);

static int cmp_key(const rec *a, const rec *b) { return (a->key > b->key) - (a->key < b->key); }
static int cmp_aux(const rec *a, const rec *b) { return (a->aux > b->aux) - (a->aux < b->aux); }
static int cmp_key_desc(const rec *a, const rec *b) { return cmp_key(b, a); }
static int cmp_both(const rec *a, const rec *b)
{
    int c = cmp_key(a, b);
    return c ? c : cmp_aux(a, b);
}
static const cmp_fn cmps[] = {cmp_key, cmp_aux, cmp_key_desc, cmp_both};

__attribute__((noinline)) static void msort(rec *v, rec *tmp, size_t n, cmp_fn cmp)
{
    if (n < 16) {
        for (size_t i = 1; i < n; i++) {
            rec x = v[i];
            size_t j = i;
            while (j > 0 && cmp(&v[j - 1], &x) > 0) {
                v[j] = v[j - 1];
                j--;
            }
            v[j] = x;
        }
        return;
    }
    size_t h = n / 2;
    msort(v, tmp, h, cmp);
    msort(v + h, tmp, n - h, cmp);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        tmp[k++] = cmp(&v[i], &v[j]) <= 0 ? v[i++] : v[j++];
    while (i < h)
        tmp[k++] = v[i++];
    while (j < n)
        tmp[k++] = v[j++];
    memcpy(v, tmp, n * sizeof *v);
}

/* ---------------- token classifier: the common case comes last ---------------- */
enum tclass { T_SPACE, T_DIGIT, T_UPPER, T_PUNCT, T_CTRL, T_HIGH, T_LOWER };

static int classify(unsigned c)
{
    if (c == ' ' || c == '\t' || c == '\n')
        return T_SPACE;
    if (c >= '0' && c <= '9')
        return T_DIGIT;
    if (c >= 'A' && c <= 'Z')
        return T_UPPER;
    if (c < 32 || c == 127)
        return T_CTRL;
    if (c >= 128)
        return T_HIGH;
    if (c >= 'a' && c <= 'z')
        return T_LOWER;
    return T_PUNCT;
}

__attribute__((noinline)) static uint64_t scan_text(const unsigned char *s, size_t n)
{
    uint64_t counts[8] = {0}, words = 0;
    int prev = T_SPACE;
    for (size_t i = 0; i < n; i++) {
        int c = classify(s[i]);
        counts[c]++;
        if (c == T_LOWER && prev != T_LOWER)
            words++;
        prev = c;
    }
    return words * 1000003 + counts[T_DIGIT] * 31 + counts[T_UPPER] * 7 + counts[T_PUNCT];
}

int main(int argc, char **argv)
{
    long scale = argc > 1 ? atol(argv[1]) : 10;
    int which = argc > 2 ? atoi(argv[2]) % 4 : 3;
    int parts = argc > 3 ? atoi(argv[3]) : 7;
    if (scale < 1)
        scale = 1;
    uint64_t sum = 0, seed = 12345;

    int64_t vars[4] = {0, 1, 100000 * scale, 0xffff};
    if (parts & 1)
        sum += (uint64_t)run_vm(vm_prog, vars);

    size_t n = 4000;
    rec *v = malloc(n * sizeof *v), *tmp = malloc(n * sizeof *tmp);
    unsigned char *text = malloc(1 << 16);
    if (!v || !tmp || !text)
        return 1;
    for (long round = 0; (parts & 2) && round < 2 * scale; round++) {
        for (size_t i = 0; i < n; i++) {
            seed = hash_step(seed + i);
            v[i].key = (uint32_t)(seed % 1000);
            v[i].aux = (uint32_t)(seed >> 40);
        }
        msort(v, tmp, n, cmps[which]);
        sum += v[n / 2].key + v[7].aux;
    }
    for (size_t i = 0; i < (1 << 16); i++) {
        seed = hash_step(seed + i);
        unsigned r = (unsigned)(seed % 100);
        text[i] = r < 70 ? (unsigned char)('a' + seed % 26)
                : r < 85 ? ' '
                : r < 92 ? (unsigned char)('0' + seed % 10)
                : r < 97 ? (unsigned char)('A' + seed % 26) : '.';
    }
    for (long round = 0; (parts & 4) && round < 2 * scale; round++) {
        text[(round * 7919) & 0xffff] ^= 0x20; /* a new text each round */
        sum += scan_text(text, 1 << 16) + (uint64_t)round;
    }
    printf("checksum %llu\n", (unsigned long long)sum);
    free(v);
    free(tmp);
    free(text);
    return 0;
}
