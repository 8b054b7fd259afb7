#!/usr/bin/env bash
# The profile store sharded with PostgreSQL's own means, on three servers
# this test starts (initdb + pg_ctl in its temporary directory, loopback
# ports, all stopped at exit, failure or not): a coordinator whose count
# tables are hash-partitioned on the build-id key, each partition a
# postgres_fdw foreign table on one of two shard servers
# (scripts/store_shard_setup.sql). The same uploads into it and into a
# single-server store pull the same bytes; the pull's GROUP BY ... SUM runs
# on the shard (the coordinator's auto_explain logs the EXPLAIN VERBOSE of
# pgokit's own queries); uploads stay idempotent and a killed writer leaves
# nothing; a shard stopped before or during a pull makes the pull of its
# build-ids fail clearly with no output written. Calling contexts and IP
# observations (schema 4) sit on their key's shard too; a table left on the
# coordinator (as schema 4's new tables are on a store sharded before) is
# partitioned by the script run again, over its servers.
source "$(dirname "$0")/../lib.sh"
source "$PK_ROOT/tests/pg_lib.sh"
need qemu-x86_64 clang-19 readelf python3
[ -f "$PK_BUILD/pgokit-lbr.so" ] || { echo "skipped: $PK_BUILD/pgokit-lbr.so not built"; exit 77; }
pg_need
ext=$("$PG_BIN/pg_config" --sharedir 2>/dev/null || echo /usr/share/postgresql/15)/extension
[ -f "$ext/postgres_fdw.control" ] ||
    { echo "skipped: postgres_fdw not installed (bash scripts/setup.sh installs postgresql-15)"; exit 77; }
trap 'pg_stop_all immediate; [ -n "${PK_KEEP_TMP:-}" ] || rm -rf "$T"' EXIT
chmod 755 "$T"
pq() { psql -XAtq -v ON_ERROR_STOP=1 "$1" -c "$2"; }

# the coordinator logs the plan (EXPLAIN VERBOSE) of every statement it runs
pg_start "$T/coord" fsync=off session_preload_libraries=auto_explain auto_explain.log_min_duration=0 \
    auto_explain.log_verbose=on && pg_save coord || { fail "start the coordinator"; finish; exit 1; }
COORD=$PGURL COORD_LOG=$PG_DIR/server.log
pg_start "$T/shard0" fsync=off && pg_save shard0 || { fail "start shard 0"; finish; exit 1; }
S0=$PGURL S0_ADDR=127.0.0.1:$PG_PORT/postgres
pg_start "$T/shard1" fsync=off && pg_save shard1 || { fail "start shard 1"; finish; exit 1; }
S1=$PGURL S1_ADDR=127.0.0.1:$PG_PORT/postgres
# the single-server store to compare with: a database of its own on shard 0's server
pq "$S0" "CREATE DATABASE single" >/dev/null
SINGLE=${S0%/postgres}/single
for u in "$S0" "$S1" "$COORD" "$SINGLE"; do
    "$PGOKIT" store init -q "$u" || fail "store init $u"
done

# four revisions of a program: hash partitioning places a build-id key on
# a shard deterministically, so the build-ids are set (the first byte
# varies) to put 01 and 02 on shard 1 and 11 and 17 on shard 0
F=$T/fx
mkdir -p "$F"
ids=(01 02 11 17)
for v in 0 1 2 3; do
    bid=${ids[$v]}$(printf 'a5%.0s' $(seq 19))
    BIDS[v]=$bid
    clang-19 -O$((v % 2 + 1)) -g -fno-omit-frame-pointer -Wl,--build-id=0x"$bid" -o "$F/prog$v" \
        "$PK_ROOT/tests/programs/record_exact.c" &&
        "$PGOKIT" record --emulate -q --period 4001 -o "$F/a$v.data" -- "$F/prog$v" $((30000 * (v + 1))) >/dev/null &&
        "$PGOKIT" record --emulate -q --period 3001 -o "$F/b$v.data" -- "$F/prog$v" 40000 >/dev/null &&
        "$PGOKIT" profgen -q --binary "$F/prog$v" --perf "$F/b$v.data" --raw-only -o "$F/b$v.raw" &&
        "$PGOKIT" record --emulate --ip -q -o "$F/i$v.data" -- "$F/prog$v" 20000 >/dev/null &&
        "$PGOKIT" profgen -q --binary "$F/prog$v" --perf "$F/i$v.data" --raw-only -o "$F/i$v.raw" ||
        { fail "build and record revision $v"; finish; exit 1; }
