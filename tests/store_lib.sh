# store_lib.sh — the profile store's end-to-end suite, run on every engine
# (sourced by tests/e2e/store_sqlite.sh and store_postgres.sh after lib.sh).
# store_fixtures builds two revisions of one program and records them;
# store_suite DB QUERYFN runs init/add/list/select/pull/prune, faults and bad
# input against DB, QUERYFN SQL printing one value per line.

store_fixtures() {
    F=$T/fx
    mkdir -p "$F/r1" "$F/r2"
    local src=$PK_ROOT/tests/programs/record_exact.c
    clang-19 -O2 -g -fno-omit-frame-pointer -o "$F/r1/prog" "$src" &&
        clang-19 -O1 -g -fno-omit-frame-pointer -o "$F/r2/prog" "$src" || { fail "build fixtures"; finish; exit 1; }
    R1=$(readelf -n "$F/r1/prog" | awk '/Build ID/ {print $3}')
    R2=$(readelf -n "$F/r2/prog" | awk '/Build ID/ {print $3}')
    "$PGOKIT" record --emulate -q --period 4001 -o "$F/a1.data" -- "$F/r1/prog" 200000 >/dev/null &&
        "$PGOKIT" record --emulate -q --period 3001 -o "$F/a2.data" -- "$F/r1/prog" 150000 >/dev/null &&
        "$PGOKIT" record --emulate --ip -q -o "$F/ip.data" -- "$F/r1/prog" 100000 >/dev/null &&
        "$PGOKIT" convert "$F/ip.data" -o "$F/ip.pb.gz" 2>/dev/null &&
        "$PGOKIT" record --emulate -q --period 4001 -o "$F/c1.data" -- "$F/r2/prog" 20000 >/dev/null &&
        "$PGOKIT" record --emulate -q --period 4001 -o "$F/c2.data" -- "$F/r2/prog" 300000 >/dev/null ||
        { fail "record fixtures"; finish; exit 1; }
    # the same inputs as raw profiles, the way a file merge sees them
    local x
    for x in a1 a2 c1 c2; do
        local bin=$F/r1/prog; [[ $x == c* ]] && bin=$F/r2/prog
        "$PGOKIT" profgen -q --binary "$bin" --perf "$F/$x.data" --raw-only -o "$F/$x.raw" || fail "raw $x"
    done
    # and as version-1 raw profiles, as pgokit wrote them before version 2
    for x in a1 a2; do
        "$PGOKIT" profgen -q --binary "$F/r1/prog" --perf "$F/$x.data" --raw-only --raw-version 1 -o "$F/${x}v1.raw" ||
            fail "raw $x (version 1)"
    done
    "$PGOKIT" profgen -q --binary "$F/r1/prog" --pprof "$F/ip.pb.gz" --raw-only -o "$F/ip.raw" || fail "raw ip"
}

