#!/bin/bash
# t/pvm_causal.sh — the causal promise of group state (doc/groupd-protocol.md §6): a task
# that has heard of a group change, directly, through a forwarder or through a reduce, sees
# it in its very next query.  t/pvm_causal runs 200 leave/join rounds and 20 exit rounds
# under gimpirun, twice; any stale answer fails it.  Bounded by timeouts.
set -u
top_builddir=${top_builddir:-.}
RUN="$top_builddir/programs/gimpirun"
TASK="$top_builddir/t/pvm_causal"
. "${top_srcdir:-.}/t/tap.sh"
echo "1..3"
for k in 1 2; do
    timeout 300 "$RUN" -np 4 "$TASK" 200 20 >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc = 0 ] && grep -q "^causal 840 checks ok$" "$tmp/out"
    ok $? "run $k: 200 leave-then-send (direct, forwarded, through a reduce), 200 join-then-send, 20 exit-then-send rounds (840 checks): no stale answer (exit $rc)" ||
        sed 's/^/# /' "$tmp/out" "$tmp/err" | head -20
done
[ ! -s "$tmp/err" ]; ok $? "nobody complained on stderr" || sed 's/^/# /' "$tmp/err" | head
exit $((failed > 0))
