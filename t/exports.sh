#!/bin/bash
# t/exports.sh — libgimpi.so exports exactly what the installed headers declare: every
# function and variable declared in include/*.h is a defined dynamic symbol of the built
# .libs/libgimpi.so, and the library exports nothing else (no layer's helper, no
# impi_server_* or gimpi_loop_* of the server side).  The declarations are read by the
# compiler itself (gcc -aux-info lists every prototype with its file; variables come from
# the preprocessed headers), the exports by nm -D --defined-only.  The C headers are
# include/*.h but fpvm3.h (Fortran); the Fortran binding's calls (pvmfmytid_ ...), which
# no C header declares, are the ones libgimpi/fortran/fpvm.h declares.
set -u
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
. "$top_srcdir/t/tap.sh"
LIB="$top_builddir/.libs/libgimpi.so"
CCG=${CC:-cc}
$CCG --version 2>/dev/null | grep -qi 'gcc\|free software' || CCG=gcc
if ! command -v nm >/dev/null || ! $CCG --version >/dev/null 2>&1; then
    echo "1..0 # SKIP nm or gcc missing"; exit 0
fi
if [ ! -e "$LIB" ]; then
    echo "1..0 # SKIP no shared library built ($LIB)"; exit 0
fi
echo "1..5"
inc=$(cd "$top_srcdir/include" && pwd)
fpvm=$(cd "$top_srcdir/libgimpi/fortran" && pwd)/fpvm.h
for h in "$inc"/*.h "$fpvm"; do [ "$h" = "$inc/fpvm3.h" ] || echo "#include \"$h\""; done >"$tmp/all.c"
$CCG -std=c11 -I"$inc" -aux-info "$tmp/aux" -fsyntax-only "$tmp/all.c" 2>"$tmp/cc.err"
ok $? "every installed header compiles in one unit"
# functions: the aux-info lines whose source is an installed header or fpvm.h
# (a function returning a function pointer, pvm_recvf, reads `int (*NAME (params)) (...)`)
grep -F -e "/* $inc/" -e "/* $fpvm:" "$tmp/aux" | sed -E 's|^/\*[^*]*\*/ *||; s/\(\*([A-Za-z_0-9]+) *\(.*/ \1 (/' |
    sed -E 's/ *\(.*//; s/.*[ *]//' |
    sort -u >"$tmp/decl"
# variables: extern declarations without a parameter list in the headers' own lines
$CCG -std=c11 -I"$inc" -E "$tmp/all.c" | awk -v inc="$inc/" '
    /^# [0-9]+ "/ { mine = index($3, "\"" inc) == 1; next }
    mine { gsub(/__attribute__ *\(\(visibility\("default"\)\)\)/, "") }
    mine && /extern/ && !/\(/ && /;/ { v = $0; sub(/ *;.*/, "", v); sub(/.*[ *]/, "", v); print v }' \
    >>"$tmp/decl"
sort -u -o "$tmp/decl" "$tmp/decl"
# (a sanitizer build adds an ODR indicator __odr_asan.NAME per exported variable)
nm -D --defined-only "$LIB" | awk '$2 != "A" { print $3 }' |
    grep -Ev '^(_init|_fini|_edata|_end|__bss_start)$|^__odr_asan[.]' | sort -u >"$tmp/exp"
nd=$(wc -l <"$tmp/decl") ne=$(wc -l <"$tmp/exp")
missing=$(comm -23 "$tmp/decl" "$tmp/exp")
[ -z "$missing" ] && [ "$nd" -gt 100 ]
ok $? "every declared function and variable is exported ($nd declared)"
[ -z "$missing" ] || echo "# declared, not exported: $(echo $missing)"
extra=$(comm -13 "$tmp/decl" "$tmp/exp")
[ -z "$extra" ]; ok $? "nothing is exported that no installed header declares ($ne exported)"
[ -z "$extra" ] || echo "# exported, not declared: $(echo $extra | cut -c1-600)"
server=$(grep -E '^(impi_server_|gimpi_loop_)' "$tmp/exp")
[ -z "$server" ]; ok $? "no server-side symbol (impi_server_*, gimpi_loop_*) in libgimpi.so"
[ -z "$server" ] || echo "# $(echo $server)"
# PVM: pvm3.h declares only what gimpi implements, and every such call is exported
pvmdecl=$(grep -c -E '^pvm|^Pvm' "$tmp/decl")
pvmexp=$(grep -c -E '^pvm|^Pvm' "$tmp/exp")
[ "$pvmdecl" = "$pvmexp" ] && [ "$pvmdecl" -gt 50 ]
ok $? "pvm3.h's and fpvm.h's $pvmdecl calls and variables are exactly libgimpi's PVM exports ($pvmexp)"
exit $((failed > 0))
