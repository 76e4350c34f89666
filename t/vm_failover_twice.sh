#!/bin/bash
# t/vm_failover_twice.sh — a job on 3 hosts outlives two losses of its groupd in a row
# (doc/reliability.md, issue #27 part 2): the primary on h0 (gimpirun's host, -gport P)
# and its standby on h1; 8 tasks of t/groupd_restart_task over the 3 hosts loop 2,000
# rounds.  At round 400 the test kills the primary with SIGKILL; once the standby on h1
# took over, gimpirun manages it and a new standby on h2 follows it, and once the loop is
# at round 1200, the test kills the new primary on h1 too: the standby on h2 takes over.
# Checked: every task ends ok, exit 0; both takeovers; no restart; the longest call of
# any task <= 2 s.
set -u
top_builddir=${top_builddir:-.}
. "${top_srcdir:-.}/t/failover_lib.sh"

fo_begin 6
fo_run -groupd-standby "$H1" -np 8 "$B/t/groupd_restart_task" 8 "$FO_ROUNDS" 400,1200
pids=
fo_wait_file "$RESTART_MARK.400" && fo_wait_line "a standby groupd on $H1 follows" 1 \
    && pid=$(fo_pid_on 0 "$P") && [ -n "$pid" ] && kill -9 "$pid" && pids="$pid" \
    && fo_wait_line "managing the job's groupd at tcp://$H1:$P" 1 \
    && fo_wait_line "a standby groupd on $H2 follows" 1 && fo_wait_file "$RESTART_MARK.1200" \
    && pid=$(fo_pid_on 1 "$P") && [ -n "$pid" ] && kill -9 "$pid" && pids="$pids $pid"
wait $job
rc=$?
# (the primary killed second, on h1: its journal there is removed through its agent)
fo_check_loop 8 "$rc"
fo_took_over "$H0" "$H1" && fo_took_over "$H1" "$H2"
ok $? "primaries killed (pids ${pids:-none}): $H1 then $H2 took over, managed ($(grep -o '[0-9]* ms after' "$tmp/err" | tr '\n' ' '))" \
    || sed 's/^/# /' "$tmp/err" | head -30
grep -q "a standby groupd on $H0 follows the job's groupd at tcp://$H2:$P" "$tmp/err"
ok $? "after the second takeover a standby on $H0 follows the primary on $H2" \
    || sed 's/^/# /' "$tmp/err" | head -30
exit $((failed > 0))
