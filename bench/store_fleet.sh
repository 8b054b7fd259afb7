#!/usr/bin/env bash
# The profile store at fleet scale: N simulated hosts, each a raw profile
# derived from one real recording (per-host deterministic variation: a
# 60..100 % subset of the ranges and branches, counts scaled 0.5..1.5x; see
# bench/store_fleet_gen.c), uploaded by W concurrent writers (`pgokit store
# add`, one process per host as a fleet would run it) into PostgreSQL 15
# (started here: initdb + pg_ctl in a temporary directory, loopback port,
# default durability settings) and SQLite, then pulled (the merge runs in
# the engine) and symbolized once with profgen. Reports ingest rows/s and
# MB/s, client vs server CPU, pull and profgen time, database size per
# host-profile; checks every pull against `pgokit merge` of the same files
# (cmp). Engine `sharded`: PostgreSQL sharded with postgres_fdw, a
# coordinator (the `postgresql` engine's server) and two shard servers
# started here, set up by scripts/store_shard_setup.sql; its server CPU and
# size are the three servers'. Writes bench/results/store-fleet-<date>.md
# (--out: another name under bench/results).
#
#   bench/store_fleet.sh [--hosts 100,1000,5000] [--writers 8] [--engines postgresql,sqlite,sharded]
#                        [--binary BIN (--perf DATA | --raw RAW)] [--out NAME]
#   Default input: the scoreboard's SQLite speedtest1 recording
#   (bench/work/sqlite/rec/base-1.data of bench/scoreboard.sh, binary
#   out/sb-base/speedtest1 of scripts/workloads.sh); without it, an emulated
#   recording of tests/programs/record_exact.c made here.
set -euo pipefail
PK_ROOT=$(cd "$(dirname "$0")/.." && pwd)
PGOKIT=${PGOKIT:-$PK_ROOT/build/pgokit}
hosts=100,1000,5000 writers=8 engines=postgresql,sqlite binary= perf= raw= out_name=store-fleet
while [ $# -gt 0 ]; do
    case $1 in
    --hosts) hosts=$2; shift 2 ;;
    --writers) writers=$2; shift 2 ;;
    --engines) engines=$2; shift 2 ;;
    --binary) binary=$2; shift 2 ;;
    --perf) perf=$2; shift 2 ;;
    --raw) raw=$2; shift 2 ;;
    --out) out_name=$2; shift 2 ;;
    -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1' "$0"; exit 0 ;;
    *) echo "store_fleet: unknown argument $1" >&2; exit 2 ;;
    esac
done
[ -x "$PGOKIT" ] || { echo "store_fleet: $PGOKIT not built (run make)" >&2; exit 2; }
T=$(mktemp -d "${TMPDIR:-/tmp}/store-fleet.XXXXXX")
chmod 755 "$T"
source "$PK_ROOT/tests/pg_lib.sh"
trap 'pg_stop_all immediate; rm -rf "$T"' EXIT

# ---- the real recording → one raw profile ----
if [ -z "$binary" ]; then
    WL_DIR=$("$PK_ROOT/scripts/workloads.sh" dir 2>/dev/null || true)
    rec=${PK_BENCH_WORK:-$PK_ROOT/bench/work}/sqlite/rec/base-1.data
    [ -f "$rec" ] || rec=/work/main/bench/work/sqlite/rec/base-1.data
    if [ -n "$WL_DIR" ] && [ -x "$WL_DIR/out/sb-base/speedtest1" ] && [ -f "$rec" ]; then
        binary=$WL_DIR/out/sb-base/speedtest1 perf=$rec
        source_desc="SQLite speedtest1 (scoreboard build sb-base), emulated LBR recording of \`speedtest1 --size 50 --memdb\`"
    else
        clang-19 -O2 -g -o "$T/prog" "$PK_ROOT/tests/programs/record_exact.c"
        "$PGOKIT" record --emulate -q --period 997 -o "$T/prog.data" -- "$T/prog" 2000000 >/dev/null
        binary=$T/prog perf=$T/prog.data
        source_desc="tests/programs/record_exact.c, emulated LBR recording (the scoreboard recording was not found)"
    fi
else
    source_desc="$binary, ${perf:-$raw}"
fi
if [ -z "$raw" ]; then
    "$PGOKIT" profgen -q --binary "$binary" --perf "$perf" --raw-only -o "$T/base.raw"
    raw=$T/base.raw
fi
bid=$(readelf -n "$binary" | awk '/Build ID/ {print $3}')

IFS=, read -r -a HN <<<"$hosts"
IFS=, read -r -a EN <<<"$engines"
max=0; for n in "${HN[@]}"; do [ "$n" -gt "$max" ] && max=$n; done
cc -O2 -D_GNU_SOURCE -I"$PK_ROOT/src" -o "$T/gen" "$PK_ROOT/bench/store_fleet_gen.c" "$PK_ROOT/build/libpgokit.a" \
    $(pkg-config --libs sqlite3 libpq) -lZydis -lzstd -lz -lpthread -lm
