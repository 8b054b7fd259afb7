#!/usr/bin/env python3
"""Compares the inlining decisions of two nested (pre-inlined) CSSPGO profiles.

    bench/inline_diff.py A.prof B.prof [--top N] [--min-samples N]

Each profile may be in any format llvm-profdata-19 reads; both are converted
to LLVM's text form with `llvm-profdata-19 merge --sample --text`. A nested
profile says the pre-inliner's decisions directly: an inlinee under a
caller's call site is a context the compiler will inline, a top-level profile
is a function it will call. The report lists:

  - totals: top-level profiles, inlined contexts, samples kept inlined,
    samples of the top-level bodies, and the inline depth of both;
  - the inlined contexts only one of the two keeps, heaviest first (the
    samples the other side puts elsewhere), each with the call site's path
    `outer:loc @ inner:loc @ leaf` and the samples on both sides;
  - for contexts both keep, the largest differences in samples (the
    profiles' totals and head counts, where the decisions below them moved
    counts);
  - functions that are top-level in one profile only.

It reads the profiles only: to ask why a decision was taken, look the
context up in both (`llvm-profdata-19 show --sample --function NAME`).
"""
import argparse
import re
import subprocess
import sys
from collections import defaultdict

HEAD_RE = re.compile(r'^(\S.*?):(\d+):(\d+)$')
# an inlinee: " LOC: NAME:TOTAL" (NAME is not a number)
INLINE_RE = re.compile(r'^(\s+)(\d+(?:\.\d+)?): (\S+):(\d+)$')
BODY_RE = re.compile(r'^(\s+)(\d+(?:\.\d+)?): (\d+)')


def text_of(path):
    try:
        return subprocess.run(['llvm-profdata-19', 'merge', '--sample', '--text', path, '-o', '-'],
                              check=True, capture_output=True, text=True).stdout
    except subprocess.CalledProcessError as e:
        sys.exit(f'inline_diff: llvm-profdata-19 cannot read {path}: {e.stderr.strip()[:300]}')


def short(name):
    """The function name without clang's .__uniq suffix, for reading."""
    return re.sub(r'\.__uniq\.\d+', '', name)


def parse_profile(text):
    tops, inlined = {}, {}
    frames = []   # [(function, loc in it of the next frame's call site)]
    indents = []  # indent of each frame's body lines
    for line in text.splitlines():
        if not line.strip():
            continue
        if not line[0].isspace():
            m = HEAD_RE.match(line)
            if not m:
                continue
            frames = [[m.group(1), None]]
            indents = [1]
            tops[m.group(1)] = [int(m.group(2)), int(m.group(3)), 0]
            continue
        indent = len(line) - len(line.lstrip(' '))
        if line.lstrip().startswith('!'):
            continue
        while len(indents) > 1 and indent < indents[-1]:
            frames.pop()
            indents.pop()
        m = INLINE_RE.match(line)
        if m and not m.group(3).isdigit():
            frames[-1][1] = m.group(2)
            path = tuple((f, l) for f, l in frames) + ((m.group(3), None),)
            inlined[path] = inlined.get(path, 0) + int(m.group(4))
            frames.append([m.group(3), None])
            indents.append(indent + 1)
            continue
        m = BODY_RE.match(line)
        if m and len(frames) == 1:
            tops[frames[0][0]][2] += int(m.group(3))
    return tops, inlined


def path_str(path):
    return ' @ '.join(short(f) + (f':{l}' if l is not None else '') for f, l in path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('a')
    ap.add_argument('b')
    ap.add_argument('--top', type=int, default=25, help='rows per list (default 25)')
    ap.add_argument('--min-samples', type=int, default=1, help='ignore contexts lighter than this')
    ap.add_argument('--names', default='A,B', help='labels of the two profiles (default A,B)')
    args = ap.parse_args()
    na, nb = args.names.split(',', 1)
    ta, ia = parse_profile(text_of(args.a))
    tb, ib = parse_profile(text_of(args.b))

    def depth_hist(inl):
        h = defaultdict(int)
        for p in inl:
            h[len(p) - 1] += 1
        return dict(sorted(h.items()))

    print(f'{"":34s} {na:>16s} {nb:>16s}')
    rows = [
        ('top-level profiles', len(ta), len(tb)),
        ('inlined contexts', len(ia), len(ib)),
        ('samples in inlined contexts', sum(ia.values()), sum(ib.values())),
        ('samples in top-level profiles', sum(v[0] for v in ta.values()), sum(v[0] for v in tb.values())),
        ('head samples of top-level', sum(v[1] for v in ta.values()), sum(v[1] for v in tb.values())),
    ]
    for label, x, y in rows:
        print(f'{label:34s} {x:16,d} {y:16,d}')
    print(f'{"inline depth: contexts":34s} {str(depth_hist(ia)):>16s} {str(depth_hist(ib)):>16s}')

    both = set(ia) & set(ib)
    only_a = sorted((p for p in ia if p not in ib and ia[p] >= args.min_samples), key=lambda p: -ia[p])
    only_b = sorted((p for p in ib if p not in ia and ib[p] >= args.min_samples), key=lambda p: -ib[p])
    wa = sum(ia[p] for p in only_a)
    wb = sum(ib[p] for p in only_b)
    print(f'\ninlined by both: {len(both):,} contexts; {na} only: {len(only_a):,} ({wa:,} samples); '
          f'{nb} only: {len(only_b):,} ({wb:,} samples)')

    # A context kept by one side only is usually a subtree: list only its root
    # (its descendants follow the same decision).
    def roots(lst):
        s = set(lst)
        return [p for p in lst if not any(p[:k - 1] + ((p[k - 1][0], None),) in s for k in range(2, len(p)))]

    for label, other, lst, inl, oth_tops in ((na, nb, only_a, ia, tb), (nb, na, only_b, ib, ta)):
        r = roots(lst)
        print(f'\n== inlined by {label} only ({len(r):,} decisions; samples; the callee\'s top-level '
              f'total in {other}) ==')
        for p in r[:args.top]:
            callee = p[-1][0]
            ot = oth_tops.get(callee, [0])[0]
            print(f'{inl[p]:12,d}  {path_str(p)}   [{other}: {"top-level " + format(ot, ",") if callee in oth_tops else "not top-level"}]')

    diffs = sorted(both, key=lambda p: -abs(ia[p] - ib[p]))
    print(f'\n== inlined by both, largest differences in samples ({na} / {nb}) ==')
    for p in diffs[:args.top]:
        if ia[p] == ib[p]:
            break
        print(f'{ia[p]:12,d} {ib[p]:12,d}  {path_str(p)}')

    oa = sorted((f for f in ta if f not in tb), key=lambda f: -ta[f][0])
    ob = sorted((f for f in tb if f not in ta), key=lambda f: -tb[f][0])
    for label, lst, tops in ((na, oa, ta), (nb, ob, tb)):
        print(f'\n== top-level in {label} only ({len(lst):,}) ==')
        for f in lst[:args.top]:
            print(f'{tops[f][0]:12,d}  {short(f)}')
    ct = sorted((f for f in ta if f in tb), key=lambda f: -abs(ta[f][0] - tb[f][0]))
    print(f'\n== top-level in both, largest differences in total ({na} / {nb}; head) ==')
    for f in ct[:args.top]:
        if ta[f][0] == tb[f][0]:
            break
        print(f'{ta[f][0]:12,d} {tb[f][0]:12,d}  {short(f)}  (head {ta[f][1]:,} / {tb[f][1]:,})')


if __name__ == '__main__':
    main()
