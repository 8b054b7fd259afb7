#!/usr/bin/env bash
# Raw profile version 2 at fleet scale, from real slices of one recording.
# A fleet host sees a short, sparse slice of a workload; bench/perf_split.c
# cuts one emulated recording (pgokit record --emulate) into host-sized
# pieces of consecutive samples (time order; every sample in exactly one
# piece; each piece carries the mappings seen before it), and every piece is
# reduced on its "host" with `pgokit profgen --raw-only`.
#
# Part 1, sparse IP samples (AutoFDO): `record --emulate --ip` of SQLite
# speedtest1 (-O2 -g), cut into PIECES1 pieces of 200..2,000 samples. Three
# ways to one profile, each scored by block overlap against the emulator's
# exact counts of the same run (`pgokit overlap --exact`):
#   (a) version 1: each host's raw profile --raw-version 1 (flow inference
#       per host), `pgokit merge`, profgen --raw;
#   (b) version 2: each host's version-2 raw profile (IP observations, no
#       inference), `pgokit merge`, profgen --raw (inference once); also
#       through the store (SQLite: store add of every host, pull, profgen),
#       which must equal it byte for byte;
#   (c) profgen --perf of the whole recording.
#   Expected: (b) == (c) byte for byte, and (b) beats (a).
# Part 3 (with part 1): the program rebuilt with -fprofile-sample-use of
# (a), (b), (c) and without a profile (-O2); instructions executed
# (cachegrind Ir) of a run with another input (speedtest1 --size 20).
# Part 2, CSSPGO from the store: `record --emulate` (LBR + frame-pointer
# stacks) of the pseudo-probe speedtest1 build, cut into PIECES2 pieces of
# 100..500 samples; host i uploads piece i mod PIECES2 (hosts beyond PIECES2
# repeat slices: the counts rows grow as with distinct hosts, the contexts
# table does not). For HOSTS (100,1000,5000) on each engine (SQLite,
# PostgreSQL 15 started here with tests/pg_lib.sh on a loopback port):
# ingest with W writers (one `pgokit store add` process per host), rows/s,
# database growth per host-profile, pull, pull == `pgokit merge` (cmp),
# profgen of the pull (CSSPGO). The same pieces as version-1 raw profiles
# (--raw-version 1) are stored too at the host counts up to V1MAX, for the
# size per host-profile of version 1 beside version 2's.
# Writes bench/results/store-sparse-fleet-<date>.md (--out: another name),
# after part 2 and again after part 3.
#
#   bench/store_sparse_fleet.sh [--parts 1,2,3] [--hosts 100,1000,5000] [--engines sqlite,postgresql]
#                               [--writers 8] [--pieces1 1000] [--pieces2 1000] [--v1-max 1000] [--out NAME]
#   Inputs: speedtest1 of scripts/workloads.sh (variants binary-d5: -O2 -g,
#   test-probe: -fpseudo-probe-for-profiling) when already built; otherwise
#   tests/programs/profgen_demo.c and profgen_recurse.c built here.
set -euo pipefail
PK_ROOT=$(cd "$(dirname "$0")/.." && pwd)
PGOKIT=${PGOKIT:-$PK_ROOT/build/pgokit}
parts=1,2,3 hosts=100,1000,5000 engines=sqlite,postgresql writers=8 pieces1=1000 pieces2=1000 v1max=1000
out_name=store-sparse-fleet
while [ $# -gt 0 ]; do
    case $1 in
    --parts) parts=$2; shift 2 ;;
    --hosts) hosts=$2; shift 2 ;;
    --engines) engines=$2; shift 2 ;;
    --writers) writers=$2; shift 2 ;;
    --pieces1) pieces1=$2; shift 2 ;;
    --pieces2) pieces2=$2; shift 2 ;;
    --v1-max) v1max=$2; shift 2 ;;
    --out) out_name=$2; shift 2 ;;
    -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1' "$0"; exit 0 ;;
    *) echo "store_sparse_fleet: unknown argument $1" >&2; exit 2 ;;
    esac
