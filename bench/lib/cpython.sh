# bench/lib/cpython.sh — CPython 3.11 from Debian's sources, for benchmarks
# (sourced by bench/layout_startup.sh and bench/rt_overhead.sh).
#
#   cpython_src WORK
#       prints the unpacked source tree under WORK, fetching it first if needed
#       (apt-get source through the workloads' private deb-src APT
#       configuration; upstream sources, Debian patches not applied).
#   cpython_build DIR CC CFLAGS LDFLAGS [MAKEVAR=VALUE...]
#       builds `python` in DIR (an in-tree copy of the sources; DIR relative
#       to the current directory): configure with CC/CFLAGS/LDFLAGS, then
#       `make python MAKEVAR=VALUE...` (make variables reach the compile or
#       link line only, e.g. EXTRA_CFLAGS=-pg, LIBC=libfoo.a: configure's own
#       test programs stay uninstrumented). A build whose recorded settings
#       match is reused, but `python` is always relinked, so a changed
#       archive named in the make variables is picked up.
# Environment: JOBS (default 2), CPYTHON_SRC (set by cpython_src).

cpython_src() {
    local work=$1
    mkdir -p "$work"
    if ! ls -d "$work"/python3.11-*/ > /dev/null 2>&1; then
        local wl
        wl=$(bash "$ROOT/scripts/workloads.sh" dir)
        [ -f "$wl/apt/apt.conf" ] || { echo "run scripts/workloads.sh obtain first (private APT config)" >&2; return 1; }
        (cd "$work" &&
         APT_CONFIG=$wl/apt/apt.conf apt-get source -qq --download-only python3.11 &&
         dpkg-source -x --skip-patches python3.11_*.dsc > /dev/null) || return 1
    fi
    CPYTHON_SRC=$(ls -d "$work"/python3.11-*/ | head -1)
    CPYTHON_SRC=${CPYTHON_SRC%/}
    echo "$CPYTHON_SRC"
}

cpython_build() {
    local dir=$1 cc=$2 cflags=$3 ldflags=$4
    shift 4
    [ -n "${CPYTHON_SRC:-}" ] || { echo "cpython_build: call cpython_src first" >&2; return 1; }
    local stamp="cc=$cc cflags=$cflags ldflags=$ldflags make=$*"
    # Builds made before stamps existed (layout_startup.sh) are taken as they are.
    if [ -x "$dir/python" ] && { [ ! -f "$dir/.pgokit-build" ] || [ "$(cat "$dir/.pgokit-build")" = "$stamp" ]; }; then
        rm -f "$dir/python"
        (cd "$dir" && make python "$@" > "../${dir##*/}.link.log" 2>&1) ||
            { echo "cpython_build: relink of $dir failed (see ${dir##*/}.link.log)" >&2; return 1; }
        return 0
    fi
    echo "[$(date +%H:%M:%S)] building CPython in $dir ($cc, CFLAGS=$cflags, make $*)" >&2
    rm -rf "$dir"
    cp -a "$CPYTHON_SRC" "$dir"
    (cd "$dir" && CC=$cc CFLAGS=$cflags LDFLAGS=$ldflags ./configure -q --without-ensurepip \
        --disable-test-modules > "../${dir##*/}.configure.log" 2>&1 &&
     make -j"${JOBS:-2}" python "$@" > "../${dir##*/}.make.log" 2>&1) ||
        { echo "cpython_build: build of $dir failed (see ${dir##*/}.make.log)" >&2; return 1; }
    echo "$stamp" > "$dir/.pgokit-build"
}
