#!/usr/bin/env bash
# debuginfo_debuginfod.sh — debug information fetched by build-id from a
# debuginfod server (Debian's `debuginfod`, started here on 127.0.0.1 over a
# directory holding the debug file), through libdebuginfod and its cache
# (a private DEBUGINFOD_CACHE_PATH), for a fully stripped binary:
#  - the profile equals the unstripped binary's; the summary names the file
#    in the cache; once cached, the file is used with the server gone;
#  - a dwz-compressed debug file brings its supplementary file, fetched by
#    its build-id from the same server (symbolize = llvm-symbolizer-19);
#  - an unreachable server, a build-id the server does not have (404), a
#    server that serves a file of another build-id, a binary without a
#    build-id and a server that never answers each give a clear error
#    (exit 1, no output) within a bounded time; a command that needs no
#    debug information (decode) is not stopped by them.
source "$(dirname "$0")/../lib.sh"
need clang-19 gcc-12 dwz debuginfod curl python3 objcopy qemu-x86_64 llvm-symbolizer-19 llvm-objdump-19
[ -f "$PK_BUILD/pgokit-lbr.so" ] || { echo "skipped: $PK_BUILD/pgokit-lbr.so not built"; exit 77; }
P=$PK_ROOT/tests/programs

srv_pid= mute_pid= wrong_pid=
cleanup() {
    [ -n "$wrong_pid" ] && kill "$wrong_pid" 2>/dev/null && wait "$wrong_pid" 2>/dev/null
    [ -n "$srv_pid" ] && kill "$srv_pid" 2>/dev/null && wait "$srv_pid" 2>/dev/null
    [ -n "$mute_pid" ] && kill "$mute_pid" 2>/dev/null && wait "$mute_pid" 2>/dev/null
    [ -n "${PK_KEEP_TMP:-}" ] || rm -rf "$T"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# run NAME URLS [env...] -- pgokit args: exit status in $rc, seconds in $secs
run() {
    local name=$1 urls=$2; shift 2
    local t0; t0=$(date +%s.%N)
    env DEBUGINFOD_URLS="$urls" DEBUGINFOD_CACHE_PATH="$T/cache.$name" "$@" 2>"$T/$name.err"
    rc=$?
    secs=$(echo "$(date +%s.%N) - $t0" | bc)
}

clang-19 -O2 -g "$P/profgen_demo.c" -o "$T/demo" || { fail "build fixture"; finish; exit; }
clang-19 -O1 -g "$P/profgen_demo.c" -o "$T/other"
clang-19 -O2 -g -Wl,--build-id=none "$P/profgen_demo.c" -o "$T/noid"
mkdir -p "$T/srv" "$T/bin"
objcopy --only-keep-debug "$T/demo" "$T/srv/demo.debug"
for x in demo other noid; do objcopy --strip-all "$T/$x" "$T/bin/$x"; done
# dwz'd debug files and their supplementary file, served too
gcc-12 -O2 -g -fno-pie -no-pie "$P/profgen_demo.c" -o "$T/ga"
gcc-12 -O2 -g -fno-pie -no-pie "$P/binary_inline.c" -o "$T/gb"
for x in ga gb; do objcopy --only-keep-debug "$T/$x" "$T/srv/$x.debug"; objcopy --strip-all "$T/$x" "$T/bin/$x"; done
(cd "$T/srv" && dwz -m common.debug -M /usr/lib/debug/.dwz/pgokit-test-common.debug ga.debug gb.debug) ||
    fail "dwz -m"
"$PGOKIT" record --emulate -q -o "$T/perf.data" -- "$T/bin/demo" 8 >/dev/null 2>&1
check "recorded the stripped binary" test -s "$T/perf.data"
"$PGOKIT" profgen --binary "$T/demo" --perf "$T/perf.data" -o "$T/ref.txt" --format text -q

# the server: ready when it has scanned the 4 debug files (polled, at most 20 s)
port=$(free_port)
debuginfod -F "$T/srv" -p "$port" -d "$T/srv.sqlite" -t 0 -g 0 >"$T/srv.log" 2>&1 &
srv_pid=$!
ready=0
for _ in $(seq 1 200); do
    curl -s "http://127.0.0.1:$port/metrics" 2>/dev/null | grep -q '^scanned_files_total{source="file"} [4-9]' &&
        { ready=1; break; }
    kill -0 "$srv_pid" 2>/dev/null || break
    sleep 0.1
done
check "debuginfod is up and has scanned the debug files" [ $ready -eq 1 ]
URL=http://127.0.0.1:$port

run fetch "$URL" "$PGOKIT" profgen --binary "$T/bin/demo" --perf "$T/perf.data" -o "$T/fetched.txt" --format text
check_eq "fetched: exit 0" 0 "$rc"
check "fetched: the profile equals the unstripped binary's" cmp -s "$T/ref.txt" "$T/fetched.txt"
check "fetched: the summary names the file in the private cache" \
    grep -q "debug info: $T/cache.fetch/.*/debuginfo (debuginfod)" "$T/fetch.err"
"$PGOKIT" symbolize --binary "$T/bin/demo" 0x0 </dev/null >/dev/null 2>"$T/sym.err"
check "without DEBUGINFOD_URLS the server is not asked" \
    sh -c "grep -q 'give --debug-binary' '$T/sym.err' && ! grep -q 'debuginfod (http' '$T/sym.err'"

# a dwz'd debug file: its supplementary file is fetched by its build-id too
llvm-objdump-19 -d --no-show-raw-insn "$T/ga" | awk '/^ +[0-9a-f]+:/ { a=$1; sub(":", "", a); print "0x" a }' > "$T/ga.addrs"
llvm-symbolizer-19 --obj="$T/ga" --inlines --no-demangle --output-style=JSON < "$T/ga.addrs" |
    sed "s|\"ModuleName\":\"$T/ga\"|\"ModuleName\":\"$T/bin/ga\"|" > "$T/ga.llvm"
run dwz "$URL" "$PGOKIT" symbolize --binary "$T/bin/ga" --output-style=JSON < "$T/ga.addrs" > "$T/ga.ours"
check_eq "dwz'd: exit 0" 0 "$rc"
check "dwz'd: symbolize equals llvm-symbolizer-19 on the unstripped binary ($(wc -l < "$T/ga.addrs") addresses)" \
    cmp -s "$T/ga.ours" "$T/ga.llvm"
check "dwz'd: the supplementary file came from debuginfod" \
    grep -q "(debuginfod), dwz supplementary file $T/cache.dwz/.*/debuginfo" "$T/dwz.err"

# a build-id the server does not have
run 404 "$URL" "$PGOKIT" symbolize --binary "$T/bin/other" 0x401000
oid=$(readelf -n "$T/other" | awk '/Build ID/ {print $3}')
check_eq "404: exit 1" 1 "$rc"
check "404: the error names the binary, the build-id and the server" \
    grep -q "^pgokit symbolize: $T/bin/other: no DWARF .* no debug information for build-id $oid on the debuginfod servers ($URL)" \
    "$T/404.err"
check "404: answered within 10 s ($secs s)" awk -v s="$secs" 'BEGIN { exit !(s < 10) }'

# a binary without a build-id: nothing to ask for
run noid "$URL" "$PGOKIT" symbolize --binary "$T/bin/noid" 0x1000
check_eq "no build-id: exit 1" 1 "$rc"
check "no build-id: the error says so" grep -q "^pgokit symbolize: $T/bin/noid: .*no build-id note, so debuginfod" \
    "$T/noid.err"

# a server that answers every build-id with the debug file of another build
objcopy --only-keep-debug "$T/other" "$T/other.debug"
wport=$(free_port)
python3 -c "
import http.server
body = open('$T/other.debug', 'rb').read()
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.send_header('Content-Length', str(len(body))); self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a): pass
http.server.HTTPServer(('127.0.0.1', $wport), H).serve_forever()
" &
wrong_pid=$!
for _ in $(seq 1 50); do curl -s -o /dev/null "http://127.0.0.1:$wport/x" && break; sleep 0.1; done
run wrong "http://127.0.0.1:$wport" "$PGOKIT" symbolize --binary "$T/bin/demo" 0x1000
kill "$wrong_pid"; wait "$wrong_pid" 2>/dev/null; wrong_pid=
check_eq "a file of another build served: exit 1" 1 "$rc"
check "a file of another build served: the error says its build-id differs" \
    grep -q "^pgokit symbolize: $T/bin/demo: .*served .* for build-id .*, but its build-id differs" "$T/wrong.err"