done
[ -x "$PGOKIT" ] || { echo "store_sparse_fleet: $PGOKIT not built (run make)" >&2; exit 2; }
T=$(mktemp -d "${TMPDIR:-/tmp}/store-sparse.XXXXXX")
chmod 755 "$T"
source "$PK_ROOT/tests/pg_lib.sh"
trap 'pg_stop_all immediate; rm -rf "$T"' EXIT
die() { echo "store_sparse_fleet: $*" >&2; exit 1; }
now() { date +%s.%N; }
dt() { echo "scale=2; ($2 - $1) / 1" | bc; }
pq() { psql -XAtq -v ON_ERROR_STOP=1 "$@"; }
load_samples=() part1=() part2=() part3=()
sample_load() { load_samples+=("$(cut -d' ' -f1 /proc/loadavg)"); }
sample_load

cc -O2 -D_GNU_SOURCE -I"$PK_ROOT/src" -o "$T/split" "$PK_ROOT/bench/perf_split.c" "$PK_ROOT/build/libpgokit.a" \
    $(pkg-config --libs sqlite3 libpq) -lZydis -lzstd -lz -lpthread -lm

WL_DIR=$("$PK_ROOT/scripts/workloads.sh" dir 2>/dev/null || true)
CF="-O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer"
# reduce LIST VERSION DIR: profgen --raw-only of every perf.data in LIST into
# DIR/<name>.raw (2 at a time: the machine's cores), prints the wall seconds
reduce() {
    local t0; t0=$(now)
    mkdir -p "$3"
    xargs -P 2 -n 1 sh -c 'b=${4##*/}; exec "$0" profgen -q --binary "$1" --perf "$4" --raw-only --raw-version "$2" -o "$3/${b%.data}.raw"' \
        "$PGOKIT" "$BIN" "$2" "$3" <"$1" || die "profgen --raw-only failed on a piece"
    dt "$t0" "$(now)"
}

