# lib.sh — shared helpers for the end-to-end test scripts (source it).
# Each script: `source "$(dirname "$0")/../lib.sh"`, calls check/check_eq, and
# ends with `finish`, which prints "<script>: N passed, N failed".
set -u
PK_ROOT=${PK_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
PGOKIT=${PGOKIT:-$PK_ROOT/build/pgokit}
PGOKIT_SAN=${PGOKIT_SAN:-$PK_ROOT/build/san/pgokit}
PK_BUILD=${PK_BUILD:-$PK_ROOT/build}
T=$(mktemp -d "${TMPDIR:-/tmp}/pke2e.XXXXXX")
[ -n "${PK_KEEP_TMP:-}" ] || trap 'rm -rf "$T"' EXIT
_pass=0; _fail=0
_script=$(basename "$0" .sh)

pass() { _pass=$((_pass + 1)); echo "ok: $*"; }
fail() { _fail=$((_fail + 1)); echo "FAIL: $*"; }
# check DESCRIPTION COMMAND...   (passes when the command exits 0)
check() { local d=$1; shift; if "$@"; then pass "$d"; else fail "$d"; fi; }
# check_eq DESCRIPTION EXPECTED ACTUAL
check_eq() { if [ "$2" == "$3" ]; then pass "$1"; else fail "$1: expected '$2', got '$3'"; fi; }
# need TOOL... : skip the whole script (exit 77) when a tool is missing
need() { for t in "$@"; do command -v "$t" >/dev/null 2>&1 || { echo "skipped: $t not installed"; exit 77; }; done; }
finish() { echo "$_script: $_pass passed, $_fail failed"; [ $_fail -eq 0 ]; }
