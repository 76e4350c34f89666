#!/bin/bash
# t/vm_failover_idle.sh — a task that needs no groupd across a takeover keeps its groups
# (doc/reliability.md §3): gimpirun on h0 runs the primary there and a standby on h1; one
# task of t/groupd_restart_task (`idle`) joins a group, then makes no group call.  The test
# kills the primary; once gimpirun manages the standby that took over, it waits out the
# new primary's --reattach (10 s: the bound under test, not a wait for an event), then lets
# the task go on: joining again is PvmDupGroup, and it is still instance 0 of a group of
# 1.  (A tcp groupd took every replayed task not back within --reattach for dead, so a
# task computing across a takeover lost its groups; with a manager, which reports every
# task that ends, such a task is now presumed alive.)
set -u
top_builddir=${top_builddir:-.}
. "${top_srcdir:-.}/t/failover_lib.sh"

fo_begin 3
fo_run -groupd-standby "$H1" -np 1 "$B/t/groupd_restart_task" idle gidle
killed=no
fo_wait_file "$RESTART_MARK.joined" && fo_wait_line "a standby groupd on $H1 follows" 1 \
    && pid=$(fo_pid_on 0 "$P") && [ -n "$pid" ] && kill -9 "$pid" && killed=yes \
    && fo_wait_line "managing the job's groupd at tcp://$H1:$P" 1 && sleep 11
touch "$RESTART_MARK.go"
wait $job
rc=$?
grep -q "^t0 idle ok" "$out" && [ "$rc" = 0 ]
ok $? "the idle task kept its group across the takeover (primary killed: $killed) and --reattach, exit $rc" \
    || sed 's/^/# /' "$out" "$tmp/err" | head -30
fo_took_over "$H0" "$H1"
ok $? "the standby on $H1 took over and gimpirun manages it" || sed 's/^/# /' "$tmp/err" | head -20
left=$(fo_journals_left)
[ -z "$left" ]
ok $? "the job's end left no journal" || echo "$left" | sed 's/^/# left: /'
exit $((failed > 0))
