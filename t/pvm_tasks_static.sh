#!/bin/bash
# t/pvm_tasks_static.sh — pvm_tasks, called by each task of a gimpirun job right after its
# first PVM call, lists every static task of the job, including siblings still inside
# their own first call (not yet registered with groupd: NetPIPE's NPpvm looks for its
# peer this way and stopped when it saw itself alone); 5 jobs of 4 tasks on 2 cores.  A
# sibling that has already left is not waited for: the call returns at once.
set -u
top_builddir=${top_builddir:-.}
PROG="$top_builddir/t/pvm_tasks_static"
RUN="$top_builddir/programs/gimpirun"
. "${top_srcdir:-.}/t/tap.sh"
echo "1..2"
good=0
for k in 1 2 3 4 5; do
    timeout 60 "$RUN" -np 4 "$PROG" >"$tmp/out$k" 2>&1 &&
        [ "$(grep -c '^seen 4 of 4 in' "$tmp/out$k")" = 4 ] && good=$((good + 1))
done
[ $good = 5 ]; ok $? "every task saw the 4 static tasks at once, in $good of 5 jobs" ||
    grep -v '^seen 4 of 4' "$tmp"/out* | head -5 | sed 's/^/# /'
out="$tmp/o"
timeout 60 "$RUN" -np 1 "$PROG" leave : -np 2 "$PROG" 2 >"$out" 2>&1
rc=$?
[ $rc = 0 ] && [ "$(grep -cE '^seen [23] of 3 in [0-4]\.[0-9] s' "$out")" = 2 ]
okd $? "a sibling that left is not waited for (exit $rc)"
exit $((failed > 0))
