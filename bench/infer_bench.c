/* infer_bench.c — the CFG builder and flow inference over every function
 * of real binaries: blocks and edges, indirect jumps resolved as jump
 * tables or not, CFG build time, and pk_flow_infer time per function with
 * random weights (every method) — the worst case for the solver.
 * Usage: infer_bench [-v] [-flow] [-flowmin=N] BINARY...   (see bench/infer_bench.sh)
 *   -v           list the functions with unresolved indirect jumps
 *   -flow        also time flow inference on every function
 *   -flowmin=N   only on functions of at least N blocks (each one printed) */
#include "infer/infer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint64_t rnd(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

int main(int argc, char **argv)
{
    int verbose = 0, flow = 0;
    size_t flowmin = 0;
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "-v")) {
            verbose = 1;
            continue;
        }
        if (!strcmp(argv[a], "-flow")) {
            flow = 1;
            continue;
        }
        if (!strncmp(argv[a], "-flowmin=", 9)) {
            flow = 1;
            flowmin = strtoul(argv[a] + 9, NULL, 10);
            continue;
        }
        pk_err err;
        pk_binary *bin;
        if (pk_binary_open(&bin, argv[a], NULL, &err) != 0) {
            fprintf(stderr, "%s\n", err.msg);
            return 1;
        }
        pk_cfg_noreturn *nr;
        if (pk_cfg_noreturn_open(&nr, bin, &err) != 0) {
            fprintf(stderr, "%s\n", err.msg);
            return 1;
        }
        size_t nf, funcs = 0, fails = 0, blocks = 0, edges = 0, maxb = 0, res = 0, unres = 0, with_unres = 0, guessed = 0;
        const char *maxname = "";
        const pk_elf_symbol *fs = pk_elf_funcs(pk_binary_elf(bin), &nf);
        double tcfg = 0, tflow[3] = {0}, tmax[3] = {0};
        uint64_t seed = 1;
        for (size_t i = 0; i < nf; i++) {
            const pk_elf_symbol *f = &fs[i];
            if (f->is_alias || f->size == 0)
                continue;
            pk_addr_range r = {f->addr, f->addr + f->size};
            pk_cfg c;
            double t0 = cpu_now();
            if (pk_cfg_build_binary(&c, bin, nr, &r, 1, f->addr, &err) != 0) {
                fails++;
                continue;
            }
            tcfg += cpu_now() - t0;
            funcs++;
            blocks += c.nblocks;
            edges += c.nedges;
            res += c.ijumps_resolved;
            guessed += c.ijumps_guessed;
            unres += c.ijumps_unresolved;
            with_unres += c.ijumps_unresolved != 0;
            if (verbose && c.ijumps_unresolved)
                printf("  unresolved: %s (%u)\n", f->name, c.ijumps_unresolved);
            if (c.nblocks > maxb) {
                maxb = c.nblocks;
                maxname = f->name;
            }
            if (flow && c.nblocks >= flowmin) {
                int64_t *w = malloc(c.nblocks * sizeof *w);
                uint64_t *bc = malloc(c.nblocks * 8), *ec = malloc((c.nedges + 1) * 8);
                for (size_t b = 0; b < c.nblocks; b++)
                    w[b] = (int64_t)(rnd(&seed) % 1000);
                pk_flow_opts o;
                pk_flow_defaults(&o);
                double dts[3];
                for (int m = 0; m < 3; m++) {
                    o.method = m;
                    t0 = cpu_now();
                    if (pk_flow_infer(&c, w, PK_FLOW_UNKNOWN, &o, bc, ec, &err) != 0)
                        fprintf(stderr, "%s: %s\n", f->name, err.msg);
                    double dt = cpu_now() - t0;
                    tflow[m] += dt;
                    if (c.nblocks == maxb)
                        tmax[m] = dt;
                    dts[m] = dt;
                }
                if (flowmin)
                    printf("  %s (%zu blocks, %zu edges): MCF %.1f ms, PROPAGATE %.1f ms, NONE %.1f ms\n", f->name,
                           c.nblocks, c.nedges, dts[0] * 1e3, dts[1] * 1e3, dts[2] * 1e3);
                free(w);
                free(bc);
                free(ec);
            }
            pk_cfg_free(&c);
        }
        printf("%s: %zu functions (%zu failed), %zu blocks, %zu edges, largest %s (%zu blocks)\n", argv[a], funcs,
               fails, blocks, edges, maxname, maxb);
        printf("  indirect jumps: %zu resolved as tables (%zu of them sized without a bound check), %zu unresolved"
               " (in %zu functions), %.1f%% resolved\n", res, guessed, unres, with_unres,
               res + unres ? 100.0 * (double)res / (double)(res + unres) : 0.0);
        printf("  cfg: %.1f ms total, %.2f us per function\n", tcfg * 1e3, funcs ? tcfg * 1e6 / (double)funcs : 0);
        if (flow)
            printf("  flow, random weights: MCF %.1f ms (largest %.1f ms), PROPAGATE %.1f ms (%.1f), NONE %.1f ms\n",
                   tflow[0] * 1e3, tmax[0] * 1e3, tflow[1] * 1e3, tmax[1] * 1e3, tflow[2] * 1e3);
        pk_cfg_noreturn_close(nr);
        pk_binary_close(bin);
    }
    return 0;
}
