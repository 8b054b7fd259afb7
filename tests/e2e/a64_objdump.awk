# `llvm-objdump-19 -d --no-show-raw-insn` of AArch64 code → one line per
# instruction: "ADDR LEN CLASS TARGET" as `pgokit decode` prints them (LEN
# "?" before a "..." run of zero bytes objdump leaves out, and for the last
# line). CLASS from the mnemonic; TARGET the direct target (0x0 if none).
BEGIN { FS = "\t" }
function hex(s,    v, i) {  # (mawk has no strtonum)
    v = 0
    for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
    return v
}
function flush(next_addr) {
    if (have) print "0x" paddr, (next_addr == "" ? "?" : hex(next_addr) - hex(paddr)), pcls, ptgt
    have = 0
}
/^[ \t]*\.\.\.$/ { flush(""); next }
/^ *[0-9a-f]+:/ {
    addr = $1; sub(/:.*/, "", addr); gsub(/ /, "", addr)
    mn = $2; ops = $3
    cls = "other"; tgt = "0x0"
    if (mn == "b") cls = "jmp"
    else if (mn == "bl") cls = "call"
    else if (mn ~ /^bc?\./ || mn ~ /^(cbz|cbnz|tbz|tbnz)$/) cls = "cjmp"
    else if (mn ~ /^(br|braa|brab|braaz|brabz)$/) cls = "ijmp"
    else if (mn ~ /^(blr|blraa|blrab|blraaz|blrabz)$/) cls = "icall"
    else if (mn ~ /^(ret|retaa|retab|eret|eretaa|eretab|drps|retaasppc|retabsppc|retaasppcr|retabsppcr)$/) cls = "ret"
    if (cls == "jmp" || cls == "call" || cls == "cjmp") {
        n = split(ops, parts, ", ")
        t = parts[n]; sub(/ .*/, "", t)
        tgt = t
    }
    if (have) flush(addr)
    paddr = addr; pcls = cls; ptgt = tgt; have = 1
    next
}
END { flush("") }
