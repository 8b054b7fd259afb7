#!/usr/bin/env python3
"""Run the RUN lines of llvm-profgen's lit tests twice, once with `llvm-profgen`
meaning `pgokit llvm-profgen` and once meaning llvm-profgen-19, and compare.
A command line whose profile is the result: the profile each side wrote is
compared (the oracle is llvm-profgen-19's output on the same command line).
A command line whose stdout or stderr is piped into FileCheck (a dump, a
warning, --help): the test's own FileCheck command judges each side's output.

usage: compat_lit.py TESTDIR WORKDIR PGOKIT  (Markdown on stdout)
"""
import difflib, glob, os, re, shlex, subprocess, sys

testdir, workdir, pgokit = sys.argv[1:4]
TOOLS = ["llvm-profdata", "llvm-objcopy", "yaml2obj", "llvm-dwp", "llc", "llvm-mc", "llvm-objdump"]
FILECHECK = "/usr/lib/llvm-19/bin/FileCheck"
# llvm-profgen options whose result is a dump on stdout, not a profile
DUMPS = ["--show-disassembly-only", "--show-mmap-events", "--debug-only", "--show-pseudo-probe",
         "--show-source-locations", "--help", "--show-detailed-warning"]
PROFGEN_CMD = re.compile(r"(?<![\w/.%-])llvm-profgen(?![\w.-])")


def run_lines(path):
    lines, cur = [], None
    for raw in open(path, encoding="utf-8", errors="replace"):
        m = re.search(r"(?:;|#|//)\s*RUN:\s?(.*)$", raw)
        if not m:
            continue
        text = m.group(1).rstrip()
        cur = (cur + " " if cur is not None else "") + text.rstrip("\\").rstrip()
        if not text.endswith("\\"):
            lines.append(cur)
            cur = None
    return lines


def substitute(line, test, tmp):
    d = os.path.dirname(test)
    return (line.replace("%python", "python3").replace("%S", d).replace("%s", test)
            .replace("%p", d).replace("%T", os.path.dirname(tmp)).replace("%t", tmp))


WRAP = r'''
set +e
SNAP=__SNAP__
# __n: llvm-profgen runs before this RUN line (set per line: a pipeline's
# commands run in subshells, where a running count would be lost);
# __fc: this line pipes llvm-profgen's output into FileCheck
__n=0
__fc=0
__pg() {
    __n=$((__n + 1))
    local out= prev= a
    for a in "$@"; do
        case "$a" in
            --output=*|-output=*) out=${a#*=} ;;
            -o=*) out=${a#*=} ;;
        esac
        case "$prev" in --output|-output|-o) out=$a ;; esac
        prev=$a
    done
    printf '%s\n' "$*" > "$SNAP/$__n.args"
    [ -n "$out" ] && [ "$out" != /dev/null ] && [ -f "$out" ] && rm -f "$out"
    timeout 600 __TOOL__ "$@" > "$SNAP/$__n.out" 2> "$SNAP/$__n.err"
    local rc=$?
    echo $rc > "$SNAP/$__n.rc"
    [ -n "$out" ] && [ "$out" != /dev/null ] && [ -f "$out" ] && cp "$out" "$SNAP/$__n.prof"
    cat "$SNAP/$__n.out"; cat "$SNAP/$__n.err" >&2
    return $rc
}
function llvm-profgen { __pg "$@"; }
# FileCheck reading llvm-profgen's output: kept, with the check's arguments,
# for compare() to run the real FileCheck on each side's output
function FileCheck {
    if [ "$__fc" = 1 ]; then
        local k=$((__n + 1))
        cat > "$SNAP/$k.fcin"
        printf '%s\0' "$@" > "$SNAP/$k.fcargs"
    else
        cat > /dev/null
    fi
    return 0
}
function not { ! "$@"; }
'''


def side_script(test, side, tool):
    base = os.path.join(workdir, side, os.path.basename(test)[:-5])
    snap = base + ".snap"
    subprocess.run(["rm", "-rf", snap, base + ".tmp"])
    os.makedirs(snap)
    body = WRAP.replace("__SNAP__", shlex.quote(snap)).replace("__TOOL__", tool)
    for t in TOOLS:
        body += "function %s { %s-19 \"$@\"; }\n" % (t, t)
    body += "cd %s\n" % shlex.quote(os.path.dirname(snap))
    runs = 0
    for ln in run_lines(test):
        body += "__n=%d; __fc=%d\n" % (runs, 1 if profgen_piped_to_filecheck(ln) else 0)
        body += substitute(ln, test, base + ".tmp") + "\n"
        runs += len(PROFGEN_CMD.findall(ln))
    return snap, body


