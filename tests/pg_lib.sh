# pg_lib.sh — a throwaway PostgreSQL 15 server for tests and benchmarks
# (source it). pg_start DIR [extra postgres -c settings...] runs initdb and
# pg_ctl in DIR (created; owned by an unprivileged user when run as root,
# since PostgreSQL refuses to run as root), listening on a free loopback port
# with its unix socket in DIR; sets PGURL. pg_stop stops it (bounded wait);
# pg_restart stops and starts the same cluster. Several servers at once:
# pg_save NAME after each pg_start; pg_use NAME makes a saved one current
# again (PG_DIR, PG_PORT, PG_OPTS, PGURL, for pg_stop, pg_launch,
# pg_restart); pg_stop_all [MODE] stops every saved one. Exits 77 (skip)
# when the server binaries are absent.
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}

pg_need() {
    [ -x "$PG_BIN/initdb" ] && [ -x "$PG_BIN/pg_ctl" ] ||
        { echo "skipped: PostgreSQL server binaries not found in $PG_BIN (bash scripts/setup.sh installs postgresql-15)"; exit 77; }
    command -v psql >/dev/null || { echo "skipped: psql not installed"; exit 77; }
}

pg_as() { # runs a server binary as the cluster's owner
    if [ "$(id -u)" -eq 0 ]; then runuser -u "$PG_USER" -- "$@"; else "$@"; fi
}

pg_free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

pg_start() {
    PG_DIR=$1; shift
    PG_OPTS=("$@")
    PG_USER=$(id -un)
    mkdir -p "$PG_DIR"
    if [ "$(id -u)" -eq 0 ]; then
        PG_USER=nobody
        chown "$PG_USER" "$PG_DIR"
        chmod 755 "$(dirname "$PG_DIR")" 2>/dev/null  # the owner must reach its directory
    fi
    pg_as "$PG_BIN/initdb" -D "$PG_DIR/data" -U pgokit --auth=trust -E UTF8 --no-sync >"$PG_DIR/initdb.log" 2>&1 ||
        { echo "initdb failed:"; cat "$PG_DIR/initdb.log"; return 1; }
    PG_PORT=$(pg_free_port)
    pg_launch
}

pg_launch() {
    local o="-h 127.0.0.1 -p $PG_PORT -k $PG_DIR" s
    for s in "${PG_OPTS[@]}"; do o+=" -c $s"; done
    pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -t 60 -o "$o" start >/dev/null ||
        { echo "pg_ctl start failed:"; tail -n 20 "$PG_DIR/server.log"; return 1; }
    PGURL="postgresql://pgokit@127.0.0.1:$PG_PORT/postgres"
}

pg_stop() { # MODE: fast (default) or immediate
    [ -n "${PG_DIR:-}" ] && [ -f "$PG_DIR/data/postmaster.pid" ] || return 0
    pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m "${1:-fast}" -w -t 60 stop >/dev/null 2>&1
}

pg_restart() { pg_stop "${1:-fast}"; pg_launch; }

declare -gA _PG_SAVED_DIR=() _PG_SAVED_PORT=() _PG_SAVED_OPTS=()
pg_save() {
    _PG_SAVED_DIR[$1]=$PG_DIR
    _PG_SAVED_PORT[$1]=$PG_PORT
    _PG_SAVED_OPTS[$1]="${PG_OPTS[*]}" # settings are name=value words
}

pg_use() {
    PG_DIR=${_PG_SAVED_DIR[$1]}
    PG_PORT=${_PG_SAVED_PORT[$1]}
    read -r -a PG_OPTS <<<"${_PG_SAVED_OPTS[$1]}"
    PGURL="postgresql://pgokit@127.0.0.1:$PG_PORT/postgres"
}

pg_stop_all() {
    local n
    for n in "${!_PG_SAVED_DIR[@]}"; do
        pg_use "$n"
        pg_stop "${1:-fast}"
    done
}
