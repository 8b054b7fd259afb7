# variants_ip.sh — the scoreboard's IP-sampling variants (sourced by
# variants.sh): profiles from instruction pointers (+ frame-pointer call
# stacks), as on machines without LBR (most cloud VMs, this one included).
#
# They are recorded with REAL stock perf through `pgokit record --ip --freq
# 4999` (cpu-clock:u where the PMU counts no instructions, as here), not
# emulated, with the call chains record takes by itself: neither training
# build keeps frame pointers, so 1 KiB stack copies (--call-graph
# dwarf,1024) that profgen unwinds with the build's .eh_frame. An IP sample
# carries far less than a 32-entry LBR sample, so every training command is
# recorded SB_IP_RUNS times (default 5) and the runs are merged, as a fleet
# merges many hosts.
# Training binaries: the very binaries their LBR counterparts are trained
# on, recorded as a user would record what they ship:
#   - AutoFDO (afdo-ip-*) on `afdo` (-O2 -g + SB_AFDO_FLAGS), built with the
#     flags of the builds the profile is applied to. A line profile speaks
#     of the training binary's code: where the compiler merged two
#     statements' tails, the merged block keeps one statement's lines, and a
#     build with other flags merges differently. Measured on Lua: an AutoFDO
#     profile from EXACT counts of the -fno-omit-frame-pointer build, applied
#     to the -O2 build, ran +1.0 % instructions vs -O2; from exact counts of
#     -O2 itself, -1.2 %. AutoFDO needs the callers only for the targets of
#     calls through pointers, which the stack copies give.
#   - Probe-only and CSSPGO (probe-ip-*, cs-ip-*) on `probe`, both from the
#     same recordings. Until 2026-11-28 they were trained on a build with
#     frame pointers (probe-fp) for its frame-pointer chains; over four draws
#     of five runs (bench/results/ip-chains-2026-11-28.md) the copies of
#     `probe` did better on SQLite (probe-only 93 against 89 % of LBR's gain,
#     CSSPGO 91 against 83 %), the same on Lua (98 / 86 against 101 / 86 %)
#     and worse on bzip2 (100 / 95 against 104 / 100 %): not better
#     everywhere, but what `record --ip` does with the build a user ships.
# So each IP variant is compared with -O2 exactly like its LBR counterpart.
#   afdo-ip-pgokit   line-based AutoFDO from IP samples (flow inference)
#   afdo-ip-cfp      AutoFDO 0.19's create_gcov --use_lbr=false on the same perf.data
#   probe-ip-pgokit  probe-only, cs-ip-pgokit full CSSPGO, from IP samples
#   probe-ip-exact   the probe-only profile of the EXACT counts of probe's
#                    training runs (pgokit overlap --write-reference): what a
#                    perfect sampler would give, to tell sampling from codegen
# Quality (block overlap against the emulator's exact counts of the training
# binaries) is also reported for pgokit's profiles without flow inference
# (--flow none): afdo-ip-noinf, probe-ip-noinf.

SB_IP_RUNS=${SB_IP_RUNS:-5}
SB_IP_FREQ=${SB_IP_FREQ:-4999}
SB_IP_VARIANTS=" afdo-ip-pgokit afdo-ip-cfp probe-ip-pgokit probe-ip-exact cs-ip-pgokit "

sb_ip_wanted() { # any IP variant selected?
  local v; for v in $SB_IP_VARIANTS; do sb_selected "$v" && return 0; done; return 1
}

sb_stage_record_ip() { # workload dir
  local w=$1 D=$2 kind i k cmd
  sb_ip_wanted || return 0
  rm -f "$D"/rec/ip-* "$D"/rec/fp-* "$D"/rec/ipx-*
  for kind in afdo probe; do
    # ground truth of the training binaries: the emulator's exact counts
    i=0
    while read -r cmd; do
      i=$((i + 1))
      # shellcheck disable=SC2086
      "$PGOKIT" record --emulate -q -o "$D/rec/ipx-$kind-$i.data" --exact-counts "$D/rec/ipx-$kind-$i.exact" -- $cmd \
        >/dev/null || die "$w/$kind: exact counts failed on: $cmd"
      rm -f "$D/rec/ipx-$kind-$i.data"
    done < <(wl_train "$w" "$(sb_dir "$kind")")
    sb_record_ip_runs "$w" "$kind" "$D/rec/ip-$kind"
  done
}

