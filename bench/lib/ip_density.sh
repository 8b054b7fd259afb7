# ip_density.sh — recording instruction samples at the density of a set of
# cpu-clock recordings (sourced by ip_weighting.sh and ip_generalize.sh,
# which set PGOKIT and die).
#   samples_in FILE...          samples in perf.data files
#   emulated_insns TMP          reads training commands on stdin (one process
#                               each); prints the instructions they retire,
#                               from one emulated IP run each (TMP: a scratch
#                               perf.data path, removed)
#   period_for INSNS SAMPLES    the sample period that gives SAMPLES samples
#                               over INSNS instructions (odd, at least 1001)

# one line per sample: no call chains printed
samples_in() {
  local f n=0
  for f in "$@"; do
    n=$((n + $(perf script -i "$f" -F pid 2>/dev/null | wc -l)))
  done
  echo "$n"
}

emulated_insns() {
  local tmp=$1 cmd insns=0 first=1000003
  while read -r cmd; do
    # shellcheck disable=SC2086
    "$PGOKIT" record -q --emulate --ip --period $first -o "$tmp" -- $cmd </dev/null >/dev/null ||
      die "emulated recording failed on: $cmd"
    insns=$((insns + $(samples_in "$tmp") * first))
    rm -f "$tmp" "$tmp.old"
  done
  echo "$insns"
}

period_for() {
  local p=$(( ($1 / ($2 > 0 ? $2 : 1)) | 1 ))
  [ "$p" -ge 1001 ] || p=1001
  echo "$p"
}
