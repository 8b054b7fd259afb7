#!/usr/bin/env bash
# Stores written by pgokit at schema version 2 (tests/fixtures/store_v2,
# made by the pgokit before the build-id key) and at schema version 3
# (tests/fixtures/store_v3, made by the pgokit before version-2 raw
# profiles in the store; make.sh in each says how) are migrated in place to
# version 4 on SQLite and on PostgreSQL (a server this test starts and
# stops): refused before `init`, then every pull gives the bytes that pgokit
# pulled before the migration (both read through today's raw-profile
# writer: `pgokit merge` of one file rewrites it), and equals the file merge
# of the uploads; uploads after the migration join them, a version-2 one
# too (the pull is then version 2, as the file merge is).
source "$(dirname "$0")/../lib.sh"
source "$PK_ROOT/tests/pg_lib.sh"
need sqlite3
FX=$PK_ROOT/tests/fixtures/store_v2
bid_of() { "$PGOKIT" show "$1" | awk '/^Binary:/ {sub(/,$/, "", $4); print $4}'; }
A=$(bid_of "$FX/a1.raw") C=$(bid_of "$FX/c1.raw")
check "the fixtures have two build-ids" test -n "$A" -a -n "$C" -a "$A" != "$C"
"$PGOKIT" merge "$FX/a1.raw" "$FX/a2.raw" -o "$T/m-a.raw" || fail "merge the uploads"
"$PGOKIT" convert "$FX/a2.raw" -o "$T/a2v2.raw" &&
    "$PGOKIT" merge "$FX/a1.raw" "$FX/a2.raw" "$FX/a2.raw" "$T/a2v2.raw" -o "$T/m-a3.raw" ||
    fail "a version-2 upload and its merge"
check "the version-2 upload is version 2 (flat)" test "$(od -An -tu4 -j8 -N4 "$T/a2v2.raw" | tr -d ' ')" = 2
# the bytes each old pgokit pulled, written by today's writer
for v in 2 3; do
    "$PGOKIT" merge "$PK_ROOT/tests/fixtures/store_v$v/pull-a.raw" -o "$T/old$v-a.raw" &&
        "$PGOKIT" merge "$PK_ROOT/tests/fixtures/store_v$v/pull-a-web.raw" -o "$T/old$v-a-web.raw" &&
        "$PGOKIT" merge "$PK_ROOT/tests/fixtures/store_v$v/pull-c.raw" -o "$T/old$v-c.raw" || fail "read the old pulls"
done

