# variants.sh — the scoreboard's stages (sourced by scoreboard.sh).
# Training binaries: base (-O2 -g), probe (+ -fpseudo-probe-for-profiling),
# instr-gen (+ -fprofile-instr-generate). Every sample profile of a kind comes
# from the same emulated recording: AutoFDO profiles from the recording of
# `base`, probe/CSSPGO profiles from the recording of `probe`.
# Debug info is DWARF 4 throughout: valgrind 3.19 and create_llvm_prof cannot
# read clang-19's default DWARF 5; the version does not change code generation.

SB_DEBUG="-gdwarf-4"
# name | training binary | flags added to -O2 -g when building with the profile
SB_VARIANTS=(
  "base|-|"
  "probe|-|-fpseudo-probe-for-profiling"
  "instr|instr-gen|-fprofile-instr-use=@P"
  "afdo-pgokit|base|-fprofile-sample-use=@P"
  "afdo-llvm|base|-fprofile-sample-use=@P"
  "afdo-cfp|base|-fprofile-sample-use=@P"
  "probe-pgokit|probe|-fpseudo-probe-for-profiling -fprofile-sample-use=@P"
  "probe-llvm|probe|-fpseudo-probe-for-profiling -fprofile-sample-use=@P"
  "cs-pgokit|probe|-fpseudo-probe-for-profiling -fprofile-sample-use=@P"
  "cs-llvm|probe|-fpseudo-probe-for-profiling -fprofile-sample-use=@P"
)

sb_variant_names() {
  local v
  for v in "${SB_VARIANTS[@]}"; do
    local n=${v%%|*}
    # an anchor whose generator failed is reported as failed, not measured
    [ -n "${SB_DIR:-}" ] && [ -f "$SB_DIR/gen/$n.failed" ] && continue
    if [ -n "${only_variants:-}" ] && [[ ",$only_variants," != *",$n,"* ]] && [ "$n" != base ]; then continue; fi
    echo "$n"
  done
}
sb_variant_field() { # name field(2|3)
  local v; for v in "${SB_VARIANTS[@]}"; do
    [ "${v%%|*}" = "$1" ] && { echo "$v" | cut -d'|' -f"$2"; return; }
  done
}
sb_bin() { echo "$WL_DIR/out/sb-$2/$(wl_bin "$1")"; } # workload variant

sb_build() { # workload variant xflags
  local w=$1 v=$2 x=$3
  log "build $w/$v ($x)"
  XFLAGS="$SB_DEBUG $x" "$PK_ROOT/scripts/workloads.sh" build "sb-$v" "$w" >&2 \
    || die "$w/$v: build failed"
  [ -x "$(sb_bin "$w" "$v")" ] || die "$w/$v: no binary after build"
}

sb_stage_build() { # workload dir
  local w=$1 D=$2
  sb_build "$w" base ""
  sb_build "$w" probe "-fpseudo-probe-for-profiling"
  sb_build "$w" instr-gen "-fprofile-instr-generate"
  wl_prepare "$w" "$WL_DIR/out/sb-base"
  # instrumentation PGO profile: the upper bound
  rm -rf "$D/prof/instr-raw"; mkdir -p "$D/prof/instr-raw"
  local cmd
  while read -r cmd; do
    LLVM_PROFILE_FILE="$D/prof/instr-raw/%p.profraw" bash -c "$cmd" >/dev/null || die "$w: instrumented training run failed: $cmd"
  done < <(wl_train "$w" "$WL_DIR/out/sb-instr-gen")
  llvm-profdata-19 merge -o "$D/prof/instr.profdata" "$D/prof/instr-raw"/*.profraw || die "$w: llvm-profdata merge failed"
}

sb_stage_record() { # workload dir: one emulated recording per training command and kind
  local w=$1 D=$2 kind i cmd
  rm -f "$D"/rec/*
  for kind in base probe; do
    i=0
    while read -r cmd; do
      i=$((i + 1))
      log "record $w/$kind #$i: $cmd"
      # shellcheck disable=SC2086
      "$PGOKIT" record -q -o "$D/rec/$kind-$i.data" --exact-counts "$D/rec/$kind-$i.exact" -- $cmd >/dev/null \
        || die "$w/$kind: pgokit record failed on: $cmd"
      perf script --show-mmap-events -F ip,brstack -i "$D/rec/$kind-$i.data" > "$D/rec/$kind-$i.script" 2>/dev/null \
        || die "$w/$kind: perf script failed"
    done < <(wl_train "$w" "$WL_DIR/out/sb-$kind")
  done
}

# Runs a generator under /usr/bin/time, keeping seconds and peak RSS (KiB).
sb_timed() { # name dir cmd...
  local name=$1 D=$2; shift 2
  log "profile $name"
  /usr/bin/time -f "%e %M" -o "$D/gen/$name.time" "$@" >"$D/gen/$name.log" 2>&1 \
    || { tail -n 20 "$D/gen/$name.log" >&2; die "$name: generator failed"; }
}

# Anchors (llvm-profgen, create_llvm_prof) may fail on real programs: that
# is recorded as a FAILED row with the reason, and the run goes on. A pgokit
# failure stops the run.
sb_anchor() { # name dir cmd...
  local name=$1 D=$2; shift 2
  rm -f "$D/gen/$name.failed"
  if ! ( "$@" ); then
    echo "generator failed: $(tail -n 1 "$D/gen/$name.log" 2>/dev/null | tr -cd '[:print:]' | cut -c1-160)" > "$D/gen/$name.failed"
    log "ANCHOR FAILED: $name: $(cat "$D/gen/$name.failed")"
    return 1
  fi
}

# A profile must exist, parse, and hold samples.
sb_check_profile() { # name file
  local out nf maxc
  out=$(llvm-profdata-19 show --sample --detailed-summary "$2" 2>&1) || die "$1: llvm-profdata cannot read $2: $(tail -n 2 <<<"$out")"
  nf=$(sed -n 's/^Total functions: *\([0-9]*\).*/\1/p' <<<"$out" | head -n 1)
  maxc=$(sed -n 's/^Maximum block count: *\([0-9]*\).*/\1/p' <<<"$out" | head -n 1)
  [ -n "$nf" ] && [ "$nf" -gt 0 ] && [ -n "$maxc" ] && [ "$maxc" -gt 0 ] ||
    die "$1: profile $2 is empty (functions '${nf:-none}', max block count '${maxc:-none}')"
}

