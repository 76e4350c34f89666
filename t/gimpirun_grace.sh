#!/bin/bash
# t/gimpirun_grace.sh — a job owns every task its tasks start (t/grace_task): a killed
# master whose spawned workers wait in a barrier, or in pvm_recv with grandchildren of
# their own, ends within -grace + 2 s, gimpirun says which tasks it ended and exits 1,
# and no process is left; a master that exits while its workers finish on their own
# within the grace: exit 0 and all their output; workers that never finish (a barrier)
# after a normal end: ended after -grace, exit 3.  Synchronised on the master's "ready" line
# (every worker reported in), each run bounded.  A private groupd serves.
set -u
top_builddir=${top_builddir:-.}
TASK="$top_builddir/t/grace_task"
RUN="$top_builddir/programs/gimpirun"
GROUPD="$top_builddir/groupd/groupd"
. "${top_srcdir:-.}/t/tap.sh"
echo "1..16"
export GIMPI_GROUPD="ipc://$tmp/gd" GIMPI_GROUPD_BIN="$GROUPD"
timeout 300 "$GROUPD" --foreground --endpoint "$GIMPI_GROUPD" >"$tmp/gd.out" 2>&1 &
for _ in $(seq 1 500); do [ -s "$tmp/gd.out" ] && break; sleep 0.02; done
[ "$(head -1 "$tmp/gd.out")" = "$GIMPI_GROUPD" ]; ok $? "private groupd serves $GIMPI_GROUPD"
unset GIMPI_PATH GIMPI_TAG
show() { sed 's/^/# /' "$@" | head -30; }
now() { date +%s.%N; }

# killed NAME GRACE N WMODE NPROCS: the master spawns N workers (WMODE), is killed once
# every one reported in; the job must end within GRACE + 2 s, naming NPROCS tasks
killed() {
    local name=$1 grace=$2 np=$3 wmode=$4 nprocs=$5 rc t0 t1 mpid pids left
    timeout 120 "$RUN" -grace "$grace" -np 1 "$TASK" master "$np" "$wmode" hang \
        >"$tmp/$name.out" 2>"$tmp/$name.err" &
    local job=$!
    for _ in $(seq 1 3000); do grep -q "^ready$" "$tmp/$name.out" && break; sleep 0.02; done
    grep -q "^ready$" "$tmp/$name.out"; ok $? "$name: $np workers ($wmode) reported in" || show "$tmp/$name.err"
    mpid=$(sed -n 's/^master pid //p' "$tmp/$name.out")
    pids=$(sed -n 's/^worker tid t[0-9a-f]* pid //p' "$tmp/$name.out")
    t0=$(now)
    kill -9 "$mpid"
    wait $job; rc=$?
    t1=$(now)
    local took
    took=$(echo "$t1 - $t0" | bc)
    [ "$(echo "$took >= $grace - 0.5 && $took <= $grace + 2" | bc)" = 1 ]
    ok $? "$name: the job ended $took s after the master's death (grace $grace s)" || show "$tmp/$name.err"
    [ $rc = 1 ] && grep -q "^gimpirun: task 0 (.*) killed by signal 9" "$tmp/$name.err" \
        && grep -Eq "^gimpirun: $nprocs spawned tasks still running [0-9]+ s after the job's own tasks ended: ending them \((t[0-9a-f]+ ?){$nprocs}\)$" "$tmp/$name.err"
    ok $? "$name: exit 1, the master's death and the $nprocs ended tasks named (exit $rc)" || show "$tmp/$name.err"
    left=0
    for p in $pids; do kill -0 "$p" 2>/dev/null && left=$((left + 1)); done
    [ "$(echo "$pids" | wc -w)" = "$nprocs" ] && [ $left = 0 ]
    ok $? "$name: none of the $nprocs processes is left ($left)"
}
killed barrier 3 3 barrier 3
killed grandchildren 2 2 grand 4

# a master that exits at once while its workers finish by themselves
timeout 120 "$RUN" -grace 10 -np 1 "$TASK" master 3 finish exit >"$tmp/fin.out" 2>"$tmp/fin.err"; rc=$?
[ $rc = 0 ] && [ ! -s "$tmp/fin.err" ]; ok $? "workers that finish after their master: exit 0, quiet (exit $rc)" || show "$tmp/fin.err"
[ "$(grep -c '^worker done$' "$tmp/fin.out")" = 3 ] && [ "$(grep -c '^worker t[0-9a-f]* line [0-9]*$' "$tmp/fin.out")" = 600 ]
ok $? "their output is complete: 3 x 200 lines and 3 done" || show "$tmp/fin.out"

# a master that exits normally, its workers never finish: ended after the grace, exit 3
t0=$(now)
timeout 120 "$RUN" -grace 1 -np 1 "$TASK" master 2 barrier exit >"$tmp/left.out" 2>"$tmp/left.err"; rc=$?
took=$(echo "$(now) - $t0" | bc)
[ $rc = 3 ]; ok $? "workers left running after a normal end: exit 3 (exit $rc)" || show "$tmp/left.err"
grep -Eq "^gimpirun: 2 spawned tasks still running 1 s after the job's own tasks ended: ending them \(t[0-9a-f]+ t[0-9a-f]+\)$" "$tmp/left.err" \
    && [ "$(grep -c . "$tmp/left.err")" = 1 ]
ok $? "one line says which, and when" || show "$tmp/left.err"
[ "$(echo "$took < 1 + 2 + 20" | bc)" = 1 ]; ok $? "the job ended within the grace + 2 s of the master ($took s in all)"
left=0
for p in $(sed -n 's/^worker tid t[0-9a-f]* pid //p' "$tmp/left.out"); do kill -0 "$p" 2>/dev/null && left=$((left + 1)); done
[ $left = 0 ]; ok $? "no worker is left ($left)"

left=$(tap_mine "$(basename "$TASK") worker")
[ "$left" = 0 ]; ok $? "no grace_task worker runs anywhere ($left)"
exit $((failed > 0))
