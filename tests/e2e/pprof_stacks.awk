# pprof_stacks.awk — stacks as address lists, from either side of a pprof
# conversion, aggregated into "count value addr addr ..." lines (hex
# without 0x or leading zeros, leaf first) for comparing with `sort | diff`.
# Hex strings are changed as strings: mawk's doubles cannot hold kernel
# addresses exactly.
#   mode=perf   perf_norm.awk "S" lines of a perf.data: what pgokit's pprof
#               writer must make of each sample: the ip, then every call-chain
#               entry after the first one that is no marker and not 0, as
#               return address - 1; value = the period.
#   mode=chain  perf_norm.awk "S" lines: the call chain as perf wrote it
#               (markers kept unless nomark = 1, 0 entries dropped);
#               count = 1, value = period.
#   mode=raw    `go tool pprof -raw` output: each sample's locations' addresses
#               (plus = 1: non-leaf addresses + 1, back to return addresses);
#               count and value from the first two columns (value from column
#               `col` when given).
function norm(v) { v = tolower(v); sub(/^0x/, "", v); sub(/^0+/, "", v); return v == "" ? "0" : v }
function hexstep(v, d,    i, c, k, out) {
    # v + d for d = 1 or -1, on a normalised hex string
    out = ""
    for (i = length(v); i >= 1; i--) {
        c = substr(v, i, 1); k = index("0123456789abcdef", c) - 1
        k += d
        if (k >= 0 && k <= 15) { return norm(substr(v, 1, i - 1) substr("0123456789abcdef", k + 1, 1) out) }
        out = (d > 0 ? "0" : "f") out
    }
    return d > 0 ? "1" out : "0"
}
function add(key, n, v) { if (!(key in cnt)) order[++nk] = key; cnt[key] += n; val[key] += v }
mode == "perf" && /^S / {
    key = norm($4); first = 1
    for (i = 6; i <= NF; i++) {
        a = norm($i)
        if (length(a) == 16 && a >= "fffffffffffff001") continue   # a context marker
        if (first) { first = 0; continue }                          # the ip again
        if (a == "0" || a == "1") continue
        key = key " " hexstep(a, -1)
    }
    add(key, 1, $5); next
}
mode == "chain" && /^S / {
    key = ""
    for (i = 6; i <= NF; i++) {
        a = norm($i)
        if (a == "0" || (nomark && length(a) == 16 && a >= "fffffffffffff001")) continue
        key = key (key == "" ? "" : " ") a
    }
    add(key, 1, $5); next
}
mode == "raw" && /^Samples:/ { insamples = 1; next }
mode == "raw" && /^Locations/ { insamples = 0; inloc = 1; next }
mode == "raw" && /^Mappings/ { inloc = 0; next }
mode == "raw" && insamples && /:/ {
    n++; c[n] = $1; v[n] = col ? $col : $2
    s = $0; sub(/^[^:]*:/, "", s); ids[n] = s; next
}
mode == "raw" && inloc && /^ *[0-9]+: 0x/ { id = $1; sub(/:$/, "", id); addr[id] = norm($2); next }
END {
    if (mode == "raw") {
        for (j = 1; j <= n; j++) {
            m = split(ids[j], f, " "); key = ""
            for (i = 1; i <= m; i++) {
                a = addr[f[i]]
                if (plus && i > 1) a = hexstep(a, 1)
                key = key (i > 1 ? " " : "") a
            }
            add(key, c[j], v[j])
        }
    }
    for (k = 1; k <= nk; k++) print cnt[order[k]], val[order[k]], order[k]
}