# a server that accepts connections and never answers: bounded by DEBUGINFOD_TIMEOUT
mport=$(free_port)
python3 -c "
import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('127.0.0.1', $mport)); s.listen(8)
conns = []
while True:
    c, _ = s.accept(); conns.append(c)
" &
mute_pid=$!
for _ in $(seq 1 50); do python3 -c "import socket; socket.create_connection(('127.0.0.1', $mport), 1)" 2>/dev/null && break; sleep 0.1; done
run mute "http://127.0.0.1:$mport" DEBUGINFOD_TIMEOUT=2 "$PGOKIT" profgen --binary "$T/bin/demo" \
    --perf "$T/perf.data" -o "$T/mute.txt"
check_eq "silent server: exit 1" 1 "$rc"
check "silent server: no output" test ! -e "$T/mute.txt"
check "silent server: the error says no answer within the timeout" \
    grep -q "^pgokit profgen: $T/bin/demo: no DWARF .*no answer .* within 2 s" "$T/mute.err"
check "silent server: gave up within 10 s ($secs s)" awk -v s="$secs" 'BEGIN { exit !(s < 10) }'
kill "$mute_pid"; wait "$mute_pid" 2>/dev/null; mute_pid=

# the server stopped: unreachable (fresh cache), but the cached file still serves
kill "$srv_pid"; wait "$srv_pid" 2>/dev/null; srv_pid=
run down "$URL" "$PGOKIT" profgen --binary "$T/bin/demo" --perf "$T/perf.data" -o "$T/down.txt"
check_eq "unreachable server: exit 1" 1 "$rc"
check "unreachable server: no output" test ! -e "$T/down.txt"
check "unreachable server: the message names the server and the reason" grep -qE "debuginfod \($URL\).*(refused|connect)" \
    "$T/down.err"
check "unreachable server: answered within 10 s ($secs s)" awk -v s="$secs" 'BEGIN { exit !(s < 10) }'
# a command that needs no debug information is not stopped by the server
run decode "$URL" "$PGOKIT" decode --binary "$T/bin/demo" --stats
check_eq "unreachable server: decode (no DWARF needed) still works" 0 "$rc"
DEBUGINFOD_URLS=$URL DEBUGINFOD_CACHE_PATH=$T/cache.fetch "$PGOKIT" profgen --binary "$T/bin/demo" \
    --perf "$T/perf.data" -o "$T/cached.txt" --format text -q
check "server gone, file in the cache: same profile" cmp -s "$T/ref.txt" "$T/cached.txt"
finish
