#!/usr/bin/env python3
"""report_dom.py DOM [CHECKS...] — reads a report page as headless Chromium
dumped it after running its script (--dump-dom), and checks it:
  rendered       the script finished (<body data-rendered="1">), no error
  size:ID        the element ID (or "source") was laid out with a non-zero size
  inlined:N      the decisions section counts N inlined contexts
  samples:N      the summary counts N samples
  overlap:X      the program block overlap is X (to 1e-9)
  lines:FILE     the source view's counts of the function named in FILE's
                 first line equal the lines given on the next ones
                 ("LINE COUNT"), and no other line of it has a count
  nodes>=N       the context tree holds at least N nodes
Prints one "ok: ..." or "FAIL: ..." line per check and the render times
("render-ms: X script-ms: Y"); exits 1 if a check failed."""
import html.parser
import json
import sys


class Dom(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.body = {}
        self.data = None
        self._in_data = False
        self._chunks = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "body":
            self.body = a
        if tag == "script" and a.get("id") == "pk-data":
            self._in_data = True

    def handle_endtag(self, tag):
        if tag == "script" and self._in_data:
            self._in_data = False
            self.data = json.loads("".join(self._chunks))

    def handle_data(self, d):
        if self._in_data:
            self._chunks.append(d)


def main():
    dom = Dom()
    dom.feed(open(sys.argv[1], encoding="utf-8").read())
    body, data = dom.body, dom.data
    fails = 0

    def check(ok, what):
        nonlocal fails
        print(("ok: " if ok else "FAIL: ") + what)
        fails += not ok

    sizes = json.loads(body.get("data-sizes", "{}"))
    print("render-ms: %s script-ms: %s zoom-ms: %s" % (body.get("data-render-ms"), body.get("data-script-ms"),
                                                      body.get("data-zoom-ms", "-")))
    for c in sys.argv[2:]:
        if c == "rendered":
            check(body.get("data-rendered") == "1" and "data-js-error" not in body,
                  "script rendered the page without error (%s)" % body.get("data-js-error", "no error"))
        elif c.startswith("size:"):
            k = c[5:]
            w, h = sizes.get(k, [0, 0])
            check(w > 0 and h > 0, "%s laid out at %dx%d" % (k, w, h))
        elif c.startswith("inlined:"):
            got = data["decisions"]["inlined"]
            check(got == int(c[8:]), "inlined contexts: %s (expected %s)" % (got, c[8:]))
        elif c.startswith("samples:"):
            got = data["summary"]["samples"]
            check(got == int(c[8:]), "samples: %s (expected %s)" % (got, c[8:]))
        elif c.startswith("overlap:"):
            got = data["overlap"]["overlap"]
            check(abs(got - float(c[8:])) < 1e-9, "block overlap: %s (expected %s)" % (got, c[8:]))
        elif c.startswith("nodes>="):
            got = data["tree"]["nodes"]
            check(got >= int(c[7:]), "context tree nodes: %s (at least %s)" % (got, c[7:]))
        elif c.startswith("lines:"):
            spec = open(c[6:]).read().split("\n")
            func, want = spec[0], {}
            for ln in spec[1:]:
                if ln.strip():
                    a, b = ln.split()
                    want[int(a)] = int(b)
            names = data["names"]
            got, span = {}, None
            for f in data["sources"]["files"]:
                starts = [x[1] for x in f["functions"] if names[x[0]] == func]
                if not starts:
                    continue
                lo = starts[0]
                # the function's own lines: up to the next function's start in that file
                later = sorted(x[1] for x in f["functions"] if x[1] > lo)
                hi = later[0] if later else 1 << 30
                span = (lo, hi)
                for b in f["blocks"]:
                    for i, cnt in enumerate(b["count"]):
                        line = b["first"] + i
                        if lo <= line < hi and cnt >= 0:
                            got[line] = cnt
            check(span is not None and got == want,
                  "source counts of %s: %s" % (func, "as expected" if got == want else
                                               "got %s, expected %s" % (sorted(got.items()), sorted(want.items()))))
        else:
            check(False, "unknown check " + c)
    return 1 if fails else 0


sys.exit(main())