def profgen_piped_to_filecheck(line):
    """Whether llvm-profgen's stdout (or, with 2>&1, its stderr) goes straight
    into FileCheck on this RUN line ('||' is not a pipe)."""
    parts = re.split(r"(?<!\|)\|(?!\|)", line)
    for left, right in zip(parts, parts[1:]):
        if (re.match(r"\s*FileCheck\b", right) and "--input-file" not in right
                and re.match(r"\s*(not\s+)?llvm-profgen\b", re.split(r"&&|;|\|\|", left)[-1])):
            return True
    return False


def filecheck(snap, n):
    """The test's FileCheck on one side's output of run n: (passed, first error line)."""
    args = open(os.path.join(snap, "%d.fcargs" % n), "rb").read().split(b"\0")[:-1]
    with open(os.path.join(snap, "%d.fcin" % n), "rb") as inp:
        r = subprocess.run([FILECHECK] + [a.decode() for a in args], stdin=inp, capture_output=True)
    err = [ln for ln in r.stderr.decode(errors="replace").splitlines() if "error:" in ln]
    msg = (err[0] if err else r.stderr.decode(errors="replace").strip()[:200])
    return r.returncode == 0, msg.replace(testdir + "/", "")


def profdata(*args):
    r = subprocess.run(["llvm-profdata-19"] + list(args), capture_output=True, text=True)
    return r.returncode, r.stdout


def similarity(ref, ours):
    rc, out = profdata("overlap", "--sample", ref, ours)
    m = re.search(r"Whole program profile similarity:\s*([0-9.]+)%", out) if rc == 0 else None
    return float(m.group(1)) if m else None


def as_text(path):
    rc, _ = profdata("merge", "--sample", "--text", path, "-o", path + ".txt")
    return open(path + ".txt").read() if rc == 0 else None


def error_line(path):
    """The line of a failed run that says why (warnings come before it)."""
    try:
        lines = [ln.strip() for ln in open(path, errors="replace") if ln.strip()]
    except OSError:
        return ""
    bad = [ln for ln in lines if "warning" not in ln]
    return (bad or lines or [""])[-1]


def first_line(path):
    try:
        for ln in open(path, errors="replace"):
            if ln.strip():
                return ln.strip()
    except OSError:
        pass
    return ""


def compare(n, ref, ours):
    """One llvm-profgen command line: (verdict, note)."""
    args = open(os.path.join(ref, "%d.args" % n)).read().strip()
    rrc = int(open(os.path.join(ref, "%d.rc" % n)).read())
    orc_path = os.path.join(ours, "%d.rc" % n)
    if not os.path.exists(orc_path):
        return "cannot", "command line %d not reached" % n
    orc = int(open(orc_path).read())
    oerr = error_line(os.path.join(ours, "%d.err" % n))
    if os.path.exists(os.path.join(ref, "%d.fcargs" % n)) and os.path.exists(os.path.join(ours, "%d.fcargs" % n)):
        return judge_by_checks(n, ref, ours, args, rrc, orc, oerr)
    dump = next((d for d in DUMPS if re.search(r"(^|\s)-?" + re.escape(d) + r"(\s|=|$)", args)), None)
    if orc != 0:
        if rrc != 0:
            return ("dump", "llvm-profgen debug dump %s, refused by both" % dump) if dump else ("agree", "both refuse")
        m = re.search(r"option (-\S+) is not supported", open(os.path.join(ours, "%d.err" % n), errors="replace").read())
        if dump and m:
            return "dump", "llvm-profgen debug dump %s" % dump
        return "cannot", ("option %s" % m.group(1)) if m else oerr.replace(testdir + "/", "").replace(workdir + "/", "")[:200]
    if rrc != 0:
        return "differ", "llvm-profgen-19 fails: " + error_line(os.path.join(ref, "%d.err" % n))[:120]
    rp, op = os.path.join(ref, "%d.prof" % n), os.path.join(ours, "%d.prof" % n)
    if dump:
        same = open(os.path.join(ref, "%d.out" % n)).read() == open(os.path.join(ours, "%d.out" % n)).read()
        return ("agree", "") if same else ("dump", "llvm-profgen debug dump %s" % dump)
    if not os.path.exists(rp) and not os.path.exists(op):
        return "agree", "no profile written"
    if not os.path.exists(op) or not os.path.exists(rp):
        return "differ", "only %s wrote a profile" % ("llvm-profgen-19" if os.path.exists(rp) else "pgokit")
    a, b = open(rp, "rb").read(), open(op, "rb").read()
    if a == b:
        return "agree", "identical"
    ta, tb = as_text(rp), as_text(op)
    if ta is not None and tb is not None:
        if ta == tb:
            return "agree", "same profile"
        s = similarity(rp, op)
        return "differ", "similarity %s%%" % ("?" if s is None else "%.2f" % s)
    # unsymbolized text (--skip-symbolization): lines in common
    la, lb = a.decode(errors="replace").splitlines(), b.decode(errors="replace").splitlines()
    r = difflib.SequenceMatcher(None, la, lb, autojunk=False).ratio()
    return "differ", "unsymbolized text, %.1f%% of lines alike" % (100 * r)


