#!/usr/bin/env python3
"""report_synth.py N OUT — writes a synthetic flat context-sensitive profile
in LLVM's text format with N distinct contexts (deterministic): 400
functions, contexts of 1 to 9 frames under main, heavy-tailed counts, three
body lines each. For the report's scale test (tests/e2e/report.sh)."""
import random
import sys

n, out = int(sys.argv[1]), sys.argv[2]
rng = random.Random(12)
funcs = ["fn_%03d" % i for i in range(400)]
seen = set()
with open(out, "w") as f:
    while len(seen) < n:
        depth = rng.randint(1, 9)
        frames = ["main"] + [funcs[min(int(rng.paretovariate(1.2)) - 1, 399)] if k < 2 else rng.choice(funcs)
                             for k in range(depth)]
        sites = [rng.randint(1, 12) for _ in frames[:-1]]
        ctx = " @ ".join("%s:%d" % (fr, s) for fr, s in zip(frames, sites)) + " @ " + frames[-1] \
            if len(frames) > 1 else frames[0]
        if ctx in seen:
            continue
        seen.add(ctx)
        body = [int(rng.paretovariate(1.1) * 10) for _ in range(3)]
        f.write("[%s]:%d:%d\n" % (ctx, sum(body), body[0]))
        for line, c in enumerate(body, 1):
            f.write(" %d: %d\n" % (line, c))
