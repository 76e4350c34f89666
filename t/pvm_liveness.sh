#!/bin/bash
# t/pvm_liveness.sh — a member that stops answering (SIGSTOP) ends the collectives and
# receives that wait for it: groupd drops it after about a second of silence and the data
# plane of every blocked survivor asks groupd about its peers every 500 ms, so each gets
# PvmSysErr within a few seconds instead of waiting forever.  The stopped task is then
# continued and the job ends.  Bounded throughout; synchronised on the tasks' lines.
set -u
top_builddir=${top_builddir:-.}
RUN="$top_builddir/programs/gimpirun"
TASK="$top_builddir/t/pvm_liveness"
. "${top_srcdir:-.}/t/tap.sh"
echo "1..10"
for mode in barrier reduce recv; do
    timeout 120 "$RUN" -np 4 -grace 5 "$TASK" $mode >"$tmp/out" 2>"$tmp/err" &
    job=$!
    # wait (bounded) for the stopped task's line, and then for the survivors' verdicts
    pid=
    for _ in $(seq 1 1200); do
        pid=$(sed -n 's/^t3 stopping \([0-9]*\)$/\1/p' "$tmp/out")
        [ -n "$pid" ] && [ "$(grep -c "^t[0-2] $mode failed after" "$tmp/out")" = 3 ] && break
        grep -q FAIL "$tmp/out" && break
        sleep 0.05
    done
    cnt=$(grep -c "^t[0-2] $mode failed after [0-9]* ms: -" "$tmp/out")
    worst=$(sed -n "s/^t[0-2] $mode failed after \([0-9]*\) ms.*/\1/p" "$tmp/out" | sort -n | tail -1)
    [ "$cnt" = 3 ] && [ "${worst:-99999}" -lt 10000 ]
    ok $? "$mode: a stopped member fails the 3 survivors' calls (slowest after ${worst:-?} ms; bound 10 s)" ||
        sed 's/^/# /' "$tmp/out" "$tmp/err" | head -20
    [ -n "$pid" ] && kill -CONT "$pid" 2>/dev/null
    wait $job
    rc=$?
    [ $rc != 124 ]; ok $? "$mode: continued, the stopped task ends and the job with it (exit $rc)"
done
# gimpi-stat shows a barrier that runs on the data plane (the second one of an unchanged
# membership): the three members waiting in it, and nothing once it is over
STAT="$top_builddir/programs/gimpi-stat"
timeout 120 "$RUN" -np 4 "$TASK" late "$tmp/go1" "$tmp/go2" >"$tmp/out" 2>"$tmp/err" &
job=$!
seen=0
for _ in $(seq 1 600); do
    "$STAT" g >"$tmp/stat" 2>/dev/null
    grep -q "barrier on the data plane: count 4, waiting: t[0-9a-f]* ([0-9]* ms) t[0-9a-f]* ([0-9]* ms) t[0-9a-f]* ([0-9]* ms)$" "$tmp/stat" && { seen=1; break; }
    sleep 0.05
done
[ $seen = 1 ]; ok $? "gimpi-stat shows the 3 members waiting in a barrier on the data plane" || sed 's/^/# /' "$tmp/stat" "$tmp/out"
touch "$tmp/go1"
for _ in $(seq 1 600); do [ "$(grep -c ' late ok$' "$tmp/out")" = 4 ] && break; sleep 0.05; done
[ "$(grep -c ' late ok$' "$tmp/out")" = 4 ]; ok $? "the barrier completes once the last member comes"
"$STAT" g >"$tmp/stat" 2>/dev/null
grep -q "^group: g, size: 4" "$tmp/stat" && ! grep -q "data plane" "$tmp/stat"
ok $? "... and gimpi-stat no longer shows it" || sed 's/^/# /' "$tmp/stat"
touch "$tmp/go2"
wait $job
ok $? "the job ends (exit 0)"
exit $((failed > 0))
