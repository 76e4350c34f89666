#!/bin/sh
# t/gimpicc.sh — the compiler wrapper compiles and links a program against the build
# tree's libgimpi in one step, accepts -lpvm3 -lgpvm3 link lines, separates -c from
# linking, and -show prints the command.
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
GCC="$top_builddir/programs/gimpicc"
export GIMPICC_INCDIR="$top_srcdir/include" GIMPICC_LIBDIR="$top_builddir/.libs"
. "${top_srcdir:-.}/t/tap.sh"
echo "1..6"
cat >"$tmp/v.c" <<'C'
#include <gimpi.h>
#include <stdio.h>
int main(void) { printf("gimpi %s: %s\n", gimpi_version(), gimpi_strerror(GIMPI_ENOGROUP)); return 0; }
C
"$GCC" -o "$tmp/v" "$tmp/v.c"; ok $? "gimpicc -o prog prog.c"
out=$("$tmp/v"); case "$out" in "gimpi "*": No such group") ok 0 "the program runs: $out" ;; *) ok 1 "program output '$out'" ;; esac
"$GCC" -o "$tmp/v2" "$tmp/v.c" -lpvm3 -lgpvm3; ok $? "a -lpvm3 -lgpvm3 link line is satisfied"
"$GCC" -c -o "$tmp/v.o" "$tmp/v.c" && "$GCC" -o "$tmp/v3" "$tmp/v.o"; ok $? "separate compile and link"
"$GCC" -show -o x x.c | grep -q -- "-lgimpi"; ok $? "-show prints the link command"
"$GCC" -o "$tmp/bad" "$tmp/nonexistent.c" 2>/dev/null; [ $? -ne 0 ]; ok $? "a compiler error is passed through"
exit $((failed > 0))