done
both() { # uploads into both stores
    "$PGOKIT" store add -q "$COORD" "$@" && "$PGOKIT" store add -q "$SINGLE" "$@"
}
NOW=$(date +%s) # one clock for both stores: their lists must match to the second
upload() { # revision v: perf.data from two hosts (jobs web, batch), a raw profile from a third,
    # IP samples with call stacks from a fourth (calling contexts, IP observations)
    local v=$1
    both --binary "$F/prog$v" --host "h$v" --job web --time $((NOW - 2 * 86400)) "$F/a$v.data" &&
        both --binary "$F/prog$v" --host "g$v" --job batch --time $((NOW - 86400)) "$F/b$v.data" &&
        both --host "r$v" --job web --time $((NOW - 3600)) "$F/b$v.raw" &&
        both --host "i$v" --job ip --time $((NOW - 3600)) "$F/i$v.raw"
}
# revisions 0 and 2 are stored before the coordinator is sharded: the setup moves their rows
check "uploads before sharding (revisions 0, 2)" upload 0
check "..." upload 2

psql -XAtq -v ON_ERROR_STOP=1 -v shards="$S0_ADDR,$S1_ADDR" -v shard_user=pgokit \
    -f "$PK_ROOT/scripts/store_shard_setup.sql" "$COORD" >"$T/setup.log" 2>&1
check "scripts/store_shard_setup.sql shards the coordinator" test $? -eq 0
check_eq "... every count table (and contexts): two partitions, both foreign tables" "2|2|2|2|2|2|2" \
    "$(pq "$COORD" "SELECT string_agg(n::text, '|' ORDER BY t) FROM (SELECT i.inhparent::regclass::text t, count(*) n FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE c.relkind = 'f' GROUP BY 1) s")"
psql -XAtq -v ON_ERROR_STOP=1 -v shards="$S0_ADDR" -v shard_user=pgokit \
    -f "$PK_ROOT/scripts/store_shard_setup.sql" "$COORD" >"$T/setup2.log" 2>&1
check "... run again: refused (exit non-zero), nothing changed" \
    bash -c "test $? -ne 0 && test \"\$(psql -XAt '$COORD' -c 'SELECT count(*) FROM pg_foreign_server')\" = 2"
# a store sharded before schema 4 had its new tables (contexts, ip_*) made
# on the coordinator by `store init`: contexts is made a plain table again
# (its rows back on the coordinator) and the script, run again, partitions
# it alone over the servers it made before
nctx=$(pq "$COORD" "SELECT count(*) FROM contexts")
psql -XAtq -v ON_ERROR_STOP=1 "$COORD" >/dev/null <<'SQL'
BEGIN;
CREATE TABLE contexts_plain AS SELECT * FROM contexts;
DELETE FROM contexts;
DROP TABLE contexts;
ALTER TABLE contexts_plain RENAME TO contexts;
CREATE INDEX contexts_key ON contexts (bid, ckey);
COMMIT;
SQL
check_eq "contexts made a plain table on the coordinator again, its rows there" \
    "0|$nctx" "$(pq "$COORD" "SELECT count(*) FROM pg_inherits WHERE inhparent = 'contexts'::regclass")|$(pq "$COORD" "SELECT count(*) FROM ONLY contexts")"
psql -XAtq -v ON_ERROR_STOP=1 -v shards="$S0_ADDR,$S1_ADDR" -v shard_user=pgokit \
    -f "$PK_ROOT/scripts/store_shard_setup.sql" "$COORD" >"$T/setup3.log" 2>&1
check "... the script run again partitions it" test $? -eq 0
check_eq "... over the same two servers, every table now two foreign partitions" "2|2|2|2|2|2|2|2" \
    "$(pq "$COORD" "SELECT count(*) FROM pg_foreign_server")|$(pq "$COORD" "SELECT string_agg(n::text, '|' ORDER BY t) FROM (SELECT i.inhparent::regclass::text t, count(*) n FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE c.relkind = 'f' GROUP BY 1) s")"
check_eq "... the contexts on the shards, once" "$nctx" \
    "$(($(pq "$S0" "SELECT count(*) FROM contexts") + $(pq "$S1" "SELECT count(*) FROM contexts")))"
check "uploads after sharding (revisions 1, 3)" upload 1
check "..." upload 3
"$PGOKIT" store add "$COORD" --binary "$F/prog1" --host h1 --job web --time $((NOW - 2 * 86400)) "$F/a1.data" 2>"$T/dup.err"
check "the same upload again: exit 0, already stored" grep -q "already stored" "$T/dup.err"
check_eq "... 16 profiles on the coordinator" 16 "$(pq "$COORD" "SELECT count(*) FROM profiles")"

"$PGOKIT" store init "$COORD" 2>"$T/init.err"
check "store init on the sharded coordinator: already at schema version 4, nothing to do" \
    grep -q "at schema version 4" "$T/init.err"
"$PGOKIT" store list "$COORD" >"$T/list.txt" && "$PGOKIT" store list "$SINGLE" >"$T/list.single.txt"
check "store list: the same on the sharded coordinator as on one server" \
    bash -c "test \$(wc -l <'$T/list.txt') -eq 5 && cmp '$T/list.txt' '$T/list.single.txt'"

