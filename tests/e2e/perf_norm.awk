# perf_norm.awk — turns `perf script -D` output (mode=perf) or `pgokit dump`
# output (mode=pk) into one canonical line per record, for comparing readers:
#   S pid/tid time_ns 0xip period [callchain entries, hex without leading 0s]
#   B from/to/flag ... (branch stack, when present)
#   PERF_RECORD_MMAP2 ... / COMM / FORK / EXIT lines as perf prints them
function flush() { if (cur != "") print cur; if (br != "") print "B" br; cur = ""; br = ""; inchain = 0 }
function strip0(v) { sub(/^0x/, "", v); sub(/^0+/, "", v); return v == "" ? "0" : v }
mode == "perf" && /PERF_RECORD_SAMPLE/ {
    flush()
    # "[cpu] time offset [size]: PERF_RECORD_SAMPLE(...): pid/tid: ip period: P ..."
    for (i = 2; i <= NF; i++) if ($i ~ /^0x[0-9a-f]+$/ && $(i + 1) ~ /^\[0x/) { t = $(i - 1); break }
    for (i = 1; i <= NF; i++) if ($i ~ /^-?[0-9]+\/-?[0-9]+:$/) { pt = $i; ip = $(i + 1); per = $(i + 3) }
    sub(/:$/, "", pt); cur = "S " pt " " t " " ip " " per; next
}
mode == "perf" && /^\.\.\. (FP|branch) / { inchain = ($2 == "FP"); inbr = ($2 == "branch"); next }
mode == "perf" && /^\.\.\.\.\. +[0-9]+: / {
    if (inchain) cur = cur " " strip0($3)
    else if (inbr) br = br " " strip0($3) "/" strip0($5)
    next
}
mode == "pk" && /^-?[0-9]+\/-?[0-9]+ [0-9]+\.[0-9]+: ip / {
    flush(); t = $2; sub(/:$/, "", t); sub(/\./, "", t); t = strip0(t)
    cur = "S " $1 " " t " " $4 " " $6; inchain = 1; next
}
mode == "pk" && /^\t/ {
    v = $1
    if (v == "[user]") v = "fffffffffffffe00"; else if (v == "[kernel]") v = "ffffffffffffff80"
    if (inchain) cur = cur " " strip0(v)
    next
}
mode == "pk" && /^ 0x/ {
    for (i = 1; i <= NF; i++) { split($i, f, "/"); br = br " " strip0(f[1]) "/" strip0(f[2]) }
    next
}
/PERF_RECORD_(MMAP2?|COMM|FORK|EXIT)[ :(]/ { flush(); s = $0; sub(/^.*PERF_RECORD_/, "PERF_RECORD_", s); print s; next }
END { flush() }
