#!/usr/bin/env bash
# pprof.sh — pprof in and out, against independent readers:
#  1. perf.data → pprof: a stock `perf record -e cpu-clock --call-graph fp`
#     of tests/programs/perf_loop.c (nested calls, a thread, a fork) converted
#     by `pgokit convert`; `go tool pprof -raw` must read the same samples,
#     periods and stacks (addresses) as `perf script -D` shows, with the
#     test binary's mapping and build-id; `-traces` the same totals.
#  2. pprof → perf.data: our reader's events written back as perf.data, which
#     perf itself reads: every call chain equals the original's.
#  3. a real third-party pprof: a Go program (standard library only, built
#     offline at test time) profiled by runtime/pprof for ~1 s; our reader
#     (through `convert` to perf.data, read by perf) gives the samples, values
#     and stacks `go tool pprof -raw` reports, the mapping and its build-id.
#  4. corrupt input (truncated and bit-flipped gzip and protobuf, bad gzip,
#     trailing garbage, a location id that points nowhere, a gzip bomb):
#     exit 1 with the file and offset named, no output, no crash, also under
#     ASan+UBSan.
source "$(dirname "$0")/../lib.sh"
need perf gcc go gzip awk
norm="$PK_ROOT/tests/e2e/perf_norm.awk"
stacks="$PK_ROOT/tests/e2e/pprof_stacks.awk"
export HOME="$T/home" GOCACHE="$T/gocache" GOPATH="$T/gopath" GOFLAGS=-mod=mod GOPROXY=off GO111MODULE=on
mkdir -p "$HOME"
gopprof() { timeout 60 go tool pprof "$@" 2>"$T/gopprof.err"; }
perf_s() { perf script -D -i "$1" 2>/dev/null | awk -v mode=perf -f "$norm" | grep '^S '; }

perf record -q -e cpu-clock -o "$T/probe.data" true >/dev/null 2>&1 || { echo "skipped: perf record cannot sample here (perf_event_paranoid?)"; exit 77; }
gcc -O2 -g -fno-omit-frame-pointer -pthread "$PK_ROOT/tests/programs/perf_loop.c" -o "$T/loop" || { fail "build perf_loop"; finish; exit 1; }

