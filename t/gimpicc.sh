#!/bin/sh
# t/gimpicc.sh — the compiler wrapper compiles and links a program against the build
# tree's libgimpi in one step, accepts -lpvm3 -lgpvm3 link lines, separates -c from
# linking, and -show prints the command.  The gimpicc left in the build tree uses that
# tree by itself (its include/ before /usr/include, so gimpi's pvm3.h wins over PVM's, and
# its .libs with an rpath: the program runs without LD_LIBRARY_PATH); a gimpicc whose
# headers or library are missing says what to do instead of compiling against others.
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
GCC="$top_builddir/programs/gimpicc"
export GIMPICC_INCDIR="$top_srcdir/include" GIMPICC_LIBDIR="$top_builddir/.libs"
. "${top_srcdir:-.}/t/tap.sh"
echo "1..11"
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
# the build tree's gimpicc without any GIMPICC_* variable: a PVM program, gimpi's pvm3.h
cat >"$tmp/p.c" <<'C'
#include <pvm3.h>
#include <stdio.h>
#ifndef GIMPI_PVM3_H
#error "not gimpi's pvm3.h"
#endif
int main(void)
{
    int bytes = 0, v[2] = { 1, 2 };
    pvm_initsend(PvmDataDefault);
    pvm_pkint(v, 2, 1);
    pvm_bufinfo(pvm_getsbuf(), &bytes, NULL, NULL);
    printf("packed %d bytes\n", bytes);
    return 0;
}
C
env -u GIMPICC_INCDIR -u GIMPICC_LIBDIR -u LD_LIBRARY_PATH "$GCC" -o "$tmp/p" "$tmp/p.c" -lpvm3 -lgpvm3
ok $? "the build tree's gimpicc builds a PVM program by itself, with gimpi's pvm3.h"
out=$(env -u LD_LIBRARY_PATH "$tmp/p"); [ "$out" = "packed 8 bytes" ]
ok $? "it runs without LD_LIBRARY_PATH ($out)"
lib=$(env -u LD_LIBRARY_PATH ldd "$tmp/p" 2>/dev/null | sed -n 's/.*libgimpi.so[^ ]* => \([^ ]*\).*/\1/p')
case "$lib" in "$(cd "$top_builddir" && pwd -P)"/.libs/*) ok 0 "... on the build tree's libgimpi" ;;
               *) ok 1 "... on the build tree's libgimpi, not '$lib'" ;; esac
# a gimpicc whose tree lacks gimpi says what to do
mkdir -p "$tmp/empty"
GIMPICC_INCDIR="$tmp/empty" "$GCC" -o "$tmp/x" "$tmp/p.c" 2>"$tmp/err"; rc=$?
[ $rc -ne 0 ] && grep -q "make install" "$tmp/err"
ok $? "no headers: it fails and says to run make install ($(head -1 "$tmp/err"))"
GIMPICC_LIBDIR="$tmp/empty" "$GCC" -o "$tmp/x" "$tmp/p.c" 2>"$tmp/err"; rc=$?
[ $rc -ne 0 ] && grep -q "libgimpi.so is not in" "$tmp/err"
ok $? "no library: it fails and says so ($(head -1 "$tmp/err"))"
exit $((failed > 0))
