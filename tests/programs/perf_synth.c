/* perf_synth.c — writes a perf.data with pgokit's writer for the perf.data
 * tests and benchmark: COMM, MMAP2 (build-id flavour), FORK/EXIT, and
 * samples with branch stacks built from the given FROM:TO pairs (cycled,
 * newest first) and an optional call chain.
 *
 * usage: perf_synth OUT BINARY ADDR LEN PGOFF BUILDID_HEX NSAMPLES FLAGS PAIR...
 *   FLAGS: letters h (hw_idx), c (call chains), n (no branch stacks), p (cpu),
 *          l (a LOST record)
 *   PAIR: 0xFROM:0xTO
 * Exit status 0 on success; errors on stderr. */
#include "perf/perf_data.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc < 10) {
        fprintf(stderr, "usage: perf_synth OUT BINARY ADDR LEN PGOFF BUILDID NSAMPLES FLAGS PAIR...\n");
        return 2;
    }
    const char *out = argv[1], *bin = argv[2], *bid = argv[6], *flags = argv[8];
    uint64_t addr = strtoull(argv[3], NULL, 0), len = strtoull(argv[4], NULL, 0);
    uint64_t pgoff = strtoull(argv[5], NULL, 0), n = strtoull(argv[7], NULL, 0);
    int npairs = argc - 9;
    pk_branch *pairs = calloc((size_t)npairs, sizeof *pairs);
    for (int i = 0; i < npairs; i++) {
        char *colon;
        pairs[i].from = strtoull(argv[9 + i], &colon, 0);
        if (*colon != ':') {
            fprintf(stderr, "bad pair %s\n", argv[9 + i]);
            return 2;
        }
        pairs[i].to = strtoull(colon + 1, NULL, 0);
    }
    pk_perf_writer_opts o = {
        .sample_period = 100003,
        .branch_stack = !strchr(flags, 'n'),
        .hw_idx = strchr(flags, 'h') != NULL,
        .callchain = strchr(flags, 'c') != NULL,
        .cpu = strchr(flags, 'p') != NULL,
        .hostname = "pgokit-test", .os_release = "6.0-test", .cmdline = "perf_synth test",
    };
    pk_err err;
    pk_perf_writer *w = pk_perf_writer_open(out, &o, &err);
    if (!w) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    uint32_t pid = 4242;
    uint64_t t = 1000000000ull;
    pk_comm_event c = {.pid = pid, .tid = pid, .exec = true, .comm = "synth", .time = t};
    pk_mmap_event m = {.is_mmap2 = true, .pid = pid, .tid = pid, .addr = addr, .len = len, .pgoff = pgoff,
                       .prot = 5, .flags = 2, .filename = bin, .time = t};
    for (size_t i = 0; i + 1 < strlen(bid) && i / 2 < 20; i += 2) {
        unsigned v;
        sscanf(bid + i, "%2x", &v);
        m.build_id[i / 2] = (uint8_t)v;
        m.build_id_size = (uint8_t)(i / 2 + 1);
    }
    m.has_build_id = m.build_id_size > 0;
    pk_task_event fk = {.is_fork = true, .pid = pid, .ppid = pid, .tid = pid + 1, .ptid = pid, .time = t + 1};
    if (pk_perf_write_comm(w, &c, &err) || pk_perf_write_mmap(w, &m, &err) || pk_perf_write_task(w, &fk, &err))
        goto fail;
    pk_branch br[32];
    uint64_t chain[8];
    for (uint64_t s = 0; s < n; s++) {
        for (int i = 0; i < 32; i++) {
            br[i] = pairs[(s + (uint64_t)i) % (uint64_t)npairs];
            br[i].flags = (i & 1 ? 1 : 2) | ((uint64_t)(i + 1) << 4);
        }
        int depth = 1 + (int)(s % 7);
        chain[0] = PK_CONTEXT_USER;
        for (int i = 1; i <= depth; i++)
            chain[i] = pairs[(s + (uint64_t)i) % (uint64_t)npairs].from + 5;
        pk_sample smp = {
            .pid = pid, .tid = (s & 3) ? pid : pid + 1, .cpu = (uint32_t)(s & 1), .time = t + 10 + s * 1000,
            .ip = br[0].to, .callchain = chain, .callchain_nr = (uint64_t)depth + 1,
            .branches = br, .branch_nr = s % 11 == 5 ? 0 : 32, .hw_idx = s % 32, .has_hw_idx = true,
        };
        if (pk_perf_write_sample(w, &smp, &err))
            goto fail;
    }
    pk_task_event ex = {.is_fork = false, .pid = pid, .ppid = pid, .tid = pid, .ptid = pid, .time = t + 10 + n * 1000};
    if ((strchr(flags, 'l') && pk_perf_write_lost(w, 3, &err)) || pk_perf_write_task(w, &ex, &err) || pk_perf_writer_close(w, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    free(pairs);
    return 0;
fail:
    fprintf(stderr, "%s\n", err.msg);
    pk_perf_writer_abort(w);
    return 1;
}