rows() { pq "$1" "SELECT (SELECT count(*) FROM ranges) + (SELECT count(*) FROM branches) + (SELECT count(*) FROM stats) + (SELECT count(*) FROM contexts) + (SELECT count(*) FROM ip_hits) + (SELECT count(*) FROM ip_calls) + (SELECT count(*) FROM ip_unplaced)"; }
n0=$(rows "$S0") n1=$(rows "$S1")
check "both shards hold count rows (shard 0: $n0, shard 1: $n1)" test "$n0" -gt 0 -a "$n1" -gt 0
check_eq "... each only its own build-ids' keys" "2|2" \
    "$(pq "$S0" "SELECT count(DISTINCT bid) FROM ranges")|$(pq "$S1" "SELECT count(DISTINCT bid) FROM ranges")"
check_eq "... contexts and IP observations too" "2|2|2|2" \
    "$(pq "$S0" "SELECT count(DISTINCT bid) FROM contexts")|$(pq "$S1" "SELECT count(DISTINCT bid) FROM contexts")|$(pq "$S0" "SELECT count(DISTINCT bid) FROM ip_hits")|$(pq "$S1" "SELECT count(DISTINCT bid) FROM ip_hits")"
check_eq "... no shard holds profiles" "0|0" "$(pq "$S0" "SELECT count(*) FROM profiles")|$(pq "$S1" "SELECT count(*) FROM profiles")"
check_eq "... together all the single server's rows" "$(rows "$SINGLE")" "$((n0 + n1))"

# pulls: sharded == single server, byte for byte
mark=$(wc -l <"$COORD_LOG")
for v in 0 1 2 3; do
    "$PGOKIT" store pull -q "$COORD" --build-id "${BIDS[v]}" -o "$T/sh$v.raw" &&
        "$PGOKIT" store pull -q "$SINGLE" --build-id "${BIDS[v]}" -o "$T/si$v.raw"
    check "revision $v: pull from the sharded store == pull from one server (cmp)" cmp "$T/sh$v.raw" "$T/si$v.raw"
done
"$PGOKIT" profgen -q --binary "$F/prog1" --perf "$F/a1.data" --raw-only -o "$F/a1.raw" &&
    "$PGOKIT" merge "$F/a1.raw" "$F/b1.raw" "$F/b1.raw" "$F/i1.raw" -o "$T/m1.raw"
check "... == pgokit merge of the uploads (revision 1)" cmp "$T/sh1.raw" "$T/m1.raw"
"$PGOKIT" store pull -q "$COORD" --build-id "${BIDS[2]}" --job web --since 30h -o "$T/shf.raw" &&
    "$PGOKIT" store pull -q "$SINGLE" --build-id "${BIDS[2]}" --job web --since 30h -o "$T/sif.raw"
check "a pull with --job and --since: sharded == one server" cmp "$T/shf.raw" "$T/sif.raw"
"$PGOKIT" merge "$F/b2.raw" -o "$T/mf.raw"
check "... == the one upload it selects" cmp "$T/shf.raw" "$T/mf.raw"

# the plans of those pulls' aggregates (auto_explain = EXPLAIN VERBOSE of the
# statements pgokit sent): the top node is the foreign scan of one
# partition, the aggregate and its GROUP BY in the SQL sent to the shard
tail -n +"$((mark + 1))" "$COORD_LOG" | awk '
    /Query Text:/ { want = /Query Text: SELECT x\..*, sum\(x\.[nv]\) FROM (ranges|branches|stats|ip_hits|ip_calls|ip_unplaced) x/; q += want; next }
    want == 1 && /^\t[A-Za-z]/ { if (/^\tForeign Scan/) want = 2; else { bad++; want = 0; print "local plan: " $0 >"/dev/stderr" } next }
    want == 2 && /Relations: Aggregate on \(public\.(ranges|branches|stats|ip_hits|ip_calls|ip_unplaced)_shard[01] x\)/ { rel++; next }
    want == 2 && /Remote SQL: SELECT .*sum\([nv]\).* FROM public\.(ranges|branches|stats|ip_hits|ip_calls|ip_unplaced) WHERE .*bid = .* GROUP BY / { remote++; want = 0 }
    END { printf "%d %d %d %d\n", q, rel, remote, bad }' >"$T/plans.txt" 2>"$T/local_plans.txt"
read -r nq nrel nremote nbad <"$T/plans.txt"
check "the pulls' aggregates were planned on the coordinator ($nq statements)" test "$nq" -ge 15
check_eq "... every one an aggregate pushed to one shard (Relations: Aggregate on <partition>)" "$nq" "$nrel"
check_eq "... whose remote SQL has the GROUP BY and the key" "$nq" "$nremote"
check_eq "... none aggregated on the coordinator" 0 "$nbad"
[ "$nbad" -eq 0 ] || head -n 5 "$T/local_plans.txt"

