# variants.sh — the scoreboard's stages (sourced by scoreboard.sh).
# Training binaries: afdo (-O2 -g + SB_AFDO_FLAGS), probe (+
# -fpseudo-probe-for-profiling), instr-gen (+ -fprofile-instr-generate); base
# (-O2 -g) is the reference every variant is measured against. Every sample
# profile of a kind comes from the same emulated recording: AutoFDO profiles
# from the recording of `afdo`, probe/CSSPGO profiles from the recording of
# `probe`.
# Debug info is DWARF 4 throughout: valgrind 3.19 and create_llvm_prof cannot
# read clang-19's default DWARF 5; the version does not change code generation.

SB_DEBUG="-gdwarf-4"
# AutoFDO's profiled build and profile-use builds, as clang's manual asks
# for sampling profilers: discriminators tell the blocks of a source line
# apart (without them they share one count; AutoFDO from LBR then gained
# 2.7 points less on SQLite, for llvm-profgen-19 as for pgokit:
# bench/afdo_debug_info.sh), unique names tell static functions apart.
SB_AFDO_FLAGS="-fdebug-info-for-profiling -funique-internal-linkage-names"
# Extra flags of AutoFDO's profile-use builds (environment; default none,
# clang-19's defaults). SB_AFDO_USE=-fsample-profile-use-profi infers their
# block counts with profi, as clang does by default from version 21 (clang-19
# applies profi to probe-based profiles on its own, not to line-based ones).
# Measured on seven programs it is no better on the whole, so the scoreboard
# keeps clang-19's behaviour: from LBR it gained bzip2 3.0 points but cost
# Duktape 2.0, Lua 1.9 and tcc 0.5; from IP samples it gained bzip2 6.7 and
# SQLite 1.3 and cost Lua 1.9 and tcc 1.2 (bench/results/afdo-profi-2026-11-28.md).
SB_AFDO_USE=${SB_AFDO_USE:-}
# Extra flags of EVERY profile-use build (environment; default none): instr,
# AutoFDO, probe-only and CSSPGO alike, never the builds without a profile.
# What it is for: compiler switches that act only on what a profile says,
# e.g. SB_PGO_USE='-mllvm -vectorizer-min-trip-count=1', which keeps
# clang-19's loop vectorizer from folding the tail of loops a profile calls
# short (bench/results/ip-runs20-2026-11-28.md: Lua's luaH_resize ran 348
# instructions a call that way, with any profile).
SB_PGO_USE=${SB_PGO_USE:-}
# -fprofile-sample-use for AutoFDO, with those flags before it.
SB_AFDO_SAMPLE_USE="${SB_AFDO_USE:+$SB_AFDO_USE }-fprofile-sample-use"
# AutoFDO 0.19's create_gcov from LBR (afdo-cfp) does worse from such a
# build (SQLite -1.8 % against -8.0 % from the -O2 -g build, bzip2 +6.0 %
# against +0.5 %, Lua +1.4 against -0.9): it is trained on base, its best
# input, and applied to -O2. From IP samples (afdo-ip-cfp) it did as well or
# better from the manual's build (bzip2 +1.0 % against +9.0 %) and keeps it.
source "$PK_ROOT/bench/lib/variants_ip.sh"
# Binaries go to $WL_DIR/out/$SB_TAG-VARIANT/: PK_BENCH_TAG keeps a private
# run (with its own PK_BENCH_WORK) from overwriting another run's binaries.
SB_TAG=${PK_BENCH_TAG:-sb}
# name | training binary | flags added to -O2 -g when building with the profile
SB_VARIANTS=(
  "base|-|"
  "probe|-|-fpseudo-probe-for-profiling"
  "instr|instr-gen|-fprofile-instr-use=@P"
  "afdo-pgokit|afdo|$SB_AFDO_FLAGS $SB_AFDO_SAMPLE_USE=@P"
  "afdo-llvm|afdo|$SB_AFDO_FLAGS $SB_AFDO_SAMPLE_USE=@P"
  "afdo-cfp|base|$SB_AFDO_SAMPLE_USE=@P"
  "probe-pgokit|probe|-fpseudo-probe-for-profiling -fprofile-sample-use=@P"
  "probe-llvm|probe|-fpseudo-probe-for-profiling -fprofile-sample-use=@P"
  "cs-pgokit|probe|-fpseudo-probe-for-profiling -fprofile-sample-use=@P"
  "cs-llvm|probe|-fpseudo-probe-for-profiling -fprofile-sample-use=@P"
  "cs-llvm-dsorel|probe|-fpseudo-probe-for-profiling -fprofile-sample-use=@P"
  "afdo-ip-pgokit|afdo|$SB_AFDO_FLAGS $SB_AFDO_SAMPLE_USE=@P"
  "afdo-ip-cfp|afdo|$SB_AFDO_FLAGS $SB_AFDO_SAMPLE_USE=@P"
  "probe-ip-pgokit|probe|-fpseudo-probe-for-profiling -fprofile-sample-use=@P"
  "probe-ip-exact|probe|-fpseudo-probe-for-profiling -fprofile-sample-use=@P"
  "cs-ip-pgokit|probe|-fpseudo-probe-for-profiling -fprofile-sample-use=@P"
)
# Built and measured only when --variants names them: cs-llvm-dsorel is
# llvm-profgen-19 handicapped by Debian's perf 6.1 text (see sb_stage_profiles).
SB_OPTIN=" cs-llvm-dsorel "
sb_selected() { # variant: picked by --variants (or by default when not opt-in)
  if [[ "$SB_OPTIN" == *" $1 "* ]]; then [[ ",${only_variants:-}," == *",$1,"* ]]; return; fi
  [ -z "${only_variants:-}" ] || [[ ",$only_variants," == *",$1,"* ]]
}
# The sample profiles the profiles stage writes (checked and rated).
sb_sample_profiles() { # the selected ones
  local v
  for v in afdo-pgokit afdo-llvm afdo-cfp probe-pgokit probe-llvm cs-pgokit cs-llvm cs-llvm-dsorel; do
    if sb_selected "$v"; then echo "$v"; fi
  done
}

