#!/bin/sh
# t/pvm3_header.sh — <pvm3.h> stays source compatible with old PVM programs: a K&R-style
# user file (`extern void PvmSum();`, unprototyped reduce functions, `extern int
# pvmdebmask;`) compiles warning-free under -std=gnu17, a small PVM program links with
# gimpicc and reports the missing daemon as PVM does, and — when Debian's pvm-examples
# package is installed — PVM's own example sources compile unchanged (-w for their K&R).
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
GCC="$top_builddir/programs/gimpicc"
export GIMPICC_INCDIR="$top_srcdir/include" GIMPICC_LIBDIR="$top_builddir/.libs"
. "${top_srcdir:-.}/t/tap.sh"

cat >"$tmp/kr.c" <<'C'
#include <pvm3.h>
extern void PvmMin();
extern void PvmMax();
extern void PvmSum();
extern void PvmProduct();
extern int pvmdebmask;
extern int pvm_errno;
void myfunc();
int use(int *data)
{
    pvmdebmask = 0;
    return pvm_reduce(PvmSum, data, 1, PVM_INT, 1, "g", 0)
        + pvm_reduce(PvmMax, data, 1, PVM_INT, 1, "g", 0)
        + pvm_reduce(myfunc, data, 1, PVM_INT, 1, "g", 0) + pvm_errno;
}
C
"$GCC" -std=gnu17 -Wall -Wextra -Werror -c -o "$tmp/kr.o" "$tmp/kr.c"
ok $? "K&R declarations of PvmSum & co compile against <pvm3.h> with -std=gnu17 -Werror"

cat >"$tmp/nod.c" <<'C'
#include <pvm3.h>
#include <stdio.h>
int main(void)
{
    int v = 3, w = 0;
    if (pvm_initsend(PvmDataDefault) <= 0 || pvm_pkint(&v, 1, 1) < 0) return 2;
    if (pvm_setrbuf(pvm_getsbuf()) < 0 || pvm_upkint(&w, 1, 1) < 0 || w != 3) return 3;
    int tid = pvm_mytid();
    printf("mytid %d errno %d\n", tid, pvm_errno);
    return 0;
}
C
"$GCC" -o "$tmp/nod" "$tmp/nod.c"; ok $? "a PVM program links with gimpicc"
out=$(GIMPI_LISTEN_FD=999 "$tmp/nod" 2>"$tmp/err"); rc=$?
[ $rc = 0 ] && [ "$out" = "mytid -14 errno -14" ]; ok $? "when enrolment fails pvm_mytid is PvmSysErr ($rc: $out)"
grep -q '^libpvm \[pid[0-9]*\]: pvm_mytid(): Can.t contact local daemon (startup: .*)$' "$tmp/err"
ok $? "... with PVM's diagnostic, then the cause: $(cat "$tmp/err")"

ex=/usr/share/doc/pvm-examples
if [ -r "$ex/gexamples.tar.gz" ] && [ -r "$ex/examples.tar.gz" ]; then
    (cd "$tmp" && tar xzf "$ex/gexamples.tar.gz" && tar xzf "$ex/examples.tar.gz") 2>/dev/null
    for f in $(cd "$tmp" && ls */trsg.c */ge.c */gexamp.c */gs.c */thb.c */tnb.c */tjf.c */tjl.c \
                                 */joinleave.c */tst.c */gexample.c */spmd.c */ptest.c */bwtest.c 2>/dev/null); do
        "$GCC" -std=gnu17 -w -c -o "$tmp/x.o" "$tmp/$f"; ok $? "PVM's $f compiles unchanged"
    done
    [ -n "$(cd "$tmp" && ls */trsg.c 2>/dev/null)" ] && [ -n "$(cd "$tmp" && ls */gexample.c 2>/dev/null)" ]
    ok $? "trsg.c and gexample.c were among them"
else
    skip "pvm-examples is not installed: PVM's sources not compiled"
fi
echo "1..$n"
exit $((failed > 0))