# Real IP + stack samples of a build: SB_IP_RUNS runs of every training
# command, into PREFIX-<command>-<run>.data (and .log).
sb_record_ip_runs() { # workload variant prefix
  local w=$1 kind=$2 out=$3 i k cmd
  for ((k = 1; k <= SB_IP_RUNS; k++)); do
    i=0
    while read -r cmd; do
      i=$((i + 1))
      log "record (IP, pgokit record --ip) $w/$kind #$i run $k: $cmd"
      # shellcheck disable=SC2086
      "$PGOKIT" record --ip --freq "$SB_IP_FREQ" -o "$out-$i-$k.data" -- $cmd \
        >/dev/null 2>"$out-$i-$k.log" || die "$w/$kind: pgokit record --ip failed on: $cmd"
    done < <(wl_train "$w" "$(sb_dir "$kind")")
  done
}

sb_stage_profiles_ip() { # workload dir
  local w=$1 D=$2 f
  sb_ip_wanted || return 0
  local bbin pbin bdata=() pdata=()
  bbin=$(sb_bin "$w" afdo); pbin=$(sb_bin "$w" probe)
  for f in "$D"/rec/ip-afdo-*.data; do bdata+=(--perf "$f"); done
  for f in "$D"/rec/ip-probe-*.data; do pdata+=(--perf "$f"); done
  [ ${#bdata[@]} -gt 0 ] || die "$w: no IP recordings (run the record stage)"
  sb_timed afdo-ip-pgokit "$D" "$PGOKIT" profgen -q --binary "$bbin" "${bdata[@]}" -o "$D/prof/afdo-ip-pgokit.prof"
  sb_timed probe-ip-pgokit "$D" "$PGOKIT" profgen -q --binary "$pbin" "${pdata[@]}" --ignore-stack-samples \
    -o "$D/prof/probe-ip-pgokit.prof"
  sb_timed cs-ip-pgokit "$D" "$PGOKIT" profgen --binary "$pbin" "${pdata[@]}" -o "$D/prof/cs-ip-pgokit.prof"
  # without inference, for the quality table only
  "$PGOKIT" profgen -q --binary "$bbin" "${bdata[@]}" --flow none -o "$D/prof/afdo-ip-noinf.prof" ||
    die "$w: afdo-ip-noinf failed"
  "$PGOKIT" profgen -q --binary "$pbin" "${pdata[@]}" --ignore-stack-samples --flow none \
    -o "$D/prof/probe-ip-noinf.prof" || die "$w: probe-ip-noinf failed"
  # AutoFDO 0.19 without LBR: create_gcov --use_lbr=false, one perf.data at a
  # time (it reads one), merged by llvm-profdata (see variants.sh for why
  # create_gcov rather than create_llvm_prof)
  local parts=() n=0 ok=1 cfp=()
  if sb_selected afdo-ip-cfp; then
    cfp=(afdo-ip-cfp)
    for f in "$D"/rec/ip-afdo-*.data; do
      n=$((n + 1))
      sb_anchor afdo-ip-cfp "$D" sb_timed "afdo-ip-cfp-$n" "$D" create_gcov --binary="$bbin" --profile="$f" \
        --use_lbr=false --gcov="$D/prof/afdo-ip-cfp-$n.afdo" || { ok=0; break; }
      parts+=("$D/prof/afdo-ip-cfp-$n.afdo")
    done
    if [ $ok = 1 ]; then
      if llvm-profdata-19 merge --sample --extbinary -o "$D/prof/afdo-ip-cfp.prof" "${parts[@]}" > "$D/gen/afdo-ip-cfp.log" 2>&1; then
        python3 "$PK_ROOT/bench/lib/sumtime.py" "$D/gen" afdo-ip-cfp "$n"
      else
        echo "its profile is unreadable: $(head -n 1 "$D/gen/afdo-ip-cfp.log" | tr -cd '[:print:]' | cut -c1-160)" > "$D/gen/afdo-ip-cfp.failed"
      fi
    fi
  fi
  for f in afdo-ip-pgokit "${cfp[@]}" probe-ip-pgokit cs-ip-pgokit afdo-ip-noinf probe-ip-noinf; do
    [ -f "$D/gen/$f.failed" ] || sb_check_profile "$w/$f" "$D/prof/$f.prof"
  done
  # block overlap against the exact counts, one overlap run per training
  # binary (it builds the reference once); the probe one also writes its
  # reference out: the probe-ip-exact variant's profile
  local kind exact out f p profs ref
  for kind in afdo probe; do
    profs=()
    for f in afdo-ip-pgokit "${cfp[@]}" afdo-ip-noinf probe-ip-pgokit cs-ip-pgokit probe-ip-noinf; do
      [ -f "$D/gen/$f.failed" ] && continue
      case $f in afdo-*) [ $kind = afdo ] ;; *) [ $kind = probe ] ;; esac && profs+=("$D/prof/$f.prof")
    done
    exact=(); for e in "$D"/rec/ipx-$kind-*.exact; do exact+=(--exact "$e"); done
    ref=(); [ $kind = probe ] && ref=(--write-reference "$D/prof/probe-ip-exact.prof")
    out=$("$PGOKIT" overlap "${exact[@]}" --binary "$(sb_bin "$w" "$kind")" "${ref[@]}" "${profs[@]}") \
      || die "$w: block overlap against the exact counts of $kind failed"
    for p in "${profs[@]}"; do
      f=$(basename "$p" .prof)
      sed -n "s|^$p: block overlap \([0-9.]*\).*|\1|p" <<<"$out" > "$D/gen/$f.quality"
      log "quality $f: $(cat "$D/gen/$f.quality")"
    done
  done
  sb_check_profile "$w/probe-ip-exact" "$D/prof/probe-ip-exact.prof"
  echo 1.0000 > "$D/gen/probe-ip-exact.quality"   # the exact counts themselves
  # how much the IP profiles saw
  grep -h "from IP samples" "$D/gen/cs-ip-pgokit.log" > "$D/gen/ip-samples.txt" 2>/dev/null || true
  echo "$SB_IP_RUNS" > "$D/gen/ip-runs.txt"
  echo "$SB_IP_FREQ" > "$D/gen/ip-freq.txt"
  # training seconds per run (what perf sampled): the sum of the first run's
  # commands' durations, from the first and last samples' timestamps (the
  # header's "sample duration" is 0 in a --buildid-mmap recording: perf
  # skips the end-of-run pass that writes it)
  local secs=0 f1 t
  for f1 in "$D"/rec/ip-probe-*-1.data; do
    t=$(perf script -F time -i "$f1" 2>/dev/null | sed -n '1p;$p' | tr -d ': ' | paste -sd' ' | awk 'NF == 2 {print $2 - $1}')
    [ -n "$t" ] && secs=$(python3 -c "print($secs + $t)")
  done
  echo "$secs" > "$D/gen/ip-seconds.txt"
  # the call chains record chose for each training binary (its mode line)
  local chains="" chosen
  for kind in afdo probe; do
    chosen=$(sed -n 's/^pgokit record: IP sampling (perf record [^,]*, \(call chains as \)\?\([0-9]*-byte stack copies (DWARF)\|frame-pointer call chains\)).*/\2/p' "$D/rec/ip-$kind-1-1.log" | head -n 1)
    chains+="${chains:+, }${chosen:-no call chains} of $kind"
  done
  echo "$chains" > "$D/gen/ip-chains.txt"
}
