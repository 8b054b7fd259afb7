#!/usr/bin/env bash
# Fetches and builds the evaluation workloads with the scripts in
# ../shared/workloads, caching them outside the build tree.
#   scripts/workloads.sh dir                      # print the workloads directory
#   scripts/workloads.sh obtain                   # sources + corpus (once)
#   XFLAGS=... scripts/workloads.sh build VARIANT [sqlite lua bzip2 zstd]
#   scripts/workloads.sh run NAME VARIANT         # one run (see shared run.sh)
# Binaries land in $(scripts/workloads.sh dir)/out/VARIANT/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
shared=${PK_SHARED:-$root/../shared}/workloads
W=${PK_WORKLOADS:-${XDG_CACHE_HOME:-$HOME/.cache}/pgokit/workloads}
[ -d "$shared" ] || { echo "workloads.sh: $shared not found (shared/ must sit beside the repo)" >&2; exit 77; }
mkdir -p "$W"
cmd=${1:?usage: workloads.sh dir|obtain|build|run ...}; shift
case $cmd in
  dir) echo "$W" ;;
  obtain)
    cd "$W"
    exec 9>"$W/.lock"; flock 9
    if [ ! -f .obtained ]; then
      command -v dpkg-source >/dev/null || apt-get install -y -qq dpkg-dev >/dev/null
      bash "$shared/obtain.sh" >/dev/null
      touch .obtained
    fi
    if [ ! -f corpus/.done ] && [ -f "$shared/corpus.sh" ]; then
      bash "$shared/corpus.sh" >/dev/null && mkdir -p corpus && touch corpus/.done
    fi ;;
  build)
    "$0" obtain
    cd "$W"; v=${1:?variant}; shift
    exec 9>"$W/.lock-build-$v"; flock 9
    # PK_WORKLOADS_CACHE=1 (tests): skip a workload already built with the same
    # XFLAGS. Off by default: a profile can change under an unchanged flag.
    names=${*:-sqlite lua bzip2 zstd}; todo=()
    for n in $names; do
      stamp="$W/out/$v/.xflags-$n"
      if [ "${PK_WORKLOADS_CACHE:-0}" = 1 ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "${XFLAGS:-}" ]; then
        continue
      fi
      todo+=("$n")
    done
    [ ${#todo[@]} -eq 0 ] && exit 0
    bash "$shared/build.sh" "$v" "${todo[@]}"
    for n in "${todo[@]}"; do printf '%s' "${XFLAGS:-}" > "$W/out/$v/.xflags-$n"; done ;;
  run)
    cd "$W"; bash "$shared/run.sh" "$@" ;;
  *) echo "workloads.sh: unknown command $cmd" >&2; exit 2 ;;
esac
