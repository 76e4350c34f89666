#!/bin/bash
# t/pvm_shells.sh — two PVM tasks started from two shells meet through a group: the first
# waits in pvm_recv(-1) with no connection yet (it must wait, not fail), the second finds
# it with pvm_gettid and calls it; both finish.  Synchronised on the first task's "ready"
# line, bounded by timeouts.  The test's groupd is the build tree's.
set -u
top_builddir=${top_builddir:-.}
PROG="$top_builddir/t/pvm_shells"
. "${top_srcdir:-.}/t/tap.sh"
echo "1..3"
mkfifo "$tmp/a.fifo"
timeout 60 "$PROG" a >"$tmp/a.fifo" 2>"$tmp/a.err" &
apid=$!
exec 3<"$tmp/a.fifo"
read -r -t 30 line <&3
case $line in ready*) ok 0 "first task joined and waits ($line)" ;; *) ok 1 "first task ready (got '$line')"; sed 's/^/# /' "$tmp/a.err" ;; esac
timeout 60 "$PROG" b >"$tmp/b.out" 2>"$tmp/b.err"; brc=$?
[ $brc = 0 ] && grep -qx "b ok" "$tmp/b.out"
ok $? "second task found it through the group and exchanged messages (exit $brc)"
[ $brc = 0 ] || sed 's/^/# /' "$tmp/b.out" "$tmp/b.err"
cat <&3 >"$tmp/a.out"
wait $apid; arc=$?
[ $arc = 0 ] && grep -qx "a ok" "$tmp/a.out"
ok $? "first task received from -1 while alone, answered, finished (exit $arc)"
[ $arc = 0 ] || sed 's/^/# /' "$tmp/a.out" "$tmp/a.err"
exec 3<&-
exit $((failed > 0))