sb_variant_names() {
  local v
  for v in "${SB_VARIANTS[@]}"; do
    local n=${v%%|*}
    # an anchor whose generator failed is reported as failed, not measured
    [ -n "${SB_DIR:-}" ] && [ -f "$SB_DIR/gen/$n.failed" ] && continue
    [ "$n" = base ] || sb_selected "$n" || continue
    echo "$n"
  done
}
sb_variant_field() { # name field(2|3)
  local v; for v in "${SB_VARIANTS[@]}"; do
    [ "${v%%|*}" = "$1" ] && { echo "$v" | cut -d'|' -f"$2"; return; }
  done
}
sb_dir() { echo "$WL_DIR/out/$SB_TAG-$1"; } # variant
sb_bin() { echo "$(sb_dir "$2")/$(wl_bin "$1")"; } # workload variant

# A binary is rebuilt only when what determines it changed: the compiler,
# the flags, the bytes of the profile it uses. (Profiles get the same path on
# every run, so the path in the flags alone says nothing.) --rebuild forces.
sb_build_key() { # xflags [profile]
  printf '%s|%s|%s' "$(clang-19 --version | head -n 1)" "$SB_DEBUG $SB_WL_XFLAGS $1" \
    "$([ -n "${2:-}" ] && sha256sum < "$2" | cut -d' ' -f1)"
}

