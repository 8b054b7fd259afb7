# format_genprof.awk — deterministic pseudo-random LLVM text sample profiles
# for the format e2e tests (a helper, not a test: run.sh only runs *.sh).
#   awk -v seed=N -v nf=FUNCS [-v probe=1] [-v scale=K] -f format_genprof.awk
# Totals come from a small range so ties exercise the sort order; names
# include C++-style ones with "::", spaces and parentheses; inlinees nest up
# to depth 3; call-target names are distinct per line (LLVM's text reader
# keeps only the last of duplicates, ours adds them).
BEGIN {
    srand(seed);
    np = split("malloc free memcpy _Z3fooi _ZN2ns3barEv helper.cold qux baz zed _Z4workv", pool, " ");
    if (!scale) scale = 1;
    for (f = 0; f < nf; f++) {
        if (f % 17 == 5) name = sprintf("ns::fn%d(int, char)", f);
        else if (f % 13 == 7) name = sprintf("_ZL%dlocal.__uniq.1234", f);
        else name = sprintf("f%d", f);
        printf "%s:%d:%d\n", name, int(rand() * 40) * 100 * scale, int(rand() * 100) * scale;
        emit(1, 4 + int(rand() * 10));
    }
}
function emit(depth, nlines,    i, j, k, line, ind, nt, s, c) {
    ind = sprintf("%" depth "s", "");
    line = 0;
    for (i = 0; i < nlines; i++) {
        line += 1 + int(rand() * 3);
        c = int(rand() * 1000) * scale;
        if (rand() < 0.2) printf "%s%d.%d: %d", ind, line, 1 + int(rand() * 8), c;
        else printf "%s%d: %d", ind, line, c;
        if (rand() < 0.25) {
            nt = 1 + int(rand() * 3);
            s = int(rand() * np);
            for (j = 0; j < nt; j++)
                printf " %s:%d", pool[1 + (s + j) % np], int(rand() * 5) * 10 * scale;
        }
        printf "\n";
    }
    if (depth < 3) {
        k = int(rand() * 3);
        for (j = 0; j < k; j++) {
            printf "%s%d: %s:%d\n", ind, 1 + int(rand() * 20), pool[1 + int(rand() * np)], int(rand() * 100) * 10 * scale;
            emit(depth + 1, 2 + int(rand() * 4));
        }
    }
    if (probe)
        printf "%s!CFGChecksum: %d\n", ind, 1 + int(rand() * 1000000);
}