mkdir -p "$T/fleet"
t0=$(date +%s.%N)
"$T/gen" "$raw" "$T/fleet" "$max"
gen_s=$(printf %.1f "$(echo "$(date +%s.%N) - $t0" | bc)")
ls "$T/fleet"/*.raw >"$T/all.list"

now() { date +%s.%N; }
dt() { echo "scale=3; ($2 - $1) / 1" | bc; }
ticks=$(getconf CLK_TCK)
pg_server_cpu() { # seconds of CPU of the servers (saved names): live processes + reaped backends
    local n pm
    for n in "$@"; do
        pm=$(head -n 1 "${_PG_SAVED_DIR[$n]}/data/postmaster.pid")
        awk '{print $14 + $15 + $16 + $17}' "/proc/$pm/stat"
        for c in $(pgrep -P "$pm"); do awk '{print $14 + $15}' "/proc/$c/stat" 2>/dev/null || true; done
    done | awk -v t="$ticks" '{s += $1} END {printf "%.2f", s / t}'
}
pq() { psql -XAtq -v ON_ERROR_STOP=1 "$@"; }
fresh_db() { # URL NAME: drops and creates database NAME on URL's server, prints its URL
    PGOPTIONS=--client-min-messages=warning pq "$1" -c "DROP DATABASE IF EXISTS $2" -c "CREATE DATABASE $2"
    echo "${1%/postgres}/$2"
}
sizes() { # the bytes of the databases (URLs), after a checkpoint
    local u t=0
    for u in "$@"; do
        pq "$u" -c "CHECKPOINT" >/dev/null
        t=$((t + $(pq "$u" -c "SELECT pg_database_size(current_database())")))
    done
    echo $t
}

if [[ " ${EN[*]} " == *" postgresql "* || " ${EN[*]} " == *" sharded "* ]]; then
    pg_start "$T/pg" && pg_save main || exit 1
    pgver=$(pq "$PGURL" -c "SHOW server_version")
fi
if [[ " ${EN[*]} " == *" sharded "* ]]; then
    for s in shard0 shard1; do pg_start "$T/$s" && pg_save $s || exit 1; done
    pg_use main
fi

results=()
for engine in "${EN[@]}"; do
    for n in "${HN[@]}"; do
        head -n "$n" "$T/all.list" >"$T/in.list"
        bytes=$(xargs stat -c %s <"$T/in.list" | awk '{s += $1} END {print s}')
        servers=(main) dbs=()
        if [ "$engine" = postgresql ]; then
            DB=$(fresh_db "$PGURL" fleet)
            "$PGOKIT" store init -q "$DB"
            dbs=("$DB")
        elif [ "$engine" = sharded ]; then
            servers=(main shard0 shard1) addrs=
            for s in shard0 shard1; do
                pg_use $s
                dbs+=("$(fresh_db "$PGURL" fleet)")
                "$PGOKIT" store init -q "${dbs[-1]}"
                addrs+=${addrs:+,}127.0.0.1:$PG_PORT/fleet
            done
            pg_use main
            DB=$(fresh_db "$PGURL" fleet_sharded)
            "$PGOKIT" store init -q "$DB"
            pq -v shards="$addrs" -v shard_user=pgokit -f "$PK_ROOT/scripts/store_shard_setup.sql" "$DB" >/dev/null
            dbs+=("$DB")
        else
            DB=$T/fleet-$n.db; rm -f "$DB"*
            "$PGOKIT" store init -q "$DB"
        fi
        size0=$(if [ "$engine" != sqlite ]; then sizes "${dbs[@]}"; else stat -c %s "$DB"; fi)
        cpu0=0; [ "$engine" != sqlite ] && cpu0=$(pg_server_cpu "${servers[@]}")
        t0=$(now)
        /usr/bin/time -f "%U %S" -o "$T/client.time" \
            xargs -P "$writers" -n 1 sh -c 'h=${2##*/}; exec "$0" store add -q "$1" --host "${h%.raw}" --job fleet "$2"' \
            "$PGOKIT" "$DB" <"$T/in.list"
        t1=$(now)
        ingest=$(dt "$t0" "$t1")
        client=$(awk '{printf "%.2f", $1 + $2}' "$T/client.time")
        server=-
        [ "$engine" != sqlite ] && server=$(echo "$(pg_server_cpu "${servers[@]}") - $cpu0" | bc)
        if [ "$engine" != sqlite ]; then
            rows=$(pq "$DB" -c "SELECT sum(nranges + nbranches), count(*) FROM profiles")
            size1=$(sizes "${dbs[@]}")
        else
            rows=$(sqlite3 "$DB" "SELECT sum(nranges + nbranches) || '|' || count(*) FROM profiles")
            sqlite3 "$DB" "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
            size1=$(stat -c %s "$DB")
        fi
        nrows=${rows%|*} nprof=${rows#*|}
        [ "$nprof" = "$n" ] || { echo "store_fleet: $engine: $nprof of $n profiles stored" >&2; exit 1; }
        t0=$(now)
        sel=$("$PGOKIT" store select "$DB" --binary "$(basename "$binary")" --since 1d)
        t1=$(now)
        select_s=$(dt "$t0" "$t1")
        [ "$sel" = "$bid" ] || { echo "store_fleet: select chose $sel, not $bid" >&2; exit 1; }
        t0=$(now)
        "$PGOKIT" store pull -q "$DB" --build-id "$bid" -o "$T/pulled.raw"
        t1=$(now)
        pull_s=$(dt "$t0" "$t1")
        t0=$(now)
        "$PGOKIT" profgen -q --binary "$binary" --raw "$T/pulled.raw" -o "$T/pulled.prof"
        t1=$(now)
        profgen_s=$(dt "$t0" "$t1")
        t0=$(now)
        "$PGOKIT" merge -f "$T/in.list" -o "$T/merged.raw"
        t1=$(now)
        merge_s=$(dt "$t0" "$t1")
        same=no; cmp -s "$T/pulled.raw" "$T/merged.raw" && same=yes
        [ $same = yes ] || { echo "store_fleet: $engine $n hosts: pull differs from the file merge" >&2; exit 1; }
        per=$(( (size1 - size0) / n ))
        r=$(printf '| %s | %d | %d | %s | %.0f | %.1f | %s | %s | %s | %s | %s | %s | %.1f | %d | %s |' \
            "$engine" "$n" "$nrows" "$ingest" "$(echo "$nrows / $ingest" | bc -l)" \
            "$(echo "$bytes / 1048576 / $ingest" | bc -l)" "$client" "$server" "$select_s" "$pull_s" "$profgen_s" \
            "$merge_s" "$(echo "($size1 - $size0) / 1048576" | bc -l)" "$per" "$same")
        echo "$r"
        results+=("$r")
        [ "$engine" = sqlite ] && rm -f "$DB"*
    done
done

date_tag=$(date -u +%Y-%m-%d)
out=${PK_BENCH_RESULTS:-$PK_ROOT/bench/results}/$out_name-$date_tag.md
base_rows=$(( $("$PGOKIT" show "$raw" | awk '/^Branches:/ {print $2}') + $("$PGOKIT" show "$raw" | awk '/^Ranges:/ {print $2}') ))
{
    echo "# Profile store at fleet scale ($date_tag)"
    echo
    echo "Machine: $(nproc) cores ($(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)), $(free -g | awk '/Mem:/ {print $2}') GB RAM, shared with other work during the run."
    echo "Engines: PostgreSQL ${pgver:-n/a} (initdb defaults: fsync on, synchronous_commit on, shared_buffers 128MB; loopback TCP), SQLite $(sqlite3 --version | cut -d' ' -f1) (WAL, synchronous=NORMAL)."
    [[ " ${EN[*]} " != *" sharded "* ]] || echo "*sharded*: a coordinator and two shard servers, PostgreSQL as above on the same machine, count tables hash-partitioned on the build-id key with postgres_fdw foreign partitions (scripts/store_shard_setup.sql); server CPU and DB MB are the three servers'."
    echo "Source: $source_desc; its raw profile has $base_rows distinct ranges + branches. Fleet: $max host profiles made by bench/store_fleet_gen.c in ${gen_s}s; $writers concurrent writers, one \`pgokit store add\` process per host."
    echo
    echo "| engine | hosts | rows | ingest s | rows/s | MB/s (raw files) | client CPU s | server CPU s | select s | pull s | profgen s | file merge s | DB MB | bytes/host-profile | pull == merge |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    printf '%s\n' "${results[@]}"
    echo
    echo "Columns: *rows* = ranges + branches stored (one row each); *ingest s* = wall time of the $writers writers for all"
    echo "hosts; *MB/s* = raw-profile bytes uploaded per second; *client CPU* = user + system time of every \`pgokit store"
    echo "add\` process (exec, reading and hashing the profile, formatting COPY rows); *server CPU* = PostgreSQL's"
    echo "processes (parsing COPY, heap and index inserts, WAL); *pull s* = \`pgokit store pull\` (the merge in the"
    echo "engine, streamed out, written); *profgen s* = \`pgokit profgen --raw\` of the pulled file (symbolize once);"
    echo "*file merge s* = \`pgokit merge\` of the same raw files, whose output the pull must equal byte for byte"
    echo "(*pull == merge*); *DB MB* = growth of the database (PostgreSQL after CHECKPOINT, SQLite after a WAL"
    echo "checkpoint)."
    cat "$PK_ROOT/bench/store_fleet_notes.md"
} >"$out"
echo "store_fleet: wrote $out"