sb_build() { # workload variant xflags [profile]
  local w=$1 v=$2 x=$3 prof=${4:-} key stamp t0=$SECONDS
  local SB_WL_XFLAGS; SB_WL_XFLAGS=$(wl_xflags "$w")
  stamp="$(sb_dir "$v")/.sb-key-$w"
  key=$(sb_build_key "$x" "$prof")
  if [ "${SB_REBUILD:-0}" != 1 ] && [ -x "$(sb_bin "$w" "$v")" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$key" ]; then
    log "build $w/$v: compiler, flags and profile unchanged, binary kept"
    return 0
  fi
  rm -f "$stamp"
  log "build $w/$v ($x)"
  XFLAGS="$SB_DEBUG $SB_WL_XFLAGS $x" "$PK_ROOT/scripts/workloads.sh" build "$SB_TAG-$v" "$w" >/dev/null 2>"$SB_DIR/gen/build-$v.log" \
    || { tail -n 20 "$SB_DIR/gen/build-$v.log" >&2; die "$w/$v: build failed"; }
  [ -x "$(sb_bin "$w" "$v")" ] || die "$w/$v: no binary after build"
  printf '%s' "$key" > "$stamp"
  log "built $w/$v in $((SECONDS - t0)) s"
}

# Builds several variants, SB_JOBS at a time (default 2, the machine's cores):
# SQLite's build is one clang process for most of its time, so two builds
# side by side take little longer than one; make -j2 builds lose nothing.
# Each spec is "variant|xflags|profile"; an optional check function runs on
# each fresh binary inside the same job.
sb_build_all() { # workload check-fn spec...
  local w=$1 check=$2 spec v x p fails=0; shift 2
  local pids=() vs=()
  for spec in "$@"; do
    while [ "$(jobs -rp | wc -l)" -ge "${SB_JOBS:-2}" ]; do wait -n || true; done
    IFS='|' read -r v x p <<<"$spec"
    ( sb_build "$w" "$v" "$x" "$p"; [ -z "$check" ] || "$check" "$w" "$v" ) &
    pids+=($!); vs+=("$v")
  done
  local i
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || { fails=$((fails + 1)); log "$w/${vs[$i]}: FAILED (see above)"; }
  done
  [ $fails = 0 ] || die "$w: $fails of ${#pids[@]} builds failed"
}

sb_stage_build() { # workload dir
  local w=$1 D=$2
  sb_build_all "$w" "" "base||" "afdo|$SB_AFDO_FLAGS|" "probe|-fpseudo-probe-for-profiling|" \
    "instr-gen|-fprofile-instr-generate|"
  wl_prepare "$w" "$(sb_dir base)" || die "$w: preparing the inputs failed"
  # instrumentation PGO profile: the upper bound
  rm -rf "$D/prof/instr-raw"; mkdir -p "$D/prof/instr-raw"
  local cmd
  while read -r cmd; do
    LLVM_PROFILE_FILE="$D/prof/instr-raw/%p.profraw" bash -c "$cmd" >/dev/null || die "$w: instrumented training run failed: $cmd"
  done < <(wl_train "$w" "$(sb_dir instr-gen)")
  llvm-profdata-19 merge -o "$D/prof/instr.profdata" "$D/prof/instr-raw"/*.profraw || die "$w: llvm-profdata merge failed"
}

# One emulated recording of every training command of a build, into
# PREFIX-<command>.data, its exact counts (.exact) and perf script's text
# of it (.script, llvm-profgen's input).
sb_record_lbr_runs() { # workload variant prefix
  local w=$1 kind=$2 out=$3 i=0 cmd
  while read -r cmd; do
    i=$((i + 1))
    log "record $w/$kind #$i: $cmd"
    # shellcheck disable=SC2086
    "$PGOKIT" record --emulate -q -o "$out-$i.data" --exact-counts "$out-$i.exact" -- $cmd >/dev/null \
      || die "$w/$kind: pgokit record failed on: $cmd"
    perf script --show-mmap-events -F ip,brstack -i "$out-$i.data" > "$out-$i.script" 2>/dev/null \
      || die "$w/$kind: perf script failed"
  done < <(wl_train "$w" "$(sb_dir "$kind")")
}

sb_stage_record() { # workload dir: one emulated recording per training command and kind
  local w=$1 D=$2 kind pids=() fails=0 p
  rm -f "$D"/rec/*
  # The recordings are deterministic (the emulator counts branches, not time)
  # and QEMU is one thread: the two kinds are recorded side by side.
  local kinds=(afdo probe)
  sb_selected afdo-cfp && kinds+=(base)
  for kind in "${kinds[@]}"; do
    sb_record_lbr_runs "$w" "$kind" "$D/rec/$kind" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || fails=$((fails + 1)); done
  [ $fails = 0 ] || die "$w: $fails of ${#kinds[@]} recordings failed"
  sb_stage_record_ip "$w" "$D"
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
sb_anchor() { # name dir cmd... (not run when --variants leaves NAME out)
  local name=$1 D=$2; shift 2
  rm -f "$D/gen/$name.failed"
  sb_selected "$name" || return 0
  if ! ( "$@" ); then
    local lf="$D/gen/$name.log"; [ -f "$lf" ] || lf=$(ls -t "$D/gen/$name"-*.log 2>/dev/null | head -n 1)
    echo "generator failed: $(tail -n 1 "$lf" 2>/dev/null | tr -cd '[:print:]' | cut -c1-160)" > "$D/gen/$name.failed"
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
  local afdo_bin probe_bin
  afdo_bin=$(sb_bin "$w" afdo); probe_bin=$(sb_bin "$w" probe)
  local afdo_data=() probe_data=() afdo_scripts=() probe_scripts=()
  for f in "$D"/rec/afdo-*.data; do afdo_data+=(--perf "$f"); done
  for f in "$D"/rec/probe-*.data; do probe_data+=(--perf "$f"); done
  for f in "$D"/rec/afdo-*.script; do afdo_scripts+=("$f"); done
  for f in "$D"/rec/probe-*.script; do probe_scripts+=("$f"); done
  [ ${#afdo_scripts[@]} -gt 0 ] || die "$w: no recordings (run the record stage)"
  cat "${afdo_scripts[@]}" > "$D/rec/all-afdo.script"
  cat "${probe_scripts[@]}" > "$D/rec/all-probe.script"

  sb_timed afdo-pgokit "$D" "$PGOKIT" profgen -q --binary "$afdo_bin" "${afdo_data[@]}" \
    -o "$D/prof/afdo-pgokit.prof" --format extbinary
  sb_anchor afdo-llvm "$D" sb_timed afdo-llvm "$D" llvm-profgen-19 --binary "$afdo_bin" \
    --perfscript "$D/rec/all-afdo.script" --ignore-stack-samples -o "$D/prof/afdo-llvm.prof" || true
  # AutoFDO reads perf.data itself, one file per run: merge afterwards.
  # Debian's create_llvm_prof 0.19 names inlined instances through a dangling
  # StringRef (google/autofdo#95: garbage or wrong callee names, in every
  # --format), so the AutoFDO anchor is its create_gcov, whose .afdo output
  # (version "407*") llvm-profdata reads natively; totals there are sums of line counts.
  local parts=() i=0 cfp_ok=1 f
  sb_selected afdo-cfp || cfp_ok=0
  for f in "$D"/rec/base-*.data; do
    [ $cfp_ok = 1 ] || break
    i=$((i + 1))
    sb_anchor afdo-cfp "$D" sb_timed "afdo-cfp-$i" "$D" create_gcov --binary="$(sb_bin "$w" base)" --profile="$f" \
      --gcov="$D/prof/afdo-cfp-$i.afdo" || { cfp_ok=0; break; }
    parts+=("$D/prof/afdo-cfp-$i.afdo")
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
  # llvm-profgen's CSSPGO input: the text `perf script -F ip,brstack
  # --show-mmap-events` prints, with the call chains absolute, written from
  # the same perf.data by `pgokit dump --perfscript`. Debian's perf 6.1
  # prints call-chain addresses relative to their DSO (branch stacks stay
  # absolute): llvm-profgen then places no caller frame ("leaf external
  # frame" warnings) and its contexts have no callers. That handicapped
  # input stays available as the opt-in row cs-llvm-dsorel. The stack-
  # ignoring anchors above read perf's own text: they use only the branch
  # stacks, the same in both.
  for f in "$D"/rec/probe-*.data; do
    "$PGOKIT" dump --perfscript "$f" || die "$w: pgokit dump --perfscript $f failed"
  done > "$D/rec/all-probe.abs-script"
  sb_anchor cs-llvm "$D" sb_timed cs-llvm "$D" llvm-profgen-19 --binary "$probe_bin" \
    --perfscript "$D/rec/all-probe.abs-script" -o "$D/prof/cs-llvm.prof" || true
  local cs_llvm=(cs-llvm)
  if sb_selected cs-llvm-dsorel; then
    sb_anchor cs-llvm-dsorel "$D" sb_timed cs-llvm-dsorel "$D" llvm-profgen-19 --binary "$probe_bin" \
      --perfscript "$D/rec/all-probe.script" -o "$D/prof/cs-llvm-dsorel.prof" || true
    cs_llvm+=(cs-llvm-dsorel)
  fi
  for f in "${cs_llvm[@]}"; do
    log "$f: llvm-profgen-19's 'leaf external frame' warning: $(grep -h 'leaf external frame' "$D/gen/$f.log" 2>/dev/null | head -n 1 || true)"
  done
  for f in $(sb_sample_profiles); do
    [ -f "$D/gen/$f.failed" ] || sb_check_profile "$w/$f" "$D/prof/$f.prof"
  done
  sb_quality "$w" "$D"
  sb_stage_profiles_ip "$w" "$D"
}

# Profile quality: block overlap of each profile against the exact counts of
# the same training run (CSSPGO paper, §IV-C), at the profile's granularity.
sb_quality() { # workload dir
  local w=$1 D=$2 f kind exact=() out
  for f in $(sb_sample_profiles); do
    [ -f "$D/gen/$f.failed" ] && continue
    case $f in afdo-cfp) kind=base ;; afdo-*) kind=afdo ;; *) kind=probe ;; esac
    exact=(); for e in "$D"/rec/$kind-*.exact; do exact+=(--exact "$e"); done
    out=$("$PGOKIT" overlap "${exact[@]}" --binary "$(sb_bin "$w" "$kind")" "$D/prof/$f.prof") \
      || die "$w/$f: block overlap against the exact counts failed"
    sed -n 's/.*block overlap \([0-9.]*\).*/\1/p' <<<"$out" > "$D/gen/$f.quality"
    log "quality $f: $(cat "$D/gen/$f.quality")"
  done
}

# An ignored profile leaves the code unchanged: refuse to report it. The
# reference is the build with the variant's flags and no profile: its
# training build, but base for instr-gen.
sb_unprofiled() { # variant
  local t; t=$(sb_variant_field "$1" 2)
  case $t in instr-gen|-|'') echo base ;; *) echo "$t" ;; esac
}
sb_check_changed() { # workload variant
  if cmp -s "$SB_DIR/gen/$(sb_unprofiled "$2").dis" <(objdump -d --no-show-raw-insn "$(sb_bin "$1" "$2")" | tail -n +3); then
    die "$1/$2: code identical to the build without profile: the profile was ignored"
  fi
}

