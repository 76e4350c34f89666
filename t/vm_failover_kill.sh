#!/bin/bash
# t/vm_failover_kill.sh — a job on 3 hosts outlives a kill -9 of its groupd through the
# standby (doc/reliability.md, issue #27 part 2): gimpirun starts the job's groupd on h0
# (its own host) at -gport P and a standby on h1 (-groupd-standby) that follows it; 8 tasks
# of t/groupd_restart_task (3 on h0, 3 on h1, 2 on h2) loop 2,000 rounds over join,
# barrier, bcast, reduce, gsize/gettid, the message box and leave, a pvm_spawn every 100;
# at round 500 (instance 0's mark file) the test kills the primary with SIGKILL.  The
# standby takes over at its own endpoint; gimpirun does not restart the primary, manages
# the new one and starts a new standby on h2.
# Checked: every task ends ok (sums, memberships, no call failed, none lost), exit 0;
# gimpirun's lines (the standby followed, took over, was managed, a new one follows); no
# restart; the longest call of any task <= 2 s.  Then -groupd-standby's errors (not a
# host of the job, the primary's own host) and -groupd-standby none.
set -u
top_builddir=${top_builddir:-.}
. "${top_srcdir:-.}/t/failover_lib.sh"

fo_begin 9
fo_run -groupd-standby "$H1" -np 8 "$B/t/groupd_restart_task" 8 "$FO_ROUNDS" 500
pid=
fo_wait_file "$RESTART_MARK.500" && fo_wait_line "a standby groupd on $H1 follows" 1 \
    && pid=$(fo_pid_on 0 "$P") && [ -n "$pid" ] && kill -9 "$pid"
wait $job
rc=$?
fo_check_loop 8 "$rc"
fo_took_over "$H0" "$H1"
ok $? "primary (pid ${pid:-none}) killed on $H0: the standby on $H1 took over and gimpirun manages it ($(grep -o '[0-9]* ms after' "$tmp/err"))" \
    || sed 's/^/# /' "$tmp/err" | head -20
grep -q "a standby groupd on $H2 follows the job's groupd at tcp://$H1:$P" "$tmp/err"
ok $? "a new standby on $H2 followed the new primary" || sed 's/^/# /' "$tmp/err" | head -20
# the option's errors, and none: a job that goes well says nothing of its standby
for bad in "192.0.2.99:not a host of the job" "$H0:the host of the job's groupd itself"; do
    fo_run -groupd-standby "${bad%%:*}" -np 1 true
    wait $job
    rc=$?
    [ "$rc" = 1 ] && grep -q "gimpirun: -groupd-standby ${bad%%:*}: ${bad#*:}" "$tmp/err"
    ok $? "-groupd-standby ${bad%%:*}: exit $rc, \"${bad#*:}\"" || sed 's/^/# /' "$tmp/err" | head -5
done
fo_run -groupd-standby none -np 2 "$B/t/groupd_restart_task" 2 20 ""
wait $job
rc=$?
[ "$rc" = 0 ] && [ "$(grep -c " ok rounds=" "$out")" = 2 ] && ! grep -q standby "$tmp/err"
ok $? "-groupd-standby none: the job runs (exit $rc), no standby said" || sed 's/^/# /' "$out" "$tmp/err" | head -10
exit $((failed > 0))
