#!/bin/bash
# t/vm_failover_partition.sh — a network partition leaves one groupd serving the job, not
# two (doc/reliability.md §3, the witness): gimpirun (on h0) starts the job's groupd on h1
# (-groupd) and its standby on h2 (-groupd-standby); the 8 counted tasks run on h0 and
# their spawns go to h0 or h1 ($RESTART_SPAWN_NOT).  At round 500 the test takes h2's link
# down: h2 is cut off from h0 and h1, which still reach each other.  Both groupds see the
# other fall silent after 1 s; the standby asks gimpirun to take over, the primary asks to
# go on alone, and only the primary's question arrives: it goes on, the tasks' calls wait
# at most its second of silence and the question.  The cut lasts 3 s (the partition, not a
# wait for an event: the standby must have had time to ask), then the link comes back:
# the standby's question arrives late and is refused, gimpirun's SIGTERM reaches it and it
# ends, and a new standby follows.  Without the witness the cut-off standby took over on
# h2 and fenced the primary once the link was back, and the tasks lost what the primary
# had done meanwhile.  Checked: the loop ends right with no call failing and none over
# 2 s; the primary went on without its standby, nobody took over; the late question was
# refused; the standby on h2 ended.
set -u
top_builddir=${top_builddir:-.}
. "${top_srcdir:-.}/t/failover_lib.sh"

fo_begin 7
printf '%s\n' "$H0 slots=8" "$H1" "$H2" >"$VM_DIR/hosts"
export RESTART_SPAWN_NOT="$H2"
fo_run -groupd "$H1" -groupd-standby "$H2" -np 8 "$B/t/groupd_restart_task" 8 "$FO_ROUNDS" 500
cut=no
fo_wait_file "$RESTART_MARK.500" && fo_wait_line "a standby groupd on $H2 follows" 1 \
    && vm_link_down 2 && cut=yes \
    && fo_wait_line "goes on without its standby" 1 && sleep 3
vm_link_up 2
fo_wait_line "asks to take over at term [0-9]*: refused" 1
refused=$?
fo_wait_line "the standby groupd on $H2 ended" 1
ended=$?
wait $job
rc=$?
# (the cut-off standby's journal is removed when it ends: nothing is kept)
fo_check_loop 8 "$rc"
grep -q "the job's groupd goes on without its standby at term" "$tmp/err" \
    && ! grep -q "its standby on .* takes over at\|taken over by its standby\|managing the job.s groupd" "$tmp/err"
ok $? "$H2 cut off ($cut): the primary on $H1 went on without its standby, nobody took over" \
    || sed 's/^/# /' "$tmp/err" | head -30
[ "$refused" = 0 ]
ok $? "the cut-off standby's late question was refused" || sed 's/^/# /' "$tmp/err" | head -30
[ "$ended" = 0 ]
ok $? "the cut-off standby ended once the link was back" || sed 's/^/# /' "$tmp/err" | head -30
exit $((failed > 0))
