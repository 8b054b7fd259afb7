#!/usr/bin/env bash
# The profile store holds raw profiles of version 2 (schema 4): calling
# contexts and IP observations as recorded, merged by the engine, inferred
# once by profgen on the pull. On SQLite and on PostgreSQL (a server this
# test starts), for a stack+LBR recording of a pseudo-probe binary (CSSPGO),
# IP recordings of a pseudo-probe binary (CSSPGO) and of a plain one
# (AutoFDO): after `store add` of recording a (perf.data, through the map
# step) and of b's raw profile,
#   profgen --perf a.data --perf b.data
#   == profgen --raw a.raw --raw b.raw
#   == profgen --raw pulled.raw            (byte for byte)
# and the pull is byte for byte `pgokit merge a.raw b.raw`. list says what a
# pull makes (csspgo with contexts; IP samples); a version-1 input's lack of
# contexts is said once; an upload again adds nothing; a writer killed
# before its commit leaves no context or count row; a context stored under
# its key with other addresses (a hash collision) is refused; bad input
# leaves the store as it was; prune drops the contexts of build-ids no
# profile is left of. A synthetic input of 10^5 contexts (raw_v2_synth.py)
# stays bounded: its contexts are stored once whatever the number of its
# uploads; the database size and the add and pull times are printed.
source "$(dirname "$0")/../lib.sh"
source "$PK_ROOT/tests/pg_lib.sh"
need qemu-x86_64 clang-19 sqlite3
[ -f "$PK_BUILD/pgokit-lbr.so" ] || { echo "skipped: the QEMU plugin is not built"; exit 77; }
P=$PK_ROOT/tests/programs
cd "$T" || exit 1

CF="-O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer"
clang-19 $CF -fpseudo-probe-for-profiling "$P/profgen_recurse.c" -o probe &&
    clang-19 $CF "$P/profgen_recurse.c" -o plain || { fail "build fixtures"; finish; exit 1; }
rec() { # NAME BIN MODE PERIOD ARGS...
    local name=$1 bin=$2 mode=$3 period=$4; shift 4
    "$PGOKIT" record --emulate ${mode/lbr/} -q --period "$period" -o "$name.data" -- "./$bin" "$@" >/dev/null 2>&1 &&
        "$PGOKIT" profgen -q --binary "$bin" --perf "$name.data" --raw-only -o "$name.raw"
}
rec probe.lbr.a probe lbr 997 300 && rec probe.lbr.b probe lbr 1009 200 &&
    rec probe.ip.a probe --ip 997 300 && rec probe.ip.b probe --ip 1009 200 &&
    rec plain.ip.a plain --ip 997 300 && rec plain.ip.b plain --ip 1009 200
check "recorded (probe: LBR + stacks, IP + stacks; plain: IP + stacks), raw profiles written" test $? -eq 0
bid_of() { readelf -n "$1" | awk '/Build ID/ {print $3}'; }
BPROBE=$(bid_of probe) BPLAIN=$(bid_of plain)
# what the recordings give without the store
for set in probe.lbr probe.ip plain.ip; do
    bin=${set%%.*}
    "$PGOKIT" profgen -q --binary "$bin" --perf "$set.a.data" --perf "$set.b.data" -o "$set.x.prof" &&
        "$PGOKIT" profgen -q --binary "$bin" --raw "$set.a.raw" --raw "$set.b.raw" -o "$set.y.prof" &&
        "$PGOKIT" merge "$set.a.raw" "$set.b.raw" -o "$set.m.raw" || fail "$set: profiles from the recordings"
    check "$set: --perf a --perf b == --raw a.raw --raw b.raw" cmp "$set.x.prof" "$set.y.prof"
done
"$PGOKIT" profgen -q --binary probe --perf probe.lbr.a.data --raw-only --raw-version 1 -o v1.a.raw &&
    "$PGOKIT" profgen -q --binary probe --perf probe.lbr.b.data --raw-only --raw-version 1 -o v1.b.raw ||
    fail "version-1 raw profiles"

