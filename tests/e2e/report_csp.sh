#!/bin/bash
# report_csp: the report page runs only its own script (named by hash in its
# Content-Security-Policy): markup that slipped into the page runs nothing,
# neither a script element nor an inline event handler; bidi overrides in
# names are shown, not obeyed.
source "$(dirname "$0")/../lib.sh"
need chromium python3 timeout
cd "$T"
CHROME=(chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run
        --disable-background-networking --disable-component-update --disable-sync)
ud=0
dom() { # PAGE -> PAGE.dom (the DOM after the scripts ran)
  ud=$((ud + 1))
  timeout 60 "${CHROME[@]}" --user-data-dir="$T/ud$ud" --window-size=1280,1000 \
      --dump-dom "file://$T/$1" > "$T/$1.dom" 2> "$T/$1.log"
}
RLO=$'\xe2\x80\xae'
printf 'main:1000:10\n 1: 600\n 2: 400\nhot%sgpj.exe:500:5\n 1: 500\n' "$RLO" > p.prof
"$PGOKIT" report -q p.prof --title "t${RLO}itle" -o page.html
check "report written" test -s page.html
csp=$(grep -o 'Content-Security-Policy" content="[^"]*"' page.html)
check "CSP: script-src names a hash" grep -q "script-src 'sha256-" <<< "$csp"
check "CSP: no 'unsafe-inline' script" bash -c "! grep -qE \"script-src[^;]*unsafe-inline\" <<< \"\$1\"" _ "$csp"
# the hash is the page's own script's
check "CSP: the hash is the SHA-256 of the page's script" python3 -c '
import base64, hashlib, re, sys
p = open("page.html", encoding="utf-8").read()
h = re.search(r"script-src .sha256-([A-Za-z0-9+/=]+).", p).group(1)
s = re.findall(r"<script>(.*?)</script>", p, re.S)
sys.exit(not (len(s) == 1 and base64.b64encode(hashlib.sha256(s[0].encode()).digest()).decode() == h))'

# what an escape that slipped would let through: an inline script and an
# inline event handler on an image that loads (data: images are allowed);
# each marks the page with an attribute whose name its source does not hold
python3 - <<'PY'
p = open("page.html", encoding="utf-8").read()
inj = ('<script>document.documentElement.setAttribute("data-pwned-" + "script", "1")</script>'
       '<img src="data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7" '
       'onload="document.documentElement.setAttribute(\'data-pwned-\' + \'handler\', \'1\')">')
open("injected.html", "w", encoding="utf-8").write(p.replace("<main id=\"pk-main\">", inj + "<main id=\"pk-main\">", 1))
PY
dom page.html
dom injected.html
check "the page's own script runs" grep -q 'data-rendered="1"' page.html.dom
check "with injected markup: the page's own script still runs" grep -q 'data-rendered="1"' injected.html.dom
check "an injected inline script does not run" bash -c "! grep -q 'data-pwned-script' injected.html.dom"
check "an injected inline event handler does not run" bash -c "! grep -q 'data-pwned-handler' injected.html.dom"
check "no bidi override reaches the rendered page" python3 -c '
import sys
d = open("page.html.dom", encoding="utf-8").read()
body = d[d.index("<body"):]
body = body[:body.find("<script type=\"application/json\"")] if "<script type=\"application/json\"" in body else body
sys.exit("\u202e" in body)'
check "the override is shown as its code point" grep -q 'U+202E' page.html.dom
finish
