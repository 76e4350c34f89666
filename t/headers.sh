#!/bin/bash
# t/headers.sh — every installed header is self-contained: each one alone, first in a
# translation unit and included twice (guards), compiles as C11 with -Wall -Wextra
# -Werror -pedantic and, when a C++ compiler is present, as C++ too.  (fpvm3.h is PVM's
# Fortran header, not C: t/fortran.sh compiles it.)
set -u
top_srcdir=${top_srcdir:-.}
. "$top_srcdir/t/tap.sh"
inc=$(cd "$top_srcdir/include" && pwd)
CCH=${CC:-cc}
CXX=${CXX:-c++}
command -v "$CXX" >/dev/null 2>&1 || CXX=
set --
for h in "$inc"/*.h; do [ "$h" = "$inc/fpvm3.h" ] || set -- "$@" "$h"; done
per=1
[ -n "$CXX" ] && per=2
echo "1..$(($# * per))"
for h in "$@"; do
    b=$(basename "$h")
    printf '#include <%s>\n#include <%s>\nint main(void) { return 0; }\n' "$b" "$b" >"$tmp/one.c"
    $CCH -std=c11 -Wall -Wextra -Werror -pedantic -I"$inc" -c "$tmp/one.c" -o "$tmp/one.o" \
        2>"$tmp/err"
    ok $? "$b compiles alone as C11"
    sed 's/^/# /' "$tmp/err" | head -5
    if [ -n "$CXX" ]; then
        cp "$tmp/one.c" "$tmp/one.cc"
        $CXX -Wall -Wextra -Werror -I"$inc" -c "$tmp/one.cc" -o "$tmp/one.o" 2>"$tmp/err"
        ok $? "$b compiles alone as C++"
        sed 's/^/# /' "$tmp/err" | head -5
    fi
done
exit $((failed > 0))