sb_stage_profiles() { # workload dir
  local w=$1 D=$2 bin f
  local base_bin probe_bin
  base_bin=$(sb_bin "$w" base); probe_bin=$(sb_bin "$w" probe)
  local base_data=() probe_data=() base_scripts=() probe_scripts=()
  for f in "$D"/rec/base-*.data; do base_data+=(--perf "$f"); done
  for f in "$D"/rec/probe-*.data; do probe_data+=(--perf "$f"); done
  for f in "$D"/rec/base-*.script; do base_scripts+=("$f"); done
  for f in "$D"/rec/probe-*.script; do probe_scripts+=("$f"); done
  [ ${#base_scripts[@]} -gt 0 ] || die "$w: no recordings (run the record stage)"
  cat "${base_scripts[@]}" > "$D/rec/all-base.script"
  cat "${probe_scripts[@]}" > "$D/rec/all-probe.script"

  sb_timed afdo-pgokit "$D" "$PGOKIT" profgen -q --binary "$base_bin" "${base_data[@]}" \
    -o "$D/prof/afdo-pgokit.prof" --format extbinary
  sb_anchor afdo-llvm "$D" sb_timed afdo-llvm "$D" llvm-profgen-19 --binary "$base_bin" \
    --perfscript "$D/rec/all-base.script" --ignore-stack-samples -o "$D/prof/afdo-llvm.prof" || true
  # create_llvm_prof reads perf.data itself, one file per run: merge afterwards
  # (text: its binary writer fails on SQLite with "Truncated function name table")
  local parts=() i=0 cfp_ok=1
  for f in "$D"/rec/base-*.data; do
    i=$((i + 1))
    sb_anchor afdo-cfp "$D" sb_timed "afdo-cfp-$i" "$D" create_llvm_prof --binary="$base_bin" --profile="$f" \
      --out="$D/prof/afdo-cfp-$i.prof" --format=text || { cfp_ok=0; break; }
    parts+=("$D/prof/afdo-cfp-$i.prof")
  done
  if [ $cfp_ok = 1 ]; then
    if llvm-profdata-19 merge --sample --extbinary -o "$D/prof/afdo-cfp.prof" "${parts[@]}" > "$D/gen/afdo-cfp.log" 2>&1; then
      python3 "$PK_ROOT/bench/lib/sumtime.py" "$D/gen" afdo-cfp "$i"
    else
      echo "its profile is unreadable: $(head -n 1 "$D/gen/afdo-cfp.log" | tr -cd '[:print:]' | cut -c1-160)" > "$D/gen/afdo-cfp.failed"
      log "ANCHOR FAILED: afdo-cfp: $(cat "$D/gen/afdo-cfp.failed")"
    fi
  fi

  sb_timed probe-pgokit "$D" "$PGOKIT" profgen -q --binary "$probe_bin" "${probe_data[@]}" \
    --ignore-stack-samples -o "$D/prof/probe-pgokit.prof" --format extbinary
  sb_timed cs-pgokit "$D" "$PGOKIT" profgen -q --binary "$probe_bin" "${probe_data[@]}" \
    -o "$D/prof/cs-pgokit.prof" --format extbinary
  sb_anchor probe-llvm "$D" sb_timed probe-llvm "$D" llvm-profgen-19 --binary "$probe_bin" \
    --perfscript "$D/rec/all-probe.script" --ignore-stack-samples -o "$D/prof/probe-llvm.prof" || true
  sb_anchor cs-llvm "$D" sb_timed cs-llvm "$D" llvm-profgen-19 --binary "$probe_bin" \
    --perfscript "$D/rec/all-probe.script" -o "$D/prof/cs-llvm.prof" || true
  for f in afdo-pgokit afdo-llvm afdo-cfp probe-pgokit probe-llvm cs-pgokit cs-llvm; do
    [ -f "$D/gen/$f.failed" ] || sb_check_profile "$w/$f" "$D/prof/$f.prof"
  done
  sb_quality "$w" "$D"
}

# Profile quality: block overlap of each profile against the exact counts of
# the same training run (CSSPGO paper, §IV-C), at the profile's granularity.
sb_quality() { # workload dir
  local w=$1 D=$2 f kind exact=() out
  for f in afdo-pgokit afdo-llvm afdo-cfp probe-pgokit probe-llvm cs-pgokit cs-llvm; do
    [ -f "$D/gen/$f.failed" ] && continue
    case $f in afdo-*) kind=base ;; *) kind=probe ;; esac
    exact=(); for e in "$D"/rec/$kind-*.exact; do exact+=(--exact "$e"); done
    out=$("$PGOKIT" overlap "${exact[@]}" --binary "$(sb_bin "$w" "$kind")" "$D/prof/$f.prof") \
      || die "$w/$f: block overlap against the exact counts failed"
    sed -n 's/.*block overlap \([0-9.]*\).*/\1/p' <<<"$out" > "$D/gen/$f.quality"
    log "quality $f: $(cat "$D/gen/$f.quality")"
  done
}

