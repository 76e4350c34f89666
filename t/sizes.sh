#!/bin/bash
# t/sizes.sh — the tree's size rules (CONTRIBUTING.md, "Code"): no source file of the
# product or its tests is over 1,200 lines, and no function of the product over 120.
# Files: every .c, .h, .sh and .in below libgimpi/, server/, programs/, groupd/,
# examples/, bench/, include/ and t/.  Functions: those of the .c and .h files below
# libgimpi/, server/, programs/, groupd/, examples/ and bench/, written in the tree's
# style (the opening `{` and the closing `}` at column 0); a function's length counts
# the lines from its `{` to its `}`, both included, and its name is the identifier
# before the `(` of the last line above the `{` that starts at column 0.  The
# offenders are listed as TAP comments: file, function and length.
set -u
top_srcdir=${top_srcdir:-.}
. "$top_srcdir/t/tap.sh"
MAX_FILE=1200
MAX_FUNC=120
S=$(cd "$top_srcdir" && pwd)

# the files of dirs "$@" with the extensions looked at, one path a line (relative to S)
s_files() {
    (cd "$S" && find "$@" -type f \( -name '*.c' -o -name '*.h' -o -name '*.sh' \
        -o -name '*.in' \) 2>/dev/null | LC_ALL=C sort)
}

echo "1..2"

s_files libgimpi server programs groupd examples bench include t >"$tmp/files"
(cd "$S" && xargs -d '\n' wc -l <"$tmp/files") |
    awk -v max=$MAX_FILE '$2 != "total" && $1 > max { print $2 ": " $1 " lines" }' >"$tmp/big"
nf=$(wc -l <"$tmp/files")
[ "$nf" -gt 100 ] && [ ! -s "$tmp/big" ]
ok $? "no source file over $MAX_FILE lines ($nf files)"
sed 's/^/# /' "$tmp/big"

s_files libgimpi server programs groupd examples bench | grep -E '\.[ch]$' >"$tmp/code"
(cd "$S" && xargs -d '\n' awk -v max=$MAX_FUNC '
    FNR == 1 { open = 0; decl = "" }
    !open && /^[A-Za-z_]/ { decl = $0 }
    !open && /^\{/ {
        open = FNR
        name = decl
        sub(/\(.*/, "", name)
        if (match(name, /[A-Za-z_][A-Za-z_0-9]*[ \t]*$/))
            name = substr(name, RSTART, RLENGTH)
        gsub(/[ \t]/, "", name)
        nfunc++
        next
    }
    open && /^\}/ {
        len = FNR - open + 1
        if (len > max)
            printf "%s: %s(): %d lines\n", FILENAME, name, len
        open = 0
    }
    END { print nfunc > "/dev/stderr" }' <"$tmp/code") >"$tmp/long" 2>"$tmp/nfunc"
nfn=$(awk '{ s += $1 } END { print s + 0 }' "$tmp/nfunc")     # (xargs may run awk more than once)
[ "$nfn" -gt 500 ] && [ ! -s "$tmp/long" ]
ok $? "no function over $MAX_FUNC lines ($nfn functions in $(wc -l <"$tmp/code") files)"
sed 's/^/# /' "$tmp/long"
exit $((failed > 0))