# store_suite LABEL DB QUERYFN [PGCTL]: results in $T/LABEL
store_suite() {
    local L=$1 DB=$2 q=$3 O=$T/$1
    mkdir -p "$O"
    st() { "$PGOKIT" store "$@"; }
    nprof() { $q "SELECT count(*) FROM profiles"; }

    check "$L: init" st init "$DB" -q
    st init "$DB" 2>"$O/init2.err"
    check "$L: init again: nothing to do" grep -q "at schema version 4" "$O/init2.err"

    # uploads of revision 1: LBR perf.data, another host, IP samples as pprof
    check "$L: add perf.data" st add "$DB" -q --binary "$F/r1/prog" --host h1 --job web --time 3d "$F/a1.data"
    check "$L: add raw profile" st add "$DB" -q --binary "$F/r1/prog" --host h2 --job batch --time 2d "$F/a2.raw"
    check "$L: add pprof (IP samples)" st add "$DB" -q --binary "$F/r1/prog" --host h3 --job web --time 2d "$F/ip.pb.gz"
    check_eq "$L: three profiles" 3 "$(nprof)"
    st add "$DB" --binary "$F/r1/prog" --host h1 --job web --time 1h "$F/a1.data" 2>"$O/dup.err"
    check "$L: the same upload again exits 0" test $? -eq 0
    check "$L: ... and says it is stored" grep -q "already stored" "$O/dup.err"
    check_eq "$L: ... and adds nothing" 3 "$(nprof)"

    st list "$DB" >"$O/list.txt"
    check "$L: list: revision 1 with 3 profiles, 3 hosts" \
        bash -c "grep -E '^prog +$R1 +3 +3 ' '$O/list.txt' >/dev/null"
    check "$L: ... a pull of it makes AutoFDO, probe and CSSPGO profiles (the IP samples' stacks)" \
        bash -c "grep -E '^prog +$R1 .* autofdo,probe,csspgo; from IP samples and LBR$' '$O/list.txt' >/dev/null"

    # revision 2: newer, but few samples
    check "$L: add revision 2" st add "$DB" -q --binary "$F/r2/prog" --host h4 --job web --time 1d "$F/c1.data"
    check_eq "$L: select: the newer revision has < 20 % of the samples: revision 1" "$R1" \
        "$(st select "$DB" --binary prog)"
    check_eq "$L: select --threshold 1: revision 2" "$R2" "$(st select "$DB" --binary prog --threshold 1)"
    check_eq "$L: select --since 30h: only revision 2 is left" "$R2" "$(st select "$DB" --binary prog --since 30h)"
    st select "$DB" --binary nosuch >/dev/null 2>"$O/sel.err"
    check "$L: select of an unknown binary fails" test $? -eq 1
    # pulls == file merges, byte for byte
    check "$L: pull revision 1" st pull "$DB" -q --build-id "$R1" -o "$O/p1.raw"
    "$PGOKIT" merge "$F/a1.raw" "$F/a2.raw" "$F/ip.raw" -o "$O/m1.raw"
    check "$L: pull == pgokit merge of the raw files (cmp)" cmp "$O/p1.raw" "$O/m1.raw"
    "$PGOKIT" profgen -q --binary "$F/r1/prog" --raw "$F/a1.raw" --raw "$F/a2.raw" --raw "$F/ip.raw" --raw-only \
        -o "$O/g1.raw"
    check "$L: pull == profgen --raw ... --raw-only (cmp)" cmp "$O/p1.raw" "$O/g1.raw"
    "$PGOKIT" profgen -q --binary "$F/r1/prog" --raw "$O/p1.raw" --format text -o "$O/p1.prof" &&
        "$PGOKIT" profgen -q --binary "$F/r1/prog" --raw "$O/m1.raw" --format text -o "$O/m1.prof"
    check "$L: profgen of the pull == profgen of the merge" cmp "$O/p1.prof" "$O/m1.prof"
    check "$L: ... and it has samples" grep -qE '^main:[1-9]' "$O/p1.prof"
    check "$L: pull --job web" st pull "$DB" -q --build-id "$R1" --job web -o "$O/pw.raw"
    "$PGOKIT" merge "$F/a1.raw" "$F/ip.raw" -o "$O/mw.raw"
    check "$L: ... == merge of the web uploads" cmp "$O/pw.raw" "$O/mw.raw"
    check "$L: pull --since 60h" st pull "$DB" -q --build-id "${R1^^}" --since 60h -o "$O/ps.raw"
    "$PGOKIT" merge "$F/a2.raw" "$F/ip.raw" -o "$O/ms.raw"
    check "$L: ... == merge of the last 60 hours' uploads (upper-case build-id accepted)" cmp "$O/ps.raw" "$O/ms.raw"
    st pull "$DB" -q --build-id 00112233 -o "$O/none.raw" 2>"$O/none.err"
    check "$L: pull of an unknown build-id fails" test $? -eq 1
    check "$L: ... naming it, writing nothing" bash -c "grep -q 'no profiles of build-id 00112233' '$O/none.err' && ! test -e '$O/none.raw'"

    # bound parameters: quotes, semicolons, SQL in names
    local evil="h'x\"; DROP TABLE profiles; --" evilj="j'); DELETE FROM ranges; -- \\ %"
    check "$L: add with quotes and semicolons in host and job" \
        st add "$DB" -q --binary "$F/r1/prog" --host "$evil" --job "$evilj" --time 2d "$F/a1.raw"
    check_eq "$L: ... stored as given" "$evil|$evilj" "$($q "SELECT host || '|' || job FROM profiles WHERE id = (SELECT max(id) FROM profiles)")"
    check "$L: ... pull --job with that name" st pull "$DB" -q --build-id "$R1" --job "$evilj" -o "$O/pe.raw"
    "$PGOKIT" merge "$F/a1.raw" -o "$O/me.raw"
    check "$L: ... gives exactly that upload" cmp "$O/pe.raw" "$O/me.raw"
    check_eq "$L: ... every table intact" 5 "$(nprof)"
    # control characters pass too (a NUL cannot: argv strings end at the first NUL)
    check "$L: add with a newline, a tab and \\x01 in the host name" \
        st add "$DB" -q --host $'nl\ntab\t\x01end' --job ctl --time 2d "$F/a1.raw"
    check_eq "$L: ... stored as given (11 characters)" 11 "$($q "SELECT length(host) FROM profiles WHERE job = 'ctl'")"
    $q "DELETE FROM ranges WHERE profile_id IN (SELECT id FROM profiles WHERE job = 'ctl')" >/dev/null
    $q "DELETE FROM branches WHERE profile_id IN (SELECT id FROM profiles WHERE job = 'ctl')" >/dev/null
    $q "DELETE FROM stats WHERE profile_id IN (SELECT id FROM profiles WHERE job = 'ctl')" >/dev/null
    $q "DELETE FROM profiles WHERE job = 'ctl'" >/dev/null

    # bad input leaves the database unchanged
    local before; before=$($q "SELECT count(*) || '/' || (SELECT count(*) FROM ranges) FROM profiles")
    cp "$F/a2.raw" "$O/corrupt.raw"
    printf '\x55' | dd of="$O/corrupt.raw" bs=1 seek=200 conv=notrunc 2>/dev/null
    st add "$DB" --binary "$F/r1/prog" --host bad "$O/corrupt.raw" 2>"$O/corrupt.err"
    check "$L: corrupt raw profile: exit 1" test $? -eq 1
    check "$L: ... the message names the file and the damage" \
        bash -c "grep -q 'corrupt.raw.*checksum mismatch' '$O/corrupt.err'"
    st add "$DB" --binary "$F/r1/prog" --host bad "$F/c1.raw" 2>"$O/other.err"
    check "$L: raw profile of another build-id: exit 1" test $? -eq 1
    check "$L: ... naming the file and both build-ids" \
        bash -c "grep -q 'c1.raw.*$R1.*$R2\|c1.raw.*$R2.*$R1' '$O/other.err'"
    st add "$DB" --build-id "$R1" --host bad "$F/c1.raw" 2>"$O/other2.err"
    check "$L: --build-id refuses a raw profile of another build-id" \
        bash -c "grep -q 'c1.raw: build-id $R2, not the expected $R1' '$O/other2.err'"
    head -c 30000 "$F/a2.data" >"$O/trunc.data"
    st add "$DB" --binary "$F/r1/prog" --host bad "$O/trunc.data" 2>"$O/trunc.err"
    check "$L: truncated perf.data: exit 1, the file named" bash -c "test $? -eq 1 && grep -q 'trunc.data' '$O/trunc.err'"
    st add "$DB" --host bad "$F/r1/prog" 2>"$O/elf.err"
    check "$L: an ELF file as input: exit 1, named" bash -c "grep -q 'r1/prog: .*ELF' '$O/elf.err'"
    check_eq "$L: the database is unchanged by bad input" "$before" \
        "$($q "SELECT count(*) || '/' || (SELECT count(*) FROM ranges) FROM profiles")"

    # a writer killed mid-transaction (every row sent, nothing committed)
    PGOKIT_STORE_TEST_HOOK=kill:0 st add "$DB" -q --binary "$F/r1/prog" --host killed "$F/a2.raw" 2>/dev/null
    check "$L: writer killed before commit dies by SIGKILL" test $? -eq 137
    check_eq "$L: ... and leaves no rows" "0/$before" \
        "$($q "SELECT count(*) FROM profiles WHERE host = 'killed'")/$($q "SELECT count(*) || '/' || (SELECT count(*) FROM ranges) FROM profiles")"
    check "$L: ... the retry succeeds" st add "$DB" -q --binary "$F/r1/prog" --host killed "$F/a2.raw"
    check_eq "$L: ... once" 1 "$($q "SELECT count(*) FROM profiles WHERE host = 'killed'")"

    # 8 concurrent writers lose nothing
    local pids=() i
    for i in 1 2 3 4 5 6 7 8; do
        st add "$DB" -q --host "c$i" --job conc --time 1d "$F/a1.raw" 2>"$O/conc$i.err" & pids+=($!)
    done
    local ok=0
    for i in "${pids[@]}"; do wait "$i" && ok=$((ok + 1)); done
    check_eq "$L: 8 concurrent writers succeed" 8 "$ok"
    local one; one=$($q "SELECT sum(n) FROM ranges WHERE profile_id = (SELECT min(id) FROM profiles WHERE host = 'h1')")
    check_eq "$L: ... sum of their range counts is 8 x one upload's" "$((8 * one))" \
        "$($q "SELECT sum(r.n) FROM ranges r JOIN profiles p ON p.id = r.profile_id WHERE p.job = 'conc'")"

    # retention
    local n0; n0=$(nprof)
    st prune "$DB" --before 30h 2>"$O/prune.err"
    check "$L: prune --before 30h" grep -qE "pruned [1-9][0-9]* profiles" "$O/prune.err"
    check_eq "$L: ... leaves the profiles of the last 30 hours" \
        "$($q "SELECT count(*) FROM profiles WHERE ts >= $(($(date +%s) - 30 * 3600 + 60))")" "$(nprof)"
    check_eq "$L: ... and no orphan rows" 0 \
        "$($q "SELECT count(*) FROM ranges WHERE profile_id NOT IN (SELECT id FROM profiles)")"
    check "$L: ... fewer profiles than before" test "$(nprof)" -lt "$n0"

    # schema versions
    $q "UPDATE schema_version SET version = 99" >/dev/null
    st list "$DB" >/dev/null 2>"$O/v99.err"
    check "$L: unknown schema version: exit 1" test $? -eq 1
    check "$L: ... named" grep -q "unknown schema version 99" "$O/v99.err"
    st init "$DB" 2>/dev/null
    check "$L: ... init refuses to touch it" test $? -eq 1
    $q "UPDATE schema_version SET version = 4" >/dev/null
    # an older schema, migrated in place. Versions before 4 held version-1
    # (flat) uploads only: the store is cut down to such uploads, then
    # version 4's additions and the build-id key are dropped (version 2 is
    # version 4 without them; the rows written so far stay)
    st add "$DB" --host v1 --job v1 --time 1h "$F/a1v1.raw" "$F/a2v1.raw" 2>"$O/v1.err"
    check "$L: an upload of version-1 raw profiles" test $? -eq 0
    check_eq "$L: ... their lack of calling contexts is said once" 1 "$(grep -c 'version-1 raw profile' "$O/v1.err")"
    local tb
    for tb in ranges branches stats ip_hits ip_calls ip_unplaced; do
        $q "DELETE FROM $tb WHERE profile_id IN (SELECT id FROM profiles WHERE raw_version <> 1)" >/dev/null
    done
    $q "DELETE FROM profiles WHERE raw_version <> 1" >/dev/null
    st pull "$DB" -q --build-id "$R1" -o "$O/premig1.raw" || fail "$L: pull before the migration test"
    "$PGOKIT" merge "$F/a1v1.raw" "$F/a2v1.raw" -o "$O/premig1.m.raw"
    check "$L: ... the pull of it is version 1: what merging the files writes" cmp "$O/premig1.raw" "$O/premig1.m.raw"
    to_v3() {
        $q "UPDATE schema_version SET version = 3" >/dev/null
        for tb in contexts ip_hits ip_calls ip_unplaced; do $q "DROP TABLE $tb" >/dev/null; done
        for tb in raw_version ncontexts nstacked nip; do $q "ALTER TABLE profiles DROP COLUMN $tb" >/dev/null; done
        for tb in ranges branches; do $q "ALTER TABLE $tb DROP COLUMN ctx" >/dev/null; done
    }
    to_v3
    $q "UPDATE schema_version SET version = 2" >/dev/null
    for tb in profiles ranges branches stats; do $q "ALTER TABLE $tb DROP COLUMN bid" >/dev/null; done
    st list "$DB" >/dev/null 2>"$O/v2.err"
    check "$L: an older schema is refused with a hint" grep -q "older than 4: migrate it with" "$O/v2.err"
    st init "$DB" 2>"$O/mig.err"
    check "$L: init migrates 2 -> 4" grep -q "migrated from schema version 2 to 4" "$O/mig.err"
    check_eq "$L: ... every row has its profile's build-id key, the flat context, raw version 1" 0 \
        "$($q "SELECT (SELECT count(*) FROM ranges r JOIN profiles p ON p.id = r.profile_id WHERE r.bid <> p.bid OR r.ctx <> 0) + (SELECT count(*) FROM branches r JOIN profiles p ON p.id = r.profile_id WHERE r.bid <> p.bid OR r.ctx <> 0) + (SELECT count(*) FROM stats r JOIN profiles p ON p.id = r.profile_id WHERE r.bid <> p.bid) + (SELECT count(*) FROM profiles WHERE bid = 0 OR raw_version <> 1)")"
    check "$L: ... and it works again" st list "$DB" >/dev/null
    st pull "$DB" -q --build-id "$R1" -o "$O/postmig1.raw"
    check "$L: ... pulls the same bytes as before the migration" cmp "$O/premig1.raw" "$O/postmig1.raw"
    to_v3
    $q "UPDATE schema_version SET version = 1" >/dev/null
    $q "DROP INDEX profiles_bin_ts" >/dev/null
    for tb in profiles ranges branches stats; do $q "ALTER TABLE $tb DROP COLUMN bid" >/dev/null; done
    st init "$DB" 2>"$O/mig1.err"
    check "$L: init migrates 1 -> 4" grep -q "migrated from schema version 1 to 4" "$O/mig1.err"
    st pull "$DB" -q --build-id "$R1" -o "$O/postmig1b.raw"
    check "$L: ... the same pull again" cmp "$O/premig1.raw" "$O/postmig1b.raw"
    check "$L: ... and a version-2 upload joins them" st add "$DB" -q --host v2 --job v1 --time 1h "$F/a1.raw"
}
