#!/bin/bash
# t/vm_failover_cut.sh — a job on 3 hosts outlives the loss of the whole host that runs its
# groupd (doc/reliability.md, issue #27 part 2): gimpirun (on h0) starts the job's groupd
# on h1 (-groupd, -gport P) and its standby on h2 (-groupd-standby).  h1 runs only groupd
# and its agent: the 8 counted tasks of t/groupd_restart_task run on h0 (5 slots, with the
# 9th task) and h2 (4), their spawns go to any host but h1 ($RESTART_SPAWN_NOT), and a 9th
# task watches h1 with pvm_notify(PvmHostDelete).  At round 500 the test takes h1's link
# down (its veth at the bridge): the primary falls silent, the standby takes over after
# 1 s of silence; a task's call unanswered for 1 s probes the next entry of its list (the
# standby binds only when it takes over) and moves there once it serves; the watcher,
# idle in pvm_trecv, sees its connection end by the heartbeat (1 + 5 s), reconnects and
# subscribes anew; gimpirun's agent on h1 is lost some 5 s later and the host deleted.
# Checked: 8 tasks end ok, exit 0; the watcher got PvmHostDelete for h1; the standby took
# over and gimpirun manages it; the longest call of any task <= 2 s.
set -u
top_builddir=${top_builddir:-.}
. "${top_srcdir:-.}/t/failover_lib.sh"

fo_begin 6
printf '%s\n' "$H0 slots=5" "$H2 slots=4" "$H1" >"$VM_DIR/hosts"
export RESTART_SPAWN_NOT="$H1"
fo_run -groupd "$H1" -groupd-standby "$H2" -np 8 "$B/t/groupd_restart_task" 8 "$FO_ROUNDS" 500 \
    : -np 1 "$B/t/groupd_restart_task" watch "$H1"
cut=no
fo_wait_file "$RESTART_MARK.500" && fo_wait_file "$RESTART_MARK.watching" \
    && fo_wait_line "a standby groupd on $H2 follows" 1 && vm_link_down 1 && cut=yes
wait $job
rc=$?
# the cut-off host keeps what ran there: the primary's journal, and a standby's when a
# takeover came before the cut (a primary stalled 1 s on the loaded machine) and the next
# standby was started on h1; that standby's loss is then said ("going on alone")
FO_KEEP="-$fo_gpid\.journal\|-standby-$H1\.journal" FO_ALONE_OK=1
fo_check_loop 8 "$rc"
fo_took_over "$H1" "$H2"
ok $? "$H1 cut off ($cut): the standby on $H2 took over and gimpirun manages it ($(grep -o '[0-9]* ms after' "$tmp/err"))" \
    || sed 's/^/# /' "$tmp/err" | head -20
grep -q "^watch $H1 deleted after [0-9]* ms" "$out"
ok $? "the watcher got pvm_notify(PvmHostDelete) for $H1 ($(grep -o 'deleted after [0-9]* ms' "$out"))" \
    || sed 's/^/# /' "$out" | head -20
exit $((failed > 0))
