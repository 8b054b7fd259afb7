"""Scoreboard report: reads bench/work/<workload>/{meas,gen}/ and writes a
Markdown table and an SVG chart into bench/results/, and prints the table.

Run-time ratios are medians of per-round ratios (variant CPU / baseline CPU in
the same interleaved round), with the interquartile range as the spread."""
import argparse, datetime, os, statistics, subprocess, sys

def quartiles(xs):
    xs = sorted(xs)
    if len(xs) < 4:
        return xs[0], xs[-1]
    q = statistics.quantiles(xs, n=4)
    return q[0], q[2]

def version(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True).stdout.splitlines()[0].strip()
    except Exception:
        return "?"

def load_workload(work, w):
    d = os.path.join(work, w)
    times = {}
    with open(os.path.join(d, "meas", "times.tsv")) as f:
        for line in f:
            r, v, wall, u, s = line.split("\t")
            times.setdefault(v, {})[int(r)] = float(u) + float(s)
    counts = {}
    with open(os.path.join(d, "meas", "counts.tsv")) as f:
        for line in f:
            v, ir, text = line.rstrip("\n").split("\t")
            counts[v] = (int(ir), int(text))
    gen = {}
    gdir = os.path.join(d, "gen")
    for name in os.listdir(gdir) if os.path.isdir(gdir) else []:
        if name.endswith(".time") and not name[:-5].rsplit("-", 1)[-1].isdigit():
            with open(os.path.join(gdir, name)) as f:
                secs, rss = f.read().split()[-2:]
            gen[name[:-5]] = (float(secs), int(rss))
    quality = {}
    for name in os.listdir(gdir) if os.path.isdir(gdir) else []:
        if name.endswith(".quality"):
            txt = open(os.path.join(gdir, name)).read().strip()
            quality[name[:-8]] = float(txt) if txt else None
    failed = {}
    for name in os.listdir(gdir) if os.path.isdir(gdir) else []:
        if name.endswith(".failed"):
            failed[name[:-7]] = open(os.path.join(gdir, name)).read().strip()
    load = []
    for name in ("load-before.txt", "load-after.txt"):
        p = os.path.join(d, "meas", name)
        if os.path.exists(p):
            load.append(open(p).read().strip())
    return times, counts, gen, load, quality, failed

def rows_for(times, counts, gen, quality):
    base = times["base"]
    base_ir = counts["base"][0]
    rows = []
    for v in times:
        ratios = [times[v][r] / base[r] for r in times[v] if r in base and base[r] > 0]
        med = statistics.median(ratios)
        lo, hi = quartiles(ratios)
        cpu = statistics.median(times[v].values())
        ir, text = counts.get(v, (0, 0))
        g = gen.get(v)
        rows.append(dict(variant=v, cpu=cpu, ratio=med, lo=lo, hi=hi, n=len(ratios),
                         ir=ir, ir_ratio=ir / base_ir if base_ir else 0, text=text,
                         gen_s=g[0] if g else None, gen_rss=g[1] if g else None,
                         quality=quality.get(v)))
    order = ["base", "probe", "instr"]
    rows.sort(key=lambda r: (order.index(r["variant"]) if r["variant"] in order else 9, r["variant"]))
    return rows

def pct(x):
    return f"{(x - 1) * 100:+.1f}%"

PROFILE_USE = ("instr", "afdo-", "probe-", "cs-")