# suite LABEL DB QUERYFN
suite() {
    local L=$1 DB=$2 q=$3 O=$T/$1
    mkdir -p "$O"
    st() { "$PGOKIT" store "$@"; }
    check "$L: init (schema 4)" st init -q "$DB"
    check_eq "$L: ... schema version" 4 "$($q "SELECT max(version) FROM schema_version")"
    local set
    # per set, two jobs: a.data through the map step with b.raw (the
    # profile is compared: the unwinder's statistics of a.data depend on its
    # threads' timing), and a.raw with b.raw (the raw bytes are compared)
    for set in probe.lbr probe.ip plain.ip; do
        local bin=${set%%.*} job=${set#*.} bid
        bid=$([ "$bin" = probe ] && echo "$BPROBE" || echo "$BPLAIN")
        st add -q "$DB" --binary "$bin" --host ha --job "$job" --time 2d "$set.a.data" &&
            st add -q "$DB" --binary "$bin" --host hb --job "$job" --time 1d "$set.b.raw" &&
            st pull "$DB" --build-id "$bid" --job "$job" -o "$O/$set.pull.raw" 2>"$O/$set.pull.err"
        check "$L: $set: add a.data (map step), add b.raw, pull" test $? -eq 0
        check "$L: $set: ... the pull is version 2" grep -q "raw profile version 2" "$O/$set.pull.err"
        "$PGOKIT" profgen -q --binary "$bin" --raw "$O/$set.pull.raw" -o "$O/$set.z.prof"
        check "$L: $set: profgen --raw pulled.raw == profgen --perf a --perf b (cmp)" cmp "$O/$set.z.prof" "$set.x.prof"
        st add -q "$DB" --host ha --job "$job.raw" --time 2d "$set.a.raw" &&
            st add -q "$DB" --host hb --job "$job.raw" --time 1d "$set.b.raw" &&
            st pull -q "$DB" --build-id "$bid" --job "$job.raw" -o "$O/$set.pull2.raw"
        check "$L: $set: add a.raw, b.raw: pull == pgokit merge a.raw b.raw (cmp)" cmp "$O/$set.pull2.raw" "$set.m.raw"
    done
    check "$L: the stored contexts: one row per context and key, every count row's context stored" \
        test "$($q "SELECT count(*) FROM contexts")" -gt 0 -a \
        "$($q "SELECT count(*) FROM (SELECT bid, ckey FROM contexts GROUP BY bid, ckey HAVING count(*) > 1) d")" = 0 -a \
        "$($q "SELECT count(*) FROM ranges x WHERE x.ctx <> 0 AND NOT EXISTS (SELECT 1 FROM contexts c WHERE c.bid = x.bid AND c.ckey = x.ctx)")" = 0
    check "$L: IP observations stored as such (hits, calls), not inferred into ranges" \
        test "$($q "SELECT count(*) FROM ip_hits")" -gt 0 -a "$($q "SELECT count(*) FROM ip_calls")" -gt 0 -a \
        "$($q "SELECT count(*) FROM ranges r JOIN profiles p ON p.id = r.profile_id WHERE p.job = 'ip'")" = 0
    # probe.lbr and probe.ip share the build-id: a pull of every job merges both
    st pull -q "$DB" --build-id "$BPROBE" -o "$O/probe.all.raw" &&
        "$PGOKIT" profgen -q --binary probe --raw "$O/probe.all.raw" -o "$O/probe.all.prof"
    check "$L: LBR and IP uploads of one build-id: one pull, one CSSPGO profile" test $? -eq 0 -a -s "$O/probe.all.prof"
    st list "$DB" >"$O/list.txt"
    check "$L: list: the probe revision makes csspgo, from IP samples and LBR" \
        grep -qE "^probe +$BPROBE +8 +2 .* autofdo,probe,csspgo; from IP samples and LBR$" "$O/list.txt"
    check "$L: list: the plain revision (IP only) makes csspgo too (stacks), from IP samples" \
        grep -qE "^plain +$BPLAIN +4 .* autofdo,probe,csspgo; from IP samples$" "$O/list.txt"

    # idempotent: the same upload again adds nothing (contexts neither),
    # also a perf.data reduced again (the unwinder's thread-dependent
    # statistics are not content)
    local nctx k; nctx=$($q "SELECT count(*) FROM contexts")
    for k in 1 2 3; do
        st add "$DB" --binary probe --host ha --job lbr --time 2d probe.lbr.a.data 2>"$O/dupdata$k.err"
        check "$L: the same perf.data (LBR + stacks) again, try $k: already stored" grep -q "already stored" "$O/dupdata$k.err"
    done
    st add "$DB" --binary probe --host hb --job lbr --time 1d probe.lbr.b.raw 2>"$O/dup.err"
    check "$L: the same upload again: already stored" grep -q "already stored" "$O/dup.err"
    # another host, the same contexts: no context stored twice
    st add "$DB" --host hc --job lbr --time 1d probe.lbr.b.raw 2>"$O/again.err"
    check "$L: another upload with the same contexts stores none of them again" \
        grep -qE "contexts \(0 new\)" "$O/again.err"
    check_eq "$L: ... the context rows are unchanged" "$nctx" "$($q "SELECT count(*) FROM contexts")"

    # a writer killed before its commit leaves nothing
    local before; before=$($q "SELECT (SELECT count(*) FROM profiles) || '/' || (SELECT count(*) FROM contexts) || '/' || (SELECT count(*) FROM ranges) || '/' || (SELECT count(*) FROM ip_hits)")
    PGOKIT_STORE_TEST_HOOK=kill:0 st add -q "$DB" --binary plain --host killed --job x plain.ip.a.data 2>/dev/null
    check "$L: writer killed before commit dies by SIGKILL" test $? -eq 137
    check_eq "$L: ... profiles, contexts, ranges and IP rows unchanged" "$before" \
        "$($q "SELECT (SELECT count(*) FROM profiles) || '/' || (SELECT count(*) FROM contexts) || '/' || (SELECT count(*) FROM ranges) || '/' || (SELECT count(*) FROM ip_hits)")"

    # bad input: a corrupt version-2 raw profile
    cp probe.ip.a.raw "$O/corrupt.raw"
    printf '\x55' | dd of="$O/corrupt.raw" bs=1 seek=300 conv=notrunc 2>/dev/null
    st add "$DB" --host bad "$O/corrupt.raw" 2>"$O/corrupt.err"
    check "$L: corrupt version-2 raw profile: exit 1, named" \
        bash -c "test $? -eq 1 && grep -q 'corrupt.raw.*checksum mismatch' '$O/corrupt.err'"
    check_eq "$L: ... the store unchanged" "$before" \
        "$($q "SELECT (SELECT count(*) FROM profiles) || '/' || (SELECT count(*) FROM contexts) || '/' || (SELECT count(*) FROM ranges) || '/' || (SELECT count(*) FROM ip_hits)")"

    # a stored context whose addresses differ from an upload's under the
    # same key (what a 64-bit hash collision would look like) is refused
    local key addrs
    key=$($q "SELECT min(ckey) FROM contexts WHERE bid IN (SELECT bid FROM profiles WHERE job = 'lbr')")
    addrs=$($q "SELECT addrs FROM contexts WHERE ckey = $key")
    $q "UPDATE contexts SET addrs = '1,2,3' WHERE ckey = $key" >/dev/null
    st add "$DB" --host collide --job lbr probe.lbr.a.raw 2>"$O/collide.err"
    check "$L: a context key stored with other addresses: exit 1, said" \
        bash -c "test $? -eq 1 && grep -q 'hash collision' '$O/collide.err'"
    check_eq "$L: ... nothing added" 0 "$($q "SELECT count(*) FROM profiles WHERE host = 'collide'")"
    $q "UPDATE contexts SET addrs = '$addrs' WHERE ckey = $key" >/dev/null

    # version 1: flat, said once; list says why no csspgo
    st add "$DB" --name v1prog --host h1 --job v1 v1.a.raw v1.b.raw 2>"$O/v1.err"
    check "$L: version-1 raw profiles are still stored" test $? -eq 0
    check_eq "$L: ... their lack of calling contexts said once" 1 "$(grep -c 'version-1 raw profile' "$O/v1.err")"
    $q "DELETE FROM profiles WHERE job = 'v1'" >/dev/null
    local V1DB=$O/v1only.db
    [ "$L" = sqlite ] || V1DB=$DB
    if [ "$L" = sqlite ]; then
        st init -q "$V1DB" && st add -q "$V1DB" --name v1prog --host h1 v1.a.raw &&
            st pull -q "$V1DB" --build-id "$BPROBE" -o "$O/v1.pull.raw" &&
            "$PGOKIT" merge v1.a.raw -o "$O/v1.m.raw"
        check "$L: a pull of version-1 uploads is version 1, their file merge" cmp "$O/v1.pull.raw" "$O/v1.m.raw"
        st list "$V1DB" >"$O/v1.list"
        check "$L: list: no csspgo, because the uploads were version 1" \
            grep -q "autofdo,probe; no csspgo (no calling contexts stored: version-1 (flat) uploads)$" "$O/v1.list"
    fi

    # prune: the contexts of a build-id no profile is left of go too
    st prune -q "$DB" --before 36h
    check_eq "$L: prune --before 36h: the b uploads are left" 0 "$($q "SELECT count(*) FROM profiles WHERE host = 'ha'")"
    check "$L: ... the probe contexts stay (profiles left)" test "$($q "SELECT count(*) FROM contexts")" -gt 0
    st prune -q "$DB" --before 1h
    check_eq "$L: prune of everything: no context left, no IP row left" "0/0/0" \
        "$($q "SELECT count(*) FROM contexts")/$($q "SELECT count(*) FROM ip_hits")/$($q "SELECT count(*) FROM ip_calls")"
}

# big LABEL DB QUERYFN: 10^5 contexts, uploaded twice
python3 "$PK_ROOT/tests/e2e/raw_v2_synth.py" big.raw 100000 || fail "synthesize 10^5 contexts"
BBIG=$("$PGOKIT" show big.raw | awk '/^Binary:/ {sub(/,$/, "", $4); print $4}')
"$PGOKIT" merge big.raw big.raw -o big.m.raw || fail "merge the synthetic profile"
big() {
    local L=$1 DB=$2 q=$3 O=$T/$1 t0 t1 t2 t3 s0 s1 s2
    "$PGOKIT" store init -q "$DB"
    s0=$(sz "$DB")
    t0=$(date +%s%N)
    "$PGOKIT" store add -q "$DB" --host b1 big.raw; s1=$(sz "$DB"); t1=$(date +%s%N)
    "$PGOKIT" store add "$DB" --host b2 big.raw 2>"$O/big2.err"; s2=$(sz "$DB"); t2=$(date +%s%N)
    "$PGOKIT" store pull -q "$DB" --build-id "$BBIG" -o "$O/big.pull.raw"; t3=$(date +%s%N)
    echo "$L: 10^5 contexts: database $((s0 / 1024)) KiB empty, $((s1 / 1024)) KiB after one upload, $((s2 / 1024)) KiB after two; add $(((t1 - t0) / 1000000)) ms, add again $(((t2 - t1) / 1000000)) ms, pull $(((t3 - t2) / 1000000)) ms"
    check "$L: 10^5 contexts: pull of two uploads == their file merge" cmp "$O/big.pull.raw" big.m.raw
    check_eq "$L: ... each context stored once" 100000 "$($q "SELECT count(*) FROM contexts")"
    check "$L: ... the second upload stores no context" grep -q "100000 contexts (0 new)" "$O/big2.err"
    check "$L: ... it grows the database less than the first (its counts only: $((s2 - s1)) < $((s1 - s0)) bytes)" \
        test $((s2 - s1)) -lt $((s1 - s0))
    check "$L: ... under 1 KiB per context and upload" test $((s2 - s0)) -lt $((2 * 100000 * 1024))
    check "$L: ... the pull within 60 s on a loaded machine" test $(((t3 - t2) / 1000000000)) -lt 60
}

sq() { sqlite3 "$T/store.db" "$1"; }
suite sqlite "$T/store.db" sq
sz() { stat -c %s "$1"; }
sqb() { sqlite3 "$T/big.db" "$1"; }
mkdir -p "$T/sqlite-big"
big sqlite-big "$T/big.db" sqb

if [ -x "${PG_BIN:-/usr/lib/postgresql/15/bin}/initdb" ] && command -v psql >/dev/null; then
    trap 'pg_stop immediate; [ -n "${PK_KEEP_TMP:-}" ] || rm -rf "$T"' EXIT
    chmod 755 "$T"
    if pg_start "$T/pg" fsync=off; then
        pq() { psql -XAtq -v ON_ERROR_STOP=1 "$PGURL" -c "$1"; }
        suite postgresql "$PGURL" pq
        for set in probe.lbr probe.ip plain.ip; do
            check "postgresql and sqlite pull the same bytes ($set)" cmp "$T/postgresql/$set.pull.raw" "$T/sqlite/$set.pull.raw"
        done
        pq "CREATE DATABASE big" >/dev/null
        BIGURL=${PGURL%/postgres}/big
        pqb() { psql -XAtq -v ON_ERROR_STOP=1 "$BIGURL" -c "$1"; }
        sz() { pqb "SELECT pg_database_size(current_database())"; }
        mkdir -p "$T/postgresql-big"
        big postgresql-big "$BIGURL" pqb
    else
        fail "start PostgreSQL"
    fi
else
    echo "PostgreSQL server binaries not found: the PostgreSQL half is skipped"
fi
finish