# ---- 1. perf.data → pprof, read by go tool pprof ----
perf record -q -e cpu-clock -c 100000 --call-graph fp -o "$T/f.data" -- "$T/loop" 6000 >/dev/null 2>&1
perf_s "$T/f.data" >"$T/f.S"
ns=$(wc -l <"$T/f.S")
check "perf recorded samples with call chains ($ns)" test "$ns" -gt 100
"$PGOKIT" convert "$T/f.data" -o "$T/f.pb.gz" 2>"$T/conv.err"
check "convert perf.data -> pprof exits 0" test $? -eq 0
check "output is gzip" bash -c "gzip -t '$T/f.pb.gz'"
gopprof -raw -symbolize=none "$T/f.pb.gz" >"$T/f.raw"
check "go tool pprof -raw reads it" test $? -eq 0 -a -s "$T/f.raw"
check_eq "sample types" "samples/count cpu/nanoseconds" "$(sed -n '/^Samples:/{n;p;q}' "$T/f.raw" | xargs)"
check_eq "period type and period" "cpu nanoseconds 100000" "$(awk '/^PeriodType:/ {t = $2 " " $3} /^Period:/ {p = $2} END {print t, p}' "$T/f.raw")"
awk -v mode=perf -f "$stacks" "$T/f.S" | sort >"$T/f.want"
awk -v mode=raw -f "$stacks" "$T/f.raw" | sort >"$T/f.got"
check_eq "total samples (perf script vs go tool pprof)" "$ns" "$(awk '{n += $1} END {print n}' "$T/f.got")"
check_eq "total period" "$(awk '{n += $5} END {print n}' "$T/f.S")" "$(awk '{n += $2} END {print n}' "$T/f.got")"
if cmp -s "$T/f.want" "$T/f.got"; then pass "every stack (addresses, counts, periods) as perf script shows ($(wc -l <"$T/f.got") stacks)"
else fail "stacks differ: $(diff "$T/f.want" "$T/f.got" | head -4)"; fi
check "identical stacks aggregated" test "$(wc -l <"$T/f.got")" -lt "$ns"
bid=$(readelf -n "$T/loop" | awk '/Build ID/ {print $3}')
check "mapping of the test binary with its build-id" grep -q "/loop $bid" "$T/f.raw"
check "the test binary is mapping 1 (main)" bash -c "sed -n '/^Mappings/{n;p;q}' '$T/f.raw' | grep -q '^1: .*/loop '"
gopprof -traces -symbolize=none "$T/f.pb.gz" >"$T/f.traces"
# each trace opens with a rule line, and one closes the list
check_eq "go tool pprof -traces: one trace per stack" "$(wc -l <"$T/f.got")" "$(($(grep -c '^-----------+' "$T/f.traces") - 1))"
# "Total samples = 102.60ms" (pprof picks the unit, rounds to 2 decimals)
tot=$(awk '{n += $5} END {print n}' "$T/f.S")
tr=$(awk '/Total samples = / { v = $0; sub(/.*Total samples = /, "", v); sub(/ .*/, "", v)
        u = v; sub(/^[0-9.]+/, "", u); x = v + 0
        m = u == "ns" ? 1 : u == "us" ? 1e3 : u == "ms" ? 1e6 : u == "s" ? 1e9 : u == "mins" ? 6e10 : 0
        printf "%.0f", x * m }' "$T/f.traces")
check "go tool pprof -traces total ($tr ns) is perf's ($tot ns) to its rounding" \
    awk -v a="$tr" -v b="$tot" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= b * 0.005) }'

# ---- 2. pprof → perf.data: our reader's events, read by perf ----
"$PGOKIT" convert "$T/f.pb.gz" -o "$T/back.data" 2>"$T/back.err"
check "convert pprof -> perf.data exits 0" test $? -eq 0
check "reader recognised pgokit's file" grep -q "pprof (pgokit, gzip)" "$T/back.err"
perf_s "$T/back.data" >"$T/back.S"
# original: one line per sample; back: one per stack with period = count
awk -v mode=chain -f "$stacks" "$T/f.S" | awk '{k = $3; for (i = 4; i <= NF; i++) k = k " " $i; print $1, k}' | sort >"$T/chain.want"
awk -v mode=chain -f "$stacks" "$T/back.S" | awk '{k = $3; for (i = 4; i <= NF; i++) k = k " " $i; print $2, k}' | sort >"$T/chain.got"
if cmp -s "$T/chain.want" "$T/chain.got"; then pass "perf reads back every call chain (return addresses restored, markers as perf writes)"
else fail "call chains differ: $(diff "$T/chain.want" "$T/chain.got" | head -4)"; fi
perf script -i "$T/back.data" -F ip,sym 2>/dev/null | grep -q ' leaf$'
check "perf symbolizes the converted file (leaf in the test binary)" test $? -eq 0
"$PGOKIT_SAN" convert -q "$T/f.pb.gz" -o "$T/back_san.data" 2>"$T/san.err" && "$PGOKIT_SAN" convert -q "$T/f.data" -o "$T/f_san.pb.gz" 2>>"$T/san.err"
check "both directions under ASan+UBSan" test $? -eq 0 -a ! -s "$T/san.err"
check "ASan build writes the same pprof" cmp -s <(gzip -dc "$T/f.pb.gz") <(gzip -dc "$T/f_san.pb.gz")

# ---- 3. a Go runtime/pprof CPU profile ----
mkdir -p "$T/go"
cat >"$T/go/main.go" <<'EOF'
package main

