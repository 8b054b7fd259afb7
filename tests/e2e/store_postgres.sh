#!/usr/bin/env bash
# The profile store on PostgreSQL 15, on a server this test starts (initdb +
# pg_ctl in its temporary directory, a free loopback port, stopped at exit):
# the suite of tests/store_lib.sh, results equal to SQLite's, a wrong
# connection string, and the server stopped during an add (clear error,
# non-zero exit, the retry succeeds).
source "$(dirname "$0")/../lib.sh"
source "$PK_ROOT/tests/store_lib.sh"
source "$PK_ROOT/tests/pg_lib.sh"
need qemu-x86_64 clang-19 sqlite3 readelf python3
[ -f "$PK_BUILD/pgokit-lbr.so" ] || { echo "skipped: $PK_BUILD/pgokit-lbr.so not built"; exit 77; }
pg_need
[ -n "${PK_KEEP_TMP:-}" ] || trap 'pg_stop immediate; rm -rf "$T"' EXIT
chmod 755 "$T"
pg_start "$T/pg" fsync=off || { fail "start PostgreSQL"; finish; exit 1; }
pq() { psql -XAtq -v ON_ERROR_STOP=1 "$PGURL" -c "$1"; }

store_fixtures
store_suite postgres "$PGURL" pq

# the same uploads on SQLite give the same pull, byte for byte
S=$T/eq.db
"$PGOKIT" store init -q "$S" &&
    "$PGOKIT" store add -q "$S" --binary "$F/r1/prog" --host h1 --job web "$F/a1.data" &&
    "$PGOKIT" store add -q "$S" --binary "$F/r1/prog" --host h2 --job batch "$F/a2.raw" &&
    "$PGOKIT" store add -q "$S" --binary "$F/r1/prog" --host h3 --job web "$F/ip.pb.gz" &&
    "$PGOKIT" store pull -q "$S" --build-id "$R1" -o "$T/eq.raw"
check "SQLite and PostgreSQL pull the same raw profile" cmp "$T/eq.raw" "$T/postgres/p1.raw"

# the sanitizer build on PostgreSQL: init, add (perf.data, raw), pull, prune
if [ -x "$PGOKIT_SAN" ]; then
    pq "CREATE DATABASE san" >/dev/null
    SU=${PGURL%/postgres}/san
    "$PGOKIT_SAN" store init -q "$SU" && "$PGOKIT_SAN" store add -q "$SU" --binary "$F/r1/prog" --host s1 "$F/a1.data" &&
        "$PGOKIT_SAN" store add -q "$SU" --host s2 "$F/a2.raw" && "$PGOKIT_SAN" store add -q "$SU" --host s2 "$F/a2.raw" &&
        "$PGOKIT_SAN" store pull -q "$SU" --build-id "$R1" -o "$T/san.raw" &&
        "$PGOKIT_SAN" store list "$SU" >/dev/null && "$PGOKIT_SAN" store prune -q "$SU" --before 1h
    check "sanitizer build on PostgreSQL: init, add, pull, list, prune" test $? -eq 0
    "$PGOKIT" merge "$F/a1.raw" "$F/a2.raw" -o "$T/san.m.raw"
    check "... pull == merge" cmp "$T/san.raw" "$T/san.m.raw"
    "$PGOKIT_SAN" store list "postgresql://pgokit@127.0.0.1:1/x" 2>/dev/null
    check "... a failed connection exits 1 cleanly" test $? -eq 1
fi

# wrong connection strings
"$PGOKIT" store list "postgresql://pgokit:secret@127.0.0.1:1/postgres" 2>"$T/conn.err"
check "nothing listening: exit 1" test $? -eq 1
check "... the message says where, password masked" \
    bash -c "grep -q 'postgresql://pgokit:\*\*\*@127.0.0.1:1/postgres: cannot connect' '$T/conn.err' && ! grep -q secret '$T/conn.err'"
