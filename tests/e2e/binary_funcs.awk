# Reference DWARF function list from `llvm-dwarfdump-19 --debug-info`: one
# line "begin end name" per address range of every DW_TAG_subprogram that has
# code and a name (linkage name, else name, else the name dwarfdump shows for
# its abstract origin / specification). Plain POSIX awk (mawk).
# Used by tests/e2e/binary_*.sh.
# hex without leading zeros ("0x0" for zero), and "<" on such strings
function norm(h) { sub(/^0x0*/, "", h); return "0x" (h == "" ? "0" : h) }
function hexlt(a, b) { return length(a) != length(b) ? length(a) < length(b) : a < b }
function flush(   i, b, e) {
    if (tag == "DW_TAG_subprogram" && nm != "") {
        if (lo != "" && hi != "") { rb[++n] = lo; re[n] = hi }
        for (i = 1; i <= n; i++) {
            b = norm(rb[i]); e = norm(re[i])
            if (hexlt(b, e))
                print b, e, nm
        }
    }
    tag = ""; nm = ""; link = ""; lo = ""; hi = ""; n = 0; inranges = 0
}
function quoted(s) { if (match(s, /"[^"]*"/)) return substr(s, RSTART + 1, RLENGTH - 2); return "" }
/^0x[0-9a-f]+: +DW_TAG_|^0x[0-9a-f]+: +NULL/ { flush(); tag = $2; next }
tag != "DW_TAG_subprogram" { next }
/DW_AT_linkage_name|DW_AT_MIPS_linkage_name/ { link = quoted($0); nm = link; next }
/DW_AT_name/ { if (link == "") nm = quoted($0); next }
/DW_AT_abstract_origin|DW_AT_specification/ { if (nm == "") nm = quoted($0); next }
/DW_AT_low_pc/ { match($0, /0x[0-9a-f]+/); lo = substr($0, RSTART, RLENGTH); next }
/DW_AT_high_pc/ { match($0, /0x[0-9a-f]+/); hi = substr($0, RSTART, RLENGTH); next }
/DW_AT_ranges/ { inranges = 1 }
inranges && /\[0x[0-9a-f]+, 0x[0-9a-f]+\)/ {
    match($0, /\[0x[0-9a-f]+, 0x[0-9a-f]+\)/); r = substr($0, RSTART + 1, RLENGTH - 2)
    split(r, p, ", "); rb[++n] = p[1]; re[n] = p[2]
}
END { flush() }
