#!/usr/bin/env bash
# The profile store on SQLite (the embedded default): init, add (perf.data,
# raw, pprof; idempotent), list, select (revision choice), pull == file
# merge byte for byte, prune, bound parameters, bad input, a killed writer,
# concurrent writers, schema versions (tests/store_lib.sh).
source "$(dirname "$0")/../lib.sh"
source "$PK_ROOT/tests/store_lib.sh"
need qemu-x86_64 clang-19 sqlite3 readelf
[ -f "$PK_BUILD/pgokit-lbr.so" ] || { echo "skipped: $PK_BUILD/pgokit-lbr.so not built"; exit 77; }

store_fixtures
DB=$T/store.db
sq() { sqlite3 "$DB" "$1"; }
store_suite sqlite "$DB" sq

# SQLite specifics: a file that is not a database, a missing one
echo "not a database" >"$T/junk.db"
"$PGOKIT" store list "$T/junk.db" 2>"$T/junk.err"
check "a file that is not a database: exit 1" test $? -eq 1
check "... named" grep -q "junk.db: not a usable SQLite database" "$T/junk.err"
# a SQLite file that is not a store, and an empty file, are left as they were
: > "$T/empty.db"
"$PGOKIT" store list "$T/empty.db" 2>"$T/empty.err"
check "an empty file: exit 1, not a store" bash -c "test $? -eq 1 && grep -q 'empty.db: not a pgokit profile store' '$T/empty.err'"
check "an empty file stays empty" test "$(stat -c %s "$T/empty.db")" -eq 0
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('CREATE TABLE t (x)'); c.execute('INSERT INTO t VALUES (1)'); c.commit()" "$T/other.db"
cp "$T/other.db" "$T/other.orig"
for sub in list "select --binary x" "pull --build-id 00 -o $T/o.raw" "prune --before 1d"; do
    read -r -a args <<< "$sub"
    "$PGOKIT" store "${args[0]}" "$T/other.db" "${args[@]:1}" 2>"$T/other.err" > /dev/null
    check "store ${args[0]} on another SQLite database: refused, file unchanged, no -wal" \
        bash -c "grep -q 'not a pgokit profile store' '$T/other.err' && cmp -s '$T/other.db' '$T/other.orig' && ! test -e '$T/other.db-wal'"
done
"$PGOKIT" store list "$T/missing.db" 2>"$T/missing.err"
check "a missing store: exit 1, not created" bash -c "grep -q 'missing.db: no such store' '$T/missing.err' && ! test -e '$T/missing.db'"
"$PGOKIT" store add "$T/missing.db" "$T/fx/a1.raw" 2>/dev/null
check "add to a missing store fails (init creates stores)" bash -c "test $? -eq 1 && ! test -e '$T/missing.db'"
# the sanitizer build runs the main paths too
SDB=$T/san.db
if [ -x "$PGOKIT_SAN" ]; then
    "$PGOKIT_SAN" store init -q "$SDB" && "$PGOKIT_SAN" store add -q "$SDB" --binary "$F/r1/prog" --host s1 "$F/a1.data" &&
        "$PGOKIT_SAN" store add -q "$SDB" --host s2 "$F/a2.raw" &&
        "$PGOKIT_SAN" store pull -q "$SDB" --build-id "$R1" -o "$T/san.raw"
    check "sanitizer build: init, add, pull" test $? -eq 0
    "$PGOKIT" merge "$F/a1.raw" "$F/a2.raw" -o "$T/san.m.raw"
    check "... pull == merge" cmp "$T/san.raw" "$T/san.m.raw"
fi
finish