sb_stage_variants() { # workload dir: build every profile-use variant
  local w=$1 D=$2 v flags specs=() refs=" " k
  for v in $(sb_variant_names); do
    case $v in base|probe) continue ;; esac
    flags=$(sb_variant_field "$v" 3)
    local prof="$D/prof/$v.prof"; [ "$v" = instr ] && prof="$D/prof/instr.profdata"
    [ -s "$prof" ] || die "$w/$v: profile $prof missing (run the profiles stage)"
    specs+=("$v|${SB_PGO_USE:+$SB_PGO_USE }${flags//@P/$prof}|$prof")
    k=$(sb_unprofiled "$v"); [[ "$refs" == *" $k "* ]] || refs+="$k "
  done
  # the builds without profile that sb_check_changed compares with
  for k in $refs; do
    objdump -d --no-show-raw-insn "$(sb_bin "$w" "$k")" | tail -n +3 > "$D/gen/$k.dis"
  done
  sb_build_all "$w" sb_check_changed "${specs[@]}"
  for k in $refs; do rm -f "$D/gen/$k.dis"; done
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
      cmd=$(wl_measure "$w" "$(sb_dir "$v")")
      /usr/bin/time -f "%e %U %S" -o "$D/meas/.t" bash -c "$cmd" >/dev/null 2>&1 || die "$w/$v: measured run failed"
      read -r e u s < "$D/meas/.t"
      echo -e "$r\t$v\t$e\t$u\t$s" >> "$D/meas/times.tsv"
    done
  done
  cut -d' ' -f1-3 /proc/loadavg > "$D/meas/load-after.txt"
  log "instruction counts (cachegrind) and .text sizes for $w"
  sb_count "$w" "$D/meas" "${names[@]}"
  return 0
}