def judge_by_checks(n, ref, ours, args, rrc, orc, oerr):
    """A run whose output the test pipes into FileCheck: the test's checks on each side."""
    ok, why = filecheck(ours, n)
    rok, rwhy = filecheck(ref, n)
    if not ok:
        note = "pgokit fails the checks: " + why[:160]
        if orc != 0:
            m = re.search(r"option (-\S+) is not supported", open(os.path.join(ours, "%d.err" % n), errors="replace").read())
            note += ("; pgokit refuses option %s" % m.group(1) if m else
                     "; pgokit: " + oerr.replace(testdir + "/", "").replace(workdir + "/", "")[:120])
        return "differ", note
    if rok:
        return "agree", "both pass the test's checks"
    rerr = open(os.path.join(ref, "%d.err" % n), errors="replace").read()
    m = re.search(r"Unknown command line argument '(-[^=' ]+)", rerr)
    if m:
        return "refcannot", ("pgokit passes the test's checks; llvm-profgen-19 (release build) refuses %s"
                             % m.group(1))
    return "refcannot", ("pgokit passes the test's checks; llvm-profgen-19 fails them: " + rwhy[:120]
                         + ("" if rrc == 0 else "; llvm-profgen-19: " + error_line(os.path.join(ref, "%d.err" % n))[:100]))


def main():
    tests = sorted(glob.glob(os.path.join(testdir, "*.test")))
    # ONLY=name,name: just these tests (a quick look at a few while working)
    only = [t for t in os.environ.get("ONLY", "").split(",") if t]
    if only:
        tests = [t for t in tests if os.path.basename(t)[:-5] in only]
    rows, counts = [], {"agree": 0, "differ": 0, "cannot": 0, "dump": 0, "refcannot": 0}
    for test in tests:
        name = os.path.basename(test)[:-5]
        snaps = {}
        for side, tool in (("ref", "llvm-profgen-19"), ("ours", shlex.quote(pgokit) + " llvm-profgen")):
            snap, body = side_script(test, side, tool)
            subprocess.run(["bash", "-c", body], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=1800)
            snaps[side] = snap
        nref = len(glob.glob(os.path.join(snaps["ref"], "*.rc")))
        results = [compare(n, snaps["ref"], snaps["ours"]) for n in range(1, nref + 1)]
        kinds = [k for k, _ in results]
        verdict = ("cannot" if "cannot" in kinds else "differ" if "differ" in kinds
                   else "dump" if "dump" in kinds and "agree" not in kinds
                   else "refcannot" if "refcannot" in kinds else "agree")
        if nref == 0:
            verdict = "cannot"
            results = [("cannot", "no llvm-profgen command line")]
        counts[verdict] += 1
        notes = "; ".join("%d: %s%s" % (i + 1, {"refcannot": "passes"}.get(k, k), (" (" + t + ")") if t else "")
                          for i, (k, t) in enumerate(results) if k != "agree" or verdict == "agree" and t)
        label = {"agree": "agrees", "differ": "differs", "cannot": "cannot run", "dump": "debug dump",
                 "refcannot": "passes, llvm-profgen-19 cannot run it"}[verdict]
        rows.append("| %s | %s | %d | %s |" % (name, label, nref, notes.replace("|", "\\|")))
        print("%-40s %s" % (name, label), file=sys.stderr, flush=True)
    print("| test | result | llvm-profgen runs | per run (n: result) |")
    print("|---|---|---|---|")
    print("\n".join(rows))
    print()
    print("**%d tests: %d agree, %d pass their checks where llvm-profgen-19 cannot run them, %d differ, "
          "%d cannot run, %d debug dumps only (not compared)**"
          % (len(tests), counts["agree"], counts["refcannot"], counts["differ"], counts["cannot"], counts["dump"]))


main()