# ---------------- the results file (written after part 2, again after part 3) ----------------
write_results() {
    date_tag=$(date -u +%Y-%m-%d)
    out=${PK_BENCH_RESULTS:-$PK_ROOT/bench/results}/$out_name-$date_tag.md
    loads=$(IFS=' '; echo "${load_samples[*]}")
    {
        echo "# Raw profile version 2 at fleet scale: sparse hosts, CSSPGO from the store ($date_tag)"
        echo
        echo "Machine: $(nproc) cores ($(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)), $(free -g | awk '/Mem:/ {print $2}') GB RAM,"
        echo "shared with other engineers' builds and tests during the run: 1-minute load average sampled through the run: $loads."
        echo "Script: \`bench/store_sparse_fleet.sh --parts $parts --hosts $hosts --engines $engines --writers $writers\`; pieces cut by bench/perf_split.c."
        if [ ${#part1[@]} -gt 0 ]; then
            echo
            echo "## 1. Sparse fleet, IP samples (AutoFDO)"
            echo
            echo "Source: $src1, \`pgokit record --emulate --ip --period $period1\` with \`--exact-counts\` (${rec1_s} s):"
            echo "$total1 samples cut into $pieces1 host pieces of $min1..$max1 samples (drawn from 200..2,000, scaled to hold every sample once)."
            echo "Block overlap: \`pgokit overlap --exact\` against the emulator's exact counts of the same run (1 = the exact block weights)."
            echo
            echo "| way to the profile | block overlap | == (c) byte for byte | per-host profgen --raw-only, all hosts (s, 2 at a time) | raw files MB | merge + profgen s |"
            echo "|---|---|---|---|---|---|"
            printf '%s\n' "${part1[@]}"
            echo
            echo "The store's pull equals \`pgokit merge\` of the version-2 files: $bs_eq_b (the profile from it, compared byte for byte)."
        fi
        if [ ${#part3[@]} -gt 0 ]; then
            echo
            echo "### The program rebuilt with each profile"
            echo
            echo "clang-19 -O2 -g -gdwarf-4 (the workload's flags; DWARF 4 for valgrind) with \`-fprofile-sample-use\` of profiles (a), (b), (c) above, against plain -O2"
            echo "(four builds in ${build_s} s, two at a time); instructions executed (cachegrind Ir) of \`${eval_run[*]}\`, fewer is better."
            echo
            echo "| build | instructions (Ir) | vs -O2 |"
            echo "|---|---|---|"
            printf '%s\n' "${part3[@]}"
        fi
        if [ ${#part2[@]} -gt 0 ]; then
            echo
            echo "## 2. CSSPGO from the store"
            echo
            echo "Source: $src2, \`pgokit record --emulate --period $period2\` (LBR + frame-pointer stacks, ${rec2_s} s): $total2 samples cut into"
            echo "$pieces2 pieces of $min2..$max2 samples; host i uploads piece i mod $pieces2 (above $pieces2 hosts the slices repeat)."
            echo "Each piece reduced with \`profgen --raw-only\` (version 2: ${red2v2_s} s for all pieces, 2 at a time; version 1: ${red2v1_s} s)."
            echo "Engines: SQLite $(sqlite3 --version | cut -d' ' -f1) (WAL), PostgreSQL ${pgver:-n/a} (initdb defaults, fsync on; loopback TCP); $writers concurrent writers, one \`pgokit store add\` process per host."
            echo
            echo "| engine | raw version | hosts | count rows | contexts | ingest s | rows/s | raw files MB | pull s | profgen s | pull + profgen s | DB MB | bytes/host-profile | pull == merge | profile made |"
            echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
            printf '%s\n' "${part2[@]}"
            echo
            echo "Columns: *count rows* = ranges + branches + IP observations stored (profiles.nranges + nbranches + nip; version 2's are per"
            echo "calling context); *contexts* = rows of the contexts table (distinct (build-id, key) in parentheses: writers racing on a new context may both insert it, by design, and a pull reads them as one); *ingest s* = wall time of"
            echo "the writers for all hosts; *pull s* = \`pgokit store pull\` (merge in the engine); *profgen s* = \`pgokit profgen --raw\`"
            echo "of the pull (CSSPGO for the version-2 pull; the version-1 pull has no contexts, so a probe-only profile);"
            echo "*DB MB* = database growth (SQLite after a WAL checkpoint, PostgreSQL after CHECKPOINT); *pull == merge* = the pull"
            echo "is byte for byte \`pgokit merge\` of the same files; *profile made* = \`pgokit show\`'s format line of the generated profile."
        fi
    } >"$out"
}

# ---------------- part 1: sparse IP samples ----------------
part1=()
if [[ ",$parts," == *,1,* ]]; then
    if [ -n "$WL_DIR" ] && [ -x "$WL_DIR/out/binary-d5/speedtest1" ]; then
        BIN=$WL_DIR/out/binary-d5/speedtest1 run=(--size 50 --memdb) period1=6833 BIN1=$WL_DIR/out/binary-d5/speedtest1
        src1="SQLite speedtest1 (scripts/workloads.sh variant binary-d5: clang-19 -O2 -g), \`speedtest1 --size 50 --memdb\`"
    else
        clang-19 $CF -gdwarf-4 -fdebug-info-for-profiling -o "$T/demo" "$PK_ROOT/tests/programs/profgen_demo.c"
        BIN=$T/demo run=(2000) period1=997 BIN1=$T/demo
        src1="tests/programs/profgen_demo.c (speedtest1 was not built here), \`demo 2000\`"
    fi
    P1=$T/p1; mkdir -p "$P1"
    t0=$(now)
    "$PGOKIT" record --emulate --ip -q --period "$period1" --exact-counts "$P1/exact" -o "$P1/all.data" -- "$BIN" "${run[@]}" >/dev/null
    rec1_s=$(dt "$t0" "$(now)")
    mkdir -p "$P1/hosts"
    split_out=$("$T/split" "$P1/all.data" "$P1/hosts" "$pieces1" 200 2000 1) || die "perf_split failed on $P1/all.data"
    read -r total1 min1 max1 <<<"$split_out"
    ls "$P1/hosts"/*.data >"$P1/pieces.list"
    [ "$(wc -l <"$P1/pieces.list")" = "$pieces1" ] || die "perf_split wrote $(wc -l <"$P1/pieces.list") pieces, not $pieces1"
    sample_load
    red1_s=$(reduce "$P1/pieces.list" 1 "$P1/v1")
    red2_s=$(reduce "$P1/pieces.list" 2 "$P1/v2")
    sample_load
    ls "$P1/v1"/*.raw >"$P1/v1.list"; ls "$P1/v2"/*.raw >"$P1/v2.list"
    v1_bytes=$(xargs stat -c %s <"$P1/v1.list" | awk '{s += $1} END {print s}')
    v2_bytes=$(xargs stat -c %s <"$P1/v2.list" | awk '{s += $1} END {print s}')
    # (a) version 1: inferred per host, merged, generated
    t0=$(now)
    "$PGOKIT" merge -q -f "$P1/v1.list" -o "$P1/a.raw"
    "$PGOKIT" profgen -q --binary "$BIN" --raw "$P1/a.raw" -o "$P1/a.prof"
    a_s=$(dt "$t0" "$(now)")
    # (b) version 2: merged, inferred once
    t0=$(now)
    "$PGOKIT" merge -q -f "$P1/v2.list" -o "$P1/b.raw"
    "$PGOKIT" profgen -q --binary "$BIN" --raw "$P1/b.raw" -o "$P1/b.prof"
    b_s=$(dt "$t0" "$(now)")
    # (b) through the store (SQLite)
    "$PGOKIT" store init -q "$P1/store.db"
    t0=$(now)
    xargs -P "$writers" -n 1 sh -c 'h=${2##*/}; exec "$0" store add -q "$1" --host "${h%.raw}" --job sparse "$2"' \
        "$PGOKIT" "$P1/store.db" <"$P1/v2.list"
    bs_add_s=$(dt "$t0" "$(now)")
    bid1=$(readelf -n "$BIN" | awk '/Build ID/ {print $3}')
    t0=$(now)
    "$PGOKIT" store pull -q "$P1/store.db" --build-id "$bid1" -o "$P1/bs.raw"
    "$PGOKIT" profgen -q --binary "$BIN" --raw "$P1/bs.raw" -o "$P1/bs.prof"
    bs_s=$(dt "$t0" "$(now)")
    # (c) every sample at once
    t0=$(now)
    "$PGOKIT" profgen -q --binary "$BIN" --perf "$P1/all.data" -o "$P1/c.prof"
    c_s=$(dt "$t0" "$(now)")
    sample_load
    same() { cmp -s "$1" "$2" && echo yes || echo no; }
    b_eq_c=$(same "$P1/b.prof" "$P1/c.prof") bs_eq_b=$(same "$P1/bs.prof" "$P1/b.prof")
    a_eq_c=$(same "$P1/a.prof" "$P1/c.prof")
    (cd "$P1" && "$PGOKIT" overlap --exact exact --binary "$BIN" a.prof b.prof bs.prof c.prof 2>/dev/null) >"$P1/overlap.txt"
    ov() { sed -n "s/^$1.prof: block overlap \([0-9.]*\).*/\1/p" "$P1/overlap.txt"; }
    ov_a=$(ov a) ov_b=$(ov b) ov_bs=$(ov bs) ov_c=$(ov c)
    [ -n "$ov_a" ] && [ -n "$ov_b" ] && [ -n "$ov_c" ] || die "overlap failed: $(cat "$P1/overlap.txt")"
    part1+=("| (a) version 1: inferred per host, \`merge\`, profgen | $ov_a | $a_eq_c | $red1_s | $(printf %.1f "$(echo "$v1_bytes / 1048576" | bc -l)") | $a_s |")
    part1+=("| (b) version 2: \`merge\`, profgen (inference once) | $ov_b | $b_eq_c | $red2_s | $(printf %.1f "$(echo "$v2_bytes / 1048576" | bc -l)") | $b_s |")
    part1+=("| (b) version 2 through the store (SQLite add ×$pieces1, pull, profgen) | $ov_bs | $(same "$P1/bs.prof" "$P1/c.prof") | $red2_s + add $bs_add_s | - | $bs_s |")
    part1+=("| (c) all samples at once (profgen --perf) | $ov_c | yes | - | - | $c_s |")
    printf '%s\n' "${part1[@]}"
    [ "$b_eq_c" = yes ] || echo "store_sparse_fleet: (b) differs from (c)" >&2
    [ "$bs_eq_b" = yes ] || echo "store_sparse_fleet: the store's pull differs from the file merge" >&2
    rm -rf "$P1/hosts" "$P1/all.data"
fi

# ---------------- part 2: CSSPGO from the store ----------------
part2=()
if [[ ",$parts," == *,2,* ]]; then
    if [ -n "$WL_DIR" ] && [ -x "$WL_DIR/out/test-probe/speedtest1" ]; then
        BIN=$WL_DIR/out/test-probe/speedtest1 run=(--size 50 --memdb) period2=2749
        src2="SQLite speedtest1 (scripts/workloads.sh variant test-probe: clang-19 -O2 -g -fpseudo-probe-for-profiling), \`speedtest1 --size 50 --memdb\`"
    else
        clang-19 $CF -fpseudo-probe-for-profiling -o "$T/probe" "$PK_ROOT/tests/programs/profgen_recurse.c"
        BIN=$T/probe run=(3000) period2=997
        src2="tests/programs/profgen_recurse.c -fpseudo-probe-for-profiling (speedtest1 was not built here), \`probe 3000\`"
    fi
    bid2=$(readelf -n "$BIN" | awk '/Build ID/ {print $3}')
    P2=$T/p2; mkdir -p "$P2"
    IFS=, read -r -a HN <<<"$hosts"
    IFS=, read -r -a EN <<<"$engines"
    t0=$(now)
    "$PGOKIT" record --emulate -q --period "$period2" -o "$P2/all.data" -- "$BIN" "${run[@]}" >/dev/null
    rec2_s=$(dt "$t0" "$(now)")
    mkdir -p "$P2/hosts"
    split_out=$("$T/split" "$P2/all.data" "$P2/hosts" "$pieces2" 100 500 2) || die "perf_split failed on $P2/all.data"
    read -r total2 min2 max2 <<<"$split_out"
    ls "$P2/hosts"/*.data >"$P2/pieces.list"
    sample_load
    red2v2_s=$(reduce "$P2/pieces.list" 2 "$P2/v2")
    red2v1_s=$(reduce "$P2/pieces.list" 1 "$P2/v1")
    sample_load
    rm -rf "$P2/hosts" "$P2/all.data"
    # host i (0-based) uploads piece i mod pieces2
    hostlist() { # VERSION N: "host-file" pairs
        local v=$1 n=$2 i
        for ((i = 0; i < n; i++)); do
            printf 'h%05d %s/v%s/host-%05d.raw\n' "$i" "$P2" "$v" $((i % pieces2))
        done
    }
    if [[ " ${EN[*]} " == *" postgresql "* ]]; then
        pg_start "$T/pg" && pg_save main || exit 1
        pgver=$(pq "$PGURL" -c "SHOW server_version")
    fi
    fresh_db() { PGOPTIONS=--client-min-messages=warning pq "$PGURL" -c "DROP DATABASE IF EXISTS $1" -c "CREATE DATABASE $1"; echo "${PGURL%/postgres}/$1"; }
    dbsize() { # engine db
        if [ "$1" = sqlite ]; then
            sqlite3 "$2" "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null; stat -c %s "$2"
        else
            pq "$2" -c "CHECKPOINT" >/dev/null; pq "$2" -c "SELECT pg_database_size(current_database())"
        fi
    }
    q() { if [ "$1" = sqlite ]; then sqlite3 "$2" "$3"; else pq "$2" -c "$3"; fi; }
    for engine in "${EN[@]}"; do
        for v in 2 1; do
            for n in "${HN[@]}"; do
                [ "$v" = 1 ] && [ "$n" -gt "$v1max" ] && continue
                if [ "$engine" = sqlite ]; then DB=$P2/fleet.db; rm -f "$DB"*; else DB=$(fresh_db fleet); fi
                "$PGOKIT" store init -q "$DB"
                size0=$(dbsize "$engine" "$DB")
                hostlist "$v" "$n" >"$P2/in.pairs"
                awk '{print $2}' "$P2/in.pairs" >"$P2/in.list"
                bytes=$(awk '{print $2}' "$P2/in.pairs" | xargs stat -c %s | awk '{s += $1} END {print s}')
                sample_load
                t0=$(now)
                xargs -P "$writers" -n 2 sh -c 'exec "$0" store add -q "$1" --host "$2" --job cs "$3"' \
                    "$PGOKIT" "$DB" <"$P2/in.pairs"
                ingest=$(dt "$t0" "$(now)")
                r=$(q "$engine" "$DB" "SELECT sum(nranges + nbranches + nip) || '|' || count(*) FROM profiles")
                nctx=$(q "$engine" "$DB" "SELECT count(*) || ' (' || (SELECT count(*) FROM (SELECT DISTINCT bid, ckey FROM contexts) d) || ')' FROM contexts")
                nrows=${r%|*} nprof=${r#*|}
                [ "$nprof" = "$n" ] || die "$engine v$v: $nprof of $n profiles stored"
                size1=$(dbsize "$engine" "$DB")
                t0=$(now)
                "$PGOKIT" store pull -q "$DB" --build-id "$bid2" -o "$P2/pulled.raw"
                pull_s=$(dt "$t0" "$(now)")
                t0=$(now)
                "$PGOKIT" profgen -q --binary "$BIN" --raw "$P2/pulled.raw" -o "$P2/pulled.prof"
                profgen_s=$(dt "$t0" "$(now)")
                "$PGOKIT" merge -q -f "$P2/in.list" -o "$P2/merged.raw"
                eq=no; cmp -s "$P2/pulled.raw" "$P2/merged.raw" && eq=yes
                [ $eq = yes ] || echo "store_sparse_fleet: $engine v$v $n hosts: pull differs from the file merge" >&2
                kind=$("$PGOKIT" show "$P2/pulled.prof" | sed -n 's/^Format: //p' | tr -d '|')
                per=$(( (size1 - size0) / n ))
                row=$(printf '| %s | %s | %d | %d | %s | %s | %.0f | %.1f | %s | %s | %s | %.1f | %d | %s | %s |' \
                    "$engine" "$v" "$n" "$nrows" "$nctx" "$ingest" "$(echo "$nrows / $ingest" | bc -l)" \
                    "$(echo "$bytes / 1048576" | bc -l)" "$pull_s" "$profgen_s" "$(echo "$pull_s + $profgen_s" | bc)" \
                    "$(echo "($size1 - $size0) / 1048576" | bc -l)" "$per" "$eq" "$kind")
                echo "$row"
                part2+=("$row")
                if [ "$engine" = sqlite ]; then rm -f "$DB"*; fi
            done
        done
    done
fi

write_results

# ---------------- part 3: the program rebuilt with each part-1 profile ----------------

if [[ ",$parts," == *,3,* ]] && [ ${#part1[@]} -gt 0 ]; then
    P3=$T/p3; mkdir -p "$P3"
    SQ=$WL_DIR/npm/better-sqlite3-12.11.1/package/deps/sqlite3
    if [ "$BIN1" = "$WL_DIR/out/binary-d5/speedtest1" ] && [ -f "$SQ/sqlite3.c" ]; then
        # the flags of the workload's build (shared/workloads/build.sh), plus the
        # profile; DWARF 4: valgrind 3.19 gives up on clang-19's DWARF 5 (the
        # debug info's version does not change the code)
        build1() { clang-19 -O2 -g -gdwarf-4 "$@" -DSQLITE_OMIT_LOAD_EXTENSION -DSQLITE_THREADSAFE=0 -I"$SQ" \
            "$WL_DIR/src/sqlite3-3.40.1/test/speedtest1.c" "$SQ/sqlite3.c" -lm; }
        eval_run=(--size 20 --memdb)
    else
        build1() { clang-19 $CF -gdwarf-4 -fdebug-info-for-profiling "$@" "$PK_ROOT/tests/programs/profgen_demo.c"; }
        eval_run=(1000)
    fi
    build_one() { # VARIANT: O2, or a part-1 profile's name
        local opt=(); [ "$1" = O2 ] || opt=(-fprofile-sample-use="$P1/$1.prof")
        build1 "${opt[@]}" -o "$P3/$1.bin" 2>"$P3/$1.err"
    }
    t0=$(now)
    for pair in "O2 a" "b c"; do # two at a time (the machine's cores)
        set -- $pair
        build_one "$1" & p1=$!
        build_one "$2" & p2=$!
        wait $p1 && wait $p2 || { echo "store_sparse_fleet: rebuild failed: $(cat "$P3"/*.err)" >&2; exit 1; }
    done
    build_s=$(dt "$t0" "$(now)")
    sample_load
    printf '%s\n' O2 a b c | xargs -P 2 -I{} sh -c 'valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file="$0/{}.cg" "$0/{}.bin" "$@" >/dev/null 2>"$0/{}.vg"' \
        "$P3" "${eval_run[@]}" || { echo "store_sparse_fleet: cachegrind failed: $(tail -n 3 "$P3"/*.vg)" >&2; exit 1; }
    ir() { sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$P3/$1.cg"; }
    ir0=$(ir O2)
    for v in O2 a b c; do
        n=$(ir $v)
        part3+=("| $v | $n | $(printf %+.2f "$(echo "($n - $ir0) * 100 / $ir0" | bc -l)") % |")
    done
    printf '%s\n' "${part3[@]}"
fi
sample_load
write_results
echo "store_sparse_fleet: wrote $out"