# Instruction counts and .text sizes of variants (names: sb_dir resolves
# them) into M/counts.tsv (variant, instructions, .text bytes); the
# cachegrind runs of every count command in M/counts-parts.tsv.
sb_count() { # workload dir-for-the-counts variant...
  local w=$1 M=$2 v; shift 2
  local names=("$@")
  # Instructions: cachegrind runs, two at a time, of every variant and count
  # command (wl_count_reps times: the median counts); a variant's count is
  # the sum over its commands. The runs must repeat: each variant runs from
  # a path of the same length (M/x/NN, a link to its directory), in an
  # empty environment, with time() fixed (fixed_time.c), so that a program
  # whose work depends on the time or on stack addresses (Lua's hash seed
  # did, before wl_xflags fixed it) does the same work in every variant.
  rm -rf "$M/x"; mkdir -p "$M/x"
  cc -O2 -shared -fPIC -o "$M/fixed_time.so" "$PK_ROOT/bench/lib/fixed_time.c" || die "$w: building fixed_time.so failed"
  export SB_FIXED_TIME="$M/fixed_time.so"
  local i=0
  for v in "${names[@]}"; do
    local alias; alias="$M/x/$(printf %02d $i)"; i=$((i + 1))
    ln -s "$(sb_dir "$v")" "$alias"
    while read -r cmd; do
      local k; for ((k = 0; k < $(wl_count_reps "$w" "$cmd"); k++)); do echo -e "$v\t$k\t$cmd"; done
    done < <(wl_count "$w" "$alias")
  done | xargs -P 2 -d '\n' -n 1 bash -c '
      IFS=$'"'"'\t'"'"' read -r v k cmd <<<"$0"
      # repetition k runs with its stack 64 k bytes lower (an environment
      # variable that long): the same for every variant
      pad=$(printf "%*s" $((64 * k)) "" | tr " " x)
      ir=$(env -i PATH=/usr/bin:/bin SB_COUNT_REP="$pad" LD_PRELOAD="$SB_FIXED_TIME" valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null $cmd 2>&1 >/dev/null | sed -n "s/.*I *refs: *\([0-9,]*\).*/\1/p" | tr -d ,)
      echo -e "$v\t${ir:-NA}\t$cmd"' > "$M/counts-parts.tsv"
  grep -q "	NA	" "$M/counts-parts.tsv" && die "$w: cachegrind failed: $(grep "	NA	" "$M/counts-parts.tsv" | head -n 3)"
  : > "$M/counts.tsv"
  for v in "${names[@]}"; do
    local text; text=$(size -A "$(sb_bin "$w" "$v")" | awk '$1 == ".text" {print $2}')
    echo -e "$v\t$(python3 "$PK_ROOT/bench/lib/median_sum.py" "$v" < "$M/counts-parts.tsv")\t$text" >> "$M/counts.tsv"
  done
}
