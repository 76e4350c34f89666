#!/bin/bash
# t/pvm_reduce_gdkill.sh — no partial reduce when groupd dies (issue 25 point 6): 4 tasks
# (t/reduce_gdkill) join a group and loop pvm_barrier + pvm_reduce(PvmSum, root 0), each
# printing every round's return codes and sum, and groupd is SIGKILLed when a chosen line
# comes out (right after a task starts, while they join, in the first round, mid-loop).  Invariant: on every
# member every reduce either returns the full sum or fails, never 0 with a partial sum
# (the root prints PARTIAL and exits 3), and every task ends (no call hangs).  Whether
# the calls after the kill fail or go on (a groupd restarted from a journal) is not
# asserted.  Under gimpirun and with shell-started tasks (groupd started by the first),
# with the reduce before the barrier, with pvm_gsize/pvm_getinst in the loop, and with the
# other members exiting at their first failure while the root loops on.
set -u
top_builddir=${top_builddir:-.}
TASK="$top_builddir/t/reduce_gdkill"
RUN="$top_builddir/programs/gimpirun"
GROUPD="$(cd "$top_builddir/groupd" && pwd)/groupd"
. "${top_srcdir:-.}/t/tap.sh"
ROUNDS=3000
echo "1..12"

# case LABEL LAUNCH(run|shell) TRIGGER(ERE on the tasks' output) MODE
case_() {
    local label=$1 launch=$2 trig=$3 mode=$4 d="$tmp/$n"
    mkdir -p "$d"
    export GIMPI_GROUPD="ipc://$d/gd" GIMPI_GROUPD_BIN="$GROUPD"
    {
        if [ "$launch" = run ]; then
            timeout 90 "$RUN" -np 4 "$TASK" 4 $ROUNDS "$mode" 2>"$d/err.run"
            echo $? >"$d/rc.run"
        else
            for i in 1 2 3 4; do
                (timeout 90 "$TASK" 4 $ROUNDS "$mode" 2>"$d/err.$i"; echo $? >"$d/rc.$i") &
            done
            wait
        fi
    } | tee "$d/out" | {
        # the event: the trigger line; then groupd (its pid in its lock file) is killed
        if grep -m1 -qE -- "$trig"; then
            gd=$(cat "$d/gd.lock" 2>/dev/null)
            [ -n "$gd" ] && kill -9 "$gd" 2>/dev/null && echo "$gd" >"$d/killed"
        fi
        cat >/dev/null
    }
    unset GIMPI_GROUPD GIMPI_GROUPD_BIN
    [ -s "$d/killed" ]
    ok $? "$label: groupd killed at '$trig'" || tail -3 "$d/out" | sed 's/^/# /'
    local bad=0 rcs
    rcs=$(cat "$d"/rc.* 2>/dev/null | tr '\n' ' ')
    grep -q PARTIAL "$d/out" && bad=1
    for rc in $rcs; do [ "$rc" = 3 ] || [ "$rc" -ge 124 ] && bad=1; done
    local full fail
    full=$(grep -cE '^T0 R[0-9]+ B-?[0-9]+ D0 ' "$d/out")
    fail=$(grep -cE '^T[0-9] .* D-[0-9]+ ' "$d/out")
    ok $bad "$label: every reduce full or failed, every task ended (root's full sums $full, failed reduces $fail, exits $rcs)" || {
        grep -m5 PARTIAL "$d/out" | sed 's/^/# /'
        cat "$d"/err.* | head -10 | sed 's/^/# /'
    }
}

case_ "gimpirun -np 4, mid-loop" run '^T[0-9] R20 ' ""
case_ "gimpirun -np 4, mid-loop, reduce first, the others exit at a failure" run '^T[0-9] R20 ' ro
case_ "gimpirun -np 4, right after the first start, gsize and getinst" run '^start' q
case_ "gimpirun -np 4, while joining" run '^joined' ""
# shell-started tasks: killed once all have joined (a task that registers after the kill
# starts a new groupd, and a barrier for 4 with fewer members there waits, as PVM's would)
case_ "shell-started, first round, the others exit at a failure" shell '^T[0-9] R0 ' o
case_ "shell-started, mid-loop, reduce first, gsize and getinst" shell '^T[0-9] R20 ' rq
exit $((failed > 0))