sb_stage_variants() { # workload dir: build every profile-use variant
  local w=$1 D=$2 v flags
  for v in $(sb_variant_names); do
    case $v in base|probe) continue ;; esac
    flags=$(sb_variant_field "$v" 3)
    local prof="$D/prof/$v.prof"; [ "$v" = instr ] && prof="$D/prof/instr.profdata"
    [ -s "$prof" ] || die "$w/$v: profile $prof missing (run the profiles stage)"
    sb_build "$w" "$v" "${flags//@P/$prof}"
    # An ignored profile leaves the code unchanged: refuse to report it.
    if cmp -s <(objdump -d --no-show-raw-insn "$(sb_bin "$w" base)" | tail -n +3) \
              <(objdump -d --no-show-raw-insn "$(sb_bin "$w" "$v")" | tail -n +3); then
      die "$w/$v: code identical to the baseline: the profile was ignored"
    fi
  done
}

sb_stage_measure() { # workload dir reps
  local w=$1 D=$2 reps=$3 r v names=() cmd
  mapfile -t names < <(sb_variant_names)
  : > "$D/meas/times.tsv"
  cut -d' ' -f1-3 /proc/loadavg > "$D/meas/load-before.txt"
  log "measure $w: ${#names[@]} variants x $reps interleaved rounds"
  for ((r = 0; r < reps; r++)); do
    # rotate the order each round so no variant always runs right after another
    local n=${#names[@]} k
    for ((k = 0; k < n; k++)); do
      v=${names[$(((k + r) % n))]}
      cmd=$(wl_measure "$w" "$WL_DIR/out/sb-$v")
      /usr/bin/time -f "%e %U %S" -o "$D/meas/.t" bash -c "$cmd" >/dev/null 2>&1 || die "$w/$v: measured run failed"
      read -r e u s < "$D/meas/.t"
      echo -e "$r\t$v\t$e\t$u\t$s" >> "$D/meas/times.tsv"
    done
  done
  rm -f "$WL_DIR"/corpus/.m.*
  cut -d' ' -f1-3 /proc/loadavg > "$D/meas/load-after.txt"
  log "instruction counts (cachegrind) and .text sizes for $w"
  : > "$D/meas/counts.tsv"
  for v in "${names[@]}"; do
    local bin; bin=$(sb_bin "$w" "$v")
    local text; text=$(size -A "$bin" | awk '$1 == ".text" {print $2}')
    echo -e "$v\t$(wl_count "$w" "$WL_DIR/out/sb-$v")\t$text"
  done | xargs -P 2 -d '\n' -n 1 bash -c '
      IFS=$'"'"'\t'"'"' read -r v cmd text <<<"$0"
      ir=$(valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null $cmd 2>&1 >/dev/null | sed -n "s/.*I *refs: *\([0-9,]*\).*/\1/p" | tr -d ,)
      echo -e "$v\t${ir:-NA}\t$text"' >> "$D/meas/counts.tsv"
  grep -q NA "$D/meas/counts.tsv" && die "$w: cachegrind failed for a variant: $(grep NA "$D/meas/counts.tsv")"
  return 0
}