# a writer killed before its commit leaves nothing, on the coordinator or the shards
s_before="$(rows "$S0")/$(rows "$S1")"
PGOKIT_STORE_TEST_HOOK=kill:0 "$PGOKIT" store add -q "$COORD" --binary "$F/prog0" --host killed "$F/a0.data" 2>/dev/null
check "a writer killed before commit dies by SIGKILL" test $? -eq 137
check_eq "... no profile and no count row stored" "0|$s_before" \
    "$(pq "$COORD" "SELECT count(*) FROM profiles WHERE host = 'killed'")|$(rows "$S0")/$(rows "$S1")"
check "... the retry succeeds" "$PGOKIT" store add -q "$COORD" --binary "$F/prog0" --host killed "$F/a0.data"
check_eq "... once" 1 "$(pq "$COORD" "SELECT count(*) FROM profiles WHERE host = 'killed'")"
"$PGOKIT" store add -q "$SINGLE" --binary "$F/prog0" --host killed "$F/a0.data"

# shard 1 stopped: its build-ids cannot be pulled (a clear error, no output),
# nor uploaded (nothing left on the coordinator); shard 0's still can
pg_use shard1
pg_stop immediate
"$PGOKIT" store pull "$COORD" --build-id "${BIDS[0]}" -o "$T/down.raw" 2>"$T/down.err"
check "shard 1 down: a pull of its build-id exits 1" test $? -eq 1
check "... saying which shard it could not reach" \
    grep -qE "store pull: postgresql://pgokit@127.0.0.1:[0-9]+/postgres: query failed: .*could not connect to server \"pgokit_shard1\"" "$T/down.err"
check "... and writes no output" test ! -e "$T/down.raw"
"$PGOKIT" store add -q "$COORD" --binary "$F/prog0" --host down --time 1h "$F/b0.data" 2>"$T/downadd.err"
check "... an upload of that build-id exits 1" test $? -eq 1
check_eq "... and leaves no profile on the coordinator" 0 "$(pq "$COORD" "SELECT count(*) FROM profiles WHERE host = 'down'")"
check "... a build-id on shard 0 is still pulled" \
    "$PGOKIT" store pull -q "$COORD" --build-id "${BIDS[2]}" -o "$T/up2.raw"
check "... the same bytes" cmp "$T/up2.raw" "$T/si2.raw"
pg_launch || fail "restart shard 1"
"$PGOKIT" store pull -q "$COORD" --build-id "${BIDS[0]}" -o "$T/back.raw" &&
    "$PGOKIT" store pull -q "$SINGLE" --build-id "${BIDS[0]}" -o "$T/back.si.raw"
check "shard 1 back: the pull works again, == one server" cmp "$T/back.raw" "$T/back.si.raw"

# shard 1 stops during a pull: the pull waits on a lock held on shard 1's
# ranges (after its stats were summed), the shard is stopped under it
psql -XAtq "$S1" -c "BEGIN" -c "LOCK TABLE ranges IN ACCESS EXCLUSIVE MODE" -c "SELECT pg_sleep(120)" \
    >/dev/null 2>&1 &
lockpid=$!
locked=0
for _ in $(seq 200); do
    locked=$(pq "$S1" "SELECT count(*) FROM pg_locks WHERE relation = 'ranges'::regclass AND mode = 'AccessExclusiveLock' AND granted")
    [ "$locked" -gt 0 ] && break
    sleep 0.1
done
check "shard 1's ranges locked" test "$locked" -gt 0
"$PGOKIT" store pull "$COORD" --build-id "${BIDS[0]}" -o "$T/during.raw" 2>"$T/during.err" &
pullpid=$!
waiting=0
for _ in $(seq 200); do
    waiting=$(pq "$S1" "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%FROM public.ranges%'")
    [ "$waiting" -gt 0 ] && break
    sleep 0.1
done
check "a pull waits on shard 1 mid-way" test "$waiting" -gt 0
pg_stop immediate
wait $pullpid
check "shard 1 stopped during the pull: exit 1" test $? -eq 1
check "... with the shard's failure in the message" \
    grep -qE "store pull: postgresql://.*: query failed: .*(server closed the connection|terminat|could not)" "$T/during.err"
check "... and writes no output" test ! -e "$T/during.raw"
wait $lockpid
pg_launch || fail "restart shard 1"

# prune on the sharded store deletes on the shards too
"$PGOKIT" store prune -q "$COORD" --before 30h && "$PGOKIT" store prune -q "$SINGLE" --before 30h
check_eq "prune: the shards keep the rows the single server keeps" "$(rows "$SINGLE")" "$(($(rows "$S0") + $(rows "$S1")))"
finish