"$([ -x "$PGOKIT_SAN" ] && echo "$PGOKIT_SAN" || echo "$PGOKIT")" store list "postgresql://pgokit:x@127.0.0.1:1/postgres" 2>"$T/conn2.err"
check "a password shorter than its mask: masked, exit 1" \
    bash -c "test $? -eq 1 && grep -q 'pgokit:\*\*\*@127.0.0.1:1/postgres: cannot connect' '$T/conn2.err'"
# every other way libpq takes a password: masked too, in pgokit's and in libpq's words
i=0
for t in "postgresql://pgokit@127.0.0.1:1/postgres?password=sekret_q1" \
         "postgresql://127.0.0.1:1/postgres?connect_timeout=2&password=sekret_q2&sslmode=disable" \
         "host=127.0.0.1 port=1 dbname=postgres password=sekret_kv3" \
         "host=127.0.0.1 port=1 password = 'sekret kv4' dbname=postgres" \
         "postgresql://pgokit@127.0.0.1:1/postgres?password=%zzsekret_q5" \
         "postgresql://pgokit@127.0.0.1:$PG_PORT/template1?password=sekret_q6"; do
    i=$((i + 1))
    "$PGOKIT" store list "$t" 2>"$T/pw$i.err"
    check "password form $i: exit 1, masked" \
        bash -c "test $? -eq 1 && grep -q '\*\*\*' '$T/pw$i.err' && ! grep -q sekret '$T/pw$i.err'"
done
"$PGOKIT" store list "postgresql://nosuchrole@127.0.0.1:$PG_PORT/postgres" 2>"$T/role.err"
check "an unknown role: exit 1, the server's reason" bash -c "test $? -eq 1 && grep -q 'nosuchrole' '$T/role.err'"
"$PGOKIT" store list "postgresql://pgokit@127.0.0.1:$PG_PORT/nosuchdb" 2>"$T/db.err"
check "an unknown database: exit 1, named" bash -c "test $? -eq 1 && grep -q 'nosuchdb' '$T/db.err'"
"$PGOKIT" store list "postgresql://pgokit@127.0.0.1:$PG_PORT/template1" 2>"$T/nostore.err"
check "a database without a store: exit 1" grep -q "not a pgokit profile store" "$T/nostore.err"

# the server stops while an add waits to commit
n0=$(pq "SELECT count(*) FROM profiles WHERE host = 'outage'")
PGOKIT_STORE_TEST_HOOK="pause:4:$T/paused" "$PGOKIT" store add -q "$PGURL" --binary "$F/r1/prog" --host outage \
    "$F/a2.raw" 2>"$T/outage.err" &
apid=$!
for _ in $(seq 100); do [ -e "$T/paused" ] && break; sleep 0.1; done
check "the add reached its commit" test -e "$T/paused"
pg_stop immediate
wait $apid
check "server stopped during add: exit 1" test $? -eq 1
check "... with a clear message" bash -c "grep -qiE 'store add: postgresql://.*(server closed|terminat|connection)' '$T/outage.err'"
"$PGOKIT" store add -q "$PGURL" --binary "$F/r1/prog" --host outage "$F/a2.raw" 2>"$T/down.err"
check "server down: add exits 1" test $? -eq 1
check "... cannot connect" grep -q "cannot connect" "$T/down.err"
pg_launch || fail "restart PostgreSQL"
check_eq "the interrupted add left nothing" "$n0" "$(pq "SELECT count(*) FROM profiles WHERE host = 'outage'")"
check "the retry succeeds" "$PGOKIT" store add -q "$PGURL" --binary "$F/r1/prog" --host outage "$F/a2.raw"
check_eq "... once" 1 "$(pq "SELECT count(*) FROM profiles WHERE host = 'outage'")"
check_eq "no orphan rows anywhere" 0 \
    "$(pq "SELECT count(*) FROM ranges WHERE profile_id NOT IN (SELECT id FROM profiles)")"
finish