import (
	"fmt"
	"os"
	"runtime/pprof"
	"time"
)

//go:noinline
func leaf(x uint64) uint64 {
	s := uint64(0)
	for i := uint64(0); i < 4000; i++ {
		s += (x ^ i) * 2654435761 >> 7
	}
	return s
}

//go:noinline
func mid(x uint64) uint64 {
	s := uint64(0)
	for i := uint64(0); i < 8; i++ {
		s += leaf(x + i)
	}
	return s
}

func main() {
	f, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		panic(err)
	}
	var s uint64
	for end := time.Now().Add(time.Second); time.Now().Before(end); {
		s += mid(s)
	}
	pprof.StopCPUProfile()
	f.Close()
	fmt.Println(s & 1)
}
EOF
printf 'module pktest\n\ngo 1.19\n' >"$T/go/go.mod"
gobid=0123456789abcdef0123456789abcdef01234567
(cd "$T/go" && timeout 120 go build -ldflags="-B=0x$gobid" -o gop . ) >"$T/gobuild.log" 2>&1
check "go build (offline)" test -x "$T/go/gop"
timeout 30 "$T/go/gop" "$T/go.pprof" >/dev/null
check "Go program wrote a CPU profile" test -s "$T/go.pprof"
gopprof -raw -symbolize=none "$T/go.pprof" >"$T/go.raw"
awk -v mode=raw -v plus=1 -f "$stacks" "$T/go.raw" | awk '{k = $3; for (i = 4; i <= NF; i++) k = k " " $i; print $1, k}' | sort >"$T/go.want"
gn=$(awk '{n += $1} END {print n + 0}' "$T/go.want")
check "go tool pprof reports samples ($gn)" test "$gn" -gt 5
"$PGOKIT" convert "$T/go.pprof" -o "$T/go.data" 2>"$T/go.err"
check "convert Go pprof -> perf.data exits 0" test $? -eq 0
check "reader recognised Go's profile and its sample type" grep -q "pprof (go, gzip), .* used (samples/count, total $gn)" "$T/go.err"
perf_s "$T/go.data" >"$T/go.S"
awk -v mode=chain -v nomark=1 -f "$stacks" "$T/go.S" | awk '{k = $3; for (i = 4; i <= NF; i++) k = k " " $i; print $2, k}' | sort >"$T/go.got"
if cmp -s "$T/go.want" "$T/go.got"; then pass "every Go sample: value and stack as go tool pprof -raw (non-leaf + 1)"
else fail "Go samples differ: $(diff "$T/go.want" "$T/go.got" | head -4)"; fi
"$PGOKIT" dump "$T/go.data" >"$T/go.dump" 2>&1
check "Go binary's mapping and GNU build-id found" grep -q "PERF_RECORD_MMAP2 .*<$gobid>\]: r-xp $T/go/gop\$" "$T/go.dump"
gcpu=$(awk -v mode=raw -v col=2 -f "$stacks" "$T/go.raw" | awk '{n += $2} END {print n}')
"$PGOKIT" convert -q --sample-type cpu/nanoseconds "$T/go.pprof" -o "$T/go_cpu.data"
check_eq "--sample-type cpu/nanoseconds: periods sum to go tool pprof's cpu total" "$gcpu" \
    "$(perf_s "$T/go_cpu.data" | awk '{n += $5} END {print n}')"
perf script -i "$T/go.data" -F ip,sym 2>/dev/null | grep -q 'main\.leaf$'
check "perf symbolizes the Go samples (main.leaf)" test $? -eq 0