migrate_suite() { # LABEL DB QUERYFN VERSION
    local L=$1 DB=$2 q=$3 V=$4 O=$T/$1
    mkdir -p "$O"
    check_eq "$L: the fixture is at schema version $V" "$V" "$($q "SELECT max(version) FROM schema_version")"
    "$PGOKIT" store pull -q "$DB" --build-id "$A" -o "$O/early.raw" 2>"$O/early.err"
    check "$L: pull before init: refused with the hint, nothing written" \
        bash -c "grep -q 'schema version $V is older than 4: migrate it with' '$O/early.err' && ! test -e '$O/early.raw'"
    "$PGOKIT" store init "$DB" 2>"$O/init.err"
    check "$L: init migrates $V -> 4" grep -q "migrated from schema version $V to 4" "$O/init.err"
    check_eq "$L: ... every stored row in the flat context, every profile of raw version 1" "0|0|0" \
        "$($q "SELECT count(*) FROM ranges WHERE ctx <> 0")|$($q "SELECT count(*) FROM branches WHERE ctx <> 0")|$($q "SELECT count(*) FROM profiles WHERE raw_version <> 1")"
    check_eq "$L: ... every count row has its profile's build-id key, none left 0" "0|0" \
        "$($q "SELECT (SELECT count(*) FROM ranges x JOIN profiles p ON p.id = x.profile_id WHERE x.bid <> p.bid) + (SELECT count(*) FROM branches x JOIN profiles p ON p.id = x.profile_id WHERE x.bid <> p.bid) + (SELECT count(*) FROM stats x JOIN profiles p ON p.id = x.profile_id WHERE x.bid <> p.bid)")|$($q "SELECT count(*) FROM profiles WHERE bid = 0")"
    check_eq "$L: ... two keys, one per build-id" 2 "$($q "SELECT count(DISTINCT bid) FROM profiles")"
    "$PGOKIT" store pull -q "$DB" --build-id "$A" -o "$O/a.raw" &&
        "$PGOKIT" store pull -q "$DB" --build-id "$A" --job web -o "$O/a-web.raw" &&
        "$PGOKIT" store pull -q "$DB" --build-id "$C" -o "$O/c.raw"
    check "$L: the pulls succeed" test $? -eq 0
    check "$L: ... build-id A: the bytes pulled before the migration" cmp "$O/a.raw" "$T/old$V-a.raw"
    check "$L: ... build-id A, --job web: the same as before" cmp "$O/a-web.raw" "$T/old$V-a-web.raw"
    check "$L: ... build-id C: the same as before" cmp "$O/c.raw" "$T/old$V-c.raw"
    check "$L: ... == pgokit merge of the uploads" cmp "$O/a.raw" "$T/m-a.raw"
    "$PGOKIT" store list "$DB" >"$O/list.txt"
    check "$L: list after the migration: both revisions" \
        bash -c "grep -q '^prog  *$A  *2 ' '$O/list.txt' && grep -q '^prog  *$C  *1 ' '$O/list.txt'"
    "$PGOKIT" store add "$DB" --name prog --host h1 --job web --time 1700000000 "$FX/a1.raw" 2>"$O/dup.err"
    check "$L: an upload stored before the migration is still recognised" grep -q "already stored" "$O/dup.err"
    check "$L: a new upload after the migration" \
        "$PGOKIT" store add -q "$DB" --name prog --host h9 --job web --time 1700010000 "$FX/a2.raw"
    "$PGOKIT" store pull -q "$DB" --build-id "$A" -o "$O/a2.raw"
    "$PGOKIT" merge "$FX/a1.raw" "$FX/a2.raw" "$FX/a2.raw" -o "$O/m-a2.raw"
    check "$L: ... joins the migrated ones in the pull" cmp "$O/a2.raw" "$O/m-a2.raw"
    check "$L: a version-2 upload after the migration" \
        "$PGOKIT" store add -q "$DB" --name prog --host h8 --job web --time 1700020000 "$T/a2v2.raw"
    "$PGOKIT" store pull -q "$DB" --build-id "$A" -o "$O/a3.raw"
    check "$L: ... the pull is version 2, the file merge of all four" cmp "$O/a3.raw" "$T/m-a3.raw"
}

for v in 2 3; do
    cp "$PK_ROOT/tests/fixtures/store_v$v/v$v.db" "$T/v$v.db"
    eval "sq$v() { sqlite3 '$T/v$v.db' \"\$1\"; }"
    migrate_suite sqlite-v$v "$T/v$v.db" sq$v $v
done

if [ -x "${PG_BIN:-/usr/lib/postgresql/15/bin}/initdb" ] && command -v psql >/dev/null; then
    trap 'pg_stop immediate; [ -n "${PK_KEEP_TMP:-}" ] || rm -rf "$T"' EXIT
    chmod 755 "$T"
    if pg_start "$T/pg" fsync=off; then
        for v in 2 3; do
            psql -XAtq -v ON_ERROR_STOP=1 "$PGURL" -c "CREATE DATABASE v$v" &&
                psql -Xq -v ON_ERROR_STOP=1 -o /dev/null "${PGURL%/postgres}/v$v" \
                    -f "$PK_ROOT/tests/fixtures/store_v$v/v$v.pg.sql" 2>"$T/restore$v.err"
            check "postgresql: the version $v dump restores" test $? -eq 0
            eval "pq$v() { psql -XAtq -v ON_ERROR_STOP=1 '${PGURL%/postgres}/v$v' -c \"\$1\"; }"
            migrate_suite postgresql-v$v "${PGURL%/postgres}/v$v" pq$v $v
        done
    else
        fail "start PostgreSQL"
    fi
else
    echo "PostgreSQL server binaries not found: the PostgreSQL half is skipped"
fi
finish
