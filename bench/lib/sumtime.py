"""Adds the per-part generator times (NAME-1.time ... NAME-N.time) into NAME.time:
seconds summed, peak RSS the maximum."""
import sys
d, name, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
secs, rss = 0.0, 0
for i in range(1, n + 1):
    with open(f"{d}/{name}-{i}.time") as f:
        s, r = f.read().split()[-2:]
        secs += float(s); rss = max(rss, int(r))
with open(f"{d}/{name}.time", "w") as f:
    f.write(f"{secs:.2f} {rss}\n")