# ---- 4. corrupt input ----
bad() { # description needle file [args...]: exit 1, the file and the needle named, no output
    local d=$1 needle=$2 f=$3; shift 3
    local bin
    for bin in "$PGOKIT" "$PGOKIT_SAN"; do
        local which=plain; [ "$bin" = "$PGOKIT_SAN" ] && which=san
        rm -f "$T/bad.out"
        "$bin" convert "$f" -o "$T/bad.out" "$@" >/dev/null 2>"$T/bad.err"
        local rc=$?
        if [ $rc -eq 1 ] && grep -qF -- "$(basename "$f")" "$T/bad.err" && grep -qF -- "$needle" "$T/bad.err" &&
           [ ! -e "$T/bad.out" ] && ! grep -qE 'AddressSanitizer|runtime error' "$T/bad.err"; then
            pass "$d ($which)"
        else
            fail "$d ($which): rc $rc: $(head -c 300 "$T/bad.err")"
        fi
    done
}
n=$(stat -c %s "$T/go.pprof")
head -c $((n / 2)) "$T/go.pprof" >"$T/half.pb.gz"
bad "gzip cut in half" "gzip stream truncated" "$T/half.pb.gz"
head -c 12 "$T/go.pprof" >"$T/head.pb.gz"
bad "gzip cut in its header" "truncated" "$T/head.pb.gz"
cp "$T/go.pprof" "$T/flip.pb.gz"; printf '\xff\xff\xff\xff' | dd of="$T/flip.pb.gz" bs=1 seek=$((n / 2)) conv=notrunc 2>/dev/null
bad "gzip with flipped bytes" "gzip" "$T/flip.pb.gz"
{ cat "$T/go.pprof"; printf 'trailing'; } >"$T/trail.pb.gz"
bad "garbage after the gzip stream" "garbage after the gzip stream" "$T/trail.pb.gz"
gzip -dc "$T/go.pprof" >"$T/go.pb"
# a sample pointing at location 5 of a profile that has none
printf '\x0a\x04\x08\x01\x10\x02\x12\x05\x0a\x01\x05\x10\x01\x32\x00\x32\x07samples\x32\x05count' >"$T/noloc.pb"
bad "location id that points nowhere" "offset 6: Sample: location id 5 (frame 0) does not exist" "$T/noloc.pb"
printf '\x0a\x04\x08\x01\x10\x02\x22\xff\xff\xff\xff\x0f' >"$T/huge.pb"
bad "declared length past the end" "offset 7: Profile: field 4 (location): length 4294967295 runs past the end" "$T/huge.pb"
head -c 64M /dev/zero | gzip -1 >"$T/bomb.pb.gz"
bad "gzip bomb against --max-size 16" "more than 16777216 bytes" "$T/bomb.pb.gz" --max-size 16
bad "perf.data input cut short" "offset" "$T/half.pb.gz" --from perf
# truncations and flips of the raw protobuf: exit 0 or 1, never a crash
pn=$(stat -c %s "$T/go.pb")
crash=0; errs=0; tries=0
for k in $(seq 1 29); do
    off=$((pn * k / 30))
    head -c "$off" "$T/go.pb" >"$T/cut.pb"
    cp "$T/go.pb" "$T/mut.pb"; printf "\\x$(printf %02x $(( (k * 37) & 255 )))" | dd of="$T/mut.pb" bs=1 seek="$off" conv=notrunc 2>/dev/null
    for f in cut mut; do
        "$PGOKIT_SAN" convert --from pprof -q "$T/$f.pb" -o "$T/fz.data" >/dev/null 2>"$T/fz.err"
        rc=$?; tries=$((tries + 1))
        if [ $rc -gt 1 ] || grep -qE 'AddressSanitizer|runtime error' "$T/fz.err"; then crash=$((crash + 1)); cp "$T/$f.pb" "$T/crash_${k}_$f.pb"; fi
        [ $rc -eq 1 ] && { errs=$((errs + 1)); grep -q "$f.pb: " "$T/fz.err" || crash=$((crash + 1)); }
    done
done
check_eq "raw protobuf cut or changed at $tries places (ASan): no crash, errors name the file" 0 "$crash"
check "most cuts and changes are reported ($errs of $tries)" test "$errs" -gt $((tries / 2))
finish