def markdown(w, rows, load, failed, quality=None, ip_info=None):
    out = [f"### {w}", "", f"machine load (1/5/15 min) before / after timing: {' / '.join(load) or '?'}", "",
           "| variant | CPU s (median) | time vs -O2 (median, IQR) | instructions | instr. vs -O2 | .text bytes | block overlap | generator s | generator RSS MiB |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        gs = f"{r['gen_s']:.2f}" if r["gen_s"] is not None else ""
        gr = f"{r['gen_rss'] / 1024:.0f}" if r["gen_rss"] is not None else ""
        q = f"{r['quality']:.4f}" if r.get("quality") is not None else ""
        irr = pct(r["ir_ratio"])
        # a profile-use build with exactly the baseline's instruction count
        # most likely ignored its profile: say so rather than show "+0.0%"
        if r["variant"].startswith(PROFILE_USE) and r["ir"] == rows[0]["ir"]:
            irr += " (same as -O2!)"
        out.append(f"| {r['variant']} | {r['cpu']:.3f} | {pct(r['ratio'])} ({pct(r['lo'])} .. {pct(r['hi'])}, n={r['n']}) "
                   f"| {r['ir']:,} | {irr} | {r['text']:,} | {q} | {gs} | {gr} |")
    for v, why in sorted(failed.items()):
        out.append(f"| {v} | **FAILED**: {why.replace('|', '/')} | | | | | | | |")
    out += ip_section(rows, quality or {}, ip_info or {})
    return "\n".join(out) + "\n"

def ip_section(rows, quality, ip_info):
    """IP-sampling variants: inference on/off, and their gain as a share of
    the LBR profile's gain of the same kind (instructions, deterministic)."""
    by = {r["variant"]: r for r in rows}
    if not any(v.startswith(("afdo-ip", "probe-ip", "cs-ip")) for v in by):
        return []
    # the density a reader needs to tell "too few samples" from "wrong method"
    rate = f"{ip_info['freq']} Hz" if ip_info.get("freq") else "? Hz"
    if ip_info.get("seconds"):
        rate += f", {float(ip_info['seconds']):.1f} s of training per run"
    out = ["", f"IP sampling (`pgokit record --ip`: stock perf cpu-clock at {rate}, "
           f"{ip_info.get('chains', '? call chains')}, {ip_info.get('runs', '?')} runs "
           "of every training command merged): " + ip_info.get("samples", ""), "",
           "| IP profile | block overlap, flow inference | without inference | instr. gain | LBR counterpart's gain | share |",
           "|---|---:|---:|---:|---:|---:|"]
    pairs = [("afdo-ip-pgokit", "afdo-ip-noinf", "afdo-pgokit"), ("afdo-ip-cfp", None, "afdo-pgokit"),
             ("probe-ip-pgokit", "probe-ip-noinf", "probe-pgokit"), ("probe-ip-exact", None, "probe-pgokit"),
             ("cs-ip-pgokit", "probe-ip-noinf", "cs-pgokit")]
    for v, noinf, lbr in pairs:
        if v not in by and v not in quality:
            continue
        if lbr == "cs-pgokit" and lbr not in by:
            lbr = "probe-pgokit"   # no LBR CSSPGO in this run: the probe-only one
        q = quality.get(v)
        qn = quality.get(noinf) if noinf else None
        g = 1 - by[v]["ir_ratio"] if v in by else None
        gl = 1 - by[lbr]["ir_ratio"] if lbr in by else None
        # a share of a gain under 0.1 point (or of a loss) says nothing
        if g is None:
            share = "not built in this run"
        elif gl is not None and gl >= 0.001:
            share = f"{g / gl * 100:.0f}%"
        else:
            share = "n/a: no LBR gain" if gl is not None else ""
        out.append(f"| {v} | {q:.4f} | " if q is not None else f"| {v} | | ")
        out[-1] += (f"{qn:.4f}" if qn is not None and v != "cs-ip-pgokit" else "") + " | "
        out[-1] += (f"{g * 100:+.1f}%" if g is not None else "") + f" | {lbr}: " + (f"{gl * 100:+.1f}%" if gl is not None else "?") + f" | {share} |"
    return out

def stage_times(work, workloads):
    """The latest wall/CPU seconds of each stage (bench/scoreboard.sh appends
    one line per stage run to WORK/stage-times.tsv)."""
    p = os.path.join(work, "stage-times.tsv")
    if not os.path.exists(p):
        return ""
    last = {}
    for line in open(p):
        f = line.rstrip("\n").split("\t")
        if len(f) >= 5:
            last[(f[1], f[2])] = (int(f[3]), int(f[4]), f[5] if len(f) > 5 else "", f[6] if len(f) > 6 else "")
    stages = ["build", "record", "profiles", "variants", "measure"]
    out = ["### stage times (wall s / CPU s of the latest run of each stage)", "",
           "| workload | " + " | ".join(stages) + " | total wall |", "|---|" + "---:|" * (len(stages) + 1)]
    total = 0
    for w in workloads:
        cells, tw = [], 0
        for st in stages:
            t = last.get((w, st))
            cells.append(f"{t[0]} / {t[1]}" if t else "")
            tw += t[0] if t else 0
        total += tw
        out.append(f"| {w} | " + " | ".join(cells) + f" | {tw} |")
    out.append(f"| all | " + " | ".join("" for _ in stages) + f" | {total} ({total / 60:.1f} min) |")
    return "\n".join(out) + "\n"

def svg(all_rows):
    """Grouped horizontal bars: run-time change vs -O2 per variant, per workload."""
    bar_h, gap, left, width = 14, 22, 190, 520
    lines, y = [], 30
    scale = 400.0  # pixels per 100 %
    zero = left + width / 2
    for w, rows in all_rows:
        lines.append(f'<text x="10" y="{y}" font-weight="bold">{w}</text>')
        y += 8
        for r in rows:
            if r["variant"] == "base":
                continue
            d = (r["ratio"] - 1) * scale
            x = zero + min(0, d)
            color = "#2a7" if d < 0 else "#c44"
            lines.append(f'<text x="10" y="{y + bar_h - 3}" font-size="12">{r["variant"]}</text>')
            lines.append(f'<rect x="{x:.1f}" y="{y}" width="{abs(d):.1f}" height="{bar_h}" fill="{color}"/>')
            lo, hi = zero + (r["lo"] - 1) * scale, zero + (r["hi"] - 1) * scale
            lines.append(f'<line x1="{lo:.1f}" x2="{hi:.1f}" y1="{y + bar_h / 2}" y2="{y + bar_h / 2}" stroke="#333"/>')
            lines.append(f'<text x="{left + width + 10}" y="{y + bar_h - 3}" font-size="12">{pct(r["ratio"])}</text>')
            y += bar_h + 4
        y += gap
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 90}" height="{y + 10}" '
            f'font-family="sans-serif" font-size="13">'
            f'<text x="{left}" y="15">CPU time vs clang-19 -O2 (median of interleaved rounds; whiskers: IQR)</text>'
            f'<line x1="{zero}" x2="{zero}" y1="20" y2="{y}" stroke="#888"/>')
    return head + "".join(lines) + "</svg>\n"

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--variants", default="",
                    help="the scoreboard's --variants: FAILED rows only for these (others are leftovers)")
    ap.add_argument("workloads", nargs="+")
    a = ap.parse_args()
    picked = set(v for v in a.variants.split(",") if v)
    stamp = datetime.datetime.now().strftime("%Y-%m-%d-%H%M")
    md = [f"# pgokit scoreboard {stamp}", "",
          f"- {version(['clang-19', '--version'])}; {version(['llvm-profgen-19', '--version'])}",
          f"- {version(['uname', '-sr'])}, {os.cpu_count()} CPUs, no PMU (emulated LBR recordings)",
          "- variants: base = clang-19 -O2; probe = -O2 -fpseudo-probe-for-profiling (no profile); "
          "instr = -fprofile-instr-generate/-use (the upper bound); afdo-* = AutoFDO, trained on and applied to "
          "builds with clang's manual's -fdebug-info-for-profiling -funique-internal-linkage-names, from pgokit, "
          "llvm-profgen-19 and AutoFDO 0.19 (its afdo-cfp from LBR trained on and applied to -O2 -g, its best input) (afdo-cfp: its create_gcov, read by llvm-profdata-19, since "
          "Debian's create_llvm_prof 0.19 writes inlined callee names from freed memory, google/autofdo#95); "
          "probe-* = CSSPGO probe-only; cs-* = full CSSPGO (contexts, pre-inliner). "
          "llvm-profgen-19's CSSPGO input (cs-llvm) is the text `perf script -F ip,brstack --show-mmap-events` "
          "prints, written from the same perf.data by `pgokit dump --perfscript` with absolute call chains: "
          "Debian's perf 6.1 prints call-chain addresses relative to their DSO, which leaves llvm-profgen no "
          "caller frame; cs-llvm-dsorel (only when run with --variants) is llvm-profgen-19 on perf 6.1's own "
          "text, handicapped so. The stack-ignoring anchors (afdo-llvm, probe-llvm) read perf's own text "
          "(branch stacks are absolute in it). "
          "Every sample profile of a kind comes from the same emulated recording of the same training run. "
          "*-ip-* variants are trained instead on REAL `pgokit record --ip` runs (stock perf, cpu-clock:u where "
          "the PMU counts no instructions; the call chains record chooses: frame pointers where the build keeps "
          "them, else 1 KiB stack copies) of "
          "the same training commands, several runs merged: AutoFDO on the build its LBR counterpart is "
          "trained on (a line profile speaks of the training binary's code, see bench/lib/variants_ip.sh), probe-only and CSSPGO on the "
          "probe build their LBR counterparts are trained on; "
          "afdo-ip-cfp is AutoFDO 0.19's create_gcov --use_lbr=false on the same perf.data files. "
          + (f"AutoFDO's profile-use builds add {os.environ['SB_AFDO_USE']} (SB_AFDO_USE)."
             if os.environ.get("SB_AFDO_USE") else
             "AutoFDO's profile-use builds use clang-19's own count propagation (no -fsample-profile-use-profi).")
          + (f" Every profile-use build adds {os.environ['SB_PGO_USE']} (SB_PGO_USE)."
             if os.environ.get("SB_PGO_USE") else ""),
          "- block overlap: Σ per function of min of the normalized counts against the exact counts of the "
          "training run, weighted by the function's share (CSSPGO paper §IV-C); generator: wall time and peak RSS.",
          ""]
    all_rows = []
    for w in a.workloads:
        try:
            times, counts, gen, load, quality, failed = load_workload(a.work, w)
            if picked:
                # an earlier run's leftovers are not this run's: failures and
                # block overlaps of the variants named (and the IP rows'
                # without-inference figures)
                failed = {v: why for v, why in failed.items() if v in picked}
                quality = {v: q for v, q in quality.items() if v in picked or v.endswith("-noinf")}
        except FileNotFoundError as e:
            sys.exit(f"report: {w}: missing measurements ({e.filename}): run the measure stage")
        rows = rows_for(times, counts, gen, quality)
        ip_info = {}
        gdir = os.path.join(a.work, w, "gen")
        for key, name in (("runs", "ip-runs.txt"), ("samples", "ip-samples.txt"), ("freq", "ip-freq.txt"),
                          ("seconds", "ip-seconds.txt"), ("chains", "ip-chains.txt")):
            p = os.path.join(gdir, name)
            if os.path.exists(p):
                ip_info[key] = open(p).read().strip().replace("profgen: ", "")
        all_rows.append((w, rows))
        md.append(markdown(w, rows, load, failed, quality, ip_info))
    md.append(stage_times(a.work, a.workloads))
    os.makedirs(a.out, exist_ok=True)
    base = os.path.join(a.out, f"scoreboard-{stamp}")
    with open(base + ".md", "w") as f:
        f.write("\n".join(md))
    with open(base + ".svg", "w") as f:
        f.write(svg(all_rows))
    print("\n".join(md))
    print(f"written: {base}.md {base}.svg")

if __name__ == "__main__":
    main()
